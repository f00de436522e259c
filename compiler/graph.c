/*
 * graph.c: relayc's IR, a list of tensor values and a list of nodes in execution order.
 * Everything is referred to by index, so arrays can grow and dumps stay stable.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

const EwDesc ew_table[EW_COUNT] = {
#define UNARY(kind, name, relay, dtypes, expr) [EW_##kind] = { name, relay, #expr, 1 },
#define BINARY(kind, name, relay, dtypes, expr) [EW_##kind] = { name, relay, #expr, 2 },
#include "../runtime/elementwise.def"
#undef UNARY
#undef BINARY
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

int graph_add_const_from(Graph *g, Tensor t, int from)
{
    int v = graph_add_const(g, t, g->values[from].json);
    if (g->values[from].name)
        g->values[v].name = xstrdup(g->values[from].name);
    return v;
}

int graph_add_const_copy(Graph *g, DType dt, const Shape *s, const void *data, int json, int from)
{
    Tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.shape = *s;
    t.nbytes = (size_t)shape_numel(s) * dtype_size(dt);
    t.data = xmalloc(t.nbytes ? t.nbytes : 1);
    memcpy(t.data, data, t.nbytes);
    return from >= 0 ? graph_add_const_from(g, t, from) : graph_add_const(g, t, json);
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
    Source s = { json, relay_op };
    arrput(n.src, s);
    arrput(g->nodes, n);
    g->values[v].producer = (int)arrlen(g->nodes) - 1;
    return v;
}

void graph_free(Graph *g)
{
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        graph_node_free(&g->nodes[i]);
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

void graph_node_free(Node *n)
{
    arrfree(n->in);
    arrfree(n->src);
}

void graph_merge_sources(Node *into, const Node *from)
{
    for (int k = 0; k < (int)arrlen(from->src); k++) {
        bool have = false;
        for (int j = 0; j < (int)arrlen(into->src) && !have; j++)
            have = into->src[j].json == from->src[k].json;
        if (!have)
            arrput(into->src, from->src[k]);
    }
}

void graph_sources_text(const Node *n, Buf *b)
{
    for (int k = 0; k < (int)arrlen(n->src); k++)
        buf_printf(b, "%snodes[%d] %s", k ? " + " : "", n->src[k].json,
                   n->src[k].op ? n->src[k].op : "");
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

void graph_print_value(const Graph *g, int v, FILE *f)
{
    const Value *x = &g->values[v];
    char s[128];
    static const char prefix[] = { [VAL_TEMP] = 't', [VAL_INPUT] = 'i', [VAL_CONST] = 'c' };
    fprintf(f, "%%%c%d:%s%s", prefix[x->kind], v, dtype_name(x->dtype), shape_str(&x->shape, s, sizeof s));
}

void graph_print(const Graph *g, FILE *f)
{
    fprintf(f, "graph %s (tvm %s)\n", g->function ? g->function : "?", g->version);
    for (int i = 0; i < (int)arrlen(g->inputs); i++) {
        fprintf(f, "input %d ", i);
        graph_print_value(g, g->inputs[i], f);
        fprintf(f, " \"%s\"\n", g->values[g->inputs[i]].name ? g->values[g->inputs[i]].name : "");
    }
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        const Node *n = &g->nodes[i];
        fprintf(f, "n%d ", i);
        graph_print_value(g, n->out, f);
        fprintf(f, " = %s", ir_ops[n->op].name);
        if (n->op == IR_UNARY || n->op == IR_BINARY)
            fprintf(f, ".%s", ew_table[n->a.ew].name);
        fprintf(f, "(");
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            if (k)
                fprintf(f, ", ");
            graph_print_value(g, n->in[k], f);
        }
        fprintf(f, ")");
        if (ir_ops[n->op].print)
            ir_ops[n->op].print(g, n, f);
        Buf src = { 0 };
        graph_sources_text(n, &src);
        fprintf(f, "  # %s\n", buf_cstr(&src));
        buf_free(&src);
    }
    for (int i = 0; i < (int)arrlen(g->outputs); i++) {
        fprintf(f, "output %d ", i);
        graph_print_value(g, g->outputs[i], f);
        fprintf(f, "\n");
    }
}
