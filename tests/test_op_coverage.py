#!/usr/bin/python3
"""Every Relay operator relayc compiles has a golden case and an error case.

usage: test_op_coverage.py RELAYC FIXTURES_DIR

For each operator `relayc ops` lists:
  - golden: a model of tests/golden, tests/models/cases, the relay-json fixtures or the
    tvm-0.18 fixtures (their meta.json "ops") calls it, or tests/qnn/gen_qnn.py (whose
    cases the qnn suite builds and checks against qnn_ref.py) writes a call of it;
  - error: a call of it with 12 arguments (more than any operator takes), written into
    a copy of a golden model's JSON, is refused with exit status 2 by `relayc info` and
    by `relayc compile`, in one line that names the JSON node, the operator and the
    count, and compile writes nothing.
An operator that lacks either fails its test, naming what is missing.
"""
import glob
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import common  # noqa: E402

TEMPLATE = os.path.join(HERE, "golden", "abs-0.18.0-fn", "model.json")


def golden_ops(fixtures):
    ops = set()
    roots = [os.path.join(HERE, "golden"), os.path.join(HERE, "models", "cases")]
    if fixtures:
        roots += [fixtures, os.path.join(os.path.dirname(fixtures), "tvm-0.18")]
    for root in roots:
        for meta in glob.glob(os.path.join(root, "*", "meta.json")):
            with open(meta) as f:
                o = json.load(f).get("ops", {})
            ops.update(o.keys() if isinstance(o, dict) else o)
    with open(os.path.join(HERE, "qnn", "gen_qnn.py")) as f:
        qnn_src = f.read()
    return ops, qnn_src


def arity_model(op, path):
    """The abs template with its call's operator replaced by op and 12 arguments."""
    with open(TEMPLATE) as f:
        doc = json.load(f)
    nodes = doc["nodes"]
    call = next(i for i, n in enumerate(nodes) if n.get("type_key") == "relay.Call")
    opn = int(nodes[call]["attrs"]["op"])
    args = int(nodes[call]["attrs"]["args"])
    nodes[opn]["repr_str"] = op
    nodes[args]["data"] = nodes[args]["data"] * 12
    with open(path, "w") as f:
        json.dump(doc, f)
    return call


def main():
    relayc, fixtures = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    tap = common.Tap()
    st, out, err = common.run([relayc, "ops"])
    ops = [line.split()[0] for line in out.splitlines() if line.strip()]  # NAME DTYPE...
    if st != 0 or not ops:
        tap.bail("relayc ops: exit %d, %d operators: %s" % (st, len(ops), err.strip()))
    have, qnn_src = golden_ops(fixtures)
    with tempfile.TemporaryDirectory(prefix="relayc_opcov_") as work:
        for op in ops:
            missing = []
            if op not in have and '"%s"' % op not in qnn_src:
                missing.append("no golden case calls it")
            model = os.path.join(work, "model.json")
            call = arity_model(op, model)
            want = ["nodes[%d]" % call, op, "got 12"]
            for cmd in ([relayc, "info", model],
                        [relayc, "compile", model, "-o", os.path.join(work, "out")]):
                r = common.run(cmd)
                lines = r[2].strip().splitlines()
                if r[0] != 2 or len(lines) != 1 or not all(w in lines[0] for w in want):
                    missing.append("the 12-argument call: %s" % common.describe(cmd, r))
            if os.path.exists(os.path.join(work, "out")) and os.listdir(os.path.join(work, "out")):
                missing.append("a failed compile left files")
            tap.result(not missing, "%s: a golden case and an error case" % op, "\n".join(missing))
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
