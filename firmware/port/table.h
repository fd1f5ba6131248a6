/*
 * The minimal table behind every port: consoles, displays, dice, instant wall motors,
 * takes and latched faults, as hw_sim --speed 0 has them. Port-independent: no libc
 * beyond memcpy/memset/strlen, no stdio, no heap, so the POSIX port and the bare-metal
 * ones (port/mps2-an385/) run the same table.
 *
 * A port gives the table its link and a few hooks, hands it every host command
 * (table_command) and a lost session (table_session_lost), and every line the person at
 * the table types (table_person): `press SEAT KEYCODE` (hex or decimal), `take SEAT
 * POSITION`, `reset` (the reset button) and `show` (every display and the dice).
 */
#ifndef TABLE_H
#define TABLE_H

#include "tfw.h"

/* Consoles, centre display, dice, buzzer, takes. */
#define TABLE_CAPS (0x01u | 0x02u | 0x04u | 0x20u | 0x40u)
#define TABLE_LINE 60u /* bytes of one display line */

typedef struct {
    /* One line of text answering `show`, without its newline. */
    void (*out)(void *ctx, const char *line);
    /* The person pressed the reset button: the port resets (warm) its board. */
    void (*reset)(void *ctx);
    /* Optional (NULL): a seat display, or the centre display, was shown. */
    void (*seat_display)(void *ctx, uint8_t seat);
    void (*centre_display)(void *ctx);
    void *ctx;
} table_hooks;

typedef struct {
    tfw_link *link;
    table_hooks hooks;
    uint8_t seats;
    uint8_t walls[4];
    uint8_t latched[32]; /* a bit per fault code */
    uint32_t rng;
    char lines[4][2][TABLE_LINE + 1];
    unsigned dice_count;
    uint8_t dice[2];
} table;

/* `seed` seeds the dice and boot ids (xorshift; any value). */
void table_init(table *t, tfw_link *link, const table_hooks *hooks, uint8_t seats,
                uint32_t seed);
uint32_t table_random(table *t);
/* A random, non-zero boot id. */
uint32_t table_boot_id(table *t);
/* What a warm reset clears: wall states and latched faults (displays stay lit). */
void table_clear(table *t);
/* tfw_callbacks.command and .session_lost, with the table as their context. */
void table_command(void *ctx, uint8_t type, const uint8_t *payload, size_t len);
void table_session_lost(void *ctx, int silent);
/* One line typed by the person at the table (no newline); 0 if understood, else -1. */
int table_person(table *t, const char *line);
/* `value` in decimal into out[11]; returns out. */
char *table_utoa(uint32_t value, char *out);

#endif
