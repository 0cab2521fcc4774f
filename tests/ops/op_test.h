/* Registry-driven op tests. Each op family adds a table of cases in tests/ops/cases_<family>.c
 * (`const op_case op_cases_<family>[]`, ended by {0}) and of bad-input cases
 * (`const bad_case bad_cases_<family>[]`, ended by {0}); case_list.h lists the families.
 *
 * For every case the runner:
 *  - kernels: for each dtype the op allows for its first type attr (or case.dtypes) that has a kernel,
 *    draws random inputs, runs the op in that dtype and in float64 (the reference: same values, cast), and
 *    compares every output within the dtype's tolerance (float32 1e-5, half 1e-2, bfloat16 4e-2 relative,
 *    ints exact) scaled by case.tol;
 *  - gradients (case.grad): in float64, checks the tape gradient of sum(w * op(x)) for random w against
 *    central finite differences for every input not marked no_grad;
 *  - bad_input: runs each bad case and checks the status code and that the message contains every
 *    expected substring (the op name and the offending values).
 * Every op in the registry must appear in at least one case (checked: an op without cases fails). */
#ifndef TFC_TESTS_OP_TEST_H
#define TFC_TESTS_OP_TEST_H

#include "tfc/tfc.h"

typedef struct op_input {
    tfc_dtype dtype;     /* 0: the case's dtype under test ("T"); else fixed (e.g. TFC_INT32 for axes) */
    int rank;
    int64_t dims[TFC_MAX_RANK];
    double lo, hi;       /* uniform random range; lo == hi == 0 means [-1, 1] */
    bool integer;        /* round random values to integers (int dtypes are always integers) */
    int n_vals;          /* > 0: fixed values instead of random ones (shapes, axes, indices) */
    double vals[16];
    bool no_grad;        /* not differentiated (indices, shapes, axes) */
    /* TFC_STRING inputs: n_vals strings (cycled over the elements); str_lens NULL for NUL-terminated. */
    const char *const *strs;
    const size_t *str_lens;
} op_input;

typedef struct op_case {
    const char *op;
    const char *label;   /* what the case exercises, for messages */
    int n_in;
    op_input in[8];
    int n_attrs;
    tfc_attr attrs[8];
    const tfc_dtype *dtypes; /* 0-terminated list; NULL: every dtype the op allows */
    bool grad;               /* check gradients in float64 */
    bool no_reference;       /* outputs are not comparable across dtypes (random ops): only run */
    double tol;              /* tolerance multiplier (0 = 1) */
    /* Ops whose T attr is not inferable from inputs (Cast's DstT, Fill-like ops): the attr name to set to
     * the dtype under test, e.g. "dtype". */
    const char *dtype_attr;
} op_case;

typedef struct bad_case {
    const char *op;
    const char *label;
    int n_in;
    op_input in[8];
    int n_attrs;
    tfc_attr attrs[8];
    tfc_dtype dtype;         /* dtype for inputs with dtype 0 (0 = float32) */
    tfc_code code;           /* expected code */
    const char *expect[4];   /* substrings the message must contain (NULL-terminated) */
} bad_case;

/* Shorthand for input specs. */
#define IN_T(r, ...) {.rank = (r), .dims = {__VA_ARGS__}}
#define IN_RANGE(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
#define IN_I32(r, n, ...) {.dtype = TFC_INT32, .rank = (r), .dims = {n}, .n_vals = (n), .vals = {__VA_ARGS__}, .no_grad = true}
#define IN_I64(r, n, ...) {.dtype = TFC_INT64, .rank = (r), .dims = {n}, .n_vals = (n), .vals = {__VA_ARGS__}, .no_grad = true}
#define IN_SCALAR_I32(v) {.dtype = TFC_INT32, .rank = 0, .n_vals = 1, .vals = {v}, .no_grad = true}

#endif
