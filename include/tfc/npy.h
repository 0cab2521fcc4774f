/* tfc — NumPy's .npy files (format versions 1.0, 2.0, 3.0), as numpy.save writes and numpy.load reads them:
 * a magic string, a Python-literal header {'descr': ..., 'fortran_order': ..., 'shape': (...)}, then the
 * raw C-order element bytes.
 *
 * dtypes: '<f4' float32, '<f8' float64, '<f2' float16, '<i4' int32, '<i8' int64, '<i2' int16, '|i1' int8,
 * '|u1' uint8, '<u2' uint16, '|b1' bool, and fixed-width bytes '|S<n>' / unicode '<U<n>' as string tensors
 * (trailing NULs stripped as NumPy does; unicode is written to the tensor as UTF-8). bfloat16 has no .npy type. */
#ifndef TFC_NPY_H
#define TFC_NPY_H

#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses .npy bytes into a new tensor (caller owns it). max_bytes bounds the element data (0: 2 GiB - 1).
 *   INVALID_ARGUMENT  not an .npy file (magic, version), malformed header, unsupported dtype (object arrays,
 *                     big-endian, structured), fortran_order True, rank > 8, negative or overflowing dims,
 *                     data over max_bytes
 *   DATA_LOSS         the data is shorter or longer than shape x item size */
TFC_API tfc_tensor *tfc_npy_parse(const void *data, size_t size, size_t max_bytes, tfc_status *st);
TFC_API tfc_tensor *tfc_npy_read(const char *path, tfc_status *st); /* NOT_FOUND when the file is missing */
/* Serialises as version 1.0 .npy bytes in *data (tfc_free), strings as '|S<longest>'. INVALID_ARGUMENT for
 * bfloat16, resource and symbolic tensors. */
TFC_API bool tfc_npy_serialize(const tfc_tensor *t, void **data, size_t *size, tfc_status *st);
/* Writes through a temporary file renamed into place. */
TFC_API bool tfc_npy_write(const tfc_tensor *t, const char *path, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
