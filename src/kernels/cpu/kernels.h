/* Internal: CPU kernel tables and shared helpers. Each family file (src/kernels/cpu/<fam>.c) exports a
 * table `tfc_cpu_kernels_<fam>` ({op name, kernel}, ..., {NULL, NULL}); kernel_list.h lists the families.
 * A kernel with state between calls is a tfc_kernel_def with create and destroy functions instead, in the
 * family's `tfc_cpu_kernel_defs_<fam>` (kernel_list.h): it then runs as an instance (device/device.h). */
#ifndef TFC_KERNELS_CPU_KERNELS_H
#define TFC_KERNELS_CPU_KERNELS_H

#include "core/tensor_internal.h"
#include "device/device.h"
#include "tfc/op.h"

/* Hot loops are compiled for several x86-64 levels and picked at load time (the library itself targets the
 * x86-64 baseline, SSE2 only): AVX-512 / AVX2+FMA versions vectorise the per-channel loops 2-4x wider.
 * Not under ThreadSanitizer: the ifunc resolvers would run, instrumented, before its runtime starts. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__ELF__) && !defined(__SANITIZE_THREAD__)
#define TFC_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TFC_SIMD_CLONES
#endif

typedef struct tfc_kernel_reg {
    const char *op;
    tfc_kernel_fn fn;
} tfc_kernel_reg;

/* Registers every built-in CPU kernel (once; thread-safe). Called by tfc_ctx_new. */
void tfc_cpu_kernels_init(void);

/* UNIMPLEMENTED "<op>: no CPU kernel for dtype <dt>". Returns false. */
bool tfc_kernel_unimplemented(const tfc_kernel_ctx *k, tfc_dtype dt, tfc_status *st);

/* Dtype dispatch for kernels: expands BODY once per dtype with `T` typedef'd to the C element type.
 * half and bfloat16 are handled by kernels through float conversion, so they are not in this macro. */
#define TFC_CASE(DT, CT, BODY) case DT: { typedef CT T; BODY; } break;
#define TFC_SWITCH_REAL_NOHALF(dt, BODY, DEFAULT)                                          \
    switch (dt) {                                                                          \
        TFC_CASE(TFC_FLOAT, float, BODY) TFC_CASE(TFC_DOUBLE, double, BODY)                \
        TFC_CASE(TFC_INT8, int8_t, BODY) TFC_CASE(TFC_UINT8, uint8_t, BODY)                \
        TFC_CASE(TFC_INT16, int16_t, BODY) TFC_CASE(TFC_INT32, int32_t, BODY)              \
        TFC_CASE(TFC_INT64, int64_t, BODY)                                                 \
    default: DEFAULT;                                                                      \
    }

#endif
