/*
 * plan.c: places every intermediate tensor in one workspace, at offsets chosen by
 * liveness. Some values lie inside another's storage, deliberately (Storage.alias):
 * views (reshape) share their source's storage, and so does a contiguous slice (a split
 * along the outermost axis that is not 1, a strided_slice of whole rows), at its offset;
 * the operands of a concatenate along such an axis that nothing else reads are written by
 * their producers straight into their place in the result (also through a reshape of a
 * result that only the reshape reads), so the concatenate copies nothing. A group of values sharing storage lives from its first producer to its last
 * use. An elementwise result reuses its input's buffer when that input dies at the same
 * node (in place); results that are model outputs are written straight into the caller's
 * output buffers. Buffers are then placed largest first, each at the lowest offset that no
 * buffer live at the same time occupies (greedy best-fit by size). A kernel's scratch
 * (Tile.scratch: the row buffers of some tuned kernels) is one more buffer, live at its
 * node's step alone. The lower bound, the most bytes live at one step, is kept in the
 * plan, so a test can check the plan against it.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

/* Groups of values sharing storage: parent[v] and v's byte offset inside it, at[v]. */
typedef struct {
    int *parent;
    int64_t *at;
} Groups;

/* The root of v's group; *off (may be NULL): v's byte offset inside the root's storage. */
static int find(Groups *gr, int v, int64_t *off)
{
    int r = v;
    int64_t o = 0;
    while (gr->parent[r] != r) {
        o += gr->at[r];
        r = gr->parent[r];
    }
    if (off)
        *off = o;
    while (gr->parent[v] != r && v != r) { /* path compression, offsets kept */
        int next = gr->parent[v];
        int64_t own = gr->at[v];
        gr->parent[v] = r;
        gr->at[v] = o;
        o -= own;
        v = next;
    }
    return r;
}

static int64_t value_bytes(const Graph *g, int v)
{
    return shape_numel(&g->values[v].shape) * (int64_t)dtype_size(g->values[v].dtype);
}

/* The element offset of a copy whose output is a contiguous run of its input (out[i] =
 * x[xoff + i]), or -1. */
static int64_t contiguous_slice(const Graph *g, const Node *n)
{
    const Shape *s = &g->values[n->out].shape;
    int64_t st[RC_MAX_RANK];
    shape_strides(s, st);
    for (int d = 0; d < s->rank; d++)
        if (s->dim[d] > 1 && n->a.xstride[d] != st[d])
            return -1;
    if (n->a.xoff < 0 || n->a.xoff + shape_numel(s) > shape_numel(&g->values[n->in[0]].shape))
        return -1;
    return n->a.xoff;
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

/* The lower bound of a plan: the most bytes live at one step (a sweep over interval
 * ends); *step (may be NULL): the first step where it is reached. */
static int64_t live_peak(const Interval *iv, int nn, int *step)
{
    int64_t *delta = xcalloc((size_t)nn + 3, sizeof(int64_t));
    for (int k = 0; k < (int)arrlen(iv); k++) {
        int lo = iv[k].first < 0 ? 0 : iv[k].first, hi = iv[k].last > nn ? nn : iv[k].last;
        delta[lo] += iv[k].size;
        delta[hi + 1] -= iv[k].size;
    }
    int64_t cur = 0, peak = 0;
    for (int t = 0; t <= nn; t++) {
        cur += delta[t];
        if (cur > peak) {
            peak = cur;
            if (step)
                *step = t;
        }
    }
    free(delta);
    return peak;
}

/* Shuffled orders plan_memory tries after the fixed ones, while above the lower bound. */
#define PLAN_SHUFFLES 32

/* May concatenate operand x be written straight into its place in the result? Only a
 * computed value that the concatenate alone reads (once), that is no model output and
 * shares no storage yet (values placed in it by an inner concatenate aside). */
static bool placeable(const Graph *g, Groups *gr, const int *uses, const bool *is_output,
                      const bool *viewed, const int *first, int x)
{
    return g->values[x].kind == VAL_TEMP && first[x] >= 0 && uses[x] == 1 && !is_output[x] &&
           find(gr, x, NULL) == x && !viewed[x] && value_bytes(g, x) > 0;
}

/* The value a concatenate operand x views, when x is a reshape that the concatenate
 * alone reads of a computed value that only x reads: that value can be written in
 * place (x then lies at the same bytes); -1 otherwise. */
static int placeable_view(const Graph *g, Groups *gr, const int *uses, const bool *is_output,
                          const bool *viewed, const int *first, int x)
{
    const Value *xv = &g->values[x];
    if (xv->kind != VAL_TEMP || xv->producer < 0 || g->nodes[xv->producer].op != IR_RESHAPE ||
        uses[x] != 1 || is_output[x] || viewed[x])
        return -1;
    int r = g->nodes[xv->producer].in[0];
    int64_t off;
    if (find(gr, x, &off) != r || off != 0 || find(gr, r, NULL) != r)
        return -1;
    return g->values[r].kind == VAL_TEMP && first[r] >= 0 && uses[r] == 1 && !is_output[r] &&
                   value_bytes(g, r) == value_bytes(g, x) && value_bytes(g, x) > 0
               ? r : -1;
}

void plan_memory(const Graph *g, Plan *p)
{
    int nv = (int)arrlen(g->values), nn = (int)arrlen(g->nodes);
    memset(p, 0, sizeof *p);
    p->st = xcalloc((size_t)nv + 1, sizeof(Storage));
    Groups gr = { xmalloc(((size_t)nv + 1) * sizeof(int)), xcalloc((size_t)nv + 1, sizeof(int64_t)) };
    int *first = xmalloc(((size_t)nv + 1) * sizeof(int));
    int *last = xmalloc(((size_t)nv + 1) * sizeof(int));
    int *bound = xmalloc(((size_t)nv + 1) * sizeof(int)); /* group -> output index or -1 */
    int *alias = xmalloc(((size_t)nv + 1) * sizeof(int)); /* Storage.alias */
    int *uses = xcalloc((size_t)nv + 1, sizeof(int));     /* input slots reading each value */
    bool *viewed = xcalloc((size_t)nv + 1, sizeof(bool)); /* a view lies in v's storage */
    bool *is_output = xcalloc((size_t)nv + 1, sizeof(bool));
    for (int v = 0; v < nv; v++) {
        gr.parent[v] = v;
        bound[v] = -1;
        alias[v] = -1;
        first[v] = g->values[v].kind == VAL_TEMP ? g->values[v].producer : -1;
        last[v] = first[v];
    }
    for (int k = 0; k < (int)arrlen(g->outputs); k++)
        is_output[g->outputs[k]] = true;
    /* views: a reshape, or a copy of a contiguous run of its input (constants are folded) */
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            last[n->in[k]] = i;
            uses[n->in[k]]++;
        }
        int64_t off = n->op == IR_RESHAPE ? 0 : -1, xo;
        if (n->op == IR_COPY && g->values[n->in[0]].kind != VAL_CONST && contiguous_slice(g, n) >= 0)
            off = contiguous_slice(g, n) * (int64_t)dtype_size(g->values[n->out].dtype);
        if (off < 0)
            continue;
        int r = find(&gr, n->in[0], &xo);
        gr.parent[n->out] = r, gr.at[n->out] = xo + off;
        alias[n->out] = n->in[0];
        viewed[r] = true;
    }
    /* a concatenate along its outermost axis that is not 1: each operand is one contiguous
     * run of the result, which its producer can write in place */
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        if (n->op != IR_CONCAT)
            continue;
        const Shape *s = &g->values[n->out].shape;
        bool outer = true;
        for (int d = 0; d < n->a.axis; d++)
            outer = outer && s->dim[d] == 1;
        int64_t at = 0;
        for (int k = 0; outer && k < (int)arrlen(n->in); k++) {
            int x = n->in[k], r = placeable_view(g, &gr, uses, is_output, viewed, first, x);
            if (placeable(g, &gr, uses, is_output, viewed, first, x)) {
                gr.parent[x] = n->out, gr.at[x] = at;
                alias[x] = n->out;
            } else if (r >= 0) { /* an operand viewing its producer's result: the result */
                gr.parent[r] = n->out, gr.at[r] = at;
                alias[r] = n->out;
            }
            at += value_bytes(g, x);
        }
    }
    /* group live ranges: a group lives from its first producer to its last use */
    for (int v = 0; v < nv; v++) {
        int r = find(&gr, v, NULL);
        if (r != v && g->values[v].kind == VAL_TEMP && g->values[r].kind == VAL_TEMP) {
            if (last[v] > last[r])
                last[r] = last[v];
            if (first[v] >= 0 && first[v] < first[r])
                first[r] = first[v];
        }
    }
    /* outputs computed here are written straight into the caller's buffers: a group that
     * is exactly the output (a view of part of a buffer is copied) */
    for (int k = 0; k < (int)arrlen(g->outputs); k++) {
        int64_t o;
        int v = g->outputs[k], r = find(&gr, v, &o);
        if (g->values[r].kind == VAL_TEMP && bound[r] < 0 && o == 0 &&
            value_bytes(g, v) == value_bytes(g, r))
            bound[r] = k;
        else
            arrput(p->copy_outputs, k);
        if (g->values[r].kind == VAL_TEMP)
            last[r] = nn; /* alive to the end */
    }
    /* in place: an elementwise result takes over an input buffer that dies here (both
     * groups exactly the size of the result) */
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        if (n->op != IR_UNARY && n->op != IR_BINARY)
            continue;
        int64_t oo;
        int ro = find(&gr, n->out, &oo);
        int64_t ob = value_bytes(g, n->out);
        if (bound[ro] >= 0 || oo != 0 || value_bytes(g, ro) != ob)
            continue;
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            int64_t xo;
            int rx = find(&gr, n->in[k], &xo);
            if (g->values[rx].kind != VAL_TEMP || bound[rx] >= 0 || last[rx] != i || xo != 0 ||
                value_bytes(g, rx) != ob)
                continue;
            gr.parent[ro] = rx, gr.at[ro] = 0;
            last[rx] = last[ro] > last[rx] ? last[ro] : last[rx];
            first[rx] = first[ro] < first[rx] ? first[ro] : first[rx];
            break;
        }
    }
    /* one interval per workspace group */
    Interval *iv = NULL;
    for (int v = 0; v < nv; v++) {
        const Value *x = &g->values[v];
        if (find(&gr, v, NULL) != v || x->kind != VAL_TEMP || bound[v] >= 0 || first[v] < 0)
            continue;               /* first < 0: a dead value (remove_dead dropped its node) */
        Interval it = { v, -1, align_up(value_bytes(g, v)), first[v], last[v] };
        arrput(iv, it);
    }
    /* kernels' scratch: live for their own step only */
    for (int i = 0; i < nn; i++)
        if (g->nodes[i].a.tile.scratch > 0) {
            Interval it = { nv + i, i, align_up(g->nodes[i].a.tile.scratch), i, i };
            arrput(iv, it);
        }
    /* greedy placement under a few orders, then (while above the lower bound) under
     * shuffled orders from a fixed seed, so the plan stays deterministic; keep the
     * smallest workspace. A shuffle finds what no fixed order does where a small buffer
     * must share a hole with one order of the large ones (qnn_mbv2_block once its pad was
     * folded: 20736 bytes under the orders, 18432, the bound, shuffled) */
    int (*orders[])(const void *, const void *) = { cmp_interval, cmp_first, cmp_length };
    int64_t lower = live_peak(iv, nn, NULL);
    PlanBuf *placed = NULL;
    uint32_t seed = 0x9e3779b9u;
    for (int o = 0; o < 3 + PLAN_SHUFFLES && (o < 3 || p->workspace > lower); o++) {
        if (o < 3 && arrlen(iv) > 1) {
            qsort(iv, arrlen(iv), sizeof(Interval), orders[o]);
        } else if (o >= 3) {
            for (int k = (int)arrlen(iv) - 1; k > 0; k--) { /* Fisher-Yates, xorshift32 */
                seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
                int j = (int)(seed % (uint32_t)(k + 1));
                Interval t = iv[k];
                iv[k] = iv[j], iv[j] = t;
            }
        }
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
    /* the lower bound, kept in the plan */
    p->peak = live_peak(iv, nn, &p->peak_step);
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
        int64_t o;
        int r = find(&gr, v, &o);
        Storage *s = &p->st[v];
        s->alias = alias[v];
        if (x->kind == VAL_INPUT) {
            s->kind = ST_INPUT, s->index = x->input;
        } else if (x->kind == VAL_CONST) {
            s->kind = ST_CONST, s->index = x->constant;
        } else if (g->values[r].kind == VAL_INPUT) {
            s->kind = ST_INPUT, s->index = g->values[r].input, s->offset = o;
        } else if (g->values[r].kind == VAL_CONST) {
            s->kind = ST_CONST, s->index = g->values[r].constant; /* reshapes only: o is 0 */
        } else if (bound[r] >= 0) {
            s->kind = ST_OUTPUT, s->index = bound[r], s->offset = o;
        } else if (group_buf[r] >= 0) {
            s->kind = ST_WORKSPACE, s->offset = placed[group_buf[r]].offset + o;
        } else {
            s->kind = ST_NONE;
        }
    }
    /* report buffers in offset order, then by first use */
    p->bufs = placed;
    arrfree(iv);
    free(group_buf);
    free(gr.parent);
    free(gr.at);
    free(first);
    free(last);
    free(bound);
    free(alias);
    free(uses);
    free(viewed);
    free(is_output);
}

void plan_free(Plan *p)
{
    free(p->st);
    free(p->scratch);
    arrfree(p->bufs);
    arrfree(p->copy_outputs);
    memset(p, 0, sizeof *p);
}

bool plan_self_copy(const Graph *g, const Plan *p, int node, const KCall *c)
{
    const Node *n = &g->nodes[node];
    if (c->kind != KG_LIBRARY || strcmp(c->kernel, "rk_copy") || c->narg != 1 || c->arg[0] < 0)
        return false;
    const CopyParams *cp = &c->p.CopyParams;
    const Storage *sx = &p->st[n->in[c->arg[0]]], *sy = &p->st[n->out];
    if (sx->kind != sy->kind || sx->kind == ST_NONE || sx->kind == ST_CONST ||
        (sx->kind != ST_WORKSPACE && sx->index != sy->index))
        return false;
    if (sx->offset + (int64_t)cp->xoff * cp->esize != sy->offset + (int64_t)cp->yoff * cp->esize)
        return false;
    for (int d = 0; d < cp->rank; d++)
        if (cp->shape[d] > 1 && cp->xs[d] != cp->ys[d])
            return false;
    return true;
}

bool plan_elided(const Graph *g, const Plan *p, int node)
{
    if (ir_ops[g->nodes[node].op].view)
        return true;
    KCall *calls = ir_calls(g, &g->nodes[node]);
    bool all = arrlen(calls) > 0;
    for (int k = 0; k < (int)arrlen(calls) && all; k++)
        all = plan_self_copy(g, p, node, &calls[k]);
    arrfree(calls);
    return all;
}
