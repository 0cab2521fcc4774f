/* Op test cases: indexing. */
#include "op_test.h"

const op_case op_cases_indexing[] = {{0}};
const bad_case bad_cases_indexing[] = {{0}};
