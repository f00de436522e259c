/*
 * counter.h: counting what one call costs.
 *
 * On silicon the DWT cycle counter counts the call's cycles. Under QEMU (which
 * does not model the DWT) the call's instructions are counted exactly: with
 * -icount shift=S every instruction advances virtual time by 2^S ns, and the
 * MPS2 board's 32-bit APB timer 0 counts that time at 25 MHz (40 ns a tick).
 * With S >= 7 (128 ns, 3.2 ticks per instruction) an interval of M instructions
 * spans between 3.2 M - 1 and 3.2 M + 1 ticks whatever the phase of the first
 * read, so M = round(ticks / 3.2) is exact, from one pair of reads. The timer
 * raises no interrupt, so nothing else runs between the reads. The reads sit in
 * an assembly trampoline around the call (`blx`), whose fixed cost is measured
 * at counter_init() with a one-instruction function and taken off, so a count
 * is the instructions executed from the callee's first instruction through its
 * return. README.md describes the calibration (calib.c checks it).
 */
#ifndef COUNTER_H
#define COUNTER_H

#include <stdint.h>

#ifndef ICOUNT_SHIFT
#define ICOUNT_SHIFT 7      /* the -icount shift=S QEMU is run with; exact for S >= 7 */
#endif

typedef enum {
    COUNTER_NONE,          /* neither counts: costs are not measured */
    COUNTER_DWT_CYCLES,    /* core clock cycles (silicon) */
    COUNTER_INSNS          /* instructions, exact under QEMU -icount shift=ICOUNT_SHIFT */
} counter_kind;

#define COUNTER_MAX_ARGS 12

/* One call to measure: fn(args[0], ..., args[nargs-1]) with word-sized
 * (pointer or integer) arguments, AAPCS; ret receives what fn returned in r0. */
typedef struct {
    uintptr_t fn;          /* the function's address (Thumb bit set) */
    uint32_t nargs;
    uint32_t args[COUNTER_MAX_ARGS];
    uint32_t ret;
} counter_call;

counter_kind counter_init(void);
counter_kind counter_kind_now(void);

/* Runs the call once and returns its cost: instructions (COUNTER_INSNS; exact
 * only if QEMU runs with -icount shift=ICOUNT_SHIFT, which the calibration
 * checks), cycles (COUNTER_DWT_CYCLES) or 0 (COUNTER_NONE). */
uint64_t counter_measure(counter_call *c);

/* Calibration functions of known length: counter_loop(n) executes exactly
 * 2 n + 1 instructions for n >= 1; counter_sum6(a, ..., f) returns a + ... + f
 * (two of them passed on the stack) in exactly 8 instructions. */
uint32_t counter_loop(uint32_t n);
uint32_t counter_sum6(uint32_t a, uint32_t b, uint32_t c, uint32_t d, uint32_t e, uint32_t f);

/* The measured cost of counter_loop(n) (exactly 2 n + 1 instructions): what
 * the harness prints to show that its count is one. */
uint64_t counter_check_loop(uint32_t n);

#endif /* COUNTER_H */
