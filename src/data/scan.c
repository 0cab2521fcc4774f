/* Stateful element-wise transformations and the counter source: counter, scan, reduce, take_while, unique and
 * rebatch (include/tfc/data_more.h). */
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "data/data_internal.h"
#include "tfc/data_more.h"

/* ---- counter ---------------------------------------------------------------------------------------------- */
typedef struct counter_params {
    int64_t start, step;
    tfc_dtype dtype;
} counter_params;

typedef struct counter_iter {
    data_iter base;
    int64_t next;
} counter_iter;

static bool counter_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    (void)end;
    counter_iter *it = (counter_iter *)it_;
    counter_params *p = it_->ds->p;
    out[0] = p->dtype == TFC_INT64 ? tfc_scalar_i64(it->next, st) : tfc_scalar(p->dtype, (double)it->next, st);
    if (!out[0]) return false;
    it->next = (int64_t)((uint64_t)it->next + (uint64_t)p->step); /* wraps as TensorFlow's int64 add */
    return true;
}

static const data_iter_vt counter_vt = {counter_next, NULL};

static data_iter *counter_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    counter_iter *it = data_iter_alloc(sizeof *it, &counter_vt, ds, ictx, st);
    if (it) it->next = ((counter_params *)ds->p)->start;
    return it ? &it->base : NULL;
}

static int64_t infinite_card(const tfc_dataset *ds) {
    (void)ds;
    return TFC_INFINITE_CARDINALITY;
}

static void counter_describe(const tfc_dataset *ds, data_strbuf *b) {
    counter_params *p = ds->p;
    data_strbuf_printf(b, "start=%lld, step=%lld, dtype=%s", (long long)p->start, (long long)p->step,
                       tfc_dtype_name(p->dtype));
}

static const data_kind counter_kind = {"CounterDataset", counter_make_iter, infinite_card, NULL, counter_describe};

tfc_dataset *tfc_dataset_counter(int64_t start, int64_t step, tfc_dtype dtype, tfc_status *st) {
    if (dtype == TFC_INVALID_DTYPE) dtype = TFC_INT64;
    if (!tfc_dtype_is_integer(dtype) && !tfc_dtype_is_floating(dtype)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "counter: dtype must be an integer or floating dtype, not %s",
                       tfc_dtype_name(dtype));
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&counter_kind, sizeof(counter_params), NULL, 0, st);
    if (!ds) return NULL;
    *(counter_params *)ds->p = (counter_params){start, step, dtype};
    tfc_tensor_spec s = {dtype, {0, {0}}};
    if (!data_spec_init(&ds->spec, ".", 1, &s, st)) return data_ds_fail(ds);
    tfc_status_clear(st);
    return ds;
}

/* ---- scan ----------------------------------------------------------------------------------------------------
 * The callback's outputs are (new state..., output...), checked against one combined spec. */
typedef struct scan_params {
    tfc_data_map_fn fn;
    void *user;
    void (*user_free)(void *);
    int n_state;
    tfc_tensor **init;        /* owned references */
    data_spec call_spec;      /* state specs then output specs */
} scan_params;

typedef struct scan_iter {
    data_iter base;
    data_iter *in;
    tfc_ctx *ctx;
    tfc_tensor **args;        /* state then input element */
    tfc_tensor **res;         /* new state then output */
} scan_iter;

static bool scan_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    scan_iter *it = (scan_iter *)it_;
    scan_params *p = it_->ds->p;
    int ns = p->n_state, n_in = it_->ds->inputs[0]->spec.n, n_out = it_->ds->spec.n;
    if (!it->ctx && !(it->ctx = data_ctx_new(it_->ictx, true, st))) return false;
    if (!data_iter_next(it->in, it->args + ns, end, st) || *end) return *end;
    bool ok = data_call_map(it->ctx, p->fn, p->user, it->args, ns + n_in, it->res, &p->call_spec, "scan", st);
    data_unref_n(it->args + ns, n_in);
    if (!ok) return false;
    data_unref_n(it->args, ns);
    memcpy(it->args, it->res, (size_t)ns * sizeof *it->args);
    memcpy(out, it->res + ns, (size_t)n_out * sizeof *out);
    return true;
}

static void scan_iter_free(data_iter *it_) {
    scan_iter *it = (scan_iter *)it_;
    scan_params *p = it_->ds->p;
    if (it->args) data_unref_n(it->args, p->n_state + it_->ds->inputs[0]->spec.n);
    tfc_free(it->args);
    tfc_free(it->res);
    data_ctx_free(it->ctx);
    data_iter_free(it->in);
}

static const data_iter_vt scan_vt = {scan_next, scan_iter_free};

static data_iter *scan_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    scan_params *p = ds->p;
    scan_iter *it = data_iter_alloc(sizeof *it, &scan_vt, ds, ictx, st);
    if (!it) return NULL;
    size_t na = (size_t)(p->n_state + ds->inputs[0]->spec.n), nr = (size_t)p->call_spec.n;
    it->args = tfc_calloc(na ? na : 1, sizeof *it->args);
    it->res = tfc_calloc(nr ? nr : 1, sizeof *it->res);
    if (!it->args || !it->res) {
        tfc_status_oom(st, "scan", na * sizeof *it->args);
        data_iter_free(&it->base);
        return NULL;
    }
    data_ref_n(p->init, it->args, p->n_state);
    if (!(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static void scan_free(tfc_dataset *ds) {
    scan_params *p = ds->p;
    if (p->init) data_unref_n(p->init, p->n_state);
    tfc_free(p->init);
    data_spec_free(&p->call_spec);
    if (p->user_free) p->user_free(p->user);
}

static void scan_describe(const tfc_dataset *ds, data_strbuf *b) {
    scan_params *p = ds->p;
    data_strbuf_printf(b, "f=%p, user=%p, n_state=%d", (void *)(uintptr_t)p->fn, p->user, p->n_state);
}

static const data_kind scan_kind = {"ScanDataset", scan_make_iter, data_card_input, scan_free, scan_describe};

/* Checks an initial state: n borrowed tensors with values. */
static bool check_state(tfc_tensor *const *init, int n, const char *what, tfc_status *st) {
    if (n < 1 || !init) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the initial state is empty", what);
    for (int i = 0; i < n; i++)
        if (!init[i] || tfc_tensor_is_symbolic(init[i]) || init[i]->dtype == TFC_RESOURCE)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: initial state component %d is not a tensor with a "
                                  "value", what, i);
    return true;
}

tfc_dataset *tfc_dataset_scan(tfc_dataset *in, tfc_tensor *const *initial_state, int n_state, tfc_data_map_fn fn,
                              void *user, const tfc_scan_opts *opts, tfc_status *st) {
    tfc_scan_opts o = opts ? *opts : (tfc_scan_opts){0};
    if (!data_check_input(in, st) || !fn || !check_state(initial_state, n_state, "scan", st)) {
        if (o.user_free) o.user_free(user);
        if (in && !fn) tfc_status_set(st, TFC_INVALID_ARGUMENT, "scan: NULL function");
        tfc_dataset_unref(in);
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&scan_kind, sizeof(scan_params), &in, 1, st);
    if (!ds) {
        if (o.user_free) o.user_free(user);
        return NULL;
    }
    scan_params *p = ds->p;
    p->fn = fn;
    p->user = user;
    p->user_free = o.user_free;
    p->n_state = n_state;
    if (!data_spec_init(&ds->spec, o.output_structure ? o.output_structure : ".", -1, o.output_spec, st))
        return data_ds_fail(ds);
    data_spec state;
    if (!data_spec_init(&state, o.state_structure, n_state, NULL, st)) return data_ds_fail(ds);
    data_spec_free(&state);
    int nc = n_state + ds->spec.n;
    if (!data_spec_init(&p->call_spec, NULL, nc, NULL, st)) return data_ds_fail(ds);
    for (int i = 0; i < n_state; i++) p->call_spec.comps[i] = data_spec_of(initial_state[i]);
    for (int i = 0; i < ds->spec.n; i++) p->call_spec.comps[n_state + i] = ds->spec.comps[i];
    if (!(p->init = tfc_calloc((size_t)n_state, sizeof *p->init))) {
        tfc_status_oom(st, "scan", (size_t)n_state * sizeof *p->init);
        return data_ds_fail(ds);
    }
    data_ref_n(initial_state, p->init, n_state);
    tfc_status_clear(st);
    return ds;
}

/* ---- reduce ------------------------------------------------------------------------------------------------- */
bool tfc_dataset_reduce(tfc_dataset *ds, tfc_tensor *const *initial_state, int n_state, tfc_data_map_fn fn,
                        void *user, tfc_tensor **out, tfc_status *st) {
    if (!ds) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "reduce: NULL dataset");
    if (!fn || !out) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "reduce: NULL function or output");
    if (!check_state(initial_state, n_state, "reduce", st)) return false;
    if (tfc_dataset_cardinality(ds) == TFC_INFINITE_CARDINALITY)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "reduce: the dataset is infinite");
    int n_in = ds->spec.n;
    data_spec sp;
    if (!data_spec_init(&sp, NULL, n_state, NULL, st)) return false;
    for (int i = 0; i < n_state; i++) sp.comps[i] = data_spec_of(initial_state[i]);
    tfc_tensor **args = tfc_calloc((size_t)(n_state + n_in), sizeof *args);
    tfc_tensor **res = tfc_calloc((size_t)n_state, sizeof *res);
    tfc_iterator *it = args && res ? tfc_iterator_new(ds, st) : NULL;
    data_ictx ictx = {.opts = ds->opts, .deterministic = true, .max_threads = 1};
    tfc_ctx *ctx = it ? data_ctx_new(&ictx, true, st) : NULL;
    bool ok = ctx != NULL;
    if (!args || !res) ok = tfc_status_oom(st, "reduce", (size_t)(n_state + n_in) * sizeof *args);
    if (ok) data_ref_n(initial_state, args, n_state);
    while (ok) {
        if (!tfc_iterator_next(it, args + n_state, n_in, st)) {
            if (st->code == TFC_OUT_OF_RANGE) tfc_status_clear(st);
            else ok = false;
            break;
        }
        ok = data_call_map(ctx, fn, user, args, n_state + n_in, res, &sp, "reduce", st);
        data_unref_n(args + n_state, n_in);
        if (!ok) break;
        data_unref_n(args, n_state);
        memcpy(args, res, (size_t)n_state * sizeof *args);
    }
    if (ok) memcpy(out, args, (size_t)n_state * sizeof *out);
    else if (args) data_unref_n(args, n_state);
    data_ctx_free(ctx);
    tfc_iterator_free(it);
    tfc_free(args);
    tfc_free(res);
    data_spec_free(&sp);
    return ok;
}

/* ---- take_while ---------------------------------------------------------------------------------------------- */
typedef struct pred_params {
    tfc_data_predicate_fn fn;
    void *user;
    void (*user_free)(void *);
} pred_params;

typedef struct take_while_iter {
    data_iter base;
    data_iter *in;
    tfc_ctx *ctx;
    bool done;
} take_while_iter;

static bool take_while_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    take_while_iter *it = (take_while_iter *)it_;
    pred_params *p = it_->ds->p;
    int n = it_->ds->spec.n;
    if (it->done) {
        *end = true;
        return true;
    }
    if (!it->ctx && !(it->ctx = data_ctx_new(it_->ictx, true, st))) return false;
    if (!data_iter_next(it->in, out, end, st) || *end) return *end;
    bool keep = false;
    if (!data_call_predicate(it->ctx, p->fn, p->user, out, n, &keep, st)) {
        data_unref_n(out, n);
        return false;
    }
    if (!keep) {
        data_unref_n(out, n);
        it->done = *end = true;
    }
    return true;
}

static void take_while_iter_free(data_iter *it_) {
    take_while_iter *it = (take_while_iter *)it_;
    data_ctx_free(it->ctx);
    data_iter_free(it->in);
}

static const data_iter_vt take_while_vt = {take_while_next, take_while_iter_free};

static data_iter *take_while_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    take_while_iter *it = data_iter_alloc(sizeof *it, &take_while_vt, ds, ictx, st);
    if (it && !(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return it ? &it->base : NULL;
}

static void pred_free(tfc_dataset *ds) {
    pred_params *p = ds->p;
    if (p->user_free) p->user_free(p->user);
}

static void pred_describe(const tfc_dataset *ds, data_strbuf *b) {
    pred_params *p = ds->p;
    data_strbuf_printf(b, "predicate=%p, user=%p", (void *)(uintptr_t)p->fn, p->user);
}

static const data_kind take_while_kind = {"TakeWhileDataset", take_while_make_iter, NULL, pred_free, pred_describe};

/* A unary node keeping the input's spec. */
static tfc_dataset *same_spec_new(const data_kind *k, size_t psize, tfc_dataset *in, tfc_status *st) {
    tfc_dataset *ds = data_ds_new(k, psize, &in, 1, st);
    if (ds && !data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    return ds;
}

tfc_dataset *tfc_dataset_take_while(tfc_dataset *in, tfc_data_predicate_fn fn, void *user,
                                    const tfc_filter_opts *opts, tfc_status *st) {
    void (*uf)(void *) = opts ? opts->user_free : NULL;
    if (!data_check_input(in, st) || !fn) {
        if (uf) uf(user);
        if (in) tfc_status_set(st, TFC_INVALID_ARGUMENT, "take_while: NULL predicate");
        tfc_dataset_unref(in);
        return NULL;
    }
    tfc_dataset *ds = same_spec_new(&take_while_kind, sizeof(pred_params), in, st);
    if (!ds) {
        if (uf) uf(user);
        return NULL;
    }
    *(pred_params *)ds->p = (pred_params){fn, user, uf};
    tfc_status_clear(st);
    return ds;
}

/* ---- unique ---------------------------------------------------------------------------------------------------
 * An open-addressing set of the values seen (int64 keys, or string bytes with their hash). */
typedef struct uslot {
    uint64_t hash;
    char *bytes;              /* strings: owned copy; numbers: NULL */
    size_t len;
    int64_t v;
    bool used;
} uslot;

typedef struct unique_iter {
    data_iter base;
    data_iter *in;
    uslot *slots;
    size_t cap, count;
} unique_iter;

static uint64_t hash_bytes(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)p[i]) * 1099511628211ull;
    return h;
}

static uint64_t hash_i64(int64_t v) {
    uint64_t x = (uint64_t)v + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static bool uslot_eq(const uslot *s, uint64_t h, const char *b, size_t len, int64_t v) {
    if (s->hash != h) return false;
    if (b) return s->len == len && memcmp(s->bytes, b, len) == 0;
    return s->v == v;
}

static bool unique_grow(unique_iter *it, tfc_status *st) {
    size_t cap = it->cap ? it->cap * 2 : 64;
    uslot *s = tfc_calloc(cap, sizeof *s);
    if (!s) return tfc_status_oom(st, "unique", cap * sizeof *s);
    for (size_t i = 0; i < it->cap; i++) {
        if (!it->slots[i].used) continue;
        size_t k = it->slots[i].hash & (cap - 1);
        while (s[k].used) k = (k + 1) & (cap - 1);
        s[k] = it->slots[i];
    }
    tfc_free(it->slots);
    it->slots = s;
    it->cap = cap;
    return true;
}

/* Inserts the value; *fresh tells whether it was new. */
static bool unique_insert(unique_iter *it, const char *b, size_t len, int64_t v, bool *fresh, tfc_status *st) {
    if ((it->count + 1) * 2 > it->cap && !unique_grow(it, st)) return false;
    uint64_t h = b ? hash_bytes(b, len) : hash_i64(v);
    size_t k = h & (it->cap - 1);
    for (; it->slots[k].used; k = (k + 1) & (it->cap - 1))
        if (uslot_eq(&it->slots[k], h, b, len, v)) {
            *fresh = false;
            return true;
        }
    uslot *s = &it->slots[k];
    if (b) {
        if (!(s->bytes = tfc_malloc(len ? len : 1))) return tfc_status_oom(st, "unique", len);
        memcpy(s->bytes, b, len);
    }
    s->hash = h;
    s->len = len;
    s->v = v;
    s->used = true;
    it->count++;
    *fresh = true;
    return true;
}

static bool unique_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    unique_iter *it = (unique_iter *)it_;
    for (;;) {
        if (!data_iter_next(it->in, out, end, st) || *end) return *end;
        tfc_tensor *t = out[0];
        if (t->shape.rank != 0) {
            char sh[TFC_SHAPE_STR];
            tfc_tensor_unref(out[0]);
            out[0] = NULL;
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "unique: elements must be scalars, got shape %s",
                                  tfc_shape_str(&t->shape, sh, sizeof sh));
        }
        bool fresh = false, ok;
        if (t->dtype == TFC_STRING) {
            size_t len = 0;
            const char *b = tfc_tensor_string(t, 0, &len);
            ok = unique_insert(it, b ? b : "", b ? len : 0, 0, &fresh, st);
        } else {
            const void *d = tfc_tensor_data(t); /* exact for all of int64 (a double is not) */
            int64_t v = t->dtype == TFC_INT64 ? *(const int64_t *)d : (int64_t) * (const int32_t *)d;
            ok = unique_insert(it, NULL, 0, v, &fresh, st);
        }
        if (ok && fresh) return true;
        tfc_tensor_unref(out[0]);
        out[0] = NULL;
        if (!ok) return false;
    }
}

static void unique_iter_free(data_iter *it_) {
    unique_iter *it = (unique_iter *)it_;
    for (size_t i = 0; i < it->cap; i++) tfc_free(it->slots[i].bytes);
    tfc_free(it->slots);
    data_iter_free(it->in);
}

static const data_iter_vt unique_vt = {unique_next, unique_iter_free};

static data_iter *unique_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    unique_iter *it = data_iter_alloc(sizeof *it, &unique_vt, ds, ictx, st);
    if (it && !(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return it ? &it->base : NULL;
}

static const data_kind unique_kind = {"UniqueDataset", unique_make_iter, NULL, NULL, NULL};

tfc_dataset *tfc_dataset_unique(tfc_dataset *in, tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    tfc_dtype dt = in->spec.n == 1 ? in->spec.comps[0].dtype : TFC_INVALID_DTYPE;
    const tfc_shape *sh = in->spec.n == 1 ? &in->spec.comps[0].shape : NULL;
    if (in->spec.n != 1 || (dt != TFC_INT32 && dt != TFC_INT64 && dt != TFC_STRING) || (sh->rank > 0)) {
        char spec[512];
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "unique: Dataset.unique() only supports datasets with a single tf.int32, tf.int64 or "
                       "tf.string scalar component, got %s",
                       tfc_dataset_element_spec_str(in, spec, sizeof spec));
        tfc_dataset_unref(in);
        return NULL;
    }
    tfc_dataset *ds = same_spec_new(&unique_kind, 0, in, st);
    if (ds) tfc_status_clear(st);
    return ds;
}

/* ---- rebatch ---------------------------------------------------------------------------------------------------
 * Rows of the input batches are queued (as one-row slices of each component) and stacked when a batch is full.
 * Memory: one output batch plus one input batch. */
typedef struct rebatch_params {
    int64_t *sizes;
    int n_sizes;
    bool drop_remainder;
} rebatch_params;

typedef struct rebatch_iter {
    data_iter base;
    data_iter *in;
    tfc_tensor **cur;         /* the current input batch (n components), or NULLs */
    int64_t cur_rows, cur_pos;
    tfc_tensor **rows;        /* queued rows, row-major: rows[k * n + c] */
    int64_t n_rows, cap_rows;
    int next_size;            /* index into sizes */
    bool in_end;
} rebatch_iter;

static bool rebatch_pull(rebatch_iter *it, tfc_status *st) {
    int n = it->base.ds->spec.n;
    data_unref_n(it->cur, n);
    bool end = false;
    if (!data_iter_next(it->in, it->cur, &end, st)) return false;
    if (end) {
        it->in_end = true;
        return true;
    }
    int64_t rows = -1;
    for (int c = 0; c < n; c++) {
        const tfc_shape *sh = &it->cur[c]->shape;
        if (sh->rank < 1 || (rows >= 0 && sh->dims[0] != rows)) {
            data_unref_n(it->cur, n);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "rebatch: component %d of an input batch has %s (batches need rank >= 1 and one "
                                  "dim 0)",
                                  c, sh->rank < 1 ? "rank 0" : "another dim 0");
        }
        rows = sh->dims[0];
    }
    it->cur_rows = rows;
    it->cur_pos = 0;
    return true;
}

static bool rebatch_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    rebatch_iter *it = (rebatch_iter *)it_;
    rebatch_params *p = it_->ds->p;
    int n = it_->ds->spec.n;
    int64_t want = p->sizes[it->next_size];
    while (it->n_rows < want) {
        if (it->cur_pos >= it->cur_rows) {
            if (it->in_end) break;
            it->cur_rows = it->cur_pos = 0;
            if (!rebatch_pull(it, st)) return false;
            continue;
        }
        if (it->n_rows == it->cap_rows) {
            int64_t cap = it->cap_rows ? it->cap_rows * 2 : 16;
            int64_t bytes = 0;
            if (!tfc_size_mul(cap, (int64_t)n * (int64_t)sizeof *it->rows, &bytes))
                return tfc_status_oom(st, "rebatch", 0);
            tfc_tensor **r = tfc_realloc(it->rows, bytes ? (size_t)bytes : 1);
            if (!r) return tfc_status_oom(st, "rebatch", (size_t)bytes);
            it->rows = r;
            it->cap_rows = cap;
        }
        for (int c = 0; c < n; c++) {
            tfc_tensor *row = data_slice_row(it->cur[c], it->cur_pos, st);
            if (!row) {
                data_unref_n(it->rows + it->n_rows * n, c);
                return false;
            }
            it->rows[it->n_rows * n + c] = row;
        }
        it->n_rows++;
        it->cur_pos++;
    }
    if (it->n_rows == 0 || (it->n_rows < want && p->drop_remainder)) {
        data_unref_n(it->rows, (int)(it->n_rows * n));
        it->n_rows = 0;
        *end = true;
        return true;
    }
    int64_t k = it->n_rows;
    for (int c = 0; c < n; c++)
        if (!(out[c] = data_stack(it->rows, k, n, c, st))) {
            data_unref_n(out, c);
            return false;
        }
    data_unref_n(it->rows, (int)(k * n));
    it->n_rows = 0;
    it->next_size = (it->next_size + 1) % p->n_sizes;
    return true;
}

static void rebatch_iter_free(data_iter *it_) {
    rebatch_iter *it = (rebatch_iter *)it_;
    int n = it_->ds->spec.n;
    if (it->cur) data_unref_n(it->cur, n);
    if (it->rows) data_unref_n(it->rows, (int)(it->n_rows * n));
    tfc_free(it->cur);
    tfc_free(it->rows);
    data_iter_free(it->in);
}

static const data_iter_vt rebatch_vt = {rebatch_next, rebatch_iter_free};

static data_iter *rebatch_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    rebatch_iter *it = data_iter_alloc(sizeof *it, &rebatch_vt, ds, ictx, st);
    if (!it) return NULL;
    if (!(it->cur = tfc_calloc((size_t)ds->spec.n, sizeof *it->cur))) {
        tfc_status_oom(st, "rebatch", 0);
        data_iter_free(&it->base);
        return NULL;
    }
    if (!(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static void rebatch_free(tfc_dataset *ds) { tfc_free(((rebatch_params *)ds->p)->sizes); }

static void rebatch_describe(const tfc_dataset *ds, data_strbuf *b) {
    rebatch_params *p = ds->p;
    data_strbuf_printf(b, "batch_sizes=[");
    for (int i = 0; i < p->n_sizes; i++) data_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)p->sizes[i]);
    data_strbuf_printf(b, "], drop_remainder=%s", p->drop_remainder ? "true" : "false");
}

static const data_kind rebatch_kind = {"RebatchDatasetV2", rebatch_make_iter, NULL, rebatch_free, rebatch_describe};

tfc_dataset *tfc_dataset_rebatch(tfc_dataset *in, const int64_t *batch_sizes, int n_sizes, bool drop_remainder,
                                 tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    bool ok = n_sizes >= 1 && batch_sizes;
    for (int i = 0; ok && i < n_sizes; i++) ok = batch_sizes[i] >= 1;
    if (!ok) {
        tfc_dataset_unref(in);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "rebatch: batch_sizes must be %s (%d sizes given)",
                       "positive", n_sizes);
        return NULL;
    }
    for (int c = 0; c < in->spec.n; c++)
        if (in->spec.comps[c].shape.rank == 0) {
            tfc_dataset_unref(in);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "rebatch: component %d is a scalar, not a batch", c);
            return NULL;
        }
    tfc_dataset *ds = same_spec_new(&rebatch_kind, sizeof(rebatch_params), in, st);
    if (!ds) return NULL;
    rebatch_params *p = ds->p;
    if (!(p->sizes = tfc_malloc((size_t)n_sizes * sizeof *p->sizes))) {
        tfc_status_oom(st, "rebatch", 0);
        return data_ds_fail(ds);
    }
    memcpy(p->sizes, batch_sizes, (size_t)n_sizes * sizeof *p->sizes);
    p->n_sizes = n_sizes;
    p->drop_remainder = drop_remainder;
    /* dim 0: known only with drop_remainder and one size for all batches */
    bool same = true;
    for (int i = 1; i < n_sizes; i++) same = same && batch_sizes[i] == batch_sizes[0];
    for (int c = 0; c < ds->spec.n; c++)
        if (ds->spec.comps[c].shape.rank > 0)
            ds->spec.comps[c].shape.dims[0] = same && drop_remainder ? batch_sizes[0] : -1;
    tfc_status_clear(st);
    return ds;
}
