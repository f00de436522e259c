/*
 * pair.h: hand-written stand-in for relayc's output (constants mode "c") for a
 * model named "pair" with two inputs and two outputs, using <math.h>:
 *   in0 a float[2][3], in1 b float[3]
 *   out0 float[2][3] = tanhf(a * pair_scale + b)          (broadcast over rows)
 *   out1 float[1]    = sqrtf(sum(expf(a))) + erff(b[0])
 */
#ifndef PAIR_H
#define PAIR_H

#include <stddef.h>
#include <stdint.h>

#define PAIR_WORKSPACE_SIZE 32
#define PAIR_WORKSPACE_ALIGN 8
#define PAIR_NUM_INPUTS 2
#define PAIR_NUM_OUTPUTS 2

int pair_run(const float *in0, const float *in1, float *out0, float *out1, void *workspace);

#endif /* PAIR_H */
