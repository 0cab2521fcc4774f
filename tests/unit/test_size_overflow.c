/* Sizes that overflow: shapes whose element count is 0 but whose partial products overflow int64
 * (Fill(dims = [0, 2^62, 2^62])) through every data-movement kernel and the ops the fuzzer found; outputs
 * whose dims overflow are refused; data structures sized by the data, not by user numbers (interleave's
 * cycle); messages quoting the caller's values. Expected shapes and codes are TensorFlow 2.21's (where
 * TensorFlow itself aborts, e.g. concatenating two 2^62 dims, tfc refuses with INVALID_ARGUMENT). */
#include <time.h>
#include <unistd.h>

#include "data_test_util.h"
#include "tfc/data_more.h"
#include "tfc_test.h"

#define B ((int64_t)1 << 62)

static tfc_ctx *ctx;

static tfc_tensor *i64v(const int64_t *v, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_vec_i64(v, n, &st);
    REQUIRE(t);
    return t;
}

static tfc_tensor *i64m(const int64_t *v, int64_t rows, int64_t cols) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t d[2] = {rows, cols};
    tfc_tensor *t = tfc_tensor_from_data(TFC_INT64, d, 2, v, sizeof(int64_t) * (size_t)(rows * cols), &st);
    REQUIRE(t);
    return t;
}

/* Fill(dims, 1.0f) */
static tfc_tensor *fill(const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *d = i64v(dims, rank), *one = tfc_scalar_f32(1.0f, st);
    tfc_tensor *r = tfc_emit(ctx, "Fill", (tfc_tensor *[]){d, one}, 2, NULL, 0, st);
    tfc_tensor_unref(one);
    tfc_tensor_unref(d);
    return r;
}

static bool has_shape(const tfc_tensor *t, const int64_t *dims, int rank) {
    if (!t || tfc_tensor_rank(t) != rank) return false;
    for (int i = 0; i < rank; i++)
        if (tfc_tensor_dim(t, i) != dims[i]) return false;
    return true;
}

/* Runs op on in[0..n) with attrs; checks the first output's shape (rank >= 0) or the error code (rank < 0). */
static void expect(const char *label, const char *op, tfc_tensor *const *in, int n, const tfc_attr *attrs, int n_attrs,
                   const int64_t *dims, int rank, tfc_code code) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *out[4] = {0};
    int got = tfc_execute(ctx, op, in, n, attrs, n_attrs, out, 4, &st);
    if (rank >= 0) {
        if (got < 1 || !has_shape(out[0], dims, rank) || tfc_tensor_num_elements(out[0]) != 0) {
            fprintf(stderr, "%s: %s: expected an empty result of rank %d, got %d outputs (%s: %s)\n", label, op, rank, got,
                    tfc_code_name(st.code), st.msg);
            CHECK(false);
        }
    } else {
        if (got >= 0 || st.code != code || !strstr(st.msg, op)) {
            fprintf(stderr, "%s: %s: expected %s naming the op, got %d outputs (%s: %s)\n", label, op, tfc_code_name(code),
                    got, tfc_code_name(st.code), st.msg);
            CHECK(false);
        }
    }
    for (int i = 0; i < got && i < 4; i++) tfc_tensor_unref(out[i]);
}

static void test_zero_size_huge_dims(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t zbb[3] = {0, B, B};
    tfc_tensor *z = fill(zbb, 3, &st);
    CHECK_OK(&st);
    REQUIRE(z && has_shape(z, zbb, 3) && tfc_tensor_num_elements(z) == 0);
    tfc_tensor *bad = fill((int64_t[]){B, B, 0}, 3, &st); /* counted left to right, as TensorFlow: overflows */
    CHECK(!bad && st.code == TFC_INVALID_ARGUMENT);
    int64_t one3[3] = {1, 1, 1};
    tfc_tensor *ones = fill(one3, 3, &st);
    REQUIRE(ones);

    tfc_tensor *m111 = i64v(one3, 3), *mz = i64v(zbb, 3);
    expect("tile by ones", "Tile", (tfc_tensor *[]){z, m111}, 2, NULL, 0, zbb, 3, 0);
    expect("tile into huge", "Tile", (tfc_tensor *[]){ones, mz}, 2, NULL, 0, zbb, 3, 0);
    expect("broadcast empty", "BroadcastTo", (tfc_tensor *[]){z, mz}, 2, NULL, 0, zbb, 3, 0);
    expect("broadcast ones", "BroadcastTo", (tfc_tensor *[]){ones, mz}, 2, NULL, 0, zbb, 3, 0);

    tfc_tensor *b011 = i64v((int64_t[]){0, 1, 1}, 3), *s022 = i64v((int64_t[]){0, 2, 2}, 3);
    expect("slice", "Slice", (tfc_tensor *[]){z, b011, s022}, 3, NULL, 0, (int64_t[]){0, 2, 2}, 3, 0);
    tfc_tensor *strides = i64v((int64_t[]){1, 2, 3}, 3);
    tfc_status sst = TFC_STATUS_INIT;
    tfc_tensor *ss = tfc_emit(ctx, "StridedSlice", (tfc_tensor *[]){z, b011, mz, strides}, 4, NULL, 0, &sst);
    CHECK(ss && tfc_tensor_num_elements(ss) == 0 && tfc_tensor_rank(ss) == 3);
    tfc_tensor_unref(ss);

    tfc_tensor *p_outer = i64m((int64_t[]){1, 1, 0, 0, 0, 0}, 3, 2), *p_mid = i64m((int64_t[]){0, 0, 1, 0, 0, 0}, 3, 2);
    expect("pad the zero dim", "Pad", (tfc_tensor *[]){z, p_outer}, 2, NULL, 0, NULL, -1, TFC_INVALID_ARGUMENT);
    expect("pad a huge dim", "Pad", (tfc_tensor *[]){z, p_mid}, 2, NULL, 0, (int64_t[]){0, B + 1, B}, 3, 0);
    expect("mirror pad", "MirrorPad", (tfc_tensor *[]){z, p_mid}, 2, (tfc_attr[]){TFC_ATTR_S("mode", "SYMMETRIC")}, 1,
           (int64_t[]){0, B + 1, B}, 3, 0);

    tfc_tensor *ax0 = tfc_scalar_i32(0, &st), *ax1 = tfc_scalar_i32(1, &st), *ax2 = tfc_scalar_i32(2, &st);
    expect("concat axis 0", "ConcatV2", (tfc_tensor *[]){z, z, ax0}, 3, NULL, 0, zbb, 3, 0);
    expect("concat overflowing", "ConcatV2", (tfc_tensor *[]){z, z, ax1}, 3, NULL, 0, NULL, -1, TFC_INVALID_ARGUMENT);
    expect("pack", "Pack", (tfc_tensor *[]){z, z}, 2, (tfc_attr[]){TFC_ATTR_I("axis", 1)}, 1, (int64_t[]){0, 2, B, B}, 4,
           0);
    expect("split", "Split", (tfc_tensor *[]){ax1, z}, 2, (tfc_attr[]){TFC_ATTR_I("num_split", 2)}, 1,
           (int64_t[]){0, B / 2, B}, 3, 0);
    tfc_tensor *sizes = i64v((int64_t[]){B - 4, -1}, 2);
    expect("split_v", "SplitV", (tfc_tensor *[]){z, sizes, ax1}, 3, (tfc_attr[]){TFC_ATTR_I("num_split", 2)}, 1,
           (int64_t[]){0, B - 4, B}, 3, 0);
    tfc_tensor *none[1];
    CHECK(tfc_execute(ctx, "Unpack", &z, 1, (tfc_attr[]){TFC_ATTR_I("num", 0)}, 1, none, 1, &st) == 0);

    tfc_tensor *p021 = i64v((int64_t[]){0, 2, 1}, 3), *p210 = i64v((int64_t[]){2, 1, 0}, 3);
    expect("transpose", "Transpose", (tfc_tensor *[]){z, p021}, 2, NULL, 0, zbb, 3, 0);
    expect("transpose overflowing", "Transpose", (tfc_tensor *[]){z, p210}, 2, NULL, 0, NULL, -1, TFC_INVALID_ARGUMENT);
    expect("sum inner", "Sum", (tfc_tensor *[]){z, ax1}, 2, NULL, 0, (int64_t[]){0, B}, 2, 0);
    expect("sum outer", "Sum", (tfc_tensor *[]){z, ax0}, 2, NULL, 0, NULL, -1, TFC_INVALID_ARGUMENT);
    tfc_tensor *rev_axes = i64v((int64_t[]){1}, 1), *shape_b0b = i64v((int64_t[]){B, 0, B}, 3);
    expect("reverse", "ReverseV2", (tfc_tensor *[]){z, rev_axes}, 2, NULL, 0, zbb, 3, 0);
    expect("cumsum", "Cumsum", (tfc_tensor *[]){z, ax1}, 2, NULL, 0, zbb, 3, 0);
    expect("softmax", "Softmax", (tfc_tensor *[]){z}, 1, NULL, 0, zbb, 3, 0);
    expect("argmax", "ArgMax", (tfc_tensor *[]){z, ax2}, 2, NULL, 0, (int64_t[]){0, B}, 2, 0);
    expect("add", "AddV2", (tfc_tensor *[]){z, z}, 2, NULL, 0, zbb, 3, 0);
    expect("zeros_like", "ZerosLike", (tfc_tensor *[]){z}, 1, NULL, 0, zbb, 3, 0);
    expect("cast", "Cast", (tfc_tensor *[]){z}, 1, (tfc_attr[]){TFC_ATTR_T("DstT", TFC_INT32)}, 1, zbb, 3, 0);
    expect("reshape", "Reshape", (tfc_tensor *[]){z, shape_b0b}, 2, NULL, 0, (int64_t[]){B, 0, B}, 3, 0);
    tfc_tensor *all[] = {z,   ones, m111, mz,    b011, s022, strides,  p_outer,
                         p_mid, ax0, ax1,  ax2, sizes, p021, p210, rev_axes, shape_b0b};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
}

/* Runs op expecting INVALID_ARGUMENT whose message contains want. */
static void expect_msg(const char *op, tfc_tensor *const *in, int n, const tfc_attr *attrs, int n_attrs,
                       const char *want) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *out[4] = {0};
    int got = tfc_execute(ctx, op, in, n, attrs, n_attrs, out, 4, &st);
    if (got >= 0 || st.code != TFC_INVALID_ARGUMENT || !strstr(st.msg, want)) {
        fprintf(stderr, "%s: expected INVALID_ARGUMENT with \"%s\", got %d outputs (%s: %s)\n", op, want, got,
                tfc_code_name(st.code), st.msg);
        CHECK(false);
    }
    for (int i = 0; i < got && i < 4; i++) tfc_tensor_unref(out[i]);
}

/* Messages keep TensorFlow's words (which quote most axes counted from 0) and add the value as the caller gave it
 * when that differs; ArgMax's, like TensorFlow's, quotes the axis as given. */
static void test_messages_quote_the_caller(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = tfc_vec_f32((float[]){1, 2, 3}, 3, &st), *p = tfc_vec_i32((int32_t[]){-10}, 1, &st);
    tfc_tensor *y = tfc_emit(ctx, "Transpose", (tfc_tensor *[]){x, p}, 2, NULL, 0, &st);
    CHECK(!y && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "-10 is out of range [0 .. 1)"));
    tfc_tensor_unref(p);
    tfc_tensor_unref(x);
    float v6[6] = {1, 2, 3, 4, 5, 6};
    tfc_tensor *m = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, v6, sizeof v6, &st);
    tfc_tensor *m0 = tfc_tensor_new(TFC_FLOAT, (int64_t[]){2, 0}, 2, &st);
    REQUIRE(m && m0);
    /* Transpose {0, -2} on rank 2: a duplicate, listed as given */
    p = tfc_vec_i32((int32_t[]){0, -2}, 2, &st);
    expect_msg("Transpose", (tfc_tensor *[]){m, p}, 2, NULL, 0, "1 is missing from {0,0}. (perm {0,-2} as given)");
    tfc_tensor_unref(p);
    /* Squeeze dim -1 of [2, 3] */
    int64_t sq[1] = {-1};
    expect_msg("Squeeze", (tfc_tensor *[]){m}, 1, (tfc_attr[]){TFC_ATTR_INTS("squeeze_dims", sq, 1)}, 1,
               "Can not squeeze dim[1], expected a dimension of 1, got 3 (squeeze_dims entry -1 as given)");
    /* Unpack num 2 along axis -1 of [2, 3] */
    expect_msg("Unpack", (tfc_tensor *[]){m}, 1, (tfc_attr[]){TFC_ATTR_I("num", 2), TFC_ATTR_I("axis", -1)}, 2,
               "Input shape axis 1 must equal 2, got shape [2,3] (axis -1 as given)");
    /* Split [2, 3] in 2 along -1 */
    tfc_tensor *a = tfc_scalar_i32(-1, &st);
    expect_msg("Split", (tfc_tensor *[]){a, m}, 2, (tfc_attr[]){TFC_ATTR_I("num_split", 2)}, 1,
               "split_dim 1 (size = 3) and num_split 2 (split_dim -1 as given)");
    /* ArgMax along -1 of [2, 0] */
    expect_msg("ArgMax", (tfc_tensor *[]){m0, a}, 2, NULL, 0, "Reduction axis -1 is empty");
    /* Sum and ReverseV2 over axes {1, -1} of [2, 3] */
    tfc_tensor *axes = tfc_vec_i32((int32_t[]){1, -1}, 2, &st);
    expect_msg("Sum", (tfc_tensor *[]){m, axes}, 2, NULL, 0, "Axes contains duplicate dimension: 1 (axes entry -1 as given)");
    expect_msg("ReverseV2", (tfc_tensor *[]){m, axes}, 2, NULL, 0, "axis 1 specified more than once. (axis entry -1 as given)");
    tfc_tensor_unref(axes);
    /* GatherV2 axis 0, batch_dims -1 on indices of rank 2 */
    tfc_tensor *ix = tfc_tensor_from_data(TFC_INT32, (int64_t[]){2, 1}, 2, (int32_t[]){0, 1}, 8, &st);
    tfc_tensor *zero = tfc_scalar_i32(0, &st);
    expect_msg("GatherV2", (tfc_tensor *[]){m, ix, zero}, 3, (tfc_attr[]){TFC_ATTR_I("batch_dims", -1)}, 1,
               "batch_dims (1) must be less than or equal to axis (0). (batch_dims -1 as given)");
    /* StridedSlice x[-4] of a [3] vector (shrink) */
    x = tfc_vec_f32((float[]){1, 2, 3}, 3, &st);
    tfc_tensor *b = tfc_vec_i32((int32_t[]){-4}, 1, &st), *e = tfc_vec_i32((int32_t[]){-3}, 1, &st);
    tfc_tensor *s1 = tfc_vec_i32((int32_t[]){1}, 1, &st);
    expect_msg("StridedSlice", (tfc_tensor *[]){x, b, e, s1}, 4, (tfc_attr[]){TFC_ATTR_I("shrink_axis_mask", 1)}, 1,
               "slice index -1 of dimension 0 out of bounds. (begin -4 as given)");
    /* ... and x[2^63 - 1]: refused before begin + 1 is formed */
    tfc_tensor *bb = tfc_vec_i64((int64_t[]){INT64_MAX}, 1, &st), *eb = tfc_vec_i64((int64_t[]){0}, 1, &st);
    tfc_tensor *sb = tfc_vec_i64((int64_t[]){1}, 1, &st);
    expect_msg("StridedSlice", (tfc_tensor *[]){x, bb, eb, sb}, 4, (tfc_attr[]){TFC_ATTR_I("shrink_axis_mask", 1)}, 1,
               "slice index 9223372036854775807 of dimension 0 out of bounds.");
    tfc_tensor *all[] = {bb, eb, sb, b, e, s1, x, zero, ix, a, m0, m};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfc_tensor_unref(all[i]);
}

static tfc_dataset *twice(tfc_ctx *c, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    return tfc_dataset_repeat(tfc_dataset_from_tensors(in, 1, NULL, st), 2, st);
}

/* interleave(cycle_length = 2^63 - 1) on 3 elements: TensorFlow's order, instantly, with 3 slots. */
static void test_interleave_cycle_from_data(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t want[] = {0, 1, 2, 0, 1, 2}, v[16];
    for (int par = 0; par < 2; par++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tfc_interleave_opts o = {.cycle_length = INT64_MAX, .block_length = 1, .num_parallel_calls = par ? 2 : 0};
        tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st);
        CHECK_OK(&st);
        CHECK(drain_i64(ds, 0, v, 16, &st) == 6 && same_i64(v, want, 6));
        CHECK_OK(&st);
        tfc_dataset_unref(ds);
        /* 2^27 slots asked for, 3 used: a first-element latency that does not depend on the number */
        o.cycle_length = (int64_t)1 << 27;
        o.block_length = 2;
        ds = tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st);
        int64_t want2[] = {0, 0, 1, 1, 2, 2};
        CHECK(drain_i64(ds, 0, v, 16, &st) == 6 && same_i64(v, want2, 6));
        tfc_dataset_unref(ds);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        CHECK(s < 2.0);
    }
    /* the cycle wraps over the positions actually used once the input has ended, mid-block too */
    tfc_interleave_opts o = {.cycle_length = 5, .block_length = 3};
    tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_range(0, 2, 1, 0, &st), twice, NULL, &o, &st);
    int64_t want3[] = {0, 0, 1, 1};
    CHECK(drain_i64(ds, 0, v, 16, &st) == 4 && same_i64(v, want3, 4));
    tfc_dataset_unref(ds);
}

static bool same(tfc_ctx *c, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                 tfc_status *st) {
    (void)c, (void)user, (void)n_in, (void)n_out, (void)st;
    out[0] = tfc_tensor_ref(in[0]);
    return true;
}

/* prefetch(2^20) and map(num_parallel_calls = 2) under prefetch(2^20) on 3 elements: slots are made as elements
 * are buffered, so no allocation over 64 KiB is needed (the buffer of 2^20 slots was made up front before). A
 * deterministic buffer hands its head out in O(1) (the queue is a ring). */
static void test_prefetch_buffer_from_data(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t want[] = {0, 1, 2}, v[8];
    tfc_alloc_set_limit(64 << 10);
    for (int deterministic = 0; deterministic < 2; deterministic++) {
        tfc_dataset *ds = tfc_dataset_prefetch(tfc_dataset_range(0, 3, 1, 0, &st), (int64_t)1 << 20, &st);
        CHECK_OK(&st);
        CHECK(drain_i64(ds, 0, v, 8, &st) == 3 && same_i64(v, want, 3));
        CHECK_OK(&st);
        tfc_dataset_unref(ds);
        ds = tfc_dataset_map(tfc_dataset_range(0, 3, 1, 0, &st), same, NULL,
                             &(tfc_map_opts){.num_parallel_calls = 2,
                                             .deterministic = deterministic ? TFC_YES : TFC_NO},
                             &st);
        ds = tfc_dataset_prefetch(ds, (int64_t)1 << 20, &st);
        int n = drain_i64(ds, 0, v, 8, &st), seen = 0;
        for (int i = 0; i < n; i++) seen |= v[i] >= 0 && v[i] < 3 ? 1 << v[i] : 8;
        CHECK(n == 3 && seen == 7 && (!deterministic || same_i64(v, want, 3)));
        CHECK_OK(&st);
        tfc_dataset_unref(ds);
    }
    tfc_alloc_set_limit(0);
    /* 10^5 elements through prefetch(2^20): the queue grows as the producer runs ahead, in order */
    tfc_dataset *ds = tfc_dataset_prefetch(tfc_dataset_range(0, 100000, 1, 0, &st), (int64_t)1 << 20, &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    REQUIRE(it);
    int64_t n = 0, bad = 0;
    for (tfc_tensor *t[1]; tfc_iterator_next(it, t, 1, &st); n++) {
        bad += *(const int64_t *)tfc_tensor_data(t[0]) != n;
        tfc_tensor_unref(t[0]);
    }
    CHECK(n == 100000 && bad == 0);
    CHECK_CODE(&st, TFC_OUT_OF_RANGE);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

/* interleave's lengths as TensorFlow's InterleaveDataset op: 0 is an error (AUTOTUNE asks for the default),
 * quoting the value given; NULL options are Python's defaults. */
static void test_interleave_lengths(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t v[16];
    for (int par = 0; par < 2; par++) {
        tfc_interleave_opts o = {.cycle_length = 0, .block_length = 1, .num_parallel_calls = par ? 2 : 0};
        CHECK(!tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st));
        CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "cycle_length must be greater than zero.") &&
              strstr(st.msg, "cycle_length 0,"));
        o = (tfc_interleave_opts){.cycle_length = -7, .block_length = 1};
        CHECK(!tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st));
        CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "cycle_length -7,"));
        o = (tfc_interleave_opts){.cycle_length = 2, .block_length = 0, .num_parallel_calls = par ? 2 : 0};
        CHECK(!tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st));
        CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "block_length must be greater than zero.") &&
              strstr(st.msg, "block_length 0,"));
        o = (tfc_interleave_opts){.cycle_length = 2, .block_length = TFC_AUTOTUNE};
        CHECK(!tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st));
        CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "block_length -1,"));
        /* AUTOTUNE: as many slots as cores (the order depends on that number): every element once */
        o = (tfc_interleave_opts){.cycle_length = TFC_AUTOTUNE, .block_length = 1,
                                  .num_parallel_calls = par ? TFC_AUTOTUNE : 0};
        tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, &o, &st);
        CHECK_OK(&st);
        int64_t sum = 0, n = drain_i64(ds, 0, v, 16, &st);
        for (int i = 0; i < n && i < 16; i++) sum += v[i];
        CHECK(n == 6 && sum == 6);
        tfc_dataset_unref(ds);
    }
    tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_range(0, 3, 1, 0, &st), twice, NULL, NULL, &st);
    CHECK_OK(&st);
    CHECK(drain_i64(ds, 0, v, 16, &st) == 6);
    tfc_dataset_unref(ds);
}

static tfc_tensor *vec_len(tfc_ctx *c, int64_t len, tfc_status *st) {
    (void)c;
    int64_t d[1] = {len};
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, d, 1, st);
    if (t) for (int64_t i = 0; i < len; i++) ((float *)tfc_tensor_data(t))[i] = (float)(i + 1);
    return t;
}

/* x -> the float32 vector [1, 2, .., x + 1] */
static bool to_vec(tfc_ctx *c, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                   tfc_status *st) {
    (void)user, (void)n_in, (void)n_out;
    out[0] = vec_len(c, *(const int64_t *)tfc_tensor_data(in[0]) + 1, st);
    return out[0] != NULL;
}

static char *write_file(const char *name, const char *text) {
    static char path[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/tfc_size_overflow_%d_%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(), name);
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* User numbers far beyond the data on a 3-element dataset: batch, shuffle, cache and the file readers' buffers
 * cost what the data needs (no allocation over 64 KiB); padded_batch's padded shape is the output's size, as
 * TensorFlow's, so a huge one is a clear error quoting it. */
static void test_data_user_numbers(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t huge = (int64_t)1 << 62;
    int64_t v[16], want[] = {0, 1, 2};
    tfc_alloc_set_limit(64 << 10);
    for (int par = 0; par < 2; par++) {
        /* batch(2^62): one batch of the 3 elements; with drop_remainder, none */
        tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_range(0, 3, 1, 0, &st), huge,
                                            &(tfc_batch_opts){.num_parallel_calls = par ? 2 : 0}, &st);
        CHECK_OK(&st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        REQUIRE(it);
        tfc_tensor *t[1] = {0};
        CHECK(tfc_iterator_next(it, t, 1, &st) && tfc_tensor_rank(t[0]) == 1 && tfc_tensor_dim(t[0], 0) == 3 &&
              same_i64(tfc_tensor_data(t[0]), want, 3));
        tfc_tensor_unref(t[0]);
        CHECK(!tfc_iterator_next(it, t, 1, &st) && st.code == TFC_OUT_OF_RANGE);
        tfc_status_clear(&st);
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
        ds = tfc_dataset_batch(tfc_dataset_range(0, 3, 1, 0, &st), INT64_MAX,
                               &(tfc_batch_opts){.drop_remainder = true, .num_parallel_calls = par ? 2 : 0}, &st);
        CHECK(drain_i64(ds, 0, v, 16, &st) == 0);
        CHECK_OK(&st);
        tfc_dataset_unref(ds);
    }
    /* shuffle(2^63 - 1): the 3 elements, each once */
    tfc_dataset *ds = tfc_dataset_shuffle(tfc_dataset_range(0, 3, 1, 0, &st), INT64_MAX,
                                          &(tfc_shuffle_opts){.seed = 7, .has_seed = true}, &st);
    CHECK(drain_i64(ds, 0, v, 16, &st) == 3 && v[0] + v[1] + v[2] == 3 && v[0] * v[1] * v[2] == 0 &&
          v[0] != v[1] && v[1] != v[2] && v[0] != v[2]);
    CHECK_OK(&st);
    tfc_dataset_unref(ds);
    /* cache (memory) under repeat: two epochs of 3 */
    ds = tfc_dataset_repeat(tfc_dataset_cache(tfc_dataset_range(0, 3, 1, 0, &st), NULL, &st), 2, &st);
    int64_t want6[] = {0, 1, 2, 0, 1, 2};
    CHECK(drain_i64(ds, 0, v, 16, &st) == 6 && same_i64(v, want6, 6));
    CHECK_OK(&st);
    tfc_dataset_unref(ds);
    /* padded_batch: element lengths 1..3 padded to 2^62 (overflows int64 with the batch dim: INVALID_ARGUMENT)
     * or 2^40 (fits, but 12 TiB: RESOURCE_EXHAUSTED); both quote the padded shape */
    const int64_t pads[2] = {huge, (int64_t)1 << 40};
    const tfc_code codes[2] = {TFC_INVALID_ARGUMENT, TFC_RESOURCE_EXHAUSTED};
    const char *quoted[2] = {"4611686018427387904", "1099511627776"};
    for (int k = 0; k < 2; k++) {
        tfc_shape ps = {1, {pads[k]}};
        ds = tfc_dataset_map(tfc_dataset_range(0, 3, 1, 0, &st), to_vec, NULL,
                             &(tfc_map_opts){.output_spec = &(tfc_tensor_spec){TFC_FLOAT, {1, {-1}}}}, &st);
        ds = tfc_dataset_padded_batch(ds, huge, &(tfc_padded_batch_opts){.padded_shapes = &ps}, &st);
        CHECK_OK(&st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        REQUIRE(it);
        tfc_tensor *t[1] = {0};
        CHECK(!tfc_iterator_next(it, t, 1, &st));
        if (st.code != codes[k] || !strstr(st.msg, "padded_batch") || !strstr(st.msg, quoted[k])) {
            fprintf(stderr, "padded_batch to [%lld]: %s: %s\n", (long long)pads[k], tfc_code_name(st.code), st.msg);
            CHECK(false);
        }
        tfc_status_clear(&st);
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
    }
    /* a text file of 3 lines read with a 2^62-byte buffer, and as fixed-length records of 2^40 bytes: the file's
     * size, not the record size, is checked first (the window was allocated up front) */
    const char *path = write_file("lines.txt", "a\nbb\nccc\n");
    ds = tfc_dataset_text_line(tfc_dataset_from_strings(&path, 1, &st), &(tfc_reader_opts){.buffer_size = huge},
                               &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    REQUIRE(it);
    int lines = 0;
    for (tfc_tensor *t[1]; tfc_iterator_next(it, t, 1, &st); lines++) tfc_tensor_unref(t[0]);
    CHECK(lines == 3 && st.code == TFC_OUT_OF_RANGE);
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_fixed_length_record(tfc_dataset_from_strings(&path, 1, &st), (int64_t)1 << 40, 0, 0, NULL, &st);
    CHECK_OK(&st);
    it = tfc_iterator_new(ds, &st);
    REQUIRE(it);
    tfc_tensor *t[1] = {0};
    CHECK(!tfc_iterator_next(it, t, 1, &st) && st.code == TFC_INVALID_ARGUMENT &&
          strstr(st.msg, "record length (1099511627776 bytes)"));
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    unlink(path);
    tfc_alloc_set_limit(0);
}

/* Calls the op fuzzer (test_op_fuzz) found failing under UBSan, each kept as a case. */
static void test_fuzzer_finds(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* SelectV2 broadcasting an empty tensor of huge dims: the broadcast strides overflowed */
    int64_t big[5] = {0, (int64_t)1 << 31, (int64_t)1 << 40, (int64_t)1 << 40, 2};
    tfc_tensor *cond = tfc_tensor_new(TFC_BOOL, big, 5, &st), *x = tfc_scalar_f32(4, &st);
    tfc_tensor *y = tfc_tensor_new(TFC_FLOAT, big, 5, &st);
    REQUIRE(cond && x && y);
    expect("select empty huge", "SelectV2", (tfc_tensor *[]){cond, x, y}, 3, NULL, 0, big, 5, 0);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_tensor_unref(cond);
    /* GatherNd with an index of INT64_MAX: the offset was formed before the bound check */
    double pv[6] = {1, 2, 3, 4, 5, 6};
    tfc_tensor *params = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){3, 2}, 2, pv, sizeof pv, &st);
    tfc_tensor *idx = i64m((int64_t[]){INT64_MAX, 1}, 1, 2);
    tfc_tensor *g = tfc_emit(ctx, "GatherNd", (tfc_tensor *[]){params, idx}, 2, NULL, 0, &st);
    CHECK(!g && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "9223372036854775807"));
    tfc_tensor_unref(g);
    tfc_tensor_unref(idx);
    tfc_tensor_unref(params);
    /* Slice with begin INT64_MIN and size -1: the remaining size d - begin overflowed before begin was checked */
    {
        float one = 1;
        int64_t bv = INT64_MIN, sv = -1;
        tfc_tensor *x1 = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){1}, 1, &one, sizeof one, &st);
        tfc_tensor *b = tfc_tensor_from_data(TFC_INT64, (int64_t[]){1}, 1, &bv, sizeof bv, &st);
        tfc_tensor *sz = tfc_tensor_from_data(TFC_INT64, (int64_t[]){1}, 1, &sv, sizeof sv, &st);
        REQUIRE(x1 && b && sz);
        tfc_tensor *sl = tfc_emit(ctx, "Slice", (tfc_tensor *[]){x1, b, sz}, 3, NULL, 0, &st);
        CHECK(!sl && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "-9223372036854775808"));
        tfc_tensor_unref(sl);
        tfc_tensor_unref(sz);
        tfc_tensor_unref(b);
        tfc_tensor_unref(x1);
    }
    /* AssignSubVariableOp of INT32_MIN: the negation overflowed; TensorFlow wraps: 5 - INT32_MIN = INT32_MIN + 5 */
    tfc_tensor *init = tfc_tensor_from_data(TFC_INT32, (int64_t[]){2}, 1, (int32_t[]){5, -2}, 8, &st);
    tfc_tensor *delta = tfc_tensor_from_data(TFC_INT32, (int64_t[]){2}, 1, (int32_t[]){INT32_MIN, INT32_MIN}, 8, &st);
    tfc_variable *v = init ? tfc_variable_new(ctx, init, true, "v", &st) : NULL;
    REQUIRE(v && delta);
    CHECK(tfc_variable_assign_sub(ctx, v, delta, &st));
    CHECK(tfc_tensor_get_f64(tfc_variable_value(v), 0) == (double)INT32_MIN + 5);
    CHECK(tfc_tensor_get_f64(tfc_variable_value(v), 1) == (double)INT32_MAX - 1);
    tfc_variable_free(v);
    tfc_tensor_unref(delta);
    tfc_tensor_unref(init);
    /* BatchMatMulV2 of empty operands with huge batch dims: the batch strides overflowed */
    int64_t bd[5] = {0, B, INT64_MAX, 4, 4};
    tfc_tensor *a = tfc_tensor_new(TFC_BFLOAT16, bd, 5, &st);
    REQUIRE(a);
    expect("batch matmul empty huge", "BatchMatMulV2", (tfc_tensor *[]){a, a}, 2, NULL, 0, bd, 5, 0);
    tfc_tensor_unref(a);
    /* UnsortedSegmentSum of rank-8 data with scalar ids: the rank-9 output shape was written past its 8 dims */
    int64_t d8[8] = {1, 2, 1, 3, 1, 1, 2, 1};
    tfc_tensor *data = tfc_tensor_new(TFC_DOUBLE, d8, 8, &st), *ids = tfc_scalar_i32(0, &st),
               *nseg = tfc_scalar_i32(4, &st);
    REQUIRE(data && ids && nseg);
    expect("segment sum rank 9", "UnsortedSegmentSum", (tfc_tensor *[]){data, ids, nseg}, 3, NULL, 0, NULL, -1,
           TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(nseg);
    tfc_tensor_unref(ids);
    tfc_tensor_unref(data);
    /* BiasAddGrad (NCHW) of an empty [2^31, 4, 0]: 2^31 empty rows were walked (a hang); the result is 4 zeros */
    tfc_tensor *e = tfc_tensor_new(TFC_UINT8, (int64_t[]){(int64_t)1 << 31, 4, 0}, 3, &st);
    REQUIRE(e);
    tfc_tensor *bg = tfc_emit(ctx, "BiasAddGrad", &e, 1, (tfc_attr[]){TFC_ATTR_S("data_format", "NCHW")}, 1, &st);
    CHECK(bg && tfc_tensor_num_elements(bg) == 4 && tfc_tensor_get_f64(bg, 3) == 0);
    tfc_tensor_unref(bg);
    tfc_tensor_unref(e);
    /* a list-length attr of INT64_MAX (_FusedMatMul num_args): the input count check overflowed */
    tfc_tensor *fa = tfc_tensor_new(TFC_FLOAT, (int64_t[]){2, 2}, 2, &st);
    REQUIRE(fa);
    expect("num_args huge", "_FusedMatMul", (tfc_tensor *[]){fa, fa}, 2, (tfc_attr[]){TFC_ATTR_I("num_args", INT64_MAX)}, 1,
           NULL, -1, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(fa);
    /* Substr (UTF8_CHAR) at pos INT64_MIN: -pos overflowed; it is out of range */
    const char *str = "h\xc3\xa9llo";
    tfc_tensor *sv = tfc_tensor_from_strings(&str, (size_t[]){6}, NULL, 0, &st), *pmin = tfc_scalar_i64(INT64_MIN, &st),
               *lm1 = tfc_scalar_i64(-1, &st);
    REQUIRE(sv && pmin && lm1);
    expect("substr pos INT64_MIN", "Substr", (tfc_tensor *[]){sv, pmin, lm1}, 3,
           (tfc_attr[]){TFC_ATTR_S("unit", "UTF8_CHAR")}, 1, NULL, -1, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(lm1);
    tfc_tensor_unref(pmin);
    tfc_tensor_unref(sv);
    /* Substr broadcasting an empty [2^62, 0] against pos/len of shape [1]: 2^62 empty rows were walked (a hang) */
    int64_t e2[2] = {B, 0};
    tfc_tensor *es = tfc_tensor_from_strings(NULL, NULL, e2, 2, &st), *p1 = tfc_vec_i64((int64_t[]){3}, 1, &st),
               *l1 = tfc_vec_i64((int64_t[]){1}, 1, &st);
    REQUIRE(es && p1 && l1);
    expect("substr empty broadcast", "Substr", (tfc_tensor *[]){es, p1, l1}, 3, NULL, 0, e2, 2, 0);
    tfc_tensor_unref(l1);
    tfc_tensor_unref(p1);
    tfc_tensor_unref(es);
}

/* Found by fuzz_keras_json: a Functional config naming node 1e78 was converted to int (undefined behaviour). */
static void test_keras_json_finds(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *json =
        "{\"class_name\": \"Functional\", \"config\": {\"name\": \"m\", \"layers\": ["
        "{\"class_name\": \"InputLayer\", \"name\": \"in\", \"config\": {\"batch_input_shape\": [null, 2], "
        "\"dtype\": \"float32\", \"name\": \"in\"}, \"inbound_nodes\": []}, "
        "{\"class_name\": \"Dense\", \"name\": \"d\", \"config\": {\"name\": \"d\", \"units\": 1}, "
        "\"inbound_nodes\": [[[\"in\", 1e78, 0, {}]]]}], "
        "\"input_layers\": [[\"in\", 0, 0]], \"output_layers\": [[\"d\", 0, 0]]}}";
    tfc_model *m = tfc_model_from_config(ctx, json, &st);
    CHECK(!m && st.code == TFC_INVALID_ARGUMENT);
    tfc_model_free(m);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 2}, &st);
    REQUIRE(ctx);
    test_zero_size_huge_dims();
    test_messages_quote_the_caller();
    test_interleave_cycle_from_data();
    test_prefetch_buffer_from_data();
    test_interleave_lengths();
    test_data_user_numbers();
    test_fuzzer_finds();
    test_keras_json_finds();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
