/* The optimizer base: TensorFlow 2.4's OptimizerV2 (tf_keras/optimizers/legacy/optimizer_v2.py) —
 * iterations, slot variables created at the first apply, the learning rate from the schedule and decay,
 * apply_gradients (filter empty gradients, aggregate, clip, user transformers, one update per variable,
 * iterations += 1), minimize with a tape, get_config/from_config in Keras's JSON and optimizer.weights order.
 * The per-class update rules are in optimizer_<name>.c; the Keras 2.11+ optimizer family (read from configs
 * with "is_legacy_optimizer": false) differs where noted. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/variable.h"
#include "eager/context_internal.h"
#include "keras/optimizer_internal.h"
#include "tfc/function.h"
#include "tfc/keras/mixed_precision.h"

#define SHP(s) tfc_shape_str((s), (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR)

/* ---- construction ---------------------------------------------------------------------------------------- */

tfc_optimizer *tfc_opt_alloc(const tfc_opt_class *cls, const char *name, double learning_rate,
                             tfc_lr_schedule *schedule, double clipnorm, double clipvalue, double global_clipnorm,
                             tfc_gradient_hook aggregator, const tfc_gradient_hook *transformers, void *hook_user) {
    tfc_optimizer *o = tfc_calloc(1, sizeof *o);
    if (!o || !(o->name = tfc_strdup(name && *name ? name : cls->class_name))) {
        tfc_free(o);
        tfc_lr_schedule_free(schedule);
        return NULL;
    }
    o->cls = cls;
    o->legacy = true;
    o->learning_rate = learning_rate != 0 ? learning_rate : cls->default_lr;
    o->schedule = schedule;
    o->clipnorm = clipnorm, o->has_clipnorm = clipnorm != 0;
    o->clipvalue = clipvalue, o->has_clipvalue = clipvalue != 0;
    o->global_clipnorm = global_clipnorm, o->has_global_clipnorm = global_clipnorm != 0;
    o->gradient_aggregator = aggregator;
    for (int i = 0; transformers && i < 4 && transformers[i]; i++) o->gradient_transformers[o->n_transformers++] = transformers[i];
    o->hook_user = hook_user;
    o->epsilon = 1e-7;
    return o;
}

void tfc_optimizer_free(tfc_optimizer *o) {
    if (!o) return;
    tfc_optimizer_free(o->inner);
    for (int i = 0; i < o->n_slots; i++)
        for (int k = 0; k < TFC_OPT_MAX_SLOTS; k++) tfc_variable_free(o->slots[i].slot[k]);
    tfc_variable_free(o->iterations);
    tfc_variable_free(o->extra);
    for (int i = 0; i < 6; i++) tfc_tensor_unref(o->consts[i]);
    tfc_free(o->slots);
    tfc_free(o->weights);
    tfc_lr_schedule_free(o->schedule);
    tfc_free(o->name);
    tfc_free(o);
}

const char *tfc_optimizer_name(const tfc_optimizer *o) { return o->name; }
const char *tfc_optimizer_class_name(const tfc_optimizer *o) { return o->cls->class_name; }

int64_t tfc_optimizer_iterations(const tfc_optimizer *o) {
    if (o->inner) return tfc_optimizer_iterations(o->inner); /* LossScaleOptimizer: the inner one's */
    const tfc_tensor *t = o->iterations ? tfc_variable_value(o->iterations) : NULL;
    return t ? ((const int64_t *)tfc_tensor_data(t))[0] : 0;
}

/* The learning rate in float32 (both Keras families hold it in a float32 variable or compute the schedule in
 * float32), before legacy decay. */
static double base_lr(const tfc_optimizer *o, int64_t step) {
    return (double)(float)(o->schedule ? tfc_lr_schedule_value(o->schedule, step) : o->learning_rate);
}

double tfc_optimizer_learning_rate(const tfc_optimizer *o) {
    return o->inner ? tfc_optimizer_learning_rate(o->inner) : base_lr(o, tfc_optimizer_iterations(o));
}

void tfc_optimizer_set_learning_rate(tfc_optimizer *o, double lr) {
    if (o->inner) o = o->inner;
    tfc_lr_schedule_free(o->schedule);
    o->schedule = NULL;
    o->learning_rate = lr;
}

int tfc_optimizer_variables(const tfc_optimizer *o, tfc_variable **out, int max) {
    if (o->inner) return tfc_optimizer_variables(o->inner, out, max);
    for (int i = 0; i < o->n_weights && i < max; i++) out[i] = o->weights[i];
    return o->n_weights;
}

/* ---- helpers for the classes ----------------------------------------------------------------------------- */

double tfc_opt_in(tfc_dtype dt, double x) { return dt == TFC_DOUBLE ? x : (double)(float)x; }

double tfc_opt_hyper(const tfc_optimizer *o, tfc_dtype dt, double x) {
    return tfc_opt_in(dt, o->legacy ? (double)(float)x : x);
}

tfc_tensor *tfc_opt_scalar(tfc_ctx *ctx, tfc_dtype dt, double v, tfc_status *st) {
    if (st->code != TFC_OK) return NULL;
    tfc_tensor *t = tfc_scalar(dt, v, st);
    return t && tfc_scope_track(ctx, t, st) ? t : NULL;
}

bool tfc_opt_run(tfc_ctx *ctx, const char *op, tfc_tensor *const *in, int n, const tfc_attr *attrs, int n_attrs,
                 tfc_status *st) {
    if (st->code != TFC_OK) return false;
    for (int i = 0; i < n; i++)
        if (!in[i]) return false; /* an input failed (st set) */
    tfc_tensor *out[1];
    return tfc_execute(ctx, op, in, n, attrs, n_attrs, out, 0, st) >= 0;
}

tfc_tensor *tfc_opt_op2(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return a && b && st->code == TFC_OK ? tfc_emit(ctx, op, (tfc_tensor *[]){a, b}, 2, NULL, 0, st) : NULL;
}

tfc_tensor *tfc_opt_op1(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_status *st) {
    return a && st->code == TFC_OK ? tfc_emit(ctx, op, &a, 1, NULL, 0, st) : NULL;
}

tfc_tensor *tfc_opt_read(tfc_ctx *ctx, tfc_variable *v, tfc_status *st) {
    return st->code == TFC_OK ? tfc_variable_read(ctx, v, st) : NULL;
}

bool tfc_opt_assign(tfc_ctx *ctx, tfc_variable *v, tfc_tensor *value, tfc_status *st) {
    return value && tfc_variable_assign(ctx, v, value, st);
}

bool tfc_opt_track_weight(tfc_optimizer *o, tfc_variable *v, tfc_status *st) {
    if (o->n_weights == o->cap_weights) {
        int cap = o->cap_weights ? o->cap_weights * 2 : 16;
        tfc_variable **w = tfc_realloc(o->weights, (size_t)cap * sizeof *w);
        if (!w) return tfc_status_oom(st, o->name, (size_t)cap * sizeof *w);
        o->weights = w;
        o->cap_weights = cap;
    }
    o->weights[o->n_weights++] = v;
    return true;
}

tfc_opt_slots *tfc_opt_find_slots(const tfc_optimizer *o, const tfc_variable *var) {
    uint64_t id = var->id;
    for (int i = 0; i < o->n_slots; i++)
        if (o->slots[i].var_id == id) return &o->slots[i];
    return NULL;
}

static tfc_opt_slots *slots_for(tfc_optimizer *o, const tfc_variable *var, tfc_status *st) {
    tfc_opt_slots *s = tfc_opt_find_slots(o, var);
    if (s) return s;
    if (o->n_slots == o->cap_slots) {
        int cap = o->cap_slots ? o->cap_slots * 2 : 16;
        tfc_opt_slots *n = tfc_realloc(o->slots, (size_t)cap * sizeof *n);
        if (!n) {
            tfc_status_oom(st, o->name, (size_t)cap * sizeof *n);
            return NULL;
        }
        o->slots = n;
        o->cap_slots = cap;
    }
    s = &o->slots[o->n_slots++];
    memset(s, 0, sizeof *s);
    s->var_id = var->id;
    return s;
}

/* "dense/kernel:0" -> "dense/kernel" (Keras's var._shared_name) */
static void shared_name(const tfc_variable *v, char *buf, size_t size) {
    const char *n = tfc_variable_name(v);
    size_t len = strlen(n);
    if (len > 2 && !strcmp(n + len - 2, ":0")) len -= 2;
    snprintf(buf, size, "%.*s", (int)len, n);
}

bool tfc_opt_add_slot(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, int kind,
                      const char *slot_name, double init, tfc_status *st) {
    for (int i = 0; i < n; i++) {
        tfc_opt_slots *s = slots_for(o, vars[i], st);
        if (!s) return false;
        if (s->slot[kind]) continue;
        const tfc_shape *shape = tfc_variable_shape(vars[i]);
        tfc_dtype dt = tfc_variable_dtype(vars[i]);
        tfc_tensor *t = tfc_tensor_new(dt, shape->dims, shape->rank, st);
        if (!t) return false;
        if (init != 0) {
            void *p = tfc_tensor_mutable_data(t);
            for (int64_t j = 0; j < tfc_tensor_num_elements(t); j++) tfc_dtype_set_f64(dt, p, j, init);
        }
        char sn[200], name[300];
        shared_name(vars[i], sn, sizeof sn);
        /* Keras's variable names: legacy "Adam/dense/kernel/m:0", new "Adam/m/dense/kernel:0" */
        if (o->legacy) snprintf(name, sizeof name, "%s/%s/%s:0", o->name, sn, slot_name);
        else snprintf(name, sizeof name, "%s/%s/%s:0", o->name, slot_name, sn);
        snprintf(o->slot_names[kind], sizeof o->slot_names[kind], "%s", slot_name);
        tfc_variable *v = tfc_variable_new(ctx, t, false, name, st);
        tfc_tensor_unref(t);
        if (!v) return false;
        s = tfc_opt_find_slots(o, vars[i]); /* (slots_for may have moved the array; it did not since) */
        s->slot[kind] = v;
        if (!tfc_opt_track_weight(o, v, st)) return false;
    }
    return true;
}

tfc_variable *tfc_optimizer_get_slot(const tfc_optimizer *o, const tfc_variable *var, const char *slot_name) {
    const tfc_opt_slots *s = tfc_opt_find_slots(o, var);
    if (!s || !slot_name) return NULL;
    for (int k = 0; k < TFC_OPT_MAX_SLOTS; k++)
        if (s->slot[k] && !strcmp(o->slot_names[k], slot_name)) return s->slot[k];
    return NULL;
}

double *tfc_opt_prep(tfc_optimizer *o, tfc_dtype dt, bool add) {
    for (int i = 0; i < o->n_prep; i++)
        if (o->prep_dt[i] == dt) return o->prep[i];
    if (!add || o->n_prep == 4) return NULL;
    o->prep_dt[o->n_prep] = dt;
    memset(o->prep[o->n_prep], 0, sizeof o->prep[0]);
    return o->prep[o->n_prep++];
}

/* ---- validation (Keras's constructor errors) ------------------------------------------------------------ */

static bool validate(const tfc_optimizer *o, tfc_status *st) {
    const char *keys[3] = {"clipnorm", "clipvalue", "global_clipnorm"};
    double vals[3] = {o->clipnorm, o->clipvalue, o->global_clipnorm};
    for (int i = 0; i < 3; i++)
        if (vals[i] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Expected %s >= 0, received: %g", o->name, keys[i],
                                  vals[i]);
    if (o->legacy && o->decay < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: decay cannot be less than 0. Received: decay=%g.",
                              o->name, o->decay);
    if (o->legacy && o->has_clipnorm && o->has_global_clipnorm)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: Cannot accept both `clipnorm` and `global_clipnorm`. Received: `clipnorm`=%g, "
                              "`global_clipnorm`=%g.",
                              o->name, o->clipnorm, o->global_clipnorm);
    if (o->n_transformers && (o->has_clipnorm || o->has_clipvalue || o->has_global_clipnorm))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: `%s` cannot be set when `gradient_transformers` is set. Instead, use the "
                              "`gradient_transformers` to specify clipping and other transformations.",
                              o->name, o->has_clipnorm ? "clipnorm" : o->has_global_clipnorm ? "global_clipnorm" : "clipvalue");
    if (!(o->learning_rate >= 0) && !o->schedule)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: learning_rate must be >= 0, received: %g", o->name,
                              o->learning_rate);
    return !o->cls->validate || o->cls->validate(o, st);
}

/* ---- clipping (tf.clip_by_value, tf.clip_by_norm, tf.clip_by_global_norm, built from ops) ---------------- */

static tfc_tensor *clip_by_norm(tfc_ctx *ctx, tfc_tensor *g, double clip, tfc_status *st) {
    tfc_dtype dt = tfc_tensor_dtype(g);
    int r = tfc_tensor_rank(g);
    int64_t axes[TFC_MAX_RANK];
    for (int i = 0; i < r; i++) axes[i] = i;
    tfc_tensor *ax = tfc_vec_i64(axes, r, st);
    if (!ax || !tfc_scope_track(ctx, ax, st)) return NULL;
    tfc_tensor *c = tfc_opt_scalar(ctx, dt, clip, st);
    /* l2sum = sum(g * g, keepdims); l2norm = where(l2sum > 0, sqrt(l2sum), l2sum) (no NaN gradient at 0) */
    tfc_tensor *sq = tfc_opt_op2(ctx, "Mul", g, g, st);
    tfc_attr kd = TFC_ATTR_B("keep_dims", true);
    tfc_tensor *l2sum = sq ? tfc_emit(ctx, "Sum", (tfc_tensor *[]){sq, ax}, 2, &kd, 1, st) : NULL;
    tfc_tensor *zero = tfc_opt_scalar(ctx, dt, 0.0, st);
    tfc_tensor *pred = tfc_opt_op2(ctx, "Greater", l2sum, zero, st);
    tfc_tensor *ones = tfc_opt_op1(ctx, "OnesLike", l2sum, st);
    tfc_tensor *safe = pred ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){pred, l2sum, ones}, 3, NULL, 0, st) : NULL;
    tfc_tensor *sqrt_ = tfc_opt_op1(ctx, "Sqrt", safe, st);
    tfc_tensor *l2norm = sqrt_ ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){pred, sqrt_, l2sum}, 3, NULL, 0, st) : NULL;
    tfc_tensor *num = tfc_opt_op2(ctx, "Mul", g, c, st);
    tfc_tensor *den = tfc_opt_op2(ctx, "Maximum", l2norm, c, st);
    return tfc_opt_op2(ctx, "RealDiv", num, den, st);
}

/* tf.clip_by_global_norm: norm = sqrt(sum of 2 * l2_loss(g)); g * clip * min(1/norm, 1/clip) (NaN when the
 * norm is not finite, as TensorFlow). NULL entries stay NULL. */
static bool clip_by_global_norm(tfc_ctx *ctx, tfc_tensor **g, int n, double clip, tfc_status *st) {
    tfc_tensor *half = NULL;
    tfc_dtype dt = TFC_FLOAT;
    for (int i = 0; i < n; i++) {
        if (!g[i]) continue;
        dt = tfc_tensor_dtype(g[i]);
        break;
    }
    for (int i = 0; i < n; i++) {
        if (!g[i]) continue;
        tfc_tensor *l = tfc_opt_op1(ctx, "L2Loss", g[i], st);
        if (l && tfc_tensor_dtype(l) != dt) {
            tfc_attr a = TFC_ATTR_T("DstT", dt);
            l = tfc_emit(ctx, "Cast", &l, 1, &a, 1, st);
        }
        half = half ? tfc_opt_op2(ctx, "AddV2", half, l, st) : l;
        if (!half) return false;
    }
    if (!half) return true;
    tfc_tensor *two = tfc_opt_scalar(ctx, dt, 2.0, st), *one = tfc_opt_scalar(ctx, dt, 1.0, st);
    tfc_tensor *c = tfc_opt_scalar(ctx, dt, clip, st);
    tfc_tensor *norm = tfc_opt_op1(ctx, "Sqrt", tfc_opt_op2(ctx, "Mul", half, two, st), st);
    tfc_tensor *inv_c = tfc_opt_op2(ctx, "RealDiv", one, c, st);
    tfc_tensor *scale = tfc_opt_op2(ctx, "Mul", c,
                                    tfc_opt_op2(ctx, "Minimum", tfc_opt_op2(ctx, "RealDiv", one, norm, st), inv_c, st), st);
    scale = tfc_opt_op2(ctx, "AddV2", scale, tfc_opt_op2(ctx, "Sub", norm, norm, st), st);
    if (!scale) return false;
    for (int i = 0; i < n; i++) {
        if (!g[i]) continue;
        tfc_tensor *s = scale;
        if (tfc_tensor_dtype(g[i]) != dt) {
            tfc_attr a = TFC_ATTR_T("DstT", tfc_tensor_dtype(g[i]));
            s = tfc_emit(ctx, "Cast", &scale, 1, &a, 1, st);
        }
        if (!(g[i] = tfc_opt_op2(ctx, "Mul", g[i], s, st))) return false;
    }
    return true;
}

static bool clip_value(tfc_ctx *ctx, tfc_tensor **g, double v, tfc_status *st) {
    tfc_dtype dt = tfc_tensor_dtype(*g);
    tfc_tensor *lo = tfc_opt_scalar(ctx, dt, -v, st), *hi = tfc_opt_scalar(ctx, dt, v, st);
    *g = lo && hi ? tfc_emit(ctx, "ClipByValue", (tfc_tensor *[]){*g, lo, hi}, 3, NULL, 0, st) : NULL;
    return *g != NULL;
}

/* OptimizerV2._transform_gradients: clipvalue, clipnorm, global_clipnorm, then the user's transformers. The
 * new family clips with one rule only: clipnorm, else global_clipnorm, else clipvalue. */
static bool transform(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor **g, tfc_variable **v, int n, tfc_status *st) {
    bool cv = o->has_clipvalue && o->clipvalue > 0, cn = o->has_clipnorm && o->clipnorm > 0,
         gn = o->has_global_clipnorm && o->global_clipnorm > 0;
    if (!o->legacy) {
        if (cn) cv = gn = false;
        else if (gn) cv = false;
    }
    for (int i = 0; cv && i < n; i++)
        if (g[i] && !clip_value(ctx, &g[i], o->clipvalue, st)) return false;
    for (int i = 0; cn && i < n; i++)
        if (g[i] && !(g[i] = clip_by_norm(ctx, g[i], o->clipnorm, st))) return false;
    if (gn && !clip_by_global_norm(ctx, g, n, o->global_clipnorm, st)) return false;
    for (int t = 0; t < o->n_transformers; t++)
        if (!o->gradient_transformers[t](o->hook_user, ctx, g, v, n, st)) return false;
    return true;
}

static bool ensure_iterations(tfc_optimizer *o, tfc_ctx *ctx, tfc_status *st);

bool tfc_optimizer_traceable(const tfc_optimizer *o) {
    return o && !o->inner && o->cls != &tfc_opt_loss_scale && o->cls != &tfc_opt_nadam && !o->schedule &&
           !(o->legacy && o->decay > 0) && !o->gradient_aggregator && o->n_transformers == 0;
}

tfc_tensor *tfc_opt_beta_power(tfc_optimizer *o, tfc_ctx *ctx, const tfc_opt_step *p, double beta, tfc_status *st) {
    tfc_dtype dt = p->dt;
    if (!tfc_inside_function(ctx))
        return tfc_opt_scalar(ctx, dt, tfc_opt_in(dt, pow(beta, tfc_opt_in(dt, (double)(p->iterations + 1)))), st);
    /* each step is checked before the next: a later successful call would clear the status of a failed one */
    tfc_tensor *it = tfc_opt_read(ctx, o->iterations, st), *one, *b;
    tfc_attr to_d = TFC_ATTR_T("DstT", TFC_DOUBLE);
    tfc_tensor *t = it ? tfc_emit(ctx, "Cast", &it, 1, &to_d, 1, st) : NULL;
    if (!t || !(one = tfc_opt_scalar(ctx, TFC_DOUBLE, 1.0, st)) || !(t = tfc_opt_op2(ctx, "AddV2", t, one, st)) ||
        !(b = tfc_opt_scalar(ctx, TFC_DOUBLE, beta, st)))
        return NULL;
    tfc_tensor *r = tfc_opt_op2(ctx, "Pow", b, t, st);
    if (r && dt != TFC_DOUBLE) {
        tfc_attr to_f = TFC_ATTR_T("DstT", TFC_FLOAT);
        r = tfc_emit(ctx, "Cast", &r, 1, &to_f, 1, st);
        if (r && dt != TFC_FLOAT) {
            tfc_attr to_dt = TFC_ATTR_T("DstT", dt);
            r = tfc_emit(ctx, "Cast", &r, 1, &to_dt, 1, st);
        }
    }
    return r;
}

/* ---- apply_gradients ------------------------------------------------------------------------------------- */

static bool ensure_iterations(tfc_optimizer *o, tfc_ctx *ctx, tfc_status *st) {
    if (o->iterations) return true;
    tfc_tensor *zero = tfc_scalar_i64(0, st);
    if (!zero) return false;
    char name[300];
    if (o->legacy) snprintf(name, sizeof name, "%s/iter:0", o->name);
    else snprintf(name, sizeof name, "iteration:0");
    o->iterations = tfc_variable_new(ctx, zero, false, name, st);
    tfc_tensor_unref(zero);
    if (!o->iterations) return false;
    o->ctx = ctx;
    return tfc_opt_track_weight(o, o->iterations, st);
}

/* The step's learning rate in dt: legacy _decayed_lr = schedule(iterations) / (1 + decay * iterations). */
static double step_lr(const tfc_optimizer *o, tfc_dtype dt, int64_t it) {
    double lr = tfc_opt_in(dt, base_lr(o, it));
    if (o->legacy && o->decay > 0 && o->cls != &tfc_opt_nadam) {
        double step = tfc_opt_in(dt, (double)it), d = tfc_opt_in(dt, o->decay);
        lr = tfc_opt_in(dt, lr / tfc_opt_in(dt, 1.0 + tfc_opt_in(dt, d * step)));
    }
    return lr;
}

/* A gradient's shape fits its variable: equal, or (a symbolic gradient inside a trace) compatible, its unknown
 * dims left to the update op's kernel to check. */
static bool shape_fits(const tfc_shape *g, const tfc_shape *v) {
    if (g->rank < 0) return true;
    if (g->rank != v->rank) return false;
    for (int i = 0; i < g->rank; i++)
        if (g->dims[i] >= 0 && g->dims[i] != v->dims[i]) return false;
    return true;
}

static bool is_float(tfc_dtype dt) { return dt == TFC_FLOAT || dt == TFC_DOUBLE || dt == TFC_HALF || dt == TFC_BFLOAT16; }

/* new family: var -= var * weight_decay * lr (AdamW, and any optimizer given weight_decay) */
static bool weight_decay(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *v, const tfc_opt_step *s, tfc_status *st) {
    tfc_tensor *x = tfc_opt_read(ctx, v, st);
    tfc_tensor *d = tfc_opt_op2(ctx, "Mul", tfc_opt_op2(ctx, "Mul", x, tfc_opt_scalar(ctx, s->dt, o->weight_decay, st), st),
                                tfc_opt_scalar(ctx, s->dt, s->lr, st), st);
    return d && tfc_variable_assign_sub(ctx, v, d, st);
}

static bool apply_locked(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads, tfc_variable *const *vars, int n,
                         tfc_tensor **g, tfc_variable **v, tfc_status *st) {
    tfc_status_clear(st); /* the helpers are sticky (optimizer_internal.h) */
    if (!validate(o, st)) return false;
    if (o->ctx && o->ctx != ctx)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: apply_gradients in another context than its variables'",
                              o->name);
    /* filter_empty_gradients */
    int m = 0;
    char missing[200] = "";
    for (int i = 0; i < n; i++) {
        if (!vars[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: variable %d is NULL", o->name, i);
        if (!grads[i]) {
            size_t len = strlen(missing);
            snprintf(missing + len, sizeof missing - len, "%s'%s'", len ? ", " : "", tfc_variable_name(vars[i]));
            continue;
        }
        tfc_dtype vd = tfc_variable_dtype(vars[i]);
        if (!is_float(vd))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: Invalid type %s for %s, expected: [float16, bfloat16, float32, float64].",
                                  o->name, tfc_dtype_name(vd), tfc_variable_name(vars[i]));
        if (tfc_tensor_dtype(grads[i]) != vd || !shape_fits(tfc_tensor_shape(grads[i]), tfc_variable_shape(vars[i])))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: gradient for variable '%s' has dtype %s and shape %s, but the variable is %s %s",
                                  o->name, tfc_variable_name(vars[i]), tfc_dtype_name(tfc_tensor_dtype(grads[i])),
                                  SHP(tfc_tensor_shape(grads[i])), tfc_dtype_name(vd), SHP(tfc_variable_shape(vars[i])));
        g[m] = grads[i];
        v[m++] = vars[i];
    }
    if (m == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: No gradients provided for any variable: [%s].", o->name,
                              missing);
    if (m < n)
        tfc_log(TFC_LOG_WARNING,
                "Gradients do not exist for variables [%s] when minimizing the loss. If you're using "
                "`model.compile()`, did you forget to provide a `loss` argument?",
                missing);
    /* _create_all_weights, then _prepare (per dtype), before the gradients are transformed */
    if (!ensure_iterations(o, ctx, st) || !o->cls->create_slots(o, ctx, v, m, st)) return false;
    int64_t it = tfc_optimizer_iterations(o);
    o->n_prep = 0;
    tfc_dtype seen[4];
    int n_seen = 0;
    for (int i = 0; i < m; i++) {
        tfc_dtype dt = tfc_variable_dtype(v[i]);
        bool dup = false;
        for (int j = 0; j < n_seen; j++) dup |= seen[j] == dt;
        if (dup) continue;
        if (n_seen == 4)
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: variables of more than 4 dtypes in one apply", o->name);
        seen[n_seen++] = dt;
        tfc_opt_step s = {.dt = dt, .iterations = it, .lr = step_lr(o, dt, it)};
        if (o->cls->prepare && !o->cls->prepare(o, ctx, dt, &s, st)) return false;
    }
    if (o->gradient_aggregator && !o->gradient_aggregator(o->hook_user, ctx, g, v, m, st)) return false;
    if (!transform(o, ctx, g, v, m, st)) return false;
    if (!o->legacy && o->has_weight_decay && o->weight_decay != 0)
        for (int i = 0; i < m; i++) {
            if (!g[i]) continue;
            tfc_dtype dt = tfc_variable_dtype(v[i]);
            tfc_opt_step s = {.dt = dt, .iterations = it, .lr = step_lr(o, dt, it)};
            if (!weight_decay(o, ctx, v[i], &s, st)) return false;
        }
    for (int i = 0; i < m; i++) {
        if (!g[i]) continue;
        tfc_dtype dt = tfc_variable_dtype(v[i]);
        if (tfc_tensor_dtype(g[i]) != dt || !shape_fits(tfc_tensor_shape(g[i]), tfc_variable_shape(v[i])))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: a gradient hook returned %s %s for variable '%s' (%s %s)", o->name,
                                  tfc_dtype_name(tfc_tensor_dtype(g[i])), SHP(tfc_tensor_shape(g[i])),
                                  tfc_variable_name(v[i]), tfc_dtype_name(dt), SHP(tfc_variable_shape(v[i])));
        tfc_opt_step s = {.dt = dt, .iterations = it, .lr = step_lr(o, dt, it)};
        if (!tfc_scope_begin(ctx, st)) return false;
        bool ok = o->cls->apply_dense(o, ctx, g[i], v[i], tfc_opt_find_slots(o, v[i]), &s, st);
        tfc_scope_end(ctx);
        if (!ok) return false;
    }
    tfc_tensor *one = tfc_opt_scalar(ctx, TFC_INT64, 1, st);
    return one && tfc_variable_assign_add(ctx, o->iterations, one, st);
}

bool tfc_opt_skip_step(tfc_optimizer *o, tfc_ctx *ctx, tfc_status *st) {
    if (!tfc_scope_begin(ctx, st)) return false;
    tfc_tensor *one = NULL;
    bool ok = ensure_iterations(o, ctx, st) && (one = tfc_opt_scalar(ctx, TFC_INT64, 1, st)) &&
              tfc_variable_assign_add(ctx, o->iterations, one, st);
    tfc_scope_end(ctx);
    return ok;
}

bool tfc_optimizer_build(tfc_optimizer *o, tfc_ctx *ctx, tfc_variable *const *vars, int n, tfc_status *st) {
    if (o->inner) return tfc_optimizer_build(o->inner, ctx, vars, n, st);
    if (o->ctx && o->ctx != ctx)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: built in another context than its variables'", o->name);
    if (!validate(o, st) || !tfc_scope_begin(ctx, st)) return false;
    bool ok = ensure_iterations(o, ctx, st) && (n == 0 || o->cls->create_slots(o, ctx, vars, n, st));
    tfc_scope_end(ctx);
    return ok;
}

bool tfc_optimizer_apply_gradients(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads,
                                   tfc_variable *const *vars, int n, tfc_status *st) {
    if (!o || !ctx || n < 0 || (n > 0 && (!grads || !vars)))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "apply_gradients: bad arguments");
    if (o->inner) return tfc_opt_loss_scale_apply(o, ctx, grads, vars, n, st);
    tfc_tensor **g = tfc_malloc((size_t)(n > 0 ? n : 1) * sizeof *g);
    tfc_variable **v = tfc_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    if (!g || !v) {
        tfc_free(g);
        tfc_free(v);
        return tfc_status_oom(st, o->name, (size_t)n * sizeof *g);
    }
    bool ok = tfc_scope_begin(ctx, st);
    if (ok) {
        tfc_ctx_stop_recording(ctx); /* optimizer updates are never recorded on tapes */
        ok = apply_locked(o, ctx, grads, vars, n, g, v, st);
        tfc_ctx_start_recording(ctx);
        tfc_scope_end(ctx);
    }
    tfc_free(g);
    tfc_free(v);
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_optimizer_minimize(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *loss, tfc_variable *const *vars, int n,
                            tfc_tape *tape, tfc_status *st) {
    if (!tape || !loss) {
        tfc_tape_free(tape);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: `tape` is required when a `Tensor` loss is passed (minimize got %s)",
                              o ? o->name : "optimizer", tape ? "no loss" : "no tape");
    }
    tfc_tensor **g = tfc_calloc((size_t)(n > 0 ? n : 1), sizeof *g);
    if (!g) {
        tfc_tape_free(tape);
        return tfc_status_oom(st, "minimize", (size_t)n * sizeof *g);
    }
    bool ok = tfc_scope_begin(ctx, st);
    if (ok) {
        if (o && o->inner) /* LossScaleOptimizer: gradients of the scaled loss, unscaled */
            ok = (loss = tfc_loss_scale_optimizer_get_scaled_loss(o, ctx, loss, st)) != NULL;
        ok = ok && tfc_tape_gradient(tape, loss, NULL, 0, vars, n, TFC_UNCONNECTED_NONE, g, st);
        if (ok && o && o->inner) ok = tfc_loss_scale_optimizer_get_unscaled_gradients(o, ctx, g, n, g, st);
        tfc_tape_free(tape);
        tape = NULL;
        ok = ok && tfc_optimizer_apply_gradients(o, ctx, g, vars, n, st);
        tfc_scope_end(ctx);
    }
    tfc_tape_free(tape);
    tfc_free(g);
    return ok;
}

/* ---- configs --------------------------------------------------------------------------------------------- */

bool tfc_opt_json_num(cJSON *cfg, const char *key, double v) { return cJSON_AddNumberToObject(cfg, key, v) != NULL; }

static bool add_opt_num(cJSON *cfg, const char *key, bool has, double v) {
    return has ? cJSON_AddNumberToObject(cfg, key, v) != NULL : cJSON_AddNullToObject(cfg, key) != NULL;
}

char *tfc_optimizer_get_config(const tfc_optimizer *o, tfc_status *st) {
    if (o->inner) return tfc_opt_loss_scale_config(o, st);
    cJSON *c = cJSON_CreateObject();
    bool ok = c && cJSON_AddStringToObject(c, "name", o->name);
    if (o->legacy) {
        if (ok && o->has_clipnorm) ok = tfc_opt_json_num(c, "clipnorm", o->clipnorm);
        if (ok && o->has_clipvalue) ok = tfc_opt_json_num(c, "clipvalue", o->clipvalue);
        if (ok && o->has_global_clipnorm) ok = tfc_opt_json_num(c, "global_clipnorm", o->global_clipnorm);
    } else {
        ok = ok && add_opt_num(c, "weight_decay", o->has_weight_decay, o->weight_decay) &&
             add_opt_num(c, "clipnorm", o->has_clipnorm, o->clipnorm) &&
             add_opt_num(c, "global_clipnorm", o->has_global_clipnorm, o->global_clipnorm) &&
             add_opt_num(c, "clipvalue", o->has_clipvalue, o->clipvalue) && cJSON_AddFalseToObject(c, "use_ema") &&
             cJSON_AddNumberToObject(c, "ema_momentum", 0.99) && /* RMSprop's constructor default is 100, the others' None */
             (o->cls == &tfc_opt_rmsprop ? cJSON_AddNumberToObject(c, "ema_overwrite_frequency", 100) != NULL
                                         : cJSON_AddNullToObject(c, "ema_overwrite_frequency") != NULL) &&
             cJSON_AddFalseToObject(c, "jit_compile") && cJSON_AddFalseToObject(c, "is_legacy_optimizer");
    }
    if (ok) {
        cJSON *lr = o->schedule ? tfc_lr_schedule_to_json(o->schedule, tfc_optimizer_iterations(o))
                                /* the new family reports its float32 variable */
                                : cJSON_CreateNumber(o->legacy ? o->learning_rate : (double)(float)o->learning_rate);
        ok = lr && cJSON_AddItemToObject(c, "learning_rate", lr);
        if (!ok) cJSON_Delete(lr);
    }
    if (ok && o->legacy) ok = tfc_opt_json_num(c, "decay", o->decay);
    ok = ok && o->cls->get_config(o, c);
    char *s = ok ? tfc_json_print(c) : NULL;
    cJSON_Delete(c);
    if (!s) tfc_status_oom(st, "get_config", 0);
    return s;
}

static const struct {
    const char *name;
    const tfc_opt_class *cls;
} opt_names[] = {
    {"sgd", &tfc_opt_sgd},         {"SGD", &tfc_opt_sgd},           {"adam", &tfc_opt_adam},
    {"Adam", &tfc_opt_adam},       {"adamw", &tfc_opt_adamw},       {"AdamW", &tfc_opt_adamw},
    {"rmsprop", &tfc_opt_rmsprop}, {"RMSprop", &tfc_opt_rmsprop},   {"RMSProp", &tfc_opt_rmsprop},
    {"adagrad", &tfc_opt_adagrad}, {"Adagrad", &tfc_opt_adagrad},   {"adamax", &tfc_opt_adamax},
    {"Adamax", &tfc_opt_adamax},   {"nadam", &tfc_opt_nadam},       {"Nadam", &tfc_opt_nadam},
};

static const tfc_opt_class *find_class(const char *name) {
    if (!strncmp(name, "Custom>", 7)) name += 7;
    for (size_t i = 0; i < sizeof opt_names / sizeof *opt_names; i++)
        if (!strcmp(name, opt_names[i].name)) return opt_names[i].cls;
    return NULL;
}

static bool get_clip(const cJSON *c, const char *key, double *v, bool *has, tfc_status *st) {
    if (!tfc_json_get_f64(c, key, v, has, st)) return false;
    return true;
}

tfc_optimizer *tfc_optimizer_from_config(const char *class_name, const char *config_json, tfc_status *st) {
    cJSON *root = NULL;
    const cJSON *cfg = NULL;
    const char *module = NULL;
    if (config_json && *config_json) {
        if (!(root = cJSON_Parse(config_json)) || !cJSON_IsObject(root)) {
            cJSON_Delete(root);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "optimizer config is not a JSON object: %.120s", config_json);
            return NULL;
        }
        cfg = root;
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(root, "class_name");
        const cJSON *inner = cJSON_GetObjectItemCaseSensitive(root, "config");
        if (cJSON_IsString(cn) && (!inner || cJSON_IsObject(inner))) { /* a whole serialized object */
            if (!class_name) class_name = cn->valuestring;
            cfg = inner;
            const cJSON *mod = cJSON_GetObjectItemCaseSensitive(root, "module");
            if (cJSON_IsString(mod)) module = mod->valuestring;
        }
    }
    const tfc_opt_class *cls = class_name ? find_class(class_name) : NULL;
    if (!cls) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Could not interpret optimizer identifier: %s",
                       class_name ? class_name : "(null)");
        cJSON_Delete(root);
        return NULL;
    }
    tfc_optimizer *o = tfc_opt_alloc(cls, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL);
    if (!o) {
        tfc_status_oom(st, cls->class_name, sizeof *o);
        cJSON_Delete(root);
        return NULL;
    }
    /* class defaults come from the class's constructor defaults */
    bool ok = cls->from_config(o, NULL, st);
    bool legacy_key = true, has_legacy_key = false;
    ok = ok && tfc_json_get_bool(cfg, "is_legacy_optimizer", &legacy_key, &has_legacy_key, st);
    if (ok) {
        o->legacy = cls != &tfc_opt_adamw &&
                    (has_legacy_key ? legacy_key : !(module && !strcmp(module, "keras.optimizers")));
        if (cls == &tfc_opt_nadam && !o->legacy) o->decay = 0;
    }
    const char *name = NULL;
    ok = ok && tfc_json_get_str(cfg, "name", &name, NULL, st);
    if (ok && name) {
        char *n = tfc_strdup(name);
        if (!n) ok = tfc_status_oom(st, "name", strlen(name));
        else {
            tfc_free(o->name);
            o->name = n;
        }
    }
    const cJSON *lr = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, "learning_rate") : NULL;
    if (ok && (!lr || cJSON_IsNull(lr)) && cfg) lr = cJSON_GetObjectItemCaseSensitive(cfg, "lr");
    if (ok && lr && cJSON_IsObject(lr)) {
        if (cls == &tfc_opt_nadam && o->legacy)
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "The Nadam optimizer does not support tf.keras.optimizers.LearningRateSchedules as the "
                                "learning rate.");
        else ok = (o->schedule = tfc_lr_schedule_from_json(lr, st)) != NULL;
    } else if (ok && lr && cJSON_IsNumber(lr)) {
        o->learning_rate = lr->valuedouble;
    } else if (ok && lr && !cJSON_IsNull(lr)) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: learning_rate must be a number or a schedule", o->name);
    }
    bool use_ema = false;
    ok = ok && get_clip(cfg, "clipnorm", &o->clipnorm, &o->has_clipnorm, st) &&
         get_clip(cfg, "clipvalue", &o->clipvalue, &o->has_clipvalue, st) &&
         get_clip(cfg, "global_clipnorm", &o->global_clipnorm, &o->has_global_clipnorm, st) &&
         tfc_json_get_bool(cfg, "use_ema", &use_ema, NULL, st);
    if (ok && o->legacy && cls != &tfc_opt_nadam) ok = tfc_json_get_f64(cfg, "decay", &o->decay, NULL, st);
    if (ok && !o->legacy) {
        bool has = false;
        double wd = 0;
        ok = tfc_json_get_f64(cfg, "weight_decay", &wd, &has, st);
        if (ok && has) o->weight_decay = wd, o->has_weight_decay = true;
    }
    if (ok && use_ema) ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: use_ema=True is not supported", o->name);
    ok = ok && (!cfg || cls->from_config(o, cfg, st)) && validate(o, st);
    cJSON_Delete(root);
    if (!ok) {
        tfc_optimizer_free(o);
        return NULL;
    }
    tfc_status_clear(st);
    return o;
}
