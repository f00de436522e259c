/* counter.c: see counter.h. */
#include "counter.h"

#include "board.h"

#if ICOUNT_SHIFT < 7
#error "ICOUNT_SHIFT must be at least 7: below it one pair of reads is not exact"
#endif

/* CMSDK APB timer 0 of the MPS2 FPGA images: a 32-bit down counter at SYSCLK. */
#define TIMER0_CTRL   REG32(0x40000000u)
#define TIMER0_VALUE  REG32(0x40000004u)
#define TIMER0_RELOAD REG32(0x40000008u)
#define NS_PER_TICK (1000000000u / BOARD_CPU_HZ)

static counter_kind kind = COUNTER_NONE;
static uint32_t trampoline_insns;   /* instructions between the two reads besides the callee */

/* uint32_t counter_trampoline(counter_call *c): calls c->fn with c->args
 * (the fifth and later on the stack, 8-byte aligned), stores r0 in c->ret and
 * returns the timer ticks (or DWT cycles) between the two reads at [r9], which
 * only `blx` and the callee separate. r1 holds the counter's address. */
uint32_t counter_trampoline(counter_call *c, volatile uint32_t *counter_reg, uint32_t down);
__asm__(
    "    .text\n"
    "    .syntax unified\n"
    "    .thumb\n"
    "    .balign 4\n"
    "    .global counter_trampoline\n"
    "    .thumb_func\n"
    "    .type counter_trampoline, %function\n"
    "counter_trampoline:\n"
    "    push {r4-r10, lr}\n"
    "    mov r4, r0\n"
    "    mov r9, r1\n"
    "    mov r10, r2\n"
    "    mov r8, sp\n"
    "    ldr r6, [r4, #4]\n"          /* nargs */
    "    subs r6, r6, #4\n"           /* stack arguments */
    "    ble 2f\n"
    "    lsls r7, r6, #2\n"
    "    adds r7, r7, #7\n"
    "    bic r7, r7, #7\n"
    "    sub sp, sp, r7\n"
    "    add r1, r4, #24\n"           /* &args[4] */
    "    movs r2, #0\n"
    "1:  ldr r3, [r1, r2, lsl #2]\n"
    "    str r3, [sp, r2, lsl #2]\n"
    "    adds r2, r2, #1\n"
    "    cmp r2, r6\n"
    "    blt 1b\n"
    "2:  ldr r0, [r4, #8]\n"
    "    ldr r1, [r4, #12]\n"
    "    ldr r2, [r4, #16]\n"
    "    ldr r3, [r4, #20]\n"
    "    ldr r12, [r4, #0]\n"
    "    ldr r5, [r9]\n"              /* first read */
    "    blx r12\n"
    "    ldr r6, [r9]\n"              /* second read */
    "    mov sp, r8\n"
    "    str r0, [r4, #56]\n"         /* ret: 8 + 4 * COUNTER_MAX_ARGS */
    "    cmp r10, #0\n"
    "    ite ne\n"
    "    subne r0, r5, r6\n"          /* down counter */
    "    subeq r0, r6, r5\n"
    "    pop {r4-r10, pc}\n"
    "    .size counter_trampoline, . - counter_trampoline\n"
    "\n"
    "    .balign 4\n"
    "    .global counter_ret\n"
    "    .thumb_func\n"
    "    .type counter_ret, %function\n"
    "counter_ret:\n"                  /* 1 instruction */
    "    bx lr\n"
    "    .size counter_ret, . - counter_ret\n"
    "\n"
    "    .balign 4\n"
    "    .global counter_loop\n"
    "    .thumb_func\n"
    "    .type counter_loop, %function\n"
    "counter_loop:\n"                 /* 2 n + 1 instructions */
    "1:  subs r0, r0, #1\n"
    "    bne 1b\n"
    "    bx lr\n"
    "    .size counter_loop, . - counter_loop\n"
    "\n"
    "    .balign 4\n"
    "    .global counter_sum6\n"
    "    .thumb_func\n"
    "    .type counter_sum6, %function\n"
    "counter_sum6:\n"                 /* 8 instructions */
    "    add r0, r0, r1\n"
    "    add r0, r0, r2\n"
    "    add r0, r0, r3\n"
    "    ldr r1, [sp, #0]\n"
    "    ldr r2, [sp, #4]\n"
    "    add r0, r0, r1\n"
    "    add r0, r0, r2\n"
    "    bx lr\n"
    "    .size counter_sum6, . - counter_sum6\n");

typedef char counter_ret_offset_is_56[sizeof(counter_call) == 60 ? 1 : -1];

void counter_ret(void);

static uint32_t raw(counter_call *c)
{
    if (kind == COUNTER_DWT_CYCLES)
        return counter_trampoline(c, &DWT_CYCCNT, 0);
    return counter_trampoline(c, &TIMER0_VALUE, 1);
}

/* Ticks between the reads -> instructions between them, rounded to nearest:
 * exact because 2^S / NS_PER_TICK > 2 ticks per instruction (see counter.h). */
static uint32_t ticks_to_insns(uint32_t ticks)
{
    return (uint32_t)(((uint64_t)ticks * NS_PER_TICK + ((1u << ICOUNT_SHIFT) >> 1)) >> ICOUNT_SHIFT);
}

counter_kind counter_init(void)
{
    counter_call empty = {0};
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
    } else {
        TIMER0_CTRL = 0;
        TIMER0_RELOAD = 0xFFFFFFFFu;
        TIMER0_VALUE = 0xFFFFFFFFu;
        TIMER0_CTRL = 1u;      /* enable; no interrupt, external input off */
        c0 = TIMER0_VALUE;
        for (spin = 0; spin < 100u; spin++) {
        }
        c1 = TIMER0_VALUE;
        kind = c1 != c0 ? COUNTER_INSNS : COUNTER_NONE;
    }
    if (kind == COUNTER_NONE)
        return kind;
    /* The trampoline's own cost: everything between the reads but the
     * one-instruction callee. */
    empty.fn = (uintptr_t)counter_ret;
    trampoline_insns = 0;
    trampoline_insns = (uint32_t)counter_measure(&empty) - 1u;
    return kind;
}

counter_kind counter_kind_now(void)
{
    return kind;
}

uint64_t counter_measure(counter_call *c)
{
    uint32_t between;

    if (kind == COUNTER_NONE)
        return 0;
    between = raw(c);
    if (kind == COUNTER_INSNS)
        between = ticks_to_insns(between);
    return between >= trampoline_insns ? between - trampoline_insns : 0;
}

uint64_t counter_check_loop(uint32_t n)
{
    counter_call loop = {0};

    loop.fn = (uintptr_t)counter_loop;
    loop.nargs = 1;
    loop.args[0] = n;
    return counter_measure(&loop);
}
