/* NN ops (tensorflow/core/ops/nn_ops.cc). */
#include "ops/op_util.h"

const tfc_op_def *const tfc_ops_nn[] = {NULL};
