/*
 * reference.c: evaluates IR nodes with the reference kernels of kernels.c (the same text
 * relayc copies into the C it emits) and the elementwise table. Constant folding uses
 * it, and so does `relayc run --reference`, the third way every golden test is checked.
 */
#include "../compiler/relayc.h"
#include "kernels.c"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static float ew_f32(EwKind k, float x, float y, float p0, float p1)
{
    switch (k) {
#define UNARY(kind, name, expr) case EW_##kind: return (expr);
#define BINARY(kind, name, expr) case EW_##kind: return (expr);
#include "elementwise.def"
#undef UNARY
#undef BINARY
    default:
        return x;
    }
}

static double get(DType t, const void *p, int64_t i)
{
    switch (t) {
    case DT_F32: return ((const float *)p)[i];
    case DT_F64: return ((const double *)p)[i];
    case DT_I8: return ((const int8_t *)p)[i];
    case DT_U8: return ((const uint8_t *)p)[i];
    case DT_BOOL: return ((const uint8_t *)p)[i];
    case DT_I32: return ((const int32_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    default: return 0;
    }
}

static void put(DType t, void *p, int64_t i, double v)
{
    switch (t) {
    case DT_F32: ((float *)p)[i] = (float)v; break;
    case DT_F64: ((double *)p)[i] = v; break;
    case DT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case DT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case DT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case DT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: break;
    }
}

/* Broadcast strides of an input of shape s against an output of rank r. */
static void bcast_strides(const Shape *s, int r, int64_t *st)
{
    int64_t k = 1;
    for (int d = r - 1; d >= 0; d--) {
        int sd = d - (r - s->rank);
        if (sd < 0 || s->dim[sd] == 1) {
            st[d] = 0;
        } else {
            st[d] = k;
        }
        if (sd >= 0)
            k *= s->dim[sd];
    }
}

static void eval_elementwise(const Graph *g, const Node *n, const void *const *in, void *out)
{
    const Value *y = &g->values[n->out];
    const Value *a = &g->values[n->in[0]];
    const Value *b = n->op == IR_BINARY ? &g->values[n->in[1]] : a;
    int r = y->shape.rank;
    int64_t sa[RC_MAX_RANK], sb[RC_MAX_RANK], idx[RC_MAX_RANK] = { 0 };
    bcast_strides(&a->shape, r, sa);
    bcast_strides(&b->shape, r, sb);
    int64_t total = shape_numel(&y->shape), oa = 0, ob = 0;
    const void *pb = n->op == IR_BINARY ? in[1] : in[0];
    for (int64_t i = 0; i < total; i++) {
        if (y->dtype == DT_F32 && a->dtype == DT_F32) {
            float xv = ((const float *)in[0])[oa], yv = ((const float *)pb)[ob];
            ((float *)out)[i] = ew_f32(n->a.ew, xv, yv, n->a.p0, n->a.p1);
        } else {
            /* other dtypes: the same expression, evaluated in float for float ops and
             * exactly for the integer arithmetic that the cast round trip needs */
            double xv = get(a->dtype, in[0], oa), yv = get(b->dtype, pb, ob);
            double v;
            if (n->a.ew == EW_CAST || n->a.ew == EW_IDENTITY)
                v = xv;
            else
                v = ew_f32(n->a.ew, (float)xv, (float)yv, n->a.p0, n->a.p1);
            put(y->dtype, out, i, v);
        }
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

static void contiguous(const Shape *s, long *st)
{
    long k = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        st[d] = k;
        k *= (long)s->dim[d];
    }
}

static void dims_int(const Shape *s, int *out)
{
    for (int d = 0; d < s->rank; d++)
        out[d] = (int)s->dim[d];
}

void ref_eval(const Graph *g, const Node *n, const void *const *in, void *out)
{
    const Value *y = &g->values[n->out];
    const Value *x = &g->values[n->in[0]];
    const Attrs *a = &n->a;
    const Window *w = &a->conv;
    const int64_t *xd = x->shape.dim, *yd = y->shape.dim;
    int shp[RC_MAX_RANK];
    long xs[RC_MAX_RANK], ys[RC_MAX_RANK];
    switch (n->op) {
    case IR_CONV2D:
        rk_conv2d(in[0], in[1], arrlen(n->in) > 2 ? in[2] : NULL, out, (int)xd[0], (int)xd[1],
                  (int)xd[2], (int)xd[3], (int)yd[1], (int)yd[2], (int)yd[3], w->kh, w->kw, w->sh,
                  w->sw, w->dh, w->dw, w->pt, w->pl, w->groups);
        break;
    case IR_MATMUL:
        rk_matmul(in[0], in[1], out, a->batch, a->m, a->n, a->k, a->ta, a->tb, (long)a->sa,
                  (long)a->sb);
        break;
    case IR_POOL2D:
        rk_pool2d(in[0], out, (int)xd[0], (int)xd[1], (int)xd[2], (int)xd[3], (int)yd[2],
                  (int)yd[3], w->kh, w->kw, w->sh, w->sw, w->dh, w->dw, w->pt, w->pl, w->pb, w->pr,
                  a->is_max, a->count_include_pad);
        break;
    case IR_ADAPTIVE_AVG_POOL2D:
        rk_adaptive_avg_pool2d(in[0], out, (int)xd[0], (int)xd[1], (int)xd[2], (int)xd[3],
                               (int)yd[2], (int)yd[3]);
        break;
    case IR_SOFTMAX: {
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < a->axis; d++)
            outer *= xd[d];
        for (int d = a->axis + 1; d < x->shape.rank; d++)
            inner *= xd[d];
        rk_softmax(in[0], out, (int)outer, (int)xd[a->axis], (int)inner, a->log);
        break;
    }
    case IR_REDUCE:
        dims_int(&x->shape, shp);
        rk_reduce(in[0], out, x->shape.rank, shp, a->reduced, a->reduce_kind);
        break;
    case IR_COPY:
        dims_int(&y->shape, shp);
        contiguous(&y->shape, ys);
        for (int d = 0; d < y->shape.rank; d++)
            xs[d] = (long)a->xstride[d];
        rk_copy(in[0], out, y->shape.rank, shp, xs, (long)a->xoff, ys, 0);
        break;
    case IR_PAD: {
        contiguous(&y->shape, ys);
        long off = 0;
        for (int d = 0; d < y->shape.rank; d++)
            off += (long)a->pad_lo[d] * ys[d];
        contiguous(&x->shape, xs);
        dims_int(&x->shape, shp);
        rk_fill(out, (long)shape_numel(&y->shape), a->p0);
        rk_copy(in[0], out, x->shape.rank, shp, xs, 0, ys, off);
        break;
    }
    case IR_CONCAT: {
        contiguous(&y->shape, ys);
        long off = 0;
        for (int i = 0; i < (int)arrlen(n->in); i++) {
            const Shape *s = &g->values[n->in[i]].shape;
            contiguous(s, xs);
            dims_int(s, shp);
            rk_copy(in[i], out, s->rank, shp, xs, 0, ys, off);
            off += (long)s->dim[a->axis] * ys[a->axis];
        }
        break;
    }
    case IR_UNARY:
    case IR_BINARY:
        eval_elementwise(g, n, in, out);
        break;
    case IR_RESHAPE:
        memcpy(out, in[0], (size_t)shape_numel(&y->shape) * dtype_size(y->dtype));
        break;
    default:
        unreachable();
    }
}

/* Data of a value during ref_run: constants and inputs in place, the rest allocated. */
static const void *value_data(const Graph *g, int v, void **buf, const void *const *inputs)
{
    const Value *x = &g->values[v];
    if (x->kind == VAL_CONST)
        return g->consts[x->constant].data;
    if (x->kind == VAL_INPUT)
        return inputs[x->input];
    return buf[v];
}

void ref_run(const Graph *g, const void *const *inputs, void *const *outputs)
{
    int nv = (int)arrlen(g->values);
    void **buf = xcalloc((size_t)nv + 1, sizeof(void *));
    const void **in = NULL;
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        const Node *n = &g->nodes[i];
        const Value *y = &g->values[n->out];
        size_t bytes = (size_t)shape_numel(&y->shape) * dtype_size(y->dtype);
        buf[n->out] = xmalloc(bytes ? bytes : 1);
        arrsetlen(in, 0);
        for (int k = 0; k < (int)arrlen(n->in); k++)
            arrput(in, value_data(g, n->in[k], buf, inputs));
        ref_eval(g, n, in, buf[n->out]);
    }
    for (int i = 0; i < (int)arrlen(g->outputs); i++) {
        const Value *y = &g->values[g->outputs[i]];
        size_t bytes = (size_t)shape_numel(&y->shape) * dtype_size(y->dtype);
        if (bytes)
            memcpy(outputs[i], value_data(g, g->outputs[i], buf, inputs), bytes);
    }
    for (int v = 0; v < nv; v++)
        free(buf[v]);
    free(buf);
    arrfree(in);
}
