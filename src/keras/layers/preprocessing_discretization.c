/* tf.keras.layers.Discretization: bucket ids of numbers given sorted boundaries (Bucketize: the count of
 * boundaries <= x), or boundaries learnt by adapt from Keras's quantile summary: each batch is sorted and sampled
 * every n * epsilon values, merged with the running summary and compressed by interpolating the cumulative
 * weights (float32 state, float64 interpolation as numpy.interp), then compressed to num_bins. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keras/layers/preprocessing_internal.h"

#define DISC_MODES ((1u << TFC_PREP_INT) | (1u << TFC_PREP_ONE_HOT) | (1u << TFC_PREP_MULTI_HOT) | (1u << TFC_PREP_COUNT))

typedef struct {
    tfc_layer base;
    float *bounds;           /* current boundaries (float32, as Bucketize's attr) */
    double *given_bounds;    /* the constructor's, as given (get_config) */
    int64_t n_bounds;
    bool given, bounds_set;  /* given: bin_boundaries in the constructor (adapt refused) */
    int64_t num_bins;
    bool has_bins;           /* num_bins given (not None) */
    double epsilon;
    char mode_name[16];
    bool has_mode;
    tfc_prep_mode mode;
    float *sum_v, *sum_w;    /* adapt: the running summary */
    int64_t n_sum;
} discretization;

static bool disc_check(discretization *d, tfc_status *st) {
    tfc_layer *l = &d->base;
    if (d->has_bins && (d->num_bins < 0 || d->given))
        return d->given
                   ? tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": Both `num_bins` and `bin_boundaries` "
                                    "should not be set. You passed `num_bins=%lld` and `bin_boundaries`.", l->name,
                                    (long long)d->num_bins)
                   : tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `num_bins` must be greater than or equal "
                                    "to 0. You passed `num_bins=%lld`", l->name, (long long)d->num_bins);
    for (int64_t i = 1; i < d->n_bounds; i++)
        if (!(d->bounds[i - 1] <= d->bounds[i]))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": `bin_boundaries` must be sorted, got %g "
                                  "before %g", l->name, d->bounds[i - 1], d->bounds[i]);
    return tfc_prep_mode_parse(l, d->has_mode ? d->mode_name : NULL, TFC_PREP_INT, DISC_MODES, &d->mode, st);
}

static bool disc_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                              tfc_status *st) {
    discretization *d = (discretization *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !disc_check(d, st)) return false;
    *n_out = 1;
    return tfc_prep_encoded_shape(l, &in[0], d->mode, d->n_bounds + 1, &out[0], st);
}

static bool disc_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

/* Bucketize: std::upper_bound over float boundaries. float inputs are compared as float32 with subnormals read as
 * zero, as TensorFlow's CPU kernels run with denormals flushed. */
static int64_t bucket_of(const discretization *d, double x, bool as_float) {
    if (as_float && fabsf((float)x) < FLT_MIN) x = 0;
    int64_t lo = 0, hi = d->n_bounds;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        bool less = as_float ? (float)x < d->bounds[mid] : x < (double)d->bounds[mid];
        if (less) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static bool disc_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    discretization *d = (discretization *)l;
    if (!disc_check(d, st)) return false;
    tfc_tensor *x = in[0];
    tfc_dtype dt = tfc_tensor_dtype(x);
    int64_t n = tfc_tensor_num_elements(x);
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && !tfc_dtype_is_integer(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": expected numeric inputs, got %s", l->name,
                              tfc_dtype_name(dt));
    int64_t *ints = NULL;
    if (tfc_dtype_is_integer(dt) && !(ints = tfc_prep_read_ints(l, x, &n, st))) return false;
    int64_t *ids = tfc_malloc((size_t)(n ? n : 1) * sizeof *ids);
    if (!ids) return tfc_free(ints), tfc_status_oom(st, l->name, (size_t)n * sizeof *ids);
    const void *data = tfc_tensor_data(x);
    for (int64_t i = 0; i < n; i++)
        ids[i] = dt == TFC_DOUBLE ? bucket_of(d, ((const double *)data)[i], false)
                 : dt == TFC_FLOAT ? bucket_of(d, ((const float *)data)[i], true)
                                   : bucket_of(d, (double)ints[i], true);
    tfc_free(ints);
    const tfc_shape *s = tfc_tensor_shape(x);
    out[0] = d->mode == TFC_PREP_INT ? tfc_prep_ids_tensor(ids, s, st)
                                     : tfc_prep_encode(l, ids, s, d->mode, d->n_bounds + 1, NULL, st);
    tfc_free(ids);
    return out[0] != NULL;
}

/* ---- adapt: the quantile summary ---- */

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* numpy.interp(x, xp, fp) for increasing xp (n >= 1). */
static double interp(double x, const double *xp, const double *fp, int64_t n) {
    if (x > xp[n - 1]) return fp[n - 1];
    if (x < xp[0]) return fp[0];
    int64_t lo = 0, hi = n; /* the last j with xp[j] <= x */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (xp[mid] <= x) lo = mid;
        else hi = mid;
    }
    int64_t j = lo;
    if (j == n - 1 || xp[j] == x) return fp[j];
    double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]), r = slope * (x - xp[j]) + fp[j];
    if (isnan(r)) {
        r = slope * (x - xp[j + 1]) + fp[j + 1];
        if (isnan(r) && fp[j] == fp[j + 1]) r = fp[j];
    }
    return r;
}

/* Compresses (v, w)[n] to the percentiles eps, 2 eps, ..., when n * eps >= 1 (Keras's _compress_summary_numpy).
 * Replaces the arrays; false when out of memory. */
static bool compress(float **v, float **w, int64_t *n, double eps, tfc_status *st) {
    if ((double)*n * eps < 1) return true;
    int64_t m = (int64_t)ceil(1.0 / eps); /* len(np.arange(0.0, 1.0, eps)) */
    double *xp = tfc_malloc((size_t)*n * 3 * sizeof *xp), *fv = xp ? xp + *n : NULL, *cw = xp ? fv + *n : NULL;
    float *nv = tfc_malloc((size_t)m * sizeof *nv), *nw = tfc_malloc((size_t)m * sizeof *nw);
    if (!xp || !nv || !nw) {
        tfc_free(xp), tfc_free(nv), tfc_free(nw);
        return tfc_status_oom(st, "Discretization summary", (size_t)*n * 3 * sizeof *xp);
    }
    float acc = 0;
    for (int64_t i = 0; i < *n; i++) {
        acc += (*w)[i]; /* float32 cumsum */
        cw[i] = acc;
        fv[i] = (*v)[i];
    }
    for (int64_t i = 0; i < *n; i++) xp[i] = (double)((float)cw[i] / (float)cw[*n - 1]);
    double prev = 0;
    for (int64_t i = 0; i < m; i++) {
        double p = eps + (double)i * eps;
        nv[i] = (float)interp(p, xp, fv, *n);
        double c = interp(p, xp, cw, *n);
        nw[i] = (float)(c - prev);
        prev = c;
    }
    tfc_free(xp);
    tfc_free(*v);
    tfc_free(*w);
    *v = nv;
    *w = nw;
    *n = m;
    return true;
}

static bool disc_adapt_begin(tfc_layer *l, tfc_status *st) {
    discretization *d = (discretization *)l;
    if (!disc_check(d, st)) return false;
    if (d->given)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": Cannot adapt a Discretization layer that has "
                              "been initialized with `bin_boundaries`, use `num_bins` instead.", l->name);
    if (!d->has_bins || d->num_bins <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() needs `num_bins` > 0, got %s", l->name,
                              d->has_bins ? "0" : "None");
    tfc_free(d->sum_v);
    tfc_free(d->sum_w);
    d->sum_v = d->sum_w = NULL;
    d->n_sum = 0;
    return true;
}

static bool disc_adapt_update(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *batch, tfc_status *st) {
    discretization *d = (discretization *)l;
    tfc_dtype dt = tfc_tensor_dtype(batch);
    int64_t n = tfc_tensor_num_elements(batch), *ints = NULL;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && !tfc_dtype_is_integer(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": adapt() needs numeric data, got %s", l->name,
                              tfc_dtype_name(dt));
    if (tfc_dtype_is_integer(dt) && !(ints = tfc_prep_read_ints(l, batch, &n, st))) return false;
    float *x = tfc_malloc((size_t)(n ? n : 1) * sizeof *x);
    if (!x) return tfc_free(ints), tfc_status_oom(st, l->name, (size_t)n * sizeof *x);
    const void *data = tfc_tensor_data(batch);
    for (int64_t i = 0; i < n; i++)
        x[i] = dt == TFC_FLOAT ? ((const float *)data)[i] : dt == TFC_DOUBLE ? (float)((const double *)data)[i] : (float)ints[i];
    tfc_free(ints);
    qsort(x, (size_t)n, sizeof *x, cmp_float);
    /* summarize: values[inc::max(inc, 1)] with weight max(inc, 1), inc = int(float32(n) / float32(1 / eps)) */
    int32_t inc = (int32_t)((float)n / (float)(1.0 / d->epsilon));
    int64_t step = inc > 1 ? inc : 1, k = inc < n ? (n - inc + step - 1) / step : 0, total = k + d->n_sum;
    float *v = tfc_malloc((size_t)(total ? total : 1) * sizeof *v), *w = tfc_malloc((size_t)(total ? total : 1) * sizeof *w);
    if (!v || !w) {
        tfc_free(x), tfc_free(v), tfc_free(w);
        return tfc_status_oom(st, l->name, (size_t)total * sizeof *v);
    }
    /* merge: the new summary first, then the running one, stably sorted by value */
    int64_t a = 0, b = 0, o = 0;
    while (a < k || b < d->n_sum) {
        bool take_new = b >= d->n_sum || (a < k && !(d->sum_v[b] < x[inc + a * step]));
        if (take_new) v[o] = x[inc + a * step], w[o++] = (float)step, a++;
        else v[o] = d->sum_v[b], w[o++] = d->sum_w[b], b++;
    }
    tfc_free(x);
    tfc_free(d->sum_v);
    tfc_free(d->sum_w);
    d->sum_v = v;
    d->sum_w = w;
    d->n_sum = total;
    return compress(&d->sum_v, &d->sum_w, &d->n_sum, d->epsilon, st);
}

static bool disc_adapt_finish(tfc_layer *l, tfc_ctx *ctx, tfc_status *st) {
    discretization *d = (discretization *)l;
    if (!compress(&d->sum_v, &d->sum_w, &d->n_sum, 1.0 / (double)d->num_bins, st)) return false;
    tfc_free(d->bounds);
    d->bounds = d->sum_v; /* the values but the last */
    d->n_bounds = d->n_sum > 0 ? d->n_sum - 1 : 0;
    d->bounds_set = true;
    tfc_free(d->sum_w);
    d->sum_v = d->sum_w = NULL;
    d->n_sum = 0;
    return true;
}

static void disc_adapt_abort(tfc_layer *l) {
    discretization *d = (discretization *)l;
    tfc_free(d->sum_v);
    tfc_free(d->sum_w);
    d->sum_v = d->sum_w = NULL;
    d->n_sum = 0;
}

static bool disc_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const discretization *d = (const discretization *)l;
    cJSON *cfg = vcfg, *b = NULL;
    if (d->given) {
        if (!(b = cJSON_CreateArray())) return false;
        for (int64_t i = 0; i < d->n_bounds; i++)
            if (!cJSON_AddItemToArray(b, cJSON_CreateNumber(d->given_bounds[i]))) return cJSON_Delete(b), false;
    } else if (!(b = cJSON_CreateNull())) {
        return false;
    }
    if (!cJSON_AddItemToObject(cfg, "bin_boundaries", b)) return cJSON_Delete(b), false;
    return (d->has_bins ? cJSON_AddNumberToObject(cfg, "num_bins", (double)d->num_bins)
                             : cJSON_AddNullToObject(cfg, "num_bins")) &&
           cJSON_AddNumberToObject(cfg, "epsilon", d->epsilon) &&
           cJSON_AddStringToObject(cfg, "output_mode", d->has_mode ? d->mode_name : "int") &&
           cJSON_AddBoolToObject(cfg, "sparse", false);
}

static void disc_destroy(tfc_layer *l) {
    discretization *d = (discretization *)l;
    tfc_free(d->bounds);
    tfc_free(d->given_bounds);
    disc_adapt_abort(l);
}

const tfc_prep_class tfc_prep_discretization_class = {
    .base = {.class_name = "Discretization", .size = sizeof(discretization), .build = disc_build,
             .compute_output_shape = disc_output_shape, .call = disc_call, .get_config = disc_get_config,
             .destroy = disc_destroy},
    .adapt_begin = disc_adapt_begin, .adapt_update = disc_adapt_update, .adapt_finish = disc_adapt_finish,
    .adapt_abort = disc_adapt_abort,
};

static tfc_layer *disc_new(const tfc_discretization_opts *o, bool has_num_bins) {
    discretization *d = TFC_LAYER_NEW(discretization, &tfc_prep_discretization_class.base, o);
    if (!d) return NULL;
    d->num_bins = o->num_bins;
    d->has_bins = has_num_bins;
    d->epsilon = o->epsilon > 0 ? o->epsilon : 0.01;
    if ((d->has_mode = o->output_mode != NULL)) snprintf(d->mode_name, sizeof d->mode_name, "%s", o->output_mode);
    if (o->bin_boundaries) {
        d->given = d->bounds_set = true;
        d->n_bounds = o->n_bin_boundaries > 0 ? o->n_bin_boundaries : 0;
        size_t k = (size_t)(d->n_bounds ? d->n_bounds : 1);
        if (!(d->bounds = tfc_malloc(k * sizeof *d->bounds)) || !(d->given_bounds = tfc_malloc(k * sizeof(double))))
            return tfc_layer_unref(&d->base), NULL;
        for (int64_t i = 0; i < d->n_bounds; i++)
            d->bounds[i] = (float)o->bin_boundaries[i], d->given_bounds[i] = o->bin_boundaries[i];
    }
    tfc_prep_mode m = TFC_PREP_INT;
    tfc_status ignore = TFC_STATUS_INIT;
    if (!tfc_prep_mode_parse(&d->base, o->output_mode, TFC_PREP_INT, DISC_MODES, &m, &ignore) || m == TFC_PREP_INT)
        d->base.dtype = d->base.compute_dtype = TFC_INT64;
    d->base.no_autocast = true;
    return &d->base;
}

/* num_bins 0 in the options means None (Keras's default); from_config passes an explicit 0 through. */
tfc_layer *tfc_layers_discretization_new(const tfc_discretization_opts *o) { return disc_new(o, o->num_bins != 0); }

tfc_layer *tfc_keras_from_config_discretization(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_discretization_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    o.dtype = 0; /* the output dtype follows the mode */
    bool has_bins = false;
    if (!tfc_json_get_i64(cfg, "num_bins", &o.num_bins, &has_bins, st) ||
        !tfc_json_get_f64(cfg, "epsilon", &o.epsilon, NULL, st) ||
        !tfc_json_get_str(cfg, "output_mode", &o.output_mode, NULL, st))
        return NULL;
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(cfg, "bin_boundaries"), *e;
    double *bounds = NULL;
    if (b && !cJSON_IsNull(b)) {
        if (!cJSON_IsArray(b)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Discretization: \"bin_boundaries\" must "
                                                     "be a list"), NULL;
        int n = cJSON_GetArraySize(b);
        if (!(bounds = tfc_malloc((size_t)(n ? n : 1) * sizeof *bounds))) return tfc_status_oom(st, "Discretization", 8), NULL;
        cJSON_ArrayForEach(e, b) {
            if (!cJSON_IsNumber(e)) {
                tfc_free(bounds);
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Discretization: \"bin_boundaries\" must hold numbers"), NULL;
            }
            bounds[o.n_bin_boundaries++] = e->valuedouble;
        }
        o.bin_boundaries = bounds;
    }
    tfc_layer *l = disc_new(&o, has_bins);
    tfc_free(bounds);
    if (!l) tfc_status_oom(st, "Discretization", sizeof(discretization));
    return l;
}
