#!/usr/bin/python3
"""The kernels call none of the emitted file's small helpers: gcc inlines them.

Usage: /usr/bin/python3 tests/kernels/test_inline.py PATH/TO/relayc [--keep DIR]

The requantize helpers (rq_wrap32, rq_fpm, rq_fpm_h) are a few instructions each, called
once per output; a call per output costs more than the requantize itself, and a loop that
calls one is not vectorised. gcc does not inline a function into one compiled under other
`#pragma GCC optimize` options, so an option given to some kernels only (the
x86-64-avx2 blocks once took "no-tree-loop-distribute-patterns" in a push_options region,
the helpers above it did not) left a call to rq_wrap32 per output in every int8 block
(qnn.conv2d 1x1 64 -> 128 at 28: 573 us against 278 inlined). For int8 convs of each
kernel kind, an int8 dense and a float conv with a fused epilogue, on every target: NAME.c
compiled by gcc -O3 -march=x86-64-v3 -S under -std=c99 calls no rq_ function. Output is TAP.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import test_qtuned as qt  # noqa: E402
import test_tuned as tt  # noqa: E402
from tuned_common import compile_case, run_suite  # noqa: E402

TARGETS = ["generic", "x86-64-avx2", "x86-64-avx512", "cortex-m"]
CALL = re.compile(r"^\s*(?:call|jmp)\s+(rq_\w+)", re.M)


def cases():
    return [
        qt.conv_case("i_1x1_64to128_28", 1, 64, 28, 28, 128, 1, 1),
        qt.conv_case("i_5x5_1to6_28", 1, 1, 28, 28, 6, 5, 5, pad=(2, 2, 2, 2)),
        qt.conv_case("i_3x3_s2_3to32_56", 1, 3, 56, 56, 32, 3, 3, s=(2, 2), pad=(1, 1, 1, 1)),
        qt.conv_case("i_3x3_16to16_14", 1, 16, 14, 14, 16, 3, 3, pad=(1, 1, 1, 1),
                     rounding="TONEAREST"),
        qt.conv_case("i_dw_3x3_8_20", 1, 8, 20, 20, 8, 3, 3, pad=(1, 1, 1, 1), groups=8),
        qt.dense_case("i_dense_200to30", (1,), 200, 30),
        tt.conv_case("f_3x3_16to16_14", 1, 16, 14, 14, 16, 3, 3, pad=(1, 1, 1, 1),
                     ops=("bias", "relu")),
    ]


def no_helper_calls(cdir, name, tap):
    """Compiles CDIR/NAME.c to assembly; no call to an rq_ function may be left."""
    out = os.path.join(cdir, name + ".s")
    cmd = ["gcc", "-std=c99", "-O3", "-march=x86-64-v3", "-Wall", "-Wextra", "-pedantic",
           "-Werror", "-S", "-I", cdir, os.path.join(cdir, name + ".c"), "-o", out]
    r = common.run(cmd)
    if not tap.ok(r[0] == 0, "%s: gcc -S" % name, common.describe(cmd, r)):
        return
    with open(out) as f:
        calls = sorted(set(CALL.findall(f.read())))
    tap.ok(not calls, "%s: no call to a requantize helper" % name,
           "gcc -O3 -march=x86-64-v3 -std=c99 left calls to %s" % ", ".join(calls))


def check(relayc, case, target, work, tap):
    built = compile_case(relayc, case, target, work, tap)
    if built:
        no_helper_calls(built[0], built[1], tap)


def main():
    return run_suite(sys.argv[1:], __doc__, "relayc-inline-", cases(), TARGETS, 3, check)


if __name__ == "__main__":
    sys.exit(main())
