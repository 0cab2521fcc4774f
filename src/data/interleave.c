/* interleave, flat_map and parallel interleave.
 *
 * The order is TensorFlow's InterleaveDataset: a cycle of cycle_length slots, each holding the iterator of the
 * dataset made from one input element; block_length elements are taken from the current slot before moving to
 * the next; an exhausted slot is refilled from the input when the cycle comes back to it.
 *
 * The parallel version keeps that order (unless deterministic is off): worker threads read ahead from the open
 * slots into per-slot queues (the current slot first) while the consumer walks the cycle exactly as the
 * sequential algorithm does, taking elements from the queues. Input elements are read, and inner datasets made,
 * by the consumer. A queue holds block_length elements, at least QUEUE_MIN and at most QUEUE_MAX; workers are
 * woken when a queue is half empty and refill it in runs (one wake-up per element cost 7x the reading itself
 * on small records). Memory is bounded by cycle_length * queue length elements.
 *
 * Cycle positions are used in order, so no more of them ever hold a slot than input elements were seen: the
 * slot array grows with the positions used, and a cycle_length beyond what the input can fill costs nothing
 * (interleave(cycle_length = 2^63 - 1) on 3 elements keeps 3 slots). Once the input has ended, the positions
 * never used stay empty for good and the walk skips them in one step, where TensorFlow visits each. */
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "data/data_internal.h"

#define QUEUE_MIN 16
#define QUEUE_MAX 64

typedef struct ileave_params {
    data_interleave_params p;
    bool check;               /* the declared spec has known parts: check inner elements */
} ileave_params;

static int64_t resolve_cycle(int64_t c) { return c == TFC_AUTOTUNE ? tfc_num_cores() : c; }

/* ---- common: the input side (consumer only) ------------------------------------------------------------- */
typedef struct ileave_in {
    data_iter *in;
    tfc_ctx *ctx;
    tfc_tensor **args;
} ileave_in;

/* Reads the next input element and makes the inner dataset and its iterator. *end at the input's end. */
static bool open_inner(data_iter *base, ileave_in *x, tfc_dataset **ds_out, data_iter **it_out, bool *end,
                       tfc_status *st) {
    tfc_dataset *ds = base->ds;
    const ileave_params *ip = ds->p;
    int n_in = ds->inputs[0]->spec.n;
    const char *what = ip->p.flat_map ? "flat_map" : "interleave";
    *ds_out = NULL;
    *it_out = NULL;
    if (!x->ctx && !(x->ctx = data_ctx_new(base->ictx, true, st))) return false;
    if (!data_iter_next(x->in, x->args, end, st) || *end) return *end;
    tfc_dataset *inner = data_call_dataset_fn(x->ctx, ip->p.fn, ip->p.user, x->args, n_in, &ds->spec, what, st);
    data_unref_n(x->args, n_in);
    if (!inner) return false;
    data_iter *it = data_iter_make(inner, base->ictx, st);
    if (!it) {
        tfc_dataset_unref(inner);
        return false;
    }
    *ds_out = inner;
    *it_out = it;
    return true;
}

static bool ileave_in_init(ileave_in *x, tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    int n_in = ds->inputs[0]->spec.n;
    x->args = tfc_calloc((size_t)(n_in ? n_in : 1), sizeof *x->args);
    if (!x->args) return tfc_status_oom(st, ds->kind->name, 0);
    return (x->in = data_iter_make(ds->inputs[0], ictx, st)) != NULL;
}

static void ileave_in_free(ileave_in *x, int n_in) {
    if (x->args) data_unref_n(x->args, n_in);
    tfc_free(x->args);
    data_iter_free(x->in);
    data_ctx_free(x->ctx);
}

/* ---- sequential ---------------------------------------------------------------------------------------------- */
typedef struct slot {
    tfc_dataset *ds;
    data_iter *it;
} slot;

typedef struct ileave_iter {
    data_iter base;
    ileave_in x;
    slot *slots;
    int64_t cap, n_used;      /* slots allocated; positions [0, n_used) have held one */
    int64_t cycle_length, block_length;
    int64_t ci, bi, num_open;
    bool end_of_input;
} ileave_iter;
#define ADVANCE(it) advance_cycle(&(it)->ci, &(it)->bi, (it)->cycle_length, (it)->n_used, (it)->end_of_input)

/* The next cycle position (see the top of the file). */
static void advance_cycle(int64_t *ci, int64_t *bi, int64_t cycle_length, int64_t n_used, bool end_of_input) {
    *bi = 0;
    if (++*ci >= cycle_length || (end_of_input && *ci >= n_used)) *ci = 0;
}

/* Grows an array of `*cap` entries of `size` bytes (zeroing the new ones) so that index `need` fits, doubling
 * but never past `limit` entries. */
static bool grow_slots(void **arr, int64_t *cap, int64_t need, int64_t limit, size_t size, const char *what,
                       tfc_status *st) {
    if (need < *cap) return true;
    int64_t c = *cap < 4 ? 4 : *cap;
    while (c <= need) c = c > INT64_MAX / 2 ? INT64_MAX : 2 * c;
    if (c > limit) c = limit;
    size_t bytes;
    if (!tfc_size_bytes(c, size, &bytes)) return tfc_status_oom(st, what, SIZE_MAX);
    void *p = tfc_realloc(*arr, bytes);
    if (!p) return tfc_status_oom(st, what, bytes);
    memset((char *)p + (size_t)*cap * size, 0, (size_t)(c - *cap) * size);
    *arr = p;
    *cap = c;
    return true;
}

static void close_slot(slot *s) {
    data_iter_free(s->it);
    tfc_dataset_unref(s->ds);
    s->it = NULL;
    s->ds = NULL;
}

static bool ileave_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    ileave_iter *it = (ileave_iter *)it_;
    const ileave_params *ip = it_->ds->p;
    while (!it->end_of_input || it->num_open > 0) {
        if (!grow_slots((void **)&it->slots, &it->cap, it->ci, it->cycle_length, sizeof *it->slots, it_->ds->kind->name,
                        st))
            return false;
        slot *s = &it->slots[it->ci];
        if (s->it) {
            bool e = false;
            if (!data_iter_next(s->it, out, &e, st)) return false;
            if (!e) {
                if (ip->check && !data_spec_check(&it_->ds->spec, out, it_->ds->kind->name, st)) {
                    data_unref_n(out, it_->ds->spec.n);
                    return false;
                }
                if (++it->bi == it->block_length) ADVANCE(it);
                return true;
            }
            close_slot(s);
            it->num_open--;
            ADVANCE(it);
        } else if (!it->end_of_input) {
            bool e = false;
            if (!open_inner(it_, &it->x, &s->ds, &s->it, &e, st)) return false;
            if (e) {
                it->end_of_input = true;
            } else {
                it->num_open++;
                if (it->ci >= it->n_used) it->n_used = it->ci + 1;
            }
        } else {
            ADVANCE(it);
        }
    }
    *end = true;
    return true;
}

static void ileave_iter_free(data_iter *it_) {
    ileave_iter *it = (ileave_iter *)it_;
    for (int64_t i = 0; i < it->cap; i++) close_slot(&it->slots[i]);
    tfc_free(it->slots);
    ileave_in_free(&it->x, it_->ds->inputs[0]->spec.n);
}

static const data_iter_vt ileave_vt = {ileave_next, ileave_iter_free};

static data_iter *ileave_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    const ileave_params *ip = ds->p;
    ileave_iter *it = data_iter_alloc(sizeof *it, &ileave_vt, ds, ictx, st);
    if (!it) return NULL;
    it->cycle_length = ip->p.flat_map ? 1 : resolve_cycle(ip->p.cycle_length);
    it->block_length = ip->p.flat_map ? 1 : ip->p.block_length;
    if (!ileave_in_init(&it->x, ds, ictx, st)) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

/* ---- parallel -------------------------------------------------------------------------------------------------- */
typedef struct pslot {
    tfc_dataset *ds;
    data_iter *it;
    tfc_tensor **q;           /* qcap entries of n components */
    tfc_status *qst;          /* per entry: code != OK marks an error entry */
    int qh, qn;
    bool ended, busy;
} pslot;

typedef struct pileave_iter {
    data_iter base;
    ileave_in x;
    pslot **slots;            /* cap pointers; a slot is made when its position is first used (stable address) */
    int64_t cap, n_used;
    int64_t cycle_length, block_length;
    int64_t ci, bi, num_open;
    bool end_of_input;
    int n, qcap;
    bool deterministic;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, ready_cv;
    bool cancelled, started;
    bool consumer_waiting;    /* signal ready_cv only then */
    int idle;                 /* workers waiting on work_cv */
    pthread_t *threads;
    int want_threads, n_threads;
} pileave_iter;

/* The used position k steps after the current one (k < n_used). */
static pslot *pslot_after(const pileave_iter *it, int64_t k) {
    int64_t c = it->ci < it->n_used ? it->ci : 0;
    return it->slots[(c + k) % it->n_used];
}

static pslot *pick_work(pileave_iter *it) {
    for (int64_t k = 0; k < it->n_used; k++) {
        pslot *s = pslot_after(it, k);
        if (s && s->it && !s->busy && !s->ended && s->qn < it->qcap) return s;
    }
    return NULL;
}

/* The slot at the current position, made (with its queue) on first use; NULL with st set when out of memory. */
static pslot *pslot_current(pileave_iter *it, tfc_status *st) {
    if (!grow_slots((void **)&it->slots, &it->cap, it->ci, it->cycle_length, sizeof *it->slots, "interleave", st))
        return NULL;
    pslot *s = it->slots[it->ci];
    if (s) return s;
    s = tfc_calloc(1, sizeof *s);
    if (s) {
        s->q = tfc_calloc((size_t)it->qcap * (size_t)(it->n ? it->n : 1), sizeof *s->q);
        s->qst = tfc_calloc((size_t)it->qcap, sizeof *s->qst);
    }
    if (!s || !s->q || !s->qst) {
        if (s) {
            tfc_free(s->q);
            tfc_free(s->qst);
        }
        tfc_free(s);
        tfc_status_oom(st, "interleave", 0);
        return NULL;
    }
    return it->slots[it->ci] = s;
}

static void wake_worker(pileave_iter *it) {
    if (it->idle > 0) pthread_cond_signal(&it->work_cv);
}

/* A worker fills the free queue entries of one slot (at most FETCH_RUN in a row, the current slot first). The
 * entries past the queue's tail are its own while the slot is busy: the consumer only pops from the head, so
 * they are written outside the lock and published one by one. */
#define FETCH_RUN 8

static void *pileave_worker(void *arg) {
    pileave_iter *it = arg;
    const ileave_params *ip = it->base.ds->p;
    int n = it->n;
    pthread_mutex_lock(&it->mu);
    while (!it->cancelled) {
        pslot *s = pick_work(it);
        if (!s) {
            it->idle++;
            pthread_cond_wait(&it->work_cv, &it->mu);
            it->idle--;
            continue;
        }
        s->busy = true;
        data_iter *sit = s->it;
        int tail = (s->qh + s->qn) % it->qcap, run = it->qcap - s->qn;
        if (run > FETCH_RUN) run = FETCH_RUN;
        for (int j = 0; j < run; j++) {
            int k = (tail + j) % it->qcap;
            tfc_tensor **dst = s->q + (size_t)k * n;
            pthread_mutex_unlock(&it->mu);
            bool e = false;
            tfc_status st = TFC_STATUS_INIT;
            bool ok = data_iter_next(sit, dst, &e, &st);
            if (ok && !e && ip->check && !data_spec_check(&it->base.ds->spec, dst, it->base.ds->kind->name, &st)) {
                data_unref_n(dst, n);
                ok = false;
            }
            if (!ok && st.code == TFC_OK) tfc_status_set(&st, TFC_INTERNAL, "interleave: failed without a status");
            if (!e) s->qst[k] = ok ? (tfc_status)TFC_STATUS_INIT : st;
            pthread_mutex_lock(&it->mu);
            if (e) s->ended = true;
            else s->qn++;
            if (it->consumer_waiting) pthread_cond_signal(&it->ready_cv);
            if (e || !ok || it->cancelled) break;
        }
        s->busy = false;
    }
    pthread_mutex_unlock(&it->mu);
    return NULL;
}

/* Pops the oldest entry of s (lock held). */
static bool pop(pileave_iter *it, pslot *s, tfc_tensor **out, tfc_status *st) {
    int k = s->qh;
    s->qh = (s->qh + 1) % it->qcap;
    s->qn--;
    if (s->qn <= it->qcap / 2) wake_worker(it); /* refills come in runs, not one wake-up per element */
    if (s->qst[k].code != TFC_OK) {
        *st = s->qst[k];
        return false;
    }
    memcpy(out, s->q + (size_t)k * it->n, (size_t)it->n * sizeof *out);
    memset(s->q + (size_t)k * it->n, 0, (size_t)it->n * sizeof *out);
    return true;
}

static bool pileave_next(data_iter *it_, tfc_tensor **out, bool *end, tfc_status *st) {
    pileave_iter *it = (pileave_iter *)it_;
    pthread_mutex_lock(&it->mu);
    if (!it->started) {
        it->started = true;
        for (int i = 0; i < it->want_threads; i++) {
            if (pthread_create(&it->threads[i], NULL, pileave_worker, it) != 0) break;
            it->n_threads++;
        }
        if (it->n_threads == 0) {
            pthread_mutex_unlock(&it->mu);
            return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "interleave: cannot start a thread");
        }
    }
    bool ok = true;
    while (!it->end_of_input || it->num_open > 0) {
        pslot *s = pslot_current(it, st);
        if (!s) {
            ok = false;
            break;
        }
        if (s->it) {
            while (s->qn == 0 && !s->ended) {
                if (!it->deterministic) { /* take a ready element of another slot */
                    for (int64_t k = 1; k < it->n_used; k++) {
                        pslot *o = pslot_after(it, k);
                        if (o && o->qn > 0) {
                            ok = pop(it, o, out, st);
                            pthread_mutex_unlock(&it->mu);
                            return ok;
                        }
                    }
                }
                it->consumer_waiting = true;
                pthread_cond_wait(&it->ready_cv, &it->mu);
                it->consumer_waiting = false;
            }
            if (s->qn > 0) {
                ok = pop(it, s, out, st);
                if (ok && ++it->bi == it->block_length) ADVANCE(it);
                pthread_mutex_unlock(&it->mu);
                return ok;
            }
            /* ended and drained: no worker touches it any more */
            slot old = {s->ds, s->it};
            s->ds = NULL;
            s->it = NULL;
            s->ended = false;
            it->num_open--;
            ADVANCE(it);
            pthread_mutex_unlock(&it->mu);
            close_slot(&old);
            pthread_mutex_lock(&it->mu);
        } else if (!it->end_of_input) {
            pthread_mutex_unlock(&it->mu);
            bool e = false;
            tfc_dataset *ds = NULL;
            data_iter *sit = NULL;
            ok = open_inner(it_, &it->x, &ds, &sit, &e, st);
            pthread_mutex_lock(&it->mu);
            if (!ok) break;
            if (e) {
                it->end_of_input = true;
            } else {
                s->ds = ds;
                s->it = sit;
                s->qh = s->qn = 0;
                it->num_open++;
                if (it->ci >= it->n_used) it->n_used = it->ci + 1;
                wake_worker(it);
            }
        } else {
            ADVANCE(it);
        }
    }
    if (ok) *end = true;
    pthread_mutex_unlock(&it->mu);
    return ok;
}

static void pileave_iter_free(data_iter *it_) {
    pileave_iter *it = (pileave_iter *)it_;
    if (it->threads) {
        pthread_mutex_lock(&it->mu);
        it->cancelled = true;
        pthread_cond_broadcast(&it->work_cv);
        pthread_mutex_unlock(&it->mu);
        for (int i = 0; i < it->n_threads; i++) pthread_join(it->threads[i], NULL);
        pthread_mutex_destroy(&it->mu);
        pthread_cond_destroy(&it->work_cv);
        pthread_cond_destroy(&it->ready_cv);
    }
    for (int64_t i = 0; i < it->cap; i++) {
        pslot *s = it->slots[i];
        if (!s) continue;
        slot sl = {s->ds, s->it};
        close_slot(&sl);
        data_unref_n(s->q, it->qcap * it->n);
        tfc_free(s->q);
        tfc_free(s->qst);
        tfc_free(s);
    }
    tfc_free(it->slots);
    tfc_free(it->threads);
    ileave_in_free(&it->x, it_->ds->inputs[0]->spec.n);
}

static const data_iter_vt pileave_vt = {pileave_next, pileave_iter_free};

static data_iter *pileave_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    const ileave_params *ip = ds->p;
    pileave_iter *it = data_iter_alloc(sizeof *it, &pileave_vt, ds, ictx, st);
    if (!it) return NULL;
    it->cycle_length = resolve_cycle(ip->p.cycle_length);
    it->block_length = ip->p.block_length;
    it->n = ds->spec.n;
    int64_t q = it->block_length < QUEUE_MIN ? QUEUE_MIN : it->block_length > QUEUE_MAX ? QUEUE_MAX : it->block_length;
    it->qcap = (int)q;
    it->deterministic = ip->p.deterministic == TFC_DEFAULT ? ictx->deterministic : ip->p.deterministic == TFC_YES;
    int64_t t = ip->p.num_parallel_calls == TFC_AUTOTUNE ? ictx->max_threads : ip->p.num_parallel_calls;
    if (t > it->cycle_length) t = it->cycle_length;
    if (t > ictx->max_threads) t = ictx->max_threads;
    it->want_threads = t < 1 ? 1 : (int)t;
    it->threads = tfc_calloc((size_t)it->want_threads, sizeof *it->threads);
    if (!it->threads) {
        tfc_status_oom(st, "interleave", 0);
        data_iter_free(&it->base);
        return NULL;
    }
    pthread_mutex_init(&it->mu, NULL);
    pthread_cond_init(&it->work_cv, NULL);
    pthread_cond_init(&it->ready_cv, NULL);
    if (!ileave_in_init(&it->x, ds, ictx, st)) {
        data_iter_free(&it->base);
        return NULL;
    }
    return &it->base;
}

/* ---- nodes ------------------------------------------------------------------------------------------------------ */
static void ileave_free(tfc_dataset *ds) {
    ileave_params *ip = ds->p;
    if (ip->p.user_free) ip->p.user_free(ip->p.user);
}

static void ileave_describe(const tfc_dataset *ds, data_strbuf *b) {
    const ileave_params *ip = ds->p;
    data_strbuf_printf(b, "f=%p, user=%p", (void *)(uintptr_t)ip->p.fn, ip->p.user);
    if (!ip->p.flat_map)
        data_strbuf_printf(b, ", cycle_length=%lld, block_length=%lld", (long long)ip->p.cycle_length,
                           (long long)ip->p.block_length);
    if (ip->p.num_parallel_calls)
        data_strbuf_printf(b, ", num_parallel_calls=%lld, deterministic=%d", (long long)ip->p.num_parallel_calls,
                           (int)ip->p.deterministic);
}

static const data_kind ileave_kind = {"InterleaveDataset", ileave_make_iter, NULL, ileave_free, ileave_describe};
static const data_kind flat_kind = {"FlatMapDataset", ileave_make_iter, NULL, ileave_free, ileave_describe};
static const data_kind pileave_kind = {"ParallelInterleaveDatasetV4", pileave_make_iter, NULL, ileave_free,
                                       ileave_describe};

tfc_dataset *data_interleave_new(tfc_dataset *in, const data_interleave_params *p, const char *structure,
                                 const tfc_tensor_spec *spec, tfc_status *st) {
    const char *what = p->flat_map ? "flat_map" : "interleave";
    const char *err = NULL;
    char msg[sizeof st->msg];
    if (!in) err = "";
    else if (!p->fn) err = "NULL function";
    /* as TensorFlow's InterleaveDataset op: AUTOTUNE is the only value below 1 a length may take (cycle only) */
    else if (!p->flat_map && p->cycle_length < 1 && p->cycle_length != TFC_AUTOTUNE)
        err = "cycle_length must be greater than zero.";
    else if (!p->flat_map && p->block_length < 1) err = "block_length must be greater than zero.";
    else if (p->num_parallel_calls < 0 && p->num_parallel_calls != TFC_AUTOTUNE)
        err = "num_parallel_calls must be positive or AUTOTUNE";
    else if (p->cycle_length > 0 && p->num_parallel_calls > p->cycle_length)
        err = "If `cycle_length` is set to a fixed value, `num_parallel_calls` must be either `tf.data.AUTOTUNE` or "
              "a value less than or equal to `cycle_length`";
    if (err) {
        if (p->user_free) p->user_free(p->user);
        if (!in) return data_check_input(in, st), NULL;
        snprintf(msg, sizeof msg, "%s: %s (cycle_length %lld, block_length %lld, num_parallel_calls %lld)", what, err,
                 (long long)p->cycle_length, (long long)p->block_length, (long long)p->num_parallel_calls);
        tfc_dataset_unref(in);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s", msg);
        return NULL;
    }
    const data_kind *k = p->flat_map ? &flat_kind : p->num_parallel_calls ? &pileave_kind : &ileave_kind;
    tfc_dataset *ds = data_ds_new(k, sizeof(ileave_params), &in, 1, st);
    if (!ds) {
        if (p->user_free) p->user_free(p->user);
        return NULL;
    }
    ileave_params *ip = ds->p;
    ip->p = *p;
    if (!data_spec_init(&ds->spec, structure ? structure : ".", -1, spec, st)) return data_ds_fail(ds);
    for (int i = 0; spec && i < ds->spec.n; i++)
        ip->check = ip->check || spec[i].dtype != TFC_INVALID_DTYPE || spec[i].shape.rank >= 0;
    tfc_status_clear(st);
    return ds;
}

tfc_dataset *tfc_dataset_interleave(tfc_dataset *in, tfc_data_dataset_fn fn, void *user,
                                    const tfc_interleave_opts *opts, tfc_status *st) {
    tfc_interleave_opts o = opts ? *opts : (tfc_interleave_opts){.cycle_length = TFC_AUTOTUNE, .block_length = 1};
    data_interleave_params p = {fn, user, o.user_free, o.cycle_length, o.block_length, o.num_parallel_calls,
                                o.deterministic, false};
    return data_interleave_new(in, &p, o.output_structure, o.output_spec, st);
}

tfc_dataset *tfc_dataset_flat_map(tfc_dataset *in, tfc_data_dataset_fn fn, void *user, const tfc_flat_map_opts *opts,
                                  tfc_status *st) {
    tfc_flat_map_opts o = opts ? *opts : (tfc_flat_map_opts){0};
    data_interleave_params p = {fn, user, o.user_free, 1, 1, 0, TFC_DEFAULT, true};
    return data_interleave_new(in, &p, o.output_structure, o.output_spec, st);
}
