/*
 * reference.c: evaluates IR nodes with the reference kernels of kernels.c and
 * kernels_int8.c (the same text relayc copies into the C it emits) and the elementwise
 * table. Each node's kernel calls and their parameter structs come from its row in
 * compiler/ir_ops.c, as they do for the emitter. Constant folding uses it, and so does
 * `relayc run --reference`, the third way every golden test is checked.
 */
#include "../compiler/relayc.h"
#include "kernels.c"
#include "kernels_int8.c"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static float ew_f32(EwKind k, float x, float y, float p0, float p1)
{
    switch (k) {
#define UNARY(kind, name, relay, dtypes, expr) case EW_##kind: return (expr);
#define BINARY(kind, name, relay, dtypes, expr) case EW_##kind: return (expr);
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
#define UNARY(kind, name, relay, dtypes, expr) case EW_##kind: return (int64_t)(expr);
#define BINARY(kind, name, relay, dtypes, expr) case EW_##kind: return (int64_t)(expr);
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
    case DT_I64: return ((const int64_t *)p)[i];
    default: return ((const int32_t *)p)[i];
    }
}

static void puti(DType t, void *p, int64_t i, int64_t v)
{
    uint32_t u = (uint32_t)((uint64_t)v & 0xffffffffu); /* wraps like the emitted casts */
    if (t == DT_I64) {
        ((int64_t *)p)[i] = v;
        return;
    }
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

static bool int_dtype(DType t) { return qnn_type_code(t) >= 0 || t == DT_I64; }

/* An elementwise node, with numpy broadcasting. When every operand is int8, uint8, int32
 * or int64 the expressions of elementwise.def run on int64 values and wrap on store, as the
 * emitted C does (a float evaluation would round sums past 2^24); float32 runs in float;
 * other dtypes evaluate the same expression in float for float ops and exactly for the
 * integer arithmetic that the cast round trip needs. */
static void eval_elementwise(const Graph *g, const Node *n, const void *const *in, void *out)
{
    const Value *y = &g->values[n->out];
    const Value *a = &g->values[n->in[0]];
    const Value *b = n->op == IR_BINARY ? &g->values[n->in[1]] : a;
    const void *pb = n->op == IR_BINARY ? in[1] : in[0];
    bool exact = int_dtype(y->dtype) && int_dtype(a->dtype) && int_dtype(b->dtype);
    bool f32 = y->dtype == DT_F32 && a->dtype == DT_F32;
    int r = y->shape.rank;
    int64_t sa[RC_MAX_RANK], sb[RC_MAX_RANK], idx[RC_MAX_RANK] = { 0 }, oa = 0, ob = 0;
    int64_t p0 = exact ? qnn_int_param(a->dtype, n->a.p0) : 0;
    int64_t p1 = exact ? qnn_int_param(a->dtype, n->a.p1) : 0;
    ref_bcast_strides(&a->shape, r, sa);
    ref_bcast_strides(&b->shape, r, sb);
    int64_t total = shape_numel(&y->shape);
    for (int64_t i = 0; i < total; i++) {
        if (exact) {
            int64_t xv = geti(a->dtype, in[0], oa), yv = geti(b->dtype, pb, ob);
            puti(y->dtype, out, i, ew_i64(n->a.ew, xv, yv, p0, p1));
        } else if (f32) {
            float xv = ((const float *)in[0])[oa], yv = ((const float *)pb)[ob];
            ((float *)out)[i] = ew_f32(n->a.ew, xv, yv, n->a.p0, n->a.p1);
        } else {
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

/* ---- the library kernels, by name ---- */

/* A kernel called through its parameter struct, input pointers and output. */
typedef void (*KernelFn)(const void *p, const void *const *a, void *y);

/* Every library kernel with its number of inputs: one line a kernel. */
#define KERNELS(X)                                                                          \
    X(rk_conv2d, 3) X(rk_matmul, 2) X(rk_pool2d, 1) X(rk_adaptive_pool2d, 1)                \
    X(rk_softmax, 1) X(rk_reduce, 1) X(rk_copy, 1) X(rk_fill, 0)                            \
    X(rq_conv2d, 5) X(rq_matmul, 5) X(rq_requantize, 6) X(rq_quantize, 3)                   \
    X(rq_dequantize, 3) X(rq_pool2d, 1) X(rq_fill, 0)                                       \
    X(rq_gather, 2) X(rq_where, 3) X(rq_argreduce, 1) X(rq_cumsum, 1)                       \
    X(rq_adaptive_pool2d, 1)                                                                \
    X(rk_resize2d, 1)                                                                       \
    X(rk_layer_norm, 3)

/* call_K(p, a, y): kernel K on its inputs a[0..n) */
#define ARGS0(a)
#define ARGS1(a) a[0],
#define ARGS2(a) a[0], a[1],
#define ARGS3(a) a[0], a[1], a[2],
#define ARGS5(a) a[0], a[1], a[2], a[3], a[4],
#define ARGS6(a) a[0], a[1], a[2], a[3], a[4], a[5],
#define ADAPTER(k, n)                                                                       \
    static void call_##k(const void *p, const void *const *a, void *y)                      \
    {                                                                                       \
        (void)a;                                                                            \
        k(p, ARGS##n(a) y);                                                                 \
    }
KERNELS(ADAPTER)

static const struct {
    const char *name;
    KernelFn fn;
} kernels[] = {
#define ENTRY(k, n) { #k, call_##k },
    KERNELS(ENTRY)
#undef ENTRY
};

static KernelFn kernel_fn(const char *name)
{
    for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++)
        if (!strcmp(kernels[i].name, name))
            return kernels[i].fn;
    unreachable(); /* a kernel ir_ops.c names that this file does not know */
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
    if (ir_ops[n->op].view) {
        memcpy(out, in[0], (size_t)shape_numel(&y->shape) * dtype_size(y->dtype));
        return;
    }
    KCall *calls = ir_calls(g, n);
    for (int c = 0; c < (int)arrlen(calls); c++) {
        KCall *k = &calls[c];
        if (k->kind == KG_ELEMENTWISE) {
            eval_elementwise(g, n, in, out);
            continue;
        }
        /* the library kernel (a tuned node's twin: the reference runs the graph before
         * the pack passes, so its weights are in their plain layout) */
        if (n->a.tile.packed)
            unreachable();
        const void *a[RC_MAX_KARGS] = { NULL };
        for (int i = 0; i < k->narg; i++)
            a[i] = k->arg[i] < 0 ? NULL : in[k->arg[i]];
        kernel_fn(k->kernel)(&k->p, a, out);
    }
    arrfree(calls);
    if (n->op == IR_CONV2D || n->op == IR_MATMUL)
        apply_epilogue(g, n, in, out);
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
