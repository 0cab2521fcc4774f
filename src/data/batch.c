/* batch (sequential and parallel) and padded_batch. */
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "data/async.h"

typedef struct batch_params {
    int64_t batch_size;
    bool drop_remainder;
    int64_t num_parallel_calls;
    tfc_flag deterministic;
    bool padded;
    tfc_shape *pad;           /* padded: one per component (rank -1: to the batch maximum) */
    tfc_tensor **values;      /* padded: one per component (NULL: zeros) */
} batch_params;

/* A batch being gathered: count elements of n components each, element-major. Room for cap elements, grown by
 * doubling as elements arrive: batch(2^62) of 3 elements holds 3 (the batch size is a user number, not a size). */
typedef struct batch_work {
    int64_t count, cap;
    tfc_tensor **t;
} batch_work;

typedef struct batch_iter {
    data_iter base;
    data_iter *in;
    batch_work *w;            /* sequential: the scratch batch */
    bool in_ended;
    data_async *async;
} batch_iter;

static batch_work *work_new(tfc_status *st) {
    batch_work *w = tfc_calloc(1, sizeof *w);
    if (!w) tfc_status_oom(st, "batch", sizeof *w);
    return w;
}

static void work_free(batch_work *w) {
    if (w) tfc_free(w->t);
    tfc_free(w);
}

/* Room for one more element of n components (at most batch_size in all). */
static bool work_room(const batch_params *p, batch_work *w, int n, tfc_status *st) {
    if (w->count < w->cap) return true;
    int64_t cap = w->cap ? w->cap : 8, bytes;
    if (w->cap && !tfc_size_mul(w->cap, 2, &cap)) cap = p->batch_size;
    if (cap > p->batch_size) cap = p->batch_size;
    tfc_tensor **t = tfc_size_mul(cap, (int64_t)(n ? n : 1) * (int64_t)sizeof *t, &bytes)
                         ? tfc_realloc(w->t, (size_t)bytes) : NULL;
    if (!t)
        return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "%s: out of memory gathering element %lld of a batch of %lld",
                              p->padded ? "padded_batch" : "batch", (long long)w->count, (long long)p->batch_size);
    w->t = t;
    w->cap = cap;
    return true;
}

static void work_clear(const tfc_dataset *ds, batch_work *w) {
    data_unref_n(w->t, (int)(w->count * ds->inputs[0]->spec.n));
    w->count = 0;
}

/* Gathers up to batch_size elements into w. *end when nothing (or, with drop_remainder, too little) came. */
static bool gather(batch_iter *it, batch_work *w, bool *end, tfc_status *st) {
    const tfc_dataset *ds = it->base.ds;
    const batch_params *p = ds->p;
    int n = ds->inputs[0]->spec.n;
    w->count = 0;
    while (w->count < p->batch_size && !it->in_ended) {
        bool e = false;
        if (!work_room(p, w, n, st) || !data_iter_next(it->in, w->t + w->count * n, &e, st)) {
            work_clear(ds, w); /* as TensorFlow: the error is this batch's, its elements are dropped */
            return false;
        }
        if (e) it->in_ended = true;
        else w->count++;
    }
    if (w->count == 0 || (p->drop_remainder && w->count < p->batch_size)) {
        work_clear(ds, w);
        *end = true;
    }
    return true;
}

static bool assemble(const tfc_dataset *ds, batch_work *w, tfc_tensor **out, tfc_status *st) {
    const batch_params *p = ds->p;
    int n = ds->inputs[0]->spec.n;
    for (int c = 0; c < n; c++) {
        if (p->padded) {
            const tfc_tensor *v = p->values[c];
            if (v && v->dtype != w->t[c]->dtype) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "padded_batch: padding value of component %d has dtype %s, the component %s", c,
                               tfc_dtype_name(v->dtype), tfc_dtype_name(w->t[c]->dtype));
                out[c] = NULL;
            } else {
                out[c] = data_pad_stack(w->t, w->count, n, c, &p->pad[c], v, st);
            }
        } else {
            out[c] = data_stack(w->t, w->count, n, c, st);
        }
        if (!out[c]) {
            data_unref_n(out, c);
            return false;
        }
    }
    return true;
}

static bool batch_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    batch_iter *it = (batch_iter *)it_;
    if (!gather(it, it->w, end, st)) return false;
    if (*end) return true;
    bool ok = assemble(it_->ds, it->w, out, st);
    work_clear(it_->ds, it->w);
    return ok;
}

/* parallel: gathering is the sequential fetch, stacking the parallel part */
static bool pbatch_fetch(void *self, void **work, bool *end, tfc_status *st) {
    batch_iter *it = self;
    batch_work *w = work_new(st);
    if (!w) return false;
    if (!gather(it, w, end, st) || *end) {
        work_free(w);
        return *end;
    }
    *work = w;
    return true;
}

static bool pbatch_process(void *self, tfc_ctx *ctx, void *work, tfc_tensor **out, tfc_status *st) {
    batch_iter *it = self;
    bool ok = assemble(it->base.ds, work, out, st);
    work_clear(it->base.ds, work);
    work_free(work);
    return ok;
}

static void pbatch_drop(void *self, void *work) {
    batch_iter *it = self;
    work_clear(it->base.ds, work);
    work_free(work);
}

static bool pbatch_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    return data_async_next(((batch_iter *)it_)->async, out, end, st);
}

static void batch_iter_free(data_iter *it_) {
    batch_iter *it = (batch_iter *)it_;
    data_async_free(it->async);
    if (it->w) {
        work_clear(it_->ds, it->w);
        work_free(it->w);
    }
    data_iter_free(it->in);
}

static const data_iter_vt batch_vt = {batch_next, batch_iter_free};
static const data_iter_vt pbatch_vt = {pbatch_next, batch_iter_free};

static data_iter *batch_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    batch_params *p = ds->p;
    bool par = p->num_parallel_calls != 0;
    batch_iter *it = data_iter_alloc(sizeof *it, par ? &pbatch_vt : &batch_vt, ds, ictx, st);
    if (!it) return NULL;
    if (!(it->in = data_iter_make(ds->inputs[0], ictx, st))) goto fail;
    if (!par) {
        if (!(it->w = work_new(st))) goto fail;
        return &it->base;
    }
    data_async_cfg c = {.name = "batch", .n_out = ds->spec.n, .self = it, .fetch = pbatch_fetch,
                        .process = pbatch_process, .drop = pbatch_drop};
    data_async_parallel_cfg(&c, p->num_parallel_calls, ictx);
    c.deterministic = p->deterministic == TFC_DEFAULT ? ictx->deterministic : p->deterministic == TFC_YES;
    if (!(it->async = data_async_new(&c, ictx, st))) goto fail;
    return &it->base;
fail:
    data_iter_free(&it->base);
    return NULL;
}

static int64_t batch_card(const tfc_dataset *ds) {
    const batch_params *p = ds->p;
    int64_t n = data_card_input(ds);
    if (n < 0) return n;
    return n / p->batch_size + (!p->drop_remainder && n % p->batch_size ? 1 : 0);
}

static void batch_free(tfc_dataset *ds) {
    batch_params *p = ds->p;
    if (p->values) data_unref_n(p->values, ds->inputs[0]->spec.n);
    tfc_free(p->values);
    tfc_free(p->pad);
}

static void batch_describe(const tfc_dataset *ds, data_strbuf *b) {
    const batch_params *p = ds->p;
    data_strbuf_printf(b, "batch_size=%lld, drop_remainder=%s", (long long)p->batch_size,
                       p->drop_remainder ? "true" : "false");
    if (p->num_parallel_calls)
        data_strbuf_printf(b, ", num_parallel_calls=%lld, deterministic=%d", (long long)p->num_parallel_calls,
                           (int)p->deterministic);
    for (int c = 0; p->padded && c < ds->inputs[0]->spec.n; c++) {
        char sh[TFC_SHAPE_STR];
        data_strbuf_printf(b, ", padded_shape[%d]=%s, padding_value[%d]=%g", c,
                           tfc_shape_str(&p->pad[c], sh, sizeof sh), c,
                           p->values[c] && p->values[c]->dtype != TFC_STRING ? tfc_tensor_get_f64(p->values[c], 0) : 0.0);
    }
}

static const data_kind batch_kind = {"BatchDatasetV2", batch_make_iter, batch_card, batch_free, batch_describe};
static const data_kind pbatch_kind = {"ParallelBatchDataset", batch_make_iter, batch_card, batch_free,
                                      batch_describe};
static const data_kind padded_kind = {"PaddedBatchDatasetV2", batch_make_iter, batch_card, batch_free,
                                      batch_describe};

/* Common construction: output spec [batch] + component shape (padded: + padded shape). */
static tfc_dataset *batch_new(const data_kind *k, tfc_dataset *in, const batch_params *bp, tfc_status *st) {
    const char *what = bp->padded ? "padded_batch" : "batch";
    if (!data_check_input(in, st)) return NULL;
    const char *err = NULL;
    char msg[200];
    if (bp->batch_size <= 0) {
        snprintf(msg, sizeof msg, "%s: Batch size must be greater than zero. (got %lld)", what,
                 (long long)bp->batch_size);
        err = msg;
    } else if (bp->num_parallel_calls < 0 && bp->num_parallel_calls != TFC_AUTOTUNE) {
        snprintf(msg, sizeof msg, "%s: num_parallel_calls must be positive or AUTOTUNE, got %lld", what,
                 (long long)bp->num_parallel_calls);
        err = msg;
    }
    for (int c = 0; !err && c < in->spec.n; c++)
        if (in->spec.comps[c].shape.rank >= TFC_MAX_RANK) {
            snprintf(msg, sizeof msg, "%s: component %d has rank %d; batching needs rank < %d", what, c,
                     in->spec.comps[c].shape.rank, TFC_MAX_RANK);
            err = msg;
        }
    if (err) {
        tfc_dataset_unref(in);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s", err);
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(k, sizeof(batch_params), &in, 1, st);
    if (!ds) return NULL;
    batch_params *p = ds->p;
    *p = *bp;
    p->pad = NULL;
    p->values = NULL;
    int n = in->spec.n;
    if (!data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    if (bp->padded) {
        p->pad = tfc_calloc((size_t)(n ? n : 1), sizeof *p->pad);
        p->values = tfc_calloc((size_t)(n ? n : 1), sizeof *p->values);
        if (!p->pad || !p->values) {
            tfc_status_oom(st, what, 0);
            return data_ds_fail(ds);
        }
        for (int c = 0; c < n; c++) {
            p->pad[c] = bp->pad && bp->pad[c].rank >= 0 ? bp->pad[c] : in->spec.comps[c].shape;
            p->values[c] = bp->values ? tfc_tensor_ref(bp->values[c]) : NULL;
        }
    }
    for (int c = 0; c < n; c++) {
        tfc_shape *s = &ds->spec.comps[c].shape;
        if (bp->padded) *s = p->pad[c];
        if (s->rank < 0) continue;
        memmove(s->dims + 1, s->dims, (size_t)s->rank * sizeof s->dims[0]);
        s->dims[0] = bp->drop_remainder ? bp->batch_size : -1;
        s->rank++;
    }
    tfc_status_clear(st);
    return ds;
}

tfc_dataset *tfc_dataset_batch(tfc_dataset *in, int64_t batch_size, const tfc_batch_opts *opts, tfc_status *st) {
    tfc_batch_opts o = opts ? *opts : (tfc_batch_opts){0};
    batch_params bp = {batch_size, o.drop_remainder, o.num_parallel_calls, o.deterministic, false, NULL, NULL};
    return batch_new(o.num_parallel_calls ? &pbatch_kind : &batch_kind, in, &bp, st);
}

tfc_dataset *tfc_dataset_padded_batch(tfc_dataset *in, int64_t batch_size, const tfc_padded_batch_opts *opts,
                                      tfc_status *st) {
    tfc_padded_batch_opts o = opts ? *opts : (tfc_padded_batch_opts){0};
    if (!data_check_input(in, st)) return NULL;
    for (int c = 0; c < in->spec.n; c++) {
        const tfc_tensor_spec *cs = &in->spec.comps[c];
        const tfc_shape *ps = o.padded_shapes ? &o.padded_shapes[c] : NULL;
        const tfc_tensor *v = o.padding_values ? o.padding_values[c] : NULL;
        bool ok = true;
        char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
        if (ps && ps->rank > TFC_MAX_RANK) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "padded_batch: padded shape %d has rank %d", c, ps->rank);
        } else if (ps && ps->rank >= 0 && cs->shape.rank >= 0) {
            ok = ps->rank == cs->shape.rank;
            for (int d = 0; ok && d < ps->rank; d++)
                ok = ps->dims[d] < 0 || cs->shape.dims[d] < 0 || ps->dims[d] >= cs->shape.dims[d];
            if (!ok)
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "padded_batch: The padded shape %s is not compatible with the shape %s of the "
                               "corresponding input component %d.",
                               tfc_shape_str(ps, a, sizeof a), tfc_shape_str(&cs->shape, b, sizeof b), c);
        }
        for (int d = 0; ok && ps && d < ps->rank; d++)
            if (ps->dims[d] < -1) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "padded_batch: padded shape %d has "
                                                      "dim %lld", c, (long long)ps->dims[d]);
        if (ok && v && (v->shape.rank != 0 || (cs->dtype && v->dtype != cs->dtype)))
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "padded_batch: padding value %d must be a scalar of dtype %s, got %s %s", c,
                                cs->dtype ? tfc_dtype_name(cs->dtype) : tfc_dtype_name(v->dtype),
                                tfc_dtype_name(v->dtype), tfc_shape_str(&v->shape, a, sizeof a));
        if (!ok) {
            tfc_dataset_unref(in);
            return NULL;
        }
    }
    batch_params bp = {batch_size, o.drop_remainder, 0, TFC_DEFAULT, true,
                       (tfc_shape *)o.padded_shapes, (tfc_tensor **)o.padding_values};
    return batch_new(&padded_kind, in, &bp, st);
}
