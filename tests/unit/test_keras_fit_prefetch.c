/* fit's batch prefetcher (src/keras/training_prefetch.c): the prefetcher on its own (the rows it copies, a
 * batch posted for other rows, an allocation failure in its thread, freeing with a batch pending), and fit with
 * and without it (TFC_FIT_PREFETCH=0) giving bit-identical weights and logs: shuffled and not, sample weights,
 * validation, steps_per_epoch spanning passes, Dropout under a seed, early stop mid-epoch, and a callback error
 * mid-epoch, which must leave no more tensors behind than without it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/tensor_internal.h"
#include "keras/training_prefetch.h"
#include "tfc/keras.h"
#include "tfc_test.h"

/* ---- the prefetcher alone ---- */

static tfc_tensor *iota_f32(int64_t rows, int64_t cols) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){rows, cols}, 2, &st);
    REQUIRE(t);
    float *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < rows * cols; i++) d[i] = (float)i;
    return t;
}

static void test_prefetcher(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *a = iota_f32(37, 5);
    tfc_tensor *b = tfc_tensor_new(TFC_UINT8, (int64_t[]){37}, 1, &st);
    REQUIRE(b);
    for (int i = 0; i < 37; i++) ((uint8_t *)tfc_tensor_mutable_data(b))[i] = (uint8_t)(200 + i);
    tfc_tensor *src[2] = {a, b};
    CHECK(tfc_fit_prefetch_wanted(src, 2));
    int64_t live0 = tfc_tensor_live_count();
    tfc_fit_prefetch *p = tfc_fit_prefetch_new(src, 2, 8, 3, &st);
    CHECK_OK(&st);
    REQUIRE(p);
    int64_t perm[37];
    for (int i = 0; i < 37; i++) perm[i] = (i * 11) % 37;
    tfc_tensor *out[2] = {0};
    /* nothing posted: a miss */
    CHECK(tfc_fit_prefetch_take(p, perm, 0, 8, out, &st) == 0);
    CHECK(!out[0] && !out[1]);
    /* rows perm[8 .. 15) */
    tfc_fit_prefetch_post(p, perm, 8, 7);
    CHECK(tfc_fit_prefetch_take(p, perm, 8, 7, out, &st) == 1);
    REQUIRE(out[0] && out[1]);
    CHECK(tfc_tensor_dim(out[0], 0) == 7 && tfc_tensor_dim(out[0], 1) == 5 && tfc_tensor_dim(out[1], 0) == 7);
    CHECK(tfc_tensor_dtype(out[1]) == TFC_UINT8);
    for (int i = 0; i < 7; i++) {
        for (int c = 0; c < 5; c++) CHECK(((float *)tfc_tensor_data(out[0]))[i * 5 + c] == (float)(perm[8 + i] * 5 + c));
        CHECK(((uint8_t *)tfc_tensor_data(out[1]))[i] == (uint8_t)(200 + perm[8 + i]));
    }
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    out[0] = out[1] = NULL;
    /* a slice (no permutation): the last, short batch */
    tfc_fit_prefetch_post(p, NULL, 32, 5);
    CHECK(tfc_fit_prefetch_take(p, NULL, 32, 5, out, &st) == 1);
    REQUIRE(out[0]);
    CHECK(tfc_tensor_dim(out[0], 0) == 5);
    for (int i = 0; i < 25; i++) CHECK(((float *)tfc_tensor_data(out[0]))[i] == (float)(160 + i));
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    out[0] = out[1] = NULL;
    /* posted rows that differ from those asked for: a miss, the posted batch dropped */
    tfc_fit_prefetch_post(p, perm, 0, 8);
    int64_t other[37];
    memcpy(other, perm, sizeof other);
    other[3] = perm[20];
    CHECK(tfc_fit_prefetch_take(p, other, 0, 8, out, &st) == 0);
    CHECK(!out[0]);
    tfc_fit_prefetch_post(p, perm, 0, 8);
    CHECK(tfc_fit_prefetch_take(p, NULL, 0, 8, out, &st) == 0);      /* slice vs permutation */
    tfc_fit_prefetch_post(p, NULL, 8, 8);
    CHECK(tfc_fit_prefetch_take(p, NULL, 16, 8, out, &st) == 0);     /* other start */
    tfc_fit_prefetch_post(p, NULL, 8, 8);
    CHECK(tfc_fit_prefetch_take(p, NULL, 8, 7, out, &st) == 0);      /* other length */
    CHECK(!out[0] && !out[1]);
    /* an allocation failure in the thread reaches the taker */
    tfc_alloc_fail_after(0);
    tfc_fit_prefetch_post(p, perm, 0, 8);
    int r = tfc_fit_prefetch_take(p, perm, 0, 8, out, &st);
    tfc_alloc_fail_after(-1);
    CHECK(r == -1);
    CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
    CHECK(!out[0] && !out[1]);
    tfc_status_clear(&st);
    /* it works again afterwards; freed with a batch posted and not taken */
    tfc_fit_prefetch_post(p, perm, 16, 8);
    CHECK(tfc_fit_prefetch_take(p, perm, 16, 8, out, &st) == 1);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    tfc_fit_prefetch_post(p, perm, 24, 8);
    tfc_fit_prefetch_free(p);
    CHECK(tfc_tensor_live_count() == live0);
    tfc_fit_prefetch_free(NULL);
    /* not for strings, nor when disabled */
    tfc_tensor *s = tfc_tensor_new(TFC_STRING, (int64_t[]){3}, 1, &st);
    REQUIRE(s);
    CHECK(!tfc_fit_prefetch_wanted(&s, 1));
    /* the switch: read from the environment when a context is created, not later */
    tfc_status cst = TFC_STATUS_INIT;
    tfc_ctx *c0 = tfc_ctx_new(NULL, &cst);
    setenv("TFC_FIT_PREFETCH", "0", 1);
    tfc_ctx *c1 = tfc_ctx_new(NULL, &cst);
    REQUIRE(c0 && c1);
    CHECK(tfc_ctx_config(c0)->fit_prefetch && !tfc_ctx_config(c1)->fit_prefetch);
    unsetenv("TFC_FIT_PREFETCH");
    tfc_ctx_free(c0);
    tfc_ctx_free(c1);
    tfc_tensor_unref(s);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
}

/* ---- fit with and without it ---- */

static uint64_t lcg;
static float urand(void) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((lcg >> 40) & 0xFFFFFF) / (float)0x1000000 * 2.0f - 1.0f;
}

typedef struct {
    int64_t n, batch_size, steps_per_epoch;
    int epochs;
    bool no_shuffle, sample_weight, validation;
    int stop_at;  /* stop_training after this global batch (-1: never) */
    int fail_at;  /* a callback error after this global batch (-1: never) */
    int depth;    /* TFC_FIT_PREFETCH_DEPTH (0: automatic) */
} fit_case;

typedef struct {
    int stop_at, fail_at, seen;
} batch_cb;

static bool on_batch_end(tfc_callback *cb, tfc_model *m, int64_t b, const tfc_logs *l, tfc_status *st) {
    batch_cb *c = tfc_callback_user(cb);
    int seen = c->seen++;
    if (seen == c->fail_at) return tfc_status_set(st, TFC_ABORTED, "stopped by the test at batch %d", seen);
    if (seen == c->stop_at) tfc_model_stop_training(m);
    return true;
}

typedef struct {
    bool ok;
    tfc_code code;
    tfc_tensor *w[8];
    int n_w;
    double logs[4][16];
    int n_keys, n_epochs;
    int64_t live_delta;
} fit_result;

static fit_result run_fit(const fit_case *fc, bool prefetch) {
    fit_result r = {0};
    tfc_status st = TFC_STATUS_INIT;
    if (!prefetch) setenv("TFC_FIT_PREFETCH", "0", 1);
    char depth[8];
    snprintf(depth, sizeof depth, "%d", fc->depth);
    if (fc->depth) setenv("TFC_FIT_PREFETCH_DEPTH", depth, 1);
    tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.seed = 7, .has_seed = true, .intra_op_threads = 2}, &st);
    REQUIRE(c);
    lcg = 99;
    int64_t n = fc->n;
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 3, 2}, 3, &st);
    tfc_tensor *y = tfc_tensor_new(TFC_INT32, (int64_t[]){n}, 1, &st);
    tfc_tensor *sw = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n}, 1, &st);
    REQUIRE(x && y && sw);
    float *xd = tfc_tensor_mutable_data(x), *swd = tfc_tensor_mutable_data(sw);
    int32_t *yd = tfc_tensor_mutable_data(y);
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 6; k++) xd[i * 6 + k] = urand();
        yd[i] = xd[i * 6] + 0.5f * xd[i * 6 + 3] > 0.1f ? (xd[i * 6 + 1] > 0 ? 2 : 1) : 0;
        swd[i] = 0.5f + (float)(i % 3);
    }
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(c, (tfc_layer *[]){tfc_layers_flatten(.input_shape = {3, 2}),
                                                     tfc_layers_dense(.units = 16, .activation = "relu"),
                                                     tfc_layers_dropout(.rate = 0.25),
                                                     tfc_layers_dense(.units = 3, .activation = "softmax"), NULL});
    REQUIRE(m);
    REQUIRE(tfc_compile(m, &st, .optimizer_name = "adam", .loss_name = "sparse_categorical_crossentropy",
                        .metrics = {"accuracy"}));
    batch_cb bc = {fc->stop_at, fc->fail_at, 0};
    tfc_callback *cb = tfc_callback_new(&(tfc_callback_fns){.on_train_batch_end = on_batch_end}, &bc);
    REQUIRE(cb);
    tfc_history *h = NULL;
    int64_t live0 = tfc_tensor_live_count();
    r.ok = tfc_model_fit(m, x, y,
                         &(tfc_fit_opts){.batch_size = fc->batch_size, .epochs = fc->epochs,
                                         .verbose = TFC_VERBOSE_SILENT, .callbacks = {cb},
                                         .shuffle = fc->no_shuffle ? TFC_NO : TFC_DEFAULT,
                                         .sample_weight = fc->sample_weight ? sw : NULL,
                                         .validation_split = fc->validation ? 0.2 : 0,
                                         .steps_per_epoch = fc->steps_per_epoch},
                         &h, &st);
    r.code = st.code;
    r.live_delta = tfc_tensor_live_count() - live0; /* the optimizer's slots, metrics' state */
    tfc_status_clear(&st);
    if (h) {
        const char *keys[4];
        r.n_keys = tfc_history_keys(h, keys, 4);
        r.n_epochs = tfc_history_epochs(h);
        for (int k = 0; k < r.n_keys && k < 4; k++) {
            int ne = 0;
            const double *v = tfc_history_get(h, keys[k], &ne);
            for (int e = 0; e < ne && e < 16; e++) r.logs[k][e] = v[e];
        }
    }
    r.n_w = tfc_model_get_weights(m, r.w, 8, &st);
    CHECK_OK(&st);
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_tensor_unref(sw);
    tfc_ctx_free(c);
    unsetenv("TFC_FIT_PREFETCH");
    unsetenv("TFC_FIT_PREFETCH_DEPTH");
    return r;
}

/* Runs fc with and without the prefetcher; returns the times the prefetcher's thread was woken. */
static int64_t fit_both(const char *what, const fit_case *fc) {
    int64_t hits0 = tfc_fit_prefetch_hits(), wakes0 = tfc_fit_prefetch_wakes();
    fit_result a = run_fit(fc, true);
    int64_t hits = tfc_fit_prefetch_hits() - hits0, wakes = tfc_fit_prefetch_wakes() - wakes0;
    fit_result b = run_fit(fc, false);
    CHECK(tfc_fit_prefetch_hits() - hits0 == hits); /* none without it */
    CHECK(hits > 0);
    if (fc->stop_at < 0 && fc->fail_at < 0) {
        /* every batch but the first comes from the queue: it follows the stream across passes and epochs */
        int64_t n_train = fc->validation ? (int64_t)((double)fc->n * 0.8) : fc->n;
        int64_t steps = fc->steps_per_epoch > 0 ? fc->steps_per_epoch : (n_train + fc->batch_size - 1) / fc->batch_size;
        CHECK(hits == fc->epochs * steps - 1);
        if (hits != fc->epochs * steps - 1)
            fprintf(stderr, "%s: %lld batches prefetched of %lld\n", what, (long long)hits,
                    (long long)(fc->epochs * steps));
    }
    CHECK(a.ok == (fc->fail_at < 0) && a.ok == b.ok && a.code == b.code);
    if (a.ok) CHECK(a.n_epochs == (fc->stop_at >= 0 ? fc->stop_at / ((fc->n + fc->batch_size - 1) / fc->batch_size) + 1 : fc->epochs));
    CHECK(a.live_delta == b.live_delta); /* no batch left behind, also after an error or a stop */
    CHECK(a.n_keys == b.n_keys && a.n_epochs == b.n_epochs);
    for (int k = 0; k < a.n_keys && k < 4; k++)
        for (int e = 0; e < a.n_epochs && e < 16; e++) CHECK(a.logs[k][e] == b.logs[k][e]);
    CHECK(a.n_w == 4 && a.n_w == b.n_w);
    double maxdiff = 0;
    for (int i = 0; i < a.n_w && i < b.n_w; i++)
        for (int64_t k = 0; k < tfc_tensor_num_elements(a.w[i]); k++) {
            double d = fabs(tfc_tensor_get_f64(a.w[i], k) - tfc_tensor_get_f64(b.w[i], k));
            if (d > maxdiff) maxdiff = d;
        }
    CHECK(maxdiff == 0);
    if (maxdiff != 0 || a.ok != b.ok) fprintf(stderr, "%s: weights differ by %g (ok %d vs %d)\n", what, maxdiff, a.ok, b.ok);
    /* and the weights moved: training happened */
    if (a.ok && a.n_epochs > 0) CHECK(a.logs[0][0] > 0);
    for (int i = 0; i < 8; i++) {
        tfc_tensor_unref(a.w[i]);
        tfc_tensor_unref(b.w[i]);
    }
    return wakes;
}

/* Rows of 784 floats (a flattened 28x28 image, 3136 bytes) and of 5001 floats (past the 16 KiB that the copy
 * requests ahead per row), batches longer and shorter than the rows requested ahead: every row arrives whole,
 * in the permutation's order. */
static void test_prefetcher_wide_rows(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t cols[2] = {784, 5001}, n = 53;
    for (int w = 0; w < 2; w++) {
        tfc_tensor *a = iota_f32(n, cols[w]);
        tfc_fit_prefetch *p = tfc_fit_prefetch_new(&a, 1, 16, 0, &st);
        CHECK_OK(&st);
        REQUIRE(p);
        int64_t perm[53];
        for (int i = 0; i < n; i++) perm[i] = (i * 17 + 5) % n;
        const int64_t starts[3] = {0, 16, 50}, lens[3] = {16, 3, 3};
        for (int k = 0; k < 3; k++) {
            tfc_tensor *out = NULL;
            tfc_fit_prefetch_post(p, perm, starts[k], lens[k]);
            CHECK(tfc_fit_prefetch_take(p, perm, starts[k], lens[k], &out, &st) == 1);
            REQUIRE(out);
            CHECK(tfc_tensor_dim(out, 0) == lens[k] && tfc_tensor_dim(out, 1) == cols[w]);
            const float *d = tfc_tensor_data(out);
            int64_t bad = 0;
            for (int64_t i = 0; i < lens[k]; i++)
                for (int64_t c = 0; c < cols[w]; c++)
                    bad += d[i * cols[w] + c] != (float)(perm[starts[k] + i] * cols[w] + c);
            CHECK(bad == 0);
            tfc_tensor_unref(out);
        }
        tfc_fit_prefetch_free(p);
        tfc_tensor_unref(a);
    }
}

/* The queue: batches posted ahead come back in order with their rows, a full queue refuses a post, a miss at
 * the head drops the whole queue, a failed copy reaches the taker and empties the queue, freeing
 * with batches queued (copied or not) leaves nothing behind. Depths 1 to the maximum. */
static void test_prefetcher_queue(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t n = 41, cols = 3;
    tfc_tensor *a = iota_f32(n, cols);
    int64_t perm[41];
    for (int i = 0; i < n; i++) perm[i] = (i * 13 + 7) % n;
    int64_t live0 = tfc_tensor_live_count();
    for (int depth = 1; depth <= TFC_FIT_PREFETCH_MAX_DEPTH; depth++) {
        tfc_fit_prefetch *p = tfc_fit_prefetch_new(&a, 1, 5, depth, &st);
        CHECK_OK(&st);
        REQUIRE(p);
        CHECK(tfc_fit_prefetch_depth(p) == depth);
        /* fill it, one more is refused */
        for (int k = 0; k < depth; k++) CHECK(tfc_fit_prefetch_post(p, perm, 5 * k, 5));
        CHECK(!tfc_fit_prefetch_post(p, perm, 5 * depth, 5));
        CHECK(!tfc_fit_prefetch_post(p, perm, 0, 6)); /* longer than max_len */
        /* a stream of 9 batches (the last one short), keeping the queue full */
        int next = depth;
        for (int k = 0; k < 9; k++) {
            int64_t start = 5 * k, len = k == 8 ? 1 : 5;
            tfc_tensor *out = NULL;
            CHECK(tfc_fit_prefetch_take(p, perm, start, len, &out, &st) == 1);
            REQUIRE(out);
            CHECK(tfc_tensor_dim(out, 0) == len);
            const float *d = tfc_tensor_data(out);
            int64_t bad = 0;
            for (int64_t i = 0; i < len; i++)
                for (int64_t c = 0; c < cols; c++) bad += d[i * cols + c] != (float)(perm[start + i] * cols + c);
            CHECK(bad == 0);
            tfc_tensor_unref(out);
            if (next < 9) {
                CHECK(tfc_fit_prefetch_post(p, perm, 5 * next, next == 8 ? 1 : 5));
                next++;
            }
        }
        /* empty again: a miss */
        tfc_tensor *out = NULL;
        CHECK(tfc_fit_prefetch_take(p, perm, 0, 5, &out, &st) == 0);
        /* a miss at the head drops all: the batch behind it is gone too */
        for (int k = 0; k < depth; k++) CHECK(tfc_fit_prefetch_post(p, NULL, 5 * k, 5));
        CHECK(tfc_fit_prefetch_take(p, NULL, 5, 5, &out, &st) == 0);
        CHECK(tfc_fit_prefetch_take(p, NULL, 5, 5, &out, &st) == 0);
        CHECK(!out);
        for (int k = 0; k < depth; k++) CHECK(tfc_fit_prefetch_post(p, NULL, 5 * k, 5)); /* room for depth again */
        CHECK(tfc_fit_prefetch_take(p, NULL, 0, 5, &out, &st) == 1);
        REQUIRE(out);
        CHECK(((const float *)tfc_tensor_data(out))[0] == 0.0f);
        tfc_tensor_unref(out);
        out = NULL;
        /* a failed copy: the batches before it arrive, then the failure, then the queue is empty */
        CHECK(tfc_fit_prefetch_take(p, perm, 0, 5, &out, &st) == 0); /* (a miss: empties it) */
        CHECK(tfc_fit_prefetch_post(p, perm, 0, 5));
        CHECK(tfc_fit_prefetch_take(p, perm, 0, 5, &out, &st) == 1); /* copied before the failure is armed */
        tfc_tensor_unref(out);
        out = NULL;
        tfc_alloc_fail_after(0);
        CHECK(tfc_fit_prefetch_post(p, perm, 5, 5));
        int r = tfc_fit_prefetch_take(p, perm, 5, 5, &out, &st);
        tfc_alloc_fail_after(-1);
        CHECK(r == -1);
        CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
        tfc_status_clear(&st);
        CHECK(!out);
        CHECK(tfc_fit_prefetch_take(p, perm, 10, 5, &out, &st) == 0);
        /* freed with a full queue */
        for (int k = 0; k < depth; k++) CHECK(tfc_fit_prefetch_post(p, perm, 5 * k, 5));
        tfc_fit_prefetch_free(p);
        CHECK(tfc_tensor_live_count() == live0);
    }
    /* the thread sleeps between wakes: with the queue kept full at depth 4, a post wakes it every second time
     * (every time when woken per post); the pauses let it finish and sleep */
    {
        tfc_fit_prefetch *q = tfc_fit_prefetch_new(&a, 1, 5, 4, &st);
        REQUIRE(q);
        for (int k = 0; k < 4; k++) CHECK(tfc_fit_prefetch_post(q, NULL, 5 * (k % 8), 5));
        int64_t w0 = tfc_fit_prefetch_wakes();
        for (int k = 4; k < 24; k++) {
            struct timespec ts = {0, 300000};
            nanosleep(&ts, NULL);
            tfc_tensor *out = NULL;
            CHECK(tfc_fit_prefetch_take(q, NULL, 5 * ((k - 4) % 8), 5, &out, &st) == 1);
            tfc_tensor_unref(out);
            CHECK(tfc_fit_prefetch_post(q, NULL, 5 * (k % 8), 5));
        }
        int64_t w = tfc_fit_prefetch_wakes() - w0;
        CHECK(w >= 1 && w <= 20 / 2 + 1);
        if (w > 20 / 2 + 1) fprintf(stderr, "queue: %lld wakes for 20 posts\n", (long long)w);
        tfc_fit_prefetch_free(q);
    }
    /* bad depths */
    CHECK(!tfc_fit_prefetch_new(&a, 1, 5, TFC_FIT_PREFETCH_MAX_DEPTH + 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    CHECK(!tfc_fit_prefetch_new(&a, 1, 5, -1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    /* the automatic depth: the maximum for small batches, at least 2 for batches over 4 MiB, the environment's */
    tfc_fit_prefetch *p = tfc_fit_prefetch_new(&a, 1, 5, 0, &st);
    CHECK(tfc_fit_prefetch_depth(p) == TFC_FIT_PREFETCH_MAX_DEPTH);
    tfc_fit_prefetch_free(p);
    p = tfc_fit_prefetch_new(&a, 1, (int64_t)1 << 19, 0, &st); /* 6 MiB batches */
    CHECK(tfc_fit_prefetch_depth(p) == 2);
    tfc_fit_prefetch_free(p);
    /* the context's depth: from the environment at its creation (out of range: automatic), or as set */
    setenv("TFC_FIT_PREFETCH_DEPTH", "3", 1);
    tfc_ctx *c = tfc_ctx_new(NULL, &st);
    REQUIRE(c);
    CHECK(tfc_ctx_config(c)->fit_prefetch_depth == 3);
    p = tfc_fit_prefetch_new(&a, 1, 5, tfc_ctx_config(c)->fit_prefetch_depth, &st);
    CHECK(tfc_fit_prefetch_depth(p) == 3);
    tfc_fit_prefetch_free(p);
    tfc_ctx_free(c);
    setenv("TFC_FIT_PREFETCH_DEPTH", "9", 1);
    REQUIRE((c = tfc_ctx_new_with_config(NULL, &(tfc_runtime_config){.fit_prefetch_depth = 5}, &st)));
    CHECK(tfc_ctx_config(c)->fit_prefetch_depth == 0);
    tfc_runtime_config rc = *tfc_ctx_config(c);
    rc.fit_prefetch_depth = 4;
    tfc_ctx_set_config(c, &rc);
    CHECK(tfc_ctx_config(c)->fit_prefetch_depth == 4);
    tfc_ctx_free(c);
    unsetenv("TFC_FIT_PREFETCH_DEPTH");
    REQUIRE((c = tfc_ctx_new_with_config(NULL, &(tfc_runtime_config){.fit_prefetch_depth = 5}, &st)));
    CHECK(tfc_ctx_config(c)->fit_prefetch_depth == 5 && !tfc_ctx_config(c)->fit_prefetch &&
          !tfc_ctx_config(c)->keras_run_eagerly);
    tfc_ctx_free(c);
    CHECK_OK(&st);
    tfc_tensor_unref(a);
}

int main(void) {
    test_prefetcher();
    test_prefetcher_wide_rows();
    test_prefetcher_queue();
    fit_both("shuffled", &(fit_case){.n = 203, .batch_size = 16, .epochs = 3, .stop_at = -1, .fail_at = -1});
    fit_both("sample weights + validation",
             &(fit_case){.n = 203, .batch_size = 16, .epochs = 3, .sample_weight = true, .validation = true,
                         .stop_at = -1, .fail_at = -1});
    fit_both("not shuffled", &(fit_case){.n = 150, .batch_size = 32, .epochs = 2, .no_shuffle = true,
                                         .sample_weight = true, .stop_at = -1, .fail_at = -1});
    fit_both("steps_per_epoch across passes",
             &(fit_case){.n = 50, .batch_size = 16, .epochs = 4, .steps_per_epoch = 5, .stop_at = -1, .fail_at = -1});
    fit_both("batch 1", &(fit_case){.n = 9, .batch_size = 1, .epochs = 2, .stop_at = -1, .fail_at = -1});
    fit_both("one batch per pass", &(fit_case){.n = 12, .batch_size = 16, .epochs = 4, .stop_at = -1, .fail_at = -1});
    for (int depth = 1; depth <= TFC_FIT_PREFETCH_MAX_DEPTH; depth += 1 + depth / 2)
        fit_both("steps_per_epoch across passes, depths",
                 &(fit_case){.n = 50, .batch_size = 16, .epochs = 4, .steps_per_epoch = 5, .stop_at = -1,
                             .fail_at = -1, .depth = depth});
    /* depth 4 wakes the thread about every second step (not every step): 102 steps in 2 passes */
    int64_t wakes = fit_both("wakes", &(fit_case){.n = 203, .batch_size = 4, .epochs = 2, .stop_at = -1,
                                                  .fail_at = -1, .depth = 4});
    CHECK(wakes <= 102 / 2 + 4);
    if (wakes > 102 / 2 + 4) fprintf(stderr, "wakes: %lld for 102 steps\n", (long long)wakes);
    fit_both("stop mid-epoch", &(fit_case){.n = 203, .batch_size = 16, .epochs = 3, .stop_at = 17, .fail_at = -1});
    fit_both("stop mid-epoch, depth 8",
             &(fit_case){.n = 203, .batch_size = 16, .epochs = 3, .stop_at = 17, .fail_at = -1, .depth = 8});
    fit_both("error mid-epoch", &(fit_case){.n = 203, .batch_size = 16, .epochs = 3, .stop_at = -1, .fail_at = 15});
    fit_result e = run_fit(&(fit_case){.n = 203, .batch_size = 16, .epochs = 3, .stop_at = -1, .fail_at = 15}, true);
    CHECK(!e.ok && e.code == TFC_ABORTED);
    for (int i = 0; i < 8; i++) tfc_tensor_unref(e.w[i]);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
