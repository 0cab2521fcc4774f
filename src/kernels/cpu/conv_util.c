/* Layout and dtype staging for the conv/pool kernels (see conv_internal.h). */
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/gemm_bf16.h"

tfc_dtype tfc_conv_compute_dtype(tfc_dtype dt) {
    return dt == TFC_FLOAT || dt == TFC_HALF || dt == TFC_BFLOAT16 ? TFC_FLOAT : TFC_DOUBLE;
}

int64_t tfc_conv_tile_rows(const tfc_conv_geom *g) {
    const int64_t K = g->k_h * g->k_w * g->in_c, row = g->out_w * K > 0 ? g->out_w * K : 1, rows = g->batch * g->out_h;
    int64_t tr = TFC_CONV_TILE_ELEMS / row;
    const int64_t min_rows = (TFC_CONV_TILE_MIN_M + g->out_w - 1) / (g->out_w > 0 ? g->out_w : 1);
    if (tr < min_rows) tr = min_rows;
    if (tr > TFC_CONV_TILE_MAX_ELEMS / row) tr = TFC_CONV_TILE_MAX_ELEMS / row;
    if (tr < 1) tr = 1;
    return tr < rows ? tr : rows;
}

/* ---- transpose [n, a, b] -> [n, b, a] in 32x32 tiles ---- */
typedef struct {
    const char *src;
    char *dst;
    int64_t a, b, a_blocks;
    size_t es;
} transpose_job;

#define TILE 32
#define TRANSPOSE_TILE(T)                                                                      \
    for (int64_t j0 = 0; j0 < j->b; j0 += TILE) {                                             \
        int64_t j1 = j0 + TILE < j->b ? j0 + TILE : j->b;                                      \
        for (int64_t i = i0; i < i1; i++) {                                                    \
            const T *s = (const T *)src + i * j->b;                                            \
            T *d = (T *)dst + i;                                                               \
            for (int64_t jj = j0; jj < j1; jj++) d[jj * j->a] = s[jj];                         \
        }                                                                                      \
    }

static void transpose_range(void *arg, int64_t begin, int64_t end) {
    const transpose_job *j = arg;
    for (int64_t u = begin; u < end; u++) {
        int64_t n = u / j->a_blocks, i0 = (u % j->a_blocks) * TILE, i1 = i0 + TILE < j->a ? i0 + TILE : j->a;
        const char *src = j->src + (size_t)(n * j->a * j->b) * j->es;
        char *dst = j->dst + (size_t)(n * j->a * j->b) * j->es;
        switch (j->es) {
        case 2: TRANSPOSE_TILE(uint16_t) break;
        case 4: TRANSPOSE_TILE(uint32_t) break;
        case 8: TRANSPOSE_TILE(uint64_t) break;
        default: TRANSPOSE_TILE(uint8_t) break;
        }
    }
}

void tfc_conv_transpose(tfc_threadpool *pool, const void *src, void *dst, int64_t n, int64_t a, int64_t b, size_t es) {
    if (n <= 0 || a <= 0 || b <= 0) return;
    if (a == 1 || b == 1) { /* a transpose with a unit dim is a copy */
        memcpy(dst, src, (size_t)(n * a * b) * es);
        return;
    }
    transpose_job j = {src, dst, a, b, (a + TILE - 1) / TILE, es};
    tfc_parallel_for(pool, n * j.a_blocks, TILE * b, transpose_range, &j);
}

/* ---- dtype conversion ---- */
typedef struct {
    const void *src;
    void *dst;
    tfc_dtype sdt, ddt;
} convert_job;

static void convert_range(void *arg, int64_t b, int64_t e) {
    const convert_job *j = arg;
    const bool lowp = j->sdt == TFC_HALF || j->sdt == TFC_BFLOAT16 || j->ddt == TFC_HALF || j->ddt == TFC_BFLOAT16;
    if (lowp && j->sdt == TFC_FLOAT) { /* F16C / AVX-512 where the CPU has them (gemm_bf16.h) */
        tfc_lowp_from_f32(j->ddt == TFC_HALF, (const float *)j->src + b, (uint16_t *)j->dst + b, e - b);
    } else if (lowp && j->ddt == TFC_FLOAT) {
        tfc_lowp_to_f32(j->sdt == TFC_HALF, (const uint16_t *)j->src + b, (float *)j->dst + b, e - b);
    } else if (j->sdt == TFC_INT32 && j->ddt == TFC_DOUBLE) {
        const int32_t *s = j->src;
        double *d = j->dst;
        for (int64_t i = b; i < e; i++) d[i] = s[i];
    } else {
        for (int64_t i = b; i < e; i++) tfc_dtype_set_f64(j->ddt, j->dst, i, tfc_dtype_get_f64(j->sdt, j->src, i));
    }
}

void tfc_conv_convert(tfc_threadpool *pool, const void *src, tfc_dtype sdt, void *dst, tfc_dtype ddt, int64_t n) {
    if (n <= 0) return;
    if (sdt == ddt) {
        memcpy(dst, src, (size_t)n * tfc_dtype_size(sdt));
        return;
    }
    convert_job j = {src, dst, sdt, ddt};
    tfc_parallel_for(pool, n, 8, convert_range, &j);
}

typedef struct {
    char *p;
    size_t n;
} zero_job;
#define ZERO_CHUNK ((int64_t)1 << 16)
static void zero_range(void *arg, int64_t b, int64_t e) {
    const zero_job *j = arg;
    size_t lo = (size_t)b * ZERO_CHUNK, hi = (size_t)e * ZERO_CHUNK;
    if (hi > j->n) hi = j->n;
    memset(j->p + lo, 0, hi - lo);
}

void tfc_conv_zero(tfc_threadpool *pool, void *p, size_t n) {
    if (!n) return;
    zero_job j = {p, n};
    tfc_parallel_for(pool, (int64_t)((n + ZERO_CHUNK - 1) / ZERO_CHUNK), ZERO_CHUNK / 4, zero_range, &j);
}

/* ---- staging ---- */
static void *scratch(size_t bytes, tfc_status *st) {
    void *p = tfc_aligned_alloc(bytes);
    if (!p) tfc_status_oom(st, "conv scratch", bytes);
    return p;
}

/* [N, C, H, W] of a 4-D tensor in NCHW. */
static void nchw_dims(const tfc_tensor *t, int64_t *n, int64_t *c, int64_t *hw) {
    *n = t->shape.dims[0];
    *c = t->shape.dims[1];
    *hw = tfc_dims_product(t->shape.dims, 2, 4);
}

void tfc_conv_release(conv_buf *b) {
    if (b->owned) tfc_aligned_free(b->data);
    b->data = NULL;
    b->owned = false;
}

bool tfc_conv_load(tfc_kernel_ctx *k, const tfc_tensor *t, tfc_dtype ct, bool nchw, conv_buf *b, tfc_status *st) {
    b->data = t->data;
    b->owned = false;
    int64_t ne = t->num_elements;
    if (t->dtype == ct && !nchw) return true;
    size_t es = tfc_dtype_size(t->dtype), cs = tfc_dtype_size(ct);
    const void *src = t->data;
    void *tmp = NULL;
    if (nchw) {
        int64_t n, c, hw;
        nchw_dims(t, &n, &c, &hw);
        if (!(tmp = scratch((size_t)ne * es, st))) return false;
        tfc_conv_transpose(k->pool, src, tmp, n, c, hw, es);
        src = tmp;
        if (t->dtype == ct) {
            b->data = tmp;
            b->owned = true;
            return true;
        }
    }
    void *d = scratch((size_t)ne * cs, st);
    if (!d) {
        tfc_aligned_free(tmp);
        return false;
    }
    tfc_conv_convert(k->pool, src, t->dtype, d, ct, ne);
    tfc_aligned_free(tmp);
    b->data = d;
    b->owned = true;
    return true;
}

bool tfc_conv_out(const tfc_tensor *out, tfc_dtype ct, bool nchw, conv_buf *b, tfc_status *st) {
    b->owned = false;
    b->data = out->data;
    if (out->dtype == ct && !nchw) return true;
    if (!(b->data = scratch((size_t)out->num_elements * tfc_dtype_size(ct), st))) return false;
    b->owned = true;
    return true;
}

bool tfc_conv_store(tfc_kernel_ctx *k, conv_buf *b, tfc_tensor *out, tfc_dtype ct, bool nchw, tfc_status *st) {
    if (!b->owned) return true;
    int64_t ne = out->num_elements;
    if (!nchw) {
        tfc_conv_convert(k->pool, b->data, ct, out->data, out->dtype, ne);
        tfc_conv_release(b);
        return true;
    }
    /* out is [N, C, H, W]; b holds [N, H, W, C] */
    int64_t n, c, hw;
    nchw_dims(out, &n, &c, &hw);
    if (out->dtype == ct) {
        tfc_conv_transpose(k->pool, b->data, out->data, n, hw, c, tfc_dtype_size(ct));
    } else {
        void *tmp = scratch((size_t)ne * tfc_dtype_size(out->dtype), st);
        if (!tmp) {
            tfc_conv_release(b);
            return false;
        }
        tfc_conv_convert(k->pool, b->data, ct, tmp, out->dtype, ne);
        tfc_conv_transpose(k->pool, tmp, out->data, n, hw, c, tfc_dtype_size(out->dtype));
        tfc_aligned_free(tmp);
    }
    tfc_conv_release(b);
    return true;
}
