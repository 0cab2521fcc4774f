/* Adamax (tf_keras optimizers/legacy/adamax.py): ResourceApplyAdaMax, m += (g - m) * (1 - beta_1);
 * v = max(beta_2 * v, |g|); var -= lr / (1 - beta_1^t) * m / (v + epsilon). The new Keras Adamax computes the
 * same update (its slots are "m" and "u", interleaved per variable); it runs the same op here, which groups
 * the scalar factors as TensorFlow's kernel does (a rounding-level difference). */
#include <math.h>

#include "keras/optimizer_internal.h"

static bool adamax_slots(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    if (o->legacy) return tfc_opt_add_slot(o, ctx, vars, n, 0, "m", 0, st) && tfc_opt_add_slot(o, ctx, vars, n, 1, "v", 0, st);
    for (int i = 0; i < n; i++)
        if (!tfc_opt_add_slot(o, ctx, &vars[i], 1, 0, "m", 0, st) || !tfc_opt_add_slot(o, ctx, &vars[i], 1, 1, "u", 0, st))
            return false;
    return true;
}

static bool adamax_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *s,
                         const tfc_opt_step *p, tfc_status *st) {
    tfc_dtype dt = p->dt;
    double b1 = tfc_opt_hyper(o, dt, o->beta_1), b2 = tfc_opt_hyper(o, dt, o->beta_2);
    return tfc_opt_run(ctx, "ResourceApplyAdaMax",
                       (tfc_tensor *[]){tfc_variable_handle(var), tfc_variable_handle(s->slot[0]),
                                        tfc_variable_handle(s->slot[1]), tfc_opt_beta_power(o, ctx, p, b1, st),
                                        tfc_opt_scalar(ctx, dt, p->lr, st), tfc_opt_scalar(ctx, dt, b1, st),
                                        tfc_opt_scalar(ctx, dt, b2, st), tfc_opt_scalar(ctx, dt, o->epsilon, st), grad},
                       9, NULL, 0, st);
}

static bool adamax_get_config(const tfc_optimizer *o, cJSON *c) {
    return tfc_opt_json_num(c, "beta_1", o->beta_1) && tfc_opt_json_num(c, "beta_2", o->beta_2) &&
           tfc_opt_json_num(c, "epsilon", o->epsilon);
}

static bool adamax_from_config(tfc_optimizer *o, const cJSON *c, tfc_status *st) {
    if (!c) {
        o->beta_1 = 0.9, o->beta_2 = 0.999, o->epsilon = 1e-7;
        return true;
    }
    bool ok = tfc_json_get_f64(c, "beta_1", &o->beta_1, NULL, st) && tfc_json_get_f64(c, "beta_2", &o->beta_2, NULL, st) &&
              tfc_json_get_f64(c, "epsilon", &o->epsilon, NULL, st);
    if (ok && o->epsilon == 0) o->epsilon = 1e-7;
    return ok;
}

const tfc_opt_class tfc_opt_adamax = {
    .class_name = "Adamax", .default_lr = 0.001, .create_slots = adamax_slots, .apply_dense = adamax_apply,
    .get_config = adamax_get_config, .from_config = adamax_from_config,
};

tfc_optimizer *tfc_optimizers_adamax_new(const tfc_adamax_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_adamax, opts);
    if (!o) return NULL;
    o->decay = opts->decay;
    o->beta_1 = opts->beta_1 != 0 ? opts->beta_1 : 0.9;
    o->beta_2 = opts->beta_2 != 0 ? opts->beta_2 : 0.999;
    o->epsilon = opts->epsilon != 0 ? opts->epsilon : 1e-7;
    return o;
}
