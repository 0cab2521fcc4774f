/* fit's batch prefetcher (training_prefetch.h): one background thread copies the rows of the queued batches
 * while the caller trains on the current one.
 *
 * The queue is a ring of depth slots: count slots from head, in the order posted. A slot is POSTED (indices
 * copied, waiting for the thread), BUSY (the thread copies it without the lock; the thread takes the slots in
 * order), READY (out holds the tensors) or FAILED (err holds the status). Under mu. The thread sleeps (sleeping
 * set) when no slot is POSTED; a post wakes it only once wake_at slots are POSTED, a take only when the head
 * slot is still POSTED; whoever wakes it clears sleeping, so it is signalled once per sleep. take and a miss wait
 * on done for BUSY slots to finish before they use or drop their tensors; the thread signals done only when
 * someone waits (n_waiting). free sets stop, wakes and joins. */
#include "keras/training_prefetch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "keras/keras_internal.h"
#include "tfc/platform.h"

#define MAX_SRC (2 * TFC_KERAS_MAX_IO + 1) /* x arrays, y arrays, sample weights */
#define AUTO_BYTES ((size_t)8 << 20)     /* the queue's batches fill at most this much when depth is automatic */

enum { POSTED, BUSY, READY, FAILED };

static _Atomic int64_t hits, wakes;

int64_t tfc_fit_prefetch_hits(void) { return atomic_load(&hits); }
int64_t tfc_fit_prefetch_wakes(void) { return atomic_load(&wakes); }

typedef struct {
    int64_t *idx; /* max_len indices, when has_perm */
    bool has_perm;
    int64_t start, len;
    tfc_tensor *out[MAX_SRC];
    tfc_status err;
    int state;
} slot;

struct tfc_fit_prefetch {
    tfc_tensor *src[MAX_SRC];
    size_t row_bytes[MAX_SRC];
    int n_src;
    int64_t max_len;
    int depth, wake_at;
    slot slots[TFC_FIT_PREFETCH_MAX_DEPTH];
    int head, count, n_posted, n_waiting;
    bool sleeping, stop;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    pthread_t thread;
};

bool tfc_fit_prefetch_wanted(tfc_tensor *const *src, int n_src) {
    if (n_src < 1 || n_src > MAX_SRC) return false;
    for (int i = 0; i < n_src; i++) {
        tfc_dtype dt = tfc_tensor_dtype(src[i]);
        if (dt == TFC_STRING || dt == TFC_RESOURCE || tfc_dtype_size(dt) == 0 || !tfc_tensor_data(src[i]) ||
            tfc_tensor_rank(src[i]) < 1 || tfc_tensor_dim(src[i], 0) < 1)
            return false;
    }
    return true;
}

static slot *slot_at(tfc_fit_prefetch *p, int k) { return &p->slots[(p->head + k) % p->depth]; }

static void drop_out(tfc_fit_prefetch *p, slot *s) {
    for (int i = 0; i < p->n_src; i++) {
        tfc_tensor_unref(s->out[i]);
        s->out[i] = NULL;
    }
}

/* The slot's batch into s->out (called without the lock; the slot's request is stable while BUSY). */
static bool copy_batch(tfc_fit_prefetch *p, slot *s, tfc_status *st) {
    for (int a = 0; a < p->n_src; a++) {
        tfc_shape shape = *tfc_tensor_shape(p->src[a]);
        shape.dims[0] = s->len;
        tfc_tensor *t = tfc_tensor_alloc(tfc_tensor_dtype(p->src[a]), &shape, st);
        if (!t) return false;
        s->out[a] = t;
        const size_t rb = p->row_bytes[a];
        const char *from = tfc_tensor_data(p->src[a]);
        char *to = tfc_tensor_mutable_data(t);
        if (!s->has_perm) {
            memcpy(to, from + (size_t)s->start * rb, (size_t)s->len * rb);
            continue;
        }
        /* rows in the order of the indices. The arrays are usually far larger than the caches, so each row
         * is a DRAM miss: every 64-byte line of the rows AHEAD rows on is requested before they are copied
         * (rows of a few KiB, e.g. 3136 bytes for a 28x28 float image; the first line alone left the rest of
         * the row to the hardware prefetcher, one miss at a time). Rows are started at most PF_BYTES ahead. */
        enum { AHEAD = 4, PF_BYTES = 16384 };
        const size_t pf_len = rb < PF_BYTES ? rb : PF_BYTES;
        const int64_t *idx = s->idx;
        for (int64_t i = 0; i < s->len && i < AHEAD; i++)
            for (size_t o = 0; o < pf_len; o += 64) __builtin_prefetch(from + (size_t)idx[i] * rb + o);
        for (int64_t i = 0; i < s->len; i++) {
            if (i + AHEAD < s->len)
                for (size_t o = 0; o < pf_len; o += 64) __builtin_prefetch(from + (size_t)idx[i + AHEAD] * rb + o);
            memcpy(to + (size_t)i * rb, from + (size_t)idx[i] * rb, rb);
        }
    }
    return true;
}

/* Wakes the thread if it sleeps (under mu; the caller signals work after unlocking when this returns true). */
static bool wake(tfc_fit_prefetch *p) {
    if (!p->sleeping) return false;
    p->sleeping = false;
    atomic_fetch_add_explicit(&wakes, 1, memory_order_relaxed);
    return true;
}

static void *worker(void *arg) {
    tfc_fit_prefetch *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        slot *s = NULL;
        for (int k = 0; k < p->count && !s; k++)
            if (slot_at(p, k)->state == POSTED) s = slot_at(p, k);
        if (!s) {
            p->sleeping = true;
            while (p->sleeping && !p->stop) pthread_cond_wait(&p->work, &p->mu);
            continue;
        }
        s->state = BUSY;
        p->n_posted--;
        pthread_mutex_unlock(&p->mu);
        tfc_status st = {0};
        bool ok = copy_batch(p, s, &st);
        pthread_mutex_lock(&p->mu);
        if (!ok) {
            drop_out(p, s);
            s->err = st;
        }
        s->state = ok ? READY : FAILED;
        if (p->n_waiting) { /* signalled after the unlock, as in post */
            pthread_mutex_unlock(&p->mu);
            pthread_cond_broadcast(&p->done);
            pthread_mutex_lock(&p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tfc_fit_prefetch *tfc_fit_prefetch_new(tfc_tensor *const *src, int n_src, int64_t max_len, int depth,
                                       tfc_status *st) {
    if (n_src < 1 || n_src > MAX_SRC || max_len < 1 || depth < 0 || depth > TFC_FIT_PREFETCH_MAX_DEPTH) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit prefetch: %d arrays, batches of %lld rows, depth %d", n_src,
                       (long long)max_len, depth);
        return NULL;
    }
    size_t batch_bytes = 0;
    for (int i = 0; i < n_src; i++) batch_bytes += tfc_tensor_byte_size(src[i]) / (size_t)tfc_tensor_dim(src[i], 0);
    batch_bytes *= (size_t)max_len;
    if (depth == 0) {
        size_t fit = batch_bytes ? AUTO_BYTES / batch_bytes : TFC_FIT_PREFETCH_MAX_DEPTH;
        depth = fit < 2 ? 2 : fit > TFC_FIT_PREFETCH_MAX_DEPTH ? TFC_FIT_PREFETCH_MAX_DEPTH : (int)fit;
    }
    tfc_fit_prefetch *p = tfc_calloc(1, sizeof *p);
    int64_t *idx = tfc_malloc((size_t)depth * (size_t)max_len * sizeof *idx);
    if (!p || !idx) {
        tfc_free(p);
        tfc_free(idx);
        tfc_status_oom(st, "fit prefetch", (size_t)depth * (size_t)max_len * sizeof *idx);
        return NULL;
    }
    for (int k = 0; k < depth; k++) p->slots[k].idx = idx + (size_t)k * (size_t)max_len;
    p->n_src = n_src;
    p->max_len = max_len;
    p->depth = depth;
    p->wake_at = depth / 2 > 1 ? depth / 2 : 1;
    for (int i = 0; i < n_src; i++) {
        p->src[i] = src[i];
        p->row_bytes[i] = tfc_tensor_byte_size(src[i]) / (size_t)tfc_tensor_dim(src[i], 0);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    if (pthread_create(&p->thread, NULL, worker, p) != 0) {
        pthread_cond_destroy(&p->done);
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
        tfc_free(idx);
        tfc_free(p);
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "fit prefetch: cannot start a thread");
        return NULL;
    }
    return p;
}

int tfc_fit_prefetch_depth(const tfc_fit_prefetch *p) { return p ? p->depth : 0; }

/* Waits until the head slot is neither POSTED nor BUSY (under mu), waking the thread if it sleeps. */
static void wait_head(tfc_fit_prefetch *p) {
    slot *s = slot_at(p, 0);
    if (s->state == POSTED && wake(p)) {
        pthread_mutex_unlock(&p->mu);
        pthread_cond_signal(&p->work);
        pthread_mutex_lock(&p->mu);
    }
    p->n_waiting++;
    while (s->state == POSTED || s->state == BUSY) pthread_cond_wait(&p->done, &p->mu);
    p->n_waiting--;
}

/* Empties the queue (under mu): waits out copies in progress, drops every batch. */
static void drop_all(tfc_fit_prefetch *p) {
    for (int k = 0; k < p->count; k++) {
        slot *s = slot_at(p, k);
        if (s->state == BUSY) {
            p->n_waiting++;
            while (s->state == BUSY) pthread_cond_wait(&p->done, &p->mu);
            p->n_waiting--;
        }
        if (s->state == POSTED) p->n_posted--;
        drop_out(p, s);
        s->state = READY;
    }
    p->head = 0;
    p->count = 0;
}

bool tfc_fit_prefetch_post(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len) {
    if (!p || len < 1 || len > p->max_len) return false;
    pthread_mutex_lock(&p->mu);
    if (p->count == p->depth) {
        pthread_mutex_unlock(&p->mu);
        return false;
    }
    slot *s = slot_at(p, p->count);
    s->has_perm = perm != NULL;
    s->start = start;
    s->len = len;
    if (perm) memcpy(s->idx, perm + start, (size_t)len * sizeof *s->idx);
    s->state = POSTED;
    p->count++;
    p->n_posted++;
    bool signal = p->n_posted >= p->wake_at && wake(p);
    pthread_mutex_unlock(&p->mu);
    /* signalled after the unlock: a woken thread that ran at once would only block again on mu */
    if (signal) pthread_cond_signal(&p->work);
    return true;
}

int tfc_fit_prefetch_take(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len, tfc_tensor **out,
                          tfc_status *st) {
    if (!p) return 0;
    pthread_mutex_lock(&p->mu);
    int ret = 0;
    if (p->count > 0) {
        slot *s = slot_at(p, 0);
        bool same = s->len == len && s->has_perm == (perm != NULL) &&
                    (perm ? !memcmp(s->idx, perm + start, (size_t)len * sizeof *s->idx) : s->start == start);
        if (same) {
            wait_head(p);
            if (s->state == READY) {
                for (int i = 0; i < p->n_src; i++) {
                    out[i] = s->out[i];
                    s->out[i] = NULL;
                }
                ret = 1;
                atomic_fetch_add(&hits, 1);
                p->head = (p->head + 1) % p->depth;
                p->count--;
            } else {
                *st = s->err;
                ret = -1;
                drop_all(p);
            }
        } else {
            drop_all(p);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return ret;
}

void tfc_fit_prefetch_free(tfc_fit_prefetch *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    p->sleeping = false;
    pthread_mutex_unlock(&p->mu);
    pthread_cond_signal(&p->work);
    pthread_join(p->thread, NULL);
    for (int k = 0; k < p->count; k++) drop_out(p, slot_at(p, k));
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    tfc_free(p->slots[0].idx);
    tfc_free(p);
}
