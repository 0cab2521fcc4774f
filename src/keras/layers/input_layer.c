/* tf.keras.layers.InputLayer: the placeholder a Functional model starts from (tfc_input). */
#include <stdio.h>
#include <string.h>

#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    bool sparse, ragged;
} input_layer;

static bool il_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    return (out[0] = tfc_emit(ctx, "Identity", &in[0], 1, NULL, 0, st)) != NULL;
}

/* Keras 2's InputLayer config has its own keys and no "trainable". */
static bool il_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const input_layer *il = (const input_layer *)l;
    cJSON *cfg = vcfg;
    while (cfg->child) cJSON_Delete(cJSON_DetachItemViaPointer(cfg, cfg->child));
    cJSON *shape = tfc_json_shape(&l->input_shape);
    return shape && cJSON_AddItemToObject(cfg, "batch_input_shape", shape) &&
           cJSON_AddStringToObject(cfg, "dtype", tfc_dtype_name(l->dtype)) &&
           cJSON_AddBoolToObject(cfg, "sparse", il->sparse) && cJSON_AddBoolToObject(cfg, "ragged", il->ragged) &&
           cJSON_AddStringToObject(cfg, "name", l->name);
}

static const tfc_layer_class input_layer_class = {
    .class_name = "InputLayer",
    .size = sizeof(input_layer),
    .compute_output_shape = tfc_keras_same_shape,
    .call = il_call,
    .get_config = il_get_config,
};

tfc_layer *tfc_layers_input_layer_new(const tfc_input_layer_opts *o) {
    tfc_input_layer_opts d = {0};
    if (!o) o = &d;
    char name[64];
    if (!o->name || !*o->name) /* Keras: "input_" + str(backend.get_uid("input")) */
        snprintf(name, sizeof name, "input_%lld", (long long)tfc_keras_get_uid("input"));
    tfc_layer *l = tfc_layer_alloc(&input_layer_class, o->name && *o->name ? o->name : name);
    if (!l) return NULL;
    /* Keras's Input is float32 unless given a dtype, whatever the global policy */
    tfc_layer_apply_common(l, NULL, o->trainable, o->dtype ? o->dtype : TFC_FLOAT, o->dtype_policy, o->input_shape,
                           o->input_rank);
    if (!l->has_input_shape) { /* input_shape=() or none: [batch] */
        l->has_input_shape = true;
        l->input_shape = (tfc_shape){.rank = 1, .dims = {-1}};
    }
    if (o->batch_size > 0) l->input_shape.dims[0] = o->batch_size;
    /* An InputLayer is born built: it has no weights and accepts what its shape says. */
    l->built = true;
    l->n_build_shapes = 1;
    l->build_shapes[0] = l->input_shape;
    l->has_input_spec = true;
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    return l;
}

tfc_layer *tfc_keras_from_config_input_layer(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_input_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    o.batch_size = c.batch_size > 0 ? c.batch_size : 0;
    bool sparse = false, ragged = false;
    if (!tfc_json_get_bool(cfg, "sparse", &sparse, NULL, st) || !tfc_json_get_bool(cfg, "ragged", &ragged, NULL, st))
        return NULL;
    if (sparse || ragged) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "InputLayer \"%s\": sparse and ragged inputs are not supported",
                       c.name ? c.name : "");
        return NULL;
    }
    tfc_layer *l = tfc_layers_input_layer_new(&o);
    if (!l) tfc_status_oom(st, "InputLayer", sizeof(input_layer));
    return l;
}
