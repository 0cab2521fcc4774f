/* Resource variable kernels. Values are copy-on-write: an assign replaces the value tensor unless the
 * variable holds the only reference to it, in which case AssignAdd/Sub update it in place. */
#include <string.h>

#include "core/variable.h"
#include "kernels/cpu/kernels.h"

static bool var_handle(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_dtype dt = tfc_attrs_type(k->attrs, "dtype", TFC_INVALID_DTYPE);
    int n = 0;
    const int64_t *dims = tfc_attrs_ints(k->attrs, "shape", &n);
    tfc_shape s;
    if (!tfc_shape_make(&s, dims, n < 0 ? 0 : n, st)) return false;
    if (n < 0) s.rank = -1;
    tfc_variable *v = tfc_var_new(dt, &s, tfc_attrs_string(k->attrs, "shared_name", ""), st);
    if (!v) return false;
    tfc_tensor *h = tfc_var_handle(v, st);
    tfc_var_release(v); /* the handle holds it */
    if (!h) return false;
    tfc_tensor_unref(k->out[0]);
    k->out[0] = h;
    return true;
}

static bool read_var(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_variable *v = tfc_var_from_handle(k->in[0], k->op->name, st);
    if (!v) return false;
    tfc_dtype want = tfc_attrs_type(k->attrs, "dtype", TFC_INVALID_DTYPE);
    pthread_mutex_lock(&v->mu);
    tfc_tensor *val = tfc_tensor_ref(v->value);
    pthread_mutex_unlock(&v->mu);
    if (!val) {
        return tfc_status_set(st, TFC_FAILED_PRECONDITION,
                              "ReadVariableOp: variable '%s' is uninitialized (read before the first assign)", v->name);
    }
    if (val->dtype != want) {
        tfc_tensor_unref(val);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ReadVariableOp: variable '%s' has dtype %s, read as %s", v->name,
                              tfc_dtype_name(v->dtype), tfc_dtype_name(want));
    }
    tfc_tensor *out = tfc_tensor_share(val, &val->shape, st);
    tfc_tensor_unref(val);
    if (!out) return false;
    tfc_tensor_unref(k->out[0]); /* a graph executor's buffer for a read whose shape the trace knew */
    k->out[0] = out;
    return true;
}

static bool check_value(tfc_kernel_ctx *k, tfc_variable *v, const tfc_tensor *x, tfc_status *st) {
    char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
    if (x->dtype != v->dtype)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: variable '%s' has dtype %s, value is %s", k->op->name,
                              v->name, tfc_dtype_name(v->dtype), tfc_dtype_name(x->dtype));
    if (v->shape.rank >= 0 && (v->value || strcmp(k->op->name, "AssignVariableOp")) &&
        !tfc_shape_equal(&v->shape, &x->shape))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: variable '%s' has shape %s, value has shape %s",
                              k->op->name, v->name, tfc_shape_str(&v->shape, a, sizeof a),
                              tfc_shape_str(&x->shape, b, sizeof b));
    return true;
}

static bool assign(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_variable *v = tfc_var_from_handle(k->in[0], k->op->name, st);
    if (!v) return false;
    tfc_tensor *x = k->in[1];
    pthread_mutex_lock(&v->mu);
    bool ok = check_value(k, v, x, st);
    if (ok) {
        /* Share the buffer: tensors are immutable, and in-place updates check sole ownership first. */
        tfc_tensor *nv = tfc_tensor_share(x, &x->shape, st);
        if ((ok = nv != NULL)) {
            tfc_tensor_unref(v->value);
            v->value = nv;
            v->shape = x->shape;
        }
    }
    pthread_mutex_unlock(&v->mu);
    return ok;
}

static void add_into(tfc_dtype dt, void *dst, const void *a, const void *b, int64_t n, double sign) {
    switch (dt) {
    case TFC_FLOAT: for (int64_t i = 0; i < n; i++) ((float *)dst)[i] = ((const float *)a)[i] + (float)sign * ((const float *)b)[i]; break;
    case TFC_DOUBLE: for (int64_t i = 0; i < n; i++) ((double *)dst)[i] = ((const double *)a)[i] + sign * ((const double *)b)[i]; break;
    /* integers wrap as TensorFlow's; negating INT_MIN in signed arithmetic would overflow, so subtract unsigned */
    case TFC_INT32:
        for (int64_t i = 0; i < n; i++) {
            uint32_t x = (uint32_t)((const int32_t *)a)[i], y = (uint32_t)((const int32_t *)b)[i];
            ((int32_t *)dst)[i] = (int32_t)(sign > 0 ? x + y : x - y);
        }
        break;
    case TFC_INT64:
        for (int64_t i = 0; i < n; i++) {
            uint64_t x = (uint64_t)((const int64_t *)a)[i], y = (uint64_t)((const int64_t *)b)[i];
            ((int64_t *)dst)[i] = (int64_t)(sign > 0 ? x + y : x - y);
        }
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            tfc_dtype_set_f64(dt, dst, i, tfc_dtype_get_f64(dt, a, i) + sign * tfc_dtype_get_f64(dt, b, i));
    }
}

static bool assign_update(tfc_kernel_ctx *k, double sign, tfc_status *st) {
    tfc_variable *v = tfc_var_from_handle(k->in[0], k->op->name, st);
    if (!v) return false;
    tfc_tensor *x = k->in[1];
    pthread_mutex_lock(&v->mu);
    bool ok = true;
    if (!v->value) {
        ok = tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: variable '%s' is uninitialized", k->op->name, v->name);
    } else if ((ok = check_value(k, v, x, st))) {
        tfc_tensor *cur = v->value;
        if (atomic_load(&cur->refcount) == 1 && atomic_load(&cur->buf->refcount) == 1 && cur->buf->owned) {
            tfc_buffer_written(cur->buf);
            add_into(cur->dtype, cur->data, cur->data, x->data, cur->num_elements, sign);
        } else {
            tfc_tensor *nv = tfc_tensor_alloc(cur->dtype, &cur->shape, st);
            if ((ok = nv != NULL)) {
                add_into(cur->dtype, nv->data, cur->data, x->data, cur->num_elements, sign);
                tfc_tensor_unref(cur);
                v->value = nv;
            }
        }
    }
    pthread_mutex_unlock(&v->mu);
    return ok;
}

static bool assign_add(tfc_kernel_ctx *k, tfc_status *st) { return assign_update(k, 1.0, st); }
static bool assign_sub(tfc_kernel_ctx *k, tfc_status *st) { return assign_update(k, -1.0, st); }

const tfc_kernel_reg tfc_cpu_kernels_resource[] = {
    {"VarHandleOp", var_handle},       {"ReadVariableOp", read_var},       {"AssignVariableOp", assign},
    {"AssignAddVariableOp", assign_add}, {"AssignSubVariableOp", assign_sub}, {NULL, NULL},
};
