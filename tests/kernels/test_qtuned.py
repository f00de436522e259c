#!/usr/bin/python3
"""Tests relayc's specialised integer conv2d / dense kernels (emit/kernel_qconv.c) exactly.

Usage: /usr/bin/python3 tests/kernels/test_qtuned.py PATH/TO/relayc [--cc CC ...] [--keep DIR]
                                                     [--only SUBSTR]

Each case is a small quantized Relay model (tests/relaywriter.py + tests/qnn/qnnwriter.py):
one qnn.conv2d or qnn.dense on an int8 or uint8 input, usually with the bias_add,
requantize (per-channel or per-tensor scales, UPWARD or TONEAREST, multipliers below and
above 1) and clip that relayc fuses into it, or the raw int32 sum. Shapes are awkward on
purpose: channels 1, 3, 5, 17; widths 1 and 7; stride 2 on odd sizes; dilation; groups;
depthwise (and a channel multiplier); padding wider than the kernel; batches; rows,
channels and columns the register blocks do not divide. Zero points go to the type
limits, on both operands. Weights that do not fit int8 once their zero point is taken off
are specialised only for the x86-64 targets (int16 weights), or not at all.

Every case is compiled for every --target; each output must equal, bit for bit (tolerance
0), both tests/qnn/qnn_ref.py (numpy, written from TVM's lowering rules) and
`relayc run --reference` (rq_conv2d / rq_matmul of runtime/kernels_int8.c on the unpacked
weights). The emitted C runs three ways: `relayc run --target T` (libtcc), and built with
every --cc (at -std=c99 -Wall -Wextra -pedantic -Werror; by default gcc -O0 with
-fsanitize=address,undefined, gcc -O3 -march=native, clang -O2 and tcc) into one harness
(qtuned_harness.c) that runs each model twice with different canaries around and inside
the outputs and the workspace. With RELAYC_TEST_QUICK set (CI's run under the sanitizers,
where relayc itself is what is checked) and no --cc, tcc alone builds the harness. Output
is TAP.
"""
import concurrent.futures
import os
import subprocess
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "qnn"))
sys.path.insert(0, TESTS)
import common  # noqa: E402
import gen_qnn  # noqa: E402
import qnn_ref as q  # noqa: E402
import relaywriter as rw  # noqa: E402
from tuned_common import TARGETS, check_harness, compare, parse_args, work_subdirs  # noqa: E402


class Case:
    def __init__(self, name, func, inputs, want):
        self.name, self.func, self.inputs, self.want = name, func, inputs, want


def finish(b, t, name, co, axis, per_channel, iscale, out, clip, rounding, big):
    """bias_add, requantize to `out` (None: the int32 sum stays the output), clip."""
    if out is None:
        if b.rng.randint(2):
            t = b.bias_add(t, b.ints((co,), "int32", -3000, 3000), axis=axis)
        return t
    t = b.bias_add(t, b.ints((co,), "int32", -3000, 3000), axis=axis)
    iscale = np.asarray(iscale, np.float32)
    spread = float(np.std(t[1].astype(np.float64))) + 1.0
    if big == "mixed":  # per-channel multipliers either side of 1/2 and 1
        oscale = float(np.mean(iscale)) / 1.5
    elif big:   # multipliers above 1: rq_fpm shifts left
        oscale = float(np.mean(iscale)) / 3.0
    else:
        oscale = float(np.mean(iscale)) * spread / 40.0
    ozp = {"int8": int(b.rng.randint(-20, 20)), "uint8": int(b.rng.randint(100, 150)),
           "int32": int(b.rng.randint(-1000, 1000))}[out]
    t = b.requantize(t, iscale, 0, oscale, ozp, axis=axis, rounding=rounding, out_dtype=out)
    if clip and out != "int32":
        lo, hi = q.QRANGE[out]
        t = b.clip(t, max(lo, ozp - 50), min(hi, ozp + 90))
    return t


def conv_case(name, n, ci, hi, wi, co, kh, kw, s=(1, 1), d=(1, 1), pad=(0, 0, 0, 0), groups=1,
              xdt="int8", wdt="int8", zx=3, zw=0, per_channel=True, out="int8", clip=True,
              rounding="UPWARD", big=False, wlo=None, whi=None, seed=None):
    b = gen_qnn.B(seed if seed is not None else zlib.crc32(name.encode()))
    x = b.input("x", b.ints((n, ci, hi, wi), xdt))
    w = b.const(b.ints((co, ci // groups, kh, kw), wdt, wlo, whi))
    sx = 0.05
    sw = gen_qnn.f32(b.rng.uniform(0.002, 0.02, co)) if per_channel else np.float32(0.01)
    t = b.conv2d(x, w, zx, zw, sx, sw, strides=s, padding=pad, dilation=d, groups=groups)
    t = finish(b, t, name, co, 1, per_channel, np.float32(sx) * sw, out, clip, rounding, big)
    return Case(name, rw.Function(b.params, t[0]), b.inputs, t[1])


def dense_case(name, lead, k, nout, xdt="int8", wdt="int8", zx=3, zw=0, per_channel=True,
               out="int8", clip=True, rounding="UPWARD", big=False, wlo=None, whi=None):
    b = gen_qnn.B(zlib.crc32(name.encode()))
    x = b.input("x", b.ints(tuple(lead) + (k,), xdt))
    w = b.const(b.ints((nout, k), wdt, wlo, whi))
    sx = 0.05
    sw = gen_qnn.f32(b.rng.uniform(0.002, 0.02, nout)) if per_channel else np.float32(0.01)
    t = b.dense(x, w, zx, zw, sx, sw)
    t = finish(b, t, name, nout, len(lead), per_channel, np.float32(sx) * sw, out, clip,
               rounding, big)
    return Case(name, rw.Function(b.params, t[0]), b.inputs, t[1])


def is_dw_plane(name):
    """The depthwise cases (groups == channels in == channels out): on x86 their input goes
    into a plane (float32, or int32 where a sum could pass 2^24: names ending _i32)."""
    return name.startswith("depthwise") and name != "depthwise_mult2"


def cases():
    c = []
    # conv2d: the shapes of tests/kernels/test_tuned.py, then the integer edge cases
    c.append(conv_case("lenet_5x5_1to6_pad2", 1, 1, 28, 28, 6, 5, 5, pad=(2, 2, 2, 2)))
    c.append(conv_case("ci3_co5_stride2_odd", 1, 3, 9, 7, 5, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       xdt="uint8", zx=128, rounding="TONEAREST"))
    c.append(conv_case("ci5_co17_w7", 1, 5, 7, 7, 17, 3, 3, pad=(1, 1, 1, 1), zx=-128))
    c.append(conv_case("ci17_co3_width1", 1, 17, 11, 1, 3, 3, 3, pad=(1, 1, 1, 1), zx=127,
                       out="uint8"))
    c.append(conv_case("width1_kernel1x3", 1, 3, 5, 1, 5, 1, 3, pad=(0, 1, 0, 1),
                       per_channel=False))
    c.append(conv_case("dilation2_w7", 1, 5, 9, 7, 17, 3, 3, d=(2, 2), pad=(2, 2, 2, 2),
                       xdt="uint8", zx=0, wdt="uint8", zw=128))
    c.append(conv_case("dilation2_nopad", 1, 3, 13, 15, 9, 3, 3, d=(2, 3), zx=-7))
    c.append(conv_case("groups3", 1, 6, 8, 10, 9, 3, 3, pad=(1, 1, 1, 1), groups=3))
    c.append(conv_case("depthwise17", 1, 17, 9, 11, 17, 3, 3, pad=(1, 1, 1, 1), groups=17,
                       zx=-128, zw=-3, wlo=-100, whi=100))
    c.append(conv_case("depthwise_s2_odd", 1, 5, 13, 13, 5, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=5, xdt="uint8", zx=255, per_channel=False))
    c.append(conv_case("depthwise_5x5_d2", 1, 3, 12, 14, 3, 5, 5, d=(2, 2), pad=(4, 3, 4, 5),
                       groups=3, rounding="TONEAREST"))
    c.append(conv_case("depthwise_width1", 1, 4, 6, 1, 4, 3, 3, pad=(1, 1, 1, 1), groups=4,
                       out="int32"))
    # rows wider than 16 that 16 does not divide: x86-64-avx512 runs them as strips of
    # 16, the last overlapping the one before
    c.append(conv_case("depthwise_row_of_29", 1, 6, 5, 29, 6, 3, 3, pad=(1, 1, 1, 1), groups=6,
                       zx=4, out="uint8"))
    c.append(conv_case("depthwise_s2_row_of_31", 1, 4, 5, 61, 4, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=4, rounding="TONEAREST"))
    # a row of two vectors: under clang (the kernels' clang -march=native build) it goes in
    # strips of one vector on both x86 targets, under gcc as one loop
    c.append(conv_case("depthwise_row_of_32", 1, 3, 4, 32, 3, 3, 3, pad=(1, 1, 1, 1), groups=3,
                       zx=-2, out="uint8"))
    # 8-bit outputs on rows of 8 or fewer at stride 1: stored straight from the loop over a
    # row (wider rows, and strided ones, through an int32 plane of their own)
    c.append(conv_case("depthwise_u8_rows_of_8", 1, 24, 8, 8, 24, 3, 3, pad=(1, 1, 1, 1),
                       groups=24, xdt="uint8", zx=3, out="uint8"))
    c.append(conv_case("depthwise_rows_of_5", 1, 20, 4, 5, 20, 3, 3, pad=(1, 1, 1, 1), groups=20,
                       zx=-9))
    # strided along the rows: the float plane split by column phase (stride 3 with a dilated
    # 5x5 reading some phases only; stride 1 x 2; stride 2 on rows of 21, x86-64-avx512's
    # strips of 16 overlapping)
    c.append(conv_case("depthwise_phases_s3_5x5_d2", 1, 6, 23, 25, 6, 5, 5, s=(3, 3), d=(2, 2),
                       pad=(4, 4, 4, 4), groups=6, zx=-128))
    c.append(conv_case("depthwise_phases_s1x2", 1, 8, 9, 20, 8, 3, 3, s=(1, 2), pad=(1, 1, 1, 1),
                       groups=8, zx=4, rounding="TONEAREST"))
    c.append(conv_case("depthwise_phases_s2_strips_u8", 1, 4, 6, 41, 4, 3, 3, s=(2, 2),
                       pad=(1, 1, 1, 1), groups=4, xdt="uint8", zx=130, out="uint8"))
    # outputs of at most 16 pixels a channel: blocks of channels as the vector lanes (48 in
    # one block; 80 in blocks of 16, stride 2; a 5x5 kernel on 2 x 2, batch 2, int32 and
    # raw sums; 1 x 1)
    c.append(conv_case("depthwise_lanes_4x4", 1, 48, 4, 4, 48, 3, 3, pad=(1, 1, 1, 1), groups=48,
                       xdt="uint8", zx=0, out="uint8"))
    c.append(conv_case("depthwise_lanes_s2_80", 1, 80, 7, 8, 80, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       groups=80, zx=-128, rounding="TONEAREST"))
    c.append(conv_case("depthwise_lanes_5x5_b2", 2, 24, 2, 2, 24, 5, 5, pad=(2, 2, 2, 2), groups=24,
                       zx=5, out="int32", big="mixed"))
    c.append(conv_case("depthwise_lanes_sum_1x1", 1, 16, 1, 1, 16, 3, 3, pad=(1, 1, 1, 1),
                       groups=16, zx=-3, out=None))
    c.append(conv_case("depthwise_mult2", 1, 5, 7, 9, 10, 3, 3, pad=(1, 1, 1, 1), groups=5))
    c.append(conv_case("depthwise_prepadded", 1, 8, 14, 14, 8, 3, 3, groups=8, zx=-5,
                       clip=True))
    c.append(conv_case("pointwise_17to33", 1, 17, 7, 9, 33, 1, 1, xdt="uint8", zx=200))
    c.append(conv_case("pointwise_16to64", 1, 16, 12, 12, 64, 1, 1, zx=-5))
    c.append(conv_case("pointwise_6to5", 1, 6, 5, 5, 5, 1, 1, zx=-1, big=True))
    c.append(conv_case("pointwise_stride2", 1, 8, 9, 9, 12, 1, 1, s=(2, 2)))
    c.append(conv_case("batch2", 2, 8, 6, 9, 8, 3, 3, pad=(1, 1, 1, 1), zx=100))
    c.append(conv_case("wide_32to32", 1, 32, 10, 37, 32, 3, 3, pad=(1, 1, 1, 1), zx=-5))
    c.append(conv_case("strips_48ch_wide", 1, 48, 4, 130, 6, 3, 3, pad=(1, 1, 1, 1), zx=9))
    c.append(conv_case("mbv2_asym_pad_s2", 1, 3, 16, 16, 16, 3, 3, s=(2, 2), pad=(0, 0, 1, 1),
                       xdt="uint8", zx=0, wdt="uint8", zw=0, wlo=0, whi=127))
    c.append(conv_case("pad_wider_than_kernel", 1, 2, 4, 5, 3, 3, 3, pad=(3, 4, 3, 2), zx=-2))
    c.append(conv_case("stride3_kernel4", 1, 3, 17, 19, 5, 4, 4, s=(3, 3), pad=(1, 2, 0, 1)))
    c.append(conv_case("stem_7x7_s2", 1, 3, 23, 21, 8, 7, 7, s=(2, 2), pad=(3, 3, 3, 3), zx=-128))
    c.append(conv_case("depthwise_7x7", 1, 4, 9, 10, 4, 7, 7, pad=(3, 3, 3, 3), groups=4, zx=1))
    # x86: sums past 2^24 keep the int32 plane (the others are float, exact)
    c.append(conv_case("depthwise_23x23_i32", 1, 2, 24, 25, 2, 23, 23, pad=(1, 1, 1, 1),
                       groups=2, zx=-128, wlo=-128, whi=-128))
    c.append(conv_case("int32_sum", 1, 4, 6, 8, 6, 3, 3, pad=(1, 1, 1, 1), zx=-128, zw=127,
                       wdt="int8", out=None, wlo=0, whi=127))
    c.append(conv_case("requant_int32", 1, 4, 6, 8, 6, 3, 3, pad=(0, 1, 1, 0), out="int32",
                       per_channel=False))
    c.append(conv_case("big_multiplier", 1, 3, 6, 7, 4, 3, 3, pad=(1, 1, 1, 1), big=True,
                       rounding="TONEAREST", per_channel=False))
    c.append(conv_case("mixed_multipliers", 1, 4, 6, 7, 9, 3, 3, pad=(1, 1, 1, 1), big="mixed",
                       rounding="TONEAREST", out="int32"))
    c.append(conv_case("mixed_multipliers_dw", 1, 6, 6, 7, 6, 3, 3, pad=(1, 1, 1, 1), groups=6,
                       big="mixed"))
    c.append(conv_case("weights_uint8_zw255", 1, 4, 7, 6, 5, 3, 3, pad=(1, 1, 1, 1),
                       wdt="uint8", zw=255, wlo=128, whi=255, xdt="uint8", zx=255))
    # w - zw does not fit int8: only the int16 row buffers (x86, generic) specialise these
    c.append(conv_case("wide_w_uint8_weights", 1, 3, 6, 6, 4, 3, 3, pad=(1, 1, 1, 1),
                       wdt="uint8", zw=0))
    c.append(conv_case("wide_w_int8_zw127", 1, 3, 6, 6, 4, 3, 3, pad=(1, 1, 1, 1), zw=127))
    # short dot products (fewer than 128 terms): the x86 targets compute them in float32
    # (TK_CONV_F32) on rows of 16 columns or more: a stem (channel blocks of 5 and the
    # rest; the last strip overlapping), a row of 17, column phases of stride 3 with
    # dilation, the raw sum, a row of 45 (x86-64-avx512: strips of 32, the last
    # overlapping; blocks of 8 channels and the rest)
    c.append(conv_case("f32_stem_3to32_s2", 1, 3, 33, 35, 32, 3, 3, s=(2, 2), pad=(1, 1, 1, 1),
                       zx=-128, rounding="TONEAREST"))
    c.append(conv_case("f32_row_of_17", 2, 2, 12, 21, 7, 5, 5, xdt="uint8", zx=0,
                       wdt="uint8", zw=128, wlo=0, whi=255, out="uint8"))
    c.append(conv_case("f32_stride3_dilated", 1, 3, 13, 61, 13, 3, 4, s=(2, 3), d=(1, 2),
                       pad=(2, 1, 0, 3), zx=127, out=None))
    c.append(conv_case("f32_row_of_45", 1, 3, 5, 45, 20, 3, 3, pad=(1, 1, 1, 1), zx=7,
                       rounding="TONEAREST"))
    c.append(conv_case("f32_pointwise_120", 1, 120, 3, 20, 9, 1, 1, zx=-128, wlo=-128, whi=-100,
                       big=True))
    # longer dot products whose row buffer is small (16 KB or less): float32 too
    c.append(conv_case("f32_long_pointwise_160", 1, 160, 2, 18, 24, 1, 1, zx=-128, out="uint8"))
    # 1x1 convs of stride 1 without padding: the pixels flattened into rows as wide as the
    # buffer allows, a multiple of 16 where one divides the pixels (12 x 28 as one row of
    # 336: x86-64-avx512's strips of 32 and a block of the last 16), else the widest (10 x
    # 19 as 190: the last strip overlapping)
    c.append(conv_case("f32_flat_rest_16to40", 1, 16, 12, 28, 40, 1, 1, zx=-7))
    c.append(conv_case("f32_flat_b2_u8", 2, 24, 10, 19, 12, 1, 1, xdt="uint8", zx=200,
                       out="uint8", rounding="TONEAREST"))
    # ... also where the rows are narrower than 16 (8 x 8 as one row of 64, 4 x 4 as 16)
    c.append(conv_case("f32_flat_narrow_8x8", 1, 32, 8, 8, 24, 1, 1, xdt="uint8", zx=5,
                       out="uint8"))
    c.append(conv_case("f32_flat_narrow_4x4", 1, 96, 4, 4, 40, 1, 1, zx=-3))
    # dot products of 128 terms or more on wide rows (TK_CONV_ROWS): on x86-64-avx512 the
    # uint8 buffers of the output rows are copied from a ring of the input rows, each
    # transposed once (here uint8 input, stride 2, asymmetric padding: 5 output rows read
    # 11 padded input rows)
    c.append(conv_case("rows_ring_u8_s2", 1, 32, 9, 45, 12, 3, 3, s=(2, 2), pad=(1, 1, 2, 1),
                       xdt="uint8", zx=140))
    # groups and wide weights: no target specialises it (the generic kernel stays)
    c.append(conv_case("fallback_groups_wide_w", 1, 4, 5, 6, 4, 3, 3, pad=(1, 1, 1, 1),
                       groups=2, zw=127))
    # random conv2d
    rng = np.random.RandomState(11)
    for i in range(10):
        g = int(rng.choice([1, 1, 1, 2]))
        ci = g * int(rng.randint(1, 9))
        co = g * int(rng.randint(1, 13))
        kh, kw = int(rng.randint(1, 5)), int(rng.randint(1, 5))
        sh, sw = int(rng.randint(1, 3)), int(rng.randint(1, 3))
        dh, dw = int(rng.randint(1, 3)), int(rng.randint(1, 3))
        pad = tuple(int(v) for v in rng.randint(0, 3, 4))
        hi = max(int(rng.randint(1, 16)), dh * (kh - 1) + 1 - pad[0] - pad[2])
        wi = max(int(rng.randint(1, 30)), dw * (kw - 1) + 1 - pad[1] - pad[3])
        xdt = ["int8", "uint8"][i % 2]
        zx = int(rng.randint(*((-128, 128) if xdt == "int8" else (0, 256))))
        out = ["int8", "uint8", "int32", None][i % 4]
        c.append(conv_case("random%d" % i, int(rng.randint(1, 3)), ci, hi, wi, co, kh, kw,
                           (sh, sw), (dh, dw), pad, g, xdt=xdt, zx=zx, out=out,
                           per_channel=bool(i % 3), seed=100 + i))
    # dense
    c.append(dense_case("gemv_1x1", (1,), 1, 1))
    c.append(dense_case("gemv_k37_n5", (1,), 37, 5, zx=-128, rounding="TONEAREST"))
    c.append(dense_case("gemv_k400_n120", (1,), 400, 120, zx=0))
    c.append(dense_case("gemv_k17_n3_uint8", (1,), 17, 3, xdt="uint8", wdt="uint8", zx=255,
                        zw=128))
    c.append(dense_case("gemv_zw_limits", (1,), 33, 7, wdt="int8", zw=-128, zx=127,
                        wlo=-128, whi=-1))
    c.append(dense_case("gemm_m3_k33_n19", (3,), 33, 19, zw=5, out="uint8"))
    c.append(dense_case("gemm_rank3", (2, 3), 20, 9, out="int32", per_channel=False))
    c.append(dense_case("dense_int32_sum", (2,), 12, 10, zx=-9, zw=3, out=None))
    c.append(dense_case("dense_big_multiplier", (1,), 16, 6, big=True, per_channel=False))
    c.append(dense_case("dense_mixed_multipliers", (2,), 24, 11, big="mixed", out="uint8"))
    c.append(dense_case("dense_k1024_n1000", (1,), 1024, 1000, zx=3))
    c.append(dense_case("dense_uint8_w_zw0", (1,), 40, 8, wdt="uint8", zw=0))
    # x86: several rows of x a pass and the rest one at a time, the sums of columns in
    # chunks of 256 (the last 5 wide: a block of 4, then one column)
    c.append(dense_case("gemm_m6_k70_n261_zw", (6,), 70, 261, zw=3, out="uint8",
                        rounding="TONEAREST"))
    c.append(dense_case("gemm_m9_k64_n300_mixed", (9,), 64, 300, zx=-128, big="mixed"))
    # x86-64-avx512: rows of x and of the weights padded with zeros to 512 (4 rows of x a
    # pass, then 1; gemv_k400_n120 pads to 448 at batch 1)
    c.append(dense_case("gemm_m5_k460_n37_zw", (5,), 460, 37, zw=2, zx=-7))
    return c


def main():
    args = parse_args(sys.argv[1:], __doc__, only=True)
    if args is None:
        return 2
    relayc, keep, ccs, only = args
    with common.work_dir("relayc_qtuned_", keep) as work:
        return check_all(relayc, ccs, only, work)


def check_all(relayc, ccs, only, work):
    src, io = work_subdirs(work)
    all_cases = [c for c in cases() if not only or only in c.name]
    report = common.Tap(diag_lines=None)
    tap = report.result
    report.plan(len(all_cases) * (2 + len(TARGETS) * (3 + len(ccs))) +
                sum(1 for c in all_cases if c.name.startswith("f32_")) *
                sum(1 for t in TARGETS if t.startswith("x86-64")) +
                sum(1 for c in all_cases if c.name.startswith("f32_flat")) *
                sum(1 for t in TARGETS if t.startswith("x86-64")) +
                sum(1 for c in all_cases if c.name.startswith("rows_ring")) +
                sum(1 for c in all_cases if is_dw_plane(c.name)) *
                sum(1 for t in TARGETS if t.startswith("x86-64")) +
                sum(1 for c in all_cases if c.name.startswith("depthwise_phases")) *
                sum(1 for t in TARGETS if t.startswith("x86-64")) +
                sum(1 for c in all_cases if c.name == "depthwise_row_of_32") *
                sum(1 for t in TARGETS if t.startswith("x86-64")))
    table, sources, jobs = [], [], []
    for ci, case in enumerate(all_cases):
        cdir = os.path.join(work, "case%d" % ci)
        os.makedirs(cdir, exist_ok=True)
        model = os.path.join(cdir, "model.json")
        with open(model, "w") as f:
            f.write(rw.save_json(rw.Module({"main": case.func}), version="0.18.0"))
        in_flags = []
        for k, (nm, a) in enumerate(case.inputs.items()):
            p = os.path.join(cdir, "input_%d.npy" % k)
            np.save(p, a)
            in_flags += ["--input", "%s=%s" % (nm, p)]
        jobs.append((ci, case, cdir, model, in_flags))

    def prepare(job):
        """relayc run --reference, then per target: compile, run (libtcc), --dump-after."""
        ci, case, cdir, model, in_flags = job
        res = []
        rdir = os.path.join(cdir, "ref")
        os.makedirs(rdir, exist_ok=True)
        r = subprocess.run([relayc, "run", model, "--reference", "-o", rdir] + in_flags,
                           capture_output=True, text=True)
        ref = np.load(os.path.join(rdir, "output_0.npy")) if r.returncode == 0 else None
        res.append(("ref", r, ref))
        for t in TARGETS:
            name = "q%d_%s" % (ci, t.replace("-", "_"))
            rc = subprocess.run([relayc, "compile", model, "--target", t, "--name", name,
                                 "-o", src], capture_output=True, text=True)
            jdir = os.path.join(cdir, t)
            os.makedirs(jdir, exist_ok=True)
            rj = subprocess.run([relayc, "run", model, "--target", t, "-o", jdir] + in_flags,
                                capture_output=True, text=True)
            jit = np.load(os.path.join(jdir, "output_0.npy")) if rj.returncode == 0 else None
            rd = subprocess.run([relayc, "info", model, "--target", t, "--dump-after",
                                 "pack-qnn"], capture_output=True, text=True)
            res.append((t, name, rc, rj, jit, rd))
        return res

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        prepared = list(pool.map(prepare, jobs))
    specialised = {}
    for (ci, case, cdir, model, in_flags), res in zip(jobs, prepared):
        _, r, ref = res[0]
        tap(r.returncode == 0 and compare(ref, case.want) is None,
            "%s: relayc run --reference equals qnn_ref" % case.name,
            r.stderr if r.returncode else compare(ref, case.want))
        for t, name, rc, rj, jit, rd in res[1:]:
            tap(rc.returncode == 0, "%s %s: relayc compile" % (case.name, t), rc.stderr)
            tap(rj.returncode == 0 and compare(jit, case.want) is None,
                "%s %s: relayc run (libtcc) equals qnn_ref" % (case.name, t),
                rj.stderr if rj.returncode else compare(jit, case.want))
            spec = " tile=" in "".join(l for l in rd.stdout.splitlines()
                                       if " = qconv2d(" in l or " = qmatmul(" in l)
            specialised[(ci, t)] = spec
            want = not case.name.startswith("fallback") and (
                not case.name.startswith("wide_w") or t.startswith("x86-64") or t == "generic")
            tap(rd.returncode == 0 and spec == want,
                "%s %s: %s" % (case.name, t, "gets a specialised kernel" if want
                               else "keeps the generic kernel"),
                rd.stderr + rd.stdout[-2000:])
            if case.name.startswith("f32_") and t.startswith("x86-64"):
                tap(" tile=conv_f32 " in rd.stdout, "%s %s: computed in float32" % (case.name, t),
                    rd.stdout[-2000:])
            if case.name.startswith("f32_flat") and t.startswith("x86-64"):
                n, _, h, w = case.want.shape
                tap(" flat=%d" % (h * w) in rd.stdout,
                    "%s %s: the pixels flattened into one row of %d" % (case.name, t, h * w),
                    rd.stdout[-2000:])
            if is_dw_plane(case.name) and t.startswith("x86-64"):
                plane = "i32" if case.name.endswith("_i32") else "f32"
                want = " tile=depthwise 1x1 packed plane=" + plane  # one channel at a time
                if case.name.startswith("depthwise_lanes"):
                    plane, want = "channels-as-lanes", " lanes plane=f32"
                tap(want in rd.stdout, "%s %s: the %s plane" % (case.name, t, plane),
                    rd.stdout[-2000:])
            text = ""  # the emitted C, for the checks of its text below
            if rc.returncode == 0:
                with open(os.path.join(src, name + ".c")) as f:
                    text = f.read()
            if case.name.startswith("depthwise_phases") and t.startswith("x86-64"):
                tap("split by column phase" in text,
                    "%s %s: the plane split by column phase" % (case.name, t))
            if case.name == "depthwise_row_of_32" and t.startswith("x86-64"):
                tap("#if defined(__clang__)\n                int o0;" in text,
                    "%s %s: strips of one vector under clang" % (case.name, t))
            if case.name.startswith("rows_ring") and t == "x86-64-avx512":
                tap("from the ring's slots" in text,
                    "%s %s: the rows buffers come from a ring of transposed input rows" %
                    (case.name, t))
            if rc.returncode:
                continue
            sources += [os.path.join(src, name + ".c"), os.path.join(src, name + "_constants.c")]
            ins = list(case.inputs.values())
            for k, a in enumerate(ins):
                np.ascontiguousarray(a).tofile(os.path.join(io, "%s.in%d" % (name, k)))
            table.append((ci, t, name, [a.nbytes for a in ins], case.want.nbytes))
        tap(any(specialised.get((ci, t)) for t in TARGETS) or case.name.startswith("fallback"),
            "%s: some target specialises it" % case.name)

    def check(ci, name):
        want = all_cases[ci].want
        return compare(np.fromfile(os.path.join(io, name + ".out0"), want.dtype), want)

    check_harness(report, "qtuned_harness.c", work, io, sources, table, ccs, all_cases,
                  "emitted kernels equal qnn_ref", check)
    return report.finish()


if __name__ == "__main__":
    sys.exit(main())
