"""imghist.stretchContrast, matchHistograms and thresholdMultiOtsu against scikit-image itself (the functions
they reproduce: exposure.rescale_intensity with np.percentile, exposure.match_histograms,
filters.threshold_multiotsu with np.digitize), on every backend present, and on device arrays (CuPy or
PyTorch CUDA) where they exist. Every case skips itself without scikit-image."""
import numpy as np
import pytest

import imghist
from conftest import (BACKENDS, SIZES, device_framework, photographs, random_image, roi_views, scaled_labels,
                      sk_stretch)

skimage = pytest.importorskip("skimage")
from skimage import exposure, filters  # noqa: E402


def stretch_cases():
    cases = {}
    for name, img in photographs().items():
        cases[name] = img
    for i, (h, w) in enumerate(SIZES):
        for dtype in ("uint8", "uint16"):
            img = random_image((h, w), dtype, 700 + i)
            for view_name, view in roi_views(img).items():
                cases[f"{dtype} {h}x{w} {view_name}"] = view
        cases[f"bgr {h}x{w}"] = random_image((h, w, 3), "uint8", 800 + i)
        cases[f"bgra16 {h}x{w}"] = random_image((h, w, 4), "uint16", 900 + i)
    cases["constant"] = np.full((21, 35), 77, np.uint8)
    cases["constant bgr"] = np.full((9, 13, 3), 200, np.uint8)
    return cases


PERCENTS = [(2, 1), (0, 0), (0.5, 0.5), (10, 25), (50, 50)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["luma", "per-channel"])
def test_stretch_equals_rescale_intensity_between_percentiles(backend, mode):
    for name, img in stretch_cases().items():
        for low, high in PERCENTS:
            expected = sk_stretch(img, low, high, mode)
            got = imghist.stretchContrast(img, low, high, mode=mode, backend=backend)
            assert got.dtype == img.dtype and got.shape == img.shape
            assert np.array_equal(got, expected), f"{name} {low}/{high} {mode}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_match_histograms_is_within_half_a_level_of_scikit_image(backend):
    photos = list(photographs().values())
    refs = [random_image((61, 97), "uint8", 5, 40, 180), photos[0] if photos[0].ndim == 2 else photos[0][..., 0]]
    differing = 0
    total = 0
    for name, img in photographs().items():
        gray = img if img.ndim == 2 else img[..., 1]
        for ref in refs:
            got = imghist.matchHistograms(gray, ref, backend=backend)
            sk = exposure.match_histograms(gray, ref)  # float64 for one channel
            assert np.max(np.abs(got.astype(np.float64) - sk)) <= 0.5, name
            # Exactly np.round (half to even) of scikit-image's value.
            assert np.array_equal(got, np.round(sk).astype(np.uint8)), name
        if img.ndim == 3:
            ref3 = random_image((40, 50, 3), "uint8", 6, 30, 220)
            got = imghist.matchHistograms(img, ref3, backend=backend)
            sk = exposure.match_histograms(img, ref3, channel_axis=-1)  # truncated to uint8
            d = np.abs(got.astype(np.int64) - sk.astype(np.int64))
            assert d.max() <= 1, name
            differing += int(np.count_nonzero(d))
            total += d.size
    print(f"colour matching: {differing} of {total} samples differ from scikit-image's truncation by 1")


@pytest.mark.parametrize("backend", BACKENDS)
def test_match_histograms_uint16_and_odd_shapes(backend):
    for i, (h, w) in enumerate(SIZES):
        img = random_image((h, w), "uint16", 40 + i, 1000, 9000)
        ref = random_image((33, 17), "uint16", 50 + i, 0, 60000)
        for view_name, view in roi_views(img).items():
            got = imghist.matchHistograms(view, ref, backend=backend)
            sk = exposure.match_histograms(view, ref)
            assert np.array_equal(got, np.round(sk).astype(np.uint16)), f"{h}x{w} {view_name}"


def multiotsu_cases():
    cases = {}
    for name, img in photographs().items():
        cases[name] = img if img.ndim == 2 else img[..., 2]
    rng = np.random.default_rng(3)
    cases["gauss"] = np.clip(rng.normal(128, 30, (97, 131)), 0, 255).astype(np.uint8)
    sparse = np.zeros((1, 120), np.uint8)
    sparse[0] = np.repeat(np.array([0, 40, 90, 91, 200, 255], np.uint8), 20)  # empty runs: exact ties
    cases["sparse"] = sparse
    cases["u16 narrow"] = (20000 + random_image((45, 77), "uint16", 9) % 300).astype(np.uint16)
    cases["roi"] = cases["gauss"][3:-2, 5:-7]
    return cases


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("classes", [2, 3, 4, 5])
def test_multiotsu_thresholds_and_labels_equal_scikit_image(backend, classes):
    for name, img in multiotsu_cases().items():
        if classes == 5 and name.endswith(".png"):
            continue  # scikit-image's exhaustive 5-class search over 256 levels takes minutes
        expected = [int(t) for t in filters.threshold_multiotsu(img, classes)]
        thresholds, labels = imghist.thresholdMultiOtsu(img, classes, backend=backend)
        assert thresholds == expected, name
        assert np.array_equal(labels, scaled_labels(img, expected)), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_errors(backend):
    two_levels = np.zeros((4, 4), np.uint8)
    two_levels[0] = 9
    with pytest.raises(ValueError):  # scikit-image raises ValueError too
        filters.threshold_multiotsu(two_levels, 3)
    with pytest.raises(imghist.InvalidArgumentError):
        imghist.thresholdMultiOtsu(two_levels, 3, backend=backend)
    with pytest.raises(imghist.InvalidArgumentError):
        imghist.stretchContrast(two_levels, 60, 50, backend=backend)
    with pytest.raises(imghist.InvalidArgumentError):
        imghist.stretchContrast(two_levels, 2, 1, mode="hsv", backend=backend)
    with pytest.raises(imghist.UnsupportedError):
        imghist.stretchContrast(two_levels.astype(np.float32), 2, 1, backend=backend)
    with pytest.raises(imghist.InvalidArgumentError):
        imghist.matchHistograms(two_levels, np.zeros((4, 4, 3), np.uint8), backend=backend)


# ---- device arrays ----------------------------------------------------------------------------------------------

def _up(mod, a):
    if mod.__name__ == "cupy":
        return mod.asarray(a)
    return mod.from_numpy(np.ascontiguousarray(a)).to("cuda")


def _down(d):
    return d.get() if hasattr(d, "get") else d.cpu().numpy()


@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_device_arrays(framework):
    mod = device_framework(framework)
    for name, img in list(photographs().items()) + [("gauss", multiotsu_cases()["gauss"])]:
        d = _up(mod, img)
        for mode in ("luma", "per-channel"):
            assert np.array_equal(_down(imghist.stretchContrast(d, 2, 1, mode=mode)), sk_stretch(img, 2, 1, mode)), name
        gray = img if img.ndim == 2 else img[..., 1].copy()
        ref = random_image((61, 97), "uint8", 5, 40, 180)
        got = _down(imghist.matchHistograms(_up(mod, gray), _up(mod, ref)))
        assert np.array_equal(got, np.round(exposure.match_histograms(gray, ref)).astype(np.uint8)), name
        for classes in (3, 4):
            expected = [int(t) for t in filters.threshold_multiotsu(gray, classes)]
            thresholds, labels = imghist.thresholdMultiOtsu(_up(mod, gray), classes)
            assert thresholds == expected, name
            assert np.array_equal(_down(labels), scaled_labels(gray, expected)), name
