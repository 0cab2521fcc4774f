/* Stateful random ops (tensorflow/core/ops/random_ops.cc). All are Philox-based with TensorFlow's seed
 * attrs: (seed, seed2) = (0, 0) draws a nondeterministic seed once per cached kernel; any other pair
 * gives TensorFlow's exact stream, continued across calls with the same attrs (see kernels/cpu/random.c).
 * None is differentiable (TensorFlow registers them as NotDifferentiable). The tfc-internal _TfcDropout
 * (Keras Dropout in training) draws from RandomUniform's stream and has a gradient (below). */
#include "core/tensor_internal.h"
#include "ops/op_util.h"

/* Output shape from the 1-D `shape` input: "shape must be a vector of {int32,int64}" as TensorFlow. */
static bool random_shape_from_input(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    if (s->rank >= 0 && s->rank != 1)
        return TFC_OP_ERR(c, st, "shape must be a vector of {int32,int64}, got shape %s", SHP(s));
    tfc_shape out = {.rank = -1};
    const tfc_tensor *v = c->in_values[0];
    if (!v || !v->data) {
        if (s->rank == 1 && s->dims[0] >= 0) {
            if (s->dims[0] > TFC_MAX_RANK)
                return TFC_OP_ERR(c, st, "shape has %lld dimensions, more than the %d supported", (long long)s->dims[0],
                                  TFC_MAX_RANK);
            out.rank = (int)s->dims[0];
            for (int i = 0; i < out.rank; i++) out.dims[i] = -1;
        }
        tfc_set_out(c, 0, &out);
        return true;
    }
    if (v->num_elements > TFC_MAX_RANK)
        return TFC_OP_ERR(c, st, "shape has %lld dimensions, more than the %d supported", (long long)v->num_elements,
                          TFC_MAX_RANK);
    out.rank = (int)v->num_elements;
    for (int i = 0; i < out.rank; i++) {
        int64_t d = v->dtype == TFC_INT32 ? ((const int32_t *)v->data)[i] : ((const int64_t *)v->data)[i];
        if (d < 0) return TFC_OP_ERR(c, st, "Dimension %lld must be >= 0 (shape %s)", (long long)d, SHP(&out));
        out.dims[i] = d;
    }
    if (!tfc_check_out_shape(c, &out, st)) return false;
    tfc_set_out(c, 0, &out);
    return true;
}

static bool random_int_shape(tfc_shape_ctx *c, tfc_status *st) {
    for (int i = 1; i <= 2; i++)
        if (c->in_shapes[i].rank >= 0 && c->in_shapes[i].rank != 0)
            return TFC_OP_ERR(c, st, "%s must be 0-D, got shape %s", i == 1 ? "minval" : "maxval", SHP(&c->in_shapes[i]));
    if (!random_shape_from_input(c, st)) return false;
    const tfc_tensor *lo = c->in_values[1], *hi = c->in_values[2];
    const tfc_shape *out = &c->out_shapes[0];
    bool empty = false;
    for (int i = 0; i < out->rank; i++) empty |= out->dims[i] == 0;
    if (lo && hi && lo->data && hi->data && !empty) {
        int64_t a = lo->dtype == TFC_INT32 ? *(const int32_t *)lo->data : *(const int64_t *)lo->data;
        int64_t b = hi->dtype == TFC_INT32 ? *(const int32_t *)hi->data : *(const int64_t *)hi->data;
        if (a >= b) return TFC_OP_ERR(c, st, "Need minval < maxval, got %lld >= %lld", (long long)a, (long long)b);
    }
    return true;
}

#define SEED_ATTRS "seed: int = 0, seed2: int = 0, "

const tfc_op_def tfc_op_def_random_uniform = {
    .name = "RandomUniform", .inputs = "shape: T", .outputs = "output: dtype",
    .attrs = SEED_ATTRS "dtype: {half, bfloat16, float, double}, T: {int32, int64}",
    .shape = random_shape_from_input, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_random_standard_normal = {
    .name = "RandomStandardNormal", .inputs = "shape: T", .outputs = "output: dtype",
    .attrs = SEED_ATTRS "dtype: {half, bfloat16, float, double}, T: {int32, int64}",
    .shape = random_shape_from_input, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_truncated_normal = {
    .name = "TruncatedNormal", .inputs = "shape: T", .outputs = "output: dtype",
    .attrs = SEED_ATTRS "dtype: {half, bfloat16, float, double}, T: {int32, int64}",
    .shape = random_shape_from_input, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_random_uniform_int = {
    .name = "RandomUniformInt", .inputs = "shape: T, minval: Tout, maxval: Tout", .outputs = "output: Tout",
    .attrs = SEED_ATTRS "Tout: {int32, int64}, T: {int32, int64}",
    .shape = random_int_shape, .not_differentiable = true, .stateful = true,
};

/* ---- tfc-internal fused dropout (Keras Dropout in training, noise_shape None) ----
 * _TfcDropout(x) draws u = RandomUniform(shape(x), seed, seed2) from the same generator state as that
 * RandomUniform call (the stream continues across both ops) and returns, bit for bit as tf.nn.dropout's ops,
 *   output = (x * scale) * Cast(u >= rate)     scale = T(1 / (1 - rate)), rate compared as T(rate)
 *   mask   = u >= rate                          (kept for the gradient)
 * in one pass; _TfcDropoutGrad(dy, mask) = (dy * Cast(mask)) * scale, the unfused ops' gradient. */
static bool dropout_rate_ok(tfc_shape_ctx *c, tfc_status *st) {
    const double rate = tfc_attrs_float(c->attrs, "rate", 0);
    if (!(rate >= 0 && rate < 1)) return TFC_OP_ERR(c, st, "rate must be in [0, 1), got %g", rate);
    return true;
}

static bool dropout_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!dropout_rate_ok(c, st)) return false;
    tfc_set_out(c, 0, &c->in_shapes[0]);
    tfc_set_out(c, 1, &c->in_shapes[0]);
    return true;
}

static bool dropout_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!dropout_rate_ok(c, st)) return false;
    const tfc_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
    bool same = a->rank < 0 || b->rank < 0 || a->rank == b->rank;
    for (int i = 0; same && a->rank >= 0 && b->rank >= 0 && i < a->rank; i++)
        same = a->dims[i] < 0 || b->dims[i] < 0 || a->dims[i] == b->dims[i];
    if (!same) return TFC_OP_ERR(c, st, "dy %s and mask %s must have the same shape", SHP(a), SHP(b));
    tfc_set_out(c, 0, a->rank >= 0 ? a : b);
    return true;
}

static bool dropout_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a = TFC_ATTR_F("rate", tfc_attrs_float(g->attrs, "rate", 0));
    return (g->dx[0] = tfc_emit(g->ctx, "_TfcDropoutGrad", (tfc_tensor *[]){g->dy[0], g->out[1]}, 2, &a, 1, st)) !=
           NULL;
}

/* linear in dy: the same op on the upstream gradient; none for the mask */
static bool dropout_grad_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a = TFC_ATTR_F("rate", tfc_attrs_float(g->attrs, "rate", 0));
    return (g->dx[0] = tfc_emit(g->ctx, "_TfcDropoutGrad", (tfc_tensor *[]){g->dy[0], g->in[1]}, 2, &a, 1, st)) !=
           NULL;
}

const tfc_op_def tfc_op_def_tfc_dropout = {
    .name = "_TfcDropout", .inputs = "x: T", .outputs = "output: T, mask: bool",
    .attrs = "rate: float, " SEED_ATTRS "T: {float, double}",
    .shape = dropout_shape, .grad = dropout_grad_fn, .stateful = true,
};
const tfc_op_def tfc_op_def_tfc_dropout_grad = {
    .name = "_TfcDropoutGrad", .inputs = "dy: T, mask: bool", .outputs = "dx: T",
    .attrs = "rate: float, T: {float, double}",
    .shape = dropout_grad_shape, .grad = dropout_grad_grad_fn,
};

/* _TfcDropoutSeeded(x, seed) is _TfcDropout with its generator state given as an input instead of kept by the
 * kernel: the uniforms are the first ones a fresh _TfcDropout with attrs (seed, seed2) = (seed[0] ^ mix(salt),
 * seed[1]) would draw (salt 0: seed[0] itself). Keras's Dropout draws its seed pair from a seed-generator
 * variable (a captured resource of a traced train step), so an eager step and a traced one give the same masks. */
static bool dropout_seeded_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[1];
    if (s->rank >= 0 && (s->rank != 1 || (s->dims[0] >= 0 && s->dims[0] != 2)))
        return TFC_OP_ERR(c, st, "seed must be a vector of 2 elements, got shape %s", SHP(s));
    return dropout_shape(c, st);
}

const tfc_op_def tfc_op_def_tfc_dropout_seeded = {
    .name = "_TfcDropoutSeeded", .inputs = "x: T, seed: int64", .outputs = "output: T, mask: bool",
    .attrs = "rate: float, salt: int = 0, T: {float, double}",
    .shape = dropout_seeded_shape, .grad = dropout_grad_fn,
};

const tfc_op_def *const tfc_ops_random[] = {
    &tfc_op_def_random_uniform, &tfc_op_def_random_standard_normal, &tfc_op_def_truncated_normal,
    &tfc_op_def_random_uniform_int, &tfc_op_def_tfc_dropout, &tfc_op_def_tfc_dropout_grad,
    &tfc_op_def_tfc_dropout_seeded, NULL,
};
