/* Internal: the dropout mask the recurrent and attention layers multiply by (src/keras/layers/dropout_mask.c). */
#ifndef TFC_KERAS_LAYERS_DROPOUT_MASK_H
#define TFC_KERAS_LAYERS_DROPOUT_MASK_H

#include "keras/keras_internal.h"

/* A mask of shape dims and dtype dt: 1 / (1 - rate) where kept, 0 where dropped, as tf.nn.dropout of ones (uniform
 * values >= rate are kept; the context's random stream). Scope- or caller-owned like an op output. */
tfc_tensor *tfc_keras_dropout_mask(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, double rate,
                                   tfc_status *st);

#endif
