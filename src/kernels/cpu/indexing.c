/* indexing kernels. */
#include "kernels/cpu/kernels.h"

const tfc_kernel_reg tfc_cpu_kernels_indexing[] = {{NULL, NULL}};
