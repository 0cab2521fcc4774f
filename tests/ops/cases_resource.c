/* Op test cases: resource. */
#include "op_test.h"

const op_case op_cases_resource[] = {{0}};
const bad_case bad_cases_resource[] = {{0}};
