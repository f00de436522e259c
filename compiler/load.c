/*
 * load.c: a save_json file (and an optional params file) -> Graph.
 *
 * Picks the function to compile (a module's main, --function NAME, or a bare function),
 * binds its parameters to runtime inputs or to tensors from the params file, then lowers
 * its body. The walk is iterative, with an explicit stack of frames, so a model of any
 * depth loads without deep C recursion; calls of GlobalVars and of relay.Functions (what
 * BYOC partitioning and FuseOps leave) are inlined, each call in a scope of its own.
 */
#include "ops.h"

#include <cJSON.h>
#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

/* A binding or memo key: (scope, node index). */
#define KEY(scope, idx) (((int64_t)(scope) << 32) | (uint32_t)(idx))

typedef struct { int64_t key; int value; } IntMap;

typedef struct {
    int idx;                /* expression node */
    int scope;              /* scope it is evaluated in */
    int state;              /* progress through its children */
    int aux;                /* Call of a function: the callee's scope */
    int body;               /* Call of a function: the callee's body */
    int next;               /* Tuple, Call: children known to be done (resume point) */
} Frame;

typedef struct {
    Lower L;
    RelayDoc *doc;
    int module;             /* IRModule node, or 0 */
    IntMap *memo;           /* (scope, node) -> item */
    IntMap *busy;           /* (scope, node) -> 1 while its frame is on the stack */
    IntMap *bind;           /* (scope, var node) -> item */
    IntMap *consts;         /* b64ndarrays index -> item (one tensor per blob) */
    IntMap *gvfn;           /* GlobalVar node -> its function node (module_function) */
    int64_t exprs;          /* expressions lowered so far (RC_MAX_EXPRS) */
    int *scope_parent;      /* stb_ds: parent of each scope (-1 for scope 0) */
    Frame *stack;
    NamedTensor *params;
    int nparams;
    bool *param_used;
    struct { char *key; int value; } *param_index; /* params name -> index (the last wins) */
    IntMap *param_items;    /* params index -> its item, once bound */
    IntMap *scan_seen;      /* scan()'s scratch, here so an error unwinding through */
    int *scan_todo;         /* scan() frees it too (loader_free) */
    ModelInfo *info;        /* lower_op() adds the calls unsupported in their dtypes */
    int *retry_args;        /* lower_op()'s scratch: the float32 stand-in arguments */
} Loader;

int item_tensor(Lower *L, int value)
{
    Item it = { value, NULL };
    arrput(L->items, it);
    return (int)arrlen(L->items) - 1;
}

int item_tuple(Lower *L, const int *items, int n)
{
    Item it = { -1, NULL };
    for (int i = 0; i < n; i++)
        arrput(it.fields, items[i]);
    arrput(L->items, it);
    return (int)arrlen(L->items) - 1;
}

/* Lookups move an stb_ds map's pointer (even on a miss), so maps go by address. */
static int map_get(IntMap **m, int64_t key)
{
    if (!*m)
        return -1;
    ptrdiff_t i = hmgeti(*m, key);
    return i >= 0 ? (*m)[i].value : -1;
}

/* The name of a relay.Var (its relay.Id's name_hint). */
static const char *var_name(RelayDoc *doc, int var)
{
    int vid = doc_ref(doc, var, "vid");
    if (vid == 0)
        doc_fail(doc, var, "Var without vid");
    const char *s = doc_is_v06(doc) ? doc_field(doc, vid, "name_hint")
                                    : doc_str(doc, vid, "name_hint", "");
    if (!s)
        return "";
    if (strlen(s) > RC_MAX_NAME)
        doc_fail(doc, var, "the name is %zu bytes, over the limit of %d", strlen(s), RC_MAX_NAME);
    return s;
}

/* Reads a TensorType node into dtype and shape. */
static void tensor_type(RelayDoc *doc, int ty, int where, DType *dt, Shape *shape)
{
    if (ty == 0)
        doc_fail(doc, where, "no type: the parameter has neither type_annotation nor a checked type");
    if (!doc_is(doc, ty, "TensorType")) {
        if (doc_is(doc, ty, "TupleType"))
            doc_fail(doc, where, "tuple-typed parameters are not supported");
        doc_fail(doc, where, "expected a TensorType, found %s", doc_node(doc, ty)->type_key);
    }
    const char *dts = doc_field(doc, ty, "dtype");
    if (!dts || !dtype_parse(dts, dt))
        doc_fail(doc, where, "dtype '%s' is not supported (relayc reads float32, float64, int8, "
                 "uint8, int32, int64 and bool)", dts ? dts : "");
    int n;
    const int *dims = doc_array(doc, doc_ref(doc, ty, "shape"), &n);
    if (n > RC_MAX_RANK)
        doc_fail(doc, where, "rank %d is over the limit of %d", n, RC_MAX_RANK);
    memset(shape, 0, sizeof *shape);
    shape->rank = n;
    int64_t numel = 1;
    for (int i = 0; i < n; i++) {
        int64_t v = doc_intimm(doc, dims[i]);
        if (v < 0)
            doc_fail(doc, where, "negative dimension %lld", (long long)v);
        if (v > RC_MAX_ELEMENTS)
            doc_fail(doc, where, "dimension %lld is larger than %lld (the limit)", (long long)v,
                     RC_MAX_ELEMENTS);
        if (v > 0 && numel > RC_MAX_ELEMENTS / v)
            doc_fail(doc, where, "shape has more than %lld elements (the limit)", RC_MAX_ELEMENTS);
        numel *= v;
        shape->dim[i] = v;
    }
}

static void var_type(RelayDoc *doc, int var, DType *dt, Shape *shape)
{
    int ty = doc_ref(doc, var, "type_annotation");
    if (ty == 0)
        ty = doc_ref(doc, var, "_checked_type_");
    tensor_type(doc, ty, var, dt, shape);
}

/* The function a GlobalVar names in the module. */
static int module_function_uncached(Loader *ld, int gv, int where);

/* Each GlobalVar is looked up once: the search is linear in the module's size. */
static int module_function(Loader *ld, int gv, int where)
{
    ptrdiff_t i = hmgeti(ld->gvfn, gv);
    if (i >= 0)
        return ld->gvfn[i].value;
    int fn = module_function_uncached(ld, gv, where);
    hmput(ld->gvfn, gv, fn);
    return fn;
}

static int module_function_uncached(Loader *ld, int gv, int where)
{
    RelayDoc *doc = ld->doc;
    if (ld->module == 0)
        doc_fail(doc, where, "call of a global function, but the file holds no IRModule");
    int fmap = doc_ref(doc, ld->module, "functions");
    const JNode *m = doc_node(doc, fmap);
    const char *want = doc_is_v06(doc) ? doc_field(doc, gv, "name_hint")
                                       : doc_str(doc, gv, "name_hint", "");
    for (int i = 0; i + 1 < (int)arrlen(m->data); i += 2)
        if (m->data[i] == gv)
            return m->data[i + 1];
    for (int i = 0; i + 1 < (int)arrlen(m->data); i += 2) {
        int k = m->data[i];
        const char *nm = doc_is_v06(doc) ? doc_field(doc, k, "name_hint")
                                         : doc_str(doc, k, "name_hint", "");
        if (want && nm && strcmp(want, nm) == 0)
            return m->data[i + 1];
    }
    doc_fail(doc, where, "global function '%s' is not in the module", want ? want : "?");
}

/* Finds the function to compile and its display name. */
static int find_function(Loader *ld, const char *want, const char **name)
{
    RelayDoc *doc = ld->doc;
    int root = doc->root;
    if (doc_is(doc, root, "Function")) {
        if (want)
            doc_fail(doc, root, "--function %s given, but the file holds a single function", want);
        int attrs = doc_ref(doc, root, "attrs");
        const char *sym = NULL;
        if (attrs) {
            int dict = doc_ref(doc, attrs, "__dict__");
            int gs = dict ? doc_map_get(doc, dict, "global_symbol") : 0;
            if (gs)
                sym = doc_string_node(doc, gs);
        }
        *name = sym ? sym : "(function)";
        return root;
    }
    if (!doc_is(doc, root, "IRModule"))
        doc_fail(doc, root, "the root must be an IRModule or a relay.Function");
    ld->module = root;
    const char *fname = want ? want : "main";
    int gvmap = doc_ref(doc, root, "global_var_map_");
    int gv = gvmap ? doc_map_get(doc, gvmap, fname) : 0;
    if (gv == 0)
        doc_fail(doc, root, "the module has no function '%s'", fname);
    *name = fname;
    int fn = module_function(ld, gv, root);
    if (!doc_is(doc, fn, "Function"))
        doc_fail(doc, fn, "'%s' is not a relay.Function", fname);
    return fn;
}

/* Decodes the blob of a relay.Constant into a graph constant. */
static int lower_constant(Loader *ld, int idx)
{
    RelayDoc *doc = ld->doc;
    int64_t b = doc_int(doc, idx, "data", -1);
    if (b < 0 || b >= (int64_t)arrlen(doc->b64s))
        doc_fail(doc, idx, "data refers to b64ndarrays[%lld], but the file has %d",
                 (long long)b, (int)arrlen(doc->b64s));
    /* Keyed by blob, not by Constant node: many Constants naming one blob share its tensor
     * (decoding it for each would let a small file allocate without bound). */
    int k = map_get(&ld->consts, b);
    if (k >= 0)
        return k;
    const char *s = doc->b64s[b];
    uint8_t *raw;
    size_t rawlen, used;
    if (!base64_decode(s, strlen(s), &raw, &rawlen))
        doc_fail(doc, idx, "b64ndarrays[%lld]: invalid base64", (long long)b);
    Tensor t;
    char err[300];
    bool ok = blob_decode(raw, rawlen, &t, &used, err, sizeof err);
    free(raw);
    if (!ok)
        doc_fail(doc, idx, "b64ndarrays[%lld]: %s", (long long)b, err);
    if (!graph_const_fits(ld->L.g, (int64_t)t.nbytes)) {
        tensor_free(&t);
        doc_fail(doc, idx, "b64ndarrays[%lld]: the constants exceed %lld bytes (the limit)",
                 (long long)b, (long long)RC_MAX_CONST_BYTES);
    }
    int v = graph_add_const(ld->L.g, t, idx);
    k = item_tensor(&ld->L, v);
    hmput(ld->consts, b, k);
    return k;
}

static int push(Loader *ld, int idx, int scope)
{
    int64_t key = KEY(scope, idx);
    int m = map_get(&ld->memo, key);
    if (m >= 0)
        return m;
    if (map_get(&ld->busy, key) >= 0)
        doc_fail(ld->doc, idx, "reference cycle: this expression contains itself");
    if (++ld->exprs > RC_MAX_EXPRS)
        doc_fail(ld->doc, idx, "more than %d expressions to lower, inlined function calls "
                 "counted once per call (the limit)", RC_MAX_EXPRS);
    hmput(ld->busy, key, 1);
    Frame f = { idx, scope, 0, 0, 0, 0 };
    arrput(ld->stack, f);
    return -1;
}

static int lookup_var(Loader *ld, int var, int scope)
{
    for (int s = scope; s >= 0; s = ld->scope_parent[s]) {
        int it = map_get(&ld->bind, KEY(s, var));
        if (it >= 0)
            return it;
    }
    doc_fail(ld->doc, var, "free variable '%s': it is neither a parameter nor let-bound",
             var_name(ld->doc, var));
}

static int new_scope(Loader *ld, int parent)
{
    arrput(ld->scope_parent, parent);
    return (int)arrlen(ld->scope_parent) - 1;
}

/* Binds the parameters of fn in scope to args (item indices). */
static void bind_params(Loader *ld, int fn, int scope, const int *args, int nargs, int where)
{
    int n;
    const int *params = doc_array(ld->doc, doc_ref(ld->doc, fn, "params"), &n);
    if (n != nargs)
        doc_fail(ld->doc, where, "the function takes %d arguments but is called with %d", n, nargs);
    for (int i = 0; i < n; i++)
        hmput(ld->bind, KEY(scope, params[i]), args[i]);
}

/* A value of the type node ty (a TensorType, or a TupleType of them) computed by nothing:
 * it stands for the result of a call relayc does not compile, so that lowering goes on. */
static int stand_in(Loader *ld, int ty, int where, int depth)
{
    RelayDoc *doc = ld->doc;
    if (ty != 0 && doc_is(doc, ty, "TupleType") && depth < 4) {
        int n;
        const int *f = doc_array(doc, doc_ref(doc, ty, "fields"), &n);
        int t = item_tuple(&ld->L, NULL, 0);
        for (int i = 0; i < n; i++) {
            int x = stand_in(ld, f[i], where, depth + 1);
            arrput(ld->L.items[t].fields, x);
        }
        return t;
    }
    DType dt;
    Shape s;
    tensor_type(doc, ty, where, &dt, &s);
    return item_tensor(&ld->L, graph_add_value(ld->L.g, VAL_INPUT, dt, &s, where));
}

/* Adds dtype dt to dts (*n of them) unless it is there. */
static void add_dtype(DType *dts, int *n, DType dt)
{
    int k = 0;
    while (k < *n && dts[k] != dt)
        k++;
    if (k == *n)
        dts[(*n)++] = dt;
}

/* Item it with every tensor (itself, or a field of a tuple) whose dtype is not in the set
 * keep replaced by a stand-in of its shape in dtype to; the dtypes replaced are added to
 * *dts once each. */
static int stand_ins(Loader *ld, int it, unsigned keep, DType to, DType *dts, int *ndts)
{
    Lower *L = &ld->L;
    if (L->items[it].value < 0) {
        int t = item_tuple(L, NULL, 0);
        for (int i = 0; i < (int)arrlen(L->items[it].fields); i++) {
            int f = L->items[it].fields[i];
            int x = L->items[f].value >= 0 ? stand_ins(ld, f, keep, to, dts, ndts) : f;
            arrput(L->items[t].fields, x);
        }
        return t;
    }
    const Value *v = &L->g->values[L->items[it].value];
    if (keep & DTS(v->dtype))
        return it;
    add_dtype(dts, ndts, v->dtype);
    Shape s = v->shape;
    return item_tensor(L, graph_add_value(L->g, VAL_INPUT, to, &s, v->json));
}

/* Lowers c with ro; false when that fails (the message in the Diag). */
static bool try_lower(Loader *ld, const RelayOp *ro, const Call *c, int *result)
{
    Diag *d = ld->doc->d;
    jmp_buf jb, *outer = d->jmp;
    size_t mark = (size_t)arrlen(ld->L.scratch);
    d->jmp = &jb;
    if (setjmp(jb) == 0) {
        *result = ro->lower(&ld->L, c);
        d->jmp = outer;
        ops_scratch_release(&ld->L, mark);
        return true;
    }
    d->jmp = outer;
    ops_scratch_release(&ld->L, mark);
    return false;
}

/* c with every argument through stand_ins (keep, to), in ld->retry_args. */
static Call retry_call(Loader *ld, const Call *c, unsigned keep, DType to, DType *dts, int *ndts)
{
    arrsetlen(ld->retry_args, 0);
    for (int i = 0; i < c->nargs; i++)
        arrput(ld->retry_args, stand_ins(ld, c->args[i], keep, to, dts, ndts));
    return (Call){ c->json, c->attrs, c->op, ld->retry_args, c->nargs };
}

/* Lists call c as unsupported on dtypes dts ("OP on DTYPE", once per call even when it is
 * inlined twice) and returns a stand-in of its checked type, so that lowering goes on. */
static int unsupported_on(Loader *ld, const RelayOp *ro, const Call *c, const DType *dts, int ndts)
{
    bool listed = false;
    for (int i = 0; i < (int)arrlen(ld->info->unsupported); i++)
        listed |= ld->info->unsupported[i].json == c->json;  /* a call inlined twice */
    if (!listed) {
        char what[160];
        int o = snprintf(what, sizeof what, "%s on", c->op);
        for (int k = 0; k < ndts && o < (int)sizeof what; k++)
            o += snprintf(what + o, sizeof what - (size_t)o, "%s %s", k ? " and" : "",
                          dtype_name(dts[k]));
        OpUse u = { xstrdup(what), c->json, DTS_OF(ro) };
        arrput(ld->info->unsupported, u);
    }
    Diag *d = ld->doc->d;
    d->code = 0;
    d->msg[0] = '\0';
    return stand_in(ld, doc_ref(ld->doc, c->json, "_checked_type_"), c->json, 0);
}

/* Lowers one call of ro. Data of a dtype ro's row does not list makes the call
 * unsupported, and so does a lowering that fails with operands that are not all float32
 * when the same call with float32 operands of the same shapes lowers: the call goes to
 * info->unsupported as "OP on DTYPE" and lowering goes on with a stand-in of its checked
 * type, so that one run lists every such call. A call that fails with stand-ins of a
 * dtype the operator takes as well (its shapes, its attrs) keeps its own error. */
static int lower_op(Loader *ld, const RelayOp *ro, const Call *c)
{
    Diag *d = ld->doc->d;
    char first[sizeof d->msg];
    DType dts[DT_COUNT], to = DT_F32;
    int ndts = 0, r, n = 0;
    unsigned takes = DTS_OF(ro), untaken = 0;
    while (!(takes & DTS(to)))
        to = (DType)(to + 1);                   /* the first dtype ro takes */
    if (DATA_OF(ro) < c->nargs)
        stand_ins(ld, c->args[DATA_OF(ro)], takes, to, dts, &ndts);
    if (ndts > 0) {
        for (int k = 0; k < ndts; k++)
            untaken |= DTS(dts[k]);
        Call sc = retry_call(ld, c, ~untaken, to, dts, &n);
        if (try_lower(ld, ro, &sc, &r) || try_lower(ld, ro, c, &r))
            return unsupported_on(ld, ro, c, dts, ndts);
        longjmp(*d->jmp, 1);                    /* not the dtype: the call's own error */
    }
    ld->L.type_error = false;
    if (try_lower(ld, ro, c, &r)) {
        if (DATA_OF(ro) == DATA_RESULT_ARG)
            stand_ins(ld, r, takes, to, dts, &ndts);
        return ndts > 0 ? unsupported_on(ld, ro, c, dts, ndts) : r;
    }
    if (ld->L.type_error)
        longjmp(*d->jmp, 1);                    /* a type error of the model, as it is */
    memcpy(first, d->msg, sizeof first);
    Call fc = retry_call(ld, c, DTS_F32, DT_F32, dts, &ndts);
    if (ndts == 0)
        longjmp(*d->jmp, 1);                    /* not a dtype: the error as it is */
    if (!try_lower(ld, ro, &fc, &r)) {
        memcpy(d->msg, first, sizeof first);    /* fails in float32 too: the first error */
        longjmp(*d->jmp, 1);
    }
    return unsupported_on(ld, ro, c, dts, ndts);
}

/* One step of the frame on top of the stack: returns the item when it is done, or -1
 * after pushing a child. */
static int step(Loader *ld, Frame *f)
{
    RelayDoc *doc = ld->doc;
    Lower *L = &ld->L;
    int idx = f->idx;
    if (doc_is(doc, idx, "Var"))
        return lookup_var(ld, idx, f->scope);
    if (doc_is(doc, idx, "Constant"))
        return lower_constant(ld, idx);
    if (doc_is(doc, idx, "Tuple")) {
        int n;
        const int *fields = doc_array(doc, doc_ref(doc, idx, "fields"), &n);
        /* fields before f->next are done: resuming there keeps a wide tuple linear */
        for (int i = f->next; i < n; i++) {
            f->next = i;
            if (push(ld, fields[i], f->scope) < 0)
                return -1;
        }
        arrsetlen(L->call_args, 0);
        for (int i = 0; i < n; i++)
            arrput(L->call_args, push(ld, fields[i], f->scope));
        return item_tuple(L, L->call_args, n);
    }
    if (doc_is(doc, idx, "TupleGetItem")) {
        int t = push(ld, doc_ref(doc, idx, "tuple_value"), f->scope);
        if (t < 0)
            return -1;
        int64_t i = doc_int(doc, idx, "index", 0);
        Item *it = &L->items[t];
        if (it->value >= 0)
            doc_fail(doc, idx, "TupleGetItem of a tensor, not a tuple");
        if (i < 0 || i >= arrlen(it->fields))
            doc_fail(doc, idx, "index %lld out of range for a %d-tuple", (long long)i,
                     (int)arrlen(it->fields));
        return it->fields[i];
    }
    if (doc_is(doc, idx, "Let")) {
        int var = doc_ref(doc, idx, "var");
        if (f->state == 0) {
            int v = push(ld, doc_ref(doc, idx, "value"), f->scope);
            if (v < 0)
                return -1;
            hmput(ld->bind, KEY(f->scope, var), v);
            f->state = 1;
        }
        return push(ld, doc_ref(doc, idx, "body"), f->scope);
    }
    if (doc_is(doc, idx, "Call")) {
        if (f->state == 2) /* the inlined callee's body, in its own scope */
            return push(ld, f->body, f->aux);
        int n;
        const int *args = doc_array(doc, doc_ref(doc, idx, "args"), &n);
        int result = -1;
        for (int i = f->next; i < n; i++) {
            f->next = i;
            if (push(ld, args[i], f->scope) < 0)
                return -1;
        }
        arrsetlen(L->call_args, 0);
        for (int i = 0; i < n; i++)
            arrput(L->call_args, push(ld, args[i], f->scope));
        int *items = L->call_args;
        int op = doc_ref(doc, idx, "op");
        if (op == 0)
            doc_fail(doc, idx, "call without an operator");
        if (doc_is(doc, op, "Op")) {
            const char *name = doc_node(doc, op)->repr;
            const RelayOp *ro = relay_op_find(name ? name : "");
            if (!ro && arrlen(ld->info->unsupported) > 0)
                return stand_in(ld, doc_ref(doc, idx, "_checked_type_"), idx, 0); /* listed */
            if (!ro)
                doc_fail(doc, idx, "operator %s is not supported", name ? name : "?");
            if (n < ro->min_args || n > ro->max_args) {
                if (ro->min_args == ro->max_args)
                    doc_fail(doc, idx, "%s takes %d arguments, got %d", ro->name, ro->min_args, n);
                doc_fail(doc, idx, "%s takes %d to %d arguments, got %d", ro->name,
                         ro->min_args, ro->max_args, n);
            }
            Call c = { idx, doc_ref(doc, idx, "attrs"), ro->name, items, n };
            result = lower_op(ld, ro, &c);
        } else {
            int fn = op;
            if (doc_is(doc, op, "GlobalVar"))
                fn = module_function(ld, op, idx);
            if (!doc_is(doc, fn, "Function"))
                doc_fail(doc, idx, "the callee is a %s; relayc inlines calls of operators, "
                         "global functions and relay.Functions only", doc_node(doc, fn)->type_key);
            int scope = new_scope(ld, 0);
            bind_params(ld, fn, scope, items, n, idx);
            f->state = 2;
            f->aux = scope;
            f->body = doc_ref(doc, fn, "body");
            result = push(ld, f->body, scope); /* f is stale after this */
        }
        return result;
    }
    if (doc_is(doc, idx, "Function"))
        doc_fail(doc, idx, "a function used as a value (closures are not supported)");
    if (doc_is(doc, idx, "If") || doc_is(doc, idx, "Match"))
        doc_fail(doc, idx, "control flow is not supported");
    if (doc_is(doc, idx, "Op") || doc_is(doc, idx, "GlobalVar"))
        doc_fail(doc, idx, "an operator or global used as a value is not supported");
    if (idx == 0)
        doc_fail(doc, idx, "an expression is null");
    doc_fail(doc, idx, "unexpected node type '%s' in an expression", doc_node(doc, idx)->type_key);
}

/* Lowers expression idx in scope, iteratively; returns its item. */
static int eval(Loader *ld, int idx, int scope)
{
    int r = push(ld, idx, scope);
    if (r >= 0)
        return r;
    while (arrlen(ld->stack) > 0) {
        Frame *f = &ld->stack[arrlen(ld->stack) - 1];
        int res = step(ld, f);
        if (res < 0)
            continue;
        Frame done = arrpop(ld->stack);
        int64_t key = KEY(done.scope, done.idx);
        (void)hmdel(ld->busy, key);
        hmput(ld->memo, key, res);
    }
    return map_get(&ld->memo, KEY(scope, idx));
}

/* Lowers the body (eval). Once a call is unsupported, a later error may come from its
 * stand-in: lowering stops there, quietly, with the calls listed so far; an error before
 * any is the model's. */
static int eval_listing(Loader *ld, int body)
{
    Diag *d = ld->doc->d;
    jmp_buf jb, *outer = d->jmp;
    d->jmp = &jb;
    if (setjmp(jb) != 0) {
        d->jmp = outer;
        if (arrlen(ld->info->unsupported) == 0)
            longjmp(*outer, 1);
        d->code = 0;
        d->msg[0] = '\0';
        return -1;
    }
    int r = eval(ld, body, 0);
    d->jmp = outer;
    return r;
}

/* The byte size a blob's header announces, from its first bytes only. */
static int64_t blob_bytes(const char *b64)
{
    size_t n = strlen(b64);
    if (n > 160)
        n = 160;
    n -= n % 4;
    uint8_t *raw;
    size_t len;
    int64_t bytes = 0;
    /* the prefix may end inside the padding-free part; decode what is whole */
    if (!base64_decode(b64, n, &raw, &len))
        return 0;
    if (len >= 28) {
        int32_t ndim = (int32_t)((uint32_t)raw[24] | (uint32_t)raw[25] << 8 |
                                 (uint32_t)raw[26] << 16 | (uint32_t)raw[27] << 24);
        size_t at = 32 + 8 * (size_t)(ndim >= 0 && ndim <= RC_MAX_RANK ? ndim : 0);
        if (ndim >= 0 && ndim <= RC_MAX_RANK && len >= at + 8)
            for (int i = 7; i >= 0; i--)
                bytes = (int64_t)((uint64_t)bytes << 8 | raw[at + (size_t)i]);
    }
    free(raw);
    /* as announced by the file: only a report, but keep the sum from overflowing */
    return bytes < 0 || bytes > RC_MAX_FILE_BYTES ? 0 : bytes;
}

/* Walks every expression reachable from fn (through calls of global functions) and
 * records each operator call, supported or not, and the constants. */
static void scan(Loader *ld, int fn, ModelInfo *info)
{
    RelayDoc *doc = ld->doc;
    arrput(ld->scan_todo, fn);
    while (arrlen(ld->scan_todo) > 0) {
        int idx = arrpop(ld->scan_todo);
        if (idx == 0 || hmgeti(ld->scan_seen, idx) >= 0)
            continue;
        hmput(ld->scan_seen, idx, 1);
        static const char *const expr_fields[] = { "params", "body", "args", "fields",
                                                   "tuple_value", "value", "var", NULL };
        if (doc_is(doc, idx, "Array")) {
            int n;
            const int *e = doc_array(doc, idx, &n);
            for (int i = 0; i < n; i++)
                arrput(ld->scan_todo, e[i]);
            continue;
        }
        if (doc_is(doc, idx, "Constant")) {
            int64_t b = doc_int(doc, idx, "data", -1);
            info->const_count++;
            if (b >= 0 && b < (int64_t)arrlen(doc->b64s))
                info->const_bytes += blob_bytes(doc->b64s[b]);
            continue;
        }
        if (doc_is(doc, idx, "Call")) {
            int op = doc_ref(doc, idx, "op");
            if (op && doc_is(doc, op, "Op")) {
                const char *name = doc_node(doc, op)->repr;
                OpUse u = { xstrdup(name ? name : "?"), idx, 0 };
                arrput(info->calls, u);
                if (!relay_op_find(u.op)) {
                    u.op = xstrdup(u.op);
                    arrput(info->unsupported, u);
                }
            } else if (op && doc_is(doc, op, "GlobalVar")) {
                arrput(ld->scan_todo, module_function(ld, op, idx));
            } else if (op) {
                arrput(ld->scan_todo, op);
            }
        }
        if (doc_is(doc, idx, "Function") || doc_is(doc, idx, "Call") || doc_is(doc, idx, "Tuple") ||
            doc_is(doc, idx, "TupleGetItem") || doc_is(doc, idx, "Let"))
            for (int i = 0; expr_fields[i]; i++)
                arrput(ld->scan_todo, doc_ref(doc, idx, expr_fields[i]));
    }
    hmfree(ld->scan_seen);
    arrfree(ld->scan_todo);
}

/* Sorts calls by node index so reports are stable. */
static int cmp_use(const void *a, const void *b)
{
    return ((const OpUse *)a)->json - ((const OpUse *)b)->json;
}

/* Flattens a (possibly nested) tuple item into the graph's outputs. */
static void add_outputs(Loader *ld, int item)
{
    int *todo = NULL;
    arrput(todo, item);
    while (arrlen(todo) > 0) {
        Item *it = &ld->L.items[arrpop(todo)];
        if (it->value >= 0) {
            arrput(ld->L.g->outputs, it->value);
            continue;
        }
        for (int i = (int)arrlen(it->fields) - 1; i >= 0; i--)
            arrput(todo, it->fields[i]);
    }
    arrfree(todo);
}

static void bind_main_params(Loader *ld, int fn, ModelInfo *info)
{
    RelayDoc *doc = ld->doc;
    Graph *g = ld->L.g;
    int n;
    const int *params = doc_array(doc, doc_ref(doc, fn, "params"), &n);
    for (int i = 0; i < n; i++) {
        int var = params[i];
        if (!doc_is(doc, var, "Var"))
            doc_fail(doc, var, "a function parameter must be a relay.Var");
        const char *name = var_name(doc, var);
        ptrdiff_t pi = shgeti(ld->param_index, name);
        int p = pi >= 0 ? ld->param_index[pi].value : -1;
        int item;
        if (p >= 0) {
            /* two parameters of one name share the tensor (it is moved out of the file's) */
            item = map_get(&ld->param_items, p);
            if (item < 0) {
                Tensor own = ld->params[p].t;
                if (!graph_const_fits(g, (int64_t)own.nbytes))
                    doc_fail(doc, var, "parameter '%s': the constants exceed %lld bytes (the limit)",
                             name, (long long)RC_MAX_CONST_BYTES);
                memset(&ld->params[p].t, 0, sizeof own);
                ld->param_used[p] = true;
                info->const_count++;
                info->const_bytes += (int64_t)own.nbytes;
                int v = graph_add_const(g, own, var);
                g->values[v].name = xstrdup(name);
                item = item_tensor(&ld->L, v);
                hmput(ld->param_items, p, item);
            }
            const Value *t = &g->values[ld->L.items[item].value];
            int ty = doc_ref(doc, var, "type_annotation");
            if (ty == 0)
                ty = doc_ref(doc, var, "_checked_type_");
            if (ty) {
                DType dt;
                Shape s;
                char a[128], b[128];
                tensor_type(doc, ty, var, &dt, &s);
                if (dt != t->dtype || !shape_eq(&s, &t->shape))
                    doc_fail(doc, var, "parameter '%s' is %s %s but the params file holds %s %s",
                             name, dtype_name(dt), shape_str(&s, a, sizeof a),
                             dtype_name(t->dtype), shape_str(&t->shape, b, sizeof b));
            }
        } else {
            DType dt;
            Shape s;
            var_type(doc, var, &dt, &s);
            int v = graph_add_value(g, VAL_INPUT, dt, &s, var);
            g->values[v].name = xstrdup(name);
            g->values[v].input = (int)arrlen(g->inputs);
            arrput(g->inputs, v);
            item = item_tensor(&ld->L, v);
        }
        hmput(ld->bind, KEY(0, var), item);
    }
}

/* With a params file, a name in it that is no parameter is a mismatched file. The message
 * also names the parameters the file does not hold (the runtime inputs), which is where
 * a misspelt or renamed weight shows. */
static void check_params_used(Loader *ld, const LoadOptions *o, int fn)
{
    for (int k = 0; k < ld->nparams; k++) {
        if (ld->param_used[k])
            continue;
        const Graph *g = ld->L.g;
        Buf b = { 0 };
        for (int i = 0; i < (int)arrlen(g->inputs) && i < 8; i++) {
            const char *name = g->values[g->inputs[i]].name;
            buf_printf(&b, "%s'%s'", i ? ", " : "", name ? name : "?");
        }
        if (arrlen(g->inputs) > 8)
            buf_printf(&b, " and %d more", (int)arrlen(g->inputs) - 8);
        char lacks[600];
        snprintf(lacks, sizeof lacks, "%s", buf_len(&b) ? buf_cstr(&b) : "none");
        buf_free(&b);
        doc_fail(ld->doc, fn, "the params file %s holds '%s', which is not a parameter of this "
                 "function; the parameters it does not hold: %s", o->params_path,
                 ld->params[k].name, lacks);
    }
}

/* With a params file, a convolution or dense weight (or a bias_add bias, a prelu alpha)
 * that is still a runtime input is a
 * parameter the file lacks (a runtime weight is legal Relay, but almost surely a
 * mistake when the other weights come from the file). */
static void check_weights_bound(Loader *ld, const LoadOptions *o)
{
    const Graph *g = ld->L.g;
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        const Node *n = &g->nodes[i];
        if (!n->relay_op || arrlen(n->in) < 2 ||
            (strcmp(n->relay_op, "nn.conv2d") && strcmp(n->relay_op, "nn.dense") &&
             strcmp(n->relay_op, "nn.bias_add") && strcmp(n->relay_op, "nn.prelu")))
            continue;
        int v = n->in[1];
        while (g->values[v].kind == VAL_TEMP &&
               (g->nodes[g->values[v].producer].op == IR_COPY ||
                g->nodes[g->values[v].producer].op == IR_RESHAPE))
            v = g->nodes[g->values[v].producer].in[0];
        if (g->values[v].kind == VAL_INPUT)
            doc_fail(ld->doc, n->json, "parameter '%s' is an operand of %s but the params file %s "
                     "does not hold it", g->values[v].name ? g->values[v].name : "?", n->relay_op,
                     o->params_path);
    }
}

static void loader_free(Loader *ld)
{
    for (int i = 0; i < (int)arrlen(ld->L.items); i++)
        arrfree(ld->L.items[i].fields);
    arrfree(ld->L.items);
    arrfree(ld->L.tmp);
    ops_scratch_release(&ld->L, 0);
    arrfree(ld->L.scratch);
    arrfree(ld->L.call_args);
    hmfree(ld->memo);
    hmfree(ld->busy);
    hmfree(ld->bind);
    hmfree(ld->consts);
    hmfree(ld->gvfn);
    arrfree(ld->scope_parent);
    arrfree(ld->stack);
    hmfree(ld->scan_seen);
    arrfree(ld->scan_todo);
    arrfree(ld->retry_args);
    shfree(ld->param_index);
    hmfree(ld->param_items);
    params_free(ld->params, ld->nparams);
    free(ld->param_used);
}

bool load_model(const LoadOptions *o, Graph *g, ModelInfo *info, Diag *d)
{
    jmp_buf jb;
    RelayDoc doc;
    Loader ld;
    uint8_t *text = NULL, *ptext = NULL;
    size_t len, plen;
    char err[512];
    ir_ops_check(); /* every IR op has its row (compiler/ir_ops.c) */
    memset(&doc, 0, sizeof doc);
    memset(&ld, 0, sizeof ld);
    memset(g, 0, sizeof *g);
    memset(info, 0, sizeof *info);
    d->jmp = &jb;
    d->code = 0;
    if (setjmp(jb)) {
        d->jmp = NULL;
        loader_free(&ld);
        relay_doc_free(&doc);
        free(text);
        free(ptext);
        graph_free(g);
        model_info_free(info);
        return false;
    }
    if (o->params_path || o->params_data) {
        d->file = o->params_path ? o->params_path : "(params)";
        if (o->params_data) {
            if ((uint64_t)o->params_len > (uint64_t)RC_MAX_FILE_BYTES)
                diag_fail(d, "file is %zu bytes, more than the limit of %lld", o->params_len,
                          (long long)RC_MAX_FILE_BYTES);
        } else if (!read_file(o->params_path, &ptext, &plen, err, sizeof err)) {
            diag_fail(d, "%s", err);
        }
        if (!params_decode(o->params_data ? o->params_data : ptext,
                           o->params_data ? o->params_len : plen, &ld.params, &ld.nparams, err,
                           sizeof err))
            diag_fail(d, "%s", err);
        ld.param_used = xcalloc((size_t)ld.nparams + 1, sizeof(bool));
        for (int k = 0; k < ld.nparams; k++)
            shput(ld.param_index, ld.params[k].name, k);
        free(ptext);
        ptext = NULL;
    }
    d->file = o->model_path ? o->model_path : "(model)";
    if (o->model_data) {
        if ((uint64_t)o->model_len > (uint64_t)RC_MAX_FILE_BYTES)
            diag_fail(d, "file is %zu bytes, more than the limit of %lld", o->model_len,
                      (long long)RC_MAX_FILE_BYTES);
    } else if (!read_file(o->model_path, &text, &len, err, sizeof err)) {
        diag_fail(d, "%s", err);
    }
    relay_doc_load(&doc, o->model_data ? (const char *)o->model_data : (const char *)text,
                   o->model_data ? o->model_len : len, d);
    ld.doc = &doc;
    ld.L.doc = &doc;
    ld.L.g = g;
    arrput(ld.scope_parent, -1);
    snprintf(info->version, sizeof info->version, "%s", doc.version);
    snprintf(g->version, sizeof g->version, "%s", doc.version);

    const char *fname;
    int fn = find_function(&ld, o->function, &fname);
    g->function = xstrdup(fname);
    info->function = g->function;
    scan(&ld, fn, info);
    if (arrlen(info->calls) > 1)
        qsort(info->calls, arrlen(info->calls), sizeof(OpUse), cmp_use);
    bind_main_params(&ld, fn, info);
    if (o->params_path)
        check_params_used(&ld, o, fn);
    ld.info = info;
    int result = eval_listing(&ld, doc_ref(&doc, fn, "body"));
    if (arrlen(info->unsupported) > 1)
        qsort(info->unsupported, arrlen(info->unsupported), sizeof(OpUse), cmp_use);
    if (arrlen(info->unsupported) == 0) {
        add_outputs(&ld, result);
        if (o->params_path)
            check_weights_bound(&ld, o);
    }
    d->jmp = NULL;
    loader_free(&ld);
    relay_doc_free(&doc);
    free(text);
    return true;
}

void model_info_free(ModelInfo *info)
{
    for (int i = 0; i < (int)arrlen(info->calls); i++)
        free((void *)info->calls[i].op);
    for (int i = 0; i < (int)arrlen(info->unsupported); i++)
        free((void *)info->unsupported[i].op);
    arrfree(info->calls);
    arrfree(info->unsupported);
    memset(info, 0, sizeof *info);
}
