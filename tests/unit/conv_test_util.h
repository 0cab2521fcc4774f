/* Helpers shared by the tests that call the convolution kernels directly (test_conv_winograd.c,
 * test_conv_bwd_fast.c): random buffers, 3x3 stride-1 geometries, the float64 filter-gradient reference and
 * the float32 tolerance check. */
#ifndef TFC_CONV_TEST_UTIL_H
#define TFC_CONV_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/cpu/conv_internal.h"
#include "tfc_test.h"

/* The xorshift64 state of uniform(); a test may reseed it. */
static uint64_t conv_test_rng = 0x2545f4914f6cdd1dull;

static inline float uniform(void) {
    uint64_t r = conv_test_rng;
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    conv_test_rng = r;
    return (float)((r >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static inline float *rand_buf(int64_t n) {
    float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    REQUIRE(p);
    for (int64_t i = 0; i < n; i++) p[i] = uniform();
    return p;
}

/* A 3x3 stride-1 geometry with explicit paddings (top, bottom, left, right). */
static inline tfc_conv_geom geom(int64_t n, int64_t h, int64_t w, int64_t c, int64_t co, int64_t pt, int64_t pb,
                                 int64_t pl, int64_t pr) {
    tfc_conv_geom g = {.batch = n, .in_h = h, .in_w = w, .in_c = c, .k_h = 3, .k_w = 3, .k_c = c, .out_c = co,
                       .groups = 1, .mult = 1, .out_h = h + pt + pb - 2, .out_w = w + pl + pr - 2, .stride_h = 1,
                       .stride_w = 1, .dil_h = 1, .dil_w = 1, .pad_top = pt, .pad_bottom = pb, .pad_left = pl,
                       .pad_right = pr};
    return g;
}

/* df[kh, kw, c, o] = sum x[n, oh + kh - pt, ow + kw - pl, c] dy[n, oh, ow, o] in float64; dfa: the sums of
 * the terms' magnitudes */
static inline void ref_bwd_filter(const tfc_conv_geom *g, const float *x, const float *dy, double *df, double *dfa) {
    for (int64_t kh = 0; kh < g->k_h; kh++)
        for (int64_t kw = 0; kw < g->k_w; kw++)
            for (int64_t c = 0; c < g->in_c; c++)
                for (int64_t o = 0; o < g->out_c; o++) {
                    double s = 0, sa = 0;
                    for (int64_t n = 0; n < g->batch; n++)
                        for (int64_t oh = 0; oh < g->out_h; oh++)
                            for (int64_t ow = 0; ow < g->out_w; ow++) {
                                const int64_t ih = oh * g->stride_h + kh * g->dil_h - g->pad_top;
                                const int64_t iw = ow * g->stride_w + kw * g->dil_w - g->pad_left;
                                if (ih < 0 || ih >= g->in_h || iw < 0 || iw >= g->in_w) continue;
                                const double v = (double)x[((n * g->in_h + ih) * g->in_w + iw) * g->in_c + c] *
                                                 dy[((n * g->out_h + oh) * g->out_w + ow) * g->out_c + o];
                                s += v;
                                sa += fabs(v);
                            }
                    df[((kh * g->k_w + kw) * g->in_c + c) * g->out_c + o] = s;
                    dfa[((kh * g->k_w + kw) * g->in_c + c) * g->out_c + o] = sa;
                }
}

/* got within the float32 kernels' tolerance of tests/ops (2e-5 * (1 + |want|)) element by element, plus 2
 * float32 ulps of the sum of the terms' magnitudes (the rounding of any float32 sum of many terms) */
static inline bool close_all(const char *what, const tfc_conv_geom *g, const float *got, const double *want,
                             const double *mag, int64_t len) {
    for (int64_t i = 0; i < len; i++)
        if (!(fabs(got[i] - want[i]) <= 2e-5 * (1 + fabs(want[i])) + 1.2e-7 * mag[i])) {
            fprintf(stderr, "%s n=%lld %lldx%lldx%lld -> %lldx%lldx%lld pads (%lld, %lld, %lld, %lld): element %lld = %.9g, "
                            "reference %.9g\n",
                    what, (long long)g->batch, (long long)g->in_h, (long long)g->in_w, (long long)g->in_c,
                    (long long)g->out_h, (long long)g->out_w, (long long)g->out_c, (long long)g->pad_top,
                    (long long)g->pad_bottom, (long long)g->pad_left, (long long)g->pad_right, (long long)i, got[i],
                    want[i]);
            return false;
        }
    return true;
}

#endif
