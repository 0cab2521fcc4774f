/* Training ops (tensorflow/core/ops/training_ops.cc): the fused in-place updates Keras's OptimizerV2 runs on
 * resource variables. Each takes the variable and its slots as resource handles, hyper-parameters as scalars
 * of T and the gradient; it has no outputs and no gradient. Validation needs the variables' shapes, which live
 * behind the handles: in eager mode the handles' values are known, so the shape function checks them; the
 * kernel checks again under the variables' locks (a graph may run with handles known only then). */
#include <string.h>

#include "ops/training_ops.h"

#define T_ATTR "T: {" TFC_T_REAL "}, use_locking: bool = false"

static const tfc_train_sig sigs[] = {
    {"ResourceApplyGradientDescent", 1, {"var"}, 1, {1}, {"alpha"}, 2, "delta"},
    {"ResourceApplyKerasMomentum", 2, {"var", "accum"}, 2, {2, 4}, {"lr", "momentum"}, 3, "grad"},
    {"ResourceApplyAdam", 3, {"var", "m", "v"}, 6, {3, 4, 5, 6, 7, 8},
     {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"}, 9, "grad"},
    {"ResourceApplyAdamWithAmsgrad", 4, {"var", "m", "v", "vhat"}, 6, {4, 5, 6, 7, 8, 9},
     {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon"}, 10, "grad"},
    {"ResourceApplyRMSProp", 3, {"var", "ms", "mom"}, 4, {3, 4, 5, 6}, {"lr", "rho", "momentum", "epsilon"}, 7, "grad"},
    {"ResourceApplyCenteredRMSProp", 4, {"var", "mg", "ms", "mom"}, 4, {4, 5, 6, 7},
     {"lr", "rho", "momentum", "epsilon"}, 8, "grad"},
    {"ResourceApplyAdagradV2", 2, {"var", "accum"}, 2, {2, 3}, {"lr", "epsilon"}, 4, "grad"},
    {"ResourceApplyAdaMax", 3, {"var", "m", "v"}, 5, {3, 4, 5, 6, 7}, {"beta1_power", "lr", "beta1", "beta2", "epsilon"},
     8, "grad"},
};

const tfc_train_sig *tfc_train_sig_find(const char *op) {
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        if (!strcmp(sigs[i].op, op)) return &sigs[i];
    return NULL;
}

bool tfc_train_vars(const tfc_train_sig *s, tfc_tensor *const *in, tfc_variable **v, tfc_status *st) {
    for (int i = 0; i < s->n_vars; i++) {
        if (!(v[i] = tfc_var_from_handle(in[i], s->op, st))) return false;
        for (int j = 0; j < i; j++)
            if (v[j] == v[i])
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s and %s refer to the same variable '%s'", s->op,
                                      s->vars[j], s->vars[i], v[i]->name);
    }
    return true;
}

void tfc_train_lock(tfc_variable *const *v, int n) {
    tfc_variable *o[TFC_TRAIN_MAX_VARS];
    memcpy(o, v, (size_t)n * sizeof *o);
    for (int i = 1; i < n; i++) /* insertion sort by address: n <= 4 */
        for (int j = i; j > 0 && (uintptr_t)o[j] < (uintptr_t)o[j - 1]; j--) {
            tfc_variable *t = o[j];
            o[j] = o[j - 1];
            o[j - 1] = t;
        }
    for (int i = 0; i < n; i++) pthread_mutex_lock(&o[i]->mu);
}

void tfc_train_unlock(tfc_variable *const *v, int n) {
    for (int i = 0; i < n; i++) pthread_mutex_unlock(&v[i]->mu);
}

bool tfc_train_check(const tfc_train_sig *s, tfc_variable *const *v, tfc_dtype T, const tfc_shape *grad,
                     tfc_status *st) {
    for (int i = 0; i < s->n_vars; i++) {
        if (!v[i]->value)
            return tfc_status_set(st, TFC_FAILED_PRECONDITION,
                                  "%s: attempting to use uninitialized value %s (variable '%s')", s->op, s->vars[i],
                                  v[i]->name);
        if (v[i]->dtype != T)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s (variable '%s') has dtype %s, but T is %s", s->op,
                                  s->vars[i], v[i]->name, tfc_dtype_name(v[i]->dtype), tfc_dtype_name(T));
    }
    const tfc_shape *var = &v[0]->value->shape;
    for (int i = 1; i < s->n_vars; i++)
        if (!tfc_shape_equal(var, &v[i]->value->shape))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: var and %s do not have the same shape: %s vs %s", s->op,
                                  s->vars[i], SHP(var), SHP(&v[i]->value->shape));
    bool fits = !grad || grad->rank < 0 || grad->rank == var->rank; /* (a traced gradient may have unknown dims) */
    for (int i = 0; fits && grad && i < grad->rank; i++) fits = grad->dims[i] < 0 || grad->dims[i] == var->dims[i];
    if (!fits)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: var and %s do not have the same shape: %s vs %s", s->op,
                              s->grad_name, SHP(var), SHP(grad));
    return true;
}

/* Handles are scalars, hyper-parameters scalars of T; with the handles' values at hand, the variables must be
 * initialised, of dtype T and of the gradient's shape. */
static bool train_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_train_sig *s = tfc_train_sig_find(c->op->name);
    if (!s) return tfc_status_set(st, TFC_INTERNAL, "%s: no training-op signature", c->op->name);
    for (int i = 0; i < s->n_vars; i++)
        if (c->in_shapes[i].rank > 0)
            return TFC_OP_ERR(c, st, "%s must be a resource handle (a scalar), got shape %s", s->vars[i],
                              SHP(&c->in_shapes[i]));
    for (int i = 0; i < s->n_scalars; i++) {
        const tfc_shape *sh = &c->in_shapes[s->scalar_idx[i]];
        if (sh->rank > 0) return TFC_OP_ERR(c, st, "%s is not a scalar: %s", s->scalars[i], SHP(sh));
    }
    if (!c->in_values) return true;
    for (int i = 0; i < s->n_vars; i++)
        if (!c->in_values[i] || tfc_tensor_is_symbolic(c->in_values[i])) return true;
    tfc_variable *v[TFC_TRAIN_MAX_VARS];
    if (!tfc_train_vars(s, c->in_values, v, st)) return false;
    tfc_dtype T = tfc_attrs_type(c->attrs, "T", TFC_INVALID_DTYPE);
    tfc_train_lock(v, s->n_vars);
    bool ok = tfc_train_check(s, v, T, &c->in_shapes[s->grad], st);
    tfc_train_unlock(v, s->n_vars);
    return ok;
}

const tfc_op_def tfc_op_def_resource_apply_gradient_descent = {
    .name = "ResourceApplyGradientDescent", .inputs = "var: resource, alpha: T, delta: T", .outputs = "",
    .attrs = T_ATTR, .shape = train_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_keras_momentum = {
    .name = "ResourceApplyKerasMomentum", .inputs = "var: resource, accum: resource, lr: T, grad: T, momentum: T",
    .outputs = "", .attrs = T_ATTR ", use_nesterov: bool = false", .shape = train_shape, .not_differentiable = true,
    .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_adam = {
    .name = "ResourceApplyAdam",
    .inputs = "var: resource, m: resource, v: resource, beta1_power: T, beta2_power: T, lr: T, beta1: T, beta2: T, "
              "epsilon: T, grad: T",
    .outputs = "", .attrs = T_ATTR ", use_nesterov: bool = false", .shape = train_shape, .not_differentiable = true,
    .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_adam_with_amsgrad = {
    .name = "ResourceApplyAdamWithAmsgrad",
    .inputs = "var: resource, m: resource, v: resource, vhat: resource, beta1_power: T, beta2_power: T, lr: T, "
              "beta1: T, beta2: T, epsilon: T, grad: T",
    .outputs = "", .attrs = T_ATTR, .shape = train_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_rms_prop = {
    .name = "ResourceApplyRMSProp",
    .inputs = "var: resource, ms: resource, mom: resource, lr: T, rho: T, momentum: T, epsilon: T, grad: T",
    .outputs = "", .attrs = T_ATTR, .shape = train_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_centered_rms_prop = {
    .name = "ResourceApplyCenteredRMSProp",
    .inputs = "var: resource, mg: resource, ms: resource, mom: resource, lr: T, rho: T, momentum: T, epsilon: T, "
              "grad: T",
    .outputs = "", .attrs = T_ATTR, .shape = train_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_adagrad_v2 = {
    .name = "ResourceApplyAdagradV2", .inputs = "var: resource, accum: resource, lr: T, epsilon: T, grad: T",
    .outputs = "", .attrs = T_ATTR ", update_slots: bool = true", .shape = train_shape, .not_differentiable = true,
    .stateful = true,
};
const tfc_op_def tfc_op_def_resource_apply_ada_max = {
    .name = "ResourceApplyAdaMax",
    .inputs = "var: resource, m: resource, v: resource, beta1_power: T, lr: T, beta1: T, beta2: T, epsilon: T, "
              "grad: T",
    .outputs = "", .attrs = T_ATTR, .shape = train_shape, .not_differentiable = true, .stateful = true,
};

const tfc_op_def *const tfc_ops_training[] = {
    &tfc_op_def_resource_apply_gradient_descent, &tfc_op_def_resource_apply_keras_momentum,
    &tfc_op_def_resource_apply_adam, &tfc_op_def_resource_apply_adam_with_amsgrad,
    &tfc_op_def_resource_apply_rms_prop, &tfc_op_def_resource_apply_centered_rms_prop,
    &tfc_op_def_resource_apply_adagrad_v2, &tfc_op_def_resource_apply_ada_max, NULL,
};
