/* Element-wise transformations: map (sequential and parallel), filter, take, skip, repeat, shard, enumerate,
 * ignore_errors, unbatch and prefetch. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "data/async.h"

/* A unary iterator: the input's iterator and, for map and unbatch, a scratch element of the input's
 * components. */
typedef struct unary_iter {
    data_iter base;
    data_iter *in;
    tfc_tensor **buf;         /* input components (n of inputs[0]), or NULL */
} unary_iter;

static void unary_free(data_iter *it_) {
    unary_iter *it = (unary_iter *)it_;
    if (it->buf) data_unref_n(it->buf, it_->ds->inputs[0]->spec.n);
    tfc_free(it->buf);
    data_iter_free(it->in);
}

/* Allocates an iterator of `size` bytes starting with unary_iter (with a scratch element when `buf`) and makes
 * its input iterator. */
static void *unary_make(size_t size, const data_iter_vt *vt, tfc_dataset *ds, const data_ictx *ictx, bool buf,
                        tfc_status *st) {
    unary_iter *it = data_iter_alloc(size, vt, ds, ictx, st);
    if (!it) return NULL;
    int n = ds->inputs[0]->spec.n;
    if (buf && !(it->buf = tfc_calloc((size_t)(n ? n : 1), sizeof *it->buf))) {
        tfc_status_oom(st, ds->kind->name, 0);
        data_iter_free(&it->base);
        return NULL;
    }
    if (!(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    return it;
}

/* Builds a unary node whose elements keep the input's spec. */
static tfc_dataset *unary_new(const data_kind *k, size_t psize, tfc_dataset *in, tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    tfc_dataset *ds = data_ds_new(k, psize, &in, 1, st);
    if (!ds) return NULL;
    if (!data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    return ds;
}

static tfc_dataset *fail_input(tfc_dataset *in, tfc_status *st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static tfc_dataset *fail_input(tfc_dataset *in, tfc_status *st, const char *fmt, ...) {
    char msg[sizeof st->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tfc_dataset_unref(in);
    tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s", msg);
    return NULL;
}

/* ---- map ------------------------------------------------------------------------------------------------------- */
typedef struct map_params {
    tfc_data_map_fn fn;
    void *user;
    void (*user_free)(void *);
    int64_t num_parallel_calls;
    tfc_flag deterministic;
} map_params;

typedef struct map_iter {
    unary_iter u;
    tfc_ctx *ctx;
    data_async *async;
} map_iter;

static bool map_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    map_iter *it = (map_iter *)it_;
    map_params *p = it_->ds->p;
    int n_in = it_->ds->inputs[0]->spec.n;
    if (!it->ctx && !(it->ctx = data_ctx_new(it_->ictx, true, st))) return false;
    if (!data_iter_next(it->u.in, it->u.buf, end, st) || *end) return !*end ? false : true;
    bool ok = data_call_map(it->ctx, p->fn, p->user, it->u.buf, n_in, out, &it_->ds->spec, "map", st);
    data_unref_n(it->u.buf, n_in);
    return ok;
}

static void map_iter_free(data_iter *it_) {
    map_iter *it = (map_iter *)it_;
    data_async_free(it->async); /* joins the workers before the input goes */
    data_ctx_free(it->ctx);
    unary_free(it_);
}

static const data_iter_vt map_vt = {map_next, map_iter_free};

/* parallel map: work = the input element's components */
static bool pmap_fetch(void *self, void **work, bool *end, tfc_status *st) {
    map_iter *it = self;
    int n = it->u.base.ds->inputs[0]->spec.n;
    tfc_tensor **w = tfc_calloc((size_t)(n ? n : 1), sizeof *w);
    if (!w) return tfc_status_oom(st, "map", 0);
    if (!data_iter_next(it->u.in, w, end, st) || *end) {
        tfc_free(w);
        return *end;
    }
    *work = w;
    return true;
}

static bool pmap_process(void *self, tfc_ctx *ctx, void *work, tfc_tensor **out, tfc_status *st) {
    map_iter *it = self;
    tfc_dataset *ds = it->u.base.ds;
    map_params *p = ds->p;
    int n_in = ds->inputs[0]->spec.n;
    tfc_tensor **w = work;
    bool ok = data_call_map(ctx, p->fn, p->user, w, n_in, out, &ds->spec, "map", st);
    data_unref_n(w, n_in);
    tfc_free(w);
    return ok;
}

static void pmap_drop(void *self, void *work) {
    map_iter *it = self;
    data_unref_n(work, it->u.base.ds->inputs[0]->spec.n);
    tfc_free(work);
}

static bool pmap_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    return data_async_next(((map_iter *)it_)->async, out, end, st);
}

static const data_iter_vt pmap_vt = {pmap_next, map_iter_free};

static bool resolve_deterministic(tfc_flag f, const data_ictx *ictx) {
    return f == TFC_DEFAULT ? ictx->deterministic : f == TFC_YES;
}

static data_iter *map_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    map_params *p = ds->p;
    if (p->num_parallel_calls == 0) return unary_make(sizeof(map_iter), &map_vt, ds, ictx, true, st);
    map_iter *it = unary_make(sizeof(map_iter), &pmap_vt, ds, ictx, false, st);
    if (!it) return NULL;
    data_async_cfg c = {.name = "map", .n_out = ds->spec.n, .worker_ctx = true, .self = it, .fetch = pmap_fetch,
                        .process = pmap_process, .drop = pmap_drop};
    data_async_parallel_cfg(&c, p->num_parallel_calls, ictx);
    c.deterministic = resolve_deterministic(p->deterministic, ictx);
    if (!(it->async = data_async_new(&c, ictx, st))) {
        data_iter_free(&it->u.base);
        return NULL;
    }
    return &it->u.base;
}

static void map_free(tfc_dataset *ds) {
    map_params *p = ds->p;
    if (p->user_free) p->user_free(p->user);
}

static void map_describe(const tfc_dataset *ds, data_strbuf *b) {
    map_params *p = ds->p;
    data_strbuf_printf(b, "f=%p, user=%p", (void *)(uintptr_t)p->fn, p->user);
    if (p->num_parallel_calls) data_strbuf_printf(b, ", num_parallel_calls=%lld, deterministic=%d",
                                                  (long long)p->num_parallel_calls, (int)p->deterministic);
}

static const data_kind map_kind = {"MapDataset", map_make_iter, data_card_input, map_free, map_describe};
static const data_kind pmap_kind = {"ParallelMapDatasetV2", map_make_iter, data_card_input, map_free, map_describe};

tfc_dataset *tfc_dataset_map(tfc_dataset *in, tfc_data_map_fn fn, void *user, const tfc_map_opts *opts,
                             tfc_status *st) {
    tfc_map_opts o = opts ? *opts : (tfc_map_opts){0};
    if (!in || !fn || (o.num_parallel_calls < 0 && o.num_parallel_calls != TFC_AUTOTUNE)) {
        if (o.user_free) o.user_free(user);
        if (!data_check_input(in, st)) return NULL;
        if (!fn) return fail_input(in, st, "map: NULL function");
        return fail_input(in, st, "map: num_parallel_calls must be positive or AUTOTUNE, got %lld",
                          (long long)o.num_parallel_calls);
    }
    tfc_dataset *ds = data_ds_new(o.num_parallel_calls ? &pmap_kind : &map_kind, sizeof(map_params), &in, 1, st);
    if (!ds) {
        if (o.user_free) o.user_free(user);
        return NULL;
    }
    *(map_params *)ds->p = (map_params){fn, user, o.user_free, o.num_parallel_calls, o.deterministic};
    bool ok;
    if (o.output_structure || o.output_spec)
        ok = data_spec_init(&ds->spec, o.output_structure ? o.output_structure : in->spec.structure, -1,
                            o.output_spec, st);
    else
        ok = data_spec_init(&ds->spec, in->spec.structure, in->spec.n, NULL, st);
    if (!ok) return data_ds_fail(ds);
    tfc_status_clear(st);
    return ds;
}

/* ---- filter ---------------------------------------------------------------------------------------------------- */
typedef struct filter_params {
    tfc_data_predicate_fn fn;
    void *user;
    void (*user_free)(void *);
} filter_params;

typedef struct filter_iter {
    unary_iter u;
    tfc_ctx *ctx;
} filter_iter;

static bool filter_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    filter_iter *it = (filter_iter *)it_;
    filter_params *p = it_->ds->p;
    int n = it_->ds->spec.n;
    if (!it->ctx && !(it->ctx = data_ctx_new(it_->ictx, true, st))) return false;
    for (;;) {
        if (!data_iter_next(it->u.in, out, end, st)) return false;
        if (*end) return true;
        bool keep = false;
        if (!data_call_predicate(it->ctx, p->fn, p->user, out, n, &keep, st)) {
            data_unref_n(out, n);
            return false;
        }
        if (keep) return true;
        data_unref_n(out, n);
    }
}

static void filter_iter_free(data_iter *it_) {
    data_ctx_free(((filter_iter *)it_)->ctx);
    unary_free(it_);
}

static const data_iter_vt filter_vt = {filter_next, filter_iter_free};

static data_iter *filter_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return unary_make(sizeof(filter_iter), &filter_vt, ds, ictx, false, st);
}

static void filter_free(tfc_dataset *ds) {
    filter_params *p = ds->p;
    if (p->user_free) p->user_free(p->user);
}

static void filter_describe(const tfc_dataset *ds, data_strbuf *b) {
    filter_params *p = ds->p;
    data_strbuf_printf(b, "predicate=%p, user=%p", (void *)(uintptr_t)p->fn, p->user);
}

static const data_kind filter_kind = {"FilterDataset", filter_make_iter, NULL, filter_free, filter_describe};

tfc_dataset *tfc_dataset_filter(tfc_dataset *in, tfc_data_predicate_fn fn, void *user, const tfc_filter_opts *opts,
                                tfc_status *st) {
    void (*user_free)(void *) = opts ? opts->user_free : NULL;
    if (!in || !fn) {
        if (user_free) user_free(user);
        return in ? fail_input(in, st, "filter: NULL predicate") : (data_check_input(in, st), NULL);
    }
    tfc_dataset *ds = unary_new(&filter_kind, sizeof(filter_params), in, st);
    if (!ds) {
        if (user_free) user_free(user);
        return NULL;
    }
    *(filter_params *)ds->p = (filter_params){fn, user, user_free};
    tfc_status_clear(st);
    return ds;
}

/* ---- take / skip / repeat / shard ----------------------------------------------------------------------------- */
typedef struct count_params {
    int64_t count, index;     /* shard: count = num_shards */
} count_params;

typedef struct count_iter {
    unary_iter u;
    int64_t i;                /* take/skip: elements passed; repeat: epochs begun; shard: input position */
    bool epoch_empty;         /* repeat: the current epoch has produced nothing yet */
} count_iter;

static bool take_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    count_iter *it = (count_iter *)it_;
    int64_t count = ((count_params *)it_->ds->p)->count;
    if (count >= 0 && it->i >= count) {
        *end = true;
        return true;
    }
    /* a failed element does not count (TensorFlow's take) */
    if (!data_iter_next(it->u.in, out, end, st)) return false;
    if (!*end) it->i++;
    return true;
}

static bool skip_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    count_iter *it = (count_iter *)it_;
    int64_t count = ((count_params *)it_->ds->p)->count;
    int n = it_->ds->spec.n;
    while (count < 0 || it->i < count) {
        if (!data_iter_next(it->u.in, out, end, st)) return false;
        if (*end) return true;
        data_unref_n(out, n);
        it->i++;
    }
    return data_iter_next(it->u.in, out, end, st);
}

static bool repeat_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    count_iter *it = (count_iter *)it_;
    int64_t count = ((count_params *)it_->ds->p)->count;
    for (;;) {
        if (!it->u.in) {
            if (count >= 0 && it->i >= count) {
                *end = true;
                return true;
            }
            if (!(it->u.in = data_iter_make(it_->ds->inputs[0], it_->ictx, st))) return false;
            it->i++;
            it->epoch_empty = true;
        }
        if (!data_iter_next(it->u.in, out, end, st)) {
            it->epoch_empty = false;
            return false;
        }
        if (!*end) {
            it->epoch_empty = false;
            return true;
        }
        data_iter_free(it->u.in);
        it->u.in = NULL;
        *end = false;
        if (count < 0 && it->epoch_empty) { /* an empty input would loop forever */
            *end = true;
            it->i = 0;
            return true;
        }
    }
}

static bool shard_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    count_iter *it = (count_iter *)it_;
    count_params *p = it_->ds->p;
    int n = it_->ds->spec.n;
    for (;;) {
        bool mine = it->i % p->count == p->index;
        it->i++;
        if (!data_iter_next(it->u.in, out, end, st)) return false;
        if (*end || mine) return true;
        data_unref_n(out, n);
    }
}

static const data_iter_vt take_vt = {take_next, unary_free};
static const data_iter_vt skip_vt = {skip_next, unary_free};
static const data_iter_vt repeat_vt = {repeat_next, unary_free};
static const data_iter_vt shard_vt = {shard_next, unary_free};

static data_iter *take_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return unary_make(sizeof(count_iter), &take_vt, ds, ictx, false, st);
}
static data_iter *skip_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return unary_make(sizeof(count_iter), &skip_vt, ds, ictx, false, st);
}
static data_iter *shard_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return unary_make(sizeof(count_iter), &shard_vt, ds, ictx, false, st);
}
static data_iter *repeat_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    /* the input iterator is made per epoch */
    count_iter *it = data_iter_alloc(sizeof *it, &repeat_vt, ds, ictx, st);
    return it ? &it->u.base : NULL;
}

static int64_t take_card(const tfc_dataset *ds) {
    int64_t n = data_card_input(ds), c = ((count_params *)ds->p)->count;
    if (n == TFC_UNKNOWN_CARDINALITY) return n;
    if (c < 0) return n;
    if (n == TFC_INFINITE_CARDINALITY) return c;
    return n < c ? n : c;
}

static int64_t skip_card(const tfc_dataset *ds) {
    int64_t n = data_card_input(ds), c = ((count_params *)ds->p)->count;
    if (n < 0) return n;
    if (c < 0) return 0;
    return n > c ? n - c : 0;
}

static int64_t repeat_card(const tfc_dataset *ds) {
    int64_t n = data_card_input(ds), c = ((count_params *)ds->p)->count;
    if (c < 0) {
        if (n == 0) return 0;
        return n == TFC_UNKNOWN_CARDINALITY ? n : TFC_INFINITE_CARDINALITY;
    }
    if (c == 0) return 0;
    if (n < 0) return n;
    int64_t r;
    return tfc_mul_overflow_i64(n, c, &r) ? r : TFC_INFINITE_CARDINALITY;
}

static int64_t shard_card(const tfc_dataset *ds) {
    int64_t n = data_card_input(ds);
    count_params *p = ds->p;
    if (n < 0) return n;
    return n / p->count + (p->index < n % p->count ? 1 : 0);
}

static void count_describe(const tfc_dataset *ds, data_strbuf *b) {
    data_strbuf_printf(b, "count=%lld", (long long)((count_params *)ds->p)->count);
}

static void shard_describe(const tfc_dataset *ds, data_strbuf *b) {
    count_params *p = ds->p;
    data_strbuf_printf(b, "num_shards=%lld, index=%lld", (long long)p->count, (long long)p->index);
}

static const data_kind take_kind = {"TakeDataset", take_make, take_card, NULL, count_describe};
static const data_kind skip_kind = {"SkipDataset", skip_make, skip_card, NULL, count_describe};
static const data_kind repeat_kind = {"RepeatDataset", repeat_make, repeat_card, NULL, count_describe};
static const data_kind shard_kind = {"ShardDataset", shard_make, shard_card, NULL, shard_describe};

static tfc_dataset *count_new(const data_kind *k, tfc_dataset *in, int64_t count, int64_t index, tfc_status *st) {
    tfc_dataset *ds = unary_new(k, sizeof(count_params), in, st);
    if (!ds) return NULL;
    *(count_params *)ds->p = (count_params){count, index};
    tfc_status_clear(st);
    return ds;
}

tfc_dataset *tfc_dataset_take(tfc_dataset *in, int64_t count, tfc_status *st) {
    if (count < -1) count = -1; /* as tf.data: any negative count means -1 */
    return count_new(&take_kind, in, count, 0, st);
}

tfc_dataset *tfc_dataset_skip(tfc_dataset *in, int64_t count, tfc_status *st) {
    if (count < -1) count = -1; /* as tf.data: any negative count means -1 */
    return count_new(&skip_kind, in, count, 0, st);
}

tfc_dataset *tfc_dataset_repeat(tfc_dataset *in, int64_t count, tfc_status *st) {
    if (count < -1) count = -1; /* as tf.data: any negative count means -1 */
    return count_new(&repeat_kind, in, count, 0, st);
}

tfc_dataset *tfc_dataset_shard(tfc_dataset *in, int64_t num_shards, int64_t index, tfc_status *st) {
    if (in && num_shards <= 0)
        return fail_input(in, st, "shard: num_shards must be greater than zero, got %lld", (long long)num_shards);
    if (in && (index < 0 || index >= num_shards))
        return fail_input(in, st, "shard: index must be between 0 and %lld, got %lld", (long long)num_shards - 1, (long long)index);
    return count_new(&shard_kind, in, num_shards, index, st);
}

/* ---- enumerate ----------------------------------------------------------------------------------------------- */
typedef struct enum_iter {
    unary_iter u;
    int64_t next;
} enum_iter;

static bool enum_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    enum_iter *it = (enum_iter *)it_;
    int n = it_->ds->inputs[0]->spec.n;
    int64_t i = it->next++;
    if (!data_iter_next(it->u.in, out + 1, end, st) || *end) return *end;
    if (!(out[0] = tfc_scalar_i64(i, st))) {
        data_unref_n(out + 1, n);
        return false;
    }
    return true;
}

static const data_iter_vt enum_vt = {enum_next, unary_free};

static data_iter *enum_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    enum_iter *it = unary_make(sizeof(enum_iter), &enum_vt, ds, ictx, false, st);
    if (it) it->next = *(int64_t *)ds->p;
    return it ? &it->u.base : NULL;
}

static void enum_describe(const tfc_dataset *ds, data_strbuf *b) {
    data_strbuf_printf(b, "start=%lld", (long long)*(int64_t *)ds->p);
}

static const data_kind enum_kind = {"EnumerateDataset", enum_make, data_card_input, NULL, enum_describe};

tfc_dataset *tfc_dataset_enumerate(tfc_dataset *in, int64_t start, tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    tfc_dataset *ds = data_ds_new(&enum_kind, sizeof(int64_t), &in, 1, st);
    if (!ds) return NULL;
    *(int64_t *)ds->p = start;
    size_t len = strlen(in->spec.structure) + 8;
    char *s = tfc_malloc(len);
    if (!s) {
        tfc_status_oom(st, "enumerate", len);
        return data_ds_fail(ds);
    }
    snprintf(s, len, "(.,%s)", in->spec.structure);
    bool ok = data_spec_init(&ds->spec, s, in->spec.n + 1, NULL, st);
    tfc_free(s);
    if (!ok) return data_ds_fail(ds);
    ds->spec.comps[0] = (tfc_tensor_spec){TFC_INT64, {0, {0}}};
    memcpy(ds->spec.comps + 1, in->spec.comps, (size_t)in->spec.n * sizeof *in->spec.comps);
    tfc_status_clear(st);
    return ds;
}

/* ---- ignore_errors ------------------------------------------------------------------------------------------- */
static bool ignore_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    unary_iter *it = (unary_iter *)it_;
    (void)st;
    for (;;) {
        tfc_status s = TFC_STATUS_INIT;
        if (data_iter_next(it->in, out, end, &s)) return true;
    }
}

static const data_iter_vt ignore_vt = {ignore_next, unary_free};

static data_iter *ignore_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return unary_make(sizeof(unary_iter), &ignore_vt, ds, ictx, false, st);
}

static const data_kind ignore_kind = {"IgnoreErrorsDataset", ignore_make, NULL, NULL, NULL};

tfc_dataset *tfc_dataset_ignore_errors(tfc_dataset *in, tfc_status *st) {
    tfc_dataset *ds = unary_new(&ignore_kind, 0, in, st);
    if (ds) tfc_status_clear(st);
    return ds;
}

/* ---- unbatch ------------------------------------------------------------------------------------------------- */
typedef struct unbatch_iter {
    unary_iter u;
    int64_t row, rows;        /* next row of the element held in u.buf */
    bool holding;
} unbatch_iter;

static bool unbatch_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    unbatch_iter *it = (unbatch_iter *)it_;
    int n = it_->ds->spec.n;
    while (!it->holding || it->row >= it->rows) {
        if (it->holding) data_unref_n(it->u.buf, n);
        it->holding = false;
        if (!data_iter_next(it->u.in, it->u.buf, end, st)) return false;
        if (*end) return true;
        for (int c = 0; c < n; c++) {
            const tfc_tensor *t = it->u.buf[c];
            bool ok = true;
            if (t->shape.rank == 0)
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "unbatch: component %d is a scalar", c);
            else if (t->shape.dims[0] != it->u.buf[0]->shape.dims[0])
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                    "unbatch: Input element must have the same batch size in each component. "
                                    "Component 0 had size %lld but component %d had size %lld.",
                                    (long long)it->u.buf[0]->shape.dims[0], c, (long long)t->shape.dims[0]);
            if (!ok) {
                data_unref_n(it->u.buf, n);
                return false;
            }
        }
        it->rows = n ? it->u.buf[0]->shape.dims[0] : 0;
        it->row = 0;
        it->holding = true;
    }
    for (int c = 0; c < n; c++)
        if (!(out[c] = data_slice_row(it->u.buf[c], it->row, st))) {
            data_unref_n(out, c);
            return false;
        }
    it->row++;
    return true;
}

static const data_iter_vt unbatch_vt = {unbatch_next, unary_free};

static data_iter *unbatch_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    return unary_make(sizeof(unbatch_iter), &unbatch_vt, ds, ictx, true, st);
}

static int64_t unbatch_card(const tfc_dataset *ds) {
    const data_spec *in = &ds->inputs[0]->spec;
    int64_t n = data_card_input(ds), d = -1;
    if (n < 0) return n;
    for (int c = 0; c < in->n; c++) {
        int64_t dc = in->comps[c].shape.rank > 0 ? in->comps[c].shape.dims[0] : -1;
        if (dc < 0 || (d >= 0 && dc != d)) return TFC_UNKNOWN_CARDINALITY;
        d = dc;
    }
    int64_t r;
    return d > 0 && tfc_mul_overflow_i64(n, d, &r) ? r : TFC_UNKNOWN_CARDINALITY;
}

static const data_kind unbatch_kind = {"UnbatchDataset", unbatch_make, unbatch_card, NULL, NULL};

tfc_dataset *tfc_dataset_unbatch(tfc_dataset *in, tfc_status *st) {
    if (!data_check_input(in, st)) return NULL;
    for (int c = 0; c < in->spec.n; c++)
        if (in->spec.comps[c].shape.rank == 0)
            return fail_input(in, st, "unbatch: Cannot unbatch an input with scalar components (component %d)", c);
    tfc_dataset *ds = unary_new(&unbatch_kind, 0, in, st);
    if (!ds) return NULL;
    for (int c = 0; c < ds->spec.n; c++) {
        tfc_shape *s = &ds->spec.comps[c].shape;
        if (s->rank < 0) continue;
        for (int d = 1; d < s->rank; d++) s->dims[d - 1] = s->dims[d];
        s->rank--;
    }
    tfc_status_clear(st);
    return ds;
}

/* ---- prefetch ------------------------------------------------------------------------------------------------- */
#define PREFETCH_AUTOTUNE_MAX 64

typedef struct prefetch_iter {
    unary_iter u;
    data_async *async;
} prefetch_iter;

static bool prefetch_fetch(void *self, void **work, bool *end, tfc_status *st) {
    prefetch_iter *it = self;
    int n = it->u.base.ds->spec.n;
    tfc_tensor **w = tfc_calloc((size_t)(n ? n : 1), sizeof *w);
    if (!w) return tfc_status_oom(st, "prefetch", 0);
    if (!data_iter_next(it->u.in, w, end, st) || *end) {
        tfc_free(w);
        return *end;
    }
    *work = w;
    return true;
}

static bool prefetch_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    prefetch_iter *it = (prefetch_iter *)it_;
    if (!it->async) return data_iter_next(it->u.in, out, end, st); /* buffer_size 0 */
    return data_async_next(it->async, out, end, st);
}

static void prefetch_iter_free(data_iter *it_) {
    data_async_free(((prefetch_iter *)it_)->async);
    unary_free(it_);
}

static const data_iter_vt prefetch_vt = {prefetch_next, prefetch_iter_free};

static data_iter *prefetch_make(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    int64_t size = *(int64_t *)ds->p;
    prefetch_iter *it = unary_make(sizeof(prefetch_iter), &prefetch_vt, ds, ictx, false, st);
    if (!it || size == 0) return it ? &it->u.base : NULL;
    data_async_cfg c = {.name = "prefetch", .n_out = ds->spec.n, .threads = 1, .parallelism = 1,
                        .deterministic = true, .self = it, .fetch = prefetch_fetch};
    if (size == TFC_AUTOTUNE) {
        c.autotune = true;
        c.capacity = 1;
        c.max_capacity = PREFETCH_AUTOTUNE_MAX;
    } else {
        c.capacity = c.max_capacity = size > (1 << 20) ? (1 << 20) : (int)size;
    }
    if (!(it->async = data_async_new(&c, ictx, st))) {
        data_iter_free(&it->u.base);
        return NULL;
    }
    return &it->u.base;
}

static void prefetch_describe(const tfc_dataset *ds, data_strbuf *b) {
    data_strbuf_printf(b, "buffer_size=%lld", (long long)*(int64_t *)ds->p);
}

static const data_kind prefetch_kind = {"PrefetchDataset", prefetch_make, data_card_input, NULL, prefetch_describe};

tfc_dataset *tfc_dataset_prefetch(tfc_dataset *in, int64_t buffer_size, tfc_status *st) {
    if (in && buffer_size < -1)
        return fail_input(in, st, "prefetch: buffer_size must be >= 0 or AUTOTUNE, got %lld", (long long)buffer_size);
    tfc_dataset *ds = unary_new(&prefetch_kind, sizeof(int64_t), in, st);
    if (!ds) return NULL;
    *(int64_t *)ds->p = buffer_size;
    tfc_status_clear(st);
    return ds;
}
