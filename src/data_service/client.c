/* The consumer side of the tf.data service: register_dataset, from_dataset_id, distribute, and the
 * DataServiceDataset iterator. The iterator runs one thread per worker; each fetches elements from its worker
 * into a bounded queue that next() drains. In distributed_epoch a thread asks the dispatcher for a split, reads
 * it to its end from its worker and asks for the next; a thread whose worker fails puts its split back, with the
 * count of elements already received, for another thread to finish (see the header's FAULTS). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data/data_graph.h"
#include "data_service/ds_internal.h"
#include "distribute/transport.h"

#define MAX_WORKERS 256
#define WORKER_TIMEOUT_S 3.0

typedef struct svc_params {
    char service[256], job_name[256];
    int mode;
    int64_t dataset_id, num_splits, max_outstanding, worker_wait_ms, consumer_index, num_consumers;
    double timeout;
    _Atomic int64_t iterations;   /* iterators made so far: the repetition a named job is joined for */
} svc_params;

typedef struct qent {
    uint32_t code;
    uint8_t *p;
    uint64_t n;
} qent;

typedef struct pending_split {
    int64_t split, got;
} pending_split;

typedef struct svc_iter svc_iter;
typedef struct wthread {
    svc_iter *it;
    char addr[256];
    int index;
    pthread_t th;
    bool running, finished, dead;
} wthread;

struct svc_iter {
    data_iter base;
    ps_transport *disp;
    int64_t job, client, repetition;
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* queue changes, threads end, splits come back */
    qent *q;
    int head, count, cap;
    pending_split *retry;
    int n_retry, cap_retry;
    bool splits_done;
    int holding;              /* splits threads hold (reading, warming up, or asking for one) */
    wthread *w[MAX_WORKERS];
    int n_w, alive;
    volatile int stop;
    tfc_status fatal;         /* an error a worker answered with (other than UNAVAILABLE) */
    double last_refresh, no_worker_since;
    bool started;
    /* coordinated reads: the job's workers in round order, and the next round */
    ps_transport **cw;
    int n_cw;
    int64_t round, cseq;
};

/* ---- the queue ------------------------------------------------------------------------------------------------------- */
/* Pushes one received entry (copied); waits while the queue is full. False when the iterator stops. */
static bool push(svc_iter *it, uint32_t code, const uint8_t *p, uint64_t n) {
    uint8_t *copy = tfc_malloc(n ? n : 1);
    if (!copy) return false;
    memcpy(copy, p, n);
    pthread_mutex_lock(&it->mu);
    while (it->count == it->cap && !it->stop) pthread_cond_wait(&it->cv, &it->mu);
    if (it->stop) {
        pthread_mutex_unlock(&it->mu);
        tfc_free(copy);
        return false;
    }
    it->q[(it->head + it->count++) % it->cap] = (qent){code, copy, n};
    pthread_cond_broadcast(&it->cv);
    pthread_mutex_unlock(&it->mu);
    return true;
}

static void set_fatal(svc_iter *it, const tfc_status *st) {
    pthread_mutex_lock(&it->mu);
    if (it->fatal.code == TFC_OK) it->fatal = *st;
    pthread_cond_broadcast(&it->cv);
    pthread_mutex_unlock(&it->mu);
}

/* ---- worker threads ------------------------------------------------------------------------------------------------ */
/* One GetElements round trip for up to want elements (-1: as many as half the queue; 0: none, the worker only
 * starts the task); pushes what came. *got counts elements received, *end the task's end. */
static bool fetch(wthread *w, ps_transport *t, int64_t split, int64_t skip, int64_t *seq, int64_t *got, bool *end,
                  tfc_status *st, int64_t want) {
    svc_iter *it = w->it;
    const svc_params *p = it->base.ds->p;
    if (want < 0)
        want = it->cap / 2 < 1 ? 1 : it->cap / 2 > DS_MAX_ELEMENTS_PER_REPLY ? DS_MAX_ELEMENTS_PER_REPLY : it->cap / 2;
    ds_msg q = {.op = DS_GET_ELEMENTS,
                .v = {it->job, p->dataset_id, split, p->num_splits, skip, it->client * MAX_WORKERS + w->index, ++*seq, want}},
           r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    if (!ds_call(t, &q, &r, &raw, &rn, st)) return false;
    uint32_t count = 0;
    size_t pos = 0;
    bool ok = ds_elements_open(r.blob, r.blob_len, &count, &pos, st);
    for (uint32_t i = 0; ok && i < count; i++) {
        uint32_t code;
        const uint8_t *e;
        uint64_t n;
        ok = ds_elements_next(r.blob, r.blob_len, &pos, &code, &e, &n, st);
        if (ok && !push(it, code, e, n)) {
            ok = false;
            tfc_status_set(st, TFC_CANCELLED, "iterator stopped");
        }
        if (ok) ++*got;
    }
    *end = r.v[1] != 0;
    t->free_reply(raw, rn);
    return ok;
}

/* Takes a split to read: one put back by a failed thread first, else the dispatcher's next. -1: none now. */
static int64_t next_split(wthread *w, int64_t *got, int64_t *dseq, tfc_status *st) {
    svc_iter *it = w->it;
    pthread_mutex_lock(&it->mu);
    if (it->n_retry) {
        pending_split s = it->retry[--it->n_retry];
        it->holding++;
        pthread_mutex_unlock(&it->mu);
        *got = s.got;
        return s.split;
    }
    const bool done = it->splits_done;
    if (!done) it->holding++; /* holds the right to finish the epoch while asking */
    pthread_mutex_unlock(&it->mu);
    if (done) return -1;
    ds_msg q = {.op = DS_GET_SPLIT, .v = {it->job, it->client * MAX_WORKERS + w->index, ++*dseq}}, r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    int64_t split = -1;
    bool ok = ds_call(it->disp, &q, &r, &raw, &rn, st);
    if (ok) {
        split = r.v[0];
        it->disp->free_reply(raw, rn);
    }
    pthread_mutex_lock(&it->mu);
    if (!ok || split < 0) {
        if (ok) it->splits_done = true;
        it->holding--;
        pthread_cond_broadcast(&it->cv);
    }
    pthread_mutex_unlock(&it->mu);
    *got = 0;
    return ok ? split : -2;
}

/* Puts a split back for another thread, with the count of its elements already received (it->mu held). */
static void give_back(svc_iter *it, int64_t split, int64_t got) {
    if (it->n_retry == it->cap_retry) {
        const int nc = it->cap_retry * 2 + 4;
        pending_split *r = tfc_realloc(it->retry, (size_t)nc * sizeof *r);
        if (r) {
            it->retry = r;
            it->cap_retry = nc;
        }
    }
    if (it->n_retry < it->cap_retry) it->retry[it->n_retry++] = (pending_split){split, got};
}

static void *worker_main(void *arg) {
    wthread *w = arg;
    svc_iter *it = w->it;
    const svc_params *p = it->base.ds->p;
    tfc_status st = TFC_STATUS_INIT;
    int64_t seq = 0, dseq = 0;
    /* a worker answers within ~20 ms (it never waits long for elements), so a silent one is soon given up */
    ps_transport *t = ps_transport_nng(w->addr, p->timeout < WORKER_TIMEOUT_S ? p->timeout : WORKER_TIMEOUT_S, &st);
    bool dead = t == NULL;
    if (p->mode == DS_MODE_PARALLEL_EPOCHS) {
        bool end = false;
        int64_t got = 0;
        while (!dead && !end && !it->stop)
            if (!fetch(w, t, -1, 0, &seq, &got, &end, &st, -1)) dead = true;
        if (dead && st.code != TFC_UNAVAILABLE && st.code != TFC_CANCELLED) set_fatal(it, &st);
        w->finished = end;
    } else {
        /* cur: the split being read; nxt: the following one, whose task the worker already builds and fills (a
         * warm-up request for no elements), so the worker is not idle between splits */
        int64_t cur = -1, cur_got = 0, nxt = -1, nxt_got = 0;
        while (!dead && !it->stop) {
            if (cur < 0 && nxt >= 0) {
                cur = nxt, cur_got = nxt_got;
                nxt = -1;
            }
            if (cur < 0) {
                cur = next_split(w, &cur_got, &dseq, &st);
                if (cur == -2) { /* the dispatcher failed */
                    set_fatal(it, &st);
                    break;
                }
                if (cur < 0) {
                    pthread_mutex_lock(&it->mu);
                    const bool over = it->splits_done && !it->n_retry && !it->holding;
                    if (!over && !it->stop) { /* another thread may still hand a split back */
                        const struct timespec until = ds_deadline(50);
                        pthread_cond_timedwait(&it->cv, &it->mu, &until);
                    }
                    pthread_mutex_unlock(&it->mu);
                    if (over) break;
                    continue;
                }
            }
            bool end = false;
            if (nxt < 0 && (nxt = next_split(w, &nxt_got, &dseq, &st)) >= 0) {
                int64_t none = 0;
                dead = !fetch(w, t, nxt, nxt_got, &seq, &none, &end, &st, 0);
                end = false;
            } else if (nxt == -2) {
                set_fatal(it, &st);
                nxt = -1;
            }
            const int64_t skip = cur_got;
            while (!dead && !end && !it->stop)
                if (!fetch(w, t, cur, skip, &seq, &cur_got, &end, &st, -1)) dead = true;
            pthread_mutex_lock(&it->mu);
            if (!end && !it->stop) { /* hand the rest of the splits to another worker */
                give_back(it, cur, cur_got);
                if (nxt >= 0) give_back(it, nxt, nxt_got), it->holding--;
                nxt = -1;
                dead = true;
            }
            it->holding--;
            cur = -1;
            pthread_cond_broadcast(&it->cv);
            pthread_mutex_unlock(&it->mu);
            if (dead && st.code != TFC_UNAVAILABLE && st.code != TFC_CANCELLED) set_fatal(it, &st);
        }
        if (nxt >= 0) { /* stopped with a split still unread */
            pthread_mutex_lock(&it->mu);
            give_back(it, nxt, nxt_got);
            it->holding--;
            pthread_mutex_unlock(&it->mu);
        }
        w->finished = !dead;
    }
    ps_transport_free(t);
    pthread_mutex_lock(&it->mu);
    w->dead = dead;
    it->alive--;
    pthread_cond_broadcast(&it->cv);
    pthread_mutex_unlock(&it->mu);
    return NULL;
}

/* Starts a thread for every listed worker that has none yet (it->mu held). */
static void spawn_workers(svc_iter *it, const char *list) {
    for (const char *s = list; s && *s;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        bool known = false;
        for (int i = 0; i < it->n_w && !known; i++) known = strlen(it->w[i]->addr) == n && !strncmp(it->w[i]->addr, s, n);
        if (!known && n < sizeof it->w[0]->addr && it->n_w < MAX_WORKERS) {
            wthread *w = tfc_calloc(1, sizeof *w);
            if (w) {
                w->it = it;
                w->index = it->n_w;
                memcpy(w->addr, s, n);
                if (pthread_create(&w->th, NULL, worker_main, w) == 0) {
                    w->running = true;
                    it->w[it->n_w++] = w;
                    it->alive++;
                } else {
                    tfc_free(w);
                }
            }
        }
        s = e ? e + 1 : NULL;
    }
}

static bool refresh_workers(svc_iter *it, tfc_status *st) {
    ds_msg q = {.op = DS_GET_WORKERS}, r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    char list[DS_STR_MAX + 1];
    if (!ds_call(it->disp, &q, &r, &raw, &rn, st)) return false;
    ds_msg_str(&r, list, sizeof list);
    it->disp->free_reply(raw, rn);
    pthread_mutex_lock(&it->mu);
    if (!it->stop) spawn_workers(it, list);
    pthread_mutex_unlock(&it->mu);
    it->last_refresh = ds_now();
    return true;
}

/* ---- the iterator ---------------------------------------------------------------------------------------------------- */
/* Connects to each worker of a coordinated job's list (the order of its rounds). */
static bool connect_round_workers(svc_iter *it, const char *list, tfc_status *st) {
    const svc_params *p = it->base.ds->p;
    for (const char *s = list; s && *s && it->n_cw < MAX_WORKERS;) {
        const char *e = strchr(s, ',');
        char addr[256];
        snprintf(addr, sizeof addr, "%.*s", (int)(e ? e - s : (ptrdiff_t)strlen(s)), s);
        if (!(it->cw[it->n_cw] = ps_transport_nng(addr, p->timeout < WORKER_TIMEOUT_S ? p->timeout : WORKER_TIMEOUT_S, st)))
            return false;
        it->n_cw++;
        s = e ? e + 1 : NULL;
    }
    return it->n_cw > 0 || tfc_status_set(st, TFC_UNAVAILABLE, "coordinated job: no workers");
}

static bool start(svc_iter *it, tfc_status *st) {
    const svc_params *p = it->base.ds->p;
    if (!(it->disp = ps_transport_nng(p->service, p->timeout, st))) return false;
    ds_msg q = {.op = DS_GET_OR_CREATE_JOB, .v = {p->dataset_id, p->mode, p->num_splits, p->num_consumers,
                                                   it->repetition},
                .str = p->job_name, .str_len = (uint32_t)strlen(p->job_name)},
           r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    const double t0 = ds_now();
    /* a coordinated job takes the workers registered when it is made: wait for the first one */
    while (!ds_call(it->disp, &q, &r, &raw, &rn, st)) {
        if (st->code != TFC_UNAVAILABLE || !p->num_consumers || ds_now() - t0 > p->worker_wait_ms / 1000.0) return false;
        const struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    it->job = r.v[0];
    char list[DS_STR_MAX + 1] = "";
    ds_msg_str(&r, list, sizeof list);
    it->disp->free_reply(raw, rn);
    it->started = true;
    it->no_worker_since = ds_now();
    if (p->num_consumers) {
        if (!(it->cw = tfc_calloc(MAX_WORKERS, sizeof *it->cw))) return tfc_status_oom(st, "workers", MAX_WORKERS);
        return connect_round_workers(it, list, st);
    }
    return refresh_workers(it, st);
}

/* Coordinated reads: round r comes from worker r % W, as element (r / W) * num_consumers + consumer_index of that
 * worker's stream, so in every round all consumers read from the same worker. */
static bool coordinated_next(svc_iter *it, tfc_tensor **out, bool *end, tfc_status *st) {
    const svc_params *p = it->base.ds->p;
    const int w = (int)(it->round % it->n_cw);
    const int64_t e = it->round / it->n_cw * p->num_consumers + p->consumer_index;
    const double deadline = ds_now() + p->timeout;
    ps_transport *t = it->cw[w];
    for (;;) {
        ds_msg q = {.op = DS_GET_ELEMENTS,
                    .v = {it->job, p->dataset_id, -2, p->num_consumers, e, it->client * MAX_WORKERS + w, ++it->cseq, 1}},
               r;
        uint8_t *raw = NULL;
        size_t rn = 0;
        if (!ds_call(t, &q, &r, &raw, &rn, st)) return false;
        uint32_t count = 0, code = 0;
        size_t pos = 0;
        const uint8_t *el = NULL;
        uint64_t n = 0;
        bool ok = ds_elements_open(r.blob, r.blob_len, &count, &pos, st) &&
                  (!count || ds_elements_next(r.blob, r.blob_len, &pos, &code, &el, &n, st));
        if (ok && count) {
            ok = code == TFC_OK ? data_decode_element(el, n, out, it->base.ds->spec.n, "tf.data service element", st)
                                : tfc_status_set(st, (tfc_code)code, "%.*s", (int)(n < 255 ? n : 255), (const char *)el);
            it->round++;
        }
        const bool done = ok && !count && r.v[1];
        t->free_reply(raw, rn);
        if (!ok || count) return ok;
        if (done) {
            *end = true;
            return true;
        }
        if (ds_now() > deadline)
            return tfc_status_set(st, TFC_DEADLINE_EXCEEDED, "coordinated read: round %lld of job %lld not ready from "
                                  "worker %s within %.3g s (are the other consumers reading?)", (long long)it->round,
                                  (long long)it->job, t->addr, p->timeout);
    }
}

static bool svc_next(data_iter *base, tfc_tensor **out, bool *end, tfc_status *st) {
    svc_iter *it = (svc_iter *)base;
    const svc_params *p = base->ds->p;
    if (!it->started && !start(it, st)) return false;
    if (p->num_consumers) return coordinated_next(it, out, end, st);
    for (;;) {
        pthread_mutex_lock(&it->mu);
        if (it->count) {
            qent e = it->q[it->head];
            it->head = (it->head + 1) % it->cap;
            it->count--;
            pthread_cond_broadcast(&it->cv);
            pthread_mutex_unlock(&it->mu);
            bool ok;
            if (e.code == TFC_OK) {
                ok = data_decode_element(e.p, e.n, out, base->ds->spec.n, "tf.data service element", st);
            } else {
                ok = tfc_status_set(st, (tfc_code)e.code, "%.*s", (int)(e.n < 255 ? e.n : 255), (const char *)e.p);
            }
            tfc_free(e.p);
            return ok;
        }
        if (it->fatal.code != TFC_OK) {
            *st = it->fatal;
            it->fatal = (tfc_status)TFC_STATUS_INIT;
            pthread_mutex_unlock(&it->mu);
            return false;
        }
        const bool dist = p->mode == DS_MODE_DISTRIBUTED_EPOCH;
        int finished = 0, dead = 0;
        for (int i = 0; i < it->n_w; i++) {
            finished += it->w[i]->finished;
            dead += it->w[i]->dead;
        }
        const bool owed = !(it->splits_done && !it->n_retry && !it->holding);
        if (it->alive == 0 && (dist ? !owed : finished > 0)) {
            pthread_mutex_unlock(&it->mu);
            *end = true;
            return true;
        }
        const double now = ds_now();
        if (it->alive > 0) it->no_worker_since = now;
        const bool waited_out = it->alive == 0 && now - it->no_worker_since > p->worker_wait_ms / 1000.0;
        if (waited_out) {
            pthread_mutex_unlock(&it->mu);
            return tfc_status_set(st, TFC_UNAVAILABLE, "no tf.data service worker left for job %lld of dispatcher %s "
                                  "(%d workers failed) while elements are still owed", (long long)it->job,
                                  p->service, dead);
        }
        const bool refresh = (dist || it->alive == 0) && now - it->last_refresh > 0.5;
        if (!refresh) {
            const struct timespec until = ds_deadline(50);
            pthread_cond_timedwait(&it->cv, &it->mu, &until);
        }
        pthread_mutex_unlock(&it->mu);
        if (refresh) {
            tfc_status rs = TFC_STATUS_INIT;
            if (!refresh_workers(it, &rs) && it->alive == 0) {
                *st = rs;
                return false;
            }
        }
    }
}

static void svc_free(data_iter *base) {
    svc_iter *it = (svc_iter *)base;
    pthread_mutex_lock(&it->mu);
    it->stop = 1;
    pthread_cond_broadcast(&it->cv);
    pthread_mutex_unlock(&it->mu);
    for (int i = 0; i < it->n_w; i++) {
        if (it->w[i]->running) pthread_join(it->w[i]->th, NULL);
        tfc_free(it->w[i]);
    }
    for (int i = 0; i < it->count; i++) tfc_free(it->q[(it->head + i) % it->cap].p);
    tfc_free(it->q);
    tfc_free(it->retry);
    for (int i = 0; i < it->n_cw; i++) ps_transport_free(it->cw[i]);
    tfc_free(it->cw);
    ps_transport_free(it->disp);
    pthread_mutex_destroy(&it->mu);
    pthread_cond_destroy(&it->cv);
}

static const data_iter_vt svc_vt = {svc_next, svc_free};

static uint64_t fresh_client_id(void) {
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^ ++counter * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    return (x & ((1ull << 50) - 1)) + 1; /* times MAX_WORKERS stays positive */
}

static data_iter *svc_make_iter(tfc_dataset *ds, const data_ictx *ictx, tfc_status *st) {
    const svc_params *p = ds->p;
    svc_iter *it = data_iter_alloc(sizeof *it, &svc_vt, ds, ictx, st);
    if (!it) return NULL;
    it->cap = (int)p->max_outstanding;
    if (!(it->q = tfc_calloc((size_t)it->cap, sizeof *it->q))) {
        tfc_free(it);
        return tfc_status_oom(st, "data service buffer", (size_t)it->cap * sizeof(qent)), NULL;
    }
    it->client = (int64_t)fresh_client_id();
    it->repetition = atomic_fetch_add(&((svc_params *)ds->p)->iterations, 1);
    pthread_mutex_init(&it->mu, NULL);
    pthread_cond_init(&it->cv, NULL);
    return &it->base;
}

static void svc_describe(const tfc_dataset *ds, data_strbuf *b) {
    const svc_params *p = ds->p;
    data_strbuf_printf(b, "dataset_id=%lld, processing_mode=%s, address=\"%s\", job_name=\"%s\", "
                       "max_outstanding_requests=%lld", (long long)p->dataset_id,
                       p->mode == DS_MODE_DISTRIBUTED_EPOCH ? "distributed_epoch" : "parallel_epochs", p->service,
                       p->job_name, (long long)p->max_outstanding);
}

static const data_kind svc_kind = {"DataServiceDatasetV4", svc_make_iter, NULL, NULL, svc_describe};

/* ---- API ------------------------------------------------------------------------------------------------------------- */
static ps_transport *dispatcher(const char *service, double timeout, tfc_status *st) {
    char addr[256];
    if (!ds_address(service, addr, sizeof addr, st)) return NULL;
    return ps_transport_nng(addr, timeout > 0 ? timeout : 10, st);
}

int64_t tfc_data_service_register_dataset(const char *service, const tfc_dataset *ds, tfc_status *st) {
    void *g = NULL;
    size_t n = 0;
    if (!ds) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "register_dataset: NULL dataset"), -1;
    if (!tfc_dataset_serialize(ds, &g, &n, st)) return -1;
    ps_transport *t = dispatcher(service, 0, st);
    int64_t id = -1;
    ds_msg q = {.op = DS_REGISTER_DATASET, .blob = g, .blob_len = n}, r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    if (t && ds_call(t, &q, &r, &raw, &rn, st)) {
        id = r.v[0];
        t->free_reply(raw, rn);
        tfc_status_clear(st);
    }
    ps_transport_free(t);
    tfc_free(g);
    return id;
}

tfc_dataset *tfc_data_service_from_dataset_id(int64_t dataset_id, const tfc_distribute_opts *opts, tfc_status *st) {
    tfc_distribute_opts o = opts ? *opts : (tfc_distribute_opts){0};
    int mode = 0;
    if (!o.processing_mode || !strcmp(o.processing_mode, "parallel_epochs")) mode = DS_MODE_PARALLEL_EPOCHS;
    else if (!strcmp(o.processing_mode, "distributed_epoch")) mode = DS_MODE_DISTRIBUTED_EPOCH;
    else return tfc_status_set(st, TFC_INVALID_ARGUMENT, "processing_mode '%s' is not \"parallel_epochs\" or "
                               "\"distributed_epoch\"", o.processing_mode), NULL;
    if (o.num_consumers < 0 || o.num_consumers > 4096 || (o.num_consumers && (o.consumer_index < 0 ||
                                                                             o.consumer_index >= o.num_consumers)))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "consumer_index %lld must be in [0, num_consumers %lld)",
                              (long long)o.consumer_index, (long long)o.num_consumers), NULL;
    if (o.num_consumers && (!o.job_name || !*o.job_name || mode != DS_MODE_PARALLEL_EPOCHS))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "coordinated reads (num_consumers %lld) need a job_name and "
                              "processing_mode \"parallel_epochs\"", (long long)o.num_consumers), NULL;
    if (o.max_outstanding_requests < TFC_AUTOTUNE || o.max_outstanding_requests > (1 << 20))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "max_outstanding_requests %lld",
                              (long long)o.max_outstanding_requests), NULL;
    if (o.job_name && strlen(o.job_name) >= 256)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "job_name longer than 255 bytes"), NULL;
    ps_transport *t = dispatcher(o.service, o.timeout_s, st);
    if (!t) return NULL;
    ds_msg q = {.op = DS_GET_DATASET, .v = {dataset_id}}, r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    tfc_dataset *local = NULL, *ds = NULL;
    if (ds_call(t, &q, &r, &raw, &rn, st)) {
        local = tfc_dataset_deserialize(r.blob, r.blob_len, st);
        t->free_reply(raw, rn);
    }
    ps_transport_free(t);
    int64_t rows = 0;
    if (local && mode == DS_MODE_DISTRIBUTED_EPOCH) rows = data_graph_split_rows(local, st);
    if (local && o.num_consumers && tfc_dataset_cardinality(local) != TFC_INFINITE_CARDINALITY) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "coordinated reads need an infinite dataset (repeat()); dataset %lld "
                       "has cardinality %lld", (long long)dataset_id, (long long)tfc_dataset_cardinality(local));
        rows = -1;
    }
    if (local && rows >= 0 && (ds = data_ds_new(&svc_kind, sizeof(svc_params), NULL, 0, st)) &&
        !data_spec_copy(&ds->spec, &local->spec, st))
        ds = data_ds_fail(ds);
    if (ds) {
        svc_params *p = ds->p;
        ds_address(o.service, p->service, sizeof p->service, st);
        snprintf(p->job_name, sizeof p->job_name, "%s", o.job_name ? o.job_name : "");
        p->mode = mode;
        p->dataset_id = dataset_id;
        /* a worker rebuilds the pipeline per split: splits of 64 rows or more keep that cost small, and 8 or
         * more (up to 256) spread an epoch over the workers */
        p->num_splits = mode != DS_MODE_DISTRIBUTED_EPOCH ? 0 : rows <= 8 ? (rows < 1 ? 1 : rows)
                        : rows / 64 < 8 ? 8 : rows / 64 > 256 ? 256 : rows / 64;
        p->max_outstanding = o.max_outstanding_requests > 0 ? o.max_outstanding_requests : 64;
        p->worker_wait_ms = o.worker_wait_ms > 0 ? o.worker_wait_ms : 10000;
        p->consumer_index = o.consumer_index;
        p->num_consumers = o.num_consumers;
        p->timeout = o.timeout_s > 0 ? o.timeout_s : 10;
        tfc_status_clear(st);
    }
    tfc_dataset_unref(local);
    return ds;
}

tfc_dataset *tfc_dataset_distribute(tfc_dataset *ds, const tfc_distribute_opts *opts, tfc_status *st) {
    if (!data_check_input(ds, st)) return NULL;
    const int64_t id = tfc_data_service_register_dataset(opts ? opts->service : NULL, ds, st);
    tfc_dataset_unref(ds);
    return id < 0 ? NULL : tfc_data_service_from_dataset_id(id, opts, st);
}
