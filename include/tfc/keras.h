/* tfc — Keras in C. Umbrella header for tf.keras: layers, models, training, optimizers, losses, metrics,
 * callbacks and datasets. */
#ifndef TFC_KERAS_H
#define TFC_KERAS_H

#include "tfc/keras/layer.h"
#include "tfc/keras/layers.h"
#include "tfc/keras/recurrent.h"
#include "tfc/keras/attention.h"
#include "tfc/keras/conv1d.h"
#include "tfc/keras/conv_transpose.h"
#include "tfc/keras/reshaping.h"
#include "tfc/keras/pooling1d.h"
#include "tfc/keras/merge_layers.h"
#include "tfc/keras/losses.h"
#include "tfc/keras/optimizers.h"
#include "tfc/keras/model.h"
#include "tfc/keras/callbacks.h"
#include "tfc/keras/datasets.h"
#include "tfc/keras/dataset_utils.h"
#include "tfc/keras/mixed_precision.h"
#include "tfc/keras/checkpoint.h"
#include "tfc/keras/saving.h"

#endif
