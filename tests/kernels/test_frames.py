#!/usr/bin/python3
"""The x86 kernels' row buffers live in the workspace, not on the stack.

Usage: /usr/bin/python3 tests/kernels/test_frames.py PATH/TO/relayc [--keep DIR]

Some tuned kernels of the x86 targets work in a row buffer: the row-buffered float convs
(strided, or fewer output channels than a vector: up to 64 KiB), the stride-1 depthwise
convs' padded input plane (up to 64 KiB), the integer convs' row gathers and the
integer dense's input row (int16 on x86-64-avx2, uint8 on x86-64-avx512: up to 32 KiB
each), the integer depthwise convs' int32 planes (up to 64 KiB). The
memory plan places each as a buffer live for its node's step, inside NAME_WORKSPACE_SIZE.
For models that need them (the float cases of test_tuned.py and the integer ones of
test_qtuned.py, at sizes where the buffers are KiBs), on --target x86-64-avx2 and
x86-64-avx512:

  * the --report plan lists a row buffer of the kernel's node, live for that one step,
    of at least the bytes the kernel's layout needs (computed here from the shapes),
    inside the workspace, and the header's NAME_WORKSPACE_SIZE is the report's;
  * every function of NAME.c compiled by gcc at -O0 and at -O3 -march=native has a
    stack frame (-fstack-usage) of at most 4 KiB: register blocks only, no buffer.

Correctness of the same kernels (with canaries around the workspace) is
test_tuned.py's and test_qtuned.py's. Output is TAP.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import common  # noqa: E402
import test_qtuned as tq  # noqa: E402
import test_tuned as tt  # noqa: E402
from tuned_common import compile_case, run_suite  # noqa: E402

TARGETS = ["x86-64-avx2", "x86-64-avx512"]
FRAME_LIMIT = 4096
OPTS = [["-O0"], ["-O3", "-march=native"]]


def float_rows_bytes(ci, wi, kh, kw, s, d, pad, wo):
    """The float row buffer: per input channel and tap row, the padded row an output row
    reads, split into s column phases (emit/kernel_conv2d.c)."""
    wp = (wo - 1) * s + (kw - 1) * d + 1
    return ci * kh * s * ((wp + s - 1) // s) * 4


def cases():
    """(case, bytes the row buffer needs at least)"""
    c = []
    # 3x3 stride 2 from 3 channels at 224 wide: 8 KiB of rows (bench/ shape)
    c.append((tt.conv_case("f_s2_3to32_224", 1, 3, 224, 224, 32, 3, 3, s=(2, 2),
                           pad=(1, 1, 1, 1), ops=("bias", "relu")),
              float_rows_bytes(3, 224, 3, 3, 2, 1, 1, 112)))
    # 32 channels, stride 2, 56 wide: 43 KiB
    c.append((tt.conv_case("f_s2_32to16_56", 1, 32, 57, 57, 16, 3, 3, s=(2, 2),
                           pad=(1, 1, 1, 1)),
              float_rows_bytes(32, 57, 3, 3, 2, 1, 1, 29)))
    # fewer output channels than a vector, 5x5 (LeNet's first layer, wider)
    c.append((tt.conv_case("f_5x5_4to6_64", 1, 4, 64, 64, 6, 5, 5, pad=(2, 2, 2, 2)),
              float_rows_bytes(4, 64, 5, 5, 1, 1, 2, 64)))
    # depthwise, stride 1: each channel's input in a zero-padded plane, 30 x 60 floats
    c.append((tt.conv_case("f_dw_3x3_8_28x58", 1, 8, 28, 58, 8, 3, 3, pad=(1, 1, 1, 1), groups=8),
              30 * 60 * 4))
    # integer conv: the input a strip (here the whole row) reads, kh * ci a column, as int16
    # (avx2) or uint8 (avx512)
    c.append((tq.conv_case("q_3x3_16to16_56", 1, 16, 56, 56, 16, 3, 3, pad=(1, 1, 1, 1)),
              {"x86-64-avx2": 58 * 3 * 16 * 2,  # the whole row: 56 + 2 padded columns
               "x86-64-avx512": 58 * 3 * 16}))
    # integer dense: the input row widened to int16 (avx2) or shifted to uint8 (avx512)
    c.append((tq.dense_case("q_dense_4000to10", (1,), 4000, 10),
              {"x86-64-avx2": 4000 * 2, "x86-64-avx512": 4000}))
    # integer depthwise: each channel's input plane, 30 x 60 int32, and its 28 x 58 int32
    # outputs before they are narrowed to int8
    c.append((tq.conv_case("q_dw_3x3_8_28x58", 1, 8, 28, 58, 8, 3, 3, pad=(1, 1, 1, 1), groups=8),
              (30 * 60 + 28 * 58) * 4))
    return c


def frames(src, opts, work):
    """[(function, bytes)] from gcc -fstack-usage, or a str: the compiler's complaint."""
    obj = os.path.join(work, "frames.o")
    su = os.path.join(work, "frames.su")
    cmd = ["gcc", "-std=c99", "-c", "-fstack-usage"] + opts + \
        ["-I", os.path.dirname(src), src, "-o", obj]
    r = common.run(cmd)
    if r[0]:
        return common.describe(cmd, r)
    out = []
    with open(su) as f:
        for line in f:
            where, size, _ = line.rstrip("\n").split("\t")
            out.append((where.rsplit(":", 1)[-1], int(size)))
    return out


def check(relayc, case_need, target, work, tap):
    case, need = case_need
    if isinstance(need, dict):
        need = need[target]
    built = compile_case(relayc, case, target, work, tap, report=True)
    if not built:
        return
    cdir, name = built
    with open(os.path.join(cdir, "report.json")) as f:
        rep = json.load(f)
    ws = rep["memory"]["workspace_bytes"]
    rows = [b for b in rep["plan"]["buffers"] if "scratch_of_json_node" in b]
    steps = {k["json_node"]: k["step"] for k in rep["kernels"]}
    bad = []
    if not rows:
        bad.append("no row buffer in the plan")
    for b in rows:
        step = steps.get(b["scratch_of_json_node"])
        if b["first"] != step or b["last"] != step:
            bad.append("row buffer %r not live at its node's step %s alone" % (b, step))
        if b["size"] < need:
            bad.append("row buffer of %d bytes, the kernel needs %d" % (b["size"], need))
        if b["offset"] < 0 or b["offset"] + b["size"] > ws:
            bad.append("row buffer %r outside the workspace of %d bytes" % (b, ws))
    with open(os.path.join(cdir, name + ".h")) as f:
        m = re.search(r"#define %s_WORKSPACE_SIZE (\d+)" % name.upper(), f.read())
    if not m or int(m.group(1)) != ws:
        bad.append("header NAME_WORKSPACE_SIZE %s, report %d" % (m and m.group(1), ws))
    tap.ok(not bad, "%s: a row buffer of >= %d bytes in the workspace plan (%s)"
        % (name, need, ", ".join("%d bytes at %d" % (b["size"], b["offset"]) for b in rows)),
        "\n".join(bad))
    for opts in OPTS:
        fr = frames(os.path.join(cdir, name + ".c"), opts, cdir)
        if isinstance(fr, str):
            tap.ok(False, "%s: gcc %s -fstack-usage" % (name, " ".join(opts)), fr)
            continue
        big = [f for f in fr if f[1] > FRAME_LIMIT]
        top = max(fr, key=lambda f: f[1]) if fr else ("-", 0)
        tap.ok(not big and len(fr) > 0, "%s: gcc %s: stack frames <= %d bytes (largest %s, %d)"
            % (name, " ".join(opts), FRAME_LIMIT, top[0], top[1]),
            "\n".join("%s: %d bytes" % f for f in big))


def main():
    return run_suite(sys.argv[1:], __doc__, "relayc_frames_", cases(), TARGETS, 2 + len(OPTS), check)


if __name__ == "__main__":
    sys.exit(main())
