"""Checkpoints both ways against real TensorFlow, fresh random values each run: TensorFlow writes
(tf.train.Checkpoint), tfc reads (tfc.train.load_checkpoint / Checkpoint.restore) the same values, and the
reverse (tf.train.load_checkpoint, tf.train.Checkpoint.restore(...).assert_consumed()); a tf-keras model with an
Adam optimizer (its weights and every slot); the `checkpoint` state file; `tfc checkpoint inspect` against
TensorFlow's inspect_checkpoint, character for character."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import tf, tfc

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = ["float32", "float64", "float16", "int32", "int64", "int8", "uint8", "int16", "bool"]


def random_value(rng, dtype, shape):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("float"):
        return rng.normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)


def random_values(rng):
    out = {}
    for i, dt in enumerate(DTYPES):
        shape = tuple(int(d) for d in rng.integers(0 if i == 3 else 1, 5, size=int(rng.integers(0, 4))))
        out["v_%s" % dt] = random_value(rng, dt, shape)
    out["v_string"] = np.array([bytes(rng.integers(0, 256, size=int(rng.integers(0, 20)), dtype=np.uint8))
                                for _ in range(3)], dtype=object)
    return out


def test_tf_writes_tfc_reads(tmp_path, rng):
    vals = random_values(rng)
    ckpt = tf.train.Checkpoint(**{k: tf.Variable(v) for k, v in vals.items()},
                               nested=tf.Module())
    ckpt.nested.inner = tf.Variable(rng.normal(size=(2, 3)).astype(np.float32))
    path = ckpt.save(str(tmp_path / "tf" / "ckpt"))
    assert tfc.train.latest_checkpoint(str(tmp_path / "tf")) == path
    want = tf.train.load_checkpoint(path)
    got = tfc.train.load_checkpoint(str(tmp_path / "tf"))  # a directory: its latest checkpoint
    assert got.get_variable_to_shape_map() == want.get_variable_to_shape_map()
    assert {k: v.name for k, v in got.get_variable_to_dtype_map().items()} == \
        {k: v.name for k, v in want.get_variable_to_dtype_map().items()}
    for key in want.get_variable_to_shape_map():
        a, b = got.get_tensor(key), want.get_tensor(key)
        if key == "_CHECKPOINTABLE_OBJECT_GRAPH":
            assert a == b
        else:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=key)
    # restore by object structure into tfc variables
    tv = {k: tfc.Variable(np.zeros_like(v) if v.dtype != object else np.array([b""] * len(v), dtype=object))
          for k, v in vals.items()}
    inner = tfc.Variable(np.zeros((2, 3), np.float32))
    c = tfc.train.Checkpoint(**tv, nested={"inner": inner})
    c.restore(path).assert_consumed()
    for k, v in vals.items():
        np.testing.assert_array_equal(np.asarray(tv[k].numpy()), v, err_msg=k)
    np.testing.assert_array_equal(inner.numpy(), ckpt.nested.inner.numpy())
    assert c.save_counter == 1


def test_sharded_and_partitioned_tf_checkpoints(tmp_path, rng):
    """TensorFlow's multi-shard saves (a MaxShardSizePolicy: .data-0000N-of-0000M) and partitioned variables (a
    ShardedVariable, as tf.distribute's variable partitioners make: one full entry whose slices live under their
    own keys, in several shards) read in tfc as whole tensors, and restore by object structure."""
    from tensorflow.python.distribute import sharded_variable
    rows = [int(r) for r in rng.integers(1, 90, size=int(rng.integers(2, 5)))]  # > 64 rows: 2-byte slice keys
    cols = int(rng.integers(1, 7))
    parts = [rng.normal(size=(r, cols)).astype(np.float32) for r in rows]
    emb = sharded_variable.ShardedVariable([tf.Variable(p) for p in parts], name="emb")
    big = rng.normal(size=(int(rng.integers(100, 300)), 64)).astype(np.float32)
    small = rng.integers(-9, 9, size=(int(rng.integers(1, 40)),)).astype(np.int64)
    ckpt = tf.train.Checkpoint(emb=emb, big=tf.Variable(big), small=tf.Variable(small))
    opts = tf.train.CheckpointOptions(
        experimental_sharding_callback=tf.train.experimental.MaxShardSizePolicy(max_shard_size=int(big.nbytes // 2)))
    path = ckpt.write(str(tmp_path / "ckpt"), options=opts)
    shards = [f for f in os.listdir(tmp_path) if ".data-" in f]
    assert len(shards) > 1, shards
    want = tf.train.load_checkpoint(path)
    got = tfc.train.load_checkpoint(path)
    assert got.get_variable_to_shape_map() == want.get_variable_to_shape_map()
    for key in want.get_variable_to_shape_map():
        if key != "_CHECKPOINTABLE_OBJECT_GRAPH":
            np.testing.assert_array_equal(np.asarray(got.get_tensor(key)), want.get_tensor(key), err_msg=key)
    np.testing.assert_array_equal(np.asarray(got.get_tensor("emb/.ATTRIBUTES/VARIABLE_VALUE")), np.concatenate(parts))
    tv = {"emb": tfc.Variable(np.zeros((sum(rows), cols), np.float32)), "big": tfc.Variable(np.zeros_like(big)),
          "small": tfc.Variable(np.zeros_like(small))}
    tfc.train.Checkpoint(**tv).restore(path).expect_partial()  # write() saved no save_counter
    np.testing.assert_array_equal(tv["emb"].numpy(), np.concatenate(parts))
    np.testing.assert_array_equal(tv["big"].numpy(), big)
    np.testing.assert_array_equal(tv["small"].numpy(), small)


def test_partitioned_variable_edge_cases(tmp_path, rng):
    """A ShardedVariable of one shard (a single slice covering it) reads whole; a partitioned variable whose slice
    bytes are cut off is DataLoss naming the variable, never a crash."""
    from tensorflow.python.distribute import sharded_variable
    parts = [rng.normal(size=(int(r), 3)).astype(np.float32) for r in rng.integers(1, 9, size=3)]
    one = tf.train.Checkpoint(emb=sharded_variable.ShardedVariable([tf.Variable(parts[0])])).write(
        str(tmp_path / "one"))
    np.testing.assert_array_equal(np.asarray(tfc.train.load_checkpoint(one).get_tensor(
        "emb/.ATTRIBUTES/VARIABLE_VALUE")), parts[0])
    path = tf.train.Checkpoint(emb=sharded_variable.ShardedVariable([tf.Variable(p) for p in parts])).write(
        str(tmp_path / "ckpt"))
    data = [f for f in os.listdir(tmp_path) if f.startswith("ckpt.data-")][0]
    with open(tmp_path / data, "r+b") as f:
        f.truncate(4)
    with pytest.raises(tfc.errors.DataLossError, match="partitioned variable 'emb/.ATTRIBUTES/VARIABLE_VALUE'"):
        tfc.train.load_checkpoint(path).get_tensor("emb/.ATTRIBUTES/VARIABLE_VALUE")


def test_tfc_writes_tf_reads(tmp_path, rng):
    vals = random_values(rng)
    inner_v = rng.normal(size=(3,)).astype(np.float64)
    tv = {k: tfc.Variable(v) for k, v in vals.items()}
    c = tfc.train.Checkpoint(**tv, nested={"inner": tfc.Variable(inner_v)})
    c.save(str(tmp_path / "ck" / "ckpt"))
    path = c.save(str(tmp_path / "ck" / "ckpt"))
    assert path.endswith("ckpt-2")
    assert tf.train.latest_checkpoint(str(tmp_path / "ck")) == path
    state = tf.train.get_checkpoint_state(str(tmp_path / "ck"))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == ["ckpt-2"]  # as TensorFlow's save
    r = tf.train.load_checkpoint(path)
    for k, v in vals.items():
        np.testing.assert_array_equal(r.get_tensor(k + "/.ATTRIBUTES/VARIABLE_VALUE"), v, err_msg=k)
    # TensorFlow restores it by object structure, every value consumed
    ckpt = tf.train.Checkpoint(**{k: tf.Variable(np.zeros_like(v) if v.dtype != object else [b""] * len(v))
                                  for k, v in vals.items()}, nested=tf.Module())
    ckpt.nested.inner = tf.Variable(np.zeros(3))
    ckpt.restore(path).assert_consumed()
    for k, v in vals.items():
        np.testing.assert_array_equal(getattr(ckpt, k).numpy(), v, err_msg=k)
    np.testing.assert_array_equal(ckpt.nested.inner.numpy(), inner_v)
    assert int(ckpt.save_counter.numpy()) == 2


# ---- Keras: a model with an Adam optimizer, weights and every slot -------------------------------------------

def keras_model(rng, seed):
    tf_keras.utils.set_random_seed(seed)
    m = tf_keras.Sequential([tf_keras.layers.Dense(5, activation="relu", input_shape=(4,)),
                             tf_keras.layers.Dropout(0.3), tf_keras.layers.BatchNormalization(),
                             tf_keras.layers.Dense(3)])
    opt = tf_keras.optimizers.Adam(learning_rate=float(rng.uniform(1e-3, 1e-1)))
    m.compile(optimizer=opt, loss="mse")
    return m, opt


def opt_config(opt):
    cfg = tf_keras.optimizers.serialize(opt)
    cfg.pop("module", None), cfg.pop("registered_name", None)
    cfg["config"] = {k: (v.item() if isinstance(v, np.generic) else v) for k, v in cfg["config"].items()}
    return cfg


def tfc_model_like(m, opt):
    cm = K.model_from_json(m.to_json())
    cm.compile(optimizer=opt_config(opt), loss="mse")
    return cm


def test_keras_adam_tf_writes_tfc_reads(tmp_path, rng):
    m, opt = keras_model(rng, int(rng.integers(1 << 30)))
    x, y = rng.normal(size=(32, 4)).astype(np.float32), rng.normal(size=(32, 3)).astype(np.float32)
    m.fit(x, y, batch_size=8, epochs=int(rng.integers(1, 3)), verbose=0)
    path = tf.train.Checkpoint(model=m, optimizer=opt).save(str(tmp_path / "tf" / "ckpt"))
    cm = tfc_model_like(m, opt)
    c = tfc.train.Checkpoint(model=cm)
    c.restore(path).assert_consumed()
    for a, b in zip(cm.get_weights(), m.get_weights()):
        np.testing.assert_array_equal(a, b)
    want = [v.numpy() for v in opt.variables]
    got = [v.numpy() for v in cm.optimizer.variables]
    assert len(got) == len(want) == 1 + 2 * len(m.trainable_variables)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert np.float32(cm.optimizer.learning_rate) == np.float32(opt.learning_rate.numpy())


def test_keras_adam_tfc_writes_tf_reads(tmp_path, rng):
    m, opt = keras_model(rng, int(rng.integers(1 << 30)))
    cm = tfc_model_like(m, opt)
    x, y = rng.normal(size=(32, 4)).astype(np.float32), rng.normal(size=(32, 3)).astype(np.float32)
    cm.fit(x, y, batch_size=8, epochs=int(rng.integers(1, 3)), verbose=0)
    path = tfc.train.Checkpoint(model=cm).save(str(tmp_path / "tfc" / "ckpt"))
    m2, opt2 = keras_model(rng, 1)
    opt2.build(m2.trainable_variables)
    tf.train.Checkpoint(model=m2, optimizer=opt2).restore(path).assert_consumed()
    for a, b in zip(m2.get_weights(), cm.get_weights()):
        np.testing.assert_array_equal(a, b)
    got = [v.numpy() for v in opt2.variables]
    want = [v.numpy() for v in cm.optimizer.variables]
    assert len(got) == len(want) == 1 + 2 * len(m2.trainable_variables)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert int(opt2.iterations.numpy()) == cm.optimizer.iterations > 0
    # and TensorFlow's training goes on from there as tfc's would: the same next step
    r = tf.train.load_checkpoint(path)
    assert r.has_tensor("optimizer/_variables/1/.ATTRIBUTES/VARIABLE_VALUE")


# ---- the inspect tool ----------------------------------------------------------------------------------------

def tfc_cli():
    return os.path.join(os.path.dirname(tfc._lib.path), "tfc")


@pytest.mark.parametrize("args", [[], ["--all_tensors"], ["--all_tensor_names"], ["--tensor_name", "KEY"],
                                  ["--tensor_name", "no/such/tensor"]])
def test_inspect_matches_tensorflow(tmp_path, rng, args):
    if not os.path.exists(tfc_cli()):
        pytest.skip("no tfc command next to libtfc.so")
    vals = random_values(rng)
    vals["v_big"] = rng.normal(size=(40, 30)).astype(np.float32) * 10.0 ** float(rng.integers(-6, 9))
    ckpt = tf.train.Checkpoint(**{k: tf.Variable(v) for k, v in vals.items()})
    path = ckpt.write(str(tmp_path / "ckpt"))
    key = sorted(vals)[int(rng.integers(len(vals)))] + "/.ATTRIBUTES/VARIABLE_VALUE"
    args = [key if a == "KEY" else a for a in args]
    got = subprocess.run([tfc_cli(), "checkpoint", "inspect", "--file_name", path] + args, capture_output=True,
                         text=True, errors="replace").stdout
    want = subprocess.run([sys.executable, "-m", "tensorflow.python.tools.inspect_checkpoint", "--file_name", path]
                          + args, capture_output=True, text=True, errors="replace",
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")).stdout
    assert got == want
