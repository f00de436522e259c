/*
 * ops.h: the lowering of Relay calls to IR nodes, shared by load.c (which walks the
 * expressions) and the operator files ops.c, ops_tensor.c and ops_qnn.c. Nothing after
 * lowering includes it.
 */
#ifndef RELAYC_OPS_H
#define RELAYC_OPS_H

#include "relayc.h"

//
// ops.c: the Relay operators relayc compiles, each lowered to IR nodes
//

/* A lowered Relay expression: one tensor value, or a tuple of other items. */
typedef struct {
    int value;              /* value index; -1 for a tuple */
    int *fields;            /* tuple: stb_ds array of item indices */
} Item;

/* Lowering state shared by load.c and ops.c. */
typedef struct {
    RelayDoc *doc;
    Graph *g;
    Item *items;            /* stb_ds */
    int *tmp;               /* scratch for one lowering function (freed with the loader) */
    void **scratch;         /* stb_ds: ops_scratch's blocks, freed when the call's lowering
                             * returns or fails */
    int *call_args;         /* scratch: the argument items of the call being lowered */
    bool type_error;        /* the last failure was ops_fail_type: operands that do not fit
                             * together, not a dtype relayc lacks (load.c's retry) */
} Lower;

/* One Relay call being lowered. */
typedef struct {
    int json;               /* the relay.Call node */
    int attrs;              /* its attrs node (0 = null) */
    const char *op;         /* operator name */
    const int *args;        /* argument items */
    int nargs;
} Call;

/* One operator relayc compiles: a row of relay_ops[] (compiler/ops.c). Before lowering a
 * call, load.c checks the dtype of its data (argument 0, every field when it is a tuple;
 * with DATA_ARG(k) in dtypes, argument k; with DATA_RESULT, the result's, after lowering)
 * against the set DTS_OF(op): a dtype not in it makes the call unsupported ("OP on
 * DTYPE"), whatever the lowering would do. */
typedef struct {
    const char *name;                       /* Relay name, "nn.conv2d" */
    int min_args, max_args;
    int (*lower)(Lower *L, const Call *c);  /* checks, infers, adds nodes; returns an item */
    unsigned dtypes;                        /* the dtypes of its data (DTS_*) | DATA_ARG(k) */
} RelayOp;
#define DATA_ARG(k) ((unsigned)(k) << 16)
#define DATA_RESULT_ARG 255
#define DATA_RESULT DATA_ARG(DATA_RESULT_ARG)
#define DTS_OF(ro) ((ro)->dtypes & 0xffffu)
#define DATA_OF(ro) ((int)((ro)->dtypes >> 16))

/* The operator named name, or NULL when relayc does not support it. */
const RelayOp *relay_op_find(const char *name);
int item_tensor(Lower *L, int value);
/* Lowering helpers shared by ops.c and ops_qnn.c. */
/* n zeroed bytes that live until the lowering of the current call returns or fails (a
 * lowering function that fails jumps out past any free of its own). */
void *ops_scratch(Lower *L, size_t n);
/* Frees the scratch blocks from the mark'th on (load.c, after each call). */
void ops_scratch_release(Lower *L, size_t mark);

RC_NORETURN void ops_fail(Lower *L, const Call *c, const char *fmt, ...) RC_PRINTF(3, 4);
const char *ops_shape(Lower *L, int v);         /* "[1, 3, 8, 8]" of a value, for messages */
int ops_arg(Lower *L, const Call *c, int i);     /* argument i as a tensor value */
/* ops_fail for operands whose dtypes do not fit together (a type error of the model, which
 * `info` reports as an error rather than as an unsupported (operator, dtype) pair). */
#define ops_fail_type(L, c, ...) ((L)->type_error = true, ops_fail((L), (c), __VA_ARGS__))
int64_t ops_a_int(Lower *L, const Call *c, const char *name, int64_t dflt);
const char *ops_a_str(Lower *L, const Call *c, const char *name, const char *dflt);
/* Adds a node computing a new value; checks the result against the tensor limits. */
int ops_node(Lower *L, const Call *c, IrOp op, const int *in, int nin, const Attrs *a, DType dt,
             const Shape *s);
int item_tuple(Lower *L, const int *items, int n);

/* ops.c's helpers for ops_qnn.c: attrs (a_ints: -1 when absent), axes, IR builders. */
int ops_a_ints(Lower *L, const Call *c, const char *name, int64_t *out);
void ops_a_pair(Lower *L, const Call *c, const char *name, int dflt, int *h, int *w);
void ops_a_padding(Lower *L, const Call *c, Window *w);
int ops_norm_axis(Lower *L, const Call *c, int64_t axis, int rank, const char *what);
int ops_layout(Lower *L, const Call *c, int x, const char *from, const char *to);
int ops_reshape(Lower *L, const Call *c, int x, const Shape *s);
int ops_unary(Lower *L, const Call *c, int x, EwKind ew, float p0, float p1);
int ops_binary(Lower *L, const Call *c, int x, int y, EwKind ew);

/* ops.c's helpers for ops_tensor.c: a double attr, the axes of a reduction's attrs (axis,
 * exclude), a reduction (kind: 0 sum, 1 mean, 2 max, 3 min), a transpose, a vector reshaped
 * to broadcast along axis of a rank-r tensor, and a pooled size (floor or ceil mode). */
double ops_a_double(Lower *L, const Call *c, const char *name, double dflt);
void ops_reduce_axes(Lower *L, const Call *c, int rank, int *reduced);
int ops_reduce(Lower *L, const Call *c, int x, const int *reduced, int kind, bool keepdims);
int ops_transpose(Lower *L, const Call *c, int x, const int *perm);
int ops_along_axis(Lower *L, const Call *c, int v, int axis, int r, int64_t n, const char *what);
int64_t ops_pool_out(int64_t in, int pa, int pb, int k, int d, int s, bool ceil_mode);

/* ops_qnn.c: the QNN operators (TVM 0.7+; 0.6's attrs-based QNN is refused). */
int lower_qnn_quantize(Lower *L, const Call *c);
int lower_qnn_dequantize(Lower *L, const Call *c);
int lower_qnn_requantize(Lower *L, const Call *c);
int lower_qnn_conv2d(Lower *L, const Call *c);
int lower_qnn_dense(Lower *L, const Call *c);
int lower_qnn_binary(Lower *L, const Call *c);
int lower_qnn_concatenate(Lower *L, const Call *c);
int lower_fixed_point_multiply(Lower *L, const Call *c);
/* TVM's GetFixedPointMultiplierShift: d = m * 2^(s - 31), m a Q31 significand. */
void qnn_multiplier(double d, int32_t *m, int32_t *s);

/* ops_tensor.c: operators composed of the IR ops above (1-D conv and pooling, constants
 * and broadcasts, stack, take with constant indices, normalisations, comparisons, data
 * movement as strided copies). */
int lower_conv1d(Lower *L, const Call *c);
int lower_pool1d(Lower *L, const Call *c);
int lower_adaptive_avg_pool1d(Lower *L, const Call *c);
int lower_full(Lower *L, const Call *c);
int lower_zeros_ones(Lower *L, const Call *c);
int lower_broadcast_to(Lower *L, const Call *c);
int lower_reshape_like(Lower *L, const Call *c);
int lower_collapse_sum(Lower *L, const Call *c);
int lower_stack(Lower *L, const Call *c);
int lower_take(Lower *L, const Call *c);
int lower_layer_norm(Lower *L, const Call *c);
int lower_group_norm(Lower *L, const Call *c);
int lower_variance(Lower *L, const Call *c);
int lower_compare(Lower *L, const Call *c);
int lower_reverse(Lower *L, const Call *c);
int lower_tile(Lower *L, const Call *c);
int lower_repeat(Lower *L, const Call *c);
int lower_subpixel(Lower *L, const Call *c);
int lower_upsampling(Lower *L, const Call *c);
int lower_lrn(Lower *L, const Call *c);
int lower_l2_normalize(Lower *L, const Call *c);
int ops_cast_bool(Lower *L, const Call *c, int x);  /* cast to bool: x != 0 */
/* take, gather, where, argmax/argmin, cumsum, and the adaptive pools' IR node on x NCHW
 * (float average: IR_ADAPTIVE_AVG_POOL2D; max and integer average: IR_ADAPTIVE_POOL2D). */
int lower_gather(Lower *L, const Call *c);
int lower_where(Lower *L, const Call *c);
int lower_argreduce(Lower *L, const Call *c);
int lower_cumsum(Lower *L, const Call *c);
int ops_adaptive_pool(Lower *L, const Call *c, int x, const Shape *s, bool is_max);
/* nn.conv2d_transpose, nn.conv1d_transpose: one stride-1 conv2d per output phase (the
 * taps of that phase, flipped and transposed), interleaved; or, when a phase would read no
 * input or the dilation is above 1, a conv2d over the input scattered at the strides;
 * image.resize2d. */
int lower_conv_transpose(Lower *L, const Call *c);
int lower_resize2d(Lower *L, const Call *c);

#endif /* RELAYC_OPS_H */
