/* Kernels of the fused ops _FusedConv2D and _FusedMatMul (src/ops/fused_ops.c): y = act(op(x, w) + bias).
 *
 * float32 applies the bias and activation in the GEMM's tile stores (epilogue.h): in the implicit-GEMM and
 * im2col convolutions alike, so no pass over the output follows. half and bfloat16 compute the same way in
 * float (the conv/GEMM staging widens them) and round once at the end; float64 (the reference dtype) runs
 * OpenBLAS and then the epilogue over the output rows. _FusedBiasAddGrad, their gradient's first step,
 * sums the bias gradient from each block of dz while the block is in L1. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/filter_cache.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/kstate.h"
#include "kernels/cpu/linalg_blas.h"
#include "kernels/cpu/nn_internal.h"
#include "ops/fused_ops.h"

/* The bias in dtype ct: the tensor's own data when it has that dtype, else a converted copy in *owned. */
static const void *bias_as(tfc_kernel_ctx *k, const tfc_tensor *b, tfc_dtype ct, void **owned, tfc_status *st) {
    *owned = NULL;
    if (b->dtype == ct) return b->data;
    size_t bytes = (size_t)(b->num_elements > 0 ? b->num_elements : 1) * tfc_dtype_size(ct);
    if (!(*owned = tfc_malloc(bytes))) {
        tfc_status_oom(st, k->op->name, bytes);
        return NULL;
    }
    tfc_conv_convert(k->pool, b->data, b->dtype, *owned, ct, b->num_elements);
    return *owned;
}

/* _FusedConv2D(input, filter, bias): the forward convolution of conv.c with the epilogue, on the NHWC
 * compute form (NCHW and half/bfloat16 tensors staged through it as Conv2D's are). */
static bool fused_conv2d(tfc_kernel_ctx *k, tfc_status *st) {
    const char *op = k->op->name;
    tfc_conv_state tmp;
    const tfc_conv_state *s = tfc_conv_state_of(k, TFC_CONV_2D, true, &tmp, st);
    if (!s) return false;
    tfc_epilogue ep = s->ep;
    tfc_conv_geom g;
    if (!tfc_conv_geom_make(op, TFC_CONV_2D, &s->a, k->in[0]->shape.dims, k->in[1]->shape.dims, &g, st)) return false;
    if (!k->out[0]) { /* shape left unknown by a graph trace */
        int64_t od[4];
        tfc_conv_dims(g.nchw, g.batch, g.out_h, g.out_w, g.out_c, od);
        if (!tfc_kernel_alloc_output(k, 0, od, 4, st)) return false;
    }
    tfc_tensor *out = k->out[0];
    if (out->num_elements == 0) return true;
    const int64_t K = g.k_h * g.k_w * g.in_c;
    if (K > INT_MAX / 2 || g.out_c > INT_MAX / 2 || g.out_w > INT_MAX / 2)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: filter of %lld x %lld elements is too large for the BLAS backend",
                              op, (long long)K, (long long)g.out_c);
    tfc_dtype ct = tfc_conv_compute_dtype(out->dtype);
    conv_buf x = {0}, f = {0}, y = {0};
    void *bias_owned = NULL;
    bool ok = tfc_conv_load(k, k->in[0], ct, g.nchw, &x, st) && tfc_conv_load(k, k->in[1], ct, false, &f, st) &&
              tfc_conv_out(out, ct, g.nchw, &y, st) && (ep.bias = bias_as(k, k->in[2], ct, &bias_owned, st));
    if (ok && ct == TFC_FLOAT) {
        /* the instance's kept Winograd transform of a float32 filter (filter_cache.h) where that path runs */
        void *token = NULL;
        const float *u = s->fc && k->in[1]->dtype == TFC_FLOAT && tfc_conv2d_fwd_winograd_taken(&g)
                             ? tfc_filter_cache_winograd(s->fc, k->pool, k->in[1], g.in_c, g.out_c, &token)
                             : NULL;
        ok = tfc_conv2d_fwd_ep_u_f32(k->pool, &g, x.data, f.data, u, y.data, &ep, st);
        tfc_filter_cache_put(s->fc, token);
    } else if (ok) {
        ok = tfc_conv2d_fwd_ep_f64(k->pool, &g, x.data, f.data, y.data, &ep, st);
    }
    if (ok) ok = tfc_conv_store(k, &y, out, ct, g.nchw, st);
    tfc_conv_release(&x);
    tfc_conv_release(&f);
    tfc_conv_release(&y);
    tfc_free(bias_owned);
    return ok;
}

/* _FusedMatMul(a, b, bias): C [m, n] = act(op(A) op(B) + bias). */
static bool fused_matmul(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_kstate tmp;
    const tfc_kstate *s = tfc_kstate_of(k, &tmp, st);
    if (!s) return false;
    tfc_epilogue ep = s->ep;
    const bool ta = s->ta, tb = s->tb;
    const tfc_tensor *a = k->in[0], *b = k->in[1];
    if (!k->out[0]) { /* shape left unknown by a graph trace */
        const int64_t od[2] = {a->shape.dims[ta ? 1 : 0], b->shape.dims[tb ? 0 : 1]};
        if (!tfc_kernel_alloc_output(k, 0, od, 2, st)) return false;
    }
    tfc_tensor *out = k->out[0];
    const int64_t m = out->shape.dims[0], n = out->shape.dims[1], kk = a->shape.dims[ta ? 0 : 1];
    const int64_t lda = ta ? m : kk, ldb = tb ? kk : n;
    if (out->num_elements == 0) return true;
    const tfc_dtype dt = out->dtype;
    if (dt == TFC_DOUBLE) {
        ep.bias = k->in[2]->data;
        if (kk == 0) {
            memset(out->data, 0, (size_t)out->num_elements * sizeof(double));
        } else {
            if (m > INT_MAX || n > INT_MAX || kk > INT_MAX)
                return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: [%lld, %lld] x [%lld, %lld] is too large for the BLAS backend",
                                      k->op->name, (long long)m, (long long)kk, (long long)kk, (long long)n);
            tfc_blas_set_threads(k);
            cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n,
                        (int)kk, 1.0, a->data, (int)lda, b->data, (int)ldb, 0.0, out->data, (int)n);
        }
        tfc_epilogue_rows(k->pool, &ep, true, out->data, m, n);
        return true;
    }
    if (dt == TFC_FLOAT) {
        ep.bias = k->in[2]->data;
        tfc_sgemm_ep(ta, tb, m, n, kk, a->data, lda, b->data, ldb, out->data, n, &ep, k->pool);
        return true;
    }
    if (dt != TFC_HALF && dt != TFC_BFLOAT16) return tfc_kernel_unimplemented(k, dt, st);
    /* half / bfloat16: float copies of the operands, a float product, one rounding at the end */
    const int64_t na = a->num_elements, nb = b->num_elements, nc = out->num_elements;
    size_t bytes = (size_t)(na + nb + nc + n) * sizeof(float);
    float *buf = tfc_malloc(bytes);
    if (!buf) return tfc_status_oom(st, k->op->name, bytes);
    float *af = buf, *bf = af + na, *cf = bf + nb, *biasf = cf + nc;
    tfc_conv_convert(k->pool, a->data, dt, af, TFC_FLOAT, na);
    tfc_conv_convert(k->pool, b->data, dt, bf, TFC_FLOAT, nb);
    tfc_conv_convert(k->pool, k->in[2]->data, dt, biasf, TFC_FLOAT, n);
    ep.bias = biasf;
    tfc_sgemm_ep(ta, tb, m, n, kk, af, lda, bf, ldb, cf, n, &ep, k->pool);
    tfc_conv_convert(k->pool, cf, TFC_FLOAT, out->data, dt, nc);
    tfc_free(buf);
    return true;
}

/* _FusedBiasAddGrad(g, x) on rows of `ch` channels: dz = act'(g, x), db = column sums of dz. The rows are
 * cut into the chunks BiasAddGrad uses (tfc_nn_reduce_chunks), each summed in float over blocks of 64 rows
 * into double, then the chunks added in order: the sums BiasAddGrad would form on dz, bit for bit. */
typedef struct {
    const tfc_nn_simd *simd;
    act_kind kind;
    float alpha;
    bool dbl;
    const void *g, *x;
    void *dz;
    int64_t rows, ch, rows_per_chunk;
    double *partial; /* [chunks][2 * ch]: ch sums, then ch doubles of float scratch */
} bias_grad_job;

static void bias_grad_f64_rows(const bias_grad_job *j, int64_t rb, int64_t re, double *part) {
    const double *g = j->g, *x = j->x;
    double *dz = j->dz;
    const double al = j->alpha;
    for (int64_t r = rb; r < re; r++) {
        const double *gr = g + r * j->ch, *xr = x + r * j->ch;
        double *d = dz + r * j->ch;
        for (int64_t c = 0; c < j->ch; c++) {
            double v = gr[c], f = xr[c];
            switch (j->kind) {
            case ACT_RELU: v = v * (double)(f > 0); break;
            case ACT_RELU6: v = v * (double)((f > 0) & (f < 6)); break;
            case ACT_LEAKY: v = f > 0 ? v : v * al; break;
            default: v = f < 0 ? v * (f + 1) : v; break; /* Elu, from its output */
            }
            d[c] = v;
            part[c] += v;
        }
    }
}

/* (nn_internal.h) with the running sums of 32 columns in registers rather than reloaded from blk per row.
 * The clones are static behind a plain entry point: GCC exports a non-static target_clones function's
 * dispatcher from libtfc.so despite -fvisibility=hidden. */
TFC_SIMD_CLONES static void block_col_sums(const float *restrict d, int64_t n, int64_t ch, float *restrict blk) {
    int64_t c = 0;
    for (; c + 32 <= ch; c += 32) {
        float a[32] = {0};
        for (int64_t r = 0; r < n; r++)
            for (int i = 0; i < 32; i++) a[i] += d[r * ch + c + i];
        memcpy(blk + c, a, sizeof a);
    }
    for (; c + 8 <= ch; c += 8) {
        float a[8] = {0};
        for (int64_t r = 0; r < n; r++)
            for (int i = 0; i < 8; i++) a[i] += d[r * ch + c + i];
        memcpy(blk + c, a, sizeof a);
    }
    for (; c < ch; c++) {
        float a = 0;
        for (int64_t r = 0; r < n; r++) a += d[r * ch + c];
        blk[c] = a;
    }
}

void tfc_nn_block_col_sums(const float *restrict d, int64_t n, int64_t ch, float *restrict blk) {
    block_col_sums(d, n, ch, blk);
}

static void bias_grad_chunks(void *arg, int64_t begin, int64_t end) {
    const bias_grad_job *j = arg;
    const int64_t ch = j->ch;
    for (int64_t chunk = begin; chunk < end; chunk++) {
        double *part = j->partial + chunk * 2 * ch;
        const int64_t rb = chunk * j->rows_per_chunk, re = rb + j->rows_per_chunk < j->rows ? rb + j->rows_per_chunk : j->rows;
        for (int64_t c = 0; c < ch; c++) part[c] = 0;
        if (j->dbl) {
            bias_grad_f64_rows(j, rb, re, part);
            continue;
        }
        float *blk = (float *)(part + ch);
        for (int64_t r0 = rb; r0 < re; r0 += 64) {
            const int64_t r1 = re - r0 < 64 ? re : r0 + 64;
            float *dz = (float *)j->dz + r0 * ch;
            j->simd->act_bwd(j->kind, j->alpha, (const float *)j->g + r0 * ch, (const float *)j->x + r0 * ch, dz,
                             (r1 - r0) * ch);
            tfc_nn_block_col_sums(dz, r1 - r0, ch, blk);
            for (int64_t c = 0; c < ch; c++) part[c] += (double)blk[c];
        }
    }
}

static bool fused_bias_add_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *g = k->in[0];
    const char *act = tfc_attrs_string(k->attrs, "activation", "Relu");
    bias_grad_job j = {.simd = tfc_nn_simd_get(), .alpha = (float)tfc_attrs_float(k->attrs, "alpha", 0.2),
                       .dbl = g->dtype == TFC_DOUBLE, .g = g->data, .x = k->in[1]->data};
    j.kind = !strcmp(act, "Relu6") ? ACT_RELU6 : !strcmp(act, "Elu") ? ACT_ELU : !strcmp(act, "LeakyRelu") ? ACT_LEAKY : ACT_RELU;
    if (g->dtype != TFC_FLOAT && g->dtype != TFC_DOUBLE) return tfc_kernel_unimplemented(k, g->dtype, st);
    const tfc_shape *s = &g->shape;
    j.ch = s->dims[s->rank - 1];
    j.rows = tfc_dims_product(s->dims, 0, s->rank - 1);
    if (!k->out[0] && !tfc_kernel_alloc_output(k, 0, s->dims, s->rank, st)) return false;
    if (!k->out[1] && !tfc_kernel_alloc_output(k, 1, &j.ch, 1, st)) return false;
    j.dz = k->out[0]->data;
    if (j.ch == 0) return true;
    const int64_t chunks = j.rows > 0 ? tfc_nn_reduce_chunks(k, j.rows, j.ch) : 1;
    const size_t bytes = (size_t)(chunks * 2 * j.ch) * sizeof(double);
    double *partial = tfc_malloc(bytes);
    if (!partial) return tfc_status_oom(st, k->op->name, bytes);
    j.partial = partial;
    j.rows_per_chunk = (j.rows + chunks - 1) / chunks;
    if (j.rows > 0) tfc_parallel_for(k->pool, chunks, j.rows_per_chunk * j.ch * 2, bias_grad_chunks, &j);
    else
        for (int64_t c = 0; c < j.ch; c++) partial[c] = 0;
    for (int64_t i = 1; i < chunks && j.rows > 0; i++)
        for (int64_t c = 0; c < j.ch; c++) partial[c] += partial[i * 2 * j.ch + c];
    if (j.dbl) memcpy(k->out[1]->data, partial, (size_t)j.ch * sizeof(double));
    else
        for (int64_t c = 0; c < j.ch; c++) ((float *)k->out[1]->data)[c] = (float)partial[c];
    tfc_free(partial);
    return true;
}

const tfc_kernel_reg tfc_cpu_kernels_fused[] = {
    {"_FusedBiasAddGrad", fused_bias_add_grad},
    {NULL, NULL},
};

/* instances: attrs parsed at creation; _FusedConv2D keeps its filters' Winograd transforms */
const tfc_kernel_def tfc_cpu_kernel_defs_fused[] = {
    {.op = "_FusedConv2D", .device = "CPU", .compute = fused_conv2d, .create = tfc_conv_create_fused,
     .destroy = tfc_conv_state_destroy},
    TFC_KSTATE_DEF("_FusedMatMul", fused_matmul),
    {.op = NULL},
};
