/* tf.keras.initializers: Keras 2's defaults and fan computation; random values come from TensorFlow's
 * stateful random ops (RandomUniform, RandomStandardNormal, TruncatedNormal) with TensorFlow's get_seed, as
 * TensorFlow 2.4's Keras (tf_keras now uses stateless ops, so seeded values differ from it). Orthogonal uses a
 * Householder QR in float64. */
#include <math.h>
#include <string.h>

#include "eager/context_internal.h"
#include "keras/keras_internal.h"
#include "tfc/ops/random.h"

/* tf.random.uniform(minval = p, maxval = q) / normal / truncated_normal(mean = p, stddev = q). */
static tfc_tensor *random_of(tfc_ctx *ctx, const char *op, const tfc_shape *shape, tfc_dtype dtype, double p,
                             double q, const tfc_initializer *in, tfc_status *st) {
    int64_t seed = in->has_seed ? in->seed : TFC_RANDOM_NO_SEED;
    if (!strcmp(op, "RandomUniform")) return tfc_random_uniform(ctx, shape->dims, shape->rank, dtype, p, q, seed, st);
    if (!strcmp(op, "TruncatedNormal")) return tfc_truncated_normal(ctx, shape->dims, shape->rank, dtype, p, q, seed, st);
    return tfc_random_normal(ctx, shape->dims, shape->rank, dtype, p, q, seed, st);
}

/* A new tensor from float64 values (registered with the current scope like an op output). */
static tfc_tensor *from_f64(tfc_ctx *ctx, const tfc_shape *shape, tfc_dtype dtype, const double *v, double fill,
                            tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(dtype, shape->dims, shape->rank, st);
    if (!t) return NULL;
    int64_t n = tfc_tensor_num_elements(t);
    void *d = tfc_tensor_mutable_data(t);
    if (dtype == TFC_FLOAT) {
        float *f = d;
        for (int64_t i = 0; i < n; i++) f[i] = (float)(v ? v[i] : fill);
    } else if (fill != 0 || v) {
        for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dtype, d, i, v ? v[i] : fill);
    }
    if (!tfc_scope_track(ctx, t, st)) return NULL;
    return t;
}

/* Keras's _compute_fans. */
static void compute_fans(const tfc_shape *s, double *fan_in, double *fan_out) {
    if (s->rank < 1) {
        *fan_in = *fan_out = 1;
    } else if (s->rank == 1) {
        *fan_in = *fan_out = (double)s->dims[0];
    } else if (s->rank == 2) {
        *fan_in = (double)s->dims[0];
        *fan_out = (double)s->dims[1];
    } else {
        double rf = 1;
        for (int i = 0; i < s->rank - 2; i++) rf *= (double)s->dims[i];
        *fan_in = (double)s->dims[s->rank - 2] * rf;  /* size-ok: in double */
        *fan_out = (double)s->dims[s->rank - 1] * rf; /* size-ok: in double */
    }
}

static tfc_tensor *variance_scaling(tfc_ctx *ctx, const tfc_initializer *in, double scale, const char *mode,
                                    const char *dist, const tfc_shape *shape, tfc_dtype dtype, tfc_status *st) {
    if (!(scale > 0)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "VarianceScaling: `scale` must be positive float, got %g", scale);
        return NULL;
    }
    double fan_in, fan_out;
    compute_fans(shape, &fan_in, &fan_out);
    if (!strcmp(mode, "fan_in")) scale /= fmax(1.0, fan_in);
    else if (!strcmp(mode, "fan_out")) scale /= fmax(1.0, fan_out);
    else if (!strcmp(mode, "fan_avg")) scale /= fmax(1.0, (fan_in + fan_out) / 2.0);
    else {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "VarianceScaling: invalid `mode` argument: %s (expected fan_in, fan_out or fan_avg)", mode);
        return NULL;
    }
    if (!strcmp(dist, "truncated_normal") || !strcmp(dist, "normal"))
        /* the stddev of a unit normal truncated to [-2, 2] */
        return random_of(ctx, "TruncatedNormal", shape, dtype, 0, sqrt(scale) / .87962566103423978, in, st);
    if (!strcmp(dist, "untruncated_normal"))
        return random_of(ctx, "RandomStandardNormal", shape, dtype, 0, sqrt(scale), in, st);
    if (!strcmp(dist, "uniform")) {
        double limit = sqrt(3.0 * scale);
        return random_of(ctx, "RandomUniform", shape, dtype, -limit, limit, in, st);
    }
    tfc_status_set(st, TFC_INVALID_ARGUMENT,
                   "VarianceScaling: invalid `distribution` argument: %s (expected truncated_normal, "
                   "untruncated_normal or uniform)",
                   dist);
    return NULL;
}

/* Thin Householder QR of a (m x n, m >= n, row-major, overwritten): q (m x n) with columns scaled by
 * sign(diag(r)), as Keras's orthogonal initializer does after tf.linalg.qr. */
static void householder_q(double *a, int64_t m, int64_t n, double *q, double *v) {
    double *d = v + m * n; /* diag(r) */
    for (int64_t k = 0; k < n; k++) {
        double *vk = v + k * m;
        double norm = 0;
        for (int64_t i = k; i < m; i++) norm += a[i * n + k] * a[i * n + k];
        norm = sqrt(norm);
        double alpha = a[k * n + k] > 0 ? -norm : norm;
        for (int64_t i = 0; i < m; i++) vk[i] = i < k ? 0 : a[i * n + k];
        vk[k] -= alpha;
        double vn = 0;
        for (int64_t i = k; i < m; i++) vn += vk[i] * vk[i];
        vn = sqrt(vn);
        if (vn > 0) {
            for (int64_t i = k; i < m; i++) vk[i] /= vn;
            for (int64_t j = k; j < n; j++) {
                double dot = 0;
                for (int64_t i = k; i < m; i++) dot += vk[i] * a[i * n + j];
                for (int64_t i = k; i < m; i++) a[i * n + j] -= 2 * vk[i] * dot;
            }
        }
        d[k] = a[k * n + k];
    }
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) q[i * n + j] = i == j;
    for (int64_t k = n - 1; k >= 0; k--) {
        const double *vk = v + k * m;
        for (int64_t j = 0; j < n; j++) {
            double dot = 0;
            for (int64_t i = k; i < m; i++) dot += vk[i] * q[i * n + j];
            for (int64_t i = k; i < m; i++) q[i * n + j] -= 2 * vk[i] * dot;
        }
    }
    for (int64_t j = 0; j < n; j++) {
        double s = d[j] > 0 ? 1 : d[j] < 0 ? -1 : 0;
        for (int64_t i = 0; i < m; i++) q[i * n + j] *= s;
    }
}

static tfc_tensor *orthogonal(tfc_ctx *ctx, const tfc_initializer *in, double gain, const tfc_shape *shape,
                              tfc_dtype dtype, int64_t count, tfc_status *st) {
    if (shape->rank < 2) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "The tensor to initialize must be at least two-dimensional, got shape %s", TFC_KSHP(shape));
        return NULL;
    }
    int64_t rows = count / (shape->dims[shape->rank - 1] ? shape->dims[shape->rank - 1] : 1);
    int64_t cols = shape->dims[shape->rank - 1];
    if (count == 0) return from_f64(ctx, shape, dtype, NULL, 0, st);
    int64_t m = rows > cols ? rows : cols, n = rows > cols ? cols : rows;
    tfc_shape flat = {.rank = 2, .dims = {m, n}};
    tfc_initializer normal = *in;
    tfc_tensor *a = random_of(ctx, "RandomStandardNormal", &flat, TFC_DOUBLE, 0, 1, &normal, st);
    if (!a) return NULL;
    double *buf = tfc_malloc((size_t)(m * n * 2 + m * n + n) * sizeof(double));
    if (!buf) {
        if (ctx->n_scopes == 0) tfc_tensor_unref(a);
        tfc_status_oom(st, "Orthogonal initializer", (size_t)(m * n * 3 + n) * sizeof(double));
        return NULL;
    }
    double *am = buf, *q = buf + m * n, *v = buf + 2 * m * n;
    memcpy(am, tfc_tensor_data(a), (size_t)(m * n) * sizeof(double));
    if (ctx->n_scopes == 0) tfc_tensor_unref(a);
    householder_q(am, m, n, q, v);
    /* rows < cols: q is (cols x rows); the kernel is its transpose. */
    double *out = am;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) out[i * cols + j] = gain * (rows >= cols ? q[i * n + j] : q[j * n + i]);
    tfc_tensor *t = from_f64(ctx, shape, dtype, out, 0, st);
    tfc_free(buf);
    return t;
}

tfc_tensor *tfc_initializer_sample(tfc_ctx *ctx, const tfc_initializer *init, const tfc_shape *shape,
                                   tfc_dtype dtype, tfc_status *st) {
    if (!ctx || !shape) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "initializer: NULL argument");
        return NULL;
    }
    tfc_kinit k;
    tfc_kinit_set(&k, init, "zeros");
    const tfc_initializer *in = &k.init;
    const char *n = k.name;
    int64_t count;
    if (shape->rank < 0 || !tfc_shape_num_elements(shape, &count, "initializer", st)) {
        if (st->code == TFC_OK || shape->rank < 0)
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "initializer %s: shape %s is not fully defined", n, TFC_KSHP(shape));
        return NULL;
    }
    if (!strcmp(n, "zeros")) return from_f64(ctx, shape, dtype, NULL, 0, st);
    if (!strcmp(n, "ones")) return from_f64(ctx, shape, dtype, NULL, 1, st);
    if (!strcmp(n, "constant")) return from_f64(ctx, shape, dtype, NULL, in->value, st);
    if (!strcmp(n, "identity")) {
        if (shape->rank != 2) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "Identity matrix initializer can only be used for 2D matrices, got shape %s", TFC_KSHP(shape));
            return NULL;
        }
        double *v = tfc_calloc((size_t)(count ? count : 1), sizeof(double));
        if (!v) {
            tfc_status_oom(st, "Identity initializer", (size_t)count * sizeof(double));
            return NULL;
        }
        for (int64_t i = 0; i < shape->dims[0] && i < shape->dims[1]; i++) v[i * shape->dims[1] + i] = in->gain; /* size-ok: inside v */
        tfc_tensor *t = from_f64(ctx, shape, dtype, v, 0, st);
        tfc_free(v);
        return t;
    }
    if (!tfc_dtype_is_floating(dtype)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "initializer %s: expected a floating dtype, got %s", n,
                       tfc_dtype_name(dtype));
        return NULL;
    }
    if (!strcmp(n, "random_normal")) return random_of(ctx, "RandomStandardNormal", shape, dtype, in->mean, in->stddev, in, st);
    if (!strcmp(n, "truncated_normal")) return random_of(ctx, "TruncatedNormal", shape, dtype, in->mean, in->stddev, in, st);
    if (!strcmp(n, "random_uniform")) return random_of(ctx, "RandomUniform", shape, dtype, in->minval, in->maxval, in, st);
    if (!strcmp(n, "orthogonal")) return orthogonal(ctx, in, in->gain, shape, dtype, count, st);
    static const struct {
        const char *name, *mode, *dist;
        double scale;
    } presets[] = {
        {"glorot_uniform", "fan_avg", "uniform", 1},   {"glorot_normal", "fan_avg", "truncated_normal", 1},
        {"he_uniform", "fan_in", "uniform", 2},        {"he_normal", "fan_in", "truncated_normal", 2},
        {"lecun_uniform", "fan_in", "uniform", 1},     {"lecun_normal", "fan_in", "truncated_normal", 1},
    };
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
        if (!strcmp(n, presets[i].name))
            return variance_scaling(ctx, in, presets[i].scale, presets[i].mode, presets[i].dist, shape, dtype, st);
    if (!strcmp(n, "variance_scaling")) return variance_scaling(ctx, in, in->scale, in->mode, in->distribution, shape, dtype, st);
    tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown initializer: %s", n);
    return NULL;
}
