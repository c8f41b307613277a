"""scikit-image's own test cases for the functions imghist.exposure and imghist.filters provide, run against
them: adapted from scikit-image 0.19's skimage/exposure/tests/test_exposure.py,
skimage/exposure/tests/test_histogram_matching.py and skimage/filters/tests/test_thresholding.py
(BSD-3-Clause, Copyright (C) 2019, the scikit-image team). The cases keep scikit-image's assertions; where
they name a scikit-image internal (intensity_range, _match_cumulative_cdf) or a deprecated argument
(multichannel=), the case calls the public function that covers it. Exactness against scikit-image's own
results is tested in test_skimage_exact.py.
"""
import re
import warnings
from contextlib import contextmanager

import numpy as np
import pytest
from numpy.testing import (assert_allclose, assert_almost_equal, assert_array_almost_equal, assert_array_equal,
                           assert_equal)

skimage = pytest.importorskip("skimage", reason="scikit-image (the reference) is not installed")
from skimage import data, util  # noqa: E402
from skimage.color import rgb2gray  # noqa: E402
from skimage.draw import disk  # noqa: E402
from skimage.util.dtype import dtype_range  # noqa: E402

from imghist import exposure  # noqa: E402
from imghist.exposure import histogram  # noqa: E402
from imghist.filters import threshold_multiotsu, threshold_otsu, threshold_triangle  # noqa: E402


def supported_float_type(dtype):
    return np.float32 if np.dtype(dtype) in (np.float16, np.float32) else np.float64


@contextmanager
def expected_warnings(patterns):
    """Every pattern must match a warning raised inside the block."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    messages = [str(w.message) for w in caught]
    for p in patterns:
        assert any(re.search(p, m) for m in messages), f"no warning matching {p!r} in {messages}"


# ---- test_exposure.py: integer histograms ---------------------------------------------------------------------

def test_wrong_source_range():
    im = np.array([-1, 100], dtype=np.int8)
    with pytest.raises(ValueError):
        exposure.histogram(im, source_range='foobar')


# scikit-image's test_negative_overflow and test_all_negative_image, one case each.
@pytest.mark.parametrize("values, centers", [
    pytest.param([-1, 100], np.arange(-1, 101), id="negative_overflow"),
    pytest.param([-100, -1], np.arange(-100, 0), id="all_negative_image"),
])
def test_negative_int8_values(values, centers):
    im = np.array(values, dtype=np.int8)
    frequencies, bin_centers = exposure.histogram(im)
    assert_array_equal(bin_centers, centers)
    assert frequencies[0] == 1
    assert frequencies[-1] == 1
    assert_array_equal(frequencies[1:-1], 0)


def test_int_range_image():
    im = np.array([10, 100], dtype=np.int8)
    frequencies, bin_centers = exposure.histogram(im)
    assert_equal(len(bin_centers), len(frequencies))
    assert_equal(bin_centers[0], 10)
    assert_equal(bin_centers[-1], 100)


def test_multichannel_int_range_image():
    im = np.array([[10, 5], [100, 102]], dtype=np.int8)
    frequencies, bin_centers = exposure.histogram(im, channel_axis=-1)
    for ch in range(im.shape[-1]):
        assert_equal(len(frequencies[ch]), len(bin_centers))
    assert_equal(bin_centers[0], 5)
    assert_equal(bin_centers[-1], 102)


def test_peak_uint_range_dtype():
    im = np.array([10, 100], dtype=np.uint8)
    frequencies, bin_centers = exposure.histogram(im, source_range='dtype')
    assert_array_equal(bin_centers, np.arange(0, 256))
    assert_equal(frequencies[10], 1)
    assert_equal(frequencies[100], 1)
    assert_equal(frequencies[101], 0)
    assert_equal(frequencies.shape, (256,))


def test_peak_int_range_dtype():
    im = np.array([10, 100], dtype=np.int8)
    frequencies, bin_centers = exposure.histogram(im, source_range='dtype')
    assert_array_equal(bin_centers, np.arange(-128, 128))
    assert_equal(frequencies[128 + 10], 1)
    assert_equal(frequencies[128 + 100], 1)
    assert_equal(frequencies[128 + 101], 0)
    assert_equal(frequencies.shape, (256,))


def test_flat_uint_range_dtype():
    im = np.linspace(0, 255, 256, dtype=np.uint8)
    frequencies, bin_centers = exposure.histogram(im, source_range='dtype')
    assert_array_equal(bin_centers, np.arange(0, 256))
    assert_equal(frequencies.shape, (256,))


def test_flat_int_range_dtype():
    im = np.linspace(-128, 128, 256, dtype=np.int8)
    frequencies, bin_centers = exposure.histogram(im, source_range='dtype')
    assert_array_equal(bin_centers, np.arange(-128, 128))
    assert_equal(frequencies.shape, (256,))


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_peak_float_out_of_range_image(dtype):
    im = np.array([10, 100], dtype=dtype)
    frequencies, bin_centers = exposure.histogram(im, nbins=90)
    assert bin_centers.dtype == dtype
    assert_array_equal(bin_centers, np.arange(10, 100) + 0.5)


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_peak_float_out_of_range_dtype(dtype):
    im = np.array([10, 100], dtype=dtype)
    nbins = 10
    frequencies, bin_centers = exposure.histogram(im, nbins=nbins, source_range='dtype')
    assert bin_centers.dtype == dtype
    assert_almost_equal(np.min(bin_centers), -0.9, 3)
    assert_almost_equal(np.max(bin_centers), 0.9, 3)
    assert_equal(len(bin_centers), 10)


def test_normalize():
    im = np.array([0, 255, 255], dtype=np.uint8)
    frequencies, bin_centers = exposure.histogram(im, source_range='dtype', normalize=False)
    expected = np.zeros(256)
    expected[0] = 1
    expected[-1] = 2
    assert_equal(frequencies, expected)
    frequencies, bin_centers = exposure.histogram(im, source_range='dtype', normalize=True)
    expected /= 3.
    assert_equal(frequencies, expected)


@pytest.mark.parametrize('source_range', ['dtype', 'image'])
@pytest.mark.parametrize('dtype', [np.uint8, np.int16, np.float64])
@pytest.mark.parametrize('channel_axis', [0, 1, -1])
def test_multichannel_hist_common_bins_uint8(dtype, source_range, channel_axis):
    """Check that all channels use the same binning."""
    shape = (5, 5)
    channel_size = shape[0] * shape[1]
    imin, imax = dtype_range[dtype]
    im = np.stack((np.full(shape, imin, dtype=dtype), np.full(shape, imax, dtype=dtype)), axis=channel_axis)
    frequencies, bin_centers = exposure.histogram(im, source_range=source_range, channel_axis=channel_axis)
    if np.issubdtype(dtype, np.integer):
        assert_array_equal(bin_centers, np.arange(imin, imax + 1))
    assert frequencies[0][0] == channel_size
    assert frequencies[0][-1] == 0
    assert frequencies[1][0] == 0
    assert frequencies[1][-1] == channel_size


# ---- test_exposure.py: histogram equalization ------------------------------------------------------------------

test_img_int = data.camera()
test_img = util.img_as_float(test_img_int)
test_img = skimage.exposure.rescale_intensity(test_img / 5. + 100)  # the reference prepares the input


def check_cdf_slope(cdf):
    """Slope of cdf which should equal 1 for an equalized histogram."""
    norm_intensity = np.linspace(0, 1, len(cdf))
    slope, intercept = np.polyfit(norm_intensity, cdf, 1)
    assert 0.9 < slope < 1.1


def test_equalize_uint8_approx():
    """Check integer bins used for uint8 images."""
    img_eq0 = exposure.equalize_hist(test_img_int)
    img_eq1 = exposure.equalize_hist(test_img_int, nbins=3)
    assert_allclose(img_eq0, img_eq1)


def test_equalize_ubyte():
    img = util.img_as_ubyte(test_img)
    img_eq = exposure.equalize_hist(img)
    cdf, bin_edges = skimage.exposure.cumulative_distribution(img_eq)
    check_cdf_slope(cdf)


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_equalize_float(dtype):
    img = util.img_as_float(test_img).astype(dtype, copy=False)
    img_eq = exposure.equalize_hist(img)
    assert img_eq.dtype == supported_float_type(dtype)
    cdf, bin_edges = skimage.exposure.cumulative_distribution(img_eq)
    check_cdf_slope(cdf)
    assert bin_edges.dtype == supported_float_type(dtype)


def test_equalize_masked():
    img = util.img_as_float(test_img)
    mask = np.zeros(test_img.shape)
    mask[100:400, 100:400] = 1
    img_mask_eq = exposure.equalize_hist(img, mask=mask)
    img_eq = exposure.equalize_hist(img)
    cdf, bin_edges = skimage.exposure.cumulative_distribution(img_mask_eq)
    check_cdf_slope(cdf)
    assert not (img_eq == img_mask_eq).all()


# ---- test_exposure.py: intensity ranges (intensity_range, through rescale_intensity) -------------------------

@pytest.mark.parametrize("test_input,expected", [('image', [0, 1]), ('dtype', [0, 255]), ((10, 20), [10, 20])])
def test_intensity_range_uint8(test_input, expected):
    # intensity_range(image, test_input) == expected, seen through rescale_intensity's in_range.
    image = np.array([0, 1], dtype=np.uint8)
    assert_array_equal(exposure.rescale_intensity(image, in_range=test_input, out_range=(0, 1)),
                       exposure.rescale_intensity(image, in_range=tuple(expected), out_range=(0, 1)))


@pytest.mark.parametrize("test_input,expected", [('image', [0.1, 0.2]), ('dtype', [-1, 1]), ((0.3, 0.4), [0.3, 0.4])])
def test_intensity_range_float(test_input, expected):
    image = np.array([0.1, 0.2], dtype=np.float64)
    assert_array_equal(exposure.rescale_intensity(image, in_range=test_input, out_range=(0, 1)),
                       exposure.rescale_intensity(image, in_range=tuple(expected), out_range=(0, 1)))


def test_intensity_range_clipped_float():
    # intensity_range(image, 'dtype', clip_negative=True) == (0, 1): rescale_intensity's out_range 'dtype'
    # when in_range starts at >= 0.
    image = np.array([0.1, 0.2], dtype=np.float64)
    assert_array_almost_equal(exposure.rescale_intensity(image, in_range=(0, 1)), [0.1, 0.2])
    assert_array_almost_equal(exposure.rescale_intensity(image, in_range=(0, 1), out_range=(0, 1)), [0.1, 0.2])


# ---- test_exposure.py: rescale_intensity ------------------------------------------------------------------------

uint10_max = 2 ** 10 - 1
uint12_max = 2 ** 12 - 1
uint14_max = 2 ** 14 - 1
uint16_max = 2 ** 16 - 1


def test_rescale_stretch():
    image = np.array([51, 102, 153], dtype=np.uint8)
    out = exposure.rescale_intensity(image)
    assert out.dtype == np.uint8
    assert_array_almost_equal(out, [0, 127, 255])


def test_rescale_shrink():
    image = np.array([51., 102., 153.])
    out = exposure.rescale_intensity(image)
    assert_array_almost_equal(out, [0, 0.5, 1])


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_rescale_in_range(dtype):
    image = np.array([51., 102., 153.], dtype=dtype)
    out = exposure.rescale_intensity(image, in_range=(0, 255))
    assert_array_almost_equal(out, [0.2, 0.4, 0.6], decimal=4)
    assert out.dtype == image.dtype


def test_rescale_in_range_clip():
    image = np.array([51., 102., 153.])
    out = exposure.rescale_intensity(image, in_range=(0, 102))
    assert_array_almost_equal(out, [0.5, 1, 1])


@pytest.mark.parametrize('dtype', [np.int8, np.int32, np.float16, np.float32, np.float64])
def test_rescale_out_range(dtype):
    image = np.array([-10, 0, 10], dtype=dtype)
    out = exposure.rescale_intensity(image, out_range=(0, 127))
    assert out.dtype == supported_float_type(image.dtype)
    assert_array_almost_equal(out, [0, 63.5, 127])


def test_rescale_named_in_range():
    image = np.array([0, uint10_max, uint10_max + 100], dtype=np.uint16)
    out = exposure.rescale_intensity(image, in_range='uint10')
    assert_array_almost_equal(out, [0, uint16_max, uint16_max])


def test_rescale_named_out_range():
    image = np.array([0, uint16_max], dtype=np.uint16)
    out = exposure.rescale_intensity(image, out_range='uint10')
    assert_array_almost_equal(out, [0, uint10_max])


def test_rescale_uint12_limits():
    image = np.array([0, uint16_max], dtype=np.uint16)
    out = exposure.rescale_intensity(image, out_range='uint12')
    assert_array_almost_equal(out, [0, uint12_max])


def test_rescale_uint14_limits():
    image = np.array([0, uint16_max], dtype=np.uint16)
    out = exposure.rescale_intensity(image, out_range='uint14')
    assert_array_almost_equal(out, [0, uint14_max])


def test_rescale_all_zeros():
    image = np.zeros((2, 2), dtype=np.uint8)
    out = exposure.rescale_intensity(image)
    assert ~np.isnan(out).all()
    assert_array_almost_equal(out, image)


def test_rescale_constant():
    image = np.array([130, 130], dtype=np.uint16)
    out = exposure.rescale_intensity(image, out_range=(0, 127))
    assert_array_almost_equal(out, [127, 127])


def test_rescale_same_values():
    image = np.ones((2, 2))
    out = exposure.rescale_intensity(image)
    assert ~np.isnan(out).all()
    assert_array_almost_equal(out, image)


@pytest.mark.parametrize("in_range,out_range", [("image", "dtype"), ("dtype", "image")])
def test_rescale_nan_warning(in_range, out_range):
    image = np.arange(12, dtype=float).reshape(3, 4)
    image[1, 1] = np.nan
    msg = r"One or more intensity levels are NaN\. Rescaling will broadcast NaN to the full image\."
    with expected_warnings([msg]):
        exposure.rescale_intensity(image, in_range, out_range)


@pytest.mark.parametrize("out_range, out_dtype", [('uint8', np.uint8), ('uint10', np.uint16), ('uint12', np.uint16),
                                                  ('uint16', np.uint16), ('float', float)])
def test_rescale_output_dtype(out_range, out_dtype):
    image = np.array([-128, 0, 127], dtype=np.int8)
    output_image = exposure.rescale_intensity(image, out_range=out_range)
    assert output_image.dtype == out_dtype


def test_rescale_no_overflow():
    image = np.array([-128, 0, 127], dtype=np.int8)
    output_image = exposure.rescale_intensity(image, out_range=np.uint8)
    assert_array_equal(output_image, [0, 128, 255])
    assert output_image.dtype == np.uint8


def test_rescale_float_output():
    image = np.array([-128, 0, 127], dtype=np.int8)
    output_image = exposure.rescale_intensity(image, out_range=(0, 255))
    assert_array_equal(output_image, [0, 128, 255])
    assert output_image.dtype == float


def test_rescale_raises_on_incorrect_out_range():
    image = np.array([-128, 0, 127], dtype=np.int8)
    with pytest.raises(ValueError):
        exposure.rescale_intensity(image, out_range='flat')


def test_dask_histogram():
    da = pytest.importorskip('dask.array', reason="dask python library is not installed")
    dask_array = da.from_array(np.array([[0, 1], [1, 2]]), chunks=(1, 2))
    output_hist, output_bins = exposure.histogram(dask_array)
    assert np.allclose([0, 1, 2], output_bins)
    assert np.allclose([1, 2, 1], output_hist)


# ---- test_histogram_matching.py -----------------------------------------------------------------------------

@pytest.mark.parametrize('array, template, expected_array', [
    (np.arange(10), np.arange(100), np.arange(9, 100, 10)),
    (np.random.rand(4), np.ones(3), np.ones(4))
])
def test_match_array_values(array, template, expected_array):
    matched = exposure.match_histograms(array, template)  # _match_cumulative_cdf of the whole array
    assert_array_almost_equal(matched, expected_array)


def empirical_pdf(image):
    """Values and cumulative quantiles of each channel (test_histogram_matching's helper)."""
    if image.ndim > 2:
        image = image.transpose(2, 0, 1)
    channels = np.array(image, copy=False, ndmin=3)
    pdfs = []
    for channel in channels:
        values, counts = np.unique(channel, return_counts=True)
        quantiles = np.cumsum(counts).astype(np.float64)
        quantiles /= quantiles[-1]
        pdfs.append((values, quantiles))
    return pdfs


def assert_matched(matched, reference):
    for (ref_values, ref_quantiles), (values, quantiles) in zip(empirical_pdf(reference), empirical_pdf(matched)):
        for i, value in enumerate(values):
            closest = np.abs(ref_values - value).argmin()
            assert_almost_equal(quantiles[i], ref_quantiles[closest], decimal=1)


image_rgb = data.chelsea()
template_rgb = data.astronaut()


@pytest.mark.parametrize('image, reference, channel_axis', [
    (image_rgb, template_rgb, -1),  # skimage's multichannel=True
    (image_rgb[:, :, 0], template_rgb[:, :, 0], None)
])
def test_match_histograms(image, reference, channel_axis):
    matched = exposure.match_histograms(image, reference, channel_axis=channel_axis)
    assert_matched(matched, reference)


@pytest.mark.parametrize('channel_axis', (0, 1, -1))
def test_match_histograms_channel_axis(channel_axis):
    image = np.moveaxis(image_rgb, -1, channel_axis)
    reference = np.moveaxis(template_rgb, -1, channel_axis)
    matched = exposure.match_histograms(image, reference, channel_axis=channel_axis)
    assert matched.dtype == image.dtype
    assert_matched(np.moveaxis(matched, channel_axis, -1), np.moveaxis(reference, channel_axis, -1))


@pytest.mark.parametrize('dtype', [np.float16, np.float32, np.float64])
def test_match_histograms_float_dtype(dtype):
    """float16 or float32 inputs give float32 output"""
    image = image_rgb.astype(dtype, copy=False)
    reference = template_rgb.astype(dtype, copy=False)
    matched = exposure.match_histograms(image, reference)
    assert matched.dtype == supported_float_type(dtype)


@pytest.mark.parametrize('image, reference', [(image_rgb, template_rgb[:, :, 0]), (image_rgb[:, :, 0], template_rgb)])
def test_raises_value_error_on_channels_mismatch(image, reference):
    with pytest.raises(ValueError):
        exposure.match_histograms(image, reference)


# ---- test_thresholding.py: Otsu, Triangle, multi-level Otsu ----------------------------------------------------

SIMPLE = np.array([[0, 0, 1, 3, 5],
                   [0, 1, 4, 3, 4],
                   [1, 2, 5, 4, 1],
                   [2, 4, 5, 2, 1],
                   [4, 5, 1, 0, 0]], dtype=int)


def test_otsu_simple_image():
    assert threshold_otsu(SIMPLE) == 2


def test_otsu_negative_int():
    assert threshold_otsu(SIMPLE - 2) == 0


def test_otsu_float_image():
    assert 2 <= threshold_otsu(np.float64(SIMPLE)) < 3


def test_otsu_camera_image():
    camera = util.img_as_ubyte(data.camera())
    assert 101 < threshold_otsu(camera) < 103


def test_otsu_camera_image_histogram():
    camera = util.img_as_ubyte(data.camera())
    hist = histogram(camera.ravel(), 256, source_range='image')
    assert 101 < threshold_otsu(hist=hist) < 103


def test_otsu_camera_image_counts():
    camera = util.img_as_ubyte(data.camera())
    counts, bin_centers = histogram(camera.ravel(), 256, source_range='image')
    assert 101 < threshold_otsu(hist=counts) < 103


def test_otsu_zero_count_histogram():
    x = np.array([1, 2])
    t1 = threshold_otsu(x)
    t2 = threshold_otsu(hist=np.bincount(x))
    assert t1 == t2


def test_otsu_coins_image():
    coins = util.img_as_ubyte(data.coins())
    assert 106 < threshold_otsu(coins) < 108


def test_otsu_coins_image_as_float():
    coins = util.img_as_float(data.coins())
    assert 0.41 < threshold_otsu(coins) < 0.42


def test_otsu_astro_image():
    img = util.img_as_ubyte(data.astronaut())
    with expected_warnings(['grayscale']):
        assert 109 < threshold_otsu(img) < 111


def test_otsu_one_color_image():
    img = np.ones((10, 10), dtype=np.uint8)
    assert threshold_otsu(img) == 1


def test_otsu_one_color_image_3d():
    img = np.ones((10, 10, 10), dtype=np.uint8)
    assert threshold_otsu(img) == 1


def test_triangle_uint_images():
    assert threshold_triangle(np.invert(data.text())) == 151
    assert threshold_triangle(data.text()) == 104
    assert threshold_triangle(data.coins()) == 80
    assert threshold_triangle(np.invert(data.coins())) == 175


def test_triangle_float_images():
    text = data.text()
    int_bins = text.max() - text.min() + 1
    assert round(threshold_triangle(text.astype(float), nbins=int_bins)) == 104
    assert round(threshold_triangle(text / 255., nbins=int_bins) * 255) == 104
    assert round(threshold_triangle(np.invert(text).astype(float), nbins=int_bins)) == 151
    assert round(threshold_triangle(np.invert(text) / 255., nbins=int_bins) * 255) == 151


def test_triangle_flip():
    img = data.camera()
    inv_img = np.invert(img)
    t = threshold_triangle(inv_img)
    t_inv_img = inv_img > t
    t_inv_inv_img = np.invert(t_inv_img)
    t = threshold_triangle(img)
    t_img = img > t
    unequal_pos = np.where(t_img.ravel() != t_inv_inv_img.ravel())
    assert len(unequal_pos[0]) / t_img.size < 1e-2


def test_bimodal_multiotsu_hist():
    for name in ['camera', 'moon', 'coins', 'text', 'clock', 'page']:
        img = getattr(data, name)()
        assert threshold_otsu(img) == threshold_multiotsu(img, 2)
    for name in ['chelsea', 'coffee', 'astronaut', 'rocket']:
        img = rgb2gray(getattr(data, name)())
        assert threshold_otsu(img) == threshold_multiotsu(img, 2)


def test_check_multiotsu_results():
    image = 0.25 * np.array([[0, 1, 2, 3, 4]] * 4)
    for idx in range(3, 6):
        thr_multi = threshold_multiotsu(image, classes=idx)
        assert len(thr_multi) == idx - 1


def test_multiotsu_output():
    image = np.zeros((100, 100), dtype='int')
    coords = [(25, 25), (50, 50), (75, 75)]
    values = [64, 128, 192]
    for coor, val in zip(coords, values):
        rr, cc = disk(coor, 20)
        image[rr, cc] = val
    thresholds = [0, 64, 128]
    assert np.array_equal(thresholds, threshold_multiotsu(image, classes=4))


def test_multiotsu_astro_image():
    img = util.img_as_ubyte(data.astronaut())
    with expected_warnings(['grayscale']):
        assert_almost_equal(threshold_multiotsu(img), [58, 149])


def test_multiotsu_more_classes_then_values():
    img = np.ones((10, 10), dtype=np.uint8)
    with pytest.raises(ValueError):
        threshold_multiotsu(img, classes=2)
    img[:, 3:] = 2
    with pytest.raises(ValueError):
        threshold_multiotsu(img, classes=3)
    img[:, 6:] = 3
    with pytest.raises(ValueError):
        threshold_multiotsu(img, classes=4)


@pytest.mark.parametrize("thresholding, lower, upper", [(threshold_otsu, 101, 103), (threshold_triangle, 41, 43)])
def test_thresholds_dask_compatibility(thresholding, lower, upper):
    da = pytest.importorskip('dask.array', reason="dask python library is not installed")
    dask_camera = da.from_array(data.camera(), chunks=(256, 256))
    assert lower < float(thresholding(dask_camera)) < upper


def test_multiotsu_missing_img_and_hist():
    with pytest.raises(Exception):
        threshold_multiotsu()


def test_multiotsu_hist_parameter():
    for classes in [2, 3, 4]:
        for name in ['camera', 'moon', 'coins', 'text', 'clock', 'page']:
            img = getattr(data, name)()
            sk_hist = histogram(img, nbins=256)
            thresh_img = threshold_multiotsu(img, classes)
            thresh_sk_hist = threshold_multiotsu(classes=classes, hist=sk_hist)
            assert np.allclose(thresh_img, thresh_sk_hist)
