/* Image ops: PNG round trips for every channel count and depth, round trips of mixed images in threads (libpng's
 * per-thread block cache reused across sizes and after errors), channel conversions, a JPEG decoded to
 * TensorFlow's pixels, resize values against TensorFlow's, the resize gradient through a tape, wrappers and
 * errors, and corrupt images (random damage never crashes a decoder). */
#include <pthread.h>

#include "tfc_test.h"
#include "tfc/ops/image.h"

static tfc_ctx *ctx;

/* tf.io.encode_jpeg(quality=90) of the 2x3 RGB image arange(18) * 13, and TensorFlow's decoding of it. */
static const unsigned char jpeg_2x3[] = {
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x01, 0x01, 0x2c, 0x01, 0x2c, 0x00,
    0x00, 0xff, 0xdb, 0x00, 0x43, 0x00, 0x03, 0x02, 0x02, 0x03, 0x02, 0x02, 0x03, 0x03, 0x03, 0x03, 0x04, 0x03, 0x03,
    0x04, 0x05, 0x08, 0x05, 0x05, 0x04, 0x04, 0x05, 0x0a, 0x07, 0x07, 0x06, 0x08, 0x0c, 0x0a, 0x0c, 0x0c, 0x0b, 0x0a,
    0x0b, 0x0b, 0x0d, 0x0e, 0x12, 0x10, 0x0d, 0x0e, 0x11, 0x0e, 0x0b, 0x0b, 0x10, 0x16, 0x10, 0x11, 0x13, 0x14, 0x15,
    0x15, 0x15, 0x0c, 0x0f, 0x17, 0x18, 0x16, 0x14, 0x18, 0x12, 0x14, 0x15, 0x14, 0xff, 0xdb, 0x00, 0x43, 0x01, 0x03,
    0x04, 0x04, 0x05, 0x04, 0x05, 0x09, 0x05, 0x05, 0x09, 0x14, 0x0d, 0x0b, 0x0d, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14,
    0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14,
    0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0x14,
    0x14, 0x14, 0x14, 0x14, 0x14, 0x14, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x02, 0x00, 0x03, 0x03, 0x01, 0x22, 0x00,
    0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xc4, 0x00, 0x1f, 0x00, 0x00, 0x01, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
    0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x10, 0x00, 0x02, 0x01, 0x03, 0x03, 0x02, 0x04, 0x03, 0x05, 0x05, 0x04, 0x04, 0x00,
    0x00, 0x01, 0x7d, 0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
    0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, 0x24, 0x33, 0x62,
    0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x34, 0x35, 0x36, 0x37,
    0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a,
    0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85,
    0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6,
    0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
    0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7,
    0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xff, 0xc4, 0x00, 0x1f, 0x01, 0x00,
    0x03, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x03,
    0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0xff, 0xc4, 0x00, 0xb5, 0x11, 0x00, 0x02, 0x01, 0x02, 0x04, 0x04,
    0x03, 0x04, 0x07, 0x05, 0x04, 0x04, 0x00, 0x01, 0x02, 0x77, 0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31,
    0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09,
    0x23, 0x33, 0x52, 0xf0, 0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a,
    0x26, 0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4a,
    0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x73, 0x74, 0x75,
    0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96,
    0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
    0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8,
    0xd9, 0xda, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9,
    0xfa, 0xff, 0xda, 0x00, 0x0c, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03, 0x11, 0x00, 0x3f, 0x00, 0xfa, 0x0b, 0xe1, 0x97,
    0xc2, 0xef, 0x06, 0x7f, 0xc2, 0x03, 0xa2, 0x7f, 0xc5, 0x23, 0xa1, 0x7f, 0xc7, 0xb8, 0xff, 0x00, 0x98, 0x6c, 0x3e,
    0xa7, 0xfd, 0x9a, 0x28, 0xa2, 0xbd, 0x83, 0xca, 0x3f, 0xff, 0xd9};
static const uint8_t jpeg_2x3_pixels[18] = {1, 15, 28, 39, 53, 66, 78, 92, 105, 116, 130, 143, 155, 169, 182, 194, 208, 221};

static uint64_t rng = 88172645463325252ull;
static uint32_t next_rand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)rng;
}

static tfc_tensor *bytes(const void *d, size_t n) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = d;
    tfc_tensor *t = tfc_tensor_from_strings(&p, &n, NULL, 0, &st);
    REQUIRE(t);
    return t;
}

static void test_png_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    for (int depth = 8; depth <= 16; depth += 8)
        for (int c = 1; c <= 4; c++) {
            const int64_t dims[3] = {5, 7, c}, n = 5 * 7 * c;
            tfc_dtype dt = depth == 8 ? TFC_UINT8 : TFC_UINT16;
            tfc_tensor *img = tfc_tensor_new(dt, dims, 3, &st);
            REQUIRE(img);
            for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dt, tfc_tensor_mutable_data(img), i, (double)(next_rand() % (depth == 8 ? 256 : 65536)));
            tfc_tensor *png = tfc_encode_png(ctx, img, (int)(next_rand() % 11) - 1, &st);
            CHECK_OK(&st);
            REQUIRE(png && tfc_tensor_rank(png) == 0);
            tfc_tensor *back = tfc_decode_png(ctx, png, 0, dt, &st);
            REQUIRE(back);
            CHECK(tfc_shape_equal(tfc_tensor_shape(back), tfc_tensor_shape(img)));
            CHECK(!memcmp(tfc_tensor_data(back), tfc_tensor_data(img), tfc_tensor_byte_size(img)));
            /* 8 bits of a 16-bit image: the high byte; 16 bits of an 8-bit image: v * 257 */
            tfc_tensor *other = tfc_decode_png(ctx, png, 0, depth == 8 ? TFC_UINT16 : TFC_UINT8, &st);
            REQUIRE(other);
            bool same = true;
            for (int64_t i = 0; i < n; i++) {
                double v = tfc_tensor_get_f64(img, i), o = tfc_tensor_get_f64(other, i);
                same &= depth == 8 ? o == v * 257 : o == floor(v / 256);
            }
            CHECK(same);
            /* DecodeImage to float: v / max */
            tfc_tensor *f = tfc_decode_image(ctx, png, 0, TFC_FLOAT, &st);
            REQUIRE(f);
            CHECK_NEAR(tfc_tensor_get_f64(f, 3), tfc_tensor_get_f64(img, 3) / (depth == 8 ? 255.0 : 65535.0), 1e-6);
            tfc_tensor *ts[] = {img, png, back, other, f};
            for (size_t i = 0; i < 5; i++) tfc_tensor_unref(ts[i]);
        }
}

/* Decodes of images of many sizes, channel counts and depths, interleaved with corrupt ones, in three threads at
 * once: libpng's blocks are reused across decodes of other sizes and after failed decodes, and every image still
 * comes back exactly. */
typedef struct {
    uint64_t seed;
    int ok, failed, rejected;
} png_thread_arg;

static void *png_thread(void *arg_) {
    png_thread_arg *arg = arg_;
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    if (!c) {
        arg->failed++;
        return NULL;
    }
    uint64_t r = arg->seed;
    for (int it = 0; it < 120; it++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        const int64_t h = 1 + (int64_t)(r % 70), w = 1 + (int64_t)((r >> 8) % 90), ch = 1 + (int64_t)((r >> 16) % 4);
        const tfc_dtype dt = (r >> 20) % 3 ? TFC_UINT8 : TFC_UINT16;
        tfc_tensor *img = tfc_tensor_new(dt, (const int64_t[]){h, w, ch}, 3, &st);
        if (!img) {
            arg->failed++;
            continue;
        }
        uint8_t *d = tfc_tensor_mutable_data(img);
        for (size_t i = 0; i < tfc_tensor_byte_size(img); i++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            d[i] = (uint8_t)(i % 7 == 0 ? r : i / 3); /* compressible, not constant */
        }
        tfc_tensor *png = tfc_encode_png(c, img, (int)(r % 10), &st);
        tfc_tensor *back = png ? tfc_decode_png(c, png, 0, dt, &st) : NULL;
        if (back && tfc_shape_equal(tfc_tensor_shape(back), tfc_tensor_shape(img)) &&
            !memcmp(tfc_tensor_data(back), d, tfc_tensor_byte_size(img)))
            arg->ok++;
        else
            arg->failed++;
        if (png && it % 4 == 0) { /* a damaged copy: fails (or decodes) without disturbing the next decodes */
            size_t n;
            const char *pd = tfc_tensor_string(png, 0, &n);
            char *copy = malloc(n);
            memcpy(copy, pd, n);
            copy[n / 2] ^= 0x5a;
            const char *cp = copy;
            tfc_tensor *t = tfc_tensor_from_strings(&cp, &n, NULL, 0, &st);
            tfc_tensor *bad = t ? tfc_decode_png(c, t, 0, dt, &st) : NULL;
            arg->rejected += !bad && st.code == TFC_INVALID_ARGUMENT;
            tfc_status_clear(&st);
            tfc_tensor_unref(bad);
            tfc_tensor_unref(t);
            free(copy);
        }
        tfc_tensor_unref(back);
        tfc_tensor_unref(png);
        tfc_tensor_unref(img);
    }
    tfc_ctx_free(c);
    return NULL;
}

static void test_png_threads(void) {
    png_thread_arg args[3] = {{.seed = 11}, {.seed = 12345}, {.seed = 987654321}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++) REQUIRE(pthread_create(&th[i], NULL, png_thread, &args[i]) == 0);
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].ok == 120 && args[i].failed == 0);
        CHECK(args[i].rejected > 0);
    }
    png_thread(&args[0]); /* and on this thread, whose cache outlives the test */
    CHECK(args[0].ok == 240 && args[0].failed == 0);
}

static void test_png_channels(void) {
    tfc_status st = TFC_STATUS_INIT;
    const uint8_t gray[6] = {0, 50, 100, 150, 200, 250}, rgb[6] = {255, 0, 0, 0, 255, 0};
    tfc_tensor *g = tfc_tensor_from_data(TFC_UINT8, (const int64_t[]){2, 3, 1}, 3, gray, 6, &st);
    tfc_tensor *c = tfc_tensor_from_data(TFC_UINT8, (const int64_t[]){1, 2, 3}, 3, rgb, 6, &st);
    REQUIRE(g && c);
    tfc_tensor *gp = tfc_encode_png(ctx, g, -1, &st), *cp = tfc_encode_png(ctx, c, 9, &st);
    REQUIRE(gp && cp);
    tfc_tensor *g3 = tfc_decode_png(ctx, gp, 3, 0, &st), *g4 = tfc_decode_png(ctx, gp, 4, 0, &st);
    tfc_tensor *c1 = tfc_decode_png(ctx, cp, 1, 0, &st), *c4 = tfc_decode_png(ctx, cp, 4, 0, &st);
    REQUIRE(g3 && g4 && c1 && c4);
    const uint8_t *p3 = tfc_tensor_data(g3), *p4 = tfc_tensor_data(g4), *q1 = tfc_tensor_data(c1), *q4 = tfc_tensor_data(c4);
    CHECK(tfc_tensor_dim(g3, 2) == 3 && p3[9] == 150 && p3[10] == 150 && p3[11] == 150);
    CHECK(tfc_tensor_dim(g4, 2) == 4 && p4[4] == 50 && p4[7] == 255);
    /* libpng's RGB -> gray with the 0.299 / 0.587 / 0.114 weights (as TensorFlow): red 76, green 149 */
    CHECK(tfc_tensor_dim(c1, 2) == 1 && q1[0] == 76 && q1[1] == 149);
    CHECK(q4[3] == 255 && q4[7] == 255 && q4[0] == 255 && q4[5] == 255);
    tfc_tensor *ts[] = {g, c, gp, cp, g3, g4, c1, c4};
    for (size_t i = 0; i < 8; i++) tfc_tensor_unref(ts[i]);
}

static void test_jpeg(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *j = bytes(jpeg_2x3, sizeof jpeg_2x3);
    tfc_tensor *a = tfc_decode_jpeg(ctx, j, NULL, &st), *b = tfc_decode_image(ctx, j, 0, TFC_UINT16, &st);
    tfc_tensor *g = tfc_decode_jpeg(ctx, j, &(tfc_decode_jpeg_attrs){.channels = 1, .dct_method = "INTEGER_ACCURATE"}, &st);
    tfc_tensor *half = tfc_decode_jpeg(ctx, j, &(tfc_decode_jpeg_attrs){.ratio = 2}, &st);
    CHECK_OK(&st);
    REQUIRE(a && b && g && half);
    CHECK(tfc_tensor_dim(a, 0) == 2 && tfc_tensor_dim(a, 1) == 3 && tfc_tensor_dim(a, 2) == 3);
    CHECK(!memcmp(tfc_tensor_data(a), jpeg_2x3_pixels, 18));
    CHECK(tfc_tensor_get_f64(b, 4) == jpeg_2x3_pixels[4] * 256.0);
    CHECK(tfc_tensor_dim(g, 2) == 1 && tfc_tensor_dim(half, 0) == 1 && tfc_tensor_dim(half, 1) == 2);
    /* DecodePng decodes JPEG too; 4 channels are refused for JPEG */
    tfc_tensor *p = tfc_decode_png(ctx, j, 0, 0, &st);
    REQUIRE(p);
    CHECK(!memcmp(tfc_tensor_data(p), jpeg_2x3_pixels, 18));
    CHECK(!tfc_decode_png(ctx, j, 4, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "DecodePng") && strstr(st.msg, "JPEG does not support 4 channels"));
    /* a 1x1 24-bit BMP: BGR stored, RGB(A) out */
    static const unsigned char bmp[58] = {0x42, 0x4d, 0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 0x28, 0, 0, 0, 1, 0, 0, 0,
                                          1, 0, 0, 0, 1, 0, 0x18, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0x13, 0x0b, 0, 0, 0x13, 0x0b,
                                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 20, 30, 0};
    tfc_tensor *bt = bytes(bmp, sizeof bmp), *bd = tfc_decode_image(ctx, bt, 4, 0, &st);
    REQUIRE(bd);
    const uint8_t *bp = tfc_tensor_data(bd);
    CHECK(tfc_tensor_dim(bd, 2) == 4 && bp[0] == 30 && bp[1] == 20 && bp[2] == 10 && bp[3] == 255);
    tfc_tensor_unref(bt);
    tfc_tensor_unref(bd);
    tfc_tensor *ts[] = {j, a, b, g, half, p};
    for (size_t i = 0; i < 6; i++) tfc_tensor_unref(ts[i]);
}

/* EncodeJpeg writes TensorFlow's bytes: the 2x3 image at quality 90 is exactly jpeg_2x3; a smooth image
 * survives a quality-100, no-subsampling round trip within a few levels. */
static void test_encode_jpeg(void) {
    tfc_status st = TFC_STATUS_INIT;
    uint8_t px[18];
    for (int i = 0; i < 18; i++) px[i] = (uint8_t)(i * 13);
    tfc_tensor *img = tfc_tensor_from_data(TFC_UINT8, (const int64_t[]){2, 3, 3}, 3, px, sizeof px, &st);
    REQUIRE(img);
    tfc_tensor *j = tfc_encode_jpeg(ctx, img, &(tfc_encode_jpeg_attrs){.quality = 90}, &st);
    REQUIRE(j);
    size_t n;
    const char *d = tfc_tensor_string(j, 0, &n);
    CHECK(n == sizeof jpeg_2x3 && !memcmp(d, jpeg_2x3, n));
    enum { H = 24, W = 31 };
    static uint8_t smooth[H * W * 3];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++) smooth[(y * W + x) * 3 + c] = (uint8_t)(20 + 3 * x + 2 * y + 20 * c);
    tfc_tensor *s = tfc_tensor_from_data(TFC_UINT8, (const int64_t[]){H, W, 3}, 3, smooth, sizeof smooth, &st);
    REQUIRE(s);
    tfc_tensor *sj = tfc_encode_jpeg(ctx, s, &(tfc_encode_jpeg_attrs){.quality = 100, .no_chroma_downsampling = true,
                                                                      .progressive = true, .xmp_metadata = "<x/>"}, &st);
    tfc_tensor *back = sj ? tfc_decode_jpeg(ctx, sj, NULL, &st) : NULL;
    REQUIRE(back);
    int worst = 0;
    const uint8_t *b = tfc_tensor_data(back);
    for (int i = 0; i < H * W * 3; i++) worst = abs(b[i] - smooth[i]) > worst ? abs(b[i] - smooth[i]) : worst;
    CHECK(worst <= 3);
    tfc_tensor *empty = tfc_tensor_new(TFC_UINT8, (const int64_t[]){0, 4, 3}, 3, &st);
    CHECK(!tfc_encode_jpeg(ctx, empty, NULL, &st));
    CHECK_CODE(&st, TFC_INTERNAL);
    tfc_tensor *ts[] = {img, j, s, sj, back, empty};
    for (size_t i = 0; i < 6; i++) tfc_tensor_unref(ts[i]);
}

/* Random damage to PNG and JPEG data: every decode either succeeds or fails with INVALID_ARGUMENT. */
static void test_corrupt(void) {
    tfc_status st = TFC_STATUS_INIT;
    uint8_t px[8 * 9 * 3];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (uint8_t)next_rand();
    tfc_tensor *img = tfc_tensor_from_data(TFC_UINT8, (const int64_t[]){8, 9, 3}, 3, px, sizeof px, &st);
    tfc_tensor *png = img ? tfc_encode_png(ctx, img, 6, &st) : NULL;
    REQUIRE(png);
    size_t pn;
    const char *pd = tfc_tensor_string(png, 0, &pn);
    unsigned char *copy = malloc(pn > sizeof jpeg_2x3 ? pn : sizeof jpeg_2x3);
    int ok = 0, bad = 0, other = 0;
    for (int it = 0; it < 600; it++) {
        const bool jpeg = it % 2;
        const size_t n = jpeg ? sizeof jpeg_2x3 : pn;
        memcpy(copy, jpeg ? (const void *)jpeg_2x3 : (const void *)pd, n);
        size_t len = n;
        if (it % 5 == 0) len = 1 + next_rand() % (n - 1); /* truncated */
        for (int k = 0; k < 1 + (int)(next_rand() % 4); k++) copy[3 + next_rand() % (len - 3 > 0 ? len - 3 : 1)] = (uint8_t)next_rand();
        tfc_tensor *t = bytes(copy, len);
        tfc_tensor *r = it % 3 ? tfc_decode_image(ctx, t, 0, 0, &st)
                               : tfc_decode_jpeg(ctx, t, &(tfc_decode_jpeg_attrs){.try_recover_truncated = true,
                                                                                  .acceptable_fraction = 0.5f}, &st);
        if (r) ok++;
        else if (st.code == TFC_INVALID_ARGUMENT) bad++;
        else other++;
        tfc_tensor_unref(r);
        tfc_tensor_unref(t);
    }
    CHECK(other == 0);
    CHECK(bad > 0);
    printf("corrupt images: %d decoded, %d rejected\n", ok, bad);
    free(copy);
    tfc_tensor_unref(img);
    tfc_tensor_unref(png);
}

static void test_resize_values(void) {
    tfc_status st = TFC_STATUS_INIT;
    const float v[6] = {0, 1, 2, 3, 4, 5};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (const int64_t[]){1, 2, 3, 1}, 4, v, sizeof v, &st);
    REQUIRE(x);
    static const float hp[12] = {0, 0.625f, 1.375f, 2, 1.5f, 2.125f, 2.875f, 3.5f, 3, 3.625f, 4.375f, 5};
    static const float ac[12] = {0, 0.6666666865348816f, 1.3333333730697632f, 2, 1.5f, 2.1666667461395264f,
                                 2.8333334922790527f, 3.5f, 3, 3.6666667461395264f, 4.333333492279053f, 5};
    static const float nn_hp[12] = {0, 1, 1, 2, 3, 4, 4, 5, 3, 4, 4, 5}, nn[12] = {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5};
    tfc_tensor *a = tfc_resize_bilinear(ctx, x, 3, 4, false, true, &st), *b = tfc_resize_bilinear(ctx, x, 3, 4, true, false, &st);
    tfc_tensor *c = tfc_resize_nearest_neighbor(ctx, x, 3, 4, false, true, &st);
    tfc_tensor *d = tfc_resize_nearest_neighbor(ctx, x, 3, 4, false, false, &st);
    REQUIRE(a && b && c && d);
    CHECK(!memcmp(tfc_tensor_data(a), hp, sizeof hp) && !memcmp(tfc_tensor_data(b), ac, sizeof ac));
    CHECK(!memcmp(tfc_tensor_data(c), nn_hp, sizeof nn_hp) && !memcmp(tfc_tensor_data(d), nn, sizeof nn));
    /* tf.image.resize of a 3-D uint8 image: float32, half-pixel centres */
    const uint8_t u[6] = {0, 1, 2, 3, 4, 5};
    tfc_tensor *img = tfc_tensor_from_data(TFC_UINT8, (const int64_t[]){2, 3, 1}, 3, u, 6, &st);
    tfc_tensor *r = img ? tfc_image_resize(ctx, img, 3, 4, TFC_RESIZE_BILINEAR, &st) : NULL;
    tfc_tensor *rn = img ? tfc_image_resize(ctx, img, 3, 4, TFC_RESIZE_NEAREST, &st) : NULL;
    REQUIRE(r && rn);
    CHECK(tfc_tensor_rank(r) == 3 && tfc_tensor_dtype(r) == TFC_FLOAT && !memcmp(tfc_tensor_data(r), hp, sizeof hp));
    CHECK(tfc_tensor_dtype(rn) == TFC_UINT8 && ((const uint8_t *)tfc_tensor_data(rn))[5] == 4);
    CHECK(!tfc_resize_bilinear(ctx, x, 0, 4, false, true, &st));
    CHECK(strstr(st.msg, "ResizeBilinear: output dimensions must be positive") != NULL);
    CHECK(!tfc_resize_bilinear(ctx, x, 2, 2, true, true, &st));
    CHECK(strstr(st.msg, "If half_pixel_centers is True, align_corners must be False.") != NULL);
    tfc_tensor *ts[] = {x, a, b, c, d, img, r, rn};
    for (size_t i = 0; i < 8; i++) tfc_tensor_unref(ts[i]);
}

/* d sum(resize(x)) / dx sums to the number of output pixels per channel (bilinear weights sum to 1). */
static void test_resize_gradient(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    float v[2 * 5 * 4 * 3];
    for (int i = 0; i < 120; i++) v[i] = (float)(next_rand() % 1000) / 100.0f;
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (const int64_t[]){2, 5, 4, 3}, 4, v, sizeof v, &st);
    REQUIRE(x);
    for (int m = 0; m < 2; m++) {
        tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
        REQUIRE(tape);
        tfc_tape_watch(tape, x);
        tfc_tensor *y = tfc_image_resize(ctx, x, 7, 3, m ? TFC_RESIZE_NEAREST : TFC_RESIZE_BILINEAR, &st), *g = NULL;
        REQUIRE(y);
        REQUIRE(tfc_tape_gradient(tape, y, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
        REQUIRE(g && tfc_shape_equal(tfc_tensor_shape(g), tfc_tensor_shape(x)));
        double sum = 0;
        for (int i = 0; i < 120; i++) sum += tfc_tensor_get_f64(g, i);
        CHECK_NEAR(sum, 2.0 * 7 * 3 * 3, 1e-5);
        tfc_tape_free(tape);
    }
    tfc_tensor_unref(x);
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_png_round_trip();
    test_png_threads();
    test_png_channels();
    test_jpeg();
    test_encode_jpeg();
    test_corrupt();
    test_resize_values();
    test_resize_gradient();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
