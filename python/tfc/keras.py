"""tfc.keras: a thin ctypes door to tfc's Keras in C (include/tfc/keras/*.h), shaped like tf.keras (Keras 2 API).

    import tfc
    d = tfc.keras.layer_from_config("Dense", {"units": 4, "activation": "relu"})
    y = d(np.ones((2, 3), np.float32))                 # a tfc.Tensor; builds the layer on first call
    d.get_config()["units"]                            # 4
    m = tfc.keras.model_from_json(tf_keras_model.to_json())
    m.compile(optimizer=("Adam", {"learning_rate": 1e-3}), loss="mse", metrics=["mae"])
    m.fit(x, y, batch_size=8, epochs=2)

Objects own their C counterparts and release them when garbage-collected; a layer, optimizer, loss or metric
handed to a model belongs to the model from then on (the Python object stays usable while the model lives).
C functions are bound lazily, so this module imports while parts of the C API are still missing; using one
raises NotImplementedError naming the function (tests use `available(name)` to skip).
"""
import ctypes
import json
import os
import tempfile

import numpy as np

from . import _lib
from ._lib import Shape, Status, check, lib
from .tensor import Tensor, constant
from .variables import Variable

__all__ = ["Layer", "Model", "Sequential", "Input", "KerasTensor", "Optimizer", "Loss", "Metric", "layer_from_config",
           "model_from_config", "model_from_json", "load_model", "optimizer_from_config", "loss_from_config", "metric_from_config",
           "clear_session", "available"]

_P = ctypes.c_void_p
_PS = ctypes.POINTER(Status)
_CP = ctypes.c_char_p
_I64 = ctypes.c_int64
_B = ctypes.c_bool
_I = ctypes.c_int
_D = ctypes.c_double
_PP = ctypes.POINTER(_P)


class CompileOpts(ctypes.Structure):
    """tfc_compile_opts (include/tfc/keras/model.h)."""
    _fields_ = [("optimizer", _P), ("optimizer_name", _CP), ("loss", _P), ("loss_name", _CP),
                ("metrics", _CP * 8), ("metric_objs", _P * 8), ("run_eagerly", _I), ("steps_per_execution", _I)]


class FitOpts(ctypes.Structure):
    """tfc_fit_opts."""
    _fields_ = [("batch_size", _I64), ("epochs", _I), ("verbose", _I), ("callbacks", _P * 16),
                ("validation_split", _D), ("validation_x", _P), ("validation_y", _P), ("shuffle", _I),
                ("class_weight", ctypes.POINTER(_D)), ("n_class_weight", _I), ("sample_weight", _P),
                ("initial_epoch", _I), ("steps_per_epoch", _I64), ("validation_steps", _I64),
                ("validation_batch_size", _I64), ("validation_freq", _I), ("out", _P), ("report_throughput", _B)]


class TensorBoardOpts(ctypes.Structure):
    """tfc_tensorboard_opts (include/tfc/keras/callbacks.h)."""
    _fields_ = [("log_dir", _CP), ("histogram_freq", _I), ("write_images", _B), ("write_steps_per_second", _B),
                ("update_freq", _CP), ("update_freq_steps", _I64), ("profile_batch_start", _I64),
                ("profile_batch_stop", _I64), ("write_graph", _I)]


class EvalOpts(ctypes.Structure):
    """tfc_eval_opts."""
    _fields_ = [("batch_size", _I64), ("verbose", _I), ("sample_weight", _P), ("steps", _I64),
                ("callbacks", _P * 16), ("out", _P)]


VERBOSE_SILENT = -1
_YES, _NO = 1, -1  # tfc_flag

# name: (restype, argtypes). Strings the library allocates are returned as void* and freed with tfc_free.
_SIGS = {
    "tfc_free": (None, [_P]),
    "tfc_keras_clear_session": (None, []),
    # layers
    "tfc_layer_from_config": (_P, [_CP, _CP, _PS]),
    "tfc_layer_ref": (_P, [_P]),
    "tfc_layer_compute_dtype": (_I, [_P]),
    "tfc_layer_variable_dtype": (_I, [_P]),
    "tfc_mixed_precision_set_global_policy": (ctypes.c_bool, [_CP, _PS]),
    "tfc_policy_init": (ctypes.c_bool, [_P, _CP, _PS]),
    "tfc_mixed_precision_loss_scale_optimizer_new": (_P, [_P, _P]),
    "tfc_loss_scale_optimizer_loss_scale": (ctypes.c_double, [_P]),
    "tfc_loss_scale_optimizer_dynamic_counter": (ctypes.c_int64, [_P]),
    "tfc_layer_unref": (None, [_P]),
    "tfc_layer_name": (_CP, [_P]),
    "tfc_layer_class_name": (_CP, [_P]),
    "tfc_layer_built": (_B, [_P]),
    "tfc_layer_trainable": (_B, [_P]),
    "tfc_layer_set_trainable": (None, [_P, _B]),
    "tfc_layer_weights": (_I, [_P, _PP, _I]),
    "tfc_layer_trainable_weights": (_I, [_P, _PP, _I]),
    "tfc_layer_non_trainable_weights": (_I, [_P, _PP, _I]),
    "tfc_layer_count_params": (_I64, [_P]),
    "tfc_layer_get_weights": (_I, [_P, _PP, _I, _PS]),
    "tfc_layer_set_weights": (_B, [_P, _P, _PP, _I, _PS]),
    "tfc_layer_build": (_B, [_P, _P, ctypes.POINTER(Shape), _I, _PS]),
    "tfc_layer_call": (_B, [_P, _P, _PP, _I, _PP, _I, _B, _PS]),
    "tfc_layer_regularization_loss": (_P, [_P, _P, _PS]),
    "tfc_layer_get_config": (_P, [_P, _PS]),
    "tfc_layer_apply": (_P, [_P, _PP, _I, _PS]),
    "tfc_ktensor_shape": (ctypes.POINTER(Shape), [_P]),
    "tfc_ktensor_dtype": (_I, [_P]),
    "tfc_ktensor_layer": (_P, [_P]),
    "tfc_layers_input_layer_new": (_P, [_P]),
    # models
    "tfc_sequential_named": (_P, [_P, _PP, _CP]),
    "tfc_model_add": (_B, [_P, _P, _PS]),
    "tfc_model_new": (_P, [_P, _PP, _I, _PP, _I, _CP, _PS]),
    "tfc_model_from_config": (_P, [_P, _CP, _PS]),
    "tfc_model_as_layer": (_P, [_P]),
    "tfc_model_free": (None, [_P]),
    "tfc_model_layers": (_I, [_P, _PP, _I]),
    "tfc_model_get_layer": (_P, [_P, _CP]),
    "tfc_model_build": (_B, [_P, ctypes.POINTER(Shape), _PS]),
    "tfc_model_summary": (_B, [_P, _P, _PS]),
    "tfc_model_call_n": (_B, [_P, _PP, _I, _PP, _I, _B, _PS]),
    "tfc_model_compile": (_B, [_P, ctypes.POINTER(CompileOpts), _PS]),
    "tfc_model_metrics_names": (_I, [_P, ctypes.POINTER(_CP), _I]),
    "tfc_model_optimizer": (_P, [_P]),
    "tfc_model_fit_n": (_B, [_P, _PP, _I, _PP, _I, ctypes.POINTER(FitOpts), _PP, _PS]),
    "tfc_model_evaluate_n": (_I, [_P, _PP, _I, _PP, _I, ctypes.POINTER(EvalOpts), ctypes.POINTER(_D), _I, _PS]),
    "tfc_model_predict": (_P, [_P, _P, ctypes.POINTER(EvalOpts), _PS]),
    "tfc_model_predict_n": (_B, [_P, _PP, _I, ctypes.POINTER(EvalOpts), _PP, _I, _PS]),
    "tfc_model_train_on_batch": (_I, [_P, _P, _P, _P, _B, ctypes.POINTER(_D), _I, _PS]),
    "tfc_model_test_on_batch": (_I, [_P, _P, _P, _P, _B, ctypes.POINTER(_D), _I, _PS]),
    "tfc_model_predict_on_batch": (_P, [_P, _P, _PS]),
    "tfc_model_reset_metrics": (None, [_P]),
    "tfc_model_save_weights": (_B, [_P, _CP, _PS]),
    "tfc_model_load_weights": (_B, [_P, _CP, _PS]),
    "tfc_model_save": (_B, [_P, _CP, _PS]),
    "tfc_model_export": (_B, [_P, _CP, _PS]),
    "tfc_keras_load_model": (_P, [_P, _CP, _PS]),
    "tfc_model_get_weights": (_I, [_P, _PP, _I, _PS]),
    "tfc_model_set_weights": (_B, [_P, _PP, _I, _PS]),
    "tfc_history_epochs": (_I, [_P]),
    "tfc_callbacks_tensorboard_new": (_P, [ctypes.POINTER(TensorBoardOpts), _PS]),
    "tfc_callback_free": (None, [_P]),
    "tfc_history_get": (ctypes.POINTER(_D), [_P, _CP, ctypes.POINTER(_I)]),
    "tfc_history_keys": (_I, [_P, ctypes.POINTER(_CP), _I]),
    "tfc_history_free": (None, [_P]),
    # optimizers
    "tfc_optimizer_from_config": (_P, [_CP, _CP, _PS]),
    "tfc_optimizer_get_config": (_P, [_P, _PS]),
    "tfc_optimizer_free": (None, [_P]),
    "tfc_optimizer_name": (_CP, [_P]),
    "tfc_optimizer_class_name": (_CP, [_P]),
    "tfc_optimizer_get_slot": (_P, [_P, _P, _CP]),
    "tfc_optimizer_apply_gradients": (_B, [_P, _P, _PP, _PP, _I, _PS]),
    "tfc_optimizer_iterations": (_I64, [_P]),
    "tfc_optimizer_learning_rate": (_D, [_P]),
    "tfc_optimizer_set_learning_rate": (None, [_P, _D]),
    "tfc_optimizer_variables": (_I, [_P, _PP, _I]),
    # losses and metrics
    "tfc_loss_from_config": (_P, [_CP, _CP, _PS]),
    "tfc_loss_get_config": (_P, [_P, _PS]),
    "tfc_loss_name": (_CP, [_P]),
    "tfc_loss_free": (None, [_P]),
    "tfc_loss_call": (_P, [_P, _P, _P, _P, _P, _PS]),
    "tfc_metric_from_config": (_P, [_CP, _CP, _PS]),
    "tfc_metric_name": (_CP, [_P]),
    "tfc_metric_class_name": (_CP, [_P]),
    "tfc_metric_get_config": (_P, [_P, _PS]),
    "tfc_metric_update_state": (_B, [_P, _P, _P, _P, _P, _PS]),
    "tfc_metric_result": (_D, [_P]),
    "tfc_metric_reset_state": (None, [_P]),
    "tfc_metric_free": (None, [_P]),
}

_BOUND = {}


def _c(name):
    """The bound C function `name`; NotImplementedError when this libtfc.so does not export it (yet)."""
    fn = _BOUND.get(name)
    if fn is None:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise NotImplementedError("%s is not in %s (not implemented yet)" % (name, _lib.path)) from None
        res, args = _SIGS[name]
        fn.restype, fn.argtypes = res, args
        _BOUND[name] = fn
    return fn


def available(*names):
    """True when libtfc exports every named C function."""
    for n in names:
        try:
            _c(n)
        except NotImplementedError:
            return False
    return True


def _ctx():
    return _lib.ctx()


def _take_string(p):
    """A str from a tfc_malloc'd char* (freed here)."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        _c("tfc_free")(p)


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "as_list"):  # TensorShape
        return o.as_list()
    raise TypeError("%r is not JSON serializable" % (o,))


def _dumps(obj):
    return json.dumps(obj, default=_json_default)


def _st():
    return Status()


def _to_tensor(x, dtype=None):
    """numpy / Python / tfc values -> tfc.Tensor (numpy arrays keep their dtype)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Variable):
        return x.read_value()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        x = x.numpy()  # a TensorFlow tensor
    if dtype is None and not isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        if a.dtype == np.float64:
            a = a.astype(np.float32)  # Keras's floatx for Python floats
        return constant(a)
    return constant(np.asarray(x), dtype=dtype)


def _ptr_array(handles):
    return (_P * max(len(handles), 1))(*handles)


def _shape_struct(shape):
    s = Shape()
    dims = [-1 if d is None else int(d) for d in shape]
    if len(dims) > 8:
        raise ValueError("rank %d > 8" % len(dims))
    s.rank = len(dims)
    for i, d in enumerate(dims):
        s.dims[i] = d
    return s


def _shape_tuple(sp):
    s = sp.contents
    if s.rank < 0:
        return None
    return tuple(None if s.dims[i] < 0 else int(s.dims[i]) for i in range(s.rank))


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(d is None or isinstance(d, (int, np.integer)) for d in x)


def clear_session():
    """tf.keras.backend.clear_session() for layer names: automatic names restart at "dense", "dense_1", ..."""
    _c("tfc_keras_clear_session")()


# ---- variables owned by layers -----------------------------------------------------------------------------

class LayerVariable(Variable):
    """A tfc.Variable borrowed from a layer, model or optimizer (the owner keeps it alive; this object keeps the
    owner's Python object alive). Usable wherever a tfc.Variable is: GradientTape sources, assign, numpy."""

    def __init__(self, handle, owner):  # noqa: super().__init__ creates variables; this one wraps
        self._v = ctypes.c_void_p(handle)
        self._owner = owner
        self._trainable = bool(lib.tfc_variable_trainable(self._v))

    def __del__(self):
        pass  # borrowed

    @property
    def trainable(self):
        return bool(lib.tfc_variable_trainable(self._v))


def _variables(fn, handle, owner):
    n = fn(handle, None, 0)
    if n <= 0:
        return []
    buf = (_P * n)()
    n = fn(handle, buf, n)
    return [LayerVariable(buf[i], owner) for i in range(n)]


# ---- layers ---------------------------------------------------------------------------------------------

class KerasTensor:
    """A symbolic Keras tensor (tfc_ktensor): the output of Input() or of a layer called on Keras tensors.
    Borrowed from the layer that produced it (kept alive through `layer`)."""

    def __init__(self, handle, layer):
        self._k = handle
        self.layer = layer

    @property
    def shape(self):
        return _shape_tuple(_c("tfc_ktensor_shape")(self._k))

    @property
    def dtype(self):
        from . import dtypes
        return dtypes.from_enum(_c("tfc_ktensor_dtype")(self._k))

    def __repr__(self):
        return "<tfc.keras.KerasTensor shape=%s dtype=%s (created by layer %r)>" % (
            self.shape, self.dtype.name, self.layer.name)


class Layer:
    """A tfc Keras layer (tf.keras.layers.Layer). Holds one reference to the C layer."""

    def __init__(self, handle, floating=True):
        if not handle:
            raise ValueError("tfc.keras.Layer: NULL handle")
        self._h = ctypes.c_void_p(handle)
        self._floating = floating  # our reference is the floating one: a model taking the layer takes it

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and lib is not None and _BOUND.get("tfc_layer_unref") is not None:
            _BOUND["tfc_layer_unref"](h)
            self._h = None

    def _give(self):
        """The handle to pass to a C container that takes the layer: keep our own reference first."""
        if self._floating:
            _c("tfc_layer_ref")(self._h)
            self._floating = False
        return self._h.value

    @property
    def handle(self):
        return self._h.value

    @classmethod
    def from_config(cls, class_name, config=None):
        return layer_from_config(class_name, config)

    @property
    def name(self):
        return _c("tfc_layer_name")(self._h).decode()

    @property
    def class_name(self):
        return _c("tfc_layer_class_name")(self._h).decode()

    @property
    def built(self):
        return bool(_c("tfc_layer_built")(self._h))

    @property
    def trainable(self):
        return bool(_c("tfc_layer_trainable")(self._h))

    @property
    def compute_dtype(self):
        from . import dtypes
        return dtypes.from_enum(_c("tfc_layer_compute_dtype")(self._h)).name

    @property
    def variable_dtype(self):
        from . import dtypes
        return dtypes.from_enum(_c("tfc_layer_variable_dtype")(self._h)).name

    dtype = variable_dtype

    @trainable.setter
    def trainable(self, v):
        _c("tfc_layer_set_trainable")(self._h, bool(v))

    def get_config(self):
        st = _st()
        p = _c("tfc_layer_get_config")(self._h, ctypes.byref(st))
        check(st)
        return json.loads(_take_string(p))

    def build(self, input_shape):
        """layer.build(input_shape): one shape (tuple with the batch dim, None for unknown) or a list of shapes."""
        shapes = [input_shape] if _is_shape(input_shape) else list(input_shape)
        arr = (Shape * max(len(shapes), 1))(*[_shape_struct(s) for s in shapes])
        st = _st()
        _c("tfc_layer_build")(self._h, _ctx(), arr, len(shapes), ctypes.byref(st))
        check(st)

    def __call__(self, inputs, training=False, n_outputs=1):
        """Eager call on arrays/Tensors (a list for multi-input layers): a tfc.Tensor (a list when
        n_outputs > 1). On KerasTensors: records a node and returns a KerasTensor (Functional API)."""
        many = isinstance(inputs, (list, tuple))
        items = list(inputs) if many else [inputs]
        if items and all(isinstance(x, KerasTensor) for x in items):
            return self._apply(items)
        ts = [_to_tensor(x) for x in items]
        ins = _ptr_array([t.handle for t in ts])
        outs = (_P * n_outputs)()
        st = _st()
        _c("tfc_layer_call")(self._h, _ctx(), ins, len(ts), outs, n_outputs, bool(training), ctypes.byref(st))
        check(st)
        res = [Tensor(outs[i]) for i in range(n_outputs)]
        return res if n_outputs > 1 else res[0]

    call = __call__

    def _apply(self, ks):
        st = _st()
        arr = _ptr_array([k._k for k in ks])
        k = _c("tfc_layer_apply")(self._h, arr, len(ks), ctypes.byref(st))
        check(st)
        # Input layers become owned by the model built on these tensors; keep the Python objects alive.
        self._inbound = getattr(self, "_inbound", []) + list(ks)
        return KerasTensor(k, self)

    @property
    def weights(self):
        return _variables(_c("tfc_layer_weights"), self._h, self)

    variables = weights

    @property
    def trainable_weights(self):
        return _variables(_c("tfc_layer_trainable_weights"), self._h, self)

    trainable_variables = trainable_weights

    @property
    def non_trainable_weights(self):
        return _variables(_c("tfc_layer_non_trainable_weights"), self._h, self)

    non_trainable_variables = non_trainable_weights

    def count_params(self):
        return int(_c("tfc_layer_count_params")(self._h))

    def get_weights(self):
        n = _c("tfc_layer_weights")(self._h, None, 0)
        if n <= 0:
            return []
        buf = (_P * n)()
        st = _st()
        got = _c("tfc_layer_get_weights")(self._h, buf, n, ctypes.byref(st))
        check(st)
        return [Tensor(buf[i]).numpy() for i in range(min(got, n))]

    def set_weights(self, weights):
        ts = [_to_tensor(np.asarray(w) if not isinstance(w, Tensor) else w) for w in weights]
        st = _st()
        _c("tfc_layer_set_weights")(self._h, _ctx(), _ptr_array([t.handle for t in ts]), len(ts), ctypes.byref(st))
        check(st)

    @property
    def losses(self):
        """The regularization losses of the weights and the latest call's activity loss, summed (a list of at
        most one scalar tensor; Keras lists them one by one)."""
        st = _st()
        h = _c("tfc_layer_regularization_loss")(self._h, _ctx(), ctypes.byref(st))
        check(st)
        return [Tensor(h)] if h else []

    def __repr__(self):
        return "<tfc.keras.layers.%s %r>" % (self.class_name, self.name)


def layer_from_config(class_name, config=None):
    """tf.keras.layers.deserialize({"class_name": ..., "config": ...}): keys left out take Keras's defaults.
    config may be a dict or a JSON string. Also accepts a full {"class_name", "config"} dict as first argument."""
    if isinstance(class_name, dict):
        class_name, config = class_name["class_name"], class_name.get("config", {})
    if config is None:
        config = {}
    js = config if isinstance(config, str) else _dumps(config)
    st = _st()
    h = _c("tfc_layer_from_config")(class_name.encode(), js.encode(), ctypes.byref(st))
    check(st)
    return Layer(h)


class _InputOpts(ctypes.Structure):
    """tfc_input_opts (include/tfc/keras/layer.h)."""
    _fields_ = [("shape", _I64 * 8), ("rank", _I), ("batch_size", _I64), ("dtype", _I), ("name", _CP)]


_SIGS["tfc_input_new"] = (_P, [ctypes.POINTER(_InputOpts)])


def Input(shape=(), batch_size=None, name=None, dtype=None):
    """tf.keras.Input: a KerasTensor produced by a new InputLayer (shape without the batch dim)."""
    from . import dtypes
    o = _InputOpts()
    shape = tuple(shape)
    if len(shape) > 7:
        raise ValueError("Input: rank %d > 7" % len(shape))
    for i, d in enumerate(shape):
        o.shape[i] = -1 if d is None else int(d)
    o.rank = len(shape) if shape else 0
    o.batch_size = int(batch_size or 0)
    o.dtype = dtypes.as_dtype(dtype).enum if dtype is not None else 0
    nm = name.encode() if name else None
    o.name = nm
    k = _c("tfc_input_new")(ctypes.byref(o))
    if not k:
        raise MemoryError("tfc_input_new")
    return KerasTensor(k, Layer(_c("tfc_ktensor_layer")(k)))  # the floating InputLayer is ours until a model


# ---- optimizers, losses, metrics -----------------------------------------------------------------------

def _class_and_config(spec, what):
    """'adam' | ('Adam', {...}) | {'class_name': 'Adam', 'config': {...}} -> (name, json or None)."""
    if isinstance(spec, str):
        return spec, None
    if isinstance(spec, dict):
        return spec["class_name"], _dumps(spec.get("config", {}))
    if isinstance(spec, (list, tuple)) and len(spec) == 2:
        cfg = spec[1]
        return spec[0], (cfg if isinstance(cfg, str) or cfg is None else _dumps(cfg))
    raise TypeError("%s: expected a name, (class_name, config) or {'class_name', 'config'}, got %r" % (what, spec))


class _Owned:
    """An object owned by Python until a model takes it (then the model frees it)."""
    _free_fn = None

    def __init__(self, handle):
        if not handle:
            raise ValueError("NULL handle")
        self._h = ctypes.c_void_p(handle)
        self._owned = True
        self._model = None

    def _give(self, model):
        if not self._owned:
            raise ValueError("%r already belongs to a model" % self)
        self._owned = False
        self._model = model
        return self._h.value

    def __del__(self):
        h = getattr(self, "_h", None)
        if h and getattr(self, "_owned", False) and lib is not None and _BOUND.get(self._free_fn) is not None:
            _BOUND[self._free_fn](h)
            self._h = None

    @property
    def handle(self):
        return self._h.value


class Optimizer(_Owned):
    """A tfc optimizer (tf.keras.optimizers.*, TF 2.4's OptimizerV2)."""
    _free_fn = "tfc_optimizer_free"

    @classmethod
    def _borrowed(cls, handle, model):
        o = cls(handle)
        o._owned, o._model = False, model
        return o

    def get_config(self):
        st = _st()
        p = _c("tfc_optimizer_get_config")(self._h, ctypes.byref(st))
        check(st)
        return json.loads(_take_string(p))

    def apply_gradients(self, grads_and_vars):
        """optimizer.apply_gradients(zip(grads, vars)): vars are tfc.Variables (e.g. layer.trainable_weights);
        None gradients are skipped."""
        pairs = list(grads_and_vars)
        gs = [None if g is None else _to_tensor(g) for g, _ in pairs]
        vs = [v for _, v in pairs]
        st = _st()
        _c("tfc_optimizer_apply_gradients")(self._h, _ctx(), _ptr_array([g.handle if g is not None else None
                                                                        for g in gs]),
                                            _ptr_array([v._v.value for v in vs]), len(pairs), ctypes.byref(st))
        check(st)

    @property
    def name(self):
        return _c("tfc_optimizer_name")(self._h).decode()

    @property
    def class_name(self):
        return _c("tfc_optimizer_class_name")(self._h).decode()

    def get_slot(self, var, slot_name):
        """optimizer.get_slot(var, "m"): the slot variable (borrowed), or None."""
        h = _c("tfc_optimizer_get_slot")(self._h, var._v, slot_name.encode())
        return LayerVariable(h, self) if h else None

    @property
    def iterations(self):
        return int(_c("tfc_optimizer_iterations")(self._h))

    @property
    def learning_rate(self):
        return float(_c("tfc_optimizer_learning_rate")(self._h))

    @learning_rate.setter
    def learning_rate(self, v):
        _c("tfc_optimizer_set_learning_rate")(self._h, float(v))

    lr = learning_rate

    @property
    def variables(self):
        return _variables(_c("tfc_optimizer_variables"), self._h, self)

    def get_weights(self):
        return [v.numpy() for v in self.variables]


def optimizer_from_config(class_name, config=None):
    """tf.keras.optimizers.get / deserialize: ('Adam', {...}), 'adam', or {'class_name', 'config'}."""
    name, js = _class_and_config(class_name if config is None else (class_name, config), "optimizer")
    st = _st()
    h = _c("tfc_optimizer_from_config")(name.encode(), js.encode() if js else None, ctypes.byref(st))
    check(st)
    return Optimizer(h)


class Loss(_Owned):
    """A tfc loss (tf.keras.losses.*). Calling it returns a tfc.Tensor (scalar unless reduction='none'),
    differentiable with respect to y_pred."""
    _free_fn = "tfc_loss_free"

    @property
    def name(self):
        return _c("tfc_loss_name")(self._h).decode()

    def get_config(self):
        st = _st()
        p = _c("tfc_loss_get_config")(self._h, ctypes.byref(st))
        check(st)
        return json.loads(_take_string(p))

    def __call__(self, y_true, y_pred, sample_weight=None):
        yt, yp = _to_tensor(y_true), _to_tensor(y_pred)
        sw = None if sample_weight is None else _to_tensor(sample_weight)
        st = _st()
        h = _c("tfc_loss_call")(self._h, _ctx(), yt.handle, yp.handle, sw.handle if sw is not None else None,
                                ctypes.byref(st))
        check(st)
        return Tensor(h)

    call = __call__


def loss_from_config(name, config=None):
    """tf.keras.losses.get: 'mse', ('CategoricalCrossentropy', {'label_smoothing': 0.1}), ..."""
    n, js = _class_and_config(name if config is None else (name, config), "loss")
    st = _st()
    h = _c("tfc_loss_from_config")(n.encode(), js.encode() if js else None, ctypes.byref(st))
    check(st)
    return Loss(h)


class Metric(_Owned):
    """A tfc metric (tf.keras.metrics.*): update_state accumulates, result reads, reset_state clears."""
    _free_fn = "tfc_metric_free"

    @property
    def name(self):
        return _c("tfc_metric_name")(self._h).decode()

    @property
    def class_name(self):
        return _c("tfc_metric_class_name")(self._h).decode()

    def get_config(self):
        st = _st()
        p = _c("tfc_metric_get_config")(self._h, ctypes.byref(st))
        check(st)
        return json.loads(_take_string(p))

    def update_state(self, y_true, y_pred, sample_weight=None):
        yt = None if y_true is None else _to_tensor(y_true)
        yp = _to_tensor(y_pred)
        sw = None if sample_weight is None else _to_tensor(sample_weight)
        st = _st()
        _c("tfc_metric_update_state")(self._h, _ctx(), yt.handle if yt is not None else None, yp.handle,
                                      sw.handle if sw is not None else None, ctypes.byref(st))
        check(st)

    update = update_state

    def result(self):
        return float(_c("tfc_metric_result")(self._h))

    def reset_state(self):
        _c("tfc_metric_reset_state")(self._h)

    reset_states = reset_state

    def __call__(self, y_true, y_pred, sample_weight=None):
        self.update_state(y_true, y_pred, sample_weight)
        return self.result()


def metric_from_config(name, config=None):
    """tf.keras.metrics.get: 'accuracy', ('AUC', {'num_thresholds': 50}), ..."""
    n, js = _class_and_config(name if config is None else (name, config), "metric")
    st = _st()
    h = _c("tfc_metric_from_config")(n.encode(), js.encode() if js else None, ctypes.byref(st))
    check(st)
    return Metric(h)


# ---- models ---------------------------------------------------------------------------------------------

_libc = ctypes.CDLL(None)
_libc.fopen.restype, _libc.fopen.argtypes = _P, [_CP, _CP]
_libc.fclose.restype, _libc.fclose.argtypes = _I, [_P]


def _results(n, buf):
    vals = [float(buf[i]) for i in range(n)]
    return vals[0] if len(vals) == 1 else vals


def _tensors(x):
    """x, [x1, x2] or a dict -> list of tfc.Tensors."""
    if isinstance(x, dict):
        x = [x[k] for k in sorted(x)]
    if isinstance(x, (list, tuple)):
        return [_to_tensor(v) for v in x]
    return [_to_tensor(x)]


class Model(Layer):
    """A tfc Keras model (Sequential, Functional or subclassed in C). Owns the C model."""

    def __init__(self, handle):
        if not handle:
            raise ValueError("tfc.keras.Model: NULL handle")
        self._m = ctypes.c_void_p(handle)
        self._h = ctypes.c_void_p(_c("tfc_model_as_layer")(self._m))
        self._floating = False
        self._keep = []  # Python objects whose C counterparts the model owns
        self.optimizer = None
        self.loss = None
        self.compiled_metrics = []

    def __del__(self):
        m = getattr(self, "_m", None)
        if m and lib is not None and _BOUND.get("tfc_model_free") is not None:
            _BOUND["tfc_model_free"](m)
            self._m = None
        self._h = None

    @property
    def model_handle(self):
        return self._m.value

    # -- construction helpers
    @property
    def layers(self):
        fn = _c("tfc_model_layers")
        n = fn(self._m, None, 0)
        if n <= 0:
            return []
        buf = (_P * n)()
        n = fn(self._m, buf, n)
        return [Layer(_c("tfc_layer_ref")(buf[i]), floating=False) for i in range(n)]

    def get_layer(self, name):
        h = _c("tfc_model_get_layer")(self._m, name.encode())
        if not h:
            raise ValueError("No such layer: %s." % name)
        return Layer(_c("tfc_layer_ref")(h), floating=False)

    def add(self, layer):
        st = _st()
        _c("tfc_model_add")(self._m, layer._give(), ctypes.byref(st))
        check(st)

    def build(self, input_shape):
        st = _st()
        s = _shape_struct(input_shape)
        _c("tfc_model_build")(self._m, ctypes.byref(s), ctypes.byref(st))
        check(st)

    def summary(self, print_fn=None):
        """model.summary(): the text (returned, and printed unless print_fn is False)."""
        fd, path = tempfile.mkstemp(prefix="tfc_summary_", suffix=".txt")
        os.close(fd)
        try:
            f = _libc.fopen(path.encode(), b"w")
            if not f:
                raise OSError("cannot open %s" % path)
            st = _st()
            try:
                _c("tfc_model_summary")(self._m, f, ctypes.byref(st))
            finally:
                _libc.fclose(f)
            check(st)
            with open(path) as fh:
                text = fh.read()
        finally:
            os.unlink(path)
        if print_fn is None:
            print(text, end="")
        elif print_fn:
            print_fn(text)
        return text

    def __call__(self, inputs, training=False, n_outputs=1):
        if isinstance(inputs, KerasTensor) or (isinstance(inputs, (list, tuple)) and inputs and
                                               all(isinstance(x, KerasTensor) for x in inputs)):
            return Layer.__call__(self, inputs, training)
        ts = _tensors(inputs)
        outs = (_P * n_outputs)()
        st = _st()
        _c("tfc_model_call_n")(self._m, _ptr_array([t.handle for t in ts]), len(ts), outs, n_outputs,
                               bool(training), ctypes.byref(st))
        check(st)
        res = [Tensor(outs[i]) for i in range(n_outputs)]
        return res if n_outputs > 1 else res[0]

    call = __call__

    # -- weights
    def get_weights(self):
        n = _c("tfc_layer_weights")(self._h, None, 0)
        if n <= 0:
            return []
        buf = (_P * n)()
        st = _st()
        got = _c("tfc_model_get_weights")(self._m, buf, n, ctypes.byref(st))
        check(st)
        return [Tensor(buf[i]).numpy() for i in range(min(got, n))]

    def set_weights(self, weights):
        ts = [_to_tensor(np.asarray(w) if not isinstance(w, Tensor) else w) for w in weights]
        st = _st()
        _c("tfc_model_set_weights")(self._m, _ptr_array([t.handle for t in ts]), len(ts), ctypes.byref(st))
        check(st)

    def save_weights(self, path):
        st = _st()
        _c("tfc_model_save_weights")(self._m, os.fsencode(path), ctypes.byref(st))
        check(st)

    def load_weights(self, path):
        st = _st()
        _c("tfc_model_load_weights")(self._m, os.fsencode(path), ctypes.byref(st))
        check(st)

    def save(self, filepath):
        """keras.Model.save: "m.keras" (Keras 3 archive) or "m.h5" (legacy HDF5 model)."""
        st = _st()
        _c("tfc_model_save")(self._m, os.fsencode(filepath), ctypes.byref(st))
        check(st)

    def export(self, filepath):
        """keras.Model.export(filepath): a SavedModel with the `serving_default` signature."""
        st = _st()
        _c("tfc_model_export")(self._m, os.fsencode(filepath), ctypes.byref(st))
        check(st)

    # -- training
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, run_eagerly=None, steps_per_execution=1):
        """optimizer: a name, (class_name, config), {'class_name', 'config'} or an Optimizer; loss: a name,
        (class_name, config) or a Loss; metrics: names, (class_name, config) pairs or Metric objects.
        run_eagerly: None (tfc's default), True (eager steps) or False (compiled graph steps)."""
        o = CompileOpts()
        keep = []
        opt = optimizer
        if opt is not None and not isinstance(opt, Optimizer):
            name, js = _class_and_config(opt, "optimizer")
            opt = None if js is None else optimizer_from_config(name, js)
            if opt is None:
                b = name.encode()
                keep.append(b)
                o.optimizer_name = b
        ls = loss
        if ls is not None and not isinstance(ls, Loss):
            name, js = _class_and_config(ls, "loss")
            ls = None if js is None else loss_from_config(name, js)
            if ls is None:
                b = name.encode()
                keep.append(b)
                o.loss_name = b
        names, objs = [], []
        for mt in metrics or []:
            if isinstance(mt, Metric):
                objs.append(mt)
            elif isinstance(mt, str):
                names.append(mt.encode())
            else:
                n, js = _class_and_config(mt, "metric")
                objs.append(metric_from_config(n, js))
        if len(names) > 7 or len(objs) > 7:
            raise ValueError("at most 7 metric names and 7 metric objects")
        keep.extend(names)
        for i, b in enumerate(names):
            o.metrics[i] = b
        for i, m in enumerate(objs):
            if not m._owned:
                raise ValueError("metric %r already belongs to a model" % m)
            o.metric_objs[i] = m.handle
        if isinstance(opt, Optimizer):
            if not opt._owned:
                raise ValueError("the optimizer already belongs to a model")
            o.optimizer = opt.handle
        if isinstance(ls, Loss):
            if not ls._owned:
                raise ValueError("the loss already belongs to a model")
            o.loss = ls.handle
        o.run_eagerly = 0 if run_eagerly is None else (1 if run_eagerly else -1)
        o.steps_per_execution = int(steps_per_execution or 1)
        st = _st()
        _c("tfc_model_compile")(self._m, ctypes.byref(o), ctypes.byref(st))
        # the model takes the objects given, also when compile fails
        for x in ([opt] if isinstance(opt, Optimizer) else []) + ([ls] if isinstance(ls, Loss) else []) + objs:
            x._give(self)
        check(st)
        h = _c("tfc_model_optimizer")(self._m)
        # (compile may have wrapped the given optimizer in a LossScaleOptimizer: mixed_float16)
        same = isinstance(opt, Optimizer) and h == opt.handle
        self.optimizer = opt if same else (Optimizer._borrowed(h, self) if h else None)
        self.loss = ls if isinstance(ls, Loss) else loss
        self.compiled_metrics = objs
        self._keep.extend([x for x in [self.optimizer, ls] + objs if x is not None])

    @property
    def metrics_names(self):
        fn = _c("tfc_model_metrics_names")
        buf = (_CP * 32)()
        n = fn(self._m, buf, 32)
        return [buf[i].decode() for i in range(min(n, 32))]

    def _run_on_batch(self, fn, x, y, sample_weight, reset_metrics):
        xt, yt = _to_tensor(x), _to_tensor(y)
        sw = None if sample_weight is None else _to_tensor(sample_weight)
        buf = (_D * 32)()
        st = _st()
        n = fn(self._m, xt.handle, yt.handle, sw.handle if sw is not None else None, bool(reset_metrics), buf, 32,
               ctypes.byref(st))
        check(st)
        return _results(n, buf)

    def train_on_batch(self, x, y, sample_weight=None, reset_metrics=True):
        return self._run_on_batch(_c("tfc_model_train_on_batch"), x, y, sample_weight, reset_metrics)

    def test_on_batch(self, x, y, sample_weight=None, reset_metrics=True):
        return self._run_on_batch(_c("tfc_model_test_on_batch"), x, y, sample_weight, reset_metrics)

    def predict_on_batch(self, x):
        xt = _to_tensor(x)
        st = _st()
        h = _c("tfc_model_predict_on_batch")(self._m, xt.handle, ctypes.byref(st))
        check(st)
        return Tensor(h).numpy()

    def reset_metrics(self):
        _c("tfc_model_reset_metrics")(self._m)

    def fit(self, x, y, batch_size=None, epochs=1, verbose=0, validation_split=0.0, validation_data=None,
            shuffle=True, class_weight=None, sample_weight=None, initial_epoch=0, steps_per_epoch=None,
            validation_steps=None, validation_batch_size=None, validation_freq=1, callbacks=None):
        """model.fit; silent unless verbose. Returns a dict {key: [value per epoch]} (History.history).
        callbacks: objects with a `handle` (a tfc_callback *, e.g. TensorBoard), at most 16; fit takes them."""
        xs, ys = _tensors(x), _tensors(y)
        o = FitOpts()
        o.batch_size = int(batch_size or 0)
        o.epochs = int(epochs)
        o.verbose = VERBOSE_SILENT if not verbose else int(verbose)
        o.validation_split = float(validation_split)
        keep = []
        if validation_data is not None:
            vx, vy = _to_tensor(validation_data[0]), _to_tensor(validation_data[1])
            keep += [vx, vy]
            o.validation_x, o.validation_y = vx.handle, vy.handle
        o.shuffle = _YES if shuffle else _NO
        if class_weight:
            n = max(int(k) for k in class_weight) + 1
            cw = (_D * n)(*[float(class_weight.get(i, 1.0)) for i in range(n)])
            keep.append(cw)
            o.class_weight, o.n_class_weight = cw, n
        if sample_weight is not None:
            sw = _to_tensor(sample_weight)
            keep.append(sw)
            o.sample_weight = sw.handle
        o.initial_epoch = int(initial_epoch)
        o.steps_per_epoch = int(steps_per_epoch or 0)
        o.validation_steps = int(validation_steps or 0)
        o.validation_batch_size = int(validation_batch_size or 0)
        o.validation_freq = int(validation_freq or 1)
        for i, cb in enumerate(callbacks or []):
            o.callbacks[i] = cb.handle
            cb.handle = None  # fit takes the callbacks (and frees them when it returns)
        hist = _P()
        st = _st()
        _c("tfc_model_fit_n")(self._m, _ptr_array([t.handle for t in xs]), len(xs),
                              _ptr_array([t.handle for t in ys]), len(ys), ctypes.byref(o), ctypes.byref(hist),
                              ctypes.byref(st))
        try:
            check(st)
            return _history(hist)
        finally:
            if hist:
                _c("tfc_history_free")(hist)

    def evaluate(self, x, y, batch_size=None, verbose=0, sample_weight=None, steps=None):
        xs, ys = _tensors(x), _tensors(y)
        o = EvalOpts()
        o.batch_size = int(batch_size or 0)
        o.verbose = VERBOSE_SILENT if not verbose else int(verbose)
        sw = None
        if sample_weight is not None:
            sw = _to_tensor(sample_weight)
            o.sample_weight = sw.handle
        o.steps = int(steps or 0)
        buf = (_D * 32)()
        st = _st()
        n = _c("tfc_model_evaluate_n")(self._m, _ptr_array([t.handle for t in xs]), len(xs),
                                       _ptr_array([t.handle for t in ys]), len(ys), ctypes.byref(o), buf, 32,
                                       ctypes.byref(st))
        check(st)
        return _results(n, buf)

    def predict(self, x, batch_size=None, verbose=0, steps=None, n_outputs=1):
        """model.predict: numpy outputs concatenated over batches (a list when n_outputs > 1). x may be a list
        of arrays for multi-input models."""
        o = EvalOpts()
        o.batch_size = int(batch_size or 0)
        o.verbose = VERBOSE_SILENT if not verbose else int(verbose)
        o.steps = int(steps or 0)
        st = _st()
        if isinstance(x, (list, tuple, dict)) or n_outputs > 1:
            xs = _tensors(x)
            outs = (_P * n_outputs)()
            _c("tfc_model_predict_n")(self._m, _ptr_array([t.handle for t in xs]), len(xs), ctypes.byref(o), outs,
                                      n_outputs, ctypes.byref(st))
            check(st)
            res = [Tensor(outs[i]).numpy() for i in range(n_outputs)]
            return res if n_outputs > 1 else res[0]
        xt = _to_tensor(x)
        h = _c("tfc_model_predict")(self._m, xt.handle, ctypes.byref(o), ctypes.byref(st))
        check(st)
        return Tensor(h).numpy()

    def to_json(self):
        """model.to_json(): {"class_name", "config", "keras_version", "backend"} (Keras 2 dialect)."""
        cls = "Sequential" if self.class_name == "Sequential" else "Functional"
        return json.dumps({"class_name": cls, "config": self.get_config(), "keras_version": "2.4.0",
                           "backend": "tensorflow"})

    def __repr__(self):
        return "<tfc.keras.Model %r>" % self.name


def _history(h):
    if not h:
        return {}
    buf = (_CP * 64)()
    n = _c("tfc_history_keys")(h, buf, 64)
    out = {}
    for i in range(min(n, 64)):
        key = buf[i]
        cnt = _I()
        p = _c("tfc_history_get")(h, key, ctypes.byref(cnt))
        out[key.decode()] = [float(p[j]) for j in range(cnt.value)] if p else []
    return out


def Sequential(layers=None, name=None):
    """tf.keras.Sequential(layers): takes the layers (the Python Layer objects stay usable)."""
    layers = list(layers or [])
    arr = (_P * (len(layers) + 1))(*([l._give() for l in layers] + [None]))
    h = _c("tfc_sequential_named")(_ctx(), arr, name.encode() if name else None)
    if not h:
        raise MemoryError("tfc_sequential")
    return Model(h)


def _graph_layers(outputs):
    """The Python Layer objects behind KerasTensors (walking inbound tensors), outputs first."""
    seen, out, stack = set(), [], list(outputs)
    while stack:
        k = stack.pop()
        if id(k.layer) in seen:
            continue
        seen.add(id(k.layer))
        out.append(k.layer)
        stack.extend(getattr(k.layer, "_inbound", []))
    return out


def Functional(inputs, outputs, name=None):
    """tf.keras.Model(inputs, outputs) over KerasTensors (the model takes every layer of the graph)."""
    ins = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    for layer in _graph_layers(outs + ins):
        layer._give()
    st = _st()
    h = _c("tfc_model_new")(_ctx(), _ptr_array([k._k for k in ins]), len(ins), _ptr_array([k._k for k in outs]),
                            len(outs), name.encode() if name else None, ctypes.byref(st))
    check(st)
    m = Model(h)
    m._keep.extend(ins + outs)
    return m


def model_from_config(config):
    """tf.keras.models.model_from_config: {"class_name": "Sequential"|"Functional"|"Model", "config": {...}}
    (Keras 2 or 3 dialect, or a JSON string); the model is built when the config gives an input shape."""
    js = config if isinstance(config, str) else _dumps(config)
    st = _st()
    h = _c("tfc_model_from_config")(_ctx(), js.encode(), ctypes.byref(st))
    check(st)
    return Model(h)


model_from_json = model_from_config


def load_model(filepath):
    """keras.saving.load_model: a .keras archive or a legacy .h5 model (detected from the contents)."""
    st = _st()
    h = _c("tfc_keras_load_model")(_ctx(), os.fsencode(filepath), ctypes.byref(st))
    check(st)
    return Model(h)


class TensorBoard:
    """tf.keras.callbacks.TensorBoard (tfc_callbacks_tensorboard_new). update_freq: "epoch", "batch" or an int;
    profile_batch: an int or a (start, stop) pair."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0):
        o = TensorBoardOpts()
        o.write_graph = _YES if write_graph else _NO
        self._dir = str(log_dir).encode()
        o.log_dir = self._dir
        o.histogram_freq = int(histogram_freq)
        o.write_images = bool(write_images)
        o.write_steps_per_second = bool(write_steps_per_second)
        if isinstance(update_freq, int):
            o.update_freq_steps = update_freq
        else:
            self._uf = str(update_freq).encode()
            o.update_freq = self._uf
        start, stop = (profile_batch, profile_batch) if isinstance(profile_batch, int) else profile_batch
        o.profile_batch_start, o.profile_batch_stop = int(start), int(stop)
        st = _st()
        self.handle = _c("tfc_callbacks_tensorboard_new")(ctypes.byref(o), ctypes.byref(st))
        check(st)

    def __del__(self):
        if getattr(self, "handle", None):
            _c("tfc_callback_free")(self.handle)
            self.handle = None


# ---- mixed precision (tf.keras.mixed_precision) -----------------------------------------------------------

class _PolicyStruct(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 32), ("compute_dtype", _I), ("variable_dtype", _I)]


class Policy:
    """tf.keras.mixed_precision.Policy(name): name, compute_dtype, variable_dtype (dtype names)."""

    def __init__(self, name):
        from . import dtypes
        p, st = _PolicyStruct(), _st()
        _c("tfc_policy_init")(ctypes.byref(p), name.encode(), ctypes.byref(st))
        check(st)
        self.name = p.name.decode()
        self.compute_dtype = dtypes.from_enum(p.compute_dtype).name
        self.variable_dtype = dtypes.from_enum(p.variable_dtype).name


def set_global_policy(name):
    """tf.keras.mixed_precision.set_global_policy (None: "float32")."""
    st = _st()
    _c("tfc_mixed_precision_set_global_policy")(name.encode() if name else None, ctypes.byref(st))
    check(st)


class _LossScaleOpts(ctypes.Structure):
    _fields_ = [("dynamic", _I), ("initial_scale", ctypes.c_double), ("dynamic_growth_steps", ctypes.c_int64)]


class LossScaleOptimizer(Optimizer):
    """tf.keras.mixed_precision.LossScaleOptimizer(inner, dynamic=True, initial_scale=None,
    dynamic_growth_steps=None): takes `inner` (which must not belong to a model)."""

    def __init__(self, inner, dynamic=True, initial_scale=None, dynamic_growth_steps=None):
        opts = _LossScaleOpts(_YES if dynamic else _NO, float(initial_scale or 0), int(dynamic_growth_steps or 0))
        h = _c("tfc_mixed_precision_loss_scale_optimizer_new")(inner._h.value, ctypes.byref(opts))
        inner._owned = False  # the wrapper frees it
        self._inner = inner
        super().__init__(h)

    @property
    def loss_scale(self):
        return float(_c("tfc_loss_scale_optimizer_loss_scale")(self._h))

    @property
    def dynamic_counter(self):
        c = int(_c("tfc_loss_scale_optimizer_dynamic_counter")(self._h))
        return None if c < 0 else c


# ---- preprocessing layers (include/tfc/keras/preprocessing.h) -------------------------------------------------

_SIGS.update({
    "tfc_layer_adapt": (_B, [_P, _P, _P, _I64, _I64, _PS]),
    "tfc_layer_adapt_dataset": (_B, [_P, _P, _P, _I64, _PS]),
    "tfc_lookup_get_vocabulary": (_P, [_P, _B, _PS]),
    "tfc_lookup_set_vocabulary": (_B, [_P, _P, _P, _PS]),
    "tfc_lookup_vocabulary_size": (_I64, [_P]),
    "tfc_dataset_map_layer": (_P, [_P, _P, _PS]),
})


def _adapt(self, data, batch_size=None, steps=None):
    """layer.adapt(data, batch_size=None, steps=None): data is an array/Tensor (batched here) or a tfc Dataset
    (each element a batch)."""
    st = _st()
    if hasattr(data, "_ref") and hasattr(data, "_h"):  # tfc.data.Dataset
        _c("tfc_layer_adapt_dataset")(self._h, _ctx(), data._h, int(steps or 0), ctypes.byref(st))
    else:
        t = _to_tensor(np.asarray(data) if isinstance(data, (list, tuple)) else data)
        _c("tfc_layer_adapt")(self._h, _ctx(), t.handle, int(batch_size or 0), int(steps or 0), ctypes.byref(st))
    check(st)


def _get_vocabulary(self, include_special_tokens=True):
    st = _st()
    h = _c("tfc_lookup_get_vocabulary")(self._h, bool(include_special_tokens), ctypes.byref(st))
    check(st)
    v = Tensor(h).numpy()
    return [x.decode("utf-8", "replace") if isinstance(x, bytes) else int(x) for x in v.tolist()]


def _set_vocabulary(self, vocabulary, idf_weights=None):
    v = np.asarray(vocabulary)
    vt = _to_tensor(v.astype(object) if v.dtype.kind in "US" else v.astype(np.int64))
    it = None if idf_weights is None else _to_tensor(np.asarray(idf_weights, np.float32))
    st = _st()
    _c("tfc_lookup_set_vocabulary")(self._h, vt.handle, it.handle if it is not None else None, ctypes.byref(st))
    check(st)


def _vocabulary_size(self):
    return int(_c("tfc_lookup_vocabulary_size")(self._h))


Layer.adapt = _adapt
Layer.get_vocabulary = _get_vocabulary
Layer.set_vocabulary = _set_vocabulary
Layer.vocabulary_size = _vocabulary_size


def map_with_layer(dataset, layer):
    """dataset.map(layer): the layer applied to each element's first component (training=False)."""
    from .data import Dataset
    st = _st()
    h = _c("tfc_dataset_map_layer")(dataset._ref(), layer._h, ctypes.byref(st))
    check(st)
    return Dataset(h)
