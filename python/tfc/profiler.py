"""tfc.profiler: tf.profiler.experimental.start / stop / Trace (include/tfc/profiler.h) through ctypes."""
import ctypes

from . import _lib
from ._lib import check

_PS = ctypes.POINTER(_lib.Status)


class ProfilerOptions(ctypes.Structure):
    _fields_ = [("host_tracer_level", ctypes.c_int)]


class _TraceT(ctypes.Structure):
    _fields_ = [("t0", ctypes.c_uint64), ("name", ctypes.c_char_p), ("step_num", ctypes.c_int64)]


_SIGS = {
    "tfc_profiler_start": (ctypes.c_bool, [ctypes.c_char_p, ctypes.POINTER(ProfilerOptions), _PS]),
    "tfc_profiler_stop": (ctypes.c_bool, [ctypes.c_bool, _PS]),
    "tfc_profiler_active": (ctypes.c_bool, []),
    "tfc_profiler_last_run_dir": (None, [ctypes.c_char_p, ctypes.c_size_t]),
    "tfc_profiler_trace_begin": (None, [ctypes.POINTER(_TraceT), ctypes.c_char_p, ctypes.c_int64]),
    "tfc_profiler_trace_end": (None, [ctypes.POINTER(_TraceT)]),
}


def _c(name):
    f = getattr(_lib.lib, name)
    f.restype, f.argtypes = _SIGS[name]
    return f


def start(logdir, host_tracer_level=2):
    st = _lib.Status()
    o = ProfilerOptions(int(host_tracer_level))
    _c("tfc_profiler_start")(str(logdir).encode(), ctypes.byref(o), ctypes.byref(st))
    check(st)


def stop(save=True):
    """Stops; returns the run folder written (None without save)."""
    st = _lib.Status()
    _c("tfc_profiler_stop")(bool(save), ctypes.byref(st))
    check(st)
    if not save:
        return None
    buf = ctypes.create_string_buffer(1024)
    _c("tfc_profiler_last_run_dir")(buf, 1024)
    return buf.value.decode()


class Trace:
    """with tfc.profiler.Trace("name", step_num=3): ..."""

    def __init__(self, name, step_num=-1):
        self._name = str(name).encode()
        self._step = int(step_num)
        self._t = _TraceT()

    def __enter__(self):
        _c("tfc_profiler_trace_begin")(ctypes.byref(self._t), self._name, self._step)
        return self

    def __exit__(self, *exc):
        _c("tfc_profiler_trace_end")(ctypes.byref(self._t))
        return False
