/* RMSprop (tf_keras optimizers/legacy/rmsprop.py). With momentum > 0 the legacy optimizer runs
 * ResourceApplyRMSProp / ResourceApplyCenteredRMSProp:
 *   ms = ms + (g^2 - ms) * (1 - rho); mom = momentum * mom + lr * g / sqrt(ms + epsilon); var -= mom
 * (centered: ms - mg^2 + epsilon under the root). Without momentum it composes ops with epsilon OUTSIDE the
 * root, as Keras does: rms = rho * rms + (1 - rho) * g^2; var -= lr * g / (sqrt(rms [- mg^2]) + epsilon).
 * The new Keras RMSprop always puts epsilon inside: increment = lr * g * rsqrt(velocity [- avg^2] + epsilon).
 * Slots (each kind for every variable before the next): legacy "rms", "momentum", "mg"; new "velocity",
 * "momentum", "average_gradient". */
#include "keras/optimizer_internal.h"

static bool rms_slots(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    return tfc_opt_add_slot(o, ctx, vars, n, 0, o->legacy ? "rms" : "velocity", 0, st) &&
           (o->momentum <= 0 || tfc_opt_add_slot(o, ctx, vars, n, 1, "momentum", 0, st)) &&
           (!o->centered || tfc_opt_add_slot(o, ctx, vars, n, 2, o->legacy ? "mg" : "average_gradient", 0, st));
}

#define OP2(op, a, b) tfc_opt_op2(ctx, op, a, b, st)
#define OP1(op, a) tfc_opt_op1(ctx, op, a, st)
#define K(v) tfc_opt_scalar(ctx, dt, (v), st)

static bool rms_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *s,
                      const tfc_opt_step *p, tfc_status *st) {
    tfc_dtype dt = p->dt;
    tfc_tensor *lr = K(p->lr), *eps = K(o->epsilon);
    if (o->legacy) {
        double rho = tfc_opt_hyper(o, dt, o->rho), omr = tfc_opt_in(dt, 1.0 - rho);
        if (o->momentum > 0) {
            tfc_tensor *r = K(rho), *m = K(tfc_opt_hyper(o, dt, o->momentum));
            if (o->centered)
                return tfc_opt_run(ctx, "ResourceApplyCenteredRMSProp",
                                   (tfc_tensor *[]){tfc_variable_handle(var), tfc_variable_handle(s->slot[2]),
                                                    tfc_variable_handle(s->slot[0]), tfc_variable_handle(s->slot[1]),
                                                    lr, r, m, eps, grad},
                                   9, NULL, 0, st);
            return tfc_opt_run(ctx, "ResourceApplyRMSProp",
                               (tfc_tensor *[]){tfc_variable_handle(var), tfc_variable_handle(s->slot[0]),
                                                tfc_variable_handle(s->slot[1]), lr, r, m, eps, grad},
                               8, NULL, 0, st);
        }
        tfc_tensor *r = K(rho), *om = K(omr);
        tfc_tensor *rms = OP2("AddV2", OP2("Mul", r, tfc_opt_read(ctx, s->slot[0], st)), OP2("Mul", om, OP1("Square", grad)));
        if (!tfc_opt_assign(ctx, s->slot[0], rms, st)) return false;
        tfc_tensor *den = rms;
        if (o->centered) {
            tfc_tensor *mg = OP2("AddV2", OP2("Mul", r, tfc_opt_read(ctx, s->slot[2], st)), OP2("Mul", om, grad));
            if (!tfc_opt_assign(ctx, s->slot[2], mg, st)) return false;
            den = OP2("Sub", rms, OP1("Square", mg));
        }
        tfc_tensor *w = OP2("Sub", tfc_opt_read(ctx, var, st),
                            OP2("RealDiv", OP2("Mul", lr, grad), OP2("AddV2", OP1("Sqrt", den), eps)));
        return tfc_opt_assign(ctx, var, w, st);
    }
    /* new Keras RMSprop: rho and 1 - rho are Python floats cast to dt */
    tfc_tensor *r = K(tfc_opt_in(dt, o->rho)), *om = K(tfc_opt_in(dt, 1.0 - o->rho));
    tfc_tensor *vel = OP2("AddV2", OP2("Mul", r, tfc_opt_read(ctx, s->slot[0], st)), OP2("Mul", om, OP1("Square", grad)));
    if (!tfc_opt_assign(ctx, s->slot[0], vel, st)) return false;
    tfc_tensor *den;
    if (o->centered) {
        tfc_tensor *ag = OP2("AddV2", OP2("Mul", r, tfc_opt_read(ctx, s->slot[2], st)), OP2("Mul", om, grad));
        if (!tfc_opt_assign(ctx, s->slot[2], ag, st)) return false;
        den = OP2("AddV2", OP2("Sub", vel, OP1("Square", ag)), eps);
    } else {
        den = OP2("AddV2", vel, eps);
    }
    tfc_tensor *inc = OP2("Mul", OP2("Mul", lr, grad), OP1("Rsqrt", den));
    if (o->momentum > 0) {
        tfc_tensor *m = OP2("AddV2", OP2("Mul", K(tfc_opt_in(dt, o->momentum)), tfc_opt_read(ctx, s->slot[1], st)), inc);
        if (!tfc_opt_assign(ctx, s->slot[1], m, st)) return false;
        inc = m;
    }
    return inc && tfc_variable_assign_sub(ctx, var, inc, st);
}

static bool rms_get_config(const tfc_optimizer *o, cJSON *c) {
    return tfc_opt_json_num(c, "rho", o->rho) && tfc_opt_json_num(c, "momentum", o->momentum) &&
           tfc_opt_json_num(c, "epsilon", o->epsilon) && cJSON_AddBoolToObject(c, "centered", o->centered);
}

static bool rms_from_config(tfc_optimizer *o, const cJSON *c, tfc_status *st) {
    if (!c) {
        o->rho = 0.9, o->momentum = 0, o->epsilon = 1e-7, o->centered = false;
        return true;
    }
    bool ok = tfc_json_get_f64(c, "rho", &o->rho, NULL, st) && tfc_json_get_f64(c, "momentum", &o->momentum, NULL, st) &&
              tfc_json_get_f64(c, "epsilon", &o->epsilon, NULL, st) && tfc_json_get_bool(c, "centered", &o->centered, NULL, st);
    if (ok && o->epsilon == 0) o->epsilon = 1e-7;
    return ok;
}

static bool rms_validate(const tfc_optimizer *o, tfc_status *st) {
    if (o->momentum < 0 || o->momentum > 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: `momentum` must be between [0, 1]. Received: momentum=%g",
                              o->name, o->momentum);
    return true;
}

const tfc_opt_class tfc_opt_rmsprop = {
    .class_name = "RMSprop", .default_lr = 0.001, .create_slots = rms_slots, .apply_dense = rms_apply,
    .get_config = rms_get_config, .from_config = rms_from_config, .validate = rms_validate,
};

tfc_optimizer *tfc_optimizers_rmsprop_new(const tfc_rmsprop_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_rmsprop, opts);
    if (!o) return NULL;
    o->decay = opts->decay;
    o->rho = opts->has_rho || opts->rho != 0 ? opts->rho : 0.9;
    o->momentum = opts->momentum;
    o->epsilon = opts->epsilon != 0 ? opts->epsilon : 1e-7;
    o->centered = opts->centered;
    return o;
}
