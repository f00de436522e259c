#!/usr/bin/python3
"""gcc fuses the float kernels' multiply-adds in its ISO modes as in its GNU modes.

Usage: /usr/bin/python3 tests/kernels/test_contract.py PATH/TO/relayc [--keep DIR]

gcc contracts a * b + c into one fused multiply-add under -std=gnu99 and the other GNU
modes (its default), but not under -std=c99 or -std=c11, where the float kernels, whose
loops are built on multiply-adds, ran at half the speed. The emitted NAME.c asks gcc for
the contraction itself (a `#pragma GCC optimize` at its top). For float models of every
tiled kind (a conv vectorised over the channels with clipped border strips, a strided
row-buffered conv, a 1x1 conv, a depthwise conv on its padded plane, a dense layer) on
every target: NAME.c compiled by gcc -O3 -march=x86-64-v3 -S (a core with FMA, whatever
the host) holds as many fused multiply-adds (vfmadd / vfnmadd) under -std=c99 and
-std=c11 as under -std=gnu99, and some (but on cortex-m). Output is TAP.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import test_tuned as tt  # noqa: E402
from tuned_common import compile_case, run_suite  # noqa: E402

TARGETS = ["generic", "x86-64-avx2", "x86-64-avx512", "cortex-m"]
MODES = ["-std=c99", "-std=c11"]
FMA = re.compile(r"^\s*vf(n?)m(add|sub)\d", re.M)


def cases():
    return [
        tt.conv_case("c_oc_3x3_32to32_30", 1, 32, 6, 30, 32, 3, 3, pad=(1, 1, 1, 1),
                     ops=("bias", "relu")),
        tt.conv_case("c_rows_s2_3to16_40", 1, 3, 9, 40, 16, 3, 3, s=(2, 2), pad=(1, 1, 1, 1)),
        tt.conv_case("c_1x1_16to24_12", 1, 16, 12, 12, 24, 1, 1, ops=("bn",)),
        tt.conv_case("c_dw_3x3_8_20x33", 1, 8, 20, 33, 8, 3, 3, pad=(1, 1, 1, 1), groups=8),
        tt.dense_case("c_dense_200to30", (1,), 200, 30, ops=("bias",)),
    ]


def fmas(src, std, work):
    """The fused multiply-adds in gcc's assembly of src, or a str: its complaint."""
    out = os.path.join(work, "contract%s.s" % std.replace("=", "_"))
    cmd = ["gcc", std, "-O3", "-march=x86-64-v3", "-Wall", "-Wextra", "-pedantic", "-Werror",
           "-S", "-I", os.path.dirname(src), src, "-o", out]
    r = common.run(cmd)
    if r[0]:
        return common.describe(cmd, r)
    with open(out) as f:
        return len(FMA.findall(f.read()))


def check(relayc, case, target, work, tap):
    built = compile_case(relayc, case, target, work, tap)
    if not built:
        return
    cdir, name = built
    src = os.path.join(cdir, name + ".c")
    gnu = fmas(src, "-std=gnu99", cdir)
    # (cortex-m's blocks, for scalar cores, need not become fused multiply-adds on x86: its
    # dense rows' sums went to vector multiplies and horizontal adds; equal counts suffice)
    if not tap.ok(isinstance(gnu, int) and (gnu > 0 or target == "cortex-m"),
                  "%s: gcc -std=gnu99 -O3 -march=x86-64-v3: %s fused multiply-adds" % (name, gnu),
                  gnu if isinstance(gnu, str) else "none"):
        return
    for std in MODES:
        n = fmas(src, std, cdir)
        tap.ok(n == gnu, "%s: gcc %s: %s fused multiply-adds, as -std=gnu99" % (name, std, n),
               n if isinstance(n, str) else "%d under %s, %d under -std=gnu99" % (n, std, gnu))


def main():
    return run_suite(sys.argv[1:], __doc__, "relayc_contract_", cases(), TARGETS, 2 + len(MODES),
                     check)


if __name__ == "__main__":
    sys.exit(main())
