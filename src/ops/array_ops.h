/* Internal: helpers the array ops share with their CPU kernels (the kernel recomputes what the shape
 * function validated, e.g. the dense StridedSlice spec, instead of passing it through the framework). */
#ifndef TFC_OPS_ARRAY_OPS_H
#define TFC_OPS_ARRAY_OPS_H

#include "ops/op_util.h"

/* A StridedSlice spec made dense (TensorFlow's ValidateStridedSliceOp): one begin/end/stride per input
 * dimension after expanding the ellipsis, with masks applied and indices clamped. The slice reads
 * processing.dims[i] elements of input dim i starting at begin[i] and stepping strides[i]; the output is
 * that block reshaped to `final` (new axes inserted, shrunk axes dropped). */
typedef struct tfc_strided_slice_spec {
    int rank;                         /* input rank (= processing rank) */
    int64_t begin[TFC_MAX_RANK], end[TFC_MAX_RANK], strides[TFC_MAX_RANK];
    tfc_shape processing;             /* rank dims, each >= 0 (or -1 when the input dim is unknown) */
    tfc_shape final;                  /* output shape */
    bool is_identity;                 /* the slice is the whole input in order */
} tfc_strided_slice_spec;

/* Validates and densifies a spec of n sparse entries. begin/end may be NULL when unknown (graphs): the
 * processing dims then stay -1 unless masks fix them. Errors are INVALID_ARGUMENT with TensorFlow's
 * messages, prefixed with `op`. */
bool tfc_strided_slice_spec_make(const char *op, const tfc_shape *input, const int64_t *begin, const int64_t *end,
                                 const int64_t *strides, int n, int64_t begin_mask, int64_t end_mask,
                                 int64_t ellipsis_mask, int64_t new_axis_mask, int64_t shrink_axis_mask,
                                 tfc_strided_slice_spec *spec, tfc_status *st);

/* Reads the paddings input ([rank, 2] int32/int64; `paddings` NULL when symbolic) of Pad/PadV2/MirrorPad/MirrorPadGrad into pad[rank][2]
 * after checking its shape against `rank` (TensorFlow's messages). Returns false with st set; returns true
 * with *known = false when the value is symbolic. */
bool tfc_array_read_paddings(const char *op, const tfc_shape *paddings_shape, const tfc_tensor *paddings,
                             const tfc_shape *input, int64_t pad[][2], bool *known, tfc_status *st);

#endif
