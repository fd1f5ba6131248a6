/* Framing: CRC-16/CCITT-FALSE, COBS, and the frame header (docs/protocol.md, section 1). */
#include "tfw.h"

#include <string.h>

uint16_t tfw_crc16(const uint8_t *data, size_t len)
{
    uint16_t crc = 0xFFFFu;
    for (size_t i = 0; i < len; i++) {
        crc = (uint16_t)(crc ^ (unsigned)(data[i] << 8));
        for (int bit = 0; bit < 8; bit++) {
            unsigned shifted = (unsigned)crc << 1;
            crc = (uint16_t)((crc & 0x8000u) ? shifted ^ 0x1021u : shifted);
        }
    }
    return crc;
}

size_t tfw_cobs_encode(const uint8_t *in, size_t len, uint8_t *out)
{
    size_t code_at = 0, o = 1;
    uint8_t code = 1;
    for (size_t i = 0; i < len; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
            continue;
        }
        out[o++] = in[i];
        if (++code == 0xFFu) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
        }
    }
    out[code_at] = code;
    return o;
}

int tfw_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap)
{
    size_t i = 0, o = 0;
    while (i < len) {
        uint8_t code = in[i++];
        if (code == 0) {
            return -1;
        }
        for (uint8_t k = 1; k < code; k++) {
            if (i >= len || in[i] == 0 || o >= cap) {
                return -1;
            }
            out[o++] = in[i++];
        }
        if (code != 0xFFu && i < len) {
            if (o >= cap) {
                return -1;
            }
            out[o++] = 0;
        }
    }
    return (int)o;
}

size_t tfw_frame_encode(const tfw_frame *f, uint8_t *out)
{
    uint8_t body[TFW_MAX_BODY];
    size_t n = 0;
    body[n++] = f->version;
    body[n++] = f->flags;
    body[n++] = f->seq;
    body[n++] = f->ack;
    body[n++] = f->type;
    if (f->len) {
        memcpy(body + n, f->payload, f->len);
        n += f->len;
    }
    uint16_t crc = tfw_crc16(body, n);
    body[n++] = (uint8_t)(crc & 0xFFu);
    body[n++] = (uint8_t)(crc >> 8);
    size_t w = tfw_cobs_encode(body, n, out);
    out[w++] = 0;
    return w;
}

int tfw_frame_decode(const uint8_t *packet, size_t len, tfw_frame *f)
{
    uint8_t body[TFW_MAX_BODY];
    if (len == 0 || len > TFW_MAX_WIRE - 1u) {
        return -1;
    }
    int n = tfw_cobs_decode(packet, len, body, sizeof body);
    if (n < (int)(TFW_HEADER + 2u)) {
        return -1;
    }
    uint16_t got = (uint16_t)(body[n - 2] | (body[n - 1] << 8));
    if (got != tfw_crc16(body, (size_t)n - 2u)) {
        return -1;
    }
    f->version = body[0];
    f->flags = body[1];
    f->seq = body[2];
    f->ack = body[3];
    f->type = body[4];
    f->len = (uint8_t)((size_t)n - TFW_HEADER - 2u);
    if (f->flags & TFW_SIGNED) {
        return -1; /* this library does not sign: the host must not require it */
    }
    memcpy(f->payload, body + TFW_HEADER, f->len);
    return 0;
}
