/* Typed wrappers for the random ops and TensorFlow's seed rules (include/tfc/ops/random.h). */
#include <math.h>
#include <string.h>

#include "eager/context_internal.h"
#include "tfc/ops/random.h"

#define MAXINT32 2147483647LL      /* random_seed._MAXINT32 */
#define DEFAULT_GRAPH_SEED 87654321 /* random_seed.DEFAULT_GRAPH_SEED */

/* ---- Python's random.Random: MT19937 seeded by init_by_array from the seed's 32-bit words ------------- */
typedef struct {
    uint32_t mt[624];
    int idx;
} mt19937;

static void mt_init(mt19937 *m, uint32_t s) {
    m->mt[0] = s;
    for (int i = 1; i < 624; i++) m->mt[i] = 1812433253u * (m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) + (uint32_t)i;
    m->idx = 624;
}

/* random.seed(n) for an int n: the words of |n|, least significant first (one zero word for 0). */
static void mt_seed(mt19937 *m, int64_t n) {
    uint64_t a = n < 0 ? 0 - (uint64_t)n : (uint64_t)n;
    uint32_t key[2] = {(uint32_t)a, (uint32_t)(a >> 32)};
    int len = key[1] ? 2 : 1;
    mt_init(m, 19650218u);
    int i = 1, j = 0;
    for (int k = 624 > len ? 624 : len; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++, j++;
        if (i >= 624) m->mt[0] = m->mt[623], i = 1;
        if (j >= len) j = 0;
    }
    for (int k = 623; k; k--) {
        m->mt[i] = (m->mt[i] ^ ((m->mt[i - 1] ^ (m->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= 624) m->mt[0] = m->mt[623], i = 1;
    }
    m->mt[0] = 0x80000000u;
}

static uint32_t mt_next(mt19937 *m) {
    if (m->idx >= 624) {
        for (int k = 0; k < 624; k++) {
            uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[(k + 1) % 624] & 0x7fffffffu);
            m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^ (y & 1u ? 0x9908b0dfu : 0u);
        }
        m->idx = 0;
    }
    uint32_t y = m->mt[m->idx++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
}

/* random.randint(0, 2^31 - 1): 32-bit draws, rejecting those >= 2^31 (Python's _randbelow). */
static int64_t mt_randint31(mt19937 *m) {
    uint32_t r;
    do r = mt_next(m);
    while (r >= 0x80000000u);
    return r;
}

/* The n-th op seed under global seed g. Regenerating the sequence from the start costs O(n), so the state
 * after the last draw is kept per thread: consecutive calls cost one draw each. */
static int64_t internal_operation_seed(int64_t g, int64_t n) {
    static _Thread_local mt19937 cached;
    static _Thread_local int64_t cached_seed, cached_n = -1;
    if (cached_n < 0 || cached_seed != g || cached_n > n) {
        mt_seed(&cached, g);
        cached_seed = g;
        cached_n = 0;
    }
    int64_t v = 0;
    while (cached_n <= n) {
        v = mt_randint31(&cached);
        cached_n++;
    }
    return v;
}

static int64_t truncate_seed(int64_t s) { /* Python's s % (2^31 - 1): never negative */
    int64_t r = s % MAXINT32;
    return r < 0 ? r + MAXINT32 : r;
}

void tfc_random_get_seed(tfc_ctx *ctx, int64_t op_seed, int64_t *seed, int64_t *seed2) {
    bool has_op = op_seed != TFC_RANDOM_NO_SEED;
    if (ctx->has_seed) {
        if (!has_op) op_seed = internal_operation_seed(ctx->global_seed, ctx->op_seed_counter++);
        *seed = truncate_seed(ctx->global_seed);
        *seed2 = truncate_seed(op_seed);
    } else if (has_op) {
        *seed = DEFAULT_GRAPH_SEED;
        *seed2 = truncate_seed(op_seed);
    } else {
        *seed = *seed2 = 0;
        return;
    }
    if (*seed == 0 && *seed2 == 0) *seed2 = MAXINT32; /* (0, 0) would mean "nondeterministic" to the kernels */
}

/* ---- wrappers ---------------------------------------------------------------------------------------- */

/* The shape as an int32 vector, or int64 when a dim does not fit (TensorFlow's shape_tensor). */
static tfc_tensor *shape_tensor(const char *op, const int64_t *shape, int rank, tfc_status *st) {
    if (rank < 0 || rank > TFC_MAX_RANK || (rank > 0 && !shape)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: shape of rank %d is not supported", op, rank);
        return NULL;
    }
    bool wide = false;
    int32_t d32[TFC_MAX_RANK];
    for (int i = 0; i < rank; i++) {
        wide |= shape[i] > INT32_MAX || shape[i] < INT32_MIN;
        d32[i] = (int32_t)shape[i];
    }
    return wide ? tfc_vec_i64(shape, rank, st) : tfc_vec_i32(d32, rank, st);
}

/* Drops a temporary: owned by the current scope, or by us without one. */
static void discard(tfc_ctx *ctx, tfc_tensor *t) { tfc_tensor_unref(tfc_keep(ctx, t)); }

static bool float_dtype(tfc_dtype dt) {
    return dt == TFC_FLOAT || dt == TFC_DOUBLE || dt == TFC_HALF || dt == TFC_BFLOAT16;
}

/* v rounded to dtype, as a double. */
static double in_dtype(tfc_dtype dt, double v) {
    unsigned char b[8];
    tfc_dtype_set_f64(dt, b, 0, v);
    return tfc_dtype_get_f64(dt, b, 0);
}

/* rnd * scale + shift (Mul then AddV2, as TensorFlow), skipping the identities; takes rnd. */
static tfc_tensor *scale_shift(tfc_ctx *ctx, tfc_tensor *rnd, double scale, bool do_scale, double shift, bool do_shift,
                               tfc_status *st) {
    tfc_tensor *r = rnd;
    tfc_dtype dt = rnd->dtype;
    if (do_scale) {
        tfc_tensor *s = tfc_scalar(dt, scale, st);
        tfc_tensor *m = s ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){r, s}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(s);
        discard(ctx, r);
        if (!(r = m)) return NULL;
    }
    if (do_shift) {
        tfc_tensor *s = tfc_scalar(dt, shift, st);
        tfc_tensor *a = s ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){r, s}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(s);
        discard(ctx, r);
        r = a;
    }
    return r;
}

tfc_tensor *tfc_random_uniform(tfc_ctx *ctx, const int64_t *shape, int rank, tfc_dtype dtype, double minval,
                               double maxval, int64_t seed, tfc_status *st) {
    if (!float_dtype(dtype) && dtype != TFC_INT32 && dtype != TFC_INT64) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "random_uniform: dtype must be float16, bfloat16, float32, float64, int32 or int64, got %s",
                       tfc_dtype_name(dtype));
        return NULL;
    }
    tfc_tensor *sh = shape_tensor("random_uniform", shape, rank, st);
    if (!sh) return NULL;
    int64_t s1, s2;
    tfc_random_get_seed(ctx, seed, &s1, &s2);
    tfc_attr attrs[3] = {TFC_ATTR_I("seed", s1), TFC_ATTR_I("seed2", s2), TFC_ATTR_T("dtype", dtype)};
    tfc_tensor *r = NULL;
    if (!float_dtype(dtype)) {
        tfc_tensor *lo = tfc_scalar(dtype, trunc(minval), st), *hi = lo ? tfc_scalar(dtype, trunc(maxval), st) : NULL;
        if (hi) r = tfc_emit(ctx, "RandomUniformInt", (tfc_tensor *[]){sh, lo, hi}, 3, attrs, 2, st);
        tfc_tensor_unref(lo);
        tfc_tensor_unref(hi);
    } else {
        tfc_tensor *rnd = tfc_emit(ctx, "RandomUniform", &sh, 1, attrs, 3, st);
        /* (maxval - minval) is a difference of two dtype values, rounded to dtype */
        double lo = in_dtype(dtype, minval), range = in_dtype(dtype, in_dtype(dtype, maxval) - lo);
        if (rnd) r = scale_shift(ctx, rnd, range, minval != 0 || maxval != 1, lo, minval != 0, st);
    }
    tfc_tensor_unref(sh);
    return r;
}

static tfc_tensor *normal(tfc_ctx *ctx, const char *op, const int64_t *shape, int rank, tfc_dtype dtype, double mean,
                          double stddev, int64_t seed, tfc_status *st) {
    if (!float_dtype(dtype)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: dtype must be float16, bfloat16, float32 or float64, got %s", op,
                       tfc_dtype_name(dtype));
        return NULL;
    }
    tfc_tensor *sh = shape_tensor(op, shape, rank, st);
    if (!sh) return NULL;
    int64_t s1, s2;
    tfc_random_get_seed(ctx, seed, &s1, &s2);
    tfc_attr attrs[3] = {TFC_ATTR_I("seed", s1), TFC_ATTR_I("seed2", s2), TFC_ATTR_T("dtype", dtype)};
    tfc_tensor *rnd = tfc_emit(ctx, op, &sh, 1, attrs, 3, st);
    tfc_tensor_unref(sh);
    /* TensorFlow always multiplies and adds here (rnd * stddev + mean) */
    return rnd ? scale_shift(ctx, rnd, stddev, true, mean, true, st) : NULL;
}

tfc_tensor *tfc_random_normal(tfc_ctx *ctx, const int64_t *shape, int rank, tfc_dtype dtype, double mean,
                              double stddev, int64_t seed, tfc_status *st) {
    return normal(ctx, "RandomStandardNormal", shape, rank, dtype, mean, stddev, seed, st);
}

tfc_tensor *tfc_truncated_normal(tfc_ctx *ctx, const int64_t *shape, int rank, tfc_dtype dtype, double mean,
                                 double stddev, int64_t seed, tfc_status *st) {
    return normal(ctx, "TruncatedNormal", shape, rank, dtype, mean, stddev, seed, st);
}
