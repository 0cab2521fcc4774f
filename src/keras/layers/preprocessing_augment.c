/* Augmentation layers, active only in training (identity at inference, as Keras): RandomFlip (each image flipped
 * left-right and/or up-down with probability 1/2) and RandomContrast (one factor per call, uniform in
 * [1 - lower, 1 + upper]: (x - mean) * factor + mean over each image's height and width, clipped to [0, 255]).
 * Draws come from tfc's random ops (the layer's seed, else the context's), so values match Keras's statistically,
 * not draw for draw. Built from ops, so they are differentiable. */
#include <string.h>

#include "keras/layers/preprocessing_internal.h"
#include "tfc/ops/random.h"

typedef struct {
    tfc_layer base;
    bool flip;                /* RandomFlip, else RandomContrast */
    bool horizontal, vertical;
    char mode[32];
    double lower, upper;      /* RandomContrast */
    bool factor_pair;
    int64_t seed;
    bool has_seed;
} augment;

static bool aug_check(const augment *a, const tfc_shape *s, tfc_status *st) {
    const tfc_layer *l = &a->base;
    if (a->flip && !a->horizontal && !a->vertical)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "RandomFlip layer %s received an unknown mode argument %s",
                              l->name, a->mode);
    if (!a->flip && (a->lower < 0 || a->upper < 0 || a->lower > 1))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `factor` argument cannot have negative values or "
                              "values greater than 1. Received: factor=(%g, %g)", l->name, a->lower, a->upper);
    if (s && s->rank != 3 && s->rank != 4)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": expected images of rank 3 or 4, got shape %s",
                              l->name, TFC_KSHP(s));
    return true;
}

static bool aug_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !aug_check((augment *)l, &in[0], st)) return false;
    out[0] = in[0];
    *n_out = 1;
    return true;
}

static bool aug_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *uniform(augment *a, tfc_ctx *ctx, const int64_t *dims, int rank, double lo, double hi,
                           tfc_status *st) {
    return tfc_random_uniform(ctx, dims, rank, TFC_FLOAT, lo, hi, a->has_seed ? a->seed : TFC_RANDOM_NO_SEED, st);
}

/* Flips each image along `axis` (from the end: -2 width, -3 height) when its uniform draw is < 0.5. */
static tfc_tensor *flip_some(augment *a, tfc_ctx *ctx, tfc_tensor *x, int axis, tfc_status *st) {
    const tfc_shape *s = tfc_tensor_shape(x);
    int64_t md[4] = {1, 1, 1, 1};
    if (s->rank == 4) md[0] = s->dims[0];
    tfc_tensor *u = uniform(a, ctx, md, s->rank, 0, 1, st);
    tfc_tensor *half = u ? tfc_scalar_f32(0.5f, st) : NULL;
    tfc_tensor *mask = half ? tfc_emit(ctx, "Less", (tfc_tensor *[]){u, half}, 2, NULL, 0, st) : NULL;
    int32_t ax = axis + s->rank;
    tfc_tensor *axt = mask ? tfc_vec_i32(&ax, 1, st) : NULL;
    tfc_tensor *r = axt ? tfc_emit(ctx, "ReverseV2", (tfc_tensor *[]){x, axt}, 2, NULL, 0, st) : NULL;
    tfc_tensor *y = r ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){mask, r, x}, 3, NULL, 0, st) : NULL;
    tfc_tensor_unref(half);
    tfc_tensor_unref(axt);
    return y;
}

static tfc_tensor *contrast(augment *a, tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    int r = tfc_tensor_rank(x);
    int32_t axes[2] = {r - 3, r - 2};
    tfc_dtype dt = tfc_tensor_dtype(x);
    tfc_tensor *f = uniform(a, ctx, NULL, 0, 1.0 - a->lower, 1.0 + a->upper, st);
    if (f && dt != TFC_FLOAT) {
        tfc_attr c = TFC_ATTR_T("DstT", dt);
        f = tfc_emit(ctx, "Cast", &f, 1, &c, 1, st);
    }
    tfc_tensor *ax = f ? tfc_vec_i32(axes, 2, st) : NULL;
    tfc_attr kd = TFC_ATTR_B("keep_dims", true);
    tfc_tensor *mean = ax ? tfc_emit(ctx, "Mean", (tfc_tensor *[]){x, ax}, 2, &kd, 1, st) : NULL;
    tfc_tensor *c = mean ? tfc_emit(ctx, "Sub", (tfc_tensor *[]){x, mean}, 2, NULL, 0, st) : NULL;
    tfc_tensor *m = c ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){c, f}, 2, NULL, 0, st) : NULL;
    tfc_tensor *y = m ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){m, mean}, 2, NULL, 0, st) : NULL;
    tfc_tensor *lo = y ? tfc_scalar(dt, 0, st) : NULL, *hi = lo ? tfc_scalar(dt, 255, st) : NULL;
    tfc_tensor *out = hi ? tfc_emit(ctx, "ClipByValue", (tfc_tensor *[]){y, lo, hi}, 3, NULL, 0, st) : NULL;
    tfc_tensor_unref(ax);
    tfc_tensor_unref(lo);
    tfc_tensor_unref(hi);
    return out;
}

static bool aug_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    augment *a = (augment *)l;
    if (!aug_check(a, tfc_tensor_shape(in[0]), st)) return false;
    tfc_tensor *x = in[0];
    if (tfc_tensor_dtype(x) != l->compute_dtype) {
        tfc_attr c = TFC_ATTR_T("DstT", l->compute_dtype);
        if (!(x = tfc_emit(ctx, "Cast", &x, 1, &c, 1, st))) return false;
    }
    if (!training) return (out[0] = tfc_emit(ctx, "Identity", &x, 1, NULL, 0, st)) != NULL;
    if (!a->flip) return (out[0] = contrast(a, ctx, x, st)) != NULL;
    if (a->horizontal && !(x = flip_some(a, ctx, x, -2, st))) return false;
    if (a->vertical && !(x = flip_some(a, ctx, x, -3, st))) return false;
    return (out[0] = tfc_emit(ctx, "Identity", &x, 1, NULL, 0, st)) != NULL;
}

static bool aug_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const augment *a = (const augment *)l;
    cJSON *cfg = vcfg;
    bool ok = cJSON_AddStringToObject(cfg, "rng_type", "stateful") != NULL;
    if (a->flip) ok = ok && cJSON_AddStringToObject(cfg, "mode", a->mode);
    else if (a->factor_pair) {
        cJSON *f = cJSON_CreateArray();
        ok = ok && f && cJSON_AddItemToObject(cfg, "factor", f) && cJSON_AddItemToArray(f, cJSON_CreateNumber(a->lower)) &&
             cJSON_AddItemToArray(f, cJSON_CreateNumber(a->upper));
    } else {
        ok = ok && cJSON_AddNumberToObject(cfg, "factor", a->lower);
    }
    return ok && (a->has_seed ? cJSON_AddNumberToObject(cfg, "seed", (double)a->seed) != NULL
                              : cJSON_AddNullToObject(cfg, "seed") != NULL);
}

static const tfc_layer_class random_flip_class = {
    .class_name = "RandomFlip", .size = sizeof(augment), .build = aug_build, .compute_output_shape = aug_output_shape,
    .call = aug_call, .get_config = aug_get_config,
};
static const tfc_layer_class random_contrast_class = {
    .class_name = "RandomContrast", .size = sizeof(augment), .build = aug_build,
    .compute_output_shape = aug_output_shape, .call = aug_call, .get_config = aug_get_config,
};

tfc_layer *tfc_layers_random_flip_new(const tfc_random_flip_opts *o) {
    augment *a = TFC_LAYER_NEW(augment, &random_flip_class, o);
    if (!a) return NULL;
    a->flip = true;
    snprintf(a->mode, sizeof a->mode, "%s", o->mode ? o->mode : "horizontal_and_vertical");
    a->horizontal = !strcmp(a->mode, "horizontal") || !strcmp(a->mode, "horizontal_and_vertical");
    a->vertical = !strcmp(a->mode, "vertical") || !strcmp(a->mode, "horizontal_and_vertical");
    a->seed = o->seed;
    a->has_seed = o->has_seed;
    return &a->base;
}

tfc_layer *tfc_layers_random_contrast_new(const tfc_random_contrast_opts *o) {
    augment *a = TFC_LAYER_NEW(augment, &random_contrast_class, o);
    if (!a) return NULL;
    a->lower = o->factor[0];
    a->upper = o->factor_pair ? o->factor[1] : o->factor[0];
    a->factor_pair = o->factor_pair;
    a->seed = o->seed;
    a->has_seed = o->has_seed;
    return &a->base;
}

tfc_layer *tfc_keras_from_config_random_flip(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_random_flip_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    if (!tfc_json_get_str(cfg, "mode", &o.mode, NULL, st) || !tfc_json_get_i64(cfg, "seed", &o.seed, &o.has_seed, st))
        return NULL;
    tfc_layer *l = tfc_layers_random_flip_new(&o);
    if (!l) tfc_status_oom(st, "RandomFlip", sizeof(augment));
    return l;
}

tfc_layer *tfc_keras_from_config_random_contrast(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_random_contrast_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(cfg, "factor");
    if (cJSON_IsNumber(f)) o.factor[0] = f->valuedouble;
    else if (cJSON_IsArray(f) && cJSON_GetArraySize(f) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(f, 0)) &&
             cJSON_IsNumber(cJSON_GetArrayItem(f, 1))) {
        o.factor[0] = cJSON_GetArrayItem(f, 0)->valuedouble;
        o.factor[1] = cJSON_GetArrayItem(f, 1)->valuedouble;
        o.factor_pair = true;
    } else {
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "RandomContrast: \"factor\" must be a number or a pair"), NULL;
    }
    if (!tfc_json_get_i64(cfg, "seed", &o.seed, &o.has_seed, st)) return NULL;
    tfc_layer *l = tfc_layers_random_contrast_new(&o);
    if (!l) tfc_status_oom(st, "RandomContrast", sizeof(augment));
    return l;
}
