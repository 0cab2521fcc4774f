/* tf.keras.layers.Dropout: in training, keeps each value with probability 1 - rate and scales it by
 * 1 / (1 - rate) (tf.nn.dropout); identity at inference and for rate 0. */
#include <stdio.h>
#include <string.h>

#include "keras/keras_internal.h"
#include "tfc/ops/random.h"

typedef struct {
    tfc_layer base;
    double rate;
    int64_t noise_shape[TFC_MAX_RANK]; /* -1 = None: the input's dim */
    int noise_rank;                    /* 0 = noise_shape None */
    int64_t seed;
    bool has_seed;
} dropout;

static bool dropout_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st) {
    dropout *d = (dropout *)l;
    if (!(d->rate >= 0 && d->rate <= 1))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": invalid value received for `rate`, expected a value between 0 and 1, "
                              "got: %g",
                              l->name, d->rate);
    if (d->noise_rank > 0 && in[0].rank >= 0 && d->noise_rank != in[0].rank)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": noise_shape has %d dims but the input %s has %d", l->name, d->noise_rank,
                              TFC_KSHP(&in[0]), in[0].rank);
    return tfc_keras_same_shape(l, in, n_in, out, n_out, st);
}

static bool dropout_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static bool dropout_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                         bool training, tfc_status *st) {
    dropout *d = (dropout *)l;
    tfc_tensor *x = in[0];
    if (!training || d->rate == 0) return (out[0] = tfc_emit(ctx, "Identity", &x, 1, NULL, 0, st)) != NULL;
    if (d->rate >= 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": `rate` must be a scalar tensor or a float in the range [0, 1). "
                              "Received: rate=%g",
                              l->name, d->rate);
    tfc_shape shape;
    if (!dropout_output_shape(l, tfc_tensor_shape(x), 1, &shape, &(int){0}, st)) return false;
    if (d->noise_rank > 0)
        for (int i = 0; i < d->noise_rank; i++)
            if (d->noise_shape[i] >= 0) shape.dims[i] = d->noise_shape[i];
    tfc_dtype dt = tfc_tensor_dtype(x);
    bool full = true; /* the noise covers x (noise_shape None or x's own shape) */
    for (int i = 0; i < shape.rank; i++) full &= shape.dims[i] == tfc_tensor_shape(x)->dims[i];
    tfc_variable *rng = tfc_keras_step_rng();
    if (full && (dt == TFC_FLOAT || dt == TFC_DOUBLE) && rng) {
        /* a model's training step: the seed pair from the model's seed generator (then its counter + 1), the
         * layer's seed as a salt (_TfcDropoutSeeded) */
        tfc_tensor *seed = tfc_variable_read(ctx, rng, st), *one = seed ? tfc_vec_i64((const int64_t[]){0, 1}, 2, st) : NULL;
        bool ok = one && tfc_variable_assign_add(ctx, rng, one, st);
        tfc_attr a[2] = {TFC_ATTR_F("rate", d->rate), TFC_ATTR_I("salt", d->has_seed ? d->seed : 0)};
        tfc_tensor *outs[2] = {NULL, NULL};
        ok = ok && tfc_execute(ctx, "_TfcDropoutSeeded", (tfc_tensor *[]){x, seed}, 2, a, 2, outs, 2, st) >= 0;
        tfc_tensor_unref(one);
        if (seed) tfc_tensor_unref(tfc_keep(ctx, seed));
        if (!ok) return false;
        out[0] = outs[0];
        tfc_tensor_unref(tfc_keep(ctx, outs[1]));
        return true;
    }
    if (full && (dt == TFC_FLOAT || dt == TFC_DOUBLE)) {
        /* the same values and random stream as the ops below, in one pass (_TfcDropout, kernels/cpu/random.c);
         * its mask output is kept for the gradient */
        int64_t s1, s2;
        tfc_random_get_seed(ctx, d->has_seed ? d->seed : TFC_RANDOM_NO_SEED, &s1, &s2);
        tfc_attr a[3] = {TFC_ATTR_F("rate", d->rate), TFC_ATTR_I("seed", s1), TFC_ATTR_I("seed2", s2)};
        tfc_tensor *outs[2] = {NULL, NULL};
        if (tfc_execute(ctx, "_TfcDropout", &x, 1, a, 3, outs, 2, st) < 0) return false;
        out[0] = outs[0];
        tfc_tensor_unref(tfc_keep(ctx, outs[1]));
        return true;
    }
    tfc_attr ca = TFC_ATTR_T("DstT", dt);
    /* tf.nn.dropout: x * scale * cast(uniform(noise_shape) >= rate) */
    tfc_tensor *scale = tfc_scalar(dt, 1.0 / (1.0 - d->rate), st);
    tfc_tensor *rate = scale ? tfc_scalar(dt, d->rate, st) : NULL;
    tfc_tensor *u = rate ? tfc_random_uniform(ctx, shape.dims, shape.rank, dt, 0, 1,
                                              d->has_seed ? d->seed : TFC_RANDOM_NO_SEED, st)
                         : NULL;
    tfc_tensor *keep = u ? tfc_emit(ctx, "GreaterEqual", (tfc_tensor *[]){u, rate}, 2, NULL, 0, st) : NULL;
    tfc_tensor *mask = keep ? tfc_emit(ctx, "Cast", &keep, 1, &ca, 1, st) : NULL;
    tfc_tensor *scaled = mask ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, scale}, 2, NULL, 0, st) : NULL;
    out[0] = scaled ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){scaled, mask}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(scale);
    tfc_tensor_unref(rate);
    return out[0] != NULL;
}

static bool dropout_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const dropout *d = (const dropout *)l;
    cJSON *cfg = vcfg, *ns = NULL;
    if (d->noise_rank > 0) {
        tfc_shape s = {.rank = d->noise_rank};
        memcpy(s.dims, d->noise_shape, sizeof s.dims);
        if (!(ns = tfc_json_shape(&s))) return false;
    } else if (!(ns = cJSON_CreateNull())) {
        return false;
    }
    if (!cJSON_AddNumberToObject(cfg, "rate", d->rate) || !cJSON_AddItemToObject(cfg, "noise_shape", ns)) {
        cJSON_Delete(ns);
        return false;
    }
    return d->has_seed ? cJSON_AddNumberToObject(cfg, "seed", (double)d->seed) != NULL
                       : cJSON_AddNullToObject(cfg, "seed") != NULL;
}

static const tfc_layer_class dropout_class = {
    .class_name = "Dropout",
    .size = sizeof(dropout),
    .build = dropout_build,
    .compute_output_shape = dropout_output_shape,
    .call = dropout_call,
    .get_config = dropout_get_config,
};

tfc_layer *tfc_layers_dropout_new(const tfc_dropout_opts *o) {
    dropout *d = TFC_LAYER_NEW(dropout, &dropout_class, o);
    if (!d) return NULL;
    d->base.keeps_input_dtype = true;
    d->rate = o->rate;
    d->noise_rank = o->noise_rank > TFC_MAX_RANK ? TFC_MAX_RANK : o->noise_rank;
    for (int i = 0; i < d->noise_rank; i++) d->noise_shape[i] = o->noise_shape[i] < 0 ? -1 : o->noise_shape[i];
    d->seed = o->seed;
    d->has_seed = o->has_seed;
    return &d->base;
}

tfc_layer *tfc_keras_from_config_dropout(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_dropout_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool has_rate;
    if (!tfc_json_get_f64(cfg, "rate", &o.rate, &has_rate, st) ||
        !tfc_json_get_i64_list(cfg, "noise_shape", o.noise_shape, TFC_MAX_RANK, &o.noise_rank, NULL, st) ||
        !tfc_json_get_i64(cfg, "seed", &o.seed, &o.has_seed, st))
        return NULL;
    if (!has_rate) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Dropout: the config has no \"rate\"");
        return NULL;
    }
    tfc_layer *l = tfc_layers_dropout_new(&o);
    if (!l) tfc_status_oom(st, "Dropout", sizeof(dropout));
    return l;
}
