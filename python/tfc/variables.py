"""tfc.Variable (tf.Variable on a resource handle)."""
import ctypes

import numpy as np

from . import dtypes as _dt
from . import _lib
from ._lib import Status, check, lib
from .tensor import Tensor, constant


class Variable:
    """tf.Variable: a mutable value behind a resource handle. Reads (read_value, use as an op input) are
    ReadVariableOp calls, recorded on tapes; a trainable float variable read under a GradientTape with
    watch_accessed_variables=True is watched automatically. dtype and shape are fixed by the initial value."""

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if callable(initial_value):
            initial_value = initial_value()
        init = constant(initial_value, dtype=dtype) if not isinstance(initial_value, Tensor) or dtype else initial_value
        st = Status()
        h = lib.tfc_variable_new(_lib.ctx(), init.handle, bool(trainable), name.encode() if name else None,
                                 ctypes.byref(st))
        check(st)
        self._v = ctypes.c_void_p(h)
        self._trainable = bool(trainable)

    def __del__(self):
        v = getattr(self, "_v", None)
        if v and lib is not None and getattr(lib, "tfc_variable_free", None) is not None:
            lib.tfc_variable_free(v)
            self._v = None

    @property
    def dtype(self):
        return _dt.from_enum(lib.tfc_variable_dtype(self._v))

    @property
    def shape(self):
        s = lib.tfc_variable_shape(self._v).contents
        return tuple(int(s.dims[i]) for i in range(s.rank))

    @property
    def name(self):
        n = lib.tfc_variable_name(self._v)
        return n.decode() if n else None

    @property
    def trainable(self):
        """As passed at creation (as tf.Variable); only float variables are ever differentiated."""
        return self._trainable

    @property
    def handle(self):
        """The resource handle (a Tensor of dtype resource), e.g. for raw_ops.ReadVariableOp(resource=...)."""
        return Tensor(lib.tfc_tensor_ref(lib.tfc_variable_handle(self._v)))

    def read_value(self):
        """The current value via ReadVariableOp (recorded on tapes)."""
        st = Status()
        h = lib.tfc_variable_read(_lib.ctx(), self._v, ctypes.byref(st))
        check(st)
        return Tensor(_lib.owned(h))

    value = read_value

    def numpy(self):
        """A numpy copy of the current value (not recorded on tapes)."""
        return Tensor(lib.tfc_tensor_ref(lib.tfc_variable_value(self._v))).numpy()

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.numpy())
        return a.astype(dtype) if dtype is not None else a

    def _assign(self, fn, value):
        t = constant(value, dtype=self.dtype) if not isinstance(value, Tensor) else value
        st = Status()
        fn(_lib.ctx(), self._v, t.handle, ctypes.byref(st))
        check(st)
        return self

    def assign(self, value):
        return self._assign(lib.tfc_variable_assign, value)

    def assign_add(self, delta):
        return self._assign(lib.tfc_variable_assign_add, delta)

    def assign_sub(self, delta):
        return self._assign(lib.tfc_variable_assign_sub, delta)

    def __repr__(self):
        return "<tfc.Variable %r shape=%s dtype=%s, numpy=%s>" % (self.name, self.shape, self.dtype.name,
                                                                  self.numpy())

    # Arithmetic reads the value first, as tf.Variable does.
    def __add__(self, o): return self.read_value() + o
    def __radd__(self, o): return o + self.read_value() if isinstance(o, Tensor) else self.read_value().__radd__(o)
    def __sub__(self, o): return self.read_value() - o
    def __rsub__(self, o): return self.read_value().__rsub__(o)
    def __mul__(self, o): return self.read_value() * o
    def __rmul__(self, o): return self.read_value().__rmul__(o)
    def __truediv__(self, o): return self.read_value() / o
    def __rtruediv__(self, o): return self.read_value().__rtruediv__(o)
    def __matmul__(self, o): return self.read_value() @ o
    def __neg__(self): return -self.read_value()
