/* Families of op test cases: one line per tests/ops/cases_<family>.c. */
#define OP_CASE_FAMILIES \
    OP_CASE_FAMILY(math) \
    OP_CASE_FAMILY(reduction) \
    OP_CASE_FAMILY(linalg) \
    OP_CASE_FAMILY(array) \
    OP_CASE_FAMILY(indexing) \
    OP_CASE_FAMILY(nn) \
    OP_CASE_FAMILY(conv) \
    OP_CASE_FAMILY(fused) \
    OP_CASE_FAMILY(fused_pool) \
    OP_CASE_FAMILY(random) \
    OP_CASE_FAMILY(resource) \
    OP_CASE_FAMILY(training) \
    OP_CASE_FAMILY(parsing) \
    OP_CASE_FAMILY(image) \
    OP_CASE_FAMILY(string) \

