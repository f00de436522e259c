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
#include "relayc.h"

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
    int x = f32_arg(L, c, 0);
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
    int y = ops_node(L, c, IR_ADAPTIVE_AVG_POOL2D, &x2, 1, NULL, DT_F32, &s);
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

/* collapse_sum_like(data, like) and collapse_sum_to(data; shape): data summed over the
 * axes a broadcast to like's shape would have added or stretched. */
int lower_collapse_sum(Lower *L, const Call *c)
{
    int x = f32_arg(L, c, 0);
    Shape s = c->nargs > 1 ? val(L, ops_arg(L, c, 1))->shape : a_shape(L, c);
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

/* take(data, indices; axis, mode, batch_dims) with constant indices: each run of indices in
 * arithmetic progression is one strided copy, the runs concatenated along axis. */
int lower_take(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), iv = ops_arg(L, c, 1);
    if (val(L, iv)->kind != VAL_CONST)
        ops_fail(L, c, "take with indices computed at run time is not supported (only constant "
                       "indices)");
    const Tensor *t = &L->g->consts[val(L, iv)->constant];
    DType idt = t->dtype;
    if (idt != DT_I8 && idt != DT_U8 && idt != DT_I16 && idt != DT_I32 && idt != DT_I64)
        ops_fail(L, c, "the indices are %s, expected an integer dtype", dtype_name(idt));
    int64_t bd = a_integer(L, c, "batch_dims", 0);
    if (bd != 0)
        ops_fail(L, c, "attrs.batch_dims %lld is not supported (0 only)", (long long)bd);
    const char *mode = ops_a_str(L, c, "mode", "clip");
    if (strcmp(mode, "clip") != 0 && strcmp(mode, "wrap") != 0 && strcmp(mode, "fast") != 0)
        ops_fail(L, c, "attrs.mode '%s' is not one of clip, wrap, fast", mode);
    int64_t axv[MAXA];
    int axis = 0;
    if (ops_a_ints(L, c, "axis", axv) < 0) {
        Shape f = { 1, { shape_numel(&val(L, x)->shape) } };
        x = ops_reshape(L, c, x, &f);
    } else {
        axis = ops_norm_axis(L, c, axv[0], val(L, x)->shape.rank, "axis");
    }
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

/* nn.upsampling, nearest_neighbor with integer scales: each pixel copied scale_h x scale_w
 * times (a copy with stride 0 on two added axes). */
int lower_upsampling(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    const char *layout = ops_a_str(L, c, "layout", "NCHW");
    const char *method = ops_a_str(L, c, "method", "nearest_neighbor");
    double sh = ops_a_double(L, c, "scale_h", 1), sw = ops_a_double(L, c, "scale_w", 1);
    if (strcmp(method, "nearest_neighbor") != 0)
        ops_fail(L, c, "method '%s' is not supported (nearest_neighbor only)", method);
    if (ops_a_int(L, c, "align_corners", 0))
        ops_fail(L, c, "align_corners is not supported");
    if (!(sh >= 1 && sh <= 65536 && sw >= 1 && sw <= 65536) || sh != floor(sh) || sw != floor(sw))
        ops_fail(L, c, "scales %g x %g are not supported (positive integers only)", sh, sw);
    if (val(L, x)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data, got %s", ops_shape(L, x));
    x = ops_layout(L, c, x, layout, "NCHW");
    int64_t reps[RC_MAX_RANK] = { 1, 1, (int64_t)sh, (int64_t)sw };
    return T(L, ops_layout(L, c, repeat_axes(L, c, x, reps, false), "NCHW", layout));
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
