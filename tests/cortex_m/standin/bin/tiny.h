/*
 * tiny.h: hand-written stand-in for relayc's output (constants mode "bin") for a
 * model named "tiny": out0 = relu(W * in0 + b), in0 float[1][4], out0 float[1][3].
 * The constants come in tiny.bin (W float[3][4] at offset 0, b float[3] at 48).
 */
#ifndef TINY_H
#define TINY_H

#include <stddef.h>
#include <stdint.h>

#define TINY_WORKSPACE_SIZE 16
#define TINY_WORKSPACE_ALIGN 16
#define TINY_NUM_INPUTS 1
#define TINY_NUM_OUTPUTS 1
#define TINY_CONSTANTS_SIZE 64

/* Returns 0 on success. constants: the contents of tiny.bin, 16-byte aligned. */
int tiny_run(const float *in0, float *out0, void *workspace, const void *constants);

#endif /* TINY_H */
