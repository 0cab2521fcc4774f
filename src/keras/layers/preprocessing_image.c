/* tf.keras.layers.Rescaling (x * scale + offset), CenterCrop and Resizing (tf.image.resize: ResizeBilinear /
 * ResizeNearestNeighbor with half-pixel centres; crop_to_aspect_ratio as Keras's smart_resize). Images are
 * channels_last, [batch, h, w, c] or [h, w, c]. Built from ops, so Rescaling and the bilinear paths are
 * differentiable. */
#include <string.h>

#include "keras/layers/preprocessing_internal.h"

/* ---- Rescaling ---- */

typedef struct {
    tfc_layer base;
    double scale, offset;
} rescaling;

static bool resc_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    return tfc_keras_same_shape(l, in, n_in, out, n_out, st);
}

static bool any_rank_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *cast_to(tfc_ctx *ctx, tfc_tensor *x, tfc_dtype dt, tfc_status *st) {
    if (tfc_tensor_dtype(x) == dt) return x;
    tfc_attr a = TFC_ATTR_T("DstT", dt);
    return tfc_emit(ctx, "Cast", &x, 1, &a, 1, st);
}

static bool resc_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    rescaling *r = (rescaling *)l;
    tfc_dtype dt = l->compute_dtype;
    tfc_tensor *x = cast_to(ctx, in[0], dt, st);
    tfc_tensor *s = x ? tfc_scalar(dt, r->scale, st) : NULL, *o = s ? tfc_scalar(dt, r->offset, st) : NULL;
    tfc_tensor *y = o ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, s}, 2, NULL, 0, st) : NULL;
    out[0] = y ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){y, o}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(s);
    tfc_tensor_unref(o);
    return out[0] != NULL;
}

static bool resc_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const rescaling *r = (const rescaling *)l;
    return cJSON_AddNumberToObject(vcfg, "scale", r->scale) && cJSON_AddNumberToObject(vcfg, "offset", r->offset);
}

static const tfc_layer_class rescaling_class = {
    .class_name = "Rescaling", .size = sizeof(rescaling), .build = any_rank_build,
    .compute_output_shape = resc_output_shape, .call = resc_call, .get_config = resc_get_config,
};

tfc_layer *tfc_layers_rescaling_new(const tfc_rescaling_opts *o) {
    rescaling *r = TFC_LAYER_NEW(rescaling, &rescaling_class, o);
    if (!r) return NULL;
    r->scale = o->scale;
    r->offset = o->offset;
    return &r->base;
}

tfc_layer *tfc_keras_from_config_rescaling(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_rescaling_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool has_scale = false;
    if (!tfc_json_get_f64(cfg, "scale", &o.scale, &has_scale, st) || !tfc_json_get_f64(cfg, "offset", &o.offset, NULL, st))
        return NULL;
    if (!has_scale) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Rescaling: the config has no \"scale\""), NULL;
    tfc_layer *l = tfc_layers_rescaling_new(&o);
    if (!l) tfc_status_oom(st, "Rescaling", sizeof(rescaling));
    return l;
}

/* ---- CenterCrop and Resizing ---- */

typedef struct {
    tfc_layer base;
    int64_t height, width;
    char interpolation[16];
    bool nearest, crop_to_aspect_ratio, is_crop;
} image_layer;

static bool img_check(image_layer *m, const tfc_shape *s, tfc_status *st) {
    tfc_layer *l = &m->base;
    if (m->height < 1 || m->width < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `height` and `width` must be positive, got %lld "
                              "and %lld", l->name, (long long)m->height, (long long)m->width);
    if (!m->is_crop && strcmp(m->interpolation, "bilinear") && strcmp(m->interpolation, "nearest"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": Value not recognized for `interpolation`: %s. "
                              "Supported values are: {'bilinear', 'nearest'}", l->name, m->interpolation);
    if (s && s->rank != 3 && s->rank != 4)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": expected images of rank 3 or 4 "
                              "([batch,] height, width, channels), got shape %s", l->name, TFC_KSHP(s));
    return true;
}

static bool img_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    image_layer *m = (image_layer *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !img_check(m, &in[0], st)) return false;
    out[0] = in[0];
    out[0].dims[in[0].rank - 3] = m->height;
    out[0].dims[in[0].rank - 2] = m->width;
    *n_out = 1;
    return true;
}

/* x[..., h0:h0+h, w0:w0+w, :] (rank 3 or 4) */
static tfc_tensor *crop(tfc_ctx *ctx, tfc_tensor *x, int64_t h0, int64_t w0, int64_t h, int64_t w, tfc_status *st) {
    int r = tfc_tensor_rank(x);
    int64_t b[4] = {0}, s[4] = {-1, -1, -1, -1};
    b[r - 3] = h0, b[r - 2] = w0, s[r - 3] = h, s[r - 2] = w;
    tfc_tensor *bt = tfc_tensor_from_data(TFC_INT64, (int64_t[]){r}, 1, b, (size_t)r * sizeof(int64_t), st);
    tfc_tensor *st_ = bt ? tfc_tensor_from_data(TFC_INT64, (int64_t[]){r}, 1, s, (size_t)r * sizeof(int64_t), st) : NULL;
    tfc_tensor *y = st_ ? tfc_emit(ctx, "Slice", (tfc_tensor *[]){x, bt, st_}, 3, NULL, 0, st) : NULL;
    tfc_tensor_unref(bt);
    tfc_tensor_unref(st_);
    return y;
}

/* x reshaped with the Reshape op (so the result is owned like any op output). */
static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *shape = tfc_vec_i64(dims, rank, st);
    tfc_tensor *y = shape ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, shape}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(shape);
    return y;
}

/* tf.image.resize to [h, w] without antialias: float32 (bilinear) or the input's dtype (nearest). */
static tfc_tensor *resize(tfc_ctx *ctx, tfc_tensor *x, int64_t h, int64_t w, bool nearest, tfc_status *st) {
    int r = tfc_tensor_rank(x);
    tfc_tensor *x4 = x;
    if (r == 3) {
        const tfc_shape *s = tfc_tensor_shape(x);
        int64_t d[4] = {1, s->dims[0], s->dims[1], s->dims[2]};
        if (!(x4 = reshape(ctx, x, d, 4, st))) return NULL;
    }
    int32_t sz[2] = {(int32_t)h, (int32_t)w};
    tfc_tensor *size = tfc_vec_i32(sz, 2, st);
    tfc_attr a[2] = {TFC_ATTR_B("align_corners", false), TFC_ATTR_B("half_pixel_centers", true)};
    tfc_tensor *y = size ? tfc_emit(ctx, nearest ? "ResizeNearestNeighbor" : "ResizeBilinear",
                                    (tfc_tensor *[]){x4, size}, 2, a, 2, st)
                         : NULL;
    tfc_tensor_unref(size);
    if (y && r == 3) {
        const tfc_shape *s = tfc_tensor_shape(y);
        int64_t d[3] = {s->dims[1], s->dims[2], s->dims[3]};
        y = reshape(ctx, y, d, 3, st);
    }
    return y;
}

/* Keras's smart_resize: the largest centred window of the target's aspect ratio, then resized. */
static tfc_tensor *smart_resize(image_layer *m, tfc_ctx *ctx, tfc_tensor *x, bool nearest, tfc_status *st) {
    const tfc_shape *s = tfc_tensor_shape(x);
    int64_t H = s->dims[s->rank - 3], W = s->dims[s->rank - 2];
    int64_t ch = (int64_t)((float)(W * m->height) / (float)m->width), cw = (int64_t)((float)(H * m->width) / (float)m->height);
    if (ch > H) ch = H;
    if (cw > W) cw = W;
    int64_t h0 = (int64_t)((float)(H - ch) / 2), w0 = (int64_t)((float)(W - cw) / 2);
    tfc_tensor *c = crop(ctx, x, h0, w0, ch, cw, st);
    return c ? resize(ctx, c, m->height, m->width, nearest, st) : NULL;
}

static bool img_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    image_layer *m = (image_layer *)l;
    tfc_tensor *x = in[0];
    if (!img_check(m, tfc_tensor_shape(x), st)) return false;
    const tfc_shape *s = tfc_tensor_shape(x);
    int64_t H = s->dims[s->rank - 3], W = s->dims[s->rank - 2];
    if (H == 0 || W == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": images of zero size %s", l->name, TFC_KSHP(s));
    tfc_dtype cd = l->compute_dtype;
    tfc_tensor *y;
    if (m->is_crop) {
        if (!(x = cast_to(ctx, x, cd, st))) return false;
        if (H >= m->height && W >= m->width)
            y = crop(ctx, x, (H - m->height) / 2, (W - m->width) / 2, m->height, m->width, st);
        else
            y = smart_resize(m, ctx, x, false, st);
    } else {
        bool nearest = m->nearest;
        if (!(x = cast_to(ctx, x, nearest ? cd : TFC_FLOAT, st))) return false;
        y = m->crop_to_aspect_ratio ? smart_resize(m, ctx, x, nearest, st) : resize(ctx, x, m->height, m->width, nearest, st);
    }
    return (out[0] = y ? cast_to(ctx, y, cd, st) : NULL) != NULL;
}

static bool img_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const image_layer *m = (const image_layer *)l;
    bool ok = cJSON_AddNumberToObject(vcfg, "height", (double)m->height) &&
              cJSON_AddNumberToObject(vcfg, "width", (double)m->width);
    if (m->is_crop || !ok) return ok;
    return cJSON_AddStringToObject(vcfg, "interpolation", m->interpolation) &&
           cJSON_AddBoolToObject(vcfg, "crop_to_aspect_ratio", m->crop_to_aspect_ratio);
}

static const tfc_layer_class center_crop_class = {
    .class_name = "CenterCrop", .size = sizeof(image_layer), .build = any_rank_build,
    .compute_output_shape = img_output_shape, .call = img_call, .get_config = img_get_config,
};
static const tfc_layer_class resizing_class = {
    .class_name = "Resizing", .size = sizeof(image_layer), .build = any_rank_build,
    .compute_output_shape = img_output_shape, .call = img_call, .get_config = img_get_config,
};

static tfc_layer *image_new(const tfc_image_preprocessing_opts *o, bool is_crop) {
    image_layer *m = TFC_LAYER_NEW(image_layer, is_crop ? &center_crop_class : &resizing_class, o);
    if (!m) return NULL;
    m->is_crop = is_crop;
    m->height = o->height;
    m->width = o->width;
    snprintf(m->interpolation, sizeof m->interpolation, "%s", o->interpolation ? o->interpolation : "bilinear");
    m->nearest = !strcmp(m->interpolation, "nearest");
    m->crop_to_aspect_ratio = o->crop_to_aspect_ratio;
    return &m->base;
}

tfc_layer *tfc_layers_center_crop_new(const tfc_image_preprocessing_opts *o) { return image_new(o, true); }
tfc_layer *tfc_layers_resizing_new(const tfc_image_preprocessing_opts *o) { return image_new(o, false); }

static tfc_layer *image_from_config(const cJSON *cfg, bool is_crop, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_image_preprocessing_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    bool hh = false, hw = false;
    if (!tfc_json_get_i64(cfg, "height", &o.height, &hh, st) || !tfc_json_get_i64(cfg, "width", &o.width, &hw, st) ||
        !tfc_json_get_str(cfg, "interpolation", &o.interpolation, NULL, st) ||
        !tfc_json_get_bool(cfg, "crop_to_aspect_ratio", &o.crop_to_aspect_ratio, NULL, st))
        return NULL;
    const char *cls = is_crop ? "CenterCrop" : "Resizing";
    if (!hh || !hw) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the config needs \"height\" and \"width\"", cls), NULL;
    tfc_layer *l = image_new(&o, is_crop);
    if (!l) tfc_status_oom(st, cls, sizeof(image_layer));
    return l;
}

tfc_layer *tfc_keras_from_config_center_crop(const cJSON *cfg, tfc_status *st) { return image_from_config(cfg, true, st); }
tfc_layer *tfc_keras_from_config_resizing(const cJSON *cfg, tfc_status *st) { return image_from_config(cfg, false, st); }
