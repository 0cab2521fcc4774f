"""Dataset.save / Dataset.load / Dataset.snapshot (include/tfc/data_save.h) against tf.data on fresh random data:
what tfc saves loads in TensorFlow (element_spec read from tfc's dataset_spec.pb) with equal elements, what
TensorFlow saves loads in tfc with equal elements and element_spec, for tuple and dict elements of several dtypes
(strings with NUL bytes included), without compression and with GZIP, with and without a shard_func; a snapshot tfc
wrote loads in TensorFlow; a corrupted chunk file is a DataLossError in both."""
import glob
import os

import numpy as np
import pytest

from conftest import tf, tfc
from tfc import data as tfd
from test_data import _assert_same_elem, _np, assert_same_sequence

tfdata = tf.data


def _value(rng, n):
    """A random nested value of n rows: a tuple and a dict of several dtypes."""
    s = np.array([bytes(rng.integers(0, 256, size=int(rng.integers(0, 12))).astype(np.uint8)) for _ in range(n)],
                 dtype=object)
    x = rng.standard_normal((n, int(rng.integers(1, 4)))).astype(np.float32)
    d = rng.standard_normal(n).astype(np.float64)
    i32 = rng.integers(-2**31, 2**31 - 1, size=(n, 2)).astype(np.int32)
    ids = np.arange(n, dtype=np.int64)
    b = rng.integers(0, 2, size=n).astype(bool)
    u8 = rng.integers(0, 256, size=(n, 2, 2)).astype(np.uint8)
    return [(ids, x, s), {"id": ids, "name": s, "f64": d, "pair": (i32, b), "img": u8}]


def _sorted_by_id(elems):
    def key(e):
        return int(e[0] if isinstance(e, tuple) else e["id"])
    return sorted(elems, key=key)


def _same_multiset(got, want):
    got, want = _sorted_by_id(got), _sorted_by_id(want)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_same_elem(g, w, "element %d" % i)


def _sorted_keys(spec):
    """The element_spec with dict keys in sorted order (tfc prints dicts in flatten order)."""
    if isinstance(spec, dict):
        return {k: _sorted_keys(spec[k]) for k in sorted(spec)}
    if isinstance(spec, tuple):
        return tuple(_sorted_keys(v) for v in spec)
    return spec


def _elems(ds):
    return [_np(e) for e in ds.as_numpy_iterator()]


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_tfc_saves_tensorflow_loads(rng, tmp_path, compression):
    n = int(rng.integers(0, 30))
    for k, value in enumerate(_value(rng, n)):
        path = str(tmp_path / ("tfc%d" % k))
        tfd.Dataset.from_tensor_slices(value).save(path, compression=compression)
        want = tfdata.Dataset.from_tensor_slices(value)
        got = tfdata.Dataset.load(path, compression=compression)  # element_spec from tfc's dataset_spec.pb
        assert got.element_spec == want.element_spec
        assert int(got.cardinality()) == n
        assert_same_sequence(tfdata.Dataset.load(path, compression=compression), want)


@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_tensorflow_saves_tfc_loads(rng, tmp_path, compression):
    n = int(rng.integers(0, 30))
    for k, value in enumerate(_value(rng, n)):
        path = str(tmp_path / ("tf%d" % k))
        want = tfdata.Dataset.from_tensor_slices(value)
        want.save(path, compression=compression)
        got = tfd.Dataset.load(path, compression=compression)  # element_spec from TensorFlow's dataset_spec.pb
        assert got.element_spec == repr(_sorted_keys(want.element_spec))
        assert got.cardinality() == n
        _same_multiset(_elems(got), _elems(want))


def test_shard_func_both_ways(rng, tmp_path):
    n = int(rng.integers(1, 40))
    shards = int(rng.integers(1, 5))
    value = _value(rng, n)[0]
    a = str(tmp_path / "tfc")
    tfd.Dataset.from_tensor_slices(value).save(a, shard_func=lambda i, x, s: i.numpy() % shards)
    runs = glob.glob(os.path.join(a, "*", "*.shard"))
    assert len(runs) == min(shards, n)
    want = _elems(tfdata.Dataset.from_tensor_slices(value))
    _same_multiset(_elems(tfdata.Dataset.load(a)), want)
    b = str(tmp_path / "tf")
    tfdata.Dataset.from_tensor_slices(value).save(b, shard_func=lambda i, x, s: i % shards, compression="GZIP")
    _same_multiset(_elems(tfd.Dataset.load(b, compression="GZIP")), want)


def test_tfc_snapshot_loads_in_tensorflow(rng, tmp_path):
    n = int(rng.integers(1, 30))
    value = _value(rng, n)[1]
    ds = tfd.Dataset.from_tensor_slices(value).snapshot(str(tmp_path), compression="GZIP")
    first = _elems(ds)
    second = _elems(ds)  # read back from the files
    want = tfdata.Dataset.from_tensor_slices(value)
    _same_multiset(first, _elems(want))
    _same_multiset(second, _elems(want))
    (hash_dir,) = glob.glob(str(tmp_path / "*"))
    got = tfdata.Dataset.load(hash_dir, element_spec=want.element_spec, compression="GZIP")
    _same_multiset(_elems(got), _elems(want))


def test_corrupt_chunk_is_data_loss_in_both(rng, tmp_path):
    n = int(rng.integers(3, 20))
    value = _value(rng, n)[0]
    path = str(tmp_path / "tf")
    tfdata.Dataset.from_tensor_slices(value).save(path)
    (chunk,) = glob.glob(os.path.join(path, "*", "*.shard", "*.snapshot"))
    data = bytearray(open(chunk, "rb").read())
    data[int(rng.integers(12, len(data)))] ^= 0x40
    with open(chunk, "wb") as f:
        f.write(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        list(tfdata.Dataset.load(path).as_numpy_iterator())
    with pytest.raises(tfc.errors.DataLossError, match=os.path.basename(chunk)):
        list(tfd.Dataset.load(path).as_numpy_iterator())


def test_snapshot_second_pass_reads_the_files(rng, tmp_path):
    n = int(rng.integers(1, 25))
    value = _value(rng, n)[0]
    calls = []

    def count(i, x, s):
        calls.append(int(i.numpy()))
        return i, x, s

    ds = tfd.Dataset.from_tensor_slices(value).map(count).snapshot(str(tmp_path / "snap"))
    it = iter(ds)
    next(it)  # an interrupted first pass: not finalized
    del it
    want = _elems(tfdata.Dataset.from_tensor_slices(value))
    _same_multiset(_elems(ds), want)
    assert len(calls) >= n
    calls.clear()
    _same_multiset(_elems(ds), want)
    assert calls == []  # read from the snapshot, the map did not run
