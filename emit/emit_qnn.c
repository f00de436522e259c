/*
 * emit_qnn.c: the integer (QNN) part of the emitted C. Kernels come from
 * runtime/kernels_int8.c, copied section by section (the helper sections rq_wrap32 and
 * rq_fpm first, when a kernel that calls them is copied); every node whose kernel is
 * there (the QNN nodes, and copies, pads, concatenations and pooling of integer tensors)
 * becomes one call with literal shapes and parameters. 8-bit operands are passed as
 * unsigned char pointers and read with a flip and an offset (kernels_int8.c). conv2d and
 * dense nodes that compiler/pack_qnn.c specialised call their own kernel instead
 * (emit/kernel_qconv.c, written after the sections).
 */
#include "../compiler/relayc.h"

#include <stb_ds.h>
#include <stdio.h>
#include <string.h>

extern const char relayc_kernels_int8_text[]; /* runtime/kernels_int8.c, embedded at build time */

bool emit_qnn_owns(const Graph *g, const Node *n)
{
    switch (n->op) {
    case IR_QCONV2D:
    case IR_QMATMUL:
    case IR_REQUANTIZE:
    case IR_QUANTIZE:
    case IR_DEQUANTIZE:
        return true;
    case IR_POOL2D:
    case IR_COPY:
    case IR_PAD:
    case IR_CONCAT:
        return g->values[n->out].dtype != DT_F32;
    default:
        return false;
    }
}

const char *emit_qnn_ew_expr(const Graph *g, const Node *n)
{
    if (g->values[n->out].dtype != DT_I32 || g->values[n->in[0]].dtype != DT_I32 ||
        (n->op == IR_BINARY && g->values[n->in[1]].dtype != DT_I32))
        return NULL;
    switch (n->a.ew) {
    case EW_ADD: return "(int32_t)((uint32_t)x + (uint32_t)y)";
    case EW_SUBTRACT: return "(int32_t)((uint32_t)x - (uint32_t)y)";
    case EW_MULTIPLY: return "(int32_t)((uint32_t)x * (uint32_t)y)";
    case EW_NEGATIVE: return "(int32_t)(0u - (uint32_t)x)";
    default: return NULL;
    }
}

static void put_section(Buf *b, const char *name)
{
    char marker[64];
    snprintf(marker, sizeof marker, "/*@ %s */\n", name);
    const char *start = strstr(relayc_kernels_int8_text, marker);
    if (!start)
        unreachable();
    start += strlen(marker);
    const char *end = strstr(start, "\n/*@ ");
    size_t n = end ? (size_t)(end - start) + 1 : strlen(start);
    buf_write(b, start, n);
    buf_puts(b, "\n");
}

/* True when n runs a specialised kernel of emit/kernel_qconv.c (pack_qnn.c chose it). */
static bool specialised(const Node *n)
{
    return (n->op == IR_QCONV2D || n->op == IR_QMATMUL) && n->a.tile.kind;
}

/* The kernel section a node calls (NULL for none). */
static const char *section_of(const Graph *g, const Node *n)
{
    if (!emit_qnn_owns(g, n) || specialised(n))
        return NULL;
    switch (n->op) {
    case IR_QCONV2D: return "rq_conv2d";
    case IR_QMATMUL: return "rq_matmul";
    case IR_REQUANTIZE: return "rq_requantize";
    case IR_QUANTIZE: return "rq_quantize";
    case IR_DEQUANTIZE: return "rq_dequantize";
    case IR_POOL2D: return "rq_pool2d";
    default: return "rq_copy";
    }
}

void emit_qnn_kernels(const Graph *g, Buf *b)
{
    /* in kernels_int8.c order; users of rq_wrap32 and rq_fpm */
    static const char *order[] = { "rq_conv2d", "rq_matmul", "rq_requantize", "rq_quantize",
                                   "rq_dequantize", "rq_pool2d", "rq_copy", "rq_fill" };
    bool used[8] = { false }, spec = false, spec_rq = false, spec_rq_r = false;
    int nn = (int)arrlen(g->nodes);
    for (int i = 0; i < nn; i++) {
        const char *s = section_of(g, &g->nodes[i]);
        int f = specialised(&g->nodes[i]) ? emit_qkernel_fpm(g, i) : 0;
        spec = spec || specialised(&g->nodes[i]);
        spec_rq = spec_rq || f == 1;
        spec_rq_r = spec_rq_r || f == 2;
        for (int k = 0; s && k < 8; k++)
            used[k] = used[k] || strcmp(order[k], s) == 0;
        if (g->nodes[i].op == IR_PAD && s)
            used[7] = true;
    }
    if (used[0] || used[1] || used[2] || used[4] || used[5] || spec)
        put_section(b, "rq_wrap32");
    if (used[0] || used[1] || used[2] || spec_rq)
        put_section(b, "rq_fpm");
    if (spec_rq_r)
        put_section(b, "rq_fpm_h");
    for (int k = 0; k < 8; k++)
        if (used[k])
            put_section(b, order[k]);
    for (int i = 0; i < nn; i++) {
        if (!specialised(&g->nodes[i]))
            continue;
        if (g->nodes[i].op == IR_QCONV2D)
            emit_qconv_kernel(g, i, b);
        else
            emit_qdense_kernel(g, i, b);
    }
}

static void put_u8(Emitter *e, Buf *b, int v)
{
    buf_puts(b, "(const unsigned char *)(const void *)");
    emit_ptr(e, b, v);
}

/* rq_copy of value x (shape s, strides xs from xo) into the output at ys/yo. */
static void put_copy(Emitter *e, Buf *b, int x, int y, const Shape *s, const int64_t *xs,
                     int64_t xo, const int64_t *ys, int64_t yo)
{
    const Graph *g = emit_graph(e);
    int64_t dims[RC_MAX_RANK];
    for (int d = 0; d < s->rank; d++)
        dims[d] = s->dim[d];
    buf_puts(b, "    {\n");
    emit_int_array(b, "        ", "int", "shape", dims, s->rank);
    emit_int_array(b, "        ", "long", "xs", xs, s->rank);
    emit_int_array(b, "        ", "long", "ys", ys, s->rank);
    buf_puts(b, "        rq_copy(");
    put_u8(e, b, x);
    buf_puts(b, ", (unsigned char *)(void *)");
    emit_ptr(e, b, y);
    buf_printf(b, ", %d, %d, shape, xs, %lld, ys, %lld);\n    }\n",
               (int)dtype_size(g->values[y].dtype), s->rank, (long long)xo, (long long)yo);
}

/* outer, channels, inner of a per-channel kernel (as reference_qnn.c's split_axis). */
static void split_axis(const Shape *s, int axis, int64_t c, int64_t *outer, int64_t *inner)
{
    int64_t o = 1, i = 1;
    if (c == 1) {
        *outer = 1;
        *inner = shape_numel(s);
        return;
    }
    for (int d = 0; d < axis; d++)
        o *= s->dim[d];
    for (int d = axis + 1; d < s->rank; d++)
        i *= s->dim[d];
    *outer = o, *inner = i;
}

/* The pointer argument k of n, or NULL when n has fewer inputs. */
static void put_opt(Emitter *e, Buf *b, const Node *n, int k)
{
    if ((int)arrlen(n->in) > k)
        emit_ptr(e, b, n->in[k]);
    else
        buf_puts(b, "NULL");
}

bool emit_qnn_call(Emitter *e, Buf *b, int idx)
{
    const Graph *g = emit_graph(e);
    const Node *n = &g->nodes[idx];
    if (!emit_qnn_owns(g, n))
        return false;
    const Value *y = &g->values[n->out];
    const Value *x = &g->values[n->in[0]];
    const int64_t *xd = x->shape.dim, *yd = y->shape.dim;
    const Attrs *a = &n->a;
    const Window *w = &a->conv;
    int ytype = a->q.requant ? qnn_type_code(y->dtype) : 3;
    if (specialised(n)) { /* emit/kernel_qconv.c */
        buf_printf(b, "    k%d_%s(", idx, n->op == IR_QCONV2D ? "qconv2d" : "qdense");
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            emit_ptr(e, b, n->in[k]);
            buf_puts(b, ", ");
        }
        emit_ptr(e, b, n->out);
        emit_scratch(e, b, idx, "int16_t");
        buf_puts(b, ");\n");
        return true;
    }
    switch (n->op) {
    case IR_QCONV2D:
        buf_puts(b, "    rq_conv2d(");
        put_u8(e, b, n->in[0]);
        buf_puts(b, ", ");
        put_u8(e, b, n->in[1]);
        for (int k = 2; k < 5; k++) {
            buf_puts(b, ", ");
            put_opt(e, b, n, k);
        }
        buf_puts(b, ", ");
        emit_ptr(e, b, n->out);
        buf_printf(b, ", %lld, %lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %d, %d,"
                      " %d, %d, %d, %d, %d, %d, %ld, %d, %ld, %ld);\n",
                   (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3],
                   (long long)yd[1], (long long)yd[2], (long long)yd[3], w->kh, w->kw, w->sh,
                   w->sw, w->dh, w->dw, w->pt, w->pl, w->groups, a->q.xflip, a->q.xoff,
                   a->q.wflip, a->q.woff, a->q.rounding, (long)a->q.yzp, ytype, (long)a->q.ylo,
                   (long)a->q.yhi);
        return true;
    case IR_QMATMUL:
        buf_puts(b, "    rq_matmul(");
        put_u8(e, b, n->in[0]);
        buf_puts(b, ", ");
        put_u8(e, b, n->in[1]);
        for (int k = 2; k < 5; k++) {
            buf_puts(b, ", ");
            put_opt(e, b, n, k);
        }
        buf_puts(b, ", ");
        emit_ptr(e, b, n->out);
        buf_printf(b, ", %d, %d, %d, %d, %d, %d, %d, %d, %ld, %d, %ld, %ld);\n", a->m, a->n,
                   a->k, a->q.xflip, a->q.xoff, a->q.wflip, a->q.woff, a->q.rounding,
                   (long)a->q.yzp, ytype, (long)a->q.ylo, (long)a->q.yhi);
        return true;
    case IR_REQUANTIZE:
    case IR_QUANTIZE:
    case IR_DEQUANTIZE: {
        int64_t c = shape_numel(&g->values[n->in[1]].shape), outer, inner;
        split_axis(&x->shape, a->axis, c, &outer, &inner);
        if (n->op == IR_REQUANTIZE) {
            buf_puts(b, "    rq_requantize(");
            emit_ptr(e, b, n->in[0]);
            buf_printf(b, ", %d, ", qnn_type_code(x->dtype));
            emit_ptr(e, b, n->out);
            buf_printf(b, ", %d, %lld, %lld, %lld, ", qnn_type_code(y->dtype), (long long)outer,
                       (long long)c, (long long)inner);
            emit_ptr(e, b, n->in[1]);
            for (int k = 0; k < 4; k++) {
                /* mult, shift (compute 0), fm (1), dm (2) */
                bool have = a->q.compute == 0 ? k < 2 : k == a->q.compute + 1;
                int in = a->q.compute == 0 ? 2 + k : 2;
                buf_puts(b, ", ");
                if (have)
                    emit_ptr(e, b, n->in[in]);
                else
                    buf_puts(b, "NULL");
            }
            buf_printf(b, ", %d, %d, %ld);\n", a->q.compute, a->q.rounding, (long)a->q.yzp);
        } else if (n->op == IR_QUANTIZE) {
            buf_puts(b, "    rq_quantize(");
            emit_ptr(e, b, n->in[0]);
            buf_puts(b, ", ");
            emit_ptr(e, b, n->out);
            buf_printf(b, ", %d, %lld, %lld, %lld, ", qnn_type_code(y->dtype), (long long)outer,
                       (long long)c, (long long)inner);
            emit_ptr(e, b, n->in[1]);
            buf_puts(b, ", ");
            emit_ptr(e, b, n->in[2]);
            buf_puts(b, ");\n");
        } else {
            buf_puts(b, "    rq_dequantize(");
            emit_ptr(e, b, n->in[0]);
            buf_printf(b, ", %d, ", qnn_type_code(x->dtype));
            emit_ptr(e, b, n->out);
            buf_printf(b, ", %lld, %lld, %lld, ", (long long)outer, (long long)c,
                       (long long)inner);
            emit_ptr(e, b, n->in[1]);
            buf_puts(b, ", ");
            emit_ptr(e, b, n->in[2]);
            buf_puts(b, ");\n");
        }
        return true;
    }
    case IR_POOL2D:
        buf_puts(b, "    rq_pool2d(");
        emit_ptr(e, b, n->in[0]);
        buf_printf(b, ", %d, ", qnn_type_code(x->dtype));
        emit_ptr(e, b, n->out);
        buf_printf(b, ", %lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %d, %d, %d, "
                      "%d, %d, %d);\n",
                   (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3],
                   (long long)yd[2], (long long)yd[3], w->kh, w->kw, w->sh, w->sw, w->dh, w->dw,
                   w->pt, w->pl, w->pb, w->pr, a->is_max, a->count_include_pad);
        return true;
    case IR_COPY: {
        int64_t ys[RC_MAX_RANK];
        shape_strides(&y->shape, ys);
        put_copy(e, b, n->in[0], n->out, &y->shape, a->xstride, a->xoff, ys, 0);
        return true;
    }
    case IR_PAD: {
        int64_t ys[RC_MAX_RANK], xs[RC_MAX_RANK], off = 0;
        shape_strides(&y->shape, ys);
        shape_strides(&x->shape, xs);
        for (int d = 0; d < y->shape.rank; d++)
            off += a->pad_lo[d] * ys[d];
        buf_puts(b, "    rq_fill(");
        emit_ptr(e, b, n->out);
        buf_printf(b, ", %d, %lld, %lld);\n", qnn_type_code(y->dtype),
                   (long long)shape_numel(&y->shape), (long long)qnn_int_param(y->dtype, a->p0));
        put_copy(e, b, n->in[0], n->out, &x->shape, xs, 0, ys, off);
        return true;
    }
    case IR_CONCAT: {
        int64_t ys[RC_MAX_RANK], xs[RC_MAX_RANK], off = 0;
        shape_strides(&y->shape, ys);
        for (int i = 0; i < (int)arrlen(n->in); i++) {
            const Shape *s = &g->values[n->in[i]].shape;
            shape_strides(s, xs);
            put_copy(e, b, n->in[i], n->out, s, xs, 0, ys, off);
            off += s->dim[a->axis] * ys[a->axis];
        }
        return true;
    }
    default:
        return false;
    }
}
