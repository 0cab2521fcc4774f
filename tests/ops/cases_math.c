/* Op test cases: math. */
#include "op_test.h"

const op_case op_cases_math[] = {{0}};
const bad_case bad_cases_math[] = {{0}};
