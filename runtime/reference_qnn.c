/*
 * reference_qnn.c: evaluates the integer (QNN) IR nodes with the kernels of
 * runtime/kernels_int8.c (the same text relayc copies into the C it emits), the data
 * movement nodes (copy, pad, concatenate, pooling) on integer tensors, and elementwise
 * nodes whose operands are all int8, uint8 or int32: those run the expressions of
 * elementwise.def on int64 values and wrap on store, as the emitted C does, instead of
 * the float evaluation of reference.c (which would round int32 sums).
 */
#include "../compiler/relayc.h"
#include "kernels_int8.c"

#include <math.h>
#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

/* fabsf(x) of an integer is what the emitted C computes too */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wabsolute-value"
#endif
static int64_t ew_i64(EwKind k, int64_t x, int64_t y, int64_t p0, int64_t p1)
{
    if (k == EW_DIVIDE && (y == 0 || (y == -1 && x == INT64_MIN)))
        return 0; /* undefined in C and in TVM; constant folding must not trap */
    switch (k) {
#define UNARY(kind, name, expr) case EW_##kind: return (int64_t)(expr);
#define BINARY(kind, name, expr) case EW_##kind: return (int64_t)(expr);
#include "elementwise.def"
#undef UNARY
#undef BINARY
    default:
        return x;
    }
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

static int64_t geti(DType t, const void *p, int64_t i)
{
    switch (t) {
    case DT_I8: return ((const int8_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

static void puti(DType t, void *p, int64_t i, int64_t v)
{
    uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu); /* wraps like the emitted casts */
    switch (t) {
    case DT_I8: {
        int v8 = (int)(u & 0xffu);
        ((int8_t *)p)[i] = (int8_t)(v8 >= 128 ? v8 - 256 : v8);
        break;
    }
    case DT_U8: ((uint8_t *)p)[i] = (uint8_t)u; break;
    default: ((int32_t *)p)[i] = rq_wrap32(u); break;
    }
}

static void eval_int_elementwise(const Graph *g, const Node *n, const void *const *in, void *out)
{
    const Value *y = &g->values[n->out];
    const Value *a = &g->values[n->in[0]];
    const Value *b = n->op == IR_BINARY ? &g->values[n->in[1]] : a;
    const void *pb = n->op == IR_BINARY ? in[1] : in[0];
    int r = y->shape.rank;
    int64_t sa[RC_MAX_RANK], sb[RC_MAX_RANK], idx[RC_MAX_RANK] = { 0 }, oa = 0, ob = 0;
    int64_t p0 = qnn_int_param(a->dtype, n->a.p0), p1 = qnn_int_param(a->dtype, n->a.p1);
    ref_bcast_strides(&a->shape, r, sa);
    ref_bcast_strides(&b->shape, r, sb);
    int64_t total = shape_numel(&y->shape);
    for (int64_t i = 0; i < total; i++) {
        int64_t xv = geti(a->dtype, in[0], oa), yv = geti(b->dtype, pb, ob);
        puti(y->dtype, out, i, ew_i64(n->a.ew, xv, yv, p0, p1));
        for (int d = r - 1; d >= 0; d--) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < y->shape.dim[d])
                break;
            oa -= sa[d] * idx[d];
            ob -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

/* outer, channels, inner of x around axis for c channels (c == 1: everything inner). */
static void split_axis(const Shape *s, int axis, int64_t c, long *outer, long *inner)
{
    long o = 1, i = 1;
    if (c == 1) {
        *outer = 1;
        *inner = (long)shape_numel(s);
        return;
    }
    for (int d = 0; d < axis; d++)
        o *= (long)s->dim[d];
    for (int d = axis + 1; d < s->rank; d++)
        i *= (long)s->dim[d];
    *outer = o, *inner = i;
}

bool ref_eval_qnn(const Graph *g, const Node *n, const void *const *in, void *out)
{
    const Value *y = &g->values[n->out];
    const Value *x = &g->values[n->in[0]];
    const Attrs *a = &n->a;
    const Window *w = &a->conv;
    const int64_t *xd = x->shape.dim, *yd = y->shape.dim;
    int nin = (int)arrlen(n->in);
    int shp[RC_MAX_RANK];
    long xs[RC_MAX_RANK], ys[RC_MAX_RANK];
    switch (n->op) {
    case IR_QCONV2D: {
        /* packed weights (pack_qnn.c) back to OIHW bytes; the zero-point table is not read */
        unsigned char *plain = NULL;
        if (a->tile.packed) {
            int64_t cnt = qpack_plain_count(g, n);
            plain = xmalloc((size_t)(cnt ? cnt : 1));
            qpack_unpack(g, n, in[1], plain);
        }
        rq_conv2d(in[0], plain ? plain : in[1], in[2], a->q.requant ? in[3] : NULL,
                  a->q.requant ? in[4] : NULL, out,
                  (int)xd[0], (int)xd[1], (int)xd[2], (int)xd[3], (int)yd[1], (int)yd[2],
                  (int)yd[3], w->kh, w->kw, w->sh, w->sw, w->dh, w->dw, w->pt, w->pl, w->groups,
                  a->q.xflip, a->q.xoff, a->q.wflip, a->q.woff, a->q.rounding, a->q.yzp,
                  a->q.requant ? qnn_type_code(y->dtype) : 3, a->q.ylo, a->q.yhi);
        free(plain);
        return true;
    }
    case IR_QMATMUL: /* (a zero-point table, pack_qnn.c, is not read) */
        rq_matmul(in[0], in[1], in[2], a->q.requant ? in[3] : NULL, a->q.requant ? in[4] : NULL,
                  out, a->m, a->n, a->k, a->q.xflip, a->q.xoff, a->q.wflip, a->q.woff, a->q.rounding,
                  a->q.yzp, a->q.requant ? qnn_type_code(y->dtype) : 3, a->q.ylo, a->q.yhi);
        return true;
    case IR_REQUANTIZE: {
        int64_t c = shape_numel(&g->values[n->in[1]].shape);
        long outer, inner;
        split_axis(&x->shape, a->axis, c, &outer, &inner);
        rq_requantize(in[0], qnn_type_code(x->dtype), out, qnn_type_code(y->dtype), outer, (int)c,
                      inner, in[1], a->q.compute == 0 ? in[2] : NULL,
                      a->q.compute == 0 ? in[3] : NULL, a->q.compute == 1 ? in[2] : NULL,
                      a->q.compute == 2 ? in[2] : NULL, a->q.compute, a->q.rounding, a->q.yzp);
        return true;
    }
    case IR_QUANTIZE:
    case IR_DEQUANTIZE: {
        int64_t c = shape_numel(&g->values[n->in[1]].shape);
        long outer, inner;
        split_axis(&x->shape, a->axis, c, &outer, &inner);
        if (n->op == IR_QUANTIZE)
            rq_quantize(in[0], out, qnn_type_code(y->dtype), outer, (int)c, inner, in[1], in[2]);
        else
            rq_dequantize(in[0], qnn_type_code(x->dtype), out, outer, (int)c, inner, in[1], in[2]);
        return true;
    }
    case IR_POOL2D:
        if (y->dtype == DT_F32)
            return false;
        rq_pool2d(in[0], qnn_type_code(x->dtype), out, (int)xd[0], (int)xd[1], (int)xd[2],
                  (int)xd[3], (int)yd[2], (int)yd[3], w->kh, w->kw, w->sh, w->sw, w->dh, w->dw,
                  w->pt, w->pl, w->pb, w->pr, a->is_max, a->count_include_pad);
        return true;
    case IR_COPY:
        if (y->dtype == DT_F32)
            return false;
        ref_dims_int(&y->shape, shp);
        ref_contiguous(&y->shape, ys);
        for (int d = 0; d < y->shape.rank; d++)
            xs[d] = (long)a->xstride[d];
        rq_copy(in[0], out, (int)dtype_size(y->dtype), y->shape.rank, shp, xs, (long)a->xoff, ys, 0);
        return true;
    case IR_PAD: {
        if (y->dtype == DT_F32)
            return false;
        long off = 0;
        ref_contiguous(&y->shape, ys);
        for (int d = 0; d < y->shape.rank; d++)
            off += (long)a->pad_lo[d] * ys[d];
        ref_contiguous(&x->shape, xs);
        ref_dims_int(&x->shape, shp);
        rq_fill(out, qnn_type_code(y->dtype), (long)shape_numel(&y->shape),
                (int32_t)qnn_int_param(y->dtype, a->p0));
        rq_copy(in[0], out, (int)dtype_size(y->dtype), x->shape.rank, shp, xs, 0, ys, off);
        return true;
    }
    case IR_CONCAT: {
        if (y->dtype == DT_F32)
            return false;
        long off = 0;
        ref_contiguous(&y->shape, ys);
        for (int i = 0; i < nin; i++) {
            const Shape *s = &g->values[n->in[i]].shape;
            ref_contiguous(s, xs);
            ref_dims_int(s, shp);
            rq_copy(in[i], out, (int)dtype_size(y->dtype), s->rank, shp, xs, 0, ys, off);
            off += (long)s->dim[a->axis] * ys[a->axis];
        }
        return true;
    }
    case IR_UNARY:
    case IR_BINARY:
        if (qnn_type_code(y->dtype) < 0 || qnn_type_code(x->dtype) < 0 ||
            (n->op == IR_BINARY && qnn_type_code(g->values[n->in[1]].dtype) < 0))
            return false;
        eval_int_elementwise(g, n, in, out);
        return true;
    default:
        return false;
    }
}
