/*
 * enospc_shim.c: an LD_PRELOAD library that simulates a full disk for relayc's
 * failure-safety test (test_failure.py). It wraps write(): once the bytes written to
 * regular files (not the terminal, pipes or /dev/null) pass a budget, write() fails.
 *
 *   RELAYC_SHIM_ENOSPC_AFTER=N  writes past N bytes fail with ENOSPC (a short write first,
 *                               as a real disk filling up gives)
 *   RELAYC_SHIM_STALL_AFTER=N   writes past N bytes block forever instead (the test then
 *                               sends a signal, to check that temporaries are removed)
 *   RELAYC_SHIM_FAIL_RENAME=K   the K-th rename() (from 1) fails with EIO: a commit that
 *                               fails half-way must put back what it already replaced
 *
 * Built by tests/meson.build as a shared module; not part of relayc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long long budget = -1, stall = -1, used;
static long fail_rename = -1, renames;
static int ready;

static void init(void)
{
    const char *e = getenv("RELAYC_SHIM_ENOSPC_AFTER");
    const char *s = getenv("RELAYC_SHIM_STALL_AFTER");
    const char *r = getenv("RELAYC_SHIM_FAIL_RENAME");
    budget = e ? atoll(e) : -1;
    stall = s ? atoll(s) : -1;
    fail_rename = r ? atol(r) : -1;
    ready = 1;
}

int rename(const char *from, const char *to)
{
    static int (*real)(const char *, const char *);
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (!ready)
        init();
    if (++renames == fail_rename) {
        errno = EIO;
        return -1;
    }
    return real(from, to);
}

static int is_file(int fd)
{
    struct stat st;
    return fd > 2 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

ssize_t write(int fd, const void *buf, size_t n)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (!ready)
        init();
    if (n > 0 && is_file(fd)) {
        if (stall >= 0 && used + (long long)n > stall)
            for (;;)
                pause();
        if (budget >= 0) {
            long long left = budget - used;
            if (left <= 0) {
                errno = ENOSPC;
                return -1;
            }
            if ((long long)n > left)
                n = (size_t)left;       /* the short write before the failure */
        }
        ssize_t k = real(fd, buf, n);
        if (k > 0)
            used += k;
        return k;
    }
    return real(fd, buf, n);
}
