"""Shared cases for the imghist Python tests: the backends, the shipped photographs, generated images.

References are cv2 (OpenCV's Python binding) or, where cv2 has no counterpart, an independent NumPy
computation written from the documented rule; never imghist itself.
"""
import glob
import os

import numpy as np
import pytest

import imghist

SAMPLES_DIR = os.environ.get("IMGHIST_SAMPLES_DIR") or os.path.join(
    os.path.dirname(__file__), "..", "..", "samples", "images")

# One list of backends for every host case: the CPU always, CUDA where a device exists.
BACKENDS = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(
        not imghist.cuda_available(), reason="no CUDA device (or a build without CUDA): CUDA backend cases skipped")),
]


def photographs():
    """The shipped photographs as cv2 reads them (gray or BGR uint8)."""
    import cv2
    paths = sorted(glob.glob(os.path.join(SAMPLES_DIR, "*.png")))
    assert paths, f"no sample photographs in {SAMPLES_DIR}"
    return {os.path.basename(p): cv2.imread(p, cv2.IMREAD_UNCHANGED) for p in paths}


# Sizes: single pixels, single rows and columns, widths that are not multiples of 16, a larger odd frame.
SIZES = [(1, 1), (1, 17), (17, 1), (31, 33), (64, 48), (131, 257)]


def random_image(shape, dtype, seed, low=None, high=None):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        lo = -10.0 if low is None else low
        hi = 300.0 if high is None else high
        return rng.uniform(lo, hi, size=shape).astype(np.float32)
    info = np.iinfo(dtype)
    lo = info.min if low is None else low
    hi = info.max if high is None else high
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=dtype)


def roi_views(img):
    """The image and views of it at odd offsets: a ROI whose rows are strided, and layouts that must be
    copied (column step, reversed rows) — all are read as the pixels they show."""
    h, w = img.shape[:2]
    views = {"whole": img}
    if h > 4 and w > 6:
        views["roi"] = img[2:h - 1, 3:w - 2]        # unaligned x offset, row stride of the parent
        views["column_step"] = img[:, ::2]           # not adjacent: copied
        views["reversed_rows"] = img[::-1]           # negative stride: copied
    return views


def cv2_calcHist(*args, **kwargs):
    """cv2.calcHist's result in the shape imghist.calcHist documents: a (histSize, 1) float32 column, as
    OpenCV 4 returns it (OpenCV 5's Python bindings return (histSize,); the counts are the same)."""
    import cv2
    return cv2.calcHist(*args, **kwargs).reshape(-1, 1)


def cv2_equalize_color(img, mode):
    """The cv2 compositions equalizeHistColor documents (single images and batches alike)."""
    import cv2
    if mode == "per-channel":
        return cv2.merge([cv2.equalizeHist(c) for c in cv2.split(img)])
    ycrcb = cv2.cvtColor(img[:, :, :3], cv2.COLOR_BGR2YCrCb)
    ycrcb[:, :, 0] = cv2.equalizeHist(np.ascontiguousarray(ycrcb[:, :, 0]))
    bgr = cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2BGR)
    return bgr if img.shape[2] == 3 else np.dstack([bgr, img[:, :, 3]])


def luma(bgr):
    """The documented luma: the integers of cv2.COLOR_BGR2YCrCb's Y."""
    b, g, r = (bgr[..., c].astype(np.int64) for c in range(3))
    return (b * 1868 + g * 9617 + r * 4899 + 8192) >> 14


def sk_stretch(img, low, high, mode="per-channel"):
    """scikit-image's percentile stretch: rescale_intensity(x, in_range=tuple(np.percentile(..))), per channel,
    or (mode='luma', 3+ channels) the colour channels together between the luma's percentiles."""
    exposure = pytest.importorskip("skimage.exposure", reason="scikit-image (the reference) is not installed")
    if img.ndim == 3 and img.shape[2] >= 3 and mode == "luma":
        lo, hi = np.percentile(luma(img), (low, 100 - high))
        out = img.copy()
        out[..., :3] = exposure.rescale_intensity(img[..., :3], in_range=(lo, hi))
        return out
    if img.ndim == 2:
        return exposure.rescale_intensity(img, in_range=tuple(np.percentile(img, (low, 100 - high))))
    out = img.copy()
    for c in range(img.shape[2]):
        ch = img[..., c]
        out[..., c] = exposure.rescale_intensity(ch, in_range=tuple(np.percentile(ch, (low, 100 - high))))
    return out


def scaled_labels(img, thresholds):
    """thresholdMultiOtsu's label image: np.digitize's class indices spread over the dtype's range (rounded)."""
    top = 255 if img.dtype == np.uint8 else 65535
    k1 = len(thresholds)
    labels = np.digitize(img, thresholds).astype(np.int64)
    return ((labels * top + k1 // 2) // k1).astype(img.dtype)


def device_framework(name):
    """CuPy or PyTorch, imported, with a CUDA device both it and imghist can use; skips the test otherwise."""
    try:
        mod = __import__(name)
    except Exception as e:  # ImportError, or a framework that cannot load its CUDA libraries
        pytest.skip(f"{name} is not usable here: {e}")
    if not imghist.cuda_available():
        pytest.skip("no CUDA device for imghist (or imghist was built without CUDA)")
    if name == "cupy":
        try:
            if mod.cuda.runtime.getDeviceCount() < 1:
                pytest.skip("CuPy sees no CUDA device")
        except Exception as e:
            pytest.skip(f"CuPy cannot use CUDA: {e}")
    elif not mod.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return mod
