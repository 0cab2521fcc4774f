/* The eager kernel-instance cache (kernel_cache.h): open addressing over TFC_KERNEL_CACHE_SLOTS slots with
 * a probe window; a miss takes a free slot of the window or replaces its least recently used entry. Entries
 * own a deep copy of the attrs they were made for. A mutex guards the table (a context may run ops from
 * several threads); the instance is used outside it, kept alive by the reference the caller holds. */
#include <pthread.h>
#include <string.h>

#include "eager/context_internal.h"
#include "eager/kernel_cache.h"

#define PROBE 8

typedef struct {
    tfc_kernel_inst *inst; /* NULL: free */
    const tfc_kernel_entry *ke;
    uint64_t hash;
    tfc_attrs *attrs;
    int n_in;
    tfc_dtype in_dtypes[TFC_MAX_IO];
    uint64_t stamp;
} slot;

struct tfc_kernel_cache {
    pthread_mutex_t mu;
    uint64_t clock;
    int size;
    int64_t hits, misses, evictions;
    slot slots[TFC_KERNEL_CACHE_SLOTS];
};

static void slot_clear(slot *s) {
    tfc_kernel_inst_unref(s->inst);
    tfc_attrs_free(s->attrs);
    s->inst = NULL;
    s->attrs = NULL;
}

tfc_kernel_inst *tfc_kernel_cache_get(tfc_ctx *ctx, const tfc_kernel_entry *ke, const tfc_op *op,
                                      const tfc_attrs *attrs, const tfc_dtype *dts, int n_in, tfc_status *st) {
    tfc_kernel_cache *c = __atomic_load_n(&ctx->kcache, __ATOMIC_ACQUIRE);
    if (!c) { /* made on the first stateful call; threads racing to make it keep the first one published */
        if (!(c = tfc_calloc(1, sizeof *c))) return tfc_status_oom(st, "kernel cache", sizeof *c), NULL;
        pthread_mutex_init(&c->mu, NULL);
        tfc_kernel_cache *expected = NULL;
        if (!__atomic_compare_exchange_n(&ctx->kcache, &expected, c, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            pthread_mutex_destroy(&c->mu);
            tfc_free(c);
            c = expected;
        }
    }
    uint64_t h = tfc_attrs_hash(attrs) ^ ((uint64_t)(uintptr_t)ke * 0x9E3779B97F4A7C15ull);
    for (int i = 0; i < n_in; i++) h = (h ^ (uint64_t)dts[i]) * 0x100000001B3ull;
    pthread_mutex_lock(&c->mu);
    slot *victim = NULL;
    for (int p = 0; p < PROBE; p++) {
        slot *s = &c->slots[(h + (uint64_t)p) % TFC_KERNEL_CACHE_SLOTS];
        if (s->inst && s->hash == h && s->ke == ke && s->n_in == n_in &&
            !memcmp(s->in_dtypes, dts, (size_t)n_in * sizeof *dts) && tfc_attrs_equal(s->attrs, attrs)) {
            s->stamp = ++c->clock;
            c->hits++;
            tfc_kernel_inst *i = tfc_kernel_inst_ref(s->inst);
            pthread_mutex_unlock(&c->mu);
            return i;
        }
        if (!victim || (victim->inst && (!s->inst || s->stamp < victim->stamp))) victim = s;
    }
    c->misses++;
    pthread_mutex_unlock(&c->mu);
    /* create outside the lock: create may run ops or take long */
    tfc_kernel_inst *i = tfc_kernel_inst_new(ctx, tfc_device_cpu(), ke, op, attrs, dts, n_in, st);
    if (!i) return NULL;
    tfc_attrs *copy = tfc_attrs_clone(attrs);
    if (!copy) return i; /* usable for this call; the next one creates another */
    pthread_mutex_lock(&c->mu);
    if (victim->inst) {
        c->evictions++;
        c->size--;
    }
    slot_clear(victim);
    victim->inst = tfc_kernel_inst_ref(i);
    victim->ke = ke;
    victim->hash = h;
    victim->attrs = copy;
    victim->n_in = n_in;
    memcpy(victim->in_dtypes, dts, (size_t)n_in * sizeof *dts);
    victim->stamp = ++c->clock;
    c->size++;
    pthread_mutex_unlock(&c->mu);
    return i;
}

tfc_kernel_inst *tfc_kernel_cache_instance_of(tfc_ctx *ctx, const tfc_op *op, const tfc_attrs *attrs,
                                              const tfc_dtype *in_dtypes, int n_in, tfc_status *st) {
    const tfc_kernel_entry *ke = tfc_device_kernel(tfc_device_cpu(), op, attrs);
    if (!ke || !ke->create) {
        tfc_status_set(st, TFC_INTERNAL, "%s: no CPU kernel instance", op->def->name);
        return NULL;
    }
    return tfc_kernel_cache_get(ctx, ke, op, attrs, in_dtypes, n_in, st);
}

void tfc_kernel_cache_clear(tfc_ctx *ctx) {
    tfc_kernel_cache *c = ctx->kcache;
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < TFC_KERNEL_CACHE_SLOTS; i++) slot_clear(&c->slots[i]);
    c->size = 0;
    pthread_mutex_unlock(&c->mu);
}

void tfc_kernel_cache_free(tfc_ctx *ctx) {
    tfc_kernel_cache *c = ctx->kcache;
    if (!c) return;
    tfc_kernel_cache_clear(ctx);
    pthread_mutex_destroy(&c->mu);
    tfc_free(c);
    ctx->kcache = NULL;
}

tfc_kernel_cache_stats tfc_kernel_cache_stats_get(tfc_ctx *ctx) {
    tfc_kernel_cache_stats s = {0};
    tfc_kernel_cache *c = ctx->kcache;
    if (!c) return s;
    pthread_mutex_lock(&c->mu);
    s = (tfc_kernel_cache_stats){c->size, c->hits, c->misses, c->evictions};
    pthread_mutex_unlock(&c->mu);
    return s;
}
