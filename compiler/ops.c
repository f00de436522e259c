/*
 * ops.c: the Relay operators relayc compiles. Each row of relay_ops[] names an operator
 * and the function that lowers one call of it: read its attrs (whatever the TVM version
 * wrote), check its operands, infer its result type, and add IR nodes. Layouts other
 * than NCHW/OIHW become transposes around the kernel; on constants they fold away.
 * Adding an operator is one row here and one lowering function.
 */
#include "ops.h"

#include <cJSON.h>
#include <math.h>
#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

#define MAXA 64 /* most integers an attrs array may hold */

/* ops_fail, ops_shape, ops_arg, ops_a_int, ops_a_str and ops_node are shared with
 * ops_qnn.c (declared in relayc.h). */
void ops_fail(Lower *L, const Call *c, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    doc_fail(L->doc, c->json, "%s", what);
}

void *ops_scratch(Lower *L, size_t n)
{
    void *p = xcalloc(n ? n : 1, 1);
    arrput(L->scratch, p);
    return p;
}

void ops_scratch_release(Lower *L, size_t mark)
{
    while ((size_t)arrlen(L->scratch) > mark)
        free(arrpop(L->scratch));
}

static Value *val(Lower *L, int v) { return &L->g->values[v]; }

const char *ops_shape(Lower *L, int v)
{
    static _Thread_local char buf[4][128];
    static _Thread_local int k;
    k = (k + 1) & 3;
    return shape_str(&val(L, v)->shape, buf[k], sizeof buf[k]);
}

/* Argument i as a tensor value. */
int ops_arg(Lower *L, const Call *c, int i)
{
    const Item *it = &L->items[c->args[i]];
    if (it->value < 0)
        ops_fail(L, c, "argument %d: expected a tensor, got a tuple", i);
    return it->value;
}

static int farg(Lower *L, const Call *c, int i)
{
    int v = ops_arg(L, c, i);
    if (val(L, v)->dtype != DT_F32)
        ops_fail(L, c, "argument %d is %s; %s is compiled for float32 only", i,
             dtype_name(val(L, v)->dtype), c->op);
    return v;
}

/* ---- attrs ---- */

int64_t ops_a_int(Lower *L, const Call *c, const char *name, int64_t dflt)
{
    return c->attrs ? doc_int(L->doc, c->attrs, name, dflt) : dflt;
}

static double a_double(Lower *L, const Call *c, const char *name, double dflt)
{
    return c->attrs ? doc_double(L->doc, c->attrs, name, dflt) : dflt;
}

const char *ops_a_str(Lower *L, const Call *c, const char *name, const char *dflt)
{
    return c->attrs ? doc_str(L->doc, c->attrs, name, dflt) : dflt;
}

/* An attrs field holding an Array of integers (or one integer). Returns the count, or
 * -1 when the field is absent or null. */
static int a_ints(Lower *L, const Call *c, const char *name, int64_t *out)
{
    if (!c->attrs || !doc_field(L->doc, c->attrs, name))
        return -1;
    int r = doc_ref(L->doc, c->attrs, name);
    if (r == 0)
        return -1;
    if (!doc_is(L->doc, r, "Array")) {
        out[0] = doc_intimm(L->doc, r);
        return 1;
    }
    int n;
    const int *e = doc_array(L->doc, r, &n);
    if (n > MAXA)
        ops_fail(L, c, "attrs.%s: %d values, over the limit of %d", name, n, MAXA);
    for (int i = 0; i < n; i++)
        out[i] = doc_intimm(L->doc, e[i]);
    return n;
}

/* A field that must hold exactly two integers (strides, dilation), or one repeated. */
static void a_pair(Lower *L, const Call *c, const char *name, int dflt, int *h, int *w)
{
    int64_t v[MAXA];
    int n = a_ints(L, c, name, v);
    if (n < 0) {
        *h = *w = dflt;
        return;
    }
    if (n == 1)
        v[1] = v[0];
    else if (n != 2)
        ops_fail(L, c, "attrs.%s: expected 2 integers, got %d", name, n);
    for (int i = 0; i < 2; i++)
        if (v[i] < 1 || v[i] > 65536)
            ops_fail(L, c, "attrs.%s: %lld is out of range (1 to 65536)", name, (long long)v[i]);
    *h = (int)v[0];
    *w = (int)v[1];
}

/* 1, 2 or 4 padding values -> top, left, bottom, right. */
static void a_padding(Lower *L, const Call *c, Window *w)
{
    int64_t v[MAXA];
    int n = a_ints(L, c, "padding", v);
    int64_t p[4] = { 0, 0, 0, 0 };
    if (n == 1)
        p[0] = p[1] = p[2] = p[3] = v[0];
    else if (n == 2)
        p[0] = p[2] = v[0], p[1] = p[3] = v[1];
    else if (n == 4)
        memcpy(p, v, sizeof p);
    else if (n >= 0)
        ops_fail(L, c, "attrs.padding: expected 1, 2 or 4 integers, got %d", n);
    for (int i = 0; i < 4; i++)
        if (p[i] < 0 || p[i] > 65536)
            ops_fail(L, c, "attrs.padding: %lld is out of range (0 to 65536)", (long long)p[i]);
    w->pt = (int)p[0], w->pl = (int)p[1], w->pb = (int)p[2], w->pr = (int)p[3];
}

static void check_out_dtype(Lower *L, const Call *c)
{
    const char *od = c->attrs ? doc_field(L->doc, c->attrs, "out_dtype") : NULL;
    if (od && *od && strcmp(od, "float32") != 0)
        ops_fail(L, c, "out_dtype %s is not supported (float32 only)", od);
}

static int norm_axis(Lower *L, const Call *c, int64_t axis, int rank, const char *what)
{
    if (axis < -rank || axis >= rank || (rank == 0 && axis != 0))
        ops_fail(L, c, "%s %lld is out of range for rank %d", what, (long long)axis, rank);
    return (int)(axis < 0 ? axis + rank : axis);
}

/* ---- IR builders ---- */

int ops_node(Lower *L, const Call *c, IrOp op, const int *in, int nin, const Attrs *a, DType dt,
             const Shape *s)
{
    /* Every result obeys the tensor limits, whatever the op's shape rule computed. */
    char b[256];
    for (int d = 0; d < s->rank; d++)
        if (s->dim[d] < 0 || s->dim[d] > RC_MAX_ELEMENTS)
            ops_fail(L, c, "the result %s has a dimension out of range (0 to %lld)",
                 shape_str(s, b, sizeof b), RC_MAX_ELEMENTS);
    if (shape_numel(s) > RC_MAX_ELEMENTS)
        ops_fail(L, c, "the result %s has more than %lld elements (the limit)", shape_str(s, b, sizeof b),
             RC_MAX_ELEMENTS);
    if (arrlen(L->g->nodes) >= RC_MAX_KERNELS)
        ops_fail(L, c, "the model lowers to more than %d IR nodes (the limit)", RC_MAX_KERNELS);
    return graph_add_node(L->g, op, in, nin, a, dt, s, c->json, c->op);
}

/* Fails unless `bytes` more bytes of constants fit under RC_MAX_CONST_BYTES. */
static void const_budget(Lower *L, const Call *c, int64_t bytes)
{
    if (!graph_const_fits(L->g, bytes))
        ops_fail(L, c, "the constants exceed %lld bytes (the limit)", (long long)RC_MAX_CONST_BYTES);
}

static int ir_unary(Lower *L, const Call *c, int x, EwKind ew, float p0, float p1)
{
    Attrs a;
    memset(&a, 0, sizeof a);
    a.ew = ew, a.p0 = p0, a.p1 = p1;
    return ops_node(L, c, IR_UNARY, &x, 1, &a, val(L, x)->dtype, &val(L, x)->shape);
}

static int ir_binary(Lower *L, const Call *c, int x, int y, EwKind ew)
{
    const Shape *sx = &val(L, x)->shape, *sy = &val(L, y)->shape;
    if (val(L, x)->dtype != val(L, y)->dtype)
        ops_fail_type(L, c, "operands have different dtypes: %s and %s", dtype_name(val(L, x)->dtype),
             dtype_name(val(L, y)->dtype));
    Shape s;
    memset(&s, 0, sizeof s);
    s.rank = sx->rank > sy->rank ? sx->rank : sy->rank;
    for (int i = 0; i < s.rank; i++) {
        int ix = i - (s.rank - sx->rank), iy = i - (s.rank - sy->rank);
        int64_t dx = ix >= 0 ? sx->dim[ix] : 1, dy = iy >= 0 ? sy->dim[iy] : 1;
        if (dx != dy && dx != 1 && dy != 1)
            ops_fail(L, c, "shapes %s and %s do not broadcast (axis %d: %lld vs %lld)", ops_shape(L, x),
                 ops_shape(L, y), i, (long long)dx, (long long)dy);
        s.dim[i] = dx == 1 ? dy : dx;
    }
    Attrs a;
    memset(&a, 0, sizeof a);
    a.ew = ew;
    int in[2] = { x, y };
    return ops_node(L, c, IR_BINARY, in, 2, &a, val(L, x)->dtype, &s);
}

static int ir_reshape(Lower *L, const Call *c, int x, const Shape *s)
{
    if (shape_numel(s) != shape_numel(&val(L, x)->shape))
        ops_fail(L, c, "cannot reshape %s (%lld elements) to %lld elements", ops_shape(L, x),
             (long long)shape_numel(&val(L, x)->shape), (long long)shape_numel(s));
    if (shape_eq(s, &val(L, x)->shape))
        return x;
    return ops_node(L, c, IR_RESHAPE, &x, 1, NULL, val(L, x)->dtype, s);
}

static int ir_transpose(Lower *L, const Call *c, int x, const int *perm)
{
    const Shape *in = &val(L, x)->shape;
    int64_t st[RC_MAX_RANK];
    shape_strides(in, st);
    Shape s;
    memset(&s, 0, sizeof s);
    s.rank = in->rank;
    Attrs a;
    memset(&a, 0, sizeof a);
    bool ident = true;
    for (int d = 0; d < in->rank; d++) {
        s.dim[d] = in->dim[perm[d]];
        a.xstride[d] = st[perm[d]];
        ident = ident && perm[d] == d;
    }
    if (ident)
        return x;
    return ops_node(L, c, IR_COPY, &x, 1, &a, val(L, x)->dtype, &s);
}

/* Transposes x from layout `from` to layout `to` (permutations of the same letters). */
static int ir_layout(Lower *L, const Call *c, int x, const char *from, const char *to)
{
    int r = val(L, x)->shape.rank;
    int perm[RC_MAX_RANK];
    if ((int)strlen(from) != r || (int)strlen(to) != r)
        ops_fail(L, c, "layout %s for a rank-%d tensor %s: relayc supports plain layouts (%s)", from,
             r, ops_shape(L, x), to);
    for (int d = 0; d < r; d++) {
        const char *p = strchr(from, to[d]);
        if (!p || strchr(p + 1, to[d]))
            ops_fail(L, c, "layout %s is not supported (expected a permutation of %s)", from, to);
        perm[d] = (int)(p - from);
    }
    return ir_transpose(L, c, x, perm);
}

/* A float32 constant tensor of the given shape filled with data. */
static int const_f32(Lower *L, const Call *c, const Shape *s, const float *data)
{
    Tensor t;
    memset(&t, 0, sizeof t);
    const_budget(L, c, shape_numel(s) * 4);
    t.dtype = DT_F32;
    t.shape = *s;
    t.nbytes = (size_t)shape_numel(s) * 4;
    t.data = xmalloc(t.nbytes ? t.nbytes : 1);
    memcpy(t.data, data, t.nbytes);
    return graph_add_const(L->g, t, c->json);
}

static int const_scalar(Lower *L, const Call *c, float v)
{
    Shape s;
    memset(&s, 0, sizeof s);
    return const_f32(L, c, &s, &v);
}

/* Reshapes a vector v of length dim(axis) so it broadcasts along axis of a rank-r tensor. */
static int along_axis(Lower *L, const Call *c, int v, int axis, int r, int64_t n, const char *what)
{
    const Shape *s = &val(L, v)->shape;
    if (shape_numel(s) != n || s->rank > 1)
        ops_fail(L, c, "%s has shape %s, expected [%lld]", what, ops_shape(L, v), (long long)n);
    Shape b;
    memset(&b, 0, sizeof b);
    b.rank = r - axis;
    b.dim[0] = n;
    for (int d = 1; d < b.rank; d++)
        b.dim[d] = 1;
    return ir_reshape(L, c, v, &b);
}

static int T(Lower *L, int v) { return item_tensor(L, v); }

/* ---- elementwise ---- */

/* The elementwise kind whose elementwise.def row names Relay operator op. */
static EwKind ew_of(const char *op)
{
    for (int k = 0; k < EW_COUNT; k++)
        if (ew_table[k].relay[0] && strcmp(ew_table[k].relay, op) == 0)
            return (EwKind)k;
    unreachable(); /* relay_ops[] lowers op with lower_unary/lower_binary: it has a row */
}

/* An elementwise unary op. On integers floor, ceil, round and trunc are the identity (as
 * in TVM) and abs is max(x, -x): their float expressions would round values past 2^24. */
static int lower_unary(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    EwKind ew = ew_of(c->op);
    DType dt = val(L, x)->dtype;
    if (dt == DT_F32 || dt == DT_F64)
        return T(L, ir_unary(L, c, x, ew, 0, 0));
    if (ew == EW_FLOOR || ew == EW_CEIL || ew == EW_ROUND || ew == EW_TRUNC ||
        (ew == EW_ABS && dt == DT_U8))
        return T(L, x);
    if (ew == EW_ABS)
        return T(L, ir_binary(L, c, x, ir_unary(L, c, x, EW_NEGATIVE, 0, 0), EW_MAXIMUM));
    return T(L, ir_unary(L, c, x, ew, 0, 0));
}

static int lower_binary(Lower *L, const Call *c)
{
    return T(L, ir_binary(L, c, ops_arg(L, c, 0), ops_arg(L, c, 1), ew_of(c->op)));
}

static int lower_clip(Lower *L, const Call *c)
{
    double lo = a_double(L, c, "a_min", -INFINITY), hi = a_double(L, c, "a_max", INFINITY);
    int x = ops_arg(L, c, 0);
    if (val(L, x)->dtype != DT_F32 && val(L, x)->dtype != DT_F64) {
        lo = qnn_int_param(val(L, x)->dtype, lo);
        hi = qnn_int_param(val(L, x)->dtype, hi);
    }
    return T(L, ir_unary(L, c, x, EW_CLIP, (float)lo, (float)hi));
}

static int lower_leaky_relu(Lower *L, const Call *c)
{
    return T(L, ir_unary(L, c, ops_arg(L, c, 0), EW_LEAKY_RELU, (float)a_double(L, c, "alpha", 0.25), 0));
}

static int lower_prelu(Lower *L, const Call *c)
{
    int x = farg(L, c, 0), alpha = farg(L, c, 1);
    int r = val(L, x)->shape.rank;
    int axis = norm_axis(L, c, ops_a_int(L, c, "axis", 1), r, "axis");
    alpha = along_axis(L, c, alpha, axis, r, val(L, x)->shape.dim[axis], "alpha");
    return T(L, ir_binary(L, c, x, alpha, EW_PRELU));
}

static int lower_cast(Lower *L, const Call *c)
{
    const char *dts = ops_a_str(L, c, "dtype", "");
    DType dt;
    if (!dtype_parse(dts, &dt))
        ops_fail(L, c, "cast to dtype '%s' is not supported", dts);
    int x = ops_arg(L, c, 0);
    if (val(L, x)->dtype == dt)
        return T(L, x);
    if (dt == DT_BOOL)
        return T(L, ops_cast_bool(L, c, x));
    Attrs a;
    memset(&a, 0, sizeof a);
    a.ew = EW_CAST;
    return T(L, ops_node(L, c, IR_UNARY, &x, 1, &a, dt, &val(L, x)->shape));
}

static int lower_bias_add(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), b = ops_arg(L, c, 1); /* any dtype: int32 after qnn.conv2d / qnn.dense */
    if (val(L, x)->dtype != val(L, b)->dtype)
        ops_fail_type(L, c, "data is %s but bias is %s", dtype_name(val(L, x)->dtype),
             dtype_name(val(L, b)->dtype));
    int r = val(L, x)->shape.rank;
    int axis = norm_axis(L, c, ops_a_int(L, c, "axis", 1), r, "axis");
    b = along_axis(L, c, b, axis, r, val(L, x)->shape.dim[axis], "bias");
    return T(L, ir_binary(L, c, x, b, EW_ADD));
}

/* batch_norm(x, gamma, beta, mean, var) = x * s + (beta - mean * s), s = gamma / sqrt(var + eps);
 * built from elementwise nodes so constant folding reduces it to one multiply-add. */
static int lower_batch_norm(Lower *L, const Call *c)
{
    int x = farg(L, c, 0);
    int gamma = farg(L, c, 1), beta = farg(L, c, 2), mean = farg(L, c, 3), var = farg(L, c, 4);
    int r = val(L, x)->shape.rank;
    int axis = norm_axis(L, c, ops_a_int(L, c, "axis", 1), r, "axis");
    int64_t n = val(L, x)->shape.dim[axis];
    const char *names[] = { "gamma", "beta", "moving_mean", "moving_var" };
    int vs[] = { gamma, beta, mean, var };
    for (int i = 0; i < 4; i++)
        if (shape_numel(&val(L, vs[i])->shape) != n || val(L, vs[i])->shape.rank != 1)
            ops_fail(L, c, "%s has shape %s, expected [%lld]", names[i], ops_shape(L, vs[i]), (long long)n);
    double eps = a_double(L, c, "epsilon", 1e-5);
    bool center = ops_a_int(L, c, "center", 1) != 0, scale = ops_a_int(L, c, "scale", 1) != 0;
    int s = ir_unary(L, c, ir_binary(L, c, var, const_scalar(L, c, (float)eps), EW_ADD), EW_RSQRT, 0, 0);
    if (scale)
        s = ir_binary(L, c, s, gamma, EW_MULTIPLY);
    int t = ir_unary(L, c, ir_binary(L, c, mean, s, EW_MULTIPLY), EW_NEGATIVE, 0, 0);
    if (center)
        t = ir_binary(L, c, beta, ir_binary(L, c, mean, s, EW_MULTIPLY), EW_SUBTRACT);
    int y = ir_binary(L, c, x, along_axis(L, c, s, axis, r, n, "scale"), EW_MULTIPLY);
    y = ir_binary(L, c, y, along_axis(L, c, t, axis, r, n, "shift"), EW_ADD);
    int items[3] = { T(L, y), T(L, mean), T(L, var) };
    return item_tuple(L, items, 3);
}

static int lower_dropout(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape *s = &val(L, x)->shape;
    int64_t n = shape_numel(s);
    const_budget(L, c, n * 4);
    float *ones = ops_scratch(L, (size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++)
        ones[i] = 1.0f;
    int mask = const_f32(L, c, s, ones);
    int items[2] = { T(L, x), T(L, mask) };
    return item_tuple(L, items, 2);
}

static int lower_copy(Lower *L, const Call *c)
{
    return T(L, ops_arg(L, c, 0));
}

/* ---- convolution, dense, matmul ---- */

static int lower_conv2d(Lower *L, const Call *c)
{
    int x = farg(L, c, 0), w = farg(L, c, 1);
    const char *dl = ops_a_str(L, c, "data_layout", "NCHW"), *kl = ops_a_str(L, c, "kernel_layout", "OIHW");
    const char *ol = ops_a_str(L, c, "out_layout", "");
    if (!*ol)
        ol = dl;
    check_out_dtype(L, c);
    if (val(L, x)->shape.rank != 4 || val(L, w)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data and weight, got %s and %s", ops_shape(L, x), ops_shape(L, w));
    x = ir_layout(L, c, x, dl, "NCHW");
    w = ir_layout(L, c, w, kl, "OIHW");
    Attrs a;
    memset(&a, 0, sizeof a);
    Window *win = &a.conv;
    a_pair(L, c, "strides", 1, &win->sh, &win->sw);
    a_pair(L, c, "dilation", 1, &win->dh, &win->dw);
    a_padding(L, c, win);
    int64_t groups = ops_a_int(L, c, "groups", 1);
    const int64_t *xd = val(L, x)->shape.dim, *wd = val(L, w)->shape.dim;
    if (groups < 1 || groups > RC_MAX_ELEMENTS || xd[1] % groups || wd[0] % groups)
        ops_fail(L, c, "groups %lld must divide the %lld input and %lld output channels",
             (long long)groups, (long long)xd[1], (long long)wd[0]);
    if (wd[1] * groups != xd[1])
        ops_fail(L, c, "weight %s expects %lld input channels (x%lld groups), but data %s has %lld",
             ops_shape(L, w), (long long)wd[1], (long long)groups, ops_shape(L, x), (long long)xd[1]);
    int64_t ks[MAXA];
    int nk = a_ints(L, c, "kernel_size", ks);
    if (nk >= 0 && (nk != 2 || ks[0] != wd[2] || ks[1] != wd[3]))
        ops_fail(L, c, "attrs.kernel_size does not match the weight %s", ops_shape(L, w));
    int64_t ch[MAXA];
    if (a_ints(L, c, "channels", ch) == 1 && ch[0] != wd[0])
        ops_fail(L, c, "attrs.channels is %lld but the weight %s has %lld output channels",
             (long long)ch[0], ops_shape(L, w), (long long)wd[0]);
    win->kh = (int)wd[2], win->kw = (int)wd[3], win->groups = (int)groups;
    int64_t eh = (int64_t)win->dh * (win->kh - 1) + 1, ew = (int64_t)win->dw * (win->kw - 1) + 1;
    int64_t hp = xd[2] + win->pt + win->pb, wp = xd[3] + win->pl + win->pr;
    if (hp < eh || wp < ew)
        ops_fail(L, c, "the %lldx%lld window (with dilation) is larger than the padded input %lldx%lld",
             (long long)eh, (long long)ew, (long long)hp, (long long)wp);
    Shape s = { 4, { xd[0], wd[0], (hp - eh) / win->sh + 1, (wp - ew) / win->sw + 1 } };
    int in[2] = { x, w };
    int y = ops_node(L, c, IR_CONV2D, in, 2, &a, DT_F32, &s);
    return T(L, ir_layout(L, c, y, "NCHW", ol));
}

static int matmul(Lower *L, const Call *c, int x, int y, int batch, int m, int n, int k, int ta,
                  int tb, int64_t sa, int64_t sb, const Shape *out)
{
    Attrs a;
    memset(&a, 0, sizeof a);
    a.batch = batch, a.m = m, a.n = n, a.k = k, a.ta = ta, a.tb = tb, a.sa = sa, a.sb = sb;
    int in[2] = { x, y };
    return ops_node(L, c, IR_MATMUL, in, 2, &a, DT_F32, out);
}

/* dense(data[..., K], weight[N, K]) and matmul(data, weight) with transpose flags. */
static int lower_dense(Lower *L, const Call *c)
{
    int x = farg(L, c, 0), w = farg(L, c, 1);
    bool is_matmul = strcmp(c->op, "nn.matmul") == 0;
    int ta = is_matmul ? (int)ops_a_int(L, c, "transpose_a", 0) : 0;
    int tb = is_matmul ? (int)ops_a_int(L, c, "transpose_b", 0) : 1;
    check_out_dtype(L, c);
    const Shape *xs = &val(L, x)->shape, *ws = &val(L, w)->shape;
    if (xs->rank < 1 || ws->rank != 2 || (ta && xs->rank != 2))
        ops_fail(L, c, "expected data [..., K] and a 2-d weight, got %s and %s", ops_shape(L, x), ops_shape(L, w));
    int64_t K = ta ? xs->dim[0] : xs->dim[xs->rank - 1];
    int64_t M = ta ? xs->dim[1] : shape_numel(xs) / (K ? K : 1);
    int64_t N = tb ? ws->dim[0] : ws->dim[1];
    int64_t WK = tb ? ws->dim[1] : ws->dim[0];
    if (WK != K)
        ops_fail(L, c, "weight %s has %lld input features but data %s has %lld", ops_shape(L, w),
             (long long)WK, ops_shape(L, x), (long long)K);
    int64_t units[MAXA];
    if (a_ints(L, c, "units", units) == 1 && units[0] != N)
        ops_fail(L, c, "attrs.units is %lld but the weight %s gives %lld", (long long)units[0],
             ops_shape(L, w), (long long)N);
    Shape s = *xs;
    if (ta)
        s.dim[0] = M;
    s.dim[s.rank - 1] = N;
    return T(L, matmul(L, c, x, w, 1, (int)M, (int)N, (int)K, ta, tb, 0, 0, &s));
}

static int lower_batch_matmul(Lower *L, const Call *c)
{
    int x = farg(L, c, 0), y = farg(L, c, 1);
    int ta = (int)ops_a_int(L, c, "transpose_a", 0), tb = (int)ops_a_int(L, c, "transpose_b", 1);
    check_out_dtype(L, c);
    const Shape *xs = &val(L, x)->shape, *ys = &val(L, y)->shape;
    if (xs->rank != 3 || ys->rank != 3)
        ops_fail(L, c, "expected 3-d operands, got %s and %s", ops_shape(L, x), ops_shape(L, y));
    int64_t bx = xs->dim[0], by = ys->dim[0];
    int64_t M = ta ? xs->dim[2] : xs->dim[1], K = ta ? xs->dim[1] : xs->dim[2];
    int64_t N = tb ? ys->dim[1] : ys->dim[2], YK = tb ? ys->dim[2] : ys->dim[1];
    if (bx != by && bx != 1 && by != 1)
        ops_fail(L, c, "batch sizes %lld and %lld do not broadcast", (long long)bx, (long long)by);
    if (YK != K)
        ops_fail(L, c, "%s and %s disagree on the reduction size (%lld vs %lld)", ops_shape(L, x), ops_shape(L, y),
             (long long)K, (long long)YK);
    int64_t B = bx > by ? bx : by;
    Shape s = { 3, { B, M, N } };
    return T(L, matmul(L, c, x, y, (int)B, (int)M, (int)N, (int)K, ta, tb,
                       bx == 1 ? 0 : M * K, by == 1 ? 0 : N * K, &s));
}

/* ---- pooling ---- */

static int64_t pool_out(int64_t in, int pa, int pb, int k, int d, int s, bool ceil_mode)
{
    int64_t eff = (int64_t)d * (k - 1) + 1;
    int64_t span = in + pa + pb - eff;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    /* a last window that would start in the bottom/right padding is dropped */
    if (ceil_mode && (out - 1) * s >= in + pa)
        out--;
    return out;
}

static int lower_pool2d(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    DType dt = val(L, x)->dtype;
    if (dt != DT_F32 && !(dt == DT_I32 || (strcmp(c->op, "nn.max_pool2d") == 0 &&
                                           (dt == DT_I8 || dt == DT_U8))))
        ops_fail(L, c, "argument 0 is %s; %s is compiled for float32, int32%s", dtype_name(dt), c->op,
             strcmp(c->op, "nn.max_pool2d") == 0 ? ", int8 and uint8"
             : " (TVM sums an 8-bit tensor in its own type: cast it to int32 first, as TVM's "
               "frontends do)");
    const char *layout = ops_a_str(L, c, "layout", "NCHW");
    const char *ol = ops_a_str(L, c, "out_layout", "");
    if (!*ol)
        ol = layout;
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    x = ir_layout(L, c, x, layout, "NCHW");
    Attrs a;
    memset(&a, 0, sizeof a);
    Window *w = &a.conv;
    a.is_max = strcmp(c->op, "nn.max_pool2d") == 0;
    a.count_include_pad = (int)ops_a_int(L, c, "count_include_pad", 0);
    a_pair(L, c, "pool_size", 1, &w->kh, &w->kw);
    a_pair(L, c, "strides", 1, &w->sh, &w->sw);
    a_pair(L, c, "dilation", 1, &w->dh, &w->dw);
    a_padding(L, c, w);
    w->groups = 1;
    bool ceil_mode = ops_a_int(L, c, "ceil_mode", 0) != 0;
    const int64_t *xd = val(L, x)->shape.dim;
    if (xd[2] + w->pt + w->pb < (int64_t)w->dh * (w->kh - 1) + 1 ||
        xd[3] + w->pl + w->pr < (int64_t)w->dw * (w->kw - 1) + 1)
        ops_fail(L, c, "the %dx%d pool window is larger than the padded input %s", w->kh, w->kw, ops_shape(L, x));
    Shape s = { 4, { xd[0], xd[1], pool_out(xd[2], w->pt, w->pb, w->kh, w->dh, w->sh, ceil_mode),
                     pool_out(xd[3], w->pl, w->pr, w->kw, w->dw, w->sw, ceil_mode) } };
    int y = ops_node(L, c, IR_POOL2D, &x, 1, &a, dt, &s);
    return T(L, ir_layout(L, c, y, "NCHW", ol));
}

static int reduce(Lower *L, const Call *c, int x, const int *reduced, int kind, bool keepdims)
{
    const Shape *in = &val(L, x)->shape;
    Attrs a;
    memset(&a, 0, sizeof a);
    a.reduce_kind = kind;
    Shape s, k;
    memset(&s, 0, sizeof s);
    k = *in;
    for (int d = 0; d < in->rank; d++) {
        a.reduced[d] = reduced[d];
        if (!reduced[d])
            s.dim[s.rank++] = in->dim[d];
        else
            k.dim[d] = 1;
        if (reduced[d] && in->dim[d] == 0)
            ops_fail(L, c, "reduction over an empty axis %d", d);
    }
    int y = ops_node(L, c, IR_REDUCE, &x, 1, &a, val(L, x)->dtype, &s);
    return keepdims ? ir_reshape(L, c, y, &k) : y;
}

static int lower_global_pool2d(Lower *L, const Call *c)
{
    int x = farg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCHW");
    const char *ol = ops_a_str(L, c, "out_layout", "");
    if (!*ol)
        ol = layout;
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    x = ir_layout(L, c, x, layout, "NCHW");
    int reduced[RC_MAX_RANK] = { 0, 0, 1, 1 };
    int y = reduce(L, c, x, reduced, strcmp(c->op, "nn.global_max_pool2d") == 0 ? 2 : 1, true);
    return T(L, ir_layout(L, c, y, "NCHW", ol));
}

static int lower_adaptive_avg_pool2d(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCHW");
    const char *ol = ops_a_str(L, c, "out_layout", "");
    if (!*ol)
        ol = layout;
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    x = ir_layout(L, c, x, layout, "NCHW");
    const int64_t *xd = val(L, x)->shape.dim;
    int64_t os[MAXA];
    int n = a_ints(L, c, "output_size", os);
    if (n <= 0)
        os[0] = xd[2], os[1] = xd[3];
    else if (n == 1)
        os[1] = os[0];
    else if (n != 2)
        ops_fail(L, c, "attrs.output_size: expected 1 or 2 integers, got %d", n);
    for (int i = 0; i < 2; i++)
        if (os[i] < 1 || os[i] > 65536)
            ops_fail(L, c, "attrs.output_size: %lld is out of range", (long long)os[i]);
    Shape s = { 4, { xd[0], xd[1], os[0], os[1] } };
    int y = ops_adaptive_pool(L, c, x, &s, strcmp(c->op, "nn.adaptive_max_pool2d") == 0);
    return T(L, ir_layout(L, c, y, "NCHW", ol));
}

static int lower_softmax(Lower *L, const Call *c)
{
    int x = farg(L, c, 0);
    Attrs a;
    memset(&a, 0, sizeof a);
    if (val(L, x)->shape.rank == 0)
        ops_fail(L, c, "%s of a scalar: it needs an axis", c->op);
    a.axis = norm_axis(L, c, ops_a_int(L, c, "axis", -1), val(L, x)->shape.rank, "axis");
    a.log = strcmp(c->op, "nn.log_softmax") == 0;
    return T(L, ops_node(L, c, IR_SOFTMAX, &x, 1, &a, DT_F32, &val(L, x)->shape));
}

/* The axes a reduction's attrs name (axis: null for all; exclude: the others). */
static void reduce_axes(Lower *L, const Call *c, int r, int *reduced)
{
    int64_t axes[MAXA];
    int n = a_ints(L, c, "axis", axes);
    bool exclude = ops_a_int(L, c, "exclude", 0) != 0;
    for (int d = 0; d < r; d++)
        reduced[d] = n < 0;
    for (int i = 0; i < n; i++) {
        int d = norm_axis(L, c, axes[i], r, "axis");
        if (reduced[d])
            ops_fail(L, c, "axis %d is listed twice", d);
        reduced[d] = 1;
    }
    if (exclude && n >= 0)
        for (int d = 0; d < r; d++)
            reduced[d] = !reduced[d];
}

/* mean, sum, max, min (axis, keepdims, exclude). */
static int lower_reduce(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    int reduced[RC_MAX_RANK];
    reduce_axes(L, c, val(L, x)->shape.rank, reduced);
    bool keepdims = ops_a_int(L, c, "keepdims", 0) != 0;
    int kind = strcmp(c->op, "sum") == 0 ? 0 : strcmp(c->op, "mean") == 0 ? 1
             : strcmp(c->op, "max") == 0 ? 2 : strcmp(c->op, "prod") == 0 ? 4 : 3;
    if (val(L, x)->dtype != DT_F32)
        ops_fail(L, c, "argument is %s; %s is compiled for float32 only", dtype_name(val(L, x)->dtype), c->op);
    return T(L, reduce(L, c, x, reduced, kind, keepdims));
}

/* ---- shape and data movement ---- */

/* TVM's reshape rules: 0 copies a dim, -1 infers one, -2 copies the rest, -3 merges two,
 * -4 splits one into the next two values. */
static Shape reshape_target(Lower *L, const Call *c, const Shape *in, const int64_t *ns, int n,
                            bool allowzero)
{
    Shape s;
    memset(&s, 0, sizeof s);
    int src = 0, infer = -1;
    for (int i = 0; i < n; i++) {
        if (s.rank >= RC_MAX_RANK)
            ops_fail(L, c, "newshape has more than %d dimensions", RC_MAX_RANK);
        int64_t v = ns[i];
        if (v > RC_MAX_ELEMENTS)
            ops_fail(L, c, "newshape value %lld is larger than %lld (the limit)", (long long)v,
                 RC_MAX_ELEMENTS);
        if (v > 0 || (v == 0 && allowzero)) {
            s.dim[s.rank++] = v;
            src++;
        } else if (v == 0) {
            if (src >= in->rank)
                ops_fail(L, c, "newshape value 0 at position %d has no input dimension to copy", i);
            s.dim[s.rank++] = in->dim[src++];
        } else if (v == -1) {
            if (infer >= 0)
                ops_fail(L, c, "newshape has more than one -1");
            infer = s.rank;
            s.dim[s.rank++] = 1;
            src++;
        } else if (v == -2) {
            while (src < in->rank) {
                if (s.rank >= RC_MAX_RANK)
                    ops_fail(L, c, "newshape has more than %d dimensions", RC_MAX_RANK);
                s.dim[s.rank++] = in->dim[src++];
            }
        } else if (v == -3) {
            if (src + 1 >= in->rank)
                ops_fail(L, c, "newshape value -3 needs two input dimensions");
            s.dim[s.rank++] = in->dim[src] * in->dim[src + 1];
            src += 2;
        } else if (v == -4) {
            if (i + 2 >= n || src >= in->rank)
                ops_fail(L, c, "newshape value -4 must be followed by two values");
            int64_t d0 = ns[++i], d1 = ns[++i], whole = in->dim[src++];
            if (d0 > RC_MAX_ELEMENTS || d1 > RC_MAX_ELEMENTS)
                ops_fail(L, c, "newshape -4 value is larger than %lld (the limit)", RC_MAX_ELEMENTS);
            if (d0 == -1 && d1 > 0)
                d0 = whole / d1;
            else if (d1 == -1 && d0 > 0)
                d1 = whole / d0;
            if (d0 <= 0 || d1 <= 0 || d0 * d1 != whole || s.rank + 2 > RC_MAX_RANK)
                ops_fail(L, c, "newshape -4 cannot split %lld into %lld x %lld", (long long)whole,
                     (long long)ns[i - 1], (long long)ns[i]);
            s.dim[s.rank++] = d0;
            s.dim[s.rank++] = d1;
        } else {
            ops_fail(L, c, "newshape value %lld is not valid", (long long)v);
        }
    }
    int64_t total = shape_numel(in), known = 1;
    for (int d = 0; d < s.rank; d++)   /* saturating: the dims may not fit together */
        if (d != infer)
            known = s.dim[d] && known > INT64_MAX / s.dim[d] ? INT64_MAX : known * s.dim[d];
    if (infer >= 0) {
        if (known == 0 || total % known)
            ops_fail(L, c, "cannot infer the -1 dimension: %lld elements do not divide by %lld",
                 (long long)total, (long long)known);
        s.dim[infer] = total / known;
    }
    return s;
}

static int lower_reshape(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    int64_t ns[MAXA];
    int n = a_ints(L, c, "newshape", ns);
    if (n < 0)
        ops_fail(L, c, "attrs.newshape is missing");
    bool reverse = strstr(c->op, "reverse_reshape") != NULL || ops_a_int(L, c, "reverse", 0) != 0;
    bool allowzero = ops_a_int(L, c, "allowzero", 0) != 0;
    Shape in = val(L, x)->shape, s;
    if (reverse) {
        Shape rin = in;
        int64_t rns[MAXA];
        for (int d = 0; d < in.rank; d++)
            rin.dim[d] = in.dim[in.rank - 1 - d];
        for (int i = 0; i < n; i++)
            rns[i] = ns[n - 1 - i];
        Shape t = reshape_target(L, c, &rin, rns, n, allowzero);
        s = t;
        for (int d = 0; d < t.rank; d++)
            s.dim[d] = t.dim[t.rank - 1 - d];
    } else {
        s = reshape_target(L, c, &in, ns, n, allowzero);
    }
    return T(L, ir_reshape(L, c, x, &s));
}

static int lower_batch_flatten(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape *in = &val(L, x)->shape;
    if (in->rank < 1)
        ops_fail(L, c, "expected at least 1 dimension, got %s", ops_shape(L, x));
    Shape s = { 2, { in->dim[0], in->dim[0] ? shape_numel(in) / in->dim[0] : 0 } };
    return T(L, ir_reshape(L, c, x, &s));
}

static int lower_transpose(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    int r = val(L, x)->shape.rank;
    int64_t axes[MAXA];
    int n = a_ints(L, c, "axes", axes);
    int perm[RC_MAX_RANK], used[RC_MAX_RANK] = { 0 };
    if (n < 0 || n == 0) {
        for (int d = 0; d < r; d++)
            perm[d] = r - 1 - d;
    } else {
        if (n != r)
            ops_fail(L, c, "attrs.axes has %d entries for a rank-%d tensor", n, r);
        for (int d = 0; d < r; d++) {
            perm[d] = norm_axis(L, c, axes[d], r, "axis");
            if (used[perm[d]]++)
                ops_fail(L, c, "attrs.axes is not a permutation");
        }
    }
    return T(L, ir_transpose(L, c, x, perm));
}

static int lower_layout_transform(Lower *L, const Call *c)
{
    const char *from = ops_a_str(L, c, "src_layout", ""), *to = ops_a_str(L, c, "dst_layout", "");
    if (strlen(from) != strlen(to))
        ops_fail(L, c, "layout_transform %s to %s is not supported (plain layouts only)", from, to);
    return T(L, ir_layout(L, c, ops_arg(L, c, 0), from, to));
}

static int lower_squeeze(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape *in = &val(L, x)->shape;
    int64_t axes[MAXA];
    int n = a_ints(L, c, "axis", axes);
    int drop[RC_MAX_RANK] = { 0 };
    for (int d = 0; d < in->rank; d++)
        drop[d] = n < 0 && in->dim[d] == 1;
    for (int i = 0; i < n; i++) {
        int d = norm_axis(L, c, axes[i], in->rank, "axis");
        if (in->dim[d] != 1)
            ops_fail(L, c, "cannot squeeze axis %d of %s: its size is not 1", d, ops_shape(L, x));
        drop[d] = 1;
    }
    Shape s;
    memset(&s, 0, sizeof s);
    for (int d = 0; d < in->rank; d++)
        if (!drop[d])
            s.dim[s.rank++] = in->dim[d];
    return T(L, ir_reshape(L, c, x, &s));
}

static int lower_expand_dims(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape *in = &val(L, x)->shape;
    int64_t num = ops_a_int(L, c, "num_newaxis", 1), axis = ops_a_int(L, c, "axis", 0);
    if (num < 0 || in->rank + num > RC_MAX_RANK)
        ops_fail(L, c, "num_newaxis %lld gives more than %d dimensions", (long long)num, RC_MAX_RANK);
    if (axis < -in->rank - 1 || axis > in->rank)
        ops_fail(L, c, "axis %lld is out of range for rank %d", (long long)axis, in->rank);
    if (axis < 0)
        axis += in->rank + 1;
    Shape s;
    memset(&s, 0, sizeof s);
    for (int d = 0; d <= in->rank; d++) {
        if (d == axis)
            for (int k = 0; k < num; k++)
                s.dim[s.rank++] = 1;
        if (d < in->rank)
            s.dim[s.rank++] = in->dim[d];
    }
    return T(L, ir_reshape(L, c, x, &s));
}

static int lower_concatenate(Lower *L, const Call *c)
{
    const Item *t = &L->items[c->args[0]];
    if (t->value >= 0)
        ops_fail(L, c, "expected a tuple of tensors");
    int n = (int)arrlen(t->fields);
    if (n < 1)
        ops_fail(L, c, "concatenate of an empty tuple");
    arrsetlen(L->tmp, 0);
    for (int i = 0; i < n; i++) {
        const Item *f = &L->items[t->fields[i]];
        if (f->value < 0)
            ops_fail(L, c, "field %d of the tuple is itself a tuple", i);
        arrput(L->tmp, f->value);
    }
    const int *in = L->tmp;
    Shape s = val(L, in[0])->shape;
    int axis = norm_axis(L, c, ops_a_int(L, c, "axis", 0), s.rank, "axis");
    s.dim[axis] = 0;
    for (int i = 0; i < n; i++) {
        const Shape *si = &val(L, in[i])->shape;
        bool ok = si->rank == s.rank && val(L, in[i])->dtype == val(L, in[0])->dtype;
        for (int d = 0; ok && d < s.rank; d++)
            ok = d == axis || si->dim[d] == s.dim[d];
        if (!ok)
            ops_fail(L, c, "tensor %d is %s %s, which does not match tensor 0 (%s %s) outside axis %d",
                 i, dtype_name(val(L, in[i])->dtype), ops_shape(L, in[i]), dtype_name(val(L, in[0])->dtype),
                 ops_shape(L, in[0]), axis);
        s.dim[axis] += si->dim[axis];
    }
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = axis;
    int y = ops_node(L, c, IR_CONCAT, in, n, &a, val(L, in[0])->dtype, &s);
    return T(L, y);
}

/* A slice of x: begin and step per axis, out shape given. */
static int ir_slice(Lower *L, const Call *c, int x, const int64_t *begin, const int64_t *step,
                    const Shape *s)
{
    const Shape *in = &val(L, x)->shape;
    int64_t st[RC_MAX_RANK];
    shape_strides(in, st);
    Attrs a;
    memset(&a, 0, sizeof a);
    bool whole = shape_eq(s, in);
    for (int d = 0; d < in->rank; d++) {
        a.xoff += begin[d] * st[d];
        a.xstride[d] = step[d] * st[d];
        whole = whole && begin[d] == 0 && step[d] == 1;
    }
    if (whole)
        return x;
    return ops_node(L, c, IR_COPY, &x, 1, &a, val(L, x)->dtype, s);
}

static int lower_split(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape in_shape = val(L, x)->shape;  /* a copy: each slice below grows g->values */
    const Shape *in = &in_shape;
    int axis = norm_axis(L, c, ops_a_int(L, c, "axis", 0), in->rank, "axis");
    int64_t dim = in->dim[axis];
    int64_t v[MAXA], cuts[MAXA + 2];
    int ncut = 0;
    if (!c->attrs)
        ops_fail(L, c, "attrs.indices_or_sections is missing");
    int r = doc_ref(L->doc, c->attrs, "indices_or_sections");
    if (r == 0)
        ops_fail(L, c, "attrs.indices_or_sections is missing");
    cuts[ncut++] = 0;
    if (doc_is(L->doc, r, "Array")) {
        int n = a_ints(L, c, "indices_or_sections", v);
        for (int i = 0; i < n; i++) {
            int64_t k = v[i] < 0 ? v[i] + dim : v[i];
            if (k < cuts[ncut - 1] || k > dim)
                ops_fail(L, c, "split indices must increase within 0..%lld", (long long)dim);
            cuts[ncut++] = k;
        }
    } else {
        int64_t sections = doc_intimm(L->doc, r);
        if (sections < 1 || sections > MAXA || dim % sections)
            ops_fail(L, c, "cannot split axis %d of size %lld into %lld equal sections", axis,
                 (long long)dim, (long long)sections);
        for (int64_t i = 1; i < sections; i++)
            cuts[ncut++] = i * (dim / sections);
    }
    cuts[ncut++] = dim;
    int items[MAXA + 1];
    for (int i = 0; i + 1 < ncut; i++) {
        int64_t begin[RC_MAX_RANK] = { 0 }, step[RC_MAX_RANK];
        Shape s = *in;
        for (int d = 0; d < in->rank; d++)
            step[d] = 1;
        begin[axis] = cuts[i];
        s.dim[axis] = cuts[i + 1] - cuts[i];
        items[i] = T(L, ir_slice(L, c, x, begin, step, &s));
    }
    return item_tuple(L, items, ncut - 1);
}

static int lower_strided_slice(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape *in = &val(L, x)->shape;
    int r = in->rank;
    int64_t b[MAXA], e[MAXA], st[MAXA], ax[MAXA];
    int nb = a_ints(L, c, "begin", b), ne = a_ints(L, c, "end", e), ns = a_ints(L, c, "strides", st);
    int na = a_ints(L, c, "axes", ax);
    bool size_mode = strcmp(ops_a_str(L, c, "slice_mode", "end"), "size") == 0;
    int axes[RC_MAX_RANK], n;
    if (na >= 0) {
        if (na > r)
            ops_fail(L, c, "attrs.axes has %d entries for a rank-%d tensor", na, r);
        n = na;
        for (int i = 0; i < na; i++)
            axes[i] = norm_axis(L, c, ax[i], r, "axis");
    } else {
        n = nb > ne ? nb : ne;
        if (n < 0)
            n = 0;
        if (n > r)
            ops_fail(L, c, "begin/end have %d entries for a rank-%d tensor", n, r);
        for (int i = 0; i < n; i++)
            axes[i] = i;
    }
    int64_t begin[RC_MAX_RANK] = { 0 }, step[RC_MAX_RANK];
    Shape s = *in;
    for (int d = 0; d < r; d++)
        step[d] = 1;
    /* Dims are at most RC_MAX_ELEMENTS < 2^31: clamping the file's values to +-2^40 keeps
     * their meaning and keeps the arithmetic below in range. */
    const int64_t big = (int64_t)1 << 40;
    for (int i = 0; i < nb; i++)
        b[i] = b[i] < -big ? -big : b[i] > big ? big : b[i];
    for (int i = 0; i < ne; i++)
        e[i] = e[i] < -big ? -big : e[i] > big ? big : e[i];
    for (int i = 0; i < ns; i++)
        st[i] = st[i] < -big ? -big : st[i] > big ? big : st[i];
    for (int i = 0; i < n; i++) {
        int d = axes[i];
        int64_t dim = in->dim[d];
        int64_t k = ns <= 0 ? 1 : st[i < ns ? i : ns - 1];
        if (k == 0)
            ops_fail(L, c, "stride 0 on axis %d", d);
        if (size_mode)
            k = 1;
        int64_t lo = i < nb ? b[i] : (k > 0 ? 0 : dim - 1);
        int64_t hi;
        if (size_mode) {
            int64_t len = i < ne ? e[i] : -1;
            if (lo < 0)
                lo += dim;
            hi = len < 0 ? dim : lo + len;
        } else {
            hi = i < ne ? e[i] : (k > 0 ? dim : -dim - 1);
        }
        if (lo < 0)
            lo += dim;
        if (hi < 0 && !size_mode)
            hi += dim;
        /* clamp as numpy does */
        if (k > 0) {
            lo = lo < 0 ? 0 : lo > dim ? dim : lo;
            hi = hi < 0 ? 0 : hi > dim ? dim : hi;
        } else {
            lo = lo < -1 ? -1 : lo > dim - 1 ? dim - 1 : lo;
            hi = hi < -1 ? -1 : hi > dim - 1 ? dim - 1 : hi;
        }
        int64_t len = k > 0 ? (hi > lo ? (hi - lo + k - 1) / k : 0)
                            : (lo > hi ? (lo - hi + (-k) - 1) / (-k) : 0);
        begin[d] = len ? lo : 0;
        step[d] = len > 1 ? k : 1;     /* one element: the step does not matter */
        s.dim[d] = len;
    }
    return T(L, ir_slice(L, c, x, begin, step, &s));
}

/* The value of a scalar constant argument (nn.pad's pad value). */
static float const_scalar_value(Lower *L, const Call *c, int v)
{
    const Value *x = val(L, v);
    if (x->kind != VAL_CONST || shape_numel(&x->shape) != 1)
        ops_fail(L, c, "the pad value must be a scalar constant");
    const Tensor *t = &L->g->consts[x->constant];
    switch (t->dtype) {
    case DT_F32: return *(const float *)t->data;
    case DT_F64: return (float)*(const double *)t->data;
    case DT_I32: return (float)*(const int32_t *)t->data;
    case DT_I64: return (float)*(const int64_t *)t->data;
    case DT_I8: return (float)*(const int8_t *)t->data;
    default: return (float)*(const uint8_t *)t->data;
    }
}

static int lower_pad(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape *in = &val(L, x)->shape;
    const char *mode = ops_a_str(L, c, "pad_mode", "constant");
    if (strcmp(mode, "constant") != 0)
        ops_fail(L, c, "pad_mode '%s' is not supported (constant only)", mode);
    float value = c->nargs > 1 ? const_scalar_value(L, c, ops_arg(L, c, 1))
                               : (float)a_double(L, c, "pad_value", 0.0);
    int pw = c->attrs ? doc_ref(L->doc, c->attrs, "pad_width") : 0;
    if (pw == 0)
        ops_fail(L, c, "attrs.pad_width is missing");
    int n;
    const int *rows = doc_array(L->doc, pw, &n);
    if (n != in->rank)
        ops_fail(L, c, "attrs.pad_width has %d rows for a rank-%d tensor", n, in->rank);
    if (val(L, x)->dtype != DT_F32 && qnn_type_code(val(L, x)->dtype) < 0)
        ops_fail(L, c, "data is %s; nn.pad is compiled for float32, int8, uint8 and int32",
             dtype_name(val(L, x)->dtype));
    if (val(L, x)->dtype != DT_F32)
        value = (float)qnn_int_param(val(L, x)->dtype, value); /* a zero point, usually */
    Attrs a;
    memset(&a, 0, sizeof a);
    a.p0 = value;
    Shape s = *in;
    bool any = false;
    for (int d = 0; d < n; d++) {
        int m;
        const int *p = doc_array(L->doc, rows[d], &m);
        if (m != 2)
            ops_fail(L, c, "attrs.pad_width[%d]: expected 2 integers, got %d", d, m);
        int64_t lo = doc_intimm(L->doc, p[0]), hi = doc_intimm(L->doc, p[1]);
        if (lo < 0 || hi < 0 || lo > 65536 || hi > 65536)
            ops_fail(L, c, "attrs.pad_width[%d]: negative or huge padding", d);
        a.pad_lo[d] = lo;
        s.dim[d] += lo + hi;
        any = any || lo || hi;
    }
    if (!any)
        return T(L, x);
    if (shape_numel(&s) > RC_MAX_ELEMENTS)
        ops_fail(L, c, "the padded tensor has more than %lld elements", RC_MAX_ELEMENTS);
    return T(L, ops_node(L, c, IR_PAD, &x, 1, &a, val(L, x)->dtype, &s));
}

/* ---- the table ---- */

/* name, argument counts, lowering, the dtypes of the data (and which argument holds it when
 * it is not argument 0): load.c refuses a call on another dtype before lowering it */
static const RelayOp relay_ops[] = {
    /* the elementwise operators with a Relay name in runtime/elementwise.def */
#define UNARY(kind, name, relay, dtypes, expr) { relay, 1, 1, lower_unary, dtypes },
#define BINARY(kind, name, relay, dtypes, expr) { relay, 2, 2, lower_binary, dtypes },
#include "../runtime/elementwise.def"
#undef UNARY
#undef BINARY
    { "nn.conv2d",                  2, 2, lower_conv2d,                DTS_F32 },
    { "nn.dense",                   2, 2, lower_dense,                 DTS_F32 },
    { "nn.matmul",                  2, 2, lower_dense,                 DTS_F32 },
    { "nn.batch_matmul",            2, 2, lower_batch_matmul,          DTS_F32 },
    { "nn.bias_add",                2, 2, lower_bias_add,              DTS_NUM },
    { "nn.batch_norm",              5, 5, lower_batch_norm,            DTS_F32 },
    { "nn.leaky_relu",              1, 1, lower_leaky_relu,            DTS_FLOAT },
    { "nn.prelu",                   2, 2, lower_prelu,                 DTS_F32 },
    { "clip",                       1, 1, lower_clip,                  DTS_NUM },
    { "nn.max_pool2d",              1, 1, lower_pool2d,                DTS_F32 | DTS_QNN },
    { "nn.avg_pool2d",              1, 1, lower_pool2d,                DTS_F32 | DTS(DT_I32) },
    { "nn.global_avg_pool2d",       1, 1, lower_global_pool2d,         DTS_F32 },
    { "nn.global_max_pool2d",       1, 1, lower_global_pool2d,         DTS_F32 },
    { "nn.adaptive_avg_pool2d",     1, 1, lower_adaptive_avg_pool2d,   DTS_F32 | DTS(DT_I32) },
    /* 0.6's name */
    { "contrib.adaptive_avg_pool2d", 1, 1, lower_adaptive_avg_pool2d,   DTS_F32 | DTS(DT_I32) },
    { "nn.softmax",                 1, 1, lower_softmax,               DTS_F32 },
    { "nn.log_softmax",             1, 1, lower_softmax,               DTS_F32 },
    { "reshape",                    1, 1, lower_reshape,               DTS_ALL },
    { "contrib_reverse_reshape",    1, 1, lower_reshape,               DTS_ALL },
    { "_contrib_reverse_reshape",   1, 1, lower_reshape,               DTS_ALL }, /* 0.6's name */
    { "transpose",                  1, 1, lower_transpose,             DTS_ALL },
    { "squeeze",                    1, 1, lower_squeeze,               DTS_ALL },
    { "expand_dims",                1, 1, lower_expand_dims,           DTS_ALL },
    { "concatenate",                1, 1, lower_concatenate,           DTS_ALL },
    { "split",                      1, 1, lower_split,                 DTS_ALL },
    { "strided_slice",              1, 1, lower_strided_slice,         DTS_ALL },
    { "nn.pad",                     1, 2, lower_pad,                   DTS_F32 | DTS_QNN },
    { "nn.batch_flatten",           1, 1, lower_batch_flatten,         DTS_ALL },
    { "mean",                       1, 1, lower_reduce,                DTS_F32 },
    { "sum",                        1, 1, lower_reduce,                DTS_F32 },
    { "max",                        1, 1, lower_reduce,                DTS_F32 },
    { "min",                        1, 1, lower_reduce,                DTS_F32 },
    { "nn.dropout",                 1, 1, lower_dropout,               DTS_ALL },
    { "copy",                       1, 1, lower_copy,                  DTS_ALL },
    { "layout_transform",           1, 1, lower_layout_transform,      DTS_ALL },
    { "cast",                       1, 1, lower_cast,                  DTS_ALL },
    /* QNN (compiler/ops_qnn.c); argument counts are checked there, after 0.6's dialect */
    { "qnn.quantize",               1, 3, lower_qnn_quantize,          DTS_QNN | DATA_RESULT },
    { "qnn.dequantize",             1, 3, lower_qnn_dequantize,        DTS_QNN },
    { "qnn.requantize",             1, 5, lower_qnn_requantize,        DTS_QNN },
    { "qnn.conv2d",                 2, 6, lower_qnn_conv2d,            DTS_Q8 },
    { "qnn.dense",                  2, 6, lower_qnn_dense,             DTS_Q8 },
    { "qnn.add",                    2, 8, lower_qnn_binary,            DTS_QNN },
    { "qnn.subtract",               2, 8, lower_qnn_binary,            DTS_QNN },
    { "qnn.mul",                    2, 8, lower_qnn_binary,            DTS_QNN },
    { "qnn.concatenate",            1, 5, lower_qnn_concatenate,       DTS_QNN },
    { "fixed_point_multiply",       1, 1, lower_fixed_point_multiply,  DTS(DT_I32) },
    /* compositions of the IR ops (compiler/ops_tensor.c) */
    { "nn.conv1d",                  2, 2, lower_conv1d,                DTS_F32 },
    { "nn.max_pool1d",              1, 1, lower_pool1d,                DTS_F32 | DTS_QNN },
    { "nn.avg_pool1d",              1, 1, lower_pool1d,                DTS_F32 | DTS(DT_I32) },
    { "nn.adaptive_avg_pool1d",     1, 1, lower_adaptive_avg_pool1d,   DTS_F32 | DTS(DT_I32) },
    { "full",                       1, 1, lower_full,                  DTS_ALL },
    { "full_like",                  2, 2, lower_full,                  DTS_ALL },
    { "zeros",                      0, 0, lower_zeros_ones,            DTS_ALL },
    { "ones",                       0, 0, lower_zeros_ones,            DTS_ALL },
    { "zeros_like",                 1, 1, lower_zeros_ones,            DTS_ALL },
    { "ones_like",                  1, 1, lower_zeros_ones,            DTS_ALL },
    { "broadcast_to",               1, 1, lower_broadcast_to,          DTS_ALL },
    { "broadcast_to_like",          2, 2, lower_broadcast_to,          DTS_ALL },
    { "reshape_like",               2, 2, lower_reshape_like,          DTS_ALL },
    { "collapse_sum_like",          2, 2, lower_collapse_sum,          DTS_F32 },
    { "stack",                      1, 1, lower_stack,                 DTS_ALL },
    { "take",                       2, 2, lower_take,                  DTS_ALL },
    { "nn.layer_norm",              3, 3, lower_layer_norm,            DTS_F32 },
    { "nn.instance_norm",           3, 3, lower_layer_norm,            DTS_F32 },
    { "nn.group_norm",              3, 3, lower_group_norm,            DTS_F32 },
    { "variance",                   2, 2, lower_variance,              DTS_F32 },
    { "equal",                      2, 2, lower_compare,               DTS_ALL },
    { "not_equal",                  2, 2, lower_compare,               DTS_ALL },
    { "less",                       2, 2, lower_compare,               DTS_ALL },
    { "less_equal",                 2, 2, lower_compare,               DTS_ALL },
    { "greater",                    2, 2, lower_compare,               DTS_ALL },
    { "greater_equal",              2, 2, lower_compare,               DTS_ALL },
    { "reverse",                    1, 1, lower_reverse,               DTS_ALL },
    { "tile",                       1, 1, lower_tile,                  DTS_ALL },
    { "repeat",                     1, 1, lower_repeat,                DTS_ALL },
    { "nn.depth_to_space",          1, 1, lower_subpixel,              DTS_ALL },
    { "nn.space_to_depth",          1, 1, lower_subpixel,              DTS_ALL },
    { "nn.upsampling",              1, 1, lower_upsampling,            DTS_F32 | DTS_Q8 },
    { "nn.lrn",                     1, 1, lower_lrn,                   DTS_F32 },
    { "nn.l2_normalize",            1, 1, lower_l2_normalize,          DTS_F32 },
    /* indexing and selection kernels (compiler/ops_tensor.c) */
    { "gather",                     2, 2, lower_gather,                DTS_ALL },
    { "where",                      3, 3, lower_where,                 DTS_ALL | DATA_ARG(1) },
    { "argmax",                     1, 1, lower_argreduce,             DTS_F32 | DTS_INT },
    { "argmin",                     1, 1, lower_argreduce,             DTS_F32 | DTS_INT },
    { "cumsum",                     1, 1, lower_cumsum,                DTS_F32 | DTS_INT | DTS(DT_BOOL) },
    { "prod",                       1, 1, lower_reduce,                DTS_F32 },
    { "nn.adaptive_max_pool2d",     1, 1, lower_adaptive_avg_pool2d,   DTS_F32 | DTS_QNN },
    { "nn.adaptive_max_pool1d",     1, 1, lower_adaptive_avg_pool1d,   DTS_F32 | DTS_QNN },
    { "nn.conv2d_transpose",        2, 2, lower_conv_transpose,        DTS_F32 },
    { "nn.conv1d_transpose",        2, 2, lower_conv_transpose,        DTS_F32 },
    { "image.resize2d",             1, 1, lower_resize2d,              DTS_F32 | DTS_Q8 },
};

const RelayOp *relay_op_find(const char *name)
{
    for (size_t i = 0; i < sizeof relay_ops / sizeof relay_ops[0]; i++)
        if (relay_ops[i].name[0] && strcmp(relay_ops[i].name, name) == 0)
            return &relay_ops[i];
    return NULL;
}

bool relay_op_at(int i, const char **name, unsigned *dtypes)
{
    int k = -1;
    for (size_t j = 0; j < sizeof relay_ops / sizeof relay_ops[0]; j++)
        if (relay_ops[j].name[0] && ++k == i) {
            *name = relay_ops[j].name;
            *dtypes = DTS_OF(&relay_ops[j]);
            return true;
        }
    return false;
}

const char *relay_op_list(void)
{
    static char *list;
    if (!list) {
        Buf b = { 0 };
        for (size_t i = 0; i < sizeof relay_ops / sizeof relay_ops[0]; i++)
            if (relay_ops[i].name[0])
                buf_printf(&b, "%s%s", buf_len(&b) ? ", " : "", relay_ops[i].name);
        list = xstrdup(buf_cstr(&b));
        buf_free(&b);
    }
    return list;
}

/* ---- helpers for the QNN operators (compiler/ops_qnn.c) ---- */

int ops_a_ints(Lower *L, const Call *c, const char *name, int64_t *out)
{
    return a_ints(L, c, name, out);
}

void ops_a_pair(Lower *L, const Call *c, const char *name, int dflt, int *h, int *w)
{
    a_pair(L, c, name, dflt, h, w);
}

void ops_a_padding(Lower *L, const Call *c, Window *w) { a_padding(L, c, w); }

int ops_norm_axis(Lower *L, const Call *c, int64_t axis, int rank, const char *what)
{
    return norm_axis(L, c, axis, rank, what);
}

int ops_layout(Lower *L, const Call *c, int x, const char *from, const char *to)
{
    return ir_layout(L, c, x, from, to);
}

int ops_reshape(Lower *L, const Call *c, int x, const Shape *s) { return ir_reshape(L, c, x, s); }

int ops_unary(Lower *L, const Call *c, int x, EwKind ew, float p0, float p1)
{
    return ir_unary(L, c, x, ew, p0, p1);
}

int ops_binary(Lower *L, const Call *c, int x, int y, EwKind ew)
{
    return ir_binary(L, c, x, y, ew);
}

/* ---- helpers for the tensor operators (compiler/ops_tensor.c) ---- */

double ops_a_double(Lower *L, const Call *c, const char *name, double dflt)
{
    return a_double(L, c, name, dflt);
}

void ops_reduce_axes(Lower *L, const Call *c, int rank, int *reduced)
{
    reduce_axes(L, c, rank, reduced);
}

int ops_reduce(Lower *L, const Call *c, int x, const int *reduced, int kind, bool keepdims)
{
    return reduce(L, c, x, reduced, kind, keepdims);
}

int ops_transpose(Lower *L, const Call *c, int x, const int *perm)
{
    return ir_transpose(L, c, x, perm);
}

int ops_along_axis(Lower *L, const Call *c, int v, int axis, int r, int64_t n, const char *what)
{
    return along_axis(L, c, v, axis, r, n, what);
}

int64_t ops_pool_out(int64_t in, int pa, int pb, int k, int d, int s, bool ceil_mode)
{
    return pool_out(in, pa, pb, k, d, s, ceil_mode);
}
