/* Image ops (tensorflow/core/ops/image_ops.cc): decoding and encoding (DecodePng, DecodeJpeg, DecodeImage,
 * EncodePng, EncodeJpeg) and resizing (ResizeBilinear, ResizeNearestNeighbor and their *Grad helpers). Messages are
 * those of TensorFlow's kernels, which eager users see. Gradients mirror tensorflow/python/ops/image_grad.py. */
#include <string.h>

#include "core/tensor_internal.h"
#include "ops/op_util.h"

#define RESIZE_T "int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double"

/* ---- decoding / encoding -------------------------------------------------------------------------- */

static bool check_contents(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    if (s->rank > 0) return TFC_OP_ERR(c, st, "`contents` must be scalar but got shape%s", SHP(s));
    int64_t ch = tfc_attrs_int(c->attrs, "channels", 0);
    if (ch != 0 && ch != 1 && ch != 3 && ch != 4)
        return TFC_OP_ERR(c, st, "`channels` must be 0, 1, 3 or 4 but got %lld", (long long)ch);
    return true;
}

/* [height, width, channels]: height and width come from the data; channels too when the attr is 0. */
static bool decode3_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!check_contents(c, st)) return false;
    int64_t ch = tfc_attrs_int(c->attrs, "channels", 0);
    c->out_shapes[0] = (tfc_shape){.rank = 3, .dims = {-1, -1, ch ? ch : -1}};
    return true;
}

static bool decode_jpeg_shape(tfc_shape_ctx *c, tfc_status *st) {
    int64_t ratio = tfc_attrs_int(c->attrs, "ratio", 1);
    if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8)
        return TFC_OP_ERR(c, st, "ratio must be 1, 2, 4, or 8, got %lld", (long long)ratio);
    const char *dct = tfc_attrs_string(c->attrs, "dct_method", "");
    if (*dct && strcmp(dct, "INTEGER_FAST") && strcmp(dct, "INTEGER_ACCURATE"))
        return TFC_OP_ERR(c, st, "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}");
    return decode3_shape(c, st);
}

/* DecodeImage gives [frames, h, w, c] for animated GIFs when expand_animations, else 3-D: rank unknown. */
static bool decode_image_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!check_contents(c, st)) return false;
    c->out_shapes[0].rank = -1;
    return true;
}

static bool encode_png_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    int64_t comp = tfc_attrs_int(c->attrs, "compression", -1);
    if (comp < -1 || comp > 9) return TFC_OP_ERR(c, st, "compression should be in [-1,9], got %lld", (long long)comp);
    if (s->rank < 0) {
        c->out_shapes[0].rank = -1;
        return true;
    }
    if (s->rank < 3) return TFC_OP_ERR(c, st, "images must be at least rank 3%s", SHP(s));
    int64_t ch = s->dims[s->rank - 1], h = s->dims[s->rank - 3], w = s->dims[s->rank - 2];
    if (ch >= 0 && (ch < 1 || ch > 4)) return TFC_OP_ERR(c, st, "image must have 1, 2, 3, or 4 channels, got %lld", (long long)ch);
    if (h > INT32_MAX || w > INT32_MAX || (w > 0 && ch > 0 && w * ch * 2 > INT32_MAX))
        return TFC_OP_ERR(c, st, "image too large to encode: %s", SHP(s));
    c->out_shapes[0].rank = s->rank - 3;
    for (int i = 0; i < s->rank - 3; i++) c->out_shapes[0].dims[i] = s->dims[i];
    return true;
}

/* EncodeJpeg: image uint8 [height, width, channels] with 1 or 3 channels (as `format` requires). */
static bool encode_jpeg_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    const int64_t q = tfc_attrs_int(c->attrs, "quality", 95);
    const char *fmt = tfc_attrs_string(c->attrs, "format", "");
    if (q < 0 || q > 100) return TFC_OP_ERR(c, st, "quality must be in [0,100], got %lld", (long long)q);
    if (s->rank >= 0 && s->rank != 3) return TFC_OP_ERR(c, st, "image must be 3-dimensional%s", SHP(s));
    const int64_t ch = s->rank == 3 ? s->dims[2] : -1;
    if (ch >= 0) {
        if (!*fmt && ch != 1 && ch != 3) return TFC_OP_ERR(c, st, "image must have 1 or 3 channels, got %s", SHP(s));
        if (!strcmp(fmt, "grayscale") && ch != 1) return TFC_OP_ERR(c, st, "format grayscale expects 1 channels, got %s", SHP(s));
        if (!strcmp(fmt, "rgb") && ch != 3) return TFC_OP_ERR(c, st, "format rgb expects 3 channels, got %s", SHP(s));
    }
    if (s->rank == 3 && (s->dims[0] > INT32_MAX || s->dims[1] > INT32_MAX))
        return TFC_OP_ERR(c, st, "image too large to encode: %s", SHP(s));
    c->out_shapes[0].rank = 0;
    return true;
}

const tfc_op_def tfc_op_def_encode_jpeg = {
    .name = "EncodeJpeg", .inputs = "image: uint8", .outputs = "contents: string",
    .attrs = "format: {'', 'grayscale', 'rgb'} = '', quality: int = 95, progressive: bool = false, "
             "optimize_size: bool = false, chroma_downsampling: bool = true, density_unit: {'in', 'cm'} = 'in', "
             "x_density: int = 300, y_density: int = 300, xmp_metadata: string = ''",
    .shape = encode_jpeg_shape,
};

const tfc_op_def tfc_op_def_decode_png = {
    .name = "DecodePng", .inputs = "contents: string", .outputs = "image: dtype",
    .attrs = "channels: int = 0, dtype: {uint8, uint16} = uint8", .shape = decode3_shape,
};
const tfc_op_def tfc_op_def_decode_jpeg = {
    .name = "DecodeJpeg", .inputs = "contents: string", .outputs = "image: uint8",
    .attrs = "channels: int = 0, ratio: int = 1, fancy_upscaling: bool = true, try_recover_truncated: bool = false, "
             "acceptable_fraction: float = 1, dct_method: string = ''",
    .shape = decode_jpeg_shape,
};
const tfc_op_def tfc_op_def_decode_image = {
    .name = "DecodeImage", .inputs = "contents: string", .outputs = "image: dtype",
    .attrs = "channels: int = 0, dtype: {uint8, uint16, float} = uint8, expand_animations: bool = true",
    .shape = decode_image_shape,
};
const tfc_op_def tfc_op_def_encode_png = {
    .name = "EncodePng", .inputs = "image: T", .outputs = "contents: string",
    .attrs = "compression: int = -1, T: {uint8, uint16} = uint8", .shape = encode_png_shape,
};

/* ---- resizing ------------------------------------------------------------------------------------- */

static bool check_align(tfc_shape_ctx *c, tfc_status *st) {
    if (tfc_attrs_bool(c->attrs, "half_pixel_centers", false) && tfc_attrs_bool(c->attrs, "align_corners", false))
        return TFC_OP_ERR(c, st, "If half_pixel_centers is True, align_corners must be False.");
    return true;
}

/* size: int32 [2] = (new_height, new_width), read when its value is known. Sets *h, *w (-1 when unknown). */
static bool read_size(tfc_shape_ctx *c, int i, bool grad, int64_t *h, int64_t *w, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[i];
    *h = *w = -1;
    if (s->rank >= 0 && s->rank != 1) return TFC_OP_ERR(c, st, "shape_t must be 1-dimensional%s", SHP(s));
    if (s->rank == 1 && s->dims[0] >= 0 && s->dims[0] != 2) return TFC_OP_ERR(c, st, "shape_t must have two elements%s", SHP(s));
    const tfc_tensor *v = c->in_values ? c->in_values[i] : NULL;
    if (!v || !v->data) return true;
    const int32_t *d = v->data;
    if (d[0] <= 0 || d[1] <= 0)
        return grad ? TFC_OP_ERR(c, st, "shape_t's elements must be positive")
                    : TFC_OP_ERR(c, st, "output dimensions must be positive");
    *h = d[0];
    *w = d[1];
    return true;
}

/* images [batch, height, width, channels], size [2] -> [batch, new_height, new_width, channels]. */
static bool resize_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0];
    if (!check_align(c, st)) return false;
    if (x->rank >= 0 && x->rank != 4) return TFC_OP_ERR(c, st, "input must be 4-dimensional%s", SHP(x));
    int64_t h, w;
    if (!read_size(c, 1, false, &h, &w, st)) return false;
    tfc_shape out = {.rank = 4, .dims = {-1, h, w, -1}};
    if (x->rank == 4) {
        if (x->dims[1] > INT32_MAX || x->dims[2] > INT32_MAX)
            return TFC_OP_ERR(c, st, "input sizes must be between 0 and max int32 (input %s)", SHP(x));
        if (x->dims[1] == 0 || x->dims[2] == 0) return TFC_OP_ERR(c, st, "input image must be of non-zero size");
        if (x->dims[3] == 0) return TFC_OP_ERR(c, st, "image must have at least one channel");
        out.dims[0] = x->dims[0];
        out.dims[3] = x->dims[3];
    }
    if (!tfc_check_out_shape(c, &out, st)) return false;
    tfc_set_out(c, 0, &out);
    return true;
}

/* grads [batch, resized_h, resized_w, channels], original_image [_, h, w, _] -> [batch, h, w, channels]. */
static bool resize_bilinear_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *g = &c->in_shapes[0], *x = &c->in_shapes[1];
    if (!check_align(c, st)) return false;
    if (g->rank >= 0 && g->rank != 4) return TFC_OP_ERR(c, st, "input_grad must be 4-dimensional%s", SHP(g));
    if (x->rank >= 0 && x->rank != 4) return TFC_OP_ERR(c, st, "original_image must be 4-dimensional%s", SHP(x));
    tfc_shape out = {.rank = 4, .dims = {-1, -1, -1, -1}};
    if (x->rank == 4) {
        if (x->dims[1] == 0 || x->dims[2] == 0) return TFC_OP_ERR(c, st, "original dimensions must be positive");
        if (x->dims[1] > INT32_MAX || x->dims[2] > INT32_MAX)
            return TFC_OP_ERR(c, st, "original sizes must be between 0 and max int32 (original_image %s)", SHP(x));
        out.dims[1] = x->dims[1];
        out.dims[2] = x->dims[2];
    }
    if (g->rank == 4) {
        if (g->dims[1] == 0 || g->dims[2] == 0) return TFC_OP_ERR(c, st, "resized dimensions must be positive");
        out.dims[0] = g->dims[0];
        out.dims[3] = g->dims[3];
    }
    if (!tfc_check_out_shape(c, &out, st)) return false;
    tfc_set_out(c, 0, &out);
    return true;
}

/* grads [batch, h, w, channels], size [2] (the forward input's height and width) -> [batch, size, channels]. */
static bool resize_nn_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *g = &c->in_shapes[0];
    if (g->rank >= 0 && g->rank != 4) return TFC_OP_ERR(c, st, "input must be 4-dimensional%s", SHP(g));
    int64_t h, w;
    if (!read_size(c, 1, true, &h, &w, st)) return false;
    tfc_shape out = {.rank = 4, .dims = {-1, h, w, -1}};
    if (g->rank == 4) {
        out.dims[0] = g->dims[0];
        out.dims[3] = g->dims[3];
    }
    if (!tfc_check_out_shape(c, &out, st)) return false;
    tfc_set_out(c, 0, &out);
    return true;
}

static int resize_attrs(const tfc_grad_ctx *g, tfc_attr *a) {
    a[0] = TFC_ATTR_B("align_corners", tfc_attrs_bool(g->attrs, "align_corners", false));
    a[1] = TFC_ATTR_B("half_pixel_centers", tfc_attrs_bool(g->attrs, "half_pixel_centers", false));
    return 2;
}

/* _ResizeBilinearGrad: ResizeBilinearGrad(grad, images); size has no gradient. */
static bool resize_bilinear_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[2];
    int na = resize_attrs(g, a);
    g->dx[0] = tfc_emit(g->ctx, "ResizeBilinearGrad", (tfc_tensor *[]){g->dy[0], g->in[0]}, 2, a, na, st);
    return g->dx[0] != NULL;
}

/* _ResizeNearestNeighborGrad: ResizeNearestNeighborGrad(grad, shape(images)[1:3]). */
static bool resize_nn_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[2];
    int na = resize_attrs(g, a);
    const tfc_shape *s = &g->in[0]->shape;
    tfc_tensor *size = NULL, *owned = NULL;
    if (s->rank == 4 && s->dims[1] >= 0 && s->dims[2] >= 0) {
        int32_t hw[2] = {(int32_t)s->dims[1], (int32_t)s->dims[2]};
        size = owned = tfc_vec_i32(hw, 2, st);
    } else {
        tfc_attr ot = TFC_ATTR_T("out_type", TFC_INT32);
        tfc_tensor *shp = tfc_emit(g->ctx, "Shape", &g->in[0], 1, &ot, 1, st);
        tfc_tensor *b = shp ? tfc_vec_i32((int32_t[]){1}, 1, st) : NULL;
        tfc_tensor *n = b ? tfc_vec_i32((int32_t[]){2}, 1, st) : NULL;
        if (n) size = tfc_emit(g->ctx, "Slice", (tfc_tensor *[]){shp, b, n}, 3, NULL, 0, st);
        tfc_tensor_unref(b);
        tfc_tensor_unref(n);
    }
    if (size) g->dx[0] = tfc_emit(g->ctx, "ResizeNearestNeighborGrad", (tfc_tensor *[]){g->dy[0], size}, 2, a, na, st);
    tfc_tensor_unref(owned);
    return g->dx[0] != NULL;
}

const tfc_op_def tfc_op_def_resize_bilinear = {
    .name = "ResizeBilinear", .inputs = "images: T, size: int32", .outputs = "resized_images: float",
    .attrs = "T: {" RESIZE_T "}, align_corners: bool = false, half_pixel_centers: bool = false",
    .shape = resize_shape, .grad = resize_bilinear_grad,
};
const tfc_op_def tfc_op_def_resize_bilinear_grad = {
    .name = "ResizeBilinearGrad", .inputs = "grads: float, original_image: T", .outputs = "output: T",
    .attrs = "T: {float, bfloat16, half, double}, align_corners: bool = false, half_pixel_centers: bool = false",
    .shape = resize_bilinear_grad_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_resize_nearest_neighbor = {
    .name = "ResizeNearestNeighbor", .inputs = "images: T, size: int32", .outputs = "resized_images: T",
    .attrs = "T: {" RESIZE_T "}, align_corners: bool = false, half_pixel_centers: bool = false",
    .shape = resize_shape, .grad = resize_nn_grad,
};
const tfc_op_def tfc_op_def_resize_nearest_neighbor_grad = {
    .name = "ResizeNearestNeighborGrad", .inputs = "grads: T, size: int32", .outputs = "output: T",
    .attrs = "T: {uint8, int8, int32, half, float, double, bfloat16}, align_corners: bool = false, "
             "half_pixel_centers: bool = false",
    .shape = resize_nn_grad_shape,
};

const tfc_op_def *const tfc_ops_image[] = {
    &tfc_op_def_decode_png,       &tfc_op_def_decode_jpeg,
    &tfc_op_def_decode_image,     &tfc_op_def_encode_png,
    &tfc_op_def_encode_jpeg,
    &tfc_op_def_resize_bilinear,  &tfc_op_def_resize_bilinear_grad,
    &tfc_op_def_resize_nearest_neighbor, &tfc_op_def_resize_nearest_neighbor_grad,
    NULL,
};
