/* The device side of the link: sessions, sequence numbers, cumulative acks, go-back-N
 * retransmission, heartbeats and the host-silent safe state (docs/protocol.md, 2-4). */
#include "tfw.h"

#include <string.h>

static int after_or_at(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

static tfw_event *at(tfw_link *link, unsigned i)
{
    return &link->queue[(link->head + i) % TFW_QUEUE];
}

static void send_frame(tfw_link *link, uint8_t flags, uint8_t seq, uint8_t type,
                       const uint8_t *payload, size_t len)
{
    tfw_frame f;
    uint8_t wire[TFW_MAX_WIRE];
    f.version = TFW_PROTOCOL_MAJOR;
    f.flags = flags;
    f.seq = seq;
    f.ack = 0;
    f.type = type;
    f.len = (uint8_t)len;
    if (link->up && !(flags & TFW_SYN)) {
        f.flags |= TFW_ACK; /* every frame of a session carries the ack */
        f.ack = link->rx_next;
        link->ack_owed = 0;
    }
    if (len) {
        memcpy(f.payload, payload, len); /* a bare ack has no payload (NULL) */
    }
    size_t n = tfw_frame_encode(&f, wire);
    link->stats.frames_out++;
    link->cb.write(link->cb.ctx, wire, n);
}

static void put_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}
static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint32_t base_rto(const tfw_link *link)
{
    if (!link->rtt_valid) {
        return TFW_RTO_BASE_MS;
    }
    uint32_t rto = link->srtt8 / 8u + link->rttvar4; /* srtt + 4 * rttvar */
    if (rto < TFW_RTO_MIN_MS) {
        rto = TFW_RTO_MIN_MS;
    }
    return rto > TFW_RTO_MAX_MS ? TFW_RTO_MAX_MS : rto;
}

static void sample_rtt(tfw_link *link, uint32_t rtt)
{
    /* RFC 6298 in fixed point: srtt8 = 8 * srtt, rttvar4 = 4 * rttvar. */
    if (!link->rtt_valid) {
        link->srtt8 = rtt * 8u;
        link->rttvar4 = rtt * 2u;
        link->rtt_valid = 1;
        return;
    }
    uint32_t srtt = link->srtt8 / 8u;
    uint32_t dev = srtt > rtt ? srtt - rtt : rtt - srtt;
    link->rttvar4 = link->rttvar4 - link->rttvar4 / 4u + dev; /* 3/4 rttvar + 1/4 dev, x4 */
    link->srtt8 = link->srtt8 - link->srtt8 / 8u + rtt;       /* 7/8 srtt + 1/8 rtt, x8 */
}

static void transmit(tfw_link *link, tfw_event *e)
{
    send_frame(link, TFW_RELIABLE, e->seq, e->type, e->payload, e->len);
}

static void pump(tfw_link *link)
{
    if (!link->up) {
        return;
    }
    while (link->inflight < link->count && link->inflight < TFW_WINDOW) {
        tfw_event *e = at(link, link->inflight++);
        e->seq = link->tx_next++;
        e->sent_ms = link->now;
        e->resent = 0;
        transmit(link, e);
    }
    if (link->inflight && !link->rto_armed) {
        link->rto = base_rto(link);
        link->rto_deadline = link->now + link->rto;
        link->rto_armed = 1;
    }
}

/* `timed` is 0 for the ack a resuming hello carries: those frames were sent before the
 * link went down, so the time since is the downtime, not a round trip. */
static void apply_ack(tfw_link *link, uint8_t ack, int timed)
{
    if (!link->inflight) {
        return;
    }
    unsigned done = (uint8_t)(ack - at(link, 0)->seq);
    if (done == 0 || done > link->inflight) {
        return; /* nothing new, or an ack outside the window */
    }
    tfw_event *last = at(link, done - 1u);
    if (timed && !last->resent) {
        sample_rtt(link, link->now - last->sent_ms);
    }
    link->head = (link->head + done) % TFW_QUEUE;
    link->count -= done;
    link->inflight -= done;
    link->retries = 0;
    link->rto_armed = 0;
    pump(link);
}

static void lose_session(tfw_link *link, int silent)
{
    if (!link->up) {
        return;
    }
    link->up = 0;
    link->session = 0;
    link->rto_armed = 0;
    link->cb.session_lost(link->cb.ctx, silent); /* events stay queued for the next host */
}

static void send_reply(tfw_link *link, uint16_t session, uint8_t status)
{
    uint8_t p[TFW_MAX_PAYLOAD];
    size_t n = 0;
    size_t fw = strlen(link->firmware_version);
    if (fw > 16u) {
        fw = 16u;
    }
    p[n++] = TFW_PROTOCOL_MAJOR;
    p[n++] = TFW_PROTOCOL_MINOR;
    p[n++] = status;
    put_u32(p + n, TFW_SCHEMA_HASH);
    n += 4;
    put_u16(p + n, session);
    n += 2;
    put_u32(p + n, link->boot_id);
    n += 4;
    p[n++] = link->inflight ? at(link, 0)->seq : link->tx_next; /* next_seq */
    p[n++] = (uint8_t)fw;
    memcpy(p + n, link->firmware_version, fw);
    n += fw;
    p[n++] = link->seats;
    put_u16(p + n, link->capabilities);
    n += 2;
    send_frame(link, TFW_SYN, 0, TFW_HELLO_REPLY, p, n);
}

static void drop_handled(tfw_link *link, uint8_t rx_next)
{
    /* The hello acknowledges the events the host handled (the unacked ones of a session
     * or, after a warm reset, of the previous boot, which keep their old numbers). */
    if (link->inflight) {
        apply_ack(link, rx_next, 0);
    }
}

static void on_hello(tfw_link *link, const tfw_frame *f)
{
    if (f->len < 1u || f->payload[0] != TFW_PROTOCOL_MAJOR) {
        uint16_t session = (uint16_t)(f->len >= 8u ? f->payload[6] | (f->payload[7] << 8) : 0);
        link->stats.wrong_version++;
        send_reply(link, session, TFW_STATUS_VERSION_MISMATCH);
        return;
    }
    if (f->len < 15u) {
        link->stats.bad_frames++;
        return;
    }
    uint16_t session = (uint16_t)(f->payload[6] | (f->payload[7] << 8));
    uint32_t resume_boot = get_u32(f->payload + 8);
    uint8_t rx_next = f->payload[12];
    if (session == 0) {
        link->stats.bad_frames++;
        return;
    }
    if (link->up && session == link->session) {
        send_reply(link, session, TFW_STATUS_OK); /* our reply was lost */
        return;
    }
    lose_session(link, 0);
    if (link->retained) {
        if (resume_boot == link->retained_boot) {
            drop_handled(link, rx_next);
        }
        /* The previous boot's events go first, numbered anew in this boot. */
        link->inflight = 0;
        link->retained = 0;
    } else if (resume_boot == link->boot_id) {
        drop_handled(link, rx_next);
    }
    link->session = session;
    link->rx_next = 0;
    link->up = 1;
    link->retries = 0;
    link->rto_armed = 0;
    send_reply(link, session, TFW_STATUS_OK);
    for (unsigned i = 0; i < link->inflight; i++) { /* resend what is in flight at once */
        at(link, i)->resent = 1;
        transmit(link, at(link, i));
    }
    pump(link);
    if (link->inflight && !link->rto_armed) {
        link->rto = base_rto(link);
        link->rto_deadline = link->now + link->rto;
        link->rto_armed = 1;
    }
}

static void on_frame(tfw_link *link, const tfw_frame *f)
{
    link->stats.frames_in++;
    if (f->version != TFW_PROTOCOL_MAJOR) {
        link->stats.wrong_version++; /* dropped, the session carries on */
        return;
    }
    link->last_rx = link->now;
    if (f->flags & TFW_SYN) {
        if (f->type == TFW_HELLO) {
            on_hello(link, f);
        }
        return;
    }
    if (!link->up) {
        return; /* no session: only a hello is answered */
    }
    if (f->flags & TFW_ACK) {
        apply_ack(link, f->ack, 1);
    }
    if (!(f->flags & TFW_RELIABLE)) {
        return; /* a heartbeat or a bare ack */
    }
    link->ack_owed = 1;
    uint8_t distance = (uint8_t)(f->seq - link->rx_next);
    if (distance == 0) {
        link->rx_next++;
        link->cb.command(link->cb.ctx, f->type, f->payload, f->len);
    } else if (distance >= 128u) {
        link->stats.duplicates++;
    } else {
        link->stats.out_of_order++;
    }
}

void tfw_link_init(tfw_link *link, const tfw_callbacks *cb, uint32_t boot_id, uint8_t seats,
                   uint16_t capabilities, const char *firmware_version, uint32_t now_ms)
{
    memset(link, 0, sizeof *link);
    link->cb = *cb;
    link->boot_id = boot_id;
    link->seats = seats;
    link->capabilities = capabilities;
    link->firmware_version = firmware_version;
    link->now = link->started = link->last_rx = now_ms;
    link->next_heartbeat = now_ms;
    link->rto = TFW_RTO_BASE_MS;
}

void tfw_link_warm_reset(tfw_link *link, uint32_t new_boot_id, uint32_t now_ms)
{
    link->now = now_ms;
    lose_session(link, 0);
    link->retained_boot = link->boot_id;
    link->retained = link->count > 0;
    link->boot_id = new_boot_id;
    link->started = link->last_rx = link->next_heartbeat = now_ms;
    link->rx_len = 0;
    link->rtt_valid = 0;
}

void tfw_link_receive(tfw_link *link, const uint8_t *data, size_t len, uint32_t now_ms)
{
    link->now = now_ms;
    for (size_t i = 0; i < len; i++) {
        if (data[i] != 0) {
            if (link->rx_len < sizeof link->rx) {
                link->rx[link->rx_len++] = data[i];
            } else {
                link->rx_overflow = 1; /* no delimiter within a frame: noise */
            }
            continue;
        }
        if (link->rx_len && !link->rx_overflow) {
            tfw_frame f;
            if (tfw_frame_decode(link->rx, link->rx_len, &f) == 0) {
                on_frame(link, &f);
            } else {
                link->stats.bad_frames++;
            }
        } else if (link->rx_overflow) {
            link->stats.bad_frames++;
        }
        link->rx_len = 0;
        link->rx_overflow = 0;
    }
    if (link->ack_owed && link->up) {
        send_frame(link, 0, 0, TFW_ACK_MSG, NULL, 0);
    }
}

void tfw_link_tick(tfw_link *link, uint32_t now_ms)
{
    link->now = now_ms;
    if (link->up && after_or_at(now_ms, link->last_rx + TFW_SILENCE_MS)) {
        lose_session(link, 1);
    }
    if (after_or_at(now_ms, link->next_heartbeat)) {
        uint8_t p[6];
        put_u16(p, link->session);
        put_u32(p + 2, now_ms - link->started);
        send_frame(link, 0, 0, TFW_HEARTBEAT, p, sizeof p);
        link->next_heartbeat = now_ms + TFW_HEARTBEAT_MS;
    }
    if (link->up && link->inflight && link->rto_armed &&
        after_or_at(now_ms, link->rto_deadline)) {
        if (link->retries >= TFW_MAX_RETRANSMITS) {
            lose_session(link, 0); /* keep the events for the next session */
            return;
        }
        link->retries++;
        link->rto = link->rto * 2u > TFW_RTO_MAX_MS ? TFW_RTO_MAX_MS : link->rto * 2u;
        link->rto_deadline = now_ms + link->rto;
        for (unsigned i = 0; i < link->inflight; i++) {
            at(link, i)->resent = 1;
            link->stats.retransmits++;
            transmit(link, at(link, i));
        }
    }
}

int tfw_link_post(tfw_link *link, uint8_t type, const uint8_t *payload, size_t len)
{
    if (link->count >= TFW_QUEUE || len > TFW_MAX_PAYLOAD) {
        link->stats.events_dropped++;
        return -1;
    }
    tfw_event *e = at(link, link->count++);
    e->type = type;
    e->len = (uint8_t)len;
    if (len) {
        memcpy(e->payload, payload, len);
    }
    pump(link);
    return 0;
}
