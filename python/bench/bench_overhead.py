#!/usr/bin/env python3
"""Per-call overhead of the imghist Python layer over the C++ call it makes.

For each case, imghist.hist(img, backend=...) is timed from Python (time.perf_counter_ns around each call)
and the same imghist::calc_hist call (same view, bins and options) is timed from C++ by the module's
measurement hook _imghist._time_calc_hist (std::chrono::steady_clock around each call, GIL released).
Both run interleaved in rounds, in one process, on the same image; medians and minimums are compared:
    overhead = median(Python call) - median(C++ call)   (and the same with minimums).
The 1080p case is the question asked (a 1920x1080 uint8 NumPy image); its difference is small next to the
call's own run-to-run noise (threads on a loaded machine), so the 1x1 case (the same code path with no
work) isolates the overhead.

Usage: PYTHONPATH=<build>/python python3 python/bench/bench_overhead.py [--backend cpu] [--rounds 30] [--calls 200]
"""
import argparse
import statistics
import time

import numpy as np

import imghist
from imghist import _imghist


def time_python(img, backend, calls):
    out = []
    hist = imghist.hist
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        hist(img, 256, None, None, backend)
        out.append((time.perf_counter_ns() - t0) * 1e-9)
    return out


def measure(img, backend, rounds, calls):
    py, cpp = [], []
    time_python(img, backend, 10)  # warm-up: thread pools, page faults, caches
    _imghist._time_calc_hist(img, 256, backend, 10)
    for _ in range(rounds):
        py += time_python(img, backend, calls)
        cpp += _imghist._time_calc_hist(img, 256, backend, calls)
    return statistics.median(py), statistics.median(cpp), min(py), min(cpp)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda", "auto"])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    cases = [("1920x1080 uint8", rng.integers(0, 256, (1080, 1920), dtype=np.uint8)),
             ("1920x1080 uint8 ROI view", rng.integers(0, 256, (1100, 1960), dtype=np.uint8)[10:1090, 20:1940]),
             ("1x1 uint8 (no work)", np.zeros((1, 1), np.uint8))]
    print(f"imghist.hist vs imghist::calc_hist, backend={args.backend}, {args.rounds} rounds x {args.calls} calls "
          f"each; microseconds per call")
    print(f"{'image':28s} {'median: Python':>15s} {'C++':>9s} {'overhead':>9s} {'min: Python':>12s} {'C++':>9s} "
          f"{'overhead':>9s}")
    for name, img in cases:
        calls = args.calls if img.size > 1 else args.calls * 10
        p, c, pmin, cmin = measure(img, args.backend, args.rounds, calls)
        print(f"{name:28s} {p * 1e6:15.2f} {c * 1e6:9.2f} {(p - c) * 1e6:9.2f} {pmin * 1e6:12.2f} {cmin * 1e6:9.2f} "
              f"{(pmin - cmin) * 1e6:9.2f}")


if __name__ == "__main__":
    main()
