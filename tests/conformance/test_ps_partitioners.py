"""ParameterServerStrategy's variable partitioners: tfc_partitioner_num_shards against TensorFlow's
FixedShardsPartitioner, MinSizePartitioner and MaxSizePartitioner on random shapes, dtypes and limits."""
import ctypes

import numpy as np
import pytest
import tensorflow as tf

from tfc._lib import lib


class _Partitioner(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("num_shards", ctypes.c_int64), ("shard_bytes", ctypes.c_int64),
                ("max_shards", ctypes.c_int64), ("bytes_per_string", ctypes.c_int64)]


for _name in ("tfc_fixed_shards_partitioner", "tfc_min_size_partitioner", "tfc_max_size_partitioner"):
    getattr(lib, _name).restype = _Partitioner
lib.tfc_fixed_shards_partitioner.argtypes = [ctypes.c_int64]
lib.tfc_min_size_partitioner.argtypes = [ctypes.c_int64] * 3
lib.tfc_max_size_partitioner.argtypes = [ctypes.c_int64] * 3
lib.tfc_partitioner_num_shards.argtypes = [ctypes.POINTER(_Partitioner), ctypes.POINTER(ctypes.c_int64),
                                           ctypes.c_int, ctypes.c_int]
lib.tfc_partitioner_num_shards.restype = ctypes.c_int64

DTYPES = {"float32": 1, "float64": 2, "int32": 3, "int64": 9, "string": 7}


def tfc_shards(p, shape, dtype):
    dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    return lib.tfc_partitioner_num_shards(ctypes.byref(p), dims, len(shape), DTYPES[dtype])


def random_case(rng):
    rank = int(rng.integers(1, 4))
    shape = [int(rng.integers(1, 3000))] + [int(rng.integers(1, 300)) for _ in range(rank - 1)]
    return shape, str(rng.choice(list(DTYPES)))


@pytest.mark.parametrize("trial", range(40))
def test_partitioners_match_tensorflow(rng, trial):
    shape, dtype = random_case(rng)
    tf_dtype = tf.as_dtype(dtype)
    tf_shape = tf.TensorShape(shape)
    n = int(rng.integers(1, 9))
    got = tfc_shards(lib.tfc_fixed_shards_partitioner(n), shape, dtype)
    assert got == tf.distribute.experimental.partitioners.FixedShardsPartitioner(n)(tf_shape, tf_dtype)[0], (shape, n)

    min_bytes, max_shards, per_string = int(rng.integers(1, 1 << 20)), int(rng.integers(1, 10)), int(rng.integers(1, 64))
    want = tf.distribute.experimental.partitioners.MinSizePartitioner(min_bytes, max_shards, per_string)(tf_shape, tf_dtype)
    got = tfc_shards(lib.tfc_min_size_partitioner(min_bytes, max_shards, per_string), shape, dtype)
    assert got == want[0], (shape, dtype, min_bytes, max_shards, per_string)

    max_bytes = int(rng.integers(1, 1 << 20))
    limit = None if rng.random() < 0.5 else int(rng.integers(1, 20))
    want = tf.distribute.experimental.partitioners.MaxSizePartitioner(max_bytes, limit, per_string)(tf_shape, tf_dtype)
    got = tfc_shards(lib.tfc_max_size_partitioner(max_bytes, limit or 0, per_string), shape, dtype)
    assert got == want[0], (shape, dtype, max_bytes, limit, per_string)
    assert all(p == 1 for p in want[1:])
