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

/* Runs one case; returns NULL or an error message. The positional parameters fill the
 * kernel's parameter struct (runtime/params.def) in its members' order. */
static const char *run(const char *name, const long *p, int np, float **in,
                       const long *cnt, int nin, float *y, long ycount)
{
    int i, rank;
#define NEED(np_, nin_) \
    if (np != (np_) || nin != (nin_)) return "wrong parameter or input count"
    if (!strcmp(name, "conv2d")) {
        Conv2dParams c = { 0 };
        if (np != 16 || (nin != 2 && nin != 3))
            return "wrong parameter or input count";
        c.n = (int)p[0], c.ci = (int)p[1], c.hi = (int)p[2], c.wi = (int)p[3];
        c.co = (int)p[4], c.ho = (int)p[5], c.wo = (int)p[6], c.kh = (int)p[7];
        c.kw = (int)p[8], c.sh = (int)p[9], c.sw = (int)p[10], c.dh = (int)p[11];
        c.dw = (int)p[12], c.pt = (int)p[13], c.pl = (int)p[14], c.groups = (int)p[15];
        rk_conv2d(&c, in[0], in[1], nin == 3 ? in[2] : NULL, y);
    } else if (!strcmp(name, "matmul")) {
        MatmulParams m = { 0 };
        NEED(8, 2);
        m.batch = (int)p[0], m.m = (int)p[1], m.n = (int)p[2], m.k = (int)p[3];
        m.ta = (int)p[4], m.tb = (int)p[5], m.sa = p[6], m.sb = p[7];
        rk_matmul(&m, in[0], in[1], y);
    } else if (!strcmp(name, "pool2d")) {
        Pool2dParams q = { 0 };
        NEED(18, 1);
        q.n = (int)p[0], q.c = (int)p[1], q.hi = (int)p[2], q.wi = (int)p[3];
        q.ho = (int)p[4], q.wo = (int)p[5], q.kh = (int)p[6], q.kw = (int)p[7];
        q.sh = (int)p[8], q.sw = (int)p[9], q.dh = (int)p[10], q.dw = (int)p[11];
        q.pt = (int)p[12], q.pl = (int)p[13], q.pb = (int)p[14], q.pr = (int)p[15];
        q.is_max = (int)p[16], q.count_include_pad = (int)p[17];
        rk_pool2d(&q, in[0], y);
    } else if (!strcmp(name, "adaptive_avg_pool2d")) {
        AdaptivePool2dParams a = { 0 };
        NEED(6, 1);
        a.n = (int)p[0], a.c = (int)p[1], a.hi = (int)p[2], a.wi = (int)p[3];
        a.ho = (int)p[4], a.wo = (int)p[5];
        rk_adaptive_pool2d(&a, in[0], y);
    } else if (!strcmp(name, "softmax")) {
        SoftmaxParams sm = { 0 };
        NEED(4, 1);
        sm.outer = (int)p[0], sm.len = (int)p[1], sm.inner = (int)p[2], sm.log = (int)p[3];
        rk_softmax(&sm, in[0], y);
    } else if (!strcmp(name, "reduce")) {
        ReduceParams r = { 0 };
        /* rank, shape[rank], reduced[rank], kind */
        if (np < 2 || p[0] < 0 || p[0] > 8 || np != 2 + 2 * (int)p[0] || nin != 1)
            return "wrong parameter or input count";
        rank = r.rank = (int)p[0];
        for (i = 0; i < rank; i++) {
            r.shape[i] = (int)p[1 + i];
            r.reduced[i] = (int)p[1 + rank + i];
        }
        r.kind = (int)p[1 + 2 * rank];
        rk_reduce(&r, in[0], y);
    } else if (!strcmp(name, "copy")) {
        CopyParams c = { 0 };
        /* rank, shape[rank], xstride[rank], xoff, ystride[rank], yoff */
        if (np < 3 || p[0] < 0 || p[0] > 8 || np != 3 + 3 * (int)p[0] || nin != 1)
            return "wrong parameter or input count";
        rank = c.rank = (int)p[0];
        for (i = 0; i < rank; i++) {
            c.shape[i] = (int)p[1 + i];
            c.xs[i] = p[1 + rank + i];
            c.ys[i] = p[2 + 2 * rank + i];
        }
        c.esize = (int)sizeof(float);
        c.xoff = p[1 + 2 * rank];
        c.yoff = p[2 + 3 * rank];
        rk_copy(&c, in[0], y);
    } else if (!strcmp(name, "fill")) {
        FillParams f = { 0 };
        /* count; input: the value */
        NEED(1, 1);
        if (cnt[0] != 1)
            return "fill takes one value";
        f.count = p[0];
        f.value = in[0][0];
        rk_fill(&f, y);
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
