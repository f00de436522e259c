/*
 * kernel_qconv.c: the specialised integer conv2d and dense kernels, one C function per
 * call site with every shape, stride, padding and zero point a literal. compiler/pack_qnn.c
 * chooses the kernel (Attrs.tile), packs the weights and explains the arithmetic; the
 * requantize epilogue (rq_fpm, or rq_fpm_h when every multiplier is below 1/2, with each
 * channel's parameters loaded once; the output zero point; the clip) is applied as each
 * sum is stored (on the x86 targets rq_fpm_h is written out in a form compilers vectorise,
 * put_fpm_x86, or the convs compute it in double where rq_double_exact shows that exact),
 * so the int32 accumulator is never stored. Sums of products stay in int32
 * (their bounds were checked), the rest is added in uint32_t and wrapped with rq_wrap32.
 *
 * TK_CONV, weights w' packed [groups][blocks][cig][kh][kw][rb] (int8):
 *   kN_bR  R output channels x wb output columns of one row, in R*wb int32 variables: for
 *          each input channel and row of taps, R weights and wb inputs (as stored) are
 *          loaded per kx, every kx tap inside the input. The input zero point enters through
 *          the table (pack_qnn.c): bias - (Q[ky1] - Q[ky0]) starts the sum.
 *   kN_e   one pixel near the left/right border, nr <= rb channels, taps clipped, each
 *          input minus its zero point.
 *   kN_qconv2d  the driver: batches, channel blocks, rows, interior strips (the last one
 *          overlapping the one before), border pixels. A 1x1 stride-1 unpadded conv is one
 *          long row; its input channels are unrolled by up to 4.
 *   With tile.vw 2 (Cortex-M) the driver first copies the input into int16 pairs of input
 *   channels (xw, the scratch) and the blocks take one __smlad per tap, channel and column
 *   (put_pair_taps).
 * TK_DEPTHWISE, weights w' OIHW: per channel and output row, the interior columns with all
 *   taps unrolled (rows grouped by the taps inside the input, so each group's taps and its
 *   zero-point correction are fixed), border columns with clipped taps. With tile.rows
 *   (x86, generic): each channel's input as x - zx in a zero-padded plane, float (tile.vw 1: the
 *   sums are exact, one per row of taps) or int32, every output a vectorisable sum of its
 *   taps with the requantize, 8-bit outputs into an int32 plane first and narrowed in one
 *   loop (a loop storing int8 is vectorised 32 lanes wide, wider than a row).
 * TK_CONV_ROWS (x86, generic), weights w' packed [co][kw][kh][ci] (int16):
 *   kN_g gathers, per output row and strip of columns, the input rows it reads into a
 *   local int16 buffer laid out [column][kh][ci], holding x - zx (0 in the padding), so a
 *   pixel's taps are one contiguous run (per kx with dilation); kN_rR_P computes R
 *   channels x P pixels as dot products over those runs and the weights (gcc -O3 turns
 *   them into vpmaddwd / vpdpwssd) and stores the sums into the strip's int32 buffer
 *   [co][S] (the scratch after the rows); kN_rq requantizes that buffer per channel into
 *   the output; kN_qconv2d is the driver, strips with literal bounds.
 *   With tile.vw 1 (--target x86-64-avx512) the buffer is uint8 (x + 128, the zero point's
 *   byte in the padding) and the weights int8: gcc's vpdpbusd.
 * TK_CONV_F32 (the x86 targets), weights w' packed [blocks][ci][kh][kw][rb] (float):
 *   kN_gf buffers, per output row, the input rows it reads as x - zx in floats (0 in the
 *   padding), each split into its sw column phases; kN_fR computes R channels x wb columns
 *   of float sums (vectorised over the columns, as kernel_conv2d.c's row-buffered blocks),
 *   converts them to int32 (exact: pack_qnn.c bounds every partial sum by 2^24) and
 *   requantizes them with the bias; kN_qconv2d is the driver, strips of wb columns (the
 *   last overlapping the one before).
 * TK_GEMV (dense), weights as stored [n][k] (8-bit): rb rows of weights at a time, one
 *   loop over k (each input loaded once for the rb rows); the row's sum of x times the
 *   weight zero point and the table finish it. With tile.wb 2 the row of x is widened to a
 *   local int16 buffer first (for gcc's multiply-add instructions); on --target cortex-m
 *   (int8 x and w) into int16 pairs (256 x0, 256 x2), (x1, x3) for the DSP extension's
 *   __smlad against each word of weights as (w0, w2) and (256 w1, 256 w3), sums of 256 x w
 *   over runs of tile.wr inputs divided by 256 (dsp_dense), under
 *   #if defined(__ARM_FEATURE_DSP), the plain loops otherwise.
 */
#include "emit.h"

#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The emitted test for the DSP extension's instructions (Cortex-M4 and later). */
#define DSP_IF "#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)\n"

/* What every q kernel of a node needs to know. */
typedef struct {
    const Graph *g;
    const Node *n;
    int idx;
    const char *xt, *wt, *yt;   /* C element types of x, the (packed) weights and y */
    int32_t zx, zw;
    int ytype;                  /* 0 int8, 1 uint8, 2 int32 (requantized), 3 raw sum */
    bool uniform;               /* one multiplier and shift for every channel */
    int32_t m0, s0;             /* ... which are these */
    bool high;                  /* every shift in [-31, -1]: rq_fpm_h */
    bool dbl;                   /* x86: requantized in double (rq_double_exact) */
    bool pairs;                 /* TK_CONV on Cortex-M: blocks read x as int16 pairs (xw) */
    bool wide_store;            /* put_store: 8-bit outputs clipped but stored as int32 */
} QK;

/* The x86 targets: the kernels whose loops compilers vectorise (their requantize too). */
static bool x86(const QK *q)
{
    return q->g->target == TARGET_X86_64_AVX2 || q->g->target == TARGET_X86_64_AVX512;
}

/* a >> k rounding down, for any sign (the host's >> of a negative value is its own). */
static int64_t floor_shr(int64_t a, int k) { return a >= 0 ? a >> k : ~(~a >> k); }

/* The requantize of v by multiplier m and shift s in [-31, -1] as rq_fpm_h computes it: v * m
 * + 2^(S-1) (less 1 below zero when rounding to nearest), divided by 2^S rounding down, with
 * S = 31 - s. */
static int64_t rq_exact(int64_t v, int32_t m, int32_t s, int tonearest)
{
    int64_t p = v * m;
    return floor_shr(floor_shr(p + ((int64_t)1 << (30 - s)) - (tonearest && p < 0), 32), -1 - s);
}

/* The clip put_store applies before the double requantize: |v| <= RQ_DBL_MAX keeps v * m
 * (m < 2^31) below 2^53, exact in a double. */
#define RQ_DBL_MAX 4194303

/* Whether every channel's requantize (multipliers m, shifts s, c channels) is computed
 * exactly in double arithmetic, as put_store writes it for the x86 convs (their requantize
 * loops are vectorised; emit_qdense_kernel keeps the int64 one): v clipped to
 * [-RQ_DBL_MAX, RQ_DBL_MAX], then v * m + 1.5 * 2^(52 + S) in a double, whose low 32 bits
 * are v * m / 2^S rounded to the nearest integer (the product is exact; the sum is rounded
 * once, to a multiple of 2^S, the unit of a double of that size, and its mantissa holds
 * 2^51 plus the quotient). That is rq_fpm_h's result when
 *   - no v in the clip's range puts v * m / 2^S halfway between two integers, where the
 *     rounding to nearest even and rq_fpm_h's can differ: v * m has at most 21 + tz(m)
 *     factors of 2 and a tie needs S - 1 of them;
 *   - the clip changes no output: m > 0 (the requantize grows with v) and at either bound
 *     the requantized value plus the output zero point is already at the output's clip.
 * The int64 products of put_fpm_x86 (vpmullq on AVX-512, three vpmuludq on AVX2) cost more
 * than the conversions: int8 depthwise 3x3 128 @28, x86-64-avx512, gcc 12 -O3 -march=native
 * on Emerald Rapids: 62.8 -> 52.8 us. */
static bool rq_double_exact(const Attrs *a, const int32_t *mv, const int32_t *sv, int64_t c)
{
    for (int64_t k = 0; k < c; k++) {
        int S = 31 - sv[k], tz = 0;
        if (mv[k] <= 0)
            return false;
        while (!((mv[k] >> tz) & 1))
            tz++;
        if (tz + 22 >= S)
            return false;
        if (rq_exact(RQ_DBL_MAX, mv[k], sv[k], a->q.rounding) + a->q.yzp < a->q.yhi ||
            rq_exact(-RQ_DBL_MAX, mv[k], sv[k], a->q.rounding) + a->q.yzp > a->q.ylo)
            return false;
    }
    return true;
}

static void qk_init(const Graph *g, int idx, QK *q)
{
    const Node *n = &g->nodes[idx];
    memset(q, 0, sizeof *q);
    q->g = g, q->n = n, q->idx = idx;
    q->xt = dtype_ctype(g->values[n->in[0]].dtype);
    q->wt = dtype_ctype(g->values[n->in[1]].dtype);
    q->yt = dtype_ctype(g->values[n->out].dtype);
    q->zx = qpack_zx(n), q->zw = qpack_zw(n);
    q->ytype = n->a.q.requant ? qnn_type_code(g->values[n->out].dtype) : 3;
    q->pairs = n->op == IR_QCONV2D && n->a.tile.kind == TK_CONV && n->a.tile.vw == 2;
    if (n->a.q.requant) {
        const Tensor *m = &g->consts[g->values[n->in[3]].constant];
        const Tensor *s = &g->consts[g->values[n->in[4]].constant];
        int64_t c = shape_numel(&m->shape);
        const int32_t *mv = m->data, *sv = s->data;
        q->uniform = true;
        q->high = true;
        q->m0 = mv[0], q->s0 = sv[0];
        for (int64_t k = 0; k < c; k++) {
            q->uniform = q->uniform && mv[k] == q->m0 && sv[k] == q->s0;
            q->high = q->high && sv[k] <= -1 && sv[k] >= -31;
        }
        q->dbl = q->high && x86(q) && (q->ytype == 0 || q->ytype == 1) &&
                 rq_double_exact(&n->a, mv, sv, c);
    }
}

int emit_qkernel_fpm(const Graph *g, int idx)
{
    QK q;
    if (!g->nodes[idx].a.q.requant)
        return 0;
    qk_init(g, idx, &q);
    return q.high ? (x86(&q) ? 0 : 2) : 1; /* x86: put_fpm_x86 */
}

/* An int32 value as a C expression of type int (INT32_MIN has no literal). */
static void put_i32(Buf *b, int32_t v)
{
    if (v == INT32_MIN)
        buf_puts(b, "(-2147483647 - 1)");
    else
        buf_printf(b, "%ld", (long)v);
}

/* " - v" after an int32 expression ("", " + 5", ...). */
static void put_minus(Buf *b, int32_t v)
{
    if (v == INT32_MIN)
        buf_puts(b, " - (-2147483647 - 1)");
    else if (v < 0)
        buf_printf(b, " + %ld", -(long)v);
    else if (v > 0)
        buf_printf(b, " - %ld", (long)v);
}

/* The name of input k of the node inside a kernel (sfx "_" for the pointers a block
 * function offsets itself). */
static const char *in_name(const QK *q, int k)
{
    if (k == 0)
        return "x";
    if (k == 1)
        return "w";
    if (k == 2)
        return "bias";
    if (k == q->n->a.q.ztab)
        return "ztab";
    return k == 3 ? "mult" : "shift";
}

/* The parameters: every input of the node, then the output. */
static void put_params(const QK *q, Buf *b, const char *sfx)
{
    const Graph *g = q->g;
    for (int k = 0; k < (int)arrlen(q->n->in); k++)
        buf_printf(b, "%sconst %s *restrict %s%s", k ? ", " : "",
                   k == 1 ? q->wt : k == 0 && q->pairs && *sfx ? "int16_t"
                                  : dtype_ctype(g->values[q->n->in[k]].dtype),
                   in_name(q, k), k < 2 ? sfx : "");
    buf_printf(b, ", %s *restrict y%s", q->yt, sfx);
}

/* The arguments of a call from the driver: the inputs, then the output y. */
static void put_args_y(const QK *q, Buf *b, const char *y)
{
    for (int k = 0; k < (int)arrlen(q->n->in); k++)
        buf_printf(b, "%s%s", k ? ", " : "", k == 0 && q->pairs ? "xw" : in_name(q, k));
    buf_printf(b, ", %s", y);
}

static void put_args(const QK *q, Buf *b) { put_args_y(q, b, "y"); }

/* (void) for the parameters a kernel may leave unread (literal multipliers, the table). */
static void put_unused(const QK *q, Buf *b)
{
    for (int k = 3; k < (int)arrlen(q->n->in); k++)
        buf_printf(b, "    (void)%s;\n", in_name(q, k));
}

/* The requantize parameters of channel ch (an expression) as locals qm, qs (and qr), or qf
 * and qk (m and 1.5 * 2^(52 + S), for the double requantize; no division): at the top of
 * the code for one channel. Nothing when they are the same for every channel. */
static void put_chan(const QK *q, Buf *b, const char *ind, const char *ch)
{
    if (q->ytype == 3 || q->uniform)
        return;
    if (q->dbl)
        buf_printf(b, "%sconst double qf = (double)mult[%s];\n"
                      "%sconst double qk = 6755399441055744.0 * 4294967296.0 * "
                      "(double)((int32_t)1 << (-1 - shift[%s]));\n", ind, ch, ind, ch);
    else if (q->high)
        buf_printf(b, "%sconst int32_t qm = mult[%s], qs = -1 - shift[%s];\n"
                      "%sconst int64_t qr = (int64_t)1 << (qs + 31);\n", ind, ch, ch, ind);
    else
        buf_printf(b, "%sconst int32_t qm = mult[%s], qs = shift[%s];\n", ind, ch, ch);
}

/* rq_fpm_h(v, ...) written out, for the x86 targets: the same arithmetic in a form
 * compilers vectorise (the high word of the int64 product as the low word of its
 * unsigned shift, no branch on its sign). */
static void put_fpm_x86(const QK *q, Buf *b, const char *ind)
{
    buf_printf(b, "%s    {\n%s        const int64_t pm = (int64_t)v * ", ind, ind);
    if (q->uniform)
        put_i32(b, q->m0);
    else
        buf_puts(b, "qm");
    if (q->uniform)
        buf_printf(b, ";\n%s        const int64_t pr = pm + ((int64_t)1 << %d)", ind, 30 - q->s0);
    else
        buf_printf(b, ";\n%s        const int64_t pr = pm + qr", ind);
    buf_puts(b, q->n->a.q.rounding ? " - (pm < 0);\n" : ";\n");
    buf_printf(b, "%s        const int32_t h = rq_wrap32((uint32_t)((uint64_t)pr >> 32));\n", ind);
    if (q->uniform)
        buf_printf(b, "%s        v = h >= 0 ? h >> %d : ~(~h >> %d);\n", ind, -1 - q->s0, -1 - q->s0);
    else
        buf_printf(b, "%s        v = h >= 0 ? h >> qs : ~(~h >> qs);\n", ind);
    buf_printf(b, "%s    }\n", ind);
}

/* Stores one output: the int32 sum acc (an expression) plus start (a uint32_t expression:
 * the bias and any correction), requantized (put_chan's parameters), at y[idx] (y: the
 * array's name). */
static void put_store(const QK *q, Buf *b, const char *ind, const char *acc, const char *start,
                      const char *y, const char *idx)
{
    const Attrs *a = &q->n->a;
    buf_printf(b, "%s{\n%s    int32_t v = rq_wrap32(%s + (uint32_t)%s);\n", ind, ind, start, acc);
    if (q->ytype != 3) {
        if (q->dbl) {
            buf_printf(b, "%s    v = v < -%d ? -%d : v;\n%s    v = v > %d ? %d : v;\n", ind, RQ_DBL_MAX,
                       RQ_DBL_MAX, ind, RQ_DBL_MAX, RQ_DBL_MAX);
            buf_printf(b, "%s    {\n%s        union { double d; int64_t i; } u;\n", ind, ind);
            if (q->uniform)
                buf_printf(b, "%s        u.d = (double)v * %ld.0 + 6755399441055744.0 * 4294967296.0 * %ld.0;\n",
                           ind, (long)q->m0, 1L << (-1 - q->s0));
            else
                buf_printf(b, "%s        u.d = (double)v * qf + qk;\n", ind);
            buf_printf(b, "%s        v = rq_wrap32((uint32_t)u.i);\n%s    }\n", ind, ind);
        } else if (q->high && x86(q)) {
            put_fpm_x86(q, b, ind);
        } else if (q->high && q->uniform) {
            buf_printf(b, "%s    v = rq_fpm_h(v, ", ind);
            put_i32(b, q->m0);
            buf_printf(b, ", (int64_t)1 << %d, %d, %d);\n", 30 - q->s0, -1 - q->s0, a->q.rounding);
        } else if (q->uniform) {
            buf_printf(b, "%s    v = rq_fpm(v, ", ind);
            put_i32(b, q->m0);
            buf_printf(b, ", %ld, %d);\n", (long)q->s0, a->q.rounding);
        } else if (q->high) {
            buf_printf(b, "%s    v = rq_fpm_h(v, qm, qr, qs, %d);\n", ind, a->q.rounding);
        } else {
            buf_printf(b, "%s    v = rq_fpm(v, qm, qs, %d);\n", ind, a->q.rounding);
        }
        if (a->q.yzp) {
            buf_printf(b, "%s    v = rq_wrap32((uint32_t)v + (uint32_t)", ind);
            put_i32(b, a->q.yzp);
            buf_puts(b, ");\n");
        }
    }
    if ((q->ytype == 0 || q->ytype == 1) && x86(q)) {
        /* x86: the clip as two statements, which gcc 12 vectorises as a max and a min
         * (one conditional expression became masked blends of 4-lane vectors: the
         * requantize of TK_CONV_F32 blocks took about as long as their products; the 1x1
         * 64 -> 128 conv at 28 on Zen 5, x86-64-avx512: 156 -> 129 us) */
        buf_printf(b, "%s    v = v < %ld ? %ld : v;\n%s    v = v > %ld ? %ld : v;\n", ind,
                   (long)a->q.ylo, (long)a->q.ylo, ind, (long)a->q.yhi, (long)a->q.yhi);
        if (q->wide_store)
            buf_printf(b, "%s    %s[%s] = v;\n", ind, y, idx);
        else
            buf_printf(b, "%s    %s[%s] = (%s)v;\n", ind, y, idx, q->yt);
    } else if ((q->ytype == 0 || q->ytype == 1) && q->wide_store)
        buf_printf(b, "%s    %s[%s] = v < %ld ? %ld : v > %ld ? %ld : v;\n", ind, y, idx,
                   (long)a->q.ylo, (long)a->q.ylo, (long)a->q.yhi, (long)a->q.yhi);
    else if (q->ytype == 0 || q->ytype == 1)
        buf_printf(b, "%s    %s[%s] = (%s)(v < %ld ? %ld : v > %ld ? %ld : v);\n", ind, y, idx, q->yt,
                   (long)a->q.ylo, (long)a->q.ylo, (long)a->q.yhi, (long)a->q.yhi);
    else
        buf_printf(b, "%s    %s[%s] = v;\n", ind, y, idx);
    buf_printf(b, "%s}\n", ind);
}

static void put_comment(const QK *q, Buf *b, const char *what)
{
    const Graph *g = q->g;
    const Node *n = q->n;
    char s1[160], s2[160];
    buf_printf(b, "/* n%d: nodes[%d] %s: %s %s %s -> %s %s, zero points %ld (input) %ld (weights)",
               q->idx, n->json, n->relay_op ? n->relay_op : "", what,
               dtype_name(g->values[n->in[0]].dtype), shape_str(&g->values[n->in[0]].shape, s1, sizeof s1),
               dtype_name(g->values[n->out].dtype), shape_str(&g->values[n->out].shape, s2, sizeof s2),
               (long)q->zx, (long)q->zw);
    if (q->ytype != 3)
        buf_printf(b, ", requantized (%s, output zero point %ld)",
                   q->n->a.q.rounding ? "TONEAREST" : "UPWARD", (long)n->a.q.yzp);
    buf_puts(b, " */\n");
}

/* The end of a block function: the R x P sums sR_P (R channels from oc, P outputs
 * from i, the channels plane apart) stored in one loop. With a table of kt entries per
 * channel, the sums of rows [ky0, ky1) of taps are corrected (pack_qnn.c). */
static void put_block_end(const QK *q, Buf *b, int R, int P, long plane, int kt)
{
    buf_puts(b, "    {\n");
    buf_printf(b, "        const int32_t acc[%d] = {", R * P);
    for (int r = 0; r < R; r++)
        for (int p = 0; p < P; p++)
            buf_printf(b, "%s s%d_%d", r || p ? "," : "", r, p);
    buf_puts(b, " };\n        int r, p;\n");
    buf_printf(b, "        for (r = 0; r < %d; r++) {\n", R);
    if (kt)
        buf_printf(b, "            const uint32_t st = (uint32_t)bias[oc + r] - ((uint32_t)ztab[(oc + r) * %d "
                      "+ ky1] - (uint32_t)ztab[(oc + r) * %d + ky0]);\n", kt, kt);
    else
        buf_puts(b, "            const uint32_t st = (uint32_t)bias[oc + r];\n");
    put_chan(q, b, "            ", "oc + r");
    buf_printf(b, "            for (p = 0; p < %d; p++)\n", P);
    char idx[64], acc[32];
    snprintf(idx, sizeof idx, "i + r * %ld + p", plane);
    snprintf(acc, sizeof acc, "acc[r * %d + p]", P);
    put_store(q, b, "                ", acc, "st", "y", idx);
    buf_puts(b, "        }\n    }\n}\n\n");
}

/* int32_t s0_0 = 0, ...: the R x P sums of a register block (R weight rows x P inputs). */
static void put_int_sums(Buf *b, const char *ind, int R, int P)
{
    buf_printf(b, "%sint32_t", ind);
    for (int r = 0; r < R; r++)
        for (int p = 0; p < P; p++)
            buf_printf(b, "%s s%d_%d = 0", r || p ? "," : "", r, p);
    buf_puts(b, ";\n");
}

/* A register block's integer dot products: for t in [0, L) (loop variable t), P inputs at
 * xs[p * xstride + t] against R weight rows at ws0[t], ws1[t], ... (ws the pointers' name
 * prefix): s<r>_<p> += input p x weight r, each input and weight loaded once a step. */
static void put_int_dot(Buf *b, const char *ind, int R, int P, int L, const char *t, const char *xs,
                        long xstride, const char *ws)
{
    buf_printf(b, "%sfor (%s = 0; %s < %d; %s++) {\n", ind, t, t, L, t);
    for (int p = 0; p < P; p++) {
        buf_printf(b, "%s    const int32_t a%d = %s[", ind, p, xs);
        if (p)
            buf_printf(b, "%ld + ", p * xstride);
        buf_printf(b, "%s];\n", t);
    }
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s    const int32_t c%d = %s%d[%s];\n", ind, r, ws, r, t);
    for (int r = 0; r < R; r++)
        for (int p = 0; p < P; p++)
            buf_printf(b, "%s    s%d_%d += a%d * c%d;\n", ind, r, p, p, r);
    buf_printf(b, "%s}\n", ind);
}

/* ---- conv2d ---- */

/* conv_init's shape; 1x1 convs of TK_CONV over one long row, U input channels a step */
static void qconv_init(const QK *q, Conv *c)
{
    const Node *n = q->n;
    conv_init(q->g, q->idx, n->a.tile.kind == TK_CONV, c);
    if (c->flat)
        c->U = c->CIG % 4 == 0 ? 4 : c->CIG % 2 == 0 ? 2 : 1;
    if (q->pairs) /* input channels two at a time (pairs), four in a 1x1 when they divide */
        c->U = c->flat && c->CIG % 4 == 0 ? 4 : 2;
}

/* The start of a block or edge function: where block blk (batch, group, channel block)
 * and row oy are: x, w, y, oc, ky0, ky1 (and nr, the channels stored). */
static void put_block_start(const QK *q, const Conv *c, Buf *b, bool need_nr)
{
    put_params(q, b, "_");
    buf_puts(b, ", int blk, int oy, int ox)\n{\n");
    put_block_locals(c, b, need_nr);
    buf_printf(b, "    const int kyn = %d - iy0 < 0 ? 0 : (%d - iy0) / %d + 1;\n", c->HI - 1, c->HI - 1,
               c->DH);
    buf_printf(b, "    const int ky1 = kyn > %d ? %d : kyn;\n", c->KH, c->KH);
    buf_printf(b, "    const int kyt = iy0 >= 0 ? 0 : (-iy0 + %d) / %d;\n", c->DH - 1, c->DH);
    buf_puts(b, "    const int ky0 = kyt > ky1 ? ky1 : kyt;\n");
    buf_printf(b, "    const %s *x = x_ + ((long)bt * %d + (long)grp * %d) * %ld;\n",
               q->pairs ? "int16_t" : q->xt, c->CI, c->CIG, (long)c->HI * c->WI);
    buf_printf(b, "    const %s *w = w_ + (long)gb * %ld;\n", q->wt, (long)c->CIG * c->KH * c->KW * c->RB);
    buf_printf(b, "    %s *y = y_ + (long)bt * %ld;\n", q->yt, (long)c->CO * c->HO * c->WO);
    put_unused(q, b);
}

/* Pairs (Cortex-M, tile.vw 2): the input as int16 pairs of input channels (ic, ic + 1)
 * per pixel, x[((ic / 2) * hi + iy) * wi + ix] * 2 + 0 and + 1, and the weights as the
 * matching pairs [cig/2][kh][kw][rb][2]: each tap of a block is one dual multiply-add
 * (__smlad) per channel and column under the DSP extension; the plain C reads the same
 * pairs otherwise. The body of a block's loop over the rows of taps, c->U / 2 pairs a
 * step. */
static void put_pair_taps(const QK *q, const Conv *c, int R, Buf *b)
{
    long chw = (long)c->HI * c->WI;
    int taps = c->KH * c->KW, span = (c->WB - 1) * c->SW + (c->KW - 1) * c->DW + 1;
    /* pair ic / 2 starts at x + ic * hi * wi, its weights at w + ic * kh * kw * rb */
    buf_printf(b, "            const int16_t *xr = x + (long)ic * %ld + ((iy0 + ky * %d) * %d + "
                  "(ox * %d - %d)) * 2;\n", chw, c->DH, c->WI, c->SW, c->PL);
    buf_printf(b, "            const %s *wr = w + ((long)ic * %d + ky * 2) * %d;\n", q->wt, c->KH,
               c->KW * c->RB);
    buf_puts(b, DSP_IF);
    for (int u = 0; u < c->U / 2; u++) { /* one pair at a time: its inputs, then its taps */
        buf_puts(b, "            {\n                int32_t wv");
        for (int i = 0; i < span; i++)
            buf_printf(b, ", p%d", i);
        buf_puts(b, ";\n");
        for (int i = 0; i < span; i++)
            buf_printf(b, "                memcpy(&p%d, xr + %ld, 4);\n", i, (u * chw + i) * 2);
        for (int kx = 0; kx < c->KW; kx++)
            for (int r = 0; r < R; r++) {
                buf_printf(b, "                memcpy(&wv, wr + %d, 4);\n",
                           ((u * taps + kx) * c->RB + r) * 2);
                for (int j = 0; j < c->WB; j++)
                    buf_printf(b, "                s%d_%d = __smlad(p%d, wv, s%d_%d);\n", r, j,
                               j * c->SW + kx * c->DW, r, j);
            }
        buf_puts(b, "            }\n");
    }
    buf_puts(b, "#else\n");
    for (int u = 0; u < c->U / 2; u++)
        for (int kx = 0; kx < c->KW; kx++)
            for (int r = 0; r < R; r++)
                for (int j = 0; j < c->WB; j++) {
                    int o = ((u * taps + kx) * c->RB + r) * 2;
                    long at = (u * chw + j * c->SW + kx * c->DW) * 2;
                    buf_printf(b, "            s%d_%d += wr[%d] * xr[%ld] + wr[%d] * xr[%ld];\n", r, j, o,
                               at, o + 1, at + 1);
                }
    buf_puts(b, "#endif\n");
}

/* kN_bR: the register block of R output channels x wb columns. */
static void emit_qblock(const QK *q, const Conv *c, int R, Buf *b)
{
    const Node *n = q->n;
    long plane = (long)c->HO * c->WO, chw = (long)c->HI * c->WI;
    int taps = c->KH * c->KW;
    buf_printf(b, "/* n%d: %d output channels from oc x %d columns from (oy, ox); taps ky in "
                  "[ky0, ky1), every kx */\n", q->idx, R, c->WB);
    buf_printf(b, "static void k%d_b%d(", q->idx, R);
    put_block_start(q, c, b, false);
    buf_puts(b, "    int32_t");
    for (int r = 0; r < R; r++)
        for (int j = 0; j < c->WB; j++)
            buf_printf(b, "%s s%d_%d = 0", r || j ? "," : "", r, j);
    buf_puts(b, ";\n    int ic, ky;\n");
    buf_printf(b, "    for (ic = 0; ic < %d; ic += %d) {\n", c->CIG, c->U);
    buf_puts(b, "        for (ky = ky0; ky < ky1; ky++) {\n");
    if (q->pairs) {
        put_pair_taps(q, c, R, b);
        buf_puts(b, "        }\n    }\n");
        buf_printf(b, "    const long i = ((long)oc * %d + oy) * %d + ox;\n", c->HO, c->WO);
        put_block_end(q, b, R, c->WB, plane, n->a.q.ztab ? c->KH + 1 : 0);
        return;
    }
    buf_printf(b, "            const %s *xr = x + ((long)ic * %d + iy0 + ky * %d) * %d + (ox * %d - %d);\n",
               q->xt, c->HI, c->DH, c->WI, c->SW, c->PL);
    buf_printf(b, "            const %s *wr = w + ((long)ic * %d + ky) * %d;\n", q->wt, c->KH,
               c->KW * c->RB);
    buf_puts(b, "            int32_t xv");
    for (int r = 0; r < R; r++)
        buf_printf(b, ", w%d", r);
    buf_puts(b, ";\n");
    for (int u = 0; u < c->U; u++)
        for (int kx = 0; kx < c->KW; kx++) {
            for (int r = 0; r < R; r++)
                buf_printf(b, "            w%d = wr[%d];\n", r, ((u * taps) + kx) * c->RB + r);
            for (int j = 0; j < c->WB; j++) {
                buf_printf(b, "            xv = xr[%ld];\n", u * chw + (long)kx * c->DW + (long)j * c->SW);
                for (int r = 0; r < R; r++)
                    buf_printf(b, "            s%d_%d += w%d * xv;\n", r, j, r);
            }
        }
    buf_puts(b, "        }\n    }\n");
    buf_printf(b, "    const long i = ((long)oc * %d + oy) * %d + ox;\n", c->HO, c->WO);
    put_block_end(q, b, R, c->WB, plane, n->a.q.ztab ? c->KH + 1 : 0);
}

/* kN_e: one border pixel, nr (<= rb) output channels from oc, taps clipped. */
static void emit_qedge(const QK *q, const Conv *c, Buf *b)
{
    buf_printf(b, "/* n%d: one pixel near the border, nr output channels from oc; taps clipped */\n",
               q->idx);
    buf_printf(b, "static void k%d_e(", q->idx);
    put_block_start(q, c, b, true);
    buf_puts(b, "    int32_t");
    for (int r = 0; r < c->RB; r++)
        buf_printf(b, "%s a%d = 0", r ? "," : "", r);
    buf_puts(b, ";\n");
    put_border_locals(c, b);
    if (q->pairs) {
        buf_printf(b, "    for (ic = 0; ic < %d; ic += 2) {\n", c->CIG);
        buf_puts(b, "        for (ky = ky0; ky < ky1; ky++) {\n");
        buf_printf(b, "            const int16_t *xr = x + ((long)(ic / 2) * %d + iy0 + ky * %d) * %d;\n",
                   c->HI, c->DH, c->WI * 2);
        buf_printf(b, "            const %s *wr = w + ((long)(ic / 2) * %d + ky) * %d;\n", q->wt, c->KH,
                   c->KW * c->RB * 2);
        buf_puts(b, "            for (kx = kx0; kx < kx1; kx++) {\n");
        buf_printf(b, "                const int16_t *xk = xr + (ix0 + kx * %d) * 2;\n", c->DW);
        for (int h = 0; h < 2; h++) {
            buf_printf(b, "                const int32_t x%d = (int32_t)xk[%d]", h, h);
            put_minus(b, q->zx);
            buf_puts(b, ";\n");
        }
        buf_printf(b, "                const %s *wk = wr + kx * %d;\n", q->wt, c->RB * 2);
        for (int r = 0; r < c->RB; r++)
            buf_printf(b, "                a%d += wk[%d] * x0 + wk[%d] * x1;\n", r, 2 * r, 2 * r + 1);
        buf_puts(b, "            }\n        }\n    }\n");
    } else {
    buf_printf(b, "    for (ic = 0; ic < %d; ic++) {\n", c->CIG);
    buf_puts(b, "        for (ky = ky0; ky < ky1; ky++) {\n");
    buf_printf(b, "            const %s *xr = x + ((long)ic * %d + iy0 + ky * %d) * %d;\n", q->xt,
               c->HI, c->DH, c->WI);
    buf_printf(b, "            const %s *wr = w + ((long)ic * %d + ky) * %d;\n", q->wt, c->KH,
               c->KW * c->RB);
    buf_puts(b, "            for (kx = kx0; kx < kx1; kx++) {\n");
    buf_printf(b, "                const int32_t xv = (int32_t)xr[ix0 + kx * %d]", c->DW);
    put_minus(b, q->zx);
    buf_puts(b, ";\n");
    buf_printf(b, "                const %s *wk = wr + kx * %d;\n", q->wt, c->RB);
    for (int r = 0; r < c->RB; r++)
        buf_printf(b, "                a%d += wk[%d] * xv;\n", r, r);
    buf_puts(b, "            }\n        }\n    }\n");
    }
    buf_printf(b, "    {\n    const int32_t a[%d] = {", c->RB);
    for (int r = 0; r < c->RB; r++)
        buf_printf(b, "%s a%d", r ? "," : "", r);
    buf_puts(b, " };\n");
    buf_puts(b, "    for (r = 0; r < nr; r++) {\n");
    buf_printf(b, "        const long i = ((long)(oc + r) * %d + oy) * %d + ox;\n", c->HO, c->WO);
    put_chan(q, b, "        ", "oc + r");
    put_store(q, b, "        ", "a[r]", "(uint32_t)bias[oc + r]", "y", "i");
    buf_puts(b, "    }\n    }\n}\n\n");
}

/* The block and border functions' arguments: put_args, for put_conv_driver. */
static void put_call_args(const void *ctx, Buf *b, bool rows)
{
    (void)rows;
    put_args(ctx, b);
}

static void emit_qdirect(const QK *q, Buf *b)
{
    Conv c;
    qconv_init(q, &c);
    bool border = !c.strips || c.OXLO > 0 || c.OXHI < c.WO;
    if (q->pairs)
        buf_puts(b, DSP_IF "#include <arm_acle.h>\n#include <string.h>\n#endif\n");
    if (c.strips) {
        emit_qblock(q, &c, c.RB, b);
        if (c.LAST != c.RB)
            emit_qblock(q, &c, c.LAST, b);
    }
    if (border)
        emit_qedge(q, &c, b);
    put_comment(q, b, "conv2d");
    if (q->pairs)
        buf_printf(b, "/* tiling: %d output channels x %d columns in registers, the input copied to "
                      "int16 pairs of input channels in xw, weights w' packed [%d][%d][%d][%d][%d][%d][2] "
                      "(int16); interior columns [%d, %d) */\n",
                   c.RB, c.WB, c.G, c.NB, c.CIG / 2, c.KH, c.KW, c.RB, c.OXLO, c.OXHI);
    else
        buf_printf(b, "/* tiling: %d output channels x %d columns in registers, weights w' packed "
                      "[%d][%d][%d][%d][%d][%d] (int8); interior columns [%d, %d) */\n",
                   c.RB, c.WB, c.G, c.NB, c.CIG, c.KH, c.KW, c.RB, c.OXLO, c.OXHI);
    buf_printf(b, "static void k%d_qconv2d(", q->idx);
    put_params(q, b, "");
    if (q->pairs) {
        long hw = (long)c.HI * c.WI;
        buf_puts(b, ", int16_t *restrict xw)\n{\n");
        buf_puts(b, "    {\n        long p, i;\n");
        buf_printf(b, "        for (p = 0; p < %ld; p++) { /* input channels 2p and 2p + 1 */\n",
                   (long)c.N * c.CI / 2);
        buf_printf(b, "            const %s *x0 = x + p * %ld;\n", q->xt, 2 * hw);
        buf_printf(b, "            int16_t *d = xw + p * %ld;\n", 2 * hw);
        buf_printf(b, "            for (i = 0; i < %ld; i++) {\n", hw);
        buf_printf(b, "                d[2 * i] = x0[i];\n                d[2 * i + 1] = x0[i + %ld];\n",
                   hw);
        buf_puts(b, "            }\n        }\n    }\n");
    } else {
        buf_puts(b, ")\n{\n");
    }
    ConvCalls cc = { &c, false, false, put_call_args, q };
    put_conv_driver(&cc, b);
    buf_puts(b, "}\n\n");
}

/* ---- depthwise ---- */

/* The plane's value of input element src[j], x - zx as an int32 or (fp) a float, and the
 * end of the statement. */
static void put_plane_value(const QK *q, Buf *b, bool fp, const char *src)
{
    buf_printf(b, "%s(int32_t)%s[j]", fp ? "(float)(" : "", src);
    put_minus(b, q->zx);
    buf_puts(b, fp ? ");\n" : ";\n");
}

/* The float sum s of a depthwise output's taps over the plane from p0: a sum per row of
 * taps (s, s1, ...), added at the end (one chain of kh * kw dependent float multiply-adds
 * made the 3x3 at 28 x 28 latency-bound: 165 us against 117 with three chains; each
 * partial sum is exact too). The plane of a channel, rows of wp, weights w0.., output
 * column ox; split by column phase (phase: the elements of one) where phase > 0. */
static void put_dw_row_sums(Buf *b, const Conv *c, int wp, long phase, const char *ind)
{
    buf_printf(b, "%sfloat s", ind);
    for (int ky = 1; ky < c->KH; ky++)
        buf_printf(b, ", s%d", ky);
    buf_puts(b, ";\n");
    for (int kx = 0; kx < c->KW; kx++)
        for (int ky = 0; ky < c->KH; ky++) {
            char acc[8];
            long off = (long)ky * c->DH * wp + (long)kx * c->DW;
            snprintf(acc, sizeof acc, ky ? "s%d" : "s", ky);
            if (phase) /* tap column kx * dw: phase kx * dw % sw, column / sw */
                buf_printf(b, "%s%s %s= w%d * p0[ox + %ld];\n", ind, acc, kx ? "+" : "",
                           ky * c->KW + kx, (long)kx * c->DW % c->SW * phase +
                           (long)ky * c->DH * wp + (long)kx * c->DW / c->SW);
            else
                buf_printf(b, "%s%s %s= w%d * p0[ox * %d + %ld];\n", ind, acc, kx ? "+" : "",
                           ky * c->KW + kx, c->SW, off);
        }
    if (c->KH > 1) {
        buf_printf(b, "%ss = s", ind);
        for (int ky = 1; ky < c->KH; ky++)
            buf_printf(b, " + s%d", ky);
        buf_puts(b, ";\n");
    }
}

/* Column phase p of a plane of rows split by column phase (its column j is padded column
 * j * sw + p, input column j * sw + p - pl): the columns [*lo, *hi) that hold the input,
 * within [0, width). */
static void phase_columns(const Conv *c, int p, long width, long *lo, long *hi)
{
    *lo = c->PL - p <= 0 ? 0 : (c->PL - p + c->SW - 1) / c->SW;
    *hi = (long)c->WI - 1 + c->PL - p < 0 ? 0 : ((long)c->WI - 1 + c->PL - p) / c->SW + 1;
    *lo = *lo > width ? width : *lo;
    *hi = *hi > width ? width : *hi < *lo ? *lo : *hi;
}

/* The input rows of a channel (xc, rows of c->WI) into the plane split by column phase
 * (phases of hp x pw floats from pl; the padding zero already): phase p's column j is
 * padded column j * sw + p, input column j * sw + p - pl. */
static void put_plane_phases(const QK *q, const Conv *c, int rows, int hp, int pw, Buf *b)
{
    buf_printf(b, "            for (r = 0; r < %d; r++) {\n", rows);
    buf_printf(b, "                float *pr = pl + (long)(r + %d) * %d;\n", c->PT, pw);
    buf_printf(b, "                const %s *xr = xc + (long)r * %d;\n", q->xt, c->WI);
    for (int p = 0; p < c->SW; p++) {
        long lo, hi;
        phase_columns(c, p, pw, &lo, &hi);
        if (hi <= lo)
            continue;
        buf_printf(b, "                for (j = %ld; j < %ld; j++)\n", lo, hi);
        buf_printf(b, "                    pr[%ld + j] = (float)((int32_t)xr[j * %d %c %d]",
                   (long)p * hp * pw, c->SW, p >= c->PL ? '+' : '-', p >= c->PL ? p - c->PL : c->PL - p);
        put_minus(b, q->zx);
        buf_puts(b, ");\n");
    }
    buf_puts(b, "            }\n");
}

/* TK_DEPTHWISE with tile.rows (x86, generic): per channel, the input as x - zx in a zero-padded int32
 * plane of the rows and columns the outputs read (the scratch), then per output row one
 * loop over the columns, every tap inside the plane, that compilers vectorise with the
 * requantize. */
/* The input rows [0, rows) of a channel into the plane (rows wp apart, columns [PL, ixe)):
 * from the channel's input xc as x - zx, or (whole) from xz, where they are already. */
static void put_plane_rows(const QK *q, const Conv *c, int rows, int wp, int ixe, bool fp,
                           bool whole, Buf *b)
{
    const char *pt = fp ? "float" : "int32_t";
    buf_printf(b, "            for (r = 0; r < %d; r++) {\n", rows);
    buf_printf(b, "                %s *pr = pl + (long)(r + %d) * %d + %d;\n", pt, c->PT, wp, c->PL);
    buf_printf(b, "                const %s *xr = %s + (long)r * %d;\n", whole ? pt : q->xt,
               whole ? "xz" : "xc", c->WI);
    buf_printf(b, "                for (j = 0; j < %d; j++)\n                    pr[j] = ", ixe - c->PL);
    if (whole)
        buf_puts(b, "xr[j];\n");
    else
        put_plane_value(q, b, fp, "xr");
    buf_puts(b, "            }\n");
}

/* --target generic, 8-bit outputs through the int32 plane ya (qdepthwise_wide_store): where
 * RC_SIMD is 0 (scalar cores) the input goes into the plane row by row and the outputs
 * straight into y, without the copies through ya that let compilers vectorise the loops
 * (Cortex-M4 -O2, depthwise 3x3 x32 @28: 1.82M -> 1.63M instructions). */
bool qdepthwise_split(const Graph *g, int idx)
{
    const Node *n = &g->nodes[idx];
    QK q;
    if (g->target != TARGET_GENERIC || n->op != IR_QCONV2D || n->a.tile.kind != TK_DEPTHWISE ||
        !n->a.tile.rows || n->a.tile.lanes)
        return false;
    qk_init(g, idx, &q);
    return (q.ytype == 0 || q.ytype == 1) &&
           qdepthwise_wide_store(&n->a.conv, g->values[n->out].shape.dim[3]);
}

static void emit_qdepthwise_plane(const QK *q0, Buf *b)
{
    QK qw = *q0;
    const QK *q = &qw;
    Conv c;
    qconv_init(q, &c);
    int hp, wp, pw, taps = c.KH * c.KW;
    bool fp = q->n->a.tile.vw == 1; /* a float plane (pack_qnn.c: the sums are exact) */
    /* strided along the rows, with float sums by rows of taps: the plane split by column
     * phase, so that every tap reads contiguous columns (the float kernel's layout; the
     * quantized MobileNetV2, gcc 12 -O3 -march=native, x86-64-avx512 on Emerald Rapids:
     * 3x3 stride 2 96 @32 -> 16 36.3 -> 15.3 us, 144 @16 -> 8 18.6 -> 10.9) */
    bool phased = c.SW > 1 && fp && taps <= 25 && c.KH > 1;
    if (qdepthwise_plane(&q->n->a.conv, c.HO, c.WO, &hp, &wp, &pw) == INT64_MAX)
        unreachable(); /* pack_qnn.c: the plane fits */
    long phase = phased ? (long)hp * pw : 0, plane = phased ? c.SW * phase : (long)hp * wp;
    qw.wide_store = (q->ytype == 0 || q->ytype == 1) && qdepthwise_wide_store(&q->n->a.conv, c.WO);
    bool split = qw.wide_store && q->g->target == TARGET_GENERIC; /* see qdepthwise_split */
    if ((plane + (qw.wide_store ? (long)c.HO * c.WO : 0)) * 4 > q->n->a.tile.scratch)
        unreachable(); /* pack_qnn.c sized the scratch */
    int ixe = c.WI + c.PL < wp ? c.WI + c.PL : wp; /* plane columns [PL, ixe) hold the input */
    const char *pt = fp ? "float" : "int32_t", *zero = fp ? "0.0f" : "0";
    char yi[48];
    snprintf(yi, sizeof yi, "(long)oy * %d + ox", c.WO);
    put_plane_macros(b);
    put_comment(q, b, "depthwise conv2d");
    buf_printf(b, "/* per channel: the input as x - zx in a zero-padded %s plane [%d][%d]", fp ? "float" : "int32",
               hp, wp);
    if (phased)
        buf_printf(b, " split by column phase into [%d][%d][%d]", c.SW, hp, pw);
    buf_printf(b, ", then rows of outputs with every tap inside it%s */\n",
               fp ? " (float sums: each an integer below 2^24, exact)" : "");
    buf_printf(b, "static void k%d_qconv2d(", q->idx);
    put_params(q, b, "");
    buf_puts(b, ", int16_t *restrict rows_)\n{\n");
    buf_printf(b, "    %s *restrict pl = (%s *)(void *)rows_;\n", pt, pt);
    if (qw.wide_store) /* the outputs of a channel, clipped, before they are narrowed */
        buf_printf(b, "    int32_t *restrict ya = (int32_t *)(void *)(pl + %ld);\n", plane);
    buf_puts(b, "    int bt, ch, oy, ox, r, j;\n");
    put_unused(q, b);
    if (split)
        buf_puts(b, "#if !RC_SIMD\n    (void)ya;\n#endif\n");
    /* the plane's padding, zeroed once: each channel writes only the input's place */
    buf_printf(b, "    for (j = 0; j < %ld; j++)\n        pl[j] = %s;\n", plane, zero);
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c.N);
    buf_printf(b, "        for (ch = 0; ch < %d; ch++) {\n", c.CO);
    buf_printf(b, "            const %s *xc = x + ((long)bt * %d + ch) * %ld;\n", q->xt, c.CO,
               (long)c.HI * c.WI);
    buf_printf(b, "            const %s *wc = w + (long)ch * %d;\n", q->wt, taps);
    buf_printf(b, "            %s *yc = y + ((long)bt * %d + ch) * %ld;\n", q->yt, c.CO,
               (long)c.HO * c.WO);
    buf_puts(b, "            const uint32_t b0 = (uint32_t)bias[ch];\n");
    put_chan(q, b, "            ", "ch");
    /* where the channel's outputs before narrowing (ya) have room for its input: the input
     * as x - zx there first, in one loop over the channel that compilers vectorise whole,
     * then its rows into the plane (a loop per row converting rows of 28 ran in narrow
     * vectors and a scalar rest: q_dwconv3x3_128_28 with the padding zeroed once, gcc 12
     * -O3, Emerald Rapids, 71.4 -> 63.0 us) */
    bool whole = qw.wide_store && !phased && (long)c.HI * c.WI <= (long)c.HO * c.WO;
    if (whole && split)
        buf_puts(b, "#if RC_SIMD\n");
    if (whole) {
        buf_printf(b, "            %s *xz = (%s *)(void *)ya;\n", pt, pt);
        buf_printf(b, "            for (j = 0; j < %ld; j++)\n                xz[j] = ", (long)c.HI * c.WI);
        put_plane_value(q, b, fp, "xc");
    }
    int rows = c.HI < hp - c.PT ? c.HI : hp - c.PT; /* input rows in the plane */
    if (rows > 0 && phased) {
        put_plane_phases(q, &c, rows, hp, pw, b);
    } else if (rows > 0 && ixe > c.PL) {
        put_plane_rows(q, &c, rows, wp, ixe, fp, whole, b);
        if (whole && split) {
            buf_puts(b, "#else\n");
            put_plane_rows(q, &c, rows, wp, ixe, fp, false, b);
        }
    }
    if (whole && split)
        buf_puts(b, "#endif\n");
    for (int k = 0; k < taps && taps <= 25; k++)
        buf_printf(b, "            const %s w%d = %swc[%d];\n", pt, k, fp ? "(float)" : "", k);
    /* x86-64-avx512: a row of outputs as strips of one vector of 16, the last overlapping
     * the one before, where 16 does not divide it: gcc left the rest of a row to narrower
     * or scalar epilogues (dwconv3x3 128 @28 on a Zen 4 core, rows of 16 + 12: 46.5 ->
     * 34 us). Not on x86-64-avx2: strips of 8 took 55.6 us against 47, and strips of 16
     * built for an AVX2 core (-march=znver3) 66.8 against 66 */
    int vl = 16;
    bool strips = q->g->target == TARGET_X86_64_AVX512 && c.WO > vl && c.WO % vl;
    buf_printf(b, "            for (oy = 0; oy < %d; oy++) {\n", c.HO);
    buf_printf(b, "                const %s *p0 = pl + (long)oy * %d;\n", pt, c.SH * (phased ? pw : wp));
    /* RC_PLOOP (put_plane_macros): clang 14 unrolled the loops, as the float kernel's, and
     * left the sums scalar: dwconv3x3 128 @28 391 -> 80 us (-O3 -march=native, avx512; gcc
     * 53). A loop over a whole row it keeps but leaves scalar (its load PRE carries each
     * plane value to the next column: a recurrence its vectoriser rejects), and it
     * vectorises strips of one vector, which gcc runs slower: under #if defined(__clang__),
     * on the x86 targets, for rows of two strips or more (with one, clang folds the strip's
     * start and is back to the row). x86-64-avx2, -O3 -march=x86-64-v3, 3x3 128 @28: 350 ->
     * 148 us (gcc 88, in strips 98); x86-64-avx512, the quantized MobileNetV2's 3x3 32 @32:
     * 116 -> 25 us (gcc 16-22) */
    int cvl = q->g->target == TARGET_X86_64_AVX512 ? vl : 8;
    bool cstrips = !strips && (q->g->target == TARGET_X86_64_AVX2 ||
                               q->g->target == TARGET_X86_64_AVX512) && c.WO > cvl;
    if (cstrips)
        buf_puts(b, "#if defined(__clang__)\n");
    if (strips || cstrips) {
        int v = strips ? vl : cvl;
        buf_printf(b, "                int o0;\n                RC_PLOOP for (o0 = 0; o0 < %d; o0 += %d) {\n", c.WO, v);
        buf_printf(b, "                const int st = o0 + %d <= %d ? o0 : %d;\n", v, c.WO, c.WO - v);
        buf_printf(b, "                RC_PLOOP for (ox = st; ox < st + %d; ox++) {\n", v);
    }
    if (cstrips)
        buf_puts(b, "#else\n");
    if (!strips)
        buf_printf(b, "                RC_PLOOP for (ox = 0; ox < %d; ox++) {\n", c.WO);
    if (cstrips)
        buf_puts(b, "#endif\n");
    if (taps <= 25 && fp && c.KH > 1) {
        put_dw_row_sums(b, &c, phased ? pw : wp, phase, "                    ");
    } else if (taps <= 25) {
        buf_printf(b, "                    %s s = %s;\n", pt, zero);
        for (int ky = 0; ky < c.KH; ky++)
            for (int kx = 0; kx < c.KW; kx++)
                buf_printf(b, "                    s += w%d * p0[ox * %d + %ld];\n", ky * c.KW + kx, c.SW,
                           (long)ky * c.DH * wp + (long)kx * c.DW);
    } else {
        buf_printf(b, "                    %s s = %s;\n", pt, zero);
        buf_printf(b, "                    int ky;\n                    for (ky = 0; ky < %d; ky++) {\n", c.KH);
        buf_printf(b, "                        const %s *pk = p0 + (long)ky * %ld + ox * %d;\n", pt,
                   (long)c.DH * wp, c.SW);
        for (int kx = 0; kx < c.KW; kx++)
            buf_printf(b, "                        s += %swc[ky * %d + %d] * pk[%d];\n", fp ? "(float)" : "",
                       c.KW, kx, kx * c.DW);
        buf_puts(b, "                    }\n");
    }
    if (split) {
        QK qn = qw;
        qn.wide_store = false;
        buf_puts(b, "#if RC_SIMD\n");
        put_store(q, b, "                    ", fp ? "(int32_t)s" : "s", "b0", "ya", yi);
        buf_puts(b, "#else\n");
        put_store(&qn, b, "                    ", fp ? "(int32_t)s" : "s", "b0", "yc", yi);
        buf_puts(b, "#endif\n");
    } else {
        put_store(q, b, "                    ", fp ? "(int32_t)s" : "s", "b0", qw.wide_store ? "ya" : "yc", yi);
    }
    buf_puts(b, "                }\n");
    if (cstrips)
        buf_puts(b, "#if defined(__clang__)\n                }\n#endif\n");
    buf_puts(b, strips ? "                }\n            }\n" : "            }\n");
    if (split)
        buf_puts(b, "#if RC_SIMD\n");
    if (qw.wide_store)
        buf_printf(b, "            for (j = 0; j < %ld; j++)\n                yc[j] = (%s)ya[j];\n",
                   (long)c.HO * c.WO, q->yt);
    if (split)
        buf_puts(b, "#endif\n");
    buf_puts(b, "        }\n    }\n}\n\n");
}

/* TK_DEPTHWISE with tile.lanes (x86, outputs of a few pixels a channel): blocks of wb
 * channels as the vector lanes, as the float kernel (kernel_conv2d.c, emit_depthwise_lanes).
 * Per block, the inputs as x - zx in floats [hi * wi][wb] (the scratch) and the weights
 * (packed [co / wb][taps][wb], pack_qnn.c) in floats [taps][wb]; then per output pixel
 * (unrolled) one loop over the block's channels summing the taps inside the input (the
 * padding's read x - zx = 0) and requantizing (per-channel parameters per lane) into an
 * int32 buffer [pixel][wb], transposed into the output last. The plane kernel above spent
 * most of its time per channel on planes of 4 x 4. */
static void emit_qdepthwise_lanes(const QK *q0, Buf *b)
{
    QK qw = *q0;
    const QK *q = &qw;
    Conv c;
    qconv_init(q, &c);
    int cb = q->n->a.tile.wb, taps = c.KH * c.KW;
    long in = (long)c.HI * c.WI, pix = (long)c.HO * c.WO;
    /* pack_qnn.c sized the scratch and chose the block; the sums are of floats, as every
     * sum of at most 25 taps of 8-bit operands is below 25 * 255 * 255 < 2^24, exact in
     * any order */
    if ((in + taps + pix) * cb * 4 > q->n->a.tile.scratch || c.CO % cb || taps > 25 ||
        q->n->a.tile.vw != 1)
        unreachable();
    qw.wide_store = true; /* every output through ya, as int32 */
    put_comment(q, b, "depthwise conv2d");
    buf_printf(b, "/* per block of %d channels (the vector lanes): the inputs as x - zx in floats "
                  "[%ld][%d], the weights [%d][%d], the taps inside the input of each output pixel "
                  "in one loop over the block (float sums: each an integer below 2^24, exact) */\n",
               cb, in, cb, taps, cb);
    buf_printf(b, "static void k%d_qconv2d(", q->idx);
    put_params(q, b, "");
    buf_puts(b, ", int16_t *restrict rows_)\n{\n");
    buf_puts(b, "    float *restrict xf = (float *)(void *)rows_;\n");
    buf_printf(b, "    float *restrict wf = xf + %ld;\n", in * cb);
    buf_printf(b, "    int32_t *restrict ya = (int32_t *)(void *)(wf + %d);\n", taps * cb);
    buf_puts(b, "    int bt, c0, c, j, k;\n");
    put_unused(q, b);
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c.N);
    buf_printf(b, "        for (c0 = 0; c0 < %d; c0 += %d) {\n", c.CO, cb);
    buf_printf(b, "            for (c = 0; c < %d; c++) {\n", cb);
    buf_printf(b, "                const %s *xc = x + ((long)bt * %d + c0 + c) * %ld;\n", q->xt, c.CO, in);
    buf_printf(b, "                for (j = 0; j < %ld; j++)\n", in);
    buf_printf(b, "                    xf[(long)j * %d + c] = (float)((int32_t)xc[j]", cb);
    put_minus(b, q->zx);
    buf_puts(b, ");\n            }\n");
    buf_printf(b, "            for (k = 0; k < %d; k++)\n", taps);
    buf_printf(b, "                for (c = 0; c < %d; c++)\n", cb);
    buf_printf(b, "                    wf[k * %d + c] = (float)w[(long)c0 * %d + k * %d + c];\n", cb, taps, cb);
    for (int oy = 0; oy < c.HO; oy++)
        for (int ox = 0; ox < c.WO; ox++) {
            char idx[32];
            buf_printf(b, "            for (c = 0; c < %d; c++) { /* output (%d, %d) */\n", cb, oy, ox);
            buf_puts(b, "                const uint32_t b0 = (uint32_t)bias[c0 + c];\n");
            put_chan(q, b, "                ", "c0 + c");
            buf_puts(b, "                float s = 0.0f;\n");
            put_lane_taps(b, &c, oy, ox, cb, "                ", "s", "xf");
            snprintf(idx, sizeof idx, "%ld + c", ((long)oy * c.WO + ox) * cb);
            put_store(q, b, "                ", "(int32_t)s", "b0", "ya", idx);
            buf_puts(b, "            }\n");
        }
    buf_printf(b, "            for (c = 0; c < %d; c++) {\n", cb);
    buf_printf(b, "                %s *yc = y + ((long)bt * %d + c0 + c) * %ld;\n", q->yt, c.CO, pix);
    buf_printf(b, "                for (j = 0; j < %ld; j++)\n", pix);
    buf_printf(b, "                    yc[j] = (%s)ya[(long)j * %d + c];\n", q->yt, cb);
    buf_puts(b, "            }\n        }\n    }\n}\n\n");
}

/* The integer depthwise border pixel's body: clipped taps (minus the input zero point),
 * the requantize and store. */
typedef struct {
    const QK *q;
    const Conv *c;
    int ky0, ky1;
    bool rowloop;
    const char *yi;
} QdwBorder;

static void qdw_border_body(const void *ctx, Buf *b)
{
    const QdwBorder *d = ctx;
    const QK *q = d->q;
    const Conv *c = d->c;
    buf_puts(b, "                    int32_t s = 0;\n                    int kx;\n");
    if (d->rowloop) {
        buf_printf(b, "                    int ky;\n                    for (ky = %d; ky < %d; ky++) {\n",
                   d->ky0, d->ky1);
        buf_printf(b, "                        const %s *rr = xc + (long)(oy * %d + ky * %d - %d) * %d;\n",
                   q->xt, c->SH, c->DH, c->PT, c->WI);
        buf_printf(b, "                        for (kx = kx0; kx < kx1; kx++)\n"
                      "                            s += wc[ky * %d + kx] * ((int32_t)rr[ix + kx * %d]",
                   c->KW, c->DW);
        put_minus(b, q->zx);
        buf_puts(b, ");\n                    }\n");
    }
    for (int ky = d->ky0; ky < d->ky1 && !d->rowloop; ky++) {
        buf_printf(b, "                    for (kx = kx0; kx < kx1; kx++)\n"
                      "                        s += wc[%d + kx] * ((int32_t)r%d[ix + kx * %d]",
                   ky * c->KW, ky, c->DW);
        put_minus(b, q->zx);
        buf_puts(b, ");\n");
    }
    put_store(q, b, "                    ", "s", "b0", "yc", d->yi);
    buf_puts(b, "                }\n");
}

static void emit_qdepthwise(const QK *q, Buf *b)
{
    const Node *n = q->n;
    Conv c;
    qconv_init(q, &c);
    int C = c.CO;
    long plane = (long)c.HO * c.WO;
    char yi[48];
    snprintf(yi, sizeof yi, "(long)oy * %d + ox", c.WO);
    put_comment(q, b, "depthwise conv2d");
    buf_printf(b, "/* per channel and output row: the interior columns [%d, %d) with the taps "
                  "unrolled */\n", c.OXLO, c.OXHI);
    buf_printf(b, "static void k%d_qconv2d(", q->idx);
    put_params(q, b, "");
    buf_puts(b, ")\n{\n    int bt, ch, oy, ox;\n");
    put_unused(q, b);
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c.N);
    buf_printf(b, "        for (ch = 0; ch < %d; ch++) {\n", C);
    bool any_taps = false;
    for (int r = 0; r < c.HO && !any_taps; r++) {
        int iy0 = r * c.SH - c.PT;
        int k0 = iy0 >= 0 ? 0 : (-iy0 + c.DH - 1) / c.DH;
        int k1 = c.HI - 1 - iy0 < 0 ? 0 : (c.HI - 1 - iy0) / c.DH + 1;
        any_taps = (k1 > c.KH ? c.KH : k1) > k0;
    }
    if (any_taps)
        buf_printf(b, "            const %s *xc = x + ((long)bt * %d + ch) * %ld;\n", q->xt, C,
                   (long)c.HI * c.WI);
    if (any_taps)
        buf_printf(b, "            const %s *wc = w + (long)ch * %d;\n", q->wt, c.KH * c.KW);
    buf_printf(b, "            %s *yc = y + ((long)bt * %d + ch) * %ld;\n", q->yt, C, plane);
    buf_puts(b, "            const uint32_t b0 = (uint32_t)bias[ch];\n");
    put_chan(q, b, "            ", "ch");
    int oy = 0;
    while (oy < c.HO) {
        int ky0, ky1, end = conv_row_group(oy, c.HO, c.HI, c.KH, c.SH, c.DH, c.PT, &ky0, &ky1);
        buf_printf(b, "            for (oy = %d; oy < %d; oy++) { /* taps ky in [%d, %d) */\n", oy, end,
                   ky0, ky1);
        if (ky0 == ky1) { /* every tap in the padding: the bias alone */
            buf_printf(b, "                for (ox = 0; ox < %d; ox++)\n", c.WO);
            put_store(q, b, "                    ", "0", "b0", "yc", yi);
            buf_puts(b, "            }\n");
            oy = end;
            continue;
        }
        if (c.OXHI > c.OXLO && n->a.q.ztab)
            buf_printf(b, "                const uint32_t bi = b0 - ((uint32_t)ztab[ch * %d + %d] - "
                          "(uint32_t)ztab[ch * %d + %d]);\n", c.KH + 1, ky1, c.KH + 1, ky0);
        else if (c.OXHI > c.OXLO)
            buf_puts(b, "                const uint32_t bi = b0;\n");
        /* more than 9 taps: a loop over the rows of taps, so that the compiler does not
         * keep every weight in a register (a Cortex-M4 spills them past its 256-byte
         * frames); up to 9, every tap unrolled */
        bool rowloop = c.KH * c.KW > 9;
        for (int ky = ky0; ky < ky1 && !rowloop; ky++)
            buf_printf(b, "                const %s *r%d = xc + (long)(oy * %d + %d) * %d;\n", q->xt, ky,
                       c.SH, ky * c.DH - c.PT, c.WI);
        if (c.OXHI > c.OXLO) {
            buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", c.OXLO, c.OXHI);
            buf_printf(b, "                    const int ix = ox * %d - %d;\n", c.SW, c.PL);
            buf_puts(b, "                    int32_t s = 0;\n");
            if (rowloop) {
                buf_printf(b, "                    int ky;\n                    for (ky = %d; ky < %d; ky++) {\n",
                           ky0, ky1);
                buf_printf(b, "                        const %s *rr = xc + (long)(oy * %d + ky * %d - %d) * %d + ix;\n",
                           q->xt, c.SH, c.DH, c.PT, c.WI);
                buf_printf(b, "                        const %s *wk = wc + ky * %d;\n", q->wt, c.KW);
                for (int kx = 0; kx < c.KW; kx++)
                    buf_printf(b, "                        s += wk[%d] * rr[%d];\n", kx, kx * c.DW);
                buf_puts(b, "                    }\n");
            }
            for (int ky = ky0; ky < ky1 && !rowloop; ky++)
                for (int kx = 0; kx < c.KW; kx++)
                    buf_printf(b, "                    s += wc[%d] * r%d[ix + %d];\n", ky * c.KW + kx,
                               ky, kx * c.DW);
            put_store(q, b, "                    ", "s", "bi", "yc", yi);
            buf_puts(b, "                }\n");
        }
        QdwBorder db = { q, &c, ky0, ky1, rowloop, yi };
        put_border_spans(&c, b, qdw_border_body, &db);
        buf_puts(b, "            }\n");
        oy = end;
    }
    buf_puts(b, "        }\n    }\n}\n\n");
}

/* ---- conv2d, rows (x86, generic) ---- */

typedef struct {
    Conv c;
    int S;          /* output columns per strip */
    int SEGW;       /* input columns a strip reads */
    int P;          /* pixels per block */
    long COL;       /* elements per buffer column: kh * ci */
    bool u8;        /* the buffer holds uint8 (x + 128 for int8 x) against int8 weights */
    const char *bt; /* its element type */
    int L;          /* the length of one dot product: kw*kh*ci (dilation 1) or kh*ci */
    int64_t RING;   /* bytes of the ring of transposed input rows after the buffer (0: none) */
    int64_t SUMS;   /* the strip's int32 sums [co][S]: their offset in the scratch (bytes) */
} QRows;

static void qrows_init(const QK *q, QRows *r)
{
    Conv *c = &r->c;
    qconv_init(q, c);
    int64_t segw;
    r->P = c->WB;
    r->COL = (long)c->KH * c->CI;
    r->S = qrows_strip(&q->n->a.conv, c->CI, c->WO, r->P, &segw);
    r->SEGW = (int)segw;
    r->u8 = q->n->a.tile.vw == 1;
    r->bt = r->u8 ? "uint8_t" : "int16_t";
    r->RING = qrows_ring_bytes(&q->n->a.conv, c->CI, c->WO, r->S, segw, r->u8);
    r->SUMS = qrows_sums_at(segw * r->COL * (r->u8 ? 1 : 2) + r->RING);
    if (r->SUMS + (int64_t)c->CO * r->S * 4 > q->n->a.tile.scratch)
        unreachable(); /* pack_qnn.c sized the scratch */
    r->L = c->DW == 1 ? (int)(c->KW * r->COL) : (int)r->COL;
}

/* The sums of R output channels from oc + `so` x P pixels (their first column at xb in the
 * buffer), stored at sr[(oc + so + r) * S + p], as a block of its own (ind: its indent). */
static void put_qrows_sums(const QK *q, const QRows *rw, int R, int P, const char *so,
                           const char *ind, Buf *b)
{
    const Conv *c = &rw->c;
    int K = c->KH * c->KW * c->CI;
    char in2[32];
    snprintf(in2, sizeof in2, "%s    ", ind);
    buf_printf(b, "%s{\n", ind);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s    const %s *w%d = w + (long)(oc + %s%d) * %d;\n", ind, q->wt, r, so, r, K);
    put_int_sums(b, in2, R, P);
    buf_printf(b, "%s    int %st;\n", ind, c->DW == 1 ? "" : "kx, ");
    if (c->DW == 1) {
        put_int_dot(b, in2, R, P, rw->L, "t", "xb", (long)c->SW * rw->COL, "w");
    } else {
        buf_printf(b, "%s    for (kx = 0; kx < %d; kx++) {\n", ind, c->KW);
        buf_printf(b, "%s        const %s *xk = xb + (long)kx * %ld;\n", ind, rw->bt, (long)c->DW * rw->COL);
        for (int r = 0; r < R; r++)
            buf_printf(b, "%s        const %s *v%d = w%d + (long)kx * %ld;\n", ind, q->wt, r, r, rw->COL);
        char in3[40];
        snprintf(in3, sizeof in3, "%s        ", ind);
        put_int_dot(b, in3, R, P, rw->L, "t", "xk", (long)c->SW * rw->COL, "v");
        buf_printf(b, "%s    }\n", ind);
    }
    for (int r = 0; r < R; r++)
        for (int p = 0; p < P; p++)
            buf_printf(b, "%s    sr[(long)(oc + %s%d) * %d + %d] = s%d_%d;\n", ind, so, r, rw->S, p, r, p);
    buf_printf(b, "%s}\n", ind);
}

/* kN_rR_P: R output channels from oc x P pixels (the first one's column at xb in the
 * buffer); their sums stored at sr[(oc + r) * S + p], sr at the first pixel's column.
 * With Conv.S (generic), in passes of S channels where RC_SIMD is 0. */
static void emit_qrows_block(const QK *q, const QRows *rw, int R, int P, Buf *b)
{
    int S = rw->c.S, RS = S ? R / S * S : 0;
    buf_printf(b, "/* n%d: %d output channels from oc x %d pixels, their sums */\n", q->idx, R, P);
    buf_printf(b, "static void k%d_r%d_%d(const %s *restrict xb, const %s *restrict w, "
                  "int32_t *restrict sr, int oc)\n{\n", q->idx, R, P, rw->bt, q->wt);
    if (S && R > S) {
        buf_puts(b, "#if RC_SIMD\n");
        put_qrows_sums(q, rw, R, P, "", "    ", b);
        buf_printf(b, "#else /* in passes of %d channel(s): small frames where the sums are on "
                      "the stack */\n    int s;\n    for (s = 0; s < %d; s += %d)\n", S, RS, S);
        put_qrows_sums(q, rw, S, P, "s + ", "    ", b);
        if (RS < R) {
            char so[16];
            snprintf(so, sizeof so, "%d + ", RS);
            put_qrows_sums(q, rw, R - RS, P, so, "    ", b);
        }
        buf_puts(b, "#endif\n");
    } else {
        put_qrows_sums(q, rw, R, P, "", "    ", b);
    }
    buf_puts(b, "}\n\n");
}

/* The start of kN_rq(sr, the kernel's parameters, `params`) (what: the sums it takes, for
 * its comment; locals: its int variables), and the QK its stores are written with: 8-bit
 * outputs clipped and stored as int32 (narrowed in a loop of their own). */
static QK put_rq_start(const QK *q, Buf *b, const char *what, const char *params,
                       const char *locals)
{
    QK qw = *q;
    qw.wide_store = q->ytype == 0 || q->ytype == 1;
    buf_printf(b, "/* n%d: the sums of %s requantized into the output */\n", q->idx, what);
    buf_printf(b, "static void k%d_rq(int32_t *restrict sr, ", q->idx);
    put_params(q, b, "");
    buf_printf(b, ", %s)\n{\n    int %s;\n    (void)x;\n    (void)w;\n", params, locals);
    put_unused(q, b);
    return qw;
}

/* kN_rq: the sums of a strip of nx columns from ox0 of output row oy, sr [co][S], plus
 * the bias (and the table's entry on uint8 buffers), requantized per channel into y:
 * 8-bit outputs requantized and clipped in place as int32, then narrowed in loops of their
 * own (a loop of int64 products that also stores 8-bit values runs on 2-lane vectors in
 * gcc 12). One scalar requantize per sum at the end of each block took about a third of
 * the 3x3 conv of 32 channels at 56 on x86-64-avx512. */
static void emit_qrows_requant(const QK *q, const QRows *rw, Buf *b)
{
    const Conv *c = &rw->c;
    long plane = (long)c->HO * c->WO;
    bool narrow = q->ytype == 0 || q->ytype == 1;
    QK qw = put_rq_start(q, b, "a strip", "int oy, int ox0, int nx", "oc, j");
    buf_printf(b, "    for (oc = 0; oc < %d; oc++) {\n", c->CO);
    buf_printf(b, "        int32_t *so = sr + (long)oc * %d;\n", rw->S);
    buf_printf(b, "        %s *yo = y + (long)oc * %ld + (long)oy * %d + ox0;\n", q->yt, plane, c->WO);
    buf_printf(b, "        const uint32_t st = (uint32_t)bias[oc]%s;\n",
               rw->u8 ? " + (uint32_t)ztab[oc]" : "");
    put_chan(q, b, "        ", "oc");
    buf_puts(b, "        RC_CLOOP for (j = 0; j < nx; j++)\n");
    put_store(&qw, b, "            ", "so[j]", "st", narrow ? "so" : "yo", "j");
    if (narrow)
        buf_printf(b, "        RC_CLOOP for (j = 0; j < nx; j++)\n            yo[j] = (%s)so[j];\n", q->yt);
    buf_puts(b, "    }\n}\n\n");
}

/* kN_g: the buffer for output row oy and the strip of columns from ox0: columns [0, j0)
 * and [j1, SEGW) of it are padding, as are rows of taps outside the input. */
/* The loops of a uint8 buffer's gather for the 8 channels from ic (little-endian: their
 * bytes of a column one uint64_t store at dst + j * stride + ic): columns [0, lo) and
 * [hi, end) the pad byte, columns [lo, hi) the bytes of input rows xr + k * plane at
 * column j - off, plus 128 when shift (int8 x). */
static void put_u8_words(Buf *b, const char *ind, const char *dst, long stride, const char *lo,
                         const char *hi, int end, long plane, int off, bool shift, int pad)
{
    unsigned long long pw = 0x0101010101010101ull * (unsigned)pad;
    buf_printf(b, "%sfor (j = 0; j < %s; j++)\n", ind, lo);
    buf_printf(b, "%s    *(uint64_t *)(void *)(%s + (long)j * %ld + ic) = 0x%016llxu;\n", ind, dst, stride, pw);
    buf_printf(b, "%sfor (j = %s; j < %s; j++)\n", ind, lo, hi);
    buf_printf(b, "%s    *(uint64_t *)(void *)(%s + (long)j * %ld + ic) =", ind, dst, stride);
    for (int k = 0; k < 8; k++) {
        if (k)
            buf_printf(b, "\n%s        | (uint64_t)(uint8_t)(xr[%ld + ", ind, (long)k * plane);
        else
            buf_puts(b, " (uint64_t)(uint8_t)(xr[");
        buf_puts(b, "j");
        if (off)
            buf_printf(b, " - %d", off);
        buf_printf(b, "]%s)", shift ? " + 128" : "");
        if (k)
            buf_printf(b, " << %d", k * 8);
    }
    buf_puts(b, ";\n");
    buf_printf(b, "%sfor (j = %s; j < %d; j++)\n", ind, hi, end);
    buf_printf(b, "%s    *(uint64_t *)(void *)(%s + (long)j * %ld + ic) = 0x%016llxu;\n", ind, dst, stride, pw);
}

/* With a ring (QRows.RING): kN_t transposes input row iy into a slot of the ring,
 * [SEGW][ci] as x + 128 (x for uint8), the zero point's byte in the padding columns, 8
 * channels of a column one uint64_t store (see emit_qrows_gather); kN_g copies the
 * slots output row oy reads into its buffer, runs of ci bytes. */
static void emit_qrows_ring(const QK *q, const QRows *rw, Buf *b)
{
    const Conv *c = &rw->c;
    int pad = qrows_u8_pad(q->g->values[q->n->in[0]].dtype, q->zx);
    bool shift = q->g->values[q->n->in[0]].dtype == DT_I8;
    int j0 = c->PL < rw->SEGW ? c->PL : rw->SEGW;
    int j1 = c->WI + c->PL < rw->SEGW ? c->WI + c->PL : rw->SEGW;
    if (j1 < j0)
        j1 = j0;
    buf_printf(b, "/* n%d: input row iy as %s in [%d][%d], the zero point in the padding */\n", q->idx,
               shift ? "x + 128" : "x", rw->SEGW, c->CI);
    buf_printf(b, "static void k%d_t(const %s *restrict xb, uint8_t *restrict t, int iy)\n{\n", q->idx,
               q->xt);
    buf_puts(b, "    int ic, j;\n");
    buf_printf(b, "    for (ic = 0; ic < %d; ic += 8) {\n", c->CI);
    buf_printf(b, "        const %s *xr = xb + ((long)ic * %d + iy) * %d;\n", q->xt, c->HI, c->WI);
    char lo[16], hi[16];
    snprintf(lo, sizeof lo, "%d", j0);
    snprintf(hi, sizeof hi, "%d", j1);
    put_u8_words(b, "        ", "t", c->CI, lo, hi, rw->SEGW, (long)c->HI * c->WI, c->PL, shift, pad);
    buf_puts(b, "    }\n}\n\n");
    buf_printf(b, "/* n%d: the buffer of output row oy, from the ring's slots */\n", q->idx);
    buf_printf(b, "static void k%d_g(const uint8_t *restrict ring, uint8_t *restrict rows, int oy)\n{\n",
               q->idx);
    buf_puts(b, "    int ky, ic, j;\n");
    buf_printf(b, "    for (ky = 0; ky < %d; ky++) {\n", c->KH);
    buf_printf(b, "        const int iy = oy * %d - %d + ky;\n", c->SH, c->PT);
    buf_printf(b, "        uint8_t *r = rows + ky * %d;\n", c->CI);
    buf_puts(b, "        const uint8_t *s;\n");
    buf_printf(b, "        if (iy < 0 || iy >= %d) {\n", c->HI);
    buf_printf(b, "            for (j = 0; j < %d; j++)\n", rw->SEGW);
    buf_printf(b, "                for (ic = 0; ic < %d; ic++)\n", c->CI);
    buf_printf(b, "                    r[(long)j * %ld + ic] = %d;\n", rw->COL, pad);
    buf_puts(b, "            continue;\n        }\n");
    buf_printf(b, "        s = ring + (long)(iy %% %d) * %ld;\n", c->KH, (long)rw->SEGW * c->CI);
    buf_printf(b, "        for (j = 0; j < %d; j++)\n", rw->SEGW);
    buf_printf(b, "            for (ic = 0; ic < %d; ic++)\n", c->CI);
    buf_printf(b, "                r[(long)j * %ld + ic] = s[(long)j * %d + ic];\n", rw->COL, c->CI);
    buf_puts(b, "    }\n}\n\n");
}

static void emit_qrows_gather(const QK *q, const QRows *rw, Buf *b)
{
    if (rw->RING) {
        emit_qrows_ring(q, rw, b);
        return;
    }
    const Conv *c = &rw->c;
    int pad = rw->u8 ? qrows_u8_pad(q->g->values[q->n->in[0]].dtype, q->zx) : 0;
    bool shift = rw->u8 && q->g->values[q->n->in[0]].dtype == DT_I8;
    buf_printf(b, "/* n%d: the input rows that output row oy reads, columns from ox0, as %s */\n",
               q->idx, !rw->u8 ? "x - zx" : shift ? "x + 128 (the zero point in the padding)"
                                                  : "x (the zero point in the padding)");
    buf_printf(b, "static void k%d_g(const %s *restrict xb, %s *restrict rows, int oy, int ox0)\n{\n",
               q->idx, q->xt, rw->bt);
    buf_printf(b, "    const int ixs = ox0 * %d - %d;\n", c->SW, c->PL);
    buf_puts(b, "    const int j0 = ixs < 0 ? -ixs : 0;\n");
    buf_printf(b, "    const int je = %d - ixs < %d ? %d - ixs : %d;\n", c->WI, rw->SEGW, c->WI, rw->SEGW);
    buf_puts(b, "    const int j1 = je < j0 ? j0 : je;\n");
    buf_puts(b, "    int ky, ic, j;\n");
    buf_printf(b, "    for (ky = 0; ky < %d; ky++) {\n", c->KH);
    buf_printf(b, "        const int iy = oy * %d - %d + ky * %d;\n", c->SH, c->PT, c->DH);
    buf_printf(b, "        %s *r = rows + ky * %d;\n", rw->bt, c->CI);
    buf_printf(b, "        if (iy < 0 || iy >= %d) {\n", c->HI);
    buf_printf(b, "            for (j = 0; j < %d; j++)\n", rw->SEGW);
    buf_printf(b, "                for (ic = 0; ic < %d; ic++)\n", c->CI);
    buf_printf(b, "                    r[(long)j * %ld + ic] = %d;\n", rw->COL, pad);
    buf_puts(b, "            continue;\n        }\n");
    /* uint8 buffers on x86 (little-endian): 8 channels at a time, their bytes of a column
     * as one uint64_t store (a byte store per element took a third of the 3x3 conv of 32
     * channels at 56, x86-64-avx512: 254 -> 220 us). The runs of 8 are 8-byte aligned (the
     * scratch is 64-byte aligned), and the blocks read the bytes as uint8_t, which may
     * alias any type (an int16 buffer written so and read as int16_t would not: gcc -O3
     * reorders such accesses) */
    if (rw->u8 && c->CI % 8 == 0) {
        buf_printf(b, "        for (ic = 0; ic < %d; ic += 8) {\n", c->CI);
        buf_printf(b, "            const %s *xr = xb + ((long)ic * %d + iy) * %d + ixs;\n", q->xt, c->HI,
                   c->WI);
        put_u8_words(b, "            ", "r", rw->COL, "j0", "j1", rw->SEGW, (long)c->HI * c->WI, 0, shift,
                     pad);
        buf_puts(b, "        }\n    }\n}\n\n");
        return;
    }
    buf_printf(b, "        for (ic = 0; ic < %d; ic++) {\n", c->CI);
    buf_printf(b, "            const %s *xr = xb + ((long)ic * %d + iy) * %d + ixs;\n", q->xt, c->HI,
               c->WI);
    buf_puts(b, "            for (j = 0; j < j0; j++)\n");
    buf_printf(b, "                r[(long)j * %ld + ic] = %d;\n", rw->COL, pad);
    buf_puts(b, "            for (; j < j1; j++)\n");
    if (shift) {
        buf_printf(b, "                r[(long)j * %ld + ic] = (uint8_t)(xr[j] + 128);\n", rw->COL);
    } else if (rw->u8) {
        buf_printf(b, "                r[(long)j * %ld + ic] = xr[j];\n", rw->COL);
    } else {
        buf_printf(b, "                r[(long)j * %ld + ic] = (int16_t)(xr[j]", rw->COL);
        put_minus(b, q->zx);
        buf_puts(b, ");\n");
    }
    buf_printf(b, "            for (; j < %d; j++)\n", rw->SEGW);
    buf_printf(b, "                r[(long)j * %ld + ic] = %d;\n", rw->COL, pad);
    buf_puts(b, "        }\n    }\n}\n\n");
}

/* Pass `pass` of a strip of nx columns: its blocks' pixels P (0: none), over columns [*from,
 * *to) (empty when no block fits). Blocks of P, then of 2 where P is wider (a column or two
 * left over in rows of 10 or 14 ran as blocks of one pixel, which load the weights for
 * each; LeNet's conv2, Cortex-M4, generic: 683k -> 633k instructions), then of 1. */
static int qrows_pass(const QRows *rw, int nx, int pass, int *from, int *to)
{
    int P = 0;
    *to = 0;
    for (int k = 0; k <= pass; k++) {
        P = k == 0 ? rw->P : k == 1 ? (rw->P > 2 ? 2 : 0) : rw->P > 1 ? 1 : 0;
        *from = *to;
        if (P)
            *to = *from + (nx - *from) / P * P;
    }
    return P;
}

/* Whether a strip of nx columns calls the blocks of P pixels. */
static bool qrows_calls(const QRows *rw, int nx, int P)
{
    int from, to;
    for (int pass = 0; pass < 3; pass++)
        if (qrows_pass(rw, nx, pass, &from, &to) == P && to > from)
            return true;
    return false;
}

/* The blocks of a strip of nx columns from ox0 (an expression), at indent ind, then the
 * requantize of their sums. */
static void put_qrows_strip(const QK *q, const QRows *rw, Buf *b, const char *ind, const char *ox0,
                            int nx)
{
    const Conv *c = &rw->c;
    int NF = c->CO / c->RB * c->RB, LAST = c->CO - NF;
    if (rw->RING) { /* the input rows not in the ring yet (ox0 is 0: one strip a row) */
        buf_printf(b, "%sfor (ky = 0; ky < %d; ky++) {\n", ind, c->KH);
        buf_printf(b, "%s    const int iy = oy * %d - %d + ky;\n", ind, c->SH, c->PT);
        buf_printf(b, "%s    if (iy >= 0 && iy < %d && held[iy %% %d] != iy) {\n", ind, c->HI, c->KH);
        buf_printf(b, "%s        k%d_t(xb, ring + (long)(iy %% %d) * %ld, iy);\n", ind, q->idx, c->KH,
                   (long)rw->SEGW * c->CI);
        buf_printf(b, "%s        held[iy %% %d] = iy;\n%s    }\n%s}\n", ind, c->KH, ind, ind);
        buf_printf(b, "%sk%d_g(ring, rows, oy);\n", ind, q->idx);
    } else {
        buf_printf(b, "%sk%d_g(xb, rows, oy, %s);\n", ind, q->idx, ox0);
    }
    for (int pass = 0; pass < 3; pass++) {
        int from, to, P = qrows_pass(rw, nx, pass, &from, &to);
        if (P == 0 || from >= to)
            continue;
        buf_printf(b, "%sfor (p = %d; p < %d; p += %d) {\n", ind, from, to, P);
        if (NF > 0) {
            buf_printf(b, "%s    for (oc = 0; oc < %d; oc += %d)\n", ind, NF, c->RB);
            buf_printf(b, "%s        k%d_r%d_%d(rows + (long)p * %ld, w, sr + p, oc);\n", ind, q->idx,
                       c->RB, P, (long)c->SW * rw->COL);
        }
        if (LAST)
            buf_printf(b, "%s    k%d_r%d_%d(rows + (long)p * %ld, w, sr + p, %d);\n", ind, q->idx, LAST,
                       P, (long)c->SW * rw->COL, NF);
        buf_printf(b, "%s}\n", ind);
    }
    buf_printf(b, "%sk%d_rq(sr, ", ind, q->idx);
    put_args_y(q, b, "yb");
    buf_printf(b, ", oy, %s, %d);\n", ox0, nx);
}

static void emit_qrows(const QK *q, Buf *b)
{
    QRows rw;
    qrows_init(q, &rw);
    const Conv *c = &rw.c;
    int NF = c->CO / c->RB * c->RB, LAST = c->CO - NF;
    int full = c->WO / rw.S, rest = c->WO % rw.S;
    for (int last = 0; last < 2; last++) {
        int R = last ? LAST : c->RB;
        if (R == 0)
            continue;
        /* the blocks the strips call */
        for (int pass = 0, from, to; pass < 3; pass++) {
            int P = qrows_pass(&rw, rw.S, pass, &from, &to);
            if (P && ((full && qrows_calls(&rw, rw.S, P)) || (rest && qrows_calls(&rw, rest, P))))
                emit_qrows_block(q, &rw, R, P, b);
        }
    }
    emit_qrows_gather(q, &rw, b);
    put_cloop_macro(b);
    emit_qrows_requant(q, &rw, b);
    put_comment(q, b, "conv2d");
    buf_printf(b, "/* tiling: per output row and strip of %d columns, the input it reads as %s "
                  "in %s [%d][%d][%d]; %d output channels x %d pixels of dot products over "
                  "weights w' packed [%d][%d][%d][%d] (%s) */\n",
               rw.S, rw.u8 ? "bytes" : "x - zx", rw.u8 ? "uint8" : "int16", rw.SEGW, c->KH, c->CI,
               c->RB, rw.P, c->CO, c->KW, c->KH, c->CI, rw.u8 ? "int8" : "int16");
    buf_printf(b, "static void k%d_qconv2d(", q->idx);
    put_params(q, b, "");
    /* SEGW * COL elements: the node's scratch */
    buf_puts(b, rw.u8 ? ", int16_t *restrict rows_)\n{\n    uint8_t *restrict rows = (uint8_t *)(void *)rows_;\n"
                      : ", int16_t *restrict rows)\n{\n");
    buf_printf(b, "    int32_t *restrict sr = (int32_t *)(void *)((unsigned char *)(void *)%s + %ld);\n",
               rw.u8 ? "rows_" : "rows", (long)rw.SUMS);
    if (rw.RING) /* the ring after the buffer; held[k]: the input row in slot k (-1: none) */
        buf_printf(b, "    uint8_t *ring = rows + %ld;\n    int held[%d], ky;\n",
                   (long)rw.SEGW * rw.COL, c->KH);
    buf_printf(b, "    int bt, oy, oc, p%s;\n", full > 1 ? ", ox0" : "");
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c->N);
    buf_printf(b, "        const %s *xb = x + (long)bt * %ld;\n", q->xt, (long)c->CI * c->HI * c->WI);
    buf_printf(b, "        %s *yb = y + (long)bt * %ld;\n", q->yt, (long)c->CO * c->HO * c->WO);
    if (rw.RING)
        buf_printf(b, "        for (ky = 0; ky < %d; ky++)\n            held[ky] = -1;\n", c->KH);
    buf_printf(b, "        for (oy = 0; oy < %d; oy++) {\n", c->HO);
    if (full > 1) {
        buf_printf(b, "            for (ox0 = 0; ox0 < %d; ox0 += %d) {\n", full * rw.S, rw.S);
        put_qrows_strip(q, &rw, b, "                ", "ox0", rw.S);
        buf_puts(b, "            }\n");
    } else if (full == 1) {
        put_qrows_strip(q, &rw, b, "            ", "0", rw.S);
    }
    if (rest) {
        char ox0[16];
        snprintf(ox0, sizeof ox0, "%d", full * rw.S);
        buf_puts(b, "            /* the last, narrower strip */\n");
        put_qrows_strip(q, &rw, b, "            ", ox0, rest);
    }
    buf_puts(b, "        }\n    }\n}\n\n");
}

/* ---- conv2d in float32 (the x86 targets) ---- */

typedef struct {
    Conv c;
    int PW;         /* columns of one phase of a buffered row */
    int V, NV;      /* a block's columns: NV arrays of V sums per channel */
    long ROW;       /* packed weights per channel: ci * kh * kw */
} QF32;

static void qf32_init(const QK *q, QF32 *f)
{
    Conv *c = &f->c;
    conv_init(q->g, q->idx, false, c);
    int k = q->n->a.tile.wr;
    if (k) { /* a 1x1 conv of stride 1 without padding: the pixels in rows of k */
        c->HI = c->HO = c->HO * c->WO / k;
        c->WI = c->WO = k;
    }
    qf32_row_floats(&q->n->a.conv, c->CI, c->WO, &f->PW);
    int vl = q->g->target == TARGET_X86_64_AVX512 ? 16 : 8;
    f->V = c->WB > vl ? vl : c->WB;
    f->NV = c->WB / f->V;
    f->ROW = (long)c->CI * c->KH * c->KW;
}

/* kN_fR: R output channels from oc x WB columns of one row, i the first output (channel
 * oc's), xd the row buffer at the block's first column. Every sum is an integer below
 * 2^24 (pack_qnn.c), so the float sums and their conversion are exact. */
static void emit_qf32_block(const QK *q, const QF32 *f, int R, int WB, Buf *b)
{
    const Conv *c = &f->c;
    int NV = WB / f->V;
    long plane = (long)c->HO * c->WO;
    buf_printf(b, "/* n%d: %d output channels from oc x %d columns, in float32 */\n", q->idx, R, WB);
    buf_printf(b, "static void k%d_f%d%s(const float *restrict xd, ", q->idx, R, WB == c->WB ? "" : "_r");
    put_params(q, b, "");
    buf_puts(b, ", int oc, long i)\n{\n");
    buf_printf(b, "    const float *wb = w + (long)oc * %ld;\n", f->ROW);
    buf_puts(b, "    float");
    for (int r = 0; r < R; r++)
        for (int v = 0; v < NV; v++)
            buf_printf(b, "%s a%d_%d[%d]", r || v ? "," : "", r, v, f->V);
    buf_puts(b, ";\n    int j, t, kx;\n    (void)x;\n");
    put_unused(q, b);
    buf_printf(b, "    for (j = 0; j < %d; j++) {\n", f->V);
    for (int r = 0; r < R; r++)
        for (int v = 0; v < NV; v++)
            buf_printf(b, "        a%d_%d[j] = 0.0f;\n", r, v);
    buf_puts(b, "    }\n");
    buf_printf(b, "    for (t = 0; t < %d; t++) { /* (ic, ky) */\n", c->CI * c->KH);
    buf_printf(b, "        const float *xr = xd + (long)t * %ld;\n", (long)c->SW * f->PW);
    buf_printf(b, "        const float *wr = wb + (long)t * %ld;\n", (long)c->KW * c->RB);
    buf_printf(b, "        for (kx = 0; kx < %d; kx++) {\n", c->KW);
    buf_printf(b, "            const float *xk = xr + kx * %d %% %d * %d + kx * %d / %d;\n", c->DW,
               c->SW, f->PW, c->DW, c->SW);
    buf_printf(b, "            const float *wk = wr + kx * %d;\n", c->RB);
    /* a loop per channel (its weight broadcast once, gcc); under clang one loop over the
     * columns: clang 14 unrolled the loops per channel completely and left their
     * multiply-adds scalar (q_conv1x1 64 -> 128 at 28, x86-64-avx512, -O3 -march=native:
     * 436 -> 102 us; gcc 107) */
    buf_puts(b, "#if defined(__clang__)\n");
    for (int r = 0; r < R; r++)
        buf_printf(b, "            const float w%d = wk[%d];\n", r, r);
    buf_printf(b, "            for (j = 0; j < %d; j++) {\n", f->V);
    for (int v = 0; v < NV; v++) {
        buf_printf(b, "                const float x%d = xk[%d + j];\n", v, v * f->V);
        for (int r = 0; r < R; r++)
            buf_printf(b, "                a%d_%d[j] += w%d * x%d;\n", r, v, r, v);
    }
    buf_puts(b, "            }\n#else\n");
    for (int r = 0; r < R; r++) {
        buf_printf(b, "            RC_CLOOP for (j = 0; j < %d; j++) {\n", f->V);
        for (int v = 0; v < NV; v++)
            buf_printf(b, "                a%d_%d[j] += wk[%d] * xk[%d + j];\n", r, v, r, v * f->V);
        buf_puts(b, "            }\n");
    }
    buf_puts(b, "#endif\n        }\n    }\n");
    /* the sums as int32 in one loop (a loop reading the accumulator arrays and doing more
     * is left scalar by gcc 12), then each channel's requantize over them */
    buf_printf(b, "    {\n        int32_t s[%d];\n", R * WB);
    buf_printf(b, "        RC_CLOOP for (j = 0; j < %d; j++) {\n", f->V);
    for (int r = 0; r < R; r++)
        for (int v = 0; v < NV; v++)
            buf_printf(b, "            s[%d + j] = (int32_t)a%d_%d[j];\n", r * WB + v * f->V, r, v);
    buf_puts(b, "        }\n");
    /* 8-bit outputs: requantized and clipped in place as int32, then narrowed in loops
     * of their own (gcc 12 runs the int64 products of a loop that also stores 8-bit
     * values on 2-lane vectors: 129 -> 100 us on the 1x1 64 -> 128 conv at 28 on Zen 5) */
    QK qw = *q;
    bool narrow = q->ytype == 0 || q->ytype == 1;
    qw.wide_store = narrow;
    for (int r = 0; r < R; r++) {
        char ch[32], acc[48], idx[64];
        snprintf(ch, sizeof ch, "oc + %d", r);
        buf_printf(b, "        {\n            const uint32_t st = (uint32_t)bias[oc + %d];\n", r);
        put_chan(q, b, "            ", ch);
        buf_printf(b, "            RC_CLOOP for (j = 0; j < %d; j++)\n", WB);
        snprintf(acc, sizeof acc, "s[%d + j]", r * WB);
        if (narrow) /* in place */
            snprintf(idx, sizeof idx, "%d + j", r * WB);
        else
            snprintf(idx, sizeof idx, "i + %ld + j", r * plane);
        put_store(&qw, b, "                ", acc, "st", narrow ? "s" : "y", idx);
        buf_puts(b, "        }\n");
    }
    for (int r = 0; narrow && r < R; r++)
        buf_printf(b, "        RC_CLOOP for (j = 0; j < %d; j++)\n            y[i + %ld + j] = (%s)s[%d + j];\n",
                   WB, r * plane, q->yt, r * WB);
    buf_puts(b, "    }\n");
    buf_puts(b, "}\n\n");
}

/* kN_gf: the input rows output row oy reads, as x - zx in floats, 0 in the padding: row
 * (ic, ky) at xd + (ic * kh + ky) * sw * PW, column phase p at + p * PW, where column j
 * of phase p is padded input column j * sw + p. */
static void emit_qf32_gather(const QK *q, const QF32 *f, Buf *b)
{
    const Conv *c = &f->c;
    buf_printf(b, "/* n%d: the input rows that output row oy reads, as x - zx in floats */\n", q->idx);
    buf_printf(b, "static void k%d_gf(const %s *restrict xb, float *restrict xd, int oy)\n{\n",
               q->idx, q->xt);
    buf_puts(b, "    int ic, ky, j;\n");
    buf_printf(b, "    for (ic = 0; ic < %d; ic++) {\n", c->CI);
    buf_printf(b, "        for (ky = 0; ky < %d; ky++) {\n", c->KH);
    buf_printf(b, "            const int iy = oy * %d - %d + ky * %d;\n", c->SH, c->PT, c->DH);
    buf_printf(b, "            float *d = xd + (ic * %d + ky) * %ld;\n", c->KH, (long)c->SW * f->PW);
    buf_puts(b, "            const ");
    buf_printf(b, "%s *r;\n", q->xt);
    buf_printf(b, "            if (iy < 0 || iy >= %d) {\n", c->HI);
    buf_printf(b, "                for (j = 0; j < %ld; j++)\n", (long)c->SW * f->PW);
    buf_puts(b, "                    d[j] = 0.0f;\n                continue;\n            }\n");
    buf_printf(b, "            r = xb + ((long)ic * %d + iy) * %d;\n", c->HI, c->WI);
    for (int p = 0; p < c->SW; p++) {
        long lo, hi; /* column j of phase p reads input column j * sw + p - pl */
        phase_columns(c, p, f->PW, &lo, &hi);
        long at = (long)p * f->PW;
        if (lo > 0)
            buf_printf(b, "            for (j = 0; j < %ld; j++)\n                d[%ld + j] = 0.0f;\n", lo, at);
        if (hi > lo) { /* kept a loop: gcc 12 unrolled a row of 16 completely, then
                        * vectorised the loop over ic with strided loads and permutes
                        * (the 1x1 144 -> 24 at 16x16: 55 -> 17 us) */
            buf_printf(b, "            RC_CLOOP for (j = %ld; j < %ld; j++)\n", lo, hi);
            buf_printf(b, "                d[%ld + j] = (float)(r[j * %d + %ld]", at, c->SW, (long)p - c->PL);
            put_minus(b, q->zx);
            buf_puts(b, ");\n");
        }
        if (hi < f->PW)
            buf_printf(b, "            for (j = %ld; j < %d; j++)\n                d[%ld + j] = 0.0f;\n", hi,
                       f->PW, at);
    }
    buf_puts(b, "        }\n    }\n}\n\n");
}

static void emit_qf32(const QK *q, Buf *b)
{
    QF32 f;
    qf32_init(q, &f);
    const Conv *c = &f.c;
    long plane = (long)c->HO * c->WO;
    put_cloop_macro(b);
    /* the columns after the last full strip: a block of their own when they are whole
     * vectors, else a strip overlapping the one before (which stores the same values
     * again) */
    int full = c->WO / c->WB, rest = c->WO % c->WB;
    bool own = rest && rest % f.V == 0;
    for (int last = 0; last < 2; last++) {
        int R = last ? c->LAST : c->RB;
        if (last && c->LAST == c->RB)
            continue;
        emit_qf32_block(q, &f, R, c->WB, b);
        if (own)
            emit_qf32_block(q, &f, R, rest, b);
    }
    emit_qf32_gather(q, &f, b);
    put_comment(q, b, "conv2d");
    buf_printf(b, "/* tiling: in float32 (every sum an integer below 2^24); per output row%s, the "
                  "input rows it reads as x - zx in floats, split into %d column phase(s) of %d "
                  "(%ld floats); %d output channels x %d columns of sums; weights w' packed "
                  "[%d][%d][%d][%d][%d] (float) */\n",
               q->n->a.tile.wr ? " (the 1x1 conv's pixels flattened into rows)" : "", c->SW, f.PW,
               (long)c->CI * c->KH * c->SW * f.PW, c->RB, c->WB, c->NB, c->CI, c->KH, c->KW, c->RB);
    buf_printf(b, "static void k%d_qconv2d(", q->idx);
    put_params(q, b, "");
    buf_puts(b, ", int16_t *restrict xd_)\n{\n");
    buf_puts(b, "    float *restrict xd = (float *)(void *)xd_; /* the node's scratch */\n");
    buf_puts(b, "    int bt, oy, oc, ox;\n");
    buf_printf(b, "    for (bt = 0; bt < %d; bt++) {\n", c->N);
    buf_printf(b, "        const %s *xb = x + (long)bt * %ld;\n", q->xt, (long)c->CI * c->HI * c->WI);
    buf_printf(b, "        %s *yb = y + (long)bt * %ld;\n", q->yt, (long)c->CO * plane);
    buf_printf(b, "        for (oy = 0; oy < %d; oy++) {\n", c->HO);
    buf_printf(b, "            k%d_gf(xb, xd, oy);\n", q->idx);
    for (int last = 0; last < 2; last++) {
        int R = last ? c->LAST : c->RB, from = last ? (c->NB - 1) * c->RB : 0;
        int to = last ? c->CO : (c->LAST == c->RB ? c->CO : (c->NB - 1) * c->RB);
        if (last && c->LAST == c->RB)
            continue;
        if (from >= to)
            continue;
        buf_printf(b, "            for (oc = %d; oc < %d; oc += %d) {\n", from, to, R);
        buf_printf(b, "                for (ox = 0; ox < %d; ox += %d)\n", full * c->WB, c->WB);
        buf_printf(b, "                    k%d_f%d(xd + ox, ", q->idx, R);
        put_args_y(q, b, "yb");
        buf_printf(b, ", oc, (long)oc * %ld + (long)oy * %d + ox);\n", plane, c->WO);
        if (own) {
            buf_printf(b, "                k%d_f%d_r(xd + %d, ", q->idx, R, full * c->WB);
            put_args_y(q, b, "yb");
            buf_printf(b, ", oc, (long)oc * %ld + (long)oy * %d + %d);\n", plane, c->WO, full * c->WB);
        } else if (rest) {
            buf_printf(b, "                k%d_f%d(xd + %d, ", q->idx, R, c->WO - c->WB);
            put_args_y(q, b, "yb");
            buf_printf(b, ", oc, (long)oc * %ld + (long)oy * %d + %d);\n", plane, c->WO, c->WO - c->WB);
        }
        buf_puts(b, "            }\n");
    }
    buf_puts(b, "        }\n    }\n}\n\n");
}

void emit_qconv_kernel(const Graph *g, int idx, Buf *b)
{
    QK q;
    qk_init(g, idx, &q);
    switch (g->nodes[idx].a.tile.kind) {
    case TK_DEPTHWISE:
        if (g->nodes[idx].a.tile.lanes)
            emit_qdepthwise_lanes(&q, b);
        else if (g->nodes[idx].a.tile.rows)
            emit_qdepthwise_plane(&q, b);
        else
            emit_qdepthwise(&q, b);
        break;
    case TK_CONV_ROWS: emit_qrows(&q, b); break;
    case TK_CONV_F32: emit_qf32(&q, b); break;
    default: emit_qdirect(&q, b); break;
    }
}

/* ---- dense ---- */

/* Cortex-M with the DSP extension: dense with int8 x and w reads the row of x widened
 * to int16 pairs and multiplies two pairs per instruction (__smlad). Each word of inputs
 * x0..x3 is stored as the pairs (256 x0, 256 x2) and (x1, x3) (256 x fits int16 for int8
 * x), each word of four weights taken as (w0, w2) by __sxtb16 and as (256 w1, 256 w3) by
 * masking its odd bytes in place: two instructions per word, and a sum of 256 x w, which
 * pack_qnn.c bounds (runs of tile.wr inputs, dsp_chunk) and which is divided by 256
 * exactly after each run. The plain loops are the fallback of compilers and cores
 * without it. */

static bool dsp_dense(const QK *q)
{
    return q->g->target == TARGET_CORTEX_M && q->n->a.tile.wb == 2;
}

/* The words of inputs [k0, ke) (their pairs at xp) against the rows of weights from w0
 * (K apart), summed into S0.. (256 times the sum). */
static void put_dsp_loop(Buf *b, int R, int K, const char *ind, const char *k0, const char *ke,
                         char S)
{
    buf_printf(b, "%sfor (k = %s; k < %s; k += 4) {\n", ind, k0, ke);
    buf_printf(b, "%s    const int32_t xe = xp[0], xo = xp[1];\n%s    uint32_t wq;\n", ind, ind);
    buf_printf(b, "%s    xp += 2;\n", ind);
    for (int r = 0; r < R; r++) {
        buf_printf(b, "%s    memcpy(&wq, w0 + %d + k, 4);\n", ind, r * K);
        buf_printf(b, "%s    %c%d = __smlad(xe, __sxtb16(wq), %c%d);\n", ind, S, r, S, r);
        buf_printf(b, "%s    %c%d = __smlad(xo, (int32_t)(wq & 0xff00ff00u), %c%d);\n", ind, S,
                   r, S, r);
    }
    buf_printf(b, "%s}\n", ind);
}

/* s_r = (or +=) S_r / 256, exact: S_r is a multiple of 256. */
static void put_dsp_unscale(Buf *b, int R, const char *ind, char S, const char *op)
{
    for (int r = 0; r < R; r++)
        buf_printf(b, "%ss%d %s %c%d >= 0 ? %c%d >> 8 : ~(~%c%d >> 8);\n", ind, r, op, S, r, S, r,
                   S, r);
}

/* The DSP sums of rows [nn, nn + R) over the first K / 4 * 4 inputs, in runs of C. */
static void put_dsp_rows(Buf *b, int R, int K, int C, const char *ind)
{
    int KF = K / 4 * 4;
    char kf[16], in2[64];
    snprintf(kf, sizeof kf, "%d", KF);
    snprintf(in2, sizeof in2, "%s    ", ind);
    buf_printf(b, "%s{\n%s    const int32_t *xp = xq;\n", ind, ind);
    if (C >= KF) {
        put_dsp_loop(b, R, K, in2, "0", kf, 's');
        put_dsp_unscale(b, R, in2, 's', "=");
    } else { /* runs of C inputs, each sum unscaled on its own */
        char in3[72];
        snprintf(in3, sizeof in3, "%s    ", in2);
        buf_printf(b, "%sint kc;\n%sfor (kc = 0; kc < %d; kc += %d) {\n", in2, in2, KF, C);
        buf_printf(b, "%s    const int ke = kc + %d < %d ? kc + %d : %d;\n", in2, C, KF, C, KF);
        buf_printf(b, "%s    int32_t", in2);
        for (int r = 0; r < R; r++)
            buf_printf(b, "%s t%d = 0", r ? "," : "", r);
        buf_puts(b, ";\n");
        put_dsp_loop(b, R, K, in3, "kc", "ke", 't');
        put_dsp_unscale(b, R, in3, 't', "+=");
        buf_printf(b, "%s}\n", in2);
    }
    buf_printf(b, "%s}\n", ind);
}

/* x86, requantized: the columns of a chunk whose sums go to the scratch and are
 * requantized in a loop of their own, kN_rq (tile.wr, pack_qnn.c); 0: none, each sum
 * requantized at the end of its block. Requantized a few at a time there, the sums of
 * dense 1024 -> 1000 at batch 32 took a third of its time on x86-64-avx512 (int64
 * arithmetic, scalar; in doubles, vectorised beside the products, 230 -> 181 GOP/s); in
 * kN_rq's loop, vectorised, 276 -> 189 us with 4 x 4 blocks (gcc 12 -O3 -march=native,
 * Emerald Rapids). */
static int dense_chunk(const QK *q)
{
    return x86(q) ? q->n->a.tile.wr : 0;
}

/* The length of a weight row and of a buffered row of x: k, or with tile.packed (x86-64-avx512,
 * pack_qnn.c) k padded with zeros, the packed constant's size over n. */
static int dense_row(const QK *q)
{
    const Attrs *a = &q->n->a;
    if (!a->tile.packed)
        return a->k;
    const Tensor *w = &q->g->consts[q->g->values[q->n->in[1]].constant];
    return (int)(shape_numel(&w->shape) / a->n);
}

/* s_r += X[k] * w_r[k] for k in [k0, k1) (no loop when empty). */
static void put_qdense_loop(Buf *b, int R, const char *X, const char *ind, int k0, int k1)
{
    if (k0 >= k1)
        return;
    buf_printf(b, "%sfor (k = %d; k < %d; k++) {\n", ind, k0, k1);
    buf_printf(b, "%s    const int32_t xv = %s[k];\n", ind, X);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s    s%d += xv * w%d[k];\n", ind, r, r);
    buf_printf(b, "%s}\n", ind);
}

/* The pointers w0.. to rows [nn, nn + R) of the weights. */
static void put_wrows(const QK *q, Buf *b, int R, const char *ind)
{
    for (int r = 0; r < R; r++)
        buf_printf(b, "%sconst %s *w%d = w + (long)(nn + %d) * %d;\n", ind, q->wt, r, r, dense_row(q));
}

/* Rows [nn, nn + R) of the weights against the row of x at X. */
static void put_qdense_rows(const QK *q, Buf *b, int R, const char *X, const char *ind)
{
    const Attrs *a = &q->n->a;
    int K = a->k;
    put_wrows(q, b, R, ind);
    buf_printf(b, "%sint32_t", ind);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s s%d = 0", r ? "," : "", r);
    buf_puts(b, ";\n");
    if (dsp_dense(q)) { /* X is xw: inputs 4i..4i+3 as the int16 pairs (0, 2), (1, 3) */
        buf_puts(b, DSP_IF);
        put_dsp_rows(b, R, K, a->tile.wr, ind);
        for (int r = 1; r < R && K % 4 == 0; r++)
            buf_printf(b, "%s(void)w%d;\n", ind, r);
        put_qdense_loop(b, R, "xr", ind, K / 4 * 4, K);
        buf_puts(b, "#else\n");
        put_qdense_loop(b, R, "xr", ind, 0, K);
        buf_puts(b, "#endif\n");
    } else {
        put_qdense_loop(b, R, X, ind, 0, K);
    }
    char in2[64], idx[48];
    snprintf(in2, sizeof in2, "%s        ", ind);
    snprintf(idx, sizeof idx, "(long)m * %d + nn + r", a->n);
    buf_printf(b, "%s{\n%s    const int32_t acc[%d] = {", ind, ind, R);
    for (int r = 0; r < R; r++)
        buf_printf(b, "%s s%d", r ? "," : "", r);
    buf_printf(b, " };\n%s    int r;\n%s    for (r = 0; r < %d; r++) {\n", ind, ind, R);
    buf_printf(b, "%s        const uint32_t st = (uint32_t)bias[nn + r]%s%s;\n", ind,
               a->q.ztab ? " + (uint32_t)ztab[nn + r]" : "", q->zw ? " - zs" : "");
    put_chan(q, b, in2, "nn + r");
    put_store(q, b, in2, "acc[r]", "st", "y", idx);
    buf_printf(b, "%s    }\n%s}\n", ind, ind);
}

/* x86 and generic, J rows of x at once (J > 1, or any with dense_chunk; m to m + J, their
 * buffered rows at X, K apart): rows [nn, nn + R) of the weights against them, R x J sums,
 * each weight loaded once for the J rows; zs[j] the rows' weight zero-point terms. With
 * dense_chunk the sums go to sr (columns from n0), else they are requantized into y. */
static void put_qdense_block(const QK *q, Buf *b, int R, int J, const char *X, const char *n0,
                             const char *ind)
{
    const Attrs *a = &q->n->a;
    int KR = dense_row(q), chunk = dense_chunk(q);
    put_wrows(q, b, R, ind);
    put_int_sums(b, ind, R, J);
    put_int_dot(b, ind, R, J, KR, "k", X, KR, "w");
    if (chunk) { /* the chunk's sums, row j at sr + j * the chunk, from column n0 */
        for (int r = 0; r < R; r++)
            for (int j = 0; j < J; j++) {
                buf_printf(b, "%ssr[%d + nn%s%s] = ", ind, j * chunk + r,
                           strcmp(n0, "0") ? " - " : "", strcmp(n0, "0") ? n0 : "");
                if (q->zw)
                    buf_printf(b, "rq_wrap32((uint32_t)s%d_%d - zs[%d]);\n", r, j, j);
                else
                    buf_printf(b, "s%d_%d;\n", r, j);
            }
        return;
    }
    char in2[64], idx[48];
    snprintf(in2, sizeof in2, "%s        ", ind);
    snprintf(idx, sizeof idx, "(long)(m + j) * %d + nn + r", a->n);
    buf_printf(b, "%s{\n%s    const int32_t acc[%d] = {", ind, ind, R * J);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < J; j++)
            buf_printf(b, "%s s%d_%d", r || j ? "," : "", r, j);
    buf_printf(b, " };\n%s    int r, j;\n%s    for (r = 0; r < %d; r++) {\n", ind, ind, R);
    buf_printf(b, "%s        const uint32_t sr = (uint32_t)bias[nn + r]%s;\n", ind,
               a->q.ztab ? " + (uint32_t)ztab[nn + r]" : "");
    put_chan(q, b, in2, "nn + r");
    buf_printf(b, "%s        for (j = 0; j < %d; j++) {\n", ind, J);
    buf_printf(b, "%s            const uint32_t st = sr%s;\n", ind, q->zw ? " - zs[j]" : "");
    char acc[32], in3[64];
    snprintf(acc, sizeof acc, "acc[r * %d + j]", J);
    snprintf(in3, sizeof in3, "%s            ", ind);
    put_store(q, b, in3, acc, "st", "y", idx);
    buf_printf(b, "%s        }\n%s    }\n%s}\n", ind, ind, ind);
}

/* The blocks of R weight rows over columns [lo, hi) (C expressions), J rows of x. */
static void put_qdense_cols(const QK *q, Buf *b, int R, int J, const char *X, const char *n0,
                            const char *lo, const char *hi, const char *ind)
{
    char in2[64];
    snprintf(in2, sizeof in2, "%s    ", ind);
    buf_printf(b, "%sfor (nn = %s; nn < %s; nn += %d) {\n", ind, lo, hi, R);
    put_qdense_block(q, b, R, J, X, n0, in2);
    buf_printf(b, "%s}\n", ind);
}

/* n0 + d as a C expression into s (n0 a variable's name or a number). */
static void put_col_expr(char *s, size_t size, const char *n0, int d)
{
    if (n0[0] >= '0' && n0[0] <= '9')
        snprintf(s, size, "%d", atoi(n0) + d);
    else
        snprintf(s, size, "%s + %d", n0, d);
}

/* Columns [n0, n0 + w) (n0 a C expression; w a multiple of tile.rb but the last) of J rows of
 * x, and with dense_chunk the call that requantizes their sums. */
static void put_qdense_chunk(const QK *q, Buf *b, int J, const char *X, const char *n0, int w,
                             const char *ind)
{
    int RB = q->n->a.tile.rb, wf = w / RB * RB;
    char lo[48], hi[48];
    put_col_expr(lo, sizeof lo, n0, wf);
    put_col_expr(hi, sizeof hi, n0, w);
    if (wf > 0)
        put_qdense_cols(q, b, RB, J, X, n0, n0, lo, ind);
    if (wf < w)
        put_qdense_cols(q, b, 1, J, X, n0, lo, hi, ind);
    if (dense_chunk(q)) {
        buf_printf(b, "%sk%d_rq(sr, ", ind, q->idx);
        put_args(q, b);
        buf_printf(b, ", m, %s, %d, %d);\n", n0, w, J);
    }
}

/* x86 and generic: rows [m0, m1) of x, J at a time, each pass's J rows buffered together (int16, or
 * uint8 with tile.vw 1). With dense_chunk, the columns in chunks of it, each chunk's sums
 * requantized by kN_rq once its blocks are done. */
static void put_qdense_passes(const QK *q, Buf *b, int J, int m0, int m1, bool shift, bool u8,
                              const char *X)
{
    const Attrs *a = &q->n->a;
    int K = a->k, N = a->n, C = dense_chunk(q) ? dense_chunk(q) : N, full = N / C * C;
    buf_printf(b, "    for (m = %d; m < %d; m += %d) {\n", m0, m1, J);
    buf_printf(b, "        const %s *xr = x + (long)m * %d;\n", q->xt, K);
    if (q->zw) {
        buf_printf(b, "        uint32_t zs[%d];\n        int j;\n", J);
        buf_printf(b, "        for (j = 0; j < %d; j++) {\n            int32_t sx = 0;\n", J);
        buf_printf(b, "            for (k = 0; k < %d; k++)\n                sx += xr[j * %d + k];\n", K, K);
        buf_puts(b, "            zs[j] = (uint32_t)sx * (uint32_t)");
        put_i32(b, q->zw);
        buf_puts(b, ";\n        }\n");
    }
    int KR = dense_row(q);
    if (shift && KR != K) { /* rows of KR, zeros after each row's K */
        buf_printf(b, "        {\n            int j;\n            for (j = 0; j < %d; j++) {\n", J);
        buf_printf(b, "                for (k = 0; k < %d; k++)\n                    xu[j * %d + k] = "
                      "(uint8_t)(xr[j * %d + k] + 128);\n", K, KR, K);
        buf_printf(b, "                for (k = %d; k < %d; k++)\n                    xu[j * %d + k] = 0;\n",
                   K, KR, KR);
        buf_puts(b, "            }\n        }\n");
    } else if (shift)
        buf_printf(b, "        for (k = 0; k < %d; k++)\n            xu[k] = (uint8_t)(xr[k] + 128);\n", J * K);
    else if (!u8)
        buf_printf(b, "        for (k = 0; k < %d; k++)\n            xw[k] = (int16_t)xr[k];\n", J * K);
    else
        buf_puts(b, "        (void)xw;\n");
    if (full == C) {
        put_qdense_chunk(q, b, J, X, "0", C, "        ");
    } else {
        buf_printf(b, "        for (n0 = 0; n0 < %d; n0 += %d) {\n", full, C);
        put_qdense_chunk(q, b, J, X, "n0", C, "            ");
        buf_puts(b, "        }\n");
    }
    if (full < N) {
        char n0[16];
        snprintf(n0, sizeof n0, "%d", full);
        put_qdense_chunk(q, b, J, X, n0, N - full, "        ");
    }
    buf_puts(b, "    }\n");
}

/* x86 with dense_chunk: kN_rq, the sums of `rows` rows of x from m and nw columns from n0 (sr,
 * row j at sr + j * the chunk) requantized into y, clipped in place and narrowed in a loop of
 * their own for 8-bit outputs (as emit_qrows_requant). */
static void emit_qdense_rq(const QK *q, Buf *b)
{
    const Attrs *a = &q->n->a;
    bool narrow = q->ytype == 0 || q->ytype == 1;
    QK qw = put_rq_start(q, b, "a chunk of columns", "int m, int n0, int nw, int rows", "j, n");
    buf_puts(b, "    for (j = 0; j < rows; j++) {\n");
    buf_printf(b, "        int32_t *so = sr + (long)j * %d;\n", dense_chunk(q));
    buf_printf(b, "        %s *yo = y + (long)(m + j) * %d + n0;\n", q->yt, a->n);
    buf_puts(b, "        for (n = 0; n < nw; n++) {\n");
    buf_printf(b, "            const uint32_t st = (uint32_t)bias[n0 + n]%s;\n",
               a->q.ztab ? " + (uint32_t)ztab[n0 + n]" : "");
    put_chan(q, b, "            ", "n0 + n");
    put_store(&qw, b, "            ", "so[n]", "st", narrow ? "so" : "yo", "n");
    buf_puts(b, "        }\n");
    if (narrow)
        buf_printf(b, "        for (n = 0; n < nw; n++)\n            yo[n] = (%s)so[n];\n", q->yt);
    buf_puts(b, "    }\n}\n\n");
}

void emit_qdense_kernel(const Graph *g, int idx, Buf *b)
{
    QK q;
    qk_init(g, idx, &q);
    const Attrs *a = &g->nodes[idx].a;
    int RB = a->tile.rb, N = a->n, K = a->k, M = a->m, NF = N / RB * RB, KR = dense_row(&q);
    bool wide = a->tile.wb == 2, u8 = wide && a->tile.vw == 1;
    bool shift = u8 && g->values[g->nodes[idx].in[0]].dtype == DT_I8;
    const char *X = u8 ? (shift ? "xu" : "xr") : wide ? "xw" : "xr";
    bool dsp = dsp_dense(&q);
    if (dsp)
        buf_puts(b, DSP_IF "#include <arm_acle.h>\n#include <string.h>\n#endif\n");
    if (dense_chunk(&q))
        emit_qdense_rq(&q, b);
    put_comment(&q, b, "dense");
    buf_printf(b, "/* %d x %d rows, %d columns: %d weight rows at a time, weights [%d][%d] %s%s */\n",
               M, K, N, RB, N, KR, a->tile.packed ? "(rows padded with zeros)" : "as stored",
               dsp ? "; with the DSP extension each row of x widened to int16 pairs"
                   : shift ? "; each row of x as uint8 (x + 128)"
                   : u8 ? "; uint8 x against int8 weights" : wide ? "; each row of x widened to int16" : "");
    buf_printf(b, "static void k%d_qdense(", idx);
    put_params(&q, b, "");
    buf_puts(b, wide ? ", int16_t *restrict xw)\n{\n" : ")\n{\n"); /* xw: K, the scratch */
    buf_puts(b, "    int m, nn, k;\n");
    if (shift) /* the workspace is the scratch's bytes */
        buf_puts(b, "    uint8_t *restrict xu = (uint8_t *)(void *)xw;\n");
    if (dsp) /* the scratch as int32 words (its offset in the workspace is aligned) */
        buf_puts(b, DSP_IF "    int32_t *restrict xq = (int32_t *)(void *)xw;\n#else\n    (void)xw;\n#endif\n");
    put_unused(&q, b);
    int J = wide && !dsp ? qdense_xrows(g->target, M, KR, u8 ? 1 : 2) : 1;
    int MF = J > 1 ? M / J * J : 0;
    if (a->tile.packed && !(dense_chunk(&q) && shift))
        unreachable(); /* pack_qnn.c pads the rows of these alone */
    if (dense_chunk(&q)) { /* every row in passes: J at a time, then one at a time */
        long off = ((long)J * KR * (u8 ? 1 : 2) + 63) / 64 * 64;
        if (N / dense_chunk(&q) > 1) /* a loop over the full chunks */
            buf_puts(b, "    int n0;\n");
        buf_printf(b, "    int32_t *restrict sr = (int32_t *)(void *)((unsigned char *)(void *)xw + %ld);\n", off);
        if (MF > 0)
            put_qdense_passes(&q, b, J, 0, MF, shift, u8, X);
        if (MF < M)
            put_qdense_passes(&q, b, 1, MF, M, shift, u8, X);
        buf_puts(b, "}\n\n");
        return;
    }
    if (J > 1) {
        put_qdense_passes(&q, b, J, 0, MF, shift, u8, X);
        if (MF == M) {
            buf_puts(b, "}\n\n");
            return;
        }
    }
    if (MF > 0)
        buf_printf(b, "    for (m = %d; m < %d; m++) {\n", MF, M);
    else
        buf_printf(b, "    for (m = 0; m < %d; m++) {\n", M);
    buf_printf(b, "        const %s *xr = x + (long)m * %d;\n", q.xt, K);
    if (q.zw) {
        buf_puts(b, "        uint32_t zs;\n        int32_t sx = 0;\n");
        buf_printf(b, "        for (k = 0; k < %d; k++)\n            sx += xr[k];\n", K);
        buf_puts(b, "        zs = (uint32_t)sx * (uint32_t)");
        put_i32(b, q.zw);
        buf_puts(b, ";\n");
    }
    if (dsp) { /* the words of x as (256 x0, 256 x2), (x1, x3) */
        buf_puts(b, DSP_IF);
        buf_printf(b, "        for (k = 0; k < %d; k += 4) {\n", K / 4 * 4);
        buf_puts(b, "            uint32_t q;\n"
                    "            memcpy(&q, xr + k, 4);\n"
                    "            xq[k / 2] = (int32_t)((q << 8) & 0xff00ff00u);\n"
                    "            xq[k / 2 + 1] = __sxtb16(q >> 8);\n"
                    "        }\n#endif\n");
    } else if (shift) {
        buf_printf(b, "        for (k = 0; k < %d; k++)\n            xu[k] = (uint8_t)(xr[k] + 128);\n", K);
    } else if (u8) {
        buf_puts(b, "        (void)xw;\n");
    } else if (wide) {
        buf_printf(b, "        for (k = 0; k < %d; k++)\n            xw[k] = (int16_t)xr[k];\n", K);
    }
    if (NF > 0) {
        buf_printf(b, "        for (nn = 0; nn < %d; nn += %d) {\n", NF, RB);
        put_qdense_rows(&q, b, RB, X, "            ");
        buf_puts(b, "        }\n");
    }
    if (NF < N) {
        buf_printf(b, "        for (nn = %d; nn < %d; nn++) {\n", NF, N);
        put_qdense_rows(&q, b, 1, X, "            ");
        buf_puts(b, "        }\n");
    }
    buf_puts(b, "    }\n}\n\n");
}
