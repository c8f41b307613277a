#!/usr/bin/env python3
"""Decoded pixels of the imghist program against PIL (python3-pil) as the independent reader: PNM with
maximum values other than 255/65535 (binary and plain; PIL stretches them to 8 or 16 bits) and 1/2/4-bit
gray PNGs. Compares exact histograms (one bin per value). Usage: pil_reference.py IMGHIST TMPDIR"""
import json
import os
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image
except ImportError:
    print("IMGHIST-SKIP: python3-pil is not installed")
    sys.exit(0)

imghist, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
failures = 0


def check(path, what):
    global failures
    im = Image.open(path)
    wide = im.mode.startswith("I")
    bins = 65536 if wide else 256
    ref = [0] * bins
    for p in im.getdata():
        ref[p] += 1
    out = subprocess.run([imghist, "hist", path, "--format", "json", "--bins", str(bins), "--device", "cpu"],
                         capture_output=True, check=True).stdout
    ours = json.loads(out)["channels"][0]["counts"]
    if ours != ref:
        failures += 1
        print(f"MISMATCH {what}: PIL mode {im.mode}")


for maxval in (1, 3, 100, 254, 256, 1000, 4095, 65534):
    values = list(range(maxval + 1))
    wide = maxval > 255
    binary = b"".join(v.to_bytes(2, "big") if wide else bytes((v,)) for v in values)
    plain = " ".join(map(str, values)).encode()
    for kind, data in ((b"P5", binary), (b"P2", plain)):
        path = os.path.join(tmp, f"max{maxval}-{kind.decode()}.pgm")
        with open(path, "wb") as f:
            f.write(b"%s\n%d 1\n%d\n" % (kind, maxval + 1, maxval) + data)
        check(path, f"{kind.decode()} maxval {maxval}")


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


for bits in (1, 2, 4):
    w, h = 37, 3
    rows = b""
    for y in range(h):
        acc, n, row = 0, 0, bytearray()
        for x in range(w):
            acc, n = (acc << bits) | ((x * 7 + y) % (1 << bits)), n + bits
            if n == 8:
                row.append(acc)
                acc, n = 0, 0
        if n:
            row.append(acc << (8 - n))
        rows += b"\0" + bytes(row)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bits, 0, 0, 0, 0)) +
           chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    path = os.path.join(tmp, f"gray{bits}.png")
    with open(path, "wb") as f:
        f.write(png)
    check(path, f"{bits}-bit gray PNG")

print("pil_reference: %d mismatches" % failures)
sys.exit(1 if failures else 0)
