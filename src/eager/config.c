/* tf.config switches (include/tfc/config.h). */
#include <stdatomic.h>

#include "tfc/config.h"

static atomic_bool tf32 = true; /* TensorFlow's default */

void tfc_config_enable_tensor_float_32_execution(bool enabled) { atomic_store(&tf32, enabled); }
bool tfc_config_tensor_float_32_execution_enabled(void) { return atomic_load(&tf32); }
