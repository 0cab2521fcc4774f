"""Running ops: tfc.execute(op_name, inputs, **attrs) and tfc.raw_ops.<Op>(**kwargs) (tf.raw_ops)."""
import collections
import ctypes
import re

import numpy as np

from . import dtypes as _dt
from . import _lib
from ._lib import Attr, Status, check, lib
from .tensor import Tensor, constant

_KINDS = {"int": _lib.ATTR_INT, "float": _lib.ATTR_FLOAT, "bool": _lib.ATTR_BOOL, "type": _lib.ATTR_TYPE,
          "string": _lib.ATTR_STRING, "shape": _lib.ATTR_SHAPE, "tensor": _lib.ATTR_TENSOR,
          "list(int)": _lib.ATTR_LIST_INT, "list(float)": _lib.ATTR_LIST_FLOAT, "list(type)": _lib.ATTR_LIST_TYPE,
          "list(string)": _lib.ATTR_LIST_STRING, "list(shape)": _lib.ATTR_LIST_SHAPE}


def _split_top(s):
    """Splits an op spec string at commas outside (), [], {} and quotes."""
    out, depth, quote, cur = [], 0, None, []
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _attr_kind(spec):
    """Kind of an attr from the part after "name:" ("int >= 1", "{float, double} = float", "list(int) = []")."""
    t = spec.split("=")[0].strip() if not spec.startswith("{") else spec
    if t.startswith("{"):
        inner = t[1:t.index("}")]
        return _lib.ATTR_STRING if "'" in inner or '"' in inner else _lib.ATTR_TYPE
    if t.startswith("list("):
        inner = t[5:t.index(")")].strip()
        if inner.startswith("{"):
            return _lib.ATTR_LIST_STRING if "'" in inner or '"' in inner else _lib.ATTR_LIST_TYPE
        return _KINDS.get("list(%s)" % inner)
    return _KINDS.get(t.split()[0] if t.split() else t)


class _Arg:
    __slots__ = ("name", "fixed", "type_attr", "number_attr", "is_list")

    def __init__(self, name, fixed=None, type_attr=None, number_attr=None, is_list=False):
        self.name, self.fixed, self.type_attr, self.number_attr, self.is_list = name, fixed, type_attr, number_attr, is_list


class OpInfo:
    """A registered op's parsed spec: input/output args and attr kinds."""

    def __init__(self, handle):
        self.handle = handle
        d = lib.tfc_op_get_def(handle).contents
        self.name = d.name.decode()
        self.attr_kinds = collections.OrderedDict()
        self.type_allowed, self.type_default = {}, {}  # type attrs: allowed DTypes (None: any), default
        for a in _split_top((d.attrs or b"").decode()):
            nm, _, rest = a.partition(":")
            nm, rest = nm.strip(), rest.strip()
            self.attr_kinds[nm] = _attr_kind(rest)
            if self.attr_kinds[nm] == _lib.ATTR_TYPE:
                allowed = None
                if rest.startswith("{"):
                    allowed = [_dt.as_dtype(x.strip()) for x in rest[1:rest.index("}")].split(",")
                               if x.strip() in _dt._BY_NAME]
                    rest = rest[rest.index("}") + 1:]
                self.type_allowed[nm] = allowed
                if "=" in rest and rest.split("=", 1)[1].strip() in _dt._BY_NAME:
                    self.type_default[nm] = _dt.as_dtype(rest.split("=", 1)[1].strip())
        self.inputs = self._args(d.inputs)
        self.outputs = self._args(d.outputs)

    def _args(self, spec):
        args = []
        for a in _split_top((spec or b"").decode()):
            nm, _, t = a.partition(":")
            nm, t = nm.strip(), t.strip()
            m = re.match(r"^(\w+)\s*\*\s*(\w+)$", t)
            if m:
                num, ty = m.groups()
                if ty in self.attr_kinds:
                    args.append(_Arg(nm, type_attr=ty, number_attr=num, is_list=True))
                else:
                    args.append(_Arg(nm, fixed=_dt.as_dtype(ty), number_attr=num, is_list=True))
            elif t in self.attr_kinds:
                is_list = self.attr_kinds[t] == _lib.ATTR_LIST_TYPE
                args.append(_Arg(nm, type_attr=t, is_list=is_list))
            else:
                args.append(_Arg(nm, fixed=_dt.as_dtype(t)))
        return args

    @property
    def input_names(self):
        return [a.name for a in self.inputs]

    @property
    def has_gradient(self):
        return bool(lib.tfc_op_has_gradient(self.handle))

    @property
    def has_kernel(self):
        return bool(lib.tfc_op_has_kernel(self.handle, b"CPU"))


_OPS = {}


def op_info(name):
    """The parsed spec of a registered op, or None when tfc has no op of that name."""
    info = _OPS.get(name)
    if info is None:
        _lib.ctx()  # registers the built-in ops and kernels
        h = lib.tfc_op_lookup(name.encode())
        if not h:
            return None
        info = _OPS[name] = OpInfo(h)
    return info


def op_names():
    """Names of all registered ops, in registration order."""
    _lib.ctx()
    out = []
    for i in range(lib.tfc_op_count()):
        h = lib.tfc_op_at(i)
        out.append(lib.tfc_op_get_def(h).contents.name.decode())
    return out


# ---- attrs -------------------------------------------------------------------------------------------

def _shape_dims(v):
    if v is None:
        return None
    if hasattr(v, "as_list"):  # tf.TensorShape
        if getattr(v, "rank", 0) is None:
            return None
        v = v.as_list()
    return [-1 if d is None else int(d) for d in v]


def _infer_kind(v):
    if isinstance(v, (bool, np.bool_)):
        return _lib.ATTR_BOOL
    if isinstance(v, (int, np.integer)):
        return _lib.ATTR_INT
    if isinstance(v, (float, np.floating)):
        return _lib.ATTR_FLOAT
    if isinstance(v, (str, bytes)):
        return _lib.ATTR_STRING
    if isinstance(v, Tensor):
        return _lib.ATTR_TENSOR
    if isinstance(v, (list, tuple)):
        if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v):
            return _lib.ATTR_LIST_INT
        if all(isinstance(x, (int, float, np.integer, np.floating)) for x in v):
            return _lib.ATTR_LIST_FLOAT
        if all(isinstance(x, (str, bytes)) for x in v):
            return _lib.ATTR_LIST_STRING
        return _lib.ATTR_LIST_TYPE
    return _lib.ATTR_TYPE


def _make_attrs(info, attrs, keep):
    """Builds the tfc_attr array; `keep` holds the ctypes buffers alive until the call returns."""
    items = [(k, v) for k, v in attrs.items()
             if v is not None or (info and info.attr_kinds.get(k) == _lib.ATTR_SHAPE)]  # None: the default
    arr = (Attr * max(len(items), 1))()
    for i, (name, v) in enumerate(items):
        kind = info.attr_kinds.get(name) if info else None
        if kind is None:
            kind = _infer_kind(v)
        a = arr[i]
        bname = name.encode()
        keep.append(bname)
        a.name = bname
        a.kind = kind
        if kind == _lib.ATTR_INT:
            a.v.i = int(v)
        elif kind == _lib.ATTR_FLOAT:
            a.v.f = float(v)
        elif kind == _lib.ATTR_BOOL:
            a.v.b = bool(v)
        elif kind == _lib.ATTR_TYPE:
            a.v.type = _dt.as_dtype(v).enum
        elif kind == _lib.ATTR_STRING:
            s = v if isinstance(v, bytes) else str(v).encode()
            keep.append(s)
            a.v.s = s
        elif kind == _lib.ATTR_TENSOR:
            t = constant(v) if not isinstance(v, Tensor) else v
            keep.append(t)
            a.v.tensor = t.handle
        elif kind in (_lib.ATTR_SHAPE, _lib.ATTR_LIST_INT):
            dims = _shape_dims(v) if kind == _lib.ATTR_SHAPE else [int(x) for x in v]
            if dims is None:
                a.n = -1
            else:
                buf = (ctypes.c_int64 * max(len(dims), 1))(*dims)
                keep.append(buf)
                a.n = len(dims)
                a.v.ints = buf
        elif kind == _lib.ATTR_LIST_FLOAT:
            buf = (ctypes.c_double * max(len(v), 1))(*[float(x) for x in v])
            keep.append(buf)
            a.n, a.v.floats = len(v), buf
        elif kind == _lib.ATTR_LIST_TYPE:
            buf = (ctypes.c_int * max(len(v), 1))(*[_dt.as_dtype(x).enum for x in v])
            keep.append(buf)
            a.n, a.v.types = len(v), buf
        elif kind == _lib.ATTR_LIST_STRING:
            ss = [x if isinstance(x, bytes) else str(x).encode() for x in v]
            buf = (ctypes.c_char_p * max(len(ss), 1))(*ss)
            keep.extend([ss, buf])
            a.n, a.v.strs = len(ss), buf
        elif kind == _lib.ATTR_LIST_SHAPE:
            buf = (_lib.Shape * max(len(v), 1))()
            for j, sh in enumerate(v):
                dims = _shape_dims(sh)
                if dims is not None and len(dims) > 8:
                    raise ValueError("%s: shape %r has more than 8 dims" % (info.name if info else "op", sh))
                buf[j].rank = -1 if dims is None else len(dims)
                for k, d in enumerate(dims or []):
                    buf[j].dims[k] = d
            keep.append(buf)
            a.n, a.v.shapes = len(v), buf
        else:
            raise TypeError("%s: cannot pass attr %r of unsupported kind" % (info.name if info else "op", name))
    return arr, len(items)


# ---- inputs -----------------------------------------------------------------------------------------

def _to_tensor(v, dtype, resource=False):
    """An op input from a Tensor (as is), a Variable (its value, or its handle for resource inputs) or any
    other value converted to `dtype` (numpy arrays too, as TensorFlow's eager conversion does)."""
    from .variables import Variable
    if isinstance(v, Variable):
        return v.handle if resource else v.read_value()
    if isinstance(v, Tensor):
        return v
    if dtype is None and isinstance(v, (np.ndarray, np.generic)):
        return constant(v)
    return constant(v, dtype=dtype)


def _convert_first(v, allowed, default):
    """The first value of a type attr without any Tensor: its own dtype when allowed, else the attr's
    default dtype when the values convert exactly (TensorFlow's preferred_dtype)."""
    t = _to_tensor(v, None)
    if not allowed or t.dtype in allowed or default is None or default.as_numpy_dtype is None:
        return t
    a = np.asarray(t.numpy())
    if a.dtype.kind in "biuf":
        with np.errstate(all="ignore"):
            c = a.astype(default.as_numpy_dtype)
        if np.array_equal(c.astype(a.dtype), a):
            return constant(c, dtype=default)
    return t


def _run(info, flat, attrs):
    """Executes op `info` on flattened tensors; returns the list of output Tensors."""
    keep = []
    c_attrs, n_attrs = _make_attrs(info, attrs, keep)
    n_in = len(flat)
    ins = (ctypes.c_void_p * max(n_in, 1))(*[t.handle for t in flat])
    outs = (ctypes.c_void_p * _lib.MAX_IO)()
    st = Status()
    n = lib.tfc_execute_op(_lib.ctx(), info.handle, ins, n_in, c_attrs, n_attrs, outs, _lib.MAX_IO,
                           ctypes.byref(st))
    check(st)
    return [Tensor(_lib.owned(outs[i])) for i in range(n)]


def _get_info(op_name):
    info = op_info(op_name)
    if info is None:
        raise _lib.errors.NotFoundError("Op type not registered '%s' in tfc" % op_name, 5)
    return info


def _convert_args(info, values, attrs, list_lens=None):
    """values: one entry per input arg (a value, or a list for list args). Converts them to tensors as
    TensorFlow's eager conversion does: for each type attr, the dtype comes from an explicit attr, else from
    the first Tensor among its inputs, else from the first value (its own dtype when allowed, else the
    attr's default); other values are converted to it. Returns the flat tensor list."""
    from .variables import Variable
    per_arg = []
    for arg, v in zip(info.inputs, values):
        if arg.is_list:
            if isinstance(v, (Tensor, np.ndarray)) or not isinstance(v, (list, tuple)):
                raise TypeError("%s: input '%s' must be a list of tensors, got %s" %
                                (info.name, arg.name, type(v).__name__))
            per_arg.append(list(v))
        else:
            per_arg.append([v])
    resolved = {k: _dt.as_dtype(v) for k, v in attrs.items()
                if v is not None and info.attr_kinds.get(k) == _lib.ATTR_TYPE}
    for arg, items in zip(info.inputs, per_arg):
        ta = arg.type_attr
        if ta is None or ta in resolved or info.attr_kinds.get(ta) != _lib.ATTR_TYPE:
            continue
        for x in items:
            if isinstance(x, (Tensor, Variable)):
                resolved[ta] = x.dtype
                break
    flat = []
    for arg, items in zip(info.inputs, per_arg):
        single_type = arg.type_attr is not None and info.attr_kinds.get(arg.type_attr) == _lib.ATTR_TYPE
        for x in items:
            if arg.fixed is not None:
                t = _to_tensor(x, arg.fixed, resource=arg.fixed is _dt.resource)
            elif single_type and arg.type_attr in resolved:
                t = _to_tensor(x, resolved[arg.type_attr])
            elif single_type:
                t = _convert_first(x, info.type_allowed.get(arg.type_attr), info.type_default.get(arg.type_attr))
                resolved[arg.type_attr] = t.dtype
            else:
                t = _to_tensor(x, None)
            flat.append(t)
        if arg.is_list and arg.number_attr and arg.number_attr not in attrs:
            attrs[arg.number_attr] = len(items)
        if arg.is_list and arg.type_attr and list_lens is not None:
            list_lens[arg.type_attr] = len(items)
    return flat


def execute(op_name, inputs, **attrs):
    """Runs TensorFlow op `op_name` on `inputs` (Tensors, numpy arrays, Python values, Variables; a nested
    list is flattened into a list argument) with attrs given by their TensorFlow names. Returns the list of
    all outputs. Raises a tfc.errors.OpError subclass (InvalidArgumentError, NotFoundError, ...) on failure."""
    info = _get_info(op_name)
    inputs = list(inputs)
    if len(inputs) == len(info.inputs) and all(
            isinstance(v, (list, tuple)) == a.is_list for a, v in zip(info.inputs, inputs)):
        flat = _convert_args(info, inputs, attrs)
    else:  # a flat list of tensors for an op with list arguments: conversion by position is ambiguous
        flat = [_to_tensor(x, None) for x in _flatten(inputs)]
    return _run(info, flat, attrs)


def _flatten(xs):
    for x in xs:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


def _structure_outputs(info, outs, attrs, list_lens):
    """Groups flat outputs by output arg like tf.raw_ops: None, one Tensor/list, or a namedtuple."""
    if not info.outputs:
        return None
    if len(info.outputs) == 1 and not info.outputs[0].is_list:
        return outs[0]
    counts = []
    for a in info.outputs:
        n = 1
        if a.is_list:
            n = attrs.get(a.number_attr) if a.number_attr else None
            if n is None and a.type_attr:
                given = attrs.get(a.type_attr)
                n = len(given) if isinstance(given, (list, tuple)) else list_lens.get(a.type_attr)
        counts.append(None if n is None else int(n))
    unknown = [i for i, c in enumerate(counts) if c is None]
    if unknown:  # lengths the call did not fix share what is left
        rest = len(outs) - sum(c for c in counts if c is not None)
        for i in unknown:
            counts[i] = rest // len(unknown)
    groups, pos = [], 0
    for a, c in zip(info.outputs, counts):
        groups.append(outs[pos:pos + c] if a.is_list else outs[pos])
        pos += c
    if len(groups) == 1:
        return groups[0]
    nt = collections.namedtuple(info.name, [a.name for a in info.outputs], rename=True)
    return nt(*groups)


# tf.raw_ops spells a few arguments differently from the op definitions (TensorFlow's api_def renames):
# {op: {raw_ops keyword: op-def input or attr name}}.
_API_RENAMES = {
    "All": {"axis": "reduction_indices"}, "Any": {"axis": "reduction_indices"},
    "EuclideanNorm": {"axis": "reduction_indices"}, "Max": {"axis": "reduction_indices"},
    "Mean": {"axis": "reduction_indices"}, "Min": {"axis": "reduction_indices"},
    "Prod": {"axis": "reduction_indices"}, "Sum": {"axis": "reduction_indices"},
    "ExpandDims": {"axis": "dim"}, "Select": {"x": "t", "y": "e"}, "Split": {"axis": "split_dim"},
    "SplitV": {"axis": "split_dim"}, "Squeeze": {"axis": "squeeze_dims"}, "Where": {"condition": "input"},
}


class _RawOp:
    def __init__(self, info):
        self._info = info
        self.__name__ = info.name
        self.__doc__ = "tf.raw_ops.%s(%s, attrs...) on tfc" % (info.name, ", ".join(info.input_names))

    def __call__(self, *args, **kwargs):
        info = self._info
        if args:
            raise TypeError("raw_ops.%s only accepts keyword arguments (inputs: %s)" %
                            (info.name, ", ".join(info.input_names)))
        if "name" not in info.input_names and "name" not in info.attr_kinds:
            kwargs.pop("name", None)  # tf.raw_ops' op-name argument; eager ops have no name
        known = set(info.input_names) | set(info.attr_kinds)
        for api, own in _API_RENAMES.get(info.name, {}).items():
            if api in kwargs and api not in known and own in known and own not in kwargs:
                kwargs[own] = kwargs.pop(api)
        values = []
        for a in info.inputs:
            if a.name not in kwargs:
                raise TypeError("raw_ops.%s missing required input '%s'" % (info.name, a.name))
            values.append(kwargs.pop(a.name))
        for k in kwargs:
            if k not in info.attr_kinds:
                raise TypeError("raw_ops.%s got an unexpected keyword argument '%s' (inputs: %s; attrs: %s)" %
                                (info.name, k, ", ".join(info.input_names), ", ".join(info.attr_kinds)))
        attrs, list_lens = dict(kwargs), {}
        flat = _convert_args(info, values, attrs, list_lens)
        return _structure_outputs(info, _run(info, flat, attrs), attrs, list_lens)

    def __repr__(self):
        return "<tfc.raw_ops.%s>" % self._info.name


class _RawOps:
    """tfc.raw_ops.<Op>(**kwargs): TensorFlow's raw op calls (keyword inputs by their op-def names)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        info = op_info(name)
        if info is None:
            raise AttributeError("tfc has no op '%s'" % name)
        return _RawOp(info)

    def __dir__(self):
        return op_names()


raw_ops = _RawOps()
