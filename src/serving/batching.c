/* Server-side request batching (TensorFlow Serving's BatchingSession with a shared batch scheduler): predict
 * calls whose inputs agree on signature, dtypes and every dimension but the first are queued, joined along
 * dimension 0 into one run of at most max_batch_size rows (padded up to the next allowed_batch_sizes entry by
 * repeating the first row), and the outputs are split back. A batch closes when it is full or when its oldest
 * request has waited batch_timeout_micros; num_batch_threads batches run at once. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "serving/serving_internal.h"
#include "tfc/platform.h"
#include "tfc/shape.h"

typedef struct item item;

/* A batch being filled or waiting for a thread: requests of one key in arrival order. It lives inside its first
 * request's item (whose caller waits until the batch ran, so it outlives its time in the queue). */
typedef struct batch {
    item *first, *last;
    int n;
    int64_t rows;
    double deadline; /* the first request's arrival + batch_timeout_micros */
    bool closed;     /* full: no further request joins it */
    struct batch *next;
} batch;

struct item {
    tfc_srv_version *v;
    const char *sig;
    tfc_tensor *const *in;
    int n_in;
    tfc_tensor **out;
    int n_out;
    int64_t rows;
    bool taken, done;  /* a batch thread took its batch; that batch ran */
    batch *owner;      /* its batch while queued */
    pthread_cond_t cv; /* the caller waits on it alone: a finished batch wakes exactly its own callers */
    tfc_status st;
    item *next;
    batch own; /* used when this request opens a batch */
};

struct srv_batcher {
    tfc_srv_batching_opts o;
    pthread_mutex_t mu;
    pthread_cond_t work; /* batch threads: a batch became ready or a new one opened (its deadline to wait for) */
    batch *head, *tail;  /* in opening order, so the head's deadline is the earliest */
    int64_t queued_rows;
    bool stop;
    int n_threads;
    pthread_t *threads;
};

/* Can a and b share a batch: same version, signature, dtypes and dims past the first? */
static bool same_key(const item *a, const item *b) {
    if (a->v != b->v || strcmp(a->sig, b->sig) || a->n_in != b->n_in) return false;
    for (int i = 0; i < a->n_in; i++) {
        const tfc_shape *x = tfc_tensor_shape(a->in[i]), *y = tfc_tensor_shape(b->in[i]);
        if (tfc_tensor_dtype(a->in[i]) != tfc_tensor_dtype(b->in[i]) || x->rank != y->rank) return false;
        for (int d = 1; d < x->rank; d++)
            if (x->dims[d] != y->dims[d]) return false;
    }
    return true;
}

static int64_t padded_size(const tfc_srv_batching_opts *o, int64_t n) {
    for (int i = 0; i < o->n_allowed; i++)
        if (o->allowed_batch_sizes[i] >= n) return o->allowed_batch_sizes[i];
    return n;
}

/* Rows of the parts stacked along dimension 0, then padded with copies of row 0 up to `total` rows. */
static tfc_tensor *concat_rows(tfc_tensor *const *parts, int n, int64_t total, tfc_status *st) {
    const tfc_shape *s0 = tfc_tensor_shape(parts[0]);
    const tfc_dtype dt = tfc_tensor_dtype(parts[0]);
    int64_t dims[TFC_MAX_RANK];
    memcpy(dims, s0->dims, sizeof(int64_t) * (size_t)s0->rank);
    dims[0] = total;
    int64_t per = 1; /* elements per row */
    for (int d = 1; d < s0->rank; d++)
        if (!tfc_mul_overflow_i64(per, s0->dims[d], &per)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "batch rows overflow int64");
            return NULL;
        }
    if (dt == TFC_STRING) {
        int64_t count;
        if (!tfc_mul_overflow_i64(per, total, &count)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "batch overflows int64");
            return NULL;
        }
        const char **strs = tfc_calloc((size_t)count + 1, sizeof *strs);
        size_t *lens = tfc_calloc((size_t)count + 1, sizeof *lens);
        tfc_tensor *t = NULL;
        if (strs && lens) {
            int64_t at = 0;
            for (int p = 0; p < n; p++)
                for (int64_t e = 0; e < tfc_tensor_num_elements(parts[p]); e++, at++)
                    strs[at] = tfc_tensor_string(parts[p], e, &lens[at]);
            for (int64_t e = 0; at < count; at++, e = (e + 1) % (per ? per : 1))
                strs[at] = tfc_tensor_string(parts[0], e, &lens[at]);
            t = tfc_tensor_from_strings(strs, lens, dims, s0->rank, st);
        } else {
            tfc_status_oom(st, "batch", (size_t)count * sizeof *strs);
        }
        tfc_free(strs);
        tfc_free(lens);
        return t;
    }
    tfc_tensor *t = tfc_tensor_new(dt, dims, s0->rank, st);
    if (!t) return NULL;
    char *d = tfc_tensor_mutable_data(t);
    const size_t row = (size_t)per * tfc_dtype_size(dt);
    size_t at = 0;
    for (int p = 0; p < n; p++) {
        size_t b = tfc_tensor_byte_size(parts[p]);
        if (b) memcpy(d + at, tfc_tensor_data(parts[p]), b);
        at += b;
    }
    for (; at + row <= tfc_tensor_byte_size(t) && row; at += row) memcpy(d + at, tfc_tensor_data(parts[0]), row);
    return t;
}

/* Rows [start, start + n) of t as a new tensor. */
static tfc_tensor *slice_rows(const tfc_tensor *t, int64_t start, int64_t n, tfc_status *st) {
    const tfc_shape *s = tfc_tensor_shape(t);
    int64_t dims[TFC_MAX_RANK];
    memcpy(dims, s->dims, sizeof(int64_t) * (size_t)s->rank);
    dims[0] = n;
    const int64_t per = s->dims[0] ? tfc_tensor_num_elements(t) / s->dims[0] : 0;
    if (tfc_tensor_dtype(t) == TFC_STRING) {
        const char **strs = tfc_calloc((size_t)(per * n) + 1, sizeof *strs);
        size_t *lens = tfc_calloc((size_t)(per * n) + 1, sizeof *lens);
        tfc_tensor *r = NULL;
        if (strs && lens) {
            for (int64_t e = 0; e < per * n; e++) strs[e] = tfc_tensor_string(t, start * per + e, &lens[e]);
            r = tfc_tensor_from_strings(strs, lens, dims, s->rank, st);
        } else {
            tfc_status_oom(st, "batch split", 64);
        }
        tfc_free(strs);
        tfc_free(lens);
        return r;
    }
    tfc_tensor *r = tfc_tensor_new(tfc_tensor_dtype(t), dims, s->rank, st);
    if (!r) return NULL;
    const size_t es = tfc_dtype_size(tfc_tensor_dtype(t));
    if (tfc_tensor_byte_size(r))
        memcpy(tfc_tensor_mutable_data(r), (const char *)tfc_tensor_data(t) + (size_t)(start * per) * es,
               tfc_tensor_byte_size(r));
    return r;
}

/* Runs the batch items[0..n) (same key) and fills each item's outputs or status. */
static void run_batch(srv_batcher *b, item **items, int n) {
    tfc_status st = TFC_STATUS_INIT;
    const int n_in = items[0]->n_in, n_out = items[0]->n_out;
    int64_t rows = 0;
    for (int i = 0; i < n; i++) rows += items[i]->rows;
    const int64_t padded = padded_size(&b->o, rows);
    tfc_tensor **in = tfc_calloc((size_t)n_in + 1, sizeof *in), **out = tfc_calloc((size_t)n_out + 1, sizeof *out);
    tfc_tensor **parts = tfc_calloc((size_t)n + 1, sizeof *parts);
    bool ok = in && out && parts;
    if (!ok) tfc_status_oom(&st, "batch", 64);
    /* a lone request that needs no padding runs on its own tensors, and takes the outputs whole */
    const bool lone = n == 1 && padded == rows;
    for (int k = 0; ok && k < n_in; k++) {
        if (lone) {
            in[k] = tfc_tensor_ref(items[0]->in[k]);
            continue;
        }
        for (int i = 0; i < n; i++) parts[i] = items[i]->in[k];
        ok = (in[k] = concat_rows(parts, n, padded, &st)) != NULL;
    }
    if (ok) ok = srv_run_on_copy(items[0]->v, items[0]->sig, in, n_in, out, n_out, &st);
    for (int o = 0; ok && o < n_out; o++)
        if (tfc_tensor_rank(out[o]) < 1 || tfc_tensor_dim(out[o], 0) != padded)
            ok = tfc_status_set(&st, TFC_INVALID_ARGUMENT, "Batched output tensor %d has %lld rows for a batch of "
                                "%lld: the model's outputs must keep the batch dimension to be batched", o,
                                (long long)(tfc_tensor_rank(out[o]) ? tfc_tensor_dim(out[o], 0) : 0), (long long)padded);
    if (ok && b->o.on_batch) b->o.on_batch(b->o.user, tfc_srv_version_model(items[0]->v), rows, padded);
    int64_t at = 0;
    for (int i = 0; i < n; i++) {
        item *it = items[i];
        it->st = st;
        for (int o = 0; ok && o < n_out && it->st.code == TFC_OK; o++) {
            if (!lone) {
                it->out[o] = slice_rows(out[o], at, it->rows, &it->st);
                continue;
            }
            it->out[o] = out[o];
            out[o] = NULL;
        }
        at += it->rows;
    }
    for (int k = 0; in && k < n_in; k++) tfc_tensor_unref(in[k]);
    for (int o = 0; out && o < n_out; o++) tfc_tensor_unref(out[o]);
    tfc_free(in);
    tfc_free(out);
    tfc_free(parts);
}

/* The first batch that may run now: closed (full), past its deadline, or anything when stopping. mu held. */
static batch *ready_batch(srv_batcher *b, double now) {
    for (batch *t = b->head; t; t = t->next)
        if (t->closed || t->deadline <= now || b->stop) return t;
    return NULL;
}

static void unlink_batch(srv_batcher *b, batch *t) {
    batch **pp = &b->head, *prev = NULL;
    while (*pp != t) prev = *pp, pp = &(*pp)->next;
    *pp = t->next;
    if (b->tail == t) b->tail = prev;
    b->queued_rows -= t->rows;
}

/* A batch thread sleeps until a batch is ready: woken by the request that fills one or opens the first, or by
 * its timer at the oldest open batch's deadline; it never polls. */
static void *batch_thread(void *arg) {
    srv_batcher *b = arg;
    item **items = tfc_calloc((size_t)b->o.max_batch_size + 1, sizeof *items);
    pthread_mutex_lock(&b->mu);
    while (items) {
        batch *t = ready_batch(b, srv_now());
        if (!t) {
            if (b->stop) break; /* stopping and nothing queued */
            if (!b->head) {
                pthread_cond_wait(&b->work, &b->mu);
            } else {
                struct timespec until;
                const double d = b->head->deadline;
                until.tv_sec = (time_t)d;
                until.tv_nsec = (long)((d - (double)until.tv_sec) * 1e9);
                if (until.tv_nsec >= 1000000000L) until.tv_sec++, until.tv_nsec -= 1000000000L;
                pthread_cond_timedwait(&b->work, &b->mu, &until);
            }
            continue;
        }
        unlink_batch(b, t);
        int n = 0;
        for (item *i = t->first; i; i = i->next) i->taken = true, items[n++] = i;
        if (ready_batch(b, srv_now())) pthread_cond_signal(&b->work); /* another ready batch: an idle thread takes it */
        pthread_mutex_unlock(&b->mu);
        run_batch(b, items, n);
        pthread_mutex_lock(&b->mu);
        for (int i = 0; i < n; i++) {
            items[i]->done = true;
            pthread_cond_signal(&items[i]->cv);
        }
    }
    pthread_mutex_unlock(&b->mu);
    tfc_free(items);
    return NULL;
}

srv_batcher *srv_batcher_new(const tfc_srv_batching_opts *o, tfc_status *st) {
    srv_batcher *b = tfc_calloc(1, sizeof *b);
    if (!b) return tfc_status_oom(st, "batcher", sizeof *b), NULL;
    b->o = *o;
    if (b->o.max_batch_size <= 0) b->o.max_batch_size = 1000;
    if (b->o.max_enqueued_batches <= 0) b->o.max_enqueued_batches = 10;
    if (b->o.num_batch_threads <= 0) b->o.num_batch_threads = tfc_num_cores() > 0 ? tfc_num_cores() : 1;
    pthread_mutex_init(&b->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are srv_now() values */
    pthread_cond_init(&b->work, &ca);
    pthread_condattr_destroy(&ca);
    if (!(b->threads = tfc_calloc((size_t)b->o.num_batch_threads, sizeof *b->threads))) {
        srv_batcher_free(b);
        return tfc_status_oom(st, "batcher", 64), NULL;
    }
    for (int i = 0; i < b->o.num_batch_threads; i++) {
        if (pthread_create(&b->threads[i], NULL, batch_thread, b)) {
            srv_batcher_free(b);
            return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "cannot start batch threads"), NULL;
        }
        b->n_threads++;
    }
    return b;
}

void srv_batcher_free(srv_batcher *b) {
    if (!b) return;
    pthread_mutex_lock(&b->mu);
    b->stop = true;
    pthread_cond_broadcast(&b->work);
    pthread_mutex_unlock(&b->mu);
    for (int i = 0; i < b->n_threads; i++) pthread_join(b->threads[i], NULL);
    tfc_free(b->threads);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->work);
    tfc_free(b);
}

/* Adds it to the open batch of its key, or opens a batch (TensorFlow's shared batch scheduler: a task that does
 * not fit the open batch closes it). Returns whether a batch thread must be woken: a batch was closed, or one
 * opened (an idle thread then waits for its deadline). mu held. */
static bool enqueue(srv_batcher *b, item *it, double now) {
    batch *open = NULL;
    for (batch *t = b->head; t && !open; t = t->next)
        if (!t->closed && same_key(t->first, it)) open = t;
    bool wake = false;
    if (open && open->rows + it->rows > b->o.max_batch_size) {
        open->closed = wake = true;
        open = NULL;
    }
    if (!open) {
        open = &it->own;
        *open = (batch){.first = it, .last = it, .n = 1, .rows = it->rows,
                        .deadline = now + (double)b->o.batch_timeout_micros * 1e-6};
        if (b->tail) b->tail->next = open;
        else b->head = open;
        b->tail = open;
        wake = true;
    } else {
        open->last->next = it;
        open->last = it;
        open->n++;
        open->rows += it->rows;
    }
    it->owner = open;
    if (open->rows >= b->o.max_batch_size) open->closed = wake = true;
    b->queued_rows += it->rows;
    return wake;
}

/* Takes a request whose deadline passed out of its queued batch. When it opened the batch, the batch moves into
 * the next request's item (its own caller still waits). mu held. */
static void withdraw(srv_batcher *b, item *it) {
    batch *t = it->owner;
    item **pp = &t->first, *prev = NULL;
    while (*pp != it) prev = *pp, pp = &(*pp)->next;
    *pp = it->next;
    if (t->last == it) t->last = prev;
    t->n--;
    t->rows -= it->rows;
    b->queued_rows -= it->rows;
    batch **link = &b->head, *before = NULL;
    while (*link != t) before = *link, link = &(*link)->next;
    if (!t->n) {
        *link = t->next;
        if (b->tail == t) b->tail = before;
        return;
    }
    if (t != &it->own) return;
    batch *moved = &t->first->own;
    *moved = *t;
    *link = moved;
    if (b->tail == t) b->tail = moved;
    for (item *i = moved->first; i; i = i->next) i->owner = moved;
}

bool srv_batcher_run(srv_batcher *b, tfc_srv_version *v, const char *sig, tfc_tensor *const *in, int n_in,
                     tfc_tensor **out, int n_out, tfc_status *st) {
    item it = {.v = v, .sig = sig, .in = in, .n_in = n_in, .out = out, .n_out = n_out,
               .rows = tfc_tensor_dim(in[0], 0)};
    for (int o = 0; o < n_out; o++) out[o] = NULL;
    if (it.rows > b->o.max_batch_size)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Task size %lld is larger than maximum batch size %lld",
                              (long long)it.rows, (long long)b->o.max_batch_size);
    if (it.rows == 0) return srv_run_on_copy(v, sig, in, n_in, out, n_out, st); /* nothing to join */
    pthread_mutex_lock(&b->mu);
    if (b->stop || b->queued_rows + it.rows > b->o.max_enqueued_batches * b->o.max_batch_size) {
        pthread_mutex_unlock(&b->mu);
        return tfc_status_set(st, TFC_UNAVAILABLE, "The batch scheduling queue to which this task was submitted is "
                              "full");
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&it.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (enqueue(b, &it, srv_now())) pthread_cond_signal(&b->work);
    /* a deadline that passes while the request is queued withdraws it; once its batch runs it is waited for */
    const double deadline = srv_deadline();
    struct timespec until = {.tv_sec = (time_t)deadline};
    until.tv_nsec = (long)((deadline - (double)until.tv_sec) * 1e9);
    bool expired = false;
    while (!it.done) {
        if (!deadline || it.taken) {
            pthread_cond_wait(&it.cv, &b->mu);
        } else if (pthread_cond_timedwait(&it.cv, &b->mu, &until) == ETIMEDOUT && !it.taken) {
            withdraw(b, &it);
            expired = true;
            break;
        }
    }
    pthread_mutex_unlock(&b->mu);
    pthread_cond_destroy(&it.cv);
    if (expired || (it.st.code == TFC_OK && deadline && srv_now() > deadline)) {
        srv_deadline_exceeded(&it.st);
    }
    if (it.st.code != TFC_OK) {
        for (int o = 0; o < n_out; o++) {
            tfc_tensor_unref(out[o]);
            out[o] = NULL;
        }
        *st = it.st;
        return false;
    }
    tfc_status_clear(st);
    return true;
}
