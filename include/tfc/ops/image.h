/* tfc — typed wrappers for the image ops: decoding and encoding (TensorFlow's DecodePng, DecodeJpeg,
 * DecodeImage, EncodePng, EncodeJpeg: tf.io.decode_png, decode_jpeg, decode_image, encode_png, encode_jpeg) and
 * resizing
 * (ResizeBilinear, ResizeNearestNeighbor: tf.image.resize).
 *
 * Common contract:
 *   - Images are [height, width, channels]; batches [batch, height, width, channels]. Decoded pixels are
 *     those of TensorFlow (libpng and libjpeg-turbo run with TensorFlow's settings).
 *   - Every decoder recognises PNG and JPEG by their magic bytes, whatever its name (as TensorFlow).
 *     tfc_decode_image also reads uncompressed BMP files (8, 24, 32 bits). GIF and WebP data are UNIMPLEMENTED.
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL with st set:
 *       INVALID_ARGUMENT   undecodable or empty data ("DecodePng: Invalid PNG data, size 120"), bad channels,
 *                          ranks, sizes or attrs; the message names the op (a dataset adds the file name)
 *       UNIMPLEMENTED      an image format tfc does not decode; no kernel for the dtype
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed. Resizing is differentiable with respect to the images (tapes record it); the
 *     codecs are not. */
#ifndef TFC_OPS_IMAGE_H
#define TFC_OPS_IMAGE_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.io.decode_png (DecodePng): contents is a scalar string. channels: 0 (the file's), 1 (gray), 3 (RGB)
 * or 4 (RGBA); conversions as TensorFlow (alpha added as opaque, RGB->gray with 0.299/0.587/0.114).
 * dtype: TFC_UINT8 (16-bit files keep their high byte) or TFC_UINT16 (8-bit files scaled by 257); 0 means
 * uint8. Returns [height, width, channels]. */
TFC_API tfc_tensor *tfc_decode_png(tfc_ctx *ctx, const tfc_tensor *contents, int channels, tfc_dtype dtype,
                                   tfc_status *st);

/* DecodeJpeg's attributes; a zeroed struct (or NULL) means TensorFlow's defaults: ratio 1, fancy upscaling
 * on, no recovery of truncated files, acceptable_fraction 1, dct_method "" (INTEGER_FAST). */
typedef struct tfc_decode_jpeg_attrs {
    int channels;             /* 0, 1 or 3 */
    int ratio;                /* 1, 2, 4 or 8 (0 = 1): downscaling during decoding */
    bool no_fancy_upscaling;  /* fancy_upscaling = false */
    bool try_recover_truncated;
    float acceptable_fraction; /* 0 = 1.0; with recovery, the fraction of rows that must be present */
    const char *dct_method;   /* NULL, "", "INTEGER_FAST" or "INTEGER_ACCURATE" */
} tfc_decode_jpeg_attrs;

/* tf.io.decode_jpeg (DecodeJpeg): uint8 [height / ratio, width / ratio, channels] (rounded up). */
TFC_API tfc_tensor *tfc_decode_jpeg(tfc_ctx *ctx, const tfc_tensor *contents, const tfc_decode_jpeg_attrs *attrs,
                                    tfc_status *st);

/* tf.io.decode_image (DecodeImage) for PNG, JPEG and BMP: dtype TFC_UINT8 (0), TFC_UINT16 or TFC_FLOAT (scaled to
 * [0, 1]). Returns [height, width, channels]. */
TFC_API tfc_tensor *tfc_decode_image(tfc_ctx *ctx, const tfc_tensor *contents, int channels, tfc_dtype dtype,
                                     tfc_status *st);

/* tf.io.encode_png (EncodePng): image uint8 or uint16 [..., height, width, channels] with 1-4 channels;
 * compression -1 (zlib's default) to 9. Returns a string tensor of the leading dims (a scalar for one image).
 * INTERNAL when an image has zero height or width (as TensorFlow). */
TFC_API tfc_tensor *tfc_encode_png(tfc_ctx *ctx, const tfc_tensor *image, int compression, tfc_status *st);

/* EncodeJpeg's attributes; a zeroed struct (or NULL) means TensorFlow's defaults: format "" (from the channel
 * count), quality 95, baseline, no Huffman optimisation, 4:2:0 chroma subsampling, 300 dpi, no XMP. */
typedef struct tfc_encode_jpeg_attrs {
    const char *format;        /* NULL/"", "grayscale" or "rgb" */
    int quality;               /* 1..100; 0 = 95 */
    bool progressive, optimize_size, no_chroma_downsampling;
    const char *density_unit;  /* NULL/"in" or "cm" */
    int x_density, y_density;  /* 0 = 300 */
    const char *xmp_metadata;  /* NULL = none */
} tfc_encode_jpeg_attrs;

/* tf.io.encode_jpeg (EncodeJpeg): image uint8 [height, width, 1 or 3]; a scalar string. INTERNAL when the
 * image is empty (as TensorFlow). */
TFC_API tfc_tensor *tfc_encode_jpeg(tfc_ctx *ctx, const tfc_tensor *image, const tfc_encode_jpeg_attrs *attrs,
                                    tfc_status *st);

typedef enum { TFC_RESIZE_BILINEAR = 0, TFC_RESIZE_NEAREST = 1 } tfc_resize_method;

/* tf.image.resize (TensorFlow 2): images [h, w, c] or [batch, h, w, c] of any real dtype, resized to
 * (height, width) with half-pixel centres. Bilinear returns float32; nearest keeps the dtype. A 3-D input
 * gives a 3-D output. */
TFC_API tfc_tensor *tfc_image_resize(tfc_ctx *ctx, const tfc_tensor *images, int64_t height, int64_t width,
                                     tfc_resize_method method, tfc_status *st);

/* The raw ops, ResizeBilinear and ResizeNearestNeighbor: images [batch, h, w, c]; align_corners and
 * half_pixel_centers as TensorFlow (not both). */
TFC_API tfc_tensor *tfc_resize_bilinear(tfc_ctx *ctx, const tfc_tensor *images, int64_t height, int64_t width,
                                        bool align_corners, bool half_pixel_centers, tfc_status *st);
TFC_API tfc_tensor *tfc_resize_nearest_neighbor(tfc_ctx *ctx, const tfc_tensor *images, int64_t height, int64_t width,
                                                bool align_corners, bool half_pixel_centers, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
