/* Op test cases: the fused ops _FusedConv2D and _FusedMatMul (src/ops/fused_ops.c). Every supported fusion
 * (BiasAdd, then Relu, Relu6, Elu, LeakyRelu with a positive and a negative slope), and shapes that reach each
 * float32 path and its edges: the implicit-GEMM convolution with partial tiles, full 12x32 tiles and masked
 * column tails, several k groups per tile; the Winograd convolution; im2col (width dilation, groups), the pointwise and whole-input
 * GEMMs, NCHW staging; products with several k blocks and a product split along k across threads; empty
 * inputs. The float64 reference runs OpenBLAS and a scalar epilogue. _FusedBiasAddGrad (their gradient's
 * activation gradient and bias gradient in one pass) with every activation, rows past one chunk. */
#include "op_test.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define I4(...) ((const int64_t[]){__VA_ARGS__})
#define STRIDES(...) TFC_ATTR_INTS("strides", I4(__VA_ARGS__), 4)
#define DILATIONS(...) TFC_ATTR_INTS("dilations", I4(__VA_ARGS__), 4)
#define EXPLICIT(...) TFC_ATTR_INTS("explicit_paddings", I4(__VA_ARGS__), 8)
#define PAD(p) TFC_ATTR_S("padding", p)
#define NCHW TFC_ATTR_S("data_format", "NCHW")
#define S1 STRIDES(1, 1, 1, 1)
#define S2 STRIDES(1, 2, 2, 1)
#define NUM(n) TFC_ATTR_I("num_args", n)
#define ALPHA(a) TFC_ATTR_F("leakyrelu_alpha", a)
#define TA TFC_ATTR_B("transpose_a", true)
#define TB TFC_ATTR_B("transpose_b", true)
#define OPS(...)                                                                                              \
    ((tfc_attr){.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING,                                            \
                .n = (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)),                 \
                .v.strs = (const char *const[]){__VA_ARGS__}})
#define OPS0 ((tfc_attr){.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = 0})
#define BIAS OPS("BiasAdd")
#define RELU OPS("BiasAdd", "Relu")
#define RELU6 OPS("BiasAdd", "Relu6")
#define ELU OPS("BiasAdd", "Elu")
#define LEAKY OPS("BiasAdd", "LeakyRelu")
#define IN_R(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
#define B(n) IN_R(1, -1, 1, n)
#define ACT(a) TFC_ATTR_S("activation", a)

static const tfc_dtype F32_F64[] = {TFC_FLOAT, TFC_DOUBLE, 0};

const op_case op_cases_fused[] = {
    /* ---- _FusedConv2D: every fusion ---- */
    {"_FusedConv2D", "BiasAdd, Relu, 3x3 SAME odd 5x5", 3, {IN_T(4, 2, 5, 5, 3), IN_T(4, 3, 3, 3, 4), B(4)}, 4,
     {S1, PAD("SAME"), NUM(1), RELU}, .grad = true},
    {"_FusedConv2D", "BiasAdd only, VALID 2x3", 3, {IN_T(4, 1, 6, 5, 2), IN_T(4, 2, 3, 2, 5), B(5)}, 4,
     {S1, PAD("VALID"), NUM(1), BIAS}, .grad = true},
    {"_FusedConv2D", "Relu6 with outputs past 6", 3,
     {IN_R(4, -4, 4, 2, 4, 4, 4), IN_R(4, -1, 1, 3, 3, 4, 6), IN_R(1, -3, 3, 6)}, 4, {S1, PAD("SAME"), NUM(1), RELU6},
     .grad = true},
    {"_FusedConv2D", "Elu", 3, {IN_T(4, 2, 4, 5, 3), IN_T(4, 3, 2, 3, 3), B(3)}, 4, {S1, PAD("SAME"), NUM(1), ELU},
     .grad = true},
    {"_FusedConv2D", "LeakyRelu default slope", 3, {IN_T(4, 1, 5, 4, 2), IN_T(4, 2, 2, 2, 3), B(3)}, 4,
     {S1, PAD("VALID"), NUM(1), LEAKY}, .grad = true},
    {"_FusedConv2D", "LeakyRelu slope 1.5", 3, {IN_T(4, 1, 5, 4, 2), IN_T(4, 2, 2, 2, 3), B(3)}, 5,
     {S1, PAD("SAME"), NUM(1), LEAKY, ALPHA(1.5)}, .grad = true},
    {"_FusedConv2D", "LeakyRelu negative slope (gradient recomputes the features)", 3,
     {IN_T(4, 1, 4, 4, 2), IN_T(4, 3, 3, 2, 3), B(3)}, 5, {S1, PAD("SAME"), NUM(1), LEAKY, ALPHA(-0.5)}, .grad = true},
    /* ---- _FusedConv2D: geometry and paths ---- */
    {"_FusedConv2D", "stride 2 SAME odd 7x5", 3, {IN_T(4, 2, 7, 5, 2), IN_T(4, 2, 3, 2, 2), B(2)}, 4,
     {S2, PAD("SAME"), NUM(1), RELU}, .grad = true},
    {"_FusedConv2D", "NCHW SAME stride 2", 3, {IN_T(4, 2, 3, 5, 4), IN_T(4, 3, 3, 3, 2), B(2)}, 5,
     {STRIDES(1, 1, 2, 2), PAD("SAME"), NCHW, NUM(1), RELU}, .grad = true},
    {"_FusedConv2D", "width dilation 2 (im2col)", 3, {IN_T(4, 1, 7, 6, 2), IN_T(4, 2, 3, 2, 3), B(3)}, 5,
     {S1, PAD("VALID"), DILATIONS(1, 2, 2, 1), NUM(1), RELU}, .grad = true},
    {"_FusedConv2D", "grouped (2 groups, im2col)", 3, {IN_T(4, 1, 5, 5, 4), IN_T(4, 3, 3, 2, 6), B(6)}, 4,
     {S1, PAD("SAME"), NUM(1), ELU}, .grad = true},
    {"_FusedConv2D", "EXPLICIT padding, stride (2, 1)", 3, {IN_T(4, 1, 5, 4, 2), IN_T(4, 3, 2, 2, 2), B(2)}, 5,
     {STRIDES(1, 2, 1, 1), PAD("EXPLICIT"), EXPLICIT(0, 0, 1, 2, 0, 1, 0, 0), NUM(1), RELU}, .grad = true},
    {"_FusedConv2D", "pointwise 1x1 (one GEMM)", 3, {IN_T(4, 2, 4, 3, 5), IN_T(4, 1, 1, 5, 3), B(3)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU6}, .grad = true},
    {"_FusedConv2D", "filter covers the input (one GEMM)", 3, {IN_T(4, 3, 3, 4, 2), IN_T(4, 3, 4, 2, 5), B(5)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU}, .grad = true},
    {"_FusedConv2D", "full tiles: 48 pixels x 32 channels", 3, {IN_T(4, 3, 6, 6, 8), IN_T(4, 3, 3, 8, 32), B(32)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU}},
    {"_FusedConv2D", "masked column tail: 20 channels", 3, {IN_T(4, 2, 7, 7, 5), IN_T(4, 3, 3, 5, 20), B(20)}, 4,
     {S1, PAD("SAME"), NUM(1), LEAKY}},
    {"_FusedConv2D", "17 channels, Elu", 3, {IN_T(4, 2, 6, 7, 3), IN_T(4, 3, 3, 3, 17), B(17)}, 4,
     {S1, PAD("SAME"), NUM(1), ELU}},
    /* the Winograd path (3x3 stride 1, >= 16 channels each way, >= 32 2x2 tiles): bias and ReLU in its output
     * transform, the other activations in a pass after it */
    {"_FusedConv2D", "Winograd: Relu, SAME odd 11x13, 17 -> 20", 3, {IN_T(4, 1, 11, 13, 17), IN_T(4, 3, 3, 17, 20), B(20)},
     4, {S1, PAD("SAME"), NUM(1), RELU}},
    {"_FusedConv2D", "Winograd: BiasAdd only, VALID 9x13", 3, {IN_T(4, 2, 9, 13, 18), IN_T(4, 3, 3, 18, 24), B(24)}, 4,
     {S1, PAD("VALID"), NUM(1), BIAS}},
    {"_FusedConv2D", "Winograd: Relu6 with outputs past 6", 3,
     {IN_R(4, -2, 2, 1, 12, 10, 16), IN_R(4, -1, 1, 3, 3, 16, 18), IN_R(1, -3, 3, 18)}, 4, {S1, PAD("SAME"), NUM(1), RELU6}},
    {"_FusedConv2D", "Winograd: Elu, NCHW", 3, {IN_T(4, 2, 19, 10, 9), IN_T(4, 3, 3, 19, 33), B(33)}, 5,
     {S1, PAD("SAME"), NCHW, NUM(1), ELU}},
    {"_FusedConv2D", "Winograd: LeakyRelu slope 0.3", 3, {IN_T(4, 2, 9, 13, 18), IN_T(4, 3, 3, 18, 24), B(24)}, 5,
     {S1, PAD("VALID"), NUM(1), LEAKY, ALPHA(0.3)}},
    {"_FusedConv2D", "long filter rows: k in two groups", 3, {IN_T(4, 1, 3, 3, 550), IN_T(4, 2, 2, 550, 5), B(5)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU}, .dtypes = F32_F64},
    {"_FusedConv2D", "the demo's first layer, batch 1", 3, {IN_T(4, 1, 28, 28, 1), IN_T(4, 3, 3, 1, 32), B(32)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU}},
    {"_FusedConv2D", "the demo's second layer, batch 2", 3, {IN_T(4, 2, 13, 13, 32), IN_T(4, 3, 3, 32, 64), B(64)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU}, .dtypes = F32_F64},
    {"_FusedConv2D", "empty batch", 3, {IN_T(4, 0, 5, 5, 3), IN_T(4, 3, 3, 3, 2), B(2)}, 4,
     {S1, PAD("SAME"), NUM(1), RELU}},
    {"_FusedConv2D", "output width 0", 3, {IN_T(4, 1, 5, 2, 1), IN_T(4, 2, 3, 1, 2), B(2)}, 4,
     {S1, PAD("VALID"), NUM(1), RELU}},

    /* ---- _FusedMatMul ---- */
    {"_FusedMatMul", "BiasAdd, Relu", 3, {IN_T(2, 4, 5), IN_T(2, 5, 3), B(3)}, 1, {RELU}, .grad = true},
    {"_FusedMatMul", "BiasAdd only, transpose_a", 3, {IN_T(2, 5, 4), IN_T(2, 5, 3), B(3)}, 2, {TA, BIAS}, .grad = true},
    {"_FusedMatMul", "Relu6, transpose_b", 3, {IN_R(2, -3, 3, 4, 6), IN_R(2, -2, 2, 7, 6), IN_R(1, -3, 3, 7)}, 2,
     {TB, RELU6}, .grad = true},
    {"_FusedMatMul", "Elu, both transposed", 3, {IN_T(2, 5, 3), IN_T(2, 6, 5), B(6)}, 3, {TA, TB, ELU}, .grad = true},
    {"_FusedMatMul", "LeakyRelu slope 0.1", 3, {IN_T(2, 3, 4), IN_T(2, 4, 5), B(5)}, 2, {LEAKY, ALPHA(0.1)},
     .grad = true},
    {"_FusedMatMul", "LeakyRelu negative slope", 3, {IN_T(2, 3, 4), IN_T(2, 4, 5), B(5)}, 2, {LEAKY, ALPHA(-0.3)},
     .grad = true},
    {"_FusedMatMul", "a Dense layer: 10 units", 3, {IN_T(2, 64, 100), IN_T(2, 100, 10), B(10)}, 1, {RELU}},
    {"_FusedMatMul", "33 columns, 29 rows", 3, {IN_T(2, 29, 40), IN_T(2, 40, 33), B(33)}, 1, {ELU}},
    {"_FusedMatMul", "k in three blocks", 3, {IN_T(2, 5, 3000), IN_T(2, 3000, 20), B(20)}, 1, {RELU}, .tol = 4},
    {"_FusedMatMul", "split along k across threads", 3, {IN_T(2, 32, 2048), IN_T(2, 2048, 32), B(32)}, 1, {RELU},
     .tol = 4},
    {"_FusedMatMul", "k = 0: the activation of the bias", 3, {IN_T(2, 3, 0), IN_T(2, 0, 4), B(4)}, 1, {RELU}},
    {"_FusedMatMul", "no rows", 3, {IN_T(2, 0, 5), IN_T(2, 5, 3), B(3)}, 1, {RELU}},

    /* ---- _FusedBiasAddGrad: (<activation>Grad, BiasAddGrad) ---- */
    {"_FusedBiasAddGrad", "Relu", 2, {IN_T(2, 3, 4), IN_R(2, -2, 2, 3, 4)}, 1, {ACT("Relu")}, .grad = true},
    {"_FusedBiasAddGrad", "Relu6, 4-d", 2, {IN_T(4, 2, 3, 4, 5), IN_R(4, -2, 8, 2, 3, 4, 5)}, 1, {ACT("Relu6")},
     .grad = true},
    {"_FusedBiasAddGrad", "Elu (from its outputs)", 2, {IN_T(3, 2, 3, 4), IN_R(3, -0.9, 2, 2, 3, 4)}, 1, {ACT("Elu")},
     .grad = true},
    {"_FusedBiasAddGrad", "LeakyRelu slope 0.3", 2, {IN_T(2, 5, 3), IN_R(2, -2, 2, 5, 3)}, 2,
     {ACT("LeakyRelu"), TFC_ATTR_F("alpha", 0.3)}, .grad = true},
    {"_FusedBiasAddGrad", "many rows: chunks across threads, 64-row blocks", 2,
     {IN_T(2, 1000, 64), IN_R(2, -2, 2, 1000, 64)}, 1, {ACT("Relu")}, .tol = 4},
    {"_FusedBiasAddGrad", "odd channels", 2, {IN_T(4, 3, 7, 5, 17), IN_R(4, -0.9, 2, 3, 7, 5, 17)}, 1, {ACT("Elu")}},
    {"_FusedBiasAddGrad", "no rows: zero bias gradient", 2, {IN_T(2, 0, 4), IN_T(2, 0, 4)}, 1, {ACT("Relu")}},
    {"_FusedBiasAddGrad", "no channels", 2, {IN_T(2, 3, 0), IN_T(2, 3, 0)}, 1, {ACT("Relu6")}},
    {0},
};

#define BAD(op_, label_, code_, n_in_, ins, n_attrs_, attrs_, ...) \
    {op_, label_, n_in_, ins, n_attrs_, attrs_, .code = code_, .expect = {__VA_ARGS__, NULL}}
#define BADT(dt_, op_, label_, code_, n_in_, ins, n_attrs_, attrs_, ...) \
    {op_, label_, n_in_, ins, n_attrs_, attrs_, .dtype = dt_, .code = code_, .expect = {__VA_ARGS__, NULL}}
#define INS(...) {__VA_ARGS__}
#define ATTRS(...) {__VA_ARGS__}
#define X IN_T(4, 2, 5, 5, 3)
#define F IN_T(4, 3, 3, 3, 4)
#define CONV_IN INS(X, F, B(4))
#define INV TFC_INVALID_ARGUMENT
#define UNIMPL TFC_UNIMPLEMENTED

const bad_case bad_cases_fused[] = {
    /* _FusedConv2D: fused_ops and args */
    BAD("_FusedConv2D", "fused_ops empty", INV, 3, CONV_IN, 4, ATTRS(S1, PAD("SAME"), NUM(1), OPS0), "_FusedConv2D",
        "fused_ops", "[]"),
    BAD("_FusedConv2D", "activation without BiasAdd", UNIMPL, 3, CONV_IN, 4, ATTRS(S1, PAD("SAME"), NUM(1), OPS("Relu")),
        "_FusedConv2D", "Fusion is not implemented", "[Relu]"),
    BAD("_FusedConv2D", "unsupported activation", UNIMPL, 3, CONV_IN, 4,
        ATTRS(S1, PAD("SAME"), NUM(1), OPS("BiasAdd", "Sigmoid")), "_FusedConv2D", "[BiasAdd, Sigmoid]"),
    BAD("_FusedConv2D", "batch norm fusion", UNIMPL, 3, CONV_IN, 4,
        ATTRS(S1, PAD("SAME"), NUM(1), OPS("FusedBatchNorm", "Relu")), "_FusedConv2D", "[FusedBatchNorm, Relu]"),
    BAD("_FusedConv2D", "two activations", UNIMPL, 3, CONV_IN, 4,
        ATTRS(S1, PAD("SAME"), NUM(1), OPS("BiasAdd", "Relu", "Relu")), "_FusedConv2D", "[BiasAdd, Relu, Relu]"),
    BAD("_FusedConv2D", "num_args 2", INV, 4, INS(X, F, B(4), B(4)), 4, ATTRS(S1, PAD("SAME"), NUM(2), RELU),
        "_FusedConv2D", "num_args=2"),
    BAD("_FusedConv2D", "num_args 1 with two args", INV, 4, INS(X, F, B(4), B(4)), 4, ATTRS(S1, PAD("SAME"), NUM(1), RELU),
        "_FusedConv2D", "num_args=1 but 2 args given"),
    BAD("_FusedConv2D", "num_args missing", INV, 3, CONV_IN, 3, ATTRS(S1, PAD("SAME"), RELU), "_FusedConv2D",
        "num_args"),
    BAD("_FusedConv2D", "no bias", INV, 2, INS(X, F), 4, ATTRS(S1, PAD("SAME"), NUM(1), RELU), "_FusedConv2D", "TArgs"),
    BAD("_FusedConv2D", "bias of rank 2", INV, 3, INS(X, F, IN_T(2, 1, 4)), 4, ATTRS(S1, PAD("SAME"), NUM(1), RELU),
        "_FusedConv2D", "must be 1-D", "[1,4]"),
    BAD("_FusedConv2D", "bias size", INV, 3, INS(X, F, B(3)), 4, ATTRS(S1, PAD("SAME"), NUM(1), RELU), "_FusedConv2D",
        "has 3 values", "4 channels"),
    BAD("_FusedConv2D", "bias dtype", INV, 3, INS(X, F, {.dtype = TFC_DOUBLE, .rank = 1, .dims = {4}}), 4,
        ATTRS(S1, PAD("SAME"), NUM(1), RELU), "_FusedConv2D", "float32", "float64"),
    BAD("_FusedConv2D", "host args", UNIMPL, 4, INS(X, F, B(4), {.dtype = TFC_FLOAT, .rank = 0}), 5,
        ATTRS(S1, PAD("SAME"), NUM(1), RELU, TFC_ATTR_I("num_host_args", 1)), "_FusedConv2D", "num_host_args=1"),
    /* _FusedConv2D: the convolution */
    BAD("_FusedConv2D", "input rank 3", INV, 3, INS(IN_T(3, 5, 5, 3), F, B(4)), 4, ATTRS(S1, PAD("SAME"), NUM(1), RELU),
        "_FusedConv2D", "input must be 4-dimensional", "[5,5,3]"),
    BAD("_FusedConv2D", "channel mismatch", INV, 3, INS(IN_T(4, 8, 28, 28, 3), IN_T(4, 3, 3, 4, 32), B(32)), 4,
        ATTRS(S1, PAD("SAME"), NUM(1), RELU), "_FusedConv2D: input depth 3 must equal filter in_channels 4"),
    BAD("_FusedConv2D", "zero stride", INV, 3, CONV_IN, 4, ATTRS(STRIDES(1, 0, 1, 1), PAD("SAME"), NUM(1), RELU),
        "_FusedConv2D", "[1,0,1,1]"),
    BAD("_FusedConv2D", "bad padding", INV, 3, CONV_IN, 4, ATTRS(S1, PAD("FULL"), NUM(1), RELU), "_FusedConv2D",
        "padding", "FULL"),
    BAD("_FusedConv2D", "filter_format OIHW", UNIMPL, 3, CONV_IN, 5,
        ATTRS(S1, PAD("SAME"), NUM(1), RELU, TFC_ATTR_S("filter_format", "OIHW")), "_FusedConv2D", "OIHW"),
    BAD("_FusedConv2D", "NCHW_VECT_C", UNIMPL, 3, CONV_IN, 5,
        ATTRS(S1, PAD("SAME"), NUM(1), RELU, TFC_ATTR_S("data_format", "NCHW_VECT_C")), "_FusedConv2D", "NCHW_VECT_C"),
    BADT(TFC_INT32, "_FusedConv2D", "int32", INV, 3, CONV_IN, 4, ATTRS(S1, PAD("SAME"), NUM(1), RELU), "_FusedConv2D",
         "int32"),
    BAD("_FusedConv2D", "dilation overflows the effective filter", INV, 3, CONV_IN, 5,
        ATTRS(S1, PAD("VALID"), DILATIONS(1, 4611686018427387904LL, 1, 1), NUM(1), RELU), "_FusedConv2D", "overflows"),
    /* _FusedMatMul */
    BAD("_FusedMatMul", "a of rank 3", INV, 3, INS(IN_T(3, 2, 3, 4), IN_T(2, 4, 5), B(5)), 1, ATTRS(RELU), "_FusedMatMul",
        "In[0] is not a matrix", "[2,3,4]"),
    BAD("_FusedMatMul", "size-incompatible", INV, 3, INS(IN_T(2, 3, 4), IN_T(2, 5, 6), B(6)), 1, ATTRS(RELU),
        "_FusedMatMul", "Matrix size-incompatible", "[3,4]"),
    BAD("_FusedMatMul", "bias size", INV, 3, INS(IN_T(2, 3, 4), IN_T(2, 4, 6), B(5)), 1, ATTRS(RELU), "_FusedMatMul",
        "has 5 values", "6 channels"),
    BAD("_FusedMatMul", "fused_ops empty", INV, 3, INS(IN_T(2, 3, 4), IN_T(2, 4, 6), B(6)), 1, ATTRS(OPS0),
        "_FusedMatMul", "fused_ops"),
    BAD("_FusedMatMul", "unsupported activation", UNIMPL, 3, INS(IN_T(2, 3, 4), IN_T(2, 4, 6), B(6)), 1,
        ATTRS(OPS("BiasAdd", "Tanh")), "_FusedMatMul", "[BiasAdd, Tanh]"),
    BAD("_FusedMatMul", "no args", INV, 2, INS(IN_T(2, 3, 4), IN_T(2, 4, 6)), 1, ATTRS(RELU), "_FusedMatMul",
        "num_args=0"),
    BAD("_FusedMatMul", "num_args 1 with two args", INV, 4, INS(IN_T(2, 3, 4), IN_T(2, 4, 6), B(6), B(6)), 2,
        ATTRS(NUM(1), RELU), "_FusedMatMul", "4 given; 3 expected", "args: num_args=1"),
    BADT(TFC_INT32, "_FusedMatMul", "int32", INV, 3, INS(IN_T(2, 3, 4), IN_T(2, 4, 6), B(6)), 1, ATTRS(RELU),
         "_FusedMatMul", "int32"),
    /* _FusedBiasAddGrad */
    BAD("_FusedBiasAddGrad", "rank 1", INV, 2, INS(IN_T(1, 4), IN_T(1, 4)), 1, ATTRS(ACT("Relu")), "_FusedBiasAddGrad",
        "at least 2D", "[4]"),
    BAD("_FusedBiasAddGrad", "shape mismatch", INV, 2, INS(IN_T(2, 3, 4), IN_T(2, 3, 5)), 1, ATTRS(ACT("Relu")),
        "_FusedBiasAddGrad", "[3,4]", "[3,5]"),
    BAD("_FusedBiasAddGrad", "unknown activation", INV, 2, INS(IN_T(2, 3, 4), IN_T(2, 3, 4)), 1, ATTRS(ACT("Tanh")),
        "_FusedBiasAddGrad", "activation", "Tanh"),
    BAD("_FusedBiasAddGrad", "activation missing", INV, 2, INS(IN_T(2, 3, 4), IN_T(2, 3, 4)), 0, ATTRS({0}),
        "_FusedBiasAddGrad", "activation"),
    BADT(TFC_HALF, "_FusedBiasAddGrad", "half", INV, 2, INS(IN_T(2, 3, 4), IN_T(2, 3, 4)), 1, ATTRS(ACT("Relu")),
         "_FusedBiasAddGrad", "float16"),
    {0},
};
