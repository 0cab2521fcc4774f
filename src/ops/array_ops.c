/* Array ops (tensorflow/core/ops/array_ops.cc): reshaping, transposing, slicing, joining, padding, filling.
 * Shape functions validate everything with TensorFlow's messages; gradients follow
 * tensorflow/python/ops/array_grad.py and emit ops. */
#include <string.h>

#include "core/size_check.h"
#include "core/tensor_internal.h"
#include "ops/array_ops.h"

#define T_INDEX "{int32, int64} = int32"

/* ---- helpers ------------------------------------------------------------------------------------------- */

/* Input i's value when known (always in eager mode), NULL when symbolic. */
static const tfc_tensor *known(const tfc_shape_ctx *c, int i) {
    const tfc_tensor *t = c->in_values ? c->in_values[i] : NULL;
    return t && t->data ? t : NULL;
}

static int64_t int_at(const tfc_tensor *t, int64_t i) {
    switch (t->dtype) {
    case TFC_INT8: return ((const int8_t *)t->data)[i];
    case TFC_INT16: return ((const int16_t *)t->data)[i];
    case TFC_INT32: return ((const int32_t *)t->data)[i];
    case TFC_INT64: return ((const int64_t *)t->data)[i];
    default: return 0;
    }
}

static void read_all(const tfc_tensor *t, int64_t *out) {
    for (int64_t i = 0; i < t->num_elements; i++) out[i] = int_at(t, i);
}

static bool check_out_rank(tfc_shape_ctx *c, int64_t rank, tfc_status *st) {
    if (rank > TFC_MAX_RANK)
        return TFC_OP_ERR(c, st, "output rank %lld exceeds the maximum rank %d", (long long)rank, TFC_MAX_RANK);
    return true;
}

/* "[1099511627776,1099511627776]" for a dims list that may not fit a tfc_shape. */
static const char *dims_str(const int64_t *d, int64_t n, char *buf, size_t size) {
    size_t k = 0;
    k += (size_t)snprintf(buf, size, "[");
    for (int64_t i = 0; i < n && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)d[i]);
    if (k < size) snprintf(buf + k, size - k, "]");
    return buf;
}
#define DIMS(d, n) dims_str((d), (n), (char[160]){0}, 160)

/* Reads a shape-like vector input (Fill's dims, BroadcastTo's shape): rank 1, values >= 0, element count
 * within int64. Returns false with st set; *known_out = false when symbolic (dims then -1). */
static bool read_shape_input(tfc_shape_ctx *c, int i, const char *what, tfc_shape *out, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[i];
    if (s->rank >= 0 && s->rank != 1)
        return TFC_OP_ERR(c, st, "%s must represent a vector, got shape %s", what, SHP(s));
    const tfc_tensor *v = known(c, i);
    if (!v) {
        out->rank = s->rank < 0 || s->dims[0] < 0 ? -1 : (int)s->dims[0];
        if (out->rank > TFC_MAX_RANK) return check_out_rank(c, out->rank, st);
        for (int k = 0; k < out->rank; k++) out->dims[k] = -1;
        return true;
    }
    if (!check_out_rank(c, v->num_elements, st)) return false;
    int64_t d[TFC_MAX_RANK], n = 1;
    read_all(v, d);
    for (int64_t k = 0; k < v->num_elements; k++)
        if (d[k] < 0) return TFC_OP_ERR(c, st, "Dimension %lld must be >= 0", (long long)d[k]);
    for (int64_t k = 0; k < v->num_elements; k++)
        if (!tfc_mul_overflow_i64(n, d[k], &n))
            return TFC_OP_ERR(c, st, "Shape %s would have more than 2**63 - 1 elements", DIMS(d, v->num_elements));
    out->rank = (int)v->num_elements;
    memcpy(out->dims, d, sizeof(int64_t) * (size_t)out->rank);
    return true;
}

/* Reads a scalar (or single-element) int input such as an axis. -2 when symbolic, -1 on error. */
static int read_axis(tfc_shape_ctx *c, int i, int64_t *axis) {
    const tfc_tensor *v = known(c, i);
    if (!v) return -2;
    *axis = int_at(v, 0);
    return 0;
}

/* ---- Identity, StopGradient, ZerosLike, OnesLike --------------------------------------------------------- */
static bool identity_grad(tfc_grad_ctx *g, tfc_status *st) {
    g->dx[0] = g->dy[0];
    return true;
}

const tfc_op_def tfc_op_def_identity = {
    .name = "Identity", .inputs = "input: T", .outputs = "output: T", .attrs = "T: type",
    .shape = tfc_shape_same_as_input0, .grad = identity_grad,
};
const tfc_op_def tfc_op_def_stop_gradient = {
    .name = "StopGradient", .inputs = "input: T", .outputs = "output: T", .attrs = "T: type",
    .shape = tfc_shape_same_as_input0, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_zeros_like = {
    .name = "ZerosLike", .inputs = "x: T", .outputs = "y: T", .attrs = "T: type",
    .shape = tfc_shape_same_as_input0, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_ones_like = {
    .name = "OnesLike", .inputs = "x: T", .outputs = "y: T", .attrs = "T: {" TFC_T_REAL ", bool}",
    .shape = tfc_shape_same_as_input0, .not_differentiable = true,
};

/* ---- Shape, Size, Rank ----------------------------------------------------------------------------------- */
static bool shape_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    if (c->out_dtypes[0] == TFC_INT32)
        for (int i = 0; i < s->rank; i++)
            if (s->dims[i] > INT32_MAX)
                return TFC_OP_ERR(c, st, "Shape output type is 32-bit  but dim %d is %lld", i, (long long)s->dims[i]);
    c->out_shapes[0] = (tfc_shape){.rank = 1, .dims = {s->rank}};
    return true;
}
static bool size_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    int64_t n = 1;
    if (c->out_dtypes[0] == TFC_INT32 && tfc_shape_is_fully_defined(s) && tfc_shape_num_elements(s, &n, NULL, st) &&
        n > INT32_MAX)
        return TFC_OP_ERR(c, st, "Number of elements was larger than representable by 32-bit output type");
    c->out_shapes[0].rank = 0;
    return true;
}

const tfc_op_def tfc_op_def_shape = {
    .name = "Shape", .inputs = "input: T", .outputs = "output: out_type",
    .attrs = "T: type, out_type: " T_INDEX, .shape = shape_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_size = {
    .name = "Size", .inputs = "input: T", .outputs = "output: out_type",
    .attrs = "T: type, out_type: " T_INDEX, .shape = size_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_rank = {
    .name = "Rank", .inputs = "input: T", .outputs = "output: int32", .attrs = "T: type",
    .shape = tfc_shape_scalar, .not_differentiable = true,
};

/* Shape(x) as a tensor of dtype dt (int32/int64) emitted as an op, so gradients trace into graphs. */
static tfc_tensor *emit_shape(tfc_ctx *ctx, tfc_tensor *x, tfc_dtype dt, tfc_status *st) {
    tfc_attr a = TFC_ATTR_T("out_type", dt);
    return tfc_emit(ctx, "Shape", &x, 1, &a, 1, st);
}

/* Gradient of ops that only change the shape: reshape dy back to the input's shape. */
static bool reshape_to_input_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *s = emit_shape(g->ctx, g->in[0], TFC_INT32, st);
    return s && (g->dx[0] = tfc_emit(g->ctx, "Reshape", (tfc_tensor *[]){g->dy[0], s}, 2, NULL, 0, st));
}

/* ---- Reshape --------------------------------------------------------------------------------------------- */
static bool reshape_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *ss = &c->in_shapes[1];
    if (ss->rank >= 0 && ss->rank != 1) return TFC_OP_ERR(c, st, "sizes input must be 1-D, not %s", SHP(ss));
    const tfc_tensor *v = known(c, 1);
    tfc_shape *out = &c->out_shapes[0];
    if (!v) {
        out->rank = ss->rank < 0 || ss->dims[0] < 0 ? -1 : (int)ss->dims[0];
        if (!check_out_rank(c, out->rank, st)) return false;
        for (int i = 0; i < out->rank; i++) out->dims[i] = -1;
        return true;
    }
    if (!check_out_rank(c, v->num_elements, st)) return false;
    int n = (int)v->num_elements, unknown = -1;
    int64_t d[TFC_MAX_RANK], product = 1; /* product of the known non-zero sizes (INT64_MAX past int64) */
    int64_t count = 1;                      /* left to right with the zeros, as TensorFlow checks it */
    bool has_zero = false;
    read_all(v, d);
    for (int i = 0; i < n; i++) {
        if (d[i] == -1) {
            if (unknown >= 0) return TFC_OP_ERR(c, st, "Only one input size may be -1, not both %d and %d", unknown, i);
            unknown = i;
        } else if (d[i] < 0) {
            return TFC_OP_ERR(c, st, "Size %d must be non-negative, not %lld", i, (long long)d[i]);
        } else {
            if (!tfc_size_mul(count, d[i], &count)) return TFC_OP_ERR(c, st, "Shape %s has too many elements", DIMS(d, n));
            if (d[i] == 0) has_zero = true;
            else if (!tfc_size_mul(product, d[i], &product)) product = INT64_MAX;
        }
    }
    out->rank = n;
    memcpy(out->dims, d, sizeof(int64_t) * (size_t)n);
    if (!tfc_shape_is_fully_defined(in)) {
        if (unknown >= 0) out->dims[unknown] = -1;
        return true;
    }
    int64_t in_n = 1;
    if (unknown >= 0) {
        /* Zero-sized input dims are left out when the requested shape has a zero too, so that the other
         * dims can still be inferred (TensorFlow's rule: [0,3] -> [0,-1] gives [0,3]). */
        bool in_zero = false;
        for (int i = 0; i < in->rank; i++) {
            if (in->dims[i] > 0 || !has_zero) {
                if (!tfc_size_mul(in_n, in->dims[i], &in_n))
                    return TFC_OP_ERR(c, st, "Reshape cannot infer the missing input size for %s: the non-zero input "
                                             "dims multiply past int64", SHP(in));
            } else {
                in_zero = true;
            }
        }
        int64_t missing = product ? in_n / product : 0;
        if (!in_zero && product * missing != in_n) /* size-ok: missing = in_n / product */
            return TFC_OP_ERR(c, st, "Input to reshape is a tensor with %lld values, but the requested shape requires a multiple of %lld",
                              (long long)in_n, (long long)product);
        out->dims[unknown] = missing;
    }
    int64_t want, have;
    if (!tfc_shape_num_elements(out, &want, c->op->name, st) || !tfc_shape_num_elements(in, &have, c->op->name, st))
        return false;
    if (want != have)
        return TFC_OP_ERR(c, st, "Input to reshape is a tensor with %lld values, but the requested shape has %lld",
                          (long long)have, (long long)want);
    return true;
}

const tfc_op_def tfc_op_def_reshape = {
    .name = "Reshape", .inputs = "tensor: T, shape: Tshape", .outputs = "output: T",
    .attrs = "T: type, Tshape: " T_INDEX, .shape = reshape_shape, .grad = reshape_to_input_grad,
};

/* ---- ExpandDims, Squeeze ----------------------------------------------------------------------------------- */
static bool expand_dims_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    const tfc_tensor *v = known(c, 1);
    int64_t nd = 1;
    bool nd_known = tfc_shape_is_fully_defined(&c->in_shapes[1]) &&
                    tfc_shape_num_elements(&c->in_shapes[1], &nd, c->op->name, st);
    if (nd_known && nd != 1) return TFC_OP_ERR(c, st, "'dim' must be a tensor with a single value");
    if (in->rank < 0 || !v) {
        c->out_shapes[0].rank = in->rank < 0 ? -1 : in->rank + 1;
        for (int i = 0; i < c->out_shapes[0].rank; i++) c->out_shapes[0].dims[i] = -1;
        return check_out_rank(c, c->out_shapes[0].rank, st);
    }
    int64_t d = int_at(v, 0);
    if (d < -1 - in->rank || d > in->rank)
        return TFC_OP_ERR(c, st, "Tried to expand dim index %lld for tensor with %d dimensions.", (long long)d, in->rank);
    if (d < 0) d += in->rank + 1;
    if (!check_out_rank(c, in->rank + 1, st)) return false;
    tfc_shape *o = &c->out_shapes[0];
    o->rank = in->rank + 1;
    for (int i = 0, k = 0; i < o->rank; i++) o->dims[i] = i == d ? 1 : in->dims[k++];
    return true;
}

static bool expand_dims_grad(tfc_grad_ctx *g, tfc_status *st) { return reshape_to_input_grad(g, st); }

const tfc_op_def tfc_op_def_expand_dims = {
    .name = "ExpandDims", .inputs = "input: T, dim: Tdim", .outputs = "output: T",
    .attrs = "T: type, Tdim: " T_INDEX, .shape = expand_dims_shape, .grad = expand_dims_grad,
};

static bool squeeze_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    int n;
    const int64_t *dims = tfc_attrs_ints(c->attrs, "squeeze_dims", &n);
    tfc_shape *o = &c->out_shapes[0];
    if (in->rank < 0) {
        o->rank = -1;
        return true;
    }
    bool drop[TFC_MAX_RANK] = {0};
    for (int k = 0; k < n; k++) {
        int64_t d = dims[k];
        if (d < -in->rank || d >= in->rank)
            return TFC_OP_ERR(c, st, "Tried to squeeze dim index %lld for tensor with %d dimensions.", (long long)d,
                              in->rank);
        if (d < 0) d += in->rank;
        if (in->dims[d] != 1 && in->dims[d] != -1) /* TensorFlow's words, and the index as given */
            return TFC_OP_ERR(c, st, "Can not squeeze dim[%lld], expected a dimension of 1, got %lld%s", (long long)d,
                              (long long)in->dims[d], tfc_given_note("squeeze_dims entry", dims[k], d));
        drop[d] = true;
    }
    o->rank = 0;
    for (int i = 0; i < in->rank; i++) {
        if (n == 0 && in->dims[i] == -1) { /* might be 1: the result rank is unknown */
            o->rank = -1;
            return true;
        }
        if (n ? !drop[i] : in->dims[i] != 1) o->dims[o->rank++] = in->dims[i];
    }
    return true;
}

const tfc_op_def tfc_op_def_squeeze = {
    .name = "Squeeze", .inputs = "input: T", .outputs = "output: T", .attrs = "T: type, squeeze_dims: list(int) >= 0 = []",
    .shape = squeeze_shape, .grad = reshape_to_input_grad,
};

/* ---- InvertPermutation, Transpose ---------------------------------------------------------------------------- */
static bool invert_permutation_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    if (s->rank >= 0 && s->rank != 1) return TFC_OP_ERR(c, st, "invert_permutation expects a 1D vector.");
    const tfc_tensor *v = known(c, 0);
    if (v) {
        int64_t n = v->num_elements;
        if (n > INT32_MAX) return TFC_OP_ERR(c, st, "permutation of %lld elements is too large", (long long)n);
        uint8_t *seen = tfc_calloc((size_t)(n ? n : 1), 1);
        if (!seen) return tfc_status_oom(st, c->op->name, (size_t)n);
        for (int64_t i = 0; i < n; i++) {
            int64_t d = int_at(v, i);
            if (d < 0 || d >= n) {
                tfc_free(seen);
                return TFC_OP_ERR(c, st, "%lld is not between 0 and %lld", (long long)d, (long long)n);
            }
            if (seen[d]) {
                tfc_free(seen);
                return TFC_OP_ERR(c, st, "%lld is duplicated in the input.", (long long)d);
            }
            seen[d] = 1;
        }
        tfc_free(seen);
    }
    c->out_shapes[0] = *s;
    return true;
}

const tfc_op_def tfc_op_def_invert_permutation = {
    .name = "InvertPermutation", .inputs = "x: T", .outputs = "y: T", .attrs = "T: " T_INDEX,
    .shape = invert_permutation_shape, .not_differentiable = true,
};

static bool transpose_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *ps = &c->in_shapes[1];
    if (ps->rank >= 0 && ps->rank != 1) return TFC_OP_ERR(c, st, "perm must be rank 1, got shape %s", SHP(ps));
    const tfc_tensor *v = known(c, 1);
    tfc_shape *o = &c->out_shapes[0];
    if (v && in->rank >= 0 && v->num_elements != in->rank)
        return TFC_OP_ERR(c, st, "transpose expects a vector of size %d. But input(1) is a vector of size %lld", in->rank,
                          (long long)v->num_elements);
    if (!v || in->rank < 0) {
        o->rank = in->rank >= 0 ? in->rank : ps->rank == 1 ? (int)ps->dims[0] : -1;
        for (int i = 0; i < o->rank; i++) o->dims[i] = -1;
        return true;
    }
    int r = in->rank;
    int64_t p[TFC_MAX_RANK] = {0}, given_p[TFC_MAX_RANK];
    bool seen[TFC_MAX_RANK] = {0};
    read_all(v, p);
    memcpy(given_p, p, sizeof p);
    for (int i = 0; i < r; i++) {
        int64_t given = p[i]; /* the messages quote the caller's values, not the normalised ones */
        if (p[i] < 0 && p[i] >= -r) p[i] += r; /* TensorFlow accepts perm entries in [-rank, rank) */
        if (p[i] < 0 || p[i] >= r) return TFC_OP_ERR(c, st, "%lld is out of range [0 .. %d)", (long long)given, r);
        seen[p[i]] = true;
    }
    for (int i = 0; i < r; i++)
        if (!seen[i]) {
            char list[96];
            size_t k = 0;
            list[0] = 0;
            for (int j = 0; j < r && k < sizeof list; j++)
                k += (size_t)snprintf(list + k, sizeof list - k, "%s%lld", j ? "," : "", (long long)p[j]);
        {
            char given_list[96];
            size_t g = 0;
            bool differ = false;
            given_list[0] = 0;
            for (int j = 0; j < r && g < sizeof given_list; j++) {
                g += (size_t)snprintf(given_list + g, sizeof given_list - g, "%s%lld", j ? "," : "", (long long)given_p[j]);
                differ |= given_p[j] != p[j];
            }
            return TFC_OP_ERR(c, st, "%d is missing from {%s}.%s%s%s", i, list, differ ? " (perm {" : "",
                              differ ? given_list : "", differ ? "} as given)" : "");
        }
        }
    o->rank = r;
    for (int i = 0; i < r; i++) o->dims[i] = in->dims[p[i]];
    return true;
}

static bool transpose_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *p = g->in[1];
    tfc_tensor *inv = tfc_emit(g->ctx, "InvertPermutation", &p, 1, NULL, 0, st);
    return inv && (g->dx[0] = tfc_emit(g->ctx, "Transpose", (tfc_tensor *[]){g->dy[0], inv}, 2, NULL, 0, st));
}

const tfc_op_def tfc_op_def_transpose = {
    .name = "Transpose", .inputs = "x: T, perm: Tperm", .outputs = "y: T", .attrs = "T: type, Tperm: " T_INDEX,
    .shape = transpose_shape, .grad = transpose_grad,
};

/* ---- Fill, BroadcastTo, Tile ------------------------------------------------------------------------------- */
static bool fill_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *vs = &c->in_shapes[1];
    if (vs->rank > 0) return TFC_OP_ERR(c, st, "value must represent a scalar, got shape %s", SHP(vs));
    return read_shape_input(c, 0, "dims", &c->out_shapes[0], st);
}

/* Sum of dy over all its axes (the gradient of a broadcast scalar). */
static tfc_tensor *sum_all(tfc_ctx *ctx, tfc_tensor *dy, tfc_status *st) {
    int64_t axes[TFC_MAX_RANK];
    for (int i = 0; i < dy->shape.rank; i++) axes[i] = i;
    tfc_tensor *ax = tfc_vec_i64(axes, dy->shape.rank, st);
    if (!ax) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Sum", (tfc_tensor *[]){dy, ax}, 2, NULL, 0, st);
    tfc_tensor_unref(ax);
    return r;
}

static bool fill_grad(tfc_grad_ctx *g, tfc_status *st) { return (g->dx[1] = sum_all(g->ctx, g->dy[0], st)) != NULL; }

const tfc_op_def tfc_op_def_fill = {
    .name = "Fill", .inputs = "dims: index_type, value: T", .outputs = "output: T",
    .attrs = "T: type, index_type: " T_INDEX, .shape = fill_shape, .grad = fill_grad,
};

static bool broadcast_to_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *ss = &c->in_shapes[1];
    if (ss->rank >= 0 && ss->rank != 1)
        return TFC_OP_ERR(c, st, "shape must be a vector of {int32,int64}, got shape %s", SHP(ss));
    tfc_shape *o = &c->out_shapes[0];
    if (!read_shape_input(c, 1, "shape", o, st)) return false;
    if (in->rank < 0 || o->rank < 0) return true;
    if (in->rank > o->rank)
        return TFC_OP_ERR(c, st, "Rank of input (%d) must be no greater than rank of output shape (%d).", in->rank, o->rank);
    for (int i = 0; i < in->rank; i++) {
        int64_t a = in->dims[i], b = o->dims[o->rank - in->rank + i];
        if (a == b || a == 1 || a == -1 || b == -1) continue;
        if (b == 1)
            return TFC_OP_ERR(c, st, "Unable to broadcast tensor of shape %s to tensor of shape %s", SHP(in), SHP(o));
        return TFC_OP_ERR(c, st, "Incompatible shapes: %s vs. %s", SHP(in), SHP(o));
    }
    return true;
}

static bool broadcast_to_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (g->dx[0] = tfc_grad_unbroadcast(g->ctx, g->dy[0], g->in[0], st)) != NULL;
}

const tfc_op_def tfc_op_def_broadcast_to = {
    .name = "BroadcastTo", .inputs = "input: T, shape: Tidx", .outputs = "output: T",
    .attrs = "T: type, Tidx: " T_INDEX, .shape = broadcast_to_shape, .grad = broadcast_to_grad,
};

static bool tile_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *ms = &c->in_shapes[1];
    if (ms->rank >= 0 && ms->rank != 1) return TFC_OP_ERR(c, st, "Expected multiples to be 1-D, but got shape %s", SHP(ms));
    const tfc_tensor *v = known(c, 1);
    tfc_shape *o = &c->out_shapes[0];
    if (in->rank >= 0 && ms->rank == 1 && ms->dims[0] >= 0 && ms->dims[0] != in->rank)
        return TFC_OP_ERR(c, st, "Expected multiples argument to be a vector of length %d but got length %lld", in->rank,
                          (long long)ms->dims[0]);
    o->rank = in->rank >= 0 ? in->rank : ms->rank == 1 ? (int)ms->dims[0] : -1;
    if (!check_out_rank(c, o->rank, st)) return false;
    int64_t m[TFC_MAX_RANK] = {0};
    if (v) read_all(v, m);
    for (int i = 0; i < o->rank; i++) {
        if (v && m[i] < 0) return TFC_OP_ERR(c, st, "Expected multiples[%d] >= 0, but got %lld", i, (long long)m[i]);
        int64_t d = in->rank >= 0 ? in->dims[i] : -1;
        if (!v || d < 0) {
            o->dims[i] = -1;
        } else if (!tfc_mul_overflow_i64(d, m[i], &o->dims[i])) {
            return TFC_OP_ERR(c, st, "Encountered overflow when multiplying %lld with %lld, result: -1", (long long)d,
                              (long long)m[i]);
        }
    }
    return tfc_check_out_shape(c, o, st);
}

/* Tile's gradient (array_grad.py): view dy as [m0, d0, m1, d1, ...] and sum the multiple axes. */
static bool tile_grad(tfc_grad_ctx *g, tfc_status *st) {
    const tfc_shape *xs = &g->in[0]->shape;
    const tfc_tensor *mt = g->in[1];
    if (!mt->data) return tfc_status_set(st, TFC_UNIMPLEMENTED, "Tile gradient: multiples must be known");
    if (xs->rank == 0) {
        g->dx[0] = g->dy[0];
        return true;
    }
    int64_t split[2 * TFC_MAX_RANK], axes[TFC_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) {
        split[2 * i] = int_at(mt, i);
        split[2 * i + 1] = xs->dims[i];
        axes[i] = 2 * i;
    }
    if (2 * xs->rank > TFC_MAX_RANK) {
        /* Too many dims for one reshape: sum one multiple at a time, viewing dy as [pre, m_i, d_i, post]. */
        tfc_tensor *cur = g->dy[0];
        int64_t pre = 1;
        for (int i = 0; i < xs->rank; i++) {
            int64_t post = 1;
            for (int k = i + 1; k < xs->rank; k++) post *= split[2 * k] * split[2 * k + 1];
            int64_t s[4] = {pre, split[2 * i], split[2 * i + 1], post};
            tfc_tensor *sv = tfc_vec_i64(s, 4, st), *ax = sv ? tfc_scalar_i64(1, st) : NULL;
            tfc_tensor *r = ax ? tfc_emit(g->ctx, "Reshape", (tfc_tensor *[]){cur, sv}, 2, NULL, 0, st) : NULL;
            cur = r ? tfc_emit(g->ctx, "Sum", (tfc_tensor *[]){r, ax}, 2, NULL, 0, st) : NULL;
            tfc_tensor_unref(sv);
            tfc_tensor_unref(ax);
            if (!cur) return false;
            pre *= split[2 * i + 1];
        }
        tfc_tensor *xsh = emit_shape(g->ctx, g->in[0], TFC_INT64, st);
        return xsh && (g->dx[0] = tfc_emit(g->ctx, "Reshape", (tfc_tensor *[]){cur, xsh}, 2, NULL, 0, st));
    }
    tfc_tensor *sv = tfc_vec_i64(split, 2 * xs->rank, st);
    tfc_tensor *ax = sv ? tfc_vec_i64(axes, xs->rank, st) : NULL;
    tfc_tensor *r = ax ? tfc_emit(g->ctx, "Reshape", (tfc_tensor *[]){g->dy[0], sv}, 2, NULL, 0, st) : NULL;
    g->dx[0] = r ? tfc_emit(g->ctx, "Sum", (tfc_tensor *[]){r, ax}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(sv);
    tfc_tensor_unref(ax);
    return g->dx[0] != NULL;
}

const tfc_op_def tfc_op_def_tile = {
    .name = "Tile", .inputs = "input: T, multiples: Tmultiples", .outputs = "output: T",
    .attrs = "T: type, Tmultiples: " T_INDEX, .shape = tile_shape, .grad = tile_grad,
};

/* ---- Pad, PadV2, MirrorPad, MirrorPadGrad ------------------------------------------------------------------ */
bool tfc_array_read_paddings(const char *op, const tfc_shape *ps, const tfc_tensor *p, const tfc_shape *in,
                             int64_t pad[][2], bool *known_out, tfc_status *st) {
    if (ps->rank != 2 || ps->dims[1] != 2)
        return tfc_op_error(op, st, "paddings must be a matrix with 2 columns: %s", SHP(ps));
    if (in->rank >= 0 && ps->dims[0] != in->rank)
        return tfc_op_error(op, st, "The first dimension of paddings must be the rank of inputs%s, %s", SHP(ps), SHP(in));
    *known_out = p && p->data && in->rank >= 0;
    if (*known_out)
        for (int i = 0; i < in->rank; i++) {
            pad[i][0] = int_at(p, 2 * i);
            pad[i][1] = int_at(p, 2 * i + 1);
        }
    return true;
}

static bool pad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    int64_t pad[TFC_MAX_RANK][2];
    bool kn;
    if (c->n_in == 3 && c->in_shapes[2].rank > 0)
        return TFC_OP_ERR(c, st, "constant_values must be a scalar. Found: %s", SHP(&c->in_shapes[2]));
    if (!tfc_array_read_paddings(c->op->name, &c->in_shapes[1], known(c, 1), in, pad, &kn, st)) return false;
    tfc_shape *o = &c->out_shapes[0];
    o->rank = in->rank;
    for (int i = 0; i < in->rank; i++) {
        if (!kn) {
            o->dims[i] = -1;
            continue;
        }
        if (pad[i][0] < 0 || pad[i][1] < 0)
            return TFC_OP_ERR(c, st, "Paddings must be non-negative: %lld %lld", (long long)pad[i][0], (long long)pad[i][1]);
        int64_t d = in->dims[i];
        if (d < 0) {
            o->dims[i] = -1;
        } else if (__builtin_add_overflow(d, pad[i][0], &o->dims[i]) ||
                   __builtin_add_overflow(o->dims[i], pad[i][1], &o->dims[i])) {
            return TFC_OP_ERR(c, st, "output dimension %d overflows: %lld + %lld + %lld", i, (long long)pad[i][0],
                              (long long)d, (long long)pad[i][1]);
        }
    }
    return tfc_check_out_shape(c, o, st);
}

/* Pad's gradient: slice dy at begin = paddings[:, 0] with the input's size. */
static bool pad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *p = g->in[1];
    int r = g->in[0]->shape.rank;
    int64_t b0[2] = {0, 0}, sz[2] = {r, 1}, flat = -1;
    tfc_tensor *bt = tfc_vec_i64(b0, 2, st), *st_ = bt ? tfc_vec_i64(sz, 2, st) : NULL;
    tfc_tensor *fl = st_ ? tfc_vec_i64(&flat, 1, st) : NULL;
    tfc_tensor *before = fl ? tfc_emit(g->ctx, "Slice", (tfc_tensor *[]){p, bt, st_}, 3, NULL, 0, st) : NULL;
    tfc_tensor *begin = before ? tfc_emit(g->ctx, "Reshape", (tfc_tensor *[]){before, fl}, 2, NULL, 0, st) : NULL;
    tfc_tensor *size = begin ? emit_shape(g->ctx, g->in[0], p->dtype, st) : NULL;
    g->dx[0] = size ? tfc_emit(g->ctx, "Slice", (tfc_tensor *[]){g->dy[0], begin, size}, 3, NULL, 0, st) : NULL;
    tfc_tensor_unref(bt);
    tfc_tensor_unref(st_);
    tfc_tensor_unref(fl);
    return g->dx[0] != NULL;
}

const tfc_op_def tfc_op_def_pad = {
    .name = "Pad", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
    .attrs = "T: type, Tpaddings: " T_INDEX, .shape = pad_shape, .grad = pad_grad,
};
const tfc_op_def tfc_op_def_pad_v2 = {
    .name = "PadV2", .inputs = "input: T, paddings: Tpaddings, constant_values: T", .outputs = "output: T",
    .attrs = "T: type, Tpaddings: " T_INDEX, .shape = pad_shape, .grad = pad_grad,
};

static bool mirror_pad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    int64_t pad[TFC_MAX_RANK][2];
    bool kn, reflect = !strcmp(tfc_attrs_string(c->attrs, "mode", ""), "REFLECT");
    if (!tfc_array_read_paddings(c->op->name, &c->in_shapes[1], known(c, 1), in, pad, &kn, st)) return false;
    tfc_shape *o = &c->out_shapes[0];
    o->rank = in->rank;
    for (int i = 0; i < in->rank; i++) {
        int64_t a = kn ? pad[i][0] : 0, b = kn ? pad[i][1] : 0, d = in->dims[i];
        if (a < 0 || b < 0) return TFC_OP_ERR(c, st, "paddings must be non-negative: %lld %lld", (long long)a, (long long)b);
        if (!kn || d < 0) {
            o->dims[i] = -1;
            continue;
        }
        if (reflect && (a >= d || b >= d))
            return TFC_OP_ERR(c, st, "paddings must be less than the dimension size: %lld, %lld not less than %lld",
                              (long long)a, (long long)b, (long long)d);
        if (!reflect && (a > d || b > d))
            return TFC_OP_ERR(c, st, "paddings must be no greater than the dimension size: %lld, %lld greater than %lld",
                              (long long)a, (long long)b, (long long)d);
        o->dims[i] = d + a + b; /* a, b <= d: no overflow for any allocatable input */
    }
    return tfc_check_out_shape(c, o, st);
}

static bool mirror_pad_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    int64_t pad[TFC_MAX_RANK][2];
    bool kn, reflect = !strcmp(tfc_attrs_string(c->attrs, "mode", ""), "REFLECT");
    if (!tfc_array_read_paddings(c->op->name, &c->in_shapes[1], known(c, 1), in, pad, &kn, st)) return false;
    tfc_shape *o = &c->out_shapes[0];
    o->rank = in->rank;
    for (int i = 0; i < in->rank; i++) {
        int64_t a = kn ? pad[i][0] : 0, b = kn ? pad[i][1] : 0, d = in->dims[i];
        if (a < 0 || b < 0) return TFC_OP_ERR(c, st, "Paddings must be non-negative: %lld, %lld", (long long)a, (long long)b);
        if (!kn || d < 0) {
            o->dims[i] = -1;
            continue;
        }
        int64_t total;
        if (__builtin_add_overflow(a, b, &total)) total = INT64_MAX;
        if (total >= d)
            return TFC_OP_ERR(c, st, "Total paddings must be less than the input dimension size: %lld was not less than %lld",
                              (long long)total, (long long)d);
        int64_t out = d - a - b;
        if (reflect && (a >= out || b >= out))
            return TFC_OP_ERR(c, st, "paddings must be less than the output dimension size: %lld, %lld not less than %lld",
                              (long long)a, (long long)b, (long long)out);
        if (!reflect && (a > out || b > out))
            return TFC_OP_ERR(c, st, "paddings must be no greater than the output dimension size: %lld, %lld greater than %lld",
                              (long long)a, (long long)b, (long long)out);
        o->dims[i] = out;
    }
    return true;
}

static bool mirror_pad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a = TFC_ATTR_S("mode", tfc_attrs_string(g->attrs, "mode", "REFLECT"));
    return (g->dx[0] = tfc_emit(g->ctx, "MirrorPadGrad", (tfc_tensor *[]){g->dy[0], g->in[1]}, 2, &a, 1, st)) != NULL;
}
static bool mirror_pad_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a = TFC_ATTR_S("mode", tfc_attrs_string(g->attrs, "mode", "REFLECT"));
    return (g->dx[0] = tfc_emit(g->ctx, "MirrorPad", (tfc_tensor *[]){g->dy[0], g->in[1]}, 2, &a, 1, st)) != NULL;
}

const tfc_op_def tfc_op_def_mirror_pad = {
    .name = "MirrorPad", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
    .attrs = "T: type, Tpaddings: " T_INDEX ", mode: {'REFLECT', 'SYMMETRIC'}", .shape = mirror_pad_shape,
    .grad = mirror_pad_grad,
};
const tfc_op_def tfc_op_def_mirror_pad_grad = {
    .name = "MirrorPadGrad", .inputs = "input: T, paddings: Tpaddings", .outputs = "output: T",
    .attrs = "T: type, Tpaddings: " T_INDEX ", mode: {'REFLECT', 'SYMMETRIC'}",
    .shape = mirror_pad_grad_shape, .grad = mirror_pad_grad_grad,
};

/* ---- ConcatV2, Pack, Unpack, Split, SplitV ------------------------------------------------------------------ */
static bool concat_shape(tfc_shape_ctx *c, tfc_status *st) {
    int n = c->n_in - 1;
    const tfc_shape *s0 = &c->in_shapes[0], *as = &c->in_shapes[n];
    if (as->rank > 1 || (as->rank == 1 && as->dims[0] != 1))
        return TFC_OP_ERR(c, st, "axis tensor should be a scalar integer, but got shape %s", SHP(as));
    tfc_shape *o = &c->out_shapes[0];
    int64_t axis = 0;
    bool axis_known = read_axis(c, n, &axis) == 0;
    int r = -1;
    for (int i = 0; i < n && r < 0; i++) r = c->in_shapes[i].rank;
    if (r == 0) return TFC_OP_ERR(c, st, "Can't concatenate scalars (use tf.stack instead)");
    if (r < 0 || !axis_known) {
        o->rank = r;
        for (int i = 0; i < r; i++) o->dims[i] = -1;
        return true;
    }
    if (axis < -r || axis >= r)
        return TFC_OP_ERR(c, st, "ConcatOp : Expected concatenating dimensions in the range [%d, %d), but got %lld", -r, r,
                          (long long)axis);
    if (axis < 0) axis += r;
    *o = *s0;
    for (int i = 1; i < n; i++) {
        const tfc_shape *si = &c->in_shapes[i];
        if (si->rank < 0) continue;
        if (si->rank != r)
            return TFC_OP_ERR(c, st, "ConcatOp : Ranks of all input tensors should match: shape[0] = %s vs. shape[%d] = %s",
                              SHP(s0), i, SHP(si));
        for (int d = 0; d < r; d++) {
            if (d == axis) {
                if (o->dims[d] < 0 || si->dims[d] < 0) {
                    o->dims[d] = -1;
                } else if (!tfc_size_add(o->dims[d], si->dims[d], &o->dims[d])) {
                    return TFC_OP_ERR(c, st, "ConcatOp : output dimension %d overflows int64 (adding %lld of shape[%d] = %s)",
                                      d, (long long)si->dims[d], i, SHP(si));
                }
            } else if (o->dims[d] >= 0 && si->dims[d] >= 0 && o->dims[d] != si->dims[d]) {
                return TFC_OP_ERR(c, st, "ConcatOp : Dimension %d in both shapes must be equal: shape[0] = %s vs. shape[%d] = %s",
                                  d, SHP(s0), i, SHP(si));
            } else if (o->dims[d] < 0) {
                o->dims[d] = si->dims[d];
            }
        }
    }
    return true;
}

/* Concat's gradient: in eager mode (known axis and shapes) split dy back with SplitV. */
static bool concat_grad(tfc_grad_ctx *g, tfc_status *st) {
    int n = g->n_in - 1;
    const tfc_tensor *at = g->in[n];
    if (!at->data) return tfc_status_set(st, TFC_UNIMPLEMENTED, "ConcatV2 gradient: axis must be known");
    int r = g->in[0]->shape.rank;
    int64_t axis = int_at(at, 0);
    if (axis < 0) axis += r;
    int64_t sizes[TFC_MAX_IO];
    for (int i = 0; i < n; i++) sizes[i] = g->in[i]->shape.dims[axis];
    tfc_tensor *sz = tfc_vec_i64(sizes, n, st), *ax = sz ? tfc_scalar_i32((int32_t)axis, st) : NULL;
    tfc_attr a = TFC_ATTR_I("num_split", n);
    int got = ax ? tfc_execute(g->ctx, "SplitV", (tfc_tensor *[]){g->dy[0], sz, ax}, 3, &a, 1, g->dx, n, st) : -1;
    tfc_tensor_unref(sz);
    tfc_tensor_unref(ax);
    return got == n;
}

const tfc_op_def tfc_op_def_concat_v2 = {
    .name = "ConcatV2", .inputs = "values: N * T, axis: Tidx", .outputs = "output: T",
    .attrs = "N: int >= 2, T: type, Tidx: " T_INDEX, .shape = concat_shape, .grad = concat_grad,
};

static bool pack_shape(tfc_shape_ctx *c, tfc_status *st) {
    int n = c->n_in;
    const tfc_shape *s0 = &c->in_shapes[0];
    int64_t axis = tfc_attrs_int(c->attrs, "axis", 0);
    for (int i = 1; i < n; i++)
        if (!tfc_shape_equal(s0, &c->in_shapes[i]) && s0->rank >= 0 && c->in_shapes[i].rank >= 0) {
            bool compatible = s0->rank == c->in_shapes[i].rank;
            for (int d = 0; compatible && d < s0->rank; d++)
                compatible = s0->dims[d] < 0 || c->in_shapes[i].dims[d] < 0 || s0->dims[d] == c->in_shapes[i].dims[d];
            if (!compatible)
                return TFC_OP_ERR(c, st, "Shapes of all inputs must match: values[0].shape = %s != values[%d].shape = %s",
                                  SHP(s0), i, SHP(&c->in_shapes[i]));
        }
    tfc_shape *o = &c->out_shapes[0];
    if (s0->rank < 0) {
        o->rank = -1;
        return true;
    }
    int r = s0->rank + 1;
    if (axis < -r || axis >= r) return TFC_OP_ERR(c, st, "axis = %lld not in [%d, %d)", (long long)axis, -r, r);
    if (!check_out_rank(c, r, st)) return false;
    if (axis < 0) axis += r;
    o->rank = r;
    for (int i = 0, k = 0; i < r; i++) o->dims[i] = i == axis ? n : s0->dims[k++];
    return true;
}

static bool pack_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[2] = {TFC_ATTR_I("num", g->n_in), TFC_ATTR_I("axis", tfc_attrs_int(g->attrs, "axis", 0))};
    return tfc_execute(g->ctx, "Unpack", g->dy, 1, a, 2, g->dx, g->n_in, st) == g->n_in;
}

const tfc_op_def tfc_op_def_pack = {
    .name = "Pack", .inputs = "values: N * T", .outputs = "output: T", .attrs = "N: int >= 1, T: type, axis: int = 0",
    .shape = pack_shape, .grad = pack_grad,
};

static bool unpack_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    int64_t num = tfc_attrs_int(c->attrs, "num", 0), axis = tfc_attrs_int(c->attrs, "axis", 0);
    tfc_shape o = {.rank = -1};
    if (in->rank >= 0) {
        int r = in->rank;
        if (axis < -r || axis >= r) return TFC_OP_ERR(c, st, "axis = %lld not in [%d, %d)", (long long)axis, -r, r);
        int64_t given = axis;
        if (axis < 0) axis += r;
        if (in->dims[axis] >= 0 && in->dims[axis] != num)
            return TFC_OP_ERR(c, st, "Input shape axis %lld must equal %lld, got shape %s%s", (long long)axis,
                              (long long)num, SHP(in), tfc_given_note("axis", given, axis));
        o.rank = r - 1;
        for (int i = 0, k = 0; i < r; i++)
            if (i != axis) o.dims[k++] = in->dims[i];
    }
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i] = o;
    return true;
}

static bool unpack_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a = TFC_ATTR_I("axis", tfc_attrs_int(g->attrs, "axis", 0));
    return (g->dx[0] = tfc_emit(g->ctx, "Pack", g->dy, g->n_out, &a, 1, st)) != NULL;
}

const tfc_op_def tfc_op_def_unpack = {
    .name = "Unpack", .inputs = "value: T", .outputs = "output: num * T", .attrs = "num: int >= 0, T: type, axis: int = 0",
    .shape = unpack_shape, .grad = unpack_grad,
};

/* Checks split_dim (input `i`) against the value's rank; *axis gets it normalised, -1 when unknown; *given (may
 * be NULL) as the caller gave it. */
static bool split_axis(tfc_shape_ctx *c, int i, const tfc_shape *in, int64_t *axis, int64_t *given, tfc_status *st) {
    *axis = -1;
    int64_t a;
    if (read_axis(c, i, &a) != 0 || in->rank < 0) return true;
    if (given) *given = a;
    if (a < -in->rank || a >= in->rank)
        return TFC_OP_ERR(c, st, "-input rank(-%d) <= split_dim < input rank (%d), but got %lld", in->rank, in->rank,
                          (long long)a);
    *axis = a < 0 ? a + in->rank : a;
    return true;
}

static bool split_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[1], *ds = &c->in_shapes[0];
    int64_t num = tfc_attrs_int(c->attrs, "num_split", 1), axis, given = 0;
    if (ds->rank > 0) return TFC_OP_ERR(c, st, "split_dim must be a scalar but has rank %d", ds->rank);
    if (!split_axis(c, 0, in, &axis, &given, st)) return false;
    tfc_shape o = *in;
    if (axis < 0) {
        for (int i = 0; i < o.rank; i++) o.dims[i] = -1;
    } else if (in->dims[axis] >= 0) {
        if (in->dims[axis] % num != 0)
            return TFC_OP_ERR(c, st, "Number of ways to split should evenly divide the split dimension, but got split_dim %lld (size = %lld) and num_split %lld%s",
                              (long long)axis, (long long)in->dims[axis], (long long)num,
                              tfc_given_note("split_dim", given, axis));
        o.dims[axis] = in->dims[axis] / num;
    }
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i] = o;
    return true;
}

static bool concat_dys(tfc_grad_ctx *g, tfc_tensor *axis, int dx_index, tfc_status *st) {
    if (g->n_out == 1) {
        g->dx[dx_index] = g->dy[0];
        return true;
    }
    tfc_tensor *in[TFC_MAX_IO];
    for (int i = 0; i < g->n_out; i++) in[i] = g->dy[i];
    in[g->n_out] = axis;
    return (g->dx[dx_index] = tfc_emit(g->ctx, "ConcatV2", in, g->n_out + 1, NULL, 0, st)) != NULL;
}

static bool split_grad(tfc_grad_ctx *g, tfc_status *st) { return concat_dys(g, g->in[0], 1, st); }

const tfc_op_def tfc_op_def_split = {
    .name = "Split", .inputs = "split_dim: int32, value: T", .outputs = "output: num_split * T",
    .attrs = "num_split: int >= 1, T: type", .shape = split_shape, .grad = split_grad,
};

static bool split_v_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *ss = &c->in_shapes[1];
    int64_t num = tfc_attrs_int(c->attrs, "num_split", 1), axis;
    if (c->in_shapes[2].rank > 1 || (c->in_shapes[2].rank == 1 && c->in_shapes[2].dims[0] != 1))
        return TFC_OP_ERR(c, st, "split_dim must be a scalar but has shape %s", SHP(&c->in_shapes[2]));
    if (!split_axis(c, 2, in, &axis, NULL, st)) return false;
    if (ss->rank != 1 || (ss->dims[0] >= 0 && ss->dims[0] != num))
        return TFC_OP_ERR(c, st, "size of the split_tensor must be 1-D and have the same elements as outputs got %d -D and %lld elements",
                          ss->rank, (long long)(ss->rank == 1 ? ss->dims[0] : ss->rank == 2 ? tfc_shape_product(ss) : 1));
    const tfc_tensor *v = known(c, 1);
    if (v && axis >= 0 && num == 1 && in->dims[axis] >= 0 && int_at(v, 0) != in->dims[axis])
        return TFC_OP_ERR(c, st, "If there is only one output, it must have the same size as the input. Input size: %lld output size: %lld",
                          (long long)in->dims[axis], (long long)int_at(v, 0));
    for (int i = 0; i < c->n_out; i++) {
        c->out_shapes[i] = *in;
        if (axis >= 0) c->out_shapes[i].dims[axis] = -1;
        else
            for (int d = 0; d < in->rank; d++) c->out_shapes[i].dims[d] = -1;
    }
    if (!v || axis < 0) return true;
    int64_t total = 0, unknown = -1;
    for (int i = 0; i < num; i++) {
        int64_t s = int_at(v, i);
        if (s == -1) {
            if (unknown >= 0) return TFC_OP_ERR(c, st, "There can only be one -1 in the input.");
            unknown = i;
        } else if (s < 0) {
            return TFC_OP_ERR(c, st, "Split size at index %d must be >= 0. Got: %lld", i, (long long)s);
        } else if (__builtin_add_overflow(total, s, &total)) {
            total = INT64_MAX;
        }
    }
    int64_t d = in->dims[axis];
    if (d < 0) return true;
    if ((unknown < 0 && total != d) || (unknown >= 0 && total > d))
        return TFC_OP_ERR(c, st, "Determined shape must either match input shape along split_dim exactly if fully specified, or be less than the size of the input along split_dim if not fully specified.  Got: %lld",
                          (long long)total);
    for (int i = 0; i < num; i++) c->out_shapes[i].dims[axis] = i == unknown ? d - total : int_at(v, i);
    return true;
}

static bool split_v_grad(tfc_grad_ctx *g, tfc_status *st) { return concat_dys(g, g->in[2], 0, st); }

const tfc_op_def tfc_op_def_split_v = {
    .name = "SplitV", .inputs = "value: T, size_splits: Tlen, split_dim: int32", .outputs = "output: num_split * T",
    .attrs = "num_split: int >= 1, T: type, Tlen: {int8, int32, int64} = int64", .shape = split_v_shape,
    .grad = split_v_grad,
};

/* ---- Slice ------------------------------------------------------------------------------------------------- */
static bool slice_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *bs = &c->in_shapes[1], *ss = &c->in_shapes[2];
    tfc_shape *o = &c->out_shapes[0];
    if (in->rank >= 0 && (bs->rank != 1 || ss->rank != 1 || bs->dims[0] != in->rank || ss->dims[0] != in->rank))
        return TFC_OP_ERR(c, st, "Expected begin and size arguments to be 1-D tensors of size %d, but got shapes %s and %s instead.",
                          in->rank, SHP(bs), SHP(ss));
    const tfc_tensor *bv = known(c, 1), *sv = known(c, 2);
    o->rank = in->rank >= 0 ? in->rank : ss->rank == 1 ? (int)ss->dims[0] : -1;
    if (!check_out_rank(c, o->rank, st)) return false;
    for (int i = 0; i < o->rank; i++) {
        int64_t s = sv ? int_at(sv, i) : -1, b = bv ? int_at(bv, i) : 0, d = in->rank >= 0 ? in->dims[i] : -1;
        if (!bv || d < 0) {
            o->dims[i] = sv && s >= 0 ? s : -1;
            continue;
        }
        if (s == -1 && sv && b >= 0 && b <= d) s = d - b; /* an out-of-range begin is refused below */
        if (d == 0) {
            if (b != 0 || (sv && s != 0))
                return TFC_OP_ERR(c, st, "Expected begin[%d] == 0 (got %lld) and size[%d] == 0 (got %lld) when input.dim_size(%d) == 0",
                                  i, (long long)b, i, (long long)(sv ? int_at(sv, i) : -1), i);
        } else {
            if (b < 0 || b > d) return TFC_OP_ERR(c, st, "Expected begin[%d] in [0, %lld], but got %lld", i, (long long)d, (long long)b);
            if (sv && (s < 0 || s > d - b))
                return TFC_OP_ERR(c, st, "Expected size[%d] in [0, %lld], but got %lld", i, (long long)(d - b),
                                  (long long)int_at(sv, i));
        }
        o->dims[i] = sv ? s : -1;
    }
    return true;
}

/* Slice's gradient: pad dy back to the input's shape, with paddings [begin, in - begin - out]. */
static bool slice_grad(tfc_grad_ctx *g, tfc_status *st) {
    const tfc_tensor *bt = g->in[1];
    if (!bt->data) return tfc_status_set(st, TFC_UNIMPLEMENTED, "Slice gradient: begin must be known");
    int r = g->in[0]->shape.rank;
    int64_t pad[2 * TFC_MAX_RANK], dims[2] = {r, 2};
    for (int i = 0; i < r; i++) {
        pad[2 * i] = int_at(bt, i);
        pad[2 * i + 1] = g->in[0]->shape.dims[i] - pad[2 * i] - g->out[0]->shape.dims[i];
    }
    tfc_tensor *p = tfc_tensor_from_data(TFC_INT64, dims, 2, pad, (size_t)(2 * r) * 8, st);
    g->dx[0] = p ? tfc_emit(g->ctx, "Pad", (tfc_tensor *[]){g->dy[0], p}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(p);
    return g->dx[0] != NULL;
}

const tfc_op_def tfc_op_def_slice = {
    .name = "Slice", .inputs = "input: T, begin: Index, size: Index", .outputs = "output: T",
    .attrs = "T: type, Index: {int32, int64}", .shape = slice_shape, .grad = slice_grad,
};

/* ---- StridedSlice, StridedSliceGrad ------------------------------------------------------------------------- */
#define SS_SHRINK (-1)
#define SS_NEW_AXIS (-2)

bool tfc_strided_slice_spec_make(const char *op, const tfc_shape *input, const int64_t *begin, const int64_t *end,
                                 const int64_t *strides, int n, int64_t begin_mask64, int64_t end_mask64,
                                 int64_t ellipsis_mask64, int64_t new_axis_mask64, int64_t shrink_axis_mask64,
                                 tfc_strided_slice_spec *sp, tfc_status *st) {
    /* Masks are TensorFlow int32 attrs: only their low 32 bits count. */
    uint64_t bm = (uint32_t)begin_mask64, em = (uint32_t)end_mask64, ell = (uint32_t)ellipsis_mask64;
    uint64_t nam = (uint32_t)new_axis_mask64, sam = (uint32_t)shrink_axis_mask64;
    if (ell & (ell - 1)) return tfc_op_error(op, st, "Multiple ellipses in slice spec not allowed");
    int rank = input->rank;
    if (rank < 0) {
        sp->rank = -1;
        sp->final.rank = -1;
        sp->is_identity = false;
        return true;
    }
    /* Sparse -> dense: expand the ellipsis (an implicit one at the end when absent) into full ranges. */
    int sparse_dims = n, new_after_ellipsis = 0;
    bool seen = false;
    for (int i = 0; i < n; i++) {
        if (seen && ((nam >> i) & 1)) new_after_ellipsis++;
        if ((ell >> i) & 1) seen = true;
    }
    if (!seen) {
        ell |= 1ull << n;
        sparse_dims++;
    }
    int gather[2 * 32 + TFC_MAX_RANK], n_gather = 0, full = 0;
    uint32_t dbm = 0, dem = 0, dsam = 0;
    sp->rank = rank;
    for (int i = 0; i < sparse_dims; i++) {
        if ((ell >> i) & 1) {
            int next = rank - (sparse_dims - i) + 1 + new_after_ellipsis;
            if (next > rank) next = rank;
            for (; full < next; full++) {
                sp->begin[full] = sp->end[full] = 0;
                sp->strides[full] = 1;
                dbm |= 1u << full;
                dem |= 1u << full;
                gather[n_gather++] = full;
            }
        } else if ((nam >> i) & 1) {
            gather[n_gather++] = SS_NEW_AXIS;
        } else {
            if (full == rank)
                return tfc_op_error(op, st, "Index out of range using input dim %d; input has only %d dims", full, rank);
            sp->begin[full] = begin ? begin[i] : 0;
            sp->end[full] = end ? end[i] : 0;
            sp->strides[full] = strides[i];
            if ((bm >> i) & 1) dbm |= 1u << full;
            if ((em >> i) & 1) dem |= 1u << full;
            if ((sam >> i) & 1) {
                gather[n_gather++] = SS_SHRINK;
                dsam |= 1u << full;
            } else {
                gather[n_gather++] = full;
            }
            full++;
        }
    }
    /* Canonicalise each dense dim: apply masks, wrap negative indices, clamp to the valid range. */
    sp->is_identity = true;
    sp->processing.rank = rank;
    for (int i = 0; i < rank; i++) {
        int64_t *b = &sp->begin[i], *e = &sp->end[i], s = sp->strides[i], d = input->dims[i];
        bool shrink = (dsam >> i) & 1, bmask = (dbm >> i) & 1, emask = (dem >> i) & 1;
        if (s == 0) return tfc_op_error(op, st, "strides[%d] must be non-zero", i);
        if (d < 0) {
            sp->processing.dims[i] = shrink ? 1 : -1;
            sp->is_identity = false;
            continue;
        }
        if (shrink && s <= 0) return tfc_op_error(op, st, "only stride 1 allowed on non-range indexing.");
        int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? d : d - 1;
        if (begin && end) {
            if (shrink) {
                int64_t given = *b, x = given < 0 ? d + given : given;
                if (x < 0 || x >= d) /* TensorFlow's words (the index counted from 0), and the index as given */
                    return tfc_op_error(op, st, "slice index %lld of dimension %d out of bounds.%s", (long long)x, i,
                                        tfc_given_note("begin", given, x));
                *b = x;
                *e = x + 1;
            } else {
                if (bmask) *b = s > 0 ? lo : hi;
                else {
                    int64_t x = *b < 0 ? d + *b : *b;
                    *b = x < lo ? lo : x > hi ? hi : x;
                }
                if (emask) *e = s > 0 ? hi : lo;
                else {
                    int64_t x = *e < 0 ? d + *e : *e;
                    *e = x < lo ? lo : x > hi ? hi : x;
                }
            }
            sp->is_identity &= s == 1 && *b == 0 && *e == d;
        } else {
            sp->is_identity &= s == 1 && bmask && emask;
        }
        int64_t len = 0;
        bool known_len = true;
        if (begin && end) len = *e - *b;
        else if (shrink) len = 1;
        else if (bmask && emask && d > 0) len = s < 0 ? -d : d;
        else known_len = false;
        if (!known_len) sp->processing.dims[i] = -1;
        else if (len == 0 || ((len < 0) != (s < 0))) sp->processing.dims[i] = 0;
        else sp->processing.dims[i] = len / s + (len % s != 0);
    }
    sp->final.rank = 0;
    for (int k = 0; k < n_gather; k++) {
        if (gather[k] == SS_SHRINK) continue;
        if (sp->final.rank == TFC_MAX_RANK)
            return tfc_op_error(op, st, "output rank exceeds the maximum rank %d", TFC_MAX_RANK);
        sp->final.dims[sp->final.rank++] = gather[k] == SS_NEW_AXIS ? 1 : sp->processing.dims[gather[k]];
    }
    return true;
}

/* Validates begin/end/strides (inputs b..b+2) and builds the spec for an input of shape `in`. */
static bool strided_slice_spec(tfc_shape_ctx *c, int b, const tfc_shape *in, tfc_strided_slice_spec *sp, tfc_status *st) {
    const tfc_shape *bs = &c->in_shapes[b], *es = &c->in_shapes[b + 1], *ss = &c->in_shapes[b + 2];
    if (bs->rank != 1 || es->rank != 1 || ss->rank != 1 || bs->dims[0] != ss->dims[0] || es->dims[0] != ss->dims[0] ||
        bs->dims[0] >= 32)
        return TFC_OP_ERR(c, st, "Expected begin, end, and strides to be 1D equal size tensors, but got shapes %s, %s, and %s instead.",
                          SHP(bs), SHP(es), SHP(ss));
    const tfc_tensor *bv = known(c, b), *ev = known(c, b + 1), *sv = known(c, b + 2);
    if (!sv) {
        sp->rank = -1;
        sp->final.rank = -1;
        return true;
    }
    int n = (int)ss->dims[0];
    int64_t bb[32], ee[32], ss_[32];
    if (bv) read_all(bv, bb);
    if (ev) read_all(ev, ee);
    read_all(sv, ss_);
    const tfc_attrs *a = c->attrs;
    return tfc_strided_slice_spec_make(c->op->name, in, bv ? bb : NULL, ev ? ee : NULL, ss_, n,
                                       tfc_attrs_int(a, "begin_mask", 0), tfc_attrs_int(a, "end_mask", 0),
                                       tfc_attrs_int(a, "ellipsis_mask", 0), tfc_attrs_int(a, "new_axis_mask", 0),
                                       tfc_attrs_int(a, "shrink_axis_mask", 0), sp, st);
}

static bool strided_slice_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_strided_slice_spec sp;
    if (!strided_slice_spec(c, 1, &c->in_shapes[0], &sp, st)) return false;
    c->out_shapes[0] = sp.final;
    return true;
}

#define SS_MASKS "begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0, shrink_axis_mask: int = 0"

static int mask_attrs(const tfc_attrs *from, tfc_attr *a) {
    static const char *const names[] = {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"};
    for (int i = 0; i < 5; i++) a[i] = TFC_ATTR_I(names[i], tfc_attrs_int(from, names[i], 0));
    return 5;
}

/* An int16 index tensor as int64 (StridedSliceGrad and Shape take int32/int64 only); NULL if not needed. */
static tfc_tensor *widen_index(tfc_tensor *t, tfc_status *st) {
    if (t->dtype != TFC_INT16) return NULL;
    int64_t v[32];
    read_all(t, v);
    return tfc_vec_i64(v, t->num_elements, st);
}

static bool strided_slice_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[5];
    mask_attrs(g->attrs, a);
    tfc_tensor *w[3] = {0}, *idx[3];
    bool ok = true;
    for (int i = 0; i < 3; i++) {
        w[i] = ok ? widen_index(g->in[1 + i], st) : NULL;
        ok = ok && (w[i] || g->in[1 + i]->dtype != TFC_INT16);
        idx[i] = w[i] ? w[i] : g->in[1 + i];
    }
    tfc_tensor *shape = ok ? emit_shape(g->ctx, g->in[0], idx[0]->dtype, st) : NULL;
    g->dx[0] = shape ? tfc_emit(g->ctx, "StridedSliceGrad", (tfc_tensor *[]){shape, idx[0], idx[1], idx[2], g->dy[0]}, 5,
                                a, 5, st)
                     : NULL;
    for (int i = 0; i < 3; i++) tfc_tensor_unref(w[i]);
    return g->dx[0] != NULL;
}

const tfc_op_def tfc_op_def_strided_slice = {
    .name = "StridedSlice", .inputs = "input: T, begin: Index, end: Index, strides: Index", .outputs = "output: T",
    .attrs = "T: type, Index: {int16, int32, int64}, " SS_MASKS, .shape = strided_slice_shape, .grad = strided_slice_grad,
};

static bool strided_slice_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *ss = &c->in_shapes[0];
    if (ss->rank != 1) return TFC_OP_ERR(c, st, "shape must be 1-D, got shape.shape = %s", SHP(ss));
    tfc_shape in;
    if (!read_shape_input(c, 0, "shape", &in, st)) return false;
    tfc_strided_slice_spec sp;
    if (!strided_slice_spec(c, 1, &in, &sp, st)) return false;
    const tfc_shape *dy = &c->in_shapes[4];
    if (sp.final.rank >= 0 && tfc_shape_is_fully_defined(&sp.final) && tfc_shape_is_fully_defined(dy) &&
        !tfc_shape_equal(dy, &sp.final))
        return TFC_OP_ERR(c, st, "shape of dy was %s instead of %s", SHP(dy), SHP(&sp.final));
    c->out_shapes[0] = in;
    return true;
}

static bool strided_slice_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[5];
    mask_attrs(g->attrs, a);
    return (g->dx[4] = tfc_emit(g->ctx, "StridedSlice", (tfc_tensor *[]){g->dy[0], g->in[1], g->in[2], g->in[3]}, 4, a,
                                5, st)) != NULL;
}

const tfc_op_def tfc_op_def_strided_slice_grad = {
    .name = "StridedSliceGrad", .inputs = "shape: Index, begin: Index, end: Index, strides: Index, dy: T",
    .outputs = "output: T", .attrs = "T: type, Index: {int32, int64}, " SS_MASKS, .shape = strided_slice_grad_shape,
    .grad = strided_slice_grad_grad,
};

const tfc_op_def *const tfc_ops_array[] = {
    &tfc_op_def_identity, &tfc_op_def_stop_gradient, &tfc_op_def_zeros_like, &tfc_op_def_ones_like,
    &tfc_op_def_shape, &tfc_op_def_size, &tfc_op_def_rank,
    &tfc_op_def_reshape, &tfc_op_def_expand_dims, &tfc_op_def_squeeze,
    &tfc_op_def_invert_permutation, &tfc_op_def_transpose,
    &tfc_op_def_fill, &tfc_op_def_broadcast_to, &tfc_op_def_tile,
    &tfc_op_def_pad, &tfc_op_def_pad_v2, &tfc_op_def_mirror_pad, &tfc_op_def_mirror_pad_grad,
    &tfc_op_def_concat_v2, &tfc_op_def_pack, &tfc_op_def_unpack, &tfc_op_def_split, &tfc_op_def_split_v,
    &tfc_op_def_slice, &tfc_op_def_strided_slice, &tfc_op_def_strided_slice_grad,
    NULL,
};
