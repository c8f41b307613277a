#!/usr/bin/env python3
"""imghist.dask.histogram against dask.array.histogram on one dask.distributed cluster.

A uint8 dask array of --gib GiB (default 4) in chunks of --chunk-mib MiB is generated on the workers and
persisted there, for each data set: uniform, constant, gaussian sigma 4 and sigma 32 (around 128), and the
camera photograph tiled. Then, in rounds, each of these runs to completion on the same cluster:
    ours:  imghist.dask.histogram(x, 256, (0, 256))[0].compute()     (imghist counts each chunk, tree sum)
    peer:  dask.array.histogram(x, bins=256, range=(0, 256))[0].compute()   (np.histogram per chunk)
    limit: x.max().compute()   (one NumPy read of every chunk: what any pass over the data costs)
The two histograms are checked equal. Medians over --rounds rounds, ratios, one table; JSON to --json.

The cluster is a LocalCluster of --workers worker processes with --threads threads each (default 2 x 1),
on this machine's loopback, or the scheduler at --scheduler.

Usage: PYTHONPATH=<build>/python python3 python/bench/bench_dask_histogram.py [--gib 4] [--rounds 3]
       [--datasets uniform,constant,gaussian4,gaussian32,photo] [--json out.json]
"""
import argparse
import json
import os
import platform
import statistics

import numpy as np

import dask
import dask.array as da
import distributed

import imghist
import imghist.dask as idask
from timing import timed

PATTERN = 2048  # each chunk tiles a 2048 x 2048 pattern of its data set (4 MiB)


def pattern(dataset, seed):
    rng = np.random.default_rng(seed)
    shape = (PATTERN, PATTERN)
    if dataset == "uniform":
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if dataset == "constant":
        return np.full(shape, 77, np.uint8)
    if dataset.startswith("gaussian"):
        sigma = float(dataset[len("gaussian"):])
        return np.clip(np.rint(rng.normal(128, sigma, shape)), 0, 255).astype(np.uint8)
    if dataset == "photo":
        import cv2
        samples = os.environ.get("IMGHIST_SAMPLES_DIR") or os.path.join(os.path.dirname(__file__), "..", "..",
                                                                         "samples", "images")
        photo = cv2.imread(os.path.join(samples, "camera.png"), cv2.IMREAD_GRAYSCALE)
        return np.tile(photo, (PATTERN // photo.shape[0] + 1, PATTERN // photo.shape[1] + 1))[:PATTERN, :PATTERN]
    raise ValueError(f"unknown data set {dataset}")


def make_chunk(dataset, block_info=None):
    info = block_info[None]
    shape = info["chunk-shape"]
    seed = int(np.ravel_multi_index(info["chunk-location"], info["num-chunks"]))
    p = pattern(dataset, seed)
    reps = (-(-shape[0] // PATTERN), -(-shape[1] // PATTERN))
    return np.tile(p, reps)[:shape[0], :shape[1]]


def dataset_array(dataset, gib, chunk_mib):
    side = int(np.sqrt(chunk_mib * 2 ** 20))
    side -= side % PATTERN or 0
    side = max(side, PATTERN)
    rows = int(gib * 2 ** 30) // side
    return da.map_blocks(make_chunk, dataset, dtype=np.uint8, chunks=((side,) * (rows // side), (side,)),
                         meta=np.empty((0, 0), np.uint8))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--chunk-mib", type=float, default=64.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--scheduler", default=None, help="address of a running scheduler instead of a LocalCluster")
    ap.add_argument("--datasets", default="uniform,constant,gaussian4,gaussian32,photo")
    ap.add_argument("--json", default="bench_dask_histogram.json")
    args = ap.parse_args()

    if args.scheduler:
        cluster, client = None, distributed.Client(args.scheduler)
    else:
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                                           host="127.0.0.1", dashboard_address=None, silence_logs=40)
        client = distributed.Client(cluster)
    rows = []
    try:
        for dataset in args.datasets.split(","):
            x = dataset_array(dataset, args.gib, args.chunk_mib).persist()
            distributed.wait(x)
            runs = {"ours": [], "peer": [], "limit": []}
            for _ in range(args.rounds):
                t, ours = timed(lambda: idask.histogram(x, 256, (0, 256))[0].compute())
                runs["ours"].append(t)
                t, peer = timed(lambda: da.histogram(x, bins=256, range=(0, 256))[0].compute())
                runs["peer"].append(t)
                t, _ = timed(lambda: x.max().compute())
                runs["limit"].append(t)
                if not np.array_equal(ours, peer):
                    raise SystemExit(f"{dataset}: imghist.dask.histogram and dask.array.histogram differ")
            med = {k: statistics.median(v) for k, v in runs.items()}
            gib = x.nbytes / 2 ** 30
            rows.append({"dataset": dataset, "gib": gib, "chunks": x.npartitions, "median_s": med, "runs_s": runs,
                         "ours_gib_s": gib / med["ours"], "peer_gib_s": gib / med["peer"],
                         "limit_gib_s": gib / med["limit"], "speedup_vs_peer": med["peer"] / med["ours"]})
            client.cancel(x)
            del x
            print(f"{dataset}: imghist {med['ours']:.3f} s, dask {med['peer']:.3f} s, max() {med['limit']:.3f} s",
                  flush=True)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    workers = f"{args.workers} workers x {args.threads} threads" if not args.scheduler else args.scheduler
    print(f"imghist.dask.histogram vs dask.array.histogram, uint8, 256 bins over [0, 256); {workers}; "
          f"{platform.node()} ({os.cpu_count()} CPUs); medians of {args.rounds} rounds")
    print(f"{'data set':<12} {'GiB':>5} {'chunks':>6} {'imghist s':>10} {'dask s':>8} {'max() s':>8} "
          f"{'imghist GiB/s':>13} {'dask GiB/s':>10} {'x dask':>7}")
    for r in rows:
        m = r["median_s"]
        print(f"{r['dataset']:<12} {r['gib']:5.2f} {r['chunks']:6d} {m['ours']:10.3f} {m['peer']:8.3f} "
              f"{m['limit']:8.3f} {r['ours_gib_s']:13.2f} {r['peer_gib_s']:10.2f} {r['speedup_vs_peer']:7.1f}")
    meta = {"benchmark": "dask_histogram", "imghist": imghist.__version__, "dask": dask.__version__,
            "distributed": distributed.__version__, "numpy": np.__version__, "host": platform.node(),
            "cpus": os.cpu_count(), "cluster": workers, "rounds": args.rounds, "chunk_mib": args.chunk_mib,
            "results": rows}
    with open(args.json, "w") as f:
        json.dump(meta, f, indent=1)
    print(f"JSON: {args.json}")


if __name__ == "__main__":
    main()
