/* Internal helpers for op definitions: dtype sets, validation shortcuts with TensorFlow-style messages. */
#ifndef TFC_OPS_OP_UTIL_H
#define TFC_OPS_OP_UTIL_H

#include <stdio.h>

#include "tfc/eager.h"
#include "ops/registry.h"

/* Dtype sets for attr specs, composed by string concatenation: "T: {" TFC_T_REAL "}". */
#define TFC_T_FLOATS "float, double, half, bfloat16"
#define TFC_T_INTS "int8, uint8, int16, int32, int64"
#define TFC_T_REAL TFC_T_FLOATS ", " TFC_T_INTS
#define TFC_T_ALL TFC_T_REAL ", bool, string"

/* Shape string scratch: SHP(s) expands to a temporary buffer holding "[2,3]". */
#define SHP(s) tfc_shape_str((s), (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR)

/* Fails with INVALID_ARGUMENT "<op>: <msg>" (printf-style). Returns false. */
#define TFC_OP_ERR(c, st, ...) tfc_op_error((c)->op->name, (st), __VA_ARGS__)
bool tfc_op_error(const char *op, tfc_status *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Input i must have rank r (or between lo and hi). */
bool tfc_check_rank(tfc_shape_ctx *c, int i, int r, const char *what, tfc_status *st);
bool tfc_check_rank_range(tfc_shape_ctx *c, int i, int lo, int hi, const char *what, tfc_status *st);
/* Normalises axis into [0, rank) (accepting [-rank, rank)); INVALID_ARGUMENT naming the op otherwise. */
bool tfc_check_axis(const char *op, int64_t axis, int rank, int64_t *out, tfc_status *st);
/* For a message that quotes, in TensorFlow's words, a value normalised by a rank (an axis counted from 0): ""
 * when the caller gave that value, else " (<what> <given> as given)". Points into one of 4 per-thread buffers that
 * rotate, so up to 4 notes can appear in one message. */
const char *tfc_given_note(const char *what, int64_t given, int64_t normalised);
/* Reads an int32/int64 tensor value (rank <= 1) into out (max n); returns the count or -1 with st set. */
int64_t tfc_read_ints(const char *op, const char *what, const tfc_tensor *t, int64_t *out, int64_t max, tfc_status *st);
/* Validates a computed output shape: non-negative dims and element count within int64. */
bool tfc_check_out_shape(tfc_shape_ctx *c, const tfc_shape *s, tfc_status *st);
/* MatMul's output shape [m, n] from inputs 0 and 1 (rank 2; transpose_a/transpose_b attrs), dims -1 where an
 * input's shape is unknown; INVALID_ARGUMENT with TensorFlow's messages otherwise. Shared by MatMul and
 * _FusedMatMul (src/ops/linalg_ops.c). */
bool tfc_matmul_out_shape(tfc_shape_ctx *c, tfc_shape *out, tfc_status *st);
/* Sets output i to shape s. */
static inline void tfc_set_out(tfc_shape_ctx *c, int i, const tfc_shape *s) { c->out_shapes[i] = *s; }

/* Gradient helper: reduces grad (shaped like the broadcast output) back to the shape of input x by summing
 * the broadcast dims and reshaping (TensorFlow's BroadcastGradientArgs + Sum + Reshape). */
tfc_tensor *tfc_grad_unbroadcast(tfc_ctx *ctx, tfc_tensor *grad, const tfc_tensor *x, tfc_status *st);

#endif
