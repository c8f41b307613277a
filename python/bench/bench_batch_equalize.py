#!/usr/bin/env python3
"""imghist.batch.equalizeHist on a (256, 480, 640) uint8 CuPy array against the C++ batch call on the same arrays,
and torchvision's batched equalize (a benchmark for a GPU host; issue 34's Python row: >= 0.8x the C++ rate).

Rows (each a median of --runs runs of CUDA events on CuPy's current stream, after warm-up; the output array is
given, as batch_filters_bench gives it):
  python, one call      events around one imghist.batch.equalizeHist(x, out): the Python layer's cost included
  python, pipelined     events around --depth calls back to back, per call: the layer's cost hidden behind the
                        GPU's work, as in a stream of batches
  C++, one call         events around one equalize_hist_batch call made from C++ on views built once
                        (imghist._imghist._enqueue_equalize_batch): the library alone
  C++, pipelined        --depth such calls back to back, per call
  torchvision           torchvision.transforms.v2.functional.equalize on the same images as a (256, 1, 480, 640)
                        CUDA tensor (PIL's rule, not OpenCV's; when torch and torchvision are installed)
Every result is checked against cv2.equalizeHist per image (the first 8 images) and against the C++ call's.
--bench FILE also reads batch_filters_bench's --json output and prints its equalize/256x640x480 row (of the same data
set) beside these.

Usage: PYTHONPATH=<build>/python python3 python/bench/bench_batch_equalize.py [--runs 50] [--depth 20]
       [--dataset uniform|gauss32|photo] [--bench batch.json] [--json out.json]
"""
import argparse
import json
import os
import statistics

import numpy as np

import imghist
from imghist._arrays import as_input

N, H, W = 256, 480, 640


def host_batch(dataset):
    rng = np.random.default_rng(12345)
    if dataset == "uniform":
        return rng.integers(0, 256, (N, H, W), dtype=np.uint8)
    if dataset == "gauss32":
        return np.clip(np.rint(rng.normal(128, 32, (N, H, W))), 0, 255).astype(np.uint8)
    import cv2
    samples = os.environ.get("IMGHIST_SAMPLES_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "samples",
                                                                   "images")
    photo = cv2.imread(os.path.join(samples, "camera.png"), cv2.IMREAD_GRAYSCALE)
    frame = np.tile(photo, (H // photo.shape[0] + 1, W // photo.shape[1] + 1))[:H, :W]
    return np.ascontiguousarray(np.broadcast_to(frame, (N, H, W)))


def median_ms(cp, fn, runs, depth=1):
    stream = cp.cuda.get_current_stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(3):
        fn()
    stream.synchronize()
    times = []
    for _ in range(runs):
        start.record(stream)
        for _ in range(depth):
            fn()
        end.record(stream)
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / depth)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--dataset", default="uniform", choices=["uniform", "gauss32", "photo"])
    ap.add_argument("--bench", default="", help="batch_filters_bench --json output, for its equalize row")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    import cupy as cp
    import cv2
    if not imghist.cuda_available():
        raise SystemExit("no CUDA device for imghist (or a build without CUDA)")
    host = host_batch(args.dataset)
    x = cp.asarray(host)
    out = cp.empty_like(x)
    out_cpp = cp.empty_like(x)
    src, dst = as_input(x, "x"), as_input(out_cpp, "out")

    def python_call():
        imghist.batch.equalizeHist(x, out)

    def cpp_call(repeats=1):
        imghist._imghist._enqueue_equalize_batch(src.arg, dst.arg, repeats, src.device_id, src.stream)

    python_call()
    cpp_call()
    got = cp.asnumpy(out)
    assert np.array_equal(got, cp.asnumpy(out_cpp)), "the Python and C++ calls differ"
    for i in range(8):
        assert np.array_equal(got[i], cv2.equalizeHist(host[i])), f"image {i} differs from cv2.equalizeHist"

    rows = {
        "python, one call": median_ms(cp, python_call, args.runs),
        "python, pipelined": median_ms(cp, python_call, args.runs, args.depth),
        "C++, one call": median_ms(cp, cpp_call, args.runs),
        "C++, pipelined": median_ms(cp, lambda: cpp_call(args.depth), args.runs) / args.depth,
    }
    try:
        import torch
        from torchvision.transforms.v2 import functional as F
        t = torch.as_tensor(x, device="cuda").reshape(N, 1, H, W)
        # Both on the legacy default stream (CuPy's and torch's default), which the events are recorded on.
        rows["torchvision equalize"] = median_ms(cp, lambda: F.equalize(t), args.runs)
    except Exception as e:  # ImportError, or no usable torchvision
        print(f"torchvision: not measured ({e})")
    print(f"device: {imghist._imghist.cuda_device_name(0)}; data set {args.dataset}; (N, H, W) = {(N, H, W)}")
    for name, ms in rows.items():
        print(f"{name:<24} {ms * 1000:9.1f} us  {N / ms * 1000:10.0f} images/s")
    for mode in ("one call", "pipelined"):
        print(f"python / C++ rate, {mode}: {rows['C++, ' + mode] / rows['python, ' + mode]:.2f} (target >= 0.8)")
    if args.bench:
        with open(args.bench) as f:
            bench = json.load(f)
        # batch_filters_bench's rows: {"workload", "data", "ms", "peer_ms", "ratio", "peer"}; its data sets are named
        # as --dataset's.
        for r in bench.get("results", []):
            if r.get("workload") == "equalize/256x640x480" and r.get("data") == args.dataset:
                print(f"batch_filters_bench (C++, {bench.get('device', '?')}): {r['ms'] * 1000:9.1f} us; "
                      f"python / C++ rate, one call: {r['ms'] / rows['python, one call']:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": imghist._imghist.cuda_device_name(0), "dataset": args.dataset,
                       "ms": rows}, f, indent=2)


if __name__ == "__main__":
    main()
