#!/usr/bin/env python3
"""imghist.exposure / imghist.filters against scikit-image on the same images, in one process.

For each dtype (uint8, uint16) and data set (uniform, constant, gaussian sigma 4 and 32 of the dtype's range
/ 256, the camera photograph tiled), a --height x --width image; each function of the namespace and its
scikit-image counterpart run interleaved --rounds times (after one warm-up call each), their results
checked equal; medians, ratios; one table, JSON to --json. The limit column is a read of every byte
(image.max()), what any pass over the image costs.

Usage: PYTHONPATH=<build>/python python3 python/bench/bench_skimage_namespace.py [--rounds 5]
       [--height 3000 --width 4000] [--datasets uniform,gaussian32,photo] [--json out.json]
"""
import argparse
import json
import os
import platform
import statistics
import warnings

import numpy as np
import skimage
from skimage import exposure as sk_exposure, filters as sk_filters

import imghist
from imghist import exposure, filters
from timing import timed

FUNCTIONS = [
    ("histogram", lambda m, img, ref: m[0].histogram(img)),
    ("equalize_hist", lambda m, img, ref: m[0].equalize_hist(img)),
    ("rescale_intensity", lambda m, img, ref: m[0].rescale_intensity(img)),
    ("rescale to (0, 1)", lambda m, img, ref: m[0].rescale_intensity(img, out_range=(0, 1))),
    ("match_histograms", lambda m, img, ref: m[0].match_histograms(img, ref)),
    ("threshold_otsu", lambda m, img, ref: m[1].threshold_otsu(img)),
    ("threshold_triangle", lambda m, img, ref: m[1].threshold_triangle(img)),
    ("threshold_multiotsu", lambda m, img, ref: m[1].threshold_multiotsu(img)),
]


def image(dataset, dtype, shape, seed):
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    if dataset == "uniform":
        return rng.integers(0, top, shape, dtype=dtype, endpoint=True)
    if dataset == "constant":
        return np.full(shape, top // 3, dtype)
    if dataset.startswith("gaussian"):
        sigma = float(dataset[len("gaussian"):]) * (top + 1) / 256
        return np.clip(np.rint(rng.normal(top / 2, sigma, shape)), 0, top).astype(dtype)
    if dataset == "photo":
        import cv2
        samples = os.environ.get("IMGHIST_SAMPLES_DIR") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                                         "samples", "images")
        photo = cv2.imread(os.path.join(samples, "camera.png"), cv2.IMREAD_GRAYSCALE).astype(dtype)
        photo = photo * (top // 255)
        reps = (shape[0] // photo.shape[0] + 1, shape[1] // photo.shape[1] + 1)
        return np.ascontiguousarray(np.tile(photo, reps)[:shape[0], :shape[1]])
    raise ValueError(f"unknown data set {dataset}")


def same(a, b):
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b))
    return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--height", type=int, default=3000)
    ap.add_argument("--width", type=int, default=4000)
    ap.add_argument("--dtypes", default="uint8,uint16")
    ap.add_argument("--datasets", default="uniform,constant,gaussian4,gaussian32,photo")
    ap.add_argument("--json", default="bench_skimage_namespace.json")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    shape = (args.height, args.width)
    rows = []
    for dtype in args.dtypes.split(","):
        for dataset in args.datasets.split(","):
            img = image(dataset, np.dtype(dtype), shape, 1)
            ref = image("gaussian32" if dataset != "gaussian32" else "uniform", np.dtype(dtype), (1000, 1000), 2)
            limit = statistics.median(timed(img.max)[0] for _ in range(args.rounds))
            for name, call in FUNCTIONS:
                if name == "threshold_multiotsu" and (dtype != "uint8" or dataset == "constant"):
                    continue  # skimage's exhaustive search over 65536 levels; a constant image has one class
                ours_fn, theirs_fn = (lambda: call((exposure, filters), img, ref)), \
                                     (lambda: call((sk_exposure, sk_filters), img, ref))
                ours_fn(), theirs_fn()
                t_ours, t_theirs = [], []
                for _ in range(args.rounds):
                    t, a = timed(ours_fn)
                    t_ours.append(t)
                    t, b = timed(theirs_fn)
                    t_theirs.append(t)
                if not same(a, b):
                    raise SystemExit(f"{dtype} {dataset} {name}: imghist and scikit-image differ")
                rows.append({"dtype": dtype, "dataset": dataset, "function": name,
                             "imghist_ms": statistics.median(t_ours) * 1e3,
                             "skimage_ms": statistics.median(t_theirs) * 1e3, "read_ms": limit * 1e3})
                r = rows[-1]
                print(f"{dtype:7s} {dataset:11s} {name:20s} imghist {r['imghist_ms']:9.1f} ms  skimage "
                      f"{r['skimage_ms']:9.1f} ms  x{r['skimage_ms'] / r['imghist_ms']:6.1f}  (read {r['read_ms']:.1f} ms)",
                      flush=True)
    meta = {"benchmark": "skimage_namespace", "imghist": imghist.__version__, "skimage": skimage.__version__,
            "numpy": np.__version__, "host": platform.node(), "cpus": os.cpu_count(), "shape": shape,
            "rounds": args.rounds, "results": rows}
    with open(args.json, "w") as f:
        json.dump(meta, f, indent=1)
    print(f"{args.height}x{args.width}, medians of {args.rounds} interleaved rounds, {platform.node()} "
          f"({os.cpu_count()} CPUs); JSON: {args.json}")


if __name__ == "__main__":
    main()
