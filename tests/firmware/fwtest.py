"""Helpers shared by the firmware suite's tests (TAP output, tools, relayc, fixtures).

Every test takes --relayc (the binary under test), --fixtures (the shared Relay JSON
fixtures) and --source-root where it needs them. A missing tool is a failure, never
a skip: CI installs them (see examples/cortex-m/README.md).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

SOURCE_ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HARNESS = os.path.join(SOURCE_ROOT, "examples", "cortex-m")
CORTEX_M_TESTS = os.path.join(SOURCE_ROOT, "tests", "cortex_m")

APT = ("apt-get install -y gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm "
       "cmake make python3-numpy meson ninja-build")

# The Cortex-M4F of QEMU's mps2-an386, as the strict compile line has it.
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
STRICT_FLAGS = ["-std=c99", "-Os", "-Wall", "-Wextra", "-pedantic", "-Werror"]


class Tap(common.Tap):
    """common.Tap with every diagnostic line, and done() exiting with the status."""

    def __init__(self):
        super().__init__(diag_lines=None)

    def done(self):
        sys.exit(self.finish())


def parser(doc):
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--relayc", required=True, type=os.path.abspath,
                    help="the relayc binary under test")
    ap.add_argument("--fixtures", default=os.environ.get("RELAYC_FIXTURES", ""),
                    help="the shared Relay JSON fixtures folder")
    return ap


def need_tools(tap, *tools):
    """Bails out (a failure, not a skip) when a tool is missing."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        tap.bail("missing tools: %s (CI installs them: %s)" % (" ".join(missing), APT))


def run(cmd, cwd=None, env=None, timeout=300):
    """Runs cmd; returns (status, stdout+stderr)."""
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def fixture(fixtures, name):
    d = os.path.join(fixtures, name)
    if not os.path.isfile(os.path.join(d, "model.json")):
        raise SystemExit("Bail out! no fixture %s (give --fixtures, or -Dfixtures= to meson)" % d)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    inputs = [os.path.join(d, "input_%s.npy" % i["name"]) for i in meta["inputs"]]
    expected = [os.path.join(d, "expected_%d.npy" % k) for k in range(len(meta["outputs"]))]
    params = os.path.join(d, "model.params")
    return {
        "dir": d,
        "model": os.path.join(d, "model.json"),
        "params": params if os.path.isfile(params) else None,
        "inputs": inputs,
        "expected": expected,
        "meta": meta,
    }


def compile_model(relayc, fx, outdir, name, mode="c", extra=()):
    """relayc compile; returns (status, output)."""
    os.makedirs(outdir, exist_ok=True)
    cmd = [relayc, "compile", fx["model"], "--name", name, "--constants", mode, "-o", outdir]
    if fx["params"]:
        cmd += ["--params", fx["params"]]
    return run(cmd + list(extra))


def header_macros(path):
    """#define NAME VALUE (integers) of a header."""
    out = {}
    with open(path) as f:
        for m in re.finditer(r"^#define\s+(\w+)\s+(-?\d+)\b", f.read(), flags=re.M):
            out[m.group(1)] = int(m.group(2))
    return out


def tempdir(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR"))
