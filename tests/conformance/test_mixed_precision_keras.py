"""Keras mixed precision against tf-keras: policies, per-layer dtypes and outputs, configs.

- Policy(name): compute/variable dtypes and names as tf.keras.mixed_precision.Policy, the same error class
  for names it rejects; set_global_policy rejects non-floating policies as Keras does.
- Per policy (mixed_float16, mixed_bfloat16) and per layer: the same variable dtypes and output dtype as
  tf-keras, and, with tf-keras's weights copied in, outputs within the compute dtype's tolerance.
- A layer's config writes the policy as tf-keras does, and tf-keras's config of a mixed layer reads back
  with its policy (it used to be read as float32).
"""
import json

import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

import tfc
from tfc import keras as tk
from conftest import assert_close, random_array

POLICIES = ["mixed_float16", "mixed_bfloat16"]

# class name, config, input shape (with batch), input dtype
LAYERS = [
    ("Dense", {"units": 7, "activation": "relu"}, (4, 5), "float32"),
    ("Dense", {"units": 3, "activation": "softmax", "use_bias": False}, (4, 2, 6), "float32"),
    ("Conv2D", {"filters": 8, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}, (2, 9, 9, 3), "float32"),
    ("DepthwiseConv2D", {"kernel_size": [3, 3], "depth_multiplier": 2}, (2, 7, 7, 4), "float32"),
    ("BatchNormalization", {}, (6, 5), "float32"),
    ("LayerNormalization", {}, (6, 5), "float32"),
    ("Embedding", {"input_dim": 10, "output_dim": 4}, (3, 5), "int32"),
    ("MaxPooling2D", {"pool_size": [2, 2]}, (2, 6, 6, 3), "float32"),
    ("AveragePooling2D", {"pool_size": [2, 2]}, (2, 6, 6, 3), "float32"),
    ("GlobalAveragePooling2D", {}, (2, 6, 6, 3), "float32"),
    ("Flatten", {}, (2, 3, 4), "float32"),
    ("Dropout", {"rate": 0.5}, (2, 8), "float32"),
    ("Activation", {"activation": "tanh"}, (2, 8), "float32"),
    ("ReLU", {}, (2, 8), "float32"),
    ("LeakyReLU", {"alpha": 0.2}, (2, 8), "float32"),
    ("Softmax", {}, (2, 8), "float32"),
    ("Reshape", {"target_shape": [4, 2]}, (2, 8), "float32"),
    ("ZeroPadding2D", {"padding": [1, 1]}, (2, 3, 3, 2), "float32"),
]


@pytest.fixture(autouse=True)
def _reset_policies():
    yield
    keras.mixed_precision.set_global_policy("float32")
    tk.set_global_policy(None)


@pytest.mark.parametrize("name", ["mixed_float16", "mixed_bfloat16", "float32", "float16", "bfloat16", "float64",
                                  "int32", "half"])
def test_policy(name):
    want, got = keras.mixed_precision.Policy(name), tk.Policy(name)
    assert (got.name, got.compute_dtype, got.variable_dtype) == (want.name, want.compute_dtype, want.variable_dtype)


@pytest.mark.parametrize("name", ["mixed_float32", "float17", "", "mixed"])
def test_policy_rejects(name):
    with pytest.raises(ValueError):
        keras.mixed_precision.Policy(name)
    with pytest.raises(tfc.errors.InvalidArgumentError, match="Cannot convert value"):
        tk.Policy(name)


def test_global_policy_must_be_floating():
    with pytest.raises(ValueError):
        keras.mixed_precision.set_global_policy("int32")
    with pytest.raises(tfc.errors.InvalidArgumentError, match="floating-point policies"):
        tk.set_global_policy("int32")


def _keras_layer(cls, cfg):
    return keras.layers.deserialize({"class_name": cls, "config": cfg})


def _input(rng, shape, dtype, cls):
    if dtype == "int32":
        return rng.integers(0, 10, size=shape).astype(np.int32)
    return random_array(rng, shape, "float32", -2, 2)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("case", range(len(LAYERS)), ids=[c[0] + str(i) for i, c in enumerate(LAYERS)])
@pytest.mark.parametrize("how", ["dtype_argument", "global_policy"])
def test_layer_dtypes_and_outputs(rng, policy, case, how):
    cls, cfg, shape, in_dt = LAYERS[case]
    cfg = dict(cfg)
    if how == "dtype_argument":
        cfg["dtype"] = policy
    else:
        keras.mixed_precision.set_global_policy(policy)
        tk.set_global_policy(policy)
    x = _input(rng, shape, in_dt, cls)
    kl = _keras_layer(cls, cfg)
    want = kl(x, training=False)
    tl = tk.layer_from_config(cls, cfg)
    tl.build(shape)
    assert [v.dtype.name for v in tl.weights] == [v.dtype.name for v in kl.weights], cls
    assert tl.compute_dtype == kl.compute_dtype and tl.variable_dtype == kl.variable_dtype, cls
    if kl.weights:
        tl.set_weights(kl.get_weights())
    got = tl(x, training=False)
    assert got.dtype.name == want.dtype.name, "%s: output %s, tf-keras %s" % (cls, got.dtype.name, want.dtype.name)
    assert_close(got, want.numpy(), dtype=want.dtype.name, msg=cls + ": ")
    # the config names the policy as tf-keras writes it
    tcfg, kcfg = tl.get_config(), kl.get_config()
    kd = kcfg["dtype"]
    assert tcfg["dtype"] == kd, "%s: config dtype %r, tf-keras %r" % (cls, tcfg["dtype"], kd)


@pytest.mark.parametrize("policy", POLICIES)
def test_final_float32_softmax_and_config_round_trip(rng, policy):
    """The Keras recipe: layers under the policy, the last activation with dtype float32."""
    keras.mixed_precision.set_global_policy(policy)
    tk.set_global_policy(policy)
    x = random_array(rng, (5, 6), "float32")
    d = _keras_layer("Dense", {"units": 4})
    s = _keras_layer("Softmax", {"dtype": "float32"})
    want = s(d(x))
    td = tk.layer_from_config("Dense", {"units": 4})
    ts = tk.layer_from_config("Softmax", {"dtype": "float32"})
    td.build((5, 6))
    td.set_weights(d.get_weights())
    mid = td(x)
    assert mid.dtype.name == keras.mixed_precision.Policy(policy).compute_dtype
    got = ts(mid)
    assert got.dtype.name == "float32" == want.dtype.name
    assert_close(got, want.numpy(), dtype=policy.split("_")[1])
    # a config tf-keras wrote, read back under the float32 global policy, keeps its policy
    keras.mixed_precision.set_global_policy("float32")
    tk.set_global_policy(None)
    cfg = json.loads(json.dumps(d.get_config()))
    back = tk.layer_from_config("Dense", cfg)
    assert back.compute_dtype == keras.mixed_precision.Policy(policy).compute_dtype
    assert back.variable_dtype == "float32"
    assert back.get_config()["dtype"] == cfg["dtype"]
