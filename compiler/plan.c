/*
 * plan.c: places every intermediate tensor in one workspace, at offsets chosen by
 * liveness. Views (reshape) share their source's storage; an elementwise result reuses
 * its input's buffer when that input dies at the same node (in place); results that are
 * model outputs are written straight into the caller's output buffers. Buffers are then
 * placed largest first, each at the lowest offset that no buffer live at the same time
 * occupies (greedy best-fit by size). A kernel's scratch (Tile.scratch: the row buffers of
 * some tuned kernels) is one more buffer, live at its node's step alone. The lower bound,
 * the most bytes live at one step, is kept in the plan, so a test can check the plan
 * against it.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static int find(int *parent, int v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

static int64_t align_up(int64_t x) { return (x + RC_WORKSPACE_ALIGN - 1) / RC_WORKSPACE_ALIGN * RC_WORKSPACE_ALIGN; }

typedef struct {
    int group;              /* the value owning the buffer; scratch: node count + node */
    int node;               /* scratch: the node; -1: a value buffer */
    int64_t size;
    int first, last;
} Interval;

static int cmp_interval(const void *a, const void *b)
{
    const Interval *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first - y->first;
    return x->group - y->group;
}

static int cmp_first(const void *a, const void *b)
{
    const Interval *x = a, *y = b;
    if (x->first != y->first)
        return x->first - y->first;
    return cmp_interval(a, b);
}

static int cmp_length(const void *a, const void *b)
{
    const Interval *x = a, *y = b;
    int lx = x->last - x->first, ly = y->last - y->first;
    if (lx != ly)
        return ly - lx;
    return cmp_interval(a, b);
}

static int cmp_placed(const void *a, const void *b)
{
    const PlanBuf *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Places the intervals in the given order, each at the lowest offset free for its whole
 * live range; live[t] lists the buffers placed alive at step t, so finding an interval's
 * clashes costs its length, not the whole plan. Returns the workspace size. */
static int64_t place(const Interval *iv, int nn, PlanBuf **out)
{
    PlanBuf *placed = NULL;
    int64_t ws = 0;
    PlanBuf *clash = NULL;
    int **live = xcalloc((size_t)nn + 2, sizeof(int *));
    int *stamp = xcalloc((size_t)arrlen(iv) + 1, sizeof(int));
    for (int i = 0; i < (int)arrlen(iv); i++) {
        arrsetlen(clash, 0);
        int lo = iv[i].first < 0 ? 0 : iv[i].first, hi = iv[i].last > nn ? nn : iv[i].last;
        for (int t = lo; t <= hi; t++)
            for (int k = 0; k < (int)arrlen(live[t]); k++) {
                int q = live[t][k];
                if (stamp[q] != i + 1) {
                    stamp[q] = i + 1;
                    arrput(clash, placed[q]);
                }
            }
        if (arrlen(clash) > 1)
            qsort(clash, arrlen(clash), sizeof(PlanBuf), cmp_placed);
        int64_t off = 0;
        for (int k = 0; k < (int)arrlen(clash); k++) {
            if (clash[k].offset >= off + iv[i].size)
                break;
            if (clash[k].offset + clash[k].size > off)
                off = clash[k].offset + clash[k].size;
        }
        PlanBuf pb = { iv[i].node < 0 ? iv[i].group : -1, iv[i].node, off, iv[i].size,
                       iv[i].first, iv[i].last };
        arrput(placed, pb);
        for (int t = lo; t <= hi; t++)
            arrput(live[t], (int)arrlen(placed) - 1);
        if (off + iv[i].size > ws)
            ws = off + iv[i].size;
    }
    arrfree(clash);
    for (int t = 0; t <= nn + 1; t++)
        arrfree(live[t]);
    free(live);
    free(stamp);
    *out = placed;
    return ws;
}

void plan_memory(const Graph *g, Plan *p)
{
    int nv = (int)arrlen(g->values), nn = (int)arrlen(g->nodes);
    memset(p, 0, sizeof *p);
    p->st = xcalloc((size_t)nv + 1, sizeof(Storage));
    int *parent = xmalloc(((size_t)nv + 1) * sizeof(int));
    int *first = xmalloc(((size_t)nv + 1) * sizeof(int));
    int *last = xmalloc(((size_t)nv + 1) * sizeof(int));
    int *bound = xmalloc(((size_t)nv + 1) * sizeof(int)); /* group -> output index or -1 */
    for (int v = 0; v < nv; v++) {
        parent[v] = v;
        bound[v] = -1;
        first[v] = g->values[v].kind == VAL_TEMP ? g->values[v].producer : -1;
        last[v] = first[v];
    }
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        for (int k = 0; k < (int)arrlen(n->in); k++)
            last[n->in[k]] = i;
        if (n->op == IR_RESHAPE)
            parent[n->out] = find(parent, n->in[0]);
    }
    /* group live ranges: a group lives while any member does */
    for (int v = 0; v < nv; v++) {
        int r = find(parent, v);
        if (r != v && g->values[v].kind == VAL_TEMP) {
            if (last[v] > last[r])
                last[r] = last[v];
        }
    }
    /* outputs computed here are written straight into the caller's buffers */
    for (int k = 0; k < (int)arrlen(g->outputs); k++) {
        int r = find(parent, g->outputs[k]);
        if (g->values[r].kind == VAL_TEMP && bound[r] < 0)
            bound[r] = k;
        else
            arrput(p->copy_outputs, k);
        if (g->values[r].kind == VAL_TEMP)
            last[r] = nn; /* alive to the end */
    }
    /* in place: an elementwise result takes over an input buffer that dies here */
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        if (n->op != IR_UNARY && n->op != IR_BINARY)
            continue;
        int ro = find(parent, n->out);
        if (bound[ro] >= 0)
            continue;
        size_t ob = (size_t)shape_numel(&g->values[n->out].shape) * dtype_size(g->values[n->out].dtype);
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            int x = n->in[k], rx = find(parent, x);
            const Value *xv = &g->values[rx];
            size_t xb = (size_t)shape_numel(&xv->shape) * dtype_size(xv->dtype);
            if (xv->kind != VAL_TEMP || bound[rx] >= 0 || last[rx] != i || xb != ob)
                continue;
            parent[ro] = rx;
            last[rx] = last[ro] > last[rx] ? last[ro] : last[rx];
            break;
        }
    }
    /* one interval per workspace group */
    Interval *iv = NULL;
    for (int v = 0; v < nv; v++) {
        const Value *x = &g->values[v];
        if (find(parent, v) != v || x->kind != VAL_TEMP || bound[v] >= 0 || first[v] < 0)
            continue;               /* first < 0: a dead value (remove_dead dropped its node) */
        Interval it = { v, -1, align_up((int64_t)shape_numel(&x->shape) * (int64_t)dtype_size(x->dtype)),
                        first[v], last[v] };
        arrput(iv, it);
    }
    /* kernels' scratch: live for their own step only */
    for (int i = 0; i < nn; i++)
        if (g->nodes[i].a.tile.scratch > 0) {
            Interval it = { nv + i, i, align_up(g->nodes[i].a.tile.scratch), i, i };
            arrput(iv, it);
        }
    /* greedy placement under a few orders; keep the smallest workspace */
    int (*orders[])(const void *, const void *) = { cmp_interval, cmp_first, cmp_length };
    PlanBuf *placed = NULL;
    for (int o = 0; o < 3; o++) {
        if (arrlen(iv) > 1)
            qsort(iv, arrlen(iv), sizeof(Interval), orders[o]);
        PlanBuf *trial = NULL;
        int64_t ws = place(iv, nn, &trial);
        if (o == 0 || ws < p->workspace) {
            arrfree(placed);
            placed = trial;
            p->workspace = ws;
        } else {
            arrfree(trial);
        }
    }
    /* the lower bound: most bytes live at one step (a sweep over interval ends) */
    int64_t *delta = xcalloc((size_t)nn + 3, sizeof(int64_t));
    for (int k = 0; k < (int)arrlen(iv); k++) {
        int lo = iv[k].first < 0 ? 0 : iv[k].first, hi = iv[k].last > nn ? nn : iv[k].last;
        delta[lo] += iv[k].size;
        delta[hi + 1] -= iv[k].size;
    }
    int64_t cur = 0;
    for (int t = 0; t <= nn; t++) {
        cur += delta[t];
        if (cur > p->peak) {
            p->peak = cur;
            p->peak_step = t;
        }
    }
    free(delta);
    /* storage of every value, through its group */
    int *group_buf = xmalloc(((size_t)nv + 1) * sizeof(int));
    for (int v = 0; v < nv; v++)
        group_buf[v] = -1;
    p->scratch = xcalloc((size_t)nn + 1, sizeof(int64_t));
    for (int k = 0; k < (int)arrlen(placed); k++) {
        if (placed[k].node >= 0)
            p->scratch[placed[k].node] = placed[k].offset;
        else
            group_buf[placed[k].value] = k;
    }
    for (int v = 0; v < nv; v++) {
        const Value *x = &g->values[v];
        int r = find(parent, v);
        Storage *s = &p->st[v];
        if (x->kind == VAL_INPUT) {
            s->kind = ST_INPUT, s->index = x->input;
        } else if (x->kind == VAL_CONST) {
            s->kind = ST_CONST, s->index = x->constant;
        } else if (g->values[r].kind == VAL_INPUT) {
            s->kind = ST_INPUT, s->index = g->values[r].input;
        } else if (g->values[r].kind == VAL_CONST) {
            s->kind = ST_CONST, s->index = g->values[r].constant;
        } else if (bound[r] >= 0) {
            s->kind = ST_OUTPUT, s->index = bound[r];
        } else if (group_buf[r] >= 0) {
            s->kind = ST_WORKSPACE, s->offset = placed[group_buf[r]].offset;
        } else {
            s->kind = ST_NONE;
        }
    }
    /* report buffers in offset order, then by first use */
    p->bufs = placed;
    arrfree(iv);
    free(group_buf);
    free(parent);
    free(first);
    free(last);
    free(bound);
}

void plan_free(Plan *p)
{
    free(p->st);
    free(p->scratch);
    arrfree(p->bufs);
    arrfree(p->copy_outputs);
    memset(p, 0, sizeof *p);
}
