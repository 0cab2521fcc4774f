/* Parsed attrs of the GEMM and nn kernels' instances (kstate.h). */
#include <string.h>

#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/kstate.h"

static bool parse(const tfc_kernel_ctx *k, tfc_kstate *s, tfc_status *st) {
    const char *op = k->op->name;
    *s = (tfc_kstate){0};
    const tfc_attrs *a = k->attrs;
    if (!strncmp(op, "BatchMatMul", 11)) {
        s->ta = tfc_attrs_bool(a, "adj_x", false);
        s->tb = tfc_attrs_bool(a, "adj_y", false);
    } else if (!strcmp(op, "MatMul") || !strcmp(op, "_FusedMatMul")) {
        s->ta = tfc_attrs_bool(a, "transpose_a", false);
        s->tb = tfc_attrs_bool(a, "transpose_b", false);
        if (op[0] == '_' && !tfc_fused_epilogue_read(k, &s->ep, st)) return false;
    }
    if (!strncmp(op, "BiasAdd", 7) || !strncmp(op, "FusedBatchNorm", 14)) {
        const char *df = tfc_attrs_string(a, "data_format", "NHWC");
        const bool bn = op[0] == 'F';
        if (!strcmp(df, "NCHW") || (bn && !strcmp(df, "NCDHW"))) s->nchw = true;
        else if (strcmp(df, "NHWC") && !(bn && !strcmp(df, "NDHWC")))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: data_format must be NHWC or NCHW%s, got '%s'", op,
                                  bn ? " (NDHWC or NCDHW for 5-D input)" : "", df);
    }
    if (!strncmp(op, "FusedBatchNorm", 14)) {
        s->training = tfc_attrs_bool(a, "is_training", true);
        /* float attrs are float32 in TensorFlow */
        s->eps = (float)tfc_attrs_float(a, "epsilon", 1e-4);
        s->factor = (float)tfc_attrs_float(a, "exponential_avg_factor", 1.0);
    }
    return true;
}

bool tfc_kstate_create(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    tfc_kstate *s = tfc_malloc(sizeof *s);
    if (!s) return tfc_status_oom(st, k->op->name, sizeof *s);
    if (!parse(k, s, st)) {
        tfc_free(s);
        return false;
    }
    *state = s;
    return true;
}

const tfc_kstate *tfc_kstate_of(const tfc_kernel_ctx *k, tfc_kstate *tmp, tfc_status *st) {
    if (k->state) return k->state;
    return parse(k, tmp, st) ? tmp : NULL;
}

void tfc_kstate_destroy(void *state) { tfc_free(state); }
