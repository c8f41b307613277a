"""imghist.hist and imghist.calcHist against cv2.calcHist (uint8, uint16, float32) and against an
independent NumPy computation of the documented binning rule (int32, which cv2.calcHist does not take)."""
import cv2
import numpy as np
import pytest

import imghist
from conftest import BACKENDS, SIZES, cv2_calcHist, photographs, random_image, roi_views


def cv2_hist(img, bins, lo, hi, mask=None):
    """cv2's counts for every channel: (bins,) for 2-D, (C, bins) for 3-D, as int64."""
    if img.ndim == 2:
        return cv2_calcHist([img], [0], mask, [bins], [lo, hi]).ravel().astype(np.int64)
    return np.stack([cv2_calcHist([img], [c], mask, [bins], [lo, hi]).ravel().astype(np.int64)
                     for c in range(img.shape[2])])


def rule_hist(img, bins, lo, hi, mask=None):
    """The rule of cv2.calcHist for uniform bins, in double precision: counted when lo <= v < hi, in bin
    floor(v * a + b) with a = bins / (hi - lo), b = -a * lo, clamped to [0, bins)."""
    a = bins / (hi - lo)
    b = -a * lo
    chans = [img] if img.ndim == 2 else [img[:, :, c] for c in range(img.shape[2])]
    out = []
    for ch in chans:
        v = ch.astype(np.float64)
        ok = (v >= lo) & (v < hi)
        if mask is not None:
            ok &= mask != 0
        idx = np.clip(np.floor(v[ok] * a + b), 0, bins - 1).astype(np.int64)
        out.append(np.bincount(idx, minlength=bins))
    return out[0] if img.ndim == 2 else np.stack(out)


def assert_counts(got, expected):
    assert got.dtype == np.int64
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_photographs_hist_and_calchist_match_cv2(backend):
    rng = np.random.default_rng(7)
    for name, img in photographs().items():
        for bins, lo, hi in [(256, 0, 256), (64, 0, 256), (37, 10, 250)]:
            assert_counts(imghist.hist(img, bins, (lo, hi), backend=backend), cv2_hist(img, bins, lo, hi))
            mask = (rng.random(img.shape[:2]) < 0.4).astype(np.uint8)
            assert_counts(imghist.hist(img, bins, (lo, hi), mask=mask, backend=backend),
                          cv2_hist(img, bins, lo, hi, mask))
            for c in range(1 if img.ndim == 2 else img.shape[2]):
                expected = cv2_calcHist([img], [c], mask, [bins], [lo, hi])
                got = imghist.calcHist([img], [c], mask, [bins], [lo, hi], backend=backend)
                assert got.dtype == np.float32 and got.shape == (bins, 1), name
                np.testing.assert_array_equal(got, expected, err_msg=f"{name} channel {c}")
        # The default range of uint8 is [0, 256).
        assert_counts(imghist.hist(img, backend=backend), cv2_hist(img, 256, 0, 256))


CASES = [  # dtype, bins, range; cv2 is the reference for every dtype but int32
    ("uint8", 256, (0, 256)), ("uint8", 64, (0, 256)), ("uint8", 37, (3, 201)),
    ("uint16", 1024, (0, 65536)), ("uint16", 300, (100, 40000)),
    ("float32", 100, (0, 256)), ("float32", 7, (-3.5, 120.25)),
    ("int32", 1024, (0, 1024)), ("int32", 999, (-70000, 2 ** 30)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype,bins,rng_", CASES)
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_generated_images_every_dtype_size_and_layout(backend, dtype, bins, rng_, channels):
    lo, hi = rng_
    seed = 100
    for h, w in SIZES:
        shape = (h, w) if channels == 1 else (h, w, channels)
        if dtype == "int32":
            img = random_image(shape, dtype, seed, low=-2 ** 31 if lo < 0 else -50, high=2 ** 31 - 1 if lo < 0 else 1100)
        elif dtype == "float32":
            img = random_image(shape, dtype, seed, low=lo - 20, high=hi + 20)
            img.flat[3::11] = np.inf    # never counted (NaN: see test_nan_is_never_counted)
            img.flat[4::11] = -np.inf
            img.flat[5::13] = lo        # exactly the low edge: counted in bin 0
            img.flat[6::17] = hi        # exactly the high edge: not counted
        else:
            img = random_image(shape, dtype, seed)
        seed += 1
        for view_name, view in roi_views(img).items():
            expected = rule_hist(view, bins, lo, hi) if dtype == "int32" else cv2_hist(view, bins, lo, hi)
            got = imghist.hist(view, bins, rng_, backend=backend)
            np.testing.assert_array_equal(got, expected, err_msg=f"{dtype} {shape} {view_name}")
            if dtype != "int32":
                # cv2 itself agrees with the rule (the reference above is cv2 for these dtypes).
                for c in range(channels):
                    got_c = imghist.calcHist([view], [c], None, [bins], [lo, hi], backend=backend)
                    np.testing.assert_array_equal(got_c, cv2_calcHist([view], [c], None, [bins], [lo, hi]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_and_empty_images(backend):
    for dtype in ["uint8", "uint16"]:
        img = np.full((19, 23), 200, dtype)
        expected = np.zeros(256, np.int64)
        expected[200 * 256 // (256 if dtype == "uint8" else 65536)] = 19 * 23
        assert_counts(imghist.hist(img, backend=backend), expected)
    for shape in [(0, 0), (0, 5), (5, 0), (0, 4, 3)]:
        got = imghist.hist(np.zeros(shape, np.uint8), backend=backend)
        assert_counts(got, np.zeros((256,) if len(shape) == 2 else (3, 256), np.int64))
        np.testing.assert_array_equal(imghist.calcHist([np.zeros(shape, np.uint8)], [0], None, [256], [0, 256]),
                                      cv2_calcHist([np.zeros(shape, np.uint8)], [0], None, [256], [0, 256]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_calchist_channel_numbering_over_several_images_and_accumulate(backend):
    gray = random_image((40, 30), "uint8", 1)
    bgr = random_image((40, 30, 3), "uint8", 2)
    for c in range(4):
        np.testing.assert_array_equal(
            imghist.calcHist([gray, bgr], [c], None, [256], [0, 256], backend=backend),
            cv2_calcHist([gray, bgr], [c], None, [256], [0, 256]))
    first = cv2_calcHist([gray], [0], None, [50], [0, 256])
    expected = cv2_calcHist([bgr], [1], None, [50], [0, 256], first.copy(), True)
    got = imghist.calcHist([bgr], [1], None, [50], [0, 256], first.copy(), True, backend=backend)
    np.testing.assert_array_equal(got, expected)


def test_hist_defaults_and_shapes():
    img = random_image((10, 12, 1), "uint8", 3)
    got = imghist.hist(img, backend="cpu")
    assert got.shape == (1, 256)   # an (H, W, C) image gives one row per channel, also for C = 1
    np.testing.assert_array_equal(got[0], cv2_hist(img[:, :, 0], 256, 0, 256))
    u16 = random_image((10, 12), "uint16", 4)
    np.testing.assert_array_equal(imghist.hist(u16, 64, backend="cpu"), cv2_hist(u16, 64, 0, 65536))


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_is_never_counted(backend):
    # imghist never counts NaN (documented); cv2.calcHist bins it wherever its floor of NaN lands, so the
    # reference here is the rule, not cv2.
    for shape in [(1, 1), (1, 17), (33, 31), (20, 21, 3)]:
        img = random_image(shape, "float32", 9, low=-5, high=300)
        img.flat[::7] = np.nan
        for bins, lo, hi in [(7, -3.5, 120.25), (256, 0, 256)]:
            got = imghist.hist(img, bins, (lo, hi), backend=backend)
            np.testing.assert_array_equal(got, rule_hist(img, bins, lo, hi), err_msg=f"{shape}")
