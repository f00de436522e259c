/* tiny.c: stand-in kernels for model "tiny" (constants in tiny_constants.c). */
#include "tiny.h"

#include <math.h>

extern const float tiny_weight[12];   /* [3][4], row-major */
extern const float tiny_bias[3];

/* dense: y[3] = W[3][4] x[4] + b[3] */
static void tiny_dense(const float *x, float *y)
{
    int i, j;
    for (i = 0; i < 3; i++) {
        float acc = tiny_bias[i];
        for (j = 0; j < 4; j++)
            acc += tiny_weight[i * 4 + j] * x[j];
        y[i] = acc;
    }
}

static void tiny_relu(const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; i++)
        y[i] = fmaxf(x[i], 0.0f);
}

int tiny_run(const float *in0, float *out0, void *workspace)
{
    float *t0 = (float *)workspace;   /* the dense output, 12 bytes at offset 0 */
    tiny_dense(in0, t0);
    tiny_relu(t0, out0, 3);
    return 0;
}
