/* Adam and AdamW. Adam (tf_keras optimizers/legacy/adam.py) runs ResourceApplyAdam (or
 * ResourceApplyAdamWithAmsgrad) with beta powers of the step t = iterations + 1; the op computes
 * alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) and var -= alpha * m / (sqrt(v) + epsilon), TensorFlow's
 * "epsilon hat" form. The new Keras Adam and AdamW compute the same update (one fused op here); AdamW first
 * decays the variable (var -= var * weight_decay * lr, done by the base before the step). Slots: legacy Adam
 * creates "m" for every variable, then "v", then "vhat"; the new family alternates m and v per variable. */
#include <math.h>
#include <string.h>

#include "keras/optimizer_internal.h"
#include "tfc/function.h"

static bool adam_slots(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    if (o->legacy) {
        if (!tfc_opt_add_slot(o, ctx, vars, n, 0, "m", 0, st) || !tfc_opt_add_slot(o, ctx, vars, n, 1, "v", 0, st))
            return false;
    } else {
        for (int i = 0; i < n; i++)
            if (!tfc_opt_add_slot(o, ctx, &vars[i], 1, 0, "m", 0, st) || !tfc_opt_add_slot(o, ctx, &vars[i], 1, 1, "v", 0, st))
                return false;
    }
    return !o->amsgrad || tfc_opt_add_slot(o, ctx, vars, n, 2, "vhat", 0, st);
}

/* The op's scalar inputs beta_1_power, beta_2_power, lr, beta_1, beta_2, epsilon: the same for every variable
 * of a dtype in a step, so made once and kept by the optimizer (o->consts) while the step, dtype and
 * hyper-parameters they come from stay the same (every variable of a step, not the next step). */
static void consts_clear(tfc_optimizer *o) {
    for (int i = 0; i < 6; i++) {
        tfc_tensor_unref(o->consts[i]);
        o->consts[i] = NULL;
    }
}

static bool adam_consts(tfc_optimizer *o, const tfc_opt_step *p, tfc_status *st) {
    tfc_dtype dt = p->dt;
    double t = tfc_opt_in(dt, (double)(p->iterations + 1));
    double b1 = tfc_opt_hyper(o, dt, o->beta_1), b2 = tfc_opt_hyper(o, dt, o->beta_2);
    const double key[6] = {t, p->lr, b1, b2, o->epsilon, 0};
    if (o->consts[0] && o->consts_dt == dt && !memcmp(key, o->consts_key, sizeof key)) return true;
    const double v[6] = {tfc_opt_in(dt, pow(b1, t)), tfc_opt_in(dt, pow(b2, t)), p->lr, b1, b2, o->epsilon};
    consts_clear(o);
    for (int i = 0; i < 6; i++)
        if (!(o->consts[i] = tfc_scalar(dt, v[i], st))) {
            consts_clear(o);
            return false;
        }
    o->consts_dt = dt;
    memcpy(o->consts_key, key, sizeof key);
    return true;
}

static bool adam_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *s,
                       const tfc_opt_step *p, tfc_status *st) {
    tfc_tensor *c[6];
    if (tfc_inside_function(ctx)) { /* traced: the beta powers follow the iterations variable, nothing cached */
        double b1 = tfc_opt_hyper(o, p->dt, o->beta_1), b2 = tfc_opt_hyper(o, p->dt, o->beta_2);
        c[0] = tfc_opt_beta_power(o, ctx, p, b1, st);
        c[1] = tfc_opt_beta_power(o, ctx, p, b2, st);
        c[2] = tfc_opt_scalar(ctx, p->dt, p->lr, st);
        c[3] = tfc_opt_scalar(ctx, p->dt, b1, st);
        c[4] = tfc_opt_scalar(ctx, p->dt, b2, st);
        c[5] = tfc_opt_scalar(ctx, p->dt, o->epsilon, st);
    } else {
        if (!adam_consts(o, p, st)) return false;
        memcpy(c, o->consts, sizeof c);
    }
    tfc_tensor *in[11];
    int n = 0;
    in[n++] = tfc_variable_handle(var);
    in[n++] = tfc_variable_handle(s->slot[0]);
    in[n++] = tfc_variable_handle(s->slot[1]);
    if (o->amsgrad) in[n++] = tfc_variable_handle(s->slot[2]);
    for (int i = 0; i < 6; i++) in[n++] = c[i];
    in[n++] = grad;
    return o->amsgrad ? tfc_opt_run(ctx, "ResourceApplyAdamWithAmsgrad", in, n, NULL, 0, st)
                      : tfc_opt_run(ctx, "ResourceApplyAdam", in, n, NULL, 0, st);
}

static bool adam_get_config(const tfc_optimizer *o, cJSON *c) {
    return tfc_opt_json_num(c, "beta_1", o->beta_1) && tfc_opt_json_num(c, "beta_2", o->beta_2) &&
           tfc_opt_json_num(c, "epsilon", o->epsilon) && cJSON_AddBoolToObject(c, "amsgrad", o->amsgrad);
}

static bool adam_from_config(tfc_optimizer *o, const cJSON *c, tfc_status *st) {
    if (!c) {
        o->beta_1 = 0.9, o->beta_2 = 0.999, o->epsilon = 1e-7, o->amsgrad = false;
        if (o->cls == &tfc_opt_adamw) o->legacy = false, o->weight_decay = 0.004, o->has_weight_decay = true;
        return true;
    }
    bool ok = tfc_json_get_f64(c, "beta_1", &o->beta_1, NULL, st) && tfc_json_get_f64(c, "beta_2", &o->beta_2, NULL, st) &&
              tfc_json_get_f64(c, "epsilon", &o->epsilon, NULL, st) && tfc_json_get_bool(c, "amsgrad", &o->amsgrad, NULL, st);
    if (ok && o->epsilon == 0) o->epsilon = 1e-7; /* Keras: epsilon or backend.epsilon() */
    return ok;
}

const tfc_opt_class tfc_opt_adam = {
    .class_name = "Adam", .default_lr = 0.001, .create_slots = adam_slots, .apply_dense = adam_apply,
    .get_config = adam_get_config, .from_config = adam_from_config,
};
const tfc_opt_class tfc_opt_adamw = {
    .class_name = "AdamW", .default_lr = 0.001, .create_slots = adam_slots, .apply_dense = adam_apply,
    .get_config = adam_get_config, .from_config = adam_from_config,
};

tfc_optimizer *tfc_optimizers_adam_new(const tfc_adam_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_adam, opts);
    if (!o) return NULL;
    o->decay = opts->decay;
    o->beta_1 = opts->beta_1 != 0 ? opts->beta_1 : 0.9;
    o->beta_2 = opts->beta_2 != 0 ? opts->beta_2 : 0.999;
    o->epsilon = opts->epsilon != 0 ? opts->epsilon : 1e-7;
    o->amsgrad = opts->amsgrad;
    return o;
}

tfc_optimizer *tfc_optimizers_adamw_new(const tfc_adamw_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_adamw, opts);
    if (!o) return NULL;
    o->legacy = false;
    o->beta_1 = opts->beta_1 != 0 ? opts->beta_1 : 0.9;
    o->beta_2 = opts->beta_2 != 0 ? opts->beta_2 : 0.999;
    o->epsilon = opts->epsilon != 0 ? opts->epsilon : 1e-7;
    o->amsgrad = opts->amsgrad;
    o->weight_decay = opts->weight_decay != 0 ? opts->weight_decay : 0.004;
    o->has_weight_decay = true;
    return o;
}
