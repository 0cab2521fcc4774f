/* Op test cases: array. */
#include "op_test.h"

const op_case op_cases_array[] = {{0}};
const bad_case bad_cases_array[] = {{0}};
