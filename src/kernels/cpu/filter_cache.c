/* Kept Winograd filter transforms (filter_cache.h): a few entries under a mutex, keyed by the filter buffer's
 * (uid, version) and the data pointer inside it (a view into a larger buffer has another). */
#include <pthread.h>
#include <stdatomic.h>

#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/filter_cache.h"

typedef struct {
    uint64_t uid, version; /* the filter contents the transform was made of (uid 0: free entry) */
    const void *data;
    int64_t c, co;
    float *u;              /* [16][c][co] */
    int users;             /* calls using u now: not replaced meanwhile */
    uint64_t used;         /* last use, for replacing the least recently used */
} entry;

struct tfc_filter_cache {
    pthread_mutex_t mu; /* calls of one instance may overlap (eager threads, graph runs) */
    entry e[TFC_FILTER_CACHE];
    uint64_t clock;
    _Atomic int64_t transforms;
};

tfc_filter_cache *tfc_filter_cache_new(void) {
    tfc_filter_cache *c = tfc_calloc(1, sizeof *c);
    if (c) pthread_mutex_init(&c->mu, NULL);
    return c;
}

void tfc_filter_cache_free(tfc_filter_cache *c) {
    if (!c) return;
    for (int i = 0; i < TFC_FILTER_CACHE; i++) tfc_aligned_free(c->e[i].u);
    pthread_mutex_destroy(&c->mu);
    tfc_free(c);
}

const float *tfc_filter_cache_winograd(tfc_filter_cache *c, tfc_threadpool *pool, const tfc_tensor *f, int64_t ci,
                                       int64_t co, void **token) {
    *token = NULL;
    if (!c || !f->buf || !f->buf->owned || !f->buf->uid || 16 * ci * co > TFC_FILTER_CACHE_MAX_FLOATS) return NULL;
    /* the version before the transform reads the data: a write meanwhile makes the entry stale, never wrong */
    const uint64_t uid = f->buf->uid, ver = atomic_load_explicit(&f->buf->version, memory_order_acquire);
    pthread_mutex_lock(&c->mu);
    entry *e = NULL, *victim = NULL;
    for (int i = 0; i < TFC_FILTER_CACHE && !e; i++) {
        entry *x = &c->e[i];
        if (x->uid == uid && x->version == ver && x->data == f->data && x->c == ci && x->co == co) e = x;
        else if (!x->users && (!victim || (victim->uid && (!x->uid || x->used < victim->used)))) victim = x;
    }
    if (!e && victim) {
        /* transformed under the lock: the calls that would wait for it need the same transform */
        float *u = victim->u && victim->c * victim->co == ci * co ? victim->u
                                                                    : tfc_aligned_alloc((size_t)(16 * ci * co) * sizeof(float));
        if (u) {
            if (u != victim->u) tfc_aligned_free(victim->u);
            tfc_conv_winograd_filter_f32(pool, f->data, ci, co, u);
            atomic_fetch_add_explicit(&c->transforms, 1, memory_order_relaxed);
            *victim = (entry){.uid = uid, .version = ver, .data = f->data, .c = ci, .co = co, .u = u};
            e = victim;
        }
    }
    if (e) e->users++, e->used = ++c->clock;
    pthread_mutex_unlock(&c->mu);
    *token = e;
    return e ? e->u : NULL;
}

void tfc_filter_cache_put(tfc_filter_cache *c, void *token) {
    if (!c || !token) return;
    pthread_mutex_lock(&c->mu);
    ((entry *)token)->users--;
    pthread_mutex_unlock(&c->mu);
}

int64_t tfc_filter_cache_transforms(const tfc_filter_cache *c) {
    return c ? atomic_load_explicit(&((tfc_filter_cache *)c)->transforms, memory_order_relaxed) : 0;
}
