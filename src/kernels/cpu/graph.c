/* CPU kernels of the graph ops: Const gives its value (sharing the buffer), NoOp does nothing. */
#include <stdio.h>

#include "core/tensor_internal.h"
#include "kernels/cpu/kernels.h"

static bool const_k(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_attr *v = tfc_attrs_find(k->attrs, "value");
    tfc_tensor *val = (tfc_tensor *)v->v.tensor;
    tfc_tensor *t = tfc_tensor_share(val, &val->shape, st);
    if (!t) return false;
    tfc_tensor_unref(k->out[0]);
    k->out[0] = t;
    return true;
}

static bool no_op(tfc_kernel_ctx *k, tfc_status *st) { return true; }

static int64_t ival(const tfc_tensor *t, int64_t i) {
    return t->dtype == TFC_INT32 ? ((const int32_t *)t->data)[i] : ((const int64_t *)t->data)[i];
}

/* As TensorFlow's BCast: shapes aligned at the end; a dim is reduced for an input that lacks it or has it as 1
 * (dims that are 1 on both sides are reduced for both). */
static bool broadcast_gradient_args(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *a = k->in[0], *b = k->in[1];
    const int64_t na = a->num_elements, nb = b->num_elements, n = na > nb ? na : nb;
    int64_t r0[64], r1[64], n0 = 0, n1 = 0;
    if (n > 64) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "BroadcastGradientArgs: rank %lld is too large", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        int64_t da = i - (n - na) >= 0 ? ival(a, i - (n - na)) : 1, db = i - (n - nb) >= 0 ? ival(b, i - (n - nb)) : 1;
        bool a_missing = i < n - na, b_missing = i < n - nb;
        if (da != db && da != 1 && db != 1) {
            char sa[256] = "", sb[256] = "";
            for (int64_t j = 0, w = 0; j < na && w < 240; j++) w += snprintf(sa + w, sizeof sa - (size_t)w, "%s%lld", j ? "," : "", (long long)ival(a, j));
            for (int64_t j = 0, w = 0; j < nb && w < 240; j++) w += snprintf(sb + w, sizeof sb - (size_t)w, "%s%lld", j ? "," : "", (long long)ival(b, j));
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Incompatible shapes: [%s] vs. [%s]", sa, sb);
        }
        if (a_missing || (da == 1 && (db != 1 || !b_missing))) r0[n0++] = i;
        if (b_missing || (db == 1 && (da != 1 || !a_missing))) r1[n1++] = i;
    }
    int64_t *r[2] = {r0, r1}, cnt[2] = {n0, n1};
    for (int o = 0; o < 2; o++) {
        if (!tfc_kernel_alloc_output(k, o, &cnt[o], 1, st)) return false;
        for (int64_t i = 0; i < cnt[o]; i++) {
            if (a->dtype == TFC_INT32) ((int32_t *)k->out[o]->data)[i] = (int32_t)r[o][i];
            else ((int64_t *)k->out[o]->data)[i] = r[o][i];
        }
    }
    return true;
}

const tfc_kernel_reg tfc_cpu_kernels_graph[] = {
    {"Const", const_k}, {"NoOp", no_op}, {"BroadcastGradientArgs", broadcast_gradient_args}, {NULL, NULL},
};
