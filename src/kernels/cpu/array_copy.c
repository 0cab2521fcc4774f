/* The strided block copy engine (see array_copy.h). */
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/array_copy.h"

#define TILE 32 /* transpose tile edge: 2 x 32 cache lines stay in L1 */

typedef struct {
    int rank;
    int64_t dims[TFC_COPY_MAX_RANK], ss[TFC_COPY_MAX_RANK], ds[TFC_COPY_MAX_RANK];
    const char *src;
    char *dst;
    size_t es;
    /* outer dims walked row by row (all but the inner one, and but `tk` when transposing) */
    int n_outer, outer[TFC_COPY_MAX_RANK];
    int inner;        /* innermost dim (dst-contiguous for transposes) */
    int tk;           /* transpose: the dim contiguous in src, else -1 */
    int64_t tiles;    /* transpose: tiles along tk */
} plan;

void tfc_array_strides(const tfc_shape *s, int64_t *strides) { tfc_dims_strides(s->dims, s->rank, strides); }

/* Offsets of outer row r (row-major over p->outer) and the index vector, to continue with next_row. */
static void row_start(const plan *p, int64_t r, int64_t *idx, int64_t *so, int64_t *dof) {
    *so = *dof = 0;
    for (int k = p->n_outer - 1; k >= 0; k--) {
        int d = p->outer[k];
        idx[k] = r % p->dims[d];
        r /= p->dims[d];
        *so += idx[k] * p->ss[d];
        *dof += idx[k] * p->ds[d];
    }
}

static inline void next_row(const plan *p, int64_t *idx, int64_t *so, int64_t *dof) {
    for (int k = p->n_outer - 1; k >= 0; k--) {
        int d = p->outer[k];
        *so += p->ss[d];
        *dof += p->ds[d];
        if (++idx[k] < p->dims[d]) return;
        *so -= p->ss[d] * p->dims[d];   /* size-ok: the offsets this walk just added, dims[d] times */
        *dof -= p->ds[d] * p->dims[d];  /* size-ok: as above */
        idx[k] = 0;
    }
}

/* One row of n elements: typed strided loops (the compiler vectorises the unit-stride cases). */
#define ROW_LOOP(T)                                                                          \
    do {                                                                                     \
        const T *s = (const T *)src;                                                         \
        T *d = (T *)dst;                                                                     \
        if (dsi == 1 && ssi == 0) {                                                          \
            T v = s[0];                                                                      \
            for (int64_t j = 0; j < n; j++) d[j] = v;                                        \
        } else if (dsi == 1 && ssi == -1) {                                                  \
            for (int64_t j = 0; j < n; j++) d[j] = s[-j];                                    \
        } else if (dsi == 1) {                                                               \
            for (int64_t j = 0; j < n; j++) d[j] = s[j * ssi];                               \
        } else if (ssi == 1) {                                                               \
            for (int64_t j = 0; j < n; j++) d[j * dsi] = s[j];                               \
        } else {                                                                             \
            for (int64_t j = 0; j < n; j++) d[j * dsi] = s[j * ssi];                         \
        }                                                                                    \
    } while (0)

static void copy_row(size_t es, const char *src, int64_t ssi, char *dst, int64_t dsi, int64_t n) {
    if (ssi == 1 && dsi == 1) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: ROW_LOOP(uint8_t); break;
    case 2: ROW_LOOP(uint16_t); break;
    case 4: ROW_LOOP(uint32_t); break;
    case 8: ROW_LOOP(uint64_t); break;
    default:
        for (int64_t j = 0; j < n; j++) memcpy(dst + j * dsi * (int64_t)es, src + j * ssi * (int64_t)es, es);
    }
}

static void rows_fn(void *arg, int64_t begin, int64_t end) {
    const plan *p = arg;
    int64_t idx[TFC_COPY_MAX_RANK], so, dof;
    row_start(p, begin, idx, &so, &dof);
    int64_t n = p->dims[p->inner], ssi = p->ss[p->inner], dsi = p->ds[p->inner];
    int64_t es = (int64_t)p->es;
    for (int64_t r = begin; r < end; r++) {
        copy_row(p->es, p->src + so * es, ssi, p->dst + dof * es, dsi, n);
        next_row(p, idx, &so, &dof);
    }
}

/* A TILE x TILE block of a 2-D transpose: dst[i * dk + j] = src[i + j * sl]. */
#define TILE_LOOP(T)                                                                         \
    do {                                                                                     \
        const T *s = (const T *)src;                                                         \
        T *d = (T *)dst;                                                                     \
        for (int64_t i = 0; i < ni; i++)                                                     \
            for (int64_t j = 0; j < nj; j++) d[i * dk + j] = s[i + j * sl];                  \
    } while (0)

static void copy_tile(size_t es, const char *src, int64_t sl, char *dst, int64_t dk, int64_t ni, int64_t nj) {
    switch (es) {
    case 1: TILE_LOOP(uint8_t); break;
    case 2: TILE_LOOP(uint16_t); break;
    case 4: TILE_LOOP(uint32_t); break;
    case 8: TILE_LOOP(uint64_t); break;
    default:
        for (int64_t i = 0; i < ni; i++)
            for (int64_t j = 0; j < nj; j++)
                memcpy(dst + (i * dk + j) * (int64_t)es, src + (i + j * sl) * (int64_t)es, es);
    }
}

/* Work unit u = (outer row, strip of TILE indices along tk); each strip walks all tiles of the inner dim. */
static void transpose_fn(void *arg, int64_t begin, int64_t end) {
    const plan *p = arg;
    int64_t idx[TFC_COPY_MAX_RANK], so, dof, es = (int64_t)p->es;
    int64_t nk = p->dims[p->tk], nl = p->dims[p->inner];
    int64_t dk = p->ds[p->tk], sl = p->ss[p->inner];
    int64_t row = begin / p->tiles, strip = begin % p->tiles;
    row_start(p, row, idx, &so, &dof);
    for (int64_t u = begin; u < end; u++) {
        int64_t i0 = strip * TILE, ni = nk - i0 < TILE ? nk - i0 : TILE;
        for (int64_t j0 = 0; j0 < nl; j0 += TILE) {
            int64_t nj = nl - j0 < TILE ? nl - j0 : TILE;
            copy_tile(p->es, p->src + (so + i0 + j0 * sl) * es, sl, p->dst + (dof + i0 * dk + j0) * es, dk, ni, nj);
        }
        if (++strip == p->tiles) {
            strip = 0;
            next_row(p, idx, &so, &dof);
        }
    }
}

static bool copy_strings(const plan *p, tfc_status *st) {
    int64_t idx[TFC_COPY_MAX_RANK], so, dof, rows = 1;
    for (int k = 0; k < p->n_outer; k++) rows *= p->dims[p->outer[k]]; /* size-ok: <= the block's count */
    row_start(p, 0, idx, &so, &dof);
    const tfc_tstring *s = (const tfc_tstring *)p->src;
    tfc_tstring *d = (tfc_tstring *)p->dst;
    int64_t n = p->dims[p->inner], ssi = p->ss[p->inner], dsi = p->ds[p->inner];
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < n; j++)
            if (!tfc_tstring_assign(&d[dof + j * dsi], &s[so + j * ssi], st)) return false;
        next_row(p, idx, &so, &dof);
    }
    return true;
}

bool tfc_array_copy(tfc_threadpool *pool, tfc_dtype dt, const void *src, int64_t src_off, const int64_t *src_strides,
                    void *dst, int64_t dst_off, const int64_t *dst_strides, const int64_t *dims, int rank,
                    tfc_status *st) {
    plan p = {.es = tfc_dtype_size(dt), .tk = -1};
    /* An empty block copies nothing, and its offsets and strides may be meaningless (see size_check.h). */
    for (int i = 0; i < rank; i++)
        if (dims[i] == 0) return true;
    p.src = (const char *)src + src_off * (int64_t)p.es;
    p.dst = (char *)dst + dst_off * (int64_t)p.es;
    /* Drop unit dims. */
    for (int i = 0; i < rank; i++) {
        if (dims[i] == 1) continue;
        p.dims[p.rank] = dims[i];
        p.ss[p.rank] = src_strides[i];
        p.ds[p.rank] = dst_strides[i];
        p.rank++;
    }
    /* Merge dims that are contiguous with their inner neighbour in both src and dst. */
    int r = 0;
    for (int i = 0; i < p.rank; i++) {
        int64_t sspan, dspan; /* signed strides: a reversed StridedSlice walks backwards */
        if (r > 0 && !__builtin_mul_overflow(p.ss[i], p.dims[i], &sspan) && p.ss[r - 1] == sspan &&
            !__builtin_mul_overflow(p.ds[i], p.dims[i], &dspan) && p.ds[r - 1] == dspan) {
            p.dims[r - 1] *= p.dims[i]; /* size-ok: a non-empty block's dims multiply to its count */
            p.ss[r - 1] = p.ss[i];
            p.ds[r - 1] = p.ds[i];
            continue;
        }
        p.dims[r] = p.dims[i];
        p.ss[r] = p.ss[i];
        p.ds[r] = p.ds[i];
        r++;
    }
    p.rank = r;
    if (p.rank == 0) { /* a single element */
        p.dims[0] = 1;
        p.ss[0] = p.ds[0] = 1;
        p.rank = 1;
    }
    p.inner = p.rank - 1;
    if (dt == TFC_STRING) {
        for (int i = 0; i < p.inner; i++) p.outer[p.n_outer++] = i;
        return copy_strings(&p, st);
    }
    /* Transpose: the innermost dst dim is strided in src while another dim is contiguous in src. */
    if (p.ds[p.inner] == 1 && p.ss[p.inner] != 1 && p.ss[p.inner] != 0) {
        for (int i = 0; i < p.inner; i++)
            if (p.ss[i] == 1) p.tk = i;
    }
    for (int i = 0; i < p.inner; i++)
        if (i != p.tk) p.outer[p.n_outer++] = i;
    int64_t rows = 1;
    for (int k = 0; k < p.n_outer; k++) rows *= p.dims[p.outer[k]]; /* size-ok: <= the block's count */
    int64_t row_bytes = p.dims[p.inner] * (int64_t)p.es; /* size-ok: one row of a destination that exists */
    if (p.tk >= 0) {
        p.tiles = (p.dims[p.tk] + TILE - 1) / TILE;
        tfc_parallel_for(pool, rows * p.tiles, TILE * row_bytes / 4 + 1, transpose_fn, &p);
    } else {
        tfc_parallel_for(pool, rows, (p.ss[p.inner] == 1 ? row_bytes / 8 : row_bytes / 2) + 8, rows_fn, &p);
    }
    return true;
}

typedef struct {
    size_t es;
    char *dst;
    const void *value;
} fill_job;

#define FILL_LOOP(T)                                                                         \
    do {                                                                                     \
        T v;                                                                                 \
        memcpy(&v, j->value, sizeof v);                                                      \
        T *d = (T *)j->dst;                                                                  \
        for (int64_t i = begin; i < end; i++) d[i] = v;                                      \
    } while (0)

static void fill_fn(void *arg, int64_t begin, int64_t end) {
    const fill_job *j = arg;
    switch (j->es) {
    case 1: memset(j->dst + begin, *(const uint8_t *)j->value, (size_t)(end - begin)); break;
    case 2: FILL_LOOP(uint16_t); break;
    case 4: FILL_LOOP(uint32_t); break;
    case 8: FILL_LOOP(uint64_t); break;
    default:
        for (int64_t i = begin; i < end; i++) memcpy(j->dst + i * (int64_t)j->es, j->value, j->es);
    }
}

bool tfc_array_fill(tfc_threadpool *pool, tfc_dtype dt, void *dst, int64_t n, const void *value, tfc_status *st) {
    if (dt == TFC_STRING) {
        tfc_tstring *d = dst;
        for (int64_t i = 0; i < n; i++)
            if (!tfc_tstring_assign(&d[i], value, st)) return false;
        return true;
    }
    fill_job j = {.es = tfc_dtype_size(dt), .dst = dst, .value = value};
    tfc_parallel_for(pool, n, (int64_t)j.es / 4 + 1, fill_fn, &j);
    return true;
}
