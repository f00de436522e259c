/*
 * kernel_harness.c: runs relayc's reference kernels on cases read from stdin.
 *
 * Built by tests/kernels/test_kernels.py, e.g.
 *   gcc -std=c99 -Wall -Wextra -pedantic -Werror -O1 -fsanitize=address,undefined \
 *       tests/kernels/kernel_harness.c -o kernel_harness -lm
 *
 * Input: any number of cases, each
 *   one text line:  KERNEL NP P1 .. PNP NIN C1 .. CNIN OUTCOUNT '\n'
 *                   (P: integer parameters, C: float counts of the inputs)
 *   then the NIN inputs as raw little-endian float32, C1 + .. + CNIN floats.
 * Output, per case:
 *   one text line:  "out OUTCOUNT\n" then OUTCOUNT raw float32, or
 *                   "err MESSAGE\n" (bad case, or a write outside the output).
 * The output buffer is pre-filled with a canary (NaN, bits 0x7fc0dead) and
 * surrounded by GUARD canary floats on each side, checked after the kernel.
 * Input buffers are malloc'd at their exact size so ASan sees overreads.
 */
#include "../../runtime/kernels.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 64
#define MAXIN 4
#define GUARD 256
#define CANARY 0x7fc0deadu

static float canary(void)
{
    unsigned int u = CANARY;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int is_canary(float f)
{
    unsigned int u;
    memcpy(&u, &f, sizeof u);
    return u == CANARY;
}

/* Runs one case; returns NULL or an error message. */
static const char *run(const char *name, const long *p, int np, float **in,
                       const long *cnt, int nin, float *y, long ycount)
{
    int shape[8], red[8], i, rank;
    long xs[8], ys[8];
#define NEED(np_, nin_) \
    if (np != (np_) || nin != (nin_)) return "wrong parameter or input count"
    if (!strcmp(name, "conv2d")) {
        if (np != 16 || (nin != 2 && nin != 3))
            return "wrong parameter or input count";
        rk_conv2d(in[0], in[1], nin == 3 ? in[2] : NULL, y,
                  (int)p[0], (int)p[1], (int)p[2], (int)p[3], (int)p[4], (int)p[5],
                  (int)p[6], (int)p[7], (int)p[8], (int)p[9], (int)p[10], (int)p[11],
                  (int)p[12], (int)p[13], (int)p[14], (int)p[15]);
    } else if (!strcmp(name, "matmul")) {
        NEED(8, 2);
        rk_matmul(in[0], in[1], y, (int)p[0], (int)p[1], (int)p[2], (int)p[3],
                  (int)p[4], (int)p[5], p[6], p[7]);
    } else if (!strcmp(name, "pool2d")) {
        NEED(18, 1);
        rk_pool2d(in[0], y, (int)p[0], (int)p[1], (int)p[2], (int)p[3], (int)p[4],
                  (int)p[5], (int)p[6], (int)p[7], (int)p[8], (int)p[9], (int)p[10],
                  (int)p[11], (int)p[12], (int)p[13], (int)p[14], (int)p[15],
                  (int)p[16], (int)p[17]);
    } else if (!strcmp(name, "adaptive_avg_pool2d")) {
        NEED(6, 1);
        rk_adaptive_avg_pool2d(in[0], y, (int)p[0], (int)p[1], (int)p[2], (int)p[3],
                               (int)p[4], (int)p[5]);
    } else if (!strcmp(name, "softmax")) {
        NEED(4, 1);
        rk_softmax(in[0], y, (int)p[0], (int)p[1], (int)p[2], (int)p[3]);
    } else if (!strcmp(name, "reduce")) {
        /* rank, shape[rank], reduced[rank], kind */
        if (np < 2 || p[0] < 0 || p[0] > 8 || np != 2 + 2 * (int)p[0] || nin != 1)
            return "wrong parameter or input count";
        rank = (int)p[0];
        for (i = 0; i < rank; i++) {
            shape[i] = (int)p[1 + i];
            red[i] = (int)p[1 + rank + i];
        }
        rk_reduce(in[0], y, rank, shape, red, (int)p[1 + 2 * rank]);
    } else if (!strcmp(name, "copy")) {
        /* rank, shape[rank], xstride[rank], xoff, ystride[rank], yoff */
        if (np < 3 || p[0] < 0 || p[0] > 8 || np != 3 + 3 * (int)p[0] || nin != 1)
            return "wrong parameter or input count";
        rank = (int)p[0];
        for (i = 0; i < rank; i++) {
            shape[i] = (int)p[1 + i];
            xs[i] = p[1 + rank + i];
            ys[i] = p[2 + 2 * rank + i];
        }
        rk_copy(in[0], y, rank, shape, xs, p[1 + 2 * rank], ys, p[2 + 3 * rank]);
    } else if (!strcmp(name, "fill")) {
        /* count; input: the value */
        NEED(1, 1);
        if (cnt[0] != 1)
            return "fill takes one value";
        rk_fill(y, p[0], in[0][0]);
    } else {
        return "unknown kernel";
    }
#undef NEED
    (void)ycount;
    return NULL;
}

static void reply_err(const char *msg)
{
    printf("err %s\n", msg);
    fflush(stdout);
}

int main(void)
{
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        char name[64], *s = line, *end;
        long p[MAXP], cnt[MAXIN], ycount, k, total;
        float *in[MAXIN] = {NULL, NULL, NULL, NULL}, *buf, c = canary();
        int np, nin, i, n, bad = 0;
        const char *err;
        if (sscanf(s, "%63s%n", name, &n) != 1)
            continue;
        s += n;
        np = (int)strtol(s, &end, 10);
        if (end == s || np < 0 || np > MAXP)
            bad = 1;
        s = end;
        for (i = 0; !bad && i < np; i++) {
            p[i] = strtol(s, &end, 10);
            bad = end == s;
            s = end;
        }
        nin = bad ? 0 : (int)strtol(s, &end, 10);
        if (!bad && (end == s || nin < 0 || nin > MAXIN))
            bad = 1;
        s = end;
        for (i = 0; !bad && i < nin; i++) {
            cnt[i] = strtol(s, &end, 10);
            bad = end == s || cnt[i] < 0;
            s = end;
        }
        ycount = bad ? 0 : strtol(s, &end, 10);
        if (bad || end == s || ycount < 0) {
            reply_err("bad header");
            return 1;
        }
        for (i = 0; i < nin; i++) {
            in[i] = malloc(cnt[i] > 0 ? (size_t)cnt[i] * sizeof(float) : 1);
            if (!in[i] || fread(in[i], sizeof(float), (size_t)cnt[i], stdin) != (size_t)cnt[i]) {
                reply_err("short input");
                return 1;
            }
        }
        total = ycount + 2 * GUARD;
        buf = malloc((size_t)total * sizeof(float));
        if (!buf) {
            reply_err("out of memory");
            return 1;
        }
        for (k = 0; k < total; k++)
            buf[k] = c;
        err = run(name, p, np, in, cnt, nin, buf + GUARD, ycount);
        if (!err) {
            for (k = 0; k < GUARD; k++)
                if (!is_canary(buf[k]) || !is_canary(buf[GUARD + ycount + k]))
                    err = "write outside the output buffer";
        }
        if (err) {
            reply_err(err);
        } else {
            printf("out %ld\n", ycount);
            fwrite(buf + GUARD, sizeof(float), (size_t)ycount, stdout);
            fflush(stdout);
        }
        free(buf);
        for (i = 0; i < nin; i++)
            free(in[i]);
    }
    return 0;
}
