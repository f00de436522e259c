/*
 * qtuned_harness.c: runs compiled relayc models with integer (or any) inputs and outputs,
 * with canaries around every buffer. Built by tests/kernels/test_qtuned.py with a generated
 * table of models (models.c).
 *
 * Usage: qtuned_harness DIR
 * For every model NAME of the table: reads DIR/NAME.in0, .in1, ... (raw bytes), runs
 * NAME_run_generic twice and writes DIR/NAME.out0, ... (raw bytes); prints one line per
 * model, "NAME ok" or "NAME error: WHAT". Inputs are malloc'd at their exact size (ASan sees
 * overreads); the outputs and the workspace sit between GUARD bytes of canary. The first
 * run starts with every output byte 0xa5, the second with 0x5a: an element never written
 * differs between the two runs, which is an error, as is any write outside the buffers.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*RunGeneric)(const void *const *, void *const *, void *, const void *);

typedef struct {
    const char *name;
    RunGeneric run;
    long workspace;         /* bytes */
    int nin, nout;
    long in_bytes[4], out_bytes[4];
} QTunedModel;

extern const QTunedModel qtuned_models[];
extern const int qtuned_model_count;

#define GUARD 256               /* bytes each side; a multiple of 16 */

static unsigned char *guarded(long bytes, int fill)
{
    unsigned char *p = NULL;
    if (posix_memalign((void **)&p, 64, (size_t)bytes + 2 * GUARD)) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(p, fill, (size_t)bytes + 2 * GUARD);
    return p;
}

static int guards_intact(const unsigned char *p, long bytes, int fill)
{
    for (long i = 0; i < GUARD; i++)
        if (p[i] != fill || p[GUARD + bytes + i] != fill)
            return 0;
    return 1;
}

static int read_bytes(const char *path, unsigned char *dst, long count)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(dst, 1, (size_t)count, f);
    fclose(f);
    return got == (size_t)count;
}

static int write_bytes(const char *path, const unsigned char *src, long count)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t put = fwrite(src, 1, (size_t)count, f);
    return fclose(f) == 0 && put == (size_t)count;
}

/* One run with every canary byte fill; the outputs (their bytes) are left in ob. */
static const char *run_once(const QTunedModel *t, const void *const *in, unsigned char **ob, int fill)
{
    void *out[4] = { 0 };
    unsigned char *ws = guarded(t->workspace, fill);
    const char *err = NULL;
    for (int k = 0; k < t->nout; k++) {
        ob[k] = guarded(t->out_bytes[k], fill);
        out[k] = ob[k] + GUARD;
    }
    if (t->run(in, out, ws + GUARD, NULL))
        err = "run returned an error";
    if (!err && !guards_intact(ws, t->workspace, fill))
        err = "write outside the workspace";
    for (int k = 0; k < t->nout && !err; k++)
        if (!guards_intact(ob[k], t->out_bytes[k], fill))
            err = "write outside an output";
    free(ws);
    return err;
}

int main(int argc, char **argv)
{
    char path[4096];
    int failed = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: qtuned_harness DIR\n");
        return 2;
    }
    for (int m = 0; m < qtuned_model_count; m++) {
        const QTunedModel *t = &qtuned_models[m];
        const void *in[4] = { 0 };
        unsigned char *a[4] = { 0 }, *b[4] = { 0 };
        const char *err = NULL;
        for (int k = 0; k < t->nin && !err; k++) {
            unsigned char *p = malloc((size_t)(t->in_bytes[k] ? t->in_bytes[k] : 1));
            snprintf(path, sizeof path, "%s/%s.in%d", argv[1], t->name, k);
            if (!p || !read_bytes(path, p, t->in_bytes[k]))
                err = "cannot read an input";
            in[k] = p;
        }
        if (!err)
            err = run_once(t, in, a, 0xa5);
        if (!err)
            err = run_once(t, in, b, 0x5a);
        for (int k = 0; k < t->nout && !err; k++) {
            if (memcmp(a[k] + GUARD, b[k] + GUARD, (size_t)t->out_bytes[k]))
                err = "an output element is never written (the canaries differ)";
            snprintf(path, sizeof path, "%s/%s.out%d", argv[1], t->name, k);
            if (!err && !write_bytes(path, a[k] + GUARD, t->out_bytes[k]))
                err = "cannot write an output";
        }
        if (err) {
            printf("%s error: %s\n", t->name, err);
            failed++;
        } else {
            printf("%s ok\n", t->name);
        }
        for (int k = 0; k < t->nin; k++)
            free((void *)in[k]);
        for (int k = 0; k < t->nout; k++) {
            free(a[k]);
            free(b[k]);
        }
    }
    return failed ? 1 : 0;
}
