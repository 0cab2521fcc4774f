/* tf.keras.layers.SimpleRNN / LSTM / GRU: the layer around a cell: input checks, weights, and the loop over
 * the time steps (eager, one cell step per time step; the tape records every step). */
#include <string.h>

#include "keras/layers/dropout_mask.h"
#include "keras/layers/recurrent.h"
#include "tfc/ops/array.h"

static bool rnn_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                             tfc_status *st) {
    tfc_rnn *r = (tfc_rnn *)l;
    int ns = tfc_rnn_n_states(r);
    if (r->units <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": received an invalid value for argument `units`, expected a positive "
                              "integer, got %lld.",
                              l->name, (long long)r->units);
    if (n_in != 1 && n_in != 1 + ns)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\" expects 1 input (or 1 + %d initial states), but it received %d input "
                              "tensors",
                              l->name, ns, n_in);
    if (!tfc_layer_check_activation(l, r->activation, st)) return false;
    if (r->kind != TFC_RNN_SIMPLE && !tfc_layer_check_activation(l, r->recurrent_activation, st)) return false;
    if (r->stateful)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": stateful=True is not supported by tfc",
                              l->name);
    if (!(r->dropout >= 0 && r->dropout < 1) || !(r->recurrent_dropout >= 0 && r->recurrent_dropout < 1))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": dropout and recurrent_dropout must be in [0, 1); received %g and %g",
                              l->name, r->dropout, r->recurrent_dropout);
    const tfc_shape *s = &in[0];
    if (s->rank != 3)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Input 0 of layer \"%s\" is incompatible with the layer: expected ndim=3, found "
                              "ndim=%d. Full shape received: %s",
                              l->name, s->rank, TFC_KSHP(s));
    if (s->dims[2] < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": the last dimension of the inputs should be defined. Found None. Full "
                              "input shape received: %s",
                              l->name, TFC_KSHP(s));
    int64_t batch = r->time_major ? s->dims[1] : s->dims[0], steps = r->time_major ? s->dims[0] : s->dims[1];
    for (int i = 1; i < n_in; i++)
        if (in[i].rank != 2 || (in[i].dims[1] >= 0 && in[i].dims[1] != r->units) ||
            (in[i].dims[0] >= 0 && batch >= 0 && in[i].dims[0] != batch))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": initial state %d has shape %s; expected (%lld, %lld)", l->name,
                                  i - 1, TFC_KSHP(&in[i]), (long long)batch, (long long)r->units);
    out[0] = (tfc_shape){.rank = 2, .dims = {batch, r->units}};
    if (r->return_sequences)
        out[0] = r->time_major ? (tfc_shape){.rank = 3, .dims = {steps, batch, r->units}}
                               : (tfc_shape){.rank = 3, .dims = {batch, steps, r->units}};
    int n = 1;
    if (r->return_state)
        for (int i = 0; i < ns; i++) out[n++] = (tfc_shape){.rank = 2, .dims = {batch, r->units}};
    *n_out = n;
    return true;
}

static bool rnn_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    tfc_rnn *r = (tfc_rnn *)l;
    int64_t features = in[0].dims[2];
    if (!tfc_rnn_cell_build(r, ctx, features, st)) return false;
    /* InputSpec(ndim=3, axes={-1: features}); states: ndim=2, axes={-1: units} */
    l->input_spec[0] = (tfc_input_spec){.ndim = 3, .n_axes = 1, .axes = {-1}, .values = {features}};
    for (int i = 1; i < n_in; i++)
        l->input_spec[i] = (tfc_input_spec){.ndim = 2, .n_axes = 1, .axes = {-1}, .values = {r->units}};
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *transpose_tb(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    return x ? tfc_transpose(ctx, x, (int64_t[]){1, 0, 2}, st) : NULL;
}

/* x [batch, steps, features] -> x @ kernel (+ input bias) as [batch, steps, G*units]. */
static tfc_tensor *input_products(tfc_rnn *r, tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    tfc_layer *l = &r->base;
    int64_t b = tfc_tensor_dim(x, 0), t = tfc_tensor_dim(x, 1), gu = tfc_rnn_gates(r) * r->units;
    tfc_tensor *k = tfc_layer_read_var(l, ctx, r->kernel, st);
    tfc_tensor *s1 = tfc_vec_i64((int64_t[]){-1, tfc_tensor_dim(x, 2)}, 2, st);
    tfc_tensor *s2 = tfc_vec_i64((int64_t[]){b, t, gu}, 3, st);
    tfc_tensor *x2 = k && s1 && s2 ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s1}, 2, NULL, 0, st) : NULL;
    tfc_tensor *y = x2 ? tfc_emit(ctx, "MatMul", (tfc_tensor *[]){x2, k}, 2, NULL, 0, st) : NULL;
    if (y && r->use_bias) {
        tfc_tensor *bias = tfc_layer_read_var(l, ctx, r->bias, st);
        if (bias && r->kind == TFC_RNN_GRU && r->reset_after) {
            tfc_tensor *parts[2];
            tfc_attr a[2] = {TFC_ATTR_I("num", 2), TFC_ATTR_I("axis", 0)};
            bias = tfc_execute(ctx, "Unpack", &bias, 1, a, 2, parts, 2, st) == 2 ? parts[0] : NULL;
        }
        y = bias ? tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, bias}, 2, NULL, 0, st) : NULL;
    }
    y = y ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){y, s2}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(s1);
    tfc_tensor_unref(s2);
    return y;
}

static bool rnn_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    tfc_rnn *r = (tfc_rnn *)l;
    int ns = tfc_rnn_n_states(r), avail = 1 + (r->return_state ? ns : 0);
    if (n_out > avail)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\" has %d output(s); %d requested", l->name, avail,
                              n_out);
    tfc_tensor *x = in[0];
    if (r->time_major && !(x = transpose_tb(ctx, x, st))) return false;
    int64_t batch = tfc_tensor_dim(x, 0), steps = tfc_tensor_dim(x, 1), features = tfc_tensor_dim(x, 2);
    if (steps == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": the input has 0 time steps: %s", l->name,
                              TFC_KSHP(tfc_tensor_shape(in[0])));
    tfc_dtype dt = tfc_tensor_dtype(x);
    if (r->go_backwards) {
        tfc_tensor *axis = tfc_vec_i32((int32_t[]){1}, 1, st);
        x = axis ? tfc_emit(ctx, "ReverseV2", (tfc_tensor *[]){x, axis}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(axis);
        if (!x) return false;
    }
    if (training && r->dropout > 0) {
        tfc_tensor *m = tfc_keras_dropout_mask(ctx, dt, (int64_t[]){batch, 1, features}, 3, r->dropout, st);
        if (!m || !(x = tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, m}, 2, NULL, 0, st))) return false;
    }
    tfc_tensor *xk = input_products(r, ctx, x, st);
    if (!xk) return false;
    tfc_tensor **xs = tfc_malloc((size_t)steps * 2 * sizeof *xs);
    if (!xs) return tfc_status_oom(st, l->name, (size_t)steps * 2 * sizeof *xs);
    tfc_tensor **hs = xs + steps;
    tfc_attr ua[2] = {TFC_ATTR_I("num", steps), TFC_ATTR_I("axis", 1)};
    tfc_rnn_step_ctx sc = {0};
    bool ok = tfc_execute(ctx, "Unpack", &xk, 1, ua, 2, xs, (int)steps, st) == steps &&
              tfc_rnn_step_prepare(r, ctx, &sc, st);
    if (ok && training && r->recurrent_dropout > 0)
        ok = (sc.rec_mask = tfc_keras_dropout_mask(ctx, dt, (int64_t[]){batch, r->units}, 2, r->recurrent_dropout, st));
    tfc_tensor *states[2] = {NULL, NULL};
    for (int i = 0; ok && i < ns; i++)
        ok = (states[i] = n_in > 1 ? in[1 + i] : tfc_zeros(ctx, dt, (int64_t[]){batch, r->units}, 2, st)) != NULL;
    for (int64_t t = 0; ok && t < steps; t++) {
        ok = tfc_rnn_cell_step(r, ctx, &sc, xs[t], states, st);
        hs[t] = states[0];
    }
    tfc_tensor_unref(sc.one);
    if (ok && r->return_sequences) {
        tfc_attr pa[2] = {TFC_ATTR_I("N", steps), TFC_ATTR_I("axis", r->time_major ? 0 : 1)};
        ok = (out[0] = tfc_emit(ctx, "Pack", hs, (int)steps, pa, 2, st)) != NULL;
    } else if (ok) {
        out[0] = states[0];
    }
    /* the states as outputs of their own (the last output may be the same tensor as h) */
    for (int i = 1; ok && i < n_out; i++) ok = (out[i] = tfc_emit(ctx, "Identity", &states[i - 1], 1, NULL, 0, st));
    tfc_free(xs);
    return ok;
}

static const tfc_layer_class rnn_classes[3] = {
    {.class_name = "SimpleRNN", .size = sizeof(tfc_rnn), .build = rnn_build, .compute_output_shape = rnn_output_shape,
     .call = rnn_call, .get_config = tfc_rnn_get_config},
    {.class_name = "LSTM", .size = sizeof(tfc_rnn), .build = rnn_build, .compute_output_shape = rnn_output_shape,
     .call = rnn_call, .get_config = tfc_rnn_get_config},
    {.class_name = "GRU", .size = sizeof(tfc_rnn), .build = rnn_build, .compute_output_shape = rnn_output_shape,
     .call = rnn_call, .get_config = tfc_rnn_get_config},
};

bool tfc_rnn_is(const tfc_layer *l) { return l && l->cls >= rnn_classes && l->cls < rnn_classes + 3; }

static void copy_name(char *dst, size_t size, const char *src, const char *dflt) {
    snprintf(dst, size, "%s", src && *src ? src : dflt);
}

tfc_layer *tfc_rnn_new(tfc_rnn_kind kind, const tfc_rnn_layer_opts *o) {
    tfc_rnn *r = TFC_LAYER_NEW(tfc_rnn, &rnn_classes[kind], o);
    if (!r) return NULL;
    r->kind = kind;
    r->units = o->units;
    copy_name(r->activation, sizeof r->activation, o->activation, "tanh");
    copy_name(r->recurrent_activation, sizeof r->recurrent_activation, o->recurrent_activation, "sigmoid");
    r->use_bias = TFC_FLAG(o->use_bias, true);
    r->unit_forget_bias = kind == TFC_RNN_LSTM && TFC_FLAG(o->unit_forget_bias, true);
    r->reset_after = kind == TFC_RNN_GRU && TFC_FLAG(o->reset_after, true);
    tfc_kinit_set(&r->kernel_init, o->kernel_initializer, "glorot_uniform");
    tfc_kinit_set(&r->recurrent_init, o->recurrent_initializer, "orthogonal");
    tfc_kinit_set(&r->bias_init, o->bias_initializer, "zeros");
    if ((r->has_kernel_reg = o->kernel_regularizer)) r->kernel_reg = *o->kernel_regularizer;
    if ((r->has_recurrent_reg = o->recurrent_regularizer)) r->recurrent_reg = *o->recurrent_regularizer;
    if ((r->has_bias_reg = o->bias_regularizer)) r->bias_reg = *o->bias_regularizer;
    if ((r->base.has_activity_reg = o->activity_regularizer)) r->base.activity_reg = *o->activity_regularizer;
    r->dropout = o->dropout;
    r->recurrent_dropout = o->recurrent_dropout;
    r->return_sequences = o->return_sequences;
    r->return_state = o->return_state;
    r->go_backwards = o->go_backwards;
    r->stateful = o->stateful;
    r->unroll = o->unroll;
    r->time_major = o->time_major;
    r->implementation = o->implementation ? o->implementation : 2;
    /* Keras's LSTM/GRU cells fall back to implementation 1 with recurrent dropout (and say so in the config) */
    if (r->recurrent_dropout != 0 && r->implementation != 1) r->implementation = 1;
    return &r->base;
}

tfc_layer *tfc_layers_simple_rnn_new(const tfc_rnn_layer_opts *o) { return tfc_rnn_new(TFC_RNN_SIMPLE, o); }
tfc_layer *tfc_layers_lstm_new(const tfc_rnn_layer_opts *o) { return tfc_rnn_new(TFC_RNN_LSTM, o); }
tfc_layer *tfc_layers_gru_new(const tfc_rnn_layer_opts *o) { return tfc_rnn_new(TFC_RNN_GRU, o); }
