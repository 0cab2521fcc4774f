/* Op test cases: nn (activations, BiasAdd, softmax, cross-entropy, batch norm, L2Loss). */
#include "op_test.h"

/* Table rows leave trailing fields to their zero defaults. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const tfc_dtype FLOAT_DOUBLE[] = {TFC_FLOAT, TFC_DOUBLE, 0};
static const tfc_dtype BN_FLOATS[] = {TFC_FLOAT, TFC_DOUBLE, TFC_BFLOAT16, 0}; /* U = T needs U in {bf16, f32, f64} */
static const tfc_dtype FLOATS[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, 0};
static const tfc_dtype HALVES[] = {TFC_HALF, TFC_BFLOAT16, 0};
static const tfc_dtype SIGNED[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_INT16, TFC_INT32,
                                   TFC_INT64, 0};

#define IN_R(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
#define IN_NG(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_), .no_grad = true}
#define IN_F32(r, lo_, hi_, ...) {.dtype = TFC_FLOAT, .rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
#define IN_F32NG(r, lo_, hi_, ...) \
    {.dtype = TFC_FLOAT, .rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_), .no_grad = true}
#define IN_LAB(dt, n, ...) {.dtype = (dt), .rank = 1, .dims = {n}, .n_vals = (n), .vals = {__VA_ARGS__}, .no_grad = true}
/* Probability rows of 5 / 6 classes (values repeat per row). */
#define LABELS5(rows) {.rank = 2, .dims = {rows, 5}, .n_vals = 5, .vals = {0.1, 0.3, 0.05, 0.5, 0.05}, .no_grad = true}
#define LABELS6(rows) {.rank = 2, .dims = {rows, 6}, .n_vals = 6, .vals = {0.2, 0.0, 0.25, 0.125, 0.4, 0.025}, .no_grad = true}

#define A_S(n, v) TFC_ATTR_S(n, v)
#define A_F(n, v) TFC_ATTR_F(n, v)
#define A_B(n, v) TFC_ATTR_B(n, v)
#define NCHW A_S("data_format", "NCHW")

/* Shapes for an elementwise activation on [lo, hi]. */
#define ACT_CASES(OP, lo, hi, DT, ...)                                                                          \
    {OP, "matrix", 1, {IN_R(2, lo, hi, 3, 4)}, .grad = true, .dtypes = DT, __VA_ARGS__},                        \
    {OP, "rank 0", 1, {IN_R(0, lo, hi, 0)}, .grad = true, .dtypes = DT, __VA_ARGS__},                           \
    {OP, "4-d", 1, {IN_R(4, lo, hi, 2, 3, 1, 5)}, .dtypes = DT, __VA_ARGS__},                                   \
    {OP, "size 0", 1, {IN_R(3, lo, hi, 2, 0, 3)}, .dtypes = DT, __VA_ARGS__},                                   \
    {OP, "odd length", 1, {IN_R(1, lo, hi, 1037)}, .dtypes = DT, __VA_ARGS__},                                  \
    {OP, "parallel", 1, {IN_R(2, lo, hi, 250, 250)}, .dtypes = DT, __VA_ARGS__}

/* The *Grad helpers: (gradients, features-or-outputs) on [lo, hi]. */
#define ACT_GRAD_CASES(OP, lo, hi, DT, ...)                                                                     \
    {OP, "matrix", 2, {IN_R(2, -1, 1, 3, 4), IN_R(2, lo, hi, 3, 4)}, .grad = true, .dtypes = DT, __VA_ARGS__},  \
    {OP, "rank 0", 2, {IN_R(0, -1, 1, 0), IN_R(0, lo, hi, 0)}, .grad = true, .dtypes = DT, __VA_ARGS__},       \
    {OP, "size 0", 2, {IN_R(2, -1, 1, 0, 3), IN_R(2, lo, hi, 0, 3)}, .dtypes = DT, __VA_ARGS__},               \
    {OP, "parallel", 2, {IN_R(1, -1, 1, 60000), IN_R(1, lo, hi, 60000)}, .dtypes = DT, __VA_ARGS__}

const op_case op_cases_nn[] = {
    /* ---- activations (kinks avoided by the finite differences only by chance: h = 1e-5) ---- */
    ACT_CASES("Relu", -3, 3, NULL),
    ACT_CASES("Relu6", -2, 8, NULL),
    {"Relu", "integers", 1, {IN_R(2, -9, 9, 4, 5)}, .dtypes = SIGNED},
    ACT_CASES("LeakyRelu", -3, 3, NULL),
    ACT_CASES("LeakyRelu", -3, 3, NULL, .n_attrs = 1, .attrs = {A_F("alpha", 0.01)}),
    ACT_CASES("LeakyRelu", -3, 3, NULL, .n_attrs = 1, .attrs = {A_F("alpha", 1.7)}),
    ACT_CASES("Elu", -4, 2, NULL),
    ACT_CASES("Selu", -4, 2, NULL),
    ACT_CASES("Softplus", -5, 5, NULL),
    {"Softplus", "large magnitudes", 1, {IN_R(1, -200, 200, 64)}, .grad = true},
    ACT_CASES("Softsign", -5, 5, NULL),

    ACT_GRAD_CASES("ReluGrad", -3, 3, NULL),
    ACT_GRAD_CASES("Relu6Grad", -2, 8, NULL),
    ACT_GRAD_CASES("LeakyReluGrad", -3, 3, NULL),
    ACT_GRAD_CASES("LeakyReluGrad", -3, 3, NULL, .n_attrs = 1, .attrs = {A_F("alpha", 0.3)}),
    /* EluGrad / SeluGrad take the forward outputs: Elu's are > -1, Selu's > -1.7581 */
    ACT_GRAD_CASES("EluGrad", -0.95, 2, NULL),
    ACT_GRAD_CASES("SeluGrad", -1.7, 2, NULL),
    ACT_GRAD_CASES("SoftplusGrad", -5, 5, NULL),
    ACT_GRAD_CASES("SoftsignGrad", -5, 5, NULL),

    /* ---- BiasAdd / BiasAddGrad ---- */
    {"BiasAdd", "NHWC 2-d", 2, {IN_R(2, -3, 3, 4, 3), IN_R(1, -3, 3, 3)}, .grad = true, .dtypes = SIGNED},
    {"BiasAdd", "NHWC 4-d", 2, {IN_R(4, -3, 3, 2, 3, 2, 5), IN_R(1, -3, 3, 5)}, .grad = true},
    {"BiasAdd", "NCHW 4-d", 2, {IN_R(4, -3, 3, 2, 5, 3, 2), IN_R(1, -3, 3, 5)}, .n_attrs = 1, .attrs = {NCHW},
     .grad = true, .dtypes = SIGNED},
    {"BiasAdd", "NCHW 2-d", 2, {IN_R(2, -3, 3, 3, 4), IN_R(1, -3, 3, 4)}, .n_attrs = 1, .attrs = {NCHW}, .grad = true},
    {"BiasAdd", "NCHW 5-d", 2, {IN_R(5, -3, 3, 2, 3, 2, 1, 2), IN_R(1, -3, 3, 3)}, .n_attrs = 1, .attrs = {NCHW}},
    {"BiasAdd", "size 0", 2, {IN_R(3, -3, 3, 0, 2, 3), IN_R(1, -3, 3, 3)}},
    {"BiasAdd", "zero channels", 2, {IN_R(2, -3, 3, 4, 0), IN_R(1, -3, 3, 0)}},
    {"BiasAdd", "parallel NHWC", 2, {IN_R(2, -3, 3, 1900, 33), IN_R(1, -3, 3, 33)}},
    {"BiasAdd", "parallel NCHW", 2, {IN_R(4, -3, 3, 4, 16, 30, 30), IN_R(1, -3, 3, 16)}, .n_attrs = 1, .attrs = {NCHW}},
    {"BiasAddGrad", "NHWC 2-d", 1, {IN_R(2, -3, 3, 4, 3)}, .grad = true, .dtypes = SIGNED},
    {"BiasAddGrad", "NHWC 4-d", 1, {IN_R(4, -3, 3, 2, 3, 2, 5)}, .grad = true},
    {"BiasAddGrad", "NCHW 4-d", 1, {IN_R(4, -3, 3, 2, 5, 3, 2)}, .n_attrs = 1, .attrs = {NCHW}, .grad = true,
     .dtypes = SIGNED},
    {"BiasAddGrad", "NCHW 2-d", 1, {IN_R(2, -3, 3, 3, 4)}, .n_attrs = 1, .attrs = {NCHW}, .grad = true},
    {"BiasAddGrad", "size 0", 1, {IN_R(2, -3, 3, 0, 3)}},
    {"BiasAddGrad", "size 0 NCHW", 1, {IN_R(3, -3, 3, 2, 3, 0)}, .n_attrs = 1, .attrs = {NCHW}},
    {"BiasAddGrad", "parallel NHWC", 1, {IN_R(2, -3, 3, 3800, 17)}, .tol = 4, .dtypes = FLOATS},
    {"BiasAddGrad", "parallel NCHW", 1, {IN_R(4, -3, 3, 4, 16, 30, 30)}, .n_attrs = 1, .attrs = {NCHW}, .tol = 4,
     .dtypes = FLOATS},

    /* ---- Softmax / LogSoftmax ---- */
    {"Softmax", "matrix", 1, {IN_R(2, -3, 3, 4, 5)}, .grad = true},
    {"Softmax", "vector", 1, {IN_R(1, -3, 3, 7)}, .grad = true},
    {"Softmax", "3-d", 1, {IN_R(3, -3, 3, 2, 3, 4)}, .grad = true},
    {"Softmax", "huge logits", 1, {IN_R(2, -1e4, 1e4, 3, 5)}, .grad = true},
    {"Softmax", "one class", 1, {IN_R(2, -3, 3, 3, 1)}},
    {"Softmax", "size 0 rows", 1, {IN_R(2, -3, 3, 0, 4)}},
    {"Softmax", "size 0 classes", 1, {IN_R(2, -3, 3, 4, 0)}},
    {"Softmax", "parallel", 1, {IN_R(2, -5, 5, 500, 130)}},
    {"LogSoftmax", "matrix", 1, {IN_R(2, -3, 3, 4, 5)}, .grad = true},
    {"LogSoftmax", "vector", 1, {IN_R(1, -3, 3, 7)}, .grad = true},
    {"LogSoftmax", "3-d", 1, {IN_R(3, -3, 3, 2, 3, 4)}, .grad = true},
    {"LogSoftmax", "huge logits", 1, {IN_R(2, -1e4, 1e4, 3, 5)}, .grad = true},
    {"LogSoftmax", "size 0 classes", 1, {IN_R(2, -3, 3, 4, 0)}},
    {"LogSoftmax", "parallel", 1, {IN_R(2, -5, 5, 500, 130)}},

    /* ---- cross-entropy. TensorFlow's gradients take backprop = softmax - labels as d loss / d logits,
     * which holds for labels that sum to 1 per row: the differentiated cases use such rows (fixed values
     * repeat per row). The labels' gradient (grad_loss * -log_softmax) ignores backprop's dependence on
     * the labels, as TensorFlow's, so labels are not finite-differenced. ---- */
    {"SoftmaxCrossEntropyWithLogits", "matrix", 2, {IN_R(2, -3, 3, 4, 5), LABELS5(4)}, .grad = true},
    {"SoftmaxCrossEntropyWithLogits", "huge logits", 2, {IN_R(2, -1e4, 1e4, 3, 6), LABELS6(3)}, .grad = true},
    {"SoftmaxCrossEntropyWithLogits", "labels broadcast", 2, {IN_R(2, -3, 3, 4, 5), LABELS5(1)}, .grad = true},
    {"SoftmaxCrossEntropyWithLogits", "logits broadcast", 2, {IN_R(1, -3, 3, 5), LABELS5(3)}, .grad = true},
    {"SoftmaxCrossEntropyWithLogits", "unnormalised labels", 2, {IN_R(2, -3, 3, 4, 5), IN_NG(2, 0, 1, 4, 5)}},
    {"SoftmaxCrossEntropyWithLogits", "logits column", 2, {IN_R(2, -3, 3, 3, 1), IN_NG(2, 0, 1, 3, 4)}},
    {"SoftmaxCrossEntropyWithLogits", "size 0 batch", 2, {IN_R(2, -3, 3, 0, 4), IN_NG(2, 0, 1, 0, 4)}},
    {"SoftmaxCrossEntropyWithLogits", "zero classes", 2, {IN_R(2, -3, 3, 3, 0), IN_NG(2, 0, 1, 3, 0)}},
    {"SoftmaxCrossEntropyWithLogits", "parallel", 2, {IN_R(2, -5, 5, 600, 100), IN_NG(2, 0, 1, 600, 100)}},
    {"SparseSoftmaxCrossEntropyWithLogits", "int64 labels", 2, {IN_R(2, -3, 3, 4, 5), IN_LAB(TFC_INT64, 4, 0, 4, 2, 2)},
     .grad = true},
    {"SparseSoftmaxCrossEntropyWithLogits", "int32 labels", 2, {IN_R(2, -3, 3, 3, 6), IN_LAB(TFC_INT32, 3, 5, 0, 3)},
     .grad = true},
    {"SparseSoftmaxCrossEntropyWithLogits", "huge logits", 2,
     {IN_R(2, -1e4, 1e4, 3, 6), IN_LAB(TFC_INT32, 3, 1, 4, 0)}, .grad = true},
    {"SparseSoftmaxCrossEntropyWithLogits", "one class", 2, {IN_R(2, -3, 3, 2, 1), IN_LAB(TFC_INT64, 2, 0, 0)}},
    {"SparseSoftmaxCrossEntropyWithLogits", "size 0 batch", 2,
     {IN_R(2, -3, 3, 0, 4), {.dtype = TFC_INT32, .rank = 1, .dims = {0}, .no_grad = true}}},

    /* ---- L2Loss ---- */
    {"L2Loss", "matrix", 1, {IN_R(2, -3, 3, 4, 5)}, .grad = true},
    {"L2Loss", "rank 0", 1, {IN_R(0, -3, 3, 0)}, .grad = true},
    {"L2Loss", "size 0", 1, {IN_R(2, -3, 3, 0, 5)}},
    {"L2Loss", "parallel", 1, {IN_R(1, -1, 1, 65000)}, .tol = 4},

    /* ---- FusedBatchNormV3 ----
     * The gradient ignores the statistics outputs (as TensorFlow's), while the finite differences here see
     * every output: training cases only vary scale and offset, on which the statistics do not depend;
     * inference cases vary x, scale and offset (the statistics outputs pass mean/variance through). */
    {"FusedBatchNormV3", "training NHWC", 5,
     {IN_NG(4, -3, 3, 2, 3, 2, 4), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4), IN_NG(1, -1, 1, 4), IN_NG(1, 0.5, 2, 4)},
     .grad = true, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "training NCHW", 5,
     {IN_NG(4, -3, 3, 2, 4, 3, 2), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4), IN_NG(1, -1, 1, 4), IN_NG(1, 0.5, 2, 4)},
     .n_attrs = 1, .attrs = {NCHW}, .grad = true, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "training NDHWC", 5,
     {IN_NG(5, -3, 3, 2, 2, 3, 2, 3), IN_R(1, 0.5, 2, 3), IN_R(1, -1, 1, 3), IN_NG(1, -1, 1, 0), IN_NG(1, 0.5, 2, 0)},
     .n_attrs = 1, .attrs = {A_S("data_format", "NDHWC")}, .grad = true, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "training NCDHW", 5,
     {IN_NG(5, -3, 3, 2, 3, 2, 2, 3), IN_R(1, 0.5, 2, 3), IN_R(1, -1, 1, 3), IN_NG(1, -1, 1, 3), IN_NG(1, 0.5, 2, 3)},
     .n_attrs = 2, .attrs = {A_S("data_format", "NCDHW"), A_F("epsilon", 0.01)}, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "training, moving average", 5,
     {IN_NG(4, -3, 3, 3, 2, 2, 5), IN_R(1, 0.5, 2, 5), IN_R(1, -1, 1, 5), IN_NG(1, -1, 1, 5), IN_NG(1, 0.5, 2, 5)},
     .n_attrs = 1, .attrs = {A_F("exponential_avg_factor", 0.3)}, .grad = true, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "inference NHWC", 5,
     {IN_R(4, -3, 3, 2, 3, 2, 4), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4), IN_NG(1, -1, 1, 4), IN_NG(1, 0.5, 2, 4)},
     .n_attrs = 1, .attrs = {A_B("is_training", false)}, .grad = true, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "inference NCHW", 5,
     {IN_R(4, -3, 3, 2, 4, 3, 2), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4), IN_NG(1, -1, 1, 4), IN_NG(1, 0.5, 2, 4)},
     .n_attrs = 2, .attrs = {A_B("is_training", false), NCHW}, .grad = true, .dtypes = BN_FLOATS, .tol = 4},
    {"FusedBatchNormV3", "half x, float statistics", 5,
     {IN_R(4, -3, 3, 2, 3, 2, 4), IN_F32(1, 0.5, 2, 4), IN_F32(1, -1, 1, 4), IN_F32(1, -1, 1, 4), IN_F32(1, 0.5, 2, 4)},
     .dtypes = HALVES, .tol = 4},
    {"FusedBatchNormV3", "half x inference NCHW", 5,
     {IN_R(4, -3, 3, 2, 3, 2, 4), IN_F32(1, 0.5, 2, 3), IN_F32(1, -1, 1, 3), IN_F32(1, -1, 1, 3), IN_F32(1, 0.5, 2, 3)},
     .n_attrs = 2, .attrs = {A_B("is_training", false), NCHW}, .dtypes = HALVES, .tol = 4},
    {"FusedBatchNormV3", "one element per channel", 5,
     {IN_R(4, -3, 3, 1, 1, 1, 3), IN_R(1, 0.5, 2, 3), IN_R(1, -1, 1, 3), IN_NG(1, -1, 1, 3), IN_NG(1, 0.5, 2, 3)},
     .dtypes = BN_FLOATS},
    {"FusedBatchNormV3", "parallel NHWC", 5,
     {IN_R(4, -3, 3, 4, 20, 20, 40), IN_R(1, 0.5, 2, 40), IN_R(1, -1, 1, 40), IN_R(1, -1, 1, 40), IN_R(1, 0.5, 2, 40)},
     .dtypes = FLOAT_DOUBLE, .tol = 10},
    {"FusedBatchNormV3", "parallel NCHW", 5,
     {IN_R(4, -3, 3, 4, 40, 20, 20), IN_R(1, 0.5, 2, 40), IN_R(1, -1, 1, 40), IN_R(1, -1, 1, 40), IN_R(1, 0.5, 2, 40)},
     .n_attrs = 1, .attrs = {NCHW}, .dtypes = FLOAT_DOUBLE, .tol = 10},
    {"FusedBatchNormV3", "parallel inference", 5,
     {IN_R(4, -3, 3, 4, 20, 20, 40), IN_R(1, 0.5, 2, 40), IN_R(1, -1, 1, 40), IN_R(1, -1, 1, 40), IN_R(1, 0.5, 2, 40)},
     .n_attrs = 1, .attrs = {A_B("is_training", false)}, .dtypes = FLOAT_DOUBLE, .tol = 10},

    /* ---- FusedBatchNormGradV3 ----
     * In training mode its gradient (TensorFlow's) treats reserve_space_1/2 as the statistics of x, which
     * finite differences holding them fixed cannot see: only inference mode is finite-differenced here
     * (training second order is checked against TensorFlow in tests/conformance/test_nn.py). */
    {"FusedBatchNormGradV3", "training NHWC", 6,
     {IN_R(4, -1, 1, 2, 3, 2, 4), IN_R(4, -3, 3, 2, 3, 2, 4), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4),
      IN_R(1, 0.5, 2, 4), IN_R(0, 0, 0, 0)},
     .dtypes = FLOAT_DOUBLE, .tol = 4},
    {"FusedBatchNormGradV3", "training NCHW", 6,
     {IN_R(4, -1, 1, 2, 4, 3, 2), IN_R(4, -3, 3, 2, 4, 3, 2), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4),
      IN_R(1, 0.5, 2, 4), IN_R(0, 0, 0, 0)},
     .n_attrs = 1, .attrs = {NCHW}, .dtypes = FLOAT_DOUBLE, .tol = 4},
    {"FusedBatchNormGradV3", "inference NHWC", 6,
     {IN_R(4, -1, 1, 2, 3, 2, 4), IN_R(4, -3, 3, 2, 3, 2, 4), IN_R(1, 0.5, 2, 4), IN_NG(1, -1, 1, 4),
      IN_NG(1, 0.5, 2, 4), IN_NG(0, 0, 0, 0)},
     .n_attrs = 1, .attrs = {A_B("is_training", false)}, .grad = true, .dtypes = FLOAT_DOUBLE, .tol = 4},
    {"FusedBatchNormGradV3", "inference NCHW", 6,
     {IN_R(4, -1, 1, 2, 4, 3, 2), IN_R(4, -3, 3, 2, 4, 3, 2), IN_R(1, 0.5, 2, 4), IN_NG(1, -1, 1, 4),
      IN_NG(1, 0.5, 2, 4), IN_NG(0, 0, 0, 0)},
     .n_attrs = 2, .attrs = {A_B("is_training", false), NCHW}, .grad = true, .dtypes = FLOAT_DOUBLE, .tol = 4},
    {"FusedBatchNormGradV3", "half", 6,
     {IN_R(4, -1, 1, 2, 3, 2, 4), IN_R(4, -3, 3, 2, 3, 2, 4), IN_F32(1, 0.5, 2, 4), IN_F32(1, -1, 1, 4),
      IN_F32(1, 0.5, 2, 4), IN_F32(0, 0, 0, 0)},
     .dtypes = HALVES, .tol = 4},
    {"FusedBatchNormGradV3", "size 0", 6,
     {IN_R(4, -1, 1, 0, 3, 2, 4), IN_R(4, -3, 3, 0, 3, 2, 4), IN_R(1, 0.5, 2, 4), IN_R(1, -1, 1, 4),
      IN_R(1, 0.5, 2, 4), IN_R(0, 0, 0, 0)},
     .dtypes = FLOAT_DOUBLE},
    {"FusedBatchNormGradV3", "parallel NHWC", 6,
     {IN_R(4, -1, 1, 4, 20, 20, 40), IN_R(4, -3, 3, 4, 20, 20, 40), IN_R(1, 0.5, 2, 40), IN_R(1, -1, 1, 40),
      IN_R(1, 0.5, 2, 40), IN_R(0, 0, 0, 0)},
     .dtypes = FLOAT_DOUBLE, .tol = 20},
    {"FusedBatchNormGradV3", "parallel NCHW", 6,
     {IN_R(4, -1, 1, 4, 40, 20, 20), IN_R(4, -3, 3, 4, 40, 20, 20), IN_R(1, 0.5, 2, 40), IN_R(1, -1, 1, 40),
      IN_R(1, 0.5, 2, 40), IN_R(0, 0, 0, 0)},
     .n_attrs = 1, .attrs = {NCHW}, .dtypes = FLOAT_DOUBLE, .tol = 20},
    {0},
};

#define INV TFC_INVALID_ARGUMENT

const bad_case bad_cases_nn[] = {
    /* activations: dtypes outside T's set, mismatched *Grad shapes */
    {"Elu", "int32", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_INT32, .code = INV, .expect = {"Elu", "int32"}},
    {"Softplus", "bool", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_BOOL, .code = INV, .expect = {"Softplus", "bool"}},
    {"LeakyRelu", "int64", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_INT64, .code = INV, .expect = {"LeakyRelu", "int64"}},
    {"Relu", "bool", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_BOOL, .code = INV, .expect = {"Relu", "bool"}},
    {"Relu6", "bool", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_BOOL, .code = INV, .expect = {"Relu6", "bool"}},
    {"Selu", "int16", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_INT16, .code = INV, .expect = {"Selu", "int16"}},
    {"Softsign", "uint8", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_UINT8, .code = INV, .expect = {"Softsign", "uint8"}},
    {"Elu", "two inputs", 2, {IN_R(1, -1, 1, 3), IN_R(1, -1, 1, 3)}, .code = INV, .expect = {"Elu"}},
    {"LeakyRelu", "alpha not a float", 1, {IN_R(1, -1, 1, 3)}, .n_attrs = 1, .attrs = {A_S("alpha", "x")},
     .code = INV, .expect = {"LeakyRelu", "alpha"}},
    {"ReluGrad", "shape mismatch", 2, {IN_R(1, -1, 1, 2), IN_R(1, -1, 1, 3)}, .code = INV,
     .expect = {"ReluGrad", "must have the same size and shape", "[2]", "[3]"}},
    {"Relu6Grad", "shape mismatch", 2, {IN_R(2, -1, 1, 2, 3), IN_R(2, -1, 1, 3, 2)}, .code = INV,
     .expect = {"Relu6Grad", "[2,3]", "[3,2]"}},
    {"LeakyReluGrad", "rank mismatch", 2, {IN_R(1, -1, 1, 3), IN_R(0, -1, 1, 0)}, .code = INV,
     .expect = {"LeakyReluGrad", "[3]", "[]"}},
    {"EluGrad", "shape mismatch", 2, {IN_R(1, -1, 1, 4), IN_R(1, -1, 1, 3)}, .code = INV, .expect = {"EluGrad", "[4]"}},
    {"SeluGrad", "shape mismatch", 2, {IN_R(1, -1, 1, 4), IN_R(1, -1, 1, 3)}, .code = INV, .expect = {"SeluGrad", "[4]"}},
    {"SoftplusGrad", "shape mismatch", 2, {IN_R(1, -1, 1, 4), IN_R(2, -1, 1, 4, 1)}, .code = INV,
     .expect = {"SoftplusGrad", "[4,1]"}},
    {"SoftsignGrad", "dtype mismatch", 2, {IN_R(1, -1, 1, 3), IN_F32(1, -1, 1, 3)}, .dtype = TFC_DOUBLE, .code = INV,
     .expect = {"SoftsignGrad"}},
    {"SoftsignGrad", "wrong input count", 1, {IN_R(1, -1, 1, 3)}, .code = INV, .expect = {"SoftsignGrad"}},

    /* BiasAdd */
    {"BiasAdd", "rank 1 value", 2, {IN_R(1, -1, 1, 3), IN_R(1, -1, 1, 3)}, .code = INV,
     .expect = {"BiasAdd", "Input tensor must be at least 2D", "[3]"}},
    {"BiasAdd", "rank 2 bias", 2, {IN_R(2, -1, 1, 2, 3), IN_R(2, -1, 1, 1, 3)}, .code = INV,
     .expect = {"BiasAdd", "Biases must be 1D", "[1,3]"}},
    {"BiasAdd", "bias size", 2, {IN_R(2, -1, 1, 2, 3), IN_R(1, -1, 1, 4)}, .code = INV,
     .expect = {"BiasAdd", "Must provide as many biases", "[4]", "[2,3]"}},
    {"BiasAdd", "bias size NCHW", 2, {IN_R(4, -1, 1, 2, 3, 4, 5), IN_R(1, -1, 1, 5)}, .n_attrs = 1, .attrs = {NCHW},
     .code = INV, .expect = {"BiasAdd", "[5]", "[2,3,4,5]"}},
    {"BiasAdd", "bad data_format", 2, {IN_R(2, -1, 1, 2, 3), IN_R(1, -1, 1, 3)}, .n_attrs = 1,
     .attrs = {A_S("data_format", "NCDHW")}, .code = INV, .expect = {"BiasAdd", "data_format", "NCDHW"}},
    {"BiasAdd", "bool", 2, {IN_R(2, -1, 1, 2, 3), IN_R(1, -1, 1, 3)}, .dtype = TFC_BOOL, .code = INV,
     .expect = {"BiasAdd", "bool"}},
    {"BiasAddGrad", "rank 1", 1, {IN_R(1, -1, 1, 3)}, .code = INV,
     .expect = {"BiasAddGrad", "Input tensor must be at least 2D", "[3]"}},
    {"BiasAddGrad", "bad data_format", 1, {IN_R(2, -1, 1, 2, 3)}, .n_attrs = 1, .attrs = {A_S("data_format", "HWNC")},
     .code = INV, .expect = {"BiasAddGrad", "data_format", "HWNC"}},

    /* Softmax, LogSoftmax */
    {"Softmax", "rank 0", 1, {IN_R(0, -1, 1, 0)}, .code = INV, .expect = {"Softmax", "logits must have >= 1 dimension", "[]"}},
    {"LogSoftmax", "int64", 1, {IN_R(2, -1, 1, 2, 3)}, .dtype = TFC_INT64, .code = INV, .expect = {"LogSoftmax", "int64"}},
    {"LogSoftmax", "rank 0", 1, {IN_R(0, -1, 1, 0)}, .code = INV, .expect = {"LogSoftmax", ">= 1 dimension"}},
    {"Softmax", "int32", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_INT32, .code = INV, .expect = {"Softmax", "int32"}},

    /* SoftmaxCrossEntropyWithLogits */
    {"SoftmaxCrossEntropyWithLogits", "rank 1", 2, {IN_R(1, -1, 1, 3), IN_R(1, 0, 1, 3)}, .code = INV,
     .expect = {"SoftmaxCrossEntropyWithLogits", "2-dimensional", "[3]"}},
    {"SoftmaxCrossEntropyWithLogits", "rank 3", 2, {IN_R(3, -1, 1, 2, 2, 3), IN_R(3, 0, 1, 2, 2, 3)}, .code = INV,
     .expect = {"SoftmaxCrossEntropyWithLogits", "broadcasted to be 2-dimensional", "[2,2,3]"}},
    {"SoftmaxCrossEntropyWithLogits", "classes mismatch", 2, {IN_R(2, -1, 1, 2, 3), IN_R(2, 0, 1, 2, 4)}, .code = INV,
     .expect = {"SoftmaxCrossEntropyWithLogits", "must be broadcastable", "logits_size=[2,3]", "labels_size=[2,4]"}},
    {"SoftmaxCrossEntropyWithLogits", "dtype mismatch", 2, {IN_R(2, -1, 1, 2, 3), IN_F32(2, 0, 1, 2, 3)},
     .dtype = TFC_DOUBLE, .code = INV, .expect = {"SoftmaxCrossEntropyWithLogits", "float32"}},

    /* SparseSoftmaxCrossEntropyWithLogits */
    {"SparseSoftmaxCrossEntropyWithLogits", "label out of range", 2, {IN_R(2, -1, 1, 3, 10), IN_LAB(TFC_INT32, 3, 1, 12, 3)},
     .code = INV,
     .expect = {"SparseSoftmaxCrossEntropyWithLogits",
                "Received a label value of 12 which is outside the valid range of [0, 10)", "Label values: 1 12 3"}},
    {"SparseSoftmaxCrossEntropyWithLogits", "negative label", 2, {IN_R(2, -1, 1, 3, 10), IN_LAB(TFC_INT64, 3, 1, -1, 3)},
     .code = INV, .expect = {"Received a label value of -1 which is outside the valid range of [0, 10)"}},
    {"SparseSoftmaxCrossEntropyWithLogits", "logits rank 1", 2, {IN_R(1, -1, 1, 3), IN_LAB(TFC_INT32, 3, 1, 1, 1)},
     .code = INV, .expect = {"SparseSoftmaxCrossEntropyWithLogits", "logits must be 2-D", "[3]"}},
    {"SparseSoftmaxCrossEntropyWithLogits", "labels rank 2", 2,
     {IN_R(2, -1, 1, 3, 4), {.dtype = TFC_INT32, .rank = 2, .dims = {3, 1}, .n_vals = 3, .vals = {0, 1, 2}}},
     .code = INV, .expect = {"labels must be 1-D", "[3,1]"}},
    {"SparseSoftmaxCrossEntropyWithLogits", "batch mismatch", 2, {IN_R(2, -1, 1, 3, 4), IN_LAB(TFC_INT32, 2, 1, 1)},
     .code = INV, .expect = {"must have the same first dimension", "[3,4]", "[2]"}},
    {"SparseSoftmaxCrossEntropyWithLogits", "no classes", 2, {IN_R(2, -1, 1, 3, 0), IN_LAB(TFC_INT32, 3, 0, 0, 0)},
     .code = INV, .expect = {"Must have at least one class", "[3,0]"}},
    {"SparseSoftmaxCrossEntropyWithLogits", "float labels", 2, {IN_R(2, -1, 1, 3, 4), IN_R(1, 0, 1, 3)}, .code = INV,
     .expect = {"SparseSoftmaxCrossEntropyWithLogits", "float32"}},

    /* L2Loss */
    {"L2Loss", "no input", 0, {{0}}, .code = INV, .expect = {"L2Loss"}},
    {"L2Loss", "int32", 1, {IN_R(1, -1, 1, 3)}, .dtype = TFC_INT32, .code = INV, .expect = {"L2Loss", "int32"}},

    /* FusedBatchNormV3 */
    {"FusedBatchNormV3", "rank 3", 5,
     {IN_R(3, -1, 1, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3)}, .code = INV,
     .expect = {"FusedBatchNormV3", "4 or 5-dimensional", "[2,2,3]"}},
    {"FusedBatchNormV3", "scale size", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 4), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3)}, .code = INV,
     .expect = {"FusedBatchNormV3", "scale must have the same number of elements as the channels of x, got 4 and 3"}},
    {"FusedBatchNormV3", "offset size NCHW", 5,
     {IN_R(4, -1, 1, 2, 3, 2, 2), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 2), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3)},
     .n_attrs = 1, .attrs = {NCHW}, .code = INV, .expect = {"offset must have the same number", "got 2 and 3"}},
    {"FusedBatchNormV3", "scale rank 2", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(2, 0, 1, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3)},
     .code = INV, .expect = {"scale must be 1-dimensional", "[1,3]"}},
    {"FusedBatchNormV3", "inference mean size", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 4), IN_R(1, 0, 1, 3)},
     .n_attrs = 1, .attrs = {A_B("is_training", false)}, .code = INV,
     .expect = {"When is_training=false, mean must have the same number of elements as the channels of x, got 4 and 3"}},
    {"FusedBatchNormV3", "inference variance size", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 0)},
     .n_attrs = 1, .attrs = {A_B("is_training", false)}, .code = INV,
     .expect = {"When is_training=false, variance must have", "got 0 and 3"}},
    {"FusedBatchNormV3", "moving average mean size", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 0), IN_R(1, 0, 1, 0)},
     .n_attrs = 1, .attrs = {A_F("exponential_avg_factor", 0.5)}, .code = INV,
     .expect = {"When exponential_avg_factor != 1, mean must have", "got 0 and 3"}},
    {"FusedBatchNormV3", "bad data_format", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3)},
     .n_attrs = 1, .attrs = {A_S("data_format", "CHWN")}, .code = INV, .expect = {"FusedBatchNormV3", "CHWN"}},
    {"FusedBatchNormV3", "int32 x", 5,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_F32(1, 0, 1, 3), IN_F32(1, 0, 1, 3), IN_F32(1, 0, 1, 3), IN_F32(1, 0, 1, 3)},
     .dtype = TFC_INT32, .code = INV, .expect = {"FusedBatchNormV3", "int32"}},

    /* FusedBatchNormGradV3 */
    {"FusedBatchNormGradV3", "rank 2", 6,
     {IN_R(2, -1, 1, 2, 3), IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3),
      IN_R(0, 0, 0, 0)},
     .code = INV, .expect = {"FusedBatchNormGradV3", "y_backprop must be 4 or 5-dimensional", "[2,3]"}},
    {"FusedBatchNormGradV3", "shape mismatch", 6,
     {IN_R(4, -1, 1, 2, 2, 1, 3), IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3),
      IN_R(0, 0, 0, 0)},
     .code = INV,
     .expect = {"x and y_backprop must have same shape, but x has shape [2,2,2,3] and y_backprop has shape [2,2,1,3]"}},
    {"FusedBatchNormGradV3", "scale size", 6,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 4), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3),
      IN_R(0, 0, 0, 0)},
     .code = INV, .expect = {"scale must have the same number of elements as the channels of x, got 4 and 3"}},
    {"FusedBatchNormGradV3", "reserve_space_2 size", 6,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 3), IN_R(1, 0, 1, 5),
      IN_R(0, 0, 0, 0)},
     .code = INV, .expect = {"reserve_space_2 must have the same number of elements", "got 5 and 3"}},
    {"FusedBatchNormGradV3", "reserve_space_1 rank", 6,
     {IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(4, -1, 1, 2, 2, 2, 3), IN_R(1, 0, 1, 3), IN_R(2, 0, 1, 1, 3), IN_R(1, 0, 1, 3),
      IN_R(0, 0, 0, 0)},
     .code = INV, .expect = {"reserve_space_1 must be 1-dimensional", "[1,3]"}},
    {0},
};
