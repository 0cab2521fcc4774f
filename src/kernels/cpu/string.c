/* String kernels: splitting (StringSplitV2 with Python's str.split rules, StringSplit), StringJoin,
 * StringLength, Substr; the number conversions and DecodeCSV live in string_convert.c. Strings are
 * tfc_tstring elements; outputs are copied into fresh elements (small ones inline). */
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/string_internal.h"

static inline const char *sdata(const tfc_tensor *t, int64_t i, size_t *n) {
    const tfc_tstring *s = (const tfc_tstring *)t->data + i;
    *n = tfc_tstring_size(s);
    return tfc_tstring_data(s);
}

static inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* ---- splitting: tokens are collected as (row, offset, length) and then copied out -------------------- */

typedef struct {
    int64_t row;
    const char *p;
    size_t n;
} token;

typedef struct {
    token *t;
    int64_t n, cap;
} tokens;

static bool push(tokens *v, int64_t row, const char *p, size_t n, tfc_status *st) {
    if (v->n == v->cap) {
        int64_t cap = v->cap ? v->cap * 2 : 64;
        token *t = tfc_realloc(v->t, (size_t)cap * sizeof *t);
        if (!t) return tfc_status_oom(st, "string split", (size_t)cap * sizeof *t);
        v->t = t;
        v->cap = cap;
    }
    v->t[v->n++] = (token){row, p, n};
    return true;
}

/* indices [n, 2], values [n], shape = [rows, max tokens per row]. */
static bool emit_tokens(tfc_kernel_ctx *k, const tokens *v, int64_t rows, tfc_status *st) {
    if (!tfc_kernel_alloc_output(k, 0, (int64_t[]){v->n, 2}, 2, st) || !tfc_kernel_alloc_output(k, 1, &v->n, 1, st))
        return false;
    int64_t *idx = k->out[0]->data, *shape = k->out[2]->data, width = 0, col = 0;
    tfc_tstring *vals = k->out[1]->data;
    for (int64_t i = 0; i < v->n; i++) {
        col = i > 0 && v->t[i - 1].row == v->t[i].row ? col + 1 : 0;
        idx[2 * i] = v->t[i].row;
        idx[2 * i + 1] = col;
        if (col + 1 > width) width = col + 1;
        if (!tfc_tstring_copy(&vals[i], v->t[i].p, v->t[i].n, st)) return false;
    }
    shape[0] = rows;
    shape[1] = width;
    return true;
}

/* TensorFlow's SplitV2 (Python's str.split, with its own edge cases): maxsplit 0 keeps the string whole;
 * an empty sep splits on runs of ASCII whitespace, leading whitespace dropped, and once maxsplit tokens are
 * cut the rest (possibly empty) is one more token; a non-empty sep delimits empty tokens too. */
static bool split_v2(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *in = k->in[0];
    size_t seplen;
    const char *sep = sdata(k->in[1], 0, &seplen);
    const int64_t maxsplit = tfc_attrs_int(k->attrs, "maxsplit", -1);
    tokens v = {0};
    bool ok = true;
    for (int64_t r = 0; r < in->num_elements && ok; r++) {
        size_t n;
        const char *s = sdata(in, r, &n);
        int64_t splits = 0;
        if (maxsplit == 0) {
            ok = push(&v, r, s, n, st);
        } else if (seplen == 0) {
            size_t i = 0;
            while (i < n && is_space(s[i])) i++;
            while (ok && i < n) {
                size_t j = i;
                while (j < n && !is_space(s[j])) j++;
                ok = push(&v, r, s + i, j - i, st);
                for (i = j; i < n && is_space(s[i]);) i++;
                if (ok && maxsplit > 0 && ++splits == maxsplit) {
                    ok = push(&v, r, s + i, n - i, st);
                    break;
                }
            }
        } else {
            size_t start = 0;
            bool done = false;
            for (size_t i = 0; ok && i + seplen <= n;) {
                if (memcmp(s + i, sep, seplen)) {
                    i++;
                    continue;
                }
                ok = push(&v, r, s + start, i - start, st);
                i += seplen;
                start = i;
                if (ok && maxsplit > 0 && ++splits == maxsplit) {
                    ok = push(&v, r, s + start, n - start, st);
                    done = true;
                    break;
                }
            }
            if (ok && !done) ok = push(&v, r, s + start, n - start, st);
        }
    }
    ok = ok && emit_tokens(k, &v, in->num_elements, st);
    tfc_free(v.t);
    return ok;
}

/* StringSplit (v1): every byte of delimiter separates tokens; an empty delimiter splits into bytes; empty
 * strings give no tokens; skip_empty drops empty tokens. */
static bool split_v1(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *in = k->in[0];
    size_t dlen;
    const char *delim = sdata(k->in[1], 0, &dlen);
    const bool skip_empty = tfc_attrs_bool(k->attrs, "skip_empty", true);
    bool is_delim[256] = {false};
    for (size_t i = 0; i < dlen; i++) is_delim[(unsigned char)delim[i]] = true;
    tokens v = {0};
    bool ok = true;
    for (int64_t r = 0; r < in->num_elements && ok; r++) {
        size_t n;
        const char *s = sdata(in, r, &n);
        if (n == 0) continue;
        if (dlen == 0) {
            for (size_t i = 0; i < n && ok; i++) ok = push(&v, r, s + i, 1, st);
            continue;
        }
        size_t start = 0;
        for (size_t i = 0; i <= n && ok; i++)
            if (i == n || is_delim[(unsigned char)s[i]]) {
                if (!skip_empty || i > start) ok = push(&v, r, s + start, i - start, st);
                start = i + 1;
            }
    }
    ok = ok && emit_tokens(k, &v, in->num_elements, st);
    tfc_free(v.t);
    return ok;
}

/* ---- StringJoin --------------------------------------------------------------------------------------- */

static bool string_join(tfc_kernel_ctx *k, tfc_status *st) {
    const char *sepr = tfc_attrs_string(k->attrs, "separator", "");
    const size_t sl = strlen(sepr);
    tfc_tstring *out = k->out[0]->data;
    for (int64_t i = 0; i < k->out[0]->num_elements; i++) {
        size_t total = 0, n;
        for (int j = 0; j < k->n_in; j++) {
            sdata(k->in[j], k->in[j]->shape.rank == 0 ? 0 : i, &n);
            total += n + (j ? sl : 0);
        }
        char *p = tfc_tstring_resize(&out[i], total);
        if (!p && total) return tfc_status_oom(st, "StringJoin", total);
        for (int j = 0; j < k->n_in; j++) {
            const char *s = sdata(k->in[j], k->in[j]->shape.rank == 0 ? 0 : i, &n);
            if (j && sl) memcpy(p, sepr, sl), p += sl;
            if (n) memcpy(p, s, n), p += n;
        }
    }
    return true;
}

/* ---- StringLength: bytes, or UTF-8 characters counted as the bytes that do not continue one ------------ */

static size_t utf8_len(const char *s, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static bool string_length(tfc_kernel_ctx *k, tfc_status *st) {
    (void)st;
    const bool utf8 = !strcmp(tfc_attrs_string(k->attrs, "unit", "BYTE"), "UTF8_CHAR");
    int32_t *o = k->out[0]->data;
    for (int64_t i = 0; i < k->in[0]->num_elements; i++) {
        size_t n;
        const char *s = sdata(k->in[0], i, &n);
        o[i] = (int32_t)(utf8 ? utf8_len(s, n) : n);
    }
    return true;
}

/* ---- Substr ------------------------------------------------------------------------------------------- */

/* UTF-8 positions as TensorFlow moves them (string_util.h): one character is a byte and the trail bytes
 * (10xxxxxx) after it, so a stray trail byte at the start belongs to the first character. Both return
 * whether `count` characters could be passed (never for a negative count). */
static inline bool trail(char c) { return ((unsigned char)c & 0xC0) == 0x80; }
static bool utf8_forward(const char *s, size_t n, int64_t count, size_t *pos) {
    int64_t c = 0;
    while (c < count && *pos < n) {
        do ++*pos;
        while (*pos < n && trail(s[*pos]));
        c++;
    }
    return c == count;
}
static bool utf8_back(const char *s, int64_t count, size_t *pos) {
    int64_t c = 0;
    while (c < count && *pos > 0) {
        do --*pos;
        while (*pos > 0 && trail(s[*pos]));
        c++;
    }
    return c == count;
}

/* TensorFlow's SubstrOp on one string. BYTE: a negative pos counts from the end, |pos| <= size, a negative
 * len means "to the end". UTF8_CHAR: positions move by characters; a negative len gives an empty string for
 * pos >= 0. `where` names the element in errors. */
static bool substr_one(const char *s, size_t n, int64_t pos, int64_t len, bool utf8, tfc_tstring *out,
                       const char *where, tfc_status *st) {
    size_t b0, b1;
    if (!utf8) {
        const int64_t p = pos < 0 ? (int64_t)n + pos : pos;
        if (p < 0 || p > (int64_t)n)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Substr: pos %lld out of range for string b'%.*s' at index %s",
                                  (long long)pos, (int)(n > 64 ? 64 : n), s, where);
        b0 = (size_t)p;
        b1 = len < 0 || (uint64_t)len > n - b0 ? n : b0 + (size_t)len;
    } else {
        bool ok;
        if (pos >= 0) {
            b0 = 0;
            ok = utf8_forward(s, n, pos, &b0);
            b1 = b0;
            if (ok) utf8_forward(s, n, len, &b1);
        } else if (pos < -(int64_t)n) { /* more characters back than the string has bytes (and no -INT64_MIN) */
            ok = false;
        } else {
            int64_t skip; /* -pos - len, where len is the caller's number (INT64_MIN, INT64_MAX) */
            if (__builtin_sub_overflow(-pos, len, &skip)) skip = len < 0 ? INT64_MAX : 0;
            if (skip < 0) skip = 0;
            b1 = n;
            ok = utf8_back(s, skip, &b1);
            b0 = b1;
            ok = ok && utf8_back(s, -pos - skip, &b0);
        }
        if (!ok)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Substr: pos %lld out of range for string at index %s",
                                  (long long)pos, where);
    }
    return tfc_tstring_copy(out, s + b0, b1 - b0, st);
}

static inline int64_t ival(const tfc_tensor *t, int64_t i) {
    return t->dtype == TFC_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

static bool substr(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *in = k->in[0], *pos = k->in[1], *len = k->in[2];
    const tfc_tensor *out = k->out[0];
    const bool utf8 = !strcmp(tfc_attrs_string(k->attrs, "unit", "BYTE"), "UTF8_CHAR");
    tfc_tstring *o = out->data;
    char where[48];
    const bool scalar = pos->shape.rank == 0, same = tfc_shape_equal(&in->shape, &pos->shape);
    if (scalar || same) {
        for (int64_t i = 0; i < in->num_elements; i++) {
            size_t n;
            const char *s = sdata(in, i, &n);
            snprintf(where, sizeof where, "%lld", (long long)i);
            if (!substr_one(s, n, ival(pos, scalar ? 0 : i), ival(len, scalar ? 0 : i), utf8, &o[i], where, st))
                return false;
        }
        return true;
    }
    /* broadcast of input against pos/len, output rank 1 or 2 */
    if (out->num_elements == 0) return true; /* [2^62, 0] must not walk 2^62 empty rows */
    const int r = out->shape.rank;
    const int64_t rows = r == 2 ? out->shape.dims[0] : 1, cols = out->shape.dims[r - 1];
    for (int64_t y = 0; y < rows; y++)
        for (int64_t x = 0; x < cols; x++) {
            int64_t at[2] = {y, x};
            int64_t ii = 0, pi = 0;
            /* index of (y, x) in a broadcast operand of shape s (right-aligned, size-1 dims repeat) */
            for (int d = 0; d < r; d++) {
                const tfc_shape *a = &in->shape, *b = &pos->shape;
                int ia = d - (r - a->rank), ib = d - (r - b->rank);
                int64_t c = r == 2 ? at[d] : at[1];
                /* size-ok (both): a row-major index of an element of an existing, non-empty operand */
                if (ia >= 0) ii = ii * a->dims[ia] + (a->dims[ia] == 1 ? 0 : c); /* size-ok: see above */
                if (ib >= 0) pi = pi * b->dims[ib] + (b->dims[ib] == 1 ? 0 : c); /* size-ok: see above */
            }
            size_t n;
            const char *s = sdata(in, ii, &n);
            if (r == 2 && !utf8) snprintf(where, sizeof where, "(%lld, %lld)", (long long)y, (long long)x);
            else snprintf(where, sizeof where, "%lld", (long long)(r == 2 ? y : x));
            if (!substr_one(s, n, ival(pos, pi), ival(len, pi), utf8, &o[y * cols + x], where, st)) return false;
        }
    return true;
}

const tfc_kernel_reg tfc_cpu_kernels_string[] = {
    {"StringSplitV2", split_v2},
    {"StringSplit", split_v1},
    {"StringJoin", string_join},
    {"StringLength", string_length},
    {"Substr", substr},
    {"StringToNumber", tfc_kernel_string_to_number},
    {"AsString", tfc_kernel_as_string},
    {"DecodeCSV", tfc_kernel_decode_csv},
    {NULL, NULL},
};
