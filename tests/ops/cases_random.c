/* Op test cases: random. */
#include "op_test.h"

const op_case op_cases_random[] = {{0}};
const bad_case bad_cases_random[] = {{0}};
