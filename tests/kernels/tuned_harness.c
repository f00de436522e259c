/*
 * tuned_harness.c: runs compiled relayc models with canaries around every buffer.
 * Built by tests/kernels/test_tuned.py with a generated table of models (models.c).
 *
 * Usage: tuned_harness DIR
 * For every model NAME of the table: reads DIR/NAME.in0, .in1, ... (raw float32), runs
 * NAME_run_generic and writes DIR/NAME.out0, ...; prints one line per model, "NAME ok" or
 * "NAME error: WHAT". Inputs are malloc'd at their exact size (ASan sees overreads); the
 * outputs and the workspace sit between GUARD bytes of canary, and the outputs start
 * filled with a canary NaN, so an element never written shows up in the comparison.
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
    long in_count[4], out_count[4];     /* floats */
} TunedModel;

extern const TunedModel tuned_models[];
extern const int tuned_model_count;

#define GUARD 256               /* bytes each side; a multiple of 16 */
#define CANARY_BYTE 0xa5
#define CANARY_FLOAT 0x7fc0deadu

static unsigned char *guarded(long bytes)
{
    unsigned char *p = NULL;
    if (posix_memalign((void **)&p, 64, (size_t)bytes + 2 * GUARD)) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(p, CANARY_BYTE, (size_t)bytes + 2 * GUARD);
    return p;
}

static int guards_intact(const unsigned char *p, long bytes)
{
    for (long i = 0; i < GUARD; i++)
        if (p[i] != CANARY_BYTE || p[GUARD + bytes + i] != CANARY_BYTE)
            return 0;
    return 1;
}

static int read_floats(const char *path, float *dst, long count)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(dst, sizeof(float), (size_t)count, f);
    fclose(f);
    return got == (size_t)count;
}

static int write_floats(const char *path, const float *src, long count)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t put = fwrite(src, sizeof(float), (size_t)count, f);
    return fclose(f) == 0 && put == (size_t)count;
}

int main(int argc, char **argv)
{
    char path[4096];
    int failed = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: tuned_harness DIR\n");
        return 2;
    }
    for (int m = 0; m < tuned_model_count; m++) {
        const TunedModel *t = &tuned_models[m];
        const void *in[4] = { 0 };
        void *out[4] = { 0 };
        unsigned char *ob[4] = { 0 }, *ws = guarded(t->workspace);
        const char *err = NULL;
        for (int k = 0; k < t->nin && !err; k++) {
            float *p = malloc((size_t)(t->in_count[k] ? t->in_count[k] : 1) * sizeof(float));
            snprintf(path, sizeof path, "%s/%s.in%d", argv[1], t->name, k);
            if (!p || !read_floats(path, p, t->in_count[k]))
                err = "cannot read an input";
            in[k] = p;
        }
        for (int k = 0; k < t->nout; k++) {
            uint32_t c = CANARY_FLOAT;
            ob[k] = guarded(t->out_count[k] * 4);
            for (long i = 0; i < t->out_count[k]; i++)
                memcpy(ob[k] + GUARD + 4 * i, &c, 4);
            out[k] = ob[k] + GUARD;
        }
        if (!err) {
            int rc = t->run(in, out, ws + GUARD, NULL);
            if (rc)
                err = "run returned an error";
        }
        if (!err && !guards_intact(ws, t->workspace))
            err = "write outside the workspace";
        for (int k = 0; k < t->nout && !err; k++) {
            if (!guards_intact(ob[k], t->out_count[k] * 4))
                err = "write outside an output";
            snprintf(path, sizeof path, "%s/%s.out%d", argv[1], t->name, k);
            if (!err && !write_floats(path, out[k], t->out_count[k]))
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
        for (int k = 0; k < t->nout; k++)
            free(ob[k]);
        free(ws);
    }
    return failed ? 1 : 0;
}
