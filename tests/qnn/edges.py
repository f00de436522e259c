"""Shared by the edge-value tests of one QNN operator (test_quantize_edges.py,
test_requantize_edges.py): each case is a model of that operator alone on input x, run
through libtcc and through gcc's vectorised loops, whose output must equal the numpy
reference exactly.

run(doc, prefix, cases, build, want) is a test's main: cases is a list of (name, x, ...),
build(case) returns (Relay expression, input Var), want(case) the expected output."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import qnnwriter  # noqa: E402,F401  (registers the QNN operators in relaywriter)
import relaywriter as rw  # noqa: E402

MODES = [("libtcc", []), ("gcc -O3 -march=native", ["--cc", "gcc -O3 -march=native"]),
         ("gcc -O3", ["--cc", "gcc -O3"])]


def differences(x, got, want, fmt):
    """None when got equals want (dtype, shape and every value), else what differs."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return "got %s %s, expected %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    bad = np.argwhere(got != want)
    if not len(bad):
        return None
    lines = ["%d of %d outputs differ" % (len(bad), got.size)]
    for i in bad[:8]:
        i = tuple(i)
        lines.append(("at %s: x " + fmt + ", got %d, expected %d") % (
            i, x[i].item(), int(got[i]), int(want[i])))
    return "\n".join(lines)


def run(doc, prefix, cases, build, want, fmt="%r"):
    if len(sys.argv) < 2:
        sys.exit(doc)
    relayc = sys.argv[1]
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    tap = common.Tap()
    tap.plan(len(cases) * len(MODES))
    with common.work_dir(prefix, keep) as work:
        for ci, case in enumerate(cases):
            name, x = case[0], case[1]
            d = os.path.join(work, "c%d" % ci)
            os.makedirs(d, exist_ok=True)
            y, xv = build(case)
            model = os.path.join(d, "model.json")
            with open(model, "w") as fh:
                fh.write(rw.save_json(rw.Module({"main": rw.Function([xv], y)}), version="0.18.0"))
            np.save(os.path.join(d, "x.npy"), x)
            expected = want(case)
            for mname, flags in MODES:
                od = os.path.join(d, mname.replace(" ", "_"))
                cmd = [relayc, "run", model, "--input", "x=" + os.path.join(d, "x.npy"), "-o", od,
                       "-q"] + flags
                r = common.run(cmd)
                if r[0]:
                    tap.result(False, "%s, %s: relayc run" % (name, mname), common.describe(cmd, r))
                    continue
                got = np.load(os.path.join(od, "output_0.npy"))
                diag = differences(x, got, expected, fmt)
                tap.result(diag is None, "%s, %s: every output equals numpy's" % (name, mname),
                           diag)
    return tap.finish()
