/*
 * board.h: the few Cortex-M system registers and board facts the harness uses.
 *
 * Board: Arm MPS2 with an FPGA image (QEMU: -M mps2-an386, Cortex-M4F; also
 * mps2-an385, Cortex-M3, and mps2-an500, Cortex-M7). Memory map (mps2.ld):
 *   0x00000000  4 MiB  ZBT SSRAM1    "ROM": vectors, .text, .rodata, model constants
 *   0x20000000  4 MiB  ZBT SSRAM2/3  "RAM": .data, .bss (workspace), stack
 * QEMU loads the ELF into both; the vector table sits at 0 (VTOR reset value).
 */
#ifndef BOARD_H
#define BOARD_H

#include <stdint.h>

/* SYSCLK of the MPS2 FPGA images in QEMU; SysTick with CLKSOURCE=1 counts at it. */
#ifndef BOARD_CPU_HZ
#define BOARD_CPU_HZ 25000000u
#endif

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* System Control Block */
#define SCB_CPACR   REG32(0xE000ED88u)  /* coprocessor access (CP10/CP11 = FPU) */
#define SCB_CFSR    REG32(0xE000ED28u)  /* configurable fault status */
#define SCB_HFSR    REG32(0xE000ED2Cu)  /* hard fault status */
#define SCB_MMFAR   REG32(0xE000ED34u)
#define SCB_BFAR    REG32(0xE000ED38u)
#define SCB_SHCSR   REG32(0xE000ED24u)  /* enables for MemManage/BusFault/UsageFault */
#define SCB_CCR     REG32(0xE000ED14u)  /* configuration and control */

/* SysTick (24-bit down counter) */
#define SYST_CSR    REG32(0xE000E010u)
#define SYST_RVR    REG32(0xE000E014u)
#define SYST_CVR    REG32(0xE000E018u)
#define SYST_CSR_ENABLE    (1u << 0)
#define SYST_CSR_TICKINT   (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2)   /* 1: processor clock */
#define SYST_CSR_COUNTFLAG (1u << 16)

/* MPU (PMSAv7) */
#define MPU_CTRL    REG32(0xE000ED94u)
#define MPU_RNR     REG32(0xE000ED98u)
#define MPU_RBAR    REG32(0xE000ED9Cu)
#define MPU_RASR    REG32(0xE000EDA0u)

/* Debug: DWT cycle counter (ARMv7-M; not modelled by every emulator) */
#define DEMCR       REG32(0xE000EDFCu)
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL    REG32(0xE0001000u)
#define DWT_CYCCNT  REG32(0xE0001004u)
#define DWT_LAR     REG32(0xE0001FB0u)  /* lock access (Cortex-M7) */

#endif /* BOARD_H */
