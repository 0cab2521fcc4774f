/* tf.function in C: tracing, the concrete-function cache and retracing, captures (constants, large tensors,
 * variables), stateful order, failing traces, gradients through calls and tapes inside traces. Values are
 * compared with eager execution of the same C function; leaks are checked by live-tensor counts (and by
 * ASan/LSan in the sanitizer build). */
#include "core/tensor_internal.h"
#include "eager/context_internal.h"
#include "graph/graph.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *mat(int64_t r, int64_t c, float base) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){r, c}, 2, &st);
    REQUIRE(t);
    float *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < r * c; i++) d[i] = base + 0.25f * (float)(i % 7) - 0.5f * (float)(i % 3);
    return t;
}

static float at(const tfc_tensor *t, int64_t i) { return (float)tfc_tensor_get_f64(t, i); }

static tfc_tensor *op2(const char *name, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return tfc_emit(ctx, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, st);
}

/* f(x, y) = tanh(x * y + x) - y */
static int fn_arith(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    tfc_tensor *m, *a, *t, *r;
    if (!(m = op2("Mul", in[0], in[1], st)) || !(a = op2("AddV2", m, in[0], st)) ||
        !(t = tfc_emit(c, "Tanh", &a, 1, NULL, 0, st)) || !(r = op2("Sub", t, in[1], st)))
        return -1;
    out[0] = r;
    return 1;
}

static void check_same(const tfc_tensor *a, const tfc_tensor *b) {
    REQUIRE(a && b);
    CHECK(tfc_shape_equal(tfc_tensor_shape(a), tfc_tensor_shape(b)));
    CHECK(tfc_tensor_dtype(a) == tfc_tensor_dtype(b));
    for (int64_t i = 0; i < tfc_tensor_num_elements(a); i++) CHECK_NEAR(at(a, i), at(b, i), 1e-6);
}

static void test_values_and_retracing(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_arith, NULL, &(tfc_function_opts){.name = "arith"}, &st);
    REQUIRE(f);
    tfc_tensor *x = mat(3, 4, 0.5f), *y = mat(3, 4, -1.0f), *out[2], *ref[2];
    tfc_scope_track(ctx, x, &st);
    tfc_scope_track(ctx, y, &st);
    for (int rep = 0; rep < 3; rep++) {
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, out, 2, &st) == 1);
        CHECK_OK(&st);
        CHECK(fn_arith(ctx, (tfc_tensor *[]){x, y}, 2, ref, 2, NULL, &st) == 1);
        check_same(out[0], ref[0]);
        CHECK(!tfc_tensor_is_symbolic(out[0]));
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    /* a new shape and a new dtype each trace again */
    tfc_tensor *x2 = mat(2, 4, 0.1f), *y2 = mat(2, 4, 0.2f);
    tfc_scope_track(ctx, x2, &st);
    tfc_scope_track(ctx, y2, &st);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){x2, y2}, 2, out, 2, &st) == 1);
    CHECK(tfc_function_tracing_count(f) == 2);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, out, 2, &st) == 1);
    CHECK(tfc_function_tracing_count(f) == 2);
    tfc_tensor *xd = tfc_scalar_f64(0.5, &st), *yd = tfc_scalar_f64(2.0, &st);
    tfc_scope_track(ctx, xd, &st);
    tfc_scope_track(ctx, yd, &st);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){xd, yd}, 2, out, 2, &st) == 1);
    CHECK_NEAR(tfc_tensor_get_f64(out[0], 0), tanh(0.5 * 2.0 + 0.5) - 2.0, 1e-12);
    CHECK(tfc_function_tracing_count(f) == 3);
    /* the graph: 2 args, Mul, AddV2, Tanh, Sub, Identity */
    tfc_concrete_function *cf = tfc_function_get_concrete_function(
        f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {3, 4}}}, {TFC_FLOAT, {2, {3, 4}}}}, 2, &st);
    REQUIRE(cf);
    CHECK(tfc_function_tracing_count(f) == 3);
    CHECK(tfc_concrete_function_num_nodes(cf) == 7);
    CHECK(tfc_concrete_function_num_outputs(cf) == 1);
    tfc_tensor_spec os = tfc_concrete_function_output_spec(cf, 0);
    CHECK(os.dtype == TFC_FLOAT && os.shape.rank == 2 && os.shape.dims[0] == 3 && os.shape.dims[1] == 4);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

static void test_reduce_retracing_and_signature(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_arith, NULL, &(tfc_function_opts){.reduce_retracing = true}, &st);
    REQUIRE(f);
    tfc_tensor *out[1], *ref[1];
    for (int64_t r = 1; r <= 4; r++) {
        tfc_tensor *x = mat(r, 3, 0.3f), *y = mat(r, 3, 0.7f);
        tfc_scope_track(ctx, x, &st);
        tfc_scope_track(ctx, y, &st);
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, out, 1, &st) == 1);
        CHECK_OK(&st);
        CHECK(fn_arith(ctx, (tfc_tensor *[]){x, y}, 2, ref, 1, NULL, &st) == 1);
        check_same(out[0], ref[0]);
    }
    CHECK(tfc_function_tracing_count(f) == 2); /* [1,3], then [None,3] serves every other row count */
    tfc_function_free(f);

    const char *names[2] = {"x", "y"};
    tfc_tensor_spec sig[2] = {{TFC_FLOAT, {2, {-1, 4}}}, {TFC_FLOAT, {2, {-1, 4}}}};
    f = tfc_function_new(ctx, fn_arith, NULL,
                         &(tfc_function_opts){.name = "sig", .input_signature = sig, .n_input_signature = 2,
                                              .input_names = names},
                         &st);
    REQUIRE(f);
    for (int64_t r = 2; r <= 5; r += 3) {
        tfc_tensor *x = mat(r, 4, 0.3f), *y = mat(r, 4, 0.7f);
        tfc_scope_track(ctx, x, &st);
        tfc_scope_track(ctx, y, &st);
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, out, 1, &st) == 1);
        CHECK(fn_arith(ctx, (tfc_tensor *[]){x, y}, 2, ref, 1, NULL, &st) == 1);
        check_same(out[0], ref[0]);
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_tensor *bad = mat(2, 3, 0.f);
    tfc_scope_track(ctx, bad, &st);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){bad, bad}, 2, out, 1, &st) == -1);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "'x'") && strstr(st.msg, "(2, 3)") == NULL && strstr(st.msg, "[2,3]") && strstr(st.msg, "[?,4]"));
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* Captures: a small eager tensor becomes a Const, a large one a captured input, a variable a resource input. */
typedef struct {
    tfc_tensor *small, *large;
    tfc_variable *v;
} caps_t;

static int fn_caps(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    caps_t *k = user;
    tfc_tensor *one = tfc_vec_f32((float[]){1, 1, 1}, 3, st);
    if (!one || !tfc_scope_track(c, one, st)) return -1;
    if (!tfc_variable_assign_add(c, k->v, one, st)) return -1; /* stateful: runs before the read below */
    tfc_tensor *r = tfc_variable_read(c, k->v, st), *a, *b, *s;
    if (!r || !(a = op2("Mul", in[0], k->small, st)) || !(b = op2("AddV2", a, r, st))) return -1;
    tfc_tensor *axis = tfc_scalar_i32(0, st);
    if (!axis || !tfc_scope_track(c, axis, st)) return -1;
    if (!(s = tfc_emit(c, "Sum", (tfc_tensor *[]){k->large, axis}, 2, NULL, 0, st))) return -1;
    out[0] = b;
    out[1] = s;
    return 2;
}

static void test_captures_and_variables(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count();
    REQUIRE(tfc_scope_begin(ctx, &st));
    caps_t k;
    k.small = tfc_vec_f32((float[]){2, 3, 4}, 3, &st);
    k.large = tfc_tensor_new(TFC_FLOAT, (int64_t[]){300}, 1, &st);
    float *d = tfc_tensor_mutable_data(k.large);
    for (int i = 0; i < 300; i++) d[i] = (float)i;
    tfc_tensor *init = tfc_vec_f32((float[]){10, 20, 30}, 3, &st);
    k.v = tfc_variable_new(ctx, init, true, "v", &st);
    REQUIRE(k.v);
    tfc_function *f = tfc_function_new(ctx, fn_caps, &k, NULL, &st);
    tfc_tensor *x = tfc_vec_f32((float[]){1, 1, 2}, 3, &st), *out[2];
    tfc_scope_track(ctx, x, &st);
    for (int call = 1; call <= 3; call++) {
        CHECK(tfc_function_call(f, &x, 1, out, 2, &st) == 2);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0], 0), 1 * 2 + 10 + call, 1e-6);
        CHECK_NEAR(at(out[0], 2), 2 * 4 + 30 + call, 1e-6);
        CHECK_NEAR(at(out[1], 0), 299 * 300 / 2, 1e-3);
    }
    CHECK_NEAR(at(tfc_variable_value(k.v), 1), 23, 1e-6); /* three assign_adds ran */
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_concrete_function *cf = f ? tfc_function_get_concrete_function(
                                        f, (tfc_tensor_spec[]){{TFC_FLOAT, {1, {3}}}}, 1, &st)
                                  : NULL;
    REQUIRE(cf);
    CHECK(tfc_concrete_function_num_captures(cf) == 2); /* the variable's handle and the large tensor */
    tfc_function_free(f);
    tfc_variable_free(k.v);
    tfc_tensor_unref(k.small);
    tfc_tensor_unref(k.large);
    tfc_tensor_unref(init);
    tfc_scope_end(ctx);
    CHECK(tfc_tensor_live_count() == live0);
}

/* A trace that fails returns the error, leaves nothing in the library, and leaks no tensor. */
static int fn_bad(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                  tfc_status *st) {
    tfc_tensor *a = op2("AddV2", in[0], in[0], st);
    if (!a) return -1;
    tfc_tensor *m = tfc_emit(c, "MatMul", (tfc_tensor *[]){a, in[1]}, 2, NULL, 0, st); /* [2,3] x [2,3] */
    if (!m) return -1;
    out[0] = m;
    return 1;
}

static void test_failed_trace(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count();
    tfc_function *f = tfc_function_new(ctx, fn_bad, NULL, NULL, &st);
    tfc_tensor *x = mat(2, 3, 1.f), *out[1];
    tfc_flib *lib = ctx->flib;
    int n_fns = lib ? lib->n : 0;
    CHECK(tfc_function_call(f, (tfc_tensor *[]){x, x}, 2, out, 1, &st) == -1);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "MatMul") != NULL);
    CHECK(ctx->trace == NULL);
    CHECK((ctx->flib ? ((tfc_flib *)ctx->flib)->n : 0) == n_fns);
    /* a good call afterwards still works */
    tfc_tensor *y = mat(3, 2, 1.f);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, out, 1, &st) == 1);
    CHECK_OK(&st);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_function_free(f);
    CHECK(tfc_tensor_live_count() == live0);
}

/* Gradients through a call (the call's gradient is a function), to variables and of second order. */
typedef struct {
    tfc_variable *w;
} wv_t;

static int fn_poly(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    wv_t *k = user;
    tfc_tensor *w = tfc_variable_read(c, k->w, st), *x2, *x3, *r;
    if (!w || !(x2 = op2("Mul", in[0], in[0], st)) || !(x3 = op2("Mul", x2, in[0], st)) || !(r = op2("Mul", x3, w, st)))
        return -1;
    out[0] = r; /* w * x^3 */
    return 1;
}

static void test_gradients_through_call(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count();
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *w0 = tfc_vec_f32((float[]){0.5f, -2.f}, 2, &st);
    wv_t k = {tfc_variable_new(ctx, w0, true, "w", &st)};
    tfc_function *f = tfc_function_new(ctx, fn_poly, &k, NULL, &st);
    tfc_tensor *x = tfc_vec_f32((float[]){1.5f, 3.f}, 2, &st), *y[1], *g[2], *gg[1];
    tfc_scope_track(ctx, x, &st);
    tfc_scope_track(ctx, w0, &st);
    tfc_tape *outer = tfc_tape_new(ctx, false, true, &st);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(outer, x);
    tfc_tape_watch(tape, x);
    CHECK(tfc_function_call(f, &x, 1, y, 1, &st) == 1);
    CHECK_OK(&st);
    CHECK(tfc_tape_gradient(tape, y[0], &x, 1, &k.w, 1, TFC_UNCONNECTED_NONE, g, &st));
    CHECK_OK(&st);
    REQUIRE(g[0] && g[1]);
    /* dy/dx = 3 w x^2, dy/dw = x^3 */
    CHECK_NEAR(at(g[0], 0), 3 * 0.5 * 1.5 * 1.5, 1e-5);
    CHECK_NEAR(at(g[0], 1), 3 * -2.0 * 9, 1e-5);
    CHECK_NEAR(at(g[1], 0), 1.5 * 1.5 * 1.5, 1e-5);
    CHECK_NEAR(at(g[1], 1), 27, 1e-5);
    tfc_tape_free(tape);
    /* second order: d/dx of 3 w x^2 = 6 w x */
    CHECK(tfc_tape_gradient(outer, g[0], &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, gg, &st));
    CHECK_OK(&st);
    REQUIRE(gg[0]);
    CHECK_NEAR(at(gg[0], 0), 6 * 0.5 * 1.5, 1e-5);
    CHECK_NEAR(at(gg[0], 1), 6 * -2.0 * 3, 1e-5);
    tfc_tape_free(outer);
    tfc_function_free(f);
    tfc_variable_free(k.w);
    tfc_scope_end(ctx);
    CHECK(tfc_tensor_live_count() == live0);
}

/* A tape inside the traced function: its gradient ops are traced too. */
static int fn_inner_tape(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                         tfc_status *st) {
    tfc_tape *t = tfc_tape_new(c, false, false, st);
    if (!t) return -1;
    tfc_tape_watch(t, in[0]);
    tfc_tensor *s = tfc_emit(c, "Sin", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    tfc_tensor *y = s ? op2("Mul", s, in[1], st) : NULL, *g[1];
    bool ok = y && tfc_tape_gradient(t, y, &in[0], 1, NULL, 0, TFC_UNCONNECTED_ZERO, g, st);
    tfc_tape_free(t);
    if (!ok) return -1; /* g[0] belongs to the trace's scope */
    out[0] = g[0]; /* cos(x) * y */
    out[1] = y;
    return 2;
}

static void test_tape_inside_function(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t live0 = tfc_tensor_live_count();
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_inner_tape, NULL, NULL, &st);
    tfc_tensor *x = tfc_vec_f32((float[]){0.3f, 1.2f}, 2, &st), *y = tfc_vec_f32((float[]){2.f, -1.f}, 2, &st), *out[2];
    tfc_scope_track(ctx, x, &st);
    tfc_scope_track(ctx, y, &st);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, out, 2, &st) == 2);
    CHECK_OK(&st);
    CHECK_NEAR(at(out[0], 0), cos(0.3) * 2, 1e-6);
    CHECK_NEAR(at(out[0], 1), cos(1.2) * -1, 1e-6);
    CHECK_NEAR(at(out[1], 1), sin(1.2) * -1, 1e-6);
    tfc_function_free(f);
    tfc_scope_end(ctx);
    CHECK(tfc_tensor_live_count() == live0);
}

/* A function calling another: the inner call is a PartitionedCall node in the outer graph. */
static tfc_function *inner_fn;
static int fn_outer(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    tfc_tensor *r[1];
    if (tfc_function_call(inner_fn, (tfc_tensor *[]){in[0], in[0]}, 2, r, 1, st) != 1) return -1;
    out[0] = op2("AddV2", r[0], in[0], st);
    return out[0] ? 1 : -1;
}

static void test_nested_function(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    inner_fn = tfc_function_new(ctx, fn_arith, NULL, &(tfc_function_opts){.name = "inner"}, &st);
    tfc_function *f = tfc_function_new(ctx, fn_outer, NULL, &(tfc_function_opts){.name = "outer"}, &st);
    tfc_tensor *x = mat(2, 2, 0.4f), *out[1], *ref[1];
    tfc_scope_track(ctx, x, &st);
    CHECK(tfc_function_call(f, &x, 1, out, 1, &st) == 1);
    CHECK_OK(&st);
    REQUIRE(fn_arith(ctx, (tfc_tensor *[]){x, x}, 2, ref, 1, NULL, &st) == 1);
    tfc_tensor *e = op2("AddV2", ref[0], x, &st);
    check_same(out[0], e);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {2, 2}}}}, 1, &st);
    REQUIRE(cf);
    CHECK(tfc_function_tracing_count(inner_fn) == 1);
    /* the outer graph calls the inner function */
    tfc_flib *lib = ctx->flib;
    tfc_gfunc *g = tfc_flib_find(lib, tfc_concrete_function_name(cf));
    REQUIRE(g);
    int calls = 0;
    for (int i = 0; i < g->body->n_nodes; i++) calls += !strcmp(g->body->nodes[i]->op->def->name, "PartitionedCall");
    CHECK(calls == 1);
    tfc_function_free(f);
    tfc_function_free(inner_fn);
    tfc_scope_end(ctx);
}

/* A symbolic tensor that escapes its trace cannot be used eagerly. */
static tfc_tensor *escaped;
static int fn_escape(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                     tfc_status *st) {
    out[0] = tfc_emit(c, "Neg", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    escaped = tfc_tensor_ref(out[0]);
    return out[0] ? 1 : -1;
}

static int warnings;
static void count_warnings(void *user, tfc_log_level level, const char *msg) {
    if (level == TFC_LOG_WARNING && strstr(msg, "triggered tf.function retracing")) warnings++;
}

static void test_escape_and_warning(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_escape, NULL, &(tfc_function_opts){.name = "esc"}, &st);
    tfc_log_set_sink(count_warnings, NULL);
    tfc_tensor *out[1];
    for (int64_t r = 1; r <= 6; r++) {
        tfc_tensor *x = mat(r, 1, 1.f);
        tfc_scope_track(ctx, x, &st);
        CHECK(tfc_function_call(f, &x, 1, out, 1, &st) == 1);
        CHECK_NEAR(at(out[0], 0), -at(x, 0), 1e-6);
        if (r < 6) tfc_tensor_unref(escaped);
    }
    tfc_log_set_sink(NULL, NULL);
    CHECK(warnings == 1);
    CHECK(tfc_function_tracing_count(f) == 6);
    CHECK(tfc_tensor_is_symbolic(escaped));
    CHECK(tfc_emit(ctx, "Neg", &escaped, 1, NULL, 0, &st) == NULL);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(escaped);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* Gradients inside a function traced with an unknown batch dim use symbolic shapes (Shape,
 * BroadcastGradientArgs, Size): f(x [?,3], b [3]) = d/d(x, b) of mean(x * b + b) and sum over axis 0. */
static int fn_grad_unknown(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                           tfc_status *st) {
    tfc_tape *t = tfc_tape_new(c, false, false, st);
    if (!t) return -1;
    tfc_tape_watch(t, in[0]);
    tfc_tape_watch(t, in[1]);
    tfc_tensor *ax = tfc_vec_i32((int32_t[]){0, 1}, 2, st), *ax0 = tfc_scalar_i32(0, st);
    tfc_scope_track(c, ax, st);
    tfc_scope_track(c, ax0, st);
    tfc_tensor *m = op2("Mul", in[0], in[1], st), *a = m ? op2("AddV2", m, in[1], st) : NULL;
    tfc_tensor *s0 = a ? tfc_emit(c, "Sum", (tfc_tensor *[]){a, ax0}, 2, NULL, 0, st) : NULL;
    tfc_tensor *sq = s0 ? op2("Mul", s0, s0, st) : NULL;
    tfc_tensor *y = sq ? tfc_emit(c, "Mean", (tfc_tensor *[]){sq, ax0}, 2, NULL, 0, st) : NULL;
    bool ok = y && tfc_tape_gradient(t, y, in, 2, NULL, 0, TFC_UNCONNECTED_ZERO, out, st);
    tfc_tape_free(t);
    return ok ? 2 : -1;
}

static void test_gradients_unknown_dims(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    /* BroadcastGradientArgs([2,3,1], [3,4]) = ([2], [0]) as TensorFlow's */
    tfc_tensor *s0 = tfc_vec_i32((int32_t[]){2, 3, 1}, 3, &st), *s1 = tfc_vec_i32((int32_t[]){3, 4}, 2, &st), *r[2];
    tfc_scope_track(ctx, s0, &st);
    tfc_scope_track(ctx, s1, &st);
    REQUIRE(tfc_execute(ctx, "BroadcastGradientArgs", (tfc_tensor *[]){s0, s1}, 2, NULL, 0, r, 2, &st) == 2);
    CHECK(tfc_tensor_num_elements(r[0]) == 1 && at(r[0], 0) == 2);
    CHECK(tfc_tensor_num_elements(r[1]) == 1 && at(r[1], 0) == 0);
    tfc_tensor_spec sig[2] = {{TFC_FLOAT, {2, {-1, 3}}}, {TFC_FLOAT, {1, {3}}}};
    tfc_function *f = tfc_function_new(ctx, fn_grad_unknown, NULL,
                                       &(tfc_function_opts){.input_signature = sig, .n_input_signature = 2}, &st);
    REQUIRE(f);
    tfc_tensor *b = tfc_vec_f32((float[]){0.5f, -1.f, 2.f}, 3, &st), *out[2], *ref[2];
    tfc_scope_track(ctx, b, &st);
    for (int64_t r = 1; r <= 4; r += 3) {
        tfc_tensor *x = mat(r, 3, 0.2f);
        tfc_scope_track(ctx, x, &st);
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, b}, 2, out, 2, &st) == 2);
        CHECK_OK(&st);
        CHECK(fn_grad_unknown(ctx, (tfc_tensor *[]){x, b}, 2, ref, 2, NULL, &st) == 2);
        CHECK_OK(&st);
        check_same(out[0], ref[0]);
        check_same(out[1], ref[1]);
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, NULL, 0, &st);
    REQUIRE(cf);
    tfc_gfunc *g = tfc_flib_find(ctx->flib, tfc_concrete_function_name(cf));
    int bga = 0;
    for (int i = 0; g && i < g->body->n_nodes; i++) bga += !strcmp(g->body->nodes[i]->op->def->name, "BroadcastGradientArgs");
    CHECK(bga >= 1);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_values_and_retracing();
    test_reduce_retracing_and_signature();
    test_captures_and_variables();
    test_failed_trace();
    test_gradients_through_call();
    test_tape_inside_function();
    test_nested_function();
    test_escape_and_warning();
    test_gradients_unknown_dims();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
