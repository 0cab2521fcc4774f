/* CPU kernel families: one line per src/kernels/cpu/<fam>.c exporting tfc_cpu_kernels_<fam>. */
#ifndef TFC_KERNELS_CPU_KERNEL_LIST_H
#define TFC_KERNELS_CPU_KERNEL_LIST_H

#define TFC_KERNEL_FAMILIES \
    TFC_KERNEL_FAMILY(math) \
    TFC_KERNEL_FAMILY(reduction) \
    TFC_KERNEL_FAMILY(array) \
    TFC_KERNEL_FAMILY(indexing) \
    TFC_KERNEL_FAMILY(nn) \
    TFC_KERNEL_FAMILY(fused) \
    TFC_KERNEL_FAMILY(fused_pool) \
    TFC_KERNEL_FAMILY(random) \
    TFC_KERNEL_FAMILY(resource) \
    TFC_KERNEL_FAMILY(training) \
    TFC_KERNEL_FAMILY(parsing) \
    TFC_KERNEL_FAMILY(image) \
    TFC_KERNEL_FAMILY(string) \
    TFC_KERNEL_FAMILY(graph) \
    TFC_KERNEL_FAMILY(functional) \
    TFC_KERNEL_FAMILY(control_flow) \
    TFC_KERNEL_FAMILY(lookup) \

/* Families with kernels that run as instances (state between calls, or attrs parsed once at creation): <fam>.c
 * exports tfc_cpu_kernel_defs_<fam>, a table of tfc_kernel_def with create/destroy functions, ended by an entry
 * whose op is NULL (conv and linalg have only those). */
#define TFC_KERNEL_DEF_FAMILIES \
    TFC_KERNEL_DEF_FAMILY(random) \
    TFC_KERNEL_DEF_FAMILY(fused_pool) \
    TFC_KERNEL_DEF_FAMILY(conv) \
    TFC_KERNEL_DEF_FAMILY(fused) \
    TFC_KERNEL_DEF_FAMILY(linalg) \
    TFC_KERNEL_DEF_FAMILY(nn) \

#endif
