/* tf.keras.layers.BatchNormalization (Keras 2's BatchNormalizationBase with V2 behaviour):
 *   y = gamma * (x - mean) / sqrt(var + epsilon) + beta, per feature along `axis`.
 * training (and trainable): batch statistics; the moving statistics then move towards them by 1 - momentum.
 * inference, or a frozen layer (trainable false, as Keras 2.x): the moving statistics.
 *
 * Like Keras, 4-D and 5-D inputs normalised over their channel axis (1 or last) take the fused path
 * (FusedBatchNormV3): in training the op returns the moving statistics already blended with the batch mean and
 * the *unbiased* batch variance (exponential_avg_factor = 1 - momentum, epsilon at least 1.001e-5). Every other
 * case computes tf.nn.moments (biased variance) and tf.nn.batch_normalization with ops and updates
 * moving -= (moving - batch) * (1 - momentum). Weights: gamma (scale), beta (center) trainable; moving_mean,
 * moving_variance non-trainable; shaped [C] for one axis, else the input rank with 1 outside the axes. */
#include <stdio.h>
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/ops/array.h"
#include "tfc/ops/nn.h"

typedef struct {
    tfc_layer base;
    int64_t axes[TFC_MAX_RANK]; /* as configured until build, then normalised (non-negative) */
    int n_axes;
    bool axis_is_list;          /* the config shows a list (always after build, as Keras) */
    double momentum, epsilon;
    bool center, scale;
    tfc_kinit beta_init, gamma_init, mean_init, var_init;
    tfc_regularizer beta_reg, gamma_reg;
    bool has_beta_reg, has_gamma_reg;
    /* set by build */
    bool fused;
    const char *fused_format; /* "NHWC", "NCHW", "NDHWC", "NCDHW" */
    tfc_shape param_shape;
    tfc_dtype param_dtype;
    tfc_variable *gamma, *beta, *moving_mean, *moving_variance; /* owned by base.weights */
} batch_norm;

static tfc_dtype param_dtype_of(tfc_dtype dt) { return dt == TFC_HALF || dt == TFC_BFLOAT16 ? TFC_FLOAT : dt; }

/* Keras's _fused_can_be_used at construction: one axis among -4, -3, -1, 1, 3, 4 and a float32/16 dtype. */
static bool fused_candidate(const batch_norm *b) {
    if (b->n_axes != 1) return false;
    int64_t a = b->axes[0];
    tfc_dtype dt = b->base.dtype;
    return (a == -4 || a == -3 || a == -1 || a == 1 || a == 3 || a == 4) &&
           (dt == TFC_FLOAT || dt == TFC_HALF || dt == TFC_BFLOAT16);
}

/* Validates the input against the axes and decides the path; *norm gets the non-negative axes. */
static bool bn_plan(batch_norm *b, const tfc_shape *s, int64_t *norm, bool *fused, const char **fmt,
                    tfc_status *st) {
    tfc_layer *l = &b->base;
    if (!tfc_kconv_validate_axes(l, b->axes, b->n_axes, s->rank, norm, st)) return false;
    char buf[TFC_SHAPE_STR];
    for (int i = 0; i < b->n_axes; i++)
        if (s->dims[norm[i]] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Input has undefined `axis` dimension. Received input with shape %s and axis=%s "
                                  "(layer \"%s\")",
                                  TFC_KSHP(s), tfc_kconv_tuple_str(norm, b->n_axes, buf, sizeof buf), l->name);
    *fused = false;
    *fmt = NULL;
    if (fused_candidate(b) && (s->rank == 4 || s->rank == 5)) {
        int64_t a = norm[0];
        if (a == 1) *fmt = s->rank == 4 ? "NCHW" : "NCDHW";
        else if (a == s->rank - 1) *fmt = s->rank == 4 ? "NHWC" : "NDHWC";
        else if (s->rank == 4)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Unsupported axis. The use of `fused=True` is only possible with `axis=1` or "
                                  "`axis=3` for 4D input tensors. Received: axis=%s (layer \"%s\")",
                                  tfc_kconv_tuple_str(norm, 1, buf, sizeof buf), l->name);
        *fused = *fmt != NULL;
    }
    return true;
}

static bool bn_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    batch_norm *b = (batch_norm *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    if (in[0].rank < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Input has undefined rank. (layer \"%s\")", l->name);
    int64_t norm[TFC_MAX_RANK];
    bool fused;
    const char *fmt;
    if (!bn_plan(b, &in[0], norm, &fused, &fmt, st)) return false;
    out[0] = in[0];
    *n_out = 1;
    return true;
}

static bool bn_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    batch_norm *b = (batch_norm *)l;
    const tfc_shape *s = &in[0];
    int64_t norm[TFC_MAX_RANK];
    if (!bn_plan(b, s, norm, &b->fused, &b->fused_format, st)) return false;
    if (b->n_axes == 1) {
        b->param_shape = (tfc_shape){.rank = 1, .dims = {s->dims[norm[0]]}};
    } else {
        b->param_shape = (tfc_shape){.rank = s->rank};
        for (int d = 0; d < s->rank; d++) b->param_shape.dims[d] = 1;
        for (int i = 0; i < b->n_axes; i++) b->param_shape.dims[norm[i]] = s->dims[norm[i]];
    }
    b->param_dtype = param_dtype_of(l->dtype);
    if (b->scale && !(b->gamma = tfc_layer_add_weight(l, ctx, "gamma", &b->param_shape, b->param_dtype,
                                                      &b->gamma_init.init, b->has_gamma_reg ? &b->gamma_reg : NULL,
                                                      true, st)))
        return false;
    if (b->center && !(b->beta = tfc_layer_add_weight(l, ctx, "beta", &b->param_shape, b->param_dtype,
                                                      &b->beta_init.init, b->has_beta_reg ? &b->beta_reg : NULL, true,
                                                      st)))
        return false;
    if (!(b->moving_mean = tfc_layer_add_weight(l, ctx, "moving_mean", &b->param_shape, b->param_dtype,
                                                &b->mean_init.init, NULL, false, st)) ||
        !(b->moving_variance = tfc_layer_add_weight(l, ctx, "moving_variance", &b->param_shape, b->param_dtype,
                                                    &b->var_init.init, NULL, false, st)))
        return false;
    /* InputSpec(ndim=rank, axes={axis: dim}); the config now shows the normalised list, as Keras's. */
    tfc_input_spec *sp = &l->input_spec[0];
    *sp = (tfc_input_spec){.ndim = s->rank, .n_axes = b->n_axes};
    for (int i = 0; i < b->n_axes; i++) {
        sp->axes[i] = (int)norm[i];
        sp->values[i] = s->dims[norm[i]];
        b->axes[i] = norm[i];
    }
    b->axis_is_list = true;
    l->has_input_spec = true;
    return true;
}

/* A parameter read for the computation: the variable's value, or a constant when the layer has none. */
static tfc_tensor *param(batch_norm *b, tfc_ctx *ctx, tfc_variable *v, double fill, tfc_status *st) {
    if (v) return tfc_variable_read(ctx, v, st);
    return fill == 0 ? tfc_zeros(ctx, b->param_dtype, b->param_shape.dims, b->param_shape.rank, st)
                     : tfc_ones(ctx, b->param_dtype, b->param_shape.dims, b->param_shape.rank, st);
}

static tfc_tensor *cast(tfc_ctx *ctx, tfc_tensor *x, tfc_dtype dt, tfc_status *st) {
    if (tfc_tensor_dtype(x) == dt) return x;
    tfc_attr a = TFC_ATTR_T("DstT", dt);
    return tfc_emit(ctx, "Cast", &x, 1, &a, 1, st);
}

static tfc_tensor *scalar(tfc_ctx *ctx, tfc_dtype dt, double v, tfc_status *st) {
    tfc_tensor *s = tfc_scalar_f64(v, st);
    if (!s) return NULL;
    tfc_tensor *r = dt == TFC_DOUBLE ? tfc_emit(ctx, "Identity", &s, 1, NULL, 0, st) : cast(ctx, s, dt, st);
    tfc_tensor_unref(s);
    return r;
}

static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *s = tfc_vec_i64(dims, rank, st);
    if (!s) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s}, 2, NULL, 0, st);
    tfc_tensor_unref(s);
    return r;
}

static bool fused_call(batch_norm *b, tfc_ctx *ctx, tfc_tensor *x, bool training, tfc_tensor **out, tfc_status *st) {
    tfc_tensor *g = param(b, ctx, b->gamma, 1, st), *be = g ? param(b, ctx, b->beta, 0, st) : NULL;
    tfc_tensor *mm = be ? tfc_variable_read(ctx, b->moving_mean, st) : NULL;
    tfc_tensor *mv = mm ? tfc_variable_read(ctx, b->moving_variance, st) : NULL;
    if (!mv) return false;
    /* tf.compat.v1.nn.fused_batch_norm raises epsilon to cuDNN's minimum */
    double eps = b->epsilon > 1.001e-5 ? b->epsilon : 1.001e-5;
    tfc_tensor *bm = NULL, *bv = NULL;
    tfc_tensor *y = tfc_fused_batch_norm(ctx, x, g, be, mm, mv, eps, training ? 1.0 - b->momentum : 1.0,
                                         b->fused_format, training, training ? &bm : NULL, training ? &bv : NULL, st);
    if (!y) return false;
    if (training && (!tfc_variable_assign(ctx, b->moving_mean, bm, st) ||
                     !tfc_variable_assign(ctx, b->moving_variance, bv, st)))
        return false;
    *out = y;
    return true;
}

static bool moments_call(batch_norm *b, tfc_ctx *ctx, tfc_tensor *x, bool training, tfc_tensor **out,
                         tfc_status *st) {
    tfc_dtype in_dt = tfc_tensor_dtype(x), pdt = b->param_dtype;
    if (!(x = cast(ctx, x, pdt, st))) return false;
    int rank = tfc_tensor_rank(x);
    int64_t red[TFC_MAX_RANK], bshape[TFC_MAX_RANK];
    int n_red = 0;
    bool is_axis[TFC_MAX_RANK] = {false};
    for (int i = 0; i < b->n_axes; i++) is_axis[b->axes[i]] = true;
    for (int d = 0; d < rank; d++) {
        if (!is_axis[d]) red[n_red++] = d;
        bshape[d] = d == b->axes[0] ? tfc_tensor_dim(x, d) : 1;
    }
    /* Keras's _broadcast: one-axis parameters are reshaped unless the axis is the last one. */
    bool reshape_params = b->param_shape.rank != rank && !is_axis[rank - 1];
    tfc_tensor *mean, *var;
    if (training) {
        tfc_tensor *ax = tfc_vec_i64(red, n_red, st);
        if (!ax) return false;
        tfc_attr keep = TFC_ATTR_B("keep_dims", true);
        tfc_tensor *m = tfc_emit(ctx, "Mean", (tfc_tensor *[]){x, ax}, 2, &keep, 1, st);
        tfc_tensor *sg = m ? tfc_emit(ctx, "StopGradient", &m, 1, NULL, 0, st) : NULL;
        tfc_tensor *sq = sg ? tfc_emit(ctx, "SquaredDifference", (tfc_tensor *[]){x, sg}, 2, NULL, 0, st) : NULL;
        tfc_tensor *v = sq ? tfc_emit(ctx, "Mean", (tfc_tensor *[]){sq, ax}, 2, &keep, 1, st) : NULL;
        tfc_tensor_unref(ax);
        if (!v) return false;
        /* the moments' shape is the parameters' (squeezed for one axis) */
        if (!(mean = reshape(ctx, m, b->param_shape.dims, b->param_shape.rank, st)) ||
            !(var = reshape(ctx, v, b->param_shape.dims, b->param_shape.rank, st)))
            return false;
        /* moving -= (moving - batch) * (1 - momentum) */
        /* Keras converts 1 - momentum to a float32 tensor before casting it to the variables' dtype */
        tfc_tensor *decay = scalar(ctx, pdt, (float)(1.0 - b->momentum), st);
        if (!decay) return false;
        tfc_variable *mv[2] = {b->moving_mean, b->moving_variance};
        tfc_tensor *val[2] = {mean, var}, *delta[2];
        for (int i = 0; i < 2; i++) {
            tfc_tensor *cur = tfc_variable_read(ctx, mv[i], st);
            tfc_tensor *diff = cur ? tfc_emit(ctx, "Sub", (tfc_tensor *[]){cur, val[i]}, 2, NULL, 0, st) : NULL;
            delta[i] = diff ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){diff, decay}, 2, NULL, 0, st) : NULL;
            if (!delta[i]) return false;
        }
        for (int i = 0; i < 2; i++)
            if (!tfc_variable_assign_sub(ctx, mv[i], delta[i], st)) return false;
    } else {
        if (!(mean = tfc_variable_read(ctx, b->moving_mean, st)) ||
            !(var = tfc_variable_read(ctx, b->moving_variance, st)))
            return false;
    }
    /* one read at a time: a successful second read would clear the status of a failed first one */
    tfc_tensor *g = NULL, *be = NULL;
    if (b->gamma && !(g = tfc_variable_read(ctx, b->gamma, st))) return false;
    if (b->beta && !(be = tfc_variable_read(ctx, b->beta, st))) return false;
    if (reshape_params) {
        tfc_tensor **p[4] = {&mean, &var, &g, &be};
        for (int i = 0; i < 4; i++)
            if (*p[i] && !(*p[i] = reshape(ctx, *p[i], bshape, rank, st))) return false;
    }
    /* tf.nn.batch_normalization: inv = rsqrt(var + eps) * scale; y = x * inv + (offset - mean * inv) */
    tfc_tensor *eps = scalar(ctx, pdt, b->epsilon, st);
    tfc_tensor *ve = eps ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){var, eps}, 2, NULL, 0, st) : NULL;
    tfc_tensor *inv = ve ? tfc_emit(ctx, "Rsqrt", &ve, 1, NULL, 0, st) : NULL;
    if (inv && g) inv = tfc_emit(ctx, "Mul", (tfc_tensor *[]){inv, g}, 2, NULL, 0, st);
    tfc_tensor *mi = inv ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){mean, inv}, 2, NULL, 0, st) : NULL;
    tfc_tensor *off = !mi ? NULL
                      : be ? tfc_emit(ctx, "Sub", (tfc_tensor *[]){be, mi}, 2, NULL, 0, st)
                           : tfc_emit(ctx, "Neg", &mi, 1, NULL, 0, st);
    tfc_tensor *xi = off ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, inv}, 2, NULL, 0, st) : NULL;
    tfc_tensor *y = xi ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){xi, off}, 2, NULL, 0, st) : NULL;
    if (!y || !(y = cast(ctx, y, in_dt, st))) return false;
    *out = y;
    return true;
}

static bool bn_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    batch_norm *b = (batch_norm *)l;
    /* A frozen BatchNormalization always runs in inference mode (Keras 2's _get_training_value). */
    training = training && l->trainable;
    return b->fused ? fused_call(b, ctx, in[0], training, &out[0], st)
                    : moments_call(b, ctx, in[0], training, &out[0], st);
}

static bool bn_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const batch_norm *b = (const batch_norm *)l;
    cJSON *cfg = vcfg;
    cJSON *axis = b->axis_is_list ? tfc_json_int_array(b->axes, b->n_axes) : cJSON_CreateNumber((double)b->axes[0]);
    if (!axis || !cJSON_AddItemToObject(cfg, "axis", axis)) {
        cJSON_Delete(axis);
        return false;
    }
    return cJSON_AddNumberToObject(cfg, "momentum", b->momentum) &&
           cJSON_AddNumberToObject(cfg, "epsilon", b->epsilon) && cJSON_AddBoolToObject(cfg, "center", b->center) &&
           cJSON_AddBoolToObject(cfg, "scale", b->scale) &&
           tfc_json_add_initializer(cfg, "beta_initializer", &b->beta_init.init) &&
           tfc_json_add_initializer(cfg, "gamma_initializer", &b->gamma_init.init) &&
           tfc_json_add_initializer(cfg, "moving_mean_initializer", &b->mean_init.init) &&
           tfc_json_add_initializer(cfg, "moving_variance_initializer", &b->var_init.init) &&
           tfc_json_add_regularizer(cfg, "beta_regularizer", &b->beta_reg, b->has_beta_reg) &&
           tfc_json_add_regularizer(cfg, "gamma_regularizer", &b->gamma_reg, b->has_gamma_reg) &&
           cJSON_AddNullToObject(cfg, "beta_constraint") && cJSON_AddNullToObject(cfg, "gamma_constraint");
}

static const tfc_layer_class batch_norm_class = {
    .class_name = "BatchNormalization",
    .size = sizeof(batch_norm),
    .build = bn_build,
    .compute_output_shape = bn_output_shape,
    .call = bn_call,
    .get_config = bn_get_config,
};

tfc_layer *tfc_layers_batch_normalization_new(const tfc_batch_normalization_opts *o) {
    batch_norm *b = TFC_LAYER_NEW(batch_norm, &batch_norm_class, o);
    if (!b) return NULL;
    if (o->n_axes > 0) {
        b->n_axes = o->n_axes > TFC_MAX_RANK ? TFC_MAX_RANK : o->n_axes;
        memcpy(b->axes, o->axes, (size_t)b->n_axes * sizeof *b->axes);
        b->axis_is_list = true;
    } else {
        b->n_axes = 1;
        b->axes[0] = o->has_axis || o->axis ? o->axis : -1;
    }
    b->momentum = o->momentum ? o->momentum : 0.99;
    b->epsilon = o->epsilon ? o->epsilon : 1e-3;
    b->center = TFC_FLAG(o->center, true);
    b->scale = TFC_FLAG(o->scale, true);
    tfc_kinit_set(&b->beta_init, o->beta_initializer, "zeros");
    tfc_kinit_set(&b->gamma_init, o->gamma_initializer, "ones");
    tfc_kinit_set(&b->mean_init, o->moving_mean_initializer, "zeros");
    tfc_kinit_set(&b->var_init, o->moving_variance_initializer, "ones");
    if ((b->has_beta_reg = o->beta_regularizer)) b->beta_reg = *o->beta_regularizer;
    if ((b->has_gamma_reg = o->gamma_regularizer)) b->gamma_reg = *o->gamma_regularizer;
    return &b->base;
}

tfc_layer *tfc_keras_from_config_batch_normalization(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_batch_normalization_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    int64_t axes[TFC_MAX_RANK];
    int n_axes = 0;
    bool is_list = false, has_axis, has_mom, has_eps, center = true, scale = true, renorm = false, hb, hg;
    double momentum = 0.99, epsilon = 1e-3;
    char names[4][32];
    tfc_initializer init[4] = {{0}};
    tfc_regularizer br, gr;
    static const char *const init_keys[4] = {"beta_initializer", "gamma_initializer", "moving_mean_initializer",
                                             "moving_variance_initializer"};
    if (!tfc_kconv_json_axes(cfg, "axis", axes, TFC_MAX_RANK, &n_axes, &is_list, &has_axis, st) ||
        !tfc_json_get_f64(cfg, "momentum", &momentum, &has_mom, st) ||
        !tfc_json_get_f64(cfg, "epsilon", &epsilon, &has_eps, st) ||
        !tfc_json_get_bool(cfg, "center", &center, NULL, st) || !tfc_json_get_bool(cfg, "scale", &scale, NULL, st) ||
        !tfc_json_get_bool(cfg, "renorm", &renorm, NULL, st) ||
        !tfc_json_get_regularizer(cfg, "beta_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "gamma_regularizer", &gr, &hg, st))
        return NULL;
    for (int i = 0; i < 4; i++)
        if (!tfc_json_get_initializer(cfg, init_keys[i], &init[i], names[i], sizeof names[i], st)) return NULL;
    bool has_vbs = false;
    int64_t vbs = 0;
    if (!tfc_json_get_i64(cfg, "virtual_batch_size", &vbs, &has_vbs, st)) return NULL;
    if (renorm || has_vbs) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "BatchNormalization: %s is not supported",
                       renorm ? "renorm=True" : "virtual_batch_size");
        return NULL;
    }
    if (has_axis) {
        if (is_list) memcpy(o.axes, axes, sizeof axes), o.n_axes = n_axes;
        else o.axis = axes[0], o.has_axis = true;
    }
    o.center = center ? TFC_YES : TFC_NO;
    o.scale = scale ? TFC_YES : TFC_NO;
    const tfc_initializer **dst[4] = {&o.beta_initializer, &o.gamma_initializer, &o.moving_mean_initializer,
                                      &o.moving_variance_initializer};
    for (int i = 0; i < 4; i++)
        if (init[i].name) *dst[i] = &init[i];
    if (hb) o.beta_regularizer = &br;
    if (hg) o.gamma_regularizer = &gr;
    tfc_layer *l = tfc_layers_batch_normalization_new(&o);
    if (!l) {
        tfc_status_oom(st, "BatchNormalization", sizeof(batch_norm));
        return NULL;
    }
    /* Zero is "default" in the options, but a config's 0 is a value. */
    batch_norm *b = (batch_norm *)l;
    if (has_mom) b->momentum = momentum;
    if (has_eps) b->epsilon = epsilon;
    return l;
}
