/* Op test cases: training. The training ops take resource handles, which the registry-driven runner cannot
 * make (it skips ops with resource inputs); tests/unit/test_training_ops.c checks every op's update against
 * TensorFlow's formulas, copy-on-write, dtypes and the errors. */
#include "op_test.h"

const op_case op_cases_training[] = {{0}};
const bad_case bad_cases_training[] = {{0}};
