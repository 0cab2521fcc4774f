/* Recurrent layers (SimpleRNN, LSTM, GRU): outputs against a scalar reference of Keras's cell equations, states,
 * go_backwards, initial states, gradients by finite differences, configs, errors and ownership (run under the
 * ASan build for leaks). */
#include <math.h>
#include <string.h>

#include "tfc/keras.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

enum { B = 2, T = 3, F = 2, U = 2 };

static double sigm(double x) { return 1 / (1 + exp(-x)); }

/* Weights filled with a fixed pattern (Keras's layout), returned as tensors and as doubles. */
static void make_weights(int gates, bool gru_ra, double *k, double *rk, double *b, tfc_tensor **w) {
    tfc_status st = TFC_STATUS_INIT;
    int gu = gates * U, nb = gru_ra ? 2 * gu : gu;
    float kf[F * 4 * U], rf[U * 4 * U], bf[2 * 4 * U];
    for (int i = 0; i < F * gu; i++) kf[i] = (float)(k[i] = 0.3 * sin(1.7 * i + 0.2));
    for (int i = 0; i < U * gu; i++) rf[i] = (float)(rk[i] = 0.4 * cos(0.9 * i + 0.5));
    for (int i = 0; i < nb; i++) bf[i] = (float)(b[i] = 0.1 * (i % 5) - 0.2);
    for (int i = 0; i < F * gu; i++) k[i] = kf[i];
    for (int i = 0; i < U * gu; i++) rk[i] = rf[i];
    for (int i = 0; i < nb; i++) b[i] = bf[i];
    w[0] = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){F, gu}, 2, kf, sizeof(float) * (size_t)(F * gu), &st);
    w[1] = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){U, gu}, 2, rf, sizeof(float) * (size_t)(U * gu), &st);
    w[2] = gru_ra ? tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, gu}, 2, bf, sizeof(float) * (size_t)nb, &st)
                  : tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){gu}, 1, bf, sizeof(float) * (size_t)nb, &st);
    CHECK_OK(&st);
}

/* row [1 x n] times m [n x cols], column block c0 .. c0+len */
static void vecmat(const double *v, int n, const double *m, int cols, int c0, int len, double *out) {
    for (int j = 0; j < len; j++) {
        out[j] = 0;
        for (int i = 0; i < n; i++) out[j] += v[i] * m[i * cols + c0 + j];
    }
}

/* One batch row through the cell, Keras's equations. kind 0 SimpleRNN, 1 LSTM, 2 GRU (reset_after ra). */
static void reference(int kind, bool ra, bool backwards, const double *x, const double *k, const double *rk,
                      const double *b, double *seq, double *h_out, double *c_out) {
    int gates = kind == 1 ? 4 : kind == 2 ? 3 : 1, gu = gates * U;
    double h[U] = {0}, c[U] = {0};
    for (int s = 0; s < T; s++) {
        const double *xt = x + (backwards ? T - 1 - s : s) * F;
        double xk[4 * U], hk[4 * U];
        vecmat(xt, F, k, gu, 0, gu, xk);
        for (int j = 0; j < gu; j++) xk[j] += b[j];
        double nh[U];
        if (kind == 0) {
            vecmat(h, U, rk, gu, 0, gu, hk);
            for (int j = 0; j < U; j++) nh[j] = tanh(xk[j] + hk[j]);
        } else if (kind == 1) {
            vecmat(h, U, rk, gu, 0, gu, hk);
            for (int j = 0; j < U; j++) {
                double ig = sigm(xk[j] + hk[j]), fg = sigm(xk[U + j] + hk[U + j]);
                double gg = tanh(xk[2 * U + j] + hk[2 * U + j]), og = sigm(xk[3 * U + j] + hk[3 * U + j]);
                c[j] = fg * c[j] + ig * gg;
                nh[j] = og * tanh(c[j]);
            }
        } else {
            double r[U], z[U], rh[U];
            if (ra) {
                vecmat(h, U, rk, gu, 0, gu, hk);
                for (int j = 0; j < gu; j++) hk[j] += b[gu + j];
            } else {
                vecmat(h, U, rk, gu, 0, 2 * U, hk);
            }
            for (int j = 0; j < U; j++) z[j] = sigm(xk[j] + hk[j]), r[j] = sigm(xk[U + j] + hk[U + j]);
            if (ra) {
                for (int j = 0; j < U; j++) rh[j] = r[j] * hk[2 * U + j];
            } else {
                double rhv[U];
                for (int j = 0; j < U; j++) rhv[j] = r[j] * h[j];
                vecmat(rhv, U, rk, gu, 2 * U, U, rh);
            }
            for (int j = 0; j < U; j++) nh[j] = z[j] * h[j] + (1 - z[j]) * tanh(xk[2 * U + j] + rh[j]);
        }
        memcpy(h, nh, sizeof h);
        memcpy(seq + s * U, h, sizeof h);
    }
    memcpy(h_out, h, sizeof h);
    memcpy(c_out, c, sizeof c);
}

static tfc_layer *make(int kind, bool ra, bool backwards) {
    tfc_rnn_layer_opts o = {.units = U, .return_sequences = true, .return_state = true, .go_backwards = backwards,
                            .reset_after = ra ? TFC_YES : TFC_NO};
    return kind == 0 ? tfc_layers_simple_rnn_new(&o) : kind == 1 ? tfc_layers_lstm_new(&o) : tfc_layers_gru_new(&o);
}

static void test_against_reference(int kind, bool ra, bool backwards) {
    tfc_status st = TFC_STATUS_INIT;
    int gates = kind == 1 ? 4 : kind == 2 ? 3 : 1;
    double k[F * 4 * U], rk[U * 4 * U], b[2 * 4 * U], x[B * T * F];
    float xf[B * T * F];
    tfc_tensor *w[3];
    make_weights(gates, kind == 2 && ra, k, rk, b, w);
    for (int i = 0; i < B * T * F; i++) xf[i] = (float)(x[i] = 0.8 * sin(0.37 * i * i + 1.0));
    for (int i = 0; i < B * T * F; i++) x[i] = xf[i];
    tfc_layer *l = make(kind, ra, backwards);
    REQUIRE(l);
    tfc_tensor *xt = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){B, T, F}, 3, xf, sizeof xf, &st);
    tfc_shape shp = {.rank = 3, .dims = {B, T, F}};
    CHECK(tfc_layer_build(l, ctx, &shp, 1, &st));
    CHECK_OK(&st);
    CHECK(tfc_layer_set_weights(l, ctx, w, 3, &st));
    CHECK_OK(&st);
    int n_out = kind == 1 ? 3 : 2;
    tfc_tensor *out[3] = {NULL, NULL, NULL};
    CHECK(tfc_layer_call(l, ctx, &xt, 1, out, n_out, false, &st));
    CHECK_OK(&st);
    REQUIRE(out[0] && out[1]);
    CHECK(tfc_tensor_rank(out[0]) == 3 && tfc_tensor_dim(out[0], 1) == T && tfc_tensor_dim(out[0], 2) == U);
    const float *ys = tfc_tensor_data(out[0]), *yh = tfc_tensor_data(out[1]);
    for (int bi = 0; bi < B; bi++) {
        double seq[T * U], h[U], c[U];
        reference(kind, ra, backwards, x + bi * T * F, k, rk, b, seq, h, c);
        for (int i = 0; i < T * U; i++) CHECK_NEAR(ys[bi * T * U + i], seq[i], 1e-5);
        for (int j = 0; j < U; j++) CHECK_NEAR(yh[bi * U + j], h[j], 1e-5);
        if (kind == 1)
            for (int j = 0; j < U; j++) CHECK_NEAR(((const float *)tfc_tensor_data(out[2]))[bi * U + j], c[j], 1e-5);
    }
    /* n_out beyond the outputs the layer has */
    tfc_tensor *too_many[4];
    CHECK(!tfc_layer_call(l, ctx, &xt, 1, too_many, 4, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    for (int i = 0; i < 3; i++) tfc_tensor_unref(out[i]), tfc_tensor_unref(w[i]);
    tfc_tensor_unref(xt);
    tfc_layer_unref(l);
}

/* d sum(h_T) / d x[0] by central differences against the tape's gradient (LSTM with an initial state). */
static void test_gradient(void) {
    tfc_status st = TFC_STATUS_INIT;
    double xv[B * T * F];
    for (int i = 0; i < B * T * F; i++) xv[i] = 0.5 * cos(1.3 * i);
    tfc_tensor *h0 = tfc_zeros(ctx, TFC_DOUBLE, (int64_t[]){B, 3}, 2, &st);
    tfc_tensor *c0 = tfc_ones(ctx, TFC_DOUBLE, (int64_t[]){B, 3}, 2, &st);
    tfc_rnn_layer_opts o = {.units = 3, .dtype = TFC_DOUBLE};
    tfc_layer *l = tfc_layers_lstm_new(&o);
    REQUIRE(l);
    tfc_tensor *x = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){B, T, F}, 3, xv, sizeof xv, &st);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    tfc_tensor *y = NULL, *g[1] = {NULL};
    CHECK(tfc_layer_call(l, ctx, (tfc_tensor *[]){x, h0, c0}, 3, &y, 1, true, &st));
    CHECK_OK(&st);
    CHECK(tfc_tape_gradient(tape, y, &x, 1, NULL, 0, TFC_UNCONNECTED_ZERO, g, &st));
    CHECK_OK(&st);
    tfc_tape_free(tape);
    REQUIRE(g[0]);
    for (int i = 0; i < B * T * F; i += 3) {
        double sums[2];
        for (int s = 0; s < 2; s++) {
            double xp[B * T * F];
            memcpy(xp, xv, sizeof xp);
            xp[i] += s ? -1e-6 : 1e-6;
            tfc_tensor *xt = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){B, T, F}, 3, xp, sizeof xp, &st);
            tfc_tensor *yp = NULL;
            CHECK(tfc_layer_call(l, ctx, (tfc_tensor *[]){xt, h0, c0}, 3, &yp, 1, false, &st));
            sums[s] = 0;
            for (int j = 0; yp && j < B * 3; j++) sums[s] += ((const double *)tfc_tensor_data(yp))[j];
            tfc_tensor_unref(yp);
            tfc_tensor_unref(xt);
        }
        CHECK_NEAR(((const double *)tfc_tensor_data(g[0]))[i], (sums[0] - sums[1]) / 2e-6, 1e-6);
    }
    /* a layer built with initial states must be called with them */
    tfc_tensor *y2 = NULL;
    CHECK(!tfc_layer_call(l, ctx, &x, 1, &y2, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_tensor_unref(g[0]);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_tensor_unref(h0);
    tfc_tensor_unref(c0);
    tfc_layer_unref(l);
}

static void test_config_and_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_layer *l = tfc_layer_from_config("GRU", "{\"units\": 4, \"reset_after\": false, \"go_backwards\": true}", &st);
    CHECK_OK(&st);
    REQUIRE(l);
    CHECK(strcmp(tfc_layer_name(l), "gru") == 0);
    CHECK(strcmp(tfc_layer_class_name(l), "GRU") == 0);
    char *cfg = tfc_layer_get_config(l, &st);
    REQUIRE(cfg);
    CHECK(strstr(cfg, "\"reset_after\":false") && strstr(cfg, "\"go_backwards\":true") &&
          strstr(cfg, "\"recurrent_activation\":\"sigmoid\"") && strstr(cfg, "\"implementation\":2"));
    tfc_free(cfg);
    tfc_shape s = {.rank = 3, .dims = {-1, 5, 3}};
    CHECK(tfc_layer_build(l, ctx, &s, 1, &st));
    tfc_variable *w[4];
    CHECK(tfc_layer_weights(l, w, 4) == 3);
    CHECK(strcmp(tfc_variable_name(w[0]), "gru/gru_cell/kernel:0") == 0);
    CHECK(strcmp(tfc_variable_name(w[2]), "gru/gru_cell/bias:0") == 0);
    CHECK(tfc_layer_count_params(l) == 3 * 12 + 4 * 12 + 12);
    tfc_layer_unref(l);

    l = tfc_layers_lstm(.units = 0);
    CHECK(!tfc_layer_build(l, ctx, &s, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "units"));
    tfc_status_clear(&st);
    tfc_layer_unref(l);
    l = tfc_layers_simple_rnn(.units = 2);
    tfc_shape s2 = {.rank = 2, .dims = {4, 3}};
    CHECK(!tfc_layer_build(l, ctx, &s2, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "expected ndim=3, found ndim=2"));
    tfc_status_clear(&st);
    tfc_layer_unref(l);
    l = tfc_layers_simple_rnn(.units = 2, .stateful = true);
    CHECK(!tfc_layer_build(l, ctx, &s, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_layer_unref(l);
    l = tfc_layers_lstm(.units = 2, .activation = "nope");
    CHECK(!tfc_layer_build(l, ctx, &s, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_layer_unref(l);
    CHECK(!tfc_layer_from_config("LSTM", "{}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    for (int kind = 0; kind < 3; kind++)
        for (int bw = 0; bw < 2; bw++) {
            test_against_reference(kind, true, bw);
            if (kind == 2) test_against_reference(kind, false, bw);
        }
    test_gradient();
    test_config_and_errors();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
