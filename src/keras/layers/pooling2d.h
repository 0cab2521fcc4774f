/* Internal: the shared part of the 2-D pooling layers (Keras's Pooling2D and GlobalPooling2D). */
#ifndef TFC_KERAS_LAYERS_POOLING2D_H
#define TFC_KERAS_LAYERS_POOLING2D_H

#include "keras/layers/conv_utils.h"

/* MaxPooling2D / AveragePooling2D: op is "MaxPool" or "AvgPool". */
typedef struct {
    tfc_layer base;
    const char *op;
    int64_t pool_size[2], strides[2];
    char padding[TFC_KCONV_STR], data_format[TFC_KCONV_STR];
} tfc_pooling2d;

tfc_layer *tfc_pooling2d_new(const tfc_layer_class *cls, const char *op, const tfc_pooling2d_opts *o);
bool tfc_pooling2d_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                tfc_status *st);
bool tfc_pooling2d_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
bool tfc_pooling2d_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        bool training, tfc_status *st);
bool tfc_pooling2d_get_config(const tfc_layer *l, void *cfg, tfc_status *st);
tfc_layer *tfc_pooling2d_from_config(const cJSON *cfg, tfc_layer *(*ctor)(const tfc_pooling2d_opts *),
                                     const char *class_name, tfc_status *st);

/* GlobalAveragePooling2D / GlobalMaxPooling2D: op is "Mean" or "Max" over the spatial axes. */
typedef struct {
    tfc_layer base;
    const char *op;
    char data_format[TFC_KCONV_STR];
    bool keepdims;
} tfc_global_pooling2d;

tfc_layer *tfc_global_pooling2d_new(const tfc_layer_class *cls, const char *op, const tfc_global_pooling2d_opts *o);
bool tfc_global_pooling2d_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                       tfc_status *st);
bool tfc_global_pooling2d_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
bool tfc_global_pooling2d_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                               int n_out, bool training, tfc_status *st);
bool tfc_global_pooling2d_get_config(const tfc_layer *l, void *cfg, tfc_status *st);
tfc_layer *tfc_global_pooling2d_from_config(const cJSON *cfg, tfc_layer *(*ctor)(const tfc_global_pooling2d_opts *),
                                            const char *class_name, tfc_status *st);

#endif
