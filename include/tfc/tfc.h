/* tfc — the TensorFlow 2 system in C. Umbrella header: `#include "tfc/tfc.h"` declares every public function.
 * A new public header adds one #include line below (the test api.umbrella fails and names the header until
 * it does). */
#ifndef TFC_TFC_H
#define TFC_TFC_H

#include "tfc/platform.h"
#include "tfc/version.h"
#include "tfc/status.h"
#include "tfc/dtype.h"
#include "tfc/shape.h"
#include "tfc/tstring.h"
#include "tfc/tensor.h"
#include "tfc/attr.h"
#include "tfc/op.h"
#include "tfc/device.h"
#include "tfc/eager.h"
#include "tfc/config.h"
#include "tfc/function.h"
#include "tfc/control_flow.h"
#include "tfc/example.h"
#include "tfc/data.h"
#include "tfc/data_more.h"
#include "tfc/data_save.h"
#include "tfc/graphdef.h"
#include "tfc/data_graph.h"
#include "tfc/data_service.h"
#include "tfc/saved_model.h"
#include "tfc/serving.h"
#include "tfc/npy.h"
#include "tfc/summary.h"
#include "tfc/profiler.h"
#include "tfc/keras.h"
#include "tfc/keras/preprocessing.h"
#include "tfc/distribute.h"
#include "tfc/checkpoint.h"
#include "tfc/data_checkpoint.h"
#include "tfc/parameter_server.h"

/* Typed op wrappers, one header per family (tf.math, tf.nn, ...). */
#include "tfc/ops/array.h"
#include "tfc/ops/conv.h"
#include "tfc/ops/image.h"
#include "tfc/ops/indexing.h"
#include "tfc/ops/linalg.h"
#include "tfc/ops/math.h"
#include "tfc/ops/nn.h"
#include "tfc/ops/parsing.h"
#include "tfc/ops/random.h"
#include "tfc/ops/reduction.h"
#include "tfc/ops/string.h"

#endif
