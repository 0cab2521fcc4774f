/* The float32 pooling kernels: every SIMD table this CPU runs (AVX-512, AVX2, baseline; see
 * src/kernels/cpu/pool_internal.h) against the scalar kernels (TFC_POOL_SIMD=generic), which must agree bit
 * for bit, and against naive loops. Shapes hit the 2x2 path, clipped SAME/EXPLICIT windows, disjoint
 * windows with gaps (stride > window), overlapping windows, odd sizes (VALID drops the last row/column),
 * channel counts around the vector widths (1, 3, 15, 17, 33, ..., 300), batch 1, one and three threads.
 * Inputs drawn from {0, 1, 2, 3} make ties frequent (the gradient goes to the first maximum in row-major
 * window order); others hold NaNs and -0. */
#include "kernels/cpu/pool_internal.h"
#include "tfc_test.h"

static tfc_ctx *ctx1, *ctx3; /* one thread; three threads */
static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next_u64(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1)); }

typedef enum { VALS_UNIFORM, VALS_TIES, VALS_SPECIAL } vals_kind;

/* [n, h, w, c] float32 filled per `kind`: uniform in [-1, 1); small integers; or small integers with NaN
 * and -0 sprinkled in. */
static tfc_tensor *make(const int64_t d[4], vals_kind kind) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, d, 4, &st);
    REQUIRE(t);
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) {
        uint64_t r = next_u64();
        if (kind == VALS_UNIFORM) p[i] = (float)((r >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
        else p[i] = (float)(r % 4);
        if (kind == VALS_SPECIAL && (r >> 20) % 16 == 0) p[i] = NAN;
        if (kind == VALS_SPECIAL && (r >> 20) % 16 == 1) p[i] = -0.0f;
    }
    return t;
}

typedef struct {
    int64_t n, h, w, c, kh, kw, sh, sw;
    const char *padding; /* "SAME", "VALID" or "EXPLICIT" (pads: top, bottom, left, right) */
    int64_t pads[4];
} pool_cfg;

static int64_t out_size(int64_t in, int64_t k, int64_t s, const char *padding, int64_t p0, int64_t p1) {
    if (!strcmp(padding, "SAME")) return (in + s - 1) / s;
    const int64_t span = !strcmp(padding, "VALID") ? in - k : in + p0 + p1 - k;
    return span < 0 ? 0 : span / s + 1; /* 0: the window does not fit (the op rejects it) */
}

/* The pads before the first row / column, as the window formulas of the kernels use them. */
static void pads_before(const pool_cfg *c, int64_t oh, int64_t ow, int64_t *pt, int64_t *pl) {
    if (!strcmp(c->padding, "SAME")) {
        int64_t th = (oh - 1) * c->sh + c->kh - c->h, tw = (ow - 1) * c->sw + c->kw - c->w;
        *pt = th > 0 ? th / 2 : 0, *pl = tw > 0 ? tw / 2 : 0;
    } else if (!strcmp(c->padding, "VALID")) {
        *pt = *pl = 0;
    } else {
        *pt = c->pads[0], *pl = c->pads[2];
    }
}

typedef struct {
    tfc_tensor *y, *dx, *avg, *avg_dx; /* MaxPool, MaxPoolGrad, AvgPool (NULL for EXPLICIT), AvgPoolGrad */
} pool_out;

static void run(tfc_ctx *ctx, const pool_cfg *c, tfc_tensor *x, tfc_tensor *dy, pool_out *o) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t ks[4] = {1, c->kh, c->kw, 1}, ss[4] = {1, c->sh, c->sw, 1};
    const int64_t ep[8] = {0, 0, c->pads[0], c->pads[1], c->pads[2], c->pads[3], 0, 0};
    tfc_attr at[4] = {TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("strides", ss, 4), TFC_ATTR_S("padding", c->padding),
                      TFC_ATTR_INTS("explicit_paddings", ep, 8)};
    const int na = strcmp(c->padding, "EXPLICIT") ? 3 : 4;
    memset(o, 0, sizeof *o);
    o->y = tfc_emit(ctx, "MaxPool", &x, 1, at, na, &st);
    CHECK_OK(&st);
    REQUIRE(o->y);
    o->dx = tfc_emit(ctx, "MaxPoolGrad", (tfc_tensor *[]){x, o->y, dy}, 3, at, na, &st);
    CHECK_OK(&st);
    REQUIRE(o->dx);
    if (na == 4) return; /* AvgPool has no EXPLICIT padding */
    o->avg = tfc_emit(ctx, "AvgPool", &x, 1, at, na, &st);
    const int32_t xs[4] = {(int32_t)c->n, (int32_t)c->h, (int32_t)c->w, (int32_t)c->c};
    tfc_tensor *shape = tfc_vec_i32(xs, 4, &st);
    o->avg_dx = tfc_emit(ctx, "AvgPoolGrad", (tfc_tensor *[]){shape, dy}, 2, at, na, &st);
    CHECK_OK(&st);
    REQUIRE(o->avg && o->avg_dx);
    tfc_tensor_unref(shape);
}

static void release(pool_out *o) {
    tfc_tensor_unref(o->y), tfc_tensor_unref(o->dx), tfc_tensor_unref(o->avg), tfc_tensor_unref(o->avg_dx);
}

/* Same bits, or both NaN (a sum's NaN payload may depend on the operand order the compiler chose). */
static bool same(const tfc_tensor *a, const tfc_tensor *b) {
    if (!a || !b) return a == b;
    int64_t n = tfc_tensor_num_elements(a);
    if (n != tfc_tensor_num_elements(b)) return false;
    const float *p = tfc_tensor_data(a), *q = tfc_tensor_data(b);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&p[i], &q[i], sizeof(float)) && !(isnan(p[i]) && isnan(q[i]))) return false;
    return true;
}

/* Naive loops (double accumulation) for inputs without NaN: the max and its first position in row-major
 * window order, the mean over the real cells; dx of both. */
static bool matches_loops(const pool_cfg *c, const tfc_tensor *x, const tfc_tensor *dy, const pool_out *o) {
    const int64_t oh = tfc_tensor_dim(o->y, 1), ow = tfc_tensor_dim(o->y, 2), C = c->c;
    int64_t pt, pl;
    pads_before(c, oh, ow, &pt, &pl);
    const int64_t nx = c->n * c->h * c->w * C;
    const float *xp = tfc_tensor_data(x), *dyp = tfc_tensor_data(dy);
    double *gm = calloc((size_t)nx, sizeof(double)), *ga = calloc((size_t)nx, sizeof(double));
    bool ok = true;
    for (int64_t b = 0; b < c->n; b++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t ch = 0; ch < C; ch++) {
                    int64_t h0 = i * c->sh - pt, w0 = j * c->sw - pl, arg = -1, cnt = 0;
                    double best = 0, sum = 0;
                    for (int64_t u = h0; u < h0 + c->kh; u++)
                        for (int64_t v = w0; v < w0 + c->kw; v++) {
                            if (u < 0 || u >= c->h || v < 0 || v >= c->w) continue;
                            int64_t xi = ((b * c->h + u) * c->w + v) * C + ch;
                            if (arg < 0 || xp[xi] > best) best = xp[xi], arg = xi;
                            sum += xp[xi], cnt++;
                        }
                    const int64_t oi = ((b * oh + i) * ow + j) * C + ch;
                    ok &= arg >= 0 && ((const float *)tfc_tensor_data(o->y))[oi] == (float)best;
                    if (arg >= 0) gm[arg] += dyp[oi];
                    if (o->avg) ok &= fabs(((const float *)tfc_tensor_data(o->avg))[oi] - sum / (double)cnt) <= 1e-5;
                    for (int64_t u = h0; u < h0 + c->kh; u++)
                        for (int64_t v = w0; v < w0 + c->kw; v++)
                            if (u >= 0 && u < c->h && v >= 0 && v < c->w)
                                ga[((b * c->h + u) * c->w + v) * C + ch] += dyp[oi] / (double)cnt;
                }
    const float *dm = tfc_tensor_data(o->dx), *da = o->avg_dx ? tfc_tensor_data(o->avg_dx) : NULL;
    for (int64_t i = 0; i < nx; i++) {
        ok &= fabs(dm[i] - gm[i]) <= 1e-5 * (1 + fabs(gm[i]));
        if (da) ok &= fabs(da[i] - ga[i]) <= 1e-5 * (1 + fabs(ga[i]));
    }
    free(gm), free(ga);
    return ok;
}

static const char *const tables[] = {"avx512", "avx2", "baseline"};

/* One configuration: the generic kernels (checked against loops), then each table on 1 and 3 threads. */
static void check_cfg(const pool_cfg *c, vals_kind kind) {
    const int64_t xd[4] = {c->n, c->h, c->w, c->c};
    int64_t pt, pl, oh = out_size(c->h, c->kh, c->sh, c->padding, c->pads[0], c->pads[1]),
                    ow = out_size(c->w, c->kw, c->sw, c->padding, c->pads[2], c->pads[3]);
    pads_before(c, oh, ow, &pt, &pl);
    const int64_t yd[4] = {c->n, oh, ow, c->c};
    tfc_tensor *x = make(xd, kind), *dy = make(yd, kind == VALS_SPECIAL ? VALS_SPECIAL : VALS_UNIFORM);
    pool_out ref;
    REQUIRE(tfc_pool_simd_force("generic"));
    run(ctx1, c, x, dy, &ref);
    if (kind != VALS_SPECIAL && !matches_loops(c, x, dy, &ref)) {
        CHECK(!"generic kernels match loops");
        fprintf(stderr, "  [%lld,%lld,%lld,%lld] window %lldx%lld stride %lldx%lld %s\n", (long long)c->n, (long long)c->h,
                (long long)c->w, (long long)c->c, (long long)c->kh, (long long)c->kw, (long long)c->sh, (long long)c->sw,
                c->padding);
    }
    for (int t = 0; t < 3; t++) {
        if (!tfc_pool_simd_force(tables[t])) continue;
        for (int threads = 0; threads < 2; threads++) {
            pool_out o;
            run(threads ? ctx3 : ctx1, c, x, dy, &o);
            bool ok = same(o.y, ref.y) && same(o.dx, ref.dx) && same(o.avg, ref.avg) && same(o.avg_dx, ref.avg_dx);
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "  %s, %d thread(s), values %d: [%lld,%lld,%lld,%lld] window %lldx%lld stride %lldx%lld %s\n",
                        tables[t], threads ? 3 : 1, (int)kind, (long long)c->n, (long long)c->h, (long long)c->w,
                        (long long)c->c, (long long)c->kh, (long long)c->kw, (long long)c->sh, (long long)c->sw, c->padding);
            release(&o);
        }
    }
    REQUIRE(tfc_pool_simd_force(NULL));
    release(&ref);
    tfc_tensor_unref(x), tfc_tensor_unref(dy);
}

static void test_fixed_shapes(void) {
    static const pool_cfg cfgs[] = {
        {2, 26, 26, 32, 2, 2, 2, 2, "VALID", {0}},  /* the demo CNN's first pool (batch 2) */
        {2, 11, 11, 64, 2, 2, 2, 2, "VALID", {0}},  /* its second: 11 is odd, the last row/column is dropped */
        {1, 11, 11, 64, 2, 2, 2, 2, "VALID", {0}},  /* batch 1 */
        {1, 9, 7, 1, 2, 2, 2, 2, "VALID", {0}},     /* one channel */
        {2, 9, 7, 20, 2, 2, 2, 2, "SAME", {0}},     /* clipped last windows */
        {2, 9, 8, 3, 3, 3, 2, 2, "SAME", {0}},      /* overlapping windows */
        {1, 13, 12, 35, 3, 3, 2, 2, "VALID", {0}},
        {1, 10, 11, 17, 1, 1, 3, 3, "VALID", {0}},  /* disjoint with gaps */
        {2, 10, 11, 17, 2, 1, 3, 2, "SAME", {0}},
        {1, 8, 9, 33, 2, 3, 3, 3, "SAME", {0}},
        {2, 7, 7, 40, 3, 3, 1, 1, "SAME", {0}},     /* stride 1 */
        {1, 6, 6, 300, 2, 2, 2, 2, "VALID", {0}},   /* channel count past the blocks */
        {1, 6, 6, 300, 3, 3, 2, 2, "SAME", {0}},    /* ... overlapping: channel blocks across threads */
        {2, 7, 8, 5, 2, 2, 2, 2, "EXPLICIT", {1, 0, 1, 1}},
        {1, 7, 8, 18, 3, 2, 2, 1, "EXPLICIT", {2, 1, 0, 1}},
        {3, 5, 5, 16, 5, 5, 5, 5, "VALID", {0}},    /* one window over the whole image */
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++)
        for (int kind = 0; kind < 3; kind++) check_cfg(&cfgs[i], (vals_kind)kind);
}

static void test_random_shapes(void) {
    static const int64_t channels[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65};
    static const char *const paddings[] = {"SAME", "VALID", "EXPLICIT"};
    for (int i = 0; i < 150; i++) {
        pool_cfg c = {.n = irand(1, 3), .h = irand(1, 14), .w = irand(1, 14), .kh = irand(1, 4), .kw = irand(1, 4),
                      .sh = irand(1, 4), .sw = irand(1, 4), .padding = paddings[irand(0, 2)]};
        c.c = channels[irand(0, (int64_t)(sizeof channels / sizeof channels[0]) - 1)];
        c.pads[0] = irand(0, c.kh - 1), c.pads[1] = irand(0, c.kh - 1), c.pads[2] = irand(0, c.kw - 1), c.pads[3] = irand(0, c.kw - 1);
        if (out_size(c.h, c.kh, c.sh, c.padding, c.pads[0], c.pads[1]) <= 0 ||
            out_size(c.w, c.kw, c.sw, c.padding, c.pads[2], c.pads[3]) <= 0) {
            i--;
            continue;
        }
        check_cfg(&c, (vals_kind)(i % 3));
    }
}

/* Absurd but well-formed windows and strides (up to 2^62) give the results of the equivalent small ones
 * (op-level bounding, tfc_pool_window): a stride applied to no second output, a SAME window of more than twice
 * the input; EXPLICIT ones past 2^24 are INVALID_ARGUMENT. Under UBSan this also shows no kernel's index
 * arithmetic overflows. */
static void test_huge_windows(void) {
    const int64_t big = (int64_t)1 << 62;
    static const char *const pads[] = {"SAME", "VALID"};
    for (int p = 0; p < 2; p++) {
        const pool_cfg cases[][2] = {
            {{2, 6, 7, 5, 2, 2, big, 2, "", {0}}, {2, 6, 7, 5, 2, 2, 6, 2, "", {0}}},    /* one output row */
            {{1, 6, 7, 17, 2, 3, 3, INT64_MAX, "", {0}}, {1, 6, 7, 17, 2, 3, 3, 7, "", {0}}},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            pool_cfg a = cases[i][0], b = cases[i][1];
            a.padding = b.padding = pads[p];
            const int64_t xd[4] = {a.n, a.h, a.w, a.c};
            const int64_t yd[4] = {a.n, out_size(b.h, b.kh, b.sh, b.padding, 0, 0), out_size(b.w, b.kw, b.sw, b.padding, 0, 0),
                                   a.c};
            tfc_tensor *x = make(xd, VALS_TIES), *dy = make(yd, VALS_UNIFORM);
            pool_out oa, ob;
            run(ctx1, &a, x, dy, &oa);
            run(ctx3, &b, x, dy, &ob);
            CHECK(same(oa.y, ob.y) && same(oa.dx, ob.dx) && same(oa.avg, ob.avg) && same(oa.avg_dx, ob.avg_dx));
            release(&oa), release(&ob);
            tfc_tensor_unref(x), tfc_tensor_unref(dy);
        }
    }
    /* SAME windows of 2^62 and of twice the input: every window covers the whole image */
    const pool_cfg a = {2, 5, 6, 9, big, big, 2, 3, "SAME", {0}}, b = {2, 5, 6, 9, 10, 12, 2, 3, "SAME", {0}};
    const int64_t xd[4] = {2, 5, 6, 9}, yd[4] = {2, 3, 2, 9};
    tfc_tensor *x = make(xd, VALS_TIES), *dy = make(yd, VALS_UNIFORM);
    pool_out oa, ob;
    run(ctx3, &a, x, dy, &oa);
    run(ctx1, &b, x, dy, &ob);
    CHECK(same(oa.y, ob.y) && same(oa.dx, ob.dx) && same(oa.avg, ob.avg) && same(oa.avg_dx, ob.avg_dx));
    release(&oa), release(&ob);
    /* EXPLICIT: refused with the values named */
    const int64_t ks[4] = {1, 2, 2, 1}, ss[4] = {1, big, 1, 1}, ep[8] = {0, 0, 1, 0, 0, 0, 0, 0};
    tfc_attr at[4] = {TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("strides", ss, 4), TFC_ATTR_S("padding", "EXPLICIT"),
                      TFC_ATTR_INTS("explicit_paddings", ep, 8)};
    tfc_status st = TFC_STATUS_INIT;
    CHECK(!tfc_emit(ctx1, "MaxPool", &x, 1, at, 4, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "MaxPool") && strstr(st.msg, "4611686018427387904"));
    tfc_status_clear(&st);
    tfc_tensor_unref(x), tfc_tensor_unref(dy);
}

static void test_force(void) {
    CHECK(tfc_pool_simd_force("generic"));
    CHECK(tfc_pool_simd_get() == NULL);
    CHECK(tfc_pool_simd_force("baseline"));
    CHECK(tfc_pool_simd_get() == &tfc_pool_simd_base);
    CHECK(!tfc_pool_simd_force("no-such-table"));
    CHECK(tfc_pool_simd_force(NULL));
    CHECK(tfc_pool_simd_get() != NULL);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx1 = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    ctx3 = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 3}, &st);
    REQUIRE(ctx1 && ctx3);
    for (int t = 0; t < 3; t++) printf("pool: table %s %s\n", tables[t], tfc_pool_simd_force(tables[t]) ? "tested" : "not available here");
    tfc_pool_simd_force(NULL);
    test_force();
    test_huge_windows();
    test_fixed_shapes();
    test_random_shapes();
    tfc_ctx_free(ctx1);
    tfc_ctx_free(ctx3);
    printf("test_pool: %d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures ? 1 : 0;
}
