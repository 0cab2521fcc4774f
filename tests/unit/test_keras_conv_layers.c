/* Keras image and normalization layers: Conv2D, DepthwiseConv2D, MaxPooling2D, AveragePooling2D,
 * GlobalAveragePooling2D, GlobalMaxPooling2D, ZeroPadding2D, BatchNormalization, LayerNormalization.
 * Output shapes, weights, configs and values are compared with tf_keras: the EXP_* arrays and the expected
 * configs were produced by running tf_keras 2.x on the same inputs (seq() below is numpy's
 * ((i * a % m) - m // 2) * s + off in float32); small cases are computed by hand. */
#include <cjson/cJSON.h>

#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "tfc/ops/array.h"
#include "tfc/ops/math.h"
#include "tfc/ops/reduction.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *tensor_f32(const float *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, rank, v, (size_t)n * sizeof(float), &st);
    REQUIRE(t);
    return t;
}
#define T32(dims, ...) \
    tensor_f32((const float[]){__VA_ARGS__}, (const int64_t[])dims, sizeof((const int64_t[])dims) / sizeof(int64_t))
#define DIMS(...) {__VA_ARGS__}

/* The deterministic inputs shared with the tf_keras script. */
static tfc_tensor *seq(const int64_t *dims, int rank, int a, int m, float s, float off) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    REQUIRE(v);
    for (int64_t i = 0; i < n; i++) {
        float q = (float)((i * a) % m - m / 2);
        volatile float p = q * s; /* no fused multiply-add: numpy rounds the product */
        v[i] = p + off;
    }
    tfc_tensor *t = tensor_f32(v, dims, rank);
    free(v);
    return t;
}
#define SEQ(dims, a, m, s, off) \
    seq((const int64_t[])dims, sizeof((const int64_t[])dims) / sizeof(int64_t), a, m, s, off)

/* Caller-owned inputs of a test, released together by collect(). */
static tfc_tensor *garbage[1024];
static int n_garbage;
static tfc_tensor *G(tfc_tensor *t) {
    REQUIRE(t && n_garbage < 1024);
    return garbage[n_garbage++] = t;
}
static void collect(void) {
    while (n_garbage) tfc_tensor_unref(garbage[--n_garbage]);
}

static float at(const tfc_tensor *t, int64_t i) { return ((const float *)tfc_tensor_data(t))[i]; }

static bool shape_is(const tfc_shape *s, int rank, const int64_t *dims) {
    if (s->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (s->dims[i] != dims[i]) return false;
    return true;
}
#define SHAPE_IS(s, ...) \
    shape_is((s), sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (const int64_t[]){__VA_ARGS__})

/* Every element of t against want (n values; t must have n elements). */
static void check_values(const char *what, const tfc_tensor *t, const double *want, int64_t n, double tol) {
    CHECK(t != NULL);
    if (!t) return;
    int64_t have = tfc_tensor_num_elements(t);
    CHECK(have == n);
    if (have != n) {
        fprintf(stderr, "  %s: %lld elements, expected %lld\n", what, (long long)have, (long long)n);
        return;
    }
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = tfc_tensor_get_f64(t, i);
        if (!(fabs(a - want[i]) <= tol * (1.0 + fabs(want[i])))) {
            if (bad++ < 4) fprintf(stderr, "  %s[%lld] = %.9g, expected %.9g\n", what, (long long)i, a, want[i]);
        }
    }
    tfc_test_checks++;
    if (bad) tfc_test_failures++;
}
#define CHECK_VALUES(t, want, tol) check_values(#want, (t), (want), (int64_t)(sizeof(want) / sizeof *(want)), (tol))

static void set_weights(tfc_layer *l, int n, tfc_tensor **w) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(tfc_layer_set_weights(l, ctx, w, n, &st));
    CHECK_OK(&st);
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
}

static tfc_tensor *call(tfc_layer *l, tfc_tensor *x, bool training) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *y = tfc_layer_call1(l, ctx, x, training, &st);
    CHECK_OK(&st);
    return y;
}

/* Calls l on x and expects INVALID_ARGUMENT whose message holds each of the given strings. */
static void expect_error(tfc_layer *l, tfc_tensor *x, const char *const *parts) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *y = tfc_layer_call1(l, ctx, x, false, &st);
    CHECK(y == NULL);
    tfc_tensor_unref(y);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    for (int i = 0; parts[i]; i++) {
        CHECK(strstr(st.msg, parts[i]) != NULL);
        if (!strstr(st.msg, parts[i])) fprintf(stderr, "  \"%s\" not in: %s\n", parts[i], st.msg);
    }
}
#define EXPECT_ERROR(l, x, ...) expect_error((l), (x), (const char *const[]){__VA_ARGS__, NULL})

static const double EXP_V1[] = { /* [2,3,4,3] */
    0.575000107, 0.0500000268, 1.29999995, 0, 0.799999952, 0.5, 0.62500006, 0, 0, 0.199999988, 0.25, 0, 0,
    1.39999986, 0.025000006, 0, 0, 1.22500002, 0.650000036, 0, 0, 0.825000048, 0, 1.5250001, 0.0500000045, 0,
    0.699999988, 1, 0, 0, 7.4505806e-09, 0.25, 0, 0, 0, 1.02499998, 0.25, 0, 0.449999988, 0.650000036, 0, 0,
    0.825000048, 0, 1.75, 0, 0.0999999493, 0.700000048, 0.174999997, 0, 5.96046448e-08, 1.22500002, 0, 0.425000072,
    0, 1.54999995, 0.549999952, 0, 0, 1.5250001, 0, 0.400000036, 0, 0, 0.425000012, 0.87499994, 0.349999994, 0, 0.75,
    0.650000036, 0, 0};
static const double EXP_V2[] = { /* [1,4,3,3] */
    2.24000025, 0.49999997, 0.800000012, 0.380000055, -1.36000001, 0.979999959, -1.48000002, 0.860000074,
    0.139999896, -1.44000006, -0.780000031, 1.9200002, -0.840000033, 1.8599999, -0.539999962, 1.80000019,
    -0.600000083, -0.960000098, 1.18000007, 1.18000019, -0.860000074, 1.18000019, -0.860000014, 1.18000007,
    -2.9000001, 1.18000007, -1.88, 0.0399999022, 0.400000036, 2.80000019, 0.459999979, 2.86000013, 0.159999967,
    2.92000008, 0.219999969, -0.440000057};
static const double EXP_V3[] = { /* [1,2,2,4] */
    0.449999988, 1.55000007, 1.89999986, -0.349999934, 0.150000006, -0.550000012, -0.0499999821, 0.300000012, -0.75,
    0.849999964, 0.400000036, 1.89999998, 0.349999994, 0.149999991, 0.200000003, 0.450000048};
static const double EXP_V3B[] = { /* [1,4,3,3] */
    1.39999998, 1.75, -0.300000012, -0.649999976, -0.650000036, -0.25, -0.099999994, 0.75, 1.49999988, -0.600000024,
    -1.04999995, -0.600000024, -1.25, 2.0999999, 0.399999976, 0.0499999896, -0.950000048, -1.05000007, -0.600000024,
    -1.04999995, -0.600000024, 2.20000005, 1.35000002, 0.350000024, -0.800000012, -0.949999988, 0.099999994,
    -0.300000012, 1.75000012, 1.4000001, -0.5, -1.94999993, -1.4000001, 0.150000006, 0.600000024, 1.5};
static const double EXP_V4MAX[] = { /* [1,2,2,2] */
    0, 3, 1, 2, 2.5, 2, 3, 3};
static const double EXP_V4AVG[] = { /* [1,3,3,2] */
    -1.5, 0.375, -0.75, -0.5, 0, 0.25, 0.0833333358, 0.333333343, 0.111111112, 0, -0.583333313, -0.333333343, -0.5,
    -0.25, 0.25, 0.5, 1, -0.375};
static const double EXP_V4MAXCF[] = { /* [1,2,5,3] */
    0, 1, 1.5, 2.5, 3, 1.5, 2.5, 3, 0, 1, 2, 2.5, 1, 2, 2.5, 3, 2, 2.5, 3, 0.5, 1, 2, 3, 3, 2, 3, 3, -2, -1, -0.5};
static const double EXP_BN4_TRAIN[] = { /* [2,3,2,3] */
    0.488452494, 0.59555763, -1.28889418, -1.01362562, 0.270708054, -2.10101819, -0.863417745, -0.0541415736,
    -2.91314244, -0.713209927, -0.378991187, -3.7252667, -0.563002169, -0.703840852, 4.39597416, -0.412794381,
    -1.02869058, 3.58385038, -0.262586594, -1.35354006, 2.77172661, -0.112378776, -1.67838979, 1.95960236,
    0.0378290266, 1.57010663, 1.14747822, 0.188036844, 1.2452569, 0.33535412, 0.338244677, 0.920407295, -0.476770043,
    0.488452494, 0.59555763, -1.28889418};
static const double EXP_BN4_MM[] = { /* [3] */
    -0.260833353, 0.218333319, 0.0216666628};
static const double EXP_BN4_MV[] = { /* [3] */
    1.20208335, 1.83333325, 1.38333333};
static const double EXP_BN4_INFER[] = { /* [2,3,2,3] */
    0.683969498, 0.798645914, -1.33340287, -1.59528148, 0.429472208, -2.39580703, -1.3673563, 0.0602984056,
    -3.45821095, -1.13943124, -0.308875382, -4.5206151, -0.911506176, -0.678049147, 6.10342407, -0.683581054,
    -1.04722309, 5.04101992, -0.455655992, -1.41639686, 3.97861648, -0.2277309, -1.7855705, 2.91621256,
    0.000194191933, 1.90616739, 1.85380888, 0.228119299, 1.53699362, 0.791404843, 0.456044376, 1.16781974,
    -0.270999014, 0.683969498, 0.798645914, -1.33340287};
static const double EXP_BN4_DX[] = { /* [2,3,2,3] */
    0.102568351, -0.0115220612, 0.749247909, 0.0590322129, 0.254642427, -0.38510713, -0.0687970445, -0.193862334,
    0.267210782, 0.133830875, 0.0723021552, -0.867144287, 0.00600161823, 0.338466614, -0.243631527, -0.12182764,
    -0.110038117, 0.408686399, 0.08080028, 0.15612635, -0.725668669, -0.0470289774, -0.292378396, -0.0733507499,
    -0.174858212, -0.095346272, 0.578967154, 0.0277696867, 0.17081821, -0.555387914, -0.100059561, -0.277686536,
    0.0969300196, 0.102568351, -0.0115220612, 0.749247909};
static const double EXP_BN4_DW0[] = { /* [3] */
    1.01890969, 0.357334644, 0.0595557876};
static const double EXP_BN4_DW1[] = { /* [3] */
    1.89999986, 2.4000001, 2.9000001};
static const double EXP_BN2_TRAIN[] = { /* [4,3] */
    0.252192497, 2.98023224e-08, -2.06096172, -0.953653991, -1.41389298, 3.9682703, -0.350730777, 1.41389298,
    0.95365417, 0.252192497, 2.98023224e-08, -2.06096172};
static const double EXP_BN2_MM[] = { /* [3] */
    -0.311250001, 0.203000009, -0.00725000026};
static const double EXP_BN2_MV[] = { /* [3] */
    1.02031875, 1.75454998, 1.26781881};
static const double EXP_BN2_INFER[] = { /* [4,3] */
    1.13026977, 0.224155724, -4.88858366, -0.947696924, -1.36078382, 4.43299532, 0.0912864208, 1.80909514,
    -0.227793932, 1.13026977, 0.224155724, -4.88858366};
static const double EXP_BN2_DX[] = { /* [4,3] */
    0.044387117, -0.0336641185, 0.639489949, 0.0600044131, 0.000106811523, -0.15664652, -0.120068029,
    -0.000106811523, 0.313198268, 0.0156764835, 0.0336641259, -0.796041667};
static const double EXP_BN2_DW0[] = { /* [3] */
    0.753654063, -0.989725113, -0.241169244};
static const double EXP_BN2_DW1[] = { /* [3] */
    0.0999999791, 1, 0.800000012};
static const double EXP_BN4CF_TRAIN[] = { /* [2,3,2,2] */
    0.454482794, 0.0299534053, -0.394576013, -0.819105387, 1.36439431, -1.29783845, -0.499168634, 0.299501151,
    3.61098552, -3.04459596, -1.04792142, 0.94875288, -0.960615158, 0.454482794, 0.0299534053, -0.394576013,
    0.565724432, 1.36439431, -1.29783845, -0.499168634, 1.6143111, 3.61098552, -3.04459596, -1.04792142};
static const double EXP_BN4CF_MM[] = { /* [3] */
    -0.30250001, 0.201499999, -0.000499999907};
static const double EXP_BN4CF_MV[] = { /* [3] */
    1.01282859, 1.75830007, 1.26329994};
static const double EXP_BN4CF_INFER[] = { /* [2,3,2,2] */
    0.842086613, 0.245898768, -0.350288987, -0.946476758, 1.65798235, -1.35858774, -0.453616709, 0.451354265,
    4.64964247, -4.24741888, -1.57830012, 1.09081829, -1.14520609, 0.842086613, 0.245898768, -0.350288987,
    0.753011286, 1.65798235, -1.35858774, -0.453616709, 1.98052454, 4.64964247, -4.24741888, -1.57830012};
static const double EXP_BN4CF_DX[] = { /* [2,3,2,2] */
    0.192074329, 0.0254150871, -0.141244128, 0.0812485889, 0.11888659, -0.0254283324, 0.230844751, -0.24499616,
    0.297216475, -0.0635708794, 0.57711184, -0.612490356, 0.0492804721, -0.161700174, 0.0607925393, -0.105866693,
    -0.203942329, 0.0523307547, -0.0919841528, 0.164288938, -0.509855807, 0.130826935, -0.229960427, 0.410722286};
static const double EXP_BN4CF_DW0[] = { /* [3] */
    0.272406489, 1.15141582, 1.15141571};
static const double EXP_BN4CF_DW1[] = { /* [3] */
    2.29999995, 1.79999995, 0.200000003};
static const double EXP_BNMULTI_TRAIN[] = { /* [2,2,3] */
    -1.19861412, 0.999777913, -0.798614085, -1.0986141, 1.09977794, -1.19861412, 0.798614025, -0.999777913,
    1.19861412, 0.898614049, -0.899777889, 0.798614025};
static const double EXP_BNMULTI_MM[] = { /* [1,2,3] */
    -0.75, -0.049999997, 0.300000012, -0.400000036, 0.300000012, 0.650000036};
static const double EXP_BNMULTI_MV[] = { /* [1,2,3] */
    0.680000007, 2, 0.805000007, 1.18000007, 1.875, 0.680000007};
static const double EXP_BNMULTI_INFER[] = { /* [2,2,3] */
    -1.47237682, 0.883662641, -0.134159431, -0.836147785, 1.19515312, -0.260589421, -0.0182318687, -1.23712778,
    1.20247829, 0.268073916, -0.995153189, 1.19355559};
static const double EXP_BNMULTI_DX[] = { /* [2,2,3] */
    -0.0018441081, 4.44203615e-05, 0.000691488385, 0.00069154799, 4.44203615e-05, 0.00069154799, 0.0018441081,
    -4.44203615e-05, -0.00069154799, -0.00069154799, -4.44203615e-05, -0.00069154799};
static const double EXP_BNMULTI_DW0[] = { /* [1,2,3] */
    0.199999988, 0.099999994, 1.10000002, -0.100000001, 0.900000036, -0.300000012};
static const double EXP_BN3AX1_TRAIN[] = { /* [2,3,2] */
    0.792408586, -0.512735009, 1.38589799, 0.277179599, -3.96204281, 2.56367493, -0.326285899, 0.0466122702,
    -0.277179599, -1.38589799, 1.63142955, -0.233061314};
static const double EXP_BN3AX1_MM[] = { /* [3] */
    -0.295750022, 0.190500006, 0.00624999963};
static const double EXP_BN3AX1_MV[] = { /* [3] */
    1.00796878, 1.74062502, 1.25546873};
static const double EXP_BN3AX1_INFER[] = { /* [2,3,2] */
    0.848329186, -0.89387548, 0.234521836, -0.523222446, -3.35939598, 4.44666958, -0.644989073, -0.147216305,
    -0.902094543, -1.6598388, 3.33151722, 1.10121286};
static const double EXP_BN3AX1_DX[] = { /* [2,3,2] */
    -0.0102927089, 0.0505303591, 0.0517219305, -0.255748004, 0.301860213, 0.0679009557, -0.0966636762, 0.0564260259,
    0.255748034, -0.0517219901, 0.500857472, -0.870618582};
static const double EXP_BN3AX1_DW0[] = { /* [3] */
    1.01614749, 1.16415429, -0.727151453};
static const double EXP_LN1[] = { /* [2,3,4] */
    0.4564417, 0.525153339, -1.11288309, 0.556441665, -0.299968034, -1.39955223, 3.69888043, -0.19996801,
    0.161374077, 1.52580166, 0.802290082, -0.621984839, -0.299968004, -1.39955223, 3.69888043, -0.19996801,
    0.161374077, 1.52580166, 0.802290142, -0.621984839, -0.721984804, -0.240916058, -3.6145041, 0.261374086};
static const double EXP_LN2[] = { /* [2,3,4] */
    0.488452494, 0.726004422, -0.9891451, 0.71362555, 0.951177597, -0.200000003, 1.99025321, 0.137413412,
    -1.17648923, 2.66604996, -0.2876212, -2.75380993, -0.497778833, -0.703840852, 4.12526608, 0.0353540406,
    -1.95738089, -0.200000003, -0.0812123567, 0.87677002, 0.820407331, -0.847477913, -1.03919494, 1.19111538};
static const double EXP_LN3[] = { /* [2,3,4] */
    0.244371474, -0.453926504, 0.244371444, -0.812298954, 1.39659595, -1.39659595, 1.39659595, 4.84287739e-08,
    -1.06963253, 2.42185712, -1.06963277, -2.86149478, -0.453926504, 0.244371444, -0.812298954, -0.453926533,
    -1.39659595, 1.39659595, 4.84287739e-08, -1.39659595, 2.42185712, -1.06963277, -2.86149478, 2.42185712};
static const double EXP_LN4[] = { /* [2,3,4] */
    0.456532061, 0.525225699, -1.11306405, 0.556532025, -0.299999982, -1.39999962, 3.69999862, -0.199999958,
    0.161448658, 1.52611661, 0.802414417, -0.622092545, -0.299999952, -1.39999962, 3.69999886, -0.199999973,
    0.161448628, 1.52611649, 0.802414417, -0.622092485, -0.722092509, -0.240965769, -3.61529136, 0.261448681};
static const double EXP_LN5[] = { /* [2,3,4] */
    0.488452494, 0.726004422, -0.9891451, 0.71362555, 0.951177597, -0.200000003, 1.99025321, 0.137413412,
    -1.17648923, 2.66604996, -0.2876212, -2.75380993, -0.497778833, -0.703840852, 4.12526608, 0.0353540406,
    -1.95738089, -0.200000003, -0.0812123567, 0.87677002, 0.820407331, -0.847477913, -1.03919494, 1.19111538};

/* ---- output shapes (expected values from tf_keras's compute_output_shape) ---- */
typedef struct {
    const char *kind; /* conv, dw, max, avg */
    int64_t n;        /* filters / depth_multiplier */
    int64_t k[2], s[2];
    const char *padding;
    int cf;
    int64_t d[2], groups;
    int rank;
    int64_t in[5], out[5];
} shape_case;

static const shape_case shape_cases[] = {
    {"conv", 8, {3, 3}, {1, 1}, "valid", 0, {1, 1}, 1, 4, {-1, 28, 28, 3}, {-1, 26, 26, 8}},
    {"conv", 8, {3, 3}, {1, 1}, "same", 0, {1, 1}, 1, 4, {-1, 28, 28, 3}, {-1, 28, 28, 8}},
    {"conv", 4, {3, 3}, {2, 2}, "valid", 0, {1, 1}, 1, 4, {2, 28, 28, 3}, {2, 13, 13, 4}},
    {"conv", 4, {3, 3}, {2, 2}, "same", 0, {1, 1}, 1, 4, {2, 27, 28, 3}, {2, 14, 14, 4}},
    {"conv", 4, {5, 3}, {3, 2}, "valid", 0, {1, 1}, 1, 4, {1, 17, 9, 2}, {1, 5, 4, 4}},
    {"conv", 4, {3, 3}, {1, 1}, "valid", 0, {2, 2}, 1, 4, {1, 10, 10, 1}, {1, 6, 6, 4}},
    {"conv", 4, {3, 2}, {1, 1}, "same", 0, {3, 2}, 1, 4, {1, 10, 7, 1}, {1, 10, 7, 4}},
    {"conv", 6, {3, 3}, {1, 1}, "valid", 1, {1, 1}, 1, 4, {-1, 3, 32, 30}, {-1, 6, 30, 28}},
    {"conv", 6, {3, 3}, {2, 1}, "same", 1, {1, 1}, 3, 4, {-1, 3, 31, 30}, {-1, 6, 16, 30}},
    {"conv", 6, {1, 1}, {1, 1}, "valid", 0, {1, 1}, 2, 4, {4, 5, 5, 4}, {4, 5, 5, 6}},
    {"conv", 2, {3, 3}, {1, 1}, "valid", 0, {1, 1}, 1, 4, {-1, -1, -1, 5}, {-1, -1, -1, 2}},
    {"conv", 2, {3, 3}, {1, 1}, "valid", 0, {1, 1}, 1, 5, {2, 3, 6, 6, 2}, {2, 3, 4, 4, 2}},
    {"dw", 1, {3, 3}, {1, 1}, "valid", 0, {1, 1}, 1, 4, {-1, 28, 28, 3}, {-1, 26, 26, 3}},
    {"dw", 2, {3, 3}, {2, 2}, "same", 0, {1, 1}, 1, 4, {-1, 28, 27, 3}, {-1, 14, 14, 6}},
    {"dw", 3, {2, 4}, {1, 1}, "valid", 1, {2, 1}, 1, 4, {1, 4, 9, 9}, {1, 12, 7, 6}},
    {"max", 0, {2, 2}, {0, 0}, "valid", 0, {1, 1}, 1, 4, {-1, 28, 28, 3}, {-1, 14, 14, 3}},
    {"max", 0, {3, 3}, {2, 2}, "valid", 0, {1, 1}, 1, 4, {-1, 7, 8, 3}, {-1, 3, 3, 3}},
    {"max", 0, {3, 3}, {2, 2}, "same", 0, {1, 1}, 1, 4, {-1, 7, 8, 3}, {-1, 4, 4, 3}},
    {"max", 0, {2, 3}, {0, 0}, "same", 1, {1, 1}, 1, 4, {1, 4, 7, 8}, {1, 4, 4, 3}},
    {"avg", 0, {3, 3}, {0, 0}, "valid", 0, {1, 1}, 1, 4, {-1, 10, 11, 1}, {-1, 3, 3, 1}},
    {"avg", 0, {2, 2}, {1, 1}, "same", 1, {1, 1}, 1, 4, {-1, 2, 5, 5}, {-1, 2, 5, 5}},
};

static tfc_layer *shape_case_layer(const shape_case *c) {
    const char *df = c->cf ? "channels_first" : "channels_last";
    if (!strcmp(c->kind, "conv"))
        return tfc_layers_conv2d(.filters = c->n, .kernel_size = {c->k[0], c->k[1]}, .strides = {c->s[0], c->s[1]},
                                 .padding = c->padding, .data_format = df, .dilation_rate = {c->d[0], c->d[1]},
                                 .groups = c->groups);
    if (!strcmp(c->kind, "dw"))
        return tfc_layers_depthwise_conv2d(.kernel_size = {c->k[0], c->k[1]}, .strides = {c->s[0], c->s[1]},
                                           .padding = c->padding, .depth_multiplier = c->n, .data_format = df,
                                           .dilation_rate = {c->d[0], c->d[1]});
    if (!strcmp(c->kind, "max"))
        return tfc_layers_max_pooling2d(.pool_size = {c->k[0], c->k[1]}, .strides = {c->s[0], c->s[1]},
                                        .padding = c->padding, .data_format = df);
    return tfc_layers_average_pooling2d(.pool_size = {c->k[0], c->k[1]}, .strides = {c->s[0], c->s[1]},
                                        .padding = c->padding, .data_format = df);
}

static void test_output_shapes(void) {
    tfc_status st = TFC_STATUS_INIT;
    for (size_t i = 0; i < sizeof shape_cases / sizeof *shape_cases; i++) {
        const shape_case *c = &shape_cases[i];
        /* symbolic: compute_output_shape through a Keras tensor */
        tfc_ktensor *in = tfc_input(.shape = {c->in[1], c->in[2], c->in[3], c->in[4]}, .rank = c->rank - 1,
                                    .batch_size = c->in[0] < 0 ? 0 : c->in[0]);
        REQUIRE(in);
        tfc_layer *l = shape_case_layer(c);
        tfc_ktensor *o = tfc_layer_apply(l, &in, 1, &st);
        CHECK_OK(&st);
        CHECK(o && shape_is(tfc_ktensor_shape(o), c->rank, c->out));
        if (o && !shape_is(tfc_ktensor_shape(o), c->rank, c->out))
            fprintf(stderr, "  case %zu: symbolic output %s\n", i, TFC_KSHP(tfc_ktensor_shape(o)));
        tfc_layer_unref(l);
        tfc_layer_unref(tfc_ktensor_layer(in));
        /* eager: a real call gives the same shape (unknown batch -> 1) */
        bool known = true;
        int64_t dims[5], want[5];
        for (int d = 0; d < c->rank; d++) {
            dims[d] = d == 0 && c->in[d] < 0 ? 1 : c->in[d];
            want[d] = d == 0 && c->out[d] < 0 ? 1 : c->out[d];
            if (dims[d] < 0) known = false;
        }
        if (!known) continue;
        REQUIRE(tfc_scope_begin(ctx, &st));
        tfc_tensor *x = tfc_zeros(ctx, TFC_FLOAT, dims, c->rank, &st);
        REQUIRE(x);
        l = shape_case_layer(c);
        tfc_tensor *y = tfc_layer_call1(l, ctx, x, false, &st);
        CHECK_OK(&st);
        CHECK(y && shape_is(tfc_tensor_shape(y), c->rank, want));
        if (y && !shape_is(tfc_tensor_shape(y), c->rank, want))
            fprintf(stderr, "  case %zu: eager output %s\n", i, TFC_KSHP(tfc_tensor_shape(y)));
        tfc_layer_unref(l);
        tfc_scope_end(ctx);
    }
    /* the shape-only layers */
    struct {
        tfc_layer *l;
        int64_t in[4], out[4];
        int out_rank;
    } more[] = {
        {tfc_layers_global_average_pooling2d(), {-1, 5, 6, 3}, {-1, 3}, 2},
        {tfc_layers_global_average_pooling2d(.keepdims = true), {-1, 5, 6, 3}, {-1, 1, 1, 3}, 4},
        {tfc_layers_global_max_pooling2d(.data_format = "channels_first"), {2, 3, 5, 6}, {2, 3}, 2},
        {tfc_layers_global_max_pooling2d(.data_format = "channels_first", .keepdims = true), {2, 3, 5, 6},
         {2, 3, 1, 1}, 4},
        {tfc_layers_zero_padding2d(), {-1, 5, 6, 3}, {-1, 7, 8, 3}, 4},
        {tfc_layers_zero_padding2d(.padding = {{1, 2}, {3, 4}}, .data_format = "channels_first"), {-1, 3, 5, -1},
         {-1, 3, 8, -1}, 4},
        {tfc_layers_zero_padding2d(.has_padding = true), {-1, 5, 6, 3}, {-1, 5, 6, 3}, 4},
        {tfc_layers_batch_normalization(), {-1, 5, 6, 3}, {-1, 5, 6, 3}, 4},
        {tfc_layers_layer_normalization(), {-1, 5, 6, 3}, {-1, 5, 6, 3}, 4},
    };
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) {
        tfc_ktensor *in = tfc_input(.shape = {more[i].in[1], more[i].in[2], more[i].in[3]},
                                    .batch_size = more[i].in[0] < 0 ? 0 : more[i].in[0]);
        tfc_ktensor *o = tfc_layer_apply(more[i].l, &in, 1, &st);
        CHECK_OK(&st);
        CHECK(o && shape_is(tfc_ktensor_shape(o), more[i].out_rank, more[i].out));
        if (o && !shape_is(tfc_ktensor_shape(o), more[i].out_rank, more[i].out))
            fprintf(stderr, "  %s: symbolic output %s\n", tfc_layer_name(more[i].l), TFC_KSHP(tfc_ktensor_shape(o)));
        tfc_layer_unref(more[i].l);
        tfc_layer_unref(tfc_ktensor_layer(in));
    }
}

/* ---- weights: shapes, names and Keras order ---- */
static void check_weight(tfc_variable *v, const char *name, const tfc_shape *want) {
    CHECK(v && !strcmp(tfc_variable_name(v), name));
    CHECK(v && tfc_shape_equal(tfc_variable_shape(v), want));
    if (v && (strcmp(tfc_variable_name(v), name) || !tfc_shape_equal(tfc_variable_shape(v), want)))
        fprintf(stderr, "  weight %s %s, expected %s %s\n", tfc_variable_name(v), TFC_KSHP(tfc_variable_shape(v)), name,
                TFC_KSHP(want));
}
#define WSHAPE(...) (&(tfc_shape){.rank = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t), .dims = {__VA_ARGS__}})

static void build(tfc_layer *l, const tfc_shape *s) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(tfc_layer_build(l, ctx, s, 1, &st));
    CHECK_OK(&st);
}

static void test_weights(void) {
    tfc_variable *w[8];
    tfc_layer *c = tfc_layers_conv2d(.filters = 6, .kernel_size = {3, 2}, .groups = 2, .name = "c");
    build(c, WSHAPE(-1, 5, 5, 4));
    REQUIRE(tfc_layer_weights(c, w, 8) == 2);
    check_weight(w[0], "c/kernel:0", WSHAPE(3, 2, 2, 6));
    check_weight(w[1], "c/bias:0", WSHAPE(6));
    CHECK(tfc_layer_count_params(c) == 3 * 2 * 2 * 6 + 6);
    tfc_layer_unref(c);
    c = tfc_layers_conv2d(.filters = 5, .kernel_size = {1}, .use_bias = TFC_NO, .data_format = "channels_first",
                          .name = "cf");
    build(c, WSHAPE(-1, 3, 8, 8));
    REQUIRE(tfc_layer_weights(c, w, 8) == 1);
    check_weight(w[0], "cf/kernel:0", WSHAPE(1, 1, 3, 5));
    tfc_layer_unref(c);
    /* glorot_uniform kernel: |k| <= sqrt(6 / (fan_in + fan_out)) with receptive field 3 * 3 */
    c = tfc_layers_conv2d(.filters = 4, .kernel_size = {3});
    build(c, WSHAPE(-1, 5, 5, 2));
    REQUIRE(tfc_layer_weights(c, w, 8) == 2);
    const tfc_tensor *kv = tfc_variable_value(w[0]);
    double lim = sqrt(6.0 / (9 * 2 + 9 * 4)), mx = 0;
    for (int64_t i = 0; i < tfc_tensor_num_elements(kv); i++) mx = fmax(mx, fabs(at(kv, i)));
    CHECK(mx <= lim && mx > lim / 4);
    for (int i = 0; i < 4; i++) CHECK(at(tfc_variable_value(w[1]), i) == 0);
    tfc_layer_unref(c);

    tfc_layer *d = tfc_layers_depthwise_conv2d(.kernel_size = {3, 2}, .depth_multiplier = 2, .name = "dw");
    build(d, WSHAPE(-1, 6, 6, 3));
    REQUIRE(tfc_layer_weights(d, w, 8) == 2);
    check_weight(w[0], "dw/depthwise_kernel:0", WSHAPE(3, 2, 3, 2));
    check_weight(w[1], "dw/bias:0", WSHAPE(6));
    tfc_layer_unref(d);

    tfc_layer *bn = tfc_layers_batch_normalization(.name = "bn");
    build(bn, WSHAPE(-1, 4, 4, 3));
    REQUIRE(tfc_layer_weights(bn, w, 8) == 4);
    check_weight(w[0], "bn/gamma:0", WSHAPE(3));
    check_weight(w[1], "bn/beta:0", WSHAPE(3));
    check_weight(w[2], "bn/moving_mean:0", WSHAPE(3));
    check_weight(w[3], "bn/moving_variance:0", WSHAPE(3));
    CHECK(tfc_layer_trainable_weights(bn, w, 8) == 2 && tfc_layer_non_trainable_weights(bn, w + 2, 6) == 2);
    CHECK(!strcmp(tfc_variable_name(w[0]), "bn/gamma:0") && !strcmp(tfc_variable_name(w[2]), "bn/moving_mean:0"));
    for (int i = 0; i < 3; i++) {
        CHECK(at(tfc_variable_value(w[0]), i) == 1 && at(tfc_variable_value(w[1]), i) == 0);
        CHECK(at(tfc_variable_value(w[2]), i) == 0 && at(tfc_variable_value(w[3]), i) == 1);
    }
    /* frozen: everything non-trainable, same order */
    tfc_layer_set_trainable(bn, false);
    CHECK(tfc_layer_trainable_weights(bn, w, 8) == 0 && tfc_layer_non_trainable_weights(bn, w, 8) == 4);
    CHECK(!strcmp(tfc_variable_name(w[0]), "bn/gamma:0") && !strcmp(tfc_variable_name(w[3]), "bn/moving_variance:0"));
    tfc_layer_unref(bn);
    bn = tfc_layers_batch_normalization(.center = TFC_NO, .axis = 1, .has_axis = true, .name = "bn_c");
    build(bn, WSHAPE(-1, 5, 2));
    REQUIRE(tfc_layer_weights(bn, w, 8) == 3);
    check_weight(w[0], "bn_c/gamma:0", WSHAPE(5));
    check_weight(w[1], "bn_c/moving_mean:0", WSHAPE(5));
    tfc_layer_unref(bn);
    bn = tfc_layers_batch_normalization(.axes = {1, 2}, .n_axes = 2, .scale = TFC_NO, .name = "bn_m");
    build(bn, WSHAPE(-1, 2, 3, 4));
    REQUIRE(tfc_layer_weights(bn, w, 8) == 3);
    check_weight(w[0], "bn_m/beta:0", WSHAPE(1, 2, 3, 1));
    check_weight(w[2], "bn_m/moving_variance:0", WSHAPE(1, 2, 3, 1));
    tfc_layer_unref(bn);

    tfc_layer *ln = tfc_layers_layer_normalization(.axis = {1, 2}, .n_axis = 2, .name = "ln");
    build(ln, WSHAPE(-1, 3, 4));
    REQUIRE(tfc_layer_weights(ln, w, 8) == 2);
    check_weight(w[0], "ln/gamma:0", WSHAPE(3, 4));
    check_weight(w[1], "ln/beta:0", WSHAPE(3, 4));
    tfc_layer_unref(ln);
    ln = tfc_layers_layer_normalization(.axis = {2, 1}, .n_axis = 2, .scale = TFC_NO, .name = "ln_r");
    build(ln, WSHAPE(-1, 3, 4));
    REQUIRE(tfc_layer_weights(ln, w, 8) == 1);
    check_weight(w[0], "ln_r/beta:0", WSHAPE(4, 3)); /* in axis order, as Keras */
    tfc_layer_unref(ln);

    tfc_layer *none[] = {tfc_layers_max_pooling2d(), tfc_layers_average_pooling2d(), tfc_layers_global_max_pooling2d(),
                         tfc_layers_global_average_pooling2d(), tfc_layers_zero_padding2d()};
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        build(none[i], WSHAPE(-1, 4, 4, 3));
        CHECK(tfc_layer_weights(none[i], w, 8) == 0);
        tfc_layer_unref(none[i]);
    }
}

/* ---- get_config / from_config against tf_keras's configs ---- */
static const struct {
    const char *name, *json;
} keras_configs[] = {
    {"c1",
     "{\"name\":\"c1\",\"trainable\":true,\"dtype\":\"float32\",\"filters\":32,\"kernel_size\":[3,3],\"str"
     "ides\":[1,1],\"padding\":\"valid\",\"data_format\":\"channels_last\",\"dilation_rate\":[1,1],\"group"
     "s\":1,\"activation\":\"linear\",\"use_bias\":true,\"kernel_initializer\":{\"class_name\":\"GlorotUni"
     "form\",\"config\":{\"seed\":null}},\"bias_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"k"
     "ernel_regularizer\":null,\"bias_regularizer\":null,\"activity_regularizer\":null,\"kernel_constraint"
     "\":null,\"bias_constraint\":null}"},
    {"c2",
     "{\"name\":\"c2\",\"trainable\":true,\"dtype\":\"float32\",\"filters\":8,\"kernel_size\":[3,5],\"stri"
     "des\":[2,2],\"padding\":\"same\",\"data_format\":\"channels_first\",\"dilation_rate\":[1,1],\"groups"
     "\":2,\"activation\":\"relu\",\"use_bias\":false,\"kernel_initializer\":{\"class_name\":\"HeNormal\","
     "\"config\":{\"seed\":null}},\"bias_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"kernel_r"
     "egularizer\":{\"class_name\":\"L2\",\"config\":{\"l2\":0.0010000000474974513}},\"bias_regularizer\":"
     "null,\"activity_regularizer\":{\"class_name\":\"L1\",\"config\":{\"l1\":0.009999999776482582}},\"ker"
     "nel_constraint\":null,\"bias_constraint\":null}"},
    {"c3",
     "{\"name\":\"c3\",\"trainable\":true,\"dtype\":\"float32\",\"filters\":4,\"kernel_size\":[2,2],\"stri"
     "des\":[1,1],\"padding\":\"valid\",\"data_format\":\"channels_last\",\"dilation_rate\":[2,3],\"groups"
     "\":1,\"activation\":\"linear\",\"use_bias\":true,\"kernel_initializer\":{\"class_name\":\"GlorotUnif"
     "orm\",\"config\":{\"seed\":null}},\"bias_initializer\":{\"class_name\":\"Constant\",\"config\":{\"va"
     "lue\":0.5}},\"kernel_regularizer\":null,\"bias_regularizer\":{\"class_name\":\"L1L2\",\"config\":{\""
     "l1\":0.10000000149011612,\"l2\":0.20000000298023224}},\"activity_regularizer\":null,\"kernel_constra"
     "int\":null,\"bias_constraint\":null}"},
    {"d1",
     "{\"name\":\"d1\",\"trainable\":true,\"dtype\":\"float32\",\"kernel_size\":[3,3],\"strides\":[1,1],\""
     "padding\":\"valid\",\"data_format\":\"channels_last\",\"dilation_rate\":[1,1],\"groups\":1,\"activat"
     "ion\":\"linear\",\"use_bias\":true,\"bias_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"b"
     "ias_regularizer\":null,\"activity_regularizer\":null,\"bias_constraint\":null,\"depth_multiplier\":1"
     ",\"depthwise_initializer\":{\"class_name\":\"GlorotUniform\",\"config\":{\"seed\":null}},\"depthwise"
     "_regularizer\":null,\"depthwise_constraint\":null}"},
    {"d2",
     "{\"name\":\"d2\",\"trainable\":true,\"dtype\":\"float32\",\"kernel_size\":[3,1],\"strides\":[2,1],\""
     "padding\":\"same\",\"data_format\":\"channels_first\",\"dilation_rate\":[1,1],\"groups\":1,\"activat"
     "ion\":\"tanh\",\"use_bias\":false,\"bias_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"bi"
     "as_regularizer\":null,\"activity_regularizer\":null,\"bias_constraint\":null,\"depth_multiplier\":2,"
     "\"depthwise_initializer\":{\"class_name\":\"RandomNormal\",\"config\":{\"mean\":0.0,\"stddev\":0.1,\""
     "seed\":3}},\"depthwise_regularizer\":{\"class_name\":\"L2\",\"config\":{\"l2\":0.5}},\"depthwise_con"
     "straint\":null}"},
    {"mp1",
     "{\"name\":\"mp1\",\"trainable\":true,\"dtype\":\"float32\",\"pool_size\":[2,2],\"padding\":\"valid\""
     ",\"strides\":[2,2],\"data_format\":\"channels_last\"}"},
    {"mp2",
     "{\"name\":\"mp2\",\"trainable\":true,\"dtype\":\"float32\",\"pool_size\":[3,2],\"padding\":\"same\","
     "\"strides\":[1,2],\"data_format\":\"channels_first\"}"},
    {"ap1",
     "{\"name\":\"ap1\",\"trainable\":true,\"dtype\":\"float32\",\"pool_size\":[3,3],\"padding\":\"valid\""
     ",\"strides\":[3,3],\"data_format\":\"channels_last\"}"},
    {"ap2",
     "{\"name\":\"ap2\",\"trainable\":true,\"dtype\":\"float32\",\"pool_size\":[2,2],\"padding\":\"same\","
     "\"strides\":[1,1],\"data_format\":\"channels_last\"}"},
    {"gap1",
     "{\"name\":\"gap1\",\"trainable\":true,\"dtype\":\"float32\",\"data_format\":\"channels_last\",\"keep"
     "dims\":false}"},
    {"gmp1",
     "{\"name\":\"gmp1\",\"trainable\":true,\"dtype\":\"float32\",\"data_format\":\"channels_first\",\"kee"
     "pdims\":true}"},
    {"zp1",
     "{\"name\":\"zp1\",\"trainable\":true,\"dtype\":\"float32\",\"padding\":[[1,1],[1,1]],\"data_format\""
     ":\"channels_last\"}"},
    {"zp2",
     "{\"name\":\"zp2\",\"trainable\":true,\"dtype\":\"float32\",\"padding\":[[1,2],[3,4]],\"data_format\""
     ":\"channels_first\"}"},
    {"zp3",
     "{\"name\":\"zp3\",\"trainable\":true,\"dtype\":\"float32\",\"padding\":[[2,2],[0,0]],\"data_format\""
     ":\"channels_last\"}"},
    {"bn1",
     "{\"name\":\"bn1\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":-1,\"momentum\":0.99,\"epsilon\""
     ":0.001,\"center\":true,\"scale\":true,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},"
     "\"gamma_initializer\":{\"class_name\":\"Ones\",\"config\":{}},\"moving_mean_initializer\":{\"class_n"
     "ame\":\"Zeros\",\"config\":{}},\"moving_variance_initializer\":{\"class_name\":\"Ones\",\"config\":{"
     "}},\"beta_regularizer\":null,\"gamma_regularizer\":null,\"beta_constraint\":null,\"gamma_constraint\""
     ":null}"},
    {"bn2",
     "{\"name\":\"bn2\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":1,\"momentum\":0.9,\"epsilon\":1"
     "e-05,\"center\":false,\"scale\":true,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\""
     "gamma_initializer\":{\"class_name\":\"RandomUniform\",\"config\":{\"minval\":-0.05,\"maxval\":0.05,\""
     "seed\":null}},\"moving_mean_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"moving_variance"
     "_initializer\":{\"class_name\":\"Constant\",\"config\":{\"value\":2.0}},\"beta_regularizer\":null,\""
     "gamma_regularizer\":{\"class_name\":\"L2\",\"config\":{\"l2\":0.009999999776482582}},\"beta_constrai"
     "nt\":null,\"gamma_constraint\":null}"},
    {"bn3",
     "{\"name\":\"bn3\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":[1,2],\"momentum\":0.99,\"epsilo"
     "n\":0.001,\"center\":true,\"scale\":false,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\":"
     "{}},\"gamma_initializer\":{\"class_name\":\"Ones\",\"config\":{}},\"moving_mean_initializer\":{\"cla"
     "ss_name\":\"Zeros\",\"config\":{}},\"moving_variance_initializer\":{\"class_name\":\"Ones\",\"config"
     "\":{}},\"beta_regularizer\":null,\"gamma_regularizer\":null,\"beta_constraint\":null,\"gamma_constra"
     "int\":null}"},
    {"ln1",
     "{\"name\":\"ln1\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":-1,\"epsilon\":0.001,\"center\":"
     "true,\"scale\":true,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"gamma_initialize"
     "r\":{\"class_name\":\"Ones\",\"config\":{}},\"beta_regularizer\":null,\"gamma_regularizer\":null,\"b"
     "eta_constraint\":null,\"gamma_constraint\":null}"},
    {"ln2",
     "{\"name\":\"ln2\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":[1,2],\"epsilon\":1e-06,\"center"
     "\":false,\"scale\":true,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"gamma_initia"
     "lizer\":{\"class_name\":\"Ones\",\"config\":{}},\"beta_regularizer\":{\"class_name\":\"L1\",\"config"
     "\":{\"l1\":0.5}},\"gamma_regularizer\":null,\"beta_constraint\":null,\"gamma_constraint\":null}"},
    {"bn_built",
     "{\"name\":\"bn_built\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":[3],\"momentum\":0.99,\"eps"
     "ilon\":0.001,\"center\":true,\"scale\":true,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\""
     ":{}},\"gamma_initializer\":{\"class_name\":\"Ones\",\"config\":{}},\"moving_mean_initializer\":{\"cl"
     "ass_name\":\"Zeros\",\"config\":{}},\"moving_variance_initializer\":{\"class_name\":\"Ones\",\"confi"
     "g\":{}},\"beta_regularizer\":null,\"gamma_regularizer\":null,\"beta_constraint\":null,\"gamma_constr"
     "aint\":null}"},
    {"ln_built",
     "{\"name\":\"ln_built\",\"trainable\":true,\"dtype\":\"float32\",\"axis\":[1],\"epsilon\":0.001,\"cen"
     "ter\":true,\"scale\":true,\"beta_initializer\":{\"class_name\":\"Zeros\",\"config\":{}},\"gamma_init"
     "ializer\":{\"class_name\":\"Ones\",\"config\":{}},\"beta_regularizer\":null,\"gamma_regularizer\":nu"
     "ll,\"beta_constraint\":null,\"gamma_constraint\":null}"},
};

static const char *keras_config(const char *name) {
    for (size_t i = 0; i < sizeof keras_configs / sizeof *keras_configs; i++)
        if (!strcmp(keras_configs[i].name, name)) return keras_configs[i].json;
    REQUIRE(!"no such config");
    return NULL;
}

/* Same keys in the same order with equal values. */
static bool same_config(const char *got, const char *want) {
    cJSON *g = cJSON_Parse(got), *w = cJSON_Parse(want);
    REQUIRE(g && w);
    bool same = true;
    const cJSON *a = g->child, *b = w->child;
    for (; a && b; a = a->next, b = b->next) same &= !strcmp(a->string, b->string) && cJSON_Compare(a, b, true);
    same &= !a && !b;
    cJSON_Delete(g);
    cJSON_Delete(w);
    return same;
}

static void check_config(tfc_layer *l, const char *name) {
    tfc_status st = TFC_STATUS_INIT;
    char *got = tfc_layer_get_config(l, &st);
    CHECK_OK(&st);
    REQUIRE(got);
    bool same = same_config(got, keras_config(name));
    CHECK(same);
    if (!same) fprintf(stderr, "  %s config:\n  got  %s\n  want %s\n", name, got, keras_config(name));
    tfc_free(got);
}

static void test_configs(void) {
    tfc_status st = TFC_STATUS_INIT;
    struct {
        const char *name;
        tfc_layer *l;
    } cases[] = {
        {"c1", tfc_layers_conv2d(.filters = 32, .kernel_size = {3}, .name = "c1")},
        {"c2", tfc_layers_conv2d(.filters = 8, .kernel_size = {3, 5}, .strides = {2}, .padding = "same",
                                 .data_format = "channels_first", .groups = 2, .activation = "relu",
                                 .use_bias = TFC_NO, .kernel_initializer = tfc_initializer_of(.name = "he_normal"),
                                 .kernel_regularizer = tfc_l2(0.001), .activity_regularizer = tfc_l1(0.01),
                                 .name = "c2")},
        {"c3", tfc_layers_conv2d(.filters = 4, .kernel_size = {2, 2}, .dilation_rate = {2, 3},
                                 .bias_initializer = tfc_initializer_of(.name = "constant", .value = 0.5),
                                 .bias_regularizer = tfc_l1_l2(0.1, 0.2), .name = "c3")},
        {"d1", tfc_layers_depthwise_conv2d(.kernel_size = {3}, .name = "d1")},
        {"d2", tfc_layers_depthwise_conv2d(
                   .kernel_size = {3, 1}, .strides = {2, 1}, .padding = "SAME", .depth_multiplier = 2,
                   .data_format = "channels_first", .activation = "tanh", .use_bias = TFC_NO,
                   .depthwise_initializer = tfc_initializer_of(.name = "random_normal", .stddev = 0.1, .seed = 3,
                                                               .has_seed = true),
                   .depthwise_regularizer = tfc_l2(0.5), .name = "d2")},
        {"mp1", tfc_layers_max_pooling2d(.name = "mp1")},
        {"mp2", tfc_layers_max_pooling2d(.pool_size = {3, 2}, .strides = {1, 2}, .padding = "same",
                                         .data_format = "channels_first", .name = "mp2")},
        {"ap1", tfc_layers_average_pooling2d(.pool_size = {3}, .name = "ap1")},
        {"ap2", tfc_layers_average_pooling2d(.pool_size = {2, 2}, .strides = {1}, .padding = "same", .name = "ap2")},
        {"gap1", tfc_layers_global_average_pooling2d(.name = "gap1")},
        {"gmp1", tfc_layers_global_max_pooling2d(.data_format = "channels_first", .keepdims = true, .name = "gmp1")},
        {"zp1", tfc_layers_zero_padding2d(.name = "zp1")},
        {"zp2", tfc_layers_zero_padding2d(.padding = {{1, 2}, {3, 4}}, .data_format = "channels_first", .name = "zp2")},
        {"zp3", tfc_layers_zero_padding2d(.padding = {{2, 2}, {0, 0}}, .name = "zp3")},
        {"bn1", tfc_layers_batch_normalization(.name = "bn1")},
        {"bn2", tfc_layers_batch_normalization(
                    .axis = 1, .momentum = 0.9, .epsilon = 1e-5, .center = TFC_NO,
                    .gamma_initializer = tfc_initializer_of(.name = "random_uniform"),
                    .moving_variance_initializer = tfc_initializer_of(.name = "constant", .value = 2.0),
                    .gamma_regularizer = tfc_l2(0.01), .name = "bn2")},
        {"bn3", tfc_layers_batch_normalization(.axes = {1, 2}, .n_axes = 2, .scale = TFC_NO, .name = "bn3")},
        {"ln1", tfc_layers_layer_normalization(.name = "ln1")},
        {"ln2", tfc_layers_layer_normalization(.axis = {1, 2}, .n_axis = 2, .epsilon = 1e-6, .center = TFC_NO,
                                               .beta_regularizer = tfc_l1(0.5), .name = "ln2")},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        REQUIRE(cases[i].l);
        check_config(cases[i].l, cases[i].name);
        /* tf_keras's config through from_config gives the same layer config back */
        const char *cls = tfc_layer_class_name(cases[i].l);
        tfc_layer *l2 = tfc_layer_from_config(cls, keras_config(cases[i].name), &st);
        CHECK_OK(&st);
        REQUIRE(l2);
        CHECK(!strcmp(tfc_layer_class_name(l2), cls));
        check_config(l2, cases[i].name);
        tfc_layer_unref(l2);
        tfc_layer_unref(cases[i].l);
    }
    /* after build Keras stores the normalised axis list */
    tfc_layer *bn = tfc_layers_batch_normalization(.name = "bn_built");
    build(bn, WSHAPE(-1, 4, 4, 3));
    check_config(bn, "bn_built");
    tfc_layer_unref(bn);
    tfc_layer *ln = tfc_layers_layer_normalization(.axis = {-2}, .n_axis = 1, .name = "ln_built");
    build(ln, WSHAPE(-1, 4, 3));
    check_config(ln, "ln_built");
    tfc_layer_unref(ln);
    bn = tfc_layer_from_config("BatchNormalization", keras_config("bn_built"), &st);
    REQUIRE(bn);
    check_config(bn, "bn_built");
    build(bn, WSHAPE(-1, 2, 2, 3));
    check_config(bn, "bn_built");
    tfc_layer_unref(bn);

    /* Keras's other spellings: ints for pairs, aliases, ZeroPadding2D's three forms, upper-case padding */
    struct {
        const char *cls, *json, *key, *want;
    } forms[] = {
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": 3, \"strides\": 2, \"padding\": \"SAME\"}", "strides", "[2,2]"},
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": 3, \"padding\": \"SAME\"}", "padding", "\"same\""},
        {"Convolution2D", "{\"filters\": 2, \"kernel_size\": [1, 3]}", "kernel_size", "[1,3]"},
        {"MaxPool2D", "{}", "pool_size", "[2,2]"},
        {"AvgPool2D", "{\"pool_size\": 3}", "strides", "[3,3]"},
        {"GlobalAvgPool2D", "{\"keepdims\": true}", "keepdims", "true"},
        {"GlobalMaxPool2D", "{}", "data_format", "\"channels_last\""},
        {"ZeroPadding2D", "{\"padding\": 2}", "padding", "[[2,2],[2,2]]"},
        {"ZeroPadding2D", "{\"padding\": [1, 3]}", "padding", "[[1,1],[3,3]]"},
        {"ZeroPadding2D", "{\"padding\": [1, [2, 3]]}", "padding", "[[1,1],[2,3]]"},
        {"ZeroPadding2D", "{\"padding\": [[0, 0], [0, 0]]}", "padding", "[[0,0],[0,0]]"},
        {"BatchNormalization", "{\"momentum\": 0.0, \"epsilon\": 0.1}", "momentum", "0"},
        {"BatchNormalization", "{\"axis\": [3]}", "axis", "[3]"},
        {"LayerNormalization", "{\"axis\": [2]}", "axis", "[2]"},
        {"LayerNormalization", "{\"axis\": 2}", "axis", "2"},
    };
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        tfc_layer *l = tfc_layer_from_config(forms[i].cls, forms[i].json, &st);
        CHECK_OK(&st);
        REQUIRE(l);
        char *s = tfc_layer_get_config(l, &st);
        cJSON *c = cJSON_Parse(s), *want = cJSON_Parse(forms[i].want);
        REQUIRE(c && want);
        bool ok = cJSON_Compare(cJSON_GetObjectItemCaseSensitive(c, forms[i].key), want, true);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s %s: %s\n", forms[i].cls, forms[i].json, s);
        cJSON_Delete(c);
        cJSON_Delete(want);
        tfc_free(s);
        tfc_layer_unref(l);
    }
    /* bad configs: INVALID_ARGUMENT naming the value or key */
    struct {
        const char *cls, *json, *needle;
        tfc_code code;
    } bad[] = {
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": 3, \"padding\": \"full\"}", "full", TFC_INVALID_ARGUMENT},
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": 3, \"padding\": \"causal\"}", "causal", TFC_INVALID_ARGUMENT},
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": 3, \"data_format\": \"NHWC\"}", "NHWC", TFC_INVALID_ARGUMENT},
        {"Conv2D", "{\"kernel_size\": 3}", "filters", TFC_INVALID_ARGUMENT},
        {"Conv2D", "{\"filters\": 2}", "kernel_size", TFC_INVALID_ARGUMENT},
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": [3, 3, 3]}", "kernel_size", TFC_INVALID_ARGUMENT},
        {"Conv2D", "{\"filters\": 2, \"kernel_size\": 3, \"strides\": [0, 1]}", "strides", TFC_INVALID_ARGUMENT},
        {"DepthwiseConv2D", "{\"kernel_size\": 3, \"depth_multiplier\": 0}", "depth_multiplier", TFC_INVALID_ARGUMENT},
        {"MaxPooling2D", "{\"padding\": \"full\"}", "full", TFC_INVALID_ARGUMENT},
        {"AveragePooling2D", "{\"data_format\": \"channels_middle\"}", "channels_middle", TFC_INVALID_ARGUMENT},
        {"GlobalAveragePooling2D", "{\"data_format\": \"nchw\"}", "nchw", TFC_INVALID_ARGUMENT},
        {"ZeroPadding2D", "{\"padding\": [1, 2, 3]}", "padding", TFC_INVALID_ARGUMENT},
        {"ZeroPadding2D", "{\"padding\": [[1, -2], [0, 0]]}", "-2", TFC_INVALID_ARGUMENT},
        {"BatchNormalization", "{\"axis\": \"last\"}", "axis", TFC_INVALID_ARGUMENT},
        {"BatchNormalization", "{\"renorm\": true}", "renorm", TFC_UNIMPLEMENTED},
        {"LayerNormalization", "{\"axis\": []}", "axis", TFC_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tfc_layer *l = tfc_layer_from_config(bad[i].cls, bad[i].json, &st);
        CHECK(!l);
        tfc_layer_unref(l);
        CHECK_CODE(&st, bad[i].code);
        CHECK(strstr(st.msg, bad[i].needle) != NULL);
        if (!strstr(st.msg, bad[i].needle)) fprintf(stderr, "  %s %s: %s\n", bad[i].cls, bad[i].json, st.msg);
    }
}

/* ---- convolutions: hand-computed cases, then tf_keras's values ---- */
static void test_conv_values(void) {
    REQUIRE(tfc_scope_begin(ctx, &(tfc_status){0}));
    tfc_tensor *x = G(T32(DIMS(1, 3, 3, 1), 1, 2, 3, 4, 5, 6, 7, 8, 9));
    /* 2x2 ones kernel + 0.5: valid sums the windows; same pads one row/column at the bottom/right */
    struct {
        const char *padding;
        int64_t stride;
        double want[9];
        int n;
    } cases[] = {{"valid", 1, {12.5, 16.5, 24.5, 28.5}, 4},
                 {"same", 1, {12.5, 16.5, 9.5, 24.5, 28.5, 15.5, 15.5, 17.5, 9.5}, 9},
                 {"same", 2, {12.5, 9.5, 15.5, 9.5}, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tfc_layer *c = tfc_layers_conv2d(.filters = 1, .kernel_size = {2}, .padding = cases[i].padding,
                                         .strides = {cases[i].stride});
        build(c, WSHAPE(-1, 3, 3, 1));
        set_weights(c, 2, (tfc_tensor *[]){T32(DIMS(2, 2, 1, 1), 1, 1, 1, 1), T32(DIMS(1), 0.5f)});
        tfc_tensor *y = call(c, x, false);
        check_values(cases[i].padding, y, cases[i].want, cases[i].n, 1e-6);
        tfc_layer_unref(c);
    }
    /* extra leading batch dims fold into the batch: [2, 1, 3, 3, 1] */
    tfc_layer *c = tfc_layers_conv2d(.filters = 1, .kernel_size = {2});
    tfc_tensor *x5 = G(T32(DIMS(2, 1, 3, 3, 1), 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1));
    build(c, tfc_tensor_shape(x5));
    set_weights(c, 2, (tfc_tensor *[]){T32(DIMS(2, 2, 1, 1), 1, 1, 1, 1), T32(DIMS(1), 0)});
    tfc_tensor *y = call(c, x5, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 2, 1, 2, 2, 1));
    check_values("rank5", y, (const double[]){12, 16, 24, 28, 28, 24, 16, 12}, 8, 1e-6);
    tfc_layer_unref(c);

    /* V1: same padding, strides (2, 1), relu */
    c = tfc_layers_conv2d(.filters = 3, .kernel_size = {2, 3}, .strides = {2, 1}, .padding = "same",
                          .activation = "relu");
    tfc_tensor *xv = G(SEQ(DIMS(2, 5, 4, 2), 7, 11, 0.25f, 0));
    build(c, tfc_tensor_shape(xv));
    set_weights(c, 2, (tfc_tensor *[]){SEQ(DIMS(2, 3, 2, 3), 5, 13, 0.1f, 0), T32(DIMS(3), 0.1f, -0.2f, 0.3f)});
    y = call(c, xv, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 2, 3, 4, 3));
    CHECK_VALUES(y, EXP_V1, 1e-5);
    tfc_layer_unref(c);
    /* V2: channels_first, dilation (2, 1), groups 2 */
    c = tfc_layers_conv2d(.filters = 4, .kernel_size = {2}, .dilation_rate = {2, 1}, .groups = 2,
                          .data_format = "channels_first");
    xv = G(SEQ(DIMS(1, 4, 5, 4), 3, 17, 0.2f, 0));
    build(c, tfc_tensor_shape(xv));
    set_weights(c, 2, (tfc_tensor *[]){SEQ(DIMS(2, 2, 2, 4), 7, 9, 0.3f, 0), T32(DIMS(4), 0.5f, 0, -0.5f, 1)});
    y = call(c, xv, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 4, 3, 3));
    CHECK_VALUES(y, EXP_V2, 1e-5);
    tfc_layer_unref(c);

    /* depthwise by hand: multiplier 0 = ones, 1 = twos -> channel c * 2 + m */
    tfc_layer *d = tfc_layers_depthwise_conv2d(.kernel_size = {2}, .depth_multiplier = 2);
    tfc_tensor *xd = G(T32(DIMS(1, 2, 2, 2), 1, 10, 2, 20, 3, 30, 4, 40));
    build(d, tfc_tensor_shape(xd));
    float k[16];
    for (int i = 0; i < 16; i++) k[i] = i % 2 ? 2 : 1;
    set_weights(d, 2, (tfc_tensor *[]){tensor_f32(k, (const int64_t[]){2, 2, 2, 2}, 4), T32(DIMS(4), 0, 0, 0, 1)});
    y = call(d, xd, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 1, 1, 4));
    check_values("depthwise", y, (const double[]){10, 20, 100, 201}, 4, 1e-6);
    tfc_layer_unref(d);
    /* V3: multiplier 2; V3b: channels_first, same, strides 2, no bias */
    d = tfc_layers_depthwise_conv2d(.kernel_size = {3}, .depth_multiplier = 2);
    xv = G(SEQ(DIMS(1, 4, 4, 2), 5, 7, 0.5f, 0));
    build(d, tfc_tensor_shape(xv));
    set_weights(d, 2, (tfc_tensor *[]){SEQ(DIMS(3, 3, 2, 2), 3, 11, 0.1f, 0), T32(DIMS(4), 0.1f, 0.2f, 0.3f, 0.4f)});
    CHECK_VALUES(call(d, xv, false), EXP_V3, 1e-5);
    tfc_layer_unref(d);
    d = tfc_layers_depthwise_conv2d(.kernel_size = {3}, .strides = {2}, .padding = "same", .depth_multiplier = 2,
                                    .data_format = "channels_first", .use_bias = TFC_NO);
    xv = G(SEQ(DIMS(1, 2, 5, 5), 5, 9, 0.5f, 0));
    build(d, tfc_tensor_shape(xv));
    set_weights(d, 1, (tfc_tensor *[]){SEQ(DIMS(3, 3, 2, 2), 7, 11, 0.1f, 0)});
    y = call(d, xv, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 4, 3, 3));
    CHECK_VALUES(y, EXP_V3B, 1e-5);
    tfc_layer_unref(d);

    /* gradient through Conv2D: d sum(conv(x)) / d kernel[i, j, 0, 0] = sum of the inputs the tap sees */
    c = tfc_layers_conv2d(.filters = 1, .kernel_size = {2}, .kernel_initializer = tfc_initializer_of(.name = "ones"));
    tfc_status st = TFC_STATUS_INIT;
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    y = call(c, x, true);
    tfc_variable *w[2];
    REQUIRE(tfc_layer_trainable_weights(c, w, 2) == 2);
    tfc_tensor *g[2] = {0};
    REQUIRE(tfc_tape_gradient(tape, y, NULL, 0, w, 2, TFC_UNCONNECTED_NONE, g, &st));
    check_values("dkernel", g[0], (const double[]){12, 16, 24, 28}, 4, 1e-6);
    check_values("dbias", g[1], (const double[]){4}, 1, 1e-6);
    tfc_tape_free(tape);
    tfc_layer_unref(c);
    tfc_scope_end(ctx);
    collect();
}

/* ---- pooling and padding ---- */
static void test_pooling_values(void) {
    REQUIRE(tfc_scope_begin(ctx, &(tfc_status){0}));
    tfc_tensor *x = G(T32(DIMS(1, 4, 4, 1), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16));
    tfc_layer *mp = tfc_layers_max_pooling2d(), *ap = tfc_layers_average_pooling2d();
    check_values("max", call(mp, x, false), (const double[]){6, 8, 14, 16}, 4, 0);
    check_values("avg", call(ap, x, false), (const double[]){3.5, 5.5, 11.5, 13.5}, 4, 1e-7);
    tfc_layer_unref(mp);
    tfc_layer_unref(ap);
    /* same padding averages only the real cells: 3x3 windows at stride 3 over one padded row/column on each
     * side cover rows (and columns) {0, 1} and {2, 3} */
    ap = tfc_layers_average_pooling2d(.pool_size = {3}, .padding = "same");
    check_values("avg same", call(ap, x, false), (const double[]){3.5, 5.5, 11.5, 13.5}, 4, 1e-6);
    tfc_layer_unref(ap);
    /* tf_keras values */
    tfc_tensor *xv = G(SEQ(DIMS(1, 5, 5, 2), 7, 13, 0.5f, 0));
    mp = tfc_layers_max_pooling2d();
    CHECK_VALUES(call(mp, xv, false), EXP_V4MAX, 0);
    tfc_layer_unref(mp);
    ap = tfc_layers_average_pooling2d(.pool_size = {3}, .strides = {2}, .padding = "same");
    CHECK_VALUES(call(ap, xv, false), EXP_V4AVG, 1e-6);
    tfc_layer_unref(ap);
    /* channels_first on the transposed input gives the transposed result */
    tfc_tensor *xt = tfc_transpose(ctx, xv, (const int64_t[]){0, 3, 1, 2}, &(tfc_status){0});
    mp = tfc_layers_max_pooling2d(.pool_size = {2, 3}, .strides = {1, 2}, .padding = "same",
                                  .data_format = "channels_first");
    tfc_tensor *y = call(mp, xt, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 2, 5, 3));
    CHECK_VALUES(y, EXP_V4MAXCF, 0);
    tfc_layer_unref(mp);

    /* global pooling */
    tfc_tensor *g = G(T32(DIMS(1, 2, 2, 2), 1, -1, 2, -2, 3, -3, 6, -6));
    tfc_layer *gap = tfc_layers_global_average_pooling2d(), *gmp = tfc_layers_global_max_pooling2d(.keepdims = true);
    y = call(gap, g, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 2));
    check_values("gap", y, (const double[]){3, -3}, 2, 1e-7);
    y = call(gmp, g, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 1, 1, 2));
    check_values("gmp", y, (const double[]){6, -1}, 2, 0);
    tfc_layer_unref(gap);
    tfc_layer_unref(gmp);
    gap = tfc_layers_global_average_pooling2d(.data_format = "channels_first", .keepdims = true);
    gmp = tfc_layers_global_max_pooling2d(.data_format = "channels_first");
    y = call(gap, g, false); /* channels are dim 1 (size 2): means over [[1,-1],[2,-2]] and [[3,-3],[6,-6]] */
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 2, 1, 1));
    check_values("gap cf", y, (const double[]){0, 0}, 2, 1e-7);
    y = call(gmp, g, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 2));
    check_values("gmp cf", y, (const double[]){2, 6}, 2, 0);
    tfc_layer_unref(gap);
    tfc_layer_unref(gmp);
    /* integer inputs keep their dtype */
    tfc_tensor *xi = tfc_cast(ctx, x, TFC_INT32, &(tfc_status){0});
    mp = tfc_layers_max_pooling2d();
    y = call(mp, xi, false);
    CHECK(y && tfc_tensor_dtype(y) == TFC_INT32 && tfc_tensor_get_f64(y, 3) == 16);
    tfc_layer_unref(mp);

    /* zero padding ((1, 0), (0, 2)) */
    tfc_tensor *z = G(T32(DIMS(1, 2, 2, 1), 1, 2, 3, 4));
    tfc_layer *zp = tfc_layers_zero_padding2d(.padding = {{1, 0}, {0, 2}});
    y = call(zp, z, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 3, 4, 1));
    check_values("zp", y, (const double[]){0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}, 12, 0);
    tfc_layer_unref(zp);
    zp = tfc_layers_zero_padding2d(.data_format = "channels_first");
    tfc_tensor *zc = G(T32(DIMS(1, 1, 1, 2), 5, 6));
    y = call(zp, zc, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 1, 3, 4));
    check_values("zp cf", y, (const double[]){0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0}, 12, 0);
    tfc_layer_unref(zp);
    zp = tfc_layers_zero_padding2d(.has_padding = true);
    y = call(zp, z, false);
    CHECK(y && SHAPE_IS(tfc_tensor_shape(y), 1, 2, 2, 1));
    tfc_layer_unref(zp);
    tfc_scope_end(ctx);
    collect();
}

/* ---- BatchNormalization ---- */
typedef struct {
    const double *train, *mm, *mv, *infer, *dx, *dw0, *dw1;
    int64_t n, c;
} bn_expect;

/* As the tf_keras script: set gamma/beta/moving stats, one training call under a tape (loss sum(y * wt)),
 * then an inference call; compare outputs, updated moving statistics and gradients. */
static void bn_case(tfc_layer *bn, tfc_tensor *x, const bn_expect *e) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    build(bn, tfc_tensor_shape(x));
    tfc_variable *w[4];
    int nw = tfc_layer_weights(bn, w, 4);
    const tfc_shape *ps = tfc_variable_shape(w[nw - 1]);
    const tfc_shape *xs = tfc_tensor_shape(x);
    tfc_tensor *vals[4];
    int k = 0;
    for (int i = 0; i < nw; i++) {
        const char *n = strchr(tfc_variable_name(w[i]), '/') + 1;
        if (!strncmp(n, "gamma", 5)) vals[k++] = seq(ps->dims, ps->rank, 3, 7, 0.5f, 1.0f);
        else if (!strncmp(n, "beta", 4)) vals[k++] = seq(ps->dims, ps->rank, 2, 5, 0.1f, 0);
        else if (!strncmp(n, "moving_mean", 11)) vals[k++] = seq(ps->dims, ps->rank, 5, 7, 0.1f, 0);
        else vals[k++] = seq(ps->dims, ps->rank, 3, 5, 0.25f, 1.5f);
    }
    set_weights(bn, nw, vals);
    tfc_tensor *wt = seq(xs->dims, xs->rank, 5, 11, 0.1f, 0.2f);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    tfc_tensor *y = call(bn, x, true);
    tfc_tensor *loss = tfc_reduce_sum(ctx, tfc_mul(ctx, y, wt, &st), NULL, 0, false, &st);
    tfc_variable *tw[2];
    int nt = tfc_layer_trainable_weights(bn, tw, 2);
    tfc_tensor *g[3] = {0};
    CHECK(tfc_tape_gradient(tape, loss, &x, 1, tw, nt, TFC_UNCONNECTED_NONE, g, &st));
    CHECK_OK(&st);
    tfc_tape_free(tape);
    check_values("train", y, e->train, e->n, 2e-5);
    check_values("moving_mean", tfc_variable_value(w[nw - 2]), e->mm, e->c, 2e-6);
    check_values("moving_variance", tfc_variable_value(w[nw - 1]), e->mv, e->c, 2e-6);
    check_values("dx", g[0], e->dx, e->n, 5e-5);
    if (nt > 0) check_values("dgamma/dbeta", g[1], e->dw0, e->c, 5e-5);
    if (nt > 1) check_values("dbeta", g[2], e->dw1, e->c, 5e-5);
    check_values("infer", call(bn, x, false), e->infer, e->n, 2e-5);
    tfc_tensor_unref(wt);
    tfc_scope_end(ctx);
}
#define BN_EXPECT(P, with_dw1)                                                                                 \
    (&(bn_expect){EXP_##P##_TRAIN, EXP_##P##_MM, EXP_##P##_MV, EXP_##P##_INFER, EXP_##P##_DX, EXP_##P##_DW0,   \
                  with_dw1, sizeof EXP_##P##_TRAIN / sizeof(double), sizeof EXP_##P##_MM / sizeof(double)})

static void test_batch_normalization(void) {
    tfc_status st = TFC_STATUS_INIT;
    struct {
        const char *name;
        tfc_layer *bn;
        tfc_tensor *x;
        const bn_expect *e;
    } cases[] = {
        {"BN4 (fused NHWC)", tfc_layers_batch_normalization(.momentum = 0.9), SEQ(DIMS(2, 3, 2, 3), 7, 11, 0.5f, 0.3f),
         BN_EXPECT(BN4, EXP_BN4_DW1)},
        {"BN2 (moments)", tfc_layers_batch_normalization(), SEQ(DIMS(4, 3), 5, 9, 0.7f, -0.2f),
         BN_EXPECT(BN2, EXP_BN2_DW1)},
        {"BN4cf (fused NCHW)", tfc_layers_batch_normalization(.axis = 1, .epsilon = 1e-6),
         SEQ(DIMS(2, 3, 2, 2), 3, 13, 0.4f, 0), BN_EXPECT(BN4CF, EXP_BN4CF_DW1)},
        {"BNmulti", tfc_layers_batch_normalization(.axes = {1, 2}, .n_axes = 2, .scale = TFC_NO, .momentum = 0.5),
         SEQ(DIMS(2, 2, 3), 5, 7, 0.6f, 0), BN_EXPECT(BNMULTI, NULL)},
        {"BN3ax1", tfc_layers_batch_normalization(.axis = 1, .center = TFC_NO), SEQ(DIMS(2, 3, 2), 7, 9, 0.5f, 0),
         BN_EXPECT(BN3AX1, NULL)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int before = tfc_test_failures;
        bn_case(cases[i].bn, cases[i].x, cases[i].e);
        if (tfc_test_failures != before) fprintf(stderr, "  in %s\n", cases[i].name);
        tfc_layer_unref(cases[i].bn);
        tfc_tensor_unref(cases[i].x);
    }

    /* by hand with the default initial statistics (mean 0, variance 1, momentum 0.99): the moments path moves
     * the variance towards the biased batch variance, the fused path towards the unbiased one */
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_layer *b2 = tfc_layers_batch_normalization(), *b4 = tfc_layers_batch_normalization();
    tfc_tensor *x2 = T32(DIMS(2, 1), 0, 2), *x4 = T32(DIMS(1, 2, 1, 1), 0, 2);
    double s = 1 / sqrt(1 + 1e-3);
    check_values("y2", call(b2, x2, true), (const double[]){-s, s}, 2, 1e-6);
    check_values("y4", call(b4, x4, true), (const double[]){-s, s}, 2, 1e-6);
    tfc_variable *w2[4], *w4[4];
    REQUIRE(tfc_layer_weights(b2, w2, 4) == 4 && tfc_layer_weights(b4, w4, 4) == 4);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w2[2]), 0), 0.01, 1e-7);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w2[3]), 0), 0.99 + 0.01 * 1, 1e-7);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w4[2]), 0), 0.01, 1e-7);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w4[3]), 0), 0.99 + 0.01 * 2, 1e-7);
    /* inference uses the moving statistics and changes nothing */
    check_values("y2 inference", call(b2, x2, false), (const double[]){-0.01 / sqrt(1 + 1e-3), 1.99 / sqrt(1 + 1e-3)},
                 2, 1e-6);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w2[2]), 0), 0.01, 1e-7);
    /* frozen: training=true runs in inference mode without updates (Keras 2.x) */
    tfc_layer_set_trainable(b4, false);
    tfc_tensor *mm_before = tfc_tensor_copy(tfc_variable_value(w4[2]), &st);
    tfc_tensor *y = call(b4, x4, true);
    double mv = 0.99 + 0.02, eps_f = 1e-3;
    check_values("frozen", y, (const double[]){(0 - 0.01) / sqrt(mv + eps_f), (2 - 0.01) / sqrt(mv + eps_f)}, 2, 1e-6);
    CHECK(tfc_tensor_get_f64(tfc_variable_value(w4[2]), 0) == tfc_tensor_get_f64(mm_before, 0));
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w4[3]), 0), mv, 1e-7);
    tfc_tensor_unref(mm_before);
    tfc_layer_unref(b2);
    tfc_layer_unref(b4);
    tfc_tensor_unref(x2);
    tfc_tensor_unref(x4);
    /* fused epsilon is at least 1.001e-5, as tf.compat.v1.nn.fused_batch_norm; moments use it as given */
    tfc_layer *bf = tfc_layers_batch_normalization(.epsilon = 1e-8);
    tfc_layer *bm = tfc_layers_batch_normalization(.epsilon = 1e-8);
    tfc_tensor *xf = T32(DIMS(1, 1, 1, 1), 0.5f), *xm = T32(DIMS(1, 1), 0.5f);
    check_values("eps fused", call(bf, xf, false), (const double[]){0.5 / sqrt(1 + 1.001e-5)}, 1, 5e-7);
    check_values("eps moments", call(bm, xm, false), (const double[]){0.5 / sqrt(1 + 1e-8)}, 1, 1e-8);
    tfc_layer_unref(bf);
    tfc_layer_unref(bm);
    tfc_tensor_unref(xf);
    tfc_tensor_unref(xm);
    /* float64 layers keep float64 statistics */
    tfc_layer *b64 = tfc_layers_batch_normalization(.dtype = TFC_DOUBLE);
    x2 = T32(DIMS(2, 1), 0, 2);
    y = call(b64, x2, true);
    CHECK(y && tfc_tensor_dtype(y) == TFC_DOUBLE);
    tfc_variable *w64[4];
    REQUIRE(tfc_layer_weights(b64, w64, 4) == 4);
    CHECK(tfc_variable_dtype(w64[2]) == TFC_DOUBLE);
    /* decay is float32(1 - momentum) as Keras */
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(w64[2]), 0), (double)(float)0.01, 1e-15);
    tfc_layer_unref(b64);
    tfc_tensor_unref(x2);
    tfc_scope_end(ctx);
}

/* ---- LayerNormalization ---- */
static void ln_case(tfc_layer *ln, tfc_tensor *x, const double *want, int64_t n, const char *what) {
    REQUIRE(tfc_scope_begin(ctx, &(tfc_status){0}));
    build(ln, tfc_tensor_shape(x));
    tfc_variable *w[2];
    int nw = tfc_layer_weights(ln, w, 2);
    tfc_tensor *vals[2];
    for (int i = 0; i < nw; i++) {
        const tfc_shape *s = tfc_variable_shape(w[i]);
        vals[i] = strstr(tfc_variable_name(w[i]), "gamma") ? seq(s->dims, s->rank, 3, 7, 0.5f, 1.0f)
                                                          : seq(s->dims, s->rank, 2, 5, 0.1f, 0);
    }
    set_weights(ln, nw, vals);
    check_values(what, call(ln, x, true), want, n, 2e-5);
    tfc_scope_end(ctx);
    tfc_layer_unref(ln);
}
#define LN_CASE(ln, x, P) ln_case((ln), (x), EXP_##P, sizeof EXP_##P / sizeof(double), #P)

static void test_layer_normalization(void) {
    tfc_tensor *x = G(SEQ(DIMS(2, 3, 4), 7, 11, 0.5f, 0.1f));
    LN_CASE(tfc_layers_layer_normalization(), x, LN1);
    LN_CASE(tfc_layers_layer_normalization(.axis = {1, 2}, .n_axis = 2), x, LN2);
    LN_CASE(tfc_layers_layer_normalization(.axis = {1}, .n_axis = 1), x, LN3);
    LN_CASE(tfc_layers_layer_normalization(.epsilon = 1e-6), x, LN4);
    LN_CASE(tfc_layers_layer_normalization(.axis = {2, 1}, .n_axis = 2), x, LN5);
    /* by hand: [1, 3] -> mean 2, var 1 -> +-1/sqrt(1 + eps); gradient of sum(y) for beta counts the rows */
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_layer *ln = tfc_layers_layer_normalization();
    tfc_tensor *x2 = G(T32(DIMS(3, 2), 1, 3, 1, 3, 5, 7));
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tensor *y = call(ln, x2, true);
    double s = 1 / sqrt(1 + 1e-3);
    check_values("ln hand", y, (const double[]){-s, s, -s, s, -s, s}, 6, 1e-6);
    tfc_variable *w[2];
    REQUIRE(tfc_layer_trainable_weights(ln, w, 2) == 2);
    tfc_tensor *g[2] = {0};
    REQUIRE(tfc_tape_gradient(tape, y, NULL, 0, w, 2, TFC_UNCONNECTED_NONE, g, &st));
    check_values("dgamma", g[0], (const double[]){-3 * s, 3 * s}, 2, 1e-6);
    check_values("dbeta", g[1], (const double[]){3, 3}, 2, 1e-6);
    tfc_tape_free(tape);
    tfc_layer_unref(ln);
    /* float64: the moments path */
    ln = tfc_layers_layer_normalization(.dtype = TFC_DOUBLE);
    y = call(ln, x2, false);
    CHECK(y && tfc_tensor_dtype(y) == TFC_DOUBLE);
    check_values("ln f64", y, (const double[]){-s, s, -s, s, -s, s}, 6, 1e-12);
    tfc_layer_unref(ln);
    tfc_scope_end(ctx);
    collect();
}

/* ---- errors: INVALID_ARGUMENT naming the layer and the shapes or values ---- */
static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x3 = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){2, 5, 5}, 3, &st);
    tfc_tensor *x4 = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){1, 5, 5, 3}, 4, &st);
    tfc_tensor *x4c4 = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){1, 5, 5, 4}, 4, &st);
    tfc_tensor *thin = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){1, 1, 5, 1}, 4, &st);
    tfc_tensor *thin3 = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){1, 5, 2, 3}, 4, &st);
    tfc_tensor *x5 = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){1, 2, 5, 5, 3}, 5, &st);
    tfc_tensor *empty = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){1, 0, 3, 2}, 4, &st);
    tfc_tensor *x2 = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){4, 3}, 2, &st);
    REQUIRE(x3 && x4 && x4c4 && thin && thin3 && x5 && empty && x2);

    tfc_layer *c = tfc_layers_conv2d(.filters = 2, .kernel_size = {3}, .name = "conv_a");
    EXPECT_ERROR(c, x3, "conv_a", "min_ndim=4", "(2, 5, 5)");
    EXPECT_ERROR(c, thin, "conv_a", "<= 0", "[1, 1, 5, 1]");
    CHECK(!tfc_layer_built(c));
    CHECK(call(c, x4, false) != NULL);
    EXPECT_ERROR(c, x4c4, "conv_a", "(1, 5, 5, 4)", "(1, 5, 5, 3)");
    EXPECT_ERROR(c, thin3, "conv_a", "<= 0", "[1, 5, 2, 3]"); /* spatial size checked on every call */
    tfc_layer_unref(c);
    struct {
        tfc_layer *l;
        tfc_tensor *x;
        const char *needle;
    } bad[] = {
        {tfc_layers_conv2d(.filters = 2, .kernel_size = {3}, .padding = "full"), x4, "full"},
        {tfc_layers_conv2d(.filters = 2, .kernel_size = {3}, .padding = "causal"), x4, "Conv1D"},
        {tfc_layers_conv2d(.filters = 2, .kernel_size = {3}, .data_format = "nchw"), x4, "nchw"},
        {tfc_layers_conv2d(.kernel_size = {3}), x4, "filters=0"},
        {tfc_layers_conv2d(.filters = 2), x4, "kernel_size"},
        {tfc_layers_conv2d(.filters = 2, .kernel_size = {3, -1}), x4, "kernel_size"},
        {tfc_layers_conv2d(.filters = 6, .kernel_size = {1}, .groups = 4), x4, "groups=4, filters=6"},
        {tfc_layers_conv2d(.filters = 6, .kernel_size = {1}, .groups = 2), x4, "has 3 channels"},
        {tfc_layers_conv2d(.filters = 2, .kernel_size = {3}, .strides = {2}, .dilation_rate = {2}), x4,
         "dilation_rate"},
        {tfc_layers_conv2d(.filters = 2, .kernel_size = {1}, .activation = "relux"), x4, "relux"},
        {tfc_layers_depthwise_conv2d(.kernel_size = {3}), x5, "rank 4"},
        {tfc_layers_depthwise_conv2d(.kernel_size = {3}, .padding = "Full"), x4, "full"},
        {tfc_layers_depthwise_conv2d(.kernel_size = {3}, .depth_multiplier = -1), x4, "depth_multiplier"},
        {tfc_layers_depthwise_conv2d(.kernel_size = {3}), thin, "<= 0"},
        {tfc_layers_max_pooling2d(), x3, "ndim=4"},
        {tfc_layers_max_pooling2d(), thin, "<= 0"},
        {tfc_layers_max_pooling2d(.padding = "reflect"), x4, "reflect"},
        {tfc_layers_average_pooling2d(.data_format = "channels_middle"), x4, "channels_middle"},
        {tfc_layers_average_pooling2d(.pool_size = {6}), x4, "[1, 5, 5, 3]"},
        {tfc_layers_global_average_pooling2d(), empty, "dimension 0 at reduction axis 1"},
        {tfc_layers_global_max_pooling2d(), x5, "ndim=4"},
        {tfc_layers_zero_padding2d(.padding = {{1, -1}, {0, 0}}), x4, "-1"},
        {tfc_layers_zero_padding2d(), x3, "ndim=4"},
        {tfc_layers_batch_normalization(.axis = 2, .has_axis = true), x2, "axis=(2,)"},
        {tfc_layers_batch_normalization(.axes = {1, -1}, .n_axes = 2), x2, "Duplicate axis: (1, 1)"},
        {tfc_layers_batch_normalization(.axis = -4, .has_axis = true), x4, "Unsupported axis"},
        {tfc_layers_layer_normalization(.axis = {3}, .n_axis = 1), x3, "inputs.rank=3"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int before = tfc_test_failures;
        EXPECT_ERROR(bad[i].l, bad[i].x, tfc_layer_name(bad[i].l), bad[i].needle);
        CHECK(!tfc_layer_built(bad[i].l) && tfc_layer_weights(bad[i].l, NULL, 0) == 0);
        if (tfc_test_failures != before) fprintf(stderr, "  bad case %zu\n", i);
        tfc_layer_unref(bad[i].l);
    }
    /* symbolic: unknown channels or normalised dims */
    tfc_ktensor *in = tfc_input(.shape = {5, 5, -1});
    tfc_layer *cs = tfc_layers_conv2d(.filters = 2, .kernel_size = {3}), *bs = tfc_layers_batch_normalization(),
              *ls = tfc_layers_layer_normalization();
    CHECK(!tfc_apply(cs, &st, in));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "channel dimension") && strstr(st.msg, "(None, 5, 5, None)"));
    CHECK(!tfc_apply(bs, &st, in));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "undefined `axis` dimension") && strstr(st.msg, tfc_layer_name(bs)));
    CHECK(!tfc_apply(ls, &st, in));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, tfc_layer_name(ls)) && strstr(st.msg, "(None, 5, 5, None)"));
    tfc_layer_unref(cs);
    tfc_layer_unref(bs);
    tfc_layer_unref(ls);
    tfc_layer_unref(tfc_ktensor_layer(in));
    /* a built BatchNormalization checks rank and features */
    tfc_layer *bn = tfc_layers_batch_normalization(.name = "bn_e");
    CHECK(call(bn, x2, false) != NULL);
    tfc_tensor *x2b = tfc_zeros(ctx, TFC_FLOAT, (const int64_t[]){4, 5}, 2, &st);
    EXPECT_ERROR(bn, x2b, "bn_e", "(4, 5)", "value 3");
    EXPECT_ERROR(bn, x4, "bn_e", "ndim=2");
    tfc_layer_unref(bn);
    tfc_scope_end(ctx);
}

/* Allocation failures while building and calling the layers are reported, never a crash or a leak. */
static void test_alloc_failures(void) {
    for (int kind = 0; kind < 3; kind++) {
        for (int n = 0; n < 2000; n++) {
            tfc_status st = TFC_STATUS_INIT;
            tfc_tensor *x = SEQ(DIMS(2, 4, 4, 3), 7, 11, 0.5f, 0);
            tfc_alloc_fail_after(n);
            tfc_layer *l = kind == 0   ? tfc_layers_conv2d(.filters = 2, .kernel_size = {3}, .padding = "same",
                                                           .kernel_regularizer = tfc_l2(0.1))
                           : kind == 1 ? tfc_layers_batch_normalization()
                                       : tfc_layers_layer_normalization(.axis = {1, 3}, .n_axis = 2);
            tfc_tensor *y = l ? tfc_layer_call1(l, ctx, x, true, &st) : NULL;
            char *cfg = y ? tfc_layer_get_config(l, &st) : NULL;
            bool failed = tfc_alloc_failures() > 0;
            tfc_alloc_fail_after(-1);
            if (l && !failed) CHECK(y && cfg);
            if (l && !y) CHECK(st.code != TFC_OK);
            tfc_free(cfg);
            tfc_tensor_unref(y);
            tfc_layer_unref(l);
            tfc_tensor_unref(x);
            if (!failed) break;
        }
    }
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_output_shapes();
    test_weights();
    test_configs();
    test_conv_values();
    test_pooling_values();
    test_batch_normalization();
    test_layer_normalization();
    test_errors();
    test_alloc_failures();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
