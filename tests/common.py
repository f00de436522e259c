"""Helpers shared by the Python test scripts: TAP output, running commands, work directories.

Scripts in tests/ import it as they are; those in subdirectories put tests/ on sys.path
first (as they do for relaywriter.py):

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import common  # noqa: E402
"""
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

# put before each relayc command (the meson test setup 'valgrind' sets it)
WRAPPER = shlex.split(os.environ.get("RELAYC_WRAPPER", ""))
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "ERROR: UndefinedBehaviorSanitizer", "SUMMARY: ")


def sanitizer_report(err):
    """True when err (a command's stderr) holds an ASan, LSan or UBSan report."""
    return any(m in err for m in SANITIZER_MARKS)


class Tap:
    """TAP lines numbered from 1. The plan goes first (plan) or last (finish); a failed
    result is followed by its diagnostic as comment lines, at most diag_lines of them
    (None: all)."""

    def __init__(self, diag_lines=40):
        self.n = 0
        self.failed = 0
        self.planned = None
        self.diag_lines = diag_lines

    def plan(self, count):
        print("1..%d" % count)
        self.planned = count
        sys.stdout.flush()

    def result(self, good, desc, diag=None):
        """Prints 'ok N - desc' or 'not ok N - desc' and the diagnostic; returns good."""
        self.n += 1
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, desc))
        if not good:
            self.failed += 1
            lines = (str(diag) if diag else "(no detail)").rstrip("\n").split("\n")
            for line in lines[:self.diag_lines]:
                print("#   " + line)
        sys.stdout.flush()
        return good

    ok = result

    def skip(self, desc, why):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, desc, why))
        sys.stdout.flush()

    def note(self, text):
        for line in str(text).rstrip().splitlines():
            print("# " + line)
        sys.stdout.flush()

    def bail(self, why):
        print("Bail out! " + why)
        sys.exit(1)

    def finish(self):
        """The plan (unless it came first) and a summary; returns the exit status, which
        is a failure too when a plan given first does not match the results printed."""
        if self.planned is None:
            print("1..%d" % self.n)
        print("# %d passed, %d failed" % (self.n - self.failed, self.failed))
        if self.planned is not None and self.planned != self.n:
            print("# planned %d results, printed %d" % (self.planned, self.n))
        sys.stdout.flush()
        return 1 if self.failed or (self.planned is not None and self.planned != self.n) else 0


def run(cmd, cwd=None, env=None, timeout=300):
    """Runs cmd; returns (status, stdout, stderr). A negative status is a signal, -999 a
    timeout."""
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return -999, "", "timed out after %d s: %s" % (timeout, " ".join(cmd))
    return (p.returncode, p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def describe(cmd, r, out_lines=25, err_lines=25):
    """A diagnostic for a finished command: the command line, how it ended, and the last
    lines of its stdout and stderr."""
    st, out, err = r
    what = "killed by signal %d" % -st if -100 < st < 0 else "exit status %d" % st
    lines = ["$ " + " ".join(cmd), what]
    if out.strip():
        lines += ["stdout:"] + ["  " + l for l in out.rstrip().split("\n")[-out_lines:]]
    if err.strip():
        lines += ["stderr:"] + ["  " + l for l in err.rstrip().split("\n")[-err_lines:]]
    return "\n".join(lines)


@contextlib.contextmanager
def work_dir(prefix, keep=None):
    """A new temporary directory, removed afterwards, also when meson's timeout sends
    SIGTERM. With keep, that directory instead (made if missing), left in place."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if keep:
        os.makedirs(keep, exist_ok=True)
        yield keep
        return
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
