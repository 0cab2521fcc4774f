/* tfc — op definitions, kernels and gradients (DESIGN §3). An op is declared once with TensorFlow's
 * name, argument and attr spec strings; one definition serves eager execution, the tape and graphs.
 *
 * Spec syntax (TensorFlow's REGISTER_OP syntax):
 *   inputs/outputs: comma-separated "name: T" (a type attr), "name: int32" (fixed dtype),
 *                   "name: N * T" (list of N tensors of type T), "name: Tlist" (list(type) attr)
 *   attrs:          comma-separated "name: type" with type one of int, float, bool, string, type, shape,
 *                   tensor, list(int), list(float), list(type), list(string); allowed sets in braces
 *                   ("T: {float, double}" or "padding: {'SAME', 'VALID'}"), lower bounds ("N: int >= 1"),
 *                   defaults ("keep_dims: bool = false", "data_format: string = 'NHWC'",
 *                   "dilations: list(int) = [1, 1, 1, 1]", "Tidx: {int32, int64} = int32", "shape: shape = unknown" for
 *                   an unknown-rank shape). Function attrs: "f: func", "branches: list(func)". */
#ifndef TFC_OP_H
#define TFC_OP_H

#include "tfc/attr.h"
#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_ctx tfc_ctx;
typedef struct tfc_op_def tfc_op_def;

/* ---- shape functions --------------------------------------------------------------------------------
 * Validate inputs and attrs (the op layer validates, kernels may assume valid input) and set output
 * shapes. Inputs are flattened (list args expanded). in_values[i] is the input's value when known (always
 * in eager mode; for constants in graphs), else NULL. out_dtypes are pre-filled from the output spec; a
 * shape fn may leave dims -1 when they depend on data (the kernel then allocates that output). */
typedef struct tfc_shape_ctx {
    const tfc_op_def *op;
    const tfc_attrs *attrs;
    int n_in;
    const tfc_shape *in_shapes;
    const tfc_dtype *in_dtypes;
    tfc_tensor *const *in_values;
    int n_out;
    tfc_shape *out_shapes;
    tfc_dtype *out_dtypes;
} tfc_shape_ctx;
typedef bool (*tfc_shape_fn)(tfc_shape_ctx *c, tfc_status *st);

/* ---- kernels ----------------------------------------------------------------------------------------
 * out[i] is allocated by the framework when the shape fn gave a fully known shape, else NULL and the
 * kernel must set it (tfc_kernel_alloc_output). Inputs are valid per the shape fn. */
typedef struct tfc_kernel_ctx {
    tfc_ctx *ctx;
    const tfc_op_def *op;
    const tfc_attrs *attrs;
    int n_in;
    tfc_tensor *const *in;
    int n_out;
    tfc_tensor **out;
    tfc_threadpool *pool;
} tfc_kernel_ctx;
typedef bool (*tfc_kernel_fn)(tfc_kernel_ctx *k, tfc_status *st);

/* Allocates out[i] with dtype out_dtypes and the given shape (uninitialised data). */
TFC_API tfc_tensor *tfc_kernel_alloc_output(tfc_kernel_ctx *k, int i, const int64_t *dims, int rank,
                                            tfc_status *st);
/* Makes out[i] share input j's buffer (Identity, Reshape, ...), with the given shape. */
TFC_API bool tfc_kernel_forward_input(tfc_kernel_ctx *k, int j, int i, const tfc_shape *shape, tfc_status *st);

/* ---- gradients --------------------------------------------------------------------------------------
 * Symbol-to-symbol: a gradient function emits ops with tfc_execute (so it works on tapes, in graphs and
 * is itself differentiable). dy[i] is the upstream gradient of output i (zeros when that output is
 * unused, never NULL for float outputs unless the op's grad_null_dy has bit i; NULL for non-differentiable outputs). Set dx[i] for each input
 * that has a gradient; leave NULL for none. Temporaries are released by the caller's scope. */
typedef struct tfc_grad_ctx {
    tfc_ctx *ctx;
    const tfc_op_def *op;
    const tfc_attrs *attrs;
    int n_in;
    tfc_tensor *const *in;
    int n_out;
    tfc_tensor *const *out;
    tfc_tensor *const *dy;
    tfc_tensor **dx;
    /* need_dx[i] false: no gradient of input i is wanted (it is not on a path from a source), so the
     * function may skip computing it (TensorFlow's skip_input_indices). NULL means all are wanted. */
    const bool *need_dx;
} tfc_grad_ctx;
#define TFC_GRAD_NEEDS(g, i) (!(g)->need_dx || (g)->need_dx[i])
typedef bool (*tfc_grad_fn)(tfc_grad_ctx *g, tfc_status *st);

struct tfc_op_def {
    const char *name;
    const char *inputs;
    const char *outputs;
    const char *attrs;
    tfc_shape_fn shape;
    tfc_grad_fn grad;      /* NULL: no gradient registered (TensorFlow's "no gradient") */
    bool not_differentiable; /* TensorFlow's NotDifferentiable: gradient is none, silently */
    bool stateful;         /* random ops, variable ops: never folded or deduplicated */
    /* bit i set: the gradient function takes dy[i] == NULL when output i received no gradient (instead of a
     * ZerosLike of it the tape would otherwise build), e.g. the cross-entropy ops' backprop output */
    uint32_t grad_null_dy;
};

/* Registers a user op (copied by pointer: def must outlive the process). ALREADY_EXISTS on name clash. */
TFC_API bool tfc_op_register(const tfc_op_def *def, tfc_status *st);
/* Registers a kernel for an op on a device ("CPU"). The kernel dispatches on dtype itself and returns
 * UNIMPLEMENTED for dtypes it lacks. A later registration for the same (op, device) replaces the earlier. */
TFC_API bool tfc_kernel_register(const char *op_name, const char *device, tfc_kernel_fn fn, tfc_status *st);

typedef struct tfc_op tfc_op;  /* a registered, parsed op */
TFC_API const tfc_op *tfc_op_lookup(const char *name);
TFC_API const tfc_op_def *tfc_op_get_def(const tfc_op *op);
TFC_API int tfc_op_count(void);
TFC_API const tfc_op *tfc_op_at(int i); /* registration order; NULL past the end */
/* Dtypes the op accepts for its first type attr (all dtypes of a fixed-type op); returns the count. */
TFC_API int tfc_op_dtypes(const tfc_op *op, tfc_dtype *out, int max);
TFC_API bool tfc_op_has_kernel(const tfc_op *op, const char *device);
TFC_API bool tfc_op_has_gradient(const tfc_op *op);

/* ---- common shape functions, reusable by ops ---- */
TFC_API bool tfc_shape_same_as_input0(tfc_shape_ctx *c, tfc_status *st);
/* NumPy broadcasting of inputs 0 and 1 into output 0 (INVALID_ARGUMENT "Incompatible shapes: [..] vs. [..]"). */
TFC_API bool tfc_shape_broadcast_binary(tfc_shape_ctx *c, tfc_status *st);
TFC_API bool tfc_shape_scalar(tfc_shape_ctx *c, tfc_status *st);
/* Broadcast two shapes; false with INVALID_ARGUMENT naming `op`. */
TFC_API bool tfc_broadcast_shapes(const tfc_shape *a, const tfc_shape *b, tfc_shape *out, const char *op,
                                  tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
