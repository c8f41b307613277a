"""imghist.exposure: scikit-image's exposure functions with scikit-image's names, arguments, dtypes and
results (version 0.19), computed with imghist's histograms.

    histogram(image, nbins=256, source_range='image', normalize=False, *, channel_axis=None)
    equalize_hist(image, nbins=256, mask=None)
    rescale_intensity(image, in_range='image', out_range='dtype')
    match_histograms(image, reference, *, channel_axis=None)

Images are NumPy or CuPy arrays of any shape and dtype skimage accepts. Integer images (each level its own
bin, as in skimage) are counted by imghist — on the CPU's threads, or on the GPU for CuPy arrays — and
their results equal skimage's exactly; float images follow skimage's NumPy formulation (on CuPy arrays,
CuPy's), equal to skimage's NumPy result to rounding on CuPy. Results of CuPy inputs are CuPy arrays.

For the percentile stretch of skimage's examples, pass the percentiles as in_range:
    p2, p98 = np.percentile(image, (2, 98))
    rescale_intensity(image, in_range=(p2, p98))
(imghist.stretchContrast does the same for uint8 / uint16 images in one call.)
"""
from . import _skimage
from ._levels import as_array

__all__ = ["histogram", "equalize_hist", "rescale_intensity", "match_histograms"]


def histogram(image, nbins=256, source_range="image", normalize=False, *, channel_axis=None):
    """skimage.exposure.histogram: returns (hist, bin_centers).

    Integer images: one bin per level over [min, max] of the image (source_range='image') or of its dtype
    ('dtype'); nbins is ignored. Float images: np.histogram with nbins bins over the image's range or the
    dtype's (-1, 1); bin_centers in the image's float type. normalize=True divides by the total. With
    channel_axis, hist is (channels, bins) with bins common to all channels."""
    return _skimage.histogram(as_array(image), nbins, source_range, normalize, channel_axis)


def equalize_hist(image, nbins=256, mask=None):
    """skimage.exposure.equalize_hist: the normalised cumulative histogram of the image (of its pixels where
    `mask` is true), interpolated at every pixel value. Returns float64 in [0, 1] (float32 for float16 and
    float32 images). nbins is ignored for integer images."""
    image = as_array(image)
    return _skimage.equalize_plan(image, nbins, mask).apply(image)


def rescale_intensity(image, in_range="image", out_range="dtype"):
    """skimage.exposure.rescale_intensity: clips to in_range and maps it linearly onto out_range.

    in_range, out_range: 'image' (the image's min and max), 'dtype' (the dtype's range; for float images
    (-1, 1), and 0 as the lower end when in_range's lower end is >= 0), a dtype or dtype name ('uint8',
    'uint10', 'uint12', 'uint14', 'float', ...), or a pair (low, high). The result has the image's dtype, the
    dtype out_range names (uint16 for uint10/12/14), or float (float32 for float16/32 images) for a pair."""
    who = "exposure.rescale_intensity"
    image = as_array(image)
    plan = _skimage.rescale_plan(image.dtype, in_range, out_range, lambda: _skimage.min_max(image, who))
    return plan.apply(image, who)


def match_histograms(image, reference, *, channel_axis=None):
    """skimage.exposure.match_histograms: maps each value of `image` to the value of `reference` at the same
    quantile (np.interp of the cumulative histograms). Without channel_axis the whole image is one
    distribution and the result is float64 (float32 for float16/32 images); with channel_axis each channel
    is matched on its own and the result has the image's dtype (values truncated, as NumPy assigns them)."""
    image, reference = as_array(image), as_array(reference)
    _skimage.check_match_shapes(image, reference, channel_axis)
    return _skimage.apply_match(image, _skimage.match_plans(image, reference, channel_axis), channel_axis)


def __dir__():
    return list(__all__)
