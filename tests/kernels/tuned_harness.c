/*
 * tuned_harness.c: runs compiled relayc models with canaries around every buffer.
 * Built by tests/kernels/test_tuned.py with a generated table of models (models.c;
 * tuned_common.h).
 *
 * Usage: tuned_harness DIR
 * For every model NAME of the table: reads DIR/NAME.in0, .in1, ... (raw float32), runs
 * NAME_run_generic and writes DIR/NAME.out0, ...; prints one line per model, "NAME ok" or
 * "NAME error: WHAT". Inputs are malloc'd at their exact size (ASan sees overreads); the
 * outputs and the workspace sit between GUARD bytes of canary, and the outputs start
 * filled with a canary NaN, so an element never written shows up in the comparison.
 */
#include "tuned_common.h"

#define CANARY_BYTE 0xa5
#define CANARY_FLOAT 0x7fc0deadu

int main(int argc, char **argv)
{
    char path[4096];
    int failed = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: tuned_harness DIR\n");
        return 2;
    }
    for (int m = 0; m < tuned_model_count; m++) {
        const TunedModel *t = &tuned_models[m];
        const void *in[4] = { 0 };
        void *out[4] = { 0 };
        unsigned char *ob[4] = { 0 }, *ws = guarded(t->workspace, CANARY_BYTE);
        const char *err = read_inputs(argv[1], t, in);
        for (int k = 0; k < t->nout; k++) {
            uint32_t c = CANARY_FLOAT;
            ob[k] = guarded(t->out_bytes[k], CANARY_BYTE);
            for (long i = 0; i < t->out_bytes[k] / 4; i++)
                memcpy(ob[k] + GUARD + 4 * i, &c, 4);
            out[k] = ob[k] + GUARD;
        }
        if (!err) {
            int rc = t->run(in, out, ws + GUARD, NULL);
            if (rc)
                err = "run returned an error";
        }
        if (!err && !guards_intact(ws, t->workspace, CANARY_BYTE))
            err = "write outside the workspace";
        for (int k = 0; k < t->nout && !err; k++) {
            if (!guards_intact(ob[k], t->out_bytes[k], CANARY_BYTE))
                err = "write outside an output";
            snprintf(path, sizeof path, "%s/%s.out%d", argv[1], t->name, k);
            if (!err && !write_bytes(path, out[k], t->out_bytes[k]))
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
        for (int k = 0; k < t->nout; k++)
            free(ob[k]);
        free(ws);
    }
    return failed ? 1 : 0;
}
