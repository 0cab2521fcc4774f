/* Indexing kernels: GatherV2, GatherNd, ScatterNd, UnsortedSegmentSum, OneHot, Cumsum (this file); Range,
 * Where, ReverseV2 (indexing_misc.c); TopKV2 (indexing_topk.c).
 *
 * Gathers are byte copies (dtype-agnostic except strings, which are deep-copied element by element).
 * Accumulating kernels (ScatterNd, UnsortedSegmentSum, Cumsum) add in the dtype itself as TensorFlow does:
 * integers wrap, half and bfloat16 round after every addition, bool adds as logical or, strings concatenate.
 * Indices are validated in a first pass, so the first bad index in row-major order is the one reported. */
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/kernels.h"

bool tfc_k_range(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_where(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_reverse_v2(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_top_k_v2(tfc_kernel_ctx *k, tfc_status *st);
void tfc_index_pos_str(const int64_t *dims, int rank, int64_t flat, char *buf, size_t size);
bool tfc_indexing_ensure_outputs(tfc_kernel_ctx *k, tfc_status *st);

/* ---- shared helpers ---------------------------------------------------------------------------------- */

static inline int64_t idx_at(const void *p, tfc_dtype dt, int64_t i) {
    switch (dt) {
    case TFC_INT64: return ((const int64_t *)p)[i];
    case TFC_INT32: return ((const int32_t *)p)[i];
    case TFC_INT16: return ((const int16_t *)p)[i];
    case TFC_INT8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static inline int64_t prod_dims(const int64_t *d, int lo, int hi) { return tfc_dims_product(d, lo, hi); }

/* Outputs the framework could not preallocate (a graph shape function ran without input values) are
 * allocated here after running the op's shape function on the concrete inputs, which also validates them. */
bool tfc_indexing_ensure_outputs(tfc_kernel_ctx *k, tfc_status *st) {
    bool missing = false;
    for (int i = 0; i < k->n_out; i++) missing |= k->out[i] == NULL;
    if (!missing) return true;
    tfc_shape in_shapes[8], out_shapes[4];
    tfc_dtype in_dtypes[8], out_dtypes[4];
    if (k->n_in > 8 || k->n_out > 4) return tfc_status_set(st, TFC_INTERNAL, "%s: too many inputs", k->op->name);
    for (int i = 0; i < k->n_in; i++) {
        in_shapes[i] = k->in[i]->shape;
        in_dtypes[i] = k->in[i]->dtype;
    }
    for (int i = 0; i < k->n_out; i++) out_shapes[i].rank = -1;
    tfc_shape_ctx c = {.op = k->op, .attrs = k->attrs, .n_in = k->n_in, .in_shapes = in_shapes, .in_dtypes = in_dtypes,
                       .in_values = k->in, .n_out = k->n_out, .out_shapes = out_shapes, .out_dtypes = out_dtypes};
    if (!k->op->shape(&c, st)) return false;
    for (int i = 0; i < k->n_out; i++) {
        if (k->out[i]) continue;
        if (!tfc_shape_is_fully_defined(&out_shapes[i]))
            return tfc_status_set(st, TFC_INTERNAL, "%s: output %d shape unknown with known inputs", k->op->name, i);
        if (!tfc_kernel_alloc_output(k, i, out_shapes[i].dims, out_shapes[i].rank, st)) return false;
    }
    return true;
}

/* Copies one slice of `bytes` bytes; fixed small sizes avoid a memcpy call per element. */
static inline void copy_bytes(char *dst, const char *src, size_t bytes) {
    switch (bytes) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, bytes);
    }
}

static bool copy_strings(tfc_tstring *dst, const tfc_tstring *src, int64_t n, tfc_status *st) {
    for (int64_t i = 0; i < n; i++)
        if (!tfc_tstring_assign(&dst[i], &src[i], st)) return false;
    return true;
}

/* Appends src to dst (ScatterNd's "add" for strings). */
static bool append_string(tfc_tstring *dst, const tfc_tstring *src, tfc_status *st) {
    size_t a = tfc_tstring_size(dst), b = tfc_tstring_size(src);
    if (!b) return true;
    char *p = tfc_tstring_resize(dst, a + b);
    if (!p) return tfc_status_oom(st, "string", a + b);
    memcpy(p + a, tfc_tstring_data(src), b);
    return true;
}

/* Per-dtype addition with TensorFlow's semantics (no signed-overflow UB). */
#define ADD_PLAIN(a, b) ((a) + (b))
#define ADD_I8(a, b) ((int8_t)(uint8_t)((uint8_t)(a) + (uint8_t)(b)))
#define ADD_U8(a, b) ((uint8_t)((a) + (b)))
#define ADD_I16(a, b) ((int16_t)(uint16_t)((uint16_t)(a) + (uint16_t)(b)))
#define ADD_I32(a, b) ((int32_t)((uint32_t)(a) + (uint32_t)(b)))
#define ADD_I64(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define ADD_HALF(a, b) tfc_half_from_float(tfc_half_to_float(a) + tfc_half_to_float(b))
#define ADD_BF16(a, b) tfc_bfloat16_from_float(tfc_bfloat16_to_float(a) + tfc_bfloat16_to_float(b))
#define ADD_BOOL(a, b) ((uint8_t)((a) | (b)))

/* Expands M(T, ADD) for the numeric dtypes (and bool when with_bool); DEFAULT otherwise. */
#define SUM_SWITCH(dt, M, DEFAULT)                                 \
    switch (dt) {                                                  \
    case TFC_FLOAT: M(float, ADD_PLAIN); break;                    \
    case TFC_DOUBLE: M(double, ADD_PLAIN); break;                  \
    case TFC_INT8: M(int8_t, ADD_I8); break;                       \
    case TFC_UINT8: M(uint8_t, ADD_U8); break;                     \
    case TFC_INT16: M(int16_t, ADD_I16); break;                    \
    case TFC_INT32: M(int32_t, ADD_I32); break;                    \
    case TFC_INT64: M(int64_t, ADD_I64); break;                    \
    case TFC_HALF: M(tfc_half, ADD_HALF); break;                   \
    case TFC_BFLOAT16: M(tfc_bfloat16, ADD_BF16); break;           \
    case TFC_BOOL: M(uint8_t, ADD_BOOL); break;                    \
    default: DEFAULT;                                              \
    }

static bool bad_index_policy_ignore(const tfc_kernel_ctx *k) {
    const char *p = tfc_attrs_string(k->attrs, "bad_indices_policy", "");
    return p && !strcmp(p, "IGNORE");
}

/* ================================================================================================
 * GatherV2: output [B, O, N, S] from params [B, O, G, S] and indices [B, N] (batch, outer, gathered, inner).
 * ================================================================================================ */

typedef struct gather_job {
    const char *src;
    char *dst;
    const void *idx;
    tfc_dtype idt;
    int64_t O, G, N;
    size_t slice; /* bytes */
} gather_job;

#define GATHER_LOOP(COPY)                                                                     \
    do {                                                                                      \
        for (int64_t r = begin; r < end; r++) {                                               \
            int64_t i = idx_at(j->idx, j->idt, b * j->N + n);                                 \
            COPY(r, (b * j->O + o) * j->G + i);                                               \
            if (++n == j->N) {                                                                \
                n = 0;                                                                        \
                if (++o == j->O) o = 0, b++;                                                  \
            }                                                                                 \
        }                                                                                     \
    } while (0)
#define COPY_U32(r, s) ((uint32_t *)j->dst)[r] = ((const uint32_t *)j->src)[s]
#define COPY_U64(r, s) ((uint64_t *)j->dst)[r] = ((const uint64_t *)j->src)[s]
#define COPY_ANY(r, s) copy_bytes(j->dst + (size_t)(r) * j->slice, j->src + (size_t)(s) * j->slice, j->slice)

static void gather_rows(void *arg, int64_t begin, int64_t end) {
    const gather_job *j = arg;
    int64_t on = j->O * j->N, b = begin / on, rem = begin - b * on, o = rem / j->N, n = rem - o * j->N;
    if (j->slice == 4) GATHER_LOOP(COPY_U32);
    else if (j->slice == 8) GATHER_LOOP(COPY_U64);
    else GATHER_LOOP(COPY_ANY);
}

static bool gather_v2(tfc_kernel_ctx *k, tfc_status *st) {
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    const tfc_tensor *params = k->in[0], *indices = k->in[1];
    tfc_tensor *out = k->out[0];
    const tfc_shape *P = &params->shape, *I = &indices->shape;
    int64_t axis = idx_at(k->in[2]->data, k->in[2]->dtype, 0), bd = tfc_attrs_int(k->attrs, "batch_dims", 0);
    if (axis < 0) axis += P->rank;
    if (bd < 0) bd += I->rank;
    int a = (int)axis, b = (int)bd;
    int64_t B = prod_dims(P->dims, 0, b), O = prod_dims(P->dims, b, a), G = P->dims[a];
    int64_t S = prod_dims(P->dims, a + 1, P->rank), N = prod_dims(I->dims, b, I->rank);
    /* Validate every index first: an error must not leave work half done, and the first bad one is reported. */
    for (int64_t i = 0; i < indices->num_elements; i++) {
        int64_t v = idx_at(indices->data, indices->dtype, i);
        if (v < 0 || v >= G) {
            char pos[128] = "";
            if (I->rank > 0) {
                pos[0] = '[';
                tfc_index_pos_str(I->dims, I->rank, i, pos + 1, sizeof pos - 2);
                strcat(pos, "]");
            }
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "GatherV2: indices%s = %lld is not in [0, %lld)", pos,
                                  (long long)v, (long long)G);
        }
    }
    if (out->num_elements == 0) return true;
    size_t esz = tfc_dtype_size(params->dtype);
    if (params->dtype == TFC_STRING) {
        for (int64_t r = 0; r < B * O * N; r++) {
            int64_t bb = r / (O * N), rem = r % (O * N), o = rem / N, n = rem % N;
            int64_t i = idx_at(indices->data, indices->dtype, bb * N + n);
            if (!copy_strings((tfc_tstring *)out->data + r * S, (const tfc_tstring *)params->data + ((bb * O + o) * G + i) * S,
                              S, st))
                return false;
        }
        return true;
    }
    gather_job j = {.src = params->data, .dst = out->data, .idx = indices->data, .idt = indices->dtype,
                    .O = O, .G = G, .N = N, .slice = (size_t)S * esz};
    tfc_parallel_for(k->pool, B * O * N, (int64_t)j.slice / 4 + 4, gather_rows, &j);
    return true;
}

/* ================================================================================================
 * GatherNd / ScatterNd: index tuples of depth D address slices of S elements; offsets are computed and
 * validated once into an array (-1 for ignored bad indices).
 * ================================================================================================ */

/* Fills off[n] (slice offsets) for the N index tuples of depth D into dims[0..D). On a bad tuple: error with
 * TensorFlow's message (`what` = "param shape" or "shape"), or -1 when ignore. */
static bool nd_offsets(const char *op, const tfc_tensor *indices, const int64_t *dims, int rank, int64_t D, int64_t N,
                       bool ignore, const char *what, int64_t *off, tfc_status *st) {
    const void *ix = indices->data;
    tfc_dtype dt = indices->dtype;
    for (int64_t n = 0; n < N; n++) {
        int64_t o = 0;
        bool bad = false;
        for (int64_t d = 0; d < D; d++) {
            int64_t v = idx_at(ix, dt, n * D + d);
            bad |= v < 0 || v >= dims[d];
            if (!bad) o = o * dims[d] + v; /* size-ok: valid indices address an element of a tensor that exists */
        }
        if (!bad) {
            off[n] = o;
            continue;
        }
        if (ignore) {
            off[n] = -1;
            continue;
        }
        char pos[128] = "", tuple[200], shp[TFC_SHAPE_STR];
        if (indices->shape.rank > 1) { /* TensorFlow: "indices[1,0] = [..]", "indices = [..]" for one tuple */
            pos[0] = '[';
            tfc_index_pos_str(indices->shape.dims, indices->shape.rank - 1, n, pos + 1, sizeof pos - 2);
            strcat(pos, "]");
        }
        size_t l = 0;
        tuple[0] = 0;
        for (int64_t d = 0; d < D && l < sizeof tuple; d++)
            l += (size_t)snprintf(tuple + l, sizeof tuple - l, "%s%lld", d ? ", " : "", (long long)idx_at(ix, dt, n * D + d));
        tfc_shape s;
        s.rank = rank;
        memcpy(s.dims, dims, (size_t)rank * sizeof(int64_t));
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: indices%s = [%s] does not index into %s %s", op, pos, tuple,
                              what, tfc_shape_str(&s, shp, sizeof shp));
    }
    return true;
}

typedef struct nd_job {
    const char *src;
    char *dst;
    const int64_t *off;
    size_t slice;
} nd_job;

static void gather_nd_rows(void *arg, int64_t begin, int64_t end) {
    const nd_job *j = arg;
    for (int64_t n = begin; n < end; n++) {
        char *d = j->dst + (size_t)n * j->slice;
        if (j->off[n] < 0) memset(d, 0, j->slice);
        else copy_bytes(d, j->src + (size_t)j->off[n] * j->slice, j->slice);
    }
}

static bool gather_nd(tfc_kernel_ctx *k, tfc_status *st) {
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    const tfc_tensor *params = k->in[0], *indices = k->in[1];
    tfc_tensor *out = k->out[0];
    const tfc_shape *P = &params->shape, *I = &indices->shape;
    int64_t D = I->dims[I->rank - 1], N = prod_dims(I->dims, 0, I->rank - 1), S = prod_dims(P->dims, (int)D, P->rank);
    if (N == 0) return true;
    int64_t *off = tfc_malloc((size_t)N * sizeof *off);
    if (!off) return tfc_status_oom(st, "GatherNd", (size_t)N * sizeof *off);
    bool ok = nd_offsets("GatherNd", indices, P->dims, P->rank, D, N, bad_index_policy_ignore(k), "param shape", off, st);
    if (ok && out->num_elements > 0) {
        if (params->dtype == TFC_STRING) {
            tfc_tstring *o = out->data;
            const tfc_tstring *p = params->data;
            for (int64_t n = 0; n < N && ok; n++)
                if (off[n] >= 0) ok = copy_strings(o + n * S, p + off[n] * S, S, st);
        } else {
            nd_job j = {.src = params->data, .dst = out->data, .off = off, .slice = (size_t)S * tfc_dtype_size(params->dtype)};
            tfc_parallel_for(k->pool, N, (int64_t)j.slice / 4 + 4, gather_nd_rows, &j);
        }
    }
    tfc_free(off);
    return ok;
}

/* Sums N slices of S elements from src into dst at slice offsets off[] (negative: skipped), in index order
 * per element. Columns [begin, end) of the slice; run in parallel over column ranges. */
typedef struct scatter_job {
    tfc_dtype dt;
    const void *src;
    void *dst;
    const int64_t *off;
    int64_t N, S;
} scatter_job;

#define SCATTER_COLS(T, ADD)                                                  \
    do {                                                                      \
        const T *s = j->src;                                                  \
        T *d = j->dst;                                                        \
        for (int64_t n = 0; n < j->N; n++) {                                  \
            if (j->off[n] < 0) continue;                                      \
            T *dd = d + j->off[n] * j->S;                                     \
            const T *ss = s + n * j->S;                                       \
            for (int64_t c = begin; c < end; c++) dd[c] = ADD(dd[c], ss[c]);  \
        }                                                                     \
    } while (0)

static void scatter_cols(void *arg, int64_t begin, int64_t end) {
    const scatter_job *j = arg;
    SUM_SWITCH(j->dt, SCATTER_COLS, break)
}

static bool scatter_sum(tfc_kernel_ctx *k, tfc_tensor *out, const tfc_tensor *src, const int64_t *off, int64_t N,
                        int64_t S, tfc_status *st) {
    if (out->dtype == TFC_STRING) {
        tfc_tstring *d = out->data;
        const tfc_tstring *s = src->data;
        for (int64_t n = 0; n < N; n++)
            for (int64_t c = 0; off[n] >= 0 && c < S; c++)
                if (!append_string(&d[off[n] * S + c], &s[n * S + c], st)) return false;
        return true;
    }
    memset(out->data, 0, tfc_tensor_byte_size(out));
    if (N == 0 || S == 0) return true;
    scatter_job j = {.dt = out->dtype, .src = src->data, .dst = out->data, .off = off, .N = N, .S = S};
    /* Columns are independent; splitting them keeps each element's sum in index order (deterministic). */
    if (S >= 64) tfc_parallel_for(k->pool, S, N, scatter_cols, &j);
    else scatter_cols(&j, 0, S);
    return true;
}

static bool scatter_nd(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *indices = k->in[0], *updates = k->in[1];
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    tfc_tensor *out = k->out[0];
    const tfc_shape *O = &out->shape, *I = &indices->shape;
    int64_t D = I->dims[I->rank - 1], N = prod_dims(I->dims, 0, I->rank - 1), S = prod_dims(O->dims, (int)D, O->rank);
    if (updates->num_elements == 0 || indices->num_elements == 0) N = 0;
    int64_t *off = tfc_malloc((size_t)(N ? N : 1) * sizeof *off);
    if (!off) return tfc_status_oom(st, "ScatterNd", (size_t)N * sizeof *off);
    bool ok = nd_offsets("ScatterNd", indices, O->dims, O->rank, D, N, bad_index_policy_ignore(k), "shape", off, st) &&
              scatter_sum(k, out, updates, off, N, S, st);
    tfc_free(off);
    return ok;
}

/* ================================================================================================
 * UnsortedSegmentSum: output [num_segments, S]; data [N, S] where N = elements of segment_ids.
 * ================================================================================================ */

static bool unsorted_segment_sum(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *data = k->in[0], *ids = k->in[1];
    int64_t num = idx_at(k->in[2]->data, k->in[2]->dtype, 0);
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    tfc_tensor *out = k->out[0];
    int64_t N = ids->num_elements, S = prod_dims(data->shape.dims, ids->shape.rank, data->shape.rank);
    int64_t *off = tfc_malloc((size_t)(N ? N : 1) * sizeof *off);
    if (!off) return tfc_status_oom(st, "UnsortedSegmentSum", (size_t)N * sizeof *off);
    for (int64_t n = 0; n < N; n++) {
        int64_t v = idx_at(ids->data, ids->dtype, n);
        if (v >= num) {
            char pos[128];
            tfc_index_pos_str(ids->shape.dims, ids->shape.rank, n, pos, sizeof pos);
            tfc_free(off);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "UnsortedSegmentSum: segment_ids[%s] = %lld is out of range [0, %lld)",
                                  pos, (long long)v, (long long)num);
        }
        off[n] = v; /* negative ids are dropped, as TensorFlow does */
    }
    bool ok = scatter_sum(k, out, data, off, N, S, st);
    tfc_free(off);
    return ok;
}

/* ================================================================================================
 * OneHot: output [P, depth, Sx] (axis splits indices into [P, Sx]).
 * ================================================================================================ */

static void fill_bytes(char *dst, const char *v, size_t esz, int64_t n) {
    switch (esz) {
    case 1: memset(dst, *v, (size_t)n); break;
    case 2: { uint16_t x; memcpy(&x, v, 2); for (int64_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = x; } break;
    case 4: { uint32_t x; memcpy(&x, v, 4); for (int64_t i = 0; i < n; i++) ((uint32_t *)dst)[i] = x; } break;
    case 8: { uint64_t x; memcpy(&x, v, 8); for (int64_t i = 0; i < n; i++) ((uint64_t *)dst)[i] = x; } break;
    default: for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * esz, v, esz);
    }
}

typedef struct one_hot_job {
    const void *idx;
    tfc_dtype idt;
    char *out;
    const char *on, *off;
    size_t esz;
    int64_t depth, Sx;
} one_hot_job;

/* Prefix rows p: the [depth, Sx] block gets off_value, then on_value where the index points. */
static void one_hot_rows(void *arg, int64_t begin, int64_t end) {
    const one_hot_job *j = arg;
    for (int64_t p = begin; p < end; p++) {
        char *blk = j->out + (size_t)(p * j->depth * j->Sx) * j->esz;
        fill_bytes(blk, j->off, j->esz, j->depth * j->Sx);
        for (int64_t s = 0; s < j->Sx; s++) {
            int64_t v = idx_at(j->idx, j->idt, p * j->Sx + s);
            if (v >= 0 && v < j->depth) memcpy(blk + (size_t)(v * j->Sx + s) * j->esz, j->on, j->esz);
        }
    }
}

static bool one_hot(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *indices = k->in[0], *on = k->in[2], *off = k->in[3];
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    tfc_tensor *out = k->out[0];
    int64_t depth = ((const int32_t *)k->in[1]->data)[0], axis = tfc_attrs_int(k->attrs, "axis", -1);
    if (out->num_elements == 0) return true;
    int r = indices->shape.rank, a = axis < 0 ? r : (int)axis;
    int64_t P = prod_dims(indices->shape.dims, 0, a), Sx = prod_dims(indices->shape.dims, a, r);
    if (out->dtype == TFC_STRING) {
        tfc_tstring *o = out->data;
        for (int64_t p = 0; p < P; p++)
            for (int64_t d = 0; d < depth; d++)
                for (int64_t s = 0; s < Sx; s++) {
                    int64_t v = idx_at(indices->data, indices->dtype, p * Sx + s);
                    if (!tfc_tstring_assign(&o[(p * depth + d) * Sx + s], v == d ? on->data : off->data, st)) return false;
                }
        return true;
    }
    one_hot_job j = {.idx = indices->data, .idt = indices->dtype, .out = out->data, .on = on->data, .off = off->data,
                     .esz = tfc_dtype_size(out->dtype), .depth = depth, .Sx = Sx};
    tfc_parallel_for(k->pool, P, depth * Sx, one_hot_rows, &j);
    return true;
}

/* ================================================================================================
 * Cumsum: x viewed as [outer, n, inner]; each (outer, column block) is one unit of parallel work.
 * ================================================================================================ */

#define CUMSUM_BLOCK 512

typedef struct cumsum_job {
    tfc_dtype dt;
    const void *x;
    void *y;
    int64_t n, inner, blocks;
    bool exclusive, reverse;
} cumsum_job;

#define CUMSUM_UNITS(T, ADD)                                                                 \
    do {                                                                                     \
        const T *x = j->x;                                                                   \
        T *y = j->y;                                                                         \
        T zero;                                                                              \
        memset(&zero, 0, sizeof zero);                                                       \
        if (j->inner == 1) { /* one scan per row */                                          \
            int64_t n = j->n, step = j->reverse ? -1 : 1;                                    \
            for (int64_t u = begin; u < end; u++) {                                          \
                const T *xx = x + u * n + (j->reverse ? n - 1 : 0);                          \
                T *yy = y + u * n + (j->reverse ? n - 1 : 0);                                \
                T acc = zero;                                                                \
                if (j->exclusive)                                                            \
                    for (int64_t t = 0; t < n; t++) {                                        \
                        yy[t * step] = acc;                                                  \
                        acc = ADD(acc, xx[t * step]);                                        \
                    }                                                                        \
                else                                                                         \
                    for (int64_t t = 0; t < n; t++) yy[t * step] = acc = ADD(acc, xx[t * step]); \
            }                                                                                \
            break;                                                                           \
        }                                                                                    \
        for (int64_t u = begin; u < end; u++) {                                              \
            int64_t o = u / j->blocks, c0 = (u % j->blocks) * CUMSUM_BLOCK;                  \
            int64_t c1 = c0 + CUMSUM_BLOCK < j->inner ? c0 + CUMSUM_BLOCK : j->inner;        \
            int64_t base = o * j->n * j->inner;                                              \
            for (int64_t t = 0; t < j->n; t++) {                                             \
                int64_t pos = j->reverse ? j->n - 1 - t : t;                                 \
                int64_t prev = j->reverse ? pos + 1 : pos - 1;                               \
                T *yy = y + base + pos * j->inner;                                           \
                const T *xx = x + base + pos * j->inner;                                     \
                if (t == 0) {                                                                \
                    for (int64_t c = c0; c < c1; c++) yy[c] = j->exclusive ? zero : xx[c];   \
                } else {                                                                     \
                    const T *yp = y + base + prev * j->inner;                                \
                    const T *xs = j->exclusive ? x + base + prev * j->inner : xx;            \
                    for (int64_t c = c0; c < c1; c++) yy[c] = ADD(yp[c], xs[c]);             \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    } while (0)

static void cumsum_units(void *arg, int64_t begin, int64_t end) {
    const cumsum_job *j = arg;
    SUM_SWITCH(j->dt, CUMSUM_UNITS, break)
}

static bool cumsum(tfc_kernel_ctx *k, tfc_status *st) {
    if (!tfc_indexing_ensure_outputs(k, st)) return false;
    const tfc_tensor *x = k->in[0];
    tfc_tensor *y = k->out[0];
    int64_t axis = idx_at(k->in[1]->data, k->in[1]->dtype, 0);
    int r = x->shape.rank;
    if (axis < 0) axis += r;
    if (x->num_elements == 0) return true;
    cumsum_job j = {.dt = x->dtype, .x = x->data, .y = y->data, .n = x->shape.dims[axis],
                    .inner = prod_dims(x->shape.dims, (int)axis + 1, r),
                    .exclusive = tfc_attrs_bool(k->attrs, "exclusive", false),
                    .reverse = tfc_attrs_bool(k->attrs, "reverse", false)};
    int64_t outer = prod_dims(x->shape.dims, 0, (int)axis);
    j.blocks = (j.inner + CUMSUM_BLOCK - 1) / CUMSUM_BLOCK;
    int64_t cols = j.inner < CUMSUM_BLOCK ? j.inner : CUMSUM_BLOCK;
    tfc_parallel_for(k->pool, outer * j.blocks, j.n * cols, cumsum_units, &j);
    return true;
}

const tfc_kernel_reg tfc_cpu_kernels_indexing[] = {
    {"GatherV2", gather_v2},
    {"GatherNd", gather_nd},
    {"ScatterNd", scatter_nd},
    {"UnsortedSegmentSum", unsorted_segment_sum},
    {"OneHot", one_hot},
    {"Cumsum", cumsum},
    {"Range", tfc_k_range},
    {"Where", tfc_k_where},
    {"ReverseV2", tfc_k_reverse_v2},
    {"TopKV2", tfc_k_top_k_v2},
    {NULL, NULL},
};
