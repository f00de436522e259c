#!/usr/bin/python3
"""The error paths of relayc, as TAP.

Usage: /usr/bin/python3 tests/errors_test.py RELAYC ERRORS_DIR [FIXTURES_DIR]

For every ERRORS_DIR/<case>.expect (model <case>.json, params <case>.params when present):
  - `relayc compile` into an empty directory exits 2, without a signal or a sanitizer
    report, prints exactly one line on stderr, starting 'relayc: error: <path>: ' (<path>:
    the model or params file as given) and containing the .expect text; the directory
    stays empty;
  - the same compile into a directory already holding a good model's files under the
    same --name leaves them untouched (bytes, inode, mtime) and adds nothing;
  - `relayc info` fails the same way (exit 2 and the same line), or, for an unsupported
    operator, exits 1 and names it.
A compile whose last output file cannot be replaced (NAME.h is a directory) leaves the
good files it would have replaced alone. Then the deep chain: tests/gen_chain.py --n 100000
(10000 when RELAYC_WRAPPER is set) into a temporary directory, compiled (c and bin) and
checked against its expected output (libtcc and --reference). RELAYC_WRAPPER (the meson
test setup 'valgrind') is put before each relayc command.

The good model is FIXTURES_DIR/mlp-0.8.0 when present, else the first golden case.
"""
import functools
import json
import os
import shutil
import sys

import common
from common import WRAPPER, run, sanitizer_report

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "same_name"
describe = functools.partial(common.describe, out_lines=10, err_lines=20)


def error_problems(r, paths, expect, status=2):
    """What is wrong with a run that should fail with one error line, or []."""
    st, out, err = r
    bad = []
    if st != status:
        bad.append("exit status %s, expected %d" % (st if st > -100 else "(timeout)", status)
                   if st >= 0 or st <= -100 else "killed by signal %d" % -st)
    if sanitizer_report(err):
        bad.append("sanitizer report on stderr")
    lines = err.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != 1:
        bad.append("%d lines on stderr, expected exactly 1" % len(lines))
    first = lines[0] if lines else ""
    prefixes = ["relayc: error: %s: " % p for p in paths]
    if not any(first.startswith(p) for p in prefixes):
        bad.append("stderr does not start with %s" % " or ".join(repr(p) for p in prefixes))
    if expect is not None and expect not in first:
        bad.append("stderr does not contain %r" % expect)
    return bad


def snapshot(d):
    out = {}
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        s = os.stat(p)
        with open(p, "rb") as fh:
            out[f] = (fh.read(), s.st_ino, s.st_mtime_ns)
    return out


def snapshot_files(d):
    """Like snapshot, for regular files only (a directory in the way is not compared)."""
    out = {}
    for f in sorted(os.listdir(d)):
        p = os.path.join(d, f)
        if os.path.isfile(p):
            s = os.stat(p)
            with open(p, "rb") as fh:
                out[f] = (fh.read(), s.st_ino, s.st_mtime_ns)
    return out


def good_model(fixtures):
    cands = []
    if fixtures:
        cands.append(os.path.join(fixtures, "mlp-0.8.0"))
    golden = os.path.join(HERE, "golden")
    if os.path.isdir(golden):
        cands += [os.path.join(golden, n) for n in sorted(os.listdir(golden))]
    for c in cands:
        if os.path.isfile(os.path.join(c, "model.json")):
            p = os.path.join(c, "model.params")
            return os.path.join(c, "model.json"), (["--params", p] if os.path.exists(p) else [])
    return None, []


def error_cases(errors_dir):
    cases = []
    if not os.path.isdir(errors_dir):
        return cases
    for f in sorted(os.listdir(errors_dir)):
        if not f.endswith(".expect"):
            continue
        case = f[:-len(".expect")]
        model = None
        for ext in (".json", ""):
            p = os.path.join(errors_dir, case + ext)
            if os.path.isfile(p):
                model = p
                break
        if model is None:   # any other file with the case's stem
            others = [g for g in os.listdir(errors_dir) if g.startswith(case + ".") and
                      not g.endswith((".expect", ".params"))]
            model = os.path.join(errors_dir, sorted(others)[0]) if others else None
        params = os.path.join(errors_dir, case + ".params")
        with open(os.path.join(errors_dir, f), encoding="utf-8") as fh:
            expect = fh.read().split("\n")[0]
        cases.append((case, model, params if os.path.exists(params) else None, expect))
    return cases


def main():
    if len(sys.argv) < 3:
        print("usage: errors_test.py RELAYC ERRORS_DIR [FIXTURES_DIR]", file=sys.stderr)
        return 2
    relayc = os.path.abspath(sys.argv[1])
    errors_dir = sys.argv[2]
    fixtures = sys.argv[3] if len(sys.argv) > 3 else None
    t = common.Tap()
    with common.work_dir("relayc-errors-") as work:
        good, good_params = good_model(fixtures)
        # a directory holding a good model's files, to be copied for each case
        good_dir = os.path.join(work, "good")
        os.makedirs(good_dir)
        if good:
            cmd = WRAPPER + [relayc, "compile", good] + good_params + ["-o", good_dir, "--name", NAME]
            r = run(cmd)
            t.result(r[0] == 0 and len(os.listdir(good_dir)) == 3,
                     "a good model compiles (the files a failed compile must not touch)",
                     describe(cmd, r))
        cases = error_cases(errors_dir)
        if not cases:
            t.skip("error cases", "none in %s" % errors_dir)
        for case, model, params, expect in cases:
            if model is None:
                t.result(False, "%s: has a model file" % case, "no model file beside %s.expect" % case)
                continue
            pargs = ["--params", params] if params else []
            paths = [model] + ([params] if params else [])
            # 1. an empty output directory stays empty
            out = os.path.join(work, case)
            os.makedirs(out)
            cmd = WRAPPER + [relayc, "compile", model] + pargs + ["-o", out, "--name", NAME]
            r = run(cmd)
            bad = error_problems(r, paths, expect)
            left = os.listdir(out)
            if left:
                bad.append("left files in the output directory: %s" % left)
            t.result(not bad, "%s: compile fails with %r" % (case, expect),
                     "\n".join(bad) + "\n" + describe(cmd, r))
            # 2. a directory holding a good model's files under the same name
            if good:
                out2 = os.path.join(work, case + "_full")
                shutil.copytree(good_dir, out2, copy_function=shutil.copy2)
                before = snapshot(out2)
                cmd = WRAPPER + [relayc, "compile", model] + pargs + ["-o", out2, "--name", NAME]
                r2 = run(cmd)
                after = snapshot(out2)
                bad = []
                if r2[0] == 0:
                    bad.append("compile succeeded")
                if set(after) != set(before):
                    bad.append("files before %s, after %s" % (sorted(before), sorted(after)))
                for f in before:
                    if f in after and after[f] != before[f]:
                        bad.append("%s was %s" % (f, "rewritten" if after[f][0] != before[f][0]
                                                  else "touched (inode or mtime)"))
                t.result(not bad, "%s: a failed compile leaves another model's %s.* alone" % (case, NAME),
                         "\n".join(bad) + "\n" + describe(cmd, r2))
            # 3. info: the same error, or exit 1 naming an unsupported operator
            cmd = WRAPPER + [relayc, "info", model] + pargs
            ri = run(cmd)
            if ri[0] == 1:
                bad = []
                if sanitizer_report(ri[2]):
                    bad.append("sanitizer report on stderr")
                if expect not in ri[1]:
                    bad.append("stdout does not name %r" % expect)
                if r[0] == 2 and "unsupported" not in r[2]:
                    bad.append("info exits 1 (unsupported operators) but compile's error is not "
                               "about an unsupported operator")
                t.result(not bad, "%s: info exits 1 and names the unsupported operator" % case,
                         "\n".join(bad) + "\n" + describe(cmd, ri))
            else:
                bad = error_problems(ri, paths, expect)
                if not bad and ri[2] != r[2]:
                    bad.append("info's message differs from compile's:\n  %s  %s" % (ri[2], r[2]))
                t.result(not bad, "%s: info fails the same way" % case,
                         "\n".join(bad) + "\n" + describe(cmd, ri))

        # a compile that fails when it renames its last file
        if good:
            other = None
            for cand in ("lenet-0.8.0", "misc-0.8.0"):
                p = os.path.join(fixtures or "", cand, "model.json")
                if fixtures and os.path.isfile(p):
                    other = p
                    break
            if other:
                out = os.path.join(work, "header_is_a_dir")
                shutil.copytree(good_dir, out, copy_function=shutil.copy2)
                os.remove(os.path.join(out, NAME + ".h"))
                os.mkdir(os.path.join(out, NAME + ".h"))
                before = snapshot_files(out)
                cmd = WRAPPER + [relayc, "compile", other, "-o", out, "--name", NAME]
                r = run(cmd)
                after = snapshot_files(out)
                bad = []
                if r[0] != 2:
                    bad.append("exit status %d, expected 2" % r[0])
                for f in before:
                    if after.get(f) != before[f]:
                        bad.append("%s was replaced by the failed compile" % f)
                if set(after) != set(before):
                    bad.append("files before %s, after %s" % (sorted(before), sorted(after)))
                t.result(not bad, "a compile failing on its last file (NAME.h is a directory) "
                         "replaces none of the others", "\n".join(bad) + "\n" + describe(cmd, r))

        # the deep chain
        gen = os.path.join(HERE, "gen_chain.py")
        if not os.path.exists(gen):
            t.skip("deep chain", "no tests/gen_chain.py")
        else:
            chain = os.path.join(work, "chain")
            # 100,000 calls; 10,000 under a wrapper (valgrind makes each relayc run ~50x slower)
            n = "10000" if WRAPPER else "100000"
            cmd = [sys.executable, gen, "--n", n, chain]  # not wrapped: Python
            r = run(cmd)
            if t.result(r[0] == 0 and os.path.isfile(os.path.join(chain, "model.json")),
                        "gen_chain.py --n %s writes a model" % n, describe(cmd, r)):
                model = os.path.join(chain, "model.json")
                for mode in ("c", "bin"):
                    out = os.path.join(work, "chain_" + mode)
                    os.makedirs(out)
                    cmd = WRAPPER + [relayc, "compile", model, "-o", out, "--constants", mode]
                    r = run(cmd)
                    t.result(r[0] == 0 and not r[2].strip() and len(os.listdir(out)) == 3,
                             "deep chain: compile --constants %s" % mode, describe(cmd, r))
                meta_p = os.path.join(chain, "meta.json")
                if os.path.exists(meta_p):
                    with open(meta_p) as f:
                        meta = json.load(f)
                    tol = meta.get("tolerance", {})
                    args = []
                    for i in meta["inputs"]:
                        args += ["--input", "%s=%s" % (i["name"], os.path.join(chain, "input_%s.npy" % i["name"]))]
                    for k in range(len(meta["outputs"])):
                        args += ["--expect", os.path.join(chain, "expected_%d.npy" % k)]
                    args += ["--rtol", repr(tol.get("rtol", 1e-4)), "--atol", repr(tol.get("atol", 1e-5))]
                    for extra, label in (([], "libtcc"), (["--reference"], "reference")):
                        cmd = WRAPPER + [relayc, "check", model] + args + extra
                        r = run(cmd)
                        t.result(r[0] == 0, "deep chain: check (%s) against numpy" % label, describe(cmd, r))
                    cmd = WRAPPER + [relayc, "info", "--json", model]
                    r = run(cmd)
                    good_info = r[0] == 0
                    if good_info:
                        try:
                            info = json.loads(r[1])
                            good_info = info.get("ops") == meta.get("ops")
                        except ValueError:
                            good_info = False
                    t.result(good_info, "deep chain: info counts every call", describe(cmd, r)[:3000])
                else:
                    t.skip("deep chain: check", "gen_chain.py wrote no meta.json")
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
