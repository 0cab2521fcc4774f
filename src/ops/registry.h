/* Internal: parsed op definitions and resolved attribute sets. */
#ifndef TFC_OPS_REGISTRY_H
#define TFC_OPS_REGISTRY_H

#include "tfc/op.h"

#define TFC_MAX_ARGS 12 /* ResourceApplyAdamWithAmsgrad has 11 inputs */
#define TFC_MAX_ATTRS 16
#define TFC_MAX_ALLOWED 16
#define TFC_MAX_OPS 512 /* registered ops (built-in and user); op->index is below it */
#define TFC_MAX_IO 64 /* most flattened inputs/outputs of one op call (AddN, ConcatV2, Pack, Split) */

typedef enum { TFC_ARG_TYPE_ATTR, TFC_ARG_FIXED, TFC_ARG_N_TYPE, TFC_ARG_TYPE_LIST } tfc_arg_kind;

typedef struct tfc_arg_spec {
    char name[32];
    tfc_arg_kind kind;
    tfc_dtype fixed;   /* TFC_ARG_FIXED; also N * <fixed type> */
    int type_attr;     /* index of the type / list(type) attr, or -1 */
    int number_attr;   /* index of the int attr giving the list length (N * T), or -1 */
} tfc_arg_spec;

typedef struct tfc_attr_spec {
    char name[32];
    tfc_attr_kind kind;
    bool has_default;
    tfc_attr dflt; /* storage below */
    int64_t dflt_ints[TFC_MAX_RANK];
    double dflt_floats[4];
    char dflt_str[32];
    int n_types;
    tfc_dtype types[TFC_MAX_ALLOWED]; /* allowed set for type / list(type); 0 = any */
    int n_strs;
    char strs[8][16];                 /* allowed set for string attrs */
    bool has_min;
    int64_t min;
} tfc_attr_spec;

struct tfc_op {
    const tfc_op_def *def;
    int index;
    int n_in_args, n_out_args, n_attrs;
    tfc_arg_spec in[TFC_MAX_ARGS], out[TFC_MAX_ARGS];
    tfc_attr_spec attrs[TFC_MAX_ATTRS];
};

/* Resolved attrs of one call: a[i] corresponds to op->attrs[i] (kind NONE when absent). */
struct tfc_attrs {
    const tfc_op *op;
    int n;
    tfc_attr a[TFC_MAX_ATTRS];
    tfc_dtype type_lists[TFC_MAX_IO]; /* storage for inferred list(type) attrs */
    void *owned;                      /* deep-copy storage (tfc_attrs_clone), freed by tfc_attrs_free */
};

/* Parses def into op; INVALID_ARGUMENT naming the op and the bad spec on syntax errors. */
bool tfc_op_parse(const tfc_op_def *def, tfc_op *op, tfc_status *st);
/* Initialises the registry once (built-in ops and kernels). Safe from any thread. */
void tfc_registry_init(void);
int tfc_op_attr_index(const tfc_op *op, const char *name);

/* Resolves a call: matches inputs to args (inferring type and number attrs), applies the caller's attrs
 * over defaults, checks allowed sets, and computes output count and dtypes. */
bool tfc_resolve_call(const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                      tfc_attrs *out_attrs, int *n_out, tfc_dtype *out_dtypes, tfc_status *st);
/* Deep copy of a resolved attr set (for tapes and graphs); NULL when out of memory. */
tfc_attrs *tfc_attrs_clone(const tfc_attrs *a);
void tfc_attrs_free(tfc_attrs *a);
/* Equality of two attr values of one kind (tensors by dtype, shape and data; floats by value). */
bool tfc_attr_equal(const tfc_attr *a, const tfc_attr *b);
/* Two resolved attr sets of the same op with equal values. */
bool tfc_attrs_equal(const tfc_attrs *a, const tfc_attrs *b);
/* A hash consistent with tfc_attrs_equal. */
uint64_t tfc_attrs_hash(const tfc_attrs *a);

#endif
