"""Device arrays: CuPy arrays, PyTorch CUDA tensors and other __cuda_array_interface__ / DLPack producers,
read in place on the caller's stream, results on the device. Every case skips itself without the framework,
without a CUDA device, or with an imghist built without CUDA. References: cv2 on the host copy."""
import cv2
import numpy as np
import pytest

import imghist
from conftest import cv2_calcHist, device_framework, photographs, random_image


class Fw:
    """Uniform access to CuPy and PyTorch for the tests."""

    def __init__(self, name):
        self.name = name
        self.mod = device_framework(name)

    def up(self, a):
        if self.name == "cupy":
            return self.mod.asarray(a)
        if a.dtype == np.uint16 and not hasattr(self.mod, "uint16"):
            pytest.skip("this PyTorch has no uint16 tensors")
        try:
            return self.mod.from_numpy(np.ascontiguousarray(a)).to("cuda")
        except TypeError:  # a PyTorch whose from_numpy does not take uint16: convert on the device
            return self.mod.from_numpy(a.astype(np.int32)).to("cuda").to(self.mod.uint16)

    def down(self, d):
        if isinstance(d, imghist.DeviceArray):
            return self.down(self.from_cai(d))
        if self.name == "cupy":
            return d.get()
        try:
            return d.cpu().numpy()
        except TypeError:  # uint16 tensors without a NumPy conversion
            return d.to(self.mod.int32).cpu().numpy().astype(np.uint16)

    def from_cai(self, obj):
        if self.name == "cupy":
            return self.mod.asarray(obj)
        return self.mod.as_tensor(obj, device="cuda")

    def is_mine(self, d):
        return isinstance(d, self.mod.ndarray if self.name == "cupy" else self.mod.Tensor)

    def stream(self):
        if self.name == "cupy":
            return self.mod.cuda.Stream(non_blocking=True)
        return self.mod.cuda.Stream()

    def use(self, s):
        return s if self.name == "cupy" else self.mod.cuda.stream(s)

    def synchronize(self):
        if self.name == "cupy":
            self.mod.cuda.get_current_stream().synchronize()
        else:
            self.mod.cuda.current_stream().synchronize()


@pytest.fixture(params=["cupy", "torch"])
def fw(request):
    return Fw(request.param)


def cv2_counts(img, bins, lo, hi):
    chans = 1 if img.ndim == 2 else img.shape[2]
    r = np.stack([cv2_calcHist([img], [c], None, [bins], [lo, hi]).ravel() for c in range(chans)]).astype(np.int64)
    return r[0] if img.ndim == 2 else r


def test_hist_of_device_arrays_stays_on_the_device(fw):
    for name, img in photographs().items():
        d = fw.up(img)
        h = imghist.hist(d)
        assert fw.is_mine(h), f"{name}: result should be a {fw.name} array, got {type(h)}"
        np.testing.assert_array_equal(fw.down(h), cv2_counts(img, 256, 0, 256), err_msg=name)
        # A ROI view of the device array (strided rows, odd x offset): read in place.
        roi = d[5:-3, 7:-10]
        np.testing.assert_array_equal(fw.down(imghist.hist(roi, 64, (0, 256))),
                                      cv2_counts(img[5:-3, 7:-10], 64, 0, 256), err_msg=name + " roi")
    for dtype, bins, rng in [("uint16", 1024, (0, 65536)), ("float32", 100, (-3.5, 300.0)), ("uint8", 37, (3, 201))]:
        for shape in [(1, 1), (17, 31), (33, 47, 3), (20, 21, 4)]:
            img = random_image(shape, dtype, 11)
            got = fw.down(imghist.hist(fw.up(img), bins, rng))
            np.testing.assert_array_equal(got, cv2_counts(img, bins, *rng), err_msg=f"{dtype} {shape}")
    i32 = random_image((40, 50), "int32", 12, low=-10, high=1100)
    np.testing.assert_array_equal(fw.down(imghist.hist(fw.up(i32), 1024, (0, 1024))),
                                  imghist.hist(i32, 1024, (0, 1024), backend="cpu"))
    # A device mask.
    img = random_image((64, 48), "uint8", 13)
    mask = (random_image((64, 48), "uint8", 14) > 128).astype(np.uint8)
    np.testing.assert_array_equal(fw.down(imghist.hist(fw.up(img), mask=fw.up(mask))),
                                  cv2_calcHist([img], [0], mask, [256], [0, 256]).ravel())


def test_calchist_of_device_arrays(fw):
    img = photographs()["astronaut.png"] if "astronaut.png" in photographs() else random_image((64, 64, 3), "uint8", 1)
    d = fw.up(img)
    for c in range(img.shape[2] if img.ndim == 3 else 1):
        got = imghist.calcHist([d], [c], None, [64], [0, 256])
        assert fw.is_mine(got)
        out = fw.down(got)
        assert out.dtype == np.float32 and out.shape == (64, 1)
        np.testing.assert_array_equal(out, cv2_calcHist([img], [c], None, [64], [0, 256]))


def test_filters_of_device_arrays_match_cv2(fw):
    for name, img in photographs().items():
        gray = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        d = fw.up(gray)
        eq = imghist.equalizeHist(d)
        assert fw.is_mine(eq)
        np.testing.assert_array_equal(fw.down(eq), cv2.equalizeHist(gray), err_msg=name)
        np.testing.assert_array_equal(fw.down(imghist.equalizeHist(d[3:-2, 5:-6])),
                                      cv2.equalizeHist(gray[3:-2, 5:-6]), err_msg=name + " roi")
        for typ in [imghist.THRESH_BINARY, imghist.THRESH_TRUNC | imghist.THRESH_OTSU,
                    imghist.THRESH_TOZERO_INV | imghist.THRESH_TRIANGLE]:
            r_exp, expected = cv2.threshold(gray, 100, 200, typ)
            r_got, got = imghist.threshold(d, 100, 200, typ)
            assert r_got == r_exp, f"{name} type {typ}"
            np.testing.assert_array_equal(fw.down(got), expected, err_msg=f"{name} type {typ}")
        got = fw.down(imghist.createCLAHE(2.0, (8, 8)).apply(d))
        # The CUDA backend gives the CPU backend's bits; both stay within one level of cv2.
        np.testing.assert_array_equal(got, imghist.CLAHE(2.0, (8, 8), backend="cpu").apply(gray), err_msg=name)
        assert np.abs(got.astype(int) - cv2.createCLAHE(2.0, (8, 8)).apply(gray)).max() <= 1
    # Other dtypes and channel counts of threshold.
    for dtype in ["uint16", "float32"]:
        img = random_image((31, 45, 3), dtype, 21)
        r_exp, expected = cv2.threshold(img, 1000.5, 250.0, imghist.THRESH_BINARY_INV)
        r_got, got = imghist.threshold(fw.up(img), 1000.5, 250.0, imghist.THRESH_BINARY_INV)
        assert r_got == r_exp
        np.testing.assert_array_equal(fw.down(got), expected, err_msg=dtype)


def test_equalize_hist_color_of_device_arrays_matches_the_host_result(fw):
    # The host result is checked against the cv2 compositions in test_filters.py.
    for name, img in photographs().items():
        if img.ndim != 3:
            continue
        for bgr in (img, np.dstack([img, img[:, :, 1]])):
            d = fw.up(bgr)
            for mode in ("luma", "per-channel"):
                got = imghist.equalizeHistColor(d, mode)
                assert fw.is_mine(got)
                np.testing.assert_array_equal(fw.down(got), imghist.equalizeHistColor(bgr, mode, backend="cpu"),
                                              err_msg=f"{name} {mode} {bgr.shape}")


def test_dst_given_is_written_in_place(fw):
    img = random_image((37, 53), "uint8", 31)
    d = fw.up(img)
    out = fw.up(np.zeros((41, 60), np.uint8))
    view = out[2:-2, 3:-4]
    assert imghist.equalizeHist(d, view) is view
    host = fw.down(out)
    np.testing.assert_array_equal(host[2:-2, 3:-4], cv2.equalizeHist(img))
    assert not host[:2].any() and not host[:, :3].any()


def test_work_runs_on_the_callers_stream(fw):
    # The input is produced on a non-default stream and imghist is called without any synchronisation:
    # the results are right only if imghist's work is ordered after that stream's work, i.e. runs on it.
    img = random_image((1080, 1920), "uint8", 41)
    s = fw.stream()
    with fw.use(s):
        d = fw.up(np.zeros_like(img))
        for _ in range(20):          # a queue of work ahead of imghist on this stream
            d = d + 1
        d = d - 20 + fw.up(img)      # uint8 wraps back: d == img once the stream has run
        h = imghist.hist(d)
        eq = imghist.equalizeHist(d)
        r, th = imghist.threshold(d, 0, 255, imghist.THRESH_BINARY | imghist.THRESH_OTSU)
        fw.synchronize()
    np.testing.assert_array_equal(fw.down(h), cv2_counts(img, 256, 0, 256))
    np.testing.assert_array_equal(fw.down(eq), cv2.equalizeHist(img))
    r_exp, th_exp = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    assert r == r_exp
    np.testing.assert_array_equal(fw.down(th), th_exp)


class CudaArrayInterfaceOnly:
    """A producer known to imghist only through __cuda_array_interface__."""

    def __init__(self, d):
        self.d = d
        self.__cuda_array_interface__ = d.__cuda_array_interface__


class DLPackOnly:
    """A producer known to imghist only through DLPack."""

    def __init__(self, d):
        self.d = d

    def __dlpack__(self, stream=None):
        return self.d.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.d.__dlpack_device__()


@pytest.mark.parametrize("wrapper", [CudaArrayInterfaceOnly, DLPackOnly])
def test_other_producers_give_imghist_device_arrays(fw, wrapper):
    img = random_image((45, 67, 3), "uint8", 51)
    gray = np.ascontiguousarray(img[:, :, 1])
    d, g = fw.up(img), fw.up(gray)
    fw.synchronize()  # the generic protocols run on the legacy default stream
    h = imghist.hist(wrapper(d))
    assert isinstance(h, imghist.DeviceArray)
    cai = h.__cuda_array_interface__
    assert cai["typestr"] == "<i8" and tuple(cai["shape"]) == (3, 256) and cai["version"] == 3
    np.testing.assert_array_equal(fw.down(h), cv2_counts(img, 256, 0, 256))
    eq = imghist.equalizeHist(wrapper(g))
    assert isinstance(eq, imghist.DeviceArray)
    np.testing.assert_array_equal(fw.down(eq), cv2.equalizeHist(gray))


def test_device_errors(fw):
    d = fw.up(random_image((20, 30), "uint8", 61))
    with pytest.raises(imghist.InvalidArgumentError, match="backend='cpu' cannot read a device array"):
        imghist.hist(d, backend="cpu")
    with pytest.raises(imghist.InvalidArgumentError, match="not adjacent"):
        imghist.hist(d[:, ::2])  # device arrays are never copied
    with pytest.raises(imghist.UnsupportedError):
        imghist.equalizeHist(fw.up(random_image((20, 30), "float32", 62)))
    with pytest.raises(imghist.Error):
        imghist.hist(fw.up(np.zeros((4, 4), np.float64)))
