/* tf.function in C (tfc/function.h): signatures, the trace cache, retracing, and calls of concrete functions. */
#include <stdio.h>
#include <string.h>

#include "core/variable.h"
#include "graph/exec.h"
#include "graph/functional.h"
#include "graph/trace.h"
#include "tfc/function.h"

/* TensorFlow warns when this many calls in a row traced (its frequent-tracing detector). */
#define RETRACE_WARN 5

struct tfc_concrete_function {
    tfc_function *owner;
    tfc_gfunc *fn;          /* in the context's library */
    int n_inputs;
    tfc_tensor_spec *specs; /* traced input specs */
    tfc_tensor **caps;      /* fed after the inputs: captured tensors (variables' handles, large tensors) */
    int n_caps;
};

struct tfc_function {
    tfc_ctx *ctx;
    tfc_function_fn fn;
    void *user;
    char *name;
    tfc_tensor_spec *sig;
    char **sig_names;
    int n_sig;
    bool has_sig, reduce_retracing;
    tfc_concrete_function **cfs;
    int n_cfs, cap_cfs;
    int tracing_count;
    unsigned history; /* bit i: the i-th most recent call traced */
    int n_history;
    bool warned;
};

static char *spec_str(const tfc_tensor_spec *s, const char *name, char *buf, size_t size) {
    char sh[TFC_SHAPE_STR];
    snprintf(buf, size, "TensorSpec(shape=%s, dtype=tf.%s, name=%s%s%s)", tfc_shape_str(&s->shape, sh, sizeof sh),
             tfc_dtype_name(s->dtype), name ? "'" : "", name ? name : "None", name ? "'" : "");
    return buf;
}

static bool spec_accepts(const tfc_tensor_spec *s, tfc_dtype dt, const tfc_shape *shape) {
    if (s->dtype != dt) return false;
    if (s->shape.rank < 0) return true;
    if (s->shape.rank != shape->rank) return false;
    for (int i = 0; i < shape->rank; i++)
        if (s->shape.dims[i] >= 0 && s->shape.dims[i] != shape->dims[i]) return false;
    return true;
}

static bool check_specs(const tfc_shape *shape, int rank_ok) { return rank_ok && shape->rank <= TFC_MAX_RANK; }

tfc_function *tfc_function_new(tfc_ctx *ctx, tfc_function_fn fn, void *user, const tfc_function_opts *opts,
                               tfc_status *st) {
    if (!ctx || !fn) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.function: context and function are required");
        return NULL;
    }
    tfc_function *f = tfc_calloc(1, sizeof *f);
    if (!f) goto oom;
    f->ctx = ctx;
    f->fn = fn;
    f->user = user;
    if (!(f->name = tfc_strdup(opts && opts->name ? opts->name : "function"))) goto oom;
    if (opts && opts->input_signature) {
        if (opts->n_input_signature < 0 || opts->n_input_signature > TFC_MAX_IO) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.function: input_signature has %d specs, outside [0, %d]",
                           opts->n_input_signature, TFC_MAX_IO);
            tfc_function_free(f);
            return NULL;
        }
        f->has_sig = true;
        f->n_sig = opts->n_input_signature;
        f->sig = tfc_calloc((size_t)f->n_sig + 1, sizeof *f->sig);
        f->sig_names = tfc_calloc((size_t)f->n_sig + 1, sizeof *f->sig_names);
        if (!f->sig || !f->sig_names) goto oom;
        for (int i = 0; i < f->n_sig; i++) {
            const tfc_tensor_spec *s = &opts->input_signature[i];
            if (!tfc_dtype_is_valid(s->dtype) || !check_specs(&s->shape, s->shape.rank >= -1)) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.function: input_signature[%d] has an invalid dtype or rank", i);
                tfc_function_free(f);
                return NULL;
            }
            f->sig[i] = *s;
            const char *nm = opts->input_names ? opts->input_names[i] : NULL;
            if (nm && !(f->sig_names[i] = tfc_strdup(nm))) goto oom;
        }
    }
    f->reduce_retracing = opts && opts->reduce_retracing;
    return f;
oom:
    tfc_function_free(f);
    tfc_status_oom(st, "tf.function", 0);
    return NULL;
}

static void cf_free(tfc_concrete_function *cf) {
    if (!cf) return;
    for (int i = 0; i < cf->n_caps; i++) tfc_tensor_unref(cf->caps[i]);
    tfc_free(cf->caps);
    tfc_free(cf->specs);
    tfc_free(cf);
}

void tfc_function_free(tfc_function *f) {
    if (!f) return;
    for (int i = 0; i < f->n_cfs; i++) {
        f->cfs[i]->fn->pinned = false;
        tfc_flib_release(f->ctx->flib, f->cfs[i]->fn);
        cf_free(f->cfs[i]);
    }
    tfc_free(f->cfs);
    for (int i = 0; i < f->n_sig; i++) tfc_free(f->sig_names ? f->sig_names[i] : NULL);
    tfc_free(f->sig_names);
    tfc_free(f->sig);
    tfc_free(f->name);
    tfc_free(f);
}

int tfc_function_tracing_count(const tfc_function *f) { return f->tracing_count; }
bool tfc_inside_function(const tfc_ctx *ctx) { return ctx->trace != NULL; }

/* Traces f for specs; the new concrete function joins f's cache. Outer tapes do not see the trace's ops (the
 * call is what they record). */
static tfc_concrete_function *trace(tfc_function *f, const tfc_tensor_spec *specs, int n, tfc_status *st) {
    char *const *names = f->has_sig ? f->sig_names : NULL;
    tfc_ctx *ctx = f->ctx;
    char prefix[160], name[200];
    snprintf(prefix, sizeof prefix, "__inference_%s", f->name);
    tfc_flib *lib = tfc_ctx_flib(ctx, st);
    if (!lib) return NULL;
    if (!tfc_flib_fresh_name(lib, prefix, name, sizeof name))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.function: name '%s' is too long", f->name), NULL;
    tfc_concrete_function *cf = tfc_calloc(1, sizeof *cf);
    if (!cf || !(cf->specs = tfc_calloc((size_t)n + 1, sizeof *cf->specs))) {
        tfc_free(cf);
        tfc_status_oom(st, "tf.function", 0);
        return NULL;
    }
    if (f->n_cfs == f->cap_cfs) {
        int cap = f->cap_cfs ? f->cap_cfs * 2 : 4;
        tfc_concrete_function **c = tfc_realloc(f->cfs, (size_t)cap * sizeof *c);
        if (!c) {
            cf_free(cf);
            tfc_status_oom(st, "tf.function", 0);
            return NULL;
        }
        f->cfs = c;
        f->cap_cfs = cap;
    }
    tfc_dtype dts[TFC_MAX_IO];
    tfc_shape shapes[TFC_MAX_IO];
    for (int i = 0; i < n; i++) {
        dts[i] = specs[i].dtype;
        shapes[i] = specs[i].shape;
    }
    f->tracing_count++;
    cf->fn = tfc_trace_callback(ctx, name, f->fn, f->user, dts, shapes, n, names, &cf->caps, &cf->n_caps, st);
    if (!cf->fn) {
        cf_free(cf);
        return NULL;
    }
    cf->fn->pinned = true;
    cf->owner = f;
    cf->n_inputs = n;
    for (int i = 0; i < n; i++) cf->specs[i] = specs[i];
    f->cfs[f->n_cfs++] = cf;
    return cf;
}

static void note_call(tfc_function *f, bool traced) {
    f->history = (f->history << 1) | (traced ? 1u : 0u);
    if (f->n_history < RETRACE_WARN) f->n_history++;
    unsigned mask = (1u << RETRACE_WARN) - 1;
    if (f->n_history == RETRACE_WARN && (f->history & mask) == mask && !f->warned && f->tracing_count > RETRACE_WARN - 1) {
        f->warned = true;
        tfc_log(TFC_LOG_WARNING,
                "%d out of the last %d calls to <function %s> triggered tf.function retracing. Tracing is expensive "
                "and the excessive number of tracings could be due to (1) creating @tf.function repeatedly in a "
                "loop, (2) passing tensors with different shapes, (3) passing Python objects instead of tensors. For "
                "(1), please define your @tf.function outside of the loop. For (2), @tf.function has "
                "reduce_retracing=True option that can avoid unnecessary retracing. For (3), please refer to "
                "https://www.tensorflow.org/guide/function#controlling_retracing and "
                "https://www.tensorflow.org/api_docs/python/tf/function for  more details.",
                RETRACE_WARN, RETRACE_WARN, f->name);
    }
}

static bool cf_accepts(const tfc_concrete_function *cf, const tfc_tensor_spec *specs, int n) {
    if (cf->n_inputs != n) return false;
    for (int i = 0; i < n; i++)
        if (!spec_accepts(&cf->specs[i], specs[i].dtype, &specs[i].shape)) return false;
    return true;
}

/* The cached concrete function for specs, or a new trace (generalised under reduce_retracing). */
static tfc_concrete_function *lookup(tfc_function *f, const tfc_tensor_spec *specs, int n, bool *traced,
                                     tfc_status *st) {
    *traced = false;
    if (f->has_sig) {
        if (n != f->n_sig)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "tf.function '%s' takes %d arguments under its input_signature, got %d", f->name,
                                  f->n_sig, n), NULL;
        for (int i = 0; i < n; i++)
            if (!spec_accepts(&f->sig[i], specs[i].dtype, &specs[i].shape)) {
                char a[256], b[256];
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "Binding inputs to tf.function `%s` failed due to `Can not cast %s to %s`: "
                                      "argument %d (%s) is incompatible with the input_signature",
                                      f->name, spec_str(&specs[i], NULL, a, sizeof a),
                                      spec_str(&f->sig[i], f->sig_names[i], b, sizeof b), i,
                                      f->sig_names[i] ? f->sig_names[i] : "unnamed"), NULL;
            }
        if (f->n_cfs) return f->cfs[0];
        *traced = true;
        return trace(f, f->sig, f->n_sig, st);
    }
    for (int i = f->n_cfs - 1; i >= 0; i--)
        if (cf_accepts(f->cfs[i], specs, n)) return f->cfs[i];
    *traced = true;
    if (f->reduce_retracing) {
        /* Generalise against a concrete function of the same dtypes and ranks: differing dims become unknown. */
        for (int c = f->n_cfs - 1; c >= 0; c--) {
            const tfc_concrete_function *cf = f->cfs[c];
            bool same = cf->n_inputs == n;
            for (int i = 0; i < n && same; i++)
                same = cf->specs[i].dtype == specs[i].dtype && cf->specs[i].shape.rank == specs[i].shape.rank;
            if (!same) continue;
            tfc_tensor_spec gen[TFC_MAX_IO];
            for (int i = 0; i < n; i++) {
                gen[i] = specs[i];
                for (int d = 0; d < gen[i].shape.rank; d++)
                    if (cf->specs[i].shape.dims[d] != specs[i].shape.dims[d]) gen[i].shape.dims[d] = -1;
            }
            return trace(f, gen, n, st);
        }
    }
    return trace(f, specs, n, st);
}

static bool specs_of(tfc_tensor *const *in, int n, tfc_tensor_spec *specs, tfc_status *st) {
    if (n < 0 || n > TFC_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.function: %d inputs is outside [0, %d]", n, TFC_MAX_IO);
    for (int i = 0; i < n; i++) {
        if (!in[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.function: input %d is NULL", i);
        specs[i] = (tfc_tensor_spec){.dtype = in[i]->dtype, .shape = in[i]->shape};
    }
    return true;
}

int tfc_function_call(tfc_function *f, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out,
                      tfc_status *st) {
    tfc_tensor_spec specs[TFC_MAX_IO];
    bool traced;
    if (!specs_of(in, n_in, specs, st)) return -1;
    tfc_concrete_function *cf = lookup(f, specs, n_in, &traced, st);
    if (!cf) return -1;
    note_call(f, traced);
    return tfc_concrete_function_call(cf, in, n_in, out, max_out, st);
}

tfc_concrete_function *tfc_function_get_concrete_function(tfc_function *f, const tfc_tensor_spec *specs, int n,
                                                          tfc_status *st) {
    bool traced;
    if (f->has_sig && !specs) {
        specs = f->sig;
        n = f->n_sig;
    }
    if (n < 0 || n > TFC_MAX_IO || (n && !specs)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_concrete_function: %d specs", n);
        return NULL;
    }
    tfc_concrete_function *cf = lookup(f, specs, n, &traced, st);
    if (cf) tfc_status_clear(st);
    return cf;
}

int tfc_concrete_function_call(tfc_concrete_function *cf, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                               int max_out, tfc_status *st) {
    tfc_ctx *ctx = cf->owner->ctx;
    if (n_in != cf->n_inputs) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s takes %d inputs, got %d", cf->fn->name, cf->n_inputs, n_in);
        return -1;
    }
    if (cf->fn->n_rets > max_out) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s produces %d outputs but room was given for %d", cf->fn->name,
                       cf->fn->n_rets, max_out);
        return -1;
    }
    if (n_in + cf->n_caps > TFC_MAX_IO) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: %d inputs and captures is more than %d", cf->fn->name,
                       n_in + cf->n_caps, TFC_MAX_IO);
        return -1;
    }
    tfc_tensor *args[TFC_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        if (!in[i] || !spec_accepts(&cf->specs[i], in[i]->dtype, &in[i]->shape)) {
            char a[256], b[256];
            tfc_tensor_spec got = in[i] ? (tfc_tensor_spec){.dtype = in[i]->dtype, .shape = in[i]->shape}
                                        : (tfc_tensor_spec){0};
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: argument %d: expected %s, got %s", cf->fn->name, i,
                           spec_str(&cf->specs[i], NULL, a, sizeof a), in[i] ? spec_str(&got, NULL, b, sizeof b) : "NULL");
            return -1;
        }
        args[i] = in[i];
    }
    for (int i = 0; i < cf->n_caps; i++) {
        args[n_in + i] = cf->caps[i];
        /* variables the function reads are watched by tapes that watch accessed variables */
        if (ctx->n_tapes && !ctx->trace && cf->caps[i]->dtype == TFC_RESOURCE && cf->caps[i]->resource)
            tfc_tape_variable_accessed(ctx, cf->caps[i]->resource);
    }
    if (!tfc_call_emit(ctx, cf->fn, args, n_in + cf->n_caps, out, st)) return -1;
    return cf->fn->n_rets;
}

int tfc_concrete_function_num_inputs(const tfc_concrete_function *cf) { return cf->n_inputs; }
int tfc_concrete_function_num_outputs(const tfc_concrete_function *cf) { return cf->fn->n_rets; }
tfc_tensor_spec tfc_concrete_function_input_spec(const tfc_concrete_function *cf, int i) {
    return i >= 0 && i < cf->n_inputs ? cf->specs[i] : (tfc_tensor_spec){0};
}
tfc_tensor_spec tfc_concrete_function_output_spec(const tfc_concrete_function *cf, int i) {
    if (i < 0 || i >= cf->fn->n_rets) return (tfc_tensor_spec){0};
    const tfc_gnode *n = cf->fn->body->nodes[cf->fn->rets[i].node];
    return (tfc_tensor_spec){.dtype = n->out_dtypes[cf->fn->rets[i].index],
                             .shape = n->out_shapes[cf->fn->rets[i].index]};
}
int tfc_concrete_function_num_nodes(const tfc_concrete_function *cf) { return cf->fn->body->n_nodes; }
const char *tfc_concrete_function_name(const tfc_concrete_function *cf) { return cf->fn->name; }
int tfc_concrete_function_num_captures(const tfc_concrete_function *cf) { return cf->n_caps; }
const tfc_tensor *tfc_concrete_function_capture(const tfc_concrete_function *cf, int i) {
    return cf && i >= 0 && i < cf->n_caps ? cf->caps[i] : NULL;
}

void tfc_ctx_set_optimizer_options(tfc_ctx *ctx, const tfc_optimizer_opts *o) {
    ctx->optimizer_off = (o->constant_folding ? 0u : 1u) | (o->arithmetic_optimization ? 0u : 2u) |
                         (o->common_subgraph_elimination ? 0u : 4u) | (o->pruning ? 0u : 8u) |
                         (o->remapping ? 0u : 16u);
}

tfc_optimizer_opts tfc_ctx_get_optimizer_options(const tfc_ctx *ctx) {
    const unsigned off = ctx->optimizer_off;
    return (tfc_optimizer_opts){!(off & 1), !(off & 2), !(off & 4), !(off & 8), !(off & 16)};
}

int tfc_concrete_function_pass_report(tfc_concrete_function *cf, const char **names, int *before, int *after,
                                      int max, tfc_status *st) {
    tfc_exec *x = tfc_exec_get(cf->owner->ctx, cf->fn, st);
    return x ? tfc_exec_pass_report(x, names, before, after, max) : -1;
}

void tfc_ctx_set_inter_op_parallelism_threads(tfc_ctx *ctx, int num_threads) {
    ctx->inter_op_threads = num_threads > 0 ? num_threads : 0;
}

int tfc_ctx_get_inter_op_parallelism_threads(const tfc_ctx *ctx) { return ctx->inter_op_threads; }

bool tfc_concrete_function_memory_plan(tfc_concrete_function *cf, tfc_memory_plan *plan, tfc_status *st) {
    tfc_exec *x = tfc_exec_get(cf->owner->ctx, cf->fn, st);
    if (!x) return false;
    *plan = *tfc_exec_mem(x);
    tfc_status_clear(st);
    return true;
}
