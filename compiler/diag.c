/*
 * diag.c: errors that unwind to one boundary, and checked allocation.
 *
 * diag_fail() formats "FILE: message" into the Diag and longjmps to the
 * boundary (the setjmp of Diag.jmp). Without a boundary it is a bug: print and abort.
 * The x* helpers abort on out-of-memory, the one case where we do not unwind.
 */
#include "relayc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diag_vfail(Diag *d, const char *fmt, va_list ap) {
    if (d == NULL) {
        fprintf(stderr, "relayc: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        abort();
    }
    size_t o = 0;
    if (d->file != NULL && d->file[0] != '\0') {
        size_t fl = strlen(d->file);
        if (fl > sizeof d->msg / 2)
            fl = sizeof d->msg / 2;         /* keep room for the message itself */
        memcpy(d->msg, d->file, fl);
        memcpy(d->msg + fl, ": ", 2);
        o = fl + 2;
    }
    vsnprintf(d->msg + o, sizeof d->msg - o, fmt, ap);
    /* One line: messages quote names and strings from the file, which may hold any byte. */
    for (char *c = d->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    d->code = 2;
    if (d->jmp == NULL) {
        fprintf(stderr, "relayc: error with no handler: %s\n", d->msg);
        abort();
    }
    longjmp(*d->jmp, 1);
}

void diag_fail(Diag *d, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    diag_vfail(d, fmt, ap);
    /* not reached: diag_vfail never returns */
}

void diag_internal(const char *file, int line) {
    fflush(stdout);
    fprintf(stderr, "relayc: internal error at %s:%d\n", file, line);
    abort();
}

static RC_NORETURN void out_of_memory(size_t n) {
    fflush(stdout);
    fprintf(stderr, "relayc: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        out_of_memory(n);
    return p;
}

void *xcalloc(size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size)
        out_of_memory(SIZE_MAX);
    if (n == 0 || size == 0)
        n = size = 1;
    void *p = calloc(n, size);
    if (p == NULL)
        out_of_memory(n * size);
    return p;
}

void *xrealloc(void *p, size_t n) {
    /* realloc(p, 0) may free p and return NULL: always ask for at least one byte. */
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        out_of_memory(n);
    return q;
}

char *xstrdup(const char *s) {
    size_t n = strlen(s);
    char *r = xmalloc(n + 1);
    memcpy(r, s, n + 1);
    return r;
}

char *xstrndup(const char *s, size_t n) {
    size_t len = 0;
    while (len < n && s[len] != '\0')
        len++;
    char *r = xmalloc(len + 1);
    memcpy(r, s, len);
    r[len] = '\0';
    return r;
}

char *xasprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        unreachable();      /* an encoding error: a bad format, a bug */
    char *r = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(r, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return r;
}
