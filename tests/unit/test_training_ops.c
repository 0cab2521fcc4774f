/* Training ops (ResourceApply*): each update against TensorFlow's formulas computed here in double, in
 * float32, float64 and half; copy-on-write (a read taken before the update keeps its value); large variables
 * (the parallel path); and the errors (shapes, scalars, dtypes, uninitialised and aliased variables). */
#include "core/tensor_internal.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

#define N 7
static const double G[N] = {0.5, -1.25, 2.0, 0.0, -0.03125, 3.5, -2.75};
static const double X[N] = {1.0, -2.0, 0.25, 4.0, -0.5, 0.75, 3.0};

static tfc_tensor *vec(tfc_dtype dt, const double *v, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(dt, &n, 1, &st);
    REQUIRE(t);
    void *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dt, p, i, v[i]);
    return t;
}

static tfc_variable *var_of(tfc_dtype dt, const double *v, int64_t n, const char *name) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = vec(dt, v, n);
    tfc_variable *var = tfc_variable_new(ctx, t, true, name, &st);
    CHECK_OK(&st);
    REQUIRE(var);
    tfc_tensor_unref(t);
    return var;
}

static double val(tfc_variable *v, int64_t i) { return tfc_tensor_get_f64(tfc_variable_value(v), i); }

/* Runs op on n_vars variables, scalar hyper-parameters sc[] (of dtype dt) and grad; returns the status code. */
static tfc_code run(const char *op, tfc_variable **vars, int n_vars, const double *sc, int n_sc, tfc_tensor *grad,
                    int grad_pos, const tfc_attr *attrs, int n_attrs, tfc_status *st) {
    tfc_tensor *in[12], *own[12];
    int n = 0, n_own = 0;
    for (int i = 0; i < n_vars; i++) in[n++] = tfc_variable_handle(vars[i]);
    int k = 0;
    for (int pos = n_vars; k < n_sc || pos == grad_pos; pos++) {
        if (pos == grad_pos) {
            in[n++] = grad;
        } else {
            own[n_own] = tfc_scalar(tfc_tensor_dtype(grad), sc[k++], st);
            in[n++] = own[n_own++];
        }
    }
    if (grad_pos >= n) in[n++] = grad;
    tfc_tensor *out[1];
    tfc_execute(ctx, op, in, n, attrs, n_attrs, out, 0, st);
    for (int i = 0; i < n_own; i++) tfc_tensor_unref(own[i]);
    return st->code;
}

static double tol_of(tfc_dtype dt) { return dt == TFC_DOUBLE ? 1e-13 : dt == TFC_FLOAT ? 2e-6 : 2e-2; }
static double rt(tfc_dtype dt, double x) { /* value as stored in dt */
    double out;
    tfc_tensor *t = vec(dt, &x, 1);
    out = tfc_tensor_get_f64(t, 0);
    tfc_tensor_unref(t);
    return out;
}

static void test_gradient_descent(tfc_dtype dt) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *v = var_of(dt, X, N, "w");
    tfc_tensor *g = vec(dt, G, N);
    tfc_tensor *before = tfc_variable_read(ctx, v, &st); /* keeps the old value: the update must copy */
    REQUIRE(run("ResourceApplyGradientDescent", &v, 1, (double[]){0.1}, 1, g, 2, NULL, 0, &st) == TFC_OK);
    for (int i = 0; i < N; i++) {
        CHECK_NEAR(val(v, i), rt(dt, X[i]) - rt(dt, G[i]) * 0.1, tol_of(dt));
        CHECK_NEAR(tfc_tensor_get_f64(before, i), rt(dt, X[i]), 0);
    }
    tfc_tensor_unref(before);
    /* in place now that nothing else holds the value */
    const void *data = tfc_tensor_data(tfc_variable_value(v));
    REQUIRE(run("ResourceApplyGradientDescent", &v, 1, (double[]){0.1}, 1, g, 2, NULL, 0, &st) == TFC_OK);
    CHECK(tfc_tensor_data(tfc_variable_value(v)) == data);
    for (int i = 0; i < N; i++) CHECK_NEAR(val(v, i), rt(dt, X[i]) - 2 * rt(dt, G[i]) * 0.1, 2 * tol_of(dt));
    tfc_tensor_unref(g);
    tfc_variable_free(v);
}

static void test_keras_momentum(tfc_dtype dt, bool nesterov) {
    tfc_status st = TFC_STATUS_INIT;
    double a0[N];
    for (int i = 0; i < N; i++) a0[i] = 0.1 * i - 0.2;
    tfc_variable *vs[2] = {var_of(dt, X, N, "w"), var_of(dt, a0, N, "w/momentum")};
    tfc_tensor *g = vec(dt, G, N);
    double lr = 0.05, mom = 0.9;
    tfc_attr a = TFC_ATTR_B("use_nesterov", nesterov);
    /* inputs: var, accum, lr, grad, momentum */
    REQUIRE(run("ResourceApplyKerasMomentum", vs, 2, (double[]){lr, mom}, 2, g, 3, &a, 1, &st) == TFC_OK);
    for (int i = 0; i < N; i++) {
        double acc = rt(dt, a0[i]) * mom - rt(dt, G[i]) * lr;
        double w = rt(dt, X[i]) + (nesterov ? acc * mom - rt(dt, G[i]) * lr : acc);
        CHECK_NEAR(val(vs[1], i), acc, tol_of(dt));
        CHECK_NEAR(val(vs[0], i), w, tol_of(dt));
    }
    tfc_tensor_unref(g);
    tfc_variable_free(vs[0]);
    tfc_variable_free(vs[1]);
}

static void test_adam(tfc_dtype dt, int variant /* 0 plain, 1 nesterov, 2 amsgrad */) {
    tfc_status st = TFC_STATUS_INIT;
    double m0[N], v0[N], h0[N];
    for (int i = 0; i < N; i++) m0[i] = 0.01 * i, v0[i] = 0.02 * i + 0.001, h0[i] = i == 2 ? 5.0 : 0.0;
    tfc_variable *vs[4] = {var_of(dt, X, N, "w"), var_of(dt, m0, N, "w/m"), var_of(dt, v0, N, "w/v"),
                           var_of(dt, h0, N, "w/vhat")};
    tfc_tensor *g = vec(dt, G, N);
    double b1 = 0.9, b2 = 0.999, t = 3, lr = 0.01, eps = 1e-7;
    double b1p = pow(b1, t), b2p = pow(b2, t);
    double sc[6] = {b1p, b2p, lr, b1, b2, eps};
    tfc_attr a = TFC_ATTR_B("use_nesterov", variant == 1);
    if (variant == 2)
        REQUIRE(run("ResourceApplyAdamWithAmsgrad", vs, 4, sc, 6, g, 10, NULL, 0, &st) == TFC_OK);
    else
        REQUIRE(run("ResourceApplyAdam", vs, 3, sc, 6, g, 9, &a, 1, &st) == TFC_OK);
    double alpha = lr * sqrt(1 - b2p) / (1 - b1p);
    for (int i = 0; i < N; i++) {
        double gi = rt(dt, G[i]);
        double m = rt(dt, m0[i]) + (gi - rt(dt, m0[i])) * (1 - b1);
        double v = rt(dt, v0[i]) + (gi * gi - rt(dt, v0[i])) * (1 - b2);
        double h = fmax(rt(dt, h0[i]), v);
        double w = variant == 2   ? rt(dt, X[i]) - m * alpha / (sqrt(h) + eps)
                   : variant == 1 ? rt(dt, X[i]) - (gi * (1 - b1) + b1 * m) * alpha / (sqrt(v) + eps)
                                  : rt(dt, X[i]) - m * alpha / (sqrt(v) + eps);
        CHECK_NEAR(val(vs[1], i), m, tol_of(dt));
        CHECK_NEAR(val(vs[2], i), v, tol_of(dt));
        CHECK_NEAR(val(vs[0], i), w, tol_of(dt));
        if (variant == 2) CHECK_NEAR(val(vs[3], i), h, tol_of(dt));
    }
    tfc_tensor_unref(g);
    for (int i = 0; i < 4; i++) tfc_variable_free(vs[i]);
}

static void test_rmsprop(tfc_dtype dt, bool centered) {
    tfc_status st = TFC_STATUS_INIT;
    double ms0[N], mom0[N], mg0[N];
    for (int i = 0; i < N; i++) ms0[i] = 0.1 * i + 0.5, mom0[i] = 0.01 * i, mg0[i] = 0.05 * i - 0.1;
    double lr = 0.01, rho = 0.9, momentum = 0.5, eps = 1e-7;
    tfc_tensor *g = vec(dt, G, N);
    tfc_variable *w = var_of(dt, X, N, "w"), *ms = var_of(dt, ms0, N, "w/rms"), *mom = var_of(dt, mom0, N, "w/momentum"),
                 *mg = var_of(dt, mg0, N, "w/mg");
    if (centered)
        REQUIRE(run("ResourceApplyCenteredRMSProp", (tfc_variable *[]){w, mg, ms, mom}, 4,
                    (double[]){lr, rho, momentum, eps}, 4, g, 8, NULL, 0, &st) == TFC_OK);
    else
        REQUIRE(run("ResourceApplyRMSProp", (tfc_variable *[]){w, ms, mom}, 3, (double[]){lr, rho, momentum, eps}, 4, g,
                    7, NULL, 0, &st) == TFC_OK);
    for (int i = 0; i < N; i++) {
        double gi = rt(dt, G[i]);
        double s = rt(dt, ms0[i]) + (gi * gi - rt(dt, ms0[i])) * (1 - rho);
        double mgi = rt(dt, mg0[i]) + (gi - rt(dt, mg0[i])) * (1 - rho);
        double den = centered ? s - mgi * mgi + eps : s + eps;
        double mo = rt(dt, mom0[i]) * momentum + gi * lr / sqrt(den);
        CHECK_NEAR(val(ms, i), s, tol_of(dt));
        CHECK_NEAR(val(mom, i), mo, tol_of(dt));
        CHECK_NEAR(val(w, i), rt(dt, X[i]) - mo, tol_of(dt));
        if (centered) CHECK_NEAR(val(mg, i), mgi, tol_of(dt));
    }
    tfc_tensor_unref(g);
    tfc_variable_free(w);
    tfc_variable_free(ms);
    tfc_variable_free(mom);
    tfc_variable_free(mg);
}

static void test_adagrad(tfc_dtype dt, bool update_slots) {
    tfc_status st = TFC_STATUS_INIT;
    double a0[N];
    for (int i = 0; i < N; i++) a0[i] = 0.1 + 0.3 * i;
    tfc_variable *vs[2] = {var_of(dt, X, N, "w"), var_of(dt, a0, N, "w/accumulator")};
    tfc_tensor *g = vec(dt, G, N);
    double lr = 0.1, eps = 1e-7;
    tfc_attr a = TFC_ATTR_B("update_slots", update_slots);
    REQUIRE(run("ResourceApplyAdagradV2", vs, 2, (double[]){lr, eps}, 2, g, 4, &a, 1, &st) == TFC_OK);
    for (int i = 0; i < N; i++) {
        double gi = rt(dt, G[i]);
        double acc = rt(dt, a0[i]) + (update_slots ? gi * gi : 0);
        CHECK_NEAR(val(vs[1], i), acc, tol_of(dt));
        CHECK_NEAR(val(vs[0], i), rt(dt, X[i]) - gi * lr / (sqrt(acc) + eps), tol_of(dt));
    }
    tfc_tensor_unref(g);
    tfc_variable_free(vs[0]);
    tfc_variable_free(vs[1]);
}

static void test_adamax(tfc_dtype dt) {
    tfc_status st = TFC_STATUS_INIT;
    double m0[N], v0[N];
    for (int i = 0; i < N; i++) m0[i] = 0.02 * i - 0.05, v0[i] = i == 1 ? 10.0 : 0.3 * i;
    tfc_variable *vs[3] = {var_of(dt, X, N, "w"), var_of(dt, m0, N, "w/m"), var_of(dt, v0, N, "w/v")};
    tfc_tensor *g = vec(dt, G, N);
    double b1 = 0.9, b2 = 0.999, lr = 0.002, eps = 1e-7, b1p = pow(b1, 2);
    REQUIRE(run("ResourceApplyAdaMax", vs, 3, (double[]){b1p, lr, b1, b2, eps}, 5, g, 8, NULL, 0, &st) == TFC_OK);
    for (int i = 0; i < N; i++) {
        double gi = rt(dt, G[i]);
        double m = rt(dt, m0[i]) + (gi - rt(dt, m0[i])) * (1 - b1);
        double v = fmax(b2 * rt(dt, v0[i]), fabs(gi));
        CHECK_NEAR(val(vs[1], i), m, tol_of(dt));
        CHECK_NEAR(val(vs[2], i), v, tol_of(dt));
        CHECK_NEAR(val(vs[0], i), rt(dt, X[i]) - lr / (1 - b1p) * (m / (v + eps)), tol_of(dt));
    }
    tfc_tensor_unref(g);
    for (int i = 0; i < 3; i++) tfc_variable_free(vs[i]);
}

/* A variable large enough to be split over the pool, updated in place and checked element by element. */
static void test_large_parallel(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t n = 300001;
    double *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g);
    REQUIRE(x && g);
    for (int64_t i = 0; i < n; i++) x[i] = sin(0.001 * i), g[i] = cos(0.003 * i);
    tfc_variable *w = var_of(TFC_FLOAT, x, n, "big");
    double *z = calloc(n, sizeof *z);
    tfc_variable *m = var_of(TFC_FLOAT, z, n, "big/m"), *v = var_of(TFC_FLOAT, z, n, "big/v");
    tfc_tensor *gt = vec(TFC_FLOAT, g, n);
    double b1 = 0.9, b2 = 0.999, lr = 0.001, eps = 1e-7;
    REQUIRE(run("ResourceApplyAdam", (tfc_variable *[]){w, m, v}, 3, (double[]){b1, b2, lr, b1, b2, eps}, 6, gt, 9,
                NULL, 0, &st) == TFC_OK);
    double alpha = lr * sqrt(1 - b2) / (1 - b1);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double gi = (float)g[i];
        double mi = gi * (1 - b1), vi = gi * gi * (1 - b2);
        double want = (float)x[i] - mi * alpha / (sqrt(vi) + eps);
        if (fabs(val(w, i) - want) > 1e-5 * (1 + fabs(want))) bad++;
    }
    CHECK(bad == 0);
    tfc_tensor_unref(gt);
    tfc_variable_free(w);
    tfc_variable_free(m);
    tfc_variable_free(v);
    free(x);
    free(g);
    free(z);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *w = var_of(TFC_FLOAT, X, N, "w"), *m = var_of(TFC_FLOAT, X, N - 1, "w/m"),
                 *v = var_of(TFC_FLOAT, X, N, "w/v");
    tfc_tensor *g = vec(TFC_FLOAT, G, N), *g_short = vec(TFC_FLOAT, G, 3);
    double sc[6] = {0.9, 0.999, 0.01, 0.9, 0.999, 1e-7};
    /* slot shape differs from var */
    CHECK(run("ResourceApplyAdam", (tfc_variable *[]){w, m, v}, 3, sc, 6, g, 9, NULL, 0, &st) == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "ResourceApplyAdam") && strstr(st.msg, "var and m") && strstr(st.msg, "[7]") &&
          strstr(st.msg, "[6]"));
    /* grad shape differs from var */
    CHECK(run("ResourceApplyGradientDescent", &w, 1, (double[]){0.1}, 1, g_short, 2, NULL, 0, &st) ==
          TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "ResourceApplyGradientDescent") && strstr(st.msg, "delta") && strstr(st.msg, "[3]"));
    /* lr not a scalar */
    tfc_tensor *in[3] = {tfc_variable_handle(w), g, g};
    tfc_tensor *out[1];
    CHECK(tfc_execute(ctx, "ResourceApplyGradientDescent", in, 3, NULL, 0, out, 0, &st) < 0);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "alpha is not a scalar") && strstr(st.msg, "[7]"));
    /* variable dtype differs from T */
    tfc_variable *w64 = var_of(TFC_DOUBLE, X, N, "w64");
    CHECK(run("ResourceApplyGradientDescent", &w64, 1, (double[]){0.1}, 1, g, 2, NULL, 0, &st) == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "float64") && strstr(st.msg, "float32") && strstr(st.msg, "w64"));
    /* the same variable twice */
    CHECK(run("ResourceApplyKerasMomentum", (tfc_variable *[]){w, w}, 2, (double[]){0.1, 0.9}, 2, g, 3, NULL, 0, &st) ==
          TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "same variable"));
    /* a non-handle where a resource goes */
    tfc_tensor *in2[3] = {g, g, g};
    CHECK(tfc_execute(ctx, "ResourceApplyGradientDescent", in2, 3, NULL, 0, out, 0, &st) < 0);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* an uninitialised variable (VarHandleOp without assign) */
    int64_t dims[1] = {N};
    tfc_attr ha[2] = {TFC_ATTR_T("dtype", TFC_FLOAT), TFC_ATTR_SHAPE_("shape", dims, 1)};
    tfc_tensor *h = tfc_emit(ctx, "VarHandleOp", NULL, 0, ha, 2, &st);
    REQUIRE(h);
    tfc_tensor *alpha = tfc_scalar_f32(0.1f, &st);
    tfc_tensor *in3[3] = {h, alpha, g};
    CHECK(tfc_execute(ctx, "ResourceApplyGradientDescent", in3, 3, NULL, 0, out, 0, &st) < 0);
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "uninitialized"));
    /* integer T: no kernel, as TensorFlow */
    const double iv[N] = {1, 2, 3, 4, 5, 6, 7};
    tfc_variable *wi = var_of(TFC_INT32, iv, N, "wi");
    tfc_tensor *gi = vec(TFC_INT32, iv, N);
    CHECK(run("ResourceApplyGradientDescent", &wi, 1, (double[]){1}, 1, gi, 2, NULL, 0, &st) == TFC_UNIMPLEMENTED);
    /* not differentiable: a tape watching the variable records nothing and gradients stay unconnected */
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch_variable(tape, w);
    CHECK(run("ResourceApplyGradientDescent", &w, 1, (double[]){0.1}, 1, g, 2, NULL, 0, &st) == TFC_OK);
    tfc_tape_free(tape);
    tfc_tensor_unref(gi);
    tfc_variable_free(wi);
    tfc_tensor_unref(alpha);
    tfc_tensor_unref(h);
    tfc_variable_free(w64);
    tfc_tensor_unref(g);
    tfc_tensor_unref(g_short);
    tfc_variable_free(w);
    tfc_variable_free(m);
    tfc_variable_free(v);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    int64_t live = tfc_tensor_live_count();
    const tfc_dtype dts[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++) {
        tfc_dtype dt = dts[d];
        test_gradient_descent(dt);
        test_keras_momentum(dt, false);
        test_keras_momentum(dt, true);
        for (int variant = 0; variant < 3; variant++) test_adam(dt, variant);
        test_rmsprop(dt, false);
        test_rmsprop(dt, true);
        test_adagrad(dt, true);
        test_adagrad(dt, false);
        test_adamax(dt);
    }
    test_large_parallel();
    test_errors();
    CHECK(tfc_tensor_live_count() == live);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
