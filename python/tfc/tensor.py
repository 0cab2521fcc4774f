"""tfc.Tensor: a Python handle owning one reference to a tfc_tensor, and tfc.constant."""
import ctypes

import numpy as np

from . import dtypes as _dt
from ._lib import Status, check, lib


class Tensor:
    """An immutable tfc tensor (tf.Tensor). Owns one reference to the C tensor, released on deletion."""

    __slots__ = ("_h", "__weakref__")
    __array_priority__ = 100  # numpy defers binary operators to us

    def __init__(self, handle):
        if not handle:
            raise ValueError("tfc.Tensor: NULL handle")
        self._h = ctypes.c_void_p(handle)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None and getattr(lib, "tfc_tensor_unref", None) is not None:
            lib.tfc_tensor_unref(h)
            self._h = None

    @property
    def handle(self):
        """The borrowed tfc_tensor* (as an int), valid while this object lives."""
        return self._h.value

    @property
    def dtype(self):
        return _dt.from_enum(lib.tfc_tensor_dtype(self._h))

    @property
    def device(self):
        """tf.Tensor.device: the full name of the device holding the data."""
        return lib.tfc_device_name(lib.tfc_tensor_device(self._h)).decode()

    @property
    def shape(self):
        s = lib.tfc_tensor_shape(self._h).contents
        return tuple(int(s.dims[i]) for i in range(s.rank)) if s.rank >= 0 else None

    @property
    def ndim(self):
        return len(self.shape)

    rank = ndim

    @property
    def size(self):
        return int(lib.tfc_tensor_num_elements(self._h))

    def numpy(self):
        """A numpy copy of the value, as tf.Tensor.numpy: float16 -> numpy.float16; bfloat16 ->
        ml_dtypes.bfloat16 (float32 when ml_dtypes is missing); string -> object array of bytes. A scalar
        gives a numpy scalar (bytes for a string)."""
        dt = self.dtype
        shape = self.shape
        n = self.size
        if dt is _dt.resource:
            raise TypeError("a resource handle has no numpy value")
        if dt is _dt.string:
            out = np.empty(n, dtype=object)
            ln = ctypes.c_size_t()
            for i in range(n):
                p = lib.tfc_tensor_string(self._h, i, ctypes.byref(ln))
                out[i] = ctypes.string_at(p, ln.value) if ln.value else b""
            return out[0] if shape == () else out.reshape(shape)
        nbytes = int(lib.tfc_tensor_byte_size(self._h))
        raw = np.empty(nbytes, dtype=np.uint8)
        if nbytes:
            ctypes.memmove(raw.ctypes.data, lib.tfc_tensor_data(self._h), nbytes)
        if dt is _dt.bfloat16:
            bits = raw.view(np.uint16)
            arr = bits.view(dt.as_numpy_dtype) if dt.as_numpy_dtype.itemsize == 2 else _dt.bfloat16_bits_to_float(bits)
        else:
            arr = raw.view(dt.as_numpy_dtype)
        arr = arr.reshape(shape)
        return arr[()] if shape == () else arr

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self.numpy(), dtype=object if self.dtype is _dt.string else None)
        return a.astype(dtype) if dtype is not None else a

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a scalar tensor")
        return self.shape[0]

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __bool__(self):
        return bool(self.numpy())

    def __index__(self):
        if not self.dtype.is_integer or self.shape != ():
            raise TypeError("only integer scalar tensors can be used as an index")
        return int(self.numpy())

    def __repr__(self):
        if self.dtype is _dt.resource:
            return "<tfc.Tensor: shape=(), dtype=resource>"
        return "<tfc.Tensor: shape=%s, dtype=%s, numpy=%s>" % (self.shape, self.dtype.name,
                                                               np.array2string(self.numpy(), threshold=20))

    # Operators use the corresponding TensorFlow ops (registered in tfc or not: NotFoundError when missing).
    def _bin(self, op, other, rev=False):
        from .ops import execute
        other = convert_to_tensor(other, dtype=self.dtype)
        return execute(op, [other, self] if rev else [self, other])[0]

    def __add__(self, o): return self._bin("AddV2", o)
    def __radd__(self, o): return self._bin("AddV2", o, True)
    def __sub__(self, o): return self._bin("Sub", o)
    def __rsub__(self, o): return self._bin("Sub", o, True)
    def __mul__(self, o): return self._bin("Mul", o)
    def __rmul__(self, o): return self._bin("Mul", o, True)
    def __truediv__(self, o): return self._bin("RealDiv", o)
    def __rtruediv__(self, o): return self._bin("RealDiv", o, True)
    def __pow__(self, o): return self._bin("Pow", o)
    def __matmul__(self, o): return self._bin("MatMul", o)

    def __neg__(self):
        from .ops import execute
        return execute("Neg", [self])[0]


def _tensor_from_numpy(arr, dt):
    st = Status()
    dims = (ctypes.c_int64 * max(arr.ndim, 1))(*arr.shape)
    if dt is _dt.string:
        flat = [x if isinstance(x, bytes) else str(x).encode("utf-8") for x in arr.reshape(-1).tolist()]
        n = len(flat)
        strs = (ctypes.c_char_p * max(n, 1))(*flat)
        lens = (ctypes.c_size_t * max(n, 1))(*[len(s) for s in flat])
        h = lib.tfc_tensor_from_strings(strs, lens, dims, arr.ndim, ctypes.byref(st))
    else:
        arr = np.asarray(arr, order="C")
        h = lib.tfc_tensor_from_data(dt.enum, dims, arr.ndim, arr.ctypes.data if arr.size else None, arr.nbytes,
                                     ctypes.byref(st))
    check(st)
    return Tensor(h)


def _default_dtype(value):
    """TensorFlow's inference for Python values: float -> float32, int -> int32 (int64 if it does not fit),
    bool -> bool, bytes/str -> string. numpy arrays and scalars keep their dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        return _dt.as_dtype(value.dtype)
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        return _dt.float32
    if arr.dtype.kind in "iu":
        if arr.size and (arr.max() > 2**31 - 1 or arr.min() < -2**31):
            return _dt.int64
        return _dt.int32
    if arr.dtype.kind == "b":
        return _dt.bool_
    if arr.dtype.kind in "SUO":
        return _dt.string
    if arr.dtype.kind == "c":
        raise TypeError("tfc has no complex dtypes")
    return _dt.as_dtype(arr.dtype)


def constant(value, dtype=None, shape=None):
    """tf.constant: a new tensor holding a copy of `value` (numpy array, scalar, nested list, bytes/str, or a
    Tensor). dtype may be a tfc/TensorFlow/numpy dtype or a name; by default inferred as TensorFlow does.
    shape, when given, reshapes (or broadcasts a scalar to) that shape."""
    from .variables import Variable
    if isinstance(value, Variable):
        value = value.read_value()
    if isinstance(value, Tensor):
        if dtype is None or _dt.as_dtype(dtype) == value.dtype:
            if shape is None or tuple(shape) == value.shape:
                return value
        value = value.numpy()
    if not isinstance(value, (np.ndarray, np.generic)) and hasattr(value, "numpy"):
        value = value.numpy()  # a TensorFlow tensor or variable keeps its dtype
    dt = _dt.as_dtype(dtype) if dtype is not None else _default_dtype(value)
    if dt is _dt.resource:
        raise TypeError("cannot make a constant of dtype resource")
    if dt is _dt.string:
        arr = np.asarray(value, dtype=object)
    elif dt is _dt.bfloat16:
        src = np.asarray(value)
        if _dt._BF16_NP is not None and src.dtype == _dt._BF16_NP:
            arr = src
        else:
            arr = _dt.float_to_bfloat16_bits(np.asarray(src, dtype=np.float32))
    else:
        src = np.asarray(value)
        if src.dtype.kind in "fc" and (dt.is_integer or dt is _dt.bool_) and not isinstance(
                value, (np.ndarray, np.generic)):
            # Python floats never become integers; numpy arrays are cast (as TensorFlow)
            raise TypeError("Cannot convert %r to EagerTensor of dtype %s" % (value, dt.name))
        if src.dtype.kind == "f" and dt.is_integer and src.size and not np.all(np.isfinite(src)):
            raise ValueError("cannot convert non-finite values to %s" % dt.name)
        arr = src.astype(dt.as_numpy_dtype, copy=False)
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        arr = np.broadcast_to(arr, shape) if arr.size == 1 else arr.reshape(shape)
    return _tensor_from_numpy(np.asarray(arr, order="C") if dt is not _dt.string else arr, dt)


def convert_to_tensor(value, dtype=None):
    """tf.convert_to_tensor: Tensors pass through (TypeError on a dtype mismatch), other values go to
    constant()."""
    from .variables import Variable
    if isinstance(value, Variable):
        value = value.read_value()
    if isinstance(value, Tensor):
        if dtype is not None and _dt.as_dtype(dtype) != value.dtype:
            raise TypeError("Tensor conversion requested dtype %s for Tensor with dtype %s" %
                            (_dt.as_dtype(dtype).name, value.dtype.name))
        return value
    return constant(value, dtype=dtype)
