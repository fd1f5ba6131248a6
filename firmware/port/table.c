/* The minimal table every port runs (see table.h). */
#include "table.h"

#include <string.h>

enum { WALL_IDLE, WALL_SHUFFLING, WALL_BUILDING, WALL_RAISING, WALL_DONE, WALL_COUNT_ERROR,
       WALL_STOPPED };
enum { SHUFFLE = 1, BUILD = 2, RAISE = 3, STOP = 4 };
#define POSITIONS 136u

static void post(table *t, uint8_t type, const uint8_t *p, size_t len)
{
    (void)tfw_link_post(t->link, type, p, len); /* a full queue counts the drop itself */
}

void table_init(table *t, tfw_link *link, const table_hooks *hooks, uint8_t seats,
                uint32_t seed)
{
    memset(t, 0, sizeof *t);
    t->link = link;
    t->hooks = *hooks;
    t->seats = seats;
    t->rng = seed * 2654435761u | 1u;
}

uint32_t table_random(table *t)
{
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 17;
    t->rng ^= t->rng << 5;
    return t->rng;
}

uint32_t table_boot_id(table *t)
{
    uint32_t id;
    do {
        id = table_random(t);
    } while (id == 0);
    return id;
}

void table_clear(table *t)
{
    memset(t->walls, WALL_IDLE, sizeof t->walls);
    memset(t->latched, 0, sizeof t->latched);
}

static void latch(table *t, uint8_t code, int on)
{
    uint8_t bit = (uint8_t)(1u << (code & 7u));
    t->latched[code >> 3] = (uint8_t)(on ? t->latched[code >> 3] | bit
                                         : t->latched[code >> 3] & ~bit);
}

static int latched(const table *t, unsigned code)
{
    return (t->latched[code >> 3] >> (code & 7u)) & 1u;
}

static void wall_status(table *t, uint8_t wall, uint8_t state)
{
    uint8_t p[4] = {wall, state, state == WALL_DONE ? 34 : 0, 34};
    t->walls[wall] = state;
    post(t, TFW_WALL_STATUS, p, sizeof p);
}

static void fault(table *t, uint8_t code, const char *text)
{
    uint8_t p[3 + 1 + 40];
    size_t n = strlen(text);
    latch(t, code, 1);
    p[0] = code;
    p[1] = 0;
    p[2] = 0;
    p[3] = (uint8_t)n;
    memcpy(p + 4, text, n);
    post(t, TFW_FAULT, p, 4 + n);
}

static void run_walls(table *t, uint8_t action, uint8_t wall)
{
    static const uint8_t shuffle[] = {WALL_SHUFFLING, WALL_BUILDING, WALL_RAISING};
    const uint8_t *phases = shuffle;
    size_t count = 3;
    if (action == BUILD) {
        phases = shuffle + 1;
        count = 2;
    } else if (action == RAISE) {
        phases = shuffle + 2;
        count = 1;
    }
    for (uint8_t w = 0; w < t->seats; w++) {
        if (wall != 0xFF && w != wall) {
            continue;
        }
        if (action == STOP) {
            if (t->walls[w] >= WALL_SHUFFLING && t->walls[w] <= WALL_RAISING) {
                wall_status(t, w, WALL_STOPPED);
            }
            continue;
        }
        for (size_t i = 0; i < count; i++) {
            wall_status(t, w, phases[i]);
        }
        wall_status(t, w, WALL_DONE); /* instant motors, like hw_sim --speed 0 */
    }
}

static int text_field(const uint8_t *p, size_t len, size_t *pos, char *out, size_t max_bytes)
{
    if (*pos >= len) {
        return -1;
    }
    size_t n = p[(*pos)++];
    if (n > max_bytes || *pos + n > len) {
        return -1;
    }
    memcpy(out, p + *pos, n);
    out[n] = '\0';
    *pos += n;
    return 0;
}

static void status(table *t)
{
    uint8_t s[1 + 4 + 1 + 16];
    size_t n = 0, faults = 0;
    s[n++] = 4;
    for (uint8_t w = 0; w < 4; w++) {
        s[n++] = t->walls[w];
    }
    size_t count_at = n++;
    for (unsigned code = 0; code < 256u && faults < 16u; code++) {
        if (latched(t, code)) {
            s[n++] = (uint8_t)code;
            faults++;
        }
    }
    s[count_at] = (uint8_t)faults;
    post(t, TFW_TABLE_STATUS, s, n);
}

void table_command(void *ctx, uint8_t type, const uint8_t *p, size_t len)
{
    table *t = ctx;
    switch (type) {
    case TFW_WALL_COMMAND:
        if (len >= 2 && p[0] >= SHUFFLE && p[0] <= STOP && (p[1] < t->seats || p[1] == 0xFF)) {
            run_walls(t, p[0], p[1]);
        }
        break;
    case TFW_DICE_ROLL: {
        uint8_t dice[2] = {(uint8_t)(table_random(t) % 6u + 1u),
                           (uint8_t)(table_random(t) % 6u + 1u)};
        memcpy(t->dice, dice, sizeof dice);
        t->dice_count++;
        post(t, TFW_DICE_RESULT, dice, sizeof dice);
        break;
    }
    case TFW_SEAT_DISPLAY: {
        char l1[TABLE_LINE + 1], l2[TABLE_LINE + 1];
        size_t pos = 1;
        if (len >= 1 && p[0] < t->seats && text_field(p, len, &pos, l1, TABLE_LINE) == 0 &&
            text_field(p, len, &pos, l2, TABLE_LINE) == 0) {
            memcpy(t->lines[p[0]][0], l1, sizeof l1);
            memcpy(t->lines[p[0]][1], l2, sizeof l2);
            if (t->hooks.seat_display) {
                t->hooks.seat_display(t->hooks.ctx, p[0]);
            }
        }
        break;
    }
    case TFW_CENTRE_DISPLAY:
        if (t->hooks.centre_display) {
            t->hooks.centre_display(t->hooks.ctx);
        }
        break;
    case TFW_FAULT_CLEAR:
        if (len >= 1) {
            latch(t, p[0], 0);
            if (p[0] == TFW_FAULT_TILE_COUNT) {
                for (uint8_t w = 0; w < 4; w++) {
                    t->walls[w] = t->walls[w] == WALL_COUNT_ERROR ? WALL_IDLE : t->walls[w];
                }
            }
        }
        break;
    case TFW_STATUS_REQUEST:
        status(t);
        break;
    case TFW_TABLE_RESET:
        memset(t->walls, WALL_IDLE, sizeof t->walls);
        memset(t->lines, 0, sizeof t->lines);
        break;
    default: /* lamps, the buzzer: nothing to sense here */
        break;
    }
}

void table_session_lost(void *ctx, int silent)
{
    table *t = ctx;
    for (uint8_t w = 0; w < t->seats; w++) { /* the safe state: motors stop */
        if (t->walls[w] >= WALL_SHUFFLING && t->walls[w] <= WALL_RAISING) {
            wall_status(t, w, WALL_STOPPED);
        }
    }
    if (silent) {
        fault(t, TFW_FAULT_HOST_SILENT, "host silent: motors stopped");
    }
}

char *table_utoa(uint32_t value, char *out)
{
    char digits[10];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value);
    for (size_t i = 0; i < n; i++) {
        out[i] = digits[n - 1u - i];
    }
    out[n] = '\0';
    return out;
}

/* The next space-separated word of *s (at most `cap` - 1 bytes), or "" at the end. */
static const char *word(const char **s, char *out, size_t cap)
{
    size_t n = 0;
    while (**s == ' ' || **s == '\t') {
        (*s)++;
    }
    while (**s && **s != ' ' && **s != '\t' && **s != '\r' && **s != '\n') {
        if (n + 1u < cap) {
            out[n++] = **s;
        }
        (*s)++;
    }
    out[n] = '\0';
    return out;
}

/* The next word as a number, decimal or 0x-hex (as %i reads them); -1 if it is not one. */
static long number(const char **s)
{
    char w[12];
    const char *p = word(s, w, sizeof w);
    unsigned base = 10;
    long v = 0;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (*p == '\0') {
        return -1;
    }
    for (; *p; p++) {
        unsigned d = *p >= '0' && *p <= '9'   ? (unsigned)(*p - '0')
                     : *p >= 'a' && *p <= 'f' ? (unsigned)(*p - 'a' + 10)
                     : *p >= 'A' && *p <= 'F' ? (unsigned)(*p - 'A' + 10)
                                              : 99u;
        if (d >= base || v > 0xFFFFFF) {
            return -1;
        }
        v = v * (long)base + (long)d;
    }
    return v;
}

static void show(table *t)
{
    char line[16 + 3 * 11 + 2 * (TABLE_LINE + 1)], num[11];
    if (!t->hooks.out) {
        return;
    }
    strcpy(line, "show: dice ");
    strcat(line, table_utoa(t->dice_count, num));
    for (int i = 0; i < 2; i++) {
        strcat(line, " ");
        strcat(line, table_utoa(t->dice[i], num));
    }
    t->hooks.out(t->hooks.ctx, line);
    for (uint8_t s = 0; s < t->seats; s++) {
        strcpy(line, "show: seat ");
        strcat(line, table_utoa(s, num));
        strcat(line, " ");
        strcat(line, t->lines[s][0]);
        strcat(line, "\t");
        strcat(line, t->lines[s][1]);
        t->hooks.out(t->hooks.ctx, line);
    }
    t->hooks.out(t->hooks.ctx, "show: end");
}

int table_person(table *t, const char *line)
{
    char verb[8];
    const char *s = line;
    word(&s, verb, sizeof verb);
    if (strcmp(verb, "press") == 0) {
        long seat = number(&s), key = number(&s);
        if (seat >= 0 && seat < t->seats && key >= 0 && key < 256) {
            uint8_t p[2] = {(uint8_t)seat, (uint8_t)key};
            post(t, TFW_KEY_PRESS, p, sizeof p);
            return 0;
        }
    } else if (strcmp(verb, "take") == 0) {
        long seat = number(&s), position = number(&s);
        if (seat >= 0 && seat < t->seats && position >= 0 && position < (long)POSITIONS) {
            uint8_t p[3] = {(uint8_t)seat, (uint8_t)position, 0xFF};
            post(t, TFW_WALL_TAKE, p, sizeof p);
            return 0;
        }
    } else if (strncmp(line, "reset", 5) == 0) {
        t->hooks.reset(t->hooks.ctx);
        return 0;
    } else if (strcmp(verb, "show") == 0) {
        show(t);
        return 0;
    }
    return -1;
}
