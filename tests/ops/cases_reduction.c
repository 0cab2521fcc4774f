/* Op test cases: reduction. */
#include "op_test.h"

const op_case op_cases_reduction[] = {{0}};
const bad_case bad_cases_reduction[] = {{0}};
