#!/usr/bin/python3
"""Tests relayc's tuned conv2d / dense kernels against the reference kernels.

Usage: /usr/bin/python3 tests/kernels/test_tuned.py PATH/TO/relayc [--cc CC ...] [--keep DIR]

Each case is a small Relay model (written with tests/relaywriter.py): one conv2d or
dense with constant weights and, often, the ops relayc fuses into it (bias_add,
batch_norm, relu, clip, multiply by a constant, add of a residual ...). Shapes are
awkward on purpose: channels 1, 3, 5, 17; widths 1 and 7; stride 2 on odd sizes;
dilation; groups; depthwise; padding wider than the kernel; batches; rows and columns
that the register blocks do not divide; nn.batch_matmul of computed operands and of a
broadcast weight. Every case is compiled for every --target,
and all of them are built into one harness (tuned_harness.c) with
-fsanitize=address,undefined (and, per --cc, by default with gcc -O3 -march=native,
clang -O2 and tcc, at -std=c99 -Wall -Wextra -pedantic -Werror) that runs each model with
canaries around the outputs and the workspace. With RELAYC_TEST_QUICK set (CI's run under
the sanitizers, where relayc itself is what is checked) and no --cc, tcc alone builds it.

Each output is compared with `relayc run --reference` (rk_conv2d / rk_matmul plus the
same bias and epilogue, on the unpacked weights) and with torch in float64:
|got - want| <= 1e-5 + 1e-4 * |want|. Output is TAP.
"""
import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import relaywriter as rw  # noqa: E402
import tuned_common  # noqa: E402
from tuned_common import TARGETS, check_harness, parse_args, work_subdirs  # noqa: E402

ATOL, RTOL = 1e-5, 1e-4
rng = np.random.default_rng(5)


def rnd(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


class Case:
    """A model: relay function, named inputs, expected output (float64)."""

    def __init__(self, name, func, inputs, want):
        self.name, self.func, self.inputs, self.want = name, func, inputs, want


def apply_epilogue(y, ops, chan_axis, other_inputs, args):
    """Builds the relay ops after y and applies them to the float64 tensor `t`."""
    expr, t = y
    for op in ops:
        C = t.shape[chan_axis]
        cshape = [1] * t.dim()
        cshape[chan_axis] = C
        rshape = (C,) + (1,) * (t.dim() - 1 - chan_axis)
        if op == "bias":
            b = rnd(C)
            expr = rw.Call("nn.bias_add", [expr, rw.Const(b)], {"axis": chan_axis})
            t = t + f64(b).reshape(cshape)
        elif op == "bn":
            g, be, mu = rnd(C), rnd(C), rnd(C)
            var = (rng.random(C) + 0.5).astype(np.float32)
            call = rw.Call("nn.batch_norm", [expr] + [rw.Const(a) for a in (g, be, mu, var)],
                           {"axis": chan_axis, "epsilon": 1e-5})
            expr = rw.TupleGetItem(call, 0)
            s = f64(g) / torch.sqrt(f64(var) + 1e-5)
            t = t * s.reshape(cshape) + (f64(be) - f64(mu) * s).reshape(cshape)
        elif op == "relu":
            expr = rw.Call("nn.relu", [expr])
            t = torch.relu(t)
        elif op == "clip":
            expr = rw.Call("clip", [expr], {"a_min": 0.0, "a_max": 0.5})
            t = t.clamp(0.0, 0.5)
        elif op == "leaky":
            expr = rw.Call("nn.leaky_relu", [expr], {"alpha": 0.125})
            t = torch.where(t > 0, t, t * 0.125)
        elif op == "mulscalar":
            expr = rw.Call("multiply", [expr, rw.Const(np.array(0.75, np.float32))])
            t = t * 0.75
        elif op == "mulchan":   # after a nonlinearity: an epilogue step, not folded
            s = rnd(*rshape)
            expr = rw.Call("multiply", [rw.Const(s), expr])
            t = t * f64(s)
        elif op == "subchan_swapped":
            s = rnd(*rshape)
            expr = rw.Call("subtract", [rw.Const(s), expr])
            t = f64(s) - t
        elif op == "divscalar":
            expr = rw.Call("divide", [expr, rw.Const(np.array(1.5, np.float32))])
            t = t / 1.5
        elif op == "sigmoid":
            expr = rw.Call("sigmoid", [expr])
            t = torch.sigmoid(t)
        elif op == "tanh":
            expr = rw.Call("tanh", [expr])
            t = torch.tanh(t)
        elif op in ("swish", "swish_swapped"):  # x * sigmoid(x): one epilogue step (silu)
            sg = rw.Call("sigmoid", [expr])
            expr = rw.Call("multiply", [expr, sg] if op == "swish" else [sg, expr])
            t = t * torch.sigmoid(t)
        elif op == "residual":  # a runtime input of the output's shape
            r = rnd(*t.shape)
            v = rw.Var("r%d" % len(other_inputs), tuple(t.shape))
            other_inputs.append((v, r))
            expr = rw.Call("add", [expr, v])
            t = t + f64(r)
        elif op == "residual_x":  # the conv's own input (same shape)
            xv, xa = args
            expr = rw.Call("add", [xv, expr])
            t = t + f64(xa)
        else:
            raise ValueError(op)
    return expr, t


def conv_case(name, n, ci, hi, wi, co, kh, kw, s=(1, 1), d=(1, 1), pad=(0, 0, 0, 0), groups=1,
              ops=()):
    x = rnd(n, ci, hi, wi)
    w = rnd(co, ci // groups, kh, kw, scale=1.0 / np.sqrt(ci // groups * kh * kw))
    xv = rw.Var("x", (n, ci, hi, wi))
    pt, pl, pb, pr = pad
    y = rw.Call("nn.conv2d", [xv, rw.Const(w)], {
        "strides": list(s), "padding": list(pad), "dilation": list(d), "groups": groups,
        "channels": co, "kernel_size": [kh, kw]})
    t = F.conv2d(F.pad(f64(x), (pl, pr, pt, pb)), f64(w), stride=s, dilation=d, groups=groups)
    others = []
    expr, t = apply_epilogue((y, t), ops, 1, others, (xv, x))
    inputs = [(xv, x)] + others
    return Case(name, rw.Function([v for v, _ in inputs], expr), inputs, t.numpy())


def conv1d_case(name, n, ci, wi, co, k, s=1, d=1, pad=(0, 0), groups=1, ops=()):
    """nn.conv1d (NCW / OIW): relayc computes it as a conv2d of one row between two
    reshapes, which the fused epilogue sees through."""
    x = rnd(n, ci, wi)
    w = rnd(co, ci // groups, k, scale=1.0 / np.sqrt(ci // groups * k))
    xv = rw.Var("x", (n, ci, wi))
    y = rw.Call("nn.conv1d", [xv, rw.Const(w)], {
        "strides": [s], "padding": list(pad), "dilation": [d], "groups": groups,
        "channels": co, "kernel_size": [k]})
    t = F.conv1d(F.pad(f64(x), pad), f64(w), stride=s, dilation=d, groups=groups)
    others = []
    expr, t = apply_epilogue((y, t), ops, 1, others, (xv, x))
    inputs = [(xv, x)] + others
    return Case(name, rw.Function([v for v, _ in inputs], expr), inputs, t.numpy())


def deconv_case(name, n, ci, hi, wi, co, kh, kw, s, pad, opad=(0, 0), ops=()):
    """nn.conv2d_transpose (IOHW) at a stride above 1: relayc computes one stride-1 conv2d
    per output phase (on x86-64-avx2 as blocks of 16 channels x 5 columns) and interleaves
    them."""
    x = rnd(n, ci, hi, wi)
    w = rnd(ci, co, kh, kw, scale=1.0 / np.sqrt(ci * kh * kw))
    xv = rw.Var("x", (n, ci, hi, wi))
    y = rw.Call("nn.conv2d_transpose", [xv, rw.Const(w)], {
        "channels": co, "kernel_size": [kh, kw], "strides": list(s), "padding": list(pad),
        "output_padding": list(opad), "dilation": [1, 1], "groups": 1,
        "data_layout": "NCHW", "kernel_layout": "IOHW", "out_layout": "", "out_dtype": ""})
    t = F.conv_transpose2d(f64(x), f64(w), stride=s, padding=pad[:2], output_padding=opad)
    others = []
    expr, t = apply_epilogue((y, t), ops, 1, others, (xv, x))
    inputs = [(xv, x)] + others
    return Case(name, rw.Function([v for v, _ in inputs], expr), inputs, t.numpy())


def pool_case(name, n, c, hi, wi, k, s, d=(1, 1), pad=(0, 0, 0, 0), ceil=False, is_max=True,
              include_pad=False, x=None):
    """nn.max_pool2d / nn.avg_pool2d against loops in float64 written from TVM's definition:
    the output size by TVM's formula (ceil mode: a last window may hang past the padding);
    max over the taps inside the input (-inf when none); average: the sum over them divided
    by the taps inside the padded region (count_include_pad, those hanging past it not
    counted) or inside the input, 0 when that is 0."""
    x = rnd(n, c, hi, wi) if x is None else x
    pt, pl, pb, pr = pad
    xv = rw.Var("x", x.shape)
    attrs = {"pool_size": list(k), "strides": list(s), "dilation": list(d), "padding": list(pad),
             "ceil_mode": ceil}
    if not is_max:
        attrs["count_include_pad"] = include_pad
    y = rw.Call("nn.max_pool2d" if is_max else "nn.avg_pool2d", [xv], attrs)
    size = []
    for ax in range(2):
        span = (hi, wi)[ax] + pad[ax] + pad[ax + 2] - d[ax] * (k[ax] - 1) - 1
        size.append((span + (s[ax] - 1 if ceil else 0)) // s[ax] + 1)
    ho, wo = size
    want = np.zeros((n, c, ho, wo))
    xd = x.astype(np.float64)
    for oy in range(ho):
        for ox in range(wo):
            rows = [oy * s[0] - pt + t * d[0] for t in range(k[0])]
            cols = [ox * s[1] - pl + t * d[1] for t in range(k[1])]
            ri = [r for r in rows if 0 <= r < hi]
            cj = [q for q in cols if 0 <= q < wi]
            win = xd[:, :, ri][:, :, :, cj]
            if is_max:
                want[:, :, oy, ox] = win.max(axis=(2, 3)) if win.size else -np.inf
                continue
            if include_pad:
                cnt = sum(-pt <= r < hi + pb for r in rows) * sum(-pl <= q < wi + pr for q in cols)
            else:
                cnt = len(ri) * len(cj)
            want[:, :, oy, ox] = win.sum(axis=(2, 3)) / cnt if cnt else 0.0
    return Case(name, rw.Function([xv], y), [(xv, x)], want)


def dense_case(name, lead, k, n, ops=(), matmul=False):
    x = rnd(*lead, k)
    if matmul:   # nn.matmul with b stored [k][n]
        w = rnd(k, n, scale=1.0 / np.sqrt(k))
        wt = w.T
    else:
        w = rnd(n, k, scale=1.0 / np.sqrt(k))
        wt = w
    xv = rw.Var("x", tuple(lead) + (k,))
    if matmul:
        y = rw.Call("nn.matmul", [xv, rw.Const(w)], {"units": n})
    else:
        y = rw.Call("nn.dense", [xv, rw.Const(w)], {"units": n})
    t = f64(x) @ f64(wt).T
    others = []
    expr, t = apply_epilogue((y, t), ops, len(lead), others, (xv, x))
    inputs = [(xv, x)] + others
    return Case(name, rw.Function([v for v, _ in inputs], expr), inputs, t.numpy())


def bmm_case(name, bx, by, m, k, n, ops=(), weight=False):
    """nn.batch_matmul (transpose_b false) of x [bx][m][k] and a computed y [by][k][n]
    (batch 1 broadcasts), or, with weight, of a constant [n][k] as TVM's PyTorch frontend
    writes a 3-d nn.Linear: broadcast_to(transpose(w)) over bx batches."""
    x = rnd(bx, m, k)
    xv = rw.Var("x", (bx, m, k))
    inputs = [(xv, x)]
    if weight:
        w = rnd(n, k, scale=1.0 / np.sqrt(k))
        yv = rw.Call("broadcast_to", [rw.Call("transpose", [rw.Const(w)], {"axes": [1, 0]})],
                     {"shape": [bx, k, n]})
        y = w.T[None]
    else:
        y = rnd(by, k, n, scale=1.0 / np.sqrt(k))
        yv = rw.Var("y", (by, k, n))
        inputs.append((yv, y))
    expr = rw.Call("nn.batch_matmul", [xv, yv], {"transpose_a": False, "transpose_b": False})
    t = f64(x) @ f64(y)
    others = []
    expr, t = apply_epilogue((expr, t), ops, 2, others, (xv, x))
    inputs += others
    return Case(name, rw.Function([v for v, _ in inputs], expr), inputs, t.numpy())


def cases():
    c = []
    # conv2d: awkward shapes
    c.append(conv_case("lenet_5x5_1to6_pad2", 1, 1, 28, 28, 6, 5, 5, pad=(2, 2, 2, 2),
                       ops=("bias", "relu")))
    c.append(conv_case("ci3_co5_stride2_odd", 1, 3, 9, 7, 5, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bias",)))
    c.append(conv_case("ci5_co17_w7", 1, 5, 7, 7, 17, 3, 3, pad=(1, 1, 1, 1), ops=("bn", "relu")))
    c.append(conv_case("ci17_co3_width1", 1, 17, 11, 1, 3, 3, 3, pad=(1, 1, 1, 1)))
    c.append(conv_case("width1_kernel1x3", 1, 3, 5, 1, 5, 1, 3, pad=(0, 1, 0, 1), ops=("clip",)))
    c.append(conv_case("dilation2_w7", 1, 5, 9, 7, 17, 3, 3, d=(2, 2), pad=(2, 2, 2, 2),
                       ops=("bias", "leaky")))
    c.append(conv_case("dilation2_nopad", 1, 3, 13, 15, 9, 3, 3, d=(2, 3)))
    c.append(conv_case("groups3", 1, 6, 8, 10, 9, 3, 3, pad=(1, 1, 1, 1), groups=3,
                       ops=("bias", "relu")))
    c.append(conv_case("depthwise17", 1, 17, 9, 11, 17, 3, 3, pad=(1, 1, 1, 1), groups=17,
                       ops=("bn", "clip")))
    c.append(conv_case("depthwise_s2_odd", 1, 5, 13, 13, 5, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=5, ops=("bias",)))
    c.append(conv_case("depthwise_5x5_d2", 1, 3, 12, 14, 3, 5, 5, d=(2, 2), pad=(4, 3, 4, 5),
                       groups=3, ops=("relu",)))
    c.append(conv_case("depthwise_w40_strips", 1, 6, 5, 40, 6, 3, 3, pad=(1, 1, 1, 1), groups=6,
                       ops=("bias", "residual", "relu")))
    c.append(conv_case("depthwise_s2_w45", 1, 3, 7, 45, 3, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=3, ops=("bn",)))
    c.append(conv_case("depthwise_width1", 1, 4, 6, 1, 4, 3, 3, pad=(1, 1, 1, 1), groups=4))
    # rows of 4 or more, the input copied into a padded plane (blocks of up to 8 output
    # rows): dilation and uneven padding, batch 2, an odd row count
    c.append(conv_case("depthwise_plane_d2", 2, 3, 9, 21, 3, 3, 3, d=(2, 2), pad=(2, 1, 1, 2),
                       groups=3, ops=("bias", "residual")))
    c.append(conv_case("depthwise_plane_5x3_s21", 1, 4, 13, 16, 4, 5, 3, s=(2, 1),
                       pad=(2, 1, 2, 1), groups=4, ops=("bn", "relu")))
    # rows of 17 (a strip overlapping), the last input row never read
    c.append(conv_case("depthwise_plane_unread", 1, 3, 8, 19, 3, 3, 3, s=(2, 1), groups=3))
    # 19 output rows: blocks of 7, 7 and the last 5 (x86), pairs and the last row (generic);
    # rows of 7 and 12, narrower than a vector (strips of a half or a quarter of one)
    c.append(conv_case("depthwise_plane_rows19", 1, 5, 19, 20, 5, 3, 3, pad=(1, 1, 1, 1),
                       groups=5, ops=("bias", "relu")))
    c.append(conv_case("depthwise_plane_w7_5x5", 1, 6, 11, 7, 6, 5, 5, pad=(2, 2, 2, 2),
                       groups=6, ops=("bias",)))
    c.append(conv_case("depthwise_plane_w12", 2, 4, 13, 12, 4, 3, 3, pad=(1, 1, 1, 1),
                       groups=4, ops=("bn", "residual")))
    # strided along the rows: the plane split by column phase (phases 0 and 1; with
    # dilation 2 only phase 0 is read; stride 3 with a 5x5 kernel reads all three)
    c.append(conv_case("depthwise_plane_s2", 1, 6, 17, 23, 6, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=6, ops=("bias", "relu")))
    c.append(conv_case("depthwise_plane_s2_d2", 1, 4, 15, 21, 4, 3, 3, s=(2, 2), d=(2, 2),
                       pad=(2, 1, 1, 2), groups=4, ops=("bias",)))
    c.append(conv_case("depthwise_plane_s3_5x5", 2, 3, 20, 26, 3, 5, 5, s=(3, 3),
                       pad=(2, 0, 1, 2), groups=3, ops=("bn", "relu")))
    c.append(conv_case("depthwise_plane_s12_5x3", 1, 5, 11, 30, 5, 5, 3, s=(1, 2),
                       pad=(2, 1, 2, 1), groups=5))
    # outputs of 16 pixels or fewer a channel, x86: blocks of channels as the vector lanes
    # (64 in one block; 96 in blocks of 48 with a 5x5 on 2 x 2, most taps in the padding;
    # stride 2, batch 2, a residual; 1 x 1)
    c.append(conv_case("depthwise_lanes_4x4_64", 1, 64, 4, 4, 64, 3, 3, pad=(1, 1, 1, 1), groups=64,
                       ops=("bias", "relu")))
    c.append(conv_case("depthwise_lanes_2x2_5x5_96", 1, 96, 2, 2, 96, 5, 5, pad=(2, 2, 2, 2),
                       groups=96, ops=("bn",)))
    c.append(conv_case("depthwise_lanes_s2_b2_32", 2, 32, 7, 8, 32, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=32, ops=("bias", "residual")))
    c.append(conv_case("depthwise_lanes_1x1_16", 1, 16, 1, 1, 16, 3, 3, pad=(1, 1, 1, 1), groups=16))
    c.append(conv_case("depthwise_mult2", 1, 5, 7, 9, 10, 3, 3, pad=(1, 1, 1, 1), groups=5,
                       ops=("bias", "relu")))
    c.append(conv_case("pointwise_17to33", 1, 17, 7, 9, 33, 1, 1, ops=("bias", "residual")))
    c.append(conv_case("pointwise_stride2", 1, 8, 9, 9, 12, 1, 1, s=(2, 2), ops=("bn",)))
    # 1x1 convs flattened into one row (x86-64-avx512): 45 pixels in blocks of 32 columns
    # and a rest of 16; fewer pixels than a vector, vectorised over the channels (9 and 4
    # pixels, the last block of channels partly filled), and one pixel
    c.append(conv_case("pointwise_45px_12to20", 1, 12, 5, 9, 20, 1, 1, ops=("bias", "relu")))
    c.append(conv_case("pointwise_9px_40to50", 1, 40, 3, 3, 50, 1, 1, ops=("bias", "relu")))
    c.append(conv_case("pointwise_4px_b2_24to36", 2, 24, 2, 2, 36, 1, 1,
                       ops=("bn", "residual")))
    c.append(conv_case("pointwise_1px_48to20", 1, 48, 1, 1, 20, 1, 1, ops=("bias", "clip")))
    c.append(conv_case("batch2_residual_x", 2, 8, 6, 9, 8, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bias", "residual_x", "relu")))
    c.append(conv_case("wide_32to32", 1, 32, 10, 37, 32, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bias", "relu")))
    # two vectors of channels (x86-64-avx512), the last block partly filled
    c.append(conv_case("co40_rest8", 1, 6, 9, 23, 40, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bias", "residual", "relu")))
    c.append(conv_case("co50_s2_rest18", 1, 3, 11, 29, 50, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bn", "mulchan")))
    # row-buffered blocks of 32 columns (x86-64-avx512, Tuning.rows_wb): 45 columns, a rest
    # block of 16 and 20 channels in blocks of 5; 72 columns, the last block overlapping
    c.append(conv_case("s2_w45_co20_rows_wide", 1, 3, 7, 90, 20, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bias", "relu")))
    c.append(conv_case("s2_w72_co16_rows_overlap", 2, 2, 5, 144, 16, 3, 3, s=(2, 2),
                       pad=(1, 0, 1, 1), ops=("bn",)))
    # fewer output channels than a vector, a row buffer over 64 KiB: the direct blocks of 32
    # columns, with border columns
    c.append(conv_case("co8_w100_direct_wide", 1, 64, 4, 100, 8, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bias", "relu")))
    c.append(conv_case("mbv2_asym_pad_s2", 1, 3, 16, 16, 16, 3, 3, s=(2, 2), pad=(0, 0, 1, 1),
                       ops=("bn", "clip")))
    c.append(conv_case("pad_wider_than_kernel", 1, 2, 4, 5, 3, 3, 3, pad=(3, 4, 3, 2),
                       ops=("bias",)))
    # x86-64-avx512's clipped strips (Tile.clip): padding wider than the kernel (the first
    # columns read no input), a dilated kernel wider than the input (columns whose taps
    # leave it on both sides), and a strided conv
    c.append(conv_case("clip_pad3_16to16", 1, 16, 6, 16, 16, 3, 3, pad=(1, 3, 1, 3),
                       ops=("bias", "relu")))
    c.append(conv_case("clip_d4_over_input", 1, 4, 6, 6, 16, 3, 3, d=(1, 4), pad=(1, 4, 1, 4),
                       ops=("bias",)))
    c.append(conv_case("clip_s2_24to32", 1, 24, 7, 29, 32, 3, 3, s=(2, 2), pad=(1, 1, 1, 1)))
    c.append(conv_case("epilogue_chain", 1, 4, 6, 8, 6, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bias", "relu", "mulchan", "subchan_swapped", "mulscalar",
                            "divscalar")))
    c.append(conv_case("sigmoid_residual", 1, 3, 5, 7, 7, 2, 2, pad=(0, 0, 1, 1),
                       ops=("sigmoid", "residual")))
    c.append(conv_case("stride3_kernel4", 1, 3, 17, 19, 5, 4, 4, s=(3, 3), pad=(1, 2, 0, 1)))
    # random conv2d
    for i in range(10):
        g = int(rng.choice([1, 1, 1, 2]))
        ci = g * int(rng.integers(1, 9))
        co = g * int(rng.integers(1, 13))
        kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        pad = tuple(int(v) for v in rng.integers(0, 3, 4))
        hi = max(int(rng.integers(1, 16)), dh * (kh - 1) + 1 - pad[0] - pad[2])
        wi = max(int(rng.integers(1, 30)), dw * (kw - 1) + 1 - pad[1] - pad[3])
        ops = [("bias",), ("bn", "relu"), (), ("relu", "residual")][i % 4]
        c.append(conv_case("random%d" % i, int(rng.integers(1, 3)), ci, hi, wi, co, kh, kw,
                           (sh, sw), (dh, dw), pad, g, ops))
    # interiors narrower than a vector (x86-64-avx2: vectorised over the channels)
    c.append(conv_case("narrow_w3_16to24", 1, 16, 3, 3, 24, 3, 3, pad=(1, 1, 1, 1), ops=("bias", "relu")))
    c.append(conv_case("narrow_w7_9to40", 1, 9, 5, 7, 40, 3, 3, pad=(1, 1, 1, 1), ops=("bn",)))
    # rows of a few pixels, many channels (ResNet's last stages; x86-64-avx2: the input
    # copied with its columns, or its whole plane, zero-padded, blocks of whole rows)
    c.append(conv_case("tiny_2x2_64to64", 1, 64, 2, 2, 64, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bn", "residual", "relu")))
    c.append(conv_case("tiny_4x4_64to64", 1, 64, 4, 4, 64, 3, 3, pad=(1, 1, 1, 1), ops=("bias", "relu")))
    c.append(conv_case("tiny_s2_4x4_to_2x2", 1, 64, 4, 4, 64, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bn",)))
    c.append(conv_case("tiny_b2_3x3_24to40", 2, 24, 3, 3, 40, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bias", "residual")))
    c.append(conv_case("tiny_4x3_d2_asym", 1, 20, 4, 3, 36, 3, 3, d=(2, 2), pad=(2, 1, 1, 2),
                       ops=("relu",)))
    c.append(conv_case("tiny_1x2_groups2", 1, 32, 1, 2, 64, 3, 3, pad=(1, 1, 1, 1), groups=2))
    # 1x1 convs over fewer pixels than a vector (EfficientNet's last stages at 2x2;
    # x86-64-avx2: vectorised over the channels, each vector's weights a stream): a last
    # block of channels partly filled, batch 2, groups
    c.append(conv_case("tiny_1x1_2x2_40to72", 1, 40, 2, 2, 72, 1, 1, ops=("bn", "residual")))
    c.append(conv_case("tiny_1x1_1x3_b2_24to20", 2, 24, 1, 3, 20, 1, 1, ops=("bias", "relu")))
    c.append(conv_case("tiny_1x1_2x2_g2", 1, 32, 2, 2, 48, 1, 1, groups=2, ops=("bias",)))
    # swish (x * sigmoid(x), either order) after a conv: fused into its epilogue as silu
    c.append(conv_case("swish_3x3_12to20", 1, 12, 9, 11, 20, 3, 3, pad=(1, 1, 1, 1),
                       ops=("bn", "swish")))
    c.append(conv_case("swish_swapped_1x1_b2_24to40", 2, 24, 6, 6, 40, 1, 1,
                       ops=("bias", "swish_swapped", "residual")))
    c.append(conv_case("swish_dw_3x3_32", 1, 32, 10, 19, 32, 3, 3, pad=(1, 1, 1, 1), groups=32,
                       ops=("bn", "swish")))
    # a depthwise conv's epilogue from silu on is a pass of its own on vector targets: over
    # each finished plane, or over the whole output for planes under 64 outputs; with a
    # per-channel and a full-size operand after the silu
    c.append(conv_case("swish_dw_plane_5x5_24", 1, 24, 20, 21, 24, 5, 5, pad=(2, 2, 2, 2),
                       groups=24, ops=("bias", "swish", "mulchan", "residual")))
    c.append(conv_case("swish_dw_tiny_s2_40", 2, 40, 4, 3, 40, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=40, ops=("bn", "swish_swapped", "mulchan", "residual")))
    # the same split for other steps that call a function (sigmoid's rk_expf, tanhf), with
    # steps before the cut (clip, the residual) kept in the tap loop
    c.append(conv_case("dwsplit_sigmoid_3x3_16", 1, 16, 12, 13, 16, 3, 3, pad=(1, 1, 1, 1),
                       groups=16, ops=("bias", "clip", "sigmoid", "mulchan")))
    c.append(conv_case("dwsplit_tanh_tiny_5x5_24", 1, 24, 5, 6, 24, 5, 5, s=(2, 2),
                       pad=(2, 2, 2, 2), groups=24, ops=("bn", "residual", "tanh", "mulscalar")))
    c.append(conv_case("narrow_5x5_24to32", 1, 24, 5, 5, 32, 3, 3, pad=(1, 1, 1, 1), ops=("bn", "relu")))
    c.append(conv_case("narrow_s2_11x12_to_6x6", 1, 16, 11, 12, 48, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bias",)))
    # 1-D convs (x86-64-avx2: blocks of 16 channels x 5 columns, vectorised over the
    # channels; the epilogue fused across the reshape views): a last block of 8 channels
    # and a last strip overlapping; one block partly filled, dilation, batch 2
    c.append(conv1d_case("conv1d_k9_5to40_w37", 1, 5, 37, 40, 9, pad=(4, 4),
                         ops=("bias", "relu", "mulchan")))
    c.append(conv1d_case("conv1d_d2_b2_3to17", 2, 3, 23, 17, 3, d=2, pad=(1, 2),
                         ops=("bn", "residual", "sigmoid")))
    c.append(conv1d_case("conv1d_16to16_w21", 1, 16, 21, 16, 5, pad=(2, 2),
                         ops=("bias", "residual_x", "clip")))
    # x86-64-avx2: Winograd F(6, 3) along the row (16 or more channels each side, 48
    # columns or more): kw 3, 5 (a group of 2 taps zero-padded), 7 (of 1), 9; input
    # channels not a multiple of 8, output channels not a multiple of 8 or 16, a last tile
    # of fewer than 6 outputs, batch 2, a row in chunks (more than 512 KiB of scratch)
    c.append(conv1d_case("wino_k3_16to24_w50", 1, 16, 50, 24, 3, pad=(1, 1), ops=("bias", "relu")))
    c.append(conv1d_case("wino_k5_19to20_w61", 1, 19, 61, 20, 5, pad=(2, 2),
                         ops=("bn", "residual", "relu")))
    c.append(conv1d_case("wino_k7_17to16_w70", 1, 17, 70, 16, 7, pad=(3, 1),
                         ops=("bias", "mulchan", "sigmoid")))
    c.append(conv1d_case("wino_k9_32to40_b2_w100", 2, 32, 100, 40, 9, pad=(4, 4),
                         ops=("bias", "leaky", "residual")))
    c.append(conv1d_case("wino_k3_64to64_w1200_chunks", 1, 64, 1200, 64, 3, pad=(1, 1),
                         ops=("bias", "residual_x", "clip")))
    # padding wider than the taps: tiles whose inputs are all zeros, at both ends (less than
    # half the row: a row of mostly border pixels takes the zero-padded TK_CONV_OC blocks)
    c.append(conv1d_case("wino_k3_pad30_10_16to16_w48", 1, 16, 48, 16, 3, pad=(30, 10),
                         ops=("bias",)))
    # strided transposed convs, per output phase: 4x4 at stride 2 (2x2 phase kernels,
    # interiors of 6 and 8 columns); 3x5 at strides 2x3 (phases of 1 and 2 rows of taps),
    # output padding, 20 channels (a last block of 4), batch 2
    c.append(deconv_case("deconv_4x4_s2_5to24", 1, 5, 7, 9, 24, 4, 4, (2, 2), (1, 1, 1, 1),
                         ops=("bias", "relu")))
    c.append(deconv_case("deconv_3x5_s23_b2_6to20", 2, 6, 5, 6, 20, 3, 5, (2, 3),
                         (1, 2, 1, 2), opad=(1, 2), ops=("bn",)))
    # pooling (x86 targets: emit/kernel_pool.c): stride-2 windows with interior and border
    # columns, ceil mode, dilation, windows mostly padding, no interior at all
    c.append(pool_case("maxpool_3x3_s2_ceil", 1, 5, 17, 15, (3, 3), (2, 2), ceil=True))
    c.append(pool_case("maxpool_3x3_s2_pad1", 2, 3, 12, 13, (3, 3), (2, 2), pad=(1, 1, 1, 1)))
    c.append(pool_case("maxpool_2x3_d2_asym", 1, 4, 9, 11, (2, 3), (1, 2), d=(2, 2),
                       pad=(0, 2, 1, 0), ceil=True))
    c.append(pool_case("maxpool_pad2_k3_small", 1, 2, 3, 4, (3, 3), (2, 2), pad=(2, 2, 2, 2)))
    c.append(pool_case("avgpool_3x3_s2_incl", 1, 6, 10, 9, (3, 3), (2, 2), pad=(1, 1, 1, 1),
                       ceil=True, is_max=False, include_pad=True))
    c.append(pool_case("avgpool_2x2_excl_ceil", 1, 3, 7, 9, (2, 2), (2, 2), pad=(0, 1, 1, 0),
                       ceil=True, is_max=False))
    c.append(pool_case("avgpool_width1", 1, 4, 6, 1, (3, 1), (1, 1), pad=(1, 0, 1, 0),
                       is_max=False))
    c.append(pool_case("maxpool_no_interior", 1, 3, 4, 2, (3, 3), (1, 1), pad=(1, 1, 1, 1)))
    # max pools with rows in bands (the maxima over the windows' rows, then columns, each
    # one loop along a band): 3x3 stride 2 padding 1 (bands between the border rows, border
    # columns) with NaN and infinities inside, on a border column and on a border row; a
    # dilated 2x3 stride (1, 2) window; rows wide enough for bands of one row
    xn = rnd(2, 3, 9, 40)
    xn[0, 0, 4, 10] = xn[0, 1, 0, 0] = xn[1, 2, 8, 39] = np.nan
    xn[0, 2, 3, 21], xn[1, 0, 5, 6] = np.inf, -np.inf
    xn[1, 1] = -np.inf
    c.append(pool_case("maxpool_bands_nan_inf", 2, 3, 9, 40, (3, 3), (2, 2), pad=(1, 1, 1, 1),
                       x=xn))
    c.append(pool_case("maxpool_bands_d2_s12", 1, 4, 11, 23, (2, 3), (1, 2), d=(2, 2),
                       pad=(0, 1, 0, 2)))
    c.append(pool_case("maxpool_bands_wide", 1, 2, 5, 4500, (2, 2), (2, 2)))
    # dense
    c.append(dense_case("gemv_1x1", (1,), 1, 1))
    c.append(dense_case("gemv_k37_n5", (1,), 37, 5, ("bias", "relu")))
    c.append(dense_case("gemv_k784_n130", (1,), 784, 130, ("bias",)))
    # over 2 MiB of weights: x86 targets stream them as 4-row dots (TK_GEMV), with 3 rows
    # and 12 columns left over
    c.append(dense_case("gemv_stream_k1100_n503", (1,), 1100, 503, ("bias", "relu")))
    c.append(dense_case("gemv_k17_n3_residual", (1,), 17, 3, ("bias", "residual")))
    c.append(dense_case("gemv_matmul_kn", (1,), 33, 7, ("bias", "clip"), matmul=True))
    # one row, blocks of several vectors of columns (x86-64-avx2: each vector's weights a
    # stream of their own), the last block narrower, weights stored [k][n]
    c.append(dense_case("gemv_matmul_kn_n83", (1,), 45, 83, ("bias",), matmul=True))
    c.append(dense_case("gemm_m3_k33_n19", (3,), 33, 19, ("bias", "relu")))
    c.append(dense_case("gemm_m32_k64_n100", (32,), 64, 100, ("bn",)))
    c.append(dense_case("gemm_rank3", (2, 3), 20, 9, ("bias", "residual", "sigmoid")))
    c.append(dense_case("gemm_matmul_kn", (5,), 12, 40, ("bias",), matmul=True))
    c.append(dense_case("gemm_m17_k5_n1", (17,), 5, 1, ("mulscalar",)))
    # x86-64-avx512: blocks of 8 rows x 2 vectors (an array per vector); 20 rows leave 4,
    # and 60 columns a last block of 28 (its second vector partly stored)
    c.append(dense_case("gemm_split_m20_k40_n60", (20,), 40, 60, ("bias", "relu")))
    # x86-64-avx2: blocks of 3 rows x 4 vectors (32 columns); 88 columns leave a last block
    # of 24 (3 arrays), 11 rows a block of 2
    c.append(dense_case("gemm_wide_m11_k9_n88", (11,), 9, 88, ("bias", "residual")))
    # nn.batch_matmul of two computed operands: b read in place per batch, its last
    # n % wb columns a block of their own; batch strides 0 on either side
    c.append(bmm_case("bmm_b4_m32_k32_n32", 4, 4, 32, 32, 32))
    c.append(bmm_case("bmm_b3_m5_k7_n13", 3, 3, 5, 7, 13, ("bias", "relu")))
    # x86-64-avx2: 3 rows x 32 columns, then a block of the last 13 columns (one array)
    c.append(bmm_case("bmm_b2_m10_k7_n45", 2, 2, 10, 7, 45, ("bias",)))
    c.append(bmm_case("bmm_bcast_a_m6_k9_n19", 1, 4, 6, 9, 19, ("mulscalar",)))
    c.append(bmm_case("bmm_bcast_b_m1_k9_n3", 4, 1, 1, 9, 3, ("sigmoid",)))
    c.append(bmm_case("bmm_b2_m7_k5_n20_residual", 2, 2, 7, 5, 20, ("residual",)))
    # a constant matrix broadcast over the batches: one matmul of batch * m rows
    c.append(bmm_case("bmm_weight_b5_m1_k8_n40", 5, 5, 1, 8, 40, ("bias",), weight=True))
    c.append(bmm_case("bmm_weight_b3_m4_k16_n9", 3, 3, 4, 16, 9, ("bias", "relu"), weight=True))
    # --target generic: blocks of many rows where RC_SIMD is 1, in passes of a few rows
    # where it is 0 (the harness builds both, tuned_common.DEFAULT_CCS), the last block of
    # a group partly filled and its last pass partly too (rows guarded by nr)
    c.append(conv_case("passes_g2_co70", 2, 6, 6, 19, 70, 3, 3, pad=(1, 1, 1, 1), groups=2,
                       ops=("bias", "mulchan", "residual", "relu")))
    c.append(conv_case("passes_rows_s2_co46", 1, 3, 9, 21, 46, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bn", "leaky")))
    # --target generic where RC_WIDE is 1 (AVX-512: gcc and clang at -march=native here), the
    # conv blocks:
    # strips twice as wide first, then the narrow ones for the rest (row-buffered: 23
    # columns, 16 + an overlapping 8; direct: 38 interior columns, 2 x 16 + 6)
    c.append(conv_case("wide_generic_rows_s2", 1, 3, 9, 45, 40, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       ops=("bias", "relu")))
    c.append(conv_case("wide_generic_g2_co70", 1, 8, 5, 40, 70, 3, 3, pad=(1, 1, 1, 1), groups=2,
                       ops=("mulchan", "residual")))
    # and the float depthwise plane kernel in strips of 16 (37 columns: 16, 16, the last
    # overlapping)
    c.append(conv_case("wide_generic_dw_w37", 2, 5, 11, 37, 5, 3, 3, pad=(1, 1, 1, 1), groups=5,
                       ops=("bias", "clip")))
    return c


def compare(got, want):
    """None when got matches want within the tolerance (where want is NaN or infinite, got
    the same), else a description."""
    got = np.asarray(got, np.float64).ravel()
    want = np.asarray(want, np.float64).ravel()
    if got.shape == want.shape:
        odd = ~np.isfinite(want)
        bad = odd & ~((got == want) | (np.isnan(got) & np.isnan(want)))
        if bad.any():
            i = int(np.argmax(bad))
            return "%d non-finite differ; first at %d: got %r, want %r" % (
                int(bad.sum()), i, got[i], want[i])
        got, want = got[~odd], want[~odd]
    return tuned_common.compare(got, want, (ATOL, RTOL))


# conv cases whose rows are a few pixels wide with 32 or more output channels: both x86
# targets copy their input with the columns zero-padded (pack.c, Tuning.rows_regs)
PADDED_ROWS = ("tiny_2x2_64to64", "tiny_4x4_64to64", "tiny_s2_4x4_to_2x2", "tiny_b2_3x3_24to40",
               "tiny_4x3_d2_asym")


def main():
    args = parse_args(sys.argv[1:], __doc__)
    if args is None:
        return 2
    relayc, keep, ccs, _ = args
    with common.work_dir("relayc_tuned_", keep) as work:
        return check_all(relayc, ccs, work)


def check_all(relayc, ccs, work):
    src, io = work_subdirs(work)
    all_cases = cases()
    streams = sum(c.name.startswith("gemv_stream") for c in all_cases) * \
        sum(t.startswith("x86") for t in TARGETS) + \
        sum(c.name.startswith("gemm_split") for c in all_cases) * TARGETS.count("x86-64-avx512") + \
        sum(c.name.startswith(("depthwise_plane", "depthwise_lanes")) for c in all_cases) * \
        sum(t.startswith("x86") for t in TARGETS) + \
        sum(c.name in PADDED_ROWS for c in all_cases) * sum(t.startswith("x86") for t in TARGETS) + \
        sum(c.name.startswith("wino_") for c in all_cases) * TARGETS.count("x86-64-avx2") + \
        sum(c.name.startswith("swish_") for c in all_cases) * len(TARGETS) + \
        sum(c.name.startswith(("swish_dw_", "dwsplit_")) for c in all_cases) * len(TARGETS) + \
        sum(c.name.startswith("wide_generic") for c in all_cases) * TARGETS.count("generic")
    report = common.Tap(diag_lines=None)
    tap = report.result
    report.plan(len(all_cases) * (1 + len(TARGETS) * (1 + len(ccs))) + streams)
    table, sources = [], []
    ref_out = {}
    for ci, case in enumerate(all_cases):
        cdir = os.path.join(work, "case%d" % ci)
        os.makedirs(cdir, exist_ok=True)
        model = os.path.join(cdir, "model.json")
        with open(model, "w") as f:
            f.write(rw.save_json(rw.Module({"main": case.func}), version="0.18.0"))
        in_flags = []
        for v, a in case.inputs:
            p = os.path.join(cdir, "input_%s.npy" % v.name)
            np.save(p, a)
            in_flags += ["--input", "%s=%s" % (v.name, p)]
        # the reference interpreter, on the fused and packed graph
        r = subprocess.run([relayc, "run", model, "--reference", "-o", cdir] + in_flags,
                           capture_output=True, text=True)
        if r.returncode:
            tap(False, "%s: relayc run --reference" % case.name, r.stderr)
            continue
        ref = np.load(os.path.join(cdir, "output_0.npy"))
        ref_out[ci] = ref
        tap(compare(ref, case.want) is None,
            "%s: reference kernels vs torch float64" % case.name, compare(ref, case.want))
        for t in TARGETS:
            name = "c%d_%s" % (ci, t.replace("-", "_"))
            r = subprocess.run([relayc, "compile", model, "--target", t, "--name", name,
                                "-o", src], capture_output=True, text=True)
            tap(r.returncode == 0, "%s %s: relayc compile" % (case.name, t), r.stderr)
            if r.returncode:
                continue
            if case.name.startswith("gemv_stream") and t.startswith("x86"):
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = "4 weight rows at a time" in f.read()
                tap(kernel, "%s %s: weights streamed as 4-row dots" % (case.name, t))
            if case.name.startswith("depthwise_plane") and t.startswith("x86"):
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = "a zero-padded plane of" in f.read()
                tap(kernel, "%s %s: the input copied into a padded plane" % (case.name, t))
            if case.name.startswith("depthwise_lanes") and t.startswith("x86"):
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = "channels (the vector lanes)" in f.read()
                tap(kernel, "%s %s: blocks of channels as the vector lanes" % (case.name, t))
            if case.name in PADDED_ROWS and t.startswith("x86"):
                # a few pixels a row, 2 vectors of channels or more: blocks over the input
                # with its columns zero-padded, not a border function per pixel
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = "the input with its columns zero-padded" in f.read()
                tap(kernel, "%s %s: blocks over the column-padded input" % (case.name, t))
            if case.name.startswith("wino_") and t == "x86-64-avx2":
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = "Winograd F(6, 3)" in f.read()
                tap(kernel, "%s %s: Winograd F(6, 3) along the row" % (case.name, t))
            if case.name.startswith("swish_"):
                with open(os.path.join(src, name + ".c")) as f:
                    text = f.read()
                kernel = "/* silu */" in text and "_sigmoid(" not in text
                tap(kernel, "%s %s: x * sigmoid(x) in the conv's epilogue" % (case.name, t))
            if case.name.startswith(("swish_dw_", "dwsplit_")):
                # depthwise: the epilogue from its first function call on (silu, or the
                # step the dwsplit_ name gives) as a pass of its own, but on Cortex-M
                with open(os.path.join(src, name + ".c")) as f:
                    text = f.read()
                step = "silu" if case.name.startswith("swish_") else case.name.split("_")[1]
                where = "over the output" if "tiny" in case.name else "over the plane"
                split = "the epilogue from %s on, %s" % (step, where) in text
                tap(split == (t != "cortex-m"), "%s %s: the epilogue from %s on is %s"
                    % (case.name, t, step, "a pass " + where if t != "cortex-m" else
                       "in the tap loop (no second pass on a scalar core)"))
            if case.name.startswith("wide_generic") and t == "generic":
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = re.search(r"#if RC_WIDE\n((/\*[^\n]*\n)?static void k0_[br]\d+_w16\("
                                       r"| *RC_PLOOP for \(o0 = 0; o0 < \d+; o0 \+= 16\))", f.read())
                tap(kernel is not None, "%s %s: blocks of 16 columns where RC_WIDE is 1"
                    % (case.name, t))
            if case.name.startswith("gemm_split") and t == "x86-64-avx512":
                with open(os.path.join(src, name + ".c")) as f:
                    kernel = "const float wv1 = wk[j + 16];" in f.read()
                tap(kernel, "%s %s: 2 vectors of columns per row, an array each" % (case.name, t))
            sources += [os.path.join(src, name + ".c"), os.path.join(src, name + "_constants.c")]
            for k, (v, a) in enumerate(case.inputs):
                a.astype(np.float32).tofile(os.path.join(io, "%s.in%d" % (name, k)))
            # sizes in bytes (float32)
            table.append((ci, t, name, [4 * a.size for _, a in case.inputs], 4 * ref.size))

    def check(ci, name):
        got = np.fromfile(os.path.join(io, name + ".out0"), np.float32)
        return compare(got, ref_out[ci]) or compare(got, all_cases[ci].want)

    check_harness(report, "tuned_harness.c", work, io, sources, table, ccs, all_cases,
                  "tuned vs reference kernels", check)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
