/* Platform layer: thread pool (exact coverage, nesting, concurrency, lifecycle), logging, allocation hooks. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "tfc_test.h"

#if defined(__SANITIZE_ADDRESS__)
/* Impossible sizes must come back as NULL under ASan too, as they do from malloc. */
const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void) {
    return "allocator_may_return_null=1";
}
#endif

/* ---- parallel_for ----------------------------------------------------------------------------------- */
typedef struct {
    int64_t n;
    _Atomic int *hits;     /* hits[i]: how often index i was visited */
    _Atomic int64_t calls; /* fn invocations (chunks) */
    _Atomic int bad_range;
    _Atomic int nested_bad;
    tfc_threadpool *pool; /* for nested calls, or NULL */
} cover_job;

static void nested_fn(void *arg, int64_t b, int64_t e) {
    int64_t *seen = arg;
    seen[0]++; /* plain writes: must run inline on the calling thread */
    seen[1] = b;
    seen[2] = e;
}

static void cover_fn(void *arg, int64_t b, int64_t e) {
    cover_job *j = arg;
    atomic_fetch_add(&j->calls, 1);
    if (b < 0 || e > j->n || b >= e) atomic_store(&j->bad_range, 1);
    for (int64_t i = b; i < e && i >= 0 && i < j->n; i++) atomic_fetch_add(&j->hits[i], 1);
    if (j->pool) {
        /* a nested call from inside a chunk (worker or caller) runs inline: one call over the whole range */
        int64_t seen[3] = {0, -1, -1};
        tfc_parallel_for(j->pool, 1000, 1000000, nested_fn, seen);
        if (seen[0] != 1 || seen[1] != 0 || seen[2] != 1000) atomic_store(&j->nested_bad, 1);
    }
}

/* Runs one parallel_for over [0, n) and checks every index was visited exactly once. Returns the chunk count. */
static int64_t check_cover(tfc_threadpool *pool, int64_t n, int64_t cost, bool nested) {
    cover_job j = {.n = n, .pool = nested ? pool : NULL};
    j.hits = calloc((size_t)(n > 0 ? n : 1), sizeof *j.hits);
    REQUIRE(j.hits);
    tfc_parallel_for(pool, n, cost, cover_fn, &j);
    int wrong = 0;
    for (int64_t i = 0; i < n; i++) wrong += atomic_load(&j.hits[i]) != 1;
    if (wrong)
        fprintf(stderr, "parallel_for n=%lld cost=%lld threads=%d: %d indices not visited exactly once\n",
                (long long)n, (long long)cost, tfc_threadpool_size(pool), wrong);
    CHECK(wrong == 0);
    CHECK(!atomic_load(&j.bad_range));
    CHECK(!atomic_load(&j.nested_bad));
    if (n <= 0) CHECK(atomic_load(&j.calls) == 0);
    free(j.hits);
    return atomic_load(&j.calls);
}

static void test_parallel_for_cover(void) {
    const int64_t ns[] = {0, 1, 2, 3, 7, 16, 17, 100, 1001, 65537, 200003};
    const int64_t costs[] = {0, 1, 10, 1000, 1000000};
    const int threads[] = {1, 2, 4};
    for (size_t t = 0; t < 3; t++) {
        tfc_threadpool *pool = tfc_threadpool_new(threads[t]);
        REQUIRE(pool);
        CHECK(tfc_threadpool_size(pool) == threads[t]);
        for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
            for (size_t c = 0; c < sizeof costs / sizeof costs[0]; c++) {
                int64_t calls = check_cover(pool, ns[a], costs[c], false);
                double total = (double)ns[a] * (double)(costs[c] > 0 ? costs[c] : 1);
                /* cheap work runs inline in one call; expensive work on several threads is split */
                if (ns[a] > 0 && (threads[t] == 1 || total < 50000.0)) CHECK(calls == 1);
                if (threads[t] > 1 && ns[a] >= 2 && total >= 1e6) CHECK(calls > 1);
                CHECK(calls <= (ns[a] > 0 ? ns[a] : 0));
            }
        check_cover(pool, -5, 1000, false); /* negative n: nothing to do */
        /* n * cost far beyond int64: still split into at most 4 chunks per thread */
        int64_t calls = check_cover(pool, 100, INT64_MAX, false);
        CHECK(calls >= 1 && calls <= 4 * threads[t]);
        if (threads[t] > 1) CHECK(calls > 1);
        check_cover(pool, 1000, 1000000, true);
        check_cover(pool, 7, 1000000, true);
        tfc_threadpool_free(pool);
    }
    /* NULL pool runs inline */
    CHECK(check_cover(NULL, 1000, 1000000, false) == 1);
    CHECK(tfc_threadpool_size(NULL) == 1);
}

/* Two threads share one pool: calls are serialised and each still covers its range exactly once. */
typedef struct {
    tfc_threadpool *pool;
    int rounds;
} share_arg;

static void *share_thread(void *p) {
    share_arg *a = p;
    for (int r = 0; r < a->rounds; r++) check_cover(a->pool, 5000 + r, 100000, r % 3 == 0);
    return NULL;
}

static void test_parallel_for_shared_pool(void) {
    tfc_threadpool *pool = tfc_threadpool_new(4);
    REQUIRE(pool);
    share_arg a = {pool, 30};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, share_thread, &a) == 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    tfc_threadpool_free(pool);
}

/* Hand-offs (threadpool.c): workers poll for a while after each job, then sleep; the caller polls for workers
 * still inside a chunk, then sleeps. Back-to-back small jobs (joined by polling workers), jobs after an idle
 * gap longer than the polling (sleeping workers woken), and chunks longer than the polling (the caller
 * sleeps until the last worker signals): every index once, every time. */
static void slow_fn(void *arg, int64_t b, int64_t e) {
    _Atomic int *hits = arg;
    usleep(300); /* longer than the workers' and the caller's polling (50 us by default) */
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&hits[i], 1);
}

static void test_parallel_for_handoff(void) {
    const int threads[] = {2, 4};
    for (size_t t = 0; t < 2; t++) {
        tfc_threadpool *pool = tfc_threadpool_new(threads[t]);
        REQUIRE(pool);
        for (int r = 0; r < 3000; r++) {
            check_cover(pool, 2 + r % 5, 1000000, false);
            if (r % 500 == 499) usleep(2000); /* workers asleep by now */
        }
        for (int r = 0; r < 4; r++) {
            _Atomic int hits[8] = {0};
            tfc_parallel_for(pool, 8, 10000000, slow_fn, hits);
            int wrong = 0;
            for (int i = 0; i < 8; i++) wrong += atomic_load(&hits[i]) != 1;
            CHECK(wrong == 0);
        }
        tfc_threadpool_free(pool); /* right after a job: workers still polling */
    }
}

static void test_threadpool_lifecycle(void) {
    for (int i = 0; i < 60; i++) {
        int n = 1 + i % 4;
        tfc_threadpool *pool = tfc_threadpool_new(n);
        REQUIRE(pool);
        CHECK(tfc_threadpool_size(pool) == n);
        if (i % 2) check_cover(pool, 10000, 1000, false);
        tfc_threadpool_free(pool); /* freed right after creation too: workers may not have started */
    }
    tfc_threadpool *def = tfc_threadpool_new(0);
    REQUIRE(def);
    CHECK(tfc_threadpool_size(def) == tfc_num_cores());
    CHECK(tfc_num_cores() >= 1);
    tfc_threadpool_free(def);
    tfc_threadpool_free(NULL);
    /* out of memory: NULL, no crash, nothing leaked (ASan) */
    for (int k = 0; k < 3; k++) {
        tfc_alloc_fail_after(k);
        tfc_threadpool *p = tfc_threadpool_new(4);
        tfc_alloc_fail_after(-1);
        if (p) {
            check_cover(p, 1000, 100000, false);
            tfc_threadpool_free(p);
        } else {
            CHECK(k < 2); /* the pool struct and its thread array are the only allocations */
        }
    }
}

/* ---- logging ------------------------------------------------------------------------------------------ */
typedef struct {
    int n;
    tfc_log_level level[8];
    char msg[8][1100];
} log_capture;

static void capture_sink(void *user, tfc_log_level level, const char *msg) {
    log_capture *c = user;
    if (c->n < 8) {
        c->level[c->n] = level;
        snprintf(c->msg[c->n], sizeof c->msg[0], "%s", msg);
    }
    c->n++;
}

/* Runs tfc_log with stderr redirected to a temp file and returns what was written. */
static void log_to_stderr_capture(tfc_log_level level, const char *text, char *out, size_t size) {
    fflush(stderr);
    FILE *tmp = tmpfile();
    REQUIRE(tmp);
    int saved = dup(2);
    REQUIRE(saved >= 0);
    REQUIRE(dup2(fileno(tmp), 2) >= 0);
    tfc_log(level, "%s", text);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(out, 1, size - 1, tmp);
    out[n] = 0;
    fclose(tmp);
}

static void test_logging(void) {
    log_capture c = {0};
    /* main() set TFC_MIN_LOG_LEVEL=2 before the first log: only errors pass */
    tfc_log_set_sink(capture_sink, &c);
    tfc_log(TFC_LOG_INFO, "info %d", 1);
    tfc_log(TFC_LOG_WARNING, "warning %d", 2);
    tfc_log(TFC_LOG_ERROR, "error %d", 3);
    CHECK(c.n == 1);
    CHECK(c.level[0] == TFC_LOG_ERROR && strcmp(c.msg[0], "error 3") == 0);

    memset(&c, 0, sizeof c);
    tfc_log_set_min_level(TFC_LOG_INFO);
    tfc_log(TFC_LOG_INFO, "a=%s b=%.2f", "x", 1.5);
    tfc_log(TFC_LOG_WARNING, "w");
    CHECK(c.n == 2);
    CHECK(c.level[0] == TFC_LOG_INFO && strcmp(c.msg[0], "a=x b=1.50") == 0);
    CHECK(c.level[1] == TFC_LOG_WARNING && strcmp(c.msg[1], "w") == 0);

    /* long messages are truncated, not overflowed */
    memset(&c, 0, sizeof c);
    char big[3000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = 0;
    tfc_log(TFC_LOG_ERROR, "%s", big);
    CHECK(c.n == 1 && strlen(c.msg[0]) == 1023 && c.msg[0][0] == 'q');

    memset(&c, 0, sizeof c);
    tfc_log_set_min_level(TFC_LOG_WARNING);
    tfc_log(TFC_LOG_INFO, "dropped");
    tfc_log(TFC_LOG_WARNING, "kept");
    CHECK(c.n == 1 && strcmp(c.msg[0], "kept") == 0);

    /* NULL restores the stderr sink; the capture no longer receives anything */
    memset(&c, 0, sizeof c);
    tfc_log_set_sink(NULL, NULL);
    char out[256];
    log_to_stderr_capture(TFC_LOG_WARNING, "to stderr", out, sizeof out);
    CHECK(strcmp(out, "tfc W to stderr\n") == 0);
    log_to_stderr_capture(TFC_LOG_ERROR, "bad", out, sizeof out);
    CHECK(strcmp(out, "tfc E bad\n") == 0);
    log_to_stderr_capture(TFC_LOG_INFO, "quiet", out, sizeof out);
    CHECK(strcmp(out, "") == 0);
    tfc_log_set_min_level(TFC_LOG_INFO);
    log_to_stderr_capture(TFC_LOG_INFO, "loud", out, sizeof out);
    CHECK(strcmp(out, "tfc I loud\n") == 0);
    tfc_log_set_min_level(TFC_LOG_WARNING);
    CHECK(c.n == 0);
}

/* ---- allocation hooks ------------------------------------------------------------------------------ */
static void test_alloc_basic(void) {
    void *p = tfc_malloc(0);
    CHECK(p != NULL);
    tfc_free(p);
    tfc_free(NULL);
    unsigned char *z = tfc_calloc(100, 3);
    REQUIRE(z);
    int nz = 0;
    for (int i = 0; i < 300; i++) nz += z[i] != 0;
    CHECK(nz == 0);
    z[299] = 7;
    unsigned char *r = tfc_realloc(z, 5000);
    REQUIRE(r);
    CHECK(r[299] == 7);
    tfc_free(r);
    for (size_t sz = 0; sz < 300; sz += 37) {
        void *a = tfc_aligned_alloc(sz);
        REQUIRE(a);
        CHECK(((uintptr_t)a & 63) == 0);
        memset(a, 1, sz);
        tfc_aligned_free(a);
    }
    /* small blocks come from malloc, large ones (>= 128 KiB) are cached for their size: many live blocks of
     * mixed sizes stay 64-byte aligned, writable to their rounded size and intact until freed */
    enum { NB = 48 };
    unsigned char *blk[NB];
    size_t bsz[NB];
    for (int i = 0; i < NB; i++) {
        bsz[i] = i % 3 == 0 ? ((size_t)128 << 10) + (size_t)i * 4000 : (size_t)i * i * 97 + (size_t)(i & 7);
        blk[i] = tfc_aligned_alloc(bsz[i]);
        REQUIRE(blk[i]);
        CHECK(((uintptr_t)blk[i] & 63) == 0);
        size_t rounded = (bsz[i] + 63) & ~(size_t)63;
        memset(blk[i], i + 1, rounded ? rounded : 64);
    }
    for (int round = 0; round < 3; round++)
        for (int i = round; i < NB; i += 3) { /* free a third, allocate again (large ones reuse the cache) */
            for (size_t k = 0; k < bsz[i]; k++)
                if (blk[i][k] != (unsigned char)(i + 1)) {
                    CHECK(blk[i][k] == (unsigned char)(i + 1));
                    break;
                }
            tfc_aligned_free(blk[i]);
            blk[i] = tfc_aligned_alloc(bsz[i]);
            REQUIRE(blk[i]);
            CHECK(((uintptr_t)blk[i] & 63) == 0);
            memset(blk[i], i + 1, bsz[i]);
        }
    for (int i = 0; i < NB; i++) tfc_aligned_free(blk[i]);
    tfc_alloc_cache_clear();
    CHECK(tfc_aligned_alloc(SIZE_MAX - 100) == NULL);
    CHECK(tfc_aligned_alloc(SIZE_MAX / 2) == NULL);
    tfc_aligned_free(NULL);
    char *d = tfc_strdup("hello");
    CHECK(d && strcmp(d, "hello") == 0);
    tfc_free(d);
    CHECK(tfc_strdup(NULL) == NULL);
    /* impossible sizes fail with NULL rather than aborting */
    tfc_alloc_fail_after(-1);
    CHECK(tfc_calloc(SIZE_MAX / 2, 4) == NULL);
}

static void test_alloc_fail_after(void) {
    /* n = 0: the very next allocation fails, and so does every later one */
    tfc_alloc_fail_after(0);
    CHECK(tfc_alloc_failures() == 0);
    CHECK(tfc_malloc(16) == NULL);
    CHECK(tfc_calloc(4, 4) == NULL);
    CHECK(tfc_aligned_alloc(64) == NULL);
    CHECK(tfc_strdup("x") == NULL);
    CHECK(tfc_alloc_failures() == 4);
    tfc_alloc_fail_after(-1); /* disables and resets the count */
    CHECK(tfc_alloc_failures() == 0);
    void *p = tfc_malloc(16);
    CHECK(p != NULL);

    /* n = 3: three succeed (whatever the allocator), then failures are counted */
    tfc_alloc_fail_after(3);
    void *a = tfc_malloc(8), *b = tfc_calloc(1, 8), *c = tfc_aligned_alloc(8);
    CHECK(a && b && c);
    CHECK(tfc_alloc_failures() == 0);
    /* a failed realloc leaves the old block valid */
    memcpy(p, "abcdefghijklmno", 16);
    void *q = tfc_realloc(p, 1 << 20);
    CHECK(q == NULL);
    CHECK(memcmp(p, "abcdefghijklmno", 16) == 0);
    CHECK(tfc_malloc(1) == NULL);
    CHECK(tfc_alloc_failures() == 2);
    tfc_alloc_fail_after(-1);
    tfc_free(a);
    tfc_free(b);
    tfc_aligned_free(c);
    tfc_free(p);
    /* re-arming resets the failure count */
    tfc_alloc_fail_after(0);
    CHECK(tfc_malloc(1) == NULL);
    tfc_alloc_fail_after(1);
    CHECK(tfc_alloc_failures() == 0);
    void *one = tfc_malloc(1);
    CHECK(one != NULL);
    CHECK(tfc_malloc(1) == NULL);
    CHECK(tfc_alloc_failures() == 1);
    tfc_alloc_fail_after(-1);
    tfc_free(one);
}

static void test_alloc_fail_once(void) {
    /* only the allocation after the first n fails; the rest succeed again */
    tfc_alloc_fail_once_after(2);
    void *a = tfc_malloc(8), *b = tfc_malloc(8);
    CHECK(a && b);
    CHECK(tfc_malloc(8) == NULL);
    CHECK(tfc_alloc_failures() == 1);
    void *c = tfc_calloc(2, 8), *d = tfc_aligned_alloc(8);
    CHECK(c && d);
    CHECK(tfc_alloc_failures() == 1);
    tfc_alloc_fail_once_after(0);
    CHECK(tfc_alloc_failures() == 0);
    CHECK(tfc_strdup("abc") == NULL);
    char *e = tfc_strdup("abc");
    CHECK(e && strcmp(e, "abc") == 0);
    CHECK(tfc_alloc_failures() == 1);
    /* switching back to persistent mode */
    tfc_alloc_fail_after(0);
    CHECK(tfc_malloc(1) == NULL && tfc_malloc(1) == NULL);
    CHECK(tfc_alloc_failures() == 2);
    tfc_alloc_fail_after(-1);
    tfc_free(a);
    tfc_free(b);
    tfc_free(c);
    tfc_aligned_free(d);
    tfc_free(e);
}

/* The budget is shared by all threads: exactly n allocations succeed in total. */
typedef struct {
    _Atomic int ok;
    void *ptrs[4][1000];
} race_arg;
static race_arg race;
static int race_index[4] = {0, 1, 2, 3};

static void *alloc_thread(void *p) {
    int t = *(int *)p;
    for (int i = 0; i < 1000; i++) {
        race.ptrs[t][i] = tfc_malloc(24);
        if (race.ptrs[t][i]) atomic_fetch_add(&race.ok, 1);
    }
    return NULL;
}

static void test_alloc_fail_threads(void) {
    memset(&race, 0, sizeof race);
    tfc_alloc_fail_after(1500);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) REQUIRE(pthread_create(&th[i], NULL, alloc_thread, &race_index[i]) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK(atomic_load(&race.ok) == 1500);
    CHECK(tfc_alloc_failures() == 2500);
    tfc_alloc_fail_after(-1);
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 1000; i++) tfc_free(race.ptrs[t][i]);
    /* once mode under contention: exactly one allocation fails */
    memset(&race, 0, sizeof race);
    tfc_alloc_fail_once_after(1500);
    for (int i = 0; i < 4; i++) REQUIRE(pthread_create(&th[i], NULL, alloc_thread, &race_index[i]) == 0);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    CHECK(atomic_load(&race.ok) == 3999);
    CHECK(tfc_alloc_failures() == 1);
    tfc_alloc_fail_after(-1);
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < 1000; i++) tfc_free(race.ptrs[t][i]);
}

int main(void) {
    setenv("TFC_MIN_LOG_LEVEL", "2", 1); /* read at the first log call */
    test_logging();
    test_alloc_basic();
    test_alloc_fail_after();
    test_alloc_fail_once();
    test_alloc_fail_threads();
    test_parallel_for_cover();
    test_parallel_for_shared_pool();
    test_parallel_for_handoff();
    test_threadpool_lifecycle();
    TEST_MAIN_END();
}
