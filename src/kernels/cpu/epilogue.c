/* The epilogue of fused products and convolutions applied to rows of an output (see epilogue.h): the
 * paths that have no GEMM kernel doing it in registers. The float32 activations run the NN SIMD kernels
 * (the same code as the Relu, Relu6, LeakyRelu and Elu ops), so every path gives those ops' values. */
#include <math.h>

#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/nn_internal.h"

static act_kind nn_kind(tfc_epi_act a) {
    switch (a) {
    case TFC_EPI_RELU6: return ACT_RELU6;
    case TFC_EPI_ELU: return ACT_ELU;
    case TFC_EPI_LEAKY_RELU: return ACT_LEAKY;
    default: return ACT_RELU;
    }
}

void tfc_epilogue_act_f32(const tfc_epilogue *ep, float *y, int64_t n) {
    if (ep->act == TFC_EPI_NONE || n <= 0) return;
    tfc_nn_simd_get()->act_fwd(nn_kind(ep->act), ep->alpha, y, y, n);
}

void tfc_epilogue_f32(const tfc_epilogue *ep, float *y, int64_t m, int64_t n, int64_t ldy, int64_t col0) {
    const float *bias = ep->bias ? (const float *)ep->bias + col0 : NULL;
    for (int64_t i = 0; i < m; i++) {
        float *restrict r = y + i * ldy;
        if (bias)
            for (int64_t j = 0; j < n; j++) r[j] += bias[j];
        tfc_epilogue_act_f32(ep, r, n);
    }
}

void tfc_epilogue_f64(const tfc_epilogue *ep, double *y, int64_t m, int64_t n, int64_t ldy, int64_t col0) {
    const double *bias = ep->bias ? (const double *)ep->bias + col0 : NULL;
    const double al = ep->alpha;
    for (int64_t i = 0; i < m; i++) {
        double *restrict r = y + i * ldy;
        if (bias)
            for (int64_t j = 0; j < n; j++) r[j] += bias[j];
        switch (ep->act) {
        case TFC_EPI_RELU:
            for (int64_t j = 0; j < n; j++) r[j] = r[j] != r[j] ? r[j] : r[j] > 0 ? r[j] : 0.0;
            break;
        case TFC_EPI_RELU6:
            for (int64_t j = 0; j < n; j++) r[j] = r[j] != r[j] ? r[j] : r[j] > 0 ? (r[j] < 6 ? r[j] : 6.0) : 0.0;
            break;
        case TFC_EPI_LEAKY_RELU:
            for (int64_t j = 0; j < n; j++) r[j] = r[j] > 0 ? r[j] : r[j] * al;
            break;
        case TFC_EPI_ELU:
            for (int64_t j = 0; j < n; j++) r[j] = r[j] < 0 ? expm1(r[j]) : r[j];
            break;
        default: break;
        }
    }
}

typedef struct {
    const tfc_epilogue *ep;
    bool dbl;
    void *y;
    int64_t n;
} rows_job;

static void rows_range(void *arg, int64_t b, int64_t e) {
    const rows_job *j = arg;
    if (j->dbl) tfc_epilogue_f64(j->ep, (double *)j->y + b * j->n, e - b, j->n, j->n, 0);
    else tfc_epilogue_f32(j->ep, (float *)j->y + b * j->n, e - b, j->n, j->n, 0);
}

void tfc_epilogue_rows(tfc_threadpool *pool, const tfc_epilogue *ep, bool dbl, void *y, int64_t rows, int64_t n) {
    if (rows <= 0 || n <= 0 || (!ep->bias && ep->act == TFC_EPI_NONE)) return;
    rows_job j = {ep, dbl, y, n};
    tfc_parallel_for(pool, rows, n * (ep->act == TFC_EPI_ELU ? 20 : 2), rows_range, &j);
}
