/*
 * test_tensor_io.c: unit tests for compiler/tensor_io.c and compiler/diag.c.
 *
 * usage: test_tensor_io [FIXTURES_DIR] [--data DIR] [--python PY] [--check SCRIPT]
 *   FIXTURES_DIR  the relay-json fixtures folder (cases that need it are skipped without it)
 *   --data DIR    tests/unit/data (default: beside this source file, via __FILE__)
 *   --python PY   a python3 with numpy, for the numpy.load check (default: $PYTHON, else
 *                 python3 from PATH; the check is skipped when it cannot import numpy,
 *                 and fails when --python was given)
 *   --check SCRIPT  check_npy_roundtrip.py (default: beside this source file)
 * Output is TAP: "1..N", then "ok K - name" or "not ok K - name: why". Exit status 1
 * when a case fails.
 */
#define _POSIX_C_SOURCE 200809L

#include "relayc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

//
// Harness
//

static const char *g_fixtures;      /* NULL: skip fixture cases */
static char g_data[PATH_MAX];
static char g_check[PATH_MAX];
static const char *g_python;
static bool g_python_given;

static bool g_failed, g_skipped;
static char g_why[2048];

/* snprintf through a va_list, so that gcc's -Wformat-truncation does not second-guess
 * messages that are meant to be cut. */
static int sfmt(char *buf, size_t len, const char *fmt, ...) RC_PRINTF(3, 4);
static int sfmt(char *buf, size_t len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return k;
}

static void fail_at(int line, const char *fmt, ...) RC_PRINTF(2, 3);
static void fail_at(int line, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(g_why, sizeof g_why, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < sizeof g_why)
        sfmt(g_why + k, sizeof g_why - (size_t)k, " (line %d)", line);
    for (char *c = g_why; *c; c++)
        if (*c == '\n')
            *c = ' ';
    g_failed = true;
}

/* On failure: record why and leave the case. */
#define CHECK(cond, ...)                         \
    do {                                         \
        if (!(cond)) {                           \
            fail_at(__LINE__, __VA_ARGS__);      \
            return;                              \
        }                                        \
    } while (0)

/* A decoder call that must fail with a message containing sub. */
#define CHECK_ERR(ok, err, sub)                                                              \
    do {                                                                                     \
        bool ok_ = (ok);                                                                     \
        CHECK(!ok_, "got success expected an error containing \"%s\"", (sub));              \
        CHECK(strstr((err), (sub)) != NULL, "got error \"%s\" expected one containing \"%s\"", \
              (err), (sub));                                                                 \
        CHECK(strchr((err), '\n') == NULL, "error \"%s\" is not one line", (err));           \
    } while (0)

#define CHECK_OK(ok, err) CHECK((ok), "got error \"%s\" expected success", (err))

#define SKIP_UNLESS(cond, why) \
    do {                       \
        if (!(cond)) {         \
            g_skipped = true;  \
            sfmt(g_why, sizeof g_why, "%s", (why)); \
            return;            \
        }                      \
    } while (0)

static void path_join(char *out, size_t len, const char *a, const char *b) {
    sfmt(out, len, "%s/%s", a, b);
}

/* Reads a file or fails the case (returns NULL). */
static uint8_t *slurp(const char *path, size_t *len) {
    char err[256];
    uint8_t *p;
    if (!read_file(path, &p, len, err, sizeof err)) {
        fail_at(__LINE__, "cannot read %s: %s", path, err);
        return NULL;
    }
    return p;
}

//
// Byte builders
//

typedef struct {
    uint8_t *p;
    size_t n, cap;
} ByteBuf;

static void put(ByteBuf *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_le(ByteBuf *b, uint64_t v, int bytes) {
    uint8_t t[8];
    for (int i = 0; i < bytes; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    put(b, t, (size_t)bytes);
}

static void put_u64(ByteBuf *b, uint64_t v) { put_le(b, v, 8); }
static void put_i64(ByteBuf *b, int64_t v) { put_le(b, (uint64_t)v, 8); }
static void put_i32(ByteBuf *b, int32_t v) { put_le(b, (uint64_t)(uint32_t)v, 4); }

typedef struct {
    uint64_t magic;
    int32_t device_type, ndim;
    uint8_t code, bits;
    uint16_t lanes;
    int64_t shape[16];
    int64_t dbs;                /* data_byte_size */
    const void *data;
    size_t datalen;             /* bytes actually written */
} BlobSpec;

static BlobSpec spec_f32(int ndim, const int64_t *shape, const float *data, size_t count) {
    BlobSpec s;
    memset(&s, 0, sizeof s);
    s.magic = 0xDD5E40F096B4A13FULL;
    s.device_type = 1;
    s.ndim = ndim;
    s.code = 2;
    s.bits = 32;
    s.lanes = 1;
    for (int i = 0; i < ndim && i < 16; i++)
        s.shape[i] = shape[i];
    s.dbs = (int64_t)(count * 4);
    s.data = data;
    s.datalen = count * 4;
    return s;
}

static void put_blob(ByteBuf *b, const BlobSpec *s) {
    put_u64(b, s->magic);
    put_u64(b, 0);
    put_i32(b, s->device_type);
    put_i32(b, 0);
    put_i32(b, s->ndim);
    put_le(b, s->code, 1);
    put_le(b, s->bits, 1);
    put_le(b, s->lanes, 2);
    for (int i = 0; i < s->ndim && i < 16; i++)
        put_i64(b, s->shape[i]);
    put_i64(b, s->dbs);
    put(b, s->data, s->datalen);
}

/* Encodes one blob and decodes it; *t must be freed by the caller on success. */
static bool roundtrip_blob(const BlobSpec *s, Tensor *t, char *err, size_t errlen) {
    ByteBuf b = {0};
    size_t used = 0;
    put_blob(&b, s);
    bool ok = blob_decode(b.p, b.n, t, &used, err, errlen);
    if (ok && used != b.n) {
        sfmt(err, errlen, "used %zu of %zu bytes", used, b.n);
        tensor_free(t);
        ok = false;
    }
    free(b.p);
    return ok;
}

/* The values check_npy_roundtrip.py expects: element i of the flattened tensor. */
static void fill_pattern(Tensor *t) {
    size_t n = t->nbytes / dtype_size(t->dtype);
    for (size_t i = 0; i < n; i++) {
        int64_t k = (int64_t)i;
        switch (t->dtype) {
        case DT_F32: ((float *)t->data)[i] = (float)k * 0.25f - 1.5f; break;
        case DT_F64: ((double *)t->data)[i] = (double)k * 0.25 - 1.5; break;
        case DT_I8: ((int8_t *)t->data)[i] = (int8_t)((k * 37 + 11) % 256 - 128); break;
        case DT_U8: ((uint8_t *)t->data)[i] = (uint8_t)((k * 37 + 11) % 256); break;
        case DT_I32: ((int32_t *)t->data)[i] = (int32_t)(k * 65537 - 1000); break;
        case DT_I64: ((int64_t *)t->data)[i] = k * 1099511627777LL - 7; break;
        case DT_BOOL: ((uint8_t *)t->data)[i] = k % 3 == 0; break;
        default: break;
        }
    }
}

static Tensor make_tensor(DType dt, int rank, const int64_t *dims) {
    Tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.shape.rank = rank;
    for (int i = 0; i < rank; i++)
        t.shape.dim[i] = dims[i];
    t.nbytes = (size_t)shape_numel(&t.shape) * dtype_size(dt);
    t.data = t.nbytes ? xcalloc(1, t.nbytes) : NULL;
    fill_pattern(&t);
    return t;
}

static Shape mkshape(int rank, const int64_t *dims) {
    Shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    for (int i = 0; i < rank; i++)
        s.dim[i] = dims[i];
    return s;
}

static const char *SHAPE_STR(const Shape *s) {
    static char buf[4][256];
    static int k;
    k = (k + 1) % 4;
    return shape_str(s, buf[k], sizeof buf[k]);
}

//
// diag.c
//

static void t_diag_fail_longjmp(void) {
    jmp_buf jb;
    static Diag d;                  /* static: survives the longjmp unclobbered */
    memset(&d, 0, sizeof d);
    d.jmp = &jb;
    d.file = "model.json";
    if (setjmp(jb) == 0) {
        diag_fail(&d, "node %d: %s", 7, "bad attr");
        CHECK(0, "got return from diag_fail expected a longjmp");
    }
    CHECK(d.code == 2, "got code %d expected 2", d.code);
    CHECK(strcmp(d.msg, "model.json: node 7: bad attr") == 0, "got \"%s\" expected \"model.json: node 7: bad attr\"",
          d.msg);
    d.file = NULL;
    if (setjmp(jb) == 0)
        diag_fail(&d, "plain %s", "message");
    CHECK(strcmp(d.msg, "plain message") == 0, "got \"%s\" expected \"plain message\"", d.msg);
    /* A long message is cut, not overflowed. */
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    d.file = big;
    if (setjmp(jb) == 0)
        diag_fail(&d, "%s", big);
    CHECK(strlen(d.msg) == sizeof d.msg - 1, "got length %zu expected %zu", strlen(d.msg), sizeof d.msg - 1);
}

static void t_alloc_helpers(void) {
    void *p = xmalloc(0);
    CHECK(p != NULL, "got NULL from xmalloc(0) expected a pointer");
    p = xrealloc(p, 0);
    CHECK(p != NULL, "got NULL from xrealloc(p, 0) expected a pointer");
    free(p);
    p = xcalloc(0, 8);
    CHECK(p != NULL, "got NULL from xcalloc(0, 8) expected a pointer");
    free(p);
    int *z = xcalloc(4, sizeof *z);
    CHECK(z[0] == 0 && z[3] == 0, "got nonzero from xcalloc expected zeroes");
    free(z);
    char *s = xasprintf("%s-%d-%05.1f", "ab", 42, 2.5);
    CHECK(strcmp(s, "ab-42-002.5") == 0, "got \"%s\" expected \"ab-42-002.5\"", s);
    free(s);
    s = xasprintf("%s", "");
    CHECK(strcmp(s, "") == 0, "got \"%s\" expected \"\"", s);
    free(s);
    s = xstrndup("abcdef", 3);
    CHECK(strcmp(s, "abc") == 0, "got \"%s\" expected \"abc\"", s);
    free(s);
    s = xstrndup("ab", 10);
    CHECK(strcmp(s, "ab") == 0, "got \"%s\" expected \"ab\"", s);
    free(s);
    s = xstrdup("hello");
    CHECK(strcmp(s, "hello") == 0, "got \"%s\" expected \"hello\"", s);
    free(s);
}

//
// dtype and shape helpers
//

static void t_dtype_helpers(void) {
    static const struct { DType t; const char *name, *ctype; size_t size; } W[] = {
        {DT_F32, "float32", "float", 4}, {DT_F64, "float64", "double", 8}, {DT_I8, "int8", "int8_t", 1},
        {DT_U8, "uint8", "uint8_t", 1},  {DT_I32, "int32", "int32_t", 4},  {DT_I64, "int64", "int64_t", 8},
        {DT_BOOL, "bool", "uint8_t", 1},
    };
    /* every dtype a file may hold; DT_I16 (relayc's own packed weights) is never parsed */
    CHECK(sizeof W / sizeof W[0] == DT_I16 && DT_I16 + 1 == DT_COUNT, "got %zu table rows expected %d",
          sizeof W / sizeof W[0], DT_I16);
    CHECK(strcmp(dtype_name(DT_I16), "int16") == 0 && strcmp(dtype_ctype(DT_I16), "int16_t") == 0 &&
          dtype_size(DT_I16) == 2, "got %s %s %zu expected int16 int16_t 2", dtype_name(DT_I16),
          dtype_ctype(DT_I16), dtype_size(DT_I16));
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        DType p;
        CHECK(strcmp(dtype_name(W[i].t), W[i].name) == 0, "got %s expected %s", dtype_name(W[i].t), W[i].name);
        CHECK(strcmp(dtype_ctype(W[i].t), W[i].ctype) == 0, "got %s expected %s", dtype_ctype(W[i].t), W[i].ctype);
        CHECK(dtype_size(W[i].t) == W[i].size, "got %zu expected %zu for %s", dtype_size(W[i].t), W[i].size,
              W[i].name);
        CHECK(dtype_parse(W[i].name, &p) && p == W[i].t, "got no parse expected %s", W[i].name);
    }
    static const char *const bad[] = {"float16", "bfloat16", "int16", "uint16", "handle", "e4m3_float8",
                                      "float32x4", "", "Float32", "custom[foo]16", "uint1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        DType p;
        CHECK(!dtype_parse(bad[i], &p), "got a parse of \"%s\" expected refusal", bad[i]);
    }
}

static void t_shape_helpers(void) {
    int64_t d4[] = {1, 3, 224, 224}, d0[] = {5, 0, 7}, big[] = {INT64_MAX, 2};
    Shape a = mkshape(4, d4), b = mkshape(4, d4), scalar = mkshape(0, NULL), z = mkshape(3, d0);
    Shape o = mkshape(2, big);
    char buf[64];
    CHECK(shape_numel(&a) == 150528, "got %lld expected 150528", (long long)shape_numel(&a));
    CHECK(shape_numel(&scalar) == 1, "got %lld expected 1", (long long)shape_numel(&scalar));
    CHECK(shape_numel(&z) == 0, "got %lld expected 0", (long long)shape_numel(&z));
    CHECK(shape_numel(&o) == INT64_MAX, "got %lld expected INT64_MAX (overflow saturates)", (long long)shape_numel(&o));
    int64_t neg[] = {0, -2};
    Shape ng = mkshape(2, neg);
    CHECK(shape_numel(&ng) == INT64_MAX, "got %lld expected INT64_MAX (negative dim)", (long long)shape_numel(&ng));
    int64_t huge[] = {(int64_t)1 << 32, (int64_t)1 << 31, 3};
    Shape hg = mkshape(3, huge);
    CHECK(shape_numel(&hg) == INT64_MAX, "got %lld expected INT64_MAX (overflow saturates)", (long long)shape_numel(&hg));
    CHECK(shape_eq(&a, &b), "got unequal expected equal");
    b.dim[3] = 225;
    CHECK(!shape_eq(&a, &b), "got equal expected unequal");
    CHECK(!shape_eq(&a, &scalar), "got equal expected unequal ranks");
    CHECK(strcmp(shape_str(&a, buf, sizeof buf), "[1, 3, 224, 224]") == 0, "got \"%s\" expected \"[1, 3, 224, 224]\"",
          buf);
    CHECK(strcmp(shape_str(&scalar, buf, sizeof buf), "[]") == 0, "got \"%s\" expected \"[]\"", buf);
    int64_t d1[] = {5};
    Shape one = mkshape(1, d1);
    CHECK(strcmp(shape_str(&one, buf, sizeof buf), "[5]") == 0, "got \"%s\" expected \"[5]\"", buf);
    char small[6];
    shape_str(&a, small, sizeof small);
    CHECK(strcmp(small, "[1, 3") == 0, "got \"%s\" expected \"[1, 3\" (cut)", small);
}

//
// base64
//

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *b64_encode(const uint8_t *p, size_t n) {
    char *o = xmalloc((n + 2) / 3 * 4 + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        o[k++] = B64[v >> 18 & 63];
        o[k++] = B64[v >> 12 & 63];
        o[k++] = i + 1 < n ? B64[v >> 6 & 63] : '=';
        o[k++] = i + 2 < n ? B64[v & 63] : '=';
    }
    o[k] = '\0';
    return o;
}

static void t_base64_basic(void) {
    static const struct { const char *in, *out; } W[] = {
        {"", ""}, {"TQ==", "M"}, {"TWE=", "Ma"}, {"TWFu", "Man"}, {"TWFuTWFu", "ManMan"},
        {"TWFu\n", "Man"}, {"TWE= \t\r\n", "Ma"}, {"  \n", ""}, {"+/+/", "\xfb\xff\xbf"},
    };
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        uint8_t *o = NULL;
        size_t n = 99;
        CHECK(base64_decode(W[i].in, strlen(W[i].in), &o, &n), "got failure expected success for \"%s\"", W[i].in);
        CHECK(o != NULL, "got NULL buffer for \"%s\"", W[i].in);
        bool same = n == strlen(W[i].out) && memcmp(o, W[i].out, n) == 0;
        free(o);
        CHECK(same, "got %zu bytes expected \"%s\" for \"%s\"", n, W[i].out, W[i].in);
    }
    /* len excludes what follows: decoding a prefix of a longer string */
    uint8_t *o;
    size_t n;
    CHECK(base64_decode("TWFuXXXX", 4, &o, &n) && n == 3 && memcmp(o, "Man", 3) == 0,
          "got a wrong decode of a 4-byte prefix expected \"Man\"");
    free(o);
}

static void t_base64_rejects(void) {
    static const char *const bad[] = {
        "T", "TW", "TWF", "TWFuT",          /* length */
        "TW!u", "TW-u", "TW_u", "TWF\x01",  /* characters outside the standard alphabet */
        "TQ==TWFu", "T===", "====", "=AAA", "TQ=A", "A=B=", /* '=' in the wrong place */
        "TWFu\xff", "TWE=\xff",             /* the pre-2020 ARM quirk byte */
        "TW Fu", " TWFu",                   /* inner and leading whitespace */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t *o = (uint8_t *)&o;
        size_t n = 7;
        bool ok = base64_decode(bad[i], strlen(bad[i]), &o, &n);
        if (ok)
            free(o);
        CHECK(!ok, "got success expected failure for case %zu \"%s\"", i, bad[i]);
        CHECK(o == NULL && n == 0, "got out %p len %zu after failure expected NULL, 0", (void *)o, n);
    }
}

static void t_base64_all_bytes(void) {
    uint8_t in[256 + 2];
    for (int i = 0; i < 258; i++)
        in[i] = (uint8_t)(i * 7 + 3);
    for (size_t len = 0; len <= sizeof in; len += len < 8 ? 1 : 83) {
        char *s = b64_encode(in, len);
        uint8_t *o;
        size_t n;
        bool ok = base64_decode(s, strlen(s), &o, &n);
        free(s);
        CHECK(ok, "got failure expected success for %zu bytes", len);
        bool same = n == len && (len == 0 || memcmp(o, in, len) == 0);
        free(o);
        CHECK(same, "got %zu bytes expected %zu identical", n, len);
    }
}

//
// NDArray blobs
//

static const char REAL_BLOB[] = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAgAAAAIgAQACAAAAAAAAAAMAAAAAAAAAGAAAAAAAAAAAAIA/"
                                "AAAAQAAAQEAAAIBAAACgQAAAwEA=";

static void t_blob_real_080(void) {
    uint8_t *p;
    size_t n, used = 0;
    Tensor t;
    char err[256] = "";
    CHECK(base64_decode(REAL_BLOB, strlen(REAL_BLOB), &p, &n), "got base64 failure expected success");
    if (n != 80)
        free(p);
    CHECK(n == 80, "got %zu bytes expected 80", n);
    bool ok = blob_decode(p, n, &t, &used, err, sizeof err);
    CHECK_OK(ok, err);
    int64_t d[] = {2, 3};
    Shape want = mkshape(2, d);
    bool good = t.dtype == DT_F32 && shape_eq(&t.shape, &want) && t.nbytes == 24 && used == 80;
    float v[6] = {0};
    if (good)
        memcpy(v, t.data, sizeof v);
    tensor_free(&t);
    if (!good)
        free(p);
    CHECK(good, "got %s %s %zu bytes (used %zu) expected float32 [2, 3] 24 bytes (used 80)", dtype_name(t.dtype),
          SHAPE_STR(&t.shape), t.nbytes, used);
    for (int i = 0; i < 6; i++)
        good = good && v[i] == (float)(i + 1);
    if (!good)
        free(p);
    CHECK(good, "got %g %g %g %g %g %g expected 1 2 3 4 5 6", (double)v[0], (double)v[1], (double)v[2], (double)v[3],
          (double)v[4], (double)v[5]);
    /* Trailing bytes are left to the caller: used stops at the record's end. */
    ByteBuf b = {0};
    put(&b, p, n);
    put(&b, "XYZ", 3);
    free(p);
    ok = blob_decode(b.p, b.n, &t, &used, err, sizeof err);
    free(b.p);
    CHECK_OK(ok, err);
    tensor_free(&t);
    CHECK(used == 80, "got used %zu expected 80", used);
}

static void t_blob_all_dtypes(void) {
    static const struct { uint8_t code, bits; DType t; } W[] = {
        {2, 32, DT_F32}, {2, 64, DT_F64}, {0, 8, DT_I8}, {1, 8, DT_U8}, {0, 32, DT_I32}, {0, 64, DT_I64}, {1, 1, DT_BOOL},
    };
    uint8_t data[8 * 6];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13 + 1);
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        int64_t dims[] = {3, 2};
        size_t es = W[i].bits == 1 ? 1 : W[i].bits / 8;
        BlobSpec s = spec_f32(2, dims, NULL, 0);
        s.code = W[i].code;
        s.bits = W[i].bits;
        s.dbs = (int64_t)(6 * es);
        s.data = data;
        s.datalen = 6 * es;
        Tensor t;
        char err[256] = "";
        CHECK_OK(roundtrip_blob(&s, &t, err, sizeof err), err);
        bool same = t.dtype == W[i].t && t.nbytes == 6 * es && memcmp(t.data, data, t.nbytes) == 0;
        tensor_free(&t);
        CHECK(same, "got %s %zu bytes expected %s %zu bytes, same data", dtype_name(t.dtype), t.nbytes,
              dtype_name(W[i].t), 6 * es);
    }
}

static void t_blob_scalar_and_empty(void) {
    float one = 0.25f;
    BlobSpec s = spec_f32(0, NULL, &one, 1);
    Tensor t;
    char err[256] = "";
    CHECK_OK(roundtrip_blob(&s, &t, err, sizeof err), err);
    bool good = t.shape.rank == 0 && t.nbytes == 4 && *(float *)t.data == 0.25f;
    tensor_free(&t);
    CHECK(good, "got rank %d, %zu bytes expected a float32 scalar 0.25", t.shape.rank, t.nbytes);
    int64_t dims[] = {4, 0, 3};
    s = spec_f32(3, dims, NULL, 0);
    CHECK_OK(roundtrip_blob(&s, &t, err, sizeof err), err);
    good = t.shape.rank == 3 && t.nbytes == 0 && t.data == NULL;
    tensor_free(&t);
    CHECK(good, "got rank %d %zu bytes data %s expected [4, 0, 3], 0 bytes, NULL", t.shape.rank, t.nbytes,
          t.data ? "set" : "NULL");
    /* A zero-size bool is fine even with data_byte_size 0: nothing was dropped. */
    s.code = 1;
    s.bits = 1;
    CHECK_OK(roundtrip_blob(&s, &t, err, sizeof err), err);
    tensor_free(&t);
}

static void t_blob_bad_magic(void) {
    float v[2] = {1, 2};
    int64_t d[] = {2};
    BlobSpec s = spec_f32(1, d, v, 2);
    Tensor t;
    char err[256];
    s.magic = 0x1234;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err,
              "bad magic 0x0000000000001234 (expected 0xDD5E40F096B4A13F)");
    s.magic = 0xF7E58D4F05049CB7ULL;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "this is a params file");
}

static void t_blob_bad_device(void) {
    float v[2] = {1, 2};
    int64_t d[] = {2};
    BlobSpec s = spec_f32(1, d, v, 2);
    Tensor t;
    char err[256];
    s.device_type = 2;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "device_type 2");
    s.device_type = -1;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "device_type -1");
}

static void t_blob_short(void) {
    uint8_t *p;
    size_t n;
    CHECK(base64_decode(REAL_BLOB, strlen(REAL_BLOB), &p, &n), "base64");
    for (size_t k = 0; k < n; k++) {
        Tensor t;
        size_t used = 12345;
        char err[256] = "";
        uint8_t *cut = xmalloc(k);     /* exact-size copy so ASan sees any overread */
        memcpy(cut, p, k);
        bool ok = blob_decode(cut, k, &t, &used, err, sizeof err);
        free(cut);
        if (ok)
            tensor_free(&t);
        if (ok || strstr(err, "truncated at byte") == NULL) {
            free(p);
            CHECK(0, "got \"%s\" for %zu of 80 bytes expected \"truncated at byte ...\"", ok ? "success" : err, k);
        }
        static const struct { size_t k; const char *want; } AT[] = {
            {20, "truncated at byte 16: the record header needs 16 bytes, only 4 left"},
            {40, "truncated at byte 32: shape needs 16 bytes, only 8 left"},
            {48, "truncated at byte 48: data_byte_size needs 8 bytes, only 0 left"},
            {60, "truncated at byte 56: data needs 24 bytes, only 4 left"},
        };
        for (size_t j = 0; j < sizeof AT / sizeof AT[0]; j++) {
            if (AT[j].k == k && strcmp(err, AT[j].want) != 0) {
                free(p);
                CHECK(0, "got \"%s\" expected \"%s\"", err, AT[j].want);
            }
        }
    }
    free(p);
    Tensor t;
    char err[256];
    uint8_t b4[4] = {0x3F, 0xA1, 0xB4, 0x96};
    CHECK_ERR(blob_decode(b4, 4, &t, NULL, err, sizeof err), err,
              "truncated at byte 0: magic needs 8 bytes, only 4 left");
    CHECK_ERR(blob_decode(NULL, 0, &t, NULL, err, sizeof err), err, "truncated at byte 0");
}

static void t_blob_size_mismatch(void) {
    float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t d[] = {2, 3};
    BlobSpec s = spec_f32(2, d, v, 6);
    Tensor t;
    char err[256];
    s.dbs = 12;
    s.datalen = 12;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "data_byte_size is 12 but shape [2, 3] of float32 needs 24");
    s.dbs = -24;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "data_byte_size is -24 but shape [2, 3] of float32 needs 24");
    s.dbs = 24;                     /* claims 24, carries 12 */
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "truncated at byte 56: data needs 24 bytes, only 12 left");
    s.dbs = 6;                      /* lanes not multiplied; bits/8 per element */
    s.datalen = 6;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "needs 24");
}

static void t_blob_bad_ndim(void) {
    float v[1] = {1};
    int64_t d[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    BlobSpec s = spec_f32(9, d, v, 1);
    Tensor t;
    char err[256];
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "ndim 9 is out of range (0 to 8)");
    s.ndim = 8;
    CHECK_OK(roundtrip_blob(&s, &t, err, sizeof err), err);
    tensor_free(&t);
    s.ndim = -1;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "ndim -1 is out of range");
    s.ndim = 0x7fffffff;
    s.datalen = 0;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "ndim 2147483647 is out of range");
    s.ndim = 100;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "ndim 100 is out of range");
}

static void t_blob_bad_shape(void) {
    Tensor t;
    char err[256];
    static const struct { int ndim; int64_t d[4]; const char *want; } W[] = {
        {2, {2, -3}, "negative dimension -3 in shape [2, -3]"},
        {1, {INT64_MIN}, "negative dimension"},
        {3, {65536, 65536, 65536}, "shape [65536, 65536, 65536] has more than 2147483647 elements"},
        {2, {(int64_t)1 << 30, 2}, "has more than 2147483647 elements"},
        {1, {((int64_t)1 << 31) + 1}, "dimension 2147483649 in shape [2147483649] is larger than 2147483647"},
        {4, {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40, 0}, "is larger than"},
        {2, {INT64_MAX, INT64_MAX}, "is larger than"},
        {4, {46341, 46341, 1, 1}, "has more than"},         /* 46341^2 > 2^31 - 1 */
        {1, {(int64_t)1 << 31}, "dimension 2147483648 in shape [2147483648] is larger than 2147483647"},
    };
    uint8_t data[64] = {0};
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        BlobSpec s = spec_f32(W[i].ndim, W[i].d, NULL, 0);
        s.dbs = 16;
        s.data = data;
        s.datalen = sizeof data;
        CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, W[i].want);
    }
    /* Exactly the limit is allowed as a shape; the data size check then applies. */
    int64_t lim[] = {((int64_t)1 << 31) - 1};
    BlobSpec s = spec_f32(1, lim, NULL, 0);
    s.dbs = 4;
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "data_byte_size is 4 but shape [2147483647] of float32 needs 8589934588");
    s.dbs = ((int64_t)8 << 30) - 4; /* consistent, but the bytes are not there */
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "truncated at byte 48: data needs 8589934588 bytes, only 0 left");
}

static void t_blob_unsupported_dtypes(void) {
    static const struct { uint8_t code, bits; uint16_t lanes; const char *want; } W[] = {
        {2, 16, 1, "unsupported dtype float16 "},  {4, 16, 1, "unsupported dtype bfloat16 "},
        {0, 16, 1, "unsupported dtype int16 "},    {1, 16, 1, "unsupported dtype uint16 "},
        {1, 32, 1, "unsupported dtype uint32 "},   {1, 64, 1, "unsupported dtype uint64 "},
        {3, 64, 1, "unsupported dtype handle "},   {6, 8, 1, "unsupported dtype e4m3_float8 "},
        {7, 8, 1, "unsupported dtype e5m2_float8 "}, {150, 16, 1, "unsupported dtype custom[150]16 "},
        {0, 1, 1, "unsupported dtype int1 "},      {2, 0, 1, "unsupported dtype void "},
        {0, 4, 1, "unsupported dtype int4 "},      {5, 32, 1, "type code 5"},
        {2, 32, 4, "vector dtype float32x4 (lanes 4) is not supported"},
        {2, 32, 0, "vector dtype float32x0 (lanes 0)"},
        {0, 8, 4, "vector dtype int8x4"},
    };
    float v[4] = {0};
    int64_t d[] = {2};
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        BlobSpec s = spec_f32(1, d, v, 2);
        s.code = W[i].code;
        s.bits = W[i].bits;
        s.lanes = W[i].lanes;
        Tensor t;
        char err[256];
        CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, W[i].want);
    }
}

static void t_blob_06_bool(void) {
    int64_t d[] = {2, 3};
    BlobSpec s = spec_f32(2, d, NULL, 0);
    s.code = 1;
    s.bits = 1;
    s.dbs = 0;
    Tensor t;
    char err[256];
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "the TVM 0.6 writer dropped sub-byte data");
    CHECK(strstr(err, "bool tensor of shape [2, 3]") != NULL, "got \"%s\" expected it to name the bool tensor", err);
    s.ndim = 0;                     /* a 0.6 bool scalar */
    CHECK_ERR(roundtrip_blob(&s, &t, err, sizeof err), err, "0.6 writer dropped sub-byte data");
    /* the 0.7+ layout: one byte per element */
    uint8_t b[6] = {1, 0, 1, 1, 0, 0};
    s.ndim = 2;
    s.dbs = 6;
    s.data = b;
    s.datalen = 6;
    CHECK_OK(roundtrip_blob(&s, &t, err, sizeof err), err);
    bool good = t.dtype == DT_BOOL && t.nbytes == 6 && memcmp(t.data, b, 6) == 0;
    tensor_free(&t);
    CHECK(good, "got %s %zu bytes expected bool 6 bytes", dtype_name(t.dtype), t.nbytes);
}

//
// Params files
//

static void put_params_header(ByteBuf *b, uint64_t count, const char *const *names) {
    put_u64(b, 0xF7E58D4F05049CB7ULL);
    put_u64(b, 0);
    put_u64(b, count);
    for (uint64_t i = 0; i < count; i++) {
        put_u64(b, strlen(names[i]));
        put(b, names[i], strlen(names[i]));
    }
}

/* A valid two-entry file: "w" float32 [2] and "flag" bool scalar. */
static void make_small_params(ByteBuf *b) {
    static const char *const names[] = {"w", "flag"};
    static const float v[2] = {1.5f, -2.0f};
    static const uint8_t one = 1;
    int64_t d[] = {2};
    put_params_header(b, 2, names);
    put_u64(b, 2);
    BlobSpec s = spec_f32(1, d, v, 2);
    put_blob(b, &s);
    s = spec_f32(0, NULL, NULL, 0);
    s.code = 1;
    s.bits = 1;
    s.dbs = 1;
    s.data = &one;
    s.datalen = 1;
    put_blob(b, &s);
}

static void t_params_small(void) {
    ByteBuf b = {0};
    make_small_params(&b);
    NamedTensor *v;
    int count;
    char err[256] = "";
    bool ok = params_decode(b.p, b.n, &v, &count, err, sizeof err);
    free(b.p);
    CHECK_OK(ok, err);
    bool good = count == 2 && strcmp(v[0].name, "w") == 0 && strcmp(v[1].name, "flag") == 0 &&
                v[0].t.dtype == DT_F32 && v[0].t.nbytes == 8 && ((float *)v[0].t.data)[1] == -2.0f &&
                v[1].t.dtype == DT_BOOL && v[1].t.shape.rank == 0 && ((uint8_t *)v[1].t.data)[0] == 1;
    params_free(v, count);
    CHECK(good, "got a wrong decode expected w float32 [2] and flag bool []");

    /* Zero entries is a valid (empty) file. */
    ByteBuf e = {0};
    put_params_header(&e, 0, NULL);
    put_u64(&e, 0);
    ok = params_decode(e.p, e.n, &v, &count, err, sizeof err);
    free(e.p);
    CHECK_OK(ok, err);
    params_free(v, count);
    CHECK(count == 0, "got %d entries expected 0", count);
}

static void t_params_truncated(void) {
    ByteBuf b = {0};
    make_small_params(&b);
    for (size_t k = 0; k < b.n; k++) {
        NamedTensor *v = (NamedTensor *)&b;
        int count = 5;
        char err[256] = "";
        uint8_t *cut = xmalloc(k);
        memcpy(cut, b.p, k);
        bool ok = params_decode(cut, k, &v, &count, err, sizeof err);
        free(cut);
        if (ok)
            params_free(v, count);
        if (ok || v != NULL || count != 0 || (strstr(err, "truncated") == NULL && strstr(err, "impossible") == NULL &&
                                              strstr(err, "only") == NULL)) {
            free(b.p);
            CHECK(0, "got \"%s\" for %zu bytes expected a truncation error, NULL, 0", ok ? "success" : err, k);
        }
    }
    free(b.p);
}

static void t_params_hostile(void) {
    NamedTensor *v;
    int count;
    char err[512];
    static const char *const names[] = {"a", "b"};
    ByteBuf b = {0};

    /* wrong magic, and a bare record where a params file belongs */
    put_u64(&b, 0x0102030405060708ULL);
    put_u64(&b, 0);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err,
              "bad magic 0x0102030405060708 (expected 0xF7E58D4F05049CB7)");
    b.n = 0;
    put_u64(&b, 0xDD5E40F096B4A13FULL);
    put_u64(&b, 0);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "not a params file");

    /* a count no file of this size can hold: refused before any allocation */
    static const uint64_t huge[] = {UINT64_MAX, (uint64_t)1 << 62, (uint64_t)INT_MAX + 1, 1000, 2};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        b.n = 0;
        put_params_header(&b, 0, NULL);
        b.n -= 8;
        put_u64(&b, huge[i]);
        put(&b, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 32);
        CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "is impossible");
    }

    /* a name length larger than what is left */
    static const uint64_t lens[] = {UINT64_MAX, (uint64_t)1 << 40, 200};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        b.n = 0;
        put_params_header(&b, 1, names);
        b.n -= 9;                    /* back over the name length and "a" */
        put_u64(&b, lens[i]);
        for (int k = 0; k < 60; k++)
            put(&b, "x", 1);
        CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "bytes are left");
    }

    /* a name longer than RC_MAX_NAME (the bytes are there) */
    b.n = 0;
    put_params_header(&b, 1, names);
    b.n -= 9;
    put_u64(&b, RC_MAX_NAME + 1);
    for (int k = 0; k < RC_MAX_NAME + 1 + 48; k++)
        put(&b, "n", 1);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "bytes long (maximum 4096)");

    /* array count different from name count */
    b.n = 0;
    put_params_header(&b, 2, names);
    put_u64(&b, 3);
    for (int k = 0; k < 100; k++)
        put(&b, "\0", 1);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "array count 3 does not match name count 2");

    /* a bad record names its entry and the absolute byte */
    float f[2] = {1, 2};
    int64_t d[] = {2};
    BlobSpec s = spec_f32(1, d, f, 2);
    b.n = 0;
    put_params_header(&b, 2, names);
    put_u64(&b, 2);
    put_blob(&b, &s);
    size_t second = b.n;
    s.device_type = 2;
    put_blob(&b, &s);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "array 1 of 2 ('b', at byte");
    CHECK(strstr(err, "device_type 2") != NULL, "got \"%s\" expected it to say device_type 2", err);
    char at[64];
    sfmt(at, sizeof at, "at byte %zu", second);
    CHECK(strstr(err, at) != NULL, "got \"%s\" expected \"%s\"", err, at);
    /* ...and truncation inside a record reports the file offset */
    b.n = 0;
    put_params_header(&b, 2, names);
    put_u64(&b, 2);
    s.device_type = 1;
    put_blob(&b, &s);
    put_blob(&b, &s);
    b.n -= 4;
    sfmt(at, sizeof at, "truncated at byte %zu: data needs 8 bytes, only 4 left", b.n - 4);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, at);

    /* duplicate names */
    static const char *const dup[] = {"same", "same"};
    b.n = 0;
    put_params_header(&b, 2, dup);
    put_u64(&b, 2);
    put_blob(&b, &s);
    put_blob(&b, &s);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "duplicate name 'same'");

    /* a NUL inside a name; a newline in a name does not break the one-line message */
    b.n = 0;
    put_params_header(&b, 0, NULL);
    b.n -= 8;
    put_u64(&b, 1);
    put_u64(&b, 3);
    put(&b, "a\0b", 3);
    put_u64(&b, 1);
    put_blob(&b, &s);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "contains a NUL byte: 'a\\x00b'");
    static const char *const nl[] = {"line\nbreak"};
    b.n = 0;
    put_params_header(&b, 1, nl);
    put_u64(&b, 1);
    s.device_type = 5;
    put_blob(&b, &s);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "'line\\x0Abreak'");

    /* trailing garbage */
    b.n = 0;
    make_small_params(&b);
    put(&b, "junk", 4);
    CHECK_ERR(params_decode(b.p, b.n, &v, &count, err, sizeof err), err, "4 unexpected bytes after the last array");
    free(b.p);
}

static void t_params_lenet_fixture(void) {
    SKIP_UNLESS(g_fixtures, "no fixtures dir given");
    /* lenet-0.8.0-params/meta.json "params", seed 1, in file order */
    static const struct { const char *name; int rank; int64_t d[4]; } W[] = {
        {"fc3_bias", 1, {10}},          {"fc1_weight", 2, {120, 400}}, {"fc2_bias", 1, {84}},
        {"conv2_weight", 4, {16, 6, 5, 5}}, {"fc1_bias", 1, {120}},   {"conv1_bias", 1, {6}},
        {"fc2_weight", 2, {84, 120}},   {"conv2_bias", 1, {16}},       {"fc3_weight", 2, {10, 84}},
        {"conv1_weight", 4, {6, 1, 5, 5}},
    };
    char path[PATH_MAX];
    path_join(path, sizeof path, g_fixtures, "lenet-0.8.0-params/model.params");
    size_t n;
    uint8_t *p = slurp(path, &n);
    if (!p)
        return;
    NamedTensor *v;
    int count;
    char err[256] = "";
    bool ok = params_decode(p, n, &v, &count, err, sizeof err);
    free(p);
    CHECK_OK(ok, err);
    char why[512] = "";
    if (count != (int)(sizeof W / sizeof W[0]))
        sfmt(why, sizeof why, "got %d params expected %zu", count, sizeof W / sizeof W[0]);
    for (int i = 0; i < count && !why[0]; i++) {
        Shape want = mkshape(W[i].rank, W[i].d);
        if (strcmp(v[i].name, W[i].name) != 0 || v[i].t.dtype != DT_F32 || !shape_eq(&v[i].t.shape, &want))
            sfmt(why, sizeof why, "got %s %s %s at %d expected %s float32 %s", v[i].name, dtype_name(v[i].t.dtype),
                     SHAPE_STR(&v[i].t.shape), i, W[i].name, SHAPE_STR(&want));
        for (size_t k = 0; k < v[i].t.nbytes / 4 && !why[0]; k++)
            if (!isfinite(((float *)v[i].t.data)[k]))
                sfmt(why, sizeof why, "got a non-finite value in %s expected finite weights", v[i].name);
    }
    params_free(v, count);
    CHECK(!why[0], "%s", why);
}

typedef void (*FileFn)(const char *dir, const char *file, char *why, size_t len, int *seen);

/* Calls fn for every file of every folder of the fixtures dir. */
static void each_fixture_file(FileFn fn, char *why, size_t len, int *seen) {
    DIR *top = opendir(g_fixtures);
    if (!top) {
        sfmt(why, len, "cannot open %s: %s", g_fixtures, strerror(errno));
        return;
    }
    struct dirent *e;
    while ((e = readdir(top)) != NULL && !why[0]) {
        if (e->d_name[0] == '.')
            continue;
        char dir[PATH_MAX];
        path_join(dir, sizeof dir, g_fixtures, e->d_name);
        DIR *sub = opendir(dir);
        if (!sub)
            continue;               /* a file such as README.md */
        struct dirent *f;
        while ((f = readdir(sub)) != NULL && !why[0])
            if (f->d_name[0] != '.')
                fn(dir, f->d_name, why, len, seen);
        closedir(sub);
    }
    closedir(top);
}

static void params_file_fn(const char *dir, const char *file, char *why, size_t len, int *seen) {
    if (strcmp(file, "model.params") != 0)
        return;
    char path[PATH_MAX], err[256];
    path_join(path, sizeof path, dir, file);
    uint8_t *p;
    size_t n;
    if (!read_file(path, &p, &n, err, sizeof err)) {
        sfmt(why, len, "%s: %s", path, err);
        return;
    }
    NamedTensor *v;
    int count;
    if (!params_decode(p, n, &v, &count, err, sizeof err))
        sfmt(why, len, "%s: got \"%s\" expected success", path, err);
    else {
        if (count < 1)
            sfmt(why, len, "%s: got 0 params expected some", path);
        for (int i = 0; i < count; i++)
            if (v[i].t.nbytes != (size_t)shape_numel(&v[i].t.shape) * dtype_size(v[i].t.dtype))
                sfmt(why, len, "%s: %s has %zu bytes, inconsistent", path, v[i].name, v[i].t.nbytes);
        params_free(v, count);
    }
    free(p);
    (*seen)++;
}

static void t_params_all_fixtures(void) {
    SKIP_UNLESS(g_fixtures, "no fixtures dir given");
    char why[1024] = "";
    int seen = 0;
    each_fixture_file(params_file_fn, why, sizeof why, &seen);
    CHECK(!why[0], "%s", why);
    CHECK(seen >= 2, "got %d model.params files expected several", seen);
}

/* Every b64ndarrays string in every model.json decodes (crude scan for the blob prefix). */
static void json_blobs_fn(const char *dir, const char *file, char *why, size_t len, int *seen) {
    if (strcmp(file, "model.json") != 0)
        return;
    char path[PATH_MAX], err[256];
    path_join(path, sizeof path, dir, file);
    uint8_t *p;
    size_t n;
    if (!read_file(path, &p, &n, err, sizeof err)) {
        sfmt(why, len, "%s: %s", path, err);
        return;
    }
    const char *s = (const char *)p;
    while ((s = strstr(s, "\"P6G0lvBAXt0")) != NULL && !why[0]) {
        s++;
        const char *end = strchr(s, '"');
        if (!end)
            break;
        uint8_t *raw;
        size_t rn, used;
        Tensor t;
        if (!base64_decode(s, (size_t)(end - s), &raw, &rn))
            sfmt(why, len, "%s: a blob is not valid base64", path);
        else {
            if (!blob_decode(raw, rn, &t, &used, err, sizeof err))
                sfmt(why, len, "%s: got \"%s\" expected a blob", path, err);
            else if (used != rn)
                sfmt(why, len, "%s: blob used %zu of %zu bytes", path, used, rn);
            else
                tensor_free(&t);
            free(raw);
        }
        (*seen)++;
        s = end + 1;
    }
    free(p);
}

static void t_blobs_in_fixture_json(void) {
    SKIP_UNLESS(g_fixtures, "no fixtures dir given");
    char why[1024] = "";
    int seen = 0;
    each_fixture_file(json_blobs_fn, why, sizeof why, &seen);
    CHECK(!why[0], "%s", why);
    CHECK(seen >= 10, "got %d blobs expected many", seen);
}

//
// .npy
//

static bool npy_file(const char *dir, const char *name, Tensor *t, char *err, size_t errlen) {
    char path[PATH_MAX];
    path_join(path, sizeof path, dir, name);
    uint8_t *p;
    size_t n;
    if (!read_file(path, &p, &n, err, errlen)) {
        size_t k = strlen(err);
        sfmt(err + k, errlen - k, " (reading %s)", path);
        return false;
    }
    bool ok = npy_decode(p, n, t, err, errlen);
    free(p);
    return ok;
}

static void t_npy_lenet_fixture(void) {
    SKIP_UNLESS(g_fixtures, "no fixtures dir given");
    char dir[PATH_MAX], err[512] = "";
    path_join(dir, sizeof dir, g_fixtures, "lenet-0.8.0-params");
    Tensor t;
    int64_t din[] = {1, 1, 28, 28}, dout[] = {1, 10};
    Shape sin = mkshape(4, din), sout = mkshape(2, dout);
    CHECK_OK(npy_file(dir, "input_data.npy", &t, err, sizeof err), err);
    bool good = t.dtype == DT_F32 && shape_eq(&t.shape, &sin) && t.nbytes == 784 * 4;
    tensor_free(&t);
    CHECK(good, "got %s %s expected float32 [1, 1, 28, 28]", dtype_name(t.dtype), SHAPE_STR(&t.shape));
    CHECK_OK(npy_file(dir, "expected_0.npy", &t, err, sizeof err), err);
    good = t.dtype == DT_F32 && shape_eq(&t.shape, &sout) && t.nbytes == 40;
    tensor_free(&t);
    CHECK(good, "got %s %s expected float32 [1, 10]", dtype_name(t.dtype), SHAPE_STR(&t.shape));
}

static void npy_fixture_fn(const char *dir, const char *file, char *why, size_t len, int *seen) {
    size_t fl = strlen(file);
    if ((strncmp(file, "input_", 6) != 0 && strncmp(file, "expected_", 9) != 0) || fl < 4 ||
        strcmp(file + fl - 4, ".npy") != 0)
        return;
    char err[512];
    Tensor t;
    if (!npy_file(dir, file, &t, err, sizeof err)) {
        sfmt(why, len, "%s/%s: got \"%s\" expected success", dir, file, err);
        return;
    }
    if (t.dtype != DT_F32 || t.nbytes != (size_t)shape_numel(&t.shape) * 4)
        sfmt(why, len, "%s/%s: got %s %s %zu bytes expected consistent float32", dir, file, dtype_name(t.dtype),
                 SHAPE_STR(&t.shape), t.nbytes);
    /* and re-encoding gives back the same tensor */
    uint8_t *enc;
    size_t en;
    npy_encode(&t, &enc, &en);
    Tensor u;
    if (!npy_decode(enc, en, &u, err, sizeof err))
        sfmt(why, len, "%s/%s: re-encoded: %s", dir, file, err);
    else {
        if (!shape_eq(&t.shape, &u.shape) || u.nbytes != t.nbytes || (t.nbytes && memcmp(t.data, u.data, t.nbytes)))
            sfmt(why, len, "%s/%s: re-encoded tensor differs", dir, file);
        tensor_free(&u);
    }
    free(enc);
    tensor_free(&t);
    (*seen)++;
}

static void t_npy_all_fixtures(void) {
    SKIP_UNLESS(g_fixtures, "no fixtures dir given");
    char why[1024] = "";
    int seen = 0;
    each_fixture_file(npy_fixture_fn, why, sizeof why, &seen);
    CHECK(!why[0], "%s", why);
    CHECK(seen >= 20, "got %d .npy files expected at least 20", seen);
}

static void t_npy_data_accepted(void) {
    static const float f4[6] = {-1, -0.5f, 0, 0.5f, 1, 1.5f};
    static const double f8[3] = {0.1, -2.5, 1e300};
    static const int8_t i1[4] = {-128, -1, 0, 127};
    static const uint8_t u1[4] = {0, 1, 128, 255};
    static const int32_t i4[4] = {INT32_MIN, -1, 0, INT32_MAX};
    static const int64_t i8[3] = {INT64_MIN, 0, INT64_MAX};
    static const uint8_t b1[5] = {1, 0, 1, 1, 0};
    static const float sc[1] = {3.5f};
    static const float r8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const struct { const char *file; DType t; int rank; int64_t d[8]; const void *data; size_t nbytes; } W[] = {
        {"f4_2x3.npy", DT_F32, 2, {2, 3}, f4, sizeof f4},
        {"f8_3.npy", DT_F64, 1, {3}, f8, sizeof f8},
        {"i1_4.npy", DT_I8, 1, {4}, i1, sizeof i1},
        {"u1_4.npy", DT_U8, 1, {4}, u1, sizeof u1},
        {"i4_2x2.npy", DT_I32, 2, {2, 2}, i4, sizeof i4},
        {"i8_3.npy", DT_I64, 1, {3}, i8, sizeof i8},
        {"b1_5.npy", DT_BOOL, 1, {5}, b1, sizeof b1},
        {"scalar_f4.npy", DT_F32, 0, {0}, sc, sizeof sc},
        {"empty_f4_0x3.npy", DT_F32, 2, {0, 3}, NULL, 0},
        {"rank8_f4.npy", DT_F32, 8, {1, 2, 1, 2, 1, 2, 1, 1}, r8, sizeof r8},
        {"v2_f4_2x3.npy", DT_F32, 2, {2, 3}, f4, sizeof f4},
        {"v3_f4_2x3.npy", DT_F32, 2, {2, 3}, f4, sizeof f4},
    };
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        Tensor t;
        char err[512] = "";
        CHECK(npy_file(g_data, W[i].file, &t, err, sizeof err), "%s: got \"%s\" expected success", W[i].file, err);
        Shape want = mkshape(W[i].rank, W[i].d);
        bool good = t.dtype == W[i].t && shape_eq(&t.shape, &want) && t.nbytes == W[i].nbytes &&
                    (t.nbytes == 0 ? t.data == NULL : memcmp(t.data, W[i].data, t.nbytes) == 0);
        tensor_free(&t);
        CHECK(good, "%s: got %s %s %zu bytes expected %s %s %zu bytes with the known values", W[i].file,
              dtype_name(t.dtype), SHAPE_STR(&t.shape), t.nbytes, dtype_name(W[i].t), SHAPE_STR(&want), W[i].nbytes);
    }
}

static void t_npy_data_refused(void) {
    static const struct { const char *file, *want; } W[] = {
        {"bad_fortran_f4_3x4.npy", "fortran_order True (column-major data, shape [3, 4]) is not supported"},
        {"bad_be_f4_3.npy", "big-endian data ('>f4') is not supported"},
        {"bad_f2_3.npy", "unsupported dtype float16 ('<f2')"},
        {"bad_u2_3.npy", "unsupported dtype uint16 ('<u2')"},
        {"bad_c8_2.npy", "unsupported dtype complex64 ('<c8')"},
        {"bad_rank9_f4.npy", "shape has more than 8 dimensions"},
        {"bad_struct_2.npy", "structured dtypes"},
        {"bad_U3_2.npy", "unsupported dtype '<U3'"},
    };
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        Tensor t;
        char err[512] = "";
        bool ok = npy_file(g_data, W[i].file, &t, err, sizeof err);
        if (ok)
            tensor_free(&t);
        CHECK_ERR(ok, err, W[i].want);
    }
}

/* A .npy image with the given version and header text, then data. */
static void make_npy(ByteBuf *b, int major, const char *header, const void *data, size_t n) {
    size_t hl = strlen(header);
    b->n = 0;
    put(b, "\x93NUMPY", 6);
    put_le(b, (uint64_t)major, 1);
    put_le(b, 0, 1);
    put_le(b, hl, major == 1 ? 2 : 4);
    put(b, header, hl);
    put(b, data, n);
}

static void t_npy_header_variants(void) {
    static const float f[6] = {1, 2, 3, 4, 5, 6};
    static const struct { const char *h; DType t; int rank; int64_t d[3]; size_t n; } W[] = {
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", DT_F32, 2, {2, 3}, 24},
        {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}\n", DT_F32, 2, {2, 3}, 24},
        {"{\"fortran_order\":False,\"shape\":(6,),\"descr\":\"<f4\"}      \n", DT_F32, 1, {6}, 24},
        {"  {  'descr' :  '<f4' ,\t'fortran_order' : False ,\n 'shape' : ( 3 , 2 , ) , }  ", DT_F32, 2, {3, 2}, 24},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }", DT_F32, 2, {2, 3}, 24},
        {"{'descr': '=f4', 'fortran_order': False, 'shape': (6,), }", DT_F32, 1, {6}, 24},
        {"{'descr': 'f4', 'fortran_order': False, 'shape': (6,), }", DT_F32, 1, {6}, 24},
        {"{'descr': 'float32', 'fortran_order': False, 'shape': (6,), }", DT_F32, 1, {6}, 24},
        {"{'descr': '|u1', 'fortran_order': False, 'shape': (24,), }", DT_U8, 1, {24}, 24},
        {"{'descr': '>i1', 'fortran_order': False, 'shape': (24,), }", DT_I8, 1, {24}, 24},
        {"{'descr': '<i1', 'fortran_order': False, 'shape': (2, 12), }", DT_I8, 2, {2, 12}, 24},
        {"{'descr': '|b1', 'fortran_order': False, 'shape': (4, 6), }", DT_BOOL, 2, {4, 6}, 24},
        {"{'descr': '?', 'fortran_order': False, 'shape': (24,), }", DT_BOOL, 1, {24}, 24},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", DT_F64, 1, {3}, 24},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (1, 6), }", DT_I32, 2, {1, 6}, 24},
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", DT_I64, 1, {3}, 24},
        /* Column-major equals row-major when at most one dim exceeds 1. */
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (1, 6, 1), }", DT_F32, 3, {1, 6, 1}, 24},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", DT_F32, 1, {6}, 24},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 0, 3), }", DT_F32, 3, {2, 0, 3}, 0},
    };
    ByteBuf b = {0};
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        for (int major = 1; major <= 3; major++) {
            make_npy(&b, major, W[i].h, f, W[i].n);
            Tensor t;
            char err[512] = "";
            bool ok = npy_decode(b.p, b.n, &t, err, sizeof err);
            if (!ok)
                free(b.p);
            CHECK(ok, "case %zu version %d: got \"%s\" expected success", i, major, err);
            Shape want = mkshape(W[i].rank, W[i].d);
            bool good = t.dtype == W[i].t && shape_eq(&t.shape, &want) && t.nbytes == W[i].n &&
                        (t.nbytes == 0 || memcmp(t.data, f, t.nbytes) == 0);
            tensor_free(&t);
            if (!good)
                free(b.p);
            CHECK(good, "case %zu: got %s %s expected %s %s", i, dtype_name(t.dtype), SHAPE_STR(&t.shape),
                  dtype_name(W[i].t), SHAPE_STR(&want));
        }
    }
    free(b.p);
}

static void t_npy_header_refused(void) {
    static const float f[8] = {0};
    static const struct { const char *h; size_t n; const char *want; } W[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24, "fortran_order True"},
        {"{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }", 24, "big-endian data ('>f8')"},
        {"{'descr': '|f4', 'fortran_order': False, 'shape': (6,), }", 24, "byte order '|'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", 24, "shape is not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [6], }", 24, "expected a shape tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-6,), }", 24, "negative dimension"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 24, "is larger than"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536), }", 24, "has more than 2147483647 elements"},
        {"{'descr': '<f4', 'fortran_order': False, }", 24, "missing key 'shape'"},
        {"{'fortran_order': False, 'shape': (6,), }", 24, "missing key 'descr'"},
        {"{'descr': '<f4', 'shape': (6,), }", 24, "missing key 'fortran_order'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'extra': 1}", 24, "unexpected key 'extra'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", 24, "key 'descr' appears twice"},
        {"{'descr': '<f4', 'fortran_order': false, 'shape': (6,), }", 24, "expected True or False"},
        {"{'descr': '<f4', 'fortran_order': Falsey, 'shape': (6,), }", 24, "expected True or False"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (6,), }", 24, "expected ',' or '}'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), } x", 24, "unexpected text after the dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,", 24, "at the end of the header"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (6,), }", 24, "bad .npy header"},
        {"('descr', '<f4')", 24, "expected '{'"},
        {"", 24, "expected '{'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 20, "data is 20 bytes but shape [2, 3] of float32 needs 24"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 28, "data is 28 bytes but shape [2, 3] of float32 needs 24"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 0, "data is 0 bytes but shape [] of float32 needs 4"},
        {"{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }", 6, "unsupported dtype float16 ('<f2')"},
        {"{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (3,), }", 24, "unsupported dtype '<M8[ns]'"},
        {"{'descr': 'O', 'fortran_order': False, 'shape': (3,), }", 24, "unsupported dtype 'O'"},
        {"{'descr': '', 'fortran_order': False, 'shape': (3,), }", 24, "unsupported dtype ''"},
    };
    ByteBuf b = {0};
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        make_npy(&b, 1, W[i].h, f, W[i].n);
        Tensor t;
        char err[512] = "";
        bool ok = npy_decode(b.p, b.n, &t, err, sizeof err);
        if (ok)
            tensor_free(&t);
        if (ok || !strstr(err, W[i].want))
            free(b.p);
        CHECK(!ok && strstr(err, W[i].want), "case %zu: got \"%s\" expected \"%s\"", i, ok ? "success" : err,
              W[i].want);
    }

    /* framing: magic, version, header length */
    Tensor t;
    char err[512];
    make_npy(&b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f, 8);
    uint8_t *img = xmalloc(b.n);
    memcpy(img, b.p, b.n);
    size_t n = b.n;
    free(b.p);
    b.p = NULL;
    b.n = b.cap = 0;
    CHECK_ERR(npy_decode((const uint8_t *)"PK\3\4abcdefgh", 12, &t, err, sizeof err), err, "not a .npy file");
    CHECK_ERR(npy_decode(img, 5, &t, err, sizeof err), err, "needs at least 10 bytes");
    CHECK_ERR(npy_decode(img, 9, &t, err, sizeof err), err, "needs at least 10 bytes");
    CHECK_ERR(npy_decode(img, 40, &t, err, sizeof err), err, "truncated: the header needs");
    img[6] = 4;
    CHECK_ERR(npy_decode(img, n, &t, err, sizeof err), err, "unsupported .npy format version 4.0");
    img[6] = 1;
    img[7] = 1;
    CHECK_ERR(npy_decode(img, n, &t, err, sizeof err), err, "unsupported .npy format version 1.1");
    img[7] = 0;
    img[6] = 2;                     /* 2.0 reads a 4-byte length: now far too long */
    CHECK_ERR(npy_decode(img, n, &t, err, sizeof err), err, "truncated: the header needs");
    CHECK_ERR(npy_decode(img, 11, &t, err, sizeof err), err, "needs at least 12 bytes");
    img[6] = 1;
    img[8] = 0xff;
    img[9] = 0xff;
    CHECK_ERR(npy_decode(img, n, &t, err, sizeof err), err, "truncated: the header needs 65535 bytes");
    img[8] = 4;                     /* header of 4 bytes: "{'de" */
    img[9] = 0;
    CHECK_ERR(npy_decode(img, n, &t, err, sizeof err), err, "bad .npy header");
    /* every prefix of a valid file fails cleanly */
    make_npy(&b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f, 8);
    free(img);
    for (size_t k = 0; k < b.n; k++) {
        uint8_t *cut = xmalloc(k);
        memcpy(cut, b.p, k);
        bool ok = npy_decode(cut, k, &t, err, sizeof err);
        free(cut);
        if (ok) {
            tensor_free(&t);
            free(b.p);
            CHECK(0, "got success for %zu bytes expected an error", k);
        }
    }
    free(b.p);
}

static void t_npy_encode_roundtrip(void) {
    static const struct { int rank; int64_t d[8]; } S[] = {
        {0, {0}}, {1, {1}}, {1, {5}}, {2, {2, 3}}, {4, {1, 3, 4, 5}}, {3, {2, 0, 3}}, {8, {1, 2, 1, 2, 1, 2, 1, 3}},
        {2, {1000000, 1}}, {1, {123}},
    };
    for (int dt = 0; dt < DT_I16; dt++) { /* (DT_I16 is not read from files) */
        for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
            Tensor t = make_tensor((DType)dt, S[i].rank, S[i].d), u;
            uint8_t *p;
            size_t n;
            char err[512] = "";
            npy_encode(&t, &p, &n);
            size_t hl = (size_t)p[8] | (size_t)p[9] << 8;
            bool framing = n == 10 + hl + t.nbytes && (10 + hl) % 64 == 0 && p[6] == 1 && p[7] == 0 &&
                           p[10 + hl - 1] == '\n' && memcmp(p, "\x93NUMPY", 6) == 0;
            bool ok = npy_decode(p, n, &u, err, sizeof err);
            free(p);
            bool same = ok && u.dtype == t.dtype && shape_eq(&u.shape, &t.shape) && u.nbytes == t.nbytes &&
                        (t.nbytes == 0 ? u.data == NULL : memcmp(u.data, t.data, t.nbytes) == 0);
            if (ok)
                tensor_free(&u);
            tensor_free(&t);
            CHECK(framing, "%s %s: got a bad frame (header %zu) expected version 1.0 and data at a multiple of 64",
                  dtype_name((DType)dt), SHAPE_STR(&t.shape), hl);
            CHECK(ok, "%s %s: got \"%s\" expected success", dtype_name((DType)dt), SHAPE_STR(&t.shape), err);
            CHECK(same, "%s %s: got a different tensor back expected the same", dtype_name((DType)dt),
                  SHAPE_STR(&t.shape));
        }
    }
    /* The header text, as numpy writes it. */
    int64_t d[] = {1, 3};
    Tensor t = make_tensor(DT_F32, 2, d);
    uint8_t *p;
    size_t n;
    npy_encode(&t, &p, &n);
    tensor_free(&t);
    static const char want[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }";
    bool good = n == 128 + 12 && memcmp(p + 10, want, sizeof want - 1) == 0 && p[127] == '\n' && p[126] == ' ';
    free(p);
    CHECK(good, "got a different header expected %s padded to 128 bytes", want);
}

//
// Files and the numpy check
//

static char g_tmpdir[PATH_MAX];

static bool make_tmpdir(void) {
    if (g_tmpdir[0])
        return true;
    const char *base = getenv("TMPDIR");
    sfmt(g_tmpdir, sizeof g_tmpdir, "%s/relayc-test-XXXXXX", base && base[0] ? base : "/tmp");
    if (mkdtemp(g_tmpdir) == NULL) {
        g_tmpdir[0] = '\0';
        return false;
    }
    return true;
}

static void remove_tmpdir(void) {
    if (!g_tmpdir[0])
        return;
    DIR *d = opendir(g_tmpdir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            char p[PATH_MAX];
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            path_join(p, sizeof p, g_tmpdir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(g_tmpdir);
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void t_files(void) {
    CHECK(make_tmpdir(), "got no temporary directory: %s", strerror(errno));
    char path[PATH_MAX], err[512] = "";
    path_join(path, sizeof path, g_tmpdir, "out.bin");
    mode_t old_mask = umask(022);
    bool wrote = write_file_atomic(path, "hello", 5, err, sizeof err);
    umask(old_mask);
    CHECK_OK(wrote, err);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
          "got mode %o expected 0644 under umask 022, as with creat()", (unsigned)(st.st_mode & 0777));
    CHECK_OK(write_file_atomic(path, "replaced!", 9, err, sizeof err), err);   /* over an existing file */
    uint8_t *p;
    size_t n;
    CHECK_OK(read_file(path, &p, &n, err, sizeof err), err);
    bool good = n == 9 && memcmp(p, "replaced!", 9) == 0 && p[9] == '\0';
    free(p);
    CHECK(good, "got %zu bytes expected \"replaced!\" and a NUL after it", n);
    CHECK(count_entries(g_tmpdir) == 1, "got %d entries expected 1 (no leftover temporaries)", count_entries(g_tmpdir));

    /* empty data; a NULL pointer with length 0 is fine */
    path_join(path, sizeof path, g_tmpdir, "empty.bin");
    CHECK_OK(write_file_atomic(path, NULL, 0, err, sizeof err), err);
    CHECK_OK(read_file(path, &p, &n, err, sizeof err), err);
    good = p != NULL && n == 0;
    free(p);
    CHECK(good, "got %zu bytes expected an empty buffer", n);

    /* failures leave nothing behind and say why */
    char bad[PATH_MAX];
    path_join(bad, sizeof bad, g_tmpdir, "no/such/dir/out.bin");
    CHECK_ERR(write_file_atomic(bad, "x", 1, err, sizeof err), err, "No such file or directory");
    CHECK_ERR(write_file_atomic(g_tmpdir, "x", 1, err, sizeof err), err, "cannot rename the temporary file over it");
    CHECK(count_entries(g_tmpdir) == 2, "got %d entries expected 2 (the failed rename removed its temporary)",
          count_entries(g_tmpdir));
    CHECK_ERR(read_file(g_tmpdir, &p, &n, err, sizeof err), err, "is a directory");
    CHECK(p == NULL && n == 0, "got a buffer after failure expected NULL, 0");
    CHECK_ERR(read_file(bad, &p, &n, err, sizeof err), err, "cannot open: No such file or directory");
}

static void sh_quote(char *out, size_t len, const char *s) {
    size_t o = 0;
    if (o + 1 < len)
        out[o++] = '\'';
    for (; *s && o + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else
            out[o++] = *s;
    }
    if (o + 1 < len)
        out[o++] = '\'';
    out[o] = '\0';
}

static bool python_has_numpy(void) {
    char q[PATH_MAX + 16], cmd[2 * PATH_MAX];
    sh_quote(q, sizeof q, g_python);
    sfmt(cmd, sizeof cmd, "%s -c 'import numpy' >/dev/null 2>&1", q);
    return system(cmd) == 0;
}

static void t_numpy_reads_encoded(void) {
    if (!g_python_given) {
        SKIP_UNLESS(python_has_numpy(), "no python3 with numpy (pass --python)");
    }
    CHECK(make_tmpdir(), "got no temporary directory: %s", strerror(errno));
    static const struct { DType t; int rank; int64_t d[4]; const char *shape; } W[] = {
        {DT_F32, 2, {2, 3}, "2,3"},  {DT_F64, 1, {7}, "7"},     {DT_I8, 3, {2, 3, 50}, "2,3,50"},
        {DT_U8, 1, {300}, "300"},    {DT_I32, 2, {4, 4}, "4,4"}, {DT_I64, 1, {9}, "9"},
        {DT_BOOL, 2, {3, 5}, "3,5"}, {DT_F32, 0, {0}, ""},       {DT_F32, 2, {0, 4}, "0,4"},
        {DT_F32, 4, {1, 3, 8, 8}, "1,3,8,8"},
    };
    char qp[PATH_MAX + 16], qs[PATH_MAX + 16], qf[PATH_MAX + 16];
    sh_quote(qp, sizeof qp, g_python);
    sh_quote(qs, sizeof qs, g_check);
    for (size_t i = 0; i < sizeof W / sizeof W[0]; i++) {
        Tensor t = make_tensor(W[i].t, W[i].rank, W[i].d);
        uint8_t *p;
        size_t n;
        char path[PATH_MAX], name[64], err[512] = "", cmd[4 * PATH_MAX];
        npy_encode(&t, &p, &n);
        tensor_free(&t);
        sfmt(name, sizeof name, "rt_%zu_%s.npy", i, dtype_name(W[i].t));
        path_join(path, sizeof path, g_tmpdir, name);
        bool ok = write_file_atomic(path, p, n, err, sizeof err);
        free(p);
        CHECK_OK(ok, err);
        sh_quote(qf, sizeof qf, path);
        sfmt(cmd, sizeof cmd, "%s %s %s --dtype %s --shape '%s' 1>&2", qp, qs, qf, dtype_name(W[i].t), W[i].shape);
        fflush(stdout);
        int rc = system(cmd);
        CHECK(rc == 0, "got status %d from %s expected 0 (its output is on stderr)", rc, cmd);
    }
}

//
// Main
//

typedef struct {
    const char *name;
    void (*fn)(void);
} Case;

static const Case CASES[] = {
    {"diag_fail formats and longjmps", t_diag_fail_longjmp},
    {"allocation helpers", t_alloc_helpers},
    {"dtype helpers", t_dtype_helpers},
    {"shape helpers", t_shape_helpers},
    {"base64 decodes, padding and trailing whitespace", t_base64_basic},
    {"base64 refuses bad length, characters, padding and the 0xFF quirk", t_base64_rejects},
    {"base64 round trip of all byte values", t_base64_all_bytes},
    {"blob: the real 0.8.0 float32 (2,3) blob", t_blob_real_080},
    {"blob: every supported dtype", t_blob_all_dtypes},
    {"blob: scalar and zero-size", t_blob_scalar_and_empty},
    {"blob: bad magic", t_blob_bad_magic},
    {"blob: device not CPU", t_blob_bad_device},
    {"blob: every truncation", t_blob_short},
    {"blob: data size mismatch", t_blob_size_mismatch},
    {"blob: ndim out of range", t_blob_bad_ndim},
    {"blob: negative and overflowing shapes", t_blob_bad_shape},
    {"blob: unsupported dtypes refused by name, lanes", t_blob_unsupported_dtypes},
    {"blob: 0.6 bool without data", t_blob_06_bool},
    {"params: small valid file", t_params_small},
    {"params: every truncation", t_params_truncated},
    {"params: hostile counts, lengths, names, magic", t_params_hostile},
    {"params: lenet-0.8.0-params fixture names and shapes", t_params_lenet_fixture},
    {"params: every fixture model.params", t_params_all_fixtures},
    {"blob: every b64ndarrays blob in the fixtures", t_blobs_in_fixture_json},
    {"npy: lenet-0.8.0-params input and expected", t_npy_lenet_fixture},
    {"npy: every fixture input_/expected_ file", t_npy_all_fixtures},
    {"npy: numpy-written files of every dtype and version", t_npy_data_accepted},
    {"npy: numpy-written files refused with a reason", t_npy_data_refused},
    {"npy: header spellings", t_npy_header_variants},
    {"npy: bad headers and framing", t_npy_header_refused},
    {"npy: encode/decode round trip", t_npy_encode_roundtrip},
    {"files: write_file_atomic and read_file", t_files},
    {"npy: numpy.load reads npy_encode output", t_numpy_reads_encoded},
};

static void usage(void) {
    fprintf(stderr, "usage: test_tensor_io [FIXTURES_DIR] [--data DIR] [--python PY] [--check SCRIPT]\n");
    exit(2);
}

int main(int argc, char **argv) {
    /* defaults beside this source file */
    char here[PATH_MAX];
    sfmt(here, sizeof here, "%s", __FILE__);
    char *slash = strrchr(here, '/');
    if (slash)
        *slash = '\0';
    else
        sfmt(here, sizeof here, ".");
    path_join(g_data, sizeof g_data, here, "data");
    path_join(g_check, sizeof g_check, here, "check_npy_roundtrip.py");
    g_python = getenv("PYTHON") && getenv("PYTHON")[0] ? getenv("PYTHON") : "python3";

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            sfmt(g_data, sizeof g_data, "%s", argv[++i]);
        else if (strcmp(argv[i], "--check") == 0 && i + 1 < argc)
            sfmt(g_check, sizeof g_check, "%s", argv[++i]);
        else if (strcmp(argv[i], "--python") == 0 && i + 1 < argc) {
            g_python = argv[++i];
            g_python_given = true;
        } else if (argv[i][0] == '-' || g_fixtures)
            usage();
        else
            g_fixtures = argv[i];
    }

    size_t ncases = sizeof CASES / sizeof CASES[0];
    int failures = 0;
    printf("1..%zu\n", ncases);
    for (size_t i = 0; i < ncases; i++) {
        g_failed = g_skipped = false;
        g_why[0] = '\0';
        CASES[i].fn();
        if (g_failed) {
            printf("not ok %zu - %s: %s\n", i + 1, CASES[i].name, g_why);
            failures++;
        } else if (g_skipped)
            printf("ok %zu - %s # SKIP %s\n", i + 1, CASES[i].name, g_why);
        else
            printf("ok %zu - %s\n", i + 1, CASES[i].name);
        fflush(stdout);
    }
    remove_tmpdir();
    return failures ? 1 : 0;
}
