/* Keras under failing allocations (the test_faults.c pattern, SQLite's approach): model.fit on arrays and on a
 * tf.data pipeline, and load_weights of an HDF5 file, each a whole program (context, model, data) run with the
 * allocations after the first N failing, and with only the Nth failing. A failing run must report
 * RESOURCE_EXHAUSTED and leave no tensor alive (ASan/LSan check the rest of the memory); a run that gets through
 * must give the reference numbers. These programs make thousands of allocations, so N is sampled: every N up to
 * 48, then steps growing with N (with a jitter from TFC_TEST_SEED, printed), up to the first N that runs through. */
#include <unistd.h>

#include "core/tensor_internal.h"
#include "tfc_test.h"

static char weights_path[256];
static uint64_t rng;
static uint64_t next_rand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return rng >> 33;
}

typedef struct {
    double loss[2]; /* first and last epoch */
    double w[4];    /* a few loaded weights */
} results;

/* The layers are given as a counted list: a constructor returns NULL when out of memory, which in
 * tfc_sequential's NULL-terminated list would end the list there (a shorter model, no error); tfc_sequential_of
 * makes it RESOURCE_EXHAUSTED. */
static tfc_model *make_model(tfc_ctx *ctx, tfc_status *st) {
    tfc_model *m = tfc_sequential_of(ctx, NULL, st, tfc_layers_dense(.units = 4, .activation = "relu", .input_shape = {3}),
                                     tfc_layers_batch_normalization(),
                                     tfc_layers_dense(.units = 2, .activation = "softmax"));
    if (!m) return NULL;
    tfc_layer *got[4];
    int n = tfc_model_layers(m, got, 4);
    if (n != 3) {
        tfc_model_free(m);
        return tfc_status_set(st, TFC_INTERNAL, "a Sequential model of %d layers, not 3", n), NULL;
    }
    tfc_shape in = {.rank = 2, .dims = {-1, 3}};
    if (!tfc_model_build(m, &in, st)) {
        tfc_model_free(m);
        return NULL;
    }
    return m;
}

/* The optimizer is made first and checked: NULL in compile's options means "the default optimizer" (rmsprop), so
 * an out-of-memory NULL passed along would train with another optimizer, without an error. */
static bool compile(tfc_model *m, tfc_status *st) {
    tfc_optimizer *opt = tfc_optimizers_adam(.learning_rate = 0.01);
    if (!opt) return tfc_status_oom(st, "Adam", 0);
    return tfc_model_compile(m, &(tfc_compile_opts){.optimizer = opt, .loss_name = "sparse_categorical_crossentropy",
                                                     .metrics = {"accuracy"}},
                             st);
}

/* 24 samples of 3 features, labels from the sign of the first feature. */
static bool make_data(tfc_tensor **x, tfc_tensor **y, tfc_status *st) {
    float xv[72];
    int32_t yv[24];
    for (int i = 0; i < 24; i++) {
        for (int j = 0; j < 3; j++) xv[i * 3 + j] = (float)((i * 7 + j * 5) % 11) / 5.0f - 1.0f;
        yv[i] = xv[i * 3] > 0;
    }
    *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){24, 3}, 2, xv, sizeof xv, st);
    *y = *x ? tfc_tensor_from_data(TFC_INT32, (int64_t[]){24}, 1, yv, sizeof yv, st) : NULL;
    return *y != NULL;
}

static bool history_losses(tfc_history *h, results *res, tfc_status *st) {
    int n = 0;
    const double *l = tfc_history_get(h, "loss", &n);
    if (!l || n != 2) return tfc_status_set(st, TFC_INTERNAL, "history has %d losses", n);
    res->loss[0] = l[0];
    res->loss[1] = l[1];
    return true;
}

/* model.fit(x, y, epochs=2, batch_size=8) */
static bool program_fit(results *res, tfc_status *st) {
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, st);
    tfc_tensor *x = NULL, *y = NULL;
    tfc_model *m = NULL;
    tfc_history *h = NULL;
    bool ok = false;
    if (!ctx) return false;
    tfc_ctx_set_seed(ctx, 7);
    if (!make_data(&x, &y, st) || !(m = make_model(ctx, st)) || !compile(m, st)) goto done;
    if (!tfc_model_fit(m, x, y, &(tfc_fit_opts){.epochs = 2, .batch_size = 8, .verbose = TFC_VERBOSE_SILENT}, &h, st))
        goto done;
    ok = history_losses(h, res, st);
done:
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_ctx_free(ctx);
    return ok;
}

/* model.fit on Dataset.from_tensor_slices((x, y)).shuffle(8, seed).batch(8).prefetch(2) */
static bool program_fit_dataset(results *res, tfc_status *st) {
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, st);
    tfc_tensor *x = NULL, *y = NULL;
    tfc_model *m = NULL;
    tfc_history *h = NULL;
    tfc_dataset *ds = NULL;
    bool ok = false;
    if (!ctx) return false;
    tfc_ctx_set_seed(ctx, 7);
    if (!make_data(&x, &y, st) || !(m = make_model(ctx, st)) || !compile(m, st)) goto done;
    ds = tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y}, 2, "(.,.)", st);
    ds = tfc_dataset_shuffle(ds, 8, &(tfc_shuffle_opts){.seed = 3, .has_seed = true}, st);
    ds = tfc_dataset_batch(ds, 8, NULL, st);
    ds = tfc_dataset_prefetch(ds, 2, st);
    if (!ds) goto done;
    if (!tfc_model_fit_dataset(m, ds, &(tfc_fit_opts){.epochs = 2, .verbose = TFC_VERBOSE_SILENT}, NULL, &h, st))
        goto done;
    ok = history_losses(h, res, st);
done:
    tfc_history_free(h);
    tfc_dataset_unref(ds);
    tfc_model_free(m);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_ctx_free(ctx);
    return ok;
}

/* model.load_weights(path) into a fresh model, then read the weights back. */
static bool program_load_weights(results *res, tfc_status *st) {
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, st);
    tfc_model *m = NULL;
    bool ok = false;
    if (!ctx) return false;
    if (!(m = make_model(ctx, st)) || !tfc_model_load_weights(m, weights_path, st)) goto done;
    tfc_tensor *w[16] = {0};
    int n = tfc_model_get_weights(m, w, 16, st);
    if (n >= 4) {
        for (int i = 0; i < 4; i++) res->w[i] = tfc_tensor_get_f64(w[i], 0);
        ok = true;
    } else if (n >= 0) {
        tfc_status_set(st, TFC_INTERNAL, "model has %d weights", n);
    }
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
done:
    tfc_model_free(m);
    tfc_ctx_free(ctx);
    return ok;
}

static bool same(const results *a, const results *b) {
    for (int i = 0; i < 2; i++)
        if (fabs(a->loss[i] - b->loss[i]) > 1e-5 * (1 + fabs(b->loss[i]))) return false;
    for (int i = 0; i < 4; i++)
        if (a->w[i] != b->w[i]) return false;
    return true;
}

/* A NULL (failed constructor) in a counted list: RESOURCE_EXHAUSTED naming its position, the other layers
 * released (ASan's leak check); n < 0 refused; an empty list is an empty model. */
static void test_sequential_null_layer(tfc_ctx *ctx) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_sequential_of(ctx, "m", &st, tfc_layers_dense(.units = 4, .input_shape = {3}), NULL,
                                     tfc_layers_dense(.units = 2));
    CHECK(!m && st.code == TFC_RESOURCE_EXHAUSTED &&
          strstr(st.msg, "Sequential \"m\": layer 1 of 3 is NULL (its constructor ran out of memory)"));
    CHECK(!tfc_sequential_n(ctx, NULL, -1, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
    m = tfc_sequential_n(ctx, NULL, 0, NULL, &st);
    tfc_layer *got[1];
    CHECK(m && st.code == TFC_OK && tfc_model_layers(m, got, 1) == 0);
    tfc_model_free(m);
}

typedef bool (*program_fn)(results *res, tfc_status *st);

static int prog_index;
static void fault_loop(const char *name, program_fn fn, bool once) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    results ref;
    memset(&ref, 0, sizeof ref);
    REQUIRE(fn(&ref, &st));
    CHECK_OK(&st);
    CHECK(tfc_tensor_live_count() == base);
    int runs = 0, failed = 0, recovered = 0, bad_code = 0, leaked = 0, wrong = 0;
    int64_t n = 0;
    for (; n < 10000000; runs++) {
        results res;
        memset(&res, 0, sizeof res);
        tfc_status_clear(&st);
        if (once) tfc_alloc_fail_once_after(n);
        else tfc_alloc_fail_after(n);
        bool ok = fn(&res, &st);
        int64_t failures = tfc_alloc_failures();
        tfc_alloc_fail_after(-1);
        if (tfc_tensor_live_count() != base) {
            if (leaked++ < 5)
                fprintf(stderr, "%s: N=%lld: %lld tensors left alive (%s)\n", name, (long long)n,
                        (long long)(tfc_tensor_live_count() - base), ok ? "ok" : st.msg);
            base = tfc_tensor_live_count();
        }
        if (ok) {
            if (!same(&res, &ref) && wrong++ < 5)
                fprintf(stderr, "%s: N=%lld: wrong results after %lld failed allocations (loss %g vs %g)\n", name,
                        (long long)n, (long long)failures, res.loss[1], ref.loss[1]);
            if (failures == 0) break;
            recovered++;
        } else {
            failed++;
            if (st.code != TFC_RESOURCE_EXHAUSTED && bad_code++ < 5)
                fprintf(stderr, "%s: N=%lld: expected RESOURCE_EXHAUSTED, got %s: %s (replay: TFC_FAULT_REPLAY=%d:%d:%lld)\n",
                        name, (long long)n, tfc_code_name(st.code), st.msg, prog_index, (int)once, (long long)n);
        }
        n += n < 48 ? 1 : 1 + n / 12 + (int64_t)(next_rand() % (uint64_t)(n / 12 + 1));
    }
    CHECK(bad_code == 0);
    CHECK(leaked == 0);
    CHECK(wrong == 0);
    CHECK(runs > 20);
    printf("%-22s %-9s %4d runs up to N=%lld: %d failed cleanly, %d recovered\n", name, once ? "fail-once" : "fail-all",
           runs, (long long)n, failed, recovered);
    fflush(stdout);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *e = getenv("TFC_TEST_SEED");
    rng = e ? strtoull(e, NULL, 10) : (uint64_t)getpid();
    printf("TFC_TEST_SEED=%llu\n", (unsigned long long)rng);
    tfc_log_set_min_level(TFC_LOG_ERROR);
    snprintf(weights_path, sizeof weights_path, "%s/tfc_keras_faults_%d.h5", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    /* warm the registry, and write the weights file the load program reads */
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_ctx_set_seed(ctx, 11);
    test_sequential_null_layer(ctx);
    tfc_model *m = make_model(ctx, &st);
    REQUIRE(m && tfc_model_save_weights(m, weights_path, &st));
    tfc_model_free(m);
    tfc_ctx_free(ctx);
    static const struct { const char *name; program_fn fn; } progs[] = {
        {"fit (arrays)", program_fit},
        {"fit (dataset)", program_fit_dataset},
        {"load_weights (HDF5)", program_load_weights},
    };
    const char *replay = getenv("TFC_FAULT_REPLAY"); /* "<program index>:<once 0/1>:<N>": one run, for a debugger */
    if (replay) {
        int pi = 0, once = 0;
        long long n = 0;
        REQUIRE(sscanf(replay, "%d:%d:%lld", &pi, &once, &n) == 3 && pi >= 0 && pi < 3);
        results r;
        if (once) tfc_alloc_fail_once_after(n);
        else tfc_alloc_fail_after(n);
        bool ok = progs[pi].fn(&r, &st);
        tfc_alloc_fail_after(-1);
        printf("%s N=%lld: %s %s: %s\n", progs[pi].name, n, ok ? "ok" : "failed", tfc_code_name(st.code), st.msg);
        return 0;
    }
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) { /* the loop needs a program that repeats exactly */
        results a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        REQUIRE(progs[i].fn(&a, &st) && progs[i].fn(&b, &st));
        if (!same(&a, &b)) fprintf(stderr, "%s: two runs differ: loss %.9g vs %.9g\n", progs[i].name, a.loss[1], b.loss[1]);
        CHECK(same(&a, &b));
    }
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        for (int once = 0; once < 2; once++) {
            prog_index = (int)i;
            fault_loop(progs[i].name, progs[i].fn, once);
        }
    unlink(weights_path);
    TEST_MAIN_END();
}
