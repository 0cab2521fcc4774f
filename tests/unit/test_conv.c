/* Conv and pool ops through their typed wrappers (include/tfc/ops/conv.h) against naive loops, on shapes big
 * enough for the parallel im2col/col2im paths and several im2col tiles; NCHW, groups, dilations, padding;
 * half precision; gradients through the tape; wrapper argument errors. */
#include "tfc/ops/conv.h"
#include "tfc_test.h"

static tfc_ctx *ctx;
static uint64_t rng = 88172645463325252ull;

static float frand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static tfc_tensor *rand_f32(const int64_t d[4]) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, d, 4, &st);
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) p[i] = frand();
    return t;
}

/* Geometry of a test case in NHWC terms; pads are explicit (top, bottom, left, right). */
typedef struct {
    int64_t n, h, w, c, kh, kw, co, sh, sw, dh, dw, pt, pb, pl, pr, groups;
} geo;

static int64_t out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1) {
    return (in + p0 + p1 - (k - 1) * d - 1 + s) / s;
}

/* y[n, oh, ow, o] = sum x[n, ih, iw, g*cg + c] f[kh, kw, c, o] (o in group g). */
static void ref_conv(const geo *g, const float *x, const float *f, double *y) {
    int64_t oh_n = out_dim(g->h, g->kh, g->sh, g->dh, g->pt, g->pb), ow_n = out_dim(g->w, g->kw, g->sw, g->dw, g->pl, g->pr);
    int64_t cg = g->c / g->groups, cog = g->co / g->groups;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < oh_n; oh++)
            for (int64_t ow = 0; ow < ow_n; ow++)
                for (int64_t o = 0; o < g->co; o++) {
                    double s = 0;
                    for (int64_t kh = 0; kh < g->kh; kh++)
                        for (int64_t kw = 0; kw < g->kw; kw++) {
                            int64_t ih = oh * g->sh - g->pt + kh * g->dh, iw = ow * g->sw - g->pl + kw * g->dw;
                            if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) continue;
                            for (int64_t c = 0; c < cg; c++)
                                s += (double)x[((n * g->h + ih) * g->w + iw) * g->c + (o / cog) * cg + c] *
                                     f[((kh * g->kw + kw) * cg + c) * g->co + o];
                        }
                    y[((n * oh_n + oh) * ow_n + ow) * g->co + o] = s;
                }
}

/* Adjoints of ref_conv: dx = d<y, dy>/dx, df = d<y, dy>/df. */
static void ref_conv_adjoint(const geo *g, const float *x, const float *f, const float *dy, double *dx, double *df) {
    int64_t oh_n = out_dim(g->h, g->kh, g->sh, g->dh, g->pt, g->pb), ow_n = out_dim(g->w, g->kw, g->sw, g->dw, g->pl, g->pr);
    int64_t cg = g->c / g->groups, cog = g->co / g->groups;
    memset(dx, 0, sizeof(double) * (size_t)(g->n * g->h * g->w * g->c));
    memset(df, 0, sizeof(double) * (size_t)(g->kh * g->kw * cg * g->co));
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t oh = 0; oh < oh_n; oh++)
            for (int64_t ow = 0; ow < ow_n; ow++)
                for (int64_t o = 0; o < g->co; o++) {
                    double d = dy[((n * oh_n + oh) * ow_n + ow) * g->co + o];
                    for (int64_t kh = 0; kh < g->kh; kh++)
                        for (int64_t kw = 0; kw < g->kw; kw++) {
                            int64_t ih = oh * g->sh - g->pt + kh * g->dh, iw = ow * g->sw - g->pl + kw * g->dw;
                            if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) continue;
                            for (int64_t c = 0; c < cg; c++) {
                                int64_t xi = ((n * g->h + ih) * g->w + iw) * g->c + (o / cog) * cg + c;
                                int64_t fi = ((kh * g->kw + kw) * cg + c) * g->co + o;
                                dx[xi] += d * f[fi];
                                df[fi] += d * x[xi];
                            }
                        }
                }
}

static double max_rel_err(const tfc_tensor *t, const double *ref, int64_t n) {
    double worst = 0;
    if (tfc_tensor_num_elements(t) != n) return 1e30;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(tfc_tensor_get_f64(t, i) - ref[i]) / (1.0 + fabs(ref[i]));
        if (e > worst) worst = e;
    }
    return worst;
}

/* NHWC [n, h, w, c] float data as NCHW (or back with to_nhwc). */
static tfc_tensor *relayout(const tfc_tensor *t, bool to_nhwc) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t a = tfc_tensor_dim(t, 0), b = tfc_tensor_dim(t, 1), c = tfc_tensor_dim(t, 2), d = tfc_tensor_dim(t, 3);
    int64_t od[4] = {a, to_nhwc ? c : d, to_nhwc ? d : b, to_nhwc ? b : c};
    tfc_tensor *o = tfc_tensor_new(TFC_FLOAT, od, 4, &st);
    const float *s = tfc_tensor_data(t);
    float *p = tfc_tensor_mutable_data(o);
    for (int64_t i = 0; i < a; i++)
        for (int64_t j = 0; j < b; j++)
            for (int64_t k = 0; k < c; k++)
                for (int64_t l = 0; l < d; l++) {
                    int64_t src = ((i * b + j) * c + k) * d + l;
                    int64_t dst = to_nhwc ? ((i * c + k) * d + l) * b + j : ((i * d + l) * b + j) * c + k;
                    p[dst] = s[src];
                }
    return o;
}

static void check_conv(const geo *g, bool nchw) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t oh = out_dim(g->h, g->kh, g->sh, g->dh, g->pt, g->pb), ow = out_dim(g->w, g->kw, g->sw, g->dw, g->pl, g->pr);
    int64_t xd[4] = {g->n, g->h, g->w, g->c}, fd[4] = {g->kh, g->kw, g->c / g->groups, g->co}, yd[4] = {g->n, oh, ow, g->co};
    int64_t nx = g->n * g->h * g->w * g->c, nf = fd[0] * fd[1] * fd[2] * fd[3], ny = g->n * oh * ow * g->co;
    tfc_tensor *x = rand_f32(xd), *f = rand_f32(fd), *dy = rand_f32(yd);
    double *ry = malloc(sizeof(double) * (size_t)ny), *rdx = malloc(sizeof(double) * (size_t)nx);
    double *rdf = malloc(sizeof(double) * (size_t)nf);
    ref_conv(g, tfc_tensor_data(x), tfc_tensor_data(f), ry);
    ref_conv_adjoint(g, tfc_tensor_data(x), tfc_tensor_data(f), tfc_tensor_data(dy), rdx, rdf);

    tfc_conv2d_attrs a = {.strides = {1, g->sh, g->sw, 1}, .padding = "EXPLICIT",
                          .explicit_paddings = {0, 0, g->pt, g->pb, g->pl, g->pr, 0, 0}, .dilations = {1, g->dh, g->dw, 1}};
    tfc_tensor *xin = x, *dyin = dy;
    int64_t sizes[4] = {g->n, g->h, g->w, g->c};
    if (nchw) {
        a = (tfc_conv2d_attrs){.strides = {1, 1, g->sh, g->sw}, .padding = "EXPLICIT", .data_format = "NCHW",
                               .explicit_paddings = {0, 0, 0, 0, g->pt, g->pb, g->pl, g->pr}, .dilations = {1, 1, g->dh, g->dw}};
        xin = relayout(x, false);
        dyin = relayout(dy, false);
        sizes[1] = g->c, sizes[2] = g->h, sizes[3] = g->w;
    }
    tfc_tensor *y = tfc_conv2d(ctx, xin, f, &a, &st);
    CHECK_OK(&st);
    tfc_tensor *dx = tfc_conv2d_backprop_input(ctx, sizes, f, dyin, &a, &st);
    CHECK_OK(&st);
    tfc_tensor *df = tfc_conv2d_backprop_filter(ctx, xin, fd, dyin, &a, &st);
    CHECK_OK(&st);
    REQUIRE(y && dx && df);
    tfc_tensor *yn = nchw ? relayout(y, true) : y, *dxn = nchw ? relayout(dx, true) : dx;
    double ey = max_rel_err(yn, ry, ny), edx = max_rel_err(dxn, rdx, nx), edf = max_rel_err(df, rdf, nf);
    if (ey > 1e-4 || edx > 1e-4 || edf > 1e-4)
        fprintf(stderr, "conv [%lld,%lld,%lld,%lld] k%lldx%lld co%lld g%lld %s: errors y %g dx %g df %g\n", (long long)g->n,
                (long long)g->h, (long long)g->w, (long long)g->c, (long long)g->kh, (long long)g->kw, (long long)g->co,
                (long long)g->groups, nchw ? "NCHW" : "NHWC", ey, edx, edf);
    CHECK(ey <= 1e-4 && edx <= 1e-4 && edf <= 1e-4);
    if (nchw) {
        tfc_tensor_unref(xin), tfc_tensor_unref(dyin), tfc_tensor_unref(yn), tfc_tensor_unref(dxn);
    }
    tfc_tensor *objs[] = {x, f, dy, y, dx, df};
    for (int i = 0; i < 6; i++) tfc_tensor_unref(objs[i]);
    free(ry), free(rdx), free(rdf);
}

static void test_conv2d_against_loops(void) {
    /* several im2col tiles, parallel im2col/col2im */
    check_conv(&(geo){.n = 2, .h = 64, .w = 64, .c = 32, .kh = 3, .kw = 3, .co = 16, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                      .pt = 1, .pb = 1, .pl = 1, .pr = 1, .groups = 1}, false);
    /* stride 2, odd sizes, asymmetric padding */
    check_conv(&(geo){.n = 3, .h = 37, .w = 29, .c = 5, .kh = 4, .kw = 3, .co = 7, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                      .pt = 1, .pb = 2, .pl = 0, .pr = 1, .groups = 1}, false);
    /* dilated, grouped, NCHW */
    check_conv(&(geo){.n = 2, .h = 30, .w = 33, .c = 12, .kh = 3, .kw = 2, .co = 9, .sh = 1, .sw = 2, .dh = 2, .dw = 3,
                      .pt = 2, .pb = 0, .pl = 3, .pr = 1, .groups = 3}, true);
    /* first-layer shape: 7x7 stride 2 on 3 channels */
    check_conv(&(geo){.n = 2, .h = 47, .w = 45, .c = 3, .kh = 7, .kw = 7, .co = 8, .sh = 2, .sw = 2, .dh = 1, .dw = 1,
                      .pt = 3, .pb = 3, .pl = 3, .pr = 3, .groups = 1}, true);
    /* float32 without im2col (conv_gemm.c): row dilation with wide output channels, asymmetric paddings with
     * narrow ones, a width stride, and backprop-input as a convolution of the padded dy */
    check_conv(&(geo){.n = 2, .h = 17, .w = 19, .c = 24, .kh = 3, .kw = 3, .co = 40, .sh = 1, .sw = 1, .dh = 2, .dw = 1,
                      .pt = 2, .pb = 2, .pl = 1, .pr = 1, .groups = 1}, false);
    check_conv(&(geo){.n = 3, .h = 15, .w = 14, .c = 16, .kh = 2, .kw = 4, .co = 5, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                      .pt = 1, .pb = 0, .pl = 2, .pr = 1, .groups = 1}, false);
    check_conv(&(geo){.n = 2, .h = 9, .w = 23, .c = 20, .kh = 3, .kw = 3, .co = 70, .sh = 1, .sw = 2, .dh = 1, .dw = 1,
                      .pt = 1, .pb = 1, .pl = 1, .pr = 1, .groups = 1}, true);
    /* pointwise and full-filter fast paths */
    check_conv(&(geo){.n = 4, .h = 20, .w = 21, .c = 24, .kh = 1, .kw = 1, .co = 10, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                      .groups = 1}, false);
    check_conv(&(geo){.n = 5, .h = 6, .w = 7, .c = 4, .kh = 6, .kw = 7, .co = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1,
                      .groups = 1}, false);
}

/* Depthwise: grouped conv with one input channel per group and `mult` outputs each (same filter memory). */
static void check_depthwise(int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t mult, int64_t s, bool nchw) {
    tfc_status st = TFC_STATUS_INIT;
    geo g = {.n = n, .h = h, .w = w, .c = c, .kh = k, .kw = k, .co = c * mult, .sh = s, .sw = s, .dh = 1, .dw = 1,
             .pt = k / 2, .pb = k / 2, .pl = k / 2, .pr = k / 2, .groups = c};
    int64_t oh = out_dim(h, k, s, 1, g.pt, g.pb), ow = out_dim(w, k, s, 1, g.pl, g.pr);
    int64_t xd[4] = {n, h, w, c}, fd[4] = {k, k, c, mult}, yd[4] = {n, oh, ow, c * mult};
    int64_t nx = n * h * w * c, nf = k * k * c * mult, ny = n * oh * ow * c * mult;
    tfc_tensor *x = rand_f32(xd), *f = rand_f32(fd), *dy = rand_f32(yd);
    double *ry = malloc(sizeof(double) * (size_t)ny), *rdx = malloc(sizeof(double) * (size_t)nx);
    double *rdf = malloc(sizeof(double) * (size_t)nf);
    ref_conv(&g, tfc_tensor_data(x), tfc_tensor_data(f), ry);
    ref_conv_adjoint(&g, tfc_tensor_data(x), tfc_tensor_data(f), tfc_tensor_data(dy), rdx, rdf);
    tfc_conv2d_attrs a = {.strides = {1, s, s, 1}, .padding = "EXPLICIT",
                          .explicit_paddings = {0, 0, g.pt, g.pb, g.pl, g.pr, 0, 0}};
    int64_t sizes[4] = {n, h, w, c};
    tfc_tensor *xin = x, *dyin = dy;
    if (nchw) {
        a = (tfc_conv2d_attrs){.strides = {1, 1, s, s}, .padding = "EXPLICIT", .data_format = "NCHW",
                               .explicit_paddings = {0, 0, 0, 0, g.pt, g.pb, g.pl, g.pr}};
        xin = relayout(x, false), dyin = relayout(dy, false);
        sizes[1] = c, sizes[2] = h, sizes[3] = w;
    }
    tfc_tensor *y = tfc_depthwise_conv2d(ctx, xin, f, &a, &st);
    tfc_tensor *dx = tfc_depthwise_conv2d_backprop_input(ctx, sizes, f, dyin, &a, &st);
    tfc_tensor *df = tfc_depthwise_conv2d_backprop_filter(ctx, xin, fd, dyin, &a, &st);
    CHECK_OK(&st);
    REQUIRE(y && dx && df);
    tfc_tensor *yn = nchw ? relayout(y, true) : y, *dxn = nchw ? relayout(dx, true) : dx;
    double ey = max_rel_err(yn, ry, ny), edx = max_rel_err(dxn, rdx, nx), edf = max_rel_err(df, rdf, nf);
    if (ey > 1e-4 || edx > 1e-4 || edf > 1e-4)
        fprintf(stderr, "depthwise c%lld k%lld m%lld s%lld: errors y %g dx %g df %g\n", (long long)c, (long long)k,
                (long long)mult, (long long)s, ey, edx, edf);
    CHECK(ey <= 1e-4 && edx <= 1e-4 && edf <= 1e-4);
    if (nchw) tfc_tensor_unref(xin), tfc_tensor_unref(dyin), tfc_tensor_unref(yn), tfc_tensor_unref(dxn);
    tfc_tensor *objs[] = {x, f, dy, y, dx, df};
    for (int i = 0; i < 6; i++) tfc_tensor_unref(objs[i]);
    free(ry), free(rdx), free(rdf);
}

static void test_depthwise_against_loops(void) {
    check_depthwise(4, 40, 38, 40, 3, 1, 1, false); /* vector blocks + remainder, parallel rows and chunks */
    check_depthwise(2, 33, 31, 5, 5, 3, 2, false);  /* multiplier 3, stride 2 */
    check_depthwise(2, 21, 22, 17, 3, 1, 2, true);
}

/* Max/avg pooling and their gradients against loops, SAME padding on odd sizes. */
static void test_pools_against_loops(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t n = 3, h = 41, w = 39, c = 35, k = 3, s = 2;
    const int64_t oh = (h + s - 1) / s, ow = (w + s - 1) / s;
    const int64_t pt = ((oh - 1) * s + k - h) / 2, pl = ((ow - 1) * s + k - w) / 2;
    int64_t xd[4] = {n, h, w, c}, yd[4] = {n, oh, ow, c};
    tfc_tensor *x = rand_f32(xd), *dy = rand_f32(yd);
    tfc_pool_attrs a = {.ksize = {1, k, k, 1}, .strides = {1, s, s, 1}, .padding = "SAME"};
    tfc_tensor *mx = tfc_max_pool(ctx, x, &a, &st), *av = tfc_avg_pool(ctx, x, &a, &st);
    CHECK_OK(&st);
    REQUIRE(mx && av);
    tfc_tensor *gmx = tfc_max_pool_grad(ctx, x, mx, dy, &a, &st), *gav = tfc_avg_pool_grad(ctx, xd, dy, &a, &st);
    CHECK_OK(&st);
    REQUIRE(gmx && gav);
    const float *xp = tfc_tensor_data(x), *dyp = tfc_tensor_data(dy);
    double *rdm = calloc((size_t)(n * h * w * c), sizeof(double)), *rda = calloc((size_t)(n * h * w * c), sizeof(double));
    bool ok = true;
    for (int64_t b = 0; b < n; b++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t ch = 0; ch < c; ch++) {
                    int64_t h0 = i * s - pt, w0 = j * s - pl, cnt = 0, arg = -1;
                    double best = -INFINITY, sum = 0;
                    for (int64_t y = h0; y < h0 + k; y++)
                        for (int64_t z = w0; z < w0 + k; z++) {
                            if (y < 0 || y >= h || z < 0 || z >= w) continue;
                            int64_t xi = ((b * h + y) * w + z) * c + ch;
                            if (xp[xi] > best) best = xp[xi], arg = xi;
                            sum += xp[xi], cnt++;
                        }
                    int64_t oi = ((b * oh + i) * ow + j) * c + ch;
                    ok &= tfc_tensor_get_f64(mx, oi) == best;
                    ok &= fabs(tfc_tensor_get_f64(av, oi) - sum / (double)cnt) <= 1e-5;
                    rdm[arg] += dyp[oi];
                    for (int64_t y = h0; y < h0 + k; y++)
                        for (int64_t z = w0; z < w0 + k; z++)
                            if (y >= 0 && y < h && z >= 0 && z < w) rda[((b * h + y) * w + z) * c + ch] += dyp[oi] / (double)cnt;
                }
    CHECK(ok);
    CHECK(max_rel_err(gmx, rdm, n * h * w * c) <= 1e-5);
    CHECK(max_rel_err(gav, rda, n * h * w * c) <= 1e-5);
    tfc_tensor *objs[] = {x, dy, mx, av, gmx, gav};
    for (int i = 0; i < 6; i++) tfc_tensor_unref(objs[i]);
    free(rdm), free(rda);
}

/* half inputs run through float: results match the float computation rounded to half. */
static void test_half(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t xd[4] = {2, 9, 8, 6}, fd[4] = {3, 3, 6, 5};
    tfc_tensor *x = rand_f32(xd), *f = rand_f32(fd);
    tfc_tensor *xh = tfc_tensor_new(TFC_HALF, xd, 4, &st), *fh = tfc_tensor_new(TFC_HALF, fd, 4, &st);
    tfc_half *xp = tfc_tensor_mutable_data(xh), *fp = tfc_tensor_mutable_data(fh);
    float *xf = tfc_tensor_mutable_data(x), *ff = tfc_tensor_mutable_data(f);
    for (int64_t i = 0; i < tfc_tensor_num_elements(x); i++) xp[i] = tfc_half_from_float(xf[i]), xf[i] = tfc_half_to_float(xp[i]);
    for (int64_t i = 0; i < tfc_tensor_num_elements(f); i++) fp[i] = tfc_half_from_float(ff[i]), ff[i] = tfc_half_to_float(fp[i]);
    tfc_conv2d_attrs a = {.strides = {1, 2, 1, 1}, .padding = "SAME"};
    tfc_tensor *y = tfc_conv2d(ctx, x, f, &a, &st), *yh = tfc_conv2d(ctx, xh, fh, &a, &st);
    CHECK_OK(&st);
    REQUIRE(y && yh);
    CHECK(tfc_tensor_dtype(yh) == TFC_HALF);
    bool ok = tfc_tensor_num_elements(y) == tfc_tensor_num_elements(yh);
    for (int64_t i = 0; ok && i < tfc_tensor_num_elements(y); i++)
        ok = tfc_tensor_get_f64(yh, i) == tfc_half_to_float(tfc_half_from_float((float)tfc_tensor_get_f64(y, i)));
    CHECK(ok);
    tfc_tensor *objs[] = {x, f, xh, fh, y, yh};
    for (int i = 0; i < 6; i++) tfc_tensor_unref(objs[i]);
}

/* The tape gradient of conv2d equals the backprop wrappers' results (nn_grad.py's definition). */
static void test_tape_gradient(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t xd[4] = {2, 7, 6, 3}, fd[4] = {3, 2, 3, 4};
    tfc_tensor *x = rand_f32(xd), *f = rand_f32(fd);
    tfc_conv2d_attrs a = {.strides = {1, 2, 2, 1}, .padding = "SAME"};
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    tfc_tape_watch(tape, f);
    tfc_tensor *y = tfc_conv2d(ctx, x, f, &a, &st);
    REQUIRE(y);
    tfc_tensor *g[2] = {0};
    CHECK(tfc_tape_gradient(tape, y, (tfc_tensor *[]){x, f}, 2, NULL, 0, TFC_UNCONNECTED_NONE, g, &st));
    CHECK_OK(&st);
    tfc_tape_free(tape);
    const tfc_shape *ys = tfc_tensor_shape(y);
    tfc_tensor *ones = tfc_tensor_new(TFC_FLOAT, ys->dims, 4, &st);
    float *op = tfc_tensor_mutable_data(ones);
    for (int64_t i = 0; i < tfc_tensor_num_elements(ones); i++) op[i] = 1;
    tfc_tensor *dx = tfc_conv2d_backprop_input(ctx, xd, f, ones, &a, &st), *df = tfc_conv2d_backprop_filter(ctx, x, fd, ones, &a, &st);
    REQUIRE(g[0] && g[1] && dx && df);
    bool ok = true;
    for (int64_t i = 0; i < tfc_tensor_num_elements(dx); i++) ok &= tfc_tensor_get_f64(g[0], i) == tfc_tensor_get_f64(dx, i);
    for (int64_t i = 0; i < tfc_tensor_num_elements(df); i++) ok &= tfc_tensor_get_f64(g[1], i) == tfc_tensor_get_f64(df, i);
    CHECK(ok);
    tfc_tensor *objs[] = {x, f, y, g[0], g[1], ones, dx, df};
    for (int i = 0; i < 8; i++) tfc_tensor_unref(objs[i]);
}

static void test_wrapper_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t xd[4] = {1, 5, 5, 3}, fd[4] = {3, 3, 3, 2};
    tfc_tensor *x = rand_f32(xd), *f = rand_f32(fd);
    tfc_tensor *y = tfc_conv2d(ctx, x, f, NULL, &st); /* NULL attrs: stride 1, VALID */
    CHECK_OK(&st);
    CHECK(y && tfc_tensor_dim(y, 1) == 3 && tfc_tensor_dim(y, 2) == 3 && tfc_tensor_dim(y, 3) == 2);
    CHECK(!tfc_max_pool(ctx, x, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_conv2d(ctx, x, NULL, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_conv2d(ctx, f, x, NULL, &st)); /* input depth 2 vs filter in_channels 5 */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Conv2D: input depth 2 must equal filter in_channels 5") != NULL);
    tfc_pool_attrs pa = {.ksize = {1, 2, 2, 1}}; /* strides default to ksize */
    tfc_tensor *p = tfc_max_pool(ctx, x, &pa, &st);
    CHECK(p && tfc_tensor_dim(p, 1) == 2 && tfc_tensor_dim(p, 2) == 2);
    tfc_tensor_unref(p);
    tfc_tensor_unref(y), tfc_tensor_unref(x), tfc_tensor_unref(f);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_conv2d_against_loops();
    test_depthwise_against_loops();
    test_pools_against_loops();
    test_half();
    test_tape_gradient();
    test_wrapper_errors();
    tfc_ctx_free(ctx);
    printf("test_conv: %d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures ? 1 : 0;
}
