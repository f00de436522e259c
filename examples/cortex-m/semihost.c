/* semihost.c: see semihost.h. */
#include "semihost.h"

#include <string.h>

#define SYS_WRITEC        0x03u
#define SYS_WRITE0        0x04u
#define SYS_EXIT          0x18u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_Stopped_ApplicationExit  0x20026u
#define ADP_Stopped_RunTimeErrorUnknown 0x20023u

static uint32_t sh_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static char line[128];
static unsigned line_len;

void sh_flush(void)
{
    if (line_len > 0) {
        line[line_len] = '\0';
        sh_call(SYS_WRITE0, line);
        line_len = 0;
    }
}

void sh_putc(char c)
{
    if (c == '\0')
        return;
    line[line_len++] = c;
    if (c == '\n' || line_len == sizeof line - 1)
        sh_flush();
}

void sh_puts(const char *s)
{
    while (*s)
        sh_putc(*s++);
}

void sh_put_u64(uint64_t v)
{
    char buf[24];
    int n = 0;
    do {
        buf[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (n > 0)
        sh_putc(buf[--n]);
}

void sh_put_u32(uint32_t v)
{
    char buf[12];
    int n = 0;
    do {
        buf[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (n > 0)
        sh_putc(buf[--n]);
}

void sh_put_i32(int32_t v)
{
    if (v < 0) {
        sh_putc('-');
        sh_put_u32(0u - (uint32_t)v);
    } else {
        sh_put_u32((uint32_t)v);
    }
}

void sh_put_i64(int64_t v)
{
    if (v < 0) {
        sh_putc('-');
        sh_put_u64(0u - (uint64_t)v);
    } else {
        sh_put_u64((uint64_t)v);
    }
}

void sh_put_hex32(uint32_t v)
{
    static const char digits[] = "0123456789abcdef";
    int i;
    sh_puts("0x");
    for (i = 28; i >= 0; i -= 4)
        sh_putc(digits[(v >> i) & 0xFu]);
}

void sh_put_float(double v, int sig)
{
    static const double p10[9] = {1e1, 1e2, 1e4, 1e8, 1e16, 1e32, 1e64, 1e128, 1e256};
    static const double n10[9] = {1e-1, 1e-2, 1e-4, 1e-8, 1e-16, 1e-32, 1e-64, 1e-128, 1e-256};
    uint64_t bits, scale = 1, digits;
    char buf[20];
    int i, n, e10 = 0;

    memcpy(&bits, &v, sizeof bits);
    if (v != v) {
        sh_puts("nan");
        return;
    }
    if (bits >> 63) {
        sh_putc('-');
        v = -v;
    }
    if (v > 1.7976931348623157e308) {
        sh_puts("inf");
        return;
    }
    if (v == 0.0) {
        sh_putc('0');
        return;
    }
    if (sig < 1)
        sig = 1;
    if (sig > 17)
        sig = 17;

    /* Bring v into [1, 10) with binary powers of ten. */
    if (v >= 10.0) {
        for (i = 8; i >= 0; i--)
            if (v >= p10[i]) {
                v /= p10[i];
                e10 += 1 << i;
            }
    } else if (v < 1.0) {
        for (i = 8; i >= 0; i--)
            if (v < n10[i]) {
                v *= p10[i];
                e10 -= 1 << i;
            }
        if (v < 1.0) {
            v *= 10.0;
            e10 -= 1;
        }
    }
    for (i = 1; i < sig; i++)
        scale *= 10u;
    digits = (uint64_t)(v * (double)scale + 0.5);
    if (digits >= scale * 10u) {           /* rounded up to the next power of ten */
        digits /= 10u;
        e10 += 1;
    }
    if (digits < scale) {                  /* normalisation fell just short of 1 */
        digits = scale;
    }

    n = 0;
    for (i = 0; i < sig; i++) {
        buf[n++] = (char)('0' + (int)(digits % 10u));
        digits /= 10u;
    }
    /* buf holds the digits least significant first; drop trailing zeros. */
    i = 0;
    while (i < sig - 1 && buf[i] == '0')
        i++;
    sh_putc(buf[n - 1]);
    if (n - 2 >= i) {
        int k;
        sh_putc('.');
        for (k = n - 2; k >= i; k--)
            sh_putc(buf[k]);
    }
    if (e10 != 0) {
        sh_putc('e');
        sh_putc(e10 < 0 ? '-' : '+');
        if (e10 < 0)
            e10 = -e10;
        if (e10 < 10)
            sh_putc('0');
        sh_put_u32((uint32_t)e10);
    }
}

void sh_exit(int status)
{
    uint32_t block[2];

    sh_flush();
    block[0] = ADP_Stopped_ApplicationExit;
    block[1] = (uint32_t)status;
    sh_call(SYS_EXIT_EXTENDED, block);
    /* Only reached where SYS_EXIT_EXTENDED is not supported. */
    sh_call(SYS_EXIT, (const void *)(uintptr_t)(status == 0 ? ADP_Stopped_ApplicationExit
                                                            : ADP_Stopped_RunTimeErrorUnknown));
    for (;;) {
    }
}
