/*
 * emit.c: Graph + Plan -> the C library: NAME.h (the API), NAME.c (kernels and
 * NAME_run) and the constants (NAME_constants.c with const arrays, or the NAME.bin
 * sidecar). Kernels come from runtime/kernels.c, copied section by section; elementwise
 * nodes get a loop nest of their own, with every bound and stride a literal. Names and
 * order come from the graph's order only, so the output is byte-for-byte reproducible.
 */
#include "../compiler/relayc.h"

#include <math.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char relayc_kernels_text[];   /* runtime/kernels.c, embedded at build time */

struct Emitter {
    const Graph *g;
    const Plan *p;
    const EmitOptions *o;
    const char *name;       /* prefix */
    char *upper;            /* prefix in capitals, for macros */
    int *const_id;          /* constant index -> emitted ordinal, or -1 */
    int *const_order;       /* stb_ds: emitted ordinal -> constant index */
    int64_t *const_off;     /* bin mode: offset of each emitted constant in NAME.bin */
    uint32_t checksum;      /* bin mode */
    int64_t bin_size;
};

/* ---- helpers ---- */

/* An exact C literal for a float: a hex float, or INFINITY/NAN. */
static void put_float(Buf *b, float f)
{
    if (isnan(f))
        buf_puts(b, "NAN");
    else if (isinf(f))
        buf_puts(b, f < 0 ? "-INFINITY" : "INFINITY");
    else
        buf_printf(b, "%af", (double)f);
}

static void put_double(Buf *b, double f)
{
    if (isnan(f))
        buf_puts(b, "NAN");
    else if (isinf(f))
        buf_puts(b, f < 0 ? "-INFINITY" : "INFINITY");
    else
        buf_printf(b, "%a", f);
}

static const char *shape_text(const Shape *s)
{
    static _Thread_local char buf[4][160];
    static _Thread_local int k;
    k = (k + 1) & 3;
    return shape_str(s, buf[k], sizeof buf[k]);
}

/* A comment-safe copy of a name from the model: no comment delimiters, no control or
 * non-ASCII bytes, no backslash (a line splice before the newline that may follow) and
 * no "??" (a trigraph, such as ??/ for a backslash, under -std=c99). */
static void put_comment_text(Buf *b, const char *s)
{
    for (size_t i = 0; s[i] && i < 200; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x7f || c == '\\' || (c == '?' && s[i + 1] == '?') ||
            (c == '*' && s[i + 1] == '/') || (c == '/' && s[i + 1] == '*'))
            buf_printf(b, "\\x%02x", c);
        else
            buf_write(b, &s[i], 1);
    }
}

/* A C string literal holding s exactly. */
static void put_string_literal(Buf *b, const char *s)
{
    buf_puts(b, "\"");
    for (size_t i = 0; s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f || c == '?')
            buf_printf(b, "\\%03o", c);
        else
            buf_write(b, &s[i], 1);
    }
    buf_puts(b, "\"");
}

static void put_kernel(Buf *b, const char *kernel)
{
    char marker[64];
    snprintf(marker, sizeof marker, "/*@ %s */\n", kernel);
    const char *start = strstr(relayc_kernels_text, marker);
    if (!start)
        unreachable();
    start += strlen(marker);
    const char *end = strstr(start, "\n/*@ ");
    size_t n = end ? (size_t)(end - start) + 1 : strlen(start);
    buf_write(b, start, n);
    buf_puts(b, "\n");
}

/* Constants over this many bytes are written as string literals of their little-endian
 * bytes (a union with the typed array): compilers read a string literal of megabytes in
 * a second where an initializer list of millions of numbers takes them minutes. */
#define BYTES_ABOVE 1024

/* Large tensors, and floating-point tensors holding a NaN or an infinity (a NAN or
 * INFINITY macro is not a constant initializer for every compiler, and loses NaN
 * payloads), are written as bytes. */
static bool const_as_bytes(const Tensor *t)
{
    if (t->nbytes > BYTES_ABOVE)
        return true;
    int64_t n = shape_numel(&t->shape);
    for (int64_t i = 0; i < n; i++) {
        if (t->dtype == DT_F32 && !isfinite(((const float *)t->data)[i]))
            return true;
        if (t->dtype == DT_F64 && !isfinite(((const double *)t->data)[i]))
            return true;
    }
    return false;
}

/* The declaration of emitted constant k, without storage class or initializer. */
static void put_const_decl(Emitter *e, Buf *b, int k)
{
    const Tensor *t = &e->g->consts[e->const_order[k]];
    int64_t n = shape_numel(&t->shape);
    if (const_as_bytes(t))
        buf_printf(b, "const union { unsigned char bytes[%zu]; %s values[%lld]; } %s_c%d", t->nbytes,
                   dtype_ctype(t->dtype), (long long)n, e->name, k);
    else
        buf_printf(b, "const %s %s_c%d[%lld]", dtype_ctype(t->dtype), e->name, k,
                   (long long)(n ? n : 1));
}

static bool any_bytes_constant(Emitter *e)
{
    if (e->o->constants == CONST_BIN)
        return true; /* the blob holds little-endian data */
    for (int k = 0; k < (int)arrlen(e->const_order); k++)
        if (const_as_bytes(&e->g->consts[e->const_order[k]]))
            return true;
    return false;
}

/* Bytes as a C string literal, broken into lines (adjacent literals concatenate after
 * escapes are read, so a line may end anywhere between characters). */
static void put_bytes_literal(Buf *b, const uint8_t *p, size_t n)
{
    size_t col = 0;
    bool after_octal = false;
    buf_puts(b, "    \"");
    for (size_t i = 0; i < n; i++) {
        unsigned c = p[i];
        if (col >= 96) {
            buf_puts(b, "\"\n    \"");
            col = 0;
            after_octal = false;
        }
        bool digit = c >= '0' && c <= '9';
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '?' && !(after_octal && digit)) {
            char ch = (char)c;
            buf_write(b, &ch, 1);
            col++;
            after_octal = false;
        } else {
            char esc[4];
            int k = 0;
            esc[k++] = '\\';
            if (c >= 64)
                esc[k++] = (char)('0' + (c >> 6));
            if (c >= 8)
                esc[k++] = (char)('0' + ((c >> 3) & 7));
            esc[k++] = (char)('0' + (c & 7));
            buf_write(b, esc, (size_t)k);
            col += (size_t)k;
            after_octal = true;
        }
    }
    buf_puts(b, "\"");
}

/* The C expression for the data of value v inside NAME_run. */
static void put_ptr(Emitter *e, Buf *b, int v)
{
    const Storage *s = &e->p->st[v];
    switch (s->kind) {
    case ST_INPUT: buf_printf(b, "in%d", s->index); break;
    case ST_OUTPUT: buf_printf(b, "out%d", s->index); break;
    case ST_WORKSPACE:
        buf_printf(b, "((%s *)(void *)(ws + %lld))", dtype_ctype(e->g->values[v].dtype),
                   (long long)s->offset);
        break;
    case ST_CONST:
        if (e->o->constants == CONST_BIN)
            buf_printf(b, "((const %s *)(const void *)(cb + %lld))",
                       dtype_ctype(e->g->values[v].dtype), (long long)e->const_off[e->const_id[s->index]]);
        else
            buf_printf(b, "%s_c%d%s", e->name, e->const_id[s->index],
                       const_as_bytes(&e->g->consts[s->index]) ? ".values" : "");
        break;
    default: unreachable();
    }
}

/* ", scratch" for a tuned kernel's call when its node has workspace scratch (Tile.scratch),
 * as a ctype pointer. */
static void put_scratch(Emitter *e, Buf *b, int idx, const char *ctype)
{
    if (e->g->nodes[idx].a.tile.scratch > 0)
        buf_printf(b, ", (%s *)(void *)(ws + %lld)", ctype, (long long)e->p->scratch[idx]);
}

/* For emit/emit_qnn.c. */
void emit_ptr(Emitter *e, Buf *b, int v) { put_ptr(e, b, v); }
void emit_scratch(Emitter *e, Buf *b, int idx, const char *ctype) { put_scratch(e, b, idx, ctype); }
const Graph *emit_graph(const Emitter *e) { return e->g; }

/* ---- elementwise kernels ---- */

/* Writes "static void kN_op(...)" for a unary or binary node: loops over the output with
 * adjacent axes merged where every operand is contiguous across them. */
static void emit_elementwise(Emitter *e, Buf *b, int idx)
{
    const Graph *g = e->g;
    const Node *n = &g->nodes[idx];
    const EwDesc *ew = &ew_table[n->a.ew];
    const Value *y = &g->values[n->out];
    int nin = (int)arrlen(n->in);
    int r = y->shape.rank;
    int64_t st[3][RC_MAX_RANK], dims[RC_MAX_RANK];
    /* strides: output contiguous, inputs broadcast */
    for (int k = 0; k <= nin; k++) {
        const Shape *s = k == 0 ? &y->shape : &g->values[n->in[k - 1]].shape;
        int64_t m = 1;
        for (int d = r - 1; d >= 0; d--) {
            int sd = d - (r - s->rank);
            st[k][d] = (sd < 0 || s->dim[sd] == 1) ? 0 : m;
            if (sd >= 0)
                m *= s->dim[sd];
        }
    }
    /* merge axis d into d+1 when every operand is contiguous across the pair */
    int nd = 0;
    int64_t mst[3][RC_MAX_RANK];
    for (int d = 0; d < r; d++) {
        if (y->shape.dim[d] == 1)
            continue;
        bool merge = nd > 0;
        for (int k = 0; merge && k <= nin; k++)
            merge = mst[k][nd - 1] == st[k][d] * y->shape.dim[d];
        if (merge) {
            dims[nd - 1] *= y->shape.dim[d];
            for (int k = 0; k <= nin; k++)
                mst[k][nd - 1] = st[k][d];
        } else {
            dims[nd] = y->shape.dim[d];
            for (int k = 0; k <= nin; k++)
                mst[k][nd] = st[k][d];
            nd++;
        }
    }
    const char *ti = dtype_ctype(g->values[n->in[0]].dtype), *to = dtype_ctype(y->dtype);
    buf_printf(b, "/* n%d: nodes[%d] %s: %s %s", idx, n->json, n->relay_op ? n->relay_op : "",
               ew->name, shape_text(&y->shape));
    for (int k = 0; k < nin; k++)
        buf_printf(b, "%s%s", k ? ", " : " from ", shape_text(&g->values[n->in[k]].shape));
    buf_puts(b, " */\n");
    buf_printf(b, "static void k%d_%s(const %s *a, ", idx, ew->name, ti);
    if (nin > 1)
        buf_printf(b, "const %s *b, ", dtype_ctype(g->values[n->in[1]].dtype));
    buf_printf(b, "%s *out)\n{\n", to);
    if (strstr(ew->expr, "p0")) {
        buf_printf(b, "    const %s p0 = ", ti);
        if (qnn_type_code(g->values[n->in[0]].dtype) >= 0) /* an integer tensor */
            buf_printf(b, "%lld", (long long)qnn_int_param(g->values[n->in[0]].dtype, n->a.p0));
        else
            put_float(b, n->a.p0);
        buf_puts(b, ";\n");
    }
    if (strstr(ew->expr, "p1")) {
        buf_printf(b, "    const %s p1 = ", ti);
        if (qnn_type_code(g->values[n->in[0]].dtype) >= 0)
            buf_printf(b, "%lld", (long long)qnn_int_param(g->values[n->in[0]].dtype, n->a.p1));
        else
            put_float(b, n->a.p1);
        buf_puts(b, ";\n");
    }
    if (nd > 0) {
        buf_puts(b, "    long ");
        for (int d = 0; d < nd; d++)
            buf_printf(b, "%si%d", d ? ", " : "", d);
        buf_puts(b, ";\n");
    }
    char ind[64] = "    ";
    for (int d = 0; d < nd; d++) {
        buf_printf(b, "%sfor (i%d = 0; i%d < %lld; i%d++)\n", ind, d, d, (long long)dims[d], d);
        strcat(ind, "    ");
    }
    buf_printf(b, "%s{\n", ind);
    static const char *names[] = { "out", "a", "b" };
    static const char *scal[] = { "", "x", "y" };
    for (int k = 0; k <= nin; k++) {
        Buf ix = { 0 };
        for (int d = 0; d < nd; d++) {
            if (mst[k][d] == 0)
                continue;
            if (buf_len(&ix))
                buf_puts(&ix, " + ");
            if (mst[k][d] == 1)
                buf_printf(&ix, "i%d", d);
            else
                buf_printf(&ix, "i%d * %lld", d, (long long)mst[k][d]);
        }
        if (!buf_len(&ix))
            buf_puts(&ix, "0");
        if (k > 0)
            buf_printf(b, "%s    const %s %s = %s[%s];\n", ind,
                       dtype_ctype(g->values[n->in[k - 1]].dtype), scal[k], names[k], buf_cstr(&ix));
        else
            buf_printf(b, "%s    %s *o = &out[%s];\n", ind, to, buf_cstr(&ix));
        buf_free(&ix);
    }
    const char *wrapped = emit_qnn_ew_expr(g, n); /* int32 arithmetic that must wrap */
    buf_printf(b, "%s    *o = (%s)(%s);\n%s}\n}\n\n", ind, to, wrapped ? wrapped : ew->expr, ind);
}

/* ---- the run function ---- */

void emit_int_array(Buf *b, const char *ind, const char *type, const char *name, const int64_t *v,
                    int n)
{
    buf_printf(b, "%sstatic const %s %s[] = { ", ind, type, name);
    if (n == 0)
        buf_puts(b, "0");
    for (int i = 0; i < n; i++)
        buf_printf(b, "%s%lld", i ? ", " : "", (long long)v[i]);
    buf_puts(b, " };\n");
}

/* A block that copies value x (shape s, strides xs from offset xo) into y at yo/ys. */
static void put_copy(Emitter *e, Buf *b, int x, const char *y, const Shape *s, const int64_t *xs,
                     int64_t xo, const int64_t *ys, int64_t yo)
{
    int64_t dims[RC_MAX_RANK];
    for (int d = 0; d < s->rank; d++)
        dims[d] = s->dim[d];
    buf_puts(b, "    {\n");
    emit_int_array(b, "    ", "int", "shape", dims, s->rank);
    emit_int_array(b, "    ", "long", "xs", xs, s->rank);
    emit_int_array(b, "    ", "long", "ys", ys, s->rank);
    buf_puts(b, "    rk_copy(");
    put_ptr(e, b, x);
    buf_printf(b, ", %s, %d, shape, xs, %lld, ys, %lld);\n    }\n", y, s->rank, (long long)xo,
               (long long)yo);
}

static void emit_call(Emitter *e, Buf *b, int idx)
{
    const Graph *g = e->g;
    const Node *n = &g->nodes[idx];
    const Value *y = &g->values[n->out];
    const Value *x = &g->values[n->in[0]];
    const int64_t *xd = x->shape.dim, *yd = y->shape.dim;
    const Attrs *a = &n->a;
    const Window *w = &a->conv;
    Buf out = { 0 };
    put_ptr(e, &out, n->out);
    const char *o = buf_cstr(&out);
    buf_printf(b, "    /* n%d: nodes[%d] %s -> %s %s */\n", idx, n->json,
               n->relay_op ? n->relay_op : "", dtype_name(y->dtype), shape_text(&y->shape));
    if (emit_qnn_call(e, b, idx)) { /* integer kernels: emit/emit_qnn.c */
        buf_free(&out);
        return;
    }
    switch (n->op) {
    case IR_CONV2D:
    case IR_MATMUL:
        if (a->tile.kind) { /* a tuned kernel (emit/kernel_conv2d.c, emit/kernel_dense.c) */
            buf_printf(b, "    k%d_%s(", idx, n->op == IR_CONV2D ? "conv2d" : "dense");
            for (int k = 0; k < (int)arrlen(n->in); k++) {
                put_ptr(e, b, n->in[k]);
                buf_puts(b, ", ");
            }
            buf_puts(b, o);
            put_scratch(e, b, idx, "float");
            buf_puts(b, ");\n");
            break;
        }
        if (n->op == IR_MATMUL) {
            buf_puts(b, "    rk_matmul(");
            put_ptr(e, b, n->in[0]);
            buf_puts(b, ", ");
            put_ptr(e, b, n->in[1]);
            buf_printf(b, ", %s, %d, %d, %d, %d, %d, %d, %lld, %lld);\n", o, a->batch, a->m, a->n,
                       a->k, a->ta, a->tb, (long long)a->sa, (long long)a->sb);
            break;
        }
        buf_puts(b, "    rk_conv2d(");
        put_ptr(e, b, n->in[0]);
        buf_puts(b, ", ");
        put_ptr(e, b, n->in[1]);
        buf_puts(b, ", ");
        if (a->bias)
            put_ptr(e, b, n->in[a->bias]);
        else
            buf_puts(b, "NULL");
        buf_printf(b, ", %s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %d, %d, %d);\n",
                   o, (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3],
                   (long long)yd[1], (long long)yd[2], (long long)yd[3], w->kh, w->kw, w->sh,
                   w->sw, w->dh, w->dw, w->pt, w->pl, w->groups);
        break;
    case IR_POOL2D:
        buf_puts(b, "    rk_pool2d(");
        put_ptr(e, b, n->in[0]);
        buf_printf(b, ", %s, %lld, %lld, %lld, %lld, %lld, %lld, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d, %d);\n",
                   o, (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3],
                   (long long)yd[2], (long long)yd[3], w->kh, w->kw, w->sh, w->sw, w->dh, w->dw,
                   w->pt, w->pl, w->pb, w->pr, a->is_max, a->count_include_pad);
        break;
    case IR_ADAPTIVE_AVG_POOL2D:
        buf_puts(b, "    rk_adaptive_avg_pool2d(");
        put_ptr(e, b, n->in[0]);
        buf_printf(b, ", %s, %lld, %lld, %lld, %lld, %lld, %lld);\n", o, (long long)xd[0],
                   (long long)xd[1], (long long)xd[2], (long long)xd[3], (long long)yd[2],
                   (long long)yd[3]);
        break;
    case IR_SOFTMAX: {
        int64_t outer = 1, inner = 1;
        for (int d = 0; d < a->axis; d++)
            outer *= xd[d];
        for (int d = a->axis + 1; d < x->shape.rank; d++)
            inner *= xd[d];
        buf_puts(b, "    rk_softmax(");
        put_ptr(e, b, n->in[0]);
        buf_printf(b, ", %s, %lld, %lld, %lld, %d);\n", o, (long long)outer,
                   (long long)xd[a->axis], (long long)inner, a->log);
        break;
    }
    case IR_REDUCE: {
        int64_t red[RC_MAX_RANK];
        for (int d = 0; d < x->shape.rank; d++)
            red[d] = a->reduced[d];
        buf_puts(b, "    {\n");
        emit_int_array(b, "    ", "int", "shape", xd, x->shape.rank);
        emit_int_array(b, "    ", "int", "reduced", red, x->shape.rank);
        buf_puts(b, "    rk_reduce(");
        put_ptr(e, b, n->in[0]);
        buf_printf(b, ", %s, %d, shape, reduced, %d);\n    }\n", o, x->shape.rank, a->reduce_kind);
        break;
    }
    case IR_COPY: {
        int64_t ys[RC_MAX_RANK];
        shape_strides(&y->shape, ys);
        put_copy(e, b, n->in[0], o, &y->shape, a->xstride, a->xoff, ys, 0);
        break;
    }
    case IR_PAD: {
        int64_t ys[RC_MAX_RANK], xs[RC_MAX_RANK], off = 0;
        shape_strides(&y->shape, ys);
        shape_strides(&x->shape, xs);
        for (int d = 0; d < y->shape.rank; d++)
            off += a->pad_lo[d] * ys[d];
        buf_printf(b, "    rk_fill(%s, %lld, ", o, (long long)shape_numel(&y->shape));
        put_float(b, a->p0);
        buf_puts(b, ");\n");
        put_copy(e, b, n->in[0], o, &x->shape, xs, 0, ys, off);
        break;
    }
    case IR_CONCAT: {
        int64_t ys[RC_MAX_RANK], xs[RC_MAX_RANK], off = 0;
        shape_strides(&y->shape, ys);
        for (int i = 0; i < (int)arrlen(n->in); i++) {
            const Shape *s = &g->values[n->in[i]].shape;
            shape_strides(s, xs);
            put_copy(e, b, n->in[i], o, s, xs, 0, ys, off);
            off += s->dim[a->axis] * ys[a->axis];
        }
        break;
    }
    case IR_UNARY:
    case IR_BINARY:
        buf_printf(b, "    k%d_%s(", idx, ew_table[a->ew].name);
        for (int k = 0; k < (int)arrlen(n->in); k++) {
            put_ptr(e, b, n->in[k]);
            buf_puts(b, ", ");
        }
        buf_printf(b, "%s);\n", o);
        break;
    case IR_RESHAPE:
        buf_puts(b, "    /* a view: no code */\n");
        break;
    default:
        unreachable();
    }
    buf_free(&out);
}

/* ---- the header ---- */

static void put_signature(Emitter *e, Buf *b)
{
    const Graph *g = e->g;
    buf_printf(b, "int %s_run(", e->name);
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "const %s *in%d, ", dtype_ctype(g->values[g->inputs[i]].dtype), i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "%s *out%d, ", dtype_ctype(g->values[g->outputs[i]].dtype), i);
    buf_puts(b, "void *workspace");
    if (e->o->constants == CONST_BIN)
        buf_puts(b, ", const void *constants");
    buf_puts(b, ")");
}

static void put_io_comment(Emitter *e, Buf *b, int v, const char *what, int i)
{
    const Value *x = &e->g->values[v];
    buf_printf(b, " *   %s%d  %s %s", what, i, dtype_name(x->dtype), shape_text(&x->shape));
    if (x->name) {
        buf_puts(b, "  \"");
        put_comment_text(b, x->name);
        buf_puts(b, "\"");
    }
    buf_puts(b, "\n");
}

static void emit_header(Emitter *e, Buf *b)
{
    const Graph *g = e->g;
    const char *N = e->name, *U = e->upper;
    buf_printf(b, "/*\n * %s.h: generated by relayc %s. Do not edit.\n", N, RELAYC_VERSION);
    buf_puts(b, " * Model: ");
    put_comment_text(b, e->o->model_file ? e->o->model_file : "?");
    buf_puts(b, " (TVM ");
    put_comment_text(b, g->version[0] ? g->version : "?"); /* the file's tvm_version string */
    buf_puts(b, "), function ");
    put_comment_text(b, g->function ? g->function : "?");
    buf_puts(b, "\n * Options: ");
    put_comment_text(b, e->o->options ? e->o->options : "");
    buf_printf(b, "\n *\n * Inputs, in argument order:\n");
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        put_io_comment(e, b, g->inputs[i], "in", i);
    buf_printf(b, " * Outputs, in argument order:\n");
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        put_io_comment(e, b, g->outputs[i], "out", i);
    buf_printf(b, " */\n#ifndef %s_H\n#define %s_H\n\n", U, U);
    if (!e->o->jit)
        buf_puts(b, "#include <stddef.h>\n#include <stdint.h>\n\n");
    buf_puts(b, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    buf_printf(b, "/* Bytes of scratch memory %s_run needs, and the alignment it must have. */\n", N);
    buf_printf(b, "#define %s_WORKSPACE_SIZE %lld\n", U, (long long)e->p->workspace);
    buf_printf(b, "#define %s_WORKSPACE_ALIGN %d\n", U, RC_WORKSPACE_ALIGN);
    buf_printf(b, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", U,
               (int)arrlen(g->inputs), U, (int)arrlen(g->outputs));
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "#define %s_INPUT%d_SIZE %lld /* elements */\n", U, i,
                   (long long)shape_numel(&g->values[g->inputs[i]].shape));
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "#define %s_OUTPUT%d_SIZE %lld /* elements */\n", U, i,
                   (long long)shape_numel(&g->values[g->outputs[i]].shape));
    if (e->o->constants == CONST_BIN) {
        buf_printf(b, "/* Bytes of %s.bin, which must be loaded at a %d-byte aligned address. */\n", N, 16);
        buf_printf(b, "#define %s_CONSTANTS_SIZE %lld\n", U, (long long)e->bin_size);
    }
    buf_printf(b, "\n/* Status codes of %s_run. */\n", N);
    buf_printf(b, "#define %s_OK 0\n#define %s_ERR_NULL %d /* a NULL pointer */\n", U, U, RC_ERR_NULL);
    buf_printf(b, "#define %s_ERR_ALIGN %d /* a pointer not aligned to its element type (the workspace: to %s_WORKSPACE_ALIGN) */\n",
               U, RC_ERR_ALIGN, U);
    if (any_bytes_constant(e))
        buf_printf(b, "#define %s_ERR_BYTE_ORDER %d /* a big-endian machine: the constants are little-endian */\n",
                   U, RC_ERR_BYTE_ORDER);
    if (e->o->constants == CONST_BIN) {
        buf_printf(b, "#define %s_ERR_CONSTANTS %d /* the constants blob has a wrong header */\n", U, RC_ERR_CONSTANTS);
        buf_printf(b, "#define %s_ERR_CHECKSUM %d /* the constants blob's data does not match its checksum */\n", U, RC_ERR_CHECKSUM);
    }
    buf_printf(b, "\n/*\n * Runs the model. Inputs and outputs are dense, C order; the workspace holds\n"
                  " * %s_WORKSPACE_SIZE bytes (NULL is accepted when that is 0) and belongs to the\n"
                  " * call. No allocation, no global state: calls with distinct workspaces may run\n"
                  " * concurrently. Returns %s_OK, or a status code above.\n */\n", U, U);
    put_signature(e, b);
    buf_puts(b, ";\n\n");
    if (e->o->constants == CONST_BIN)
        buf_printf(b, "/*\n * Checks a loaded %s.bin: header and checksum of all its data. %s_run checks\n"
                      " * both on every call; compile %s.c with -D%s_CONSTANTS_CHECKED to have it check\n"
                      " * only the header, once this function has passed after loading the blob.\n */\n"
                      "int %s_check_constants(const void *constants);\n\n", N, N, N, U, N);
    buf_printf(b, "/* A description of each input and output, for generic harnesses. */\n");
    buf_printf(b, "typedef struct {\n    const char *name;     /* Relay name (\"\" when none) */\n"
                  "    const char *dtype;    /* \"float32\", \"int8\", ... */\n"
                  "    int rank;\n    int64_t shape[%d];\n    size_t bytes;\n} %s_tensor_info;\n",
               RC_MAX_RANK, N);
    buf_printf(b, "extern const %s_tensor_info %s_inputs[%d];\n", N, N,
               arrlen(g->inputs) ? (int)arrlen(g->inputs) : 1);
    buf_printf(b, "extern const %s_tensor_info %s_outputs[%d];\n", N, N,
               arrlen(g->outputs) ? (int)arrlen(g->outputs) : 1);
    buf_printf(b, "/* %s_run with inputs and outputs as arrays of pointers (constants: the\n"
                  " * blob in bin mode, ignored otherwise). */\n", N);
    buf_printf(b, "int %s_run_generic(const void *const *inputs, void *const *outputs, void *workspace,\n"
                  "    const void *constants);\n", N);
    buf_puts(b, "\n#ifdef __cplusplus\n}\n#endif\n\n");
    buf_printf(b, "#endif /* %s_H */\n", U);
}

/* ---- constants ---- */

static void emit_constants_c(Emitter *e, Buf *b)
{
    const Graph *g = e->g;
    const char *N = e->name, *U = e->upper;
    buf_printf(b, "/* %s_constants.c: generated by relayc %s. Do not edit.\n"
                  " * The model's constants, exact. Define %s_CONST_ATTR to place them\n"
                  " * (e.g. __attribute__((section(\".flash\"), aligned(16)))). */\n",
               N, RELAYC_VERSION, U);
    buf_puts(b, "#include <math.h>\n#include <stdint.h>\n\n");
    /* x86 kernels read packed weights a cache line (64 bytes) at a time: a line-aligned
     * array keeps each of those loads within one line */
    int align = g->target == TARGET_X86_64_AVX2 || g->target == TARGET_X86_64_AVX512 ? 64 : 16;
    buf_printf(b, "#ifndef %s_CONST_ATTR\n#if defined(__GNUC__) || defined(__TINYC__)\n"
                  "#define %s_CONST_ATTR __attribute__((aligned(%d)))\n#else\n#define %s_CONST_ATTR\n"
                  "#endif\n#endif\n\n", U, U, align, U);
    buf_puts(b, "#ifdef __GNUC__\n/* large constants are string literals of their bytes */\n"
                "#pragma GCC diagnostic ignored \"-Woverlength-strings\"\n#endif\n\n");
    for (int k = 0; k < (int)arrlen(e->const_order); k++) {
        const Tensor *t = &g->consts[e->const_order[k]];
        int64_t n = shape_numel(&t->shape);
        buf_printf(b, "/* %s %s%s */\n", dtype_name(t->dtype), shape_text(&t->shape),
                   const_as_bytes(t) ? ", little-endian bytes" : "");
        buf_printf(b, "%s_CONST_ATTR ", U);
        put_const_decl(e, b, k);
        if (const_as_bytes(t)) {
            buf_puts(b, " = {\n");
            put_bytes_literal(b, t->data, t->nbytes);
            buf_puts(b, "\n};\n");
            continue;
        }
        buf_puts(b, " = {");
        for (int64_t i = 0; i < n; i++) {
            buf_puts(b, i % 8 == 0 ? "\n    " : " ");
            switch (t->dtype) {
            case DT_F32: put_float(b, ((const float *)t->data)[i]); break;
            case DT_F64: put_double(b, ((const double *)t->data)[i]); break;
            case DT_I8: buf_printf(b, "%d", ((const int8_t *)t->data)[i]); break;
            case DT_U8:
            case DT_BOOL: buf_printf(b, "%u", ((const uint8_t *)t->data)[i]); break;
            case DT_I32: buf_printf(b, "%ld", (long)((const int32_t *)t->data)[i]); break;
            case DT_I16: buf_printf(b, "%d", ((const int16_t *)t->data)[i]); break;
            case DT_I64: {
                int64_t v = ((const int64_t *)t->data)[i];
                if (v == INT64_MIN)
                    buf_puts(b, "INT64_MIN");
                else
                    buf_printf(b, "INT64_C(%lld)", (long long)v);
                break;
            }
            default: unreachable();
            }
            buf_puts(b, ",");
        }
        if (n == 0)
            buf_puts(b, " 0");
        buf_puts(b, "\n};\n");
    }
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* NAME.bin: header, offset table, then each tensor at a multiple of RC_BIN_ALIGN. */
static void layout_bin(Emitter *e, Buf *b)
{
    const Graph *g = e->g;
    int n = (int)arrlen(e->const_order);
    int64_t at = RC_BIN_HEADER + 8 * (int64_t)n;
    at = (at + RC_BIN_ALIGN - 1) / RC_BIN_ALIGN * RC_BIN_ALIGN;
    e->const_off = xcalloc((size_t)n + 1, sizeof(int64_t));
    for (int k = 0; k < n; k++) {
        e->const_off[k] = at;
        at += (int64_t)g->consts[e->const_order[k]].nbytes;
        at = (at + RC_BIN_ALIGN - 1) / RC_BIN_ALIGN * RC_BIN_ALIGN;
    }
    e->bin_size = at;
    uint8_t *data = xcalloc((size_t)at, 1);
    memcpy(data, RC_BIN_MAGIC, 8);
    put_u32(data + 8, RC_BIN_VERSION);
    put_u32(data + 12, RC_BIN_HEADER);
    put_u64(data + 16, (uint64_t)at);
    put_u32(data + 28, (uint32_t)n);
    for (int k = 0; k < n; k++) {
        const Tensor *t = &g->consts[e->const_order[k]];
        put_u64(data + RC_BIN_HEADER + 8 * k, (uint64_t)e->const_off[k]);
        if (t->nbytes)
            memcpy(data + e->const_off[k], t->data, t->nbytes); /* little-endian host */
    }
    e->checksum = rc_checksum(data + RC_BIN_HEADER, (size_t)(at - RC_BIN_HEADER));
    put_u32(data + 24, e->checksum);
    if (b)
        buf_write(b, data, (size_t)at);
    free(data);
}

/* ---- the source ---- */

static void emit_source(Emitter *e, Buf *b)
{
    const Graph *g = e->g;
    const Plan *p = e->p;
    const char *N = e->name, *U = e->upper;
    bool bin = e->o->constants == CONST_BIN;
    int nn = (int)arrlen(g->nodes);
    buf_printf(b, "/* %s.c: generated by relayc %s. Do not edit. */\n", N, RELAYC_VERSION);
    if (!e->o->jit)
        buf_printf(b, "#include \"%s.h\"\n\n#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n\n", N);
    if (g->target == TARGET_X86_64_AVX512)
        /* gcc's -march for AVX-512 cores vectorises with 256 bits (prefer-vector-width=256),
         * half the width the kernels are blocked for. A hint only: other compilers skip it. */
        buf_puts(b, "#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n"
                    "#pragma GCC target(\"prefer-vector-width=512\")\n#endif\n\n");
    /* kernels, in kernels.c order */
    static const char *kernels[] = { "rk_conv2d", "rk_matmul", "rk_pool2d", "rk_adaptive_avg_pool2d",
                                     "rk_softmax", "rk_reduce", "rk_copy", "rk_fill" };
    static const IrOp users[][3] = {
        { IR_CONV2D, IR_CONV2D, IR_CONV2D },   { IR_MATMUL, IR_MATMUL, IR_MATMUL },
        { IR_POOL2D, IR_POOL2D, IR_POOL2D },
        { IR_ADAPTIVE_AVG_POOL2D, IR_ADAPTIVE_AVG_POOL2D, IR_ADAPTIVE_AVG_POOL2D },
        { IR_SOFTMAX, IR_SOFTMAX, IR_SOFTMAX }, { IR_REDUCE, IR_REDUCE, IR_REDUCE },
        { IR_COPY, IR_PAD, IR_CONCAT },         { IR_PAD, IR_PAD, IR_PAD },
    };
    for (int k = 0; k < 8; k++) {
        bool used = false;
        for (int i = 0; i < nn && !used; i++)
            for (int u = 0; u < 3; u++)
                used = used || (g->nodes[i].op == users[k][u] && !emit_qnn_owns(g, &g->nodes[i]) &&
                                !g->nodes[i].a.tile.kind);
        if (used)
            put_kernel(b, kernels[k]);
    }
    emit_qnn_kernels(g, b);
    for (int i = 0; i < nn; i++)
        if (g->nodes[i].op == IR_UNARY || g->nodes[i].op == IR_BINARY)
            emit_elementwise(e, b, i);
    for (int i = 0; i < nn; i++) {
        if (g->nodes[i].op == IR_CONV2D && g->nodes[i].a.tile.kind)
            emit_conv2d_kernel(g, i, b);
        if (g->nodes[i].op == IR_MATMUL && g->nodes[i].a.tile.kind)
            emit_dense_kernel(g, i, b);
    }
    if (!bin)
        for (int k = 0; k < (int)arrlen(e->const_order); k++) {
            buf_puts(b, "extern ");
            put_const_decl(e, b, k);
            buf_puts(b, ";\n");
        }
    /* descriptors */
    for (int io = 0; io < 2; io++) {
        const int *vals = io ? g->outputs : g->inputs;
        int cnt = (int)arrlen(vals);
        buf_printf(b, "\nconst %s_tensor_info %s_%s[%d] = {\n", N, N, io ? "outputs" : "inputs",
                   cnt ? cnt : 1);
        for (int i = 0; i < cnt; i++) {
            const Value *x = &g->values[vals[i]];
            buf_puts(b, "    { ");
            put_string_literal(b, x->name && !io ? x->name : "");
            buf_printf(b, ", \"%s\", %d, {", dtype_name(x->dtype), x->shape.rank);
            for (int d = 0; d < RC_MAX_RANK; d++)
                buf_printf(b, "%s%lld", d ? ", " : " ", (long long)x->shape.dim[d]);
            buf_printf(b, " }, %lld },\n",
                       (long long)(shape_numel(&x->shape) * (int64_t)dtype_size(x->dtype)));
        }
        if (cnt == 0)
            buf_puts(b, "    { \"\", \"\", 0, { 0 }, 0 },\n");
        buf_puts(b, "};\n");
    }
    if (bin) {
        buf_printf(b, "\n/* Checks the header of %s.bin, and with full its data's checksum. */\n", N);
        buf_printf(b, "static int check_constants(const unsigned char *p, int full)\n{\n"
                      "    static const char magic[8] = { 'R', 'E', 'L', 'A', 'Y', 'C', 'W', '1' };\n"
                      "    uint32_t a = 1, s = 0, want = 0x%08lxu;\n    long i;\n"
                      "    for (i = 0; i < 8; i++)\n        if ((char)p[i] != magic[i])\n"
                      "            return %s_ERR_CONSTANTS;\n"
                      "    if (p[8] != %d || p[9] || p[10] || p[11] || p[12] != %d || p[13] || p[14] || p[15])\n"
                      "        return %s_ERR_CONSTANTS;\n"
                      "    for (i = 0; i < 8; i++)\n"
                      "        if (p[16 + i] != (unsigned char)((%lldULL >> (8 * i)) & 0xff))\n"
                      "            return %s_ERR_CONSTANTS;\n"
                      "    if ((uint32_t)(p[24] | (uint32_t)p[25] << 8 | (uint32_t)p[26] << 16 | (uint32_t)p[27] << 24) != want)\n"
                      "        return %s_ERR_CONSTANTS;\n"
                      "    if (!full)\n        return 0;\n"
                      "    for (i = %d; i < %lld; i += 4) {\n"
                      "        a += (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 | (uint32_t)p[i + 3] << 24;\n"
                      "        s += a;\n    }\n"
                      "    return (a ^ (s << 16 | s >> 16)) == want ? 0 : %s_ERR_CHECKSUM;\n}\n",
                   (unsigned long)e->checksum, U, RC_BIN_VERSION, RC_BIN_HEADER, U,
                   (long long)e->bin_size, U, U, RC_BIN_HEADER, (long long)e->bin_size, U);
        buf_printf(b, "\nint %s_check_constants(const void *constants)\n{\n"
                      "    if (!constants)\n        return %s_ERR_NULL;\n"
                      "    if ((uintptr_t)constants %% 16)\n        return %s_ERR_ALIGN;\n"
                      "    return check_constants((const unsigned char *)constants, 1);\n}\n", N, U, U);
    }
    /* NAME_run */
    buf_puts(b, "\n");
    put_signature(e, b);
    buf_puts(b, "\n{\n");
    if (p->workspace > 0)
        buf_puts(b, "    unsigned char *ws = (unsigned char *)workspace;\n");
    else
        buf_puts(b, "    (void)workspace; /* nothing to keep */\n");
    if (bin)
        buf_puts(b, "    const unsigned char *cb = (const unsigned char *)constants;\n");
    int nc = (int)arrlen(e->const_order);
    if (bin)
        buf_puts(b, "    int status;\n");
    /* checks */
    buf_puts(b, "    if (");
    int nchk = 0;
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "%s!in%d", nchk++ ? " || " : "", i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "%s!out%d", nchk++ ? " || " : "", i);
    if (p->workspace > 0)
        buf_printf(b, "%s!workspace", nchk++ ? " || " : "");
    if (bin)
        buf_printf(b, "%s!constants", nchk++ ? " || " : "");
    if (!nchk)
        buf_puts(b, "0");
    buf_printf(b, ")\n        return %s_ERR_NULL;\n", U);
    buf_puts(b, "    if (");
    nchk = 0;
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        if (dtype_size(g->values[g->inputs[i]].dtype) > 1)
            buf_printf(b, "%s(uintptr_t)in%d %% sizeof *in%d", nchk++ ? " || " : "", i, i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        if (dtype_size(g->values[g->outputs[i]].dtype) > 1)
            buf_printf(b, "%s(uintptr_t)out%d %% sizeof *out%d", nchk++ ? " || " : "", i, i);
    if (p->workspace > 0)
        buf_printf(b, "%s(uintptr_t)workspace %% %s_WORKSPACE_ALIGN", nchk++ ? " || " : "", U);
    if (bin)
        buf_printf(b, "%s(uintptr_t)constants %% 16", nchk++ ? " || " : "");
    if (!nchk)
        buf_puts(b, "0");
    buf_printf(b, ")\n        return %s_ERR_ALIGN;\n", U);
    if (any_bytes_constant(e))
        buf_printf(b, "    {\n        /* the constants are stored little-endian */\n"
                      "        static const union { uint32_t u; unsigned char c[4]; } probe = { 1u };\n"
                      "        if (!probe.c[0])\n            return %s_ERR_BYTE_ORDER;\n    }\n", U);
    if (bin)
        buf_printf(b, "#ifdef %s_CONSTANTS_CHECKED\n    status = check_constants(cb, 0);\n#else\n"
                      "    status = check_constants(cb, 1);\n#endif\n    if (status)\n        return status;\n", U);
    (void)nc;
    for (int i = 0; i < nn; i++)
        emit_call(e, b, i);
    for (int k = 0; k < (int)arrlen(p->copy_outputs); k++) {
        int oi = p->copy_outputs[k];
        int v = g->outputs[oi];
        buf_printf(b, "    { /* output %d is a copy */\n        long i;\n        for (i = 0; i < %lld; i++)\n"
                      "            out%d[i] = ", oi, (long long)shape_numel(&g->values[v].shape), oi);
        put_ptr(e, b, v);
        buf_puts(b, "[i];\n    }\n");
    }
    buf_printf(b, "    return %s_OK;\n}\n", U);
    /* the generic entry point */
    buf_printf(b, "\nint %s_run_generic(const void *const *inputs, void *const *outputs, void *workspace,\n"
                  "    const void *constants)\n{\n", N);
    if (!bin)
        buf_puts(b, "    (void)constants;\n");
    if (!arrlen(g->inputs))
        buf_puts(b, "    (void)inputs;\n");
    buf_printf(b, "    if (%s!outputs)\n        return %s_ERR_NULL;\n",
               arrlen(g->inputs) ? "!inputs || " : "", U);
    buf_printf(b, "    return %s_run(", N);
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "(const %s *)inputs[%d], ", dtype_ctype(g->values[g->inputs[i]].dtype), i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "(%s *)outputs[%d], ", dtype_ctype(g->values[g->outputs[i]].dtype), i);
    buf_printf(b, "workspace%s);\n}\n", bin ? ", constants" : "");
}

void emit_library(const Graph *g, const Plan *p, const EmitOptions *o, Emitted *out)
{
    Emitter e;
    memset(&e, 0, sizeof e);
    memset(out, 0, sizeof *out);
    e.g = g, e.p = p, e.o = o, e.name = o->name;
    e.upper = xstrdup(o->name);
    for (char *c = e.upper; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    /* constants in order of first use */
    int ncs = (int)arrlen(g->consts);
    e.const_id = xmalloc(((size_t)ncs + 1) * sizeof(int));
    for (int c = 0; c < ncs; c++)
        e.const_id[c] = -1;
    for (int i = 0; i <= (int)arrlen(g->nodes); i++) {
        const int *vals = i < (int)arrlen(g->nodes) ? g->nodes[i].in : g->outputs;
        for (int k = 0; k < (int)arrlen(vals); k++) {
            const Storage *s = &p->st[vals[k]];
            if (s->kind == ST_CONST && e.const_id[s->index] < 0) {
                e.const_id[s->index] = (int)arrlen(e.const_order);
                arrput(e.const_order, s->index);
            }
        }
    }
    for (int k = 0; k < (int)arrlen(e.const_order); k++)
        out->constants_size += (int64_t)g->consts[e.const_order[k]].nbytes;
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        out->io_bytes += shape_numel(&g->values[g->inputs[i]].shape) *
                         (int64_t)dtype_size(g->values[g->inputs[i]].dtype);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        out->io_bytes += shape_numel(&g->values[g->outputs[i]].shape) *
                         (int64_t)dtype_size(g->values[g->outputs[i]].dtype);
    if (o->constants == CONST_BIN)
        layout_bin(&e, &out->constants);
    else
        emit_constants_c(&e, &out->constants);
    emit_header(&e, &out->header);
    if (o->jit) /* one translation unit: the header's declarations, then the source */
        buf_write(&out->source, out->header.data, buf_len(&out->header));
    emit_source(&e, &out->source);
    free(e.upper);
    free(e.const_id);
    free(e.const_off);
    arrfree(e.const_order);
}

void emitted_free(Emitted *e)
{
    buf_free(&e->header);
    buf_free(&e->source);
    buf_free(&e->constants);
}
