/* Op test cases: conv. */
#include "op_test.h"

const op_case op_cases_conv[] = {{0}};
const bad_case bad_cases_conv[] = {{0}};
