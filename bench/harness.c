/*
 * harness.c: times relayc's kernels and the baselines on every shape of cases.c.
 *
 * Usage: harness OUTDIR [--only relayc] [--models] [--samples N] [--min-sample SECONDS]
 *                [--label L] [--case SUBSTRING]
 * Prints one JSON object per line: {"case", "method", "label", "median_s", "min_s", "err"}
 * (methods: relayc, the run's target; generic, the same shape compiled with --target
 * generic, in the same rounds; naive, openblas, onednn, onednn_nchw)
 * (and "impl" for oneDNN: the implementation it picked, e.g. jit:avx512_core_amx_int8),
 * where err is the largest |y - naive| / max |naive| (the naive loops are the reference);
 * for the int8 shapes (bench_qcases) err is the largest |y - naive| in int8 steps. With
 * --models, a model that has a reference (OUTDIR/data/NAME.ref: PyTorch's output, gen.py)
 * is checked against it first (err relative to the largest output; over 1e-3 fails the
 * run); --case filters the models too.
 * Timing: each method gets 2 warm-up calls and a repetition count that makes one sample
 * last at least min-sample seconds; then `samples` rounds time one sample of every method
 * of the shape in turn (interleaved, so a change in machine load hits them alike); the
 * median and the minimum of the per-call times are printed. Every method reads weights of
 * its own (none finds another's warm in cache) and writes its own output. Times are the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time.
 * Run it pinned to one core with OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 (bench/run).
 */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int samples = 21;
static double min_sample = 0.02;
static const char *label = "";

/* The CPU time of this thread: every method runs in it (one thread), and the time slices a
 * loaded, shared machine gives other processes on the same core are not counted (a wall
 * clock counted them: medians several times too slow, unevenly across methods). */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef void (*Thunk)(void *ctx);

/* One method being timed. */
typedef struct {
    const char *name;
    Thunk f;
    void *ctx;
    long reps;
    double *v;              /* per-call time of each sample */
    double err;
} Method;

static void calibrate(Method *m)
{
    m->f(m->ctx);
    m->f(m->ctx);
    double t = now();
    m->f(m->ctx);
    double one = now() - t;
    m->reps = 1;
    if (samples > 1 && one > 0 && min_sample > one)
        m->reps = (long)(min_sample / one) + 1;
    m->v = malloc(sizeof(double) * (size_t)samples);
}

/* Times every method, interleaved; returns nothing, fills m[i].v sorted. */
static void measure_all(Method *m, int n)
{
    for (int i = 0; i < n; i++)
        calibrate(&m[i]);
    for (int s = 0; s < samples; s++)
        for (int i = 0; i < n; i++) {
            double t = now();
            for (long r = 0; r < m[i].reps; r++)
                m[i].f(m[i].ctx);
            m[i].v[s] = (now() - t) / (double)m[i].reps;
        }
    for (int i = 0; i < n; i++)
        qsort(m[i].v, (size_t)samples, sizeof(double), cmp_double);
}

static void *xalloc(size_t bytes)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes ? bytes : 64)) {
        fprintf(stderr, "harness: out of memory\n");
        exit(3);
    }
    memset(p, 0, bytes ? bytes : 64);
    return p;
}

/* OUTDIR/data/NAME.EXT: count elements of size bytes each */
static void *load(const char *dir, const char *name, const char *ext, long count, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data/%s.%s", dir, name, ext);
    void *p = xalloc((size_t)count * size);
    FILE *f = fopen(path, "rb");
    if (!f || fread(p, size, (size_t)count, f) != (size_t)count) {
        fprintf(stderr, "harness: cannot read %s\n", path);
        exit(3);
    }
    fclose(f);
    return p;
}

/* OUTDIR/data/NAME.EXT as count floats, or NULL when there is no such file */
static float *load_if(const char *dir, const char *name, const char *ext, long count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/data/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fclose(f);
    return load(dir, name, ext, count, sizeof(float));
}

typedef struct {
    const BenchCase *c;
    float *x, *w, *y;
    void *ws;
    DnnlOp *dnnl;
    BlasConv *blas;
    const BenchModel *m;
} Ctx;

static void t_relayc(void *p) { Ctx *c = p; c->c->relayc(c->x, c->y, c->ws); }
static void t_generic(void *p) { Ctx *c = p; c->c->generic(c->x, c->y, c->ws); }
static void t_naive(void *p) { Ctx *c = p; c->c->naive(c->x, c->w, c->y); }
static void t_dnnl(void *p) { dnnl_op_run(((Ctx *)p)->dnnl); }
static void t_blas(void *p)
{
    Ctx *c = p;
    if (c->c->kind == 0)
        blas_conv_run(c->blas, c->x, c->y);
    else
        blas_dense_run(c->c->m, c->c->n, c->c->k, c->w, c->x, c->y);
}
static void t_model(void *p)
{
    Ctx *c = p;
    const void *in[1] = { c->x };
    void *out[1] = { c->y };
    c->m->run(in, out, c->ws, NULL);
}

/* An int8 shape: relayc, the naive loops, oneDNN (each its own output). */
typedef struct {
    const BenchQCase *c;
    int8_t *x, *w, *y;
    int32_t *b;
    void *ws;
    DnnlOp *dnnl;
} QCtx;

static void tq_relayc(void *p) { QCtx *c = p; c->c->relayc(c->x, c->y, c->ws); }
static void tq_generic(void *p) { QCtx *c = p; c->c->generic(c->x, c->y, c->ws); }
static void tq_naive(void *p) { QCtx *c = p; c->c->naive(c->x, c->w, c->b, c->y); }
static void tq_dnnl(void *p) { dnnl_op_run(((QCtx *)p)->dnnl); }

static double max_err_i8(const int8_t *y, const int8_t *ref, long n)
{
    int err = 0;
    for (long i = 0; i < n; i++)
        if (abs(y[i] - ref[i]) > err)
            err = abs(y[i] - ref[i]);
    return err;
}

static double max_err(const float *y, const float *ref, long n)
{
    double big = 0, err = 0;
    for (long i = 0; i < n; i++)
        big = fmax(big, fabs(ref[i]));
    for (long i = 0; i < n; i++)
        err = fmax(err, fabs((double)y[i] - ref[i]));
    return big > 0 ? err / big : err;
}

static void report(const char *cs, const Method *m, const DnnlOp *dnnl)
{
    printf("{\"case\": \"%s\", \"method\": \"%s\", \"label\": \"%s\", \"median_s\": %.9g, "
           "\"min_s\": %.9g, \"err\": %.3g", cs, m->name, label, m->v[samples / 2], m->v[0],
           m->err);
    if (dnnl)
        printf(", \"impl\": \"%s\"", dnnl_op_impl(dnnl));
    printf("}\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    int only_relayc = 0, models = 0, wrong = 0;
    const char *filter = "";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only_relayc = !strcmp(argv[++i], "relayc");
        else if (!strcmp(argv[i], "--models"))
            models = 1;
        else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
            samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min-sample") && i + 1 < argc)
            min_sample = atof(argv[++i]);
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--case") && i + 1 < argc)
            filter = argv[++i];
    }
    if (samples < 1)
        samples = 1;
    if (models) {
        for (int i = 0; i < bench_model_count; i++) {
            const BenchModel *m = &bench_models[i];
            if (!strstr(m->name, filter))
                continue;
            Ctx c = { 0 };
            c.m = m;
            c.x = xalloc((size_t)m->in_count * sizeof(float));
            c.y = xalloc((size_t)m->out_count * sizeof(float));
            c.ws = xalloc((size_t)m->workspace);
            for (long k = 0; k < m->in_count; k++)
                c.x[k] = (float)((k * 7919) % 1000) / 1000.0f - 0.5f;
            Method me = { "relayc", t_model, &c, 0, NULL, 0 };
            /* models written by gen.py carry PyTorch's output on this input */
            float *ref = load_if(dir, m->name, "ref", m->out_count);
            if (ref) {
                t_model(&c);
                me.err = max_err(c.y, ref, m->out_count);
                if (!(me.err <= 1e-3)) {
                    fprintf(stderr, "harness: %s differs from PyTorch by %g (relative to the "
                            "largest output)\n", m->name, me.err);
                    wrong = 1;
                }
                free(ref);
            }
            measure_all(&me, 1);
            report(m->name, &me, NULL);
            free(me.v);
            free(c.x);
            free(c.y);
            free(c.ws);
        }
        return wrong ? 1 : 0;
    }
    for (int i = 0; i < bench_case_count; i++) {
        const BenchCase *bc = &bench_cases[i];
        if (!strstr(bc->name, filter))
            continue;
        Ctx c = { 0 };
        c.c = bc;
        c.x = load(dir, bc->name, "x", bc->x_count, sizeof(float));
        c.w = load(dir, bc->name, "w", bc->w_count, sizeof(float));
        c.y = xalloc((size_t)bc->y_count * sizeof(float));
        c.ws = xalloc((size_t)bc->workspace);
        float *ref = xalloc((size_t)bc->y_count * sizeof(float));
        bc->naive(c.x, c.w, ref);
        /* one context per method (each its own output), checked before timing */
        Ctx cx[6];
        Method m[6];
        int nm = 0;
        for (int k = 0; k < 6; k++) {
            cx[k] = c;
            cx[k].y = xalloc((size_t)bc->y_count * sizeof(float));
        }
        m[nm++] = (Method){ "relayc", t_relayc, &cx[0], 0, NULL, 0 };
        if (!only_relayc) {
            /* --target generic, its own workspace, in the same rounds */
            cx[5].ws = xalloc((size_t)bc->generic_workspace);
            m[nm++] = (Method){ "generic", t_generic, &cx[5], 0, NULL, 0 };
            m[nm++] = (Method){ "naive", t_naive, &cx[1], 0, NULL, 0 };
            /* OpenBLAS reads its own copy of the weights: the naive loops run just before
             * it in every round, and on the shared buffer it found them warm in the last
             * level cache (64 MB fits there), which relayc's and oneDNN's copies are not */
            cx[2].w = xalloc((size_t)bc->w_count * sizeof(float));
            memcpy(cx[2].w, c.w, (size_t)bc->w_count * sizeof(float));
            if (bc->kind == 0)
                cx[2].blas = blas_conv_setup(&bc->cs, cx[2].w);
            m[nm++] = (Method){ "openblas", t_blas, &cx[2], 0, NULL, 0 };
            for (int io = 0; io < 2; io++) {
                if (bc->kind == 1 && io == 0)
                    continue; /* inner product: plain layouts either way */
                Ctx *d = &cx[3 + io];
                d->dnnl = bc->kind == 0 ? dnnl_conv_setup(&bc->cs, c.w, d->x, d->y, io)
                                        : dnnl_dense_setup(bc->m, bc->n, bc->k, c.w, d->x, d->y);
                m[nm++] = (Method){ io && bc->kind == 0 ? "onednn_nchw" : "onednn", t_dnnl, d, 0,
                                    NULL, 0 };
            }
        }
        measure_all(m, nm);
        for (int k = 0; k < nm; k++) {
            Ctx *d = m[k].ctx;
            if (d->dnnl)
                dnnl_op_fetch(d->dnnl);
            m[k].err = max_err(d->y, ref, bc->y_count);
            report(bc->name, &m[k], d->dnnl);
            free(m[k].v);
        }
        for (int k = 0; k < 6; k++)
            free(cx[k].y);
        if (!only_relayc) {
            free(cx[2].w);
            free(cx[5].ws);
        }
        free(c.x);
        free(c.w);
        free(c.y);
        free(c.ws);
        free(ref);
    }
    for (int i = 0; i < bench_qcase_count; i++) {
        const BenchQCase *bc = &bench_qcases[i];
        if (!strstr(bc->name, filter))
            continue;
        QCtx c = { 0 };
        c.c = bc;
        c.x = load(dir, bc->name, "x", bc->x_count, 1);
        c.w = load(dir, bc->name, "w", bc->w_count, 1);
        c.b = load(dir, bc->name, "b", bc->channels, sizeof(int32_t));
        float *scales = load(dir, bc->name, "sc", bc->channels, sizeof(float));
        c.ws = xalloc((size_t)bc->workspace);
        int8_t *ref = xalloc((size_t)bc->y_count);
        bc->naive(c.x, c.w, c.b, ref);
        QCtx cx[4];
        Method m[4];
        int nm = 0;
        for (int k = 0; k < 4; k++) {
            cx[k] = c;
            cx[k].y = xalloc((size_t)bc->y_count);
        }
        m[nm++] = (Method){ "relayc", tq_relayc, &cx[0], 0, NULL, 0 };
        if (!only_relayc) {
            cx[3].ws = xalloc((size_t)bc->generic_workspace);
            m[nm++] = (Method){ "generic", tq_generic, &cx[3], 0, NULL, 0 };
            m[nm++] = (Method){ "naive", tq_naive, &cx[1], 0, NULL, 0 };
            cx[2].dnnl = bc->kind == 0
                ? dnnl_qconv_setup(&bc->cs, c.w, c.b, scales, bc->xzp, bc->yzp, c.x, cx[2].y)
                : dnnl_qdense_setup(bc->m, bc->n, bc->k, c.w, c.b, scales, bc->xzp, bc->yzp,
                                    c.x, cx[2].y);
            m[nm++] = (Method){ "onednn", tq_dnnl, &cx[2], 0, NULL, 0 };
        }
        measure_all(m, nm);
        for (int k = 0; k < nm; k++) {
            QCtx *d = m[k].ctx;
            if (d->dnnl)
                dnnl_op_fetch(d->dnnl);
            m[k].err = max_err_i8(d->y, ref, bc->y_count);
            report(bc->name, &m[k], d->dnnl);
            free(m[k].v);
        }
        /* the oneDNN primitive keeps its buffers (as the float shapes' do) */
        for (int k = 0; k < 4; k++)
            free(cx[k].y);
        if (!only_relayc)
            free(cx[3].ws);
        free(c.x);
        free(c.w);
        free(c.b);
        free(scales);
        free(c.ws);
        free(ref);
    }
    return 0;
}
