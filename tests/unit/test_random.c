/* Random ops: TensorFlow's exact values for fixed seeds (recorded from TensorFlow 2.21 on CPU), stream
 * continuation across calls, TensorFlow's seed rules, nondeterministic seeding, and the moments of each
 * distribution. */
#include "core/philox.h"
#include "core/tensor_internal.h"
#include "tfc_test.h"
#include "tfc/ops/random.h"

static tfc_ctx *ctx;

/* Runs op(shape [n], dtype, seed, seed2) and compares the raw bits of the output with want. */
static void check_bits(const char *op, tfc_dtype dt, int64_t n, int64_t seed, int64_t seed2, const uint64_t *want) {
    tfc_status st = TFC_STATUS_INIT;
    int32_t n32 = (int32_t)n; /* an int32 shape, as TensorFlow converts [6] */
    tfc_tensor *shape32 = tfc_vec_i32(&n32, 1, &st);
    tfc_attr a[3] = {TFC_ATTR_I("seed", seed), TFC_ATTR_I("seed2", seed2), TFC_ATTR_T("dtype", dt)};
    tfc_tensor *y = tfc_emit(ctx, op, &shape32, 1, a, 3, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    size_t sz = tfc_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        uint64_t got = 0;
        memcpy(&got, (const char *)tfc_tensor_data(y) + i * (int64_t)sz, sz);
        if (got != want[i]) {
            fprintf(stderr, "%s %s [%lld]: bits 0x%llx, TensorFlow 0x%llx\n", op, tfc_dtype_name(dt), (long long)i,
                    (unsigned long long)got, (unsigned long long)want[i]);
            tfc_test_failures++;
        }
        tfc_test_checks++;
    }
    tfc_tensor_unref(y);
    tfc_tensor_unref(shape32);
}

static void test_tensorflow_values(void) {
    /* tf.raw_ops.<op>(shape=[6], dtype=..., seed=1, seed2=2), first and second call in a fresh process */
    static const struct {
        const char *op;
        tfc_dtype dt;
        uint64_t first[6], second[6];
    } cases[] = {
        {"RandomUniform", TFC_FLOAT,
         {0x3ed0133c, 0x3f5b8ba6, 0x3d62e6c0, 0x3dafddd0, 0x3ed305cc, 0x3d160a40},
         {0x3effb890, 0x3d80b5f0, 0x3eeb8dc0, 0x3e4fab00, 0x3db583d0, 0x3f78fc54}},
        {"RandomUniform", TFC_DOUBLE,
         {0x3fd0133e33b7174cull, 0x3fdc5cd8282bf774ull, 0x3fd305cf6c12c148ull, 0x3fd07e44382cf3ccull,
          0x3fee7caab50acf66ull, 0x3fea888cfd3cefa6ull},
         {0x3fefdc48f01016beull, 0x3fe5c6e0c133eac0ull, 0x3fe6b07b6ff8fc54ull, 0x3f986950e0cfde80ull,
          0x3fc626eb6c5df858ull, 0x3fe987ad12f7a254ull}},
        {"RandomUniform", TFC_HALF, {0x3278, 0x374c, 0x3a6c, 0x3774, 0x35cc, 0x2d20},
         {0x3848, 0x3abe, 0x3ae0, 0x3580, 0x2ba0, 0x3854}},
        {"RandomUniform", TFC_BFLOAT16, {0x3f1e, 0x3f26, 0x3ed8, 0x3f3a, 0x3f66, 0x3f24},
         {0x3e90, 0x3f3e, 0x3f60, 0x3f40, 0x3ef4, 0x3ea8}},
        {"RandomStandardNormal", TFC_FLOAT,
         {0xbf85fcdd, 0x3f56f6e1, 0x3f9e2fe3, 0x4004150f, 0x3e9b842a, 0x3fa5edfb},
         {0x3ee8173c, 0x3f8b3845, 0x3f9889d5, 0x3eba7248, 0xbec117d6, 0x400ad008}},
        {"RandomStandardNormal", TFC_DOUBLE,
         {0x3fe298089076cdd3ull, 0xbff8eb3aca515204ull, 0x3ff8e4f44037f289ull, 0xbfb34d61b9fd07a9ull,
          0xbfd1816ab358dc28ull, 0x3fc30293969a8e6eull},
         {0xbfb5afdf76513732ull, 0xbfa43c2dedbbf3e0ull, 0x3fbfadf9fadb2cdaull, 0x3fea3d4272b929b3ull,
          0xbffca04ce986a9f3ull, 0x3fe1bc6e8102b0aaull}},
        {"RandomStandardNormal", TFC_HALF, {0xbc30, 0x3ab8, 0x3cf1, 0x4021, 0x34dc, 0x3d2f},
         {0x3741, 0x3c5a, 0x3cc4, 0x35d4, 0xb609, 0x4057}},
        {"RandomStandardNormal", TFC_BFLOAT16, {0xbf86, 0x3f57, 0x3f9e, 0x4004, 0x3e9c, 0x3fa6},
         {0x3ee8, 0x3f8b, 0x3f99, 0x3eba, 0xbec1, 0x400b}},
        {"TruncatedNormal", TFC_FLOAT,
         {0xbf85fcdd, 0x3f56f6e1, 0x3f9e2fe3, 0x3e9b842a, 0x3ec7027f, 0x3f9e4c57},
         {0x3ee8173c, 0x3f8b3845, 0x3f9889d5, 0x3eba7248, 0xbf730c0b, 0x3f6149e0}},
        {"TruncatedNormal", TFC_DOUBLE,
         {0x3fe298089076cdd3ull, 0xbff8eb3aca515204ull, 0xbff212c734d3894dull, 0xbfe0803aba843b6cull,
          0xbff20bf7ca0d8c29ull, 0xbfe1e326f34231daull},
         {0xbfb5afdf76513732ull, 0xbfa43c2dedbbf3e0ull, 0x3fd604a5559876f0ull, 0x3ff423872f01f0c6ull,
          0x3fed92a295b479f4ull, 0x3feaadcae2bf6cc7ull}},
        {"TruncatedNormal", TFC_HALF, {0xbc30, 0x3ab8, 0x3cf1, 0x34dc, 0x3638, 0x3cf2},
         {0x3741, 0x3c5a, 0x3cc4, 0x35d4, 0xbb98, 0x3b0a}},
        {"TruncatedNormal", TFC_BFLOAT16, {0xbf86, 0x3f57, 0x3f9e, 0x3e9c, 0x3ec7, 0x3f9e},
         {0x3ee8, 0x3f8b, 0x3f99, 0x3eba, 0xbf73, 0x3f61}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_bits(cases[i].op, cases[i].dt, 6, 1, 2, cases[i].first);
        check_bits(cases[i].op, cases[i].dt, 6, 1, 2, cases[i].second); /* the cached stream continues */
    }

    /* RandomUniformInt(shape, minval, maxval, seed=3, seed2=4) */
    tfc_status st = TFC_STATUS_INIT;
    int32_t n6 = 6, n5 = 5;
    tfc_tensor *s6 = tfc_vec_i32(&n6, 1, &st), *s5 = tfc_vec_i32(&n5, 1, &st);
    tfc_tensor *lo32 = tfc_scalar_i32(-10, &st), *hi32 = tfc_scalar_i32(1000, &st);
    tfc_tensor *lo64 = tfc_scalar_i64(-(1LL << 40), &st), *hi64 = tfc_scalar_i64(1LL << 50, &st);
    tfc_attr a[2] = {TFC_ATTR_I("seed", 3), TFC_ATTR_I("seed2", 4)};
    tfc_tensor *y32 = tfc_emit(ctx, "RandomUniformInt", (tfc_tensor *[]){s6, lo32, hi32}, 3, a, 2, &st);
    CHECK_OK(&st);
    tfc_tensor *y64 = tfc_emit(ctx, "RandomUniformInt", (tfc_tensor *[]){s5, lo64, hi64}, 3, a, 2, &st);
    CHECK_OK(&st);
    REQUIRE(y32 && y64);
    static const int32_t w32[6] = {71, 980, 461, 944, 149, 500};
    static const int64_t w64[5] = {6891123391745LL, 277188791852689LL, 434842995331183LL, 925418233124553LL,
                                   353997404845001LL};
    for (int i = 0; i < 6; i++) CHECK(((const int32_t *)tfc_tensor_data(y32))[i] == w32[i]);
    for (int i = 0; i < 5; i++) CHECK(((const int64_t *)tfc_tensor_data(y64))[i] == w64[i]);
    tfc_tensor *all[] = {s6, s5, lo32, hi32, lo64, hi64, y32, y64};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
}

/* RandomUniform float32 runs 64 Philox samples (256 outputs) at a time in vector lanes, the rest one sample at
 * a time: first calls with fresh seeds against tfc_philox_next itself (the stream starts at the seeds'
 * counter), for sizes below, at and around multiples of 256, on one and two threads (a thread's share starting
 * inside a run of 64 samples). */
static void test_uniform_lanes(void) {
    static const int64_t sizes[] = {1, 63, 255, 256, 257, 513, 1000, 4099, 20000, 100003};
    int64_t seed = 1000;
    for (int threads = 1; threads <= 2; threads++) {
        tfc_status st = TFC_STATUS_INIT;
        tfc_ctx_opts o = {.intra_op_threads = threads};
        tfc_ctx *c = tfc_ctx_new(&o, &st);
        REQUIRE(c);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++, seed++) {
            const int64_t n = sizes[i];
            int32_t n32 = (int32_t)n;
            tfc_tensor *shape = tfc_vec_i32(&n32, 1, &st);
            tfc_attr a[3] = {TFC_ATTR_I("seed", seed), TFC_ATTR_I("seed2", 77), TFC_ATTR_T("dtype", TFC_FLOAT)};
            tfc_tensor *y = tfc_emit(c, "RandomUniform", &shape, 1, a, 3, &st);
            CHECK_OK(&st);
            REQUIRE(y);
            tfc_philox g;
            tfc_philox_init(&g, (uint64_t)seed, 77);
            int64_t bad = 0;
            for (int64_t q = 0; q < n; q += 4) {
                uint32_t w[4];
                tfc_philox_next(&g, w);
                for (int k = 0; k < 4 && q + k < n; k++) {
                    const float want = tfc_philox_u32_to_float(w[k]), got = ((const float *)tfc_tensor_data(y))[q + k];
                    if (memcmp(&want, &got, 4) && bad++ < 3)
                        fprintf(stderr, "RandomUniform [%lld] of %lld, %d threads: %.9g, Philox %.9g\n",
                                (long long)(q + k), (long long)n, threads, got, want);
                }
            }
            CHECK(bad == 0);
            tfc_tensor_unref(y);
            tfc_tensor_unref(shape);
        }
        tfc_ctx_free(c);
    }
}

static uint32_t f32_bits(const tfc_tensor *t, int64_t i) {
    uint32_t b;
    memcpy(&b, (const float *)tfc_tensor_data(t) + i, 4);
    return b;
}

static void test_seed_rules(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t s1, s2;
    /* Python's random.Random(5).randint(0, 2**31 - 1), as TensorFlow's eager op seeds */
    tfc_ctx_set_seed(ctx, 5);
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s1 == 5 && s2 == 1097127993);
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s2 == 1539898300);
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s2 == 124576495);
    tfc_random_get_seed(ctx, 7, &s1, &s2);
    CHECK(s1 == 5 && s2 == 7);
    tfc_random_get_seed(ctx, -3, &s1, &s2); /* Python's modulo is never negative */
    CHECK(s2 == 2147483647LL - 3);
    tfc_ctx_set_seed(ctx, -5); /* random.Random seeds with |n| */
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s1 == 2147483642LL && s2 == 1097127993);
    tfc_ctx_set_seed(ctx, (1LL << 40) + 3); /* two 32-bit key words */
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s1 == ((1LL << 40) + 3) % 2147483647LL && s2 == 943978446);
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s2 == 261273136);
    tfc_ctx_set_seed(ctx, 0);
    tfc_random_get_seed(ctx, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s1 == 0 && s2 == 1654615998);
    tfc_random_get_seed(ctx, 0, &s1, &s2); /* (0, 0) means "nondeterministic" to kernels: avoided */
    CHECK(s1 == 0 && s2 == 2147483647LL);

    /* tf.random.set_seed(5); tf.random.uniform([3]) twice, then with seed=1 twice */
    static const uint32_t want[4][3] = {{0x3f205b4c, 0x3f07a3ce, 0x3f422a40},
                                        {0x3f33a31a, 0x3d31a280, 0x3f0f7a20},
                                        {0x3ec668d0, 0x3f3fa0ae, 0x3f0c78da},
                                        {0x3f555462, 0x3ec7588c, 0x3f2a8ada}};
    for (int rep = 0; rep < 2; rep++) { /* set_seed restarts the op seeds and the cached streams */
        tfc_ctx_set_seed(ctx, 5);
        int64_t shape = 3;
        for (int k = 0; k < 4; k++) {
            tfc_tensor *u = tfc_random_uniform(ctx, &shape, 1, TFC_FLOAT, 0, 1, k < 2 ? TFC_RANDOM_NO_SEED : 1, &st);
            CHECK_OK(&st);
            REQUIRE(u);
            for (int i = 0; i < 3; i++) CHECK(f32_bits(u, i) == want[k][i]);
            tfc_tensor_unref(u);
        }
    }

    /* tf.random.set_seed(5), then (all with seed=9): uniform float64 in [-2.5, 7), normal(2, 3),
     * truncated_normal(-1, 0.5), uniform int32 in [3, 17), uniform float16 in [0, 4) */
    tfc_ctx_set_seed(ctx, 5);
    int64_t four = 4, three = 3;
    tfc_tensor *u64 = tfc_random_uniform(ctx, &four, 1, TFC_DOUBLE, -2.5, 7, 9, &st);
    tfc_tensor *nrm = tfc_random_normal(ctx, &four, 1, TFC_FLOAT, 2, 3, 9, &st);
    tfc_tensor *tn = tfc_truncated_normal(ctx, &four, 1, TFC_FLOAT, -1, 0.5, 9, &st);
    tfc_tensor *ui = tfc_random_uniform(ctx, &four, 1, TFC_INT32, 3, 17, 9, &st);
    tfc_tensor *uh = tfc_random_uniform(ctx, &three, 1, TFC_HALF, 0, 4, 9, &st);
    CHECK_OK(&st);
    REQUIRE(u64 && nrm && tn && ui && uh);
    static const uint64_t wu64[4] = {0x40172355cec04c8aull, 0x3fede17858b55244ull, 0x4008a06307dceeceull,
                                     0xbffab87ca7d3c31eull};
    static const uint32_t wn[4] = {0x4066c608, 0x401959dd, 0xc068c9ec, 0x4013e4e2};
    static const uint32_t wt[4] = {0xbf3b7bfa, 0xbf6f196d, 0xbff8434f, 0xbf72bcbf};
    static const int32_t wi[4] = {7, 4, 8, 16};
    static const uint16_t wh[3] = {0x43dc, 0x4182, 0x37f0};
    for (int i = 0; i < 4; i++) {
        uint64_t b;
        memcpy(&b, (const double *)tfc_tensor_data(u64) + i, 8);
        CHECK(b == wu64[i]);
        CHECK(f32_bits(nrm, i) == wn[i]);
        CHECK(f32_bits(tn, i) == wt[i]);
        CHECK(((const int32_t *)tfc_tensor_data(ui))[i] == wi[i]);
    }
    for (int i = 0; i < 3; i++) CHECK(((const uint16_t *)tfc_tensor_data(uh))[i] == wh[i]);
    tfc_tensor *ts[] = {u64, nrm, tn, ui, uh};
    for (int i = 0; i < 5; i++) tfc_tensor_unref(ts[i]);

    /* Each context has its own streams: a fresh one starts over. */
    tfc_ctx *c2 = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    REQUIRE(c2);
    tfc_ctx_set_seed(c2, 5);
    int64_t shape = 3;
    tfc_tensor *u = tfc_random_uniform(c2, &shape, 1, TFC_FLOAT, 0, 1, TFC_RANDOM_NO_SEED, &st);
    REQUIRE(u);
    for (int i = 0; i < 3; i++) CHECK(f32_bits(u, i) == want[0][i]);
    tfc_tensor_unref(u);
    tfc_ctx_free(c2);

    /* Bad arguments */
    CHECK(!tfc_random_uniform(ctx, &shape, 1, TFC_INT8, 0, 1, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_random_normal(ctx, &shape, 1, TFC_INT32, 0, 1, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_random_uniform(ctx, &shape, 1, TFC_INT64, 5, 5, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    int64_t neg = -1;
    CHECK(!tfc_truncated_normal(ctx, &neg, 1, TFC_FLOAT, 0, 1, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

static void test_unseeded(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *c = tfc_ctx_new(NULL, &st); /* no global seed */
    REQUIRE(c);
    int64_t n = 64;
    tfc_tensor *a = tfc_random_uniform(c, &n, 1, TFC_FLOAT, 0, 1, TFC_RANDOM_NO_SEED, &st);
    tfc_tensor *b = tfc_random_uniform(c, &n, 1, TFC_FLOAT, 0, 1, TFC_RANDOM_NO_SEED, &st);
    REQUIRE(a && b);
    CHECK(memcmp(tfc_tensor_data(a), tfc_tensor_data(b), 64 * sizeof(float)) != 0);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    /* an op seed alone uses TensorFlow's default graph seed: (87654321, seed) */
    int64_t s1, s2;
    tfc_random_get_seed(c, 42, &s1, &s2);
    CHECK(s1 == 87654321 && s2 == 42);
    tfc_random_get_seed(c, TFC_RANDOM_NO_SEED, &s1, &s2);
    CHECK(s1 == 0 && s2 == 0);
    tfc_ctx_free(c);
}

/* Mean and variance of n samples against the distribution's, within 6 standard errors. */
static void check_moments(const char *what, const tfc_tensor *t, double mean, double var, double lo, double hi) {
    int64_t n = tfc_tensor_num_elements(t);
    double s = 0, s2 = 0, mn = INFINITY, mx = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        double v = tfc_tensor_get_f64(t, i);
        s += v;
        s2 += v * v;
        mn = v < mn ? v : mn;
        mx = v > mx ? v : mx;
    }
    double m = s / (double)n, v = s2 / (double)n - m * m;
    double se_m = sqrt(var / (double)n), se_v = var * sqrt(3.0 / (double)n);
    if (fabs(m - mean) > 6 * se_m || fabs(v - var) > 6 * se_v || mn < lo || mx >= hi) {
        fprintf(stderr, "%s: mean %g (want %g), variance %g (want %g), range [%g, %g] (want [%g, %g))\n", what, m, mean,
                v, var, mn, mx, lo, hi);
        tfc_test_failures++;
    }
    tfc_test_checks++;
}

static void test_moments(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx_set_seed(ctx, 1234);
    int64_t shape[2] = {300, 1000};
    const tfc_dtype fl[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16};
    /* variance of the standard normal truncated to (-2, 2) */
    const double tvar = 1.0 - 4.0 * exp(-2.0) / sqrt(2.0 * M_PI) / erf(2.0 / sqrt(2.0));
    for (int k = 0; k < 4; k++) {
        tfc_tensor *u = tfc_random_uniform(ctx, shape, 2, fl[k], -1, 3, TFC_RANDOM_NO_SEED, &st);
        tfc_tensor *n = tfc_random_normal(ctx, shape, 2, fl[k], 1, 2, TFC_RANDOM_NO_SEED, &st);
        tfc_tensor *t = tfc_truncated_normal(ctx, shape, 2, fl[k], 0, 1, TFC_RANDOM_NO_SEED, &st);
        CHECK_OK(&st);
        REQUIRE(u && n && t);
        /* half/bfloat16 uniforms have 10/7 random bits: their variance is that of the discrete grid */
        double grid = fl[k] == TFC_HALF ? 1024 : fl[k] == TFC_BFLOAT16 ? 128 : 0;
        double uvar = grid ? 16.0 * (grid * grid - 1) / (12.0 * grid * grid) : 16.0 / 12.0;
        double umean = grid ? -1 + 4 * (grid - 1) / (2 * grid) : 1.0;
        check_moments("uniform", u, umean, uvar, -1, 3);
        check_moments("normal", n, 1, 4, -INFINITY, INFINITY);
        check_moments("truncated normal", t, 0, tvar, -2, 2.0000001);
        tfc_tensor_unref(u);
        tfc_tensor_unref(n);
        tfc_tensor_unref(t);
    }
    for (int k = 0; k < 2; k++) {
        tfc_tensor *u = tfc_random_uniform(ctx, shape, 2, k ? TFC_INT64 : TFC_INT32, -5, 5, TFC_RANDOM_NO_SEED, &st);
        REQUIRE(u);
        check_moments("uniform int", u, -0.5, (100.0 - 1) / 12.0, -5, 5);
        tfc_tensor_unref(u);
    }
    /* Full int32 range: lo + bits % range without overflow */
    int64_t n = 10000;
    tfc_tensor *u = tfc_random_uniform(ctx, &n, 1, TFC_INT32, INT32_MIN, INT32_MAX, TFC_RANDOM_NO_SEED, &st);
    REQUIRE(u);
    int neg = 0;
    for (int64_t i = 0; i < n; i++) neg += ((const int32_t *)tfc_tensor_data(u))[i] < 0;
    CHECK(neg > 4500 && neg < 5500);
    tfc_tensor_unref(u);
}

/* ---- _TfcDropout against tf.nn.dropout's unfused ops ----
 * Each case runs, on a fresh context per path (fresh generator states), two consecutive dropouts of x:
 * the unfused RandomUniform -> GreaterEqual -> Cast -> Mul(x, scale) -> Mul(., mask) (as the Keras layer
 * emitted them), and _TfcDropout, then the gradients of sum(w * y) for both; outputs and gradients must be
 * equal bit for bit. A third context mixes them (fused, then unfused): the stream continues across the two. */
static tfc_tensor *unfused_dropout(tfc_ctx *c, tfc_tensor *x, double rate, int64_t seed, int64_t seed2) {
    tfc_status st = TFC_STATUS_INIT;
    const tfc_shape *xs = tfc_tensor_shape(x);
    const tfc_dtype dt = tfc_tensor_dtype(x);
    int32_t d32[TFC_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) d32[i] = (int32_t)xs->dims[i];
    tfc_tensor *sh = tfc_vec_i32(d32, xs->rank, &st), *scale = tfc_scalar(dt, 1.0 / (1.0 - rate), &st),
               *r = tfc_scalar(dt, rate, &st);
    tfc_attr a[3] = {TFC_ATTR_I("seed", seed), TFC_ATTR_I("seed2", seed2), TFC_ATTR_T("dtype", dt)};
    tfc_attr ca = TFC_ATTR_T("DstT", dt);
    tfc_tensor *u = tfc_emit(c, "RandomUniform", &sh, 1, a, 3, &st);
    tfc_tensor *keep = tfc_emit(c, "GreaterEqual", (tfc_tensor *[]){u, r}, 2, NULL, 0, &st);
    tfc_tensor *mask = tfc_emit(c, "Cast", &keep, 1, &ca, 1, &st);
    tfc_tensor *scaled = tfc_emit(c, "Mul", (tfc_tensor *[]){x, scale}, 2, NULL, 0, &st);
    tfc_tensor *y = tfc_emit(c, "Mul", (tfc_tensor *[]){scaled, mask}, 2, NULL, 0, &st);
    CHECK_OK(&st);
    tfc_tensor_unref(sh), tfc_tensor_unref(scale), tfc_tensor_unref(r), tfc_tensor_unref(u);
    tfc_tensor_unref(keep), tfc_tensor_unref(mask), tfc_tensor_unref(scaled);
    return y;
}

static tfc_tensor *fused_dropout(tfc_ctx *c, tfc_tensor *x, double rate, int64_t seed, int64_t seed2) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_attr a[3] = {TFC_ATTR_F("rate", rate), TFC_ATTR_I("seed", seed), TFC_ATTR_I("seed2", seed2)};
    tfc_tensor *o[2] = {NULL, NULL};
    CHECK(tfc_execute(c, "_TfcDropout", &x, 1, a, 3, o, 2, &st) == 2);
    CHECK_OK(&st);
    if (o[1]) { /* the mask: u >= rate where the output is x * scale (or where x * scale is 0) */
        CHECK(tfc_tensor_dtype(o[1]) == TFC_BOOL);
        tfc_tensor_unref(o[1]);
    }
    return o[0];
}

/* y (two calls) and dx = d sum(w * y) / dx of the second call, on a new context */
static void dropout_run(bool fused, int threads, tfc_tensor *x, tfc_tensor *w, double rate, int64_t seed,
                        tfc_tensor **y1, tfc_tensor **y2, tfc_tensor **dx) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(c);
    *y1 = (fused ? fused_dropout : unfused_dropout)(c, x, rate, seed, 5);
    tfc_tape *tape = tfc_tape_new(c, false, false, &st);
    tfc_tape_watch(tape, x);
    *y2 = (fused ? fused_dropout : unfused_dropout)(c, x, rate, seed, 5);
    tfc_tensor *t = tfc_emit(c, "Mul", (tfc_tensor *[]){*y2, w}, 2, NULL, 0, &st);
    *dx = NULL;
    CHECK(tfc_tape_gradient(tape, t, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, dx, &st));
    CHECK_OK(&st);
    tfc_tensor_unref(t);
    tfc_tape_free(tape);
    tfc_ctx_free(c);
}

static void check_same_bits(const char *what, const tfc_tensor *a, const tfc_tensor *b, int64_t n, size_t sz) {
    CHECK(a && b);
    if (!a || !b) return;
    const bool same = !memcmp(tfc_tensor_data(a), tfc_tensor_data(b), (size_t)n * sz);
    if (!same) fprintf(stderr, "dropout: %s differs from the unfused ops (%lld elements)\n", what, (long long)n);
    CHECK(same);
}

static void test_fused_dropout(void) {
    tfc_status st = TFC_STATUS_INIT;
    static const int64_t shapes[][3] = {{2, 128, 1600}, {2, 1, 1}, {2, 1, 7}, {2, 15, 17}, {1, 255, 0},
                                        {1, 257, 0},    {2, 2, 0}};
    static const double rates[] = {0.5, 0.1, 0.3, 0.0, 0.9};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int dti = 0; dti < 2; dti++)
            for (int threads = 1; threads <= 2; threads++) {
                const tfc_dtype dt = dti ? TFC_DOUBLE : TFC_FLOAT;
                const size_t sz = tfc_dtype_size(dt);
                const double rate = rates[(si + (size_t)dti + (size_t)threads) % 5];
                const int rank = (int)shapes[si][0];
                int64_t dims[2] = {shapes[si][1], shapes[si][2]}, n = dims[0] * (rank == 2 ? dims[1] : 1);
                tfc_tensor *x = tfc_tensor_new(dt, dims, rank, &st), *w = tfc_tensor_new(dt, dims, rank, &st);
                REQUIRE(x && w);
                for (int64_t i = 0; i < n; i++) {
                    /* values, and some zeros, -0, inf and NaN: x * scale * 0 keeps their signs and NaNs */
                    double v = (double)((i * 7919) % 201 - 100) / 37.0;
                    if (i % 97 == 3) v = -0.0;
                    if (i % 101 == 5) v = INFINITY;
                    if (i % 103 == 7) v = NAN;
                    tfc_dtype_set_f64(dt, x->data, i, v);
                    tfc_dtype_set_f64(dt, w->data, i, (double)(i % 13) - 6.5);
                }
                tfc_tensor *uy1, *uy2, *udx, *fy1, *fy2, *fdx, *my1, *my2, *mdx;
                dropout_run(false, threads, x, w, rate, 1234 + (int64_t)si, &uy1, &uy2, &udx);
                dropout_run(true, threads, x, w, rate, 1234 + (int64_t)si, &fy1, &fy2, &fdx);
                check_same_bits("first output", uy1, fy1, n, sz);
                check_same_bits("second output (the stream continued)", uy2, fy2, n, sz);
                check_same_bits("gradient", udx, fdx, n, sz);
                /* fused then unfused on one context: the unfused call continues the fused call's stream */
                tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
                my1 = fused_dropout(c, x, rate, 1234 + (int64_t)si, 5);
                my2 = unfused_dropout(c, x, rate, 1234 + (int64_t)si, 5);
                mdx = NULL;
                check_same_bits("mixed first", uy1, my1, n, sz);
                check_same_bits("mixed second", uy2, my2, n, sz);
                tfc_ctx_free(c);
                tfc_tensor *all[] = {x, w, uy1, uy2, udx, fy1, fy2, fdx, my1, my2, mdx};
                for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
            }
    /* rate outside [0, 1): INVALID_ARGUMENT naming the op */
    tfc_tensor *x = tfc_scalar(TFC_FLOAT, 1.0, &st), *o[2] = {NULL, NULL};
    tfc_attr a = TFC_ATTR_F("rate", 1.0);
    CHECK(tfc_execute(ctx, "_TfcDropout", &x, 1, &a, 1, o, 2, &st) < 0);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "_TfcDropout") && strstr(st.msg, "rate must be in [0, 1)"));
    tfc_status_clear(&st);
    tfc_tensor_unref(x);
}

/* _TfcDropoutSeeded(x, [s, s2]) gives what a fresh _TfcDropout with seeds (s, s2) gives first, on every call
 * (no state); a salt changes the mask; the same gradient */
static void test_seeded_dropout(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t dims[2] = {33, 70}, n = 33 * 70;
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, dims, 2, &st), *w = tfc_tensor_new(TFC_FLOAT, dims, 2, &st);
    REQUIRE(x && w);
    for (int64_t i = 0; i < n; i++) {
        ((float *)tfc_tensor_mutable_data(x))[i] = (float)((i * 31) % 17) - 8.0f;
        ((float *)tfc_tensor_mutable_data(w))[i] = (float)(i % 5) + 0.5f;
    }
    tfc_tensor *seed = tfc_vec_i64((const int64_t[]){4242, 9}, 2, &st);
    REQUIRE(seed);
    for (int threads = 1; threads <= 2; threads++) {
        tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
        REQUIRE(c);
        tfc_tensor *ref = fused_dropout(c, x, 0.4, 4242, 9); /* the first draw of seeds (4242, 9) */
        tfc_attr a[2] = {TFC_ATTR_F("rate", 0.4), TFC_ATTR_I("salt", 0)};
        tfc_tensor *o1[2] = {0}, *o2[2] = {0}, *o3[2] = {0};
        tfc_tape *tape = tfc_tape_new(c, false, false, &st);
        tfc_tape_watch(tape, x);
        CHECK(tfc_execute(c, "_TfcDropoutSeeded", (tfc_tensor *[]){x, seed}, 2, a, 2, o1, 2, &st) == 2);
        CHECK(tfc_execute(c, "_TfcDropoutSeeded", (tfc_tensor *[]){x, seed}, 2, a, 2, o2, 2, &st) == 2);
        CHECK_OK(&st);
        check_same_bits("seeded vs first draw", ref, o1[0], n, 4);
        check_same_bits("seeded, called again", ref, o2[0], n, 4);
        /* the gradient: dy * mask * scale, as _TfcDropout's */
        tfc_tensor *t = tfc_emit(c, "Mul", (tfc_tensor *[]){o2[0], w}, 2, NULL, 0, &st), *dx = NULL;
        CHECK(tfc_tape_gradient(tape, t, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &dx, &st));
        CHECK_OK(&st);
        tfc_tape_free(tape);
        const float *y = tfc_tensor_data(o2[0]), *g = dx ? tfc_tensor_data(dx) : NULL;
        const bool *m = tfc_tensor_data(o2[1]);
        const float scale = (float)(1.0 / 0.6);
        int kept = 0, bad = 0;
        for (int64_t i = 0; i < n && g; i++) {
            kept += m[i];
            bad += g[i] != (m[i] ? ((const float *)tfc_tensor_data(w))[i] * scale : 0.0f);
            bad += m[i] && y[i] != ((const float *)tfc_tensor_data(x))[i] * scale;
        }
        CHECK(g && bad == 0);
        CHECK(kept > n / 2 && kept < n * 7 / 10); /* keep probability 0.6 */
        a[1] = TFC_ATTR_I("salt", 77);
        CHECK(tfc_execute(c, "_TfcDropoutSeeded", (tfc_tensor *[]){x, seed}, 2, a, 2, o3, 2, &st) == 2);
        CHECK(memcmp(tfc_tensor_data(o3[1]), tfc_tensor_data(o1[1]), (size_t)n) != 0);
        tfc_tensor *all[] = {ref, o1[0], o1[1], o2[0], o2[1], o3[0], o3[1], t, dx};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
        tfc_ctx_free(c);
    }
    tfc_tensor_unref(seed);
    tfc_tensor_unref(x);
    tfc_tensor_unref(w);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_tensorflow_values();
    test_uniform_lanes();
    test_seed_rules();
    test_unseeded();
    test_moments();
    test_fused_dropout();
    test_seeded_dropout();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
