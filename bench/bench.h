/* bench.h: shapes and the baseline libraries' entry points (baselines.c). */
#ifndef BENCH_H
#define BENCH_H

typedef struct {
    int n, ci, hi, wi, co, ho, wo;
    int kh, kw, sh, sw, dh, dw;
    int pt, pl, pb, pr, groups;
} ConvShape;

typedef struct DnnlOp DnnlOp;
/* nchw_io: the timed run converts the NCHW input and output (weights are always
 * converted once, at setup). x and y are the user's NCHW buffers. */
DnnlOp *dnnl_conv_setup(const ConvShape *s, const float *w, float *x, float *y, int nchw_io);
DnnlOp *dnnl_dense_setup(int m, int n, int k, const float *w, float *x, float *y);
void dnnl_op_run(DnnlOp *op);
void dnnl_op_fetch(DnnlOp *op);

typedef struct BlasConv BlasConv;
BlasConv *blas_conv_setup(const ConvShape *s, const float *w);
void blas_conv_run(BlasConv *c, const float *x, float *y);
void blas_dense_run(int m, int n, int k, const float *w, const float *x, float *y);

/* One kernel shape (bench/gen.py writes the table into cases.c). */
typedef struct {
    const char *name;
    int kind;                   /* 0 conv2d (cs), 1 dense (m rows, n outputs, k inputs) */
    ConvShape cs;
    int m, n, k;
    long x_count, y_count, w_count;
    long workspace;             /* bytes relayc's code needs */
    int (*relayc)(const float *x, float *y, void *workspace);
    void (*naive)(const float *restrict x, const float *restrict w, float *restrict y);
} BenchCase;

/* A whole model (a fixture) compiled by relayc: one input, one output. */
typedef struct {
    const char *name;
    int (*run)(const void *const *inputs, void *const *outputs, void *workspace,
               const void *constants);
    long workspace;
    long in_count, out_count;
} BenchModel;

extern const BenchCase bench_cases[];
extern const int bench_case_count;
extern const BenchModel bench_models[];
extern const int bench_model_count;

#endif
