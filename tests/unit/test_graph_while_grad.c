/* Gradients through traced while_loops (While nodes): a tape around the function call and a tape inside the
 * traced function, against the eager tape (which sees the loop's ops) and central finite differences, on random
 * float64 inputs: repeated squaring (x^(2^n)), captured tensors, maximum_iterations, a variable read in the
 * body, a loop nested in a cond branch and one nested in a loop body. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "eager/context_internal.h"
#include "graph/graph.h"
#include "tfc_test.h"

static tfc_ctx *ctx;
static tfc_variable *var;

static double at(const tfc_tensor *t) { return tfc_tensor_get_f64(t, 0); }
static tfc_tensor *op2(tfc_ctx *c, const char *name, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return a && b ? tfc_emit(c, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, st) : NULL;
}
static tfc_tensor *tracked(tfc_ctx *c, tfc_tensor *t, tfc_status *st) {
    return t && tfc_scope_track(c, t, st) ? t : NULL;
}
static tfc_tensor *f64(double v) { return tracked(ctx, tfc_scalar_f64(v, &(tfc_status){0}), &(tfc_status){0}); }
static double urand(double lo, double hi) { return lo + (hi - lo) * rand() / (double)RAND_MAX; }

/* loop (i, y) while i < limit (limit: the user tensor, int32) */
static int c_less(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = op2(c, "Less", in[0], (tfc_tensor *)u, st);
    return out[0] ? 1 : -1;
}
static tfc_tensor *inc(tfc_ctx *c, tfc_tensor *i, tfc_status *st) {
    return op2(c, "AddV2", i, tracked(c, tfc_scalar_i32(1, st), st), st);
}

/* A: (i, y) -> (i + 1, y * y): y = x^(2^n) */
static int b_sq(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = inc(c, in[0], st);
    out[1] = op2(c, "Mul", in[1], in[1], st);
    return out[0] && out[1] ? 2 : -1;
}
static int fn_sq(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[2] = {tracked(c, tfc_scalar_i32(0, st), st), in[0]}, *r[2];
    if (!v[0] || tfc_while_loop(c, c_less, b_sq, in[1], v, 2, r, NULL, st) != 2) return -1;
    out[0] = r[1];
    return 1;
}
/* the same with a tape inside the traced function: returns dy/dx */
static int fn_sq_tape(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tape *t = tfc_tape_new(c, false, false, st);
    tfc_tape_watch(t, in[0]);
    tfc_tensor *y[1] = {NULL};
    bool ok = fn_sq(c, in, n, y, 1, u, st) == 1 && tfc_tape_gradient(t, y[0], in, 1, NULL, 0, TFC_UNCONNECTED_ZERO, out, st);
    tfc_tape_free(t);
    return ok ? 1 : -1;
}

/* B: captures: (i, acc) -> (i + 1, acc * x + w) four times from acc = x; x, w from the enclosing function */
static int b_cap(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *const *xw = u;
    out[0] = inc(c, in[0], st);
    out[1] = op2(c, "AddV2", op2(c, "Mul", in[1], xw[0], st), xw[1], st);
    return out[0] && out[1] ? 2 : -1;
}
static int c_cap(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return c_less(c, in, n, out, m, tracked(c, tfc_scalar_i32(4, st), st), st);
}
static int fn_cap(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[2] = {tracked(c, tfc_scalar_i32(0, st), st), in[0]}, *r[2];
    if (!v[0] || tfc_while_loop(c, c_cap, b_cap, (void *)in, v, 2, r, NULL, st) != 2) return -1;
    out[0] = r[1];
    return 1;
}

/* C: maximum_iterations 3 of a loop to 100: (i, acc) -> (i + 1, acc + sin(acc) * w) */
static int b_sin(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *const *xw = u;
    tfc_tensor *s = tfc_emit(c, "Sin", (tfc_tensor *const *)&in[1], 1, NULL, 0, st);
    out[0] = inc(c, in[0], st);
    out[1] = op2(c, "AddV2", in[1], op2(c, "Mul", s, xw[1], st), st);
    return out[0] && out[1] ? 2 : -1;
}
static int c_100(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return c_less(c, in, n, out, m, tracked(c, tfc_scalar_i32(100, st), st), st);
}
static int fn_max(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[2] = {tracked(c, tfc_scalar_i32(0, st), st), in[0]}, *r[2];
    tfc_while_opts o = {.maximum_iterations = 3, .has_maximum_iterations = true};
    if (!v[0] || tfc_while_loop(c, c_100, b_sin, (void *)in, v, 2, r, &o, st) != 2) return -1;
    out[0] = r[1];
    return 1;
}

/* D: a variable read in the body: (i, acc) -> (i + 1, acc * v + x) three times from acc = x */
static int b_var(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *const *xw = u;
    out[0] = inc(c, in[0], st);
    out[1] = op2(c, "AddV2", op2(c, "Mul", in[1], tfc_variable_read(c, var, st), st), xw[0], st);
    return out[0] && out[1] ? 2 : -1;
}
static int c_3(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return c_less(c, in, n, out, m, tracked(c, tfc_scalar_i32(3, st), st), st);
}
static int fn_var(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[2] = {tracked(c, tfc_scalar_i32(0, st), st), in[0]}, *r[2];
    /* a traced variable read has an unknown shape: so has acc */
    tfc_while_opts o = {.shape_invariants = (tfc_shape[]){{0}, {.rank = -1}}};
    if (!v[0] || tfc_while_loop(c, c_3, b_var, (void *)in, v, 2, r, &o, st) != 2) return -1;
    out[0] = r[1];
    return 1;
}

/* E: the squaring loop (three times) in the true branch of a cond, sin in the false one */
static int br_loop(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *a[2] = {in[0], tracked(c, tfc_scalar_i32(3, st), st)};
    return a[1] ? fn_sq(c, a, 2, out, m, NULL, st) : -1;
}
static int br_sin(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    out[0] = tfc_emit(c, "Sin", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    return out[0] ? 1 : -1;
}
static int fn_in_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return tfc_cond(c, in[1], br_loop, br_sin, NULL, in, 1, out, 1, st);
}

/* F: a while loop in a while body: twice (y -> y^(2^2)) = x^16 */
static int b_outer(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *a[2] = {in[1], tracked(c, tfc_scalar_i32(2, st), st)};
    out[0] = inc(c, in[0], st);
    return out[0] && a[1] && fn_sq(c, a, 2, &out[1], 1, NULL, st) == 1 ? 2 : -1;
}
static int c_2(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    return c_less(c, in, n, out, m, tracked(c, tfc_scalar_i32(2, st), st), st);
}
static int fn_nested(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int m, void *u, tfc_status *st) {
    tfc_tensor *v[2] = {tracked(c, tfc_scalar_i32(0, st), st), in[0]}, *r[2];
    if (!v[0] || tfc_while_loop(c, c_2, b_outer, NULL, v, 2, r, NULL, st) != 2) return -1;
    out[0] = r[1];
    return 1;
}

/* Gradients of out[0] with respect to in[0..n_wrt) (and var when use_var): eagerly (traced NULL) or through a
 * call of the traced function. */
static void grads(tfc_function_fn fn, tfc_function *traced, tfc_tensor **in, int n_in, int n_wrt, bool use_var,
                  tfc_tensor **g) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tape *t = tfc_tape_new(ctx, false, false, &st);
    REQUIRE(t);
    for (int k = 0; k < n_wrt; k++) tfc_tape_watch(t, in[k]);
    if (use_var) tfc_tape_watch_variable(t, var);
    tfc_tensor *y[1] = {NULL};
    int r = traced ? tfc_function_call(traced, in, n_in, y, 1, &st) : fn(ctx, in, n_in, y, 1, NULL, &st);
    CHECK(r == 1);
    CHECK_OK(&st);
    REQUIRE(y[0]);
    CHECK(tfc_tape_gradient(t, y[0], in, n_wrt, use_var ? &var : NULL, use_var, TFC_UNCONNECTED_NONE, g, &st));
    CHECK_OK(&st);
    tfc_tape_free(t);
}

static double eval(tfc_function_fn fn, tfc_tensor **in, int n_in) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *y[1] = {NULL};
    CHECK(fn(ctx, in, n_in, y, 1, NULL, &st) == 1);
    CHECK_OK(&st);
    return st.code == TFC_OK && y[0] ? at(y[0]) : NAN;
}

/* The traced gradient (tape around the call) against the eager tape's and central differences. */
static void check(const char *what, tfc_function_fn fn, tfc_tensor **in, int n_in, int n_wrt, bool use_var) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn, NULL, NULL, &st);
    REQUIRE(f);
    tfc_tensor *ge[8] = {0}, *gt[8] = {0};
    grads(fn, NULL, in, n_in, n_wrt, use_var, ge);
    grads(fn, f, in, n_in, n_wrt, use_var, gt);
    const double h = 1e-6;
    for (int k = 0; k < n_wrt + use_var; k++) {
        REQUIRE(ge[k] && gt[k]);
        double fd;
        if (k < n_wrt) {
            tfc_tensor *save = in[k];
            in[k] = f64(at(save) + h);
            double up = eval(fn, in, n_in);
            in[k] = f64(at(save) - h);
            fd = (up - eval(fn, in, n_in)) / (2 * h);
            in[k] = save;
        } else {
            double v0 = at(tfc_variable_value(var));
            CHECK(tfc_variable_assign(ctx, var, f64(v0 + h), &st));
            double up = eval(fn, in, n_in);
            CHECK(tfc_variable_assign(ctx, var, f64(v0 - h), &st));
            fd = (up - eval(fn, in, n_in)) / (2 * h);
            CHECK(tfc_variable_assign(ctx, var, f64(v0), &st));
        }
        const double tol = 1e-6 * (1 + fabs(at(ge[k])));
        if (fabs(at(gt[k]) - at(ge[k])) > tol || fabs(fd - at(ge[k])) > 1e-4 * (1 + fabs(fd)))
            fprintf(stderr, "%s: d/d%d traced %.9g eager %.9g fd %.9g\n", what, k, at(gt[k]), at(ge[k]), fd);
        CHECK_NEAR(at(gt[k]), at(ge[k]), tol);
        CHECK_NEAR(fd, at(ge[k]), 1e-4 * (1 + fabs(fd)));
    }
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

static void test_squaring(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *ft = tfc_function_new(ctx, fn_sq_tape, NULL, NULL, &st);
    for (int n = 0; n <= 4; n++) {
        const double x = urand(0.6, 1.2);
        tfc_tensor *in[2] = {f64(x), tracked(ctx, tfc_scalar_i32(n, &st), &st)}, *g[1];
        check("x^(2^n)", fn_sq, in, 2, 1, false);
        grads(fn_sq, NULL, in, 2, 1, false, g);
        const double p = ldexp(1, n);
        CHECK_NEAR(at(g[0]), p * pow(x, p - 1), 1e-9 * p * pow(x, p));
        /* a tape inside the traced function: the While's gradient is built while tracing */
        tfc_tensor *out[1];
        CHECK(tfc_function_call(ft, in, 2, out, 1, &st) == 1);
        CHECK_OK(&st);
        CHECK_NEAR(at(out[0]), p * pow(x, p - 1), 1e-9 * p * pow(x, p));
    }
    CHECK(tfc_function_tracing_count(ft) == 1); /* n is a tensor: one trace for every trip count */
    tfc_function_free(ft);
    tfc_scope_end(ctx);
}

static void test_captures_and_limits(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *in[2] = {f64(urand(0.3, 0.9)), f64(urand(-1, 1))};
    check("captures", fn_cap, in, 2, 2, false);
    check("maximum_iterations", fn_max, in, 2, 2, false);
    tfc_tensor *v0 = f64(urand(0.5, 1.5));
    var = tfc_variable_new(ctx, v0, true, "v", &st);
    REQUIRE(var);
    check("variable", fn_var, in, 1, 1, true);
    tfc_variable_free(var);
    var = NULL;
    for (int k = 0; k < 2; k++) {
        tfc_tensor *a[2] = {in[0], tracked(ctx, tfc_scalar_bool(k == 0, &st), &st)};
        check("while in cond", fn_in_cond, a, 2, 1, false);
    }
    tfc_tensor *x = f64(urand(0.8, 1.05)), *g[1];
    check("while in while", fn_nested, &x, 1, 1, false);
    grads(fn_nested, NULL, &x, 1, 1, false, g);
    CHECK_NEAR(at(g[0]), 16 * pow(at(x), 15), 1e-9 * 16 * pow(at(x), 16));
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    const unsigned seed = (unsigned)time(NULL);
    srand(seed);
    fprintf(stderr, "seed %u\n", seed);
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    int64_t live0 = tfc_tensor_live_count();
    test_squaring();
    test_captures_and_limits();
    CHECK(tfc_tensor_live_count() == live0);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
