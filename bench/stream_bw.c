/*
 * stream_bw.c: one core's read bandwidth from memory with S sequential streams read side
 * by side (the reason relayc packs weights that come from memory once a call as several
 * streams: compiler/pack.c, Tile.streams). Reads a 48 MiB buffer (past the last-level
 * cache of most cores) as S equal parts, a 64-byte line of each part in turn; prints
 * GB/s for S = 1, 2, 4, 8, 16 (the best of 15 passes).
 *
 *   gcc -O3 -march=native bench/stream_bw.c -o stream_bw && taskset -c 0 ./stream_bw
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    size_t n = (size_t)48 << 20 >> 2, i, k;
    float *a = malloc(n * sizeof *a), s[16] = { 0 };
    if (!a)
        return 1;
    for (i = 0; i < n; i++)
        a[i] = (float)(i & 7);
    for (size_t S = 1; S <= 16; S *= 2) {
        size_t m = n / S / 16 * 16;
        double best = 1e9;
        for (int r = 0; r < 15; r++) {
            double t = now();
            for (i = 0; i < m; i += 16)
                for (k = 0; k < S; k++)
                    for (int j = 0; j < 16; j++)
                        s[j] += a[k * m + i + j];
            t = now() - t;
            best = t < best ? t : best;
        }
        printf("%2zu stream(s): %5.1f GB/s\n", S, (double)(m * S) * sizeof *a / best / 1e9);
    }
    printf("(checksum %g)\n", (double)s[3]);
    free(a);
    return 0;
}
