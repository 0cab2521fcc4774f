/* Checked entry to protobuf-c: a non-allocating walk of the wire bytes (truncation, malformed keys, nesting
 * depth) before protobuf-c's recursive unpacker sees them, and tfc's allocator for everything it allocates. */
#include <string.h>

#include "proto/proto_internal.h"

static void *pb_alloc(void *data, size_t size) {
    (void)data;
    return tfc_malloc(size ? size : 1);
}
static void pb_dealloc(void *data, void *p) {
    (void)data;
    tfc_free(p);
}
ProtobufCAllocator tfc_pb_allocator = {pb_alloc, pb_dealloc, NULL};

void tfc_pb_free(void *msg) {
    if (msg) protobuf_c_message_free_unpacked((ProtobufCMessage *)msg, &tfc_pb_allocator);
}

/* Reads a varint at *pos (< end); false when it runs past end or over 10 bytes. */
static bool read_varint(const uint8_t *data, size_t *pos, size_t end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*pos >= end) return false;
        uint8_t b = data[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

bool tfc_pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size, int max_depth,
                  const char *what, tfc_status *st) {
    struct frame { size_t end; const ProtobufCMessageDescriptor *desc; } stack[TFC_PB_MAX_DEPTH + 1];
    if (max_depth <= 0 || max_depth > TFC_PB_MAX_DEPTH) max_depth = TFC_PB_MAX_DEPTH;
    int depth = 0;
    stack[0].end = size;
    stack[0].desc = desc;
    size_t pos = 0;
    while (depth >= 0) {
        if (pos == stack[depth].end) {
            depth--;
            continue;
        }
        const size_t end = stack[depth].end, start = pos;
        uint64_t key, v;
        if (!read_varint(data, &pos, end, &key))
            return tfc_status_set(st, TFC_DATA_LOSS, "%s: truncated or malformed field key at byte %zu of %zu",
                                  what, start, size);
        const uint64_t tag = key >> 3;
        const unsigned wire = (unsigned)(key & 7);
        if (tag == 0 || tag > 0x1fffffff)
            return tfc_status_set(st, TFC_DATA_LOSS, "%s: invalid field number %llu at byte %zu", what,
                                  (unsigned long long)tag, start);
        switch (wire) {
        case 0:
            if (!read_varint(data, &pos, end, &v))
                return tfc_status_set(st, TFC_DATA_LOSS, "%s: truncated varint (field %llu) at byte %zu", what,
                                      (unsigned long long)tag, start);
            break;
        case 1: case 5: {
            size_t n = wire == 1 ? 8 : 4;
            if (end - pos < n)
                return tfc_status_set(st, TFC_DATA_LOSS, "%s: truncated %zu-byte value (field %llu) at byte %zu",
                                      what, n, (unsigned long long)tag, start);
            pos += n;
            break;
        }
        case 2: {
            if (!read_varint(data, &pos, end, &v) || v > end - pos)
                return tfc_status_set(st, TFC_DATA_LOSS,
                                      "%s: truncated length-delimited field %llu at byte %zu (length runs past the "
                                      "end of its message)", what, (unsigned long long)tag, start);
            const ProtobufCFieldDescriptor *f =
                stack[depth].desc ? protobuf_c_message_descriptor_get_field(stack[depth].desc, (unsigned)tag) : NULL;
            if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (depth + 1 > max_depth)
                    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                          "%s: messages nested deeper than %d levels (at byte %zu)", what, max_depth,
                                          start);
                depth++;
                stack[depth].end = pos + (size_t)v;
                stack[depth].desc = f->descriptor;
            } else {
                pos += (size_t)v;
            }
            break;
        }
        default: /* groups (3, 4) never occur in TensorFlow's messages and protobuf-c cannot skip them */
            return tfc_status_set(st, TFC_DATA_LOSS, "%s: unsupported wire type %u (field %llu) at byte %zu", what,
                                  wire, (unsigned long long)tag, start);
        }
    }
    return true;
}

ProtobufCMessage *tfc_pb_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                                size_t max_bytes, const char *what, tfc_status *st) {
    if (max_bytes && size > max_bytes)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %zu bytes exceed the limit of %zu bytes", what, size,
                              max_bytes), NULL;
    if (!data && size) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: no data", what), NULL;
    if (!tfc_pb_check(desc, data ? data : (const uint8_t *)"", size, TFC_PB_MAX_DEPTH, what, st)) return NULL;
    const int64_t fails_before = tfc_alloc_failures();
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, &tfc_pb_allocator, size, data ? data : (const uint8_t *)"");
    if (!m) {
        if (tfc_alloc_failures() != fails_before) return tfc_status_oom(st, what, size), NULL;
        /* the walk accepted the framing, so what protobuf-c refused is a value: a packed field whose bytes do
         * not divide into its element size, a bad varint inside a packed run, ... */
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: malformed %s message (%zu bytes)", what, desc->name, size),
               NULL;
    }
    tfc_status_clear(st);
    return m;
}

bool tfc_pb_pack(const ProtobufCMessage *msg, uint8_t **out, size_t *size, const char *what, tfc_status *st) {
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = tfc_malloc(n ? n : 1);
    if (!buf) return tfc_status_oom(st, what, n);
    size_t w = protobuf_c_message_pack(msg, buf);
    if (w != n) {
        tfc_free(buf);
        return tfc_status_set(st, TFC_INTERNAL, "%s: packed %zu bytes of %zu", what, w, n);
    }
    *out = buf;
    *size = n;
    tfc_status_clear(st);
    return true;
}

void tfc_pb_status_prefix(tfc_status *st, const char *prefix) {
    char m[sizeof st->msg];
    size_t p = strlen(prefix);
    if (p > sizeof m - 1) p = sizeof m - 1;
    memcpy(m, prefix, p);
    size_t rest = strnlen(st->msg, sizeof st->msg);
    if (rest > sizeof m - 1 - p) rest = sizeof m - 1 - p;
    memcpy(m + p, st->msg, rest);
    m[p + rest] = 0;
    memcpy(st->msg, m, sizeof m);
}
