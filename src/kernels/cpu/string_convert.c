/* String <-> number kernels: StringToNumber, AsString (a printf format built from the attrs as TensorFlow
 * does: fill is a printf flag, then width, precision and %f / %e / %g), and DecodeCSV (RFC 4180 fields with
 * TensorFlow's quoting rules, defaults for empty or na_value fields, select_cols). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/string_internal.h"

static inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

static void trim(const char **s, size_t *n) {
    while (*n && is_space(**s)) (*s)++, (*n)--;
    while (*n && is_space((*s)[*n - 1])) (*n)--;
}

bool tfc_parse_i64(const char *s, size_t n, int64_t *out) {
    trim(&s, &n);
    if (!n) return false;
    bool neg = false;
    if (*s == '+' || *s == '-') neg = *s == '-', s++, n--;
    if (!n) return false;
    uint64_t v = 0;
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (lim - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

bool tfc_parse_i32(const char *s, size_t n, int32_t *out) {
    int64_t v;
    if (!tfc_parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX) return false;
    *out = (int32_t)v;
    return true;
}

/* strtod/strtof on a NUL-terminated copy; the whole trimmed text must be consumed (no embedded NULs). */
static bool parse_float(const char *s, size_t n, bool single, double *d, float *f) {
    trim(&s, &n);
    if (!n || memchr(s, 0, n)) return false;
    char small[64], *buf = n < sizeof small ? small : tfc_malloc(n + 1);
    if (!buf) return false;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    if (single) *f = strtof(buf, &end);
    else *d = strtod(buf, &end);
    bool ok = end == buf + n && !is_space(buf[0]);
    if (buf != small) tfc_free(buf);
    return ok;
}

bool tfc_parse_f32(const char *s, size_t n, float *out) { return parse_float(s, n, true, NULL, out); }
bool tfc_parse_f64(const char *s, size_t n, double *out) { return parse_float(s, n, false, out, NULL); }

static inline const char *sdata(const tfc_tensor *t, int64_t i, size_t *n) {
    const tfc_tstring *s = (const tfc_tstring *)t->data + i;
    *n = tfc_tstring_size(s);
    return tfc_tstring_data(s);
}

/* ---- StringToNumber --------------------------------------------------------------------------------- */

bool tfc_kernel_string_to_number(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *in = k->in[0];
    tfc_tensor *o = k->out[0];
    for (int64_t i = 0; i < in->num_elements; i++) {
        size_t n;
        const char *s = sdata(in, i, &n);
        bool ok = false;
        switch (o->dtype) {
        case TFC_FLOAT: ok = tfc_parse_f32(s, n, (float *)o->data + i); break;
        case TFC_DOUBLE: ok = tfc_parse_f64(s, n, (double *)o->data + i); break;
        case TFC_INT32: ok = tfc_parse_i32(s, n, (int32_t *)o->data + i); break;
        case TFC_INT64: ok = tfc_parse_i64(s, n, (int64_t *)o->data + i); break;
        default: return tfc_kernel_unimplemented(k, o->dtype, st);
        }
        if (!ok)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "StringToNumberOp could not correctly convert string: %.*s",
                                  (int)(n > 200 ? 200 : n), s);
    }
    return true;
}

/* ---- AsString --------------------------------------------------------------------------------------- */

bool tfc_kernel_as_string(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *in = k->in[0];
    const tfc_dtype dt = in->dtype;
    tfc_tstring *out = k->out[0]->data;
    const char *fill = tfc_attrs_string(k->attrs, "fill", "");
    const int64_t width = tfc_attrs_int(k->attrs, "width", -1), precision = tfc_attrs_int(k->attrs, "precision", -1);
    const bool floating = tfc_dtype_is_floating(dt);
    char fmt[48];
    int fl = snprintf(fmt, sizeof fmt, "%%%s", fill);
    if (width > -1) fl += snprintf(fmt + fl, sizeof fmt - (size_t)fl, "%lld", (long long)width);
    if (precision > -1 && floating) fl += snprintf(fmt + fl, sizeof fmt - (size_t)fl, ".%lld", (long long)precision);
    const char *conv = floating ? (tfc_attrs_bool(k->attrs, "shortest", false) ? "g"
                                   : tfc_attrs_bool(k->attrs, "scientific", false) ? "e" : "f")
                       : dt == TFC_UINT8 || dt == TFC_UINT16 ? "llu" : "lld";
    snprintf(fmt + fl, sizeof fmt - (size_t)fl, "%s", conv);
    char small[128];
    char *buf = small;
    size_t cap = sizeof small;
    bool ok = true;
    for (int64_t i = 0; i < in->num_elements && ok; i++) {
        int len;
        if (dt == TFC_BOOL) {
            const char *b = ((const uint8_t *)in->data)[i] ? "true" : "false";
            ok = tfc_tstring_copy(&out[i], b, strlen(b), st);
            continue;
        }
        for (;;) {
            if (dt == TFC_STRING) { /* %<width>s: space padding, on the right with the '-' flag */
                size_t n;
                const char *s = sdata(in, i, &n);
                const size_t w = width > 0 && (size_t)width > n ? (size_t)width : n;
                char *p = tfc_tstring_resize(&out[i], w);
                if (!p && w) ok = tfc_status_oom(st, "AsString", w);
                else if (w) {
                    const size_t pad = w - n, at = *fill == '-' ? 0 : pad;
                    memset(p, ' ', w);
                    if (n) memcpy(p + at, s, n);
                }
                len = -2;
                break;
            } else if (floating) {
                len = snprintf(buf, cap, fmt, tfc_dtype_get_f64(dt, in->data, i));
            } else if (dt == TFC_UINT8 || dt == TFC_UINT16) {
                len = snprintf(buf, cap, fmt, (unsigned long long)tfc_dtype_get_f64(dt, in->data, i));
            } else {
                long long v = dt == TFC_INT64 ? ((const int64_t *)in->data)[i] : (long long)tfc_dtype_get_f64(dt, in->data, i);
                len = snprintf(buf, cap, fmt, v);
            }
            if (len < 0 || (size_t)len < cap) break;
            char *nb = tfc_malloc((size_t)len + 1);
            if (!nb) {
                ok = tfc_status_oom(st, "AsString", (size_t)len + 1);
                break;
            }
            if (buf != small) tfc_free(buf);
            buf = nb;
            cap = (size_t)len + 1;
        }
        if (ok && len >= 0) ok = tfc_tstring_copy(&out[i], buf, (size_t)len, st);
    }
    if (buf != small) tfc_free(buf);
    return ok;
}

/* ---- DecodeCSV -------------------------------------------------------------------------------------- */

typedef struct {
    const char *p; /* field text: the record itself unless quotes had to be unescaped (then `own`) */
    size_t n;
    char *own;
} field;

typedef struct {
    field *f;
    int n, cap;
} fields;

static bool add_field(fields *fs, const char *p, size_t n, char *own, tfc_status *st) {
    if (fs->n == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 16;
        field *f = tfc_realloc(fs->f, (size_t)cap * sizeof *f);
        if (!f) {
            tfc_free(own);
            return tfc_status_oom(st, "DecodeCSV", (size_t)cap * sizeof *f);
        }
        fs->f = f;
        fs->cap = cap;
    }
    fs->f[fs->n++] = (field){p, n, own};
    return true;
}

static void clear_fields(fields *fs) {
    for (int i = 0; i < fs->n; i++) tfc_free(fs->f[i].own);
    fs->n = 0;
}

/* Splits one record into the selected fields (TensorFlow's ExtractFields): CR/LF between fields are
 * skipped; a field starting with a quote (when use_quote_delim) runs to a quote followed by the delimiter
 * or the end, with "" standing for one quote; a trailing delimiter adds an empty last field. */
static bool extract(const char *in, size_t size, char delim, bool quotes, const int64_t *sel, int n_sel, fields *fs,
                    tfc_status *st) {
    size_t i = 0;
    int64_t parsed = 0;
    int si = 0;
    if (size == 0) return true;
    while (i < size) {
        if (in[i] == '\n' || in[i] == '\r') {
            i++;
            continue;
        }
        const bool include = n_sel == 0 || (si < n_sel && sel[si] == parsed);
        if (quotes && in[i] == '"') {
            i++;
            char *own = NULL;
            size_t len = 0;
            if (include && !(own = tfc_malloc(size - i + 1))) return tfc_status_oom(st, "DecodeCSV", size - i + 1);
            while (i < size - 1 && (in[i] != '"' || in[i + 1] != delim)) {
                if (in[i] != '"') {
                    if (own) own[len++] = in[i];
                    i++;
                } else {
                    if (in[i + 1] != '"') {
                        tfc_free(own);
                        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                              "DecodeCSV: Quote inside a string has to be escaped by another quote");
                    }
                    if (own) own[len++] = '"';
                    i += 2;
                }
            }
            if (!(i < size && in[i] == '"' && (i == size - 1 || in[i + 1] == delim))) {
                tfc_free(own);
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "DecodeCSV: Quoted field has to end with quote followed by delim or end");
            }
            i += 2;
            if (own && !add_field(fs, own, len, own, st)) return false;
        } else {
            const size_t start = i;
            while (i < size && in[i] != delim) {
                if ((quotes && in[i] == '"') || in[i] == '\n' || in[i] == '\r')
                    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "DecodeCSV: Unquoted fields cannot have quotes/CRLFs inside");
                i++;
            }
            if (include && !add_field(fs, in + start, i - start, NULL, st)) return false;
            i++;
        }
        parsed++;
        if (include && ++si == n_sel) return true;
    }
    const bool include = n_sel == 0 || (si < n_sel && sel[si] == parsed);
    if (include && in[size - 1] == delim) return add_field(fs, in + size, 0, NULL, st);
    return true;
}

bool tfc_kernel_decode_csv(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *rec = k->in[0];
    const int n_cols = k->n_out;
    const char delim = tfc_attrs_string(k->attrs, "field_delim", ",")[0];
    const bool quotes = tfc_attrs_bool(k->attrs, "use_quote_delim", true);
    const char *na = tfc_attrs_string(k->attrs, "na_value", "");
    const size_t na_len = strlen(na);
    int n_sel = 0;
    const int64_t *sel = tfc_attrs_ints(k->attrs, "select_cols", &n_sel);
    fields fs = {0};
    bool ok = true;
    for (int64_t r = 0; r < rec->num_elements && ok; r++) {
        size_t size;
        const char *in = sdata(rec, r, &size);
        clear_fields(&fs);
        if (!(ok = extract(in, size, delim, quotes, sel, n_sel, &fs, st))) break;
        if (fs.n != n_cols) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "DecodeCSV: Expect %d fields but have %d in record %lld", n_cols,
                                fs.n, (long long)r);
            break;
        }
        for (int f = 0; f < n_cols && ok; f++) {
            const tfc_tensor *def = k->in[1 + f];
            tfc_tensor *o = k->out[f];
            const field *x = &fs.f[f];
            const bool missing = x->n == 0 || (x->n == na_len && !memcmp(x->p, na, na_len));
            if (missing) {
                if (def->num_elements != 1) {
                    ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "DecodeCSV: Field %d is required but missing in record %lld!",
                                        f, (long long)r);
                    break;
                }
                if (o->dtype == TFC_STRING) ok = tfc_tstring_assign((tfc_tstring *)o->data + r, def->data, st);
                else memcpy((char *)o->data + (size_t)r * tfc_dtype_size(o->dtype), def->data, tfc_dtype_size(o->dtype));
                continue;
            }
            const char *tn = NULL;
            switch (o->dtype) {
            case TFC_INT32: if (!tfc_parse_i32(x->p, x->n, (int32_t *)o->data + r)) tn = "int32"; break;
            case TFC_INT64: if (!tfc_parse_i64(x->p, x->n, (int64_t *)o->data + r)) tn = "int64"; break;
            case TFC_FLOAT: if (!tfc_parse_f32(x->p, x->n, (float *)o->data + r)) tn = "float"; break;
            case TFC_DOUBLE: if (!tfc_parse_f64(x->p, x->n, (double *)o->data + r)) tn = "double"; break;
            case TFC_STRING: ok = tfc_tstring_copy((tfc_tstring *)o->data + r, x->p, x->n, st); break;
            default: ok = tfc_kernel_unimplemented(k, o->dtype, st); break;
            }
            if (tn)
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "DecodeCSV: Field %d in record %lld is not a valid %s: %.*s", f,
                                    (long long)r, tn, (int)(x->n > 100 ? 100 : x->n), x->p);
        }
    }
    clear_fields(&fs);
    tfc_free(fs.f);
    return ok;
}
