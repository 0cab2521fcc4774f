/* cond / switch_case / while_loop with C callbacks, eagerly and traced into If / Case / While nodes: values
 * against plain C, captures, stateful branches, shape invariants and their errors, maximum_iterations, nesting,
 * and gradients of cond inside and through traced functions. */
#include "eager/context_internal.h"
#include "graph/graph.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static float at(const tfc_tensor *t, int64_t i) { return (float)tfc_tensor_get_f64(t, i); }
static tfc_tensor *op2(const char *name, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return tfc_emit(ctx, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, st);
}
static tfc_tensor *tracked(tfc_tensor *t) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(t && tfc_scope_track(ctx, t, &st));
    return t;
}
static tfc_tensor *scal(float v) { return tracked(tfc_scalar_f32(v, &(tfc_status){0})); }

static int count_op(tfc_concrete_function *cf, const char *op) {
    tfc_gfunc *g = tfc_flib_find(ctx->flib, tfc_concrete_function_name(cf));
    int n = 0;
    for (int i = 0; g && i < g->body->n_nodes; i++) n += !strcmp(g->body->nodes[i]->op->def->name, op);
    return n;
}

/* ---- cond ---- */
static tfc_tensor *big; /* 200 elements: captured as an input, not a Const */

static int br_double(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("Mul", in[0], scal(2), st);
    return out[0] ? 1 : -1;
}
static int br_minus_big(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *s = tfc_emit(c, "Sum", (tfc_tensor *[]){big, tracked(tfc_scalar_i32(0, st))}, 2, NULL, 0, st);
    out[0] = s ? op2("Sub", in[0], s, st) : NULL;
    return out[0] ? 1 : -1;
}
static int fn_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *p = op2("Greater", in[1], scal(0), st);
    return p ? tfc_cond(c, p, br_double, br_minus_big, NULL, in, 1, out, m, st) : -1;
}

static void test_cond(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    big = tracked(tfc_tensor_new(TFC_FLOAT, (int64_t[]){200}, 1, &st));
    float *d = tfc_tensor_mutable_data(big);
    for (int i = 0; i < 200; i++) d[i] = 0.5f;
    tfc_tensor *x = tracked(tfc_vec_f32((float[]){1, -2, 3}, 3, &st)), *out[1];
    tfc_function *f = tfc_function_new(ctx, fn_cond, NULL, &(tfc_function_opts){.name = "cond_fn"}, &st);
    for (int k = 0; k < 2; k++) {
        tfc_tensor *p = scal(k ? -1.f : 1.f);
        /* eager */
        CHECK(fn_cond(ctx, (tfc_tensor *[]){x, p}, 2, out, 1, NULL, &st) == 1);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0], 1), k ? -2 - 100 : -4, 1e-5);
        /* traced */
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, p}, 2, out, 1, &st) == 1);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0], 0), k ? 1 - 100 : 2, 1e-5);
        CHECK_NEAR(at(out[0], 2), k ? 3 - 100 : 6, 1e-5);
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(
        f, (tfc_tensor_spec[]){{TFC_FLOAT, {1, {3}}}, {TFC_FLOAT, {0}}}, 2, &st);
    REQUIRE(cf);
    CHECK(count_op(cf, "StatelessIf") == 1);
    CHECK(tfc_concrete_function_num_captures(cf) == 1); /* big */
    tfc_tensor_spec os = tfc_concrete_function_output_spec(cf, 0);
    CHECK(os.shape.rank == 1 && os.shape.dims[0] == 3);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* A branch that assigns a variable: only the branch taken runs it (a stateful If). */
static tfc_variable *var;
static int br_assign(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    if (!tfc_variable_assign_add(c, var, in[0], st)) return -1;
    out[0] = tfc_variable_read(c, var, st);
    return out[0] ? 1 : -1;
}
static int br_read(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_variable_read(c, var, st);
    return out[0] ? 1 : -1;
}
static int fn_cond_var(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return tfc_cond(c, in[1], br_assign, br_read, NULL, in, 1, out, m, st);
}

static void test_cond_stateful(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    var = tfc_variable_new(ctx, scal(10), true, "v", &st);
    tfc_function *f = tfc_function_new(ctx, fn_cond_var, NULL, NULL, &st);
    tfc_tensor *out[1], *t = tracked(tfc_scalar_bool(true, &st)), *fl = tracked(tfc_scalar_bool(false, &st));
    CHECK(tfc_function_call(f, (tfc_tensor *[]){scal(5), t}, 2, out, 1, &st) == 1);
    CHECK_NEAR(at(out[0], 0), 15, 0);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){scal(5), fl}, 2, out, 1, &st) == 1);
    CHECK_NEAR(at(out[0], 0), 15, 0);
    CHECK(tfc_function_call(f, (tfc_tensor *[]){scal(1), t}, 2, out, 1, &st) == 1);
    CHECK_NEAR(at(out[0], 0), 16, 0);
    CHECK_NEAR(at(tfc_variable_value(var), 0), 16, 0);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(
        f, (tfc_tensor_spec[]){{TFC_FLOAT, {0}}, {TFC_BOOL, {0}}}, 2, &st);
    REQUIRE(cf);
    CHECK(count_op(cf, "If") == 1);
    tfc_function_free(f);
    tfc_variable_free(var);
    tfc_scope_end(ctx);
}

/* ---- switch_case ---- */
static int b0(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_emit(c, "Neg", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    return out[0] ? 1 : -1;
}
static int b1(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_emit(c, "Square", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    return out[0] ? 1 : -1;
}
static int b2(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("AddV2", in[0], scal(100), st);
    return out[0] ? 1 : -1;
}
static int fn_case(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    const tfc_function_fn br[3] = {b0, b1, b2};
    return tfc_case(c, in[1], br, 3, NULL, in, 1, out, m, st);
}

static void test_case(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_case, NULL, NULL, &st);
    const float want[5] = {-3, 9, 103, 103, 103}; /* index 3 and -1 run the last branch */
    const int idx[5] = {0, 1, 2, 3, -1};
    tfc_tensor *out[1];
    for (int k = 0; k < 5; k++) {
        tfc_tensor *i = tracked(tfc_scalar_i32(idx[k], &st));
        CHECK(tfc_function_call(f, (tfc_tensor *[]){scal(3), i}, 2, out, 1, &st) == 1);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0], 0), want[k], 0);
        CHECK(fn_case(ctx, (tfc_tensor *[]){scal(3), i}, 2, out, 1, NULL, &st) == 1);
        CHECK_NEAR(at(out[0], 0), want[k], 0);
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* ---- while_loop: (i, acc) -> (i + 1, acc + i * x) while i < n ---- */
static int w_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("Less", in[0], (tfc_tensor *)u, st);
    return out[0] ? 1 : -1;
}
static int w_body(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *one = tracked(tfc_scalar_i32(1, st));
    tfc_tensor *fi = tfc_emit(c, "Cast", (tfc_tensor *const *)&in[0], 1, &TFC_ATTR_T("DstT", TFC_FLOAT), 1, st);
    tfc_tensor *t = fi ? op2("Mul", fi, in[2], st) : NULL;
    out[0] = op2("AddV2", in[0], one, st);
    out[1] = t ? op2("AddV2", in[1], t, st) : NULL;
    out[2] = in[2];
    return out[0] && out[1] ? 3 : -1;
}
static int fn_while(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[3] = {tracked(tfc_scalar_i32(0, st)), tfc_emit(c, "ZerosLike", (tfc_tensor *const *)&in[0], 1, NULL, 0, st),
                        in[0]};
    tfc_while_opts *o = u, *w = o ? o : &(tfc_while_opts){0};
    if (!v[1]) return -1;
    int r = tfc_while_loop(c, w_cond, w_body, in[1], v, 3, out, w, st);
    return r < 0 ? -1 : 2;
}

static void test_while(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_while, NULL, NULL, &st);
    tfc_tensor *x = tracked(tfc_vec_f32((float[]){1, 0.5f}, 2, &st)), *out[3];
    for (int n = 0; n <= 5; n += 5) {
        tfc_tensor *nt = tracked(tfc_scalar_i32(n, &st));
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, nt}, 2, out, 3, &st) == 2);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0], 0), n, 0);
        CHECK_NEAR(at(out[1], 0), n * (n - 1) / 2, 1e-6);
        CHECK_NEAR(at(out[1], 1), 0.5 * n * (n - 1) / 2, 1e-6);
        CHECK(fn_while(ctx, (tfc_tensor *[]){x, nt}, 2, out, 3, NULL, &st) == 2);
        CHECK_NEAR(at(out[1], 0), n * (n - 1) / 2, 1e-6);
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(
        f, (tfc_tensor_spec[]){{TFC_FLOAT, {1, {2}}}, {TFC_INT32, {0}}}, 2, &st);
    REQUIRE(cf);
    CHECK(count_op(cf, "StatelessWhile") == 1);
    tfc_function_free(f);

    /* maximum_iterations stops at 3 of 10, eagerly and traced */
    tfc_while_opts o = {.maximum_iterations = 3, .has_maximum_iterations = true};
    f = tfc_function_new(ctx, fn_while, &o, NULL, &st);
    tfc_tensor *ten = tracked(tfc_scalar_i32(10, &st));
    CHECK(tfc_function_call(f, (tfc_tensor *[]){x, ten}, 2, out, 3, &st) == 2);
    CHECK_OK(&st);
    CHECK_NEAR(at(out[0], 0), 3, 0);
    CHECK_NEAR(at(out[1], 0), 3, 0);
    CHECK(fn_while(ctx, (tfc_tensor *[]){x, ten}, 2, out, 3, &o, &st) == 2);
    CHECK_NEAR(at(out[0], 0), 3, 0);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* A body that grows a loop variable: TensorFlow's error naming it, unless the invariant allows it. */
static int g_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *sz = tfc_emit(c, "Size", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    out[0] = sz ? op2("Less", sz, tracked(tfc_scalar_i32(8, st)), st) : NULL;
    return out[0] ? 1 : -1;
}
static int g_body(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_emit(c, "ConcatV2", (tfc_tensor *[]){in[0], in[0], tracked(tfc_scalar_i32(0, st))}, 3, NULL, 0, st);
    return out[0] ? 1 : -1;
}
static int g_cast(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_emit(c, "Cast", (tfc_tensor *const *)&in[0], 1, &TFC_ATTR_T("DstT", TFC_INT32), 1, st);
    return out[0] ? 1 : -1;
}
static int fn_grow(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return tfc_while_loop(c, g_cond, u == (void *)1 ? g_cast : g_body, NULL, in, 1, out,
                          &(tfc_while_opts){.names = (const char *[]){"x"}, .shape_invariants = u == (void *)2 ?
                                            &(tfc_shape){1, {-1}} : NULL}, st);
}

static void test_while_invariants(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = tracked(tfc_vec_f32((float[]){1, 2}, 2, &st)), *out[1];
    tfc_function *f = tfc_function_new(ctx, fn_grow, NULL, NULL, &st);
    CHECK(tfc_function_call(f, &x, 1, out, 1, &st) == -1);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Input tensor 'x' enters the loop with shape (2,), but has shape (4,) after one iteration") != NULL);
    CHECK(fn_grow(ctx, &x, 1, out, 1, NULL, &st) == -1); /* eagerly too */
    CHECK(strstr(st.msg, "'x' enters the loop with shape (2,)") != NULL);
    tfc_function_free(f);
    f = tfc_function_new(ctx, fn_grow, (void *)1, NULL, &st);
    CHECK(tfc_function_call(f, &x, 1, out, 1, &st) == -1);
    CHECK(strstr(st.msg, "Loop var x enters the loop with type <dtype: 'float32'>, but has type <dtype: 'int32'>") != NULL);
    tfc_function_free(f);
    f = tfc_function_new(ctx, fn_grow, (void *)2, NULL, &st);
    CHECK(tfc_function_call(f, &x, 1, out, 1, &st) == 1);
    CHECK_OK(&st);
    CHECK(tfc_tensor_num_elements(out[0]) == 8 && at(out[0], 7) == 2);
    CHECK(fn_grow(ctx, &x, 1, out, 1, (void *)2, &st) == 1);
    CHECK(tfc_tensor_num_elements(out[0]) == 8);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* ---- gradients of cond ---- */
static int gb_sq(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("Mul", in[0], in[0], st);
    return out[0] ? 1 : -1;
}
static int gb_sin(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_emit(c, "Sin", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    return out[0] ? 1 : -1;
}
static int fn_cond_grad(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tape *t = tfc_tape_new(c, false, false, st);
    tfc_tape_watch(t, in[0]);
    tfc_tensor *y[1];
    bool ok = tfc_cond(c, in[1], gb_sq, gb_sin, NULL, in, 1, y, 1, st) == 1 &&
              tfc_tape_gradient(t, y[0], in, 1, NULL, 0, TFC_UNCONNECTED_ZERO, out, st);
    tfc_tape_free(t);
    return ok ? 1 : -1;
}
static int fn_cond_only(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return tfc_cond(c, in[1], gb_sq, gb_sin, NULL, in, 1, out, m, st);
}

static void test_cond_gradients(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_cond_grad, NULL, NULL, &st);
    tfc_function *h = tfc_function_new(ctx, fn_cond_only, NULL, NULL, &st);
    tfc_tensor *x = tracked(tfc_vec_f32((float[]){0.5f, 2.f}, 2, &st)), *out[1], *g[1];
    for (int k = 0; k < 2; k++) {
        tfc_tensor *p = tracked(tfc_scalar_bool(k == 0, &st));
        /* a tape inside the function */
        CHECK(tfc_function_call(f, (tfc_tensor *[]){x, p}, 2, out, 1, &st) == 1);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0], 1), k == 0 ? 4 : cos(2.0), 1e-6);
        /* a tape around the call: the If's gradient runs in the call's gradient function */
        tfc_tape *t = tfc_tape_new(ctx, false, false, &st);
        tfc_tape_watch(t, x);
        CHECK(tfc_function_call(h, (tfc_tensor *[]){x, p}, 2, out, 1, &st) == 1);
        CHECK(tfc_tape_gradient(t, out[0], &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, g, &st));
        CHECK_OK(&st);
        REQUIRE(g[0]);
        CHECK_NEAR(at(g[0], 0), k == 0 ? 1 : cos(0.5), 1e-6);
        tfc_tape_free(t);
    }
    CHECK(tfc_function_tracing_count(f) == 1);
    tfc_function_free(f);
    tfc_function_free(h);
    tfc_scope_end(ctx);
}

/* cond inside a while body, traced */
static int n_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("Less", in[0], tracked(tfc_scalar_i32(6, st)), st);
    return out[0] ? 1 : -1;
}
static int n_odd(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("AddV2", in[0], scal(10), st);
    return out[0] ? 1 : -1;
}
static int n_even(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2("Mul", in[0], scal(2), st);
    return out[0] ? 1 : -1;
}
static int n_body(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *two = tracked(tfc_scalar_i32(2, st)), *zero = tracked(tfc_scalar_i32(0, st));
    tfc_tensor *r = op2("FloorMod", in[0], two, st), *odd = r ? op2("NotEqual", r, zero, st) : NULL;
    if (!odd || tfc_cond(c, odd, n_odd, n_even, NULL, &in[1], 1, &out[1], 1, st) != 1) return -1;
    out[0] = op2("AddV2", in[0], tracked(tfc_scalar_i32(1, st)), st);
    return out[0] ? 2 : -1;
}
static int fn_nested(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[2] = {tracked(tfc_scalar_i32(0, st)), in[0]};
    return tfc_while_loop(c, n_cond, n_body, NULL, v, 2, out, NULL, st) == 2 ? 2 : -1;
}

static void test_nested(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_nested, NULL, NULL, &st);
    tfc_tensor *out[2];
    CHECK(tfc_function_call(f, (tfc_tensor *[]){scal(1)}, 1, out, 2, &st) == 2);
    CHECK_OK(&st);
    /* i=0 even: 2; 1 odd: 12; 2: 24; 3: 34; 4: 68; 5: 78 */
    CHECK_NEAR(at(out[1], 0), 78, 0);
    CHECK(fn_nested(ctx, (tfc_tensor *[]){scal(1)}, 1, out, 2, NULL, &st) == 2);
    CHECK_NEAR(at(out[1], 0), 78, 0);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    int64_t live0 = tfc_tensor_live_count();
    test_cond();
    test_cond_stateful();
    test_case();
    test_while();
    test_while_invariants();
    test_cond_gradients();
    test_nested();
    CHECK(tfc_tensor_live_count() == live0);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
