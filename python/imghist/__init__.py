"""imghist: image histograms and histogram filters, bit-exact with OpenCV, on the CPU or a CUDA GPU.

Functions named and shaped like their cv2 counterparts, plus one NumPy-style histogram:

    calcHist(images, channels, mask, histSize, ranges[, hist[, accumulate]])  float32 (histSize, 1), as cv2
    equalizeHist(src[, dst])                                                    dst
    equalizeHistColor(src, mode='luma'[, dst])                                 dst: 3- or 4-channel BGR(A)
    threshold(src, thresh, maxval, type[, dst])                                 (retval, dst)
    createCLAHE(clipLimit=40.0, tileGridSize=(8, 8)).apply(src[, dst])          dst

and the histogram operations that follow scikit-image (cv2 has none), named as imghist's gpuhist:: layer:

    stretchContrast(src, lowPercent=2, highPercent=1[, dst], mode='luma')  dst: rescale_intensity between
        np.percentile(src, lowPercent) and np.percentile(src, 100 - highPercent)
    matchHistograms(src, reference[, dst])                                 dst: exposure.match_histograms,
        rounded to the nearest level
    thresholdMultiOtsu(src, classes=3[, dst])                              (thresholds, labels):
        filters.threshold_multiotsu and np.digitize, labels scaled to the full range
    hist(array, bins=256, range=None, mask=None, backend='auto')                int64 counts:
        (bins,) for a 2-D image, (C, bins) for an (H, W, C) image; range=None is the whole range of
        uint8 / uint16 and is required for int32 / float32; bins are [low, high) as cv2.calcHist bins.

and image files, as cv2's functions read and write them (BGR order; see their docstrings):

    imread(filename, flags=IMREAD_COLOR)                                        array, or None
    imwrite(filename, img, params=None)                                         True

The scikit-image-shaped namespaces imghist.exposure and imghist.filters take skimage's names, arguments,
dtypes and rules; imghist.batch runs the filters above over many images in one call; imghist.io reads and
writes image files with their metadata (RGB order); imghist.dask applies the operations to dask arrays
(chunked, possibly distributed) and runs the command-line tool's per-file work on a dask cluster.

Every function above also takes backend='auto' | 'cpu' | 'cuda' (keyword). It applies to host arrays: 'auto'
uses CUDA when a device exists, else the threaded CPU backend, which gives the same answers bit for bit.
Device arrays always run on CUDA; backend='cpu' with a device array is an error.

Inputs (same rules for src, mask and dst): 2-D (H, W) or 3-D (H, W, C) arrays, C in 1, 3, 4; dtypes
uint8, uint16, int32, float32 (each operation accepts the subset cv2 does; see its docstring); any row
stride (ROI views are used in place), adjacent samples and pixels within a row.
  - NumPy arrays, and anything np.asarray accepts: host memory. Views whose pixels are not adjacent
    (column steps, negative or Fortran strides) are copied to a C-contiguous array first. Results are
    NumPy arrays. PyTorch CPU tensors are read as NumPy views and give torch CPU tensors back.
  - CuPy arrays, PyTorch CUDA tensors, and any object with __cuda_array_interface__ or __dlpack__ /
    __dlpack_device__ (DLPack on CUDA, or on the CPU: then treated as host memory): device memory, used
    in place (never copied; layouts the library cannot read raise InvalidArgumentError). Results stay on
    the device and come back as the input's type: a CuPy array for CuPy input, a torch tensor on the same
    device for torch input, and for other producers an imghist.DeviceArray (device memory owned by
    imghist, readable by any consumer of __cuda_array_interface__, version 3, e.g. cupy.asarray or
    numba.cuda.as_cuda_array; allocated on the calling thread's current CUDA device).

Streams. Work on device arrays is enqueued on the caller's stream and the call returns without waiting:
  - CuPy input: cupy.cuda.get_current_stream() of the array's device (outputs come from CuPy's pool on it);
  - torch input: torch.cuda.current_stream(tensor.device) (outputs from torch's allocator on it);
  - other __cuda_array_interface__ producers: the interface's 'stream' entry (absent or None: the legacy
    default stream); the result's __cuda_array_interface__['stream'] names the stream it was written on;
  - other DLPack producers: __dlpack__(stream=1) is called and the work runs on the legacy default stream.
  The calls that wait return a computed value: threshold() with THRESH_OTSU / THRESH_TRIANGLE on a device
  array waits for the image's histogram (the level is computed on the host), thresholdMultiOtsu for its
  threshold search; the output array is written in stream order after they return, like every other
  call's. Host arrays: every call returns finished results.

The GIL is released while the library works, so calls from several Python threads run in parallel.
Errors are imghist.Error subclasses whose message names the function called and its arguments (see
imghist._errors): bad arguments are also ValueError, unsupported dtypes or channel counts TypeError, a
missing GPU RuntimeError.
"""

import os as _os
import sys as _sys
import warnings as _warnings

import numpy as _np

from ._errors import (CountOverflowError, CudaError, Error, InvalidArgumentError, IoError, NoDeviceError,
                      OutOfMemoryError, UnsupportedError)
from . import _imghist as _core
from ._imghist import DeviceArray, ExternalArray
from ._arrays import (CUPY as _CUPY, TORCH as _TORCH, as_input as _input, check_backend as _check_backend,
                      empty_like_input as _empty, is_empty as _is_empty, output as _output, result as _result)

__version__ = _core.version()

__all__ = [
    "calcHist", "equalizeHist", "equalizeHistColor", "threshold", "createCLAHE", "CLAHE", "hist",
    "stretchContrast", "matchHistograms", "thresholdMultiOtsu",
    "THRESH_BINARY", "THRESH_BINARY_INV", "THRESH_TRUNC", "THRESH_TOZERO", "THRESH_TOZERO_INV", "THRESH_MASK",
    "THRESH_OTSU", "THRESH_TRIANGLE", "cuda_device_count", "cuda_available", "built_with_cuda",
    "Error", "InvalidArgumentError", "UnsupportedError", "OutOfMemoryError", "NoDeviceError", "CudaError",
    "CountOverflowError", "IoError", "DeviceArray", "ExternalArray",
    "imread", "imwrite", "IMREAD_UNCHANGED", "IMREAD_GRAYSCALE", "IMREAD_COLOR", "IMREAD_ANYDEPTH",
    "IMREAD_ANYCOLOR", "IMREAD_IGNORE_ORIENTATION", "IMWRITE_JPEG_QUALITY", "IMWRITE_PNG_COMPRESSION",
    "IMWRITE_WEBP_QUALITY",
]

# cv2's values, so that cv2.THRESH_* constants can be passed too.
THRESH_BINARY = 0
THRESH_BINARY_INV = 1
THRESH_TRUNC = 2
THRESH_TOZERO = 3
THRESH_TOZERO_INV = 4
THRESH_MASK = 7
THRESH_OTSU = 8
THRESH_TRIANGLE = 16

IMREAD_UNCHANGED = -1
IMREAD_GRAYSCALE = 0
IMREAD_COLOR = 1
IMREAD_ANYDEPTH = 2
IMREAD_ANYCOLOR = 4
IMREAD_IGNORE_ORIENTATION = 128
IMWRITE_JPEG_QUALITY = 1
IMWRITE_PNG_COMPRESSION = 16
IMWRITE_WEBP_QUALITY = 64

cuda_device_count = _core.cuda_device_count
built_with_cuda = _core.built_with_cuda


def cuda_available():
    """True when a usable CUDA device exists (and this build has CUDA)."""
    return _core.cuda_device_count() > 0


# ---- histograms ---------------------------------------------------------------------------------------------

def hist(array, bins=256, range=None, mask=None, backend="auto"):
    """Counts of `array`'s samples in `bins` equal bins over [low, high) = `range` (None: [0, 256) for
    uint8, [0, 65536) for uint16; required for int32 and float32). Samples outside the range and NaN are
    not counted; pixels whose `mask` (uint8, (H, W)) byte is 0 are skipped.

    Returns int64 counts: shape (bins,) for a 2-D array, (C, bins) for an (H, W, C) array; a NumPy array for
    host input, a device array of the input's kind for device input (see the module docstring)."""
    if type(array) is _np.ndarray and (mask is None or type(mask) is _np.ndarray):
        return _core.hist_host(array, bins, range, mask, backend)  # fast path: NumPy in, NumPy out
    src = _input(array, "hist: image")
    m = None if mask is None else _input(mask, "hist: mask").arg
    if not src.on_device:
        return _result(src, _core.hist_host(src.arg, bins, range, m, backend))
    _check_backend(src, backend)
    if bins < 1:
        raise InvalidArgumentError(f"bins must be at least 1, got {bins}")
    shape = (bins,) if len(src.shape) == 2 else (src.shape[2], bins)
    out, out_arg = _empty(src, shape, "int64")
    _core.hist_device(src.arg, bins, range, m, out_arg, src.stream)
    return out


def calcHist(images, channels, mask, histSize, ranges, hist=None, accumulate=False, *, backend="auto"):
    """cv2.calcHist for one-dimensional histograms: float32 (histSize[0], 1).

    images: a list of arrays (or one array); channels: [c], where c counts the channels of all images in
    order (as cv2 does); mask: None or uint8 (H, W); histSize: [bins]; ranges: [low, high] (uniform bins;
    None: the whole range of uint8 / uint16). With accumulate=True the counts are added to `hist`.
    Accepts uint8, uint16, int32 and float32 images with 1, 3 or 4 channels."""
    if isinstance(images, (list, tuple)):
        images = list(images)
    else:
        images = [images]
    if len(channels) != 1 or len(histSize) != 1:
        raise UnsupportedError("calcHist: only one-dimensional histograms (one channel, one histSize) are supported")
    if ranges is not None and len(ranges) != 2:
        raise UnsupportedError("calcHist: ranges must be [low, high] (uniform bins)")
    c, bins = int(channels[0]), int(histSize[0])
    if not images:
        raise InvalidArgumentError("calcHist: no images")
    for img in images:  # the channel numbering runs over all images, in order
        src = _input(img, "calcHist: image")
        n = 1 if len(src.shape) == 2 else int(src.shape[2])
        if c < n:
            break
        c -= n
    else:
        raise InvalidArgumentError(f"calcHist: channel {channels[0]} does not exist in the images")
    m = None if mask is None else _input(mask, "calcHist: mask").arg
    acc = hist if accumulate else None
    if not src.on_device:
        if acc is not None:
            acc = _np.asarray(acc)
        return _result(src, _core.calc_hist_host(src.arg, c, bins, ranges, m, backend, acc))
    _check_backend(src, backend)
    if src.kind not in (_CUPY, _TORCH):
        raise UnsupportedError("calcHist: device arrays must be CuPy arrays or torch tensors (imghist.hist "
                               "accepts any device array)")
    if bins < 1:
        raise InvalidArgumentError(f"bins must be at least 1, got {bins}")
    shape = (bins,) if len(src.shape) == 2 else (src.shape[2], bins)
    counts, out_arg = _empty(src, shape, "int64")
    _core.hist_device(src.arg, bins, ranges, m, out_arg, src.stream, "calcHist")
    one = counts if len(src.shape) == 2 else counts[c]
    # The conversion runs on the framework's current stream: the stream the histogram was enqueued on.
    if src.kind == _CUPY:
        cp = _sys.modules["cupy"]
        with cp.cuda.Device(src.device_id):
            out = one.astype(cp.float32).reshape(bins, 1)
    else:
        out = one.to(_sys.modules["torch"].float32).reshape(bins, 1)
    if acc is not None:
        out += acc.reshape(bins, 1)
    return out


# ---- filters ------------------------------------------------------------------------------------------------

def equalizeHist(src, dst=None, *, backend="auto"):
    """cv2.equalizeHist: uint8, (H, W) or (H, W, 1). Returns dst (a new array like src when not given).
    Colour images: equalizeHistColor."""
    s = _input(src, "equalizeHist: src")
    _check_backend(s, backend)
    out, out_arg = _output(s, dst, "equalizeHist: dst")
    if not _is_empty(s.shape):  # cv2 returns at once for an empty image
        _core.equalize(s.arg, out_arg, backend, s.device_id, s.stream)
    return _result(s, out)


def equalizeHistColor(src, mode="luma", dst=None, *, backend="auto"):
    """Equalization of a uint8 colour image, (H, W, 3) BGR or (H, W, 4) BGRA (cv2 has none; these are the
    two compositions of cv2 calls people write, and the imghist CLI's `equalize --color` modes):
      mode='luma': cv2.cvtColor(src, COLOR_BGR2YCrCb), cv2.equalizeHist of Y, cv2.cvtColor(COLOR_YCrCb2BGR)
                   (hue and saturation kept); alpha is copied;
      mode='per-channel': cv2.split, cv2.equalizeHist of each channel, cv2.merge (alpha included).
    Bit-exact with those compositions. Returns dst (a new array like src when not given)."""
    s = _input(src, "equalizeHistColor: src")
    _check_backend(s, backend)
    out, out_arg = _output(s, dst, "equalizeHistColor: dst")
    if not _is_empty(s.shape):
        _core.equalize_color(s.arg, out_arg, mode, backend, s.device_id, s.stream)
    return _result(s, out)


def threshold(src, thresh, maxval, type, dst=None, *, backend="auto"):
    """cv2.threshold: returns (retval, dst). type: THRESH_BINARY, _BINARY_INV, _TRUNC, _TOZERO, _TOZERO_INV,
    optionally | THRESH_OTSU (uint8, uint16, 1 channel) or | THRESH_TRIANGLE (uint8, 1 channel).
    Accepts uint8, uint16 and float32 images with 1, 3 or 4 channels. With an automatic threshold on a
    device array the call waits for the image's histogram (it returns the computed value); dst is written
    in stream order."""
    s = _input(src, "threshold: src")
    _check_backend(s, backend)
    out, out_arg = _output(s, dst, "threshold: dst")
    if _is_empty(s.shape):  # cv2 returns at once: the threshold as given, 0 when it would be computed
        return (0.0 if int(type) & (THRESH_OTSU | THRESH_TRIANGLE) else float(thresh)), _result(s, out)
    retval = _core.threshold(s.arg, out_arg, float(thresh), float(maxval), int(type), backend, s.device_id,
                             s.stream)
    return retval, _result(s, out)


class CLAHE:
    """cv2.CLAHE: contrast-limited adaptive histogram equalization of uint8 or uint16 (H, W) images.
    Within one grey level of cv2's result and identical on the vast majority of pixels."""

    def __init__(self, clipLimit=40.0, tileGridSize=(8, 8), *, backend="auto"):
        self._clip = float(clipLimit)
        self.setTilesGridSize(tileGridSize)
        self.backend = backend

    def apply(self, src, dst=None):
        s = _input(src, "CLAHE.apply: src")
        _check_backend(s, self.backend)
        out, out_arg = _output(s, dst, "CLAHE.apply: dst")
        if not _is_empty(s.shape):
            _core.clahe(s.arg, out_arg, self._clip, self._tiles[0], self._tiles[1], self.backend, s.device_id,
                        s.stream)
        return _result(s, out)

    def getClipLimit(self):
        return self._clip

    def setClipLimit(self, clipLimit):
        self._clip = float(clipLimit)

    def getTilesGridSize(self):
        return self._tiles

    def setTilesGridSize(self, tileGridSize):
        gx, gy = (int(v) for v in tileGridSize)
        if gx < 1 or gy < 1:
            raise InvalidArgumentError(f"CLAHE: the tile grid must be at least 1x1, got {gx}x{gy}")
        self._tiles = (gx, gy)


def createCLAHE(clipLimit=40.0, tileGridSize=(8, 8), *, backend="auto"):
    """cv2.createCLAHE: tileGridSize is (tiles across, tiles down), as cv2's Size(width, height)."""
    return CLAHE(clipLimit, tileGridSize, backend=backend)


# ---- contrast stretch, histogram matching, multi-level Otsu (scikit-image's rules) -----------------------------

def stretchContrast(src, lowPercent=2.0, highPercent=1.0, dst=None, *, mode="luma", backend="auto"):
    """Contrast stretch by percentiles: skimage.exposure.rescale_intensity(src, in_range=(lo, hi)) with
    lo, hi = np.percentile(samples, (lowPercent, 100 - highPercent)) (the default linear rule), output over
    the whole range of the dtype, exactly. uint8 or uint16, 1, 3 or 4 channels. Colour images (BGR order,
    as cv2 reads them): mode='luma' takes the percentiles of the luma Y = (1868 B + 9617 G + 4899 R + 8192)
    >> 14 (cv2.COLOR_BGR2YCrCb's Y) and applies one table to B, G and R (alpha copied); mode='per-channel'
    stretches each channel on its own. Returns dst (a new array like src when not given)."""
    s = _input(src, "stretchContrast: src")
    _check_backend(s, backend)
    out, out_arg = _output(s, dst, "stretchContrast: dst")
    if not _is_empty(s.shape):
        _core.stretch(s.arg, out_arg, float(lowPercent), float(highPercent), mode, backend, s.device_id, s.stream)
    return _result(s, out)


def matchHistograms(src, reference, dst=None, *, backend="auto"):
    """Histogram matching: skimage.exposure.match_histograms(src, reference, channel_axis=-1 for colour)
    channel by channel, rounded half to even to the nearest level (within 0.5 of scikit-image's float result
    for one channel, and of its truncated result by at most 1 for several). uint8 or uint16; reference has
    src's dtype and channel count, any size, and lives where src does. Returns dst."""
    s = _input(src, "matchHistograms: src")
    _check_backend(s, backend)
    r = _input(reference, "matchHistograms: reference")
    if r.on_device != s.on_device:
        raise InvalidArgumentError("matchHistograms: src and reference must both be host arrays or both device arrays")
    out, out_arg = _output(s, dst, "matchHistograms: dst")
    if not _is_empty(s.shape):
        _core.match(s.arg, r.arg, out_arg, backend, s.device_id, s.stream)
    return _result(s, out)


def thresholdMultiOtsu(src, classes=3, dst=None, *, backend="auto"):
    """Multi-level Otsu: returns (thresholds, labels) — the classes - 1 thresholds of
    skimage.filters.threshold_multiotsu(src, classes) (the same values, ascending, as a list of ints) and the
    label image np.digitize(src, thresholds) scaled to the dtype's range (3 classes on uint8: 0, 128, 255).
    uint8 or uint16 (spanning at most 4096 levels), 1 channel, classes 2..5. Raises InvalidArgumentError
    when the image has fewer distinct values than classes (scikit-image's ValueError). On a device array the
    call waits for its stream (it returns the thresholds)."""
    s = _input(src, "thresholdMultiOtsu: src")
    _check_backend(s, backend)
    out, out_arg = _output(s, dst, "thresholdMultiOtsu: dst")
    if _is_empty(s.shape):
        raise InvalidArgumentError("thresholdMultiOtsu: empty image")
    t = _core.multiotsu(s.arg, out_arg, int(classes), backend, s.device_id, s.stream)
    return list(t), _result(s, out)


# ---- image files, as cv2 reads and writes them ------------------------------------------------------------------

def imread(filename, flags=IMREAD_COLOR):
    """cv2.imread with imghist's decoders (PNG, JPEG, TIFF, WebP, BMP, TGA, PNM): a NumPy array in cv2's
    layout, or None when the file cannot be read or decoded (as cv2 returns; the reason, naming the file, is
    issued as a RuntimeWarning; imghist.io.read raises instead).

    flags: IMREAD_UNCHANGED (as stored: 8 or 16 bits, 1, 3 or 4 channels; gray + alpha as BGRA), or
    IMREAD_COLOR (3 channels, BGR) / IMREAD_GRAYSCALE (1 channel), with | IMREAD_ANYDEPTH (16-bit kept; else
    8-bit: PNG keeps the high byte, as libpng strips, the others round v * 255 / 65535), | IMREAD_ANYCOLOR
    (gray stays gray, colour becomes BGR) and | IMREAD_IGNORE_ORIENTATION. The EXIF orientation is applied as
    cv2 4.6 applies it: JPEG and PNG unless IMREAD_UNCHANGED or IMREAD_IGNORE_ORIENTATION, TIFF always (its
    decoder orients), WebP never. Equal to cv2.imread pixel for pixel for IMREAD_UNCHANGED and IMREAD_COLOR,
    and for IMREAD_GRAYSCALE of gray files, colour JPEGs (their luma, as libjpeg decodes it), TIFF and BMP
    (cv2.COLOR_BGR2GRAY's rule); colour PNG and WebP files, whose decoders in OpenCV convert to gray by their
    own rules, are converted by cv2.COLOR_BGR2GRAY's rule too: within one level of cv2's."""
    flags = int(flags)
    if flags != IMREAD_UNCHANGED and (flags < 0 or flags & ~(IMREAD_COLOR | IMREAD_ANYDEPTH | IMREAD_ANYCOLOR
                                                              | IMREAD_IGNORE_ORIENTATION)):
        raise UnsupportedError(f"imread: unsupported flags {flags}; supported: IMREAD_UNCHANGED, or IMREAD_GRAYSCALE "
                               "/ IMREAD_COLOR with IMREAD_ANYDEPTH, IMREAD_ANYCOLOR, IMREAD_IGNORE_ORIENTATION")
    if not _core.has_files:
        raise UnsupportedError("imread: this build of imghist has no image files (built without the command-line "
                               "tool: IMGHIST_PYTHON_FILES=OFF)")
    try:
        return _core.imread(_os.fspath(filename), flags, 1 << 28)
    except (IoError, InvalidArgumentError, UnsupportedError, OutOfMemoryError) as e:
        _warnings.warn(str(e), RuntimeWarning, stacklevel=2)
        return None


def imwrite(filename, img, params=None):
    """cv2.imwrite with imghist's encoders, atomically and durably (a temporary name, flushed, renamed): the
    format from the extension (png, jpg/jpeg, tif/tiff, webp, bmp, tga, pnm/pgm/ppm); img uint8 or uint16,
    (H, W) gray, (H, W, 2) gray + alpha, (H, W, 3) BGR or (H, W, 4) BGRA; no metadata is written. Returns
    True; failures raise imghist.Error subclasses naming the file (cv2 returns False for some).

    params: cv2's [key, value, ...]: IMWRITE_JPEG_QUALITY (1-100, default 95, as cv2),
    IMWRITE_PNG_COMPRESSION (0-9, default 1, as cv2), IMWRITE_WEBP_QUALITY (1-100 lossy; above 100, and by
    default, lossless, as cv2). Other keys are ignored, as cv2 ignores those of other formats."""
    if not _core.has_files:
        raise UnsupportedError("imwrite: this build of imghist has no image files (built without the command-line "
                               "tool: IMGHIST_PYTHON_FILES=OFF)")
    p = [int(v) for v in (params or [])]
    if len(p) % 2:
        raise InvalidArgumentError("imwrite: params must be pairs [key, value, ...]")
    settings = dict(zip(p[0::2], p[1::2]))
    path = _os.fspath(filename)
    ext = _os.path.splitext(path)[1].lower()
    quality = 0
    if ext in (".jpg", ".jpeg"):
        quality = min(max(settings.get(IMWRITE_JPEG_QUALITY, 95), 1), 100)
    elif ext == ".webp":
        q = settings.get(IMWRITE_WEBP_QUALITY, 101)
        quality = 0 if q > 100 else max(q, 1)
    level = min(max(settings.get(IMWRITE_PNG_COMPRESSION, 1), 0), 9)
    _core.imwrite(path, _np.ascontiguousarray(img), quality, level)
    return True


# ---- the namespace -------------------------------------------------------------------------------------------
# The scikit-image-shaped namespaces, imghist.batch and imghist.io are imported with the package; imghist.dask
# only when first used (it imports Dask). dir(imghist) lists the API alone.
from . import batch, exposure, filters, io  # noqa: E402

_LAZY_SUBMODULES = ("dask",)


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'imghist' has no attribute {name!r}")


def __dir__():
    return sorted(__all__ + ["__version__", "batch", "exposure", "filters", "io"] + list(_LAZY_SUBMODULES))
