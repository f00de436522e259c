#!/usr/bin/python3
"""Each pass at its own stage: `relayc info MODEL --dump-after PASS` against an expected dump.

usage: run_passes.py RELAYC [--update]

The cases are tests/passes/cases.txt; the expected dumps, tests/passes/expected/NAME.dump,
are the graph after the pass as a person checked it (see README.md: what each dump must
show). A mismatch prints a unified diff. --update rewrites the expected dumps from relayc:
only for a change whose new dumps were read and found right.
"""
import difflib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
import common  # noqa: E402


def cases():
    with open(os.path.join(HERE, "cases.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if line:
                yield line


def model_args(d):
    d = os.path.join(ROOT, d)
    js = [f for f in sorted(os.listdir(d)) if f.endswith(".json") and f != "meta.json"]
    args = [os.path.join(d, js[0])]
    ps = [f for f in sorted(os.listdir(d)) if f.endswith(".params")]
    if ps:
        args += ["--params", os.path.join(d, ps[0])]
    return args


def dump(relayc, d, pas, target):
    cmd = [relayc, "info"] + model_args(d) + ["--target", target, "--dump-after", pas]
    r = common.run(cmd)
    if r[0] != 0:
        return None, common.describe(cmd, r)
    lines = r[1].splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("graph "))
    end = max(i for i, l in enumerate(lines) if l.startswith("output ") and " %" in l)
    return "\n".join(lines[start:end + 1]) + "\n", ""


def main():
    relayc, update = sys.argv[1], "--update" in sys.argv[2:]
    tap = common.Tap(diag_lines=None)
    for name, d, pas, target in cases():
        got, err = dump(relayc, d, pas, target)
        path = os.path.join(HERE, "expected", name + ".dump")
        if got is not None and update:
            with open(path, "w") as f:
                f.write(got)
        want = open(path).read() if os.path.exists(path) else ""
        why = err or "".join(difflib.unified_diff(want.splitlines(True), (got or "").splitlines(True),
                                                  "expected/" + name + ".dump", "relayc"))
        tap.result(got is not None and got == want, "%s: %s after %s (%s)" % (name, d, pas, target),
                  why)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
