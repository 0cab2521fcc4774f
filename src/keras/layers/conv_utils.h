/* Internal: what the 2-D image layers share (Keras's conv_utils): argument normalisation and validation with
 * Keras's messages, output lengths, and the config readers for their arguments. Used by Conv2D,
 * DepthwiseConv2D, the pooling layers and ZeroPadding2D (and the axis reader by the normalization layers). */
#ifndef TFC_KERAS_LAYERS_CONV_UTILS_H
#define TFC_KERAS_LAYERS_CONV_UTILS_H

#include "keras/keras_internal.h"

/* Room for a padding/data_format value as given (longer values are cut, still reported as invalid). */
#define TFC_KCONV_STR 48

/* Lower-cased copy of s (NULL or "" -> dflt) into buf, as Keras's normalize_padding/normalize_data_format. */
void tfc_kconv_lower(char *buf, size_t size, const char *s, const char *dflt);
/* A pair argument of a constructor: {k, 0} means {k, k} (Keras's int form), remaining zeros mean dflt. */
void tfc_kconv_pair(int64_t out[2], const int64_t in[2], int64_t dflt);

/* INVALID_ARGUMENT unless padding is "valid" or "same" ("causal" is Conv1D's only), naming the value and layer. */
bool tfc_kconv_check_padding(const tfc_layer *l, const char *padding, tfc_status *st);
/* INVALID_ARGUMENT unless data_format is "channels_last" or "channels_first". */
bool tfc_kconv_check_data_format(const tfc_layer *l, const char *data_format, tfc_status *st);
/* Keras's normalize_tuple: every value of the pair must be >= min (1, or 0 with allow_zero). */
bool tfc_kconv_check_pair(const tfc_layer *l, const char *what, const int64_t v[2], int64_t min, tfc_status *st);

/* Keras's Conv._validate_init for n spatial dims: filters > 0, groups > 0 dividing filters, and not both a stride
 * and a dilation over 1 (Keras's messages, naming the layer and the values). */
bool tfc_kconv_check_conv_args(const tfc_layer *l, int64_t filters, int64_t groups, const int64_t *strides,
                               const int64_t *dilation, int n, tfc_status *st);

/* conv_utils.conv_output_length: -1 for an unknown input length. */
int64_t tfc_kconv_output_length(int64_t in, int64_t k, bool same, int64_t stride, int64_t dilation);
/* Output height and width of a 2-D window op over in's dims h_axis, h_axis + 1. INVALID_ARGUMENT as Keras when
 * an output dim would be <= 0 ("One of the dimensions in the output is <= 0 due to downsampling in ..."). */
bool tfc_kconv_spatial(const tfc_layer *l, const tfc_shape *in, int h_axis, const int64_t k[2], const int64_t s[2],
                       const int64_t d[2], bool same, int64_t out[2], tfc_status *st);
/* INVALID_ARGUMENT 'Input 0 of layer "x" is incompatible with the layer: expected ndim=4 (or min_ndim=4), found
 * ndim=3. Full shape received: (...)' unless the rank fits. */
bool tfc_kconv_check_rank(const tfc_layer *l, const tfc_shape *s, int ndim, bool at_least, tfc_status *st);

/* tf_utils.validate_axis: axes (negative from the end) to non-negative ones in out, for an input of rank `rank`;
 * INVALID_ARGUMENT for an axis out of range or a duplicate, naming the layer. */
bool tfc_kconv_validate_axes(const tfc_layer *l, const int64_t *axes, int n, int rank, int64_t *out, tfc_status *st);
/* "(1, 2)" / "(3,)" as Python prints a tuple of ints. */
char *tfc_kconv_tuple_str(const int64_t *v, int n, char *buf, size_t size);

/* ---- config readers: absent keys leave out unchanged ---- */
/* An int or a list of `rank` (1 .. 3) non-negative ints (Keras's normalize_tuple); an int fills every entry. */
bool tfc_kconv_json_tuple(const cJSON *cfg, const char *key, int rank, int64_t *out, bool *present, tfc_status *st);
/* tfc_kconv_json_tuple of rank 2 (kernel_size, strides, pool_size, dilation_rate). */
bool tfc_kconv_json_pair(const cJSON *cfg, const char *key, int64_t out[2], bool *present, tfc_status *st);
/* "padding" / "data_format": strings (case-insensitive) that must be valid; INVALID_ARGUMENT naming the value
 * otherwise, with Keras's message. *out is borrowed from cfg. */
bool tfc_kconv_json_padding(const cJSON *cfg, const char **out, tfc_status *st);
bool tfc_kconv_json_data_format(const cJSON *cfg, const char **out, tfc_status *st);
/* An int, or a list of ints, for an axis argument; *is_list tells which form was given. */
bool tfc_kconv_json_axes(const cJSON *cfg, const char *key, int64_t *out, int max, int *n, bool *is_list,
                         bool *present, tfc_status *st);

#endif
