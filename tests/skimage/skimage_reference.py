#!/usr/bin/env python3
"""The imghist program against scikit-image: contrast stretch (exposure.rescale_intensity between
np.percentile's bounds), histogram matching (exposure.match_histograms) and multi-level Otsu
(filters.threshold_multiotsu + np.digitize), on the shipped photographs and on generated 8- and 16-bit images,
single files and a folder. One list of cases for both backends: `--device cpu` or `--device cuda` (the latter
prints the skip marker and passes when no CUDA device exists).

Usage: skimage_reference.py --imghist PATH --samples DIR --work DIR --device cpu|cuda
Every reference comes from scikit-image / NumPy or from the plain NumPy expressions below, never from imghist.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image
from skimage.exposure import match_histograms, rescale_intensity
from skimage.filters import threshold_multiotsu

SKIP = "IMGHIST-SKIP"
failures = []
notes = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


# ---- PNM files (8- and 16-bit, gray and RGB/RGBA as PAM-free PGM/PPM; alpha cases use PNG) --------------------
def write_pnm(path, img):
    maxval = 65535 if img.dtype == np.uint16 else 255
    magic = b"P5" if img.ndim == 2 else b"P6"
    h, w = img.shape[:2]
    data = img.astype(">u2").tobytes() if maxval == 65535 else img.astype(np.uint8).tobytes()
    with open(path, "wb") as f:
        f.write(b"%s\n%d %d\n%d\n" % (magic, w, h, maxval) + data)


def read_pnm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    pos += 1
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    ch = 1 if magic == b"P5" else 3
    dt = np.dtype(">u2") if maxval > 255 else np.dtype(np.uint8)
    img = np.frombuffer(data[pos:pos + w * h * ch * dt.itemsize], dtype=dt).reshape((h, w, ch) if ch > 1 else (h, w))
    return img.astype(np.uint16 if maxval > 255 else np.uint8)


def read_any(path):
    if path.endswith((".pgm", ".ppm")):
        return read_pnm(path)
    return np.asarray(Image.open(path))


def run(args, device, expect_ok=True):
    r = subprocess.run([IMGHIST] + args + ["--device", device], capture_output=True, text=True)
    if expect_ok and r.returncode != 0:
        failures.append("imghist %s failed: %s" % (" ".join(args), r.stderr.strip()))
        print("FAIL:", failures[-1], flush=True)
    return r


# ---- independent references ------------------------------------------------------------------------------------
def gray_of(rgb):
    """The documented luma (the Y of cv::COLOR_RGB2YCrCb's 14-bit fixed point), as a plain NumPy expression."""
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    return ((r * 4899 + g * 9617 + b * 1868 + 8192) >> 14).astype(rgb.dtype)


def ref_stretch(img, low, high, mode):
    def one(x, source):
        return rescale_intensity(x, in_range=tuple(np.percentile(source, (low, 100 - high))))
    if img.ndim == 2:
        return one(img, img)
    out = img.copy()
    colour = 3 if img.shape[2] >= 3 else 1
    if mode == "luma" and colour == 3:
        g = gray_of(img)
        for c in range(3):
            out[..., c] = one(img[..., c], g)
    else:
        for c in range(colour):
            out[..., c] = one(img[..., c], img[..., c])
    return out


def ref_match_float(img, ref):
    """skimage's unrounded matching, channel by channel (float64)."""
    if img.ndim == 2:
        return match_histograms(img, ref)
    return np.stack([match_histograms(img[..., c], ref[..., c]) for c in range(3)], axis=-1)


def label_scale(labels, classes, top):
    return ((labels.astype(np.int64) * top + (classes - 1) // 2) // (classes - 1)).astype(np.uint16 if top > 255 else np.uint8)


# ---- images ------------------------------------------------------------------------------------------------------
def generated():
    rng = np.random.default_rng(20261122)
    imgs = {
        "uniform-97x61": rng.integers(0, 256, (61, 97), dtype=np.uint8),
        "gauss-1x257": np.clip(rng.normal(90, 20, (1, 257)), 0, 255).astype(np.uint8),
        "column-131x1": np.clip(rng.normal(150, 40, (131, 1)), 0, 255).astype(np.uint8),
        "narrow-33x17": rng.integers(70, 110, (17, 33), dtype=np.uint8),
        "modes-200x150": np.clip(np.concatenate([rng.normal(40, 6, 12000), rng.normal(120, 15, 10000),
                                                 rng.normal(210, 8, 8000)]), 0, 255).astype(np.uint8).reshape(150, 200),
        "three-levels-19x7": rng.choice(np.array([10, 100, 250], np.uint8), (7, 19)),
        "constant-8x8": np.full((8, 8), 77, np.uint8),
        "rgb-uniform-65x33": rng.integers(0, 256, (33, 65, 3), dtype=np.uint8),
        "rgb-dim-40x30": np.clip(rng.normal((60, 80, 50), 15, (30, 40, 3)), 0, 255).astype(np.uint8),
        "u16-gauss-70x50": np.clip(rng.normal(30000, 5000, (50, 70)), 0, 65535).astype(np.uint16),
        "u16-narrow-45x31": rng.integers(1000, 1600, (31, 45)).astype(np.uint16),
        "u16-rgb-29x23": rng.integers(0, 65536, (23, 29, 3)).astype(np.uint16),
    }
    return imgs


def main():
    global IMGHIST
    ap = argparse.ArgumentParser()
    ap.add_argument("--imghist", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", required=True, choices=["cpu", "cuda"])
    a = ap.parse_args()
    IMGHIST = a.imghist
    dev = a.device
    work = os.path.join(a.work, dev)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    if dev == "cuda":
        probe = os.path.join(work, "probe.pgm")
        write_pnm(probe, np.zeros((2, 2), np.uint8))
        r = subprocess.run([IMGHIST, "hist", probe, "--device", "cuda"], capture_output=True, text=True)
        if r.returncode != 0 and ("no CUDA device" in r.stderr or "built without CUDA" in r.stderr):
            print("%s: %s; CUDA cases skipped" % (SKIP, r.stderr.strip()))
            return 0

    photos = {n: np.asarray(Image.open(os.path.join(a.samples, n + ".png"))) for n in ("camera", "astronaut", "coffee")}
    gen = generated()
    inputs = {}
    for name, img in list(photos.items()):
        inputs["photo-" + name] = (os.path.join(a.samples, name + ".png"), img)
        if img.ndim == 3:
            gname = "photo-" + name + "-gray"
            p = os.path.join(work, gname + ".pgm")
            g = gray_of(img[..., :3])
            write_pnm(p, g)
            inputs[gname] = (p, g)
    for name, img in gen.items():
        p = os.path.join(work, name + (".pgm" if img.ndim == 2 else ".ppm"))
        write_pnm(p, img)
        inputs[name] = (p, img)
    # RGBA (alpha must be kept): PNG.
    rgba = np.dstack([gen["rgb-dim-40x30"], (np.arange(1200).reshape(30, 40) % 256).astype(np.uint8)])
    p = os.path.join(work, "rgba-40x30.png")
    Image.fromarray(rgba, "RGBA").save(p)
    inputs["rgba-40x30"] = (p, rgba)

    def out_path(name, tag, img):
        return os.path.join(work, "%s.%s.%s" % (name, tag, "pgm" if img.ndim == 2 else ("png" if img.shape[2] == 4 else "ppm")))

    # ---- stretch -------------------------------------------------------------------------------------------------
    settings = [(["--low", "2%", "--high", "1%"], 2, 1), (["--normalize"], 2, 1), (["--auto-level"], 0, 0),
                (["--low", "0.5", "--high", "0.5%"], 0.5, 0.5), (["--low", "10%", "--high", "25%"], 10, 25),
                (["--low", "33.3%", "--high", "0%"], 33.3, 0)]
    n_stretch = 0
    for name, (path, img) in inputs.items():
        modes = ["luma", "per-channel"] if img.ndim == 3 else ["luma"]
        for opts, low, high in settings:
            for mode in modes:
                out = out_path(name, "stretch", img)
                if run(["stretch", path, out, "--mode", mode] + opts, dev).returncode != 0:
                    continue
                got = read_any(out)
                want = ref_stretch(img, low, high, mode)
                diff = int(np.count_nonzero(got != want))
                check(got.shape == want.shape and diff == 0,
                      "stretch %s %s %s: %d samples differ from skimage" % (name, mode, " ".join(opts), diff))
                n_stretch += 1

    # ---- histogram matching ----------------------------------------------------------------------------------------
    pairs = [("photo-camera", "photo-astronaut-gray"), ("photo-astronaut-gray", "photo-camera"),
             ("photo-coffee", "photo-astronaut"), ("photo-astronaut", "photo-coffee"),
             ("uniform-97x61", "modes-200x150"), ("modes-200x150", "narrow-33x17"), ("gauss-1x257", "three-levels-19x7"),
             ("rgb-uniform-65x33", "rgb-dim-40x30"), ("u16-gauss-70x50", "u16-narrow-45x31"),
             ("u16-rgb-29x23", "u16-rgb-29x23"), ("constant-8x8", "uniform-97x61")]
    for src, ref in pairs:
        spath, simg = inputs[src]
        rpath, rimg = inputs[ref]
        out = out_path(src, "match", simg)
        if run(["match", spath, rpath, out], dev).returncode != 0:
            continue
        got = read_any(out).astype(np.float64)
        exact = ref_match_float(simg[..., :3] if simg.ndim == 3 else simg, rimg[..., :3] if rimg.ndim == 3 else rimg)
        # The documented rule: skimage's value rounded half to even.
        diff = int(np.count_nonzero(got != np.rint(exact)))
        check(diff == 0, "match %s -> %s: %d samples differ from round(skimage)" % (src, ref, diff))
        check(float(np.max(np.abs(got - exact))) <= 0.5, "match %s -> %s: more than 0.5 from skimage's value" % (src, ref))
        # What skimage itself returns (float64 for one channel, the input dtype -- truncated -- for several).
        sk = match_histograms(simg, rimg, channel_axis=-1 if simg.ndim == 3 else None)
        if simg.ndim == 2:
            sk = sk.astype(simg.dtype)  # the integer image a user of skimage writes out
        off = int(np.count_nonzero(got != sk))
        check(float(np.max(np.abs(got - sk))) <= 1, "match %s -> %s: more than one level from skimage" % (src, ref))
        notes.append("match %s -> %s: %d of %d samples differ by one level from skimage's integer output"
                     % (src, ref, off, sk.size))
    # A histogram JSON as the target gives what the reference image gives.
    spath, simg = inputs["photo-coffee"]
    rpath, _ = inputs["photo-astronaut"]
    hj = os.path.join(work, "astronaut.json")
    r = run(["hist", rpath, "--format", "json", "-o", hj], dev)
    if r.returncode == 0:
        a1, a2 = os.path.join(work, "m-img.ppm"), os.path.join(work, "m-json.ppm")
        run(["match", spath, rpath, a1], dev)
        run(["match", spath, hj, a2], dev)
        check(np.array_equal(read_any(a1), read_any(a2)), "match to a histogram JSON differs from match to its image")

    # ---- multi-level Otsu ------------------------------------------------------------------------------------------
    mo_cases = [("photo-camera", 3), ("photo-camera", 4), ("photo-camera", 5), ("photo-astronaut-gray", 3),
                ("photo-astronaut-gray", 4), ("photo-coffee-gray", 3), ("photo-coffee-gray", 4),
                ("uniform-97x61", 3), ("modes-200x150", 3), ("modes-200x150", 4), ("narrow-33x17", 3),
                ("narrow-33x17", 4), ("narrow-33x17", 5), ("gauss-1x257", 5), ("column-131x1", 4),
                ("three-levels-19x7", 3), ("u16-narrow-45x31", 3), ("u16-narrow-45x31", 4)]
    for name, k in mo_cases:
        path, img = inputs[name]
        out = out_path(name, "mo%d" % k, img)
        r = run(["threshold", path, out, "--method", "multiotsu", "--classes", str(k)], dev)
        if r.returncode != 0:
            continue
        want_t = [int(t) for t in threshold_multiotsu(img, classes=k)]
        line = [l for l in r.stdout.splitlines() if l.startswith("thresholds:")]
        got_t = [int(t) for t in line[0].split()[1:]] if line else None
        check(got_t == want_t, "multiotsu %s classes %d: %s, skimage %s" % (name, k, got_t, want_t))
        top = 65535 if img.dtype == np.uint16 else 255
        want = label_scale(np.digitize(img, want_t), k, top)
        check(np.array_equal(read_any(out), want), "multiotsu %s classes %d: label image differs" % (name, k))
    # Fewer levels than classes: skimage raises ValueError; imghist fails with a message.
    path, _ = inputs["three-levels-19x7"]
    r = run(["threshold", path, os.path.join(work, "x.pgm"), "--method", "multiotsu", "--classes", "4"], dev, False)
    check(r.returncode != 0 and "3 different values" in r.stderr, "multiotsu with too few levels: " + r.stderr.strip())

    # ---- a folder, as every command takes ---------------------------------------------------------------------------
    folder, outdir = os.path.join(work, "folder"), os.path.join(work, "folder-out")
    os.makedirs(folder)
    for name in ("uniform-97x61", "modes-200x150", "rgb-dim-40x30"):
        shutil.copy(inputs[name][0], folder)
    if run(["stretch", folder, outdir, "--low", "1%", "--high", "2%", "--quiet"], dev).returncode == 0:
        for name in ("uniform-97x61", "modes-200x150", "rgb-dim-40x30"):
            img = inputs[name][1]
            got = read_any(os.path.join(outdir, os.path.basename(inputs[name][0])))
            check(np.array_equal(got, ref_stretch(img, 1, 2, "luma")), "folder stretch: %s differs from skimage" % name)

    for n in notes:
        print(n)
    print("%d stretch runs compared; %d failures" % (n_stretch, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
