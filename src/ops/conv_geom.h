/* Internal: window geometry shared by the conv/pool op definitions (src/ops/conv_ops.c) and their CPU
 * kernels (src/kernels/cpu/conv*.c, pool.c). The op layer validates attrs and shapes through
 * tfc_conv_geom_init; kernels call it again on validated input to get the same numbers. */
#ifndef TFC_OPS_CONV_GEOM_H
#define TFC_OPS_CONV_GEOM_H

#include "tfc/op.h"

typedef enum { TFC_CONV_2D, TFC_CONV_DEPTHWISE, TFC_CONV_POOL } tfc_conv_kind;

/* Everything a kernel needs, spatial numbers already resolved from data_format. Sizes are logical (NHWC
 * order) whatever the layout; `nchw` says how the input/output tensors are laid out in memory. */
typedef struct tfc_conv_geom {
    bool nchw;
    int64_t batch, in_h, in_w, in_c;
    int64_t k_h, k_w;           /* filter / window spatial size */
    int64_t k_c;                /* conv: filter in_channels (in_c / groups); depthwise: in_c; pool: 1 */
    int64_t out_c;              /* conv: filter out_channels; depthwise: in_c * multiplier; pool: in_c */
    int64_t groups;             /* conv: in_c / k_c (1 unless grouped); depthwise/pool: 1 */
    int64_t mult;               /* depthwise channel multiplier (filter dim 3); else 1 */
    int64_t out_h, out_w;
    int64_t stride_h, stride_w, dil_h, dil_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
} tfc_conv_geom;

/* Validates the window attrs of op `op` (strides, dilations, ksize, padding, explicit_paddings,
 * data_format, as TensorFlow's conv/pool kernels do) and computes output sizes.
 *   in_dims:  input dims in data_format order (rank 4).
 *   f_dims:   filter [filter_height, filter_width, in_channels, out_channels (or multiplier)]; NULL for pools
 *             (the window comes from the ksize attr).
 * Errors (message prefixed by the op name): INVALID_ARGUMENT for bad lengths/values, channel mismatches,
 * negative output sizes or overflows; UNIMPLEMENTED for strides/dilations/windows in batch or depth. */
bool tfc_conv_geom_init(const char *op, tfc_conv_kind kind, const tfc_attrs *attrs, const int64_t in_dims[4],
                        const int64_t f_dims[4], tfc_conv_geom *g, tfc_status *st);

/* The window attrs alone, parsed and validated once (a kernel instance's creation): spatial numbers resolved
 * from data_format. padding: 0 VALID, 1 SAME, 2 EXPLICIT (pad_* then hold explicit_paddings' spatial values;
 * else 0). k_h/k_w: pools' ksize (0 for convolutions, whose window is the filter's). */
typedef struct tfc_conv_attrs {
    bool nchw;
    int padding;
    int64_t stride_h, stride_w, dil_h, dil_w;
    int64_t k_h, k_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
} tfc_conv_attrs;

/* The attr half of tfc_conv_geom_init: the same checks and messages for everything that depends on the attrs
 * alone (data_format, strides, dilations, ksize, padding, explicit_paddings). */
bool tfc_conv_attrs_parse(const char *op, tfc_conv_kind kind, const tfc_attrs *attrs, tfc_conv_attrs *a,
                          tfc_status *st);
/* The shape half: the geometry of parsed attrs a with in_dims / f_dims as tfc_conv_geom_init takes them (which
 * is tfc_conv_attrs_parse then this). */
bool tfc_conv_geom_make(const char *op, tfc_conv_kind kind, const tfc_conv_attrs *a, const int64_t in_dims[4],
                        const int64_t f_dims[4], tfc_conv_geom *g, tfc_status *st);

/* One spatial dim of a pooling window, as TensorFlow's GetWindowedOutputSize: padding 0 VALID (out =
 * (in - k) / stride + 1, an error when in < k), 1 SAME (out = ceil(in / stride), the padding split evenly, the
 * odd cell after), 2 EXPLICIT (*before and *after given). Then the window is bounded without changing the cells
 * any output reads: under SAME a window longer than twice the input becomes 2 * in long (every window then covers
 * the whole input either way), and a stride larger than the window where there is at most one output becomes
 * the window's length, so kernels' index arithmetic cannot overflow on absurd attrs. EXPLICIT windows, strides
 * and paddings above 2^24 are INVALID_ARGUMENT. *k and *stride are updated; errors name op. */
bool tfc_pool_window(const char *op, int64_t in, int64_t *k, int64_t *stride, int padding, int64_t *before,
                     int64_t *after, int64_t *out, tfc_status *st);

/* Output (or input, for the layout) dims in data_format order: [batch, h, w, c] or [batch, c, h, w]. */
static inline void tfc_conv_dims(bool nchw, int64_t n, int64_t h, int64_t w, int64_t c, int64_t out[4]) {
    out[0] = n;
    if (nchw) { out[1] = c; out[2] = h; out[3] = w; }
    else { out[1] = h; out[2] = w; out[3] = c; }
}

/* Shape functions in graphs: a rank-4 input (either layout) whose only unknown dim is the batch (dim 0, as
 * tf.function(input_signature=[TensorSpec([None, h, w, c])]) gives) has its geometry measured with a batch of 1,
 * and the output's batch is unknown again, as TensorFlow's shape inference keeps the other dims. True when s
 * has all other dims known; d receives the dims to measure and *unknown_batch whether d[0] stands in. */
static inline bool tfc_conv_batch_free_dims(const tfc_shape *s, int64_t d[4], bool *unknown_batch) {
    if (s->rank != 4 || s->dims[1] < 0 || s->dims[2] < 0 || s->dims[3] < 0) return false;
    for (int i = 0; i < 4; i++) d[i] = s->dims[i];
    *unknown_batch = d[0] < 0;
    if (*unknown_batch) d[0] = 1;
    return true;
}

#endif
