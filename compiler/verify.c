/*
 * verify.c: the IR verifier. It checks the invariants every pass must keep (value ids in
 * range, one producer per value, execution order, tensor limits, the result types the
 * kernels assume) and, given a plan, that no two workspace buffers overlap while both are
 * live, and that a value stored inside another on purpose (a view, a slice, a concatenate
 * operand written in place: Storage.alias) lies at its place, within a buffer live for as
 * long as it is. relayc runs it after lowering and after every pass in builds without NDEBUG
 * (debug, debugoptimized and the sanitizer builds), so a pass that breaks the graph is
 * caught at the pass, not as a wrong number at the end.
 */
#include "relayc.h"

#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *err;
    size_t len;
    bool failed;
} Check;

static bool fail(Check *c, const char *fmt, ...) RC_PRINTF(2, 3);
static bool fail(Check *c, const char *fmt, ...)
{
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->len, fmt, ap);
        va_end(ap);
    }
    c->failed = true;
    return false;
}

static bool valid_value(const Graph *g, int v) { return v >= 0 && v < (int)arrlen(g->values); }

static bool check_value(Check *c, const Graph *g, int v)
{
    const Value *x = &g->values[v];
    if (x->shape.rank < 0 || x->shape.rank > RC_MAX_RANK)
        return fail(c, "value %d: rank %d", v, x->shape.rank);
    for (int d = 0; d < x->shape.rank; d++)
        if (x->shape.dim[d] < 0)
            return fail(c, "value %d: dimension %d is %lld", v, d, (long long)x->shape.dim[d]);
    if ((unsigned)x->dtype >= DT_COUNT)
        return fail(c, "value %d: dtype %d", v, (int)x->dtype);
    if (x->kind == VAL_CONST &&
        (x->constant < 0 || x->constant >= (int)arrlen(g->consts) ||
         !shape_eq(&g->consts[x->constant].shape, &x->shape) ||
         g->consts[x->constant].dtype != x->dtype))
        return fail(c, "value %d: constant %d does not match its type", v, x->constant);
    if (x->kind == VAL_INPUT && (x->input < 0 || x->input >= (int)arrlen(g->inputs) ||
                                 g->inputs[x->input] != v))
        return fail(c, "value %d: input position %d", v, x->input);
    return true;
}

/* The result types the kernels assume, checked per node. */
static bool check_types(Check *c, const Graph *g, int i)
{
    const Node *n = &g->nodes[i];
    const Value *y = &g->values[n->out], *x = &g->values[n->in[0]];
    switch (n->op) {
    case IR_UNARY:
        if (!shape_eq(&x->shape, &y->shape))
            return fail(c, "n%d (unary): input and output shapes differ", i);
        break;
    case IR_BINARY: {
        if (arrlen(n->in) != 2)
            return fail(c, "n%d (binary): %d inputs", i, (int)arrlen(n->in));
        const Value *b = &g->values[n->in[1]];
        for (int k = 0; k < 2; k++) {
            const Shape *s = k ? &b->shape : &x->shape;
            if (s->rank > y->shape.rank)
                return fail(c, "n%d (binary): operand %d has a higher rank than the result", i, k);
            for (int d = 0; d < s->rank; d++) {
                int64_t od = y->shape.dim[d + y->shape.rank - s->rank];
                if (s->dim[d] != 1 && s->dim[d] != od)
                    return fail(c, "n%d (binary): operand %d does not broadcast to the result", i, k);
            }
        }
        break;
    }
    case IR_RESHAPE:
        if (shape_numel(&x->shape) != shape_numel(&y->shape) || x->dtype != y->dtype)
            return fail(c, "n%d (reshape): the view changes the element count or dtype", i);
        break;
    case IR_CONV2D:
    case IR_POOL2D:
    case IR_QCONV2D:
        if (x->shape.rank != 4 || y->shape.rank != 4 || x->shape.dim[0] != y->shape.dim[0])
            return fail(c, "n%d (%s): not NCHW in and out", i, ir_ops[n->op].name);
        break;
    case IR_MATMUL:
        if (shape_numel(&y->shape) != (int64_t)(n->a.batch > 0 ? n->a.batch : 1) * n->a.m * n->a.n)
            return fail(c, "n%d (matmul): %d x %d x %d does not fill its output", i,
                        n->a.batch, n->a.m, n->a.n);
        break;
    case IR_CONCAT: {
        int64_t sum = 0;
        for (int k = 0; k < (int)arrlen(n->in); k++)
            sum += shape_numel(&g->values[n->in[k]].shape);
        if (sum != shape_numel(&y->shape))
            return fail(c, "n%d (concat): the inputs do not fill the output", i);
        break;
    }
    default:
        break;
    }
    return true;
}

static int64_t bytes_of(const Graph *g, int v)
{
    return shape_numel(&g->values[v].shape) * (int64_t)dtype_size(g->values[v].dtype);
}

/* Where value v must lie inside the value a it aliases (Storage.alias), in bytes from a's
 * start: a reshape at 0, a contiguous slice at its offset, a concatenate operand (or the
 * value an operand reshapes) at its place in the result; -1 when v has no reason to alias
 * a. */
static int64_t alias_offset(const Graph *g, int v, int a)
{
    const Value *x = &g->values[v];
    if (x->kind == VAL_TEMP && x->producer >= 0 && g->nodes[x->producer].in[0] == a) {
        const Node *n = &g->nodes[x->producer];
        if (n->op == IR_RESHAPE)
            return 0;
        if (n->op == IR_COPY)
            return n->a.xoff * (int64_t)dtype_size(x->dtype);
    }
    const Value *y = &g->values[a];
    if (y->kind == VAL_TEMP && y->producer >= 0 && g->nodes[y->producer].op == IR_CONCAT) {
        const Node *n = &g->nodes[y->producer];
        int64_t at = 0;
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            const Value *o = &g->values[n->in[k]];
            if (n->in[k] == v || (o->kind == VAL_TEMP && o->producer >= 0 &&
                                  g->nodes[o->producer].op == IR_RESHAPE &&
                                  g->nodes[o->producer].in[0] == v))
                return at;
            at += bytes_of(g, n->in[k]);
        }
    }
    return -1;
}

/* Values that lie inside another's storage on purpose (Storage.alias): same buffer, at
 * the place the op defines, wholly inside it, and inside a workspace buffer live from v's
 * producer to its last use. */
static bool check_aliases(Check *c, const Graph *g, const Plan *p)
{
    int nv = (int)arrlen(g->values), nn = (int)arrlen(g->nodes);
    int *lastuse = xmalloc(((size_t)nv + 1) * sizeof(int)), *owner = xmalloc(((size_t)nv + 1) * sizeof(int));
    for (int v = 0; v < nv; v++)
        lastuse[v] = g->values[v].producer, owner[v] = -1;
    for (int i = 0; i < nn; i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++)
            lastuse[g->nodes[i].in[k]] = i;
    for (int k = 0; k < (int)arrlen(g->outputs); k++)
        lastuse[g->outputs[k]] = nn;
    for (int k = 0; k < (int)arrlen(p->bufs); k++)
        if (p->bufs[k].node < 0 && p->bufs[k].value >= 0 && p->bufs[k].value < nv)
            owner[p->bufs[k].value] = k;
    for (int v = 0; v < nv && !c->failed; v++) {
        const Storage *s = &p->st[v];
        int a = s->alias;
        if (a < 0)
            continue;
        const Storage *t = &p->st[a];
        int64_t want = a < nv ? alias_offset(g, v, a) : -1;
        if (want < 0) {
            fail(c, "value %d: stored inside value %d, which neither views nor concatenates it", v, a);
            break;
        }
        if (s->kind != t->kind || (s->kind != ST_WORKSPACE && s->index != t->index) ||
            s->offset != t->offset + want || want + bytes_of(g, v) > bytes_of(g, a)) {
            fail(c, "value %d: not at its place inside value %d (byte %lld of it, want %lld)", v, a,
                 (long long)(s->offset - t->offset), (long long)want);
            break;
        }
        int r = a;
        while (p->st[r].alias >= 0)
            r = p->st[r].alias;
        if (s->kind != ST_WORKSPACE || owner[r] < 0)
            continue;
        const PlanBuf *b = &p->bufs[owner[r]];
        if (g->values[v].kind == VAL_TEMP &&
            (g->values[v].producer < b->first || lastuse[v] > b->last || s->offset < b->offset ||
             s->offset + bytes_of(g, v) > b->offset + b->size))
            fail(c, "value %d (inside value %d) is used at steps %d-%d, outside its buffer's live "
                    "range %d-%d", v, a, g->values[v].producer, lastuse[v], b->first, b->last);
    }
    free(lastuse);
    free(owner);
    return !c->failed;
}

/* Buffers of the plan that overlap in bytes while both are live. */
static bool check_plan(Check *c, const Graph *g, const Plan *p)
{
    if (!check_aliases(c, g, p))
        return false;
    int nb = (int)arrlen(p->bufs);
    for (int v = 0; v < (int)arrlen(g->values); v++)
        if (p->st[v].kind == ST_WORKSPACE) {
            int64_t bytes = shape_numel(&g->values[v].shape) * (int64_t)dtype_size(g->values[v].dtype);
            if (p->st[v].offset < 0 || p->st[v].offset + bytes > p->workspace)
                return fail(c, "value %d: stored outside the workspace", v);
        }
    /* by first step: each buffer against those still live when it starts */
    int *ord = xmalloc(((size_t)nb + 1) * sizeof(int)), *live = NULL;
    for (int k = 0; k < nb; k++)
        ord[k] = k;
    for (int k = 1; k < nb; k++) /* insertion sort on first: plans are near sorted */
        for (int j = k; j > 0 && p->bufs[ord[j - 1]].first > p->bufs[ord[j]].first; j--) {
            int t = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = t;
        }
    bool ok = true;
    for (int k = 0; k < nb && ok; k++) {
        const PlanBuf *a = &p->bufs[ord[k]];
        if (a->offset < 0 || a->offset + a->size > p->workspace) {
            ok = fail(c, "buffer at %lld (%lld bytes) outside the workspace", (long long)a->offset,
                      (long long)a->size);
            break;
        }
        int w = 0;
        for (int j = 0; j < (int)arrlen(live); j++) { /* drop the dead, check the rest */
            const PlanBuf *b = &p->bufs[live[j]];
            if (b->last < a->first)
                continue;
            live[w++] = live[j];
            if (a->offset < b->offset + b->size && b->offset < a->offset + a->size) {
                ok = fail(c, "workspace buffers [%lld, %lld) and [%lld, %lld) overlap while both "
                             "live (steps %d-%d and %d-%d)", (long long)a->offset,
                          (long long)(a->offset + a->size), (long long)b->offset,
                          (long long)(b->offset + b->size), a->first, a->last, b->first, b->last);
                break;
            }
        }
        arrsetlen(live, w);
        arrput(live, ord[k]);
    }
    free(ord);
    arrfree(live);
    return ok;
}

void ir_verify_after(const Graph *g, const Plan *p, const char *stage)
{
#ifndef NDEBUG
    char err[512];
    if (!ir_verify(g, p, err, sizeof err)) {
        fprintf(stderr, "relayc: internal error: the IR is invalid after %s: %s\n", stage, err);
        abort();
    }
#else
    (void)g, (void)p, (void)stage;
#endif
}

bool ir_verify(const Graph *g, const Plan *p, char *err, size_t len)
{
    Check c = { err, len, false };
    int nv = (int)arrlen(g->values), nn = (int)arrlen(g->nodes);
    int *made = xcalloc((size_t)nv + 1, sizeof(int)); /* producers seen per value */
    for (int v = 0; v < nv && !c.failed; v++)
        check_value(&c, g, v);
    for (int i = 0; i < nn && !c.failed; i++) {
        const Node *n = &g->nodes[i];
        if ((unsigned)n->op >= IR_COUNT) {
            fail(&c, "n%d: op %d", i, (int)n->op);
            break;
        }
        if (arrlen(n->in) < 1 || arrlen(n->src) < 1) {
            fail(&c, "n%d (%s): no inputs or no source", i, ir_ops[n->op].name);
            break;
        }
        for (int k = 0; k < (int)arrlen(n->in) && !c.failed; k++) {
            int v = n->in[k];
            if (!valid_value(g, v))
                fail(&c, "n%d (%s): input %d is value %d, out of range", i, ir_ops[n->op].name, k, v);
            else if (g->values[v].kind == VAL_TEMP &&
                     (g->values[v].producer < 0 || g->values[v].producer >= i))
                fail(&c, "n%d (%s): input %d (value %d) is not computed before it", i,
                     ir_ops[n->op].name, k, v);
        }
        if (c.failed)
            break;
        if (!valid_value(g, n->out) || g->values[n->out].kind != VAL_TEMP) {
            fail(&c, "n%d (%s): output %d is not a temporary", i, ir_ops[n->op].name, n->out);
            break;
        }
        if (made[n->out]++ || g->values[n->out].producer != i) {
            fail(&c, "n%d (%s): value %d has another producer", i, ir_ops[n->op].name, n->out);
            break;
        }
        check_types(&c, g, i);
    }
    for (int k = 0; k < (int)arrlen(g->outputs) && !c.failed; k++) {
        int v = g->outputs[k];
        if (!valid_value(g, v) || (g->values[v].kind == VAL_TEMP && !made[v]))
            fail(&c, "output %d (value %d) is not computed", k, v);
    }
    free(made);
    if (!c.failed && p)
        check_plan(&c, g, p);
    return !c.failed;
}
