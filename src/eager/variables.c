/* tf.Variable over resource ops: every read and assign goes through tfc_execute, so tapes and (later)
 * graph tracing see them. */
#include "core/variable.h"
#include "eager/context_internal.h"

tfc_variable *tfc_variable_new(tfc_ctx *ctx, tfc_tensor *init, bool trainable, const char *name, tfc_status *st) {
    if (!init) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Variable: initial_value is NULL");
        return NULL;
    }
    tfc_variable *v = tfc_var_new(init->dtype, &init->shape, name, st);
    if (!v) return NULL;
    v->trainable = trainable && tfc_dtype_is_floating(init->dtype);
    if (!(v->handle = tfc_var_handle(v, st))) {
        tfc_var_release(v);
        return NULL;
    }
    if (!tfc_variable_assign(ctx, v, init, st)) {
        tfc_variable_free(v);
        return NULL;
    }
    return v;
}

void tfc_variable_free(tfc_variable *v) {
    if (!v) return;
    tfc_tensor *h = v->handle;
    v->handle = NULL;
    tfc_tensor_unref(h);
    tfc_var_release(v);
}

tfc_tensor *tfc_variable_handle(tfc_variable *v) { return v->handle; }
tfc_variable *tfc_variable_from_handle(const tfc_tensor *h) {
    return h && h->dtype == TFC_RESOURCE ? h->resource : NULL;
}
const char *tfc_variable_name(const tfc_variable *v) { return v->name; }
bool tfc_variable_trainable(const tfc_variable *v) { return v->trainable; }
void tfc_variable_set_trainable(tfc_variable *v, bool trainable) { v->trainable = trainable; }
tfc_dtype tfc_variable_dtype(const tfc_variable *v) { return v->dtype; }
const tfc_shape *tfc_variable_shape(const tfc_variable *v) { return &v->shape; }
const tfc_tensor *tfc_variable_value(const tfc_variable *v) { return v->value; }

tfc_tensor *tfc_variable_read(tfc_ctx *ctx, tfc_variable *v, tfc_status *st) {
    tfc_attr a = TFC_ATTR_T("dtype", v->dtype);
    return tfc_emit(ctx, "ReadVariableOp", &v->handle, 1, &a, 1, st);
}

tfc_tensor *tfc_variable_read_untaped(tfc_ctx *ctx, tfc_variable *v, tfc_status *st) {
    /* with a tape, or while tracing (a snapshot would become a constant of the graph): ReadVariableOp */
    if (ctx->n_tapes || ctx->trace) return tfc_variable_read(ctx, v, st);
    pthread_mutex_lock(&v->mu);
    tfc_tensor *val = v->value ? tfc_tensor_ref(v->value) : NULL;
    pthread_mutex_unlock(&v->mu);
    if (!val) return tfc_variable_read(ctx, v, st); /* (its error) */
    tfc_tensor *out = tfc_tensor_share(val, &val->shape, st);
    tfc_tensor_unref(val);
    return out && tfc_scope_track(ctx, out, st) ? out : NULL;
}

static bool run_assign(tfc_ctx *ctx, const char *op, tfc_variable *v, tfc_tensor *x, tfc_status *st) {
    tfc_tensor *in[2] = {v->handle, x};
    tfc_tensor *out[1];
    return tfc_execute(ctx, op, in, 2, NULL, 0, out, 0, st) >= 0;
}

bool tfc_variable_assign(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *x, tfc_status *st) {
    return run_assign(ctx, "AssignVariableOp", v, x, st);
}
bool tfc_variable_assign_add(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *x, tfc_status *st) {
    return run_assign(ctx, "AssignAddVariableOp", v, x, st);
}
bool tfc_variable_assign_sub(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *x, tfc_status *st) {
    return run_assign(ctx, "AssignSubVariableOp", v, x, st);
}
