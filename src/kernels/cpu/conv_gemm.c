/* GEMM-based Conv2D and its backprops on NHWC data: im2col + OpenBLAS, instantiated for float and double
 * from conv_gemm_tmpl.h. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "kernels/cpu/conv_internal.h"

#define T float
#define SFX f32
#define GEMM cblas_sgemm
#include "kernels/cpu/conv_gemm_tmpl.h"
#undef T
#undef SFX
#undef GEMM

#define T double
#define SFX f64
#define GEMM cblas_dgemm
#include "kernels/cpu/conv_gemm_tmpl.h"
#undef T
#undef SFX
#undef GEMM
