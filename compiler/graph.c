/*
 * graph.c: relayc's IR, a list of tensor values and a list of nodes in execution order.
 * Everything is referred to by index, so arrays can grow and dumps stay stable.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

const EwDesc ew_table[EW_COUNT] = {
#define UNARY(kind, name, expr) [EW_##kind] = { name, #expr, 1 },
#define BINARY(kind, name, expr) [EW_##kind] = { name, #expr, 2 },
#include "../runtime/elementwise.def"
#undef UNARY
#undef BINARY
};

const char *const ir_op_name[IR_COUNT] = {
    [IR_CONV2D] = "conv2d",   [IR_MATMUL] = "matmul",   [IR_POOL2D] = "pool2d",
    [IR_ADAPTIVE_AVG_POOL2D] = "adaptive_avg_pool2d",   [IR_SOFTMAX] = "softmax",
    [IR_REDUCE] = "reduce",   [IR_COPY] = "copy",       [IR_CONCAT] = "concat",
    [IR_PAD] = "pad",         [IR_UNARY] = "unary",     [IR_BINARY] = "binary",
    [IR_RESHAPE] = "reshape",
    [IR_QCONV2D] = "qconv2d", [IR_QMATMUL] = "qmatmul", [IR_REQUANTIZE] = "requantize",
    [IR_QUANTIZE] = "quantize", [IR_DEQUANTIZE] = "dequantize",
};

int graph_add_value(Graph *g, ValueKind kind, DType dt, const Shape *shape, int json)
{
    Value v = { .kind = kind, .dtype = dt, .shape = *shape, .producer = -1, .input = -1,
                .constant = -1, .json = json };
    arrput(g->values, v);
    return (int)arrlen(g->values) - 1;
}

int graph_add_const(Graph *g, Tensor t, int json)
{
    int v = graph_add_value(g, VAL_CONST, t.dtype, &t.shape, json);
    arrput(g->consts, t);
    g->values[v].constant = (int)arrlen(g->consts) - 1;
    g->const_bytes += (int64_t)t.nbytes;
    return v;
}

bool graph_const_fits(const Graph *g, int64_t more)
{
    return more >= 0 && more <= RC_MAX_CONST_BYTES - g->const_bytes;
}

int graph_add_node(Graph *g, IrOp op, const int *in, int nin, const Attrs *a, DType dt,
                   const Shape *shape, int json, const char *relay_op)
{
    int v = graph_add_value(g, VAL_TEMP, dt, shape, json);
    Node n;
    memset(&n, 0, sizeof n);
    n.op = op;
    for (int i = 0; i < nin; i++)
        arrput(n.in, in[i]);
    n.out = v;
    if (a)
        n.a = *a;
    n.json = json;
    n.relay_op = relay_op;
    arrput(g->nodes, n);
    g->values[v].producer = (int)arrlen(g->nodes) - 1;
    return v;
}

void graph_free(Graph *g)
{
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        arrfree(g->nodes[i].in);
    for (int i = 0; i < (int)arrlen(g->consts); i++)
        tensor_free(&g->consts[i]);
    for (int i = 0; i < (int)arrlen(g->values); i++)
        free((void *)g->values[i].name);
    free((void *)g->function);
    arrfree(g->nodes);
    arrfree(g->values);
    arrfree(g->consts);
    arrfree(g->inputs);
    arrfree(g->outputs);
    memset(g, 0, sizeof *g);
}

int graph_storage_root(const Graph *g, int v)
{
    while (g->values[v].kind == VAL_TEMP) {
        const Node *n = &g->nodes[g->values[v].producer];
        if (n->op != IR_RESHAPE)
            break;
        v = n->in[0];
    }
    return v;
}

static void print_value(const Graph *g, int v, FILE *f)
{
    const Value *x = &g->values[v];
    char s[128];
    static const char prefix[] = { [VAL_TEMP] = 't', [VAL_INPUT] = 'i', [VAL_CONST] = 'c' };
    fprintf(f, "%%%c%d:%s%s", prefix[x->kind], v, dtype_name(x->dtype), shape_str(&x->shape, s, sizeof s));
}

/* Attrs.tile.kind, by TileKind */
static const char *const tile_kinds[] = { "reference", "conv", "conv_oc", "depthwise", "gemv",
                                          "gemm", "conv_rows" };

/* The bias, epilogue and kernel of a conv2d / matmul (fuse.c): " bias=%c9 then
 * relu, add(%t3) tile=conv 12x8 packed". */
static void print_fused(const Graph *g, const Node *n, FILE *f)
{
    static const char *bc[] = { "", "channel ", "scalar ", "" };
    const Attrs *a = &n->a;
    if (a->bias) {
        fprintf(f, " bias=");
        print_value(g, n->in[a->bias], f);
    }
    for (int k = 0; k < a->ep.n; k++) {
        const EpStep *st = &a->ep.step[k];
        fprintf(f, "%s%s", k ? ", " : " then ", ew_table[st->ew].name);
        if (st->ew == EW_CLIP || st->ew == EW_LEAKY_RELU)
            fprintf(f, "[%a,%a]", (double)st->p0, (double)st->p1);
        if (st->operand) {
            fprintf(f, "(%s%s", st->swap ? "swapped " : "", bc[st->bcast]);
            print_value(g, n->in[st->operand], f);
            fprintf(f, ")");
        }
    }
    if (a->tile.kind)
        fprintf(f, " tile=%s %dx%d%s", tile_kinds[a->tile.kind], a->tile.rb, a->tile.wb,
                a->tile.packed ? " packed" : "");
}

void graph_print(const Graph *g, FILE *f)
{
    fprintf(f, "graph %s (tvm %s)\n", g->function ? g->function : "?", g->version);
    for (int i = 0; i < (int)arrlen(g->inputs); i++) {
        fprintf(f, "input %d ", i);
        print_value(g, g->inputs[i], f);
        fprintf(f, " \"%s\"\n", g->values[g->inputs[i]].name ? g->values[g->inputs[i]].name : "");
    }
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        const Node *n = &g->nodes[i];
        fprintf(f, "n%d ", i);
        print_value(g, n->out, f);
        fprintf(f, " = %s", ir_op_name[n->op]);
        if (n->op == IR_UNARY || n->op == IR_BINARY)
            fprintf(f, ".%s", ew_table[n->a.ew].name);
        fprintf(f, "(");
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            if (k)
                fprintf(f, ", ");
            print_value(g, n->in[k], f);
        }
        fprintf(f, ")");
        const Attrs *a = &n->a;
        const Window *w = &a->conv;
        switch (n->op) {
        case IR_CONV2D:
        case IR_POOL2D:
            fprintf(f, " k=%dx%d s=%d,%d d=%d,%d pad=%d,%d,%d,%d g=%d", w->kh, w->kw, w->sh, w->sw,
                    w->dh, w->dw, w->pt, w->pl, w->pb, w->pr, w->groups);
            if (n->op == IR_POOL2D)
                fprintf(f, " %s%s", a->is_max ? "max" : "avg",
                        !a->is_max && a->count_include_pad ? " count_include_pad" : "");
            break;
        case IR_QCONV2D:
        case IR_QMATMUL:
        case IR_REQUANTIZE:
        case IR_QUANTIZE:
        case IR_DEQUANTIZE:
            if (n->op == IR_QCONV2D)
                fprintf(f, " k=%dx%d s=%d,%d d=%d,%d pad=%d,%d,%d,%d g=%d", w->kh, w->kw, w->sh,
                        w->sw, w->dh, w->dw, w->pt, w->pl, w->pb, w->pr, w->groups);
            if (n->op == IR_QMATMUL)
                fprintf(f, " m=%d n=%d k=%d", a->m, a->n, a->k);
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
            if (a->tile.kind) /* pack_qnn.c */
                fprintf(f, " tile=%s %dx%d%s%s", tile_kinds[a->tile.kind], a->tile.rb, a->tile.wb,
                        a->tile.packed ? " packed" : "", a->q.ztab ? " ztab" : "");
            break;
        case IR_MATMUL:
            fprintf(f, " batch=%d m=%d n=%d k=%d ta=%d tb=%d sa=%lld sb=%lld", a->batch, a->m, a->n,
                    a->k, a->ta, a->tb, (long long)a->sa, (long long)a->sb);
            break;
        case IR_SOFTMAX:
            fprintf(f, " axis=%d%s", a->axis, a->log ? " log" : "");
            break;
        case IR_CONCAT:
            fprintf(f, " axis=%d", a->axis);
            break;
        case IR_REDUCE: {
            static const char *kinds[] = { "sum", "mean", "max", "min" };
            fprintf(f, " %s axes=", kinds[a->reduce_kind]);
            const Shape *s = &g->values[n->in[0]].shape;
            for (int d = 0; d < s->rank; d++)
                fprintf(f, "%d", a->reduced[d]);
            break;
        }
        case IR_COPY: {
            const Shape *s = &g->values[n->out].shape;
            fprintf(f, " off=%lld stride=[", (long long)a->xoff);
            for (int d = 0; d < s->rank; d++)
                fprintf(f, "%s%lld", d ? "," : "", (long long)a->xstride[d]);
            fprintf(f, "]");
            break;
        }
        case IR_PAD: {
            const Shape *s = &g->values[n->out].shape;
            fprintf(f, " value=%a before=[", (double)a->p0);
            for (int d = 0; d < s->rank; d++)
                fprintf(f, "%s%lld", d ? "," : "", (long long)a->pad_lo[d]);
            fprintf(f, "]");
            break;
        }
        case IR_UNARY:
            if (a->ew == EW_CLIP || a->ew == EW_LEAKY_RELU)
                fprintf(f, " p0=%a p1=%a", (double)a->p0, (double)a->p1);
            break;
        default:
            break;
        }
        if (n->op == IR_CONV2D || n->op == IR_MATMUL)
            print_fused(g, n, f);
        fprintf(f, "  # nodes[%d] %s\n", n->json, n->relay_op ? n->relay_op : "");
    }
    for (int i = 0; i < (int)arrlen(g->outputs); i++) {
        fprintf(f, "output %d ", i);
        print_value(g, g->outputs[i], f);
        fprintf(f, "\n");
    }
}
