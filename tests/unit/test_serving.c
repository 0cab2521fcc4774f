/* The serving core (src/serving/servable.h): model_config text protos, the model manager's versions, labels,
 * status and hot reload (a version held by a request outlives its retirement), predict's checks and answers,
 * and concurrent predicts on several threads while versions are swapped. Models are written by
 * tfc_saved_model_save: version N computes y = x * N, z = reduce_sum(x, 1). */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "eager/context_internal.h"
#include "serving/serving_internal.h"
#include "tfc_test.h"

static tfc_ctx *ctx;
static char base[300];

static int fn_scale(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    tfc_variable *w = user;
    tfc_tensor *wv = tfc_variable_read(c, w, st), *ax1 = wv ? tfc_scalar_i32(1, st) : NULL;
    if (!ax1 || !tfc_scope_track(c, ax1, st)) return -1;
    if (!(out[0] = tfc_emit(c, "Mul", (tfc_tensor *[]){in[0], wv}, 2, NULL, 0, st)) ||
        !(out[1] = tfc_emit(c, "Sum", (tfc_tensor *[]){in[0], ax1}, 2, NULL, 0, st)))
        return -1;
    return 2;
}

/* Writes version `version` (y = x * version) under base. */
static void save_version(int version) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *init = tfc_scalar_f32((float)version, &st);
    tfc_variable *w = tfc_variable_new(ctx, init, true, "w", &st);
    REQUIRE(w);
    tfc_function *f = tfc_function_new(ctx, fn_scale, w, &(tfc_function_opts){.name = "scale"}, &st);
    REQUIRE(f);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {-1, 3}}}}, 1, &st);
    REQUIRE(cf);
    tfc_saved_model_signature_spec spec = {.key = "serving_default", .function = cf, .input_keys = (const char *[]){"x"},
                                           .output_keys = (const char *[]){"y", "z"}};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/%d", base, version);
    CHECK(tfc_saved_model_save(ctx, dir, &spec, 1, &st));
    CHECK_OK(&st);
    tfc_function_free(f);
    tfc_variable_free(w);
    tfc_tensor_unref(init);
    tfc_scope_end(ctx);
}

/* Called from worker threads too: no CHECK/REQUIRE (their counters are not atomic). */
static tfc_tensor *input_rows(int64_t rows, float base_value) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){rows, 3}, 2, &st);
    if (!t) abort();
    float *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < rows * 3; i++) d[i] = base_value + 0.25f * (float)i;
    return t;
}

/* Predicts on x through handle v; checks y = x * expected_scale and z = row sums. */
static bool predict_checks(tfc_srv_version *v, float expected_scale) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = input_rows(2, 1.5f);
    tfc_srv_named_tensor in = {"x", x}, *out = NULL;
    int n_out = 0;
    bool ok = tfc_srv_predict(v, NULL, &in, 1, NULL, 0, &out, &n_out, &st) && n_out == 2 &&
              !strcmp(out[0].name, "y") && !strcmp(out[1].name, "z");
    const float *xd = tfc_tensor_data(x);
    for (int i = 0; ok && i < 6; i++) ok = tfc_tensor_get_f64(out[0].tensor, i) == (double)(xd[i] * expected_scale);
    for (int r = 0; ok && r < 2; r++)
        ok = fabs(tfc_tensor_get_f64(out[1].tensor, r) - (xd[3 * r] + xd[3 * r + 1] + xd[3 * r + 2])) < 1e-5;
    if (!ok) fprintf(stderr, "predict: %s\n", st.msg);
    tfc_srv_outputs_free(out, n_out);
    tfc_tensor_unref(x);
    return ok;
}

static void test_config_parse(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_srv_config c;
    const char *good =
        "# two models\n"
        "model_config_list {\n"
        "  config { name: 'a' base_path: \"/m/a\" model_platform: \"tensorflow\"\n"
        "           model_version_policy { specific { versions: 1 versions: 3 } }\n"
        "           version_labels { key: 'stable' value: 1 } version_labels { key: \"canary\" value: 3 } }\n"
        "  config: { name: \"b\", base_path: \"/m/b\", model_version_policy: { latest: { num_versions: 2 } } }\n"
        "  config < name: \"c\" base_path: \"/m/c\" model_version_policy < all { } > logging_config { x { y: 1 } } >\n"
        "}\n";
    REQUIRE(tfc_srv_config_parse(good, strlen(good), &c, &st));
    CHECK_OK(&st);
    REQUIRE(c.n_models == 3);
    CHECK(!strcmp(c.models[0].name, "a") && !strcmp(c.models[0].base_path, "/m/a"));
    CHECK(c.models[0].policy == TFC_SRV_POLICY_SPECIFIC && c.models[0].n_versions == 2 && c.models[0].versions[1] == 3);
    CHECK(c.models[0].n_labels == 2 && !strcmp(c.models[0].labels[1].label, "canary") && c.models[0].labels[1].version == 3);
    CHECK(c.models[1].policy == TFC_SRV_POLICY_LATEST && c.models[1].num_versions == 2);
    CHECK(c.models[2].policy == TFC_SRV_POLICY_ALL && !strcmp(c.models[2].base_path, "/m/c"));
    tfc_srv_config_clear(&c);
    const char *bad[] = {
        "model_config_list { config { name: \"a\" base_path: \"/x\" bogus: 1 } }",
        "model_config_list { config { name: \"a\" } }",
        "model_config_list { config { name: \"a\" base_path: \"/x\" } config { name: \"a\" base_path: \"/y\" } }",
        "model_config_list { config { name: \"a\" base_path: \"/x\"",
        "model_config_list { config { name: \"a base_path: \"/x\" } }",
        "model_config_list { config { name: \"a\" base_path: \"/x\" model_version_policy { specific { } } } }",
        "model_config_list { config { name: \"a\" base_path: \"/x\" version_labels { key: \"l\" value: 1 } "
        "version_labels { key: \"l\" value: 2 } } }",
        "model_config_list { config { name: \"a\" base_path: \"/x\" model_version_policy { latest { num_versions: 0 } } } }",
        "model_config_list { }",
        "",
        "model_config_list { config { name: \"a\" base_path: \"/x\" model_version_policy { specific { versions: "
        "99999999999999999999 } } } }",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(!tfc_srv_config_parse(bad[i], strlen(bad[i]), &c, &st));
        CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
        CHECK(c.n_models == 0 && c.models == NULL);
    }
    CHECK(!tfc_srv_config_parse(bad[0], strlen(bad[0]), &c, &st) && strstr(st.msg, "line 1 column") &&
          strstr(st.msg, "bogus"));
}

static void test_manager(void) {
    tfc_status st = TFC_STATUS_INIT;
    save_version(1);
    tfc_srv_config cfg = {0};
    REQUIRE(tfc_srv_config_single("m", base, &cfg, &st));
    cfg.models[0].labels = tfc_calloc(1, sizeof *cfg.models[0].labels);
    cfg.models[0].labels[0] = (tfc_srv_label){tfc_strdup("stable"), 1};
    cfg.models[0].n_labels = 1;
    tfc_srv_manager *m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.instances = 2}, &st);
    tfc_srv_config_clear(&cfg);
    REQUIRE(m);
    CHECK(tfc_srv_manager_num_models(m) == 1 && !strcmp(tfc_srv_manager_model_name(m, 0), "m"));
    tfc_srv_version *v1 = tfc_srv_acquire(m, "m", -1, NULL, &st);
    REQUIRE(v1);
    CHECK(tfc_srv_version_number(v1) == 1 && !strcmp(tfc_srv_version_model(v1), "m"));
    CHECK(predict_checks(v1, 1.0f));
    /* the signature map holds serving_default and TensorFlow's init op signature (tfc writes none: only ours) */
    size_t len = 0;
    CHECK(tfc_srv_signature_def_map(v1, &len) && len > 20);
    /* request checks */
    tfc_tensor *x = input_rows(2, 0.0f), *xd = NULL;
    tfc_srv_named_tensor *out = NULL;
    int n_out = 0;
    CHECK(!tfc_srv_predict(v1, "nope", &(tfc_srv_named_tensor){"x", x}, 1, NULL, 0, &out, &n_out, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "Serving signature key \"nope\" not found.") != NULL);
    CHECK(!tfc_srv_predict(v1, "", &(tfc_srv_named_tensor){"q", x}, 1, NULL, 0, &out, &n_out, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!strcmp(st.msg, "input size does not match signature: 1!=1 len({q}) != len({x}). Sent extra: {q}. "
                          "Missing but required: {x}."));
    CHECK(!tfc_srv_predict(v1, "", (tfc_srv_named_tensor[]){{"x", x}, {"x", x}}, 2, NULL, 0, &out, &n_out, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor *xi = tfc_tensor_new(TFC_DOUBLE, (int64_t[]){2, 3}, 2, &st);
    CHECK(!tfc_srv_predict(v1, "", &(tfc_srv_named_tensor){"x", xi}, 1, NULL, 0, &out, &n_out, &st));
    CHECK(!strcmp(st.msg, "Expects arg[0] to be float but double is provided"));
    tfc_tensor_unref(xi);
    xd = tfc_tensor_new(TFC_FLOAT, (int64_t[]){2, 4}, 2, &st);
    CHECK(!tfc_srv_predict(v1, "", &(tfc_srv_named_tensor){"x", xd}, 1, NULL, 0, &out, &n_out, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(xd);
    CHECK(!tfc_srv_predict(v1, "", &(tfc_srv_named_tensor){"x", x}, 1, (const char *[]){"w"}, 1, &out, &n_out, &st));
    CHECK(!strcmp(st.msg, "output tensor alias not found in signature: w Outputs expected to be in the set {y,z}."));
    CHECK(!tfc_srv_predict(v1, "", &(tfc_srv_named_tensor){"x", x}, 1, (const char *[]){"z", "z"}, 2, &out, &n_out, &st));
    CHECK(!strcmp(st.msg, "duplicate output tensor alias: z"));
    CHECK(tfc_srv_predict(v1, "", &(tfc_srv_named_tensor){"x", x}, 1, (const char *[]){"z"}, 1, &out, &n_out, &st));
    CHECK(n_out == 1 && !strcmp(out[0].name, "z") && tfc_tensor_rank(out[0].tensor) == 1);
    tfc_srv_outputs_free(out, n_out);
    /* classify / regress need their signature kinds */
    const char *ex = "";
    size_t ex_len = 0;
    tfc_srv_examples exs = {.examples = &ex, .lens = &ex_len, .n = 1};
    tfc_srv_classification cls;
    CHECK(!tfc_srv_classify(v1, NULL, &exs, &cls, &st));
    CHECK(strstr(st.msg, "Expected classification signature method_name to be tensorflow/serving/classify") != NULL);
    int64_t nr = 0;
    CHECK(!tfc_srv_regress(v1, NULL, &exs, &nr, &st) && nr == 0);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(x);
    /* lookups */
    CHECK(!tfc_srv_acquire(m, "other", -1, NULL, &st));
    CHECK(st.code == TFC_NOT_FOUND && !strcmp(st.msg, "Servable not found for request: Latest(other)"));
    CHECK(!tfc_srv_acquire(m, "m", 7, NULL, &st));
    CHECK(st.code == TFC_NOT_FOUND && !strcmp(st.msg, "Servable not found for request: Specific(m, 7)"));
    CHECK(!tfc_srv_acquire(m, "m", -1, "canary", &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && !strcmp(st.msg, "Unrecognized servable version label: canary"));
    tfc_srv_version *vl = tfc_srv_acquire(m, "m", -1, "stable", &st);
    CHECK(vl == v1);
    tfc_srv_release(vl);
    /* a new version is picked up; the held old one still answers until released */
    save_version(2);
    char broken[400];
    snprintf(broken, sizeof broken, "%s/3", base);
    REQUIRE(mkdir(broken, 0755) == 0);
    tfc_srv_manager_poll(m);
    tfc_srv_version *v2 = tfc_srv_acquire(m, "m", -1, NULL, &st);
    REQUIRE(v2);
    CHECK(tfc_srv_version_number(v2) == 2);
    CHECK(predict_checks(v2, 2.0f));
    CHECK(predict_checks(v1, 1.0f));
    CHECK(!tfc_srv_acquire(m, "m", 1, NULL, &st) && st.code == TFC_NOT_FOUND);
    tfc_srv_version_status *vs = NULL;
    int n = tfc_srv_model_status(m, "m", -1, NULL, &vs, &st);
    REQUIRE(n == 3);
    CHECK(vs[0].version == 1 && vs[0].state == TFC_SRV_UNLOADING);
    CHECK(vs[1].version == 2 && vs[1].state == TFC_SRV_AVAILABLE && vs[1].status.code == TFC_OK);
    CHECK(vs[2].version == 3 && vs[2].state == TFC_SRV_END && vs[2].status.code == TFC_NOT_FOUND);
    tfc_free(vs);
    tfc_srv_release(v1);
    n = tfc_srv_model_status(m, "m", 1, NULL, &vs, &st);
    CHECK(n == 1 && vs[0].state == TFC_SRV_END && !strcmp(tfc_srv_state_name(vs[0].state), "END"));
    tfc_free(vs);
    CHECK(tfc_srv_model_status(m, "m", 9, NULL, &vs, &st) == -1 && !strcmp(st.msg, "Could not find version 9 of model m"));
    CHECK(tfc_srv_model_status(m, "zz", -1, NULL, &vs, &st) == -1 && st.code == TFC_NOT_FOUND);
    /* a version that failed to load is tried again at the next scan: still broken, it fails again and version 2
     * keeps serving; once its files are complete, it loads */
    tfc_srv_manager_poll(m);
    CHECK(tfc_srv_model_status(m, "m", 3, NULL, &vs, &st) == 1 && vs[0].state == TFC_SRV_END &&
          vs[0].status.code == TFC_NOT_FOUND);
    tfc_free(vs);
    CHECK(predict_checks(v2, 2.0f));
    REQUIRE(rmdir(broken) == 0);
    save_version(3);
    tfc_srv_manager_poll(m);
    tfc_srv_version *v3 = tfc_srv_acquire(m, "m", -1, NULL, &st);
    CHECK(v3 && tfc_srv_version_number(v3) == 3 && predict_checks(v3, 3.0f));
    tfc_srv_release(v3);
    CHECK(tfc_srv_model_status(m, "m", 3, NULL, &vs, &st) == 1 && vs[0].state == TFC_SRV_AVAILABLE &&
          vs[0].status.code == TFC_OK);
    tfc_free(vs);
    tfc_srv_release(v2);
    tfc_srv_manager_free(m);
}

/* ---- concurrency: predicting threads while the main thread adds versions and polls ----------------------- */

typedef struct {
    tfc_srv_manager *m;
    atomic_int *stop;
    int calls, failures;
} worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    while (!atomic_load(a->stop)) {
        tfc_status st = TFC_STATUS_INIT;
        tfc_srv_version *v = tfc_srv_acquire(a->m, "m", -1, NULL, &st);
        if (!v || !predict_checks(v, (float)tfc_srv_version_number(v))) a->failures++;
        tfc_srv_release(v);
        a->calls++;
    }
    return NULL;
}

static void test_concurrent_swaps(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_srv_config cfg = {0};
    REQUIRE(tfc_srv_config_single("m", base, &cfg, &st));
    tfc_srv_manager *m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.instances = 2, .poll_wait_seconds = 0.05}, &st);
    tfc_srv_config_clear(&cfg);
    REQUIRE(m);
    atomic_int stop = 0;
    worker_arg args[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (worker_arg){m, &stop, 0, 0};
        REQUIRE(pthread_create(&th[i], NULL, worker, &args[i]) == 0);
    }
    for (int version = 4; version <= 6; version++) {
        save_version(version);
        for (int tries = 0; tries < 400; tries++) {
            tfc_srv_version *v = tfc_srv_acquire(m, "m", -1, NULL, &st);
            int64_t now = tfc_srv_version_number(v);
            tfc_srv_release(v);
            if (now == version) break;
            usleep(10000);
        }
    }
    atomic_store(&stop, 1);
    int calls = 0, failures = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        calls += args[i].calls;
        failures += args[i].failures;
    }
    CHECK(calls > 0);
    CHECK(failures == 0);
    tfc_srv_version *v = tfc_srv_acquire(m, "m", -1, NULL, &st);
    CHECK(tfc_srv_version_number(v) == 6);
    tfc_srv_release(v);
    tfc_srv_manager_free(m);
    printf("concurrent: %d predicts over 3 swaps, %d failed\n", calls, failures);
}

/* ---- batching: concurrent single-row predicts joined into padded batches ---------------------------------- */

static atomic_int n_batches, batched_rows, padded_rows;

static void count_batch(void *user, const char *model, int64_t size, int64_t padded) {
    atomic_fetch_add(&n_batches, 1);
    atomic_fetch_add(&batched_rows, (int)size);
    atomic_fetch_add(&padded_rows, (int)padded);
}

static void test_batching(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_srv_batching_opts bo;
    const char *text = "max_batch_size { value: 8 } batch_timeout_micros { value: 20000 }\n"
                       "num_batch_threads: 2 max_enqueued_batches { value: 100 } allowed_batch_sizes: 4\n"
                       "allowed_batch_sizes: 8 pad_variable_length_inputs: false thread_pool_name: \"x\"";
    REQUIRE(tfc_srv_batching_parse(text, strlen(text), &bo, &st));
    CHECK(bo.max_batch_size == 8 && bo.batch_timeout_micros == 20000 && bo.num_batch_threads == 2 &&
          bo.max_enqueued_batches == 100 && bo.n_allowed == 2 && bo.allowed_batch_sizes[1] == 8);
    tfc_srv_batching_opts bad;
    const char *bads[] = {"max_batch_size { value: 8 } allowed_batch_sizes: 4", "allowed_batch_sizes: 4 allowed_batch_sizes: 2",
                          "max_batch_size { valu: 8 }", "bogus: 1", "max_batch_size: -3"};
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        CHECK(!tfc_srv_batching_parse(bads[i], strlen(bads[i]), &bad, &st));
        CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    }
    bo.on_batch = count_batch;
    tfc_srv_config cfg = {0};
    REQUIRE(tfc_srv_config_single("m", base, &cfg, &st));
    tfc_srv_manager *m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.batching = &bo, .instances = 1}, &st);
    tfc_srv_config_clear(&cfg);
    REQUIRE(m);
    atomic_int stop = 0;
    worker_arg args[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (worker_arg){m, &stop, 0, 0};
        REQUIRE(pthread_create(&th[i], NULL, worker, &args[i]) == 0);
    }
    usleep(300000);
    atomic_store(&stop, 1);
    int calls = 0, failures = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        calls += args[i].calls;
        failures += args[i].failures;
    }
    CHECK(calls > 0 && failures == 0);
    /* each call has 2 rows: 6 clients fill batches of up to 8 rows, padded to 4 or 8 */
    CHECK(atomic_load(&batched_rows) == 2 * calls);
    CHECK(atomic_load(&n_batches) < calls);
    CHECK(atomic_load(&padded_rows) >= atomic_load(&batched_rows));
    /* a request larger than max_batch_size */
    tfc_srv_version *v = tfc_srv_acquire(m, "m", -1, NULL, &st);
    REQUIRE(v);
    tfc_tensor *x = input_rows(9, 0.0f);
    tfc_srv_named_tensor *out = NULL;
    int n_out = 0;
    CHECK(!tfc_srv_predict(v, NULL, &(tfc_srv_named_tensor){"x", x}, 1, NULL, 0, &out, &n_out, &st));
    CHECK(!strcmp(st.msg, "Task size 9 is larger than maximum batch size 8"));
    tfc_tensor_unref(x);
    /* a lone request of an allowed batch size runs as one unpadded batch */
    const int batches = atomic_load(&n_batches), padded = atomic_load(&padded_rows);
    const float scale = (float)tfc_srv_version_number(v);
    x = input_rows(4, 1.0f);
    REQUIRE(tfc_srv_predict(v, NULL, &(tfc_srv_named_tensor){"x", x}, 1, NULL, 0, &out, &n_out, &st));
    REQUIRE(n_out == 2 && tfc_tensor_num_elements(out[0].tensor) == 12 && tfc_tensor_dim(out[1].tensor, 0) == 4);
    CHECK(atomic_load(&n_batches) == batches + 1 && atomic_load(&padded_rows) == padded + 4);
    const float *xv = tfc_tensor_data(x);
    for (int i = 0; i < 12; i++) CHECK(tfc_tensor_get_f64(out[0].tensor, i) == (double)(xv[i] * scale));
    for (int r = 0; r < 4; r++)
        CHECK(fabs(tfc_tensor_get_f64(out[1].tensor, r) - (xv[3 * r] + xv[3 * r + 1] + xv[3 * r + 2])) < 1e-5);
    tfc_srv_outputs_free(out, n_out);
    tfc_tensor_unref(x);
    tfc_srv_release(v);
    tfc_srv_manager_free(m);
    printf("batching: %d predicts in %d batches (%d rows, %d padded)\n", calls, atomic_load(&n_batches),
           atomic_load(&batched_rows), atomic_load(&padded_rows));
}

/* ---- batching: a full batch runs at once, a partial one when batch_timeout_micros has passed ------------- */

static double mono_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct {
    tfc_srv_manager *m;
    double seconds; /* the call's latency */
    bool ok;
    int64_t deadline_ms; /* tfc_srv_set_deadline for the call (0: none) */
    tfc_code code;       /* the call's status */
} timed_arg;

static void *timed_predict(void *p) {
    timed_arg *a = p;
    tfc_status st = TFC_STATUS_INIT;
    const double t0 = mono_now();
    tfc_srv_version *v = tfc_srv_acquire(a->m, "m", -1, NULL, &st);
    tfc_tensor *x = input_rows(1, 2.0f);
    tfc_srv_named_tensor *out = NULL;
    int n_out = 0;
    tfc_srv_set_deadline(a->deadline_ms);
    a->ok = v && tfc_srv_predict(v, NULL, &(tfc_srv_named_tensor){"x", x}, 1, NULL, 0, &out, &n_out, &st) &&
            n_out == 2 && tfc_tensor_dim(out[0].tensor, 0) == 1 &&
            tfc_tensor_get_f64(out[0].tensor, 2) == 2.5 * (double)tfc_srv_version_number(v);
    a->seconds = mono_now() - t0;
    a->code = st.code;
    tfc_srv_set_deadline(0);
    tfc_srv_outputs_free(out, n_out);
    tfc_tensor_unref(x);
    tfc_srv_release(v);
    return NULL;
}

static void test_batch_timing(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_srv_config cfg = {0};
    REQUIRE(tfc_srv_config_single("m", base, &cfg, &st));
    /* a full batch: 4 single-row calls with max_batch_size 4 run as one batch long before the 20 s timeout */
    tfc_srv_batching_opts bo = {.max_batch_size = 4, .batch_timeout_micros = 20000000, .num_batch_threads = 1,
                                .on_batch = count_batch};
    tfc_srv_manager *m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.batching = &bo, .instances = 1}, &st);
    REQUIRE(m);
    const int batches = atomic_load(&n_batches), rows = atomic_load(&batched_rows);
    timed_arg args[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (timed_arg){m, 0, false, 0, TFC_OK};
        REQUIRE(pthread_create(&th[i], NULL, timed_predict, &args[i]) == 0);
    }
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].ok);
        if (args[i].seconds > worst) worst = args[i].seconds;
    }
    CHECK(worst < 5.0);
    CHECK(atomic_load(&n_batches) == batches + 1 && atomic_load(&batched_rows) == rows + 4);
    tfc_srv_manager_free(m);
    /* a partial batch: one call alone runs once batch_timeout_micros (300 ms) has passed, not before */
    bo.batch_timeout_micros = 300000;
    REQUIRE(m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.batching = &bo, .instances = 1}, &st));
    timed_arg one = {m, 0, false, 0, TFC_OK};
    timed_predict(&one);
    CHECK(one.ok);
    CHECK(one.seconds >= 0.299 && one.seconds < 5.0);
    tfc_srv_manager_free(m);
    tfc_srv_config_clear(&cfg);
    printf("batch timing: full batch of 4 in %.4f s (timeout 20 s), lone call in %.4f s (timeout 0.3 s)\n", worst,
           one.seconds);
}

/* ---- deadlines: a call that waits past tfc_srv_set_deadline's bound gets DEADLINE_EXCEEDED ------------------ */

static void test_deadlines(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_srv_config cfg = {0};
    REQUIRE(tfc_srv_config_single("m", base, &cfg, &st));
    /* queued in a batch that waits 400 ms: withdrawn when its 50 ms deadline passes */
    tfc_srv_batching_opts bo = {.max_batch_size = 4, .batch_timeout_micros = 400000, .num_batch_threads = 1};
    tfc_srv_manager *m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.batching = &bo, .instances = 1}, &st);
    REQUIRE(m);
    timed_arg a = {m, 0, false, 50, TFC_OK};
    timed_predict(&a);
    CHECK(!a.ok && a.code == TFC_DEADLINE_EXCEEDED);
    CHECK(a.seconds >= 0.049 && a.seconds < 0.39);
    /* the request that opened a batch leaves it; the batch (now held by the next request) still runs, at the
     * first request's batch deadline, and answers the one that stayed */
    timed_arg first = {m, 0, false, 50, TFC_OK}, second = {m, 0, false, 0, TFC_OK};
    pthread_t t1, t2;
    const double t0 = mono_now();
    REQUIRE(pthread_create(&t1, NULL, timed_predict, &first) == 0);
    usleep(10000);
    REQUIRE(pthread_create(&t2, NULL, timed_predict, &second) == 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(!first.ok && first.code == TFC_DEADLINE_EXCEEDED && first.seconds < 0.39);
    CHECK(second.ok && second.code == TFC_OK);
    CHECK(mono_now() - t0 >= 0.39);
    tfc_srv_manager_free(m);
    /* waiting for the one copy of the model, held elsewhere */
    REQUIRE(m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.instances = 1}, &st));
    tfc_srv_version *v = tfc_srv_acquire(m, "m", -1, NULL, &st);
    REQUIRE(v);
    srv_instance *held = srv_instance_take(v, 0);
    timed_arg c = {m, 0, false, 60, TFC_OK};
    timed_predict(&c);
    CHECK(!c.ok && c.code == TFC_DEADLINE_EXCEEDED && c.seconds >= 0.059);
    srv_instance_put(v, held);
    const double copy_wait = c.seconds;
    c = (timed_arg){m, 0, false, 10000, TFC_OK};
    timed_predict(&c);
    CHECK(c.ok && c.code == TFC_OK);
    tfc_srv_release(v);
    tfc_srv_manager_free(m);
    tfc_srv_config_clear(&cfg);
    printf("deadlines: queued call gave up after %.3f s, copy wait after %.3f s\n", a.seconds, copy_wait);
}

static void remove_tree(const char *path) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/tfc_test_serving_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    REQUIRE(mkdir(base, 0755) == 0);
    test_config_parse();
    test_manager();
    test_concurrent_swaps();
    test_batching();
    test_batch_timing();
    test_deadlines();
    remove_tree(base);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
