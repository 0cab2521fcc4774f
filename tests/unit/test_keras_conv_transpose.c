/* Keras Conv1DTranspose / Conv2DTranspose and the 1-D reshaping and pooling layers (UpSampling1D/2D, Cropping1D/2D,
 * ZeroPadding1D, MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D) through the C API:
 * values computed by hand on small inputs, output shapes, bad arguments (tests/conformance/test_keras_conv_transpose.py
 * and test_keras_reshaping.py compare with tf_keras on random cases). */
#include <string.h>

#include "tfc/keras.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *f32(const float *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, rank, v, (size_t)n * sizeof(float), &st);
    REQUIRE(t);
    return t;
}

/* layer(x) against want (n values) and the output dims; releases x and the layer. */
static void expect(const char *what, tfc_layer *l, tfc_tensor *x, const int64_t *dims, int rank, const float *want,
                   int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(l);
    tfc_tensor *y = tfc_layer_call1(l, ctx, x, false, &st);
    CHECK_OK(&st);
    if (y) {
        const tfc_shape *s = tfc_tensor_shape(y);
        bool same = s->rank == rank;
        for (int i = 0; same && i < rank; i++) same = s->dims[i] == dims[i];
        CHECK(same);
        CHECK(tfc_tensor_num_elements(y) == n);
        if (same && tfc_tensor_num_elements(y) == n) {
            const float *v = tfc_tensor_data(y);
            for (int64_t i = 0; i < n; i++)
                if (v[i] != want[i]) {
                    fprintf(stderr, "  %s: value %lld is %g, expected %g\n", what, (long long)i, v[i], want[i]);
                    CHECK(v[i] == want[i]);
                    break;
                }
        }
    }
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_layer_unref(l);
}

static void set_kernel(tfc_layer *l, const int64_t *in_dims, int rank, const float *k, const int64_t *kdims, int kr) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_shape s = {.rank = rank};
    memcpy(s.dims, in_dims, (size_t)rank * sizeof *in_dims);
    REQUIRE(tfc_layer_build(l, ctx, &s, 1, &st));
    tfc_tensor *w = f32(k, kdims, kr);
    CHECK(tfc_layer_set_weights(l, ctx, &w, 1, &st));
    CHECK_OK(&st);
    tfc_tensor_unref(w);
}

static void test_conv_transpose_values(void) {
    /* 1-D, stride 2, valid: each input step writes kernel * x at 2 * t: [3, 5] * [1, 2] -> [3, 6, 5, 10] */
    tfc_layer *l = tfc_layers_conv1d_transpose(.filters = 1, .kernel_size = {2}, .strides = {2}, .use_bias = TFC_NO);
    set_kernel(l, (int64_t[]){1, 2, 1}, 3, (float[]){1, 2}, (int64_t[]){2, 1, 1}, 3);
    expect("Conv1DTranspose", l, f32((float[]){3, 5}, (int64_t[]){1, 2, 1}, 3), (int64_t[]){1, 4, 1}, 3,
           (float[]){3, 6, 5, 10}, 4);

    /* 2-D, 2x2 ones, stride 1, valid: the full convolution of [[1, 2], [3, 4]] */
    l = tfc_layers_conv2d_transpose(.filters = 1, .kernel_size = {2}, .use_bias = TFC_NO);
    set_kernel(l, (int64_t[]){1, 2, 2, 1}, 4, (float[]){1, 1, 1, 1}, (int64_t[]){2, 2, 1, 1}, 4);
    expect("Conv2DTranspose", l, f32((float[]){1, 2, 3, 4}, (int64_t[]){1, 2, 2, 1}, 4), (int64_t[]){1, 3, 3, 1}, 4,
           (float[]){1, 3, 2, 4, 10, 6, 3, 7, 4}, 9);

    /* same padding, stride 2, output_padding 1: (2 - 1) * 2 + 3 - 2 * 1 + 1 = 4 steps; the forward SAME
     * convolution of 4 steps pads 0 before and 1 after, so y[j] = sum over t of x[t] * k[j - 2t] */
    l = tfc_layers_conv1d_transpose(.filters = 1, .kernel_size = {3}, .strides = {2}, .padding = "same",
                                    .output_padding = {1}, .has_output_padding = true, .use_bias = TFC_NO);
    set_kernel(l, (int64_t[]){1, 2, 1}, 3, (float[]){1, 10, 100}, (int64_t[]){3, 1, 1}, 3);
    expect("Conv1DTranspose same", l, f32((float[]){1, 2}, (int64_t[]){1, 2, 1}, 3), (int64_t[]){1, 4, 1}, 3,
           (float[]){1, 10, 102, 20}, 4);
}

static void test_reshaping_values(void) {
    float x4[] = {1, 3, 2, 5};
    expect("UpSampling1D", tfc_layers_up_sampling1d(.size = 2), f32(x4, (int64_t[]){1, 2, 2}, 3),
           (int64_t[]){1, 4, 2}, 3, (float[]){1, 3, 1, 3, 2, 5, 2, 5}, 8);
    expect("UpSampling2D", tfc_layers_up_sampling2d(.size = {1, 2}), f32(x4, (int64_t[]){1, 2, 2, 1}, 4),
           (int64_t[]){1, 2, 4, 1}, 4, (float[]){1, 1, 3, 3, 2, 2, 5, 5}, 8);
    expect("Cropping1D", tfc_layers_cropping1d(.cropping = {1, 0}, .has_cropping = true),
           f32(x4, (int64_t[]){1, 4, 1}, 3), (int64_t[]){1, 3, 1}, 3, (float[]){3, 2, 5}, 3);
    expect("Cropping2D", tfc_layers_cropping2d(.cropping = {{0, 1}, {1, 0}}), f32(x4, (int64_t[]){1, 2, 2, 1}, 4),
           (int64_t[]){1, 1, 1, 1}, 4, (float[]){3}, 1);
    expect("ZeroPadding1D", tfc_layers_zero_padding1d(.padding = {1, 2}, .has_padding = true),
           f32(x4, (int64_t[]){1, 2, 2}, 3), (int64_t[]){1, 5, 2}, 3, (float[]){0, 0, 1, 3, 2, 5, 0, 0, 0, 0}, 10);
    expect("MaxPooling1D", tfc_layers_max_pooling1d(), f32(x4, (int64_t[]){1, 4, 1}, 3), (int64_t[]){1, 2, 1}, 3,
           (float[]){3, 5}, 2);
    expect("AveragePooling1D", tfc_layers_average_pooling1d(.pool_size = 2, .strides = 1),
           f32(x4, (int64_t[]){1, 4, 1}, 3), (int64_t[]){1, 3, 1}, 3, (float[]){2, 2.5f, 3.5f}, 3);
    expect("GlobalAveragePooling1D", tfc_layers_global_average_pooling1d(), f32(x4, (int64_t[]){1, 2, 2}, 3),
           (int64_t[]){1, 2}, 2, (float[]){1.5f, 4}, 2);
    expect("GlobalMaxPooling1D channels_first", tfc_layers_global_max_pooling1d(.data_format = "channels_first",
                                                                                 .keepdims = true),
           f32(x4, (int64_t[]){1, 2, 2}, 3), (int64_t[]){1, 2, 1}, 3, (float[]){3, 5}, 2);
}

/* Building l for in_dims fails with INVALID_ARGUMENT (or code) and a message containing each of the strings. */
static void expect_error(tfc_layer *l, const int64_t *in_dims, int rank, tfc_code code, const char *a, const char *b) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(l);
    tfc_shape s = {.rank = rank};
    memcpy(s.dims, in_dims, (size_t)rank * sizeof *in_dims);
    CHECK(!tfc_layer_build(l, ctx, &s, 1, &st));
    CHECK_CODE(&st, code);
    const char *m = st.msg;
    CHECK(strstr(m, a) != NULL);
    CHECK(!b || strstr(m, b) != NULL);
    if (!strstr(m, a) || (b && !strstr(m, b))) fprintf(stderr, "  message: %s\n", m);
    tfc_status_clear(&st);
    tfc_layer_unref(l);
}

static void test_errors(void) {
    int64_t img[] = {1, 3, 3, 1}, seq[] = {1, 3, 2};
    expect_error(tfc_layers_conv2d_transpose(.filters = 1, .kernel_size = {2}, .strides = {2},
                                             .output_padding = {2, 1}, .has_output_padding = true),
                 img, 4, TFC_INVALID_ARGUMENT, "Strides must be greater than output padding", "output_padding=(2, 1)");
    expect_error(tfc_layers_conv2d_transpose(.filters = 1, .kernel_size = {2}, .dilation_rate = {1, 2}), img, 4,
                 TFC_INVALID_ARGUMENT, "dilation_rate=(1, 2)", NULL);
    expect_error(tfc_layers_conv2d_transpose(.filters = 1, .kernel_size = {2}), seq, 3, TFC_INVALID_ARGUMENT,
                 "Inputs should have rank 4", NULL);
    expect_error(tfc_layers_conv1d_transpose(.filters = 1, .kernel_size = {2}, .padding = "causal"), seq, 3,
                 TFC_INVALID_ARGUMENT, "Causal padding", NULL);
    expect_error(tfc_layers_conv1d_transpose(.filters = 1, .kernel_size = {INT64_MAX / 2}, .dilation_rate = {4}), seq,
                 3, TFC_INVALID_ARGUMENT, "overflows", NULL);
    expect_error(tfc_layers_conv1d_transpose(.filters = 1, .kernel_size = {2}, .strides = {INT64_MAX / 2}),
                 (int64_t[]){1, 8, 1}, 3, TFC_INVALID_ARGUMENT, "overflows", NULL);
    expect_error(tfc_layers_cropping1d(.cropping = {2, 1}, .has_cropping = true), seq, 3, TFC_INVALID_ARGUMENT,
                 "must be greater than the input shape", "cropping=(2, 1)");
    expect_error(tfc_layers_zero_padding1d(.padding = {-1, 0}, .has_padding = true), seq, 3, TFC_INVALID_ARGUMENT,
                 "`>= 0`", NULL);
    expect_error(tfc_layers_up_sampling2d(.interpolation = "lanczos3"), img, 4, TFC_UNIMPLEMENTED, "lanczos3", NULL);
    expect_error(tfc_layers_up_sampling1d(.size = INT64_MAX / 2), seq, 3, TFC_INVALID_ARGUMENT, "overflows", NULL);
    expect_error(tfc_layers_max_pooling1d(.pool_size = 4), seq, 3, TFC_INVALID_ARGUMENT, "<= 0", NULL);
    expect_error(tfc_layers_global_average_pooling1d(), (int64_t[]){1, 0, 2}, 3, TFC_INVALID_ARGUMENT,
                 "Incorrect input shape", NULL);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_conv_transpose_values();
    test_reshaping_values();
    test_errors();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
