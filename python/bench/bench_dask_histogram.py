#!/usr/bin/env python3
"""imghist.dask.histogram against dask.array.histogram on one dask.distributed cluster.

A uint8 dask array of --gib GiB (default 4) in chunks of --chunk-mib MiB is generated on the workers and
persisted there, for each data set: uniform, constant, gaussian sigma 4 and sigma 32 (around 128), and the
camera photograph tiled. Then, in rounds, each of these runs to completion on the same cluster:
    ours:  imghist.dask.histogram(x, 256, (0, 256))[0].compute()     (imghist counts each chunk, tree sum)
    peer:  dask.array.histogram(x, bins=256, range=(0, 256))[0].compute()   (np.histogram per chunk)
    limit: x.max().compute()   (one read of every chunk: what any pass over the data costs)
The two histograms are checked equal. Medians over --rounds rounds, ratios, one table; JSON to --json.
--warmup rounds run first, untimed (default 1 with --cupy, where the first calls compile CuPy's kernels and
set up each device, else 0).

--cupy: the chunks are CuPy arrays, generated on the workers' GPUs and persisted there; np.histogram and
x.max() dispatch to CuPy's (cupy.histogram), imghist counts each chunk with its CUDA backend. The results are
brought to the host on the workers (cupy.asnumpy, one task after the last sum), so the client receives NumPy
arrays.

The cluster is one of:
  - a LocalCluster of --workers worker processes with --threads threads each (default 2 x 1), on this
    machine's loopback;
  - --gpus N: a SpecCluster of N Nanny-managed worker processes, worker i with CUDA_VISIBLE_DEVICES=i (the
    i-th entry of this process's CUDA_VISIBLE_DEVICES when that is set: one GPU each) and --threads threads
    (default 1), no memory limit (so device chunks are never spilled); --cupy without --gpus or --scheduler
    is --gpus 1;
  - the scheduler at --scheduler (its workers as they are).
Each worker's view of the GPUs (CUDA_VISIBLE_DEVICES, imghist.cuda_device_count(), and with --cupy or --gpus
its devices' names and PCI bus ids from cupy.cuda.runtime.getDeviceProperties) goes to the JSON and the table;
with --gpus, each worker must see one GPU and no two the same, else the run stops.

Usage: PYTHONPATH=<build>/python python3 python/bench/bench_dask_histogram.py [--gib 4] [--rounds 3]
       [--datasets uniform,constant,gaussian4,gaussian32,photo] [--cupy] [--gpus N] [--json out.json]
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


def make_chunk(dataset, on_gpu, block_info=None):
    info = block_info[None]
    shape = info["chunk-shape"]
    seed = int(np.ravel_multi_index(info["chunk-location"], info["num-chunks"]))
    p = pattern(dataset, seed)
    xp = np
    if on_gpu:
        import cupy as xp
        p = xp.asarray(p)
    reps = (-(-shape[0] // PATTERN), -(-shape[1] // PATTERN))
    return xp.tile(p, reps)[:shape[0], :shape[1]]


def dataset_array(dataset, gib, chunk_mib, on_gpu):
    side = int(np.sqrt(chunk_mib * 2 ** 20))
    side -= side % PATTERN or 0
    side = max(side, PATTERN)
    rows = int(gib * 2 ** 30) // side
    if on_gpu:
        import cupy
        meta = cupy.empty((0, 0), np.uint8)
    else:
        meta = np.empty((0, 0), np.uint8)
    return da.map_blocks(make_chunk, dataset, on_gpu, dtype=np.uint8, chunks=((side,) * (rows // side), (side,)),
                         meta=meta)


def _asnumpy(block):
    import cupy
    return cupy.asnumpy(block)


def on_host(arr, on_gpu):
    """arr, its blocks brought to host memory on the workers when they are CuPy arrays."""
    if not on_gpu:
        return arr
    return arr.map_blocks(_asnumpy, dtype=arr.dtype, meta=np.empty((0,) * arr.ndim, arr.dtype))


def worker_view(with_devices):
    """This worker's view of the GPUs."""
    view = {"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "imghist_cuda_devices": imghist.cuda_device_count()}
    if with_devices:
        import cupy
        runtime = cupy.cuda.runtime
        props = [runtime.getDeviceProperties(i) for i in range(runtime.getDeviceCount())]
        view["devices"] = [p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"]) for p in props]
        view["pci_bus_ids"] = [f"{p['pciDomainID']:04x}:{p['pciBusID']:02x}:{p['pciDeviceID']:02x}" for p in props]
        view["cupy"] = cupy.__version__
    return view


def gpu_cluster(gpus, threads):
    """A SpecCluster of `gpus` Nanny-managed worker processes on the loopback, worker i pinned to GPU i (the
    i-th of this process's CUDA_VISIBLE_DEVICES when that is set)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [str(i) for i in range(gpus)] if visible is None else [d.strip() for d in visible.split(",") if d.strip()]
    if len(ids) < gpus:
        raise SystemExit(f"--gpus {gpus}: CUDA_VISIBLE_DEVICES={visible!r} names {len(ids)} GPUs")
    scheduler = {"cls": distributed.Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": None}}
    workers = {f"gpu{i}": {"cls": distributed.Nanny,
                           "options": {"nthreads": threads, "host": "127.0.0.1", "memory_limit": 0,
                                       "env": {"CUDA_VISIBLE_DEVICES": ids[i]}, "silence_logs": 40}}
               for i in range(gpus)}
    return distributed.SpecCluster(workers=workers, scheduler=scheduler, silence_logs=40)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--chunk-mib", type=float, default=64.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=None, help="untimed rounds first (default: 1 with --cupy, else 0)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cupy", action="store_true", help="CuPy chunks on the workers' GPUs")
    ap.add_argument("--gpus", type=int, default=0, help="a cluster of this many workers, one GPU each")
    ap.add_argument("--scheduler", default=None, help="address of a running scheduler instead of a LocalCluster")
    ap.add_argument("--datasets", default="uniform,constant,gaussian4,gaussian32,photo")
    ap.add_argument("--json", default="bench_dask_histogram.json")
    args = ap.parse_args()
    if args.gpus and args.scheduler:
        ap.error("--gpus and --scheduler exclude each other")
    if args.cupy and not args.gpus and not args.scheduler:
        args.gpus = 1
    if args.warmup is None:
        args.warmup = 1 if args.cupy else 0

    if args.scheduler:
        cluster, client = None, distributed.Client(args.scheduler)
        workers = args.scheduler
    elif args.gpus:
        cluster = gpu_cluster(args.gpus, args.threads)
        client = distributed.Client(cluster)
        workers = f"{args.gpus} GPU workers x {args.threads} threads"
    else:
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                                           host="127.0.0.1", dashboard_address=None, silence_logs=40)
        client = distributed.Client(cluster)
        workers = f"{args.workers} workers x {args.threads} threads"
    rows = []
    try:
        views = client.run(worker_view, bool(args.cupy or args.gpus))
        if args.gpus:
            seen = [v.get("pci_bus_ids") for v in views.values()]
            if len(views) != args.gpus or any(len(s) != 1 for s in seen) or len({s[0] for s in seen}) != len(seen):
                raise SystemExit(f"--gpus {args.gpus}: each worker must see one GPU, no two the same; they see "
                                 f"{json.dumps(views)}")
        for dataset in args.datasets.split(","):
            x = dataset_array(dataset, args.gib, args.chunk_mib, args.cupy).persist()
            distributed.wait(x)
            holders = {}
            for addrs in client.who_has(x).values():
                for a in addrs:
                    holders[a] = holders.get(a, 0) + 1
            runs = {"ours": [], "peer": [], "limit": []}
            for _ in range(args.warmup):
                on_host(idask.histogram(x, 256, (0, 256))[0], args.cupy).compute()
                on_host(da.histogram(x, bins=256, range=(0, 256))[0], args.cupy).compute()
                on_host(x.max(), args.cupy).compute()
            for _ in range(args.rounds):
                t, ours = timed(lambda: on_host(idask.histogram(x, 256, (0, 256))[0], args.cupy).compute())
                runs["ours"].append(t)
                t, peer = timed(lambda: on_host(da.histogram(x, bins=256, range=(0, 256))[0], args.cupy).compute())
                runs["peer"].append(t)
                t, _ = timed(lambda: on_host(x.max(), args.cupy).compute())
                runs["limit"].append(t)
                if not np.array_equal(ours, peer):
                    raise SystemExit(f"{dataset}: imghist.dask.histogram and dask.array.histogram differ")
            med = {k: statistics.median(v) for k, v in runs.items()}
            gib = x.nbytes / 2 ** 30
            rows.append({"dataset": dataset, "gib": gib, "chunks": x.npartitions, "chunks_per_worker": holders,
                         "median_s": med, "runs_s": runs, "ours_gib_s": gib / med["ours"],
                         "peer_gib_s": gib / med["peer"], "limit_gib_s": gib / med["limit"],
                         "speedup_vs_peer": med["peer"] / med["ours"]})
            client.cancel(x)
            del x
            print(f"{dataset}: imghist {med['ours']:.3f} s, dask {med['peer']:.3f} s, max() {med['limit']:.3f} s",
                  flush=True)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    chunks = "CuPy" if args.cupy else "NumPy"
    print(f"imghist.dask.histogram vs dask.array.histogram, uint8 {chunks} chunks, 256 bins over [0, 256); "
          f"{workers}; {platform.node()} ({os.cpu_count()} CPUs); medians of {args.rounds} rounds after "
          f"{args.warmup} untimed")
    for addr, v in sorted(views.items()):
        gpus = ", ".join(f"{n} ({b})" for n, b in zip(v.get("devices", []), v.get("pci_bus_ids", [])))
        print(f"  worker {addr}: CUDA_VISIBLE_DEVICES={v['CUDA_VISIBLE_DEVICES']}, imghist sees "
              f"{v['imghist_cuda_devices']} CUDA devices" + (f": {gpus}" if gpus else ""))
    print(f"{'data set':<12} {'GiB':>5} {'chunks':>6} {'imghist s':>10} {'dask s':>8} {'max() s':>8} "
          f"{'imghist GiB/s':>13} {'dask GiB/s':>10} {'x dask':>7}")
    for r in rows:
        m = r["median_s"]
        print(f"{r['dataset']:<12} {r['gib']:5.2f} {r['chunks']:6d} {m['ours']:10.3f} {m['peer']:8.3f} "
              f"{m['limit']:8.3f} {r['ours_gib_s']:13.2f} {r['peer_gib_s']:10.2f} {r['speedup_vs_peer']:7.1f}")
    devices = sorted({d for v in views.values() for d in v.get("devices", [])})
    meta = {"benchmark": "dask_histogram", "imghist": imghist.__version__, "dask": dask.__version__,
            "distributed": distributed.__version__, "numpy": np.__version__, "host": platform.node(),
            "cpus": os.cpu_count(), "cluster": workers, "worker_count": len(views), "chunk_type": chunks,
            "gpus": args.gpus, "device_names": devices, "workers": views, "rounds": args.rounds, "warmup": args.warmup,
            "chunk_mib": args.chunk_mib, "results": rows}
    with open(args.json, "w") as f:
        json.dump(meta, f, indent=1)
    print(f"JSON: {args.json}")


if __name__ == "__main__":
    main()
