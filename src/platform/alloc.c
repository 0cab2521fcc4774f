/* Allocation through one hook so fault tests can fail the Nth allocation (SQLite's approach). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/platform.h"

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
    if (inject_failure()) return NULL;
    return malloc(size ? size : 1);
}

void *tfc_calloc(size_t n, size_t size) {
    if (inject_failure()) return NULL;
    return calloc(n ? n : 1, size ? size : 1);
}

void *tfc_realloc(void *p, size_t size) {
    if (inject_failure()) return NULL;
    return realloc(p, size ? size : 1);
}

void tfc_free(void *p) { free(p); }

void *tfc_aligned_alloc(size_t size) {
    if (inject_failure()) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? size : 64) != 0) return NULL;
    return p;
}

void tfc_aligned_free(void *p) { free(p); }

char *tfc_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = tfc_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
