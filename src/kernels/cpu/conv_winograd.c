/* Winograd F(2x2, 3x3) convolution of float32 NHWC data (see conv_winograd.h).
 *
 * In one dimension, two outputs of a 3-tap filter g over four inputs d are
 *   y = A^T [(G g) . (B^T d)]    B^T = [1  0 -1  0]   G = [ 1    0    0 ]   A^T = [1 1  1  0]
 *                                     [0  1  1  0]       [1/2  1/2  1/2]         [0 1 -1 -1]
 *                                     [0 -1  1  0]       [1/2 -1/2  1/2]
 *                                     [0  1  0 -1]       [ 0    0    1 ]
 * and nested over rows and columns a 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A from the 4x4 input
 * patch d at the tile's top-left input pixel (tiles overlap by 2 input pixels).
 *
 * Layouts, with tiles numbered q = (n * TH + tile row) * TW + tile column, TH = ceil(out_h / 2):
 *   U  [16][C][CO]   G g G^T of every (input channel, output channel) pair: point p = 4 * row + column
 *   V  [16][T][C]    B^T d B of a block of T consecutive tiles (a per-thread scratch)
 *   M  [16][T][CO]   M[p] = V[p] x U[p]: 16 GEMMs [T, C] x [C, CO] on tfc_sgemm's micro-kernels
 * then the output transform A^T M A of each tile (plus bias, ReLU) writes its 2x2 pixels. T is chosen so
 * that V and M of a block (16 T (C + CO) floats) stay in L2 between the three steps, and blocks run in
 * parallel, one scratch slot per running thread. Pixels past the input read as zero (padding, and the
 * bottom/right tiles of odd output sizes, whose extra outputs are dropped). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/gemm.h"

/* 64-byte vector types in inline helpers: no call ever passes one (GCC warns about the ABI regardless) */
#pragma GCC diagnostic ignored "-Wpsabi"

#define PTS 16 /* transform points of a 4x4 patch */

/* About this many bytes of V and M per block (L2 is 1 MB per core on the CPUs measured; the rest holds the
 * U[p] being multiplied and the GEMM's packed edges). */
#define BLOCK_BYTES (640 * 1024)

bool tfc_conv_winograd_enabled(void) {
    static _Atomic int state; /* 0: not read, 1: on, 2: off */
    int s = state;
    if (!s) {
        const char *e = getenv("TFC_CONV_WINOGRAD");
        state = s = e && !strcmp(e, "0") ? 2 : 1;
    }
    return s == 1;
}

static bool is_3x3_s1(const tfc_conv_geom *g) {
    return g->k_h == 3 && g->k_w == 3 && g->stride_h == 1 && g->stride_w == 1 && g->dil_h == 1 && g->dil_w == 1 &&
           g->groups == 1;
}

/* Where it measured faster than the implicit GEMM (sweeps of channel counts and image sizes, 1 and 2
 * threads). The GEMMs over c need c >= 16 to run well (a one-channel image's first layer is 9 products per
 * output on the GEMM path and would become 16 here, and 8 channels measured 0.5-0.9x), and co >= 16 fills
 * a vector. Tiles past odd output sizes cost products for nothing: a 3x3 output in one 4x4 tile needs 64
 * products where the GEMM needs 81 (0.4-1.1x measured), so at most 0.7 times the GEMM's products. The
 * filter transform (16 c co values written per call) takes as long as the products of tens of tiles: at
 * least 32 tiles (one 7x7 image in 16 tiles measured 0.6-0.75x; a 14x14 image, 49 tiles, 1.1-1.8x). */
static bool worth_it(int64_t n, int64_t oh, int64_t ow, int64_t c, int64_t co) {
    if (c < 16 || co < 16 || n <= 0 || oh <= 0 || ow <= 0) return false;
    const double tiles = (double)n * (double)((oh + 1) / 2) * (double)((ow + 1) / 2); /* (no overflow) */
    return tiles >= 32 && tiles * 16 <= 0.7 * 9 * (double)n * (double)oh * (double)ow;
}

bool tfc_conv_winograd_fwd_ok(const tfc_conv_geom *g) {
    return is_3x3_s1(g) && tfc_conv_winograd_enabled() && tfc_sgemm_kernels() &&
           worth_it(g->batch, g->out_h, g->out_w, g->in_c, g->out_c);
}

bool tfc_conv_winograd_bwd_input_ok(const tfc_conv_geom *g) {
    return is_3x3_s1(g) && tfc_conv_winograd_enabled() && tfc_sgemm_kernels() &&
           worth_it(g->batch, g->in_h, g->in_w, g->out_c, g->in_c);
}

/* One convolution in the form the kernels compute:
 *   y[n, oh, ow, co] = act(sum x[n, oh + kh - pt, ow + kw - pl, ci] w[kh, kw, ci, co] + bias[co]) */
typedef struct {
    const float *x;
    int64_t n, h, w, c;
    float *y;
    int64_t oh, ow, co;
    int64_t pt, pl;
    const float *bias;
    bool relu;
    int64_t th, tw, tiles; /* tile rows and columns per image, tiles in all */
    int64_t T;             /* tiles per block */
    int64_t vps, vts, mps, mts; /* V and M: floats between points and between tiles */
    const tfc_gemm_isa *isa;
    const float *u;        /* U [16][c][co] */
    const float *up;       /* U in the GEMM's packed column panels (point p at up + p * up_stride), or NULL */
    int64_t up_stride, up_nr;
    /* scratch: n_slots slots of slot_floats, each V, M, the GEMM's scratch, zeros, a dump row */
    float *scratch;
    size_t slot_floats, m_off, ws_off, zero_off, dump_off;
    _Atomic int *busy;
    int n_slots;
    int parts; /* > 0: the tiles in this many blocks on the pool's threads, whatever the size (else chosen) */
} wino_job;

/* ---- filter transform ---- */
typedef struct {
    const float *f; /* [3][3][c][co]; with flip: the taps in reverse order (a 180-degree rotation) */
    bool flip;
    int64_t c, co;
    float *u;
} filter_job;

/* U rows ci in [b, e): G g G^T in double, rounded once (the halvings and sums are then exact or nearly). */
TFC_SIMD_CLONES static void filter_rows(void *arg, int64_t b, int64_t e) {
    const filter_job *j = arg;
    const int64_t C = j->c, CO = j->co, ps = C * CO;
    for (int64_t ci = b; ci < e; ci++) {
        const float *fp[9];
        for (int t = 0; t < 9; t++) fp[t] = j->f + ((j->flip ? 8 - t : t) * C + ci) * CO;
        float *restrict u = j->u + ci * CO;
#pragma GCC ivdep
        for (int64_t o = 0; o < CO; o++) {
            double g[3][3], h[4][3];
            for (int t = 0; t < 9; t++) g[t / 3][t % 3] = fp[t][o];
            for (int k = 0; k < 3; k++) { /* h = G g: rows of the filter combined */
                h[0][k] = g[0][k];
                h[1][k] = 0.5 * (g[0][k] + g[1][k] + g[2][k]);
                h[2][k] = 0.5 * (g[0][k] - g[1][k] + g[2][k]);
                h[3][k] = g[2][k];
            }
            for (int a = 0; a < 4; a++) { /* h G^T: columns */
                u[(4 * a + 0) * ps + o] = (float)h[a][0];
                u[(4 * a + 1) * ps + o] = (float)(0.5 * (h[a][0] + h[a][1] + h[a][2]));
                u[(4 * a + 2) * ps + o] = (float)(0.5 * (h[a][0] - h[a][1] + h[a][2]));
                u[(4 * a + 3) * ps + o] = (float)h[a][2];
            }
        }
    }
}

typedef struct {
    const wino_job *w;
    float *up;
} pack_job;

static void pack_points(void *arg, int64_t b, int64_t e) {
    const pack_job *j = arg;
    const wino_job *w = j->w;
    for (int64_t p = b; p < e; p++) {
        tfc_gemm_args a = {.m = w->T, .n = w->co, .k = w->c, .b = w->u + p * w->c * w->co, .ldb = w->co};
        w->isa->pack_b_panels(&a, j->up + p * w->up_stride, 0, (w->co + w->up_nr - 1) / w->up_nr);
    }
}

/* The transforms run over channels 16 at a time in GCC vector types (one zmm under AVX-512, two ymm / four
 * xmm in the other clones), the last C % 16 channels in scalars, from the same macro bodies. */
typedef float wv __attribute__((vector_size(64)));
typedef float wvu __attribute__((vector_size(64), aligned(4), may_alias));
typedef int wvi __attribute__((vector_size(64)));
#define WVL 16
#define LOAD_V(p) (*(const wvu *)(p))
#define STORE_V(p, v) (*(wvu *)(p) = (v))
#define LOAD_S(p) (*(p))
#define STORE_S(p, v) (*(p) = (v))

/* Tile position of tile q: image, first row and column (of the output; the input patch starts pt, pl
 * before), advanced tile by tile without divisions. */
typedef struct {
    int64_t n, r, c;
} tile_pos;

static inline tile_pos tile_at(const wino_job *j, int64_t q) {
    const int64_t tpi = j->th * j->tw;
    return (tile_pos){q / tpi, q % tpi / j->tw * 2, q % j->tw * 2};
}

static inline void tile_next(const wino_job *j, tile_pos *p) {
    if ((p->c += 2) < 2 * j->tw) return;
    p->c = 0;
    if ((p->r += 2) < 2 * j->th) return;
    p->r = 0;
    p->n++;
}

/* ---- input transform: V[p][t][:] = (B^T d B)[p] of tiles [q0, q0 + nt) ----
 * B^T d B = (B^T d) B: B^T combines the patch's 4 rows in each of its 4 columns, then B combines the
 * columns. Neighbouring tiles of a tile row share 2 input columns, and so their B^T d columns: one channel
 * slice at a time, across the block's tiles, each tile loads only its 2 new columns (8 pixels instead of
 * 16) and reuses the previous tile's (a tile row's first tile loads all 4). */
/* cb[0..3] = B^T of the patch's column at input column iw (row pointers row[0..3], NULL above or below) */
#define INPUT_COLUMN(TYPE, LOAD, cb, iw)                                                                      \
    do {                                                                                                      \
        const int64_t iw_ = (iw);                                                                             \
        const bool in_ = iw_ >= 0 && iw_ < j->w;                                                              \
        const TYPE d0 = LOAD(row[0] && in_ ? row[0] + iw_ * C : zeros + i);                                   \
        const TYPE d1 = LOAD(row[1] && in_ ? row[1] + iw_ * C : zeros + i);                                   \
        const TYPE d2 = LOAD(row[2] && in_ ? row[2] + iw_ * C : zeros + i);                                   \
        const TYPE d3 = LOAD(row[3] && in_ ? row[3] + iw_ * C : zeros + i);                                   \
        cb[0] = d0 - d2;                                                                                      \
        cb[1] = d1 + d2;                                                                                      \
        cb[2] = d2 - d1;                                                                                      \
        cb[3] = d1 - d3;                                                                                      \
    } while (0)

/* The input pixels the tile PF_TILES further along the tile row loads first (its 2 new columns), all their
 * channels: the strips walk the block's tiles once per 16 channels, and the first walk otherwise waits on
 * every new pixel's lines (the transform's loads stalled on memory, the layer's input not being in cache). */
#define PF_TILES 4
static inline __attribute__((always_inline)) void prefetch_ahead(const wino_job *j, const float *const row[4],
                                                                 int64_t iw0) {
    const int64_t C = j->c;
    for (int64_t iw = iw0 + 2 * PF_TILES + 2; iw < iw0 + 2 * PF_TILES + 4 && iw < j->w; iw++)
        for (int a = 0; a < 4; a++)
            if (row[a])
                for (int64_t k = 0; k < C; k += 16) __builtin_prefetch(row[a] + iw * C + k, 0, 3);
}

#define INPUT_STRIP(NAME, TYPE, LOAD, STORE)                                                                  \
    static inline __attribute__((always_inline)) void NAME(const wino_job *j, int64_t q0, int64_t nt, float *v,    \
                                                           const float *zeros, int64_t i, bool pf) {          \
        const int64_t C = j->c, ps = j->vps;                                                                  \
        const float *row[4];                                                                                  \
        TYPE c0[4], c1[4], c2[4], c3[4];                                                                      \
        for (int a = 0; a < 4; a++) c0[a] = c1[a] = (TYPE){0}; /* (set by the first tile) */                  \
        tile_pos tp = tile_at(j, q0);                                                                         \
        for (int64_t t = 0; t < nt; t++, tile_next(j, &tp)) {                                                 \
            const int64_t ih0 = tp.r - j->pt, iw0 = tp.c - j->pl;                                             \
            for (int a = 0; a < 4; a++)                                                                       \
                row[a] = ih0 + a >= 0 && ih0 + a < j->h ? j->x + ((tp.n * j->h + ih0 + a) * j->w) * C + i : NULL; \
            if (t == 0 || tp.c == 0) {                                                                        \
                INPUT_COLUMN(TYPE, LOAD, c0, iw0);                                                            \
                INPUT_COLUMN(TYPE, LOAD, c1, iw0 + 1);                                                        \
            }                                                                                                 \
            if (pf) prefetch_ahead(j, row, iw0);                                                              \
            INPUT_COLUMN(TYPE, LOAD, c2, iw0 + 2);                                                            \
            INPUT_COLUMN(TYPE, LOAD, c3, iw0 + 3);                                                            \
            float *o = v + t * j->vts + i;                                                                    \
            for (int a = 0; a < 4; a++) { /* B applied to the columns */                                     \
                STORE(o + (4 * a + 0) * ps, c0[a] - c2[a]);                                                   \
                STORE(o + (4 * a + 1) * ps, c1[a] + c2[a]);                                                   \
                STORE(o + (4 * a + 2) * ps, c2[a] - c1[a]);                                                   \
                STORE(o + (4 * a + 3) * ps, c1[a] - c3[a]);                                                   \
                c0[a] = c2[a]; /* the next tile's first two columns */                                        \
                c1[a] = c3[a];                                                                                \
            }                                                                                                 \
        }                                                                                                     \
    }

INPUT_STRIP(input_strip_v, wv, LOAD_V, STORE_V)
INPUT_STRIP(input_strip_s, float, LOAD_S, STORE_S)

TFC_SIMD_CLONES static void input_block(const wino_job *j, int64_t q0, int64_t nt, float *v, const float *zeros) {
    const int64_t C = j->c, cv = C / WVL * WVL;
    int64_t i = 0;
    for (; i < cv; i += WVL) input_strip_v(j, q0, nt, v, zeros, i, i == 0);
    for (; i < C; i++) input_strip_s(j, q0, nt, v, zeros, i, i == 0);
}

/* ---- output transform: the 2x2 pixels A^T M A (+ bias, ReLU) of tiles [q0, q0 + nt) ----
 * mt[p * ps + i]: point p of channel i; y[0..3]: pixels (0,0), (0,1), (1,0), (1,1). ReLU keeps NaN as the
 * Relu op does: v where v > 0 or v is NaN, else +0. */
static inline __attribute__((always_inline)) float act_s(float v, bool relu) {
    return !relu || v > 0 || v != v ? v : 0.0f;
}

/* The same on vectors, in integer shifts and masks of the bits: GCC 12 scalarises the vector comparisons
 * ((v > 0) | (v != v)) in the AVX-512 clone (mask registers to int vectors), which measured 20% of a batch-1
 * CNN inference. Sign bit clear: v >= +0, kept. Set: -0 or negative (-> +0) unless NaN (|bits| above
 * infinity's). Each arithmetic shift by 31 turns a sign into an all-ones or all-zeros lane mask. */
static inline __attribute__((always_inline)) wv act_v(wv v, bool relu) {
    if (!relu) return v;
    const wvi b = (wvi)v, neg = b >> 31, nan = (0x7f800000 - (b & 0x7fffffff)) >> 31;
    return (wv)(b & (~neg | nan));
}

#define OUTPUT_XFORM(TYPE, LOAD, STORE, ACT)                                                                  \
    do {                                                                                                      \
        TYPE r0[4], r1[4];                                                                                    \
        for (int k = 0; k < 4; k++) { /* A^T M: rows */                                                      \
            const TYPE m0 = LOAD(mt + k * ps + i), m1 = LOAD(mt + (4 + k) * ps + i),                          \
                       m2 = LOAD(mt + (8 + k) * ps + i), m3 = LOAD(mt + (12 + k) * ps + i);                   \
            r0[k] = m0 + m1 + m2;                                                                             \
            r1[k] = m1 - m2 - m3;                                                                             \
        }                                                                                                     \
        const TYPE bi = LOAD(bias + i); /* (A^T M) A: columns */                                             \
        STORE(y[0] + i, ACT(r0[0] + r0[1] + r0[2] + bi, relu));                                               \
        STORE(y[1] + i, ACT(r0[1] - r0[2] - r0[3] + bi, relu));                                               \
        STORE(y[2] + i, ACT(r1[0] + r1[1] + r1[2] + bi, relu));                                               \
        STORE(y[3] + i, ACT(r1[1] - r1[2] - r1[3] + bi, relu));                                               \
    } while (0)

static inline __attribute__((always_inline)) void output_tile(const float *mt, int64_t ps, int64_t co,
                                                              const float *bias, bool relu, float *const y[4]) {
    const int64_t cv = co / WVL * WVL;
    int64_t i = 0;
    for (; i < cv; i += WVL) OUTPUT_XFORM(wv, LOAD_V, STORE_V, act_v);
    for (; i < co; i++) OUTPUT_XFORM(float, LOAD_S, STORE_S, act_s);
}

/* Prefetches the (up to) 2x2 pixels of j->y ([n, oh, ow, co]) that tile *tf covers, all channels: for
 * writing (the forward output) or for reading (dy in the filter and input gradients). */
static inline __attribute__((always_inline)) void prefetch_out_tile(const wino_job *j, const tile_pos *tf,
                                                                    bool write) {
    const int64_t CO = j->co, len = (tf->c + 1 < j->ow ? 2 : 1) * CO;
    for (int a = 0; a < 2 && tf->r + a < j->oh; a++) {
        const float *row = j->y + ((tf->n * j->oh + tf->r + a) * j->ow + tf->c) * CO;
        if (write)
            for (int64_t k = 0; k < len; k += 16) __builtin_prefetch(row + k, 1, 3);
        else
            for (int64_t k = 0; k < len; k += 16) __builtin_prefetch(row + k, 0, 3);
    }
}

TFC_SIMD_CLONES static void output_block(const wino_job *j, int64_t q0, int64_t nt, const float *m, const float *zeros,
                                         float *dump) {
    const int64_t CO = j->co, ps = j->mps;
    const float *bias = j->bias ? j->bias : zeros;
    tile_pos tp = tile_at(j, q0), tf = tile_at(j, q0 + PF_TILES);
    for (int64_t t = 0; t < nt; t++, tile_next(j, &tp), tile_next(j, &tf)) {
        /* the output pixels PF_TILES tiles ahead, for writing: the stores otherwise wait on each line's read
         * from memory (the layer's output is new memory) */
        if (q0 + t + PF_TILES < j->tiles) prefetch_out_tile(j, &tf, true);
        float *y[4];
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                y[2 * a + b] = tp.r + a < j->oh && tp.c + b < j->ow
                                   ? j->y + ((tp.n * j->oh + tp.r + a) * j->ow + tp.c + b) * CO
                                   : dump;
        /* relu as a constant in each call: branch-free loops */
        if (j->relu) output_tile(m + t * j->mts, ps, CO, bias, true, y);
        else output_tile(m + t * j->mts, ps, CO, bias, false, y);
    }
}

/* ---- blocks ---- */
static int take_slot(wino_job *j) {
    for (;;)
        for (int s = 0; s < j->n_slots; s++) {
            int expect = 0;
            if (atomic_compare_exchange_strong(&j->busy[s], &expect, 1)) return s;
        }
}

static void run_blocks(void *arg, int64_t b, int64_t e) {
    wino_job *j = arg;
    const int slot = take_slot(j);
    float *v = j->scratch + (size_t)slot * j->slot_floats, *m = v + j->m_off, *ws = v + j->ws_off;
    const float *zeros = v + j->zero_off;
    float *dump = v + j->dump_off;
    for (int64_t blk = b; blk < e; blk++) {
        const int64_t q0 = blk * j->T, nt = j->tiles - q0 < j->T ? j->tiles - q0 : j->T;
        input_block(j, q0, nt, v, zeros);
        for (int p = 0; p < PTS; p++) {
            const tfc_gemm_args a = {.m = nt, .n = j->co, .k = j->c, .alpha = 1.0f, .beta = 0.0f,
                                     .a = v + p * j->vps, .lda = j->vts,
                                     .b = j->u + p * j->c * j->co, .ldb = j->co,
                                     .c = m + p * j->mps, .ldc = j->mts,
                                     .bp = j->up ? j->up + p * j->up_stride : NULL, .bp_stride = j->up_nr * j->c,
                                     .a_over = true}; /* (rows past nt: the next point's, or M: see m_off) */
            j->isa->serial(&a, ws);
        }
        output_block(j, q0, nt, m, zeros, dump);
    }
    atomic_store(&j->busy[slot], 0);
}

/* Tiles per block for the geometry of j (c, co, tiles set) on `threads` threads. */
static int64_t block_tiles(const wino_job *j, int threads) {
    const int mr = j->isa->mr;
    int64_t T = BLOCK_BYTES / (int64_t)(PTS * sizeof(float) * (size_t)(j->c + j->co)) / mr * mr;
    /* Every block multiplies by all of U: past L2 (16 c co floats over 512 KB: 128 -> 128 channels) it comes
     * from L3 or memory, and T rows per U value are what keeps the kernels fed (512 -> 512 channels, 7x7:
     * 28 tiles ran at 2/3 of the speed of 112) */
    const int64_t tmin = (double)PTS * (double)j->c * (double)j->co * sizeof(float) > 512.0 * 1024 ? 8 * mr : 2 * mr;
    if (T < tmin) T = tmin;
    /* at least 2 blocks per thread when there are enough tiles, so a thread slowed by other load does not
     * hold the others up at the end */
    const int64_t per = (j->tiles + 2 * threads - 1) / (2 * threads);
    if (threads > 1 && per < T) T = per > 2 * mr ? (per + mr - 1) / mr * mr : 2 * mr;
    if (T > j->tiles) T = j->tiles;
    return T;
}

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

/* The convolution of j (geometry set) with filter f as filter_job describes it. */
/* u_given: U [16][c][co] of f already computed (tfc_conv_winograd_filter_f32), or NULL to compute it here. */
static bool winograd_run(tfc_threadpool *pool, wino_job *j, const float *f, const float *u_given, bool flip,
                         tfc_status *st) {
    const char *what = "Conv2D Winograd scratch";
    j->th = (j->oh + 1) / 2;
    j->tw = (j->ow + 1) / 2;
    j->tiles = j->n * j->th * j->tw;
    if (j->tiles == 0 || j->co == 0) return true;
    if (j->c == 0) { /* no input channels: every pixel is act(bias) */
        const int64_t pixels = j->n * j->oh * j->ow;
        for (int64_t q = 0; q < pixels; q++)
            for (int64_t o = 0; o < j->co; o++) j->y[q * j->co + o] = act_s(j->bias ? j->bias[o] : 0.0f, j->relu);
        return true;
    }
    /* Below about 2M multiply-adds (one 11x11x32 -> 64 image: 1.2M, 6 microseconds) waking the pool costs
     * more than it saves (a batch-1 CNN inference ran 25% slower on 2 threads than on 1): one thread. */
    const double macs = (double)j->tiles * PTS * (double)j->c * (double)j->co;
    const int threads = macs < 2097152.0 && j->parts <= 0 ? 1 : tfc_threadpool_size(pool);
    int64_t T = block_tiles(j, threads);
    if (j->parts > 0) {
        /* equal parts, rounded up to whole micro-tiles of the GEMM (its A rows read in place, unpacked) where
         * that still makes `parts` blocks */
        const int64_t mr = j->isa->mr, eq = (j->tiles + j->parts - 1) / j->parts, up = (eq + mr - 1) / mr * mr;
        T = (j->tiles + up - 1) / up >= j->parts ? up : eq;
    }
    j->T = T;
    const int64_t blocks = (j->tiles + T - 1) / T;
    j->n_slots = blocks < threads ? (int)blocks : threads;

    /* U, and its packed panels where the GEMM would otherwise pack a partial panel (or all of B, for more
     * than 256 columns) on every call */
    const tfc_gemm_args probe = {.m = T, .n = j->co, .k = j->c};
    j->up_nr = j->isa->bp_nr(&probe);
    const bool pack = j->co % j->up_nr != 0 || j->co > 256;
    j->up_stride = pack ? (j->co + j->up_nr - 1) / j->up_nr * j->up_nr * j->c : 0;
    const size_t u_floats = u_given ? 0 : round16((size_t)(PTS * j->c * j->co)),
                 up_floats = round16((size_t)(PTS * j->up_stride));
    const size_t ft_floats = flip && !u_given ? round16((size_t)(9 * j->c * j->co)) : 0;
    /* point-major V and M (a tile-major layout, one store stream per tile, measured the same) */
    j->vps = T * j->c, j->vts = j->c, j->mps = T * j->co, j->mts = j->co;
    j->m_off = round16((size_t)((T - 1) * j->vts + (PTS - 1) * j->vps + j->c));
    j->ws_off = j->m_off + round16((size_t)((T - 1) * j->mts + (PTS - 1) * j->mps + j->co));
    j->zero_off = j->ws_off + round16(j->isa->ws_floats(&probe));
    j->dump_off = j->zero_off + round16((size_t)(j->c > j->co ? j->c : j->co));
    /* then slack: the GEMMs read V's rows in place up to the next multiple of MR past a block's tiles (a_over),
     * which for the last point runs past V into what follows it (M, ... and at most MR rows of c floats) */
    j->slot_floats = j->dump_off + round16((size_t)j->co) + round16((size_t)(j->isa->mr * j->c));
    const size_t floats = u_floats + up_floats + ft_floats + (size_t)j->n_slots * j->slot_floats;
    const size_t bytes = floats * sizeof(float) + (size_t)j->n_slots * sizeof(_Atomic int);
    char *buf = tfc_aligned_alloc(bytes);
    if (!buf) return tfc_status_oom(st, what, bytes);
    float *u = (float *)buf, *up = u + u_floats, *ft = up + up_floats;
    j->scratch = ft + ft_floats;
    j->busy = (_Atomic int *)(buf + floats * sizeof(float));
    for (int s = 0; s < j->n_slots; s++) {
        atomic_init(&j->busy[s], 0);
        float *slot = j->scratch + (size_t)s * j->slot_floats;
        memset(slot + j->zero_off, 0, (size_t)(j->dump_off - j->zero_off) * sizeof(float));
    }

    if (u_given) {
        j->u = u_given;
    } else {
        if (flip) { /* [3][3][co][c] (the forward filter's channel order) -> [3][3][c][co] */
            tfc_conv_transpose(pool, f, ft, 9, j->co, j->c, sizeof(float));
            f = ft;
        }
        filter_job fj = {f, flip, j->c, j->co, u};
        tfc_parallel_for(pool, j->c, 16 * j->co, filter_rows, &fj);
        j->u = u;
    }
    j->up = NULL;
    if (pack) {
        pack_job pj = {j, up};
        tfc_parallel_for(pool, PTS, j->c * j->co, pack_points, &pj);
        j->up = up;
    }
    tfc_parallel_for(pool, blocks, T * PTS * j->c * j->co / 8 + 1, run_blocks, j);
    tfc_aligned_free(buf);
    return true;
}

static bool check(const char *op, const tfc_conv_geom *g, const tfc_gemm_isa **isa, tfc_status *st) {
    if (!is_3x3_s1(g))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: the Winograd path needs a 3x3 filter, stride 1, dilation 1, one group",
                              op);
    if (!(*isa = tfc_sgemm_kernels()))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: the Winograd path needs tfc's GEMM kernels (TFC_GEMM=blas)", op);
    return true;
}

bool tfc_conv2d_winograd_fwd_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f,
                                 const float *bias, bool relu, float *y, tfc_status *st) {
    wino_job j = {.x = x, .n = g->batch, .h = g->in_h, .w = g->in_w, .c = g->in_c, .y = y, .oh = g->out_h,
                  .ow = g->out_w, .co = g->out_c, .pt = g->pad_top, .pl = g->pad_left, .bias = bias, .relu = relu};
    if (!check("Conv2D", g, &j.isa, st)) return false;
    return winograd_run(pool, &j, f, NULL, false, st);
}

void tfc_conv_winograd_filter_f32(tfc_threadpool *pool, const float *f, int64_t c, int64_t co, float *u) {
    filter_job fj = {f, false, c, co, u};
    tfc_parallel_for(pool, c, 16 * co, filter_rows, &fj);
}

bool tfc_conv2d_winograd_fwd_u_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *u,
                                   const float *bias, bool relu, float *y, tfc_status *st) {
    return tfc_conv2d_winograd_fwd_u_parts_f32(pool, g, x, u, bias, relu, 0, y, st);
}

bool tfc_conv2d_winograd_fwd_u_parts_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *u,
                                         const float *bias, bool relu, int parts, float *y, tfc_status *st) {
    wino_job j = {.x = x, .n = g->batch, .h = g->in_h, .w = g->in_w, .c = g->in_c, .y = y, .oh = g->out_h,
                  .ow = g->out_w, .co = g->out_c, .pt = g->pad_top, .pl = g->pad_left, .bias = bias, .relu = relu,
                  .parts = parts};
    if (!check("Conv2D", g, &j.isa, st)) return false;
    return winograd_run(pool, &j, NULL, u, false, st);
}

/* dx[ih, iw] = sum dy[ih + pad_top - kh, iw + pad_left - kw] f[kh, kw] = sum dy[ih - (2 - pad_top) + kh',
 * iw - (2 - pad_left) + kw'] f[2 - kh', 2 - kw']: the forward form with padding 2 - pad (negative for
 * EXPLICIT paddings over 2: the window then starts inside dy, which the bounds checks handle alike). */
bool tfc_conv2d_winograd_bwd_input_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy, const float *f,
                                       float *dx, tfc_status *st) {
    wino_job j = {.x = dy, .n = g->batch, .h = g->out_h, .w = g->out_w, .c = g->out_c, .y = dx, .oh = g->in_h,
                  .ow = g->in_w, .co = g->in_c, .pt = 2 - g->pad_top, .pl = 2 - g->pad_left};
    if (!check("Conv2DBackpropInput", g, &j.isa, st)) return false;
    /* the adjoint form over dy's tiles where it has at most 0.8 times as many ("VALID": 11x11 from 13x13,
     * 36 against 49 per image, measured 1.3-1.9x faster at 32 -> 64 channels); with as many (SAME) its 16
     * read-modify-writes of dx per tile cost more than the 4 stores of this form (56x56, 64 channels: 1.5x
     * slower). Its units are whole images: at least one per thread. */
    const double tiles_in = (double)((g->in_h + 1) / 2) * (double)((g->in_w + 1) / 2);
    const double tiles_out = (double)((g->out_h + 1) / 2) * (double)((g->out_w + 1) / 2);
    if (tiles_out <= 0.8 * tiles_in && g->batch >= tfc_threadpool_size(pool))
        return tfc_conv2d_winograd_bwd_input_adj_f32(pool, g, dy, f, dx, st);
    return winograd_run(pool, &j, f, NULL, true, st);
}

/* ---- filter gradient ----
 * y_tile = A^T [U . V] A is linear in U = G g G^T, so over all tiles
 *   dL/dU[p] = sum_tiles V[p] . (A dY A^T)[p]   (dY: the tile's 2x2 output gradient, zero past out_h/out_w)
 *   dL/dg = G^T (dL/dU) G                       (per (input channel, output channel) pair, 4x4 -> 3x3)
 * and the sum over tiles of each transform point p is a GEMM M[p][C, CO] += V[p][T, C]^T x D[p][T, CO],
 * D = A dY A^T of the block's tiles (in the layout of the forward path's M). Blocks are split into one
 * contiguous run per unit (at most one unit per thread), each unit accumulating its own M over its blocks
 * (beta 1), and the units' M are summed in unit order (the same result for the same thread count) before
 * G^T M G. Against float64 (uniform [-1, 1) data, 8x56x56x64 -> 64 SAME and 32x28x28x64 -> 64: sums of 25k
 * products) the largest error was 2.1-2.3x the per-element tolerance of tests/ops, the implicit-GEMM path's
 * 4.1-4.8x (one long float32 chain per output): each point here sums over tiles, a quarter as many terms. */
#define DY_XFORM(TYPE, LOAD, STORE)                                                                           \
    do {                                                                                                      \
        const TYPE y00 = LOAD(yp[0] + i), y01 = LOAD(yp[1] + i), y10 = LOAD(yp[2] + i), y11 = LOAD(yp[3] + i); \
        TYPE s[4][2]; /* A dY: rows */                                                                        \
        s[0][0] = y00, s[0][1] = y01;                                                                         \
        s[1][0] = y00 + y10, s[1][1] = y01 + y11;                                                             \
        s[2][0] = y00 - y10, s[2][1] = y01 - y11;                                                             \
        s[3][0] = -y10, s[3][1] = -y11;                                                                       \
        for (int a = 0; a < 4; a++) { /* (A dY) A^T: columns */                                              \
            STORE(o + (4 * a + 0) * ps + i, s[a][0]);                                                         \
            STORE(o + (4 * a + 1) * ps + i, s[a][0] + s[a][1]);                                               \
            STORE(o + (4 * a + 2) * ps + i, s[a][0] - s[a][1]);                                               \
            STORE(o + (4 * a + 3) * ps + i, -s[a][1]);                                                        \
        }                                                                                                     \
    } while (0)

/* D[p][t][:] of tiles [q0, q0 + nt) from the output gradient (j->y, [n, oh, ow, co]) */
TFC_SIMD_CLONES static void dy_block(const wino_job *j, int64_t q0, int64_t nt, float *d, const float *zeros) {
    const int64_t CO = j->co, ps = j->mps, cv = CO / WVL * WVL;
    tile_pos tp = tile_at(j, q0), tf = tile_at(j, q0 + PF_TILES);
    for (int64_t t = 0; t < nt; t++, tile_next(j, &tp), tile_next(j, &tf)) {
        /* dy's pixels PF_TILES tiles ahead: dy is the layer's new output gradient, past L2 at training sizes
         * (128x11x11x64: 4 MB), and the loads of each tile otherwise waited on memory (half of the
         * transform's samples) */
        if (q0 + t + PF_TILES < j->tiles) prefetch_out_tile(j, &tf, false);
        const float *yp[4];
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                yp[2 * a + b] = tp.r + a < j->oh && tp.c + b < j->ow
                                    ? j->y + ((tp.n * j->oh + tp.r + a) * j->ow + tp.c + b) * CO
                                    : zeros;
        float *o = d + t * j->mts;
        int64_t i = 0;
        for (; i < cv; i += WVL) DY_XFORM(wv, LOAD_V, STORE_V);
        for (; i < CO; i++) DY_XFORM(float, LOAD_S, STORE_S);
    }
}

typedef struct {
    wino_job w;
    int64_t blocks, units;
    size_t acc_off; /* the unit's M [16][c][co] (swap: [16][co][c]) in its slot */
    bool swap;      /* M^T[p] = D[p]^T V[p] (see swap_product) */
    float *df;      /* [3][3][c][co] */
} bf_job;

static void bf_units(void *arg, int64_t b, int64_t e) {
    bf_job *bj = arg;
    const wino_job *j = &bj->w;
    const int64_t C = j->c, CO = j->co;
    for (int64_t u = b; u < e; u++) {
        float *v = j->scratch + (size_t)u * j->slot_floats, *d = v + j->m_off, *ws = v + j->ws_off;
        const float *zeros = v + j->zero_off;
        float *acc = v + bj->acc_off;
        memset(acc, 0, (size_t)(PTS * C * CO) * sizeof(float));
        for (int64_t blk = u * bj->blocks / bj->units; blk < (u + 1) * bj->blocks / bj->units; blk++) {
            const int64_t q0 = blk * j->T, nt = j->tiles - q0 < j->T ? j->tiles - q0 : j->T;
            input_block(j, q0, nt, v, zeros);
            dy_block(j, q0, nt, d, zeros);
            for (int p = 0; p < PTS; p++) {
                const float *vp = v + p * j->vps, *dp = d + p * j->mps;
                const tfc_gemm_args a = bj->swap ? (tfc_gemm_args){.ta = true, .m = CO, .n = C, .k = nt, .alpha = 1.0f,
                                                                   .beta = 1.0f, .a = dp, .lda = j->mts, .b = vp,
                                                                   .ldb = j->vts, .c = acc + p * C * CO, .ldc = C}
                                                 : (tfc_gemm_args){.ta = true, .m = C, .n = CO, .k = nt, .alpha = 1.0f,
                                                                   .beta = 1.0f, .a = vp, .lda = j->vts, .b = dp,
                                                                   .ldb = j->mts, .c = acc + p * C * CO, .ldc = CO};
                j->isa->serial(&a, ws);
            }
        }
    }
}

/* df rows ci in [b, e): the units' M summed, then G^T M G (rows of M combined, then columns) */
TFC_SIMD_CLONES static void bf_finish(void *arg, int64_t b, int64_t e) {
    const bf_job *bj = arg;
    const wino_job *j = &bj->w;
    const int64_t C = j->c, CO = j->co, ps = C * CO;
    for (int64_t ci = b; ci < e; ci++) {
        float *restrict df = bj->df + ci * CO;
#pragma GCC ivdep
        for (int64_t o = 0; o < CO; o++) {
            float m[PTS], h[3][4];
            for (int p = 0; p < PTS; p++) {
                float s = 0.0f;
                const size_t at = (size_t)(p * ps + (bj->swap ? o * C + ci : ci * CO + o));
                for (int64_t u = 0; u < bj->units; u++)
                    s += j->scratch[(size_t)u * j->slot_floats + bj->acc_off + at];
                m[p] = s;
            }
            for (int c = 0; c < 4; c++) { /* G^T M */
                h[0][c] = m[c] + 0.5f * (m[4 + c] + m[8 + c]);
                h[1][c] = 0.5f * (m[4 + c] - m[8 + c]);
                h[2][c] = 0.5f * (m[4 + c] + m[8 + c]) + m[12 + c];
            }
            for (int k = 0; k < 3; k++) { /* (G^T M) G */
                df[(3 * k + 0) * ps + o] = h[k][0] + 0.5f * (h[k][1] + h[k][2]);
                df[(3 * k + 1) * ps + o] = 0.5f * (h[k][1] - h[k][2]);
                df[(3 * k + 2) * ps + o] = 0.5f * (h[k][1] + h[k][2]) + h[k][3];
            }
        }
    }
}

/* Fraction of the micro-kernel's multiply-adds that land in an m x n product: tiles of mr rows, columns in
 * vectors of 16 (the AVX-512 width; the narrower kernels' waste is no larger). */
static double tile_use(int64_t m, int64_t n, int64_t mr) {
    const int64_t mp = (m + mr - 1) / mr * mr, np = (n + 15) / 16 * 16;
    return (double)m / (double)mp * (double)n / (double)np;
}

/* The per-point product as M[p] = V^T D ([c, co]: c rows) or M^T[p] = D^T V ([co, c]), whichever wastes less
 * of the micro-kernel's tiles: 32 -> 64 channels made 32 rows in 14-row tiles (76% used) one way and 64
 * rows (91%) the other, which measured 1.15-1.2x faster for the whole filter gradient (with today's 12-row
 * tiles both ways use 89%). */
static bool swap_product(const tfc_gemm_isa *isa, int64_t c, int64_t co) {
    return tile_use(co, c, isa->mr) > tile_use(c, co, isa->mr);
}

/* Against the implicit-GEMM filter gradient (float32, 1 thread, 2026 measurements on AMD Zen): per 2x2 tile,
 * the GEMM path spends 9 * (output pixels of the tile) * c * co multiply-adds, this path 16 c co / (tile use)
 * in its products plus about 14 * 16 * (c + co) in its transforms (fitted to 11x11 outputs with 16 -> 32,
 * 32 -> 32, 32 -> 64 and 64 -> 64 channels, 0.7x, 0.9x, 1.17x and 1.24x the GEMM's speed, and 25x25 with
 * 64 -> 64, 1.36x; alpha from 11 to 15). Taken where that model predicts it faster: 56x56 outputs with
 * 64 -> 64 channels (1.45x measured), 11x11 with 32 -> 64 (model 1.08x); not 11x11 with 32 -> 32 or fewer
 * channels, nor 28x28 with 16 -> 32 or 24 -> 24 (model 0.85x and 0.7x; there the GEMM measured 1.2x and
 * 1.37x faster than this path). */
bool tfc_conv_winograd_bwd_filter_ok(const tfc_conv_geom *g) {
    if (!is_3x3_s1(g) || !tfc_conv_winograd_enabled() || !worth_it(g->batch, g->out_h, g->out_w, g->in_c, g->out_c))
        return false;
    const tfc_gemm_isa *isa = tfc_sgemm_kernels();
    if (!isa) return false;
    const double c = (double)g->in_c, co = (double)g->out_c;
    const double tiles = (double)g->batch * (double)((g->out_h + 1) / 2) * (double)((g->out_w + 1) / 2);
    const double use = swap_product(isa, g->in_c, g->out_c) ? tile_use(g->out_c, g->in_c, isa->mr)
                                                            : tile_use(g->in_c, g->out_c, isa->mr);
    const double gemm = 9 * (double)g->batch * (double)g->out_h * (double)g->out_w * c * co;
    return tiles * (16 * c * co / use + 14 * 16 * (c + co)) <= gemm;
}

bool tfc_conv2d_winograd_bwd_filter_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy,
                                        float *df, tfc_status *st) {
    bf_job bj = {.w = {.x = x, .n = g->batch, .h = g->in_h, .w = g->in_w, .c = g->in_c, .y = (float *)dy,
                       .oh = g->out_h, .ow = g->out_w, .co = g->out_c, .pt = g->pad_top, .pl = g->pad_left},
                 .df = df};
    wino_job *j = &bj.w;
    if (!check("Conv2DBackpropFilter", g, &j->isa, st)) return false;
    j->th = (j->oh + 1) / 2;
    j->tw = (j->ow + 1) / 2;
    j->tiles = j->n * j->th * j->tw;
    if (j->tiles == 0 || j->c == 0 || j->co == 0) {
        memset(df, 0, (size_t)(9 * j->c * j->co) * sizeof(float));
        return true;
    }
    const int threads = tfc_threadpool_size(pool);
    const int64_t T = block_tiles(j, threads);
    j->T = T;
    bj.blocks = (j->tiles + T - 1) / T;
    bj.units = bj.blocks < threads ? bj.blocks : threads;
    bj.swap = swap_product(j->isa, j->c, j->co);
    const tfc_gemm_args probe = {.ta = true, .m = bj.swap ? j->co : j->c, .n = bj.swap ? j->c : j->co, .k = T};
    /* V [16][T][c] and D [16][T][co] as the forward path's V and M */
    j->vps = T * j->c, j->vts = j->c, j->mps = T * j->co, j->mts = j->co;
    j->m_off = round16((size_t)((T - 1) * j->vts + (PTS - 1) * j->vps + j->c));
    j->ws_off = j->m_off + round16((size_t)((T - 1) * j->mts + (PTS - 1) * j->mps + j->co));
    j->zero_off = j->ws_off + round16(j->isa->ws_floats(&probe));
    bj.acc_off = j->zero_off + round16((size_t)(j->c > j->co ? j->c : j->co));
    j->slot_floats = bj.acc_off + round16((size_t)(PTS * j->c * j->co));
    const size_t bytes = (size_t)bj.units * j->slot_floats * sizeof(float);
    j->scratch = tfc_aligned_alloc(bytes);
    if (!j->scratch) return tfc_status_oom(st, "Conv2DBackpropFilter Winograd scratch", bytes);
    for (int64_t u = 0; u < bj.units; u++)
        memset(j->scratch + (size_t)u * j->slot_floats + j->zero_off, 0,
               (size_t)(bj.acc_off - j->zero_off) * sizeof(float));
    tfc_parallel_for(pool, bj.units, (int64_t)((double)j->tiles / (double)bj.units * PTS * j->c * j->co / 4) + 1,
                     bf_units, &bj);
    tfc_parallel_for(pool, j->c, (16 * bj.units + 9) * j->co, bf_finish, &bj);
    tfc_aligned_free(j->scratch);
    return true;
}

/* ---- input gradient as the adjoint of the forward transforms ----
 * The forward convolution's tiles cover its output y; y_tile = A^T [sum_ci U . (B^T d B)] A is linear in the
 * input patch d, so its adjoint gives the input gradient from the output gradient's tiles:
 *   D[p] = (A dY A^T)[p]                       (the tile's 2x2 dy, as the filter gradient's D)
 *   Z[p][t][ci] = sum_co D[p][t][co] U[p][ci][co]  (16 GEMMs [T, co] x [co, c] on U transposed)
 *   dx[patch of t] += B Z B^T                  (4x4 per tile; patches of neighbouring tiles overlap by 2)
 * With "VALID" padding the output has fewer tiles than the input (11x11 from 13x13: 36 tiles per image
 * against 49 for the rotated-filter form above, whose tiles cover dx), so 0.73 of its products. The 4x4
 * patches overlap, so tiles of one image run in order on one thread: units are ranges of whole images, each
 * adding into its own images of dx (each zeroed at its first tile) in tile order (so the same result on every run, whichever
 * thread's scratch slot a unit runs in). */
typedef struct {
    wino_job w;
    const float *ut;  /* U transposed per point: [16][co][c] */
    float *dx;        /* [n, h, w, c] */
    int64_t units;
    size_t z_off;     /* Z [16][T][c] in a slot */
} bi_job;

/* dd = B Z B^T of one tile, channels i.. (vector or scalar), added into the 16 pixels px[0..15] (row-major
 * 4x4; out-of-image pixels point at a dump row) */
#define ADJ_XFORM(TYPE, LOAD, STORE)                                                                          \
    do {                                                                                                      \
        TYPE r[4][4];                                                                                         \
        for (int b = 0; b < 4; b++) { /* B Z: rows */                                                        \
            const TYPE z0 = LOAD(zt + b * zps + i), z1 = LOAD(zt + (4 + b) * zps + i),                        \
                       z2 = LOAD(zt + (8 + b) * zps + i), z3 = LOAD(zt + (12 + b) * zps + i);                 \
            r[0][b] = z0;                                                                                     \
            r[1][b] = z1 - z2 + z3;                                                                           \
            r[2][b] = z1 + z2 - z0;                                                                           \
            r[3][b] = -z3;                                                                                    \
        }                                                                                                     \
        for (int a = 0; a < 4; a++) { /* (B Z) B^T: columns */                                               \
            float *const *q = px + 4 * a;                                                                     \
            STORE(q[0] + i, LOAD(q[0] + i) + r[a][0]);                                                        \
            STORE(q[1] + i, LOAD(q[1] + i) + (r[a][1] - r[a][2] + r[a][3]));                                  \
            STORE(q[2] + i, LOAD(q[2] + i) + (r[a][1] + r[a][2] - r[a][0]));                                  \
            STORE(q[3] + i, LOAD(q[3] + i) - r[a][3]);                                                        \
        }                                                                                                     \
    } while (0)

TFC_SIMD_CLONES static void adj_output_block(const bi_job *bj, int64_t q0, int64_t nt, const float *z, float *dump) {
    const wino_job *j = &bj->w;
    const int64_t C = j->c, zps = j->vps, cv = C / WVL * WVL;
    tile_pos tp = tile_at(j, q0);
    for (int64_t t = 0; t < nt; t++, tile_next(j, &tp)) {
        /* an image's dx is zeroed at its first tile, so that its lines are in cache for the tiles' additions
         * (zeroed all at once before, dx (128x13x13x32: 2.7 MB) went past L2 and every addition waited on
         * memory) */
        if (tp.r == 0 && tp.c == 0) memset(bj->dx + tp.n * j->h * j->w * C, 0, (size_t)(j->h * j->w * C) * sizeof(float));
        float *px[16];
        const int64_t ih0 = tp.r - j->pt, iw0 = tp.c - j->pl;
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                const int64_t ih = ih0 + a, iw = iw0 + b;
                px[4 * a + b] = ih >= 0 && ih < j->h && iw >= 0 && iw < j->w
                                    ? bj->dx + ((tp.n * j->h + ih) * j->w + iw) * C
                                    : dump;
            }
        const float *zt = z + t * j->vts;
        int64_t i = 0;
        for (; i < cv; i += WVL) ADJ_XFORM(wv, LOAD_V, STORE_V);
        for (; i < C; i++) ADJ_XFORM(float, LOAD_S, STORE_S);
    }
}

static void bi_units(void *arg, int64_t b, int64_t e) {
    bi_job *bj = arg;
    wino_job *j = &bj->w;
    const int64_t C = j->c, CO = j->co, tpi = j->th * j->tw;
    const int slot = take_slot(j);
    float *d = j->scratch + (size_t)slot * j->slot_floats, *z = d + bj->z_off, *ws = d + j->ws_off;
    const float *zeros = d + j->zero_off;
    float *dump = d + j->dump_off;
    for (int64_t u = b; u < e; u++) {
        const int64_t t0 = j->n * u / bj->units * tpi, t1 = j->n * (u + 1) / bj->units * tpi;
        for (int64_t q0 = t0; q0 < t1; q0 += j->T) {
            const int64_t nt = t1 - q0 < j->T ? t1 - q0 : j->T;
            dy_block(j, q0, nt, d, zeros);
            for (int p = 0; p < PTS; p++) {
                const tfc_gemm_args a = {.m = nt, .n = C, .k = CO, .alpha = 1.0f, .beta = 0.0f, .a = d + p * j->mps,
                                         .lda = j->mts, .b = bj->ut + p * CO * C, .ldb = C, .c = z + p * j->vps,
                                         .ldc = j->vts};
                j->isa->serial(&a, ws);
            }
            adj_output_block(bj, q0, nt, z, dump);
        }
    }
    atomic_store(&j->busy[slot], 0);
}

bool tfc_conv2d_winograd_bwd_input_adj_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy,
                                           const float *f, float *dx, tfc_status *st) {
    bi_job bj = {.w = {.n = g->batch, .h = g->in_h, .w = g->in_w, .c = g->in_c, .y = (float *)dy, .oh = g->out_h,
                       .ow = g->out_w, .co = g->out_c, .pt = g->pad_top, .pl = g->pad_left},
                 .dx = dx};
    wino_job *j = &bj.w;
    if (!check("Conv2DBackpropInput", g, &j->isa, st)) return false;
    const int64_t dx_len = j->n * j->h * j->w * j->c;
    if (dx_len == 0) return true;
    j->th = (j->oh + 1) / 2;
    j->tw = (j->ow + 1) / 2;
    j->tiles = j->n * j->th * j->tw;
    if (j->tiles == 0 || j->co == 0) { /* (else each image is zeroed at its first tile: adj_output_block) */
        tfc_conv_zero(pool, dx, (size_t)dx_len * sizeof(float));
        return true;
    }
    const int threads = tfc_threadpool_size(pool);
    const int64_t T = block_tiles(j, 1); /* (units are images: no finer split for threads) */
    j->T = T;
    /* up to 4 units per thread, so that a thread slowed by other load does not hold the others up; one
     * scratch slot per running thread */
    bj.units = threads == 1 ? 1 : j->n < 4 * threads ? j->n : 4 * threads;
    j->n_slots = bj.units < threads ? (int)bj.units : threads;
    const tfc_gemm_args probe = {.m = T, .n = j->c, .k = j->co};
    /* D [16][T][co] as the filter gradient's, Z [16][T][c] in V's layout */
    j->mps = T * j->co, j->mts = j->co, j->vps = T * j->c, j->vts = j->c;
    bj.z_off = round16((size_t)((T - 1) * j->mts + (PTS - 1) * j->mps + j->co));
    j->ws_off = bj.z_off + round16((size_t)((T - 1) * j->vts + (PTS - 1) * j->vps + j->c));
    j->zero_off = j->ws_off + round16(j->isa->ws_floats(&probe));
    j->dump_off = j->zero_off + round16((size_t)(j->c > j->co ? j->c : j->co));
    j->slot_floats = j->dump_off + round16((size_t)j->c);
    const size_t u_floats = round16((size_t)(PTS * j->c * j->co));
    const size_t floats = 2 * u_floats + (size_t)j->n_slots * j->slot_floats;
    const size_t bytes = floats * sizeof(float) + (size_t)j->n_slots * sizeof(_Atomic int);
    char *buf = tfc_aligned_alloc(bytes);
    if (!buf) return tfc_status_oom(st, "Conv2DBackpropInput Winograd scratch", bytes);
    float *u = (float *)buf, *ut = u + u_floats;
    j->scratch = ut + u_floats;
    j->busy = (_Atomic int *)(buf + floats * sizeof(float));
    for (int s = 0; s < j->n_slots; s++) {
        atomic_init(&j->busy[s], 0);
        memset(j->scratch + (size_t)s * j->slot_floats + j->zero_off, 0, (size_t)(j->dump_off - j->zero_off) * sizeof(float));
    }
    filter_job fj = {f, false, j->c, j->co, u};
    tfc_parallel_for(pool, j->c, 16 * j->co, filter_rows, &fj);
    tfc_conv_transpose(pool, u, ut, PTS, j->c, j->co, sizeof(float)); /* [16][c][co] -> [16][co][c] */
    bj.ut = ut;
    tfc_parallel_for(pool, bj.units, (int64_t)((double)j->tiles / (double)bj.units * PTS * j->c * j->co / 4) + 1,
                     bi_units, &bj);
    tfc_aligned_free(buf);
    return true;
}
