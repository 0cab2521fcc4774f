/* tf.keras.layers.Normalization: (x - mean) / max(sqrt(variance), epsilon) over the kept axes, with the
 * statistics given or learnt by adapt (a streaming mean/variance combined batch by batch as Keras). */
#include <math.h>
#include <string.h>

#include "core/size_check.h"
#include "keras/layers/preprocessing_internal.h"

#define NORM_EPSILON 1e-7 /* backend.epsilon() */

typedef struct {
    tfc_layer base;
    int64_t axis[TFC_MAX_RANK];
    int n_axis;
    double *mean, *var; /* given statistics (n_mean each, in stat_buf), or NULL */
    double *stat_buf;
    int64_t n_mean;
    bool mean_scalar;   /* given as a number rather than a list (get_config writes it back so) */
    bool invert;
    tfc_shape bshape;   /* broadcast shape: kept dims, 1 elsewhere */
    tfc_shape kshape;   /* the kept dims (the weights' shape) */
    int64_t n_stats;
    tfc_variable *vmean, *vvar, *vcount;
    double *acc_mean, *acc_var; /* adapt */
    int64_t acc_count;
} normalization;

static bool norm_axes(normalization *n, const tfc_shape *s, bool keep[TFC_MAX_RANK], tfc_status *st) {
    tfc_layer *l = &n->base;
    int r = s->rank;
    memset(keep, 0, TFC_MAX_RANK * sizeof *keep);
    for (int i = 0; i < n->n_axis; i++) {
        if (n->axis[i] < -r || n->axis[i] >= r) {
            char ax[64] = "";
            for (int k = 0, o = 0; k < n->n_axis; k++)
                o += snprintf(ax + o, sizeof ax - (size_t)o, "%s%lld", k ? ", " : "", (long long)n->axis[k]);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": All `axis` values must be in the range [-ndim, ndim). Found ndim: "
                                  "`%d`, axis: (%s%s)",
                                  l->name, r, ax, n->n_axis == 1 ? "," : "");
        }
        int a = (int)(n->axis[i] < 0 ? n->axis[i] + r : n->axis[i]);
        if (s->dims[a] < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": All `axis` values to be kept must have known shape. Got input shape "
                                  "%s, with unknown axis at index: %d",
                                  l->name, TFC_KSHP(s), a);
        keep[a] = true;
    }
    return true;
}

static bool norm_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                              tfc_status *st) {
    normalization *n = (normalization *)l;
    bool keep[TFC_MAX_RANK];
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !norm_axes(n, &in[0], keep, st)) return false;
    if ((n->mean != NULL) != (n->var != NULL))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": When setting values directly, both `mean` and `variance` must be set.",
                              l->name);
    out[0] = in[0];
    *n_out = 1;
    return true;
}

static bool norm_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    normalization *n = (normalization *)l;
    bool keep[TFC_MAX_RANK];
    if (!norm_axes(n, &in[0], keep, st)) return false;
    n->bshape = (tfc_shape){.rank = in[0].rank};
    n->kshape = (tfc_shape){.rank = 0};
    for (int d = 0; d < in[0].rank; d++) {
        n->bshape.dims[d] = keep[d] ? in[0].dims[d] : 1;
        if (keep[d]) n->kshape.dims[n->kshape.rank++] = in[0].dims[d];
    }
    n->n_stats = tfc_shape_product(&n->kshape);
    if (n->mean && n->n_mean != 1 && n->n_mean != n->n_stats)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": `mean` and `variance` have %lld values, which cannot broadcast to the "
                              "kept shape %s",
                              l->name, (long long)n->n_mean, TFC_KSHP(&n->kshape));
    l->input_spec[0] = (tfc_input_spec){.ndim = in[0].rank};
    l->has_input_spec = true;
    if (n->mean) return true;
    tfc_shape scalar = {.rank = 0};
    return (n->vmean = tfc_layer_add_weight(l, ctx, "mean", &n->kshape, l->compute_dtype, NULL, NULL, false, st)) &&
           (n->vvar = tfc_layer_add_weight(l, ctx, "variance", &n->kshape, l->compute_dtype,
                                           tfc_initializer_of(.name = "ones"), NULL, false, st)) &&
           (n->vcount = tfc_layer_add_weight(l, ctx, "count", &scalar, TFC_INT64, NULL, NULL, false, st));
}

/* The broadcast-shaped mean and max(sqrt(variance), eps) as new tensors of dtype dt. */
static bool norm_stats(normalization *n, tfc_ctx *ctx, tfc_dtype dt, tfc_tensor **mean, tfc_tensor **den,
                       tfc_status *st) {
    tfc_layer *l = &n->base;
    *mean = *den = NULL;
    double *m = tfc_malloc((size_t)(n->n_stats ? n->n_stats : 1) * 2 * sizeof *m), *d = m ? m + n->n_stats : NULL;
    if (!m) return tfc_status_oom(st, l->name, (size_t)n->n_stats * 2 * sizeof *m);
    if (n->mean) {
        for (int64_t i = 0; i < n->n_stats; i++) {
            m[i] = n->mean[n->n_mean == 1 ? 0 : i];
            d[i] = n->var[n->n_mean == 1 ? 0 : i];
        }
    } else {
        const tfc_tensor *vm = tfc_variable_value(n->vmean), *vv = tfc_variable_value(n->vvar);
        for (int64_t i = 0; i < n->n_stats; i++) {
            m[i] = tfc_tensor_dtype(vm) == TFC_DOUBLE ? ((const double *)tfc_tensor_data(vm))[i]
                                                      : ((const float *)tfc_tensor_data(vm))[i];
            d[i] = tfc_tensor_dtype(vv) == TFC_DOUBLE ? ((const double *)tfc_tensor_data(vv))[i]
                                                      : ((const float *)tfc_tensor_data(vv))[i];
        }
    }
    tfc_tensor *tm = tfc_tensor_new(dt, n->bshape.dims, n->bshape.rank, st);
    tfc_tensor *td = tm ? tfc_tensor_new(dt, n->bshape.dims, n->bshape.rank, st) : NULL;
    if (td) {
        for (int64_t i = 0; i < n->n_stats; i++) {
            if (dt == TFC_DOUBLE) {
                ((double *)tfc_tensor_mutable_data(tm))[i] = m[i];
                ((double *)tfc_tensor_mutable_data(td))[i] = fmax(sqrt(d[i]), NORM_EPSILON);
            } else { /* float32 arithmetic as Keras's float32 layer */
                ((float *)tfc_tensor_mutable_data(tm))[i] = (float)m[i];
                ((float *)tfc_tensor_mutable_data(td))[i] = fmaxf(sqrtf((float)d[i]), (float)NORM_EPSILON);
            }
        }
    }
    tfc_free(m);
    if (!td) {
        tfc_tensor_unref(tm);
        return false;
    }
    *mean = tm;
    *den = td;
    return true;
}

static bool norm_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    normalization *n = (normalization *)l;
    tfc_dtype dt = l->compute_dtype == TFC_DOUBLE ? TFC_DOUBLE : TFC_FLOAT;
    tfc_tensor *x = in[0];
    if (tfc_tensor_dtype(x) != dt) {
        tfc_attr a = TFC_ATTR_T("DstT", dt);
        if (!(x = tfc_emit(ctx, "Cast", &x, 1, &a, 1, st))) return false;
    }
    tfc_tensor *mean, *den;
    if (!norm_stats(n, ctx, dt, &mean, &den, st)) return false;
    if (n->invert) {
        tfc_tensor *y = tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, den}, 2, NULL, 0, st);
        out[0] = y ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){mean, y}, 2, NULL, 0, st) : NULL;
    } else {
        tfc_tensor *y = tfc_emit(ctx, "Sub", (tfc_tensor *[]){x, mean}, 2, NULL, 0, st);
        out[0] = y ? tfc_emit(ctx, "RealDiv", (tfc_tensor *[]){y, den}, 2, NULL, 0, st) : NULL;
    }
    tfc_tensor_unref(mean);
    tfc_tensor_unref(den);
    return out[0] != NULL;
}

/* ---- adapt ---- */

static bool norm_adapt_begin(tfc_layer *l, tfc_status *st) {
    normalization *n = (normalization *)l;
    if (n->mean)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Layer \"%s\": Cannot `adapt` a Normalization layer that is initialized with static "
                              "`mean` and `variance`.",
                              l->name);
    tfc_free(n->acc_mean);
    n->acc_mean = n->acc_var = NULL;
    n->acc_count = 0;
    return true;
}

static double value_at(const tfc_tensor *t, int64_t i) {
    const void *d = tfc_tensor_data(t);
    switch (tfc_tensor_dtype(t)) {
    case TFC_FLOAT: return ((const float *)d)[i];
    case TFC_DOUBLE: return ((const double *)d)[i];
    case TFC_INT32: return ((const int32_t *)d)[i];
    case TFC_INT64: return (double)((const int64_t *)d)[i];
    case TFC_UINT8: return ((const uint8_t *)d)[i];
    default: return NAN;
    }
}

static bool norm_adapt_update(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *batch, tfc_status *st) {
    normalization *n = (normalization *)l;
    tfc_dtype dt = tfc_tensor_dtype(batch);
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && dt != TFC_INT32 && dt != TFC_INT64 && dt != TFC_UINT8)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() needs numeric data, got %s", l->name,
                              tfc_dtype_name(dt));
    tfc_shape s = *tfc_tensor_shape(batch);
    if (s.rank > 0 && !l->built) s.dims[0] = -1;
    if (!tfc_layer_ensure_built(l, ctx, &s, 1, st) || !tfc_layer_check_inputs(l, tfc_tensor_shape(batch), 1, st))
        return false;
    const tfc_shape *bs = tfc_tensor_shape(batch);
    int64_t total = tfc_shape_product(bs);
    if (total == 0) return true;
    int64_t k = n->n_stats, cnt = total / k;
    if (!n->acc_mean) {
        if (!(n->acc_mean = tfc_calloc((size_t)k * 2, sizeof(double))))
            return tfc_status_oom(st, l->name, (size_t)k * 2 * sizeof(double));
        n->acc_var = n->acc_mean + k;
    }
    double *bm = tfc_calloc((size_t)k * 2, sizeof *bm), *bv = bm ? bm + k : NULL;
    if (!bm) return tfc_status_oom(st, l->name, (size_t)k * 2 * sizeof *bm);
    /* element i's statistic index: its coordinates on the kept axes */
    int64_t strides[TFC_MAX_RANK], kstr[TFC_MAX_RANK];
    tfc_dims_strides(bs->dims, bs->rank, strides);
    tfc_dims_strides(n->bshape.dims, n->bshape.rank, kstr);
    for (int pass = 0; pass < 2; pass++)
        for (int64_t i = 0; i < total; i++) {
            int64_t j = 0, rem = i;
            for (int d = 0; d < bs->rank; d++) {
                int64_t c = rem / strides[d];
                rem %= strides[d];
                if (n->bshape.dims[d] != 1) j += c * kstr[d]; /* kept axes only */
            }
            double v = value_at(batch, i);
            if (pass == 0) bm[j] += v;
            else bv[j] += (v - bm[j]) * (v - bm[j]);
            if (pass == 0 && i == total - 1)
                for (int64_t q = 0; q < k; q++) bm[q] /= (double)cnt;
        }
    int64_t new_count = n->acc_count + cnt;
    double bw = (double)cnt / (double)new_count, ew = 1 - bw;
    for (int64_t q = 0; q < k; q++) {
        double b_var = bv[q] / (double)cnt, tm = n->acc_mean[q] * ew + bm[q] * bw;
        double dm0 = n->acc_mean[q] - tm, dm1 = bm[q] - tm;
        n->acc_var[q] = (n->acc_var[q] + dm0 * dm0) * ew + (b_var + dm1 * dm1) * bw;
        n->acc_mean[q] = tm;
    }
    n->acc_count = new_count;
    tfc_free(bm);
    return true;
}

static bool assign_values(tfc_ctx *ctx, tfc_variable *v, const double *x, int64_t k, tfc_status *st) {
    const tfc_shape *s = tfc_variable_shape(v);
    tfc_dtype dt = tfc_variable_dtype(v);
    tfc_tensor *t = tfc_tensor_new(dt, s->dims, s->rank, st);
    if (!t) return false;
    for (int64_t i = 0; i < k; i++) {
        if (dt == TFC_DOUBLE) ((double *)tfc_tensor_mutable_data(t))[i] = x[i];
        else if (dt == TFC_INT64) ((int64_t *)tfc_tensor_mutable_data(t))[i] = (int64_t)x[i];
        else ((float *)tfc_tensor_mutable_data(t))[i] = (float)x[i];
    }
    bool ok = tfc_variable_assign(ctx, v, t, st);
    tfc_tensor_unref(t);
    return ok;
}

static bool norm_adapt_finish(tfc_layer *l, tfc_ctx *ctx, tfc_status *st) {
    normalization *n = (normalization *)l;
    bool ok = true;
    if (n->acc_mean) {
        double c = (double)n->acc_count;
        ok = assign_values(ctx, n->vmean, n->acc_mean, n->n_stats, st) &&
             assign_values(ctx, n->vvar, n->acc_var, n->n_stats, st) && assign_values(ctx, n->vcount, &c, 1, st);
    }
    tfc_free(n->acc_mean);
    n->acc_mean = n->acc_var = NULL;
    return ok;
}

static void norm_adapt_abort(tfc_layer *l) {
    normalization *n = (normalization *)l;
    tfc_free(n->acc_mean);
    n->acc_mean = n->acc_var = NULL;
}

static cJSON *stat_json(const normalization *n, const double *v) {
    if (!v) return cJSON_CreateNull();
    if (n->mean_scalar) return cJSON_CreateNumber(v[0]);
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; a && i < n->n_mean; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]))) return cJSON_Delete(a), NULL;
    return a;
}

static bool norm_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const normalization *n = (const normalization *)l;
    cJSON *cfg = vcfg, *axis = tfc_json_int_array(n->axis, n->n_axis);
    if (!axis || !cJSON_AddItemToObject(cfg, "axis", axis)) return cJSON_Delete(axis), false;
    cJSON *m = stat_json(n, n->mean), *v = stat_json(n, n->var);
    bool ok = cJSON_AddBoolToObject(cfg, "invert", n->invert) && m && cJSON_AddItemToObject(cfg, "mean", m);
    if (!ok) cJSON_Delete(m);
    if (ok && !(v && cJSON_AddItemToObject(cfg, "variance", v))) ok = false, cJSON_Delete(v);
    return ok;
}

static void norm_destroy(tfc_layer *l) {
    normalization *n = (normalization *)l;
    tfc_free(n->stat_buf);
    tfc_free(n->acc_mean);
}

const tfc_prep_class tfc_prep_normalization_class = {
    .base = {.class_name = "Normalization", .size = sizeof(normalization), .build = norm_build,
             .compute_output_shape = norm_output_shape, .call = norm_call, .get_config = norm_get_config,
             .destroy = norm_destroy},
    .adapt_begin = norm_adapt_begin, .adapt_update = norm_adapt_update, .adapt_finish = norm_adapt_finish,
    .adapt_abort = norm_adapt_abort,
};

static tfc_layer *norm_new(const tfc_normalization_opts *o, bool mean_scalar) {
    normalization *n = TFC_LAYER_NEW(normalization, &tfc_prep_normalization_class.base, o);
    if (!n) return NULL;
    n->invert = o->invert;
    if (o->axis_none) n->n_axis = 0;
    else if (o->n_axis <= 0) n->n_axis = 1, n->axis[0] = -1;
    else {
        n->n_axis = o->n_axis > TFC_MAX_RANK ? TFC_MAX_RANK : o->n_axis;
        memcpy(n->axis, o->axis, (size_t)n->n_axis * sizeof *n->axis);
    }
    n->mean_scalar = mean_scalar;
    /* one of mean/variance alone is kept as "given" on one side so the build reports it */
    if ((o->mean || o->variance) && o->n_mean > 0) {
        double *buf = tfc_malloc((size_t)o->n_mean * 2 * sizeof *buf);
        if (!buf) return tfc_layer_unref(&n->base), NULL;
        n->n_mean = o->n_mean;
        for (int64_t i = 0; i < o->n_mean; i++) {
            buf[i] = o->mean ? o->mean[i] : 0;
            buf[o->n_mean + i] = o->variance ? o->variance[i] : 1;
        }
        n->stat_buf = buf;
        n->mean = o->mean ? buf : NULL;
        n->var = o->variance ? buf + o->n_mean : NULL;
    }
    return &n->base;
}

tfc_layer *tfc_layers_normalization_new(const tfc_normalization_opts *o) { return norm_new(o, false); }

/* A number or list of numbers into a new array; *n = 0 for null/absent. */
static bool json_stat(const cJSON *cfg, const char *key, double **out, int64_t *n, bool *scalar, tfc_status *st) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);
    *out = NULL;
    *n = 0;
    if (!v || cJSON_IsNull(v)) return true;
    if (cJSON_IsNumber(v)) {
        if (!(*out = tfc_malloc(sizeof **out))) return tfc_status_oom(st, key, sizeof **out);
        **out = v->valuedouble;
        *n = 1;
        *scalar = true;
        return true;
    }
    if (!cJSON_IsArray(v))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Normalization: \"%s\" must be a number or a list", key);
    int k = cJSON_GetArraySize(v);
    if (!(*out = tfc_malloc((size_t)(k ? k : 1) * sizeof **out))) return tfc_status_oom(st, key, (size_t)k * 8);
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsNumber(e)) {
            tfc_free(*out);
            *out = NULL;
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Normalization: \"%s\" must hold numbers "
                                  "(nested lists are not supported)", key);
        }
        (*out)[(*n)++] = e->valuedouble;
    }
    return true;
}

tfc_layer *tfc_keras_from_config_normalization(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_normalization_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    const cJSON *ax = cJSON_GetObjectItemCaseSensitive(cfg, "axis");
    bool has_axis = false, scalar = false;
    if (ax && cJSON_IsNull(ax)) o.axis_none = true;
    else if (!tfc_json_get_i64_list(cfg, "axis", o.axis, TFC_MAX_RANK, &o.n_axis, &has_axis, st)) return NULL;
    if (has_axis && o.n_axis == 0) o.axis_none = true;
    double *mean = NULL, *var = NULL;
    int64_t nm = 0, nv = 0;
    if (!tfc_json_get_bool(cfg, "invert", &o.invert, NULL, st) || !json_stat(cfg, "mean", &mean, &nm, &scalar, st) ||
        !json_stat(cfg, "variance", &var, &nv, &scalar, st)) {
        tfc_free(mean);
        return NULL;
    }
    tfc_layer *l = NULL;
    if (mean && var && nm != nv)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Normalization: `mean` has %lld values and `variance` %lld",
                       (long long)nm, (long long)nv);
    else {
        o.mean = mean;
        o.variance = var;
        o.n_mean = mean ? nm : nv;
        if (!(l = norm_new(&o, scalar))) tfc_status_oom(st, "Normalization", sizeof(normalization));
    }
    tfc_free(mean);
    tfc_free(var);
    return l;
}
