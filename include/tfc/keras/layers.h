/* tfc — built-in Keras layers (tf.keras.layers.*). Each constructor macro takes Keras's argument names as
 * designated initialisers; zero means Keras's default. Common arguments of every layer: name, trainable
 * (tfc_flag), dtype (0 = the global policy's, float32 unless set), dtype_policy (a policy name, see
 * tfc/keras/mixed_precision.h; wins over dtype), input_shape (without batch; makes a Sequential model's first layer
 * define the input, like Keras's input_shape=).
 *
 *   tfc_layer *d = tfc_layers_dense(.units = 10, .activation = "softmax");
 *
 * Shapes below follow Keras: [batch, ...]; image layers use data_format "channels_last" (default,
 * [batch, height, width, channels]) or "channels_first" ([batch, channels, height, width]).
 * Returned layers are floating (see layer.h); NULL only when out of memory. */
#ifndef TFC_KERAS_LAYERS_H
#define TFC_KERAS_LAYERS_H

#include "tfc/keras/layer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFC_LAYER_COMMON_OPTS                                                                                \
    const char *name;                                                                                        \
    tfc_flag trainable;                                                                                      \
    tfc_dtype dtype;                                                                                         \
    const char *dtype_policy; /* Keras's dtype= given a policy: "mixed_float16", ... (mixed_precision.h) */  \
    int64_t input_shape[TFC_MAX_RANK]; /* without batch; -1 unknown; rank = leading non-zero entries */      \
    int input_rank /* 0: count the leading non-zero entries of input_shape; -1: input_shape=() */

/* tf.keras.layers.InputLayer: [batch, *shape] placeholder (use tfc_input for the Functional API). */
typedef struct { TFC_LAYER_COMMON_OPTS; int64_t batch_size; } tfc_input_layer_opts;
/* tf.keras.layers.InputLayer(input_shape, batch_size): outputs its input unchanged; a Sequential model's first
 * layer, which fixes the model's input shape [batch_size or None, *input_shape]. A new floating layer (a model that
 * receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory. */
TFC_API tfc_layer *tfc_layers_input_layer_new(const tfc_input_layer_opts *o);
#define tfc_layers_input_layer(...) tfc_layers_input_layer_new(&(tfc_input_layer_opts){__VA_ARGS__})

/* Dense: [batch, ..., in] -> [batch, ..., units]; activation(x @ kernel + bias). kernel [in, units], bias [units]. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t units;
    const char *activation;            /* NULL = "linear" */
    tfc_flag use_bias;                 /* default yes */
    const tfc_initializer *kernel_initializer; /* NULL = glorot_uniform */
    const tfc_initializer *bias_initializer;   /* NULL = zeros */
    const tfc_regularizer *kernel_regularizer, *bias_regularizer, *activity_regularizer;
} tfc_dense_opts;
/* tf.keras.layers.Dense(units, activation, use_bias, ...). float32 (or the layer's dtype). A new floating layer (a
 * model that receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory.
 * INVALID_ARGUMENT at build: units <= 0 ("received an invalid value for `units`"), an input of rank < 2 ("expected
 * min_ndim=2"), a last input dim that changed since the build, an unknown activation name. */
TFC_API tfc_layer *tfc_layers_dense_new(const tfc_dense_opts *o);
#define tfc_layers_dense(...) tfc_layers_dense_new(&(tfc_dense_opts){__VA_ARGS__})

/* Conv2D: kernel [kh, kw, in/groups, filters], bias [filters]. padding "valid" (default) or "same".
 * Pairs (kernel_size, strides, dilation_rate, and pool_size below) given as {k} mean {k, k}, like Keras's int
 * form; padding and data_format are case-insensitive. Inputs of rank > 4 carry extra leading batch dims. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t filters;
    int64_t kernel_size[2];
    int64_t strides[2];        /* 0 = 1 */
    const char *padding;       /* NULL = "valid" */
    const char *data_format;   /* NULL = "channels_last" */
    int64_t dilation_rate[2];  /* 0 = 1 */
    int64_t groups;            /* 0 = 1 */
    const char *activation;
    tfc_flag use_bias;
    const tfc_initializer *kernel_initializer, *bias_initializer;
    const tfc_regularizer *kernel_regularizer, *bias_regularizer, *activity_regularizer;
} tfc_conv2d_layer_opts;
/* tf.keras.layers.Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
 * use_bias, ...): [batch, h, w, in] -> [batch, out_h, out_w, filters] (channels_last). A new floating layer (a
 * model that receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory.
 * INVALID_ARGUMENT at build: filters <= 0, groups <= 0 or not dividing the input channels or filters, a bad padding
 * or data_format, strides > 1 together with dilation_rate > 1, an input that is not rank 4 (or more) or too small
 * for the kernel. */
TFC_API tfc_layer *tfc_layers_conv2d_new(const tfc_conv2d_layer_opts *o);
#define tfc_layers_conv2d(...) tfc_layers_conv2d_new(&(tfc_conv2d_layer_opts){__VA_ARGS__})

/* DepthwiseConv2D: depthwise_kernel [kh, kw, in, depth_multiplier], bias [in * depth_multiplier]. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t kernel_size[2];
    int64_t strides[2];
    const char *padding;
    int64_t depth_multiplier;  /* 0 = 1 */
    const char *data_format;
    int64_t dilation_rate[2];
    const char *activation;
    tfc_flag use_bias;
    const tfc_initializer *depthwise_initializer, *bias_initializer;
    const tfc_regularizer *depthwise_regularizer, *bias_regularizer, *activity_regularizer;
} tfc_depthwise_conv2d_layer_opts;
/* tf.keras.layers.DepthwiseConv2D(kernel_size, strides, padding, depth_multiplier, data_format, dilation_rate,
 * activation, use_bias, ...): [batch, h, w, in] -> [batch, out_h, out_w, in * depth_multiplier] (channels_last). A
 * new floating layer (a model that receives it takes it; else release it with tfc_layer_unref), NULL only when out
 * of memory. INVALID_ARGUMENT at build: depth_multiplier <= 0, strides > 1 together with dilation_rate > 1, a bad
 * padding or data_format, an input that is not rank 4. */
TFC_API tfc_layer *tfc_layers_depthwise_conv2d_new(const tfc_depthwise_conv2d_layer_opts *o);
#define tfc_layers_depthwise_conv2d(...) tfc_layers_depthwise_conv2d_new(&(tfc_depthwise_conv2d_layer_opts){__VA_ARGS__})

/* MaxPooling2D / AveragePooling2D: pool_size default [2, 2]; strides 0 = pool_size; padding "valid". */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t pool_size[2];
    int64_t strides[2];
    const char *padding;
    const char *data_format;
} tfc_pooling2d_opts;
/* tf.keras.layers.MaxPooling2D / AveragePooling2D(pool_size, strides, padding, data_format): [batch, h, w, c] ->
 * [batch, out_h, out_w, c] (channels_last); float dtypes. A new floating layer (a model that receives it takes it;
 * else release it with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at build: non-positive
 * pool_size or strides, a bad padding or data_format, an input that is not rank 4. */
TFC_API tfc_layer *tfc_layers_max_pooling2d_new(const tfc_pooling2d_opts *o);
TFC_API tfc_layer *tfc_layers_average_pooling2d_new(const tfc_pooling2d_opts *o);
#define tfc_layers_max_pooling2d(...) tfc_layers_max_pooling2d_new(&(tfc_pooling2d_opts){__VA_ARGS__})
#define tfc_layers_average_pooling2d(...) tfc_layers_average_pooling2d_new(&(tfc_pooling2d_opts){__VA_ARGS__})

/* GlobalAveragePooling2D / GlobalMaxPooling2D: [batch, h, w, c] -> [batch, c] (keepdims: [batch, 1, 1, c]). */
typedef struct { TFC_LAYER_COMMON_OPTS; const char *data_format; bool keepdims; } tfc_global_pooling2d_opts;
/* tf.keras.layers.GlobalAveragePooling2D / GlobalMaxPooling2D(data_format, keepdims). A new floating layer (a model
 * that receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT
 * at build for an input that is not rank 4 or a bad data_format; GlobalMaxPooling2D also for an empty spatial dim
 * ("Incorrect input shape"). */
TFC_API tfc_layer *tfc_layers_global_average_pooling2d_new(const tfc_global_pooling2d_opts *o);
TFC_API tfc_layer *tfc_layers_global_max_pooling2d_new(const tfc_global_pooling2d_opts *o);
#define tfc_layers_global_average_pooling2d(...) tfc_layers_global_average_pooling2d_new(&(tfc_global_pooling2d_opts){__VA_ARGS__})
#define tfc_layers_global_max_pooling2d(...) tfc_layers_global_max_pooling2d_new(&(tfc_global_pooling2d_opts){__VA_ARGS__})

/* Flatten: [batch, ...] -> [batch, prod(...)] (channels_first moves channels last first). */
typedef struct { TFC_LAYER_COMMON_OPTS; const char *data_format; } tfc_flatten_opts;
/* tf.keras.layers.Flatten(data_format). A new floating layer (a model that receives it takes it; else release it
 * with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at build: a scalar input ("expected
 * min_ndim=1"), a flattened size that overflows int64, a bad data_format. */
TFC_API tfc_layer *tfc_layers_flatten_new(const tfc_flatten_opts *o);
#define tfc_layers_flatten(...) tfc_layers_flatten_new(&(tfc_flatten_opts){__VA_ARGS__})

/* Reshape: [batch, ...] -> [batch, *target_shape] (one -1 allowed). */
typedef struct { TFC_LAYER_COMMON_OPTS; int64_t target_shape[TFC_MAX_RANK]; int target_rank; /* 0: leading non-zero entries; -1: () */ } tfc_reshape_layer_opts;
/* tf.keras.layers.Reshape(target_shape). A new floating layer (a model that receives it takes it; else release it
 * with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at build: more than one -1 in target_shape,
 * more than TFC_MAX_RANK dims, or a target whose element count differs from the input's (per sample). */
TFC_API tfc_layer *tfc_layers_reshape_new(const tfc_reshape_layer_opts *o);
#define tfc_layers_reshape(...) tfc_layers_reshape_new(&(tfc_reshape_layer_opts){__VA_ARGS__})

/* ZeroPadding2D: padding {{top, bottom}, {left, right}}; all zero = 1 on every side as Keras's default unless
 * has_padding (then all zero is no padding). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t padding[2][2];
    const char *data_format;
    bool has_padding;
} tfc_zero_padding2d_opts;
/* tf.keras.layers.ZeroPadding2D(padding, data_format): [batch, h, w, c] -> [batch, top + h + bottom, left + w +
 * right, c] (channels_last). A new floating layer (a model that receives it takes it; else release it with
 * tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at build: negative padding, a padded size that
 * overflows, an input that is not rank 4. */
TFC_API tfc_layer *tfc_layers_zero_padding2d_new(const tfc_zero_padding2d_opts *o);
#define tfc_layers_zero_padding2d(...) tfc_layers_zero_padding2d_new(&(tfc_zero_padding2d_opts){__VA_ARGS__})

/* Dropout: training only; keeps each value with probability 1-rate, scaled by 1/(1-rate). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    double rate;
    int64_t noise_shape[TFC_MAX_RANK]; int noise_rank; /* 0 = input shape */
    int64_t seed; bool has_seed;
} tfc_dropout_opts;
/* tf.keras.layers.Dropout(rate, noise_shape, seed): the identity outside training. Any float dtype; the output has
 * the input's shape and dtype. A new floating layer (a model that receives it takes it; else release it with
 * tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at build/call: rate outside [0, 1] ("invalid
 * value received for `rate`"), a noise_shape whose rank or dims do not match the input. */
TFC_API tfc_layer *tfc_layers_dropout_new(const tfc_dropout_opts *o);
#define tfc_layers_dropout(...) tfc_layers_dropout_new(&(tfc_dropout_opts){__VA_ARGS__})

/* Activation: applies a named activation (see tfc_activation_apply). */
typedef struct { TFC_LAYER_COMMON_OPTS; const char *activation; } tfc_activation_layer_opts;
/* tf.keras.layers.Activation(activation): same shape and dtype as the input. A new floating layer (a model that
 * receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at
 * build for an unknown activation name. */
TFC_API tfc_layer *tfc_layers_activation_new(const tfc_activation_layer_opts *o);
#define tfc_layers_activation(...) tfc_layers_activation_new(&(tfc_activation_layer_opts){__VA_ARGS__})

/* ReLU (Keras's backend.relu): max_value for x >= max_value, x for threshold <= x < max_value,
 * negative_slope * (x - threshold) otherwise. max_value applies when has_max_value; negative values of
 * max_value, negative_slope or threshold are INVALID_ARGUMENT at build. */
typedef struct { TFC_LAYER_COMMON_OPTS; double max_value; bool has_max_value; double negative_slope; double threshold; } tfc_relu_layer_opts;
/* tf.keras.layers.ReLU(max_value, negative_slope, threshold): same shape and dtype as the input. A new floating
 * layer (a model that receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory.
 * INVALID_ARGUMENT at build for the negative values above. */
TFC_API tfc_layer *tfc_layers_relu_new(const tfc_relu_layer_opts *o);
#define tfc_layers_relu(...) tfc_layers_relu_new(&(tfc_relu_layer_opts){__VA_ARGS__})

/* LeakyReLU: alpha default 0.3 (Keras's, not tf.nn's 0.2); has_alpha to pass 0. */
typedef struct { TFC_LAYER_COMMON_OPTS; double alpha; bool has_alpha; } tfc_leaky_relu_layer_opts;
/* tf.keras.layers.LeakyReLU(alpha): x for x >= 0, alpha * x otherwise; same shape and dtype as the input. A new
 * floating layer (a model that receives it takes it; else release it with tfc_layer_unref), NULL only when out of
 * memory.  */
TFC_API tfc_layer *tfc_layers_leaky_relu_new(const tfc_leaky_relu_layer_opts *o);
#define tfc_layers_leaky_relu(...) tfc_layers_leaky_relu_new(&(tfc_leaky_relu_layer_opts){__VA_ARGS__})

/* Softmax over `axis` (default -1; has_axis to pass 0). */
typedef struct { TFC_LAYER_COMMON_OPTS; int64_t axis; bool has_axis; } tfc_softmax_layer_opts;
/* tf.keras.layers.Softmax(axis): exp(x) / sum(exp(x)) along axis, computed stably; same shape and dtype as the
 * input (floats). A new floating layer (a model that receives it takes it; else release it with tfc_layer_unref),
 * NULL only when out of memory. INVALID_ARGUMENT at build when axis is out of bounds for the input's rank. */
TFC_API tfc_layer *tfc_layers_softmax_new(const tfc_softmax_layer_opts *o);
#define tfc_layers_softmax(...) tfc_layers_softmax_new(&(tfc_softmax_layer_opts){__VA_ARGS__})

/* BatchNormalization: weights gamma (if scale), beta (if center) trainable; moving_mean, moving_variance
 * non-trainable, updated in training as moving = moving * momentum + batch * (1 - momentum). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t axis; bool has_axis;  /* default -1 */
    int64_t axes[TFC_MAX_RANK]; int n_axes; /* axis as a list (Keras's axis=[1, 2]); used when n_axes > 0 */
    double momentum;              /* 0 = 0.99 */
    double epsilon;               /* 0 = 0.001 */
    tfc_flag center, scale;       /* default yes */
    const tfc_initializer *beta_initializer, *gamma_initializer, *moving_mean_initializer, *moving_variance_initializer;
    const tfc_regularizer *beta_regularizer, *gamma_regularizer;
} tfc_batch_normalization_opts;
/* tf.keras.layers.BatchNormalization(axis, momentum, epsilon, center, scale, ...): in training normalises with the
 * batch's mean and variance over every axis but `axis` and updates the moving statistics; in inference uses the
 * moving ones. Same shape and dtype as the input (floats). A new floating layer (a model that receives it takes it;
 * else release it with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at build: an axis out of
 * range or of unknown size ("Input has undefined `axis` dimension"). */
TFC_API tfc_layer *tfc_layers_batch_normalization_new(const tfc_batch_normalization_opts *o);
#define tfc_layers_batch_normalization(...) tfc_layers_batch_normalization_new(&(tfc_batch_normalization_opts){__VA_ARGS__})

/* LayerNormalization over `axis` (default -1): gamma, beta [normalized dims]. epsilon 0 = 0.001. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t axis[TFC_MAX_RANK]; int n_axis; /* 0: {-1} */
    double epsilon;
    tfc_flag center, scale;
    const tfc_initializer *beta_initializer, *gamma_initializer;
    const tfc_regularizer *beta_regularizer, *gamma_regularizer;
} tfc_layer_normalization_opts;
/* tf.keras.layers.LayerNormalization(axis, epsilon, center, scale, ...): normalises each sample over `axis` with
 * its own mean and variance; same shape and dtype as the input (floats). A new floating layer (a model that
 * receives it takes it; else release it with tfc_layer_unref), NULL only when out of memory. INVALID_ARGUMENT at
 * build: an axis out of range, or normalized dims of unknown size. */
TFC_API tfc_layer *tfc_layers_layer_normalization_new(const tfc_layer_normalization_opts *o);
#define tfc_layers_layer_normalization(...) tfc_layers_layer_normalization_new(&(tfc_layer_normalization_opts){__VA_ARGS__})

/* Embedding: int indices [batch, ...] in [0, input_dim) -> [batch, ..., output_dim]; embeddings
 * [input_dim, output_dim] initialised uniform [-0.05, 0.05]. */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t input_dim, output_dim;
    const tfc_initializer *embeddings_initializer;
    const tfc_regularizer *embeddings_regularizer;
    bool mask_zero;          /* kept in the config; masks are not propagated */
    int64_t input_length;    /* 0 = None */
    const tfc_regularizer *activity_regularizer;
} tfc_embedding_opts;
/* tf.keras.layers.Embedding(input_dim, output_dim, ...): int32/int64 indices -> float32 rows of the embeddings. A
 * new floating layer (a model that receives it takes it; else release it with tfc_layer_unref), NULL only when out
 * of memory. INVALID_ARGUMENT: input_dim or output_dim <= 0 at build, an index outside [0, input_dim) at call (as
 * tf.gather on CPU). */
TFC_API tfc_layer *tfc_layers_embedding_new(const tfc_embedding_opts *o);
#define tfc_layers_embedding(...) tfc_layers_embedding_new(&(tfc_embedding_opts){__VA_ARGS__})

/* Merge layers on 2+ inputs: Add and Multiply (broadcasting as Keras), Concatenate along axis (default -1). */
typedef struct { TFC_LAYER_COMMON_OPTS; int64_t axis; bool has_axis; } tfc_merge_opts;
/* tf.keras.layers.Add / Multiply / Concatenate(axis): merge 2 or more inputs (a Functional model's tfc_layer_apply
 * with several tensors) of one dtype. Add and Multiply broadcast the shapes as Keras; Concatenate joins along axis.
 * A new floating layer (a model that receives it takes it; else release it with tfc_layer_unref), NULL only when
 * out of memory. INVALID_ARGUMENT at build: no input, different batch sizes, shapes that do not broadcast, or
 * (Concatenate) shapes that differ off the axis ("requires inputs with matching shapes except for the concatenation
 * axis"). */
TFC_API tfc_layer *tfc_layers_add_new(const tfc_merge_opts *o);
TFC_API tfc_layer *tfc_layers_multiply_new(const tfc_merge_opts *o);
TFC_API tfc_layer *tfc_layers_concatenate_new(const tfc_merge_opts *o);
#define tfc_layers_add(...) tfc_layers_add_new(&(tfc_merge_opts){__VA_ARGS__})
#define tfc_layers_multiply(...) tfc_layers_multiply_new(&(tfc_merge_opts){__VA_ARGS__})
#define tfc_layers_concatenate(...) tfc_layers_concatenate_new(&(tfc_merge_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
