#!/usr/bin/python3
"""qnn.requantize (int64 fixed point) on the values where its arithmetic can go wrong, against
numpy.

Usage: /usr/bin/python3 tests/qnn/test_requantize_edges.py PATH/TO/relayc [--keep DIR]

rq_requantize (runtime/kernels_int8.c) does TVM's int64 fixed-point multiply with the
per-channel shift and rounding hoisted out of its loop and the arithmetic right shift
written on uint64, so that compilers vectorise it. This runs it on what decides that
arithmetic: every int8 and uint8 value, int32 values at the limits (INT32_MIN, INT32_MAX,
+-2^k +-1) and random ones; scale ratios whose shift is far left (2^20, 2^40, 2^62: no
result), at rq_fpm's limits (t = 62 and 63: 2^-31 and 2^-32) and in between; ratios 1/2
and 3/2 (exact ties), equal scales; zero points at their limits (the subtraction wraps);
UPWARD and TONEAREST; int8, uint8 and int32 outputs; per tensor and per channel. Each
model is run through libtcc (scalar), gcc -O3 -march=native (64-bit vector multiplies)
and gcc -O3 (SSE2: no 64-bit vector multiply); every output must equal
tests/qnn/qnn_ref.py's requantize, which computes with Python integers, exactly. Output
is TAP.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edges  # noqa: E402
import qnn_ref as q  # noqa: E402
import relaywriter as rw  # noqa: E402

# input scales against an output scale of 1 (or of RATIO_OUT): their shifts s range from 63
# (no result) through 41, 21, 2, 1, 0, -1 down to -31 (t = 62) and -32 (t = 63, no result)
RATIOS = [2.0 ** 62, 2.0 ** 40, 2.0 ** 20 + 3.0, 3.7, 1.5, 1.0, 0.5, 0.0173 / 0.0491,
          2.0 ** -20 * 1.37, 2.0 ** -31 * 1.9, 2.0 ** -32 * 1.5, 2.0 ** -40]


def int32_values(rng):
    v = [0, 1, -1, 2, -2, 2 ** 31 - 1, -2 ** 31, -2 ** 31 + 1, 2 ** 31 - 2]
    for k in range(1, 31):
        v += [2 ** k, -2 ** k, 2 ** k + 1, -2 ** k - 1, 2 ** k - 1, -2 ** k + 1]
    v += list(rng.integers(-2 ** 31, 2 ** 31, 200))
    return np.array(v, dtype=np.int32)


def cases(rng):
    """(name, x [1, C, N], iscale (scalar or [C]), izp, oscale, ozp, rounding, out dtype)."""
    out = []
    i8 = np.arange(-128, 128, dtype=np.int8)
    u8 = np.arange(0, 256, dtype=np.uint8)
    i32 = int32_values(rng)
    r = np.array(RATIOS, dtype=np.float32)
    nch = len(r)
    for xname, xs, izps in (("int8", i8, (0, -128, 127, 5)), ("uint8", u8, (0, 255, 128, 3)),
                            ("int32", i32, (0, -2 ** 31, 2 ** 31 - 1, -7))):
        for rounding in ("UPWARD", "TONEAREST"):
            for dt, ozp in (("int32", 0), ("int32", -2 ** 31 + 5), ("int8", -3),
                            ("uint8", 200)):
                # per channel: one ratio per channel, the channels' zero points cycling
                x = np.stack([xs] * nch)[None]
                izp = np.array([izps[c % len(izps)] for c in range(nch)], dtype=np.int32)
                out.append(("%s -> %s (zp %d), %s, per channel" % (xname, dt, ozp, rounding),
                            x, r, izp, np.float32(1.0), ozp, rounding, dt))
            # per tensor: equal scales (the multiply TVM skips), and a tie ratio
            for sc, oc in ((0.25, 0.25), (0.75, 0.5)):
                out.append(("%s -> int32, %s, per tensor, scales %g / %g" % (xname, rounding,
                                                                            sc, oc),
                            xs[None, None], np.float32(sc), np.int32(izps[3]),
                            np.float32(oc), 0, rounding, "int32"))
    return out


def build(case):
    name, x, isc, izp, osc, ozp, rounding, dt = case
    xv = rw.Var("x", x.shape, str(x.dtype))
    return rw.Call("qnn.requantize", [xv, rw.Const(isc), rw.Const(izp), rw.Const(osc),
                                      rw.Const(np.int32(ozp))],
                   {"axis": 1, "rounding": rounding, "out_dtype": dt}), xv


def want(case):
    name, x, isc, izp, osc, ozp, rounding, dt = case
    return q.requantize(x, isc, izp, osc, ozp, 1, rounding, "int64", dt)


if __name__ == "__main__":
    sys.exit(edges.run(__doc__, "rc_requantize_", cases(np.random.default_rng(12)), build, want,
                       "%d"))
