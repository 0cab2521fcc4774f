/* tf.keras.layers.Flatten: [batch, d1, ..., dn] -> [batch, d1 * ... * dn]; channels_first inputs are first
 * transposed to channels_last so the element order matches a channels_last model. */
#include <string.h>

#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    bool channels_first;
} flatten;

static bool flatten_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st) {
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    const tfc_shape *s = &in[0];
    if (s->rank == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Input 0 of layer \"%s\" is incompatible with the layer: expected min_ndim=1, found "
                              "ndim=0. Full shape received: ()",
                              l->name);
    out[0] = (tfc_shape){.rank = 2, .dims = {s->rank > 0 ? s->dims[0] : -1, 1}};
    for (int i = 1; i < s->rank; i++) {
        if (s->dims[i] < 0 || out[0].dims[1] < 0) out[0].dims[1] = -1;
        else if (!tfc_mul_overflow_i64(out[0].dims[1], s->dims[i], &out[0].dims[1]))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": flattened size of %s overflows", l->name,
                                  TFC_KSHP(s));
    }
    if (s->rank < 0) out[0].dims[1] = -1;
    *n_out = 1;
    return true;
}

static bool flatten_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1, .min_ndim = 1};
    l->has_input_spec = true;
    return true;
}

static bool flatten_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                         bool training, tfc_status *st) {
    tfc_tensor *x = in[0];
    int rank = tfc_tensor_rank(x);
    if (((flatten *)l)->channels_first && rank > 2) {
        int64_t perm[TFC_MAX_RANK];
        perm[0] = 0;
        for (int i = 1; i < rank - 1; i++) perm[i] = i + 1;
        perm[rank - 1] = 1;
        tfc_tensor *p = tfc_vec_i64(perm, rank, st);
        if (!p) return false;
        x = tfc_emit(ctx, "Transpose", (tfc_tensor *[]){x, p}, 2, NULL, 0, st);
        tfc_tensor_unref(p);
        if (!x) return false;
    }
    /* Explicit sizes (not -1), so that an empty batch reshapes too. */
    tfc_shape o;
    int n;
    if (!flatten_output_shape(l, tfc_tensor_shape(x), 1, &o, &n, st)) return false;
    tfc_tensor *s = tfc_vec_i64(o.dims, 2, st);
    if (!s) return false;
    out[0] = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s}, 2, NULL, 0, st);
    tfc_tensor_unref(s);
    return out[0] != NULL;
}

static bool flatten_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    return cJSON_AddStringToObject(cfg, "data_format",
                                   ((const flatten *)l)->channels_first ? "channels_first" : "channels_last") != NULL;
}

static const tfc_layer_class flatten_class = {
    .class_name = "Flatten",
    .size = sizeof(flatten),
    .build = flatten_build,
    .compute_output_shape = flatten_output_shape,
    .call = flatten_call,
    .get_config = flatten_get_config,
};

tfc_layer *tfc_layers_flatten_new(const tfc_flatten_opts *o) {
    flatten *f = TFC_LAYER_NEW(flatten, &flatten_class, o);
    if (!f) return NULL;
    f->base.keeps_input_dtype = true;
    f->channels_first = o->data_format && !strcmp(o->data_format, "channels_first");
    return &f->base;
}

tfc_layer *tfc_keras_from_config_flatten(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_flatten_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    if (!tfc_json_get_str(cfg, "data_format", &o.data_format, NULL, st)) return NULL;
    if (o.data_format && strcmp(o.data_format, "channels_last") != 0 && strcmp(o.data_format, "channels_first") != 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "The `data_format` argument must be one of \"channels_first\", \"channels_last\". Received: %s",
                       o.data_format);
        return NULL;
    }
    tfc_layer *l = tfc_layers_flatten_new(&o);
    if (!l) tfc_status_oom(st, "Flatten", sizeof(flatten));
    return l;
}
