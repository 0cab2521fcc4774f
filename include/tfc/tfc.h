/* tfc — the TensorFlow 2 system in C. Umbrella header: every module (the typed op wrappers are in tfc/ops/). */
#ifndef TFC_TFC_H
#define TFC_TFC_H

#include "tfc/platform.h"
#include "tfc/status.h"
#include "tfc/dtype.h"
#include "tfc/shape.h"
#include "tfc/tstring.h"
#include "tfc/tensor.h"
#include "tfc/attr.h"
#include "tfc/op.h"
#include "tfc/eager.h"
#include "tfc/example.h"
#include "tfc/data.h"
#include "tfc/keras.h"
#include "tfc/distribute.h"

#endif
