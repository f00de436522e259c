/*
 * harness.h: types shared by main.c and the generated model_data.h.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    H_F32, H_F64, H_I8, H_U8, H_I16, H_U16, H_I32, H_U32, H_I64, H_U64, H_BOOL
} h_dtype;

/* One model input: the array passed to NAME_run. */
typedef struct {
    const char *name;       /* the .npy file it came from; NULL ends a table */
    h_dtype dtype;
    const void *data;
    size_t count;           /* elements */
} h_input;

/* One model output: the caller's buffer and the expected values. */
typedef struct {
    const char *name;
    h_dtype dtype;
    void *got;
    const void *want;
    size_t count;
} h_output;

#if defined(__GNUC__)
#define H_ALIGNED(n) __attribute__((aligned(n)))
#else
#define H_ALIGNED(n)
#endif

#endif /* HARNESS_H */
