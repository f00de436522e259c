/*
 * layout.c: the layouts of packed weights and kernel row buffers, in one place: the pack
 * passes (pack.c, pack_qnn.c) choose them and the emitters (emit/kernel_*.c) read them.
 */
#include "relayc.h"

#include <limits.h>

int64_t tile_channels(const Graph *g, const Node *n)
{
    return n->op == IR_CONV2D ? g->values[n->out].shape.dim[1] : n->a.n;
}

int64_t depthwise_lanes(int64_t co)
{
    if (co >= 8 && co <= 64)
        return co;
    for (int64_t cb = 64; cb >= 16; cb -= 16)
        if (co % cb == 0)
            return cb;
    return 0;
}

/* Rows of at most 8 outputs at stride 1 are stored straight (the quantized MobileNetV2, gcc
 * 12 -O3 -march=native, Emerald Rapids: 3x3 384 @4x4 24.8 -> 18.7 us, 192 @8x8 16.3 ->
 * 10.0 on avx512, alike on avx2); wider rows, and stride 2, were slower so (144 @16 -> 8
 * x 8: 19.7 -> 38.7), their loop storing int32 vectorising better. */
bool qdepthwise_wide_store(const Window *w, int64_t wo)
{
    return !(w->sw == 1 && wo <= 8);
}

int64_t depthwise_plane(const Window *w, int64_t ho, int64_t wo, int *hp, int *wp)
{
    int64_t h = (ho - 1) * w->sh + (int64_t)(w->kh - 1) * w->dh + 1;
    int64_t v = (wo - 1) * w->sw + (int64_t)(w->kw - 1) * w->dw + 1;
    if (h > INT_MAX / 4 || v > INT_MAX / 4)
        return INT64_MAX;
    *hp = (int)h, *wp = (int)v;
    return h * v;
}

int64_t qdepthwise_plane(const Window *w, int64_t ho, int64_t wo, int *hp, int *wp, int *pw)
{
    int64_t n = depthwise_plane(w, ho, wo, hp, wp);
    *pw = n == INT64_MAX ? 0 : *wp;
    if (n == INT64_MAX || w->sw <= 1)
        return n;
    int64_t p = wo + (int64_t)(w->kw - 1) * w->dw / w->sw, m = (int64_t)w->sw * *hp * p;
    if (p > INT_MAX / 4 || m > INT_MAX / 4)
        return INT64_MAX;
    *pw = (int)p;
    return m > n ? m : n;
}

/* The float depthwise plane (TK_DEPTHWISE with tile.rows) of target t: hp rows of wp
 * floats, one such plane per column phase (w->sw of them, the columns c with c % sw ==
 * p at c / sw, so that a strided conv reads each tap's columns contiguously; phase p at
 * p * hp * wp). On the x86 targets its rows are a multiple of 16 floats and the kernel
 * moves it to a 64-byte boundary inside its scratch (15 floats more), so that a vector
 * load of a strip crosses a cache line less often (dwconv3x3 128 @28x28, rows of 30
 * floats: 43 -> 49 GFLOP/s on x86-64-avx2, on a Zen 3 core; 23.0 -> 22.2 us on
 * x86-64-avx512, on a Zen 4 core). Returns the floats of scratch it takes (INT64_MAX
 * when out of range). */
int64_t depthwise_plane_f32(Target t, const Window *w, int64_t ho, int64_t wo, int *hp, int *wp)
{
    int64_t n = depthwise_plane(w, ho, wo, hp, wp);
    if (n == INT64_MAX || w->sw < 1)
        return INT64_MAX;
    if (w->sw > 1) /* a phase's columns: ox + kx * dw / sw for ox < wo, kx < kw */
        *wp = (int)(wo + (int64_t)(w->kw - 1) * w->dw / w->sw);
    bool align = (t == TARGET_X86_64_AVX2 || t == TARGET_X86_64_AVX512) && *wp <= INT_MAX / 4 - 16;
    if (align)
        *wp = (*wp + 15) / 16 * 16;
    n = (int64_t)*hp * *wp;
    if (n > (INT64_MAX - 15) / w->sw)
        return INT64_MAX;
    return n * w->sw + (align ? 15 : 0);
}

int64_t qf32_row_floats(const Window *w, int64_t ci, int64_t wo, int *pw)
{
    /* output column ox, tap kx reads padded column ox * sw + kx * dw: phase (kx * dw) % sw,
     * column ox + (kx * dw) / sw of that phase */
    int64_t p = wo + (int64_t)(w->kw - 1) * w->dw / w->sw;
    *pw = p > INT_MAX ? INT_MAX : (int)p;
    return ci * w->kh * w->sw * p;
}

/* TK_CONV_ROWS: the output columns of one strip (at least p, the pixels of a block; a whole
 * row when its buffer fits RC_QROWS_MAX_BYTES) and, in *segw, the input columns the strip
 * reads: the kernel (kernel_qconv.c) buffers them as int16, kh * ci per column. */
int qrows_strip(const Window *w, int64_t ci, int64_t wo, int p, int64_t *segw)
{
    int64_t s = wo;
    for (;;) {
        *segw = (s - 1) * w->sw + (int64_t)(w->kw - 1) * w->dw + 1;
        if (*segw * w->kh * ci * 2 <= RC_QROWS_MAX_BYTES || s <= p)
            return (int)s;
        s--;
    }
}

/* TK_CONV_ROWS on uint8 buffers (tile.vw 1): the bytes of the ring of the last kh input
 * rows, each transposed once into [segw][ci] and copied from there into the buffers of the
 * output rows that read it, when a strip is a whole row (strip == wo), the rows are read
 * without dilation and overlap (sh < kh), and ci is a multiple of 8; else 0 (every output
 * row transposes the kh input rows it reads). */
int64_t qrows_ring_bytes(const Window *w, int64_t ci, int64_t wo, int64_t strip, int64_t segw, int u8)
{
    if (!u8 || ci % 8 || strip != wo || w->dh != 1 || w->kh < 2 || w->sh >= w->kh)
        return 0;
    return w->kh * segw * ci;
}

/* TK_CONV_ROWS: the scratch of a strip, rows_bytes of buffered input, then (at the
 * returned offset, 64-byte aligned) the int32 sums of the strip, co x s. */
int64_t qrows_sums_at(int64_t rows_bytes) { return (rows_bytes + 63) / 64 * 64; }

int32_t qpack_zx(const Node *n) { return n->a.q.xoff - (n->a.q.xflip ? 128 : 0); }
int32_t qpack_zw(const Node *n) { return n->a.q.woff - (n->a.q.wflip ? 128 : 0); }

/* The byte an input of type xt (int8 or uint8) with zero point zx is buffered as by the
 * kernels on uint8 inputs (Tile.vw 1): x + 128 for int8, x for uint8; this is the byte of
 * the zero point itself (the padding), or -1 when it is not a byte. */
int qrows_u8_pad(DType xt, int32_t zx)
{
    int64_t v = (int64_t)zx + (xt == DT_I8 ? 128 : 0);
    return v < 0 || v > 255 ? -1 : (int)v;
}

/* The kernels whose loops compilers vectorise in integers alone (the int16 row buffers of
 * TK_CONV_ROWS, the int32 depthwise plane, the one-row matmul on a widened row): the x86
 * targets and --target generic, whose C also runs on cores without a float unit (so not
 * the kernels that sum in floats). Before, generic int8 convs were blocks of 2 x 3 scalar
 * sums: gcc 12 -O3 -march=native, Emerald Rapids, bench/run's int8 conv shapes at
 * 0.02-0.2x x86-64-avx512's speed */
bool qnn_int_simd(int target)
{
    return target == TARGET_X86_64_AVX2 || target == TARGET_X86_64_AVX512 || target == TARGET_GENERIC;
}

/* TK_GEMV on the x86 targets and generic: the rows of x (m of them, k long, bytes per
 * buffered element) a pass of the kernel buffers and multiplies by each weight it loads: 4
 * when there are that many and they fit RC_QROWS_MAX_BYTES (each weight then read m / 4
 * times, not m), else 1. */
int qdense_xrows(int target, int64_t m, int64_t k, int bytes)
{
    return qnn_int_simd(target) && m >= 4 && 4 * k * bytes <= RC_QROWS_MAX_BYTES ? 4 : 1;
}

/* Winograd F(6, 3) from the points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity (Lavin and Gray's
 * F(6, 3); the rows of point 0 negated so that BT's first coefficient is 1). BT and AT are
 * exact in float; G's fractions are rounded once, as the weights are transformed (pack.c).
 * Computed in float32 (numpy, nn.Conv1d(32, 64, kw) on 512 samples, kw 3 to 9), the largest
 * error relative to the largest output is 0.9-1.3e-6, against 1.5-2.4e-7 for the direct
 * conv; F(4, 3) (points 0, +-1, +-2) 0.6-1.0e-6, but 4.5 multiply-adds per output and input
 * channel for kw 9 instead of 4. */
const double wino_bt[RC_WINO_N][RC_WINO_N] = {
    { 1, 0, -21.0 / 4, 0, 21.0 / 4, 0, -1, 0 },
    { 0, 1, 1, -17.0 / 4, -17.0 / 4, 1, 1, 0 },
    { 0, -1, 1, 17.0 / 4, -17.0 / 4, -1, 1, 0 },
    { 0, 1.0 / 2, 1.0 / 4, -5.0 / 2, -5.0 / 4, 2, 1, 0 },
    { 0, -1.0 / 2, 1.0 / 4, 5.0 / 2, -5.0 / 4, -2, 1, 0 },
    { 0, 2, 4, -5.0 / 2, -5, 1.0 / 2, 1, 0 },
    { 0, -2, 4, 5.0 / 2, -5, -1.0 / 2, 1, 0 },
    { 0, -1, 0, 21.0 / 4, 0, -21.0 / 4, 0, 1 },
};
const double wino_g[RC_WINO_N][3] = {
    { 1, 0, 0 },
    { -2.0 / 9, -2.0 / 9, -2.0 / 9 },
    { -2.0 / 9, 2.0 / 9, -2.0 / 9 },
    { 1.0 / 90, 1.0 / 45, 2.0 / 45 },
    { 1.0 / 90, -1.0 / 45, 2.0 / 45 },
    { 32.0 / 45, 16.0 / 45, 8.0 / 45 },
    { 32.0 / 45, -16.0 / 45, 8.0 / 45 },
    { 0, 0, 1 },
};
const double wino_at[RC_WINO_M][RC_WINO_N] = {
    { 1, 1, 1, 1, 1, 1, 1, 0 },
    { 0, 1, -1, 2, -2, 1.0 / 2, -1.0 / 2, 0 },
    { 0, 1, 1, 4, 4, 1.0 / 4, 1.0 / 4, 0 },
    { 0, 1, -1, 8, -8, 1.0 / 8, -1.0 / 8, 0 },
    { 0, 1, 1, 16, 16, 1.0 / 16, 1.0 / 16, 0 },
    { 0, 1, -1, 32, -32, 1.0 / 32, -1.0 / 32, 1 },
};

int64_t wino_layout(const Graph *g, const Node *n, Wino *w)
{
    const int64_t *xd = g->values[n->in[0]].shape.dim, *yd = g->values[n->out].shape.dim;
    const Tile *t = &n->a.tile;
    w->groups = (n->a.conv.kw + 2) / 3;
    w->cls = w->groups > 1 ? 2 : 1;
    w->tiles = (int)((yd[3] + RC_WINO_M - 1) / RC_WINO_M);
    w->chunk = t->wr;
    w->chunks = (w->tiles + w->chunk - 1) / w->chunk;
    w->vtiles = w->chunk + (w->groups - 1) / 2;
    w->xcols = RC_WINO_M * (w->vtiles - 1) + 3 * (w->cls - 1) + RC_WINO_N;
    w->nib = (int)((xd[1] + 7) / 8);
    w->cop = (int)((yd[1] + t->rb - 1) / t->rb * t->rb);
    w->xt = (int64_t)w->nib * w->xcols * 8;
    w->v = (int64_t)RC_WINO_N * w->cls * w->nib * w->vtiles * 8;
    w->m = (int64_t)RC_WINO_N * w->chunk * w->cop;
    return (w->xt + w->v + w->m) * (int64_t)sizeof(float);
}
