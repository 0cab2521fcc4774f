/* Op test cases: linalg. */
#include "op_test.h"

const op_case op_cases_linalg[] = {{0}};
const bad_case bad_cases_linalg[] = {{0}};
