#!/usr/bin/env python3
"""Photograph-like JPEG inputs for scripts/bench_cli.sh: a few hundred distinct frames, then copies of their
bytes under as many names as a folder needs.

    python3 scripts/bench_inputs.py --samples samples/images --out DIR --count 10000 [--distinct 200]
                                    [--size 1920x1080] [--quality 92] [--seed 1]

Each distinct frame is a random crop of a sample photograph (flipped at random), scaled to the size, with its
own exposure, gamma and tint, and sensor-like noise (luma and weaker chroma), written at the quality with 4:2:0
chroma sampling. Encoding is the slow part, so only the distinct frames are encoded; file i of the folder is a
copy of frame i mod distinct (the programs read every file, so copies cost them what distinct files would).
Names are img00001.jpg, img00002.jpg, ...; a folder already holding exactly those files of the right sizes
is left as it is.

Backends, the first that imports: PIL + numpy, then torchvision (CPU encode_jpeg, libjpeg's 4:2:0 default).
Prints one line: the folder, files, distinct frames, mean bytes per file.
"""
import argparse
import glob
import os
import random
import sys
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor


def frame_pil(args):
    src_path, w, h, quality, seed = args
    import io

    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    im = Image.open(src_path).convert("RGB")
    sw, sh = im.size
    # The crop keeps the target's aspect ratio and at least half of the source's shorter side.
    ch = int(sh * rng.uniform(0.5, 1.0))
    cw = min(sw, int(ch * w / h))
    ch = min(sh, int(cw * h / w))
    x0 = int(rng.integers(0, sw - cw + 1))
    y0 = int(rng.integers(0, sh - ch + 1))
    im = im.crop((x0, y0, x0 + cw, y0 + ch)).resize((w, h), Image.BICUBIC)
    if rng.random() < 0.5:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    # Exposure, gamma and tint as one table per channel (a lookup, not float maths over every pixel).
    x = np.arange(256, dtype=np.float64) / 255.0
    tone = np.power(np.clip(x * rng.uniform(0.7, 1.2) + rng.uniform(-0.08, 0.08), 0, 1), rng.uniform(0.8, 1.25))
    luts = np.clip(tone[None, :] * rng.uniform(0.92, 1.08, size=(3, 1)) * 255.0, 0, 255).round().astype(np.uint8)
    base = np.asarray(im)
    a = np.stack([luts[c][base[:, :, c]] for c in range(3)], axis=2)
    noise = rng.standard_normal((h, w, 1), dtype=np.float32) * np.float32(rng.uniform(2.5, 5.0)) + \
        rng.standard_normal((h, w, 3), dtype=np.float32) * np.float32(1.5)
    a = np.clip(a + noise, 0, 255).round().astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(a, "RGB").save(buf, format="JPEG", quality=quality, subsampling=2)  # 2: 4:2:0
    return buf.getvalue()


def frame_torch(args):
    src_path, w, h, quality, seed = args
    import torch
    import torch.nn.functional as tf
    from torchvision.io import ImageReadMode, decode_image, encode_jpeg

    torch.set_num_threads(1)  # one process per core already
    g = torch.Generator().manual_seed(seed)
    img = decode_image(src_path, mode=ImageReadMode.RGB).float() / 255.0
    _, sh, sw = img.shape
    ch = int(sh * (0.5 + 0.5 * torch.rand(1, generator=g).item()))
    cw = min(sw, int(ch * w / h))
    ch = min(sh, int(cw * h / w))
    x0 = int(torch.randint(0, sw - cw + 1, (1,), generator=g))
    y0 = int(torch.randint(0, sh - ch + 1, (1,), generator=g))
    img = tf.interpolate(img[None, :, y0:y0 + ch, x0:x0 + cw], size=(h, w), mode="bicubic", align_corners=False)[0]
    if torch.rand(1, generator=g).item() < 0.5:
        img = img.flip(-1)
    u = lambda lo, hi: lo + (hi - lo) * torch.rand(1, generator=g).item()
    img = (img * u(0.7, 1.2) + u(-0.08, 0.08)).clamp(0, 1).pow(u(0.8, 1.25))
    img = img * (0.92 + 0.16 * torch.rand(3, 1, 1, generator=g)) * 255.0
    img = img + torch.randn(1, h, w, generator=g) * u(2.5, 5.0) + torch.randn(3, h, w, generator=g) * 1.5
    return bytes(encode_jpeg(img.clamp(0, 255).round().to(torch.uint8), quality=quality).numpy().tobytes())


def backend():
    try:
        import numpy  # noqa: F401
        from PIL import Image  # noqa: F401

        return frame_pil
    except ImportError:
        pass
    try:
        import torchvision  # noqa: F401

        return frame_torch
    except ImportError:
        sys.exit("bench_inputs: needs PIL and numpy, or torchvision")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--distinct", type=int, default=200)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--quality", type=int, default=92)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--frames", help="a folder of distinct frames to take (or make there) instead of encoding anew")
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    sources = sorted(glob.glob(os.path.join(a.samples, "*.png")))
    if not sources:
        sys.exit(f"bench_inputs: no PNG in {a.samples}")
    distinct = max(1, min(a.distinct, a.count))
    names = [f"img{i + 1:05d}.jpg" for i in range(a.count)]

    # Beside the folder, not in it: folder runs take sub-folders too.
    frames_dir = a.frames or a.out.rstrip("/") + ".frames"
    frame_names = [os.path.join(frames_dir, f"frame{k:04d}.jpg") for k in range(distinct)]
    if not all(os.path.isfile(p) for p in frame_names):
        os.makedirs(frames_dir, exist_ok=True)
        rnd = random.Random(a.seed)
        jobs = [(sources[rnd.randrange(len(sources))], w, h, a.quality, a.seed * 100003 + k) for k in range(distinct)]
        make = backend()
        with ProcessPoolExecutor(max_workers=os.cpu_count()) as ex:
            for path, data in zip(frame_names, ex.map(make, jobs, chunksize=4)):
                with open(path, "wb") as f:
                    f.write(data)
    frames = []
    for p in frame_names:
        with open(p, "rb") as f:
            frames.append(f.read())

    os.makedirs(a.out, exist_ok=True)
    want = {n: len(frames[i % distinct]) for i, n in enumerate(names)}
    have = {e.name: e.stat().st_size for e in os.scandir(a.out) if e.is_file()}
    if have != want:
        for n in set(have) - set(want):
            os.unlink(os.path.join(a.out, n))

        def put(i):
            with open(os.path.join(a.out, names[i]), "wb") as f:
                f.write(frames[i % distinct])

        with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 1)) as ex:
            list(ex.map(put, range(a.count), chunksize=64))
    total = sum(len(frames[i % distinct]) for i in range(a.count))
    print(f"{a.out}: {a.count} files, {distinct} distinct {w}x{h} frames at quality {a.quality}, "
          f"{total / a.count / 1e3:.0f} kB per file")


if __name__ == "__main__":
    main()
