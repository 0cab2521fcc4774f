/* Allocation through one hook so fault tests can fail the Nth allocation (SQLite's approach). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/platform.h"
#include "platform/free_lists.h"

static _Atomic int64_t fail_after = -1; /* < 0: never fail */
static _Atomic int64_t failures = 0;
static _Atomic bool fail_once; /* after the one failure, allocations succeed again */

void tfc_alloc_fail_after(int64_t n) {
    atomic_store(&failures, 0);
    atomic_store(&fail_once, false);
    atomic_store(&fail_after, n);
}

void tfc_alloc_fail_once_after(int64_t n) {
    atomic_store(&failures, 0);
    atomic_store(&fail_once, true);
    atomic_store(&fail_after, n);
}

int64_t tfc_alloc_failures(void) { return atomic_load(&failures); }

static _Atomic size_t size_limit; /* 0: none */
void tfc_alloc_set_limit(size_t max_bytes) { atomic_store(&size_limit, max_bytes); }

/* True when an allocation of `size` bytes must fail: larger than the limit, or the injected failure. */
static bool inject_failure_size(size_t size) {
    size_t lim = atomic_load_explicit(&size_limit, memory_order_relaxed);
    return lim && size > lim;
}

/* True when this allocation must fail. */
static bool inject_failure(void) {
    int64_t n = atomic_load(&fail_after);
    for (;;) {
        if (n < 0) return false;
        if (n > 0) {
            if (atomic_compare_exchange_weak(&fail_after, &n, n - 1)) return false;
            continue;
        }
        if (atomic_load(&fail_once) && !atomic_compare_exchange_weak(&fail_after, &n, -1)) continue;
        atomic_fetch_add(&failures, 1);
        return true;
    }
}

void *tfc_malloc(size_t size) {
    if (inject_failure_size(size) || inject_failure()) return NULL;
    return malloc(size ? size : 1);
}

void *tfc_calloc(size_t n, size_t size) {
    size_t total;
    if ((!__builtin_mul_overflow(n, size, &total) && inject_failure_size(total)) || inject_failure()) return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *tfc_realloc(void *p, size_t size) {
    if (inject_failure_size(size) || inject_failure()) return NULL;
    return realloc(p, size ? size : 1);
}

void tfc_free(void *p) { free(p); }

/* ---- per-thread free lists of small blocks (free_lists.h) ---- */
#define FL_STEP 64
#define FL_CLASSES 8 /* blocks of 64, 128, ... 512 bytes */
#define FL_MAX 128   /* blocks kept per class and thread */

typedef struct fl_node {
    struct fl_node *next;
    uintptr_t key; /* FL_KEY while on a list: a block freed twice is caught (as malloc's own caches do) */
} fl_node;
#define FL_KEY ((uintptr_t)0x7466636672656531ull)

typedef struct {
    fl_node *head[FL_CLASSES];
    int n[FL_CLASSES];
    bool registered; /* the thread-exit destructor is armed */
} fl_lists;

static _Thread_local fl_lists tls_fl;
static pthread_key_t fl_key;
static pthread_once_t fl_once = PTHREAD_ONCE_INIT;
static atomic_int fl_on = -1; /* -1: not decided yet */

/* At a thread's exit: its blocks go back to malloc. */
static void fl_release(void *arg) {
    fl_lists *l = arg;
    for (int c = 0; c < FL_CLASSES; c++) {
        while (l->head[c]) {
            fl_node *b = l->head[c];
            l->head[c] = b->next;
            free(b);
        }
        l->n[c] = 0;
    }
    l->registered = false;
}

static void fl_init(void) {
    const char *e = getenv("TFC_FREE_LISTS");
    bool on = !(e && !strcmp(e, "0")) && pthread_key_create(&fl_key, fl_release) == 0;
#if defined(__SANITIZE_ADDRESS__)
    on = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    on = false;
#endif
#endif
    atomic_store(&fl_on, on);
}

bool tfc_fl_enabled(void) {
    if (atomic_load_explicit(&fl_on, memory_order_relaxed) < 0) pthread_once(&fl_once, fl_init);
    return atomic_load_explicit(&fl_on, memory_order_relaxed) > 0;
}

/* A block of size bytes without the failure hook. */
static void *fl_alloc_raw(size_t size) {
    if (size == 0 || size > FL_STEP * FL_CLASSES || !tfc_fl_enabled()) return malloc(size ? size : 1);
    int c = (int)((size - 1) / FL_STEP);
    fl_lists *l = &tls_fl;
    fl_node *b = l->head[c];
    if (b) {
        l->head[c] = b->next;
        l->n[c]--;
        b->key = 0;
        return b;
    }
    return malloc((size_t)(c + 1) * FL_STEP);
}

void *tfc_fl_alloc(size_t size) {
    if (inject_failure()) return NULL;
    return fl_alloc_raw(size);
}

void tfc_fl_free(void *p, size_t size) {
    if (!p) return;
    if (size == 0 || size > FL_STEP * FL_CLASSES || !tfc_fl_enabled()) {
        free(p);
        return;
    }
    int c = (int)((size - 1) / FL_STEP);
    fl_lists *l = &tls_fl;
    if (l->n[c] >= FL_MAX) {
        free(p);
        return;
    }
    if (!l->registered) { /* the first block kept by this thread: release the lists when it exits */
        l->registered = true;
        pthread_setspecific(fl_key, l);
    }
    fl_node *b = p;
    if (b->key == FL_KEY) /* maybe freed twice: on this thread's list? */
        for (fl_node *q = l->head[c]; q; q = q->next)
            if (q == b) {
                fprintf(stderr, "tfc: block %p freed twice\n", p);
                abort();
            }
    b->key = FL_KEY;
    b->next = l->head[c];
    l->head[c] = b;
    l->n[c]++;
}

/* Tensor buffers: 64-byte aligned, with a header in front recording the size so that freed large blocks can
 * be cached and handed out again for the same size. A training step allocates the same shapes every step;
 * reusing their (already faulted-in) pages removes the page-fault cost that otherwise dominates large
 * outputs. The cache is bounded (TFC_ALLOC_CACHE_MB, default 256; 0 disables) and off under AddressSanitizer
 * so that use-after-free stays detectable.
 *
 * Blocks come from plain malloc, 80 bytes more than asked, the data starting at the first 64-byte boundary
 * with room for the header before it: posix_memalign carves every block out of a larger free chunk and
 * returns the rest to the unsorted bins, which made the small tensors of an input pipeline (scalars, 28x28
 * images) cost more in the allocator than in their kernels, and malloc's per-thread caches serve small sizes
 * directly. Sizes are rounded to 64 bytes (so that vector loops may touch a whole last 64-byte line), to
 * 4 KiB from CACHE_MIN_BYTES on (so that cached blocks match the sizes asked for again). */
#define ALIGN 64
#define CACHE_MIN_BYTES ((size_t)128 << 10)
#define CACHE_SLOTS 64

typedef struct {
    void *base;               /* what malloc returned */
    size_t size;              /* rounded size of the data */
} block_hdr;

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static void *cache_ptr[CACHE_SLOTS]; /* aligned data pointers */
static size_t cache_size[CACHE_SLOTS];
static int cache_n;
static size_t cache_bytes;
static int64_t cache_limit = -1; /* bytes; -1: not read yet */

static size_t cache_cap(void) {
    if (cache_limit < 0) {
#if defined(__SANITIZE_ADDRESS__)
        cache_limit = 0;
#else
        const char *e = getenv("TFC_ALLOC_CACHE_MB");
        long mb = e ? atol(e) : 256;
        cache_limit = mb > 0 ? (int64_t)mb << 20 : 0;
#endif
    }
    return (size_t)cache_limit;
}

static size_t round_size(size_t size) {
    return size >= CACHE_MIN_BYTES ? (size + 4095) & ~(size_t)4095 : (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static block_hdr *header(void *ptr) { return (block_hdr *)ptr - 1; }

void *tfc_aligned_alloc(size_t size) {
    if (inject_failure_size(size) || inject_failure()) return NULL;
    if (size > PTRDIFF_MAX - 2 * 4096) return NULL; /* no object is that large; rounding and the header fit */
    size_t rs = round_size(size ? size : ALIGN);
    if (rs >= CACHE_MIN_BYTES) {
        pthread_mutex_lock(&cache_mu);
        for (int i = cache_n - 1; i >= 0; i--)
            if (cache_size[i] == rs) {
                char *p = cache_ptr[i];
                cache_ptr[i] = cache_ptr[cache_n - 1];
                cache_size[i] = cache_size[cache_n - 1];
                cache_n--;
                cache_bytes -= rs;
                pthread_mutex_unlock(&cache_mu);
                return p;
            }
        pthread_mutex_unlock(&cache_mu);
    }
    /* the data starts at the first 64-byte boundary with room for the header before it (small blocks from the
     * free lists) */
    char *base = fl_alloc_raw(rs + ALIGN + sizeof(block_hdr));
    if (!base) return NULL;
    char *p = (char *)(((uintptr_t)base + sizeof(block_hdr) + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1));
    *header(p) = (block_hdr){base, rs};
    return p;
}

void tfc_aligned_free(void *ptr) {
    if (!ptr) return;
    const block_hdr h = *header(ptr);
    if (h.size >= CACHE_MIN_BYTES && h.size <= cache_cap()) {
        pthread_mutex_lock(&cache_mu);
        /* Evict the oldest entries until this block fits. */
        while (cache_n > 0 && (cache_n == CACHE_SLOTS || cache_bytes + h.size > cache_cap())) {
            free(header(cache_ptr[0])->base);
            cache_bytes -= cache_size[0];
            memmove(cache_ptr, cache_ptr + 1, (size_t)(cache_n - 1) * sizeof cache_ptr[0]);
            memmove(cache_size, cache_size + 1, (size_t)(cache_n - 1) * sizeof cache_size[0]);
            cache_n--;
        }
        cache_ptr[cache_n] = ptr;
        cache_size[cache_n++] = h.size;
        cache_bytes += h.size;
        pthread_mutex_unlock(&cache_mu);
        return;
    }
    tfc_fl_free(h.base, h.size + ALIGN + sizeof(block_hdr));
}

void tfc_alloc_cache_clear(void) {
    pthread_mutex_lock(&cache_mu);
    for (int i = 0; i < cache_n; i++) free(header(cache_ptr[i])->base);
    cache_n = 0;
    cache_bytes = 0;
    pthread_mutex_unlock(&cache_mu);
}

char *tfc_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = tfc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
