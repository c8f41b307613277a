#!/usr/bin/env python3
"""The torchvision peer of `imghist equalize IN OUT` on a folder of JPEGs: luma histogram equalization, JPEG in,
JPEG out, as a PyTorch user would write it with torchvision's GPU codecs.

    python3 bench/peers/torchvision_jpeg_folder.py IN_DIR OUT_DIR [--batch 64] [--quality 90]
                                                   [--device cuda|cpu] [--readers 8] [--writers 8]

Per batch of files: the bytes are read by a thread pool (the next batch while this one is on the GPU);
torchvision.io.decode_jpeg(list, device="cuda") decodes them (nvJPEG, batched) to RGB; the luma plane
Y = 0.299 R + 0.587 G + 0.114 B (JFIF) is rounded to 8 bits and equalized per image by
torchvision.transforms.v2.functional.equalize on the (N, 1, H, W) stack; each pixel's R, G and B move by the
same Y' - Y, which keeps Cb and Cr (the chroma) as they were; torchvision.io.encode_jpeg(list) encodes on the
GPU at --quality; a thread pool writes the files (plain writes, no fsync: what such a script does). Images of
one batch with different sizes are equalized one at a time.

--device cpu (or no CUDA device) runs the same on the CPU codecs, for a check on machines without a GPU.
Prints one line: files, wall seconds from the first read to the last write, images per second, device.
"""
import argparse
import os
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

warnings.filterwarnings("ignore")  # torchvision 0.29+ announces the move of its codecs to TorchCodec

import torch  # noqa: E402
from torchvision.io import ImageReadMode, decode_jpeg, encode_jpeg  # noqa: E402
from torchvision.transforms.v2 import functional as F  # noqa: E402

LUMA = (0.299, 0.587, 0.114)


def read_bytes(path):
    with open(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)


def write_bytes(path, data):
    try:
        payload = data.numpy()
    except RuntimeError:  # a torch without numpy
        payload = bytes(data.tolist())
    with open(path, "wb") as f:
        f.write(payload)


def equalize_luma(rgb):
    """rgb: uint8 (N, 3, H, W). Returns the same with the luma equalized and the chroma kept."""
    x = rgb.float()
    y = LUMA[0] * x[:, 0:1] + LUMA[1] * x[:, 1:2] + LUMA[2] * x[:, 2:3]
    y8 = y.round().clamp(0, 255).to(torch.uint8)
    delta = F.equalize(y8).float() - y
    return (x + delta).round().clamp(0, 255).to(torch.uint8)


def process(images):
    """Decoded CHW images (one batch) to equalized ones; one stacked call when they share a size."""
    if all(im.shape == images[0].shape for im in images):
        return list(equalize_luma(torch.stack(images)).unbind(0))
    return [equalize_luma(im[None])[0] for im in images]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--readers", type=int, default=8)
    ap.add_argument("--writers", type=int, default=8)
    a = ap.parse_args()
    device = a.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        print("torchvision peer: no CUDA device: running on the CPU", file=sys.stderr)
        device = "cpu"
    names = sorted(e.name for e in os.scandir(a.src) if e.is_file() and e.name.lower().endswith((".jpg", ".jpeg")))
    os.makedirs(a.dst, exist_ok=True)
    batches = [names[i:i + a.batch] for i in range(0, len(names), a.batch)]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(a.readers) as readers, ThreadPoolExecutor(a.writers) as writers:
        def read_batch(k):
            return readers.map(read_bytes, [os.path.join(a.src, n) for n in batches[k]]) if k < len(batches) else None

        pending_writes = []
        upcoming = read_batch(0)
        for k, batch in enumerate(batches):
            data = list(upcoming)
            upcoming = read_batch(k + 1)  # read ahead while this batch is decoded, equalized and encoded
            decoded = decode_jpeg(data, mode=ImageReadMode.RGB, device=device)
            encoded = encode_jpeg(process(decoded), quality=a.quality)
            # One copy to the host for the whole batch, then a view per file.
            sizes = [int(e.numel()) for e in encoded]
            host = torch.cat(encoded).cpu() if encoded[0].is_cuda else torch.cat(encoded)
            parts = host.split(sizes)
            pending_writes += [writers.submit(write_bytes, os.path.join(a.dst, n), p) for n, p in zip(batch, parts)]
        for w in pending_writes:
            w.result()
    wall = time.perf_counter() - t0
    rate = len(names) / wall if wall > 0 else 0.0
    print(f"torchvision peer: {len(names)} files in {wall:.3f} s ({rate:.0f} images/s), device {device}, "
          f"batch {a.batch}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
