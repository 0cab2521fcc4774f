"""tfc.summary: tf.summary's file writer and summaries (include/tfc/summary.h) through ctypes.

    w = tfc.summary.create_file_writer("logs")
    w.scalar("loss", 0.5, step=1); w.histogram("w", array, step=1); w.close()
"""
import ctypes

from . import _lib
from ._lib import check
from .tensor import convert_to_tensor

_P, _CP, _B, _I, _I64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_bool, ctypes.c_int, ctypes.c_int64
_PS = ctypes.POINTER(_lib.Status)
DEFAULT_STEP = -(2 ** 63)

_SIGS = {
    "tfc_summary_create_file_writer": (_P, [_CP, _I, _I, _CP, _PS]),
    "tfc_summary_writer_path": (_CP, [_P]),
    "tfc_summary_writer_flush": (_B, [_P, _PS]),
    "tfc_summary_writer_close": (_B, [_P, _PS]),
    "tfc_summary_writer_free": (None, [_P]),
    "tfc_summary_write_scalar": (_B, [_P, _CP, ctypes.c_double, _I64, _CP, _PS]),
    "tfc_summary_write_histogram": (_B, [_P, _CP, _P, _I64, _I, _CP, _PS]),
    "tfc_summary_write_image": (_B, [_P, _P, _CP, _P, _I64, _I, _CP, _PS]),
    "tfc_summary_write_text": (_B, [_P, _CP, _P, _I64, _CP, _PS]),
    "tfc_summary_write_graph": (_B, [_P, ctypes.c_char_p, ctypes.c_size_t, _PS]),
}


def _c(name):
    f = getattr(_lib.lib, name)
    f.restype, f.argtypes = _SIGS[name]
    return f


def _run(name, *args):
    st = _lib.Status()
    ok = _c(name)(*args, ctypes.byref(st))
    check(st)
    return ok


def _enc(s):
    return None if s is None else str(s).encode()


class SummaryWriter:
    """tf.summary.create_file_writer's writer: scalar/histogram/image/text write to it directly."""

    def __init__(self, logdir, max_queue=0, flush_millis=0, filename_suffix=None):
        st = _lib.Status()
        self._w = _c("tfc_summary_create_file_writer")(_enc(logdir), int(max_queue), int(flush_millis),
                                                        _enc(filename_suffix), ctypes.byref(st))
        check(st)

    @property
    def path(self):
        return _c("tfc_summary_writer_path")(self._w).decode()

    def scalar(self, name, data, step, description=None):
        return _run("tfc_summary_write_scalar", self._w, _enc(name), float(data), int(step), _enc(description))

    def histogram(self, name, data, step, buckets=None, description=None):
        t = convert_to_tensor(data)
        return _run("tfc_summary_write_histogram", self._w, _enc(name), t.handle, int(step), int(buckets or 0),
                    _enc(description))

    def image(self, name, data, step, max_outputs=3, description=None):
        t = convert_to_tensor(data)
        return _run("tfc_summary_write_image", self._w, _lib.ctx(), _enc(name), t.handle, int(step),
                    int(max_outputs), _enc(description))

    def text(self, name, data, step, description=None):
        t = convert_to_tensor(data)
        return _run("tfc_summary_write_text", self._w, _enc(name), t.handle, int(step), _enc(description))

    def graph(self, graph_def):
        """tf.summary.graph: serialised GraphDef bytes (e.g. tfc.function's concrete_graph_def) as the run's graph."""
        data = bytes(graph_def)
        return _run("tfc_summary_write_graph", self._w, data, len(data))

    def flush(self):
        return _run("tfc_summary_writer_flush", self._w)

    def close(self):
        return _run("tfc_summary_writer_close", self._w)

    def __del__(self):
        if getattr(self, "_w", None):
            _c("tfc_summary_writer_free")(self._w)
            self._w = None


def create_file_writer(logdir, max_queue=0, flush_millis=0, filename_suffix=None):
    return SummaryWriter(logdir, max_queue, flush_millis, filename_suffix)
