/*
 * baselines.c: the libraries relayc's kernels are measured against, one function per
 * (library, operation), each split into a setup (untimed: descriptors, weight reorders,
 * buffers) and a run (timed).
 *   oneDNN    convolution and inner-product primitives (C API, dnnl.h), timed on the
 *             layouts the primitive prefers (src/dst reorders done once, untimed) and,
 *             separately, with the NCHW <-> blocked reorders of src and dst inside the
 *             timed call, as a user holding NCHW tensors would run it; int8: the same
 *             primitives with s8 src, s8 weights, s32 bias and s8 dst, per-channel
 *             output scales (oneDNN 2.x: dst = scale * (acc + bias), rounded to nearest
 *             even), on the preferred layouts only;
 *   OpenBLAS  dense as cblas_sgemv (batch 1) or cblas_sgemm, conv as im2col + sgemm
 *             (per group; a 1x1 stride-1 unpadded conv skips im2col).
 * Threads: the caller sets OPENBLAS_NUM_THREADS=1 and OMP_NUM_THREADS=1 (and pins the
 * process); dnnl uses the library's OpenMP runtime, limited by OMP_NUM_THREADS.
 */
#include "bench.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHK(call) do { dnnl_status_t s_ = (call); if (s_ != dnnl_success) { \
    fprintf(stderr, "bench: %s failed: %d\n", #call, (int)s_); exit(3); } } while (0)

static dnnl_engine_t engine;
static dnnl_stream_t stream;

static void dnnl_init(void)
{
    if (!engine) {
        CHK(dnnl_engine_create(&engine, dnnl_cpu, 0));
        CHK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    }
}

static void *xalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64)) {
        fprintf(stderr, "bench: out of memory\n");
        exit(3);
    }
    memset(p, 0, bytes ? bytes : 64);
    return p;
}

/* ---- oneDNN ---- */

struct DnnlOp {
    dnnl_primitive_t prim;
    dnnl_primitive_t reorder_src, reorder_dst;  /* user NCHW <-> preferred; NULL if same */
    dnnl_memory_t user_src, user_dst, src, wei, dst, bias; /* bias: NULL for none */
    int nchw_io;                                /* run includes the reorders */
    char impl[64];                              /* the implementation oneDNN picked */
};

static dnnl_primitive_t make_reorder(dnnl_memory_t from, dnnl_memory_t to)
{
    const dnnl_memory_desc_t *a, *b;
    CHK(dnnl_memory_get_memory_desc(from, &a));
    CHK(dnnl_memory_get_memory_desc(to, &b));
    if (dnnl_memory_desc_equal(a, b))
        return NULL;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t r;
    CHK(dnnl_reorder_primitive_desc_create(&pd, a, engine, b, engine, NULL));
    CHK(dnnl_primitive_create(&r, pd));
    dnnl_primitive_desc_destroy(pd);
    return r;
}

static void run_reorder(dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to)
{
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };
    CHK(dnnl_primitive_execute(r, stream, 2, args));
}

/* Memory for md, or the user's buffer when md equals the user's plain layout. */
static dnnl_memory_t mem_like(const dnnl_memory_desc_t *md, dnnl_memory_t user)
{
    const dnnl_memory_desc_t *u;
    CHK(dnnl_memory_get_memory_desc(user, &u));
    if (dnnl_memory_desc_equal(md, u))
        return user;
    dnnl_memory_t m;
    CHK(dnnl_memory_create(&m, md, engine, DNNL_MEMORY_ALLOCATE));
    return m;
}

static DnnlOp *finish(dnnl_primitive_desc_t pd, const void *w, const dnnl_memory_desc_t *user_w_md,
                      void *x, void *y, const dnnl_memory_desc_t *user_x_md,
                      const dnnl_memory_desc_t *user_y_md, int nchw_io, const int32_t *bias)
{
    DnnlOp *op = calloc(1, sizeof *op);
    CHK(dnnl_primitive_create(&op->prim, pd));
    const char *impl = "";
    CHK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    snprintf(op->impl, sizeof op->impl, "%s", impl);
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *wmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *dmd = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    CHK(dnnl_memory_create(&op->user_src, user_x_md, engine, x));
    CHK(dnnl_memory_create(&op->user_dst, user_y_md, engine, y));
    dnnl_memory_t user_w;
    CHK(dnnl_memory_create(&user_w, user_w_md, engine, (void *)w));
    op->src = mem_like(smd, op->user_src);
    op->dst = mem_like(dmd, op->user_dst);
    op->wei = mem_like(wmd, user_w);
    dnnl_primitive_t rw = make_reorder(user_w, op->wei);
    if (rw) {
        run_reorder(rw, user_w, op->wei);
        dnnl_primitive_destroy(rw);
    }
    if (bias) {
        const dnnl_memory_desc_t *bmd = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 1);
        CHK(dnnl_memory_create(&op->bias, bmd, engine, (void *)bias));
    }
    op->reorder_src = op->src != op->user_src ? make_reorder(op->user_src, op->src) : NULL;
    op->reorder_dst = op->dst != op->user_dst ? make_reorder(op->dst, op->user_dst) : NULL;
    /* the blocked input holds the data once, for the runs that time the primitive alone */
    if (op->reorder_src)
        run_reorder(op->reorder_src, op->user_src, op->src);
    dnnl_stream_wait(stream);
    op->nchw_io = nchw_io;
    return op;
}

DnnlOp *dnnl_conv_setup(const ConvShape *s, const float *w, float *x, float *y, int nchw_io)
{
    dnnl_init();
    dnnl_memory_desc_t src_any, wei_any, dst_any, src_user, wei_user, dst_user;
    dnnl_dims_t sd = { s->n, s->ci, s->hi, s->wi }, dd = { s->n, s->co, s->ho, s->wo };
    int g = s->groups;
    dnnl_dims_t wd5 = { g, s->co / g, s->ci / g, s->kh, s->kw }, wd4 = { s->co, s->ci, s->kh, s->kw };
    CHK(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_f32, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_f32, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&src_user, 4, sd, dnnl_f32, dnnl_nchw));
    CHK(dnnl_memory_desc_init_by_tag(&dst_user, 4, dd, dnnl_f32, dnnl_nchw));
    if (g > 1) {
        CHK(dnnl_memory_desc_init_by_tag(&wei_any, 5, wd5, dnnl_f32, dnnl_format_tag_any));
        CHK(dnnl_memory_desc_init_by_tag(&wei_user, 5, wd5, dnnl_f32, dnnl_goihw));
    } else {
        CHK(dnnl_memory_desc_init_by_tag(&wei_any, 4, wd4, dnnl_f32, dnnl_format_tag_any));
        CHK(dnnl_memory_desc_init_by_tag(&wei_user, 4, wd4, dnnl_f32, dnnl_oihw));
    }
    dnnl_dims_t strides = { s->sh, s->sw }, dil = { s->dh - 1, s->dw - 1 };
    dnnl_dims_t pl = { s->pt, s->pl }, pr = { s->pb, s->pr };
    dnnl_convolution_desc_t cd;
    CHK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
        dnnl_convolution_direct, &src_any, &wei_any, NULL, &dst_any, strides, dil, pl, pr));
    dnnl_primitive_desc_t pd;
    CHK(dnnl_primitive_desc_create(&pd, &cd, NULL, engine, NULL));
    DnnlOp *op = finish(pd, w, &wei_user, x, y, &src_user, &dst_user, nchw_io, NULL);
    dnnl_primitive_desc_destroy(pd);
    return op;
}

DnnlOp *dnnl_dense_setup(int m, int n, int k, const float *w, float *x, float *y)
{
    dnnl_init();
    dnnl_memory_desc_t src_any, wei_any, dst_any, src_user, wei_user, dst_user;
    dnnl_dims_t sd = { m, k }, wd = { n, k }, dd = { m, n };
    CHK(dnnl_memory_desc_init_by_tag(&src_any, 2, sd, dnnl_f32, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&wei_any, 2, wd, dnnl_f32, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&dst_any, 2, dd, dnnl_f32, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&src_user, 2, sd, dnnl_f32, dnnl_nc));
    CHK(dnnl_memory_desc_init_by_tag(&wei_user, 2, wd, dnnl_f32, dnnl_oi));
    CHK(dnnl_memory_desc_init_by_tag(&dst_user, 2, dd, dnnl_f32, dnnl_nc));
    dnnl_inner_product_desc_t ipd;
    CHK(dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, &src_any, &wei_any,
                                             NULL, &dst_any));
    dnnl_primitive_desc_t pd;
    CHK(dnnl_primitive_desc_create(&pd, &ipd, NULL, engine, NULL));
    DnnlOp *op = finish(pd, w, &wei_user, x, y, &src_user, &dst_user, 1, NULL);
    dnnl_primitive_desc_destroy(pd);
    return op;
}

/* The int8 attributes: per-channel output scales (channel dimension 1), and the src and
 * dst zero points (any may be 0: not set). */
static dnnl_primitive_attr_t qattr(long channels, const float *scales, int xzp, int yzp)
{
    dnnl_primitive_attr_t a;
    CHK(dnnl_primitive_attr_create(&a));
    CHK(dnnl_primitive_attr_set_output_scales(a, channels, 1 << 1, scales));
    int32_t zx = xzp, zy = yzp;
    if (zx)
        CHK(dnnl_primitive_attr_set_zero_points(a, DNNL_ARG_SRC, 1, 0, &zx));
    if (zy)
        CHK(dnnl_primitive_attr_set_zero_points(a, DNNL_ARG_DST, 1, 0, &zy));
    return a;
}

DnnlOp *dnnl_qconv_setup(const ConvShape *s, const int8_t *w, const int32_t *bias,
                         const float *scales, int xzp, int yzp, int8_t *x, int8_t *y)
{
    dnnl_init();
    dnnl_memory_desc_t src_any, wei_any, dst_any, bias_md, src_user, wei_user, dst_user;
    dnnl_dims_t sd = { s->n, s->ci, s->hi, s->wi }, dd = { s->n, s->co, s->ho, s->wo };
    dnnl_dims_t bd = { s->co };
    int g = s->groups;
    dnnl_dims_t wd5 = { g, s->co / g, s->ci / g, s->kh, s->kw }, wd4 = { s->co, s->ci, s->kh, s->kw };
    CHK(dnnl_memory_desc_init_by_tag(&src_any, 4, sd, dnnl_s8, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&dst_any, 4, dd, dnnl_s8, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&src_user, 4, sd, dnnl_s8, dnnl_nchw));
    CHK(dnnl_memory_desc_init_by_tag(&dst_user, 4, dd, dnnl_s8, dnnl_nchw));
    CHK(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_s32, dnnl_x));
    if (g > 1) {
        CHK(dnnl_memory_desc_init_by_tag(&wei_any, 5, wd5, dnnl_s8, dnnl_format_tag_any));
        CHK(dnnl_memory_desc_init_by_tag(&wei_user, 5, wd5, dnnl_s8, dnnl_goihw));
    } else {
        CHK(dnnl_memory_desc_init_by_tag(&wei_any, 4, wd4, dnnl_s8, dnnl_format_tag_any));
        CHK(dnnl_memory_desc_init_by_tag(&wei_user, 4, wd4, dnnl_s8, dnnl_oihw));
    }
    dnnl_dims_t strides = { s->sh, s->sw }, dil = { s->dh - 1, s->dw - 1 };
    dnnl_dims_t pl = { s->pt, s->pl }, pr = { s->pb, s->pr };
    dnnl_convolution_desc_t cd;
    CHK(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
        dnnl_convolution_direct, &src_any, &wei_any, &bias_md, &dst_any, strides, dil, pl, pr));
    /* the src zero point as an attribute: padding is the zero point (TVM's semantics) */
    dnnl_primitive_attr_t attr = qattr(s->co, scales, xzp, yzp);
    dnnl_primitive_desc_t pd;
    CHK(dnnl_primitive_desc_create(&pd, &cd, attr, engine, NULL));
    DnnlOp *op = finish(pd, w, &wei_user, x, y, &src_user, &dst_user, 0, bias);
    dnnl_primitive_desc_destroy(pd);
    dnnl_primitive_attr_destroy(attr);
    return op;
}

/* oneDNN 2.6's inner product takes no zero points: the src zero point is folded into the
 * bias (bias[c] - xzp * sum_t w[c][t], exact: a dense layer has no padding; computed once,
 * at setup, as a user with constant weights would), the dst zero point is an eltwise
 * linear post-op (+ yzp before the rounding to s8). */
DnnlOp *dnnl_qdense_setup(int m, int n, int k, const int8_t *w, const int32_t *bias,
                          const float *scales, int xzp, int yzp, int8_t *x, int8_t *y)
{
    dnnl_init();
    dnnl_memory_desc_t src_any, wei_any, dst_any, bias_md, src_user, wei_user, dst_user;
    dnnl_dims_t sd = { m, k }, wd = { n, k }, dd = { m, n }, bd = { n };
    CHK(dnnl_memory_desc_init_by_tag(&src_any, 2, sd, dnnl_s8, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&wei_any, 2, wd, dnnl_s8, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&dst_any, 2, dd, dnnl_s8, dnnl_format_tag_any));
    CHK(dnnl_memory_desc_init_by_tag(&bias_md, 1, bd, dnnl_s32, dnnl_x));
    CHK(dnnl_memory_desc_init_by_tag(&src_user, 2, sd, dnnl_s8, dnnl_nc));
    CHK(dnnl_memory_desc_init_by_tag(&wei_user, 2, wd, dnnl_s8, dnnl_oi));
    CHK(dnnl_memory_desc_init_by_tag(&dst_user, 2, dd, dnnl_s8, dnnl_nc));
    dnnl_inner_product_desc_t ipd;
    CHK(dnnl_inner_product_forward_desc_init(&ipd, dnnl_forward_inference, &src_any, &wei_any,
                                             &bias_md, &dst_any));
    int32_t *fb = xalloc((size_t)n * sizeof(int32_t)); /* lives as long as the primitive */
    for (int c = 0; c < n; c++) {
        int32_t sum = 0;
        for (int t = 0; t < k; t++)
            sum += w[(long)c * k + t];
        fb[c] = bias[c] - xzp * sum;
    }
    dnnl_primitive_attr_t attr = qattr(n, scales, 0, 0);
    dnnl_post_ops_t po;
    CHK(dnnl_post_ops_create(&po));
    CHK(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, 1.0f, (float)yzp));
    CHK(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_primitive_desc_t pd;
    CHK(dnnl_primitive_desc_create(&pd, &ipd, attr, engine, NULL));
    DnnlOp *op = finish(pd, w, &wei_user, x, y, &src_user, &dst_user, 0, fb);
    dnnl_primitive_desc_destroy(pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return op;
}

void dnnl_op_run(DnnlOp *op)
{
    if (op->nchw_io && op->reorder_src)
        run_reorder(op->reorder_src, op->user_src, op->src);
    dnnl_exec_arg_t args[4] = { { DNNL_ARG_SRC, op->src }, { DNNL_ARG_WEIGHTS, op->wei },
                                { DNNL_ARG_DST, op->dst }, { DNNL_ARG_BIAS, op->bias } };
    CHK(dnnl_primitive_execute(op->prim, stream, op->bias ? 4 : 3, args));
    if (op->nchw_io && op->reorder_dst)
        run_reorder(op->reorder_dst, op->dst, op->user_dst);
    CHK(dnnl_stream_wait(stream));
}

const char *dnnl_op_impl(const DnnlOp *op)
{
    return op->impl;
}

/* For checking: the output in the user's NCHW buffer. */
void dnnl_op_fetch(DnnlOp *op)
{
    if (op->reorder_dst)
        run_reorder(op->reorder_dst, op->dst, op->user_dst);
    CHK(dnnl_stream_wait(stream));
}

/* ---- OpenBLAS ---- */

struct BlasConv {
    ConvShape s;
    const float *w;
    float *col;     /* [ci/g * kh * kw][ho * wo] */
};

BlasConv *blas_conv_setup(const ConvShape *s, const float *w)
{
    BlasConv *c = calloc(1, sizeof *c);
    c->s = *s;
    c->w = w;
    c->col = xalloc((size_t)s->ci / s->groups * s->kh * s->kw * s->ho * s->wo * sizeof(float));
    return c;
}

void blas_conv_run(BlasConv *c, const float *x, float *y)
{
    const ConvShape *s = &c->s;
    int cig = s->ci / s->groups, cog = s->co / s->groups, hw = s->ho * s->wo;
    int kk = cig * s->kh * s->kw;
    for (int b = 0; b < s->n; b++)
        for (int g = 0; g < s->groups; g++) {
            const float *xg = x + ((long)b * s->ci + (long)g * cig) * s->hi * s->wi;
            float *yg = y + ((long)b * s->co + (long)g * cog) * hw;
            const float *wg = c->w + (long)g * cog * kk;
            const float *B = xg;
            if (!(s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->pt == 0 &&
                  s->pl == 0 && s->ho == s->hi && s->wo == s->wi)) {
                /* im2col: row (ic, ky, kx), column (oy, ox) */
                for (int ic = 0; ic < cig; ic++)
                    for (int ky = 0; ky < s->kh; ky++)
                        for (int kx = 0; kx < s->kw; kx++) {
                            float *row = c->col + ((long)(ic * s->kh + ky) * s->kw + kx) * hw;
                            const float *xp = xg + (long)ic * s->hi * s->wi;
                            for (int oy = 0; oy < s->ho; oy++) {
                                int iy = oy * s->sh - s->pt + ky * s->dh;
                                float *r = row + (long)oy * s->wo;
                                if (iy < 0 || iy >= s->hi) {
                                    memset(r, 0, (size_t)s->wo * sizeof(float));
                                    continue;
                                }
                                for (int ox = 0; ox < s->wo; ox++) {
                                    int ix = ox * s->sw - s->pl + kx * s->dw;
                                    r[ox] = ix < 0 || ix >= s->wi ? 0.0f : xp[(long)iy * s->wi + ix];
                                }
                            }
                        }
                B = c->col;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, cog, hw, kk, 1.0f, wg, kk, B,
                        hw, 0.0f, yg, hw);
        }
}

void blas_dense_run(int m, int n, int k, const float *w, const float *x, float *y)
{
    if (m == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, k, x, 1, 0.0f, y, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
}
