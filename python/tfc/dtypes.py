"""tfc data types: TensorFlow's DataType numbers and names, and their numpy counterparts."""
import numpy as np

try:  # installed with TensorFlow; gives bfloat16 a real numpy dtype
    import ml_dtypes as _ml_dtypes
    _BF16_NP = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None
    _BF16_NP = None


class DType:
    """A tfc dtype. `name` is TensorFlow's (float32, float16, bfloat16, ...), `enum` its DataType number,
    `as_numpy_dtype` the numpy dtype .numpy() returns (bfloat16: ml_dtypes.bfloat16 if installed, else
    float32; string: object holding bytes)."""

    def __init__(self, enum, name, np_dtype, size):
        self.enum = enum
        self.name = name
        self.as_numpy_dtype = np_dtype
        self.size = size

    @property
    def is_floating(self):
        return self.enum in (1, 2, 14, 19)

    @property
    def is_integer(self):
        return self.enum in (3, 4, 5, 6, 9, 17)

    def __repr__(self):
        return "tfc.%s" % self.name

    def __eq__(self, other):
        if isinstance(other, DType):
            return self.enum == other.enum
        try:
            return as_dtype(other).enum == self.enum
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.enum)


float32 = DType(1, "float32", np.dtype(np.float32), 4)
float64 = DType(2, "float64", np.dtype(np.float64), 8)
int32 = DType(3, "int32", np.dtype(np.int32), 4)
uint8 = DType(4, "uint8", np.dtype(np.uint8), 1)
int16 = DType(5, "int16", np.dtype(np.int16), 2)
int8 = DType(6, "int8", np.dtype(np.int8), 1)
string = DType(7, "string", np.dtype(object), 24)
int64 = DType(9, "int64", np.dtype(np.int64), 8)
bool_ = DType(10, "bool", np.dtype(np.bool_), 1)
bfloat16 = DType(14, "bfloat16", _BF16_NP if _BF16_NP is not None else np.dtype(np.float32), 2)
float16 = DType(19, "float16", np.dtype(np.float16), 2)
uint16 = DType(17, "uint16", np.dtype(np.uint16), 2)
resource = DType(20, "resource", None, 0)
half, double, float_ = float16, float64, float32

ALL = [float32, float64, int32, uint8, int16, int8, string, int64, bool_, bfloat16, float16, uint16, resource]
_BY_ENUM = {d.enum: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME.update({"float": float32, "double": float64, "half": float16, "bool_": bool_, "str": string,
                 "bytes": string})
_BY_NP = {np.dtype(np.float32): float32, np.dtype(np.float64): float64, np.dtype(np.int32): int32,
          np.dtype(np.uint8): uint8, np.dtype(np.int16): int16, np.dtype(np.int8): int8,
          np.dtype(np.int64): int64, np.dtype(np.bool_): bool_, np.dtype(np.float16): float16,
          np.dtype(np.uint16): uint16}
if _BF16_NP is not None:
    _BY_NP[_BF16_NP] = bfloat16


def as_dtype(x):
    """Converts a DType, a TensorFlow DType (by name), a name ("float32", "half", ...), a DataType number or a
    numpy dtype/type into a tfc DType. TypeError when there is no such tfc dtype."""
    if isinstance(x, DType):
        return x
    if isinstance(x, str):
        if x in _BY_NAME:
            return _BY_NAME[x]
        raise TypeError("unknown dtype name %r" % x)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if int(x) in _BY_ENUM:
            return _BY_ENUM[int(x)]
        raise TypeError("unknown DataType number %d" % x)
    # tf.DType and similar carry a name and an as_numpy_dtype; prefer the name (bfloat16, resource).
    name = getattr(x, "name", None)
    if isinstance(name, str) and name in _BY_NAME and not isinstance(x, np.dtype):
        return _BY_NAME[name]
    if x is str or x is bytes or x is object:
        return string
    if x is bool:
        return bool_
    if x is float:
        return float32
    if x is int:
        return int32
    try:
        nd = np.dtype(x)
    except TypeError:
        raise TypeError("cannot interpret %r as a tfc dtype" % (x,))
    if nd in _BY_NP:
        return _BY_NP[nd]
    if nd.kind in "SUO":
        return string
    raise TypeError("numpy dtype %s has no tfc counterpart" % nd)


def from_enum(e):
    return _BY_ENUM.get(e)


def float_to_bfloat16_bits(a):
    """float32 array -> uint16 bfloat16 bits, round to nearest even, NaN kept NaN."""
    a = np.asarray(a, dtype=np.float32, order="C")
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r


def bfloat16_bits_to_float(bits):
    return (np.asarray(bits, dtype=np.uint16, order="C").astype(np.uint32) << 16).view(np.float32)
