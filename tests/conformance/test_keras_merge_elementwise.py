"""Subtract, Maximum, Minimum and Average: tfc against tf_keras on random shapes and inputs drawn fresh every run
(the seed is printed; TFC_TEST_SEED=<n> replays a run): outputs, gradients of every input and configs through the
shared layer harness (test_keras_layers.check_layer); Subtract's input count check."""
import numpy as np
import pytest

from conftest import tfc
from test_keras_layers import (_merge_shapes, assert_config_equal, check_layer, clear_sessions, require_layer,
                               tf_json_kwargs)

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras
CLASSES = ["Subtract", "Maximum", "Minimum", "Average"]


def case(rng, class_name):
    n = 2 if class_name == "Subtract" else int(rng.integers(2, 5))
    return _merge_shapes(rng, n, False)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("class_name", CLASSES)
def test_merge_matches_keras(class_name, dtype, rng):
    require_layer(class_name)
    for _ in range(6):
        check_layer(class_name, {}, case(rng, class_name), dtype, rng, {})


@pytest.mark.parametrize("class_name", CLASSES)
def test_merge_config(class_name, rng):
    require_layer(class_name)
    clear_sessions()
    kw = {"name": "m%d" % int(rng.integers(0, 100))}
    tl = getattr(tf_keras.layers, class_name)(**kw)
    ml = K.layer_from_config(class_name, tf_json_kwargs(kw))
    assert_config_equal(ml.get_config(), tl.get_config(), class_name)


def test_subtract_needs_two_inputs(rng):
    require_layer("Subtract")
    ml = K.layer_from_config("Subtract", {})
    x = np.ones((2, 3), np.float32)
    with pytest.raises(tfc.InvalidArgumentError, match="exactly 2 inputs"):
        ml([tfc.constant(x), tfc.constant(x), tfc.constant(x)])
