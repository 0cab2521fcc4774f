/* Internal: checked size arithmetic, the one place where dims, strides, element counts and byte sizes are
 * multiplied or added.
 *
 * Why: a shape is valid when its element count fits int64, and TensorFlow counts left to right, so
 * [0, 2^62, 2^62] is a valid (empty) shape while the partial product 2^62 * 2^62 of its inner dims overflows.
 * Every stride, "outer x inner" split or byte size computed from such a shape by a raw `*` is undefined
 * behaviour (and a wrong number in a release build). So:
 *
 *   RULE (size-arith): no raw `*` (or `*=`) whose operand is a dim (`dims[...]`, `.dims[`, `->dims[`) in
 *   src/ops, src/kernels, src/core, src/data, src/keras and src/eager outside this header. Use
 *     tfc_size_mul / tfc_size_add     user numbers and sizes that may overflow (false on overflow)
 *     tfc_size_bytes                  element count x element size (false on overflow)
 *     tfc_dims_product                element count of dims[from, to) of a tensor that exists
 *     tfc_dims_strides                row-major strides of a tensor that exists
 *   A line that multiplies a dim by something proven small (a loop over validated data, an index inside
 *   bounds) may carry the marker comment `size-ok: <why>`. tools/check_size_arith.sh, run by `make test`,
 *   fails on a new unmarked line.
 *
 * "A tensor that exists": its shape passed tfc_shape_num_elements. For such a shape a product of some of its
 * dims can overflow only when another dim is 0, i.e. the tensor addresses no element; the helpers then give
 * 0, which is as good as any number for an empty block and keeps the arithmetic defined. */
#ifndef TFC_CORE_SIZE_CHECK_H
#define TFC_CORE_SIZE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "tfc/shape.h"

/* *out = a * b for a, b >= 0; false (out untouched) on overflow or a negative factor. */
static inline bool tfc_size_mul(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return false;
    return !__builtin_mul_overflow(a, b, out);
}

/* *out = a + b for a, b >= 0; false on overflow or a negative term. */
static inline bool tfc_size_add(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return false;
    return !__builtin_add_overflow(a, b, out);
}

/* *out = n * elem_size in bytes; false on overflow, a negative n, or more than PTRDIFF_MAX bytes. */
static inline bool tfc_size_bytes(int64_t n, size_t elem_size, size_t *out) {
    size_t b;
    if (n < 0 || __builtin_mul_overflow((uint64_t)n, elem_size, &b) || b > (size_t)PTRDIFF_MAX) return false;
    *out = b;
    return true;
}

/* Product of dims[from, to) of a tensor that exists: 0 when a factor is 0 or (then necessarily an empty
 * tensor) when the product overflows. from >= to gives 1. */
static inline int64_t tfc_dims_product(const int64_t *dims, int from, int to) {
    int64_t n = 1;
    for (int i = from; i < to; i++)
        if (dims[i] <= 0) return 0;
    for (int i = from; i < to; i++)
        if (!tfc_size_mul(n, dims[i], &n)) return 0;
    return n;
}

/* Row-major element strides of dims[0, rank) of a tensor that exists: strides[i] = product of dims[i+1, rank),
 * 0 where that overflows (an empty tensor). */
static inline void tfc_dims_strides(const int64_t *dims, int rank, int64_t *strides) {
    int64_t m = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = m;
        if (!tfc_size_mul(m, dims[i], &m)) m = 0;
    }
}

/* tfc_dims_product over a whole shape. */
static inline int64_t tfc_shape_product(const tfc_shape *s) { return tfc_dims_product(s->dims, 0, s->rank); }

#endif
