/*
 * counter.h: counting what an inference costs.
 *
 * Prefers the DWT cycle counter (real Cortex-M3/M4/M7 silicon). Where CYCCNT
 * does not count (QEMU does not model the DWT), falls back to SysTick at the
 * processor clock, extended to 64 bits by counting wraps in SysTick_Handler.
 * Under QEMU's -icount shift=S every instruction advances virtual time by 2^S ns,
 * so SysTick ticks convert to instructions: insns = ticks * (1e9 / BOARD_CPU_HZ) / 2^S.
 * With shift=6 (64 ns per instruction, 40 ns per tick at 25 MHz) that count is
 * exact to about one instruction. main.c checks the relation by timing a loop
 * of known length with counter_time_loop().
 */
#ifndef COUNTER_H
#define COUNTER_H

#include <stdint.h>

typedef enum {
    COUNTER_DWT_CYCLES,    /* counts core clock cycles */
    COUNTER_SYSTICK        /* counts SysTick ticks at BOARD_CPU_HZ */
} counter_kind;

counter_kind counter_init(void);
uint64_t counter_read(void);

/* Runs a loop of exactly `insns` instructions (a multiple of 2) between two
 * counter reads and returns the ticks in between. With 0 it measures the cost of
 * the reads alone. */
uint64_t counter_time_loop(uint32_t insns);

#endif /* COUNTER_H */
