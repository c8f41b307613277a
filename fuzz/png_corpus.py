#!/usr/bin/env python3
"""Valid PNG files of every layout the format allows, written from scratch with the standard library (zlib,
struct), PngSuite-style: every colour type at every bit depth it allows, interlaced (Adam7) or not, with and
without tRNS, palettes of any size, a suggested palette in truecolour files, a random filter per row, the
image data split over several IDAT chunks, text and pHYs chunks before and after PLTE. Used by the
differential test against PIL (tests/cli/png_vs_pil.py) and for the fuzz seeds (make_seeds.py).

  png_corpus.py FOLDER [COUNT] [SEED]   writes the PngSuite-shaped files and COUNT random ones (default 300)"""
import os
import random
import struct
import sys
import zlib

# Colour type -> the bit depths it allows; channels per colour type.
DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
# Adam7: x start, y start, x step, y step of each pass.
ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def pack_row(samples, depth):
    """Samples of one row, packed most significant first (1/2/4 bits) or big-endian (16 bits)."""
    if depth == 8:
        return bytes(samples)
    if depth == 16:
        return b"".join(struct.pack(">H", v) for v in samples)
    out, acc, n = bytearray(), 0, 0
    for v in samples:
        acc, n = (acc << depth) | v, n + depth
        if n == 8:
            out.append(acc)
            acc, n = 0, 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def filter_row(kind, row, prev, bpp):
    out = bytearray(len(row))
    for i, x in enumerate(row):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        pred = (0, a, b, (a + b) // 2, paeth(a, b, c))[kind]
        out[i] = (x - pred) & 0xFF
    return bytes([kind]) + bytes(out)


def image_data(pixels, w, h, color, depth, interlace, rng):
    """The filtered scanlines (of each Adam7 pass when interlaced), before compression."""
    bpp = max(1, CHANNELS[color] * depth // 8)
    passes = ADAM7 if interlace else ((0, 0, 1, 1),)
    raw = bytearray()
    for x0, y0, dx, dy in passes:
        xs = range(x0, w, dx)
        if not xs:
            continue
        prev = None
        for y in range(y0, h, dy):
            samples = [s for x in xs for s in pixels[y][x]]
            row = pack_row(samples, depth)
            prev = prev or bytes(len(row))
            raw += filter_row(rng.randrange(5), row, prev, bpp)
            prev = row
    return bytes(raw)


def png(w, h, color, depth, interlace, rng, trns=None, palette_size=None, extras=True):
    """One valid PNG and its pixels: rows of per-pixel sample tuples (palette indices for colour type 3).
    Returns (file bytes, pixels, palette entries or None, tRNS body or None)."""
    maxv = (1 << depth) - 1
    plte = None
    if color == 3:
        n = palette_size or rng.randint(1, 1 << depth)
        plte = [tuple(rng.randrange(256) for _ in range(3)) for _ in range(n)]
        pixels = [[(rng.randrange(n),) for _ in range(w)] for _ in range(h)]
    else:
        pixels = [[tuple(rng.randint(0, maxv) for _ in range(CHANNELS[color])) for _ in range(w)] for _ in range(h)]
    if trns is None and rng.random() < 0.4 and color in (0, 2, 3):
        if color == 3:
            trns = bytes(rng.randrange(256) for _ in range(rng.randint(1, len(plte))))
        else:
            trns = b"".join(struct.pack(">H", rng.randint(0, maxv)) for _ in range(CHANNELS[color]))
    head = chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, interlace))
    before, after = b"", b""
    if extras and rng.random() < 0.5:
        before += chunk(b"tEXt", b"Comment\0generated")
    if extras and rng.random() < 0.3:
        before += chunk(b"zTXt", b"Title\0\0" + zlib.compress(b"x" * rng.randint(0, 300)))
    if extras and rng.random() < 0.3:
        before += chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1))
    palette_chunks = b""
    if plte is not None:
        palette_chunks = chunk(b"PLTE", b"".join(bytes(e) for e in plte))
    elif color in (2, 6) and rng.random() < 0.2:  # a suggested palette, allowed in truecolour files
        palette_chunks = chunk(b"PLTE", bytes(rng.randrange(256) for _ in range(3 * rng.randint(1, 16))))
    if trns is not None:
        palette_chunks += chunk(b"tRNS", trns)
    data = zlib.compress(image_data(pixels, w, h, color, depth, interlace, rng), rng.randint(0, 9))
    idat, pos = b"", 0
    while pos < len(data) or not idat:
        n = rng.randint(1, max(1, len(data))) if rng.random() < 0.5 else len(data)
        idat += chunk(b"IDAT", data[pos:pos + n])
        pos += n
    if extras and rng.random() < 0.3:
        after += chunk(b"iTXt", b"Comment\0\0\0\0\0after the image data")
    return (b"\x89PNG\r\n\x1a\n" + head + before + palette_chunks + idat + after + chunk(b"IEND", b""),
            pixels, plte, trns)


def pngsuite_shaped(rng):
    """(name, file) of the PngSuite layouts that matter most here: interlaced sub-byte palettes of every size
    1-9 (s01i3p01 ... s09i3p04) and 32x32 of every colour type and depth, both interlacings (basn/basi)."""
    out = []
    for side in range(1, 10):
        for depth in (1, 2, 4):
            out.append((f"s{side:02d}i3p{depth:02d}.png", png(side, side, 3, depth, 1, rng, extras=False)[0]))
    for color, depths in DEPTHS.items():
        for depth in depths:
            kind = {0: "g", 2: "c", 3: "p", 4: "a", 6: "a"}[color]
            for interlace in (0, 1):
                name = f"bas{'ni'[interlace]}{color}{kind}{depth:02d}.png"
                out.append((name, png(32, 32, color, depth, interlace, rng, extras=False)[0]))
    return out


def random_png(rng):
    color = rng.choice(list(DEPTHS))
    depth = rng.choice(DEPTHS[color])
    w = rng.randint(1, 40) if rng.random() < 0.9 else rng.randint(41, 120)
    h = rng.randint(1, 40)
    return png(w, h, color, depth, rng.randrange(2), rng)[0]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    os.makedirs(folder, exist_ok=True)
    files = pngsuite_shaped(rng) + [(f"random{i:04d}.png", random_png(rng)) for i in range(count)]
    for name, data in files:
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
