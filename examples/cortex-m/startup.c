/*
 * startup.c: vector table, reset handler and fault reporting for a bare-metal
 * ARMv7-M image (Cortex-M3/M4/M7) linked with mps2.ld.
 *
 * Reset: enable the FPU when built for one (CPACR CP10/CP11 full access), copy
 * .data from ROM, zero .bss, make the 1 KiB below the stack inaccessible with
 * the MPU, call main() and exit through semihosting with its status. Any fault
 * or unexpected exception prints the stacked registers (on a stack of its own,
 * so a stack overflow is reported too) and exits with status 3.
 */
#include <stdint.h>

#include "board.h"
#include "semihost.h"

/* From the linker script. */
extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_guard__[], __stack_limit__[], __stack_top__[];

int main(void);

void Reset_Handler(void);
void Fault_Handler(void);
void fault_report(const uint32_t *frame, uint32_t exc_return);

#define WEAK_DEFAULT __attribute__((weak, alias("Fault_Handler")))
void NMI_Handler(void) WEAK_DEFAULT;
void HardFault_Handler(void) WEAK_DEFAULT;
void MemManage_Handler(void) WEAK_DEFAULT;
void BusFault_Handler(void) WEAK_DEFAULT;
void UsageFault_Handler(void) WEAK_DEFAULT;
void SVC_Handler(void) WEAK_DEFAULT;
void DebugMon_Handler(void) WEAK_DEFAULT;
void PendSV_Handler(void) WEAK_DEFAULT;
void SysTick_Handler(void) WEAK_DEFAULT;
void IRQ_Handler(void) WEAK_DEFAULT;

typedef union {
    void (*handler)(void);
    void *stack;
} vector_entry;

#define NUM_IRQS 32   /* external interrupts the MPS2 FPGA images route */

__attribute__((section(".isr_vector"), used))
const vector_entry vector_table[16 + NUM_IRQS] = {
    {.stack = __stack_top__},
    {.handler = Reset_Handler},
    {.handler = NMI_Handler},
    {.handler = HardFault_Handler},
    {.handler = MemManage_Handler},
    {.handler = BusFault_Handler},
    {.handler = UsageFault_Handler},
    {.handler = 0},
    {.handler = 0},
    {.handler = 0},
    {.handler = 0},
    {.handler = SVC_Handler},
    {.handler = DebugMon_Handler},
    {.handler = 0},
    {.handler = PendSV_Handler},
    {.handler = SysTick_Handler},
#define IRQ {.handler = IRQ_Handler}
    IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ,
    IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ, IRQ,
#undef IRQ
};

void Reset_Handler(void)
{
    uint32_t *src, *dst;

#if defined(__ARM_FP)
    /* Before any floating-point instruction: CP10 and CP11 full access. */
    SCB_CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif

    for (src = __data_load__, dst = __data_start__; dst < __data_end__;)
        *dst++ = *src++;
    for (dst = __bss_start__; dst < __bss_end__;)
        *dst++ = 0;

    /* MPU region 0: the stack guard, 1 KiB, no access, never execute. The
     * default memory map stays in force elsewhere (PRIVDEFENA). */
    MPU_RNR = 0;
    MPU_RBAR = (uint32_t)(uintptr_t)__stack_guard__;
    MPU_RASR = (1u << 28) | (0u << 24) | ((10u - 1u) << 1) | 1u; /* XN, AP=none, 2^10 bytes */
    MPU_CTRL = (1u << 2) | 1u;

    /* Report MemManage, BusFault and UsageFault as themselves rather than as an
     * escalated HardFault, and trap integer division by zero. */
    SCB_SHCSR |= (1u << 16) | (1u << 17) | (1u << 18);
    SCB_CCR |= 1u << 4;
    __asm__ volatile("dsb\n\tisb" ::: "memory");

    sh_exit(main());
}

/* Where fault_report runs: the main stack may be what overflowed. */
static uint32_t fault_stack[128] __attribute__((used, aligned(8)));
uint32_t *const fault_stack_top = fault_stack + 128;

/* Passes the stacked exception frame (MSP or PSP) and EXC_RETURN to fault_report,
 * which runs on fault_stack. */
__attribute__((naked)) void Fault_Handler(void)
{
    __asm__ volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "mov r1, lr\n\t"
        "movw r2, #:lower16:fault_stack_top\n\t"
        "movt r2, #:upper16:fault_stack_top\n\t"
        "ldr r2, [r2]\n\t"
        "mov sp, r2\n\t"
        "b fault_report\n\t");
}

static const char *exception_name(uint32_t n)
{
    switch (n) {
    case 2: return "NMI";
    case 3: return "HardFault";
    case 4: return "MemManage";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 11: return "SVCall";
    case 12: return "DebugMonitor";
    case 14: return "PendSV";
    case 15: return "SysTick";
    default: return n >= 16 ? "IRQ" : "reserved";
    }
}

void fault_report(const uint32_t *frame, uint32_t exc_return)
{
    uint32_t ipsr;

    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    ipsr &= 0x1FFu;
    sh_puts("\nFAULT: exception ");
    sh_put_u32(ipsr);
    sh_puts(" (");
    sh_puts(exception_name(ipsr));
    if (frame < __stack_limit__ || frame + 8 > __stack_top__) {
        /* The frame is not on the stack (the guard, or below): do not read it. */
        sh_puts(")\n  stack overflow: sp=");
        sh_put_hex32((uint32_t)(uintptr_t)frame);
        sh_puts(", stack ");
        sh_put_hex32((uint32_t)(uintptr_t)__stack_limit__);
        sh_puts("..");
        sh_put_hex32((uint32_t)(uintptr_t)__stack_top__);
    } else {
        sh_puts(")\n  pc=");
        sh_put_hex32(frame[6]);
        sh_puts(" lr=");
        sh_put_hex32(frame[5]);
        sh_puts(" sp=");
        sh_put_hex32((uint32_t)(uintptr_t)frame);
    }
    sh_puts(" exc_return=");
    sh_put_hex32(exc_return);
    sh_puts("\n  CFSR=");
    sh_put_hex32(SCB_CFSR);
    sh_puts(" HFSR=");
    sh_put_hex32(SCB_HFSR);
    sh_puts(" MMFAR=");
    sh_put_hex32(SCB_MMFAR);
    sh_puts(" BFAR=");
    sh_put_hex32(SCB_BFAR);
    sh_puts("\nRESULT: FAIL (fault)\n");
    sh_exit(3);
}
