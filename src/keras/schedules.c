/* tf.keras.optimizers.schedules: ExponentialDecay, PiecewiseConstantDecay, CosineDecay and user functions.
 * Keras evaluates a schedule with tensor ops in the dtype of initial_learning_rate (float32) on the step cast
 * to float32; every operation here is rounded to float32 the same way, so the rates equal Keras's. */
#include <math.h>
#include <string.h>

#include "keras/optimizer_internal.h"

typedef enum { SCHED_EXPONENTIAL, SCHED_PIECEWISE, SCHED_COSINE, SCHED_FUNCTION } sched_kind;

struct tfc_lr_schedule {
    sched_kind kind;
    double initial_learning_rate, decay_rate, alpha, warmup_target;
    int64_t decay_steps, warmup_steps;
    bool staircase, has_warmup_target;
    int n_boundaries;
    int64_t *boundaries;
    double *values;
    double (*fn)(int64_t step, void *user);
    void *user;
};

static tfc_lr_schedule *sched_new(sched_kind k) {
    tfc_lr_schedule *s = tfc_calloc(1, sizeof *s);
    if (s) s->kind = k;
    return s;
}

tfc_lr_schedule *tfc_schedules_exponential_decay_new(const tfc_exponential_decay_opts *o) {
    tfc_lr_schedule *s = sched_new(SCHED_EXPONENTIAL);
    if (!s) return NULL;
    s->initial_learning_rate = o->initial_learning_rate;
    s->decay_steps = o->decay_steps;
    s->decay_rate = o->decay_rate;
    s->staircase = o->staircase;
    return s;
}

tfc_lr_schedule *tfc_schedules_piecewise_constant_decay_new(const tfc_piecewise_constant_decay_opts *o) {
    tfc_lr_schedule *s = sched_new(SCHED_PIECEWISE);
    int n = o->n_boundaries > 0 ? o->n_boundaries : 0;
    if (!s) return NULL;
    s->n_boundaries = n;
    s->boundaries = tfc_malloc((size_t)(n > 0 ? n : 1) * sizeof *s->boundaries);
    s->values = tfc_malloc((size_t)(n + 1) * sizeof *s->values);
    if (!s->boundaries || !s->values) {
        tfc_lr_schedule_free(s);
        return NULL;
    }
    for (int i = 0; i < n; i++) s->boundaries[i] = o->boundaries[i];
    for (int i = 0; i <= n; i++) s->values[i] = o->values ? o->values[i] : 0.0;
    return s;
}

tfc_lr_schedule *tfc_schedules_cosine_decay_new(const tfc_cosine_decay_opts *o) {
    tfc_lr_schedule *s = sched_new(SCHED_COSINE);
    if (!s) return NULL;
    s->initial_learning_rate = o->initial_learning_rate;
    s->decay_steps = o->decay_steps;
    s->alpha = o->alpha;
    s->has_warmup_target = o->has_warmup_target;
    s->warmup_target = o->warmup_target;
    s->warmup_steps = o->warmup_steps;
    return s;
}

tfc_lr_schedule *tfc_schedules_function(double (*fn)(int64_t step, void *user), void *user) {
    tfc_lr_schedule *s = sched_new(SCHED_FUNCTION);
    if (!s) return NULL;
    s->fn = fn;
    s->user = user;
    return s;
}

void tfc_lr_schedule_free(tfc_lr_schedule *s) {
    if (!s) return;
    tfc_free(s->boundaries);
    tfc_free(s->values);
    tfc_free(s);
}

static inline float f(double x) { return (float)x; }

/* CosineDecay._decay_function: decay_from * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha) */
static float cosine(float step, float decay_steps, float from, double alpha) {
    float frac = step / decay_steps;
    float cosd = 0.5f * (1.0f + cosf(f(M_PI) * frac));
    float decayed = f(1.0 - alpha) * cosd + f(alpha);
    return from * decayed;
}

double tfc_lr_schedule_value(const tfc_lr_schedule *s, int64_t step) {
    float x = (float)step;
    switch (s->kind) {
    case SCHED_EXPONENTIAL: {
        float p = x / (float)s->decay_steps;
        if (s->staircase) p = floorf(p);
        return f(s->initial_learning_rate) * powf(f(s->decay_rate), p);
    }
    case SCHED_PIECEWISE: {
        int n = s->n_boundaries;
        if (n == 0) return f(s->values[0]);
        if (x <= (float)s->boundaries[0]) return f(s->values[0]);
        if (x > (float)s->boundaries[n - 1]) return f(s->values[n]);
        for (int i = 0; i + 1 < n; i++)
            if (x > (float)s->boundaries[i] && x <= (float)s->boundaries[i + 1]) return f(s->values[i + 1]);
        return f(s->values[0]);
    }
    case SCHED_COSINE: {
        float init = f(s->initial_learning_rate), ds = (float)s->decay_steps;
        if (!s->has_warmup_target) return cosine(fminf(x, ds), ds, init, s->alpha);
        float target = f(s->warmup_target), ws = (float)s->warmup_steps;
        x = fminf(x, ds + ws);
        if (x < ws) return (target - init) * (x / ws) + init;
        return cosine(x - ws, ds, target, s->alpha);
    }
    case SCHED_FUNCTION: return s->fn ? s->fn(step, s->user) : 0.0;
    }
    return 0.0;
}

/* ---- serialisation ---- */

static const char *const class_names[] = {"ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay"};

cJSON *tfc_lr_schedule_to_json(const tfc_lr_schedule *s, int64_t step) {
    if (s->kind == SCHED_FUNCTION) return cJSON_CreateNumber(tfc_lr_schedule_value(s, step));
    cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();
    bool ok = o && c && cJSON_AddStringToObject(o, "module", "keras.optimizers.schedules") &&
              cJSON_AddStringToObject(o, "class_name", class_names[s->kind]);
    switch (s->kind) {
    case SCHED_EXPONENTIAL:
        ok = ok && cJSON_AddNumberToObject(c, "initial_learning_rate", s->initial_learning_rate) &&
             cJSON_AddNumberToObject(c, "decay_steps", (double)s->decay_steps) &&
             cJSON_AddNumberToObject(c, "decay_rate", s->decay_rate) &&
             cJSON_AddBoolToObject(c, "staircase", s->staircase) && cJSON_AddNullToObject(c, "name");
        break;
    case SCHED_PIECEWISE: {
        cJSON *b = ok ? tfc_json_int_array(s->boundaries, s->n_boundaries) : NULL, *v = cJSON_CreateArray();
        for (int i = 0; ok && v && i <= s->n_boundaries; i++) {
            cJSON *e = cJSON_CreateNumber(s->values[i]);
            if (!e || !cJSON_AddItemToArray(v, e)) {
                cJSON_Delete(e);
                ok = false;
            }
        }
        if (!ok || !b || !v || !cJSON_AddItemToObject(c, "boundaries", b)) {
            cJSON_Delete(b);
            cJSON_Delete(v);
            ok = false;
        } else if (!cJSON_AddItemToObject(c, "values", v)) {
            cJSON_Delete(v);
            ok = false;
        }
        ok = ok && cJSON_AddNullToObject(c, "name");
        break;
    }
    case SCHED_COSINE:
        ok = ok && cJSON_AddNumberToObject(c, "initial_learning_rate", s->initial_learning_rate) &&
             cJSON_AddNumberToObject(c, "decay_steps", (double)s->decay_steps) &&
             cJSON_AddNumberToObject(c, "alpha", s->alpha) && cJSON_AddNullToObject(c, "name") &&
             (s->has_warmup_target ? cJSON_AddNumberToObject(c, "warmup_target", s->warmup_target) != NULL
                                   : cJSON_AddNullToObject(c, "warmup_target") != NULL) &&
             cJSON_AddNumberToObject(c, "warmup_steps", (double)s->warmup_steps);
        break;
    case SCHED_FUNCTION: break;
    }
    if (ok && cJSON_AddItemToObject(o, "config", c)) {
        c = NULL;
        if (cJSON_AddNullToObject(o, "registered_name")) return o;
    }
    cJSON_Delete(c);
    cJSON_Delete(o);
    return NULL;
}

static bool need(const cJSON *c, const char *key, const char *cls, tfc_status *st) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, key);
    if (v && !cJSON_IsNull(v)) return true;
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: config needs \"%s\"", cls, key);
}

tfc_lr_schedule *tfc_lr_schedule_from_json(const cJSON *obj, tfc_status *st) {
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(obj, "class_name");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, "config");
    if (!cJSON_IsString(cn) || (c && !cJSON_IsObject(c))) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "a learning-rate schedule must be {\"class_name\": ..., \"config\": {...}}");
        return NULL;
    }
    const char *cls = cn->valuestring;
    tfc_lr_schedule *s = NULL;
    if (!strcmp(cls, "ExponentialDecay")) {
        tfc_exponential_decay_opts o = {0};
        if (!need(c, "initial_learning_rate", cls, st) || !need(c, "decay_steps", cls, st) ||
            !need(c, "decay_rate", cls, st) || !tfc_json_get_f64(c, "initial_learning_rate", &o.initial_learning_rate, NULL, st) ||
            !tfc_json_get_i64(c, "decay_steps", &o.decay_steps, NULL, st) ||
            !tfc_json_get_f64(c, "decay_rate", &o.decay_rate, NULL, st) ||
            !tfc_json_get_bool(c, "staircase", &o.staircase, NULL, st))
            return NULL;
        s = tfc_schedules_exponential_decay_new(&o);
    } else if (!strcmp(cls, "PiecewiseConstantDecay")) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "boundaries");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "values");
        if (!cJSON_IsArray(b) || !cJSON_IsArray(v)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: config needs lists \"boundaries\" and \"values\"", cls);
            return NULL;
        }
        int nb = cJSON_GetArraySize(b), nv = cJSON_GetArraySize(v);
        if (nb != nv - 1) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "%s: The length of boundaries should be 1 less than the length of values. Received: %d "
                           "boundaries and %d values.",
                           cls, nb, nv);
            return NULL;
        }
        int64_t *bv = tfc_malloc((size_t)(nb + 1) * sizeof *bv);
        double *vv = tfc_malloc((size_t)nv * sizeof *vv);
        bool ok = bv && vv;
        if (!ok) tfc_status_oom(st, cls, (size_t)nv * 16);
        for (int i = 0; ok && i < nb; i++) {
            const cJSON *e = cJSON_GetArrayItem(b, i);
            if (!cJSON_IsNumber(e) || !(fabs(e->valuedouble) < 9.0e18)) /* also no (int64_t) of 1e300 or NaN */
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: boundaries must be numbers within int64", cls);
            else bv[i] = (int64_t)e->valuedouble;
        }
        for (int i = 0; ok && i < nv; i++) {
            const cJSON *e = cJSON_GetArrayItem(v, i);
            if (!cJSON_IsNumber(e)) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: values must be numbers", cls);
            else vv[i] = e->valuedouble;
        }
        if (ok) s = tfc_schedules_piecewise_constant_decay_new(
                    &(tfc_piecewise_constant_decay_opts){.boundaries = bv, .n_boundaries = nb, .values = vv});
        tfc_free(bv);
        tfc_free(vv);
        if (!ok) return NULL;
    } else if (!strcmp(cls, "CosineDecay")) {
        tfc_cosine_decay_opts o = {0};
        if (!need(c, "initial_learning_rate", cls, st) || !need(c, "decay_steps", cls, st) ||
            !tfc_json_get_f64(c, "initial_learning_rate", &o.initial_learning_rate, NULL, st) ||
            !tfc_json_get_i64(c, "decay_steps", &o.decay_steps, NULL, st) ||
            !tfc_json_get_f64(c, "alpha", &o.alpha, NULL, st) ||
            !tfc_json_get_f64(c, "warmup_target", &o.warmup_target, &o.has_warmup_target, st) ||
            !tfc_json_get_i64(c, "warmup_steps", &o.warmup_steps, NULL, st))
            return NULL;
        s = tfc_schedules_cosine_decay_new(&o);
    } else {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown learning rate schedule: %s", cls);
        return NULL;
    }
    if (!s) tfc_status_oom(st, cls, sizeof(tfc_lr_schedule));
    return s;
}
