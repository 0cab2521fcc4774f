/* tfc — Keras attention layers (tf.keras.layers.MultiHeadAttention).
 *
 * MultiHeadAttention follows Keras's weights exactly (so weights load from tf-keras files): query/key/value
 * projections "<layer>/query/kernel:0" [query_dim, num_heads, key_dim] and "<layer>/query/bias:0" [num_heads,
 * key_dim] (key likewise with key_dim, value with value_dim), output projection "<layer>/attention_output/kernel:0"
 * [num_heads, value_dim, output_dim] and "<layer>/attention_output/bias:0" [output_dim], created in that order. */
#ifndef TFC_KERAS_ATTENTION_H
#define TFC_KERAS_ATTENTION_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t num_heads, key_dim;
    int64_t value_dim;                 /* 0 = key_dim */
    double dropout;                    /* on the attention probabilities, in training */
    tfc_flag use_bias;                 /* default yes */
    int64_t output_shape;              /* 0 = the query's last dim */
    const tfc_initializer *kernel_initializer, *bias_initializer; /* NULL = glorot_uniform, zeros */
    const tfc_regularizer *kernel_regularizer, *bias_regularizer, *activity_regularizer;
    /* Keras's call arguments, fixed for every call of this layer (not in get_config; from_config reads them as
     * the extra keys "use_causal_mask" and "return_attention_scores"): */
    bool use_causal_mask;              /* query i attends to keys j <= i */
    bool return_attention_scores;      /* a second output: the probabilities [batch, heads, Tq, Tk] */
} tfc_multi_head_attention_opts;

/* tf.keras.layers.MultiHeadAttention(num_heads, key_dim, value_dim, dropout, use_bias, output_shape, ...) called
 * as mha(query, value, key=value, attention_mask): inputs query [batch, Tq, query_dim], value [batch, Tk, value_dim]
 * and optionally key [batch, Tk, key_dim] and attention_mask [batch, Tq, Tk] (bool or numeric; 0/false masks a
 * key out), in that order. Output [batch, Tq, output_dim]: softmax((q W_q + b_q)(k W_k + b_k)^T / sqrt(key_dim))
 * (v W_v + b_v) per head, projected by attention_output. Float dtypes. Only attention over axis 1 of rank-3 inputs
 * (Keras's default attention_axes). A new floating layer (release with tfc_layer_unref unless a model takes it),
 * NULL only when out of memory. INVALID_ARGUMENT at build/call: num_heads or key_dim <= 0, inputs that are not rank
 * 3 or whose batch/length dims disagree, a mask of another shape. */
TFC_API tfc_layer *tfc_layers_multi_head_attention_new(const tfc_multi_head_attention_opts *o);
#define tfc_layers_multi_head_attention(...) \
    tfc_layers_multi_head_attention_new(&(tfc_multi_head_attention_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
