"""Conformance of ParseExampleV2 / ParseSingleExample with TensorFlow: random tf.train.Example protos
serialized by TensorFlow, parsed with random FixedLen (with and without defaults), FixedLenSequence, VarLen
and Ragged configurations, batched and scalar; configuration errors, data errors and malformed protos."""
import numpy as np
import pytest
import tensorflow as tf

import tfc
from conftest import assert_both_raise, assert_op_matches, require_ops

KINDS = ["float", "int64", "bytes"]
DTYPES = {"float": np.float32, "int64": np.int64, "bytes": object}
TF_DTYPES = {"float": tf.float32, "int64": tf.int64, "bytes": tf.string}


def feature(kind, values):
    if kind is None:
        return tf.train.Feature()
    if kind == "float":
        return tf.train.Feature(float_list=tf.train.FloatList(value=values))
    if kind == "int64":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def random_values(rng, kind, n):
    if kind == "float":
        return [float(np.float32(v)) for v in rng.normal(size=n) * 10]
    if kind == "int64":
        return [int(v) for v in rng.integers(-2 ** 62, 2 ** 62, size=n)] if rng.random() < 0.5 else \
            [int(v) for v in rng.integers(-300, 300, size=n)]
    return [bytes(rng.integers(0, 256, size=int(rng.integers(0, 9))).astype(np.uint8)) for _ in range(n)]


def make_batch(rng, keys, batch):
    """keys: {key: (kind, lengths policy)}; returns serialized examples."""
    out = []
    for _ in range(batch):
        f = {}
        for key, (kind, policy) in keys.items():
            r = rng.random()
            if policy != "required" and r < 0.2:
                continue  # missing
            if policy == "any" and r < 0.3:
                f[key] = feature(None, None)  # no kind: counts as missing
                continue
            n = policy if isinstance(policy, int) else int(rng.integers(0, 6))
            if policy == "required":
                n = 3
            if isinstance(policy, tuple):  # (stride,): a multiple of it
                n = policy[0] * int(rng.integers(0, 4))
            f[key] = feature(kind, random_values(rng, kind, n))
        f["unused"] = feature("bytes", [b"x"])
        out.append(tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString())
    return out


def random_config(rng):
    """A random parse configuration and the key policies that make the data valid for it."""
    keys, sparse, dense, ragged = {}, [], [], []
    for i in range(int(rng.integers(1, 7))):
        key = "k%d" % i
        kind = str(rng.choice(KINDS))
        role = rng.choice(["sparse", "fixed", "fixed_default", "seq", "ragged"])
        if role == "sparse":
            keys[key] = (kind, "any")
            sparse.append((key, kind))
        elif role == "ragged":
            keys[key] = (kind, "any")
            ragged.append((key, kind, rng.choice([tf.int32, tf.int64])))
        elif role == "fixed":
            keys[key] = (kind, "required")
            dense.append((key, kind, [3], np.array([], dtype=DTYPES[kind])))
        elif role == "fixed_default":
            shape = [int(rng.integers(1, 3)), 2]
            keys[key] = (kind, shape[0] * 2)
            d = np.array(random_values(rng, kind, shape[0] * 2), dtype=DTYPES[kind]).reshape(shape)
            dense.append((key, kind, shape, d))
        else:
            stride = int(rng.integers(1, 3))
            keys[key] = (kind, (stride,))
            pad = np.array(random_values(rng, kind, 1)[0], dtype=DTYPES[kind])
            dense.append((key, kind, [None] + ([stride] if stride > 1 or rng.random() < 0.5 else []), pad))
    return keys, sparse, dense, ragged


def raw_inputs(serialized, sparse, dense, ragged, names=None):
    inputs = {
        "serialized": serialized, "names": np.array(names if names is not None else [], dtype=object),
        "sparse_keys": np.array([s[0].encode() for s in sparse], dtype=object),
        "dense_keys": np.array([d[0].encode() for d in dense], dtype=object),
        "ragged_keys": np.array([r[0].encode() for r in ragged], dtype=object),
        "dense_defaults": [d[3] for d in dense],
    }
    attrs = {
        "num_sparse": len(sparse), "sparse_types": [TF_DTYPES[s[1]] for s in sparse],
        "ragged_value_types": [TF_DTYPES[r[1]] for r in ragged], "ragged_split_types": [r[2] for r in ragged],
        "dense_shapes": [tf.TensorShape(d[2]) for d in dense],
    }
    return inputs, attrs


def test_parse_example_v2_batches(rng):
    require_ops("ParseExampleV2")
    for _ in range(25):
        keys, sparse, dense, ragged = random_config(rng)
        batch = int(rng.integers(0, 6))
        ser = np.array(make_batch(rng, keys, batch), dtype=object).reshape(batch)
        names = [("ex%d" % i).encode() for i in range(batch)] if rng.random() < 0.3 else None
        inputs, attrs = raw_inputs(ser, sparse, dense, ragged, names)
        assert_op_matches("ParseExampleV2", inputs, attrs)


def test_parse_example_v2_scalar(rng):
    require_ops("ParseExampleV2")
    for _ in range(25):
        keys, sparse, dense, ragged = random_config(rng)
        ser = np.array(make_batch(rng, keys, 1)[0], dtype=object)
        inputs, attrs = raw_inputs(ser, sparse, dense, ragged)
        assert_op_matches("ParseExampleV2", inputs, attrs)


def test_parse_single_example_op(rng):
    require_ops("ParseSingleExample")
    for _ in range(10):
        keys, sparse, dense, _ = random_config(rng)
        ser = np.array(make_batch(rng, keys, 1)[0], dtype=object)
        inputs = {"serialized": ser, "dense_defaults": [d[3] for d in dense]}
        attrs = {"num_sparse": len(sparse), "sparse_keys": [s[0] for s in sparse], "dense_keys": [d[0] for d in dense],
                 "sparse_types": [TF_DTYPES[s[1]] for s in sparse], "dense_shapes": [tf.TensorShape(d[2]) for d in dense]}
        assert_op_matches("ParseSingleExample", inputs, attrs)


def _ex(**features):
    return tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()


def test_parse_example_data_errors(rng):
    require_ops("ParseExampleV2")
    good = _ex(a=feature("float", [1.0, 2.0]), b=feature("int64", [1, 2, 3]), c=feature("bytes", [b"x"]))
    other = _ex(b=feature("int64", [4]))
    cases = [
        ([], ["a"], [np.array([0, 0], np.int64)], [[2]], []),             # dense type mismatch
        ([("b", "float")], [], [], [], []),                                # sparse type mismatch
        ([], ["a"], [np.array([], np.float32)], [[3]], []),               # wrong count
        ([], ["a"], [np.array([], np.float32)], [[2]], []),               # required but missing in `other`
        ([], ["b"], [np.array(0, np.int64)], [[None, 2]], []),            # not a multiple of the stride
        ([], [], [], [], [("c", "float")]),                                # ragged type mismatch
    ]
    for sparse, dkeys, defaults, shapes, ragged in cases:
        inputs = {"serialized": np.array([good, other], dtype=object), "names": np.array([], dtype=object),
                  "sparse_keys": np.array([s[0] for s in sparse], dtype=object),
                  "dense_keys": np.array(dkeys, dtype=object), "ragged_keys": np.array([r[0] for r in ragged], dtype=object),
                  "dense_defaults": defaults}
        attrs = {"num_sparse": len(sparse), "sparse_types": [TF_DTYPES[s[1]] for s in sparse],
                 "ragged_value_types": [TF_DTYPES[r[1]] for r in ragged], "ragged_split_types": [tf.int64] * len(ragged),
                 "dense_shapes": [tf.TensorShape(s) for s in shapes]}
        assert_both_raise("ParseExampleV2", inputs, attrs)


def test_parse_example_config_errors():
    require_ops("ParseExampleV2")
    s = _ex(a=feature("float", [1.0, 2.0]))
    base = {"serialized": np.array([s], dtype=object), "names": np.array([], dtype=object),
            "sparse_keys": np.array([], dtype=object), "dense_keys": np.array([b"a"], dtype=object),
            "ragged_keys": np.array([], dtype=object), "dense_defaults": [np.array([0, 0], np.float32)]}
    attrs = {"num_sparse": 0, "sparse_types": [], "ragged_value_types": [], "ragged_split_types": [],
             "dense_shapes": [tf.TensorShape([2])]}
    assert_both_raise("ParseExampleV2", dict(base, serialized=np.array([[s]], dtype=object)), attrs)
    assert_both_raise("ParseExampleV2", dict(base, names=np.array([b"x", b"y"], dtype=object)), attrs)
    assert_both_raise("ParseExampleV2", base, dict(attrs, dense_shapes=[tf.TensorShape([3])]))
    assert_both_raise("ParseExampleV2", base, dict(attrs, dense_shapes=[]))
    assert_both_raise("ParseExampleV2", base, dict(attrs, dense_shapes=[tf.TensorShape([2, None])]))
    assert_both_raise("ParseExampleV2", base, dict(attrs, dense_shapes=[tf.TensorShape([None])]))
    assert_both_raise("ParseExampleV2", dict(base, dense_keys=np.array([b"a", b"b"], dtype=object)), attrs)
    assert_both_raise("ParseExampleV2", base, dict(attrs, num_sparse=1, sparse_types=[tf.float32]))
    assert_both_raise("ParseExampleV2", base, dict(attrs, ragged_value_types=[tf.float32]))


def test_parse_example_malformed(rng):
    """Truncated Examples fail in both; random corruption never crashes tfc (an error names the example)."""
    require_ops("ParseExampleV2")
    keys, sparse, dense, ragged = random_config(rng)
    sers = make_batch(rng, keys, 6)
    for s in sers:
        if len(s) < 4:
            continue
        cut = s[:int(rng.integers(1, len(s)))]
        inputs, attrs = raw_inputs(np.array([sers[0], cut], dtype=object), sparse, dense, ragged)
        try:
            tf.raw_ops.ParseExampleV2(**{k: v for k, v in inputs.items()}, **attrs)
            tf_ok = True
        except (tf.errors.InvalidArgumentError, UnicodeDecodeError):  # TF quotes the raw bytes in its message
            tf_ok = False
        try:
            tfc.raw_ops.ParseExampleV2(**inputs, **attrs)
            tfc_ok = True
        except tfc.InvalidArgumentError as e:
            tfc_ok = False
            assert "ParseExampleV2" in str(e) and "Index: 1" in str(e)
        if not tf_ok:
            assert not tfc_ok, "TensorFlow rejects a truncated example that tfc accepts"
        bad = bytearray(s)
        for n in rng.integers(0, len(s), size=3):
            bad[int(n)] = int(rng.integers(0, 256))
        inputs, attrs = raw_inputs(np.array([bytes(bad)], dtype=object), sparse, dense, ragged)
        try:
            tfc.raw_ops.ParseExampleV2(**inputs, **attrs)
        except tfc.InvalidArgumentError:
            pass
    inputs, attrs = raw_inputs(np.array([b"\x0a\x05abc"], dtype=object), [("a", "float")], [], [])
    assert_both_raise("ParseExampleV2", inputs, attrs)


def test_high_level_parse_matches(rng):
    """tf.io.parse_example's feature specs (FixedLen, VarLen, FixedLenSequence, Ragged) through tfc's op."""
    require_ops("ParseExampleV2")
    sers = [_ex(img=feature("bytes", [b"png%d" % i]), label=feature("int64", [i]),
                tags=feature("bytes", [b"t"] * i), xy=feature("float", [0.5 * i, 1.0 * i] * (i % 3)))
            for i in range(4)]
    spec = {"img": tf.io.FixedLenFeature([], tf.string), "label": tf.io.FixedLenFeature([1], tf.int64),
            "tags": tf.io.VarLenFeature(tf.string),
            "xy": tf.io.FixedLenSequenceFeature([2], tf.float32, allow_missing=True, default_value=-1.0)}
    want = tf.io.parse_example(tf.constant(sers), spec)
    got = tfc.raw_ops.ParseExampleV2(
        serialized=np.array(sers, dtype=object), names=np.array([], dtype=object),
        sparse_keys=np.array([b"tags"], dtype=object), dense_keys=np.array([b"img", b"label", b"xy"], dtype=object),
        ragged_keys=np.array([], dtype=object),
        dense_defaults=[np.array([], dtype=object), np.array([], np.int64), np.array(-1.0, np.float32)],
        num_sparse=1, sparse_types=[tf.string], ragged_value_types=[], ragged_split_types=[],
        dense_shapes=[tf.TensorShape([]), tf.TensorShape([1]), tf.TensorShape([None, 2])])
    assert got.dense_values[0].numpy().tolist() == want["img"].numpy().tolist()
    np.testing.assert_array_equal(got.dense_values[1].numpy(), want["label"].numpy())
    np.testing.assert_array_equal(got.dense_values[2].numpy(), want["xy"].numpy())
    np.testing.assert_array_equal(got.sparse_indices[0].numpy(), want["tags"].indices.numpy())
    assert got.sparse_values[0].numpy().tolist() == want["tags"].values.numpy().tolist()
    np.testing.assert_array_equal(got.sparse_shapes[0].numpy(), want["tags"].dense_shape.numpy())
