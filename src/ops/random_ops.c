/* Stateful random ops (tensorflow/core/ops/random_ops.cc). All are Philox-based with TensorFlow's seed
 * attrs: (seed, seed2) = (0, 0) draws a nondeterministic seed once per cached kernel; any other pair
 * gives TensorFlow's exact stream, continued across calls with the same attrs (see kernels/cpu/random.c).
 * None is differentiable (TensorFlow registers them as NotDifferentiable). */
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

const tfc_op_def *const tfc_ops_random[] = {
    &tfc_op_def_random_uniform, &tfc_op_def_random_standard_normal, &tfc_op_def_truncated_normal,
    &tfc_op_def_random_uniform_int, NULL,
};
