"""tfc.data, continued: the transformations and sources of include/tfc/data_more.h (scan, reduce, take_while,
unique, rebatch, group_by_window, bucket_by_sequence_length, choose_from_datasets, sample_from_datasets, counter,
FixedLengthRecordDataset, CsvDataset), added to tfc.data.Dataset with TensorFlow's names and arguments."""
import ctypes

import numpy as np

from . import data as _d
from ._lib import Shape, Status, check, lib
from .tensor import Tensor

_P, _PP, _PS, _I, _I64, _B, _CP = _d._P, _d._PP, _d._PS, _d._I, _d._I64, _d._B, _d._CP
_WIN_FN = ctypes.CFUNCTYPE(_P, _P, _P, _P, _P, _PS)
_LEN_FN = ctypes.CFUNCTYPE(_B, _P, _P, _PP, _I, ctypes.POINTER(_I64), _PS)


def _np(x):
    """A user function's result (a Tensor or anything numpy takes) as a numpy value."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


class _ScanOpts(ctypes.Structure):
    _fields_ = [("state_structure", _CP), ("output_structure", _CP),
                ("output_spec", ctypes.POINTER(_d.TensorSpec)), ("user_free", _d._FREE_FN)]


_SIZE_FN = ctypes.CFUNCTYPE(_I64, _P, _I64)


class _GbwOpts(ctypes.Structure):
    _fields_ = [("output_structure", _CP), ("output_spec", ctypes.POINTER(_d.TensorSpec)),
                ("user_free", _d._FREE_FN), ("window_size_fn", _SIZE_FN)]


class _BucketOpts(ctypes.Structure):
    _fields_ = [("padded_shapes", ctypes.POINTER(Shape)), ("padding_values", _PP),
                ("pad_to_bucket_boundary", _B), ("no_padding", _B), ("drop_remainder", _B),
                ("user_free", _d._FREE_FN)]


class _CsvOpts(ctypes.Structure):
    _fields_ = [("compression_type", _CP), ("buffer_size", _I64), ("header", _B), ("field_delim", ctypes.c_char),
                ("use_quote_delim", _I), ("na_value", _CP), ("select_cols", ctypes.POINTER(_I64)),
                ("n_select", _I), ("exclude_cols", ctypes.POINTER(_I64)), ("n_exclude", _I)]


_d._SIGS.update({
    "tfc_dataset_counter": (_P, [_I64, _I64, _I, _PS]),
    "tfc_dataset_fixed_length_record": (_P, [_P, _I64, _I64, _I64, ctypes.POINTER(_d._ReaderOpts), _PS]),
    "tfc_dataset_csv": (_P, [_P, _PP, _I, ctypes.POINTER(_CsvOpts), _PS]),
    "tfc_dataset_scan": (_P, [_P, _PP, _I, _d._MAP_FN, _P, ctypes.POINTER(_ScanOpts), _PS]),
    "tfc_dataset_reduce": (_B, [_P, _PP, _I, _d._MAP_FN, _P, _PP, _PS]),
    "tfc_dataset_take_while": (_P, [_P, _d._PRED_FN, _P, ctypes.POINTER(_d._FilterOpts), _PS]),
    "tfc_dataset_unique": (_P, [_P, _PS]),
    "tfc_dataset_rebatch": (_P, [_P, ctypes.POINTER(_I64), _I, _B, _PS]),
    "tfc_dataset_group_by_window": (_P, [_P, _d._MAP_FN, _WIN_FN, _P, _I64, ctypes.POINTER(_GbwOpts), _PS]),
    "tfc_dataset_bucket_by_sequence_length": (_P, [_P, _LEN_FN, _P, ctypes.POINTER(_I64), _I, ctypes.POINTER(_I64),
                                                   ctypes.POINTER(_BucketOpts), _PS]),
    "tfc_dataset_choose_from_datasets": (_P, [_PP, _I, _P, _B, _PS]),
    "tfc_dataset_sample_from_datasets": (_P, [_PP, _I, ctypes.POINTER(ctypes.c_double), _I64, _B, _B, _PS]),
})


def _tensors(value):
    s, leaves = _d._flatten(value)
    ts = [_d._to_tensor(x) for x in leaves]
    return s, ts, (_P * max(len(ts), 1))(*[t.handle for t in ts])


class _StateCallback:
    """scan / reduce: fn(state, element) -> (new_state, output) or new_state, as flat C components."""

    def __init__(self, fn, state_s, n_state, elem_s, out_s, with_output):
        self.fn, self.state_s, self.n_state, self.elem_s = fn, state_s, n_state, elem_s
        self.out_s, self.with_output = out_s, with_output
        self.c = _d._MAP_FN(self)

    def __call__(self, ctx, user, inp, n_in, out, n_out, st):
        try:
            comps = _d._in_tensors(inp, n_in)
            state = _d._pack(self.state_s, comps[:self.n_state])
            elem = _d._pack(self.elem_s, comps[self.n_state:])
            r = self.fn(state, elem)
            if self.with_output:
                if not isinstance(r, tuple) or len(r) != 2:
                    raise TypeError("scan_func must return a pair (new_state, output)")
                s1, l1 = _d._flatten(r[0])
                s2, l2 = _d._flatten(r[1])
                if s1 != self.state_s or s2 != self.out_s:
                    raise TypeError("scan_func returned (%s, %s), expected (%s, %s)" % (s1, s2, self.state_s,
                                                                                        self.out_s))
                leaves = l1 + l2
            else:
                s1, leaves = _d._flatten(r)
                if s1 != self.state_s:
                    raise TypeError("reduce_func returned %s, expected %s" % (s1, self.state_s))
            dts = [None] * len(leaves)
            for i, x in enumerate(leaves[:self.n_state]):
                dts[i] = self._state_dtypes[i]
            ts = [_d._to_tensor(x, dtype=dt) if not isinstance(x, Tensor) else x for x, dt in zip(leaves, dts)]
            for i, t in enumerate(ts):
                out[i] = lib.tfc_tensor_ref(t.handle)
            return True
        except Exception as e:  # noqa: BLE001 - reported through the status
            for i in range(n_out):
                if out[i]:
                    lib.tfc_tensor_unref(out[i])
                    out[i] = None
            _d._set_error(st, e)
            return False


def _first(ds):
    for e in ds.take(1):
        return e
    return None


def _scan(self, initial_state, scan_func):
    state_s, state_ts, arr = _tensors(initial_state)
    first = _first(self)
    out_s, specs = ".", None
    if first is not None:
        _, new = scan_func(_d._pack(state_s, state_ts), first)
        out_s, leaves = _d._flatten(new)
        ts = [_d._to_tensor(x) for x in leaves]
        specs = _d._spec_array([(t.dtype.name, list(t.shape)) for t in ts])
    cb = _StateCallback(scan_func, state_s, len(state_ts), self.structure, out_s, True)
    cb._state_dtypes = [t.dtype.name for t in state_ts]
    o = _ScanOpts(state_s.encode(), out_s.encode(), specs, _d._release)
    return self._new("tfc_dataset_scan", arr, len(state_ts), cb.c, _d._keep(cb), ctypes.byref(o))


def _reduce(self, initial_state, reduce_func):
    state_s, state_ts, arr = _tensors(initial_state)
    cb = _StateCallback(reduce_func, state_s, len(state_ts), self.structure, None, False)
    cb._state_dtypes = [t.dtype.name for t in state_ts]
    out = (_P * len(state_ts))()
    st = Status()
    if not _d._fn("tfc_dataset_reduce")(self._h, arr, len(state_ts), cb.c, None, out, ctypes.byref(st)):
        check(st)
    return _d._pack(state_s, [Tensor(out[i]) for i in range(len(state_ts))])


def _take_while(self, predicate):
    cb = _d._PredCallback(predicate, self.structure)
    return self._new("tfc_dataset_take_while", cb.c, _d._keep(cb), ctypes.byref(_d._FilterOpts(_d._release)))


def _unique(self):
    return self._new("tfc_dataset_unique")


def _rebatch(self, batch_size, drop_remainder=False):
    sizes = [int(batch_size)] if np.ndim(batch_size) == 0 else [int(x) for x in batch_size]
    arr = (_I64 * len(sizes))(*sizes)
    return self._new("tfc_dataset_rebatch", arr, len(sizes), bool(drop_remainder))


class _WindowCallback:
    """group_by_window: key_func(*element) -> int64 scalar and reduce_func(key, window Dataset) -> Dataset."""

    def __init__(self, key_func, reduce_func, structure, window_size_func=None):
        self.key_func, self.reduce_func, self.s = key_func, reduce_func, structure
        self.size_func = window_size_func
        self.c_key = _d._MAP_FN(self.key)
        self.c_reduce = _WIN_FN(self.reduce)
        self.c_size = _SIZE_FN(self.size) if window_size_func is not None else _SIZE_FN()

    def size(self, user, key):
        try:
            r = self.size_func(_d._to_tensor(np.int64(key)))
            return int(_np(r))
        except Exception:  # noqa: BLE001 - a size < 1 makes the C side report the key
            return 0

    def key(self, ctx, user, inp, n_in, out, n_out, st):
        try:
            k = _d._call_user(self.key_func, self.s, _d._in_tensors(inp, n_in))
            t = _d._to_tensor(np.int64(_np(k)), dtype="int64")
            out[0] = lib.tfc_tensor_ref(t.handle)  # t stays alive until the reference is taken
            return True
        except Exception as e:  # noqa: BLE001
            _d._set_error(st, e)
            return False

    def reduce(self, ctx, user, key, window, st):
        try:
            ds = self.reduce_func(Tensor(lib.tfc_tensor_ref(key)), _d.Dataset(_d.lib_dataset_ref(window)))
            if not isinstance(ds, _d.Dataset):
                raise TypeError("reduce_func must return a Dataset")
            return _d.lib_dataset_ref(ds._h)
        except Exception as e:  # noqa: BLE001
            _d._set_error(st, e)
            return None


def _group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None):
    first = _first(self)
    out_s, specs = self.structure, None
    if first is not None:
        args = first if isinstance(first, tuple) else (first,)
        k = key_func(*args)
        probe = reduce_func(_d._to_tensor(np.int64(_np(k))),
                            self.take(1))
        out_s = probe.structure
        specs = _d._spec_array(probe.component_specs())
    cb = _WindowCallback(key_func, reduce_func, self.structure, window_size_func)
    o = _GbwOpts(out_s.encode(), specs, _d._release, cb.c_size)
    h = _d._call("tfc_dataset_group_by_window", self._ref(), cb.c_key, cb.c_reduce, _d._keep(cb),
                 int(window_size or 0), ctypes.byref(o))
    return _d.Dataset(h)


class _LengthCallback:
    def __init__(self, fn, structure):
        self.fn, self.s = fn, structure
        self.c = _LEN_FN(self)

    def __call__(self, ctx, user, inp, n_in, length, st):
        try:
            r = _d._call_user(self.fn, self.s, _d._in_tensors(inp, n_in))
            length[0] = int(_np(r))
            return True
        except Exception as e:  # noqa: BLE001
            _d._set_error(st, e)
            return False


def _bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                               padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                               drop_remainder=False):
    n = self.num_components
    shapes = values = None
    keep = []
    if padded_shapes is not None:
        _, flat = _d._flatten(padded_shapes) if not isinstance(padded_shapes, list) else (".", [padded_shapes])
        shapes = (Shape * n)()
        for i, ps in enumerate(flat):
            ps = list(ps.as_list() if hasattr(ps, "as_list") else ps)
            shapes[i].rank = len(ps)
            for d, v in enumerate(ps):
                shapes[i].dims[d] = -1 if v is None else int(v)
    if padding_values is not None:
        _, flat = _d._flatten(padding_values)
        specs = self.component_specs()
        keep = [_d._to_tensor(v, dtype=specs[i][0]) for i, v in enumerate(flat)]
        values = (_P * n)(*[t.handle for t in keep])
    bounds = (_I64 * max(len(bucket_boundaries), 1))(*[int(b) for b in bucket_boundaries])
    sizes = (_I64 * len(bucket_batch_sizes))(*[int(b) for b in bucket_batch_sizes])
    cb = _LengthCallback(element_length_func, self.structure)
    o = _BucketOpts(shapes, values, bool(pad_to_bucket_boundary), bool(no_padding), bool(drop_remainder),
                    _d._release)
    ds = self._new("tfc_dataset_bucket_by_sequence_length", cb.c, _d._keep(cb), bounds, len(bucket_boundaries),
                   sizes, ctypes.byref(o))
    del keep
    return ds


def _choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    arr = (_P * len(datasets))(*[d._ref() for d in datasets])
    return _d.Dataset(_d._call("tfc_dataset_choose_from_datasets", arr, len(datasets), choice_dataset._ref(),
                               bool(stop_on_empty_dataset)))


def _sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False, rerandomize_each_iteration=None):
    arr = (_P * len(datasets))(*[d._ref() for d in datasets])
    w = None if weights is None else (ctypes.c_double * len(datasets))(*[float(x) for x in weights])
    return _d.Dataset(_d._call("tfc_dataset_sample_from_datasets", arr, len(datasets), w, int(seed or 0),
                               seed is not None, bool(stop_on_empty_dataset)))


def _counter(start=0, step=1, dtype=None):
    return _d.Dataset(_d._call("tfc_dataset_counter", int(start), int(step),
                               _d._dt.as_dtype(dtype).enum if dtype is not None else 0))


def FixedLengthRecordDataset(filenames, record_bytes, header_bytes=None, footer_bytes=None, buffer_size=None,  # noqa: N802
                             compression_type=None, num_parallel_reads=None):
    """tf.data.FixedLengthRecordDataset."""
    o = _d._reader_opts(compression_type, buffer_size, num_parallel_reads)
    return _d.Dataset(_d._call("tfc_dataset_fixed_length_record", _d._filenames_dataset(filenames), int(record_bytes),
                               int(header_bytes or 0), int(footer_bytes or 0), ctypes.byref(o)))


def CsvDataset(filenames, record_defaults, compression_type=None, buffer_size=None, header=False,  # noqa: N802
               field_delim=",", use_quote_delim=True, na_value="", select_cols=None, exclude_cols=None):
    """tf.data.experimental.CsvDataset. record_defaults: tensors / lists of one value (the default), or dtypes
    (a required column)."""
    defs = []
    for d in record_defaults:
        if isinstance(d, str) or hasattr(d, "as_numpy_dtype") or isinstance(d, type):
            dt = _d._dt.as_dtype(getattr(d, "name", d))
            defs.append(_d._to_tensor(np.zeros((0,), dtype=object if dt.name == "string" else dt.name), dtype=dt.name))
        else:
            defs.append(_d._to_tensor(d))
    arr = (_P * len(defs))(*[t.handle for t in defs])
    sel = None if select_cols is None else (_I64 * max(len(select_cols), 1))(*[int(c) for c in select_cols])
    exc = None if exclude_cols is None else (_I64 * max(len(exclude_cols), 1))(*[int(c) for c in exclude_cols])
    o = _CsvOpts((compression_type or "").encode(), int(buffer_size or 0), bool(header), field_delim.encode()[:1],
                 1 if use_quote_delim else -1, (na_value or "").encode(), sel, len(select_cols or []), exc,
                 len(exclude_cols or []))
    return _d.Dataset(_d._call("tfc_dataset_csv", _d._filenames_dataset(filenames), arr, len(defs), ctypes.byref(o)))


_d.Dataset.scan = _scan
_d.Dataset.reduce = _reduce
_d.Dataset.take_while = _take_while
_d.Dataset.unique = _unique
_d.Dataset.rebatch = _rebatch
_d.Dataset.group_by_window = _group_by_window
_d.Dataset.bucket_by_sequence_length = _bucket_by_sequence_length
_d.Dataset.choose_from_datasets = staticmethod(_choose_from_datasets)
_d.Dataset.sample_from_datasets = staticmethod(_sample_from_datasets)
_d.Dataset.counter = staticmethod(_counter)
_d.FixedLengthRecordDataset = FixedLengthRecordDataset
_d.CsvDataset = CsvDataset
