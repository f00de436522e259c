/*
 * fuse.c: the pass that shapes conv2d and matmul for the tuned kernels.
 *
 * unbatch (first): a batched matmul whose b is one constant matrix broadcast over the
 *   batches (TVM's PyTorch frontend writes a 3-d nn.Linear so) becomes one matmul of
 *   batch * m rows.
 * shuffle (next): a transpose of a concatenate, seen through reshapes, where each operand
 *   is one slice of the transposed tensor (ShuffleNet's channel shuffle: concatenate along
 *   channels, reshape [1, g, c/g, h, w], transpose (0, 2, 1, 3, 4), reshape back), becomes
 *   one concatenate of the operands, each reshaped (a view), along the axis the slices
 *   moved to: the data is copied once, not twice, and the interleaving is free.
 * swish (next): multiply(x, sigmoid(x)) becomes one unary op, silu(x).
 * fuse: a conv2d or matmul with constant weights absorbs the elementwise nodes that
 *   follow it, one at a time, while its result has no other reader and is no output:
 *   - multiply by a per-channel (or scalar) constant, before any other step, scales the
 *     weights and the bias (batch_norm's scale); add / subtract of one adds to the bias
 *     (bias_add, batch_norm's shift). New constants are made; shared ones stay as they are;
 *   - any other float op becomes an epilogue step (Attrs.ep): unary ops (relu, clip, ...)
 *     and binary ops whose other operand is a per-channel vector, a scalar or a tensor of
 *     the output's shape (a residual), which joins the node's inputs.
 *   The fused node takes over the last node's output value, so the intermediate is never
 *   stored. Views between them (reshape, expand_dims, squeeze: a 1-D conv is a conv2d of
 *   height 1 between two) are seen through: the operands are classified against the
 *   view's shape, and the last view then reads the fused node's result. When an operand is computed after the conv2d, the fused node moves down to
 *   the position of the node it absorbed.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static const Value *val(const Graph *g, int v) { return &g->values[v]; }

static bool is_const_f32(const Graph *g, int v)
{
    return val(g, v)->kind == VAL_CONST && val(g, v)->dtype == DT_F32;
}

bool tunable_runtime_b(const Graph *g, const Node *n)
{
    return n->op == IR_MATMUL && !is_const_f32(g, n->in[1]);
}

bool tunable(const Graph *g, const Node *n)
{
    if (val(g, n->out)->dtype != DT_F32 || val(g, n->in[0])->dtype != DT_F32 ||
        val(g, n->in[1])->dtype != DT_F32 || shape_numel(&val(g, n->out)->shape) == 0)
        return false;
    if (n->op == IR_CONV2D)
        return is_const_f32(g, n->in[1]);
    if (n->op != IR_MATMUL || n->a.ta || n->a.m <= 0 || n->a.n <= 0 || n->a.k <= 0)
        return false;
    /* constant weights: one matrix, packed; a batched product of two computed operands:
     * its rows of b ([k][n]) read in place, batch by batch (nn.batch_matmul) */
    return tunable_runtime_b(g, n) ? !n->a.tb : n->a.batch == 1;
}

/* How an operand of shape s broadcasts against r, the shape of n's output or of a view
 * of it (a reshape: the same elements in the same order), or -1 when it is not one of the
 * three forms an epilogue reads. Per channel: the axes of r along which the operand varies
 * are one run whose elements are, in order, the channels of n's output (the same count,
 * with the same number of elements after each step). */
/* The run of r's axes along which an operand of shape s (broadcast against r) varies:
 * *count elements along it, *after elements after each step of it; false when the axes
 * it varies along are not one run. */
static bool operand_run(const Shape *r, const Shape *s, int64_t *count, int64_t *after)
{
    int first = -1, last = -1;
    for (int d = 0; d < r->rank; d++) {
        int sd = d - (r->rank - s->rank);
        if (sd >= 0 && s->dim[sd] != 1) {
            if (first < 0)
                first = d;
            else if (last != d - 1)
                return false;
            last = d;
        }
    }
    *count = *after = 1;
    for (int d = first; first >= 0 && d <= last; d++)
        *count *= r->dim[d];
    for (int d = last + 1; d < r->rank; d++)
        *after *= r->dim[d];
    return true;
}

static int classify(const Graph *g, const Node *n, const Shape *r, const Shape *s)
{
    const Shape *y = &val(g, n->out)->shape;
    if (s->rank > r->rank)
        return -1;
    if (shape_numel(s) == 1)
        return EPB_SCALAR;
    if (shape_numel(s) == shape_numel(r))
        return EPB_FULL;
    int caxis = n->op == IR_CONV2D ? 1 : y->rank - 1;
    int64_t inner = 1, count, after;
    for (int d = caxis + 1; d < y->rank; d++)
        inner *= y->dim[d];
    if (!operand_run(r, s, &count, &after))
        return -1;
    return count == y->dim[caxis] && after == inner ? EPB_CHANNEL : -1;
}

/* A new float32 constant of shape s (data copied) made from value from. */
static int new_const(Graph *g, const Shape *s, const float *data, int from)
{
    return graph_add_const_copy(g, DT_F32, s, data, g->values[from].json, from);
}

static const float *cdata(const Graph *g, int v)
{
    return (const float *)g->consts[val(g, v)->constant].data;
}

/* Folds "v * s" (mul) or "v + s" (add; sign -1 for v - s) with a per-channel or scalar
 * constant s into n's weights and bias. Returns false when the constants would not fit. */
static bool fold_into_weights(Graph *g, Node *n, int s, int bcast, bool mul, float sign)
{
    int64_t C = tile_channels(g, n);
    const float *sv = cdata(g, s);
    if (mul) {
        int64_t wn = shape_numel(&val(g, n->in[1])->shape);
        if (!graph_const_fits(g, (wn + C) * (int64_t)sizeof(float)))
            return false;
        const Shape ws = val(g, n->in[1])->shape;
        float *w = xmalloc((size_t)(wn ? wn : 1) * sizeof(float));
        memcpy(w, cdata(g, n->in[1]), (size_t)wn * sizeof(float));
        for (int64_t i = 0; i < wn; i++) {
            /* the channel of weight element i: conv OIHW row; matmul b [n][k] or [k][n] */
            int64_t c = n->op == IR_CONV2D ? i / (wn / C) : n->a.tb ? i / n->a.k : i % n->a.n;
            w[i] *= sv[bcast == EPB_SCALAR ? 0 : c];
        }
        n->in[1] = new_const(g, &ws, w, n->in[1]);
        free(w);
        if (n->a.bias) {
            float *b = xmalloc((size_t)C * sizeof(float));
            for (int64_t c = 0; c < C; c++)
                b[c] = cdata(g, n->in[n->a.bias])[c] * sv[bcast == EPB_SCALAR ? 0 : c];
            Shape bs = { 1, { C } };
            n->in[n->a.bias] = new_const(g, &bs, b, n->a.bias ? n->in[n->a.bias] : s);
            free(b);
        }
        return true;
    }
    if (!graph_const_fits(g, C * (int64_t)sizeof(float)))
        return false;
    float *b = xmalloc((size_t)C * sizeof(float));
    for (int64_t c = 0; c < C; c++)
        b[c] = (n->a.bias ? cdata(g, n->in[n->a.bias])[c] : 0.0f) +
               sign * sv[bcast == EPB_SCALAR ? 0 : c];
    Shape bs = { 1, { C } };
    int nb = new_const(g, &bs, b, n->a.bias ? n->in[n->a.bias] : s);
    free(b);
    if (n->a.bias) {
        n->in[n->a.bias] = nb;
    } else {
        arrput(n->in, nb);
        n->a.bias = (int)arrlen(n->in) - 1;
    }
    return true;
}

/* Tries to absorb c, which reads cv, into n; v is n's output or a view of it, against
 * whose shape c's operand is classified (cv itself, or, for ops sunk through data
 * movement, n's output). Returns false (nothing changed) when c is not an elementwise op
 * n can take. */
static bool absorb(Graph *g, Node *n, const Node *c, int v, int cv)
{
    if ((c->op != IR_UNARY && c->op != IR_BINARY) || val(g, c->out)->dtype != DT_F32 ||
        !shape_eq(&val(g, c->out)->shape, &val(g, cv)->shape) || c->a.ew == EW_CAST)
        return false;
    EpStep st;
    memset(&st, 0, sizeof st);
    st.ew = c->a.ew;
    st.p0 = c->a.p0;
    st.p1 = c->a.p1;
    if (c->op == IR_UNARY) {
        if (c->in[0] != cv || n->a.ep.n >= RC_MAX_EPILOGUE)
            return false;
        n->a.ep.step[n->a.ep.n++] = st;
        return true;
    }
    if ((c->in[0] == cv) == (c->in[1] == cv))
        return false; /* cv op cv, or cv not read (cannot happen) */
    int other = c->in[0] == cv ? c->in[1] : c->in[0];
    st.swap = c->in[1] == cv;
    if (val(g, other)->dtype != DT_F32)
        return false;
    int bcast = classify(g, n, &val(g, v)->shape, &val(g, other)->shape);
    if (bcast < 0 || (bcast == EPB_FULL && n->op == IR_MATMUL && n->a.batch > 1))
        return false;
    if (n->a.ep.n == 0 && bcast != EPB_FULL && is_const_f32(g, other) &&
        !tunable_runtime_b(g, n)) {
        if (st.ew == EW_MULTIPLY && fold_into_weights(g, n, other, bcast, true, 1))
            return true;
        if (st.ew == EW_ADD && fold_into_weights(g, n, other, bcast, false, 1))
            return true;
        if (st.ew == EW_SUBTRACT && !st.swap && fold_into_weights(g, n, other, bcast, false, -1))
            return true;
    }
    if (n->a.ep.n >= RC_MAX_EPILOGUE)
        return false;
    st.bcast = (EpBroadcast)bcast;
    arrput(n->in, other);
    st.operand = (int)arrlen(n->in) - 1;
    n->a.ep.step[n->a.ep.n++] = st;
    return true;
}

/* The one matrix every batch of a batched matmul's constant operand b holds, as a new
 * constant, when b is a broadcast of it: a stride-0 copy of a constant (broadcast_to, as
 * TVM's PyTorch frontend writes a 3-d nn.Linear), or a constant whose batches are equal
 * (such a copy folded); -1 otherwise. */
static int one_matrix(Graph *g, const Node *n)
{
    int b = n->in[1];
    int64_t size = (int64_t)n->a.k * n->a.n;
    const Value *bv = val(g, b);
    if (bv->kind == VAL_TEMP && bv->producer >= 0) {
        const Node *cp = &g->nodes[bv->producer];
        int64_t st[RC_MAX_RANK];
        shape_strides(&bv->shape, st);
        if (cp->op != IR_COPY || !is_const_f32(g, cp->in[0]) || bv->shape.rank != 3 ||
            cp->a.xoff != 0 || cp->a.xstride[0] != 0 || cp->a.xstride[1] != st[1] ||
            cp->a.xstride[2] != st[2] || shape_numel(&val(g, cp->in[0])->shape) != size)
            return -1;
        return cp->in[0];
    }
    if (!is_const_f32(g, b) || n->a.sb != size)
        return -1;
    const float *d = cdata(g, b);
    for (int i = 1; i < n->a.batch; i++)
        if (memcmp(d, d + (int64_t)i * size, (size_t)size * sizeof(float)))
            return -1;
    Shape s = { 2, { n->a.tb ? n->a.n : n->a.k, n->a.tb ? n->a.k : n->a.n } };
    return new_const(g, &s, d, b);
}

/* A batched matmul of a matrix broadcast over the batches (b: one_matrix) is one matmul
 * of batch * m rows when a's batches are contiguous: then it takes the tuned, packed
 * kernels like nn.dense. */
static void unbatch(Graph *g)
{
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        Node *n = &g->nodes[i];
        if (n->op != IR_MATMUL || n->a.batch <= 1 || n->a.ta || val(g, n->out)->dtype != DT_F32 ||
            val(g, n->in[0])->dtype != DT_F32 || n->a.sa != (int64_t)n->a.m * n->a.k)
            continue;
        int w = one_matrix(g, n);
        if (w < 0)
            continue;
        n->in[1] = w;
        n->a.m *= n->a.batch;
        n->a.batch = 1;
        n->a.sa = n->a.sb = 0;
    }
}

/* The input axis each output axis of copy t reads when t is a transpose (a permutation
 * of its input's axes, axes of size 1 anywhere); false otherwise. */
static bool transpose_perm(const Graph *g, const Node *t, int *perm)
{
    const Shape *r = &val(g, t->in[0])->shape, *o = &val(g, t->out)->shape;
    int64_t st[RC_MAX_RANK];
    bool used[RC_MAX_RANK] = { false };
    if (t->op != IR_COPY || t->a.xoff != 0 || r->rank != o->rank ||
        shape_numel(r) != shape_numel(o))
        return false;
    shape_strides(r, st);
    for (int q = 0; q < o->rank; q++) {
        perm[q] = -1;
        for (int d = 0; d < r->rank && perm[q] < 0; d++)
            if (!used[d] && r->dim[d] == o->dim[q] && (o->dim[q] == 1 || st[d] == t->a.xstride[q]))
                perm[q] = d, used[d] = true;
        if (perm[q] < 0)
            return false;
    }
    return true;
}

/* The concatenate whose result copy t transposes through reshapes that nothing else reads
 * (t's input is its result viewed as shape r), or -1. */
static int shuffled_concat(const Graph *g, const Node *t, const int *uses)
{
    int v = t->in[0];
    while (val(g, v)->kind == VAL_TEMP && uses[v] == 1 && val(g, v)->producer >= 0) {
        const Node *p = &g->nodes[val(g, v)->producer];
        if (p->op == IR_CONCAT)
            return val(g, v)->producer;
        if (p->op != IR_RESHAPE)
            break;
        v = p->in[0];
    }
    return -1;
}

/* Rewrites t, a transpose of concatenate c (shuffled_concat), into a concatenate of c's
 * operands reshaped, when the operands are equal slices along one axis of the transposed
 * tensor and each slice transposed keeps its layout (so its reshape is a view). New
 * reshape nodes are appended to g->nodes; *at collects (position, node) pairs. */
static bool shuffle_one(Graph *g, int ti, int ci, int **moves)
{
    const Node *c = &g->nodes[ci];
    int perm[RC_MAX_RANK], n = (int)arrlen(c->in);
    if (!transpose_perm(g, &g->nodes[ti], perm) || n < 2)
        return false;
    const Shape *cs = &val(g, c->out)->shape;
    Shape r = val(g, g->nodes[ti].in[0])->shape, o = val(g, g->nodes[ti].out)->shape;
    int64_t outer = 1, inner = 1, len = val(g, c->in[0])->shape.dim[c->a.axis];
    for (int d = 0; d < c->a.axis; d++)
        outer *= cs->dim[d];
    for (int d = c->a.axis + 1; d < cs->rank; d++)
        inner *= cs->dim[d];
    for (int k = 0; k < n; k++)
        if (val(g, c->in[k])->shape.dim[c->a.axis] != len)
            return false;
    /* the axis gx of r that counts the operands: r = [outer..., n, len * inner...] */
    int gx = -1;
    int64_t before = 1;
    for (int d = 0; d < r.rank && gx < 0; d++) {
        if (before == outer && r.dim[d] == n && shape_numel(&r) == outer * n * len * inner)
            gx = d;
        before *= r.dim[d];
    }
    int q = -1;
    for (int d = 0; d < o.rank; d++)
        if (perm[d] == gx)
            q = d;
    if (gx < 0 || q < 0)
        return false;
    /* one slice transposed is a view: its other axes keep their order */
    int prev = -1;
    for (int d = 0; d < o.rank; d++) {
        if (d == q || o.dim[d] == 1)
            continue;
        if (perm[d] < prev)
            return false;
        prev = perm[d];
    }
    Shape slice = o;
    slice.dim[q] = 1;
    int *ops = NULL;
    const Node *t = &g->nodes[ti];
    int json = t->json;
    const char *rop = t->relay_op;
    for (int k = 0; k < n; k++) {
        int x = g->nodes[ci].in[k];
        arrput(ops, graph_add_node(g, IR_RESHAPE, &x, 1, NULL, val(g, x)->dtype, &slice, json, rop));
        arrput(*moves, ti);
        arrput(*moves, (int)arrlen(g->nodes) - 1);
    }
    Node *tn = &g->nodes[ti];
    arrsetlen(tn->in, 0);
    for (int k = 0; k < n; k++)
        arrput(tn->in, ops[k]);
    tn->op = IR_CONCAT;
    memset(&tn->a, 0, sizeof tn->a);
    tn->a.axis = q;
    graph_merge_sources(tn, &g->nodes[ci]);
    arrfree(ops);
    return true;
}

static void shuffle(Graph *g)
{
    int nn = (int)arrlen(g->nodes), nv = (int)arrlen(g->values);
    int *uses = xcalloc((size_t)nv + 1, sizeof(int)), *moves = NULL;
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++)
            uses[g->nodes[i].in[k]]++;
    for (int k = 0; k < (int)arrlen(g->outputs); k++)
        uses[g->outputs[k]] += 2;
    for (int i = 0; i < nn; i++)
        if (g->nodes[i].op == IR_COPY) {
            int c = shuffled_concat(g, &g->nodes[i], uses);
            if (c >= 0)
                shuffle_one(g, i, c, &moves);
        }
    free(uses);
    if (!moves)
        return;
    /* the new reshapes run just before the concatenate that reads them */
    Node *order = NULL;
    int m = 0;
    for (int i = 0; i < nn; i++) {
        for (; m < (int)arrlen(moves) && moves[m] == i; m += 2)
            arrput(order, g->nodes[moves[m + 1]]);
        arrput(order, g->nodes[i]);
    }
    arrfree(g->nodes);
    g->nodes = order;
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        g->values[g->nodes[i].out].producer = i;
    arrfree(moves);
    remove_dead(g);
}

/* Drops the nodes marked dead (absorbed), keeping execution order, then dead values. */
static void drop_dead_nodes(Graph *g, const bool *dead)
{
    Node *kept = NULL;
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        if (dead[i])
            continue;
        g->values[g->nodes[i].out].producer = (int)arrlen(kept);
        arrput(kept, g->nodes[i]);
    }
    arrfree(g->nodes);
    g->nodes = kept;
    remove_dead(g);
}

/* Readers of each value (an output counts 2: it is always stored); free() the array. */
static int *count_uses(const Graph *g)
{
    int *uses = xcalloc(arrlen(g->values) + 1, sizeof(int));
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++)
            uses[g->nodes[i].in[k]]++;
    for (int k = 0; k < (int)arrlen(g->outputs); k++)
        uses[g->outputs[k]] += 2;
    return uses;
}

/* ---- swish: x * sigmoid(x) as one unary op ---- */

/* A float multiply of x by sigmoid(x) (in either order, same shapes, the sigmoid read by
 * nothing else) becomes the unary silu of x (the same operations: elementwise.def), so
 * that x has one reader and the conv2d computing it can take silu into its epilogue
 * (EfficientNet's swish after every conv). */
static void swish(Graph *g)
{
    int nn = (int)arrlen(g->nodes), *uses = count_uses(g);
    bool *dead = xcalloc((size_t)nn + 1, sizeof(bool)), any = false;
    for (int i = 0; i < nn; i++) {
        Node *m = &g->nodes[i];
        if (m->op != IR_BINARY || m->a.ew != EW_MULTIPLY || val(g, m->out)->dtype != DT_F32)
            continue;
        for (int k = 0; k < 2; k++) {
            int sv = m->in[k], x = m->in[1 - k], si = val(g, sv)->producer;
            if (val(g, sv)->kind != VAL_TEMP || si < 0 || uses[sv] != 1)
                continue;
            Node *s = &g->nodes[si];
            if (s->op != IR_UNARY || s->a.ew != EW_SIGMOID || s->in[0] != x ||
                !shape_eq(&val(g, x)->shape, &val(g, m->out)->shape))
                continue;
            m->op = IR_UNARY;
            m->a.ew = EW_SILU;
            m->a.p0 = m->a.p1 = 0;
            m->in[0] = x;
            arrsetlen(m->in, 1);
            graph_merge_sources(m, s);
            graph_node_free(s);
            memset(s, 0, sizeof *s);
            g->values[sv].producer = -1; /* the sigmoid is gone */
            dead[si] = any = true;
            break;
        }
    }
    if (any)
        drop_dead_nodes(g, dead);
    free(uses);
    free(dead);
}

/* ---- sink: an elementwise op after data movement, fused into the convs it gathers ---- */

enum {
    SINK_DEPTH = 16,                /* reshapes, copies and concatenates followed */
    SINK_CHECKED = 1 << 22,         /* elements whose channel a per-channel operand checks */
};

/* Appends to *convs the tunable conv2d nodes whose results v is gathered from through
 * reshapes, copies and concatenates (at least one) that nothing else reads; false when v
 * is not only that. */
static bool gathered_convs(const Graph *g, int v, const int *uses, int depth, int **convs)
{
    const Value *x = val(g, v);
    if (depth > SINK_DEPTH || x->kind != VAL_TEMP || x->producer < 0 || uses[v] != 1)
        return false;
    const Node *p = &g->nodes[x->producer];
    if (p->op == IR_CONV2D && depth > 0 && tunable(g, p) && p->a.ep.n < RC_MAX_EPILOGUE) {
        arrput(*convs, x->producer);
        return true;
    }
    if (p->op == IR_RESHAPE || p->op == IR_COPY)
        return gathered_convs(g, p->in[0], uses, depth + 1, convs);
    if (p->op != IR_CONCAT)
        return false;
    for (int k = 0; k < (int)arrlen(p->in); k++)
        if (!gathered_convs(g, p->in[k], uses, depth + 1, convs))
            return false;
    return true;
}

/* The element of a conv2d result (returned: the node; *f: its flat index) that element i
 * of v is a copy of (v as gathered_convs found it). */
static int source_of(const Graph *g, int v, int64_t i, int64_t *f)
{
    for (;;) {
        const Node *p = &g->nodes[val(g, v)->producer];
        const Shape *s = &val(g, v)->shape;
        if (p->op == IR_CONV2D) {
            *f = i;
            return val(g, v)->producer;
        }
        if (p->op == IR_COPY) {
            int64_t j = p->a.xoff, rem = i;
            for (int d = s->rank - 1; d >= 0; d--) {
                j += rem % s->dim[d] * p->a.xstride[d];
                rem /= s->dim[d];
            }
            i = j;
        } else if (p->op == IR_CONCAT) {
            int ax = p->a.axis;
            int64_t inner = 1;
            for (int d = ax + 1; d < s->rank; d++)
                inner *= s->dim[d];
            int64_t a = i / inner % s->dim[ax], o = i / inner / s->dim[ax];
            for (int k = 0; k < (int)arrlen(p->in); k++) {
                int64_t len = val(g, p->in[k])->shape.dim[ax];
                if (a < len) {
                    i = (o * len + a) * inner + i % inner;
                    v = p->in[k];
                    break;
                }
                a -= len;
            }
            continue;
        }
        v = p->in[0];
    }
}

/* Whether every element of r (gathered from conv results) lies in the channel of its
 * source that an operand varying along a run of count x after elements of r names. */
static bool channels_kept(const Graph *g, int r, int64_t count, int64_t after)
{
    int64_t n = shape_numel(&val(g, r)->shape), f;
    if (n > SINK_CHECKED)
        return false;
    for (int64_t i = 0; i < n; i++) {
        const Shape *y = &val(g, g->nodes[source_of(g, r, i, &f)].out)->shape;
        if (f / (y->dim[2] * y->dim[3]) % y->dim[1] != i / after % count)
            return false;
    }
    return true;
}

/* An elementwise op (unary, or binary with a constant scalar or per-channel operand)
 * whose data is only gathered from conv2d results by reshapes, copies and concatenates
 * (the phases of a strided conv2d_transpose interleaved) runs as a step of each conv's
 * epilogue instead: the data movement then moves its result. A per-channel operand
 * must name, for every element, the channel of the conv result it came from. */
static void sink(Graph *g)
{
    int nn = (int)arrlen(g->nodes), *uses = count_uses(g);
    bool *dead = xcalloc((size_t)nn + 1, sizeof(bool)), any = false;
    for (int i = 0; i < nn; i++) {
        Node *e = &g->nodes[i];
        if ((e->op != IR_UNARY && e->op != IR_BINARY) || e->a.ew == EW_CAST ||
            val(g, e->out)->dtype != DT_F32)
            continue;
        int r = e->in[0], other = -1;
        if (e->op == IR_BINARY) {
            if (is_const_f32(g, e->in[0]) == is_const_f32(g, e->in[1]))
                continue;
            other = is_const_f32(g, e->in[0]) ? e->in[0] : e->in[1];
            r = e->in[0] == other ? e->in[1] : e->in[0];
        }
        int *convs = NULL;
        bool ok = shape_eq(&val(g, e->out)->shape, &val(g, r)->shape) &&
                  gathered_convs(g, r, uses, 0, &convs);
        if (ok && other >= 0 && shape_numel(&val(g, other)->shape) != 1) {
            int64_t count, after;
            ok = operand_run(&val(g, r)->shape, &val(g, other)->shape, &count, &after);
            for (int k = 0; ok && k < (int)arrlen(convs); k++) {
                const Node *c = &g->nodes[convs[k]];
                ok = classify(g, c, &val(g, c->out)->shape, &val(g, other)->shape) == EPB_CHANNEL;
            }
            ok = ok && channels_kept(g, r, count, after);
        }
        for (int k = 0; ok && k < (int)arrlen(convs); k++) {
            Node *c = &g->nodes[convs[k]];
            if (!absorb(g, c, e, c->out, r))
                unreachable(); /* every condition of absorb was checked above */
            graph_merge_sources(c, e);
        }
        arrfree(convs);
        if (!ok)
            continue;
        /* the data movement now makes e's result */
        int pr = val(g, r)->producer;
        g->nodes[pr].out = e->out;
        g->values[e->out].producer = pr;
        g->values[r].producer = -1;
        graph_node_free(e);
        memset(e, 0, sizeof *e);
        dead[i] = any = true;
    }
    if (any)
        drop_dead_nodes(g, dead);
    free(uses);
    free(dead);
}

void fuse(Graph *g)
{
    unbatch(g);
    shuffle(g);
    swish(g);
    int nn = (int)arrlen(g->nodes), nv = (int)arrlen(g->values);
    int *uses = xcalloc((size_t)nv + 1, sizeof(int));
    int *reader = xmalloc(((size_t)nv + 1) * sizeof(int));   /* a node that reads v */
    bool *dead = xcalloc((size_t)nn + 1, sizeof(bool));
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++) {
            uses[g->nodes[i].in[k]]++;
            reader[g->nodes[i].in[k]] = i;
        }
    for (int k = 0; k < (int)arrlen(g->outputs); k++)
        uses[g->outputs[k]] += 2; /* an output is always stored */
    for (int i = 0; i < nn; i++) {
        if (dead[i] || (g->nodes[i].op != IR_CONV2D && g->nodes[i].op != IR_MATMUL) ||
            !tunable(g, &g->nodes[i]))
            continue;
        int at = i; /* where the fused node sits */
        for (;;) {
            Node *n = &g->nodes[at];
            int v = n->out;
            if (uses[v] != 1)
                break;
            /* through views of the result (reshape, expand_dims, squeeze) that only the
             * next node reads: that node is fused, and the last view shows the fused result
             * (the node stays where it is: an operand computed later stops the fusion) */
            int j = reader[v], r = v, view = -1;
            while (g->nodes[j].op == IR_RESHAPE && uses[g->nodes[j].out] == 1) {
                view = j;
                r = g->nodes[j].out;
                j = reader[r];
            }
            Node *c = &g->nodes[j];
            bool later = false;
            for (int k = 0; k < (int)arrlen(c->in); k++) {
                const Value *o = val(g, c->in[k]);
                later = later || (o->kind == VAL_TEMP && o->producer > at && c->in[k] != r);
            }
            if (view >= 0 && later)
                break;
            int nin_before = (int)arrlen(n->in);
            if (!absorb(g, n, c, r, r))
                break;
            /* an operand computed after `at` means the fused node must run at j */
            bool move = false;
            for (int k = nin_before; k < (int)arrlen(n->in); k++) {
                const Value *o = val(g, n->in[k]);
                move = move || (o->kind == VAL_TEMP && o->producer > at);
            }
            int out = c->out;
            g->values[r].producer = -1; /* the intermediate is gone */
            graph_merge_sources(n, c);
            graph_node_free(c);
            if (move) {
                g->nodes[j] = *n;      /* the fused node replaces c at j */
                memset(n, 0, sizeof *n);
                dead[at] = true;
                at = j;
            } else {
                memset(c, 0, sizeof *c);
                dead[j] = true;
            }
            n = &g->nodes[at];
            if (view >= 0) {
                g->nodes[view].out = out;
                g->values[out].producer = view;
            } else {
                n->out = out;
                g->values[out].producer = at;
            }
            for (int k = nin_before; k < (int)arrlen(n->in); k++)
                if (n->in[k] < nv)  /* (constants made by folding are newer) */
                    reader[n->in[k]] = at;
        }
    }
    drop_dead_nodes(g, dead);
    free(uses);
    free(reader);
    free(dead);
    sink(g);
}
