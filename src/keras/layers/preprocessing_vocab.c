/* The token vocabulary of the lookup layers and of adapt: tokens (strings or int64) in insertion order with
 * their counts, found through an open-addressing table keyed by FarmHash (strings) or a mixed integer. */
#include <stdlib.h>
#include <string.h>

#include "core/farmhash.h"
#include "keras/layers/preprocessing_internal.h"

void tfc_vocab_init(tfc_vocab *v, bool strings) {
    memset(v, 0, sizeof *v);
    v->strings = strings;
}

void tfc_vocab_clear(tfc_vocab *v) {
    for (int64_t i = 0; v->s && i < v->n; i++) tfc_free(v->s[i]);
    tfc_free(v->s);
    tfc_free(v->len);
    tfc_free(v->iv);
    tfc_free(v->count);
    tfc_free(v->doc);
    tfc_free(v->last_doc);
    tfc_free(v->slots);
    tfc_vocab_init(v, v->strings);
}

static uint64_t hash_int(int64_t x) {
    uint64_t h = (uint64_t)x * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}
static uint64_t hash_of(const tfc_vocab *v, int64_t i) {
    return v->strings ? tfc_fingerprint64(v->s[i], v->len[i]) : hash_int(v->iv[i]);
}

static bool rehash(tfc_vocab *v, int64_t want, tfc_status *st) {
    int64_t n = 16;
    while (n < want * 2) n *= 2;
    int64_t *slots = tfc_calloc((size_t)n, sizeof *slots);
    if (!slots) return tfc_status_oom(st, "vocabulary table", (size_t)n * sizeof *slots);
    for (int64_t i = 0; i < v->n; i++) {
        uint64_t h = hash_of(v, i) & (uint64_t)(n - 1);
        while (slots[h]) h = (h + 1) & (uint64_t)(n - 1);
        slots[h] = i + 1;
    }
    tfc_free(v->slots);
    v->slots = slots;
    v->n_slots = n;
    return true;
}

int64_t tfc_vocab_find_str(const tfc_vocab *v, const char *s, size_t n) {
    if (!v->n_slots) return -1;
    uint64_t m = (uint64_t)v->n_slots - 1, h = tfc_fingerprint64(s, n) & m;
    for (; v->slots[h]; h = (h + 1) & m) {
        int64_t i = v->slots[h] - 1;
        if (v->len[i] == n && (n == 0 || !memcmp(v->s[i], s, n))) return i;
    }
    return -1;
}

int64_t tfc_vocab_find_int(const tfc_vocab *v, int64_t x) {
    if (!v->n_slots) return -1;
    uint64_t m = (uint64_t)v->n_slots - 1, h = hash_int(x) & m;
    for (; v->slots[h]; h = (h + 1) & m)
        if (v->iv[v->slots[h] - 1] == x) return v->slots[h] - 1;
    return -1;
}

/* Room for one more token (arrays and table). */
static bool grow(tfc_vocab *v, tfc_status *st) {
    if (v->n == v->cap) {
        int64_t cap = v->cap ? v->cap * 2 : 16;
        size_t k = (size_t)cap;
        void *a = tfc_realloc(v->count, k * sizeof(int64_t));
        if (!a) return tfc_status_oom(st, "vocabulary", k * sizeof(int64_t));
        v->count = a;
        if (v->strings) {
            if (!(a = tfc_realloc(v->s, k * sizeof(char *)))) return tfc_status_oom(st, "vocabulary", k * sizeof(char *));
            v->s = a;
            if (!(a = tfc_realloc(v->len, k * sizeof(size_t)))) return tfc_status_oom(st, "vocabulary", k * sizeof(size_t));
            v->len = a;
        } else {
            if (!(a = tfc_realloc(v->iv, k * sizeof(int64_t)))) return tfc_status_oom(st, "vocabulary", k * sizeof(int64_t));
            v->iv = a;
        }
        if (v->doc) {
            if (!(a = tfc_realloc(v->doc, k * sizeof(int64_t)))) return tfc_status_oom(st, "vocabulary", k * sizeof(int64_t));
            v->doc = a;
            if (!(a = tfc_realloc(v->last_doc, k * sizeof(int64_t))))
                return tfc_status_oom(st, "vocabulary", k * sizeof(int64_t));
            v->last_doc = a;
        }
        v->cap = cap;
    }
    if ((v->n + 1) * 2 > v->n_slots) return rehash(v, v->n + 1, st);
    return true;
}

static void insert_slot(tfc_vocab *v, int64_t i) {
    uint64_t m = (uint64_t)v->n_slots - 1, h = hash_of(v, i) & m;
    while (v->slots[h]) h = (h + 1) & m;
    v->slots[h] = i + 1;
}

int64_t tfc_vocab_add_str(tfc_vocab *v, const char *s, size_t n, tfc_status *st) {
    int64_t i = tfc_vocab_find_str(v, s, n);
    if (i >= 0) return i;
    if (!grow(v, st)) return -1;
    char *c = tfc_malloc(n + 1);
    if (!c) return tfc_status_oom(st, "vocabulary token", n + 1), -1;
    if (n) memcpy(c, s, n);
    c[n] = 0;
    i = v->n++;
    v->s[i] = c;
    v->len[i] = n;
    v->count[i] = 0;
    if (v->doc) v->doc[i] = 0, v->last_doc[i] = -1;
    insert_slot(v, i);
    return i;
}

int64_t tfc_vocab_add_int(tfc_vocab *v, int64_t x, tfc_status *st) {
    int64_t i = tfc_vocab_find_int(v, x);
    if (i >= 0) return i;
    if (!grow(v, st)) return -1;
    i = v->n++;
    v->iv[i] = x;
    v->count[i] = 0;
    if (v->doc) v->doc[i] = 0, v->last_doc[i] = -1;
    insert_slot(v, i);
    return i;
}

static void move_entry(tfc_vocab *v, int64_t to, int64_t from) {
    if (v->strings) v->s[to] = v->s[from], v->len[to] = v->len[from];
    else v->iv[to] = v->iv[from];
    v->count[to] = v->count[from];
    if (v->doc) v->doc[to] = v->doc[from], v->last_doc[to] = v->last_doc[from];
}

void tfc_vocab_remove(tfc_vocab *v, int64_t i) {
    if (i < 0 || i >= v->n) return;
    if (v->strings) tfc_free(v->s[i]);
    move_entry(v, i, v->n - 1);
    v->n--;
    tfc_status st = TFC_STATUS_INIT;
    (void)rehash(v, v->n, &st); /* a table of the same or smaller size: on failure the old one is kept */
    if (!tfc_ok(&st)) {
        memset(v->slots, 0, (size_t)v->n_slots * sizeof *v->slots);
        for (int64_t k = 0; k < v->n; k++) insert_slot(v, k);
    }
}

/* Descending count, then descending token (bytes compared as Python compares bytes). */
typedef struct { const tfc_vocab *v; int64_t i; } sort_ent;
static int cmp_token(const tfc_vocab *v, int64_t a, int64_t b) {
    if (!v->strings) return v->iv[a] < v->iv[b] ? -1 : v->iv[a] > v->iv[b];
    size_t n = v->len[a] < v->len[b] ? v->len[a] : v->len[b];
    int c = n ? memcmp(v->s[a], v->s[b], n) : 0;
    if (c) return c;
    return v->len[a] < v->len[b] ? -1 : v->len[a] > v->len[b];
}
static int cmp_desc(const void *pa, const void *pb) {
    const sort_ent *ea = pa, *eb = pb;
    int64_t a = ea->i, b = eb->i;
    const tfc_vocab *v = ea->v;
    if (v->count[a] != v->count[b]) return v->count[a] > v->count[b] ? -1 : 1;
    return -cmp_token(v, a, b);
}

bool tfc_vocab_sort_by_count(tfc_vocab *v, int64_t keep, tfc_status *st) {
    if (v->n == 0) return true;
    sort_ent *order = tfc_malloc((size_t)v->n * sizeof *order);
    tfc_vocab w;
    tfc_vocab_init(&w, v->strings);
    if (!order) return tfc_status_oom(st, "vocabulary order", (size_t)v->n * sizeof *order);
    for (int64_t i = 0; i < v->n; i++) order[i] = (sort_ent){v, i};
    qsort(order, (size_t)v->n, sizeof *order, cmp_desc);
    if (keep < 0 || keep > v->n) keep = v->n;
    bool ok = true;
    if (v->doc) {
        w.doc = tfc_calloc(1, sizeof(int64_t));
        w.last_doc = tfc_calloc(1, sizeof(int64_t));
        ok = w.doc && w.last_doc;
        if (!ok) tfc_status_oom(st, "vocabulary", sizeof(int64_t));
    }
    for (int64_t k = 0; ok && k < keep; k++) {
        int64_t i = order[k].i;
        int64_t j = v->strings ? tfc_vocab_add_str(&w, v->s[i], v->len[i], st) : tfc_vocab_add_int(&w, v->iv[i], st);
        if (j < 0) ok = false;
        else {
            w.count[j] = v->count[i];
            if (w.doc) w.doc[j] = v->doc[i], w.last_doc[j] = v->last_doc[i];
        }
    }
    tfc_free(order);
    if (!ok) {
        tfc_vocab_clear(&w);
        return false;
    }
    tfc_vocab_clear(v);
    *v = w;
    return true;
}
