/* tf.keras.layers.ReLU: f(x) = max_value for x >= max_value, x for threshold <= x < max_value,
 * negative_slope * (x - threshold) otherwise (Keras's backend.relu). */
#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    double max_value, negative_slope, threshold; /* as float32, as Keras's cast_to_floatx */
    bool has_max_value;
} relu;

static bool relu_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                              tfc_status *st) {
    relu *r = (relu *)l;
    if (r->has_max_value && r->max_value < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": max_value of a ReLU layer cannot be a negative value. Received: %g",
                              l->name, r->max_value);
    if (!(r->negative_slope >= 0))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": negative_slope of a ReLU layer cannot be a negative value. Received: %g",
                              l->name, r->negative_slope);
    if (!(r->threshold >= 0))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": threshold of a ReLU layer cannot be a negative value. Received: %g",
                              l->name, r->threshold);
    return tfc_keras_same_shape(l, in, n_in, out, n_out, st);
}

static bool relu_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *op1(tfc_ctx *ctx, const char *op, tfc_tensor *x, tfc_status *st) {
    return x ? tfc_emit(ctx, op, &x, 1, NULL, 0, st) : NULL;
}

static tfc_tensor *op2c(tfc_ctx *ctx, const char *op, tfc_tensor *x, double c, bool const_first, tfc_status *st) {
    if (!x) return NULL;
    tfc_tensor *k = tfc_scalar(tfc_tensor_dtype(x), c, st);
    if (!k) return NULL;
    tfc_tensor *in[2] = {const_first ? k : x, const_first ? x : k};
    tfc_tensor *y = tfc_emit(ctx, op, in, 2, NULL, 0, st);
    tfc_tensor_unref(k);
    return y;
}

static bool relu_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    relu *r = (relu *)l;
    tfc_tensor *x = in[0], *neg = NULL;
    double alpha = r->negative_slope, th = r->threshold;
    if (alpha != 0) {
        if (!r->has_max_value && th == 0) {
            tfc_attr a = TFC_ATTR_F("alpha", alpha);
            return (out[0] = tfc_emit(ctx, "LeakyRelu", &x, 1, &a, 1, st)) != NULL;
        }
        tfc_tensor *nx = op1(ctx, "Neg", x, st);
        neg = op1(ctx, "Relu", th != 0 ? op2c(ctx, "AddV2", nx, th, false, st) : nx, st);
        if (!neg) return false;
    }
    bool clip = r->has_max_value;
    tfc_tensor *y;
    if (th != 0) {
        tfc_attr ca = TFC_ATTR_T("DstT", tfc_tensor_dtype(x));
        tfc_tensor *g = op2c(ctx, "Greater", x, th, false, st);
        tfc_tensor *m = g ? tfc_emit(ctx, "Cast", &g, 1, &ca, 1, st) : NULL;
        y = m ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, m}, 2, NULL, 0, st) : NULL;
    } else if (r->has_max_value && r->max_value == 6) {
        y = op1(ctx, "Relu6", x, st);
        clip = false;
    } else {
        y = op1(ctx, "Relu", x, st);
    }
    if (!y) return false;
    if (clip) {
        tfc_dtype dt = tfc_tensor_dtype(y);
        tfc_tensor *lo = tfc_scalar(dt, 0, st), *hi = lo ? tfc_scalar(dt, r->max_value, st) : NULL;
        tfc_tensor *c = hi ? tfc_emit(ctx, "ClipByValue", (tfc_tensor *[]){y, lo, hi}, 3, NULL, 0, st) : NULL;
        tfc_tensor_unref(lo);
        tfc_tensor_unref(hi);
        if (!(y = c)) return false;
    }
    if (alpha != 0) {
        tfc_tensor *an = op2c(ctx, "Mul", neg, alpha, true, st);
        if (!an || !(y = tfc_emit(ctx, "Sub", (tfc_tensor *[]){y, an}, 2, NULL, 0, st))) return false;
    }
    out[0] = y;
    return true;
}

static bool relu_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    const relu *r = (const relu *)l;
    return (r->has_max_value ? tfc_json_add_f32(cfg, "max_value", r->max_value)
                             : cJSON_AddNullToObject(cfg, "max_value") != NULL) &&
           tfc_json_add_f32(cfg, "negative_slope", r->negative_slope) &&
           tfc_json_add_f32(cfg, "threshold", r->threshold);
}

static const tfc_layer_class relu_class = {
    .class_name = "ReLU",
    .size = sizeof(relu),
    .build = relu_build,
    .compute_output_shape = relu_output_shape,
    .call = relu_call,
    .get_config = relu_get_config,
};

tfc_layer *tfc_layers_relu_new(const tfc_relu_layer_opts *o) {
    relu *r = TFC_LAYER_NEW(relu, &relu_class, o);
    if (!r) return NULL;
    r->has_max_value = o->has_max_value;
    r->max_value = (float)o->max_value;
    r->negative_slope = (float)o->negative_slope;
    r->threshold = (float)o->threshold;
    return &r->base;
}

tfc_layer *tfc_keras_from_config_relu(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_relu_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    if (!tfc_json_get_f64(cfg, "max_value", &o.max_value, &o.has_max_value, st) ||
        !tfc_json_get_f64(cfg, "negative_slope", &o.negative_slope, NULL, st) ||
        !tfc_json_get_f64(cfg, "threshold", &o.threshold, NULL, st))
        return NULL;
    tfc_layer *l = tfc_layers_relu_new(&o);
    if (!l) tfc_status_oom(st, "ReLU", sizeof(relu));
    return l;
}
