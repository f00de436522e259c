/*
 * semihost.h: console output and exit through Arm semihosting (BKPT 0xAB).
 *
 * Output is line-buffered and sent with SYS_WRITE0; numbers are formatted here,
 * without printf, so the image needs no stdio. Under QEMU run with
 * -semihosting-config enable=on,target=native; on real hardware a debugger must
 * be attached (BKPT halts the core otherwise).
 */
#ifndef SEMIHOST_H
#define SEMIHOST_H

#include <stdint.h>

#if defined(__GNUC__)
#define SH_NORETURN __attribute__((noreturn))
#else
#define SH_NORETURN
#endif

void sh_putc(char c);
void sh_puts(const char *s);                 /* no newline added */
void sh_flush(void);
void sh_put_u32(uint32_t v);
void sh_put_i32(int32_t v);
void sh_put_u64(uint64_t v);
void sh_put_i64(int64_t v);
void sh_put_hex32(uint32_t v);               /* "0x0000abcd" */
/* Decimal scientific notation with sig significant digits (1..17), trailing
 * zeros dropped: 1.5, -2.25e-07, 3e+12, nan, inf. sig = 9 round-trips a float. */
void sh_put_float(double v, int sig);

/* Flushes output, then ends the program with status (SYS_EXIT_EXTENDED, falling
 * back to SYS_EXIT, which can only tell 0 from non-zero). Never returns. */
SH_NORETURN void sh_exit(int status);

#endif /* SEMIHOST_H */
