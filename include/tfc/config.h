/* tfc — process-wide runtime switches (tf.config). */
#ifndef TFC_CONFIG_H
#define TFC_CONFIG_H

#include <stdbool.h>

#include "tfc/platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.config.experimental.enable_tensor_float_32_execution / tensor_float_32_execution_enabled: whether float32
 * matrix multiplications and convolutions may run in TensorFloat-32 (10-bit mantissa inputs, float32
 * accumulation) on hardware that has it. Process-wide, as TensorFlow's; on by default, as TensorFlow's.
 * No effect on CPUs (they have no TF32 mode: tfc's float32 GEMM and convolutions are always full float32);
 * it exists so programs written for TensorFlow keep working, and a GPU backend will honour it. */
TFC_API void tfc_config_enable_tensor_float_32_execution(bool enabled);
TFC_API bool tfc_config_tensor_float_32_execution_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
