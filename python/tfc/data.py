"""tfc.data: a ctypes door to tfc's tf.data in C (include/tfc/data.h), shaped like tf.data.

    from tfc import data as tfd
    ds = tfd.Dataset.range(10).map(lambda x: x * 2).batch(4, drop_remainder=True)
    for batch in ds:            # tfc.Tensor elements (nested tuples / dicts of them)
        print(batch.numpy())
    list(ds.as_numpy_iterator())

Python functions given to map, filter, flat_map, interleave and from_generator run as C callbacks (ctypes),
possibly on tfc's worker threads (ctypes takes the GIL). They receive tfc.Tensor components (tuples unpacked
into positional arguments, as tf.data) and may return numpy arrays, Python values or tfc.Tensors. A map whose
output structure differs from its input's learns it by calling the function on the first input element, unless
output_signature (a nested structure of (dtype, shape) pairs) is given.
"""
import ctypes
import itertools
import threading

import numpy as np

from . import dtypes as _dt
from . import errors as _errors
from ._lib import Shape, Status, check, lib
from .tensor import Tensor, constant

__all__ = ["Dataset", "TFRecordDataset", "TextLineDataset", "TFRecordWriter", "tf_record_iterator", "AUTOTUNE",
           "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Options", "crc32c", "masked_crc32c"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

_P = ctypes.c_void_p
_PS = ctypes.POINTER(Status)
_PP = ctypes.POINTER(_P)
_I64 = ctypes.c_int64
_B = ctypes.c_bool
_I = ctypes.c_int
_CP = ctypes.c_char_p


class TensorSpec(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("shape", Shape)]


_MAP_FN = ctypes.CFUNCTYPE(_B, _P, _P, _PP, _I, _PP, _I, _PS)
_PRED_FN = ctypes.CFUNCTYPE(_B, _P, _P, _PP, _I, ctypes.POINTER(_B), _PS)
_DS_FN = ctypes.CFUNCTYPE(_P, _P, _P, _PP, _I, _PS)
_FREE_FN = ctypes.CFUNCTYPE(None, _P)
_GEN_INIT = ctypes.CFUNCTYPE(_P, _P, _PS)
_GEN_NEXT = ctypes.CFUNCTYPE(_B, _P, _P, _P, _PP, _I, ctypes.POINTER(_B), _PS)
_GEN_FINAL = ctypes.CFUNCTYPE(None, _P, _P)


class _MapOpts(ctypes.Structure):
    _fields_ = [("num_parallel_calls", _I64), ("deterministic", _I), ("output_structure", _CP),
                ("output_spec", ctypes.POINTER(TensorSpec)), ("user_free", _FREE_FN)]


class _FilterOpts(ctypes.Structure):
    _fields_ = [("user_free", _FREE_FN)]


class _BatchOpts(ctypes.Structure):
    _fields_ = [("drop_remainder", _B), ("num_parallel_calls", _I64), ("deterministic", _I)]


class _PaddedOpts(ctypes.Structure):
    _fields_ = [("padded_shapes", ctypes.POINTER(Shape)), ("padding_values", _PP), ("drop_remainder", _B)]


class _ShuffleOpts(ctypes.Structure):
    _fields_ = [("seed", _I64), ("has_seed", _B), ("reshuffle_each_iteration", _I)]


class _InterleaveOpts(ctypes.Structure):
    _fields_ = [("cycle_length", _I64), ("block_length", _I64), ("num_parallel_calls", _I64),
                ("deterministic", _I), ("output_structure", _CP), ("output_spec", ctypes.POINTER(TensorSpec)),
                ("user_free", _FREE_FN)]


class _FlatMapOpts(ctypes.Structure):
    _fields_ = [("output_structure", _CP), ("output_spec", ctypes.POINTER(TensorSpec)), ("user_free", _FREE_FN)]


class _ListFilesOpts(ctypes.Structure):
    _fields_ = [("shuffle", _I), ("seed", _I64), ("has_seed", _B)]


class _ReaderOpts(ctypes.Structure):
    _fields_ = [("compression_type", _CP), ("buffer_size", _I64), ("num_parallel_reads", _I64)]


class _Options(ctypes.Structure):
    _fields_ = [("deterministic", _I), ("private_threadpool_size", _I), ("max_intra_op_parallelism", _I)]


class _Generator(ctypes.Structure):
    _fields_ = [("init", _GEN_INIT), ("next", _GEN_NEXT), ("finalize", _GEN_FINAL), ("user", _P),
                ("user_free", _FREE_FN)]


_SIGS = {
    "tfc_dataset_ref": (_P, [_P]),
    "tfc_dataset_unref": (None, [_P]),
    "tfc_dataset_cardinality": (_I64, [_P]),
    "tfc_dataset_structure": (_CP, [_P]),
    "tfc_dataset_num_components": (_I, [_P]),
    "tfc_dataset_component_spec": (TensorSpec, [_P, _I]),
    "tfc_dataset_element_spec_str": (_CP, [_P, ctypes.c_char_p, ctypes.c_size_t]),
    "tfc_dataset_graph_str": (_CP, [_P, ctypes.c_char_p, ctypes.c_size_t]),
    "tfc_iterator_new": (_P, [_P, _PS]),
    "tfc_iterator_next": (_B, [_P, _PP, _I, _PS]),
    "tfc_iterator_free": (None, [_P]),
    "tfc_iterator_trackable": (_P, [_P, _PS]),
    "tfc_dataset_from_tensors": (_P, [_PP, _I, _CP, _PS]),
    "tfc_dataset_from_tensor_slices": (_P, [_PP, _I, _CP, _PS]),
    "tfc_dataset_from_strings": (_P, [ctypes.POINTER(_CP), _I, _PS]),
    "tfc_dataset_range": (_P, [_I64, _I64, _I64, _I, _PS]),
    "tfc_dataset_from_generator": (_P, [ctypes.POINTER(_Generator), _CP, ctypes.POINTER(TensorSpec), _PS]),
    "tfc_dataset_zip": (_P, [_PP, _I, _PS]),
    "tfc_dataset_concatenate": (_P, [_P, _P, _PS]),
    "tfc_dataset_list_files": (_P, [ctypes.POINTER(_CP), _I, ctypes.POINTER(_ListFilesOpts), _PS]),
    "tfc_dataset_tfrecord": (_P, [_P, ctypes.POINTER(_ReaderOpts), _PS]),
    "tfc_dataset_text_line": (_P, [_P, ctypes.POINTER(_ReaderOpts), _PS]),
    "tfc_dataset_map": (_P, [_P, _MAP_FN, _P, ctypes.POINTER(_MapOpts), _PS]),
    "tfc_dataset_filter": (_P, [_P, _PRED_FN, _P, ctypes.POINTER(_FilterOpts), _PS]),
    "tfc_dataset_batch": (_P, [_P, _I64, ctypes.POINTER(_BatchOpts), _PS]),
    "tfc_dataset_padded_batch": (_P, [_P, _I64, ctypes.POINTER(_PaddedOpts), _PS]),
    "tfc_dataset_unbatch": (_P, [_P, _PS]),
    "tfc_dataset_shuffle": (_P, [_P, _I64, ctypes.POINTER(_ShuffleOpts), _PS]),
    "tfc_dataset_repeat": (_P, [_P, _I64, _PS]),
    "tfc_dataset_take": (_P, [_P, _I64, _PS]),
    "tfc_dataset_skip": (_P, [_P, _I64, _PS]),
    "tfc_dataset_shard": (_P, [_P, _I64, _I64, _PS]),
    "tfc_dataset_enumerate": (_P, [_P, _I64, _PS]),
    "tfc_dataset_interleave": (_P, [_P, _DS_FN, _P, ctypes.POINTER(_InterleaveOpts), _PS]),
    "tfc_dataset_flat_map": (_P, [_P, _DS_FN, _P, ctypes.POINTER(_FlatMapOpts), _PS]),
    "tfc_dataset_prefetch": (_P, [_P, _I64, _PS]),
    "tfc_dataset_cache": (_P, [_P, _CP, _PS]),
    "tfc_dataset_ignore_errors": (_P, [_P, _PS]),
    "tfc_dataset_with_options": (_P, [_P, ctypes.POINTER(_Options), _PS]),
    "tfc_dataset_options": (_Options, [_P]),
    "tfc_crc32c": (ctypes.c_uint32, [ctypes.c_char_p, ctypes.c_size_t]),
    "tfc_crc32c_mask": (ctypes.c_uint32, [ctypes.c_uint32]),
    "tfc_tfrecord_writer_new": (_P, [_CP, _CP, _I, _PS]),
    "tfc_tfrecord_writer_write": (_B, [_P, ctypes.c_char_p, ctypes.c_size_t, _PS]),
    "tfc_tfrecord_writer_flush": (_B, [_P, _PS]),
    "tfc_tfrecord_writer_close": (_B, [_P, _PS]),
    "tfc_tfrecord_reader_new": (_P, [_CP, _CP, _I64, _PS]),
    "tfc_tfrecord_reader_next": (_B, [_P, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t), _PS]),
    "tfc_tfrecord_reader_free": (None, [_P]),
}

_bound = {}


def _fn(name):
    f = _bound.get(name)
    if f is None:
        res, args = _SIGS[name]
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
        _bound[name] = f
    return f


def _call(name, *args):
    """Calls a constructor taking a status last; raises the tfc error on failure."""
    st = Status()
    h = _fn(name)(*args, ctypes.byref(st))
    if not h:
        check(st)
        raise _errors.UnknownError("%s failed" % name)
    return h


def _flag(v):
    return 0 if v is None else (1 if v else -1)


def crc32c(data):
    return int(_fn("tfc_crc32c")(bytes(data), len(data)))


def masked_crc32c(data):
    return int(_fn("tfc_crc32c_mask")(crc32c(data)))


# ---- nested structures ---------------------------------------------------------------------------------------
def _flatten(value):
    """(structure string, flat list of leaves) in tf.nest order (dict keys sorted)."""
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        parts = [_flatten(v) for v in value]
        s = "(" + ",".join(p[0] for p in parts) + ("," if len(parts) == 1 else "") + ")"
        return s, [leaf for p in parts for leaf in p[1]]
    if isinstance(value, dict):
        keys = sorted(value)
        parts = [_flatten(value[k]) for k in keys]
        return "{" + ",".join("%s:%s" % (k, p[0]) for k, p in zip(keys, parts)) + "}", \
            [leaf for p in parts for leaf in p[1]]
    return ".", [value]


def _pack(structure, leaves):
    """Inverse of _flatten for a canonical structure string."""
    it = iter(leaves)
    pos = 0

    def node():
        nonlocal pos
        c = structure[pos]
        if c == ".":
            pos += 1
            return next(it)
        close = ")" if c == "(" else "}"
        pos += 1
        items, keys = [], []
        while structure[pos] != close:
            if c == "{":
                colon = structure.index(":", pos)
                keys.append(structure[pos:colon])
                pos = colon + 1
            items.append(node())
            if structure[pos] == ",":
                pos += 1
        pos += 1
        return tuple(items) if c == "(" else dict(zip(keys, items))

    return node()


def _to_tensor(x, dtype=None):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Dataset):
        raise TypeError("a Dataset cannot be an element component")
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()
    return constant(x, dtype=dtype)


def _spec_array(specs):
    arr = (TensorSpec * max(len(specs), 1))()
    for i, (dt, shape) in enumerate(specs):
        arr[i].dtype = _dt.as_dtype(dt).enum if dt is not None else 0
        if shape is None:
            arr[i].shape.rank = -1
        else:
            arr[i].shape.rank = len(shape)
            for d, v in enumerate(shape):
                arr[i].shape.dims[d] = -1 if v is None else int(v)
    return arr


def _signature(sig):
    """(structure, TensorSpec array) of a nested structure of (dtype, shape) pairs or objects with .dtype/.shape
    (tf.TensorSpec)."""
    def is_leaf(x):
        return (isinstance(x, tuple) and len(x) == 2 and not isinstance(x[0], (tuple, dict))
                and (x[1] is None or isinstance(x[1], (tuple, list)))) or hasattr(x, "shape")

    def walk(x):
        if is_leaf(x):
            if hasattr(x, "shape") and not isinstance(x, tuple):
                shape = None if x.shape.rank is None else [d for d in x.shape.as_list()]
                return ".", [(x.dtype.name, shape)]
            return ".", [(x[0], x[1])]
        if isinstance(x, tuple):
            parts = [walk(v) for v in x]
            return "(" + ",".join(p[0] for p in parts) + ("," if len(parts) == 1 else "") + ")", \
                [s for p in parts for s in p[1]]
        keys = sorted(x)
        parts = [walk(x[k]) for k in keys]
        return "{" + ",".join("%s:%s" % (k, p[0]) for k, p in zip(keys, parts)) + "}", [s for p in parts for s in p[1]]

    s, specs = walk(sig)
    return s, specs


# ---- callbacks: Python objects kept alive while a C dataset refers to them -----------------------------------
_live = {}
_live_ids = itertools.count(1)
_live_lock = threading.Lock()


def _keep(obj):
    with _live_lock:
        k = next(_live_ids)
        _live[k] = obj
    return k


@_FREE_FN
def _release(user):
    with _live_lock:
        _live.pop(user or 0, None)


def _set_error(st, e):
    code = getattr(e, "code", None) if isinstance(e, _errors.OpError) else None
    msg = ("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace")[:250]
    st.contents.code = code if code else (3 if isinstance(e, (TypeError, ValueError)) else 2)
    st.contents.msg = msg


def _in_tensors(inp, n):
    return [Tensor(lib.tfc_tensor_ref(inp[i])) for i in range(n)]


def _call_user(fn, structure, comps):
    args = _pack(structure, comps)
    if isinstance(args, tuple):
        return fn(*args)
    return fn(args)


def _write_out(out, n_out, structure, value):
    s, leaves = _flatten(value)
    if s != structure:
        raise TypeError("the function returned elements %s, expected %s" % (s, structure))
    if len(leaves) != n_out:
        raise TypeError("the function returned %d components, expected %d" % (len(leaves), n_out))
    ts = [_to_tensor(x) for x in leaves]
    for i, t in enumerate(ts):
        out[i] = lib.tfc_tensor_ref(t.handle)


class _MapCallback:
    def __init__(self, fn, in_structure, out_structure):
        self.fn, self.in_s, self.out_s = fn, in_structure, out_structure
        self.c = _MAP_FN(self)

    def __call__(self, ctx, user, inp, n_in, out, n_out, st):
        try:
            _write_out(out, n_out, self.out_s, _call_user(self.fn, self.in_s, _in_tensors(inp, n_in)))
            return True
        except Exception as e:  # noqa: BLE001 - reported through the status
            for i in range(n_out):
                if out[i]:
                    lib.tfc_tensor_unref(out[i])
                    out[i] = None
            _set_error(st, e)
            return False


class _PredCallback:
    def __init__(self, fn, in_structure):
        self.fn, self.in_s = fn, in_structure
        self.c = _PRED_FN(self)

    def __call__(self, ctx, user, inp, n_in, keep, st):
        try:
            r = _call_user(self.fn, self.in_s, _in_tensors(inp, n_in))
            r = r.numpy() if hasattr(r, "numpy") else np.asarray(r)
            if np.shape(r) != () or np.asarray(r).dtype != np.bool_:
                raise ValueError("filter predicate must return a scalar bool, got %r" % (r,))
            keep[0] = bool(r)
            return True
        except Exception as e:  # noqa: BLE001
            _set_error(st, e)
            return False


class _DatasetCallback:
    def __init__(self, fn, in_structure):
        self.fn, self.in_s = fn, in_structure
        self.c = _DS_FN(self)

    def __call__(self, ctx, user, inp, n_in, st):
        try:
            ds = _call_user(self.fn, self.in_s, _in_tensors(inp, n_in))
            if not isinstance(ds, Dataset):
                raise TypeError("the function must return a Dataset, got %s" % type(ds).__name__)
            return lib_dataset_ref(ds._h)
        except Exception as e:  # noqa: BLE001
            _set_error(st, e)
            return None


def lib_dataset_ref(h):
    return _fn("tfc_dataset_ref")(h)


class _GenCallbacks:
    """from_generator: init calls the Python generator function, next advances it, finalize drops it."""

    def __init__(self, gen_fn, structure, n):
        self.gen_fn, self.structure, self.n = gen_fn, structure, n
        self.iters = {}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.c_init = _GEN_INIT(self.init)
        self.c_next = _GEN_NEXT(self.next)
        self.c_final = _GEN_FINAL(self.final)

    def init(self, user, st):
        try:
            it = iter(self.gen_fn())
            with self.lock:
                k = next(self.ids)
                self.iters[k] = it
            return k
        except Exception as e:  # noqa: BLE001
            _set_error(st, e)
            return None

    def next(self, ctx, user, state, out, n_out, end, st):
        try:
            it = self.iters[state]
            try:
                v = next(it)
            except StopIteration:
                end[0] = True
                return True
            if self.structure == "." and isinstance(v, tuple) and len(v) == 1:
                v = v[0]
            _write_out(out, n_out, self.structure, v)
            return True
        except Exception as e:  # noqa: BLE001
            _set_error(st, e)
            return False

    def final(self, user, state):
        with self.lock:
            self.iters.pop(state or 0, None)


# ---- datasets -----------------------------------------------------------------------------------------------
class Options:
    """tf.data.Options (deterministic, threading.private_threadpool_size, threading.max_intra_op_parallelism)."""

    class _Threading:
        def __init__(self):
            self.private_threadpool_size = None
            self.max_intra_op_parallelism = None

    def __init__(self):
        self.deterministic = None
        self.threading = Options._Threading()


class Dataset:
    """tf.data.Dataset over a tfc dataset node. Owns one reference to the C dataset."""

    def __init__(self, handle):
        self._h = ctypes.c_void_p(handle)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None:
            try:
                _fn("tfc_dataset_unref")(h)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass
            self._h = None

    def _ref(self):
        return _fn("tfc_dataset_ref")(self._h)

    def _new(self, name, *args):
        return Dataset(_call(name, self._ref(), *args))

    # ---- introspection
    @property
    def structure(self):
        return _fn("tfc_dataset_structure")(self._h).decode()

    @property
    def num_components(self):
        return _fn("tfc_dataset_num_components")(self._h)

    def component_specs(self):
        out = []
        for i in range(self.num_components):
            s = _fn("tfc_dataset_component_spec")(self._h, i)
            dt = _dt.from_enum(s.dtype).name if s.dtype else None
            shape = None if s.shape.rank < 0 else tuple(None if s.shape.dims[d] < 0 else int(s.shape.dims[d])
                                                       for d in range(s.shape.rank))
            out.append((dt, shape))
        return out

    @property
    def element_spec(self):
        buf = ctypes.create_string_buffer(1 << 16)
        return _fn("tfc_dataset_element_spec_str")(self._h, buf, len(buf)).decode()

    def graph(self):
        buf = ctypes.create_string_buffer(1 << 16)
        return _fn("tfc_dataset_graph_str")(self._h, buf, len(buf)).decode()

    def cardinality(self):
        return int(_fn("tfc_dataset_cardinality")(self._h))

    def options(self):
        o = _fn("tfc_dataset_options")(self._h)
        r = Options()
        r.deterministic = None if o.deterministic == 0 else o.deterministic == 1
        r.threading.private_threadpool_size = o.private_threadpool_size or None
        r.threading.max_intra_op_parallelism = o.max_intra_op_parallelism or None
        return r

    # ---- iteration
    def __iter__(self):
        return _Iterator(self)

    def as_numpy_iterator(self):
        for e in self:
            s, leaves = _flatten(e)
            yield _pack(s, [t.numpy() for t in leaves])

    # ---- sources
    @staticmethod
    def range(*args, dtype=None, output_type=None):
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        else:
            start, stop, step = args
        dt = output_type or dtype
        return Dataset(_call("tfc_dataset_range", int(start), int(stop), int(step),
                             _dt.as_dtype(dt).enum if dt is not None else 0))

    @staticmethod
    def _from(name, value):
        s, leaves = _flatten(value)
        ts = [_to_tensor(x) for x in leaves]
        arr = (_P * max(len(ts), 1))(*[t.handle for t in ts])
        return Dataset(_call(name, arr, len(ts), s.encode()))

    @staticmethod
    def from_tensor_slices(value):
        return Dataset._from("tfc_dataset_from_tensor_slices", value)

    @staticmethod
    def from_tensors(value):
        return Dataset._from("tfc_dataset_from_tensors", value)

    @staticmethod
    def from_generator(generator, output_signature):
        s, specs = _signature(output_signature)
        cb = _GenCallbacks(generator, s, len(specs))
        g = _Generator(cb.c_init, cb.c_next, cb.c_final, _keep(cb), _release)
        return Dataset(_call("tfc_dataset_from_generator", ctypes.byref(g), s.encode(), _spec_array(specs)))

    @staticmethod
    def zip(*datasets):
        if len(datasets) == 1 and isinstance(datasets[0], tuple):
            datasets = datasets[0]
        arr = (_P * len(datasets))(*[d._ref() for d in datasets])
        return Dataset(_call("tfc_dataset_zip", arr, len(datasets)))

    def concatenate(self, other):
        return self._new("tfc_dataset_concatenate", other._ref())

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        pats = [file_pattern] if isinstance(file_pattern, (str, bytes)) else list(file_pattern)
        arr = (_CP * len(pats))(*[p.encode() if isinstance(p, str) else p for p in pats])
        o = _ListFilesOpts(_flag(shuffle), int(seed or 0), seed is not None)
        return Dataset(_call("tfc_dataset_list_files", arr, len(pats), ctypes.byref(o)))

    # ---- transformations
    def _out_structure(self, fn, output_signature):
        """(structure, spec array or None) of fn's outputs: declared, or probed on the first element."""
        if output_signature is not None:
            s, specs = _signature(output_signature)
            return s, _spec_array(specs)
        for e in self.take(1):
            args = e if isinstance(e, tuple) else (e,)
            s, leaves = _flatten(fn(*args))
            specs = []
            for x in leaves:
                t = _to_tensor(x)
                specs.append((t.dtype.name, [None] * len(t.shape)))
            return s, _spec_array(specs)
        return self.structure, None

    def map(self, map_func, num_parallel_calls=None, deterministic=None, output_signature=None):
        s, specs = self._out_structure(map_func, output_signature)
        cb = _MapCallback(map_func, self.structure, s)
        o = _MapOpts(0 if num_parallel_calls is None else int(num_parallel_calls), _flag(deterministic), s.encode(),
                     specs, _release)
        return self._new("tfc_dataset_map", cb.c, _keep(cb), ctypes.byref(o))

    def filter(self, predicate):
        cb = _PredCallback(predicate, self.structure)
        return self._new("tfc_dataset_filter", cb.c, _keep(cb), ctypes.byref(_FilterOpts(_release)))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None):
        o = _BatchOpts(bool(drop_remainder), 0 if num_parallel_calls is None else int(num_parallel_calls),
                       _flag(deterministic))
        return self._new("tfc_dataset_batch", int(batch_size), ctypes.byref(o))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
        n = self.num_components
        shapes = values = None
        keep = []
        if padded_shapes is not None:
            _, flat = _flatten(padded_shapes) if not isinstance(padded_shapes, list) else (".", [padded_shapes])
            shapes = (Shape * n)()
            for i, ps in enumerate(flat):
                if ps is None:
                    shapes[i].rank = -1
                    continue
                ps = list(ps.as_list() if hasattr(ps, "as_list") else ps)
                shapes[i].rank = len(ps)
                for d, v in enumerate(ps):
                    shapes[i].dims[d] = -1 if v is None else int(v)
        if padding_values is not None:
            _, flat = _flatten(padding_values)
            specs = self.component_specs()
            ts = [None if v is None else _to_tensor(v, dtype=specs[i][0]) for i, v in enumerate(flat)]
            keep = ts
            values = (_P * n)(*[t.handle if t is not None else None for t in ts])
        o = _PaddedOpts(shapes, values, bool(drop_remainder))
        ds = self._new("tfc_dataset_padded_batch", int(batch_size), ctypes.byref(o))
        del keep
        return ds

    def unbatch(self):
        return self._new("tfc_dataset_unbatch")

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        o = _ShuffleOpts(int(seed or 0), seed is not None, _flag(reshuffle_each_iteration))
        return self._new("tfc_dataset_shuffle", int(buffer_size), ctypes.byref(o))

    def repeat(self, count=None):
        return self._new("tfc_dataset_repeat", -1 if count is None else int(count))

    def take(self, count):
        return self._new("tfc_dataset_take", int(count))

    def skip(self, count):
        return self._new("tfc_dataset_skip", int(count))

    def shard(self, num_shards, index):
        return self._new("tfc_dataset_shard", int(num_shards), int(index))

    def enumerate(self, start=0):
        return self._new("tfc_dataset_enumerate", int(start))

    def _inner_structure(self, fn, output_signature):
        if output_signature is not None:
            s, specs = _signature(output_signature)
            return s, _spec_array(specs)
        for e in self.take(1):
            args = e if isinstance(e, tuple) else (e,)
            return fn(*args).structure, None
        return ".", None

    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, output_signature=None):
        s, specs = self._inner_structure(map_func, output_signature)
        cb = _DatasetCallback(map_func, self.structure)
        o = _InterleaveOpts(AUTOTUNE if cycle_length is None else int(cycle_length),
                            1 if block_length is None else int(block_length),
                            0 if num_parallel_calls is None else int(num_parallel_calls), _flag(deterministic),
                            s.encode(), specs, _release)
        return self._new("tfc_dataset_interleave", cb.c, _keep(cb), ctypes.byref(o))

    def flat_map(self, map_func, output_signature=None):
        s, specs = self._inner_structure(map_func, output_signature)
        cb = _DatasetCallback(map_func, self.structure)
        o = _FlatMapOpts(s.encode(), specs, _release)
        return self._new("tfc_dataset_flat_map", cb.c, _keep(cb), ctypes.byref(o))

    def prefetch(self, buffer_size):
        return self._new("tfc_dataset_prefetch", int(buffer_size))

    def cache(self, filename=""):
        return self._new("tfc_dataset_cache", filename.encode() if filename else None)

    def ignore_errors(self):
        return self._new("tfc_dataset_ignore_errors")

    def with_options(self, options):
        o = _Options(_flag(options.deterministic), int(options.threading.private_threadpool_size or 0),
                     int(options.threading.max_intra_op_parallelism or 0))
        return self._new("tfc_dataset_with_options", ctypes.byref(o))


class _Iterator:
    def __init__(self, ds):
        self._ds = ds
        self._n = ds.num_components
        self._structure = ds.structure
        self._h = ctypes.c_void_p(_call("tfc_iterator_new", ds._h))
        self._out = (_P * max(self._n, 1))()

    def __iter__(self):
        return self

    def __next__(self):
        st = Status()
        ok = _fn("tfc_iterator_next")(self._h, self._out, self._n, ctypes.byref(st))
        if not ok:
            if st.code == 11:
                raise StopIteration
            check(st)
        return _pack(self._structure, [Tensor(self._out[i]) for i in range(self._n)])

    def get_next(self):
        return self.__next__()

    def _tfc_trackable(self):
        """A new trackable handle for tf.train.Checkpoint(iterator=it) (tfc/data_checkpoint.h)."""
        return _call("tfc_iterator_trackable", self._h)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None:
            try:
                _fn("tfc_iterator_free")(h)
            except Exception:  # noqa: BLE001
                pass
            self._h = None


def _filenames_dataset(filenames):
    if isinstance(filenames, Dataset):
        return filenames._ref()
    names = [filenames] if isinstance(filenames, (str, bytes)) else list(filenames)
    arr = (_CP * max(len(names), 1))(*[n.encode() if isinstance(n, str) else n for n in names])
    return _call("tfc_dataset_from_strings", arr, len(names))


def _reader_opts(compression_type, buffer_size, num_parallel_reads):
    return _ReaderOpts((compression_type or "").encode(), int(buffer_size or 0), int(num_parallel_reads or 0))


def TFRecordDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    """tf.data.TFRecordDataset."""
    o = _reader_opts(compression_type, buffer_size, num_parallel_reads)
    return Dataset(_call("tfc_dataset_tfrecord", _filenames_dataset(filenames), ctypes.byref(o)))


def TextLineDataset(filenames, compression_type=None, buffer_size=None, num_parallel_reads=None):  # noqa: N802
    """tf.data.TextLineDataset."""
    o = _reader_opts(compression_type, buffer_size, num_parallel_reads)
    return Dataset(_call("tfc_dataset_text_line", _filenames_dataset(filenames), ctypes.byref(o)))


class TFRecordWriter:
    """tf.io.TFRecordWriter(path, options) with options None, "", "GZIP" or "ZLIB"; a context manager."""

    def __init__(self, path, options=None, compression_level=-1):
        comp = getattr(options, "compression_type", options) or ""
        self._h = ctypes.c_void_p(_call("tfc_tfrecord_writer_new", str(path).encode(), comp.encode(),
                                        int(compression_level)))

    def write(self, record):
        st = Status()
        data = bytes(record)
        if not _fn("tfc_tfrecord_writer_write")(self._h, data, len(data), ctypes.byref(st)):
            check(st)

    def flush(self):
        st = Status()
        if not _fn("tfc_tfrecord_writer_flush")(self._h, ctypes.byref(st)):
            check(st)

    def close(self):
        if self._h:
            st = Status()
            h, self._h = self._h, None
            if not _fn("tfc_tfrecord_writer_close")(h, ctypes.byref(st)):
                check(st)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


def tf_record_iterator(path, compression_type=None, buffer_size=0):
    """Yields the records of a TFRecord file as bytes (tf.compat.v1.io.tf_record_iterator)."""
    r = ctypes.c_void_p(_call("tfc_tfrecord_reader_new", str(path).encode(), (compression_type or "").encode(),
                              int(buffer_size)))
    try:
        data, ln = ctypes.c_void_p(), ctypes.c_size_t()
        while True:
            st = Status()
            if not _fn("tfc_tfrecord_reader_next")(r, ctypes.byref(data), ctypes.byref(ln), ctypes.byref(st)):
                if st.code == 11:
                    return
                check(st)
            yield ctypes.string_at(data, ln.value) if ln.value else b""
    finally:
        _fn("tfc_tfrecord_reader_free")(r)


from . import data_more as _data_more  # noqa: E402,F401 - adds scan, reduce, CsvDataset, ... to this module
from . import data_save as _data_save  # noqa: E402,F401 - adds save, load and snapshot to Dataset
