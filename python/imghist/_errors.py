"""Exceptions raised by imghist: one class per library error code, all derived from imghist.Error.

Each class also derives from the built-in exception a Python user would expect for that failure, so
``except ValueError`` catches a bad argument whether it came from imghist or from NumPy.
"""


class Error(Exception):
    """Base class of every exception imghist raises; the message is the library's."""


class InvalidArgumentError(Error, ValueError):
    """A parameter is out of its domain: a shape, a range, a bin count, a mask of the wrong size."""


class UnsupportedError(Error, TypeError):
    """A valid request this operation cannot serve: a dtype, a channel count, an array type."""


class OutOfMemoryError(Error, MemoryError):
    """A host or device allocation failed."""


class NoDeviceError(Error, RuntimeError):
    """The CUDA backend was requested (or a device array given) but no usable CUDA device exists."""


class CudaError(Error, RuntimeError):
    """A CUDA runtime call or kernel failed."""


class CountOverflowError(Error, OverflowError):
    """A 32-bit counter would exceed 2**32 - 1."""


class IoError(Error, OSError):
    """Reading or writing a file failed."""
