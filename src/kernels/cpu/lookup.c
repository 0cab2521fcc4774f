/* Lookup table kernels (tensorflow/core/kernels/lookup_table_op.cc, lookup_table_init_op.cc, lookup_util.cc): a
 * table is a resource holding an open-addressing hash map of scalar keys (string, int32, int64) to scalar values.
 * HashTableV2 is filled by an initializer (InitializeTableV2, InitializeTableFromTextFileV2, LookupTableImportV2)
 * and looked up only after; MutableHashTableV2 also takes inserts. A text-file initializer reads one entry per
 * line: index -2 is the whole line, -1 the line number (plus `offset`), k >= 0 the k-th field split at the
 * delimiter; a line that lacks the field or whose field does not parse as the dtype is an INVALID_ARGUMENT naming
 * the file and the line. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/string_internal.h"
#include "platform/file_io.h"

typedef struct {
    int64_t i; /* int32, int64, bool */
    double d;  /* float, double */
    const char *s; /* string (owned by the table when stored) */
    size_t n;
} tval;

typedef struct {
    bool used;
    uint64_t h;
    tval key, val;
} slot;

typedef struct table {
    uint64_t id; /* must stay first: tapes read it through a resource handle */
    atomic_int refcount;
    pthread_mutex_t mu;
    char *name;
    tfc_dtype kdt, vdt;
    bool is_mutable, initialized;
    size_t n, cap; /* entries; slots (a power of two, or 0) */
    slot *slots;
} table;

static void clear_slots(table *t) {
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].used) {
            tfc_free((void *)t->slots[i].key.s);
            tfc_free((void *)t->slots[i].val.s);
        }
    tfc_free(t->slots);
    t->slots = NULL;
    t->n = t->cap = 0;
}

static void table_acquire(void *p) { atomic_fetch_add(&((table *)p)->refcount, 1); }
static void table_release(void *p) {
    table *t = p;
    if (!t || atomic_fetch_sub(&t->refcount, 1) != 1) return;
    clear_slots(t);
    pthread_mutex_destroy(&t->mu);
    tfc_free(t->name);
    tfc_free(t);
}

static table *from_handle(const tfc_kernel_ctx *k, const tfc_tensor *h, tfc_status *st) {
    if (h->dtype != TFC_RESOURCE || !h->resource || h->resource_release != table_release)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input 0 is not a lookup table handle", k->op->name), NULL;
    return h->resource;
}

static uint64_t hash_of(tfc_dtype dt, const tval *v) {
    uint64_t h = 1469598103934665603ull;
    if (dt == TFC_STRING) {
        for (size_t i = 0; i < v->n; i++) h = (h ^ (uint8_t)v->s[i]) * 1099511628211ull;
        return h;
    }
    uint64_t x = (uint64_t)v->i; /* splitmix64's finalizer */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static bool same(tfc_dtype dt, const tval *a, const tval *b) {
    switch (dt) {
    case TFC_STRING: return a->n == b->n && !memcmp(a->s, b->s, a->n);
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_HALF: case TFC_BFLOAT16: return a->d == b->d;
    default: return a->i == b->i;
    }
}

/* Element i of t (strings are views into t). */
static void get(const tfc_tensor *t, int64_t i, tval *v) {
    *v = (tval){0};
    switch (t->dtype) {
    case TFC_STRING: {
        const tfc_tstring *s = (const tfc_tstring *)t->data + i;
        v->s = tfc_tstring_data(s);
        v->n = tfc_tstring_size(s);
        break;
    }
    case TFC_INT32: v->i = ((const int32_t *)t->data)[i]; break;
    case TFC_INT64: v->i = ((const int64_t *)t->data)[i]; break;
    case TFC_BOOL: v->i = ((const bool *)t->data)[i]; break;
    case TFC_FLOAT: v->d = ((const float *)t->data)[i]; break;
    case TFC_DOUBLE: v->d = ((const double *)t->data)[i]; break;
    case TFC_HALF: v->d = tfc_half_to_float(((const tfc_half *)t->data)[i]); break;
    case TFC_BFLOAT16: v->d = tfc_bfloat16_to_float(((const tfc_bfloat16 *)t->data)[i]); break;
    default: break;
    }
}

static bool put(tfc_tensor *t, int64_t i, const tval *v, tfc_status *st) {
    switch (t->dtype) {
    case TFC_STRING: return tfc_tstring_copy((tfc_tstring *)t->data + i, v->s, v->n, st);
    case TFC_INT32: ((int32_t *)t->data)[i] = (int32_t)v->i; break;
    case TFC_INT64: ((int64_t *)t->data)[i] = v->i; break;
    case TFC_BOOL: ((bool *)t->data)[i] = v->i != 0; break;
    case TFC_FLOAT: ((float *)t->data)[i] = (float)v->d; break;
    case TFC_DOUBLE: ((double *)t->data)[i] = v->d; break;
    case TFC_HALF: ((tfc_half *)t->data)[i] = tfc_half_from_float((float)v->d); break;
    case TFC_BFLOAT16: ((tfc_bfloat16 *)t->data)[i] = tfc_bfloat16_from_float((float)v->d); break;
    default: break;
    }
    return true;
}

/* A key or value as text for messages. */
static const char *show(tfc_dtype dt, const tval *v, char *buf, size_t n) {
    if (dt == TFC_STRING) snprintf(buf, n, "'%.*s'", (int)(v->n > 100 ? 100 : v->n), v->s);
    else if (tfc_dtype_is_floating(dt)) snprintf(buf, n, "%.9g", v->d);
    else snprintf(buf, n, "%lld", (long long)v->i);
    return buf;
}

static slot *find(const table *t, const tval *key, uint64_t h) {
    if (!t->cap) return NULL;
    for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        slot *s = &t->slots[i];
        if (!s->used) return NULL;
        if (s->h == h && same(t->kdt, &s->key, key)) return s;
    }
}

static bool own(tfc_dtype dt, tval *v, tfc_status *st) {
    if (dt != TFC_STRING) return true;
    char *c = tfc_malloc(v->n + 1);
    if (!c) return tfc_status_oom(st, "lookup table", v->n);
    memcpy(c, v->s, v->n);
    c[v->n] = 0;
    v->s = c;
    return true;
}

static bool grow(table *t, tfc_status *st) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    slot *ns = tfc_calloc(cap, sizeof *ns);
    if (!ns || cap > SIZE_MAX / 2 / sizeof *ns) {
        tfc_free(ns);
        return tfc_status_oom(st, "lookup table", cap * sizeof *ns);
    }
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slots[i].used) continue;
        size_t j = t->slots[i].h & (cap - 1);
        while (ns[j].used) j = (j + 1) & (cap - 1);
        ns[j] = t->slots[i];
    }
    tfc_free(t->slots);
    t->slots = ns;
    t->cap = cap;
    return true;
}

/* Inserts key -> val (copies). overwrite false: an existing key with a different value is TensorFlow's
 * "HashTable has different value for same key" error. */
static bool insert(table *t, const char *op, const tval *key, const tval *val, bool overwrite, tfc_status *st) {
    const uint64_t h = hash_of(t->kdt, key);
    slot *s = find(t, key, h);
    if (s && !overwrite) {
        if (same(t->vdt, &s->val, val)) return true;
        char a[128], b[128], c[128];
        return tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: table '%s': HashTable has different value for same key. "
                              "Key %s has %s and trying to add value %s", op, t->name, show(t->kdt, key, a, sizeof a),
                              show(t->vdt, &s->val, b, sizeof b), show(t->vdt, val, c, sizeof c));
    }
    tval v = *val;
    if (!own(t->vdt, &v, st)) return false;
    if (s) {
        tfc_free((void *)s->val.s);
        s->val = v;
        return true;
    }
    tval kk = *key;
    if (!own(t->kdt, &kk, st) || ((t->n + 1) * 4 > t->cap * 3 && !grow(t, st))) {
        tfc_free((void *)v.s);
        if (t->kdt == TFC_STRING && kk.s != key->s) tfc_free((void *)kk.s);
        return false;
    }
    size_t j = h & (t->cap - 1);
    while (t->slots[j].used) j = (j + 1) & (t->cap - 1);
    t->slots[j] = (slot){.used = true, .h = h, .key = kk, .val = v};
    t->n++;
    return true;
}

static bool check_types(const tfc_kernel_ctx *k, const table *t, tfc_dtype kdt, tfc_dtype vdt, tfc_status *st) {
    if (kdt != t->kdt)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: table '%s' has %s keys, got %s keys", k->op->name, t->name,
                              tfc_dtype_name(t->kdt), tfc_dtype_name(kdt));
    if (vdt != t->vdt)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: table '%s' has %s values, got %s values", k->op->name,
                              t->name, tfc_dtype_name(t->vdt), tfc_dtype_name(vdt));
    return true;
}

/* ---- handles ---- */

static bool new_table(tfc_kernel_ctx *k, bool is_mutable, tfc_status *st) {
    table *t = tfc_calloc(1, sizeof *t);
    const char *nm = tfc_attrs_string(k->attrs, "shared_name", "");
    if (!t || !(t->name = tfc_strdup(nm[0] ? nm : is_mutable ? "MutableHashTable" : "hash_table"))) {
        tfc_free(t);
        return tfc_status_oom(st, k->op->name, sizeof *t);
    }
    t->id = tfc_tensor_next_id();
    atomic_init(&t->refcount, 1);
    pthread_mutex_init(&t->mu, NULL);
    t->kdt = tfc_attrs_type(k->attrs, "key_dtype", TFC_INVALID_DTYPE);
    t->vdt = tfc_attrs_type(k->attrs, "value_dtype", TFC_INVALID_DTYPE);
    t->is_mutable = t->initialized = is_mutable;
    tfc_tensor *h = tfc_tensor_resource(t, table_acquire, table_release, st);
    table_release(t); /* the handle holds it */
    if (!h) return false;
    tfc_tensor_unref(k->out[0]);
    k->out[0] = h;
    return true;
}

static bool hash_table(tfc_kernel_ctx *k, tfc_status *st) { return new_table(k, false, st); }
static bool mutable_hash_table(tfc_kernel_ctx *k, tfc_status *st) { return new_table(k, true, st); }

/* ---- lookups and updates ---- */

static bool lookup_find(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    const tfc_tensor *keys = k->in[1], *dflt = k->in[2];
    if (!t || !check_types(k, t, keys->dtype, dflt->dtype, st)) return false;
    if (dflt->num_elements != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: default_value must be a scalar, got %lld values",
                              k->op->name, (long long)dflt->num_elements);
    tfc_tensor *out = k->out[0];
    if (!out && !(out = tfc_kernel_alloc_output(k, 0, keys->shape.dims, keys->shape.rank, st))) return false;
    tval d, key;
    get(dflt, 0, &d);
    pthread_mutex_lock(&t->mu);
    bool ok = t->initialized || tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: Table not initialized (table '%s')",
                                               k->op->name, t->name);
    for (int64_t i = 0; ok && i < keys->num_elements; i++) {
        get(keys, i, &key);
        const slot *s = find(t, &key, hash_of(t->kdt, &key));
        ok = put(out, i, s ? &s->val : &d, st);
    }
    pthread_mutex_unlock(&t->mu);
    return ok;
}

/* Inserts keys[i] -> values[i] for every i; replace: clear first (import). */
static bool fill(tfc_kernel_ctx *k, table *t, const tfc_tensor *keys, const tfc_tensor *vals, bool replace,
                 bool overwrite, tfc_status *st) {
    if (keys->num_elements != vals->num_elements)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: keys and values must have the same size, got %lld and %lld",
                              k->op->name, (long long)keys->num_elements, (long long)vals->num_elements);
    if (replace) clear_slots(t);
    bool ok = true;
    for (int64_t i = 0; ok && i < keys->num_elements; i++) {
        tval a, b;
        get(keys, i, &a);
        get(vals, i, &b);
        ok = insert(t, k->op->name, &a, &b, overwrite, st);
    }
    return ok;
}

static bool lookup_insert(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    if (!t || !check_types(k, t, k->in[1]->dtype, k->in[2]->dtype, st)) return false;
    if (!t->is_mutable)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: table '%s' is a HashTable (immutable): it takes no inserts",
                              k->op->name, t->name);
    pthread_mutex_lock(&t->mu);
    bool ok = fill(k, t, k->in[1], k->in[2], false, true, st);
    pthread_mutex_unlock(&t->mu);
    return ok;
}

static bool lookup_import(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    if (!t || !check_types(k, t, k->in[1]->dtype, k->in[2]->dtype, st)) return false;
    pthread_mutex_lock(&t->mu);
    bool ok = fill(k, t, k->in[1], k->in[2], true, true, st);
    if (ok) t->initialized = true;
    pthread_mutex_unlock(&t->mu);
    return ok;
}

static bool initialize_table(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    if (!t || !check_types(k, t, k->in[1]->dtype, k->in[2]->dtype, st)) return false;
    pthread_mutex_lock(&t->mu);
    /* initializing again with the same entries is allowed; a different value for a key is an error */
    bool ok = fill(k, t, k->in[1], k->in[2], false, t->is_mutable, st);
    if (ok) t->initialized = true;
    pthread_mutex_unlock(&t->mu);
    return ok;
}

static bool lookup_size(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    if (!t) return false;
    pthread_mutex_lock(&t->mu);
    *(int64_t *)k->out[0]->data = (int64_t)t->n;
    pthread_mutex_unlock(&t->mu);
    return true;
}

static bool lookup_export(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    if (!t) return false;
    const tfc_dtype kt = tfc_attrs_type(k->attrs, "Tkeys", TFC_INVALID_DTYPE);
    const tfc_dtype vt = tfc_attrs_type(k->attrs, "Tvalues", TFC_INVALID_DTYPE);
    if (!check_types(k, t, kt, vt, st)) return false;
    pthread_mutex_lock(&t->mu);
    int64_t n = (int64_t)t->n;
    tfc_tensor *ko = tfc_kernel_alloc_output(k, 0, &n, 1, st), *vo = ko ? tfc_kernel_alloc_output(k, 1, &n, 1, st) : NULL;
    bool ok = vo != NULL;
    for (size_t i = 0, j = 0; ok && i < t->cap; i++)
        if (t->slots[i].used) {
            ok = put(ko, (int64_t)j, &t->slots[i].key, st) && put(vo, (int64_t)j, &t->slots[i].val, st);
            j++;
        }
    pthread_mutex_unlock(&t->mu);
    return ok;
}

/* ---- InitializeTableFromTextFileV2 ---- */

typedef struct {
    const char *op, *file;
    int64_t line_no; /* 0-based */
    const char *line;
    size_t len;
} text_line;

/* Column `index` of the line as a value of dtype dt. */
static bool text_field(const text_line *l, int64_t index, char delim, int64_t offset, tfc_dtype dt, tval *v,
                       tfc_status *st) {
    *v = (tval){0};
    if (index == -1) {
        if (dt != TFC_INT64)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s: the line number (index -1) is an int64, the table "
                                  "wants %s", l->op, l->file, tfc_dtype_name(dt));
        v->i = l->line_no + offset;
        return true;
    }
    const char *s = l->line;
    size_t n = l->len;
    if (index >= 0) {
        int64_t col = 0;
        const char *p = l->line, *end = l->line + l->len;
        while (col < index && p) {
            p = memchr(p, delim, (size_t)(end - p));
            if (p) p++, col++;
        }
        if (!p) {
            int64_t cols = 1;
            for (const char *q = l->line; (q = memchr(q, delim, (size_t)(end - q))); q++) cols++;
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Invalid number of columns in %s line %lld (%.*s) : "
                                  "expected at least %lld got %lld", l->op, l->file, (long long)l->line_no + 1,
                                  (int)(l->len > 200 ? 200 : l->len), l->line, (long long)index + 1, (long long)cols);
        }
        const char *q = memchr(p, delim, (size_t)(end - p));
        s = p;
        n = (size_t)((q ? q : end) - p);
    } else if (dt != TFC_STRING) {
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s: the whole line (index -2) is a string, the table "
                              "wants %s", l->op, l->file, tfc_dtype_name(dt));
    }
    bool ok = true;
    int32_t i32;
    float f;
    switch (dt) {
    case TFC_STRING: v->s = s, v->n = n; break;
    case TFC_INT64: ok = tfc_parse_i64(s, n, &v->i); break;
    case TFC_INT32: ok = tfc_parse_i32(s, n, &i32), v->i = i32; break;
    case TFC_FLOAT: ok = tfc_parse_f32(s, n, &f), v->d = f; break;
    case TFC_DOUBLE: ok = tfc_parse_f64(s, n, &v->d); break;
    default: ok = false;
    }
    if (!ok)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Field '%.*s' in %s line %lld is not a valid %s", l->op,
                              (int)(n > 200 ? 200 : n), s, l->file, (long long)l->line_no + 1, tfc_dtype_name(dt));
    return true;
}

static bool init_from_text(tfc_kernel_ctx *k, table *t, const char *file, tfc_status *st) {
    const int64_t key_index = tfc_attrs_int(k->attrs, "key_index", -2), value_index = tfc_attrs_int(k->attrs, "value_index", -1);
    const int64_t vocab_size = tfc_attrs_int(k->attrs, "vocab_size", -1), offset = tfc_attrs_int(k->attrs, "offset", 0);
    const char delim = tfc_attrs_string(k->attrs, "delimiter", "\t")[0];
    void *data;
    size_t size;
    if (!tfc_file_read_all(file, 0, &data, &size, st)) {
        char msg[sizeof st->msg];
        memcpy(msg, st->msg, sizeof msg);
        return tfc_status_set(st, st->code, "%s: %s", k->op->name, msg);
    }
    const char *p = data, *end = p + size;
    text_line l = {.op = k->op->name, .file = file};
    bool ok = true;
    while (ok && p < end && (vocab_size < 0 || l.line_no < vocab_size)) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        l.line = p;
        l.len = (size_t)((nl ? nl : end) - p);
        if (l.len && p[l.len - 1] == '\r') l.len--;
        tval key, val;
        ok = text_field(&l, key_index, delim, offset, t->kdt, &key, st) &&
             text_field(&l, value_index, delim, offset, t->vdt, &val, st) &&
             insert(t, k->op->name, &key, &val, t->is_mutable, st);
        l.line_no++;
        p = nl ? nl + 1 : end;
    }
    if (ok && vocab_size > 0 && l.line_no < vocab_size)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Invalid vocab_size in %s: expected %lld lines but got %lld",
                            k->op->name, file, (long long)vocab_size, (long long)l.line_no);
    tfc_free(data);
    return ok;
}

static bool initialize_table_from_text_file(tfc_kernel_ctx *k, tfc_status *st) {
    table *t = from_handle(k, k->in[0], st);
    if (!t) return false;
    const tfc_tensor *f = k->in[1];
    if (f->dtype != TFC_STRING || f->num_elements != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: filename must be a string scalar", k->op->name);
    const tfc_tstring *fs = (const tfc_tstring *)f->data;
    char *file = tfc_malloc(tfc_tstring_size(fs) + 1);
    if (!file) return tfc_status_oom(st, k->op->name, tfc_tstring_size(fs));
    memcpy(file, tfc_tstring_data(fs), tfc_tstring_size(fs));
    file[tfc_tstring_size(fs)] = 0;
    pthread_mutex_lock(&t->mu);
    bool ok = init_from_text(k, t, file, st);
    if (ok) t->initialized = true;
    pthread_mutex_unlock(&t->mu);
    tfc_free(file);
    return ok;
}

const tfc_kernel_reg tfc_cpu_kernels_lookup[] = {
    {"HashTableV2", hash_table},
    {"MutableHashTableV2", mutable_hash_table},
    {"LookupTableFindV2", lookup_find},
    {"LookupTableInsertV2", lookup_insert},
    {"LookupTableImportV2", lookup_import},
    {"LookupTableSizeV2", lookup_size},
    {"LookupTableExportV2", lookup_export},
    {"InitializeTableV2", initialize_table},
    {"InitializeTableFromTextFileV2", initialize_table_from_text_file},
    {NULL, NULL},
};
