/* JSON for the REST front end: a recursive-descent reader into an arena (depth bounded by SRV_JSON_MAX_DEPTH)
 * and the writer helpers. */
#include "serving/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/platform.h"

/* ---- arena ---------------------------------------------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} chunk;

struct srv_json_doc {
    chunk *head;
};

static void *arena_alloc(srv_json_doc *d, size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!d->head || d->head->cap - d->head->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        chunk *c = tfc_malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = d->head;
        c->used = 0;
        c->cap = cap;
        d->head = c;
    }
    void *p = d->head->data + d->head->used;
    d->head->used += n;
    return p;
}

void srv_json_free(srv_json_doc *d) {
    if (!d) return;
    for (chunk *c = d->head, *n; c; c = n) {
        n = c->next;
        tfc_free(c);
    }
    tfc_free(d);
}

/* ---- reader --------------------------------------------------------------------------------------------- */

typedef struct parser {
    const char *s, *p, *end;
    srv_json_doc *doc;
    tfc_status *st;
    bool failed;
} parser;

static bool perr(parser *ps, const char *at, const char *reason) {
    if (!ps->failed)
        tfc_status_set(ps->st, TFC_INVALID_ARGUMENT, "JSON Parse error: %s at offset: %zu", reason, (size_t)(at - ps->s));
    ps->failed = true;
    return false;
}

static bool poom(parser *ps) {
    if (!ps->failed) tfc_status_oom(ps->st, "JSON document", 65536);
    ps->failed = true;
    return false;
}

static void ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static bool lit(parser *ps, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n)) return false;
    ps->p += n;
    return true;
}

/* Length of a valid UTF-8 sequence at p (1-4), or 0. */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    int n;
    unsigned min;
    if (c < 0x80) return 1;
    if ((c & 0xe0) == 0xc0) n = 2, min = 0x80, c &= 0x1f;
    else if ((c & 0xf0) == 0xe0) n = 3, min = 0x800, c &= 0x0f;
    else if ((c & 0xf8) == 0xf0) n = 4, min = 0x10000, c &= 0x07;
    else return 0;
    if (end - p < n) return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    return n;
}

static int hex4(const char *p, const char *end, unsigned *out) {
    if (end - p < 4) return 0;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static char *put_utf8(char *o, unsigned c) {
    if (c < 0x80) *o++ = (char)c;
    else if (c < 0x800) *o++ = (char)(0xc0 | (c >> 6)), *o++ = (char)(0x80 | (c & 0x3f));
    else if (c < 0x10000)
        *o++ = (char)(0xe0 | (c >> 12)), *o++ = (char)(0x80 | ((c >> 6) & 0x3f)), *o++ = (char)(0x80 | (c & 0x3f));
    else
        *o++ = (char)(0xf0 | (c >> 18)), *o++ = (char)(0x80 | ((c >> 12) & 0x3f)),
        *o++ = (char)(0x80 | ((c >> 6) & 0x3f)), *o++ = (char)(0x80 | (c & 0x3f));
    return o;
}

/* A string at ps->p (the opening quote): decoded into the arena. */
static bool string(parser *ps, const char **out, size_t *out_len) {
    const char *start = ps->p++;
    /* decoded text is never longer than the source */
    const char *q = ps->p;
    while (q < ps->end && *q != '"') q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
    if (q >= ps->end) return perr(ps, start, "Missing a closing quotation mark in string.");
    char *buf = arena_alloc(ps->doc, (size_t)(q - ps->p) + 1), *o = buf;
    if (!buf) return poom(ps);
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p;
        if (c < 0x20) return perr(ps, ps->p, "Invalid encoding in string.");
        if (c == '\\') {
            const char *esc = ps->p++;
            if (ps->p >= ps->end) return perr(ps, esc, "Invalid escape character in string.");
            char e = *ps->p++;
            switch (e) {
            case '"': *o++ = '"'; break;
            case '\\': *o++ = '\\'; break;
            case '/': *o++ = '/'; break;
            case 'b': *o++ = '\b'; break;
            case 'f': *o++ = '\f'; break;
            case 'n': *o++ = '\n'; break;
            case 'r': *o++ = '\r'; break;
            case 't': *o++ = '\t'; break;
            case 'u': {
                unsigned u, lo;
                if (!hex4(ps->p, ps->end, &u)) return perr(ps, ps->p, "Incorrect hex digit after \\u escape in string.");
                ps->p += 4;
                if (u >= 0xd800 && u <= 0xdbff) {
                    if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' || !hex4(ps->p + 2, ps->end, &lo) ||
                        lo < 0xdc00 || lo > 0xdfff)
                        return perr(ps, ps->p, "The surrogate pair in string is invalid.");
                    ps->p += 6;
                    u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
                } else if (u >= 0xdc00 && u <= 0xdfff) {
                    return perr(ps, ps->p, "The surrogate pair in string is invalid.");
                }
                o = put_utf8(o, u);
                break;
            }
            default: return perr(ps, esc, "Invalid escape character in string.");
            }
            continue;
        }
        int n = utf8_len((const unsigned char *)ps->p, (const unsigned char *)ps->end);
        if (!n) return perr(ps, ps->p, "Invalid encoding in string.");
        memcpy(o, ps->p, (size_t)n);
        o += n;
        ps->p += n;
    }
    ps->p++; /* closing quote */
    *o = 0;
    *out = buf;
    *out_len = (size_t)(o - buf);
    return true;
}

static bool number(parser *ps, srv_json *v) {
    const char *b = ps->p;
    bool neg = false;
    if (ps->p < ps->end && *ps->p == '-') ps->p++, neg = true;
    if (lit(ps, "Infinity")) {
        v->s = b;
        v->len = (size_t)(ps->p - b);
        return true;
    }
    (void)neg;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return perr(ps, b, "Invalid value.");
    if (*ps->p == '0') ps->p++;
    else
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    v->is_int = true;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        v->is_int = false;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return perr(ps, ps->p, "Missing fraction part in number.");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        v->is_int = false;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return perr(ps, ps->p, "Missing exponent in number.");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    v->s = b;
    v->len = (size_t)(ps->p - b);
    if (v->len > 4096) return perr(ps, b, "Number too big to be stored in double.");
    double d;
    if (!srv_json_number_f64(v, &d)) return perr(ps, b, "Number too big to be stored in double.");
    return true;
}

/* Growable list of children on the heap while parsing, copied into the arena at the end. */
typedef struct vec {
    srv_json **items;
    const char **keys;
    size_t *klens;
    size_t n, cap;
} vec;

static bool vec_push(vec *v, srv_json *x, const char *k, size_t kl) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        srv_json **i = tfc_realloc(v->items, cap * sizeof *i);
        if (!i) return false;
        v->items = i;
        if (k || v->keys) {
            const char **kk = tfc_realloc(v->keys, cap * sizeof *kk);
            if (!kk) return false;
            v->keys = kk;
            size_t *kl2 = tfc_realloc(v->klens, cap * sizeof *kl2);
            if (!kl2) return false;
            v->klens = kl2;
        }
        v->cap = cap;
    }
    v->items[v->n] = x;
    if (k) v->keys[v->n] = k, v->klens[v->n] = kl;
    v->n++;
    return true;
}

static void vec_free(vec *v) {
    tfc_free(v->items);
    tfc_free(v->keys);
    tfc_free(v->klens);
}

static srv_json *value(parser *ps, int depth);

static bool finish_vec(parser *ps, srv_json *v, vec *c, bool obj) {
    if (c->n > UINT32_MAX) return perr(ps, ps->p, "Too many elements.");
    v->n = (uint32_t)c->n;
    if (!c->n) return true;
    if (!(v->items = arena_alloc(ps->doc, c->n * sizeof *v->items))) return poom(ps);
    memcpy(v->items, c->items, c->n * sizeof *v->items);
    if (obj) {
        if (!(v->keys = arena_alloc(ps->doc, c->n * sizeof *v->keys)) ||
            !(v->key_lens = arena_alloc(ps->doc, c->n * sizeof *v->key_lens)))
            return poom(ps);
        memcpy(v->keys, c->keys, c->n * sizeof *v->keys);
        memcpy(v->key_lens, c->klens, c->n * sizeof *v->key_lens);
    }
    return true;
}

static srv_json *value(parser *ps, int depth) {
    ws(ps);
    srv_json *v = arena_alloc(ps->doc, sizeof *v);
    if (!v) {
        poom(ps);
        return NULL;
    }
    memset(v, 0, sizeof *v);
    if (ps->p >= ps->end) {
        perr(ps, ps->p, depth ? "Invalid value." : "The document is empty.");
        return NULL;
    }
    char c = *ps->p;
    if (c == '{' || c == '[') {
        if (depth >= SRV_JSON_MAX_DEPTH) {
            perr(ps, ps->p, "Nesting too deep.");
            return NULL;
        }
        bool obj = c == '{';
        v->type = obj ? SRV_J_OBJECT : SRV_J_ARRAY;
        ps->p++;
        vec kids = {0};
        ws(ps);
        if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
            ps->p++;
            return v;
        }
        for (;;) {
            const char *k = NULL;
            size_t kl = 0;
            if (obj) {
                ws(ps);
                if (ps->p >= ps->end || *ps->p != '"') {
                    perr(ps, ps->p, "Missing a name for object member.");
                    break;
                }
                if (!string(ps, &k, &kl)) break;
                ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') {
                    perr(ps, ps->p, "Missing a colon after a name of object member.");
                    break;
                }
                ps->p++;
            }
            srv_json *x = value(ps, depth + 1);
            if (!x) break;
            if (!vec_push(&kids, x, obj ? k : NULL, kl)) {
                poom(ps);
                break;
            }
            ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
                ps->p++;
                finish_vec(ps, v, &kids, obj);
                break;
            }
            perr(ps, ps->p, obj ? "Missing a comma or '}' after an object member."
                                : "Missing a comma or ']' after an array element.");
            break;
        }
        vec_free(&kids);
        return ps->failed ? NULL : v;
    }
    if (c == '"') {
        v->type = SRV_J_STRING;
        return string(ps, &v->s, &v->len) ? v : NULL;
    }
    if (lit(ps, "null")) v->type = SRV_J_NULL;
    else if (lit(ps, "true")) v->type = SRV_J_TRUE;
    else if (lit(ps, "false")) v->type = SRV_J_FALSE;
    else if (c == 'N' && lit(ps, "NaN")) {
        v->type = SRV_J_NUMBER;
        v->s = ps->p - 3;
        v->len = 3;
    } else {
        v->type = SRV_J_NUMBER;
        if (!number(ps, v)) return NULL;
    }
    return v;
}

srv_json_doc *srv_json_parse(const char *text, size_t len, srv_json **root, tfc_status *st) {
    *root = NULL;
    srv_json_doc *d = tfc_calloc(1, sizeof *d);
    if (!d) {
        tfc_status_oom(st, "JSON document", sizeof *d);
        return NULL;
    }
    parser ps = {text, text, text + len, d, st, false};
    srv_json *v = value(&ps, 0);
    if (v) {
        ws(&ps);
        if (ps.p < ps.end) {
            perr(&ps, ps.p, "The document root must not be followed by other values.");
            v = NULL;
        }
    }
    if (!v) {
        srv_json_free(d);
        return NULL;
    }
    *root = v;
    tfc_status_clear(st);
    return d;
}

/* ---- accessors ------------------------------------------------------------------------------------------ */

const srv_json *srv_json_get(const srv_json *obj, const char *key) {
    if (!obj || obj->type != SRV_J_OBJECT) return NULL;
    size_t kl = strlen(key);
    for (uint32_t i = 0; i < obj->n; i++)
        if (obj->key_lens[i] == kl && !memcmp(obj->keys[i], key, kl)) return obj->items[i];
    return NULL;
}

bool srv_json_is_b64(const srv_json *v) {
    return v->type == SRV_J_OBJECT && v->n == 1 && !strcmp(v->keys[0], "b64");
}

unsigned char *srv_json_b64_decode(const srv_json *v, size_t *out_len) {
    const srv_json *s = v->items[0];
    return s->type == SRV_J_STRING ? srv_base64_decode(s->s, s->len, out_len) : NULL;
}

/* The number's text as a NUL-terminated copy in buf (numbers are at most 4096 chars, checked by the parser). */
static const char *num_text(const srv_json *v, char *buf, size_t size) {
    size_t n = v->len < size - 1 ? v->len : size - 1;
    memcpy(buf, v->s, n);
    buf[n] = 0;
    return buf;
}

bool srv_json_number_f64(const srv_json *v, double *out) {
    if (!v || v->type != SRV_J_NUMBER) return false;
    char buf[4100];
    num_text(v, buf, sizeof buf);
    if (!strcmp(buf, "NaN")) return *out = NAN, true;
    if (!strcmp(buf, "Infinity")) return *out = INFINITY, true;
    if (!strcmp(buf, "-Infinity")) return *out = -INFINITY, true;
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && isinf(d)) return false;
    *out = d;
    return true;
}

bool srv_json_number_i64(const srv_json *v, int64_t lo, int64_t hi, int64_t *out) {
    if (!v || v->type != SRV_J_NUMBER || !v->is_int) return false;
    char buf[64];
    if (v->len >= sizeof buf) return false;
    num_text(v, buf, sizeof buf);
    errno = 0;
    long long x = strtoll(buf, NULL, 10);
    if (errno || x < lo || x > hi) return false;
    *out = x;
    return true;
}

bool srv_json_number_u64(const srv_json *v, uint64_t hi, uint64_t *out) {
    if (!v || v->type != SRV_J_NUMBER || !v->is_int || v->s[0] == '-') return false;
    char buf[64];
    if (v->len >= sizeof buf) return false;
    num_text(v, buf, sizeof buf);
    errno = 0;
    unsigned long long x = strtoull(buf, NULL, 10);
    if (errno || x > hi) return false;
    *out = x;
    return true;
}

const char *srv_json_type_name(const srv_json *v) {
    switch (v ? v->type : SRV_J_NULL) {
    case SRV_J_FALSE: return "False";
    case SRV_J_TRUE: return "True";
    case SRV_J_NUMBER: return "Number";
    case SRV_J_STRING: return "String";
    case SRV_J_ARRAY: return "Array";
    case SRV_J_OBJECT: return "Object";
    default: return "Null";
    }
}

/* ---- writer --------------------------------------------------------------------------------------------- */

void srv_buf_put(srv_buf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n + 1) {
            if (cap > SIZE_MAX / 2) {
                b->oom = true;
                return;
            }
            cap *= 2;
        }
        char *g = tfc_realloc(b->p, cap);
        if (!g) {
            b->oom = true;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void srv_buf_puts(srv_buf *b, const char *s) { srv_buf_put(b, s, strlen(s)); }

void srv_buf_printf(srv_buf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    srv_buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

void srv_buf_json_string(srv_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    srv_buf_put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        int u = c >= 0x80 ? utf8_len((const unsigned char *)s + i, (const unsigned char *)s + n) : 1;
        if (c >= 0x20 && c != '"' && c != '\\' && u) {
            i += (size_t)u;
            run += (size_t)u;
            continue;
        }
        srv_buf_put(b, s + i - run, run);
        run = 0;
        char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
        if (c == '"') srv_buf_put(b, "\\\"", 2);
        else if (c == '\\') srv_buf_put(b, "\\\\", 2);
        else if (c == '\n') srv_buf_put(b, "\\n", 2);
        else if (c == '\t') srv_buf_put(b, "\\t", 2);
        else if (c == '\r') srv_buf_put(b, "\\r", 2);
        else srv_buf_put(b, e, 6);
        i++;
    }
    srv_buf_put(b, s + n - run, run);
    srv_buf_put(b, "\"", 1);
}

static void finish_number(srv_buf *b, char *t) {
    if (!strchr(t, '.') && !strchr(t, 'e')) strcat(t, ".0");
    srv_buf_puts(b, t);
}

void srv_buf_float(srv_buf *b, float v) {
    if (isnan(v)) return srv_buf_puts(b, "NaN");
    if (isinf(v)) return srv_buf_puts(b, v > 0 ? "Infinity" : "-Infinity");
    char t[48];
    snprintf(t, sizeof t - 3, "%.6g", (double)v);
    if (strtof(t, NULL) != v) snprintf(t, sizeof t - 3, "%.9g", (double)v);
    finish_number(b, t);
}

void srv_buf_double(srv_buf *b, double v) {
    if (isnan(v)) return srv_buf_puts(b, "NaN");
    if (isinf(v)) return srv_buf_puts(b, v > 0 ? "Infinity" : "-Infinity");
    char t[48];
    snprintf(t, sizeof t - 3, "%.6g", v);
    if (strtod(t, NULL) != v) snprintf(t, sizeof t - 3, "%.17g", v);
    finish_number(b, t);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void srv_buf_base64(srv_buf *b, const unsigned char *s, size_t n) {
    char q[4];
    for (size_t i = 0; i < n; i += 3) {
        unsigned x = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        q[0] = b64[x >> 18];
        q[1] = b64[(x >> 12) & 63];
        q[2] = i + 1 < n ? b64[(x >> 6) & 63] : '=';
        q[3] = i + 2 < n ? b64[x & 63] : '=';
        srv_buf_put(b, q, 4);
    }
}

void srv_buf_free(srv_buf *b) {
    tfc_free(b->p);
    memset(b, 0, sizeof *b);
}

/* The value of a base64 character, -1 for any other byte (the inverse of b64[] without a scan per byte). */
static int b64_digit(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

unsigned char *srv_base64_decode(const char *s, size_t n, size_t *out_len) {
    while (n && s[n - 1] == '=') n--;
    if (n % 4 == 1) return NULL;
    unsigned char *o = tfc_malloc(n / 4 * 3 + 3);
    if (!o) return NULL;
    size_t k = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        const int d = b64_digit((unsigned char)s[i]);
        if (d < 0) {
            tfc_free(o);
            return NULL;
        }
        acc = acc << 6 | (unsigned)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *out_len = k;
    return o;
}
