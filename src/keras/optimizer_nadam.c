/* Nadam. The legacy (Keras 2.4) Nadam (tf_keras optimizers/legacy/nadam.py) keeps a momentum cache variable
 * (created before the slots, right after iterations in optimizer.weights) and uses the momentum schedule
 *   mu_t = beta_1 * (1 - 0.5 * 0.96^(schedule_decay * t)),  t = iterations + 1, schedule_decay = 0.004,
 *   cache_t = cache_{t-1} * mu_t (advanced once per apply_gradients),
 *   g' = g / (1 - cache_t);  m = beta_1 m + (1 - beta_1) g;  m' = m / (1 - cache_t * mu_{t+1});
 *   v = beta_2 v + (1 - beta_2) g^2;  v' = v / (1 - beta_2^t);
 *   var -= lr * ((1 - mu_t) g' + mu_{t+1} m') / (sqrt(v') + epsilon)
 * with the plain learning rate (no decay, no schedules: Keras rejects a schedule). The new Keras Nadam uses
 * 0.96^t (no schedule_decay), a u_product variable outside optimizer.weights, schedules, and m, v interleaved
 * per variable:
 *   m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
 *   var -= lr * (u_{t+1} m / (1 - U_t u_{t+1}) + (1 - u_t) g / (1 - U_t)) / (sqrt(v / (1 - beta_2^t)) + eps).
 * Both are composed from ops as Keras composes them. */
#include <math.h>

#include "keras/optimizer_internal.h"

/* prep row: 0 m_t (mu_t), 1 m_t_1, 2 m_schedule_new, 3 m_schedule_next, 4 v_t_prime_denominator */

static bool nadam_slots(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    if (!o->extra && n > 0) {
        tfc_dtype dt = tfc_variable_dtype(vars[0]);
        tfc_tensor *one = tfc_scalar(dt, 1.0, st);
        if (!one) return false;
        char name[300];
        snprintf(name, sizeof name, "%s/%s:0", o->name, o->legacy ? "momentum_cache" : "u_product");
        o->extra = tfc_variable_new(ctx, one, false, name, st);
        tfc_tensor_unref(one);
        if (!o->extra || (o->legacy && !tfc_opt_track_weight(o, o->extra, st))) return false;
    }
    if (o->legacy) return tfc_opt_add_slot(o, ctx, vars, n, 0, "m", 0, st) && tfc_opt_add_slot(o, ctx, vars, n, 1, "v", 0, st);
    for (int i = 0; i < n; i++)
        if (!tfc_opt_add_slot(o, ctx, &vars[i], 1, 0, "m", 0, st) || !tfc_opt_add_slot(o, ctx, &vars[i], 1, 1, "v", 0, st))
            return false;
    return true;
}

/* Once per apply (for each variable dtype): the schedule factors, and the cache advanced by one step (only
 * the cache's own dtype writes it, as Keras). Every dtype reads the cache's value from before this step. */
static bool nadam_prepare(tfc_optimizer *o, tfc_ctx *ctx, tfc_dtype dt, const tfc_opt_step *s, tfc_status *st) {
    double *p = tfc_opt_prep(o, dt, true);
    if (!p) return tfc_status_set(st, TFC_INTERNAL, "%s: too many variable dtypes", o->name);
    if (o->n_prep == 1) o->prep[0][7] = tfc_tensor_get_f64(tfc_variable_value(o->extra), 0); /* cache read */
    double cache = tfc_opt_in(dt, o->prep[0][7]);
    double b1 = tfc_opt_hyper(o, dt, o->beta_1), b2 = tfc_opt_hyper(o, dt, o->beta_2);
    double t = tfc_opt_in(dt, (double)(s->iterations + 1)), t1 = tfc_opt_in(dt, (double)(s->iterations + 2));
    double base = tfc_opt_in(dt, 0.96);
    double e = o->legacy ? tfc_opt_in(dt, o->decay) : 1.0;
    double mt = tfc_opt_in(dt, b1 * tfc_opt_in(dt, 1.0 - tfc_opt_in(dt, 0.5 * tfc_opt_in(dt, pow(base, tfc_opt_in(dt, e * t))))));
    double mt1 = tfc_opt_in(dt, b1 * tfc_opt_in(dt, 1.0 - tfc_opt_in(dt, 0.5 * tfc_opt_in(dt, pow(base, tfc_opt_in(dt, e * t1))))));
    double sched_new = tfc_opt_in(dt, cache * mt);
    p[0] = mt, p[1] = mt1, p[2] = sched_new, p[3] = tfc_opt_in(dt, sched_new * mt1);
    p[4] = tfc_opt_in(dt, 1.0 - tfc_opt_in(dt, pow(b2, t)));
    if (dt == tfc_variable_dtype(o->extra)) {
        tfc_tensor *v = tfc_opt_scalar(ctx, dt, sched_new, st);
        if (!v || !tfc_variable_assign(ctx, o->extra, v, st)) return false;
    }
    return true;
}

#define OP2(op, a, b) tfc_opt_op2(ctx, op, a, b, st)
#define OP1(op, a) tfc_opt_op1(ctx, op, a, st)
#define K(v) tfc_opt_scalar(ctx, dt, (v), st)

static bool nadam_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *grad, tfc_variable *var, tfc_opt_slots *s,
                        const tfc_opt_step *st_, tfc_status *st) {
    tfc_dtype dt = st_->dt;
    const double *p = tfc_opt_prep(o, dt, false);
    if (!p) return tfc_status_set(st, TFC_INTERNAL, "%s: no prepared coefficients for %s", o->name, tfc_dtype_name(dt));
    double b1 = tfc_opt_hyper(o, dt, o->beta_1), b2 = tfc_opt_hyper(o, dt, o->beta_2);
    double omb1 = tfc_opt_in(dt, 1.0 - b1), omb2 = tfc_opt_in(dt, 1.0 - b2);
    tfc_tensor *eps = K(o->epsilon);
    if (o->legacy) {
        double lr = tfc_opt_in(dt, (double)(float)o->learning_rate); /* the hyper, without decay */
        tfc_tensor *g_prime = OP2("RealDiv", grad, K(tfc_opt_in(dt, 1.0 - p[2])));
        tfc_tensor *m = OP2("AddV2", OP2("Mul", K(b1), tfc_opt_read(ctx, s->slot[0], st)), OP2("Mul", K(omb1), grad));
        if (!tfc_opt_assign(ctx, s->slot[0], m, st)) return false;
        tfc_tensor *m_prime = OP2("RealDiv", m, K(tfc_opt_in(dt, 1.0 - p[3])));
        tfc_tensor *v = OP2("AddV2", OP2("Mul", K(b2), tfc_opt_read(ctx, s->slot[1], st)), OP2("Mul", K(omb2), OP1("Square", grad)));
        if (!tfc_opt_assign(ctx, s->slot[1], v, st)) return false;
        tfc_tensor *v_prime = OP2("RealDiv", v, K(p[4]));
        tfc_tensor *m_bar = OP2("AddV2", OP2("Mul", K(tfc_opt_in(dt, 1.0 - p[0])), g_prime), OP2("Mul", K(p[1]), m_prime));
        tfc_tensor *w = OP2("Sub", tfc_opt_read(ctx, var, st),
                            OP2("RealDiv", OP2("Mul", K(lr), m_bar), OP2("AddV2", OP1("Sqrt", v_prime), eps)));
        return tfc_opt_assign(ctx, var, w, st);
    }
    /* new Keras Nadam */
    tfc_tensor *m0 = tfc_opt_read(ctx, s->slot[0], st);
    if (!tfc_opt_assign(ctx, s->slot[0], OP2("AddV2", m0, OP2("Mul", OP2("Sub", grad, m0), K(omb1))), st)) return false;
    tfc_tensor *v0 = tfc_opt_read(ctx, s->slot[1], st);
    if (!tfc_opt_assign(ctx, s->slot[1], OP2("AddV2", v0, OP2("Mul", OP2("Sub", OP1("Square", grad), v0), K(omb2))), st))
        return false;
    tfc_tensor *m = tfc_opt_read(ctx, s->slot[0], st), *v = tfc_opt_read(ctx, s->slot[1], st);
    tfc_tensor *m_hat = OP2("AddV2", OP2("RealDiv", OP2("Mul", K(p[1]), m), K(tfc_opt_in(dt, 1.0 - p[3]))),
                            OP2("RealDiv", OP2("Mul", K(tfc_opt_in(dt, 1.0 - p[0])), grad), K(tfc_opt_in(dt, 1.0 - p[2]))));
    tfc_tensor *v_hat = OP2("RealDiv", v, K(p[4]));
    tfc_tensor *d = OP2("RealDiv", OP2("Mul", m_hat, K(st_->lr)), OP2("AddV2", OP1("Sqrt", v_hat), eps));
    return d && tfc_variable_assign_sub(ctx, var, d, st);
}

static bool nadam_get_config(const tfc_optimizer *o, cJSON *c) {
    return tfc_opt_json_num(c, "beta_1", o->beta_1) && tfc_opt_json_num(c, "beta_2", o->beta_2) &&
           tfc_opt_json_num(c, "epsilon", o->epsilon);
}

static bool nadam_from_config(tfc_optimizer *o, const cJSON *c, tfc_status *st) {
    if (!c) {
        o->beta_1 = 0.9, o->beta_2 = 0.999, o->epsilon = 1e-7, o->decay = 0.004;
        return true;
    }
    /* Keras's Nadam(**config) sets decay from schedule_decay (default 0.004), ignoring "decay" */
    bool ok = tfc_json_get_f64(c, "beta_1", &o->beta_1, NULL, st) && tfc_json_get_f64(c, "beta_2", &o->beta_2, NULL, st) &&
              tfc_json_get_f64(c, "epsilon", &o->epsilon, NULL, st) &&
              (!o->legacy || tfc_json_get_f64(c, "schedule_decay", &o->decay, NULL, st));
    if (ok && o->epsilon == 0) o->epsilon = 1e-7;
    return ok;
}

static bool nadam_validate(const tfc_optimizer *o, tfc_status *st) {
    if (o->legacy && o->schedule)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: The Nadam optimizer does not support tf.keras.optimizers.LearningRateSchedules as "
                              "the learning rate.",
                              o->name);
    return true;
}

const tfc_opt_class tfc_opt_nadam = {
    .class_name = "Nadam", .default_lr = 0.001, .create_slots = nadam_slots, .prepare = nadam_prepare,
    .apply_dense = nadam_apply, .get_config = nadam_get_config, .from_config = nadam_from_config,
    .validate = nadam_validate,
};

tfc_optimizer *tfc_optimizers_nadam_new(const tfc_nadam_opts *opts) {
    tfc_optimizer *o = TFC_OPT_NEW(&tfc_opt_nadam, opts);
    if (!o) return NULL;
    o->decay = opts->has_schedule_decay || opts->schedule_decay != 0 ? opts->schedule_decay : 0.004;
    o->beta_1 = opts->beta_1 != 0 ? opts->beta_1 : 0.9;
    o->beta_2 = opts->beta_2 != 0 ? opts->beta_2 : 0.999;
    o->epsilon = opts->epsilon != 0 ? opts->epsilon : 1e-7;
    return o;
}
