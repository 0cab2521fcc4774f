/* Resize kernels on NHWC images with TensorFlow's coordinate rules (resize_bilinear_op.cc,
 * resize_nearest_neighbor_op.cc, image_resizer_state.h), computed in float32 exactly as TensorFlow does:
 *   scale        = align_corners && out > 1 ? (in - 1) / (float)(out - 1) : in / (float)out
 *   bilinear     in = half_pixel_centers ? (out_i + 0.5f) * scale - 0.5f : out_i * scale,
 *                lower = max(floor(in), 0), upper = min(ceil(in), in_size - 1), lerp = in - floor(in),
 *                value = top + (bottom - top) * y_lerp with top/bottom = left + (right - left) * x_lerp
 *   nearest      in = half_pixel_centers ? (out_i + 0.5f) * scale : out_i * scale,
 *                index = min(align_corners ? round(in) : floor(in), in_size - 1), clamped at 0 with half pixels
 * The *Grad kernels scatter the upstream gradient back through the same weights. Rows of the output are
 * independent in the forward kernels and run in parallel; the gradients parallelise over images. */
#include <math.h>
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/image_internal.h"

typedef struct {
    int64_t lo, hi;
    float lerp;
} interp;

static float resize_scale(int64_t in, int64_t out, bool align) {
    return align && out > 1 ? (float)(in - 1) / (float)(out - 1) : (float)in / (float)out;
}

static void bilinear_weights(int64_t out, int64_t in, float scale, bool half, interp *w) {
    for (int64_t i = 0; i < out; i++) {
        const float x = half ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
        const float xf = floorf(x);
        int64_t lo = (int64_t)xf, hi = (int64_t)ceilf(x);
        w[i].lo = lo > 0 ? lo : 0;
        w[i].hi = hi < in - 1 ? hi : in - 1;
        w[i].lerp = x - xf;
    }
}

static void nearest_index(int64_t out, int64_t in, float scale, bool align, bool half, int64_t *idx) {
    for (int64_t i = 0; i < out; i++) {
        const float x = half ? ((float)i + 0.5f) * scale : (float)i * scale;
        int64_t v = align ? (int64_t)roundf(x) : (int64_t)floorf(x);
        if (v > in - 1) v = in - 1;
        if (half && v < 0) v = 0;
        idx[i] = v;
    }
}

/* ---- ResizeBilinear ---------------------------------------------------------------------------------- */

typedef struct {
    const void *in;
    float *out;
    int64_t ih, iw, oh, ow, ch;
    const interp *ys, *xs;
} bilinear_job;

static inline float ld_f32(float v) { return v; }
static inline float ld_f64(double v) { return (float)v; }
static inline float ld_int(int64_t v) { return (float)v; }
static inline float ld_half(tfc_half v) { return tfc_half_to_float(v); }
static inline float ld_bf16(tfc_bfloat16 v) { return tfc_bfloat16_to_float(v); }

/* With the same float expressions as TensorFlow (so the results are identical). When upscaling, rows are
 * computed in two steps: each input row that an output row needs is interpolated horizontally once into a
 * scratch row, top = left + (right - left) * x_lerp, and reused by the next output rows that share it; the
 * output row is then top + (bottom - top) * y_lerp, a contiguous loop the compiler vectorises. Otherwise no
 * row is reused and the direct form is faster. */
#define BILINEAR_DEFINE(SFX, T, LOAD)                                                                  \
    static void hrow_##SFX(const T *restrict src, const interp *xs, int64_t ow, int64_t C, float *restrict h) { \
        for (int64_t x = 0; x < ow; x++, h += C) {                                                    \
            const T *l = src + xs[x].lo * C, *r = src + xs[x].hi * C;                                 \
            const float xl = xs[x].lerp;                                                              \
            for (int64_t c = 0; c < C; c++) {                                                         \
                const float a = LOAD(l[c]), b = LOAD(r[c]);                                           \
                h[c] = a + (b - a) * xl;                                                              \
            }                                                                                         \
        }                                                                                             \
    }                                                                                                 \
    static void bilinear_rows_##SFX(void *arg, int64_t begin, int64_t end) {                          \
        const bilinear_job *j = arg;                                                                  \
        const int64_t C = j->ch, IW = j->iw, n = j->ow * C;                                           \
        float *buf = j->oh > j->ih ? tfc_malloc((size_t)(2 * n) * sizeof(float)) : NULL;              \
        if (!buf) { /* not upscaling (no row is reused), or no scratch: the direct form, same values */ \
            for (int64_t r = begin; r < end; r++) {                                                   \
                const int64_t b = r / j->oh, y = r % j->oh;                                           \
                const T *img = (const T *)j->in + b * j->ih * IW * C;                                 \
                const T *top = img + j->ys[y].lo * IW * C, *bot = img + j->ys[y].hi * IW * C;         \
                float *o = j->out + r * n, t, bo;                                                     \
                for (int64_t x = 0; x < j->ow; x++)                                                   \
                    for (int64_t c = 0; c < C; c++) {                                                 \
                        const int64_t l = j->xs[x].lo * C + c, rr = j->xs[x].hi * C + c;              \
                        const float xl = j->xs[x].lerp;                                               \
                        t = LOAD(top[l]) + (LOAD(top[rr]) - LOAD(top[l])) * xl;                       \
                        bo = LOAD(bot[l]) + (LOAD(bot[rr]) - LOAD(bot[l])) * xl;                      \
                        o[x * C + c] = t + (bo - t) * j->ys[y].lerp;                                  \
                    }                                                                                 \
            }                                                                                         \
            return;                                                                                   \
        }                                                                                             \
        float *hr[2] = {buf, buf + n};                                                                \
        int64_t held[2] = {-1, -1}; /* the input rows (batch * ih + row) the scratch rows hold */     \
        for (int64_t r = begin; r < end; r++) {                                                       \
            const int64_t b = r / j->oh, y = r % j->oh;                                               \
            const int64_t want[2] = {b * j->ih + j->ys[y].lo, b * j->ih + j->ys[y].hi};               \
            int s0 = held[0] == want[0] ? 0 : held[1] == want[0] ? 1 : -1;                            \
            if (s0 < 0) { /* keep a held copy of the bottom row if there is one */                    \
                s0 = held[0] == want[1] ? 1 : 0;                                                      \
                hrow_##SFX((const T *)j->in + want[0] * IW * C, j->xs, j->ow, C, hr[s0]);             \
                held[s0] = want[0];                                                                   \
            }                                                                                         \
            int s1 = held[s0] == want[1] ? s0 : held[1 - s0] == want[1] ? 1 - s0 : -1;                \
            if (s1 < 0) {                                                                             \
                s1 = 1 - s0;                                                                          \
                hrow_##SFX((const T *)j->in + want[1] * IW * C, j->xs, j->ow, C, hr[s1]);             \
                held[s1] = want[1];                                                                   \
            }                                                                                         \
            float *rows[2] = {hr[s0], hr[s1]};                                                        \
            const float yl = j->ys[y].lerp;                                                           \
            const float *restrict t = rows[0], *restrict bo = rows[1];                                \
            float *restrict o = j->out + r * n;                                                       \
            for (int64_t i = 0; i < n; i++) o[i] = t[i] + (bo[i] - t[i]) * yl;                        \
        }                                                                                             \
        tfc_free(buf);                                                                                \
    }

BILINEAR_DEFINE(f32, float, ld_f32)
BILINEAR_DEFINE(f64, double, ld_f64)
BILINEAR_DEFINE(u8, uint8_t, ld_int)
BILINEAR_DEFINE(i8, int8_t, ld_int)
BILINEAR_DEFINE(i16, int16_t, ld_int)
BILINEAR_DEFINE(u16, uint16_t, ld_int)
BILINEAR_DEFINE(i32, int32_t, ld_int)
BILINEAR_DEFINE(i64, int64_t, ld_int)
BILINEAR_DEFINE(f16, tfc_half, ld_half)
BILINEAR_DEFINE(bf16, tfc_bfloat16, ld_bf16)

bool tfc_image_resize_bilinear(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    tfc_tensor *y = k->out[0];
    const bool align = tfc_attrs_bool(k->attrs, "align_corners", false);
    const bool half = tfc_attrs_bool(k->attrs, "half_pixel_centers", false);
    bilinear_job j = {.in = x->data, .out = y->data, .ih = x->shape.dims[1], .iw = x->shape.dims[2],
                      .oh = y->shape.dims[1], .ow = y->shape.dims[2], .ch = x->shape.dims[3]};
    if (y->num_elements == 0) return true;
    interp *w = tfc_malloc((size_t)(j.oh + j.ow) * sizeof *w);
    if (!w) return tfc_status_oom(st, "ResizeBilinear", (size_t)(j.oh + j.ow) * sizeof *w);
    bilinear_weights(j.oh, j.ih, resize_scale(j.ih, j.oh, align), half, w);
    bilinear_weights(j.ow, j.iw, resize_scale(j.iw, j.ow, align), half, w + j.oh);
    j.ys = w;
    j.xs = w + j.oh;
    tfc_range_fn fn = NULL;
    switch (x->dtype) {
    case TFC_FLOAT: fn = bilinear_rows_f32; break;
    case TFC_DOUBLE: fn = bilinear_rows_f64; break;
    case TFC_UINT8: fn = bilinear_rows_u8; break;
    case TFC_INT8: fn = bilinear_rows_i8; break;
    case TFC_INT16: fn = bilinear_rows_i16; break;
    case TFC_UINT16: fn = bilinear_rows_u16; break;
    case TFC_INT32: fn = bilinear_rows_i32; break;
    case TFC_INT64: fn = bilinear_rows_i64; break;
    case TFC_HALF: fn = bilinear_rows_f16; break;
    case TFC_BFLOAT16: fn = bilinear_rows_bf16; break;
    default: break;
    }
    if (fn) tfc_parallel_for(k->pool, tfc_dims_product(y->shape.dims, 0, 2), j.ow * j.ch * 12 + 16, fn, &j);
    tfc_free(w);
    return fn ? true : tfc_kernel_unimplemented(k, x->dtype, st);
}

/* ---- ResizeNearestNeighbor: a gather of whole pixels, the same code for every element size ------------- */

typedef struct {
    const char *in;
    char *out;
    int64_t ih, iw, oh, ow;
    size_t px; /* bytes per pixel: channels * element size */
    const int64_t *ys, *xs;
} nearest_job;

static void nearest_rows(void *arg, int64_t begin, int64_t end) {
    const nearest_job *j = arg;
    const size_t px = j->px;
    for (int64_t r = begin; r < end; r++) {
        const int64_t b = r / j->oh, y = r % j->oh;
        const char *src = j->in + ((size_t)(b * j->ih + j->ys[y]) * (size_t)j->iw) * px;
        char *restrict o = j->out + (size_t)r * (size_t)j->ow * px;
        switch (px) { /* common pixel sizes get fixed-size copies the compiler turns into moves */
        case 1: for (int64_t x = 0; x < j->ow; x++) o[x] = src[j->xs[x]]; break;
        case 3: for (int64_t x = 0; x < j->ow; x++) memcpy(o + x * 3, src + j->xs[x] * 3, 3); break;
        case 4: for (int64_t x = 0; x < j->ow; x++) memcpy(o + x * 4, src + j->xs[x] * 4, 4); break;
        case 12: for (int64_t x = 0; x < j->ow; x++) memcpy(o + x * 12, src + j->xs[x] * 12, 12); break;
        default: for (int64_t x = 0; x < j->ow; x++) memcpy(o + (size_t)x * px, src + (size_t)j->xs[x] * px, px); break;
        }
    }
}

bool tfc_image_resize_nearest(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    tfc_tensor *y = k->out[0];
    const bool align = tfc_attrs_bool(k->attrs, "align_corners", false);
    const bool half = tfc_attrs_bool(k->attrs, "half_pixel_centers", false);
    nearest_job j = {.in = x->data, .out = y->data, .ih = x->shape.dims[1], .iw = x->shape.dims[2],
                     .oh = y->shape.dims[1], .ow = y->shape.dims[2],
                     .px = (size_t)tfc_dims_product(x->shape.dims, 3, 4) * tfc_dtype_size(x->dtype)};
    if (y->num_elements == 0) return true;
    int64_t *idx = tfc_malloc((size_t)(j.oh + j.ow) * sizeof *idx);
    if (!idx) return tfc_status_oom(st, "ResizeNearestNeighbor", (size_t)(j.oh + j.ow) * sizeof *idx);
    nearest_index(j.oh, j.ih, resize_scale(j.ih, j.oh, align), align, half, idx);
    nearest_index(j.ow, j.iw, resize_scale(j.iw, j.ow, align), align, half, idx + j.oh);
    j.ys = idx;
    j.xs = idx + j.oh;
    tfc_parallel_for(k->pool, tfc_dims_product(y->shape.dims, 0, 2), j.ow * (int64_t)j.px / 4 + 8, nearest_rows, &j);
    tfc_free(idx);
    return true;
}

/* ---- gradients: scatter-adds accumulated in the output dtype, rounding after every addition as
 * TensorFlow's `output(...) += T(...)` does for half and bfloat16 ---------------------------------------- */

typedef struct {
    const void *g;  /* upstream gradient [batch, gh, gw, ch] */
    void *out;      /* [batch, oh, ow, ch], zeroed */
    tfc_dtype dt;
    int64_t gh, gw, oh, ow, ch;
    const interp *ys, *xs;   /* bilinear: over the gradient's rows/columns, indices into the output */
    const int64_t *yi, *xi;  /* nearest: likewise */
} grad_job;

#define ADD_AT(dt, base, idx, v)                                                                              \
    do {                                                                                                      \
        switch (dt) {                                                                                         \
        case TFC_FLOAT: ((float *)(base))[idx] += (float)(v); break;                                          \
        case TFC_DOUBLE: ((double *)(base))[idx] += (double)(v); break;                                       \
        case TFC_HALF: {                                                                                      \
            tfc_half *p_ = (tfc_half *)(base) + (idx);                                                        \
            *p_ = tfc_half_from_float(tfc_half_to_float(*p_) + tfc_half_to_float(tfc_half_from_float((float)(v)))); \
            break;                                                                                            \
        }                                                                                                     \
        case TFC_BFLOAT16: {                                                                                  \
            tfc_bfloat16 *p_ = (tfc_bfloat16 *)(base) + (idx);                                                \
            *p_ = tfc_bfloat16_from_float(tfc_bfloat16_to_float(*p_) +                                        \
                                          tfc_bfloat16_to_float(tfc_bfloat16_from_float((float)(v))));         \
            break;                                                                                            \
        }                                                                                                     \
        default: break;                                                                                       \
        }                                                                                                     \
    } while (0)

static void bilinear_grad_images(void *arg, int64_t begin, int64_t end) {
    const grad_job *j = arg;
    const int64_t C = j->ch;
    const float *g = j->g;
    for (int64_t b = begin; b < end; b++) {
        char *out = (char *)j->out + (size_t)(b * j->oh * j->ow * C) * tfc_dtype_size(j->dt);
        for (int64_t y = 0; y < j->gh; y++) {
            const int64_t top = j->ys[y].lo * j->ow, bot = j->ys[y].hi * j->ow;
            const float yl = j->ys[y].lerp, iyl = 1.0f - yl;
            for (int64_t x = 0; x < j->gw; x++) {
                const int64_t l = j->xs[x].lo, r = j->xs[x].hi;
                const float xl = j->xs[x].lerp, ixl = 1.0f - xl;
                const float *gp = g + ((b * j->gh + y) * j->gw + x) * C;
                for (int64_t c = 0; c < C; c++) {
                    const float v = gp[c];
                    ADD_AT(j->dt, out, (top + l) * C + c, v * iyl * ixl);
                    ADD_AT(j->dt, out, (top + r) * C + c, v * iyl * xl);
                    ADD_AT(j->dt, out, (bot + l) * C + c, v * yl * ixl);
                    ADD_AT(j->dt, out, (bot + r) * C + c, v * yl * xl);
                }
            }
        }
    }
}

bool tfc_image_resize_bilinear_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *g = k->in[0];
    tfc_tensor *out = k->out[0];
    const bool align = tfc_attrs_bool(k->attrs, "align_corners", false);
    const bool half = tfc_attrs_bool(k->attrs, "half_pixel_centers", false);
    /* half and bfloat16 gradients are accumulated in float32 and rounded once, as TensorFlow does */
    const bool narrow = out->dtype == TFC_HALF || out->dtype == TFC_BFLOAT16;
    grad_job j = {.g = g->data, .out = out->data, .dt = narrow ? TFC_FLOAT : out->dtype, .gh = g->shape.dims[1],
                  .gw = g->shape.dims[2], .oh = out->shape.dims[1], .ow = out->shape.dims[2], .ch = g->shape.dims[3]};
    memset(out->data, 0, tfc_tensor_byte_size(out));
    if (g->num_elements == 0 || out->num_elements == 0) return true;
    interp *w = tfc_malloc((size_t)(j.gh + j.gw) * sizeof *w);
    float *acc = narrow ? tfc_calloc((size_t)out->num_elements, sizeof(float)) : NULL;
    if (!w || (narrow && !acc)) {
        tfc_free(w);
        return tfc_status_oom(st, "ResizeBilinearGrad", (size_t)out->num_elements * sizeof(float));
    }
    if (narrow) j.out = acc;
    bilinear_weights(j.gh, j.oh, resize_scale(j.oh, j.gh, align), half, w);
    bilinear_weights(j.gw, j.ow, resize_scale(j.ow, j.gw, align), half, w + j.gh);
    j.ys = w;
    j.xs = w + j.gh;
    tfc_parallel_for(k->pool, g->shape.dims[0], j.gh * j.gw * j.ch * 16 + 16, bilinear_grad_images, &j);
    for (int64_t i = 0; narrow && i < out->num_elements; i++)
        tfc_dtype_set_f64(out->dtype, out->data, i, acc[i]);
    tfc_free(acc);
    tfc_free(w);
    return true;
}

#define NN_GRAD_INT(T)                                                                      \
    do {                                                                                    \
        const T *gp = j->g;                                                                 \
        T *o = j->out;                                                                      \
        o[(oo + j->xi[x]) * C + c] = (T)(o[(oo + j->xi[x]) * C + c] + gp[gi + c]);          \
    } while (0)

static void nearest_grad_images(void *arg, int64_t begin, int64_t end) {
    const grad_job *j = arg;
    const int64_t C = j->ch;
    for (int64_t b = begin; b < end; b++)
        for (int64_t y = 0; y < j->gh; y++) {
            const int64_t oo = (b * j->oh + j->yi[y]) * j->ow;
            for (int64_t x = 0; x < j->gw; x++) {
                const int64_t gi = ((b * j->gh + y) * j->gw + x) * C;
                for (int64_t c = 0; c < C; c++) {
                    switch (j->dt) {
                    case TFC_UINT8: NN_GRAD_INT(uint8_t); break;
                    case TFC_INT8: NN_GRAD_INT(int8_t); break;
                    case TFC_INT32: { /* wraps like TensorFlow's int32 addition */
                        int32_t *o = j->out;
                        const int32_t *gp = j->g;
                        int64_t at = (oo + j->xi[x]) * C + c;
                        o[at] = (int32_t)((uint32_t)o[at] + (uint32_t)gp[gi + c]);
                        break;
                    }
                    case TFC_FLOAT: ADD_AT(TFC_FLOAT, j->out, (oo + j->xi[x]) * C + c, ((const float *)j->g)[gi + c]); break;
                    case TFC_DOUBLE: ADD_AT(TFC_DOUBLE, j->out, (oo + j->xi[x]) * C + c, ((const double *)j->g)[gi + c]); break;
                    case TFC_HALF:
                        ADD_AT(TFC_HALF, j->out, (oo + j->xi[x]) * C + c, tfc_half_to_float(((const tfc_half *)j->g)[gi + c]));
                        break;
                    case TFC_BFLOAT16:
                        ADD_AT(TFC_BFLOAT16, j->out, (oo + j->xi[x]) * C + c,
                               tfc_bfloat16_to_float(((const tfc_bfloat16 *)j->g)[gi + c]));
                        break;
                    default: break;
                    }
                }
            }
        }
}

bool tfc_image_resize_nearest_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *g = k->in[0];
    tfc_tensor *out = k->out[0];
    const bool align = tfc_attrs_bool(k->attrs, "align_corners", false);
    const bool half = tfc_attrs_bool(k->attrs, "half_pixel_centers", false);
    grad_job j = {.g = g->data, .out = out->data, .dt = out->dtype, .gh = g->shape.dims[1], .gw = g->shape.dims[2],
                  .oh = out->shape.dims[1], .ow = out->shape.dims[2], .ch = g->shape.dims[3]};
    memset(out->data, 0, tfc_tensor_byte_size(out));
    if (g->num_elements == 0) return true;
    int64_t *idx = tfc_malloc((size_t)(j.gh + j.gw) * sizeof *idx);
    if (!idx) return tfc_status_oom(st, "ResizeNearestNeighborGrad", (size_t)(j.gh + j.gw) * sizeof *idx);
    nearest_index(j.gh, j.oh, resize_scale(j.oh, j.gh, align), align, half, idx);
    nearest_index(j.gw, j.ow, resize_scale(j.ow, j.gw, align), align, half, idx + j.gh);
    j.yi = idx;
    j.xi = idx + j.gh;
    tfc_parallel_for(k->pool, g->shape.dims[0], j.gh * j.gw * j.ch * 8 + 16, nearest_grad_images, &j);
    tfc_free(idx);
    return true;
}
