#!/usr/bin/env python3
"""One fixture model, compiled by relayc, run on an emulated Cortex-M4F under QEMU.

relayc compiles the fixture (constants as C arrays or as a NAME.bin blob, which the
image links as its own section, .model_constants); tests/cortex_m/run_qemu_test.sh
builds the image with examples/cortex-m (-Werror, the model also at -Os), checks the
model's objects (no data in RAM, stack frames under 256 bytes, nothing from libc
beyond <math.h>) and the image (the model's data read-only), and runs it: every
output element is compared with the fixture's expected .npy on the target, and the
instructions of one inference are counted (QEMU -icount).

    test_qemu_model.py --relayc build/relayc --fixtures DIR --fixture lenet-0.18.0 \
        --name lenet --mode c|bin
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fwtest  # noqa: E402


def main():
    ap = fwtest.parser(__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--mode", choices=("c", "bin"), required=True)
    ap.add_argument("--atol", default="1e-5")
    ap.add_argument("--rtol", default="1e-4")
    a = ap.parse_args()
    tap = fwtest.Tap()
    fwtest.need_tools(tap, "arm-none-eabi-gcc", "arm-none-eabi-size", "arm-none-eabi-nm",
                      "arm-none-eabi-readelf", "arm-none-eabi-objdump", "qemu-system-arm", "make", "timeout")
    fx = fwtest.fixture(a.fixtures, a.fixture)
    work = fwtest.tempdir("relayc-qemu-%s-%s." % (a.name, a.mode))
    try:
        out = os.path.join(work, "model")
        st, log = fwtest.compile_model(a.relayc, fx, out, a.name, a.mode)
        if not tap.ok(st == 0, "relayc compile %s --constants %s" % (a.fixture, a.mode), log):
            tap.done()
        tap.note(log)
        runner = os.path.join(fwtest.CORTEX_M_TESTS, "run_qemu_test.sh")
        cmd = ([runner, "--atol", a.atol, "--rtol", a.rtol, "--timeout", "120",
                "--build-dir", os.path.join(work, "build"), out, a.name, a.mode] +
               fx["inputs"] + ["--"] + fx["expected"])
        st, log = fwtest.run(cmd, timeout=300)
        tap.note(log)
        ok = tap.ok(st == 0, "%s (%s constants) builds, passes the object and image checks and "
                    "matches every expected output on the Cortex-M4 (run_qemu_test.sh exit %d)"
                    % (a.name, a.mode, st))
        if ok:
            sizes = dict(re.findall(r"^\s+(\.\w+)\s+(\d+)\s+(?:ROM|RAM)$", log, flags=re.M))
            insns = re.search(r"^instructions: (\d+)", log, flags=re.M)
            macros = fwtest.header_macros(os.path.join(out, a.name + ".h"))
            ws = macros.get(a.name.upper() + "_WORKSPACE_SIZE")
            tap.ok(insns is not None and "NOT an instruction count" not in log,
                   "QEMU counted the instructions of one inference")
            print("# summary: %s %s: .text %s, .rodata %s%s, workspace %s bytes, %s instructions per inference"
                  % (a.name, a.mode, sizes.get(".text"), sizes.get(".rodata"),
                     ", .model_constants %s" % sizes[".model_constants"] if ".model_constants" in sizes else "",
                     ws, insns.group(1) if insns else "?"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tap.done()


if __name__ == "__main__":
    main()
