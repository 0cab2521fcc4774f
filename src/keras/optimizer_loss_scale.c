/* LossScaleOptimizer (tf.keras.mixed_precision.LossScaleOptimizer, tf-keras's legacy-optimizer wrapper): the
 * loss-scale state and its update, applied around the inner optimizer (see mixed_precision.h).
 * The scale is kept in float32 as Keras's variable: it doubles only to a finite float32 and halves down to 1. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "keras/optimizer_internal.h"
#include "tfc/keras/mixed_precision.h"

const tfc_opt_class tfc_opt_loss_scale = {.class_name = "LossScaleOptimizer"};

tfc_optimizer *tfc_mixed_precision_loss_scale_optimizer_new(tfc_optimizer *inner, const tfc_loss_scale_opts *o) {
    if (!inner) return NULL;
    tfc_optimizer *w = tfc_opt_alloc(&tfc_opt_loss_scale, inner->name, 0, NULL, 0, 0, 0, NULL, NULL, NULL);
    if (!w) {
        tfc_optimizer_free(inner);
        return NULL;
    }
    static const tfc_loss_scale_opts defaults = {0};
    if (!o) o = &defaults;
    w->inner = inner;
    w->legacy = inner->legacy;
    w->ls_dynamic = TFC_FLAG(o->dynamic, true);
    w->ls_initial = o->initial_scale != 0 ? o->initial_scale : w->ls_dynamic ? 32768.0 : 0.0;
    w->ls_scale = (float)w->ls_initial;
    w->ls_growth_steps = o->dynamic_growth_steps ? o->dynamic_growth_steps : 2000;
    return w;
}

bool tfc_optimizer_is_loss_scale(const tfc_optimizer *o) { return o && o->inner; }
tfc_optimizer *tfc_loss_scale_optimizer_inner(const tfc_optimizer *o) { return o ? o->inner : NULL; }
double tfc_loss_scale_optimizer_loss_scale(const tfc_optimizer *o) { return o && o->inner ? o->ls_scale : 1.0; }
int64_t tfc_loss_scale_optimizer_dynamic_counter(const tfc_optimizer *o) {
    return o && o->inner && o->ls_dynamic ? o->ls_counter : -1;
}

tfc_tensor *tfc_loss_scale_optimizer_get_scaled_loss(const tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *loss,
                                                    tfc_status *st) {
    if (!o || !o->inner || !loss) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_scaled_loss: not a LossScaleOptimizer or no loss");
        return NULL;
    }
    tfc_tensor *s = tfc_scalar(tfc_tensor_dtype(loss), o->ls_scale, st);
    tfc_tensor *r = s ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){loss, s}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(s);
    return r;
}

bool tfc_loss_scale_optimizer_get_unscaled_gradients(const tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads,
                                                     int n, tfc_tensor **out, tfc_status *st) {
    if (!o || !o->inner) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "get_unscaled_gradients: not a LossScaleOptimizer");
    const double r = (double)(1.0f / o->ls_scale); /* Keras: 1.0 / loss_scale in float32, cast to each gradient's dtype */
    for (int i = 0; i < n; i++) { /* (out may be grads) */
        tfc_tensor *g = grads[i];
        out[i] = NULL;
        if (!g) continue;
        tfc_tensor *s = tfc_scalar(tfc_tensor_dtype(g), r, st);
        out[i] = s ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){g, s}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(s);
        if (!out[i]) return false;
    }
    return true;
}

/* Whether every element of every gradient is finite (an inf or NaN anywhere: false). */
static bool all_finite(tfc_tensor *const *g, int n) {
    for (int i = 0; i < n; i++) {
        if (!g[i]) continue;
        const tfc_dtype dt = tfc_tensor_dtype(g[i]);
        const int64_t ne = tfc_tensor_num_elements(g[i]);
        const void *d = tfc_tensor_data(g[i]);
        if (dt == TFC_FLOAT) {
            const uint32_t *u = d;
            uint32_t bad = 0;
            for (int64_t k = 0; k < ne; k++) bad |= (u[k] & 0x7f800000u) == 0x7f800000u;
            if (bad) return false;
        } else {
            for (int64_t k = 0; k < ne; k++)
                if (!isfinite(tfc_dtype_get_f64(dt, d, k))) return false;
        }
    }
    return true;
}

bool tfc_opt_loss_scale_apply(tfc_optimizer *o, tfc_ctx *ctx, tfc_tensor *const *grads, tfc_variable *const *vars,
                              int n, tfc_status *st) {
    if (o->ls_dynamic && o->ls_growth_steps < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "dynamic_growth_steps must be a positive integer, got %lld",
                              (long long)o->ls_growth_steps);
    if (!(o->ls_initial > 0) || !isfinite(o->ls_initial))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: initial_scale must be finite and positive, got %g",
                              o->name, o->ls_initial);
    const bool finite = !o->ls_dynamic || all_finite(grads, n);
    if (finite ? !tfc_optimizer_apply_gradients(o->inner, ctx, grads, vars, n, st) : !tfc_opt_skip_step(o->inner, ctx, st))
        return false;
    if (!o->ls_dynamic) return true;
    if (!finite) {
        o->ls_counter = 0;
        o->ls_scale = fmaxf(o->ls_scale / 2.0f, 1.0f);
    } else if (o->ls_counter + 1 >= o->ls_growth_steps) {
        const float doubled = o->ls_scale * 2.0f;
        if (isfinite(doubled)) o->ls_scale = doubled;
        o->ls_counter = 0;
    } else {
        o->ls_counter++;
    }
    return true;
}

/* tf-keras's LossScaleOptimizer.get_config: the inner optimizer serialized, then the loss-scale options. */
char *tfc_opt_loss_scale_config(const tfc_optimizer *o, tfc_status *st) {
    char *inner = tfc_optimizer_get_config(o->inner, st);
    cJSON *ic = inner ? cJSON_Parse(inner) : NULL;
    tfc_free(inner);
    cJSON *c = ic ? cJSON_CreateObject() : NULL, *io = c ? cJSON_AddObjectToObject(c, "inner_optimizer") : NULL;
    bool ok = io && cJSON_AddStringToObject(io, "class_name", tfc_optimizer_class_name(o->inner)) &&
              cJSON_AddItemToObject(io, "config", ic);
    if (ok) ic = NULL;
    ok = ok && cJSON_AddBoolToObject(c, "dynamic", o->ls_dynamic) &&
         cJSON_AddNumberToObject(c, "initial_scale", o->ls_initial) &&
         (o->ls_dynamic ? cJSON_AddNumberToObject(c, "dynamic_growth_steps", (double)o->ls_growth_steps) != NULL
                        : cJSON_AddNullToObject(c, "dynamic_growth_steps") != NULL);
    char *out = ok ? cJSON_PrintUnformatted(c) : NULL;
    cJSON_Delete(ic);
    cJSON_Delete(c);
    if (!out && st->code == TFC_OK) tfc_status_oom(st, "LossScaleOptimizer get_config", 0);
    if (!out) return NULL;
    char *r = tfc_strdup(out); /* callers free with tfc_free */
    cJSON_free(out);
    if (!r) tfc_status_oom(st, "LossScaleOptimizer get_config", 0);
    return r;
}
