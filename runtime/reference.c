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

/* v converted to an integer type of range [lo, hi]: C leaves out-of-range and NaN
 * conversions undefined, so constant folding saturates (NaN gives 0) instead. */
static double sat(double v, double lo, double hi)
{
    return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

static void put(DType t, void *p, int64_t i, double v)
{
    if (t != DT_F32 && t != DT_F64 && t != DT_BOOL)
        v = t == DT_I8 ? sat(v, -128, 127) : t == DT_U8 ? sat(v, 0, 255)
          : t == DT_I32 ? sat(v, -2147483648.0, 2147483647.0)
          : sat(v, -9223372036854775808.0, 9223372036854774784.0); /* largest double < 2^63 */
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

void ref_bcast_strides(const Shape *s, int r, int64_t *st)
{
    int64_t k = 1;
    for (int d = r - 1; d >= 0; d--) {
        int sd = d - (r - s->rank);
        st[d] = (sd < 0 || s->dim[sd] == 1) ? 0 : k;
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
    ref_bcast_strides(&a->shape, r, sa);
    ref_bcast_strides(&b->shape, r, sb);
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

void ref_contiguous(const Shape *s, long *st)
{
    long k = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        st[d] = k;
        k *= (long)s->dim[d];
    }
}

void ref_dims_int(const Shape *s, int *out)
{
    for (int d = 0; d < s->rank; d++)
        out[d] = (int)s->dim[d];
}

/* The weights of a packed conv2d / matmul in their plain layout (malloc'd), or NULL when
 * they are not packed. */
static float *unpacked(const Graph *g, const Node *n, const void *w)
{
    if (!n->a.tile.packed)
        return NULL;
    int64_t count = pack_plain_count(g, n);
    float *plain = xmalloc((size_t)(count ? count : 1) * sizeof(float));
    pack_unpack(g, n, w, plain);
    return plain;
}

/* The bias of a matmul (a conv2d's starts its sum) and the fused epilogue (fuse.c), over
 * every output element in order. */
static void apply_epilogue(const Graph *g, const Node *n, const void *const *in, float *y)
{
    const Shape *s = &g->values[n->out].shape;
    int64_t count = shape_numel(s);
    int64_t C = n->op == IR_CONV2D ? s->dim[1] : n->a.n;
    int64_t inner = n->op == IR_CONV2D ? s->dim[2] * s->dim[3] : 1;
    if (!n->a.ep.n && !(n->op == IR_MATMUL && n->a.bias))
        return;
    for (int64_t i = 0; i < count; i++) {
        int64_t c = (i / inner) % C;
        float v = y[i];
        if (n->op == IR_MATMUL && n->a.bias)
            v += ((const float *)in[n->a.bias])[c];
        for (int k = 0; k < n->a.ep.n; k++) {
            const EpStep *st = &n->a.ep.step[k];
            const float *o = st->operand ? (const float *)in[st->operand] : NULL;
            float t = !o ? 0 : st->bcast == EPB_CHANNEL ? o[c] : st->bcast == EPB_SCALAR ? o[0] : o[i];
            v = st->swap ? ew_f32(st->ew, t, v, st->p0, st->p1) : ew_f32(st->ew, v, t, st->p0, st->p1);
        }
        y[i] = v;
    }
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
    if (ref_eval_qnn(g, n, in, out)) /* integer kernels and elementwise: reference_qnn.c */
        return;
    switch (n->op) {
    case IR_CONV2D: {
        float *plain = unpacked(g, n, in[1]);
        rk_conv2d(in[0], plain ? plain : in[1], a->bias ? in[a->bias] : NULL, out, (int)xd[0],
                  (int)xd[1], (int)xd[2], (int)xd[3], (int)yd[1], (int)yd[2], (int)yd[3], w->kh,
                  w->kw, w->sh, w->sw, w->dh, w->dw, w->pt, w->pl, w->groups);
        free(plain);
        apply_epilogue(g, n, in, out);
        break;
    }
    case IR_MATMUL: {
        float *plain = unpacked(g, n, in[1]);
        rk_matmul(in[0], plain ? plain : in[1], out, a->batch, a->m, a->n, a->k, a->ta,
                  plain ? 1 : a->tb, (long)a->sa, (long)a->sb);
        free(plain);
        apply_epilogue(g, n, in, out);
        break;
    }
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
        ref_dims_int(&x->shape, shp);
        rk_reduce(in[0], out, x->shape.rank, shp, a->reduced, a->reduce_kind);
        break;
    case IR_COPY:
        ref_dims_int(&y->shape, shp);
        ref_contiguous(&y->shape, ys);
        for (int d = 0; d < y->shape.rank; d++)
            xs[d] = (long)a->xstride[d];
        rk_copy(in[0], out, y->shape.rank, shp, xs, (long)a->xoff, ys, 0);
        break;
    case IR_PAD: {
        ref_contiguous(&y->shape, ys);
        long off = 0;
        for (int d = 0; d < y->shape.rank; d++)
            off += (long)a->pad_lo[d] * ys[d];
        ref_contiguous(&x->shape, xs);
        ref_dims_int(&x->shape, shp);
        rk_fill(out, (long)shape_numel(&y->shape), a->p0);
        rk_copy(in[0], out, x->shape.rank, shp, xs, 0, ys, off);
        break;
    }
    case IR_CONCAT: {
        ref_contiguous(&y->shape, ys);
        long off = 0;
        for (int i = 0; i < (int)arrlen(n->in); i++) {
            const Shape *s = &g->values[n->in[i]].shape;
            ref_contiguous(s, xs);
            ref_dims_int(s, shp);
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
