"""imghist.equalizeHist, equalizeHistColor, threshold and createCLAHE against cv2 on the photographs and generated images,
on every backend present."""
import cv2
import numpy as np
import pytest

import imghist
from conftest import BACKENDS, SIZES, cv2_equalize_color, photographs, random_image, roi_views

THRESH_TYPES = [imghist.THRESH_BINARY, imghist.THRESH_BINARY_INV, imghist.THRESH_TRUNC, imghist.THRESH_TOZERO,
                imghist.THRESH_TOZERO_INV]


def gray_photographs():
    out = {}
    for name, img in photographs().items():
        out[name] = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    return out


def gray_cases(dtype="uint8"):
    """Photographs (uint8 only) and generated images of odd sizes, constant ones included, with views."""
    cases = {}
    if dtype == "uint8":
        for name, img in gray_photographs().items():
            cases[name] = img
            cases[name + " roi"] = img[5:-3, 7:-10]
    for i, (h, w) in enumerate(SIZES):
        img = random_image((h, w), dtype, 300 + i)
        for view_name, view in roi_views(img).items():
            cases[f"{h}x{w} {view_name}"] = view
    cases["constant"] = np.full((21, 35), 77, dtype)
    return cases


def test_constants_are_cv2s():
    for name in ["THRESH_BINARY", "THRESH_BINARY_INV", "THRESH_TRUNC", "THRESH_TOZERO", "THRESH_TOZERO_INV",
                 "THRESH_MASK", "THRESH_OTSU", "THRESH_TRIANGLE"]:
        assert getattr(imghist, name) == getattr(cv2, name), name


@pytest.mark.parametrize("backend", BACKENDS)
def test_equalize_hist_matches_cv2(backend):
    for name, img in gray_cases().items():
        got = imghist.equalizeHist(img, backend=backend)
        assert got.dtype == np.uint8 and got.shape == img.shape
        np.testing.assert_array_equal(got, cv2.equalizeHist(img), err_msg=name)
    # dst given (a ROI of a larger array): written in place and returned.
    img = gray_photographs()["camera.png"]
    big = np.zeros((img.shape[0] + 4, img.shape[1] + 6), np.uint8)
    dst = big[2:-2, 3:-3]
    assert imghist.equalizeHist(img, dst, backend=backend) is dst
    np.testing.assert_array_equal(dst, cv2.equalizeHist(img))
    assert not big[:2].any() and not big[:, :3].any()
    # An empty image gives an empty result (cv2 returns at once too).
    assert imghist.equalizeHist(np.zeros((0, 3), np.uint8), backend=backend).shape == (0, 3)


def colour_cases():
    cases = {}
    for name, img in photographs().items():
        if img.ndim == 3:
            cases[name] = img
            cases[name + " roi"] = img[5:-3, 7:-10]
            cases[name + " bgra"] = np.dstack([img, random_image(img.shape[:2], "uint8", 5)])
    for i, (h, w) in enumerate(SIZES):
        for c in (3, 4):
            for view_name, view in roi_views(random_image((h, w, c), "uint8", 400 + i)).items():
                cases[f"{h}x{w}x{c} {view_name}"] = view
    cases["constant"] = np.full((21, 35, 3), 77, np.uint8)
    return cases


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["luma", "per-channel"])
def test_equalize_hist_color_matches_cv2_compositions(backend, mode):
    for name, img in colour_cases().items():
        got = imghist.equalizeHistColor(img, mode, backend=backend)
        assert got.dtype == np.uint8 and got.shape == img.shape
        np.testing.assert_array_equal(got, cv2_equalize_color(img, mode), err_msg=f"{name} {mode}")
    img = photographs()["astronaut.png"]
    dst = np.zeros_like(img)
    assert imghist.equalizeHistColor(img, mode=mode, dst=dst, backend=backend) is dst
    np.testing.assert_array_equal(dst, cv2_equalize_color(img, mode))
    assert imghist.equalizeHistColor(np.zeros((0, 3, 3), np.uint8), mode, backend=backend).shape == (0, 3, 3)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32"])
@pytest.mark.parametrize("channels", [1, 3, 4])
def test_threshold_fixed_matches_cv2(backend, dtype, channels):
    threshes = {"uint8": [-1.0, 0.0, 99.5, 254.0, 255.0, 300.0], "uint16": [-1.0, 1000.3, 65534.0, 70000.0],
                "float32": [-3.25, 0.0, 120.5, 1e9]}[dtype]
    maxvals = {"uint8": [255.0, 100.7], "uint16": [65535.0, 4095.5], "float32": [1.0, 250.5]}[dtype]
    for i, (h, w) in enumerate(SIZES[2:]):
        shape = (h, w) if channels == 1 else (h, w, channels)
        img = random_image(shape, dtype, 500 + i)
        for view_name, view in roi_views(img).items():
            for t in threshes:
                for m in maxvals:
                    for typ in THRESH_TYPES:
                        r_exp, expected = cv2.threshold(view, t, m, typ)
                        r_got, got = imghist.threshold(view, t, m, typ, backend=backend)
                        what = f"{dtype} {shape} {view_name} thresh {t} maxval {m} type {typ}"
                        assert r_got == r_exp, what
                        assert got.dtype == expected.dtype and got.shape == expected.shape, what
                        np.testing.assert_array_equal(got, expected, err_msg=what)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("automatic", [imghist.THRESH_OTSU, imghist.THRESH_TRIANGLE])
def test_threshold_otsu_and_triangle_match_cv2(backend, automatic):
    dtypes = ["uint8", "uint16"] if automatic == imghist.THRESH_OTSU else ["uint8"]
    for dtype in dtypes:
        cases = gray_cases(dtype)
        if dtype == "uint16":  # the photographs spread over the 16-bit range too
            for name, img in gray_photographs().items():
                cases[name + " x257"] = img.astype(np.uint16) * 257
        maxval = 200 if dtype == "uint8" else 60000
        for name, img in cases.items():
            for typ in THRESH_TYPES:
                r_exp, expected = cv2.threshold(img, 0, maxval, typ | automatic)
                r_got, got = imghist.threshold(img, 0, maxval, typ | automatic, backend=backend)
                assert r_got == r_exp, f"{name} type {typ}"
                np.testing.assert_array_equal(got, expected, err_msg=f"{name} type {typ}")


def clahe_compare(got, expected, what):
    diff = np.abs(got.astype(np.int64) - expected.astype(np.int64))
    assert diff.max(initial=0) <= 1, what  # the documented contract: within one grey level of cv2
    return int(np.count_nonzero(diff)), diff.size


@pytest.mark.parametrize("backend", BACKENDS)
def test_clahe_within_one_level_of_cv2_and_identical_on_most_pixels(backend):
    differing = total = 0
    # 16-bit CLAHE works on 65536-bin tile histograms (slow in cv2 too): fewer combinations.
    grids = {"uint8": [(8, 8), (3, 5), (1, 1), (16, 16)], "uint16": [(8, 8), (3, 5)]}
    clips = {"uint8": [0.0, 2.0, 40.0], "uint16": [0.0, 2.0]}
    for dtype in ["uint8", "uint16"]:
        for name, img in gray_cases(dtype).items():
            if img.shape[0] < 2 or img.shape[1] < 2:
                continue
            for gx, gy in grids[dtype]:
                for clip in clips[dtype]:
                    expected = cv2.createCLAHE(clip, (gx, gy)).apply(img)
                    c = imghist.createCLAHE(clipLimit=clip, tileGridSize=(gx, gy), backend=backend)
                    got = c.apply(img)
                    assert got.dtype == img.dtype and got.shape == img.shape
                    d, t = clahe_compare(got, expected, f"{dtype} {name} grid {gx}x{gy} clip {clip}")
                    differing += d
                    total += t
    assert total > 0
    assert differing * 100 <= total, f"{differing} of {total} pixels differ by one grey level"


def test_clahe_accessors_like_cv2():
    c = imghist.createCLAHE()
    r = cv2.createCLAHE()
    assert c.getClipLimit() == r.getClipLimit() and c.getTilesGridSize() == r.getTilesGridSize()
    c.setClipLimit(3.0)
    c.setTilesGridSize((4, 6))
    assert c.getClipLimit() == 3.0 and c.getTilesGridSize() == (4, 6)
    img = gray_photographs()["camera.png"]
    d, t = clahe_compare(c.apply(img), cv2.createCLAHE(3.0, (4, 6)).apply(img), "accessors")
    assert d * 100 <= t


@pytest.mark.skipif(not imghist.cuda_available(), reason="no CUDA device: backend comparison skipped")
def test_cpu_and_cuda_backends_agree_exactly():
    for name, img in gray_photographs().items():
        np.testing.assert_array_equal(imghist.CLAHE(2.0, backend="cpu").apply(img),
                                      imghist.CLAHE(2.0, backend="cuda").apply(img), err_msg=name)
        for typ in [imghist.THRESH_BINARY | imghist.THRESH_OTSU, imghist.THRESH_TOZERO | imghist.THRESH_TRIANGLE]:
            a = imghist.threshold(img, 0, 255, typ, backend="cpu")
            b = imghist.threshold(img, 0, 255, typ, backend="cuda")
            assert a[0] == b[0], name
            np.testing.assert_array_equal(a[1], b[1], err_msg=name)
