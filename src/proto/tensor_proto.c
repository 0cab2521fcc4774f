/* tfc_tensor <-> TensorProto and tfc_shape <-> TensorShapeProto, with TensorFlow's rules (tensor.cc's
 * FromProto: tensor_content first, else the dtype's typed field, its last value repeated to fill the shape)
 * and every number checked before it sizes anything. */
#include <stdio.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "proto/proto_internal.h"
#include "proto/types.pb-c.h"

const char *tfc_pb_dtype_str(int dt, char *buf, size_t size) {
    if (tfc_pb_dtype_is_data(dt) || dt == TFC_RESOURCE) return tfc_dtype_name((tfc_dtype)dt);
    snprintf(buf, size, "dtype %d", dt);
    return buf;
}

const char *tfc_pb_dtype_enum_name(int dt) {
    const ProtobufCEnumValue *e = protobuf_c_enum_descriptor_get_value(&tensorflow__data_type__descriptor, dt);
    return e ? e->name : "DT_INVALID";
}

bool tfc_pb_dtype_is_data(int dt) {
    switch (dt) {
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_INT32: case TFC_UINT8: case TFC_INT16: case TFC_INT8: case TFC_STRING:
    case TFC_INT64: case TFC_BOOL: case TFC_BFLOAT16: case TFC_UINT16: case TFC_HALF:
        return true;
    default:
        return false;
    }
}

bool tfc_pb_shape_from_proto(const Tensorflow__TensorShapeProto *p, tfc_shape *out, const char *what,
                             tfc_status *st) {
    memset(out, 0, sizeof *out);
    if (!p) return true;
    if (p->unknown_rank) {
        if (p->n_dim)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: shape has unknown_rank set and %zu dims", what,
                                  p->n_dim);
        out->rank = -1;
        return true;
    }
    if (p->n_dim > TFC_MAX_RANK)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: shape of rank %zu exceeds tfc's maximum rank %d", what,
                              p->n_dim, TFC_MAX_RANK);
    out->rank = (int)p->n_dim;
    int64_t known = 1; /* as TensorFlow's IsValidShape: the known dims' product fits int64 */
    for (size_t i = 0; i < p->n_dim; i++) {
        int64_t d = p->dim[i]->size;
        if (d < -1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: shape dim %zu has size %lld (must be >= -1)", what, i,
                                  (long long)d);
        out->dims[i] = d;
        if (d >= 0 && !tfc_mul_overflow_i64(known, d, &known)) {
            char sb[TFC_SHAPE_STR];
            out->rank = (int)i + 1;
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: shape %s... is too large (more than 2^63-1 elements)",
                                  what, tfc_shape_str(out, sb, sizeof sb));
        }
    }
    return true;
}

Tensorflow__TensorShapeProto *tfc_pb_shape_to_proto(const tfc_shape *s, tfc_status *st) {
    int rank = s->rank > 0 ? s->rank : 0;
    size_t bytes = sizeof(Tensorflow__TensorShapeProto) + (size_t)rank * (sizeof(void *) + sizeof(Tensorflow__TensorShapeProto__Dim));
    /* separate allocations: protobuf-c frees each repeated element and the pointer array itself */
    Tensorflow__TensorShapeProto *p = tfc_malloc(sizeof *p);
    if (!p) return tfc_status_oom(st, "TensorShapeProto", bytes), NULL;
    tensorflow__tensor_shape_proto__init(p);
    if (s->rank < 0) {
        p->unknown_rank = true;
        return p;
    }
    if (rank && !(p->dim = tfc_calloc((size_t)rank, sizeof *p->dim))) goto oom;
    for (int i = 0; i < rank; i++) {
        if (!(p->dim[i] = tfc_malloc(sizeof *p->dim[i]))) goto oom;
        p->n_dim++;
        tensorflow__tensor_shape_proto__dim__init(p->dim[i]);
        p->dim[i]->size = s->dims[i];
    }
    return p;
oom:
    tfc_pb_free(p);
    return tfc_status_oom(st, "TensorShapeProto", bytes), NULL;
}

/* ---- decoding ---- */

typedef struct { size_t n; const void *vals; const char *field; } typed_field;

/* The typed field TensorFlow uses for dt, and how many values each field holds. */
static typed_field field_for(const Tensorflow__TensorProto *p, tfc_dtype dt) {
    switch (dt) {
    case TFC_FLOAT: return (typed_field){p->n_float_val, p->float_val, "float_val"};
    case TFC_DOUBLE: return (typed_field){p->n_double_val, p->double_val, "double_val"};
    case TFC_INT32: case TFC_INT16: case TFC_INT8: case TFC_UINT8: case TFC_UINT16:
        return (typed_field){p->n_int_val, p->int_val, "int_val"};
    case TFC_INT64: return (typed_field){p->n_int64_val, p->int64_val, "int64_val"};
    case TFC_BOOL: return (typed_field){p->n_bool_val, p->bool_val, "bool_val"};
    case TFC_HALF: case TFC_BFLOAT16: return (typed_field){p->n_half_val, p->half_val, "half_val"};
    case TFC_STRING: return (typed_field){p->n_string_val, p->string_val, "string_val"};
    default: return (typed_field){0, NULL, "?"};
    }
}

/* A typed field other than dt's own that holds values: TensorFlow ignores it silently, which hides a
 * writer's bug; tfc reports it. */
static const char *foreign_field(const Tensorflow__TensorProto *p, const char *own) {
    const struct { size_t n; const char *name; } f[] = {
        {p->n_float_val, "float_val"},   {p->n_double_val, "double_val"},   {p->n_int_val, "int_val"},
        {p->n_string_val, "string_val"}, {p->n_scomplex_val, "scomplex_val"}, {p->n_int64_val, "int64_val"},
        {p->n_bool_val, "bool_val"},     {p->n_dcomplex_val, "dcomplex_val"}, {p->n_half_val, "half_val"},
        {p->n_resource_handle_val, "resource_handle_val"}, {p->n_variant_val, "variant_val"},
        {p->n_uint32_val, "uint32_val"}, {p->n_uint64_val, "uint64_val"}, {p->float8_val.len, "float8_val"},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].n && strcmp(f[i].name, own)) return f[i].name;
    return NULL;
}

/* Element i of a typed field, stored into element j of t. */
static bool store(tfc_tensor *t, const typed_field *f, size_t i, int64_t j, tfc_status *st) {
    void *d = t->data;
    switch (t->dtype) {
    case TFC_FLOAT: ((float *)d)[j] = ((const float *)f->vals)[i]; break;
    case TFC_DOUBLE: ((double *)d)[j] = ((const double *)f->vals)[i]; break;
    case TFC_INT32: ((int32_t *)d)[j] = ((const int32_t *)f->vals)[i]; break;
    /* TensorFlow static_casts int_val into narrower types; so does tfc */
    case TFC_INT16: ((int16_t *)d)[j] = (int16_t)((const int32_t *)f->vals)[i]; break;
    case TFC_INT8: ((int8_t *)d)[j] = (int8_t)((const int32_t *)f->vals)[i]; break;
    case TFC_UINT8: ((uint8_t *)d)[j] = (uint8_t)((const int32_t *)f->vals)[i]; break;
    case TFC_UINT16: ((uint16_t *)d)[j] = (uint16_t)((const int32_t *)f->vals)[i]; break;
    case TFC_INT64: ((int64_t *)d)[j] = ((const int64_t *)f->vals)[i]; break;
    case TFC_BOOL: ((bool *)d)[j] = ((const protobuf_c_boolean *)f->vals)[i] != 0; break;
    case TFC_HALF: case TFC_BFLOAT16: ((uint16_t *)d)[j] = (uint16_t)((const int32_t *)f->vals)[i]; break;
    case TFC_STRING: {
        const ProtobufCBinaryData *s = &((const ProtobufCBinaryData *)f->vals)[i];
        return tfc_tstring_copy(&((tfc_tstring *)d)[j], (const char *)s->data, s->len, st);
    }
    default: break;
    }
    return true;
}

tfc_tensor *tfc_pb_tensor_from_proto(const Tensorflow__TensorProto *p, size_t max_bytes, const char *what,
                                     tfc_status *st) {
    char dbuf[32];
    if (!tfc_pb_dtype_is_data(p->dtype))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto dtype %s is not supported by tfc", what,
                              tfc_pb_dtype_str(p->dtype, dbuf, sizeof dbuf)), NULL;
    const tfc_dtype dt = (tfc_dtype)p->dtype;
    tfc_shape shape;
    if (!tfc_pb_shape_from_proto(p->tensor_shape, &shape, what, st)) return NULL;
    char sb[TFC_SHAPE_STR];
    if (!tfc_shape_is_fully_defined(&shape))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto shape %s is not fully defined", what,
                              tfc_shape_str(&shape, sb, sizeof sb)), NULL;
    int64_t n = 1;
    for (int i = 0; i < shape.rank; i++)
        if (!tfc_mul_overflow_i64(n, shape.dims[i], &n))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto shape %s has more elements than int64 holds",
                                  what, tfc_shape_str(&shape, sb, sizeof sb)), NULL;
    const size_t esize = tfc_dtype_size(dt);
    if ((uint64_t)n > SIZE_MAX / esize || (max_bytes && (uint64_t)n * esize > max_bytes))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto of shape %s and dtype %s needs %llu x %zu "
                              "bytes, over the limit of %zu", what, tfc_shape_str(&shape, sb, sizeof sb),
                              tfc_dtype_name(dt), (unsigned long long)n, esize, max_bytes), NULL;
    typed_field f = field_for(p, dt);
    const char *other = foreign_field(p, f.field);
    if (other)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto of dtype %s has values in %s (expected %s%s)",
                              what, tfc_dtype_name(dt), other, dt == TFC_STRING ? "" : "tensor_content or ",
                              f.field), NULL;
    if (p->tensor_content.len) {
        if (dt == TFC_STRING)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: string TensorProto with tensor_content (%zu bytes); "
                                  "strings go in string_val", what, p->tensor_content.len), NULL;
        if (p->tensor_content.len != (uint64_t)n * esize)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto tensor_content has %zu bytes, but shape "
                                  "%s of %s needs %llu", what, p->tensor_content.len,
                                  tfc_shape_str(&shape, sb, sizeof sb), tfc_dtype_name(dt),
                                  (unsigned long long)n * esize), NULL;
    } else if (f.n > (uint64_t)n) {
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: TensorProto has %zu values in %s for shape %s of %lld "
                              "elements", what, f.n, f.field, tfc_shape_str(&shape, sb, sizeof sb), (long long)n), NULL;
    }
    if (dt == TFC_STRING && max_bytes && f.n) {
        /* the last string is copied into every element after the given ones: a few wire bytes can ask for a
         * great many decoded ones, so the limit counts the string bytes too */
        const ProtobufCBinaryData *sv = f.vals;
        uint64_t bytes = (uint64_t)n * esize, rest = (uint64_t)n - f.n, last = sv[f.n - 1].len;
        for (size_t i = 0; i < f.n && bytes <= max_bytes; i++) bytes += sv[i].len;
        if (bytes > max_bytes || (last && rest > (max_bytes - bytes) / last))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: string TensorProto of shape %s decodes to more than "
                                  "the limit of %zu bytes", what, tfc_shape_str(&shape, sb, sizeof sb), max_bytes),
                   NULL;
    }
    tfc_tensor *t = tfc_tensor_alloc(dt, &shape, st);
    if (!t) return NULL;
    if (p->tensor_content.len) {
        memcpy(t->data, p->tensor_content.data, p->tensor_content.len); /* little-endian host, as the wire */
        if (dt == TFC_BOOL) /* a C bool holds 0 or 1 only: other bytes are true */
            for (size_t i = 0; i < p->tensor_content.len; i++) ((uint8_t *)t->data)[i] = p->tensor_content.data[i] != 0;
        return t;
    }
    if (!f.n) {
        if (dt != TFC_STRING) memset(t->data, 0, (size_t)n * esize);
        return t;
    }
    for (int64_t j = 0; j < n; j++)
        if (!store(t, &f, (uint64_t)j < f.n ? (size_t)j : f.n - 1, j, st)) {
            tfc_tensor_unref(t);
            return NULL;
        }
    return t;
}

/* ---- encoding ---- */

/* as_field: every value in the dtype's typed field (Tensor::AsProtoField); otherwise tensor_content for all but
 * one-element tensors (as make_tensor_proto writes). Strings always go in string_val. */
static Tensorflow__TensorProto *encode(const tfc_tensor *t, bool as_field, const char *what, tfc_status *st) {
    if (!t || !t->data)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: a symbolic tensor has no value to serialise", what), NULL;
    if (!tfc_pb_dtype_is_data(t->dtype))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s tensors cannot be serialised as a TensorProto", what,
                              tfc_dtype_name(t->dtype)), NULL;
    Tensorflow__TensorProto *p = tfc_malloc(sizeof *p);
    if (!p) return tfc_status_oom(st, what, sizeof *p), NULL;
    tensorflow__tensor_proto__init(p);
    p->dtype = (Tensorflow__DataType)t->dtype;
    if (!(p->tensor_shape = tfc_pb_shape_to_proto(&t->shape, st))) goto fail;
    const int64_t n = t->num_elements;
    const size_t esize = tfc_dtype_size(t->dtype);
    if (t->dtype == TFC_STRING) {
        if (n && !(p->string_val = tfc_calloc((size_t)n, sizeof *p->string_val))) goto oom;
        for (int64_t i = 0; i < n; i++) {
            const tfc_tstring *s = &((const tfc_tstring *)t->data)[i];
            size_t len = tfc_tstring_size(s);
            ProtobufCBinaryData *b = &p->string_val[i];
            if (!(b->data = tfc_malloc(len ? len : 1))) goto oom;
            memcpy(b->data, tfc_tstring_data(s), len);
            b->len = len;
            p->n_string_val++;
        }
        return p;
    }
    if (!as_field && n != 1) { /* tensor_content: the raw little-endian element bytes */
        size_t bytes = (size_t)n * esize;
        if (bytes && !(p->tensor_content.data = tfc_malloc(bytes))) goto oom;
        if (bytes) memcpy(p->tensor_content.data, t->data, bytes);
        p->tensor_content.len = bytes;
        return p;
    }
    const void *d = t->data;
    const size_t count = (size_t)n; /* the tensor holds n elements of at least one byte: n * 8 cannot overflow */
    switch (t->dtype) {
#define FIELD(field, ctype, src)                                                                 \
    if (count && !(p->field = tfc_malloc(count * sizeof(ctype)))) goto oom;                       \
    for (size_t i = 0; i < count; i++) p->field[i] = (ctype)((const src *)d)[i];                  \
    p->n_##field = count;                                                                         \
    break;
    case TFC_FLOAT: FIELD(float_val, float, float)
    case TFC_DOUBLE: FIELD(double_val, double, double)
    case TFC_INT32: FIELD(int_val, int32_t, int32_t)
    case TFC_INT16: FIELD(int_val, int32_t, int16_t)
    case TFC_INT8: FIELD(int_val, int32_t, int8_t)
    case TFC_UINT8: FIELD(int_val, int32_t, uint8_t)
    case TFC_UINT16: FIELD(int_val, int32_t, uint16_t)
    case TFC_INT64: FIELD(int64_val, int64_t, int64_t)
    case TFC_BOOL: FIELD(bool_val, protobuf_c_boolean, uint8_t) /* tensors hold 0 or 1 */
    case TFC_HALF: case TFC_BFLOAT16: FIELD(half_val, int32_t, uint16_t)
#undef FIELD
    default: break;
    }
    return p;
oom:
    tfc_status_oom(st, what, (size_t)t->num_elements * esize);
fail:
    tfc_pb_free(p);
    return NULL;
}

Tensorflow__TensorProto *tfc_pb_tensor_to_proto(const tfc_tensor *t, const char *what, tfc_status *st) {
    return encode(t, false, what, st);
}

Tensorflow__TensorProto *tfc_pb_tensor_to_proto_field(const tfc_tensor *t, const char *what, tfc_status *st) {
    return encode(t, true, what, st);
}
