/*
 * tensor_io.c: dtypes, shapes, tensors, base64, NDArray blobs, params files, .npy,
 * and whole-file read/write.
 *
 * Every decoder here reads untrusted bytes. The rule: check a size against the
 * bytes that remain BEFORE allocating anything it sizes, so a hostile file can
 * never drive an allocation larger than itself (plus a small constant factor).
 * Decoders do not call diag_fail: they write a one-line reason into err and
 * return false, and the caller adds the file and place.
 *
 * All binary formats are little-endian. Tensors in memory are little-endian too
 * (the generated C embeds them as bytes); on a big-endian host the element
 * bytes are swapped on the way in and out, so the in-memory data is host order.
 */
#define _POSIX_C_SOURCE 200809L

#include "relayc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define BLOB_MAGIC   0xDD5E40F096B4A13FULL  /* kTVMNDArrayMagic */
#define PARAMS_MAGIC 0xF7E58D4F05049CB7ULL  /* kTVMNDArrayListMagic */
#define BLOB_HEADER  32                     /* bytes before the shape */
#define KDLCPU       1

//
// Errors
//

static void seterr(char *err, size_t errlen, const char *fmt, ...) RC_PRINTF(3, 4);
static void seterr(char *err, size_t errlen, const char *fmt, ...) {
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* One line: a message may quote bytes from the file. */
    for (char *c = err; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
}

/* Quotes untrusted bytes for a message: 'abc', non-printables as \xNN, long ones cut. */
static const char *quote_bytes(const uint8_t *s, size_t n, char *buf, size_t len) {
    size_t o = 0, i;
    if (len < 8) {
        if (len)
            buf[0] = '\0';
        return buf;
    }
    buf[o++] = '\'';
    for (i = 0; i < n; i++) {
        unsigned c = s[i];
        if (o + 9 >= len)           /* room for "\xNN", "'...", NUL */
            break;
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
            buf[o++] = (char)c;
        } else {
            snprintf(buf + o, len - o, "\\x%02X", c);
            o += 4;
        }
    }
    buf[o++] = '\'';
    if (i < n) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

//
// Dtypes
//

static const struct {
    const char *name;
    const char *ctype;
    size_t size;
    uint8_t code, bits;             /* DLDataType, lanes 1 */
    const char *npy;                /* .npy descr written by npy_encode */
} DTYPES[DT_COUNT] = {
    [DT_F32]  = {"float32", "float",   4, 2, 32, "<f4"},
    [DT_F64]  = {"float64", "double",  8, 2, 64, "<f8"},
    [DT_I8]   = {"int8",    "int8_t",  1, 0, 8,  "|i1"},
    [DT_U8]   = {"uint8",   "uint8_t", 1, 1, 8,  "|u1"},
    [DT_I32]  = {"int32",   "int32_t", 4, 0, 32, "<i4"},
    [DT_I64]  = {"int64",   "int64_t", 8, 0, 64, "<i8"},
    [DT_BOOL] = {"bool",    "uint8_t", 1, 1, 1,  "|b1"},
    [DT_I16]  = {"int16",   "int16_t", 2, 0, 16, "<i2"},
};

/* The dtypes a model, params file or .npy file may hold (DT_I16 is relayc's own). */
#define DT_READABLE DT_I16

static bool dtype_ok(DType t) { return (unsigned)t < DT_COUNT; }

const char *dtype_name(DType t) { return dtype_ok(t) ? DTYPES[t].name : "invalid"; }
const char *dtype_ctype(DType t) { return dtype_ok(t) ? DTYPES[t].ctype : "invalid"; }
size_t dtype_size(DType t) { return dtype_ok(t) ? DTYPES[t].size : 0; }

bool dtype_parse(const char *name, DType *out) {
    for (int i = 0; i < DT_READABLE; i++) {
        if (strcmp(name, DTYPES[i].name) == 0) {
            *out = (DType)i;
            return true;
        }
    }
    return false;
}

const char *dtype_set_str(unsigned set, const char *sep, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int t = 0; t < DT_COUNT && at < len; t++)
        if (set & DTS(t))
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? sep : "", DTYPES[t].name);
    return buf;
}

int qnn_type_code(DType dt)
{
    return dt == DT_I8 ? 0 : dt == DT_U8 ? 1 : dt == DT_I32 ? 2 : -1;
}

void dtype_range(DType dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case DT_I8: *lo = -128, *hi = 127; break;
    case DT_U8: *lo = 0, *hi = 255; break;
    case DT_BOOL: *lo = 0, *hi = 1; break;
    case DT_I32: *lo = INT32_MIN, *hi = INT32_MAX; break;
    default: *lo = INT64_MIN, *hi = INT64_MAX; break;
    }
}

int64_t qnn_int_param(DType dt, double v)
{
    int64_t lo, hi;
    dtype_range(dt, &lo, &hi);
    if (isnan(v))
        return 0;
    if (v <= (double)lo)
        return lo;
    if (v >= (double)hi)
        return hi;
    return (int64_t)v;
}

static bool dtype_from_dl(uint8_t code, uint8_t bits, DType *out) {
    for (int i = 0; i < DT_READABLE; i++) {
        if (DTYPES[i].code == code && DTYPES[i].bits == bits) {
            *out = (DType)i;
            return true;
        }
    }
    return false;
}

/* TVM's DLDataType2String (§5.1), for messages. */
static const char *dl_dtype_str(uint8_t code, uint8_t bits, uint16_t lanes, char *buf, size_t len) {
    static const char *const names[] = {"int", "uint", "float", "handle", "bfloat", NULL,
                                        "e4m3_float", "e5m2_float"};
    int o;
    if (bits == 0)
        o = snprintf(buf, len, "void");
    else if (code == 1 && bits == 1)
        o = snprintf(buf, len, "bool");
    else if (code == 3)
        o = snprintf(buf, len, "handle");
    else if (code < sizeof names / sizeof names[0] && names[code] != NULL)
        o = snprintf(buf, len, "%s%u", names[code], (unsigned)bits);
    else if (code >= 129)
        o = snprintf(buf, len, "custom[%u]%u", (unsigned)code, (unsigned)bits);
    else
        o = snprintf(buf, len, "type code %u with %u bits", (unsigned)code, (unsigned)bits);
    if (lanes != 1 && o >= 0 && (size_t)o < len)
        snprintf(buf + o, len - (size_t)o, "x%u", (unsigned)lanes);
    return buf;
}

//
// Shapes and tensors
//

void shape_strides(const Shape *s, int64_t *st)
{
    int64_t k = 1;
    for (int d = s->rank - 1; d >= 0; d--) {
        st[d] = k;
        k *= s->dim[d];
    }
}

/* Saturates: INT64_MAX when a dim is negative or the product overflows, so that a
 * caller's "shape_numel(s) > RC_MAX_ELEMENTS" check also catches those shapes. */
int64_t shape_numel(const Shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (s->dim[i] < 0)
            return INT64_MAX;
    for (int i = 0; i < s->rank; i++)
        if (s->dim[i] == 0)
            return 0;
    for (int i = 0; i < s->rank; i++) {
        if (n > INT64_MAX / s->dim[i])
            return INT64_MAX;
        n *= s->dim[i];
    }
    return n;
}

bool shape_eq(const Shape *a, const Shape *b) {
    if (a->rank != b->rank)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

char *shape_str(const Shape *s, char *buf, size_t len) {
    size_t o = 0;
    if (len == 0)
        return buf;
    buf[0] = '\0';
    int rank = s->rank < 0 ? 0 : s->rank > RC_MAX_RANK ? RC_MAX_RANK : s->rank;
    for (int i = 0; i <= rank && o < len; i++) {
        int k;
        if (i == rank)
            k = snprintf(buf + o, len - o, i == 0 ? "[]" : "]");
        else
            k = snprintf(buf + o, len - o, "%s%lld", i == 0 ? "[" : ", ", (long long)s->dim[i]);
        if (k < 0)
            break;
        o += (size_t)k;
    }
    return buf;
}

void tensor_free(Tensor *t) {
    if (t == NULL)
        return;
    free(t->data);
    t->data = NULL;
    t->nbytes = 0;
}

/* Validates a shape read from a file: dims in [0, RC_MAX_ELEMENTS] and their
 * product at most RC_MAX_ELEMENTS. No intermediate can overflow: both factors
 * stay at most 2^31. */
static bool shape_check(const Shape *s, int64_t *numel, char *err, size_t errlen) {
    char sb[256];
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dim[i] < 0) {
            seterr(err, errlen, "negative dimension %lld in shape %s", (long long)s->dim[i],
                   shape_str(s, sb, sizeof sb));
            return false;
        }
        if (s->dim[i] > RC_MAX_ELEMENTS) {
            seterr(err, errlen, "dimension %lld in shape %s is larger than %lld", (long long)s->dim[i],
                   shape_str(s, sb, sizeof sb), (long long)RC_MAX_ELEMENTS);
            return false;
        }
    }
    for (int i = 0; i < s->rank; i++)
        if (s->dim[i] == 0)
            n = 0;
    for (int i = 0; i < s->rank && n != 0; i++) {
        n *= s->dim[i];
        if (n > RC_MAX_ELEMENTS) {
            seterr(err, errlen, "shape %s has more than %lld elements", shape_str(s, sb, sizeof sb),
                   (long long)RC_MAX_ELEMENTS);
            return false;
        }
    }
    *numel = n;
    return true;
}

static bool host_is_le(void) {
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Little-endian bytes <-> host order, element by element (a no-op on LE hosts). */
static void swap_to_host(void *data, size_t nbytes, size_t esize) {
    if (esize <= 1 || host_is_le())
        return;
    unsigned char *p = data;
    for (size_t o = 0; o + esize <= nbytes; o += esize)
        for (size_t i = 0; i < esize / 2; i++) {
            unsigned char c = p[o + i];
            p[o + i] = p[o + esize - 1 - i];
            p[o + esize - 1 - i] = c;
        }
}

/* Copies n bytes of little-endian elements into a new tensor buffer (NULL when n == 0). */
static void *copy_data(const uint8_t *src, size_t n, size_t esize) {
    if (n == 0)
        return NULL;
    void *d = xmalloc(n);
    memcpy(d, src, n);
    swap_to_host(d, n, esize);
    return d;
}

//
// Base64
//

static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool base64_decode(const char *s, size_t len, uint8_t **out, size_t *outlen) {
    *out = NULL;
    *outlen = 0;
    while (len > 0 && is_space((unsigned char)s[len - 1]))
        len--;
    if (len % 4 != 0)
        return false;
    size_t pad = 0;
    if (len >= 1 && s[len - 1] == '=')
        pad = len >= 2 && s[len - 2] == '=' ? 2 : 1;
    uint8_t *o = xmalloc(len / 4 * 3);
    size_t k = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        uint32_t v = 0;
        for (size_t j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)s[i + j];
            int x;
            if (c == '=' && last && j >= 4 - pad)
                x = 0;
            else if ((x = b64_value(c)) < 0) {
                free(o);
                return false;   /* a bad character, a stray '=', or TVM's 0xFF quirk byte */
            }
            v = v << 6 | (uint32_t)x;
        }
        o[k++] = (uint8_t)(v >> 16);
        if (!last || pad < 2)
            o[k++] = (uint8_t)(v >> 8);
        if (!last || pad < 1)
            o[k++] = (uint8_t)v;
    }
    *out = o;
    *outlen = k;
    return true;
}

//
// Little-endian reader over untrusted bytes
//

typedef struct {
    const uint8_t *p;
    size_t n, pos;
    size_t base;            /* offset of p[0] in the file, for messages */
    char *err;
    size_t errlen;
} Rd;

static size_t rd_left(const Rd *r) { return r->n - r->pos; }

static bool rd_need(Rd *r, size_t k, const char *what) {
    if (rd_left(r) < k) {
        seterr(r->err, r->errlen, "truncated at byte %zu: %s needs %zu bytes, only %zu left",
               r->base + r->pos, what, k, rd_left(r));
        return false;
    }
    return true;
}

static uint64_t le_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static bool rd_u64(Rd *r, const char *what, uint64_t *v) {
    if (!rd_need(r, 8, what))
        return false;
    *v = le_u64(r->p + r->pos);
    r->pos += 8;
    return true;
}

static int64_t to_i64(uint64_t v) {
    /* two's complement without implementation-defined conversion */
    return v <= (uint64_t)INT64_MAX ? (int64_t)v : -(int64_t)(~v) - 1;
}

static int32_t to_i32(uint32_t v) {
    return v <= (uint32_t)INT32_MAX ? (int32_t)v : -(int32_t)(~v) - 1;
}

//
// NDArray blobs (§11)
//

static bool blob_read(Rd *r, Tensor *t) {
    char *err = r->err;
    size_t errlen = r->errlen;
    char db[64], sb[256];
    uint64_t magic, reserved;
    memset(t, 0, sizeof *t);

    if (!rd_u64(r, "magic", &magic))
        return false;
    if (magic != BLOB_MAGIC) {
        seterr(err, errlen, "bad magic 0x%016llX (expected 0x%016llX)%s", (unsigned long long)magic,
               (unsigned long long)BLOB_MAGIC,
               magic == PARAMS_MAGIC ? ": this is a params file, not an NDArray record" : "");
        return false;
    }
    if (!rd_u64(r, "reserved", &reserved) || !rd_need(r, BLOB_HEADER - 16, "the record header"))
        return false;
    const uint8_t *h = r->p + r->pos;
    int32_t device_type = to_i32((uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24);
    int32_t ndim = to_i32((uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24);
    uint8_t code = h[12], bits = h[13];
    uint16_t lanes = (uint16_t)(h[14] | h[15] << 8);
    r->pos += BLOB_HEADER - 16;

    if (device_type != KDLCPU) {
        seterr(err, errlen, "device_type %ld is not CPU (expected 1, kDLCPU)", (long)device_type);
        return false;
    }
    if (ndim < 0 || ndim > RC_MAX_RANK) {
        seterr(err, errlen, "ndim %ld is out of range (0 to %d)", (long)ndim, RC_MAX_RANK);
        return false;
    }
    if (lanes != 1) {
        seterr(err, errlen, "vector dtype %s (lanes %u) is not supported",
               dl_dtype_str(code, bits, lanes, db, sizeof db), (unsigned)lanes);
        return false;
    }
    DType dt;
    if (!dtype_from_dl(code, bits, &dt)) {
        seterr(err, errlen, "unsupported dtype %s (code %u, bits %u)",
               dl_dtype_str(code, bits, lanes, db, sizeof db), (unsigned)code, (unsigned)bits);
        return false;
    }

    Shape s;
    memset(&s, 0, sizeof s);
    s.rank = ndim;
    if (!rd_need(r, 8 * (size_t)ndim, "shape"))
        return false;
    for (int i = 0; i < ndim; i++)
        s.dim[i] = to_i64(le_u64(r->p + r->pos + 8 * (size_t)i));
    r->pos += 8 * (size_t)ndim;
    int64_t numel;
    if (!shape_check(&s, &numel, err, errlen))
        return false;

    uint64_t dbs_raw;
    if (!rd_u64(r, "data_byte_size", &dbs_raw))
        return false;
    int64_t dbs = to_i64(dbs_raw);
    int64_t want = numel * (int64_t)dtype_size(dt);
    if (dbs == 0 && want != 0 && bits < 8) {
        seterr(err, errlen,
               "%s tensor of shape %s has no data (data_byte_size 0): the TVM 0.6 writer dropped "
               "sub-byte data; re-export the model with TVM 0.7 or later",
               dtype_name(dt), shape_str(&s, sb, sizeof sb));
        return false;
    }
    if (dbs != want) {
        seterr(err, errlen, "data_byte_size is %lld but shape %s of %s needs %lld", (long long)dbs,
               shape_str(&s, sb, sizeof sb), dtype_name(dt), (long long)want);
        return false;
    }
    if ((uint64_t)want > SIZE_MAX) {
        seterr(err, errlen, "%lld bytes of data do not fit in memory here", (long long)want);
        return false;
    }
    if (!rd_need(r, (size_t)want, "data"))
        return false;
    t->dtype = dt;
    t->shape = s;
    t->nbytes = (size_t)want;
    t->data = copy_data(r->p + r->pos, t->nbytes, dtype_size(dt));
    r->pos += t->nbytes;
    return true;
}

bool blob_decode(const uint8_t *p, size_t n, Tensor *t, size_t *used, char *err, size_t errlen) {
    Rd r = {p, n, 0, 0, err, errlen};
    if (!blob_read(&r, t))
        return false;
    if (used)
        *used = r.pos;
    return true;
}

//
// Params files (§12)
//

void params_free(NamedTensor *v, int count) {
    if (v == NULL)
        return;
    for (int i = 0; i < count; i++) {
        free(v[i].name);
        tensor_free(&v[i].t);
    }
    free(v);
}

static int cmp_name_ptr(const void *a, const void *b) {
    const NamedTensor *x = *(const NamedTensor *const *)a, *y = *(const NamedTensor *const *)b;
    return strcmp(x->name, y->name);
}

/* Smallest possible bytes per entry: name length (8) + the fixed part of a record
 * (32 header + 8 data_byte_size). */
#define PARAMS_MIN_ENTRY (8 + BLOB_HEADER + 8)

bool params_decode(const uint8_t *p, size_t n, NamedTensor **out, int *count, char *err, size_t errlen) {
    Rd r = {p, n, 0, 0, err, errlen};
    uint64_t magic, reserved, cnt, arrays;
    char qb[128];
    NamedTensor *v = NULL;
    size_t nv;
    int ndone;
    *out = NULL;
    *count = 0;

    if (!rd_u64(&r, "magic", &magic))
        return false;
    if (magic != PARAMS_MAGIC) {
        /* name what it looks like instead, when it is a file people confuse with it */
        const char *like = n >= 6 && !memcmp(p, "\x93NUMPY", 6) ? ".npy"
                         : n >= 4 && !memcmp(p, "PK\x03\x04", 4) ? ".npz (a zip archive)"
                         : n >= 1 && (p[0] == '{' || p[0] == '[') ? "JSON document" : NULL;
        if (like) {
            seterr(err, errlen, "not a TVM params file (it looks like a %s)", like);
            return false;
        }
        seterr(err, errlen, "bad magic 0x%016llX (expected 0x%016llX)%s", (unsigned long long)magic,
               (unsigned long long)PARAMS_MAGIC,
               magic == BLOB_MAGIC ? ": this is a single NDArray record, not a params file" : "");
        return false;
    }
    if (!rd_u64(&r, "reserved", &reserved) || !rd_u64(&r, "name count", &cnt))
        return false;
    /* Each entry takes at least PARAMS_MIN_ENTRY bytes, and the array count 8. */
    size_t room = rd_left(&r) < 8 ? 0 : (rd_left(&r) - 8) / PARAMS_MIN_ENTRY;
    if (cnt > room || cnt > INT_MAX) {
        seterr(err, errlen, "name count %llu is impossible: %zu bytes left hold at most %zu entries",
               (unsigned long long)cnt, rd_left(&r), room);
        return false;
    }
    v = xcalloc((size_t)cnt ? (size_t)cnt : 1, sizeof *v);
    for (nv = 0; nv < cnt; nv++) {
        uint64_t len;
        size_t at = r.pos;
        if (!rd_u64(&r, "name length", &len))
            goto fail;
        if (len > rd_left(&r)) {
            seterr(err, errlen, "name %zu at byte %zu has length %llu but only %zu bytes are left", nv, at,
                   (unsigned long long)len, rd_left(&r));
            goto fail;
        }
        const uint8_t *name = r.p + r.pos;
        if (len > RC_MAX_NAME) {
            seterr(err, errlen, "name %zu at byte %zu is %llu bytes long (maximum %d): %s", nv, at,
                   (unsigned long long)len, RC_MAX_NAME, quote_bytes(name, (size_t)len, qb, sizeof qb));
            goto fail;
        }
        if (memchr(name, 0, (size_t)len) != NULL) {
            seterr(err, errlen, "name %zu at byte %zu contains a NUL byte: %s", nv, at,
                   quote_bytes(name, (size_t)len, qb, sizeof qb));
            goto fail;
        }
        v[nv].name = xstrndup((const char *)name, (size_t)len);
        r.pos += (size_t)len;
    }
    if (!rd_u64(&r, "array count", &arrays))
        goto fail;
    if (arrays != cnt) {
        seterr(err, errlen, "array count %llu does not match name count %llu", (unsigned long long)arrays,
               (unsigned long long)cnt);
        goto fail;
    }
    /* Names bind by name: a duplicate would make the binding ambiguous. */
    if (cnt > 1) {
        NamedTensor **sorted = xmalloc((size_t)cnt * sizeof *sorted);
        for (size_t i = 0; i < cnt; i++)
            sorted[i] = &v[i];
        qsort(sorted, (size_t)cnt, sizeof *sorted, cmp_name_ptr);
        for (size_t i = 1; i < cnt; i++) {
            if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
                const char *nm = sorted[i]->name;
                seterr(err, errlen, "duplicate name %s",
                       quote_bytes((const uint8_t *)nm, strlen(nm), qb, sizeof qb));
                free(sorted);
                goto fail;
            }
        }
        free(sorted);
    }
    for (ndone = 0; (uint64_t)ndone < cnt; ndone++) {
        char sub[512];
        const char *nm = v[ndone].name;
        size_t at = r.pos;
        Rd sr = {r.p + r.pos, rd_left(&r), 0, r.pos, sub, sizeof sub};
        if (!blob_read(&sr, &v[ndone].t)) {
            seterr(err, errlen, "array %d of %llu (%s, at byte %zu): %s", ndone, (unsigned long long)cnt,
                   quote_bytes((const uint8_t *)nm, strlen(nm), qb, sizeof qb), at, sub);
            goto fail;
        }
        r.pos += sr.pos;
    }
    if (rd_left(&r) != 0) {
        seterr(err, errlen, "%zu unexpected bytes after the last array (at byte %zu)", rd_left(&r), r.pos);
        goto fail;
    }
    *out = v;
    *count = (int)cnt;
    return true;

fail:
    params_free(v, (int)cnt);   /* entries not reached are still zeroed */
    return false;
}

//
// .npy
//

static const uint8_t NPY_MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* A cursor over the header text, a Python dict literal. */
typedef struct {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
} Py;

static void py_ws(Py *p) {
    while (p->i < p->n && is_space((unsigned char)p->s[p->i]))
        p->i++;
}

static bool py_eat(Py *p, char c) {
    py_ws(p);
    if (p->i < p->n && p->s[p->i] == c) {
        p->i++;
        return true;
    }
    return false;
}

static bool py_fail(Py *p, const char *what) {
    char qb[48];
    size_t k = p->n - p->i < 16 ? p->n - p->i : 16;
    if (p->i >= p->n)
        seterr(p->err, p->errlen, "bad .npy header: %s at the end of the header", what);
    else
        seterr(p->err, p->errlen, "bad .npy header: %s at %s", what,
               quote_bytes((const uint8_t *)p->s + p->i, k, qb, sizeof qb));
    return false;
}

/* A quoted string without escapes, into buf. */
static bool py_str(Py *p, char *buf, size_t len) {
    py_ws(p);
    if (p->i >= p->n || (p->s[p->i] != '\'' && p->s[p->i] != '"'))
        return py_fail(p, "expected a string");
    char q = p->s[p->i++];
    size_t k = 0;
    while (p->i < p->n && p->s[p->i] != q) {
        if (p->s[p->i] == '\\' || p->s[p->i] == '\n')
            return py_fail(p, "unsupported character in a string");
        if (k + 1 >= len)
            return py_fail(p, "string too long");
        buf[k++] = p->s[p->i++];
    }
    if (p->i >= p->n)
        return py_fail(p, "unterminated string");
    p->i++;
    buf[k] = '\0';
    return true;
}

static bool py_word(Py *p, const char *w) {
    size_t k = strlen(w);
    py_ws(p);
    if (p->n - p->i >= k && memcmp(p->s + p->i, w, k) == 0 &&
        (p->i + k == p->n || !(p->s[p->i + k] == '_' || (p->s[p->i + k] >= 'A' && p->s[p->i + k] <= 'Z') ||
                               (p->s[p->i + k] >= 'a' && p->s[p->i + k] <= 'z') ||
                               (p->s[p->i + k] >= '0' && p->s[p->i + k] <= '9')))) {
        p->i += k;
        return true;
    }
    return false;
}

/* A non-negative integer (a Python 2 'L' suffix allowed), capped at RC_MAX_ELEMENTS + 1. */
static bool py_dim(Py *p, int64_t *v) {
    py_ws(p);
    if (p->i < p->n && p->s[p->i] == '-')
        return py_fail(p, "negative dimension in shape");
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9')
        return py_fail(p, "expected an integer");
    int64_t x = 0;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
        if (x <= RC_MAX_ELEMENTS)
            x = x * 10 + (p->s[p->i] - '0');
        p->i++;
    }
    if (p->i < p->n && (p->s[p->i] == 'L' || p->s[p->i] == 'l'))
        p->i++;
    *v = x;                 /* > RC_MAX_ELEMENTS means "too large"; shape_check says so */
    return true;
}

/* "()", "(5,)", "(1, 3)", "(1, 3,)". */
static bool py_shape(Py *p, Shape *s) {
    memset(s, 0, sizeof *s);
    if (!py_eat(p, '('))
        return py_fail(p, "expected a shape tuple");
    if (py_eat(p, ')'))
        return true;
    for (;;) {
        int64_t d = 0;
        if (s->rank == RC_MAX_RANK) {
            seterr(p->err, p->errlen, "shape has more than %d dimensions", RC_MAX_RANK);
            return false;
        }
        if (!py_dim(p, &d))
            return false;
        s->dim[s->rank++] = d;
        if (py_eat(p, ')')) {
            if (s->rank == 1)       /* "(5)" is the integer 5 in Python, not a tuple */
                return py_fail(p, "shape is not a tuple (a one-element tuple is written (5,))");
            return true;
        }
        if (!py_eat(p, ','))
            return py_fail(p, "expected ',' or ')' in shape");
        if (py_eat(p, ')'))
            return true;
    }
}

/* Maps a descr such as '<f4' to a dtype. */
static bool npy_descr(const char *descr, DType *dt, char *err, size_t errlen) {
    static const struct { char kind; int size; const char *name; } UNSUP[] = {
        {'f', 2, "float16"}, {'f', 16, "float128"}, {'i', 2, "int16"}, {'u', 2, "uint16"},
        {'u', 4, "uint32"}, {'u', 8, "uint64"}, {'c', 8, "complex64"}, {'c', 16, "complex128"},
    };
    const char *d = descr;
    char order = '=';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=')
        order = *d++;
    char kind = *d ? *d++ : '\0';
    int size = 0;
    if (kind == '?' && *d == '\0')
        kind = 'b', size = 1;
    else {
        if (*d < '1' || *d > '9' || strlen(d) > 2)
            goto by_name;
        while (*d >= '0' && *d <= '9')
            size = size * 10 + (*d++ - '0');
        if (*d != '\0')
            goto by_name;
    }
    for (int i = 0; i < DT_READABLE; i++) {
        if (DTYPES[i].npy[1] == kind && (size_t)size == DTYPES[i].size) {
            if (size > 1 && order == '>') {
                seterr(err, errlen, "big-endian data ('%s') is not supported; convert it with "
                       "arr.astype('<%c%d')", descr, kind, size);
                return false;
            }
            if (size > 1 && order == '|') {
                seterr(err, errlen, "byte order '|' (not applicable) is wrong for the %d-byte type '%s'",
                       size, descr);
                return false;
            }
            /* '=' (native): the writer's host order; every supported host is little-endian. */
            *dt = (DType)i;
            return true;
        }
    }
    for (size_t i = 0; i < sizeof UNSUP / sizeof UNSUP[0]; i++) {
        if (UNSUP[i].kind == kind && UNSUP[i].size == size) {
            seterr(err, errlen, "unsupported dtype %s ('%s')", UNSUP[i].name, descr);
            return false;
        }
    }
    seterr(err, errlen, "unsupported dtype '%s'", descr);
    return false;
by_name:
    /* np.dtype() also takes names such as 'float32'. */
    if (dtype_parse(descr, dt))
        return true;
    seterr(err, errlen, "unsupported dtype '%s'", descr);
    return false;
}

bool npy_decode(const uint8_t *p, size_t n, Tensor *t, char *err, size_t errlen) {
    char sb[256];
    memset(t, 0, sizeof *t);
    if (n < 10 || memcmp(p, NPY_MAGIC, 6) != 0) {
        seterr(err, errlen, n < 10 && (n < 6 || memcmp(p, NPY_MAGIC, 6) == 0)
                                ? "truncated: a .npy file needs at least 10 bytes, this has %zu"
                                : "not a .npy file (no \\x93NUMPY magic; %zu bytes)", n);
        return false;
    }
    unsigned major = p[6], minor = p[7];
    size_t hlen, hstart;
    if (major == 1 && minor == 0) {
        hlen = (size_t)p[8] | (size_t)p[9] << 8;
        hstart = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
        if (n < 12) {
            seterr(err, errlen, "truncated: a version %u.0 .npy file needs at least 12 bytes, this has %zu",
                   major, n);
            return false;
        }
        hlen = (size_t)((uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24);
        hstart = 12;
    } else {
        seterr(err, errlen, "unsupported .npy format version %u.%u (1.0, 2.0 and 3.0 are read)", major, minor);
        return false;
    }
    if (hlen > n - hstart) {
        seterr(err, errlen, "truncated: the header needs %zu bytes, only %zu left", hlen, n - hstart);
        return false;
    }

    Py py = {(const char *)p + hstart, hlen, 0, err, errlen};
    char descr[64];
    bool have_descr = false, have_fortran = false, have_shape = false, fortran = false;
    Shape s;
    memset(&s, 0, sizeof s);
    if (!py_eat(&py, '{'))
        return py_fail(&py, "expected '{'");
    while (!py_eat(&py, '}')) {
        char key[32];
        if (!py_str(&py, key, sizeof key))
            return false;
        if (!py_eat(&py, ':'))
            return py_fail(&py, "expected ':'");
        bool *seen;
        if (strcmp(key, "descr") == 0) {
            seen = &have_descr;
            py_ws(&py);
            if (py.i < py.n && py.s[py.i] == '[') {
                seterr(err, errlen, "structured dtypes (a list descr) are not supported");
                return false;
            }
            if (!py_str(&py, descr, sizeof descr))
                return false;
        } else if (strcmp(key, "fortran_order") == 0) {
            seen = &have_fortran;
            if (py_word(&py, "True"))
                fortran = true;
            else if (py_word(&py, "False"))
                fortran = false;
            else
                return py_fail(&py, "expected True or False");
        } else if (strcmp(key, "shape") == 0) {
            seen = &have_shape;
            if (!py_shape(&py, &s))
                return false;
        } else {
            char qb[48];
            seterr(err, errlen, "bad .npy header: unexpected key %s",
                   quote_bytes((const uint8_t *)key, strlen(key), qb, sizeof qb));
            return false;
        }
        if (*seen) {
            seterr(err, errlen, "bad .npy header: key '%s' appears twice", key);
            return false;
        }
        *seen = true;
        if (!py_eat(&py, ',')) {
            if (!py_eat(&py, '}'))
                return py_fail(&py, "expected ',' or '}'");
            break;
        }
    }
    py_ws(&py);
    if (py.i != py.n)
        return py_fail(&py, "unexpected text after the dict");
    if (!have_descr || !have_fortran || !have_shape) {
        seterr(err, errlen, "bad .npy header: missing key '%s'",
               !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
        return false;
    }

    DType dt;
    if (!npy_descr(descr, &dt, err, errlen))
        return false;
    int64_t numel;
    if (!shape_check(&s, &numel, err, errlen))
        return false;
    if (fortran) {
        /* Column-major and row-major agree when at most one dimension exceeds 1. */
        int big = 0;
        for (int i = 0; i < s.rank; i++)
            big += s.dim[i] > 1;
        if (big > 1) {
            seterr(err, errlen, "fortran_order True (column-major data, shape %s) is not supported; "
                   "save np.ascontiguousarray(arr) instead", shape_str(&s, sb, sizeof sb));
            return false;
        }
    }
    size_t have = n - hstart - hlen;
    uint64_t want = (uint64_t)numel * dtype_size(dt);
    if (have != want) {
        seterr(err, errlen, "data is %zu bytes but shape %s of %s needs %llu", have,
               shape_str(&s, sb, sizeof sb), dtype_name(dt), (unsigned long long)want);
        return false;
    }
    t->dtype = dt;
    t->shape = s;
    t->nbytes = (size_t)want;
    t->data = copy_data(p + hstart + hlen, t->nbytes, dtype_size(dt));
    return true;
}

void npy_encode(const Tensor *t, uint8_t **out, size_t *outlen) {
    char dict[400];
    int k;
    if (!dtype_ok(t->dtype) || t->shape.rank < 0 || t->shape.rank > RC_MAX_RANK)
        unreachable();
    int64_t numel = shape_numel(&t->shape);
    size_t esize = dtype_size(t->dtype);
    /* A Tensor that breaks its own invariants is a bug in the caller. */
    if (numel > RC_MAX_ELEMENTS || (uint64_t)numel > SIZE_MAX / esize || (size_t)numel * esize != t->nbytes ||
        (t->nbytes != 0 && t->data == NULL))
        unreachable();

    k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                 DTYPES[t->dtype].npy);
    for (int i = 0; i < t->shape.rank; i++)
        k += snprintf(dict + k, sizeof dict - (size_t)k, "%s%lld", i ? ", " : "", (long long)t->shape.dim[i]);
    k += snprintf(dict + k, sizeof dict - (size_t)k, "%s), }", t->shape.rank == 1 ? "," : "");
    /* Pad with spaces and end with '\n' so the data starts at a multiple of 64, as numpy does. */
    size_t dl = (size_t)k;
    size_t total = 10 + dl + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = dl + pad + 1;
    size_t len = 10 + hlen + t->nbytes;
    uint8_t *o = xmalloc(len);
    memcpy(o, NPY_MAGIC, 6);
    o[6] = 1;
    o[7] = 0;
    o[8] = (uint8_t)(hlen & 0xff);
    o[9] = (uint8_t)(hlen >> 8);
    memcpy(o + 10, dict, dl);
    memset(o + 10 + dl, ' ', pad);
    o[10 + dl + pad] = '\n';
    if (t->nbytes) {
        memcpy(o + 10 + hlen, t->data, t->nbytes);
        swap_to_host(o + 10 + hlen, t->nbytes, esize);     /* host -> little-endian: the same swap */
    }
    *out = o;
    *outlen = len;
}

//
// Files
//

bool read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen) {
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        seterr(err, errlen, "cannot open: %s", strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        seterr(err, errlen, "cannot stat: %s", strerror(errno));
        close(fd);
        return false;
    }
    if (S_ISDIR(st.st_mode)) {
        seterr(err, errlen, "is a directory, not a file");
        close(fd);
        return false;
    }
    /* limit: the largest size accepted; the buffer holds limit + 1 bytes and a NUL. */
    uint64_t limit = (uint64_t)RC_MAX_FILE_BYTES;
    if (limit > SIZE_MAX - 2)
        limit = SIZE_MAX - 2;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > limit) {
        seterr(err, errlen, "file is %lld bytes, more than the limit of %llu", (long long)st.st_size,
               (unsigned long long)limit);
        close(fd);
        return false;
    }
    /* A regular file's size is a hint (it may change); pipes grow from 64 KiB. */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
    uint8_t *buf = xmalloc(cap + 1);
    size_t used = 0;
    for (;;) {
        if (used == cap) {
            if (used > limit)
                break;
            size_t ncap = cap > limit / 2 ? (size_t)limit + 1 : cap * 2;
            buf = xrealloc(buf, ncap + 1);
            cap = ncap;
        }
        size_t want = cap - used;
        if (want > ((size_t)1 << 30))
            want = (size_t)1 << 30;
        ssize_t k = read(fd, buf + used, want);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            seterr(err, errlen, "read error: %s", strerror(errno));
            free(buf);
            close(fd);
            return false;
        }
        if (k == 0)
            break;
        used += (size_t)k;
    }
    close(fd);
    if (used > limit) {
        seterr(err, errlen, "file is more than the limit of %llu bytes", (unsigned long long)limit);
        free(buf);
        return false;
    }
    buf[used] = '\0';           /* convenience for text parsers; not counted in *len */
    *out = buf;
    *len = used;
    return true;
}

bool write_file_temp(const char *path, const void *data, size_t len, char **tmp_out, char *err,
                     size_t errlen) {
    static const char suffix[] = ".tmpXXXXXX";
    size_t pl = strlen(path);
    char *tmp = xmalloc(pl + sizeof suffix);
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, suffix, sizeof suffix);
    const uint8_t *p = data;
    size_t done = 0;
    const char *what = "cannot create a temporary file beside it";
    bool created = false;
    *tmp_out = NULL;
    int fd = mkstemp(tmp);
    if (fd < 0)
        goto fail;
    created = true;
    *tmp_out = tmp;         /* visible at once, for a signal handler that removes it */
    /* mkstemp makes the file 0600; give it the mode a plain creat() would. */
    mode_t um = umask(0);
    umask(um);
    what = "cannot set the mode of the temporary file";
    if (fchmod(fd, (mode_t)0666 & ~um) != 0)
        goto fail;
    what = "write error";
    while (done < len) {
        size_t want = len - done;
        if (want > ((size_t)1 << 30))
            want = (size_t)1 << 30;
        ssize_t k = write(fd, p + done, want);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        if (k == 0) {               /* no progress and no error: treat as a full disk */
            errno = ENOSPC;
            goto fail;
        }
        done += (size_t)k;
    }
    what = "close error";
    int rc = close(fd);
    fd = -1;
    if (rc != 0)
        goto fail;
    return true;

fail:;
    int e = errno;
    *tmp_out = NULL;        /* before the unlink and free: a handler may look at any time */
    if (fd >= 0)
        close(fd);
    if (created)
        unlink(tmp);
    seterr(err, errlen, "%s: %s", what, strerror(e));
    free(tmp);
    return false;
}

bool write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen) {
    char *tmp;
    if (!write_file_temp(path, data, len, &tmp, err, errlen))
        return false;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        seterr(err, errlen, "cannot rename the temporary file over it: %s", strerror(e));
        return false;
    }
    free(tmp);
    return true;
}
