/* tf.keras.layers.Reshape: [batch, ...] -> [batch, *target_shape]; one target dim may be -1. */
#include <stdio.h>
#include <string.h>

#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    int64_t target[TFC_MAX_RANK];
    int rank;
} reshape;

static char *target_str(const reshape *r, char *buf, size_t size) {
    tfc_shape t = {.rank = r->rank};
    memcpy(t.dims, r->target, sizeof t.dims);
    return tfc_keras_shape_str(&t, buf, size);
}

/* Keras's _fix_unknown_dimension and compute_output_shape. */
static bool reshape_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st) {
    reshape *r = (reshape *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    const tfc_shape *s = &in[0];
    if (r->rank + 1 > TFC_MAX_RANK)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": target_shape has more than %d dims", l->name,
                              TFC_MAX_RANK - 1);
    int unknown = -1;
    int64_t known = 1;
    for (int i = 0; i < r->rank; i++) {
        if (r->target[i] < 0) {
            if (unknown >= 0)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "Layer \"%s\": there must be at most one unknown dimension in output_shape. "
                                      "Received: output_shape=%s",
                                      l->name, target_str(r, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR));
            unknown = i;
        } else if (!tfc_mul_overflow_i64(known, r->target[i], &known)) {
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": target_shape size overflows", l->name);
        }
    }
    out[0] = (tfc_shape){.rank = r->rank + 1, .dims = {s->rank > 0 ? s->dims[0] : -1}};
    for (int i = 0; i < r->rank; i++) out[0].dims[i + 1] = r->target[i] < 0 ? -1 : r->target[i];
    *n_out = 1;
    bool defined = s->rank >= 1;
    int64_t original = 1;
    for (int i = 1; i < s->rank && defined; i++) {
        if (s->dims[i] < 0) defined = false;
        else if (!tfc_mul_overflow_i64(original, s->dims[i], &original))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": input size overflows", l->name);
    }
    if (!defined) return true; /* partially unknown input: -1 stays None */
    bool bad = unknown >= 0 ? known == 0 || original % known != 0 : original != known;
    if (bad) {
        tfc_shape rest = {.rank = s->rank - 1};
        for (int i = 1; i < s->rank; i++) rest.dims[i - 1] = s->dims[i];
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": total size of new array must be unchanged, input_shape = %s, "
                              "output_shape = %s",
                              l->name, TFC_KSHP(&rest), target_str(r, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR));
    }
    if (unknown >= 0) out[0].dims[unknown + 1] = original / known;
    return true;
}

static bool reshape_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1}; /* the call checks the element count */
    l->has_input_spec = true;
    return true;
}

static bool reshape_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                         bool training, tfc_status *st) {
    tfc_shape o;
    int n;
    if (!reshape_output_shape(l, tfc_tensor_shape(in[0]), 1, &o, &n, st)) return false;
    tfc_tensor *s = tfc_vec_i64(o.dims, o.rank, st);
    if (!s) return false;
    out[0] = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){in[0], s}, 2, NULL, 0, st);
    tfc_tensor_unref(s);
    return out[0] != NULL;
}

static bool reshape_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    const reshape *r = (const reshape *)l;
    cJSON *t = tfc_json_int_array(r->target, r->rank);
    return t && cJSON_AddItemToObject(cfg, "target_shape", t);
}

static const tfc_layer_class reshape_class = {
    .class_name = "Reshape",
    .size = sizeof(reshape),
    .build = reshape_build,
    .compute_output_shape = reshape_output_shape,
    .call = reshape_call,
    .get_config = reshape_get_config,
};

tfc_layer *tfc_layers_reshape_new(const tfc_reshape_layer_opts *o) {
    reshape *r = TFC_LAYER_NEW(reshape, &reshape_class, o);
    if (!r) return NULL;
    r->base.keeps_input_dtype = true;
    int rank = o->target_rank;
    if (rank == 0)
        while (rank < TFC_MAX_RANK && o->target_shape[rank] != 0) rank++;
    if (rank < 0) rank = 0;
    r->rank = rank > TFC_MAX_RANK ? TFC_MAX_RANK : rank;
    for (int i = 0; i < r->rank; i++) r->target[i] = o->target_shape[i] < 0 ? -1 : o->target_shape[i];
    return &r->base;
}

tfc_layer *tfc_keras_from_config_reshape(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_reshape_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool has;
    int n = 0;
    if (!tfc_json_get_i64_list(cfg, "target_shape", o.target_shape, TFC_MAX_RANK - 1, &n, &has, st)) return NULL;
    if (!has) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Reshape: the config has no \"target_shape\"");
        return NULL;
    }
    o.target_rank = n > 0 ? n : -1;
    tfc_layer *l = tfc_layers_reshape_new(&o);
    if (!l) tfc_status_oom(st, "Reshape", sizeof(reshape));
    return l;
}
