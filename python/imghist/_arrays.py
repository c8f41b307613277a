"""Array arguments of the imghist functions: what the compiled module reads, where the array lives, and how
to make results like it (the rules are in the package docstring, imghist/__init__.py)."""
import sys

import numpy as np

from ._errors import InvalidArgumentError, NoDeviceError, UnsupportedError
from . import _imghist as core
from ._imghist import DeviceArray, ExternalArray

HOST, CUPY, TORCH, TORCH_CPU, CAI, DLPACK = range(6)
# DLPack device types readable by the GPU (CUDA, CUDA managed) and by the CPU (CPU, CUDA pinned host).
_DL_DEVICE = (2, 13)
_DL_HOST = (1, 3)


def cuda_available():
    return core.cuda_device_count() > 0


class Input:
    """An array argument: what the compiled module reads (a NumPy array or an ExternalArray), where it lives,
    and how to make results like it."""

    __slots__ = ("arg", "kind", "device_id", "stream", "shape", "like")

    def __init__(self, arg, kind, device_id, stream, shape, like):
        self.arg, self.kind, self.device_id, self.stream, self.shape, self.like = \
            arg, kind, device_id, stream, shape, like

    @property
    def on_device(self):
        return self.kind in (CUPY, TORCH, CAI, DLPACK) and (
            not isinstance(self.arg, ExternalArray) or self.arg.device)


def _torch_typestr(torch, dtype):
    table = {torch.uint8: "|u1", torch.int32: "<i4", torch.float32: "<f4"}
    if hasattr(torch, "uint16"):
        table[torch.uint16] = "<u2"
    try:
        return table[dtype]
    except KeyError:
        raise UnsupportedError(f"unsupported dtype {dtype}; supported: uint8, uint16, int32, float32") from None


def _legacy_to_zero(stream):
    # __cuda_array_interface__ / DLPack name the legacy default stream 1; the library calls it 0 (nullptr).
    return 0 if stream in (None, 1) else int(stream)


def as_input(x, role):
    """Classifies an array argument (see the package docstring)."""
    if isinstance(x, np.ndarray):
        return Input(x, HOST, -1, 0, x.shape, x)
    mod = type(x).__module__.partition(".")[0]
    if mod == "cupy":
        cp = sys.modules["cupy"]
        if isinstance(x, cp.ndarray):
            dev = x.device.id
            with x.device:
                stream = cp.cuda.get_current_stream().ptr
            ext = ExternalArray(x.data.ptr, x.shape, x.strides, x.dtype.str, True, dev, x)
            return Input(ext, CUPY, dev, _legacy_to_zero(stream), x.shape, x)
    if mod == "torch":
        torch = sys.modules["torch"]
        if isinstance(x, torch.Tensor):
            if x.device.type == "cpu":
                return Input(x.detach().numpy(), TORCH_CPU, -1, 0, tuple(x.shape), x)
            if x.device.type == "cuda":
                typestr = _torch_typestr(torch, x.dtype)
                es = x.element_size()
                ext = ExternalArray(x.data_ptr(), tuple(x.shape), tuple(s * es for s in x.stride()), typestr, True,
                                    x.device.index, x)
                stream = torch.cuda.current_stream(x.device).cuda_stream
                return Input(ext, TORCH, x.device.index, _legacy_to_zero(stream), tuple(x.shape), x)
            raise UnsupportedError(f"{role}: torch tensors on {x.device.type} are not supported (cpu, cuda are)")
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        if cai.get("mask") is not None:
            raise UnsupportedError(f"{role}: masked __cuda_array_interface__ arrays are not supported")
        ptr = cai["data"][0]
        shape = tuple(cai["shape"])
        ext = ExternalArray(ptr, shape, cai.get("strides"), cai["typestr"], True, -1, x)
        return Input(ext, CAI, -1, _legacy_to_zero(cai.get("stream")), shape, x)
    if hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        dev_type, dev_id = x.__dlpack_device__()
        if int(dev_type) in _DL_DEVICE:
            ext = ExternalArray.from_dlpack(x.__dlpack__(stream=1))
        elif int(dev_type) in _DL_HOST:
            ext = ExternalArray.from_dlpack(x.__dlpack__())
        else:
            raise UnsupportedError(f"{role}: DLPack device type {int(dev_type)} is not supported")
        return Input(ext, DLPACK, ext.device_id, 0, ext.shape, x)
    arr = np.asarray(x)
    return Input(arr, HOST, -1, 0, arr.shape, arr)


def check_backend(src, backend):
    """Device arrays run on CUDA: refuses backend='cpu', and a device array without a usable device (before
    any output is allocated)."""
    if not src.on_device:
        return
    if backend == "cpu":
        raise InvalidArgumentError("backend='cpu' cannot read a device array; use 'auto' or 'cuda'")
    if not cuda_available():
        raise NoDeviceError("a device array was given but no CUDA device is available"
                            + ("" if core.built_with_cuda() else " (this build of imghist has no CUDA backend)"))


_NP_TYPESTR = {"uint8": "|u1", "uint16": "<u2", "int32": "<i4", "float32": "<f4", "int64": "<i8"}


def empty_like_input(src, shape, dtype):
    """A new result array like `src` (its framework, device and stream). Returns (result, argument for the
    compiled module)."""
    kind = src.kind
    if not src.on_device:
        out = np.empty(shape, dtype)
        return out, out
    if kind == CUPY:
        cp = sys.modules["cupy"]
        with cp.cuda.Device(src.device_id):
            out = cp.empty(shape, dtype)
        return out, ExternalArray(out.data.ptr, shape, None, out.dtype.str, True, src.device_id, out)
    if kind == TORCH:
        torch = sys.modules["torch"]
        out = torch.empty(shape, dtype=getattr(torch, dtype), device=src.like.device)
        return out, ExternalArray(out.data_ptr(), shape, None, _NP_TYPESTR[dtype], True, src.device_id, out)
    out = DeviceArray.counts(shape) if dtype == "int64" else DeviceArray(shape, _NP_TYPESTR[dtype])
    out._set_stream(src.stream)
    return out, ExternalArray(out.ptr, shape, None, out.typestr, True, -1, out)


def result(src, out):
    """What the caller gets back for a host result computed from `src`."""
    if src.kind == TORCH_CPU and isinstance(out, np.ndarray):
        return sys.modules["torch"].from_numpy(out)
    return out


def dtype_name(src):
    arg = src.arg
    if isinstance(arg, np.ndarray):
        return arg.dtype.name
    return {"|u1": "uint8", "<u2": "uint16", "<i4": "int32", "<f4": "float32"}[arg.typestr]


def output(src, dst, role):
    """The destination of a filter: `dst` when given (same location as src), else a new array like src."""
    if dst is None:
        return empty_like_input(src, tuple(src.shape), dtype_name(src))
    d = as_input(dst, role)
    if d.on_device != src.on_device:
        raise InvalidArgumentError(f"{role}: src and dst must both be host arrays or both device arrays")
    if d.arg is not dst and not isinstance(d.arg, ExternalArray) and d.kind != TORCH_CPU:
        raise InvalidArgumentError(f"{role}: dst must be an array that can be written in place")
    return dst, d.arg


def is_empty(shape):
    return len(shape) >= 2 and (shape[0] == 0 or shape[1] == 0)
