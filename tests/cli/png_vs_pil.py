#!/usr/bin/env python3
"""Decoded PNG pixels against PIL (python3-pil) as the independent reader, on the PngSuite-shaped files and
300 random valid PNGs of fuzz/png_corpus.py (every colour type and bit depth, Adam7 or not, palettes of any
size, tRNS, filters, split IDAT). Every file must decode, to PIL's pixels: palettes expanded to RGB (RGBA
with tRNS), 1/2/4-bit gray stretched to 8 bits, 16-bit gray in full; PIL keeps only the high byte of 16-bit
colour (and makes 16-bit gray+alpha RGBA), and so is compared with ours. Usage: png_vs_pil.py DECODE_DUMP TMPDIR"""
import os
import subprocess
import sys

try:
    import numpy as np
    from PIL import Image
except ImportError:
    print("IMGHIST-SKIP: python3-pil or python3-numpy is not installed")
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz"))
import png_corpus  # noqa: E402

dump, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
sys.argv = ["png_corpus.py", tmp, "300", "30"]
png_corpus.main()


def ours(path):
    r = subprocess.run([dump, path], capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace").strip()
    header, data = r.stdout.split(b"\n", 1)
    w, h, c, depth = map(int, header.split())
    a = np.frombuffer(data, dtype=np.uint8 if depth == 8 else "<u2").reshape(h, w, c)
    return a, None


def pil(path):
    im = Image.open(path)
    im.load()
    if im.mode == "P":
        im = im.convert("RGBA" if "transparency" in im.info else "RGB")
    elif im.mode == "1":
        im = im.convert("L")
    a = np.array(im)
    return a.reshape(a.shape[0], a.shape[1], -1), im.mode


failures = []
names = sorted(os.listdir(tmp))
for name in names:
    path = os.path.join(tmp, name)
    a, error = ours(path)
    if a is None:
        failures.append(f"{name}: refused: {error}")
        continue
    b, mode = pil(path)
    if a.dtype == np.uint16 and mode != "I":
        a = (a >> 8).astype(np.uint8)  # PIL keeps the high byte of 16-bit colour and gray+alpha
    if a.shape[2] == 2 and mode == "RGBA":  # PIL reads 16-bit gray+alpha as RGBA
        a = a[:, :, [0, 0, 0, 1]]
    if a.shape != b.shape or not np.array_equal(a.astype(np.int64), b.astype(np.int64)):
        failures.append(f"{name}: pixels differ from PIL's (ours {a.shape} {a.dtype}, PIL {b.shape} mode {mode})")

for f in failures:
    print("MISMATCH", f)
print(f"png_vs_pil: {len(names)} files, {len(failures)} mismatches")
sys.exit(1 if failures else 0)
