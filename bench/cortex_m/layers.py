#!/usr/bin/python3
"""Relayc's Cortex-M4 layers against CMSIS-NN, instruction by instruction.

    /usr/bin/python3 bench/cortex_m/layers.py [--build DIR] [--only SUBSTR] [--keep DIR]
                                              [--target generic]

For each layer of the table -- int8 (TFLite-style: per-channel symmetric weights,
NHWC, input zero point -3, int32 bias, qnn.requantize to int8 with output zero point 2
and TVM's UPWARD rounding) and float32 (NHWC, bias) -- this writes a one-layer Relay
model (tests/relaywriter.py, tests/qnn/gen_qnn.py's builder) with its expected output
(numpy: tests/qnn/qnn_ref.py's integer arithmetic for int8, float64 for float32), compiles
it with `relayc compile --target cortex-m` (or the --target given: `generic` is what
a user who leaves out the flag gets), builds it into the firmware harness of
examples/cortex-m (arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -mfloat-abi=hard
-mfpu=fpv4-sp-d16 -O2), runs it under QEMU mps2-an386 and takes the exact instruction
count of the model's run call (-icount shift=7, see examples/cortex-m/README.md). The
output must match bit for bit (int8) or within atol 1e-4 + rtol 1e-4 (float32).
CMSIS-NN's figures are constants: measured with CMSIS-NN 99f736a on the same machine
and flags (its source is not part of this project).
Exit status: 0 if every layer ran and matched, 1 otherwise.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "qnn"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import gen_qnn  # noqa: E402  (its builder B writes a layer and its expected value together)
import relaywriter as rw  # noqa: E402

VERSION = "0.18.0"
ZX, ZY = -3, 2
SX = 0.03

# name, kind, geometry, MACs, CMSIS-NN 99f736a instructions (int8, f32)
LAYERS = [
    ("conv 5x5 1->6 @28x28 pad 2 (LeNet conv1)", "conv", (28, 28, 1, 6, 5, 2, 1), 1321017, 3643227),
    ("conv 5x5 6->16 @14x14 (LeNet conv2)", "conv", (14, 14, 6, 16, 5, 0, 1), 637037, 1386241),
    ("conv 3x3 16->16 @28x28 pad 1", "conv", (28, 28, 16, 16, 3, 1, 1), 4206258, 9899134),
    ("depthwise 3x3 x32 @28x28 pad 1", "conv", (28, 28, 32, 32, 3, 1, 32), 1845483, 1957490),
    ("conv 1x1 32->64 @14x14", "conv", (14, 14, 32, 64, 1, 0, 1), 1087489, 2248347),
    ("dense 400->120", "dense", (400, 120), 96088, 242377),
    ("dense 784->128", "dense", (784, 128), 194654, 504289),
]


def macs(kind, g):
    if kind == "dense":
        return g[0] * g[1]
    h, w, ci, co, k, p, groups = g
    oh, ow = h + 2 * p - k + 1, w + 2 * p - k + 1
    return oh * ow * co * k * k * (ci // groups)


def out_scale(acc, iscale):
    """An output scale that spreads the requantized values over most of int8."""
    real = np.abs(acc.astype(np.float64) * iscale.astype(np.float64))
    return np.float32(max(float(np.percentile(real, 99.5)), 1e-6) / 110.0)


def int8_layer(b, kind, g):
    rng = b.rng
    if kind == "dense":
        k, n = g
        x = b.input("x", b.ints((1, k), "int8"))
        ws = gen_qnn.f32(rng.uniform(0.002, 0.02, n))
        w = b.const(b.ints((n, k), "int8", -127, 127))
        t = b.dense(x, w, ZX, 0, SX, ws)
        axis = 1
    else:
        h, wd, ci, co, k, p, groups = g
        x = b.input("x", b.ints((1, h, wd, ci), "int8"))
        ws = gen_qnn.f32(rng.uniform(0.002, 0.02, co))
        if groups == 1:
            kl, wshape = "HWIO", (k, k, ci, co)
        else:
            kl, wshape = "HWOI", (k, k, co, 1)
        w = b.const(b.ints(wshape, "int8", -127, 127))
        t = b.conv2d(x, w, ZX, 0, SX, ws, padding=(p, p), groups=groups,
                     data_layout="NHWC", kernel_layout=kl)
        axis = 3
    co = ws.shape[0]
    t = b.bias_add(t, b.ints((co,), "int32", -2000, 2000), axis=axis)
    iscale = np.float32(SX) * ws
    return b.requantize(t, iscale, 0, out_scale(t[1], iscale), ZY, axis=axis)


def f32_layer(b, kind, g):
    rng = b.rng
    if kind == "dense":
        k, n = g
        xv = rng.uniform(-1, 1, (1, k)).astype(np.float32)
        wv = rng.uniform(-0.1, 0.1, (n, k)).astype(np.float32)
        bv = rng.uniform(-0.5, 0.5, n).astype(np.float32)
        x = b.input("x", xv)
        e = rw.Call("nn.dense", [x[0], rw.Const(wv)], {"units": n, "out_dtype": ""})
        ref = xv.astype(np.float64) @ wv.astype(np.float64).T
        e = rw.Call("nn.bias_add", [e, rw.Const(bv)], {"axis": 1})
        return (e, (ref + bv).astype(np.float32))
    h, wd, ci, co, k, p, groups = g
    xv = rng.uniform(-1, 1, (1, h, wd, ci)).astype(np.float32)
    cig = ci // groups
    if groups == 1:
        kl, wv = "HWIO", rng.uniform(-0.2, 0.2, (k, k, ci, co)).astype(np.float32)
        w_oihw = np.transpose(wv, (3, 2, 0, 1))
    else:
        kl, wv = "HWOI", rng.uniform(-0.2, 0.2, (k, k, co, 1)).astype(np.float32)
        w_oihw = np.transpose(wv, (2, 3, 0, 1))
    bv = rng.uniform(-0.5, 0.5, co).astype(np.float32)
    x = b.input("x", xv)
    attrs = {"strides": [1, 1], "padding": [p, p], "dilation": [1, 1], "groups": groups,
             "data_layout": "NHWC", "kernel_layout": kl, "out_dtype": "",
             "kernel_size": [k, k], "channels": co, "out_layout": ""}
    e = rw.Call("nn.conv2d", [x[0], rw.Const(wv)], attrs)
    e = rw.Call("nn.bias_add", [e, rw.Const(bv)], {"axis": 3})
    xp = np.pad(xv.astype(np.float64), ((0, 0), (p, p), (p, p), (0, 0)))
    oh, ow = h + 2 * p - k + 1, wd + 2 * p - k + 1
    y = np.zeros((1, oh, ow, co))
    for o in range(co):
        gi = o // (co // groups)
        for dy in range(k):
            for dx in range(k):
                patch = xp[0, dy:dy + oh, dx:dx + ow, gi * cig:(gi + 1) * cig]
                y[0, :, :, o] += patch @ w_oihw[o, :, dy, dx].astype(np.float64)
    return (e, (y + bv).astype(np.float32))


def write_layer(d, name, dtype, kind, g, seed):
    b = gen_qnn.B(seed)
    e, want = (int8_layer if dtype == "int8" else f32_layer)(b, kind, g)
    mod = rw.Module({"main": rw.Function(list(b.params), e)})
    rw.infer_types(mod, VERSION)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.json"), "w") as fh:
        fh.write(rw.save_json(mod, version=VERSION, typed=True))
    np.save(os.path.join(d, "x.npy"), b.inputs["x"])
    np.save(os.path.join(d, "expected.npy"), np.ascontiguousarray(want))


def run(cmd, log):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    with open(log, "w") as fh:
        fh.write(" ".join(cmd) + "\n" + r.stdout)
    return r.returncode, r.stdout


def measure(relayc, d, dtype, target):
    os.makedirs(os.path.join(d, "gen"), exist_ok=True)
    rc, out = run([relayc, "compile", os.path.join(d, "model.json"), "--target", target,
                   "--name", "layer", "--constants", "c", "-o", os.path.join(d, "gen")],
                  os.path.join(d, "relayc.log"))
    if rc != 0:
        return None, "relayc failed: " + out.strip().splitlines()[-1]
    tol = "0" if dtype == "int8" else "1e-4"
    rc, out = run(["make", "--no-print-directory", "-f",
                   os.path.join(ROOT, "examples", "cortex-m", "Makefile"),
                   "MODEL_DIR=" + os.path.join(d, "gen"), "NAME=layer", "MODE=c",
                   "INPUTS=" + os.path.join(d, "x.npy"),
                   "EXPECTED=" + os.path.join(d, "expected.npy"),
                   "ATOL=" + tol, "RTOL=" + tol, "OPT=-O2", "BUILD=" + os.path.join(d, "fw"),
                   "run"], os.path.join(d, "run.log"))
    m = re.search(r"^instructions: (\d+) \(exact", out, flags=re.M)
    if rc != 0 or "RESULT: PASS" not in out or not m:
        bad = [ln for ln in out.splitlines() if "error:" in ln or "FAIL" in ln or "mismatch" in ln]
        return None, "run failed (exit %d): %s" % (rc, "; ".join(bad[:3]))
    return int(m.group(1)), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default=None, help="layers whose name contains this")
    ap.add_argument("--dtype", choices=["int8", "f32", "both"], default="both")
    ap.add_argument("--keep", default=None, help="keep the models, images and logs here")
    ap.add_argument("--target", default="cortex-m", help="relayc's --target (default cortex-m)")
    a = ap.parse_args()
    relayc = os.path.join(os.path.abspath(a.build), "relayc")
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="cortex-m-layers.")
    dtypes = ["int8", "f32"] if a.dtype == "both" else [a.dtype]
    failed = 0
    try:
        for dtype in dtypes:
            col = 3 if dtype == "int8" else 4
            print("\n%s: relayc --target %s vs CMSIS-NN (99f736a), instructions per call, "
                  "exact (QEMU mps2-an386, -icount shift=7)\n" % (dtype, a.target))
            print("| layer | MACs | relayc insns | insn/MAC | CMSIS-NN 99f736a insns | insn/MAC "
                  "| relayc / CMSIS-NN | output |")
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
            for i, layer in enumerate(LAYERS):
                name, kind, g = layer[0], layer[1], layer[2]
                if a.only and a.only not in name:
                    continue
                d = os.path.join(work, "%s-%d" % (dtype, i))
                write_layer(d, name, dtype, kind, g, 1000 + i)
                n, err = measure(relayc, d, dtype, a.target)
                mc, cm = macs(kind, g), layer[col]
                if n is None:
                    failed = 1
                    print("| %s | %d | - | - | %d | %.2f | - | %s |" % (name, mc, cm, cm / mc, err))
                else:
                    print("| %s | %d | %d | %.2f | %d | %.2f | %.2f | %s |"
                          % (name, mc, n, n / mc, cm, cm / mc, n / cm,
                             "bit-exact" if dtype == "int8" else "within 1e-4"))
                sys.stdout.flush()
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return failed


if __name__ == "__main__":
    sys.exit(main())
