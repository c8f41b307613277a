"""imghist.batch: the cv2-shaped filters of imghist over many images in ONE library call (a few GPU launches
for the whole batch on device arrays; the images spread over the CPU threads on host arrays). Image i of
every result equals what the single-image function of imghist gives for image i, bit for bit.

    equalizeHist(images[, dst])                                  dst
    equalizeHistColor(images, mode='luma'[, dst])                dst
    threshold(images, thresh, maxval, type[, dst])               (thresholds, dst)
    createCLAHE(clipLimit=40.0, tileGridSize=(8, 8)).apply(images[, dst])   dst
    stretchContrast(images, lowPercent=2, highPercent=1[, dst], mode='luma')  dst
    matchHistograms(images, reference[, dst])                    dst
    thresholdMultiOtsu(images, classes=3[, dst])                 (thresholds, labels)

A batch is either
  - a list (or tuple) of images of any sizes (each as the single functions take it: NumPy, CuPy, torch,
    __cuda_array_interface__ / DLPack; one dtype and channel count, all on the host or all on one device);
    results are lists; or
  - ONE array whose first axis counts the images: (N, H, W) is N gray images, (N, H, W, C) N images of C
    channels (any strides: a slice, every k-th frame, a ROI of every frame); results are arrays of that
    shape.
The rule is the namespace's, never the shape's: in imghist.batch the first axis of an array is always the
batch (a 3-D array is N gray images), in imghist itself a 3-D array is always one (H, W, C) image.

Thresholds: threshold() returns one threshold per image — a float64 NumPy array (N,) holding what
cv2.threshold returns for each; for THRESH_OTSU / THRESH_TRIANGLE on device arrays the levels are computed on
the device and returned there, as an int32 device array (N,) of the input's kind (CuPy, torch, else an
imghist.DeviceArray), and the call waits for nothing. thresholdMultiOtsu returns an int64 NumPy array
(N, classes - 1) and waits for it.

Empty images (a side of 0) come back empty, their threshold the given value (0 for Otsu / Triangle), as cv2's
calls return at once for them; automatic thresholds of device batches need every image non-empty (or none).
Streams, backends and errors as for imghist's functions (help(imghist)); a message about one image names it
("batch image 7: ...", or "images 7" for a list's element).
"""
import numpy as _np

from . import _imghist as _core
from . import CLAHE as _CLAHE, THRESH_OTSU as _OTSU, THRESH_TRIANGLE as _TRIANGLE
from ._arrays import (as_input as _input, check_backend as _check_backend, empty_like_input as _empty,
                      output as _output, result as _result)
from ._errors import InvalidArgumentError as _InvalidArgumentError

__all__ = ["equalizeHist", "equalizeHistColor", "threshold", "createCLAHE", "CLAHE", "stretchContrast",
           "matchHistograms", "thresholdMultiOtsu"]


class _Batch:
    """A batch argument: its images (a list's) or its one array, where they live, and their outputs."""

    def __init__(self, images, function, backend):
        self.function = function
        self.is_list = isinstance(images, (list, tuple))
        if self.is_list:
            self.items = [_input(x, f"{function}: images {i}") for i, x in enumerate(images)]
            for i, it in enumerate(self.items):
                if len(it.shape) not in (2, 3):
                    raise _InvalidArgumentError(f"{function}: images {i}: expected a 2-D (H, W) or 3-D (H, W, C) "
                                                f"array, got {len(it.shape)} dimensions")
            first = self.items[0] if self.items else None
            if any(it.on_device != first.on_device or it.device_id != first.device_id for it in self.items):
                raise _InvalidArgumentError(f"{function}: a batch's images must all be host arrays or all be on one "
                                            "device")
            self.empty = [_is_empty_image(it.shape) for it in self.items]
        else:
            first = _input(images, f"{function}: images")
            if len(first.shape) not in (3, 4):
                raise _InvalidArgumentError(
                    f"{function}: expected a list of images or an (N, H, W) / (N, H, W, C) array, got "
                    f"{len(first.shape)} dimensions (one image: imghist.{function.split('.', 1)[1]})")
            self.items = [first]
            self.empty = [_is_empty_image(first.shape[1:])] * int(first.shape[0])
        self.first = first
        if first is not None:
            _check_backend(first, backend)

    @property
    def on_device(self):
        return self.first is not None and self.first.on_device

    @property
    def device_id(self):
        return self.first.device_id if self.first is not None else -1

    @property
    def stream(self):
        return self.first.stream if self.first is not None else 0

    def __len__(self):
        return len(self.empty)

    def outputs(self, dst):
        """(results, argument of the library call over the non-empty images, the batch's own argument)."""
        if not self.is_list:
            out, out_arg = _output(self.first, dst, f"{self.function}: dst")
            return out, out_arg, self.first.arg
        if dst is not None and (not isinstance(dst, (list, tuple)) or len(dst) != len(self.items)):
            raise _InvalidArgumentError(f"{self.function}: dst must be a list of {len(self.items)} arrays")
        pairs = [_output(it, None if dst is None else dst[i], f"{self.function}: dst {i}")
                 for i, it in enumerate(self.items)]
        keep = [i for i, e in enumerate(self.empty) if not e]
        return ([p[0] for p in pairs], [pairs[i][1] for i in keep], [self.items[i].arg for i in keep])

    def nothing_to_do(self):
        return all(self.empty)

    def results(self, out):
        if not self.is_list:
            return _result(self.first, out)
        return [_result(it, o) for it, o in zip(self.items, out)]


def _is_empty_image(shape):
    return len(shape) >= 2 and (shape[0] == 0 or shape[1] == 0)


def _run(function, images, dst, backend, call):
    """The common shape of a filter: `call(src_arg, dst_arg, device, stream)` over the non-empty images."""
    b = _Batch(images, function, backend)
    out, out_arg, src_arg = b.outputs(dst)
    if not b.nothing_to_do():
        call(src_arg, out_arg, b.device_id, b.stream)
    return b.results(out)


def equalizeHist(images, dst=None, *, backend="auto"):
    """imghist.equalizeHist (cv2.equalizeHist) of every image: uint8, 1 channel."""
    return _run("batch.equalizeHist", images, dst, backend,
                lambda s, d, dev, st: _core.equalize_batch(s, d, backend, dev, st))


def equalizeHistColor(images, mode="luma", dst=None, *, backend="auto"):
    """imghist.equalizeHistColor of every image: uint8, 3 (BGR) or 4 (BGRA) channels."""
    return _run("batch.equalizeHistColor", images, dst, backend,
                lambda s, d, dev, st: _core.equalize_color_batch(s, d, mode, backend, dev, st))


def threshold(images, thresh, maxval, type, dst=None, *, backend="auto"):
    """imghist.threshold (cv2.threshold) of every image with the same parameters: returns (thresholds, dst)
    (thresholds as the module's docstring says)."""
    function = "batch.threshold"
    b = _Batch(images, function, backend)
    out, out_arg, src_arg = b.outputs(dst)
    automatic = bool(int(type) & (_OTSU | _TRIANGLE))
    n = len(b)
    if b.on_device and automatic:
        if any(b.empty) and not b.nothing_to_do():
            raise _InvalidArgumentError(f"{function}: batch image {b.empty.index(True)} is empty; automatic "
                                        "thresholds of a device batch need every image non-empty")
        levels, levels_arg = _empty(b.first, (n,), "int32")
        if b.nothing_to_do():
            if n:
                _zero(levels)
        else:
            _core.threshold_batch(src_arg, out_arg, float(thresh), float(maxval), int(type), levels_arg.ptr, backend,
                                  b.device_id, b.stream)
        return levels, b.results(out)
    values = _np.full(n, 0.0 if automatic else float(thresh))
    if not b.nothing_to_do():
        got = _core.threshold_batch(src_arg, out_arg, float(thresh), float(maxval), int(type), 0, backend,
                                    b.device_id, b.stream)
        values[[i for i, e in enumerate(b.empty) if not e]] = got
    return values, b.results(out)


def _zero(levels):
    if hasattr(levels, "fill_"):
        levels.fill_(0)
    elif hasattr(levels, "fill"):
        levels.fill(0)
    else:
        levels._fill_zero()


class CLAHE(_CLAHE):
    """imghist.CLAHE (cv2.CLAHE) whose apply() takes a batch: uint8 or uint16, 1 channel."""

    def apply(self, images, dst=None):
        clip, (tx, ty), backend = self._clip, self._tiles, self.backend
        return _run("batch.CLAHE.apply", images, dst, backend,
                    lambda s, d, dev, st: _core.clahe_batch(s, d, clip, tx, ty, backend, dev, st))


def createCLAHE(clipLimit=40.0, tileGridSize=(8, 8), *, backend="auto"):
    """A CLAHE of this namespace (apply() takes a batch); arguments as imghist.createCLAHE's."""
    return CLAHE(clipLimit, tileGridSize, backend=backend)


def stretchContrast(images, lowPercent=2.0, highPercent=1.0, dst=None, *, mode="luma", backend="auto"):
    """imghist.stretchContrast of every image, each with its own percentiles: uint8 or uint16, 1-4 channels."""
    return _run("batch.stretchContrast", images, dst, backend,
                lambda s, d, dev, st: _core.stretch_batch(s, d, float(lowPercent), float(highPercent), mode, backend,
                                                          dev, st))


def matchHistograms(images, reference, dst=None, *, backend="auto"):
    """imghist.matchHistograms of every image to one `reference` (its histogram is taken once): uint8 or uint16;
    the reference has the images' dtype and channel count, any size, and lives where they do."""
    function = "batch.matchHistograms"
    r = _input(reference, f"{function}: reference")
    b = _Batch(images, function, backend)
    if b.first is not None and r.on_device != b.on_device:
        raise _InvalidArgumentError(f"{function}: the images and the reference must all be host arrays or all "
                                    "device arrays")
    out, out_arg, src_arg = b.outputs(dst)
    if not b.nothing_to_do():
        _core.match_batch(src_arg, r.arg, out_arg, backend, b.device_id, b.stream)
    return b.results(out)


def thresholdMultiOtsu(images, classes=3, dst=None, *, backend="auto"):
    """imghist.thresholdMultiOtsu of every image: returns (thresholds, labels), thresholds an int64 NumPy array
    (N, classes - 1) whose row i is image i's (as thresholdMultiOtsu returns them). Every image must be
    non-empty (as for the single call)."""
    function = "batch.thresholdMultiOtsu"
    b = _Batch(images, function, backend)
    if any(b.empty):
        raise _InvalidArgumentError(f"{function}: batch image {b.empty.index(True)} is empty")
    out, out_arg, src_arg = b.outputs(dst)
    t = _core.multiotsu_batch(src_arg, out_arg, int(classes), backend, b.device_id, b.stream) if len(b) else []
    return _np.array(t, dtype=_np.int64).reshape(len(b), int(classes) - 1), b.results(out)


def __dir__():
    return list(__all__)
