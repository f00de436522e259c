#!/usr/bin/python3
"""Tests relayc's reference kernels (runtime/kernels.c) against torch/numpy.

Usage: /usr/bin/python3 tests/kernels/test_kernels.py PATH/TO/kernel_harness

The harness (tests/kernels/kernel_harness.c) runs each case on a canary-filled,
guarded output buffer; references are computed in float64. A value passes when
|got - want| <= 1e-5 + 1e-4*|want| (NaN and infinities must match exactly;
positions a kernel must not touch must keep the canary bits). Output is TAP;
the exit status is non-zero on any failure.

Also checks the section format of kernels.c and, with every C compiler found
(gcc, clang, tcc, arm-none-eabi-gcc), that each section compiles on its own.
"""
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS_C = os.path.normpath(os.path.join(HERE, "..", "..", "runtime", "kernels.c"))
PARAMS_H = os.path.normpath(os.path.join(HERE, "..", "..", "runtime", "params.h"))
CANARY = 0x7FC0DEAD
ATOL, RTOL = 1e-5, 1e-4

rng = np.random.default_rng(20240611)


class Case:
    def __init__(self, name, kernel, params, inputs, want, keep=None, atol=ATOL, rtol=RTOL,
                 check=None):
        self.name = name
        self.kernel = kernel
        self.params = [int(p) for p in params]
        self.inputs = [np.ascontiguousarray(a, dtype=np.float32).ravel() for a in inputs]
        self.want = np.asarray(want, dtype=np.float64).ravel()
        # keep: positions the kernel must leave untouched (canary bits)
        self.keep = np.zeros(self.want.size, bool) if keep is None else np.asarray(keep).ravel()
        self.atol, self.rtol = atol, rtol
        self.check = check  # optional extra problem found while building (reference self-check)

    def header(self):
        f = [self.kernel, str(len(self.params))] + [str(p) for p in self.params]
        f += [str(len(self.inputs))] + [str(a.size) for a in self.inputs] + [str(self.want.size)]
        return (" ".join(f) + "\n").encode()


def rnd(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


# ---------------------------------------------------------------- conv2d

def conv_case(name, n, ci, hi, wi, co, kh, kw, s=(1, 1), d=(1, 1), pad=(0, 0, 0, 0), groups=1,
              bias=True):
    """pad = (top, left, bottom, right); bottom/right may be negative (crop)."""
    sh, sw = s
    dh, dw = d
    pt, pl, pb, pr = pad
    ho = (hi + pt + pb - dh * (kh - 1) - 1) // sh + 1
    wo = (wi + pl + pr - dw * (kw - 1) - 1) // sw + 1
    x = rnd(n, ci, hi, wi)
    w = rnd(co, ci // groups, kh, kw, scale=1.0 / np.sqrt(ci // groups * kh * kw))
    b = rnd(co) if bias else None
    xp = F.pad(f64(x), (pl, pr, pt, pb))
    want = F.conv2d(xp, f64(w), f64(b) if bias else None, stride=s, dilation=d, groups=groups)
    assert tuple(want.shape) == (n, co, ho, wo), (want.shape, (n, co, ho, wo))
    params = [n, ci, hi, wi, co, ho, wo, kh, kw, sh, sw, dh, dw, pt, pl, groups]
    return Case("conv2d " + name, "conv2d", params, [x, w] + ([b] if bias else []), want.numpy())


def conv_cases():
    c = []
    c.append(conv_case("basic 3->5 k3 p1", 1, 3, 7, 7, 5, 3, 3, pad=(1, 1, 1, 1)))
    c.append(conv_case("ci=co=1 width 1", 1, 1, 9, 1, 1, 3, 1, pad=(1, 0, 1, 0)))
    c.append(conv_case("width 1 kernel 1x1 n=2", 2, 3, 5, 1, 17, 1, 1, bias=False))
    c.append(conv_case("stride 2 odd sizes", 1, 3, 9, 7, 5, 3, 3, s=(2, 2), pad=(1, 1, 1, 1)))
    c.append(conv_case("stride 3 > kernel 2", 1, 5, 11, 11, 3, 2, 2, s=(3, 3)))
    c.append(conv_case("stride (1,3) > kernel 1", 1, 3, 7, 10, 3, 1, 1, s=(1, 3)))
    c.append(conv_case("dilation 2", 1, 3, 9, 9, 5, 3, 3, d=(2, 2), pad=(2, 2, 2, 2)))
    c.append(conv_case("dilation (2,1) stride (1,2) asym", 3, 5, 8, 7, 3, 3, 2, s=(1, 2), d=(2, 1),
                       pad=(3, 0, 1, 2)))
    c.append(conv_case("groups 2", 1, 4, 7, 7, 6, 3, 3, pad=(1, 1, 1, 1), groups=2))
    c.append(conv_case("groups 2 stride 2 no bias", 2, 6, 9, 5, 10, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=2, bias=False))
    c.append(conv_case("depthwise 5 k3 s2", 1, 5, 7, 7, 5, 3, 3, s=(2, 2), pad=(1, 1, 1, 1), groups=5))
    c.append(conv_case("depthwise 17 k5 d2", 2, 17, 7, 7, 17, 5, 5, d=(2, 2), pad=(4, 4, 4, 4),
                       groups=17))
    c.append(conv_case("depthwise multiplier 2", 1, 3, 6, 5, 6, 3, 3, pad=(1, 1, 1, 1), groups=3))
    c.append(conv_case("asymmetric pad (0,1,2,0) s2", 1, 3, 8, 8, 5, 3, 3, s=(2, 2), pad=(0, 1, 2, 0)))
    c.append(conv_case("asymmetric pad (2,0,0,3)", 1, 1, 5, 6, 3, 3, 2, pad=(2, 0, 0, 3)))
    c.append(conv_case("kernel larger than input", 1, 3, 2, 3, 5, 5, 5, pad=(2, 2, 2, 2)))
    c.append(conv_case("cropped bottom/right", 1, 3, 8, 8, 3, 3, 3, pad=(1, 1, -2, -3)))
    c.append(conv_case("windows entirely in padding", 1, 3, 3, 3, 5, 3, 3, pad=(4, 4, 4, 4)))
    c.append(conv_case("1x1 17->3 n=2", 2, 17, 5, 7, 3, 1, 1, bias=False))
    c.append(conv_case("1x1 stride 2 odd", 1, 5, 7, 7, 5, 1, 1, s=(2, 2)))
    # random configurations
    for i in range(20):
        groups = int(rng.choice([1, 1, 2, 3]))
        cig = int(rng.choice([1, 2, 3, 5]))
        cog = int(rng.choice([1, 2, 3]))
        dw_ = i % 5 == 0
        if dw_:
            groups, cig, cog = int(rng.choice([3, 5, 17])), 1, 1
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        dh, dw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        hi, wi = int(rng.integers(1, 12)), int(rng.integers(1, 12))
        pad = [int(rng.integers(0, 4)) for _ in range(4)]
        # at least one output row/column
        while hi + pad[0] + pad[2] < dh * (kh - 1) + 1:
            pad[2] += 1
        while wi + pad[1] + pad[3] < dw * (kw - 1) + 1:
            pad[3] += 1
        n = int(rng.integers(1, 3))
        c.append(conv_case("random %d g%d k%dx%d s%d,%d d%d,%d in %dx%d pad %s" %
                           (i, groups, kh, kw, sh, sw, dh, dw, hi, wi, pad),
                           n, cig * groups, hi, wi, cog * groups, kh, kw, s=(sh, sw), d=(dh, dw),
                           pad=tuple(pad), groups=groups, bias=bool(i % 2)))
    return c


# ---------------------------------------------------------------- matmul

def matmul_case(name, batch, m, n, k, ta, tb, bcast_a=False, bcast_b=False, gap=0):
    ma = 1 if bcast_a else batch
    mb = 1 if bcast_b else batch
    sa = 0 if bcast_a else m * k + gap
    sb = 0 if bcast_b else k * n + gap
    abuf = rnd(max(ma * (m * k + gap), 1))
    bbuf = rnd(max(mb * (k * n + gap), 1))
    want = np.zeros((batch, m, n))
    for i in range(batch):
        A = abuf[i * sa: i * sa + m * k].astype(np.float64)
        B = bbuf[i * sb: i * sb + k * n].astype(np.float64)
        A = A.reshape(k, m).T if ta else A.reshape(m, k)
        B = B.reshape(n, k).T if tb else B.reshape(k, n)
        want[i] = A @ B
    return Case("matmul " + name, "matmul", [batch, m, n, k, ta, tb, sa, sb], [abuf, bbuf], want)


def matmul_cases():
    c = []
    for ta, tb in itertools.product((0, 1), (0, 1)):
        c.append(matmul_case("ta=%d tb=%d 7x5x3" % (ta, tb), 1, 7, 5, 3, ta, tb))
        c.append(matmul_case("ta=%d tb=%d batch 3 17x1x5" % (ta, tb), 3, 17, 1, 5, ta, tb))
        c.append(matmul_case("ta=%d tb=%d batch 2 1x7x17 gap" % (ta, tb), 2, 1, 7, 17, ta, tb, gap=3))
        c.append(matmul_case("ta=%d tb=%d batch 3 bcast A" % (ta, tb), 3, 5, 3, 7, ta, tb, bcast_a=True))
        c.append(matmul_case("ta=%d tb=%d batch 4 bcast B" % (ta, tb), 4, 3, 5, 7, ta, tb, bcast_b=True))
    c.append(matmul_case("dense 2 rows 17 -> 5", 1, 2, 5, 17, 0, 1))
    c.append(matmul_case("dense 1 row 300 -> 10", 1, 1, 10, 300, 0, 1))
    c.append(matmul_case("1x1x1", 1, 1, 1, 1, 0, 0))
    c.append(matmul_case("k=0 gives zeros tb=0", 2, 3, 4, 0, 0, 0))
    c.append(matmul_case("k=0 gives zeros tb=1", 2, 3, 4, 0, 1, 1))
    c.append(matmul_case("both broadcast", 3, 4, 5, 6, 0, 0, bcast_a=True, bcast_b=True))
    return c


# ---------------------------------------------------------------- pool2d

def pool_out(i, k, s, d, p0, p1, ceil):
    o = (i + p0 + p1 - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= i + p0:
        o -= 1
    return o


def pool_ref(x, ho, wo, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, is_max, cip):
    """float64 reference implementing the documented rules."""
    n, c, hi, wi = x.shape
    x = x.astype(np.float64)
    y = np.zeros((n, c, ho, wo))
    for oy in range(ho):
        for ox in range(wo):
            rows = [oy * sh - pt + a * dh for a in range(kh)]
            cols = [ox * sw - pl + b * dw for b in range(kw)]
            rin = [r for r in rows if 0 <= r < hi]
            cin = [q for q in cols if 0 <= q < wi]
            if is_max:
                if rin and cin:
                    y[:, :, oy, ox] = x[:, :, rin][:, :, :, cin].max(axis=(2, 3))
                else:
                    y[:, :, oy, ox] = -np.inf
            else:
                s = x[:, :, rin][:, :, :, cin].sum(axis=(2, 3)) if rin and cin else 0.0
                if cip:
                    cnt = (sum(1 for r in rows if -pt <= r < hi + pb) *
                           sum(1 for q in cols if -pl <= q < wi + pr))
                else:
                    cnt = len(rin) * len(cin)
                y[:, :, oy, ox] = s / cnt if cnt else 0.0
    return y


def pool_case(name, n, c, hi, wi, kh, kw, s, d=(1, 1), pad=(0, 0, 0, 0), is_max=1, cip=1,
              ceil=False, hw_out=None, x=None):
    """pad = (top, left, bottom, right)."""
    sh, sw = s
    dh, dw = d
    pt, pl, pb, pr = pad
    if x is None:
        x = rnd(n, c, hi, wi)
    ho = pool_out(hi, kh, sh, dh, pt, pb, ceil)
    wo = pool_out(wi, kw, sw, dw, pl, pr, ceil)
    if hw_out:
        ho, wo = hw_out
    want = pool_ref(x, ho, wo, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, is_max, cip)
    check = None
    # where torch can express the case, the reference must agree with torch
    sym = pt == pb and pl == pr and 2 * pt <= kh and 2 * pl <= kw
    if sym and hw_out is None and (is_max or (dh == 1 and dw == 1)):
        if is_max:
            t = F.max_pool2d(f64(x), (kh, kw), (sh, sw), (pt, pl), (dh, dw), ceil_mode=ceil)
        else:
            t = F.avg_pool2d(f64(x), (kh, kw), (sh, sw), (pt, pl), ceil_mode=ceil,
                             count_include_pad=bool(cip))
        t = t.numpy()
        if t.shape != want.shape:
            check = "torch output shape %s, reference %s" % (t.shape, want.shape)
        elif not np.allclose(t, want, rtol=1e-12, atol=1e-12, equal_nan=True):
            check = "reference disagrees with torch by %g" % np.nanmax(np.abs(t - want))
        name += " [torch]"
    params = [n, c, hi, wi, ho, wo, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, is_max, cip]
    kind = "max" if is_max else "avg cip=%d" % cip
    return Case("pool2d %s %s" % (kind, name), "pool2d", params, [x], want, check=check)


def pool_cases():
    c = []
    for is_max, cip in ((1, 0), (0, 1), (0, 0)):
        def add(*a, **k):
            c.append(pool_case(*a, is_max=is_max, cip=cip, **k))
        add("k2 s2 even", 1, 3, 8, 8, 2, 2, (2, 2))
        add("k3 s2 p1 odd", 2, 5, 7, 9, 3, 3, (2, 2), pad=(1, 1, 1, 1))
        add("k3 s2 p1 ceil", 1, 3, 8, 8, 3, 3, (2, 2), pad=(1, 1, 1, 1), ceil=True)
        add("k3 s2 p0 ceil odd", 1, 1, 7, 6, 3, 3, (2, 2), ceil=True)
        add("k2 s3 ceil (stride > kernel)", 1, 3, 8, 7, 2, 2, (3, 3), ceil=True)
        add("k2 s3 p1 ceil", 1, 3, 10, 5, 2, 2, (3, 3), pad=(1, 1, 1, 1), ceil=True)
        add("k1 s3 ceil", 1, 3, 5, 5, 1, 1, (3, 3), ceil=True)
        add("k3 s1 p1 width 1", 1, 17, 6, 1, 3, 3, (1, 1), pad=(1, 1, 1, 1))
        add("k3x1 width 1", 1, 3, 7, 1, 3, 1, (2, 1), pad=(1, 0, 1, 0), ceil=True)
        add("k5 s3 p2 ceil", 1, 5, 11, 13, 5, 5, (3, 3), pad=(2, 2, 2, 2), ceil=True)
        add("dilation 2 k3 p1", 1, 3, 9, 9, 3, 3, (1, 1), d=(2, 2), pad=(1, 1, 1, 1))
        add("dilation 2 k3 s2 ceil", 1, 3, 10, 9, 3, 3, (2, 2), d=(2, 2), pad=(1, 1, 1, 1),
            ceil=True)
        add("dilation (1,3) k2 s(2,1)", 1, 3, 8, 9, 2, 2, (2, 1), d=(1, 3))
        add("asymmetric pad (0,1,1,0) s2", 1, 3, 7, 7, 3, 3, (2, 2), pad=(0, 1, 1, 0))
        add("asymmetric pad (2,0,0,2) ceil", 1, 3, 7, 8, 3, 3, (2, 2), pad=(2, 0, 0, 2), ceil=True)
        add("global 7x7", 2, 5, 7, 7, 7, 7, (1, 1))
        add("kernel > input with pad", 1, 3, 2, 3, 3, 3, (1, 1), pad=(1, 1, 1, 1))
        add("windows entirely in padding", 1, 3, 3, 3, 2, 2, (2, 2), pad=(4, 4, 4, 4))
        add("window past padded edge (explicit ho/wo)", 1, 3, 5, 5, 3, 3, (3, 3), pad=(1, 1, 1, 1),
            hw_out=(4, 3))
        for i in range(12):
            kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
            sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
            dh, dw = (1, 1) if i % 2 else (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
            pad = [int(rng.integers(0, k // 2 + 1)) for k in (kh, kw, kh, kw)]
            if i % 3 == 0:
                pad[2], pad[3] = pad[0], pad[1]
            hi = int(rng.integers(dh * (kh - 1) + 1, 13))
            wi = int(rng.integers(dw * (kw - 1) + 1, 13))
            add("random %d k%dx%d s%d,%d d%d,%d in %dx%d pad %s%s" %
                (i, kh, kw, sh, sw, dh, dw, hi, wi, pad, " ceil" if i % 4 < 2 else ""),
                int(rng.integers(1, 3)), int(rng.choice([1, 3, 5])), hi, wi, kh, kw, (sh, sw),
                d=(dh, dw), pad=tuple(pad), ceil=i % 4 < 2)
    # max with NaN and infinities
    x = rnd(1, 2, 4, 4)
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 2, 2] = -np.inf
    x[0, 1, 0, 0] = np.inf
    c.append(pool_case("nan/inf propagate", 1, 2, 4, 4, 2, 2, (2, 2), x=x))
    x = np.full((1, 1, 2, 2), -np.inf, np.float32)
    c.append(pool_case("all -inf input", 1, 1, 2, 2, 2, 2, (1, 1), pad=(1, 1, 1, 1), x=x))
    return c


# ---------------------------------------------------------------- adaptive_avg_pool2d

def adaptive_cases():
    c = []
    for (n, ch, hi, wi, ho, wo) in [(1, 3, 7, 7, 1, 1), (2, 5, 8, 8, 4, 4), (1, 3, 7, 5, 3, 2),
                                    (1, 17, 5, 7, 7, 5), (1, 1, 1, 1, 3, 3), (1, 3, 17, 1, 5, 1),
                                    (2, 3, 6, 9, 4, 6), (1, 5, 13, 11, 7, 3), (1, 3, 10, 10, 10, 10),
                                    (1, 2, 224, 7, 7, 7)]:
        x = rnd(n, ch, hi, wi)
        want = F.adaptive_avg_pool2d(f64(x), (ho, wo)).numpy()
        c.append(Case("adaptive_avg_pool2d %dx%d -> %dx%d c=%d" % (hi, wi, ho, wo, ch),
                      "adaptive_avg_pool2d", [n, ch, hi, wi, ho, wo], [x], want))
    return c


# ---------------------------------------------------------------- softmax

def softmax_cases():
    c = []
    shapes = [((3, 5, 1, 7), 1.0), ((2, 17, 4), 1.0), ((1, 1000), 1.0), ((4, 3, 2, 5), 40.0),
              ((7,), 1.0), ((1,), 1.0)]
    for shape, scale in shapes:
        x = rnd(*shape, scale=scale)
        for ax in range(len(shape)):
            outer = int(np.prod(shape[:ax]))
            inner = int(np.prod(shape[ax + 1:]))
            for log in (0, 1):
                fn = torch.log_softmax if log else torch.softmax
                want = fn(f64(x), dim=ax).numpy()
                c.append(Case("%s %s axis %d%s" % ("log_softmax" if log else "softmax", shape, ax,
                                                   " x%g" % scale if scale != 1 else ""),
                              "softmax", [outer, shape[ax], inner, log], [x], want))
    x = rnd(3, 4)
    x[1, 2] = np.nan
    x[2, :] = -1e30
    want = torch.softmax(f64(x), dim=1).numpy()
    c.append(Case("softmax nan row, huge negative row", "softmax", [3, 4, 1, 0], [x], want))
    return c


# ---------------------------------------------------------------- reduce

KINDS = ["sum", "mean", "max", "min"]


def reduce_want(x, axes, kind):
    x = x.astype(np.float64)
    axes = tuple(axes)
    if kind == 0:
        return np.sum(x, axis=axes)
    if kind == 1:
        with np.errstate(invalid="ignore", divide="ignore"):
            if x.size == 0 or any(x.shape[a] == 0 for a in axes):
                return np.full([s for i, s in enumerate(x.shape) if i not in axes], np.nan)
            return np.mean(x, axis=axes)
    red = [s for i, s in enumerate(x.shape) if i in axes]
    if 0 in red:
        return np.full([s for i, s in enumerate(x.shape) if i not in axes],
                       -np.inf if kind == 2 else np.inf)
    return np.max(x, axis=axes) if kind == 2 else np.min(x, axis=axes)


def reduce_case(name, x, axes, kind, **kw):
    rank = x.ndim
    red = [1 if d in axes else 0 for d in range(rank)]
    want = reduce_want(x, axes, kind)
    return Case("reduce %s %s axes %s%s" % (KINDS[kind], list(x.shape), list(axes), name),
                "reduce", [rank] + list(x.shape) + red + [kind], [x], want, **kw)


def reduce_cases():
    c = []
    for shape in [(3, 4, 5, 2), (2, 1, 5, 1)]:
        x = rnd(*shape)
        for r in range(5):
            for axes in itertools.combinations(range(4), r):
                for kind in range(4):
                    c.append(reduce_case("", x, axes, kind))
    c.append(reduce_case("", rnd(17), (0,), 1))
    c.append(reduce_case("", rnd(5, 7), (1,), 0))
    c.append(reduce_case(" (scalar)", np.array(2.5, np.float32), (), 0))
    for kind in range(4):
        c.append(reduce_case(" (empty)", np.zeros((3, 0, 2), np.float32), (1,), kind))
    x = rnd(3, 4)
    x[1, 2] = np.nan
    x[2, 0] = -np.inf
    for kind in range(4):
        c.append(reduce_case(" (nan/inf)", x, (1,), kind))
        c.append(reduce_case(" (nan/inf)", x, (0,), kind))
    # accuracy: 1e5 terms of one sign, relative 1e-5 against float64
    big = (rng.standard_normal(100000) + 3).astype(np.float32)
    c.append(reduce_case(" (1e5 terms, rel 1e-5)", big, (0,), 0, atol=0, rtol=1e-5))
    c.append(reduce_case(" (1e5 terms, rel 1e-5)", big, (0,), 1, atol=0, rtol=1e-5))
    big2 = (rng.random((400, 250)) + 0.5).astype(np.float32)
    c.append(reduce_case(" (1e5 terms, rel 1e-5)", big2, (0, 1), 0, atol=0, rtol=1e-5))
    c.append(reduce_case(" (400 terms each, rel 1e-5)", big2, (0,), 1, atol=0, rtol=1e-5))
    return c


# ---------------------------------------------------------------- copy

def canary_f32(n):
    return np.full(n, CANARY, np.uint32).view(np.float32)


def view_geom(base, v):
    """Element strides and offset of numpy view v into contiguous float32 base."""
    off = v.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    assert off % 4 == 0 and all(s % 4 == 0 for s in v.strides)
    return [s // 4 for s in v.strides], off // 4


def copy_case(name, base, view, yshape=None, window=None):
    """Copies view (of base) into y: all of y, or y[window] (a tuple of slices)."""
    xs, xoff = view_geom(base, view)
    if yshape is None:
        yshape = view.shape
    yfull = np.zeros(yshape, np.float32)
    ywin = yfull[window] if window is not None else yfull
    ys, yoff = view_geom(yfull, ywin)
    assert ywin.shape == view.shape
    want = canary_f32(yfull.size).astype(np.float64).reshape(yshape)
    keep = np.ones(yshape, bool)
    if window is not None:
        want[window] = view
        keep[window] = False
    else:
        want[...] = view
        keep[...] = False
    rank = view.ndim
    params = [rank] + list(view.shape) + xs + [xoff] + ys + [yoff]
    return Case("copy " + name, "copy", params, [base], want, keep=keep)


def copy_cases():
    c = []
    x = rnd(2, 3, 4, 5)
    c.append(copy_case("transpose (0,2,3,1)", x, x.transpose(0, 2, 3, 1)))
    c.append(copy_case("transpose (3,2,1,0)", x, x.transpose(3, 2, 1, 0)))
    c.append(copy_case("identity", x, x))
    x2 = rnd(7, 1)
    c.append(copy_case("transpose 7x1", x2, x2.T))
    x3 = rnd(5, 7, 3)
    c.append(copy_case("slice [4:0:-2, ::-1, 1:3]", x3, x3[4:0:-2, ::-1, 1:3]))
    c.append(copy_case("slice [::-1, 2:7:3, ::-2]", x3, x3[::-1, 2:7:3, ::-2]))
    c.append(copy_case("slice [1:2, 6:7, 2:3]", x3, x3[1:2, 6:7, 2:3]))
    c.append(copy_case("slice last axis reversed, size 1 last", x3, x3[:, ::-1, 1:2]))
    a, b = rnd(2, 3, 5), rnd(2, 4, 5)
    c.append(copy_case("concat part 1 of 2", a, a, yshape=(2, 7, 5), window=np.s_[:, 0:3, :]))
    c.append(copy_case("concat part 2 of 2", b, b, yshape=(2, 7, 5), window=np.s_[:, 3:7, :]))
    c.append(copy_case("concat last axis part 2", b, b, yshape=(2, 4, 9), window=np.s_[:, :, 4:9]))
    xs = rnd(2, 9, 5)
    c.append(copy_case("split middle", xs, xs[:, 3:7, :]))
    xp = rnd(4, 5)
    c.append(copy_case("pad interior", xp, xp, yshape=(7, 8), window=np.s_[1:5, 2:7]))
    xq = rnd(1, 3, 4, 4)
    c.append(copy_case("pad interior NCHW", xq, xq, yshape=(1, 3, 6, 7), window=np.s_[:, :, 1:5, 2:6]))
    x0 = rnd(6)
    c.append(copy_case("rank 0 (one element at offset 3)", x0, x0[3:4].reshape(())))
    c.append(copy_case("zero-size axis writes nothing", x0,
                       np.lib.stride_tricks.as_strided(x0, (3, 0), (4, 4))))
    xb = rnd(4)
    c.append(copy_case("broadcast stride 0", xb, np.broadcast_to(xb, (3, 4))))
    c.append(copy_case("broadcast stride 0 transposed", xb, np.broadcast_to(xb, (3, 4)).T))
    # runs shorter than 16 in a loop over the axis of the nearest elements: a stride-2
    # transposed conv's phases [ry][rx][c][my][mx] interleaved as [c][my][ry][mx][rx]; the
    # same with a negative stride and an offset
    xi = rnd(2, 2, 3, 5, 17)
    c.append(copy_case("phase interleave", xi, xi.transpose(2, 3, 0, 4, 1)))
    c.append(copy_case("phase interleave flipped", xi, xi[:, :, 1:, :, ::-1].transpose(2, 3, 0, 4, 1)))
    c.append(copy_case("short run into a window", xi, xi.transpose(2, 3, 0, 4, 1),
                       yshape=(4, 5, 2, 17, 3), window=np.s_[1:4, :, :, :, 0:2]))
    x8 = rnd(2, 1, 2, 1, 2, 1, 2, 3)
    c.append(copy_case("rank 8 transpose", x8, x8.transpose(7, 0, 6, 1, 5, 2, 4, 3)))
    c.append(copy_case("rank 8 flips", x8, x8[::-1, :, ::-1, :, :, :, ::-1, ::-2]))
    # random views: permutation, slices with random signs and steps
    for i in range(15):
        rank = int(rng.integers(1, 6))
        shape = tuple(int(rng.integers(1, 6)) for _ in range(rank))
        base = rnd(*shape)
        sl = []
        for s in shape:
            step = int(rng.choice([1, 2, 3, -1, -2]))
            lo, hi = sorted(int(v) for v in rng.integers(0, s + 1, 2))
            if hi == lo:
                hi = min(s, lo + 1)
                lo = hi - 1
            sl.append(slice(lo, hi, step) if step > 0 else slice(hi - 1, (lo - 1) if lo else None, step))
        v = base[tuple(sl)].transpose(rng.permutation(rank))
        c.append(copy_case("random %d %s -> %s" % (i, shape, v.shape), base, v))
    return c


# ---------------------------------------------------------------- fill

def fill_cases():
    c = []
    for count, value in [(0, 1.0), (1, -2.5), (1000, 3.25), (17, 0.0)]:
        c.append(Case("fill %d with %g" % (count, value), "fill", [count],
                      [np.array([value], np.float32)], np.full(count, value)))
    # count 0 into a 4-float buffer: nothing written
    c.append(Case("fill count 0 writes nothing", "fill", [0], [np.array([1.0], np.float32)],
                  canary_f32(4).astype(np.float64), keep=np.ones(4, bool)))
    return c


# ---------------------------------------------------------------- running

def run_harness(harness, cases):
    """Runs cases in one harness process; returns a list of (out array | error str)."""
    data = b"".join(cs.header() + b"".join(a.tobytes() for a in cs.inputs) for cs in cases)
    p = subprocess.run([harness], input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    out, res, pos = p.stdout, [], 0
    for cs in cases:
        nl = out.find(b"\n", pos)
        if nl < 0:
            tail = p.stderr.decode(errors="replace").strip().splitlines()
            res.append("harness died (status %d): %s" % (p.returncode, " | ".join(tail[:3])))
            continue
        line = out[pos:nl].decode(errors="replace")
        pos = nl + 1
        if line.startswith("err "):
            res.append("harness: " + line[4:])
        elif line.startswith("out "):
            n = int(line[4:])
            res.append(np.frombuffer(out[pos:pos + 4 * n], dtype=np.float32).copy())
            pos += 4 * n
        else:
            res.append("bad harness reply %r" % line)
    if p.returncode != 0 or p.stderr:
        # sanitizer reports: fail the last case run if all replied
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        if msg and res and not isinstance(res[-1], str):
            res[-1] = "harness stderr: " + " | ".join(msg[:3])
    return res


def compare(cs, got):
    if isinstance(got, str):
        return got
    if got.size != cs.want.size:
        return "got %d values, want %d" % (got.size, cs.want.size)
    bits = got.view(np.uint32)
    g = got.astype(np.float64)
    w = cs.want
    bad = []
    untouched = bits == CANARY
    # positions that must keep the canary
    for i in np.flatnonzero(cs.keep & ~untouched)[:1]:
        bad.append((np.inf, i, "overwrote canary"))
    for i in np.flatnonzero(~cs.keep & untouched)[:1]:
        bad.append((np.inf, i, "not written"))
    m = ~cs.keep
    wn, gn = np.isnan(w), np.isnan(g)
    for i in np.flatnonzero(m & (wn != gn))[:1]:
        bad.append((np.inf, i, "NaN mismatch"))
    winf = np.isinf(w)
    for i in np.flatnonzero(m & winf & (g != w))[:1]:
        bad.append((np.inf, i, "infinity mismatch"))
    fin = m & ~wn & ~winf & ~gn
    with np.errstate(invalid="ignore"):
        excess = np.where(fin, np.abs(g - w) - (cs.atol + cs.rtol * np.abs(w)), -np.inf)
        excess = np.where(fin & np.isinf(g), np.inf, excess)
    if fin.any() and excess.max() > 0:
        i = int(np.argmax(excess))
        bad.append((excess[i], i, "off by %.3g" % abs(g[i] - w[i])))
    if not bad:
        return None
    bad.sort(key=lambda t: -t[0])
    _, i, why = bad[0]
    return "worst index %d, got %r, want %r (%s)" % (i, float(g[i]), float(w[i]), why)


# ---------------------------------------------------------------- kernels.c format

MARK = re.compile(r"^/\*@ (rk_[A-Za-z0-9_]+)((?: uses(?: rk_[A-Za-z0-9_]+)+)?) \*/$")


def format_sections():
    """Returns (problems, prologue, {name: section text})."""
    text = open(KERNELS_C).read()
    lines = text.split("\n")
    problems = []
    if not text.startswith("/*"):
        problems.append("file does not start with a comment block")
    end = text.find("*/")
    head_end = next((i for i, l in enumerate(lines) if l.startswith("/*@ ")), len(lines))
    after = "\n".join(lines[:head_end])[end + 2:]
    incl = [l.strip() for l in after.split("\n") if l.strip()]
    if incl != ["#include <math.h>", "#include <stddef.h>", "#include <stdint.h>",
                '#include "params.h"']:
        problems.append("after the comment: %r, want the four includes only" % incl)
    sections, uses, cur = {}, {}, None
    for l in lines[head_end:]:
        if l.startswith("/*@ "):
            mm = MARK.match(l)
            if not mm:
                problems.append("bad marker line %r" % l)
                cur = None
                continue
            cur = mm.group(1)
            if cur in sections:
                problems.append("duplicate section " + cur)
            sections[cur] = []
            uses[cur] = mm.group(2).split()[1:]
        elif cur:
            sections[cur].append(l)
    names = set(sections)
    for name, body in sections.items():
        src = "\n".join(body)
        code = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
        fns = re.findall(r"^static\s+(?:void|RK_INLINE\s+float)\s+(\w+)\s*\(", code, flags=re.M)
        if fns != [name]:
            problems.append("%s: functions %s, want exactly static void %s (or static "
                            "RK_INLINE float %s)" % (name, fns, name, name))
        if re.search(r"^\s*static\b", code, flags=re.M) and code.count("static") != 1:
            problems.append("%s: more than one static definition" % name)
        for other in names - {name}:
            if re.search(r"\b%s\b" % other, code) and other not in uses[name]:
                problems.append("%s: uses %s, which its marker does not name" % (name, other))
        for other in uses[name]:
            if other not in names:
                problems.append("%s: its marker names %s, no section" % (name, other))
            elif uses.get(other):
                problems.append("%s: helper %s uses helpers itself" % (name, other))
        for word in ("restrict", "malloc", "free", "#include", "memcpy", "memset", "printf"):
            if re.search(r"(?<![\w#])%s\b" % re.escape(word), code):
                problems.append("%s: uses %s" % (name, word))
        if re.search(r"^\s*(const\s+)?(int|long|float|double|char|unsigned|size_t)\s+[\w\s,*]*\w\s*\[",
                     code, flags=re.M):
            problems.append("%s: declares an array" % name)
    prologue = "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include \"%s\"\n" % PARAMS_H
    text_of = {k: "\n".join(v) for k, v in sections.items()}
    # a section compiles alone with the helpers it names in front of it
    return problems, prologue, {k: "".join("/*@ %s */\n%s\n" % (h, text_of[h])
                                           for h in uses[k] if h in text_of) + v
                                for k, v in text_of.items()}


EXPECTED = ["rk_expf", "rk_lanes", "rk_taps", "rk_conv2d", "rk_matmul", "rk_pool2d", "rk_awin",
            "rk_adaptive_pool2d",
            "rk_softmax", "rk_reduce", "rk_copy", "rk_fill",
            "rk_resize2d", "rk_layer_norm"]


def compilers():
    strict = ["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]
    found = []
    for cc, flags in (("gcc", strict + ["-O2"]), ("clang", strict + ["-O2"]), ("tcc", []),
                      ("arm-none-eabi-gcc", strict + ["-Os"])):
        if shutil.which(cc):
            found.append((cc, flags))
    return found


def compile_section(tmp, prologue, name, body, ccs):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(prologue + "/*@ %s */\n" % name + body +
                "\nvoid use_%s(void);\nvoid use_%s(void) { (void)&%s; }\n" % (name, name, name))
    errs = []
    for cc, flags in ccs:
        p = subprocess.run([cc] + flags + ["-c", src, "-o", os.path.join(tmp, name + ".o")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0 or p.stdout.strip():
            errs.append("%s: %s" % (cc, p.stdout.decode(errors="replace").strip().splitlines()[:2]))
    return errs


def main():
    if len(sys.argv) != 2:
        print("usage: test_kernels.py PATH/TO/kernel_harness", file=sys.stderr)
        return 2
    harness = os.path.abspath(sys.argv[1])
    groups = [conv_cases(), matmul_cases(), pool_cases(), adaptive_cases(), softmax_cases(),
              reduce_cases(), copy_cases(), fill_cases()]
    problems, prologue, sections = format_sections()
    ccs = compilers()
    total = 1 + len(EXPECTED) + sum(len(g) for g in groups)
    print("1..%d" % total)
    k, failed = 0, 0

    def report(name, err):
        nonlocal k, failed
        k += 1
        if err:
            failed += 1
            print("not ok %d - %s: %s" % (k, name, err))
        else:
            print("ok %d - %s" % (k, name))

    missing = [n for n in EXPECTED if n not in sections]
    extra = [n for n in sections if n not in EXPECTED]
    fmt = problems + (["missing sections %s" % missing] if missing else []) + \
        (["unexpected sections %s" % extra] if extra else [])
    report("kernels.c format", "; ".join(fmt))
    with tempfile.TemporaryDirectory() as tmp:
        for name in EXPECTED:
            if name not in sections:
                report("section %s compiles alone" % name, "missing")
                continue
            errs = compile_section(tmp, prologue, name, sections[name], ccs)
            report("section %s compiles alone with %s" % (name, ",".join(c for c, _ in ccs)),
                   "; ".join(errs))
    for cases in groups:
        outs = run_harness(harness, cases)
        for cs, got in zip(cases, outs):
            err = cs.check or compare(cs, got)
            report(cs.name, err)
    sys.stdout.flush()
    if failed:
        print("# %d of %d failed" % (failed, total))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
