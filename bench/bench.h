/* bench.h: shapes and the baseline libraries' entry points (baselines.c). */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>

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
/* int8: s8 input with zero point xzp, s8 weights (zero point 0), s32 bias, s8 output with
 * zero point yzp; scales[c] = in_scale / out_scale of output channel c. */
DnnlOp *dnnl_qconv_setup(const ConvShape *s, const int8_t *w, const int32_t *bias,
                         const float *scales, int xzp, int yzp, int8_t *x, int8_t *y);
DnnlOp *dnnl_qdense_setup(int m, int n, int k, const int8_t *w, const int32_t *bias,
                          const float *scales, int xzp, int yzp, int8_t *x, int8_t *y);
void dnnl_op_run(DnnlOp *op);
void dnnl_op_fetch(DnnlOp *op);
const char *dnnl_op_impl(const DnnlOp *op); /* the implementation oneDNN picked */

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
    int (*generic)(const float *x, float *y, void *workspace); /* --target generic */
    long generic_workspace;
} BenchCase;

/* One int8 kernel shape: qnn.conv2d / qnn.dense + bias_add + qnn.requantize, int8 in and
 * out (bench/gen.py writes the table into cases.c). */
typedef struct {
    const char *name;
    int kind;                   /* 0 conv2d (cs), 1 dense (m rows, n outputs, k inputs) */
    ConvShape cs;
    int m, n, k;
    long x_count, y_count, w_count, channels;
    int xzp, yzp;               /* input and output zero points */
    long workspace;
    int (*relayc)(const int8_t *x, int8_t *y, void *workspace);
    void (*naive)(const int8_t *restrict x, const int8_t *restrict w, const int32_t *restrict b,
                  int8_t *restrict y);
    int (*generic)(const int8_t *x, int8_t *y, void *workspace); /* --target generic */
    long generic_workspace;
} BenchQCase;

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
extern const BenchQCase bench_qcases[];
extern const int bench_qcase_count;
extern const BenchModel bench_models[];
extern const int bench_model_count;

#endif
