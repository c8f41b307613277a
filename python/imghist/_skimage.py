"""scikit-image's rules (version 0.19) for the operations of imghist.exposure and imghist.filters, split into
statistics (a histogram, a range), a plan computed from them (a table, an interpolation), and the plan's
application to pixels, so that imghist.dask can gather the statistics of a chunked array first and apply the
same plan to every block.

Exactness. Integer images take every level as its own bin (as skimage does), so a plan is a table over
levels: the statistics come from the library's histograms (imghist/_levels.py) and the table is computed
by the same NumPy expression scikit-image evaluates on pixels, evaluated on an array holding each level once
in the image's dtype — element-wise NumPy arithmetic does not depend on the array it runs on, so each level
maps to exactly what skimage computes for a pixel of that level. Float images follow skimage's NumPy
formulation (np.histogram, np.interp, np.unique) directly. On CuPy arrays the same expressions run in CuPy
(float results agree to rounding; integer results are exact, their tables being computed on the host).
"""
import warnings

import numpy as np

from . import _imghist as core
from ._arrays import as_input
from ._errors import UnsupportedError
from ._levels import (COUNTED, all_level_counts, array_module, as_2d, counted_by_library, is_integer, level_counts,
                      range_counts, to_host)

# ---- dtypes and ranges (skimage.util.dtype.dtype_range and exposure.DTYPE_RANGE) -------------------------------

_TYPE_RANGE = {bool: (False, True), np.bool_: (False, True), float: (-1, 1), np.float16: (-1, 1),
               np.float32: (-1, 1), np.float64: (-1, 1)}
for _t in (np.byte, np.ubyte, np.short, np.ushort, np.intc, np.uintc, int, np.int_, np.uint, np.longlong,
           np.ulonglong):
    _TYPE_RANGE[_t] = (int(np.iinfo(_t).min), int(np.iinfo(_t).max))
# Ranges by type and by name; the names that are not NumPy types (uint10, ...) give uint16 outputs.
RANGES = dict(_TYPE_RANGE)
RANGES.update((t.__name__, r) for t, r in _TYPE_RANGE.items())
RANGES.update({"uint10": (0, 2 ** 10 - 1), "uint12": (0, 2 ** 12 - 1), "uint14": (0, 2 ** 14 - 1),
               "bool": (False, True), "float": (-1, 1)})
del _t


def dtype_limits(dtype):
    return _TYPE_RANGE[np.dtype(dtype).type]


def float_type(dtype):
    """The float dtype skimage computes in for `dtype`: float32 for float16 and float32, else float64."""
    return np.float32 if np.dtype(dtype).type in (np.float16, np.float32) else np.float64


def _named_range(value):
    """RANGES[value], or None when value names no range (tuples and other values are not looked up)."""
    try:
        return RANGES.get(value)
    except TypeError:  # unhashable, e.g. a list given as a range
        return None


def warn(message):
    warnings.warn(message, UserWarning, stacklevel=3)


def warn_if_colour(image, function):
    if image.ndim > 2 and image.shape[-1] in (3, 4):
        warn(f"{function} is expected to work correctly only for grayscale images; image shape {image.shape} "
             f"looks like that of an RGB image.")


# ---- histograms (exposure.histogram) ------------------------------------------------------------------------

def check_source_range(source_range):
    if source_range not in ("image", "dtype"):
        raise ValueError(f"Incorrect value for `source_range` argument: {source_range}")


def integer_histogram(image, source_range, centers=None, who="exposure.histogram"):
    """(counts, centers) of an integer image, one bin per level: over [min, max] of the image ('image'), of
    the dtype ('dtype'), or over the given `centers` (consecutive levels spanning the image's values)."""
    if centers is None and source_range == "image":
        counts, lo = level_counts(image, who=who)
        return counts, np.arange(lo, lo + counts.size)
    if centers is None:
        lo, hi = dtype_limits(image.dtype)
        centers = np.arange(lo, hi + 1)
    lo, hi = int(centers[0]), int(centers[-1])
    if counted_by_library(image.dtype):
        counts, first = all_level_counts(image, who=who)
        return counts[lo - first:hi - first + 1], centers
    return range_counts(image, lo, hi), centers


def float_range(image, source_range):
    """np.histogram's `range` for skimage's source_range."""
    return None if source_range == "image" else dtype_limits(image.dtype)


def float_bin_edges(image, nbins, hist_range):
    """The bin edges np.histogram(image, nbins, hist_range) uses (skimage's common bins of all channels)."""
    xp = array_module(image)
    if hist_range is not None:
        first, last = hist_range
        if first > last:
            raise ValueError("max must be larger than min in hist_range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied hist_range of [{first}, {last}] is not finite")
    elif image.size == 0:
        first, last = 0, 1
    else:
        first, last = to_host(xp.asarray(image.min()))[()], to_host(xp.asarray(image.max()))[()]
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected hist_range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    # NumPy's promotion of the edges with the image (an array of its dtype stands for a CuPy image).
    bin_type = np.result_type(first, last, image if xp is np else np.empty(0, image.dtype))
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    return xp.asarray(np.linspace(first, last, nbins + 1, endpoint=True, dtype=bin_type))


def numpy_histogram(values, bins, hist_range):
    """np.histogram(values, bins, hist_range) (bins: a count or edges), for NumPy or CuPy values. CuPy's
    own binning of a bin count may differ from NumPy's at the edges, so CuPy counts against the edges
    NumPy computes (NumPy assigns values to those edges as a sorted search does)."""
    xp = array_module(values)
    if not np.isscalar(bins):
        return xp.histogram(values, bins=bins)  # edges given: the range plays no part
    if xp is np:
        return np.histogram(values, bins=bins, range=hist_range)
    if hist_range is None:
        if values.size == 0:
            hist_range = (0, 1)
        else:
            hist_range = (to_host(values.min())[()], to_host(values.max())[()])
    edges = np.histogram_bin_edges(np.empty(0, values.dtype), bins=bins, range=hist_range)
    counts, _ = xp.histogram(values, bins=xp.asarray(edges))
    return counts, xp.asarray(edges)


def float_histogram(image, bins, source_range):
    """(counts, centers) of np.histogram(image, bins, range for source_range) (bins: a count or edges)."""
    counts, edges = numpy_histogram(image.ravel(), bins, float_range(image, source_range))
    return counts, (edges[:-1] + edges[1:]) / 2.


def histogram(image, nbins=256, source_range="image", normalize=False, channel_axis=None,
              who="exposure.histogram"):
    """skimage.exposure.histogram; results in the image's array module."""
    check_source_range(source_range)
    xp = array_module(image)
    if image.ndim == 3 and image.shape[-1] < 4 and channel_axis is None:
        warn("This might be a color image. The histogram will be computed on the flattened image. You can "
             "instead apply this function to each color channel, or set channel_axis.")
    if channel_axis is None:
        if is_integer(image.dtype):
            counts, centers = integer_histogram(image, source_range, who=who)
            counts, centers = xp.asarray(counts), xp.asarray(centers)
        else:
            counts, centers = float_histogram(image, nbins, source_range)
        return (counts / xp.sum(counts) if normalize else counts), centers
    image = xp.moveaxis(image, channel_axis, -1)
    if is_integer(image.dtype):
        _, centers = integer_histogram(image, source_range, who=who)
        per_channel = [xp.asarray(integer_histogram(image[..., c], source_range, centers, who)[0])
                       for c in range(image.shape[-1])]
        centers = xp.asarray(centers)
    else:
        edges = float_bin_edges(image, nbins, float_range(image, source_range))
        per_channel = []
        for c in range(image.shape[-1]):
            counts, centers = float_histogram(image[..., c], edges, source_range)
            per_channel.append(counts)
    if normalize:
        per_channel = [h / xp.sum(h) for h in per_channel]
    return xp.stack(per_channel, axis=0), centers


def cdf_of(counts, dtype):
    """skimage's cumulative distribution of a histogram, in the float type of `dtype`."""
    c = np.cumsum(counts)
    return (c / float(c[-1])).astype(float_type(dtype), copy=False)


# ---- plans: what each level (or value) becomes --------------------------------------------------------------

class LevelTable:
    """An output value for every level of an 8- or 16-bit image dtype (`values` in value order, from the
    dtype's least value), applied by a gather, or by the library when the output dtype is the input's."""

    def __init__(self, dtype, values):
        self.dtype = np.dtype(dtype)
        self.values = values

    def apply(self, image, who):
        unsigned, levels, offset = COUNTED[self.dtype]
        xp = array_module(image)
        by_pattern = np.roll(self.values, -offset) if offset else self.values  # indexed by the bit pattern
        if by_pattern.dtype == self.dtype and image.size:
            return _apply_in_library(image, by_pattern.view(unsigned), unsigned, who)
        return xp.asarray(by_pattern)[image.view(unsigned)]


def _apply_in_library(image, table, unsigned, who):
    """The table (same dtype in and out) applied by the library's table pass, on the host or the device."""
    xp = array_module(image)
    out = xp.empty(image.shape, image.dtype)
    src2, dst2 = as_2d(image.view(unsigned)), as_2d(out.view(unsigned))
    if src2 is None or dst2 is None:
        return xp.asarray(table)[image.view(unsigned)]
    s, d = as_input(src2, who + ": image"), as_input(dst2, who + ": output")
    core.apply_table(s.arg, d.arg, table.astype(np.uint16).reshape(1, -1), "auto", s.device_id, s.stream, who)
    return out


def level_values(dtype):
    """Every level of an 8- or 16-bit dtype, once, ascending, in that dtype."""
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1).astype(dtype)


class EqualizePlan:
    """equalize_hist: the normalised cumulative histogram, interpolated at the pixel values (np.interp)."""

    def __init__(self, dtype, centers, cdf):
        self.dtype, self.centers, self.cdf = np.dtype(dtype), centers, cdf
        self.out_type = float_type(dtype)

    @classmethod
    def from_level_counts(cls, dtype, counts, lo):
        return cls(dtype, np.arange(lo, lo + counts.size), cdf_of(counts, dtype))

    def apply(self, image, who="exposure.equalize_hist"):
        xp = array_module(image)
        if counted_by_library(self.dtype) and image.dtype == self.dtype:
            # np.interp at a level that is a bin centre returns that bin's value exactly; below and above the
            # centres it returns the first and last value: a table lookup with the index clamped.
            lo = int(self.centers[0])
            levels = level_values(self.dtype).astype(np.int64)
            idx = np.clip(levels - lo, 0, self.cdf.size - 1)
            table = LevelTable(self.dtype, self.cdf.astype(np.float64)[idx])
            return table.apply(image, who).astype(self.out_type, copy=False)
        out = xp.interp(image.ravel(), xp.asarray(self.centers), xp.asarray(self.cdf))
        return out.reshape(image.shape).astype(self.out_type, copy=False)


def equalize_plan(image, nbins, mask, who="exposure.equalize_hist"):
    xp = array_module(image)
    if mask is not None:
        mask = xp.array(mask, dtype=bool)
    elif image.ndim == 3 and image.shape[-1] < 4:
        warn("This might be a color image. The histogram will be computed on the flattened image. You can "
             "instead apply this function to each color channel, or set channel_axis.")
    if is_integer(image.dtype):
        counts, lo = level_counts(image, mask, who)
        return EqualizePlan.from_level_counts(image.dtype, counts, lo)
    counts, centers = float_histogram(image[mask] if mask is not None else image, nbins, "image")
    return EqualizePlan(image.dtype, to_host(centers), cdf_of(to_host(counts), image.dtype))


# ---- rescale_intensity -----------------------------------------------------------------------------------------

def output_dtype(out_range, image_dtype):
    """skimage's output dtype of rescale_intensity for out_range."""
    if out_range in ("dtype", "image"):
        return np.dtype(image_dtype).type
    if type(out_range) in (list, tuple, np.ndarray):
        return float_type(image_dtype)
    if type(out_range) == type:
        return out_range
    if _named_range(out_range) is not None:
        try:
            return np.dtype(out_range).type
        except TypeError:  # uint10, uint12, uint14
            return np.uint16
    raise ValueError("Incorrect value for out_range, should be a valid image data type or a pair of values, "
                     f"got {out_range}.")


def intensity_range(image_dtype, range_values, image_min_max, clip_negative=False):
    """skimage's intensity_range: (min, max) for 'image' (image_min_max() gives the image's), 'dtype', a
    dtype or dtype name, or a pair of values."""
    if isinstance(range_values, str) and range_values == "dtype":
        range_values = np.dtype(image_dtype).type
    if isinstance(range_values, str) and range_values == "image":
        return image_min_max()
    named = _named_range(range_values)
    if named is not None:
        return (0 if clip_negative else named[0]), named[1]
    lo, hi = range_values
    return lo, hi


class RescalePlan:
    """rescale_intensity with the input and output ranges resolved."""

    def __init__(self, dtype, imin, imax, omin, omax, out_dtype):
        self.dtype = np.dtype(dtype)
        self.imin, self.imax, self.omin, self.omax, self.out_dtype = imin, imax, omin, omax, out_dtype

    def formula(self, image):
        """scikit-image's arithmetic on the samples of `image`."""
        xp = array_module(image)
        x = xp.clip(image, self.imin, self.imax)
        if self.imin != self.imax:
            x = (x - self.imin) / (self.imax - self.imin)
            return xp.asarray(x * (self.omax - self.omin) + self.omin, dtype=self.out_dtype)
        return xp.clip(x, self.omin, self.omax).astype(self.out_dtype)

    def apply(self, image, who="exposure.rescale_intensity"):
        if counted_by_library(self.dtype) and image.dtype == self.dtype:
            return LevelTable(self.dtype, self.formula(level_values(self.dtype))).apply(image, who)
        return self.formula(image)


def rescale_plan(dtype, in_range, out_range, image_min_max):
    """The plan of rescale_intensity(image, in_range, out_range) for an image of `dtype` whose (min, max)
    image_min_max() returns (called only when a range is 'image')."""
    out_dtype = output_dtype(out_range, dtype)
    cache = []

    def min_max():
        if not cache:
            cache.append(image_min_max())
        return cache[0]

    imin, imax = map(float, intensity_range(dtype, in_range, min_max))
    omin, omax = map(float, intensity_range(dtype, out_range, min_max, clip_negative=(imin >= 0)))
    if np.any(np.isnan([imin, imax, omin, omax])):
        warn("One or more intensity levels are NaN. Rescaling will broadcast NaN to the full image. Provide "
             "intensity levels yourself to avoid this. E.g. with np.nanmin(image), np.nanmax(image).")
    return RescalePlan(dtype, imin, imax, omin, omax, out_dtype)


def min_max(image, who):
    """(min, max) of an image as NumPy scalars of its dtype (from the library's histogram where it counts)."""
    xp = array_module(image)
    if counted_by_library(image.dtype) and image.size:
        counts, lo = level_counts(image, who=who)
        return image.dtype.type(lo), image.dtype.type(lo + counts.size - 1)
    lo, hi = xp.min(image), xp.max(image)
    return (lo, hi) if xp is np else (to_host(lo)[()], to_host(hi)[()])


# ---- match_histograms --------------------------------------------------------------------------------------

class Distribution:
    """The distinct values of an image and how many samples hold each (np.unique's values and counts)."""

    def __init__(self, values, counts, size):
        self.values, self.counts, self.size = values, counts, size

    @classmethod
    def of(cls, image, who):
        if counted_by_library(image.dtype):
            counts, lo = level_counts(image, who=who)
            present = np.flatnonzero(counts)
            return cls((lo + present).astype(image.dtype), counts[present], int(image.size))
        xp = array_module(image)
        values, counts = xp.unique(image.ravel(), return_counts=True)
        return cls(to_host(values), to_host(counts), int(image.size))

    def quantiles(self):
        return np.cumsum(self.counts) / self.size


class MatchPlan:
    """match_histograms for one channel: each distinct source value becomes np.interp(its quantile, the
    reference's quantiles, the reference's values)."""

    def __init__(self, source, reference):
        self.source_dtype = np.dtype(source.values.dtype)
        self.values = source.values
        self.matched = np.interp(source.quantiles(), reference.quantiles(), reference.values)

    def apply(self, image, out_dtype=None, who="exposure.match_histograms"):
        """The matched values of `image`'s samples (float64, or cast to out_dtype as NumPy assigns them)."""
        xp = array_module(image)
        if counted_by_library(self.source_dtype) and image.dtype == self.source_dtype:
            info = np.iinfo(self.source_dtype)
            full = np.zeros(info.max - info.min + 1, np.float64)  # levels absent from the source never occur
            full[self.values.astype(np.int64) - info.min] = self.matched
            if out_dtype is not None:
                full = full.astype(out_dtype)
            return LevelTable(self.source_dtype, full).apply(image, who)
        idx = xp.searchsorted(xp.asarray(self.values), image.ravel())
        out = xp.asarray(self.matched)[idx].reshape(image.shape)
        return out if out_dtype is None else out.astype(out_dtype)


def check_match_shapes(image, reference, channel_axis):
    if image.ndim != reference.ndim:
        raise ValueError("Image and reference must have the same number of channels.")
    if channel_axis is not None and image.shape[channel_axis] != reference.shape[channel_axis]:
        raise ValueError("Number of channels in the input image and reference image must match!")


def match_plans(image, reference, channel_axis, who="exposure.match_histograms"):
    """One MatchPlan for the whole image (channel_axis None) or one per channel."""
    if channel_axis is None:
        return [MatchPlan(Distribution.of(image, who), Distribution.of(reference, who))]
    xp = array_module(image)
    image, reference = xp.moveaxis(image, channel_axis, -1), xp.moveaxis(reference, channel_axis, -1)
    return [MatchPlan(Distribution.of(image[..., c], who), Distribution.of(reference[..., c], who))
            for c in range(image.shape[-1])]


def apply_match(image, plans, channel_axis, who="exposure.match_histograms"):
    """match_histograms' result for `image` under `plans` (from match_plans)."""
    xp = array_module(image)
    if channel_axis is None:
        matched = plans[0].apply(image, who=who)
    else:
        image = xp.moveaxis(image, channel_axis, -1)
        matched = xp.empty(image.shape, dtype=image.dtype)
        for c, plan in enumerate(plans):
            matched[..., c] = plan.apply(image[..., c], image.dtype, who)
        matched = xp.moveaxis(matched, -1, channel_axis)
    if matched.dtype.kind == "f":
        matched = matched.astype(float_type(image.dtype), copy=False)
    return matched


def match_output_dtype(dtype, channel_axis):
    return np.dtype(dtype) if channel_axis is not None and np.dtype(dtype).kind != "f" else np.dtype(float_type(dtype))


# ---- thresholds --------------------------------------------------------------------------------------------

def constant_value(image, who):
    """The value of every sample when the image holds one value, else None (skimage's early return)."""
    xp = array_module(image)
    if counted_by_library(image.dtype):
        counts, lo = level_counts(image, who=who)
        return image.dtype.type(lo) if counts.size == 1 else None
    first = image.ravel()[0]
    if bool(xp.all(image == first)):
        return first if xp is np else to_host(first)[()]
    return None


def threshold_histogram(image, hist, nbins, normalize, who):
    """skimage's _validate_image_histogram: (counts as float64, centers), on the host."""
    if image is None and hist is None:
        raise ValueError("Either image or hist must be provided.")
    if hist is not None:
        if isinstance(hist, (tuple, list)):
            counts, centers = hist
        else:
            counts = hist
            centers = np.arange(counts.size)
        counts, centers = to_host(counts), to_host(centers)
        if counts[0] == 0 or counts[-1] == 0:  # trimmed of zero bins at both ends, as source_range='image'
            present = counts > 0
            start = np.argmax(present)
            end = present.size - np.argmax(present[::-1])
            counts, centers = counts[start:end], centers[start:end]
    else:
        counts, centers = histogram(image.ravel(), nbins, "image", normalize, who=who)
        counts, centers = to_host(counts), to_host(centers)
    return counts.astype(float), centers


def otsu(counts, centers):
    """Otsu's threshold on a histogram, skimage's arithmetic: the centre maximising w1 * w2 * (m1 - m2)^2."""
    below = np.cumsum(counts)
    above = np.cumsum(counts[::-1])[::-1]
    weighted = counts * centers
    mean_below = np.cumsum(weighted) / below
    mean_above = (np.cumsum(weighted[::-1]) / above[::-1])[::-1]
    between = below[:-1] * above[1:] * (mean_below[:-1] - mean_above[1:]) ** 2
    return centers[np.argmax(between)]


def triangle(counts, centers):
    """The triangle threshold on a histogram, skimage's arithmetic (the longer tail is walked)."""
    n = len(counts)
    peak = np.argmax(counts)
    peak_height = counts[peak]
    low, high = np.where(counts > 0)[0][[0, -1]]
    flip = peak - low < high - peak
    if flip:
        counts = counts[::-1]
        low = n - high - 1
        peak = n - peak - 1
    width = peak - low
    x = np.arange(width)
    y = counts[x + low]
    norm = np.sqrt(peak_height ** 2 + width ** 2)
    distance = (peak_height / norm) * x - (width / norm) * y
    level = np.argmax(distance) + low
    if flip:
        level = n - level - 1
    return centers[level]


MULTIOTSU_MAX_LEVELS = 4096


def multiotsu(prob, centers, classes, who):
    """Multi-level Otsu thresholds on float32 probabilities (skimage's `prob`), by the library's search."""
    nvalues = np.count_nonzero(prob)
    if nvalues < classes:
        raise ValueError(f"The input image has only {nvalues} different values. It cannot be thresholded in "
                         f"{classes} classes.")
    if prob.size > MULTIOTSU_MAX_LEVELS:
        raise UnsupportedError(f"{who}: the histogram has {prob.size} bins (an integer image spanning that many "
                               f"levels); at most {MULTIOTSU_MAX_LEVELS} are supported (for a wider image, pass "
                               f"it as floats with nbins <= {MULTIOTSU_MAX_LEVELS})")
    return centers[np.asarray(core.multiotsu_indices(prob, int(classes)), dtype=np.intp)]
