/*
 * ops_tensor.c: Relay operators lowered by composition onto the IR ops that exist.
 *   1-D convolution and pooling: their 2-D kernels over a height of 1 (reshape views).
 *   Constants and broadcasts (full, zeros, ones, *_like, broadcast_to): a scalar copied
 *   with stride 0 on every axis; constant folding evaluates the small ones.
 *   stack, take with constant indices: strided copies and a concatenation.
 *   Normalisations (group_norm, instance_norm, variance): reductions and elementwise
 *   steps, in the order TVM's SimplifyInference writes them; layer_norm is one kernel
 *   of that arithmetic (rk_layer_norm).
 *   Comparisons: the elementwise table's expressions with a bool result.
 *   reverse, tile, repeat, depth_to_space, space_to_depth, nearest upsampling: strided
 *   copies (negative strides, stride 0) and permutations of reshape views.
 *   lrn, l2_normalize: an average pool or a sum, then elementwise steps.
 * Semantics are TVM's (TOPI).
 */
#include "ops.h"

#include <math.h>
#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

#define MAXA 64 /* most integers an attrs array may hold (as ops.c) */

static Value *val(Lower *L, int v) { return &L->g->values[v]; }
static int T(Lower *L, int v) { return item_tensor(L, v); }

static int f32_arg(Lower *L, const Call *c, int i)
{
    int v = ops_arg(L, c, i);
    if (val(L, v)->dtype != DT_F32)
        ops_fail(L, c, "argument %d is %s; %s is compiled for float32 only", i,
                 dtype_name(val(L, v)->dtype), c->op);
    return v;
}

/* An attrs field holding one integer (inline, an IntImm, or an Array of one); dflt when
 * absent or null. */
static int64_t a_integer(Lower *L, const Call *c, const char *name, int64_t dflt)
{
    int64_t v[MAXA];
    int n = ops_a_ints(L, c, name, v);
    if (n < 0)
        return dflt;
    if (n != 1)
        ops_fail(L, c, "attrs.%s: expected 1 integer, got %d", name, n);
    return v[0];
}

/* A window attr of 1-D pooling and convolution (pool_size, strides, dilation). */
static int a_win(Lower *L, const Call *c, const char *name, int dflt)
{
    int64_t v = a_integer(L, c, name, dflt);
    if (v < 1 || v > 65536)
        ops_fail(L, c, "attrs.%s: %lld is out of range (1 to 65536)", name, (long long)v);
    return (int)v;
}

/* 1-D padding: one value for both sides, or left and right. */
static void a_pad1(Lower *L, const Call *c, Window *w)
{
    int64_t v[MAXA], p[2] = { 0, 0 };
    int n = ops_a_ints(L, c, "padding", v);
    if (n == 1)
        p[0] = p[1] = v[0];
    else if (n == 2)
        p[0] = v[0], p[1] = v[1];
    else if (n >= 0)
        ops_fail(L, c, "attrs.padding: expected 1 or 2 integers, got %d", n);
    for (int i = 0; i < 2; i++)
        if (p[i] < 0 || p[i] > 65536)
            ops_fail(L, c, "attrs.padding: %lld is out of range (0 to 65536)", (long long)p[i]);
    w->pl = (int)p[0], w->pr = (int)p[1];
}

/* The "dtype" attr, or dflt when it is empty. */
static DType a_dtype(Lower *L, const Call *c, DType dflt)
{
    const char *s = ops_a_str(L, c, "dtype", "");
    DType dt;
    if (!*s)
        return dflt;
    if (!dtype_parse(s, &dt))
        ops_fail(L, c, "attrs.dtype '%s' is not supported", s);
    return dt;
}

/* The "shape" attr of the init ops (full, zeros, ones, broadcast_to). */
static Shape a_shape(Lower *L, const Call *c)
{
    int64_t v[MAXA];
    int n = ops_a_ints(L, c, "shape", v);
    Shape s;
    memset(&s, 0, sizeof s);
    if (n < 0)
        ops_fail(L, c, "attrs.shape is missing");
    if (n > RC_MAX_RANK)
        ops_fail(L, c, "attrs.shape has %d dimensions, over the limit of %d", n, RC_MAX_RANK);
    s.rank = n;
    for (int d = 0; d < n; d++) {
        if (v[d] < 0 || v[d] > RC_MAX_ELEMENTS)
            ops_fail(L, c, "attrs.shape[%d] is %lld, out of range", d, (long long)v[d]);
        s.dim[d] = v[d];
    }
    return s;
}

/* ---- IR builders ---- */

/* A rank-0 constant of dtype dt holding v (saturated and truncated as a cast would). */
static int const_value(Lower *L, const Call *c, DType dt, double v)
{
    Tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.nbytes = dtype_size(dt);
    if (!graph_const_fits(L->g, (int64_t)t.nbytes))
        ops_fail(L, c, "the constants exceed %lld bytes (the limit)", (long long)RC_MAX_CONST_BYTES);
    t.data = xcalloc(1, 8);
    int64_t i = dt == DT_F32 || dt == DT_F64 || dt == DT_BOOL ? 0 : qnn_int_param(dt, v);
    switch (dt) {
    case DT_F32: *(float *)t.data = (float)v; break;
    case DT_F64: *(double *)t.data = v; break;
    case DT_BOOL: *(uint8_t *)t.data = v != 0; break;
    case DT_I8: *(int8_t *)t.data = (int8_t)i; break;
    case DT_U8: *(uint8_t *)t.data = (uint8_t)i; break;
    case DT_I16: *(int16_t *)t.data = (int16_t)i; break;
    case DT_I32: *(int32_t *)t.data = (int32_t)i; break;
    default: *(int64_t *)t.data = i; break;
    }
    return graph_add_const(L->g, t, c->json);
}

static int cast_to(Lower *L, const Call *c, int x, DType dt)
{
    if (val(L, x)->dtype == dt)
        return x;
    Attrs a;
    memset(&a, 0, sizeof a);
    a.ew = EW_CAST;
    Shape s = val(L, x)->shape;
    return ops_node(L, c, IR_UNARY, &x, 1, &a, dt, &s);
}

/* x broadcast to shape s by numpy's rules (x's rank at most s's): a copy reading x with
 * stride 0 along the broadcast axes, or a view when only axes of 1 are added. */
static int broadcast(Lower *L, const Call *c, int x, const Shape *s)
{
    Shape xs = val(L, x)->shape;
    char b1[128], b2[128];
    if (xs.rank > s->rank)
        ops_fail(L, c, "cannot broadcast %s to %s", shape_str(&xs, b1, sizeof b1),
                 shape_str(s, b2, sizeof b2));
    int64_t st[RC_MAX_RANK];
    shape_strides(&xs, st);
    Attrs a;
    memset(&a, 0, sizeof a);
    for (int d = 0; d < s->rank; d++) {
        int sd = d - (s->rank - xs.rank);
        if (sd >= 0 && xs.dim[sd] != s->dim[d] && xs.dim[sd] != 1)
            ops_fail(L, c, "cannot broadcast %s to %s (axis %d: %lld vs %lld)",
                     shape_str(&xs, b1, sizeof b1), shape_str(s, b2, sizeof b2), d,
                     (long long)xs.dim[sd], (long long)s->dim[d]);
        a.xstride[d] = sd >= 0 && xs.dim[sd] != 1 ? st[sd] : 0;
    }
    if (shape_numel(&xs) == shape_numel(s))
        return ops_reshape(L, c, x, s);
    return ops_node(L, c, IR_COPY, &x, 1, &a, val(L, x)->dtype, s);
}

/* Concatenation of n values of one dtype whose shapes agree outside axis. */
static int concat(Lower *L, const Call *c, const int *in, int n, int axis)
{
    if (n == 1)
        return in[0];
    Shape s = val(L, in[0])->shape;
    s.dim[axis] = 0;
    for (int i = 0; i < n; i++)
        s.dim[axis] += val(L, in[i])->shape.dim[axis];
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = axis;
    return ops_node(L, c, IR_CONCAT, in, n, &a, val(L, in[0])->dtype, &s);
}

/* A rank-3 tensor [a, b, w] viewed as [a, b, 1, w], and back. */
static int view_2d(Lower *L, const Call *c, int x)
{
    const int64_t *d = val(L, x)->shape.dim;
    Shape s = { 4, { d[0], d[1], 1, d[2] } };
    return ops_reshape(L, c, x, &s);
}

static int view_1d(Lower *L, const Call *c, int x)
{
    const int64_t *d = val(L, x)->shape.dim;
    Shape s = { 3, { d[0], d[1], d[3] } };
    return ops_reshape(L, c, x, &s);
}

static const char *out_layout(Lower *L, const Call *c, const char *layout)
{
    const char *ol = ops_a_str(L, c, "out_layout", "");
    return *ol ? ol : layout;
}

/* ---- 1-D convolution and pooling ---- */

int lower_conv1d(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0), w = f32_arg(L, c, 1);
    const char *dl = ops_a_str(L, c, "data_layout", "NCW"), *kl = ops_a_str(L, c, "kernel_layout", "OIW");
    const char *ol = out_layout(L, c, dl);
    const char *od = ops_a_str(L, c, "out_dtype", "");
    if (*od && strcmp(od, "float32") != 0)
        ops_fail(L, c, "out_dtype %s is not supported (float32 only)", od);
    if (val(L, x)->shape.rank != 3 || val(L, w)->shape.rank != 3)
        ops_fail(L, c, "expected 3-d data and weight, got %s and %s", ops_shape(L, x), ops_shape(L, w));
    x = ops_layout(L, c, x, dl, "NCW");
    w = ops_layout(L, c, w, kl, "OIW");
    Attrs a;
    memset(&a, 0, sizeof a);
    Window *win = &a.conv;
    win->kh = win->sh = win->dh = 1;
    win->sw = a_win(L, c, "strides", 1);
    win->dw = a_win(L, c, "dilation", 1);
    a_pad1(L, c, win);
    int64_t groups = ops_a_int(L, c, "groups", 1);
    const Shape xs = val(L, x)->shape, ws = val(L, w)->shape;
    if (groups < 1 || groups > RC_MAX_ELEMENTS || xs.dim[1] % groups || ws.dim[0] % groups)
        ops_fail(L, c, "groups %lld must divide the %lld input and %lld output channels",
                 (long long)groups, (long long)xs.dim[1], (long long)ws.dim[0]);
    if (ws.dim[1] * groups != xs.dim[1])
        ops_fail(L, c, "weight %s expects %lld input channels (x%lld groups), but data %s has %lld",
                 ops_shape(L, w), (long long)ws.dim[1], (long long)groups, ops_shape(L, x),
                 (long long)xs.dim[1]);
    if (a_integer(L, c, "kernel_size", ws.dim[2]) != ws.dim[2])
        ops_fail(L, c, "attrs.kernel_size does not match the weight %s", ops_shape(L, w));
    if (a_integer(L, c, "channels", ws.dim[0]) != ws.dim[0])
        ops_fail(L, c, "attrs.channels does not match the weight %s", ops_shape(L, w));
    if (ws.dim[2] < 1 || ws.dim[2] > 65536)
        ops_fail(L, c, "weight %s: kernel width out of range", ops_shape(L, w));
    win->kw = (int)ws.dim[2], win->groups = (int)groups;
    int64_t ew = (int64_t)win->dw * (win->kw - 1) + 1, wp = xs.dim[2] + win->pl + win->pr;
    if (wp < ew)
        ops_fail(L, c, "the %lld-wide window (with dilation) is larger than the padded input %lld",
                 (long long)ew, (long long)wp);
    Shape s = { 4, { xs.dim[0], ws.dim[0], 1, (wp - ew) / win->sw + 1 } };
    int in[2] = { view_2d(L, c, x), view_2d(L, c, w) };
    int y = ops_node(L, c, IR_CONV2D, in, 2, &a, DT_F32, &s);
    return T(L, ops_layout(L, c, view_1d(L, c, y), "NCW", ol));
}

/* nn.max_pool1d, nn.avg_pool1d: dtypes as their 2-D forms. */
int lower_pool1d(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    DType dt = val(L, x)->dtype;
    bool is_max = strcmp(c->op, "nn.max_pool1d") == 0;
    if (dt != DT_F32 && dt != DT_I32 && !(is_max && (dt == DT_I8 || dt == DT_U8)))
        ops_fail(L, c, "argument 0 is %s; %s is compiled for float32, int32%s", dtype_name(dt), c->op,
                 is_max ? ", int8 and uint8" : "");
    const char *layout = ops_a_str(L, c, "layout", "NCW"), *ol = out_layout(L, c, layout);
    if (val(L, x)->shape.rank != 3)
        ops_fail(L, c, "expected 3-d data, got %s", ops_shape(L, x));
    x = ops_layout(L, c, x, layout, "NCW");
    Attrs a;
    memset(&a, 0, sizeof a);
    Window *w = &a.conv;
    a.is_max = is_max;
    a.count_include_pad = (int)ops_a_int(L, c, "count_include_pad", 0);
    w->kh = w->sh = w->dh = w->groups = 1;
    w->kw = a_win(L, c, "pool_size", 1);
    w->sw = a_win(L, c, "strides", 1);
    w->dw = a_win(L, c, "dilation", 1);
    a_pad1(L, c, w);
    bool ceil_mode = ops_a_int(L, c, "ceil_mode", 0) != 0;
    const Shape xs = val(L, x)->shape;
    if (xs.dim[2] + w->pl + w->pr < (int64_t)w->dw * (w->kw - 1) + 1)
        ops_fail(L, c, "the %d-wide pool window is larger than the padded input %s", w->kw,
                 ops_shape(L, x));
    Shape s = { 4, { xs.dim[0], xs.dim[1], 1,
                     ops_pool_out(xs.dim[2], w->pl, w->pr, w->kw, w->dw, w->sw, ceil_mode) } };
    int x2 = view_2d(L, c, x);
    int y = ops_node(L, c, IR_POOL2D, &x2, 1, &a, dt, &s);
    return T(L, ops_layout(L, c, view_1d(L, c, y), "NCW", ol));
}

int lower_adaptive_avg_pool1d(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCW"), *ol = out_layout(L, c, layout);
    if (val(L, x)->shape.rank != 3)
        ops_fail(L, c, "expected 3-d data, got %s", ops_shape(L, x));
    x = ops_layout(L, c, x, layout, "NCW");
    const Shape xs = val(L, x)->shape;
    int64_t os[MAXA];
    int n = ops_a_ints(L, c, "output_size", os);
    if (n <= 0)
        os[0] = xs.dim[2];
    else if (n != 1)
        ops_fail(L, c, "attrs.output_size: expected 1 integer, got %d", n);
    if (os[0] < 1 || os[0] > 65536)
        ops_fail(L, c, "attrs.output_size: %lld is out of range", (long long)os[0]);
    Shape s = { 4, { xs.dim[0], xs.dim[1], 1, os[0] } };
    int x2 = view_2d(L, c, x);
    int y = ops_adaptive_pool(L, c, x2, &s, strcmp(c->op, "nn.adaptive_max_pool1d") == 0);
    return T(L, ops_layout(L, c, view_1d(L, c, y), "NCW", ol));
}

/* ---- constants and broadcasts ---- */

/* full(fill_value; shape, dtype) and full_like(data, fill_value): the scalar fill value,
 * cast to the dtype, broadcast to the shape. */
int lower_full(Lower *L, const Call *c)
{
    bool like = strcmp(c->op, "full_like") == 0;
    int fill = ops_arg(L, c, like ? 1 : 0);
    if (val(L, fill)->shape.rank != 0)
        ops_fail(L, c, "the fill value must be a scalar, got %s", ops_shape(L, fill));
    Shape s;
    DType dt;
    if (like) {
        int x = ops_arg(L, c, 0);
        s = val(L, x)->shape, dt = val(L, x)->dtype;
    } else {
        s = a_shape(L, c), dt = a_dtype(L, c, val(L, fill)->dtype);
    }
    return T(L, broadcast(L, c, cast_to(L, c, fill, dt), &s));
}

/* zeros, ones (shape, dtype) and zeros_like, ones_like (data). */
int lower_zeros_ones(Lower *L, const Call *c)
{
    double v = strncmp(c->op, "ones", 4) == 0 ? 1 : 0;
    Shape s;
    DType dt;
    if (strstr(c->op, "_like")) {
        int x = ops_arg(L, c, 0);
        s = val(L, x)->shape, dt = val(L, x)->dtype;
    } else {
        s = a_shape(L, c), dt = a_dtype(L, c, DT_F32);
    }
    return T(L, broadcast(L, c, const_value(L, c, dt, v), &s));
}

/* broadcast_to(data; shape) and broadcast_to_like(data, like). */
int lower_broadcast_to(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    Shape s = c->nargs > 1 ? val(L, ops_arg(L, c, 1))->shape : a_shape(L, c);
    return T(L, broadcast(L, c, x, &s));
}

/* reshape_like(data, like): data's dims [lhs_begin, lhs_end) become like's dims
 * [rhs_begin, rhs_end) (0.8+; before that, the whole shapes). */
int lower_reshape_like(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), y = ops_arg(L, c, 1);
    const Shape xs = val(L, x)->shape, ys = val(L, y)->shape;
    int64_t lb = ops_a_int(L, c, "lhs_begin", 0), rb = ops_a_int(L, c, "rhs_begin", 0);
    int64_t le = a_integer(L, c, "lhs_end", xs.rank), re = a_integer(L, c, "rhs_end", ys.rank);
    lb += lb < 0 ? xs.rank : 0, le += le < 0 ? xs.rank : 0;
    rb += rb < 0 ? ys.rank : 0, re += re < 0 ? ys.rank : 0;
    if (lb < 0 || lb > le || le > xs.rank || rb < 0 || rb > re || re > ys.rank)
        ops_fail(L, c, "attrs lhs [%lld, %lld) / rhs [%lld, %lld) are out of range for %s and %s",
                 (long long)lb, (long long)le, (long long)rb, (long long)re, ops_shape(L, x),
                 ops_shape(L, y));
    Shape s;
    memset(&s, 0, sizeof s);
    s.rank = (int)(lb + (re - rb) + (xs.rank - le));
    if (s.rank > RC_MAX_RANK)
        ops_fail(L, c, "the result has %d dimensions, over the limit of %d", s.rank, RC_MAX_RANK);
    int k = 0;
    for (int64_t d = 0; d < lb; d++)
        s.dim[k++] = xs.dim[d];
    for (int64_t d = rb; d < re; d++)
        s.dim[k++] = ys.dim[d];
    for (int64_t d = le; d < xs.rank; d++)
        s.dim[k++] = xs.dim[d];
    return T(L, ops_reshape(L, c, x, &s));
}

/* collapse_sum_like(data, like): data summed over the axes a broadcast to like's shape
 * would have added or stretched. */
int lower_collapse_sum(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0);
    Shape s = val(L, ops_arg(L, c, 1))->shape;
    const Shape xs = val(L, x)->shape;
    int reduced[RC_MAX_RANK] = { 0 };
    bool any = false;
    if (s.rank > xs.rank)
        ops_fail(L, c, "cannot collapse %s to the larger rank of %s", ops_shape(L, x),
                 shape_str(&s, (char[128]){ 0 }, 128));
    for (int d = 0; d < xs.rank; d++) {
        int sd = d - (xs.rank - s.rank);
        reduced[d] = sd < 0 || (s.dim[sd] == 1 && xs.dim[d] != 1);
        if (!reduced[d] && s.dim[sd] != xs.dim[d])
            ops_fail(L, c, "cannot collapse %s to %s (axis %d)", ops_shape(L, x),
                     shape_str(&s, (char[128]){ 0 }, 128), d);
        any = any || reduced[d];
    }
    int y = any ? ops_reduce(L, c, x, reduced, 0, false) : x;
    return T(L, ops_reshape(L, c, y, &s));
}

/* ---- stacking and indexing ---- */

/* stack(tuple; axis): each field with an axis of 1 inserted, concatenated. */
int lower_stack(Lower *L, const Call *c)
{
    const Item *t = &L->items[c->args[0]];
    if (t->value >= 0)
        ops_fail(L, c, "expected a tuple of tensors");
    int n = (int)arrlen(t->fields);
    if (n < 1)
        ops_fail(L, c, "stack of an empty tuple");
    arrsetlen(L->tmp, 0);
    for (int i = 0; i < n; i++) {
        arrput(L->tmp, L->items[L->items[c->args[0]].fields[i]].value);
        int *in = L->tmp;
        if (in[i] < 0 || (i > 0 && (!shape_eq(&val(L, in[i])->shape, &val(L, in[0])->shape) ||
                                    val(L, in[i])->dtype != val(L, in[0])->dtype)))
            ops_fail(L, c, "field %d of the tuple is not a tensor of field 0's type", i);
    }
    int *in = L->tmp;
    const Shape s0 = val(L, in[0])->shape;
    if (s0.rank + 1 > RC_MAX_RANK)
        ops_fail(L, c, "the result would have more than %d dimensions", RC_MAX_RANK);
    int axis = ops_norm_axis(L, c, a_integer(L, c, "axis", 0), s0.rank + 1, "axis");
    Shape e;
    memset(&e, 0, sizeof e);
    for (int d = 0; d <= s0.rank; d++)
        e.dim[e.rank++] = d == axis ? 1 : s0.dim[d < axis ? d : d - 1];
    for (int i = 0; i < n; i++)
        in[i] = ops_reshape(L, c, in[i], &e);
    return T(L, concat(L, c, in, n, axis));
}

/* Index j of the constant indices t for an axis of n, as take's mode reads it (clip,
 * wrap); -1 when out of range in mode fast. */
static int64_t take_index(const Tensor *t, int64_t j, int64_t n, char mode)
{
    int64_t i;
    switch (t->dtype) {
    case DT_I8: i = ((const int8_t *)t->data)[j]; break;
    case DT_U8: i = ((const uint8_t *)t->data)[j]; break;
    case DT_I16: i = ((const int16_t *)t->data)[j]; break;
    case DT_I32: i = ((const int32_t *)t->data)[j]; break;
    default: i = ((const int64_t *)t->data)[j]; break;
    }
    if (mode == 'c')
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (mode == 'w')
        return (i % n + n) % n;
    return i < 0 || i >= n ? -1 : i;
}

/* The indices of take and gather: an integer tensor. */
static void check_indices(Lower *L, const Call *c, int iv)
{
    DType t = val(L, iv)->dtype;
    if (t != DT_I8 && t != DT_U8 && t != DT_I16 && t != DT_I32 && t != DT_I64)
        ops_fail(L, c, "the indices are %s, expected an integer dtype", dtype_name(t));
}

/* take through the rq_gather kernel (indices known at run time, or batch_dims): data viewed
 * as [b][m][n][i] (batch axes, axes before axis, axis, axes after), indices as [b][k]. */
static int take_kernel(Lower *L, const Call *c, int x, int iv, int axis, int64_t bd, int mode)
{
    const Shape xs = val(L, x)->shape, is = val(L, iv)->shape;
    if (bd < 0)
        bd += is.rank;
    if (bd < 0 || bd > is.rank || bd > axis)
        ops_fail(L, c, "attrs.batch_dims %lld is out of range for indices %s and axis %d",
                 (long long)a_integer(L, c, "batch_dims", 0), ops_shape(L, iv), axis);
    if (xs.rank - 1 + is.rank - bd > RC_MAX_RANK)
        ops_fail(L, c, "the result would have more than %d dimensions", RC_MAX_RANK);
    int64_t b = 1, m = 1, k = 1, in = 1, n = xs.dim[axis];
    for (int d = 0; d < xs.rank; d++) {
        if (d < bd && is.dim[d] != xs.dim[d])
            ops_fail(L, c, "batch axis %d: indices %s and data %s differ", d, ops_shape(L, iv),
                     ops_shape(L, x));
        *(d < bd ? &b : d < axis ? &m : d == axis ? &n : &in) *= d == axis ? 1 : xs.dim[d];
    }
    for (int d = (int)bd; d < is.rank; d++)
        k *= is.dim[d];
    if (n == 0)
        ops_fail(L, c, "take from an empty axis %d of %s", axis, ops_shape(L, x));
    Shape x4 = { 4, { b, m, n, in } }, i2 = { 2, { b, k } }, y4 = { 4, { b, m, k, in } }, s;
    Attrs a;
    memset(&a, 0, sizeof a);
    a.mode = mode;
    int args[2] = { ops_reshape(L, c, x, &x4), ops_reshape(L, c, iv, &i2) };
    int y = ops_node(L, c, IR_TAKE, args, 2, &a, val(L, x)->dtype, &y4);
    memset(&s, 0, sizeof s);
    for (int d = 0; d < xs.rank; d++) {
        if (d != axis)
            s.dim[s.rank++] = xs.dim[d];
        else
            for (int e = (int)bd; e < is.rank; e++)
                s.dim[s.rank++] = is.dim[e];
    }
    return ops_reshape(L, c, y, &s);
}

/* take(data, indices; axis, mode, batch_dims) with constant indices: each run of indices in
 * arithmetic progression is one strided copy, the runs concatenated along axis. */
int lower_take(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), iv = ops_arg(L, c, 1);
    check_indices(L, c, iv);
    int64_t bd = a_integer(L, c, "batch_dims", 0);
    const char *mode = ops_a_str(L, c, "mode", "clip");
    if (strcmp(mode, "clip") != 0 && strcmp(mode, "wrap") != 0 && strcmp(mode, "fast") != 0)
        ops_fail(L, c, "attrs.mode '%s' is not one of clip, wrap, fast", mode);
    int64_t axv[MAXA];
    int axis = 0;
    if (ops_a_ints(L, c, "axis", axv) < 0) {
        Shape f = { 1, { shape_numel(&val(L, x)->shape) } };
        x = ops_reshape(L, c, x, &f);
    } else {
        if (val(L, x)->shape.rank == 0)
            ops_fail(L, c, "take along an axis of a scalar");
        axis = ops_norm_axis(L, c, axv[0], val(L, x)->shape.rank, "axis");
    }
    if (val(L, iv)->kind != VAL_CONST || bd != 0)
        return T(L, take_kernel(L, c, x, iv, axis, bd, mode[0] == 'c' ? 0 : mode[0] == 'w' ? 1 : 2));
    const Tensor *t = &L->g->consts[val(L, iv)->constant];
    const Shape xs = val(L, x)->shape, is = t->shape;
    DType xdt = val(L, x)->dtype;
    int64_t n = xs.dim[axis], k = shape_numel(&is);
    if (xs.rank - 1 + is.rank > RC_MAX_RANK)
        ops_fail(L, c, "the result would have more than %d dimensions", RC_MAX_RANK);
    if (n == 0 || k == 0)
        ops_fail(L, c, "take with an empty axis or no indices is not supported");
    for (int64_t j = 0; j < k; j++)
        if (take_index(t, j, n, mode[0]) < 0)
            ops_fail(L, c, "index %lld (indices[%lld]) is out of range for axis %d of size %lld "
                           "(mode fast)", (long long)take_index(t, j, n, 'c'), (long long)j, axis,
                     (long long)n);
    int64_t st[RC_MAX_RANK];
    shape_strides(&xs, st);
    arrsetlen(L->tmp, 0);
    for (int64_t j = 0; j < k;) {
        int64_t i0 = take_index(t, j, n, mode[0]), len = 1;
        int64_t step = j + 1 < k ? take_index(t, j + 1, n, mode[0]) - i0 : 1;
        while (j + len < k && take_index(t, j + len, n, mode[0]) - i0 == step * len)
            len++;
        Attrs a;
        memset(&a, 0, sizeof a);
        for (int d = 0; d < xs.rank; d++)
            a.xstride[d] = st[d];
        a.xstride[axis] = step * st[axis];
        a.xoff = i0 * st[axis];
        Shape s = xs;
        s.dim[axis] = len;
        int part = i0 == 0 && step == 1 && len == n ? x : ops_node(L, c, IR_COPY, &x, 1, &a, xdt, &s);
        arrput(L->tmp, part);
        j += len;
    }
    int y = concat(L, c, L->tmp, (int)arrlen(L->tmp), axis);
    Shape s;
    memset(&s, 0, sizeof s);
    for (int d = 0; d < xs.rank; d++) {
        if (d != axis)
            s.dim[s.rank++] = xs.dim[d];
        else
            for (int e = 0; e < is.rank; e++)
                s.dim[s.rank++] = is.dim[e];
    }
    return T(L, ops_reshape(L, c, y, &s));
}

/* ---- normalisation ---- */

/* (x - mean) / sqrt(var + eps) over the reduced axes (TVM's SimplifyInference). */
static int normalize(Lower *L, const Call *c, int x, const int *reduced, double eps)
{
    int mean = ops_reduce(L, c, x, reduced, 1, true);
    int d = ops_binary(L, c, x, mean, EW_SUBTRACT);
    int var = ops_reduce(L, c, ops_binary(L, c, d, d, EW_MULTIPLY), reduced, 1, true);
    int den = ops_unary(L, c, ops_binary(L, c, var, const_value(L, c, DT_F32, eps), EW_ADD),
                        EW_SQRT, 0, 0);
    return ops_binary(L, c, d, den, EW_DIVIDE);
}

/* y * gamma + beta, gamma and beta vectors along axis (attrs scale and center). */
static int affine(Lower *L, const Call *c, int y, int axis)
{
    const Shape s = val(L, y)->shape;
    int gamma = f32_arg(L, c, 1), beta = f32_arg(L, c, 2);
    if (ops_a_int(L, c, "scale", 1))
        y = ops_binary(L, c, y, ops_along_axis(L, c, gamma, axis, s.rank, s.dim[axis], "gamma"),
                       EW_MULTIPLY);
    if (ops_a_int(L, c, "center", 1))
        y = ops_binary(L, c, y, ops_along_axis(L, c, beta, axis, s.rank, s.dim[axis], "beta"),
                       EW_ADD);
    return y;
}

/* nn.layer_norm: one kernel (rk_layer_norm) normalising along axis, gamma and beta
 * fused. */
static int layer_norm(Lower *L, const Call *c, int x, int axis)
{
    int64_t len = val(L, x)->shape.dim[axis];
    int in[3] = { x, f32_arg(L, c, 1), f32_arg(L, c, 2) };
    const char *what[3] = { "", "gamma", "beta" };
    for (int k = 1; k < 3; k++)
        if (shape_numel(&val(L, in[k])->shape) != len || val(L, in[k])->shape.rank > 1)
            ops_fail(L, c, "%s has shape %s, expected [%lld]", what[k], ops_shape(L, in[k]),
                     (long long)len);
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = axis;
    a.ln.scale = ops_a_int(L, c, "scale", 1) != 0;
    a.ln.center = ops_a_int(L, c, "center", 1) != 0;
    a.ln.eps = (float)ops_a_double(L, c, "epsilon", 1e-5);
    return ops_node(L, c, IR_LAYER_NORM, in, 3, &a, DT_F32, &val(L, x)->shape);
}

/* nn.layer_norm (over axis), nn.instance_norm (over every axis but 0 and axis). */
int lower_layer_norm(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0);
    int r = val(L, x)->shape.rank;
    bool layer = strcmp(c->op, "nn.layer_norm") == 0;
    int axis = ops_norm_axis(L, c, ops_a_int(L, c, "axis", layer ? -1 : 1), r, "axis");
    if (layer)
        return T(L, layer_norm(L, c, x, axis));
    int reduced[RC_MAX_RANK];
    for (int d = 0; d < r; d++)
        reduced[d] = d != 0 && d != axis;
    int y = normalize(L, c, x, reduced, ops_a_double(L, c, "epsilon", 1e-5));
    return T(L, affine(L, c, y, axis));
}

/* nn.group_norm: channels (axis) split into num_groups groups, each normalised over its
 * channels and every axis after them. */
int lower_group_norm(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0);
    const Shape xs = val(L, x)->shape;
    int axis = ops_norm_axis(L, c, ops_a_int(L, c, "axis", 1), xs.rank, "axis");
    int64_t g = ops_a_int(L, c, "num_groups", 0), ch = xs.dim[axis];
    if (g < 1 || ch % g)
        ops_fail(L, c, "num_groups %lld must divide the %lld channels", (long long)g, (long long)ch);
    if (xs.rank + 1 > RC_MAX_RANK)
        ops_fail(L, c, "data %s has too many dimensions", ops_shape(L, x));
    Shape s;
    memset(&s, 0, sizeof s);
    int reduced[RC_MAX_RANK] = { 0 };
    for (int d = 0; d < xs.rank; d++) {
        if (d == axis) {
            s.dim[s.rank++] = g;
            s.dim[s.rank++] = ch / g;
        } else {
            reduced[s.rank] = d > axis;
            s.dim[s.rank++] = xs.dim[d];
        }
    }
    reduced[axis + 1] = 1;
    int y = normalize(L, c, ops_reshape(L, c, x, &s), reduced, ops_a_double(L, c, "epsilon", 1e-5));
    return T(L, affine(L, c, ops_reshape(L, c, y, &xs), axis));
}

/* variance(data, mean; axis, keepdims, exclude, unbiased): sum((data - mean)^2) / count,
 * count - 1 when unbiased. */
int lower_variance(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0), m = f32_arg(L, c, 1);
    const Shape xs = val(L, x)->shape;
    int reduced[RC_MAX_RANK];
    ops_reduce_axes(L, c, xs.rank, reduced);
    int64_t count = 1;
    for (int d = 0; d < xs.rank; d++)
        count *= reduced[d] ? xs.dim[d] : 1;
    int64_t div = count - (ops_a_int(L, c, "unbiased", 0) != 0);
    int d = ops_binary(L, c, x, m, EW_SUBTRACT);
    if (!shape_eq(&val(L, d)->shape, &xs))
        ops_fail(L, c, "the mean %s does not broadcast to the data %s", ops_shape(L, m),
                 ops_shape(L, x));
    int sum = ops_reduce(L, c, ops_binary(L, c, d, d, EW_MULTIPLY), reduced, 0,
                         ops_a_int(L, c, "keepdims", 0) != 0);
    return T(L, ops_binary(L, c, sum, const_value(L, c, DT_F32, (double)div), EW_DIVIDE));
}

/* ---- comparisons ---- */

static int compare(Lower *L, const Call *c, int x, int y, const char *name)
{
    int k = 0;
    while (k < EW_COUNT && strcmp(ew_table[k].name, name) != 0)
        k++;
    if (k == EW_COUNT)
        unreachable();
    int v = ops_binary(L, c, x, y, (EwKind)k);
    val(L, v)->dtype = DT_BOOL; /* the node was just added: its result is bool */
    return v;
}

/* equal, not_equal, less, less_equal, greater, greater_equal: a bool tensor. */
int lower_compare(Lower *L, const Call *c)
{
    return T(L, compare(L, c, ops_arg(L, c, 0), ops_arg(L, c, 1), c->op));
}

/* cast to bool: x != 0 (a C conversion would truncate 0.5 to 0). */
int ops_cast_bool(Lower *L, const Call *c, int x)
{
    return compare(L, c, x, const_value(L, c, val(L, x)->dtype, 0), "not_equal");
}

/* ---- data movement ---- */

/* A copy of x into shape s reading element xoff + sum i_d * xs[d]. */
static int strided(Lower *L, const Call *c, int x, const Shape *s, const int64_t *xs, int64_t xoff)
{
    Attrs a;
    memset(&a, 0, sizeof a);
    for (int d = 0; d < s->rank; d++)
        a.xstride[d] = xs[d];
    a.xoff = xoff;
    return ops_node(L, c, IR_COPY, &x, 1, &a, val(L, x)->dtype, s);
}

/* reverse(data; axis): a copy with a negative stride along axis. */
int lower_reverse(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape xs = val(L, x)->shape;
    int axis = ops_norm_axis(L, c, a_integer(L, c, "axis", 0), xs.rank, "axis");
    int64_t st[RC_MAX_RANK];
    shape_strides(&xs, st);
    if (xs.dim[axis] <= 1)
        return T(L, x);
    int64_t off = (xs.dim[axis] - 1) * st[axis];
    st[axis] = -st[axis];
    return T(L, strided(L, c, x, &xs, st, off));
}

/* tile(data; reps) and repeat(data; repeats, axis): a copy into a shape with an axis of
 * the repetitions (stride 0) after (repeat) or before (tile) each repeated axis, merged by
 * a reshape. */
static int repeat_axes(Lower *L, const Call *c, int x, const int64_t *reps, bool before)
{
    const Shape xs = val(L, x)->shape;
    int64_t st[RC_MAX_RANK], cs[RC_MAX_RANK];
    shape_strides(&xs, st);
    Shape s, out = xs;
    memset(&s, 0, sizeof s);
    for (int d = 0; d < xs.rank; d++) {
        if (reps[d] < 1 || reps[d] > RC_MAX_ELEMENTS)
            ops_fail(L, c, "repetition count %lld is out of range (at least 1)", (long long)reps[d]);
        if (s.rank + 1 + (reps[d] > 1) > RC_MAX_RANK)
            ops_fail(L, c, "the repeated copy would have more than %d dimensions", RC_MAX_RANK);
        if (reps[d] > 1 && before)
            cs[s.rank] = 0, s.dim[s.rank++] = reps[d];
        cs[s.rank] = st[d], s.dim[s.rank++] = xs.dim[d];
        if (reps[d] > 1 && !before)
            cs[s.rank] = 0, s.dim[s.rank++] = reps[d];
        out.dim[d] = xs.dim[d] * reps[d];
    }
    if (shape_numel(&s) > RC_MAX_ELEMENTS)
        ops_fail(L, c, "the result has more than %lld elements (the limit)", RC_MAX_ELEMENTS);
    if (s.rank == xs.rank)
        return x;
    return ops_reshape(L, c, strided(L, c, x, &s, cs, 0), &out);
}

int lower_tile(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    int64_t v[MAXA], reps[RC_MAX_RANK];
    int n = ops_a_ints(L, c, "reps", v);
    if (n < 0)
        ops_fail(L, c, "attrs.reps is missing");
    Shape xs = val(L, x)->shape;
    int r = n > xs.rank ? n : xs.rank;
    if (r > RC_MAX_RANK)
        ops_fail(L, c, "attrs.reps has %d values, over the rank limit of %d", n, RC_MAX_RANK);
    Shape s;
    memset(&s, 0, sizeof s);
    s.rank = r;
    for (int d = 0; d < r; d++) {
        int xd = d - (r - xs.rank), rd = d - (r - n);
        s.dim[d] = xd >= 0 ? xs.dim[xd] : 1;
        reps[d] = rd >= 0 ? v[rd] : 1;
    }
    return T(L, repeat_axes(L, c, ops_reshape(L, c, x, &s), reps, true));
}

int lower_repeat(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape xs = val(L, x)->shape;
    int64_t reps[RC_MAX_RANK];
    int axis = ops_norm_axis(L, c, a_integer(L, c, "axis", 0), xs.rank, "axis");
    for (int d = 0; d < xs.rank; d++)
        reps[d] = d == axis ? a_integer(L, c, "repeats", 1) : 1;
    return T(L, repeat_axes(L, c, x, reps, false));
}

/* x (NCHW) reshaped to the 6-d shape v, its axes permuted by perm, reshaped to out. */
static int shuffle(Lower *L, const Call *c, int x, const int64_t *v, const int *perm, const Shape *out)
{
    Shape s = { 6, { v[0], v[1], v[2], v[3], v[4], v[5] } };
    return ops_reshape(L, c, ops_transpose(L, c, ops_reshape(L, c, x, &s), perm), out);
}

/* nn.depth_to_space (modes DCR, CRD) and nn.space_to_depth, NCHW or NHWC. */
int lower_subpixel(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCHW"), *mode = ops_a_str(L, c, "mode", "DCR");
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    x = ops_layout(L, c, x, layout, "NCHW");
    const Shape xs = val(L, x)->shape;
    int64_t b = ops_a_int(L, c, "block_size", 1), n = xs.dim[0], ch = xs.dim[1], h = xs.dim[2],
            w = xs.dim[3];
    if (b < 1 || b > 65536)
        ops_fail(L, c, "attrs.block_size %lld is out of range", (long long)b);
    int y;
    if (strcmp(c->op, "nn.space_to_depth") == 0) {
        if (h % b || w % b)
            ops_fail(L, c, "block_size %lld does not divide the height and width of %s",
                     (long long)b, ops_shape(L, x));
        int64_t v[6] = { n, ch, h / b, b, w / b, b };
        static const int perm[6] = { 0, 3, 5, 1, 2, 4 };
        Shape out = { 4, { n, ch * b * b, h / b, w / b } };
        y = shuffle(L, c, x, v, perm, &out);
    } else {
        bool dcr = strcmp(mode, "DCR") == 0;
        if (!dcr && strcmp(mode, "CRD") != 0)
            ops_fail(L, c, "attrs.mode '%s' is not DCR or CRD", mode);
        if (ch % (b * b))
            ops_fail(L, c, "block_size %lld squared does not divide the %lld channels",
                     (long long)b, (long long)ch);
        int64_t co = ch / (b * b);
        int64_t dv[6] = { n, b, b, co, h, w }, cv[6] = { n, co, b, b, h, w };
        static const int dp[6] = { 0, 3, 4, 1, 5, 2 }, cp[6] = { 0, 1, 4, 2, 5, 3 };
        Shape out = { 4, { n, co, h * b, w * b } };
        y = shuffle(L, c, x, dcr ? dv : cv, dcr ? dp : cp, &out);
    }
    return T(L, ops_layout(L, c, y, "NCHW", layout));
}

static int resize_method(Lower *L, const Call *c, const char *m);
static int resize(Lower *L, const Call *c, int x, const char *layout, int64_t ho, int64_t wo,
                  Attrs *a);

/* nn.upsampling: TOPI's resize2d to round(in * scale) with coordinate mode align_corners
 * or asymmetric, bilinear and bicubic as linear and cubic (alpha -0.5). Nearest with
 * integer scales and asymmetric coordinates reads pixel o / scale (TVM's integer
 * division): each pixel copied scale_h x scale_w times, a copy with stride 0 on two added
 * axes. */
int lower_upsampling(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCHW");
    double sh = ops_a_double(L, c, "scale_h", 1), sw = ops_a_double(L, c, "scale_w", 1);
    Attrs a;
    memset(&a, 0, sizeof a);
    a.rs.method = resize_method(L, c, ops_a_str(L, c, "method", "nearest_neighbor"));
    a.rs.coord = ops_a_int(L, c, "align_corners", 0) ? 1 : 2;
    a.rs.rounding = a.rs.coord == 1 ? 0 : 1;
    a.rs.alpha = -0.5f;
    if (!(sh > 0 && sh <= 65536 && sw > 0 && sw <= 65536))
        ops_fail(L, c, "scales %g x %g are out of range", sh, sw);
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    int h = strcmp(layout, "NHWC") == 0 ? 1 : 2;
    const int64_t *d = val(L, x)->shape.dim;
    if (a.rs.method == 0 && a.rs.coord == 2 && sh == floor(sh) && sw == floor(sw)) {
        x = ops_layout(L, c, x, layout, "NCHW");
        int64_t reps[RC_MAX_RANK] = { 1, 1, (int64_t)sh, (int64_t)sw };
        return T(L, ops_layout(L, c, repeat_axes(L, c, x, reps, false), "NCHW", layout));
    }
    return T(L, resize(L, c, x, layout, (int64_t)round((double)d[h] * sh),
                       (int64_t)round((double)d[h + 1] * sw), &a));
}

/* ---- normalisation across a window, and by the L2 norm ---- */

/* nn.lrn: x / (bias + alpha * sum(x^2 over a window of size along axis) / size)^beta; the
 * window sum is an average pool (count_include_pad) with the axis as the pool's height. */
int lower_lrn(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0);
    const Shape xs = val(L, x)->shape;
    int axis = ops_norm_axis(L, c, ops_a_int(L, c, "axis", 1), xs.rank, "axis");
    int64_t size = ops_a_int(L, c, "size", 5);
    if (size < 1 || size > 65536)
        ops_fail(L, c, "attrs.size %lld is out of range (1 to 65536)", (long long)size);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < xs.rank; d++)
        outer *= d < axis ? xs.dim[d] : 1, inner *= d > axis ? xs.dim[d] : 1;
    Shape v = { 4, { outer, 1, xs.dim[axis], inner } };
    Attrs a;
    memset(&a, 0, sizeof a);
    a.count_include_pad = 1;
    a.conv = (Window){ .kh = (int)size, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                       .pt = (int)(size / 2), .pb = (int)(size - 1 - size / 2), .groups = 1 };
    int sq = ops_reshape(L, c, ops_binary(L, c, x, x, EW_MULTIPLY), &v);
    int avg = ops_reshape(L, c, ops_node(L, c, IR_POOL2D, &sq, 1, &a, DT_F32, &v), &xs);
    int t = ops_binary(L, c, avg, const_value(L, c, DT_F32, ops_a_double(L, c, "alpha", 1e-4)),
                       EW_MULTIPLY);
    t = ops_binary(L, c, t, const_value(L, c, DT_F32, ops_a_double(L, c, "bias", 2)), EW_ADD);
    t = ops_binary(L, c, t, const_value(L, c, DT_F32, ops_a_double(L, c, "beta", 0.75)), EW_POWER);
    return T(L, ops_binary(L, c, x, t, EW_DIVIDE));
}

/* nn.l2_normalize: x / sqrt(max(sum(x^2 over axis), eps)). */
int lower_l2_normalize(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0);
    int r = val(L, x)->shape.rank;
    int reduced[RC_MAX_RANK];
    ops_reduce_axes(L, c, r, reduced);
    int s = ops_reduce(L, c, ops_binary(L, c, x, x, EW_MULTIPLY), reduced, 0, true);
    s = ops_binary(L, c, s, const_value(L, c, DT_F32, ops_a_double(L, c, "eps", 0)), EW_MAXIMUM);
    return T(L, ops_binary(L, c, x, ops_unary(L, c, s, EW_SQRT, 0, 0), EW_DIVIDE));
}

/* ---- indexing and selection kernels ---- */

/* gather(data, indices; axis): out[i] = data[i with axis replaced by indices[i]]; indices
 * of data's rank, no larger than data off the axis (TVM's gather, torch.gather). */
int lower_gather(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), iv = ops_arg(L, c, 1);
    check_indices(L, c, iv);
    const Shape xs = val(L, x)->shape, is = val(L, iv)->shape;
    if (xs.rank == 0 || is.rank != xs.rank)
        ops_fail(L, c, "the indices %s must have the rank of the data %s (at least 1)",
                 ops_shape(L, iv), ops_shape(L, x));
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = ops_norm_axis(L, c, a_integer(L, c, "axis", 0), xs.rank, "axis");
    a.mode = 2;
    for (int d = 0; d < xs.rank; d++)
        if ((d != a.axis && is.dim[d] > xs.dim[d]) || (d == a.axis && xs.dim[d] == 0 && is.dim[d]))
            ops_fail(L, c, "the indices %s do not fit the data %s on axis %d", ops_shape(L, iv),
                     ops_shape(L, x), d);
    int args[2] = { x, iv };
    return T(L, ops_node(L, c, IR_GATHER, args, 2, &a, val(L, x)->dtype, &is));
}

/* where(condition, x, y): x where the condition is nonzero, else y; numpy broadcasting of
 * all three; x and y of one dtype (any), the condition of any dtype but float64. */
int lower_where(Lower *L, const Call *c)
{
    int args[3] = { ops_arg(L, c, 0), ops_arg(L, c, 1), ops_arg(L, c, 2) };
    if (val(L, args[1])->dtype != val(L, args[2])->dtype)
        ops_fail_type(L, c, "x and y have different dtypes: %s and %s",
                 dtype_name(val(L, args[1])->dtype), dtype_name(val(L, args[2])->dtype));
    if (val(L, args[0])->dtype == DT_F64)
        ops_fail(L, c, "a float64 condition is not supported");
    Shape s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < 3; k++) {
        const Shape *in = &val(L, args[k])->shape;
        int r = in->rank > s.rank ? in->rank : s.rank;
        Shape t = s;
        memset(&s, 0, sizeof s);
        s.rank = r;
        for (int d = 0; d < r; d++) {
            int di = d - (r - in->rank), dt = d - (r - t.rank);
            int64_t u = di >= 0 ? in->dim[di] : 1, w = dt >= 0 ? t.dim[dt] : 1;
            if (u != w && u != 1 && w != 1)
                ops_fail(L, c, "the shapes %s, %s and %s do not broadcast", ops_shape(L, args[0]),
                         ops_shape(L, args[1]), ops_shape(L, args[2]));
            s.dim[d] = u == 1 ? w : u;
        }
    }
    return T(L, ops_node(L, c, IR_WHERE, args, 3, NULL, val(L, args[1])->dtype, &s));
}

/* x with the axes reduced[] moved last and viewed as [outer][len][inner] (a transpose only
 * when the reduced axes are not adjacent); *kept gets the shape of the axes kept. */
static int as_outer_len_inner(Lower *L, const Call *c, int x, const int *reduced, Shape *kept)
{
    const Shape xs = val(L, x)->shape;
    int perm[RC_MAX_RANK], np = 0, first = -1, lastr = -1;
    int64_t outer = 1, len = 1, inner = 1;
    memset(kept, 0, sizeof *kept);
    for (int d = 0; d < xs.rank; d++) {
        if (reduced[d]) {
            if (xs.dim[d] == 0)
                ops_fail(L, c, "reduction over an empty axis %d", d);
            first = first < 0 ? d : first, lastr = d, len *= xs.dim[d];
        } else {
            perm[np++] = d;
            kept->dim[kept->rank++] = xs.dim[d];
        }
    }
    bool adjacent = true;
    for (int d = first; d >= 0 && d <= lastr; d++)
        adjacent = adjacent && reduced[d];
    if (adjacent) {
        for (int d = 0; d < xs.rank; d++)
            if (!reduced[d])
                *(first < 0 || d < first ? &outer : &inner) *= xs.dim[d];
    } else {
        for (int d = 0; d < xs.rank; d++)
            if (reduced[d])
                perm[np++] = d;
        x = ops_transpose(L, c, x, perm);
        outer = shape_numel(kept);
    }
    Shape v = { 3, { outer, len, inner } };
    return ops_reshape(L, c, x, &v);
}

/* argmax, argmin (axis, keepdims, exclude, select_last_index): int32 positions; over
 * several axes, the position in their row-major order. */
int lower_argreduce(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const Shape xs = val(L, x)->shape;
    if (val(L, x)->dtype == DT_F64)
        ops_fail(L, c, "argument is float64; %s is not compiled for it", c->op);
    int reduced[RC_MAX_RANK];
    ops_reduce_axes(L, c, xs.rank, reduced);
    Shape kept, s = xs;
    int v = as_outer_len_inner(L, c, x, reduced, &kept);
    const int64_t *vd = val(L, v)->shape.dim;
    Attrs a;
    memset(&a, 0, sizeof a);
    a.is_max = strcmp(c->op, "argmax") == 0;
    a.last = ops_a_int(L, c, "select_last_index", 0) != 0;
    Shape o = { 2, { vd[0], vd[2] } };
    int y = ops_node(L, c, IR_ARGREDUCE, &v, 1, &a, DT_I32, &o);
    for (int d = 0; d < xs.rank; d++)
        s.dim[d] = reduced[d] ? 1 : xs.dim[d];
    return T(L, ops_reshape(L, c, y, ops_a_int(L, c, "keepdims", 0) ? &s : &kept));
}

/* cumsum(data; axis, dtype, exclusive): axis null scans the flattened data; the sum is in
 * dtype (default: data's). */
int lower_cumsum(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    DType xt = val(L, x)->dtype, yt = a_dtype(L, c, xt);
    if (xt == DT_F64 || yt == DT_F64 || yt == DT_BOOL || (xt == DT_F32 && yt != DT_F32))
        ops_fail(L, c, "cumsum of %s in %s is not supported", dtype_name(xt), dtype_name(yt));
    int64_t axv[MAXA];
    const Shape xs = val(L, x)->shape;
    Shape f = { 1, { shape_numel(&xs) } };
    int reduced[RC_MAX_RANK] = { 1 };
    if (ops_a_ints(L, c, "axis", axv) < 0 || xs.rank == 0) {
        x = ops_reshape(L, c, x, &f);
    } else {
        int axis = ops_norm_axis(L, c, axv[0], xs.rank, "axis");
        for (int d = 0; d < xs.rank; d++)
            reduced[d] = d == axis;
    }
    const Shape ys = val(L, x)->shape;
    Attrs a;
    memset(&a, 0, sizeof a);
    a.exclusive = ops_a_int(L, c, "exclusive", 0) != 0;
    if (shape_numel(&ys) == 0)
        ops_fail(L, c, "cumsum of an empty tensor is not supported");
    Shape kept;
    int v = as_outer_len_inner(L, c, x, reduced, &kept);
    int y = ops_node(L, c, IR_CUMSUM, &v, 1, &a, yt, &val(L, v)->shape);
    return T(L, ops_reshape(L, c, y, &ys));
}

/* An adaptive pool's node on x NCHW with output shape s: a float average on its own
 * kernel; max (any dtype but float64) and an int32 average (TVM sums in the data's type:
 * an 8-bit average would wrap, and is refused) on rq_adaptive_pool2d or
 * rk_adaptive_pool2d (max). */
int ops_adaptive_pool(Lower *L, const Call *c, int x, const Shape *s, bool is_max)
{
    DType t = val(L, x)->dtype;
    if ((t != DT_F32 && qnn_type_code(t) < 0) || (!is_max && (t == DT_I8 || t == DT_U8)))
        ops_fail(L, c, "%s of %s is not supported", c->op, dtype_name(t));
    Attrs a;
    memset(&a, 0, sizeof a);
    a.is_max = is_max;
    return ops_node(L, c, t == DT_F32 && !is_max ? IR_ADAPTIVE_AVG_POOL2D : IR_ADAPTIVE_POOL2D,
                    &x, 1, &a, t, s);
}

/* ---- transposed convolution ---- */

/* The "output_padding" attr: n values (one repeated), each below its stride or dilation. */
static void a_output_padding(Lower *L, const Call *c, int n, const int *stride, const int *dil,
                             int *out)
{
    int64_t v[MAXA];
    int k = ops_a_ints(L, c, "output_padding", v);
    for (int i = 0; i < n; i++) {
        int64_t p = k < 0 ? 0 : k == 1 ? v[0] : k == n ? v[i] : -1;
        if (k >= 0 && k != 1 && k != n)
            ops_fail(L, c, "attrs.output_padding: expected %d integers, got %d", n, k);
        if (p < 0 || (p >= stride[i] && p >= dil[i]))
            ops_fail(L, c, "attrs.output_padding %lld must be smaller than the stride (%d) or "
                     "the dilation (%d)", (long long)p, stride[i], dil[i]);
        out[i] = (int)p;
    }
}

/* nn.conv2d_transpose and nn.conv1d_transpose (as 2-D over a height of 1), TOPI's
 * semantics: y[n][g*cog + o][oy][ox] = sum over i < cig, ky, kx with
 * oy + pt = iy*sh + ky*dh (and likewise for x) of x[n][g*cig + i][iy][ix] *
 * w[g*cig + i][o][ky][kx] (weights IOHW: input channels, output channels per group), of
 * height (hi-1)*sh - pt - pb + dh*(kh-1) + 1 + output_padding. It is computed as a conv2d:
 * x scattered at the strides into a zeroed buffer (a pad of a view with a unit axis after
 * each spatial axis), padded by dh*(kh-1) - pt before (a crop when negative), over the
 * weights transposed to OIHW per group and flipped (one strided copy, which constant
 * folding evaluates on constant weights). The tuned conv kernels, with bias and
 * activation fusion, then apply unchanged; the zeros cost sh*sw times the products. */
/* A transposed conv (dilation 1, stride above 1, the kernel at least the stride) split
 * by output phase: the outputs s*m + r read only the taps ky = rho + s*j (rho = (r + pt)
 * mod s) of the inputs m + (r + pt) / s - j, so each of the sy*sx phases is a stride-1
 * conv2d over x itself with those taps, flipped, and reads no zeros (scattering x at the
 * strides multiplies the work by sy*sx). The phases, ceil(ho / sy) x ceil(wo / sx) each,
 * are stacked, interleaved by one strided copy and cropped to ho x wo. -1 when the shape
 * does not allow it (some phase would read no input row). */
typedef struct {
    int64_t rho, taps; /* the first tap of the phase along an axis, how many */
    int64_t lo, hi;    /* the conv's padding before and after x (negative: x cropped) */
} Phase;

static int conv_transpose_phases(Lower *L, const Call *c, int x, int w, const int *st,
                                 const Window *pad, int groups, int64_t ho, int64_t wo)
{
    const Shape xs = val(L, x)->shape, ws = val(L, w)->shape;
    int64_t cig = xs.dim[1] / groups, cog = ws.dim[1], co = cog * groups;
    int64_t k[2] = { ws.dim[2], ws.dim[3] }, hin[2] = { xs.dim[2], xs.dim[3] };
    int64_t m[2] = { (ho + st[0] - 1) / st[0], (wo + st[1] - 1) / st[1] };
    int64_t p[2] = { pad->pt, pad->pl };
    enum { MAXP = 64 };
    Phase ph[2][MAXP]; /* per axis and output residue */
    if (st[0] * st[1] > MAXP || k[0] < st[0] || k[1] < st[1])
        return -1;
    for (int d = 0; d < 2; d++)
        for (int r = 0; r < st[d]; r++) {
            int64_t cc = (r + p[d]) / st[d];
            ph[d][r].rho = (r + p[d]) % st[d];
            ph[d][r].taps = (k[d] - ph[d][r].rho + st[d] - 1) / st[d];
            ph[d][r].lo = ph[d][r].taps - 1 - cc;
            ph[d][r].hi = m[d] - hin[d] + cc;
            if (hin[d] + (ph[d][r].lo < 0 ? ph[d][r].lo : 0) + (ph[d][r].hi < 0 ? ph[d][r].hi : 0) < 1)
                return -1;
        }
    int np = st[0] * st[1], in[MAXP];
    int64_t xst[RC_MAX_RANK];
    shape_strides(&xs, xst);
    for (int ry = 0; ry < st[0]; ry++)
        for (int rx = 0; rx < st[1]; rx++) {
            const Phase *py = &ph[0][ry], *px = &ph[1][rx];
            int z = x;
            if (py->lo < 0 || py->hi < 0 || px->lo < 0 || px->hi < 0) {
                Shape zs = xs;
                int64_t cy = py->lo < 0 ? -py->lo : 0, cx = px->lo < 0 ? -px->lo : 0;
                zs.dim[2] -= cy + (py->hi < 0 ? -py->hi : 0);
                zs.dim[3] -= cx + (px->hi < 0 ? -px->hi : 0);
                z = strided(L, c, x, &zs, xst, cy * xst[2] + cx * xst[3]);
            }
            /* weights [g*cig + i][o][ky][kx] -> [g*cog + o][i][ty][tx], the taps of the
             * phase flipped: ky = rho + sy * (taps - 1 - ty) */
            Shape w5 = { 5, { groups, cog, cig, py->taps, px->taps } };
            Shape wt = { 4, { co, cig, py->taps, px->taps } };
            int64_t ws5[RC_MAX_RANK] = { cig * cog * k[0] * k[1], k[0] * k[1], cog * k[0] * k[1],
                                         -st[0] * k[1], -st[1] };
            int64_t off = (py->rho + st[0] * (py->taps - 1)) * k[1] + px->rho + st[1] * (px->taps - 1);
            int wf = ops_reshape(L, c, strided(L, c, w, &w5, ws5, off), &wt);
            Attrs a;
            memset(&a, 0, sizeof a);
            Window *win = &a.conv;
            win->kh = (int)py->taps, win->kw = (int)px->taps;
            win->sh = win->sw = win->dh = win->dw = 1, win->groups = groups;
            a.phase = 1;
            win->pt = py->lo > 0 ? (int)py->lo : 0, win->pb = py->hi > 0 ? (int)py->hi : 0;
            win->pl = px->lo > 0 ? (int)px->lo : 0, win->pr = px->hi > 0 ? (int)px->hi : 0;
            Shape s = { 4, { xs.dim[0], co, m[0], m[1] } };
            int y = ops_node(L, c, IR_CONV2D, (int[]){ z, wf }, 2, &a, DT_F32, &s);
            Shape s5 = { 5, { xs.dim[0], 1, co, m[0], m[1] } };
            in[ry * st[1] + rx] = ops_reshape(L, c, y, &s5);
        }
    /* [n][phase][o][my][mx] -> [n][o][my][ry][mx][rx] -> [n][o][my*sy][mx*sx] */
    int all = concat(L, c, in, np, 1);
    int64_t pl = m[0] * m[1] * co;
    Shape s6 = { 6, { xs.dim[0], co, m[0], st[0], m[1], st[1] } };
    int64_t st6[RC_MAX_RANK] = { np * pl, m[0] * m[1], m[1], st[1] * pl, 1, pl };
    Shape full = { 4, { xs.dim[0], co, m[0] * st[0], m[1] * st[1] } };
    int y = ops_reshape(L, c, strided(L, c, all, &s6, st6, 0), &full);
    if (full.dim[2] == ho && full.dim[3] == wo)
        return y;
    Shape cs = { 4, { xs.dim[0], co, ho, wo } };
    int64_t fst[RC_MAX_RANK];
    shape_strides(&full, fst);
    return strided(L, c, y, &cs, fst, 0);
}

int lower_conv_transpose(Lower *L, const Call *c)
{
    bool d1 = strcmp(c->op, "nn.conv1d_transpose") == 0;
    int x = f32_arg(L, c, 0), w = f32_arg(L, c, 1), r = d1 ? 3 : 4;
    const char *dl = ops_a_str(L, c, "data_layout", d1 ? "NCW" : "NCHW");
    const char *kl = ops_a_str(L, c, "kernel_layout", d1 ? "IOW" : "IOHW");
    /* Before TVM 0.8 (conv2d_transpose) and 0.12 (conv1d_transpose) the kernel layout's
     * I and O were swapped: "OIHW" named the weight [in][out / groups][kh][kw]. */
    int ver = L->doc->major * 100 + L->doc->minor;
    char klbuf[8];
    if (ver > 0 && ver < (d1 ? 12 : 8) && strlen(kl) < sizeof klbuf) {
        for (int i = 0; (klbuf[i] = kl[i]) != 0; i++)
            klbuf[i] = kl[i] == 'I' ? 'O' : kl[i] == 'O' ? 'I' : kl[i];
        kl = klbuf;
    }
    const char *ol = out_layout(L, c, dl);
    const char *od = ops_a_str(L, c, "out_dtype", "");
    if (*od && strcmp(od, "float32") != 0)
        ops_fail(L, c, "out_dtype %s is not supported (float32 only)", od);
    if (val(L, x)->shape.rank != r || val(L, w)->shape.rank != r)
        ops_fail(L, c, "expected %d-d data and weight, got %s and %s", r, ops_shape(L, x),
                 ops_shape(L, w));
    x = ops_layout(L, c, x, dl, d1 ? "NCW" : "NCHW");
    w = ops_layout(L, c, w, kl, d1 ? "IOW" : "IOHW");
    if (d1)
        x = view_2d(L, c, x), w = view_2d(L, c, w);
    int st[2] = { 1, 1 }, dil[2] = { 1, 1 }, op[2] = { 0, 0 };
    Window pad;
    memset(&pad, 0, sizeof pad);
    if (d1) {
        st[1] = a_win(L, c, "strides", 1);
        dil[1] = a_win(L, c, "dilation", 1);
        a_pad1(L, c, &pad);
        a_output_padding(L, c, 1, st + 1, dil + 1, op + 1);
    } else {
        ops_a_pair(L, c, "strides", 1, &st[0], &st[1]);
        ops_a_pair(L, c, "dilation", 1, &dil[0], &dil[1]);
        ops_a_padding(L, c, &pad);
        a_output_padding(L, c, 2, st, dil, op);
    }
    const Shape xs = val(L, x)->shape, ws = val(L, w)->shape;
    int64_t groups = ops_a_int(L, c, "groups", 1);
    if (groups < 1 || groups > RC_MAX_ELEMENTS || xs.dim[1] % groups)
        ops_fail(L, c, "groups %lld must divide the %lld input channels", (long long)groups,
                 (long long)xs.dim[1]);
    if (ws.dim[0] != xs.dim[1])
        ops_fail(L, c, "weight %s expects %lld input channels, but data %s has %lld",
                 ops_shape(L, w), (long long)ws.dim[0], ops_shape(L, x), (long long)xs.dim[1]);
    int64_t cig = xs.dim[1] / groups, cog = ws.dim[1], co = cog * groups;
    int64_t v[MAXA];
    int nk = ops_a_ints(L, c, "kernel_size", v);
    if (nk >= 0 && (nk != r - 2 || (r == 4 && v[0] != ws.dim[2]) || v[nk - 1] != ws.dim[3]))
        ops_fail(L, c, "attrs.kernel_size does not match the weight %s", ops_shape(L, w));
    if (ops_a_ints(L, c, "channels", v) == 1 && v[0] != co)
        ops_fail(L, c, "attrs.channels is %lld but the weight %s and groups %lld give %lld",
                 (long long)v[0], ops_shape(L, w), (long long)groups, (long long)co);
    for (int d = 2; d < 4; d++)
        if (ws.dim[d] < 1 || ws.dim[d] > 65536)
            ops_fail(L, c, "weight %s: kernel size out of range", ops_shape(L, w));
    int kh = (int)ws.dim[2], kw = (int)ws.dim[3];
    int64_t ho = (xs.dim[2] - 1) * st[0] - pad.pt - pad.pb + (int64_t)dil[0] * (kh - 1) + 1 + op[0];
    int64_t wo = (xs.dim[3] - 1) * st[1] - pad.pl - pad.pr + (int64_t)dil[1] * (kw - 1) + 1 + op[1];
    if (ho < 1 || wo < 1)
        ops_fail(L, c, "the padding leaves an empty %lldx%lld output", (long long)ho, (long long)wo);
    int y = st[0] * st[1] > 1 && dil[0] == 1 && dil[1] == 1
                ? conv_transpose_phases(L, c, x, w, st, &pad, (int)groups, ho, wo) : -1;
    if (y >= 0)
        return T(L, d1 ? ops_layout(L, c, view_1d(L, c, y), "NCW", ol) : ops_layout(L, c, y, "NCHW", ol));
    /* the input scattered at the strides: [n, c, h, 1, w, 1] padded to [n, c, h, sh, w, sw] */
    int z = x;
    Shape zs = xs;
    if (st[0] > 1 || st[1] > 1) {
        Shape v6 = { 6, { xs.dim[0], xs.dim[1], xs.dim[2], 1, xs.dim[3], 1 } };
        Shape p6 = { 6, { xs.dim[0], xs.dim[1], xs.dim[2], st[0], xs.dim[3], st[1] } };
        zs.dim[2] = xs.dim[2] * st[0], zs.dim[3] = xs.dim[3] * st[1];
        if (shape_numel(&zs) > RC_MAX_ELEMENTS)
            ops_fail(L, c, "the input scattered at the strides has more than %lld elements",
                     RC_MAX_ELEMENTS);
        z = ops_node(L, c, IR_PAD, (int[]){ ops_reshape(L, c, x, &v6) }, 1, NULL, DT_F32, &p6);
        z = ops_reshape(L, c, z, &zs);
    }
    /* the conv's padding before; a negative one crops the scattered input */
    int64_t pt = (int64_t)dil[0] * (kh - 1) - pad.pt, pl = (int64_t)dil[1] * (kw - 1) - pad.pl;
    if (pt < 0 || pl < 0) {
        int64_t zst[RC_MAX_RANK], cy = pt < 0 ? -pt : 0, cx = pl < 0 ? -pl : 0;
        shape_strides(&zs, zst);
        if (cy >= zs.dim[2] || cx >= zs.dim[3])
            ops_fail(L, c, "the padding %d,%d is larger than the scattered input %s",
                     pad.pt, pad.pl, ops_shape(L, z));
        zs.dim[2] -= cy, zs.dim[3] -= cx;
        z = strided(L, c, z, &zs, zst, cy * zst[2] + cx * zst[3]);
        pt += cy, pl += cx;
    }
    /* weights [g*cig + i][o][ky][kx] -> [g*cog + o][i][kh-1-ky][kw-1-kx] */
    Shape w5 = { 5, { groups, cog, cig, kh, kw } }, wt = { 4, { co, cig, kh, kw } };
    int64_t ws5[RC_MAX_RANK] = { cig * cog * kh * kw, (int64_t)kh * kw, cog * kh * kw, -kw, -1 };
    int wf = ops_reshape(L, c, strided(L, c, w, &w5, ws5, (int64_t)kh * kw - 1), &wt);
    Attrs a;
    memset(&a, 0, sizeof a);
    Window *win = &a.conv;
    win->kh = kh, win->kw = kw, win->sh = win->sw = 1, win->dh = dil[0], win->dw = dil[1];
    win->pt = (int)pt, win->pl = (int)pl, win->groups = (int)groups;
    win->pb = (int)(ho - 1 + (int64_t)dil[0] * (kh - 1) - pt - (zs.dim[2] - 1));
    win->pr = (int)(wo - 1 + (int64_t)dil[1] * (kw - 1) - pl - (zs.dim[3] - 1));
    Shape s = { 4, { xs.dim[0], co, ho, wo } };
    y = ops_node(L, c, IR_CONV2D, (int[]){ z, wf }, 2, &a, DT_F32, &s);
    if (d1)
        return T(L, ops_layout(L, c, view_1d(L, c, y), "NCW", ol));
    return T(L, ops_layout(L, c, y, "NCHW", ol));
}

/* ---- resizing ---- */

/* The index of s in the NULL-terminated list names, or -1. */
static int name_index(const char *s, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

/* x (float32, int8 or uint8; NCHW or NHWC) resized to ho x wo by rk_resize2d (attrs rs
 * but the layout); 8-bit data is resized in float and cast back (exact for nearest; linear
 * stays inside the input's range, where the cast truncates as TVM's does). */
static int resize(Lower *L, const Call *c, int x, const char *layout, int64_t ho, int64_t wo,
                  Attrs *a)
{
    DType dt = val(L, x)->dtype;
    if (dt != DT_F32 && !((dt == DT_I8 || dt == DT_U8) && a->rs.method < 2))
        ops_fail(L, c, "argument 0 is %s; %s is compiled for float32, and for int8 and uint8 "
                 "with methods nearest_neighbor and linear", dtype_name(dt), c->op);
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    a->rs.nhwc = strcmp(layout, "NHWC") == 0;
    if (!a->rs.nhwc && strcmp(layout, "NCHW") != 0)
        ops_fail(L, c, "layout %s is not supported (NCHW or NHWC)", layout);
    if (ho < 1 || wo < 1 || ho > RC_MAX_ELEMENTS || wo > RC_MAX_ELEMENTS)
        ops_fail(L, c, "output size %lldx%lld is out of range", (long long)ho, (long long)wo);
    Shape s = val(L, x)->shape;
    int h = a->rs.nhwc ? 1 : 2;
    if ((s.dim[h] == 0 || s.dim[h + 1] == 0) && shape_numel(&s) == 0 && s.dim[0] &&
        s.dim[a->rs.nhwc ? 3 : 1])
        ops_fail(L, c, "cannot resize the empty image %s to %lldx%lld", ops_shape(L, x),
                 (long long)ho, (long long)wo);
    /* TVM replaces nearest asymmetric rounding by an integer division when out is a
     * multiple of in (topi/image/resize.py: can_convert_multiply_to_intdiv) */
    for (int d = 0; d < 2; d++) {
        int64_t in = s.dim[h + d], out = d ? wo : ho;
        if (a->rs.method == 0 && a->rs.coord == 2 && in > 0 && out % in == 0 &&
            (double)(out / in) <= 1 / (1e-5 * (double)in + 1e-5))
            a->rs.intdiv |= 1 << d;
    }
    s.dim[h] = ho, s.dim[h + 1] = wo;
    int xf = cast_to(L, c, x, DT_F32);
    int y = ops_node(L, c, IR_RESIZE2D, &xf, 1, a, DT_F32, &s);
    return cast_to(L, c, y, dt);
}

static const char *const resize_methods[] = { "nearest_neighbor", "linear", "cubic", NULL };
static const char *const resize_coords[] = { "half_pixel", "align_corners", "asymmetric",
                                             "pytorch_half_pixel", "tf_half_pixel_for_nn", NULL };
static const char *const resize_roundings[] = { "round", "floor", "ceil", "round_prefer_floor",
                                                "round_prefer_ceil", NULL };

/* The method attr: TVM's names, and the "bi" forms of nn.upsampling. */
static int resize_method(Lower *L, const Call *c, const char *m)
{
    int k = name_index(!strncmp(m, "bi", 2) ? m + 2 : m, resize_methods);
    if (k < 0)
        ops_fail(L, c, "attrs.method '%s' is not supported (nearest_neighbor, linear, cubic)", m);
    return k;
}

/* image.resize2d(data; size, roi, layout, method, coordinate_transformation_mode,
 * rounding_method, cubic_alpha, cubic_exclude, out_dtype): roi only matters to
 * tf_crop_and_resize, which is refused. */
int lower_resize2d(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCHW");
    const char *coord = ops_a_str(L, c, "coordinate_transformation_mode", "half_pixel");
    const char *rounding = ops_a_str(L, c, "rounding_method", "");
    const char *od = ops_a_str(L, c, "out_dtype", "");
    Attrs a;
    memset(&a, 0, sizeof a);
    a.rs.method = resize_method(L, c, ops_a_str(L, c, "method", "linear"));
    a.rs.coord = name_index(coord, resize_coords);
    if (!strcmp(coord, "tf_crop_and_resize"))
        ops_fail(L, c, "coordinate_transformation_mode tf_crop_and_resize is not supported");
    if (a.rs.coord < 0)
        ops_fail(L, c, "attrs.coordinate_transformation_mode '%s' is not supported", coord);
    /* TVM's default: round for align_corners, else floor */
    a.rs.rounding = *rounding ? name_index(rounding, resize_roundings) : a.rs.coord == 1 ? 0 : 1;
    if (a.rs.rounding < 0)
        ops_fail(L, c, "attrs.rounding_method '%s' is not supported", rounding);
    a.rs.alpha = (float)ops_a_double(L, c, "cubic_alpha", -0.5);
    a.rs.exclude = ops_a_int(L, c, "cubic_exclude", 0) != 0;
    if (*od && strcmp(od, dtype_name(val(L, x)->dtype)) != 0)
        ops_fail(L, c, "out_dtype %s differs from the data's %s (not supported)", od,
                 dtype_name(val(L, x)->dtype));
    int64_t size[MAXA];
    if (ops_a_ints(L, c, "size", size) != 2)
        ops_fail(L, c, "attrs.size: expected 2 integers");
    return T(L, resize(L, c, x, layout, size[0], size[1], &a));
}
