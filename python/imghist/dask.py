"""imghist.dask: imghist's histogram and the scikit-image-shaped operations on dask arrays — images and
volumes larger than one machine's memory, chunked, on the threads of one process or the workers of a
dask.distributed cluster (whichever scheduler is active, as for any dask computation).

    histogram(darr, bins=256, range=None, *, split_every=None)    (hist, bin_edges), hist a dask array
    equalize_hist(darr, nbins=256, mask=None)                     dask array, lazy
    rescale_intensity(darr, in_range='image', out_range='dtype')  dask array, lazy
    match_histograms(darr, reference, *, channel_axis=None)       dask array, lazy
    process_files(operation, inputs, output_dir, client=None, **options)   list of FileResult

process_files runs the command-line tool's work on many image files as tasks of a dask.distributed cluster
(see its docstring); the others work on dask arrays:

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
import collections
import functools
import os
import threading
import uuid

import numpy as np

import dask
import dask.array as da
from dask.base import tokenize
from dask.core import flatten
from dask.highlevelgraph import HighLevelGraph

from . import _imghist as _core
from . import _skimage
from ._errors import Error, InvalidArgumentError, UnsupportedError
from ._levels import (all_level_counts, array_module, as_2d, counted_by_library, is_integer, range_counts,
                      to_host)

__all__ = ["histogram", "equalize_hist", "rescale_intensity", "match_histograms", "process_files", "FileResult"]

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


# ---- the command-line tool's per-file work on a cluster -------------------------------------------------------

FileResult = collections.namedtuple("FileResult", "file output status error note")
FileResult.__doc__ = """One input of process_files: its path, its output's path, status "done", "failed" or "skipped"
(skip_existing=True and the output exists), the error (the message naming the file) when it failed, and the
command's note for it when it has one (threshold: "threshold: 117", multi-level Otsu: "thresholds: 60 140")."""

_OPERATIONS = ("equalize", "stretch", "match", "threshold", "clahe")
# The CLI's options that make no sense for tasks scheduled by Dask, being about the CLI's own run (replacing
# the inputs, shards, progress, the folder pipeline's sizes and trace, the GPU JPEG pipeline's library), or that
# process_files sets itself (paths).
_NOT_OPTIONS = ("in_place", "shard", "quiet", "verbose", "paths", "trace", "pipeline", "nvjpeg")


def _job_spec(operation, inputs, output_dir, options):
    """What process_files runs file by file: (operation, the paths as the command takes them: IN... [REF] OUT,
    the command's options as keywords), from which _core.FileJob builds the job (checking the options)."""
    if operation not in _OPERATIONS:
        raise InvalidArgumentError(f"dask.process_files: unknown operation {operation!r}; one of "
                                   f"{', '.join(_OPERATIONS)}")
    opts = dict(options)
    reference = opts.pop("reference", None)
    if (operation == "match") != (reference is not None):
        raise TypeError("dask.process_files: reference= is " + ("required for 'match'" if operation == "match"
                                                                 else f"only used by 'match', not {operation!r}"))
    for key in opts:
        if key in _NOT_OPTIONS:
            raise TypeError(f"dask.process_files: {key}= is not an option of process_files (the cluster's tasks "
                            "take the place of the CLI's own run; --shard serves runs without Dask)")
    opts.setdefault("threads", 1)
    paths = [inputs] if isinstance(inputs, (str, bytes, os.PathLike)) else list(inputs)
    if not paths:
        raise InvalidArgumentError("dask.process_files: no inputs")
    paths = [os.fspath(p) for p in paths]
    if reference is not None:
        paths.append(os.fspath(reference))
    paths.append(os.fspath(output_dir))
    return operation, tuple(paths), opts


# Built jobs of this process (a worker's), by run: a match job reads its reference once per worker.
_JOBS = collections.OrderedDict()
_JOBS_LOCK = threading.Lock()


def _file_job(token, spec):
    with _JOBS_LOCK:
        job = _JOBS.get(token)
        if job is None:
            job = _JOBS[token] = _core.FileJob(*spec)
            while len(_JOBS) > 4:
                _JOBS.popitem(last=False)
        return job


def _run_file(file, output, spec, token):
    """One task: the file's work, as the CLI does it; a failure is the file's result, not the task's."""
    try:
        return "done", None, _file_job(token, spec).run(file, output)
    except Error as e:
        return "failed", str(e), None


def _clear_stale(folders):
    """Removes the temporaries that writers which are gone (e.g. a killed worker) left in `folders`."""
    removed = []
    for d in folders:
        if os.path.isdir(d):
            removed += _core.remove_stale_temporaries(d)
    return removed


def _default_client():
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _run_on_cluster(client, todo, spec, token):
    from distributed import wait
    futures = client.map(_run_file, [f for f, _ in todo], [o for _, o in todo], spec=spec, token=token,
                         key=[f"imghist-process_files-{token}-{i}" for i in range(len(todo))])
    wait(futures)
    outcomes = []
    for f in futures:
        if f.status == "finished":
            outcomes.append(f.result())
        else:  # the task itself failed: its worker died too often (KilledWorker), or the worker cannot import us
            e = f.exception()
            outcomes.append(("failed", f"{type(e).__name__}: {e}", None))
    del futures
    return outcomes


def process_files(operation, inputs, output_dir, client=None, **options):
    """Runs `imghist <operation> INPUTS... OUTPUT_DIR/` with one dask task per file: the command-line tool's own
    per-file work (its jobs, rules and code: output names, formats, quality, metadata, --auto-orient,
    --strip, ...), so every output is byte for byte what the CLI writes for that file with the same options
    (and the same --threads: process_files passes threads=1, one thread per task, unless told otherwise; PNG
    files are deflated in bands per thread, so their bytes, not their pixels, depend on it). JPEG files go
    through the CPU codecs, as the CLI does with --device cpu (its GPU JPEG pipeline is not used).

    operation: "equalize", "stretch", "match", "threshold" or "clahe".
    inputs: a path or a list of paths: files, folders (their image files; recursive=True for sub-folders, whose
        tree is mirrored) and glob patterns, as the CLI takes them.
    output_dir: the output folder (created when missing); outputs are named as the CLI names them in a folder:
        output_dir/<path relative to its input folder>, with to="png" (--to) giving them another format.
    client: a distributed.Client; None: the default client when there is one, else dask's local scheduler
        (threads of this process).
    options: the command's options as keywords, --name value becoming name=value: mode="per-channel",
        method="triangle", value=100, invert=True, classes=4, clip=3.0, tiles=(16, 16), low=0.5, high=0.5,
        reference="ref.png" (match's REF), to="png", quality=92, png_level=6, tiff_compression="lzw",
        strip=True, auto_orient=True, depth=8, flatten=True, background="black", recursive=True,
        skip_existing=True, max_pixels=..., max_memory=2 << 30 (sizes in bytes), device="cuda", threads=2.
        Flags take True or False, the others an int, a number (low and high in percent), a string or, for
        tiles, a pair of ints; None is the command's default. An option the command does not have, or a value
        it does not take, raises InvalidArgumentError naming the option and the problem.

    Before any task runs, the files are planned on the client as the CLI plans them, and the CLI's refusals
    apply (an output that is an input, two inputs with one output): InvalidArgumentError, nothing written.
    Workers must see the paths as the client does (a shared file system).

    Returns one FileResult per input, in input order (status "done", "failed" with the error, or "skipped").
    A file that fails (unreadable, hostile, unsupported) is reported and the others go on. Outputs are written
    atomically and durably (a temporary name, fsync, rename), so a task that runs twice — Dask re-runs the
    tasks of a worker that died — writes the same file again and nothing partial is ever visible under an
    output's name; the temporaries of killed workers are removed at the end. Resumable: skip_existing=True
    leaves outputs that exist alone (reported "skipped"), as the CLI's --skip-existing."""
    spec = _job_spec(operation, inputs, output_dir, options)
    if not _core.has_files:
        raise UnsupportedError("dask.process_files: this build of imghist has no image files (built without the "
                               "command-line tool: IMGHIST_PYTHON_FILES=OFF)")
    os.makedirs(output_dir, exist_ok=True)
    planned = _core.FileJob(*spec).plan()
    todo = [(f, o) for f, o, skipped in planned if not skipped]
    token = uuid.uuid4().hex
    client = client if client is not None else _default_client()
    if client is None:
        tasks = [dask.delayed(_run_file, pure=False)(f, o, spec, token) for f, o in todo]
        outcomes = list(dask.compute(*tasks))
    else:
        outcomes = _run_on_cluster(client, todo, spec, token)
    folders = sorted({os.path.dirname(o) or "." for _, o in todo})
    if folders:
        if client is not None:
            client.run(_clear_stale, folders, on_error="ignore")
        _clear_stale(folders)
    done = dict(zip(todo, outcomes))
    results = []
    for f, o, skipped in planned:
        status, error, note = ("skipped", None, None) if skipped else done[(f, o)]
        results.append(FileResult(f, o, status, error, note or None))
    return results


def __dir__():
    return list(__all__)
