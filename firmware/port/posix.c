/*
 * table-posix: the tfw library on POSIX with the minimal table of table.c behind it
 * (consoles, displays, dice, instant wall motors, faults), serving a pty or a TCP port, as
 * `python -m hw_sim serve` does. The first line of output is the URL to open.
 *
 *   table-posix --pty | --tcp PORT [--seats 3|4] [--seed N]
 *
 * Lines on stdin act as the people at the table: `press SEAT KEYCODE` (hex or decimal),
 * `take SEAT POSITION`, `reset` (a warm reset: a new boot id, unacked events kept), and
 * `show` (every seat display and the dice, then `show: end`, on stdout).
 *
 * Benchmark hooks (this port only; a table's firmware has none of them), each answering
 * on stdout and nothing else ever printed after the first line unless asked:
 *   `burst COUNT DEPTH KEYCODE SEAT...`  COUNT presses of KEYCODE, the seats in turn, with
 *       at most DEPTH waiting for their seat's display; then one summary line (frames and
 *       bytes both ways, microseconds), each press's microseconds to its display in lines
 *       of `burst-us:`, and `burst: end`;
 *   `timed take SEAT POSITION`  a take, and `timed: take us N` when the centre display
 *       next arrives.
 */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE

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

#include "table.h"

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
    table table;
    int fd;           /* the host's side: pty master or the accepted socket */
    int listen_fd;    /* TCP only */
    uint64_t bytes_in, bytes_out;
    uint64_t take_us; /* `timed take`: when the take was posted, 0 when none waits */
    burst_state burst;
} port_state;

static port_state T;
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
        if (seats[i] >= T.table.seats) {
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

/* The table's hooks: `show` answers on stdout, the reset button resets the link warm, and
 * the displays answer the benchmark's presses and takes. */
static void out_line(void *ctx, const char *line)
{
    (void)ctx;
    printf("%s\n", line);
}

static void warm_reset(void *ctx)
{
    (void)ctx;
    tfw_link_warm_reset(&T.link, table_boot_id(&T.table), now_ms());
    table_clear(&T.table);
    fprintf(stderr, "table-posix: warm reset\n");
}

static void seat_display(void *ctx, uint8_t seat)
{
    (void)ctx;
    burst_display(seat);
}

static void centre_display(void *ctx)
{
    (void)ctx;
    if (T.take_us) {
        printf("timed: take us %llu\n", (unsigned long long)(now_us() - T.take_us));
        T.take_us = 0;
    }
}

static void person(char *line)
{
    unsigned a, b, c, d, seats[4];
    int key, n;
    if ((n = sscanf(line, "burst %u %u %i %u %u %u %u", &a, &b, &key, &seats[0], &seats[1],
                    &seats[2], &seats[3])) >= 4) {
        burst_start(a, b, key < 0 ? 256u : (unsigned)key, seats, (unsigned)(n - 3));
    } else if (sscanf(line, "timed take %u %u", &c, &d) == 2 && c < T.table.seats && d < 136) {
        uint8_t p[3] = {(uint8_t)c, (uint8_t)d, 0xFF};
        T.take_us = now_us();
        post(TFW_WALL_TAKE, p, sizeof p);
    } else if (table_person(&T.table, line) != 0 && line[0] != '\0') {
        fprintf(stderr, "table-posix: not understood: %s\n", line);
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
    table_hooks hooks = {out_line, warm_reset, seat_display, centre_display, NULL};
    table_init(&T.table, &T.link, &hooks, (uint8_t)seats, (uint32_t)seed);
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
    tfw_callbacks cb = {write_all, table_command, table_session_lost, &T.table};
    tfw_link_init(&T.link, &cb, table_boot_id(&T.table), T.table.seats, TABLE_CAPS,
                  "table-posix-1.0", now_ms());
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
