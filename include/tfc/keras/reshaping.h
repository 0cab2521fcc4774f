/* tfc — Keras reshaping layers over the steps / spatial dims: UpSampling1D/2D, Cropping1D/2D, ZeroPadding1D
 * (ZeroPadding2D is in layers.h). Each keeps the input's dtype (UpSampling2D's bilinear gives float32, as
 * TensorFlow's ResizeBilinear). */
#ifndef TFC_KERAS_RESHAPING_H
#define TFC_KERAS_RESHAPING_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { TFC_LAYER_COMMON_OPTS; int64_t size; /* 0 = 2 */ } tfc_up_sampling1d_opts;
/* tf.keras.layers.UpSampling1D(size): [batch, steps, c] -> [batch, steps * size, c], each step repeated size times
 * (backend.repeat_elements). A new floating layer (release with tfc_layer_unref unless a model takes it), NULL only
 * when out of memory. INVALID_ARGUMENT at build: size <= 0, an input that is not rank 3, a length that overflows. */
TFC_API tfc_layer *tfc_layers_up_sampling1d_new(const tfc_up_sampling1d_opts *o);
#define tfc_layers_up_sampling1d(...) tfc_layers_up_sampling1d_new(&(tfc_up_sampling1d_opts){__VA_ARGS__})

typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t size[2];           /* {0, 0} = {2, 2}; {k} = {k, k} */
    const char *data_format;   /* NULL = "channels_last" */
    const char *interpolation; /* NULL = "nearest"; "bilinear" */
} tfc_up_sampling2d_opts;
/* tf.keras.layers.UpSampling2D(size, data_format, interpolation): [batch, h, w, c] -> [batch, h * size[0],
 * w * size[1], c] (channels_last) through tf.image.resize: ResizeNearestNeighbor (dtype kept) or ResizeBilinear
 * (float32 output), both with half_pixel_centers. A new floating layer, NULL only when out of memory.
 * INVALID_ARGUMENT at build: size <= 0, a bad data_format, an interpolation other than Keras's names, an input that
 * is not rank 4, a size that overflows; UNIMPLEMENTED for Keras's area/bicubic/gaussian/lanczos3/lanczos5/
 * mitchellcubic. */
TFC_API tfc_layer *tfc_layers_up_sampling2d_new(const tfc_up_sampling2d_opts *o);
#define tfc_layers_up_sampling2d(...) tfc_layers_up_sampling2d_new(&(tfc_up_sampling2d_opts){__VA_ARGS__})

typedef struct { TFC_LAYER_COMMON_OPTS; int64_t cropping[2]; bool has_cropping; /* else (1, 1) */ } tfc_cropping1d_opts;
/* tf.keras.layers.Cropping1D(cropping): [batch, steps, c] -> [batch, steps - cropping[0] - cropping[1], c].
 * A new floating layer, NULL only when out of memory. INVALID_ARGUMENT at build: a negative cropping, an input
 * that is not rank 3, cropping that leaves no step ("cropping parameter of Cropping layer must be greater than the
 * input shape"). */
TFC_API tfc_layer *tfc_layers_cropping1d_new(const tfc_cropping1d_opts *o);
#define tfc_layers_cropping1d(...) tfc_layers_cropping1d_new(&(tfc_cropping1d_opts){__VA_ARGS__})

typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t cropping[2][2];  /* ((top, bottom), (left, right)); all zero = no cropping (Keras's default) */
    const char *data_format; /* NULL = "channels_last" */
} tfc_cropping2d_opts;
/* tf.keras.layers.Cropping2D(cropping, data_format): [batch, h, w, c] -> [batch, h - top - bottom,
 * w - left - right, c] (channels_last). A new floating layer, NULL only when out of memory. INVALID_ARGUMENT at
 * build: a negative cropping, a bad data_format, an input that is not rank 4, cropping that leaves nothing. */
TFC_API tfc_layer *tfc_layers_cropping2d_new(const tfc_cropping2d_opts *o);
#define tfc_layers_cropping2d(...) tfc_layers_cropping2d_new(&(tfc_cropping2d_opts){__VA_ARGS__})

typedef struct { TFC_LAYER_COMMON_OPTS; int64_t padding[2]; bool has_padding; /* else (1, 1) */ } tfc_zero_padding1d_opts;
/* tf.keras.layers.ZeroPadding1D(padding): [batch, steps, c] -> [batch, padding[0] + steps + padding[1], c] with the
 * Pad op. A new floating layer, NULL only when out of memory. INVALID_ARGUMENT at build: a negative padding, an
 * input that is not rank 3, a padded length that overflows. */
TFC_API tfc_layer *tfc_layers_zero_padding1d_new(const tfc_zero_padding1d_opts *o);
#define tfc_layers_zero_padding1d(...) tfc_layers_zero_padding1d_new(&(tfc_zero_padding1d_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
