/*
 * The golden byte vectors of tests/bridge/test_messages.py (the Python side's pinned wire
 * format) through the C codec, and a handshake through the C link: what the two
 * implementations must agree on byte for byte.
 */
#include "tfw.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name, *payload, *frame;
} vector;

static const vector VECTORS[] = {
    {"Ack", "", "030102020303660300"},
    {"Hello", "010078563412efbe00000000000c7461626c6563746c20302e31", "030104010301010778563412efbe01010101100c7461626c6563746c20302e31bd3500"},
    {"HelloReply", "01000078563412efbeefbeadde0708667720322e332e31040d00", "03010401030201011778563412efbeefbeadde0708667720322e332e31040d03318800"},
    {"Heartbeat", "efbe40e20100", "030102080303efbe40e201036afe00"},
    {"WallCommand", "01ff", "0a010304031001ff37fb00"},
    {"DiceRoll", "", "080103050311329c00"},
    {"SeatDisplay", "020a4561737420323530303009e383aae383bce38381", "1e0103060312020a4561737420323530303009e383aae383bce38381571900"},
    {"SeatLamps", "010100", "080103070313010103860c00"},
    {"CentreDisplay", "01030201450204825a00", "0f010308031401030201450204825a03c80100"},
    {"BuzzerCommand", "022c01", "0b0103090315022c01779200"},
    {"FaultClear", "02", "0901030a0316020e1d00"},
    {"StatusRequest", "", "0801030b0317f5e700"},
    {"TableReset", "", "0801030c03188a9300"},
    {"WallStatus", "03052122", "0c01030d038003052122c57c00"},
    {"WallTake", "0087ff", "0601030e03810587ff6df700"},
    {"DiceResult", "0506", "0a01030f0382050663b300"},
    {"KeyPress", "0315", "0a01031003830315046d00"},
    {"TrayTotals", "04a86100001879000050fbffff90b00000", "09010311038404a86101031879010750fbffff90b0010388d600"},
    {"Fault", "0102000b77616c6c2032206c696674", "08010312038501020f0b77616c6c2032206c69667453cd00"},
    {"TableStatus", "04040404040107", "0f010313038604040404040107a79100"},
    {"WallLayout", "0122000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021", "0801031403870122240102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20213fe600"},
    {"SeatTiles", "0202051034870058", "0c0103150388020205103487045870b800"},
};

static int failures;

static size_t unhex(const char *hex, uint8_t *out)
{
    size_t n = strlen(hex) / 2u;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(hex + 2u * i, "%2x", &v) != 1) {
            return 0;
        }
        out[i] = (uint8_t)v;
    }
    return n;
}

static void expect(int ok, const char *what, const char *name)
{
    if (!ok) {
        printf("FAIL %s: %s\n", name, what);
        failures++;
    }
}

static void golden_frames(void)
{
    for (size_t i = 0; i < sizeof VECTORS / sizeof VECTORS[0]; i++) {
        const vector *v = &VECTORS[i];
        uint8_t wire[TFW_MAX_WIRE], payload[TFW_MAX_PAYLOAD], again[TFW_MAX_WIRE];
        size_t n = unhex(v->frame, wire), plen = unhex(v->payload, payload);
        tfw_frame f;
        expect(n > 1 && wire[n - 1] == 0, "ends with the delimiter", v->name);
        expect(tfw_frame_decode(wire, n - 1u, &f) == 0, "decodes", v->name);
        expect(f.len == plen && memcmp(f.payload, payload, plen) == 0, "payload", v->name);
        expect(f.version == 1, "version 1", v->name);
        size_t m = tfw_frame_encode(&f, again);
        expect(m == n && memcmp(again, wire, n) == 0, "re-encodes byte for byte", v->name);
        wire[n / 2u] ^= 0x20u; /* one bit flipped: the CRC (or COBS) must catch it */
        expect(tfw_frame_decode(wire, n - 1u, &f) != 0, "a flipped bit is refused", v->name);
    }
}

static void worked_example(void)
{
    /* docs/protocol.md: KeyPress(seat=3, key=TSUMO), seq 16, acknowledging 3. */
    static const uint8_t want[] = {0x0A, 0x01, 0x03, 0x10, 0x03, 0x83,
                                   0x03, 0x15, 0x04, 0x6D, 0x00};
    tfw_frame f = {1, TFW_RELIABLE | TFW_ACK, 16, 3, TFW_KEY_PRESS, 2, {3, 0x15}};
    uint8_t wire[TFW_MAX_WIRE];
    size_t n = tfw_frame_encode(&f, wire);
    expect(n == sizeof want && memcmp(wire, want, n) == 0, "the worked example", "KeyPress");
    expect(tfw_crc16((const uint8_t *)"123456789", 9) == 0x29B1u, "CRC check value", "crc16");
}

static uint8_t written[4096];
static size_t written_len;
static int commands;

static void capture(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    if (written_len + len <= sizeof written) {
        memcpy(written + written_len, data, len);
        written_len += len;
    }
}

static void on_command(void *ctx, uint8_t type, const uint8_t *p, size_t len)
{
    (void)ctx;
    (void)type;
    (void)p;
    (void)len;
    commands++;
}

static void on_lost(void *ctx, int silent)
{
    (void)ctx;
    (void)silent;
}

static int first_frame(tfw_frame *f)
{
    uint8_t *end = memchr(written, 0, written_len);
    return end ? tfw_frame_decode(written, (size_t)(end - written), f) : -1;
}

static void handshake(void)
{
    tfw_link link;
    tfw_callbacks cb = {capture, on_command, on_lost, NULL};
    uint8_t wire[TFW_MAX_WIRE];
    tfw_frame f;
    tfw_link_init(&link, &cb, 0xDEADBEEFu, 4, 0x0Du, "fw 2.3.1", 1000);
    size_t n = unhex(VECTORS[1].frame, wire); /* the golden Hello, session 0xBEEF */
    written_len = 0;
    tfw_link_receive(&link, wire, n, 1000);
    expect(first_frame(&f) == 0 && f.type == TFW_HELLO_REPLY && (f.flags & TFW_SYN),
           "a HelloReply", "handshake");
    expect(f.payload[0] == 1 && f.payload[2] == TFW_STATUS_OK, "status OK", "handshake");
    expect(f.payload[7] == 0xEF && f.payload[8] == 0xBE, "the session echoed", "handshake");
    expect(link.up == 1, "a session is open", "handshake");
    /* The golden DiceRoll is seq 5: out of order in a new session (rx_next 0). */
    n = unhex(VECTORS[5].frame, wire);
    tfw_link_receive(&link, wire, n, 1001);
    expect(commands == 0 && link.stats.out_of_order == 1, "out of order dropped", "link");
    f = (tfw_frame){1, TFW_RELIABLE, 0, 0, TFW_DICE_ROLL, 0, {0}};
    n = tfw_frame_encode(&f, wire);
    tfw_link_receive(&link, wire, n, 1002);
    tfw_link_receive(&link, wire, n, 1003);
    expect(commands == 1 && link.stats.duplicates == 1, "once, the duplicate dropped", "link");
    tfw_link_tick(&link, 1000 + TFW_SILENCE_MS + 5u);
    expect(link.up == 0, "the session ends after 3 s of silence", "link");
}

static void resume_is_not_a_round_trip(void)
{
    /* The host dies with three events in flight; a new host resumes 8 s later and its
     * hello acks the two the old one handled. Those frames were sent before the pause:
     * timed from then, the downtime would count as one round trip and pin the
     * retransmission timeout near its maximum. */
    tfw_link link;
    tfw_callbacks cb = {capture, on_command, on_lost, NULL};
    uint8_t wire[TFW_MAX_WIRE];
    const uint8_t key[2] = {1, 0};
    tfw_frame hello;
    size_t n = unhex(VECTORS[1].frame, wire);
    expect(tfw_frame_decode(wire, n - 1u, &hello) == 0, "the golden Hello decodes", "resume");
    tfw_link_init(&link, &cb, 0xDEADBEEFu, 4, 0x0Du, "fw 2.3.1", 1000);
    tfw_link_receive(&link, wire, n, 1000);
    for (int i = 0; i < 3; i++) {
        tfw_link_post(&link, 0x81, key, sizeof key);
    }
    expect(link.inflight == 3 && !link.rtt_valid, "three events in flight", "resume");
    hello.payload[6] = 0xF0; /* another session... */
    hello.payload[8] = 0xEF; /* ...resuming boot 0xDEADBEEF, rx_next 2 */
    hello.payload[9] = 0xBE;
    hello.payload[10] = 0xAD;
    hello.payload[11] = 0xDE;
    hello.payload[12] = 2;
    n = tfw_frame_encode(&hello, wire);
    tfw_link_receive(&link, wire, n, 9000);
    expect(link.up == 1 && link.inflight == 1, "the hello acked the two handled", "resume");
    expect(!link.rtt_valid && link.rto == TFW_RTO_BASE_MS, "no round trip timed", "resume");
}

int main(void)
{
    golden_frames();
    worked_example();
    handshake();
    resume_is_not_a_round_trip();
    printf("%s: %zu golden frames, the worked example, a handshake, a resume\n",
           failures ? "FAILED" : "ok", sizeof VECTORS / sizeof VECTORS[0]);
    return failures ? 1 : 0;
}
