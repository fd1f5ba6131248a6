/*
 * tfw on a bare-metal Cortex-M3: the ARM MPS2 AN385 board as QEMU emulates it
 * (`qemu-system-arm -M mps2-an385`), with the same minimal table as table-posix.
 *
 *   UART0 (CMSDK APB UART, 0x40004000, RX on IRQ 0): the link to the host.
 *   UART1 (0x40005000, RX on IRQ 2): the person at the table, one line per action:
 *       `press SEAT KEYCODE`, `take SEAT POSITION`, `reset`, `show` (table.c), and `stats`
 *       (the link's counters, the cycles it spent, the stack's high-water mark).
 *   Timer0 (CMSDK APB timer, 0x40000000): the clock, a free-running 32-bit count of the
 *       25 MHz system clock; SysTick only wakes the main loop every millisecond.
 *   `reset` is a real one: SYSRESETREQ through the AIRCR. The tfw_link and its queue live in
 *   .noinit, so the next boot finds them and calls tfw_link_warm_reset (an unacknowledged
 *   take survives); a HardFault resets the same way.
 *
 * Received bytes go from the interrupt into a ring buffer; the main loop feeds them to the
 * link and writes frames (polling the UART's TX-full bit), then sleeps in WFI until the
 * next interrupt (a byte, or the 1 ms tick).
 */
#include <stdint.h>
#include <string.h>

#include "table.h"

#define SYSCLK_HZ 25000000u
#define CYCLES_PER_MS (SYSCLK_HZ / 1000u)
#define BAUD 115200u
#define FIRMWARE_VERSION "tfw-mps2-an385-1"

/* CMSDK APB UART. */
typedef struct {
    volatile uint32_t data, state, ctrl, intstatus, bauddiv;
} cmsdk_uart;
#define UART0 ((cmsdk_uart *)0x40004000u)
#define UART1 ((cmsdk_uart *)0x40005000u)
#define STATE_TX_FULL 0x1u
#define STATE_RX_FULL 0x2u
#define CTRL_TX_EN 0x1u
#define CTRL_RX_EN 0x2u
#define CTRL_RX_INT 0x8u
#define INT_RX 0x2u

/* Cortex-M system control space. */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define SCB_AIRCR (*(volatile uint32_t *)0xE000ED0Cu)
#define AIRCR_SYSRESETREQ 0x05FA0004u /* VECTKEY | SYSRESETREQ */

/* --- kept across a warm reset ------------------------------------------------------ */

#define NOINIT_MAGIC 0x7AB1E0C3u

typedef struct {
    uint32_t magic, check; /* NOINIT_MAGIC and its complement: the rest is valid */
    uint32_t rng;          /* the boot-id generator, so a warm boot gets a new one */
    uint32_t resets;       /* warm resets since the cold boot */
    tfw_link link;
} retained;

__attribute__((section(".noinit"))) static retained R;
/* qemu.sh writes a random word here before the first boot (see the linker script). */
__attribute__((section(".entropy"), used)) static volatile uint32_t entropy;

/* --- the clock --------------------------------------------------------------------- */

/* CMSDK APB timer 0, free-running: it counts the system clock down from 0xFFFFFFFF and
 * wraps (every 171 s). Time is read from the counter, never counted in an interrupt: a
 * tick that is served late (interrupts masked, or QEMU's host busy, which drops the
 * SysTick periods it missed) would make a counted clock run slow, and the host would see
 * heartbeats late and the silence timeout late. */
typedef struct {
    volatile uint32_t ctrl, value, reload, intstatus;
} cmsdk_timer;
#define TIMER0 ((cmsdk_timer *)0x40000000u)
#define TIMER_EN 0x1u

static void clock_init(void)
{
    TIMER0->ctrl = 0;
    TIMER0->reload = 0xFFFFFFFFu;
    TIMER0->value = 0xFFFFFFFFu;
    TIMER0->ctrl = TIMER_EN;
}

/* System clock cycles since boot (wraps after 171 s; differences only). Under QEMU's
 * -icount shift=0 one cycle here is 40 instructions (one per virtual nanosecond). */
static uint32_t cycles(void) { return 0xFFFFFFFFu - TIMER0->value; }

/* Milliseconds since boot. Called from the main loop, which SysTick wakes every
 * millisecond, so the counter never wraps twice between two calls. */
static uint32_t now_ms(void)
{
    static uint32_t last, ms, rest;
    uint32_t c = cycles();
    rest += c - last; /* modulo 2^32: the wrap needs no case of its own */
    last = c;
    ms += rest / CYCLES_PER_MS;
    rest %= CYCLES_PER_MS;
    return ms;
}

void systick_handler(void) {} /* a wake-up only */

/* --- the UARTs --------------------------------------------------------------------- */

#define RING 512u /* a power of two */

typedef struct {
    volatile uint8_t bytes[RING];
    volatile uint32_t head; /* written by the interrupt */
    uint32_t tail;          /* by the main loop */
    volatile uint32_t overflows;
} ring;

static ring rx0, rx1;

static void rx_interrupt(cmsdk_uart *u, ring *r)
{
    /* Clear first: a byte arriving after the last STATE read raises it again. */
    u->intstatus = INT_RX;
    while (u->state & STATE_RX_FULL) {
        uint8_t b = (uint8_t)u->data;
        if (r->head - r->tail < RING) {
            r->bytes[r->head % RING] = b;
            r->head++;
        } else {
            r->overflows++; /* the link resynchronises at the next delimiter */
        }
    }
}

void uart0_rx_handler(void) { rx_interrupt(UART0, &rx0); }
void uart1_rx_handler(void) { rx_interrupt(UART1, &rx1); }

static size_t ring_take(ring *r, uint8_t *out, size_t cap)
{
    size_t n = 0;
    while (n < cap && r->tail != r->head) {
        out[n++] = r->bytes[r->tail % RING];
        r->tail++;
    }
    return n;
}

static void uart_init(cmsdk_uart *u)
{
    u->bauddiv = SYSCLK_HZ / BAUD;
    u->ctrl = CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_INT;
}

static void uart_write(cmsdk_uart *u, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        while (u->state & STATE_TX_FULL) {
        }
        u->data = data[i];
    }
}

static void say(const char *text) { uart_write(UART1, (const uint8_t *)text, strlen(text)); }

/* --- the table --------------------------------------------------------------------- */

static table T;
static uint32_t rx_cycles, post_cycles, posts;

static void link_write(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    uart_write(UART0, data, len);
}

/* The table's posts go through here (the link is wrapped at link time, -Wl,--wrap): the
 * cycles of each post, its frame's encoding and writing included, for `stats`. */
int __real_tfw_link_post(tfw_link *link, uint8_t type, const uint8_t *payload, size_t len);
int __wrap_tfw_link_post(tfw_link *link, uint8_t type, const uint8_t *payload, size_t len);
int __wrap_tfw_link_post(tfw_link *link, uint8_t type, const uint8_t *payload, size_t len)
{
    uint32_t start = cycles();
    int done = __real_tfw_link_post(link, type, payload, len);
    post_cycles += cycles() - start;
    posts++;
    return done;
}

static void out_line(void *ctx, const char *line)
{
    (void)ctx;
    say(line);
    say("\n");
}

static __attribute__((noreturn)) void warm_reset(void)
{
    __asm__ volatile("dsb" ::: "memory");
    SCB_AIRCR = AIRCR_SYSRESETREQ;
    __asm__ volatile("dsb" ::: "memory");
    for (;;) {
    }
}

static void reset_button(void *ctx)
{
    (void)ctx;
    say("mps2: reset\n");
    warm_reset();
}

void fault_handler(void) { warm_reset(); }

extern uint32_t board_stack_used(void);

static void stat(const char *name, uint32_t value)
{
    char num[11];
    say(" ");
    say(name);
    say(" ");
    say(table_utoa(value, num));
}

static void stats(void)
{
    const tfw_stats *s = &R.link.stats;
    say("stats:");
    stat("frames_in", s->frames_in);
    stat("frames_out", s->frames_out);
    stat("bad_frames", s->bad_frames);
    stat("duplicates", s->duplicates);
    stat("events_dropped", s->events_dropped);
    stat("rx_overflows", rx0.overflows);
    stat("rx_cycles", rx_cycles);
    stat("posts", posts);
    stat("post_cycles", post_cycles);
    stat("stack_used", board_stack_used());
    stat("up", (uint32_t)R.link.up);
    stat("warm_resets", R.resets);
    stat("queue", TFW_QUEUE);
    say("\n");
}

static void person(char *line)
{
    if (strcmp(line, "stats") == 0) {
        stats();
    } else if (table_person(&T, line) != 0 && line[0] != '\0') {
        say("mps2: not understood: ");
        say(line);
        say("\n");
    }
}

static void boot(void)
{
    char num[11];
    tfw_callbacks cb = {link_write, table_command, table_session_lost, &T};
    int warm = R.magic == NOINIT_MAGIC && R.check == ~NOINIT_MAGIC;
    if (!warm) {
        R.rng = entropy ^ 0x9E3779B9u; /* power-on: RAM holds anything */
        R.resets = 0;
    }
    table_hooks hooks = {out_line, reset_button, NULL, NULL, NULL};
    table_init(&T, &R.link, &hooks, 4, R.rng);
    if (warm) {
        R.resets++;
        /* The callbacks are this image's own functions: set them again all the same, in
         * case the image changed between the boots. */
        R.link.cb = cb;
        R.link.firmware_version = FIRMWARE_VERSION;
        tfw_link_warm_reset(&R.link, table_boot_id(&T), 0);
    } else {
        tfw_link_init(&R.link, &cb, table_boot_id(&T), 4, TABLE_CAPS, FIRMWARE_VERSION, 0);
        R.magic = NOINIT_MAGIC;
        R.check = ~NOINIT_MAGIC;
    }
    R.rng = T.rng;
    say(warm ? "mps2: warm boot " : "mps2: cold boot ");
    say(table_utoa(R.link.boot_id, num));
    say(" queue ");
    say(table_utoa(TFW_QUEUE, num));
    say(" kept ");
    say(table_utoa(R.link.count, num));
    say("\n");
}

int main(void)
{
    uint8_t buf[64];
    char line[128];
    size_t line_len = 0;
    uart_init(UART0);
    uart_init(UART1);
    clock_init();
    SYST_RVR = CYCLES_PER_MS - 1u;
    SYST_CVR = 0;
    SYST_CSR = 0x7u; /* the processor clock, interrupt, enabled: the 1 ms wake-up */
    NVIC_ISER0 = (1u << 0) | (1u << 2);
    boot();
    for (;;) {
        size_t n = ring_take(&rx0, buf, sizeof buf);
        if (n) {
            uint32_t start = cycles();
            tfw_link_receive(&R.link, buf, n, now_ms());
            rx_cycles += cycles() - start;
        }
        uint8_t c;
        while (ring_take(&rx1, &c, 1)) {
            if (c == '\n' || c == '\r') {
                line[line_len] = '\0';
                line_len = 0;
                person(line);
            } else if (line_len < sizeof line - 1u) {
                line[line_len++] = (char)c;
            }
        }
        tfw_link_tick(&R.link, now_ms());
        /* Sleep until an interrupt, unless one came since the rings were read (WFI wakes
         * for an interrupt pending while they are masked). */
        __asm__ volatile("cpsid i" ::: "memory");
        if (rx0.head == rx0.tail && rx1.head == rx1.tail) {
            __asm__ volatile("wfi");
        }
        __asm__ volatile("cpsie i" ::: "memory");
    }
}
