/* Adagrad (tf_keras optimizers/legacy/adagrad.py): ResourceApplyAdagradV2, accum += g^2;
 * var -= lr * g / (sqrt(accum) + epsilon), the accumulator starting at initial_accumulator_value (0.1). The
 * new Keras Adagrad puts epsilon under the root: var -= lr * g / sqrt(accum + epsilon) (composed from ops). */
#include "keras/optimizer_internal.h"

static bool adagrad_slots(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    return tfc_opt_add_slot(o, ctx, vars, n, 0, "accumulator", o->initial_accumulator_value, st);
}

static bool adagrad_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *s,
                          const tfc_opt_step *p, tfc_status *st) {
    tfc_tensor *lr = tfc_opt_scalar(ctx, p->dt, p->lr, st), *eps = tfc_opt_scalar(ctx, p->dt, o->epsilon, st);
    if (o->legacy)
        return tfc_opt_run(ctx, "ResourceApplyAdagradV2",
                           (tfc_tensor *[]){tfc_variable_handle(var), tfc_variable_handle(s->slot[0]), lr, eps, grad}, 5,
                           NULL, 0, st);
    tfc_tensor *g2 = tfc_opt_op2(ctx, "Mul", grad, grad, st);
    if (!g2 || !tfc_variable_assign_add(ctx, s->slot[0], g2, st)) return false;
    tfc_tensor *acc = tfc_opt_read(ctx, s->slot[0], st);
    tfc_tensor *d = tfc_opt_op2(ctx, "RealDiv", tfc_opt_op2(ctx, "Mul", lr, grad, st),
                                tfc_opt_op1(ctx, "Sqrt", tfc_opt_op2(ctx, "AddV2", acc, eps, st), st), st);
    return d && tfc_variable_assign_sub(ctx, var, d, st);
}

static bool adagrad_get_config(const tfc_optimizer *o, cJSON *c) {
    return tfc_opt_json_num(c, "initial_accumulator_value", o->initial_accumulator_value) &&
           tfc_opt_json_num(c, "epsilon", o->epsilon);
}

static bool adagrad_from_config(tfc_optimizer *o, const cJSON *c, tfc_status *st) {
    if (!c) {
        o->initial_accumulator_value = 0.1, o->epsilon = 1e-7;
        return true;
    }
    bool ok = tfc_json_get_f64(c, "initial_accumulator_value", &o->initial_accumulator_value, NULL, st) &&
              tfc_json_get_f64(c, "epsilon", &o->epsilon, NULL, st);
    if (ok && o->epsilon == 0) o->epsilon = 1e-7;
    return ok;
}

static bool adagrad_validate(const tfc_optimizer *o, tfc_status *st) {
    if (o->initial_accumulator_value < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: initial_accumulator_value must be non-negative: %g",
                              o->name, o->initial_accumulator_value);
    return true;
}

const tfc_opt_class tfc_opt_adagrad = {
    .class_name = "Adagrad", .default_lr = 0.001, .create_slots = adagrad_slots, .apply_dense = adagrad_apply,
    .get_config = adagrad_get_config, .from_config = adagrad_from_config, .validate = adagrad_validate,
};

tfc_optimizer *tfc_optimizers_adagrad_new(const tfc_adagrad_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_adagrad, opts);
    if (!o) return NULL;
    o->decay = opts->decay;
    o->initial_accumulator_value =
        opts->has_initial_accumulator_value || opts->initial_accumulator_value != 0 ? opts->initial_accumulator_value : 0.1;
    o->epsilon = opts->epsilon != 0 ? opts->epsilon : 1e-7;
    return o;
}
