/* JSON values <-> tensors, as TensorFlow Serving's util/json_tensor: a (nested) list's shape is read from the
 * first element at every level and every other list must match it; leaves convert by the signature's dtype;
 * strings may be {"b64": "..."} objects. Output numbers use TensorFlow Serving's float formatting. */
#include <stdio.h>
#include <string.h>

#include "serving/json_tensor.h"
#include "tfc/platform.h"
#include "tfc/shape.h"

#define MAX_RANK 8

/* The JSON text of a leaf for messages (short). */
static void leaf_text(const srv_json *v, char *buf, size_t size) {
    switch (v->type) {
    case SRV_J_NUMBER: snprintf(buf, size, "%.*s", (int)(v->len < 40 ? v->len : 40), v->s); break;
    case SRV_J_STRING: snprintf(buf, size, "\"%.*s\"", (int)(v->len < 40 ? v->len : 40), v->s); break;
    case SRV_J_TRUE: snprintf(buf, size, "true"); break;
    case SRV_J_FALSE: snprintf(buf, size, "false"); break;
    case SRV_J_NULL: snprintf(buf, size, "null"); break;
    case SRV_J_ARRAY: snprintf(buf, size, "[...]"); break;
    default: snprintf(buf, size, "{...}"); break;
    }
}

static bool type_error(const srv_json *v, tfc_dtype dt, tfc_status *st) {
    char t[64], n[32];
    leaf_text(v, t, sizeof t);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "JSON Value: %s Type: %s is not of expected type: %s", t,
                          srv_json_type_name(v), tfc_srv_dtype_string(dt, n, sizeof n));
}

static bool dtype_supported(tfc_dtype dt) {
    switch (dt) {
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_INT8: case TFC_INT16: case TFC_INT32: case TFC_UINT8: case TFC_UINT16:
    case TFC_INT64: case TFC_BOOL: case TFC_STRING: return true;
    default: return false;
    }
}

/* The shape of v: list lengths along the first elements (rank into *rank). */
static bool value_shape(const srv_json *v, int64_t *dims, int *rank, tfc_status *st) {
    *rank = 0;
    while (v->type == SRV_J_ARRAY) {
        if (*rank == MAX_RANK)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "JSON list nested deeper than the maximum tensor rank %d",
                                  MAX_RANK);
        dims[(*rank)++] = v->n;
        if (!v->n) break;
        v = v->items[0];
    }
    return true;
}

typedef struct fill {
    tfc_dtype dt;
    void *data;         /* numeric element storage */
    const char **strs;  /* string elements (borrowed from the JSON or from b64 buffers) */
    size_t *lens;
    unsigned char **owned; /* decoded b64 buffers to free */
    int64_t at, n_owned;
    tfc_status *st;
} fill;

static bool leaf(fill *f, const srv_json *v) {
    int64_t i = f->at++;
    int64_t x = 0;
    double d = 0;
    switch (f->dt) {
    case TFC_FLOAT:
    case TFC_DOUBLE:
        if (v->type != SRV_J_NUMBER || !srv_json_number_f64(v, &d)) return type_error(v, f->dt, f->st);
        if (f->dt == TFC_FLOAT) ((float *)f->data)[i] = (float)d;
        else ((double *)f->data)[i] = d;
        return true;
    case TFC_INT8: case TFC_INT16: case TFC_INT32: case TFC_UINT8: case TFC_UINT16:
        /* TensorFlow Serving reads these through int_val: any integer fitting int32, then cast */
        if (!srv_json_number_i64(v, INT32_MIN, INT32_MAX, &x)) return type_error(v, f->dt, f->st);
        switch (f->dt) {
        case TFC_INT8: ((int8_t *)f->data)[i] = (int8_t)x; break;
        case TFC_INT16: ((int16_t *)f->data)[i] = (int16_t)x; break;
        case TFC_UINT8: ((uint8_t *)f->data)[i] = (uint8_t)x; break;
        case TFC_UINT16: ((uint16_t *)f->data)[i] = (uint16_t)x; break;
        default: ((int32_t *)f->data)[i] = (int32_t)x; break;
        }
        return true;
    case TFC_INT64:
        if (!srv_json_number_i64(v, INT64_MIN, INT64_MAX, &x)) return type_error(v, f->dt, f->st);
        ((int64_t *)f->data)[i] = x;
        return true;
    case TFC_BOOL:
        if (v->type != SRV_J_TRUE && v->type != SRV_J_FALSE) return type_error(v, f->dt, f->st);
        ((uint8_t *)f->data)[i] = v->type == SRV_J_TRUE;
        return true;
    case TFC_STRING:
        if (v->type == SRV_J_STRING) {
            f->strs[i] = v->s;
            f->lens[i] = v->len;
            return true;
        }
        if (srv_json_is_b64(v)) {
            size_t n = 0;
            unsigned char *dec = srv_json_b64_decode(v, &n);
            if (!dec)
                return tfc_status_set(f->st, TFC_INVALID_ARGUMENT, "Unable to base64 decode the 'b64' value of "
                                      "element %lld", (long long)i);
            f->owned[f->n_owned++] = dec;
            f->strs[i] = (const char *)dec;
            f->lens[i] = n;
            return true;
        }
        return type_error(v, f->dt, f->st);
    default: return false;
    }
}

/* Walks v (expected shape dims[0..rank)) writing its leaves in row-major order. */
static bool walk(fill *f, const srv_json *v, const int64_t *dims, int rank, int level) {
    if (level == rank) {
        if (v->type == SRV_J_ARRAY)
            return tfc_status_set(f->st, TFC_INVALID_ARGUMENT, "Encountered list at unexpected nesting level %d "
                                  "(expected rank %d)", level, rank);
        return leaf(f, v);
    }
    if (v->type != SRV_J_ARRAY)
        return tfc_status_set(f->st, TFC_INVALID_ARGUMENT, "Expecting a list at nesting level %d (rank %d), got %s",
                              level, rank, srv_json_type_name(v));
    if ((int64_t)v->n != dims[level])
        return tfc_status_set(f->st, TFC_INVALID_ARGUMENT, "Encountered list at unexpected size: %u at level: %d "
                              "expected size: %lld", v->n, level, (long long)dims[level]);
    for (uint32_t i = 0; i < v->n; i++)
        if (!walk(f, v->items[i], dims, rank, level + 1)) return false;
    return true;
}

/* A tensor of shape dims[0..rank) from the n values vals, each of shape dims[skip..rank) (skip = 1 when the
 * values are the rows of a batch, 0 for one value). */
static tfc_tensor *build(const srv_json *const *vals, int64_t n, int skip, const int64_t *dims, int rank,
                         tfc_dtype dt, tfc_status *st) {
    int64_t count = 1;
    for (int i = 0; i < rank; i++)
        if (!tfc_mul_overflow_i64(count, dims[i], &count)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "tensor shape overflows int64");
            return NULL;
        }
    tfc_tensor *t = NULL;
    fill f = {.dt = dt, .st = st};
    if (dt == TFC_STRING) {
        f.strs = tfc_calloc((size_t)count + 1, sizeof *f.strs);
        f.lens = tfc_calloc((size_t)count + 1, sizeof *f.lens);
        f.owned = tfc_calloc((size_t)count + 1, sizeof *f.owned);
        if (!f.strs || !f.lens || !f.owned) {
            tfc_status_oom(st, "request tensor", (size_t)count * sizeof *f.strs);
            goto done;
        }
    } else {
        if (!(t = tfc_tensor_new(dt, dims, rank, st))) goto done;
        f.data = tfc_tensor_mutable_data(t);
    }
    for (int64_t i = 0; i < n; i++)
        if (!walk(&f, vals[i], dims + skip, rank - skip, 0)) {
            tfc_tensor_unref(t);
            t = NULL;
            goto done;
        }
    if (dt == TFC_STRING) t = tfc_tensor_from_strings(f.strs, f.lens, dims, rank, st);
done:
    for (int64_t i = 0; i < f.n_owned; i++) tfc_free(f.owned[i]);
    tfc_free(f.strs);
    tfc_free(f.lens);
    tfc_free(f.owned);
    return t;
}

static bool check_dtype(tfc_dtype dt, const char *name, tfc_status *st) {
    char n[32];
    if (dtype_supported(dt)) return true;
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "Conversion of JSON values to tensors of type %s (input '%s') is "
                          "not supported", tfc_srv_dtype_string(dt, n, sizeof n), name);
}

tfc_tensor *srv_json_tensor(const srv_json *v, tfc_dtype dt, const char *name, tfc_status *st) {
    int64_t dims[MAX_RANK];
    int rank;
    if (!check_dtype(dt, name, st) || !value_shape(v, dims, &rank, st)) return NULL;
    return build(&v, 1, 0, dims, rank, dt, st);
}

tfc_tensor *srv_json_rows_tensor(const srv_json *const *rows, int64_t n, tfc_dtype dt, const char *name,
                                 tfc_status *st) {
    int64_t dims[MAX_RANK + 1];
    int rank;
    if (!check_dtype(dt, name, st) || !value_shape(rows[0], dims + 1, &rank, st)) return NULL;
    for (int64_t i = 1; i < n; i++) {
        int64_t d2[MAX_RANK];
        int r2;
        if (!value_shape(rows[i], d2, &r2, st)) return NULL;
        if (r2 != rank || memcmp(d2, dims + 1, (size_t)rank * sizeof *d2)) {
            char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
            tfc_shape sa = {.rank = rank}, sb = {.rank = r2};
            memcpy(sa.dims, dims + 1, (size_t)rank * sizeof *d2);
            memcpy(sb.dims, d2, (size_t)r2 * sizeof *d2);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expecting tensor size: %s but got: %s for input '%s' of "
                           "instance %lld (all instances must have the same shape)", tfc_shape_str(&sa, a, sizeof a),
                           tfc_shape_str(&sb, b, sizeof b), name, (long long)i);
            return NULL;
        }
    }
    dims[0] = n;
    return build(rows, n, 1, dims, rank + 1, dt, st);
}

/* ---- tensors -> JSON ------------------------------------------------------------------------------------ */

static bool ends_with_bytes(const char *alias) {
    size_t n = strlen(alias);
    return n >= 6 && !strcmp(alias + n - 6, "_bytes");
}

static void element(srv_buf *b, const tfc_tensor *t, int64_t i, bool bytes) {
    const void *d = tfc_tensor_data(t);
    switch (tfc_tensor_dtype(t)) {
    case TFC_FLOAT: srv_buf_float(b, ((const float *)d)[i]); break;
    case TFC_DOUBLE: srv_buf_double(b, ((const double *)d)[i]); break;
    case TFC_HALF: case TFC_BFLOAT16: srv_buf_float(b, (float)tfc_tensor_get_f64(t, i)); break;
    case TFC_INT64: srv_buf_printf(b, "%lld", (long long)((const int64_t *)d)[i]); break;
    case TFC_BOOL: srv_buf_puts(b, ((const uint8_t *)d)[i] ? "true" : "false"); break;
    case TFC_STRING: {
        size_t len = 0;
        const char *s = tfc_tensor_string(t, i, &len);
        if (bytes) {
            srv_buf_puts(b, "{\"b64\": \"");
            srv_buf_base64(b, (const unsigned char *)s, len);
            srv_buf_puts(b, "\"}");
        } else {
            srv_buf_json_string(b, s ? s : "", len);
        }
        break;
    }
    default: srv_buf_printf(b, "%lld", (long long)tfc_tensor_get_f64(t, i)); break;
    }
}

/* Elements [*at, ...) of t as nested lists over dims[level..rank). */
static void nested(srv_buf *b, const tfc_tensor *t, int level, int64_t *at, bool bytes) {
    const int rank = tfc_tensor_rank(t);
    if (level == rank) {
        element(b, t, (*at)++, bytes);
        return;
    }
    srv_buf_put(b, "[", 1);
    for (int64_t i = 0; i < tfc_tensor_dim(t, level) && !b->oom; i++) {
        if (i) srv_buf_put(b, ", ", 2);
        nested(b, t, level + 1, at, bytes);
    }
    srv_buf_put(b, "]", 1);
}

void srv_tensor_json(srv_buf *b, const tfc_tensor *t, const char *alias) {
    int64_t at = 0;
    nested(b, t, 0, &at, ends_with_bytes(alias));
}

void srv_tensor_row_json(srv_buf *b, const tfc_tensor *t, const char *alias, int64_t row) {
    int64_t per = 1;
    for (int d = 1; d < tfc_tensor_rank(t); d++) per *= tfc_tensor_dim(t, d); /* within the tensor's own size */
    int64_t at = row * per;
    nested(b, t, 1, &at, ends_with_bytes(alias));
}
