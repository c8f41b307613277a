"""imghist.batch: one call over a batch (a list of images of any sizes, or one (N, H, W[, C]) array), image i equal
to cv2's (or scikit-image's) answer for image i — the references of the single-image tests, applied image by
image — on every backend present, and on CuPy / torch device arrays where a GPU exists."""
import cv2
import numpy as np
import pytest

import imghist
from conftest import BACKENDS, device_framework, photographs, random_image

THRESH_TYPES = [imghist.THRESH_BINARY, imghist.THRESH_BINARY_INV, imghist.THRESH_TRUNC, imghist.THRESH_TOZERO,
                imghist.THRESH_TOZERO_INV]


def gray_photos():
    return [p if p.ndim == 2 else cv2.cvtColor(p, cv2.COLOR_BGR2GRAY) for p in photographs().values()]


def uniform_batch(n, h, w, dtype="uint8", channels=None, seed=0):
    """n images: random ones, a constant one and, where they fit, crops of the photographs."""
    shape = (n, h, w) if channels is None else (n, h, w, channels)
    out = random_image(shape, dtype, seed)
    if n > 1:
        out[1] = 77
    for i, p in enumerate(gray_photos()[: max(0, n - 2)]):
        if channels is None and dtype == "uint8" and p.shape[0] >= h and p.shape[1] >= w:
            out[2 + i] = p[:h, :w]
    return out


def mixed_list(dtype="uint8", channels=None, seed=1):
    """Images from 1x1 to a photograph, odd sizes, a constant one, ROI views of a larger image."""
    sizes = [(1, 1), (1, 17), (17, 1), (31, 33), (64, 48), (131, 257)]
    imgs = [random_image((h, w) if channels is None else (h, w, channels), dtype, seed + i)
            for i, (h, w) in enumerate(sizes)]
    imgs.append(np.full((21, 35) if channels is None else (21, 35, channels), 77, dtype))
    big = random_image((90, 120) if channels is None else (90, 120, channels), dtype, seed + 50)
    imgs += [big[3:-2, 5:-9], big[1:40, 17:18 + 64]]
    if channels is None and dtype == "uint8":
        imgs += gray_photos()
    return imgs


def batch_forms(uniform):
    """The same images as one array, as a strided view (every second image, a ROI of every image), as a list."""
    strided = np.repeat(uniform, 2, axis=0)[::2]
    big = np.zeros((uniform.shape[0], uniform.shape[1] + 5, uniform.shape[2] + 9) + uniform.shape[3:], uniform.dtype)
    big[:, 2:-3, 4:-5] = uniform
    return {"array": uniform, "every second": strided, "roi of each": big[:, 2:-3, 4:-5], "list": list(uniform)}


def assert_each(got, images, reference, what):
    assert len(got) == len(images), what
    for i, (g, img) in enumerate(zip(got, images)):
        expected = reference(img)
        assert g.dtype == expected.dtype and g.shape == expected.shape, f"{what}: image {i}"
        np.testing.assert_array_equal(g, expected, err_msg=f"{what}: image {i}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_equalize_hist_of_every_form_equals_cv2_per_image(backend):
    uniform = uniform_batch(6, 48, 64)
    for form, batch in batch_forms(uniform).items():
        got = imghist.batch.equalizeHist(batch, backend=backend)
        assert isinstance(got, list) == (form == "list"), form
        if form != "list":
            assert got.shape == uniform.shape
        assert_each(got, uniform, cv2.equalizeHist, form)
    assert_each(imghist.batch.equalizeHist(mixed_list(), backend=backend), mixed_list(), cv2.equalizeHist, "mixed list")
    # dst given: written and returned.
    dst = np.zeros_like(uniform)
    assert imghist.batch.equalizeHist(uniform, dst, backend=backend) is dst
    assert_each(dst, uniform, cv2.equalizeHist, "dst")


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_images_and_empty_batches(backend):
    assert imghist.batch.equalizeHist(np.zeros((0, 5, 7), np.uint8), backend=backend).shape == (0, 5, 7)
    assert imghist.batch.equalizeHist(np.zeros((3, 0, 7), np.uint8), backend=backend).shape == (3, 0, 7)
    assert imghist.batch.equalizeHist([], backend=backend) == []
    imgs = [random_image((9, 11), "uint8", 3), np.zeros((0, 4), np.uint8), random_image((5, 6), "uint8", 4)]
    got = imghist.batch.equalizeHist(imgs, backend=backend)
    assert got[1].shape == (0, 4)
    np.testing.assert_array_equal(got[0], cv2.equalizeHist(imgs[0]))
    np.testing.assert_array_equal(got[2], cv2.equalizeHist(imgs[2]))
    # cv2.threshold returns the given threshold for an empty image, 0 when it would compute one.
    t, _ = imghist.batch.threshold(imgs, 99, 255, imghist.THRESH_BINARY, backend=backend)
    assert list(t) == [99.0, 99.0, 99.0]
    t, out = imghist.batch.threshold(imgs, 0, 255, imghist.THRESH_BINARY | imghist.THRESH_OTSU, backend=backend)
    assert t[1] == 0.0 and t[0] == cv2.threshold(imgs[0], 0, 255, cv2.THRESH_OTSU)[0] and out[1].shape == (0, 4)


def cv2_equalize_color(img, mode):
    if mode == "per-channel":
        return cv2.merge([cv2.equalizeHist(c) for c in cv2.split(img)])
    ycrcb = cv2.cvtColor(img[:, :, :3], cv2.COLOR_BGR2YCrCb)
    ycrcb[:, :, 0] = cv2.equalizeHist(np.ascontiguousarray(ycrcb[:, :, 0]))
    bgr = cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2BGR)
    return bgr if img.shape[2] == 3 else np.dstack([bgr, img[:, :, 3]])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["luma", "per-channel"])
@pytest.mark.parametrize("channels", [3, 4])
def test_equalize_hist_color(backend, mode, channels):
    uniform = uniform_batch(4, 33, 47, channels=channels, seed=5)
    for form, batch in batch_forms(uniform).items():
        got = imghist.batch.equalizeHistColor(batch, mode, backend=backend)
        assert_each(got, uniform, lambda img: cv2_equalize_color(img, mode), f"{form} {mode}")
    imgs = mixed_list(channels=channels, seed=7)
    got = imghist.batch.equalizeHistColor(imgs, mode, backend=backend)
    assert_each(got, imgs, lambda img: cv2_equalize_color(img, mode), f"mixed {mode}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("automatic", [0, imghist.THRESH_OTSU, imghist.THRESH_TRIANGLE])
def test_threshold_returns_one_threshold_per_image(backend, automatic):
    dtypes = ["uint8", "uint16"] if automatic != imghist.THRESH_TRIANGLE else ["uint8"]
    for dtype in dtypes:
        maxval = 200 if dtype == "uint8" else 60000
        thresh = 0 if automatic else (99.5 if dtype == "uint8" else 1000.3)
        batches = {"uniform": uniform_batch(5, 40, 52, dtype, seed=11), "mixed": mixed_list(dtype, seed=12)}
        for name, images in batches.items():
            for typ in THRESH_TYPES:
                t, out = imghist.batch.threshold(images, thresh, maxval, typ | automatic, backend=backend)
                assert isinstance(t, np.ndarray) and t.dtype == np.float64 and t.shape == (len(images),)
                for i, img in enumerate(images):
                    r, expected = cv2.threshold(img, thresh, maxval, typ | automatic)
                    assert t[i] == r, f"{dtype} {name} image {i} type {typ}"
                    np.testing.assert_array_equal(out[i], expected, err_msg=f"{dtype} {name} image {i} type {typ}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_clahe_within_a_level_of_cv2_and_equal_to_the_single_call(backend):
    for dtype, grid in [("uint8", (8, 8)), ("uint8", (3, 5)), ("uint16", (4, 4))]:
        images = [img for img in mixed_list(dtype, seed=21) if min(img.shape) >= 2]
        c = imghist.batch.createCLAHE(clipLimit=2.0, tileGridSize=grid, backend=backend)
        assert isinstance(c, imghist.CLAHE) and c.getClipLimit() == 2.0 and c.getTilesGridSize() == grid
        got = c.apply(images)
        single = imghist.createCLAHE(2.0, grid, backend=backend)
        differing = total = 0
        for i, img in enumerate(images):
            expected = cv2.createCLAHE(2.0, grid).apply(img)
            d = np.abs(got[i].astype(np.int64) - expected.astype(np.int64))
            assert d.max(initial=0) <= 1, f"{dtype} {grid} image {i}"
            differing += int(np.count_nonzero(d))
            total += d.size
            # The batch's contract: the single call's output exactly.
            np.testing.assert_array_equal(got[i], single.apply(img), err_msg=f"{dtype} {grid} image {i}")
        assert differing * 100 <= total
        uniform = np.stack([img for img in images if img.shape == images[0].shape] * 3)
        np.testing.assert_array_equal(c.apply(uniform), np.stack([single.apply(img) for img in uniform]))


def skimage_module(name):
    return pytest.importorskip(f"skimage.{name}", reason="scikit-image (the reference) is not installed")


def sk_stretch(img, low, high):
    """rescale_intensity between np.percentile's low and 100 - high, per channel (mode='per-channel')."""
    exposure = skimage_module("exposure")
    if img.ndim == 2:
        return exposure.rescale_intensity(img, in_range=tuple(np.percentile(img, (low, 100 - high))))
    out = img.copy()
    for c in range(img.shape[2]):
        ch = img[..., c]
        out[..., c] = exposure.rescale_intensity(ch, in_range=tuple(np.percentile(ch, (low, 100 - high))))
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_stretch_contrast_each_image_with_its_own_percentiles(backend):
    for dtype, channels in [("uint8", None), ("uint16", None), ("uint8", 3), ("uint16", 4)]:
        for name, images in {"uniform": uniform_batch(4, 30, 41, dtype, channels, 31),
                             "mixed": mixed_list(dtype, channels, 32)}.items():
            got = imghist.batch.stretchContrast(images, 2, 1, mode="per-channel", backend=backend)
            assert_each(got, images, lambda img: sk_stretch(img, 2, 1), f"{dtype} {channels} {name}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_match_histograms_to_one_reference(backend):
    exposure = skimage_module("exposure")
    for dtype in ["uint8", "uint16"]:
        ref = random_image((37, 29), dtype, 41, 10, 200 if dtype == "uint8" else 9000)
        for name, images in {"uniform": uniform_batch(4, 30, 41, dtype, seed=42), "mixed": mixed_list(dtype, seed=43)}.items():
            got = imghist.batch.matchHistograms(images, ref, backend=backend)
            assert_each(got, images, lambda img: np.round(exposure.match_histograms(img, ref)).astype(dtype),
                        f"{dtype} {name}")


def scaled_labels(img, thresholds):
    top = 255 if img.dtype == np.uint8 else 65535
    k1 = len(thresholds)
    labels = np.digitize(img, thresholds).astype(np.int64)
    return ((labels * top + k1 // 2) // k1).astype(img.dtype)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("classes", [2, 3, 4])
def test_threshold_multiotsu(backend, classes):
    filters = skimage_module("filters")
    rng = np.random.default_rng(classes)
    images = [np.clip(rng.normal(128, 30, (57, 71)), 0, 255).astype(np.uint8), gray_photos()[0][:100, :150],
              np.clip(rng.normal(60, 50, (9, 300)), 0, 255).astype(np.uint8)]
    t, labels = imghist.batch.thresholdMultiOtsu(images, classes, backend=backend)
    assert t.dtype == np.int64 and t.shape == (3, classes - 1)
    for i, img in enumerate(images):
        expected = [int(v) for v in filters.threshold_multiotsu(img, classes)]
        assert list(t[i]) == expected, i
        np.testing.assert_array_equal(labels[i], scaled_labels(img, expected), err_msg=str(i))


def test_the_namespace_says_what_a_3d_array_is():
    gray3 = uniform_batch(3, 20, 30)                     # in imghist.batch: three gray images
    assert_each(imghist.batch.equalizeHist(gray3), gray3, cv2.equalizeHist, "3-D batch")
    with pytest.raises(imghist.UnsupportedError):        # in imghist: one (H, W, C) image, which is not gray
        imghist.equalizeHist(np.zeros((20, 30, 3), np.uint8))
    with pytest.raises(imghist.InvalidArgumentError, match=r"batch.equalizeHist: expected a list of images or an "
                                                           r"\(N, H, W\) / \(N, H, W, C\) array, got 2 dimensions"):
        imghist.batch.equalizeHist(np.zeros((20, 30), np.uint8))
    with pytest.raises(imghist.InvalidArgumentError, match="batch image 1"):
        imghist.batch.equalizeHist([np.zeros((4, 4), np.uint8), np.zeros((4, 4, 3), np.uint8)])
    with pytest.raises(imghist.UnsupportedError, match=r"batch.equalizeHist: uint8 images only"):
        imghist.batch.equalizeHist(np.zeros((2, 4, 4), np.uint16))


# ---- device arrays (CuPy, torch): skipped without them and a GPU --------------------------------------------------

@pytest.mark.parametrize("framework", ["cupy", "torch"])
def test_device_batches(framework):
    mod = device_framework(framework)
    up = (lambda a: mod.asarray(a)) if framework == "cupy" else (lambda a: mod.from_numpy(np.ascontiguousarray(a)).cuda())
    down = (lambda d: mod.asnumpy(d)) if framework == "cupy" else (lambda d: d.cpu().numpy())
    uniform = uniform_batch(8, 48, 64, seed=61)
    got = imghist.batch.equalizeHist(up(uniform))
    assert type(got) is type(up(uniform))
    assert_each(down(got), uniform, cv2.equalizeHist, f"{framework} array")
    got = imghist.batch.equalizeHist([up(img) for img in mixed_list()])
    assert_each([down(g) for g in got], mixed_list(), cv2.equalizeHist, f"{framework} list")
    # Automatic thresholds stay on the device: an int32 array of the input's kind, one level per image.
    for automatic in (imghist.THRESH_OTSU, imghist.THRESH_TRIANGLE):
        t, out = imghist.batch.threshold(up(uniform), 0, 255, imghist.THRESH_BINARY | automatic)
        assert type(t) is type(up(uniform)) and str(t.dtype).endswith("int32") and tuple(t.shape) == (8,)
        for i, img in enumerate(uniform):
            r, expected = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | automatic)
            assert int(down(t)[i]) == r
            np.testing.assert_array_equal(down(out)[i], expected)
    images = [img for img in mixed_list() if min(img.shape) >= 2]
    got = imghist.batch.createCLAHE(2.0, (8, 8)).apply([up(i) for i in images])
    single = imghist.createCLAHE(2.0, (8, 8), backend="cpu")
    for i, img in enumerate(images):
        np.testing.assert_array_equal(down(got[i]), single.apply(img), err_msg=str(i))
