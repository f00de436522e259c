/*
 * kernel_pool.c: the tuned float pooling kernel (x86 targets), one C function per call
 * site with every size a literal: "static void kIDX_pool2d(const float *x, float *y)".
 * For each plane and output row, the output row is first set to the start value (max:
 * -INFINITY, average: 0), then each input row the window reads adds its kw taps: over the
 * interior columns (every tap inside the input) in one loop with the taps unrolled, which
 * compilers vectorise (stride-2 loads included); over the border columns with each tap
 * kept to the columns where it is inside. Average rows are then divided by the tap count
 * of each window (tables of the counts per row and column). Every output takes its taps
 * in (ky, kx) order, as rk_pool2d does, so sums are the same bits; a max keeps NaN.
 */
#include "emit.h"

#include <stb_ds.h>

/* The columns [*lo, *hi) of wo whose tap kx lies inside the input. */
static void tap_columns(const Window *w, int wi, int wo, int kx, int *lo, int *hi)
{
    int off = kx * w->dw - w->pl; /* input column of output 0's tap kx */
    int a = off >= 0 ? 0 : (-off + w->sw - 1) / w->sw;
    int b = wi - off <= 0 ? 0 : (wi - off + w->sw - 1) / w->sw;
    *lo = a < wo ? a : wo;
    *hi = b < wo ? b : wo;
    if (*hi < *lo)
        *hi = *lo;
}

/* Taps of a window starting at i0 (input coordinates, dilation d) inside [0, in) and,
 * padding counted, inside [-pad_lo, in + pad_hi): the divisor of an average. */
static int64_t taps_inside(int i0, int k, int d, int in, int lo, int hi)
{
    int64_t n = 0;
    for (int t = 0; t < k; t++) {
        int i = i0 + t * d;
        n += i >= -lo && i < in + hi;
    }
    return n;
}

/* Tap kx of output column ox in input row xr: "xr[ox * 2 - 1]". */
static void tap_text(char *buf, size_t len, const Window *w, int kx)
{
    int c = kx * w->dw - w->pl;
    snprintf(buf, len, "xr[ox * %d %c %d]", w->sw, c < 0 ? '-' : '+', c < 0 ? -c : c);
}

/* "y = op(y, v)" of the pool for tap value v (a C expression) into yr[ox]. */
static void put_tap(Buf *b, const char *ind, bool is_max, const char *v)
{
    if (is_max)
        buf_printf(b, "%s{ float v = %s, m = yr[ox]; yr[ox] = ((v > m) | (v != v)) ? v : m; }\n", ind, v);
    else
        buf_printf(b, "%syr[ox] += %s;\n", ind, v);
}

void emit_pool2d_kernel(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Window *w = &n->a.conv;
    const int64_t *xd = g->values[n->in[0]].shape.dim, *yd = g->values[n->out].shape.dim;
    int hi = (int)xd[2], wi = (int)xd[3], ho = (int)yd[2], wo = (int)yd[3];
    long planes = (long)xd[0] * xd[1];
    bool mx = n->a.is_max;
    int *lo = NULL, *hi_ = NULL, a = 0, z = wo; /* interior: [a, z) */
    for (int kx = 0; kx < w->kw; kx++) {
        int l, h;
        tap_columns(w, wi, wo, kx, &l, &h);
        arrput(lo, l);
        arrput(hi_, h);
        a = l > a ? l : a;
        z = h < z ? h : z;
    }
    if (a >= z)
        a = z = 0;
    buf_printf(b, "/* k%d: %s pooling, %ld planes of %dx%d -> %dx%d, window %dx%d, stride %d,%d,"
                  " dilation %d,%d, padding %d,%d; interior columns [%d, %d) */\n",
               idx, mx ? "max" : "average", planes, hi, wi, ho, wo, w->kh, w->kw, w->sh, w->sw,
               w->dh, w->dw, w->pt, w->pl, a, z);
    buf_printf(b, "static void k%d_pool2d(const float *restrict x, float *restrict y)\n{\n", idx);
    if (!mx) { /* the divisor of window (oy, ox) is cy[oy] * cx[ox] */
        int lp = n->a.count_include_pad;
        int64_t *cy = NULL, *cx = NULL;
        for (int oy = 0; oy < ho; oy++)
            arrput(cy, taps_inside(oy * w->sh - w->pt, w->kh, w->dh, hi, lp ? w->pt : 0, lp ? w->pb : 0));
        for (int ox = 0; ox < wo; ox++)
            arrput(cx, taps_inside(ox * w->sw - w->pl, w->kw, w->dw, wi, lp ? w->pl : 0, lp ? w->pr : 0));
        emit_int_array(b, "    ", "int", "cy", cy, ho);
        emit_int_array(b, "    ", "int", "cx", cx, wo);
        arrfree(cy);
        arrfree(cx);
    }
    buf_puts(b, "    long pl;\n    int oy, ox, ky;\n");
    buf_printf(b, "    for (pl = 0; pl < %ldL; pl++) {\n", planes);
    buf_printf(b, "        const float *xp = x + pl * %ldL;\n", (long)hi * wi);
    buf_printf(b, "        float *yp = y + pl * %ldL;\n", (long)ho * wo);
    buf_printf(b, "        for (oy = 0; oy < %d; oy++) {\n", ho);
    buf_printf(b, "            int iy0 = oy * %d - %d;\n", w->sh, w->pt);
    /* taps ky in [ky0, ky1) are inside the input */
    buf_printf(b, "            int ky0 = iy0 >= 0 ? 0 : (-iy0 + %d) / %d;\n", w->dh - 1, w->dh);
    buf_printf(b, "            int ky1 = %d - iy0 <= 0 ? 0 : (%d - iy0 + %d) / %d;\n", hi, hi, w->dh - 1, w->dh);
    buf_puts(b, "            float *yr = yp + (long)oy * ");
    buf_printf(b, "%d;\n", wo);
    buf_printf(b, "            if (ky1 > %d)\n                ky1 = %d;\n", w->kh, w->kh);
    buf_printf(b, "            for (ox = 0; ox < %d; ox++)\n                yr[ox] = %s;\n", wo,
               mx ? "-INFINITY" : "0.0f");
    buf_puts(b, "            for (ky = ky0; ky < ky1; ky++) {\n");
    buf_printf(b, "                const float *xr = xp + (long)(iy0 + ky * %d) * %d;\n", w->dh, wi);
    char v[96];
    if (a < z) {
        buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", a, z);
        for (int kx = 0; kx < w->kw; kx++) {
            tap_text(v, sizeof v, w, kx);
            put_tap(b, "                    ", mx, v);
        }
        buf_puts(b, "                }\n");
    }
    /* the border columns, [0, a) and [z, wo) */
    for (int side = 0; side < 2; side++) {
        int s0 = side ? z : 0, s1 = side ? wo : a;
        if (s0 >= s1)
            continue;
        buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", s0, s1);
        for (int kx = 0; kx < w->kw; kx++) {
            if (lo[kx] >= s1 || hi_[kx] <= s0 || lo[kx] >= hi_[kx])
                continue; /* never inside on this side */
            buf_printf(b, "                    if (ox >= %d && ox < %d)\n", lo[kx], hi_[kx]);
            tap_text(v, sizeof v, w, kx);
            put_tap(b, "                        ", mx, v);
        }
        buf_puts(b, "                }\n");
    }
    buf_puts(b, "            }\n");
    if (!mx)
        buf_printf(b, "            for (ox = 0; ox < %d; ox++)\n"
                      "                yr[ox] = cy[oy] * cx[ox] > 0 ? yr[ox] / (float)(cy[oy] * cx[ox]) : 0.0f;\n",
                   wo);
    buf_puts(b, "        }\n    }\n}\n\n");
    arrfree(lo);
    arrfree(hi_);
}
