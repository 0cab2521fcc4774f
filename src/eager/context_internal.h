/* Internal: the eager context, scopes and tape hooks. */
#ifndef TFC_EAGER_CONTEXT_INTERNAL_H
#define TFC_EAGER_CONTEXT_INTERNAL_H

#include "core/tensor_internal.h"
#include "ops/registry.h"
#include "tfc/eager.h"

typedef struct tfc_scope {
    tfc_tensor **items;
    int64_t n, cap;
} tfc_scope;

#define TFC_MAX_TAPES 32

struct tfc_ctx {
    tfc_threadpool *pool;
    tfc_runtime_config config; /* read once at creation (context_config.c) */
    int64_t global_seed;
    bool has_seed;
    int64_t op_seed_counter; /* TensorFlow's per-op seed counter under a global seed */
    tfc_scope *scopes;
    int n_scopes, cap_scopes;
    tfc_tape *tapes[TFC_MAX_TAPES]; /* active tapes, innermost last */
    int n_tapes;
    int record_paused; /* > 0 while custom_gradient runs its forward function */
    /* Graph tracing (src/graph): while a trace is active, tfc_execute_op hands every op to trace_op, which adds a
     * node and returns symbolic tensors. NULL when eager (the fast path tests only `trace`). */
    void *trace;
    int (*trace_op)(tfc_ctx *ctx, const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                    int n_attrs, tfc_tensor **out, int max_out, tfc_status *st);
    /* The context's function library (src/graph), freed with the context through flib_free. */
    void *flib;
    void (*flib_free)(void *flib);
    unsigned optimizer_off; /* graph passes switched off (bit per pass of tfc_optimizer_opts; 0 = all on) */
    struct tfc_kernel_cache *kcache; /* kernel instances of eager calls (kernel_cache.h); NULL until needed */
    int inter_op_threads;   /* graph runs: threads for independent nodes (0: the pool's; 1: one node at a time) */
};

/* The infer half of an op call (validate, resolve attrs, output dtypes and shapes): shared by eager dispatch
 * and the tracer. in_values are the inputs themselves (symbolic inputs have no data). out_shapes may keep
 * unknown dims. Returns the output count or -1 with st set. */
int tfc_op_infer(const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                 tfc_attrs *ra, tfc_dtype *out_dtypes, tfc_shape *out_shapes, int max_out, tfc_status *st);

/* Registers t in the innermost scope (if any). False when out of memory (t is then released). */
bool tfc_scope_track(tfc_ctx *ctx, tfc_tensor *t, tfc_status *st);
/* Ends the innermost scope but moves keep[0..n) to the enclosing scope (or to the caller). When the enclosing
 * scope cannot grow (RESOURCE_EXHAUSTED) the kept tensors are released too and false is returned. */
bool tfc_scope_end_keep(tfc_ctx *ctx, tfc_tensor *const *keep, int n, tfc_status *st);

/* Tape hook called by execute after an op ran: records it on every active tape that watches an input. */
bool tfc_tape_record_op(tfc_ctx *ctx, const tfc_op *op, const tfc_attrs *attrs, tfc_tensor *const *in, int n_in,
                        tfc_tensor *const *out, int n_out, tfc_status *st);
/* True when some active tape is recording and watches one of the inputs. */
bool tfc_tape_should_record(tfc_ctx *ctx, tfc_tensor *const *in, int n_in);
/* True when exactly one tape is active, it records, is not persistent and nothing pauses recording (a Keras
 * training step's tape): its gradient runs once and no outer tape records that gradient's ops. */
bool tfc_tape_single_plain(const tfc_ctx *ctx);
/* context_config.c: ctx->config from the given switches (NULL: defaults) and the environment */
void tfc_ctx_config_init(tfc_ctx *ctx, const tfc_runtime_config *given);
/* tfc_variable_read without running ReadVariableOp where no tape is active (nothing to record; inference
 * paths, where the op's dispatch is a few percent of a small model's call): the same tensor (sharing the
 * value's buffer), tracked in the innermost scope as op results are. With a tape, or for an uninitialised
 * variable, it runs the op (and gives its error). */
tfc_tensor *tfc_variable_read_untaped(tfc_ctx *ctx, tfc_variable *v, tfc_status *st);
/* Called when ReadVariableOp reads v: tapes that watch accessed variables watch v. */
void tfc_tape_variable_accessed(tfc_ctx *ctx, tfc_variable *v);

#endif
