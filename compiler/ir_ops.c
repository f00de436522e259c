/*
 * ir_ops.c: the IR operator table. One row per IrOp says everything the later stages
 * need to know about it: its name, how its attrs print in dumps, its multiply-accumulate
 * count, and the kernel calls that compute it, each with its parameter struct
 * (runtime/params.def) filled. The emitter, the reference interpreter, the report and
 * the dump read the row; none of them switches on the op. ir_ops_check() refuses a table
 * with a missing row at start-up.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static const Shape *shape_of(const Graph *g, int v) { return &g->values[v].shape; }

/* The first inputs of a node, by position. */
static const int first_inputs[RC_MAX_KARGS] = { 0, 1, 2, 3, 4, 5 };

/* A library call of kernel k with parameter struct type pt, and its inputs (positions in
 * the node's inputs). */
static KCall *add_call(KCall **out, const char *k, const char *pt, const int *args, int nargs)
{
    KCall c;
    memset(&c, 0, sizeof c);
    c.kind = KG_LIBRARY;
    c.kernel = k;
    c.params = pt;
    for (int i = 0; i < nargs; i++)
        c.arg[i] = args[i];
    c.narg = nargs;
    arrput(*out, c);
    return &(*out)[arrlen(*out) - 1];
}

/* A call of a kernel the emitter writes for this node alone, on all its inputs. */
static void add_generated(const Node *n, KernelKind kind, KCall **out)
{
    KCall c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.narg = -1; /* every input of the node */
    (void)n;
    arrput(*out, c);
}

static bool integer(const Graph *g, int v) { return g->values[v].dtype != DT_F32; }

/* A strided copy of input x (shape s, strides xs from xoff) into the output at ys/yoff. */
static void add_copy(const Graph *g, const Node *n, int x, const Shape *s, const int64_t *xs,
                     int64_t xoff, const int64_t *ys, int64_t yoff, KCall **out)
{
    KCall *c = add_call(out, "rk_copy", "CopyParams", &x, 1);
    CopyParams *p = &c->p.CopyParams;
    p->rank = s->rank;
    for (int d = 0; d < s->rank; d++) {
        p->shape[d] = (int)s->dim[d];
        p->xs[d] = (long)xs[d];
        p->ys[d] = (long)ys[d];
    }
    p->xoff = (long)xoff;
    p->yoff = (long)yoff;
    p->esize = (int)dtype_size(g->values[n->out].dtype); /* any dtype */
    p->fl = g->values[n->out].dtype == DT_F32 || g->values[n->out].dtype == DT_F64;
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

static void put_window(const Window *w, FILE *f)
{
    fprintf(f, " k=%dx%d s=%d,%d d=%d,%d pad=%d,%d,%d,%d g=%d", w->kh, w->kw, w->sh, w->sw, w->dh,
            w->dw, w->pt, w->pl, w->pb, w->pr, w->groups);
}

/* Attrs.tile.kind, by TileKind */
static const char *const tile_kinds[] = { "reference", "conv", "conv_oc", "depthwise", "gemv",
                                          "gemm", "conv_rows", "wino", "conv_f32" };

/* The bias, epilogue and kernel of a conv2d / matmul (fuse.c): " bias=%c9 then
 * relu, add(%t3) tile=conv 12x8 packed". */
static void print_fused(const Graph *g, const Node *n, FILE *f)
{
    static const char *bc[] = { "", "channel ", "scalar ", "" };
    const Attrs *a = &n->a;
    if (a->bias) {
        fprintf(f, " bias=");
        graph_print_value(g, n->in[a->bias], f);
    }
    for (int k = 0; k < a->ep.n; k++) {
        const EpStep *st = &a->ep.step[k];
        fprintf(f, "%s%s", k ? ", " : " then ", ew_table[st->ew].name);
        if (st->ew == EW_CLIP || st->ew == EW_LEAKY_RELU)
            fprintf(f, "[%a,%a]", (double)st->p0, (double)st->p1);
        if (st->operand) {
            fprintf(f, "(%s%s", st->swap ? "swapped " : "", bc[st->bcast]);
            graph_print_value(g, n->in[st->operand], f);
            fprintf(f, ")");
        }
    }
    if (a->tile.kind)
        fprintf(f, " tile=%s %dx%d%s%s", tile_kinds[a->tile.kind], a->tile.rb, a->tile.wb,
                a->tile.packed ? " packed" : "", a->tile.lanes ? " lanes" : "");
    if (a->tile.sub) /* --target generic: passes of sub rows on scalar cores */
        fprintf(f, " sub=%d", a->tile.sub);
}

/* ---- conv2d and matmul, float and integer ---- */

static void conv_params(const Graph *g, const Node *n, Conv2dParams *p)
{
    const int64_t *xd = shape_of(g, n->in[0])->dim, *yd = shape_of(g, n->out)->dim;
    const Window *w = &n->a.conv;
    p->n = (int)xd[0], p->ci = (int)xd[1], p->hi = (int)xd[2], p->wi = (int)xd[3];
    p->co = (int)yd[1], p->ho = (int)yd[2], p->wo = (int)yd[3];
    p->kh = w->kh, p->kw = w->kw, p->sh = w->sh, p->sw = w->sw, p->dh = w->dh, p->dw = w->dw;
    p->pt = w->pt, p->pl = w->pl, p->groups = w->groups;
}

static int64_t conv2d_macs(const Graph *g, const Node *n)
{
    int groups = n->a.conv.groups > 0 ? n->a.conv.groups : 1;
    return shape_numel(shape_of(g, n->out)) * (shape_of(g, n->in[0])->dim[1] / groups) *
           n->a.conv.kh * n->a.conv.kw;
}

static int64_t matmul_macs(const Graph *g, const Node *n)
{
    (void)g;
    return (int64_t)(n->a.batch > 0 ? n->a.batch : 1) * n->a.m * n->a.n * n->a.k;
}

static void conv2d_print(const Graph *g, const Node *n, FILE *f)
{
    put_window(&n->a.conv, f);
    if (n->a.phase)
        fputs(" phase", f);
    print_fused(g, n, f);
}

static void conv2d_calls(const Graph *g, const Node *n, KCall **out)
{
    int args[3] = { 0, 1, n->a.bias ? n->a.bias : -1 };
    KCall *c = add_call(out, "rk_conv2d", "Conv2dParams", args, 3);
    conv_params(g, n, &c->p.Conv2dParams);
    if (n->a.tile.kind) /* emit/kernel_conv2d.c */
        c->kind = KG_CONV2D;
}

static void matmul_print(const Graph *g, const Node *n, FILE *f)
{
    const Attrs *a = &n->a;
    fprintf(f, " batch=%d m=%d n=%d k=%d ta=%d tb=%d sa=%lld sb=%lld", a->batch, a->m, a->n,
            a->k, a->ta, a->tb, (long long)a->sa, (long long)a->sb);
    print_fused(g, n, f);
}

static void matmul_calls(const Graph *g, const Node *n, KCall **out)
{
    (void)g;
    const Attrs *a = &n->a;
    KCall *c = add_call(out, "rk_matmul", "MatmulParams", first_inputs, 2);
    MatmulParams *p = &c->p.MatmulParams;
    p->batch = a->batch, p->m = a->m, p->n = a->n, p->k = a->k, p->ta = a->ta, p->tb = a->tb;
    p->sa = (long)a->sa, p->sb = (long)a->sb;
    if (a->tile.kind) /* emit/kernel_dense.c */
        c->kind = KG_DENSE;
}

/* The integer kernels' shared attrs: zero points, rounding, requantize epilogue. */
static void print_q(const Graph *g, const Node *n, FILE *f)
{
    const Attrs *a = &n->a;
    if (n->op == IR_QCONV2D || n->op == IR_QMATMUL)
        fprintf(f, " x=^%d-%d w=^%d-%d", a->q.xflip, a->q.xoff, a->q.wflip, a->q.woff);
    else
        fprintf(f, " axis=%d", a->axis);
    if (n->op == IR_REQUANTIZE || a->q.requant)
        fprintf(f, " %s %s yzp=%d", a->q.rounding ? "tonearest" : "upward",
                a->q.compute == 0 ? "int64" : a->q.compute == 1 ? "float32" : "float64",
                (int)a->q.yzp);
    if (a->q.requant && g->values[n->out].dtype != DT_I32)
        fprintf(f, " clip=%d,%d", (int)a->q.ylo, (int)a->q.yhi);
    if (a->tile.kind) { /* pack_qnn.c */
        fprintf(f, " tile=%s %dx%d%s%s%s", tile_kinds[a->tile.kind], a->tile.rb, a->tile.wb,
                a->tile.packed ? " packed" : "", a->q.ztab ? " ztab" : "",
                a->tile.kind != TK_DEPTHWISE || !a->tile.rows ? ""
                : a->tile.lanes                              ? " lanes plane=f32"
                : a->tile.vw                                 ? " plane=f32"
                                                             : " plane=i32");
        if (a->tile.kind == TK_CONV_F32 && a->tile.wr)
            fprintf(f, " flat=%d", a->tile.wr);
    }
}

/* The integer conv2d / matmul epilogue fields of their parameter structs. */
#define Q_EPILOGUE(p, g, n)                                                                  \
    do {                                                                                     \
        const Attrs *qa_ = &(n)->a;                                                          \
        (p)->xflip = qa_->q.xflip, (p)->xoff = qa_->q.xoff;                                  \
        (p)->wflip = qa_->q.wflip, (p)->woff = qa_->q.woff;                                  \
        (p)->rounding = qa_->q.rounding, (p)->yzp = (int)qa_->q.yzp;                         \
        (p)->ytype = qa_->q.requant ? qnn_type_code((g)->values[(n)->out].dtype) : 3;        \
        (p)->ylo = (int)qa_->q.ylo, (p)->yhi = (int)qa_->q.yhi;                              \
    } while (0)

static void qconv2d_print(const Graph *g, const Node *n, FILE *f)
{
    put_window(&n->a.conv, f);
    print_q(g, n, f);
}

/* x, w, bias [, mult, shift]: the inputs of a QCONV2D / QMATMUL's library kernel (a
 * zero-point table, pack_qnn.c, is not read by it). */
static void q_args(const Node *n, int *args)
{
    for (int k = 0; k < 5; k++)
        args[k] = k < 3 || n->a.q.requant ? k : -1;
}

static void qconv2d_calls(const Graph *g, const Node *n, KCall **out)
{
    int args[5];
    q_args(n, args);
    KCall *c = add_call(out, "rq_conv2d", "Conv2dParams", args, 5);
    conv_params(g, n, &c->p.Conv2dParams);
    Q_EPILOGUE(&c->p.Conv2dParams, g, n);
    c->bytes = true;
    if (n->a.tile.kind) /* emit/kernel_qconv.c */
        c->kind = KG_QCONV2D;
}

static void qmatmul_print(const Graph *g, const Node *n, FILE *f)
{
    fprintf(f, " m=%d n=%d k=%d", n->a.m, n->a.n, n->a.k);
    print_q(g, n, f);
}

static void qmatmul_calls(const Graph *g, const Node *n, KCall **out)
{
    int args[5];
    q_args(n, args);
    KCall *c = add_call(out, "rq_matmul", "MatmulParams", args, 5);
    MatmulParams *p = &c->p.MatmulParams;
    p->batch = 1, p->m = n->a.m, p->n = n->a.n, p->k = n->a.k, p->tb = 1;
    Q_EPILOGUE(p, g, n);
    c->bytes = true;
    if (n->a.tile.kind)
        c->kind = KG_QDENSE;
}

/* ---- pooling, softmax, reductions ---- */

static void pool2d_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    put_window(&n->a.conv, f);
    fprintf(f, " %s%s", n->a.is_max ? "max" : "avg",
            !n->a.is_max && n->a.count_include_pad ? " count_include_pad" : "");
}

static void pool2d_calls(const Graph *g, const Node *n, KCall **out)
{
    const int64_t *xd = shape_of(g, n->in[0])->dim, *yd = shape_of(g, n->out)->dim;
    const Window *w = &n->a.conv;
    bool q = integer(g, n->out);
    KCall *c = add_call(out, q ? "rq_pool2d" : "rk_pool2d", "Pool2dParams", first_inputs, 1);
    Pool2dParams *p = &c->p.Pool2dParams;
    p->n = (int)xd[0], p->c = (int)xd[1], p->hi = (int)xd[2], p->wi = (int)xd[3];
    p->ho = (int)yd[2], p->wo = (int)yd[3];
    p->kh = w->kh, p->kw = w->kw, p->sh = w->sh, p->sw = w->sw, p->dh = w->dh, p->dw = w->dw;
    p->pt = w->pt, p->pl = w->pl, p->pb = w->pb, p->pr = w->pr;
    p->is_max = n->a.is_max, p->count_include_pad = n->a.count_include_pad;
    p->xtype = q ? qnn_type_code(g->values[n->in[0]].dtype) : 0;
    c->bytes = q;
    if (!q && (g->target == TARGET_X86_64_AVX2 || g->target == TARGET_X86_64_AVX512))
        c->kind = KG_POOL2D; /* emit/kernel_pool.c */
}

static void adaptive_avg_pool2d_calls(const Graph *g, const Node *n, KCall **out)
{
    const int64_t *xd = shape_of(g, n->in[0])->dim, *yd = shape_of(g, n->out)->dim;
    KCall *c = add_call(out, "rk_adaptive_pool2d", "AdaptivePool2dParams", first_inputs, 1);
    AdaptivePool2dParams *p = &c->p.AdaptivePool2dParams;
    p->n = (int)xd[0], p->c = (int)xd[1], p->hi = (int)xd[2], p->wi = (int)xd[3];
    p->ho = (int)yd[2], p->wo = (int)yd[3];
}

static void softmax_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    fprintf(f, " axis=%d%s", n->a.axis, n->a.log ? " log" : "");
}

static void softmax_calls(const Graph *g, const Node *n, KCall **out)
{
    const Shape *s = shape_of(g, n->in[0]);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < n->a.axis; d++)
        outer *= s->dim[d];
    for (int d = n->a.axis + 1; d < s->rank; d++)
        inner *= s->dim[d];
    KCall *c = add_call(out, "rk_softmax", "SoftmaxParams", first_inputs, 1);
    c->p.SoftmaxParams.outer = (int)outer;
    c->p.SoftmaxParams.len = (int)s->dim[n->a.axis];
    c->p.SoftmaxParams.inner = (int)inner;
    c->p.SoftmaxParams.log = n->a.log;
}

static void reduce_print(const Graph *g, const Node *n, FILE *f)
{
    static const char *kinds[] = { "sum", "mean", "max", "min", "prod" };
    fprintf(f, " %s axes=", kinds[n->a.reduce_kind]);
    const Shape *s = shape_of(g, n->in[0]);
    for (int d = 0; d < s->rank; d++)
        fprintf(f, "%d", n->a.reduced[d]);
}

static void reduce_calls(const Graph *g, const Node *n, KCall **out)
{
    const Shape *s = shape_of(g, n->in[0]);
    KCall *c = add_call(out, "rk_reduce", "ReduceParams", first_inputs, 1);
    ReduceParams *p = &c->p.ReduceParams;
    p->rank = s->rank;
    for (int d = 0; d < s->rank; d++) {
        p->shape[d] = (int)s->dim[d];
        p->reduced[d] = n->a.reduced[d];
    }
    p->kind = n->a.reduce_kind;
}

/* ---- data movement ---- */

static void copy_print(const Graph *g, const Node *n, FILE *f)
{
    const Shape *s = shape_of(g, n->out);
    fprintf(f, " off=%lld stride=[", (long long)n->a.xoff);
    for (int d = 0; d < s->rank; d++)
        fprintf(f, "%s%lld", d ? "," : "", (long long)n->a.xstride[d]);
    fprintf(f, "]");
}

static void copy_calls(const Graph *g, const Node *n, KCall **out)
{
    int64_t ys[RC_MAX_RANK];
    shape_strides(shape_of(g, n->out), ys);
    add_copy(g, n, 0, shape_of(g, n->out), n->a.xstride, n->a.xoff, ys, 0, out);
}

static void pad_print(const Graph *g, const Node *n, FILE *f)
{
    const Shape *s = shape_of(g, n->out);
    fprintf(f, " value=%a before=[", (double)n->a.p0);
    for (int d = 0; d < s->rank; d++)
        fprintf(f, "%s%lld", d ? "," : "", (long long)n->a.pad_lo[d]);
    fprintf(f, "]");
}

static void pad_calls(const Graph *g, const Node *n, KCall **out)
{
    const Value *y = &g->values[n->out];
    const Shape *xs_ = shape_of(g, n->in[0]);
    int64_t ys[RC_MAX_RANK], xs[RC_MAX_RANK], off = 0;
    shape_strides(&y->shape, ys);
    shape_strides(xs_, xs);
    for (int d = 0; d < y->shape.rank; d++)
        off += n->a.pad_lo[d] * ys[d];
    bool q = integer(g, n->out);
    KCall *c = add_call(out, q ? "rq_fill" : "rk_fill", "FillParams", NULL, 0);
    c->p.FillParams.count = (long)shape_numel(&y->shape);
    if (q) {
        c->p.FillParams.ytype = qnn_type_code(y->dtype);
        c->p.FillParams.ivalue = (int)qnn_int_param(y->dtype, n->a.p0);
        c->bytes = true;
    } else {
        c->p.FillParams.value = n->a.p0;
    }
    add_copy(g, n, 0, xs_, xs, 0, ys, off, out);
}

static void concat_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    fprintf(f, " axis=%d", n->a.axis);
}

static void concat_calls(const Graph *g, const Node *n, KCall **out)
{
    int64_t ys[RC_MAX_RANK], xs[RC_MAX_RANK], off = 0;
    shape_strides(shape_of(g, n->out), ys);
    for (int i = 0; i < (int)arrlen(n->in); i++) {
        const Shape *s = shape_of(g, n->in[i]);
        shape_strides(s, xs);
        add_copy(g, n, i, s, xs, 0, ys, off, out);
        off += s->dim[n->a.axis] * ys[n->a.axis];
    }
}

/* ---- elementwise and views ---- */

static void unary_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    if (n->a.ew == EW_CLIP || n->a.ew == EW_LEAKY_RELU)
        fprintf(f, " p0=%a p1=%a", (double)n->a.p0, (double)n->a.p1);
}

static void elementwise_calls(const Graph *g, const Node *n, KCall **out)
{
    (void)g;
    add_generated(n, KG_ELEMENTWISE, out);
}

static void reshape_calls(const Graph *g, const Node *n, KCall **out)
{
    (void)g, (void)n, (void)out; /* a view: no code */
}

/* ---- quantize, dequantize, requantize ---- */

static void quant_print(const Graph *g, const Node *n, FILE *f) { print_q(g, n, f); }

static void requantize_calls(const Graph *g, const Node *n, KCall **out)
{
    const Attrs *a = &n->a;
    const Shape *s = shape_of(g, n->in[0]);
    int64_t ch = shape_numel(shape_of(g, n->in[1]));
    /* x, izp, then mult, shift (compute 0), fm (1) or dm (2) */
    int args[6] = { 0, 1, -1, -1, -1, -1 };
    if (a->q.compute == 0)
        args[2] = 2, args[3] = 3;
    else
        args[3 + a->q.compute] = 2;
    KCall *c = add_call(out, "rq_requantize", "RequantizeParams", args, 6);
    RequantizeParams *p = &c->p.RequantizeParams;
    split_axis(s, a->axis, ch, &p->outer, &p->inner);
    p->xtype = qnn_type_code(g->values[n->in[0]].dtype);
    p->ytype = qnn_type_code(g->values[n->out].dtype);
    p->channels = (int)ch;
    p->compute = a->q.compute, p->rounding = a->q.rounding, p->yzp = (int)a->q.yzp;
    c->bytes = true;
}

static void quantize_calls(const Graph *g, const Node *n, KCall **out)
{
    bool deq = n->op == IR_DEQUANTIZE;
    int64_t ch = shape_numel(shape_of(g, n->in[1]));
    KCall *c = add_call(out, deq ? "rq_dequantize" : "rq_quantize", "QuantizeParams", first_inputs,
                        3);
    QuantizeParams *p = &c->p.QuantizeParams;
    split_axis(shape_of(g, n->in[0]), n->a.axis, ch, &p->outer, &p->inner);
    p->type = qnn_type_code(g->values[deq ? n->in[0] : n->out].dtype);
    p->channels = (int)ch;
    c->bytes = true;
}

/* ---- indexing and selection (any dtype) ---- */

/* The element type code of the indexing kernels (rq_load): 0 int8, 1 uint8 and bool,
 * 2 int32, 3 int64, 4 float32, 5 int16; -1 for float64. */
static int elem_code(DType t)
{
    static const int code[DT_COUNT] = { [DT_F32] = 4, [DT_F64] = -1, [DT_I8] = 0, [DT_U8] = 1,
                                        [DT_I32] = 2, [DT_I64] = 3, [DT_BOOL] = 1, [DT_I16] = 5 };
    return code[t];
}

static KCall *gather_call(const Graph *g, const Node *n, KCall **out)
{
    KCall *c = add_call(out, "rq_gather", "GatherParams", first_inputs, 2);
    GatherParams *p = &c->p.GatherParams;
    p->mode = n->a.mode;
    p->itype = elem_code(g->values[n->in[1]].dtype);
    p->esize = (int)dtype_size(g->values[n->out].dtype);
    c->bytes = true;
    return c;
}

static void mode_print(const Graph *g, const Node *n, FILE *f)
{
    static const char *modes[] = { "clip", "wrap", "from_end" };
    fprintf(f, " mode=%s", modes[n->a.mode]);
    if (n->op == IR_GATHER)
        fprintf(f, " axis=%d", n->a.axis);
    (void)g;
}

/* data [b][m][n][i], indices [b][k] -> [b][m][k][i] */
static void take_calls(const Graph *g, const Node *n, KCall **out)
{
    const int64_t *xd = shape_of(g, n->in[0])->dim, *yd = shape_of(g, n->out)->dim;
    GatherParams *p = &gather_call(g, n, out)->p.GatherParams;
    p->rank = 4;
    for (int d = 0; d < 4; d++)
        p->shape[d] = (int)yd[d];
    p->xs[0] = (long)(xd[1] * xd[2] * xd[3]), p->xs[1] = (long)(xd[2] * xd[3]), p->xs[3] = 1;
    p->is[0] = (long)yd[2], p->is[2] = 1;
    p->astride = (long)xd[3];
    p->n = (int)xd[2];
}

static void gather_calls(const Graph *g, const Node *n, KCall **out)
{
    const Shape *xs = shape_of(g, n->in[0]), *is = shape_of(g, n->out);
    int64_t xst[RC_MAX_RANK], ist[RC_MAX_RANK];
    shape_strides(xs, xst);
    shape_strides(is, ist);
    GatherParams *p = &gather_call(g, n, out)->p.GatherParams;
    p->rank = is->rank;
    for (int d = 0; d < is->rank; d++) {
        p->shape[d] = (int)is->dim[d];
        p->xs[d] = d == n->a.axis ? 0 : (long)xst[d];
        p->is[d] = (long)ist[d];
    }
    p->astride = (long)xst[n->a.axis];
    p->n = (int)xs->dim[n->a.axis];
}

/* Strides of an operand of shape s broadcast to the rank-r output (0 on broadcast axes). */
static void bcast_strides(const Shape *s, int r, long *st)
{
    long k = 1;
    for (int d = r - 1; d >= 0; d--) {
        int sd = d - (r - s->rank);
        st[d] = (sd < 0 || s->dim[sd] == 1) ? 0 : k;
        if (sd >= 0)
            k *= (long)s->dim[sd];
    }
}

static void where_calls(const Graph *g, const Node *n, KCall **out)
{
    const Shape *ys = shape_of(g, n->out);
    KCall *c = add_call(out, "rq_where", "WhereParams", first_inputs, 3);
    WhereParams *p = &c->p.WhereParams;
    p->rank = ys->rank;
    for (int d = 0; d < ys->rank; d++)
        p->shape[d] = (int)ys->dim[d];
    bcast_strides(shape_of(g, n->in[0]), ys->rank, p->cs);
    bcast_strides(shape_of(g, n->in[1]), ys->rank, p->xs);
    bcast_strides(shape_of(g, n->in[2]), ys->rank, p->ys);
    p->ctype = elem_code(g->values[n->in[0]].dtype);
    p->esize = (int)dtype_size(g->values[n->out].dtype);
    c->bytes = true;
}

static void argreduce_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    fprintf(f, " %s%s", n->a.is_max ? "argmax" : "argmin", n->a.last ? " last" : "");
}

/* The sizes [outer][len][inner] of a node's 3-d input x, and x's type code. */
#define OLI_PARAMS(p, g, n)                                                                  \
    do {                                                                                     \
        const int64_t *xd_ = shape_of(g, (n)->in[0])->dim;                                   \
        (p)->outer = (long)xd_[0], (p)->len = (int)xd_[1], (p)->inner = (long)xd_[2];         \
        (p)->xtype = elem_code((g)->values[(n)->in[0]].dtype);                               \
    } while (0)

static void argreduce_calls(const Graph *g, const Node *n, KCall **out)
{
    KCall *c = add_call(out, "rq_argreduce", "ArgReduceParams", first_inputs, 1);
    OLI_PARAMS(&c->p.ArgReduceParams, g, n);
    c->p.ArgReduceParams.is_min = !n->a.is_max, c->p.ArgReduceParams.last = n->a.last;
    c->bytes = true;
}

static void cumsum_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    if (n->a.exclusive)
        fprintf(f, " exclusive");
}

static void cumsum_calls(const Graph *g, const Node *n, KCall **out)
{
    KCall *c = add_call(out, "rq_cumsum", "CumsumParams", first_inputs, 1);
    OLI_PARAMS(&c->p.CumsumParams, g, n);
    c->p.CumsumParams.ytype = elem_code(g->values[n->out].dtype);
    c->p.CumsumParams.exclusive = n->a.exclusive;
    c->bytes = true;
}

static void adaptive_pool2d_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    fprintf(f, " %s", n->a.is_max ? "max" : "avg");
}

static void adaptive_pool2d_calls(const Graph *g, const Node *n, KCall **out)
{
    const int64_t *xd = shape_of(g, n->in[0])->dim, *yd = shape_of(g, n->out)->dim;
    if (!integer(g, n->out)) { /* float max; a float average is IR_ADAPTIVE_AVG_POOL2D */
        adaptive_avg_pool2d_calls(g, n, out);
        (*out)[arrlen(*out) - 1].p.AdaptivePool2dParams.is_max = 1;
        return;
    }
    KCall *c = add_call(out, "rq_adaptive_pool2d", "Pool2dParams", first_inputs, 1);
    Pool2dParams *p = &c->p.Pool2dParams;
    p->n = (int)xd[0], p->c = (int)xd[1], p->hi = (int)xd[2], p->wi = (int)xd[3];
    p->ho = (int)yd[2], p->wo = (int)yd[3];
    p->is_max = n->a.is_max;
    p->xtype = qnn_type_code(g->values[n->in[0]].dtype);
    c->bytes = true;
}

/* ---- resize ---- */

static void resize2d_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    static const char *methods[] = { "nearest_neighbor", "linear", "cubic" };
    static const char *coords[] = { "half_pixel", "align_corners", "asymmetric",
                                    "pytorch_half_pixel", "tf_half_pixel_for_nn" };
    static const char *roundings[] = { "round", "floor", "ceil", "round_prefer_floor",
                                       "round_prefer_ceil" };
    const Attrs *a = &n->a;
    fprintf(f, " %s %s %s", methods[a->rs.method], coords[a->rs.coord], a->rs.nhwc ? "NHWC" : "NCHW");
    if (a->rs.method == 0)
        fprintf(f, " %s%s%s", roundings[a->rs.rounding], a->rs.intdiv & 1 ? " intdiv_h" : "",
                a->rs.intdiv & 2 ? " intdiv_w" : "");
    if (a->rs.method == 2)
        fprintf(f, " alpha=%a%s", (double)a->rs.alpha, a->rs.exclude ? " exclude" : "");
}

static void resize2d_calls(const Graph *g, const Node *n, KCall **out)
{
    const int64_t *xd = shape_of(g, n->in[0])->dim, *yd = shape_of(g, n->out)->dim;
    KCall *c = add_call(out, "rk_resize2d", "Resize2dParams", first_inputs, 1);
    Resize2dParams *p = &c->p.Resize2dParams;
    const Attrs *a = &n->a;
    int h = a->rs.nhwc ? 1 : 2, w = h + 1;
    p->n = (int)xd[0], p->c = (int)xd[a->rs.nhwc ? 3 : 1];
    p->hi = (int)xd[h], p->wi = (int)xd[w], p->ho = (int)yd[h], p->wo = (int)yd[w];
    p->nhwc = a->rs.nhwc, p->method = a->rs.method, p->coord = a->rs.coord;
    p->rounding = a->rs.rounding, p->intdiv = a->rs.intdiv, p->exclude = a->rs.exclude, p->alpha = a->rs.alpha;
}

/* ---- layer_norm ---- */

static void layer_norm_print(const Graph *g, const Node *n, FILE *f)
{
    (void)g;
    fprintf(f, " axis=%d eps=%a%s%s", n->a.axis, (double)n->a.ln.eps, n->a.ln.scale ? " scale" : "",
            n->a.ln.center ? " center" : "");
}

static void layer_norm_calls(const Graph *g, const Node *n, KCall **out)
{
    const Shape *s = shape_of(g, n->in[0]);
    int args[3] = { 0, n->a.ln.scale ? 1 : -1, n->a.ln.center ? 2 : -1 };
    KCall *c = add_call(out, "rk_layer_norm", "LayerNormParams", args, 3);
    LayerNormParams *p = &c->p.LayerNormParams;
    long outer, inner;
    split_axis(s, n->a.axis, 0, &outer, &inner);
    p->outer = (int)outer, p->len = (int)s->dim[n->a.axis], p->inner = (int)inner;
    p->scale = n->a.ln.scale, p->center = n->a.ln.center, p->eps = n->a.ln.eps;
}

/* ---- the table ---- */

const IrOpDesc ir_ops[IR_COUNT] = {
    [IR_CONV2D] = { "conv2d", conv2d_print, conv2d_macs, conv2d_calls },
    [IR_MATMUL] = { "matmul", matmul_print, matmul_macs, matmul_calls },
    [IR_POOL2D] = { "pool2d", pool2d_print, NULL, pool2d_calls },
    [IR_ADAPTIVE_AVG_POOL2D] = { "adaptive_avg_pool2d", NULL, NULL, adaptive_avg_pool2d_calls },
    [IR_SOFTMAX] = { "softmax", softmax_print, NULL, softmax_calls },
    [IR_REDUCE] = { "reduce", reduce_print, NULL, reduce_calls },
    [IR_COPY] = { "copy", copy_print, NULL, copy_calls },
    [IR_CONCAT] = { "concat", concat_print, NULL, concat_calls },
    [IR_PAD] = { "pad", pad_print, NULL, pad_calls },
    [IR_UNARY] = { "unary", unary_print, NULL, elementwise_calls },
    [IR_BINARY] = { "binary", NULL, NULL, elementwise_calls },
    [IR_RESHAPE] = { "reshape", NULL, NULL, reshape_calls, .view = true },
    [IR_QCONV2D] = { "qconv2d", qconv2d_print, conv2d_macs, qconv2d_calls },
    [IR_QMATMUL] = { "qmatmul", qmatmul_print, matmul_macs, qmatmul_calls },
    [IR_REQUANTIZE] = { "requantize", quant_print, NULL, requantize_calls },
    [IR_QUANTIZE] = { "quantize", quant_print, NULL, quantize_calls },
    [IR_DEQUANTIZE] = { "dequantize", quant_print, NULL, quantize_calls },
    [IR_TAKE] = { "take", mode_print, NULL, take_calls },
    [IR_GATHER] = { "gather", mode_print, NULL, gather_calls },
    [IR_WHERE] = { "where", NULL, NULL, where_calls },
    [IR_ARGREDUCE] = { "argreduce", argreduce_print, NULL, argreduce_calls },
    [IR_CUMSUM] = { "cumsum", cumsum_print, NULL, cumsum_calls },
    [IR_ADAPTIVE_POOL2D] = { "adaptive_pool2d", adaptive_pool2d_print, NULL, adaptive_pool2d_calls },
    [IR_RESIZE2D] = { "resize2d", resize2d_print, NULL, resize2d_calls },
    [IR_LAYER_NORM] = { "layer_norm", layer_norm_print, NULL, layer_norm_calls },
};

void ir_ops_check(void)
{
    for (int op = 0; op < IR_COUNT; op++)
        if (!ir_ops[op].name || !ir_ops[op].calls) {
            fprintf(stderr, "relayc: internal error: IR op %d has no complete row in ir_ops[]\n",
                    op);
            abort();
        }
}

int64_t ir_macs(const Graph *g, const Node *n)
{
    return ir_ops[n->op].macs ? ir_ops[n->op].macs(g, n) : 0;
}

KCall *ir_calls(const Graph *g, const Node *n)
{
    KCall *c = NULL;
    ir_ops[n->op].calls(g, n, &c);
    return c;
}

const char *ir_node_name(const Node *n, char *buf, size_t len)
{
    if (n->op == IR_UNARY || n->op == IR_BINARY)
        snprintf(buf, len, "%s.%s", ir_ops[n->op].name, ew_table[n->a.ew].name);
    else
        snprintf(buf, len, "%s", ir_ops[n->op].name);
    return buf;
}
