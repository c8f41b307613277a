"""imghist.exposure and imghist.filters against scikit-image itself: the same dtypes and return types, and
the same results — exactly for integer results, within 1e-6 relative for float results — on uint8, uint16,
int16, float32 and float64 images (and a few more dtypes skimage accepts), photographs and generated images,
NumPy arrays and (on a GPU host) CuPy arrays."""
import warnings

import numpy as np
import pytest

skimage = pytest.importorskip("skimage", reason="scikit-image (the reference) is not installed")
from skimage import exposure as sk_exposure, filters as sk_filters  # noqa: E402

import imghist  # noqa: E402
from imghist import exposure, filters  # noqa: E402
from conftest import photographs  # noqa: E402

DTYPES = ["uint8", "uint16", "int16", "float32", "float64"]


def reference_rules_or_skip(what):
    """The namespace follows scikit-image 0.19 (Debian 12's); later releases changed some rules (the bins of wide
    integer images, match_histograms of float templates): those comparisons run against 0.19 only."""
    if not skimage.__version__.startswith("0.19."):
        pytest.skip(f"{what}: compared with scikit-image 0.19's rules; this host has {skimage.__version__}")


def device_arrays_or_skip():
    """CuPy with a device imghist can use, or a skip saying why."""
    try:
        import cupy
    except Exception as e:  # ImportError, or CuPy unable to load CUDA
        pytest.skip(f"CuPy is not usable here ({e}): the CuPy cases run on a GPU host")
    if not imghist.cuda_available():
        pytest.skip("no CUDA device for imghist (or a build without CUDA): the CuPy cases run on a GPU host")
    return cupy


ARRAY_MODULES = ["numpy", "cupy"]


def to_module(a, module):
    if module == "numpy":
        return a
    return device_arrays_or_skip().asarray(a)


def host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a


def make_image(dtype, seed, shape=(61, 83)):
    """A generated image of `dtype` with a skewed, gappy distribution (so that quantiles, peaks and tails
    differ), covering negative values for signed and float types."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    base = rng.gamma(2.0, 1.0, size=shape)
    if dtype.kind == "f":
        return (base / 4 - 0.25).astype(dtype)
    if dtype == np.uint8:
        return np.clip(base * 30, 0, 255).astype(dtype)
    if dtype == np.uint16:
        return np.clip(base * 300 + 1000, 0, 65535).astype(dtype)
    return np.clip(base * 200 - 300, -32768, 32767).astype(dtype)


def images(dtype):
    """Generated images (one with three channels, one non-contiguous view) and a photograph, in `dtype`."""
    photo = photographs()["camera.png"]
    if np.dtype(dtype).kind == "f":
        photo = photo.astype(dtype) / 255
    elif dtype == "uint16":
        photo = photo.astype(np.uint16) * 257
    elif dtype == "int16":
        photo = photo.astype(np.int16) * 100 - 12800
    colour = np.stack([make_image(dtype, 3 + c) for c in range(3)], axis=-1)
    return {"generated": make_image(dtype, 1), "colour": colour, "strided": make_image(dtype, 2, (80, 90))[::2, 1::3],
            "photo": photo.astype(dtype)}


def assert_same(ours, theirs):
    """Same type, dtype and shape; equal values (float results of CuPy inputs: within 1e-6 relative)."""
    on_device = not isinstance(ours, (np.ndarray, np.generic, tuple)) and hasattr(ours, "get")
    ours = host(ours)
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b)
        return
    assert type(ours) == type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, np.ndarray) or isinstance(theirs, np.generic):
        assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
        assert np.shape(ours) == np.shape(theirs)
    if on_device and np.asarray(theirs).dtype.kind == "f":
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(ours, theirs)


def call_both(module, name, image, *args, **kwargs):
    ours_mod = exposure if hasattr(exposure, name) else filters
    theirs_mod = sk_exposure if hasattr(sk_exposure, name) else sk_filters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn about colour-like shapes alike; tested in the ported cases
        theirs = getattr(theirs_mod, name)(image, *args, **kwargs)
        ours = getattr(ours_mod, name)(to_module(image, module), *[to_module(a, module) if isinstance(a, np.ndarray)
                                                                     else a for a in args], **kwargs)
    return ours, theirs


@pytest.mark.parametrize("module", ARRAY_MODULES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_histogram(module, dtype):
    for name, img in images(dtype).items():
        for kwargs in [{}, {"nbins": 17}, {"source_range": "dtype"}, {"normalize": True}]:
            ours, theirs = call_both(module, "histogram", img, **kwargs)
            assert_same(ours, theirs)
        if img.ndim == 3:
            for axis in (-1, 0):
                ours, theirs = call_both(module, "histogram", img, channel_axis=axis)
                assert_same(ours, theirs)


@pytest.mark.parametrize("module", ARRAY_MODULES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_equalize_hist(module, dtype):
    for name, img in images(dtype).items():
        assert_same(*call_both(module, "equalize_hist", img))
        assert_same(*call_both(module, "equalize_hist", img, nbins=31))
        mask = np.zeros(img.shape, bool)
        mask[::3, 5:] = True
        assert_same(*call_both(module, "equalize_hist", img, mask=mask))


RANGES = [("image", "dtype"), ((0.1, 0.6), "dtype"), ("image", (0, 1)), ("dtype", "image"), ("image", "uint8"),
          ("image", "uint12"), ("image", np.float32), ("image", "float"), ((-200, 900), (-5, 5)), ("uint8", "dtype"),
          ("image", (3, 3)), ((50, 50), "dtype")]


@pytest.mark.parametrize("module", ARRAY_MODULES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_rescale_intensity(module, dtype):
    for name, img in images(dtype).items():
        for in_range, out_range in RANGES:
            assert_same(*call_both(module, "rescale_intensity", img, in_range, out_range))
        # The percentile stretch of skimage's gallery: np.percentile values as in_range.
        p2, p98 = np.percentile(img, (2, 98))
        assert_same(*call_both(module, "rescale_intensity", img, in_range=(p2, p98)))


@pytest.mark.parametrize("module", ARRAY_MODULES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_match_histograms(module, dtype):
    reference_rules_or_skip("match_histograms")
    imgs = images(dtype)
    ref = make_image(dtype, 9, (40, 50))
    for name, img in imgs.items():
        reference = ref if img.ndim == 2 else np.stack([ref, ref[::-1], make_image(dtype, 11, ref.shape)], -1)
        assert_same(*call_both(module, "match_histograms", img, reference))
        if img.ndim == 3:
            for axis in (-1, 0):
                a, r = np.moveaxis(img, -1, axis), np.moveaxis(reference, -1, axis)
                assert_same(*call_both(module, "match_histograms", a, r, channel_axis=axis))
    # A reference of another dtype.
    other = make_image("float64" if dtype != "float64" else "uint8", 10, (30, 30))
    assert_same(*call_both(module, "match_histograms", imgs["generated"], other))


@pytest.mark.parametrize("module", ARRAY_MODULES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_thresholds(module, dtype):
    if dtype in ("uint16", "int16"):
        reference_rules_or_skip(f"thresholds of {dtype} images")
    for name, img in images(dtype).items():
        gray = img if img.ndim == 2 else img[..., 0]
        for kwargs in [{}, {"nbins": 64}]:
            assert_same(*call_both(module, "threshold_otsu", gray, **kwargs))
            assert_same(*call_both(module, "threshold_triangle", gray, **kwargs))
        # scikit-image's exhaustive search visits L^(classes-1) combinations of the L levels an integer image
        # spans: 4 classes only on narrow spans. Spans above 4096: test_multiotsu_wide_integer_images.
        span = int(np.ptp(gray)) + 1 if np.dtype(dtype).kind != "f" else 256
        for classes in [c for c in (2, 3, 4) if span <= 4096 and (c < 4 or span <= 300)]:
            ours, theirs = call_both(module, "threshold_multiotsu", gray, classes)
            assert_same(ours, theirs)
        assert_same(*call_both(module, "threshold_multiotsu", gray.astype(np.float64), 3, 100))


def test_thresholds_of_constant_images_return_the_value():
    for dtype in DTYPES + ["int8", "int64"]:
        img = np.full((7, 9), 3, dtype)
        assert_same(*call_both("numpy", "threshold_otsu", img))


def test_thresholds_from_histograms():
    img = make_image("uint8", 5)
    counts, centers = sk_exposure.histogram(img)
    for hist in [counts, (counts, centers), np.bincount(img.ravel()), (counts / counts.sum(), centers)]:
        assert_same(filters.threshold_otsu(hist=hist), sk_filters.threshold_otsu(hist=hist))
        for classes in (2, 3, 4):
            assert_same(filters.threshold_multiotsu(hist=hist, classes=classes),
                        sk_filters.threshold_multiotsu(hist=hist, classes=classes))


def test_multiotsu_wide_integer_images():
    wide = np.arange(0, 5000, dtype=np.uint16).reshape(50, 100)
    with pytest.raises(imghist.UnsupportedError, match="at most 4096"):
        filters.threshold_multiotsu(wide)
    # as floats with nbins bins: skimage's answer
    assert_same(filters.threshold_multiotsu(wide.astype(np.float64), 3, 300),
                sk_filters.threshold_multiotsu(wide.astype(np.float64), 3, 300))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint32"])
def test_other_integer_dtypes(dtype):
    img = np.clip(make_image("int16", 4), np.iinfo(dtype).min, np.iinfo(dtype).max).astype(dtype)
    assert_same(*call_both("numpy", "histogram", img))
    assert_same(*call_both("numpy", "equalize_hist", img))
    assert_same(*call_both("numpy", "rescale_intensity", img))
    assert_same(*call_both("numpy", "match_histograms", img, img[::-1] // 2))
    assert_same(*call_both("numpy", "threshold_otsu", img))
    assert_same(*call_both("numpy", "threshold_triangle", img))


def test_n_dimensional_images():
    vol = make_image("uint8", 6, (6, 20, 30))
    for name in ["histogram", "equalize_hist", "rescale_intensity", "threshold_otsu", "threshold_multiotsu"]:
        assert_same(*call_both("numpy", name, vol))
    one_d = make_image("uint16", 7, (1, 500))[0]
    for name in ["histogram", "equalize_hist", "rescale_intensity", "threshold_otsu", "threshold_triangle"]:
        assert_same(*call_both("numpy", name, one_d))
