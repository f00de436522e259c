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
        if (!all_const || out_bytes > 2 * in_bytes + 65536)
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
        y = &g->values[n->out];
        y->kind = VAL_CONST;
        y->constant = (int)arrlen(g->consts) - 1;
        y->producer = -1;
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
            arrfree(n->in);
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
    { "fold-constants", fold_constants },
    { NULL, NULL },
};
