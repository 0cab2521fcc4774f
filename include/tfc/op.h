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
 * A kernel sees its call through an opaque context read with the accessors below (TensorFlow's
 * OpKernelContext), so fields (a stream, a device allocator) can be added without breaking the ABI.
 * Output i is allocated by the framework when the shape fn gave a fully known shape, else it is NULL and the
 * kernel must set it (tfc_kernel_alloc_output). Inputs are valid per the shape fn. */
typedef struct tfc_kernel_ctx tfc_kernel_ctx;
typedef struct tfc_device tfc_device;
typedef bool (*tfc_kernel_fn)(tfc_kernel_ctx *k, tfc_status *st);

/* Number of (flattened) inputs of the call. */
TFC_API int tfc_kernel_num_inputs(const tfc_kernel_ctx *k);
/* Input i (borrowed, valid during the call); NULL when i is out of range or while an instance is being
 * created (no tensors exist yet then: use tfc_kernel_input_dtype). */
TFC_API tfc_tensor *tfc_kernel_input(const tfc_kernel_ctx *k, int i);
/* Dtype of input i, also while an instance is created; TFC_INVALID_DTYPE when i is out of range. */
TFC_API tfc_dtype tfc_kernel_input_dtype(const tfc_kernel_ctx *k, int i);
/* Number of outputs of the call. */
TFC_API int tfc_kernel_num_outputs(const tfc_kernel_ctx *k);
/* Output i (borrowed; NULL until allocated when its shape depends on data, or when i is out of range). */
TFC_API tfc_tensor *tfc_kernel_output(const tfc_kernel_ctx *k, int i);
/* The call's resolved attrs (borrowed, valid during the call): read them with tfc_attrs_int etc. */
TFC_API const tfc_attrs *tfc_kernel_attrs(const tfc_kernel_ctx *k);
/* The op being run. */
TFC_API const tfc_op_def *tfc_kernel_op(const tfc_kernel_ctx *k);
/* The intra-op thread pool the kernel may split work on (tfc_threadpool_parallel_for); may be NULL. */
TFC_API tfc_threadpool *tfc_kernel_pool(const tfc_kernel_ctx *k);
/* The eager context the call runs under (borrowed). */
TFC_API tfc_ctx *tfc_kernel_context(const tfc_kernel_ctx *k);
/* The device the kernel runs on (include/tfc/device.h); the CPU device for every kernel today. */
TFC_API const tfc_device *tfc_kernel_device(const tfc_kernel_ctx *k);
/* The kernel instance's state: what its create function stored (tfc_kernel_def); NULL for plain kernels. */
TFC_API void *tfc_kernel_state(const tfc_kernel_ctx *k);

/* Allocates output i with the op's output dtype and the given shape (uninitialised data). */
TFC_API tfc_tensor *tfc_kernel_alloc_output(tfc_kernel_ctx *k, int i, const int64_t *dims, int rank,
                                            tfc_status *st);
/* Makes output i share input j's buffer (Identity, Reshape, ...), with the given shape (NULL: input j's). */
TFC_API bool tfc_kernel_forward_input(tfc_kernel_ctx *k, int j, int i, const tfc_shape *shape, tfc_status *st);

/* ---- kernel instances (TensorFlow's OpKernel construction; tensorflow/c/kernels.h's TF_NewKernelBuilder) ----
 * create runs once per (op, attrs, device, input dtypes): it parses the attrs and sets *state to what the
 * kernel keeps between calls (a random generator, a transformed filter), read back by compute with
 * tfc_kernel_state. While create runs, tfc_kernel_input is NULL and tfc_kernel_input_dtype gives the dtypes.
 * create returns false with st set on bad attrs; destroy(state) frees it when the instance goes (an eager
 * context's instance cache evicts it, is cleared by tfc_ctx_set_seed or freed; a graph function's plan is
 * freed). An instance may be computed from several threads at once: state it changes needs its own lock. */
typedef bool (*tfc_kernel_create_fn)(tfc_kernel_ctx *k, void **state, tfc_status *st);
typedef void (*tfc_kernel_destroy_fn)(void *state);
#define TFC_KERNEL_MAX_DTYPES 16
typedef struct tfc_kernel_def {
    const char *op;                 /* a registered op's name */
    const char *device;             /* device type: "CPU" (NULL means "CPU") */
    tfc_kernel_fn compute;          /* required */
    tfc_kernel_create_fn create;    /* NULL: a plain kernel without state */
    tfc_kernel_destroy_fn destroy;  /* may be NULL */
    /* Dtype constraint (TensorFlow's TypeConstraint): NULL for any; else this kernel serves only calls whose
     * type attr `type_attr` is one of dtypes[0..n_dtypes) */
    const char *type_attr;
    int n_dtypes;
    tfc_dtype dtypes[TFC_KERNEL_MAX_DTYPES];
} tfc_kernel_def;

/* Registers a kernel (def is copied). A call picks the most recent registration of its (op, device) whose
 * dtype constraint admits it, so a later registration with the same constraint replaces the earlier one.
 * NOT_FOUND for an unregistered op or a type_attr the op lacks; UNIMPLEMENTED for an unknown device;
 * INVALID_ARGUMENT for a NULL compute or n_dtypes outside [0, TFC_KERNEL_MAX_DTYPES]. */
TFC_API bool tfc_kernel_register_def(const tfc_kernel_def *def, tfc_status *st);

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
/* Registers a plain kernel for an op on a device ("CPU"), for every dtype: the kernel dispatches on dtype
 * itself and returns UNIMPLEMENTED for dtypes it lacks. A later registration for the same (op, device)
 * replaces the earlier. Same as tfc_kernel_register_def with only op, device and compute set. */
TFC_API bool tfc_kernel_register(const char *op_name, const char *device, tfc_kernel_fn fn, tfc_status *st);

typedef struct tfc_op tfc_op;  /* a registered, parsed op */
TFC_API const tfc_op *tfc_op_lookup(const char *name);
TFC_API const tfc_op_def *tfc_op_get_def(const tfc_op *op);
TFC_API int tfc_op_count(void);
TFC_API const tfc_op *tfc_op_at(int i); /* registration order; NULL past the end */
/* Dtypes the op accepts for its first type attr (all dtypes of a fixed-type op); returns the count. */
TFC_API int tfc_op_dtypes(const tfc_op *op, tfc_dtype *out, int max);
/* True when the device type ("CPU"; NULL means "CPU") has some kernel registered for op. */
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
