/* conv ops. */
#include "ops/op_util.h"

const tfc_op_def *const tfc_ops_conv[] = {NULL};
