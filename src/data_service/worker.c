/* The tf.data service worker: one task per (job, split) — per job in parallel_epochs — each a rebuilt pipeline
 * iterated by a producer thread into a bounded queue of encoded elements, drained by consumers' GetElements
 * requests. Heartbeats register the worker with the dispatcher and collect finished or abandoned tasks. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/data_graph.h"
#include "data_service/ds_internal.h"
#include "distribute/transport.h"

#define QCAP 64                    /* elements a task buffers ahead of its consumers */
#define REPLY_BYTES (8u << 20)     /* a reply stops growing past this */
#define CACHE_SLOTS 8              /* remembered last replies (one per consumer of a task) */
#define DONE_KEEP_S 30.0           /* a drained task stays this long (a resent last request still finds it) */
#define IDLE_DROP_S 120.0          /* a task no consumer asked for in this long is dropped */
#define MAX_GRAPHS 64

typedef struct wcache {
    int64_t client, seq;
    uint8_t *rep;
    size_t rn;
} wcache;

typedef struct wtask {
    int64_t job, split;
    tfc_iterator *it;
    int n_comp;
    int64_t skip;
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    data_bytes q[QCAP];
    int head, count;
    bool end;
    volatile int stop;
    double last_used;
    wcache cache[CACHE_SLOTS];
    int next_slot;
    /* coordinated reads (num_consumers > 0): element e of the stream goes to whoever asks for index e, once;
     * the window holds elements [base, produced) and the producer waits while it is full */
    int64_t nc, base, produced, wcap;
    data_bytes *win;
    bool *taken;
} wtask;

typedef struct wgraph {
    int64_t id;
    uint8_t *g;
    size_t n;
} wgraph;

struct tfc_worker_server {
    char dispatcher[256], address[256];
    int port;
    double heartbeat_s;
    ps_listener *l;
    ps_transport *disp;
    pthread_t serve_th, hb_th;
    bool serving, heartbeating;
    volatile int stop;
    pthread_mutex_t mu;        /* tasks and graphs */
    wtask **tasks;
    int n_tasks, cap_tasks;
    wgraph graphs[MAX_GRAPHS];
    int n_graphs;
};

/* ---- tasks --------------------------------------------------------------------------------------------------------- */
static void *produce(void *arg) {
    wtask *t = arg;
    tfc_tensor *out[TFC_DATA_MAX_COMPONENTS] = {0};
    data_bytes e = {0};
    while (!t->stop) {
        tfc_status st = TFC_STATUS_INIT, est = TFC_STATUS_INIT;
        bool ok = tfc_iterator_next(t->it, out, t->n_comp, &st);
        if (!ok && st.code == TFC_OUT_OF_RANGE) break;
        if (t->skip > 0) { /* a replayed split: these went to the consumer from the worker that died */
            t->skip--;
            data_unref_n(out, t->n_comp);
            continue;
        }
        e = (data_bytes){0};
        if (!ds_elements_begin(&e, &est) || !ds_elements_add(&e, out, t->n_comp, ok ? NULL : &st, &est)) {
            tfc_free(e.p);
            e = (data_bytes){0};
            ds_elements_begin(&e, &est);
            ds_elements_add(&e, NULL, 0, &est, &est);
        }
        data_unref_n(out, t->n_comp);
        pthread_mutex_lock(&t->mu);
        while ((t->nc ? t->produced - t->base == t->wcap : t->count == QCAP) && !t->stop)
            pthread_cond_wait(&t->cv, &t->mu);
        if (t->stop) {
            pthread_mutex_unlock(&t->mu);
            tfc_free(e.p);
            break;
        }
        if (t->nc) t->win[t->produced++ % t->wcap] = e;
        else t->q[(t->head + t->count++) % QCAP] = e;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
    }
    /* the pipeline's threads and buffers go now; the drained task itself stays a while (DONE_KEEP_S) */
    tfc_iterator_free(t->it);
    t->it = NULL;
    pthread_mutex_lock(&t->mu);
    t->end = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static void task_free(wtask *t) {
    if (!t) return;
    if (t->started) {
        pthread_mutex_lock(&t->mu);
        t->stop = 1;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        pthread_join(t->th, NULL);
    }
    tfc_iterator_free(t->it);
    for (int i = 0; i < t->count; i++) tfc_free(t->q[(t->head + i) % QCAP].p);
    for (int64_t i = t->base; t->win && i < t->produced; i++) tfc_free(t->win[i % t->wcap].p);
    tfc_free(t->win);
    tfc_free(t->taken);
    for (int i = 0; i < CACHE_SLOTS; i++) free(t->cache[i].rep);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    tfc_free(t);
}

/* The graph of a dataset id, from the cache or the dispatcher (w->mu held). */
static const wgraph *graph_of(tfc_worker_server *w, int64_t id, tfc_status *st) {
    for (int i = 0; i < w->n_graphs; i++)
        if (w->graphs[i].id == id) return &w->graphs[i];
    ds_msg q = {.op = DS_GET_DATASET, .v = {id}}, r;
    uint8_t *raw = NULL;
    size_t rn = 0;
    if (!ds_call(w->disp, &q, &r, &raw, &rn, st)) return NULL;
    uint8_t *copy = tfc_malloc(r.blob_len ? r.blob_len : 1);
    if (!copy) {
        w->disp->free_reply(raw, rn);
        return tfc_status_oom(st, "dataset graph", r.blob_len), NULL;
    }
    memcpy(copy, r.blob, r.blob_len);
    w->disp->free_reply(raw, rn);
    if (w->n_graphs == MAX_GRAPHS) { /* forget the oldest */
        tfc_free(w->graphs[0].g);
        memmove(w->graphs, w->graphs + 1, (MAX_GRAPHS - 1) * sizeof w->graphs[0]);
        w->n_graphs--;
    }
    w->graphs[w->n_graphs] = (wgraph){id, copy, r.blob_len};
    return &w->graphs[w->n_graphs++];
}

static wtask *task_get(tfc_worker_server *w, const ds_msg *q, tfc_status *st) {
    const int64_t job = q->v[0], dataset = q->v[1], split = q->v[2], num_splits = q->v[3];
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->n_tasks; i++)
        if (w->tasks[i]->job == job && w->tasks[i]->split == split) {
            wtask *t = w->tasks[i];
            t->last_used = ds_now();
            pthread_mutex_unlock(&w->mu);
            return t;
        }
    wtask *t = NULL;
    tfc_dataset *ds = NULL;
    const bool coordinated = split == -2;
    if (split < -2 || (split >= 0 && split >= num_splits) || q->v[4] < 0 || (coordinated && (num_splits < 1 ||
                                                                                         num_splits > 4096))) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "GetElements: split %lld of %lld, skip %lld", (long long)split,
                       (long long)num_splits, (long long)q->v[4]);
        goto done;
    }
    const wgraph *g = graph_of(w, dataset, st);
    if (!g || !(ds = data_graph_build(g->g, g->n, split < 0 ? 0 : split, split < 0 ? 0 : num_splits, st))) goto done;
    if (w->n_tasks == w->cap_tasks) {
        int nc = w->cap_tasks ? 2 * w->cap_tasks : 16;
        wtask **p = tfc_realloc(w->tasks, (size_t)nc * sizeof *p);
        if (!p) {
            tfc_status_oom(st, "worker tasks", (size_t)nc * sizeof *p);
            goto done;
        }
        w->tasks = p;
        w->cap_tasks = nc;
    }
    if (!(t = tfc_calloc(1, sizeof *t))) {
        tfc_status_oom(st, "worker task", sizeof *t);
        goto done;
    }
    *t = (wtask){.job = job, .split = split, .skip = coordinated ? 0 : q->v[4],
                 .n_comp = tfc_dataset_num_components(ds), .last_used = ds_now()};
    if (coordinated) {
        t->nc = num_splits;
        t->wcap = 16 * t->nc < QCAP ? QCAP : 16 * t->nc;
        t->win = tfc_calloc((size_t)t->wcap, sizeof *t->win);
        t->taken = tfc_calloc((size_t)t->wcap, sizeof *t->taken);
        if (!t->win || !t->taken) {
            tfc_status_oom(st, "coordinated-read window", (size_t)t->wcap * sizeof *t->win);
            tfc_free(t->win);
            tfc_free(t->taken);
            tfc_free(t);
            t = NULL;
            goto done;
        }
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (!(t->it = tfc_iterator_new(ds, st)) || pthread_create(&t->th, NULL, produce, t)) {
        if (st->code == TFC_OK) tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "worker: cannot start a task thread");
        task_free(t);
        t = NULL;
        goto done;
    }
    t->started = true;
    w->tasks[w->n_tasks++] = t;
done:
    tfc_dataset_unref(ds);
    pthread_mutex_unlock(&w->mu);
    return t;
}

/* Up to want queued elements of t, waiting up to 20 ms for the first (want 0: none, at once). */
static bool take_elements(wtask *t, int64_t want, ds_msg *r, data_bytes *blob, tfc_status *st) {
    if (want < 0 || want > DS_MAX_ELEMENTS_PER_REPLY) want = DS_MAX_ELEMENTS_PER_REPLY;
    if (!ds_elements_begin(blob, st)) return false;
    const struct timespec until = ds_deadline(20);
    int64_t n = 0;
    bool ok = true;
    pthread_mutex_lock(&t->mu);
    while (want && !t->count && !t->end)
        if (pthread_cond_timedwait(&t->cv, &t->mu, &until)) break;
    while (ok && t->count && n < want && blob->len < REPLY_BYTES) {
        data_bytes *e = &t->q[t->head];
        ok = ds_elements_add_raw(blob, e->p + 4, e->len - 4, st); /* the entry without its own count */
        if (!ok) break;
        tfc_free(e->p);
        t->head = (t->head + 1) % QCAP;
        t->count--;
        n++;
    }
    r->v[0] = n;
    r->v[1] = t->end && !t->count;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return ok;
}

/* Element number e of a coordinated task's stream (waiting up to 20 ms for it to be produced); r->v[0] 0 when it is
 * not there yet, also when e is a window ahead of the slowest consumer (which must read first: lockstep). Each
 * index is handed out once. */
static bool take_indexed(wtask *t, int64_t e, ds_msg *r, data_bytes *blob, tfc_status *st) {
    if (!ds_elements_begin(blob, st)) return false;
    const struct timespec until = ds_deadline(20);
    bool ok = true;
    pthread_mutex_lock(&t->mu);
    while (e >= t->produced && !t->end && e - t->base < t->wcap)
        if (pthread_cond_timedwait(&t->cv, &t->mu, &until)) break;
    r->v[0] = 0;
    if (e < t->base || (e < t->produced && t->taken[e % t->wcap])) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "coordinated read: element %lld of job %lld was read already",
                            (long long)e, (long long)t->job);
    } else if (e < t->produced) {
        data_bytes *x = &t->win[e % t->wcap];
        ok = ds_elements_add_raw(blob, x->p + 4, x->len - 4, st);
        if (ok) {
            tfc_free(x->p);
            *x = (data_bytes){0};
            t->taken[e % t->wcap] = true;
            r->v[0] = 1;
            while (t->base < t->produced && t->taken[t->base % t->wcap]) t->taken[t->base++ % t->wcap] = false;
        }
    }
    r->v[1] = t->end && e >= t->produced;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    return ok;
}

static void reply_elements(tfc_worker_server *w, const ds_msg *q, uint8_t **rep, size_t *rn) {
    tfc_status st = TFC_STATUS_INIT;
    wtask *t = task_get(w, q, &st);
    if (!t) {
        ds_reply_error(q->op, &st, rep, rn);
        return;
    }
    const int64_t client = q->v[5], seq = q->v[6];
    for (int i = 0; i < CACHE_SLOTS; i++) { /* a resent request gets the same elements again */
        wcache *c = &t->cache[i];
        if (c->rep && c->client == client && c->seq == seq && (*rep = malloc(c->rn))) {
            memcpy(*rep, c->rep, c->rn);
            *rn = c->rn;
            return;
        }
    }
    ds_msg r = {.op = q->op};
    data_bytes blob = {0};
    bool ok = t->nc ? take_indexed(t, q->v[4], &r, &blob, &st) : take_elements(t, q->v[7], &r, &blob, &st);
    r.blob = blob.p;
    r.blob_len = blob.len;
    ok = ok && ds_msg_encode(&r, rep, rn, &st);
    tfc_free(blob.p);
    if (!ok) {
        ds_reply_error(q->op, &st, rep, rn);
        return;
    }
    wcache *c = NULL;
    for (int i = 0; i < CACHE_SLOTS && !c; i++)
        if (t->cache[i].rep && t->cache[i].client == client) c = &t->cache[i];
    if (!c) c = &t->cache[t->next_slot++ % CACHE_SLOTS];
    free(c->rep);
    c->rep = malloc(*rn);
    if (c->rep) memcpy(c->rep, *rep, *rn);
    c->rn = *rn;
    c->client = client;
    c->seq = seq;
}

void ds_worker_handle(void *user, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn) {
    tfc_worker_server *w = user;
    tfc_status st = TFC_STATUS_INIT;
    ds_msg q;
    if (!ds_msg_decode(req, n, &q, &st)) {
        ds_reply_error(1, &st, rep, rn);
        return;
    }
    if (q.op != DS_GET_ELEMENTS) {
        tfc_status_set(&st, TFC_INVALID_ARGUMENT, "a tf.data service worker does not serve op %d", q.op);
        ds_reply_error(q.op, &st, rep, rn);
        return;
    }
    reply_elements(w, &q, rep, rn);
}

/* Drops tasks drained DONE_KEEP_S ago or idle for IDLE_DROP_S. */
static void gc_tasks(tfc_worker_server *w) {
    const double now = ds_now();
    pthread_mutex_lock(&w->mu);
    for (int i = 0; i < w->n_tasks;) {
        wtask *t = w->tasks[i];
        pthread_mutex_lock(&t->mu);
        const bool drained = t->end && !t->count;
        pthread_mutex_unlock(&t->mu);
        if ((drained && now - t->last_used > DONE_KEEP_S) || now - t->last_used > IDLE_DROP_S) {
            w->tasks[i] = w->tasks[--w->n_tasks];
            task_free(t);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&w->mu);
}

/* ---- server ---------------------------------------------------------------------------------------------------------- */
static void *serve_main(void *arg) {
    tfc_worker_server *w = arg;
    tfc_status st = TFC_STATUS_INIT;
    if (!ps_listener_serve(w->l, ds_worker_handle, w, &w->stop, &st)) {
        fprintf(stderr, "tf.data worker %s: %s\n", w->address, st.msg);
        w->stop = 1; /* ends tfc_worker_server_join */
    }
    return NULL;
}

static void *heartbeat_main(void *arg) {
    tfc_worker_server *w = arg;
    while (!w->stop) {
        ds_msg q = {.op = DS_HEARTBEAT, .v = {(int64_t)(w->heartbeat_s * 1000)}, .str = w->address,
                    .str_len = (uint32_t)strlen(w->address)}, r;
        uint8_t *raw = NULL;
        size_t rn = 0;
        tfc_status st = TFC_STATUS_INIT;
        if (ds_call(w->disp, &q, &r, &raw, &rn, &st)) w->disp->free_reply(raw, rn);
        gc_tasks(w);
        for (double slept = 0; slept < w->heartbeat_s && !w->stop; slept += 0.05) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

tfc_worker_server *ds_worker_state_new(const tfc_worker_config *config, tfc_status *st) {
    tfc_worker_config c = config ? *config : (tfc_worker_config){0};
    if (c.port < 0 || c.port > 65535) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "WorkerConfig: port %d", c.port), NULL;
    tfc_worker_server *w = tfc_calloc(1, sizeof *w);
    if (!w) return tfc_status_oom(st, "worker", sizeof *w), NULL;
    pthread_mutex_init(&w->mu, NULL);
    w->port = c.port;
    w->heartbeat_s = (c.heartbeat_interval_ms > 0 ? c.heartbeat_interval_ms : 1000) / 1000.0;
    if (!ds_address(c.dispatcher_address, w->dispatcher, sizeof w->dispatcher, st) ||
        !(w->disp = ps_transport_nng(w->dispatcher, 10, st))) {
        if (st->code == TFC_INVALID_ARGUMENT && !c.dispatcher_address)
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "WorkerConfig: dispatcher_address is required");
        tfc_worker_server_free(w);
        return NULL;
    }
    return w;
}

tfc_worker_server *tfc_worker_server_new(const tfc_worker_config *config, tfc_status *st) {
    tfc_worker_server *w = ds_worker_state_new(config, st);
    if (!w) return NULL;
    char addr[64];
    snprintf(addr, sizeof addr, "0.0.0.0:%d", w->port);
    if (!(w->l = ps_listener_new(addr, st))) {
        tfc_worker_server_free(w);
        return NULL;
    }
    w->port = ps_listener_port(w->l);
    const char *tmpl = config->worker_address ? config->worker_address : "127.0.0.1:%port%";
    const char *at = strstr(tmpl, "%port%");
    if (at) snprintf(w->address, sizeof w->address, "%.*s%d%s", (int)(at - tmpl), tmpl, w->port, at + 6);
    else snprintf(w->address, sizeof w->address, "%s", tmpl);
    if (pthread_create(&w->serve_th, NULL, serve_main, w)) {
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "worker: cannot start its thread");
        tfc_worker_server_free(w);
        return NULL;
    }
    w->serving = true;
    if (pthread_create(&w->hb_th, NULL, heartbeat_main, w)) {
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "worker: cannot start its heartbeat thread");
        tfc_worker_server_free(w);
        return NULL;
    }
    w->heartbeating = true;
    tfc_status_clear(st);
    return w;
}

int tfc_worker_server_port(const tfc_worker_server *w) { return w ? w->port : 0; }
const char *tfc_worker_server_address(const tfc_worker_server *w) { return w ? w->address : ""; }

bool tfc_worker_server_join(tfc_worker_server *w, volatile int *stop, tfc_status *st) {
    ds_wait_stop(stop, &w->stop);
    tfc_status_clear(st);
    return true;
}

void tfc_worker_server_free(tfc_worker_server *w) {
    if (!w) return;
    w->stop = 1;
    if (w->serving) pthread_join(w->serve_th, NULL);
    if (w->heartbeating) pthread_join(w->hb_th, NULL);
    ps_listener_free(w->l);
    ps_transport_free(w->disp);
    for (int i = 0; i < w->n_tasks; i++) task_free(w->tasks[i]);
    tfc_free(w->tasks);
    for (int i = 0; i < w->n_graphs; i++) tfc_free(w->graphs[i].g);
    pthread_mutex_destroy(&w->mu);
    tfc_free(w);
}
