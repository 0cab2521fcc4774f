/* Typed wrappers for the image ops (include/tfc/ops/image.h). */
#include <string.h>

#include "tfc/ops/image.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

/* Releases an intermediate result, whether or not a scope tracks it (NULL-safe). */
static void discard(tfc_ctx *ctx, tfc_tensor *t) {
    if (t) tfc_tensor_unref(tfc_keep(ctx, t));
}

static tfc_tensor *size_vec(const char *op, int64_t h, int64_t w, tfc_status *st) {
    if (h > INT32_MAX || w > INT32_MAX || h < INT32_MIN || w < INT32_MIN) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: size (%lld, %lld) does not fit int32", op, (long long)h, (long long)w);
        return NULL;
    }
    return tfc_vec_i32((const int32_t[]){(int32_t)h, (int32_t)w}, 2, st);
}

tfc_tensor *tfc_decode_png(tfc_ctx *ctx, const tfc_tensor *contents, int channels, tfc_dtype dtype, tfc_status *st) {
    tfc_attr a[2] = {TFC_ATTR_I("channels", channels), TFC_ATTR_T("dtype", dtype ? dtype : TFC_UINT8)};
    return tfc_emit(ctx, "DecodePng", (tfc_tensor *[]){T(contents)}, 1, a, 2, st);
}

tfc_tensor *tfc_decode_jpeg(tfc_ctx *ctx, const tfc_tensor *contents, const tfc_decode_jpeg_attrs *attrs,
                            tfc_status *st) {
    const tfc_decode_jpeg_attrs d = attrs ? *attrs : (tfc_decode_jpeg_attrs){0};
    tfc_attr a[6] = {
        TFC_ATTR_I("channels", d.channels),
        TFC_ATTR_I("ratio", d.ratio ? d.ratio : 1),
        TFC_ATTR_B("fancy_upscaling", !d.no_fancy_upscaling),
        TFC_ATTR_B("try_recover_truncated", d.try_recover_truncated),
        TFC_ATTR_F("acceptable_fraction", d.acceptable_fraction > 0 ? d.acceptable_fraction : 1.0),
        TFC_ATTR_S("dct_method", d.dct_method ? d.dct_method : ""),
    };
    return tfc_emit(ctx, "DecodeJpeg", (tfc_tensor *[]){T(contents)}, 1, a, 6, st);
}

tfc_tensor *tfc_decode_image(tfc_ctx *ctx, const tfc_tensor *contents, int channels, tfc_dtype dtype, tfc_status *st) {
    tfc_attr a[3] = {TFC_ATTR_I("channels", channels), TFC_ATTR_T("dtype", dtype ? dtype : TFC_UINT8),
                     TFC_ATTR_B("expand_animations", false)};
    return tfc_emit(ctx, "DecodeImage", (tfc_tensor *[]){T(contents)}, 1, a, 3, st);
}

tfc_tensor *tfc_encode_png(tfc_ctx *ctx, const tfc_tensor *image, int compression, tfc_status *st) {
    tfc_attr a = TFC_ATTR_I("compression", compression);
    return tfc_emit(ctx, "EncodePng", (tfc_tensor *[]){T(image)}, 1, &a, 1, st);
}

tfc_tensor *tfc_encode_jpeg(tfc_ctx *ctx, const tfc_tensor *image, const tfc_encode_jpeg_attrs *attrs, tfc_status *st) {
    const tfc_encode_jpeg_attrs d = attrs ? *attrs : (tfc_encode_jpeg_attrs){0};
    tfc_attr a[9] = {
        TFC_ATTR_S("format", d.format ? d.format : ""),
        TFC_ATTR_I("quality", d.quality ? d.quality : 95),
        TFC_ATTR_B("progressive", d.progressive),
        TFC_ATTR_B("optimize_size", d.optimize_size),
        TFC_ATTR_B("chroma_downsampling", !d.no_chroma_downsampling),
        TFC_ATTR_S("density_unit", d.density_unit ? d.density_unit : "in"),
        TFC_ATTR_I("x_density", d.x_density ? d.x_density : 300),
        TFC_ATTR_I("y_density", d.y_density ? d.y_density : 300),
        TFC_ATTR_S("xmp_metadata", d.xmp_metadata ? d.xmp_metadata : ""),
    };
    return tfc_emit(ctx, "EncodeJpeg", (tfc_tensor *[]){T(image)}, 1, a, 9, st);
}

static tfc_tensor *resize(tfc_ctx *ctx, const char *op, const tfc_tensor *images, int64_t h, int64_t w, bool align,
                          bool half, tfc_status *st) {
    tfc_tensor *size = size_vec(op, h, w, st);
    if (!size) return NULL;
    tfc_attr a[2] = {TFC_ATTR_B("align_corners", align), TFC_ATTR_B("half_pixel_centers", half)};
    tfc_tensor *r = tfc_emit(ctx, op, (tfc_tensor *[]){T(images), size}, 2, a, 2, st);
    tfc_tensor_unref(size);
    return r;
}

tfc_tensor *tfc_resize_bilinear(tfc_ctx *ctx, const tfc_tensor *images, int64_t height, int64_t width,
                                bool align_corners, bool half_pixel_centers, tfc_status *st) {
    return resize(ctx, "ResizeBilinear", images, height, width, align_corners, half_pixel_centers, st);
}

tfc_tensor *tfc_resize_nearest_neighbor(tfc_ctx *ctx, const tfc_tensor *images, int64_t height, int64_t width,
                                        bool align_corners, bool half_pixel_centers, tfc_status *st) {
    return resize(ctx, "ResizeNearestNeighbor", images, height, width, align_corners, half_pixel_centers, st);
}

/* tf.image.resize: a 3-D image goes through the 4-D op as a batch of one (reshapes share the buffer). */
tfc_tensor *tfc_image_resize(tfc_ctx *ctx, const tfc_tensor *images, int64_t height, int64_t width,
                             tfc_resize_method method, tfc_status *st) {
    const char *op = method == TFC_RESIZE_NEAREST ? "ResizeNearestNeighbor" : "ResizeBilinear";
    if (!images) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: images is NULL", op);
        return NULL;
    }
    const tfc_shape *s = tfc_tensor_shape(images);
    if (s->rank != 3 && s->rank != 4) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: 'images' must have either 3 or 4 dimensions, got rank %d", op,
                       s->rank);
        return NULL;
    }
    if (s->rank == 4) return resize(ctx, op, images, height, width, false, true, st);
    tfc_tensor *shp = tfc_vec_i64((const int64_t[]){1, s->dims[0], s->dims[1], s->dims[2]}, 4, st);
    tfc_tensor *x4 = shp ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){T(images), shp}, 2, NULL, 0, st) : NULL;
    tfc_tensor *y4 = x4 ? resize(ctx, op, x4, height, width, false, true, st) : NULL;
    tfc_tensor *out = NULL;
    tfc_tensor_unref(shp);
    if (y4) {
        const tfc_shape *o = tfc_tensor_shape(y4);
        tfc_tensor *s3 = tfc_vec_i64((const int64_t[]){o->dims[1], o->dims[2], o->dims[3]}, 3, st);
        if (s3) out = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){y4, s3}, 2, NULL, 0, st);
        tfc_tensor_unref(s3);
    }
    discard(ctx, x4);
    discard(ctx, y4);
    return out;
}
