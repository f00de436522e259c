/*
 * calib.c: checks that counter_measure() counts instructions exactly (see
 * counter.h and README.md). Under QEMU -icount shift=ICOUNT_SHIFT it measures
 * functions of known length -- counter_loop(n), 2 n + 1 instructions, for n from
 * 1 to 64 (every phase of the 25 MHz timer against the instruction clock) and
 * for lengths up to 10^8 instructions, and counter_sum6 (8 instructions, two
 * arguments on the stack) -- and requires every count to be exact.
 * Prints one line per check; exit status 0 if all are exact, 1 otherwise.
 */
#include <stdint.h>

#include "counter.h"
#include "semihost.h"

static int check(const char *what, uint32_t arg, uint64_t got, uint64_t want)
{
    int ok = got == want;
    sh_puts(ok ? "ok " : "WRONG ");
    sh_puts(what);
    sh_puts("(");
    sh_put_u32(arg);
    sh_puts("): measured ");
    sh_put_u64(got);
    sh_puts(", executes ");
    sh_put_u64(want);
    sh_puts("\n");
    return ok;
}

int main(void)
{
    static const uint32_t big[] = {100, 1000, 4095, 4096, 65537, 1000000, 12345678, 50000000};
    counter_call sum = {0};
    uint32_t n, i, wrong = 0, total = 0;

    if (counter_init() != COUNTER_INSNS) {
        sh_puts("error: no instruction counter (not QEMU, or QEMU without -icount)\n");
        return 1;
    }
    sh_puts("counting instructions: QEMU -icount shift=");
    sh_put_u32(ICOUNT_SHIFT);
    sh_puts(", APB timer 0 at 25 MHz\n");
    for (n = 1; n <= 64; n++, total++)
        wrong += !check("counter_loop", n, counter_check_loop(n), 2u * n + 1u);
    for (i = 0; i < sizeof big / sizeof big[0]; i++, total++)
        wrong += !check("counter_loop", big[i], counter_check_loop(big[i]), 2ull * big[i] + 1u);
    sum.fn = (uintptr_t)counter_sum6;
    sum.nargs = 6;
    for (i = 0; i < 6; i++)
        sum.args[i] = 1u << (3 * i);
    total++;
    wrong += !check("counter_sum6", 6, counter_measure(&sum), 8);
    total++;
    if (sum.ret != 37449u) {           /* 1 + 8 + 64 + 512 + 4096 + 32768 */
        sh_puts("WRONG counter_sum6 returned ");
        sh_put_u32(sum.ret);
        sh_puts(", not 37449 (arguments passed wrongly)\n");
        wrong++;
    }
    sh_put_u32(total - wrong);
    sh_puts(" of ");
    sh_put_u32(total);
    sh_puts(wrong ? " counts exact: FAIL\n" : " counts exact: PASS\n");
    return wrong ? 1 : 0;
}
