/* The device layer (tfc/device.h), the opaque kernel context's accessors, kernel registrations with dtype
 * constraints, and kernel instances: created once per (op, attrs, input dtypes) in eager's bounded cache and
 * once per node in a graph function, each owning its state (tf.random's seed semantics follow from it). */
#include <string.h>

#include "device/device.h"
#include "eager/kernel_cache.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

/* ---- devices ---- */
static void test_devices(void) {
    const tfc_device *d[4] = {0};
    CHECK(tfc_list_physical_devices(NULL, d, 4) == 1);
    CHECK(tfc_list_physical_devices("CPU", d, 4) == 1);
    CHECK(tfc_list_physical_devices("GPU", d + 1, 3) == 0);
    CHECK(tfc_list_logical_devices("CPU", d + 1, 3) == 1 && d[1] == d[0]);
    CHECK(!strcmp(tfc_device_type(d[0]), "CPU"));
    CHECK(!strcmp(tfc_device_name(d[0]), "/job:localhost/replica:0/task:0/device:CPU:0"));
    CHECK(!strcmp(tfc_device_logical_name(d[0]), "/device:CPU:0"));
    CHECK(!strcmp(tfc_device_physical_name(d[0]), "/physical_device:CPU:0"));
    const char *ok[] = {"/job:localhost/replica:0/task:0/device:CPU:0", "/device:CPU:0", "CPU:0", "/cpu:0",
                        "/physical_device:CPU:0", "cpu:0"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) CHECK(tfc_device_find(ok[i]) == d[0]);
    const char *bad[] = {"/device:CPU:1", "/device:GPU:0", "CPU", "CPU:", "CPU:0x", "", "/device:TPU:0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(tfc_device_find(bad[i]) == NULL);
    CHECK(tfc_device_find(NULL) == NULL);
    CHECK(tfc_device_supports_op(d[0], "AddV2", TFC_FLOAT));
    CHECK(tfc_device_supports_op(d[0], "Conv2D", TFC_INVALID_DTYPE));
    CHECK(!tfc_device_supports_op(d[0], "Relu", TFC_STRING)); /* outside the op's allowed set */
    CHECK(!tfc_device_supports_op(d[0], "NoSuchOp", TFC_FLOAT));
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_scalar_f32(1, &st), *o[1] = {0};
    REQUIRE(t);
    CHECK(tfc_tensor_device(t) == d[0]);
    REQUIRE(tfc_execute(ctx, "Identity", &t, 1, NULL, 0, o, 1, &st) == 1);
    CHECK(tfc_tensor_device(o[0]) == d[0]);
    tfc_tensor_unref(o[0]);
    tfc_tensor_unref(t);
}

/* ---- dtype constraints: one kernel per dtype set, the newest matching registration serves ---- */
static bool pick_shape(tfc_shape_ctx *c, tfc_status *st) { return tfc_shape_same_as_input0(c, st); }
static const tfc_op_def pick_def = {.name = "TfcPick", .inputs = "x: T", .outputs = "y: T",
                                    .attrs = "T: {float, double, int32}", .shape = pick_shape};
static bool fill(tfc_kernel_ctx *k, double v) {
    tfc_tensor *y = tfc_kernel_output(k, 0);
    for (int64_t i = 0; i < tfc_tensor_num_elements(y); i++)
        if (tfc_tensor_dtype(y) == TFC_FLOAT) ((float *)tfc_tensor_mutable_data(y))[i] = (float)v;
        else ((double *)tfc_tensor_mutable_data(y))[i] = v;
    return true;
}
static bool pick_one(tfc_kernel_ctx *k, tfc_status *st) { return (void)st, fill(k, 1); }
static bool pick_two(tfc_kernel_ctx *k, tfc_status *st) { return (void)st, fill(k, 2); }
static bool pick_three(tfc_kernel_ctx *k, tfc_status *st) { return (void)st, fill(k, 3); }

static double run_pick(tfc_dtype dt, tfc_status *st) {
    tfc_tensor *x = tfc_scalar(dt, 0, st), *y[1] = {0};
    REQUIRE(x);
    double v = tfc_execute(ctx, "TfcPick", &x, 1, NULL, 0, y, 1, st) == 1 ? tfc_tensor_get_f64(y[0], 0) : -1;
    tfc_tensor_unref(y[0]);
    tfc_tensor_unref(x);
    return v;
}

static void test_dtype_constraints(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_op_register(&pick_def, &st));
    const tfc_op *op = tfc_op_lookup("TfcPick");
    CHECK(!tfc_op_has_kernel(op, "CPU"));
    tfc_kernel_def f = {.op = "TfcPick", .compute = pick_one, .type_attr = "T", .n_dtypes = 1, .dtypes = {TFC_FLOAT}};
    tfc_kernel_def d = {.op = "TfcPick", .device = "CPU", .compute = pick_two, .type_attr = "T", .n_dtypes = 1,
                        .dtypes = {TFC_DOUBLE}};
    REQUIRE(tfc_kernel_register_def(&f, &st) && tfc_kernel_register_def(&d, &st));
    CHECK(tfc_op_has_kernel(op, "CPU") && !tfc_op_has_kernel(op, "GPU"));
    const tfc_device *cpu = tfc_device_find("CPU:0");
    CHECK(tfc_device_supports_op(cpu, "TfcPick", TFC_FLOAT) && tfc_device_supports_op(cpu, "TfcPick", TFC_DOUBLE));
    CHECK(!tfc_device_supports_op(cpu, "TfcPick", TFC_INT32));
    CHECK(run_pick(TFC_FLOAT, &st) == 1);
    CHECK(run_pick(TFC_DOUBLE, &st) == 2);
    CHECK(run_pick(TFC_INT32, &st) == -1);
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(strstr(st.msg, "TfcPick") != NULL);
    f.compute = pick_three; /* same constraint, registered later: replaces */
    REQUIRE(tfc_kernel_register_def(&f, &st));
    CHECK(run_pick(TFC_FLOAT, &st) == 3);
    CHECK(run_pick(TFC_DOUBLE, &st) == 2);
    /* bad registrations */
    tfc_kernel_def bad = f;
    bad.device = "TPU";
    CHECK(!tfc_kernel_register_def(&bad, &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    bad = f;
    bad.op = "NoSuchOp";
    CHECK(!tfc_kernel_register_def(&bad, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    bad = f;
    bad.type_attr = "Tidx";
    CHECK(!tfc_kernel_register_def(&bad, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    bad = f;
    bad.n_dtypes = TFC_KERNEL_MAX_DTYPES + 1;
    CHECK(!tfc_kernel_register_def(&bad, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    bad = f;
    bad.compute = NULL;
    CHECK(!tfc_kernel_register_def(&bad, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_kernel_register_def(NULL, &st));
    tfc_status_clear(&st);
}

/* ---- instances: TfcCounter's state counts its calls from its `start` attr ---- */
typedef struct {
    int64_t start, calls;
    tfc_dtype in_dtype;
} counter;
static int n_created, n_destroyed, accessor_failures;

static bool counter_shape(tfc_shape_ctx *c, tfc_status *st) { return tfc_shape_scalar(c, st); }
static const tfc_op_def counter_def = {.name = "TfcCounter", .inputs = "x: T", .outputs = "count: int64",
                                       .attrs = "start: int = 0, T: {float, double}", .shape = counter_shape,
                                       .stateful = true};

static bool counter_create(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    /* no tensors exist yet: dtypes only */
    accessor_failures += tfc_kernel_num_inputs(k) != 1 || tfc_kernel_input(k, 0) != NULL ||
                         tfc_kernel_input_dtype(k, 1) != TFC_INVALID_DTYPE || tfc_kernel_state(k) != NULL ||
                         strcmp(tfc_kernel_op(k)->name, "TfcCounter") ||
                         tfc_kernel_device(k) != tfc_device_find("/device:CPU:0");
    const int64_t start = tfc_attrs_int(tfc_kernel_attrs(k), "start", 0);
    if (start < 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "TfcCounter: start %lld < 0", (long long)start);
    counter *c = malloc(sizeof *c);
    if (!c) return tfc_status_oom(st, "counter", sizeof *c);
    *c = (counter){.start = start, .in_dtype = tfc_kernel_input_dtype(k, 0)};
    *state = c;
    n_created++;
    return true;
}
static void counter_destroy(void *state) {
    free(state);
    n_destroyed++;
}
static bool counter_compute(tfc_kernel_ctx *k, tfc_status *st) {
    counter *c = tfc_kernel_state(k);
    tfc_tensor *x = tfc_kernel_input(k, 0);
    accessor_failures += !c || !x || tfc_kernel_input(k, 1) != NULL || tfc_kernel_input(k, -1) != NULL ||
                         tfc_kernel_num_outputs(k) != 1 || tfc_kernel_output(k, 1) != NULL ||
                         tfc_kernel_input_dtype(k, 0) != c->in_dtype || tfc_tensor_dtype(x) != c->in_dtype ||
                         tfc_kernel_context(k) != ctx || tfc_kernel_pool(k) != tfc_ctx_pool(ctx) ||
                         tfc_kernel_device(k) != tfc_device_find("CPU:0");
    if (!c) return tfc_status_set(st, TFC_INTERNAL, "TfcCounter: no state");
    *(int64_t *)tfc_tensor_mutable_data(tfc_kernel_output(k, 0)) = c->start + ++c->calls;
    return true;
}

static int64_t count(tfc_dtype dt, int64_t start, tfc_status *st) {
    tfc_tensor *x = tfc_scalar(dt, 0, st), *y[1] = {0};
    REQUIRE(x);
    tfc_attr a = TFC_ATTR_I("start", start);
    int64_t v = tfc_execute(ctx, "TfcCounter", &x, 1, &a, 1, y, 1, st) == 1 ? (int64_t)tfc_tensor_get_f64(y[0], 0) : -1;
    tfc_tensor_unref(y[0]);
    tfc_tensor_unref(x);
    return v;
}

static void test_eager_instances(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_op_register(&counter_def, &st));
    const tfc_kernel_def def = {.op = "TfcCounter", .compute = counter_compute, .create = counter_create,
                                .destroy = counter_destroy};
    REQUIRE(tfc_kernel_register_def(&def, &st));
    const int64_t live0 = tfc_kernel_inst_live_count();
    /* one instance per (attrs, input dtypes), reused: its state continues */
    CHECK(count(TFC_FLOAT, 10, &st) == 11);
    CHECK(count(TFC_FLOAT, 10, &st) == 12);
    CHECK(count(TFC_DOUBLE, 10, &st) == 11); /* another input dtype: another instance */
    CHECK(count(TFC_FLOAT, 20, &st) == 21);  /* other attrs: another instance */
    CHECK(count(TFC_FLOAT, 10, &st) == 13);
    CHECK(n_created == 3 && n_destroyed == 0);
    tfc_kernel_cache_stats s = tfc_kernel_cache_stats_get(ctx);
    CHECK(s.size == 3 && s.hits == 2 && s.misses == 3 && s.evictions == 0);
    /* a create that fails: the call fails with its error, nothing is cached */
    CHECK(count(TFC_FLOAT, -1, &st) == -1);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "start -1") != NULL);
    CHECK(tfc_kernel_cache_stats_get(ctx).size == 3);
    /* bounded: many distinct attrs evict the least recently used */
    for (int i = 0; i < 3 * TFC_KERNEL_CACHE_SLOTS; i++) CHECK(count(TFC_FLOAT, 1000 + i, &st) == 1001 + i);
    s = tfc_kernel_cache_stats_get(ctx);
    CHECK(s.size <= TFC_KERNEL_CACHE_SLOTS && s.evictions > 0);
    CHECK(n_created - n_destroyed == s.size);
    CHECK(tfc_kernel_inst_live_count() - live0 == s.size);
    /* tfc_ctx_set_seed clears the cache (TensorFlow's kernel cache): states restart */
    tfc_ctx_set_seed(ctx, 1);
    CHECK(tfc_kernel_cache_stats_get(ctx).size == 0 && n_created == n_destroyed);
    CHECK(count(TFC_FLOAT, 10, &st) == 11);
    /* a second context has its own instances; freeing it destroys them */
    tfc_ctx *c2 = tfc_ctx_new(NULL, &st), *keep = ctx;
    REQUIRE(c2);
    ctx = c2;
    CHECK(count(TFC_FLOAT, 10, &st) == 11);
    ctx = keep;
    const int destroyed = n_destroyed;
    tfc_ctx_free(c2);
    CHECK(n_destroyed == destroyed + 1);
    CHECK(accessor_failures == 0);
    tfc_status_clear(&st);
}

/* ---- graph functions: each node owns its instance, made when the function is instantiated ---- */
static int two_counters(tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                        tfc_status *st) {
    (void)n_in, (void)max_out, (void)user;
    tfc_attr a = TFC_ATTR_I("start", 100);
    if (tfc_execute(c, "TfcCounter", in, 1, &a, 1, &out[0], 1, st) != 1) return -1;
    if (tfc_execute(c, "TfcCounter", in, 1, &a, 1, &out[1], 1, st) != 1) return -1;
    return 2;
}

static int two_uniforms(tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                        tfc_status *st) {
    (void)in, (void)n_in, (void)max_out, (void)user;
    const int64_t shape[1] = {2};
    return (out[0] = tfc_random_uniform(c, shape, 1, TFC_FLOAT, 0, 1, 1, st)) &&
                   (out[1] = tfc_random_uniform(c, shape, 1, TFC_FLOAT, 0, 1, 1, st))
               ? 2
               : -1;
}

static void test_graph_instances(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int created = n_created, destroyed = n_destroyed;
    tfc_function *f = tfc_function_new(ctx, two_counters, NULL, NULL, &st);
    REQUIRE(f);
    tfc_tensor *x = tfc_scalar_f32(0, &st);
    for (int call = 1; call <= 3; call++) {
        tfc_tensor *o[2] = {0};
        REQUIRE(tfc_function_call(f, &x, 1, o, 2, &st) == 2);
        CHECK(tfc_tensor_get_f64(o[0], 0) == 100 + call && tfc_tensor_get_f64(o[1], 0) == 100 + call);
        tfc_tensor_unref(o[0]);
        tfc_tensor_unref(o[1]);
    }
    CHECK(n_created - created == 2); /* one per node, not per call; eager's cache untouched */
    tfc_function_free(f);
    CHECK(n_destroyed - destroyed == 2);
    tfc_tensor_unref(x);

    /* tf.random.set_seed's documented tf.function example: with global seed 3 and op seed 1, both ops of one
     * call give the same values (each node's own generator), and the next call continues: (A1, A1), (A2, A2);
     * eager gives A1 then A2. Values from TensorFlow 2.21. */
    const float a1[2] = {0.77806914f, 0.5052885f}, a2[2] = {0.59841776f, 0.6413938f};
    tfc_ctx_set_seed(ctx, 3);
    f = tfc_function_new(ctx, two_uniforms, NULL, NULL, &st);
    REQUIRE(f);
    for (int call = 0; call < 2; call++) {
        tfc_tensor *o[2] = {0};
        REQUIRE(tfc_function_call(f, NULL, 0, o, 2, &st) == 2);
        const float *want = call ? a2 : a1;
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 2; i++) CHECK_NEAR(tfc_tensor_get_f64(o[k], i), want[i], 1e-7);
        tfc_tensor_unref(o[0]);
        tfc_tensor_unref(o[1]);
    }
    tfc_function_free(f);
    tfc_ctx_set_seed(ctx, 3);
    const int64_t shape[1] = {2};
    for (int call = 0; call < 2; call++) {
        tfc_tensor *u = tfc_random_uniform(ctx, shape, 1, TFC_FLOAT, 0, 1, 1, &st);
        REQUIRE(u);
        for (int i = 0; i < 2; i++) CHECK_NEAR(tfc_tensor_get_f64(u, i), (call ? a2 : a1)[i], 1e-7);
        tfc_tensor_unref(u);
    }
    CHECK(accessor_failures == 0);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_devices();
    test_dtype_constraints();
    test_eager_instances();
    test_graph_instances();
    tfc_ctx_free(ctx);
    CHECK(n_created == n_destroyed);
    CHECK(tfc_kernel_inst_live_count() == 0);
    TEST_MAIN_END();
}
