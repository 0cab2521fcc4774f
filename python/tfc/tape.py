"""tfc.GradientTape (tf.GradientTape)."""
import ctypes

from . import _lib
from ._lib import Status, check, lib
from .tensor import Tensor
from .variables import Variable


class UnconnectedGradients:
    NONE = "none"
    ZERO = "zero"


def _flatten(x, out):
    if isinstance(x, (list, tuple)):
        for e in x:
            _flatten(e, out)
    elif isinstance(x, dict):
        for k in sorted(x):
            _flatten(x[k], out)
    else:
        out.append(x)
    return out


def _pack(structure, flat, pos=None):
    pos = pos if pos is not None else [0]
    if isinstance(structure, (list, tuple)):
        items = [_pack(e, flat, pos) for e in structure]
        return type(structure)(items) if isinstance(structure, list) else tuple(items)
    if isinstance(structure, dict):
        return {k: _pack(structure[k], flat, pos) for k in sorted(structure)}
    v = flat[pos[0]]
    pos[0] += 1
    return v


class GradientTape:
    """tf.GradientTape. Records ops on watched tensors (and, with watch_accessed_variables, on trainable
    variables read inside the block); gradient() runs the recorded ops' gradient functions backwards. A
    non-persistent tape answers one gradient() call. Tapes nest: an outer tape records the gradient
    computation of an inner one (higher-order gradients)."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed = bool(watch_accessed_variables)
        self._t = None
        self._used = False

    def _ensure(self):
        if self._t is None:
            st = Status()
            h = lib.tfc_tape_new(_lib.ctx(), self._persistent, self._watch_accessed, ctypes.byref(st))
            check(st)
            self._t = ctypes.c_void_p(h)

    def __enter__(self):
        if self._t is not None:
            lib.tfc_tape_start_recording(self._t)
        self._ensure()
        return self

    def __exit__(self, *exc):
        if self._t is not None:
            lib.tfc_tape_stop_recording(self._t)
        return False

    def __del__(self):
        t = getattr(self, "_t", None)
        if t and lib is not None and getattr(lib, "tfc_tape_free", None) is not None:
            lib.tfc_tape_free(t)
            self._t = None

    def watch(self, tensor):
        """Watches a Tensor, a Variable, or a (nested) list of them. Non-float tensors are ignored."""
        self._ensure()
        for x in _flatten(tensor, []):
            if isinstance(x, Variable):
                lib.tfc_tape_watch_variable(self._t, x._v)
            elif isinstance(x, Tensor):
                lib.tfc_tape_watch(self._t, x._h)
            else:
                raise TypeError("GradientTape.watch: expected a Tensor or Variable, got %s" % type(x).__name__)

    class _Paused:
        def __init__(self, tape):
            self.tape = tape

        def __enter__(self):
            lib.tfc_tape_stop_recording(self.tape._t)

        def __exit__(self, *exc):
            lib.tfc_tape_start_recording(self.tape._t)
            return False

    def stop_recording(self):
        """Context manager: ops inside are not recorded on this tape."""
        self._ensure()
        return GradientTape._Paused(self)

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of target(s))/d(sources). sources: a Tensor, Variable, or nested list/tuple/dict of them;
        the result has the same structure. Unconnected or integer sources give None (or zeros for float
        sources with unconnected_gradients='zero'). RuntimeError when a non-persistent tape is reused."""
        if self._t is None:
            raise RuntimeError("GradientTape.gradient called on a tape that never recorded")
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of gradients "
                               "(or jacobians)")
        uc = getattr(unconnected_gradients, "value", unconnected_gradients)
        if uc not in ("none", "zero"):
            raise ValueError("Unknown value for unconnected_gradients: %r" % (unconnected_gradients,))
        targets = [t.read_value() if isinstance(t, Variable) else t for t in _flatten(target, [])]
        for t in targets:
            if not isinstance(t, Tensor):
                raise TypeError("GradientTape.gradient: target must be a Tensor, got %s" % type(t).__name__)
        ogs = None
        if output_gradients is not None:
            from .tensor import convert_to_tensor
            og_flat = _flatten(output_gradients, [])
            if len(og_flat) != len(targets):
                raise ValueError("output_gradients must have one entry per target")
            ogs = [None if g is None else convert_to_tensor(g, dtype=t.dtype) for g, t in zip(og_flat, targets)]
        flat_src = _flatten(sources, [])
        ts = [s for s in flat_src if isinstance(s, Tensor)]
        vs = [s for s in flat_src if isinstance(s, Variable)]
        if len(ts) + len(vs) != len(flat_src):
            bad = next(s for s in flat_src if not isinstance(s, (Tensor, Variable)))
            raise TypeError("GradientTape.gradient: sources must be Tensors or Variables, got %s" %
                            type(bad).__name__)
        P = ctypes.c_void_p
        c_targets = (P * max(len(targets), 1))(*[t.handle for t in targets])
        c_og = (P * max(len(targets), 1))(*[g.handle if g is not None else None for g in ogs]) if ogs else None
        c_ts = (P * max(len(ts), 1))(*[t.handle for t in ts])
        c_vs = (P * max(len(vs), 1))(*[v._v.value for v in vs])
        n = len(ts) + len(vs)
        c_out = (P * max(n, 1))()
        st = Status()
        self._used = True
        lib.tfc_tape_gradient_n(self._t, c_targets, len(targets), c_og, c_ts, len(ts), c_vs, len(vs),
                                1 if uc == "zero" else 0, c_out, ctypes.byref(st))
        check(st)
        res_t = [Tensor(_lib.owned(c_out[i])) if c_out[i] else None for i in range(len(ts))]
        res_v = [Tensor(_lib.owned(c_out[len(ts) + i])) if c_out[len(ts) + i] else None for i in range(len(vs))]
        it_t, it_v = iter(res_t), iter(res_v)
        flat = [next(it_t) if isinstance(s, Tensor) else next(it_v) for s in flat_src]
        if isinstance(sources, (list, tuple, dict)):
            return _pack(sources, flat)
        return flat[0]
