/* TopKV2 kernel (registered in indexing.c).
 *
 * TensorFlow's order: larger values first, NaN above everything, -0 equal to +0, equal values by lower
 * index. Each value maps to an unsigned key that sorts the same way; key and index are packed into one
 * integer (64 bits for dtypes up to 32 bits, 128 bits otherwise) whose ascending order is the output order,
 * so selection and sorting are plain integer comparisons with no ties. With sorted = false the k largest
 * are returned in index order. */
#include <string.h>

#include "kernels/cpu/kernels.h"

bool tfc_k_top_k_v2(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_indexing_ensure_outputs(tfc_kernel_ctx *k, tfc_status *st);

typedef unsigned __int128 u128;

static inline uint32_t key_f32(float v) {
    if (v != v) return 0xFFFFFFFFu;
    if (v == 0) v = 0; /* -0 sorts with +0 */
    uint32_t b;
    memcpy(&b, &v, 4);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

static inline uint64_t key_f64(double v) {
    if (v != v) return ~(uint64_t)0;
    if (v == 0) v = 0;
    uint64_t b;
    memcpy(&b, &v, 8);
    return (b >> 63) ? ~b : (b | ((uint64_t)1 << 63));
}

/* Order key of element i (dtype dt): larger value, larger key. */
static inline uint64_t value_key(tfc_dtype dt, const void *x, int64_t i) {
    switch (dt) {
    case TFC_FLOAT: return key_f32(((const float *)x)[i]);
    case TFC_DOUBLE: return key_f64(((const double *)x)[i]);
    case TFC_HALF: return key_f32(tfc_half_to_float(((const tfc_half *)x)[i]));
    case TFC_BFLOAT16: return key_f32(tfc_bfloat16_to_float(((const tfc_bfloat16 *)x)[i]));
    case TFC_INT8: return (uint32_t)(int32_t)((const int8_t *)x)[i] ^ 0x80000000u;
    case TFC_UINT8: return ((const uint8_t *)x)[i];
    case TFC_INT16: return (uint32_t)(int32_t)((const int16_t *)x)[i] ^ 0x80000000u;
    case TFC_INT32: return (uint32_t)((const int32_t *)x)[i] ^ 0x80000000u;
    default: return (uint64_t)((const int64_t *)x)[i] ^ ((uint64_t)1 << 63);
    }
}

/* Selection and sorting of unique integer keys: quickselect / quicksort with median-of-three pivots and a
 * depth limit falling back to heapsort, so the worst case stays O(n log n). */
#define DEFINE_KEY_SORT(NAME, K)                                                                   \
    static inline void NAME##_swap(K *a, int64_t i, int64_t j) {                                   \
        K t = a[i];                                                                                \
        a[i] = a[j];                                                                               \
        a[j] = t;                                                                                  \
    }                                                                                              \
    static void NAME##_insertion(K *a, int64_t n) {                                                \
        for (int64_t i = 1; i < n; i++) {                                                          \
            K v = a[i];                                                                            \
            int64_t j = i;                                                                         \
            for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];                                    \
            a[j] = v;                                                                              \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_sift(K *a, int64_t i, int64_t n) {                                          \
        for (;;) {                                                                                 \
            int64_t c = 2 * i + 1;                                                                 \
            if (c >= n) return;                                                                    \
            if (c + 1 < n && a[c + 1] > a[c]) c++;                                                 \
            if (!(a[c] > a[i])) return;                                                            \
            NAME##_swap(a, i, c);                                                                  \
            i = c;                                                                                 \
        }                                                                                          \
    }                                                                                              \
    static void NAME##_heapsort(K *a, int64_t n) {                                                 \
        for (int64_t i = n / 2 - 1; i >= 0; i--) NAME##_sift(a, i, n);                             \
        for (int64_t e = n - 1; e > 0; e--) {                                                      \
            NAME##_swap(a, 0, e);                                                                  \
            NAME##_sift(a, 0, e);                                                                  \
        }                                                                                          \
    }                                                                                              \
    static int64_t NAME##_partition(K *a, int64_t lo, int64_t hi) {                                \
        int64_t mid = lo + (hi - lo) / 2;                                                          \
        if (a[mid] < a[lo]) NAME##_swap(a, lo, mid);                                               \
        if (a[hi] < a[lo]) NAME##_swap(a, lo, hi);                                                 \
        if (a[hi] < a[mid]) NAME##_swap(a, mid, hi);                                               \
        NAME##_swap(a, mid, hi);                                                                   \
        K p = a[hi];                                                                               \
        int64_t i = lo;                                                                            \
        for (int64_t j = lo; j < hi; j++)                                                          \
            if (a[j] < p) NAME##_swap(a, i++, j);                                                  \
        NAME##_swap(a, i, hi);                                                                     \
        return i;                                                                                  \
    }                                                                                              \
    static void NAME##_sort_rec(K *a, int64_t lo, int64_t hi, int depth) {                         \
        while (hi - lo > 16) {                                                                     \
            if (depth-- == 0) {                                                                    \
                NAME##_heapsort(a + lo, hi - lo + 1);                                              \
                return;                                                                            \
            }                                                                                      \
            int64_t p = NAME##_partition(a, lo, hi);                                               \
            if (p - lo < hi - p) {                                                                 \
                NAME##_sort_rec(a, lo, p - 1, depth);                                              \
                lo = p + 1;                                                                        \
            } else {                                                                               \
                NAME##_sort_rec(a, p + 1, hi, depth);                                              \
                hi = p - 1;                                                                        \
            }                                                                                      \
        }                                                                                          \
        if (hi > lo) NAME##_insertion(a + lo, hi - lo + 1);                                        \
    }                                                                                              \
    static void NAME##_sort(K *a, int64_t n) { NAME##_sort_rec(a, 0, n - 1, 2 * depth_limit(n)); } \
    /* Moves the k smallest keys to a[0, k) (any order); 0 < k < n. */                             \
    static void NAME##_select(K *a, int64_t n, int64_t k) {                                        \
        int64_t lo = 0, hi = n - 1;                                                                \
        int depth = 2 * depth_limit(n);                                                            \
        while (hi > lo) {                                                                          \
            if (depth-- == 0) {                                                                    \
                NAME##_sort(a + lo, hi - lo + 1);                                                  \
                return;                                                                            \
            }                                                                                      \
            int64_t p = NAME##_partition(a, lo, hi);                                               \
            if (p == k || p == k - 1) return;                                                      \
            if (p < k) lo = p + 1;                                                                 \
            else hi = p - 1;                                                                       \
        }                                                                                          \
    }

static int depth_limit(int64_t n) {
    int d = 1;
    while (n > 1) {
        n >>= 1;
        d++;
    }
    return d;
}

DEFINE_KEY_SORT(k64, uint64_t)
DEFINE_KEY_SORT(k128, u128)

/* One row: writes the positions of the k largest of x[0, n) to chosen (output order). buf holds
 * max(n, 2k + 64) composite keys. Small k: a candidate buffer with a rejection threshold (the worst kept
 * composite after the last compaction), so most elements cost one key and one compare; large k: keys of
 * the whole row, then selection. */
#define DEFINE_TOPK_ROW(NAME, T, KT, KP, SH, KEY)                                                   \
    static void NAME(const T *x, int64_t n, int64_t k, bool sorted, KT *buf, int64_t *chosen) {      \
        const KT mask = (((KT)1) << SH) - 1;                                                         \
        int64_t m = 0;                                                                               \
        if (k == 1) {                                                                                \
            KT best = ((KT)(~KEY(x[0])) << SH);                                                      \
            for (int64_t i = 1; i < n; i++) {                                                        \
                KT c = ((KT)(~KEY(x[i])) << SH) | (KT)i;                                             \
                if (c < best) best = c;                                                              \
            }                                                                                        \
            chosen[0] = (int64_t)(best & mask);                                                      \
            return;                                                                                  \
        }                                                                                            \
        if (k * 4 >= n) {                                                                            \
            for (int64_t i = 0; i < n; i++) buf[i] = ((KT)(~KEY(x[i])) << SH) | (KT)i;               \
            m = n;                                                                                   \
        } else {                                                                                     \
            int64_t cap = 2 * k + 64;                                                                \
            KT thr = ~(KT)0;                                                                         \
            for (int64_t i = 0; i < n; i++) {                                                        \
                KT c = ((KT)(~KEY(x[i])) << SH) | (KT)i;                                             \
                if (c < thr) {                                                                       \
                    buf[m++] = c;                                                                    \
                    if (m == cap) {                                                                  \
                        KP##_select(buf, m, k);                                                      \
                        m = k;                                                                       \
                        thr = buf[0];                                                                \
                        for (int64_t j = 1; j < k; j++)                                              \
                            if (buf[j] > thr) thr = buf[j];                                          \
                    }                                                                                \
                }                                                                                    \
            }                                                                                        \
        }                                                                                            \
        if (m > k) KP##_select(buf, m, k);                                                           \
        if (!sorted)                                                                                 \
            for (int64_t j = 0; j < k; j++) buf[j] &= mask; /* index order */                        \
        KP##_sort(buf, k);                                                                           \
        for (int64_t j = 0; j < k; j++) chosen[j] = (int64_t)(buf[j] & mask);                        \
    }

#define KEY_F32(v) key_f32(v)
#define KEY_HALF(v) key_f32(tfc_half_to_float(v))
#define KEY_BF16(v) key_f32(tfc_bfloat16_to_float(v))
#define KEY_I8(v) ((uint32_t)(int32_t)(v) ^ 0x80000000u)
#define KEY_U8(v) ((uint32_t)(v))
#define KEY_I64(v) ((uint64_t)(v) ^ ((uint64_t)1 << 63))

DEFINE_TOPK_ROW(row_f32, float, uint64_t, k64, 32, KEY_F32)
DEFINE_TOPK_ROW(row_half, tfc_half, uint64_t, k64, 32, KEY_HALF)
DEFINE_TOPK_ROW(row_bf16, tfc_bfloat16, uint64_t, k64, 32, KEY_BF16)
DEFINE_TOPK_ROW(row_i8, int8_t, uint64_t, k64, 32, KEY_I8)
DEFINE_TOPK_ROW(row_u8, uint8_t, uint64_t, k64, 32, KEY_U8)
DEFINE_TOPK_ROW(row_i16, int16_t, uint64_t, k64, 32, KEY_I8)
DEFINE_TOPK_ROW(row_i32, int32_t, uint64_t, k64, 32, KEY_I8)
DEFINE_TOPK_ROW(row_f64, double, u128, k128, 64, key_f64)
DEFINE_TOPK_ROW(row_i64, int64_t, u128, k128, 64, KEY_I64)

/* Rows longer than 2^32 with a 32-bit key: 128-bit composites, keys through the generic switch. */
static void row_generic_wide(tfc_dtype dt, const void *x, int64_t n, int64_t k, bool sorted, u128 *buf,
                             int64_t *chosen) {
    const u128 mask = ((u128)1 << 64) - 1;
    for (int64_t i = 0; i < n; i++) buf[i] = ((u128)~value_key(dt, x, i) << 64) | (u128)(uint64_t)i;
    if (k < n) k128_select(buf, n, k);
    if (!sorted)
        for (int64_t j = 0; j < k; j++) buf[j] &= mask;
    k128_sort(buf, k);
    for (int64_t j = 0; j < k; j++) chosen[j] = (int64_t)(uint64_t)(buf[j] & mask);
}

typedef struct topk_job {
    tfc_dtype dt, it;
    const char *x;
    char *values;
    void *indices;
    int64_t n, k;
    size_t esz;
    bool sorted, wide;
    bool failed;
} topk_job;

static inline void put_index(tfc_dtype it, void *p, int64_t i, int64_t v) {
    switch (it) {
    case TFC_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TFC_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = v;
    }
}

static void topk_rows(void *arg, int64_t begin, int64_t end) {
    topk_job *j = arg;
    int64_t n = j->n, k = j->k, nbuf = n > 2 * k + 64 ? n : 2 * k + 64;
    size_t ksz = j->wide ? sizeof(u128) : sizeof(uint64_t);
    char *scratch = tfc_malloc((size_t)nbuf * ksz + (size_t)k * sizeof(int64_t));
    if (!scratch) {
        __atomic_store_n(&j->failed, true, __ATOMIC_RELAXED);
        return;
    }
    void *buf = scratch;
    int64_t *chosen = (int64_t *)(scratch + (size_t)nbuf * ksz);
    for (int64_t r = begin; r < end; r++) {
        const char *row = j->x + (size_t)(r * n) * j->esz;
        if (j->wide && j->esz < 8) {
            row_generic_wide(j->dt, row, n, k, j->sorted, buf, chosen);
        } else {
            switch (j->dt) {
            case TFC_FLOAT: row_f32((const float *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_HALF: row_half((const tfc_half *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_BFLOAT16: row_bf16((const tfc_bfloat16 *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_INT8: row_i8((const int8_t *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_UINT8: row_u8((const uint8_t *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_INT16: row_i16((const int16_t *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_INT32: row_i32((const int32_t *)row, n, k, j->sorted, buf, chosen); break;
            case TFC_DOUBLE: row_f64((const double *)row, n, k, j->sorted, buf, chosen); break;
            default: row_i64((const int64_t *)row, n, k, j->sorted, buf, chosen); break;
            }
        }
        char *vout = j->values + (size_t)(r * k) * j->esz;
        for (int64_t i = 0; i < k; i++) {
            memcpy(vout + (size_t)i * j->esz, row + (size_t)chosen[i] * j->esz, j->esz);
            put_index(j->it, j->indices, r * k + i, chosen[i]);
        }
    }
    tfc_free(scratch);
}

bool tfc_k_top_k_v2(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    int64_t kk = 0;
    switch (k->in[1]->dtype) {
    case TFC_INT16: kk = *(const int16_t *)k->in[1]->data; break;
    case TFC_INT32: kk = *(const int32_t *)k->in[1]->data; break;
    default: kk = *(const int64_t *)k->in[1]->data;
    }
    int r = x->shape.rank;
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    int64_t n = x->shape.dims[r - 1];
    if (k->out[0]->num_elements == 0) return true;
    topk_job j = {.dt = x->dtype, .it = k->out[1]->dtype, .x = x->data, .values = k->out[0]->data,
                  .indices = k->out[1]->data, .n = n, .k = kk, .esz = tfc_dtype_size(x->dtype),
                  .sorted = tfc_attrs_bool(k->attrs, "sorted", true)};
    j.wide = j.esz == 8 || n > (int64_t)UINT32_MAX;
    int64_t rows = x->num_elements / n;
    tfc_parallel_for(k->pool, rows, n * 8, topk_rows, &j);
    if (j.failed) return tfc_status_oom(st, "TopKV2", (size_t)n * 16);
    return true;
}
