/* Op test cases: nn. */
#include "op_test.h"

const op_case op_cases_nn[] = {{0}};
const bad_case bad_cases_nn[] = {{0}};
