/*
 * buf.c: growing buffers for the text and bytes relayc emits, and small helpers
 * the emitters share (identifiers, checksums).
 */
#include "../compiler/relayc.h"

#include <ctype.h>
#include <stb_ds.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_write(Buf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    size_t at = arrlenu(b->data);
    arrsetlen(b->data, at + n);
    memcpy(b->data + at, p, n);
}

void buf_puts(Buf *b, const char *s) { buf_write(b, s, strlen(s)); }

void buf_printf(Buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        buf_write(b, small, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    buf_write(b, big, (size_t)n);
    free(big);
}

size_t buf_len(const Buf *b) { return arrlenu(b->data); }

const char *buf_cstr(Buf *b)
{
    arrput(b->data, 0);
    (void)arrpop(b->data);
    return b->data;
}

void buf_free(Buf *b)
{
    arrfree(b->data);
    b->data = NULL;
}

char *c_identifier(const char *s)
{
    size_t n = strlen(s);
    /* starts with a letter: a leading '_' would make a reserved identifier (and header
     * guards such as _STDINT_H); at most 64 characters in all */
    bool prefix = n == 0 || !isalpha((unsigned char)s[0]) || (unsigned char)s[0] >= 128;
    if (n > (prefix ? 63 : 64))
        n = prefix ? 63 : 64;
    char *out = xmalloc(n + 2);
    size_t k = 0;
    if (prefix)
        out[k++] = 'm';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[k++] = (c < 128 && (isalnum(c) || c == '_')) ? (char)c : '_';
    }
    out[k] = 0;
    return out;
}

uint32_t rc_checksum(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        uint32_t w = (uint32_t)p[i] | (uint32_t)p[i + 1] << 8 | (uint32_t)p[i + 2] << 16 |
                     (uint32_t)p[i + 3] << 24;
        a += w;
        b += a;
    }
    return a ^ (b << 16 | b >> 16);
}
