/*
 * ops_qnn.c: the QNN operators (qnn.quantize, qnn.dequantize, qnn.requantize, qnn.conv2d,
 * qnn.dense, qnn.add / subtract / mul, qnn.concatenate, fixed_point_multiply) and the pass
 * that fuses bias_add and requantize into the integer conv2d / dense before them (and an
 * nn.pad by the input zero point into the conv2d after it).
 *
 * Every operator computes what TVM's QNN canonicalization (src/relay/qnn/op/ in TVM 0.7
 * to 0.19) lowers it to, bit for bit:
 *   - a float scale ratio becomes a fixed-point multiplier m (Q31) and a shift s, as
 *     GetFixedPointMultiplierShift computes them: frexp, round(significand * 2^31), and
 *     2^31 becomes 2^30 with s + 1 (qnn_multiplier below);
 *   - requantize subtracts the input zero point in int32, multiplies in int64 with the
 *     rounding the attrs name (UPWARD: + 2^(t-1); TONEAREST: 2^(t-1) - 1 below zero),
 *     shifts right, keeps the low 32 bits, adds the output zero point in int32 and clips
 *     to int8/uint8 (int32 is not clipped). compute_dtype float32/float64 (0.9+) is the
 *     float lowering instead. The "None" defaults of 0.9+ are TVM's RequantizeConfig
 *     defaults, UPWARD and int64 (TVM picks float32 on x86 with SSE4.1 when compute_dtype
 *     is "None": relayc computes what every other target gets);
 *   - qnn.conv2d / qnn.dense: int32 sums of (x - x zero point) * (w - w zero point), the
 *     padding being the input zero point; qnn.add / subtract / mul requantize their
 *     inputs (or their product) as TVM's canonical forms do; qnn.concatenate requantizes
 *     each input whose scale or zero point differs from the output's.
 * The kernels are in runtime/kernels_int8.c; the arithmetic is documented there.
 */
#include "ops.h"

#include <math.h>
#include <stb_ds.h>
#include <stdlib.h>
#include <string.h>

static Value *val(Lower *L, int v) { return &L->g->values[v]; }

/* An inline dtype attr (out_dtype); "" when absent or void. */
static const char *a_dtype(Lower *L, const Call *c, const char *name)
{
    const char *s = c->attrs ? doc_field(L->doc, c->attrs, name) : NULL;
    return s ? s : "";
}

static int T(Lower *L, int v) { return item_tensor(L, v); }

void qnn_multiplier(double d, int32_t *m, int32_t *s)
{
    if (d == 0.0) {
        *m = 0, *s = 0;
        return;
    }
    int e;
    double sig = frexp(d, &e);
    int64_t q = (int64_t)round(sig * 2147483648.0); /* std::round: half away from zero */
    if (q == (INT64_C(1) << 31)) {
        q /= 2;
        e++;
    }
    *m = (int32_t)q, *s = e;
}

/* ---- constants ---- */

static int const_tensor(Lower *L, const Call *c, DType dt, int64_t n, const void *data)
{
    Tensor t;
    if (!graph_const_fits(L->g, n * (int64_t)dtype_size(dt)))
        ops_fail(L, c, "the constants exceed %lld bytes (the limit)", (long long)RC_MAX_CONST_BYTES);
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.shape.rank = 1;
    t.shape.dim[0] = n;
    t.nbytes = (size_t)n * dtype_size(dt);
    t.data = xmalloc(t.nbytes ? t.nbytes : 1);
    memcpy(t.data, data, t.nbytes);
    return graph_add_const(L->g, t, c->json);
}

static int const_i32(Lower *L, const Call *c, int64_t n, const int32_t *v)
{
    return const_tensor(L, c, DT_I32, n, v);
}

/* The values of a constant argument (a scale or zero point) as doubles: *n of them
 * (ops_scratch). want_float: a scale (float32); else a zero point (an integer type). */
static double *const_values(Lower *L, const Call *c, int i, const char *what, bool want_float,
                            int64_t *n, int *rank)
{
    int v = ops_arg(L, c, i);
    const Value *x = val(L, v);
    if (x->kind != VAL_CONST)
        ops_fail(L, c, "the %s (argument %d) must be a constant; relayc compiles QNN operators with "
             "constant scales and zero points", what, i);
    const Tensor *t = &L->g->consts[x->constant];
    bool is_float = t->dtype == DT_F32 || t->dtype == DT_F64;
    if (want_float != is_float || t->dtype == DT_BOOL)
        ops_fail(L, c, "the %s (argument %d) is %s, expected %s", what, i, dtype_name(t->dtype),
             want_float ? "float32" : "int32");
    int64_t k = shape_numel(&t->shape);
    if (k < 1 || t->shape.rank > 1)
        ops_fail(L, c, "the %s (argument %d) has shape %s: expected a scalar or a vector", what, i,
             ops_shape(L, v));
    double *out = ops_scratch(L, (size_t)k * sizeof(double));
    for (int64_t j = 0; j < k; j++) {
        switch (t->dtype) {
        case DT_F32: out[j] = ((const float *)t->data)[j]; break;
        case DT_F64: out[j] = ((const double *)t->data)[j]; break;
        case DT_I8: out[j] = ((const int8_t *)t->data)[j]; break;
        case DT_U8: out[j] = ((const uint8_t *)t->data)[j]; break;
        case DT_I32: out[j] = ((const int32_t *)t->data)[j]; break;
        case DT_I64: out[j] = (double)((const int64_t *)t->data)[j]; break;
        default: unreachable();
        }
    }
    *n = k;
    *rank = t->shape.rank;
    return out;
}

/* A scalar constant argument (output scale or zero point; per-tensor parameters). */
static double const_scalar(Lower *L, const Call *c, int i, const char *what, bool want_float)
{
    int64_t n;
    int rank;
    double *v = const_values(L, c, i, what, want_float, &n, &rank);
    double r = v[0];
    bool uniform = true;
    for (int64_t j = 1; j < n; j++)
        uniform = uniform && v[j] == r;
    if (!uniform)
        ops_fail(L, c, "the %s (argument %d) has %lld different values; relayc supports one here",
             what, i, (long long)n);
    return r;
}

/* ---- checks shared by the operators ---- */

static void refuse_v06(Lower *L, const Call *c)
{
    if (doc_is_v06(L->doc))
        ops_fail(L, c, "%s: TVM 0.6's QNN dialect (scales and zero points as attributes) is not "
             "supported; relayc compiles the QNN operators of TVM 0.7 and later", c->op);
}

static void want_args(Lower *L, const Call *c, int n)
{
    if (c->nargs != n)
        ops_fail(L, c, "%s takes %d arguments, got %d", c->op, n, c->nargs);
}

static DType want_dtype(Lower *L, const Call *c, const char *name, const char *dflt)
{
    const char *s = a_dtype(L, c, name);
    if (!*s)
        s = dflt;
    DType dt;
    if (!dtype_parse(s, &dt))
        ops_fail(L, c, "attrs.%s %s is not supported", name, s);
    return dt;
}

static bool is_8bit(DType dt) { return dt == DT_I8 || dt == DT_U8; }

/* The channel axis of per-channel parameters: TVM's (axis < 0 ? rank + axis : axis). */
static int channel_axis(Lower *L, const Call *c, int64_t axis, int rank)
{
    if (rank == 0)
        return 0;
    if (axis < 0)
        axis += rank;
    if (axis < 0 || axis >= rank)
        ops_fail(L, c, "attrs.axis %lld is out of range for rank %d", (long long)axis, rank);
    return (int)axis;
}

/* The number of channels parameters of n values describe along axis of x (1: per tensor). */
static int64_t channels_of(Lower *L, const Call *c, int x, int axis, int64_t n, const char *what)
{
    if (n == 1)
        return 1;
    const Shape *s = &val(L, x)->shape;
    if (s->rank == 0 || s->dim[axis] != n)
        ops_fail(L, c, "the %s has %lld values but axis %d of %s has %lld", what, (long long)n, axis,
             ops_shape(L, x), (long long)(s->rank ? s->dim[axis] : 1));
    return n;
}

/* ---- requantize ---- */

typedef struct {
    int rounding;           /* 0 UPWARD, 1 TONEAREST */
    int compute;            /* 0 int64, 1 float32, 2 float64 */
} RqMode;

/* An IR_REQUANTIZE node: x (integer) with per-channel input scales iscale[k] and zero points
 * izp[k] (k < nc; one each when nc is 1, else along axis) to (oscale, ozp) in type out.
 * per_tensor_scale: the input scale is a scalar, so equal scales skip the multiply as in
 * TVM (an identity either way: m = 2^30, s = 1 is exact). */
static int ir_requantize(Lower *L, const Call *c, int x, int axis, int64_t nc, const double *iscale,
                         int64_t ns, const double *izp, int64_t nz, double oscale, int32_t ozp,
                         DType out, RqMode mode)
{
    if (oscale == 0.0)
        ops_fail(L, c, "the output scale is 0");
    int32_t *zp = ops_scratch(L, (size_t)nc * sizeof(int32_t));
    int32_t *m = ops_scratch(L, (size_t)nc * sizeof(int32_t));
    int32_t *s = ops_scratch(L, (size_t)nc * sizeof(int32_t));
    float *fm = ops_scratch(L, (size_t)nc * sizeof(float));
    double *dm = ops_scratch(L, (size_t)nc * sizeof(double));
    for (int64_t k = 0; k < nc; k++) {
        zp[k] = (int32_t)izp[nz == 1 ? 0 : k];
        float si = (float)iscale[ns == 1 ? 0 : k], so = (float)oscale;
        double d = (double)si / (double)so;
        if (ns == 1 && si == so) {
            m[k] = INT32_C(1) << 30, s[k] = 1;
            fm[k] = 1.0f, dm[k] = 1.0;
        } else {
            qnn_multiplier(d, &m[k], &s[k]);
            fm[k] = (float)d, dm[k] = d;
        }
    }
    int in[4] = { x, const_i32(L, c, nc, zp), 0, 0 };
    int nin = 2;
    if (mode.compute == 0) {
        in[nin++] = const_i32(L, c, nc, m);
        in[nin++] = const_i32(L, c, nc, s);
    } else if (mode.compute == 1) {
        in[nin++] = const_tensor(L, c, DT_F32, nc, fm);
    } else {
        in[nin++] = const_tensor(L, c, DT_F64, nc, dm);
    }
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = nc == 1 ? 0 : axis;
    a.q.rounding = mode.rounding;
    a.q.compute = mode.compute;
    a.q.yzp = ozp;
    return ops_node(L, c, IR_REQUANTIZE, in, nin, &a, out, &val(L, x)->shape);
}

/* The rounding and compute_dtype attrs ("None": TVM's RequantizeConfig defaults). */
static RqMode rq_mode(Lower *L, const Call *c)
{
    RqMode m = { 0, 0 };
    const char *r = ops_a_str(L, c, "rounding", "None");
    const char *cd = ops_a_str(L, c, "compute_dtype", "None");
    if (strcmp(r, "TONEAREST") == 0)
        m.rounding = 1;
    else if (strcmp(r, "UPWARD") != 0 && strcmp(r, "None") != 0 && *r)
        ops_fail(L, c, "rounding '%s' is not supported (UPWARD or TONEAREST, as TVM)", r);
    if (strcmp(cd, "float32") == 0)
        m.compute = 1;
    else if (strcmp(cd, "float64") == 0)
        m.compute = 2;
    else if (strcmp(cd, "int64") != 0 && strcmp(cd, "None") != 0 && *cd)
        ops_fail(L, c, "compute_dtype '%s' is not supported (int64, float32 or float64, as TVM)", cd);
    return m;
}

int lower_qnn_requantize(Lower *L, const Call *c)
{
    refuse_v06(L, c);
    want_args(L, c, 5);
    int x = ops_arg(L, c, 0);
    DType it = val(L, x)->dtype;
    if (qnn_type_code(it) < 0)
        ops_fail(L, c, "the input is %s; qnn.requantize takes int8, uint8 or int32", dtype_name(it));
    DType out = want_dtype(L, c, "out_dtype", "int8");
    if (qnn_type_code(out) < 0)
        ops_fail(L, c, "out_dtype %s is not supported (int8, uint8 or int32)", dtype_name(out));
    RqMode mode = rq_mode(L, c);
    int rank = val(L, x)->shape.rank;
    int axis = channel_axis(L, c, ops_a_int(L, c, "axis", -1), rank);
    int64_t ns, nz;
    int rs, rz;
    double *is = const_values(L, c, 1, "input scale", true, &ns, &rs);
    double *iz = const_values(L, c, 2, "input zero point", false, &nz, &rz);
    double os = const_scalar(L, c, 3, "output scale", true);
    double oz = const_scalar(L, c, 4, "output zero point", false);
    int64_t nc = channels_of(L, c, x, axis, ns > nz ? ns : nz, "input scale / zero point");
    if ((ns != 1 && ns != nc) || (nz != 1 && nz != nc))
        ops_fail(L, c, "the input scale (%lld values) and zero point (%lld) do not match",
             (long long)ns, (long long)nz);
    /* a scale of shape [1] is TVM's per-channel path: the same arithmetic */
    int y = ir_requantize(L, c, x, axis, nc, is, rs == 0 ? 1 : ns, iz, nz, os, (int32_t)oz, out,
                          mode);
    return T(L, y);
}

/* ---- quantize, dequantize ---- */

static int lower_q_or_dq(Lower *L, const Call *c, bool quantize)
{
    refuse_v06(L, c);
    want_args(L, c, 3);
    int x = ops_arg(L, c, 0);
    DType it = val(L, x)->dtype, out;
    if (quantize) {
        if (it != DT_F32)
            ops_fail(L, c, "the input is %s; qnn.quantize takes float32", dtype_name(it));
        out = want_dtype(L, c, "out_dtype", "int8");
        if (qnn_type_code(out) < 0)
            ops_fail(L, c, "out_dtype %s is not supported (int8, uint8 or int32)", dtype_name(out));
    } else {
        if (qnn_type_code(it) < 0)
            ops_fail(L, c, "the input is %s; qnn.dequantize takes int8, uint8 or int32",
                 dtype_name(it));
        out = want_dtype(L, c, "out_dtype", "float32");
        if (out != DT_F32)
            ops_fail(L, c, "out_dtype %s is not supported (float32)", dtype_name(out));
    }
    int rank = val(L, x)->shape.rank;
    int axis = channel_axis(L, c, ops_a_int(L, c, "axis", -1), rank);
    int64_t ns, nz;
    int rs, rz;
    double *sc = const_values(L, c, 1, "scale", true, &ns, &rs);
    double *zp = const_values(L, c, 2, "zero point", false, &nz, &rz);
    int64_t nc = channels_of(L, c, x, axis, ns > nz ? ns : nz, "scale / zero point");
    if ((ns != 1 && ns != nc) || (nz != 1 && nz != nc))
        ops_fail(L, c, "the scale (%lld values) and zero point (%lld) do not match", (long long)ns,
             (long long)nz);
    float *fs = ops_scratch(L, (size_t)nc * sizeof(float));
    int32_t *iz = ops_scratch(L, (size_t)nc * sizeof(int32_t));
    for (int64_t k = 0; k < nc; k++) {
        fs[k] = (float)sc[ns == 1 ? 0 : k];
        iz[k] = (int32_t)zp[nz == 1 ? 0 : k];
    }
    int in[3] = { x, const_tensor(L, c, DT_F32, nc, fs), const_i32(L, c, nc, iz) };
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = nc == 1 ? 0 : axis;
    return T(L, ops_node(L, c, quantize ? IR_QUANTIZE : IR_DEQUANTIZE, in, 3, &a, out,
                     &val(L, x)->shape));
}

int lower_qnn_quantize(Lower *L, const Call *c) { return lower_q_or_dq(L, c, true); }

int lower_qnn_dequantize(Lower *L, const Call *c) { return lower_q_or_dq(L, c, false); }

/* ---- conv2d, dense ---- */

/* The flip/offset pair that reads an 8-bit tensor of type dt with zero point zp. */
static void byte_reader(DType dt, int32_t zp, int *flip, int *off)
{
    *flip = dt == DT_I8 ? 0x80 : 0;
    *off = (dt == DT_I8 ? 128 : 0) + zp;
}

/* Checks the operands of qnn.conv2d / qnn.dense; fills the readers. */
static void q_operands(Lower *L, const Call *c, int x, int w, Attrs *a)
{
    refuse_v06(L, c);
    want_args(L, c, 6);
    DType xt = val(L, x)->dtype, wt = val(L, w)->dtype;
    if (!is_8bit(xt) || !is_8bit(wt))
        ops_fail(L, c, "data is %s and weight %s; relayc compiles %s for int8 and uint8", dtype_name(xt),
             dtype_name(wt), c->op);
    DType od = want_dtype(L, c, "out_dtype", "int32");
    if (od != DT_I32)
        ops_fail(L, c, "out_dtype %s is not supported (int32)", dtype_name(od));
    double xz = const_scalar(L, c, 2, "input zero point", false);
    double wz = const_scalar(L, c, 3, "kernel zero point", false);
    /* the scales (arguments 4, 5) do not enter the int32 result; check they are constants */
    int64_t n;
    int rank;
    const_values(L, c, 4, "input scale", true, &n, &rank);
    const_values(L, c, 5, "kernel scale", true, &n, &rank);
    if (xz < -65536 || xz > 65536 || wz < -65536 || wz > 65536)
        ops_fail(L, c, "zero points %g and %g are out of range", xz, wz);
    byte_reader(xt, (int32_t)xz, &a->q.xflip, &a->q.xoff);
    byte_reader(wt, (int32_t)wz, &a->q.wflip, &a->q.woff);
}

static int zero_bias(Lower *L, const Call *c, int64_t n)
{
    return const_i32(L, c, n, ops_scratch(L, (size_t)n * sizeof(int32_t)));
}

int lower_qnn_conv2d(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), w = ops_arg(L, c, 1);
    Attrs a;
    memset(&a, 0, sizeof a);
    q_operands(L, c, x, w, &a);
    const char *dl = ops_a_str(L, c, "data_layout", "NCHW"), *kl = ops_a_str(L, c, "kernel_layout", "OIHW");
    const char *ol = ops_a_str(L, c, "out_layout", "");
    if (!*ol)
        ol = dl;
    if (val(L, x)->shape.rank != 4 || val(L, w)->shape.rank != 4)
        ops_fail(L, c, "expected 4-d data and weight, got %s and %s", ops_shape(L, x), ops_shape(L, w));
    x = ops_layout(L, c, x, dl, "NCHW");
    w = ops_layout(L, c, w, kl, "OIHW");
    Window *win = &a.conv;
    ops_a_pair(L, c, "strides", 1, &win->sh, &win->sw);
    ops_a_pair(L, c, "dilation", 1, &win->dh, &win->dw);
    ops_a_padding(L, c, win);
    int64_t groups = ops_a_int(L, c, "groups", 1);
    const int64_t *xd = val(L, x)->shape.dim, *wd = val(L, w)->shape.dim;
    if (groups < 1 || xd[1] % groups || wd[0] % groups)
        ops_fail(L, c, "groups %lld must divide the %lld input and %lld output channels",
             (long long)groups, (long long)xd[1], (long long)wd[0]);
    if (wd[1] * groups != xd[1])
        ops_fail(L, c, "weight %s expects %lld input channels (x%lld groups), but data %s has %lld",
             ops_shape(L, w), (long long)wd[1], (long long)groups, ops_shape(L, x), (long long)xd[1]);
    int64_t ks[64];
    int nk = ops_a_ints(L, c, "kernel_size", ks);
    if (nk >= 0 && (nk != 2 || ks[0] != wd[2] || ks[1] != wd[3]))
        ops_fail(L, c, "attrs.kernel_size does not match the weight %s", ops_shape(L, w));
    win->kh = (int)wd[2], win->kw = (int)wd[3], win->groups = (int)groups;
    int64_t eh = (int64_t)win->dh * (win->kh - 1) + 1, ew = (int64_t)win->dw * (win->kw - 1) + 1;
    int64_t hp = xd[2] + win->pt + win->pb, wp = xd[3] + win->pl + win->pr;
    if (hp < eh || wp < ew)
        ops_fail(L, c, "the %lldx%lld window (with dilation) is larger than the padded input %lldx%lld",
             (long long)eh, (long long)ew, (long long)hp, (long long)wp);
    Shape s = { 4, { xd[0], wd[0], (hp - eh) / win->sh + 1, (wp - ew) / win->sw + 1 } };
    int in[3] = { x, w, zero_bias(L, c, wd[0]) };
    int y = ops_node(L, c, IR_QCONV2D, in, 3, &a, DT_I32, &s);
    return T(L, ops_layout(L, c, y, "NCHW", ol));
}

int lower_qnn_dense(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0), w = ops_arg(L, c, 1);
    Attrs a;
    memset(&a, 0, sizeof a);
    q_operands(L, c, x, w, &a);
    const Shape *xs = &val(L, x)->shape, *ws = &val(L, w)->shape;
    if (xs->rank < 1 || ws->rank != 2)
        ops_fail(L, c, "expected data [..., K] and a 2-d weight, got %s and %s", ops_shape(L, x), ops_shape(L, w));
    int64_t K = xs->dim[xs->rank - 1], N = ws->dim[0];
    if (ws->dim[1] != K)
        ops_fail(L, c, "weight %s has %lld input features but data %s has %lld", ops_shape(L, w),
             (long long)ws->dim[1], ops_shape(L, x), (long long)K);
    int64_t units[64];
    if (ops_a_ints(L, c, "units", units) == 1 && units[0] != N)
        ops_fail(L, c, "attrs.units is %lld but the weight %s gives %lld", (long long)units[0],
             ops_shape(L, w), (long long)N);
    Shape s = *xs;
    s.dim[s.rank - 1] = N;
    a.m = (int)(K ? shape_numel(xs) / K : 0), a.n = (int)N, a.k = (int)K;
    int in[3] = { x, w, zero_bias(L, c, N) };
    return T(L, ops_node(L, c, IR_QMATMUL, in, 3, &a, DT_I32, &s));
}

/* ---- add, subtract, mul ---- */

static int cast_i32(Lower *L, const Call *c, int x)
{
    if (val(L, x)->dtype == DT_I32)
        return x;
    Attrs a;
    memset(&a, 0, sizeof a);
    a.ew = EW_CAST;
    return ops_node(L, c, IR_UNARY, &x, 1, &a, DT_I32, &val(L, x)->shape);
}

static int scalar_i32(Lower *L, const Call *c, int32_t v)
{
    int k = const_i32(L, c, 1, &v);
    Shape s;
    memset(&s, 0, sizeof s);
    return ops_reshape(L, c, k, &s);
}

/* Requantizes x (scale si, zero point zi) to (so, zo) as int32, or only widens it when both
 * match (TVM's RequantizeOrUpcast); UPWARD, int64 (the defaults). */
static int requantize_or_upcast(Lower *L, const Call *c, int x, double si, double zi, double so,
                                double zo)
{
    if ((float)si == (float)so && zi == zo)
        return cast_i32(L, c, x);
    RqMode mode = { 0, 0 };
    return ir_requantize(L, c, x, 0, 1, &si, 1, &zi, 1, so, (int32_t)zo, DT_I32, mode);
}

/* Clip to dt's range and cast (TVM's ConvertDtype). */
static int convert_dtype(Lower *L, const Call *c, int x, DType dt)
{
    int64_t lo, hi;
    dtype_range(dt, &lo, &hi);
    x = ops_unary(L, c, x, EW_CLIP, (float)lo, (float)hi);
    Attrs a;
    memset(&a, 0, sizeof a);
    a.ew = EW_CAST;
    return ops_node(L, c, IR_UNARY, &x, 1, &a, dt, &val(L, x)->shape);
}

int lower_qnn_binary(Lower *L, const Call *c)
{
    refuse_v06(L, c);
    want_args(L, c, 8);
    int x = ops_arg(L, c, 0), y = ops_arg(L, c, 1);
    DType dt = val(L, x)->dtype;
    if (!is_8bit(dt) && dt != DT_I32)
        ops_fail(L, c, "the inputs are %s; %s takes int8, uint8 or int32", dtype_name(dt), c->op);
    if (val(L, y)->dtype != dt)
        ops_fail_type(L, c, "the inputs are %s and %s", dtype_name(dt), dtype_name(val(L, y)->dtype));
    const char *names[6] = { "lhs scale", "lhs zero point", "rhs scale", "rhs zero point",
                             "output scale", "output zero point" };
    double p[6];
    for (int i = 0; i < 6; i++)
        p[i] = const_scalar(L, c, 2 + i, names[i], i % 2 == 0);
    double ls = p[0], lz = p[1], rs = p[2], rz = p[3], os = p[4], oz = p[5];
    int r;
    if (strcmp(c->op, "qnn.mul") == 0) {
        /* (x - lz) * (y - rz) in int32, requantized from scale ls*rs (a float32 product) */
        int a = cast_i32(L, c, x), b = cast_i32(L, c, y);
        if (lz != 0)
            a = ops_binary(L, c, a, scalar_i32(L, c, (int32_t)lz), EW_SUBTRACT);
        if (rz != 0)
            b = ops_binary(L, c, b, scalar_i32(L, c, (int32_t)rz), EW_SUBTRACT);
        int prod = ops_binary(L, c, a, b, EW_MULTIPLY);
        double ps = (double)((float)ls * (float)rs), zero = 0;
        RqMode mode = { 0, 0 };
        r = ir_requantize(L, c, prod, 0, 1, &ps, 1, &zero, 1, os, (int32_t)oz, dt, mode);
        return T(L, r);
    }
    int a = requantize_or_upcast(L, c, x, ls, lz, os, oz);
    int b = requantize_or_upcast(L, c, y, rs, rz, os, oz);
    if (strcmp(c->op, "qnn.add") == 0) {
        r = ops_binary(L, c, a, b, EW_ADD);
        if (oz != 0)
            r = ops_binary(L, c, r, scalar_i32(L, c, (int32_t)oz), EW_SUBTRACT);
    } else {
        r = ops_binary(L, c, a, b, EW_SUBTRACT);
        if (oz != 0)
            r = ops_binary(L, c, r, scalar_i32(L, c, (int32_t)oz), EW_ADD);
    }
    return T(L, convert_dtype(L, c, r, dt));
}

/* ---- concatenate ---- */

/* The fields of tuple argument i as tensor values (*out, ops_scratch); returns their count. */
static int tuple_fields(Lower *L, const Call *c, int i, int **out)
{
    const Item *t = &L->items[c->args[i]];
    if (t->value >= 0)
        ops_fail(L, c, "argument %d: expected a tuple", i);
    int n = (int)arrlen(t->fields);
    *out = ops_scratch(L, (size_t)n * sizeof(int));
    for (int k = 0; k < n; k++) {
        const Item *f = &L->items[t->fields[k]];
        if (f->value < 0)
            ops_fail(L, c, "field %d of argument %d is itself a tuple", k, i);
        (*out)[k] = f->value;
    }
    return n;
}

/* A scalar constant tensor value (a field of a tuple of scales or zero points). */
static double value_scalar(Lower *L, const Call *c, int v, const char *what, bool want_float)
{
    const Value *x = val(L, v);
    if (x->kind != VAL_CONST || shape_numel(&x->shape) != 1)
        ops_fail(L, c, "each %s must be a scalar constant", what);
    const Tensor *t = &L->g->consts[x->constant];
    bool is_float = t->dtype == DT_F32 || t->dtype == DT_F64;
    if (want_float != is_float)
        ops_fail(L, c, "a %s is %s", what, dtype_name(t->dtype));
    switch (t->dtype) {
    case DT_F32: return *(const float *)t->data;
    case DT_F64: return *(const double *)t->data;
    case DT_I8: return *(const int8_t *)t->data;
    case DT_U8: return *(const uint8_t *)t->data;
    case DT_I32: return *(const int32_t *)t->data;
    case DT_I64: return (double)*(const int64_t *)t->data;
    default: ops_fail(L, c, "a %s is %s", what, dtype_name(t->dtype));
    }
}

int lower_qnn_concatenate(Lower *L, const Call *c)
{
    refuse_v06(L, c);
    want_args(L, c, 5);
    int *xs, *ss, *zs;
    int n = tuple_fields(L, c, 0, &xs);
    if (n < 1)
        ops_fail(L, c, "concatenate of an empty tuple");
    if (tuple_fields(L, c, 1, &ss) != n || tuple_fields(L, c, 2, &zs) != n)
        ops_fail(L, c, "%d tensors but a different number of input scales or zero points", n);
    double os = const_scalar(L, c, 3, "output scale", true);
    double oz = const_scalar(L, c, 4, "output zero point", false);
    DType dt = val(L, xs[0])->dtype;
    int *ins = ops_scratch(L, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) {
        int x = xs[i];
        if (qnn_type_code(val(L, x)->dtype) < 0)
            ops_fail(L, c, "tensor %d is %s; qnn.concatenate takes int8, uint8 or int32", i,
                 dtype_name(val(L, x)->dtype));
        double si = value_scalar(L, c, ss[i], "input scale", true);
        double zi = value_scalar(L, c, zs[i], "input zero point", false);
        if (!((float)si == (float)os && zi == oz)) {
            RqMode mode = { 0, 0 };
            x = ir_requantize(L, c, x, 0, 1, &si, 1, &zi, 1, os, (int32_t)oz, val(L, x)->dtype,
                              mode);
        }
        ins[i] = x;
    }
    Shape s = val(L, ins[0])->shape;
    int axis = ops_norm_axis(L, c, ops_a_int(L, c, "axis", 0), s.rank, "axis");
    s.dim[axis] = 0;
    for (int i = 0; i < n; i++) {
        const Shape *si = &val(L, ins[i])->shape;
        bool ok = si->rank == s.rank && val(L, ins[i])->dtype == dt;
        for (int d = 0; ok && d < s.rank; d++)
            ok = d == axis || si->dim[d] == s.dim[d];
        if (!ok)
            ops_fail(L, c, "tensor %d is %s %s, which does not match tensor 0 (%s %s) outside axis %d",
                 i, dtype_name(val(L, ins[i])->dtype), ops_shape(L, ins[i]), dtype_name(dt), ops_shape(L, ins[0]),
                 axis);
        s.dim[axis] += si->dim[axis];
    }
    Attrs a;
    memset(&a, 0, sizeof a);
    a.axis = axis;
    int y = ops_node(L, c, IR_CONCAT, ins, n, &a, dt, &s);
    return T(L, y);
}

/* ---- fixed_point_multiply ---- */

int lower_fixed_point_multiply(Lower *L, const Call *c)
{
    int x = ops_arg(L, c, 0);
    if (val(L, x)->dtype != DT_I32)
        ops_fail(L, c, "the input is %s; fixed_point_multiply takes int32",
             dtype_name(val(L, x)->dtype));
    int32_t m = (int32_t)ops_a_int(L, c, "multiplier", 0), s = (int32_t)ops_a_int(L, c, "shift", 0);
    int32_t zero = 0;
    int in[4] = { x, const_i32(L, c, 1, &zero), const_i32(L, c, 1, &m), const_i32(L, c, 1, &s) };
    Attrs a;
    memset(&a, 0, sizeof a);
    return T(L, ops_node(L, c, IR_REQUANTIZE, in, 4, &a, DT_I32, &val(L, x)->shape));
}

/* ---- fusion: qconv2d / qmatmul [+ bias] + requantize ---- */

/* The values each value is read by: counts, with graph outputs counting as readers. */
static int *reader_counts(const Graph *g)
{
    int nv = (int)arrlen(g->values);
    int *cnt = xcalloc((size_t)nv + 1, sizeof(int));
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++)
            cnt[g->nodes[i].in[k]]++;
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        cnt[g->outputs[i]] += 2;
    return cnt;
}

/* The node reading v, when there is exactly one. */
static int sole_reader(const Graph *g, const int *cnt, int v)
{
    if (cnt[v] != 1)
        return -1;
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        for (int k = 0; k < (int)arrlen(g->nodes[i].in); k++)
            if (g->nodes[i].in[k] == v)
                return i;
    return -1;
}

/* True when constant value b holds one value per channel of out (channel axis ax of a
 * rank-r tensor with co channels) and broadcasts along that axis only. */
static bool per_channel_const(const Graph *g, int b, int r, int ax, int64_t co)
{
    const Value *v = &g->values[b];
    if (v->kind != VAL_CONST || v->dtype != DT_I32 || v->shape.rank > r ||
        shape_numel(&v->shape) != co)
        return false;
    for (int d = 0; d < v->shape.rank; d++) {
        int od = d + (r - v->shape.rank);
        if (v->shape.dim[d] != (od == ax ? co : 1))
            return false;
    }
    return true;
}

/* When copy node m is a transpose of the conv2d output value x (NCHW), the axis of its
 * output that holds x's channels (-1 when m is not such a transpose, or that is ambiguous). */
static int transposed_channel_axis(const Graph *g, const Node *m, int x)
{
    const Shape *in = &g->values[x].shape, *out = &g->values[m->out].shape;
    int64_t st[RC_MAX_RANK], k = 1;
    bool used[RC_MAX_RANK] = { false };
    int cax = -1;
    if (m->op != IR_COPY || m->in[0] != x || m->a.xoff != 0 || out->rank != in->rank ||
        shape_numel(out) != shape_numel(in) || in->dim[1] < 2)
        return -1;
    for (int d = in->rank - 1; d >= 0; d--) {
        st[d] = k;
        k *= in->dim[d];
    }
    for (int d = 0; d < out->rank; d++) {
        int found = -1;
        for (int p = 0; p < in->rank && found < 0; p++)
            if (!used[p] && in->dim[p] == out->dim[d] && (out->dim[d] == 1 || st[p] == m->a.xstride[d]))
                found = p;
        if (found < 0)
            return -1;
        used[found] = true;
        if (found == 1) {
            if (cax >= 0)
                return -1;
            cax = d;
        }
    }
    return cax;
}

/* An nn.pad of the height and width only, whose value is the input zero point of the
 * integer conv2d that alone reads it, is the conv's own padding (its taps there read
 * x - zx = 0): the conv reads the pad's input with the padding added to its window, and
 * the padded copy is never made (TVM's quantized PyTorch models pad so before their
 * depthwise convs). Returns true when it did. */
static bool fold_pad(Graph *g, const int *cnt, int i)
{
    Node *n = &g->nodes[i];
    int v = n->in[0], k = g->values[v].producer;
    if (n->op != IR_QCONV2D || g->values[v].kind != VAL_TEMP || k < 0 || cnt[v] != 1)
        return false;
    const Node *p = &g->nodes[k];
    const Shape *in = &g->values[p->in[0]].shape, *out = &g->values[v].shape;
    if (p->op != IR_PAD || in->rank != 4 || g->values[p->in[0]].dtype != g->values[v].dtype ||
        in->dim[0] != out->dim[0] || in->dim[1] != out->dim[1] || p->a.pad_lo[0] || p->a.pad_lo[1] ||
        p->a.p0 != (float)qpack_zx(n))
        return false;
    int64_t t = p->a.pad_lo[2], l = p->a.pad_lo[3];
    int64_t b = out->dim[2] - in->dim[2] - t, r = out->dim[3] - in->dim[3] - l;
    Window *w = &n->a.conv;
    if ((int64_t)w->pt + t > 65536 || (int64_t)w->pl + l > 65536 || (int64_t)w->pb + b > 65536 ||
        (int64_t)w->pr + r > 65536)
        return false;
    w->pt += (int)t, w->pl += (int)l, w->pb += (int)b, w->pr += (int)r;
    n->in[0] = p->in[0];
    graph_merge_sources(n, p);
    return true;
}

/* PyTorch's quantized models requantize to int32, clip to the 8-bit range and cast: a clip
 * of the int32 value out that alone reads it, to bounds within the range of an 8-bit cast
 * that alone reads the clip, is an 8-bit requantize clipped to those bounds (the cast
 * changes no value). Returns the cast's node, with the clip's in *clip, the 8-bit type in
 * *odt and the bounds in *ylo, *yhi; -1 (and nothing set) otherwise. */
static int int32_clip_cast(const Graph *g, const int *cnt, int out, int *clip, DType *odt,
                           int64_t *ylo, int64_t *yhi)
{
    int c = sole_reader(g, cnt, out);
    if (c < 0)
        return -1;
    const Node *k = &g->nodes[c];
    int t = k->op == IR_UNARY && k->a.ew == EW_CLIP ? sole_reader(g, cnt, k->out) : -1;
    if (t < 0 || g->values[k->out].dtype != DT_I32)
        return -1;
    const Node *cv = &g->nodes[t];
    DType dt = g->values[cv->out].dtype;
    if (cv->op != IR_UNARY || cv->a.ew != EW_CAST || (dt != DT_I8 && dt != DT_U8))
        return -1;
    int64_t lo = qnn_int_param(DT_I32, k->a.p0), hi = qnn_int_param(DT_I32, k->a.p1);
    int64_t tlo = dt == DT_I8 ? -128 : 0, thi = dt == DT_I8 ? 127 : 255;
    if (lo < tlo || hi > thi || lo > hi)
        return -1;
    *clip = c, *odt = dt, *ylo = lo, *yhi = hi;
    return t;
}

void fuse_qnn(Graph *g)
{
    int *cnt = reader_counts(g);
    bool changed = false;
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        changed = fold_pad(g, cnt, i) || changed;
    for (int i = 0; i < (int)arrlen(g->nodes); i++) {
        Node *n = &g->nodes[i];
        if ((n->op != IR_QCONV2D && n->op != IR_QMATMUL) || n->a.q.requant)
            continue;
        const Value *acc = &g->values[n->out];
        int r = acc->shape.rank, ax = n->op == IR_QCONV2D ? 1 : r - 1;
        int64_t co = acc->shape.dim[ax];
        int v = n->out, j = sole_reader(g, cnt, v);
        int bias = -1, badd = -1, copy = -1;
        if (j < 0)
            continue;
        const Node *m = &g->nodes[j];
        /* NHWC (TFLite): a transpose of the NCHW result comes first; it will move the
         * requantized values instead */
        int cax = n->op == IR_QCONV2D ? transposed_channel_axis(g, m, v) : -1;
        if (cax >= 0) {
            copy = j, v = m->out, ax = cax;
            acc = &g->values[v];
            j = sole_reader(g, cnt, v);
            if (j < 0)
                continue;
            m = &g->nodes[j];
        }
        /* an int32 bias along the channel axis */
        if (m->op == IR_BINARY && m->a.ew == EW_ADD && shape_eq(&g->values[m->out].shape, &acc->shape)) {
            int other = m->in[0] == v ? m->in[1] : m->in[0];
            if (other != v && per_channel_const(g, other, r, ax, co)) {
                bias = other, badd = j;
                v = m->out;
                j = sole_reader(g, cnt, v);
                if (j < 0)
                    continue;
                m = &g->nodes[j];
            }
        }
        /* the requantize (integer arithmetic) along the channel axis, or per tensor */
        if (m->op != IR_REQUANTIZE || m->a.q.compute != 0 || m->in[0] != v)
            continue;
        int64_t nc = shape_numel(&g->values[m->in[1]].shape);
        if (nc != 1 && m->a.axis != ax)
            continue;
        int out = m->out;
        /* the clip bounds of an 8-bit result; a clip reading only it (relu, relu6) is folded
         * in: max(min(r, hi), lo) is a clamp to [max(type lo, lo), min(type hi, hi)] */
        DType odt = g->values[out].dtype;
        int64_t ylo = odt == DT_I8 ? -128 : 0, yhi = odt == DT_I8 ? 127 : 255;
        int clip = odt == DT_I32 ? -1 : sole_reader(g, cnt, out), cast = -1;
        if (odt == DT_I32)
            cast = int32_clip_cast(g, cnt, out, &clip, &odt, &ylo, &yhi);
        else if (clip >= 0) {
            const Node *k = &g->nodes[clip];
            int64_t lo = qnn_int_param(odt, k->a.p0), hi = qnn_int_param(odt, k->a.p1);
            if (k->op == IR_UNARY && k->a.ew == EW_CLIP && g->values[k->out].dtype == odt &&
                lo <= hi) {
                ylo = lo > ylo ? lo : ylo, yhi = hi < yhi ? hi : yhi;
                if (ylo > yhi)
                    ylo = yhi;
            } else {
                clip = -1;
            }
        }
        /* bias' = bias - input zero point (int32, wrapping: the same ring arithmetic) */
        const int32_t *bz = bias >= 0 ? g->consts[g->values[bias].constant].data : NULL;
        const int32_t *iz = g->consts[g->values[m->in[1]].constant].data;
        const int32_t *mm = g->consts[g->values[m->in[2]].constant].data;
        const int32_t *ms = g->consts[g->values[m->in[3]].constant].data;
        int32_t *nb = xmalloc((size_t)co * sizeof(int32_t) + 1);
        int32_t *nm = xmalloc((size_t)co * sizeof(int32_t) + 1);
        int32_t *ns = xmalloc((size_t)co * sizeof(int32_t) + 1);
        for (int64_t k = 0; k < co; k++) {
            int64_t z = nc == 1 ? 0 : k;
            uint32_t sum = (uint32_t)(bz ? bz[k] : 0) - (uint32_t)iz[z];
            nb[k] = (int32_t)(sum <= 0x7fffffffu ? (int64_t)sum : (int64_t)sum - 4294967296LL);
            nm[k] = mm[z], ns[k] = ms[z];
        }
        Tensor tb = { DT_I32, { 1, { co } }, nb, (size_t)co * 4 };
        Tensor tm = { DT_I32, { 1, { co } }, nm, (size_t)co * 4 };
        Tensor ts = { DT_I32, { 1, { co } }, ns, (size_t)co * 4 };
        int vb = graph_add_const(g, tb, n->json);
        int vm = graph_add_const(g, tm, n->json);
        int vs = graph_add_const(g, ts, n->json);
        n = &g->nodes[i];
        m = &g->nodes[j];
        n->in[2] = vb;
        arrput(n->in, vm);
        arrput(n->in, vs);
        n->a.q.requant = 1;
        n->a.q.rounding = m->a.q.rounding;
        n->a.q.yzp = m->a.q.yzp;
        n->a.q.ylo = (int32_t)ylo, n->a.q.yhi = (int32_t)yhi;
        if (clip >= 0) { /* the clip's result (or the cast's) is the conv's now */
            g->values[out].producer = -1;
            out = g->nodes[clip].out;
        }
        if (cast >= 0) {
            g->values[out].producer = -1;
            out = g->nodes[cast].out;
        }
        /* the conv now writes the requantized value; the add and requantize nodes are dead,
         * and so is the accumulator value (no node computes it) */
        if (copy >= 0) {
            /* conv -> a new NCHW value of the output type -> the transpose -> out */
            Shape cs = g->values[n->out].shape;
            int nv = graph_add_value(g, VAL_TEMP, g->values[out].dtype, &cs, n->json);
            Node *cp = &g->nodes[copy];
            g->values[n->out].producer = -1;
            g->values[cp->out].producer = -1;
            n->out = nv;
            g->values[nv].producer = i;
            cp->in[0] = nv;
            cp->out = out;
            g->values[out].producer = copy;
        } else {
            g->values[n->out].producer = -1;
            n->out = out;
            g->values[out].producer = i;
        }
        /* the conv computes the bias add, the requantize and the clip now */
        if (badd >= 0)
            graph_merge_sources(n, &g->nodes[badd]);
        graph_merge_sources(n, &g->nodes[j]);
        if (clip >= 0)
            graph_merge_sources(n, &g->nodes[clip]);
        if (cast >= 0)
            graph_merge_sources(n, &g->nodes[cast]);
        changed = true;
    }
    free(cnt);
    if (changed)
        remove_dead(g);
}
