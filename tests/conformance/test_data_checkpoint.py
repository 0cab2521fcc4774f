"""Iterator checkpoints against real TensorFlow (include/tfc/data_checkpoint.h), fresh random data each run:
- the same pipeline iterated k elements, checkpointed, and restored into a fresh iterator continues with the
  elements TensorFlow's restored iterator yields (TensorFlow checkpoints its own iterator in the same test);
- a tfc checkpoint holding an iterator is a TensorFlow checkpoint: tf.train.load_checkpoint lists the iterator's
  key next to the variables, with TensorFlow's object-graph entry for an iterator, and TensorFlow restores the
  variables from it; TensorFlow cannot restore the iterator from it (its format is TensorFlow's variant), and
  tfc refuses TensorFlow's iterator state with an error."""
import numpy as np
import pytest

from conftest import tf, tfc
from tfc import data as tfd  # noqa: F401  (makes tfc.data available)
from tfc import train as _tfc_train  # noqa: F401

from tensorflow.core.protobuf import trackable_object_graph_pb2


def pipelines(rng):
    n = int(rng.integers(20, 60))
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = rng.integers(0, 5, size=n).astype(np.int64)
    b = int(rng.integers(2, 6))
    # the same pipeline in both libraries (no shuffle: tfc's random stream is not TensorFlow's)
    return [
        (lambda m: m.data.Dataset.from_tensor_slices((x, y)).batch(b)),
        (lambda m: m.data.Dataset.range(n).skip(3).take(n - 5).repeat(2).batch(b, drop_remainder=True).prefetch(2)),
        (lambda m: m.data.Dataset.zip((m.data.Dataset.range(n), m.data.Dataset.from_tensor_slices(x)))
         .concatenate(m.data.Dataset.zip((m.data.Dataset.range(3), m.data.Dataset.from_tensor_slices(x[:3]))))),
    ]


def as_list(e):
    if isinstance(e, (tuple, list)):
        return [np.asarray(v) for v in e]
    return [np.asarray(e)]


def test_restore_continues_like_tensorflow(tmp_path, rng):
    for i, make in enumerate(pipelines(rng)):
        ref = make(tf)
        total = sum(1 for _ in ref)
        k = int(rng.integers(0, total + 1))
        # TensorFlow: iterate k, checkpoint, restore into a fresh iterator, the rest
        it = iter(ref)
        for _ in range(k):
            next(it)
        tf_path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / ("tf%d" % i) / "ckpt"))
        it2 = iter(make(tf))
        tf.train.Checkpoint(iterator=it2).restore(tf_path).assert_consumed()
        want = [as_list(e) for e in it2]
        # tfc: the same
        ds = make(tfc)
        it = iter(ds)
        for _ in range(k):
            next(it)
        path = tfc.train.Checkpoint(iterator=it).save(str(tmp_path / ("tfc%d" % i) / "ckpt"))
        it3 = iter(make(tfc))
        tfc.train.Checkpoint(iterator=it3).restore(path).assert_consumed()
        got = [as_list(e) for e in it3]
        assert len(got) == len(want) == total - k, (i, k, total)
        for g, w in zip(got, want):
            assert len(g) == len(w)
            for a, b in zip(g, w):
                np.testing.assert_array_equal(a, b)


def test_tensorflow_reads_tfc_checkpoint(tmp_path, rng):
    v = rng.normal(size=(2, 3)).astype(np.float32)
    ds = tfc.data.Dataset.range(30).shuffle(7, seed=int(rng.integers(1, 1000))).batch(4)
    it = iter(ds)
    next(it)
    path = tfc.train.Checkpoint(iterator=it, w=tfc.Variable(v)).save(str(tmp_path / "tfc" / "ckpt"))
    r = tf.train.load_checkpoint(path)
    shapes, dtypes = r.get_variable_to_shape_map(), r.get_variable_to_dtype_map()
    assert set(shapes) == {"iterator/.ATTRIBUTES/ITERATOR_STATE", "w/.ATTRIBUTES/VARIABLE_VALUE",
                           "save_counter/.ATTRIBUTES/VARIABLE_VALUE", "_CHECKPOINTABLE_OBJECT_GRAPH"}
    assert dtypes["iterator/.ATTRIBUTES/ITERATOR_STATE"] == tf.string  # TensorFlow's own is tf.variant
    assert shapes["iterator/.ATTRIBUTES/ITERATOR_STATE"] == []
    assert r.get_tensor("iterator/.ATTRIBUTES/ITERATOR_STATE")[:8] == b"TFCITER1"
    np.testing.assert_array_equal(r.get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE"), v)
    # the object graph entry is the one TensorFlow writes for an iterator
    g = trackable_object_graph_pb2.TrackableObjectGraph()
    g.ParseFromString(r.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
    node = g.nodes[[c.node_id for c in g.nodes[0].children if c.local_name == "iterator"][0]]
    assert [(a.name, a.checkpoint_key) for a in node.attributes] == [("ITERATOR", "iterator/.ATTRIBUTES/ITERATOR")]
    tf_it = iter(tf.data.Dataset.range(30).batch(4))
    tf_ckpt = tf.train.Checkpoint(iterator=tf_it, w=tf.Variable(np.zeros((2, 3), np.float32)))
    tf_ckpt_iter = tf.train.Checkpoint(iterator=iter(tf.data.Dataset.range(30).batch(4)))
    # TensorFlow restores the variables of a checkpoint that holds a tfc iterator ...
    tf.train.Checkpoint(w=tf_ckpt.w).restore(path).expect_partial()
    np.testing.assert_array_equal(tf_ckpt.w.numpy(), v)
    # ... but not the iterator itself (tfc's state is not TensorFlow's variant)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf_ckpt_iter.restore(path)


def test_tfc_refuses_tensorflow_iterator_state(tmp_path):
    it = iter(tf.data.Dataset.range(10))
    next(it)
    path = tf.train.Checkpoint(iterator=it).save(str(tmp_path / "tf" / "ckpt"))
    mine = iter(tfc.data.Dataset.range(10))
    with pytest.raises(tfc.errors.InvalidArgumentError) as e:
        tfc.train.Checkpoint(iterator=mine).restore(path)
    assert "iterator/.ATTRIBUTES/ITERATOR_STATE" in str(e.value) and "DT_VARIANT" in str(e.value)
    # TensorFlow's own message for the reverse: the dtypes differ
    tf_ckpt = tf.train.Checkpoint(iterator=iter(tf.data.Dataset.range(10)))
    mine = iter(tfc.data.Dataset.range(10))
    tfc_path = tfc.train.Checkpoint(iterator=mine).save(str(tmp_path / "tfc" / "ckpt"))
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected dtype variant does not equal original dtype string"):
        tf_ckpt.restore(tfc_path)
