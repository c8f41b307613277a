"""imghist.dask on a dask.distributed LocalCluster (worker processes on this machine, loopback only): the
histogram of a chunked array equals cv2's / NumPy's of the computed array, and equalize_hist,
rescale_intensity and match_histograms equal scikit-image's on the computed array. CuPy-chunked arrays are
tested where CuPy and a CUDA device exist (a GPU host)."""
import cv2
import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="dask is not installed (Debian: python3-dask)")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (python3-distributed)")
skimage = pytest.importorskip("skimage", reason="scikit-image (the reference) is not installed")
from skimage import exposure as sk_exposure  # noqa: E402

import imghist  # noqa: E402
import imghist.dask as idask  # noqa: E402
from conftest import photographs  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def client():
    """Two single-threaded worker processes: every test's graph runs on them."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def skewed(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    base = rng.gamma(2.0, 1.0, size=shape)
    if np.dtype(dtype).kind == "f":
        return (base / 4 - 0.25).astype(dtype)
    info = np.iinfo(dtype)
    scale = {1: 30, 2: 300}.get(np.dtype(dtype).itemsize, 1000)
    return np.clip(base * scale + (info.min // 2 if info.min < 0 else 0), info.min, info.max).astype(dtype)


def cv2_counts(img, bins, lo, hi):
    return cv2.calcHist([np.ascontiguousarray(img.reshape(img.shape[0], -1))], [0], None, [bins],
                        [lo, hi]).ravel().astype(np.int64)


def test_histogram_of_a_chunked_array_equals_the_whole_arrays():
    img = skewed("uint8", (1000, 1500), 1)
    darr = da.from_array(img, chunks=(130, 170))  # 72 blocks, ragged edges
    for bins, split_every in [(256, None), (64, 3), (7, 2)]:
        hist, edges = idask.histogram(darr, bins, (0, 256), split_every=split_every)
        assert isinstance(hist, da.Array) and hist.dtype == np.int64 and hist.shape == (bins,)
        np.testing.assert_array_equal(hist.compute(), cv2_counts(img, bins, 0, 256))
        np.testing.assert_array_equal(edges, np.linspace(0, 256, bins + 1))
    np.testing.assert_array_equal(idask.histogram(darr)[0].compute(), np.bincount(img.ravel(), minlength=256))


@pytest.mark.parametrize("dtype,bins,bounds", [("uint16", 1000, None), ("uint16", 100, (500, 2000)),
                                               ("float32", 50, (-0.3, 2.5))])
def test_histogram_of_other_dtypes_and_shapes(dtype, bins, bounds):
    vol = skewed(dtype, (6, 200, 150), 2)  # a volume: every sample counts
    darr = da.from_array(vol, chunks=(2, 64, 64))
    lo, hi = bounds or (0, 65536)
    np.testing.assert_array_equal(idask.histogram(darr, bins, bounds)[0].compute(), cv2_counts(vol, bins, lo, hi))


def test_histogram_refuses_what_imghist_cannot_count():
    with pytest.raises(imghist.UnsupportedError, match="dask.histogram: unsupported dtype float64"):
        idask.histogram(da.zeros((4, 4), dtype=np.float64, chunks=2), 8, (0, 1))
    with pytest.raises(imghist.InvalidArgumentError, match="dask.histogram: .*no natural range"):
        idask.histogram(da.zeros((4, 4), dtype=np.float32, chunks=2), 8)


DTYPES = ["uint8", "uint16", "int16", "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_equalize_hist_equals_the_single_array_result(dtype):
    img = skewed(dtype, (400, 500), 3)
    darr = da.from_array(img, chunks=(128, 160))
    out = idask.equalize_hist(darr)
    assert isinstance(out, da.Array)
    expected = sk_exposure.equalize_hist(img)
    got = out.compute()
    assert got.dtype == expected.dtype == out.dtype
    np.testing.assert_array_equal(got, expected)
    mask = np.zeros(img.shape, bool)
    mask[50:300, 100:] = True
    np.testing.assert_array_equal(idask.equalize_hist(darr, nbins=100, mask=mask).compute(),
                                  sk_exposure.equalize_hist(img, nbins=100, mask=mask))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rescale_intensity_equals_the_single_array_result(dtype):
    img = skewed(dtype, (300, 400), 4)
    darr = da.from_array(img, chunks=(100, 130))
    for in_range, out_range in [("image", "dtype"), ("image", (0, 1)), ("dtype", "uint8"), ((0.1, 100), "dtype")]:
        out = idask.rescale_intensity(darr, in_range, out_range)
        expected = sk_exposure.rescale_intensity(img, in_range, out_range)
        got = out.compute()
        assert got.dtype == expected.dtype == out.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_match_histograms_equals_the_single_array_result(dtype):
    img = skewed(dtype, (300, 400), 5)
    ref = skewed(dtype, (200, 250), 6)
    out = idask.match_histograms(da.from_array(img, chunks=(100, 130)), ref)
    got, expected = out.compute(), sk_exposure.match_histograms(img, ref)
    assert got.dtype == expected.dtype == out.dtype
    np.testing.assert_array_equal(got, expected)
    colour, colour_ref = np.stack([img, img[::-1], img[:, ::-1]], -1), np.stack([ref, ref.T[:200, :200].repeat(2, 1)[:, :250], ref[::-1]], -1)
    for axis in (-1, 0):
        a, r = np.moveaxis(colour, -1, axis), np.moveaxis(colour_ref, -1, axis)
        out = idask.match_histograms(da.from_array(a, chunks=100), da.from_array(r, chunks=90), channel_axis=axis)
        got, expected = out.compute(), sk_exposure.match_histograms(a, r, channel_axis=axis)
        assert got.dtype == expected.dtype == out.dtype
        np.testing.assert_array_equal(got, expected)


def test_a_photograph_tiled_across_workers():
    photo = photographs()["astronaut.png"]
    darr = da.from_array(photo, chunks=(100, 128, 3))
    np.testing.assert_array_equal(idask.equalize_hist(darr).compute(), sk_exposure.equalize_hist(photo))
    np.testing.assert_array_equal(idask.histogram(darr)[0].compute(), np.bincount(photo.ravel(), minlength=256))


def test_cupy_chunks():
    try:
        import cupy
    except Exception as e:
        pytest.skip(f"CuPy is not usable here ({e}): CuPy-chunked arrays are tested on a GPU host")
    if not imghist.cuda_available():
        pytest.skip("no CUDA device for imghist (or a build without CUDA): CuPy chunks are tested on a GPU host")
    img = skewed("uint8", (512, 700), 7)
    darr = da.from_array(img, chunks=(128, 128)).map_blocks(cupy.asarray)
    hist = idask.histogram(darr, 256)[0].compute()
    assert isinstance(hist, cupy.ndarray)
    np.testing.assert_array_equal(hist.get(), np.bincount(img.ravel(), minlength=256))
    eq = idask.equalize_hist(darr).compute()
    assert isinstance(eq, cupy.ndarray)
    np.testing.assert_array_equal(eq.get(), sk_exposure.equalize_hist(img))
    np.testing.assert_array_equal(idask.rescale_intensity(darr).compute().get(), sk_exposure.rescale_intensity(img))
