#!/usr/bin/python3
"""qmodel.py: a whole quantized model, relayc against PyTorch's int8 inference.

The model is the tvm-0.18 fixture qnn_torch_mobilenet_v2 (TVM's import of torchvision's
quantized MobileNetV2, 64x64 input): relayc compiles it (--target x86-64-avx2 unless
--target says otherwise), gcc -O3 -march=native builds it with a small timing harness, and
its output must equal TVM's (expected_0.npy) exactly before it is timed. PyTorch runs the
same architecture, torchvision.models.quantization.mobilenet_v2 with random weights
(weights do not change the time), fused, calibrated on random data and converted to int8,
under each quantized engine this PyTorch has (onednn, qnnpack), one thread. Both are
timed on one core (taskset -c BENCH_CPU, default 0): medians and minimums of --samples
runs.

Usage: BENCH_CPU=1 /usr/bin/python3 bench/qmodel.py [RELAYC] [--samples N] [--target T]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "..", "shared", "fixtures", "tvm-0.18", "qnn_torch_mobilenet_v2")

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "q.h"

static q_workspace ws;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* argv: input (raw), output (raw, written), samples */
int main(int argc, char **argv)
{
    void *in = calloc(1, q_inputs[0].bytes), *out = calloc(1, q_outputs[0].bytes);
    const void *ins[1];
    void *outs[1];
    int n = argc > 3 ? atoi(argv[3]) : 50, k;
    double *t = calloc((size_t)n, sizeof(double));
    FILE *f = fopen(argv[1], "rb");
    if (!in || !out || !t || !f || fread(in, 1, q_inputs[0].bytes, f) != q_inputs[0].bytes)
        return 1;
    fclose(f);
    ins[0] = in, outs[0] = out;
    for (k = 0; k < 5; k++)
        if (q_run_generic(ins, outs, ws.bytes, NULL) != 0)
            return 1;
    for (k = 0; k < n; k++) {
        double t0 = now();
        q_run_generic(ins, outs, ws.bytes, NULL);
        t[k] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof(double), cmp);
    f = fopen(argv[2], "wb");
    if (!f || fwrite(out, 1, q_outputs[0].bytes, f) != q_outputs[0].bytes)
        return 1;
    fclose(f);
    printf("%.9f %.9f\n", t[n / 2], t[0]);
    return 0;
}
"""


def pin():
    cpu = os.environ.get("BENCH_CPU", "0")
    return ["taskset", "-c", cpu] if shutil.which("taskset") else []


def time_relayc(relayc, target, samples, work):
    src = os.path.join(work, "src")
    subprocess.run([relayc, "compile", os.path.join(FIXTURE, "model.json"), "--params",
                    os.path.join(FIXTURE, "model.params"), "--target", target, "--name", "q",
                    "-o", src], check=True, capture_output=True)
    with open(os.path.join(src, "harness.c"), "w") as f:
        f.write(HARNESS)
    exe = os.path.join(work, "qmodel")
    subprocess.run(["gcc", "-O3", "-march=native", "-o", exe, os.path.join(src, "harness.c"),
                    os.path.join(src, "q.c"), os.path.join(src, "q_constants.c")], check=True)
    x = np.load(os.path.join(FIXTURE, "input_input0.npy"))
    want = np.load(os.path.join(FIXTURE, "expected_0.npy"))
    xin, yout = os.path.join(work, "in.raw"), os.path.join(work, "out.raw")
    np.ascontiguousarray(x).tofile(xin)
    r = subprocess.run(pin() + [exe, xin, yout, str(samples)], check=True, capture_output=True,
                       text=True)
    got = np.fromfile(yout, dtype=want.dtype).reshape(want.shape)
    if not np.array_equal(got, want):
        sys.exit("qmodel: relayc's output differs from TVM's (max |diff| %g)"
                 % float(np.max(np.abs(got.astype(np.float64) - want))))
    med, best = (float(v) for v in r.stdout.split())
    return med, best, x.shape


def time_torch(shape, samples):
    """PyTorch in a child process pinned to the same core: (engine, median, min) each."""
    code = r"""
import sys, time, torch
from torchvision.models.quantization import mobilenet_v2
torch.set_num_threads(1)
torch.manual_seed(0)
shape, samples = tuple(int(v) for v in sys.argv[1].split(",")), int(sys.argv[2])
for eng in ("onednn", "qnnpack", "fbgemm"):
    if eng not in torch.backends.quantized.supported_engines:
        continue
    torch.backends.quantized.engine = eng
    m = mobilenet_v2(weights=None, quantize=False).eval()
    m.fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig(eng)
    torch.ao.quantization.prepare(m, inplace=True)
    with torch.inference_mode():
        m(torch.randn((8,) + shape[1:]))
    torch.ao.quantization.convert(m, inplace=True)
    x = torch.randn(shape)
    with torch.inference_mode():
        for _ in range(5):
            m(x)
        ts = []
        for _ in range(samples):
            t0 = time.perf_counter()
            m(x)
            ts.append(time.perf_counter() - t0)
    ts.sort()
    print(eng, ts[len(ts) // 2], ts[0])
"""
    r = subprocess.run(pin() + [sys.executable, "-c", code, ",".join(str(d) for d in shape),
                                str(samples)], check=True, capture_output=True, text=True)
    return [(ln.split()[0], float(ln.split()[1]), float(ln.split()[2]))
            for ln in r.stdout.splitlines() if ln.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("relayc", nargs="?", default=os.path.join(ROOT, "build", "relayc"))
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--target", default="x86-64-avx2")
    a = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with tempfile.TemporaryDirectory(prefix="relayc-qmodel-") as work:
        med, best, shape = time_relayc(os.path.abspath(a.relayc), a.target, a.samples, work)
    rows = time_torch(shape, a.samples)
    print("quantized MobileNetV2, input %s, one core (%s), us per inference"
          % ("x".join(str(d) for d in shape), " ".join(pin()) or "unpinned"))
    print("%-28s %10s %10s %14s" % ("method", "median", "min", "x relayc (med)"))
    print("%-28s %10.1f %10.1f %14s" % ("relayc --target " + a.target, med * 1e6, best * 1e6, "1.00"))
    for eng, m, b in rows:
        print("%-28s %10.1f %10.1f %14.2f" % ("PyTorch int8 (" + eng + ")", m * 1e6, b * 1e6, m / med))
    print(json.dumps({"case": "qnn_torch_mobilenet_v2", "relayc_median_s": med,
                      "pytorch": {e: m for e, m, _ in rows}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
