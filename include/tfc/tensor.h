/* tfc — tensors: dense, row-major, immutable once produced by an op, data in an atomically refcounted
 * buffer (reshape and identity share it). A new tensor has one reference, owned by the caller (or by the
 * current eager scope when it was returned by an op inside tfc_scope_begin/end). */
#ifndef TFC_TENSOR_H
#define TFC_TENSOR_H

#include "tfc/dtype.h"
#include "tfc/shape.h"
#include "tfc/tstring.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_tensor tfc_tensor;

/* New zero-filled tensor (empty strings for TFC_STRING). Caller owns one reference.
 * INVALID_ARGUMENT: bad dtype, rank > 8, negative dims, element count or byte size overflow.
 * RESOURCE_EXHAUSTED: out of memory. */
TFC_API tfc_tensor *tfc_tensor_new(tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st);
/* New tensor holding a copy of `nbytes` bytes of data; nbytes must equal elements * dtype size.
 * Not for TFC_STRING (use tfc_tensor_from_strings). */
TFC_API tfc_tensor *tfc_tensor_from_data(tfc_dtype dt, const int64_t *dims, int rank, const void *data,
                                         size_t nbytes, tfc_status *st);
/* Wraps caller memory without copying; dealloc(data, nbytes, arg) runs when the last reference goes
 * (dealloc may be NULL). data must stay valid and unchanged until then. */
TFC_API tfc_tensor *tfc_tensor_wrap(tfc_dtype dt, const int64_t *dims, int rank, void *data, size_t nbytes,
                                    void (*dealloc)(void *data, size_t nbytes, void *arg), void *arg,
                                    tfc_status *st);
/* String tensor from `n` byte strings (lens may be NULL for NUL-terminated strings); n must equal the
 * element count of dims. */
TFC_API tfc_tensor *tfc_tensor_from_strings(const char *const *strs, const size_t *lens, const int64_t *dims,
                                            int rank, tfc_status *st);

/* Scalars; NULL only when out of memory (st set). */
TFC_API tfc_tensor *tfc_scalar_f32(float v, tfc_status *st);
TFC_API tfc_tensor *tfc_scalar_f64(double v, tfc_status *st);
TFC_API tfc_tensor *tfc_scalar_i32(int32_t v, tfc_status *st);
TFC_API tfc_tensor *tfc_scalar_i64(int64_t v, tfc_status *st);
TFC_API tfc_tensor *tfc_scalar_bool(bool v, tfc_status *st);
/* Scalar of any numeric dtype holding `v` converted as by tfc_dtype_set_f64. */
TFC_API tfc_tensor *tfc_scalar(tfc_dtype dt, double v, tfc_status *st);
/* 1-D int32 / int64 tensors of n values (shape vectors, axes, strides). */
TFC_API tfc_tensor *tfc_vec_i32(const int32_t *v, int64_t n, tfc_status *st);
TFC_API tfc_tensor *tfc_vec_i64(const int64_t *v, int64_t n, tfc_status *st);
TFC_API tfc_tensor *tfc_vec_f32(const float *v, int64_t n, tfc_status *st);

TFC_API tfc_tensor *tfc_tensor_ref(tfc_tensor *t);  /* +1 reference; returns t; NULL-safe */
TFC_API void tfc_tensor_unref(tfc_tensor *t);       /* -1 reference; frees at zero; NULL-safe */

/* Metadata of a valid tensor (t must not be NULL): dtype, shape (borrowed, valid while t lives), rank, dim i
 * (negative i counts from the end; i outside [-rank, rank) gives -1), element count and data size in bytes (element
 * count * dtype size; for strings, of the tfc_tstring array). */
TFC_API tfc_dtype tfc_tensor_dtype(const tfc_tensor *t);
TFC_API const tfc_shape *tfc_tensor_shape(const tfc_tensor *t);
TFC_API int tfc_tensor_rank(const tfc_tensor *t);
TFC_API int64_t tfc_tensor_dim(const tfc_tensor *t, int i);   /* negative i counts from the end */
TFC_API int64_t tfc_tensor_num_elements(const tfc_tensor *t);
TFC_API size_t tfc_tensor_byte_size(const tfc_tensor *t);
/* Read-only element data (NULL for symbolic graph tensors). For TFC_STRING, an array of tfc_tstring. */
TFC_API const void *tfc_tensor_data(const tfc_tensor *t);
/* Writable data, only for a tensor the caller just created and still solely owns (refcount 1), before it
 * is passed to any op; NULL otherwise. */
TFC_API void *tfc_tensor_mutable_data(tfc_tensor *t);
/* Element i of a TFC_STRING tensor; *len gets its size. NULL when t is not a string tensor or i is out of range. */
TFC_API const char *tfc_tensor_string(const tfc_tensor *t, int64_t i, size_t *len);
/* Element i converted to double (any numeric dtype); 0 for out-of-range i or non-numeric dtypes. */
TFC_API double tfc_tensor_get_f64(const tfc_tensor *t, int64_t i);
/* True when t is symbolic: a tensor of a graph being traced (tfc/function.h), without data, or a Const of it. */
TFC_API bool tfc_tensor_is_symbolic(const tfc_tensor *t);

/* Copies t into a new tensor with its own buffer. */
TFC_API tfc_tensor *tfc_tensor_copy(const tfc_tensor *t, tfc_status *st);
/* A tensor sharing t's buffer with another shape of the same element count (INVALID_ARGUMENT otherwise). */
TFC_API tfc_tensor *tfc_tensor_reshaped(tfc_tensor *t, const int64_t *dims, int rank, tfc_status *st);
/* Writes TensorFlow's repr on one line into buf (truncated to size) and returns buf:
 * "tf.Tensor([[1 2] [3 4]], shape=(2, 2), dtype=int32)", "tf.Tensor(7, shape=(), dtype=int64)",
 * "tf.Tensor([True False], shape=(2,), dtype=bool)", "tf.Tensor([b'ab'], shape=(1,), dtype=string)".
 * Floats print as %g; elements past max_elements are elided as "...". */
TFC_API char *tfc_tensor_str(const tfc_tensor *t, char *buf, size_t size, int64_t max_elements);

#ifdef __cplusplus
}
#endif
#endif
