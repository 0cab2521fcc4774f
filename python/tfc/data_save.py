"""tfc.data, saving: Dataset.save, Dataset.load and Dataset.snapshot of include/tfc/data_save.h, added to
tfc.data.Dataset with TensorFlow's names and arguments. Files are TensorFlow's snapshot format: what tfc saves
loads with tf.data.Dataset.load and the reverse."""
import ctypes

import numpy as np

from . import data as _d
from ._lib import Status, check

_P, _PP, _PS, _I, _B, _CP = _d._P, _d._PP, _d._PS, _d._I, _d._B, _d._CP
_READER_FN = ctypes.CFUNCTYPE(_P, _P, _PP, _I, _PS)


class _SaveOpts(ctypes.Structure):
    _fields_ = [("compression", _CP), ("shard_func", _d._MAP_FN), ("user", _P)]


class _LoadOpts(ctypes.Structure):
    _fields_ = [("compression", _CP), ("structure", _CP), ("element_spec", ctypes.POINTER(_d.TensorSpec)),
                ("reader_func", _READER_FN), ("user", _P)]


class _SnapshotOpts(ctypes.Structure):
    _fields_ = [("compression", _CP), ("reader_func", _READER_FN), ("shard_func", _d._MAP_FN), ("user", _P),
                ("user_free", _d._FREE_FN)]


_d._SIGS.update({
    "tfc_dataset_save": (_B, [_P, _CP, ctypes.POINTER(_SaveOpts), _PS]),
    "tfc_dataset_load": (_P, [_CP, ctypes.POINTER(_LoadOpts), _PS]),
    "tfc_dataset_snapshot": (_P, [_P, _CP, ctypes.POINTER(_SnapshotOpts), _PS]),
})


def _comp(c):
    return c.encode() if c else None


def _shard_callback(shard_func, structure):
    if shard_func is None:
        return None
    return _d._MapCallback(lambda *a: np.int64(np.asarray(
        (lambda r: r.numpy() if hasattr(r, "numpy") else r)(shard_func(*a)))), structure, ".")


def _save(self, path, compression=None, shard_func=None, checkpoint_args=None):
    """tf.data.Dataset.save (checkpoint_args is not supported)."""
    if checkpoint_args is not None:
        raise NotImplementedError("save: checkpoint_args is not supported by tfc")
    cb = _shard_callback(shard_func, self.structure)
    o = _SaveOpts(_comp(compression), cb.c if cb else _d._MAP_FN(), None)
    st = Status()
    if not _d._fn("tfc_dataset_save")(self._h, str(path).encode(), ctypes.byref(o), ctypes.byref(st)):
        check(st)


def _load(path, element_spec=None, compression=None, reader_func=None, wait=False):
    """tf.data.Dataset.load. element_spec: None (read from the files) or (structure string, [(dtype, shape)])."""
    if reader_func is not None:
        raise NotImplementedError("load: reader_func from Python is not supported by tfc.data")
    structure, specs = None, None
    if element_spec is not None:
        structure = element_spec[0].encode()
        specs = _d._spec_array(element_spec[1])
    o = _LoadOpts(_comp(compression), structure, specs, _READER_FN(), None)
    return _d.Dataset(_d._call("tfc_dataset_load", str(path).encode(), ctypes.byref(o)))


def _snapshot(self, path, compression="AUTO", reader_func=None, shard_func=None):
    """tf.data.Dataset.snapshot (reader_func from Python is not supported)."""
    if reader_func is not None:
        raise NotImplementedError("snapshot: reader_func from Python is not supported by tfc.data")
    cb = _shard_callback(shard_func, self.structure)
    o = _SnapshotOpts(_comp(compression), _READER_FN(), cb.c if cb else _d._MAP_FN(),
                      _d._keep(cb) if cb else None, _d._release if cb else _d._FREE_FN())
    return self._new("tfc_dataset_snapshot", str(path).encode(), ctypes.byref(o))


_d.Dataset.save = _save
_d.Dataset.load = staticmethod(_load)
_d.Dataset.snapshot = _snapshot
