#!/usr/bin/python3
"""Write a deep chain model: x -> add(c0) -> relu -> add(c1) -> relu -> ...

  /usr/bin/python3 tests/gen_chain.py --n 100000 OUT

--n is the number of operator calls (add and nn.relu alternate; the adds use
two shared constants, +0.25 and -0.25, so the values stay in [0, 1.25] and
float32 is exact after the first step).  The call nesting depth is n, which
is what a recursive reader would overflow on.

If OUT ends in ".json" only the model is written there.  Otherwise OUT is a
directory that receives a golden case like tests/golden/*: model.json,
input_x.npy, expected_0.npy and meta.json (expected output from numpy in
float64).  The files are not committed: a 100,000-call chain is about 40 MB.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import relaywriter as rw  # noqa: E402


def build(n, shape, version, spans):
    x = rw.Var("x", shape)
    consts = [rw.Const(np.array(0.25, np.float32)), rw.Const(np.array(-0.25, np.float32))]
    e = x
    for i in range(n):
        sp = rw.Span("layer%d" % i) if spans else None
        if i % 2 == 0:
            e = rw.Call("add", [e, consts[(i // 2) % 2]], span=sp)
        else:
            e = rw.Call("nn.relu", [e], span=sp)
    return x, rw.Function([x], e)


def reference(xv, n, dt):
    y = xv.astype(dt)
    c = [dt(0.25), dt(-0.25)]
    for i in range(n):
        if i % 2 == 0:
            y = y + c[(i // 2) % 2]
        else:
            y = np.maximum(y, 0)
    return y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100000, help="number of op calls")
    ap.add_argument("--version", default="0.18.0")
    ap.add_argument("--typed", action="store_true", help="write checked types too")
    ap.add_argument("--spans", action="store_true", help="a Span on every call")
    ap.add_argument("--shape", default="1,8", help="input shape, e.g. 1,8")
    ap.add_argument("--root", choices=["module", "function"], default="module")
    ap.add_argument("out")
    args = ap.parse_args()
    shape = tuple(int(s) for s in args.shape.split(","))
    x, fn = build(args.n, shape, args.version, args.spans)
    root = rw.Module({"main": fn}) if args.root == "module" else fn
    text = rw.save_json(root, args.version, typed=args.typed)
    if args.out.endswith(".json"):
        with open(args.out, "w") as f:
            f.write(text)
        print("wrote %s (%d calls, %.1f MB)" % (args.out, args.n, len(text) / 1e6))
        return 0
    os.makedirs(args.out, exist_ok=True)
    xv = np.random.default_rng(args.n).uniform(-1, 1, shape).astype(np.float32)
    exp = reference(xv, args.n, np.float64).astype(np.float32)
    f32 = reference(xv, args.n, np.float32)
    ratio = float((np.abs(f32 - exp) / (1e-5 + 1e-4 * np.abs(exp))).max())
    with open(os.path.join(args.out, "model.json"), "w") as f:
        f.write(text)
    np.save(os.path.join(args.out, "input_x.npy"), xv)
    np.save(os.path.join(args.out, "expected_0.npy"), exp)
    ops = {"add": (args.n + 1) // 2}
    if args.n // 2:
        ops["nn.relu"] = args.n // 2
    meta = {
        "generator": "tests/gen_chain.py", "model": "chain", "n": args.n,
        "tvm_version": args.version, "root": args.root, "byoc": False,
        "params_file": False, "typed": args.typed,
        "function": "main" if args.root == "module" else None,
        "inputs": [{"name": "x", "shape": list(shape), "dtype": "float32"}],
        "outputs": [{"shape": list(shape), "dtype": "float32"}],
        "params": [], "ops": ops, "op_list": sorted(ops),
        "tolerance": {"rtol": 1e-4, "atol": 1e-5, "float32_error_ratio": ratio},
        "expected_from": "numpy float64",
    }
    from gen_golden import meta_dump
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        f.write(meta_dump(meta))
    print("wrote %s/ (%d calls, model %.1f MB)" % (os.path.normpath(args.out), args.n, len(text) / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
