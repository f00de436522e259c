#!/usr/bin/python3
"""Generate relayc's quantized (QNN) test cases, in the layout of tests/golden.

Two sets, both built with tests/relaywriter.py (+ tests/qnn/qnnwriter.py) and with
expected outputs from tests/qnn/qnn_ref.py (numpy; never from relayc or TVM):

  models   a quantized LeNet (int8 and a uint8 variant) and a quantized MobileNetV2
           inverted-residual block with per-channel weights (NCHW, and NHWC as TFLite
           writes it), MobileNetV2 layers as TVM's PyTorch front end writes them (uint8,
           requantize to int32, clip, cast), each in two or more TVM dialects. Written to tests/golden/qnn_*;
           tests/models/run_case.py runs them as it runs every golden case.
  ops      one small model per operator and edge case (exact halves, the most negative
           input, scales above 1, per-channel scales 2^20 apart, zero points at the type
           limits, saturation, float compute_dtype, every 8-bit type pairing ...).
           tests/qnn/test_qnn.py generates them into a temporary directory and runs each
           through run_case.py.

Every case has tolerance rtol 0, atol 0: outputs must match bit for bit.

Usage: /usr/bin/python3 tests/qnn/gen_qnn.py [--set models|ops] [--out DIR] [--only SUBSTR]
                                             [--check] [--list]
Deterministic: fixed seeds, so re-running rewrites the same bytes.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, TESTS)
import qnnwriter  # noqa: E402,F401  (registers the QNN ops in relaywriter)
import qnn_ref as q  # noqa: E402
import relaywriter as rw  # noqa: E402


# ---------------------------------------------------------------------------
# A builder: every call makes the Relay expression and its expected value together
# ---------------------------------------------------------------------------

def f32(v):
    return np.asarray(v, dtype=np.float32)


def i32(v):
    return np.asarray(v, dtype=np.int32)


class B:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.params = []
        self.inputs = {}

    # tensors are (expr, value) pairs
    def input(self, name, value):
        value = np.asarray(value)
        v = rw.Var(name, value.shape, str(value.dtype))
        self.params.append(v)
        self.inputs[name] = value
        return (v, value)

    def const(self, value):
        value = np.asarray(value)
        return (rw.Const(value), value)

    def ints(self, shape, dtype, lo=None, hi=None):
        info = np.iinfo(dtype)
        lo = info.min if lo is None else lo
        hi = info.max if hi is None else hi
        return self.rng.randint(lo, hi + 1, size=shape).astype(dtype)

    # -- QNN --
    def quantize(self, t, scale, zp, axis=-1, out_dtype="int8"):
        e = rw.Call("qnn.quantize", [t[0], rw.Const(f32(scale)), rw.Const(i32(zp))],
                    {"axis": axis, "out_dtype": out_dtype})
        return (e, q.quantize(t[1], f32(scale), i32(zp), axis, out_dtype))

    def dequantize(self, t, scale, zp, axis=-1):
        e = rw.Call("qnn.dequantize", [t[0], rw.Const(f32(scale)), rw.Const(i32(zp))],
                    {"axis": axis})
        return (e, q.dequantize(t[1], f32(scale), i32(zp), axis))

    def requantize(self, t, iscale, izp, oscale, ozp, axis=-1, rounding=None,
                   compute="None", out_dtype="int8"):
        attrs = {"axis": axis, "out_dtype": out_dtype}
        if rounding is not None:
            attrs["rounding"] = rounding
        if compute != "None":
            attrs["compute_dtype"] = compute
        e = rw.Call("qnn.requantize", [t[0], rw.Const(f32(iscale)), rw.Const(i32(izp)),
                                       rw.Const(f32(oscale)), rw.Const(i32(ozp))], attrs)
        v = q.requantize(t[1], f32(iscale), i32(izp), f32(oscale), int(ozp), axis,
                         rounding or "UPWARD", "int64" if compute == "None" else compute,
                         out_dtype)
        return (e, v)

    def conv2d(self, t, w, zx, zw, sx, sw, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
               groups=1, data_layout="NCHW", kernel_layout="OIHW"):
        wv = w[1]
        attrs = {"strides": list(strides), "padding": list(padding),
                 "dilation": list(dilation), "groups": groups, "data_layout": data_layout,
                 "kernel_layout": kernel_layout, "out_dtype": "int32",
                 "kernel_size": None, "channels": None}
        e = rw.Call("qnn.conv2d", [t[0], w[0], rw.Const(i32(zx)), rw.Const(i32(zw)),
                                   rw.Const(f32(sx)), rw.Const(f32(sw))], attrs)
        x = np.transpose(t[1], [data_layout.index(ch) for ch in "NCHW"])
        wo = np.transpose(wv, [kernel_layout.index(ch) for ch in "OIHW"])
        p = list(padding)
        pad = {1: p * 4, 2: [p[0], p[1], p[0], p[1]], 4: p}[len(p)]
        y = q.conv2d(x, wo, zx, zw, strides, pad, dilation, groups)
        y = np.transpose(y, ["NCHW".index(ch) for ch in data_layout])
        return (e, y)

    def dense(self, t, w, zx, zw, sx, sw):
        e = rw.Call("qnn.dense", [t[0], w[0], rw.Const(i32(zx)), rw.Const(i32(zw)),
                                  rw.Const(f32(sx)), rw.Const(f32(sw))],
                    {"units": int(w[1].shape[0]), "out_dtype": "int32"})
        x = t[1].reshape(-1, t[1].shape[-1])
        y = q.dense(x, w[1], zx, zw).reshape(t[1].shape[:-1] + (w[1].shape[0],))
        return (e, y)

    def bias_add(self, t, bias, axis=1):
        b = i32(bias)
        e = rw.Call("nn.bias_add", [t[0], rw.Const(b)], {"axis": axis})
        return (e, q.bias_add(t[1], b, axis))

    def qbinary(self, op, a, b, sa, za, sb, zb, so, zo):
        args = [a[0], b[0]] + [rw.Const(f(v)) for f, v in
                               ((f32, sa), (i32, za), (f32, sb), (i32, zb), (f32, so), (i32, zo))]
        e = rw.Call(op, args)
        if op == "qnn.mul":
            v = q.mul(a[1], b[1], sa, za, sb, zb, so, zo)
        else:
            v = q.add(a[1], b[1], sa, za, sb, zb, so, zo, subtract=op == "qnn.subtract")
        return (e, v)

    def qconcat(self, ts, scales, zps, so, zo, axis=0):
        e = rw.Call("qnn.concatenate", [rw.Tuple([t[0] for t in ts]),
                                        rw.Tuple([rw.Const(f32(s)) for s in scales]),
                                        rw.Tuple([rw.Const(i32(z)) for z in zps]),
                                        rw.Const(f32(so)), rw.Const(i32(zo))], {"axis": axis})
        return (e, q.concatenate([t[1] for t in ts], scales, zps, so, zo, axis))

    def fixed_point_multiply(self, t, m, s):
        e = rw.Call("fixed_point_multiply", [t[0]], {"multiplier": int(m), "shift": int(s)})
        return (e, q.fpm(t[1].astype(np.int64), int(m), int(s), False).astype(np.int32))

    # -- plain ops on integer tensors --
    def clip(self, t, lo, hi):
        e = rw.Call("clip", [t[0]], {"a_min": float(lo), "a_max": float(hi)})
        return (e, q.clip(t[1], lo, hi))

    def cast(self, t, dtype):
        e = rw.Call("cast", [t[0]], {"dtype": dtype})
        v = t[1].astype(np.int64)
        if dtype in ("int8", "uint8", "int32"):
            bits = {"int8": 8, "uint8": 8, "int32": 32}[dtype]
            v = q.wrap(v.astype(object), bits).astype(np.int64) if dtype != "uint8" else v % 256
        return (e, v.astype(dtype))

    def pool(self, t, kind, pool, strides=(1, 1), padding=(0, 0), ceil_mode=False,
             count_include_pad=False, layout="NCHW"):
        op = "nn.max_pool2d" if kind == "max" else "nn.avg_pool2d"
        attrs = {"pool_size": list(pool), "strides": list(strides), "padding": list(padding),
                 "ceil_mode": ceil_mode, "layout": layout}
        if kind != "max":
            attrs["count_include_pad"] = count_include_pad
        e = rw.Call(op, [t[0]], attrs)
        p = list(padding)
        pad = {1: p * 4, 2: [p[0], p[1], p[0], p[1]], 4: p}[len(p)]
        x = np.transpose(t[1], [layout.index(ch) for ch in "NCHW"])
        y = q.pool2d(x, kind, pool, strides, pad, (1, 1), ceil_mode, count_include_pad)
        return (e, np.transpose(y, ["NCHW".index(ch) for ch in layout]))

    def pad(self, t, widths, value):
        e = rw.Call("nn.pad", [t[0], rw.Const(np.asarray(value, dtype=t[1].dtype))],
                    {"pad_width": [list(w) for w in widths]})
        return (e, np.pad(t[1], widths, constant_values=value))

    def reshape(self, t, shape):
        e = rw.Call("reshape", [t[0]], {"newshape": list(shape)})
        return (e, t[1].reshape(shape))

    def transpose(self, t, axes):
        e = rw.Call("transpose", [t[0]], {"axes": list(axes)})
        return (e, np.transpose(t[1], axes))

    def concatenate(self, ts, axis):
        e = rw.Call("concatenate", [rw.Tuple([t[0] for t in ts])], {"axis": axis})
        return (e, np.concatenate([t[1] for t in ts], axis))


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

CASES = {"models": [], "ops": []}


def case(kind, name, dialects, desc):
    def reg(fn):
        CASES[kind].append((name, fn, dialects.split(), desc))
        return fn
    return reg


def weights(b, shape, dtype="int8", lo=None, hi=None):
    return b.const(b.ints(shape, dtype, lo, hi))


# ---- models ----

def lenet(b, dt, wdt):
    """conv(5x5, pad 2) -> relu -> maxpool -> conv(5x5, per-channel) -> relu -> avgpool
    (through int32) -> dense -> relu -> dense -> dense -> dequantize."""
    zx = 0 if dt == "int8" else 128
    zw = 0 if wdt == "int8" else 128
    lo, hi = q.QRANGE[dt]
    x = b.input("x", b.rng.uniform(-1, 1, (1, 1, 28, 28)).astype(np.float32))
    s0 = 1 / 127.0
    t = b.quantize(x, s0, zx, out_dtype=dt)
    # conv1: per-tensor weights
    w1s = 0.02
    t = b.conv2d(t, weights(b, (6, 1, 5, 5), wdt), zx, zw, s0, w1s, padding=(2, 2))
    t = b.bias_add(t, b.ints((6,), "int32", -2000, 2000))
    s1 = 0.05
    t = b.requantize(t, np.float32(s0) * np.float32(w1s), 0, s1, zx, axis=1, out_dtype=dt)
    t = b.clip(t, zx, hi)
    t = b.pool(t, "max", (2, 2), (2, 2))
    # conv2: per-channel weights
    w2s = f32(b.rng.uniform(0.002, 0.02, 16))
    t = b.conv2d(t, weights(b, (16, 6, 5, 5), wdt), zx, zw, s1, w2s)
    t = b.bias_add(t, b.ints((16,), "int32", -3000, 3000))
    s2 = 0.08
    t = b.requantize(t, np.float32(s1) * w2s, 0, s2, zx, axis=1, out_dtype=dt)
    t = b.clip(t, zx, hi)
    t = b.cast(t, "int32")
    t = b.pool(t, "avg", (2, 2), (2, 2))
    t = b.cast(t, dt)
    t = b.reshape(t, (1, 400))
    w3s = f32(b.rng.uniform(0.001, 0.01, 120))
    t = b.dense(t, weights(b, (120, 400), wdt), zx, zw, s2, w3s)
    t = b.bias_add(t, b.ints((120,), "int32", -5000, 5000), axis=-1)
    s3 = 0.1
    t = b.requantize(t, np.float32(s2) * w3s, 0, s3, zx, axis=-1, out_dtype=dt)
    t = b.clip(t, zx, hi)
    w4s = 0.01
    t = b.dense(t, weights(b, (84, 120), wdt), zx, zw, s3, w4s)
    t = b.bias_add(t, b.ints((84,), "int32", -5000, 5000), axis=1)
    s4 = 0.12
    t = b.requantize(t, np.float32(s3) * np.float32(w4s), 0, s4, zx, axis=1, out_dtype=dt,
                     rounding="TONEAREST")
    w5s = 0.015
    t = b.dense(t, weights(b, (10, 84), wdt), zx, zw, s4, w5s)
    t = b.bias_add(t, b.ints((10,), "int32", -500, 500), axis=1)
    s5 = 0.2
    t = b.requantize(t, np.float32(s4) * np.float32(w5s), 0, s5, zx - 3, axis=1,
                     out_dtype=dt)
    return b.dequantize(t, s5, zx - 3)


@case("models", "qnn_lenet", "0.8.0 0.18.0",
      "quantized LeNet, int8 activations and weights (per-tensor and per-channel)")
def _(b):
    return lenet(b, "int8", "int8")


@case("models", "qnn_lenet_u8", "0.7.0 0.12.0 0.19.0",
      "quantized LeNet, uint8 activations and weights (zero points 128)")
def _(b):
    return lenet(b, "uint8", "uint8")


def mbv2_block(b, layout):
    """MobileNetV2 inverted residual (expand 1x1 -> relu6 -> depthwise 3x3 with an explicit
    zero-point pad -> relu6 -> project 1x1 -> qnn.add with the input), per-channel int8
    weights; NCHW/OIHW, or NHWC with HWIO (1x1) and HWOI (depthwise) weights as TFLite."""
    c, e, hw = 16, 64, 12
    nhwc = layout == "NHWC"
    ca = 3 if nhwc else 1
    zx = -5
    sx = 0.03
    xs = (1, hw, hw, c) if nhwc else (1, c, hw, hw)
    x = b.input("x", b.ints(xs, "int8"))
    relu6_hi = min(127, zx + int(round(6 / 0.05)))
    # expand
    ws1 = f32(b.rng.uniform(0.001, 0.01, e))
    w1 = b.ints((e, c, 1, 1), "int8", -127, 127)
    kl1 = "HWIO" if nhwc else "OIHW"
    w1c = b.const(np.transpose(w1, ["OIHW".index(ch) for ch in kl1]).copy())
    t = b.conv2d(x, w1c, zx, 0, sx, ws1, data_layout=layout, kernel_layout=kl1)
    t = b.bias_add(t, b.ints((e,), "int32", -1000, 1000), axis=ca)
    t = b.requantize(t, np.float32(sx) * ws1, 0, 0.05, zx, axis=ca)
    t = b.clip(t, zx, relu6_hi)
    # depthwise, padding by an explicit nn.pad with the zero point
    ws2 = f32(b.rng.uniform(0.005, 0.05, e))
    w2 = b.ints((e, 1, 3, 3), "int8", -127, 127)
    kl2 = "HWOI" if nhwc else "OIHW"
    w2c = b.const(np.transpose(w2, ["OIHW".index(ch) for ch in kl2]).copy())
    widths = [(0, 0), (1, 1), (1, 1), (0, 0)] if nhwc else [(0, 0), (0, 0), (1, 1), (1, 1)]
    t = b.pad(t, widths, zx)
    t = b.conv2d(t, w2c, zx, 0, 0.05, ws2, groups=e, data_layout=layout, kernel_layout=kl2)
    t = b.bias_add(t, b.ints((e,), "int32", -1000, 1000), axis=ca)
    t = b.requantize(t, np.float32(0.05) * ws2, 0, 0.05, zx, axis=ca)
    t = b.clip(t, zx, relu6_hi)
    # project
    ws3 = f32(b.rng.uniform(0.001, 0.01, c))
    w3 = b.ints((c, e, 1, 1), "int8", -127, 127)
    w3c = b.const(np.transpose(w3, ["OIHW".index(ch) for ch in kl1]).copy())
    t = b.conv2d(t, w3c, zx, 0, 0.05, ws3, data_layout=layout, kernel_layout=kl1)
    t = b.bias_add(t, b.ints((c,), "int32", -1000, 1000), axis=ca)
    t = b.requantize(t, np.float32(0.05) * ws3, 0, 0.04, 2, axis=ca)
    # residual
    return b.qbinary("qnn.add", t, x, 0.04, 2, sx, zx, 0.045, -1)


@case("models", "qnn_mbv2_block", "0.8.0 0.19.0",
      "quantized MobileNetV2 inverted-residual block, NCHW, per-channel int8 weights")
def _(b):
    return mbv2_block(b, "NCHW")


def torch_block(b):
    """As TVM's PyTorch front end writes a quantized MobileNetV2: uint8 activations, every
    requantize to int32 followed by a clip to the 8-bit range (relu: from the zero point)
    and a cast to uint8. Expand 1x1 16 -> 48 on 8 x 8 pixels, depthwise 3x3 stride 1 and
    stride 2 (explicit zero-point pads), project 1x1 48 -> 16 on 4 x 4 pixels."""
    c, e, hw = 16, 48, 8
    zx, sx = 7, 0.04
    x = b.input("x", b.ints((1, c, hw, hw), "uint8"))

    def requant_clip_cast(t, si, so, zo, lo):
        t = b.requantize(t, si, 0, so, zo, axis=1, out_dtype="int32")
        t = b.clip(t, lo, 255)
        return b.cast(t, "uint8")

    ws1 = f32(b.rng.uniform(0.001, 0.01, e))
    t = b.conv2d(x, weights(b, (e, c, 1, 1), "int8", -127, 127), zx, 0, sx, ws1)
    t = b.bias_add(t, b.ints((e,), "int32", -1000, 1000))
    t = requant_clip_cast(t, np.float32(sx) * ws1, 0.05, 3, 3)
    for stride, ws, so, zo in ((1, 0.02, 0.06, 5), (2, 0.03, 0.07, 0)):
        wsv = f32(b.rng.uniform(0.5 * ws, ws, e))
        t = b.pad(t, [(0, 0), (0, 0), (1, 1), (1, 1)], 3 if stride == 1 else 5)
        t = b.conv2d(t, weights(b, (e, 1, 3, 3), "int8", -127, 127), 3 if stride == 1 else 5,
                     0, 0.05 if stride == 1 else 0.06, wsv, strides=(stride, stride), groups=e)
        t = b.bias_add(t, b.ints((e,), "int32", -500, 500))
        t = requant_clip_cast(t, np.float32(0.05 if stride == 1 else 0.06) * wsv, so, zo, zo)
    ws3 = f32(b.rng.uniform(0.001, 0.01, c))
    t = b.conv2d(t, weights(b, (c, e, 1, 1), "int8", -127, 127), 0, 0, 0.07, ws3)
    t = b.bias_add(t, b.ints((c,), "int32", -1000, 1000))
    return requant_clip_cast(t, np.float32(0.07) * ws3, 0.15, 128, 0)


@case("models", "qnn_torch_block", "0.12.0 0.18.0",
      "quantized MobileNetV2 layers as TVM's PyTorch front end writes them: uint8, requantize "
      "to int32, clip, cast")
def _(b):
    return torch_block(b)


@case("models", "qnn_mbv2_block_nhwc", "0.9.0 0.18.0",
      "quantized MobileNetV2 inverted-residual block, NHWC/HWIO/HWOI as TFLite writes it")
def _(b):
    return mbv2_block(b, "NHWC")


# ---- operators ----

@case("ops", "rq_random", "0.8.0 0.18.0", "requantize int8 -> int8, random, UPWARD")
def _(b):
    x = b.input("x", b.ints((3, 5, 7), "int8"))
    return b.requantize(x, 0.0173, 4, 0.0491, -7)


@case("ops", "rq_tonearest", "0.7.0 0.16.0", "requantize int32 -> uint8, TONEAREST")
def _(b):
    x = b.input("x", b.ints((4, 50), "int32", -100000, 100000))
    return b.requantize(x, 0.00031, -17, 0.091, 121, rounding="TONEAREST", out_dtype="uint8")


@case("ops", "rq_halfway", "0.8.0 0.19.0",
      "requantize with scale ratios 1/2, 1/4, 3/2: exact halves, both signs, both roundings")
def _(b):
    x = b.input("x", np.arange(-128, 128, dtype=np.int8).reshape(16, 16))
    outs = []
    for ratio, r in ((0.5, "UPWARD"), (0.5, "TONEAREST"), (0.25, "UPWARD"),
                     (0.25, "TONEAREST"), (1.5, "UPWARD"), (1.5, "TONEAREST")):
        outs.append(b.requantize(x, 0.1 * ratio, 0, 0.1, 0, rounding=r, out_dtype="int32"))
    return outs


@case("ops", "rq_most_negative", "0.8.0 0.18.0",
      "requantize of the most negative inputs: int8 -128 with zero point 127, int32 INT32_MIN "
      "with zero points 0 and 1 (the int32 difference wraps, as in TVM)")
def _(b):
    x8 = b.input("x8", np.array([-128, -127, 127, 0, -128], np.int8))
    x32 = b.input("x32", np.array([-2**31, -2**31 + 1, 2**31 - 1, -1, 0], np.int32))
    return [b.requantize(x8, 0.5, 127, 0.25, 0, out_dtype="int32"),
            b.requantize(x8, 0.5, 127, 0.25, 0, out_dtype="int8"),
            b.requantize(x32, 0.001, 0, 0.0007, 0, out_dtype="int32"),
            b.requantize(x32, 0.001, 1, 0.0007, 0, out_dtype="int32", rounding="TONEAREST"),
            b.requantize(x32, 1e-9, 0, 0.1, 3, out_dtype="int8")]


@case("ops", "rq_scale_above_1", "0.8.0 0.19.0",
      "requantize with scale ratios 3.7, 2^20 and 2^24 (left shifts; int32 results that "
      "wrap like TVM's)")
def _(b):
    x = b.input("x", b.ints((64,), "int8"))
    return [b.requantize(x, 3.7, 0, 1.0, 0, out_dtype="int32"),
            b.requantize(x, 3.7, -3, 1.0, 5, out_dtype="int8"),
            b.requantize(x, 2.0**20, 0, 1.0, 0, out_dtype="int32", rounding="TONEAREST"),
            b.requantize(x, 2.0**24, 11, 1.0, 0, out_dtype="int32"),
            b.requantize(x, 1.0, 0, 1.0, 0, out_dtype="uint8")]


@case("ops", "rq_per_channel_2p20", "0.8.0 0.18.0",
      "per-channel requantize (axis 1) of int32 accumulators, scales 2^20 apart")
def _(b):
    x = b.input("x", b.ints((2, 4, 3, 3), "int32", -2**24, 2**24))
    sc = f32([1e-3, 1e-3 * 2**20, 1e-3 * 2**-20, 0.37])
    return [b.requantize(x, sc, 0, 0.05, 3, axis=1),
            b.requantize(x, sc, [1, -2, 3, 0], 0.05, 3, axis=1, rounding="TONEAREST",
                         out_dtype="int32")]


@case("ops", "rq_per_channel_last_axis", "0.7.0 0.12.0",
      "per-channel requantize along the default axis -1, uint8 input")
def _(b):
    x = b.input("x", b.ints((5, 6), "uint8"))
    return b.requantize(x, f32([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), 128, 0.17, -1)


@case("ops", "rq_zero_point_limits", "0.8.0 0.18.0",
      "zero points at the type limits: int8 input -128 and 127, uint8 output 0 and 255, "
      "int8 output -128 and 127 (saturation both ways)")
def _(b):
    x = b.input("x", b.ints((40,), "int8"))
    return [b.requantize(x, 0.3, -128, 0.1, 255, out_dtype="uint8"),
            b.requantize(x, 0.3, 127, 0.1, 0, out_dtype="uint8"),
            b.requantize(x, 0.3, 127, 0.1, -128, out_dtype="int8"),
            b.requantize(x, 0.3, -128, 0.1, 127, out_dtype="int8")]


@case("ops", "rq_compute_float", "0.9.0 0.19.0",
      "requantize with compute_dtype float32 and float64, both roundings, halves included")
def _(b):
    x = b.input("x", np.concatenate([np.arange(-128, 128), [-1000001, 999999, 2**30]])
                .astype(np.int32))
    outs = []
    for cd in ("float32", "float64"):
        for r in ("UPWARD", "TONEAREST"):
            outs.append(b.requantize(x, 0.05, 3, 0.1, -2, rounding=r, compute=cd,
                                     out_dtype="int32"))
            outs.append(b.requantize(x, 0.0123, 0, 0.1, 7, rounding=r, compute=cd))
    return outs


@case("ops", "rq_compute_float_per_channel", "0.18.0",
      "per-channel requantize with compute_dtype float32")
def _(b):
    x = b.input("x", b.ints((2, 3, 5), "int32", -5000, 5000))
    return b.requantize(x, f32([0.01, 0.5, 3.0]), [0, 5, -5], 0.2, 1, axis=1,
                        compute="float32", rounding="TONEAREST")


@case("ops", "quantize", "0.8.0 0.18.0",
      "quantize: random values, exact halves (x / scale = k + 1/2), saturation, inf, NaN")
def _(b):
    halves = (np.arange(-20, 20) + 0.5).astype(np.float32) * np.float32(0.25)
    special = f32([1e10, -1e10, np.inf, -np.inf, np.nan, 0.0, -0.0])
    x = b.input("x", np.concatenate([b.rng.uniform(-40, 40, 40).astype(np.float32),
                                     halves, special]))
    return [b.quantize(x, 0.25, 0, out_dtype="int8"),
            b.quantize(x, 0.25, 128, out_dtype="uint8"),
            b.quantize(x, 0.3, -128, out_dtype="int8"),
            b.quantize(x, 0.001, 5, out_dtype="int32")]


@case("ops", "quantize_per_channel", "0.9.0 0.19.0", "per-channel quantize along axis 1")
def _(b):
    x = b.input("x", b.rng.uniform(-3, 3, (2, 3, 4)).astype(np.float32))
    return b.quantize(x, f32([0.01, 0.02, 0.05]), i32([0, 10, -10]), axis=1)


@case("ops", "dequantize", "0.8.0 0.16.0",
      "dequantize int8, uint8 and int32 (INT32_MIN with zero point 1 wraps), per-channel")
def _(b):
    x8 = b.input("x8", b.ints((3, 4), "int8"))
    xu = b.input("xu", b.ints((3, 4), "uint8"))
    x32 = b.input("x32", np.array([-2**31, 2**31 - 1, 0, 12345], np.int32))
    return [b.dequantize(x8, 0.0173, -128),
            b.dequantize(xu, f32([0.1, 0.2, 0.3]), i32([0, 128, 255]), axis=0),
            b.dequantize(x32, 1e-4, 1)]


def conv_case(b, dt, wdt, zx, zw, **kw):
    x = b.input("x", b.ints((1, 4, 7, 6), dt))
    w = weights(b, (6, 4 // kw.get("groups", 1), 3, 3), wdt)
    return b.conv2d(x, w, zx, zw, 0.1, 0.05, **kw)


@case("ops", "conv_s8s8", "0.8.0 0.18.0", "qnn.conv2d int8 x int8, padding 1, int32 out")
def _(b):
    return conv_case(b, "int8", "int8", 3, -2, padding=(1, 1))


@case("ops", "conv_u8s8_strided", "0.7.0 0.19.0",
      "qnn.conv2d uint8 data x int8 weights, strides 2, asymmetric padding, dilation 2")
def _(b):
    return conv_case(b, "uint8", "int8", 128, 0, strides=(2, 2), padding=(1, 2, 0, 1),
                     dilation=(2, 1))


@case("ops", "conv_u8u8_limits", "0.8.0 0.12.0",
      "qnn.conv2d uint8 x uint8 with zero points 255 and 0, and int8 x uint8 with -128 and "
      "255 (the type limits), padding 2")
def _(b):
    x = b.input("x", b.ints((1, 2, 5, 5), "uint8"))
    y = b.input("y", b.ints((1, 2, 5, 5), "int8"))
    wu = weights(b, (3, 2, 3, 3), "uint8")
    return [b.conv2d(x, wu, 255, 0, 0.1, 0.1, padding=(2, 2)),
            b.conv2d(y, wu, -128, 255, 0.1, 0.1, padding=(2, 2))]


@case("ops", "conv_groups", "0.9.0 0.18.0",
      "qnn.conv2d with groups 2 and depthwise (groups = channels), bias and per-channel "
      "requantize fused")
def _(b):
    x = b.input("x", b.ints((2, 4, 6, 6), "int8"))
    g2 = b.conv2d(x, weights(b, (6, 2, 3, 3), "int8"), 1, 0, 0.1, 0.05, padding=(1, 1),
                  groups=2)
    dw = b.conv2d(x, weights(b, (4, 1, 3, 3), "int8"), 1, 0, 0.1,
                  f32([0.01, 0.02, 0.03, 0.04]), padding=(1, 1), groups=4)
    dw = b.bias_add(dw, [100, -100, 5000, -5000])
    dw = b.requantize(dw, f32([0.001, 0.002, 0.003, 0.004]), 0, 0.02, -3, axis=1)
    return [g2, dw]


@case("ops", "conv_pad_folded", "0.8.0 0.18.0",
      "nn.pad by the input zero point before a depthwise and a 3x3 qnn.conv2d (folded into "
      "their padding, asymmetric, on top of their own), and pads that are not (value 0 "
      "against zero point 5; padding the channels too)")
def _(b):
    x = b.input("x", b.ints((1, 4, 7, 6), "uint8"))
    p = b.pad(x, [(0, 0), (0, 0), (1, 2), (2, 1)], 63)
    dw = b.conv2d(p, weights(b, (4, 1, 3, 3), "int8"), 63, 0, 0.1,
                  f32([0.01, 0.02, 0.03, 0.04]), padding=(0, 1, 1, 0), groups=4)
    dw = b.bias_add(dw, [100, -100, 5000, -5000])
    dw = b.requantize(dw, f32([0.001, 0.002, 0.003, 0.004]), 0, 0.02, -3, axis=1,
                      out_dtype="uint8")
    y = b.input("y", b.ints((1, 3, 5, 8), "int8"))
    py = b.pad(y, [(0, 0), (0, 0), (2, 0), (0, 3)], -7)
    c3 = b.conv2d(py, weights(b, (5, 3, 3, 3), "int8"), -7, 0, 0.1, 0.05, strides=(2, 1))
    n0 = b.conv2d(b.pad(y, [(0, 0), (0, 0), (1, 1), (1, 1)], 0), weights(b, (2, 3, 3, 3), "int8"),
                  5, 0, 0.1, 0.05)
    nc = b.conv2d(b.pad(y, [(0, 0), (1, 0), (1, 1), (1, 1)], -7), weights(b, (2, 4, 3, 3), "int8"),
                  -7, 0, 0.1, 0.05)
    return [dw, c3, n0, nc]


@case("ops", "conv_nhwc_fused", "0.8.0 0.19.0",
      "qnn.conv2d NHWC/HWIO (TFLite layout) + bias + requantize; NCHW + bias + requantize "
      "(fused: the int32 accumulator is never stored) with TONEAREST, uint8 out")
def _(b):
    x = b.input("x", b.ints((1, 5, 5, 3), "int8"))
    w = b.ints((3, 3, 3, 4), "int8")
    t = b.conv2d(x, b.const(w), -1, 0, 0.05, 0.02, padding=(1, 1), data_layout="NHWC",
                 kernel_layout="HWIO")
    t = b.bias_add(t, [7, -7, 70, -70], axis=3)
    t = b.requantize(t, 0.001, 0, 0.03, 2, axis=3)
    xn = b.input("xn", b.ints((1, 3, 5, 5), "uint8"))
    u = b.conv2d(xn, weights(b, (4, 3, 3, 3), "int8"), 128, 0, 0.05,
                 f32([0.01, 0.02, 0.04, 0.08]))
    u = b.bias_add(u, [1000, -1000, 0, 3])
    u = b.requantize(u, f32([0.0005, 0.001, 0.002, 0.004]), 0, 0.1, 128, axis=1,
                     rounding="TONEAREST", out_dtype="uint8")
    return [t, u]


@case("ops", "dense", "0.8.0 0.18.0",
      "qnn.dense int8 and uint8 x int8, 3-d data, bias + per-channel requantize (fused), "
      "and an int32 output")
def _(b):
    x = b.input("x", b.ints((2, 3, 10), "int8"))
    w = weights(b, (7, 10), "int8")
    raw = b.dense(x, w, -3, 2, 0.1, 0.1)
    xu = b.input("xu", b.ints((4, 10), "uint8"))
    t = b.dense(xu, w, 128, 0, 0.1, f32(np.linspace(0.01, 0.07, 7)))
    t = b.bias_add(t, b.ints((7,), "int32", -300, 300), axis=-1)
    t = b.requantize(t, f32(np.linspace(0.001, 0.007, 7)), 0, 0.05, 0, axis=1)
    return [raw, t]


@case("ops", "qadd_sub_mul", "0.8.0 0.18.0",
      "qnn.add / subtract / mul, int8, broadcasting, different scales and zero points, "
      "saturation, and equal parameters (no requantize)")
def _(b):
    x = b.input("x", b.ints((2, 3, 4), "int8"))
    y = b.input("y", b.ints((3, 1), "int8"))
    return [b.qbinary("qnn.add", x, y, 0.1, 3, 0.05, -4, 0.07, 1),
            b.qbinary("qnn.subtract", x, y, 0.1, 3, 0.05, -4, 0.07, 1),
            b.qbinary("qnn.mul", x, y, 0.1, 3, 0.05, -4, 0.07, 1),
            b.qbinary("qnn.add", x, x, 0.1, 3, 0.1, 3, 0.1, 3),
            b.qbinary("qnn.mul", x, y, 0.5, 0, 0.5, 0, 0.01, 0)]


@case("ops", "qadd_uint8", "0.7.0 0.19.0", "qnn.add and qnn.mul on uint8")
def _(b):
    x = b.input("x", b.ints((4, 5), "uint8"))
    y = b.input("y", b.ints((4, 5), "uint8"))
    return [b.qbinary("qnn.add", x, y, 0.02, 128, 0.03, 120, 0.04, 130),
            b.qbinary("qnn.mul", x, y, 0.02, 128, 0.03, 120, 0.04, 130)]


@case("ops", "qconcat", "0.8.0 0.18.0",
      "qnn.concatenate of three int8 tensors, two requantized to the output parameters")
def _(b):
    x = b.input("x", b.ints((1, 2, 3), "int8"))
    y = b.input("y", b.ints((1, 4, 3), "int8"))
    z = b.input("z", b.ints((1, 1, 3), "int8"))
    return b.qconcat([x, y, z], [0.1, 0.2, 0.05], [0, 5, 0], 0.1, 0, axis=1)


@case("ops", "int_pools", "0.8.0 0.18.0",
      "max_pool2d on int8 and uint8 (padding, ceil mode), avg_pool2d on int32 (negative sums: "
      "C division toward zero; count_include_pad both ways)")
def _(b):
    x = b.input("x", b.ints((1, 2, 7, 7), "int8"))
    u = b.input("u", b.ints((1, 2, 6, 6), "uint8"))
    x32 = b.cast(x, "int32")
    return [b.pool(x, "max", (3, 3), (2, 2), (1, 1), ceil_mode=True),
            b.pool(u, "max", (2, 2), (2, 2)),
            b.pool(x32, "avg", (3, 3), (2, 2), (1, 1), count_include_pad=True),
            b.pool(x32, "avg", (3, 3), (2, 2), (1, 1), count_include_pad=False)]


@case("ops", "int_data_movement", "0.7.0 0.8.0 0.18.0",
      "nn.pad with a zero-point pad value, clip, cast (wrapping), reshape, transpose and "
      "concatenate on int8 / uint8 / int32 tensors")
def _(b):
    x = b.input("x", b.ints((2, 3, 4), "int8"))
    y = b.input("y", b.ints((2, 3, 4), "int32", -1000, 1000))
    p = b.pad(x, [(0, 0), (1, 2), (2, 1)], -7)
    c = b.clip(x, -10.5, 20.7)
    t = b.transpose(b.reshape(x, (6, 4)), (1, 0))
    k = b.cast(y, "int8")
    u = b.cast(b.clip(y, 0, 255), "uint8")
    cc = b.concatenate([x, b.cast(y, "int8")], 1)
    return [p, c, t, k, u, cc]


@case("ops", "fixed_point_multiply", "0.8.0 0.18.0",
      "fixed_point_multiply on int32: right shifts, a left shift, a negative multiplier")
def _(b):
    x = b.input("x", np.concatenate([b.ints((20,), "int32", -10**6, 10**6),
                                     [-2**31, 2**31 - 1, -3, 3]]).astype(np.int32))
    return [b.fixed_point_multiply(x, 1518500250, -3),
            b.fixed_point_multiply(x, 1073741824, 1),
            b.fixed_point_multiply(x, 1717986918, 2),
            b.fixed_point_multiply(x, -1073741824, -1)]


@case("ops", "bias_add_int32", "0.8.0 0.18.0", "nn.bias_add on int32 (wrapping add)")
def _(b):
    x = b.input("x", b.ints((2, 3, 2), "int32"))
    return b.bias_add(x, [2**31 - 1, -2**31, 5], axis=1)


# ---------------------------------------------------------------------------
# Writing a case
# ---------------------------------------------------------------------------

def count_ops(root, v):
    counts, seen, stack = {}, set(), [root]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, rw.Call) and isinstance(e.op, str):
            name = rw.op_name(e.op, v)
            counts[name] = counts.get(name, 0) + 1
        stack.extend(rw._expr_children(e, rw.parse_version(v)))
    return dict(sorted(counts.items()))


def npy_bytes(a):
    import io
    bio = io.BytesIO()
    np.save(bio, a, allow_pickle=False)
    return bio.getvalue()


def write_case(out_dir, kind, name, fn, v, desc):
    seed = zlib.crc32(("%s/%s" % (kind, name)).encode()) & 0x7fffffff
    b = B(seed)
    res = fn(b)
    outs = res if isinstance(res, list) else [res]
    body = outs[0][0] if len(outs) == 1 else rw.Tuple([o[0] for o in outs])
    f = rw.Function(list(b.params), body)
    mod = rw.Module({"main": f})
    rw.infer_types(mod, v)
    text = rw.save_json(mod, version=v, typed=True)
    d = os.path.join(out_dir, "%s-%s" % (name, v))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "model.json"), "w") as fh:
        fh.write(text)
    for p in b.params:
        with open(os.path.join(d, "input_%s.npy" % p.name), "wb") as fh:
            fh.write(npy_bytes(b.inputs[p.name]))
    for k, (_, val) in enumerate(outs):
        with open(os.path.join(d, "expected_%d.npy" % k), "wb") as fh:
            fh.write(npy_bytes(np.ascontiguousarray(val)))
    ops = count_ops(f, v)
    meta = {
        "generator": "tests/qnn/gen_qnn.py (tests/relaywriter.py + tests/qnn/qnnwriter.py; "
                     "expected outputs from tests/qnn/qnn_ref.py, not TVM and not relayc)",
        "model": name,
        "description": desc,
        "seed": seed,
        "tvm_version": v,
        "root": "module",
        "byoc": False,
        "params_file": False,
        "typed": True,
        "function": "main",
        "inputs": [{"name": p.name, "shape": list(b.inputs[p.name].shape),
                    "dtype": str(b.inputs[p.name].dtype)} for p in b.params],
        "outputs": [{"shape": list(np.shape(val)), "dtype": str(np.asarray(val).dtype)}
                    for _, val in outs],
        "params": [],
        "ops": ops,
        "op_list": sorted(ops),
        "tolerance": {"rtol": 0.0, "atol": 0.0,
                      "note": "bit-exact: TVM's QNN integer arithmetic (tests/qnn/qnn_ref.py)"},
        "expected_from": "tests/qnn/qnn_ref.py (numpy %s)" % np.__version__,
    }
    with open(os.path.join(d, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")
    return d


def generate(kind, out_dir, only=None):
    made = []
    for name, fn, dialects, desc in CASES[kind]:
        if only and only not in name:
            continue
        for v in dialects:
            made.append(write_case(out_dir, kind, name, fn, v, desc))
    return made


def compare_dirs(a, b):
    """Differences between two case trees (meta's numpy version aside)."""
    diffs = []
    la, lb = sorted(os.listdir(a)), sorted(os.listdir(b))
    if la != lb:
        return ["case sets differ: %s vs %s" % (sorted(set(la) ^ set(lb))[:6], "")]
    for c in la:
        fa, fb = sorted(os.listdir(os.path.join(a, c))), sorted(os.listdir(os.path.join(b, c)))
        if fa != fb:
            diffs.append("%s: files differ" % c)
            continue
        for f in fa:
            pa, pb = os.path.join(a, c, f), os.path.join(b, c, f)
            if f == "meta.json":
                with open(pa) as h1, open(pb) as h2:
                    x, y = json.load(h1), json.load(h2)
                x.pop("expected_from", None), y.pop("expected_from", None)
                if x != y:
                    diffs.append("%s/%s differs" % (c, f))
            else:
                with open(pa, "rb") as h1, open(pb, "rb") as h2:
                    if h1.read() != h2.read():
                        diffs.append("%s/%s differs" % (c, f))
    return diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", choices=("models", "ops"), default="models")
    ap.add_argument("--out", default=None,
                    help="default: tests/golden for models; required for ops")
    ap.add_argument("--only", default=None)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="models: regenerate into a temporary directory and compare")
    a = ap.parse_args(argv)
    if a.list:
        for name, _fn, dialects, desc in CASES[a.set]:
            print("%-28s %-20s %s" % (name, " ".join(dialects), desc))
        return 0
    out = a.out or (os.path.join(TESTS, "golden") if a.set == "models" else None)
    if out is None:
        ap.error("--out DIR is needed for --set ops")
    if a.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(a.set, tmp, a.only)
            names = set(os.listdir(tmp))
            with tempfile.TemporaryDirectory() as cur:
                for n in names:
                    if os.path.isdir(os.path.join(out, n)):
                        shutil.copytree(os.path.join(out, n), os.path.join(cur, n))
                diffs = compare_dirs(cur, tmp)
        for d in diffs[:20]:
            print("DIFF " + d)
        print("%s QNN cases are %s" % (out, "out of date" if diffs else "up to date"))
        return 1 if diffs else 0
    os.makedirs(out, exist_ok=True)
    made = generate(a.set, out, a.only)
    print("%d cases written to %s" % (len(made), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
