/* tf.keras.layers.Cropping1D / Cropping2D: x[:, a:-b, ...] over the steps (1-D) or height and width (2-D), one
 * StridedSlice as Keras's slicing (an end of 0 cropping means "to the end"). */
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/keras/reshaping.h"
#include "tfc/ops/array.h"

typedef struct {
    tfc_layer base;
    int rank; /* 1 or 2 */
    int64_t crop[2][2];
    char data_format[TFC_KCONV_STR];
} cropping;

static int first_axis(const cropping *c) { return c->rank == 2 && !strcmp(c->data_format, "channels_first") ? 2 : 1; }

static const char *crop_str(const cropping *c, char *buf, size_t size) {
    if (c->rank == 1)
        snprintf(buf, size, "(%lld, %lld)", (long long)c->crop[0][0], (long long)c->crop[0][1]);
    else
        snprintf(buf, size, "((%lld, %lld), (%lld, %lld))", (long long)c->crop[0][0], (long long)c->crop[0][1],
                 (long long)c->crop[1][0], (long long)c->crop[1][1]);
    return buf;
}

static bool crop_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                              tfc_status *st) {
    cropping *c = (cropping *)l;
    char cs[96];
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    if (c->rank == 2 && !tfc_kconv_check_data_format(l, c->data_format, st)) return false;
    for (int i = 0; i < c->rank; i++)
        if (c->crop[i][0] < 0 || c->crop[i][1] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "The `cropping` argument must hold non-negative integers. Received: %s (layer \"%s\")",
                                  crop_str(c, cs, sizeof cs), l->name);
    const tfc_shape *s = &in[0];
    if (!tfc_kconv_check_rank(l, s, c->rank + 2, false, st)) return false;
    int a = first_axis(c);
    out[0] = *s;
    for (int i = 0; i < c->rank; i++) {
        int64_t d = s->dims[a + i];
        if (d < 0) continue;
        /* Keras: sum(cropping) >= the length is refused (written without the sum, which could overflow) */
        if (c->crop[i][0] >= d || c->crop[i][1] >= d - c->crop[i][0])
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s parameter of Cropping layer must be greater than the input shape. Received: "
                                  "inputs.shape=%s, and cropping=%s (layer \"%s\")",
                                  c->rank == 1 ? "cropping" : "Argument `cropping`", TFC_KSHP(s),
                                  crop_str(c, cs, sizeof cs), l->name);
        out[0].dims[a + i] = d - c->crop[i][0] - c->crop[i][1];
    }
    *n_out = 1;
    return true;
}

static bool crop_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = ((cropping *)l)->rank + 2};
    l->has_input_spec = true;
    return true;
}

static bool crop_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    cropping *c = (cropping *)l;
    tfc_shape os;
    if (!crop_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    int r = c->rank + 2, a = first_axis(c);
    int64_t begin[4] = {0}, end[4] = {0};
    tfc_strided_slice_attrs m = {0};
    for (int i = 0; i < r; i++) {
        int k = i - a;
        if (k < 0 || k >= c->rank) {
            m.begin_mask |= 1 << i;
            m.end_mask |= 1 << i;
            continue;
        }
        begin[i] = c->crop[k][0];
        if (c->crop[k][1]) end[i] = -c->crop[k][1];
        else m.end_mask |= 1 << i;
    }
    return (out[0] = tfc_strided_slice(ctx, in[0], begin, end, NULL, r, &m, st)) != NULL;
}

static bool crop_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const cropping *c = (const cropping *)l;
    cJSON *cfg = vcfg, *v = NULL;
    if (c->rank == 1) {
        v = tfc_json_int_array(c->crop[0], 2);
    } else if ((v = cJSON_CreateArray())) {
        for (int i = 0; i < 2; i++) {
            cJSON *pair = tfc_json_int_array(c->crop[i], 2);
            if (!pair || !cJSON_AddItemToArray(v, pair)) {
                cJSON_Delete(pair);
                cJSON_Delete(v);
                return false;
            }
        }
    }
    if (!v || !cJSON_AddItemToObject(cfg, "cropping", v)) {
        cJSON_Delete(v);
        return false;
    }
    return c->rank == 1 || cJSON_AddStringToObject(cfg, "data_format", c->data_format);
}

static const tfc_layer_class cropping1d_class = {
    .class_name = "Cropping1D",
    .size = sizeof(cropping),
    .build = crop_build,
    .compute_output_shape = crop_output_shape,
    .call = crop_call,
    .get_config = crop_get_config,
};

static const tfc_layer_class cropping2d_class = {
    .class_name = "Cropping2D",
    .size = sizeof(cropping),
    .build = crop_build,
    .compute_output_shape = crop_output_shape,
    .call = crop_call,
    .get_config = crop_get_config,
};

tfc_layer *tfc_layers_cropping1d_new(const tfc_cropping1d_opts *o) {
    cropping *c = TFC_LAYER_NEW(cropping, &cropping1d_class, o);
    if (!c) return NULL;
    c->base.keeps_input_dtype = true;
    c->rank = 1;
    c->crop[0][0] = o->has_cropping ? o->cropping[0] : 1;
    c->crop[0][1] = o->has_cropping ? o->cropping[1] : 1;
    return &c->base;
}

tfc_layer *tfc_layers_cropping2d_new(const tfc_cropping2d_opts *o) {
    cropping *c = TFC_LAYER_NEW(cropping, &cropping2d_class, o);
    if (!c) return NULL;
    c->base.keeps_input_dtype = true;
    c->rank = 2;
    memcpy(c->crop, o->cropping, sizeof c->crop);
    tfc_kconv_lower(c->data_format, sizeof c->data_format, o->data_format, "channels_last");
    return &c->base;
}

/* An int n (-> (n, n)) or a list of 2 ints. */
static bool int_or_pair(const cJSON *e, int64_t out[2]) {
    if (cJSON_IsNumber(e) && e->valuedouble == (double)(int64_t)e->valuedouble) {
        out[0] = out[1] = (int64_t)e->valuedouble;
        return true;
    }
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2) return false;
    for (int i = 0; i < 2; i++) {
        const cJSON *v = cJSON_GetArrayItem(e, i);
        if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble) return false;
        out[i] = (int64_t)v->valuedouble;
    }
    return true;
}

tfc_layer *tfc_keras_from_config_cropping1d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_cropping1d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cfg, "cropping");
    if (p && !cJSON_IsNull(p)) {
        if (!int_or_pair(p, o.cropping)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Cropping1D: the `cropping` argument must be a tuple of 2 "
                           "integers (config key \"cropping\")");
            return NULL;
        }
        o.has_cropping = true;
    }
    tfc_layer *l = tfc_layers_cropping1d_new(&o);
    if (!l) tfc_status_oom(st, "Cropping1D", sizeof(cropping));
    return l;
}

tfc_layer *tfc_keras_from_config_cropping2d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_cropping2d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    if (!tfc_kconv_json_data_format(cfg, &o.data_format, st)) return NULL;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cfg, "cropping");
    if (p && !cJSON_IsNull(p)) {
        bool ok;
        if (cJSON_IsNumber(p)) {
            ok = int_or_pair(p, o.cropping[0]);
            o.cropping[1][0] = o.cropping[1][1] = o.cropping[0][0];
        } else {
            ok = cJSON_IsArray(p) && cJSON_GetArraySize(p) == 2 && int_or_pair(cJSON_GetArrayItem(p, 0), o.cropping[0]) &&
                 int_or_pair(cJSON_GetArrayItem(p, 1), o.cropping[1]);
        }
        if (!ok) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "`cropping` should be either an int, a tuple of 2 ints (symmetric_height_crop, "
                           "symmetric_width_crop), or a tuple of 2 tuples of 2 ints ((top_crop, bottom_crop), "
                           "(left_crop, right_crop)). (Cropping2D config key \"cropping\")");
            return NULL;
        }
    }
    tfc_layer *l = tfc_layers_cropping2d_new(&o);
    if (!l) tfc_status_oom(st, "Cropping2D", sizeof(cropping));
    return l;
}
