"""tfc.train: TensorFlow checkpoints (tf.train.Checkpoint, tf.train.load_checkpoint, tf.train.latest_checkpoint)
over libtfc's include/tfc/checkpoint.h and include/tfc/keras/checkpoint.h.

    ckpt = tfc.train.Checkpoint(model=model)          # a tfc.keras.Model (with its compiled optimizer)
    path = ckpt.save("/tmp/ckpts/ckpt")               # "/tmp/ckpts/ckpt-1"
    ckpt.restore(path).assert_consumed()
    tfc.train.load_checkpoint(path).get_tensor("model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE")
"""
import ctypes

from . import _lib
from ._lib import Shape, Status, check, lib
from . import dtypes as _dt
from .tensor import Tensor

_P = ctypes.c_void_p
_PS = ctypes.POINTER(Status)
_SIGS = {
    "tfc_checkpoint_reader_new": (_P, [ctypes.c_char_p, _PS]),
    "tfc_checkpoint_reader_free": (None, [_P]),
    "tfc_checkpoint_reader_size": (ctypes.c_int64, [_P]),
    "tfc_checkpoint_reader_name": (ctypes.c_char_p, [_P, ctypes.c_int64]),
    "tfc_checkpoint_reader_has_tensor": (ctypes.c_bool, [_P, ctypes.c_char_p]),
    "tfc_checkpoint_reader_info": (ctypes.c_bool, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                                   ctypes.POINTER(Shape), _PS]),
    "tfc_checkpoint_reader_get_tensor": (_P, [_P, ctypes.c_char_p, _PS]),
    "tfc_latest_checkpoint": (ctypes.c_bool, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _PS]),
    "tfc_trackable_new": (_P, [_PS]),
    "tfc_trackable_unref": (None, [_P]),
    "tfc_trackable_track_variable": (ctypes.c_bool, [_P, ctypes.c_char_p, _P, _PS]),
    "tfc_trackable_track_child": (ctypes.c_bool, [_P, ctypes.c_char_p, _P, _PS]),
    "tfc_checkpoint_new": (_P, [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_P), ctypes.c_int, _PS]),
    "tfc_checkpoint_free": (None, [_P]),
    "tfc_checkpoint_root": (_P, [_P]),
    "tfc_checkpoint_save_counter": (ctypes.c_int64, [_P]),
    "tfc_checkpoint_write": (ctypes.c_bool, [_P, ctypes.c_char_p, _PS]),
    "tfc_checkpoint_save": (ctypes.c_bool, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, _PS]),
    "tfc_checkpoint_restore": (_P, [_P, ctypes.c_char_p, _PS]),
    "tfc_checkpoint_status_assert_consumed": (ctypes.c_bool, [_P, _PS]),
    "tfc_checkpoint_status_assert_existing_objects_matched": (ctypes.c_bool, [_P, _PS]),
    "tfc_checkpoint_status_expect_partial": (None, [_P]),
    "tfc_checkpoint_status_free": (None, [_P]),
    "tfc_model_checkpoint_new": (_P, [_P, _PS]),
}
for _name, (_res, _args) in _SIGS.items():
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _res, _args


class CheckpointReader:
    """tf.train.load_checkpoint's reader: names, dtypes, shapes and values of a checkpoint's tensors."""

    def __init__(self, ckpt_dir_or_file):
        st = Status()
        self._r = _P(lib.tfc_checkpoint_reader_new(str(ckpt_dir_or_file).encode(), ctypes.byref(st)))
        check(st)

    def __del__(self):
        r = getattr(self, "_r", None)
        if r and lib is not None:
            lib.tfc_checkpoint_reader_free(r)
            self._r = None

    def _names(self):
        return [lib.tfc_checkpoint_reader_name(self._r, i).decode()
                for i in range(lib.tfc_checkpoint_reader_size(self._r))]

    def _info(self, name):
        st, dt, sh = Status(), ctypes.c_int(), Shape()
        lib.tfc_checkpoint_reader_info(self._r, name.encode(), ctypes.byref(dt), ctypes.byref(sh), ctypes.byref(st))
        check(st)
        return dt.value, [int(sh.dims[i]) for i in range(sh.rank)]

    def get_variable_to_shape_map(self):
        return {n: self._info(n)[1] for n in self._names()}

    def get_variable_to_dtype_map(self):
        return {n: _dt.from_enum(self._info(n)[0]) for n in self._names()}

    def has_tensor(self, name):
        return bool(lib.tfc_checkpoint_reader_has_tensor(self._r, name.encode()))

    def get_tensor(self, name):
        st = Status()
        h = lib.tfc_checkpoint_reader_get_tensor(self._r, name.encode(), ctypes.byref(st))
        check(st)
        return Tensor(h).numpy()


def load_checkpoint(ckpt_dir_or_file):
    return CheckpointReader(ckpt_dir_or_file)


def latest_checkpoint(checkpoint_dir):
    """The latest checkpoint's prefix, or None (as TensorFlow) when there is none."""
    st, buf = Status(), ctypes.create_string_buffer(4096)
    if lib.tfc_latest_checkpoint(str(checkpoint_dir).encode(), buf, len(buf), ctypes.byref(st)):
        return buf.value.decode()
    if st.code == 5:  # NOT_FOUND
        return None
    check(st)


class LoadStatus:
    """CheckpointLoadStatus: what a restore matched."""

    def __init__(self, handle):
        self._s = _P(handle)

    def __del__(self):
        s = getattr(self, "_s", None)
        if s and lib is not None:
            lib.tfc_checkpoint_status_free(s)
            self._s = None

    def assert_consumed(self):
        st = Status()
        if not lib.tfc_checkpoint_status_assert_consumed(self._s, ctypes.byref(st)):
            raise AssertionError(st.msg.decode())
        return self

    def assert_existing_objects_matched(self):
        st = Status()
        if not lib.tfc_checkpoint_status_assert_existing_objects_matched(self._s, ctypes.byref(st)):
            raise AssertionError(st.msg.decode())
        return self

    def expect_partial(self):
        lib.tfc_checkpoint_status_expect_partial(self._s)
        return self


def _trackable(obj, keep):
    """A trackable handle for a tfc.Variable or a dict of them (nested dicts become child objects)."""
    st = Status()
    t = lib.tfc_trackable_new(ctypes.byref(st))
    check(st)
    keep.append(obj)
    for name, v in obj.items():
        if isinstance(v, dict):
            c = _trackable(v, keep)
            ok = lib.tfc_trackable_track_child(t, name.encode(), c, ctypes.byref(st))
            lib.tfc_trackable_unref(c)
        else:
            ok = lib.tfc_trackable_track_variable(t, name.encode(), v._v, ctypes.byref(st))
        if not ok:
            lib.tfc_trackable_unref(t)
            check(st)
    return t


class Checkpoint:
    """tf.train.Checkpoint. Checkpoint(model=m) for a tfc.keras.Model (its compiled optimizer is saved as
    "optimizer"), or Checkpoint(**objects) with tfc.Variables, dicts of them (nested objects) and dataset
    iterators (iter(dataset): saved as "<name>/.ATTRIBUTES/ITERATOR_STATE", see include/tfc/data_checkpoint.h)."""

    def __init__(self, model=None, **objects):
        st = Status()
        self._keep = [model, objects]
        if model is not None:
            if objects:
                raise ValueError("tfc.train.Checkpoint: model= takes no other objects")
            h = lib.tfc_model_checkpoint_new(model._m, ctypes.byref(st))
        else:
            dicts = {k: v for k, v in objects.items() if isinstance(v, dict) or hasattr(v, "_tfc_trackable")}
            handles = [v._tfc_trackable() if hasattr(v, "_tfc_trackable") else _trackable(v, self._keep)
                       for v in dicts.values()]
            names = (ctypes.c_char_p * max(1, len(handles)))(*[k.encode() for k in dicts])
            arr = (_P * max(1, len(handles)))(*handles)
            h = lib.tfc_checkpoint_new(_lib.ctx(), names, arr, len(handles), ctypes.byref(st))
            for x in handles:
                lib.tfc_trackable_unref(x)
            if h:
                root = lib.tfc_checkpoint_root(h)
                for k, v in objects.items():
                    if k not in dicts and not lib.tfc_trackable_track_variable(root, k.encode(), v._v,
                                                                                        ctypes.byref(st)):
                        break
                if st.code:
                    lib.tfc_checkpoint_free(h)
        check(st)
        self._c = _P(h)

    def __del__(self):
        c = getattr(self, "_c", None)
        if c and lib is not None:
            lib.tfc_checkpoint_free(c)
            self._c = None

    @property
    def save_counter(self):
        return int(lib.tfc_checkpoint_save_counter(self._c))

    def write(self, file_prefix):
        st = Status()
        lib.tfc_checkpoint_write(self._c, str(file_prefix).encode(), ctypes.byref(st))
        check(st)
        return str(file_prefix)

    def save(self, file_prefix):
        st, buf = Status(), ctypes.create_string_buffer(4096)
        lib.tfc_checkpoint_save(self._c, str(file_prefix).encode(), buf, len(buf), ctypes.byref(st))
        check(st)
        return buf.value.decode()

    def restore(self, save_path):
        st = Status()
        h = lib.tfc_checkpoint_restore(self._c, str(save_path).encode(), ctypes.byref(st))
        check(st)
        return LoadStatus(h)

    read = restore
