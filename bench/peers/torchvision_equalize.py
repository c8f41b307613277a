"""The batched peer of equalize_hist_batch: torchvision's equalize (transforms.v2.functional.equalize, PIL's rule)
on a (256, 1, 480, 640) uint8 CUDA tensor, the shape of batch_filters_bench's equalize/256x640x480 row. CUDA events
around each call, 3 warm-up calls, median of --runs runs. Prints the device, the median and the images per second;
--json FILE writes them.

    python3 bench/peers/torchvision_equalize.py [--runs N] [--json FILE]

Data sets as batch_filters_bench's: uniform bytes, gauss sigma 32 (mean 128), constant (94), and a tiled photograph
when samples/images/camera.png is readable with PIL.
"""
import argparse
import json
import os
import statistics

import torch
from torchvision.transforms.v2 import functional as F

N, H, W = 256, 480, 640


def datasets(device):
    g = torch.Generator(device="cpu").manual_seed(12345)
    out = {
        "uniform": torch.randint(0, 256, (N, 1, H, W), generator=g, dtype=torch.uint8),
        "gauss32": (torch.randn((N, 1, H, W), generator=g) * 32 + 128).round().clamp(0, 255).to(torch.uint8),
        "constant": torch.full((N, 1, H, W), 94, dtype=torch.uint8),
    }
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "..", "samples", "images", "camera.png")
    try:
        from PIL import Image
        import numpy as np

        tile = torch.from_numpy(np.array(Image.open(path).convert("L")))
        reps = (H + tile.shape[0] - 1) // tile.shape[0], (W + tile.shape[1] - 1) // tile.shape[1]
        frame = tile.repeat(*reps)[:H, :W]
        out["photo"] = frame.expand(N, 1, H, W).contiguous()
    except (ImportError, OSError):
        pass
    return {k: v.to(device) for k, v in out.items()}


def median_ms(fn, runs):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json")
    a = ap.parse_args()
    device = torch.device("cuda")
    name = torch.cuda.get_device_name(device)
    print(f"device: {name}, torch {torch.__version__}, runs {a.runs}")
    rows = []
    for data, x in datasets(device).items():
        ms = median_ms(lambda: F.equalize(x), a.runs)
        rows.append({"workload": "torchvision.equalize/256x640x480", "data": data, "ms": ms, "images_per_s": N / ms * 1e3})
        print(f"torchvision.equalize/256x640x480 {data:9s} {ms:10.3f} ms {N / ms * 1e3:12.0f} images/s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": name, "runs": a.runs, "results": rows}, f, indent=2)


if __name__ == "__main__":
    main()
