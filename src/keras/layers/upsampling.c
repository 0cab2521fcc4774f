/* tf.keras.layers.UpSampling1D (repeat each step: ExpandDims, Tile, Reshape) and UpSampling2D (tf.image.resize:
 * ResizeNearestNeighbor or ResizeBilinear with half_pixel_centers; channels_first is transposed around it). */
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/keras/reshaping.h"
#include "tfc/ops/array.h"

typedef struct {
    tfc_layer base;
    int rank; /* 1 or 2 */
    int64_t size[2];
    char data_format[TFC_KCONV_STR], interpolation[TFC_KCONV_STR];
} upsampling;

static bool cfirst(const upsampling *u) { return !strcmp(u->data_format, "channels_first"); }

static bool check_interpolation(const tfc_layer *l, const char *m, tfc_status *st) {
    if (!strcmp(m, "nearest") || !strcmp(m, "bilinear")) return true;
    static const char *const other[] = {"area", "bicubic", "gaussian", "lanczos3", "lanczos5", "mitchellcubic"};
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        if (!strcmp(m, other[i]))
            return tfc_status_set(st, TFC_UNIMPLEMENTED,
                                  "UpSampling2D: interpolation \"%s\" is not implemented in tfc (\"nearest\" and "
                                  "\"bilinear\" are) (layer \"%s\")", m, l->name);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "`interpolation` argument should be one of: \"area\", \"bicubic\", \"bilinear\", "
                          "\"gaussian\", \"lanczos3\", \"lanczos5\", \"mitchellcubic\", \"nearest\". Received: \"%s\". "
                          "(layer \"%s\")", m, l->name);
}

static bool us_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    upsampling *u = (upsampling *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tfc_kconv_check_pair(l, "size", u->size, 1, st)) return false;
    if (u->rank == 2 &&
        (!tfc_kconv_check_data_format(l, u->data_format, st) || !check_interpolation(l, u->interpolation, st)))
        return false;
    const tfc_shape *s = &in[0];
    if (!tfc_kconv_check_rank(l, s, u->rank + 2, false, st)) return false;
    int t0 = u->rank == 2 && cfirst(u) ? 2 : 1;
    out[0] = *s;
    for (int i = 0; i < u->rank; i++) {
        int64_t d = s->dims[t0 + i], r;
        if (d < 0) continue;
        if (__builtin_mul_overflow(d, u->size[i], &r) || r > INT32_MAX)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": upsampled size of %s by %lld overflows",
                                  l->name, TFC_KSHP(s), (long long)u->size[i]);
        out[0].dims[t0 + i] = r;
    }
    *n_out = 1;
    return true;
}

static bool us_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = ((upsampling *)l)->rank + 2};
    l->has_input_spec = true;
    return true;
}

/* Step i of [b, n, c] repeated `size` times: Reshape(Tile(ExpandDims(x, 2), [1, 1, size, 1]), shape(x) * [1, size, 1]). */
static tfc_tensor *repeat_steps(tfc_ctx *ctx, tfc_tensor *x, int64_t size, tfc_status *st) {
    tfc_tensor *e = tfc_expand_dims(ctx, x, 2, st);
    tfc_tensor *t = e ? tfc_tile(ctx, e, (int64_t[]){1, 1, size, 1}, st) : NULL;
    if (!t) return NULL;
    int64_t b = tfc_tensor_dim(x, 0), n = tfc_tensor_dim(x, 1), c = tfc_tensor_dim(x, 2);
    if (n >= 0 && c >= 0) return tfc_reshape(ctx, t, (int64_t[]){-1, n * size, c}, 3, st);
    if (b >= 0 && c >= 0) return tfc_reshape(ctx, t, (int64_t[]){b, -1, c}, 3, st);
    tfc_tensor *shp = tfc_shape_of(ctx, x, TFC_INT32, st);
    tfc_tensor *mul = shp ? tfc_vec_i32((int32_t[]){1, (int32_t)size, 1}, 3, st) : NULL;
    tfc_tensor *ns = mul ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){shp, mul}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(mul);
    return ns ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){t, ns}, 2, NULL, 0, st) : NULL;
}

static bool us_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    upsampling *u = (upsampling *)l;
    tfc_shape os;
    if (!us_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    if (u->rank == 1) return (out[0] = repeat_steps(ctx, in[0], u->size[0], st)) != NULL;
    bool cf = cfirst(u);
    tfc_tensor *x = cf ? tfc_transpose(ctx, in[0], (int64_t[]){0, 2, 3, 1}, st) : in[0];
    if (!x) return false;
    tfc_tensor *size;
    int64_t h = tfc_tensor_dim(x, 1), w = tfc_tensor_dim(x, 2);
    if (h >= 0 && w >= 0) {
        size = tfc_vec_i32((int32_t[]){(int32_t)(h * u->size[0]), (int32_t)(w * u->size[1])}, 2, st);
    } else { /* shape(x)[1:3] * size, as Keras's resize_images */
        tfc_tensor *shp = tfc_shape_of(ctx, x, TFC_INT32, st);
        tfc_tensor *hw = shp ? tfc_slice(ctx, shp, (int64_t[]){1}, (int64_t[]){2}, st) : NULL;
        tfc_tensor *f = hw ? tfc_vec_i32((int32_t[]){(int32_t)u->size[0], (int32_t)u->size[1]}, 2, st) : NULL;
        size = f ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){hw, f}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(f);
    }
    if (!size) return false;
    tfc_attr a[2] = {TFC_ATTR_B("align_corners", false), TFC_ATTR_B("half_pixel_centers", true)};
    bool nearest = !strcmp(u->interpolation, "nearest");
    tfc_tensor *y = tfc_emit(ctx, nearest ? "ResizeNearestNeighbor" : "ResizeBilinear", (tfc_tensor *[]){x, size},
                             2, a, 2, st);
    tfc_tensor_unref(size);
    if (y && cf) y = tfc_transpose(ctx, y, (int64_t[]){0, 3, 1, 2}, st);
    return (out[0] = y) != NULL;
}

static bool us_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const upsampling *u = (const upsampling *)l;
    cJSON *cfg = vcfg;
    if (u->rank == 1) return cJSON_AddNumberToObject(cfg, "size", (double)u->size[0]) != NULL;
    cJSON *sz = tfc_json_int_array(u->size, 2);
    if (!sz || !cJSON_AddItemToObject(cfg, "size", sz)) {
        cJSON_Delete(sz);
        return false;
    }
    return cJSON_AddStringToObject(cfg, "data_format", u->data_format) &&
           cJSON_AddStringToObject(cfg, "interpolation", u->interpolation);
}

static const tfc_layer_class up_sampling1d_class = {
    .class_name = "UpSampling1D",
    .size = sizeof(upsampling),
    .build = us_build,
    .compute_output_shape = us_output_shape,
    .call = us_call,
    .get_config = us_get_config,
};

static const tfc_layer_class up_sampling2d_class = {
    .class_name = "UpSampling2D",
    .size = sizeof(upsampling),
    .build = us_build,
    .compute_output_shape = us_output_shape,
    .call = us_call,
    .get_config = us_get_config,
};

tfc_layer *tfc_layers_up_sampling1d_new(const tfc_up_sampling1d_opts *o) {
    upsampling *u = TFC_LAYER_NEW(upsampling, &up_sampling1d_class, o);
    if (!u) return NULL;
    u->base.keeps_input_dtype = true;
    u->rank = 1;
    u->size[0] = o->size ? o->size : 2;
    u->size[1] = 1;
    return &u->base;
}

tfc_layer *tfc_layers_up_sampling2d_new(const tfc_up_sampling2d_opts *o) {
    upsampling *u = TFC_LAYER_NEW(upsampling, &up_sampling2d_class, o);
    if (!u) return NULL;
    u->base.keeps_input_dtype = true;
    u->rank = 2;
    tfc_kconv_pair(u->size, o->size, 2);
    tfc_kconv_lower(u->data_format, sizeof u->data_format, o->data_format, "channels_last");
    tfc_kconv_lower(u->interpolation, sizeof u->interpolation, o->interpolation, "nearest");
    return &u->base;
}

/* A config's positive size; zero would mean the default to the constructors, so it is refused here. */
static bool positive(const char *cls, int64_t v, tfc_status *st) {
    if (v > 0) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: `size` must be positive. Received: %lld", cls, (long long)v);
}

tfc_layer *tfc_keras_from_config_up_sampling1d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_up_sampling1d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    bool has;
    if (!tfc_json_get_i64(cfg, "size", &o.size, &has, st) || (has && !positive("UpSampling1D", o.size, st)))
        return NULL;
    tfc_layer *l = tfc_layers_up_sampling1d_new(&o);
    if (!l) tfc_status_oom(st, "UpSampling1D", sizeof(upsampling));
    return l;
}

tfc_layer *tfc_keras_from_config_up_sampling2d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_up_sampling2d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    bool has;
    if (!tfc_kconv_json_pair(cfg, "size", o.size, &has, st) || !tfc_kconv_json_data_format(cfg, &o.data_format, st) ||
        !tfc_json_get_str(cfg, "interpolation", &o.interpolation, NULL, st) ||
        (has && (!positive("UpSampling2D", o.size[0], st) || !positive("UpSampling2D", o.size[1], st))))
        return NULL;
    tfc_layer *l = tfc_layers_up_sampling2d_new(&o);
    if (!l) tfc_status_oom(st, "UpSampling2D", sizeof(upsampling));
    return l;
}
