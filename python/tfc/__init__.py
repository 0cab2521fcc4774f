"""tfc: TensorFlow 2 in C, from Python (a thin ctypes binding over libtfc.so).

    import tfc
    x = tfc.constant([[1.0, 2.0]])
    with tfc.GradientTape() as tape:
        tape.watch(x)
        y = tfc.raw_ops.Mul(x=x, y=x)
    tape.gradient(y, x).numpy()    # [[2., 4.]]

The library is found through the TFC_LIBRARY environment variable, else the libtfc.so installed inside the
package (`pip install .`), else build/rel/libtfc.so of this tree.
"""
import ctypes as _ctypes

from . import dtypes, errors
from . import _lib
from .dtypes import (DType, as_dtype, bfloat16, bool_, double, float16, float32, float64, half, int8, int16, int32,
                     int64, resource, string, uint8)
from .errors import *  # noqa: F401,F403  (OpError, InvalidArgumentError, ...)
from .ops import execute, op_info, op_names, raw_ops
from .tape import GradientTape, UnconnectedGradients
from .tensor import Tensor, constant, convert_to_tensor
from .variables import Variable
from .function import Function, TensorSpec, cond, function, while_loop
from . import config  # tfc.config: devices (python/tfc/config.py)
from . import keras  # tfc.keras: the Keras door (python/tfc/keras.py)
from . import train  # tfc.train: checkpoints (python/tfc/train.py)
from . import summary  # tfc.summary: event files for TensorBoard (python/tfc/summary.py)
from . import profiler  # tfc.profiler: traces for TensorBoard's profile plugin and Perfetto

bool = bool_  # tf.bool  # noqa: A001

__version__ = _lib.lib.tfc_version().decode()  # the library's (tf.__version__)
library_path = _lib.path


def set_seed(seed):
    """tf.random.set_seed: sets the global seed of the default context and resets the op-seed counter."""
    _lib.lib.tfc_ctx_set_seed(_lib.ctx(), _ctypes.c_int64(int(seed)))
