/* tf.keras.layers.LayerNormalization: each example normalised over `axis` (default the last):
 *   y = gamma * (x - mean) / sqrt(var + epsilon) + beta, mean and (biased) var over the axes.
 * gamma and beta have the shape of the normalised dims, in axis order.
 *
 * The arithmetic follows tf_keras step by step so results agree to rounding: when the axes are the trailing
 * dims (in any order), epsilon >= 1.001e-5 and the dtype is float32, Keras reshapes x to [1, rows, cols, 1]
 * and runs FusedBatchNormV3 in training mode (NCHW, unit scale, zero offset), then applies gamma and beta;
 * otherwise it computes tf.nn.moments and tf.nn.batch_normalization. Both are done here with the same ops. */
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/ops/array.h"
#include "tfc/ops/nn.h"

typedef struct {
    tfc_layer base;
    int64_t axes[TFC_MAX_RANK]; /* as configured until build, then normalised (non-negative) */
    int n_axes;
    bool axis_is_list;          /* the config shows a list (always after build, as Keras) */
    double epsilon;
    bool center, scale;
    tfc_kinit beta_init, gamma_init;
    tfc_regularizer beta_reg, gamma_reg;
    bool has_beta_reg, has_gamma_reg;
    bool fused;                 /* set by build */
    tfc_variable *gamma, *beta; /* owned by base.weights */
} layer_norm;

static bool ln_check(layer_norm *n, const tfc_shape *s, int64_t *norm, tfc_status *st) {
    tfc_layer *l = &n->base;
    if (s->rank < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Input has undefined rank. (layer \"%s\")", l->name);
    if (s->rank == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Input has undefined rank. Received: input_shape=() (layer \"%s\")", l->name);
    if (!tfc_kconv_validate_axes(l, n->axes, n->n_axes, s->rank, norm, st)) return false;
    char buf[TFC_SHAPE_STR];
    for (int i = 0; i < n->n_axes; i++)
        if (s->dims[norm[i]] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": the normalized dimensions must be defined. Received input with shape "
                                  "%s and axis=%s",
                                  l->name, TFC_KSHP(s), tfc_kconv_tuple_str(norm, n->n_axes, buf, sizeof buf));
    return true;
}

static bool ln_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    int64_t norm[TFC_MAX_RANK];
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !ln_check((layer_norm *)l, &in[0], norm, st)) return false;
    out[0] = in[0];
    *n_out = 1;
    return true;
}

static bool ln_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    layer_norm *n = (layer_norm *)l;
    const tfc_shape *s = &in[0];
    int64_t norm[TFC_MAX_RANK];
    if (!ln_check(n, s, norm, st)) return false;
    tfc_shape ps = {.rank = n->n_axes};
    for (int i = 0; i < n->n_axes; i++) ps.dims[i] = s->dims[norm[i]];
    if (n->scale && !(n->gamma = tfc_layer_add_weight(l, ctx, "gamma", &ps, l->dtype, &n->gamma_init.init,
                                                      n->has_gamma_reg ? &n->gamma_reg : NULL, true, st)))
        return false;
    if (n->center && !(n->beta = tfc_layer_add_weight(l, ctx, "beta", &ps, l->dtype, &n->beta_init.init,
                                                      n->has_beta_reg ? &n->beta_reg : NULL, true, st)))
        return false;
    /* _fused_can_be_used: sorted axes end at the last dim and are contiguous; epsilon and dtype allow it */
    int64_t lo = norm[0], hi = norm[0];
    for (int i = 1; i < n->n_axes; i++) {
        if (norm[i] < lo) lo = norm[i];
        if (norm[i] > hi) hi = norm[i];
    }
    n->fused = hi == s->rank - 1 && hi - lo == n->n_axes - 1 && n->epsilon >= 1.001e-5 && l->compute_dtype == TFC_FLOAT;
    /* Keras sets no InputSpec; the weights fix the rank and the normalised dims. */
    tfc_input_spec *sp = &l->input_spec[0];
    *sp = (tfc_input_spec){.ndim = s->rank, .n_axes = n->n_axes};
    for (int i = 0; i < n->n_axes; i++) {
        sp->axes[i] = (int)norm[i];
        sp->values[i] = s->dims[norm[i]];
        n->axes[i] = norm[i];
    }
    n->axis_is_list = true;
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *s = tfc_vec_i64(dims, rank, st);
    if (!s) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s}, 2, NULL, 0, st);
    tfc_tensor_unref(s);
    return r;
}

static bool ln_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    layer_norm *n = (layer_norm *)l;
    tfc_tensor *x = in[0];
    int rank = tfc_tensor_rank(x);
    int64_t bshape[TFC_MAX_RANK], lo = rank;
    for (int d = 0; d < rank; d++) bshape[d] = 1;
    for (int i = 0; i < n->n_axes; i++) {
        bshape[n->axes[i]] = tfc_tensor_dim(x, (int)n->axes[i]);
        if (n->axes[i] < lo) lo = n->axes[i];
    }
    /* Keras's _broadcast: gamma/beta are reshaped (not transposed) to the broadcast shape unless axis == [last] */
    bool reshape_params = !(n->n_axes == 1 && n->axes[0] == rank - 1);
    /* one read at a time: a successful second read would clear the status of a failed first one */
    tfc_tensor *g = NULL, *b = NULL;
    if (n->gamma && !(g = tfc_layer_read_var(l, ctx, n->gamma, st))) return false;
    if (n->beta && !(b = tfc_layer_read_var(l, ctx, n->beta, st))) return false;
    if (reshape_params && ((g && !(g = reshape(ctx, g, bshape, rank, st))) ||
                           (b && !(b = reshape(ctx, b, bshape, rank, st)))))
        return false;
    tfc_tensor *y;
    if (n->fused) {
        int64_t pre = 1, inner = 1;
        for (int d = 0; d < rank; d++) {
            if (d < lo) pre *= tfc_tensor_dim(x, d);
            else inner *= tfc_tensor_dim(x, d);
        }
        int64_t sq[4] = {1, pre, inner, 1};
        tfc_tensor *x4 = reshape(ctx, x, sq, 4, st);
        tfc_tensor *ones = x4 ? tfc_ones(ctx, TFC_FLOAT, &pre, 1, st) : NULL;
        tfc_tensor *zeros = ones ? tfc_zeros(ctx, TFC_FLOAT, &pre, 1, st) : NULL;
        tfc_tensor *y4 = zeros ? tfc_fused_batch_norm(ctx, x4, ones, zeros, NULL, NULL, n->epsilon, 1.0, "NCHW", true,
                                                      NULL, NULL, st)
                               : NULL;
        if (!y4 || !(y = reshape(ctx, y4, tfc_tensor_shape(x)->dims, rank, st))) return false;
        if (g && !(y = tfc_emit(ctx, "Mul", (tfc_tensor *[]){y, g}, 2, NULL, 0, st))) return false;
        if (b && !(y = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){y, b}, 2, NULL, 0, st))) return false;
    } else {
        tfc_dtype dt = tfc_tensor_dtype(x);
        tfc_tensor *ax = tfc_vec_i64(n->axes, n->n_axes, st);
        if (!ax) return false;
        tfc_attr keep = TFC_ATTR_B("keep_dims", true);
        /* tf.nn.moments computes float16 statistics in float32 and casts them back. */
        bool half = dt == TFC_HALF;
        tfc_attr to32 = TFC_ATTR_T("DstT", TFC_FLOAT), to16 = TFC_ATTR_T("DstT", TFC_HALF);
        tfc_tensor *xm = half ? tfc_emit(ctx, "Cast", &x, 1, &to32, 1, st) : x;
        tfc_tensor *mean = xm ? tfc_emit(ctx, "Mean", (tfc_tensor *[]){xm, ax}, 2, &keep, 1, st) : NULL;
        tfc_tensor *sg = mean ? tfc_emit(ctx, "StopGradient", &mean, 1, NULL, 0, st) : NULL;
        tfc_tensor *sqd = sg ? tfc_emit(ctx, "SquaredDifference", (tfc_tensor *[]){xm, sg}, 2, NULL, 0, st) : NULL;
        tfc_tensor *var = sqd ? tfc_emit(ctx, "Mean", (tfc_tensor *[]){sqd, ax}, 2, &keep, 1, st) : NULL;
        tfc_tensor_unref(ax);
        if (half && var) {
            mean = tfc_emit(ctx, "Cast", &mean, 1, &to16, 1, st);
            var = mean ? tfc_emit(ctx, "Cast", &var, 1, &to16, 1, st) : NULL;
        }
        tfc_tensor *e64 = var ? tfc_scalar_f64(n->epsilon, st) : NULL;
        tfc_attr to = TFC_ATTR_T("DstT", dt);
        tfc_tensor *eps = e64 ? tfc_emit(ctx, dt == TFC_DOUBLE ? "Identity" : "Cast", &e64, 1, &to,
                                         dt == TFC_DOUBLE ? 0 : 1, st)
                              : NULL;
        tfc_tensor_unref(e64);
        /* tf.nn.batch_normalization: inv = rsqrt(var + eps) * scale; y = x * inv + (offset - mean * inv) */
        tfc_tensor *ve = eps ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){var, eps}, 2, NULL, 0, st) : NULL;
        tfc_tensor *inv = ve ? tfc_emit(ctx, "Rsqrt", &ve, 1, NULL, 0, st) : NULL;
        if (inv && g) inv = tfc_emit(ctx, "Mul", (tfc_tensor *[]){inv, g}, 2, NULL, 0, st);
        tfc_tensor *mi = inv ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){mean, inv}, 2, NULL, 0, st) : NULL;
        tfc_tensor *off = !mi ? NULL
                          : b ? tfc_emit(ctx, "Sub", (tfc_tensor *[]){b, mi}, 2, NULL, 0, st)
                              : tfc_emit(ctx, "Neg", &mi, 1, NULL, 0, st);
        tfc_tensor *xi = off ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, inv}, 2, NULL, 0, st) : NULL;
        if (!xi || !(y = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){xi, off}, 2, NULL, 0, st))) return false;
    }
    out[0] = y;
    return true;
}

static bool ln_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const layer_norm *n = (const layer_norm *)l;
    cJSON *cfg = vcfg;
    cJSON *axis = n->axis_is_list ? tfc_json_int_array(n->axes, n->n_axes) : cJSON_CreateNumber((double)n->axes[0]);
    if (!axis || !cJSON_AddItemToObject(cfg, "axis", axis)) {
        cJSON_Delete(axis);
        return false;
    }
    return cJSON_AddNumberToObject(cfg, "epsilon", n->epsilon) && cJSON_AddBoolToObject(cfg, "center", n->center) &&
           cJSON_AddBoolToObject(cfg, "scale", n->scale) &&
           tfc_json_add_initializer(cfg, "beta_initializer", &n->beta_init.init) &&
           tfc_json_add_initializer(cfg, "gamma_initializer", &n->gamma_init.init) &&
           tfc_json_add_regularizer(cfg, "beta_regularizer", &n->beta_reg, n->has_beta_reg) &&
           tfc_json_add_regularizer(cfg, "gamma_regularizer", &n->gamma_reg, n->has_gamma_reg) &&
           cJSON_AddNullToObject(cfg, "beta_constraint") && cJSON_AddNullToObject(cfg, "gamma_constraint");
}

static const tfc_layer_class layer_norm_class = {
    .class_name = "LayerNormalization",
    .size = sizeof(layer_norm),
    .build = ln_build,
    .compute_output_shape = ln_output_shape,
    .call = ln_call,
    .get_config = ln_get_config,
};

tfc_layer *tfc_layers_layer_normalization_new(const tfc_layer_normalization_opts *o) {
    layer_norm *n = TFC_LAYER_NEW(layer_norm, &layer_norm_class, o);
    if (!n) return NULL;
    if (o->n_axis > 0) {
        n->n_axes = o->n_axis > TFC_MAX_RANK ? TFC_MAX_RANK : o->n_axis;
        memcpy(n->axes, o->axis, (size_t)n->n_axes * sizeof *n->axes);
        n->axis_is_list = n->n_axes > 1;
    } else {
        n->n_axes = 1;
        n->axes[0] = -1;
    }
    n->epsilon = o->epsilon ? o->epsilon : 1e-3;
    n->center = TFC_FLAG(o->center, true);
    n->scale = TFC_FLAG(o->scale, true);
    tfc_kinit_set(&n->beta_init, o->beta_initializer, "zeros");
    tfc_kinit_set(&n->gamma_init, o->gamma_initializer, "ones");
    if ((n->has_beta_reg = o->beta_regularizer)) n->beta_reg = *o->beta_regularizer;
    if ((n->has_gamma_reg = o->gamma_regularizer)) n->gamma_reg = *o->gamma_regularizer;
    return &n->base;
}

tfc_layer *tfc_keras_from_config_layer_normalization(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_layer_normalization_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    bool is_list = false, has_axis, has_eps, center = true, scale = true, hb, hg;
    double epsilon = 1e-3;
    char bn[32], gn[32];
    tfc_initializer bi = {0}, gi = {0};
    tfc_regularizer br, gr;
    if (!tfc_kconv_json_axes(cfg, "axis", o.axis, TFC_MAX_RANK, &o.n_axis, &is_list, &has_axis, st) ||
        !tfc_json_get_f64(cfg, "epsilon", &epsilon, &has_eps, st) ||
        !tfc_json_get_bool(cfg, "center", &center, NULL, st) || !tfc_json_get_bool(cfg, "scale", &scale, NULL, st) ||
        !tfc_json_get_initializer(cfg, "beta_initializer", &bi, bn, sizeof bn, st) ||
        !tfc_json_get_initializer(cfg, "gamma_initializer", &gi, gn, sizeof gn, st) ||
        !tfc_json_get_regularizer(cfg, "beta_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "gamma_regularizer", &gr, &hg, st))
        return NULL;
    o.center = center ? TFC_YES : TFC_NO;
    o.scale = scale ? TFC_YES : TFC_NO;
    if (bi.name) o.beta_initializer = &bi;
    if (gi.name) o.gamma_initializer = &gi;
    if (hb) o.beta_regularizer = &br;
    if (hg) o.gamma_regularizer = &gr;
    tfc_layer *l = tfc_layers_layer_normalization_new(&o);
    if (!l) {
        tfc_status_oom(st, "LayerNormalization", sizeof(layer_norm));
        return NULL;
    }
    layer_norm *n = (layer_norm *)l;
    if (has_eps) n->epsilon = epsilon;
    if (has_axis) n->axis_is_list = is_list;
    return l;
}
