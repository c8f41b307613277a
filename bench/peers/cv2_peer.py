"""The peer a Python user would pick on the host: opencv-python's calcHist, equalizeHist and
threshold(THRESH_OTSU) with all its threads, on the same frame sizes and data (8-bit gray, uniform random)
as gpuhist_calls_bench. Host clock, 3 warm-up calls, median of up to 101 runs (at least 7, about 2 s).

    python3 bench/cv2_peer.py
"""
import statistics
import time

import cv2
import numpy as np

SIZES = {"640x480": (480, 640), "1080p": (1080, 1920), "4K": (2160, 3840), "8K": (4320, 7680),
         "16K": (8640, 15360)}


def median_us(f):
    for _ in range(3):
        f()
    times = []
    start = time.perf_counter()
    for i in range(101):
        a = time.perf_counter()
        f()
        times.append((time.perf_counter() - a) * 1e6)
        if i >= 6 and time.perf_counter() - start > 2.0:
            break
    return statistics.median(times), len(times)


def main():
    print("cv2", cv2.__version__, "threads", cv2.getNumThreads())
    rng = np.random.default_rng(12345)
    for name, (h, w) in SIZES.items():
        img = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
        calls = [("hist", lambda: cv2.calcHist([img], [0], None, [256], [0, 256])),
                 ("equalize", lambda: cv2.equalizeHist(img)),
                 ("otsu", lambda: cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU))]
        for op, f in calls:
            us, runs = median_us(f)
            print(f"{op + '/cv2':22s} {name:8s} {us:10.1f} us  ({runs} runs)", flush=True)


if __name__ == "__main__":
    main()
