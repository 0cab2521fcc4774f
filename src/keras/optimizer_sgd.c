/* SGD (tf_keras optimizers/legacy/gradient_descent.py): plain steps with ResourceApplyGradientDescent, momentum
 * and Nesterov momentum with ResourceApplyKerasMomentum (accum = momentum * accum - lr * g; var += accum, or
 * var += momentum * accum - lr * g). The legacy optimizer creates the "momentum" slot only when momentum > 0;
 * the new one always creates "m" (same arithmetic). */
#include "keras/optimizer_internal.h"

static bool sgd_slots(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    if (o->legacy) return o->momentum > 0 ? tfc_opt_add_slot(o, ctx, vars, n, 0, "momentum", 0, st) : true;
    return tfc_opt_add_slot(o, ctx, vars, n, 0, "m", 0, st);
}

static bool sgd_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *s,
                      const tfc_opt_step *p, tfc_status *st) {
    tfc_tensor *lr = tfc_opt_scalar(ctx, p->dt, p->lr, st);
    if (s && s->slot[0]) {
        tfc_tensor *mom = tfc_opt_scalar(ctx, p->dt, tfc_opt_hyper(o, p->dt, o->momentum), st);
        tfc_attr a = TFC_ATTR_B("use_nesterov", o->nesterov);
        return tfc_opt_run(ctx, "ResourceApplyKerasMomentum",
                           (tfc_tensor *[]){tfc_variable_handle(var), tfc_variable_handle(s->slot[0]), lr, grad, mom}, 5,
                           &a, 1, st);
    }
    return tfc_opt_run(ctx, "ResourceApplyGradientDescent", (tfc_tensor *[]){tfc_variable_handle(var), lr, grad}, 3,
                       NULL, 0, st);
}

static bool sgd_get_config(const tfc_optimizer *o, cJSON *c) {
    return tfc_opt_json_num(c, "momentum", o->momentum) && cJSON_AddBoolToObject(c, "nesterov", o->nesterov);
}

static bool sgd_from_config(tfc_optimizer *o, const cJSON *c, tfc_status *st) {
    if (!c) {
        o->momentum = 0, o->nesterov = false;
        return true;
    }
    return tfc_json_get_f64(c, "momentum", &o->momentum, NULL, st) && tfc_json_get_bool(c, "nesterov", &o->nesterov, NULL, st);
}

static bool sgd_validate(const tfc_optimizer *o, tfc_status *st) {
    if (o->momentum < 0 || o->momentum > 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: `momentum` must be between [0, 1]. Received: momentum=%g",
                              o->name, o->momentum);
    return true;
}

const tfc_opt_class tfc_opt_sgd = {
    .class_name = "SGD", .default_lr = 0.01, .create_slots = sgd_slots, .apply_dense = sgd_apply,
    .get_config = sgd_get_config, .from_config = sgd_from_config, .validate = sgd_validate,
};

tfc_optimizer *tfc_optimizers_sgd_new(const tfc_sgd_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_sgd, opts);
    if (!o) return NULL;
    o->decay = opts->decay;
    o->momentum = opts->momentum;
    o->nesterov = opts->nesterov;
    return o;
}
