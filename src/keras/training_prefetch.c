/* fit's batch prefetcher (training_prefetch.h): one background thread copies the rows of the posted batch while
 * the caller trains on the current one.
 *
 * States, under mu: IDLE (nothing posted) -> POSTED (indices copied, the thread wakes) -> BUSY (the thread
 * copies without the lock) -> READY (out holds the tensors) or FAILED (err holds the status). take and post
 * wait for a BUSY copy to finish before they reuse or drop its tensors; free sets stop and joins. */
#include "keras/training_prefetch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "keras/keras_internal.h"
#include "tfc/platform.h"

#define MAX_SRC (2 * TFC_KERAS_MAX_IO + 1) /* x arrays, y arrays, sample weights */

enum { IDLE, POSTED, BUSY, READY, FAILED };

static _Atomic int64_t hits;

int64_t tfc_fit_prefetch_hits(void) { return atomic_load(&hits); }

struct tfc_fit_prefetch {
    tfc_tensor *src[MAX_SRC];
    size_t row_bytes[MAX_SRC];
    int n_src;
    int64_t max_len;
    /* the posted batch */
    int64_t *idx;       /* max_len indices, when has_perm */
    bool has_perm;
    int64_t start, len;
    tfc_tensor *out[MAX_SRC];
    tfc_status err;
    int state;
    bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
};

bool tfc_fit_prefetch_wanted(tfc_tensor *const *src, int n_src) {
    const char *env = getenv("TFC_FIT_PREFETCH");
    if (env && !strcmp(env, "0")) return false;
    if (n_src < 1 || n_src > MAX_SRC) return false;
    for (int i = 0; i < n_src; i++) {
        tfc_dtype dt = tfc_tensor_dtype(src[i]);
        if (dt == TFC_STRING || dt == TFC_RESOURCE || tfc_dtype_size(dt) == 0 || !tfc_tensor_data(src[i]) ||
            tfc_tensor_rank(src[i]) < 1 || tfc_tensor_dim(src[i], 0) < 1)
            return false;
    }
    return true;
}

static void drop_out(tfc_fit_prefetch *p) {
    for (int i = 0; i < p->n_src; i++) {
        tfc_tensor_unref(p->out[i]);
        p->out[i] = NULL;
    }
}

/* The posted batch into p->out (called without the lock; the request fields are stable while BUSY). */
static bool copy_batch(tfc_fit_prefetch *p, tfc_status *st) {
    for (int s = 0; s < p->n_src; s++) {
        tfc_shape shape = *tfc_tensor_shape(p->src[s]);
        shape.dims[0] = p->len;
        tfc_tensor *t = tfc_tensor_alloc(tfc_tensor_dtype(p->src[s]), &shape, st);
        if (!t) return false;
        p->out[s] = t;
        const size_t rb = p->row_bytes[s];
        const char *from = tfc_tensor_data(p->src[s]);
        char *to = tfc_tensor_mutable_data(t);
        if (!p->has_perm) {
            memcpy(to, from + (size_t)p->start * rb, (size_t)p->len * rb);
            continue;
        }
        /* rows in the order of the indices. The arrays are usually far larger than the caches, so each row
         * is a DRAM miss: every 64-byte line of the rows AHEAD rows on is requested before they are copied
         * (rows of a few KiB, e.g. 3136 bytes for a 28x28 float image; the first line alone left the rest of
         * the row to the hardware prefetcher, one miss at a time). Rows are started at most PF_BYTES ahead. */
        enum { AHEAD = 4, PF_BYTES = 16384 };
        const size_t pf_len = rb < PF_BYTES ? rb : PF_BYTES;
        for (int64_t i = 0; i < p->len && i < AHEAD; i++)
            for (size_t o = 0; o < pf_len; o += 64) __builtin_prefetch(from + (size_t)p->idx[i] * rb + o);
        for (int64_t i = 0; i < p->len; i++) {
            if (i + AHEAD < p->len)
                for (size_t o = 0; o < pf_len; o += 64) __builtin_prefetch(from + (size_t)p->idx[i + AHEAD] * rb + o);
            memcpy(to + (size_t)i * rb, from + (size_t)p->idx[i] * rb, rb);
        }
    }
    return true;
}

static void *worker(void *arg) {
    tfc_fit_prefetch *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->state != POSTED && !p->stop) pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop) break;
        p->state = BUSY;
        pthread_mutex_unlock(&p->mu);
        tfc_status st = {0};
        bool ok = copy_batch(p, &st);
        pthread_mutex_lock(&p->mu);
        if (!ok) {
            drop_out(p);
            p->err = st;
        }
        p->state = ok ? READY : FAILED;
        pthread_mutex_unlock(&p->mu);
        pthread_cond_broadcast(&p->cv); /* after the unlock, as in post */
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tfc_fit_prefetch *tfc_fit_prefetch_new(tfc_tensor *const *src, int n_src, int64_t max_len, tfc_status *st) {
    if (n_src < 1 || n_src > MAX_SRC || max_len < 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit prefetch: %d arrays, batches of %lld rows", n_src,
                       (long long)max_len);
        return NULL;
    }
    tfc_fit_prefetch *p = tfc_calloc(1, sizeof *p);
    int64_t *idx = tfc_malloc((size_t)max_len * sizeof *idx);
    if (!p || !idx) {
        tfc_free(p);
        tfc_free(idx);
        tfc_status_oom(st, "fit prefetch", (size_t)max_len * sizeof *idx);
        return NULL;
    }
    p->idx = idx;
    p->n_src = n_src;
    p->max_len = max_len;
    for (int i = 0; i < n_src; i++) {
        p->src[i] = src[i];
        p->row_bytes[i] = tfc_tensor_byte_size(src[i]) / (size_t)tfc_tensor_dim(src[i], 0);
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, worker, p) != 0) {
        pthread_cond_destroy(&p->cv);
        pthread_mutex_destroy(&p->mu);
        tfc_free(p->idx);
        tfc_free(p);
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "fit prefetch: cannot start a thread");
        return NULL;
    }
    return p;
}

/* Waits out a copy in progress and forgets the posted batch (under mu). */
static void settle_and_drop(tfc_fit_prefetch *p) {
    while (p->state == BUSY) pthread_cond_wait(&p->cv, &p->mu);
    drop_out(p);
    p->state = IDLE;
}

void tfc_fit_prefetch_post(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len) {
    if (!p || len < 1 || len > p->max_len) return;
    pthread_mutex_lock(&p->mu);
    settle_and_drop(p);
    p->has_perm = perm != NULL;
    p->start = start;
    p->len = len;
    if (perm) memcpy(p->idx, perm + start, (size_t)len * sizeof *p->idx);
    p->state = POSTED;
    pthread_mutex_unlock(&p->mu);
    /* signalled after the unlock: a woken thread that ran at once would only block again on mu */
    pthread_cond_broadcast(&p->cv);
}

int tfc_fit_prefetch_take(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len, tfc_tensor **out,
                          tfc_status *st) {
    if (!p) return 0;
    pthread_mutex_lock(&p->mu);
    int ret = 0;
    if (p->state != IDLE) {
        bool same = p->len == len && p->has_perm == (perm != NULL) &&
                    (perm ? !memcmp(p->idx, perm + start, (size_t)len * sizeof *p->idx) : p->start == start);
        if (same) {
            while (p->state == POSTED || p->state == BUSY) pthread_cond_wait(&p->cv, &p->mu);
            if (p->state == READY) {
                for (int i = 0; i < p->n_src; i++) {
                    out[i] = p->out[i];
                    p->out[i] = NULL;
                }
                ret = 1;
                atomic_fetch_add(&hits, 1);
            } else {
                *st = p->err;
                ret = -1;
            }
            p->state = IDLE;
        } else {
            settle_and_drop(p);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return ret;
}

void tfc_fit_prefetch_free(tfc_fit_prefetch *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    drop_out(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    tfc_free(p->idx);
    tfc_free(p);
}
