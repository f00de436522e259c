/*
 * passes.c: graph-to-graph passes, run in the order of passes[] (see the end). Each
 * leaves a valid graph; `relayc compile --dump-after=NAME` prints the graph after one.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static size_t value_bytes(const Graph *g, int v)
{
    const Value *x = &g->values[v];
    return (size_t)shape_numel(&x->shape) * dtype_size(x->dtype);
}

/* Multiply-adds (or element steps) the reference kernels spend on node n, roughly. */
static double node_work(const Graph *g, const Node *n)
{
    const Attrs *a = &n->a;
    double out = (double)shape_numel(&g->values[n->out].shape), in = 0;
    for (int k = 0; k < (int)arrlen(n->in); k++)
        in += (double)shape_numel(&g->values[n->in[k]].shape);
    switch (n->op) {
    case IR_CONV2D:
        return out * (double)g->values[n->in[1]].shape.dim[1] * a->conv.kh * a->conv.kw + in;
    case IR_MATMUL:
        return (double)a->batch * a->m * a->n * a->k + in + out;
    case IR_POOL2D:
        return out * a->conv.kh * a->conv.kw + in;
    case IR_ADAPTIVE_AVG_POOL2D:
        return 4 * in + out;
    default:
        return in + out;
    }
}

/* Folding stops short of this much work for one node: a conv2d or matmul of constants
 * big enough to take seconds here stays a kernel, as does anything that would take the
 * constants past RC_MAX_CONST_BYTES. */
#define FOLD_MAX_WORK (64.0 * 1024 * 1024)

/* Nodes whose inputs are all constants are evaluated now, unless the result is much
 * larger than what it is computed from (a broadcast): that one stays a kernel. */
void fold_constants(Graph *g)
{
    const void **in = NULL;
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        Node *n = &g->nodes[i];
        if (g->values[n->out].kind != VAL_TEMP)
            continue;
        bool all_const = true;
        size_t in_bytes = 0;
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            all_const = all_const && g->values[n->in[k]].kind == VAL_CONST;
            in_bytes += value_bytes(g, n->in[k]);
        }
        size_t out_bytes = value_bytes(g, n->out);
        if (!all_const || out_bytes > 2 * in_bytes + 65536 ||
            !graph_const_fits(g, (int64_t)out_bytes) || node_work(g, n) > FOLD_MAX_WORK)
            continue;
        arrsetlen(in, 0);
        for (int k = 0; k < (int)arrlen(n->in); k++)
            arrput(in, g->consts[g->values[n->in[k]].constant].data);
        Value *y = &g->values[n->out];
        Tensor t;
        memset(&t, 0, sizeof t);
        t.dtype = y->dtype;
        t.shape = y->shape;
        t.nbytes = out_bytes;
        t.data = xmalloc(out_bytes ? out_bytes : 1);
        ref_eval(g, n, in, t.data);
        arrput(g->consts, t);
        g->const_bytes += (int64_t)out_bytes;
        y = &g->values[n->out];
        y->kind = VAL_CONST;
        y->constant = (int)arrlen(g->consts) - 1;
        y->producer = -1;
        for (int k = 0; k < (int)arrlen(n->in) && !y->name; k++) /* a weight's own name */
            if (g->values[n->in[k]].name)
                y->name = xstrdup(g->values[n->in[k]].name);
    }
    arrfree(in);
    remove_dead(g);
}

void remove_dead(Graph *g)
{
    int nv = (int)arrlen(g->values);
    bool *live = xcalloc((size_t)nv + 1, sizeof(bool));
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        live[g->outputs[i]] = true;
    /* nodes are in execution order: walk back, marking what live nodes read */
    for (int i = (int)arrlen(g->nodes) - 1; i >= 0; i--) {
        Node *n = &g->nodes[i];
        bool keep = live[n->out] && g->values[n->out].kind == VAL_TEMP &&
                    g->values[n->out].producer == i;
        if (!keep)
            continue;
        for (int k = 0; k < (int)arrlen(n->in); k++)
            live[n->in[k]] = true;
    }
    Node *kept = NULL;
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        Node *n = &g->nodes[i];
        if (live[n->out] && g->values[n->out].kind == VAL_TEMP && g->values[n->out].producer == i) {
            g->values[n->out].producer = (int)arrlen(kept);
            arrput(kept, *n);
        } else {
            if (g->values[n->out].producer == i)
                g->values[n->out].producer = -1;    /* dead: no node computes it now */
            graph_node_free(n);
        }
    }
    arrfree(g->nodes);
    g->nodes = kept;
    /* drop the data of constants nothing reads any more */
    bool *used = xcalloc(arrlen(g->consts) + 1, sizeof(bool));
    for (int v = 0; v < nv; v++)
        if (live[v] && g->values[v].kind == VAL_CONST)
            used[g->values[v].constant] = true;
    for (int c = 0; c < (int)arrlen(g->consts); c++)
        if (!used[c])
            tensor_free(&g->consts[c]);
    free(used);
    free(live);
}

const Pass passes[] = {
    { "fold-constants", fold_constants, false },
    { "fuse-qnn", fuse_qnn, false },
    { "fuse", fuse, false },
    { "pack", pack, true },
    { "pack-qnn", pack_qnn, true },
    { NULL, NULL, false },
};
