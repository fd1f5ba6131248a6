/*
 * table-posix: the tfw library on POSIX with a minimal table behind it (consoles,
 * displays, dice, instant wall motors, faults), serving a pty or a TCP port, as
 * `python -m hw_sim serve` does. The first line of output is the URL to open.
 *
 *   table-posix --pty | --tcp PORT [--seats 3|4] [--seed N]
 *
 * Lines on stdin act as the people at the table: `press SEAT KEYCODE` (hex or decimal),
 * `take SEAT POSITION`, `reset` (a warm reset: a new boot id, unacked events kept).
 *
 * Benchmark hooks (this port only; a table's firmware has none of them), each answering
 * on stdout and nothing else ever printed after the first line unless asked:
 *   `burst COUNT DEPTH KEYCODE SEAT...`  COUNT presses of KEYCODE, the seats in turn, with
 *       at most DEPTH waiting for their seat's display; then one summary line (frames and
 *       bytes both ways, microseconds), each press's microseconds to its display in lines
 *       of `burst-us:`, and `burst: end`;
 *   `timed take SEAT POSITION`  a take, and `timed: take us N` when the centre display
 *       next arrives;
 *   `show`  every seat display and the dice, then `show: end`.
 */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE

#include "tfw.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum { WALL_IDLE, WALL_SHUFFLING, WALL_BUILDING, WALL_RAISING, WALL_DONE, WALL_COUNT_ERROR,
       WALL_STOPPED };
enum { SHUFFLE = 1, BUILD = 2, RAISE = 3, STOP = 4 };
#define CAPS (0x01u | 0x02u | 0x04u | 0x20u | 0x40u) /* consoles, centre, dice, buzzer, takes */

/* The benchmark hooks' limits: presses in one burst, waiting presses per seat. */
#define BURST_MAX 1000000u
#define DEPTH_MAX 64u
#define BURST_STALL_US 5000000u

typedef struct {
    int on;
    unsigned count, depth, posted, answered;
    uint8_t key, nseats, seats[4];
    uint64_t start_us, last_us;
    uint64_t waiting[4][DEPTH_MAX]; /* post times of each seat's unanswered presses */
    unsigned head[4], len[4];
    tfw_stats stats0;
    uint64_t bytes_in0, bytes_out0;
} burst_state;

typedef struct {
    tfw_link link;
    int fd;           /* the host's side: pty master or the accepted socket */
    int listen_fd;    /* TCP only */
    uint8_t seats;
    uint8_t walls[4];
    int latched[256];
    uint32_t rng;
    char lines[4][2][61];
    unsigned dice_count;
    uint8_t dice[2];
    uint64_t bytes_in, bytes_out;
    uint64_t take_us; /* `timed take`: when the take was posted, 0 when none waits */
    burst_state burst;
} table;

static table T;
static uint32_t burst_us[BURST_MAX];

static uint32_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint32_t next_random(void)
{
    T.rng ^= T.rng << 13;
    T.rng ^= T.rng >> 17;
    T.rng ^= T.rng << 5;
    return T.rng;
}

static uint32_t new_boot_id(void)
{
    uint32_t id;
    do {
        id = next_random();
    } while (id == 0);
    return id;
}

static void write_all(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    while (len && T.fd >= 0) {
        ssize_t n = write(T.fd, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN) {
                struct pollfd p = {T.fd, POLLOUT, 0};
                (void)poll(&p, 1, 100);
                continue;
            }
            return; /* the host went away: the link notices by silence */
        }
        data += n;
        len -= (size_t)n;
        T.bytes_out += (uint64_t)n;
    }
}

static void post(uint8_t type, const uint8_t *p, size_t len) { (void)tfw_link_post(&T.link, type, p, len); }

/* --- benchmark hooks --------------------------------------------------------------- */

static void burst_fill(void)
{
    burst_state *b = &T.burst;
    while (b->on && b->posted < b->count && b->posted - b->answered < b->depth) {
        uint8_t seat = b->seats[b->posted % b->nseats];
        if (b->len[seat] == DEPTH_MAX) {
            break;
        }
        b->waiting[seat][(b->head[seat] + b->len[seat]++) % DEPTH_MAX] = now_us();
        b->posted++;
        uint8_t p[2] = {seat, b->key};
        post(TFW_KEY_PRESS, p, sizeof p);
    }
}

static void burst_end(const char *how)
{
    burst_state *b = &T.burst;
    const tfw_stats *s = &T.link.stats;
    b->on = 0;
    printf("burst: %s presses %u answered %u elapsed_us %llu frames_in %u frames_out %u"
           " bytes_in %llu bytes_out %llu\n", how, b->posted, b->answered,
           (unsigned long long)(b->last_us - b->start_us), s->frames_in - b->stats0.frames_in,
           s->frames_out - b->stats0.frames_out,
           (unsigned long long)(T.bytes_in - b->bytes_in0),
           (unsigned long long)(T.bytes_out - b->bytes_out0));
    for (unsigned i = 0; i < b->answered; i += 500) {
        printf("burst-us:");
        for (unsigned j = i; j < b->answered && j < i + 500; j++) {
            printf(" %u", burst_us[j]);
        }
        printf("\n");
    }
    printf("burst: end\n");
}

static void burst_start(unsigned count, unsigned depth, unsigned key, const unsigned *seats,
                        unsigned nseats)
{
    burst_state *b = &T.burst;
    if (b->on || count == 0 || count > BURST_MAX || depth == 0 || key > 255 || nseats == 0) {
        printf("burst: refused (one at a time; 1..%u presses, a depth of 1 or more)\n",
               BURST_MAX);
        return;
    }
    memset(b, 0, sizeof *b);
    for (unsigned i = 0; i < nseats; i++) {
        if (seats[i] >= T.seats) {
            printf("burst: refused (no seat %u)\n", seats[i]);
            return;
        }
        b->seats[i] = (uint8_t)seats[i];
    }
    b->on = 1;
    b->count = count;
    b->depth = depth;
    b->key = (uint8_t)key;
    b->nseats = (uint8_t)nseats;
    b->stats0 = T.link.stats;
    b->bytes_in0 = T.bytes_in;
    b->bytes_out0 = T.bytes_out;
    b->start_us = b->last_us = now_us();
    burst_fill();
}

/* A seat display arrived: it answers that seat's oldest press of the burst. */
static void burst_display(uint8_t seat)
{
    burst_state *b = &T.burst;
    if (!b->on || b->len[seat] == 0) {
        return;
    }
    uint64_t now = now_us();
    uint64_t sent = b->waiting[seat][b->head[seat]];
    b->head[seat] = (b->head[seat] + 1u) % DEPTH_MAX;
    b->len[seat]--;
    burst_us[b->answered++] = (uint32_t)(now - sent);
    b->last_us = now;
    if (b->answered == b->count) {
        burst_end("done");
    } else {
        burst_fill();
    }
}

static void show(void)
{
    printf("show: dice %u %u %u\n", T.dice_count, T.dice[0], T.dice[1]);
    for (uint8_t s = 0; s < T.seats; s++) {
        printf("show: seat %u %s\t%s\n", s, T.lines[s][0], T.lines[s][1]);
    }
    printf("show: end\n");
}

static void wall_status(uint8_t wall, uint8_t state)
{
    uint8_t p[4] = {wall, state, state == WALL_DONE ? 34 : 0, 34};
    T.walls[wall] = state;
    post(TFW_WALL_STATUS, p, sizeof p);
}

static void fault(uint8_t code, const char *text)
{
    uint8_t p[3 + 1 + 40];
    size_t n = strlen(text);
    T.latched[code] = 1;
    p[0] = code;
    p[1] = 0;
    p[2] = 0;
    p[3] = (uint8_t)n;
    memcpy(p + 4, text, n);
    post(TFW_FAULT, p, 4 + n);
}

static void run_walls(uint8_t action, uint8_t wall)
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
    for (uint8_t w = 0; w < T.seats; w++) {
        if (wall != 0xFF && w != wall) {
            continue;
        }
        if (action == STOP) {
            if (T.walls[w] >= WALL_SHUFFLING && T.walls[w] <= WALL_RAISING) {
                wall_status(w, WALL_STOPPED);
            }
            continue;
        }
        for (size_t i = 0; i < count; i++) {
            wall_status(w, phases[i]);
        }
        wall_status(w, WALL_DONE); /* instant motors, like hw_sim --speed 0 */
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

static void command(void *ctx, uint8_t type, const uint8_t *p, size_t len)
{
    (void)ctx;
    switch (type) {
    case TFW_WALL_COMMAND:
        if (len >= 2 && p[0] >= SHUFFLE && p[0] <= STOP && (p[1] < T.seats || p[1] == 0xFF)) {
            run_walls(p[0], p[1]);
        }
        break;
    case TFW_DICE_ROLL: {
        uint8_t dice[2] = {(uint8_t)(next_random() % 6u + 1u), (uint8_t)(next_random() % 6u + 1u)};
        memcpy(T.dice, dice, sizeof dice);
        T.dice_count++;
        post(TFW_DICE_RESULT, dice, sizeof dice);
        break;
    }
    case TFW_SEAT_DISPLAY: {
        char l1[61], l2[61];
        size_t pos = 1;
        if (len >= 1 && p[0] < T.seats && text_field(p, len, &pos, l1, 60) == 0 &&
            text_field(p, len, &pos, l2, 60) == 0) {
            memcpy(T.lines[p[0]][0], l1, sizeof l1);
            memcpy(T.lines[p[0]][1], l2, sizeof l2);
            burst_display(p[0]);
        }
        break;
    }
    case TFW_CENTRE_DISPLAY:
        if (T.take_us) {
            printf("timed: take us %llu\n", (unsigned long long)(now_us() - T.take_us));
            T.take_us = 0;
        }
        break;
    case TFW_FAULT_CLEAR:
        if (len >= 1) {
            T.latched[p[0]] = 0;
            if (p[0] == TFW_FAULT_TILE_COUNT) {
                for (uint8_t w = 0; w < 4; w++) {
                    T.walls[w] = T.walls[w] == WALL_COUNT_ERROR ? WALL_IDLE : T.walls[w];
                }
            }
        }
        break;
    case TFW_STATUS_REQUEST: {
        uint8_t s[1 + 4 + 1 + 16];
        size_t n = 0, faults = 0;
        s[n++] = 4;
        for (uint8_t w = 0; w < 4; w++) {
            s[n++] = T.walls[w];
        }
        size_t count_at = n++;
        for (int code = 0; code < 256 && faults < 16; code++) {
            if (T.latched[code]) {
                s[n++] = (uint8_t)code;
                faults++;
            }
        }
        s[count_at] = (uint8_t)faults;
        post(TFW_TABLE_STATUS, s, n);
        break;
    }
    case TFW_TABLE_RESET:
        memset(T.walls, WALL_IDLE, sizeof T.walls);
        memset(T.lines, 0, sizeof T.lines);
        break;
    default: /* lamps, the centre display, the buzzer: nothing to sense here */
        break;
    }
}

static void session_lost(void *ctx, int silent)
{
    (void)ctx;
    for (uint8_t w = 0; w < T.seats; w++) { /* the safe state: motors stop */
        if (T.walls[w] >= WALL_SHUFFLING && T.walls[w] <= WALL_RAISING) {
            wall_status(w, WALL_STOPPED);
        }
    }
    if (silent) {
        fault(TFW_FAULT_HOST_SILENT, "host silent: motors stopped");
    }
}

static void person(char *line)
{
    unsigned a, b, c, d, seats[4];
    int key, n;
    if ((n = sscanf(line, "burst %u %u %i %u %u %u %u", &a, &b, &key, &seats[0], &seats[1],
                    &seats[2], &seats[3])) >= 4) {
        burst_start(a, b, key < 0 ? 256u : (unsigned)key, seats, (unsigned)(n - 3));
    } else if (sscanf(line, "timed take %u %u", &c, &d) == 2 && c < T.seats && d < 136) {
        uint8_t p[3] = {(uint8_t)c, (uint8_t)d, 0xFF};
        T.take_us = now_us();
        post(TFW_WALL_TAKE, p, sizeof p);
    } else if (strcmp(line, "show") == 0) {
        show();
    } else if (sscanf(line, "press %u %i", &a, &key) == 2 && a < T.seats && key >= 0 &&
               key < 256) {
        uint8_t p[2] = {(uint8_t)a, (uint8_t)key};
        post(TFW_KEY_PRESS, p, sizeof p);
    } else if (sscanf(line, "take %u %u", &a, &b) == 2 && a < T.seats && b < 136) {
        uint8_t p[3] = {(uint8_t)a, (uint8_t)b, 0xFF};
        post(TFW_WALL_TAKE, p, sizeof p);
    } else if (strncmp(line, "reset", 5) == 0) {
        tfw_link_warm_reset(&T.link, new_boot_id(), now_ms());
        memset(T.walls, WALL_IDLE, sizeof T.walls);
        memset(T.latched, 0, sizeof T.latched);
        fprintf(stderr, "table-posix: warm reset\n");
    } else if (line[0] != '\n' && line[0] != '\0') {
        fprintf(stderr, "table-posix: not understood: %s", line);
    }
}

static int open_pty(void)
{
    int fd = posix_openpt(O_RDWR | O_NOCTTY);
    if (fd < 0 || grantpt(fd) != 0 || unlockpt(fd) != 0) {
        return -1;
    }
    struct termios tio;
    if (tcgetattr(fd, &tio) == 0) {
        cfmakeraw(&tio);
        (void)tcsetattr(fd, TCSANOW, &tio);
    }
    /* Keep a slave fd open so the master reads no EOF before the host opens it. */
    int keep = open(ptsname(fd), O_RDWR | O_NOCTTY);
    if (keep >= 0 && tcgetattr(keep, &tio) == 0) {
        cfmakeraw(&tio);
        (void)tcsetattr(keep, TCSANOW, &tio);
    }
    printf("table-posix: serial port %s\n", ptsname(fd));
    return fd;
}

static int open_listener(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    struct sockaddr_in addr;
    socklen_t alen = sizeof addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
    addr.sin_port = htons((uint16_t)port);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &alen) != 0) {
        return -1;
    }
    printf("table-posix: listening on socket://127.0.0.1:%u\n", ntohs(addr.sin_port));
    return fd;
}

static int usage(const char *why)
{
    fprintf(stderr, "table-posix: %s; usage: table-posix --pty | --tcp PORT [--seats 3|4]"
                    " [--seed N]\n", why);
    return 2;
}

int main(int argc, char **argv)
{
    int pty = 0, port = -1, seats = 4;
    unsigned long seed = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pty") == 0) {
            pty = 1;
        } else if (strcmp(argv[i], "--tcp") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || v > 65535) {
                return usage("--tcp needs a port 0..65535");
            }
            port = (int)v;
        } else if (strcmp(argv[i], "--seats") == 0 && i + 1 < argc) {
            seats = atoi(argv[++i]);
            if (seats != 3 && seats != 4) {
                return usage("--seats is 3 or 4");
            }
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoul(argv[++i], NULL, 10);
        } else {
            return usage("unknown argument");
        }
    }
    if (pty == (port >= 0)) {
        return usage("choose one of --pty and --tcp");
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    memset(&T, 0, sizeof T);
    T.rng = (uint32_t)(seed * 2654435761u) | 1u;
    T.seats = (uint8_t)seats;
    T.fd = T.listen_fd = -1;
    if (pty) {
        T.fd = open_pty();
        if (T.fd < 0) {
            perror("table-posix: pty");
            return 1;
        }
    } else {
        T.listen_fd = open_listener(port);
        if (T.listen_fd < 0) {
            perror("table-posix: tcp");
            return 1;
        }
    }
    tfw_callbacks cb = {write_all, command, session_lost, NULL};
    tfw_link_init(&T.link, &cb, new_boot_id(), T.seats, CAPS, "table-posix-1.0", now_ms());
    char line[256];
    size_t line_len = 0;
    for (;;) {
        struct pollfd fds[3];
        int n = 0, io = -1, lis = -1, in = -1;
        if (T.fd >= 0) {
            fds[n] = (struct pollfd){T.fd, POLLIN, 0};
            io = n++;
        } else if (T.listen_fd >= 0) {
            fds[n] = (struct pollfd){T.listen_fd, POLLIN, 0};
            lis = n++;
        }
        fds[n] = (struct pollfd){STDIN_FILENO, POLLIN, 0};
        in = n++;
        if (poll(fds, (nfds_t)n, 10) < 0 && errno != EINTR) {
            perror("table-posix: poll");
            return 1;
        }
        uint32_t now = now_ms();
        if (io >= 0 && (fds[io].revents & (POLLIN | POLLHUP | POLLERR))) {
            uint8_t buf[512];
            ssize_t got = read(T.fd, buf, sizeof buf);
            if (got > 0) {
                T.bytes_in += (uint64_t)got;
                tfw_link_receive(&T.link, buf, (size_t)got, now);
            } else if (!pty && (got == 0 || errno != EAGAIN)) {
                close(T.fd); /* the host hung up: wait for the next one */
                T.fd = -1;
            }
        }
        if (lis >= 0 && (fds[lis].revents & POLLIN)) {
            T.fd = accept(T.listen_fd, NULL, NULL);
        }
        if (fds[in].revents & POLLIN) {
            ssize_t got = read(STDIN_FILENO, line + line_len, sizeof line - 1 - line_len);
            if (got > 0) {
                line_len += (size_t)got;
                line[line_len] = '\0';
                char *nl;
                while ((nl = strchr(line, '\n')) != NULL) {
                    *nl = '\0';
                    person(line);
                    memmove(line, nl + 1, strlen(nl + 1) + 1);
                    line_len = strlen(line);
                }
                if (line_len == sizeof line - 1) {
                    line_len = 0;
                }
            } else if (got == 0) {
                fds[in].fd = -1;
            }
        }
        tfw_link_tick(&T.link, now);
        if (T.burst.on && now_us() - T.burst.last_us > BURST_STALL_US) {
            burst_end("stalled");
        }
    }
}
