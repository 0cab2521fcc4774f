"""tfc.config: the devices tfc runs on, as tf.config lists them (include/tfc/device.h)."""
import collections
import ctypes

from ._lib import lib

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])


def _list(fn, device_type):
    arg = device_type.encode() if device_type else None
    n = fn(arg, None, 0)
    out = (ctypes.c_void_p * max(n, 1))()
    fn(arg, out, n)
    return [out[i] for i in range(n)]


def list_physical_devices(device_type=None):
    """tf.config.list_physical_devices: [PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]."""
    return [PhysicalDevice(lib.tfc_device_physical_name(d).decode(), lib.tfc_device_type(d).decode())
            for d in _list(lib.tfc_list_physical_devices, device_type)]


def list_logical_devices(device_type=None):
    """tf.config.list_logical_devices: [LogicalDevice(name='/device:CPU:0', device_type='CPU')]."""
    return [LogicalDevice(lib.tfc_device_logical_name(d).decode(), lib.tfc_device_type(d).decode())
            for d in _list(lib.tfc_list_logical_devices, device_type)]
