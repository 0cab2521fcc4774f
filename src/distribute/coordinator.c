/* ClusterCoordinator (parameter_server.h): a queue of closures and one thread per worker task that sends them
 * to its worker. A worker that does not answer gets its closure put back at the front of the queue and is
 * probed until it answers again. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "distribute/ps_internal.h"
#include "distribute/ps_strategy_internal.h"

#define PS_MAX_DATASETS 64

enum { RV_PENDING = 0, RV_DONE = 1, RV_FAILED = 2 };

struct tfc_remote_value {
    int state;
    tfc_status st;
    tfc_tensor *out[TFC_REMOTE_MAX_OUTPUTS];
    int n_out;
    tfc_coordinator *c;
};

typedef struct closure {
    uint64_t step;
    char fn[128];
    tfc_tensor *args[PS_MAX_TENSORS];
    int n_args;
    tfc_remote_value rv;
    struct closure *next;       /* queue link */
    struct closure *all_next;   /* every closure, for freeing */
} closure;

typedef struct {
    tfc_coordinator *c;
    int index;
    ps_transport *t;
    int n_made;                 /* per-worker iterators made on this worker since it last failed */
    pthread_t thread;
    bool started;
} worker_thread;

struct tfc_coordinator {
    tfc_ps_strategy *s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    closure *head, *tail, *all;
    int64_t pending;            /* scheduled and not finished */
    bool has_error, stopping;
    tfc_status error;
    int64_t executed, requeued;
    int n_workers;
    worker_thread w[TFC_CLUSTER_MAX_TASKS];
    struct {
        char fn[128];
        uint64_t id;
    } datasets[PS_MAX_DATASETS];
    int n_datasets;
};

static void push_front(tfc_coordinator *c, closure *k) {
    k->next = c->head;
    c->head = k;
    if (!c->tail) c->tail = k;
}

static void push_back(tfc_coordinator *c, closure *k) {
    k->next = NULL;
    if (c->tail) c->tail->next = k;
    else c->head = k;
    c->tail = k;
}

static closure *pop(tfc_coordinator *c) {
    closure *k = c->head;
    if (k) {
        c->head = k->next;
        if (!c->head) c->tail = NULL;
    }
    return k;
}

/* With c->mu held: every queued closure fails with CANCELLED. */
static void cancel_queued(tfc_coordinator *c, const char *why) {
    for (closure *k; (k = pop(c));) {
        k->rv.state = RV_FAILED;
        tfc_status_set(&k->rv.st, TFC_CANCELLED, "closure '%s' cancelled: %s", k->fn, why);
        c->pending--;
    }
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Probes a worker that failed until it answers or the coordinator stops. */
static void wait_for_worker(worker_thread *w) {
    tfc_coordinator *c = w->c;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        const bool stop = c->stopping;
        pthread_mutex_unlock(&c->mu);
        if (stop) return;
        ps_msg req, rep;
        tfc_status st = TFC_STATUS_INIT;
        ps_msg_init(&req, PS_OP_PING, NULL);
        if (ps_rpc(w->t, &req, &rep, NULL, &st)) return;
        sleep_ms(100);
    }
}

/* Makes on w's worker the per-worker iterators it lacks. */
static bool make_iterators(worker_thread *w, bool *transport_failed, tfc_status *st) {
    tfc_coordinator *c = w->c;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        const bool more = w->n_made < c->n_datasets;
        ps_msg req, rep;
        if (more) {
            ps_msg_init(&req, PS_OP_MAKE_ITERATOR, c->datasets[w->n_made].fn);
            req.step = (int64_t)c->datasets[w->n_made].id;
        }
        pthread_mutex_unlock(&c->mu);
        if (!more) return true;
        if (!ps_rpc(w->t, &req, &rep, transport_failed, st)) return false;
        w->n_made++;
    }
}

static void *worker_main(void *arg) {
    worker_thread *w = arg;
    tfc_coordinator *c = w->c;
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (!c->stopping && !c->head) pthread_cond_wait(&c->cv, &c->mu);
        closure *k = c->stopping ? NULL : pop(c);
        pthread_mutex_unlock(&c->mu);
        if (!k) return NULL;
        tfc_status st = TFC_STATUS_INIT;
        bool transport_failed = false;
        bool ok = make_iterators(w, &transport_failed, &st);
        ps_msg req, rep;
        memset(&rep, 0, sizeof rep);
        ps_msg_init(&req, PS_OP_RUN, k->fn);
        req.id = k->step;
        req.step = (int64_t)k->step;
        for (int i = 0; i < k->n_args; i++) req.t[i] = k->args[i]; /* borrowed for the send */
        req.n_tensors = k->n_args;
        if (ok) ok = ps_rpc(w->t, &req, &rep, &transport_failed, &st);
        pthread_mutex_lock(&c->mu);
        /* the worker died or is unreachable, or restarted (its per-worker iterators are gone): another worker
           runs the closure */
        if (!ok && (transport_failed || st.code == TFC_ABORTED)) {
            w->n_made = 0;
            push_front(c, k);
            c->requeued++;
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            wait_for_worker(w);
            continue;
        }
        if (ok) {
            for (int i = 0; i < rep.n_tensors && i < TFC_REMOTE_MAX_OUTPUTS; i++) k->rv.out[i] = tfc_tensor_ref(rep.t[i]);
            k->rv.n_out = rep.n_tensors < TFC_REMOTE_MAX_OUTPUTS ? rep.n_tensors : TFC_REMOTE_MAX_OUTPUTS;
            k->rv.state = RV_DONE;
        } else {
            k->rv.st = st;
            k->rv.state = RV_FAILED;
            if (!c->has_error) {
                c->has_error = true;
                tfc_status_set(&c->error, st.code, "worker %d running '%s': %s", w->index, k->fn, st.msg);
            }
            cancel_queued(c, "an earlier function failed");
        }
        c->executed++;
        c->pending--;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
        ps_msg_clear(&rep);
    }
}

tfc_coordinator *tfc_cluster_coordinator_new(tfc_ps_strategy *s, tfc_status *st) {
    if (!s || s->n_workers < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ClusterCoordinator: the cluster has no 'worker' job"), NULL;
    tfc_coordinator *c = calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "ClusterCoordinator", sizeof *c), NULL;
    c->s = s;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->n_workers = s->n_workers;
    for (int i = 0; i < c->n_workers; i++) {
        worker_thread *w = &c->w[i];
        w->c = c;
        w->index = i;
        const char *addr = tfc_cluster_address(s->cluster, "worker", i);
        if (!addr) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "ClusterCoordinator: worker %d has no address", i);
            tfc_coordinator_free(c);
            return NULL;
        }
        if (!(w->t = ps_transport_nng(addr, s->timeout, st))) {
            tfc_coordinator_free(c);
            return NULL;
        }
        if (s->faults.on) {
            ps_transport *f = ps_transport_faulty(w->t, s->faults.seed + 100 + (uint32_t)i, s->faults.dup,
                                                  s->faults.delay, s->faults.max_delay_ms);
            if (f) w->t = f;
        }
        if (pthread_create(&w->thread, NULL, worker_main, w)) {
            tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "ClusterCoordinator: cannot start a thread");
            tfc_coordinator_free(c);
            return NULL;
        }
        w->started = true;
    }
    return c;
}

tfc_remote_value *tfc_coordinator_schedule(tfc_coordinator *c, const char *fn_name, tfc_tensor *const *args,
                                           int n_args, tfc_status *st) {
    void *user;
    if (!fn_name || strlen(fn_name) >= sizeof ((closure *)0)->fn || !ps_function_lookup(fn_name, &user))
        return tfc_status_set(st, TFC_NOT_FOUND, "schedule: no function registered as '%s'",
                              fn_name ? fn_name : "(null)"), NULL;
    if (n_args < 0 || n_args > PS_MAX_TENSORS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "schedule '%s': %d args (at most %d)", fn_name, n_args,
                              PS_MAX_TENSORS), NULL;
    closure *k = calloc(1, sizeof *k);
    if (!k) return tfc_status_oom(st, "closure", sizeof *k), NULL;
    snprintf(k->fn, sizeof k->fn, "%s", fn_name);
    for (int i = 0; i < n_args; i++) k->args[i] = tfc_tensor_ref(args[i]);
    k->n_args = n_args;
    k->step = ps_next_message_id();
    k->rv.c = c;
    k->rv.st = (tfc_status)TFC_STATUS_INIT;
    pthread_mutex_lock(&c->mu);
    k->all_next = c->all;
    c->all = k;
    if (c->has_error) {
        k->rv.state = RV_FAILED;
        k->rv.st = c->error;
        *st = c->error;
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    c->pending++;
    push_back(c, k);
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return &k->rv;
}

bool tfc_coordinator_join(tfc_coordinator *c, tfc_status *st) {
    pthread_mutex_lock(&c->mu);
    while (c->pending > 0) pthread_cond_wait(&c->cv, &c->mu);
    const bool ok = !c->has_error;
    if (!ok) {
        *st = c->error;
        c->has_error = false;
        c->error = (tfc_status)TFC_STATUS_INIT;
    }
    pthread_mutex_unlock(&c->mu);
    return ok;
}

bool tfc_coordinator_done(tfc_coordinator *c) {
    pthread_mutex_lock(&c->mu);
    const bool done = c->pending == 0 || c->has_error;
    pthread_mutex_unlock(&c->mu);
    return done;
}

tfc_tensor *tfc_remote_value_fetch(tfc_remote_value *v, int i, tfc_status *st) {
    tfc_coordinator *c = v->c;
    pthread_mutex_lock(&c->mu);
    while (v->state == RV_PENDING) pthread_cond_wait(&c->cv, &c->mu);
    tfc_tensor *t = NULL;
    if (v->state == RV_FAILED) *st = v->st;
    else if (i < 0 || i >= v->n_out)
        tfc_status_set(st, TFC_OUT_OF_RANGE, "RemoteValue.fetch: output %d of %d", i, v->n_out);
    else t = tfc_tensor_ref(v->out[i]);
    pthread_mutex_unlock(&c->mu);
    return t;
}

int tfc_remote_value_num_outputs(tfc_remote_value *v) {
    pthread_mutex_lock(&v->c->mu);
    const int n = v->state == RV_DONE ? v->n_out : -1;
    pthread_mutex_unlock(&v->c->mu);
    return n;
}

tfc_tensor *tfc_coordinator_create_per_worker_iterator(tfc_coordinator *c, const char *dataset_fn_name,
                                                       tfc_status *st) {
    void *user;
    if (!dataset_fn_name || strlen(dataset_fn_name) >= sizeof c->datasets[0].fn ||
        !ps_dataset_lookup(dataset_fn_name, &user))
        return tfc_status_set(st, TFC_NOT_FOUND, "create_per_worker_dataset: no dataset function registered as '%s'",
                              dataset_fn_name ? dataset_fn_name : "(null)"), NULL;
    const uint64_t id = ps_next_message_id();
    tfc_tensor *h = tfc_scalar_i64((int64_t)id, st);
    if (!h) return NULL;
    pthread_mutex_lock(&c->mu);
    if (c->n_datasets == PS_MAX_DATASETS) {
        pthread_mutex_unlock(&c->mu);
        tfc_tensor_unref(h);
        return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "create_per_worker_dataset: more than %d", PS_MAX_DATASETS),
               NULL;
    }
    snprintf(c->datasets[c->n_datasets].fn, sizeof c->datasets[0].fn, "%s", dataset_fn_name);
    c->datasets[c->n_datasets++].id = id;
    pthread_mutex_unlock(&c->mu);
    return h;
}

void tfc_coordinator_stats(const tfc_coordinator *c, int64_t *executed, int64_t *requeued) {
    pthread_mutex_lock((pthread_mutex_t *)&c->mu);
    if (executed) *executed = c->executed;
    if (requeued) *requeued = c->requeued;
    pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
}

void tfc_coordinator_free(tfc_coordinator *c) {
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    cancel_queued(c, "the coordinator was freed");
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (int i = 0; i < c->n_workers; i++) {
        if (c->w[i].started) pthread_join(c->w[i].thread, NULL);
        ps_transport_free(c->w[i].t);
    }
    for (closure *k = c->all, *next; k; k = next) {
        next = k->all_next;
        for (int i = 0; i < k->n_args; i++) tfc_tensor_unref(k->args[i]);
        for (int i = 0; i < k->rv.n_out; i++) tfc_tensor_unref(k->rv.out[i]);
        free(k);
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
