/* tf.data under failing allocations (SQLite's approach): for every N, the Nth allocation of building and running
 * a threaded pipeline fails once. Each run must end (no hang), either with the right result or with an error in a
 * status, and leave no tensor behind (ASan checks the rest). Also a failure-at-N-and-after loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data_test_util.h"

static char cache_path[300];

static bool ragged(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                   tfc_status *st) {
    int64_t x = (int64_t)tfc_tensor_get_f64(in[0], 0) % 5;
    out[0] = tfc_tensor_new(TFC_INT64, &x, 1, st);
    if (!out[0]) return false;
    int64_t *d = tfc_tensor_mutable_data(out[0]);
    for (int64_t i = 0; i < x; i++) d[i] = 1;
    return true;
}

static bool row_sum(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    tfc_status *st) {
    tfc_tensor *axis = tfc_vec_i32((int32_t[]){0}, 1, st);
    out[0] = axis ? tfc_emit(ctx, "Sum", (tfc_tensor *[]){in[0], axis}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(axis);
    return out[0] != NULL;
}

static tfc_dataset *inner(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    return tfc_dataset_take(tfc_dataset_repeat(tfc_dataset_from_tensors(in, 1, NULL, st), -1, st), 3, st);
}

/* Sums every element of the pipeline into *sum; false with st set on the first error. */
static bool run(int64_t *sum, tfc_status *st) {
    *sum = 0;
    tfc_dataset *ds = tfc_dataset_range(0, 60, 1, 0, st);
    ds = tfc_dataset_map(ds, ragged, NULL, &(tfc_map_opts){.num_parallel_calls = 2}, st);
    ds = tfc_dataset_padded_batch(ds, 4, NULL, st);
    ds = tfc_dataset_map(ds, row_sum, NULL, NULL, st); /* [4, len] -> [len] ones counted per column */
    ds = tfc_dataset_cache(ds, NULL, st);
    ds = tfc_dataset_interleave(ds, inner, NULL,
                                &(tfc_interleave_opts){.cycle_length = 2, .block_length = 2, .num_parallel_calls = 2},
                                st);
    ds = tfc_dataset_shuffle(ds, 5, &(tfc_shuffle_opts){.seed = 3, .has_seed = true}, st);
    ds = tfc_dataset_unbatch(ds, st);
    ds = tfc_dataset_batch(ds, 3, &(tfc_batch_opts){.num_parallel_calls = 2}, st);
    ds = tfc_dataset_cache(ds, cache_path, st);
    ds = tfc_dataset_prefetch(ds, 2, st);
    if (!ds) return false;
    tfc_iterator *it = tfc_iterator_new(ds, st);
    bool ok = it != NULL;
    tfc_tensor *t = NULL;
    while (ok && tfc_iterator_next(it, &t, 1, st)) {
        for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) *sum += (int64_t)tfc_tensor_get_f64(t, i);
        tfc_tensor_unref(t);
    }
    ok = ok && st->code == TFC_OUT_OF_RANGE;
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    if (ok) tfc_status_clear(st);
    return ok;
}

static void remove_cache(void) {
    char p[340];
    snprintf(p, sizeof p, "%s.tfcache", cache_path);
    unlink(p);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(cache_path, sizeof cache_path, "%s/tfc_test_data_faults_%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count(), want = 0;
    REQUIRE(run(&want, &st));
    /* 60 elements of x % 5 ones, each repeated 3 times by the interleave */
    CHECK(want == 3 * 12 * (0 + 1 + 2 + 3 + 4));
    remove_cache();
    int64_t runs = 0, failed_runs = 0, wrong = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (int64_t n = 0;; n++) {
            int64_t sum = 0;
            tfc_status s = TFC_STATUS_INIT;
            if (mode == 0) tfc_alloc_fail_once_after(n);
            else tfc_alloc_fail_after(n);
            bool ok = run(&sum, &s);
            int64_t failures = tfc_alloc_failures();
            tfc_alloc_fail_after(-1);
            remove_cache();
            runs++;
            CHECK(tfc_tensor_live_count() == live0);
            if (!ok) {
                failed_runs++;
                CHECK(s.code != TFC_OK && s.msg[0]);
            } else if (failures && sum != want) {
                /* a failure swallowed by ignore-free stages would change the sum silently */
                wrong++;
                fprintf(stderr, "allocation %lld failed silently: sum %lld, want %lld\n", (long long)n, (long long)sum,
                        (long long)want);
            }
            if (failures == 0) break; /* the run got past every allocation */
            if (n > 200000) break;
        }
    }
    printf("%lld runs with a failing allocation, %lld ended with an error status\n", (long long)runs,
           (long long)failed_runs);
    CHECK(wrong == 0);
    CHECK(failed_runs > 0);
    TEST_MAIN_END();
}
