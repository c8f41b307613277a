#!/usr/bin/env python3
"""imghist.dask.process_files with 1 and with 2 single-threaded workers (a benchmark, not a test).

--files photographs (default 200) are made from the shipped samples: JPEGs of --megapixels (default 2) at quality
90, each a different crop, flip and scale of astronaut.png, coffee.png or camera.png, so that no two are alike.
Then, for each cluster size in --workers (default 1,2) — a LocalCluster of that many worker processes of one thread
each, on this machine's loopback — process_files(OPERATION, folder, out, client) runs --rounds times (after one
warm-up run), each into a fresh folder, and the median wall time is taken. The outputs of every run are checked to
equal the first's byte for byte. For context the command-line tool's own run (--threads 1 and --threads N) is timed
when --cli names it, and its --threads 1 outputs are checked to be process_files' byte for byte.

Prints one line per configuration (seconds, files per second, the speed-up over one worker); --json FILE writes
them. The machine's load matters: on a shared host, say so with the numbers.

Usage: PYTHONPATH=<build>/python python3 python/bench/bench_process_files.py [--files 200] [--rounds 3]
       [--operation equalize] [--workers 1,2] [--cli <build>/tools/imghist/imghist] [--json out.json]
"""
import argparse
import filecmp
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time

import numpy as np
from PIL import Image

import distributed

import imghist.dask as idask

SAMPLES = os.environ.get("IMGHIST_SAMPLES_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "samples",
                                                               "images")


def make_photos(folder, count, megapixels):
    sources = [Image.open(os.path.join(SAMPLES, n)).convert("RGB") for n in ("astronaut.png", "coffee.png", "camera.png")]
    rng = np.random.default_rng(1)
    side = int((megapixels * 1e6) ** 0.5)
    for i in range(count):
        src = sources[i % len(sources)]
        w, h = src.size
        x0, y0 = int(rng.integers(0, w // 4)), int(rng.integers(0, h // 4))
        img = src.crop((x0, y0, x0 + 3 * w // 4, y0 + 3 * h // 4)).resize((side * 4 // 3, side * 3 // 4), Image.BICUBIC)
        if i % 2:
            img = img.transpose(Image.FLIP_LEFT_RIGHT)
        img.save(os.path.join(folder, f"photo{i:04d}.jpg"), quality=90)


def timed_runs(operation, folder, workdir, client, rounds):
    outs, times = [], []
    for r in range(rounds + 1):
        out = os.path.join(workdir, f"out-{len(client.scheduler_info()['workers'])}-{r}")
        t0 = time.perf_counter()
        results = idask.process_files(operation, folder, out, client=client)
        dt = time.perf_counter() - t0
        assert all(x.status == "done" for x in results), [x for x in results if x.status != "done"][:3]
        if r:  # the first run warms the workers up (imports, the job's parse, page cache)
            times.append(dt)
        outs.append(out)
    return statistics.median(times), outs


def same_outputs(a, b):
    names = sorted(os.listdir(a))
    return names == sorted(os.listdir(b)) and filecmp.cmpfiles(a, b, names, shallow=False)[0] == names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--megapixels", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--operation", default="equalize")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--cli", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="imghist-bench-") as work:
        folder = os.path.join(work, "in")
        os.makedirs(folder)
        make_photos(folder, args.files, args.megapixels)
        print(f"{args.files} JPEGs of {args.megapixels} MP in {folder}; {os.cpu_count()} CPUs "
              f"({platform.processor() or platform.machine()}); load average {os.getloadavg()[0]:.2f}")
        reference = None
        base = None
        for n in (int(v) for v in args.workers.split(",")):
            with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                          dashboard_address=None, silence_logs=40) as cluster, \
                    distributed.Client(cluster) as client:
                seconds, outs = timed_runs(args.operation, folder, work, client, args.rounds)
            reference = reference or outs[0]
            assert all(same_outputs(reference, o) for o in outs), "outputs differ between runs"
            base = base or seconds
            rows.append({"config": f"process_files, {n} worker(s) x 1 thread", "seconds": seconds,
                         "files_per_s": args.files / seconds, "speedup_vs_first": base / seconds})
            for o in outs:
                if o != reference:  # kept for the later configurations' and the CLI's comparisons
                    shutil.rmtree(o)
        if args.cli:
            for threads in sorted({1, os.cpu_count() or 1}):
                out = os.path.join(work, f"cli-{threads}")
                t = []
                for r in range(args.rounds + 1):
                    shutil.rmtree(out, ignore_errors=True)
                    t0 = time.perf_counter()
                    subprocess.run([args.cli, args.operation, "-q", "--threads", str(threads), folder, out + "/"],
                                   check=True)
                    if r:
                        t.append(time.perf_counter() - t0)
                # process_files runs the CLI's per-file work with --threads 1: the same bytes.
                assert threads != 1 or same_outputs(reference, out), "process_files' outputs are not the CLI's"
                rows.append({"config": f"imghist CLI --threads {threads}", "seconds": statistics.median(t),
                             "files_per_s": args.files / statistics.median(t),
                             "speedup_vs_first": base / statistics.median(t)})
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    for row in rows:
        print(f"{row['config']:<40} {row['seconds']:7.2f} s  {row['files_per_s']:7.1f} files/s  "
              f"{row['speedup_vs_first']:5.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"files": args.files, "megapixels": args.megapixels, "operation": args.operation,
                       "cpus": os.cpu_count(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
