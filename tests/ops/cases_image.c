/* Op test cases: image (resizing against the float64 reference, gradients by finite differences; codecs
 * run on a small PNG; every op's validation messages). Pixel-exact decoding is checked in
 * tests/unit/test_image.c and against TensorFlow in tests/conformance/test_image.py. */
#include "op_test.h"

#define SIZE(h, w) IN_I32(1, 2, h, w)
#define RESIZE(op, label, b, h, w, c, oh, ow, ac, hp, g)                                                       \
    {op, label, 2, {IN_T(4, b, h, w, c), SIZE(oh, ow)}, 2,                                                    \
     {TFC_ATTR_B("align_corners", ac), TFC_ATTR_B("half_pixel_centers", hp)}, .grad = g}
#define RESIZE_TOL(op, label, b, h, w, c, oh, ow, ac, hp, g)                                                   \
    {op, label, 2, {IN_T(4, b, h, w, c), SIZE(oh, ow)}, 2,                                                    \
     {TFC_ATTR_B("align_corners", ac), TFC_ATTR_B("half_pixel_centers", hp)}, .grad = g, .tol = 2000}
#define STR(n, s) {.dtype = TFC_STRING, .rank = 0, .n_vals = 1, .strs = (const char *const[]){s}, \
                   .str_lens = (const size_t[]){n}, .no_grad = true}
#define STRV(r, d0, s) {.dtype = TFC_STRING, .rank = r, .dims = {d0}, .n_vals = 1, .strs = (const char *const[]){s}, \
                        .no_grad = true}

/* A 3x2 RGB PNG (tf.io.encode_png of arange(18) * 13) and a 2x2 gray+alpha 16-bit PNG. */
#define PNG_RGB                                                                                            \
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x03\x00\x00\x00\x02\x08\x02" \
    "\x00\x00\x00\x12\x16\xf1\x4d\x00\x00\x00\x17\x49\x44\x41\x54\x08\x99\x63\x64\xe0\x95\x52\x57\x57\x57\x57" \
    "\x57\x67\x29\x2d\x2d\x85\xb0\x00\x1d\x76\x03\x60\x3f\xe6\x25\x0d\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42" \
    "\x60\x82"
#define PNG_GA16                                                                                           \
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x02\x00\x00\x00\x02\x10\x04" \
    "\x00\x00\x00\x88\x2f\x19\xec\x00\x00\x00\x1a\x49\x44\x41\x54\x08\x99\x63\x60\x60\xe0\x5f\x20\xef\xa0\xf7" \
    "\x80\xd1\xae\xc1\x4f\x41\xde\x41\xde\x01\x00\x22\xa7\x04\x08\x7f\x21\x74\xac\x00\x00\x00\x00\x49\x45\x4e" \
    "\x44\xae\x42\x60\x82"

/* A 1x1 24-bit BMP holding (30, 20, 10) as BGR. */
#define BMP_1X1                                                                                            \
    "\x42\x4d\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00" \
    "\x00\x01\x00\x18\x00\x00\x00\x00\x00\x04\x00\x00\x00\x13\x0b\x00\x00\x13\x0b\x00\x00\x00\x00\x00\x00\x00" \
    "\x00\x00\x00\x0a\x14\x1e\x00"

static const tfc_dtype u8[] = {TFC_UINT8, 0};
static const tfc_dtype nn_grad_floats[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, 0};

const op_case op_cases_image[] = {
    /* ---- ResizeBilinear: its output is float32 even for float64 images, so the finite differences are
     * float32-rounded: a loose tolerance (exact values are checked in test_image.c and against TF) ---- */
    RESIZE_TOL("ResizeBilinear", "upscale, half pixel", 2, 3, 4, 2, 5, 7, false, true, true),
    RESIZE_TOL("ResizeBilinear", "downscale, half pixel", 1, 7, 6, 3, 3, 2, false, true, true),
    RESIZE_TOL("ResizeBilinear", "legacy", 2, 4, 5, 1, 6, 3, false, false, true),
    RESIZE_TOL("ResizeBilinear", "align corners", 1, 4, 3, 2, 7, 5, true, false, true),
    RESIZE("ResizeBilinear", "align corners to 1", 1, 4, 3, 2, 1, 1, true, false, false),
    RESIZE("ResizeBilinear", "same size", 1, 3, 3, 2, 3, 3, false, true, false),
    RESIZE("ResizeBilinear", "1x1 input", 1, 1, 1, 3, 4, 2, false, true, false),
    RESIZE("ResizeBilinear", "empty batch", 0, 3, 3, 2, 5, 5, false, true, false),
    /* ---- ResizeNearestNeighbor ---- */
    RESIZE("ResizeNearestNeighbor", "upscale, half pixel", 2, 3, 4, 2, 5, 7, false, true, true),
    RESIZE("ResizeNearestNeighbor", "downscale, half pixel", 1, 7, 6, 3, 3, 2, false, true, true),
    RESIZE("ResizeNearestNeighbor", "legacy", 2, 4, 5, 1, 6, 3, false, false, true),
    RESIZE("ResizeNearestNeighbor", "align corners", 1, 4, 3, 2, 7, 5, true, false, true),
    RESIZE("ResizeNearestNeighbor", "empty batch", 0, 3, 3, 2, 5, 5, false, true, false),
    RESIZE("ResizeNearestNeighbor", "wide pixels", 1, 3, 3, 5, 4, 2, false, false, true),
    /* ---- the gradient helpers ---- */
    {"ResizeBilinearGrad", "half pixel", 2,
     {{.dtype = TFC_FLOAT, .rank = 4, .dims = {2, 5, 7, 2}, .no_grad = true}, IN_T(4, 2, 3, 4, 2)}, 2,
     {TFC_ATTR_B("align_corners", false), TFC_ATTR_B("half_pixel_centers", true)}, .tol = 4},
    {"ResizeBilinearGrad", "legacy downscaled", 2,
     {{.dtype = TFC_FLOAT, .rank = 4, .dims = {1, 2, 3, 3}, .no_grad = true}, IN_T(4, 1, 5, 7, 3)}, .tol = 4},
    {"ResizeBilinearGrad", "align corners", 2,
     {{.dtype = TFC_FLOAT, .rank = 4, .dims = {1, 6, 5, 1}, .no_grad = true}, IN_T(4, 1, 3, 4, 1)}, 1,
     {TFC_ATTR_B("align_corners", true)}, .tol = 4},
    {"ResizeNearestNeighborGrad", "half pixel", 2, {IN_T(4, 2, 5, 7, 2), SIZE(3, 4)}, 2,
     {TFC_ATTR_B("align_corners", false), TFC_ATTR_B("half_pixel_centers", true)}, .dtypes = nn_grad_floats,
     .tol = 4},
    {"ResizeNearestNeighborGrad", "legacy, ints", 2, {IN_T(4, 1, 4, 4, 3), SIZE(2, 3)}, .grad = false},
    {"ResizeNearestNeighborGrad", "align corners", 2, {IN_T(4, 1, 6, 5, 1), SIZE(3, 4)}, 1,
     {TFC_ATTR_B("align_corners", true)}, .grad = false},
    /* ---- codecs (the bytes are checked in test_image.c; here: they run for every dtype) ---- */
    {"DecodePng", "rgb", 1, {STR(80, PNG_RGB)}, .dtype_attr = "dtype"},
    {"DecodePng", "gray+alpha 16-bit to gray", 1, {STR(83, PNG_GA16)}, 1, {TFC_ATTR_I("channels", 1)},
     .dtype_attr = "dtype"},
    {"DecodeJpeg", "png content", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_I("channels", 3)}, .dtypes = u8},
    {"DecodeImage", "png, 4 channels", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_I("channels", 4)}, .dtype_attr = "dtype"},
    {"DecodeImage", "bmp", 1, {STR(58, BMP_1X1)}, 1, {TFC_ATTR_I("channels", 4)}, .dtype_attr = "dtype"},
    {"EncodePng", "rgb", 1, {IN_RANGE(3, 0, 255, 4, 5, 3)}, .grad = false},
    {"EncodePng", "batch of gray+alpha", 1, {IN_RANGE(5, 0, 255, 2, 1, 3, 2, 2)}, .grad = false},
    {"EncodeJpeg", "rgb", 1, {{.dtype = TFC_UINT8, .rank = 3, .dims = {9, 17, 3}, .lo = 0, .hi = 255}}, .dtypes = u8},
    {"EncodeJpeg", "gray, progressive, xmp", 1, {{.dtype = TFC_UINT8, .rank = 3, .dims = {4, 5, 1}, .lo = 0, .hi = 255}}, 3,
     {TFC_ATTR_B("progressive", true), TFC_ATTR_S("xmp_metadata", "<x/>"), TFC_ATTR_I("quality", 10)}, .dtypes = u8},
    {0},
};

const bad_case bad_cases_image[] = {
    /* ResizeBilinear */
    {"ResizeBilinear", "rank 3 images", 2, {IN_T(3, 4, 4, 3), SIZE(2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ResizeBilinear", "input must be 4-dimensional[4,4,3]"}},
    {"ResizeBilinear", "size rank 2", 2, {IN_T(4, 1, 4, 4, 3), {.dtype = TFC_INT32, .rank = 2, .dims = {1, 2}, .n_vals = 2, .vals = {2, 2}}},
     .code = TFC_INVALID_ARGUMENT, .expect = {"shape_t must be 1-dimensional[1,2]"}},
    {"ResizeBilinear", "size of 3", 2, {IN_T(4, 1, 4, 4, 3), IN_I32(1, 3, 2, 2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"shape_t must have two elements[3]"}},
    {"ResizeBilinear", "zero size", 2, {IN_T(4, 1, 4, 4, 3), SIZE(0, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"output dimensions must be positive"}},
    {"ResizeBilinear", "negative size", 2, {IN_T(4, 1, 4, 4, 3), SIZE(3, -2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"output dimensions must be positive"}},
    {"ResizeBilinear", "both flags", 2, {IN_T(4, 1, 4, 4, 3), SIZE(2, 2)}, 2,
     {TFC_ATTR_B("align_corners", true), TFC_ATTR_B("half_pixel_centers", true)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"If half_pixel_centers is True, align_corners must be False."}},
    {"ResizeBilinear", "empty image", 2, {IN_T(4, 1, 0, 4, 3), SIZE(2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"input image must be of non-zero size"}},
    {"ResizeBilinear", "no channels", 2, {IN_T(4, 1, 4, 4, 0), SIZE(2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"image must have at least one channel"}},
    {"ResizeBilinear", "bool images", 2, {{.dtype = TFC_BOOL, .rank = 4, .dims = {1, 2, 2, 1}}, SIZE(2, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeBilinear", "bool"}},
    {"ResizeBilinear", "int64 size", 2, {IN_T(4, 1, 4, 4, 3), IN_I64(1, 2, 2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ResizeBilinear", "int32", "int64"}},
    {"ResizeBilinear", "overflowing output", 2, {IN_T(4, 1, 1, 1, 1), SIZE(2147483647, 2147483647)}, 0, {},
     .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeBilinear"}},
    /* ResizeNearestNeighbor */
    {"ResizeNearestNeighbor", "rank 5 images", 2, {IN_T(5, 1, 1, 4, 4, 3), SIZE(2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ResizeNearestNeighbor", "input must be 4-dimensional[1,1,4,4,3]"}},
    {"ResizeNearestNeighbor", "zero size", 2, {IN_T(4, 1, 4, 4, 3), SIZE(2, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"output dimensions must be positive"}},
    {"ResizeNearestNeighbor", "both flags", 2, {IN_T(4, 1, 4, 4, 3), SIZE(2, 2)}, 2,
     {TFC_ATTR_B("align_corners", true), TFC_ATTR_B("half_pixel_centers", true)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"If half_pixel_centers is True, align_corners must be False."}},
    {"ResizeNearestNeighbor", "string images", 2, {{.dtype = TFC_STRING, .rank = 4, .dims = {1, 1, 1, 1}}, SIZE(2, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeNearestNeighbor", "string"}},
    /* ResizeBilinearGrad */
    {"ResizeBilinearGrad", "rank 3 grads", 2, {{.dtype = TFC_FLOAT, .rank = 3, .dims = {2, 2, 3}}, IN_T(4, 1, 4, 4, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeBilinearGrad", "input_grad must be 4-dimensional[2,2,3]"}},
    {"ResizeBilinearGrad", "rank 3 image", 2, {{.dtype = TFC_FLOAT, .rank = 4, .dims = {1, 2, 2, 3}}, IN_T(3, 4, 4, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"original_image must be 4-dimensional[4,4,3]"}},
    {"ResizeBilinearGrad", "empty image", 2, {{.dtype = TFC_FLOAT, .rank = 4, .dims = {1, 2, 2, 3}}, IN_T(4, 1, 0, 4, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"original dimensions must be positive"}},
    {"ResizeBilinearGrad", "empty grads", 2, {{.dtype = TFC_FLOAT, .rank = 4, .dims = {1, 0, 2, 3}}, IN_T(4, 1, 4, 4, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"resized dimensions must be positive"}},
    {"ResizeBilinearGrad", "int image", 2, {{.dtype = TFC_FLOAT, .rank = 4, .dims = {1, 2, 2, 3}}, IN_T(4, 1, 4, 4, 3)},
     .dtype = TFC_INT32, .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeBilinearGrad", "int32"}},
    {"ResizeBilinearGrad", "double grads", 2, {IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 4, 4, 3)}, .dtype = TFC_DOUBLE,
     .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeBilinearGrad", "float32", "float64"}},
    /* ResizeNearestNeighborGrad */
    {"ResizeNearestNeighborGrad", "rank 3 grads", 2, {IN_T(3, 2, 2, 3), SIZE(4, 4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ResizeNearestNeighborGrad", "input must be 4-dimensional[2,2,3]"}},
    {"ResizeNearestNeighborGrad", "size of 3", 2, {IN_T(4, 1, 2, 2, 3), IN_I32(1, 3, 4, 4, 4)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"shape_t must have two elements[3]"}},
    {"ResizeNearestNeighborGrad", "zero size", 2, {IN_T(4, 1, 2, 2, 3), SIZE(0, 4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"shape_t's elements must be positive"}},
    {"ResizeNearestNeighborGrad", "int64 grads", 2, {IN_T(4, 1, 2, 2, 3), SIZE(4, 4)}, .dtype = TFC_INT64,
     .code = TFC_INVALID_ARGUMENT, .expect = {"ResizeNearestNeighborGrad", "int64"}},
    /* Decoders */
    {"DecodePng", "vector contents", 1, {STRV(1, 1, "x")}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodePng", "`contents` must be scalar but got shape[1]"}},
    {"DecodePng", "2 channels", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_I("channels", 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"`channels` must be 0, 1, 3 or 4 but got 2"}},
    {"DecodePng", "float dtype", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_T("dtype", TFC_FLOAT)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodePng", "float32"}},
    {"DecodePng", "empty", 1, {STR(0, "")}, .code = TFC_INVALID_ARGUMENT, .expect = {"DecodePng", "Input is empty."}},
    {"DecodePng", "garbage", 1, {STR(5, "hello")}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodePng", "Unknown image file format"}},
    {"DecodePng", "truncated header", 1, {STR(30, PNG_RGB)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodePng", "Invalid PNG. Failed to initialize decoder."}},
    {"DecodePng", "truncated data", 1, {STR(60, PNG_RGB)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodePng", "Invalid PNG data, size 60"}},
    {"DecodePng", "bmp", 1, {STR(40, "BM\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0")},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Trying to decode BMP format using a wrong op", "Op used: DecodePng"}},
    {"DecodeJpeg", "ratio 3", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_I("ratio", 3)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodeJpeg", "ratio must be 1, 2, 4, or 8, got 3"}},
    {"DecodeJpeg", "dct method", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_S("dct_method", "FLOAT")},
     .code = TFC_INVALID_ARGUMENT, .expect = {"dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}"}},
    {"DecodeJpeg", "truncated jpeg", 1, {STR(20, "\xff\xd8\xff\xe0\x00\x10\x4a\x46\x49\x46\x00\x01\x01\x01\x01\x2c\x01\x2c\x00\x00")},
     .code = TFC_INVALID_ARGUMENT, .expect = {"DecodeJpeg", "jpeg::Uncompress failed"}},
    {"DecodeImage", "5 channels", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_I("channels", 5)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodeImage", "`channels` must be 0, 1, 3 or 4 but got 5"}},
    {"DecodeImage", "gif", 1, {STR(10, "GIF89a\0\0\0\0")}, .code = TFC_UNIMPLEMENTED, .expect = {"DecodeImage", "GIF"}},
    {"DecodeImage", "bmp size", 1, {STR(57, BMP_1X1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DecodeImage", "Input size should match (header_size + row_size * abs_height) but they differ by -1"}},
    {"DecodeImage", "bmp gray", 1, {STR(58, BMP_1X1)}, 1, {TFC_ATTR_I("channels", 1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"`channels` must be 0, 3 or 4 for BMP, but got 1"}},
    {"DecodeImage", "int32 dtype", 1, {STR(80, PNG_RGB)}, 1, {TFC_ATTR_T("dtype", TFC_INT32)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"DecodeImage", "int32"}},
    /* EncodePng */
    {"EncodePng", "rank 2", 1, {IN_RANGE(2, 0, 9, 3, 4)}, .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT,
     .expect = {"EncodePng", "images must be at least rank 3[3,4]"}},
    {"EncodePng", "5 channels", 1, {IN_RANGE(3, 0, 9, 2, 2, 5)}, .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT,
     .expect = {"image must have 1, 2, 3, or 4 channels, got 5"}},
    {"EncodePng", "compression 10", 1, {IN_RANGE(3, 0, 9, 2, 2, 3)}, 1, {TFC_ATTR_I("compression", 10)},
     .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT, .expect = {"compression should be in [-1,9], got 10"}},
    {"EncodePng", "empty image", 1, {IN_RANGE(3, 0, 9, 0, 2, 3)}, .dtype = TFC_UINT8, .code = TFC_INTERNAL,
     .expect = {"PNG encoding failed at the following flattened batch indices: 0"}},
    {"EncodeJpeg", "rank 2", 1, {IN_RANGE(2, 0, 9, 4, 5)}, .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT,
     .expect = {"EncodeJpeg", "image must be 3-dimensional[4,5]"}},
    {"EncodeJpeg", "2 channels", 1, {IN_RANGE(3, 0, 9, 4, 5, 2)}, .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT,
     .expect = {"image must have 1 or 3 channels, got [4,5,2]"}},
    {"EncodeJpeg", "grayscale of rgb", 1, {IN_RANGE(3, 0, 9, 4, 5, 3)}, 1, {TFC_ATTR_S("format", "grayscale")},
     .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT, .expect = {"format grayscale expects 1 channels, got [4,5,3]"}},
    {"EncodeJpeg", "quality 101", 1, {IN_RANGE(3, 0, 9, 4, 5, 3)}, 1, {TFC_ATTR_I("quality", 101)}, .dtype = TFC_UINT8,
     .code = TFC_INVALID_ARGUMENT, .expect = {"quality must be in [0,100], got 101"}},
    {"EncodeJpeg", "density unit", 1, {IN_RANGE(3, 0, 9, 4, 5, 3)}, 1, {TFC_ATTR_S("density_unit", "mm")},
     .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT, .expect = {"EncodeJpeg", "density_unit", "mm"}},
    {"EncodeJpeg", "empty", 1, {IN_RANGE(3, 0, 9, 0, 5, 3)}, .dtype = TFC_UINT8, .code = TFC_INTERNAL,
     .expect = {"EncodeJpeg: JPEG encoding failed"}},
    {"EncodePng", "float image", 1, {IN_T(3, 2, 2, 3)}, .code = TFC_INVALID_ARGUMENT, .expect = {"EncodePng", "float32"}},
    {0},
};
