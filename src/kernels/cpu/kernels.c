#include <pthread.h>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/kernels.h"
#include "ops/registry.h"

#define TFC_KERNEL_FAMILY(fam) extern const tfc_kernel_reg tfc_cpu_kernels_##fam[];
TFC_KERNEL_FAMILIES
#undef TFC_KERNEL_FAMILY
#define TFC_KERNEL_DEF_FAMILY(fam) extern const tfc_kernel_def tfc_cpu_kernel_defs_##fam[];
TFC_KERNEL_DEF_FAMILIES
#undef TFC_KERNEL_DEF_FAMILY

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void) {
    tfc_status st = TFC_STATUS_INIT;
#define TFC_KERNEL_FAMILY(fam)                                                   \
    for (const tfc_kernel_reg *r = tfc_cpu_kernels_##fam; r->op; r++)               \
        if (!tfc_kernel_register(r->op, "CPU", r->fn, &st)) tfc_log(TFC_LOG_ERROR, "%s", st.msg);
    TFC_KERNEL_FAMILIES
#undef TFC_KERNEL_FAMILY
#define TFC_KERNEL_DEF_FAMILY(fam)                                                 \
    for (const tfc_kernel_def *d = tfc_cpu_kernel_defs_##fam; d->op; d++)             \
        if (!tfc_kernel_register_def(d, &st)) tfc_log(TFC_LOG_ERROR, "%s", st.msg);
    TFC_KERNEL_DEF_FAMILIES
#undef TFC_KERNEL_DEF_FAMILY
}

void tfc_cpu_kernels_init(void) {
    tfc_registry_init();
    pthread_once(&once, init);
}

bool tfc_kernel_unimplemented(const tfc_kernel_ctx *k, tfc_dtype dt, tfc_status *st) {
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: no CPU kernel for dtype %s", k->op->name, tfc_dtype_name(dt));
}
