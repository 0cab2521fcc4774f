/* Internal: a minimal protobuf wire-format reader. Every length is checked against the buffer, so a
 * malformed message is reported (false) and never read past its end. Wire types: 0 varint, 1 fixed64,
 * 2 length-delimited, 5 fixed32; groups (3, 4) are rejected as TensorFlow's Example parser does. */
#ifndef TFC_KERNELS_CPU_PARSING_WIRE_H
#define TFC_KERNELS_CPU_PARSING_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *p, *end;
} pb_reader;

static inline pb_reader pb_make(const void *data, size_t n) {
    return (pb_reader){(const uint8_t *)data, (const uint8_t *)data + n};
}
static inline bool pb_done(const pb_reader *r) { return r->p >= r->end; }

/* A varint of at most 10 bytes whose last byte fits 64 bits. */
static inline bool pb_varint(pb_reader *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return false;
        const uint8_t b = *r->p++;
        if (shift == 63 && b > 1) return false;
        x |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

/* Reads a tag: field number (>= 1) and wire type. */
static inline bool pb_tag(pb_reader *r, uint32_t *field, int *wire) {
    uint64_t t;
    if (!pb_varint(r, &t) || t > 0xFFFFFFFFu || (t >> 3) == 0) return false;
    *field = (uint32_t)(t >> 3);
    *wire = (int)(t & 7);
    return true;
}

/* A length-delimited payload, checked against the remaining bytes. */
static inline bool pb_bytes(pb_reader *r, const uint8_t **data, size_t *n) {
    uint64_t len;
    if (!pb_varint(r, &len) || len > (uint64_t)(r->end - r->p)) return false;
    *data = r->p;
    *n = (size_t)len;
    r->p += len;
    return true;
}

static inline bool pb_skip(pb_reader *r, int wire) {
    uint64_t v;
    const uint8_t *d;
    size_t n;
    switch (wire) {
    case 0: return pb_varint(r, &v);
    case 1:
        if (r->end - r->p < 8) return false;
        r->p += 8;
        return true;
    case 2: return pb_bytes(r, &d, &n);
    case 5:
        if (r->end - r->p < 4) return false;
        r->p += 4;
        return true;
    default: return false;
    }
}

#endif
