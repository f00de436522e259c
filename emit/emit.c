/*
 * emit.c: Graph + Plan -> the C library: NAME.h (the API), NAME.c (kernels and
 * NAME_run) and the constants (NAME_constants.c with const arrays, or the NAME.bin
 * sidecar). Kernels come from runtime/kernels.c, copied section by section; elementwise
 * nodes get a loop nest of their own, with every bound and stride a literal. Names and
 * order come from the graph's order only, so the output is byte-for-byte reproducible.
 */
#include "emit.h"

#include <math.h>
#include <stb_ds.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char relayc_kernels_text[];   /* runtime/kernels.c, embedded at build time */
extern const char relayc_kernels_int8_text[]; /* runtime/kernels_int8.c */

typedef struct Emitter {
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
    bool named;             /* workspace offsets are the names of NAME_run's buffer map */
} Emitter;

/* ---- helpers ---- */

/* The test around --target x86-64-avx512's clang tuning attribute (emit_source), the
 * attribute's push and its pop */
#define CLANG_TUNE_IF                                                                         \
    "#if defined(__clang__) && defined(__AVX512F__) && (__clang_major__ >= 13 || "             \
    "(__clang_major__ >= 12 && !defined(__apple_build_version__)))"
#define CLANG_TUNE_PUSH                                                                       \
    "#pragma clang attribute push (__attribute__((target(\"tune=x86-64\"))), apply_to = function)"
#define CLANG_TUNE_POP "#pragma clang attribute pop"

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

/* ---- kernel sections (runtime/kernels.c, runtime/kernels_int8.c) ---- */

/* The marker line of section name in text ("@ NAME" or "@ NAME uses ..."), or NULL. */
static const char *find_section(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *m = strstr(text, "/*@ "); m; m = strstr(m + 4, "/*@ "))
        if (!strncmp(m + 4, name, len) && (m[4 + len] == ' ' || m[4 + len] == '*'))
            return m;
    return NULL;
}

/* Marks section name, and the helper sections its marker names ("uses ..."), used: *used
 * holds their marker lines. False when no kernel file holds the section. */
static bool mark_section(const char *name, const char ***used)
{
    const char *m = find_section(relayc_kernels_text, name);
    if (!m)
        m = find_section(relayc_kernels_int8_text, name);
    if (!m)
        return false;
    for (int i = 0; i < (int)arrlen(*used); i++)
        if ((*used)[i] == m)
            return true;
    arrput(*used, m);
    const char *eol = strchr(m, '\n'), *u = strstr(m, " uses ");
    if (u && u < eol)
        for (const char *h = u + 6; h < eol && *h != '*';) {
            char helper[64];
            size_t n = strcspn(h, " *");
            snprintf(helper, sizeof helper, "%.*s", (int)n, h);
            if (!mark_section(helper, used))
                unreachable(); /* a marker names a section no kernel file holds */
            h += n + (h[n] == ' ');
        }
    return true;
}

/* Marks the helper sections (rk_NAME) that an elementwise expression calls. */
static void mark_expr_sections(const char *expr, const char ***used)
{
    for (const char *h = strstr(expr, "rk_"); h; h = strstr(h + 3, "rk_")) {
        char name[64];
        size_t n = strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789_");
        snprintf(name, sizeof name, "%.*s", (int)n, h);
        if (!mark_section(name, used))
            unreachable(); /* elementwise.def calls a section no kernel file holds */
    }
}

/* Copies the sections whose marker lines are in used, in the order of the kernel files. */
static void put_sections(Buf *b, const char *const *used)
{
    const char *texts[] = { relayc_kernels_text, relayc_kernels_int8_text };
    for (int t = 0; t < 2; t++)
        for (const char *m = strstr(texts[t], "/*@ "); m; m = strstr(m + 4, "/*@ ")) {
            bool want = false;
            for (int i = 0; i < (int)arrlen(used) && !want; i++)
                want = used[i] == m;
            if (!want)
                continue;
            const char *start = strchr(m, '\n') + 1;
            const char *end = strstr(start, "\n/*@ ");
            size_t n = end ? (size_t)(end - start) + 1 : strlen(start);
            buf_write(b, start, n);
            buf_puts(b, "\n");
        }
}

/* ---- parameter structs (runtime/params.def) ---- */

typedef struct {
    const char *type;       /* "Pool2dParams" */
    const char *ctype;      /* "int", "long", "float" */
    const char *name;
    size_t offset;
    bool array;             /* RC_PARAMS_RANK entries */
} ParamField;

static const ParamField param_fields[] = {
#define PARAMS(T)
#define FIELD(T, type, name) { #T, #type, #name, offsetof(T, name), false },
#define ARRAY(T, type, name) { #T, #type, #name, offsetof(T, name), true },
#define END(T)
#include "../runtime/params.def"
#undef PARAMS
#undef FIELD
#undef ARRAY
#undef END
};
#define NFIELDS ((int)(sizeof param_fields / sizeof *param_fields))

/* "typedef struct T { ... } T;" for each parameter struct in types, in params.def order. */
static void put_param_typedefs(Buf *b, const char *const *types)
{
    for (int f = 0; f < NFIELDS; f++) {
        const ParamField *pf = &param_fields[f];
        bool want = false;
        for (int i = 0; i < (int)arrlen(types) && !want; i++)
            want = !strcmp(types[i], pf->type);
        if (!want)
            continue;
        bool first = f == 0 || strcmp(param_fields[f - 1].type, pf->type);
        bool last = f == NFIELDS - 1 || strcmp(param_fields[f + 1].type, pf->type);
        if (first)
            buf_printf(b, "typedef struct %s {\n", pf->type);
        buf_printf(b, "    %s %s%s;\n", pf->ctype, pf->name, pf->array ? "[8]" : "");
        if (last)
            buf_printf(b, "} %s;\n\n", pf->type);
    }
}

static void put_param_value(Buf *b, const ParamField *pf, const unsigned char *p)
{
    if (!strcmp(pf->ctype, "float")) {
        float v;
        memcpy(&v, p, sizeof v);
        put_float_literal(b, v);
    } else if (!strcmp(pf->ctype, "long")) {
        long v;
        memcpy(&v, p, sizeof v);
        buf_printf(b, "%ld", v);
    } else {
        int v;
        memcpy(&v, p, sizeof v);
        buf_printf(b, "%d", v);
    }
}

static size_t param_size(const ParamField *pf)
{
    return !strcmp(pf->ctype, "long") ? sizeof(long) : sizeof(int); /* float: sizeof(int) */
}

static bool bytes_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* "static const T NAME = { .f = v, ... };": the members that are not zero. */
static void put_params(Buf *b, const KCall *k, const char *name)
{
    const unsigned char *base = (const unsigned char *)&k->p;
    int n = 0;
    buf_printf(b, "static const %s %s = {", k->params, name);
    for (int f = 0; f < NFIELDS; f++) {
        const ParamField *pf = &param_fields[f];
        const unsigned char *v = base + pf->offset;
        size_t es = param_size(pf);
        if (strcmp(pf->type, k->params) || bytes_zero(v, es * (pf->array ? RC_PARAMS_RANK : 1)))
            continue;
        buf_printf(b, "%s .%s = ", n++ ? "," : "", pf->name);
        if (!pf->array) {
            put_param_value(b, pf, v);
            continue;
        }
        int len = RC_PARAMS_RANK; /* up to the last entry that is not zero */
        while (len > 1 && bytes_zero(v + (size_t)(len - 1) * es, es))
            len--;
        buf_puts(b, "{ ");
        for (int i = 0; i < len; i++) {
            if (i)
                buf_puts(b, ", ");
            put_param_value(b, pf, v + (size_t)i * es);
        }
        buf_puts(b, " }");
    }
    buf_puts(b, n ? " };\n" : " 0 };\n");
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
    int64_t at = s->offset / (int64_t)dtype_size(e->g->values[v].dtype); /* input, output */
    switch (s->kind) {
    case ST_INPUT:
    case ST_OUTPUT:
        buf_printf(b, at ? "(%s%d + %lld)" : "%s%d", s->kind == ST_INPUT ? "in" : "out", s->index,
                   (long long)at);
        break;
    case ST_WORKSPACE:
        if (e->named)
            buf_printf(b, "((%s *)(void *)(ws + WS_T%d))", dtype_ctype(e->g->values[v].dtype), v);
        else
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
    if (e->g->nodes[idx].a.tile.scratch <= 0)
        return;
    if (e->named)
        buf_printf(b, ", (%s *)(void *)(ws + WS_N%d_ROWS)", ctype, idx);
    else
        buf_printf(b, ", (%s *)(void *)(ws + %lld)", ctype, (long long)e->p->scratch[idx]);
}

/* The expression of an int32 elementwise add, subtract, multiply or negate computed in
 * uint32_t (TVM wraps; C's int overflow is undefined), or NULL for the table's. */
static const char *wrapping_expr(const Graph *g, const Node *n)
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
            put_float_literal(b, n->a.p0);
        buf_puts(b, ";\n");
    }
    if (strstr(ew->expr, "p1")) {
        buf_printf(b, "    const %s p1 = ", ti);
        if (qnn_type_code(g->values[n->in[0]].dtype) >= 0)
            buf_printf(b, "%lld", (long long)qnn_int_param(g->values[n->in[0]].dtype, n->a.p1));
        else
            put_float_literal(b, n->a.p1);
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
    const char *wrapped = wrapping_expr(g, n); /* int32 arithmetic that must wrap */
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

/* The name of node idx's k-th parameter struct (of ncalls). */
static void param_name(char *buf, size_t len, int idx, int k, int ncalls)
{
    if (ncalls == 1)
        snprintf(buf, len, "p%d", idx);
    else
        snprintf(buf, len, "p%d_%d", idx, k);
}

/* The parameter structs of node idx's library calls, at file scope. */
static void emit_params(Emitter *e, Buf *b, int idx)
{
    KCall *calls = ir_calls(e->g, &e->g->nodes[idx]);
    int nc = (int)arrlen(calls);
    for (int k = 0; k < nc; k++) {
        char name[48];
        if (calls[k].kind != KG_LIBRARY || plan_self_copy(e->g, e->p, idx, &calls[k]))
            continue;
        param_name(name, sizeof name, idx, k, nc);
        put_params(b, &calls[k], name);
    }
    arrfree(calls);
}

/* The name of the function a kernel call of node n calls: "rk_pool2d", "k3_conv2d". */
static void put_kernel_name(const Node *n, int idx, const KCall *c, Buf *b)
{
    static const char *const generated[] = {
        [KG_ELEMENTWISE] = "", [KG_CONV2D] = "conv2d", [KG_DENSE] = "dense",
        [KG_QCONV2D] = "qconv2d", [KG_QDENSE] = "qdense", [KG_POOL2D] = "pool2d",
    };
    if (c->kind == KG_LIBRARY)
        buf_puts(b, c->kernel);
    else
        buf_printf(b, "k%d_%s", idx,
                   c->kind == KG_ELEMENTWISE ? ew_table[n->a.ew].name : generated[c->kind]);
}

/* The nodes NAME_run makes kernel calls for (not views, not nodes the plan made free, not
 * nodes without calls), in order: what NAME_PROFILE times. */
static bool profiled(const Emitter *e, int idx)
{
    const Graph *g = e->g;
    if (ir_ops[g->nodes[idx].op].view || plan_elided(g, e->p, idx))
        return false;
    KCall *calls = ir_calls(g, &g->nodes[idx]);
    bool any = arrlen(calls) > 0;
    arrfree(calls);
    return any;
}

/* NAME_profile_calls[k] for node idx: "{ k, idx, "kernels", "relay calls", "output" }".
 * A node of several calls (a concatenate's copies) names each function once, with a
 * count: "rk_copy x3". */
static void put_profile_entry(Emitter *e, Buf *b, int k, int idx)
{
    const Node *n = &e->g->nodes[idx];
    const Value *y = &e->g->values[n->out];
    KCall *calls = ir_calls(e->g, n);
    Buf names = { 0 }, one = { 0 }, src = { 0 };
    for (int i = (int)arrlen(calls) - 1; i >= 0; i--) /* not the copies the plan made free */
        if (plan_self_copy(e->g, e->p, idx, &calls[i]))
            arrdel(calls, i);
    for (int i = 0; i < (int)arrlen(calls); i++) {
        bool seen = false;
        int count = 0;
        for (int j = 0; j < (int)arrlen(calls); j++) {
            bool same = calls[j].kind == calls[i].kind &&
                        (calls[i].kind != KG_LIBRARY || !strcmp(calls[j].kernel, calls[i].kernel));
            seen = seen || (same && j < i);
            count += same;
        }
        if (seen)
            continue;
        buf_free(&one);
        put_kernel_name(n, idx, &calls[i], &one);
        buf_printf(&names, "%s%s", buf_len(&names) ? " + " : "", buf_cstr(&one));
        if (count > 1)
            buf_printf(&names, " x%d", count);
    }
    graph_sources_text(n, &src);
    buf_printf(b, "    { %d, %d, ", k, idx);
    put_string_literal(b, buf_cstr(&names));
    buf_puts(b, ",\n      ");
    put_string_literal(b, buf_cstr(&src));
    buf_printf(b, ", \"%s %s\" },\n", dtype_name(y->dtype), shape_text(&y->shape));
    buf_free(&names);
    buf_free(&one);
    buf_free(&src);
    arrfree(calls);
}

/* Node idx's comment and kernel calls in NAME_run; k is its ordinal among the profiled
 * calls (profiled()), for the NAME_PROF marks around them (prof). */
static void emit_call(Emitter *e, Buf *b, int idx, int prof)
{
    const Graph *g = e->g;
    const Node *n = &g->nodes[idx];
    const Value *y = &g->values[n->out];
    Buf src = { 0 };
    graph_sources_text(n, &src);
    buf_printf(b, "    /* n%d: %s -> %s %s */\n", idx, buf_cstr(&src), dtype_name(y->dtype),
               shape_text(&y->shape));
    buf_free(&src);
    if (ir_ops[n->op].view) {
        buf_puts(b, "    /* a view: no code */\n");
        return;
    }
    if (plan_elided(g, e->p, idx)) {
        buf_puts(b, n->op == IR_CONCAT ? "    /* no code: its operands were written in place */\n"
                                       : "    /* a view of a contiguous slice: no code */\n");
        return;
    }
    KCall *calls = ir_calls(g, n);
    int nc = (int)arrlen(calls);
    if (nc)
        buf_printf(b, "    %s_PROF(%d, 0);\n", e->upper, prof);
    for (int k = 0; k < nc; k++) {
        const KCall *c = &calls[k];
        if (plan_self_copy(g, e->p, idx, c)) {
            buf_printf(b, "    /* operand %d was written in place */\n", c->arg[0]);
            continue;
        }
        if (c->kind != KG_LIBRARY) { /* its own kernel, kIDX_NAME, on every input */
            buf_puts(b, "    ");
            put_kernel_name(n, idx, c, b);
            buf_puts(b, "(");
            for (int i = 0; i < (int)arrlen(n->in); i++) {
                put_ptr(e, b, n->in[i]);
                buf_puts(b, ", ");
            }
            put_ptr(e, b, n->out);
            if (c->kind != KG_ELEMENTWISE)
                put_scratch(e, b, idx, c->kind == KG_QCONV2D || c->kind == KG_QDENSE ? "int16_t"
                                                                                     : "float");
            buf_puts(b, ");\n");
            continue;
        }
        char name[48];
        param_name(name, sizeof name, idx, k, nc);
        buf_printf(b, "    %s(&%s", c->kernel, name);
        for (int i = 0; i < c->narg; i++) {
            buf_puts(b, ", ");
            if (c->arg[i] < 0) {
                buf_puts(b, "NULL");
                continue;
            }
            if (c->bytes)
                buf_puts(b, "(const void *)");
            put_ptr(e, b, n->in[c->arg[i]]);
        }
        buf_puts(b, c->bytes ? ", (void *)" : ", ");
        put_ptr(e, b, n->out);
        buf_puts(b, ");\n");
    }
    if (nc)
        buf_printf(b, "    %s_PROF(%d, 1);\n", e->upper, prof);
    arrfree(calls);
}

/* ---- the header ---- */

/* "int NAME_run(...)", or with prof "int NAME_run_profiled(..., hook, ctx)". */
static void put_signature(Emitter *e, Buf *b, bool prof)
{
    const Graph *g = e->g;
    buf_printf(b, "int %s_run%s(", e->name, prof ? "_profiled" : "");
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "const %s *in%d, ", dtype_ctype(g->values[g->inputs[i]].dtype), i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "%s *out%d, ", dtype_ctype(g->values[g->outputs[i]].dtype), i);
    buf_puts(b, "void *workspace");
    if (e->o->constants == CONST_BIN)
        buf_puts(b, ", const void *constants");
    if (prof)
        buf_printf(b, ",\n    %s_profile_hook hook, void *ctx", e->name);
    buf_puts(b, ")");
}

/* "int NAME_run_generic(...)" and its body; with prof NAME_run_generic_profiled, which
 * passes hook and ctx on. */
static void put_run_generic(Emitter *e, Buf *b, bool prof)
{
    const Graph *g = e->g;
    const char *N = e->name, *P = prof ? "_profiled" : "";
    bool bin = e->o->constants == CONST_BIN;
    buf_printf(b, "\nint %s_run_generic%s(const void *const *inputs, void *const *outputs, void *workspace,\n"
                  "    const void *constants", N, P);
    if (prof)
        buf_printf(b, ", %s_profile_hook hook, void *ctx", N);
    buf_puts(b, ")\n{\n");
    if (!bin)
        buf_puts(b, "    (void)constants;\n");
    if (!arrlen(g->inputs))
        buf_puts(b, "    (void)inputs;\n");
    buf_printf(b, "    if (%s!outputs)\n        return %s_ERR_NULL;\n",
               arrlen(g->inputs) ? "!inputs || " : "", e->upper);
    buf_printf(b, "    return %s_run%s(", N, P);
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "(const %s *)inputs[%d], ", dtype_ctype(g->values[g->inputs[i]].dtype), i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "(%s *)outputs[%d], ", dtype_ctype(g->values[g->outputs[i]].dtype), i);
    buf_printf(b, "workspace%s%s);\n}\n", bin ? ", constants" : "", prof ? ", hook, ctx" : "");
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

/* The profiling API of NAME.h, compiled only with NAME_PROFILE defined. */
static void put_profile_api(Emitter *e, Buf *b)
{
    const char *N = e->name, *U = e->upper;
    int nprof = 0;
    for (int i = 0; i < (int)arrlen(e->g->nodes); i++)
        nprof += profiled(e, i);
    buf_printf(b, "\n/*\n * Profiling: compile %s.c (and code including %s.h) with -D%s_PROFILE to get\n"
                  " * %s_run_profiled, which runs the model as %s_run does and calls\n"
                  " * hook(ctx, call, 0) just before each of its %s_PROFILE_CALLS kernel calls and\n"
                  " * hook(ctx, call, 1) just after it; call describes the kernel call (index in run\n"
                  " * order, the function, the Relay calls it computes, its output). The hook\n"
                  " * times the calls as the platform allows (clock_gettime, a cycle counter); ctx is\n"
                  " * passed through. A NULL hook is never called. Without %s_PROFILE none of this\n"
                  " * is compiled and %s_run is the same code.\n */\n", N, N, U, N, N, U, U, N);
    buf_printf(b, "#ifdef %s_PROFILE\n#define %s_PROFILE_CALLS %d\n", U, U, nprof);
    buf_printf(b, "typedef struct {\n    int index;            /* 0 .. %s_PROFILE_CALLS - 1, in the order of the calls */\n"
                  "    int node;             /* the kernel's number, nK in %s.c */\n"
                  "    const char *kernel;   /* the function(s) called: \"k3_conv2d\", \"rk_copy x2\" */\n"
                  "    const char *relay;    /* the Relay calls computed: \"nodes[7] nn.conv2d + nodes[5] nn.relu\" */\n"
                  "    const char *output;   /* \"float32 [1, 16, 32, 32]\" */\n} %s_profile_call;\n",
               U, N, N);
    buf_printf(b, "typedef void (*%s_profile_hook)(void *ctx, const %s_profile_call *call, int end);\n", N, N);
    buf_printf(b, "extern const %s_profile_call %s_profile_calls[%d];\n", N, N, nprof ? nprof : 1);
    put_signature(e, b, true);
    buf_printf(b, ";\nint %s_run_generic_profiled(const void *const *inputs, void *const *outputs,\n"
                  "    void *workspace, const void *constants, %s_profile_hook hook, void *ctx);\n#endif\n",
               N, N);
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
    /* A type with that size and alignment, so that a caller need not get the
     * alignment right by hand: a union with a double is only 8-aligned on most
     * ABIs, and where a static buffer lands then depends on its neighbours. */
    {
        long long ws = e->p->workspace > 0 ? (long long)e->p->workspace : 1;
        buf_printf(b, "/* Scratch memory of the right size and alignment:\n"
                      " *     static %s_workspace ws;  ...  %s_run(..., ws.bytes)\n"
                      " * (_Alignas in C11 and tcc, else the aligned attribute of gcc and clang, or MSVC's\n"
                      " * __declspec; with none of them, align a buffer to %s_WORKSPACE_ALIGN yourself). */\n",
                   N, N, U);
        /* tcc 0.9.27 ignores the aligned attribute but honours _Alignas in C99 mode */
        buf_puts(b, "#if ((defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L) || defined(__TINYC__)) \\\n"
                    "    && !defined(__cplusplus)\n");
        buf_printf(b, "typedef struct { _Alignas(%d) unsigned char bytes[%lld]; } %s_workspace;\n",
                   RC_WORKSPACE_ALIGN, ws, N);
        buf_puts(b, "#elif defined(__GNUC__) || defined(__clang__)\n");
        buf_printf(b, "typedef struct { unsigned char bytes[%lld]; } __attribute__((aligned(%d))) %s_workspace;\n",
                   ws, RC_WORKSPACE_ALIGN, N);
        buf_puts(b, "#elif defined(_MSC_VER)\n");
        buf_printf(b, "typedef __declspec(align(%d)) struct { unsigned char bytes[%lld]; } %s_workspace;\n",
                   RC_WORKSPACE_ALIGN, ws, N);
        buf_puts(b, "#else\n");
        buf_printf(b, "typedef union { long double ld; void *p; unsigned char bytes[%lld]; } %s_workspace;\n",
                   ws, N);
        buf_puts(b, "#endif\n");
    }
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
    put_signature(e, b, false);
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
    put_profile_api(e, b);
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
    const char **cname = xcalloc(arrlen(g->consts) + 1, sizeof *cname);
    for (int v = 0; v < (int)arrlen(g->values); v++)
        if (g->values[v].kind == VAL_CONST && g->values[v].name)
            cname[g->values[v].constant] = g->values[v].name;
    for (int k = 0; k < (int)arrlen(e->const_order); k++) {
        const Tensor *t = &g->consts[e->const_order[k]];
        int64_t n = shape_numel(&t->shape);
        const char *pname = cname[e->const_order[k]];
        buf_puts(b, "/* ");
        if (pname) { /* the parameter it came from (bound, or folded or packed from one) */
            put_comment_text(b, pname);
            buf_puts(b, ": ");
        }
        buf_printf(b, "%s %s%s */\n", dtype_name(t->dtype), shape_text(&t->shape),
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
            case DT_F32: put_float_literal(b, ((const float *)t->data)[i]); break;
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
    free(cname);
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

/* NAME_run's buffer map: an enum naming the workspace offset of every value stored there
 * (WS_Tv) and of every kernel's row buffer (WS_Nk_ROWS), with its size and what it holds.
 * Offsets beyond an int stay literals. */
static void put_buffer_map(Emitter *e, Buf *b)
{
    const Graph *g = e->g;
    const Plan *p = e->p;
    e->named = p->workspace <= 0x7fffffff;
    if (!e->named)
        return;
    buf_puts(b, "    /* the workspace: offset of each buffer (bytes), its size and tensor; a buffer\n"
                "     * is reused once every tensor in it is dead */\n    enum {\n");
    for (int v = 0; v < (int)arrlen(g->values); v++) {
        const Value *x = &g->values[v];
        if (p->st[v].kind != ST_WORKSPACE)
            continue;
        int64_t bytes = shape_numel(&x->shape) * (int64_t)dtype_size(x->dtype);
        buf_printf(b, "        WS_T%d = %lld, /* %lld bytes: %s %s", v, (long long)p->st[v].offset,
                   (long long)bytes, dtype_name(x->dtype), shape_text(&x->shape));
        if (x->kind == VAL_TEMP && x->producer >= 0)
            buf_printf(b, " from n%d", x->producer);
        int a = p->st[v].alias;
        if (a >= 0 && p->st[a].kind == ST_WORKSPACE)
            buf_printf(b, ", inside T%d at +%lld", a, (long long)(p->st[v].offset - p->st[a].offset));
        buf_puts(b, " */\n");
    }
    for (int i = 0; i < (int)arrlen(g->nodes); i++)
        if (g->nodes[i].a.tile.scratch > 0)
            buf_printf(b, "        WS_N%d_ROWS = %lld, /* %lld bytes: n%d's row buffer */\n", i,
                       (long long)p->scratch[i], (long long)g->nodes[i].a.tile.scratch, i);
    buf_puts(b, "    };\n");
}

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
    /* gcc in its ISO modes (-std=c99, -std=c11) contracts no a * b + c into a fused
     * multiply-add, which the kernels' loops are built on (3x3 32 -> 32 at 56x56, gcc 12 -O3
     * -march=native, Emerald Rapids: 691 us at -std=c99 against 364 at the default
     * -std=gnu17); its GNU modes contract them. A hint only: clang contracts by default */
    buf_puts(b, "#if defined(__GNUC__) && !defined(__clang__)\n"
                "#pragma GCC optimize(\"fp-contract=fast\")\n");
    if (g->target == TARGET_X86_64_AVX2)
        /* gcc turns a loop that copies an accumulator array into the output (a block's
         * stores with no epilogue) or zeroes it into memcpy / memset, which takes the array's
         * address and keeps it in memory, also inside the loop of multiply-adds (conv1x1 64
         * -> 128: 41 -> 83 GFLOP/s without). For the whole file: a function compiled under
         * other optimize options than a helper's does not inline it (the int8 blocks called
         * rq_wrap32 per output: qnn.conv2d 1x1 64 -> 128 at 28, 573 -> 278 us) */
        buf_puts(b, "#pragma GCC optimize(\"no-tree-loop-distribute-patterns\")\n");
    buf_puts(b, "#endif\n");
    if (g->target == TARGET_X86_64_AVX512) {
        /* gcc's -march for AVX-512 cores vectorises with 256 bits (prefer-vector-width=256),
         * half the width the kernels are blocked for. A hint only: other compilers skip it. */
        buf_puts(b, "#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512F__)\n"
                    "#pragma GCC target(\"prefer-vector-width=512\")\n#endif\n");
        /* clang's tuning for Intel's AVX-512 cores prefers 256-bit vectors too, and its
         * vector-width option has no pragma; its generic x86-64 tuning prefers the widest,
         * and a target attribute (clang 12 on, Apple's 13) sets the tuning per function,
         * keeping the command line's instruction set: each function of the file (popped at
         * its end). clang 14 -O3 -march=native, Emerald Rapids, float conv
         * 3x3 32 -> 32 at 56x56: 1365 -> 380 us (gcc 374); 1x1 64 -> 128 at 28: 217 -> 85
         * (73); dense 1024 -> 1000 batch 32: 1448 -> 458 (447) */
        buf_puts(b, CLANG_TUNE_IF "\n" CLANG_TUNE_PUSH "\n#endif\n");
        buf_puts(b, "\n");
    }
    bool simd = false; /* --target generic: blocks that run in passes on scalar cores, or
                        * wider on AVX-512 */
    for (int i = 0; i < nn && !simd; i++)
        simd = simd_passes(g, i) || plane_wide(g, i) || qdepthwise_split(g, i);
    if (simd) {
        put_simd_macro(b);
        /* the conv blocks of 16 columns where RC_WIDE is 1 (kernel_conv2d.c), under clang
         * with the tuning that prefers 512-bit vectors, as above. clang 14 -O3
         * -march=native, Emerald Rapids: 3x3 32 -> 32 at 56x56 758 -> 504 us, 1x1 64 -> 128
         * at 28x28 153 -> 87 (gcc: 540, 81) */
        buf_puts(b, "#if RC_WIDE\n" CLANG_TUNE_IF "\n" CLANG_TUNE_PUSH "\n#endif\n#endif\n\n");
    }
    /* the parameter structs and library kernels the calls use, then each node's own */
    const char **used = NULL, **types = NULL;
    for (int i = 0; i < nn; i++) {
        KCall *calls = ir_calls(g, &g->nodes[i]);
        for (int k = 0; k < (int)arrlen(calls); k++) {
            const KCall *c = &calls[k];
            if (c->kind == KG_QCONV2D || c->kind == KG_QDENSE) {
                int fpm = emit_qkernel_fpm(g, i); /* the requantize helper it calls */
                mark_section("rq_wrap32", &used);
                if (fpm)
                    mark_section(fpm == 1 ? "rq_fpm" : "rq_fpm_h", &used);
            }
            const Node *n = &g->nodes[i];
            if (c->kind == KG_ELEMENTWISE && !wrapping_expr(g, n))
                mark_expr_sections(ew_table[n->a.ew].expr, &used);
            if (c->kind == KG_CONV2D || c->kind == KG_DENSE)
                for (int s = 0; s < n->a.ep.n; s++)
                    mark_expr_sections(ew_table[n->a.ep.step[s].ew].expr, &used);
            if (c->kind != KG_LIBRARY || plan_self_copy(g, p, i, c))
                continue;
            if (!mark_section(c->kernel, &used))
                unreachable(); /* ir_ops.c names a kernel no kernel file holds */
            bool have = false;
            for (int t = 0; t < (int)arrlen(types) && !have; t++)
                have = !strcmp(types[t], c->params);
            if (!have)
                arrput(types, c->params);
        }
        arrfree(calls);
    }
    put_param_typedefs(b, types);
    put_sections(b, used);
    arrfree(used);
    arrfree(types);
    for (int i = 0; i < nn; i++) {
        const Node *n = &g->nodes[i];
        KCall *calls = ir_calls(g, n);
        for (int k = 0; k < (int)arrlen(calls); k++)
            switch (calls[k].kind) {
            case KG_ELEMENTWISE: emit_elementwise(e, b, i); break;
            case KG_CONV2D: emit_conv2d_kernel(g, i, b); break;
            case KG_DENSE: emit_dense_kernel(g, i, b); break;
            case KG_QCONV2D: emit_qconv_kernel(g, i, b); break;
            case KG_QDENSE: emit_qdense_kernel(g, i, b); break;
            case KG_POOL2D: emit_pool2d_kernel(g, i, b); break;
            case KG_LIBRARY: break;
            }
        arrfree(calls);
    }
    for (int i = 0; i < nn; i++)
        emit_params(e, b, i);
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
    /* the profile table and marks (NAME_PROFILE), then NAME_run: NAME_run_profiled when
     * NAME_PROFILE is defined, else the same code with the marks empty */
    int nprof = 0;
    for (int i = 0; i < nn; i++)
        nprof += profiled(e, i);
    buf_printf(b, "\n#ifdef %s_PROFILE\nconst %s_profile_call %s_profile_calls[%d] = {\n", U, N, N,
               nprof ? nprof : 1);
    for (int i = 0, k = 0; i < nn; i++)
        if (profiled(e, i))
            put_profile_entry(e, b, k++, i);
    if (!nprof)
        buf_puts(b, "    { 0, 0, \"\", \"\", \"\" },\n");
    buf_printf(b, "};\n#define %s_PROF(k, end) do { if (hook) hook(ctx, &%s_profile_calls[k], end); } while (0)\n"
                  "#else\n#define %s_PROF(k, end)\n#endif\n\n", U, N, U);
    buf_printf(b, "#ifdef %s_PROFILE\n", U);
    put_signature(e, b, true);
    buf_puts(b, "\n#else\n");
    put_signature(e, b, false);
    buf_puts(b, "\n#endif\n{\n");
    if (!nprof)
        buf_printf(b, "#ifdef %s_PROFILE\n    (void)hook;\n    (void)ctx;\n#endif\n", U);
    if (p->workspace > 0) {
        buf_puts(b, "    unsigned char *ws = (unsigned char *)workspace;\n");
        put_buffer_map(e, b);
    }
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
    for (int i = 0, k = 0; i < nn; i++)
        emit_call(e, b, i, profiled(e, i) ? k++ : -1);
    for (int k = 0; k < (int)arrlen(p->copy_outputs); k++) {
        int oi = p->copy_outputs[k];
        int v = g->outputs[oi];
        buf_printf(b, "    { /* output %d is a copy */\n        long i;\n        for (i = 0; i < %lld; i++)\n"
                      "            out%d[i] = ", oi, (long long)shape_numel(&g->values[v].shape), oi);
        put_ptr(e, b, v);
        buf_puts(b, "[i];\n    }\n");
    }
    buf_printf(b, "    return %s_OK;\n}\n", U);
    /* ... and NAME_run, when that was NAME_run_profiled */
    buf_printf(b, "\n#ifdef %s_PROFILE\n", U);
    put_signature(e, b, false);
    buf_printf(b, "\n{\n    return %s_run_profiled(", N);
    for (int i = 0; i < (int)arrlen(g->inputs); i++)
        buf_printf(b, "in%d, ", i);
    for (int i = 0; i < (int)arrlen(g->outputs); i++)
        buf_printf(b, "out%d, ", i);
    buf_printf(b, "workspace%s, NULL, NULL);\n}\n#endif\n", bin ? ", constants" : "");
    /* the generic entry points */
    put_run_generic(e, b, false);
    buf_printf(b, "\n#ifdef %s_PROFILE", U);
    put_run_generic(e, b, true);
    buf_puts(b, "#endif\n");
    if (g->target == TARGET_X86_64_AVX512)
        buf_puts(b, "\n" CLANG_TUNE_IF "\n" CLANG_TUNE_POP "\n#endif\n");
    if (simd)
        buf_puts(b, "\n#if RC_WIDE\n" CLANG_TUNE_IF "\n" CLANG_TUNE_POP "\n#endif\n#endif\n");
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
