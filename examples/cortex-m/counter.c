/* counter.c: see counter.h. */
#include "counter.h"

#include "board.h"

#define SCB_ICSR REG32(0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define SYSTICK_RELOAD 0x00FFFFFFu

static counter_kind kind;
static volatile uint32_t systick_wraps;

void SysTick_Handler(void);
void SysTick_Handler(void)
{
    systick_wraps++;
}

counter_kind counter_init(void)
{
    uint32_t c0, c1;
    volatile uint32_t spin;

    DEMCR |= DEMCR_TRCENA;
    DWT_LAR = 0xC5ACCE55u;     /* unlocks the DWT on Cortex-M7; ignored elsewhere */
    DWT_CYCCNT = 0;
    DWT_CTRL |= 1u;            /* CYCCNTENA */
    c0 = DWT_CYCCNT;
    for (spin = 0; spin < 100u; spin++) {
    }
    c1 = DWT_CYCCNT;
    if (c1 != c0) {
        kind = COUNTER_DWT_CYCLES;
        return kind;
    }

    kind = COUNTER_SYSTICK;
    systick_wraps = 0;
    SYST_CSR = 0;
    SYST_RVR = SYSTICK_RELOAD;
    SYST_CVR = 0;              /* any write clears it; it reloads on the next tick */
    SYST_CSR = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
    while (SYST_CVR == 0) {    /* wait for the first reload: tick 0 */
    }
    systick_wraps = 0;
    return kind;
}

static uint64_t dwt_hi;
static uint32_t dwt_last;

uint64_t counter_read(void)
{
    if (kind == COUNTER_DWT_CYCLES) {
        /* 32-bit CYCCNT wraps in seconds; extend it between reads (reads must
         * come at least once per wrap, which they do around one inference). */
        uint32_t now = DWT_CYCCNT;
        if (now < dwt_last)
            dwt_hi += (uint64_t)1 << 32;
        dwt_last = now;
        return dwt_hi | now;
    } else {
        uint32_t w0, w1, val;
        do {
            w0 = systick_wraps;
            val = SYST_CVR;
            w1 = systick_wraps;
        } while (w0 != w1);
        /* A wrap whose interrupt is still pending has not been counted yet. */
        if ((SCB_ICSR & ICSR_PENDSTSET) && (val == 0 || val > SYSTICK_RELOAD / 2u))
            w0++;
        /* The counter runs RELOAD, ..., 1, 0, RELOAD, ... and the interrupt is
         * raised as it reaches 0, so that tick already counts as a wrap. */
        if (val == 0)
            return (uint64_t)w0 * (SYSTICK_RELOAD + 1u) - 1u;
        return (uint64_t)w0 * (SYSTICK_RELOAD + 1u) + (SYSTICK_RELOAD - val);
    }
}

uint64_t counter_time_loop(uint32_t insns)
{
    uint64_t t0, t1;
    uint32_t n = insns / 2u;

    t0 = counter_read();
    if (n != 0)
        __asm__ volatile(
            "1:\n\t"
            "subs %0, %0, #1\n\t"
            "bne 1b\n\t"
            : "+r"(n)
            :
            : "cc");
    t1 = counter_read();
    return t1 - t0;
}
