/*
 * jit.c: every libtcc call relayc makes. The emitted C (one translation unit, no
 * #include) is compiled in memory against a small prelude that declares what it uses
 * from <stdint.h>, <stddef.h> and <math.h>; the math functions are bound to relayc's
 * own libm, so `relayc run` and `relayc check` need no C compiler, headers or libc
 * development files on the machine, only tcc's runtime library.
 *
 * A Jit can also hold a library that an external compiler built (--cc, cc.c), so the
 * command line has one way to get and call the compiled model whichever built it.
 */
#include "../compiler/relayc.h"

#include <dlfcn.h>
#include <libtcc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RELAYC_TCC_LIBDIR
#define RELAYC_TCC_LIBDIR "/usr/lib/x86_64-linux-gnu/tcc"
#endif

/* The one-argument float functions of <math.h> the emitted code may call (elementwise.def's
 * expressions): declared in the prelude and bound to the host's libm, from this one list. */
#define MATH_F1(X) X(expf) X(logf) X(sqrtf) X(tanhf) X(erff) X(fabsf) X(floorf) X(ceilf) \
    X(roundf) X(truncf) X(sinf) X(cosf) X(tanf) X(asinf) X(acosf) X(atanf) X(sinhf) \
    X(coshf) X(asinhf) X(acoshf) X(atanhf) X(log2f) X(log10f) X(exp2f) X(log1pf) X(expm1f)

static const char prelude[] =
    "typedef signed char int8_t;\n"
    "typedef unsigned char uint8_t;\n"
    "typedef short int16_t;\n"
    "typedef unsigned short uint16_t;\n"
    "typedef int int32_t;\n"
    "typedef unsigned int uint32_t;\n"
    "typedef long long int64_t;\n"
    "typedef unsigned long long uint64_t;\n"
    "typedef unsigned long uintptr_t;\n"
    "typedef unsigned long size_t;\n"
    "#define NULL ((void *)0)\n"
    "#define INT64_C(x) x##LL\n"
    "#define INT64_MIN (-9223372036854775807LL - 1)\n"
    "#define INFINITY (1.0f / 0.0f)\n"
    "#define NAN (0.0f / 0.0f)\n"
#define DECLARE(f) "float " #f "(float);\n"
    MATH_F1(DECLARE)
#undef DECLARE
    "float powf(float, float);\n"
    "double exp(double); double log(double);\n";

struct Jit {
    TCCState *s;            /* libtcc's state, or NULL for a library from --cc */
    void *mem;              /* the code libtcc relocated */
    void *dl;               /* the dlopen handle of a library from --cc, or NULL */
    char *err;
    size_t errlen;
};

static void on_error(void *opaque, const char *msg)
{
    struct Jit *j = opaque;
    /* keep the first error; a warning only until an error comes */
    if (j->err && j->errlen && (!j->err[0] || (!strstr(j->err, "error") && strstr(msg, "error"))))
        snprintf(j->err, j->errlen, "%s", msg);
}

typedef struct Jit Jit;

Jit *jit_compile(const char *source, const char *cc, char *err, size_t errlen)
{
    if (cc) {
        void *dl = cc_load(source, cc, err, errlen);
        if (!dl)
            return NULL;
        Jit *j = xcalloc(1, sizeof *j);
        j->dl = dl;
        return j;
    }
    Jit *j = xcalloc(1, sizeof *j);
    char msg[1024] = "";
    err[0] = 0;
    j->err = msg;
    j->errlen = sizeof msg;
    j->s = tcc_new();
    if (!j->s) {
        snprintf(err, errlen, "libtcc: cannot create a compiler state");
        free(j);
        return NULL;
    }
    tcc_set_error_func(j->s, j, on_error);
    tcc_set_lib_path(j->s, RELAYC_TCC_LIBDIR);
    tcc_set_options(j->s, "-nostdinc -nostdlib");
    tcc_set_output_type(j->s, TCC_OUTPUT_MEMORY);
    /* function pointers go through memcpy: ISO C has no function-to-object cast */
    static const struct { const char *name; float (*fn)(float); } f1[] = {
#define SYMBOL(f) { #f, f },
        MATH_F1(SYMBOL)
#undef SYMBOL
    };
    static const struct { const char *name; double (*fn)(double); } d1[] = {
        { "exp", exp }, { "log", log },
    };
    float (*pw)(float, float) = powf;
    void *addr;
    for (size_t i = 0; i < sizeof f1 / sizeof f1[0]; i++) {
        memcpy(&addr, &f1[i].fn, sizeof addr);
        tcc_add_symbol(j->s, f1[i].name, addr);
    }
    for (size_t i = 0; i < sizeof d1 / sizeof d1[0]; i++) {
        memcpy(&addr, &d1[i].fn, sizeof addr);
        tcc_add_symbol(j->s, d1[i].name, addr);
    }
    memcpy(&addr, &pw, sizeof addr);
    tcc_add_symbol(j->s, "powf", addr);
    size_t n = strlen(prelude) + strlen(source) + 1;
    char *text = xmalloc(n);
    snprintf(text, n, "%s%s", prelude, source);
    int rc = tcc_compile_string(j->s, text);
    free(text);
    if (rc == 0) {
        /* tcc's own runtime helpers (float/long conversions) */
        tcc_add_file(j->s, RELAYC_TCC_LIBDIR "/libtcc1.a");
        int size = tcc_relocate(j->s, NULL);
        if (size > 0) {
            j->mem = xmalloc((size_t)size);
            rc = tcc_relocate(j->s, j->mem);
        } else {
            rc = -1;
        }
    }
    if (rc != 0) {
        snprintf(err, errlen, "the generated code did not compile with libtcc: %s",
                 msg[0] ? msg : "no message");
        jit_free(j);
        return NULL;
    }
    j->err = NULL;
    return j;
}

void *jit_symbol(Jit *j, const char *name)
{
    if (j->dl)
        return dlsym(j->dl, name);
    return tcc_get_symbol(j->s, name);
}

void jit_free(Jit *j)
{
    if (!j)
        return;
    if (j->dl)
        dlclose(j->dl);
    if (j->s)
        tcc_delete(j->s);
    free(j->mem);
    free(j);
}
