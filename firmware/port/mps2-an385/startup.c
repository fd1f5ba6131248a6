/* Start-up for the Cortex-M3 of the MPS2 AN385: the vector table, and the reset handler
 * that copies .data, clears .bss (leaving .noinit as the last boot left it) and calls
 * main. No C library start-up (crt0) and no constructors: the port has none. */
#include <stdint.h>

extern uint32_t __data_start, __data_end, __data_load, __bss_start, __bss_end, __stack_top;
extern uint32_t __stack_bottom;

int main(void);
void reset_handler(void);
void fault_handler(void);
void systick_handler(void);
void uart0_rx_handler(void);
void uart1_rx_handler(void);

/* A byte pattern below the stack's high-water mark: see board_stack_used(). */
#define STACK_PAINT 0x5AC3A55Cu

static void unexpected(void)
{
    fault_handler();
}

void reset_handler(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start; dst < &__bss_end; dst++) {
        *dst = 0;
    }
    /* Paint the stack below the current frame, for the high-water mark. */
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (dst = &__stack_bottom; dst < sp - 16; dst++) {
        *dst = STACK_PAINT;
    }
    (void)main();
    for (;;) {
        unexpected();
    }
}

uint32_t board_stack_used(void)
{
    const uint32_t *p = &__stack_bottom;
    while (p < &__stack_top && *p == STACK_PAINT) {
        p++;
    }
    return (uint32_t)((const char *)&__stack_top - (const char *)p);
}

typedef void (*vector)(void);

/* 16 system exceptions, then the AN385's interrupts as QEMU wires them: UART0 RX on IRQ 0,
 * UART1 RX on IRQ 2 (each UART's TX interrupt is one above; unused here). */
__attribute__((section(".vectors"), used)) static const vector vectors[16 + 8] = {
    (vector)(uintptr_t)&__stack_top,
    reset_handler,
    unexpected, /* NMI */
    fault_handler, /* HardFault */
    fault_handler, /* MemManage */
    fault_handler, /* BusFault */
    fault_handler, /* UsageFault */
    0, 0, 0, 0,
    unexpected, /* SVCall */
    unexpected, /* DebugMonitor */
    0,
    unexpected, /* PendSV */
    systick_handler,
    uart0_rx_handler, /* IRQ 0: UART0 RX, the table's link */
    unexpected,       /* IRQ 1: UART0 TX */
    uart1_rx_handler, /* IRQ 2: UART1 RX, the person at the table */
    unexpected, unexpected, unexpected, unexpected, unexpected,
};
