/*
 * tuned_common.h: what tuned_harness.c and qtuned_harness.c share: the table of models
 * that tests/kernels/tuned_common.py writes (models.c), buffers between GUARD bytes of
 * canary, and raw files read and written whole.
 */
#ifndef TUNED_COMMON_H
#define TUNED_COMMON_H

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
} TunedModel;

/* the table ends with an entry of NULLs, not counted */
extern const TunedModel tuned_models[];
extern const int tuned_model_count;

#define GUARD 256               /* bytes each side; a multiple of 16 */

/* static inline: models.c includes this header for the table alone, without a warning for
   the functions it does not use */

/* bytes between two GUARDs, 64-byte aligned, every byte (guards too) set to fill */
static inline unsigned char *guarded(long bytes, int fill)
{
    unsigned char *p = NULL;
    if (posix_memalign((void **)&p, 64, (size_t)bytes + 2 * GUARD)) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(p, fill, (size_t)bytes + 2 * GUARD);
    return p;
}

static inline int guards_intact(const unsigned char *p, long bytes, int fill)
{
    for (long i = 0; i < GUARD; i++)
        if (p[i] != fill || p[GUARD + bytes + i] != fill)
            return 0;
    return 1;
}

static inline int read_bytes(const char *path, unsigned char *dst, long count)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t got = fread(dst, 1, (size_t)count, f);
    fclose(f);
    return got == (size_t)count;
}

static inline int write_bytes(const char *path, const unsigned char *src, long count)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t put = fwrite(src, 1, (size_t)count, f);
    return fclose(f) == 0 && put == (size_t)count;
}

/* in[k] = the bytes of DIR/NAME.in<k>, malloc'd at their exact size (ASan sees overreads);
   NULL, or what went wrong (in[] is filled as far as it got: free them all either way) */
static inline const char *read_inputs(const char *dir, const TunedModel *t, const void **in)
{
    char path[4096];
    for (int k = 0; k < t->nin; k++) {
        unsigned char *p = malloc((size_t)(t->in_bytes[k] ? t->in_bytes[k] : 1));
        snprintf(path, sizeof path, "%s/%s.in%d", dir, t->name, k);
        in[k] = p;
        if (!p || !read_bytes(path, p, t->in_bytes[k]))
            return "cannot read an input";
    }
    return NULL;
}

#endif
