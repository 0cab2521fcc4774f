/* Internal: the shared part of the merge layers (Keras's _Merge): Add, Multiply, Concatenate. */
#ifndef TFC_KERAS_LAYERS_MERGE_H
#define TFC_KERAS_LAYERS_MERGE_H

#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    int64_t axis; /* Concatenate */
} tfc_merge;

/* "[(None, 3), (None, 4)]" as Keras prints a list of shapes. */
char *tfc_merge_shapes_str(const tfc_shape *in, int n, char *buf, size_t size);
/* Output shape of an elementwise merge: batch dims must agree; the other dims broadcast right-aligned. */
bool tfc_merge_elementwise_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                 tfc_status *st);
bool tfc_merge_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st);
/* Folds op ("AddV2", "Mul") over the inputs after expanding lower-rank ones at axis 1, as Keras. */
bool tfc_merge_elementwise_call(tfc_layer *l, tfc_ctx *ctx, const char *op, tfc_tensor *const *in, int n_in,
                                tfc_tensor **out, tfc_status *st);
/* from_config of the merge layers: common keys, plus "axis" when has_axis is given. */
bool tfc_merge_opts_from_config(const cJSON *cfg, tfc_merge_opts *o, tfc_status *st);

#endif
