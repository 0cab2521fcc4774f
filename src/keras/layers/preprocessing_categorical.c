/* tf.keras.layers.CategoryEncoding (integer ids -> one_hot / multi_hot / count vectors) and Hashing
 * (strings or integers -> FarmHash / SipHash buckets, TensorFlow's StringToHashBucketFast / Strong). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/farmhash.h"
#include "core/siphash.h"
#include "keras/layers/preprocessing_internal.h"

#define ALL_MODES ((1u << TFC_PREP_INT) | (1u << TFC_PREP_ONE_HOT) | (1u << TFC_PREP_MULTI_HOT) | (1u << TFC_PREP_COUNT))
#define HOT_MODES (ALL_MODES & ~(1u << TFC_PREP_INT))

/* ---- CategoryEncoding ---- */

typedef struct {
    tfc_layer base;
    int64_t num_tokens;
    char mode_name[16];
    bool has_mode, sparse;
    tfc_prep_mode mode;
} category_encoding;

static bool ce_check(category_encoding *c, tfc_status *st) {
    tfc_layer *l = &c->base;
    if (c->num_tokens < 1)
        return c->num_tokens == 0
                   ? tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                    "Layer \"%s\": num_tokens must be set to use this layer. If the number of tokens is "
                                    "not known beforehand, use the IntegerLookup layer instead.",
                                    l->name)
                   : tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `num_tokens` must be >= 1. Received: "
                                    "num_tokens=%lld.", l->name, (long long)c->num_tokens);
    if (c->sparse)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "Layer \"%s\": sparse=True outputs are not supported", l->name);
    return tfc_prep_mode_parse(l, c->has_mode ? c->mode_name : NULL, TFC_PREP_MULTI_HOT, HOT_MODES, &c->mode, st);
}

static bool ce_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    category_encoding *c = (category_encoding *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !ce_check(c, st)) return false;
    *n_out = 1;
    return tfc_prep_encoded_shape(l, &in[0], c->mode, c->num_tokens, &out[0], st);
}

static bool any_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static bool ce_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    category_encoding *c = (category_encoding *)l;
    if (!ce_check(c, st)) return false;
    int64_t n;
    int64_t *ids = tfc_prep_read_ints(l, in[0], &n, st);
    if (!ids) return false;
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->num_tokens) {
            long long bad = (long long)ids[i];
            tfc_free(ids);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": Input values must be in the range 0 <= values < num_tokens with "
                                  "num_tokens=%lld (got %lld)",
                                  l->name, (long long)c->num_tokens, bad);
        }
    out[0] = tfc_prep_encode(l, ids, tfc_tensor_shape(in[0]), c->mode, c->num_tokens, NULL, st);
    tfc_free(ids);
    return out[0] != NULL;
}

static bool ce_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const category_encoding *c = (const category_encoding *)l;
    cJSON *cfg = vcfg;
    return cJSON_AddNumberToObject(cfg, "num_tokens", (double)c->num_tokens) &&
           cJSON_AddStringToObject(cfg, "output_mode", c->has_mode ? c->mode_name : "multi_hot") &&
           cJSON_AddBoolToObject(cfg, "sparse", c->sparse);
}

static const tfc_layer_class category_encoding_class = {
    .class_name = "CategoryEncoding", .size = sizeof(category_encoding), .build = any_build,
    .compute_output_shape = ce_output_shape, .call = ce_call, .get_config = ce_get_config,
};

static void copy_mode(char *dst, size_t size, bool *has, const char *name) {
    if ((*has = name != NULL)) snprintf(dst, size, "%s", name);
}

tfc_layer *tfc_layers_category_encoding_new(const tfc_category_encoding_opts *o) {
    category_encoding *c = TFC_LAYER_NEW(category_encoding, &category_encoding_class, o);
    if (!c) return NULL;
    c->num_tokens = o->num_tokens;
    c->sparse = o->sparse;
    copy_mode(c->mode_name, sizeof c->mode_name, &c->has_mode, o->output_mode);
    c->base.no_autocast = true;
    return &c->base;
}

tfc_layer *tfc_keras_from_config_category_encoding(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_category_encoding_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    if (!tfc_json_get_i64(cfg, "num_tokens", &o.num_tokens, NULL, st) ||
        !tfc_json_get_str(cfg, "output_mode", &o.output_mode, NULL, st) ||
        !tfc_json_get_bool(cfg, "sparse", &o.sparse, NULL, st))
        return NULL;
    tfc_layer *l = tfc_layers_category_encoding_new(&o);
    if (!l) tfc_status_oom(st, "CategoryEncoding", sizeof(category_encoding));
    return l;
}

/* ---- Hashing ---- */

typedef struct {
    tfc_layer base;
    int64_t num_bins;
    char *mask_value;          /* owned; NULL = None */
    int64_t mask_int;
    bool has_mask_int, has_salt, salt_pair;
    uint64_t salt[2];
    char mode_name[16];
    bool has_mode;
    tfc_prep_mode mode;
} hashing;

static bool hash_check(hashing *h, tfc_status *st) {
    tfc_layer *l = &h->base;
    if (h->num_bins <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": The `num_bins` for `Hashing` cannot be `None` or non-positive values. "
                              "Received: num_bins=%lld.",
                              l->name, (long long)h->num_bins);
    return tfc_prep_mode_parse(l, h->has_mode ? h->mode_name : NULL, TFC_PREP_INT, ALL_MODES, &h->mode, st);
}

static bool hash_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                              tfc_status *st) {
    hashing *h = (hashing *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !hash_check(h, st)) return false;
    *n_out = 1;
    return tfc_prep_encoded_shape(l, &in[0], h->mode, h->num_bins, &out[0], st);
}

static uint64_t hash_bytes(const hashing *h, const char *s, size_t n) {
    return h->has_salt ? tfc_siphash24(h->salt, s, n) : tfc_fingerprint64(s, n);
}

static bool hash_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    hashing *h = (hashing *)l;
    if (!hash_check(h, st)) return false;
    tfc_tensor *x = in[0];
    bool strings = tfc_tensor_dtype(x) == TFC_STRING;
    int64_t n = tfc_tensor_num_elements(x), *ints = NULL;
    if (!strings && !(ints = tfc_prep_read_ints(l, x, &n, st))) return false;
    int64_t *ids = tfc_malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) {
        tfc_free(ints);
        return tfc_status_oom(st, l->name, (size_t)n * sizeof *ids);
    }
    bool masked = h->num_bins > 1 && (strings ? h->mask_value != NULL : h->has_mask_int);
    uint64_t bins = (uint64_t)(masked ? h->num_bins - 1 : h->num_bins);
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        char buf[24];
        const char *s = strings ? tfc_tensor_string(x, i, &len) : buf;
        if (!strings) len = (size_t)snprintf(buf, sizeof buf, "%" PRId64, ints[i]);
        bool is_mask = masked && (strings ? strlen(h->mask_value) == len && !memcmp(h->mask_value, s, len)
                                          : ints[i] == h->mask_int);
        ids[i] = is_mask ? 0 : (int64_t)(hash_bytes(h, s, len) % bins) + (masked ? 1 : 0);
    }
    tfc_free(ints);
    out[0] = h->mode == TFC_PREP_INT ? tfc_prep_ids_tensor(ids, tfc_tensor_shape(x), st)
                                     : tfc_prep_encode(l, ids, tfc_tensor_shape(x), h->mode, h->num_bins, NULL, st);
    tfc_free(ids);
    return out[0] != NULL;
}

static bool hash_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const hashing *h = (const hashing *)l;
    cJSON *cfg = vcfg, *salt;
    if (!h->has_salt) salt = cJSON_CreateNull();
    else if (!h->salt_pair) salt = cJSON_CreateNumber((double)h->salt[0]);
    else {
        int64_t s[2] = {(int64_t)h->salt[0], (int64_t)h->salt[1]};
        salt = tfc_json_int_array(s, 2);
    }
    if (!cJSON_AddNumberToObject(cfg, "num_bins", (double)h->num_bins) || !salt ||
        !cJSON_AddItemToObject(cfg, "salt", salt))
        return cJSON_Delete(salt), false;
    bool ok = h->mask_value ? cJSON_AddStringToObject(cfg, "mask_value", h->mask_value) != NULL
              : h->has_mask_int ? cJSON_AddNumberToObject(cfg, "mask_value", (double)h->mask_int) != NULL
                                : cJSON_AddNullToObject(cfg, "mask_value") != NULL;
    return ok && cJSON_AddStringToObject(cfg, "output_mode", h->has_mode ? h->mode_name : "int") &&
           cJSON_AddBoolToObject(cfg, "sparse", false);
}

static void hash_destroy(tfc_layer *l) { tfc_free(((hashing *)l)->mask_value); }

static const tfc_layer_class hashing_class = {
    .class_name = "Hashing", .size = sizeof(hashing), .build = any_build, .compute_output_shape = hash_output_shape,
    .call = hash_call, .get_config = hash_get_config, .destroy = hash_destroy,
};

static tfc_layer *hashing_new(const tfc_hashing_opts *o, bool salt_pair) {
    hashing *h = TFC_LAYER_NEW(hashing, &hashing_class, o);
    if (!h) return NULL;
    h->num_bins = o->num_bins;
    h->mask_int = o->mask_value_int;
    h->has_mask_int = o->has_mask_value_int;
    h->has_salt = o->has_salt;
    h->salt_pair = salt_pair;
    h->salt[0] = o->salt[0];
    h->salt[1] = o->salt[1];
    copy_mode(h->mode_name, sizeof h->mode_name, &h->has_mode, o->output_mode);
    if (o->mask_value) {
        size_t n = strlen(o->mask_value) + 1;
        if (!(h->mask_value = tfc_malloc(n))) return tfc_layer_unref(&h->base), NULL;
        memcpy(h->mask_value, o->mask_value, n);
    }
    /* Keras: int64 ids in "int" mode, float vectors otherwise */
    tfc_prep_mode m = TFC_PREP_INT;
    tfc_status ignore = TFC_STATUS_INIT;
    if (tfc_prep_mode_parse(&h->base, o->output_mode, TFC_PREP_INT, ALL_MODES, &m, &ignore) && m == TFC_PREP_INT)
        h->base.dtype = h->base.compute_dtype = TFC_INT64;
    h->base.no_autocast = true;
    return &h->base;
}

tfc_layer *tfc_layers_hashing_new(const tfc_hashing_opts *o) { return hashing_new(o, o->has_salt && o->salt[0] != o->salt[1]); }

tfc_layer *tfc_keras_from_config_hashing(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_hashing_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    const cJSON *mv = cJSON_GetObjectItemCaseSensitive(cfg, "mask_value");
    const cJSON *salt = cJSON_GetObjectItemCaseSensitive(cfg, "salt");
    bool pair = false;
    if (!tfc_json_get_i64(cfg, "num_bins", &o.num_bins, NULL, st) ||
        !tfc_json_get_str(cfg, "output_mode", &o.output_mode, NULL, st))
        return NULL;
    if (cJSON_IsString(mv)) o.mask_value = mv->valuestring;
    else if (cJSON_IsNumber(mv)) o.mask_value_int = (int64_t)mv->valuedouble, o.has_mask_value_int = true;
    if (cJSON_IsNumber(salt)) o.has_salt = true, o.salt[0] = o.salt[1] = (uint64_t)(int64_t)salt->valuedouble;
    else if (cJSON_IsArray(salt) && cJSON_GetArraySize(salt) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(salt, 0)) &&
             cJSON_IsNumber(cJSON_GetArrayItem(salt, 1))) {
        o.has_salt = pair = true;
        o.salt[0] = (uint64_t)(int64_t)cJSON_GetArrayItem(salt, 0)->valuedouble;
        o.salt[1] = (uint64_t)(int64_t)cJSON_GetArrayItem(salt, 1)->valuedouble;
    } else if (salt && !cJSON_IsNull(salt)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Hashing: `salt` must be an int or a list of two ints");
        return NULL;
    }
    tfc_layer *l = hashing_new(&o, pair);
    if (!l) tfc_status_oom(st, "Hashing", sizeof(hashing));
    return l;
}
