/*
 * qtuned_harness.c: runs compiled relayc models with integer (or any) inputs and outputs,
 * with canaries around every buffer. Built by tests/kernels/test_qtuned.py with a generated
 * table of models (models.c; tuned_common.h).
 *
 * Usage: qtuned_harness DIR
 * For every model NAME of the table: reads DIR/NAME.in0, .in1, ... (raw bytes), runs
 * NAME_run_generic twice and writes DIR/NAME.out0, ... (raw bytes); prints one line per
 * model, "NAME ok" or "NAME error: WHAT". Inputs are malloc'd at their exact size (ASan sees
 * overreads); the outputs and the workspace sit between GUARD bytes of canary. The first
 * run starts with every output byte 0xa5, the second with 0x5a: an element never written
 * differs between the two runs, which is an error, as is any write outside the buffers.
 */
#include "tuned_common.h"

/* One run with every canary byte fill; the outputs (their bytes) are left in ob. */
static const char *run_once(const TunedModel *t, const void *const *in, unsigned char **ob, int fill)
{
    void *out[4] = { 0 };
    unsigned char *ws = guarded(t->workspace, fill);
    const char *err = NULL;
    for (int k = 0; k < t->nout; k++) {
        ob[k] = guarded(t->out_bytes[k], fill);
        out[k] = ob[k] + GUARD;
    }
    if (t->run(in, out, ws + GUARD, NULL))
        err = "run returned an error";
    if (!err && !guards_intact(ws, t->workspace, fill))
        err = "write outside the workspace";
    for (int k = 0; k < t->nout && !err; k++)
        if (!guards_intact(ob[k], t->out_bytes[k], fill))
            err = "write outside an output";
    free(ws);
    return err;
}

int main(int argc, char **argv)
{
    char path[4096];
    int failed = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: qtuned_harness DIR\n");
        return 2;
    }
    for (int m = 0; m < tuned_model_count; m++) {
        const TunedModel *t = &tuned_models[m];
        const void *in[4] = { 0 };
        unsigned char *a[4] = { 0 }, *b[4] = { 0 };
        const char *err = read_inputs(argv[1], t, in);
        if (!err)
            err = run_once(t, in, a, 0xa5);
        if (!err)
            err = run_once(t, in, b, 0x5a);
        for (int k = 0; k < t->nout && !err; k++) {
            if (memcmp(a[k] + GUARD, b[k] + GUARD, (size_t)t->out_bytes[k]))
                err = "an output element is never written (the canaries differ)";
            snprintf(path, sizeof path, "%s/%s.out%d", argv[1], t->name, k);
            if (!err && !write_bytes(path, a[k] + GUARD, t->out_bytes[k]))
                err = "cannot write an output";
        }
        if (err) {
            printf("%s error: %s\n", t->name, err);
            failed++;
        } else {
            printf("%s ok\n", t->name);
        }
        for (int k = 0; k < t->nin; k++)
            free((void *)in[k]);
        for (int k = 0; k < t->nout; k++) {
            free(a[k]);
            free(b[k]);
        }
    }
    return failed ? 1 : 0;
}
