#!/usr/bin/env python3
"""int8 dense layers compiled with --target cortex-m, run on emulated Cortex-M cores.

On a core with the DSP extension (QEMU mps2-an386, Cortex-M4F) the dense kernel takes
the __smlad path of emit/kernel_qconv.c (sums of 256 x w over runs of inputs that
pack_qnn.c bounds, then divided by 256); on one without it (mps2-an385, Cortex-M3) the
plain C loops. Each case is one qnn.dense (tests/qnn/gen_qnn.py's builder), with its
expected output from tests/qnn/qnn_ref.py (numpy), checked bit for bit on the target by
tests/cortex_m/run_qemu_test.sh (which also checks the model's objects). The cases:
inputs and weights at the int8 limits (-128 and 127, so every product is at its
largest, all of one sign where the sums must reach their bounds), a row whose sum |w| is
exactly the most one run may hold (65535: one run) and layers past it (several runs, the
last one shorter), counts of inputs and rows the
blocks do not divide (k % 4, n % 4), several rows of x, a weight zero point, the raw
int32 sum as output and requantized int8 / uint8 outputs.

    test_qemu_qdense.py --relayc build/relayc
"""
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "qnn"))
import fwtest  # noqa: E402
import gen_qnn  # noqa: E402
import relaywriter as rw  # noqa: E402


def limits(rng, shape):
    """int8 values at the limits only: -128 or 127."""
    return np.where(rng.randint(2, size=shape) == 1, 127, -128).astype(np.int8)


def layer(seed, lead, k, n, zx=-3, zw=0, out="int8", xs="random", ws="random", rounding="UPWARD"):
    """One qnn.dense [lead..., k] x [n, k] (+ bias_add, requantize to out; out None: the
    int32 sum is the output). Returns (relay function, inputs, expected)."""
    b = gen_qnn.B(seed)
    xshape = tuple(lead) + (k,)
    if xs in ("min", "max"):
        xv = np.full(xshape, -128 if xs == "min" else 127, np.int8)
    else:
        xv = limits(b.rng, xshape) if xs == "limits" else b.ints(xshape, "int8")
    if isinstance(ws, np.ndarray):
        wv = ws
    elif ws == "limits":
        wv = limits(b.rng, (n, k))
    elif ws == "neg":  # -128 or -127: sum |w| near 128 k, every product of one sign
        wv = (-127 - b.rng.randint(2, size=(n, k))).astype(np.int8)
    else:
        wv = b.ints((n, k), "int8")
    x = b.input("x", xv)
    sw = gen_qnn.f32(b.rng.uniform(0.002, 0.02, n))
    t = b.dense(x, b.const(wv), zx, zw, 0.05, sw)
    if out is not None:
        t = b.bias_add(t, b.ints((n,), "int32", -2000, 2000), axis=len(lead))
        iscale = np.float32(0.05) * sw
        real = np.abs(t[1].astype(np.float64) * iscale.astype(np.float64))
        oscale = np.float32(max(float(np.percentile(real, 99.5)), 1e-6) / 110.0)
        t = b.requantize(t, iscale, 0, oscale, 2 if out == "int8" else 120, axis=len(lead),
                         rounding=rounding, out_dtype=out)
    return rw.Function(list(b.params), t[0]), b.inputs["x"], np.ascontiguousarray(t[1])


def at_the_bound(k, n):
    """Weights whose row 0 has sum |w| = 65535 exactly, all negative (against inputs all
    -128 its sum of 256 x w is 2^31 - 2^15, against 127 -2^31 + 2^15 + 256 * 65535), the
    other rows at the limits with less."""
    assert 65535 <= 128 * k
    rng = np.random.RandomState(5)
    w = limits(rng, (n, k))
    w[1:, k // 2:] = 0
    row = np.zeros(k, np.int64)
    row[:65535 // 128] = -128
    row[65535 // 128] = -(65535 % 128)
    assert row.sum() == -65535
    w[0] = row.astype(np.int8)
    return w


# name, layer(...) arguments, runs: whether the kernel must cut the inputs into runs
CASES = [
    ("k37_n5_tonearest", dict(seed=1, lead=(1,), k=37, n=5, zx=-128, rounding="TONEAREST"), False),
    ("k400_n120", dict(seed=2, lead=(1,), k=400, n=120, zx=3), False),
    ("m3_k33_n19_zw5_uint8", dict(seed=3, lead=(3,), k=33, n=19, zw=5, out="uint8"), False),
    ("bound_k516_n7_x_min_sum", dict(seed=4, lead=(1,), k=516, n=7, zx=0, out=None, xs="min",
                                     ws=at_the_bound(516, 7)), False),
    ("bound_k516_n7_x_max_sum", dict(seed=5, lead=(1,), k=516, n=7, zx=0, out=None, xs="max",
                                     ws=at_the_bound(516, 7)), False),
    ("bound_k518_n5_x_limits_int8", dict(seed=8, lead=(1,), k=518, n=5, zx=-7, xs="limits",
                                         ws=at_the_bound(518, 5)), False),
    ("neg_k1030_n6_x_min_runs_sum", dict(seed=6, lead=(1,), k=1030, n=6, zx=0, out=None,
                                         xs="min", ws="neg"), True),
    ("neg_k1030_n5_x_max_runs_sum", dict(seed=9, lead=(2,), k=1030, n=5, zx=0, out=None,
                                         xs="max", ws="neg"), True),
    ("limits_k2052_n9_runs_int8", dict(seed=7, lead=(1,), k=2052, n=9, zx=-128, xs="limits",
                                       ws="limits"), True),
]


def main():
    ap = fwtest.parser(__doc__.split("\n\n")[0])
    a = ap.parse_args()
    tap = fwtest.Tap()
    fwtest.need_tools(tap, "arm-none-eabi-gcc", "arm-none-eabi-size", "arm-none-eabi-nm",
                      "arm-none-eabi-readelf", "arm-none-eabi-objdump", "qemu-system-arm", "make", "timeout")
    work = fwtest.tempdir("relayc-qemu-qdense.")
    runner = os.path.join(fwtest.CORTEX_M_TESTS, "run_qemu_test.sh")
    try:
        for name, kw, runs in CASES:
            d = os.path.join(work, name)
            os.makedirs(d)
            func, xv, want = layer(**kw)
            model = os.path.join(d, "model.json")
            mod = rw.Module({"main": func})
            rw.infer_types(mod, "0.18.0")
            with open(model, "w") as f:
                f.write(rw.save_json(mod, version="0.18.0", typed=True))
            np.save(os.path.join(d, "x.npy"), xv)
            np.save(os.path.join(d, "want.npy"), want)
            out = os.path.join(d, "gen")
            st, log = fwtest.run([a.relayc, "compile", model, "--target", "cortex-m", "--name",
                                  "qd", "--constants", "c", "-o", out])
            if not tap.ok(st == 0, "%s: relayc compile --target cortex-m" % name, log):
                continue
            with open(os.path.join(out, "qd.c")) as f:
                src = f.read()
            tap.ok("__smlad(" in src and ("for (kc = 0;" in src) == runs,
                   "%s: the kernel takes __smlad under the DSP extension, %s" %
                   (name, "in runs of inputs" if runs else "all inputs in one run"))
            for board in ("an386", "an385"):
                st, log = fwtest.run([runner, "--atol", "0", "--rtol", "0", "--timeout", "120",
                                      "--board", board, "--build-dir", os.path.join(d, board), out,
                                      "qd", "c", os.path.join(d, "x.npy"), "--",
                                      os.path.join(d, "want.npy")], timeout=300)
                tap.ok(st == 0, "%s: bit-exact on %s (%s; run_qemu_test.sh exit %d)" %
                       (name, board, "Cortex-M4F, __smlad" if board == "an386"
                        else "Cortex-M3, the plain loops", st), log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
