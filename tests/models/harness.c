/*
 * harness.c: a generic test harness for one library emitted by relayc.
 *
 * Build (from the directory holding NAME.h, NAME.c and the constants; U is NAME in capitals):
 *   cc -std=c99 -I. -DMODEL_HEADER='"NAME.h"' -DMODEL=NAME [-DMODEL_BIN] \
 *      -DH_WORKSPACE_SIZE=U_WORKSPACE_SIZE -DH_WORKSPACE_ALIGN=U_WORKSPACE_ALIGN \
 *      -DH_NUM_INPUTS=U_NUM_INPUTS -DH_NUM_OUTPUTS=U_NUM_OUTPUTS -DH_OK=U_OK \
 *      -DH_ERR_NULL=U_ERR_NULL -DH_ERR_ALIGN=U_ERR_ALIGN \
 *      [-DH_CONSTANTS_SIZE=U_CONSTANTS_SIZE -DH_ERR_CONSTANTS=U_ERR_CONSTANTS \
 *       -DH_ERR_CHECKSUM=U_ERR_CHECKSUM] harness.c NAME.c [NAME_constants.c] -lm
 * MODEL_BIN: the library was compiled with --constants bin. run_case.py does this.
 *
 * Run:  harness DIR [NAME.bin]
 * Reads DIR/in<k>.raw (raw little-endian bytes, one file per input in argument order),
 * runs the model through NAME_run_generic, writes DIR/out<k>.raw. Prints one line per
 * descriptor ("input K HEXNAME DTYPE RANK D0,..,D7 BYTES", "output ..."), one line per
 * check ("ok WHAT" or "FAIL WHAT: DETAIL") and exits 0 when every check passed, 1 when
 * one failed, 2 on a usage or I/O error.
 *
 * Checks: every buffer (inputs, outputs, workspace, constants) sits between guard regions
 * that must stay untouched; outputs and the workspace are pre-filled with a canary; a
 * second run with other canaries must give the same output bytes (so nothing is read
 * before it is written); inputs and constants must not change; the status codes for a
 * NULL pointer, a misaligned pointer and (bin mode) a corrupted blob; a failing call
 * must not write to the outputs.
 */
#include MODEL_HEADER

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define RUN_GENERIC CAT(MODEL, _run_generic)
#define INPUTS CAT(MODEL, _inputs)
#define OUTPUTS CAT(MODEL, _outputs)
/* The header's macros, passed by name (-DH_WORKSPACE_SIZE=NAME_WORKSPACE_SIZE, ...): the
 * capitalised prefix cannot be made from MODEL by the preprocessor, and pasting it from
 * another macro would expand it again (a model named "model" gives MODEL_...). */
#define WS_SIZE H_WORKSPACE_SIZE
#define WS_ALIGN H_WORKSPACE_ALIGN
#define NUM_IN H_NUM_INPUTS
#define NUM_OUT H_NUM_OUTPUTS
#define ST_OK H_OK
#define ST_NULL H_ERR_NULL
#define ST_ALIGN H_ERR_ALIGN
#ifdef MODEL_BIN
#define CONST_SIZE H_CONSTANTS_SIZE
#define ST_CONSTANTS H_ERR_CONSTANTS
#define ST_CHECKSUM H_ERR_CHECKSUM
#endif

#ifdef HARNESS_SANITIZE
/* Built with -fsanitize=address: every buffer ends where its allocation ends, so ASan sees
 * any access past it (reads included, which guard bytes cannot show). */
#define GUARD 0
#else
#define GUARD 64                /* guard bytes either side of each buffer */
#endif
#define GUARD_BYTE 0xE7
#define MAX_IO 64

static int failures;

static void ok(const char *what)
{
    printf("ok %s\n", what);
}

#if defined(__GNUC__)
static void fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
static void fail(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", what);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

/* A buffer of size bytes at (64-aligned address + skew), with guard bytes either side. */
typedef struct {
    unsigned char *raw;         /* what malloc returned */
    unsigned char *p;           /* the buffer */
    size_t size;
    size_t skew;
} Guarded;

static void guarded_alloc(Guarded *g, size_t size, size_t skew)
{
#ifdef HARNESS_SANITIZE
    /* malloc's alignment (16 under ASan) plus skew; the buffer ends the allocation */
    size_t total = skew % 16 + size;
    g->raw = (unsigned char *)malloc(total ? total : 1);
    if (!g->raw) {
        fprintf(stderr, "harness: out of memory\n");
        exit(2);
    }
    g->p = g->raw + skew % 16;
#else
    size_t total = 64 + GUARD + skew + size + GUARD;
    unsigned char *base;
    g->raw = (unsigned char *)malloc(total);
    if (!g->raw) {
        fprintf(stderr, "harness: out of memory\n");
        exit(2);
    }
    base = g->raw + ((64 - (size_t)((uintptr_t)g->raw % 64)) % 64);
    memset(g->raw, GUARD_BYTE, total);
    g->p = base + GUARD + skew;
#endif
    g->size = size;
    g->skew = skew;
}

static int guards_intact(const Guarded *g)
{
    size_t i;
    for (i = 0; i < (size_t)GUARD; i++)
        if (g->p[-1 - (long)i] != GUARD_BYTE || g->p[g->size + i] != GUARD_BYTE)
            return 0;
    return 1;
}

static size_t dtype_size(const char *dt)
{
    if (!strcmp(dt, "float64") || !strcmp(dt, "int64"))
        return 8;
    if (!strcmp(dt, "float32") || !strcmp(dt, "int32"))
        return 4;
    if (!strcmp(dt, "int8") || !strcmp(dt, "uint8") || !strcmp(dt, "bool"))
        return 1;
    return 0;
}

static unsigned char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    size_t cap = 0, n = 0;
    if (!f)
        return NULL;
    for (;;) {
        size_t got;
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            data = (unsigned char *)realloc(data, cap);
            if (!data) {
                fclose(f);
                return NULL;
            }
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *len = n;
    return data;
}

static void print_info(const char *what, int k, const CAT(MODEL, _tensor_info) *t)
{
    const char *c;
    int d;
    printf("%s %d ", what, k);
    if (!*t->name)
        printf("-");
    for (c = t->name; *c; c++)
        printf("%02x", (unsigned)(unsigned char)*c);
    printf(" %s %d ", t->dtype, t->rank);
    for (d = 0; d < 8; d++)
        printf("%s%lld", d ? "," : "", (long long)t->shape[d]);
    printf(" %lu\n", (unsigned long)t->bytes);
}

static Guarded in[MAX_IO], out[MAX_IO], ws, blob;
static unsigned char *in_copy[MAX_IO], *first[MAX_IO];
#ifdef MODEL_BIN
static unsigned char *blob_copy;
#endif
static const void *in_ptr[MAX_IO];
static void *out_ptr[MAX_IO];
static int n_in, n_out;

static void fill_outputs(int byte)
{
    int k;
    for (k = 0; k < n_out; k++)
        memset(out[k].p, byte, out[k].size);
}

static int outputs_hold(int byte)
{
    int k;
    size_t i;
    for (k = 0; k < n_out; k++)
        for (i = 0; i < out[k].size; i++)
            if (out[k].p[i] != (unsigned char)byte)
                return 0;
    return 1;
}

static int all_guards_intact(void)
{
    int k;
    for (k = 0; k < n_in; k++)
        if (!guards_intact(&in[k]))
            return 0;
    for (k = 0; k < n_out; k++)
        if (!guards_intact(&out[k]))
            return 0;
    return guards_intact(&ws) && guards_intact(&blob);
}

static const void *constants_ptr(void)
{
#ifdef MODEL_BIN
    return blob.p;
#else
    return NULL;
#endif
}

/* One call that must fail with want and leave the outputs alone. */
static void expect_status(const char *what, const void *const *ins, void *const *outs, void *w,
                          const void *cb, int want)
{
    int rc;
    fill_outputs(0x3C);
    rc = RUN_GENERIC(ins, outs, w, cb);
    if (rc != want)
        fail(what, "returned %d, expected %d", rc, want);
    else if (!outputs_hold(0x3C))
        fail(what, "returned %d but wrote to an output", rc);
    else if (!all_guards_intact())
        fail(what, "returned %d but wrote outside a buffer", rc);
    else
        ok(what);
}

int main(int argc, char **argv)
{
    char path[4096];
    int k, rc;
    size_t len;
    const char *dir;
    if (argc < 2) {
        fprintf(stderr, "usage: harness DIR [NAME.bin]\n");
        return 2;
    }
    dir = argv[1];
    n_in = NUM_IN;
    n_out = NUM_OUT;
    if (n_in > MAX_IO || n_out > MAX_IO || n_out < 1) {
        fprintf(stderr, "harness: %d inputs, %d outputs: unsupported\n", n_in, n_out);
        return 2;
    }
    if ((long)(sizeof INPUTS / sizeof INPUTS[0]) != (n_in ? n_in : 1) ||
        (long)(sizeof OUTPUTS / sizeof OUTPUTS[0]) != n_out)
        fail("descriptor arrays", "have %ld and %ld entries, not NUM_INPUTS/NUM_OUTPUTS",
             (long)(sizeof INPUTS / sizeof INPUTS[0]), (long)(sizeof OUTPUTS / sizeof OUTPUTS[0]));
    if (WS_ALIGN < 1 || (WS_ALIGN & (WS_ALIGN - 1)) || WS_ALIGN > 64)
        fail("WORKSPACE_ALIGN", "is %ld, not a power of two up to 64", (long)WS_ALIGN);
    for (k = 0; k < n_in; k++)
        print_info("input", k, &INPUTS[k]);
    for (k = 0; k < n_out; k++)
        print_info("output", k, &OUTPUTS[k]);

    /* inputs: at an address aligned to 8 but not to 16 */
    for (k = 0; k < n_in; k++) {
        unsigned char *data;
        size_t es = dtype_size(INPUTS[k].dtype);
        sprintf(path, "%.4000s/in%d.raw", dir, k);
        data = read_all(path, &len);
        if (!data) {
            fprintf(stderr, "harness: cannot read %s\n", path);
            return 2;
        }
        if (len != INPUTS[k].bytes) {
            fprintf(stderr, "harness: %s holds %lu bytes, the input needs %lu\n", path,
                    (unsigned long)len, (unsigned long)INPUTS[k].bytes);
            return 2;
        }
        if (!es)
            fail("input dtype", "unknown dtype of input %d", k);
        guarded_alloc(&in[k], len, 8);
        memcpy(in[k].p, data, len);
        in_copy[k] = data;
        in_ptr[k] = in[k].p;
    }
    for (k = 0; k < n_out; k++) {
        guarded_alloc(&out[k], OUTPUTS[k].bytes, 8);
        out_ptr[k] = out[k].p;
        first[k] = (unsigned char *)malloc(OUTPUTS[k].bytes + 1);
        if (!dtype_size(OUTPUTS[k].dtype))
            fail("output dtype", "unknown dtype of output %d", k);
    }
    /* the workspace: aligned to exactly WORKSPACE_ALIGN (not more, when it is under 64) */
    guarded_alloc(&ws, WS_SIZE, WS_ALIGN < 64 ? WS_ALIGN : 0);
    /* the constants: aligned to 16, not 32 */
#ifdef MODEL_BIN
    if (argc < 3) {
        fprintf(stderr, "harness: bin mode needs the NAME.bin path\n");
        return 2;
    }
    {
        unsigned char *data = read_all(argv[2], &len);
        if (!data) {
            fprintf(stderr, "harness: cannot read %s\n", argv[2]);
            return 2;
        }
        if (len != (size_t)CONST_SIZE)
            fail("CONSTANTS_SIZE", "is %ld but the .bin holds %lu bytes", (long)CONST_SIZE, (unsigned long)len);
        guarded_alloc(&blob, len, 16);
        memcpy(blob.p, data, len);
        blob_copy = data;
    }
#else
    guarded_alloc(&blob, 0, 0);
#endif

    /* run 1: outputs and workspace full of one canary */
    fill_outputs(0xA5);
    memset(ws.p, 0xA5, ws.size);
    rc = RUN_GENERIC(in_ptr, out_ptr, ws.p, constants_ptr());
    if (rc != ST_OK) {
        fail("run 1", "returned %d, expected %d", rc, ST_OK);
        return 1;
    }
    ok("run 1 returned OK");
    if (!all_guards_intact())
        fail("run 1 guards", "a write outside a buffer (input, output, workspace or constants)");
    else
        ok("run 1 wrote nothing outside its buffers");
    for (k = 0; k < n_out; k++) {
        memcpy(first[k], out[k].p, out[k].size);
        sprintf(path, "%.4000s/out%d.raw", dir, k);
        {
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(out[k].p, 1, out[k].size, f) != out[k].size || fclose(f)) {
                fprintf(stderr, "harness: cannot write %s\n", path);
                return 2;
            }
        }
    }
    /* run 2: other canaries (NaN bytes); the outputs must not change */
    fill_outputs(0xFF);
    memset(ws.p, 0xFF, ws.size);
    rc = RUN_GENERIC(in_ptr, out_ptr, ws.p, constants_ptr());
    if (rc != ST_OK)
        fail("run 2", "returned %d, expected %d", rc, ST_OK);
    else {
        int same = 1;
        for (k = 0; k < n_out; k++)
            if (memcmp(first[k], out[k].p, out[k].size)) {
                size_t i = 0;
                while (first[k][i] == out[k].p[i])
                    i++;
                fail("run 2 gives the same outputs", "output %d differs at byte %lu", k, (unsigned long)i);
                same = 0;
                break;
            }
        if (same)
            ok("run 2 gives the same output bytes with other canaries");
        if (!all_guards_intact())
            fail("run 2 guards", "a write outside a buffer");
    }
    for (k = 0; k < n_in; k++)
        if (memcmp(in_copy[k], in[k].p, in[k].size))
            fail("inputs unchanged", "input %d was written to", k);
#ifdef MODEL_BIN
    if (memcmp(blob_copy, blob.p, blob.size))
        fail("constants unchanged", "the constants blob was written to");
#endif

    /* status codes */
    if (ST_NULL != 1 || ST_ALIGN != 2 || ST_OK != 0)
        fail("status code values", "ERR_NULL %d, ERR_ALIGN %d (documented: 1, 2)", ST_NULL, ST_ALIGN);
    expect_status("NULL output pointer",
                  in_ptr, (void *const *)(out_ptr[0] = NULL, out_ptr), ws.p, constants_ptr(), ST_NULL);
    out_ptr[0] = out[0].p;
    expect_status("NULL outputs array", in_ptr, NULL, ws.p, constants_ptr(), ST_NULL);
    if (n_in > 0) {
        const void *keep = in_ptr[0];
        Guarded odd;
        in_ptr[0] = NULL;
        expect_status("NULL input pointer", in_ptr, out_ptr, ws.p, constants_ptr(), ST_NULL);
        in_ptr[0] = keep;
        expect_status("NULL inputs array", NULL, out_ptr, ws.p, constants_ptr(), ST_NULL);
        if (dtype_size(INPUTS[0].dtype) > 1) {
            guarded_alloc(&odd, in[0].size, 9);
            memcpy(odd.p, in[0].p, in[0].size);
            in_ptr[0] = odd.p;
            expect_status("misaligned input pointer", in_ptr, out_ptr, ws.p, constants_ptr(), ST_ALIGN);
            in_ptr[0] = keep;
            free(odd.raw);
        }
    }
    if (dtype_size(OUTPUTS[0].dtype) > 1) {
        out_ptr[0] = out[0].p - 1; /* never written if the check works (the guard would show it) */
        expect_status("misaligned output pointer", in_ptr, out_ptr, ws.p, constants_ptr(), ST_ALIGN);
        out_ptr[0] = out[0].p;
    }
    if (WS_SIZE > 0) {
        expect_status("NULL workspace", in_ptr, out_ptr, NULL, constants_ptr(), ST_NULL);
        expect_status("misaligned workspace (+1)", in_ptr, out_ptr, ws.p - 1, constants_ptr(), ST_ALIGN);
        if (WS_ALIGN > 8)
            expect_status("misaligned workspace (+8)", in_ptr, out_ptr, ws.p - 8, constants_ptr(),
                          ST_ALIGN);
    } else {
        rc = RUN_GENERIC(in_ptr, out_ptr, NULL, constants_ptr());
        if (rc != ST_OK)
            fail("NULL workspace when WORKSPACE_SIZE is 0", "returned %d, expected %d", rc, ST_OK);
        else
            ok("NULL workspace accepted when WORKSPACE_SIZE is 0");
    }
#ifdef MODEL_BIN
    if (ST_CONSTANTS != 3 || ST_CHECKSUM != 4)
        fail("status code values", "ERR_CONSTANTS %d, ERR_CHECKSUM %d (documented: 3, 4)",
             ST_CONSTANTS, ST_CHECKSUM);
    expect_status("NULL constants", in_ptr, out_ptr, ws.p, NULL, ST_NULL);
    {
        Guarded b2;
        size_t at;
        unsigned long n_const = 0;
        guarded_alloc(&b2, blob.size, 8);
        memcpy(b2.p, blob.p, blob.size);
        expect_status("constants at an 8-byte aligned address", in_ptr, out_ptr, ws.p, b2.p, ST_ALIGN);
        free(b2.raw);
        /* corruptions, in a 16-aligned copy */
        guarded_alloc(&b2, blob.size, 16);
        memcpy(b2.p, blob.p, blob.size);
        b2.p[0] ^= 0x20;
        expect_status("wrong magic", in_ptr, out_ptr, ws.p, b2.p, ST_CONSTANTS);
        memcpy(b2.p, blob.p, blob.size);
        b2.p[8] ^= 0x02;
        expect_status("wrong version", in_ptr, out_ptr, ws.p, b2.p, ST_CONSTANTS);
        memcpy(b2.p, blob.p, blob.size);
        b2.p[16] ^= 0x40;
        expect_status("wrong size field", in_ptr, out_ptr, ws.p, b2.p, ST_CONSTANTS);
        memcpy(b2.p, blob.p, blob.size);
        b2.p[24] ^= 0x01;
        expect_status("wrong checksum field", in_ptr, out_ptr, ws.p, b2.p, ST_CONSTANTS);
        if (blob.size >= 32)
            n_const = (unsigned long)blob.p[28] | (unsigned long)blob.p[29] << 8 |
                      (unsigned long)blob.p[30] << 16 | (unsigned long)blob.p[31] << 24;
        /* one byte of tensor data: the first tensor's first byte (else the last byte) */
        at = blob.size - 1;
        if (n_const > 0 && blob.size >= 72) {
            unsigned long long off = 0;
            int i;
            for (i = 7; i >= 0; i--)
                off = off << 8 | blob.p[64 + i];
            if (off < blob.size)
                at = (size_t)off;
        }
        if (blob.size > 64) {
            memcpy(b2.p, blob.p, blob.size);
            b2.p[at] ^= 0x01;
            expect_status("one data byte flipped", in_ptr, out_ptr, ws.p, b2.p, ST_CHECKSUM);
        }
        free(b2.raw);
    }
#endif
    /* a final good run after the failures: still the same answer */
    fill_outputs(0x00);
    rc = RUN_GENERIC(in_ptr, out_ptr, ws.p, constants_ptr());
    for (k = 0; rc == ST_OK && k < n_out; k++)
        if (memcmp(first[k], out[k].p, out[k].size))
            rc = -1;
    if (rc != ST_OK)
        fail("run 3", "returned %d or different outputs", rc);
    else
        ok("run 3 after the failing calls gives the same outputs");
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
