"""Exceptions raised for adia's error codes (adia_status in adia.h).

Every exception raised by the C library is an ``adia.Error`` (a
``RuntimeError``) carrying adia's message (``adia_last_error()``) and the
code as ``.status``; the kinds that have a natural Python counterpart also
derive from it, so ``except ValueError`` works as usual.
"""

from . import _adia

# adia_status values (include/adia.h)
OK = 0
ERR_INVALID_ARG = -1
ERR_NO_MEMORY = -2
ERR_OVERFLOW = -3
ERR_IO = -4
ERR_PARSE = -5
ERR_UNSUPPORTED = -6
ERR_DIMENSION = -7
ERR_INVALID_HANDLE = -8
ERR_INVALID_MATRIX = -9
ERR_NO_DEVICE = -10
ERR_CUDA = -11
ERR_CUSPARSE = -12
ERR_NVRTC = -13
ERR_INTERNAL = -14


class Error(RuntimeError):
    """An error reported by the adia C library (``.status``: its adia_status)."""

    status = None


class InvalidArgumentError(Error, ValueError):
    """ADIA_ERR_INVALID_ARG, ADIA_ERR_DIMENSION, ADIA_ERR_INVALID_MATRIX."""


class ParseError(Error, ValueError):
    """ADIA_ERR_PARSE: a malformed input file."""


class OutOfMemoryError(Error, MemoryError):
    """ADIA_ERR_NO_MEMORY: an allocation failed or the memory budget is exceeded."""


class AdiaIOError(Error, OSError):
    """ADIA_ERR_IO: a file could not be opened, read or written."""


class UnsupportedError(Error):
    """ADIA_ERR_UNSUPPORTED: a feature or format not available."""


class NoDeviceError(Error):
    """ADIA_ERR_NO_DEVICE: no CUDA device, or adia was built without CUDA."""


class OverflowError_(Error, OverflowError):
    """ADIA_ERR_OVERFLOW: a size computation would overflow."""


OverflowError_.__name__ = OverflowError_.__qualname__ = "SizeOverflowError"
SizeOverflowError = OverflowError_
del OverflowError_

_CLASSES = {
    ERR_INVALID_ARG: InvalidArgumentError,
    ERR_DIMENSION: InvalidArgumentError,
    ERR_INVALID_MATRIX: InvalidArgumentError,
    ERR_PARSE: ParseError,
    ERR_NO_MEMORY: OutOfMemoryError,
    ERR_IO: AdiaIOError,
    ERR_UNSUPPORTED: UnsupportedError,
    ERR_NO_DEVICE: NoDeviceError,
    ERR_OVERFLOW: SizeOverflowError,
}

_adia._register_errors(Error, _CLASSES)
