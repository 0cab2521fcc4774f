/* Op test cases: _TfcFusedConv2DMaxPool (src/ops/fused_pool_ops.c), tfc's inference fusion of _FusedConv2D
 * and MaxPool, against its float64 run (OpenBLAS convolution, scalar pool). Shapes reach each convolution
 * path under it (Winograd, implicit GEMM for one input channel, im2col for width dilation, the whole-input
 * GEMM), every activation, VALID pools that drop a last odd row and column, SAME and overlapping windows,
 * strided convolutions, batches cut into several slices (large images per example), and an empty batch. */
#include "op_test.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define I4(...) ((const int64_t[]){__VA_ARGS__})
#define STRIDES(...) TFC_ATTR_INTS("strides", I4(__VA_ARGS__), 4)
#define DIL(...) TFC_ATTR_INTS("dilations", I4(__VA_ARGS__), 4)
#define PAD(p) TFC_ATTR_S("padding", p)
#define S1 STRIDES(1, 1, 1, 1)
#define KS(h, w) TFC_ATTR_INTS("ksize", I4(1, h, w, 1), 4)
#define PS(h, w) TFC_ATTR_INTS("pool_strides", I4(1, h, w, 1), 4)
#define PPAD(p) TFC_ATTR_S("pool_padding", p)
#define P22 KS(2, 2), PS(2, 2), PPAD("VALID")
#define ALPHA(a) TFC_ATTR_F("leakyrelu_alpha", a)
#define OPS(...)                                                                                              \
    ((tfc_attr){.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING,                                            \
                .n = (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *)),                 \
                .v.strs = (const char *const[]){__VA_ARGS__}})
#define BIAS OPS("BiasAdd")
#define RELU OPS("BiasAdd", "Relu")
#define IN_R(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
#define B(n) IN_R(1, -1, 1, n)

#define OP "_TfcFusedConv2DMaxPool"
#define TRAIN "_TfcFusedConv2DMaxPoolTrain"
#define RBG "_TfcMaxPoolReluBiasGrad"
#define FG "_TfcFusedConv2DMaxPoolFilterGrad"
#define AM "_TfcFusedConv2DMaxPoolArgmax"
#define AMG "_TfcFusedConv2DMaxPoolArgmaxFilterGrad"
/* routing bytes: cell 0-3, bit 2 the cell's ReLU factor (from the "VALID" windows of the conv output only) */
#define CODES(...) {.dtype = TFC_UINT8, .rank = 4, .dims = {__VA_ARGS__}, .lo = 0, .hi = 7, .integer = true, .no_grad = true}
#define RBS(h, w) TFC_ATTR_INTS("strides", I4(1, h, w, 1), 4)
#define Y(...) {.rank = 4, .dims = {__VA_ARGS__}, .no_grad = true}
#define TIES(...) {.rank = 4, .dims = {__VA_ARGS__}, .lo = -2, .hi = 2, .integer = true, .no_grad = true}

const op_case op_cases_fused_pool[] = {
    {OP, "demo CNN layer 1: 28x28x1 -> 32, ReLU, 2x2 pool", 3, {IN_T(4, 2, 28, 28, 1), IN_T(4, 3, 3, 1, 32), B(32)}, 6,
     {S1, PAD("VALID"), RELU, P22}},
    {OP, "demo CNN layer 2 (Winograd): 13x13x32 -> 64, odd 11x11 output", 3,
     {IN_T(4, 3, 13, 13, 32), IN_T(4, 3, 3, 32, 64), B(64)}, 6, {S1, PAD("VALID"), RELU, P22}},
    {OP, "Winograd SAME, 17 -> 20 channels, batch 1", 3, {IN_T(4, 1, 14, 15, 17), IN_T(4, 3, 3, 17, 20), B(20)}, 6,
     {S1, PAD("SAME"), RELU, P22}},
    {OP, "bias only, channels not a multiple of 16", 3, {IN_T(4, 2, 9, 8, 3), IN_T(4, 3, 2, 3, 13), B(13)}, 6,
     {S1, PAD("SAME"), BIAS, P22}},
    {OP, "Relu6 with outputs past 6", 3, {IN_R(4, -4, 4, 2, 6, 6, 4), IN_R(4, -1, 1, 3, 3, 4, 6), IN_R(1, -3, 3, 6)},
     6, {S1, PAD("SAME"), OPS("BiasAdd", "Relu6"), P22}},
    {OP, "Elu", 3, {IN_T(4, 2, 7, 6, 3), IN_T(4, 3, 3, 3, 5), B(5)}, 6, {S1, PAD("SAME"), OPS("BiasAdd", "Elu"), P22}},
    {OP, "LeakyRelu slope -0.5", 3, {IN_T(4, 1, 6, 7, 2), IN_T(4, 2, 2, 2, 3), B(3)}, 7,
     {S1, PAD("VALID"), OPS("BiasAdd", "LeakyRelu"), ALPHA(-0.5), P22}},
    {OP, "SAME 3x3 pool, stride 2 (overlapping, clipped windows)", 3, {IN_T(4, 2, 9, 10, 4), IN_T(4, 3, 3, 4, 8), B(8)}, 6,
     {S1, PAD("SAME"), RELU, KS(3, 3), PS(2, 2), PPAD("SAME")}},
    {OP, "pool 3x2 stride (1, 2) VALID", 3, {IN_T(4, 2, 8, 9, 3), IN_T(4, 2, 2, 3, 4), B(4)}, 6,
     {S1, PAD("VALID"), RELU, KS(3, 2), PS(1, 2), PPAD("VALID")}},
    {OP, "conv stride 2 SAME", 3, {IN_T(4, 2, 11, 9, 3), IN_T(4, 3, 3, 3, 6), B(6)}, 6,
     {STRIDES(1, 2, 2, 1), PAD("SAME"), RELU, P22}},
    {OP, "width dilation 2 (im2col)", 3, {IN_T(4, 2, 9, 10, 2), IN_T(4, 2, 3, 2, 4), B(4)}, 7,
     {S1, PAD("VALID"), DIL(1, 2, 2, 1), RELU, P22}},
    {OP, "filter covers the input, 1x1 pool", 3, {IN_T(4, 3, 3, 4, 2), IN_T(4, 3, 4, 2, 5), B(5)}, 6,
     {S1, PAD("VALID"), RELU, KS(1, 1), PS(1, 1), PPAD("VALID")}},
    {OP, "several slices: 9 images of 24x24x32 outputs", 3, {IN_T(4, 9, 24, 24, 3), IN_T(4, 3, 3, 3, 32), B(32)}, 6,
     {S1, PAD("SAME"), RELU, P22}},
    {OP, "empty batch", 3, {IN_T(4, 0, 6, 6, 2), IN_T(4, 3, 3, 2, 4), B(4)}, 6, {S1, PAD("SAME"), RELU, P22}},
    /* _TfcFusedConv2DMaxPoolTrain: MaxPool of its 4th input (the convolution's output); its gradient (which
     * assumes that input is the convolution of the others) is checked against the layer-by-layer ops in
     * tests/unit/test_keras_conv_pool.c */
    {TRAIN, "2x2 VALID pool of the conv output", 4,
     {IN_T(4, 2, 8, 8, 3), IN_T(4, 3, 3, 3, 4), B(4), IN_T(4, 2, 6, 6, 4)}, 6, {S1, PAD("VALID"), RELU, P22}},
    {TRAIN, "gradient machinery only: finite differences cannot see the 4th input stand for the others "
            "(the values are checked in test_keras_conv_pool.c)", 4,
     {Y(2, 6, 6, 3), Y(3, 3, 3, 4), {.rank = 1, .dims = {4}, .no_grad = true}, Y(2, 4, 4, 4)}, 6,
     {S1, PAD("VALID"), RELU, P22}, .grad = true},
    {TRAIN, "SAME 3x3 pool stride 2, odd sizes, 17 channels", 4,
     {IN_T(4, 1, 9, 7, 2), IN_T(4, 3, 3, 2, 17), B(17), IN_T(4, 1, 9, 7, 17)}, 6,
     {S1, PAD("SAME"), RELU, KS(3, 3), PS(2, 2), PPAD("SAME")}},
    /* _TfcMaxPoolReluBiasGrad(y, pooled, dp): y in [-1, 1] (ReLU zero half the time); gradients in dp only
     * (y and pooled pick positions) */
    {RBG, "demo CNN layer 1: 26x26x32, 2x2 pool, 3 images (several chunks and blocks)", 3,
     {IN_T(4, 3, 26, 26, 32), IN_T(4, 3, 13, 13, 32), IN_T(4, 3, 13, 13, 32)}, 3, {KS(2, 2), RBS(2, 2), PAD("VALID")}},
    {RBG, "odd 7x9 VALID (last row and column dropped), 5 channels", 3,
     {Y(1, 7, 9, 5), Y(1, 3, 4, 5), IN_T(4, 1, 3, 4, 5)}, 3, {KS(2, 2), RBS(2, 2), PAD("VALID")}, .grad = true},
    {RBG, "SAME 2x2 stride 2 on odd sizes (clipped edge windows), 17 channels", 3,
     {Y(2, 5, 7, 17), Y(2, 3, 4, 17), IN_T(4, 2, 3, 4, 17)}, 3, {KS(2, 2), RBS(2, 2), PAD("SAME")}, .grad = true},
    {RBG, "SAME 3x3 stride 2: overlapping windows add", 3,
     {Y(2, 9, 10, 4), Y(2, 5, 5, 4), IN_T(4, 2, 5, 5, 4)}, 3, {KS(3, 3), RBS(2, 2), PAD("SAME")}, .grad = true},
    {RBG, "ties and zeros: integer y in [-2, 2], 3x3 stride 1", 3,
     {TIES(2, 8, 8, 20), Y(2, 6, 6, 20), IN_T(4, 2, 6, 6, 20)}, 3, {KS(3, 3), RBS(1, 1), PAD("VALID")}},
    {RBG, "ties, 2x2 SAME, batch 1, 33 channels", 3,
     {TIES(1, 7, 6, 33), Y(1, 4, 3, 33), IN_T(4, 1, 4, 3, 33)}, 3, {KS(2, 2), RBS(2, 2), PAD("SAME")}},
    {RBG, "pool 3x2 stride (1, 2)", 3, {Y(2, 8, 9, 3), Y(2, 6, 4, 3), IN_T(4, 2, 6, 4, 3)}, 3,
     {KS(3, 2), RBS(1, 2), PAD("VALID")}, .grad = true},
    {RBG, "stride 3 past a 2x2 window (uncovered rows and columns)", 3,
     {Y(1, 8, 8, 6), Y(1, 3, 3, 6), IN_T(4, 1, 3, 3, 6)}, 3, {KS(2, 2), RBS(3, 3), PAD("SAME")}},
    {RBG, "empty batch", 3, {Y(0, 4, 4, 3), Y(0, 2, 2, 3), IN_T(4, 0, 2, 2, 3)}, 3, {KS(2, 2), RBS(2, 2), PAD("VALID")}},
    /* _TfcFusedConv2DMaxPoolFilterGrad(x, f, y, pooled, dp): float32 (the fused per-tile path where it applies)
     * against float64 (the two-step form); y any values (only read), pooled MaxPool(y) is not needed for it */
    {FG, "demo CNN layer 1: 28x28x1 -> 32, 2x2 VALID pool", 5,
     {IN_T(4, 2, 28, 28, 1), IN_T(4, 3, 3, 1, 32), Y(2, 26, 26, 32), Y(2, 13, 13, 32), IN_T(4, 2, 13, 13, 32)}, 6,
     {S1, PAD("VALID"), RELU, P22}},
    {FG, "odd 11x11 output, 20 channels, SAME pool, batch 1", 5,
     {IN_T(4, 1, 13, 13, 1), IN_T(4, 3, 3, 1, 20), Y(1, 11, 11, 20), Y(1, 6, 6, 20), IN_T(4, 1, 6, 6, 20)}, 6,
     {S1, PAD("VALID"), RELU, KS(2, 2), PS(2, 2), PPAD("SAME")}},
    {FG, "2 input channels, SAME conv, 33 channels", 5,
     {IN_T(4, 2, 7, 9, 2), IN_T(4, 3, 3, 2, 33), Y(2, 7, 9, 33), Y(2, 3, 4, 33), IN_T(4, 2, 3, 4, 33)}, 6,
     {S1, PAD("SAME"), RELU, P22}},
    /* _TfcFusedConv2DMaxPoolArgmax and its filter gradient (the routing bytes are only run: random ones are no
     * float64 reference's); their values against _TfcFusedConv2DMaxPool and _TfcFusedConv2DMaxPoolFilterGrad
     * (same bits) in tests/unit/test_keras_conv_pool_train.c */
    {AM, "one input channel to 32 (the demo CNN layer 1 on small images)", 3,
     {IN_T(4, 1, 12, 12, 1), IN_T(4, 3, 3, 1, 32), B(32)}, 6,
     {S1, PAD("VALID"), RELU, P22}},
    {AM, "odd sizes, SAME pool", 3, {IN_T(4, 1, 9, 7, 3), IN_T(4, 3, 3, 3, 5), B(5)}, 6,
     {S1, PAD("VALID"), RELU, KS(2, 2), PS(2, 2), PPAD("SAME")}},
    {AM, "gradients of the filter and bias (the input gets none: the op is emitted only for inputs without)", 3,
     {Y(2, 7, 6, 2), IN_T(4, 3, 3, 2, 3), B(3)}, 6, {S1, PAD("SAME"), RELU, KS(2, 2), PS(2, 2), PPAD("SAME")},
     .grad = true},
    {AMG, "demo CNN layer 1 (only run)", 4,
     {IN_T(4, 2, 28, 28, 1), IN_T(4, 3, 3, 1, 32), CODES(2, 13, 13, 32), IN_T(4, 2, 13, 13, 32)}, 6,
     {S1, PAD("VALID"), RELU, P22}, .no_reference = true},
    {AMG, "3 input channels (dz built; only run)", 4,
     {IN_T(4, 2, 7, 6, 3), IN_T(4, 3, 3, 3, 5), CODES(2, 4, 3, 5), IN_T(4, 2, 4, 3, 5)}, 6,
     {S1, PAD("SAME"), RELU, KS(2, 2), PS(2, 2), PPAD("SAME")}, .no_reference = true},
    {FG, "empty batch", 5, {IN_T(4, 0, 6, 6, 1), IN_T(4, 3, 3, 1, 4), Y(0, 4, 4, 4), Y(0, 2, 2, 4), IN_T(4, 0, 2, 2, 4)},
     6, {S1, PAD("VALID"), RELU, P22}},
    {AMG, "empty batch (only run)", 4, {IN_T(4, 0, 6, 6, 1), IN_T(4, 3, 3, 1, 4), CODES(0, 2, 2, 4), IN_T(4, 0, 2, 2, 4)},
     6, {S1, PAD("VALID"), RELU, P22}, .no_reference = true},
    {AM, "empty batch", 3, {IN_T(4, 0, 6, 6, 1), IN_T(4, 3, 3, 1, 4), B(4)}, 6, {S1, PAD("VALID"), RELU, P22}},
    {FG, "3 input channels, overlapping pool (two-step form)", 5,
     {IN_T(4, 2, 9, 8, 3), IN_T(4, 3, 3, 3, 5), Y(2, 9, 8, 5), Y(2, 5, 4, 5), IN_T(4, 2, 5, 4, 5)}, 6,
     {S1, PAD("SAME"), RELU, KS(3, 3), PS(2, 2), PPAD("SAME")}},
    {0},
};

#define BAD(label_, code_, ins, n_attrs_, attrs_, ...) \
    {OP, label_, 3, ins, n_attrs_, attrs_, .code = code_, .expect = {__VA_ARGS__, NULL}}
#define INS(...) {__VA_ARGS__}
#define ATTRS(...) {__VA_ARGS__}
#define X IN_T(4, 2, 6, 6, 3)
#define F IN_T(4, 3, 3, 3, 4)
#define CONV_IN INS(X, F, B(4))
#define INV TFC_INVALID_ARGUMENT
#define UNIMPL TFC_UNIMPLEMENTED

const bad_case bad_cases_fused_pool[] = {
    BAD("input rank 3", INV, INS(IN_T(3, 6, 6, 3), F, B(4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22), OP, "input"),
    BAD("filter rank 3", INV, INS(X, IN_T(3, 3, 3, 3), B(4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22), OP, "filter"),
    BAD("bias rank 2", INV, INS(X, F, IN_T(2, 1, 4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22), OP, "bias"),
    BAD("bias length", INV, INS(X, F, B(5)), 6, ATTRS(S1, PAD("SAME"), RELU, P22), OP, "bias", "4"),
    BAD("channel mismatch", INV, INS(X, IN_T(4, 3, 3, 2, 4), B(4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22), OP),
    BAD("zero conv stride", INV, CONV_IN, 6, ATTRS(STRIDES(1, 0, 1, 1), PAD("SAME"), RELU, P22), OP, "strides"),
    BAD("unsupported activation", UNIMPL, CONV_IN, 6, ATTRS(S1, PAD("SAME"), OPS("BiasAdd", "Sigmoid"), P22), OP,
        "Sigmoid"),
    BAD("ksize of 3 values", INV, CONV_IN, 6,
        ATTRS(S1, PAD("SAME"), RELU, TFC_ATTR_INTS("ksize", I4(1, 2, 2), 3), PS(2, 2), PPAD("VALID")), OP, "ksize"),
    BAD("zero pool stride", INV, CONV_IN, 6, ATTRS(S1, PAD("SAME"), RELU, KS(2, 2), PS(0, 2), PPAD("VALID")), OP,
        "positive"),
    BAD("pool over depth", UNIMPL, CONV_IN, 6,
        ATTRS(S1, PAD("SAME"), RELU, TFC_ATTR_INTS("ksize", I4(1, 2, 2, 2), 4), PS(2, 2), PPAD("VALID")), OP, "depth"),
    BAD("window past the conv output (VALID)", INV, CONV_IN, 6,
        ATTRS(S1, PAD("VALID"), RELU, KS(6, 6), PS(1, 1), PPAD("VALID")), OP, "negative"),
    BAD("EXPLICIT padding", INV, CONV_IN, 6, ATTRS(S1, PAD("EXPLICIT"), RELU, P22), OP, "padding"),
    BAD("bad pool_padding", INV, CONV_IN, 6, ATTRS(S1, PAD("SAME"), RELU, KS(2, 2), PS(2, 2), PPAD("FULL")), OP,
        "pool_padding"),
    BAD("filter without columns", INV, INS(X, IN_T(4, 3, 0, 3, 2), B(2)), 6, ATTRS(S1, PAD("SAME"), RELU, P22), OP,
        "zero elements"),
    {OP, "int32 input", 3, CONV_IN, 6, ATTRS(S1, PAD("SAME"), RELU, P22), .dtype = TFC_INT32, .code = INV,
     .expect = {OP, NULL}},
    {TRAIN, "conv_output of another shape", 4, INS(X, F, B(4), IN_T(4, 2, 6, 6, 5)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {TRAIN, "conv_output", "[2,6,6,4]", NULL}},
    {TRAIN, "conv_output rank 3", 4, INS(X, F, B(4), IN_T(3, 6, 6, 4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22),
     .code = INV, .expect = {TRAIN, "conv_output", NULL}},
    {TRAIN, "activation not Relu", 4, INS(X, F, B(4), IN_T(4, 2, 6, 6, 4)), 6,
     ATTRS(S1, PAD("SAME"), OPS("BiasAdd", "Elu"), P22), .code = UNIMPL, .expect = {TRAIN, "Relu", NULL}},
    {TRAIN, "bias length", 4, INS(X, F, B(3), IN_T(4, 2, 6, 6, 4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22),
     .code = INV, .expect = {TRAIN, "bias", NULL}},
    {RBG, "orig_input rank 3", 3, INS(IN_T(3, 4, 4, 3), IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 2, 2, 3)), 3,
     ATTRS(KS(2, 2), RBS(2, 2), PAD("VALID")), .code = INV, .expect = {RBG, "orig_input", NULL}},
    {RBG, "grad shape differs from orig_output", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 2, 3, 3)),
     3, ATTRS(KS(2, 2), RBS(2, 2), PAD("VALID")), .code = INV, .expect = {RBG, "grad", "[1,2,3,3]", NULL}},
    {RBG, "orig_output not the pooled shape", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 3, 3, 3), IN_T(4, 1, 3, 3, 3)),
     3, ATTRS(KS(2, 2), RBS(2, 2), PAD("VALID")), .code = INV, .expect = {RBG, "[1,2,2,3]", NULL}},
    {RBG, "zero stride", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 2, 2, 3)), 3,
     ATTRS(KS(2, 2), RBS(0, 2), PAD("VALID")), .code = INV, .expect = {RBG, "Stride", NULL}},
    {RBG, "ksize of 3 values", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 2, 2, 3)), 3,
     ATTRS(TFC_ATTR_INTS("ksize", I4(1, 2, 2), 3), RBS(2, 2), PAD("VALID")), .code = INV, .expect = {RBG, "ksize", NULL}},
    {RBG, "window larger than the input (VALID)", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 1, 1, 3), IN_T(4, 1, 1, 1, 3)),
     3, ATTRS(KS(5, 5), RBS(1, 1), PAD("VALID")), .code = INV, .expect = {RBG, "pooled shape", "[1,0,0,3]", NULL}},
    {RBG, "pool over depth", 3, INS(IN_T(4, 1, 4, 4, 4), IN_T(4, 1, 2, 2, 2), IN_T(4, 1, 2, 2, 2)), 3,
     ATTRS(TFC_ATTR_INTS("ksize", I4(1, 2, 2, 2), 4), RBS(2, 2), PAD("VALID")), .code = UNIMPL,
     .expect = {RBG, "depth", NULL}},
    {RBG, "NCHW", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 2, 2, 3)), 4,
     ATTRS(KS(2, 2), RBS(2, 2), PAD("VALID"), TFC_ATTR_S("data_format", "NCHW")), .code = INV,
     .expect = {RBG, "data_format", NULL}},
    {FG, "conv_output of another shape", 5, INS(X, F, IN_T(4, 2, 6, 6, 5), IN_T(4, 2, 3, 3, 4), IN_T(4, 2, 3, 3, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {FG, "conv_output", "[2,6,6,4]", NULL}},
    {FG, "grad not the pooled shape", 5, INS(X, F, IN_T(4, 2, 6, 6, 4), IN_T(4, 2, 2, 2, 4), IN_T(4, 2, 2, 2, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {FG, "pooled shape", "[2,3,3,4]", NULL}},
    {FG, "grad shape differs from orig_output", 5,
     INS(X, F, IN_T(4, 2, 6, 6, 4), IN_T(4, 2, 3, 3, 4), IN_T(4, 2, 3, 2, 4)), 6, ATTRS(S1, PAD("SAME"), RELU, P22),
     .code = INV, .expect = {FG, "grad", NULL}},
    {FG, "input rank 3", 5, INS(IN_T(3, 6, 6, 3), F, IN_T(4, 2, 6, 6, 4), IN_T(4, 2, 3, 3, 4), IN_T(4, 2, 3, 3, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {FG, "input", NULL}},
    {FG, "activation not Relu", 5, INS(X, F, IN_T(4, 2, 6, 6, 4), IN_T(4, 2, 3, 3, 4), IN_T(4, 2, 3, 3, 4)), 6,
     ATTRS(S1, PAD("SAME"), OPS("BiasAdd", "Elu"), P22), .code = UNIMPL, .expect = {FG, "Relu", NULL}},
    {FG, "int32 input", 5, INS(X, F, IN_T(4, 2, 6, 6, 4), IN_T(4, 2, 3, 3, 4), IN_T(4, 2, 3, 3, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .dtype = TFC_INT32, .code = INV, .expect = {FG, NULL}},
    {AM, "3x3 pool", 3, CONV_IN, 6, ATTRS(S1, PAD("SAME"), RELU, KS(3, 3), PS(2, 2), PPAD("VALID")), .code = UNIMPL,
     .expect = {AM, "2x2", NULL}},
    {AM, "activation not Relu", 3, CONV_IN, 6, ATTRS(S1, PAD("SAME"), OPS("BiasAdd", "Elu"), P22), .code = UNIMPL,
     .expect = {AM, "Relu", NULL}},
    {AM, "int32", 3, CONV_IN, 6, ATTRS(S1, PAD("SAME"), RELU, P22), .dtype = TFC_INT32, .code = INV,
     .expect = {AM, NULL}},
    {AMG, "argmax not the pooled shape", 4,
     INS(X, F, {.dtype = TFC_UINT8, .rank = 4, .dims = {2, 2, 2, 4}}, IN_T(4, 2, 2, 2, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {AMG, "pooled shape", "[2,3,3,4]", NULL}},
    {AMG, "grad shape differs from argmax", 4,
     INS(X, F, {.dtype = TFC_UINT8, .rank = 4, .dims = {2, 3, 3, 4}}, IN_T(4, 2, 3, 2, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {AMG, "grad", NULL}},
    {AMG, "argmax float32", 4, INS(X, F, IN_T(4, 2, 3, 3, 4), IN_T(4, 2, 3, 3, 4)), 6,
     ATTRS(S1, PAD("SAME"), RELU, P22), .code = INV, .expect = {AMG, NULL}},
    {RBG, "int32 input", 3, INS(IN_T(4, 1, 4, 4, 3), IN_T(4, 1, 2, 2, 3), IN_T(4, 1, 2, 2, 3)), 3,
     ATTRS(KS(2, 2), RBS(2, 2), PAD("VALID")), .dtype = TFC_INT32, .code = INV, .expect = {RBG, NULL}},
    {0},
};
