/* tf.keras.layers.Concatenate: joins its inputs along `axis` (default -1; the batch dim counts as axis 0). */
#include <string.h>

#include "keras/layers/merge.h"

static bool concat_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                tfc_status *st) {
    int64_t axis = ((tfc_merge *)l)->axis;
    char all[512];
    if (n_in < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": a `Concatenate` layer should be called on a list of at least 1 input",
                              l->name);
    int rank = in[0].rank;
    for (int i = 0; i < n_in; i++)
        if (in[i].rank != rank)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "A `Concatenate` layer requires inputs with matching shapes except for the "
                                  "concatenation axis. Received: input_shape=%s (layer \"%s\")",
                                  tfc_merge_shapes_str(in, n_in, all, sizeof all), l->name);
    if (rank < 1 || axis >= rank || axis < -(int64_t)rank)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": axis %lld is out of bounds for input shapes %s",
                              l->name, (long long)axis, tfc_merge_shapes_str(in, n_in, all, sizeof all));
    int ax = (int)(axis < 0 ? axis + rank : axis);
    /* All dims but the axis must agree where known (Keras ignores Nones). */
    for (int d = 0; d < rank; d++) {
        if (d == ax) continue;
        int64_t v = -1;
        for (int i = 0; i < n_in; i++) {
            int64_t x = in[i].dims[d];
            if (x < 0) continue;
            if (v >= 0 && x != v)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "A `Concatenate` layer requires inputs with matching shapes except for the "
                                      "concatenation axis. Received: input_shape=%s (layer \"%s\")",
                                      tfc_merge_shapes_str(in, n_in, all, sizeof all), l->name);
            v = x;
        }
    }
    out[0] = in[0];
    for (int i = 1; i < n_in; i++) {
        if (out[0].dims[ax] < 0 || in[i].dims[ax] < 0) {
            out[0].dims[ax] = -1;
            break;
        }
        out[0].dims[ax] += in[i].dims[ax];
    }
    /* Known dims of later inputs fill unknown ones of the first (what the op will produce). */
    for (int d = 0; d < rank; d++)
        for (int i = 1; i < n_in && d != ax && out[0].dims[d] < 0; i++) out[0].dims[d] = in[i].dims[d];
    *n_out = 1;
    return true;
}

static bool concat_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        bool training, tfc_status *st) {
    tfc_shape shapes[TFC_KERAS_MAX_IO] = {{0}}, o;
    for (int i = 0; i < n_in; i++) shapes[i] = *tfc_tensor_shape(in[i]);
    if (!concat_output_shape(l, shapes, n_in, &o, &(int){0}, st)) return false;
    tfc_tensor *args[TFC_KERAS_MAX_IO + 1];
    for (int i = 0; i < n_in; i++) args[i] = in[i];
    if (!(args[n_in] = tfc_scalar_i32((int32_t)((tfc_merge *)l)->axis, st))) return false;
    out[0] = tfc_emit(ctx, "ConcatV2", args, n_in + 1, NULL, 0, st);
    tfc_tensor_unref(args[n_in]);
    return out[0] != NULL;
}

static bool concat_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    return cJSON_AddNumberToObject(cfg, "axis", (double)((const tfc_merge *)l)->axis) != NULL;
}

static const tfc_layer_class concatenate_class = {
    .class_name = "Concatenate",
    .size = sizeof(tfc_merge),
    .build = tfc_merge_build,
    .compute_output_shape = concat_output_shape,
    .call = concat_call,
    .get_config = concat_get_config,
};

tfc_layer *tfc_layers_concatenate_new(const tfc_merge_opts *o) {
    tfc_merge *m = TFC_LAYER_NEW(tfc_merge, &concatenate_class, o);
    if (!m) return NULL;
    m->base.keeps_input_dtype = true;
    m->axis = o->has_axis || o->axis != 0 ? o->axis : -1;
    return &m->base;
}

tfc_layer *tfc_keras_from_config_concatenate(const cJSON *cfg, tfc_status *st) {
    tfc_merge_opts o;
    if (!tfc_merge_opts_from_config(cfg, &o, st)) return NULL;
    tfc_layer *l = tfc_layers_concatenate_new(&o);
    if (!l) tfc_status_oom(st, "Concatenate", sizeof(tfc_merge));
    return l;
}
