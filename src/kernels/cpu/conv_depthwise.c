/* Depthwise convolution on NHWC data, direct loops (instantiated for float and double from
 * conv_depthwise_tmpl.h). Each channel sees only its own KH x KW window, so a GEMM formulation degenerates
 * into C tiny products; instead the loops run over channels (contiguous in NHWC) in vector-sized blocks.
 * Parallel over output rows (forward), input rows (backprop input: a gather, no write conflicts) and row
 * chunks with private partial sums reduced at the end (backprop filter).
 *   x [N, H, W, C]   f [KH, KW, C, M]   y [N, OH, OW, C*M] (output channel c*M + m) */
#include <string.h>

#include "kernels/cpu/conv_internal.h"

typedef struct {
    const tfc_conv_geom *g;
    const void *a, *b;  /* fwd: x, f; bwd input: dy, f; bwd filter: x, dy */
    void *out;          /* bwd filter: partial sums [chunks][KH*KW*C*M] */
    int64_t rows_per_chunk;
} dw_job;

#define T float
#define SFX f32
#include "kernels/cpu/conv_depthwise_tmpl.h"
#undef T
#undef SFX

#define T double
#define SFX f64
#include "kernels/cpu/conv_depthwise_tmpl.h"
#undef T
#undef SFX
