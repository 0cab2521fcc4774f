/* The single op entry point (DESIGN §3): resolve attrs, infer shapes, run the kernel, record on tapes. */
#include <string.h>

#include "core/variable.h"
#include "device/device.h"
#include "eager/context_internal.h"
#include "eager/kernel_cache.h"
#include "eager/trace_op.h"

static void unref_all(tfc_tensor **t, int n) {
    for (int i = 0; i < n; i++) {
        tfc_tensor_unref(t[i]);
        t[i] = NULL;
    }
}

int tfc_op_infer(const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                 tfc_attrs *ra, tfc_dtype *out_dtypes, tfc_shape *out_shapes, int max_out, tfc_status *st) {
    const char *name = op->def->name;
    int n_out = 0;
    tfc_shape in_shapes[TFC_MAX_IO];
    tfc_dtype in_dtypes[TFC_MAX_IO];
    if (!tfc_resolve_call(op, in, n_in, attrs, n_attrs, ra, &n_out, out_dtypes, st)) return -1;
    if (n_out > max_out) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s produces %d outputs but room was given for %d", name, n_out, max_out);
        return -1;
    }
    for (int i = 0; i < n_in; i++) {
        in_shapes[i] = in[i]->shape;
        in_dtypes[i] = in[i]->dtype;
    }
    for (int i = 0; i < n_out; i++) out_shapes[i].rank = -1;
    tfc_shape_ctx sc = {.op = op->def, .attrs = ra, .n_in = n_in, .in_shapes = in_shapes, .in_dtypes = in_dtypes,
                        .in_values = in, .n_out = n_out, .out_shapes = out_shapes, .out_dtypes = out_dtypes};
    if (op->def->shape && !op->def->shape(&sc, st)) return -1;
    return n_out;
}

int tfc_execute_op(tfc_ctx *ctx, const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                   int n_attrs, tfc_tensor **out, int max_out, tfc_status *st) {
    const char *name = op->def->name;
    if (n_in < 0 || n_in > TFC_MAX_IO) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %d inputs is outside [0, %d]", name, n_in, TFC_MAX_IO);
        return -1;
    }
    if (ctx->trace) return ctx->trace_op(ctx, op, in, n_in, attrs, n_attrs, out, max_out, st);
    TFC_TRACE_OP(name, in, n_in); /* the profiler's op event (eager/trace_op.h) */
    for (int i = 0; i < n_in; i++)
        if (in[i] && in[i]->node) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "%s: input #%d is a symbolic tensor of a function graph, which cannot be used outside "
                           "the function being traced", name, i);
            return -1;
        }
    tfc_attrs ra;
    tfc_shape out_shapes[TFC_MAX_IO];
    tfc_dtype out_dtypes[TFC_MAX_IO];
    const int n_out = tfc_op_infer(op, in, n_in, attrs, n_attrs, &ra, out_dtypes, out_shapes, max_out, st);
    if (n_out < 0) return -1;

    const tfc_kernel_entry *ke = tfc_device_kernel(tfc_device_cpu(), op, &ra);
    if (!ke) {
        tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: no CPU kernel registered", name);
        return -1;
    }
    tfc_kernel_inst *inst = NULL;
    if (ke->create) {
        tfc_dtype in_dtypes[TFC_MAX_IO];
        for (int i = 0; i < n_in; i++) in_dtypes[i] = in[i]->dtype;
        if (!(inst = tfc_kernel_cache_get(ctx, ke, op, &ra, in_dtypes, n_in, st))) return -1;
    }
    tfc_tensor *res[TFC_MAX_IO] = {0};
    for (int i = 0; i < n_out; i++) {
        if (!tfc_shape_is_fully_defined(&out_shapes[i])) continue;
        if (!(res[i] = tfc_tensor_alloc(out_dtypes[i], &out_shapes[i], st))) {
            unref_all(res, n_out);
            tfc_kernel_inst_unref(inst);
            if (st->code == TFC_INVALID_ARGUMENT) {
                char m[sizeof st->msg];
                memcpy(m, st->msg, sizeof m);
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s", name, m);
            }
            return -1;
        }
    }
    /* kernels may allocate outputs with data-dependent shapes; they use the resolved attrs' dtypes */
    tfc_kernel_ctx k = {.ctx = ctx, .op = op->def, .attrs = &ra, .n_in = n_in, .in = in, .n_out = n_out,
                        .out = res, .pool = ctx->pool, .state = inst ? inst->state : NULL,
                        .instance_of = tfc_kernel_cache_instance_of};
    const bool ran = ke->compute(&k, st);
    if (inst) tfc_kernel_inst_unref(inst);
    if (!ran) {
        unref_all(res, n_out);
        return -1;
    }
    for (int i = 0; i < n_out; i++)
        if (!res[i]) {
            unref_all(res, n_out);
            tfc_status_set(st, TFC_INTERNAL, "%s: kernel did not produce output %d", name, i);
            return -1;
        }
    if (ctx->n_tapes && n_in == 1 && in[0]->dtype == TFC_RESOURCE && in[0]->resource && !strcmp(name, "ReadVariableOp"))
        tfc_tape_variable_accessed(ctx, in[0]->resource);
    if (ctx->n_tapes && !ctx->record_paused && tfc_tape_should_record(ctx, in, n_in) &&
        !tfc_tape_record_op(ctx, op, &ra, in, n_in, res, n_out, st)) {
        unref_all(res, n_out);
        return -1;
    }
    for (int i = 0; i < n_out; i++) {
        out[i] = res[i];
        if (!tfc_scope_track(ctx, res[i], st)) {
            for (int j = i + 1; j < n_out; j++) tfc_tensor_unref(res[j]);
            return -1;
        }
    }
    tfc_status_clear(st);
    return n_out;
}

int tfc_execute(tfc_ctx *ctx, const char *name, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                tfc_tensor **out, int max_out, tfc_status *st) {
    const tfc_op *op = tfc_op_lookup(name ? name : "");
    if (!op) {
        tfc_status_set(st, TFC_NOT_FOUND, "Op type not registered '%s'", name ? name : "(null)");
        return -1;
    }
    return tfc_execute_op(ctx, op, in, n_in, attrs, n_attrs, out, max_out, st);
}

tfc_tensor *tfc_emit(tfc_ctx *ctx, const char *name, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                     int n_attrs, tfc_status *st) {
    tfc_tensor *out[TFC_MAX_IO];
    int n = tfc_execute(ctx, name, in, n_in, attrs, n_attrs, out, TFC_MAX_IO, st);
    if (n < 0) return NULL;
    if (n != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s has %d outputs; tfc_emit needs exactly one", name, n);
        if (ctx->n_scopes == 0)
            for (int i = 0; i < n; i++) tfc_tensor_unref(out[i]);
        return NULL;
    }
    return out[0];
}
