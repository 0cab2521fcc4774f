/* Range, Where and ReverseV2 kernels (registered in indexing.c). */
#include <string.h>

#include "kernels/cpu/kernels.h"

bool tfc_k_range(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_where(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_reverse_v2(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_indexing_ensure_outputs(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_range_size(const char *op, tfc_dtype dt, const tfc_tensor *start, const tfc_tensor *limit,
                    const tfc_tensor *delta, int64_t *size, tfc_status *st);

/* ================================================================================================
 * Range: out[i] = start + i * delta, computed as TensorFlow does (integers exactly, with wrap-free unsigned
 * arithmetic; floats in the dtype; half and bfloat16 in float, rounded once).
 * ================================================================================================ */

bool tfc_k_range(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *a = k->in[0], *d = k->in[2];
    tfc_dtype dt = a->dtype;
    tfc_tensor *out = k->out[0];
    if (!out) {
        int64_t n;
        if (!tfc_range_size(k->op->name, dt, a, k->in[1], d, &n, st) || !(out = tfc_kernel_alloc_output(k, 0, &n, 1, st)))
            return false;
    }
    int64_t n = out->num_elements;
    switch (dt) {
    case TFC_FLOAT: {
        float s = *(const float *)a->data, dl = *(const float *)d->data, *o = out->data;
        for (int64_t i = 0; i < n; i++) o[i] = s + (float)i * dl;
        break;
    }
    case TFC_DOUBLE: {
        double s = *(const double *)a->data, dl = *(const double *)d->data, *o = out->data;
        for (int64_t i = 0; i < n; i++) o[i] = s + (double)i * dl;
        break;
    }
    case TFC_HALF: case TFC_BFLOAT16: {
        float s = (float)tfc_dtype_get_f64(dt, a->data, 0), dl = (float)tfc_dtype_get_f64(dt, d->data, 0);
        for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dt, out->data, i, s + (float)i * dl);
        break;
    }
    case TFC_INT64: case TFC_INT32: case TFC_INT16: case TFC_INT8: {
        int64_t s = (int64_t)tfc_dtype_get_f64(dt, a->data, 0), dl = (int64_t)tfc_dtype_get_f64(dt, d->data, 0);
        if (dt == TFC_INT64) {
            s = *(const int64_t *)a->data;
            dl = *(const int64_t *)d->data;
            int64_t *o = out->data;
            for (int64_t i = 0; i < n; i++) o[i] = (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)dl);
        } else if (dt == TFC_INT32) {
            int32_t *o = out->data;
            for (int64_t i = 0; i < n; i++) o[i] = (int32_t)(s + i * dl);
        } else {
            for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(dt, out->data, i, (double)(s + i * dl));
        }
        break;
    }
    default: return tfc_kernel_unimplemented(k, dt, st);
    }
    return true;
}

/* ================================================================================================
 * Where: coordinates of the non-zero elements, row-major. Chunks are counted in parallel, then each chunk
 * writes its coordinates at its prefix-sum position.
 * ================================================================================================ */

#define WHERE_CHUNKS 64

typedef struct where_job {
    tfc_dtype dt;
    const void *x;
    int64_t n, chunk;
    int rank;
    const int64_t *dims;
    int64_t counts[WHERE_CHUNKS + 1];
    int64_t *out;
} where_job;

static inline bool nonzero(tfc_dtype dt, const void *x, int64_t i) {
    switch (dt) {
    case TFC_FLOAT: return ((const float *)x)[i] != 0;
    case TFC_DOUBLE: return ((const double *)x)[i] != 0;
    case TFC_HALF: case TFC_BFLOAT16: return (((const uint16_t *)x)[i] & 0x7fff) != 0;
    case TFC_INT64: return ((const int64_t *)x)[i] != 0;
    case TFC_INT32: return ((const int32_t *)x)[i] != 0;
    case TFC_INT16: return ((const int16_t *)x)[i] != 0;
    default: return ((const uint8_t *)x)[i] != 0; /* int8, uint8, bool */
    }
}

#define WHERE_COUNT(T, TEST)                                          \
    do {                                                              \
        const T *x = j->x;                                            \
        for (int64_t i = lo; i < hi; i++) cnt += TEST(x[i]) ? 1 : 0;  \
    } while (0)
#define NZ(v) ((v) != 0)

static void where_count(void *arg, int64_t begin, int64_t end) {
    where_job *j = arg;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n, cnt = 0;
        switch (j->dt) {
        case TFC_FLOAT: WHERE_COUNT(float, NZ); break;
        case TFC_DOUBLE: WHERE_COUNT(double, NZ); break;
        case TFC_INT32: WHERE_COUNT(int32_t, NZ); break;
        case TFC_INT64: WHERE_COUNT(int64_t, NZ); break;
        case TFC_BOOL: case TFC_UINT8: case TFC_INT8: WHERE_COUNT(uint8_t, NZ); break;
        default:
            for (int64_t i = lo; i < hi; i++) cnt += nonzero(j->dt, j->x, i);
        }
        j->counts[c + 1] = cnt;
    }
}

static void where_fill(void *arg, int64_t begin, int64_t end) {
    where_job *j = arg;
    for (int64_t c = begin; c < end; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        if (lo >= hi) continue;
        int64_t coord[TFC_MAX_RANK], rem = lo;
        for (int d = j->rank - 1; d >= 0; d--) {
            coord[d] = rem % j->dims[d];
            rem /= j->dims[d];
        }
        int64_t *o = j->out + j->counts[c] * j->rank;
        for (int64_t i = lo; i < hi; i++) {
            if (nonzero(j->dt, j->x, i)) {
                memcpy(o, coord, (size_t)j->rank * sizeof *o);
                o += j->rank;
            }
            for (int d = j->rank - 1; d >= 0 && ++coord[d] == j->dims[d]; d--) coord[d] = 0;
        }
    }
}

bool tfc_k_where(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    where_job j = {.dt = x->dtype, .x = x->data, .n = x->num_elements, .rank = x->shape.rank, .dims = x->shape.dims};
    int64_t chunks = j.n < WHERE_CHUNKS ? (j.n ? j.n : 1) : WHERE_CHUNKS;
    j.chunk = (j.n + chunks - 1) / chunks;
    if (!j.chunk) j.chunk = 1;
    chunks = j.n ? (j.n + j.chunk - 1) / j.chunk : 0;
    j.counts[0] = 0;
    tfc_parallel_for(k->pool, chunks, j.chunk, where_count, &j);
    for (int64_t c = 0; c < chunks; c++) j.counts[c + 1] += j.counts[c];
    int64_t dims[2] = {j.counts[chunks], j.rank};
    tfc_tensor *out = tfc_kernel_alloc_output(k, 0, dims, 2, st);
    if (!out) return false;
    j.out = out->data;
    if (dims[0]) tfc_parallel_for(k->pool, chunks, j.chunk, where_fill, &j);
    return true;
}

/* ================================================================================================
 * ReverseV2: adjacent dims with the same reversal flag are merged; rows over all but the innermost merged
 * dim are copied (reversed element-wise when the innermost dim is reversed).
 * ================================================================================================ */

typedef struct reverse_job {
    const char *src;
    char *dst;
    size_t esz;
    int rank;                    /* merged */
    int64_t dims[TFC_MAX_RANK];
    int64_t strides[TFC_MAX_RANK]; /* in elements */
    bool rev[TFC_MAX_RANK];
    bool strings;
    tfc_status *st;
    bool failed;
} reverse_job;

#define REV_INNER(T)                                                          \
    do {                                                                      \
        const T *s = (const T *)src;                                          \
        T *d = (T *)dst;                                                      \
        for (int64_t i = 0; i < inner; i++) d[i] = s[inner - 1 - i];          \
    } while (0)

static void reverse_rows(void *arg, int64_t begin, int64_t end) {
    reverse_job *j = arg;
    int last = j->rank - 1;
    int64_t inner = j->dims[last];
    for (int64_t r = begin; r < end; r++) {
        int64_t rem = r, off = 0;
        for (int d = last - 1; d >= 0; d--) {
            int64_t c = rem % j->dims[d];
            rem /= j->dims[d];
            off += (j->rev[d] ? j->dims[d] - 1 - c : c) * j->strides[d];
        }
        const char *src = j->src + (size_t)off * j->esz;
        char *dst = j->dst + (size_t)(r * inner) * j->esz;
        if (j->strings) {
            const tfc_tstring *s = (const tfc_tstring *)src;
            tfc_tstring *d = (tfc_tstring *)dst;
            for (int64_t i = 0; i < inner && !j->failed; i++)
                if (!tfc_tstring_assign(&d[i], &s[j->rev[last] ? inner - 1 - i : i], j->st)) j->failed = true;
        } else if (!j->rev[last]) {
            memcpy(dst, src, (size_t)inner * j->esz);
        } else {
            switch (j->esz) {
            case 1: REV_INNER(uint8_t); break;
            case 2: REV_INNER(uint16_t); break;
            case 4: REV_INNER(uint32_t); break;
            case 8: REV_INNER(uint64_t); break;
            default:
                for (int64_t i = 0; i < inner; i++) memcpy(dst + (size_t)i * j->esz, src + (size_t)(inner - 1 - i) * j->esz, j->esz);
            }
        }
    }
}

bool tfc_k_reverse_v2(tfc_kernel_ctx *k, tfc_status *st) {
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    const tfc_tensor *x = k->in[0], *axis = k->in[1];
    int r = x->shape.rank;
    if (r == 0 || x->num_elements == 0) return tfc_kernel_forward_input(k, 0, 0, NULL, st);
    bool flag[TFC_MAX_RANK] = {0};
    for (int64_t i = 0; i < axis->num_elements; i++) {
        int64_t a = axis->dtype == TFC_INT64 ? ((const int64_t *)axis->data)[i] : ((const int32_t *)axis->data)[i];
        flag[a < 0 ? a + r : a] = true;
    }
    reverse_job j = {.src = x->data, .dst = k->out[0]->data, .esz = tfc_dtype_size(x->dtype),
                     .strings = x->dtype == TFC_STRING, .st = st};
    /* Merge dims: size-1 dims take any flag; equal neighbours fuse. */
    for (int d = 0; d < r; d++) {
        int64_t n = x->shape.dims[d];
        bool f = flag[d] && n > 1;
        if (n == 1) continue;
        if (j.rank > 0 && j.rev[j.rank - 1] == f) {
            j.dims[j.rank - 1] *= n; /* size-ok: x is not empty, so a product of its dims is <= its size */
        } else {
            j.dims[j.rank] = n;
            j.rev[j.rank++] = f;
        }
    }
    int64_t s = 1;
    for (int d = j.rank - 1; d >= 0; d--) {
        j.strides[d] = s;
        s *= j.dims[d]; /* size-ok: as above */
    }
    bool any = false;
    for (int d = 0; d < j.rank; d++) any |= j.rev[d];
    if (!any) return tfc_kernel_forward_input(k, 0, 0, NULL, st);
    int64_t rows = x->num_elements / j.dims[j.rank - 1];
    if (j.strings) reverse_rows(&j, 0, rows);
    else tfc_parallel_for(k->pool, rows, j.dims[j.rank - 1], reverse_rows, &j);
    return !j.failed;
}
