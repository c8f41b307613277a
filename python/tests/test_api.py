"""The Python interface itself: errors as exceptions with the library's messages, the GIL released during
work, input kinds (NumPy layouts, DLPack from the CPU, torch CPU tensors, __cuda_array_interface__)."""
import re
import threading
import time

import cv2
import numpy as np
import pytest

import imghist
from conftest import random_image


def raises(exc, fn, *words):
    """Calls fn, requires an exception of class `exc` whose message contains every word; returns it."""
    with pytest.raises(exc) as info:
        fn()
    assert isinstance(info.value, imghist.Error)
    for w in words:
        assert w in str(info.value), f"{w!r} not in {str(info.value)!r}"
    return info.value


IMG = random_image((30, 40), "uint8", 1)


def test_errors_are_exceptions_with_the_librarys_message():
    E = imghist
    raises(E.UnsupportedError, lambda: imghist.hist(IMG.astype(np.float64)), "float64", "uint8, uint16")
    raises(TypeError, lambda: imghist.hist(IMG.astype(np.int8)), "int8")
    raises(E.InvalidArgumentError, lambda: imghist.hist(IMG, bins=0), "bins must be at least 1")
    raises(ValueError, lambda: imghist.hist(IMG.astype(np.int32)), "no natural range")
    raises(ValueError, lambda: imghist.hist(IMG, 10, (5, 5)))
    raises(ValueError, lambda: imghist.hist(IMG, mask=np.ones((30, 41), np.uint8)), "mask size 41x30",
           "does not match the image size 40x30")
    raises(ValueError, lambda: imghist.hist(IMG, mask=np.ones((30, 40), np.uint16)), "mask must be uint8")
    raises(ValueError, lambda: imghist.hist(np.zeros((2, 3, 4, 5), np.uint8)), "2-D (H, W) or 3-D (H, W, C)")
    raises(ValueError, lambda: imghist.hist(np.zeros((4, 5, 2), np.uint8)), "2 channels")
    raises(ValueError, lambda: imghist.hist(IMG, backend="gpu"), "gpu")
    raises(TypeError, lambda: imghist.equalizeHist(IMG.astype(np.uint16)), "equalizeHist: uint8 images only")
    raises(TypeError, lambda: imghist.equalizeHist(np.zeros((5, 5, 3), np.uint8)), "1-channel",
           "use imghist.equalizeHistColor")
    raises(TypeError, lambda: imghist.threshold(IMG.astype(np.float32), 0, 1, imghist.THRESH_OTSU),
           "threshold: Otsu needs a 1-channel uint8 or uint16 image")
    raises(TypeError, lambda: imghist.threshold(IMG.astype(np.uint16), 0, 1, imghist.THRESH_TRIANGLE),
           "threshold: Triangle needs a 1-channel uint8 image")
    raises(TypeError, lambda: imghist.threshold(IMG.astype(np.int32), 5, 1, imghist.THRESH_BINARY),
           "threshold: unsupported dtype int32")
    raises(ValueError, lambda: imghist.threshold(IMG, 5, 1, 5), "unknown type 5")
    raises(ValueError, lambda: imghist.threshold(IMG, 5, 1, imghist.THRESH_OTSU | imghist.THRESH_TRIANGLE),
           "unknown type 24")
    raises(ValueError, lambda: imghist.createCLAHE(2.0, (0, 8)), "tile grid must be at least 1x1")
    raises(TypeError, lambda: imghist.createCLAHE().apply(IMG.astype(np.float32)), "CLAHE.apply: 1-channel uint8 or uint16")
    raises(TypeError, lambda: imghist.calcHist([IMG], [0, 1], None, [8, 8], [0, 256, 0, 256]), "one-dimensional")
    raises(ValueError, lambda: imghist.calcHist([IMG], [1], None, [8], [0, 256]), "channel 1 does not exist")
    # Outputs: read-only, wrong shape, partial overlap with the source.
    ro = np.empty_like(IMG)
    ro.flags.writeable = False
    raises(ValueError, lambda: imghist.equalizeHist(IMG, ro), "read-only")
    raises(ValueError, lambda: imghist.equalizeHist(IMG, np.empty((30, 41), np.uint8)))
    big = random_image((31, 40), "uint8", 2)
    raises(ValueError, lambda: imghist.equalizeHist(big[:30], big[1:]), "overlap")


@pytest.mark.skipif(imghist.cuda_available(), reason="a CUDA device exists: the no-device errors cannot occur")
def test_cuda_without_a_device_is_a_runtime_error():
    for fn in [lambda: imghist.hist(IMG, backend="cuda"), lambda: imghist.equalizeHist(IMG, backend="cuda"),
               lambda: imghist.threshold(IMG, 1, 2, 0, backend="cuda")]:
        raises(imghist.NoDeviceError, fn, "no CUDA device")
        with pytest.raises(RuntimeError):
            fn()


def max_gil_gap(fn):
    """Runs fn() on a worker thread while this thread keeps waking up to run Python; returns (the call's
    duration, the longest time this thread went without running). If fn held the GIL, this thread could
    not run during the call and the gap would span it."""
    result = {}

    def worker():
        t0 = time.perf_counter()
        fn()
        result["duration"] = time.perf_counter() - t0

    t = threading.Thread(target=worker)
    last = time.perf_counter()
    gap = 0.0
    t.start()
    while t.is_alive():
        time.sleep(0.001)  # sleeping, not spinning: the library's workers keep the cores
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
    t.join()
    return result["duration"], gap


BIG = None


@pytest.mark.parametrize("op", ["hist", "equalizeHist", "threshold", "CLAHE"])
def test_the_gil_is_released_during_work(op):
    global BIG
    if BIG is None:
        BIG = random_image((6000, 8000), "uint8", 5)
    big = BIG
    dst = np.empty_like(big)
    call = {  # everything the worker does is the library call (no NumPy work that holds the GIL)
        "hist": lambda: imghist.hist(big, backend="cpu"),
        "equalizeHist": lambda: imghist.equalizeHist(big, dst, backend="cpu"),
        "threshold": lambda: imghist.threshold(big, 0, 255, imghist.THRESH_OTSU, dst, backend="cpu"),
        "CLAHE": lambda: imghist.CLAHE(2.0, backend="cpu").apply(big, dst),
    }[op]
    call()  # warm up (thread pools, page faults)
    # Repeat the call so that the worker runs for about 0.4 s (between two calls the GIL is held only for the
    # loop's step): long against what a busy 2-core machine's scheduler may keep this thread waiting for its
    # core, so that only a held GIL makes a gap of half the run.
    t0 = time.perf_counter()
    call()
    reps = max(1, int(0.4 / max(time.perf_counter() - t0, 1e-6)) + 1)
    duration, gap = max_gil_gap(lambda: [call() for _ in range(reps)])
    assert duration > 0.1, "the call is too short to tell"
    # Held GIL: the gap spans the whole run (measured: gap >= duration). Released: a few ms at most.
    assert gap < 0.5 * duration, f"the main thread stalled {gap * 1e3:.1f} ms during a {duration * 1e3:.1f} ms run"


def test_numpy_layouts():
    img = random_image((40, 50, 3), "uint16", 3)
    expected = imghist.hist(np.ascontiguousarray(img), 64, backend="cpu")
    for view in [np.asfortranarray(img), img[::-1, ::-1], img.copy(order="C").view()]:
        np.testing.assert_array_equal(imghist.hist(view, 64, backend="cpu"), expected[:, :])
    # Unaligned samples (NumPy allows them, e.g. arrays unpickled from a byte stream) are read from a copy;
    # an unaligned output is refused.
    raw = np.zeros(img.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, np.uint16, img.size, offset=1).reshape(img.shape)
    unaligned[...] = img
    assert not unaligned.flags.aligned
    np.testing.assert_array_equal(imghist.hist(unaligned, 64, backend="cpu"), expected)
    gray = np.ascontiguousarray(img[:, :, 0])
    ro = np.frombuffer(bytearray(gray.nbytes + 1), np.uint16, gray.size, offset=1).reshape(gray.shape)
    ro[...] = gray
    np.testing.assert_array_equal(imghist.threshold(ro, 1000, 7, imghist.THRESH_BINARY, backend="cpu")[1],
                                  cv2.threshold(gray, 1000, 7, cv2.THRESH_BINARY)[1])
    raises(ValueError, lambda: imghist.threshold(gray, 1000, 7, imghist.THRESH_BINARY, ro, backend="cpu"), "aligned")
    # Non-native byte order is refused rather than misread.
    raises(TypeError, lambda: imghist.hist(img.astype(">u2")), "native byte order")
    # Objects NumPy can view (the buffer protocol): read as np.asarray reads them.
    buf = memoryview(np.ascontiguousarray(img[:, :, 0]))
    np.testing.assert_array_equal(imghist.hist(buf, 64, backend="cpu"), expected[0])


class DLPackOnly:
    """Exposes an array only through the DLPack protocol."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


@pytest.mark.skipif(not hasattr(np.ndarray, "__dlpack__"), reason="this NumPy has no DLPack export")
def test_dlpack_host_arrays_are_read_in_place():
    img = random_image((33, 47), "uint8", 4)
    roi = img[2:-1, 3:-2]
    np.testing.assert_array_equal(imghist.hist(DLPackOnly(roi), backend="cpu"),
                                  cv2.calcHist([roi], [0], None, [256], [0, 256]).ravel())
    eq = imghist.equalizeHist(DLPackOnly(roi), backend="cpu")
    assert isinstance(eq, np.ndarray)
    np.testing.assert_array_equal(eq, cv2.equalizeHist(roi))
    # External arrays are never copied: a column step is an error, not a silent copy.
    raises(ValueError, lambda: imghist.hist(DLPackOnly(img[:, ::2]), backend="cpu"), "not adjacent")


def test_torch_cpu_tensors_give_torch_tensors():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    img = random_image((33, 47), "uint8", 5)
    t = torch.from_numpy(img)
    h = imghist.hist(t, backend="cpu")
    np.testing.assert_array_equal(h, cv2.calcHist([img], [0], None, [256], [0, 256]).ravel())
    eq = imghist.equalizeHist(t, backend="cpu")
    assert isinstance(eq, torch.Tensor)
    np.testing.assert_array_equal(eq.numpy(), cv2.equalizeHist(img))
    dst = torch.zeros_like(t)
    assert imghist.equalizeHist(t, dst, backend="cpu") is dst  # a torch dst is written in place
    np.testing.assert_array_equal(dst.numpy(), cv2.equalizeHist(img))


class FakeCudaArray:
    """A __cuda_array_interface__ producer (pointing at host memory: only for paths that fail before any
    device access)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                                         "strides": None, "version": 3, "stream": 1}


@pytest.mark.skipif(imghist.cuda_available(), reason="a CUDA device exists: device arrays are tested in "
                                                     "test_device_arrays.py")
def test_device_arrays_without_a_device_raise_no_device():
    fake = FakeCudaArray(random_image((8, 8), "uint8", 6))
    for fn in [lambda: imghist.equalizeHist(fake), lambda: imghist.hist(fake),
               lambda: imghist.threshold(fake, 1, 2, imghist.THRESH_OTSU), lambda: imghist.createCLAHE().apply(fake)]:
        raises(imghist.NoDeviceError, fn, "a device array was given but no CUDA device is available")
    raises(ValueError, lambda: imghist.equalizeHist(fake, backend="cpu"), "backend='cpu' cannot read a device array")


# Names a Python user does not have: C++ functions and types of the libraries, their sample-type names.
CPP_NAMES = re.compile(r"::|\b(u8|u16|i32|f32|i8|u64|U64)\b|(?<!exposure\.)\bequalize_hist\b|equalize_hist_color|"
                       r"stretch_contrast|stretch_table|match_table|(?<!exposure\.)\bmatch_histograms?\b|apply_table|"
                       r"apply_lut|(?<!filters\.)threshold_multiotsu|multiotsu_thresholds|\bBinSpec|CountType|Backend\b|"
                       r"CudaHistogrammer|calcHistBatch|DeviceBuffer|8-bit|16-bit")


def test_messages_name_python_functions_arguments_and_dtypes():
    rgb = random_image((20, 30, 3), "uint8", 7)
    f32 = IMG.astype(np.float32)
    calls = {
        "hist": [lambda: imghist.hist(f32), lambda: imghist.hist(IMG, 300), lambda: imghist.hist(IMG, 8, (1, float("inf"))),
                 lambda: imghist.hist(IMG, mask=np.ones((30, 40), np.uint16)), lambda: imghist.hist(IMG, backend="gpu")],
        "calcHist": [lambda: imghist.calcHist([f32], [0], None, [8], None)],
        "equalizeHist": [lambda: imghist.equalizeHist(rgb), lambda: imghist.equalizeHist(IMG.astype(np.uint16)),
                         lambda: imghist.equalizeHist(IMG, np.empty((30, 41), np.uint8))],
        "equalizeHistColor": [lambda: imghist.equalizeHistColor(IMG), lambda: imghist.equalizeHistColor(rgb, "hsv"),
                              lambda: imghist.equalizeHistColor(rgb.astype(np.uint16))],
        "threshold": [lambda: imghist.threshold(f32, 0, 1, imghist.THRESH_OTSU),
                      lambda: imghist.threshold(IMG.astype(np.int32), 5, 1, imghist.THRESH_BINARY)],
        "CLAHE.apply": [lambda: imghist.createCLAHE().apply(f32), lambda: imghist.createCLAHE().apply(rgb)],
        "stretchContrast": [lambda: imghist.stretchContrast(f32), lambda: imghist.stretchContrast(IMG, 80, 30),
                            lambda: imghist.stretchContrast(rgb, mode="hsv")],
        "matchHistograms": [lambda: imghist.matchHistograms(f32, f32), lambda: imghist.matchHistograms(rgb, IMG)],
        "thresholdMultiOtsu": [lambda: imghist.thresholdMultiOtsu(f32), lambda: imghist.thresholdMultiOtsu(IMG, 9),
                               lambda: imghist.thresholdMultiOtsu(np.zeros((4, 4), np.uint8))],
    }
    for function, fns in calls.items():
        for fn in fns:
            with pytest.raises(imghist.Error) as info:
                fn()
            msg = str(info.value)
            assert msg.startswith(function + ":"), msg
            assert not CPP_NAMES.search(msg), msg
