/* TF_TString operations (layout in include/tfc/tstring.h; little-endian hosts). */
#include <string.h>

#include "tfc/tstring.h"

_Static_assert(sizeof(tfc_tstring) == 24, "TF_TString is 24 bytes");

void tfc_tstring_init(tfc_tstring *s) { memset(s, 0, sizeof *s); }

tfc_tstring_type tfc_tstring_get_type(const tfc_tstring *s) { return (tfc_tstring_type)(s->raw[0] & 3u); }

size_t tfc_tstring_size(const tfc_tstring *s) {
    switch (tfc_tstring_get_type(s)) {
    case TFC_TSTR_SMALL: return s->small.size_and_type >> 2;
    case TFC_TSTR_LARGE: return s->large.size_and_type >> 2;
    case TFC_TSTR_OFFSET: return s->offset.size_and_type >> 2;
    default: return s->view.size_and_type >> 2;
    }
}

size_t tfc_tstring_capacity(const tfc_tstring *s) {
    switch (tfc_tstring_get_type(s)) {
    case TFC_TSTR_SMALL: return 22;
    case TFC_TSTR_LARGE: return s->large.cap;
    default: return 0;
    }
}

const char *tfc_tstring_data(const tfc_tstring *s) {
    switch (tfc_tstring_get_type(s)) {
    case TFC_TSTR_SMALL: return s->small.str;
    case TFC_TSTR_LARGE: return s->large.ptr;
    case TFC_TSTR_OFFSET: return (const char *)s + s->offset.offset;
    default: return s->view.ptr;
    }
}

void tfc_tstring_dealloc(tfc_tstring *s) {
    if (tfc_tstring_get_type(s) == TFC_TSTR_LARGE) tfc_free(s->large.ptr);
    memset(s, 0, sizeof *s);
}

static size_t align16_cap(size_t needed) { return ((needed + 1 + 15) & ~(size_t)15) - 1; }

/* TensorFlow's policy: up to 22 bytes is always SMALL (a LARGE string is freed); a LARGE string grows to
 * exactly align16(n + 1) - 1, and shrinking below half its capacity halves it; VIEW/OFFSET become owned. */
char *tfc_tstring_resize(tfc_tstring *s, size_t n) {
    tfc_tstring_type t = tfc_tstring_get_type(s);
    size_t old = tfc_tstring_size(s);
    const char *src = tfc_tstring_data(s);
    size_t keep = old < n ? old : n;
    if (n <= 22) {
        char tmp[23];
        if (keep) memcpy(tmp, src, keep);
        if (t == TFC_TSTR_LARGE) tfc_free(s->large.ptr);
        memset(s, 0, sizeof *s);
        if (keep) memcpy(s->small.str, tmp, keep);
        s->small.size_and_type = (uint8_t)(n << 2);
        s->small.str[n] = 0;
        return s->small.str;
    }
    size_t cap = tfc_tstring_capacity(s);
    size_t new_cap = n < old && n < cap / 2 ? align16_cap(cap / 2) : n > cap ? align16_cap(n) : cap;
    char *p;
    if (t == TFC_TSTR_LARGE && new_cap == cap) {
        p = s->large.ptr;
    } else if (t == TFC_TSTR_LARGE) {
        if (!(p = tfc_realloc(s->large.ptr, new_cap + 1))) return NULL;
    } else {
        if (!(p = tfc_malloc(new_cap + 1))) return NULL;
        if (keep) memcpy(p, src, keep);
    }
    p[n] = 0;
    s->large.size_and_type = (n << 2) | TFC_TSTR_LARGE;
    s->large.cap = new_cap;
    s->large.ptr = p;
    return p;
}

bool tfc_tstring_copy(tfc_tstring *s, const char *src, size_t n, tfc_status *st) {
    /* src may alias s's own storage only for views; copy through resize from an empty state. */
    if (tfc_tstring_get_type(s) != TFC_TSTR_LARGE) memset(s, 0, sizeof *s);
    char *p = tfc_tstring_resize(s, n);
    if (!p) return tfc_status_oom(st, "tstring", n);
    if (n) memmove(p, src, n);
    p[n] = 0;
    return true;
}

void tfc_tstring_assign_view(tfc_tstring *s, const char *src, size_t n) {
    tfc_tstring_dealloc(s);
    s->view.size_and_type = (n << 2) | TFC_TSTR_VIEW;
    s->view.ptr = src;
}

bool tfc_tstring_assign(tfc_tstring *dst, const tfc_tstring *src, tfc_status *st) {
    if (dst == src) return true;
    switch (tfc_tstring_get_type(src)) {
    case TFC_TSTR_LARGE: return tfc_tstring_copy(dst, src->large.ptr, tfc_tstring_size(src), st);
    case TFC_TSTR_OFFSET: tfc_tstring_assign_view(dst, tfc_tstring_data(src), tfc_tstring_size(src)); return true;
    default:
        tfc_tstring_dealloc(dst);
        *dst = *src;
        return true;
    }
}
