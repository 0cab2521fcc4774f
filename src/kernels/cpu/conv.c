/* Conv kernels: Conv2D, DepthwiseConv2dNative and their backprops (dtype/layout staging around the NHWC
 * compute kernels in conv_gemm.c and conv_depthwise.c), and the family's kernel table (pooling kernels live
 * in pool.c). */
#include <limits.h>
#include <string.h>

#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/filter_cache.h"
#include "kernels/cpu/gemm_bf16.h"
#include "ops/op_util.h"

typedef enum { PASS_FWD, PASS_BWD_INPUT, PASS_BWD_FILTER } conv_pass;

typedef bool (*conv_fn_f32)(tfc_threadpool *, const tfc_conv_geom *, const float *, const float *, float *, tfc_status *);
typedef bool (*conv_fn_f64)(tfc_threadpool *, const tfc_conv_geom *, const double *, const double *, double *, tfc_status *);

static const conv_fn_f32 fns_f32[2][3] = {
    {tfc_conv2d_fwd_f32, tfc_conv2d_bwd_input_f32, tfc_conv2d_bwd_filter_f32},
    {tfc_depthwise_fwd_f32, tfc_depthwise_bwd_input_f32, tfc_depthwise_bwd_filter_f32},
};
typedef bool (*conv_fn_bf16)(tfc_threadpool *, const tfc_conv_geom *, const uint16_t *, const uint16_t *, uint16_t *,
                             tfc_status *);
static const conv_fn_bf16 fns_bf16[3] = {tfc_conv2d_fwd_bf16, tfc_conv2d_bwd_input_bf16, tfc_conv2d_bwd_filter_bf16};
static const conv_fn_f64 fns_f64[2][3] = {
    {tfc_conv2d_fwd_f64, tfc_conv2d_bwd_input_f64, tfc_conv2d_bwd_filter_f64},
    {tfc_depthwise_fwd_f64, tfc_depthwise_bwd_input_f64, tfc_depthwise_bwd_filter_f64},
};

/* 4 sizes from an int32 sizes input (input_sizes may hold only the 2 spatial dims). */
static bool sizes_input(tfc_kernel_ctx *k, bool nchw, int i, const char *what, bool allow2, int64_t out[4],
                        tfc_status *st) {
    int64_t v[4];
    int64_t n = tfc_read_ints(k->op->name, what, k->in[i], v, 4, st);
    if (n == 4) {
        memcpy(out, v, sizeof v);
        return true;
    }
    if (n == 2 && allow2) {
        tfc_conv_dims(nchw, k->in[2]->shape.dims[0], v[0], v[1], k->in[1]->shape.dims[2], out);
        return true;
    }
    if (n >= 0) tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s must contain 4 values, got %lld", k->op->name, what, (long long)n);
    return false;
}

static bool conv_run(tfc_kernel_ctx *k, tfc_conv_kind kind, conv_pass pass, tfc_status *st) {
    const char *op = k->op->name;
    tfc_conv_state tmp;
    const tfc_conv_state *s = tfc_conv_state_of(k, kind, false, &tmp, st);
    if (!s) return false;
    int64_t in_dims[4], f_dims[4];
    switch (pass) {
    case PASS_FWD:
        memcpy(in_dims, k->in[0]->shape.dims, sizeof in_dims);
        memcpy(f_dims, k->in[1]->shape.dims, sizeof f_dims);
        break;
    case PASS_BWD_INPUT:
        if (!sizes_input(k, s->a.nchw, 0, "input_sizes", true, in_dims, st)) return false;
        memcpy(f_dims, k->in[1]->shape.dims, sizeof f_dims);
        break;
    case PASS_BWD_FILTER:
        memcpy(in_dims, k->in[0]->shape.dims, sizeof in_dims);
        if (!sizes_input(k, s->a.nchw, 1, "filter_sizes", false, f_dims, st)) return false;
        break;
    }
    tfc_conv_geom g;
    if (!tfc_conv_geom_make(op, kind, &s->a, in_dims, f_dims, &g, st)) return false;
    if (!k->out[0]) { /* shape left unknown by a graph trace */
        int64_t od[4];
        if (pass == PASS_FWD) tfc_conv_dims(g.nchw, g.batch, g.out_h, g.out_w, g.out_c, od);
        else memcpy(od, pass == PASS_BWD_INPUT ? in_dims : f_dims, sizeof od);
        if (!tfc_kernel_alloc_output(k, 0, od, 4, st)) return false;
    }
    tfc_tensor *out = k->out[0];
    if (out->num_elements == 0) return true;
    const int64_t K = g.k_h * g.k_w * g.in_c;
    if (K > INT_MAX / 2 || g.out_c > INT_MAX / 2 || g.out_w > INT_MAX / 2)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: filter of %lld x %lld elements is too large for the BLAS backend",
                              op, (long long)K, (long long)g.out_c);

    tfc_dtype dt = out->dtype, ct = tfc_conv_compute_dtype(dt);
    /* bfloat16 convolutions stay in bfloat16 where vdpbf16ps can multiply them (float32 accumulation). With
     * fewer than 64 products per output (an image's first layer: 3x3x1) the float32 kernels on widened data
     * measured 3-4x faster (the pairs then fill few vector lanes; im2col dominates). */
    if (dt == TFC_BFLOAT16 && kind == TFC_CONV_2D && g.groups == 1 && K >= 64 && tfc_bgemm_native()) ct = TFC_BFLOAT16;
    /* The two data inputs in NHWC compute form; filters have no layout. */
    const tfc_tensor *a_t = pass == PASS_BWD_INPUT ? k->in[1] : k->in[0];
    const tfc_tensor *b_t = pass == PASS_FWD ? k->in[1] : k->in[2];
    bool a_nchw = g.nchw && pass != PASS_BWD_INPUT, b_nchw = g.nchw && pass != PASS_FWD;
    bool o_nchw = g.nchw && pass != PASS_BWD_FILTER;
    conv_buf a = {0}, b = {0}, o = {0};
    bool ok = tfc_conv_load(k, a_t, ct, a_nchw, &a, st) && tfc_conv_load(k, b_t, ct, b_nchw, &b, st) &&
              tfc_conv_out(out, ct, o_nchw, &o, st);
    if (ok) {
        /* backprop input takes (dy, f): a is the filter, b is dy */
        const void *p0 = pass == PASS_BWD_INPUT ? b.data : a.data, *p1 = pass == PASS_BWD_INPUT ? a.data : b.data;
        int ki = kind == TFC_CONV_DEPTHWISE;
        /* a forward float32 Conv2D on the Winograd path uses its instance's kept filter transform: the filter
         * as given when it is float32 already (b is then that tensor's data) */
        void *token = NULL;
        const float *u = ct == TFC_FLOAT && pass == PASS_FWD && kind == TFC_CONV_2D && s->fc &&
                                 b_t->dtype == TFC_FLOAT && tfc_conv2d_fwd_winograd_taken(&g)
                             ? tfc_filter_cache_winograd(s->fc, k->pool, b_t, g.in_c, g.out_c, &token)
                             : NULL;
        ok = ct == TFC_BFLOAT16 ? fns_bf16[pass](k->pool, &g, p0, p1, o.data, st)
             : u                ? tfc_conv2d_fwd_ep_u_f32(k->pool, &g, p0, p1, u, o.data, NULL, st)
             : ct == TFC_FLOAT  ? fns_f32[ki][pass](k->pool, &g, p0, p1, o.data, st)
                                : fns_f64[ki][pass](k->pool, &g, p0, p1, o.data, st);
        tfc_filter_cache_put(s->fc, token);
    }
    if (ok) ok = tfc_conv_store(k, &o, out, ct, o_nchw, st);
    tfc_conv_release(&a);
    tfc_conv_release(&b);
    tfc_conv_release(&o);
    return ok;
}

static bool conv2d(tfc_kernel_ctx *k, tfc_status *st) { return conv_run(k, TFC_CONV_2D, PASS_FWD, st); }
static bool conv2d_bin(tfc_kernel_ctx *k, tfc_status *st) { return conv_run(k, TFC_CONV_2D, PASS_BWD_INPUT, st); }
static bool conv2d_bfil(tfc_kernel_ctx *k, tfc_status *st) { return conv_run(k, TFC_CONV_2D, PASS_BWD_FILTER, st); }
static bool dw(tfc_kernel_ctx *k, tfc_status *st) { return conv_run(k, TFC_CONV_DEPTHWISE, PASS_FWD, st); }
static bool dw_bin(tfc_kernel_ctx *k, tfc_status *st) { return conv_run(k, TFC_CONV_DEPTHWISE, PASS_BWD_INPUT, st); }
static bool dw_bfil(tfc_kernel_ctx *k, tfc_status *st) { return conv_run(k, TFC_CONV_DEPTHWISE, PASS_BWD_FILTER, st); }

/* Every kernel of the family runs as an instance: its window attrs parsed at creation (conv_state.c) */
#define DEF(name, fn, make) {.op = name, .device = "CPU", .compute = fn, .create = make, .destroy = tfc_conv_state_destroy}
const tfc_kernel_def tfc_cpu_kernel_defs_conv[] = {
    DEF("Conv2D", conv2d, tfc_conv_create_2d_fwd),
    DEF("Conv2DBackpropInput", conv2d_bin, tfc_conv_create_2d),
    DEF("Conv2DBackpropFilter", conv2d_bfil, tfc_conv_create_2d),
    DEF("DepthwiseConv2dNative", dw, tfc_conv_create_depthwise),
    DEF("DepthwiseConv2dNativeBackpropInput", dw_bin, tfc_conv_create_depthwise),
    DEF("DepthwiseConv2dNativeBackpropFilter", dw_bfil, tfc_conv_create_depthwise),
    DEF("MaxPool", tfc_kernel_max_pool, tfc_conv_create_pool),
    DEF("MaxPoolGrad", tfc_kernel_max_pool_grad, tfc_conv_create_pool),
    DEF("MaxPoolGradGrad", tfc_kernel_max_pool_grad_grad, tfc_conv_create_pool),
    DEF("AvgPool", tfc_kernel_avg_pool, tfc_conv_create_pool),
    DEF("AvgPoolGrad", tfc_kernel_avg_pool_grad, tfc_conv_create_pool),
    {.op = NULL},
};
