"""tf.function, tf.cond and tf.while_loop over tfc's C API (include/tfc/function.h, control_flow.h).

A Python function becomes a C callback (ctypes): tfc traces it with symbolic Tensors into a graph and runs the
graph on later calls with the same input signature, as tf.function does. Arguments must be Tensors (or values
convertible to them); Python values are not part of the signature.
"""
import ctypes

from . import _lib, errors
from ._lib import Shape, Status, check, lib
from .tensor import Tensor, convert_to_tensor

P = ctypes.c_void_p
_FN = ctypes.CFUNCTYPE(ctypes.c_int, P, ctypes.POINTER(P), ctypes.c_int, ctypes.POINTER(P), ctypes.c_int, P,
                       ctypes.POINTER(Status))


class TensorSpec(ctypes.Structure):
    """tfc_tensor_spec: dtype and shape (None dims / rank allowed)."""
    _fields_ = [("dtype", ctypes.c_int), ("shape", Shape)]


class _Opts(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("input_signature", ctypes.POINTER(TensorSpec)),
                ("n_input_signature", ctypes.c_int), ("input_names", ctypes.POINTER(ctypes.c_char_p)),
                ("reduce_retracing", ctypes.c_bool)]


class _WhileOpts(ctypes.Structure):
    _fields_ = [("maximum_iterations", ctypes.c_int64), ("has_maximum_iterations", ctypes.c_bool),
                ("shape_invariants", ctypes.POINTER(Shape)), ("parallel_iterations", ctypes.c_int),
                ("names", ctypes.POINTER(ctypes.c_char_p))]


def _shape(dims):
    s = Shape()
    if dims is None:
        s.rank = -1
        return s
    dims = list(dims)
    s.rank = len(dims)
    for i, d in enumerate(dims):
        s.dims[i] = -1 if d is None else int(d)
    return s


def _spec(spec):
    """A tf.TensorSpec (or anything with .shape and .dtype) as a C spec."""
    from .dtypes import as_dtype
    dt = as_dtype(getattr(spec.dtype, "name", spec.dtype))
    shape = spec.shape
    dims = None if getattr(shape, "rank", 0) is None else [None if d is None else int(d) for d in shape]
    return TensorSpec(dt.enum if hasattr(dt, "enum") else int(dt), _shape(dims))


def _callback(py_fn, keep, n_fixed_out=None):
    """A C callback calling py_fn(*inputs). Results stay referenced in `keep` until the C call returns."""

    def cb(ctx, ins, n_in, outs, max_out, user, st):
        try:
            args = []
            for i in range(n_in):
                lib.tfc_tensor_ref(ins[i])
                args.append(Tensor(ins[i]))
            res = py_fn(*args)
            single = not isinstance(res, (list, tuple))
            res = [res] if single else list(res)
            if len(res) > max_out:
                raise errors.InvalidArgumentError("function returned %d values, room for %d" % (len(res), max_out), 3)
            conv = [convert_to_tensor(r) for r in res]
            keep.append((single, conv))
            for i, t in enumerate(conv):
                outs[i] = t.handle
            return len(conv)
        except errors.OpError as e:
            st.contents.code = e.code if hasattr(e, "code") else 3
            st.contents.msg = str(e).encode("utf-8", "replace")[:255]
            return -1
        except Exception as e:  # a Python error in the traced function
            st.contents.code = 3
            st.contents.msg = ("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace")[:255]
            return -1

    return _FN(cb)


def _results(outs, n, single):
    res = [Tensor(_lib.owned(outs[i])) for i in range(n)]
    return res[0] if single and n == 1 else tuple(res)


class Function:
    """tf.function(fn, input_signature=None, reduce_retracing=False)."""

    def __init__(self, fn, input_signature=None, reduce_retracing=False, name=None):
        self._py = fn
        self._keep = []
        self._single = True
        self._cb = _callback(fn, self._keep)
        self._sig = None
        opts = _Opts(name=(name or getattr(fn, "__name__", "function")).encode(), reduce_retracing=reduce_retracing)
        if input_signature is not None:
            specs = [_spec(s) for s in input_signature]
            self._sig = (TensorSpec * max(len(specs), 1))(*specs)
            opts.input_signature = ctypes.cast(self._sig, ctypes.POINTER(TensorSpec))
            opts.n_input_signature = len(specs)
            names = [getattr(s, "name", None) for s in input_signature]
            self._names = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() if n else None for n in names])
            opts.input_names = ctypes.cast(self._names, ctypes.POINTER(ctypes.c_char_p))
        st = Status()
        self._f = lib.tfc_function_new(_lib.ctx(), ctypes.cast(self._cb, P), None, ctypes.byref(opts), ctypes.byref(st))
        check(st)

    def __del__(self):
        if getattr(self, "_f", None) and lib is not None:
            lib.tfc_function_free(self._f)
            self._f = None

    def __call__(self, *args):
        ts = [convert_to_tensor(a) for a in args]
        ins = (P * max(len(ts), 1))(*[t.handle for t in ts])
        outs = (P * _lib.MAX_IO)()
        st = Status()
        n = lib.tfc_function_call(self._f, ins, len(ts), outs, _lib.MAX_IO, ctypes.byref(st))
        keep, self._keep[:] = list(self._keep), []
        if keep:
            self._single = keep[-1][0]
        check(st)
        return _results(outs, n, self._single)

    def experimental_get_tracing_count(self):
        return lib.tfc_function_tracing_count(self._f)

    def concrete_num_nodes(self, *specs):
        """Nodes of the concrete function for these tf.TensorSpec-like specs (tracing it if needed)."""
        cs = (TensorSpec * max(len(specs), 1))(*[_spec(s) for s in specs])
        st = Status()
        cf = lib.tfc_function_get_concrete_function(self._f, cs, len(specs), ctypes.byref(st))
        self._keep[:] = []
        check(st)
        return lib.tfc_concrete_function_num_nodes(cf)

    def concrete_graph_def(self, *specs):
        """get_concrete_function(*specs).graph.as_graph_def().SerializeToString(): the traced graph's bytes."""
        cs = (TensorSpec * max(len(specs), 1))(*[_spec(s) for s in specs])
        st = Status()
        cf = lib.tfc_function_get_concrete_function(self._f, cs, len(specs), ctypes.byref(st))
        self._keep[:] = []
        check(st)
        data, size = P(), ctypes.c_size_t()
        lib.tfc_concrete_function_graph_def(_lib.ctx(), cf, ctypes.byref(data), ctypes.byref(size), ctypes.byref(st))
        check(st)
        try:
            return ctypes.string_at(data, size.value)
        finally:
            lib.tfc_free(data)


def function(fn=None, input_signature=None, reduce_retracing=False):
    """tf.function as a decorator or a call."""
    if fn is None:
        return lambda f: Function(f, input_signature, reduce_retracing)
    return Function(fn, input_signature, reduce_retracing)


def cond(pred, true_fn, false_fn):
    """tf.cond(pred, true_fn, false_fn): the branches take no arguments (they close over tensors)."""
    keep = []
    t_cb, f_cb = _callback(true_fn, keep), _callback(false_fn, keep)
    p = convert_to_tensor(pred)
    outs = (P * _lib.MAX_IO)()
    st = Status()
    n = lib.tfc_cond(_lib.ctx(), p.handle, ctypes.cast(t_cb, P), ctypes.cast(f_cb, P), None, None, 0, outs,
                     _lib.MAX_IO, ctypes.byref(st))
    check(st)
    return _results(outs, n, keep[-1][0] if keep else True)


def while_loop(cond, body, loop_vars, shape_invariants=None, maximum_iterations=None, parallel_iterations=10):
    """tf.while_loop(cond, body, loop_vars): loop_vars a list/tuple of tensors; returns the same structure."""
    keep = []
    c_cb, b_cb = _callback(cond, keep), _callback(body, keep)
    single = not isinstance(loop_vars, (list, tuple))
    vs = [convert_to_tensor(v) for v in ([loop_vars] if single else loop_vars)]
    ins = (P * len(vs))(*[v.handle for v in vs])
    outs = (P * len(vs))()
    o = _WhileOpts(parallel_iterations=parallel_iterations)
    if maximum_iterations is not None:
        o.maximum_iterations, o.has_maximum_iterations = int(maximum_iterations), True
    if shape_invariants is not None:
        inv = shape_invariants if not single else [shape_invariants]
        shapes = (Shape * len(vs))(*[_shape(None if getattr(s, "rank", 0) is None else list(s)) for s in inv])
        o.shape_invariants = ctypes.cast(shapes, ctypes.POINTER(Shape))
    st = Status()
    n = lib.tfc_while_loop(_lib.ctx(), ctypes.cast(c_cb, P), ctypes.cast(b_cb, P), None, ins, len(vs), outs,
                           ctypes.byref(o), ctypes.byref(st))
    check(st)
    res = [Tensor(_lib.owned(outs[i])) for i in range(n)]
    return res[0] if single else (type(loop_vars)(res) if isinstance(loop_vars, list) else tuple(res))
