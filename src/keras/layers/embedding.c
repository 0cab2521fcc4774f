/* tf.keras.layers.Embedding: integer indices [batch, ...] in [0, input_dim) -> rows of the embeddings
 * matrix [input_dim, output_dim], i.e. [batch, ..., output_dim] (GatherV2 on axis 0). */
#include <stdio.h>
#include <string.h>

#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    int64_t input_dim, output_dim;
    tfc_kinit init;
    tfc_regularizer reg;
    bool has_reg, mask_zero;
    int64_t input_length; /* -1 = None */
    tfc_variable *embeddings;
} embedding;

static bool emb_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                             tfc_status *st) {
    embedding *e = (embedding *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    if (e->input_dim <= 0 || e->output_dim <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": both `input_dim` and `output_dim` should be positive, received "
                              "input_dim = %lld and output_dim = %lld",
                              l->name, (long long)e->input_dim, (long long)e->output_dim);
    const tfc_shape *s = &in[0];
    if (s->rank < 0 || s->rank >= TFC_MAX_RANK)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": input rank %d is not supported", l->name,
                              s->rank);
    out[0] = *s;
    if (e->input_length >= 0) {
        if (s->rank != 2 || (s->dims[1] >= 0 && s->dims[1] != e->input_length))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": \"input_length\" is %lld, but received input has shape %s", l->name,
                                  (long long)e->input_length, TFC_KSHP(s));
        out[0].dims[1] = e->input_length;
    }
    out[0].dims[out[0].rank++] = e->output_dim;
    *n_out = 1;
    return true;
}

static bool emb_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    embedding *e = (embedding *)l;
    tfc_shape s = {.rank = 2, .dims = {e->input_dim, e->output_dim}};
    e->embeddings = tfc_layer_add_weight(l, ctx, "embeddings", &s, l->dtype, &e->init.init, e->has_reg ? &e->reg : NULL,
                                         true, st);
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return e->embeddings != NULL;
}

static bool emb_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    embedding *e = (embedding *)l;
    tfc_tensor *idx = in[0];
    tfc_dtype dt = tfc_tensor_dtype(idx);
    if (dt != TFC_INT32 && dt != TFC_INT64) {
        tfc_attr a = TFC_ATTR_T("DstT", TFC_INT32);
        if (!(idx = tfc_emit(ctx, "Cast", &idx, 1, &a, 1, st))) return false;
        dt = TFC_INT32;
    }
    /* Out-of-range ids are an error (tf.nn.embedding_lookup on CPU), reported with the layer's name. */
    const void *data = tfc_tensor_data(idx);
    int64_t n = tfc_tensor_num_elements(idx);
    for (int64_t i = 0; data && i < n; i++) {
        int64_t v = dt == TFC_INT32 ? ((const int32_t *)data)[i] : ((const int64_t *)data)[i];
        if (v < 0 || v >= e->input_dim) {
            char pos[96] = "";
            size_t k = 0;
            int64_t rem = i;
            const tfc_shape *s = tfc_tensor_shape(idx);
            int64_t coord[TFC_MAX_RANK];
            for (int d = s->rank - 1; d >= 0; d--) {
                coord[d] = s->dims[d] ? rem % s->dims[d] : 0;
                rem = s->dims[d] ? rem / s->dims[d] : 0;
            }
            for (int d = 0; d < s->rank && k < sizeof pos; d++)
                k += (size_t)snprintf(pos + k, sizeof pos - k, "%s%lld", d ? "," : "", (long long)coord[d]);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": indices[%s] = %lld is not in [0, %lld)",
                                  l->name, pos, (long long)v, (long long)e->input_dim);
        }
    }
    tfc_tensor *w = tfc_layer_read_var(l, ctx, e->embeddings, st);
    tfc_tensor *axis = w ? tfc_scalar_i32(0, st) : NULL;
    out[0] = axis ? tfc_emit(ctx, "GatherV2", (tfc_tensor *[]){w, idx, axis}, 3, NULL, 0, st) : NULL;
    tfc_tensor_unref(axis);
    return out[0] != NULL;
}

static bool emb_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const embedding *e = (const embedding *)l;
    cJSON *cfg = vcfg;
    return cJSON_AddNumberToObject(cfg, "input_dim", (double)e->input_dim) &&
           cJSON_AddNumberToObject(cfg, "output_dim", (double)e->output_dim) &&
           tfc_json_add_initializer(cfg, "embeddings_initializer", &e->init.init) &&
           tfc_json_add_regularizer(cfg, "embeddings_regularizer", &e->reg, e->has_reg) &&
           tfc_json_add_regularizer(cfg, "activity_regularizer", &l->activity_reg, l->has_activity_reg) &&
           cJSON_AddNullToObject(cfg, "embeddings_constraint") && cJSON_AddBoolToObject(cfg, "mask_zero", e->mask_zero) &&
           (e->input_length >= 0 ? cJSON_AddNumberToObject(cfg, "input_length", (double)e->input_length) != NULL
                                 : cJSON_AddNullToObject(cfg, "input_length") != NULL);
}

static const tfc_layer_class embedding_class = {
    .class_name = "Embedding",
    .size = sizeof(embedding),
    .build = emb_build,
    .compute_output_shape = emb_output_shape,
    .call = emb_call,
    .get_config = emb_get_config,
};

tfc_layer *tfc_layers_embedding_new(const tfc_embedding_opts *o) {
    embedding *e = TFC_LAYER_NEW(embedding, &embedding_class, o);
    if (!e) return NULL;
    e->input_dim = o->input_dim;
    e->output_dim = o->output_dim;
    tfc_kinit_set(&e->init, o->embeddings_initializer, "random_uniform");
    if ((e->has_reg = o->embeddings_regularizer)) e->reg = *o->embeddings_regularizer;
    if ((e->base.has_activity_reg = o->activity_regularizer)) e->base.activity_reg = *o->activity_regularizer;
    e->mask_zero = o->mask_zero;
    e->input_length = o->input_length > 0 ? o->input_length : -1;
    e->base.no_autocast = true;
    /* Keras: input_shape defaults to (input_length,) or (None,) */
    if (!e->base.has_input_shape) {
        e->base.has_input_shape = true;
        e->base.input_shape = (tfc_shape){.rank = 2, .dims = {-1, e->input_length}};
    }
    return &e->base;
}

tfc_layer *tfc_keras_from_config_embedding(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_embedding_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool hi, ho, hr, ha;
    char iname[32];
    tfc_initializer init = {0};
    tfc_regularizer r, ar;
    int n = 0;
    int64_t len[TFC_MAX_RANK];
    if (!tfc_json_get_i64(cfg, "input_dim", &o.input_dim, &hi, st) ||
        !tfc_json_get_i64(cfg, "output_dim", &o.output_dim, &ho, st) ||
        !tfc_json_get_initializer(cfg, "embeddings_initializer", &init, iname, sizeof iname, st) ||
        !tfc_json_get_regularizer(cfg, "embeddings_regularizer", &r, &hr, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &ar, &ha, st) ||
        !tfc_json_get_bool(cfg, "mask_zero", &o.mask_zero, NULL, st) ||
        !tfc_json_get_i64_list(cfg, "input_length", len, TFC_MAX_RANK, &n, NULL, st))
        return NULL;
    if (!hi || !ho) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Embedding: the config needs \"input_dim\" and \"output_dim\"");
        return NULL;
    }
    if (n > 1) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "Embedding: a tuple input_length is not supported");
        return NULL;
    }
    if (n == 1) o.input_length = len[0];
    if (init.name) o.embeddings_initializer = &init;
    if (hr) o.embeddings_regularizer = &r;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = tfc_layers_embedding_new(&o);
    if (!l) tfc_status_oom(st, "Embedding", sizeof(embedding));
    return l;
}
