/* shuffle: TensorFlow's buffer algorithm. The buffer is filled to buffer_size elements; each call outputs the
 * element at a uniformly random position and the next input element takes its place (once the input ends, the
 * last buffered element does). The generator is Philox seeded with (seed, epoch), so an order depends only on
 * the seed and on how many iterators the dataset made before (reshuffle_each_iteration) or on nothing else. */
#include <stdio.h>
#include <string.h>

#include "core/philox.h"
#include "data/data_internal.h"
#include "data/iterator_state.h"

typedef struct shuffle_params {
    int64_t buffer_size;
    _Atomic int64_t seed;     /* set again when an iterator checkpoint is restored (iterator_state.c) */
    bool has_seed;
    bool reshuffle;
    _Atomic int64_t epochs;   /* iterators made so far (reshuffle_each_iteration) */
} shuffle_params;

typedef struct shuffle_iter {
    data_iter base;
    data_iter *in;
    tfc_philox rng;
    uint32_t words[4];
    int nwords;               /* unused words left in `words` */
    tfc_tensor **buf;         /* count elements of n components */
    int64_t count, cap;
    int64_t hole;             /* slot emptied by the last output, -1 when none */
    bool in_ended;
} shuffle_iter;

static uint64_t next_u64(shuffle_iter *it) {
    if (it->nwords < 2) {
        tfc_philox_next(&it->rng, it->words);
        it->nwords = 4;
    }
    uint64_t hi = it->words[4 - it->nwords], lo = it->words[5 - it->nwords];
    it->nwords -= 2;
    return hi << 32 | lo;
}

static bool grow(shuffle_iter *it, int n, tfc_status *st) {
    if (it->count < it->cap) return true;
    int64_t limit = ((shuffle_params *)it->base.ds->p)->buffer_size;
    int64_t cap = it->cap ? it->cap * 2 : 64;
    if (cap > limit) cap = limit;
    tfc_tensor **b = tfc_realloc(it->buf, (size_t)cap * (size_t)(n ? n : 1) * sizeof *b);
    if (!b) return tfc_status_oom(st, "shuffle buffer", (size_t)cap * (size_t)n * sizeof *b);
    it->buf = b;
    it->cap = cap;
    return true;
}

static bool shuffle_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    shuffle_iter *it = (shuffle_iter *)it_;
    int64_t size = ((shuffle_params *)it_->ds->p)->buffer_size;
    int n = it_->ds->spec.n;
    /* (re)fill: first the hole, then up to buffer_size */
    while (!it->in_ended && (it->hole >= 0 || it->count < size)) {
        int64_t slot = it->hole >= 0 ? it->hole : it->count;
        if (it->hole < 0 && !grow(it, n, st)) return false;
        bool e = false;
        if (!data_iter_next(it->in, it->buf + slot * n, &e, st)) return false;
        if (e) {
            it->in_ended = true;
            break;
        }
        if (it->hole >= 0) it->hole = -1;
        else it->count++;
    }
    if (it->hole >= 0) { /* input over: the last element fills the hole */
        it->count--;
        if (it->hole != it->count) memcpy(it->buf + it->hole * n, it->buf + it->count * n, (size_t)n * sizeof *it->buf);
        it->hole = -1;
    }
    if (it->count == 0) {
        *end = true;
        return true;
    }
    int64_t i = (int64_t)(next_u64(it) % (uint64_t)it->count);
    memcpy(out, it->buf + i * n, (size_t)n * sizeof *out);
    memset(it->buf + i * n, 0, (size_t)n * sizeof *it->buf);
    it->hole = i;
    return true;
}

static void shuffle_iter_free(data_iter *it_) {
    shuffle_iter *it = (shuffle_iter *)it_;
    int n = it_->ds->spec.n;
    for (int64_t k = 0; k < it->count; k++) data_unref_n(it->buf + k * n, n);
    tfc_free(it->buf);
    data_iter_free(it->in);
}

static const data_iter_vt shuffle_vt = {shuffle_next, shuffle_iter_free};

static data_iter *shuffle_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    shuffle_params *p = ds->p;
    shuffle_iter *it = data_iter_alloc(sizeof *it, &shuffle_vt, ds, ictx, st);
    if (!it) return NULL;
    it->hole = -1;
    if (!(it->in = data_iter_make(ds->inputs[0], ictx, st))) {
        data_iter_free(&it->base);
        return NULL;
    }
    int64_t epoch;
    if (!data_replay_shuffle_epoch(ictx->replay, ds, p->has_seed, &epoch)) {
        epoch = p->reshuffle ? atomic_fetch_add(&p->epochs, 1) : 0;
        data_replay_shuffle_log(ictx->replay, ds, epoch);
    }
    tfc_philox_init(&it->rng, (uint64_t)atomic_load(&p->seed), (uint64_t)epoch);
    return &it->base;
}

static void shuffle_describe(const tfc_dataset *ds, data_strbuf *b) {
    shuffle_params *p = ds->p;
    data_strbuf_printf(b, "buffer_size=%lld, seed=%lld, reshuffle_each_iteration=%s", (long long)p->buffer_size,
                       (long long)atomic_load(&p->seed), p->reshuffle ? "true" : "false");
}

static const data_kind shuffle_kind = {"ShuffleDatasetV3", shuffle_make_iter, data_card_input, NULL,
                                       shuffle_describe};

bool data_shuffle_get(const tfc_dataset *ds, int64_t *seed, int64_t *counter) {
    if (ds->kind != &shuffle_kind) return false;
    shuffle_params *p = ds->p;
    *seed = atomic_load(&p->seed);
    *counter = atomic_load(&p->epochs);
    return true;
}

void data_shuffle_set(tfc_dataset *ds, int64_t seed, int64_t counter) {
    if (ds->kind != &shuffle_kind) return;
    shuffle_params *p = ds->p;
    atomic_store(&p->seed, seed);
    atomic_store(&p->epochs, counter);
}

tfc_dataset *tfc_dataset_shuffle(tfc_dataset *in, int64_t buffer_size, const tfc_shuffle_opts *opts,
                                 tfc_status *st) {
    tfc_shuffle_opts o = opts ? *opts : (tfc_shuffle_opts){0};
    if (!data_check_input(in, st)) return NULL;
    if (buffer_size < 1) {
        tfc_dataset_unref(in);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "shuffle: buffer_size must be greater than zero, got %lld",
                       (long long)buffer_size);
        return NULL;
    }
    tfc_dataset *ds = data_ds_new(&shuffle_kind, sizeof(shuffle_params), &in, 1, st);
    if (!ds) return NULL;
    if (!data_spec_copy(&ds->spec, &in->spec, st)) return data_ds_fail(ds);
    shuffle_params *p = ds->p;
    p->buffer_size = buffer_size;
    atomic_init(&p->seed, o.has_seed ? o.seed : data_random_seed());
    p->has_seed = o.has_seed;
    p->reshuffle = TFC_FLAG(o.reshuffle_each_iteration, true);
    atomic_init(&p->epochs, 0);
    tfc_status_clear(st);
    return ds;
}
