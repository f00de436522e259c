#!/usr/bin/python3
"""Checks one model folder written by a real TVM against TVM's own outputs; prints TAP.

Usage: /usr/bin/python3 tests/realmodels/run_real.py RELAYC FOLDER KNOWN_FAILING
       /usr/bin/python3 tests/realmodels/run_real.py --list-check FIXTURES KNOWN_FAILING

FOLDER holds model.json, optional model.params, input_<name>.npy, expected_<k>.npy and
meta.json (inputs, outputs, ops): the layout of the shared tvm-0.18 fixtures. Any folder of
that layout is handled the same way; none is special-cased by name. Outputs are compared
with rtol 1e-3, atol 1e-4 when they are float, exactly when they are integer or bool.

  info     `relayc info --json` agrees with meta.json (tests/models/run_case.py's checks)
  check    `relayc check` (libtcc) against expected_<k>.npy; with both float and integer
           outputs, also `relayc run -o` and the integer outputs compared exactly; and
           `relayc check --target x86-64-avx2` (its specialised kernels, through libtcc)
  compile  --constants c and bin: the library built with gcc -std=c99 -O2 -Wall -Wextra
           -pedantic -Werror and run by tests/models/harness.c (guards, canaries, two runs,
           status codes) with a workspace of NAME_WORKSPACE_SIZE; its outputs compared

A folder named in KNOWN_FAILING is expected to fail for the reason stated there: the test
passes while it still does, and fails once the folder fails otherwise or passes (then the
line is to be removed). With RELAYC_TEST_QUICK=1 (the sanitizer run) only info and check
are done. Each step's wall time is printed as a TAP comment.

--list-check: KNOWN_FAILING parses and names only folders of FIXTURES.
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))
import common  # noqa: E402
import run_case  # noqa: E402
from common import WRAPPER, describe, sanitizer_report  # noqa: E402

import numpy as np  # noqa: E402

RTOL, ATOL = 1e-3, 1e-4
GCC = ["gcc"] + run_case.CFLAGS     # -std=c99 -Wall -Wextra -pedantic -Werror -O2


def exact_for_integers(compare):
    """compare() with tolerance 0 when the expected tensor is integer or bool."""
    def f(got, want, rtol, atol, label):
        if want.dtype.kind in "iub":
            rtol = atol = 0.0
        with np.errstate(divide="ignore"):      # a ratio over a tolerance of 0
            return compare(got, want, rtol, atol, label)
    return f


# the harness comparisons of run_case.Case go through this module-level function
run_case.compare = exact_for_integers(run_case.compare)


def read_known_failing(path):
    """{folder: (kind, detail, line number)}. A line is 'FOLDER unsupported: A, B on T'
    (relayc info exits 1 and lists only those operators, or some of them) or 'FOLDER error:
    TEXT' (relayc info exits 2 with TEXT in its error line). '#' starts a comment."""
    entries, problems = {}, []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            kind, _, detail = (parts[1] if len(parts) > 1 else "").partition(":")
            kind, detail = kind.strip(), detail.strip()
            if kind not in ("unsupported", "error") or not detail:
                problems.append("%s:%d: expected 'FOLDER unsupported: OP, ...' or "
                                "'FOLDER error: TEXT', got %r" % (path, no, line))
                continue
            if parts[0] in entries:
                problems.append("%s:%d: %s is listed twice" % (path, no, parts[0]))
            if kind == "unsupported":
                detail = frozenset(x.strip() for x in detail.split(",") if x.strip())
            entries[parts[0]] = (kind, detail, no)
    return entries, problems


class RealCase(run_case.Case):
    def __init__(self, relayc, case_dir, work):
        super().__init__(relayc, case_dir, work)
        self.rtol, self.atol = RTOL, ATOL
        self.times = []

    def timed(self, label, fn, *args):
        t0 = time.monotonic()
        r = fn(*args)
        self.times.append((label, time.monotonic() - t0))
        return r

    def check_tvm(self):
        """relayc check (libtcc) against TVM's outputs."""
        ints = [e.dtype.kind in "iub" for e in self.expected]
        if all(ints):
            self.rtol = self.atol = 0.0
        args = self.io_args()
        self.relayc_ok("check (libtcc) matches TVM (rtol %g, atol %g)" % (self.rtol, self.atol),
                       self.relayc_cmd("check", *args))
        self.rtol, self.atol = RTOL, ATOL
        if any(ints) and not all(ints):
            out = os.path.join(self.work, "run")
            os.makedirs(out)
            if not self.relayc_ok("run -o DIR exits 0",
                                  self.relayc_cmd("run", *args[:2 * len(self.inputs)], "-o", out)):
                return
            problems = [run_case.compare(np.load(os.path.join(out, "output_%d.npy" % k)), e,
                                         0.0, 0.0, "output %d" % k)
                        for k, e in enumerate(self.expected) if ints[k]]
            problems = [p for p in problems if p]
            self.tap.result(not problems, "run: integer outputs equal TVM's", "\n".join(problems))

    def check_target(self, target):
        """relayc check --target TARGET (libtcc): the specialised kernels of that target
        (packed weights, row buffers, integer kernels in float32) against TVM's outputs,
        with check_tvm's tolerances."""
        exact = all(e.dtype.kind in "iub" for e in self.expected)
        rtol, atol = (0.0, 0.0) if exact else (self.rtol, self.atol)
        self.relayc_ok("check --target %s (libtcc) matches TVM (rtol %g, atol %g)"
                       % (target, rtol, atol),
                       self.relayc_cmd("check", *self.io_args(), "--target", target,
                                       "--rtol", repr(rtol), "--atol", repr(atol)))

    def check_gcc(self, mode):
        """compile --constants MODE, gcc -O2 -Werror, harness.c; outputs against TVM's."""
        name = "model" if mode == "c" else "net_bin"
        d = os.path.join(self.work, mode)
        os.makedirs(d)
        opts = ["--constants", mode, "-o", d, "--name", name]
        if not self.relayc_ok("%s: compile exits 0" % mode, self.relayc_cmd("compile", *opts)):
            return
        srcs = [name + ".c"] + ([name + "_constants.c"] if mode == "c" else [])
        objs = []
        for s in srcs:
            o = s[:-2] + ".o"
            if self.cc("%s: %s %s" % (mode, " ".join(GCC), s), GCC + ["-c", s, "-o", o], d):
                objs.append(o)
        if len(objs) != len(srcs):
            return
        # NAME_run_generic calls NAME_run; the workspace is NAME_WORKSPACE_SIZE bytes
        self.run_harness(mode, name, name.upper(), d, "gcc", "gcc", objs)

    def run_all(self):
        self.timed("info", self.check_info)
        self.timed("check", self.check_tvm)
        self.timed("check x86-64-avx2", self.check_target, "x86-64-avx2")
        if os.environ.get("RELAYC_TEST_QUICK"):
            print("# RELAYC_TEST_QUICK: the gcc builds of the emitted code left to the normal run")
        else:
            for mode in ("c", "bin"):
                self.timed("compile+gcc+harness (%s)" % mode, self.check_gcc, mode)
        print("# time: " + ", ".join("%s %.1f s" % lt for lt in self.times) +
              "; total %.1f s" % sum(t for _, t in self.times))


def unsupported_now(relayc, case):
    """(status, set of unsupported op strings, command result) of relayc info --json."""
    cmd = case.relayc_cmd("info", "--json")
    r = common.run(cmd, timeout=run_case.TIMEOUT)
    ops = set()
    if r[0] in (0, 1):
        try:
            ops = {u.get("op") for u in json.loads(r[1]).get("unsupported", [])}
        except ValueError:
            pass
    return r[0], ops, cmd, r


def known_failure(relayc, case, entry, list_path):
    """A folder listed as failing: it must still fail for the stated reason."""
    t = case.tap
    kind, detail, no = entry
    where = "%s line %d" % (os.path.basename(list_path), no)
    st, ops, cmd, r = unsupported_now(relayc, case)
    if sanitizer_report(r[2]) or st not in (0, 1, 2):
        t.result(False, "info ends normally", describe(cmd, r))
        return t.finish()
    if kind == "unsupported" and st == 1 and ops:
        extra = sorted(ops - detail)
        t.result(not extra, "still fails as stated (%s): info exits 1 listing %s"
                 % (where, ", ".join(sorted(ops))),
                 "info now also lists %s, which %s does not state: add it there if it is "
                 "expected, else it is a regression" % (", ".join(extra), where))
        fixed = sorted(detail - ops)
        if fixed and not extra:
            print("# no longer unsupported: %s (narrow %s)" % (", ".join(fixed), where))
        return t.finish()
    if kind == "error" and st == 2 and detail in r[2]:
        t.result(True, "still fails as stated (%s): info exits 2 with '%s'" % (where, detail))
        return t.finish()
    if st == 0:
        # nothing unsupported any more: run everything, then say what to do with the line
        print("# listed as failing (%s), but info lists nothing unsupported: the full checks"
              % where)
        case.run_all()
        t.result(False, "%s is listed in %s as failing (%s: %s), but relayc info now supports "
                 "it: %s" % (os.path.basename(case.dir), where, kind, describe_detail(detail),
                             "the checks above pass, remove the line" if not case.tap.failed
                             else "the checks above show what fails now; remove or update "
                             "the line"))
        return t.finish()
    err = r[2].strip().split("\n")[-1] if r[2].strip() else ""
    t.result(False, "fails as stated (%s: %s)" % (kind, describe_detail(detail)),
             "it fails otherwise now (update %s): info exits %d; unsupported: %s%s"
             % (where, st, ", ".join(sorted(ops)) or "(none)", "\n" + err if err else ""))
    return t.finish()


def describe_detail(detail):
    return ", ".join(sorted(detail)) if isinstance(detail, frozenset) else detail


def list_check(fixtures, list_path):
    t = common.Tap()
    entries, problems = read_known_failing(list_path)
    t.result(not problems, "%s parses" % os.path.basename(list_path), "\n".join(problems))
    folders = sorted(n for n in os.listdir(fixtures)
                     if os.path.isfile(os.path.join(fixtures, n, "meta.json")))
    t.result(bool(folders), "%s holds model folders" % fixtures, "no folder with meta.json")
    stale = sorted(set(entries) - set(folders))
    t.result(not stale, "every folder listed exists",
             "listed but not in %s: %s" % (fixtures, ", ".join(stale)))
    print("# %d folders, %d listed as failing" % (len(folders), len(entries)))
    return t.finish()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--list-check":
        return list_check(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    relayc = os.path.abspath(sys.argv[1])
    case_dir = os.path.abspath(sys.argv[2])
    list_path = sys.argv[3]
    entries, problems = read_known_failing(list_path)
    name = os.path.basename(case_dir.rstrip("/"))
    print("# folder %s" % case_dir)
    with common.work_dir("relayc-real-") as work:
        case = RealCase(relayc, case_dir, work)
        missing = [f for f in [case.model] + case.input_files + case.expected_files
                   if not os.path.exists(f)]
        if missing or problems:
            case.tap.result(False, "folder files present and %s parses"
                            % os.path.basename(list_path), "\n".join(problems + missing))
            return case.tap.finish()
        if name in entries:
            return known_failure(relayc, case, entries[name], list_path)
        case.run_all()
        return case.tap.finish()


if __name__ == "__main__":
    sys.exit(main())
