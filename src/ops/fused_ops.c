/* Fused ops (TensorFlow's internal _FusedConv2D, tensorflow/core/ops/nn_ops.cc, and _FusedMatMul,
 * math_ops.cc): a convolution or matrix product, then BiasAdd, then an optional activation, in one kernel
 * (src/kernels/cpu/fused.c) that applies the bias and the activation while each output tile is in cache.
 * Keras's Conv2D and Dense layers call them for float32 with a bias (src/keras/layers/).
 *
 * Deviations from TensorFlow's definitions, each a superset: T also allows double (the float64 reference of
 * the op tests and finite-difference gradients) and bfloat16 (_FusedConv2D); and both ops have a gradient,
 * which TensorFlow does not register (its remapper creates them only in inference graphs after
 * differentiation): the activation's *Grad op on the op's output gives the pre-activation gradient dz, then
 * BiasAddGrad(dz) and the convolution's / product's own gradient of dz. Everything is emitted as ops, so
 * the gradient works on tapes, traces into graphs and is differentiable again. For float32/float64 NHWC
 * data the activation's gradient and BiasAddGrad run as one tfc op, _FusedBiasAddGrad (one pass over dz
 * instead of two). */
#include <string.h>

#include "ops/conv_geom.h"
#include "ops/fused_ops.h"
#include "ops/op_util.h"

/* ---- fused_ops ------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    tfc_fused_act act;
} activations[] = {
    {"Relu", TFC_FUSED_RELU},
    {"Relu6", TFC_FUSED_RELU6},
    {"Elu", TFC_FUSED_ELU},
    {"LeakyRelu", TFC_FUSED_LEAKY_RELU},
};

/* "[BiasAdd, Relu]" */
static const char *list_str(const tfc_attr *a, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "[");
    for (int i = 0; a && i < a->n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "", a->v.strs[i]);
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}

bool tfc_fused_spec_read(const char *op, const tfc_attrs *attrs, tfc_fused_spec *fs, tfc_status *st) {
    const tfc_attr *a = tfc_attrs_find(attrs, "fused_ops");
    if (a && a->kind != TFC_ATTR_LIST_STRING) a = NULL;
    char list[192]; /* the list for messages: formatted only on errors (this runs for every call) */
    if (!a || a->n == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: fused_ops must name at least one fused op (e.g. [BiasAdd, Relu]), got []", op);
    fs->act = TFC_FUSED_LINEAR;
    fs->alpha = (float)tfc_attrs_float(attrs, "leakyrelu_alpha", 0.2);
    bool ok = !strcmp(a->v.strs[0], "BiasAdd") && a->n <= 2;
    if (ok && a->n == 2) {
        ok = false;
        for (size_t i = 0; i < sizeof activations / sizeof *activations; i++)
            if (!strcmp(a->v.strs[1], activations[i].name)) {
                fs->act = activations[i].act;
                ok = true;
            }
    }
    if (!ok)
        return tfc_status_set(st, TFC_UNIMPLEMENTED,
                              "%s: Fusion is not implemented: %s (tfc runs [BiasAdd] and [BiasAdd, <Relu, Relu6, Elu or "
                              "LeakyRelu>])",
                              op, list_str(a, list, sizeof list));
    int64_t num_args = tfc_attrs_int(attrs, "num_args", -1);
    if (num_args != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: fused_ops %s take one argument (the bias), got num_args=%lld", op,
                              list_str(a, list, sizeof list), (long long)num_args);
    return true;
}

/* ---- shape functions ------------------------------------------------------------------------------- */

/* The bias (input i): 1-D, of dtype T, with one value per output channel (`channels`, -1 when unknown). */
static bool check_bias(tfc_shape_ctx *c, int i, int64_t channels, const tfc_shape *out, tfc_status *st) {
    const tfc_shape *b = &c->in_shapes[i];
    if (c->in_dtypes[i] != c->in_dtypes[0])
        return TFC_OP_ERR(c, st, "the bias (args[0]) must have the dtype of the input, %s, got %s",
                          tfc_dtype_name(c->in_dtypes[0]), tfc_dtype_name(c->in_dtypes[i]));
    if (b->rank >= 0 && b->rank != 1) return TFC_OP_ERR(c, st, "the bias (args[0]) must be 1-D, got shape %s", SHP(b));
    if (b->rank == 1 && b->dims[0] >= 0 && channels >= 0 && b->dims[0] != channels)
        return TFC_OP_ERR(c, st, "the bias (args[0]) has %lld values, but the output %s has %lld channels",
                          (long long)b->dims[0], SHP(out), (long long)channels);
    return true;
}

static bool fused_conv_shape(tfc_shape_ctx *c, tfc_status *st) {
    const char *op = c->op->name;
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(op, c->attrs, &fs, st)) return false;
    int64_t host = tfc_attrs_int(c->attrs, "num_host_args", 0);
    if (host != 0)
        return tfc_status_set(st, TFC_UNIMPLEMENTED,
                              "%s: host_args (num_host_args=%lld) belong to quantized fusions, which tfc does not run",
                              op, (long long)host);
    const char *ff = tfc_attrs_string(c->attrs, "filter_format", "HWIO");
    if (strcmp(ff, "HWIO"))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: filter_format %s is not supported on CPU (only HWIO)", op, ff);
    if (c->n_in != 3) return TFC_OP_ERR(c, st, "num_args=1 but %d args given", c->n_in - 2);
    if (!tfc_check_rank(c, 0, 4, "input", st) || !tfc_check_rank(c, 1, 4, "filter", st)) return false;
    tfc_shape out = {.rank = 4, .dims = {-1, -1, -1, -1}};
    const tfc_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1];
    int64_t d[4];
    bool unknown_batch;
    if (f->rank == 4 && tfc_shape_is_fully_defined(f) && tfc_conv_batch_free_dims(x, d, &unknown_batch)) {
        tfc_conv_geom g;
        if (!tfc_conv_geom_init(op, TFC_CONV_2D, c->attrs, d, f->dims, &g, st)) return false;
        tfc_conv_dims(g.nchw, g.batch, g.out_h, g.out_w, g.out_c, out.dims);
        if (!tfc_check_out_shape(c, &out, st)) return false;
        if (unknown_batch) out.dims[0] = -1;
    }
    bool nchw = !strcmp(tfc_attrs_string(c->attrs, "data_format", "NHWC"), "NCHW");
    if (!check_bias(c, 2, f->rank == 4 ? f->dims[3] : -1, &out, st)) return false;
    if (out.dims[nchw ? 1 : 3] < 0 && c->in_shapes[2].rank == 1) out.dims[nchw ? 1 : 3] = c->in_shapes[2].dims[0];
    tfc_set_out(c, 0, &out);
    return true;
}

static bool fused_matmul_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(c->op->name, c->attrs, &fs, st)) return false;
    tfc_shape out;
    if (!tfc_matmul_out_shape(c, &out, st)) return false;
    if (!check_bias(c, 2, out.dims[1], &out, st)) return false;
    if (out.dims[1] < 0 && c->in_shapes[2].rank == 1) out.dims[1] = c->in_shapes[2].dims[0];
    tfc_set_out(c, 0, &out);
    return true;
}

/* ---- gradients ------------------------------------------------------------------------------------- */

static const char *const act_names[] = {[TFC_FUSED_RELU] = "Relu", [TFC_FUSED_RELU6] = "Relu6",
                                        [TFC_FUSED_ELU] = "Elu", [TFC_FUSED_LEAKY_RELU] = "LeakyRelu"};

/* The second input of the activation's gradient op: the op's output y, as nn_grad.py gives ReluGrad,
 * Relu6Grad and EluGrad. LeakyReluGrad needs the sign of its features, which y has only for alpha >= 0;
 * with a negative slope the pre-activation is recomputed (the same op with fused_ops [BiasAdd]). */
static tfc_tensor *act_input(tfc_grad_ctx *g, const tfc_fused_spec *fs, tfc_status *st) {
    if (fs->act != TFC_FUSED_LEAKY_RELU || fs->alpha >= 0) return g->out[0];
    tfc_attr attrs[TFC_MAX_ATTRS];
    int n = 0;
    for (int i = 0; i < tfc_attrs_count(g->attrs); i++) {
        const tfc_attr *a = tfc_attrs_at(g->attrs, i);
        if (a->kind != TFC_ATTR_NONE && strcmp(a->name, "fused_ops") && strcmp(a->name, "TArgs")) attrs[n++] = *a;
    }
    static const char *const bias_only[] = {"BiasAdd"};
    attrs[n++] = (tfc_attr){.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = 1, .v.strs = bias_only};
    return tfc_emit(g->ctx, g->op->name, g->in, g->n_in, attrs, n, st);
}

/* dz, the gradient before the activation (and db = BiasAddGrad(dz) when `db` is not NULL): for float32 and
 * float64 NHWC one _FusedBiasAddGrad, else the activation's gradient op and BiasAddGrad. */
static tfc_tensor *act_grad(tfc_grad_ctx *g, tfc_tensor *dy, tfc_tensor **db, tfc_status *st) {
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(g->op->name, g->attrs, &fs, st)) return NULL;
    const char *df = tfc_attrs_string(g->attrs, "data_format", "NHWC");
    tfc_attr dfa = TFC_ATTR_S("data_format", df);
    if (fs.act == TFC_FUSED_LINEAR) {
        if (db && !(*db = tfc_emit(g->ctx, "BiasAddGrad", &dy, 1, &dfa, 1, st))) return NULL;
        return dy;
    }
    tfc_tensor *x = act_input(g, &fs, st);
    if (!x) return NULL;
    tfc_dtype dt = tfc_tensor_dtype(dy);
    if (db && !strcmp(df, "NHWC") && (dt == TFC_FLOAT || dt == TFC_DOUBLE)) {
        tfc_attr a[2] = {TFC_ATTR_S("activation", act_names[fs.act]), TFC_ATTR_F("alpha", fs.alpha)};
        tfc_tensor *out[2] = {0};
        if (tfc_execute(g->ctx, "_FusedBiasAddGrad", (tfc_tensor *[]){dy, x}, 2, a, 2, out, 2, st) < 0) return NULL;
        *db = out[1];
        return out[0];
    }
    char grad_op[16];
    snprintf(grad_op, sizeof grad_op, "%sGrad", act_names[fs.act]);
    tfc_attr al = TFC_ATTR_F("alpha", fs.alpha);
    tfc_tensor *dz = tfc_emit(g->ctx, grad_op, (tfc_tensor *[]){dy, x}, 2, &al, fs.act == TFC_FUSED_LEAKY_RELU, st);
    if (dz && db && !(*db = tfc_emit(g->ctx, "BiasAddGrad", &dz, 1, &dfa, 1, st))) return NULL;
    return dz;
}

/* array_ops.shape(t) as int32: a constant when the shape is known (eager), else a Shape op (graphs).
 * *owned receives the tensor to release when it was created here. */
static tfc_tensor *shape_of(tfc_grad_ctx *g, tfc_tensor *t, tfc_tensor **owned, tfc_status *st) {
    *owned = NULL;
    const tfc_shape *s = tfc_tensor_shape(t);
    if (tfc_shape_is_fully_defined(s)) {
        int32_t d[TFC_MAX_RANK];
        for (int i = 0; i < s->rank; i++) {
            if (s->dims[i] > INT32_MAX) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s gradient: dimension %lld does not fit int32", g->op->name,
                               (long long)s->dims[i]);
                return NULL;
            }
            d[i] = (int32_t)s->dims[i];
        }
        return *owned = tfc_vec_i32(d, s->rank, st);
    }
    tfc_attr a = TFC_ATTR_T("out_type", TFC_INT32);
    return tfc_emit(g->ctx, "Shape", &t, 1, &a, 1, st);
}

static const char *const conv_attr_names[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                              "use_cudnn_on_gpu"};

/* Conv2DBackpropInput(shape(x), f, dz) or Conv2DBackpropFilter(x, shape(f), dz) with the op's conv attrs. */
tfc_tensor *tfc_fused_conv_backprop(tfc_grad_ctx *g, bool input, tfc_tensor *dz, tfc_status *st) {
    tfc_tensor *x = g->in[0], *f = g->in[1], *owned;
    tfc_tensor *shp = shape_of(g, input ? x : f, &owned, st);
    if (!shp) return NULL;
    tfc_attr attrs[8];
    int n = 0;
    for (size_t i = 0; i < sizeof conv_attr_names / sizeof *conv_attr_names; i++) {
        const tfc_attr *a = tfc_attrs_find(g->attrs, conv_attr_names[i]);
        if (a) attrs[n++] = *a;
    }
    tfc_tensor *in[3] = {input ? shp : x, input ? f : shp, dz};
    tfc_tensor *r = tfc_emit(g->ctx, input ? "Conv2DBackpropInput" : "Conv2DBackpropFilter", in, 3, attrs, n, st);
    tfc_tensor_unref(owned);
    return r;
}

/* y = act(conv(x, f) + b): dz = act'(dy), db = BiasAddGrad(dz), dx and df the convolution's gradient of dz;
 * each only when wanted (the first layer's input needs none: that saves a whole convolution). */
static bool fused_conv_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *dz = act_grad(g, g->dy[0], TFC_GRAD_NEEDS(g, 2) ? &g->dx[2] : NULL, st);
    if (!dz) return false;
    if (TFC_GRAD_NEEDS(g, 0) && !(g->dx[0] = tfc_fused_conv_backprop(g, true, dz, st))) return false;
    return !TFC_GRAD_NEEDS(g, 1) || (g->dx[1] = tfc_fused_conv_backprop(g, false, dz, st));
}

/* y = act(op(A) op(B) + b): dz as above, db = BiasAddGrad(dz), dA and dB the products of MatMul's gradient
 * (math_grad.py's _MatMulGrad) with dz. */
static bool fused_matmul_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *dz = act_grad(g, g->dy[0], TFC_GRAD_NEEDS(g, 2) ? &g->dx[2] : NULL, st);
    if (!dz) return false;
    bool ta = tfc_attrs_bool(g->attrs, "transpose_a", false), tb = tfc_attrs_bool(g->attrs, "transpose_b", false);
    tfc_tensor *a = g->in[0], *b = g->in[1];
    /* dA = dz op(B)^T laid out as A, dB = op(A)^T dz laid out as B */
    tfc_tensor *ga[2] = {ta ? b : dz, ta ? dz : b}, *gb[2] = {tb ? dz : a, tb ? a : dz};
    tfc_attr aa[2] = {TFC_ATTR_B("transpose_a", ta && tb), TFC_ATTR_B("transpose_b", ta || !tb)};
    tfc_attr ab[2] = {TFC_ATTR_B("transpose_a", !ta || tb), TFC_ATTR_B("transpose_b", ta && tb)};
    if (TFC_GRAD_NEEDS(g, 0) && !(g->dx[0] = tfc_emit(g->ctx, "MatMul", ga, 2, aa, 2, st))) return false;
    return !TFC_GRAD_NEEDS(g, 1) || (g->dx[1] = tfc_emit(g->ctx, "MatMul", gb, 2, ab, 2, st));
}

/* ---- _FusedBiasAddGrad ----------------------------------------------------------------------------
 * (backprops, bias_backprop) = (<activation>Grad(gradients, features), BiasAddGrad(backprops)) for NHWC data
 * (channels last): the gradient of the fused ops' epilogue in one pass. A tfc op (TensorFlow has none):
 * `features` is the second input of the activation's gradient op (ReluGrad's features, EluGrad's outputs). */

static bool fused_bias_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *g = &c->in_shapes[0], *x = &c->in_shapes[1];
    bool same = g->rank < 0 || x->rank < 0 || g->rank == x->rank;
    for (int i = 0; same && g->rank >= 0 && x->rank >= 0 && i < g->rank; i++)
        same = g->dims[i] < 0 || x->dims[i] < 0 || g->dims[i] == x->dims[i];
    if (!same) return TFC_OP_ERR(c, st, "gradients %s and features %s must have the same shape", SHP(g), SHP(x));
    const tfc_shape *s = g->rank >= 0 ? g : x;
    if (s->rank >= 0 && s->rank < 2) return TFC_OP_ERR(c, st, "Input tensor must be at least 2D: %s", SHP(s));
    c->out_shapes[0] = *s;
    c->out_shapes[1] = (tfc_shape){.rank = 1, .dims = {s->rank < 0 ? -1 : s->dims[s->rank - 1]}};
    return true;
}

/* The composite form (the activation's *Grad op, then BiasAddGrad) differentiated on a nested tape with the
 * incoming gradients: higher derivatives follow those ops' own gradients. */
static bool fused_bias_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    const char *act = tfc_attrs_string(g->attrs, "activation", "Relu");
    tfc_tensor *dy = g->in[0], *x = g->in[1];
    tfc_tape *tape = tfc_tape_new(g->ctx, false, false, st);
    if (!tape) return false;
    tfc_tape_watch(tape, dy);
    tfc_tape_watch(tape, x);
    char grad_op[16];
    snprintf(grad_op, sizeof grad_op, "%sGrad", act);
    tfc_attr al = TFC_ATTR_F("alpha", tfc_attrs_float(g->attrs, "alpha", 0.2));
    tfc_tensor *dz = tfc_emit(g->ctx, grad_op, (tfc_tensor *[]){dy, x}, 2, &al, !strcmp(act, "LeakyRelu"), st);
    tfc_tensor *db = dz ? tfc_emit(g->ctx, "BiasAddGrad", &dz, 1, NULL, 0, st) : NULL;
    tfc_tape_stop_recording(tape);
    tfc_tensor *res[2] = {0};
    bool ok = db && tfc_tape_gradient_n(tape, (tfc_tensor *[]){dz, db}, 2, g->dy, (tfc_tensor *[]){dy, x}, 2, NULL, 0,
                                        TFC_UNCONNECTED_ZERO, res, st);
    tfc_tape_free(tape);
    if (!ok) return false;
    g->dx[0] = res[0];
    g->dx[1] = res[1];
    return true;
}

/* ---- op definitions -------------------------------------------------------------------------------- */

#define FUSED_ATTRS "fused_ops: list(string) = [], epsilon: float = 0.0001, leakyrelu_alpha: float = 0.2"

const tfc_op_def tfc_op_def_fused_conv2d = {
    .name = "_FusedConv2D",
    .inputs = "input: T, filter: T, args: TArgs, host_args: num_host_args * float",
    .outputs = "output: T",
    .attrs = "T: {half, bfloat16, float, double}, TArgs: list(type) >= 1, num_args: int >= 0, "
             "num_host_args: int >= 0 = 0, strides: list(int), padding: {'SAME', 'VALID', 'EXPLICIT'}, "
             "explicit_paddings: list(int) = [], data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC', "
             "filter_format: {'HWIO', 'OIHW', 'OIHW_VECT_I'} = 'HWIO', dilations: list(int) = [1, 1, 1, 1], "
             "use_cudnn_on_gpu: bool = true, " FUSED_ATTRS,
    .shape = fused_conv_shape,
    .grad = fused_conv_grad,
};
const tfc_op_def tfc_op_def_fused_mat_mul = {
    .name = "_FusedMatMul",
    .inputs = "a: T, b: T, args: num_args * T",
    .outputs = "product: T",
    .attrs = "transpose_a: bool = false, transpose_b: bool = false, T: {bfloat16, half, float, double}, "
             "num_args: int >= 0, " FUSED_ATTRS,
    .shape = fused_matmul_shape,
    .grad = fused_matmul_grad,
};

const tfc_op_def tfc_op_def_fused_bias_add_grad = {
    .name = "_FusedBiasAddGrad",
    .inputs = "gradients: T, features: T",
    .outputs = "backprops: T, bias_backprop: T",
    .attrs = "T: {float, double}, activation: {'Relu', 'Relu6', 'Elu', 'LeakyRelu'}, alpha: float = 0.2",
    .shape = fused_bias_grad_shape,
    .grad = fused_bias_grad_grad,
};

const tfc_op_def *const tfc_ops_fused[] = {&tfc_op_def_fused_conv2d, &tfc_op_def_fused_mat_mul,
                                           &tfc_op_def_fused_bias_add_grad, NULL};
