/* tiny.c: stand-in kernels for model "tiny", constants from the tiny.bin blob. */
#include "tiny.h"

#include <math.h>

#define TINY_WEIGHT_OFFSET 0    /* float[3][4] */
#define TINY_BIAS_OFFSET 48     /* float[3] */

static void tiny_dense(const float *x, const float *w, const float *b, float *y)
{
    int i, j;
    for (i = 0; i < 3; i++) {
        float acc = b[i];
        for (j = 0; j < 4; j++)
            acc += w[i * 4 + j] * x[j];
        y[i] = acc;
    }
}

static void tiny_relu(const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; i++)
        y[i] = fmaxf(x[i], 0.0f);
}

int tiny_run(const float *in0, float *out0, void *workspace, const void *constants)
{
    const unsigned char *c = (const unsigned char *)constants;
    float *t0 = (float *)workspace;
    if (constants == NULL || ((uintptr_t)constants & 15u) != 0)
        return 1;
    tiny_dense(in0, (const float *)(const void *)(c + TINY_WEIGHT_OFFSET),
               (const float *)(const void *)(c + TINY_BIAS_OFFSET), t0);
    tiny_relu(t0, out0, 3);
    return 0;
}
