/* The graph executor's parallel run and the memory planner: independent branches run over the pool give the
 * sequential run's values exactly, an error in one branch stops the run and comes back (no leak), control flow
 * inside a parallel run works, the inter-op setting switches parallel runs off, and the planner's in-place
 * writes never touch a value that is still read later (values checked against eager execution), with exact
 * peak and buffer counts for a small graph. */
#include <math.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "eager/context_internal.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "tfc_test.h"

#define BRANCHES 8
#define N 96

static tfc_ctx *ctx;

static tfc_tensor *mat(int64_t r, int64_t c, float base) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){r, c}, 2, &st);
    REQUIRE(t);
    float *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < r * c; i++) d[i] = base + 0.01f * (float)(i % 13) - 0.02f * (float)(i % 5);
    tfc_scope_track(ctx, t, &st);
    return t;
}

static tfc_tensor *op1(tfc_ctx *c, const char *name, tfc_tensor *a, tfc_status *st) {
    return tfc_emit(c, name, &a, 1, NULL, 0, st);
}
static tfc_tensor *op2(tfc_ctx *c, const char *name, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return tfc_emit(c, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, st);
}

static const tfc_exec *exec_of(tfc_concrete_function *cf) {
    tfc_gfunc *g = tfc_flib_find(ctx->flib, tfc_concrete_function_name(cf));
    REQUIRE(g && g->runtime);
    return g->runtime;
}

static void check_equal(const tfc_tensor *a, const tfc_tensor *b) {
    REQUIRE(a && b);
    REQUIRE(tfc_tensor_num_elements(a) == tfc_tensor_num_elements(b));
    const float *x = tfc_tensor_data(a), *y = tfc_tensor_data(b);
    int bad = 0;
    for (int64_t i = 0; i < tfc_tensor_num_elements(a); i++) bad += x[i] != y[i];
    CHECK(bad == 0);
}

static void check_near(const tfc_tensor *a, const tfc_tensor *b, double tol) {
    REQUIRE(a && b);
    REQUIRE(tfc_tensor_num_elements(a) == tfc_tensor_num_elements(b));
    for (int64_t i = 0; i < tfc_tensor_num_elements(a); i++)
        CHECK_NEAR(tfc_tensor_get_f64(a, i), tfc_tensor_get_f64(b, i), tol);
}

/* in: x [N, N], w [BRANCHES, N, N] as BRANCHES inputs. out[0] = sum_i tanh(x w_i) (AddN), out[1] = branch 0,
 * out[2] = branch BRANCHES-1. */
static int fn_branches(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                       tfc_status *st) {
    tfc_tensor *br[BRANCHES];
    for (int i = 0; i < BRANCHES; i++) {
        tfc_tensor *m = op2(c, "MatMul", in[0], in[1 + i], st);
        if (!m || !(br[i] = op1(c, "Tanh", m, st))) return -1;
    }
    tfc_tensor *sum = tfc_emit(c, "AddN", br, BRANCHES, NULL, 0, st);
    if (!sum) return -1;
    out[0] = sum;
    out[1] = br[0];
    out[2] = br[BRANCHES - 1];
    return 3;
}

static void test_parallel_matches_sequential(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *in[1 + BRANCHES], *par[3], *seq[3], *ref[3];
    in[0] = mat(N, N, 0.1f);
    for (int i = 0; i < BRANCHES; i++) in[1 + i] = mat(N, N, 0.05f * (float)(i - 3));
    tfc_function *f = tfc_function_new(ctx, fn_branches, NULL, &(tfc_function_opts){.name = "branches"}, &st);
    REQUIRE(f);
    CHECK(tfc_function_call(f, in, 1 + BRANCHES, par, 3, &st) == 3);
    CHECK_OK(&st);
    tfc_tensor_spec specs[1 + BRANCHES];
    for (int i = 0; i <= BRANCHES; i++) specs[i] = (tfc_tensor_spec){TFC_FLOAT, {2, {N, N}}};
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, specs, 1 + BRANCHES, &st);
    REQUIRE(cf);
    CHECK(tfc_exec_is_parallel(exec_of(cf)));
    CHECK(fn_branches(ctx, in, 1 + BRANCHES, ref, 3, NULL, &st) == 3);
    for (int o = 0; o < 3; o++) check_near(par[o], ref[o], 1e-5);
    /* repeated parallel runs and sequential runs (inter-op 1) give the same bits */
    for (int rep = 0; rep < 20; rep++) {
        tfc_tensor *again[3];
        CHECK(tfc_function_call(f, in, 1 + BRANCHES, again, 3, &st) == 3);
        for (int o = 0; o < 3; o++) check_equal(par[o], again[o]);
    }
    tfc_ctx_set_inter_op_parallelism_threads(ctx, 1);
    CHECK(tfc_ctx_get_inter_op_parallelism_threads(ctx) == 1);
    CHECK(tfc_function_call(f, in, 1 + BRANCHES, seq, 3, &st) == 3);
    for (int o = 0; o < 3; o++) check_equal(par[o], seq[o]);
    tfc_ctx_set_inter_op_parallelism_threads(ctx, 2);
    CHECK(tfc_function_call(f, in, 1 + BRANCHES, seq, 3, &st) == 3);
    for (int o = 0; o < 3; o++) check_equal(par[o], seq[o]);
    tfc_ctx_set_inter_op_parallelism_threads(ctx, -4);
    CHECK(tfc_ctx_get_inter_op_parallelism_threads(ctx) == 0);
    /* the plan: 8 products, 8 tanh (in place of their product), AddN; values [N, N] float32 */
    tfc_memory_plan mp;
    REQUIRE(tfc_concrete_function_memory_plan(cf, &mp, &st));
    CHECK(mp.n_values == 2 * BRANCHES + 1);
    CHECK(mp.n_inplace == BRANCHES);
    CHECK(mp.n_unknown == 0);
    const int64_t v = N * N * 4;
    /* in run order (args first, then each branch's MatMul, Tanh): the 8 branch results live until AddN */
    CHECK(mp.peak_bytes >= (BRANCHES + 1) * v && mp.peak_bytes <= (BRANCHES + 2) * v);
    CHECK(mp.n_buffers >= BRANCHES + 1 && mp.buffer_bytes == mp.n_buffers * v);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* A light chain stays sequential (the cost estimate): 50 AddV2 on [4, 4]. */
static int fn_chain(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    tfc_tensor *x = in[0];
    for (int i = 0; i < 50 && x; i++) x = op2(c, "AddV2", x, in[1], st);
    out[0] = x;
    return x ? 1 : -1;
}

static void test_light_graph_stays_sequential(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_chain, NULL, NULL, &st);
    REQUIRE(f);
    tfc_tensor *in[2] = {mat(4, 4, 1.f), mat(4, 4, 0.5f)}, *out[1];
    CHECK(tfc_function_call(f, in, 2, out, 1, &st) == 1);
    CHECK_NEAR(tfc_tensor_get_f64(out[0], 0), tfc_tensor_get_f64(in[0], 0) + 50 * tfc_tensor_get_f64(in[1], 0), 1e-4);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(
        f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {4, 4}}}, {TFC_FLOAT, {2, {4, 4}}}}, 2, &st);
    REQUIRE(cf);
    CHECK(!tfc_exec_is_parallel(exec_of(cf)));
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* Branches as fn_branches plus a gather with indices fed by the caller: out-of-range indices fail in one
 * branch while the products run in others. user: how many gathers (1 or 2 failing branches). */
static int fn_failing(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                      tfc_status *st) {
    const int gathers = *(const int *)user;
    tfc_tensor *acc = NULL;
    for (int i = 0; i < 4; i++) {
        tfc_tensor *m = op2(c, "MatMul", in[0], in[1 + i], st);
        if (!m || !(acc = acc ? op2(c, "AddV2", acc, m, st) : m)) return -1;
    }
    tfc_tensor *axis = tfc_scalar_i32(0, st);
    if (!axis || !tfc_scope_track(c, axis, st)) return -1;
    for (int gi = 0; gi < gathers; gi++) {
        tfc_tensor *g = tfc_emit(c, "GatherV2", (tfc_tensor *[]){in[1 + gi], in[5], axis}, 3, NULL, 0, st);
        if (!g || !(acc = op2(c, "AddV2", acc, g, st))) return -1;
    }
    out[0] = acc;
    return 1;
}

static void test_error_in_branch(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *in[6];
    in[0] = mat(N, N, 0.1f);
    for (int i = 0; i < 4; i++) in[1 + i] = mat(N, N, 0.02f * (float)i);
    int32_t good[N], bad[N];
    for (int i = 0; i < N; i++) good[i] = bad[i] = N - 1 - i;
    bad[7] = N + 3;
    tfc_tensor *gi = tfc_vec_i32(good, N, &st), *bi = tfc_vec_i32(bad, N, &st);
    REQUIRE(gi && bi);
    tfc_scope_track(ctx, gi, &st);
    tfc_scope_track(ctx, bi, &st);
    for (int gathers = 1; gathers <= 2; gathers++) {
        tfc_function *f = tfc_function_new(ctx, fn_failing, &gathers, NULL, &st);
        REQUIRE(f);
        tfc_tensor *out[1], *ref[1] = {NULL};
        in[5] = gi;
        CHECK(tfc_function_call(f, in, 6, out, 1, &st) == 1);
        CHECK_OK(&st);
        CHECK(fn_failing(ctx, in, 6, ref, 1, &gathers, &st) == 1);
        check_near(out[0], ref[0], 1e-4);
        tfc_gfunc *g = NULL;
        for (int i = 0; i < ((tfc_flib *)ctx->flib)->n && !g; i++) {
            tfc_gfunc *c = ((tfc_flib *)ctx->flib)->fns[i];
            if (c->runtime && strstr(c->name, "__inference_function") && c->n_args == 6) g = c;
        }
        REQUIRE(g);
        CHECK(tfc_exec_is_parallel(g->runtime));
        const int64_t live = tfc_tensor_live_count();
        in[5] = bi;
        for (int rep = 0; rep < 10; rep++) {
            tfc_status est = TFC_STATUS_INIT;
            CHECK(tfc_function_call(f, in, 6, out, 1, &est) == -1);
            CHECK(est.code == TFC_INVALID_ARGUMENT);
            CHECK(strstr(est.msg, "GatherV2") != NULL);
            CHECK(strstr(est.msg, "99") != NULL); /* the offending index */
        }
        CHECK(tfc_tensor_live_count() == live);
        /* the function still runs after failed runs */
        in[5] = gi;
        CHECK(tfc_function_call(f, in, 6, out, 1, &st) == 1);
        check_near(out[0], ref[0], 1e-4);
        tfc_function_free(f);
    }
    tfc_scope_end(ctx);
}

/* in-place candidates whose inputs are still read later, are results, or are arguments:
 * a = x * y; b = -a; c = exp(b); d = c + a; returns (d, a, exp(x)) */
static int fn_alias(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    tfc_tensor *a, *b, *e, *d, *ex;
    if (!(a = op2(c, "Mul", in[0], in[1], st)) || !(b = op1(c, "Neg", a, st)) || !(e = op1(c, "Exp", b, st)) ||
        !(d = op2(c, "AddV2", e, a, st)) || !(ex = op1(c, "Exp", in[0], st)))
        return -1;
    out[0] = d;
    out[1] = a;
    out[2] = ex;
    return 3;
}

/* one result only: a = x * y; b = -a; c = exp(b); d = c + a */
static int fn_alias1(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                     tfc_status *st) {
    tfc_tensor *o[3];
    if (fn_alias(c, in, n, o, 3, user, st) != 3) return -1;
    out[0] = o[0];
    return 1;
}

static void test_planner_never_aliases_live(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = mat(16, 16, 0.3f), *y = mat(16, 16, -0.2f), *xc = mat(16, 16, 0.3f), *out[3], *ref[3];
    tfc_tensor *in[2] = {x, y};
    tfc_function *f = tfc_function_new(ctx, fn_alias, NULL, NULL, &st);
    tfc_function *f1 = tfc_function_new(ctx, fn_alias1, NULL, NULL, &st);
    REQUIRE(f && f1);
    CHECK(fn_alias(ctx, in, 2, ref, 3, NULL, &st) == 3);
    for (int rep = 0; rep < 3; rep++) {
        CHECK(tfc_function_call(f, in, 2, out, 3, &st) == 3);
        CHECK_OK(&st);
        for (int o = 0; o < 3; o++) check_near(out[o], ref[o], 1e-6);
        check_equal(x, xc); /* the argument Exp read is untouched */
        CHECK(tfc_function_call(f1, in, 2, out, 1, &st) == 1);
        check_near(out[0], ref[0], 1e-6);
    }
    const tfc_tensor_spec sp[2] = {{TFC_FLOAT, {2, {16, 16}}}, {TFC_FLOAT, {2, {16, 16}}}};
    tfc_memory_plan mp;
    const int64_t v = 16 * 16 * 4;
    /* f1: Mul a (1 buffer), Neg b (2), Exp into b's (a still read by AddV2), AddV2 into c's; 2 in place, peak 2 */
    REQUIRE(tfc_concrete_function_memory_plan(tfc_function_get_concrete_function(f1, sp, 2, &st), &mp, &st));
    CHECK(mp.n_values == 4);
    CHECK(mp.n_inplace == 2);
    CHECK(mp.n_buffers == 2);
    CHECK(mp.peak_bytes == 2 * v);
    CHECK(mp.buffer_bytes == 2 * v);
    /* f: a is a result (lives to the end), Exp(x) reads an argument: only Exp(b) and AddV2 go in place, and
     * Exp(x) needs a third buffer while a and d live */
    REQUIRE(tfc_concrete_function_memory_plan(tfc_function_get_concrete_function(f, sp, 2, &st), &mp, &st));
    CHECK(mp.n_values == 5);
    CHECK(mp.n_inplace == 2);
    CHECK(mp.n_buffers == 3);
    CHECK(mp.peak_bytes == 3 * v);
    tfc_function_free(f);
    tfc_function_free(f1);
    tfc_scope_end(ctx);
}

/* In a parallel run the sequential order's last reader may run first: a = x w; p_i = a w_i (4 branches);
 * t = tanh(a) is planned in place of a (last reader in run order) but must wait until no product still reads
 * a. Returns (sum p_i, t). */
static int fn_race(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    tfc_tensor *a = op2(c, "MatMul", in[0], in[1], st), *p[4];
    if (!a) return -1;
    for (int i = 0; i < 4; i++)
        if (!(p[i] = op2(c, "MatMul", a, in[2 + i], st))) return -1;
    tfc_tensor *t = op1(c, "Tanh", a, st);
    if (!t || !(out[0] = tfc_emit(c, "AddN", p, 4, NULL, 0, st))) return -1;
    out[1] = t;
    return 2;
}

static void test_inplace_waits_for_parallel_readers(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *in[6], *out[2], *ref[2] = {NULL, NULL};
    for (int i = 0; i < 6; i++) in[i] = mat(N, N, 0.03f * (float)(i - 2));
    tfc_function *f = tfc_function_new(ctx, fn_race, NULL, NULL, &st);
    REQUIRE(f);
    CHECK(fn_race(ctx, in, 6, ref, 2, NULL, &st) == 2);
    for (int rep = 0; rep < 30; rep++) {
        CHECK(tfc_function_call(f, in, 6, out, 2, &st) == 2);
        CHECK_OK(&st);
        check_near(out[0], ref[0], 1e-4);
        check_near(out[1], ref[1], 1e-6);
    }
    tfc_tensor_spec sp[6];
    for (int i = 0; i < 6; i++) sp[i] = (tfc_tensor_spec){TFC_FLOAT, {2, {N, N}}};
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, sp, 6, &st);
    REQUIRE(cf);
    CHECK(tfc_exec_is_parallel(exec_of(cf)));
    tfc_memory_plan mp;
    REQUIRE(tfc_concrete_function_memory_plan(cf, &mp, &st));
    CHECK(mp.n_inplace == 1);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* Control flow in a parallel run: branches as above, one of them through tf.cond, another through a
 * while loop (calls run on the calling thread). */
static int cf_true(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    return (out[0] = op2(c, "MatMul", in[0], in[1], st)) ? 1 : -1;
}
static int cf_false(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    return (out[0] = op2(c, "Sub", in[0], in[1], st)) ? 1 : -1;
}
static int wl_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    tfc_tensor *lim = tfc_scalar_i32(3, st);
    if (!lim || !tfc_scope_track(c, lim, st)) return -1;
    return (out[0] = op2(c, "Less", in[0], lim, st)) ? 1 : -1;
}
static int wl_body(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    tfc_tensor *one = tfc_scalar_i32(1, st);
    if (!one || !tfc_scope_track(c, one, st)) return -1;
    tfc_tensor *m = op2(c, "MatMul", in[1], in[2], st), *t = m ? op1(c, "Tanh", m, st) : NULL;
    if (!t || !(out[0] = op2(c, "AddV2", in[0], one, st))) return -1;
    out[1] = t;
    out[2] = in[2];
    return 3;
}
static int fn_control(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                      tfc_status *st) {
    tfc_tensor *r[4], *pred = tfc_scalar_i32(1, st), *i0 = tfc_scalar_i32(0, st), *w[3];
    if (!pred || !i0 || !tfc_scope_track(c, pred, st) || !tfc_scope_track(c, i0, st)) return -1;
    if (tfc_cond(c, pred, cf_true, cf_false, NULL, (tfc_tensor *[]){in[0], in[1]}, 2, &r[0], 1, st) != 1) return -1;
    if (tfc_while_loop(c, wl_cond, wl_body, NULL, (tfc_tensor *[]){i0, in[0], in[2]}, 3, w, NULL, st) != 3)
        return -1;
    r[1] = w[1];
    if (!(r[2] = op2(c, "MatMul", in[0], in[3], st)) || !(r[3] = op2(c, "MatMul", in[1], in[2], st))) return -1;
    return (out[0] = tfc_emit(c, "AddN", r, 4, NULL, 0, st)) ? 1 : -1;
}

static void test_control_flow_parallel(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *in[4] = {mat(N, N, 0.1f), mat(N, N, -0.05f), mat(N, N, 0.02f), mat(N, N, 0.07f)}, *out[1], *seq[1];
    tfc_function *f = tfc_function_new(ctx, fn_control, NULL, NULL, &st);
    REQUIRE(f);
    CHECK(tfc_function_call(f, in, 4, out, 1, &st) == 1);
    CHECK_OK(&st);
    tfc_tensor_spec sp[4];
    for (int i = 0; i < 4; i++) sp[i] = (tfc_tensor_spec){TFC_FLOAT, {2, {N, N}}};
    CHECK(tfc_exec_is_parallel(exec_of(tfc_function_get_concrete_function(f, sp, 4, &st))));
    tfc_ctx_set_inter_op_parallelism_threads(ctx, 1);
    CHECK(tfc_function_call(f, in, 4, seq, 1, &st) == 1);
    tfc_ctx_set_inter_op_parallelism_threads(ctx, 0);
    check_equal(out[0], seq[0]);
    tfc_tensor *ref[1];
    CHECK(fn_control(ctx, in, 4, ref, 1, NULL, &st) == 1);
    CHECK_OK(&st);
    check_near(out[0], ref[0], 1e-4);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* Allocation failures at every point of instantiation (plan, successor lists, memory plan) and of parallel
 * runs: each call succeeds with the right values or fails with RESOURCE_EXHAUSTED, and no tensor leaks. */
static void test_allocation_faults(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *in[1 + BRANCHES], *ref[3] = {NULL, NULL, NULL};
    in[0] = mat(N, N, 0.1f);
    for (int i = 0; i < BRANCHES; i++) in[1 + i] = mat(N, N, 0.05f * (float)(i - 3));
    CHECK(fn_branches(ctx, in, 1 + BRANCHES, ref, 3, NULL, &st) == 3);
    const int64_t live = tfc_tensor_live_count();
    int ok_runs = 0, failed = 0;
    for (int64_t n = 0; n < 20000; n += n < 300 ? 1 : 1 + n / 50) {
        REQUIRE(tfc_scope_begin(ctx, &st));
        tfc_function *f = tfc_function_new(ctx, fn_branches, NULL, NULL, &st);
        REQUIRE(f);
        tfc_tensor *out[3];
        /* the trace itself allocates: fail only within the run's instantiation and run */
        tfc_tensor_spec sp[1 + BRANCHES];
        for (int i = 0; i <= BRANCHES; i++) sp[i] = (tfc_tensor_spec){TFC_FLOAT, {2, {N, N}}};
        REQUIRE(tfc_function_get_concrete_function(f, sp, 1 + BRANCHES, &st));
        tfc_alloc_fail_once_after(n);
        tfc_status cst = TFC_STATUS_INIT;
        int got = tfc_function_call(f, in, 1 + BRANCHES, out, 3, &cst);
        const bool hit = tfc_alloc_failures() > 0;
        tfc_alloc_fail_once_after(-1);
        if (got == 3) {
            ok_runs++;
            for (int o = 0; o < 3; o++) check_near(out[o], ref[o], 1e-5);
        } else {
            failed++;
            CHECK(hit);
            CHECK(cst.code == TFC_RESOURCE_EXHAUSTED);
        }
        tfc_function_free(f);
        tfc_scope_end(ctx); /* the outputs */
        CHECK(tfc_tensor_live_count() == live);
        if (!hit) break; /* past the last allocation */
    }
    CHECK(failed > 10);
    CHECK(ok_runs >= 1);
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 4}, &st);
    REQUIRE(ctx);
    test_parallel_matches_sequential();
    test_light_graph_stays_sequential();
    test_error_in_branch();
    test_planner_never_aliases_live();
    test_inplace_waits_for_parallel_readers();
    test_control_flow_parallel();
    test_allocation_faults();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
