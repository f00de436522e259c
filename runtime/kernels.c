/*
 * kernels.c: relayc's reference kernels (float32, portable C99).
 *
 * This file is used two ways:
 *   - relayc copies it, section by section, into the C library it emits: only
 *     the sections a model uses are copied, so every section is self-contained;
 *   - the compiler #includes it for constant folding and reference runs.
 *
 * Format (the emitter depends on it):
 *   - this comment, then the #includes below and nothing else (the emitter
 *     writes the typedefs params.h would give);
 *   - each kernel is one section: a line holding exactly the marker comment
 *     "@ rk_NAME" (slash-star, at-sign, space, name, space, star-slash), an
 *     optional comment, then ONE "static void rk_NAME(...)" function (a helper
 *     that elementwise.def's expressions call, "static RK_INLINE float rk_NAME",
 *     after the lines defining RK_INLINE). A section ends where the next marker
 *     line begins, or at end of file;
 *   - a section calls nothing but <math.h> and the helper sections its marker
 *     names ("@ rk_NAME uses rk_HELPER"), which the emitter copies first; it uses
 *     no globals, no malloc, no recursion and no stack arrays.
 *   - a kernel takes a pointer to its parameter struct (runtime/params.def),
 *     then its input pointers, then its output.
 *
 * Conventions:
 *   - tensors are dense float32, C order (NCHW for images, OIHW for weights);
 *   - dimensions are int, flat offsets are computed in long;
 *   - outputs never alias inputs;
 *   - float accumulation (cheap on FPUs without double hardware), except
 *     rk_reduce's sum/mean, which accumulate in double; the summation order is
 *     documented per kernel;
 *   - max-style kernels propagate NaN like PyTorch: once a NaN is seen the
 *     result is NaN.
 * Every kernel is static: a translation unit that includes this file but does
 * not call every kernel needs -Wno-unused-function under -Wall -Werror.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "params.h"

/*@ rk_taps */
/* The taps of a k-tap window with dilation d whose first tap is at input index i0 (the
 * output index times the stride, less the leading padding): those in [*t0, *t1) land
 * inside the input [0, n), those in [0, *tp) inside the padded extent, which ends pad
 * after the input (the first tap is never before it). Conv and pooling, float and
 * integer, share it. */
static void rk_taps(int i0, int k, int d, int n, int pad, int *t0, int *t1, int *tp)
{
    int a = i0 >= 0 ? 0 : (-i0 + d - 1) / d;
    int b = n - 1 - i0 < 0 ? 0 : (n - 1 - i0) / d + 1;
    int c = n + pad - 1 - i0 < 0 ? 0 : (n + pad - 1 - i0) / d + 1;
    if (b > k)
        b = k;
    if (c > k)
        c = k;
    *t0 = a < b ? a : b;
    *t1 = b;
    *tp = c;
}

/*@ rk_expf */
/* expf(x) in operations a compiler vectorises (no call, no float branch): |x| over 104 is
 * clamped to 104 on the integer bits (NaN passes), x = n ln2 + r with n rounded to
 * nearest by adding 1.5 * 2^23 and |r| <= ln2 / 2 (ln2 in two parts, the first exact
 * times n), e^r by Cephes's polynomial, times 2^n as two powers of two built in the
 * exponent bits (each a normal float, so subnormal results round once). Within 1.1 ulp
 * of exp in double (checked on every 37th float bit pattern, gcc -O2 and -O3 -march=native);
 * +inf from 88.73 up, 0 below -103.98, NaN for NaN, exactly 1 at 0. Always inlined under
 * gcc and clang (not at -Os): in a large translation unit gcc's inliner otherwise keeps
 * the call once the kernel calling it has been inlined into NAME_run, and the loop stays
 * scalar. */
#if !defined(RK_INLINE) && defined(__GNUC__) && !defined(__TINYC__) && !defined(__OPTIMIZE_SIZE__)
#define RK_INLINE __attribute__((always_inline)) inline /* past gcc's growth limits */
#elif !defined(RK_INLINE)
#define RK_INLINE
#endif
static RK_INLINE float rk_expf(float x)
{
    union { float f; uint32_t u; } b, t, h, s1, s2;
    uint32_t a, n, n1;
    float fn, r, p;
    b.f = x;
    a = b.u & 0x7FFFFFFFu;
    b.u = a > 0x42D00000u && a <= 0x7F800000u ? (b.u & 0x80000000u) | 0x42D00000u : b.u;
    t.f = b.f * 1.44269504088896341f + 12582912.0f;
    fn = t.f - 12582912.0f;
    r = b.f - fn * 0.693359375f;
    r = r + fn * 2.12194440e-4f;
    p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
          4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    h.f = fn * 0.5f + 12582912.0f;
    n = t.u - 0x4B400000u;
    n1 = h.u - 0x4B400000u;
    s1.u = (n1 + 127u) << 23;
    s2.u = (n - n1 + 127u) << 23;
    return p * s1.f * s2.f;
}

/*@ rk_lanes */
/* A reduction of x[i * stride], i < len: the sum (op 0), the sum of squares (op 1) or
 * the max (op 2: NaN ignored, -INFINITY for none) in 8 interleaved lanes (element i in
 * lane i % 8, the last len % 8 in lane 0), combined pairwise: compilers vectorise it,
 * where a sum in order stays scalar. Always inlined under gcc and clang (see rk_expf),
 * so a constant stride and op fold. */
#if !defined(RK_INLINE) && defined(__GNUC__) && !defined(__TINYC__) && !defined(__OPTIMIZE_SIZE__)
#define RK_INLINE __attribute__((always_inline)) inline /* past gcc's growth limits */
#elif !defined(RK_INLINE)
#define RK_INLINE
#endif
static RK_INLINE float rk_lanes(const float *x, long stride, int len, int op)
{
    float s0 = op == 2 ? -INFINITY : 0.0f, s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0,
          s6 = s0, s7 = s0;
    int i, l8 = len / 8 * 8;
#define RK_TWO(a, b) (op == 2 ? ((b) > (a) ? (b) : (a)) : (a) + (b))
#define RK_STEP(s, k) \
    s = RK_TWO(s, op == 1 ? x[(i + k) * stride] * x[(i + k) * stride] : x[(i + k) * stride])
    for (i = 0; i < l8; i += 8) {
        RK_STEP(s0, 0); RK_STEP(s1, 1); RK_STEP(s2, 2); RK_STEP(s3, 3);
        RK_STEP(s4, 4); RK_STEP(s5, 5); RK_STEP(s6, 6); RK_STEP(s7, 7);
    }
    for (; i < len; i++)
        RK_STEP(s0, 0);
    s0 = RK_TWO(RK_TWO(s0, s4), RK_TWO(s2, s6));
    s1 = RK_TWO(RK_TWO(s1, s5), RK_TWO(s3, s7));
    return RK_TWO(s0, s1);
#undef RK_STEP
#undef RK_TWO
}

/*@ rk_conv2d uses rk_taps */
/* 2-D convolution, NCHW x OIHW -> NCHW, with groups (depthwise: groups == ci).
 * x [n][ci][hi][wi], w [co][ci/groups][kh][kw], bias [co] or NULL,
 * y [n][co][ho][wo]. Output pixel (oy, ox) reads input row oy*sh - pt + ky*dh
 * and column ox*sw - pl + kx*dw; taps outside [0,hi) x [0,wi) contribute zero
 * (so bottom/right padding is implied by ho/wo). The sum starts at the bias and
 * adds taps in (input channel, ky, kx) order. */
static void rk_conv2d(const Conv2dParams *p, const float *x, const float *w,
                      const float *bias, float *y)
{
    int n = p->n, ci = p->ci, hi = p->hi, wi = p->wi, co = p->co, ho = p->ho, wo = p->wo;
    int kh = p->kh, kw = p->kw, sh = p->sh, sw = p->sw, dh = p->dh, dw = p->dw;
    int pt = p->pt, pl = p->pl, groups = p->groups;
    int cig = ci / groups, cog = co / groups;
    int b, oc, oy, ox, ic, ky, kx;
    for (b = 0; b < n; b++) {
        for (oc = 0; oc < co; oc++) {
            int g = oc / cog;
            const float *wc = w + (long)oc * cig * kh * kw;
            const float *xg = x + ((long)b * ci + (long)g * cig) * hi * wi;
            float *yc = y + ((long)b * co + oc) * ho * wo;
            for (oy = 0; oy < ho; oy++) {
                int iy0 = oy * sh - pt, ky0, ky1, kyp;
                rk_taps(iy0, kh, dh, hi, 0, &ky0, &ky1, &kyp); /* rows inside [0, hi) */
                for (ox = 0; ox < wo; ox++) {
                    int ix0 = ox * sw - pl, kx0, kx1, kxp;
                    float acc = bias ? bias[oc] : 0.0f;
                    rk_taps(ix0, kw, dw, wi, 0, &kx0, &kx1, &kxp);
                    for (ic = 0; ic < cig; ic++) {
                        const float *xp = xg + (long)ic * hi * wi;
                        const float *wp = wc + (long)ic * kh * kw;
                        for (ky = ky0; ky < ky1; ky++) {
                            const float *xr = xp + (long)(iy0 + ky * dh) * wi + ix0;
                            const float *wr = wp + (long)ky * kw;
                            for (kx = kx0; kx < kx1; kx++)
                                acc += wr[kx] * xr[(long)kx * dw];
                        }
                    }
                    yc[(long)oy * wo + ox] = acc;
                }
            }
        }
    }
}

/*@ rk_matmul */
/* Batched matrix product: for each batch i, Y_i[m][n] = sum_k A_i(m,k) B_i(k,n)
 * with A_i = a + i*sa stored [m][k] (ta == 0) or [k][m] (ta == 1), and
 * B_i = b + i*sb stored [k][n] (tb == 0) or [n][k] (tb == 1); sa or sb may be
 * 0 to broadcast one matrix. y is [batch][m][n], contiguous. nn.dense is
 * m = rows, tb = 1. Each output sums its k products in order 0..k-1. */
static void rk_matmul(const MatmulParams *p, const float *a, const float *b, float *y)
{
    int batch = p->batch, m = p->m, n = p->n, k = p->k, ta = p->ta, tb = p->tb;
    long sa = p->sa, sb = p->sb;
    long ar = ta ? 1 : k, ak = ta ? m : 1; /* A(r, t) = A[r*ar + t*ak] */
    int i, r, c, t;
    for (i = 0; i < batch; i++) {
        const float *A = a + (long)i * sa;
        const float *B = b + (long)i * sb;
        float *Y = y + (long)i * m * n;
        for (r = 0; r < m; r++) {
            const float *Ar = A + (long)r * ar;
            float *Yr = Y + (long)r * n;
            if (tb) {
                /* B stored [n][k]: each output is a dot product of two rows */
                for (c = 0; c < n; c++) {
                    const float *Bc = B + (long)c * k;
                    float acc = 0.0f;
                    for (t = 0; t < k; t++)
                        acc += Ar[(long)t * ak] * Bc[t];
                    Yr[c] = acc;
                }
            } else {
                /* B stored [k][n]: accumulate rows of B into the output row */
                for (c = 0; c < n; c++)
                    Yr[c] = 0.0f;
                for (t = 0; t < k; t++) {
                    const float *Bt = B + (long)t * n;
                    float av = Ar[(long)t * ak];
                    for (c = 0; c < n; c++)
                        Yr[c] += av * Bt[c];
                }
            }
        }
    }
}

/*@ rk_pool2d uses rk_taps */
/* 2-D max or average pooling, NCHW, x [n][c][hi][wi] -> y [n][c][ho][wo].
 * Window (oy, ox) has taps at rows oy*sh - pt + ky*dh (ky < kh) and columns
 * ox*sw - pl + kx*dw (kx < kw); padding is top pt, left pl, bottom pb, right pr.
 * ho/wo are given (the caller applies floor or ceil mode), so a last window may
 * hang past the padded edge.
 *   Max (is_max != 0): padded taps are ignored. A window with no tap inside
 *     the input gives -INFINITY (PyTorch's initial value; PyTorch itself never
 *     forms such windows; TVM would give -FLT_MAX). NaN propagates.
 *   Average: sum of the taps inside the input (padding counts as zero), in
 *     (ky, kx) order, divided by
 *       count_include_pad: the number of taps inside the padded region
 *         [-pt, hi+pb) x [-pl, wi+pr); taps hanging past it (ceil mode) are
 *         not counted (PyTorch's rule, TVM agrees);
 *       otherwise: the number of taps inside the input.
 *     A window whose divisor is 0 gives 0. */
static void rk_pool2d(const Pool2dParams *p, const float *x, float *y)
{
    int n = p->n, c = p->c, hi = p->hi, wi = p->wi, ho = p->ho, wo = p->wo;
    int kh = p->kh, kw = p->kw, sh = p->sh, sw = p->sw, dh = p->dh, dw = p->dw;
    int pt = p->pt, pl = p->pl, pb = p->pb, pr = p->pr;
    int is_max = p->is_max, count_include_pad = p->count_include_pad;
    long plane, nplanes = (long)n * c;
    int oy, ox, ky, kx, t;
    /* the columns [oxa, oxb) whose every tap is inside the input: computed a row at a
     * time, tap by tap (the same order per output), in loops compilers vectorise */
    int oxa = (pl + sw - 1) / sw, last = wi - 1 + pl - (kw - 1) * dw;
    int oxb = last < 0 ? 0 : last / sw + 1;
    if (oxb > wo)
        oxb = wo;
    if (oxa > oxb)
        oxa = oxb;
    for (plane = 0; plane < nplanes; plane++) {
        const float *xp = x + plane * hi * wi;
        float *yp = y + plane * ho * wo;
        for (oy = 0; oy < ho; oy++) {
            /* taps ky in [ky0, ky1) are inside the input; [0, kyp) inside the
             * padded region */
            int iy0 = oy * sh - pt, ky0, ky1, kyp;
            float *yr = yp + (long)oy * wo;
            rk_taps(iy0, kh, dh, hi, pb, &ky0, &ky1, &kyp);
            for (t = oxa; t < oxb; t++)
                yr[t] = is_max ? -INFINITY : 0.0f;
            for (ky = ky0; ky < ky1; ky++)
                for (kx = 0; kx < kw && oxa < oxb; kx++) {
                    const float *xr = xp + (long)(iy0 + ky * dh) * wi + kx * dw - pl;
                    if (is_max) {
                        for (t = oxa; t < oxb; t++) {
                            float v = xr[(long)t * sw];
                            yr[t] = v > yr[t] || v != v ? v : yr[t];
                        }
                    } else {
                        for (t = oxa; t < oxb; t++)
                            yr[t] += xr[(long)t * sw];
                    }
                }
            if (!is_max && oxa < oxb) {
                long cnt = count_include_pad ? (long)kyp * kw : (long)(ky1 - ky0) * kw;
                for (t = oxa; t < oxb; t++)
                    yr[t] = cnt > 0 ? yr[t] / (float)cnt : 0.0f;
            }
            for (ox = 0; ox < wo; ox++) {
                int ix0 = ox * sw - pl, kx0, kx1, kxp;
                float out;
                if (ox == oxa && oxa < oxb) {
                    ox = oxb - 1;
                    continue;
                }
                rk_taps(ix0, kw, dw, wi, pr, &kx0, &kx1, &kxp);
                if (is_max) {
                    out = -INFINITY;
                    for (ky = ky0; ky < ky1; ky++) {
                        const float *xr = xp + (long)(iy0 + ky * dh) * wi + ix0;
                        for (kx = kx0; kx < kx1; kx++) {
                            float v = xr[(long)kx * dw];
                            if (v > out || v != v)
                                out = v;
                        }
                        if (out != out)
                            break;
                    }
                } else {
                    long cnt = count_include_pad ? (long)kyp * kxp
                                                 : (long)(ky1 - ky0) * (kx1 - kx0);
                    float sum = 0.0f;
                    for (ky = ky0; ky < ky1; ky++) {
                        const float *xr = xp + (long)(iy0 + ky * dh) * wi + ix0;
                        for (kx = kx0; kx < kx1; kx++)
                            sum += xr[(long)kx * dw];
                    }
                    out = cnt > 0 ? sum / (float)cnt : 0.0f;
                }
                yr[ox] = out;
            }
        }
    }
}

/*@ rk_awin */
/* The window of adaptive pooling output o (of out) over an input of in: [*a, *b) =
 * [floor(o*in/out), ceil((o+1)*in/out)), as PyTorch and TVM compute it. */
static void rk_awin(int o, int in, int out, int *a, int *b)
{
    *a = (int)((long)o * in / out);
    *b = (int)(((long)(o + 1) * in + out - 1) / out);
}

/*@ rk_adaptive_pool2d uses rk_awin rk_lanes */
/* Adaptive pooling, NCHW, x [n][c][hi][wi] -> y [n][c][ho][wo], like PyTorch:
 * output (oy, ox) pools input rows rk_awin(oy, hi, ho) and columns
 * rk_awin(ox, wi, wo). Average (is_max 0): the sum (each row's in rk_lanes's
 * lanes, the rows in order; a global pool, 1 x 1 out, sums the whole plane in the
 * lanes) divided by the count (an empty window gives 0); max: NaN propagates, an
 * empty window gives -INFINITY. */
static void rk_adaptive_pool2d(const AdaptivePool2dParams *p, const float *x, float *y)
{
    int n = p->n, c = p->c, hi = p->hi, wi = p->wi, ho = p->ho, wo = p->wo;
    long plane, nplanes = (long)n * c;
    int oy, ox, iy, ix;
    for (plane = 0; plane < nplanes; plane++) {
        const float *xp = x + plane * hi * wi;
        float *yp = y + plane * ho * wo;
        if (!p->is_max && ho == 1 && wo == 1 && hi > 0 && wi > 0) {
            yp[0] = rk_lanes(xp, 1, hi * wi, 0) / (float)((long)hi * wi);
            continue;
        }
        for (oy = 0; oy < ho; oy++) {
            int y0, y1;
            rk_awin(oy, hi, ho, &y0, &y1);
            for (ox = 0; ox < wo; ox++) {
                int x0, x1;
                long cnt;
                float sum = 0.0f, m = -INFINITY;
                rk_awin(ox, wi, wo, &x0, &x1);
                cnt = (long)(y1 - y0) * (x1 - x0);
                for (iy = y0; iy < y1; iy++) {
                    const float *xr = xp + (long)iy * wi;
                    if (p->is_max) {
                        for (ix = x0; ix < x1; ix++)
                            if (xr[ix] > m || xr[ix] != xr[ix])
                                m = xr[ix];
                    } else {
                        sum += rk_lanes(xr + x0, 1, x1 - x0, 0);
                    }
                }
                yp[(long)oy * wo + ox] = p->is_max ? m : cnt > 0 ? sum / (float)cnt : 0.0f;
            }
        }
    }
}

/*@ rk_softmax uses rk_expf rk_lanes */
/* Softmax (log == 0) or log-softmax (log == 1) along a middle axis: element
 * (o, i, j) is x[(o*len + i)*inner + j], i < len is the softmax axis.
 * Numerically stable: exp(x - max) / sum, or x - max - log(sum), as TVM: the
 * exponentials (rk_expf) are stored in y, then summed, then divided by the sum;
 * each row is read while it is in cache. The max and the sum in rk_lanes's lanes;
 * a NaN anywhere in a row makes the whole row NaN (through the sum). */
static void rk_softmax(const SoftmaxParams *p, const float *x, float *y)
{
    int outer = p->outer, len = p->len, inner = p->inner, log = p->log;
    int o, i, j;
    for (o = 0; o < outer; o++) {
        for (j = 0; j < inner; j++) {
            const float *xp = x + (long)o * len * inner + j;
            float *yp = y + (long)o * len * inner + j;
            float mx, sum;
            if (len <= 0)
                continue;
            mx = rk_lanes(xp, inner, len, 2);
            for (i = 0; i < len; i++)
                yp[(long)i * inner] = rk_expf(xp[(long)i * inner] - mx);
            sum = rk_lanes(yp, inner, len, 0);
            if (log) {
                float ls = logf(sum);
                for (i = 0; i < len; i++)
                    yp[(long)i * inner] = xp[(long)i * inner] - mx - ls;
            } else {
                for (i = 0; i < len; i++)
                    yp[(long)i * inner] = yp[(long)i * inner] / sum;
            }
        }
    }
}

/*@ rk_reduce */
/* Reduction over the axes d with reduced[d] != 0 of x (rank <= 8, shape
 * given); kind 0 sum, 1 mean, 2 max, 3 min, 4 prod. y holds the kept axes in order,
 * contiguous (a reduce over no axis is a copy; over all axes, one element).
 * One output at a time: its inputs are visited in memory order, the innermost
 * loop running over the last reduced axis longer than 1. Sum and mean
 * accumulate in double (a float accumulator is off by about 1e-5 relative
 * after 1e5 terms of one sign), and so does prod; mean is sum / count. An
 * empty reduction gives sum 0, mean NaN, max -INFINITY, min INFINITY, prod 1. Max and min propagate NaN. */
static void rk_reduce(const ReduceParams *p, const float *x, float *y)
{
    int rank = p->rank, kind = p->kind;
    const int *shape = p->shape, *reduced = p->reduced;
    long ycount = 1, rcount = 1, len = 1, step = 1, rows, o, r, t;
    int d, dl = -1;
    for (d = 0; d < rank; d++) {
        if (reduced[d])
            rcount *= shape[d];
        else
            ycount *= shape[d];
    }
    /* dl: innermost reduced axis longer than 1; len its size, step its stride */
    for (d = rank - 1; d >= 0 && dl < 0; d--) {
        if (reduced[d] && shape[d] != 1) {
            dl = d;
            len = shape[d];
        } else {
            step *= shape[d];
        }
    }
    rows = rcount > 0 ? rcount / len : 0;
    for (o = 0; o < ycount; o++) {
        long rem = o, base = 0, st = 1;
        double acc = kind == 4 ? 1.0 : 0.0;
        float m = kind == 2 ? -INFINITY : INFINITY;
        for (d = rank - 1; d >= 0; d--) {
            if (!reduced[d]) {
                base += (rem % shape[d]) * st;
                rem /= shape[d];
            }
            st *= shape[d];
        }
        for (r = 0; r < rows; r++) {
            const float *xr;
            long off = base;
            rem = r;
            st = 1;
            for (d = rank - 1; d >= 0; d--) {
                if (reduced[d] && d != dl) {
                    off += (rem % shape[d]) * st;
                    rem /= shape[d];
                }
                st *= shape[d];
            }
            xr = x + off;
            if (kind == 2) {
                for (t = 0; t < len; t++) {
                    float v = xr[t * step];
                    if (v > m || v != v)
                        m = v;
                }
            } else if (kind == 3) {
                for (t = 0; t < len; t++) {
                    float v = xr[t * step];
                    if (v < m || v != v)
                        m = v;
                }
            } else if (kind == 4) {
                for (t = 0; t < len; t++)
                    acc *= (double)xr[t * step];
            } else {
                for (t = 0; t < len; t++)
                    acc += (double)xr[t * step];
            }
        }
        if (kind == 2 || kind == 3)
            y[o] = m;
        else if (kind == 1)
            y[o] = (float)(acc / (double)rcount);
        else
            y[o] = (float)acc;
    }
}

/*@ rk_copy */
/* Strided copy of elements of esize bytes (any dtype): for every index
 * (i_0..i_{rank-1}) < shape,
 *   y[yoff + sum i_d*ystride[d]] = x[xoff + sum i_d*xstride[d]].
 * Strides are in elements and may be negative or zero. rank 0 copies one
 * element; a zero-size axis copies nothing. Serves transpose, strided_slice,
 * split, concatenate (one call per input into a window of y), pad (the
 * interior) and broadcasts. The innermost loop runs over the last axis longer
 * than 1 and the axes before it that continue it in both x and y (a channel
 * shuffle copies whole planes, a concatenate operand one run); a run shorter
 * than 16 elements sits in a loop over the other axis of the smallest strides (a strided
 * conv2d_transpose interleaves its phases with runs of 1 or 2). Elements move as
 * whole values of their own type (float, double) or of the unsigned type of
 * their size, which may alias the signed one; any other size byte by byte. */
static void rk_copy(const CopyParams *p, const void *xv, void *yv)
{
    int rank = p->rank, es = p->esize, fl = p->fl;
    const int *shape = p->shape;
    const long *xstride = p->xs, *ystride = p->ys;
    long rows = 1, len = 1, xs = 0, ys = 0, r, t, i, mn = 1, mxs = 0, mys = 0, nearest = 0;
    int d, e, m = -1, last = rank - 1;
    for (d = 0; d < rank; d++)
        if (shape[d] <= 0)
            return;
    while (last >= 0 && shape[last] == 1)
        last--;
    if (last >= 0) {
        len = shape[last];
        xs = xstride[last];
        ys = ystride[last];
        for (d = last - 1; d >= 0; d--) { /* outer axes that continue the run */
            if (shape[d] == 1)
                continue;
            if (xstride[d] != xs * len || ystride[d] != ys * len)
                break;
            len *= shape[d];
        }
        last = d + 1; /* the rows: axes [0, last) */
    }
    /* a short run: the other axis with the smallest strides (the nearest elements in x
     * and y) becomes the innermost loop, in a loop over the run */
    for (d = 0; len < 16 && d < last; d++) {
        long near = (xstride[d] < 0 ? -xstride[d] : xstride[d]) +
                    (ystride[d] < 0 ? -ystride[d] : ystride[d]);
        if (shape[d] > 1 && (m < 0 || near < nearest))
            m = d, nearest = near;
    }
    if (m >= 0) { /* that axis innermost, the run around it */
        mn = len, mxs = xs, mys = ys;
        len = shape[m], xs = xstride[m], ys = ystride[m];
    }
    for (d = 0; d < last; d++)
        rows *= d == m ? 1 : shape[d];
    for (r = 0; r < rows; r++) {
        long rem = r, xo = p->xoff, yo = p->yoff;
        for (d = last - 1; d >= 0; d--) {
            long id;
            if (d == m)
                continue;
            id = rem % shape[d];
            rem /= shape[d];
            xo += id * xstride[d];
            yo += id * ystride[d];
        }
#define RK_COPY_ROW(T)                                                  \
        {                                                               \
            const T *xr = (const T *)xv + xo;                           \
            T *yr = (T *)yv + yo;                                       \
            if (xs == 1 && ys == 1)                                     \
                for (t = 0; t < len; t++)                               \
                    yr[t] = xr[t];                                      \
            else                                                        \
                for (t = 0; t < len; t++)                               \
                    yr[t * ys] = xr[t * xs];                            \
        }
        if (es == 4 && mn == 2 && mys == 1 && ys == 2 && xs == 1) {
            /* two contiguous runs interleaved (the phases of a conv2d_transpose of stride
             * 2): y written in pairs, in order */
            const uint32_t *x0 = (const uint32_t *)xv + xo, *x1 = x0 + mxs;
            uint32_t *yr = (uint32_t *)yv + yo;
            for (t = 0; t < len; t++) {
                yr[2 * t] = x0[t];
                yr[2 * t + 1] = x1[t];
            }
            continue;
        }
        for (i = 0; i < mn; i++, xo += mxs, yo += mys) {
            if (es == 4 && fl)
                RK_COPY_ROW(float)
            else if (es == 4)
                RK_COPY_ROW(uint32_t)
            else if (es == 1)
                RK_COPY_ROW(unsigned char)
            else if (es == 2)
                RK_COPY_ROW(uint16_t)
            else if (es == 8 && fl)
                RK_COPY_ROW(double)
            else if (es == 8)
                RK_COPY_ROW(uint64_t)
            else
                for (t = 0; t < len; t++)
                    for (e = 0; e < es; e++)
                        ((unsigned char *)yv)[(yo + t * ys) * es + e] =
                            ((const unsigned char *)xv)[(xo + t * xs) * es + e];
        }
#undef RK_COPY_ROW
    }
}

/*@ rk_fill */
/* y[0..count) = value. */
static void rk_fill(const FillParams *p, float *y)
{
    long count = p->count;
    float value = p->value;
    long i;
    for (i = 0; i < count; i++)
        y[i] = value;
}

/*@ rk_resize2d */
/* image.resize2d (and nn.upsampling) as TOPI computes it (topi/image/resize.py),
 * x [n][c][hi][wi] -> y [n][c][ho][wo] (NCHW), or [n][h][w][c] when nhwc.
 * Per axis (in input pixels, out output pixels, o the output index), in float:
 *   scale = (float)in / (float)out, and the input coordinate v is
 *     half_pixel          (o + 0.5) * scale - 0.5
 *     align_corners       (float)(in - 1) / (float)(out - 1) * o; 0 when out == 1
 *                         (TVM divides by zero there)
 *     asymmetric          scale * o
 *     pytorch_half_pixel  half_pixel when out > 1, else 0
 *     tf_half_pixel_for_nn (o + 0.5) * scale
 *   nearest_neighbor reads index round(v) (roundf: halves away from zero), floor(v +
 *     1e-5), ceil(v - 1e-5), ceil(v - 0.5) (round_prefer_floor), floor(v + 0.5)
 *     (round_prefer_ceil), or, on the axes of the bits of intdiv (1: y, 2: x),
 *     o / (out / in) (TVM's integer division, which replaces the rounding when the
 *     mode is asymmetric and out is a multiple of in);
 *   linear: i = floor(v), t = v - i; taps i, i+1 weighted 1 - t, t; rows first
 *     combined along x (top, bottom), then along y;
 *   cubic: i = floor(v), t = v - i; taps i-1 .. i+2 weighted by the spline
 *     w0 = a(t^3 - 2t^2 + t), w1 = (a+2)t^3 - (a+3)t^2 + 1,
 *     w2 = -(a+2)t^3 + (2a+3)t^2 - a t, w3 = -a t^3 + a t^2  (a = alpha);
 *     with exclude, taps outside [0, in) get weight 0 and the rest are divided by their
 *     sum; each of the 4 rows is combined along x, then the 4 results along y.
 * Every tap index is clamped to [0, in - 1]. */
static void rk_resize2d(const Resize2dParams *p, const float *x, float *y)
{
    int n = p->n, c = p->c, hi = p->hi, wi = p->wi, ho = p->ho, wo = p->wo;
    int method = p->method, coord = p->coord, rounding = p->rounding, exclude = p->exclude;
    int intdiv = p->intdiv;
    float a = p->alpha;
    /* strides of (c, y, x) in the input and output planes of one image */
    long xc = p->nhwc ? 1 : (long)hi * wi, xr = p->nhwc ? (long)wi * c : wi;
    long xp = p->nhwc ? c : 1;
    long yc = p->nhwc ? 1 : (long)ho * wo, yr = p->nhwc ? (long)wo * c : wo;
    long yp = p->nhwc ? c : 1;
    int b, oy, ox, ch, axis, j, i;
    int yi = 0, xi = 0;
    float yw0 = 0, yw1 = 0, yw2 = 0, yw3 = 0, xw0 = 0, xw1 = 0, xw2 = 0, xw3 = 0;
    for (b = 0; b < n; b++) {
        const float *xb = x + (long)b * c * hi * wi;
        float *yb = y + (long)b * c * ho * wo;
        for (oy = 0; oy < ho; oy++) {
            for (ox = 0; ox < wo; ox++) {
                /* the index and weights along y (axis 0), then x (axis 1) */
                for (axis = 0; axis < 2; axis++) {
                    int in = axis ? wi : hi, out = axis ? wo : ho, o = axis ? ox : oy, k;
                    float scale = (float)in / (float)out, fo = (float)o, v, t;
                    float w0 = 0, w1 = 0, w2 = 0, w3 = 0;
                    if (coord == 0 || (coord == 3 && out > 1))
                        v = (fo + 0.5f) * scale - 0.5f;
                    else if (coord == 1)
                        v = out > 1 ? (float)(in - 1) / (float)(out - 1) * fo : 0.0f;
                    else if (coord == 2)
                        v = scale * fo;
                    else if (coord == 4)
                        v = (fo + 0.5f) * scale;
                    else
                        v = 0.0f;
                    if (method == 0) {
                        k = (intdiv >> axis) & 1 ? o / (out / in)
                          : rounding == 0 ? (int)roundf(v)
                          : rounding == 1 ? (int)floorf(v + 1e-5f)
                          : rounding == 2 ? (int)ceilf(v - 1e-5f)
                          : rounding == 3 ? (int)ceilf(v - 0.5f)
                                          : (int)floorf(v + 0.5f);
                    } else {
                        k = (int)floorf(v);
                        t = v - floorf(v);
                        if (method == 1) {
                            w0 = 1.0f - t;
                            w1 = t;
                        } else {
                            float t2 = t * t, t3 = t * t * t, s;
                            w0 = a * (t3 - 2 * t2 + t);
                            w1 = (a + 2) * t3 - (3 + a) * t2 + 1;
                            w2 = -(a + 2) * t3 + (3 + 2 * a) * t2 - a * t;
                            w3 = -a * t3 + a * t2;
                            if (exclude) {
                                if (k - 1 < 0 || k > in)
                                    w0 = 0;
                                if (k < 0 || k + 1 > in)
                                    w1 = 0;
                                if (k + 1 < 0 || k + 2 > in)
                                    w2 = 0;
                                if (k + 2 < 0 || k + 3 > in)
                                    w3 = 0;
                                s = w0 + w1 + w2 + w3;
                                w0 /= s, w1 /= s, w2 /= s, w3 /= s;
                            }
                            k -= 1; /* the first tap */
                        }
                    }
                    if (axis)
                        xi = k, xw0 = w0, xw1 = w1, xw2 = w2, xw3 = w3;
                    else
                        yi = k, yw0 = w0, yw1 = w1, yw2 = w2, yw3 = w3;
                }
                for (ch = 0; ch < c; ch++) {
                    const float *xq = xb + (long)ch * xc;
                    int taps = method == 0 ? 1 : method == 1 ? 2 : 4;
                    float v = 0.0f;
                    for (j = 0; j < taps; j++) {
                        int r = yi + j;
                        float row = 0.0f, wy = j == 0 ? yw0 : j == 1 ? yw1 : j == 2 ? yw2 : yw3;
                        r = r < 0 ? 0 : r > hi - 1 ? hi - 1 : r;
                        for (i = 0; i < taps; i++) {
                            int col = xi + i;
                            float wx = i == 0 ? xw0 : i == 1 ? xw1 : i == 2 ? xw2 : xw3;
                            float px;
                            col = col < 0 ? 0 : col > wi - 1 ? wi - 1 : col;
                            px = xq[(long)r * xr + (long)col * xp];
                            if (method == 0)
                                row = px;
                            else
                                row += px * wx;
                        }
                        if (method == 0)
                            v = row;
                        else
                            v += row * wy;
                    }
                    yb[(long)ch * yc + (long)oy * yr + (long)ox * yp] = v;
                }
            }
        }
    }
}

/*@ rk_layer_norm uses rk_lanes */
/* Layer normalisation along a middle axis: element (o, i, j) is
 * x[(o*len + i)*inner + j], i < len the normalised axis. As TVM computes it
 * (SimplifyInference's mean, variance, sqrt, divide, then gamma and beta), in
 * float: mean = (sum of the row) / len, var = (sum of (x - mean)^2) / len,
 * y = (x - mean) / sqrtf(var + eps), then y * gamma[i] when scale, y + beta[i]
 * when center (gamma, beta may be NULL otherwise). The sums in rk_lanes's
 * lanes; x - mean is stored in y for the second. One row at a time, while it is
 * in cache. */
static void rk_layer_norm(const LayerNormParams *p, const float *x, const float *gamma,
                          const float *beta, float *y)
{
    int outer = p->outer, len = p->len, inner = p->inner;
    int scale = p->scale && gamma, center = p->center && beta;
    float eps = p->eps;
    int o, i, j;
    if (len <= 0)
        return;
    for (o = 0; o < outer; o++) {
        for (j = 0; j < inner; j++) {
            const float *xp = x + (long)o * len * inner + j;
            float *yp = y + (long)o * len * inner + j;
            float mean = rk_lanes(xp, inner, len, 0) / (float)len, den;
            for (i = 0; i < len; i++)
                yp[(long)i * inner] = xp[(long)i * inner] - mean;
            den = sqrtf(rk_lanes(yp, inner, len, 1) / (float)len + eps);
            for (i = 0; i < len; i++) {
                float v = yp[(long)i * inner] / den;
                if (scale)
                    v = v * gamma[i];
                if (center)
                    v = v + beta[i];
                yp[(long)i * inner] = v;
            }
        }
    }
}
