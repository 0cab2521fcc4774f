"""tf.data service conformance: the same pipeline (fresh random data, a map and a filter that are graph functions,
batch) read through tfc's data service (a dispatcher and two workers on 127.0.0.1, include/tfc/data_service.h)
and through TensorFlow: distributed_epoch yields the element multiset of TensorFlow's local tf.data result
(every row exactly once; batches are cut within splits, so rows are compared), parallel_epochs yields every
local batch once per worker, as TensorFlow's own service with two workers does."""
import collections
import ctypes

import numpy as np
import pytest

from conftest import tf, tfc
from tfc import _lib
from tfc._lib import Status, check, lib
from tfc.data import Dataset

_P = ctypes.c_void_p
_CP = ctypes.c_char_p
_PS = ctypes.POINTER(Status)


class _DispatcherConfig(ctypes.Structure):
    _fields_ = [("port", ctypes.c_int), ("protocol", _CP), ("work_dir", _CP), ("fault_tolerant_mode", ctypes.c_bool),
                ("job_gc_timeout_ms", ctypes.c_int64)]


class _WorkerConfig(ctypes.Structure):
    _fields_ = [("dispatcher_address", _CP), ("worker_address", _CP), ("port", ctypes.c_int),
                ("heartbeat_interval_ms", ctypes.c_int64)]


class _DistributeOpts(ctypes.Structure):
    _fields_ = [("processing_mode", _CP), ("service", _CP), ("job_name", _CP),
                ("max_outstanding_requests", ctypes.c_int64), ("consumer_index", ctypes.c_int64),
                ("num_consumers", ctypes.c_int64), ("worker_wait_ms", ctypes.c_int64), ("timeout_s", ctypes.c_double)]


def _bind(name, res, args):
    f = getattr(lib, name)
    f.restype, f.argtypes = res, args
    return f


_dispatch_new = _bind("tfc_dispatch_server_new", _P, [ctypes.POINTER(_DispatcherConfig), _PS])
_dispatch_target = _bind("tfc_dispatch_server_target", _CP, [_P])
_dispatch_workers = _bind("tfc_dispatch_server_num_workers", ctypes.c_int, [_P])
_dispatch_free = _bind("tfc_dispatch_server_free", None, [_P])
_worker_new = _bind("tfc_worker_server_new", _P, [ctypes.POINTER(_WorkerConfig), _PS])
_worker_free = _bind("tfc_worker_server_free", None, [_P])
_map_function = _bind("tfc_dataset_map_function", _P, [_P, _P, _P, _P, _PS])
_filter_function = _bind("tfc_dataset_filter_function", _P, [_P, _P, _P, _PS])
_distribute = _bind("tfc_dataset_distribute", _P, [_P, ctypes.POINTER(_DistributeOpts), _PS])


def _checked(h, st):
    if not h:
        check(st)
        raise AssertionError("tfc call failed without a status")
    return h


@pytest.fixture(scope="module")
def service():
    st = Status()
    d = _checked(_dispatch_new(ctypes.byref(_DispatcherConfig()), ctypes.byref(st)), st)
    target = _dispatch_target(d)
    workers = [_checked(_worker_new(ctypes.byref(_WorkerConfig(target, None, 0, 100)), ctypes.byref(st)), st)
               for _ in range(2)]
    import time
    deadline = time.time() + 20
    while _dispatch_workers(d) < 2 and time.time() < deadline:
        time.sleep(0.05)
    assert _dispatch_workers(d) == 2
    yield target
    for w in workers:
        _worker_free(w)
    _dispatch_free(d)


def _tfc_pipeline(data, scale, batch):
    st = Status()
    def affine(x):
        return x * scale + 1.0

    def positive(x):
        return tfc.raw_ops.Greater(x=x, y=np.float32(0))

    mul, keep = tfc.function(affine), tfc.function(positive)
    ds = Dataset.from_tensor_slices(data)
    h = _checked(_map_function(ds._ref(), _lib.ctx(), mul._f, None, ctypes.byref(st)), st)
    h = _checked(_filter_function(h, _lib.ctx(), keep._f, ctypes.byref(st)), st)
    return Dataset(h).batch(batch)


def _tf_pipeline(data, scale, batch):
    def affine(x):
        return x * scale + 1.0

    def positive(x):
        return x > 0.0

    return tf.data.Dataset.from_tensor_slices(data).map(affine).filter(positive).batch(batch)


def _distribute_tfc(ds, target, mode):
    st = Status()
    o = _DistributeOpts(mode.encode(), target, None, 0, 0, 0, 0, 0.0)
    return Dataset(_checked(_distribute(ds._ref(), ctypes.byref(o), ctypes.byref(st)), st))


def _rows(batches):
    return collections.Counter(float(v) for b in batches for v in np.asarray(b).reshape(-1))


def test_distributed_epoch_every_row_once(rng, service):
    n = int(rng.integers(100, 400))
    data = rng.standard_normal(n).astype(np.float32)
    scale, batch = float(rng.uniform(0.5, 2.0)), int(rng.integers(2, 6))
    want = _rows(_tf_pipeline(data, scale, batch).as_numpy_iterator())
    got_batches = list(_distribute_tfc(_tfc_pipeline(data, scale, batch), service, "distributed_epoch")
                       .as_numpy_iterator())
    assert all(len(b) <= batch and b.dtype == np.float32 for b in got_batches)
    assert _rows(got_batches) == want


def test_parallel_epochs_every_batch_per_worker(rng, service):
    n = int(rng.integers(50, 200))
    data = rng.standard_normal(n).astype(np.float32)
    scale, batch = float(rng.uniform(0.5, 2.0)), int(rng.integers(2, 6))
    local = [tuple(b.tolist()) for b in _tf_pipeline(data, scale, batch).as_numpy_iterator()]
    got = collections.Counter(tuple(b.tolist()) for b in
                              _distribute_tfc(_tfc_pipeline(data, scale, batch), service, "parallel_epochs")
                              .as_numpy_iterator())
    assert got == collections.Counter({b: 2 for b in local})
    # TensorFlow's own service with two workers gives the same multiset
    d = tf.data.experimental.service.DispatchServer()
    ws = [tf.data.experimental.service.WorkerServer(tf.data.experimental.service.WorkerConfig(
        dispatcher_address=d.target.split("://")[1])) for _ in range(2)]
    tf_ds = _tf_pipeline(data, scale, batch).apply(tf.data.experimental.service.distribute(
        processing_mode="parallel_epochs", service=d.target))
    tf_got = collections.Counter(tuple(b.tolist()) for b in tf_ds.as_numpy_iterator())
    assert got == tf_got
    del ws, d
