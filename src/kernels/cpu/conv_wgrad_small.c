/* Conv2DBackpropFilter of 3x3 stride-1 float32 convolutions with a few input channels (an image's first
 * layer: 1-4 channels), by Winograd F(2x2, 3x3) computed in registers (see conv_internal.h).
 *
 * The filter gradient is df[kh, kw, ci, co] = sum over output pixels of x[patch pixel] * dy[pixel, co]. With
 * 2x2 output tiles (conv_winograd.c has the transforms), per tile and transform point p (4x4 points)
 *   M[ci][p][co] += V[ci][p] * D[p][co],   V = B^T d B of the tile's 4x4 input patch (channel ci),
 *                                          D = A dY A^T of the tile's 2x2 output gradient,
 * and df = G^T M G per (ci, co). With one input channel the GEMM form of conv_winograd.c would be a
 * product with one row; here 16 output channels at a time keep the 16 points' accumulators in vector
 * registers, D is formed from the tile's 4 dy vectors with 12 adds, and V (one scalar per point) is
 * broadcast: 16 FMAs per 4 output pixels and 16 channels where the direct sum needs 36 (and the implicit
 * GEMM, on 4-row tiles for a 3-value filter row, 48). dy, the large operand (128x26x26x32 floats: 11 MB),
 * is read once.
 *
 * Work: tile rows (n, 2x2-tile row) split into one contiguous range per unit (at most 4 per thread), each
 * unit accumulating its own M; the units' M are summed in unit order (the same result for the same thread
 * count), then G^T M G. Within a unit, blocks of tile rows: V of the block's tiles first (V [t][ci][16]),
 * then per input channel and per 16 output channels one pass over the block's tiles. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/conv_internal.h"

#pragma GCC diagnostic ignored "-Wpsabi"

#define PTS 16
#define WVL 16
#define MAX_C 4           /* input channels handled here */
#define BLOCK_TILES 64    /* about this many tiles per block (V: 64 * 16 * c floats, in L1) */

typedef float wv __attribute__((vector_size(64)));
typedef float wvu __attribute__((vector_size(64), aligned(4), may_alias));
typedef int wvi __attribute__((vector_size(64)));

typedef float v4 __attribute__((vector_size(16)));
typedef float v4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef int v4i __attribute__((vector_size(16)));
/* A lane permutation by constant indices (GCC's and clang's builtins differ; clang builds the fuzz targets). */
#if defined(__clang__)
#define SHUF4(v, a, b, c, d) __builtin_shufflevector((v), (v), a, b, c, d)
#else
#define SHUF4(v, a, b, c, d) __builtin_shuffle((v), (v4i){a, b, c, d})
#endif
#define LOAD4(p) ((v4)(*(const v4u *)(p)))
#define STORE4(p, x) (*(v4u *)(p) = (x))

/* Taken where it measured faster than the implicit GEMM (1 thread, against TFC_CONV_WINOGRAD=0): one input
 * channel 3-5x (128x28x28 -> 32 channels: 0.2 ms against 0.4; 64x28x28 -> 16: 0.06 against 0.29), two with 32
 * output channels 1.2x. With more input channels the scalar input transform (4-lane vectors only for one
 * channel) costs what the products save: 3 -> 64 channels measured the same, 3 -> 16 and 4 -> 16 0.55-0.7x. */
bool tfc_conv_wgrad_small_ok(const tfc_conv_geom *g) {
    return g->k_h == 3 && g->k_w == 3 && g->stride_h == 1 && g->stride_w == 1 && g->dil_h == 1 && g->dil_w == 1 &&
           g->groups == 1 && (g->in_c == 1 || (g->in_c == 2 && g->out_c >= 32)) && g->out_c >= 1 && g->batch >= 1 &&
           g->out_h >= 1 && g->out_w >= 1 && tfc_conv_winograd_enabled();
}

typedef struct {
    const float *x, *dy;
    int64_t n, h, w, c, oh, ow, co, pt, pl;
    int64_t th, tw, rows; /* tile rows / columns per image; tile rows in all (n * th) */
    int64_t units, block_rows;
    float *acc;           /* units x [c][16][co] */
    float *vbuf;          /* units x [block_rows * tw][c][16] */
    float *df;            /* [3][3][c][co] */
    /* pool mode (tfc_conv2d_wgrad_small_pool_f32): dy is not given but formed per tile from the conv output
     * y (in dy's place, j->dy) and the pooled gradient dp [n, pool_oh, pool_ow, co]; db sums per unit in double */
    const float *dp;      /* NULL: dy mode */
    int64_t pool_oh, pool_ow;
    double *dbacc;        /* units x [co] */
    /* argmax mode (tfc_conv2d_wgrad_small_argmax_f32): y not kept, its pool's routing in amax instead */
    const uint8_t *amax;  /* [n, pool_oh, pool_ow, co] (TFC_POOL_ARGMAX_* bits), or NULL */
} ws_job;

/* V[t][ci][p] of the tiles of tile rows [r0, r1): B^T d B of each tile's 4x4 input patch, zero outside x. */
TFC_SIMD_CLONES static void input_xform(const ws_job *j, int64_t r0, int64_t r1, float *v) {
    const int64_t C = j->c, W = j->w;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t n = r / j->th, ih0 = r % j->th * 2 - j->pt;
        const float *row[4];
        for (int a = 0; a < 4; a++)
            row[a] = ih0 + a >= 0 && ih0 + a < j->h ? j->x + ((n * j->h + ih0 + a) * W) * C : NULL;
        const bool rows_in = row[0] && row[3];
        for (int64_t t = 0; t < j->tw; t++) {
            const int64_t iw0 = t * 2 - j->pl;
            const bool inside = rows_in && iw0 >= 0 && iw0 + 4 <= W; /* the whole patch in x */
            if (inside && C == 1) { /* a patch row is 4 contiguous floats: B^T and B in 4-lane vectors */
                float *o = v + ((r - r0) * j->tw + t) * PTS;
                const v4 d0 = LOAD4(row[0] + iw0), d1 = LOAD4(row[1] + iw0), d2 = LOAD4(row[2] + iw0),
                         d3 = LOAD4(row[3] + iw0);
                const v4 c[4] = {d0 - d2, d1 + d2, d2 - d1, d1 - d3}; /* c[a][b]: B^T row a, patch column b */
                const v4 sign = {-1.0f, 1.0f, -1.0f, -1.0f};
                for (int a = 0; a < 4; a++) { /* (c0 - c2, c1 + c2, c2 - c1, c1 - c3) */
                    const v4 va = SHUF4(c[a], 0, 1, 2, 1) + SHUF4(c[a], 2, 2, 1, 3) * sign;
                    STORE4(o + 4 * a, va);
                }
                continue;
            }
            for (int64_t ci = 0; ci < C; ci++) {
                float cb[4][4]; /* cb[b]: B^T of patch column b (rows combined) */
                for (int b = 0; b < 4; b++) {
                    const int64_t iw = iw0 + b;
                    float d[4];
                    if (inside)
                        for (int a = 0; a < 4; a++) d[a] = row[a][iw * C + ci];
                    else
                        for (int a = 0; a < 4; a++) d[a] = row[a] && iw >= 0 && iw < W ? row[a][iw * C + ci] : 0.0f;
                    cb[b][0] = d[0] - d[2];
                    cb[b][1] = d[1] + d[2];
                    cb[b][2] = d[2] - d[1];
                    cb[b][3] = d[1] - d[3];
                }
                float *o = v + ((r - r0) * j->tw + t) * C * PTS + ci * PTS;
                for (int a = 0; a < 4; a++) { /* B applied to the columns */
                    o[4 * a + 0] = cb[0][a] - cb[2][a];
                    o[4 * a + 1] = cb[1][a] + cb[2][a];
                    o[4 * a + 2] = cb[2][a] - cb[1][a];
                    o[4 * a + 3] = cb[1][a] - cb[3][a];
                }
            }
        }
    }
}

/* The accumulation of one tile (dy pixels y00, y01 above y10, y11; vb: the tile's 16 V values of this
 * input channel) into acc[16]: D = A dY A^T formed on the fly, acc[p] += V[p] D[p]. */
#define TILE_ACC(TYPE, SPLAT, acc, vb, y00, y01, y10, y11)                                                   \
    do {                                                                                                      \
        const TYPE s1a = y00 + y10, s1b = y01 + y11, s2a = y00 - y10, s2b = y01 - y11;                        \
        acc[0] += SPLAT(vb[0]) * y00;                                                                                \
        acc[1] += SPLAT(vb[1]) * (y00 + y01);                                                                        \
        acc[2] += SPLAT(vb[2]) * (y00 - y01);                                                                        \
        acc[3] -= SPLAT(vb[3]) * y01;                                                                                \
        acc[4] += SPLAT(vb[4]) * s1a;                                                                                \
        acc[5] += SPLAT(vb[5]) * (s1a + s1b);                                                                        \
        acc[6] += SPLAT(vb[6]) * (s1a - s1b);                                                                        \
        acc[7] -= SPLAT(vb[7]) * s1b;                                                                                \
        acc[8] += SPLAT(vb[8]) * s2a;                                                                                \
        acc[9] += SPLAT(vb[9]) * (s2a + s2b);                                                                        \
        acc[10] += SPLAT(vb[10]) * (s2a - s2b);                                                                      \
        acc[11] -= SPLAT(vb[11]) * s2b;                                                                              \
        acc[12] -= SPLAT(vb[12]) * y10;                                                                              \
        acc[13] -= SPLAT(vb[13]) * (y10 + y11);                                                                      \
        acc[14] -= SPLAT(vb[14]) * (y10 - y11);                                                                      \
        acc[15] += SPLAT(vb[15]) * y11;                                                                              \
    } while (0)

/* Tile rows [r0, r1) (V of them in v), input channel ci, output channels [o0, o0 + 16) (vector) or the
 * single channel o0 (scalar): acc_out[p * co + o] += the sums. */
#define PASS_BODY(TYPE, LOAD, ZERO, SPLAT)                                                                    \
    const int64_t CO = j->co, C = j->c;                                                                       \
    TYPE acc[PTS];                                                                                            \
    for (int p = 0; p < PTS; p++) acc[p] = ZERO;                                                              \
    for (int64_t r = r0; r < r1; r++) {                                                                       \
        const int64_t n = r / j->th, oh0 = r % j->th * 2;                                                     \
        const float *y0 = j->dy + ((n * j->oh + oh0) * j->ow) * CO + o0;                                      \
        const bool two = oh0 + 1 < j->oh; /* the tile row's second output row exists */                      \
        const float *y1 = two ? y0 + j->ow * CO : y0;                                                         \
        const float *vt = v + (r - r0) * j->tw * C * PTS + ci * PTS;                                          \
        const int64_t full = two ? j->ow / 2 : 0; /* tiles with all 4 pixels */                              \
        int64_t t = 0;                                                                                        \
        for (; t < full; t++, vt += C * PTS) {                                                                \
            PREFETCH_DY(y0 + (2 * t + 2 * PF_TILES) * CO, y1 + (2 * t + 2 * PF_TILES) * CO);                  \
            const TYPE y00 = LOAD(y0 + 2 * t * CO), y01 = LOAD(y0 + (2 * t + 1) * CO);                        \
            const TYPE y10 = LOAD(y1 + 2 * t * CO), y11 = LOAD(y1 + (2 * t + 1) * CO);                        \
            TILE_ACC(TYPE, SPLAT, acc, vt, y00, y01, y10, y11);                                               \
        }                                                                                                     \
        for (; t < j->tw; t++, vt += C * PTS) { /* past the last output row or column: zeros */              \
            const float *vb = vt;                                                                             \
            const bool right = 2 * t + 1 < j->ow;                                                             \
            const TYPE y00 = LOAD(y0 + 2 * t * CO);                                                           \
            const TYPE y01 = right ? LOAD(y0 + (2 * t + 1) * CO) : ZERO;                                      \
            const TYPE y10 = two ? LOAD(y1 + 2 * t * CO) : ZERO;                                              \
            const TYPE y11 = two && right ? LOAD(y1 + (2 * t + 1) * CO) : ZERO;                               \
            TILE_ACC(TYPE, SPLAT, acc, vb, y00, y01, y10, y11);                                               \
        }                                                                                                     \
    }                                                                                                         \
    for (int p = 0; p < PTS; p++) STORE_ADD(acc_out + p * CO, acc[p]);

/* The 4 dy pixels (this pass's channels) of the tile PF_TILES further along the row: dy (128x26x26x32: 11 MB)
 * streams from memory once, and the passes' loads waited on it (60% of their samples); 8 tiles ahead measured
 * a little better than 4 (block_passes -30% and -36% of a CNN training step's samples). (Past the row's end
 * the addresses are only prefetched, never read.) */
#define PF_TILES 8
#define PREFETCH_DY(a, b)                                                                                     \
    do {                                                                                                      \
        __builtin_prefetch((a), 0, 3), __builtin_prefetch((a) + CO, 0, 3);                                    \
        __builtin_prefetch((b), 0, 3), __builtin_prefetch((b) + CO, 0, 3);                                    \
    } while (0)
#define LOAD_V(p) ((wv)(*(const wvu *)(p)))
#define SPLAT_V(s) ((wv){s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s})
#define LOAD_S(p) (*(p))
#define SPLAT_S(s) (s)

static inline __attribute__((always_inline)) void pass_v(const ws_job *j, int64_t r0, int64_t r1, const float *v,
                                                         int64_t ci, int64_t o0, float *acc_out) {
#define STORE_ADD(p, a) (*(wvu *)(p) = *(const wvu *)(p) + (a))
    PASS_BODY(wv, LOAD_V, ((wv){0}), SPLAT_V)
#undef STORE_ADD
}

static inline __attribute__((always_inline)) void pass_s(const ws_job *j, int64_t r0, int64_t r1, const float *v,
                                                         int64_t ci, int64_t o0, float *acc_out) {
#define STORE_ADD(p, a) (*(p) += (a))
    PASS_BODY(float, LOAD_S, 0.0f, SPLAT_S)
#undef STORE_ADD
}

TFC_SIMD_CLONES static void block_passes(const ws_job *j, int64_t r0, int64_t r1, const float *v, float *acc) {
    const int64_t CO = j->co, cv = CO / WVL * WVL;
    for (int64_t ci = 0; ci < j->c; ci++) {
        float *a = acc + ci * PTS * CO;
        int64_t o = 0;
        for (; o < cv; o += WVL) pass_v(j, r0, r1, v, ci, o, a + o);
        for (; o < CO; o++) pass_s(j, r0, r1, v, ci, o, a + o);
    }
}

/* ---- pool mode: dy = ReluGrad(MaxPoolGrad(y, MaxPool(y), dp), y) formed per tile ----
 * With a 2x2 pool of stride 2 and no top/left padding, the pool window (r, t) covers exactly the pixels of
 * the 2x2 output tile (r, t) that exist (a window clipped at the image's bottom/right edge as the tile is),
 * and tiles without a window (the last row or column of an odd VALID output) have zero gradient. Each tile's
 * dy is then computed from its (up to) 4 conv-output pixels and one pooled-gradient pixel with the
 * comparisons of _TfcMaxPoolReluBiasGrad (the first maximum in row-major order by strict <, 0 + dp at it, +0
 * elsewhere, each times (y > 0 ? 1 : 0)): the same bits, so the same df as that op then this kernel, without
 * writing dy (the demo CNN's first layer: 128x26x26x32 floats, 11 MB) and reading it back. */
static inline __attribute__((always_inline)) wv sel_v(wvi m, wv a, wv b) { return (wv)(((wvi)a & m) | ((wvi)b & ~m)); }
static inline __attribute__((always_inline)) wv relu_factor_v(wv y) { return (wv)((wvi)SPLAT_V(1.0f) & (y > (wv){0})); }

/* dy of one tile's 16 channels: pixels a (top left), b (top right), e (bottom left), f (bottom right), -inf
 * for pixels past the output (never chosen by strict <), dpv the pooled gradient */
#define POOL_DZ_V(a, b, e, f, dpv, d00, d01, d10, d11)                                                         \
    do {                                                                                                      \
        const wvi m1 = a < b;                                                                                 \
        wv best_ = sel_v(m1, b, a);                                                                           \
        const wvi m2 = best_ < e;                                                                             \
        best_ = sel_v(m2, e, best_);                                                                          \
        const wvi m3 = best_ < f;                                                                             \
        wvi g_ = (wvi)((wv){0} + (dpv));                                                                      \
        d11 = (wv)(g_ & m3) * relu_factor_v(f);                                                               \
        g_ &= ~m3;                                                                                            \
        d10 = (wv)(g_ & m2) * relu_factor_v(e);                                                               \
        g_ &= ~m2;                                                                                            \
        d01 = (wv)(g_ & m1) * relu_factor_v(b);                                                               \
        d00 = (wv)(g_ & ~m1) * relu_factor_v(a);                                                              \
    } while (0)

static inline float relu_factor_s(float y) { return y > 0 ? 1.0f : 0.0f; }

#define POOL_DZ_S(a, b, e, f, dpv, d00, d01, d10, d11)                                                         \
    do {                                                                                                      \
        const bool m1 = a < b;                                                                                \
        float best_ = m1 ? b : a;                                                                             \
        const bool m2 = best_ < e;                                                                            \
        best_ = m2 ? e : best_;                                                                               \
        const bool m3 = best_ < f;                                                                            \
        const float g_ = 0.0f + (dpv);                                                                        \
        d11 = (m3 ? g_ : 0.0f) * relu_factor_s(f);                                                            \
        d10 = (!m3 && m2 ? g_ : 0.0f) * relu_factor_s(e);                                                     \
        d01 = (!m3 && !m2 && m1 ? g_ : 0.0f) * relu_factor_s(b);                                              \
        d00 = (!m3 && !m2 && !m1 ? g_ : 0.0f) * relu_factor_s(a);                                             \
    } while (0)

/* As PASS_BODY, with each tile's dy formed from y (j->dy) and dp; bsum: the sum of the formed dy over the
 * pass's tiles (TYPE), added to db (double) when db is not NULL. */
#define POOL_PASS_BODY(TYPE, LOAD, ZERO, SPLAT, NEG_INF, POOL_DZ)                                             \
    const int64_t CO = j->co, C = j->c;                                                                       \
    TYPE acc[PTS], bsum = ZERO;                                                                               \
    for (int p = 0; p < PTS; p++) acc[p] = ZERO;                                                              \
    for (int64_t r = r0; r < r1; r++) {                                                                       \
        const int64_t n = r / j->th, rr = r % j->th, oh0 = rr * 2;                                            \
        const float *y0 = j->dy + ((n * j->oh + oh0) * j->ow) * CO + o0;                                      \
        const bool two = oh0 + 1 < j->oh;                                                                     \
        const float *y1 = two ? y0 + j->ow * CO : y0;                                                         \
        const float *dpr = rr < j->pool_oh ? j->dp + ((n * j->pool_oh + rr) * j->pool_ow) * CO + o0 : NULL;               \
        const float *vt = v + (r - r0) * j->tw * C * PTS + ci * PTS;                                          \
        int64_t full = two && dpr ? j->ow / 2 : 0; /* tiles with all 4 pixels and a window */                \
        if (full > j->pool_ow) full = j->pool_ow;                                                                     \
        int64_t t = 0;                                                                                        \
        for (; t < full; t++, vt += C * PTS) {                                                                \
            PREFETCH_DY(y0 + (2 * t + 2 * PF_TILES) * CO, y1 + (2 * t + 2 * PF_TILES) * CO);                  \
            const TYPE a = LOAD(y0 + 2 * t * CO), b = LOAD(y0 + (2 * t + 1) * CO);                            \
            const TYPE e = LOAD(y1 + 2 * t * CO), f = LOAD(y1 + (2 * t + 1) * CO);                            \
            TYPE y00, y01, y10, y11;                                                                          \
            POOL_DZ(a, b, e, f, LOAD(dpr + t * CO), y00, y01, y10, y11);                                      \
            bsum += y00 + y01 + y10 + y11;                                                                    \
            TILE_ACC(TYPE, SPLAT, acc, vt, y00, y01, y10, y11);                                               \
        }                                                                                                     \
        for (; t < j->tw; t++, vt += C * PTS) { /* edge tiles: missing pixels and windows give zeros */      \
            const bool right = 2 * t + 1 < j->ow;                                                             \
            TYPE y00 = ZERO, y01 = ZERO, y10 = ZERO, y11 = ZERO;                                              \
            if (dpr && t < j->pool_ow) {                                                                          \
                const TYPE a = LOAD(y0 + 2 * t * CO);                                                         \
                const TYPE b = right ? LOAD(y0 + (2 * t + 1) * CO) : NEG_INF;                                 \
                const TYPE e = two ? LOAD(y1 + 2 * t * CO) : NEG_INF;                                         \
                const TYPE f = two && right ? LOAD(y1 + (2 * t + 1) * CO) : NEG_INF;                          \
                POOL_DZ(a, b, e, f, LOAD(dpr + t * CO), y00, y01, y10, y11);                                  \
                y01 = right ? y01 : ZERO;                                                                     \
                y10 = two ? y10 : ZERO;                                                                       \
                y11 = two && right ? y11 : ZERO;                                                              \
                bsum += y00 + y01 + y10 + y11;                                                                \
            }                                                                                                 \
            TILE_ACC(TYPE, SPLAT, acc, vt, y00, y01, y10, y11);                                               \
        }                                                                                                     \
    }                                                                                                         \
    for (int p = 0; p < PTS; p++) STORE_ADD(acc_out + p * CO, acc[p]);

static inline __attribute__((always_inline)) void pool_pass_v(const ws_job *j, int64_t r0, int64_t r1, const float *v,
                                                              int64_t ci, int64_t o0, float *acc_out, double *db) {
#define STORE_ADD(p, a) (*(wvu *)(p) = *(const wvu *)(p) + (a))
    POOL_PASS_BODY(wv, LOAD_V, ((wv){0}), SPLAT_V, SPLAT_V(-__builtin_inff()), POOL_DZ_V)
#undef STORE_ADD
    if (db)
        for (int k = 0; k < WVL; k++) db[o0 + k] += (double)bsum[k];
}

static inline __attribute__((always_inline)) void pool_pass_s(const ws_job *j, int64_t r0, int64_t r1, const float *v,
                                                              int64_t ci, int64_t o0, float *acc_out, double *db) {
#define STORE_ADD(p, a) (*(p) += (a))
    POOL_PASS_BODY(float, LOAD_S, 0.0f, SPLAT_S, -__builtin_inff(), POOL_DZ_S)
#undef STORE_ADD
    if (db) db[o0] += (double)bsum;
}

/* Argmax mode: dy of a tile from its window's routing byte (TFC_POOL_ARGMAX_CELL: the cell that
 * _TfcMaxPoolReluBiasGrad's comparisons pick, TFC_POOL_ARGMAX_POS: that cell's y > 0) and dp: the cell gets
 * (0 + dp) * (pos ? 1 : 0), the others +0, the bits POOL_DZ computes from y (a cell that is not picked gets
 * +0 times its ReLU factor: +0). Cells past the output are never picked. */
typedef unsigned char u8x16 __attribute__((vector_size(16), aligned(1), may_alias));
#define ARGMAX_DZ_V(ap, dpv, d00, d01, d10, d11)                                                              \
    do {                                                                                                      \
        const wvi code_ = __builtin_convertvector(*(const u8x16 *)(ap), wvi);                                 \
        const wvi cell_ = code_ & TFC_POOL_ARGMAX_CELL;                                                       \
        const wv pos_ = (wv)((wvi)SPLAT_V(1.0f) & -((code_ >> 2) & 1));                                      \
        const wvi h_ = (wvi)(((wv){0} + (dpv)) * pos_);                                                       \
        d00 = (wv)(h_ & (cell_ == 0));                                                                        \
        d01 = (wv)(h_ & (cell_ == 1));                                                                        \
        d10 = (wv)(h_ & (cell_ == 2));                                                                        \
        d11 = (wv)(h_ & (cell_ == 3));                                                                        \
    } while (0)
#define ARGMAX_DZ_S(ap, dpv, d00, d01, d10, d11)                                                              \
    do {                                                                                                      \
        const int code_ = *(ap), cell_ = code_ & TFC_POOL_ARGMAX_CELL;                                        \
        const float h_ = (0.0f + (dpv)) * (code_ & TFC_POOL_ARGMAX_POS ? 1.0f : 0.0f);                        \
        d00 = cell_ == 0 ? h_ : 0.0f;                                                                         \
        d01 = cell_ == 1 ? h_ : 0.0f;                                                                         \
        d10 = cell_ == 2 ? h_ : 0.0f;                                                                         \
        d11 = cell_ == 3 ? h_ : 0.0f;                                                                         \
    } while (0)

#define ARGMAX_PASS_BODY(TYPE, LOAD, ZERO, SPLAT, DZ)                                                         \
    const int64_t CO = j->co, C = j->c;                                                                       \
    TYPE acc[PTS], bsum = ZERO;                                                                               \
    for (int p = 0; p < PTS; p++) acc[p] = ZERO;                                                              \
    for (int64_t r = r0; r < r1; r++) {                                                                       \
        const int64_t n = r / j->th, rr = r % j->th;                                                          \
        const int64_t at = rr < j->pool_oh ? ((n * j->pool_oh + rr) * j->pool_ow) * CO + o0 : -1;             \
        const float *vt = v + (r - r0) * j->tw * C * PTS + ci * PTS;                                          \
        const int64_t win = at >= 0 ? (j->tw < j->pool_ow ? j->tw : j->pool_ow) : 0; /* tiles with a window */ \
        const bool two = rr * 2 + 1 < j->oh;                                                                  \
        const int64_t full = two ? (win < j->ow / 2 ? win : j->ow / 2) : 0; /* ... and all 4 pixels */        \
        int64_t t = 0;                                                                                        \
        for (; t < full; t++, vt += C * PTS) {                                                                \
            TYPE y00, y01, y10, y11;                                                                          \
            DZ(j->amax + at + t * CO, LOAD(j->dp + at + t * CO), y00, y01, y10, y11);                         \
            bsum += y00 + y01 + y10 + y11;                                                                    \
            TILE_ACC(TYPE, SPLAT, acc, vt, y00, y01, y10, y11);                                               \
        }                                                                                                     \
        for (; t < win; t++, vt += C * PTS) { /* clipped windows: cells past the output ignored (the forward   \
                                                 op never routes there) */                                    \
            const bool right = 2 * t + 1 < j->ow;                                                             \
            TYPE y00, y01, y10, y11;                                                                          \
            DZ(j->amax + at + t * CO, LOAD(j->dp + at + t * CO), y00, y01, y10, y11);                         \
            y01 = right ? y01 : ZERO;                                                                         \
            y10 = two ? y10 : ZERO;                                                                           \
            y11 = two && right ? y11 : ZERO;                                                                  \
            bsum += y00 + y01 + y10 + y11;                                                                    \
            TILE_ACC(TYPE, SPLAT, acc, vt, y00, y01, y10, y11);                                               \
        }                                                                                                     \
        for (; t < j->tw; t++, vt += C * PTS) { /* no window: zero gradient */                               \
            const TYPE z = ZERO;                                                                              \
            TILE_ACC(TYPE, SPLAT, acc, vt, z, z, z, z);                                                       \
        }                                                                                                     \
    }                                                                                                         \
    for (int p = 0; p < PTS; p++) STORE_ADD(acc_out + p * CO, acc[p]);

static inline __attribute__((always_inline)) void argmax_pass_v(const ws_job *j, int64_t r0, int64_t r1,
                                                                const float *v, int64_t ci, int64_t o0,
                                                                float *acc_out, double *db) {
#define STORE_ADD(p, a) (*(wvu *)(p) = *(const wvu *)(p) + (a))
    ARGMAX_PASS_BODY(wv, LOAD_V, ((wv){0}), SPLAT_V, ARGMAX_DZ_V)
#undef STORE_ADD
    if (db)
        for (int k = 0; k < WVL; k++) db[o0 + k] += (double)bsum[k];
}

static inline __attribute__((always_inline)) void argmax_pass_s(const ws_job *j, int64_t r0, int64_t r1,
                                                                const float *v, int64_t ci, int64_t o0,
                                                                float *acc_out, double *db) {
#define STORE_ADD(p, a) (*(p) += (a))
    ARGMAX_PASS_BODY(float, LOAD_S, 0.0f, SPLAT_S, ARGMAX_DZ_S)
#undef STORE_ADD
    if (db) db[o0] += (double)bsum;
}

/* block_passes in pool mode (dz from the conv output) or routing-byte mode (dz from the windows' bytes); the
 * bias sums (into db, the unit's) with the first input channel's passes */
#define DZ_BLOCK_PASSES(name, pass_dz_v, pass_dz_s)                                                               \
    TFC_SIMD_CLONES static void name(const ws_job *j, int64_t r0, int64_t r1, const float *v, float *acc,          \
                                     double *db) {                                                                \
        const int64_t CO = j->co, cv = CO / WVL * WVL;                                                            \
        for (int64_t ci = 0; ci < j->c; ci++) {                                                                   \
            float *a = acc + ci * PTS * CO;                                                                       \
            int64_t o = 0;                                                                                        \
            for (; o < cv; o += WVL) pass_dz_v(j, r0, r1, v, ci, o, a + o, ci == 0 ? db : NULL);                  \
            for (; o < CO; o++) pass_dz_s(j, r0, r1, v, ci, o, a + o, ci == 0 ? db : NULL);                       \
        }                                                                                                         \
    }
DZ_BLOCK_PASSES(block_pool_passes, pool_pass_v, pool_pass_s)
DZ_BLOCK_PASSES(block_argmax_passes, argmax_pass_v, argmax_pass_s)
#undef DZ_BLOCK_PASSES

static void units_run(void *arg, int64_t b, int64_t e) {
    const ws_job *j = arg;
    for (int64_t u = b; u < e; u++) {
        float *acc = j->acc + u * j->c * PTS * j->co;
        float *v = j->vbuf + u * j->block_rows * j->tw * j->c * PTS;
        memset(acc, 0, (size_t)(j->c * PTS * j->co) * sizeof(float));
        if (j->dp) memset(j->dbacc + u * j->co, 0, (size_t)j->co * sizeof(double));
        const int64_t u0 = j->rows * u / j->units, u1 = j->rows * (u + 1) / j->units;
        for (int64_t r0 = u0; r0 < u1; r0 += j->block_rows) {
            const int64_t r1 = r0 + j->block_rows < u1 ? r0 + j->block_rows : u1;
            input_xform(j, r0, r1, v);
            if (j->amax) block_argmax_passes(j, r0, r1, v, acc, j->dbacc + u * j->co);
            else if (j->dp) block_pool_passes(j, r0, r1, v, acc, j->dbacc + u * j->co);
            else block_passes(j, r0, r1, v, acc);
        }
    }
}

/* df rows (ci) in [b, e): the units' M summed in unit order, then G^T M G (rows of M, then columns). */
TFC_SIMD_CLONES static void finish_rows(void *arg, int64_t b, int64_t e) {
    const ws_job *j = arg;
    const int64_t C = j->c, CO = j->co, ustride = C * PTS * CO;
    for (int64_t ci = b; ci < e; ci++) {
        const float *m0 = j->acc + ci * PTS * CO;
#pragma GCC ivdep
        for (int64_t o = 0; o < CO; o++) {
            float m[PTS], h[3][4];
            for (int p = 0; p < PTS; p++) {
                float s = 0.0f;
                for (int64_t u = 0; u < j->units; u++) s += m0[u * ustride + p * CO + o];
                m[p] = s;
            }
            for (int c = 0; c < 4; c++) { /* G^T M */
                h[0][c] = m[c] + 0.5f * (m[4 + c] + m[8 + c]);
                h[1][c] = 0.5f * (m[4 + c] - m[8 + c]);
                h[2][c] = 0.5f * (m[4 + c] + m[8 + c]) + m[12 + c];
            }
            float *d = j->df + ci * CO + o;
            for (int k = 0; k < 3; k++) { /* (G^T M) G */
                d[(3 * k + 0) * C * CO] = h[k][0] + 0.5f * (h[k][1] + h[k][2]);
                d[(3 * k + 1) * C * CO] = 0.5f * (h[k][1] - h[k][2]);
                d[(3 * k + 2) * C * CO] = 0.5f * (h[k][1] + h[k][2]) + h[k][3];
            }
        }
    }
}

static bool geom_ok(const tfc_conv_geom *g, tfc_status *st) {
    if (g->k_h != 3 || g->k_w != 3 || g->stride_h != 1 || g->stride_w != 1 || g->dil_h != 1 || g->dil_w != 1 ||
        g->groups != 1 || g->in_c > MAX_C)
        return tfc_status_set(st, TFC_UNIMPLEMENTED,
                              "Conv2DBackpropFilter: the small-channel Winograd path needs a 3x3 filter, stride 1, "
                              "dilation 1, one group and at most %d input channels", MAX_C);
    return true;
}

/* The filter gradient of j (data, geometry and mode set; df and, in pool mode, db written). */
static bool ws_run(tfc_threadpool *pool, ws_job *jp, float *db, tfc_status *st) {
    ws_job j = *jp;
    if (j.c <= 0 || j.co <= 0) return true; /* (callers of pool mode take it only with c >= 1) */
    j.th = (j.oh + 1) / 2;
    j.tw = (j.ow + 1) / 2;
    j.rows = j.n * j.th;
    if (j.rows <= 0 || j.tw <= 0) {
        memset(j.df, 0, (size_t)(9 * j.c * j.co) * sizeof(float));
        if (db) memset(db, 0, (size_t)j.co * sizeof(float));
        return true;
    }
    const int threads = tfc_threadpool_size(pool);
    /* 4 * 9 * c * co multiply-adds per tile (the direct sum's count, for the pool's cost model) */
    const double work = (double)j.rows * (double)j.tw * 36.0 * (double)(j.c * j.co);
    j.units = threads <= 1 || work < 2e6 ? 1 : (j.rows < 4 * threads ? j.rows : 4 * threads);
    j.block_rows = (BLOCK_TILES + j.tw - 1) / j.tw;
    const size_t acc_floats = (size_t)(j.units * j.c * PTS * j.co), v_floats = (size_t)(j.units * j.block_rows * j.tw * j.c * PTS);
    const size_t db_doubles = db ? (size_t)(j.units * j.co) : 0;
    const size_t bytes = (acc_floats + v_floats) * sizeof(float) + db_doubles * sizeof(double);
    float *buf = tfc_aligned_alloc(bytes);
    if (!buf) return tfc_status_oom(st, "Conv2DBackpropFilter Winograd scratch", bytes);
    j.dbacc = db ? (double *)buf : NULL; /* (first: 8-byte aligned) */
    j.acc = (float *)((double *)buf + db_doubles);
    j.vbuf = j.acc + acc_floats;
    tfc_parallel_for(pool, j.units, (int64_t)(work / (double)j.units / 4) + 1, units_run, &j);
    tfc_parallel_for(pool, j.c, (16 * j.units + 9) * j.co, finish_rows, &j);
    if (db) /* the units' bias sums in unit order */
        for (int64_t o = 0; o < j.co; o++) {
            double s = 0;
            for (int64_t u = 0; u < j.units; u++) s += j.dbacc[u * j.co + o];
            db[o] = (float)s;
        }
    tfc_aligned_free(buf);
    return true;
}

bool tfc_conv2d_wgrad_small_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy,
                                float *df, tfc_status *st) {
    if (!geom_ok(g, st)) return false;
    ws_job j = {.x = x, .dy = dy, .n = g->batch, .h = g->in_h, .w = g->in_w, .c = g->in_c, .oh = g->out_h,
                .ow = g->out_w, .co = g->out_c, .pt = g->pad_top, .pl = g->pad_left, .df = df};
    return ws_run(pool, &j, NULL, st);
}

/* The pool modes' geometry: a 2x2 pool of stride 2 without top or left padding over the whole conv output */
static bool pool_2x2_over(const tfc_conv_geom *g, const tfc_conv_geom *pg) {
    return pg->k_h == 2 && pg->k_w == 2 && pg->stride_h == 2 && pg->stride_w == 2 && pg->pad_top == 0 &&
           pg->pad_left == 0 && pg->in_h == g->out_h && pg->in_w == g->out_w;
}

bool tfc_conv_wgrad_small_pool_ok(const tfc_conv_geom *g, const tfc_conv_geom *pg) {
    return tfc_conv_wgrad_small_ok(g) && pool_2x2_over(g, pg) && pg->in_c == g->out_c && pg->batch == g->batch;
}

/* Pool mode (dz from the conv output y) when amax is NULL, else routing-byte mode (dz from amax) */
static bool pool_modes_run(tfc_threadpool *pool, const tfc_conv_geom *g, const tfc_conv_geom *pg, const float *x,
                           const float *y, const uint8_t *amax, const float *dp, float *df, float *db,
                           tfc_status *st) {
    if (!geom_ok(g, st)) return false;
    if (!pool_2x2_over(g, pg))
        return tfc_status_set(st, TFC_UNIMPLEMENTED,
                              "the fused filter gradient needs a 2x2 pool of stride 2 without top or left padding");
    ws_job j = {.x = x, .dy = y, .n = g->batch, .h = g->in_h, .w = g->in_w, .c = g->in_c, .oh = g->out_h,
                .ow = g->out_w, .co = g->out_c, .pt = g->pad_top, .pl = g->pad_left, .df = df, .dp = dp,
                .pool_oh = pg->out_h, .pool_ow = pg->out_w, .amax = amax};
    return ws_run(pool, &j, db, st);
}

bool tfc_conv2d_wgrad_small_pool_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const tfc_conv_geom *pg,
                                     const float *x, const float *y, const float *dp, float *df, float *db,
                                     tfc_status *st) {
    return pool_modes_run(pool, g, pg, x, y, NULL, dp, df, db, st);
}

bool tfc_conv2d_wgrad_small_argmax_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const tfc_conv_geom *pg,
                                       const float *x, const uint8_t *amax, const float *dp, float *df, float *db,
                                       tfc_status *st) {
    return pool_modes_run(pool, g, pg, x, NULL, amax, dp, df, db, st);
}
