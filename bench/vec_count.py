#!/usr/bin/python3
"""vec_count.py: how an AArch64 compiler vectorised the emitted kernels' inner loops.

Usage: vec_count.py [--case NAME [--method M]] FILE.s ...  (assembly from
`aarch64-linux-gnu-gcc -O3 -S` or `clang --target=aarch64-linux-gnu -O3 -S`;
x86 assembly is counted too: packed multiply-adds / multiplies on xmm, ymm or zmm)

A loop is a label and a later branch back to it; an innermost loop is one that holds no
other. Per file, over its innermost loops, prints one JSON object per line:
{"file", "loops", "insns", "vec_fma", "scalar_fma", "spill", "int_dot"} (with --case, "case": NAME
and "method": M (default a64_gcc_O3) first, bench/run's form): vec_fma counts the
multiply-adds on vector registers (`fmla`/`fmls` on .4s, .2s or .2d lanes, by vector or by
element: 4 floats each for .4s), scalar_fma the scalar float multiply-adds and multiplies
(`fmadd`/`fmsub`/`fmul` on s registers, `fmla` on one lane `s`), spill the loads and
stores addressed from sp (x86: %rsp, %rbp; accumulators kept in memory), int_dot the x86
integer dot products (vpdpbusd, vpdpwssd, vpmaddwd, vpmaddubsw).
"""
import json
import os
import re
import sys

LABEL = re.compile(r"^(\.?[A-Za-z_$][\w.$]*):")
BRANCH = re.compile(r"^\s*(b|b\.?(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)|cbn?z|tbn?z"
                    r"|j[a-z]+)\s+(.*)$")


def loops_of(lines):
    """(start, end) line ranges of the innermost loops."""
    where = {}
    for i, line in enumerate(lines):
        m = LABEL.match(line)
        if m:
            where[m.group(1)] = i
    loops = []
    for i, line in enumerate(lines):
        m = BRANCH.match(line)
        if not m:
            continue
        target = m.group(3).split(",")[-1].strip()
        if target in where and where[target] < i:
            loops.append((where[target], i))
    return [a for a in loops
            if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in loops)]


def count(path):
    lines = open(path).read().split("\n")
    res = {"file": os.path.basename(path), "loops": 0, "insns": 0, "vec_fma": 0,
           "scalar_fma": 0, "spill": 0, "int_dot": 0}
    for a, b in loops_of(lines):
        res["loops"] += 1
        for line in lines[a + 1:b + 1]:
            s = line.strip()
            if not s or s.endswith(":") or s.startswith("."):
                continue
            res["insns"] += 1
            op = s.split()[0]
            args = s[len(op):]
            if op in ("fmla", "fmls") and re.search(r"v\d+\.(4s|2s|2d)\s*,", args):
                res["vec_fma"] += 1
            elif op in ("fmla", "fmls", "fmadd", "fmsub", "fmul") and re.match(r"\s*s\d+", args):
                res["scalar_fma"] += 1
            if (op.startswith("ld") or op.startswith("st")) and "[sp" in args:
                res["spill"] += 1
            # x86 (AT&T): packed multiply-adds / multiplies on xmm / ymm / zmm, scalar ss
            if re.match(r"v?(fn?m(add|sub)\d*|mul)ps", op):
                res["vec_fma"] += 1
            elif re.match(r"v?(fn?m(add|sub)\d*|mul)ss", op):
                res["scalar_fma"] += 1
            # x86 integer dot products: VNNI (vpdpbusd, vpdpwssd), vpmaddwd, vpmaddubsw
            if re.match(r"vp(dpbusds?|dpwssds?|maddwd|maddubsw)$", op):
                res["int_dot"] += 1
            if "(%rsp)" in args or "(%rbp)" in args:
                res["spill"] += 1
    return res


def main():
    args, head = sys.argv[1:], {}
    if args[:1] == ["--case"]:
        head = {"case": args[1], "method": "a64_gcc_O3"}
        args = args[2:]
        if args[:1] == ["--method"]:
            head["method"] = args[1]
            args = args[2:]
    for path in args:
        print(json.dumps(dict(head, **count(path))))


if __name__ == "__main__":
    main()
