/*
 * main.c: runs a relayc-compiled model on .npy inputs and prints its outputs; given
 * the expected outputs, compares every element (|got - want| <= 1e-5 + 1e-4 |want|).
 *
 *   classify IN0.npy [IN1.npy ...] [--expect OUT0.npy ...]
 *
 * The model is chosen at build time: MODEL_HEADER ("lenet.h"), MODEL_NAME (lenet:
 * functions and types) and MODEL_UPPER (LENET: macros). It is called through the
 * generic entry point and its input/output descriptors, so any float32 model works.
 * Exit status: 0 ok, 1 mismatch or model error, 2 bad usage or input.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include MODEL_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define MODEL_RUN CAT(MODEL_NAME, _run_generic)
#define MODEL_INPUTS CAT(MODEL_NAME, _inputs)
#define MODEL_OUTPUTS CAT(MODEL_NAME, _outputs)
#define NUM_INPUTS CAT(MODEL_UPPER, _NUM_INPUTS)
#define NUM_OUTPUTS CAT(MODEL_UPPER, _NUM_OUTPUTS)
#define WS_SIZE CAT(MODEL_UPPER, _WORKSPACE_SIZE)

/* The workspace: static, aligned as NAME_WORKSPACE_ALIGN (16) asks. */
static unsigned char workspace[WS_SIZE > 0 ? WS_SIZE : 1] __attribute__((aligned(16)));

/* Reads a little-endian float32 .npy of exactly `bytes` bytes of data into a new buffer. */
static float *read_npy(const char *path, size_t bytes)
{
    FILE *f = fopen(path, "rb");
    unsigned char magic[10];
    size_t hlen, got;
    char *header;
    float *data;
    if (!f) {
        fprintf(stderr, "%s: cannot open\n", path);
        return NULL;
    }
    if (fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0) {
        fprintf(stderr, "%s: not a .npy file\n", path);
        fclose(f);
        return NULL;
    }
    hlen = magic[8] | (size_t)magic[9] << 8;
    if (magic[6] >= 2) { /* versions 2 and 3: a 4-byte header length */
        unsigned char more[2];
        if (fread(more, 1, 2, f) != 2) {
            fclose(f);
            return NULL;
        }
        hlen |= (size_t)more[0] << 16 | (size_t)more[1] << 24;
    }
    header = malloc(hlen + 1);
    data = malloc(bytes ? bytes : 1);
    if (!header || !data || fread(header, 1, hlen, f) != hlen) {
        fprintf(stderr, "%s: truncated header\n", path);
        free(header), free(data), fclose(f);
        return NULL;
    }
    header[hlen] = 0;
    if (!strstr(header, "'<f4'") || strstr(header, "'fortran_order': True")) {
        fprintf(stderr, "%s: not a C-order little-endian float32 array\n", path);
        free(header), free(data), fclose(f);
        return NULL;
    }
    got = fread(data, 1, bytes, f);
    if (got != bytes || fgetc(f) != EOF) {
        fprintf(stderr, "%s: holds a different number of elements than the model's %lu\n", path,
                (unsigned long)(bytes / 4));
        free(header), free(data), fclose(f);
        return NULL;
    }
    free(header);
    fclose(f);
    return data;
}

int main(int argc, char **argv)
{
    const void *inputs[NUM_INPUTS > 0 ? NUM_INPUTS : 1];
    void *outputs[NUM_OUTPUTS];
    const char *in_files[NUM_INPUTS > 0 ? NUM_INPUTS : 1], *want_files[NUM_OUTPUTS];
    int nin = 0, nwant = 0, i, rc, bad = 0, expect = 0;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect"))
            expect = 1;
        else if (expect && nwant < NUM_OUTPUTS)
            want_files[nwant++] = argv[i];
        else if (!expect && nin < NUM_INPUTS)
            in_files[nin++] = argv[i];
        else {
            fprintf(stderr, "too many files\n");
            return 2;
        }
    }
    if (nin != NUM_INPUTS || (expect && nwant != NUM_OUTPUTS)) {
        fprintf(stderr, "usage: %s IN0.npy ... [--expect OUT0.npy ...] (%d inputs, %d outputs)\n",
                argv[0], NUM_INPUTS, NUM_OUTPUTS);
        return 2;
    }
    for (i = 0; i < NUM_INPUTS; i++) {
        if (strcmp(MODEL_INPUTS[i].dtype, "float32")) {
            fprintf(stderr, "input %d is %s; this program reads float32\n", i, MODEL_INPUTS[i].dtype);
            return 2;
        }
        if (!(inputs[i] = read_npy(in_files[i], MODEL_INPUTS[i].bytes)))
            return 2;
    }
    for (i = 0; i < NUM_OUTPUTS; i++)
        if (!(outputs[i] = malloc(MODEL_OUTPUTS[i].bytes ? MODEL_OUTPUTS[i].bytes : 1)))
            return 2;

    rc = MODEL_RUN(inputs, outputs, workspace, NULL);
    if (rc != 0) {
        fprintf(stderr, "the model returned %d\n", rc);
        return 1;
    }
    for (i = 0; i < NUM_OUTPUTS; i++) {
        const float *y = outputs[i];
        size_t n = MODEL_OUTPUTS[i].bytes / sizeof(float), k, best = 0, shown;
        for (k = 1; k < n; k++)
            if (y[k] > y[best])
                best = k;
        printf("output %d (%lu values, largest at [%lu]):", i, (unsigned long)n, (unsigned long)best);
        for (shown = 0; shown < n && shown < 10; shown++)
            printf(" %.6g", y[shown]);
        printf("%s\n", n > 10 ? " ..." : "");
        if (expect) {
            float *want = read_npy(want_files[i], MODEL_OUTPUTS[i].bytes);
            size_t wrong = 0;
            if (!want)
                return 2;
            for (k = 0; k < n; k++)
                if (!(fabs((double)y[k] - want[k]) <= 1e-5 + 1e-4 * fabs((double)want[k])))
                    wrong++;
            printf("output %d: %lu of %lu elements differ from %s\n", i, (unsigned long)wrong,
                   (unsigned long)n, want_files[i]);
            bad += wrong != 0;
            free(want);
        }
    }
    printf("%s\n", bad ? "MISMATCH" : expect ? "ok: every output matches" : "ok");
    return bad ? 1 : 0;
}
