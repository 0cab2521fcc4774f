/* The data service's message encoding (ds_wire.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data_service/ds_wire.h"
#include "distribute/transport.h"

#define DS_MAGIC "TFDS"
#define DS_HEADER (4 + 1 + 1 + 2 + 4 + 8 * 8 + 4)

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t get64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

bool ds_msg_encode(const ds_msg *m, uint8_t **out, size_t *len, tfc_status *st) {
    const size_t n = DS_HEADER + m->str_len + 8 + m->blob_len;
    uint8_t *b = malloc(n); /* the transport frees replies with free() */
    if (!b) return tfc_status_oom(st, "data service message", n);
    memcpy(b, DS_MAGIC, 4);
    b[4] = 1;
    b[5] = (uint8_t)m->op;
    b[6] = b[7] = 0;
    put32(b + 8, (uint32_t)m->code);
    for (int i = 0; i < 8; i++) put64(b + 12 + 8 * i, (uint64_t)m->v[i]);
    put32(b + 76, m->str_len);
    size_t o = DS_HEADER;
    if (m->str_len) memcpy(b + o, m->str, m->str_len);
    o += m->str_len;
    put64(b + o, m->blob_len);
    o += 8;
    if (m->blob_len) memcpy(b + o, m->blob, m->blob_len);
    *out = b;
    *len = n;
    return true;
}

bool ds_msg_decode(const uint8_t *buf, size_t len, ds_msg *m, tfc_status *st) {
    memset(m, 0, sizeof *m);
    if (!buf || len < DS_HEADER + 8)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: %zu bytes, shorter than a header", len);
    if (memcmp(buf, DS_MAGIC, 4))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: bad magic (not a tf.data service "
                              "message)");
    if (buf[4] != 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: version %d, expected 1", buf[4]);
    if (buf[5] < 1 || buf[5] > DS_OP_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: unknown op %d", buf[5]);
    if (buf[6] || buf[7]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: reserved bytes set");
    m->op = buf[5];
    m->code = (int)get32(buf + 8);
    if (m->code < 0 || m->code > 16)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: status code %d", m->code);
    for (int i = 0; i < 8; i++) m->v[i] = (int64_t)get64(buf + 12 + 8 * i);
    m->str_len = get32(buf + 76);
    size_t o = DS_HEADER;
    if (m->str_len > DS_STR_MAX || m->str_len > len - o - 8)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: string length %u beyond the message",
                              m->str_len);
    m->str = (const char *)buf + o;
    o += m->str_len;
    m->blob_len = get64(buf + o);
    o += 8;
    if (m->blob_len != len - o)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service message: payload length %llu, %zu bytes left",
                              (unsigned long long)m->blob_len, len - o);
    m->blob = buf + o;
    return true;
}

bool ds_msg_str(const ds_msg *m, char *buf, size_t n) {
    if (m->str_len >= n) return false;
    memcpy(buf, m->str, m->str_len);
    buf[m->str_len] = 0;
    return true;
}

void ds_reply_error(int op, const tfc_status *st, uint8_t **rep, size_t *rn) {
    ds_msg m = {.op = op, .code = st->code ? st->code : TFC_UNKNOWN, .str = st->msg,
                .str_len = (uint32_t)strnlen(st->msg, sizeof st->msg)};
    tfc_status tmp = TFC_STATUS_INIT;
    if (!ds_msg_encode(&m, rep, rn, &tmp)) {
        *rep = NULL;
        *rn = 0;
    }
}

bool ds_call(ps_transport *t, const ds_msg *req, ds_msg *rep, uint8_t **raw, size_t *raw_len, tfc_status *st) {
    uint8_t *buf = NULL;
    size_t n = 0;
    *raw = NULL;
    *raw_len = 0;
    if (!ds_msg_encode(req, &buf, &n, st)) return false;
    bool ok = t->call(t, buf, n, raw, raw_len, st);
    free(buf);
    if (!ok) return false;
    if (!ds_msg_decode(*raw, *raw_len, rep, st)) {
        t->free_reply(*raw, *raw_len);
        *raw = NULL;
        return false;
    }
    if (rep->code != TFC_OK) {
        char msg[sizeof st->msg];
        size_t k = rep->str_len < sizeof msg - 1 ? rep->str_len : sizeof msg - 1;
        memcpy(msg, rep->str, k);
        msg[k] = 0;
        tfc_status_set(st, (tfc_code)rep->code, "%s", msg);
        t->free_reply(*raw, *raw_len);
        *raw = NULL;
        return false;
    }
    return true;
}

/* ---- element blobs ---------------------------------------------------------------------------------------------- */
bool ds_elements_begin(data_bytes *b, tfc_status *st) {
    b->len = 0;
    uint32_t z = 0;
    return data_bytes_put(b, &z, 4, st);
}

static void bump(data_bytes *b) { put32(b->p, get32(b->p) + 1); }

bool ds_elements_add(data_bytes *b, tfc_tensor *const *t, int n, const tfc_status *elem_st, tfc_status *st) {
    uint8_t h[12] = {0};
    const size_t at = b->len;
    if (elem_st && elem_st->code != TFC_OK) {
        const size_t len = strnlen(elem_st->msg, sizeof elem_st->msg);
        put32(h, (uint32_t)elem_st->code);
        put64(h + 4, len);
        if (!data_bytes_put(b, h, 12, st) || !data_bytes_put(b, elem_st->msg, len, st)) return false;
    } else {
        if (!data_bytes_put(b, h, 12, st) || !data_encode_element(b, t, n, st)) return false;
        put64(b->p + at + 4, b->len - at - 12);
    }
    bump(b);
    return true;
}

bool ds_elements_add_raw(data_bytes *b, const uint8_t *entry, size_t n, tfc_status *st) {
    if (!data_bytes_put(b, entry, n, st)) return false;
    bump(b);
    return true;
}

bool ds_elements_open(const uint8_t *blob, uint64_t len, uint32_t *count, size_t *pos, tfc_status *st) {
    if (len < 4) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service elements: %llu bytes, no count",
                                       (unsigned long long)len);
    *count = get32(blob);
    if (*count > DS_MAX_ELEMENTS_PER_REPLY)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service elements: count %u over %d", *count,
                              DS_MAX_ELEMENTS_PER_REPLY);
    *pos = 4;
    return true;
}

bool ds_elements_next(const uint8_t *blob, uint64_t len, size_t *pos, uint32_t *code, const uint8_t **p, uint64_t *n,
                      tfc_status *st) {
    if (len - *pos < 12) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service elements: truncated entry");
    *code = get32(blob + *pos);
    *n = get64(blob + *pos + 4);
    if (*code > 16 || *n > len - *pos - 12)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service elements: entry of %llu bytes (code %u) beyond "
                              "the message", (unsigned long long)*n, *code);
    *p = blob + *pos + 12;
    *pos += 12 + *n;
    return true;
}
