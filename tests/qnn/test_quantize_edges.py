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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import qnn_ref as q  # noqa: E402
import qnnwriter  # noqa: E402,F401  (registers the QNN operators in relaywriter)
import relaywriter as rw  # noqa: E402

MODES = [("libtcc", []), ("gcc -O3 -march=native", ["--cc", "gcc -O3 -march=native"]),
         ("gcc -O3", ["--cc", "gcc -O3"])]


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


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    relayc = sys.argv[1]
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    tap = common.Tap()
    rng = np.random.default_rng(11)
    all_cases = cases(rng)
    tap.plan(len(all_cases) * len(MODES))
    with common.work_dir("rc_quantize_", keep) as work:
        for ci, (name, x, sc, zp, axis, dt) in enumerate(all_cases):
            d = os.path.join(work, "c%d" % ci)
            os.makedirs(d, exist_ok=True)
            xv = rw.Var("x", x.shape)
            y = rw.Call("qnn.quantize", [xv, rw.Const(sc), rw.Const(zp)],
                        {"axis": axis, "out_dtype": dt})
            model = os.path.join(d, "model.json")
            with open(model, "w") as fh:
                fh.write(rw.save_json(rw.Module({"main": rw.Function([xv], y)}), version="0.18.0"))
            np.save(os.path.join(d, "x.npy"), x)
            with np.errstate(invalid="ignore", over="ignore"):
                want = q.quantize(x, sc, zp, axis, dt)
            for mname, flags in MODES:
                od = os.path.join(d, mname.replace(" ", "_"))
                cmd = [relayc, "run", model, "--input", "x=" + os.path.join(d, "x.npy"), "-o", od,
                       "-q"] + flags
                r = common.run(cmd)
                if r[0]:
                    tap.result(False, "%s, %s: relayc run" % (name, mname), common.describe(cmd, r))
                    continue
                got = np.load(os.path.join(od, "output_0.npy"))
                bad = np.argwhere(got != want)
                diag = None
                if got.dtype != want.dtype or got.shape != want.shape:
                    diag = "got %s %s, expected %s %s" % (got.dtype, got.shape, want.dtype,
                                                          want.shape)
                elif len(bad):
                    lines = ["%d of %d outputs differ" % (len(bad), got.size)]
                    for i in bad[:8]:
                        i = tuple(i)
                        lines.append("at %s: x %r, got %d, expected %d" % (
                            i, float(x[i]), int(got[i]), int(want[i])))
                    diag = "\n".join(lines)
                tap.result(diag is None, "%s, %s: every output equals numpy's" % (name, mname),
                           diag)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
