/*
 * main.c: runs one relayc-compiled model once on the target, checks every output
 * element against the expected values (|got - want| <= atol + rtol * |want|),
 * and prints the result and the cost over semihosting.
 *
 * The model-specific parts come from two headers that gen_model_data.py writes:
 *   model_data.h  the inputs, output buffers, expected outputs and tolerances
 *   model_glue.h  includes NAME.h, maps its macros (NAME in capitals:
 *                 LENET_WORKSPACE_SIZE) to MODEL_*, and defines
 *                 model_glue_run(workspace, constants), which calls NAME_run
 *                 with the right arguments
 * Exit status: 0 pass, 1 mismatch or model error, 3 fault (startup.c).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "counter.h"
#include "harness.h"
#include "semihost.h"

#include "model_data.h"
#include "model_glue.h"

#define CALIB_LOOP 100000u   /* counter_loop(CALIB_LOOP): 200001 instructions */

/* The caller's workspace: a static buffer in .bss aligned as the model asks,
 * followed by a guard band that must still hold its fill pattern afterwards. */
#define WS_GUARD 64u
#define WS_BYTES ((size_t)(MODEL_WORKSPACE_SIZE))
static unsigned char model_workspace[WS_BYTES + WS_GUARD] H_ALIGNED(MODEL_WORKSPACE_ALIGN);

#if MODEL_CONSTANTS_IN_BIN
/* model_blob.S: NAME.bin as section .model_constants. */
extern const unsigned char relayc_constants_start[];
extern const unsigned char relayc_constants_end[];
#define MODEL_CONSTANTS_PTR ((const void *)relayc_constants_start)
#else
#define MODEL_CONSTANTS_PTR ((const void *)0)
#endif

extern uint32_t __stack_limit__[], __stack_top__[];
#define STACK_PAINT 0x5AC5A5C5u

static void put_label(const char *label)
{
    sh_puts(label);
    sh_puts(": ");
}

static double element(h_dtype t, const void *p, size_t i)
{
    switch (t) {
    case H_F32: return ((const float *)p)[i];
    case H_F64: return ((const double *)p)[i];
    case H_I8: return ((const int8_t *)p)[i];
    case H_U8: return ((const uint8_t *)p)[i];
    case H_I16: return ((const int16_t *)p)[i];
    case H_U16: return ((const uint16_t *)p)[i];
    case H_I32: return ((const int32_t *)p)[i];
    case H_U32: return ((const uint32_t *)p)[i];
    case H_I64: return (double)((const int64_t *)p)[i];
    case H_U64: return (double)((const uint64_t *)p)[i];
    case H_BOOL: return ((const uint8_t *)p)[i] != 0;
    }
    return 0.0;
}

static size_t dtype_size(h_dtype t)
{
    switch (t) {
    case H_I8: case H_U8: case H_BOOL: return 1;
    case H_I16: case H_U16: return 2;
    case H_F32: case H_I32: case H_U32: return 4;
    case H_F64: case H_I64: case H_U64: return 8;
    }
    return 1;
}

static int is_nan(double v) { return v != v; }
static int is_inf(double v) { return v - v != 0.0 && v == v; }

static double absd(double v) { return v < 0.0 ? -v : v; }

static uint32_t fnv1a(uint32_t h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

static uint32_t hash_inputs(void)
{
    uint32_t h = 2166136261u;
    const h_input *in;
    for (in = model_inputs; in->name; in++)
        h = fnv1a(h, in->data, in->count * dtype_size(in->dtype));
    return h;
}

static uint32_t hash_outputs(void)
{
    uint32_t h = 2166136261u;
    const h_output *out;
    for (out = model_outputs; out->name; out++)
        h = fnv1a(h, out->got, out->count * dtype_size(out->dtype));
    return h;
}

/* Fills the workspace, its guard band and the outputs with a pattern, so that a
 * model that reads what it never wrote, or leaves an output unwritten, shows. */
static void prepare_buffers(unsigned char fill)
{
    const h_output *out;
    memset(model_workspace, fill, sizeof model_workspace);
    for (out = model_outputs; out->name; out++)
        memset(out->got, 0xFF, out->count * dtype_size(out->dtype));   /* NaN for floats */
}

static int guard_intact(unsigned char fill)
{
    size_t i;
    for (i = 0; i < WS_GUARD; i++)
        if (model_workspace[WS_BYTES + i] != fill)
            return 0;
    return 1;
}

static uint32_t *current_sp(void)
{
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* Paints the unused stack below the current frame. */
static void stack_paint(void)
{
    uint32_t *p = __stack_limit__;
    uint32_t *end = current_sp() - 2;      /* a leaf: nothing lives below its sp */
    while (p < end)
        *p++ = STACK_PAINT;
}

/* Lowest stack word that is no longer the paint. */
static uint32_t *stack_low_water(void)
{
    uint32_t *p = __stack_limit__;
    while (p < __stack_top__ && *p == STACK_PAINT)
        p++;
    return p;
}

/* Compares one output; prints its line and returns the number of mismatches. */
static size_t check_output(size_t index, const h_output *out, double *worst_abs)
{
    size_t i, bad = 0, shown = 0, worst_i = 0;
    double max_abs = 0.0, max_rel = 0.0, max_ratio = 0.0;

    for (i = 0; i < out->count; i++) {
        double got = element(out->dtype, out->got, i);
        double want = element(out->dtype, out->want, i);
        double err, bound;
        int ok;

        if (is_nan(want) || is_nan(got)) {
            ok = is_nan(want) && is_nan(got);
            err = ok ? 0.0 : 1.0 / 0.0;
        } else if (is_inf(want) || is_inf(got)) {
            ok = got == want;
            err = ok ? 0.0 : 1.0 / 0.0;
        } else {
            err = absd(got - want);
            bound = MODEL_DATA_ATOL + MODEL_DATA_RTOL * absd(want);
            ok = err <= bound;
            if (bound > 0.0 && err / bound > max_ratio)
                max_ratio = err / bound;
            if (want != 0.0 && err / absd(want) > max_rel)
                max_rel = err / absd(want);
        }
        if (err > max_abs) {
            max_abs = err;
            worst_i = i;
        }
        if (!ok) {
            bad++;
            if (shown < 5) {
                sh_puts("  mismatch at [");
                sh_put_u32((uint32_t)i);
                sh_puts("]: got ");
                sh_put_float(got, 9);
                sh_puts(", want ");
                sh_put_float(want, 9);
                sh_puts("\n");
                shown++;
            }
        }
    }

    sh_puts("output ");
    sh_put_u32((uint32_t)index);
    sh_puts(" (");
    sh_puts(out->name);
    sh_puts("): ");
    sh_put_u32((uint32_t)out->count);
    sh_puts(" elements, max_abs_err ");
    sh_put_float(max_abs, 3);
    sh_puts(" at [");
    sh_put_u32((uint32_t)worst_i);
    sh_puts("], max_rel_err ");
    sh_put_float(max_rel, 3);
    sh_puts(", err/tol ");
    sh_put_float(max_ratio, 3);
    sh_puts(", mismatches ");
    sh_put_u32((uint32_t)bad);
    sh_puts("\n");
    if (max_abs > *worst_abs)
        *worst_abs = max_abs;
    return bad;
}

int main(void)
{
    const h_output *out;
    uint32_t in_hash, out_hash1, out_hash2, *sp_before, *low;
    uint64_t cost = 0, calib = 0;
    counter_call call;
    counter_kind kind;
    int counted;
    size_t mismatches = 0, index;
    double worst_abs = 0.0;
    int rc, failed = 0;

    sh_puts("relayc cortex-m harness\n");
    put_label("model");
    sh_puts(MODEL_NAME_STR);
    sh_puts(MODEL_CONSTANTS_IN_BIN ? " (constants: bin)\n" : " (constants: c)\n");
    put_label("workspace");
    sh_put_u32((uint32_t)WS_BYTES);
    sh_puts(" bytes, align ");
    sh_put_u32((uint32_t)(MODEL_WORKSPACE_ALIGN));
    sh_puts(", at ");
    sh_put_hex32((uint32_t)(uintptr_t)model_workspace);
    sh_puts("\n");

#if MODEL_CONSTANTS_IN_BIN
    {
        size_t have = (size_t)(relayc_constants_end - relayc_constants_start);
        put_label("constants");
        sh_put_u32((uint32_t)have);
        sh_puts(" bytes at ");
        sh_put_hex32((uint32_t)(uintptr_t)relayc_constants_start);
        sh_puts("\n");
        if (have != (size_t)(MODEL_CONSTANTS_SIZE)) {
            sh_puts("error: the blob's size differs from UPPER_CONSTANTS_SIZE (");
            sh_put_u32((uint32_t)(MODEL_CONSTANTS_SIZE));
            sh_puts(")\n");
            failed = 1;
        }
        if (((uintptr_t)relayc_constants_start & 15u) != 0) {
            sh_puts("error: the blob is not 16-byte aligned\n");
            failed = 1;
        }
    }
#endif

    kind = counter_init();
    if (kind != COUNTER_NONE)
        calib = counter_check_loop(CALIB_LOOP);

    /* Run 1: counted and checked. */
    prepare_buffers(0xA5);
    in_hash = hash_inputs();
    counted = model_glue_call(&call, model_workspace, MODEL_CONSTANTS_PTR);
    if (counted) {
        cost = counter_measure(&call);
        rc = (int)(int32_t)call.ret;
    } else {
        rc = model_glue_run(model_workspace, MODEL_CONSTANTS_PTR);
    }

    if (rc != 0) {
        sh_puts("error: ");
        sh_puts(MODEL_NAME_STR);
        sh_puts("_run returned ");
        sh_put_i32(rc);
        sh_puts("\n");
        failed = 1;
    }
    if (!guard_intact(0xA5)) {
        sh_puts("error: the model wrote past the end of its workspace\n");
        failed = 1;
    }
    if (hash_inputs() != in_hash) {
        sh_puts("error: the model changed an input\n");
        failed = 1;
    }
    for (out = model_outputs, index = 0; out->name; out++, index++)
        mismatches += check_output(index, out, &worst_abs);
    out_hash1 = hash_outputs();

    /* Run 2: other fill pattern; the outputs must be bit-identical. The stack
     * is measured here, called directly (run 1 went through the counter). */
    prepare_buffers(0x3C);
    stack_paint();
    sp_before = current_sp();
    rc = model_glue_run(model_workspace, MODEL_CONSTANTS_PTR);
    low = stack_low_water();
    out_hash2 = hash_outputs();
    if (rc != 0 || out_hash2 != out_hash1) {
        sh_puts("error: a second run gave different outputs (reads of unwritten workspace?)\n");
        failed = 1;
    }
    if (!guard_intact(0x3C)) {
        sh_puts("error: the model wrote past the end of its workspace\n");
        failed = 1;
    }

    put_label("tolerance");
    sh_puts("atol ");
    sh_put_float(MODEL_DATA_ATOL, 3);
    sh_puts(", rtol ");
    sh_put_float(MODEL_DATA_RTOL, 3);
    sh_puts("\n");
    put_label("max_abs_err");
    sh_put_float(worst_abs, 6);
    sh_puts("\n");
    put_label("mismatches");
    sh_put_u32((uint32_t)mismatches);
    sh_puts("\n");
    put_label("stack_bytes");
    sh_put_u32((uint32_t)((uintptr_t)sp_before - (uintptr_t)low));
    sh_puts(" (below the caller's frame)\n");

    if (!counted || kind == COUNTER_NONE) {
        sh_puts(!counted ? "cost: not counted (the model takes more arguments than counter.h passes)\n"
                         : "cost: not counted (no DWT cycle counter and no running timer)\n");
    } else if (kind == COUNTER_DWT_CYCLES) {
        put_label("cycles");
        sh_put_u64(cost);
        sh_puts(" (DWT CYCCNT)\n");
    } else {
        put_label("instructions");
        sh_put_u64(cost);
        if (calib == 2u * CALIB_LOOP + 1u) {
            sh_puts(" (exact: QEMU -icount shift=");
            sh_put_u32(ICOUNT_SHIFT);
            sh_puts("; a loop of ");
            sh_put_u32(2u * CALIB_LOOP + 1u);
            sh_puts(" instructions measured ");
            sh_put_u64(calib);
            sh_puts(")\n");
        } else {
            sh_puts(" (NOT an instruction count: a loop of ");
            sh_put_u32(2u * CALIB_LOOP + 1u);
            sh_puts(" instructions measured ");
            sh_put_u64(calib);
            sh_puts("; run QEMU with -icount shift=");
            sh_put_u32(ICOUNT_SHIFT);
            sh_puts(")\n");
        }
    }

    if (mismatches != 0)
        failed = 1;
    sh_puts(failed ? "RESULT: FAIL\n" : "RESULT: PASS\n");
    return failed ? 1 : 0;
}
