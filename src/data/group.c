/* Grouping and combining: group_by_window (with the window datasets it hands to reduce_func),
 * bucket_by_sequence_length on top of it, choose_from_datasets and sample_from_datasets
 * (include/tfc/data_more.h). */
#include <string.h>

#include "core/philox.h"
#include "core/size_check.h"
#include "data/data_internal.h"
#include "tfc/data_more.h"

/* ---- window datasets: a finite list of elements held in memory ------------------------------------------------ */
typedef struct list_params {
    tfc_tensor **elems;       /* count * n owned references, row-major */
    int64_t count;
} list_params;

typedef struct list_iter {
    data_iter base;
    int64_t i;
} list_iter;

static bool list_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    (void)st;
    list_iter *it = (list_iter *)it_;
    list_params *p = it_->ds->p;
    int n = it_->ds->spec.n;
    if (it->i >= p->count) {
        *end = true;
        return true;
    }
    data_ref_n(p->elems + it->i * n, out, n);
    it->i++;
    return true;
}

static const data_iter_vt list_vt = {list_next, NULL};

static data_iter *list_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return data_iter_alloc(sizeof(list_iter), &list_vt, ds, ictx, st);
}

static int64_t list_card(const tfc_dataset *ds) { return ((list_params *)ds->p)->count; }

static void list_free(tfc_dataset *ds) {
    list_params *p = ds->p;
    if (p->elems) data_unref_n(p->elems, (int)(p->count * ds->spec.n));
    tfc_free(p->elems);
}

static const data_kind window_kind = {"WindowDataset", list_make_iter, list_card, list_free, NULL};

/* A dataset of count elements of spec sp; takes elems (count * sp->n references and the array), also on failure. */
static tfc_dataset *window_new(const data_spec *sp, tfc_tensor **elems, int64_t count, tfc_status *st) {
    tfc_dataset *ds = data_ds_new(&window_kind, sizeof(list_params), NULL, 0, st);
    if (!ds || !data_spec_copy(&ds->spec, sp, st)) {
        data_unref_n(elems, (int)(count * sp->n));
        tfc_free(elems);
        return ds ? data_ds_fail(ds) : NULL;
    }
    list_params *p = ds->p;
    p->elems = elems;
    p->count = count;
    return ds;
}

/* ---- group_by_window ------------------------------------------------------------------------------------------ */
typedef int64_t (*window_size_fn)(void *user, int64_t key);

typedef struct gbw_params {
    tfc_data_map_fn key_fn;
    tfc_data_window_fn reduce_fn;
    void *user;
    void (*user_free)(void *);
    int64_t window_size;      /* used when size_fn is NULL */
    window_size_fn size_fn;   /* internal callers: the window size of a key */
} gbw_params;

typedef struct group {
    int64_t key;
    tfc_tensor **elems;       /* row-major, n per element */
    int64_t count, cap;
} group;

typedef struct gbw_iter {
    data_iter base;
    data_iter *in;
    tfc_ctx *ctx;
    group *groups;            /* sorted by key */
    int n_groups, cap_groups;
    data_iter *cur;           /* iterator of the current reduce_func dataset */
    tfc_dataset *cur_ds;
    data_spec key_spec;
    bool in_end;
} gbw_iter;

static int64_t gbw_size(const gbw_params *p, int64_t key) { return p->size_fn ? p->size_fn(p->user, key) : p->window_size; }

/* Index of key's group, inserted (sorted) when missing; -1 on OOM. */
static int gbw_group(gbw_iter *it, int64_t key, tfc_status *st) {
    int lo = 0, hi = it->n_groups;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (it->groups[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    if (lo < it->n_groups && it->groups[lo].key == key) return lo;
    if (it->n_groups == it->cap_groups) {
        int cap = it->cap_groups ? it->cap_groups * 2 : 8;
        group *g = tfc_realloc(it->groups, (size_t)cap * sizeof *g);
        if (!g) {
            tfc_status_oom(st, "group_by_window", (size_t)cap * sizeof *g);
            return -1;
        }
        it->groups = g;
        it->cap_groups = cap;
    }
    memmove(it->groups + lo + 1, it->groups + lo, (size_t)(it->n_groups - lo) * sizeof *it->groups);
    it->groups[lo] = (group){key, NULL, 0, 0};
    it->n_groups++;
    return lo;
}

/* Hands group gi to reduce_func and removes it; the returned dataset's iterator becomes it->cur. */
static bool gbw_flush(gbw_iter *it, int gi, tfc_status *st) {
    gbw_params *p = it->base.ds->p;
    group g = it->groups[gi];
    memmove(it->groups + gi, it->groups + gi + 1, (size_t)(it->n_groups - gi - 1) * sizeof *it->groups);
    it->n_groups--;
    tfc_dataset *win = window_new(&it->base.ds->inputs[0]->spec, g.elems, g.count, st);
    if (!win) return false;
    tfc_tensor *key = tfc_scalar_i64(g.key, st);
    tfc_dataset *out = NULL;
    if (key) {
        if (!tfc_scope_begin(it->ctx, st)) {
            tfc_tensor_unref(key);
            tfc_dataset_unref(win);
            return false;
        }
        tfc_status_clear(st);
        out = p->reduce_fn(it->ctx, p->user, key, win, st);
        tfc_scope_end(it->ctx);
        if (!out) data_fix_callback_status(st, "group_by_window reduce_func");
    }
    tfc_tensor_unref(key);
    tfc_dataset_unref(win);
    if (!out) return false;
    if (strcmp(out->spec.structure, it->base.ds->spec.structure) != 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "group_by_window: reduce_func returned a dataset of elements \"%s\", expected \"%s\"",
                       out->spec.structure, it->base.ds->spec.structure);
        tfc_dataset_unref(out);
        return false;
    }
    tfc_status_clear(st);
    if (!(it->cur = data_iter_make(out, it->base.ictx, st))) {
        tfc_dataset_unref(out);
        return false;
    }
    it->cur_ds = out;
    return true;
}

static void gbw_drop_cur(gbw_iter *it) {
    data_iter_free(it->cur);
    tfc_dataset_unref(it->cur_ds);
    it->cur = NULL;
    it->cur_ds = NULL;
}

/* Reads one input element into its group; flushes the group when full. */
static bool gbw_pull(gbw_iter *it, tfc_status *st) {
    tfc_dataset *ds = it->base.ds;
    gbw_params *p = ds->p;
    int n = ds->inputs[0]->spec.n;
    tfc_tensor *elem[TFC_DATA_MAX_COMPONENTS];
    bool end = false;
    if (!data_iter_next(it->in, elem, &end, st)) return false;
    if (end) {
        it->in_end = true;
        return true;
    }
    tfc_tensor *key = NULL;
    if (!data_call_map(it->ctx, p->key_fn, p->user, elem, n, &key, &it->key_spec, "group_by_window key_func", st)) {
        data_unref_n(elem, n);
        return false;
    }
    int64_t k = *(const int64_t *)tfc_tensor_data(key);
    tfc_tensor_unref(key);
    int gi = gbw_group(it, k, st);
    group *g = gi >= 0 ? &it->groups[gi] : NULL;
    if (g && g->count == g->cap) {
        int64_t cap = g->cap ? g->cap * 2 : 8;
        int64_t bytes = 0;
        tfc_tensor **e = tfc_size_mul(cap, (int64_t)n * (int64_t)sizeof *e, &bytes)
                             ? tfc_realloc(g->elems, (size_t)bytes) : NULL;
        if (!e) g = NULL, tfc_status_oom(st, "group_by_window", (size_t)bytes);
        else g->elems = e, g->cap = cap;
    }
    if (!g) {
        data_unref_n(elem, n);
        return false;
    }
    memcpy(g->elems + g->count * n, elem, (size_t)n * sizeof *elem);
    g->count++;
    int64_t size = gbw_size(p, k);
    if (size < 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "group_by_window: window size %lld for key %lld "
                                         "must be positive", (long long)size, (long long)k);
    return g->count >= size ? gbw_flush(it, gi, st) : true;
}

static bool gbw_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    gbw_iter *it = (gbw_iter *)it_;
    if (!it->ctx && !(it->ctx = data_ctx_new(it_->ictx, true, st))) return false;
    for (;;) {
        if (it->cur) {
            bool e = false;
            if (!data_iter_next(it->cur, out, &e, st)) return false;
            if (!e) return true;
            gbw_drop_cur(it);
        }
        if (!it->in_end) {
            if (!gbw_pull(it, st)) return false;
            continue;
        }
        if (it->n_groups == 0) {
            *end = true;
            return true;
        }
        if (!gbw_flush(it, 0, st)) return false;
    }
}

static void gbw_iter_free(data_iter *it_) {
    gbw_iter *it = (gbw_iter *)it_;
    int n = it_->ds->inputs[0]->spec.n;
    gbw_drop_cur(it);
    for (int i = 0; i < it->n_groups; i++) {
        data_unref_n(it->groups[i].elems, (int)(it->groups[i].count * n));
        tfc_free(it->groups[i].elems);
    }
    tfc_free(it->groups);
    data_spec_free(&it->key_spec);
    data_ctx_free(it->ctx);
    data_iter_free(it->in);
}

static const data_iter_vt gbw_vt = {gbw_next, gbw_iter_free};

static data_iter *gbw_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    gbw_iter *it = data_iter_alloc(sizeof *it, &gbw_vt, ds, ictx, st);
    if (!it) return NULL;
    tfc_tensor_spec ks = {TFC_INT64, {0, {0}}};
    if (!data_spec_init(&it->key_spec, ".", 1, &ks, st) || !(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

static void gbw_free(tfc_dataset *ds) {
    gbw_params *p = ds->p;
    if (p->user_free) p->user_free(p->user);
}

static void gbw_describe(const tfc_dataset *ds, data_strbuf *b) {
    gbw_params *p = ds->p;
    data_strbuf_printf(b, "key_func=%p, reduce_func=%p, user=%p, window_size=%lld", (void *)(uintptr_t)p->key_fn,
                       (void *)(uintptr_t)p->reduce_fn, p->user, (long long)p->window_size);
}

static const data_kind gbw_kind = {"GroupByWindowDataset", gbw_make_iter, NULL, gbw_free, gbw_describe};

static tfc_dataset *gbw_new(tfc_dataset *in, const gbw_params *prm, const char *structure,
                            const tfc_tensor_spec *spec, tfc_status *st) {
    if (!data_check_input(in, st) || !prm->key_fn || !prm->reduce_fn || (!prm->size_fn && prm->window_size < 1)) {
        if (in) tfc_status_set(st, TFC_INVALID_ARGUMENT, "group_by_window: %s",
                               prm->key_fn && prm->reduce_fn ? "window_size must be greater than zero."
                                                             : "NULL key_func or reduce_func");
        if (prm->user_free) prm->user_free(prm->user);
        tfc_dataset_unref(in);
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&gbw_kind, sizeof(gbw_params), &in, 1, st);
    if (!ds) {
        if (prm->user_free) prm->user_free(prm->user);
        return NULL;
    }
    *(gbw_params *)ds->p = *prm;
    bool ok = structure || spec ? data_spec_init(&ds->spec, structure ? structure : in->spec.structure, -1, spec, st)
                                : data_spec_init(&ds->spec, in->spec.structure, in->spec.n, NULL, st);
    if (!ok) return data_ds_fail(ds);
    tfc_status_clear(st);
    return ds;
}

tfc_dataset *tfc_dataset_group_by_window(tfc_dataset *in, tfc_data_map_fn key_fn, tfc_data_window_fn reduce_fn,
                                         void *user, int64_t window_size, const tfc_group_by_window_opts *opts,
                                         tfc_status *st) {
    tfc_group_by_window_opts o = opts ? *opts : (tfc_group_by_window_opts){0};
    if (o.window_size_fn && window_size) {
        if (o.user_free) o.user_free(user);
        tfc_dataset_unref(in);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "group_by_window: Either the `window_size` argument or the "
                       "`window_size_func` argument must be specified (got both)");
        return NULL;
    }
    gbw_params p = {key_fn, reduce_fn, user, o.user_free, window_size, o.window_size_fn};
    return gbw_new(in, &p, o.output_structure, o.output_spec, st);
}

/* ---- bucket_by_sequence_length -------------------------------------------------------------------------------
 * group_by_window with key = bucket index, window size = the bucket's batch size and reduce = (padded) batch. */
typedef struct bucket_state {
    tfc_data_length_fn length_fn;
    void *user;
    void (*user_free)(void *);
    int64_t *bounds;          /* nb */
    int64_t *sizes;           /* nb + 1 */
    int nb, n;                /* boundaries, components */
    tfc_shape *padded;        /* n, or NULL */
    tfc_tensor **values;      /* n owned references (entries may be NULL), or NULL */
    bool to_boundary, no_padding, drop_remainder;
} bucket_state;

static void bucket_state_free(void *u) {
    bucket_state *b = u;
    if (!b) return;
    if (b->user_free) b->user_free(b->user);
    if (b->values)
        for (int i = 0; i < b->n; i++) tfc_tensor_unref(b->values[i]);
    tfc_free(b->values);
    tfc_free(b->padded);
    tfc_free(b->bounds);
    tfc_free(b->sizes);
    tfc_free(b);
}

static bool bucket_key(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       tfc_status *st) {
    (void)n_out;
    bucket_state *b = user;
    int64_t len = 0;
    tfc_status_clear(st);
    if (!b->length_fn(ctx, b->user, in, n_in, &len, st)) {
        data_fix_callback_status(st, "bucket_by_sequence_length element_length_func");
        return false;
    }
    int64_t id = 0;
    while (id < b->nb && len >= b->bounds[id]) id++;
    return (out[0] = tfc_scalar_i64(id, st)) != NULL;
}

static int64_t bucket_size(void *user, int64_t key) {
    bucket_state *b = user;
    return key >= 0 && key <= b->nb ? b->sizes[key] : 0;
}

static tfc_dataset *bucket_reduce(tfc_ctx *ctx, void *user, tfc_tensor *key, tfc_dataset *window, tfc_status *st) {
    (void)ctx;
    bucket_state *b = user;
    int64_t id = *(const int64_t *)tfc_tensor_data(key);
    int64_t bs = b->sizes[id];
    tfc_dataset *w = tfc_dataset_ref(window);
    if (b->no_padding) return tfc_dataset_batch(w, bs, &(tfc_batch_opts){.drop_remainder = b->drop_remainder}, st);
    tfc_shape *shapes = tfc_malloc((size_t)b->n * sizeof *shapes);
    if (!shapes) {
        tfc_dataset_unref(w);
        tfc_status_oom(st, "bucket_by_sequence_length", (size_t)b->n * sizeof *shapes);
        return NULL;
    }
    for (int c = 0; c < b->n; c++) {
        shapes[c] = b->padded ? b->padded[c] : window->spec.comps[c].shape;
        if (!b->to_boundary) continue;
        if (id >= b->nb) {
            tfc_free(shapes);
            tfc_dataset_unref(w);
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "bucket_by_sequence_length: When pad_to_bucket_boundary=True, elements must have length "
                           "< max(bucket_boundaries).");
            return NULL;
        }
        for (int d = 0; d < shapes[c].rank; d++)
            if (shapes[c].dims[d] < 0) shapes[c].dims[d] = b->bounds[id] - 1;
    }
    tfc_padded_batch_opts po = {shapes, b->values, b->drop_remainder};
    tfc_dataset *out = tfc_dataset_padded_batch(w, bs, &po, st);
    tfc_free(shapes);
    return out;
}

tfc_dataset *tfc_dataset_bucket_by_sequence_length(tfc_dataset *in, tfc_data_length_fn length_fn, void *user,
                                                   const int64_t *bucket_boundaries, int n_boundaries,
                                                   const int64_t *bucket_batch_sizes, const tfc_bucket_opts *opts,
                                                   tfc_status *st) {
    tfc_bucket_opts o = opts ? *opts : (tfc_bucket_opts){0};
    bucket_state *b = tfc_calloc(1, sizeof *b);
    if (!b) {
        if (o.user_free) o.user_free(user);
        tfc_dataset_unref(in);
        tfc_status_oom(st, "bucket_by_sequence_length", sizeof *b);
        return NULL;
    }
    b->user = user;
    b->user_free = o.user_free;
    b->length_fn = length_fn;
    b->to_boundary = o.pad_to_bucket_boundary;
    b->no_padding = o.no_padding;
    b->drop_remainder = o.drop_remainder;
    const char *err = NULL;
    if (!data_check_input(in, st)) goto fail;
    b->n = in->spec.n;
    if (!length_fn) err = "NULL element_length_func";
    else if (n_boundaries < 0 || (n_boundaries && !bucket_boundaries) || !bucket_batch_sizes)
        err = "len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1";
    for (int i = 0; !err && i < n_boundaries; i++)
        if (i && bucket_boundaries[i] <= bucket_boundaries[i - 1]) err = "bucket_boundaries must be increasing";
        else if (bucket_boundaries[i] < 0) err = "bucket_boundaries must be non-negative";
    for (int i = 0; !err && i <= n_boundaries; i++)
        if (bucket_batch_sizes[i] < 1) err = "bucket_batch_sizes must be positive";
    if (err) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "bucket_by_sequence_length: %s", err);
        goto fail;
    }
    b->nb = n_boundaries;
    b->bounds = tfc_malloc((size_t)(n_boundaries ? n_boundaries : 1) * sizeof *b->bounds);
    b->sizes = tfc_malloc((size_t)(n_boundaries + 1) * sizeof *b->sizes);
    if (o.padded_shapes) b->padded = tfc_malloc((size_t)b->n * sizeof *b->padded);
    if (o.padding_values) b->values = tfc_calloc((size_t)b->n, sizeof *b->values);
    if (!b->bounds || !b->sizes || (o.padded_shapes && !b->padded) || (o.padding_values && !b->values)) {
        tfc_status_oom(st, "bucket_by_sequence_length", 0);
        goto fail;
    }
    if (n_boundaries) memcpy(b->bounds, bucket_boundaries, (size_t)n_boundaries * sizeof *b->bounds);
    memcpy(b->sizes, bucket_batch_sizes, (size_t)(n_boundaries + 1) * sizeof *b->sizes);
    if (b->padded) memcpy(b->padded, o.padded_shapes, (size_t)b->n * sizeof *b->padded);
    for (int i = 0; b->values && i < b->n; i++) b->values[i] = tfc_tensor_ref(o.padding_values[i]);
    /* the element spec: what (padded_)batch makes of the input, with an unknown batch dim (and, padding to the
     * boundary, unknown padded dims, as TensorFlow whose filler is a tensor) */
    tfc_dataset *probe = b->no_padding ? tfc_dataset_batch(tfc_dataset_ref(in), 1, NULL, st)
                                       : tfc_dataset_padded_batch(tfc_dataset_ref(in), 1,
                                                                  &(tfc_padded_batch_opts){b->padded, b->values, false},
                                                                  st);
    if (!probe) goto fail;
    tfc_tensor_spec spec[TFC_DATA_MAX_COMPONENTS];
    for (int c = 0; c < b->n; c++) {
        spec[c] = probe->spec.comps[c];
        if (spec[c].shape.rank > 0) spec[c].shape.dims[0] = -1;
    }
    char *structure = tfc_strdup(probe->spec.structure);
    tfc_dataset_unref(probe);
    if (!structure) {
        tfc_status_oom(st, "bucket_by_sequence_length", 0);
        goto fail;
    }
    gbw_params p = {bucket_key, bucket_reduce, b, bucket_state_free, 0, bucket_size};
    tfc_dataset *ds = gbw_new(in, &p, structure, spec, st);
    tfc_free(structure);
    return ds;
fail:
    bucket_state_free(b);
    tfc_dataset_unref(in);
    return NULL;
}

/* ---- choose_from_datasets / sample_from_datasets (DirectedInterleaveDataset) ----------------------------------- */
typedef struct directed_params {
    int n;                    /* data inputs: inputs[0..n); choose: inputs[n] is the selector */
    bool choose, stop_on_empty;
    double *weights;          /* sample: n, normalised */
    int64_t seed;
    bool has_seed;
} directed_params;

typedef struct directed_iter {
    data_iter base;
    data_iter **ins;          /* n + choose */
    bool *done;
    int n_done;
    tfc_philox rng;
    uint32_t words[4];
    int word;
} directed_iter;

static double directed_uniform(directed_iter *it) {
    if (it->word == 0) tfc_philox_next(&it->rng, it->words);
    uint32_t w = it->words[it->word];
    it->word = (it->word + 1) & 3;
    return (double)w / 4294967296.0;
}

/* Next input index: from the selector, or drawn by weight among the inputs not exhausted. -1 = end. */
static bool directed_pick(directed_iter *it, int *pick, tfc_status *st) {
    directed_params *p = it->base.ds->p;
    if (p->choose) {
        tfc_tensor *c = NULL;
        bool end = false;
        if (!data_iter_next(it->ins[p->n], &c, &end, st)) return false;
        if (end) {
            *pick = -1;
            return true;
        }
        int64_t v = c->shape.rank == 0 && c->dtype == TFC_INT64 ? *(const int64_t *)tfc_tensor_data(c) : -1;
        tfc_tensor_unref(c);
        if (v < 0 || v >= p->n)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "choose_from_datasets: Selector index out of range: %lld "
                                  "(%d datasets)", (long long)v, p->n);
        *pick = (int)v;
        return true;
    }
    double total = 0;
    for (int i = 0; i < p->n; i++) total += it->done[i] ? 0 : p->weights[i];
    if (total <= 0) {
        *pick = -1;
        return true;
    }
    double u = directed_uniform(it) * total, acc = 0;
    int last = -1;
    for (int i = 0; i < p->n; i++) {
        if (it->done[i] || p->weights[i] <= 0) continue;
        last = i;
        acc += p->weights[i];
        if (u < acc) break;
    }
    *pick = last;
    return true;
}

static bool directed_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    directed_iter *it = (directed_iter *)it_;
    directed_params *p = it_->ds->p;
    for (;;) {
        if (it->n_done == p->n) {
            *end = true;
            return true;
        }
        int pick = -1;
        if (!directed_pick(it, &pick, st)) return false;
        if (pick < 0) {
            *end = true;
            return true;
        }
        if (it->done[pick]) continue; /* choose: an exhausted input is skipped */
        bool e = false;
        if (!data_iter_next(it->ins[pick], out, &e, st)) return false;
        if (!e) return true;
        if (p->stop_on_empty) {
            *end = true;
            return true;
        }
        it->done[pick] = true;
        it->n_done++;
    }
}

static void directed_iter_free(data_iter *it_) {
    directed_iter *it = (directed_iter *)it_;
    directed_params *p = it_->ds->p;
    for (int i = 0; it->ins && i < p->n + p->choose; i++) data_iter_free(it->ins[i]);
    tfc_free(it->ins);
    tfc_free(it->done);
}

static const data_iter_vt directed_vt = {directed_next, directed_iter_free};

static data_iter *directed_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    directed_params *p = ds->p;
    directed_iter *it = data_iter_alloc(sizeof *it, &directed_vt, ds, ictx, st);
    if (!it) return NULL;
    it->ins = tfc_calloc((size_t)(p->n + 1), sizeof *it->ins);
    it->done = tfc_calloc((size_t)p->n, sizeof *it->done);
    if (!it->ins || !it->done) {
        tfc_status_oom(st, ds->kind->name, 0);
        data_iter_free(&it->base);
        return NULL;
    }
    for (int i = 0; i < p->n + p->choose; i++)
        if (!(it->ins[i] = data_iter_make(ds->inputs[i], ictx, st))) {
            data_iter_free(&it->base);
            return NULL;
        }
    tfc_philox_init(&it->rng, (uint64_t)(p->has_seed ? p->seed : data_random_seed()), 0x5a3d1e);
    return &it->base;
}

static int64_t directed_card(const tfc_dataset *ds) {
    directed_params *p = ds->p;
    if (p->choose && tfc_dataset_cardinality(ds->inputs[p->n]) != TFC_INFINITE_CARDINALITY)
        return TFC_UNKNOWN_CARDINALITY;
    for (int i = 0; i < p->n; i++)
        if (tfc_dataset_cardinality(ds->inputs[i]) != TFC_INFINITE_CARDINALITY) return TFC_UNKNOWN_CARDINALITY;
    return TFC_INFINITE_CARDINALITY;
}

static void directed_free(tfc_dataset *ds) { tfc_free(((directed_params *)ds->p)->weights); }

static void directed_describe(const tfc_dataset *ds, data_strbuf *b) {
    directed_params *p = ds->p;
    data_strbuf_printf(b, "num_input_datasets=%d, stop_on_empty_dataset=%s", p->n, p->stop_on_empty ? "true" : "false");
    for (int i = 0; p->weights && i < p->n; i++) data_strbuf_printf(b, ", w%d=%g", i, p->weights[i]);
    if (p->has_seed) data_strbuf_printf(b, ", seed=%lld", (long long)p->seed);
}

static const data_kind directed_kind = {"DirectedInterleaveDataset", directed_make_iter, directed_card,
                                        directed_free, directed_describe};

/* Builds the node over n datasets (+ the selector): checks they agree and relaxes shapes. Takes all inputs. */
static tfc_dataset *directed_new(tfc_dataset *const *datasets, int n, tfc_dataset *choice, const char *what,
                                 tfc_status *st) {
    int n_all = n + (choice != NULL);
    bool ok = n >= 1 && datasets;
    for (int i = 0; ok && i < n; i++) ok = datasets[i] != NULL;
    tfc_dataset *ins[TFC_DATA_MAX_COMPONENTS + 1];
    if (ok && n_all > TFC_DATA_MAX_COMPONENTS + 1) ok = false;
    if (!ok) {
        for (int i = 0; datasets && i < n; i++) tfc_dataset_unref(datasets[i]);
        tfc_dataset_unref(choice);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: expected 1 to %d non-NULL datasets (got %d)", what,
                       TFC_DATA_MAX_COMPONENTS, n);
        return NULL;
    }
    const char *err = NULL;
    for (int i = 1; !err && i < n; i++) {
        if (strcmp(datasets[i]->spec.structure, datasets[0]->spec.structure) != 0) err = "structures";
        for (int c = 0; !err && c < datasets[0]->spec.n; c++)
            if (datasets[i]->spec.comps[c].dtype != datasets[0]->spec.comps[c].dtype) err = "dtypes";
    }
    if (!err && choice) {
        tfc_tensor_spec cs = choice->spec.n == 1 ? choice->spec.comps[0] : (tfc_tensor_spec){0, {-1, {0}}};
        if (choice->spec.n != 1 || cs.dtype != TFC_INT64 || cs.shape.rank != 0) err = "choice";
    }
    if (err) {
        if (!strcmp(err, "choice"))
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: `choice_dataset` must be a dataset of scalar tf.int64 "
                           "tensors, got elements \"%s\"", what, choice->spec.structure);
        else
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: All datasets must have the same type and structure (%s "
                           "differ)", what, err);
        for (int i = 0; i < n; i++) tfc_dataset_unref(datasets[i]);
        tfc_dataset_unref(choice);
        return NULL;
    }
    memcpy(ins, datasets, (size_t)n * sizeof *ins);
    if (choice) ins[n] = choice;
    tfc_dataset *ds = data_ds_new(&directed_kind, sizeof(directed_params), ins, n_all, st);
    if (!ds) return NULL;
    if (!data_spec_copy(&ds->spec, &datasets[0]->spec, st)) return data_ds_fail(ds);
    for (int i = 1; i < n; i++)
        for (int c = 0; c < ds->spec.n; c++) {
            tfc_shape *x = &ds->spec.comps[c].shape;
            const tfc_shape *y = &datasets[i]->spec.comps[c].shape;
            if (x->rank != y->rank) x->rank = -1;
            for (int d = 0; d < x->rank; d++)
                if (x->dims[d] != y->dims[d]) x->dims[d] = -1;
        }
    directed_params *p = ds->p;
    p->n = n;
    p->choose = choice != NULL;
    return ds;
}

tfc_dataset *tfc_dataset_choose_from_datasets(tfc_dataset *const *datasets, int n, tfc_dataset *choice,
                                              bool stop_on_empty_dataset, tfc_status *st) {
    if (!choice) {
        for (int i = 0; datasets && i < n; i++) tfc_dataset_unref(datasets[i]);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "choose_from_datasets: NULL choice_dataset");
        return NULL;
    }
    tfc_dataset *ds = directed_new(datasets, n, choice, "choose_from_datasets", st);
    if (!ds) return NULL;
    ((directed_params *)ds->p)->stop_on_empty = stop_on_empty_dataset;
    tfc_status_clear(st);
    return ds;
}

tfc_dataset *tfc_dataset_sample_from_datasets(tfc_dataset *const *datasets, int n, const double *weights,
                                              int64_t seed, bool has_seed, bool stop_on_empty_dataset,
                                              tfc_status *st) {
    double total = 0;
    bool ok = true;
    for (int i = 0; weights && i < n; i++) {
        ok = ok && weights[i] >= 0 && weights[i] == weights[i];
        total += weights[i];
    }
    if (!ok || (weights && !(total > 0))) {
        for (int i = 0; datasets && i < n; i++) tfc_dataset_unref(datasets[i]);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "sample_from_datasets: weights must be non-negative with a positive "
                       "sum");
        return NULL;
    }
    tfc_dataset *ds = directed_new(datasets, n, NULL, "sample_from_datasets", st);
    if (!ds) return NULL;
    directed_params *p = ds->p;
    if (!(p->weights = tfc_malloc((size_t)n * sizeof *p->weights))) {
        tfc_status_oom(st, "sample_from_datasets", 0);
        return data_ds_fail(ds);
    }
    for (int i = 0; i < n; i++) p->weights[i] = weights ? weights[i] / total : 1.0 / n;
    p->stop_on_empty = stop_on_empty_dataset;
    p->seed = seed;
    p->has_seed = has_seed;
    tfc_status_clear(st);
    return ds;
}
