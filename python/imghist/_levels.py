"""Level statistics for the scikit-image-shaped namespaces (imghist.exposure, imghist.filters, imghist.dask):
how many samples of an integer image hold each level, counted by the library where it can (8- and 16-bit
samples, signed or not, on the CPU or on a CUDA device) and by NumPy or CuPy otherwise.

Arrays are NumPy or CuPy arrays of any shape; every sample counts (the shape only matters for masks, which
have the image's shape). Results are NumPy arrays on the host: a histogram of at most 65536 levels is small,
and the rules applied to it (imghist/_skimage.py) are exact in NumPy's double precision.
"""
import sys

import numpy as np

from . import _imghist as core

# 8- and 16-bit samples: the unsigned type the library counts, and the value of its level 0 bit pattern
# order (signed samples are read through their unsigned view, then the counts are rotated into value order).
COUNTED = {np.dtype(np.uint8): (np.uint8, 256, 0), np.dtype(np.int8): (np.uint8, 256, 128),
            np.dtype(np.uint16): (np.uint16, 65536, 0), np.dtype(np.int16): (np.uint16, 65536, 32768)}
_DIM_LIMIT = 2 ** 31 - 1


def array_module(x):
    """NumPy, or CuPy for CuPy arrays."""
    if type(x).__module__.partition(".")[0] == "cupy":
        return sys.modules["cupy"]
    return np


def as_array(x):
    """A NumPy or CuPy array as given; anything else (a dask array, a list) through np.asarray."""
    if isinstance(x, np.ndarray) or array_module(x) is not np:
        return x
    return np.asarray(x)


def to_host(x):
    return x if isinstance(x, np.ndarray) else x.get()


def is_integer(dtype):
    return np.issubdtype(dtype, np.integer)


def counted_by_library(dtype):
    return np.dtype(dtype) in COUNTED


def as_2d(x):
    """All samples of x as one 2-D single-channel image (a view where x's layout allows), or None when a
    side would exceed the library's 2^31 - 1."""
    if x.ndim == 2:
        out = x
    elif x.ndim < 2:
        out = x.reshape(1, -1)
    else:
        out = x.reshape(-1, x.shape[-1])
    if out.shape[0] > _DIM_LIMIT or out.shape[1] > _DIM_LIMIT:
        return None
    xp = array_module(out)
    return out if xp is np else xp.ascontiguousarray(out)


def all_level_counts(image, mask=None, who="histogram"):
    """Counts of every level of an 8- or 16-bit image (counted_by_library), in value order: (counts, first)
    with counts[i] the number of samples of value first + i (256 or 65536 levels). `mask`: None or a bool
    array of the image's shape; only samples where it is True count."""
    unsigned, levels, offset = COUNTED[np.dtype(image.dtype)]
    xp = array_module(image)
    img = as_2d(image.view(unsigned))
    m = None if mask is None else as_2d(mask.view(np.uint8))
    if img is None or (mask is not None and m is None):
        counts = _counts_by_array_module(image.view(unsigned), mask, levels)
    elif xp is np:
        counts = core.hist_host(img, levels, None, m, "auto", who)
    else:
        from . import hist
        counts = to_host(hist(img, levels, None, m))
    if offset:
        counts = np.roll(counts, offset)  # bit patterns of negative values follow those of the positive ones
    return counts, -offset


def _counts_by_array_module(values, mask, levels):
    xp = array_module(values)
    sel = values[mask] if mask is not None else values.ravel()
    return to_host(xp.bincount(sel, minlength=levels)).astype(np.int64)


def level_counts(image, mask=None, who="histogram"):
    """Counts of the levels of an integer image from its least to its greatest sample (of those where `mask`
    is True): (counts, low) with counts[i] the number of samples of value low + i; counts[0] and counts[-1]
    are non-zero. Raises ValueError when no sample counts."""
    if counted_by_library(image.dtype):
        counts, first = all_level_counts(image, mask, who)
        present = np.flatnonzero(counts)
        if present.size == 0:
            raise ValueError(f"{who}: the image has no samples" + (" where the mask is set" if mask is not None else ""))
        lo, hi = int(present[0]), int(present[-1])
        return counts[lo:hi + 1], first + lo
    xp = array_module(image)
    sel = image[mask] if mask is not None else image.ravel()
    if sel.size == 0:
        raise ValueError(f"{who}: the image has no samples" + (" where the mask is set" if mask is not None else ""))
    lo, hi = int(sel.min()), int(sel.max())
    return range_counts(sel, lo, hi), lo


def range_counts(values, lo, hi):
    """Counts of each integer level in [lo, hi] among `values` (all of which lie in that range)."""
    xp = array_module(values)
    if lo >= 0:
        shifted = (values.ravel() - values.dtype.type(lo)).astype(np.intp)  # no overflow: every value is >= lo
    else:
        shifted = values.ravel().astype(np.int64) - lo
    return to_host(xp.bincount(shifted, minlength=hi - lo + 1)).astype(np.int64)
