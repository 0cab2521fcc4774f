"""Devices as TensorFlow names them: tf.config.list_physical_devices / list_logical_devices (their CPU entries;
tfc has no GPU device yet) and tensor.device of eager results."""
import pytest

from conftest import random_array, tf, tfc


@pytest.mark.parametrize("device_type", ["CPU", None])
def test_device_lists(device_type):
    tf_phys = [d for d in tf.config.list_physical_devices(device_type) if d.device_type == "CPU"]
    tf_log = [d for d in tf.config.list_logical_devices(device_type) if d.device_type == "CPU"]
    got_phys = [d for d in tfc.config.list_physical_devices(device_type) if d.device_type == "CPU"]
    got_log = [d for d in tfc.config.list_logical_devices(device_type) if d.device_type == "CPU"]
    assert [(d.name, d.device_type) for d in got_phys] == [(d.name, d.device_type) for d in tf_phys]
    assert [(d.name, d.device_type) for d in got_log] == [(d.name, d.device_type) for d in tf_log]


def test_no_gpu_listed():
    assert tfc.config.list_physical_devices("GPU") == []
    assert tfc.config.list_logical_devices("GPU") == []


def test_tensor_device(rng):
    x = random_array(rng, (2, 3))
    with tf.device("/CPU:0"):
        want = tf.add(tf.constant(x), tf.constant(x)).device
    got = tfc.raw_ops.AddV2(x=tfc.constant(x), y=tfc.constant(x))
    assert got.device == want
    assert tfc.constant(x).device == want
