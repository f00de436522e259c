/* pair.c: stand-in kernels for model "pair" (constants in pair_constants.c). */
#include "pair.h"

#include <math.h>

extern const float pair_scale[3];

int pair_run(const float *in0, const float *in1, float *out0, float *out1, void *workspace)
{
    float *e = (float *)workspace;     /* expf(a), 6 floats at offset 0 */
    float sum = 0.0f;
    int i, j;

    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++) {
            out0[i * 3 + j] = tanhf(in0[i * 3 + j] * pair_scale[j] + in1[j]);
            e[i * 3 + j] = expf(in0[i * 3 + j]);
        }
    for (i = 0; i < 6; i++)
        sum += e[i];
    out1[0] = sqrtf(sum) + erff(in1[0]);
    return 0;
}
