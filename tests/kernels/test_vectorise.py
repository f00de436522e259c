#!/usr/bin/python3
"""--target generic's float kernels vectorise for AArch64 under gcc and clang.

Usage: /usr/bin/python3 tests/kernels/test_vectorise.py PATH/TO/relayc [--keep DIR]

`generic`, the default target and the one of every AArch64 host, is written so that gcc
and clang vectorise it at any SIMD width. For the float models of test_contract.py (a
conv vectorised over the channels, a strided row-buffered conv, a 1x1 conv, a depthwise
conv on its padded plane, a dense layer), NAME.c is compiled for AArch64 by
`aarch64-linux-gnu-gcc -O3 -S` and `clang --target=aarch64-linux-gnu -O3 -S`, and
bench/vec_count.py counts the multiply-adds in the innermost loops: vector ones
(`fmla` on .4s lanes) must be there and outnumber the scalar ones (`fmadd`, `fmul` on
s registers) four to one. (clang 14 once unrolled the depthwise plane's loops and left
all 144 of its multiply-adds scalar.) Output is TAP.
"""
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import common  # noqa: E402
import test_contract  # noqa: E402
import vec_count  # noqa: E402
from tuned_common import compile_case, run_suite  # noqa: E402

COMPILERS = [["aarch64-linux-gnu-gcc", "-O3"], ["clang", "--target=aarch64-linux-gnu", "-O3"]]


def vectorised(cdir, name, cc, tap):
    """Two TAP results: NAME.c compiles with cc -S, and its innermost loops multiply-add
    mostly in vectors."""
    what = "%s: %s -S" % (name, " ".join(cc))
    if not shutil.which(cc[0]):
        tap.ok(False, what, "%s is not installed (tools/install-deps.sh installs it)" % cc[0])
        tap.ok(False, what + ": multiply-adds counted", "no assembly")
        return
    out = os.path.join(cdir, "%s.s" % cc[0])
    cmd = cc + ["-S", "-I", cdir, os.path.join(cdir, name + ".c"), "-o", out]
    r = common.run(cmd)
    if not tap.ok(r[0] == 0, what, common.describe(cmd, r)):
        tap.ok(False, what + ": multiply-adds counted", "no assembly")
        return
    n = vec_count.count(out)
    tap.ok(n["vec_fma"] > 0 and n["scalar_fma"] * 4 <= n["vec_fma"],
           "%s: %d vector and %d scalar multiply-adds in %d innermost loops"
           % (what, n["vec_fma"], n["scalar_fma"], n["loops"]),
           "vector multiply-adds must be there and outnumber the scalar ones 4 to 1")


def check(relayc, case, target, work, tap):
    built = compile_case(relayc, case, target, work, tap)
    for cc in COMPILERS if built else []:
        vectorised(built[0], built[1], cc, tap)


def main():
    return run_suite(sys.argv[1:], __doc__, "relayc_vectorise_", test_contract.cases(), ["generic"],
                     1 + 2 * len(COMPILERS), check)


if __name__ == "__main__":
    sys.exit(main())
