"""Errors raised by tfc ops, named and numbered like tf.errors (error_codes.proto)."""


class OpError(Exception):
    """An op failed. `code` is TensorFlow's error code number, `message` the text from tfc."""
    code = 2

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return self.message


def _make(name, code):
    cls = type(name, (OpError,), {"code": code, "__doc__": "tf.errors.%s (code %d)." % (name, code)})
    globals()[name] = cls
    return cls


_BY_CODE = {
    code: _make(name, code)
    for name, code in [
        ("CancelledError", 1), ("UnknownError", 2), ("InvalidArgumentError", 3), ("DeadlineExceededError", 4),
        ("NotFoundError", 5), ("AlreadyExistsError", 6), ("PermissionDeniedError", 7),
        ("ResourceExhaustedError", 8), ("FailedPreconditionError", 9), ("AbortedError", 10),
        ("OutOfRangeError", 11), ("UnimplementedError", 12), ("InternalError", 13), ("UnavailableError", 14),
        ("DataLossError", 15), ("UnauthenticatedError", 16),
    ]
}

# Names as tf.errors spells the codes.
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 0, 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = 10, 11, 12, 13, 14, 15, 16


def error_for_code(code, message):
    cls = _BY_CODE.get(code, OpError)
    return cls(message, code)


__all__ = ["OpError", "error_for_code"] + [c.__name__ for c in _BY_CODE.values()]
