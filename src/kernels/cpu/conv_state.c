/* Conv/pool kernel instances (conv_internal.h): the attrs parsed once when an instance is created (an eager
 * call's first with these attrs, a graph function's instantiation), so a call reads them from the state
 * instead of looking up strings; forward convolutions also keep their filters' Winograd transforms. */
#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/filter_cache.h"
#include "ops/fused_ops.h"

bool tfc_fused_epilogue_read(const tfc_kernel_ctx *k, tfc_epilogue *ep, tfc_status *st) {
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(k->op->name, k->attrs, &fs, st)) return false;
    static const tfc_epi_act map[] = {[TFC_FUSED_LINEAR] = TFC_EPI_NONE, [TFC_FUSED_RELU] = TFC_EPI_RELU,
                                      [TFC_FUSED_RELU6] = TFC_EPI_RELU6, [TFC_FUSED_ELU] = TFC_EPI_ELU,
                                      [TFC_FUSED_LEAKY_RELU] = TFC_EPI_LEAKY_RELU};
    *ep = (tfc_epilogue){.act = map[fs.act], .alpha = fs.alpha};
    return true;
}

bool tfc_conv_state_init(const tfc_kernel_ctx *k, tfc_conv_kind kind, bool fused, bool filter_cache,
                         tfc_conv_state *s, tfc_status *st) {
    *s = (tfc_conv_state){.kind = kind};
    if (!tfc_conv_attrs_parse(k->op->name, kind, k->attrs, &s->a, st)) return false;
    if (fused && !tfc_fused_epilogue_read(k, &s->ep, st)) return false;
    if (filter_cache && !(s->fc = tfc_filter_cache_new())) return tfc_status_oom(st, k->op->name, 0);
    return true;
}

const tfc_conv_state *tfc_conv_state_of(const tfc_kernel_ctx *k, tfc_conv_kind kind, bool fused,
                                        tfc_conv_state *tmp, tfc_status *st) {
    if (k->state) return k->state;
    return tfc_conv_state_init(k, kind, fused, false, tmp, st) ? tmp : NULL;
}

static bool create(tfc_kernel_ctx *k, void **state, tfc_conv_kind kind, bool fused, bool filter_cache,
                   tfc_status *st) {
    tfc_conv_state *s = tfc_malloc(sizeof *s);
    if (!s) return tfc_status_oom(st, k->op->name, sizeof *s);
    if (!tfc_conv_state_init(k, kind, fused, filter_cache, s, st)) {
        tfc_free(s);
        return false;
    }
    *state = s;
    return true;
}

bool tfc_conv_create_2d(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    return create(k, state, TFC_CONV_2D, false, false, st);
}
bool tfc_conv_create_2d_fwd(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    return create(k, state, TFC_CONV_2D, false, true, st);
}
bool tfc_conv_create_fused(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    return create(k, state, TFC_CONV_2D, true, true, st);
}
bool tfc_conv_create_depthwise(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    return create(k, state, TFC_CONV_DEPTHWISE, false, false, st);
}
bool tfc_conv_create_pool(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    return create(k, state, TFC_CONV_POOL, false, false, st);
}

void tfc_conv_state_destroy(void *state) {
    tfc_conv_state *s = state;
    if (!s) return;
    tfc_filter_cache_free(s->fc);
    tfc_free(s);
}
