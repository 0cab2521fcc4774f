#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "ops/op_util.h"

bool tfc_op_error(const char *op, tfc_status *st, const char *fmt, ...) {
    char msg[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s", op, msg);
}

bool tfc_check_rank(tfc_shape_ctx *c, int i, int r, const char *what, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[i];
    if (s->rank >= 0 && s->rank != r)
        return TFC_OP_ERR(c, st, "%s must be %d-dimensional, got rank %d (shape %s)", what, r, s->rank, SHP(s));
    return true;
}

bool tfc_check_rank_range(tfc_shape_ctx *c, int i, int lo, int hi, const char *what, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[i];
    if (s->rank >= 0 && (s->rank < lo || s->rank > hi))
        return TFC_OP_ERR(c, st, "%s must have rank in [%d, %d], got rank %d (shape %s)", what, lo, hi, s->rank, SHP(s));
    return true;
}

bool tfc_check_axis(const char *op, int64_t axis, int rank, int64_t *out, tfc_status *st) {
    int r = rank > 0 ? rank : 1;
    if (axis < -r || axis >= r)
        return tfc_op_error(op, st, "axis %lld is out of range [%d, %d) for a tensor of rank %d", (long long)axis, -r, r,
                            rank);
    *out = axis < 0 ? axis + r : axis;
    return true;
}

const char *tfc_given_note(const char *what, int64_t given, int64_t normalised) {
    static _Thread_local char buf[4][96];
    static _Thread_local int next;
    if (given == normalised) return "";
    char *b = buf[next++ & 3];
    snprintf(b, sizeof buf[0], " (%s %lld as given)", what, (long long)given);
    return b;
}

int64_t tfc_read_ints(const char *op, const char *what, const tfc_tensor *t, int64_t *out, int64_t max, tfc_status *st) {
    if (t->dtype != TFC_INT32 && t->dtype != TFC_INT64) {
        tfc_op_error(op, st, "%s must be int32 or int64, got %s", what, tfc_dtype_name(t->dtype));
        return -1;
    }
    if (t->shape.rank > 1) {
        tfc_op_error(op, st, "%s must be a scalar or vector, got shape %s", what, SHP(&t->shape));
        return -1;
    }
    if (!t->data) return -2; /* symbolic: caller decides */
    if (t->num_elements > max) {
        tfc_op_error(op, st, "%s has %lld elements, more than %lld", what, (long long)t->num_elements, (long long)max);
        return -1;
    }
    for (int64_t i = 0; i < t->num_elements; i++)
        out[i] = t->dtype == TFC_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
    return t->num_elements;
}

bool tfc_check_out_shape(tfc_shape_ctx *c, const tfc_shape *s, tfc_status *st) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < -1) return TFC_OP_ERR(c, st, "output dimension %d is negative (%lld)", i, (long long)s->dims[i]);
        if (s->dims[i] >= 0 && !tfc_mul_overflow_i64(n, s->dims[i], &n))
            return TFC_OP_ERR(c, st, "output shape %s has too many elements (overflows int64)", SHP(s));
    }
    return true;
}

bool tfc_shape_same_as_input0(tfc_shape_ctx *c, tfc_status *st) {
    (void)st;
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i] = c->in_shapes[0];
    return true;
}

bool tfc_shape_scalar(tfc_shape_ctx *c, tfc_status *st) {
    (void)st;
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i].rank = 0;
    return true;
}

bool tfc_broadcast_shapes(const tfc_shape *a, const tfc_shape *b, tfc_shape *out, const char *op, tfc_status *st) {
    if (a->rank < 0 || b->rank < 0) {
        out->rank = -1;
        return true;
    }
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1) out->dims[i] = da;
        else if (da == 1) out->dims[i] = db;
        else if (da == -1 || db == -1) out->dims[i] = da == -1 ? db : da;
        else
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Incompatible shapes: %s vs. %s", op, SHP(a), SHP(b));
    }
    return true;
}

bool tfc_shape_broadcast_binary(tfc_shape_ctx *c, tfc_status *st) {
    tfc_shape out;
    if (!tfc_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &out, c->op->name, st)) return false;
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i] = out;
    return true;
}
