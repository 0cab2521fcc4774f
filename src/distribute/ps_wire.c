/* The parameter-server message encoding (ps_wire.h): writer and validating reader. */
#include "distribute/ps_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/size_check.h"
#include "tfc/status.h"

#define PS_MAGIC "TFPS"
#define PS_VERSION 1

void ps_msg_init(ps_msg *m, int op, const char *name) {
    memset(m, 0, sizeof *m);
    m->op = op;
    if (name) snprintf(m->name, sizeof m->name, "%s", name);
}

void ps_msg_clear(ps_msg *m) {
    for (int i = 0; i < m->n_tensors; i++) tfc_tensor_unref(m->t[i]);
    m->n_tensors = 0;
}

bool ps_msg_add(ps_msg *m, tfc_tensor *t, tfc_status *st) {
    if (m->n_tensors >= PS_MAX_TENSORS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: more than %d tensors", PS_MAX_TENSORS);
    m->t[m->n_tensors++] = tfc_tensor_ref(t);
    return true;
}

typedef struct {
    uint8_t *p;
    size_t n, cap;
} wbuf;

static void put(wbuf *w, const void *src, size_t n) {
    memcpy(w->p + w->n, src, n);
    w->n += n;
}

bool ps_msg_encode(const ps_msg *m, uint8_t **out, size_t *len, tfc_status *st) {
    const size_t name_len = strlen(m->name);
    size_t cap = 4 + 4 + 4 + 8 + 8 + 8 + 4 + name_len + 4;
    for (int i = 0; i < m->n_tensors; i++)
        cap += 8 + 8 * (size_t)tfc_tensor_rank(m->t[i]) + 8 + tfc_tensor_byte_size(m->t[i]);
    wbuf w = {malloc(cap), 0, cap};
    if (!w.p) return tfc_status_oom(st, "ps message", cap);
    const uint8_t head[4] = {PS_VERSION, (uint8_t)m->op, 0, 0};
    const int32_t code = m->code;
    const uint32_t nl = (uint32_t)name_len, nt = (uint32_t)m->n_tensors;
    put(&w, PS_MAGIC, 4);
    put(&w, head, 4);
    put(&w, &code, 4);
    put(&w, &m->id, 8);
    put(&w, &m->step, 8);
    put(&w, &m->value, 8);
    put(&w, &nl, 4);
    put(&w, m->name, name_len);
    put(&w, &nt, 4);
    for (int i = 0; i < m->n_tensors; i++) {
        const tfc_tensor *t = m->t[i];
        const uint32_t dt = (uint32_t)tfc_tensor_dtype(t), rank = (uint32_t)tfc_tensor_rank(t);
        const uint64_t nb = tfc_tensor_byte_size(t);
        put(&w, &dt, 4);
        put(&w, &rank, 4);
        put(&w, tfc_tensor_shape(t)->dims, 8 * (size_t)rank);
        put(&w, &nb, 8);
        if (nb) put(&w, tfc_tensor_data(t), nb);
    }
    *out = w.p;
    *len = w.n;
    return true;
}

typedef struct {
    const uint8_t *p;
    size_t n, at;
} rbuf;

static bool get(rbuf *r, void *dst, size_t n, const char *field, tfc_status *st) {
    if (n > r->n - r->at)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: truncated at %s (offset %zu of %zu bytes)",
                              field, r->at, r->n);
    memcpy(dst, r->p + r->at, n);
    r->at += n;
    return true;
}

/* The fixed-size dtypes a message may carry. */
static bool wire_dtype(uint32_t dt) {
    switch (dt) {
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_INT32: case TFC_UINT8: case TFC_INT16: case TFC_INT8:
    case TFC_INT64: case TFC_BOOL: case TFC_BFLOAT16: case TFC_UINT16: case TFC_HALF:
        return true;
    default:
        return false;
    }
}

static bool decode_tensor(rbuf *r, int i, tfc_tensor **out, tfc_status *st) {
    uint32_t dt = 0, rank = 0;
    uint64_t nb = 0;
    int64_t dims[TFC_MAX_RANK];
    if (!get(r, &dt, 4, "dtype", st) || !get(r, &rank, 4, "rank", st)) return false;
    if (!wire_dtype(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d has dtype %u (not a fixed-size dtype)",
                              i, dt);
    if (rank > TFC_MAX_RANK)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d has rank %u (at most %d)", i, rank,
                              TFC_MAX_RANK);
    if (!get(r, dims, 8 * (size_t)rank, "dims", st)) return false;
    int64_t n = 1;
    for (uint32_t k = 0; k < rank; k++) {
        if (dims[k] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d dim %u is %lld", i, k,
                                  (long long)dims[k]);
        if (!tfc_size_mul(n, dims[k], &n))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d element count overflows", i);
    }
    size_t bytes;
    if (!tfc_size_bytes(n, tfc_dtype_size((tfc_dtype)dt), &bytes))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d byte size overflows", i);
    if (!get(r, &nb, 8, "nbytes", st)) return false;
    if (nb != bytes)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d has %llu bytes, its shape needs %zu", i,
                              (unsigned long long)nb, bytes);
    if (bytes > r->n - r->at)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: tensor %d data truncated (%zu bytes, %zu left)", i,
                              bytes, r->n - r->at);
    *out = tfc_tensor_from_data((tfc_dtype)dt, dims, (int)rank, r->p + r->at, bytes, st);
    if (!*out) return false;
    r->at += bytes;
    return true;
}

bool ps_msg_decode(const uint8_t *buf, size_t len, ps_msg *m, tfc_status *st) {
    memset(m, 0, sizeof *m);
    rbuf r = {buf, len, 0};
    char magic[4];
    uint8_t head[4];
    int32_t code = 0;
    uint32_t nl = 0, nt = 0;
    if (!get(&r, magic, 4, "magic", st) || !get(&r, head, 4, "header", st)) return false;
    if (memcmp(magic, PS_MAGIC, 4))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: bad magic (not a tfc ps message)");
    if (head[0] != PS_VERSION)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: version %u (this build speaks %d)", head[0],
                              PS_VERSION);
    if (head[1] < 1 || head[1] > PS_OP_MAX || head[2] || head[3])
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: unknown op %u", head[1]);
    m->op = head[1];
    if (!get(&r, &code, 4, "code", st) || !get(&r, &m->id, 8, "id", st) || !get(&r, &m->step, 8, "step", st) ||
        !get(&r, &m->value, 8, "value", st) || !get(&r, &nl, 4, "name length", st))
        return false;
    if (code < 0 || code > TFC_UNAUTHENTICATED)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: status code %d", code);
    m->code = code;
    if (nl > PS_NAME_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: name length %u (at most %d)", nl, PS_NAME_MAX);
    if (!get(&r, m->name, nl, "name", st)) return false;
    if (memchr(m->name, 0, nl)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: name holds a NUL byte");
    m->name[nl] = 0;
    if (!get(&r, &nt, 4, "tensor count", st)) return false;
    if (nt > PS_MAX_TENSORS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: %u tensors (at most %d)", nt, PS_MAX_TENSORS);
    for (uint32_t i = 0; i < nt; i++) {
        if (!decode_tensor(&r, (int)i, &m->t[i], st)) {
            ps_msg_clear(m);
            return false;
        }
        m->n_tensors = (int)i + 1;
    }
    if (r.at != len) {
        ps_msg_clear(m);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps message: %zu trailing bytes", len - r.at);
    }
    return true;
}
