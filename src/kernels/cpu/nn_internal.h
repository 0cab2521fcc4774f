/* Internal: helpers shared by the NN kernels (nn.c, nn_softmax.c, nn_batchnorm.c). */
#ifndef TFC_KERNELS_CPU_NN_INTERNAL_H
#define TFC_KERNELS_CPU_NN_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/kernels.h"

/* Lanes of the manual reductions below: enough independent accumulators for the compiler to turn the
 * loop into vector adds without reassociating a single sum (which it may not do without -ffast-math). */
#define NN_LANES 16

/* exp(x) in float32 to about 2 ulp (Cephes' polynomial), branch-free so that loops over it vectorise.
 * exp(x) underflows to 0 below about -104, overflows to +inf above 88.72; NaN stays NaN. */
static inline float nn_expf(float x) {
    float xs = x == x ? x : 0.0f;
    xs = xs > 88.7228f ? 88.7228f : xs;
    xs = xs < -104.0f ? -104.0f : xs;
    float t = xs * 1.44269504088896341f;
    float n = (t + 12582912.0f) - 12582912.0f; /* round to nearest: 1.5 * 2^23 */
    float r = xs - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * r * r + r + 1.0f;
    /* 2^n in two factors so that n in [-150, 128] stays within the exponent range of each. */
    int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
    union { int32_t i; float f; } s1 = {.i = (n1 + 127) * (1 << 23)}, s2 = {.i = (n2 + 127) * (1 << 23)};
    y = y * s1.f * s2.f;
    y = x > 88.7228f ? INFINITY : y;
    return x == x ? y : x;
}

/* Sum and max of n floats with NN_LANES accumulators (vectorised). */
static inline float nn_sum_f32(const float *x, int64_t n) {
    float acc[NN_LANES] = {0};
    int64_t i = 0;
    for (; i + NN_LANES <= n; i += NN_LANES)
        for (int j = 0; j < NN_LANES; j++) acc[j] += x[i + j];
    float s = 0;
    for (int j = 0; j < NN_LANES; j++) s += acc[j];
    for (; i < n; i++) s += x[i];
    return s;
}

static inline float nn_max_f32(const float *x, int64_t n) {
    float acc[NN_LANES];
    for (int j = 0; j < NN_LANES; j++) acc[j] = -INFINITY;
    int64_t i = 0;
    for (; i + NN_LANES <= n; i += NN_LANES)
        for (int j = 0; j < NN_LANES; j++) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
    float m = -INFINITY;
    for (int j = 0; j < NN_LANES; j++) m = acc[j] > m ? acc[j] : m;
    for (; i < n; i++) m = x[i] > m ? x[i] : m;
    return m;
}

/* half / bfloat16 <-> float32 for n elements (kernels widen these dtypes and run their float32 path). */
static inline void nn_widen(tfc_dtype dt, const void *src, float *dst, int64_t n) {
    if (dt == TFC_BFLOAT16) {
        const uint16_t *s = src;
        for (int64_t i = 0; i < n; i++) {
            union { uint32_t u; float f; } v = {.u = (uint32_t)s[i] << 16};
            dst[i] = v.f;
        }
    } else {
        const tfc_half *s = src;
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_half_to_float(s[i]);
    }
}

static inline void nn_narrow(tfc_dtype dt, const float *src, void *dst, int64_t n) {
    if (dt == TFC_BFLOAT16) {
        tfc_bfloat16 *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = tfc_bfloat16_from_float(src[i]);
    } else {
        tfc_half *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = tfc_half_from_float(src[i]);
    }
}

static inline bool nn_is_half(tfc_dtype dt) { return dt == TFC_HALF || dt == TFC_BFLOAT16; }

/* A float32 copy of a half/bfloat16 tensor's n elements (tfc_free it); NULL with st set when out of memory. */
float *tfc_nn_widen_alloc(const tfc_kernel_ctx *k, const tfc_tensor *t, tfc_status *st);
/* Uninitialised float32 scratch of n elements (tfc_free it); NULL with st set when out of memory. */
float *tfc_nn_scratch(const tfc_kernel_ctx *k, int64_t n, tfc_status *st);

/* Number of row chunks for a parallel column reduction of a [rows, cols] matrix: a few per thread, each
 * large enough to be worth a task. */
int64_t tfc_nn_reduce_chunks(const tfc_kernel_ctx *k, int64_t rows, int64_t cols);

/* Kernels defined in nn_softmax.c and nn_batchnorm.c, registered by nn.c's table. */
bool tfc_nn_softmax(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_log_softmax(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_xent(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_sparse_xent(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_fused_batch_norm(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_fused_batch_norm_grad(tfc_kernel_ctx *k, tfc_status *st);

#endif
