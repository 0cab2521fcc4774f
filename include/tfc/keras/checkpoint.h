/* tfc — Keras models and optimizers in TensorFlow checkpoints (tf.train.Checkpoint(model=..., optimizer=...)),
 * with the object structure tf-keras gives them, so checkpoints move both ways between tfc and TensorFlow:
 * "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE", "optimizer/_iterations/...", the Keras
 * 2.11+ optimizers' "optimizer/_variables/<i>/..." or OptimizerV2's slot variables
 * ("model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/..."). */
#ifndef TFC_KERAS_CHECKPOINT_H
#define TFC_KERAS_CHECKPOINT_H

#include "tfc/checkpoint.h"
#include "tfc/keras/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The trackable of model m: "layer-<i>" for each of model.layers, "layer_with_weights-<k>" for the k-th layer
 * with weights, each layer's weights under their attribute names ("kernel", "bias", "gamma", ...), nested
 * models recursively. The variables are borrowed from m: m must outlive the trackable's use. Returns a new
 * reference (tfc_trackable_unref), or NULL when out of memory. */
TFC_API tfc_trackable *tfc_model_trackable(tfc_model *m, tfc_status *st);
/* The trackable of optimizer o (a LossScaleOptimizer: the optimizer it wraps) as its Keras family structures it:
 * Keras 2.11+ optimizers "_iterations", "_learning_rate", "_variables/<i>" and Adam's "_momentums" /
 * "_velocities"; OptimizerV2 "iter", its hyper-parameters as float32 variables and slot_variables for m's
 * trainable weights. Hyper-parameters are written from o before each save and read back into o after a
 * restore (not with a learning-rate schedule). m (may be NULL) gives the variables slots belong to. Returns a
 * new reference, or NULL with st set. */
TFC_API tfc_trackable *tfc_optimizer_trackable(tfc_optimizer *o, tfc_model *m, tfc_status *st);
/* tf.train.Checkpoint(model=m, optimizer=m.optimizer) (the optimizer only when m is compiled). When the
 * optimizer has no variables yet they are created first (optimizer.build(model.trainable_variables): zero slots,
 * weights and iterations unchanged), so that a restore fills them. Free with tfc_checkpoint_free (before m). */
TFC_API tfc_checkpoint *tfc_model_checkpoint_new(tfc_model *m, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
