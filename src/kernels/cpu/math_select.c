/* SelectV2 (three-way broadcasting select), ClipByValue and AddN kernels. */
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/math_internal.h"
#include "ops/registry.h" /* TFC_MAX_IO */

/* ---- SelectV2 ------------------------------------------------------------------------------------------
 * Broadcast iteration over three operands: the output is split into rows of its innermost dimension, each
 * operand has a per-row start offset and an inner stride of 0 (broadcast) or 1. */
typedef struct {
    int rank;
    int64_t dims[TFC_MAX_RANK];
    int64_t str[3][TFC_MAX_RANK];
    int64_t inner, in_str[3];
} bcast3;

static void bcast3_init(bcast3 *b, const tfc_shape *const s[3], const tfc_shape *out) {
    int r = out->rank;
    b->rank = r > 0 ? r : 1;
    if (r == 0) {
        b->dims[0] = 1;
        for (int k = 0; k < 3; k++) b->str[k][0] = 0;
    }
    for (int i = 0; i < r; i++) b->dims[i] = out->dims[i];
    for (int k = 0; k < 3; k++) {
        int64_t stride = 1;
        for (int i = r - 1; i >= 0; i--) {
            int ii = i - (r - s[k]->rank);
            int64_t d = ii >= 0 ? s[k]->dims[ii] : 1;
            b->str[k][i] = d == 1 ? 0 : stride;
            if (!tfc_size_mul(stride, d, &stride)) stride = 0; /* an empty output: nothing is addressed */
        }
    }
    b->inner = b->dims[b->rank - 1];
    for (int k = 0; k < 3; k++) b->in_str[k] = b->str[k][b->rank - 1] ? 1 : 0;
}

static void bcast3_row(const bcast3 *b, int64_t row, int64_t off[3]) {
    off[0] = off[1] = off[2] = 0;
    for (int i = b->rank - 2; i >= 0; i--) {
        int64_t idx = row % b->dims[i];
        row /= b->dims[i];
        for (int k = 0; k < 3; k++) off[k] += idx * b->str[k][i];
    }
}

/* Branch-free (mask = all ones where c) so the loops vectorise; values are moved as raw bits. */
#define SEL_SEG(NAME, T)                                                                             \
    static void NAME(const bool *restrict c, int64_t sc, const void *tv, int64_t st, const void *ev, int64_t se, \
                     void *zv, int64_t n) {                                                          \
        const T *restrict t = tv, *restrict e = ev;                                                  \
        const uint8_t *restrict cu = (const uint8_t *)c; /* bool loads do not vectorise */          \
        T *restrict z = zv;                                                                          \
        if (sc && st && se) {                                                                        \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T m = (T)(0u - (T)cu[i]);                                                             \
                z[i] = (T)((t[i] & m) | (e[i] & (T)~m));                                             \
            }                                                                                        \
        } else if (sc && st) {                                                                       \
            T ev0 = e[0];                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T m = (T)(0u - (T)cu[i]);                                                             \
                z[i] = (T)((t[i] & m) | (ev0 & (T)~m));                                              \
            }                                                                                        \
        } else if (sc && se) {                                                                       \
            T tv0 = t[0];                                                                            \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T m = (T)(0u - (T)cu[i]);                                                             \
                z[i] = (T)((tv0 & m) | (e[i] & (T)~m));                                              \
            }                                                                                        \
        } else {                                                                                     \
            for (int64_t i = 0; i < n; i++) z[i] = c[i * sc] ? t[i * st] : e[i * se];                \
        }                                                                                            \
    }
SEL_SEG(sel8, uint8_t)
SEL_SEG(sel16, uint16_t)
SEL_SEG(sel32, uint32_t)
SEL_SEG(sel64, uint64_t)
typedef void (*sel_fn)(const bool *c, int64_t sc, const void *t, int64_t st, const void *e, int64_t se, void *z,
                       int64_t n);

typedef struct {
    bcast3 b;
    const bool *c;
    const char *t, *e;
    char *z;
    int64_t es;
    sel_fn fn;
} sel_job;

static void sel_range(void *arg, int64_t begin, int64_t end) {
    const sel_job *j = arg;
    int64_t inner = j->b.inner;
    for (int64_t i = begin; i < end;) {
        int64_t r = i / inner, col = i - r * inner, n = inner - col, off[3];
        if (n > end - i) n = end - i;
        bcast3_row(&j->b, r, off);
        for (int k = 0; k < 3; k++) off[k] += col * j->b.in_str[k];
        j->fn(j->c + off[0], j->b.in_str[0], j->t + off[1] * j->es, j->b.in_str[1], j->e + off[2] * j->es,
              j->b.in_str[2], j->z + i * j->es, n);
        i += n;
    }
}

bool tfc_k_select_v2(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *z = k->out[0];
    const tfc_shape *s[3] = {&k->in[0]->shape, &k->in[1]->shape, &k->in[2]->shape};
    sel_job j = {.c = k->in[0]->data, .t = k->in[1]->data, .e = k->in[2]->data, .z = z->data,
                 .es = (int64_t)tfc_dtype_size(z->dtype)};
    bcast3_init(&j.b, s, &z->shape);
    if (z->num_elements == 0) return true;
    if (z->dtype == TFC_STRING) {
        const tfc_tstring *t = (const tfc_tstring *)j.t, *e = (const tfc_tstring *)j.e;
        tfc_tstring *out = (tfc_tstring *)j.z;
        for (int64_t i = 0; i < z->num_elements; i += j.b.inner) {
            int64_t off[3];
            bcast3_row(&j.b, i / j.b.inner, off);
            for (int64_t c = 0; c < j.b.inner; c++) {
                bool cond = j.c[off[0] + c * j.b.in_str[0]];
                const tfc_tstring *v = cond ? &t[off[1] + c * j.b.in_str[1]] : &e[off[2] + c * j.b.in_str[2]];
                if (!tfc_tstring_assign(&out[i + c], v, st)) return false;
            }
        }
        return true;
    }
    switch (j.es) {
    case 1: j.fn = sel8; break;
    case 2: j.fn = sel16; break;
    case 4: j.fn = sel32; break;
    case 8: j.fn = sel64; break;
    default: return tfc_kernel_unimplemented(k, z->dtype, st);
    }
    tfc_parallel_for(k->pool, z->num_elements, 1, sel_range, &j);
    return true;
}

/* ---- ClipByValue ---------------------------------------------------------------------------------------
 * out = max(min(t, hi), lo) with std::min/std::max semantics (a NaN bound leaves t unchanged, a NaN t stays
 * NaN; lo > hi gives lo), as TensorFlow's kernel. lo and hi are scalars or t-shaped (stride 0 or 1). */
typedef void (*clip_fn)(const void *t, const void *lo, int64_t sl, const void *hi, int64_t sh, void *z, int64_t n);
#define CLIP_SEG(NAME, T)                                                                            \
    static void NAME(const void *tv, const void *lov, int64_t sl, const void *hiv, int64_t sh, void *zv, int64_t n) { \
        const T *restrict t = tv, *restrict lo = lov, *restrict hi = hiv;                            \
        T *restrict z = zv;                                                                          \
        if (!sl && !sh) {                                                                            \
            T l = lo[0], h = hi[0];                                                                  \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T v = t[i];                                                                          \
                v = h < v ? h : v;                                                                   \
                z[i] = v < l ? l : v;                                                                \
            }                                                                                        \
        } else {                                                                                     \
            for (int64_t i = 0; i < n; i++) {                                                        \
                T v = t[i], l = lo[i * sl], h = hi[i * sh];                                          \
                v = h < v ? h : v;                                                                   \
                z[i] = v < l ? l : v;                                                                \
            }                                                                                        \
        }                                                                                            \
    }
CLIP_SEG(clip_f32, float)
CLIP_SEG(clip_f64, double)
CLIP_SEG(clip_i8, int8_t)
CLIP_SEG(clip_u8, uint8_t)
CLIP_SEG(clip_i16, int16_t)
CLIP_SEG(clip_i32, int32_t)
CLIP_SEG(clip_i64, int64_t)

typedef struct {
    clip_fn fn;
    const char *t, *lo, *hi;
    char *z;
    int64_t sl, sh, es;
    tfc_dtype lowp;
} clip_job;

static void clip_range(void *arg, int64_t begin, int64_t end) {
    const clip_job *j = arg;
    if (!j->lowp) {
        j->fn(j->t + begin * j->es, j->lo + begin * j->sl * j->es, j->sl, j->hi + begin * j->sh * j->es, j->sh,
              j->z + begin * j->es, end - begin);
        return;
    }
    float tb[TFC_MATH_CHUNK], lb[TFC_MATH_CHUNK], hb[TFC_MATH_CHUNK], zb[TFC_MATH_CHUNK];
    for (int64_t i = begin; i < end; i += TFC_MATH_CHUNK) {
        int64_t m = end - i < TFC_MATH_CHUNK ? end - i : TFC_MATH_CHUNK;
        tfc_math_to_float(j->lowp, j->t + i * 2, tb, m);
        tfc_math_to_float(j->lowp, j->lo + i * j->sl * 2, lb, j->sl ? m : 1);
        tfc_math_to_float(j->lowp, j->hi + i * j->sh * 2, hb, j->sh ? m : 1);
        j->fn(tb, lb, j->sl, hb, j->sh, zb, m);
        tfc_math_from_float(j->lowp, zb, j->z + i * 2, m);
    }
}

bool tfc_k_clip_by_value(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *t = k->in[0], *lo = k->in[1], *hi = k->in[2];
    clip_job j = {.t = t->data, .lo = lo->data, .hi = hi->data, .z = k->out[0]->data,
                  .sl = lo->shape.rank == 0 ? 0 : 1, .sh = hi->shape.rank == 0 ? 0 : 1,
                  .es = (int64_t)tfc_dtype_size(t->dtype)};
    switch (t->dtype) {
    case TFC_FLOAT: j.fn = clip_f32; break;
    case TFC_DOUBLE: j.fn = clip_f64; break;
    case TFC_HALF: case TFC_BFLOAT16: j.fn = clip_f32; j.lowp = t->dtype; break;
    case TFC_INT8: j.fn = clip_i8; break;
    case TFC_UINT8: j.fn = clip_u8; break;
    case TFC_INT16: j.fn = clip_i16; break;
    case TFC_INT32: j.fn = clip_i32; break;
    case TFC_INT64: j.fn = clip_i64; break;
    default: return tfc_kernel_unimplemented(k, t->dtype, st);
    }
    tfc_parallel_for(k->pool, t->num_elements, j.lowp ? 10 : 2, clip_range, &j);
    return true;
}

/* ---- AddN ----------------------------------------------------------------------------------------------
 * Sums blocks of elements across all inputs while the block is in cache. Integers wrap; half/bfloat16
 * accumulate in float32 and round once. */
#define ADDN_BLOCK 2048
typedef struct {
    int n;
    const char *const *x;
    char *z;
    tfc_dtype dt;
} addn_job;

#define ADDN_SEG(NAME, T, U)                                                                         \
    static void NAME(const addn_job *j, int64_t begin, int64_t end) {                                \
        T *restrict z = (T *)j->z;                                                                   \
        const T *restrict x0 = (const T *)j->x[0];                                                   \
        if (j->n == 1) {                                                                             \
            memcpy(z + begin, x0 + begin, (size_t)(end - begin) * sizeof(T));                        \
            return;                                                                                  \
        }                                                                                            \
        for (int64_t b = begin; b < end; b += ADDN_BLOCK) {                                          \
            int64_t e = end - b < ADDN_BLOCK ? end : b + ADDN_BLOCK;                                 \
            const T *restrict x1 = (const T *)j->x[1];                                               \
            for (int64_t i = b; i < e; i++) z[i] = (T)((U)x0[i] + (U)x1[i]);                         \
            for (int k = 2; k < j->n; k++) {                                                         \
                const T *restrict xk = (const T *)j->x[k];                                           \
                for (int64_t i = b; i < e; i++) z[i] = (T)((U)z[i] + (U)xk[i]);                      \
            }                                                                                        \
        }                                                                                            \
    }
ADDN_SEG(addn_f32, float, float)
ADDN_SEG(addn_f64, double, double)
ADDN_SEG(addn_i8, int8_t, uint32_t)
ADDN_SEG(addn_u8, uint8_t, uint32_t)
ADDN_SEG(addn_i16, int16_t, uint32_t)
ADDN_SEG(addn_i32, int32_t, uint32_t)
ADDN_SEG(addn_i64, int64_t, uint64_t)

static void addn_lowp(const addn_job *j, int64_t begin, int64_t end) {
    float acc[TFC_MATH_CHUNK], tmp[TFC_MATH_CHUNK];
    for (int64_t b = begin; b < end; b += TFC_MATH_CHUNK) {
        int64_t m = end - b < TFC_MATH_CHUNK ? end - b : TFC_MATH_CHUNK;
        tfc_math_to_float(j->dt, j->x[0] + b * 2, acc, m);
        for (int k = 1; k < j->n; k++) {
            tfc_math_to_float(j->dt, j->x[k] + b * 2, tmp, m);
            for (int64_t i = 0; i < m; i++) acc[i] += tmp[i];
        }
        tfc_math_from_float(j->dt, acc, j->z + b * 2, m);
    }
}

static void addn_range(void *arg, int64_t begin, int64_t end) {
    const addn_job *j = arg;
    switch (j->dt) {
    case TFC_FLOAT: addn_f32(j, begin, end); break;
    case TFC_DOUBLE: addn_f64(j, begin, end); break;
    case TFC_INT8: addn_i8(j, begin, end); break;
    case TFC_UINT8: addn_u8(j, begin, end); break;
    case TFC_INT16: addn_i16(j, begin, end); break;
    case TFC_INT32: addn_i32(j, begin, end); break;
    case TFC_INT64: addn_i64(j, begin, end); break;
    default: addn_lowp(j, begin, end); break;
    }
}

bool tfc_k_add_n(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *z = k->out[0];
    const char *x[TFC_MAX_IO];
    switch (z->dtype) {
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_HALF: case TFC_BFLOAT16: case TFC_INT8: case TFC_UINT8:
    case TFC_INT16: case TFC_INT32: case TFC_INT64: break;
    default: return tfc_kernel_unimplemented(k, z->dtype, st);
    }
    for (int i = 0; i < k->n_in; i++) x[i] = k->in[i]->data;
    addn_job j = {.n = k->n_in, .x = x, .z = z->data, .dt = z->dtype};
    tfc_parallel_for(k->pool, z->num_elements, k->n_in, addn_range, &j);
    return true;
}
