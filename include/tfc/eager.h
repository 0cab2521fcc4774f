/* tfc — eager execution: the context, scopes, the single op entry point, GradientTape, variables and
 * custom gradients (TensorFlow 2's eager runtime and tf.GradientTape). */
#ifndef TFC_EAGER_H
#define TFC_EAGER_H

#include "tfc/op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- context ---------------------------------------------------------------------------------------- */
/* A context's runtime switches: one struct, read once when the context is created (tfc_ctx_new_with_config's
 * config; NULL and tfc_ctx_new: tfc_runtime_config_defaults()), after which each environment variable named below
 * that is set overrides its field ("0" / "1"; a depth out of 1 .. 8 means automatic). Later changes of the
 * environment do not reach an existing context; tfc_ctx_set_config changes its switches. */
typedef struct tfc_runtime_config {
    /* Keras compile's run_eagerly = TFC_DEFAULT: true runs fit/evaluate/predict steps eagerly, false as traced
     * train/test/predict functions. Default true. TFC_KERAS_RUN_EAGERLY */
    bool keras_run_eagerly;
    /* Keras runs Conv2D followed by MaxPooling2D as one fused op in training steps (false: the layers' own
     * ops). Default true. TFC_KERAS_FUSE_CONV_POOL */
    bool keras_fuse_conv_pool;
    /* Keras fit gathers the next batches of arrays on a background thread (false: on the calling thread).
     * Default true. TFC_FIT_PREFETCH */
    bool fit_prefetch;
    /* batches fit's prefetcher gathers ahead, 1 .. 8; 0 (default): from the batch size. TFC_FIT_PREFETCH_DEPTH */
    int fit_prefetch_depth;
} tfc_runtime_config;

typedef struct tfc_ctx_opts {
    int intra_op_threads; /* threads for one op's kernel; 0 = number of cores */
    int64_t seed;         /* global seed (tf.random.set_seed); used when has_seed */
    bool has_seed;
} tfc_ctx_opts;

/* The defaults of tfc_runtime_config (no environment applied). */
TFC_API tfc_runtime_config tfc_runtime_config_defaults(void);
/* The context's switches (borrowed; valid until tfc_ctx_set_config or tfc_ctx_free). */
TFC_API const tfc_runtime_config *tfc_ctx_config(const tfc_ctx *ctx);
/* Replaces the context's switches (as given: the environment is not read again); a depth outside 0 .. 8
 * becomes 0. Steps already traced keep what they were traced with. */
TFC_API void tfc_ctx_set_config(tfc_ctx *ctx, const tfc_runtime_config *config);

/* New eager context. opts may be NULL (defaults). One context is used by one thread at a time. */
TFC_API tfc_ctx *tfc_ctx_new(const tfc_ctx_opts *opts, tfc_status *st);
/* tfc_ctx_new with the runtime switches of config (NULL: the defaults); the environment overrides either (see
 * tfc_runtime_config). config is copied. (A separate constructor, so that tfc_ctx_opts keeps its layout.) */
TFC_API tfc_ctx *tfc_ctx_new_with_config(const tfc_ctx_opts *opts, const tfc_runtime_config *config, tfc_status *st);
TFC_API void tfc_ctx_free(tfc_ctx *ctx);  /* NULL-safe; ends open scopes and frees their tensors */
TFC_API tfc_threadpool *tfc_ctx_pool(tfc_ctx *ctx);
/* tf.random.set_seed: sets the global seed and resets the op-seed counter. */
TFC_API void tfc_ctx_set_seed(tfc_ctx *ctx, int64_t seed);
/* The global seed state (TensorFlow's context seed and its op-seed counter), to save and restore around code
 * that reseeds (Keras fit reseeds per epoch). has_seed false: no global seed (tfc_ctx_seed_restore then clears
 * it). */
typedef struct tfc_ctx_seed_state {
    bool has_seed;
    int64_t seed;
    int64_t op_seed_counter;
} tfc_ctx_seed_state;
/* The context's current seed state (a copy). */
TFC_API tfc_ctx_seed_state tfc_ctx_seed_save(const tfc_ctx *ctx);
/* Puts back a state from tfc_ctx_seed_save (s borrowed); the op seeds drawn next are those drawn after the save. */
TFC_API void tfc_ctx_seed_restore(tfc_ctx *ctx, const tfc_ctx_seed_state *s);

/* ---- scopes (TensorFlow.js's tidy/keep) -------------------------------------------------------------
 * Between tfc_scope_begin and tfc_scope_end every tensor returned by an op belongs to the scope and is
 * released at its end, unless passed to tfc_keep (the caller then owns one reference and must unref it).
 * Scopes nest; without a scope the caller owns every returned tensor. */
TFC_API bool tfc_scope_begin(tfc_ctx *ctx, tfc_status *st);
TFC_API void tfc_scope_end(tfc_ctx *ctx);
/* How many scopes are open (bindings use it: an op result inside a scope belongs to the scope). */
TFC_API int tfc_scope_depth(const tfc_ctx *ctx);
/* Takes t out of every scope: the caller now owns the reference the scope held. Returns t. */
TFC_API tfc_tensor *tfc_keep(tfc_ctx *ctx, tfc_tensor *t);

/* ---- the op entry point ------------------------------------------------------------------------------
 * Runs op `name` (a TensorFlow op name, e.g. "Conv2D") on n_in inputs with n_attrs attrs, writing up to
 * max_out new tensors to out (each caller-owned or scope-owned). Returns the number of outputs, or -1 with
 * st set:
 *   NOT_FOUND        unknown op
 *   INVALID_ARGUMENT wrong input count/dtype, unknown attr, attr out of its allowed set, bad shapes
 *   UNIMPLEMENTED    no kernel for this dtype on this device
 * Ops are recorded on every active tape that watches one of the inputs. */
TFC_API int tfc_execute(tfc_ctx *ctx, const char *name, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                        int n_attrs, tfc_tensor **out, int max_out, tfc_status *st);
/* Same, with an op from tfc_op_lookup (skips the name lookup). */
TFC_API int tfc_execute_op(tfc_ctx *ctx, const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                           int n_attrs, tfc_tensor **out, int max_out, tfc_status *st);
/* Convenience for single-output ops: returns the output or NULL. */
TFC_API tfc_tensor *tfc_emit(tfc_ctx *ctx, const char *name, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                             int n_attrs, tfc_status *st);

/* ---- GradientTape -------------------------------------------------------------------------------------- */
typedef struct tfc_tape tfc_tape;
typedef struct tfc_variable tfc_variable;

typedef enum { TFC_UNCONNECTED_NONE = 0, TFC_UNCONNECTED_ZERO = 1 } tfc_unconnected;

/* Starts recording (tf.GradientTape()). persistent: gradient may be called more than once.
 * watch_accessed_variables: trainable variables read while recording are watched automatically. */
TFC_API tfc_tape *tfc_tape_new(tfc_ctx *ctx, bool persistent, bool watch_accessed_variables, tfc_status *st);
/* Stops recording and frees the tape (NULL-safe). A tape stops recording at its first gradient call unless
 * persistent; tapes nest (the outer tape records the inner tape's gradient computation). */
TFC_API void tfc_tape_free(tfc_tape *tape);
TFC_API void tfc_tape_watch(tfc_tape *tape, tfc_tensor *t);          /* non-float tensors are ignored */
TFC_API void tfc_tape_watch_variable(tfc_tape *tape, tfc_variable *v);
TFC_API void tfc_tape_stop_recording(tfc_tape *tape);               /* tape.stop_recording() ... */
TFC_API void tfc_tape_start_recording(tfc_tape *tape);              /* ... and its end */
/* TensorFlow's context-level record.stop_recording(): until the matching tfc_ctx_start_recording, ops (and
 * variable reads) of this context are recorded on no tape, whichever tapes are active (optimizer updates,
 * metrics). Pauses nest; NULL-safe. Inside a traced function the pause applies to the trace's tapes. */
TFC_API void tfc_ctx_stop_recording(tfc_ctx *ctx);
TFC_API void tfc_ctx_start_recording(tfc_ctx *ctx);
/* Gradient of sum(target) with respect to each source (tensors in src_t, n_t of them, then variables in
 * src_v, n_v). grads receives n_t + n_v new tensors (caller/scope owned); an unconnected source gets NULL
 * (TFC_UNCONNECTED_NONE) or zeros (TFC_UNCONNECTED_ZERO); so does a source the tape never watched, and an
 * integer source (never differentiated: NULL, or zeros of its dtype under TFC_UNCONNECTED_ZERO, as TensorFlow).
 * FAILED_PRECONDITION when a non-persistent tape is asked twice; LOOKUP errors name the op lacking a
 * gradient ("No gradient defined for operation 'X'" as LookupError -> NOT_FOUND). */
TFC_API bool tfc_tape_gradient(tfc_tape *tape, tfc_tensor *target, tfc_tensor *const *src_t, int n_t,
                               tfc_variable *const *src_v, int n_v, tfc_unconnected unconnected, tfc_tensor **grads,
                               tfc_status *st);
/* Same with several targets (their gradients are summed) and optional output_gradients (may be NULL or
 * hold NULLs: ones). */
TFC_API bool tfc_tape_gradient_n(tfc_tape *tape, tfc_tensor *const *targets, int n_targets,
                                 tfc_tensor *const *output_gradients, tfc_tensor *const *src_t, int n_t,
                                 tfc_variable *const *src_v, int n_v, tfc_unconnected unconnected, tfc_tensor **grads,
                                 tfc_status *st);

/* tf.custom_gradient: runs fn (not recorded) and records its outputs so that their gradient is computed by
 * grad. fn receives the inputs and writes n_out new tensors; grad receives the upstream gradients (one per
 * output) and writes one gradient (or NULL) per input; grad's own ops are recorded on outer tapes, so it
 * may be differentiated again. */
typedef bool (*tfc_custom_fwd_fn)(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                                  int n_out, tfc_status *st);
typedef bool (*tfc_custom_grad_fn)(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in,
                                   tfc_tensor *const *out, int n_out, tfc_tensor *const *dy, tfc_tensor **dx,
                                   tfc_status *st);
/* Writes n_out new tensors to out (owned by the caller or the current scope) and returns true; false with st set:
 * INVALID_ARGUMENT for more than TFC_MAX_IO inputs or outputs, or the error fn (later, grad) reports. user is
 * passed to fn and grad and must outlive every tape that recorded the call. */
TFC_API bool tfc_custom_gradient(tfc_ctx *ctx, tfc_custom_fwd_fn fn, tfc_custom_grad_fn grad, void *user,
                                 tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out, tfc_status *st);

/* ---- variables (tf.Variable on a resource handle) ------------------------------------------------------
 * A variable owns a copy-on-write value; reads return the current value (shared until the next assign).
 * dtype and shape are fixed by the initial value; assigning another dtype or shape is INVALID_ARGUMENT. */
TFC_API tfc_variable *tfc_variable_new(tfc_ctx *ctx, tfc_tensor *initial_value, bool trainable, const char *name,
                                       tfc_status *st);
TFC_API void tfc_variable_free(tfc_variable *v);  /* NULL-safe; the resource lives while handles refer to it */
TFC_API tfc_tensor *tfc_variable_handle(tfc_variable *v);  /* borrowed resource handle (dtype TFC_RESOURCE) */
TFC_API tfc_variable *tfc_variable_from_handle(const tfc_tensor *handle); /* borrowed; NULL if not a handle */
TFC_API const char *tfc_variable_name(const tfc_variable *v);
TFC_API bool tfc_variable_trainable(const tfc_variable *v);
TFC_API void tfc_variable_set_trainable(tfc_variable *v, bool trainable);
TFC_API tfc_dtype tfc_variable_dtype(const tfc_variable *v);
TFC_API const tfc_shape *tfc_variable_shape(const tfc_variable *v);
/* ReadVariableOp: recorded on tapes (watched automatically when trainable). */
TFC_API tfc_tensor *tfc_variable_read(tfc_ctx *ctx, tfc_variable *v, tfc_status *st);
/* The current value without an op (not recorded); borrowed, valid until the next assign. */
TFC_API const tfc_tensor *tfc_variable_value(const tfc_variable *v);
TFC_API bool tfc_variable_assign(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *value, tfc_status *st);
TFC_API bool tfc_variable_assign_add(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *delta, tfc_status *st);
TFC_API bool tfc_variable_assign_sub(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *delta, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
