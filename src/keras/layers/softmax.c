/* tf.keras.layers.Softmax: exp(x) / sum(exp(x)) along `axis` (default -1). */
#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    int64_t axis;
} softmax;

static bool softmax_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st) {
    int64_t axis = ((softmax *)l)->axis;
    if (n_in == 1 && in[0].rank >= 0 && (axis >= in[0].rank || axis < -(int64_t)in[0].rank || in[0].rank == 0))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": axis %lld is out of bounds for input shape %s",
                              l->name, (long long)axis, TFC_KSHP(&in[0]));
    return tfc_keras_same_shape(l, in, n_in, out, n_out, st);
}

static bool softmax_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static bool softmax_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                         bool training, tfc_status *st) {
    tfc_shape o;
    if (!softmax_output_shape(l, tfc_tensor_shape(in[0]), 1, &o, &(int){0}, st)) return false;
    int rank = tfc_tensor_rank(in[0]);
    int64_t axis = ((softmax *)l)->axis;
    if (axis < 0) axis += rank;
    if (axis == rank - 1) return (out[0] = tfc_emit(ctx, "Softmax", &in[0], 1, NULL, 0, st)) != NULL;
    /* tf.nn.softmax on another axis: swap it with the last one, softmax, swap back */
    int64_t perm[TFC_MAX_RANK];
    for (int i = 0; i < rank; i++) perm[i] = i;
    perm[axis] = rank - 1;
    perm[rank - 1] = axis;
    tfc_tensor *p = tfc_vec_i64(perm, rank, st);
    if (!p) return false;
    tfc_tensor *t = tfc_emit(ctx, "Transpose", (tfc_tensor *[]){in[0], p}, 2, NULL, 0, st);
    tfc_tensor *s = t ? tfc_emit(ctx, "Softmax", &t, 1, NULL, 0, st) : NULL;
    out[0] = s ? tfc_emit(ctx, "Transpose", (tfc_tensor *[]){s, p}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(p);
    return out[0] != NULL;
}

static bool softmax_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    return cJSON_AddNumberToObject(cfg, "axis", (double)((const softmax *)l)->axis) != NULL;
}

static const tfc_layer_class softmax_class = {
    .class_name = "Softmax",
    .size = sizeof(softmax),
    .build = softmax_build,
    .compute_output_shape = softmax_output_shape,
    .call = softmax_call,
    .get_config = softmax_get_config,
};

tfc_layer *tfc_layers_softmax_new(const tfc_softmax_layer_opts *o) {
    softmax *s = TFC_LAYER_NEW(softmax, &softmax_class, o);
    if (!s) return NULL;
    s->axis = o->has_axis || o->axis != 0 ? o->axis : -1;
    return &s->base;
}

tfc_layer *tfc_keras_from_config_softmax(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_softmax_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    int n = 0;
    int64_t axes[TFC_MAX_RANK];
    if (!tfc_json_get_i64_list(cfg, "axis", axes, TFC_MAX_RANK, &n, NULL, st)) return NULL;
    if (n > 1) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "Softmax: a list of axes is not supported");
        return NULL;
    }
    if (n == 1) o.axis = axes[0], o.has_axis = true;
    tfc_layer *l = tfc_layers_softmax_new(&o);
    if (!l) tfc_status_oom(st, "Softmax", sizeof(softmax));
    return l;
}
