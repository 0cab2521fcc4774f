"""Loading libtfc.so and declaring the C functions the binding uses (ctypes, no compiled extension)."""
import ctypes
import os

from . import errors

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))


def _find_library():
    env = os.environ.get("TFC_LIBRARY")
    if env:
        if not os.path.exists(env):
            raise OSError("TFC_LIBRARY=%s does not exist" % env)
        return env
    bundled = os.path.join(_HERE, "libtfc.so")  # an installed package (`pip install .`) ships it
    if os.path.exists(bundled):
        return bundled
    cand = os.path.join(_REPO, "build", "rel", "libtfc.so")
    if os.path.exists(cand):
        return cand
    raise OSError("libtfc.so not found: build it with `make build` (looked for %s and %s) or set TFC_LIBRARY"
                  % (bundled, cand))


class Status(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 256)]


class Shape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("dims", ctypes.c_int64 * 8)]


class AttrValue(ctypes.Union):
    _fields_ = [
        ("i", ctypes.c_int64),
        ("f", ctypes.c_double),
        ("b", ctypes.c_bool),
        ("type", ctypes.c_int),
        ("s", ctypes.c_char_p),
        ("ints", ctypes.POINTER(ctypes.c_int64)),
        ("floats", ctypes.POINTER(ctypes.c_double)),
        ("types", ctypes.POINTER(ctypes.c_int)),
        ("strs", ctypes.POINTER(ctypes.c_char_p)),
        ("tensor", ctypes.c_void_p),
        ("shapes", ctypes.POINTER(Shape)),
    ]


class Attr(ctypes.Structure):
    """tfc_attr (include/tfc/attr.h): {const char *name; tfc_attr_kind kind; int n; union v} = 24 bytes."""
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("n", ctypes.c_int), ("v", AttrValue)]


class OpDef(ctypes.Structure):
    """The leading fields of tfc_op_def (include/tfc/op.h): the spec strings."""
    _fields_ = [("name", ctypes.c_char_p), ("inputs", ctypes.c_char_p), ("outputs", ctypes.c_char_p),
                ("attrs", ctypes.c_char_p)]


# tfc_attr_kind
ATTR_INT, ATTR_FLOAT, ATTR_BOOL, ATTR_TYPE, ATTR_STRING, ATTR_SHAPE, ATTR_TENSOR = 1, 2, 3, 4, 5, 6, 7
ATTR_LIST_INT, ATTR_LIST_FLOAT, ATTR_LIST_TYPE, ATTR_LIST_STRING, ATTR_LIST_SHAPE = 8, 9, 10, 11, 12

assert ctypes.sizeof(Attr) == 24 and Attr.v.offset == 16 and Attr.n.offset == 12
assert ctypes.sizeof(Status) == 260

MAX_IO = 64  # TFC_MAX_IO: most flattened outputs of one op call

_P = ctypes.c_void_p
_PS = ctypes.POINTER(Status)
_I64P = ctypes.POINTER(ctypes.c_int64)

_SIGS = {
    "tfc_version": (ctypes.c_char_p, []),
    "tfc_code_name": (ctypes.c_char_p, [ctypes.c_int]),
    "tfc_ctx_new": (_P, [_P, _PS]),
    "tfc_ctx_set_seed": (None, [_P, ctypes.c_int64]),
    "tfc_tensor_from_data": (_P, [ctypes.c_int, _I64P, ctypes.c_int, _P, ctypes.c_size_t, _PS]),
    "tfc_tensor_from_strings": (_P, [ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(ctypes.c_size_t), _I64P,
                                     ctypes.c_int, _PS]),
    "tfc_tensor_ref": (_P, [_P]),
    "tfc_tensor_unref": (None, [_P]),
    "tfc_tensor_dtype": (ctypes.c_int, [_P]),
    "tfc_tensor_shape": (ctypes.POINTER(Shape), [_P]),
    "tfc_tensor_num_elements": (ctypes.c_int64, [_P]),
    "tfc_tensor_byte_size": (ctypes.c_size_t, [_P]),
    "tfc_tensor_data": (_P, [_P]),
    "tfc_tensor_string": (_P, [_P, ctypes.c_int64, ctypes.POINTER(ctypes.c_size_t)]),
    "tfc_tensor_device": (_P, [_P]),
    "tfc_list_physical_devices": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_int]),
    "tfc_list_logical_devices": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(_P), ctypes.c_int]),
    "tfc_device_find": (_P, [ctypes.c_char_p]),
    "tfc_device_name": (ctypes.c_char_p, [_P]),
    "tfc_device_logical_name": (ctypes.c_char_p, [_P]),
    "tfc_device_physical_name": (ctypes.c_char_p, [_P]),
    "tfc_device_type": (ctypes.c_char_p, [_P]),
    "tfc_device_supports_op": (ctypes.c_bool, [_P, ctypes.c_char_p, ctypes.c_int]),
    "tfc_op_lookup": (_P, [ctypes.c_char_p]),
    "tfc_op_get_def": (ctypes.POINTER(OpDef), [_P]),
    "tfc_op_count": (ctypes.c_int, []),
    "tfc_op_at": (_P, [ctypes.c_int]),
    "tfc_op_has_kernel": (ctypes.c_bool, [_P, ctypes.c_char_p]),
    "tfc_op_has_gradient": (ctypes.c_bool, [_P]),
    "tfc_execute_op": (ctypes.c_int, [_P, _P, ctypes.POINTER(_P), ctypes.c_int, ctypes.POINTER(Attr), ctypes.c_int,
                                      ctypes.POINTER(_P), ctypes.c_int, _PS]),
    "tfc_tape_new": (_P, [_P, ctypes.c_bool, ctypes.c_bool, _PS]),
    "tfc_tape_free": (None, [_P]),
    "tfc_tape_watch": (None, [_P, _P]),
    "tfc_tape_watch_variable": (None, [_P, _P]),
    "tfc_tape_stop_recording": (None, [_P]),
    "tfc_tape_start_recording": (None, [_P]),
    "tfc_tape_gradient_n": (ctypes.c_bool, [_P, ctypes.POINTER(_P), ctypes.c_int, ctypes.POINTER(_P),
                                            ctypes.POINTER(_P), ctypes.c_int, ctypes.POINTER(_P), ctypes.c_int,
                                            ctypes.c_int, ctypes.POINTER(_P), _PS]),
    "tfc_variable_new": (_P, [_P, _P, ctypes.c_bool, ctypes.c_char_p, _PS]),
    "tfc_variable_free": (None, [_P]),
    "tfc_variable_handle": (_P, [_P]),
    "tfc_variable_name": (ctypes.c_char_p, [_P]),
    "tfc_variable_trainable": (ctypes.c_bool, [_P]),
    "tfc_variable_dtype": (ctypes.c_int, [_P]),
    "tfc_variable_shape": (ctypes.POINTER(Shape), [_P]),
    "tfc_variable_read": (_P, [_P, _P, _PS]),
    "tfc_variable_value": (_P, [_P]),
    "tfc_variable_assign": (ctypes.c_bool, [_P, _P, _P, _PS]),
    "tfc_variable_assign_add": (ctypes.c_bool, [_P, _P, _P, _PS]),
    "tfc_variable_assign_sub": (ctypes.c_bool, [_P, _P, _P, _PS]),
    "tfc_function_new": (_P, [_P, _P, _P, _P, _PS]),
    "tfc_function_free": (None, [_P]),
    "tfc_function_call": (ctypes.c_int, [_P, ctypes.POINTER(_P), ctypes.c_int, ctypes.POINTER(_P), ctypes.c_int, _PS]),
    "tfc_function_tracing_count": (ctypes.c_int, [_P]),
    "tfc_function_get_concrete_function": (_P, [_P, _P, ctypes.c_int, _PS]),
    "tfc_concrete_function_num_nodes": (ctypes.c_int, [_P]),
    "tfc_concrete_function_graph_def": (ctypes.c_bool, [_P, _P, ctypes.POINTER(ctypes.c_void_p),
                                                        ctypes.POINTER(ctypes.c_size_t), _PS]),
    "tfc_free": (None, [_P]),
    "tfc_concrete_function_num_captures": (ctypes.c_int, [_P]),
    "tfc_inside_function": (ctypes.c_bool, [_P]),
    "tfc_scope_depth": (ctypes.c_int, [_P]),
    "tfc_cond": (ctypes.c_int, [_P, _P, _P, _P, _P, ctypes.POINTER(_P), ctypes.c_int, ctypes.POINTER(_P), ctypes.c_int,
                               _PS]),
    "tfc_while_loop": (ctypes.c_int, [_P, _P, _P, _P, ctypes.POINTER(_P), ctypes.c_int, ctypes.POINTER(_P), _P, _PS]),
}

path = _find_library()
lib = ctypes.CDLL(path)
for _name, (_res, _args) in _SIGS.items():
    _fn = getattr(lib, _name)
    _fn.restype = _res
    _fn.argtypes = _args

_ctx = None


def ctx():
    """The process-wide default eager context (tfc_ctx_new(NULL)), created on first use."""
    global _ctx
    if _ctx is None:
        st = Status()
        c = lib.tfc_ctx_new(None, ctypes.byref(st))
        if not c:
            raise_status(st)
        _ctx = c
    return _ctx


def raise_status(st):
    """Raises the tfc.errors class of a failed status."""
    msg = st.msg.decode("utf-8", "replace")
    raise errors.error_for_code(st.code, msg)


def check(st):
    if st.code != 0:
        raise_status(st)


def owned(h):
    """h, a tensor an op call returned: inside a scope (a traced function, a cond branch run from C) it belongs
    to the scope, so the caller (a Tensor object) takes its own reference; otherwise it is already the caller's."""
    if h and lib.tfc_scope_depth(ctx()) > 0:
        lib.tfc_tensor_ref(h)
    return h
