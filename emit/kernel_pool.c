/*
 * kernel_pool.c: the tuned float pooling kernel (x86 targets), one C function per call
 * site with every size a literal: "static void kIDX_pool2d(const float *x, float *y)".
 * For each plane and output row, the output row is first set to the start value (max:
 * -INFINITY, average: 0), then each input row the window reads adds its kw taps: over the
 * interior columns (every tap inside the input) in one loop with the taps unrolled, which
 * compilers vectorise (stride-2 loads included); over the border columns with each tap
 * kept to the columns where it is inside. Average rows are then divided by the tap count
 * of each window (tables of the counts per row and column). Every average takes its taps
 * in (ky, kx) order, as rk_pool2d does, so sums are the same bits. A max pool's rows whose
 * every tap row is inside the input go in bands instead (put_band: the maxima over the
 * windows' rows, then over their columns, each one loop along the band); a max keeps NaN.
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

/* Tap kx of output column ox in row `row`: "xr[ox * 2 - 1]". */
static void tap_text(char *buf, size_t len, const Window *w, int kx, const char *row)
{
    int c = kx * w->dw - w->pl;
    snprintf(buf, len, "%s[ox * %d %c %d]", row, w->sw, c < 0 ? '-' : '+', c < 0 ? -c : c);
}

/* "y = op(y, v)" of the pool for tap value v (a C expression) into yr[ox]. */
static void put_tap(Buf *b, const char *ind, bool is_max, const char *v)
{
    if (is_max)
        buf_printf(b, "%s{ float v = %s, m = yr[ox]; yr[ox] = ((v > m) | (v != v)) ? v : m; }\n", ind, v);
    else
        buf_printf(b, "%syr[ox] += %s;\n", ind, v);
}

/* A max pool's output rows whose every tap row is inside the input go in bands of rows
 * whose vertical maxima fit this many floats (an array on the stack of x86 code). */
#define POOL_BAND 4096

/* The geometry of a pool kernel: the interior columns [a, z) (every kx tap inside the
 * input) and the columns [lo[kx], hi[kx]) where tap kx is. */
typedef struct {
    const Window *w;
    int hi, wi, ho, wo, a, z;
    int *lo, *hi_;
    bool mx;
} Pool;

/* Output rows [oy0, oy1) of a plane, a row at a time: the start value, then each input row's
 * taps over the interior columns and over the border ones (each tap kept to its columns);
 * an average's rows divided by their tap counts. */
static void put_rows(Buf *b, const Pool *p, int oy0, int oy1)
{
    const Window *w = p->w;
    int a = p->a, z = p->z;
    if (oy0 >= oy1)
        return;
    buf_printf(b, "        for (oy = %d; oy < %d; oy++) {\n", oy0, oy1);
    buf_printf(b, "            int iy0 = oy * %d - %d;\n", w->sh, w->pt);
    /* taps ky in [ky0, ky1) are inside the input */
    buf_printf(b, "            int ky0 = iy0 >= 0 ? 0 : (-iy0 + %d) / %d;\n", w->dh - 1, w->dh);
    buf_printf(b, "            int ky1 = %d - iy0 <= 0 ? 0 : (%d - iy0 + %d) / %d;\n", p->hi, p->hi,
               w->dh - 1, w->dh);
    buf_printf(b, "            float *yr = yp + (long)oy * %d;\n", p->wo);
    buf_printf(b, "            if (ky1 > %d)\n                ky1 = %d;\n", w->kh, w->kh);
    buf_printf(b, "            for (ox = 0; ox < %d; ox++)\n                yr[ox] = %s;\n", p->wo,
               p->mx ? "-INFINITY" : "0.0f");
    buf_puts(b, "            for (ky = ky0; ky < ky1; ky++) {\n");
    buf_printf(b, "                const float *xr = xp + (long)(iy0 + ky * %d) * %d;\n", w->dh, p->wi);
    char v[96];
    if (a < z) {
        buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", a, z);
        for (int kx = 0; kx < w->kw; kx++) {
            tap_text(v, sizeof v, w, kx, "xr");
            put_tap(b, "                    ", p->mx, v);
        }
        buf_puts(b, "                }\n");
    }
    /* the border columns, [0, a) and [z, wo) */
    for (int side = 0; side < 2; side++) {
        int s0 = side ? z : 0, s1 = side ? p->wo : a;
        if (s0 >= s1)
            continue;
        buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", s0, s1);
        for (int kx = 0; kx < w->kw; kx++) {
            if (p->lo[kx] >= s1 || p->hi_[kx] <= s0 || p->lo[kx] >= p->hi_[kx])
                continue; /* never inside on this side */
            buf_printf(b, "                    if (ox >= %d && ox < %d)\n", p->lo[kx], p->hi_[kx]);
            tap_text(v, sizeof v, w, kx, "xr");
            put_tap(b, "                        ", p->mx, v);
        }
        buf_puts(b, "                }\n");
    }
    buf_puts(b, "            }\n");
    if (!p->mx)
        buf_printf(b, "            for (ox = 0; ox < %d; ox++)\n"
                      "                yr[ox] = cy[oy] * cx[ox] > 0 ? yr[ox] / (float)(cy[oy] * cx[ox]) : 0.0f;\n",
                   p->wo);
    buf_puts(b, "        }\n");
}

/* "m = max(m, u)" keeping NaN, for the value expression u. */
static void put_max(Buf *b, const char *ind, const char *u)
{
    buf_printf(b, "%s{ const float u = %s; m = ((u > m) | (u != u)) ? u : m; }\n", ind, u);
}

/* A max pool's output rows [oy0, oy1), every tap row inside the input, in bands of nb
 * rows: the maxima over each window's rows for every input row the band starts a window
 * at, one loop along the band's rows flattened (long and contiguous: compilers vectorise
 * it, where rows of a few columns a row at a time stayed mostly scalar); the border columns
 * from those; then the maxima over each window's columns in place, also one loop along
 * the band, and the interior outputs picked from them. */
static void put_band(Buf *b, const Pool *p, int oy0, int oy1, int nb)
{
    const Window *w = p->w;
    int wi = p->wi;
    buf_printf(b, "        for (oy = %d; oy < %d; oy += %d) {\n", oy0, oy1, nb);
    buf_printf(b, "            const int ne = %d - oy < %d ? %d - oy : %d, len = ((ne - 1) * %d + 1) * %d;\n",
               oy1, nb, oy1, nb, w->sh, wi);
    buf_printf(b, "            const float *xr = xp + (long)(oy * %d - %d) * %d;\n", w->sh, w->pt, wi);
    buf_puts(b, "            for (j = 0; j < len; j++) {\n                float m = xr[j];\n");
    for (int ky = 1; ky < w->kh; ky++) {
        char u[48];
        snprintf(u, sizeof u, "xr[j + %d]", ky * w->dh * wi);
        put_max(b, "                ", u);
    }
    buf_puts(b, "                v[j] = m;\n            }\n");
    if (p->a > 0 || p->z < p->wo) { /* border columns */
        buf_puts(b, "            for (e = 0; e < ne; e++) {\n");
        buf_printf(b, "                const float *vr = v + (long)e * %d;\n", w->sh * wi);
        buf_printf(b, "                float *yr = yp + (long)(oy + e) * %d;\n", p->wo);
        for (int side = 0; side < 2; side++) {
            int s0 = side ? p->z : 0, s1 = side ? p->wo : p->a;
            if (s0 >= s1)
                continue;
            buf_printf(b, "                for (ox = %d; ox < %d; ox++) {\n", s0, s1);
            buf_puts(b, "                    float m = -INFINITY;\n");
            for (int kx = 0; kx < w->kw; kx++) {
                if (p->lo[kx] >= s1 || p->hi_[kx] <= s0 || p->lo[kx] >= p->hi_[kx])
                    continue;
                char u[64];
                tap_text(u, sizeof u, w, kx, "vr");
                buf_printf(b, "                    if (ox >= %d && ox < %d)\n", p->lo[kx], p->hi_[kx]);
                put_max(b, "                        ", u);
            }
            buf_puts(b, "                    yr[ox] = m;\n                }\n");
        }
        buf_puts(b, "            }\n");
    }
    if (p->a < p->z) {
        if (w->kw > 1) {
            buf_printf(b, "            for (j = 0; j < len - %d; j++) {\n                float m = v[j];\n",
                       (w->kw - 1) * w->dw);
            for (int kx = 1; kx < w->kw; kx++) {
                char u[48];
                snprintf(u, sizeof u, "v[j + %d]", kx * w->dw);
                put_max(b, "                ", u);
            }
            buf_puts(b, "                v[j] = m;\n            }\n");
        }
        buf_puts(b, "            for (e = 0; e < ne; e++)\n");
        buf_printf(b, "                for (ox = %d; ox < %d; ox++)\n", p->a, p->z);
        buf_printf(b, "                    yp[(long)(oy + e) * %d + ox] = v[(long)e * %d + ox * %d - %d];\n",
                   p->wo, w->sh * wi, w->sw, w->pl);
    }
    buf_puts(b, "        }\n");
}

void emit_pool2d_kernel(const Graph *g, int idx, Buf *b)
{
    const Node *n = &g->nodes[idx];
    const Window *w = &n->a.conv;
    const int64_t *xd = g->values[n->in[0]].shape.dim, *yd = g->values[n->out].shape.dim;
    Pool p = { w, (int)xd[2], (int)xd[3], (int)yd[2], (int)yd[3], 0, (int)yd[3], NULL, NULL,
               n->a.is_max };
    int hi = p.hi, wi = p.wi, ho = p.ho, wo = p.wo;
    long planes = (long)xd[0] * xd[1];
    bool mx = p.mx;
    for (int kx = 0; kx < w->kw; kx++) {
        int l, h;
        tap_columns(w, wi, wo, kx, &l, &h);
        arrput(p.lo, l);
        arrput(p.hi_, h);
        p.a = l > p.a ? l : p.a;
        p.z = h < p.z ? h : p.z;
    }
    if (p.a >= p.z)
        p.a = p.z = 0;
    /* output rows [oy0, oy1): every tap row inside the input */
    int oy0 = (w->pt + w->sh - 1) / w->sh;
    int top = hi - 1 - (w->kh - 1) * w->dh + w->pt;
    int oy1 = top < 0 ? 0 : top / w->sh + 1;
    oy1 = oy1 > ho ? ho : oy1;
    bool band = mx && oy0 < oy1 && wi <= POOL_BAND;
    int nb = band ? (POOL_BAND / wi - 1) / w->sh + 1 : 0;
    nb = nb > oy1 - oy0 ? oy1 - oy0 : nb;
    buf_printf(b, "/* k%d: %s pooling, %ld planes of %dx%d -> %dx%d, window %dx%d, stride %d,%d,"
                  " dilation %d,%d, padding %d,%d; interior columns [%d, %d)", idx,
               mx ? "max" : "average", planes, hi, wi, ho, wo, w->kh, w->kw, w->sh, w->sw, w->dh,
               w->dw, w->pt, w->pl, p.a, p.z);
    if (band)
        buf_printf(b, "; rows [%d, %d) in bands of %d", oy0, oy1, nb);
    buf_puts(b, " */\n");
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
    /* ky: the rows taken a row at a time (put_rows) */
    buf_puts(b, !band || oy0 > 0 || oy1 < ho ? "    long pl;\n    int oy, ox, ky;\n"
                                              : "    long pl;\n    int oy, ox;\n");
    if (band)
        buf_printf(b, "    int j, e;\n    float v[%d];\n", ((nb - 1) * w->sh + 1) * wi);
    buf_printf(b, "    for (pl = 0; pl < %ldL; pl++) {\n", planes);
    buf_printf(b, "        const float *xp = x + pl * %ldL;\n", (long)hi * wi);
    buf_printf(b, "        float *yp = y + pl * %ldL;\n", (long)ho * wo);
    if (band) {
        put_rows(b, &p, 0, oy0);
        put_band(b, &p, oy0, oy1, nb);
        put_rows(b, &p, oy1, ho);
    } else {
        put_rows(b, &p, 0, ho);
    }
    buf_puts(b, "    }\n}\n\n");
    arrfree(p.lo);
    arrfree(p.hi_);
}
