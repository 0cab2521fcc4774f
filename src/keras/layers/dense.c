/* tf.keras.layers.Dense: activation(x @ kernel + bias) on the last axis of [batch, ..., in]. */
#include <string.h>

#include "eager/context_internal.h"
#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    int64_t units;
    char *activation;
    bool use_bias;
    tfc_kinit kernel_init, bias_init;
    tfc_regularizer kernel_reg, bias_reg;
    bool has_kernel_reg, has_bias_reg;
    tfc_variable *kernel, *bias; /* owned by base.weights */
} dense;

static bool dense_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                               tfc_status *st) {
    dense *d = (dense *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    if (d->units <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": received an invalid value for `units`, expected a positive integer. "
                              "Received: units=%lld",
                              l->name, (long long)d->units);
    if (!tfc_layer_check_activation(l, d->activation, st)) return false;
    const tfc_shape *s = &in[0];
    if (s->rank >= 0 && s->rank < 2)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Input 0 of layer \"%s\" is incompatible with the layer: expected min_ndim=2, found "
                              "ndim=%d. Full shape received: %s",
                              l->name, s->rank, TFC_KSHP(s));
    if (s->rank < 0 || s->dims[s->rank - 1] < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": the last dimension of the inputs to a Dense layer should be defined. "
                              "Found None. Full input shape received: %s",
                              l->name, TFC_KSHP(s));
    out[0] = *s;
    out[0].dims[s->rank - 1] = d->units;
    *n_out = 1;
    return true;
}

static bool dense_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    dense *d = (dense *)l;
    int64_t last = in[0].dims[in[0].rank - 1];
    tfc_shape ks = {.rank = 2, .dims = {last, d->units}}, bs = {.rank = 1, .dims = {d->units}};
    d->kernel = tfc_layer_add_weight(l, ctx, "kernel", &ks, l->dtype, &d->kernel_init.init,
                                     d->has_kernel_reg ? &d->kernel_reg : NULL, true, st);
    if (!d->kernel) return false;
    if (d->use_bias) {
        d->bias = tfc_layer_add_weight(l, ctx, "bias", &bs, l->dtype, &d->bias_init.init,
                                       d->has_bias_reg ? &d->bias_reg : NULL, true, st);
        if (!d->bias) return false;
    }
    /* InputSpec(min_ndim=2, axes={-1: last}) */
    l->input_spec[0] = (tfc_input_spec){.ndim = -1, .min_ndim = 2, .n_axes = 1, .axes = {-1}, .values = {last}};
    l->has_input_spec = true;
    return true;
}

static bool dense_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       bool training, tfc_status *st) {
    dense *d = (dense *)l;
    tfc_tensor *x = in[0];
    if (tfc_tensor_dtype(x) != l->compute_dtype) { /* core_ops.dense casts any input to the compute dtype */
        tfc_attr a = TFC_ATTR_T("DstT", l->compute_dtype);
        if (!(x = tfc_emit(ctx, "Cast", &x, 1, &a, 1, st))) return false;
    }
    /* inference reads the weights without ReadVariableOp (no tape to record them) */
    tfc_tensor *k = training ? tfc_variable_read(ctx, d->kernel, st) : tfc_variable_read_untaped(ctx, d->kernel, st);
    if (!(k = tfc_layer_cast_compute(l, ctx, k, st))) return false; /* mixed policies: as AutoCastVariable */
    /* float32 with a bias and an activation the fused op has: one _FusedMatMul, which adds the bias and
     * applies the activation as the product stores each output tile */
    const char *fused = d->use_bias && l->compute_dtype == TFC_FLOAT && tfc_tensor_dtype(k) == TFC_FLOAT
                            ? tfc_activation_fused_op(d->activation)
                            : NULL;
    /* another activation (softmax): the bias in the product's epilogue all the same, then the activation (one
     * op fewer per call; in training the fused op's gradient is BiasAddGrad and MatMul's two products, as for
     * MatMul + BiasAdd) */
    const bool bias_only = !fused && d->use_bias && l->compute_dtype == TFC_FLOAT && tfc_tensor_dtype(k) == TFC_FLOAT;
    if (bias_only) fused = "";
    tfc_tensor *b = NULL;
    tfc_attr at[4];
    const char *ops[2];
    int na = 0;
    if (fused) {
        if (!(b = training ? tfc_variable_read(ctx, d->bias, st) : tfc_variable_read_untaped(ctx, d->bias, st)))
            return false;
        na = tfc_activation_fused_attrs(fused, ops, at, 0);
    }
    const char *mm = fused ? "_FusedMatMul" : "MatMul";
    int rank = tfc_tensor_rank(x), n_mm = fused ? 3 : 2;
    tfc_tensor *y;
    if (rank == 2) {
        y = tfc_emit(ctx, mm, (tfc_tensor *[]){x, k, b}, n_mm, at, na, st);
    } else {
        /* tensordot over the last axis: [..., in] -> [-1, in] @ kernel -> [..., units] */
        int64_t flat[2] = {-1, tfc_tensor_dim(x, -1)}, back[TFC_MAX_RANK];
        for (int i = 0; i < rank - 1; i++) back[i] = tfc_tensor_dim(x, i);
        back[rank - 1] = d->units;
        tfc_tensor *s1 = tfc_vec_i64(flat, 2, st), *s2 = s1 ? tfc_vec_i64(back, rank, st) : NULL;
        tfc_tensor *x2 = s2 ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s1}, 2, NULL, 0, st) : NULL;
        tfc_tensor *y2 = x2 ? tfc_emit(ctx, mm, (tfc_tensor *[]){x2, k, b}, n_mm, at, na, st) : NULL;
        y = y2 ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){y2, s2}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(s1);
        tfc_tensor_unref(s2);
    }
    if (!y) return false;
    if (bias_only) return (out[0] = tfc_activation_apply(ctx, d->activation, y, st)) != NULL;
    if (fused) return (out[0] = y) != NULL;
    if (d->use_bias && (!(b = tfc_layer_read_var(l, ctx, d->bias, st)) ||
                        !(y = tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, b}, 2, NULL, 0, st))))
        return false;
    return (out[0] = tfc_activation_apply(ctx, d->activation, y, st)) != NULL;
}

static bool dense_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const dense *d = (const dense *)l;
    cJSON *cfg = vcfg;
    return cJSON_AddNumberToObject(cfg, "units", (double)d->units) &&
           tfc_json_add_kernel_bias_tail(cfg, l, d->activation, d->use_bias, &d->kernel_init, &d->bias_init,
                                         &d->kernel_reg, d->has_kernel_reg, &d->bias_reg, d->has_bias_reg);
}

static void dense_destroy(tfc_layer *l) { tfc_free(((dense *)l)->activation); }

static const tfc_layer_class dense_class = {
    .class_name = "Dense",
    .size = sizeof(dense),
    .build = dense_build,
    .compute_output_shape = dense_output_shape,
    .call = dense_call,
    .get_config = dense_get_config,
    .destroy = dense_destroy,
};

tfc_layer *tfc_layers_dense_new(const tfc_dense_opts *o) {
    dense *d = TFC_LAYER_NEW(dense, &dense_class, o);
    if (!d) return NULL;
    d->units = o->units;
    d->activation = tfc_strdup(o->activation && *o->activation ? o->activation : "linear");
    if (!d->activation) {
        tfc_layer_unref(&d->base);
        return NULL;
    }
    d->use_bias = TFC_FLAG(o->use_bias, true);
    tfc_kinit_set(&d->kernel_init, o->kernel_initializer, "glorot_uniform");
    tfc_kinit_set(&d->bias_init, o->bias_initializer, "zeros");
    if ((d->has_kernel_reg = o->kernel_regularizer)) d->kernel_reg = *o->kernel_regularizer;
    if ((d->has_bias_reg = o->bias_regularizer)) d->bias_reg = *o->bias_regularizer;
    if ((d->base.has_activity_reg = o->activity_regularizer)) d->base.activity_reg = *o->activity_regularizer;
    return &d->base;
}

tfc_layer *tfc_keras_from_config_dense(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_dense_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool has_units, use_bias = true, hk, hb, ha;
    char kn[32], bn[32];
    tfc_initializer ki, bi;
    tfc_regularizer kr, br, ar;
    if (!tfc_json_get_i64(cfg, "units", &o.units, &has_units, st) ||
        !tfc_json_get_str(cfg, "activation", &o.activation, NULL, st) ||
        !tfc_json_get_bool(cfg, "use_bias", &use_bias, NULL, st))
        return NULL;
    if (!has_units) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Dense: the config has no \"units\"");
        return NULL;
    }
    o.use_bias = use_bias ? TFC_YES : TFC_NO;
    ki.name = NULL;
    bi.name = NULL;
    if (!tfc_json_get_initializer(cfg, "kernel_initializer", &ki, kn, sizeof kn, st) ||
        !tfc_json_get_initializer(cfg, "bias_initializer", &bi, bn, sizeof bn, st) ||
        !tfc_json_get_regularizer(cfg, "kernel_regularizer", &kr, &hk, st) ||
        !tfc_json_get_regularizer(cfg, "bias_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &ar, &ha, st))
        return NULL;
    if (ki.name) o.kernel_initializer = &ki;
    if (bi.name) o.bias_initializer = &bi;
    if (hk) o.kernel_regularizer = &kr;
    if (hb) o.bias_regularizer = &br;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = tfc_layers_dense_new(&o);
    if (!l) tfc_status_oom(st, "Dense", sizeof(dense));
    return l;
}
