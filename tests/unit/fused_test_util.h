/* Helpers shared by the tests of tfc's fused Keras paths (test_keras_fused.c, test_keras_conv_pool.c,
 * test_keras_conv_pool_train.c): xorshift32 random float32 tensors and bit-for-bit comparison. */
#ifndef TFC_FUSED_TEST_UTIL_H
#define TFC_FUSED_TEST_UTIL_H

#include <string.h>

#include "tfc/tensor.h"
#include "tfc_test.h"

/* The state of uniform(); each test seeds it in main. */
static uint32_t test_rng = 1u;

/* uniform in [-1, 1) */
static inline float uniform(void) {
    test_rng ^= test_rng << 13;
    test_rng ^= test_rng >> 17;
    test_rng ^= test_rng << 5;
    return (float)(test_rng >> 8) / 8388608.0f - 1.0f;
}

/* A float32 tensor uniform in [-scale, scale), or of integers in [-ints, ints] when ints > 0. */
static inline tfc_tensor *random_tensor_ints(const int64_t *dims, int rank, float scale, int ints) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, dims, rank, &st);
    REQUIRE(t);
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++)
        p[i] = ints ? (float)(int)((uniform() + 1.0f) * 0.5f * (float)(2 * ints + 1) - 1e-6f) - (float)ints
                    : scale * uniform();
    return t;
}

static inline tfc_tensor *random_tensor(const int64_t *dims, int rank, float scale) {
    return random_tensor_ints(dims, rank, scale, 0);
}

/* Whether float32 tensors a and b have one shape and equal bits. */
static inline bool same(const tfc_tensor *a, const tfc_tensor *b) {
    if (!a || !b || !tfc_shape_equal(tfc_tensor_shape(a), tfc_tensor_shape(b))) return false;
    return !memcmp(tfc_tensor_data(a), tfc_tensor_data(b), (size_t)tfc_tensor_num_elements(a) * sizeof(float));
}

#endif
