/* Random ops (tensorflow/core/ops/random_ops.cc). */
#include "ops/op_util.h"

const tfc_op_def *const tfc_ops_random[] = {NULL};
