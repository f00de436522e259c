/*
 * tiny.h: hand-written stand-in for relayc's output (constants mode "c") for a
 * model named "tiny": out0 = relu(W * in0 + b), in0 float[1][4], out0 float[1][3].
 */
#ifndef TINY_H
#define TINY_H

#include <stddef.h>
#include <stdint.h>

#define TINY_WORKSPACE_SIZE 16
#define TINY_WORKSPACE_ALIGN 16
#define TINY_NUM_INPUTS 1
#define TINY_NUM_OUTPUTS 1

/* Returns 0 on success. workspace: TINY_WORKSPACE_SIZE bytes, aligned to
 * TINY_WORKSPACE_ALIGN; its contents on entry do not matter. */
int tiny_run(const float *in0, float *out0, void *workspace);

#endif /* TINY_H */
