/*
 * tfw: the device side of the table wire protocol (docs/protocol.md, version 1.3 without
 * signing; it reports neither WALL_READER nor SEAT_READER, so it never sends WallLayout
 * or SeatTiles), in
 * portable C99 with no heap: what a table's microcontroller runs.
 *
 * Porting points (see README.md): the port feeds received bytes to tfw_link_receive(),
 * calls tfw_link_tick() with a millisecond clock at least every 10 ms, gives the link a
 * write function, and keeps the tfw_link's event queue in RAM that a warm reset does not
 * clear (a no-init section) if unacknowledged events must survive a watchdog reset.
 */
#ifndef TFW_H
#define TFW_H

#include <stddef.h>
#include <stdint.h>

#define TFW_PROTOCOL_MAJOR 1u
#define TFW_PROTOCOL_MINOR 3u
/* CRC-32 of the schema text (firmware_bridge.messages.SCHEMA_HASH). */
#define TFW_SCHEMA_HASH 0x8E81F2C3u

#define TFW_MAX_WIRE 255u    /* a wire frame with its delimiter */
#define TFW_MAX_BODY 253u    /* version..crc */
#define TFW_HEADER 5u
#define TFW_MAX_PAYLOAD 246u /* TFW_MAX_BODY - header - crc */
#define TFW_WINDOW 8u
#define TFW_MAX_RETRANSMITS 8u
#ifndef TFW_QUEUE
#define TFW_QUEUE 256u       /* events kept while the host is away (protocol: 256) */
#endif

#define TFW_RTO_BASE_MS 200u
#define TFW_RTO_MIN_MS 25u
#define TFW_RTO_MAX_MS 1600u
#define TFW_HEARTBEAT_MS 1000u
#define TFW_SILENCE_MS 3000u

/* Frame flags. */
#define TFW_RELIABLE 0x01u
#define TFW_ACK 0x02u
#define TFW_SYN 0x04u
#define TFW_SIGNED 0x08u

/* Message types (docs/protocol.md, section 5). */
enum {
    TFW_ACK_MSG = 0x00, TFW_HELLO = 0x01, TFW_HELLO_REPLY = 0x02, TFW_HEARTBEAT = 0x03,
    TFW_WALL_COMMAND = 0x10, TFW_DICE_ROLL = 0x11, TFW_SEAT_DISPLAY = 0x12,
    TFW_SEAT_LAMPS = 0x13, TFW_CENTRE_DISPLAY = 0x14, TFW_BUZZER = 0x15,
    TFW_FAULT_CLEAR = 0x16, TFW_STATUS_REQUEST = 0x17, TFW_TABLE_RESET = 0x18,
    TFW_WALL_STATUS = 0x80, TFW_WALL_TAKE = 0x81, TFW_DICE_RESULT = 0x82,
    TFW_KEY_PRESS = 0x83, TFW_TRAY_TOTALS = 0x84, TFW_FAULT = 0x85, TFW_TABLE_STATUS = 0x86,
    TFW_WALL_LAYOUT = 0x87, TFW_SEAT_TILES = 0x88
};

enum { TFW_STATUS_OK = 0, TFW_STATUS_VERSION_MISMATCH = 1 };
enum { TFW_FAULT_TILE_COUNT = 2, TFW_FAULT_EVENT_OVERFLOW = 9, TFW_FAULT_HOST_SILENT = 10 };

/* --- codec ------------------------------------------------------------------------- */

typedef struct {
    uint8_t version, flags, seq, ack, type;
    uint8_t len;
    uint8_t payload[TFW_MAX_PAYLOAD];
} tfw_frame;

uint16_t tfw_crc16(const uint8_t *data, size_t len);
/* COBS; returns the encoded length (no delimiter). `out` holds len + len / 254 + 1. */
size_t tfw_cobs_encode(const uint8_t *in, size_t len, uint8_t *out);
/* Returns the decoded length, or -1 for bad COBS. */
int tfw_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap);
/* Encode `f` with its delimiter into out[TFW_MAX_WIRE]; returns its length. */
size_t tfw_frame_encode(const tfw_frame *f, uint8_t *out);
/* Decode one packet (COBS bytes without the delimiter); 0 on success, -1 if it is not a
 * valid frame (length, COBS or CRC). Signed frames are not understood (-1). */
int tfw_frame_decode(const uint8_t *packet, size_t len, tfw_frame *f);

/* --- the link (device role) --------------------------------------------------------- */

typedef struct {
    uint8_t type, len, seq, resent;
    uint32_t sent_ms;
    uint8_t payload[TFW_MAX_PAYLOAD];
} tfw_event;

typedef struct tfw_link tfw_link;

typedef struct {
    void (*write)(void *ctx, const uint8_t *data, size_t len);
    /* A command from the host, delivered once and in order. */
    void (*command)(void *ctx, uint8_t type, const uint8_t *payload, size_t len);
    /* The session ended (`silent`: the host went quiet): stop the motors. */
    void (*session_lost)(void *ctx, int silent);
    void *ctx;
} tfw_callbacks;

typedef struct {
    uint32_t frames_in, frames_out, bad_frames, duplicates, out_of_order, retransmits;
    uint32_t wrong_version, events_dropped;
} tfw_stats;

struct tfw_link {
    tfw_callbacks cb;
    const char *firmware_version;
    uint8_t seats;
    uint16_t capabilities;
    uint32_t boot_id;
    /* Session. */
    uint16_t session;
    int up;
    uint8_t rx_next, tx_next;
    int ack_owed;
    /* Events: a ring; the first `inflight` are sent and unacknowledged. */
    tfw_event queue[TFW_QUEUE];
    unsigned head, count, inflight;
    /* Retransmission (RFC 6298 estimate, Karn's rule). */
    uint32_t rto, rto_deadline, srtt8, rttvar4;
    int rto_armed, rtt_valid;
    unsigned retries;
    /* Clocks. */
    uint32_t now, started, last_rx, next_heartbeat;
    /* Warm reset: events kept from the previous boot, renumbered at the first hello. */
    uint32_t retained_boot;
    int retained;
    /* Receive framing. */
    uint8_t rx[TFW_MAX_WIRE];
    size_t rx_len;
    int rx_overflow;
    tfw_stats stats;
};

void tfw_link_init(tfw_link *link, const tfw_callbacks *cb, uint32_t boot_id, uint8_t seats,
                   uint16_t capabilities, const char *firmware_version, uint32_t now_ms);
/* A warm reset: a new boot id, the session gone, unacked events kept (docs/protocol.md,
 * "Across a warm reset"). */
void tfw_link_warm_reset(tfw_link *link, uint32_t new_boot_id, uint32_t now_ms);
void tfw_link_receive(tfw_link *link, const uint8_t *data, size_t len, uint32_t now_ms);
void tfw_link_tick(tfw_link *link, uint32_t now_ms);
/* Queue an event; 0, or -1 when the queue is full (the event is dropped and counted). */
int tfw_link_post(tfw_link *link, uint8_t type, const uint8_t *payload, size_t len);

#endif
