/*
 * pack_qnn.c: the kernel choice and weight packing of the integer conv2d and dense
 * (IR_QCONV2D, IR_QMATMUL with constant 8-bit weights), for emit/kernel_qconv.c.
 *
 * Every specialised kernel computes, modulo 2^32, the same sum as rq_conv2d / rq_matmul,
 *   bias + sum over the taps inside the input of (x - zx) * (w - zw),
 * but rearranged so the inner loops multiply an input as it is stored (int8 or uint8) by a
 * weight without its zero point, w' = w - zw, packed at compile time as int8 (int16 for
 * TK_CONV_ROWS):
 *   - conv2d, direct (TK_CONV): w' packed [groups][ceil(cog/rb)][cig][kh][kw][rb] (zero-padded
 *     channels). Rows and columns whose taps are all inside the input sum x * w', and the
 *     input zero point is folded in: sum (x - zx) w' = sum x w' - zx sum w', where sum w' runs
 *     over the rows of taps [ky0, ky1) the output row uses. The input a.q.ztab is the table
 *     Q[oc][k] = zx * (sum of w'[oc] over taps ky < k), k = 0..kh, so that correction is
 *     Q[oc][ky1] - Q[oc][ky0] (no table when zx is 0). Pixels near the left and right border
 *     clip their taps and subtract zx from each input instead;
 *     On --target cortex-m (int8 x and w, an even number of input channels per group)
 *     tile.vw 2: w' packed [groups][blocks][cig/2][kh][kw][rb][2] as int16 pairs of input
 *     channels, read against an int16 copy of the input in the same pairs (the DSP
 *     extension's dual multiply-add); the same table;
 *   - depthwise conv2d (TK_DEPTHWISE, groups == channels in == channels out): w' as OIHW
 *     (with tile.lanes, x86, outputs of a few pixels: [co/lanes][kh][kw][lanes]),
 *     the same table; on the x86 targets and generic (tile.rows) no table: each channel's
 *     input is copied as x - zx into a zero-padded plane (workspace scratch), of floats
 *     (tile.vw 1, x86) when every sum is an integer of at most 2^24, else of int32;
 *   - conv2d in float32 (TK_CONV_F32, the x86 targets, groups 1, rows of 16 outputs
 *     or more, dot products of fewer than RC_QF32_MAX_ROW terms or row buffers within
 *     RC_QF32_LONG_BYTES): w' packed as float
 *     [blocks][ci][kh][kw][rb], the input buffered per output row as x - zx in floats;
 *     exact, as every partial sum is an integer of at most 2^24 (checked); the bias is
 *     added to the converted sum in int32;
 *   - conv2d, rows (TK_CONV_ROWS, the x86 targets and generic, groups 1): w' packed
 *     [co][kw][kh][ci] as int16 (so weights far from their zero point are taken too);
 *     each output row gathers the input rows it reads into a local int16 buffer of x - zx,
 *     0 in the padding (so no table), laid out [column][kh][ci] so that every tap of a pixel
 *     is one contiguous run (dilation 1), and the inner loop is a dot product that compilers
 *     turn into multiply-add instructions; the sums of a strip go to an int32 buffer after
 *     the rows in the scratch, requantized per channel after the strip's blocks. On
 *     --target x86-64-avx512 (tile.vw 1, when every w' fits int8) the buffer is uint8
 *     instead, x + 128 for int8 x (x for uint8), the zero point's byte in the padding,
 *     against int8 w': unsigned x signed byte dot
 *     products, which gcc turns into vpdpbusd (AVX-512 VNNI, AVX-VNNI); the table is one
 *     entry per channel, -pad * sum w', added (sum (x - zx) w' = sum xu w' - pad sum w',
 *     padding included, exact modulo 2^32);
 *   - dense (TK_GEMV, rb rows of weights at a time; wb 2: each row of x widened to int16
 *     first, for the x86 targets and generic, and for --target cortex-m with int8 x and w,
 *     where the kernel uses the DSP extension's dual multiply-add on sums of 256 x w, bounded by
 *     summing runs of tile.wr inputs, dsp_chunk): the weights stay as stored
 *     ([n][k], 8-bit); with sx the
 *     sum of a row of x, sum (x - zx)(w - zw) = sum x w - zw sx - zx sum w + k zx zw, and
 *     the input a.q.ztab holds the constant part Z[n] = k zx zw - zx sum w[n] (no table when
 *     zx is 0). On --target x86-64-avx512 with int8 weights (tile.vw 1) the row of x is
 *     buffered as uint8, x + 128 for int8 x, and Z[n] also takes - 128 sum w[n].
 * Sums of products are kept in int32 only where their bound, from the packed weights and
 * the 8-bit input range, is at most INT32_MAX (no signed overflow); everything else (the
 * bias, the table, zw sx) is added in uint32_t, which wraps as TVM's int32 arithmetic does.
 * A node whose bounds do not hold, or whose w' does not fit the packed type, keeps the
 * generic kernel.
 * The bias input and the requantize parameters are not changed. The layouts the emitters
 * share are in layout.c.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static const Value *val(const Graph *g, int v) { return &g->values[v]; }

/* The x86 targets also get the kernels that sum in floats (TK_CONV_F32, the float
 * depthwise plane and lanes). */
static bool x86(int target) { return target == TARGET_X86_64_AVX2 || target == TARGET_X86_64_AVX512; }


static const Tensor *cten(const Graph *g, int v) { return &g->consts[val(g, v)->constant]; }

/* Element i of an 8-bit constant tensor, as its value. */
static int32_t w8(const Tensor *t, int64_t i)
{
    return t->dtype == DT_I8 ? ((const int8_t *)t->data)[i] : ((const uint8_t *)t->data)[i];
}

/* The largest |x|, and the largest |x - zx|, of an 8-bit input of type dt. */
static int64_t xmax_raw(DType dt) { return dt == DT_I8 ? 128 : 255; }
static int64_t xmax_sub(DType dt, int32_t zx)
{
    int64_t lo = dt == DT_I8 ? -128 : 0, hi = dt == DT_I8 ? 127 : 255;
    int64_t a = lo - zx, b = hi - zx;
    a = a < 0 ? -a : a, b = b < 0 ? -b : b;
    return a > b ? a : b;
}

static int64_t conv_row(const Graph *g, const Node *n)
{
    const Window *w = &n->a.conv;
    return val(g, n->in[0])->shape.dim[1] / w->groups * w->kh * w->kw;
}

/* Index of plain weight (o, t) (o output channel, t in [0, cig*kh*kw) in OIHW order) in
 * the packed layout of n. */
static int64_t packed_index(const Graph *g, const Node *n, int64_t o, int64_t t)
{
    const Window *w = &n->a.conv;
    const Tile *tl = &n->a.tile;
    int64_t row = conv_row(g, n), co = val(g, n->out)->shape.dim[1];
    if (tl->kind == TK_DEPTHWISE && tl->lanes) /* [co / lanes][kh][kw][lanes] */
        return (o / tl->lanes * row + t) * tl->lanes + o % tl->lanes;
    if (tl->kind == TK_DEPTHWISE)
        return o * row + t;
    if (tl->kind == TK_CONV_ROWS) { /* [co][kw][kh][ci]; t = (ic*kh + ky)*kw + kx */
        int64_t taps = (int64_t)w->kh * w->kw, ic = t / taps, ky = t % taps / w->kw, kx = t % w->kw;
        return o * row + (kx * w->kh + ky) * (row / taps) + ic;
    }
    int64_t cog = co / w->groups, nb = (cog + tl->rb - 1) / tl->rb;
    int64_t grp = o / cog, oc = o % cog;
    if (tl->vw == 2) { /* [groups][blocks][cig/2][kh][kw][rb][2] */
        int64_t taps = (int64_t)w->kh * w->kw, ic = t / taps;
        return (grp * nb + oc / tl->rb) * row * tl->rb +
               ((ic / 2 * taps + t % taps) * tl->rb + oc % tl->rb) * 2 + ic % 2;
    }
    return ((grp * nb + oc / tl->rb) * row + t) * tl->rb + oc % tl->rb;
}

/* A new constant of n elements of type dt (data copied); returns its value. */
static int new_const(Graph *g, DType dt, int64_t count, const void *data, int json, int from)
{
    Shape s = { 1, { count } };
    return graph_add_const_copy(g, dt, &s, data, json, from);
}

static int32_t wrap32(uint32_t u)
{
    return (int32_t)(u <= 0x7fffffffu ? (int64_t)u : (int64_t)u - 4294967296LL);
}

/* True when n's operands are what the specialised kernels take. */
static bool qpackable(const Graph *g, const Node *n)
{
    const Value *x = val(g, n->in[0]), *w = val(g, n->in[1]), *y = val(g, n->out);
    int nin = (int)arrlen(n->in);
    if (n->a.tile.kind || w->kind != VAL_CONST || val(g, n->in[2])->kind != VAL_CONST ||
        (x->dtype != DT_I8 && x->dtype != DT_U8) || (w->dtype != DT_I8 && w->dtype != DT_U8) ||
        shape_numel(&y->shape) == 0 || shape_numel(&x->shape) == 0)
        return false;
    if (n->a.q.requant && (nin != 5 || val(g, n->in[3])->kind != VAL_CONST ||
                           val(g, n->in[4])->kind != VAL_CONST))
        return false;
    if (!n->a.q.requant && nin != 3)
        return false;
    if (n->a.q.requant && y->dtype != DT_I8 && y->dtype != DT_U8 && y->dtype != DT_I32)
        return false;
    return n->a.q.requant || y->dtype == DT_I32;
}

/* Instructions per multiply-add of an r x c block of TK_CONV on a Cortex-M4 (gcc -O2),
 * from the loop body of one row of taps: r weight loads and the distinct inputs per tap,
 * r*c multiply-adds, about 4 of loop overhead; blocks with r*c + r + c over 11 (the
 * accumulators, weights and inputs live at once) spill. Measured within 10% for kernels
 * 2x2 to 5x5. */
static double block_cost(int r, int c, const Window *w)
{
    int loads = 0;
    for (int v = 0; v <= (w->kw - 1) * w->dw + (c - 1) * w->sw; v++) {
        bool used = false;
        for (int kx = 0; kx < w->kw && !used; kx++)
            used = v >= kx * w->dw && (v - kx * w->dw) % w->sw == 0 && (v - kx * w->dw) / w->sw < c;
        loads += used;
    }
    double macs = (double)r * c * w->kw;
    return (r * w->kw + loads + macs + 4 + (r * c + r + c > 11 ? 0.4 * macs : 0)) / macs;
}

/* TK_CONV's register block (tl->rb channels x tl->wb columns) for the interior columns
 * (every kx tap inside the input): the cheapest per multiply-add, counting the columns a
 * last, overlapping strip computes twice. A 1x1 conv (one long row, input channels
 * unrolled by 4) takes 2 x 4 (measured: 2 instructions per multiply-add). */
static void pick_block(const Window *w, const Shape *xs, const Shape *ys, int64_t cog, Tile *tl)
{
    int64_t lo = (w->pl + w->sw - 1) / w->sw;
    int64_t top = xs->dim[3] - 1 - (int64_t)(w->kw - 1) * w->dw + w->pl;
    int64_t hi = top < 0 ? 0 : top / w->sw + 1;
    int64_t cols = (hi > ys->dim[3] ? ys->dim[3] : hi) - lo;
    tl->rb = cog >= 2 ? 2 : 1;
    tl->wb = 4;
    if (w->kh == 1 && w->kw == 1 && w->sh == 1 && w->sw == 1 && w->pt == 0 && w->pl == 0 &&
        ys->dim[2] == xs->dim[2] && ys->dim[3] == xs->dim[3])
        return;
    double best = 1e30;
    for (int r = 1; r <= (cog >= 2 ? 2 : 1); r++)
        for (int c = 2; c <= 6; c++) {
            if (r * c > 8 || cols < c)
                continue;
            double sc = block_cost(r, c, w) * (double)((cols + c - 1) / c * c) / (double)cols;
            if (sc < best - 1e-9) {
                best = sc;
                tl->rb = r, tl->wb = c;
            }
        }
}

/* Cortex-M with the DSP extension (TK_CONV with tile.vw 2, int8 x and w, an even number
 * of input channels per group): the input is first copied into int16 pairs of adjacent
 * input channels (the node's scratch), the weights packed as the matching int16 pairs,
 * and each tap of a block is a dual multiply-add (__smlad) per channel and column. Per
 * pair of input channels and row of taps an r x c block loads the distinct input pairs
 * and r weight pairs per tap, and does r*c per tap; blocks whose sums, weights and a
 * few inputs outgrow the 12 or so free registers spill. A 1x1 conv (one long row) takes
 * 2 x 4. */
#define RC_QPAIRS_MAX_BYTES 32768 /* the int16 copy of the input, in the workspace */

static double dsp_block_cost(int r, int c, const Window *w)
{
    int loads = (c - 1) * w->sw + (w->kw - 1) * w->dw + 1;
    if (loads > c * w->kw)
        loads = c * w->kw;
    double mads = (double)r * c * w->kw;
    return (loads + r * w->kw + mads + 4 + (r * c + r + 2 > 12 ? 0.4 * mads : 0)) / (2 * mads);
}

static void pick_dsp_block(const Window *w, int64_t cols, bool flat, int64_t cog, Tile *tl)
{
    tl->rb = cog >= 2 ? 2 : 1;
    tl->wb = 4;
    if (flat)
        return;
    double best = 1e30;
    for (int r = 1; r <= 4 && r <= cog; r++)
        for (int c = 1; c <= 6; c++) {
            if (cols < c)
                continue;
            double sc = dsp_block_cost(r, c, w) * (double)((cols + c - 1) / c * c) / (double)cols *
                        (double)((cog + r - 1) / r * r) / (double)cog;
            if (sc < best - 1e-9) {
                best = sc;
                tl->rb = r, tl->wb = c;
            }
        }
}

/* TK_CONV_ROWS and TK_GEMV on --target x86-64-avx512: 1 when the kernel buffers the input
 * as uint8 (x + 128 for int8, x for uint8) against int8 weights w' (n weights from w, zero
 * point zw), the form of the unsigned x signed byte dot products (vpdpbusd) compilers emit
 * for AVX-512 VNNI and AVX-VNNI; 0 for the int16 buffer. The uint8 padding value (the zero
 * point, shifted) must be a byte, and 255 * sum |w'| of a row within int32 (checked where
 * the weights are packed). */
static int qrows_u8(const Graph *g, DType xt, int32_t zx, const Tensor *wt, int32_t zw,
                    int64_t count)
{
    if (g->target != TARGET_X86_64_AVX512 || qrows_u8_pad(xt, zx) < 0)
        return 0;
    for (int64_t i = 0; i < count; i++) {
        int32_t v = w8(wt, i) - zw;
        if (v < -128 || v > 127)
            return 0;
    }
    return 1;
}

/* TK_CONV_F32 (the x86 targets, groups 1, rows of 16 outputs or more, dot products shorter
 * than RC_QF32_MAX_ROW or a row buffer within RC_QF32_LONG_BYTES): when every sum of a channel's products, in any order, is an
 * integer of at most 2^24, float32 computes it exactly, and the float kernels' layout (a row buffer split by column phase,
 * sums vectorised over the columns) runs the short dot products of first layers faster
 * than the int16 ones, whose horizontal sums cost more than the products there (bench/run:
 * 3x3 stride-2 3 -> 32 at 224, 16.9 -> 30.4 GOP/s; 5x5 1 -> 6 at 28, 18.0 -> 30.4). The
 * bound is max |x - zx| * sum |w'| per channel (it holds for any 8-bit operands below
 * 259 terms). Weights packed as float [blocks][ci][kh][kw][rb], the last block's missing
 * channels zero. Returns false when it does not apply. */
static bool pack_conv_f32(Graph *g, int idx)
{
    Node *n = &g->nodes[idx];
    const Window *win = &n->a.conv;
    const Shape *xs = &val(g, n->in[0])->shape, *ys = &val(g, n->out)->shape;
    DType xt = val(g, n->in[0])->dtype;
    int64_t ci = xs->dim[1], co = ys->dim[1], wo = ys->dim[3];
    int64_t row = ci * win->kh * win->kw;
    int32_t zw = qpack_zw(n);
    int pw;
    int64_t limit = row >= RC_QF32_MAX_ROW ? RC_QF32_LONG_BYTES : RC_QF32_MAX_BYTES;
    if (!x86(g->target) || win->groups != 1)
        return false;
    /* a 1x1 conv of stride 1 without padding: its pixels flattened and split into rows of
     * k (tile.wr), a divisor of their count, as wide as the buffer allows and a multiple
     * of 16 where one is (every block then full: the 1x1 64 -> 128 at 28x28 in rows of
     * 112 instead of 28, which took blocks of 16 columns, one of them overlapping,
     * x86-64-avx512 on Zen 5: 114 -> 72 us) */
    int64_t k = 0;
    if (win->kh == 1 && win->kw == 1 && win->sh == 1 && win->sw == 1 && win->pt == 0 &&
        win->pl == 0 && win->pb == 0 && win->pr == 0 && ys->dim[2] == xs->dim[2] &&
        ys->dim[3] == xs->dim[3]) {
        int64_t plane = ys->dim[2] * wo;
        double best = 0;
        for (int64_t d = 16; d <= plane && ci * d * 4 <= limit; d++) {
            double sc = (double)d / ((d + 15) / 16 * 16);
            if (plane % d == 0 && sc >= best) /* the widest of the best */
                best = sc, k = d;
        }
        if (k)
            wo = k;
    }
    if (wo < 16)
        return false;
    int64_t bytes = qf32_row_floats(win, ci, wo, &pw) * 4;
    if (bytes > limit)
        return false;
    const Tensor *wt = cten(g, n->in[1]);
    for (int64_t o = 0; o < co; o++) {
        int64_t s = 0;
        for (int64_t t = 0; t < row; t++) {
            int64_t v = (int64_t)w8(wt, o * row + t) - zw;
            s += v < 0 ? -v : v;
        }
        if (s * xmax_sub(xt, qpack_zx(n)) > ((int64_t)1 << 24))
            return false;
    }
    Tile tl;
    memset(&tl, 0, sizeof tl);
    tl.kind = TK_CONV_F32;
    tl.packed = 1;
    tl.wr = (int)k;
    /* 16 columns (two vectors of 8) by 5 channels (measured on the 3x3 stride-2 3 -> 32
     * conv at 224: 590 us, against 700 with 6 channels, 760 with 4, 940 with 24 columns
     * by 4, 1300 with 8 by 12). Rows narrower than 16 keep the int16 kernel, but a 1x1
     * conv's rows are its flattened pixels (the quantized MobileNetV2 at 64x64, gcc 12
     * -O3 -march=native, x86-64-avx512 on Emerald Rapids: 1x1 96 -> 576 on 4 x 4 pixels
     * 29 -> 15 us, 32 -> 192 on 8 x 8 22 -> 8, the model 1134 -> 974 us). 6 channels
     * where they divide the output's and 5 do not (the 5x5 1 -> 6 conv at 28: 30.4
     * GOP/s, against 24.4 as blocks of 5 and 1) */
    tl.wb = 16;
    tl.rb = co < 5 ? (int)co : co % 5 && co % 6 == 0 ? 6 : 5;
    /* x86-64-avx512 (vectors of 16 floats, 32 registers): 32 columns (16 on rows of 16 to
     * 31) by 8 channels. Measured on a Zen 4 core, one thread, against that target's uint8
     * dot products (vpdpbusd, whose horizontal sums cost more than the products here):
     * 3x3 stride-2 3 -> 32 at 224, 3105 -> 241 us (16 x 5: 405, 32 x 6: 251, 32 x 12:
     * 241); 1x1 64 -> 128 at 28, 207 -> 100 us; 5x5 1 -> 6 at 28 (16 x 6), 19 -> 5.2 us */
    if (g->target == TARGET_X86_64_AVX512) {
        tl.wb = wo >= 32 ? 32 : 16;
        tl.rb = co < 8 ? (int)co : 8;
    }
    tl.scratch = bytes;
    int64_t nb = (co + tl.rb - 1) / tl.rb, size = nb * tl.rb * row;
    if (!graph_const_fits(g, size * 4))
        return false;
    float *p = xcalloc((size_t)size, sizeof(float));
    for (int64_t o = 0; o < co; o++)
        for (int64_t t = 0; t < row; t++)
            p[((o / tl.rb) * row + t) * tl.rb + o % tl.rb] = (float)(w8(wt, o * row + t) - zw);
    int plain = n->in[1];
    int wv = new_const(g, DT_F32, size, p, val(g, plain)->json, plain);
    free(p);
    n = &g->nodes[idx];
    n->in[1] = wv;
    n->a.tile = tl;
    return true;
}

/* conv2d: picks the kernel, checks the bounds, packs. */
static void pack_conv(Graph *g, int idx)
{
    Node *n = &g->nodes[idx];
    const Window *win = &n->a.conv;
    const Shape *xs = &val(g, n->in[0])->shape, *ys = &val(g, n->out)->shape;
    DType xt = val(g, n->in[0])->dtype;
    int64_t ci = xs->dim[1], co = ys->dim[1], cig = ci / win->groups, cog = co / win->groups;
    int64_t taps = (int64_t)win->kh * win->kw, row = cig * taps;
    int32_t zx = qpack_zx(n), zw = qpack_zw(n);
    const Tensor *wt = cten(g, n->in[1]);
    if (shape_numel(&wt->shape) != co * row)
        return;
    if (!(win->groups == ci && co == ci) && pack_conv_f32(g, idx))
        return;
    Tile tl;
    memset(&tl, 0, sizeof tl);
    tl.packed = 1;
    if (win->groups == ci && co == ci) {
        tl.kind = TK_DEPTHWISE;
        tl.rb = 1, tl.wb = 1;
        /* x86: each channel's input as x - zx in a zero-padded int32 plane (the workspace),
         * so every output is interior and a row of outputs one vectorisable loop; 8-bit
         * outputs go through an int32 plane of their own where qdepthwise_wide_store says
         * (kernel_qconv.c). Outputs of at most RC_DW_LANES_MAX_PIXELS pixels a channel
         * (tile.lanes): a block of channels as the vector lanes instead, over the block's
         * inputs [hi * wi][wb], weights [taps][wb] and outputs [pixels][wb] */
        int hp, wp, pw;
        int64_t plane = qdepthwise_plane(win, ys->dim[2], ys->dim[3], &hp, &wp, &pw);
        int64_t pix = ys->dim[2] * ys->dim[3], cb = depthwise_lanes(co);
        DType yt = val(g, n->out)->dtype;
        int64_t in = xs->dim[2] * xs->dim[3];
        if (x86(g->target) && pix <= RC_DW_LANES_MAX_PIXELS && cb && taps <= 25 &&
            (in + taps + pix) * cb * 4 <= RC_QPLANE_MAX_BYTES) {
            tl.rows = 1;
            tl.lanes = (int)cb;
            tl.wb = (int)cb;
            tl.scratch = (in + taps + pix) * cb * 4;
        } else {
            if (plane < INT64_MAX && (yt == DT_I8 || yt == DT_U8) &&
                qdepthwise_wide_store(win, ys->dim[3]))
                plane += pix;
            if (qnn_int_simd(g->target) && plane <= RC_QPLANE_MAX_BYTES / 4) {
                tl.rows = 1;
                tl.scratch = plane * 4;
            }
        }
    } else {
        tl.kind = TK_CONV;
        pick_block(win, xs, ys, cog, &tl);
        int64_t pairs = xs->dim[0] * ci * xs->dim[2] * xs->dim[3] * 2; /* bytes */
        if (g->target == TARGET_CORTEX_M && xt == DT_I8 && wt->dtype == DT_I8 && cig >= 2 &&
            cig % 2 == 0 && pairs <= RC_QPAIRS_MAX_BYTES) {
            int64_t lo = (win->pl + win->sw - 1) / win->sw;
            int64_t top = xs->dim[3] - 1 - (int64_t)(win->kw - 1) * win->dw + win->pl;
            int64_t hi = top < 0 ? 0 : top / win->sw + 1;
            bool flat = win->kh == 1 && win->kw == 1 && win->sh == 1 && win->sw == 1 &&
                        win->pt == 0 && win->pl == 0 && ys->dim[2] == xs->dim[2] &&
                        ys->dim[3] == xs->dim[3];
            tl.vw = 2;
            tl.scratch = pairs;
            pick_dsp_block(win, (hi > ys->dim[3] ? ys->dim[3] : hi) - lo, flat, cog, &tl);
        }
        if (qnn_int_simd(g->target) && win->groups == 1) {
            /* the input a strip of wb output columns reads, as int16 (kernel_qconv.c) */
            int64_t need = (int64_t)win->kh * ((int64_t)(tl.wb - 1) * win->sw +
                                               (int64_t)(win->kw - 1) * win->dw + 1) * ci * 2;
            if (need <= RC_QROWS_MAX_BYTES) {
                int64_t segw;
                tl.kind = TK_CONV_ROWS;
                tl.rb = co >= 4 ? 4 : (int)co;
                tl.wb = 4;
                /* AVX2's 16 vector registers: 4 x 4 sums spill; 2 channels x 6 pixels
                 * measured 1.6-1.8x faster on the 3x3 convs of 32 and 64 channels (dot
                 * products of 288 and 576), 0.9x on a 1x1 of 64 (kept at 4 x 4) */
                if (g->target == TARGET_X86_64_AVX2 && (int64_t)win->kh * win->kw * ci >= 128 &&
                    (int64_t)win->kh * (5 * win->sw + (int64_t)(win->kw - 1) * win->dw + 1) * ci * 2 <=
                        RC_QROWS_MAX_BYTES) {
                    tl.rb = co >= 2 ? 2 : (int)co;
                    tl.wb = 6;
                }
                /* generic: in passes of 2 channels where RC_SIMD is 0 (scalar cores, where
                 * 16 sums spill: Cortex-M4 -O2, conv 3x3 16 -> 16 at 28x28 6.77M -> 4.63M
                 * instructions; 1 x 4 5.76M, 2 x 2 5.36M) */
                if (g->target == TARGET_GENERIC && tl.rb > 2)
                    tl.sub = 2;
                int64_t strip = qrows_strip(win, ci, ys->dim[3], tl.wb, &segw);
                tl.vw = qrows_u8(g, xt, zx, wt, zw, co * row);
                /* the buffered input, then the strip's int32 sums (requantized per channel
                 * after the strip's blocks, in loops compilers vectorise) */
                tl.scratch = qrows_sums_at(segw * win->kh * ci * (tl.vw ? 1 : 2) +
                                           qrows_ring_bytes(win, ci, ys->dim[3], strip, segw, tl.vw)) +
                             co * strip * 4;
            }
        }
    }
    /* w' fits the packed type (TK_CONV_ROWS: int16, else int8) and the sums stay within
     * int32 (the rows kernel reads x - zx, the others x and x - zx) */
    /* int16 weights: the x86 int16 row buffers (TK_CONV_ROWS without uint8 rows) and the
     * Cortex-M channel pairs (TK_CONV with tile.vw 2); int8 otherwise */
    bool rows = tl.kind == TK_CONV_ROWS, wide = (rows && !tl.vw) || (!rows && tl.vw == 2);
    int64_t wlim = rows && !tl.vw ? 32767 : 127, worst = 0;
    for (int64_t o = 0; o < co; o++) {
        int64_t s = 0;
        for (int64_t t = 0; t < row; t++) {
            int64_t v = (int64_t)w8(wt, o * row + t) - zw;
            if (v < -wlim - 1 || v > wlim)
                return;
            s += v < 0 ? -v : v;
        }
        worst = s > worst ? s : worst;
    }
    int64_t xm = rows && tl.vw ? 255 : xmax_sub(xt, zx);
    if (!rows && !tl.rows && xmax_raw(xt) > xm)
        xm = xmax_raw(xt);
    if (worst * xm > INT32_MAX || xmax_sub(xt, zx) > 32767)
        return;
    /* x86 depthwise: the plane in floats when every sum, in any order, is an integer of at
     * most 2^24 (float32 holds it exactly): multiply-adds at the float rate */
    if (tl.kind == TK_DEPTHWISE && tl.rows && x86(g->target) &&
        worst * xmax_sub(xt, zx) <= ((int64_t)1 << 24))
        tl.vw = 1;
    /* the packed weights (and the table) must fit under RC_MAX_CONST_BYTES beside the plain
     * ones, which are counted until the end */
    int64_t size = co * row;
    if (tl.kind == TK_CONV)
        size = win->groups * ((cog + tl.rb - 1) / tl.rb) * tl.rb * row;
    DType pt = wide ? DT_I16 : DT_I8;
    if (!graph_const_fits(g, size * (int64_t)dtype_size(pt) + co * (win->kh + 1) * 4))
        return;
    n->a.tile = tl;
    void *p = xcalloc((size_t)(size ? size : 1), dtype_size(pt));
    for (int64_t o = 0; o < co; o++)
        for (int64_t t = 0; t < row; t++) {
            int64_t at = packed_index(g, n, o, t), v = w8(wt, o * row + t) - zw;
            if (wide)
                ((int16_t *)p)[at] = (int16_t)v;
            else
                ((int8_t *)p)[at] = (int8_t)v;
        }
    int plain = n->in[1];
    int wv = new_const(g, pt, size, p, val(g, plain)->json, plain);
    free(p);
    n = &g->nodes[idx];
    n->in[1] = wv;
    if (rows && tl.vw) { /* TK_CONV_ROWS on uint8: the padding value times every weight */
        int32_t *q = xmalloc((size_t)co * sizeof(int32_t));
        wt = cten(g, plain); /* (new_const may have moved the constants) */
        for (int64_t o = 0; o < co; o++) {
            uint32_t s = 0;
            for (int64_t t = 0; t < row; t++)
                s += (uint32_t)(w8(wt, o * row + t) - zw);
            q[o] = wrap32(0u - (uint32_t)qrows_u8_pad(xt, zx) * s);
        }
        int qv = new_const(g, DT_I32, co, q, n->json, -1);
        free(q);
        n = &g->nodes[idx];
        arrput(n->in, qv);
        n->a.q.ztab = (int)arrlen(n->in) - 1;
    }
    /* the zero-point table */
    if (!rows && !tl.rows && zx != 0) {
        int kh = n->a.conv.kh;
        int32_t *q = xmalloc((size_t)co * (size_t)(kh + 1) * sizeof(int32_t));
        wt = cten(g, n->in[1]);
        for (int64_t o = 0; o < co; o++) {
            uint32_t acc = 0;
            for (int ky = 0; ky <= kh; ky++) {
                q[o * (kh + 1) + ky] = wrap32(acc);
                if (ky == kh)
                    break;
                int64_t s = 0;
                int kw = n->a.conv.kw;
                for (int64_t ic = 0; ic < cig; ic++)
                    for (int kx = 0; kx < kw; kx++) {
                        int64_t at = packed_index(g, n, o, (ic * kh + ky) * kw + kx);
                        s += wide ? ((const int16_t *)wt->data)[at] : ((const int8_t *)wt->data)[at];
                    }
                acc += (uint32_t)zx * (uint32_t)s;
            }
        }
        int qv = new_const(g, DT_I32, co * (kh + 1), q, n->json, -1);
        free(q);
        n = &g->nodes[idx];
        arrput(n->in, qv);
        n->a.q.ztab = (int)arrlen(n->in) - 1;
    }
}

/* Cortex-M dense with the DSP extension sums 256 x w (kernel_qconv.c: the even inputs are
 * widened as 256 x, the odd weights taken as 256 w by masking their bytes in place), so a
 * run of inputs summed in one int32 must keep 256 * 128 * sum |w| <= INT32_MAX, that is
 * sum |w| <= 65535, for every row. The length of those runs (a multiple of 4, the first
 * K / 4 * 4 inputs cut into runs of it, the last one shorter): all of them when every row
 * allows it, else the longest even cut that does (runs of 508 always do: 127 words of 4
 * weights, each at most 4 * 128). */
static int64_t dsp_chunk(const Tensor *wt, int64_t N, int64_t K)
{
    const int64_t KF = K / 4 * 4, lim = INT32_MAX / (256 * 128);
    for (int64_t parts = 1;; parts++) {
        int64_t c = (KF / 4 + parts - 1) / parts * 4;
        bool ok = true;
        for (int64_t o = 0; o < N && ok; o++)
            for (int64_t k0 = 0; k0 < KF && ok; k0 += c) {
                int64_t s = 0;
                for (int64_t t = k0; t < k0 + c && t < KF; t++) {
                    int64_t v = w8(wt, o * K + t);
                    s += v < 0 ? -v : v;
                }
                ok = s <= lim;
            }
        if (ok)
            return c;
    }
}

/* dense: the weights stay (but for rows padded on x86-64-avx512); the constant part of the
 * zero-point terms becomes a table. */
static void pack_dense(Graph *g, int idx)
{
    Node *n = &g->nodes[idx];
    const Tensor *wt = cten(g, n->in[1]);
    DType xt = val(g, n->in[0])->dtype;
    int64_t N = n->a.n, K = n->a.k;
    int32_t zx = qpack_zx(n), zw = qpack_zw(n);
    if (N <= 0 || K <= 0 || n->a.m <= 0 || shape_numel(&wt->shape) != N * K)
        return;
    int64_t worst = 0;
    for (int64_t o = 0; o < N; o++) {
        int64_t s = 0;
        for (int64_t t = 0; t < K; t++) {
            int64_t v = w8(wt, o * K + t);
            s += v < 0 ? -v : v;
        }
        worst = s > worst ? s : worst;
    }
    if (worst * xmax_raw(xt) > INT32_MAX || K * xmax_raw(xt) > INT32_MAX)
        return;
    if (!graph_const_fits(g, N * 4))
        return;
    Tile *tl = &n->a.tile;
    memset(tl, 0, sizeof *tl);
    tl->kind = TK_GEMV;
    tl->rb = 4;
    /* wb: bytes per input element in the inner loop. x86: each row of x is widened to
     * int16 first (gcc then uses multiply-add instructions for the int8 weights).
     * Cortex-M (int8 x and w, 4 inputs or more): each row of x is widened to int16 pairs
     * for the DSP extension's dual multiply-add (kernel_qconv.c), summed in runs of wr
     * inputs (dsp_chunk) */
    bool dsp = g->target == TARGET_CORTEX_M && xt == DT_I8 && wt->dtype == DT_I8 && K >= 4;
    tl->wb = (qnn_int_simd(g->target) || dsp) && K * 2 <= RC_QROWS_MAX_BYTES ? 2 : 1;
    tl->scratch = tl->wb == 2 ? K * 2 : 0; /* the widened row of x */
    /* --target x86-64-avx512 with int8 weights: the row of x as uint8 instead (x + 128 for
     * int8 x, whose 128 * sum w goes into the table) */
    int32_t c = xt == DT_I8 ? 128 : 0;
    int64_t KR = K; /* the length of a buffered row of x (and of the weights' rows) */
    if (tl->wb == 2 && g->target == TARGET_X86_64_AVX512 && wt->dtype == DT_I8 && worst * 255 <= INT32_MAX) {
        tl->vw = 1;
        /* requantized, int8 x: the rows padded with zeros to a multiple of 64 (one zmm of
         * bytes), where that adds at most an eighth, so that gcc's dot products have no
         * remainder to finish in narrower vectors and scalars (dense 784 -> 128, gcc 12
         * -O3 -march=native, Emerald Rapids, bench/run: 122.8 -> 236.5 GOP/s) */
        int64_t k64 = (K + 63) / 64 * 64;
        if (n->a.q.requant && xt == DT_I8 && k64 != K && (k64 - K) * 8 <= K &&
            graph_const_fits(g, N * k64))
            KR = k64;
        tl->scratch = KR;
    } else {
        c = 0;
    }
    if (tl->wb == 2 && dsp)
        tl->wr = (int)dsp_chunk(wt, N, K);
    if (tl->wb == 2 && !dsp) { /* x86, generic: rows of x buffered together (kernel_qconv.c) */
        int J = qdense_xrows(g->target, n->a.m, KR, tl->vw ? 1 : 2);
        tl->scratch *= J;
        /* their blocks: 4 weight rows x J rows of x (16 vectors of sums) where there are 32
         * vector registers, else 2 x J */
        if (J > 1 && g->target != TARGET_X86_64_AVX512)
            tl->rb = 2;
        /* x86, requantized: the sums of a chunk of wr columns (J rows) go to the scratch
         * after the rows of x and are requantized in a loop of their own, which compilers
         * vectorise (a scalar requantize per sum at the end of each block: a third of the
         * time of dense 1024 -> 1000 at batch 32) */
        if (x86(g->target) && n->a.q.requant) {
            tl->wr = (int)(N < RC_QDENSE_CHUNK ? N : RC_QDENSE_CHUNK);
            tl->scratch = (tl->scratch + 63) / 64 * 64 + (int64_t)J * tl->wr * 4;
        }
    }
    if (zx == 0 && c == 0)
        return;
    int32_t *z = xmalloc((size_t)N * sizeof(int32_t));
    for (int64_t o = 0; o < N; o++) {
        uint32_t s = 0;
        for (int64_t t = 0; t < K; t++)
            s += (uint32_t)w8(wt, o * K + t);
        z[o] = wrap32((uint32_t)K * (uint32_t)zx * (uint32_t)zw - ((uint32_t)zx + (uint32_t)c) * s);
    }
    int zv = new_const(g, DT_I32, N, z, n->json, -1);
    free(z);
    n = &g->nodes[idx];
    arrput(n->in, zv);
    n->a.q.ztab = (int)arrlen(n->in) - 1;
    if (KR != K) { /* (c is 128 here) the weights [N][KR], zeros after each row's K */
        int plain = n->in[1];
        int8_t *p = xcalloc((size_t)(N * KR), 1);
        wt = cten(g, plain);
        for (int64_t o = 0; o < N; o++)
            for (int64_t t = 0; t < K; t++)
                p[o * KR + t] = (int8_t)w8(wt, o * K + t);
        int wv = new_const(g, DT_I8, N * KR, p, val(g, plain)->json, plain);
        free(p);
        n = &g->nodes[idx];
        n->in[1] = wv;
        n->a.tile.packed = 1;
    }
}

void pack_qnn(Graph *g)
{
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        const Node *n = &g->nodes[i];
        if ((n->op != IR_QCONV2D && n->op != IR_QMATMUL) || !qpackable(g, n))
            continue;
        if (n->op == IR_QCONV2D)
            pack_conv(g, i);
        else
            pack_dense(g, i);
    }
    remove_dead(g);
}
