/*
 * kernels_int8.c: relayc's integer (QNN) kernels, portable C99, bit-exact with the
 * integer arithmetic TVM's QNN lowering (QnnCanonicalize) produces for the same Relay.
 *
 * Used like runtime/kernels.c: relayc copies the sections a model uses into the C it
 * emits (emit/emit_qnn.c), and runtime/reference_qnn.c #includes the whole file for
 * constant folding and reference runs. Format (the emitter depends on it):
 *   - this comment, then the #includes below and nothing else (the emitter writes
 *     the typedefs params.h would give);
 *   - each section starts at a line holding exactly the marker comment
 *     "@ NAME" or "@ NAME uses HELPER ..." (slash-star, at-sign, space, name,
 *     the helpers, space, star-slash), then an optional comment and ONE static
 *     function; it ends where the next marker begins, or at end of file;
 *   - a section calls nothing but the helper sections its marker names (rq_fpm,
 *     rq_fpm_h, rq_wrap32, and kernels.c's rk_taps), which the emitter copies first;
 *   - a kernel takes a pointer to its parameter struct (runtime/params.def), then
 *     its input pointers, then its output;
 *     no globals, no malloc, no recursion, no stack arrays, no <math.h>
 *     (microcontroller builds need no libm for integer models).
 *
 * Conventions:
 *   - 8-bit tensors (int8 or uint8) are read as unsigned char: an element's value
 *     minus its zero point is (byte ^ flip) - off, with flip = 0x80 and
 *     off = 128 + zp for int8, flip = 0 and off = zp for uint8;
 *   - an integer tensor whose type is a parameter is a void pointer with a type
 *     code: 0 int8, 1 uint8, 2 int32;
 *   - requantized outputs: ytype 0 int8, 1 uint8 (clipped to the type), 2 int32
 *     (not clipped, as TVM), 3 the raw int32 accumulator (no requantize);
 *   - per-channel parameters are arrays of one entry per channel; a tensor is
 *     seen as [outer][channels][inner] with the channel axis in the middle
 *     (channels == 1 for per-tensor parameters);
 *   - integer overflow wraps modulo 2^32 (or 2^64 in rq_fpm) like TVM's int32 /
 *     int64 arithmetic; the wrapping is done in unsigned arithmetic, so C defines it.
 * Every kernel is static: a translation unit that includes this file but does not call
 * every kernel needs -Wno-unused-function under -Wall -Werror.
 */
#include <stddef.h>
#include <stdint.h>
#include "params.h"

/*@ rq_wrap32 */
/* The int32 whose bits are the low 32 bits of u (two's complement), without
 * relying on implementation-defined conversions. */
static int32_t rq_wrap32(uint32_t u)
{
    return u <= 0x7fffffffu ? (int32_t)u : (int32_t)(-(int32_t)(~u) - 1);
}

/*@ rq_put */
/* y[o] = v for y of type code ytype (0 int8, 1 uint8, 2 int32); v is in the type's range. */
static void rq_put(void *y, int ytype, long o, int32_t v)
{
    if (ytype == 2)
        ((int32_t *)y)[o] = v;
    else if (ytype == 1)
        ((unsigned char *)y)[o] = (unsigned char)v;
    else
        ((signed char *)y)[o] = (signed char)v;
}

/*@ rq_put_clip uses rq_put */
/* y[o] = v for y of type code ytype (0 int8, 1 uint8, 2 int32), v clipped to
 * [lo, hi] (within the type's range) when y is int8 or uint8. */
static void rq_put_clip(void *y, int ytype, long o, int32_t v, int32_t lo, int32_t hi)
{
    rq_put(y, ytype, o, ytype == 2 ? v : v < lo ? lo : v > hi ? hi : v);
}

/*@ rq_fpm */
/* TVM's fixed-point multiply (qnn.requantize, fixed_point_multiply): x times
 * the multiplier m * 2^(s - 31) that GetFixedPointMultiplierShift gives for a
 * float scale ratio. In int64: x << max(s, 0), times m, plus the rounding term
 * 2^(t - 1) with t = 31 + max(-s, 0) (TONEAREST: 2^(t - 1) - 1 when the
 * product is negative), shifted right by t (arithmetic), then the low 32 bits.
 * tonearest is 0 or 1, and enters as a mask of the product's sign bit (gcc
 * spilled `tonearest && negative` as a byte and reloaded it as a word in
 * rq_requantize, a failed store forwarding per element: 85 -> 15 us for 6144
 * elements in the quantized MobileNetV2). Every step wraps as TVM's int64
 * arithmetic does. A right shift t over 62 (a
 * multiplier below 2^-31) gives 0; a left shift over 62 gives 0. */
static int32_t rq_fpm(int32_t x, int32_t m, int32_t s, int tonearest)
{
    int t = 31 + (s < 0 ? -s : 0);
    uint64_t u = (uint64_t)(int64_t)x, r;
    int64_t v;
    if (t > 62 || s > 62)
        return 0;
    if (s > 0)
        u <<= s;
    u *= (uint64_t)(int64_t)m;
    /* the product is negative when its top bit is set */
    r = ((uint64_t)1 << (t - 1)) - ((uint64_t)(uint32_t)tonearest & (u >> 63));
    u += r;
    v = u <= 0x7fffffffffffffffull ? (int64_t)u : -(int64_t)(~u) - 1;
    v = v >= 0 ? v >> t : ~(~v >> t);
    return rq_wrap32((uint32_t)((uint64_t)v & 0xffffffffu));
}

/*@ rq_fpm_h */
/* rq_fpm for a multiplier below 1/2, s in [-31, -1], given as sh = -1 - s (so
 * t = 32 + sh) and the rounding term rnd = 2^(t - 1): x * m + rnd needs no
 * wrapping (|x * m| <= 2^62), and its floor division by 2^t is that of its high
 * word by 2^sh, which fits int32, so this is rq_fpm's result. */
static int32_t rq_fpm_h(int32_t x, int32_t m, int64_t rnd, int sh, int tonearest)
{
    int64_t p = (int64_t)x * m;
    int32_t hi;
    p += rnd - (int64_t)((uint64_t)(uint32_t)tonearest & ((uint64_t)p >> 63));
    hi = (int32_t)(p >= 0 ? p >> 32 : ~(~p >> 32));
    return hi >= 0 ? hi >> sh : ~(~hi >> sh);
}

/*@ rq_conv2d uses rk_taps rq_wrap32 rq_fpm rq_put_clip */
/* Quantized 2-D convolution, NCHW x OIHW -> NCHW, with groups (depthwise:
 * groups == ci), like rk_conv2d: output pixel (oy, ox) reads input row
 * oy*sh - pt + ky*dh and column ox*sw - pl + kx*dw. The accumulator of output
 * channel oc is bias[oc] plus the sum over the taps inside the input of
 * (x - x zero point) * (w - w zero point): taps in the padding are the input
 * zero point (TVM pads qnn.conv2d data with it), so they contribute 0. 8-bit x
 * and w (flip/off as in the header comment). With ytype 3 the int32
 * accumulator is stored; otherwise it is requantized: rq_fpm with mult[oc],
 * shift[oc] and the rounding (0 UPWARD, 1 TONEAREST), plus yzp in int32, then
 * clipped to [lo, hi8] and stored as int8/uint8 (ytype 0, 1: the type's range,
 * or narrower when a clip that followed is folded in), or stored as int32
 * without clipping (ytype 2). */
static void rq_conv2d(const Conv2dParams *p, const unsigned char *x, const unsigned char *w,
                      const int32_t *bias, const int32_t *mult, const int32_t *shift, void *y)
{
    int n = p->n, ci = p->ci, hi = p->hi, wi = p->wi, co = p->co, ho = p->ho, wo = p->wo;
    int kh = p->kh, kw = p->kw, sh = p->sh, sw = p->sw, dh = p->dh, dw = p->dw;
    int pt = p->pt, pl = p->pl, groups = p->groups;
    int xflip = p->xflip, xoff = p->xoff, wflip = p->wflip, woff = p->woff;
    int rounding = p->rounding, ytype = p->ytype;
    int32_t yzp = p->yzp, lo = p->ylo, hi8 = p->yhi;
    int cig = ci / groups, cog = co / groups;
    int b, oc, oy, ox, ic, ky, kx;
    for (b = 0; b < n; b++) {
        for (oc = 0; oc < co; oc++) {
            int g = oc / cog;
            const unsigned char *wc = w + (long)oc * cig * kh * kw;
            const unsigned char *xg = x + ((long)b * ci + (long)g * cig) * hi * wi;
            long ybase = ((long)b * co + oc) * ho * wo;
            for (oy = 0; oy < ho; oy++) {
                int iy0 = oy * sh - pt, ky0, ky1, kyp;
                rk_taps(iy0, kh, dh, hi, 0, &ky0, &ky1, &kyp);
                for (ox = 0; ox < wo; ox++) {
                    int ix0 = ox * sw - pl, kx0, kx1, kxp;
                    int32_t acc = 0;
                    long o = ybase + (long)oy * wo + ox;
                    rk_taps(ix0, kw, dw, wi, 0, &kx0, &kx1, &kxp);
                    for (ic = 0; ic < cig; ic++) {
                        const unsigned char *xp = xg + (long)ic * hi * wi;
                        const unsigned char *wp = wc + (long)ic * kh * kw;
                        for (ky = ky0; ky < ky1; ky++) {
                            const unsigned char *xr = xp + (long)(iy0 + ky * dh) * wi + ix0;
                            const unsigned char *wr = wp + (long)ky * kw;
                            for (kx = kx0; kx < kx1; kx++)
                                acc += ((int32_t)(xr[(long)kx * dw] ^ xflip) - xoff) *
                                       ((int32_t)(wr[kx] ^ wflip) - woff);
                        }
                    }
                    acc = rq_wrap32((uint32_t)acc + (uint32_t)bias[oc]);
                    if (ytype == 3) {
                        ((int32_t *)y)[o] = acc;
                    } else {
                        int32_t r = rq_fpm(acc, mult[oc], shift[oc], rounding);
                        r = rq_wrap32((uint32_t)r + (uint32_t)yzp);
                        rq_put_clip(y, ytype, o, r, lo, hi8);
                    }
                }
            }
        }
    }
}

/*@ rq_matmul uses rq_wrap32 rq_fpm rq_put_clip */
/* Quantized matrix product (qnn.dense): Y[r][c] = bias[c] + sum over t < k of
 * (X[r][t] - x zero point) * (W[c][t] - w zero point), X stored [m][k] and W
 * [n][k], 8-bit (flip/off as in the header comment); then the epilogue of
 * rq_conv2d with channel c. */
static void rq_matmul(const MatmulParams *p, const unsigned char *x, const unsigned char *w,
                      const int32_t *bias, const int32_t *mult, const int32_t *shift, void *y)
{
    int m = p->m, n = p->n, k = p->k;
    int xflip = p->xflip, xoff = p->xoff, wflip = p->wflip, woff = p->woff;
    int rounding = p->rounding, ytype = p->ytype;
    int32_t yzp = p->yzp, lo = p->ylo, hi8 = p->yhi;
    int r, c, t;
    for (r = 0; r < m; r++) {
        const unsigned char *xr = x + (long)r * k;
        for (c = 0; c < n; c++) {
            const unsigned char *wr = w + (long)c * k;
            int32_t acc = 0;
            long o = (long)r * n + c;
            for (t = 0; t < k; t++)
                acc += ((int32_t)(xr[t] ^ xflip) - xoff) * ((int32_t)(wr[t] ^ wflip) - woff);
            acc = rq_wrap32((uint32_t)acc + (uint32_t)bias[c]);
            if (ytype == 3) {
                ((int32_t *)y)[o] = acc;
            } else {
                int32_t v = rq_fpm(acc, mult[c], shift[c], rounding);
                v = rq_wrap32((uint32_t)v + (uint32_t)yzp);
                rq_put_clip(y, ytype, o, v, lo, hi8);
            }
        }
    }
}

/*@ rq_requantize uses rq_wrap32 rq_fpm rq_put_clip */
/* qnn.requantize of x [outer][channels][inner] (xtype 0 int8, 1 uint8,
 * 2 int32) to ytype (0 int8, 1 uint8, 2 int32). Per element of channel c:
 *   compute 0 (int64, TVM's default): d = x - izp[c] in int32, then
 *     rq_fpm(d, mult[c], shift[c], rounding) + yzp in int32;
 *   compute 1 / 2 (float32 / float64): t = (T)x - (T)izp[c], t = t * fm[c]
 *     (or dm[c]), t = t + (T)yzp, all in T, then rounded as TVM's portable
 *     lowering does: UPWARD floor(t + 0.5), TONEAREST sign(t) * trunc(|t| + 0.5)
 *     (the additions in T), to int32 (saturating; TVM leaves that undefined);
 * then clipped to int8/uint8, or stored as int32 without clipping. */
static void rq_requantize(const RequantizeParams *p, const void *x, const int32_t *izp,
                          const int32_t *mult, const int32_t *shift, const float *fm,
                          const double *dm, void *y)
{
    int xtype = p->xtype, ytype = p->ytype, channels = p->channels;
    int compute = p->compute, rounding = p->rounding;
    long outer = p->outer, inner = p->inner;
    int32_t yzp = p->yzp;
    int lo = ytype == 0 ? -128 : 0, hi8 = ytype == 0 ? 127 : 255;
    long o, i, at = 0;
    int c;
    if (compute == 0) {
        /* TVM's int64 fixed-point arithmetic (rq_fpm) with everything that depends on the
         * channel hoisted out of the loop over inner, and the arithmetic shift written on
         * uint64 (the sign fill or'ed in), so that the loop has no branches on the data
         * and compilers vectorise it (gcc -O3 makes a loop per input and output type of
         * the tests on xtype and ytype). The same bits as rq_fpm for every input
         * (tests/qnn/test_requantize_edges.py). gcc 12 -O3 -march=native, Emerald Rapids:
         * a qnn.add requantize of the quantized MobileNetV2 (uint8 [1, 24, 16, 16] to
         * int32) 15 -> 2.9 us, its 20 of them 85 -> 17 us. Written as one loop per type
         * pairing, as fast, the kernel took 3.9 KB of Cortex-M4 code at -Os against 1.0 KB
         * before; as one loop, 1.2 KB */
        for (o = 0; o < outer; o++) {
            for (c = 0; c < channels; c++, at += inner) {
                const int32_t s = shift[c];
                const int t = 31 + (s < 0 ? -s : 0), ls = s > 0 ? s : 0;
                const int dead = t > 62 || s > 62; /* rq_fpm gives 0 */
                const uint64_t m = dead ? 0u : (uint64_t)(int64_t)mult[c];
                const int ts = dead ? 0 : t, fs = dead ? 0 : 64 - t, sl = dead ? 0 : ls;
                const uint64_t rnd = dead ? 0u : (uint64_t)1 << (t - 1);
                const uint64_t tn = (uint64_t)(uint32_t)rounding;
                const uint32_t z = (uint32_t)izp[c], yz = (uint32_t)yzp;
                for (i = 0; i < inner; i++) {
                    uint32_t d = (xtype == 0 ? (uint32_t)(int32_t)((const signed char *)x)[at + i]
                                  : xtype == 1 ? (uint32_t)((const unsigned char *)x)[at + i]
                                               : (uint32_t)((const int32_t *)x)[at + i]) - z, r;
                    uint64_t u = (uint64_t)(int64_t)rq_wrap32(d) << sl;
                    int32_t v;
                    u *= m;
                    u += rnd - (tn & (u >> 63));
                    r = (uint32_t)((u >> ts) | ((0u - (u >> 63)) << fs)) + yz;
                    v = rq_wrap32(r);
                    if (ytype == 2)
                        ((int32_t *)y)[at + i] = v;
                    else if (ytype == 1)
                        ((unsigned char *)y)[at + i] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
                    else
                        ((signed char *)y)[at + i] = (signed char)(v < -128 ? -128 : v > 127 ? 127 : v);
                }
            }
        }
        return;
    }
    for (o = 0; o < outer; o++) {
        for (c = 0; c < channels; c++) {
            for (i = 0; i < inner; i++, at++) {
                int32_t xv = xtype == 0 ? (int32_t)((const signed char *)x)[at]
                           : xtype == 1 ? (int32_t)((const unsigned char *)x)[at]
                                        : ((const int32_t *)x)[at];
                int32_t r;
                if (compute == 0) {
                    r = rq_wrap32((uint32_t)xv - (uint32_t)izp[c]);
                    r = rq_fpm(r, mult[c], shift[c], rounding);
                    r = rq_wrap32((uint32_t)r + (uint32_t)yzp);
                } else {
                    double q; /* the rounded value, integral */
                    if (compute == 1) {
                        float t = (float)xv - (float)izp[c], bsd;
                        t = t * fm[c];
                        t = t + (float)yzp;
                        if (rounding == 0) {
                            bsd = t + 0.5f;
                            q = (double)bsd;
                            if (q >= -2147483648.0 && q < 2147483648.0) {
                                double tr = (double)(int32_t)q;
                                q = tr > q ? tr - 1.0 : tr;
                            }
                        } else {
                            float s = t < 0.0f ? -1.0f : 1.0f;
                            bsd = (t + 0.5f * s) * s;
                            q = (double)bsd;
                            if (q < 2147483648.0)
                                q = (double)(int32_t)q;
                            q = q * (double)s;
                        }
                    } else {
                        double t = (double)xv - (double)izp[c], bsd;
                        t = t * dm[c];
                        t = t + (double)yzp;
                        if (rounding == 0) {
                            bsd = t + 0.5;
                            q = bsd;
                            if (q >= -2147483648.0 && q < 2147483648.0) {
                                double tr = (double)(int32_t)q;
                                q = tr > q ? tr - 1.0 : tr;
                            }
                        } else {
                            double s = t < 0.0 ? -1.0 : 1.0;
                            bsd = (t + 0.5 * s) * s;
                            q = bsd;
                            if (q < 2147483648.0)
                                q = (double)(int32_t)q;
                            q = q * s;
                        }
                    }
                    r = q >= 2147483647.0 ? 2147483647 : q <= -2147483648.0 ? (-2147483647 - 1)
                      : q == q ? (int32_t)q : 0;
                }
                rq_put_clip(y, ytype, at, r, lo, hi8);
            }
        }
    }
}

/*@ rq_quantize */
/* qnn.quantize of float32 x [outer][channels][inner] to ytype (0 int8,
 * 1 uint8, 2 int32): round(x / scale[c]) (float32 division, rounding half
 * away from zero like C's roundf), plus (float)zp[c], clipped in float as
 * TVM's clip does (min(t, hi) then max(., lo): NaN becomes hi), then
 * converted. */
static void rq_quantize(const QuantizeParams *p, const float *x, const float *scale,
                        const int32_t *zp, void *y)
{
    int ytype = p->type, channels = p->channels;
    long outer = p->outer, inner = p->inner;
    float lo = ytype == 0 ? -128.0f : ytype == 1 ? 0.0f : -2147483648.0f;
    float hi = ytype == 0 ? 127.0f : ytype == 1 ? 255.0f : 2147483648.0f;
    long o, i, at = 0;
    int c;
    /* one loop per output type that compilers vectorise: the rounding as selects rather
     * than branches on the data, and the range test on the bits. t = x / s is rounded
     * when |t| <= 2^23 (larger ones are integral already, and NaN and inf pass through
     * whole): its bits b are clamped to that range on the integers (a float select
     * feeding the conversion kept gcc 12 from vectorising the loop), converted and
     * rounded half away from zero, and big picks b's bits back where |t| > 2^23. The
     * same results as the float selects this replaced, for every float bit pattern
     * (compared by a scratch program over all 2^32; tests/qnn/test_quantize_edges.py
     * checks the edge cases against numpy through libtcc and gcc). gcc 12
     * -O3 -march=native, Emerald Rapids: the quantized MobileNetV2's input quantize
     * ([1, 3, 64, 64] to uint8) 96.5 -> 6.6 us */
#define RQ_QUANTIZE_LOOP(store)                                                         \
    for (o = 0; o < outer; o++) {                                                       \
        for (c = 0; c < channels; c++, at += inner) {                                   \
            const float s = scale[c], z = (float)zp[c];                                 \
            for (i = 0; i < inner; i++) {                                               \
                union { float f; uint32_t u; } b, r;                                    \
                uint32_t big;                                                           \
                float t, tr, f, up, dn;                                                 \
                b.f = x[at + i] / s;                                                    \
                big = (b.u & 0x7FFFFFFFu) > 0x4B000000u ? 0xFFFFFFFFu : 0u;             \
                r.u = (b.u & ~big) | (((b.u & 0x80000000u) | 0x4B000000u) & big);       \
                tr = (float)(int32_t)r.f, f = r.f - tr;                                 \
                up = f >= 0.5f ? 1.0f : 0.0f, dn = f <= -0.5f ? 1.0f : 0.0f;            \
                r.f = tr + (up - dn);                                                   \
                r.u = (b.u & big) | (r.u & ~big);                                       \
                t = r.f + z;                                                            \
                t = t < hi ? t : hi;                                                    \
                t = t > lo ? t : lo;                                                    \
                store;                                                                  \
            }                                                                           \
        }                                                                               \
    }
    if (ytype == 2) {
        int32_t *yi = (int32_t *)y;
        RQ_QUANTIZE_LOOP(yi[at + i] = t >= 2147483648.0f ? 2147483647 : (int32_t)t)
    } else if (ytype == 1) {
        unsigned char *yu = (unsigned char *)y;
        RQ_QUANTIZE_LOOP(yu[at + i] = (unsigned char)(int32_t)t)
    } else {
        signed char *ys = (signed char *)y;
        RQ_QUANTIZE_LOOP(ys[at + i] = (signed char)(int32_t)t)
    }
#undef RQ_QUANTIZE_LOOP
}

/*@ rq_dequantize uses rq_wrap32 */
/* qnn.dequantize of x [outer][channels][inner] (xtype 0 int8, 1 uint8,
 * 2 int32) to float32: (float)(x - zp[c]) (the difference in int32) times
 * scale[c], in float32. */
static void rq_dequantize(const QuantizeParams *p, const void *x, const float *scale,
                          const int32_t *zp, float *y)
{
    int xtype = p->type, channels = p->channels;
    long outer = p->outer, inner = p->inner;
    long o, i, at = 0;
    int c;
    for (o = 0; o < outer; o++) {
        for (c = 0; c < channels; c++) {
            for (i = 0; i < inner; i++, at++) {
                int32_t xv = xtype == 0 ? (int32_t)((const signed char *)x)[at]
                           : xtype == 1 ? (int32_t)((const unsigned char *)x)[at]
                                        : ((const int32_t *)x)[at];
                y[at] = (float)rq_wrap32((uint32_t)xv - (uint32_t)zp[c]) * scale[c];
            }
        }
    }
}

/*@ rq_pool2d uses rk_taps rq_wrap32 rq_put */
/* 2-D max or average pooling of an integer tensor (xtype 0 int8, 1 uint8,
 * 2 int32), NCHW, with the windows and divisors of rk_pool2d. Max: the
 * largest tap inside the input; a window with none gives the type's minimum
 * (TVM pads with it). Average (int32 only): the int32 sum of the taps inside
 * the input (wrapping) divided by the count in C's truncating division (TVM's
 * div on integers); a divisor of 0 gives 0. The output has the input's type. */
static void rq_pool2d(const Pool2dParams *p, const void *x, void *y)
{
    int xtype = p->xtype, n = p->n, c = p->c, hi = p->hi, wi = p->wi, ho = p->ho, wo = p->wo;
    int kh = p->kh, kw = p->kw, sh = p->sh, sw = p->sw, dh = p->dh, dw = p->dw;
    int pt = p->pt, pl = p->pl, pb = p->pb, pr = p->pr;
    int is_max = p->is_max, count_include_pad = p->count_include_pad;
    long plane, nplanes = (long)n * c;
    int oy, ox, ky, kx;
    int32_t tmin = xtype == 0 ? -128 : xtype == 1 ? 0 : (-2147483647 - 1);
    for (plane = 0; plane < nplanes; plane++) {
        long xbase = plane * hi * wi, ybase = plane * ho * wo;
        for (oy = 0; oy < ho; oy++) {
            int iy0 = oy * sh - pt, ky0, ky1, kyp;
            rk_taps(iy0, kh, dh, hi, pb, &ky0, &ky1, &kyp);
            for (ox = 0; ox < wo; ox++) {
                int ix0 = ox * sw - pl, kx0, kx1, kxp;
                int32_t out = tmin;
                uint32_t sum = 0;
                long o = ybase + (long)oy * wo + ox;
                rk_taps(ix0, kw, dw, wi, pr, &kx0, &kx1, &kxp);
                for (ky = ky0; ky < ky1; ky++) {
                    long row = xbase + (long)(iy0 + ky * dh) * wi + ix0;
                    for (kx = kx0; kx < kx1; kx++) {
                        long at = row + (long)kx * dw;
                        int32_t v = xtype == 0 ? (int32_t)((const signed char *)x)[at]
                                  : xtype == 1 ? (int32_t)((const unsigned char *)x)[at]
                                               : ((const int32_t *)x)[at];
                        if (v > out)
                            out = v;
                        sum += (uint32_t)v;
                    }
                }
                if (!is_max) {
                    long cnt = count_include_pad ? (long)kyp * kxp
                                                 : (long)(ky1 - ky0) * (kx1 - kx0);
                    out = cnt > 0 ? rq_wrap32(sum) / (int32_t)cnt : 0;
                }
                rq_put(y, xtype, o, out);
            }
        }
    }
}

/*@ rq_fill uses rq_put */
/* y[0..count) = value, y of type ytype (0 int8, 1 uint8, 2 int32); value is
 * already in the type's range. */
static void rq_fill(const FillParams *p, void *y)
{
    int ytype = p->ytype;
    long count = p->count;
    int32_t value = p->ivalue;
    long i;
    for (i = 0; i < count; i++)
        rq_put(y, ytype, i, value);
}

/*@ rq_load */
/* Element i of x as an int64, x of type code t: 0 int8, 1 uint8 (and bool),
 * 2 int32, 3 int64, 5 int16 (the indexing kernels' codes; 4 is float32,
 * which they read themselves). */
static int64_t rq_load(const void *x, long i, int t)
{
    switch (t) {
    case 0: return ((const signed char *)x)[i];
    case 1: return ((const unsigned char *)x)[i];
    case 2: return ((const int32_t *)x)[i];
    case 5: return ((const int16_t *)x)[i];
    default: return ((const int64_t *)x)[i];
    }
}

/*@ rq_gather uses rq_load */
/* take and gather, on elements of esize bytes: for every output index
 * (o_0..o_{rank-1}) < shape, the element at sum o_d*xs[d] + i*astride of x,
 * where i is the index at sum o_d*is[d] of ind (type code itype) made a
 * position on an axis of n (n >= 1) by mode: 0 clipped to [0, n) (take's
 * clip: TVM clips a negative index to 0), 1 wrapped modulo n (wrap), 2 a
 * negative index counted from the end, then clipped (take's fast mode and
 * gather, where TVM leaves an index outside the axis undefined). The output
 * is row by row along the last axis, whose index is read once per row when
 * is[rank-1] is 0 (take: a run of inner elements per index). */
static void rq_gather(const GatherParams *p, const void *x, const void *ind, void *y)
{
    int rank = p->rank, n = p->n, mode = p->mode, itype = p->itype, esize = p->esize;
    const int *shape = p->shape;
    const long *xs = p->xs, *is = p->is;
    const unsigned char *xb = (const unsigned char *)x;
    unsigned char *yb = (unsigned char *)y;
    long rows = 1, len, r, t, astride = p->astride, at = 0;
    int d, e, last = rank - 1;
    for (d = 0; d < rank; d++)
        if (shape[d] <= 0)
            return;
    len = rank > 0 ? shape[last] : 1;
    for (d = 0; d < last; d++)
        rows *= shape[d];
    for (r = 0; r < rows; r++) {
        long rem = r, xo = 0, io = 0;
        int64_t i = 0;
        for (d = last - 1; d >= 0; d--) {
            long id = rem % shape[d];
            rem /= shape[d];
            xo += id * xs[d];
            io += id * is[d];
        }
        for (t = 0; t < len; t++) {
            long src;
            if (t == 0 || (rank > 0 && is[last] != 0)) {
                i = rq_load(ind, io + (rank > 0 ? t * is[last] : 0), itype);
                if (mode == 1) {
                    i %= n;
                    if (i < 0)
                        i += n;
                } else {
                    if (mode == 2 && i < 0)
                        i += n;
                    i = i < 0 ? 0 : i >= n ? n - 1 : i;
                }
            }
            src = xo + (rank > 0 ? t * xs[last] : 0) + (long)i * astride;
            for (e = 0; e < esize; e++)
                yb[at * esize + e] = xb[src * esize + e];
            at++;
        }
    }
}

/*@ rq_where uses rq_load */
/* where(condition, x, y) with numpy broadcasting: output element o (in
 * order) is x's or y's element (esize bytes) at sum o_d*xs[d] or
 * sum o_d*ys[d], as the condition's element at sum o_d*cs[d] (type code
 * ctype; 4 float32) is nonzero or zero. */
static void rq_where(const WhereParams *p, const void *cond, const void *x, const void *y,
                     void *out)
{
    int rank = p->rank, ctype = p->ctype, esize = p->esize;
    const int *shape = p->shape;
    const long *cs = p->cs, *xs = p->xs, *ys = p->ys;
    const unsigned char *xb = (const unsigned char *)x, *yb = (const unsigned char *)y;
    unsigned char *ob = (unsigned char *)out;
    long total = 1, o;
    int d, e;
    for (d = 0; d < rank; d++)
        total *= shape[d] > 0 ? shape[d] : 0;
    for (o = 0; o < total; o++) {
        long rem = o, co = 0, xo = 0, yo = 0;
        int take_x;
        const unsigned char *src;
        for (d = rank - 1; d >= 0; d--) {
            long id = rem % shape[d];
            rem /= shape[d];
            co += id * cs[d];
            xo += id * xs[d];
            yo += id * ys[d];
        }
        take_x = ctype == 4 ? ((const float *)cond)[co] != 0.0f : rq_load(cond, co, ctype) != 0;
        src = take_x ? xb + xo * esize : yb + yo * esize;
        for (e = 0; e < esize; e++)
            ob[o * esize + e] = src[e];
    }
}

/*@ rq_argreduce uses rq_load */
/* argmax (is_min 0) or argmin (1) along len of x [outer][len][inner] (type
 * code xtype; 4 float32) into int32 y [outer][inner], as TVM's reducer
 * computes it: from index -1 and the type's lowest value (argmax; highest
 * for argmin: float32 -FLT_MAX, FLT_MAX), each element in order replaces the
 * value unless the value is better (larger; smaller for argmin), and the
 * index unless the value is better or equal (equal: only with select_last
 * index). So ties go to the first index (the last with last != 0), a NaN is
 * never better, and elements all equal to the starting value give -1. */
static void rq_argreduce(const ArgReduceParams *p, const void *x, int32_t *y)
{
    long outer = p->outer, inner = p->inner, o, j;
    int len = p->len, xtype = p->xtype, is_min = p->is_min, last = p->last, i;
    int64_t ilo = xtype == 0 ? -128 : xtype == 1 ? 0 : xtype == 2 ? -2147483647 - 1
                : xtype == 5 ? -32768 : -9223372036854775807 - 1;
    int64_t ihi = xtype == 0 ? 127 : xtype == 1 ? 255 : xtype == 2 ? 2147483647
                : xtype == 5 ? 32767 : 9223372036854775807;
    for (o = 0; o < outer; o++) {
        for (j = 0; j < inner; j++) {
            long base = o * len * inner + j;
            int32_t bi = -1;
            if (xtype == 4) {
                const float *xf = (const float *)x;
                float bv = is_min ? 3.40282347e+38f : -3.40282347e+38f;
                for (i = 0; i < len; i++) {
                    float v = xf[base + (long)i * inner];
                    int better = is_min ? bv < v : bv > v;
                    if (!better && !(bv == v && !last))
                        bi = i;
                    if (!better)
                        bv = v;
                }
            } else {
                int64_t bv = is_min ? ihi : ilo;
                for (i = 0; i < len; i++) {
                    int64_t v = rq_load(x, base + (long)i * inner, xtype);
                    int better = is_min ? bv < v : bv > v;
                    if (!better && !(bv == v && !last))
                        bi = i;
                    if (!better)
                        bv = v;
                }
            }
            y[o * inner + j] = bi;
        }
    }
}

/*@ rq_cumsum uses rq_load rq_wrap32 */
/* Cumulative sum along len of x [outer][len][inner] into y of the same
 * shape, in y's type (codes: 0 int8, 1 uint8, 2 int32, 3 int64, 4 float32,
 * 5 int16): y[k] = y[k-1] + x[k] (exclusive: y[0] = 0, y[k] = y[k-1] +
 * x[k-1]), each x converted to y's type first, as TVM's scan. A float32
 * output sums in float32 in order; an integer one wraps modulo 2^64, stored
 * as its low bits. An integer output of a float32 x is not formed (relayc
 * refuses it). */
static void rq_cumsum(const CumsumParams *p, const void *x, void *y)
{
    long outer = p->outer, inner = p->inner, o, j;
    int len = p->len, xtype = p->xtype, ytype = p->ytype, ex = p->exclusive, k;
    for (o = 0; o < outer; o++) {
        for (j = 0; j < inner; j++) {
            long base = o * len * inner + j;
            float fs = 0.0f;
            uint64_t us = 0;
            for (k = 0; k < len; k++) {
                long at = base + (long)k * inner, from = at - (ex ? inner : 0);
                if (ytype == 4) {
                    if (!ex || k > 0)
                        fs += xtype == 4 ? ((const float *)x)[from] : (float)rq_load(x, from, xtype);
                    ((float *)y)[at] = fs;
                    continue;
                }
                if (!ex || k > 0)
                    us += (uint64_t)rq_load(x, from, xtype);
                if (ytype == 0) {
                    int v = (int)(us & 0xffu);
                    ((signed char *)y)[at] = (signed char)(v >= 128 ? v - 256 : v);
                } else if (ytype == 1) {
                    ((unsigned char *)y)[at] = (unsigned char)(us & 0xffu);
                } else if (ytype == 5) {
                    long v = (long)(us & 0xffffu);
                    ((int16_t *)y)[at] = (int16_t)(v >= 32768 ? v - 65536 : v);
                } else if (ytype == 2) {
                    ((int32_t *)y)[at] = rq_wrap32((uint32_t)(us & 0xffffffffu));
                } else {
                    ((int64_t *)y)[at] = us <= 0x7fffffffffffffffull ? (int64_t)us
                                                                     : -(int64_t)(~us) - 1;
                }
            }
        }
    }
}

/*@ rq_adaptive_pool2d uses rk_awin rq_wrap32 rq_put */
/* Adaptive max or average pooling of an integer tensor (xtype 0 int8,
 * 1 uint8, 2 int32), NCHW, x [n][c][hi][wi] -> y [n][c][ho][wo] of x's type,
 * over the windows of rk_adaptive_pool2d (rk_awin): rows [floor(o*hi/ho),
 * ceil((o+1)*hi/ho)), likewise for columns. Max: the largest element.
 * Average (int32 only, as TVM: the sum in int32 wrapping, divided by the
 * window's size in C's truncating division). Reads n, c, hi, wi, ho, wo,
 * is_max and xtype of its Pool2dParams. */
static void rq_adaptive_pool2d(const Pool2dParams *p, const void *x, void *y)
{
    int xtype = p->xtype, n = p->n, c = p->c, hi = p->hi, wi = p->wi, ho = p->ho, wo = p->wo;
    int is_max = p->is_max;
    long plane, nplanes = (long)n * c;
    int oy, ox, iy, ix;
    for (plane = 0; plane < nplanes; plane++) {
        long xbase = plane * hi * wi, ybase = plane * ho * wo;
        for (oy = 0; oy < ho; oy++) {
            int y0, y1;
            rk_awin(oy, hi, ho, &y0, &y1);
            for (ox = 0; ox < wo; ox++) {
                int x0, x1;
                int32_t out = xtype == 0 ? -128 : xtype == 1 ? 0 : (-2147483647 - 1);
                uint32_t sum = 0;
                rk_awin(ox, wi, wo, &x0, &x1);
                long o = ybase + (long)oy * wo + ox, cnt = (long)(y1 - y0) * (x1 - x0);
                for (iy = y0; iy < y1; iy++) {
                    for (ix = x0; ix < x1; ix++) {
                        long at = xbase + (long)iy * wi + ix;
                        int32_t v = xtype == 0 ? (int32_t)((const signed char *)x)[at]
                                  : xtype == 1 ? (int32_t)((const unsigned char *)x)[at]
                                               : ((const int32_t *)x)[at];
                        if (v > out)
                            out = v;
                        sum += (uint32_t)v;
                    }
                }
                if (!is_max)
                    out = cnt > 0 ? rq_wrap32(sum) / (int32_t)cnt : 0;
                rq_put(y, xtype, o, out);
            }
        }
    }
}
