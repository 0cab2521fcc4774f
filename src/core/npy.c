/* NumPy .npy reading and writing (numpy/lib/format.py's layout), every header field checked. */
#include <stdio.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "platform/file_io.h"
#include "tfc/npy.h"

#define NPY_MAX_HEADER 65536
#define NPY_DEFAULT_LIMIT ((size_t)INT32_MAX)
#define BAD(...) tfc_status_set(st, TFC_INVALID_ARGUMENT, __VA_ARGS__)

typedef struct { const char *p, *end; } cur;

static void ws(cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}
static bool eat(cur *c, char ch) {
    ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}
/* A Python string literal in single or double quotes, without escapes (NumPy never writes any). */
static bool quoted(cur *c, char *out, size_t size) {
    ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    const char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= size) return false;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    out[n] = 0;
    return true;
}
static bool word(cur *c, const char *w) {
    ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n)) return false;
    c->p += n;
    return true;
}
static bool integer(cur *c, int64_t *out) {
    ws(c);
    int64_t v = 0;
    const char *s = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (v > (INT64_MAX - 9) / 10) return false;
        v = v * 10 + (*c->p++ - '0');
    }
    if (c->p == s) return false;
    if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 longs */
    *out = v;
    return true;
}

typedef struct { tfc_dtype dt; size_t item; int kind; /* 0 numeric, 'S' bytes, 'U' unicode */ } npy_type;

static bool parse_descr(const char *d, npy_type *t, tfc_status *st) {
    static const struct { const char *descr; tfc_dtype dt; } table[] = {
        {"f4", TFC_FLOAT}, {"f8", TFC_DOUBLE}, {"f2", TFC_HALF},  {"i4", TFC_INT32}, {"i8", TFC_INT64},
        {"i2", TFC_INT16}, {"i1", TFC_INT8},   {"u1", TFC_UINT8}, {"u2", TFC_UINT16}, {"b1", TFC_BOOL},
    };
    const char order = d[0];
    if (order != '<' && order != '|' && order != '=')
        return BAD(".npy: dtype '%s' is not supported (big-endian or without byte order)", d);
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (!strcmp(d + 1, table[i].descr)) {
            t->dt = table[i].dt;
            t->item = tfc_dtype_size(t->dt);
            t->kind = 0;
            if (t->item > 1 && order == '|') break;
            return true;
        }
    if (d[1] == 'S' || d[1] == 'U') {
        int64_t n = 0;
        cur c = {d + 2, d + strlen(d)};
        if (!integer(&c, &n) || c.p != c.end || n > (1 << 24))
            return BAD(".npy: dtype '%s' has a bad or huge item size", d);
        t->dt = TFC_STRING;
        t->kind = d[1];
        t->item = (size_t)n * (d[1] == 'U' ? 4 : 1);
        return true;
    }
    return BAD(".npy: dtype '%s' is not supported (object, complex, structured and datetime arrays are not)", d);
}

/* One UTF-32LE element (n code points, trailing NULs stripped) -> UTF-8 into out (4n bytes). */
static bool utf32_to_utf8(const uint8_t *in, size_t n, char *out, size_t *len, tfc_status *st) {
    while (n && !(in[4 * (n - 1)] | in[4 * (n - 1) + 1] | in[4 * (n - 1) + 2] | in[4 * (n - 1) + 3])) n--;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = (uint32_t)in[4 * i] | (uint32_t)in[4 * i + 1] << 8 | (uint32_t)in[4 * i + 2] << 16 |
                     (uint32_t)in[4 * i + 3] << 24;
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return BAD(".npy: invalid code point 0x%x in a unicode array", c);
        if (c < 0x80) out[k++] = (char)c;
        else if (c < 0x800) { out[k++] = (char)(0xc0 | c >> 6); out[k++] = (char)(0x80 | (c & 63)); }
        else if (c < 0x10000) {
            out[k++] = (char)(0xe0 | c >> 12); out[k++] = (char)(0x80 | ((c >> 6) & 63)); out[k++] = (char)(0x80 | (c & 63));
        } else {
            out[k++] = (char)(0xf0 | c >> 18); out[k++] = (char)(0x80 | ((c >> 12) & 63));
            out[k++] = (char)(0x80 | ((c >> 6) & 63)); out[k++] = (char)(0x80 | (c & 63));
        }
    }
    *len = k;
    return true;
}

tfc_tensor *tfc_npy_parse(const void *data, size_t size, size_t max_bytes, tfc_status *st) {
    const uint8_t *b = data;
    if (!max_bytes) max_bytes = NPY_DEFAULT_LIMIT;
    if (!b || size < 10 || memcmp(b, "\x93NUMPY", 6)) return BAD(".npy: not an .npy file (bad magic)"), NULL;
    const int major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (size < 12) return BAD(".npy: truncated header"), NULL;
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return BAD(".npy: format version %d.%d is not supported", major, b[7]), NULL;
    }
    if (hlen > NPY_MAX_HEADER || hlen > size - hstart)
        return BAD(".npy: header of %zu bytes does not fit the file (%zu bytes) or the %d-byte limit", hlen, size,
                   NPY_MAX_HEADER), NULL;
    cur c = {(const char *)b + hstart, (const char *)b + hstart + hlen};
    char descr[32] = "", key[32];
    bool have_descr = false, have_order = false, have_shape = false, fortran = false;
    tfc_shape shape = {0};
    if (!eat(&c, '{')) return BAD(".npy: header is not a dict"), NULL;
    while (!eat(&c, '}')) {
        if (!quoted(&c, key, sizeof key) || !eat(&c, ':')) return BAD(".npy: malformed header key"), NULL;
        if (!strcmp(key, "descr") && !have_descr) {
            if (!quoted(&c, descr, sizeof descr)) return BAD(".npy: 'descr' is not a simple dtype string"), NULL;
            have_descr = true;
        } else if (!strcmp(key, "fortran_order") && !have_order) {
            if (word(&c, "True")) fortran = true;
            else if (!word(&c, "False")) return BAD(".npy: 'fortran_order' is not True or False"), NULL;
            have_order = true;
        } else if (!strcmp(key, "shape") && !have_shape) {
            if (!eat(&c, '(')) return BAD(".npy: 'shape' is not a tuple"), NULL;
            while (!eat(&c, ')')) {
                int64_t d;
                if (shape.rank == TFC_MAX_RANK) return BAD(".npy: rank over tfc's maximum of %d", TFC_MAX_RANK), NULL;
                if (!integer(&c, &d)) return BAD(".npy: 'shape' holds something other than non-negative integers"), NULL;
                shape.dims[shape.rank++] = d;
                if (!eat(&c, ',') && (ws(&c), c.p < c.end && *c.p != ')')) return BAD(".npy: malformed 'shape'"), NULL;
            }
            have_shape = true;
        } else {
            return BAD(".npy: unexpected or repeated header key '%s'", key), NULL;
        }
        if (!eat(&c, ',') && (ws(&c), c.p < c.end && *c.p != '}')) return BAD(".npy: malformed header"), NULL;
    }
    if (!have_descr || !have_order || !have_shape) return BAD(".npy: header lacks 'descr', 'fortran_order' or 'shape'"), NULL;
    if (fortran && shape.rank > 1) return BAD(".npy: fortran_order arrays are not supported"), NULL;
    npy_type t = {0};
    if (!parse_descr(descr, &t, st)) return NULL;
    int64_t n = 1;
    for (int i = 0; i < shape.rank; i++)
        if (!tfc_mul_overflow_i64(n, shape.dims[i], &n)) return BAD(".npy: shape's element count overflows"), NULL;
    const size_t body = size - hstart - hlen;
    const size_t decoded = t.item > tfc_dtype_size(t.dt) ? t.item : tfc_dtype_size(t.dt);
    if ((uint64_t)n > max_bytes / decoded)
        return BAD(".npy: %lld elements of %zu bytes exceed the limit of %zu bytes", (long long)n, decoded, max_bytes), NULL;
    if ((uint64_t)n * t.item != body)
        return tfc_status_set(st, TFC_DATA_LOSS, ".npy: %zu data bytes, but shape and dtype '%s' need %llu", body,
                              descr, (unsigned long long)n * t.item), NULL;
    const uint8_t *src = b + hstart + hlen;
    tfc_tensor *out = tfc_tensor_alloc(t.dt, &shape, st);
    if (!out) return NULL;
    if (!t.kind) {
        if (body) memcpy(out->data, src, body);
        if (t.dt == TFC_BOOL)
            for (size_t i = 0; i < body; i++) ((uint8_t *)out->data)[i] = src[i] != 0;
        return out;
    }
    char *tmp = t.kind == 'U' && t.item ? tfc_malloc(t.item) : NULL;
    if (t.kind == 'U' && t.item && !tmp) {
        tfc_tensor_unref(out);
        return tfc_status_oom(st, ".npy", t.item), NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *e = src + (size_t)i * t.item;
        size_t len = t.item;
        const char *s = (const char *)e;
        if (t.kind == 'S') {
            while (len && !e[len - 1]) len--;
        } else if (!utf32_to_utf8(e, t.item / 4, tmp, &len, st)) {
            goto fail;
        } else {
            s = tmp;
        }
        if (!tfc_tstring_copy(&((tfc_tstring *)out->data)[i], s, len, st)) goto fail;
    }
    tfc_free(tmp);
    return out;
fail:
    tfc_free(tmp);
    tfc_tensor_unref(out);
    return NULL;
}

tfc_tensor *tfc_npy_read(const char *path, tfc_status *st) {
    void *data;
    size_t size;
    if (!tfc_file_read_all(path, NPY_DEFAULT_LIMIT + NPY_MAX_HEADER, &data, &size, st)) return NULL;
    tfc_tensor *t = tfc_npy_parse(data, size, 0, st);
    tfc_free(data);
    if (!t) { /* ".npy: msg" -> "path: msg" */
        char m[sizeof st->msg];
        const char *msg = st->msg + (strncmp(st->msg, ".npy: ", 6) ? 0 : 6);
        size_t p = strnlen(path, 120), r = strnlen(msg, sizeof m - p - 3);
        memcpy(m, path, p);
        memcpy(m + p, ": ", 2);
        memmove(m + p + 2, msg, r);
        m[p + 2 + r] = 0;
        memcpy(st->msg, m, sizeof m);
    }
    return t;
}

bool tfc_npy_serialize(const tfc_tensor *t, void **data, size_t *size, tfc_status *st) {
    static const struct { tfc_dtype dt; const char *descr; } table[] = {
        {TFC_FLOAT, "<f4"}, {TFC_DOUBLE, "<f8"}, {TFC_HALF, "<f2"}, {TFC_INT32, "<i4"}, {TFC_INT64, "<i8"},
        {TFC_INT16, "<i2"}, {TFC_INT8, "|i1"},   {TFC_UINT8, "|u1"}, {TFC_UINT16, "<u2"}, {TFC_BOOL, "|b1"},
    };
    if (!t || !t->data) return BAD(".npy: a symbolic tensor has no value to write");
    char descr[32] = "";
    size_t item = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].dt == t->dtype) {
            snprintf(descr, sizeof descr, "%s", table[i].descr);
            item = tfc_dtype_size(t->dtype);
        }
    const int64_t n = t->num_elements;
    if (t->dtype == TFC_STRING) {
        for (int64_t i = 0; i < n; i++) {
            size_t len = tfc_tstring_size(&((const tfc_tstring *)t->data)[i]);
            if (len > item) item = len;
        }
        if (!item) item = 1;
        snprintf(descr, sizeof descr, "|S%zu", item);
    }
    if (!descr[0]) return BAD(".npy: %s tensors have no .npy dtype", tfc_dtype_name(t->dtype));
    char header[NPY_MAX_HEADER / 64];
    int k = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < t->shape.rank; i++)
        k += snprintf(header + k, sizeof header - (size_t)k, "%lld%s", (long long)t->shape.dims[i],
                      t->shape.rank == 1 ? "," : i + 1 < t->shape.rank ? ", " : "");
    k += snprintf(header + k, sizeof header - (size_t)k, "), }");
    size_t total_header = 10 + (size_t)k + 1; /* pad with spaces to a multiple of 64, then '\n' */
    size_t pad = (64 - total_header % 64) % 64;
    size_t hlen = (size_t)k + pad + 1;
    if ((uint64_t)n > (SIZE_MAX - 10 - hlen) / item) return BAD(".npy: tensor too large");
    const size_t bytes = 10 + hlen + (size_t)n * item;
    uint8_t *buf = tfc_malloc(bytes);
    if (!buf) return tfc_status_oom(st, ".npy", bytes);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)(hlen & 0xff);
    buf[9] = (uint8_t)(hlen >> 8);
    memcpy(buf + 10, header, (size_t)k);
    memset(buf + 10 + k, ' ', pad);
    buf[10 + hlen - 1] = '\n';
    uint8_t *dst = buf + 10 + hlen;
    if (t->dtype != TFC_STRING) {
        memcpy(dst, t->data, (size_t)n * item);
    } else {
        memset(dst, 0, (size_t)n * item);
        for (int64_t i = 0; i < n; i++) {
            const tfc_tstring *s = &((const tfc_tstring *)t->data)[i];
            memcpy(dst + (size_t)i * item, tfc_tstring_data(s), tfc_tstring_size(s));
        }
    }
    *data = buf;
    *size = bytes;
    tfc_status_clear(st);
    return true;
}

bool tfc_npy_write(const tfc_tensor *t, const char *path, tfc_status *st) {
    void *data;
    size_t size;
    if (!tfc_npy_serialize(t, &data, &size, st)) return false;
    bool ok = tfc_file_write_atomic(path, data, size, st);
    tfc_free(data);
    return ok;
}
