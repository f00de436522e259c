#!/usr/bin/env python3
"""Large-model compile cost: a model with 25 MB of float32 weights (dense 2560x2560,
relu) goes through `relayc compile` and `gcc -O2 -c` of everything it emitted, in both
constants modes; prints wall time and peak memory of each step and the total. The
issue's floor: under 10 s and 2 GB in total. Usage: bench/large_model.py [RELAYC]"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests"))
import relaywriter as rw  # noqa: E402

relayc = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "relayc"))


with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(0)
    x = rw.Var("x", (1, 2560))
    w = rw.Const(rng.standard_normal((2560, 2560)).astype(np.float32))
    body = rw.Call("nn.relu", [rw.Call("nn.dense", [x, w], {"units": 2560})])
    with open(os.path.join(tmp, "big.json"), "w") as f:
        f.write(rw.save_json(rw.Module({"main": rw.Function([x], body)}), version="0.18.0"))
    print("model: dense 2560x2560 float32, %.1f MB of weights" % (2560 * 2560 * 4 / 1e6))
    for mode in ("c", "bin"):
        out = os.path.join(tmp, mode)
        os.mkdir(out)
        # /usr/bin/time -f %M gives each step's own peak resident memory
        steps = [("relayc compile", [relayc, "compile", os.path.join(tmp, "big.json"), "-o", out,
                                     "--constants", mode])]
        srcs = ["big.c"] + (["big_constants.c"] if mode == "c" else [])
        for s in srcs:
            steps.append(("gcc -O2 -c " + s, ["gcc", "-O2", "-c", s]))
        total_t, peak = 0.0, 0.0
        for name, cmd in steps:
            t0 = time.perf_counter()
            r = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], cwd=out, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            t = time.perf_counter() - t0
            mb = int(r.stderr.strip().splitlines()[-1]) / 1024.0
            total_t += t
            peak = max(peak, mb)
            print("  %-5s %-24s %6.2f s %8.1f MB" % (mode, name, t, mb))
        verdict = "ok" if total_t < 10 and peak < 2048 else "OVER the 10 s / 2 GB floor"
        print("  %-5s %-24s %6.2f s %8.1f MB peak  %s" % (mode, "total", total_t, peak, verdict))
