"""imghist.dask: imghist's histogram and the scikit-image-shaped operations on dask arrays — images and
volumes larger than one machine's memory, chunked, on the threads of one process or the workers of a
dask.distributed cluster (whichever scheduler is active, as for any dask computation).

    histogram(darr, bins=256, range=None, *, split_every=None)    (hist, bin_edges), hist a dask array
    equalize_hist(darr, nbins=256, mask=None)                     dask array, lazy
    rescale_intensity(darr, in_range='image', out_range='dtype')  dask array, lazy
    match_histograms(darr, reference, *, channel_axis=None)       dask array, lazy

Blocks are NumPy or CuPy arrays (a dask array's chunk type: da.from_array of a CuPy array, or
darr.map_blocks(cupy.asarray)); each block is counted by imghist where it lives, and the per-block
histograms are summed in a tree (split_every blocks per step). The operations compute their global
statistics first — a histogram, a minimum and maximum, the distinct values — when they are called, then
return a lazy array that applies one plan (a table or an interpolation) to every block with map_blocks:
the result equals imghist.exposure's (and scikit-image's) on the computed array, element for element.

Workers must be able to import imghist (install the wheel where they run). Deployment: a dask.distributed
Client — LocalCluster on one machine, dask-jobqueue's SLURMCluster on Slurm, or Client("tcp://scheduler:8786")
for a scheduler running elsewhere (e.g. the dask Helm chart on Kubernetes) — is all it takes.
"""
import functools

import numpy as np

import dask
import dask.array as da
from dask.base import tokenize
from dask.core import flatten
from dask.highlevelgraph import HighLevelGraph

from . import _imghist as _core
from . import _skimage
from ._errors import UnsupportedError
from ._levels import (all_level_counts, array_module, as_2d, counted_by_library, is_integer, range_counts,
                      to_host)

__all__ = ["histogram", "equalize_hist", "rescale_intensity", "match_histograms"]

_HIST_DTYPES = ("uint8", "uint16", "int32", "float32")


# ---- per-block statistics, summed in a tree ------------------------------------------------------------------

def _per_block(func, arrays, width, token, on_host):
    """A (blocks, width) int64 dask array whose row i is func(block i of each array); the arrays share one
    chunking. on_host: func returns NumPy rows (else rows of the blocks' array type)."""
    xp = np if on_host else array_module(arrays[0]._meta)
    name = f"imghist-{token}-" + tokenize(func, *arrays, width)
    keys = [list(flatten(a.__dask_keys__())) for a in arrays]
    dsk = {(name, i, 0): (func,) + tuple(ks) for i, ks in enumerate(zip(*keys))}
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=arrays)
    return da.Array(graph, name, chunks=((1,) * len(keys[0]), (width,)), meta=xp.empty((0, 0), np.int64))


def _summed(func, arrays, width, token, split_every=None, on_host=True):
    return _per_block(func, arrays, width, token, on_host).sum(axis=0, split_every=split_every)


def _compute_to_host(*values):
    return tuple(to_host(v) if not np.isscalar(v) else v for v in dask.compute(*values))


def _row(counts):
    return counts.reshape(1, -1)


# ---- histogram --------------------------------------------------------------------------------------------

def _block_hist(block, bins, bounds):
    pieces = [as_2d(block)]
    if pieces[0] is None:  # a side of more than 2^31 - 1 samples: rows of 2^30 samples
        flat, step = block.ravel(), 1 << 30
        pieces = [flat[i:i + step].reshape(1, -1) for i in range(0, flat.size, step)]
    if array_module(block) is np:
        counts = [_core.hist_host(p, bins, bounds, None, "auto", "dask.histogram") for p in pieces]
    else:
        from . import hist
        counts = [hist(p, bins, bounds) for p in pieces]
    return _row(sum(counts[1:], counts[0]))


def histogram(darr, bins=256, range=None, *, split_every=None):
    """Counts of the samples of `darr` (every sample, any shape) in `bins` equal bins over [low, high) =
    `range`, by imghist.hist's rule on each block: a sample v falls in bin floor((v - low) * bins / (high -
    low)) as cv2.calcHist computes it; samples outside [low, high) and NaN are not counted. range=None is
    [0, 256) for uint8 and [0, 65536) for uint16 and is required for int32 and float32 (the dtypes imghist
    counts).

    Returns (hist, bin_edges) as dask.array.histogram does: hist a lazy int64 dask array of shape (bins,)
    (CuPy-backed for CuPy blocks), bin_edges the NumPy array of the bins+1 edges."""
    if not isinstance(darr, da.Array):
        darr = da.asarray(darr)
    dtype = np.dtype(darr.dtype)
    if dtype.name not in _HIST_DTYPES:
        raise UnsupportedError(f"dask.histogram: unsupported dtype {dtype.name}; supported: {', '.join(_HIST_DTYPES)}")
    # Arguments are checked here, not in the first task: the library's own rules on a one-sample image.
    _core.hist_host(np.zeros((1, 1), dtype), int(bins), range, None, "cpu", "dask.histogram")
    lo, hi = (0, 256 if dtype == np.uint8 else 65536) if range is None else (float(range[0]), float(range[1]))
    counts = _summed(functools.partial(_block_hist, bins=int(bins), bounds=range), [darr], int(bins),
                     "histogram", split_every, on_host=False)
    return counts, np.linspace(lo, hi, int(bins) + 1)


# ---- statistics of the skimage-shaped operations ------------------------------------------------------------

def _block_level_counts(block, mask=None):
    counts, _ = all_level_counts(block, mask, "dask")
    return _row(counts)


def _block_range_counts(block, mask=None, lo=0, hi=0):
    values = block if mask is None else block[mask]
    return _row(range_counts(values, lo, hi) if values.size else np.zeros(hi - lo + 1, np.int64))


def _block_float_counts(block, mask=None, nbins=256, range=None):
    values = block.ravel() if mask is None else block[mask]
    return _row(to_host(_skimage.numpy_histogram(values, nbins, range)[0]).astype(np.int64))


def _aligned(mask, darr):
    if mask is None:
        return None
    m = mask if isinstance(mask, da.Array) else da.from_array(np.asarray(mask))
    if m.shape != darr.shape:
        raise ValueError(f"mask shape {m.shape} differs from the image's {darr.shape}")
    return m.astype(bool).rechunk(darr.chunks)


def _masked_min_max(darr, mask):
    """(min, max) of darr's samples where mask is True (all when None), as NumPy scalars of darr's dtype."""
    if mask is None:
        lo, hi = darr.min(), darr.max()
    else:
        kind = np.dtype(darr.dtype).kind
        big = np.inf if kind == "f" else np.iinfo(darr.dtype).max
        small = -np.inf if kind == "f" else np.iinfo(darr.dtype).min
        lo = da.where(mask, darr, darr.dtype.type(big)).min()
        hi = da.where(mask, darr, darr.dtype.type(small)).max()
    lo, hi = _compute_to_host(lo, hi)
    return darr.dtype.type(np.asarray(lo)[()]), darr.dtype.type(np.asarray(hi)[()])


def _level_counts(darr, mask):
    """Global counts of the levels of an integer dask array over [min, max] (of samples where mask is set):
    (counts, low)."""
    arrays = [darr] if mask is None else [darr, mask]
    if counted_by_library(darr.dtype):
        unsigned_levels = 256 if np.dtype(darr.dtype).itemsize == 1 else 65536
        counts = _compute_to_host(_summed(_block_level_counts, arrays, unsigned_levels, "levels"))[0]
        first = int(np.iinfo(darr.dtype).min)
        present = np.flatnonzero(counts)
        if present.size == 0:
            raise ValueError("the image has no samples" + (" where the mask is set" if mask is not None else ""))
        return counts[present[0]:present[-1] + 1], first + int(present[0])
    lo, hi = (int(v) for v in _masked_min_max(darr, mask))
    func = functools.partial(_block_range_counts, lo=lo, hi=hi)
    return _compute_to_host(_summed(func, arrays, hi - lo + 1, "levels"))[0], lo


def _meta(darr, dtype):
    return array_module(darr._meta).empty((0,) * darr.ndim, dtype)


# ---- operations -----------------------------------------------------------------------------------------------

def equalize_hist(darr, nbins=256, mask=None):
    """imghist.exposure.equalize_hist (scikit-image's) of a dask array: the histogram of the whole array (of
    its samples where `mask`, a dask or NumPy bool array of darr's shape, is True) is gathered first, then
    every block is mapped through its normalised cumulative histogram. float64 result (float32 for float16
    and float32 arrays), lazy."""
    darr = darr if isinstance(darr, da.Array) else da.asarray(darr)
    m = _aligned(mask, darr)
    arrays = [darr] if m is None else [darr, m]
    if m is None and darr.ndim == 3 and darr.shape[-1] < 4:
        _skimage.warn("This might be a color image. The histogram will be computed on the flattened image. You "
                      "can instead apply this function to each color channel, or set channel_axis.")
    if is_integer(darr.dtype):
        counts, lo = _level_counts(darr, m)
        plan = _skimage.EqualizePlan.from_level_counts(darr.dtype, counts, lo)
    else:
        lo, hi = _masked_min_max(darr, m)
        edges = np.histogram_bin_edges(np.empty(0, darr.dtype), bins=nbins, range=(lo, hi))
        func = functools.partial(_block_float_counts, nbins=nbins, range=(lo, hi))
        counts = _compute_to_host(_summed(func, arrays, int(nbins), "float-counts"))[0]
        centers = (edges[:-1] + edges[1:]) / 2.
        plan = _skimage.EqualizePlan(darr.dtype, centers, _skimage.cdf_of(counts, darr.dtype))
    return darr.map_blocks(plan.apply, dtype=plan.out_type, meta=_meta(darr, plan.out_type))


def rescale_intensity(darr, in_range="image", out_range="dtype"):
    """imghist.exposure.rescale_intensity (scikit-image's) of a dask array: 'image' ranges are the whole
    array's minimum and maximum, computed first; every block is then rescaled alike. Lazy."""
    darr = darr if isinstance(darr, da.Array) else da.asarray(darr)
    plan = _skimage.rescale_plan(darr.dtype, in_range, out_range, lambda: _masked_min_max(darr, None))
    out_dtype = np.dtype(plan.out_dtype)
    return darr.map_blocks(plan.apply, dtype=out_dtype, meta=_meta(darr, out_dtype))


def _block_unique(block):
    xp = array_module(block)
    values, counts = xp.unique(block.ravel(), return_counts=True)
    return to_host(values), to_host(counts).astype(np.int64)


def _merge_unique(*parts):
    values, inverse = np.unique(np.concatenate([v for v, _ in parts]), return_inverse=True)
    counts = np.zeros(values.size, np.int64)
    np.add.at(counts, inverse, np.concatenate([c for _, c in parts]))
    return values, counts


def _distribution(darr, split_every=8):
    """The distinct values of a dask array and their counts (np.unique's), gathered from all blocks: level
    histograms for 8- and 16-bit integers, else per-block np.unique merged in a tree."""
    if counted_by_library(darr.dtype):
        counts, lo = _level_counts(darr, None)
        present = np.flatnonzero(counts)
        return _skimage.Distribution((lo + present).astype(darr.dtype), counts[present], int(darr.size))
    parts = [dask.delayed(_block_unique)(b) for b in darr.to_delayed().ravel()]
    while len(parts) > 1:
        parts = [dask.delayed(_merge_unique)(*parts[i:i + split_every]) for i in range(0, len(parts), split_every)]
    values, counts = parts[0].compute()
    return _skimage.Distribution(values, counts, int(darr.size))


def _match_block(block, plans, channel_axis):
    return _skimage.apply_match(block, plans, channel_axis, "dask.match_histograms")


def match_histograms(darr, reference, *, channel_axis=None):
    """imghist.exposure.match_histograms (scikit-image's) of a dask array against `reference` (a dask,
    NumPy or CuPy array): the distributions of both are gathered first (per channel with channel_axis, the
    channel axis then held in one chunk), then every block is mapped. Lazy."""
    darr = darr if isinstance(darr, da.Array) else da.asarray(darr)
    ref = reference if isinstance(reference, da.Array) else da.asarray(reference)
    _skimage.check_match_shapes(darr, ref, channel_axis)
    if channel_axis is None:
        plans = [_skimage.MatchPlan(_distribution(darr), _distribution(ref))]
    else:
        axis = channel_axis % darr.ndim
        darr = darr.rechunk({axis: -1})
        take = [(slice(None),) * axis + (c,) for c in range(darr.shape[axis])]
        plans = [_skimage.MatchPlan(_distribution(darr[t]), _distribution(ref[t])) for t in take]
    out_dtype = _skimage.match_output_dtype(darr.dtype, channel_axis)
    func = functools.partial(_match_block, plans=plans, channel_axis=channel_axis)
    return darr.map_blocks(func, dtype=out_dtype, meta=_meta(darr, out_dtype))


def __dir__():
    return list(__all__)
