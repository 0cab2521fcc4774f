/* _TfcFusedConv2DMaxPool, _TfcFusedConv2DMaxPoolTrain and _TfcMaxPoolReluBiasGrad (see fused_pool_ops.h): not
 * TensorFlow ops; tfc's own fusions, named with the _Tfc prefix so they cannot be taken for ones. The convolution's attrs are _FusedConv2D's (NHWC only, no
 * EXPLICIT padding), the pool's are MaxPool's under the names ksize, pool_strides and pool_padding. */
#include <string.h>

#include "eager/context_internal.h"
#include "ops/fused_ops.h"
#include "ops/fused_pool_ops.h"
#include "ops/op_util.h"

bool tfc_conv_pool_geom(const char *op, const tfc_attrs *attrs, const int64_t in_dims[4], const int64_t f_dims[4],
                        tfc_conv_geom *conv, tfc_conv_geom *pool, tfc_status *st) {
    if (!tfc_conv_geom_init(op, TFC_CONV_2D, attrs, in_dims, f_dims, conv, st)) return false;
    int nk = 0, ns = 0;
    const int64_t *ks = tfc_attrs_ints(attrs, "ksize", &nk), *ps = tfc_attrs_ints(attrs, "pool_strides", &ns);
    if (nk != 4 || ns != 4)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: ksize and pool_strides must have 4 elements each, got %d and %d", op, nk, ns);
    for (int i = 0; i < 4; i++)
        if (ks[i] <= 0 || ps[i] <= 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: ksize and pool_strides must be positive, got ksize [%lld, %lld, %lld, %lld], "
                                  "pool_strides [%lld, %lld, %lld, %lld]",
                                  op, (long long)ks[0], (long long)ks[1], (long long)ks[2], (long long)ks[3],
                                  (long long)ps[0], (long long)ps[1], (long long)ps[2], (long long)ps[3]);
    if (ks[0] != 1 || ks[3] != 1 || ps[0] != 1 || ps[3] != 1)
        return tfc_status_set(st, TFC_UNIMPLEMENTED,
                              "%s: pooling over the batch or depth dimension is not supported (ksize [%lld, ..., %lld], "
                              "pool_strides [%lld, ..., %lld])",
                              op, (long long)ks[0], (long long)ks[3], (long long)ps[0], (long long)ps[3]);
    const bool same = !strcmp(tfc_attrs_string(attrs, "pool_padding", "VALID"), "SAME");
    *pool = (tfc_conv_geom){.batch = conv->batch, .in_h = conv->out_h, .in_w = conv->out_w, .in_c = conv->out_c,
                            .k_h = ks[1], .k_w = ks[2], .k_c = 1, .out_c = conv->out_c, .groups = 1, .mult = 1,
                            .stride_h = ps[1], .stride_w = ps[2], .dil_h = 1, .dil_w = 1};
    return tfc_pool_window(op, pool->in_h, &pool->k_h, &pool->stride_h, same, &pool->pad_top, &pool->pad_bottom,
                           &pool->out_h, st) &&
           tfc_pool_window(op, pool->in_w, &pool->k_w, &pool->stride_w, same, &pool->pad_left, &pool->pad_right,
                           &pool->out_w, st);
}

static bool fused_conv_pool_shape(tfc_shape_ctx *c, tfc_status *st) {
    const char *op = c->op->name;
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(op, c->attrs, &fs, st)) return false;
    if (!tfc_check_rank(c, 0, 4, "input", st) || !tfc_check_rank(c, 1, 4, "filter", st) ||
        !tfc_check_rank(c, 2, 1, "bias", st))
        return false;
    const tfc_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1], *b = &c->in_shapes[2];
    if (f->rank == 4 && b->rank == 1 && f->dims[3] >= 0 && b->dims[0] >= 0 && f->dims[3] != b->dims[0])
        return TFC_OP_ERR(c, st, "the bias must have one value per output channel (%lld), got shape %s",
                          (long long)f->dims[3], SHP(b));
    tfc_shape out = {.rank = 4, .dims = {-1, -1, -1, -1}};
    int64_t d[4];
    bool unknown_batch;
    if (f->rank == 4 && tfc_shape_is_fully_defined(f) && tfc_conv_batch_free_dims(x, d, &unknown_batch)) {
        tfc_conv_geom cg, pg;
        if (!tfc_conv_pool_geom(op, c->attrs, d, f->dims, &cg, &pg, st)) return false;
        tfc_conv_dims(false, pg.batch, pg.out_h, pg.out_w, pg.out_c, out.dims);
        if (!tfc_check_out_shape(c, &out, st)) return false;
        if (unknown_batch) out.dims[0] = -1;
    }
    tfc_set_out(c, 0, &out);
    return true;
}

const tfc_op_def tfc_op_def_tfc_fused_conv2d_max_pool = {
    .name = "_TfcFusedConv2DMaxPool",
    .inputs = "input: T, filter: T, bias: T",
    .outputs = "output: T",
    .attrs = "T: {float, double}, strides: list(int), padding: {'SAME', 'VALID'}, dilations: list(int) = [1, 1, 1, 1], "
             "num_args: int = 1, fused_ops: list(string) = [], leakyrelu_alpha: float = 0.2, ksize: list(int), "
             "pool_strides: list(int), pool_padding: {'SAME', 'VALID'}",
    .shape = fused_conv_pool_shape,
};

/* ---- training: _TfcFusedConv2DMaxPoolTrain and _TfcMaxPoolReluBiasGrad (see fused_pool_ops.h) ---- */

static bool same_shape(const tfc_shape *a, const tfc_shape *b) {
    if (a->rank < 0 || b->rank < 0) return true;
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
    return true;
}

/* As _TfcFusedConv2DMaxPool's, plus: the activation is Relu, and conv_output has the convolution's shape. */
static bool fused_conv_pool_train_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(c->op->name, c->attrs, &fs, st)) return false;
    if (fs.act != TFC_FUSED_RELU)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: only fused_ops [BiasAdd, Relu] is supported", c->op->name);
    if (!tfc_check_rank(c, 3, 4, "conv_output", st) || !fused_conv_pool_shape(c, st)) return false;
    const tfc_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1], *y = &c->in_shapes[3];
    if (x->rank == 4 && f->rank == 4 && tfc_shape_is_fully_defined(x) && tfc_shape_is_fully_defined(f)) {
        tfc_conv_geom cg, pg;
        if (!tfc_conv_pool_geom(c->op->name, c->attrs, x->dims, f->dims, &cg, &pg, st)) return false;
        tfc_shape want = {.rank = 4};
        tfc_conv_dims(false, cg.batch, cg.out_h, cg.out_w, cg.out_c, want.dims);
        if (!same_shape(y, &want))
            return TFC_OP_ERR(c, st, "conv_output %s must have the convolution's output shape %s", SHP(y), SHP(&want));
    }
    return true;
}

/* pooled = MaxPool(y) with y = conv_output = Relu(conv(input, filter) + bias): dz, db =
 * _TfcMaxPoolReluBiasGrad(y, pooled, dpooled), then the convolution's gradients of dz (as _FusedConv2D's).
 * conv_output gets no gradient of its own: it stands for the other inputs' function. */
static bool fused_conv_pool_train_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[3];
    int n = 0;
    const char *names[3][2] = {{"ksize", "ksize"}, {"pool_strides", "strides"}, {"pool_padding", "padding"}};
    for (int i = 0; i < 3; i++) {
        const tfc_attr *src = tfc_attrs_find(g->attrs, names[i][0]);
        if (!src) return tfc_status_set(st, TFC_INTERNAL, "%s gradient: no attr %s", g->op->name, names[i][0]);
        a[n] = *src;
        a[n++].name = names[i][1];
    }
    tfc_tensor *out[2] = {0};
    if (!TFC_GRAD_NEEDS(g, 0) && TFC_GRAD_NEEDS(g, 1) &&
        !tfc_tape_should_record(g->ctx, (tfc_tensor *[]){g->in[0], g->in[1], g->in[3], g->out[0], g->dy[0]}, 5)) {
        /* only the filter's and the bias's gradients (a first layer), and no tape records these ops (a training
         * step's): one op forms dz per convolution tile where it can instead of writing it (not
         * differentiable, hence only unrecorded) */
        if (tfc_execute(g->ctx, "_TfcFusedConv2DMaxPoolFilterGrad",
                        (tfc_tensor *[]){g->in[0], g->in[1], g->in[3], g->out[0], g->dy[0]}, 5, g->attrs->a,
                        g->attrs->n, out, 2, st) < 0)
            return false;
        g->dx[1] = out[0];
        if (TFC_GRAD_NEEDS(g, 2)) g->dx[2] = out[1];
        return true;
    }
    if (tfc_execute(g->ctx, "_TfcMaxPoolReluBiasGrad", (tfc_tensor *[]){g->in[3], g->out[0], g->dy[0]}, 3, a, n, out,
                    2, st) < 0)
        return false;
    if (TFC_GRAD_NEEDS(g, 2)) g->dx[2] = out[1];
    if (TFC_GRAD_NEEDS(g, 0) && !(g->dx[0] = tfc_fused_conv_backprop(g, true, out[0], st))) return false;
    return !TFC_GRAD_NEEDS(g, 1) || (g->dx[1] = tfc_fused_conv_backprop(g, false, out[0], st));
}

/* (backprops, bias_backprop): orig_input y, orig_output = MaxPool(y), grad shaped like orig_output. */
static bool max_pool_relu_bias_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_check_rank(c, 0, 4, "orig_input", st) || !tfc_check_rank(c, 1, 4, "orig_output", st) ||
        !tfc_check_rank(c, 2, 4, "grad", st))
        return false;
    const tfc_shape *y = &c->in_shapes[0], *p = &c->in_shapes[1], *dp = &c->in_shapes[2];
    if (!same_shape(p, dp)) return TFC_OP_ERR(c, st, "grad %s must have orig_output's shape %s", SHP(dp), SHP(p));
    if (y->rank == 4 && tfc_shape_is_fully_defined(y)) {
        tfc_conv_geom g;
        if (!tfc_conv_geom_init(c->op->name, TFC_CONV_POOL, c->attrs, y->dims, NULL, &g, st)) return false;
        tfc_shape want = {.rank = 4};
        tfc_conv_dims(false, g.batch, g.out_h, g.out_w, g.out_c, want.dims);
        if (!same_shape(p, &want) || !same_shape(dp, &want))
            return TFC_OP_ERR(c, st, "orig_output %s and grad %s must have the pooled shape %s of orig_input %s",
                              SHP(p), SHP(dp), SHP(&want), SHP(y));
    }
    tfc_set_out(c, 0, y);
    c->out_shapes[1] = (tfc_shape){.rank = 1, .dims = {y->rank == 4 ? y->dims[3] : -1}};
    return true;
}

/* dz = Relu'(y) * MaxPoolGrad(y, pooled, dp) and db = sum of dz over all but the channels: linear in dp, so
 * d dp = MaxPoolGradGrad(y, pooled, ReluGrad(gdz + gdb, y)) (gdb broadcast over the pixels); y and pooled
 * only pick positions (zero gradient almost everywhere, as MaxPoolGrad's). */
static bool max_pool_relu_bias_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *y = g->in[0], *gz = g->dy[0];
    if (g->dy[1] && !(gz = tfc_emit(g->ctx, "AddV2", (tfc_tensor *[]){gz, g->dy[1]}, 2, NULL, 0, st))) return false;
    tfc_tensor *gr = tfc_emit(g->ctx, "ReluGrad", (tfc_tensor *[]){gz, y}, 2, NULL, 0, st);
    if (!gr) return false;
    tfc_attr a[4];
    int n = 0;
    const char *names[] = {"ksize", "strides", "padding", "data_format"};
    for (int i = 0; i < 4; i++) {
        const tfc_attr *src = tfc_attrs_find(g->attrs, names[i]);
        if (src) a[n++] = *src;
    }
    return (g->dx[0] = tfc_emit(g->ctx, "ZerosLike", &g->in[0], 1, NULL, 0, st)) &&
           (g->dx[1] = tfc_emit(g->ctx, "ZerosLike", &g->in[1], 1, NULL, 0, st)) &&
           (g->dx[2] = tfc_emit(g->ctx, "MaxPoolGradGrad", (tfc_tensor *[]){y, g->in[1], gr}, 3, a, n, st));
}

const tfc_op_def tfc_op_def_tfc_fused_conv2d_max_pool_train = {
    .name = "_TfcFusedConv2DMaxPoolTrain",
    .inputs = "input: T, filter: T, bias: T, conv_output: T",
    .outputs = "output: T",
    .attrs = "T: {float, double}, strides: list(int), padding: {'SAME', 'VALID'}, dilations: list(int) = [1, 1, 1, 1], "
             "num_args: int = 1, fused_ops: list(string) = [], leakyrelu_alpha: float = 0.2, ksize: list(int), "
             "pool_strides: list(int), pool_padding: {'SAME', 'VALID'}",
    .shape = fused_conv_pool_train_shape,
    .grad = fused_conv_pool_train_grad,
};

const tfc_op_def tfc_op_def_tfc_max_pool_relu_bias_grad = {
    .name = "_TfcMaxPoolReluBiasGrad",
    .inputs = "orig_input: T, orig_output: T, grad: T",
    .outputs = "backprops: T, bias_backprop: T",
    .attrs = "T: {float, double}, ksize: list(int), strides: list(int), padding: {'SAME', 'VALID'}, "
             "data_format: {'NHWC'} = 'NHWC'",
    .shape = max_pool_relu_bias_grad_shape,
    .grad = max_pool_relu_bias_grad_grad,
};

/* (filter_backprop, bias_backprop): the filter's shape and conv_output's channels, after the same checks as
 * _TfcFusedConv2DMaxPoolTrain's (conv_output the convolution's shape) and orig_output and grad the pooled
 * shape. */
static bool conv_max_pool_filter_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(c->op->name, c->attrs, &fs, st)) return false;
    if (fs.act != TFC_FUSED_RELU)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: only fused_ops [BiasAdd, Relu] is supported", c->op->name);
    static const char *const names[5] = {"input", "filter", "conv_output", "orig_output", "grad"};
    for (int i = 0; i < 5; i++)
        if (!tfc_check_rank(c, i, 4, names[i], st)) return false;
    const tfc_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1], *y = &c->in_shapes[2], *p = &c->in_shapes[3],
                    *dp = &c->in_shapes[4];
    if (!same_shape(p, dp)) return TFC_OP_ERR(c, st, "grad %s must have orig_output's shape %s", SHP(dp), SHP(p));
    if (x->rank == 4 && f->rank == 4 && tfc_shape_is_fully_defined(x) && tfc_shape_is_fully_defined(f)) {
        tfc_conv_geom cg, pg;
        if (!tfc_conv_pool_geom(c->op->name, c->attrs, x->dims, f->dims, &cg, &pg, st)) return false;
        tfc_shape conv = {.rank = 4}, pooled = {.rank = 4};
        tfc_conv_dims(false, cg.batch, cg.out_h, cg.out_w, cg.out_c, conv.dims);
        tfc_conv_dims(false, pg.batch, pg.out_h, pg.out_w, pg.out_c, pooled.dims);
        if (!same_shape(y, &conv))
            return TFC_OP_ERR(c, st, "conv_output %s must have the convolution's output shape %s", SHP(y), SHP(&conv));
        if (!same_shape(p, &pooled) || !same_shape(dp, &pooled))
            return TFC_OP_ERR(c, st, "orig_output %s and grad %s must have the pooled shape %s", SHP(p), SHP(dp),
                              SHP(&pooled));
    }
    tfc_set_out(c, 0, f);
    c->out_shapes[1] = (tfc_shape){.rank = 1, .dims = {f->rank == 4 ? f->dims[3] : -1}};
    return true;
}

const tfc_op_def tfc_op_def_tfc_fused_conv2d_max_pool_filter_grad = {
    .name = "_TfcFusedConv2DMaxPoolFilterGrad",
    .inputs = "input: T, filter: T, conv_output: T, orig_output: T, grad: T",
    .outputs = "filter_backprop: T, bias_backprop: T",
    .attrs = "T: {float, double}, strides: list(int), padding: {'SAME', 'VALID'}, dilations: list(int) = [1, 1, 1, 1], "
             "num_args: int = 1, fused_ops: list(string) = [], leakyrelu_alpha: float = 0.2, ksize: list(int), "
             "pool_strides: list(int), pool_padding: {'SAME', 'VALID'}",
    .shape = conv_max_pool_filter_grad_shape,
};

/* ---- _TfcFusedConv2DMaxPoolArgmax and its gradient (see fused_pool_ops.h) ---- */

/* The pool must be 2x2 with stride 2 (its windows then start at even rows and columns: no top or left padding
 * under SAME either), the activation Relu. */
static bool argmax_attrs_ok(const char *op, const tfc_attrs *attrs, tfc_status *st) {
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(op, attrs, &fs, st)) return false;
    if (fs.act != TFC_FUSED_RELU)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: only fused_ops [BiasAdd, Relu] is supported", op);
    int nk = 0, ns = 0;
    const int64_t *ks = tfc_attrs_ints(attrs, "ksize", &nk), *ps = tfc_attrs_ints(attrs, "pool_strides", &ns);
    if (nk != 4 || ns != 4 || ks[1] != 2 || ks[2] != 2 || ps[1] != 2 || ps[2] != 2)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: only 2x2 pools of stride 2 are supported", op);
    return true;
}

static bool conv_pool_argmax_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!fused_conv_pool_shape(c, st) || !argmax_attrs_ok(c->op->name, c->attrs, st)) return false;
    c->out_shapes[1] = c->out_shapes[0];
    return true;
}

/* Only the filter's and the bias's gradients (the op is emitted for a first layer, whose input needs none):
 * _TfcFusedConv2DMaxPoolArgmaxFilterGrad of the kept routing bytes. */
static bool conv_pool_argmax_grad(tfc_grad_ctx *g, tfc_status *st) {
    if (TFC_GRAD_NEEDS(g, 0))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: no gradient for its input (emitted only where none is needed)",
                              g->op->name);
    if (!TFC_GRAD_NEEDS(g, 1) && !TFC_GRAD_NEEDS(g, 2)) return true;
    tfc_tensor *out[2] = {0};
    if (tfc_execute(g->ctx, "_TfcFusedConv2DMaxPoolArgmaxFilterGrad",
                    (tfc_tensor *[]){g->in[0], g->in[1], g->out[1], g->dy[0]}, 4, g->attrs->a, g->attrs->n, out, 2,
                    st) < 0)
        return false;
    if (TFC_GRAD_NEEDS(g, 1)) g->dx[1] = out[0];
    if (TFC_GRAD_NEEDS(g, 2)) g->dx[2] = out[1];
    return true;
}

static bool conv_pool_argmax_filter_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!argmax_attrs_ok(c->op->name, c->attrs, st)) return false;
    static const char *const names[4] = {"input", "filter", "argmax", "grad"};
    for (int i = 0; i < 4; i++)
        if (!tfc_check_rank(c, i, 4, names[i], st)) return false;
    const tfc_shape *x = &c->in_shapes[0], *f = &c->in_shapes[1], *a = &c->in_shapes[2], *dp = &c->in_shapes[3];
    if (!same_shape(a, dp)) return TFC_OP_ERR(c, st, "grad %s must have argmax's shape %s", SHP(dp), SHP(a));
    if (x->rank == 4 && f->rank == 4 && tfc_shape_is_fully_defined(x) && tfc_shape_is_fully_defined(f)) {
        tfc_conv_geom cg, pg;
        if (!tfc_conv_pool_geom(c->op->name, c->attrs, x->dims, f->dims, &cg, &pg, st)) return false;
        tfc_shape pooled = {.rank = 4};
        tfc_conv_dims(false, pg.batch, pg.out_h, pg.out_w, pg.out_c, pooled.dims);
        if (!same_shape(a, &pooled) || !same_shape(dp, &pooled))
            return TFC_OP_ERR(c, st, "argmax %s and grad %s must have the pooled shape %s", SHP(a), SHP(dp),
                              SHP(&pooled));
    }
    tfc_set_out(c, 0, f);
    c->out_shapes[1] = (tfc_shape){.rank = 1, .dims = {f->rank == 4 ? f->dims[3] : -1}};
    return true;
}

#define ARGMAX_ATTRS                                                                                          \
    "T: {float, double}, strides: list(int), padding: {'SAME', 'VALID'}, dilations: list(int) = [1, 1, 1, 1], " \
    "num_args: int = 1, fused_ops: list(string) = [], leakyrelu_alpha: float = 0.2, ksize: list(int), "       \
    "pool_strides: list(int), pool_padding: {'SAME', 'VALID'}"

const tfc_op_def tfc_op_def_tfc_fused_conv2d_max_pool_argmax = {
    .name = "_TfcFusedConv2DMaxPoolArgmax",
    .inputs = "input: T, filter: T, bias: T",
    .outputs = "output: T, argmax: uint8",
    .attrs = ARGMAX_ATTRS,
    .shape = conv_pool_argmax_shape,
    .grad = conv_pool_argmax_grad,
};

const tfc_op_def tfc_op_def_tfc_fused_conv2d_max_pool_argmax_filter_grad = {
    .name = "_TfcFusedConv2DMaxPoolArgmaxFilterGrad",
    .inputs = "input: T, filter: T, argmax: uint8, grad: T",
    .outputs = "filter_backprop: T, bias_backprop: T",
    .attrs = ARGMAX_ATTRS,
    .shape = conv_pool_argmax_filter_grad_shape,
};

const tfc_op_def *const tfc_ops_fused_pool[] = {&tfc_op_def_tfc_fused_conv2d_max_pool,
                                                &tfc_op_def_tfc_fused_conv2d_max_pool_train,
                                                &tfc_op_def_tfc_fused_conv2d_max_pool_filter_grad,
                                                &tfc_op_def_tfc_fused_conv2d_max_pool_argmax,
                                                &tfc_op_def_tfc_fused_conv2d_max_pool_argmax_filter_grad,
                                                &tfc_op_def_tfc_max_pool_relu_bias_grad, NULL};
