#!/usr/bin/python3
"""qnn.quantize on the values where its rounding and clipping can go wrong, against numpy.

Usage: /usr/bin/python3 tests/qnn/test_quantize_edges.py PATH/TO/relayc [--keep DIR]

rq_quantize (runtime/kernels_int8.c) rounds t = x / scale half away from zero where
|t| <= 2^23 and passes larger values, infinities and NaN through whole, testing the range on
t's bits so that compilers vectorise the loop. This runs it on the values that decide that:
ties k + 1/2 and their float neighbours, +-0, subnormals, values around 2^22, 2^23 and 2^24
(where float spacing reaches 1/2, 1 and 2), 2^31 (the int32 clip), 2^47 and beyond, the
largest float, +-inf and NaN, plus random ones, per tensor and per channel, for int8, uint8
and int32 outputs (zero points at their limits too). Each model is run
through libtcc (the generic kernels, scalar) and through gcc -O3 -march=native and
gcc -O3 (the vectorised loops); every output must equal tests/qnn/qnn_ref.py's quantize,
which rounds in float64 with numpy, exactly. Output is TAP.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edges  # noqa: E402
import qnn_ref as q  # noqa: E402
import relaywriter as rw  # noqa: E402


def edge_values():
    f = np.float32
    v = [0.0, -0.0, 1e-45, -1e-45, 1.1754942e-38, 0.49999997, -0.49999997, 3.4028235e38,
         -3.4028235e38, np.inf, -np.inf, np.nan]
    for k in list(range(-6, 6)) + [126, 127, 128, 254, 255, 256, -127, -128, -129]:
        t = f(k) + f(0.5)
        v += [t, np.nextafter(t, f(np.inf)), np.nextafter(t, f(-np.inf)), f(k)]
    for e in (22, 23, 24, 31, 47, 48, 60):
        for d in (-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.0 ** (e - 23)):
            t = f(2.0 ** e + d)
            v += [t, -t, np.nextafter(t, f(np.inf)), np.nextafter(t, f(0))]
    return np.array(v, dtype=np.float32)


def cases(rng):
    """(name, x, scale, zp, axis, dtype): x of shape [1, C, N]."""
    e = edge_values()
    n = len(e)
    out = []
    for dt, zps in (("int8", (-3, 0, 5, 127)), ("uint8", (128, 0, 3, 255)),
                    ("int32", (0, -7, 1000, 2 ** 31 - 1))):
        # per tensor, scale 1: t is the value itself
        x = np.stack([e, rng.uniform(-300, 300, n).astype(np.float32)])[None]
        out.append(("%s per tensor, scale 1" % dt, x, np.float32(1.0), np.int32(zps[0]), -1, dt))
        # per channel: scales that make the division round, and the edge values scaled up
        # so that x / s lands on them
        sc = np.array([0.5, 3.0, 1.0 / 3.0, 0.0078125], dtype=np.float32)
        with np.errstate(over="ignore"):
            x = np.stack([(e.astype(np.float64) * s).astype(np.float32) for s in sc])[None]
        out.append(("%s per channel (axis 1), scales 1/2 3 1/3 2^-7" % dt, x, sc,
                    np.array(zps, dtype=np.int32), 1, dt))
    return out


def build(case):
    name, x, sc, zp, axis, dt = case
    xv = rw.Var("x", x.shape)
    return rw.Call("qnn.quantize", [xv, rw.Const(sc), rw.Const(zp)],
                   {"axis": axis, "out_dtype": dt}), xv


def want(case):
    name, x, sc, zp, axis, dt = case
    with np.errstate(invalid="ignore", over="ignore"):
        return q.quantize(x, sc, zp, axis, dt)


if __name__ == "__main__":
    sys.exit(edges.run(__doc__, "rc_quantize_", cases(np.random.default_rng(11)), build, want))
