/*
 * two_models.c: two relayc-compiled models linked into one program, run in turn on
 * one shared workspace, every output checked against the expected values.
 *
 * The model-specific parts come from two_models_data.h, which test_two_models.py
 * writes: for model A and model B, NAME.h included, the inputs and expected outputs
 * as arrays, and the glue (A_WORKSPACE_SIZE, a_run(ws) calling NAME_run with its
 * typed arguments, a_run_generic(ws) calling NAME_run_generic). Model A uses
 * constants as C arrays, model B a NAME.bin blob linked by blob.S.
 *
 * Builds for the host (gcc, stdio) and for a Cortex-M under QEMU (semihosting,
 * with examples/cortex-m's startup code). Exit status 0 when everything matches.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "two_models_data.h"

#if defined(__arm__) && !defined(__linux__)
#include "semihost.h"
static void out_str(const char *s) { sh_puts(s); }
static void out_u32(uint32_t v) { sh_put_u32(v); }
static void out_float(double v) { sh_put_float(v, 4); }
#else
#include <stdio.h>
static void out_str(const char *s) { fputs(s, stdout); }
static void out_u32(uint32_t v) { printf("%lu", (unsigned long)v); }
static void out_float(double v) { printf("%.4g", v); }
#endif

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define WS_SIZE MAX(MAX(A_WORKSPACE_SIZE, B_WORKSPACE_SIZE), 1)
#define WS_ALIGN MAX(A_WORKSPACE_ALIGN, B_WORKSPACE_ALIGN)

/* One workspace for both models: they run one after the other. */
static unsigned char workspace[WS_SIZE] __attribute__((aligned(WS_ALIGN)));

static double absd(double v) { return v < 0 ? -v : v; }

/* Compares the outputs of one model; returns the number of mismatches. */
static unsigned check(const char *name, const check_output *outs, int n, const char *what)
{
    unsigned bad = 0;
    int k;
    size_t i;
    for (k = 0; k < n; k++) {
        double worst = 0;
        for (i = 0; i < outs[k].count; i++) {
            double got = outs[k].got[i], want = outs[k].want[i];
            double err = absd(got - want);
            if (!(err <= TWO_ATOL + TWO_RTOL * absd(want))) /* NaN fails too */
                bad++;
            if (!(err <= worst))
                worst = err;
        }
        out_str(name);
        out_str(" (");
        out_str(what);
        out_str(") output ");
        out_u32((uint32_t)k);
        out_str(": ");
        out_u32((uint32_t)outs[k].count);
        out_str(" elements, max abs error ");
        out_float(worst);
        out_str("\n");
    }
    return bad;
}

static void poison(const check_output *outs, int n)
{
    int k;
    memset(workspace, 0xA5, sizeof workspace);
    for (k = 0; k < n; k++)
        memset(outs[k].got, 0xFF, outs[k].count * sizeof(float));
}

static unsigned report_rc(const char *name, int rc)
{
    if (rc == 0)
        return 0;
    out_str(name);
    out_str("_run returned ");
    out_u32((uint32_t)rc);
    out_str("\n");
    return 1;
}

int main(void)
{
    unsigned bad = 0;
    out_str("two models in one program: " A_NAME " (constants: c) and " B_NAME " (constants: bin)\n");
    out_str("shared workspace: ");
    out_u32((uint32_t)WS_SIZE);
    out_str(" bytes\n");
    /* A, B, then each again through the generic entry point: no state is kept
     * between calls, so the order does not matter. */
    poison(a_outputs, A_NUM_OUT);
    bad += report_rc(A_NAME, a_run(workspace));
    bad += check(A_NAME, a_outputs, A_NUM_OUT, "typed");
    poison(b_outputs, B_NUM_OUT);
    bad += report_rc(B_NAME, b_run(workspace));
    bad += check(B_NAME, b_outputs, B_NUM_OUT, "typed");
    poison(a_outputs, A_NUM_OUT);
    bad += report_rc(A_NAME, a_run_generic(workspace));
    bad += check(A_NAME, a_outputs, A_NUM_OUT, "generic");
    poison(b_outputs, B_NUM_OUT);
    bad += report_rc(B_NAME, b_run_generic(workspace));
    bad += check(B_NAME, b_outputs, B_NUM_OUT, "generic");
    out_str(bad ? "RESULT: FAIL\n" : "RESULT: PASS\n");
    return bad ? 1 : 0;
}
