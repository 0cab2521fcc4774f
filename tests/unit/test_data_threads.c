/* tf.data threads: iterators freed mid-epoch with workers running, concurrent iterators over one dataset,
 * nondeterministic order, AUTOTUNE ramping up, hand-offs in runs (cheap elements) turning back to single
 * elements (slow ones), and bounded memory over a dataset larger than the buffers (live tensors and RSS). Run under ASan and ThreadSanitizer (-DTFC_TSAN=ON) too. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data_test_util.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (!f) return 0;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
    fclose(f);
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* x -> x, after `user` microseconds */
/* Concurrent slow_id calls now and at most (how much parallelism a stage really used). */
static _Atomic int slow_active, slow_max_active;

static bool slow_id(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    tfc_status *st) {
    int a = atomic_fetch_add(&slow_active, 1) + 1;
    for (int m = atomic_load(&slow_max_active); a > m && !atomic_compare_exchange_weak(&slow_max_active, &m, a);) {
    }
    sleep_us((long)(intptr_t)user);
    atomic_fetch_sub(&slow_active, 1);
    out[0] = tfc_tensor_ref(in[0]);
    return true;
}

/* x -> float32 [1024] (4 KiB) filled with x */
static bool make_block(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       tfc_status *st) {
    float x = (float)tfc_tensor_get_f64(in[0], 0);
    out[0] = tfc_tensor_new(TFC_FLOAT, (int64_t[]){1024}, 1, st);
    if (!out[0]) return false;
    float *d = tfc_tensor_mutable_data(out[0]);
    for (int i = 0; i < 1024; i++) d[i] = x;
    out[1] = tfc_tensor_ref(in[0]);
    return true;
}

static tfc_dataset *slow_range(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    int64_t x = (int64_t)tfc_tensor_get_f64(in[0], 0);
    return tfc_dataset_map(tfc_dataset_range(x * 100, x * 100 + 50, 1, 0, st), slow_id, (void *)(intptr_t)200,
                           &(tfc_map_opts){.num_parallel_calls = 2}, st);
}

/* A pipeline with every threaded stage. */
static tfc_dataset *threaded_pipeline(tfc_status *st) {
    tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_repeat(tfc_dataset_range(0, 8, 1, 0, st), -1, st),
                                             slow_range, NULL,
                                             &(tfc_interleave_opts){.cycle_length = 4, .block_length = 3,
                                                                    .num_parallel_calls = 4},
                                             st);
    ds = tfc_dataset_map(ds, slow_id, (void *)(intptr_t)100, &(tfc_map_opts){.num_parallel_calls = TFC_AUTOTUNE}, st);
    ds = tfc_dataset_prefetch(ds, 4, st);
    ds = tfc_dataset_batch(ds, 5, &(tfc_batch_opts){.num_parallel_calls = 2}, st);
    return tfc_dataset_prefetch(ds, TFC_AUTOTUNE, st);
}

static void test_free_mid_epoch(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count();
    tfc_dataset *ds = threaded_pipeline(&st);
    CHECK_OK(&st);
    REQUIRE(ds);
    for (int round = 0; round < 12; round++) {
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        tfc_tensor *t;
        for (int i = 0; i < round % 4; i++) {
            REQUIRE(tfc_iterator_next(it, &t, 1, &st));
            CHECK(tfc_tensor_dim(t, 0) == 5);
            tfc_tensor_unref(t);
        }
        if (round % 3 == 0) sleep_us(20000); /* let the workers fill their buffers and block */
        tfc_iterator_free(it);
    }
    /* an iterator never used starts no thread and frees at once */
    tfc_iterator_free(tfc_iterator_new(ds, &st));
    tfc_dataset_unref(ds);
    CHECK(tfc_tensor_live_count() == live0);
}

typedef struct reader_arg {
    tfc_dataset *ds;
    int64_t sum, count;
    bool ok;
} reader_arg;

static void *reader(void *arg) {
    reader_arg *a = arg;
    tfc_status st = TFC_STATUS_INIT;
    tfc_iterator *it = tfc_iterator_new(a->ds, &st);
    tfc_tensor *t;
    while (it && tfc_iterator_next(it, &t, 1, &st)) {
        const int64_t *d = tfc_tensor_data(t);
        for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) a->sum += d[i];
        a->count += tfc_tensor_num_elements(t);
        tfc_tensor_unref(t);
    }
    a->ok = st.code == TFC_OUT_OF_RANGE;
    tfc_iterator_free(it);
    return NULL;
}

static void test_concurrent_iterators(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset *ds = tfc_dataset_range(0, 300, 1, 0, &st);
    ds = tfc_dataset_map(ds, slow_id, (void *)(intptr_t)10, &(tfc_map_opts){.num_parallel_calls = 3}, &st);
    ds = tfc_dataset_shuffle(ds, 17, &(tfc_shuffle_opts){.seed = 1, .has_seed = true}, &st);
    ds = tfc_dataset_prefetch(tfc_dataset_batch(ds, 7, NULL, &st), 2, &st);
    reader_arg args[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (reader_arg){ds, 0, 0, false};
        REQUIRE(pthread_create(&th[i], NULL, reader, &args[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].ok && args[i].count == 300 && args[i].sum == 299 * 300 / 2);
    }
    tfc_dataset_unref(ds);
}

static void test_nondeterministic(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* element 0 is slow: with deterministic off, others overtake it */
    tfc_dataset *ds = tfc_dataset_map(tfc_dataset_range(0, 40, 1, 0, &st), slow_id, (void *)(intptr_t)3000,
                                      &(tfc_map_opts){.num_parallel_calls = 4, .deterministic = TFC_NO}, &st);
    int64_t v[40];
    CHECK(drain_i64(ds, 0, v, 40, &st) == 40);
    bool seen[40] = {false};
    for (int i = 0; i < 40; i++) {
        CHECK(v[i] >= 0 && v[i] < 40 && !seen[v[i]]);
        seen[v[i]] = true;
    }
    tfc_dataset_unref(ds);
    /* options.deterministic = false applies to stages left at their default */
    ds = tfc_dataset_with_options(tfc_dataset_map(tfc_dataset_range(0, 40, 1, 0, &st), slow_id, (void *)(intptr_t)300,
                                                  &(tfc_map_opts){.num_parallel_calls = 4}, &st),
                                  &(tfc_data_options){.deterministic = TFC_NO}, &st);
    CHECK(drain_i64(ds, 0, v, 40, &st) == 40);
    tfc_dataset_unref(ds);
}

/* x -> x: immediately below `user`, after 20 ms from `user` on; fails at x = -user (an error test) */
static bool cheap_then_slow(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                            tfc_status *st) {
    int64_t x = (int64_t)tfc_tensor_get_f64(in[0], 0), from = (int64_t)(intptr_t)user;
    if (from < 0 && x == -from) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "element %lld fails", (long long)x);
    if (from >= 0 && x >= from) sleep_us(20000);
    out[0] = tfc_tensor_ref(in[0]);
    return true;
}

/* Cheap elements are handed over in runs (async.c): order, errors, short inputs and the switch back to one
 * element per wake-up when elements turn slow, at every parallelism. */
static void test_handoff_runs(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t calls[] = {1, 2, 3, TFC_AUTOTUNE};
    for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
        tfc_map_opts mo = {.num_parallel_calls = calls[c]};
        tfc_data_options opts = {.private_threadpool_size = 3};
        /* 2000 cheap elements, then 12 slow ones: exact order; each slow one arrives about 20 ms after the one
         * before (a consumer still waiting for a run of cheap elements, up to 32, would wait for all 12) */
        tfc_dataset *ds = tfc_dataset_with_options(
            tfc_dataset_map(tfc_dataset_range(0, 2012, 1, 0, &st), cheap_then_slow, (void *)(intptr_t)2000, &mo, &st),
            &opts, &st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        REQUIRE(it);
        tfc_tensor *t;
        int64_t k = 0;
        double last = 0, worst_gap = 0;
        while (tfc_iterator_next(it, &t, 1, &st)) {
            CHECK(tfc_tensor_get_f64(t, 0) == (double)k);
            tfc_tensor_unref(t);
            double n = now();
            if (k >= 1900 && n - last > worst_gap) worst_gap = n - last;
            last = n;
            k++;
        }
        CHECK(st.code == TFC_OUT_OF_RANGE && k == 2012);
        printf("hand-off runs (num_parallel_calls %lld): slow elements %.0f ms apart at most (20 ms each)\n",
               (long long)calls[c], worst_gap * 1e3);
        CHECK(worst_gap < 0.1);
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
        tfc_status_clear(&st);

        /* an error among cheap elements arrives in its place */
        ds = tfc_dataset_with_options(
            tfc_dataset_map(tfc_dataset_range(0, 3000, 1, 0, &st), cheap_then_slow, (void *)(intptr_t)-1577, &mo, &st),
            &opts, &st);
        it = tfc_iterator_new(ds, &st);
        k = 0;
        while (tfc_iterator_next(it, &t, 1, &st)) {
            CHECK(tfc_tensor_get_f64(t, 0) == (double)k);
            tfc_tensor_unref(t);
            k++;
        }
        CHECK(st.code == TFC_INVALID_ARGUMENT && k == 1577 && strstr(st.msg, "element 1577 fails"));
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
        tfc_status_clear(&st);

        /* inputs ending before a run is complete, after a long cheap epoch (runs at their longest) */
        for (int64_t n = 0; n < 4; n++) {
            ds = tfc_dataset_with_options(
                tfc_dataset_map(tfc_dataset_range(0, 5000 + n, 1, 0, &st), cheap_then_slow, (void *)(intptr_t)(1LL << 40),
                                &mo, &st),
                &opts, &st);
            int64_t v[1];
            CHECK(drain_i64(ds, 0, v, 1, &st) == 5000 + n);
            tfc_dataset_unref(ds);
            ds = tfc_dataset_with_options(
                tfc_dataset_map(tfc_dataset_range(0, n, 1, 0, &st), cheap_then_slow, (void *)(intptr_t)(1LL << 40), &mo,
                                &st),
                &opts, &st);
            CHECK(drain_i64(ds, 0, v, 1, &st) == n);
            tfc_dataset_unref(ds);
        }
    }
}

static void test_autotune(void) {
    tfc_status st = TFC_STATUS_INIT;
    enum { N = 240 };
    const long us = 4000;
    tfc_dataset *ds = tfc_dataset_with_options(
        tfc_dataset_map(tfc_dataset_range(0, N, 1, 0, &st), slow_id, (void *)(intptr_t)us,
                        &(tfc_map_opts){.num_parallel_calls = TFC_AUTOTUNE}, &st),
        &(tfc_data_options){.private_threadpool_size = 8}, &st);
    double t0 = now();
    int64_t v[N];
    atomic_store(&slow_max_active, 0);
    CHECK(drain_i64(ds, 0, v, N, &st) == N);
    double dt = now() - t0, sequential = N * us * 1e-6;
    for (int i = 0; i < N; i++) CHECK(v[i] == i);
    printf("autotune: %d elements of %ld us each in %.3f s (sequential %.3f s), up to %d calls at once\n", N, us,
           dt, sequential, atomic_load(&slow_max_active));
    /* AUTOTUNE raised the parallelism: checked by concurrency, not wall time (the machine may be loaded). */
    CHECK(atomic_load(&slow_max_active) >= 4);
    tfc_dataset_unref(ds);
}

/* Bounded memory: a pipeline whose buffers hold a few hundred elements streams a dataset 100x larger.
 * Measures live tensors (exact) and RSS over the run; both stay flat after the buffers filled. */
static void run_bounded(int64_t n, int64_t *peak_live, long *rss_first, long *rss_peak) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count();
    tfc_dataset *ds = tfc_dataset_map(tfc_dataset_range(0, n, 1, 0, &st), make_block, NULL,
                                      &(tfc_map_opts){.num_parallel_calls = TFC_AUTOTUNE, .output_structure = "(.,.)"},
                                      &st);
    ds = tfc_dataset_shuffle(ds, 256, &(tfc_shuffle_opts){.seed = 5, .has_seed = true}, &st);
    ds = tfc_dataset_batch(ds, 32, NULL, &st);
    ds = tfc_dataset_prefetch(ds, TFC_AUTOTUNE, &st);
    REQUIRE(ds);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2];
    int64_t count = 0, checksum = 0;
    *peak_live = 0;
    *rss_peak = 0;
    *rss_first = 0;
    while (tfc_iterator_next(it, out, 2, &st)) {
        const float *d = tfc_tensor_data(out[0]);
        const int64_t *idx = tfc_tensor_data(out[1]);
        for (int64_t b = 0; b < tfc_tensor_dim(out[0], 0); b++) {
            CHECK(d[b * 1024 + 1023] == (float)idx[b]);
            checksum += idx[b];
        }
        count += tfc_tensor_dim(out[0], 0);
        tfc_tensor_unref(out[0]);
        tfc_tensor_unref(out[1]);
        int64_t live = tfc_tensor_live_count() - live0;
        if (live > *peak_live) *peak_live = live;
        if ((count / 32) % 64 == 0) {
            long r = rss_kb();
            if (!*rss_first && count >= n / 10) *rss_first = r;
            if (r > *rss_peak) *rss_peak = r;
        }
    }
    CHECK(st.code == TFC_OUT_OF_RANGE && count == n && checksum == n * (n - 1) / 2);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    CHECK(tfc_tensor_live_count() == live0);
}

static void test_bounded_memory(void) {
    int64_t small_live, big_live;
    long small_first, small_peak, big_first, big_peak;
    long rss0 = rss_kb();
    double t0 = now();
    run_bounded(10000, &small_live, &small_first, &small_peak);
    run_bounded(100000, &big_live, &big_first, &big_peak);
    double dt = now() - t0;
    printf("bounded memory: 100000 elements of 4 KiB (391 MiB) through map(AUTOTUNE) -> shuffle(256) -> batch(32) -> "
           "prefetch(AUTOTUNE)\n"
           "  live tensors: peak %lld (10000 elements: %lld)\n"
           "  RSS: start %ld KiB; 10000 elements: %ld KiB after 10%%, peak %ld KiB; 100000 elements: %ld KiB after "
           "10%%, peak %ld KiB (%.1f s for both)\n",
           (long long)big_live, (long long)small_live, rss0, small_first, small_peak, big_first, big_peak, dt);
    /* buffers: shuffle 256 + map/prefetch/batch stages a few hundred tensors; never proportional to the data */
    CHECK(big_live < 1500 && small_live < 1500);
    CHECK(big_live < small_live + 600);
    /* 10x the data adds less than 24 MiB of resident memory (sanitizers quarantine freed memory: not there) */
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    CHECK(big_peak < small_peak + 24 * 1024);
#endif
}

int main(void) {
    int64_t live0 = tfc_tensor_live_count();
    test_free_mid_epoch();
    test_concurrent_iterators();
    test_nondeterministic();
    test_handoff_runs();
    test_autotune();
    test_bounded_memory();
    CHECK(tfc_tensor_live_count() == live0);
    TEST_MAIN_END();
}
