/* The parallel/prefetch engine (see async.h), with AUTOTUNE's hill climb: over windows of 16 elements the
 * consumer measures how much of its time it spent waiting; above 5% the stage doubles its parallelism (up to its
 * threads) and its capacity (up to max_capacity).
 *
 * Hand-offs in runs: waking a sleeping thread costs a few microseconds of system time on each side (futex wake,
 * context switch), as much as a cheap element itself (a small image decoded and resized: ~20 us). When elements
 * are cheap, the workers therefore wake a sleeping consumer only once `batch` elements are ready at the head
 * (or the input ended or failed), and the consumer wakes a sleeping producer only once there is room for `batch`
 * elements. batch is sized from the measured time per element so that a run is about HANDOFF_TARGET_S of work
 * (the most a consumer waits beyond its first element) and from the measured size of an element so that a run
 * holds at most HANDOFF_BYTES; a stage whose capacity follows its parallelism (map, batch) holds 2 * batch slots
 * so that workers keep producing while the consumer drains a run. Slow or large elements keep batch = 1: the
 * behaviour (and memory) of a plain buffer of `parallelism` slots.
 *
 * Memory follows the data, not the user's numbers: the queue is a ring that grows by doubling and slots are
 * made as elements are actually buffered (SLOTS_UP_FRONT of each at the start), so prefetch(2^20) of a
 * 3-element dataset holds 3 slots. A slot that cannot be made (out of memory) caps the buffer at the slots
 * that exist until the consumer frees one; nothing fails and nothing is lost. */
#include <string.h>

#include "data/async.h"

#define AUTOTUNE_WINDOW 16
#define AUTOTUNE_WAIT_FRACTION 0.05
#define HANDOFF_TARGET_S 200e-6
#define HANDOFF_MAX 32
#define HANDOFF_BYTES (256 << 10)
#define SLOTS_UP_FRONT 16

enum { SLOT_PENDING, SLOT_READY, SLOT_END };

typedef struct aslot {
    int state;
    bool failed;
    tfc_status st;
    tfc_tensor *out[];        /* n_out */
} aslot;

struct data_async {
    data_async_cfg cfg;
    const data_ictx *ictx;
    pthread_mutex_t mu, in_mu;
    pthread_cond_t work_cv, ready_cv;
    aslot **q;                /* ring of outstanding slots, oldest first: q_at(a, 0 .. qn - 1) */
    int qhead, qn, qalloc;
    int qcap;                 /* the most slots the stage may ever hold (capacity's ceiling + 1) */
    aslot **free_slots;       /* made slots not in the queue (room for every made slot: free_alloc >= n_slots) */
    int n_free, free_alloc, n_slots;
    size_t ssize;
    int busy;                 /* workers between reserving a slot and completing it */
    int parallelism, capacity;
    bool in_done;             /* the input reported its end (guarded by in_mu) */
    bool cancelled, started;
    bool consumer_waiting;    /* signal ready_cv only then */
    int batch;                /* hand-off run length (1..HANDOFF_MAX), see the top of the file */
    double item_s, item_bytes; /* running means of a worker's seconds and an element's bytes per item */
    pthread_t *threads;
    int n_threads;
    /* autotune window (consumer thread only) */
    double last_return, win_wait, win_total;
    int win_count;
};

static aslot *q_at(const data_async *a, int i) { return a->q[(a->qhead + i) % a->qalloc]; }

/* Room for `need` queued slots (under mu): the ring doubles, up to qcap, unwrapped to start at 0. */
static bool q_reserve(data_async *a, int need) {
    if (need <= a->qalloc) return true;
    int cap = a->qalloc > a->qcap / 2 ? a->qcap : 2 * a->qalloc;
    if (cap < need) return false;
    aslot **q = tfc_malloc((size_t)cap * sizeof *q);
    if (!q) return false;
    for (int i = 0; i < a->qn; i++) q[i] = q_at(a, i);
    tfc_free(a->q);
    a->q = q;
    a->qalloc = cap;
    a->qhead = 0;
    return true;
}

/* Removes queued slot i, moving the ones before it up (O(1) for the head, the deterministic case). */
static void q_remove(data_async *a, int i) {
    for (int k = i; k > 0; k--) a->q[(a->qhead + k) % a->qalloc] = a->q[(a->qhead + k - 1) % a->qalloc];
    a->qhead = (a->qhead + 1) % a->qalloc;
    a->qn--;
}

/* A slot for the next element, queued (under mu): a recycled one, or a new one. NULL when out of memory. */
static aslot *slot_push(data_async *a) {
    if (!q_reserve(a, a->qn + 1)) return NULL;
    aslot *s = NULL;
    if (a->n_free) {
        s = a->free_slots[--a->n_free];
    } else {
        if (a->n_slots == a->free_alloc) {
            int cap = a->free_alloc > a->qcap / 2 ? a->qcap : 2 * a->free_alloc;
            aslot **f = cap > a->free_alloc ? tfc_realloc(a->free_slots, (size_t)cap * sizeof *f) : NULL;
            if (!f) return NULL;
            a->free_slots = f;
            a->free_alloc = cap;
        }
        if (!(s = tfc_calloc(1, a->ssize))) return NULL;
        a->n_slots++;
    }
    a->q[(a->qhead + a->qn++) % a->qalloc] = s;
    return s;
}

/* Capacity of a stage whose capacity follows its parallelism: parallelism slots, 2 * batch when elements are
 * handed off in runs. */
static void follow_capacity(data_async *a) {
    int c = a->batch > 1 ? 2 * a->batch : 1;
    if (c < a->parallelism) c = a->parallelism;
    if (c > a->qcap - 1) c = a->qcap - 1;
    a->capacity = c;
}

/* Elements the consumer takes per wake-up: batch, at most half the capacity. */
static int run_length(const data_async *a) {
    int r = a->capacity / 2;
    if (r > a->batch) r = a->batch;
    return r < 1 ? 1 : r;
}

/* Whether a waiting consumer should be woken (under mu): a run of run_length() slots can be taken, or one that
 * ends the input or carries an error, or the queue is full (no more can come before the consumer takes some). */
static bool consumer_can_go(const data_async *a) {
    const int want = run_length(a);
    int ready = 0;
    for (int i = 0; i < a->qn; i++) {
        const aslot *s = q_at(a, i);
        if (s->state == SLOT_PENDING) {
            if (a->cfg.deterministic) break; /* only the head run counts */
            continue;
        }
        if (s->state == SLOT_END || s->failed || ++ready >= want) return true;
    }
    return a->qn > 0 && a->qn >= a->capacity && ready == a->qn;
}

/* Folds one item's measured seconds and bytes into the running means (under mu) and resizes batch. */
static void measure(data_async *a, double seconds, double bytes) {
    if (a->item_s == 0) {
        a->item_s = seconds;
        a->item_bytes = bytes;
    } else {
        a->item_s += (seconds - a->item_s) * 0.125;
        a->item_bytes += (bytes - a->item_bytes) * 0.125;
    }
    int b = a->item_s > 0 ? (int)(HANDOFF_TARGET_S / a->item_s) : HANDOFF_MAX;
    if (b > HANDOFF_MAX) b = HANDOFF_MAX;
    if (a->item_bytes > 0 && b > HANDOFF_BYTES / a->item_bytes) b = (int)(HANDOFF_BYTES / a->item_bytes);
    a->batch = b < 1 ? 1 : b;
    if (a->cfg.capacity_follows_parallelism) follow_capacity(a);
}

static double element_bytes(tfc_tensor *const *t, int n) {
    double b = 0;
    for (int i = 0; i < n; i++)
        if (t[i]) b += (double)tfc_tensor_byte_size(t[i]);
    return b;
}

static void *worker_main(void *arg) {
    data_async *a = arg;
    const data_async_cfg *c = &a->cfg;
    tfc_ctx *ctx = NULL;
    for (;;) {
        if (c->worker_ctx && !ctx) {
            tfc_status cst = TFC_STATUS_INIT;
            ctx = data_ctx_new(a->ictx, false, &cst);
        }
        pthread_mutex_lock(&a->in_mu);
        if (a->in_done) {
            pthread_mutex_unlock(&a->in_mu);
            break;
        }
        pthread_mutex_lock(&a->mu);
        aslot *s = NULL;
        while (!a->cancelled) {
            if (a->qn < a->capacity && a->busy < a->parallelism) {
                if ((s = slot_push(a))) break;
                /* no memory for one more slot: buffer the qn (>= 1) that exist until the consumer takes one; a
                 * consumer waiting for a longer run than that is told the buffer is now full */
                a->capacity = a->qn;
                if (a->consumer_waiting && consumer_can_go(a)) pthread_cond_signal(&a->ready_cv);
            }
            pthread_cond_wait(&a->work_cv, &a->mu);
        }
        if (!s) {
            pthread_mutex_unlock(&a->mu);
            pthread_mutex_unlock(&a->in_mu);
            break;
        }
        s->state = SLOT_PENDING;
        s->failed = false;
        a->busy++;
        pthread_mutex_unlock(&a->mu);

        const double t0 = data_now();
        void *work = NULL;
        bool end = false;
        tfc_status st = TFC_STATUS_INIT;
        bool ok = c->fetch(c->self, &work, &end, &st);
        if (ok && end) a->in_done = true;
        pthread_mutex_unlock(&a->in_mu);
        if (ok && !end) {
            if (c->process) {
                if (c->worker_ctx && !ctx) {
                    ok = tfc_status_set(&st, TFC_RESOURCE_EXHAUSTED, "%s: no eager context for a worker", c->name);
                    c->drop(c->self, work);
                } else {
                    ok = c->process(c->self, ctx, work, s->out, &st);
                }
            } else {
                memcpy(s->out, work, (size_t)c->n_out * sizeof(tfc_tensor *));
                tfc_free(work);
            }
            if (!ok) {
                for (int i = 0; i < c->n_out; i++) {
                    tfc_tensor_unref(s->out[i]);
                    s->out[i] = NULL;
                }
                if (st.code == TFC_OK) tfc_status_set(&st, TFC_INTERNAL, "%s: failed without a status", c->name);
            }
        }
        const double seconds = data_now() - t0, bytes = ok && !end ? element_bytes(s->out, c->n_out) : 0;
        pthread_mutex_lock(&a->mu);
        s->state = ok && end ? SLOT_END : SLOT_READY;
        s->failed = !ok;
        s->st = st;
        a->busy--;
        if (ok && !end) measure(a, seconds, bytes);
        if (a->consumer_waiting && consumer_can_go(a)) pthread_cond_signal(&a->ready_cv);
        /* the one worker that may wait for room holds the input lock: a signal reaches it */
        pthread_cond_signal(&a->work_cv);
        pthread_mutex_unlock(&a->mu);
        if (ok && end) break;
    }
    data_ctx_free(ctx);
    return NULL;
}

void data_async_parallel_cfg(data_async_cfg *cfg, int64_t num_parallel_calls, const data_ictx *ictx) {
    int maxt = ictx->max_threads > 0 ? ictx->max_threads : 1;
    if (num_parallel_calls == TFC_AUTOTUNE) {
        cfg->threads = maxt;
        cfg->parallelism = 1;
        cfg->autotune = true;
    } else {
        int n = num_parallel_calls > maxt ? maxt : (int)num_parallel_calls;
        cfg->threads = cfg->parallelism = n < 1 ? 1 : n;
        cfg->autotune = false;
    }
    cfg->capacity_follows_parallelism = true;
    cfg->capacity = cfg->parallelism;
    cfg->max_capacity = cfg->threads;
}

data_async *data_async_new(const data_async_cfg *cfg, const data_ictx *ictx, tfc_status *st) {
    data_async *a = tfc_calloc(1, sizeof *a);
    if (!a) {
        tfc_status_oom(st, cfg->name, sizeof *a);
        return NULL;
    }
    a->cfg = *cfg;
    if (a->cfg.threads < 1) a->cfg.threads = 1;
    if (a->cfg.parallelism < 1) a->cfg.parallelism = 1;
    if (a->cfg.parallelism > a->cfg.threads) a->cfg.parallelism = a->cfg.threads;
    if (a->cfg.capacity < 1) a->cfg.capacity = 1;
    if (a->cfg.max_capacity < a->cfg.capacity) a->cfg.max_capacity = a->cfg.capacity;
    a->ictx = ictx;
    a->parallelism = a->cfg.parallelism;
    a->capacity = a->cfg.capacity;
    a->batch = 1;
    /* room for every capacity the stage may reach: autotune's ceiling, runs of hand-offs (follow_capacity) */
    a->qcap = a->cfg.max_capacity + 1;
    if (a->cfg.capacity_follows_parallelism && a->qcap < 2 * HANDOFF_MAX + 1) a->qcap = 2 * HANDOFF_MAX + 1;
    a->ssize = sizeof(aslot) + (size_t)a->cfg.n_out * sizeof(tfc_tensor *);
    /* SLOTS_UP_FRONT slots now (at least one, so an out-of-memory later always leaves a slot to wait on) */
    const int up_front = a->qcap < SLOTS_UP_FRONT ? a->qcap : SLOTS_UP_FRONT;
    a->q = tfc_calloc((size_t)up_front, sizeof *a->q);
    a->free_slots = tfc_calloc((size_t)up_front, sizeof *a->free_slots);
    a->threads = tfc_calloc((size_t)a->cfg.threads, sizeof *a->threads);
    bool ok = a->q && a->free_slots && a->threads;
    a->qalloc = a->free_alloc = up_front;
    for (int i = 0; ok && i < up_front; i++)
        if ((ok = (a->free_slots[a->n_free] = tfc_calloc(1, a->ssize)) != NULL)) a->n_free++, a->n_slots++;
    if (!ok) {
        for (int i = 0; i < a->n_free; i++) tfc_free(a->free_slots[i]);
        tfc_free(a->q);
        tfc_free(a->free_slots);
        tfc_free(a->threads);
        tfc_free(a);
        tfc_status_oom(st, cfg->name, 0);
        return NULL;
    }
    pthread_mutex_init(&a->mu, NULL);
    pthread_mutex_init(&a->in_mu, NULL);
    pthread_cond_init(&a->work_cv, NULL);
    pthread_cond_init(&a->ready_cv, NULL);
    return a;
}

static bool start_threads(data_async *a, tfc_status *st) {
    a->started = true;
    for (int i = 0; i < a->cfg.threads; i++) {
        if (pthread_create(&a->threads[i], NULL, worker_main, a) != 0) break;
        a->n_threads++;
    }
    if (a->n_threads == 0) return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "%s: cannot start a thread", a->cfg.name);
    if (a->n_threads < a->cfg.threads) {
        a->cfg.threads = a->n_threads;
        if (a->parallelism > a->n_threads) a->parallelism = a->n_threads;
    }
    return true;
}

/* Index of the slot to hand out, -1 to wait. */
static int pick(const data_async *a) {
    if (a->qn == 0) return -1;
    if (a->cfg.deterministic) return q_at(a, 0)->state == SLOT_PENDING ? -1 : 0;
    for (int i = 0; i < a->qn; i++)
        if (q_at(a, i)->state == SLOT_READY) return i;
    return a->qn == 1 && q_at(a, 0)->state == SLOT_END ? 0 : -1;
}

static void autotune(data_async *a, double t_enter, double wait) {
    double now = data_now();
    if (a->last_return > 0) a->win_total += now - a->last_return;
    else a->win_total += now - t_enter;
    a->win_wait += wait;
    a->last_return = now;
    if (++a->win_count < AUTOTUNE_WINDOW) return;
    if (a->win_total > 0 && a->win_wait > AUTOTUNE_WAIT_FRACTION * a->win_total) {
        if (a->parallelism < a->cfg.threads) {
            a->parallelism = a->parallelism * 2 > a->cfg.threads ? a->cfg.threads : a->parallelism * 2;
        }
        if (a->cfg.capacity_follows_parallelism) {
            follow_capacity(a);
        } else if (a->capacity < a->cfg.max_capacity) {
            a->capacity = a->capacity * 2 > a->cfg.max_capacity ? a->cfg.max_capacity : a->capacity * 2;
        }
        pthread_cond_broadcast(&a->work_cv);
    }
    a->win_count = 0;
    a->win_wait = a->win_total = 0;
}

bool data_async_next(data_async *a, tfc_tensor **out, bool *end, tfc_status *st) {
    double t_enter = a->cfg.autotune ? data_now() : 0, wait = 0;
    pthread_mutex_lock(&a->mu);
    if (!a->started && !start_threads(a, st)) {
        pthread_mutex_unlock(&a->mu);
        return false;
    }
    int i;
    while ((i = pick(a)) < 0) {
        double w0 = a->cfg.autotune ? data_now() : 0;
        a->consumer_waiting = true;
        pthread_cond_wait(&a->ready_cv, &a->mu);
        a->consumer_waiting = false;
        if (a->cfg.autotune) wait += data_now() - w0;
    }
    aslot *s = q_at(a, i);
    if (s->state == SLOT_END) { /* stays queued: later calls end too */
        *end = true;
        pthread_mutex_unlock(&a->mu);
        return true;
    }
    q_remove(a, i);
    bool ok = !s->failed;
    if (ok) memcpy(out, s->out, (size_t)a->cfg.n_out * sizeof *out);
    else *st = s->st;
    memset(s->out, 0, (size_t)a->cfg.n_out * sizeof *s->out);
    a->free_slots[a->n_free++] = s;
    if (a->cfg.autotune) autotune(a, t_enter, wait);
    /* wake the producer when the buffer is half empty (or has room for a run), so that it refills in runs instead
     * of waking up for every element the consumer takes */
    const int refill_at = a->capacity - run_length(a);
    if (a->qn <= (refill_at < a->capacity / 2 ? refill_at : a->capacity / 2)) pthread_cond_signal(&a->work_cv);
    pthread_mutex_unlock(&a->mu);
    return ok;
}

void data_async_free(data_async *a) {
    if (!a) return;
    pthread_mutex_lock(&a->mu);
    a->cancelled = true;
    pthread_cond_broadcast(&a->work_cv);
    pthread_cond_broadcast(&a->ready_cv);
    pthread_mutex_unlock(&a->mu);
    for (int i = 0; i < a->n_threads; i++) pthread_join(a->threads[i], NULL);
    for (int i = 0; i < a->qn; i++) {
        for (int k = 0; k < a->cfg.n_out; k++) tfc_tensor_unref(q_at(a, i)->out[k]);
        tfc_free(q_at(a, i));
    }
    for (int i = 0; i < a->n_free; i++) tfc_free(a->free_slots[i]);
    pthread_mutex_destroy(&a->mu);
    pthread_mutex_destroy(&a->in_mu);
    pthread_cond_destroy(&a->work_cv);
    pthread_cond_destroy(&a->ready_cv);
    tfc_free(a->q);
    tfc_free(a->free_slots);
    tfc_free(a->threads);
    tfc_free(a);
}
