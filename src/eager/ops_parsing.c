/* tf.train.Example builder (include/tfc/example.h) and the parse_example wrappers over ParseExampleV2
 * (include/tfc/ops/parsing.h). */
#include <string.h>

#include "tfc/ops/parsing.h"

/* ---- protobuf writing ------------------------------------------------------------------------------ */

typedef struct {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} buf;

static bool grow(buf *b, size_t extra) {
    if (b->oom) return false;
    if (b->n + extra <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + extra) cap *= 2;
    uint8_t *p = tfc_realloc(b->p, cap);
    if (!p) return !(b->oom = true);
    b->p = p;
    b->cap = cap;
    return true;
}
static void put(buf *b, const void *d, size_t n) {
    if (n && grow(b, n)) memcpy(b->p + b->n, d, n), b->n += n;
}
static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}
static void put_varint(buf *b, uint64_t v) {
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) t[n++] = (uint8_t)(v | 0x80), v >>= 7;
    t[n++] = (uint8_t)v;
    put(b, t, n);
}
static void put_len_field(buf *b, uint32_t field, const void *d, size_t n) {
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, n);
    put(b, d, n);
}

/* ---- the builder ----------------------------------------------------------------------------------- */

typedef struct {
    char *key;
    size_t klen;
    buf feature; /* the serialized Feature message */
} entry;

struct tfc_example {
    entry *e;
    int n, cap;
};

tfc_example *tfc_example_new(tfc_status *st) {
    tfc_example *ex = tfc_calloc(1, sizeof *ex);
    if (!ex) tfc_status_oom(st, "tfc_example_new", sizeof *ex);
    return ex;
}

void tfc_example_free(tfc_example *ex) {
    if (!ex) return;
    for (int i = 0; i < ex->n; i++) tfc_free(ex->e[i].key), tfc_free(ex->e[i].feature.p);
    tfc_free(ex->e);
    tfc_free(ex);
}

int tfc_example_num_features(const tfc_example *ex) { return ex ? ex->n : 0; }

static int find(const tfc_example *ex, const char *key) {
    for (int i = 0; i < ex->n; i++)
        if (!strcmp(ex->e[i].key, key)) return i;
    return -1;
}

bool tfc_example_remove(tfc_example *ex, const char *key) {
    int i = ex && key ? find(ex, key) : -1;
    if (i < 0) return false;
    tfc_free(ex->e[i].key);
    tfc_free(ex->e[i].feature.p);
    memmove(&ex->e[i], &ex->e[i + 1], (size_t)(ex->n - i - 1) * sizeof *ex->e);
    ex->n--;
    return true;
}

/* Installs `feature` (taking its buffer) under key. */
static bool set_feature(tfc_example *ex, const char *key, buf feature, tfc_status *st) {
    if (feature.oom) {
        tfc_free(feature.p);
        return tfc_status_oom(st, "tfc_example", feature.cap * 2);
    }
    int i = find(ex, key);
    if (i >= 0) {
        tfc_free(ex->e[i].feature.p);
        ex->e[i].feature = feature;
        return true;
    }
    if (ex->n == ex->cap) {
        int cap = ex->cap ? ex->cap * 2 : 8;
        entry *e = tfc_realloc(ex->e, (size_t)cap * sizeof *e);
        if (!e) {
            tfc_free(feature.p);
            return tfc_status_oom(st, "tfc_example", (size_t)cap * sizeof *e);
        }
        ex->e = e;
        ex->cap = cap;
    }
    char *k = tfc_strdup(key);
    if (!k) {
        tfc_free(feature.p);
        return tfc_status_oom(st, "tfc_example", strlen(key) + 1);
    }
    ex->e[ex->n++] = (entry){k, strlen(key), feature};
    return true;
}

static bool check_args(const tfc_example *ex, const char *key, const void *values, int64_t n, tfc_status *st) {
    if (!ex || !key || n < 0 || (n > 0 && !values))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_example: NULL example, key or values, or a negative count");
    return true;
}

/* Feature { <field> (kind) = list }: the list message wrapped in the Feature's oneof field. */
static buf wrap(uint32_t field, buf list) {
    buf f = {0};
    put_len_field(&f, field, list.p, list.n);
    f.oom |= list.oom;
    tfc_free(list.p);
    return f;
}

bool tfc_example_set_floats(tfc_example *ex, const char *key, const float *values, int64_t n, tfc_status *st) {
    if (!check_args(ex, key, values, n, st)) return false;
    buf l = {0};
    if (n > 0) put_len_field(&l, 1, values, (size_t)n * 4); /* packed, little-endian */
    return set_feature(ex, key, wrap(2, l), st);
}

bool tfc_example_set_int64s(tfc_example *ex, const char *key, const int64_t *values, int64_t n, tfc_status *st) {
    if (!check_args(ex, key, values, n, st)) return false;
    buf l = {0};
    if (n > 0) {
        size_t len = 0;
        for (int64_t i = 0; i < n; i++) len += varint_len((uint64_t)values[i]);
        put_varint(&l, 1 << 3 | 2);
        put_varint(&l, len);
        for (int64_t i = 0; i < n; i++) put_varint(&l, (uint64_t)values[i]);
    }
    return set_feature(ex, key, wrap(3, l), st);
}

bool tfc_example_set_bytes(tfc_example *ex, const char *key, const char *const *values, const size_t *lens, int64_t n,
                           tfc_status *st) {
    if (!check_args(ex, key, values, n, st)) return false;
    buf l = {0};
    for (int64_t i = 0; i < n; i++) {
        if (!values[i] && (!lens || lens[i])) {
            tfc_free(l.p);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_example_set_bytes: value %lld is NULL", (long long)i);
        }
        put_len_field(&l, 1, values[i], lens ? lens[i] : strlen(values[i]));
    }
    return set_feature(ex, key, wrap(1, l), st);
}

bool tfc_example_set_empty(tfc_example *ex, const char *key, tfc_status *st) {
    if (!check_args(ex, key, NULL, 0, st)) return false;
    return set_feature(ex, key, (buf){0}, st);
}

char *tfc_example_serialize(const tfc_example *ex, size_t *len, tfc_status *st) {
    if (!ex || !len) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_example_serialize: NULL example or length");
        return NULL;
    }
    /* Features payload: the map entries {key = 1, value = 2} */
    size_t features = 0;
    for (int i = 0; i < ex->n; i++) {
        const entry *e = &ex->e[i];
        size_t el = 1 + varint_len(e->klen) + e->klen + 1 + varint_len(e->feature.n) + e->feature.n;
        features += 1 + varint_len(el) + el;
    }
    buf b = {0};
    if (!grow(&b, features + 16)) {
        tfc_status_oom(st, "tfc_example_serialize", features + 16);
        return NULL;
    }
    put_varint(&b, 1 << 3 | 2); /* Example.features */
    put_varint(&b, features);
    for (int i = 0; i < ex->n; i++) {
        const entry *e = &ex->e[i];
        size_t el = 1 + varint_len(e->klen) + e->klen + 1 + varint_len(e->feature.n) + e->feature.n;
        put_varint(&b, 1 << 3 | 2); /* Features.feature entry */
        put_varint(&b, el);
        put_len_field(&b, 1, e->key, e->klen);
        put_len_field(&b, 2, e->feature.p, e->feature.n);
    }
    *len = b.n;
    return (char *)b.p;
}

tfc_tensor *tfc_example_to_tensor(const tfc_example *ex, tfc_status *st) {
    size_t n;
    char *s = tfc_example_serialize(ex, &n, st);
    if (!s) return NULL;
    const char *p = s;
    tfc_tensor *t = tfc_tensor_from_strings(&p, &n, NULL, 0, st);
    tfc_free(s);
    return t;
}

/* ---- parse_example --------------------------------------------------------------------------------- */

static tfc_tensor *key_vector(const tfc_feature_spec *f, int n, tfc_feature_kind k1, tfc_feature_kind k2, int *count,
                              tfc_status *st) {
    const char *keys[64];
    int m = 0;
    for (int i = 0; i < n; i++)
        if (f[i].kind == k1 || f[i].kind == k2) keys[m++] = f[i].key;
    *count = m;
    return tfc_tensor_from_strings(keys, NULL, (const int64_t[]){m}, 1, st);
}

bool tfc_parse_example(tfc_ctx *ctx, const tfc_tensor *serialized, const tfc_tensor *names,
                       const tfc_feature_spec *features, int n, tfc_parsed_feature *out, tfc_status *st) {
    if (!serialized || (n > 0 && (!features || !out)) || n < 0 || n > 59)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ParseExampleV2: serialized, features and out are needed (n %d, at most 59)", n);
    for (int i = 0; i < n; i++) {
        const tfc_feature_spec *f = &features[i];
        if (!f->key || f->rank < 0 || f->rank > TFC_MAX_RANK - 1 || (unsigned)f->kind > TFC_RAGGED)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ParseExampleV2: feature %d has no key, a bad kind or rank %d", i,
                                  f->rank);
    }
    tfc_tensor *in[64] = {0}, *aux[64] = {0}, *res[3 * 64];
    int n_aux = 0, ns, nd, nr;
    bool ok = false;
    tfc_dtype stypes[64], rtypes[64], rsplits[64];
    tfc_shape shapes[64];
    const bool batch = tfc_tensor_rank(serialized) != 0;
    in[0] = (tfc_tensor *)serialized;
    if (!(in[1] = names ? (tfc_tensor *)names : (aux[n_aux++] = tfc_tensor_new(TFC_STRING, (const int64_t[]){0}, 1, st))))
        goto done;
    if (!(in[2] = aux[n_aux++] = key_vector(features, n, TFC_VAR_LEN, TFC_VAR_LEN, &ns, st))) goto done;
    if (!(in[3] = aux[n_aux++] = key_vector(features, n, TFC_FIXED_LEN, TFC_FIXED_LEN_SEQUENCE, &nd, st))) goto done;
    if (!(in[4] = aux[n_aux++] = key_vector(features, n, TFC_RAGGED, TFC_RAGGED, &nr, st))) goto done;
    int si = 0, di = 0, ri = 0;
    for (int i = 0; i < n; i++) {
        const tfc_feature_spec *f = &features[i];
        if (f->kind == TFC_VAR_LEN) stypes[si++] = f->dtype;
        if (f->kind == TFC_RAGGED) {
            rtypes[ri] = f->dtype;
            rsplits[ri++] = f->row_splits_dtype ? f->row_splits_dtype : TFC_INT64;
        }
        if (f->kind != TFC_FIXED_LEN && f->kind != TFC_FIXED_LEN_SEQUENCE) continue;
        tfc_shape *s = &shapes[di];
        s->rank = 0;
        if (f->kind == TFC_FIXED_LEN_SEQUENCE) s->dims[s->rank++] = -1;
        for (int d = 0; d < f->rank; d++) s->dims[s->rank++] = f->dims[d];
        tfc_tensor *def = (tfc_tensor *)f->default_value;
        if (!def && f->kind == TFC_FIXED_LEN) def = aux[n_aux++] = tfc_tensor_new(f->dtype, (const int64_t[]){0}, 1, st);
        else if (!def) def = aux[n_aux++] = tfc_tensor_new(f->dtype, NULL, 0, st); /* zero / "" padding */
        if (!def) goto done;
        in[5 + di++] = def;
    }
    tfc_attr a[5] = {
        TFC_ATTR_I("num_sparse", ns),
        {.name = "sparse_types", .kind = TFC_ATTR_LIST_TYPE, .n = ns, .v.types = stypes},
        {.name = "ragged_value_types", .kind = TFC_ATTR_LIST_TYPE, .n = nr, .v.types = rtypes},
        {.name = "ragged_split_types", .kind = TFC_ATTR_LIST_TYPE, .n = nr, .v.types = rsplits},
        TFC_ATTR_SHAPES("dense_shapes", shapes, nd),
    };
    const int n_out = 3 * ns + nd + 2 * nr;
    if (tfc_execute(ctx, "ParseExampleV2", in, 5 + nd, a, 5, res, n_out, st) != n_out) goto done;
    si = di = ri = 0;
    for (int i = 0; i < n; i++) {
        tfc_parsed_feature *o = &out[i];
        *o = (tfc_parsed_feature){0};
        switch (features[i].kind) {
        case TFC_VAR_LEN:
            o->indices = res[si];
            o->values = res[ns + si];
            o->dense_shape = res[2 * ns + si];
            si++;
            break;
        case TFC_RAGGED:
            o->values = res[3 * ns + nd + ri];
            if (batch) o->row_splits = res[3 * ns + nd + nr + ri];
            else tfc_tensor_unref(tfc_keep(ctx, res[3 * ns + nd + nr + ri])); /* empty for one example */
            ri++;
            break;
        default: o->values = res[3 * ns + di++]; break;
        }
    }
    ok = true;
done:
    for (int i = 0; i < n_aux; i++) tfc_tensor_unref(aux[i]);
    return ok;
}

bool tfc_parse_single_example(tfc_ctx *ctx, const tfc_tensor *serialized, const tfc_feature_spec *features, int n,
                              tfc_parsed_feature *out, tfc_status *st) {
    if (serialized && tfc_tensor_rank(serialized) != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ParseExampleV2: parse_single_example needs a scalar, got rank %d",
                              tfc_tensor_rank(serialized));
    return tfc_parse_example(ctx, serialized, NULL, features, n, out, st);
}
