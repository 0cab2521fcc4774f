/* Array kernels. */
#include <string.h>

#include "kernels/cpu/kernels.h"

static bool identity(tfc_kernel_ctx *k, tfc_status *st) { return tfc_kernel_forward_input(k, 0, 0, NULL, st); }

static bool fill_value(tfc_kernel_ctx *k, double v, tfc_status *st) {
    tfc_tensor *o = k->out[0];
    if (o->dtype == TFC_FLOAT) {
        float *p = o->data;
        for (int64_t i = 0; i < o->num_elements; i++) p[i] = (float)v;
    } else {
        for (int64_t i = 0; i < o->num_elements; i++) tfc_dtype_set_f64(o->dtype, o->data, i, v);
    }
    return true;
}
static bool zeros_like(tfc_kernel_ctx *k, tfc_status *st) { return fill_value(k, 0.0, st); }
static bool ones_like(tfc_kernel_ctx *k, tfc_status *st) { return fill_value(k, 1.0, st); }

const tfc_kernel_reg tfc_cpu_kernels_array[] = {
    {"Identity", identity}, {"ZerosLike", zeros_like}, {"OnesLike", ones_like}, {NULL, NULL},
};
