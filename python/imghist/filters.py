"""imghist.filters: scikit-image's histogram thresholds with scikit-image's names, arguments, return types and
results (version 0.19), computed with imghist's histograms and multi-level Otsu search.

    threshold_otsu(image=None, nbins=256, *, hist=None)
    threshold_triangle(image, nbins=256)
    threshold_multiotsu(image=None, classes=3, nbins=256, *, hist=None)

skimage's rules, not cv2's: thresholds are bin centres of exposure.histogram(image, nbins) — for integer
images every level from min to max, so Otsu and Triangle can differ from cv2.threshold's by a level — and
pixels above the threshold are the foreground (image > t). Images are NumPy or CuPy arrays (integer images
counted by imghist on the CPU or the GPU); thresholds are NumPy scalars, multi-Otsu's a NumPy array (a CuPy
array for CuPy input).
"""
import numpy as np

from . import _skimage
from ._levels import array_module, as_array, counted_by_library, level_counts

__all__ = ["threshold_otsu", "threshold_triangle", "threshold_multiotsu"]


def _counts_and_centers(image, hist, nbins, normalize, who):
    """skimage's early return for a one-valued image, else the histogram: (constant, counts, centers)."""
    if image is not None and hist is None and counted_by_library(image.dtype):
        counts, lo = level_counts(image, who=who)  # one pass gives both
        if counts.size == 1:
            return image.dtype.type(lo), None, None
        counts = counts / np.sum(counts) if normalize else counts
        return None, counts.astype(float), np.arange(lo, lo + counts.size)
    if image is not None:
        value = _skimage.constant_value(image, who)
        if value is not None:
            return value, None, None
    counts, centers = _skimage.threshold_histogram(image, hist, nbins, normalize, who)
    return None, counts, centers


def threshold_otsu(image=None, nbins=256, *, hist=None):
    """skimage.filters.threshold_otsu: the bin centre maximising the between-class variance of the
    histogram (`hist` when given: counts, or (counts, bin_centers)). An image of one value returns that
    value. Foreground: image > threshold."""
    who = "filters.threshold_otsu"
    if image is not None:
        image = as_array(image)
        _skimage.warn_if_colour(image, "threshold_otsu")
    constant, counts, centers = _counts_and_centers(image, hist, nbins, False, who)
    if constant is not None:
        return constant
    return _skimage.otsu(counts, centers)


def threshold_triangle(image, nbins=256):
    """skimage.filters.threshold_triangle: the bin centre farthest from the line joining the histogram's
    peak to the end of its longer tail. Foreground: image > threshold."""
    counts, centers = _skimage.histogram(as_array(image).ravel(), nbins, "image", who="filters.threshold_triangle")
    xp = array_module(counts)
    if xp is not np:
        counts, centers = counts.get(), centers.get()
    return _skimage.triangle(counts, centers)


def threshold_multiotsu(image=None, classes=3, nbins=256, *, hist=None):
    """skimage.filters.threshold_multiotsu: the classes - 1 thresholds (bin centres, ascending) maximising
    the between-class variance of the histogram (`hist` when given: counts, or (counts, bin_centers)); the
    search is imghist's, with skimage's float32 arithmetic and answer. Raises ValueError when the image has
    fewer distinct values than classes. Histograms of up to 4096 bins (integer images spanning at most 4096
    levels; float images any range, nbins <= 4096). Labels: np.digitize(image, bins=thresholds)."""
    who = "filters.threshold_multiotsu"
    if image is not None:
        image = as_array(image)
        _skimage.warn_if_colour(image, "threshold_multiotsu")
    if image is not None and hist is None and counted_by_library(image.dtype):
        counts, lo = level_counts(image, who=who)
        prob, centers = counts / np.sum(counts), np.arange(lo, lo + counts.size)
    else:
        prob, centers = _skimage.threshold_histogram(image, hist, nbins, True, who)
    thresholds = _skimage.multiotsu(prob.astype(np.float32), centers, classes, who)
    if image is not None:
        xp = array_module(image)
        if xp is not np:
            return xp.asarray(thresholds)
    return thresholds


def __dir__():
    return list(__all__)
