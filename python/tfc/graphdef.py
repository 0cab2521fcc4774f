"""tfc.graphdef: TensorFlow's GraphDef and TensorProto bytes, and .npy files, through tfc's C readers and
writers (include/tfc/graphdef.h, include/tfc/npy.h).

    g = tfc.graphdef.GraphDef(tf_graph_def.SerializeToString())   # parsed and validated by tfc
    [(n.name, n.op, n.inputs) for n in g.nodes()]
    g.attr("Const", "value")                                      # a tfc.Tensor
    tfc.graphdef.tensor_from_proto(tf.make_tensor_proto(x).SerializeToString())
    b = GraphDef.new(); b.add_node("x", "Placeholder", attrs={"dtype": tfc.float32}); b.serialize()
"""
import ctypes

import numpy as np

from . import dtypes as _dt
from ._lib import ATTR_BOOL, ATTR_FLOAT, ATTR_INT, ATTR_LIST_FLOAT, ATTR_LIST_INT, ATTR_LIST_SHAPE, ATTR_LIST_STRING
from ._lib import ATTR_LIST_TYPE, ATTR_SHAPE, ATTR_STRING, ATTR_TENSOR, ATTR_TYPE, Attr, Shape, Status, check, lib
from .tensor import Tensor, constant

ATTR_FUNC, ATTR_LIST_FUNC = 13, 14
TOP = -1


class Opts(ctypes.Structure):
    _fields_ = [("max_bytes", ctypes.c_size_t), ("max_tensor_bytes", ctypes.c_size_t),
                ("allow_unknown_ops", ctypes.c_bool)]


class NodeInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("op", ctypes.c_char_p), ("device", ctypes.c_char_p),
                ("n_inputs", ctypes.c_int), ("inputs", ctypes.POINTER(ctypes.c_char_p)),
                ("n_control_inputs", ctypes.c_int), ("n_outputs", ctypes.c_int64), ("n_attrs", ctypes.c_int)]


class Arg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("type", ctypes.c_int)]


class FunctionInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("n_inputs", ctypes.c_int), ("n_outputs", ctypes.c_int),
                ("n_nodes", ctypes.c_int64)]


_P, _PS, _VPP, _SZP = ctypes.c_void_p, ctypes.POINTER(Status), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)
for _name, _res, _args in [
    ("tfc_graphdef_parse", _P, [_P, ctypes.c_size_t, ctypes.POINTER(Opts), _PS]),
    ("tfc_graphdef_free", None, [_P]),
    ("tfc_graphdef_num_nodes", ctypes.c_int64, [_P, ctypes.c_int]),
    ("tfc_graphdef_num_functions", ctypes.c_int, [_P]),
    ("tfc_graphdef_node", ctypes.c_bool, [_P, ctypes.c_int, ctypes.c_int64, ctypes.POINTER(NodeInfo)]),
    ("tfc_graphdef_node_attr_name", ctypes.c_char_p, [_P, ctypes.c_int, ctypes.c_int64, ctypes.c_int]),
    ("tfc_graphdef_node_attr", ctypes.c_bool, [_P, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p, ctypes.POINTER(Attr), _PS]),
    ("tfc_graphdef_find_node", ctypes.c_int64, [_P, ctypes.c_int, ctypes.c_char_p]),
    ("tfc_graphdef_function", ctypes.c_bool, [_P, ctypes.c_int, ctypes.POINTER(FunctionInfo)]),
    ("tfc_graphdef_function_arg", ctypes.c_bool, [_P, ctypes.c_int, ctypes.c_bool, ctypes.c_int, ctypes.POINTER(Arg),
                                                  ctypes.POINTER(ctypes.c_char_p)]),
    ("tfc_graphdef_new", _P, [_PS]),
    ("tfc_graphdef_add_node", ctypes.c_bool, [_P, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                              ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, ctypes.POINTER(Attr),
                                              ctypes.c_int, _PS]),
    ("tfc_graphdef_add_function", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(Arg), ctypes.c_int,
                                                 ctypes.POINTER(Arg), ctypes.POINTER(ctypes.c_char_p), ctypes.c_int, _PS]),
    ("tfc_graphdef_validate", ctypes.c_bool, [_P, ctypes.POINTER(Opts), _PS]),
    ("tfc_graphdef_serialize", ctypes.c_bool, [_P, _VPP, _SZP, _PS]),
    ("tfc_tensor_from_proto", _P, [_P, ctypes.c_size_t, ctypes.c_size_t, _PS]),
    ("tfc_tensor_to_proto", ctypes.c_bool, [_P, _VPP, _SZP, _PS]),
    ("tfc_npy_parse", _P, [_P, ctypes.c_size_t, ctypes.c_size_t, _PS]),
    ("tfc_npy_serialize", ctypes.c_bool, [_P, _VPP, _SZP, _PS]),
    ("tfc_free", None, [_P]),
]:
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


def _take_bytes(ok_fn, *args):
    st, data, size = Status(), ctypes.c_void_p(), ctypes.c_size_t()
    ok = ok_fn(*args, ctypes.byref(data), ctypes.byref(size), ctypes.byref(st))
    check(st)
    assert ok
    try:
        return ctypes.string_at(data, size.value)
    finally:
        lib.tfc_free(data)


def tensor_from_proto(data, max_tensor_bytes=0):
    """Serialised TensorProto bytes -> tfc.Tensor (tf.make_ndarray's reading rules)."""
    st = Status()
    h = lib.tfc_tensor_from_proto(data, len(data), max_tensor_bytes, ctypes.byref(st))
    check(st)
    return Tensor(h)


def tensor_to_proto(t):
    """A tensor (or anything tfc.constant takes) -> serialised TensorProto bytes (tf.make_tensor_proto's layout)."""
    t = t if isinstance(t, Tensor) else constant(t)
    return _take_bytes(lib.tfc_tensor_to_proto, t._h)


def npy_parse(data):
    st = Status()
    h = lib.tfc_npy_parse(data, len(data), 0, ctypes.byref(st))
    check(st)
    return Tensor(h)


def npy_serialize(t):
    t = t if isinstance(t, Tensor) else constant(t)
    return _take_bytes(lib.tfc_npy_serialize, t._h)


class Node:
    def __init__(self, info):
        self.name = info.name.decode()
        self.op = info.op.decode()
        self.device = info.device.decode()
        self.inputs = [info.inputs[i].decode() for i in range(info.n_inputs)]
        self.n_outputs = int(info.n_outputs)

    def __repr__(self):
        return "%s = %s(%s)" % (self.name, self.op, ", ".join(self.inputs))


class _AttrKeep:
    """Keeps the ctypes buffers behind a tfc_attr alive until the C call is done."""

    def __init__(self):
        self.refs = []

    def attr(self, name, value):
        a = Attr()
        a.name = name.encode()
        self.refs.append(a.name)
        if isinstance(value, bool):
            a.kind, a.v.b = ATTR_BOOL, value
        elif isinstance(value, int):
            a.kind, a.v.i = ATTR_INT, value
        elif isinstance(value, float):
            a.kind, a.v.f = ATTR_FLOAT, value
        elif isinstance(value, _dt.DType):
            a.kind, a.v.type = ATTR_TYPE, value.enum
        elif isinstance(value, (str, bytes)):
            s = value.encode() if isinstance(value, str) else value
            self.refs.append(s)
            a.kind, a.n, a.v.s = ATTR_STRING, len(s), s
        elif isinstance(value, Tensor):
            self.refs.append(value)
            a.kind, a.v.tensor = ATTR_TENSOR, value.handle
        elif isinstance(value, Func):
            s = value.name.encode()
            self.refs.append(s)
            a.kind, a.v.s = ATTR_FUNC, s
        elif isinstance(value, Shape_):
            if value.dims is None:
                a.kind, a.n = ATTR_SHAPE, -1
            else:
                arr = (ctypes.c_int64 * max(len(value.dims), 1))(*value.dims)
                self.refs.append(arr)
                a.kind, a.n, a.v.ints = ATTR_SHAPE, len(value.dims), arr
        elif isinstance(value, (list, tuple)):
            n = len(value)
            a.n = n
            if all(isinstance(x, _dt.DType) for x in value) and n:
                arr = (ctypes.c_int * n)(*[x.enum for x in value])
                a.kind, a.v.types = ATTR_LIST_TYPE, arr
            elif all(isinstance(x, float) for x in value) and n:
                arr = (ctypes.c_double * n)(*value)
                a.kind, a.v.floats = ATTR_LIST_FLOAT, arr
            elif all(isinstance(x, (str, bytes)) for x in value) and n:
                bs = [x.encode() if isinstance(x, str) else x for x in value]
                self.refs.append(bs)
                arr = (ctypes.c_char_p * n)(*bs)
                a.kind, a.v.strs = ATTR_LIST_STRING, arr
            elif all(isinstance(x, Func) for x in value) and n:
                bs = [x.name.encode() for x in value]
                self.refs.append(bs)
                arr = (ctypes.c_char_p * n)(*bs)
                a.kind, a.v.strs = ATTR_LIST_FUNC, arr
            elif all(isinstance(x, Shape_) for x in value) and n:
                arr = (Shape * n)()
                for i, s in enumerate(value):
                    arr[i].rank = -1 if s.dims is None else len(s.dims)
                    for k, d in enumerate(s.dims or ()):
                        arr[i].dims[k] = d
                a.kind, a.v.shapes = ATTR_LIST_SHAPE, arr
            else:
                arr = (ctypes.c_int64 * max(n, 1))(*[int(x) for x in value])
                a.kind, a.v.ints = ATTR_LIST_INT, arr
            self.refs.append(arr)
        else:
            raise TypeError("attr %s: cannot encode %r" % (name, value))
        return a


class Func:
    """A func attr value: the name of a function in the graph's library."""

    def __init__(self, name):
        self.name = name


class Shape_:
    """A shape attr value: a list of dims (-1 unknown), or None for unknown rank."""

    def __init__(self, dims):
        self.dims = None if dims is None else [int(d) for d in dims]


class GraphDef:
    """A GraphDef parsed and validated by tfc (tfc_graphdef_parse), or built with new()/add_node()."""

    def __init__(self, data=None, allow_unknown_ops=False, max_tensor_bytes=0, _handle=None):
        if _handle is not None:
            self._h = _handle
            return
        st = Status()
        opts = Opts(0, max_tensor_bytes, allow_unknown_ops)
        h = lib.tfc_graphdef_parse(data, len(data), ctypes.byref(opts), ctypes.byref(st))
        check(st)
        self._h = ctypes.c_void_p(h)

    @classmethod
    def new(cls):
        st = Status()
        h = lib.tfc_graphdef_new(ctypes.byref(st))
        check(st)
        return cls(_handle=ctypes.c_void_p(h))

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None:
            lib.tfc_graphdef_free(h)
            self._h = None

    def nodes(self, fn=TOP):
        out = []
        info = NodeInfo()
        for i in range(lib.tfc_graphdef_num_nodes(self._h, fn)):
            lib.tfc_graphdef_node(self._h, fn, i, ctypes.byref(info))
            out.append(Node(info))
        return out

    def attr_names(self, node, fn=TOP):
        i = self._index(node, fn)
        info = NodeInfo()
        lib.tfc_graphdef_node(self._h, fn, i, ctypes.byref(info))
        return [lib.tfc_graphdef_node_attr_name(self._h, fn, i, k).decode() for k in range(info.n_attrs)]

    def _index(self, node, fn):
        i = lib.tfc_graphdef_find_node(self._h, fn, node.encode())
        if i < 0:
            raise KeyError(node)
        return i

    def attr(self, node, name, fn=TOP):
        """The decoded attr: int, float, bool, tfc dtype, bytes, tuple (shape; None for unknown rank), a
        tfc.Tensor (copied), Func, or a list of those."""
        a, st = Attr(), Status()
        lib.tfc_graphdef_node_attr(self._h, fn, self._index(node, fn), name.encode(), ctypes.byref(a), ctypes.byref(st))
        check(st)
        k, n = a.kind, a.n
        if k == ATTR_INT:
            return a.v.i
        if k == ATTR_FLOAT:
            return a.v.f
        if k == ATTR_BOOL:
            return bool(a.v.b)
        if k == ATTR_TYPE:
            return _dt.from_enum(a.v.type)
        if k == ATTR_STRING:
            return ctypes.string_at(a.v.s, n)
        if k == ATTR_SHAPE:
            return None if n < 0 else tuple(a.v.ints[i] for i in range(n))
        if k == ATTR_TENSOR:
            return Tensor(lib.tfc_tensor_ref(a.v.tensor))
        if k == ATTR_FUNC:
            return Func(a.v.s.decode())
        if k == ATTR_LIST_INT:
            return [a.v.ints[i] for i in range(n)]
        if k == ATTR_LIST_FLOAT:
            return [a.v.floats[i] for i in range(n)]
        if k == ATTR_LIST_TYPE:
            return [_dt.from_enum(a.v.types[i]) for i in range(n)]
        if k in (ATTR_LIST_STRING, ATTR_LIST_FUNC):
            vals = [a.v.strs[i] for i in range(n)]
            return [Func(v.decode()) for v in vals] if k == ATTR_LIST_FUNC else vals
        if k == ATTR_LIST_SHAPE:
            return [None if a.v.shapes[i].rank < 0 else tuple(a.v.shapes[i].dims[j] for j in range(a.v.shapes[i].rank))
                    for i in range(n)]
        raise TypeError("attr %s: kind %d" % (name, k))

    def functions(self):
        """[(name, [(arg, dtype or None)], [(out, dtype or None, ret)], n_nodes)] in library order."""
        out = []
        for f in range(lib.tfc_graphdef_num_functions(self._h)):
            fi = FunctionInfo()
            lib.tfc_graphdef_function(self._h, f, ctypes.byref(fi))
            ins, outs = [], []
            for i in range(fi.n_inputs):
                a = Arg()
                lib.tfc_graphdef_function_arg(self._h, f, False, i, ctypes.byref(a), None)
                ins.append((a.name.decode(), _dt.from_enum(a.type) if a.type else None))
            for i in range(fi.n_outputs):
                a, ret = Arg(), ctypes.c_char_p()
                lib.tfc_graphdef_function_arg(self._h, f, True, i, ctypes.byref(a), ctypes.byref(ret))
                outs.append((a.name.decode(), _dt.from_enum(a.type) if a.type else None, ret.value.decode()))
            out.append((fi.name.decode(), ins, outs, fi.n_nodes))
        return out

    def add_node(self, name, op, inputs=(), attrs=None, fn=TOP):
        keep = _AttrKeep()
        items = [keep.attr(k, v) for k, v in (attrs or {}).items()]
        arr = (Attr * max(len(items), 1))(*items)
        ins = [s.encode() for s in inputs]
        in_arr = (ctypes.c_char_p * max(len(ins), 1))(*ins)
        st = Status()
        lib.tfc_graphdef_add_node(self._h, fn, name.encode(), op.encode(), in_arr, len(ins), arr, len(items),
                                  ctypes.byref(st))
        check(st)

    def add_function(self, name, inputs, outputs):
        """inputs: [(name, dtype)], outputs: [(name, dtype, ret)]; returns the function index for add_node."""
        ins = (Arg * max(len(inputs), 1))(*[Arg(n.encode(), d.enum) for n, d in inputs])
        outs = (Arg * max(len(outputs), 1))(*[Arg(n.encode(), d.enum) for n, d, _ in outputs])
        rets = [r.encode() for _, _, r in outputs]
        ret_arr = (ctypes.c_char_p * max(len(rets), 1))(*rets)
        st = Status()
        f = lib.tfc_graphdef_add_function(self._h, name.encode(), ins, len(inputs), outs, ret_arr, len(outputs),
                                          ctypes.byref(st))
        check(st)
        return f

    def validate(self, allow_unknown_ops=False):
        st = Status()
        lib.tfc_graphdef_validate(self._h, ctypes.byref(Opts(0, 0, allow_unknown_ops)), ctypes.byref(st))
        check(st)

    def serialize(self):
        return _take_bytes(lib.tfc_graphdef_serialize, self._h)


def as_numpy(t):
    """A tfc.Tensor's value as numpy (bfloat16 as ml_dtypes.bfloat16)."""
    return np.asarray(t.numpy())
