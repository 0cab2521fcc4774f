/* The cells of SimpleRNN, LSTM and GRU: their weights (Keras's layout) and one time step each, as Keras's
 * implementation=2 computes it (one product of the inputs for all gates, one of the state). */
#include <string.h>

#include "core/size_check.h"
#include "keras/layers/recurrent.h"

int tfc_rnn_gates(const tfc_rnn *r) { return r->kind == TFC_RNN_LSTM ? 4 : r->kind == TFC_RNN_GRU ? 3 : 1; }

int tfc_rnn_n_states(const tfc_rnn *r) { return r->kind == TFC_RNN_LSTM ? 2 : 1; }

const char *tfc_rnn_cell_name(const tfc_rnn *r) {
    return r->kind == TFC_RNN_LSTM ? "lstm_cell" : r->kind == TFC_RNN_GRU ? "gru_cell" : "simple_rnn_cell";
}

/* LSTM's unit_forget_bias: the bias's second quarter (the forget gate) set to 1 after initialisation, as
 * Keras's bias_initializer(units), ones(units), bias_initializer(2 * units). */
static bool set_forget_bias(tfc_rnn *r, tfc_ctx *ctx, tfc_status *st) {
    int64_t n = 4 * r->units;
    tfc_tensor *m64 = tfc_tensor_new(TFC_DOUBLE, &n, 1, st);
    if (!m64) return false;
    double *m = tfc_tensor_mutable_data(m64);
    for (int64_t i = 0; i < n; i++) m[i] = i >= r->units && i < 2 * r->units;
    bool ok = false;
    if (tfc_scope_begin(ctx, st)) {
        /* new = b * (1 - m) + m with m the forget gate's indicator */
        tfc_tensor *b = tfc_variable_read(ctx, r->bias, st), *one = NULL, *mk = NULL;
        if (b) {
            tfc_attr ca = TFC_ATTR_T("DstT", tfc_tensor_dtype(b));
            mk = tfc_emit(ctx, "Cast", &m64, 1, &ca, 1, st);
            one = mk ? tfc_scalar(tfc_tensor_dtype(b), 1.0, st) : NULL;
        }
        tfc_tensor *keep = one ? tfc_emit(ctx, "Sub", (tfc_tensor *[]){one, mk}, 2, NULL, 0, st) : NULL;
        tfc_tensor *kept = keep ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){b, keep}, 2, NULL, 0, st) : NULL;
        tfc_tensor *nb = kept ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){kept, mk}, 2, NULL, 0, st) : NULL;
        ok = nb && tfc_variable_assign(ctx, r->bias, nb, st);
        tfc_tensor_unref(one);
        tfc_scope_end(ctx);
    }
    tfc_tensor_unref(m64);
    return ok;
}

bool tfc_rnn_cell_build(tfc_rnn *r, tfc_ctx *ctx, int64_t features, tfc_status *st) {
    tfc_layer *l = &r->base;
    int64_t g = tfc_rnn_gates(r), gu;
    if (!tfc_size_mul(g, r->units, &gu))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": units=%lld is too large", l->name,
                              (long long)r->units);
    char name[64];
    const char *cell = tfc_rnn_cell_name(r);
    tfc_shape ks = {.rank = 2, .dims = {features, gu}}, rs = {.rank = 2, .dims = {r->units, gu}};
    tfc_shape bs = {.rank = 1, .dims = {gu}};
    if (r->kind == TFC_RNN_GRU && r->reset_after) bs = (tfc_shape){.rank = 2, .dims = {2, gu}};
    snprintf(name, sizeof name, "%s/kernel", cell);
    r->kernel = tfc_layer_add_weight(l, ctx, name, &ks, l->dtype, &r->kernel_init.init,
                                     r->has_kernel_reg ? &r->kernel_reg : NULL, true, st);
    if (!r->kernel) return false;
    snprintf(name, sizeof name, "%s/recurrent_kernel", cell);
    r->recurrent_kernel = tfc_layer_add_weight(l, ctx, name, &rs, l->dtype, &r->recurrent_init.init,
                                               r->has_recurrent_reg ? &r->recurrent_reg : NULL, true, st);
    if (!r->recurrent_kernel) return false;
    if (!r->use_bias) return true;
    snprintf(name, sizeof name, "%s/bias", cell);
    r->bias = tfc_layer_add_weight(l, ctx, name, &bs, l->dtype, &r->bias_init.init,
                                   r->has_bias_reg ? &r->bias_reg : NULL, true, st);
    if (!r->bias) return false;
    if (r->kind == TFC_RNN_LSTM && r->unit_forget_bias) return set_forget_bias(r, ctx, st);
    return true;
}

static tfc_tensor *op2(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return a && b ? tfc_emit(ctx, op, (tfc_tensor *[]){a, b}, 2, NULL, 0, st) : NULL;
}

/* x split into n equal (or `sizes`) column blocks along the last axis (scope-owned outputs). */
static bool split_cols(tfc_ctx *ctx, tfc_tensor *x, const int64_t *sizes, int n, tfc_tensor **out, tfc_status *st) {
    if (!x) return false;
    tfc_tensor *axis = tfc_scalar_i32(-1, st), *sz = sizes ? tfc_vec_i64(sizes, n, st) : NULL;
    bool ok = axis && (!sizes || sz);
    if (ok && sizes) {
        tfc_attr a[2] = {TFC_ATTR_I("num_split", n), TFC_ATTR_T("Tlen", TFC_INT64)};
        ok = tfc_execute(ctx, "SplitV", (tfc_tensor *[]){x, sz, axis}, 3, a, 2, out, n, st) == n;
    } else if (ok) {
        tfc_attr a = TFC_ATTR_I("num_split", n);
        ok = tfc_execute(ctx, "Split", (tfc_tensor *[]){axis, x}, 2, &a, 1, out, n, st) == n;
    }
    tfc_tensor_unref(axis);
    tfc_tensor_unref(sz);
    return ok;
}

bool tfc_rnn_step_prepare(tfc_rnn *r, tfc_ctx *ctx, tfc_rnn_step_ctx *sc, tfc_status *st) {
    tfc_layer *l = &r->base;
    memset(sc, 0, sizeof *sc);
    if (!(sc->recurrent_kernel = tfc_layer_read_var(l, ctx, r->recurrent_kernel, st))) return false;
    if (r->kind != TFC_RNN_GRU) return true;
    if (!(sc->one = tfc_scalar(l->compute_dtype, 1.0, st))) return false;
    if (r->reset_after) {
        if (!r->use_bias) return true;
        tfc_tensor *b = tfc_layer_read_var(l, ctx, r->bias, st), *parts[2];
        tfc_attr a[2] = {TFC_ATTR_I("num", 2), TFC_ATTR_I("axis", 0)};
        if (!b || tfc_execute(ctx, "Unpack", &b, 1, a, 2, parts, 2, st) != 2) return false;
        sc->recurrent_bias = parts[1];
        return true;
    }
    tfc_tensor *blocks[2];
    if (!split_cols(ctx, sc->recurrent_kernel, (int64_t[]){2 * r->units, r->units}, 2, blocks, st)) return false;
    sc->rk_zr = blocks[0];
    sc->rk_h = blocks[1];
    return true;
}

static tfc_tensor *act(tfc_ctx *ctx, const char *name, tfc_tensor *x, tfc_status *st) {
    return x ? tfc_activation_apply(ctx, name, x, st) : NULL;
}

static bool simple_step(tfc_rnn *r, tfc_ctx *ctx, const tfc_rnn_step_ctx *sc, tfc_tensor *xk, tfc_tensor *h_in,
                        tfc_tensor **states, tfc_status *st) {
    tfc_tensor *h = act(ctx, r->activation, op2(ctx, "AddV2", xk, op2(ctx, "MatMul", h_in, sc->recurrent_kernel, st),
                                                st), st);
    return (states[0] = h) != NULL;
}

static bool lstm_step(tfc_rnn *r, tfc_ctx *ctx, const tfc_rnn_step_ctx *sc, tfc_tensor *xk, tfc_tensor *h_in,
                      tfc_tensor **states, tfc_status *st) {
    tfc_tensor *z = op2(ctx, "AddV2", xk, op2(ctx, "MatMul", h_in, sc->recurrent_kernel, st), st), *g[4];
    if (!split_cols(ctx, z, NULL, 4, g, st)) return false;
    tfc_tensor *i = act(ctx, r->recurrent_activation, g[0], st);
    tfc_tensor *f = act(ctx, r->recurrent_activation, g[1], st);
    tfc_tensor *c = op2(ctx, "AddV2", op2(ctx, "Mul", f, states[1], st),
                        op2(ctx, "Mul", i, act(ctx, r->activation, g[2], st), st), st);
    tfc_tensor *o = act(ctx, r->recurrent_activation, g[3], st);
    tfc_tensor *h = op2(ctx, "Mul", o, act(ctx, r->activation, c, st), st);
    if (!h) return false;
    states[0] = h;
    states[1] = c;
    return true;
}

static bool gru_step(tfc_rnn *r, tfc_ctx *ctx, const tfc_rnn_step_ctx *sc, tfc_tensor *xk, tfc_tensor *h_in,
                     tfc_tensor **states, tfc_status *st) {
    tfc_tensor *x3[3], *r3[3];
    if (!split_cols(ctx, xk, NULL, 3, x3, st)) return false;
    tfc_tensor *inner;
    if (r->reset_after) {
        inner = op2(ctx, "MatMul", h_in, sc->recurrent_kernel, st);
        if (sc->recurrent_bias) inner = op2(ctx, "AddV2", inner, sc->recurrent_bias, st);
        if (!split_cols(ctx, inner, NULL, 3, r3, st)) return false;
    } else {
        inner = op2(ctx, "MatMul", h_in, sc->rk_zr, st);
        if (!split_cols(ctx, inner, NULL, 2, r3, st)) return false;
    }
    tfc_tensor *z = act(ctx, r->recurrent_activation, op2(ctx, "AddV2", x3[0], r3[0], st), st);
    tfc_tensor *rr = act(ctx, r->recurrent_activation, op2(ctx, "AddV2", x3[1], r3[1], st), st);
    tfc_tensor *rh = r->reset_after ? op2(ctx, "Mul", rr, r3[2], st)
                                    : op2(ctx, "MatMul", op2(ctx, "Mul", rr, h_in, st), sc->rk_h, st);
    tfc_tensor *hh = act(ctx, r->activation, op2(ctx, "AddV2", x3[2], rh, st), st);
    tfc_tensor *h = op2(ctx, "AddV2", op2(ctx, "Mul", z, states[0], st),
                        op2(ctx, "Mul", op2(ctx, "Sub", sc->one, z, st), hh, st), st);
    return (states[0] = h) != NULL;
}

bool tfc_rnn_cell_step(tfc_rnn *r, tfc_ctx *ctx, const tfc_rnn_step_ctx *sc, tfc_tensor *xk, tfc_tensor **states,
                       tfc_status *st) {
    tfc_tensor *h_in = states[0];
    if (sc->rec_mask && !(h_in = op2(ctx, "Mul", states[0], sc->rec_mask, st))) return false;
    switch (r->kind) {
    case TFC_RNN_LSTM: return lstm_step(r, ctx, sc, xk, h_in, states, st);
    case TFC_RNN_GRU: return gru_step(r, ctx, sc, xk, h_in, states, st);
    default: return simple_step(r, ctx, sc, xk, h_in, states, st);
    }
}
