#!/usr/bin/env python3
"""Writes the seed files of the fuzz targets (fuzz/seeds/<target>/): tiny valid images of every layout each
decoder handles, built with the standard library only (zlib, lzma, struct) so that the encoders under test
are not their own reference, and small members of each class of costly input the resource model bounds
(README "What one input may cost"): many metadata chunks, many JPEG scans, TIFF compressions without a ratio
bound of their own, interlaced sub-byte palettes, a lossless WebP of zero bits per pixel. JPEG and WebP seeds
are written by the imghist program given as the first argument (libjpeg, libwebp); the ZSTD TIFF needs the
zstd program."""
import lzma
import os
import random
import shutil
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_bombs  # noqa: E402
import png_corpus  # noqa: E402


def out(target, name, data):
    d = os.path.join(HERE, "seeds", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png(w, h, depth, color, rows, extra=b"", interlace=0):
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, interlace)
    raw = b"".join(b"\x00" + r for r in rows)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + extra + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def packed(values, bits):
    """Values of 1, 2, 4 or 8 bits packed most significant first (png_corpus's row packing)."""
    return png_corpus.pack_row(values, bits)


W, H = 7, 5
for bits in (1, 2, 4):
    rows = [packed([(x + y) % (1 << bits) for x in range(W)], bits) for y in range(H)]
    out("png", f"gray{bits}.png", png(W, H, bits, 0, rows))
    plte = chunk(b"PLTE", bytes(range(3 * (1 << bits))))
    out("png", f"palette{bits}.png", png(W, H, bits, 3, rows, plte + chunk(b"tRNS", b"\x80")))
out("png", "gray8.png", png(W, H, 8, 0, [bytes((x * 30 + y) % 256 for x in range(W)) for y in range(H)]))
out("png", "rgb16.png", png(W, H, 16, 2, [bytes((x + y + c) % 256 for x in range(W) for c in range(6)) for y in range(H)]))
out("png", "ga8.png", png(W, H, 8, 4, [bytes((x * 9 + c) % 256 for x in range(W) for c in range(2)) for y in range(H)]))
out("png", "rgba8.png", png(W, H, 8, 6, [bytes((x + c * 50) % 256 for x in range(W) for c in range(4)) for y in range(H)]))
# Adam7 with one pixel: only the first pass holds data.
out("png", "rgba8-interlaced-1x1.png", png(1, 1, 8, 6, [bytes((10, 20, 30, 40))], interlace=1))
# Adam7 with packed palette indices (PngSuite's s05i3p02 and basi3p04 shapes, smaller), and gray+alpha 16-bit.
rng = random.Random(9)
out("png", "palette2-interlaced-5x5.png", png_corpus.png(5, 5, 3, 2, 1, rng, extras=False)[0])
out("png", "palette4-interlaced-9x7.png", png_corpus.png(9, 7, 3, 4, 1, rng, trns=b"\x00\x80", extras=False)[0])
out("png", "ga16-interlaced-6x3.png", png_corpus.png(6, 3, 4, 16, 1, rng, extras=False)[0])
# Metadata of every kind, several chunks of each: text (plain, compressed, international, compressed
# international), XMP, an ICC profile, EXIF, resolution.
text = b"".join([chunk(b"tEXt", b"Comment\0plain"), chunk(b"zTXt", b"Comment\0\0" + zlib.compress(b"z" * 200)),
                 chunk(b"zTXt", b"Title\0\0" + zlib.compress(b"t" * 50)),
                 chunk(b"iTXt", b"Comment\0\1\0en\0\0" + zlib.compress(b"i" * 100)),
                 chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta/>"),
                 chunk(b"iCCP", b"icc\0\0" + zlib.compress(bytes(132))), chunk(b"pHYs", struct.pack(">IIB", 2835, 2835, 1)),
                 chunk(b"eXIf", b"MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0")])
out("png", "metadata-chunks.png", png(W, H, 8, 0, [bytes((x * 30 + y) % 256 for x in range(W)) for y in range(H)], text * 2))

# PNM: every kind, 8- and 16-bit, an odd maximum value, comments.
px = [(x * 37 + y * 11) % 256 for y in range(H) for x in range(W)]
out("pnm", "p1.pbm", b"P1\n# c\n%d %d\n" % (W, H) + b"".join(b"%d" % (v & 1) for v in px))
out("pnm", "p2.pgm", b"P2 %d %d 1000\n" % (W, H) + b" ".join(b"%d" % (v * 3) for v in px))
out("pnm", "p3.ppm", b"P3\n%d %d\n255\n" % (W, H) + b" ".join(b"%d %d %d" % (v, v // 2, 255 - v) for v in px))
out("pnm", "p4.pbm", b"P4\n%d %d\n" % (W, H) + b"".join(packed([(x + y) & 1 for x in range(W)], 1) for y in range(H)))
out("pnm", "p5.pgm", b"P5#c\n%d %d\n100\n" % (W, H) + bytes(v % 101 for v in px))
out("pnm", "p6-16.ppm", b"P6\n%d %d\n65535\n" % (W, H) + b"".join(struct.pack(">HHH", v * 257, v, 65535 - v) for v in px))

# BMP: 8-bit palette, 24-bit, 32-bit; bottom-up and top-down.
def bmp(w, h, bpp, top_down=False):
    row = (w * bpp + 31) // 32 * 4
    palette = b"".join(bytes((i, i, i, 0)) for i in range(256)) if bpp == 8 else b""
    off = 14 + 40 + len(palette)
    data = b"".join(bytes((x * 40 + y * 7 + k) % 256 for x in range(w) for k in range(bpp // 8)).ljust(row, b"\0") for y in range(h))
    hdr = struct.pack("<2sIHHI", b"BM", off + len(data), 0, 0, off)
    dib = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, bpp, 0, len(data), 2835, 2835, 0, 0)
    return hdr + dib + palette + data
out("bmp", "gray8.bmp", bmp(W, H, 8))
out("bmp", "rgb24.bmp", bmp(W, H, 24))
out("bmp", "rgba32-topdown.bmp", bmp(W, H, 32, True))

# TGA: uncompressed and RLE, gray, colour, colour-mapped.
def tga(kind, bpp, pixels, cmap=b"", cmap_len=0):
    hdr = struct.pack("<BBBHHBHHHHBB", 0, 1 if cmap else 0, kind, 0, cmap_len, 24 if cmap else 0, 0, 0, W, H, bpp, 0)
    return hdr + cmap + pixels
pb = bpp_bytes = 3
plain = b"".join(bytes(((x * 30) % 256, y * 40, 99)) for y in range(H) for x in range(W))
out("tga", "rgb.tga", tga(2, 24, plain))
out("tga", "gray.tga", tga(3, 8, bytes(px)))
rle = b""
for y in range(H):
    rle += bytes((0x80 | 2,)) + bytes((y * 9, 1, 2)) + bytes((W - 4,)) + b"".join(bytes((x, x, x)) for x in range(W - 3))
out("tga", "rgb-rle.tga", tga(10, 24, rle))
out("tga", "mapped.tga", tga(1, 8, bytes(v % 4 for v in px), cmap=bytes(range(12)), cmap_len=4))

# TIFF (little- and big-endian): strips and tiles, 8/16-bit gray, gray+alpha, RGB, RGBA; none, PackBits and
# Deflate; metadata tags (orientation, resolution, description, ICC profile, XMP).
def tiff(w, h, spp, bits, data_chunks, compression=1, tile=None, extra=(), big=False):
    e = ">" if big else "<"
    photometric = 2 if spp >= 3 else 1
    strips = b"".join(data_chunks)
    offsets, pos = [], 8
    for c in data_chunks:
        offsets.append(pos)
        pos += len(c)
    tags = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bits] * spp), (259, 3, [compression]), (262, 3, [photometric]),
            (277, 3, [spp]), (284, 3, [1])]
    if spp in (2, 4):
        tags.append((338, 3, [2]))  # unassociated alpha
    if tile:
        tags += [(322, 4, [tile]), (323, 4, [tile]), (324, 4, offsets), (325, 4, [len(c) for c in data_chunks])]
    else:
        tags += [(273, 4, offsets), (278, 4, [max(1, h // len(data_chunks))]), (279, 4, [len(c) for c in data_chunks])]
    tags += list(extra)
    tags.sort()
    fmt = {1: "B", 2: "B", 3: "H", 4: "I", 5: "I", 7: "B"}
    size = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1}
    ifd_pos = 8 + len(strips)
    ifd_pos += ifd_pos & 1
    body = b""
    data_pos = ifd_pos + 2 + 12 * len(tags) + 4
    entries = b""
    for tag, kind, values in tags:
        count = len(values) // 2 if kind == 5 else len(values)
        raw = struct.pack(e + fmt[kind] * len(values), *values)
        if len(raw) <= 4:
            entries += struct.pack(e + "HHI", tag, kind, count) + raw.ljust(4, b"\0")
        else:
            entries += struct.pack(e + "HHII", tag, kind, count, data_pos + len(body))
            body += raw + (b"\0" if len(raw) & 1 else b"")
    head = (b"MM\0*" if big else b"II*\0") + struct.pack(e + "I", ifd_pos)
    return head + strips + b"\0" * (ifd_pos - 8 - len(strips)) + struct.pack(e + "H", len(tags)) + entries + b"\0\0\0\0" + body


def tiff_pixels(w, h, spp, bits, big=False):
    vals = [(x * 37 + y * 11 + c * 5) % 256 for y in range(h) for x in range(w) for c in range(spp)]
    if bits == 8:
        return bytes(vals)
    return b"".join(struct.pack(">H" if big else "<H", v * 257) for v in vals)


def packbits(b):  # literal runs of up to 128 bytes
    return b"".join(bytes((len(b[i:i + 128]) - 1,)) + b[i:i + 128] for i in range(0, len(b), 128))


meta = [(274, 3, [6]), (282, 5, [300, 1]), (283, 5, [300, 1]), (296, 3, [2]), (270, 2, list(b"a comment\0")),
        (700, 1, list(b"<x:xmpmeta/>")), (34675, 7, list(bytes(132)))]
g8 = tiff_pixels(W, H, 1, 8)
row = W
out("tiff", "gray8-strips.tif", tiff(W, H, 1, 8, [g8[i * row:(i + 1) * row] for i in range(H)], extra=meta))
out("tiff", "rgb16-be.tif", tiff(W, H, 3, 16, [tiff_pixels(W, H, 3, 16, True)], big=True))
out("tiff", "ga8-packbits.tif", tiff(W, H, 2, 8, [packbits(tiff_pixels(W, H, 2, 8))], compression=32773))
out("tiff", "rgba8-deflate.tif", tiff(W, H, 4, 8, [zlib.compress(tiff_pixels(W, H, 4, 8))], compression=8))
t16 = tiff_pixels(16, 16, 1, 16)
out("tiff", "gray16-tiled.tif", tiff(W, H, 1, 16, [t16], tile=16))
# Compressions whose format sets no ratio bound (the ratio limit applies): LZMA, ZSTD; JPEG and WebP below.
out("tiff", "gray8-lzma.tif", tiff(W, H, 1, 8, [lzma.compress(g8, format=lzma.FORMAT_XZ)], compression=34925))
if shutil.which("zstd"):
    out("tiff", "rgb8-zstd.tif", tiff(W, H, 3, 8, [make_bombs.zstd(tiff_pixels(W, H, 3, 8))], compression=50000))

# raw: type byte, bins (2 bytes), low and high (two doubles), then samples.
out("raw", "u8.raw", bytes((0, 255, 0)) + struct.pack("<dd", 0, 256) + bytes(range(64)))
out("raw", "f32.raw", bytes((3, 15, 0)) + struct.pack("<dd", -1, 1) + struct.pack("<8f", -2, -1, -0.5, 0, 0.25, 0.99, 1, float("nan")))
out("raw", "i32-wide.raw", bytes((2, 0, 4)) + struct.pack("<dd", -1e308, 1e308) + struct.pack("<4i", -5, 0, 7, 2**31 - 1))

# JPEG: gray and colour at several samplings, baseline and progressive, written by the program (libjpeg).
# WebP: lossless and lossy, with and without alpha, one with EXIF, ICC and XMP chunks (written by the program
# from a PNG that carries them).
if len(sys.argv) > 1:
    imghist = sys.argv[1]
    tmp = os.path.join(HERE, "seeds", "jpeg")
    os.makedirs(tmp, exist_ok=True)
    for name, channels in (("gray", 1), ("rgb", 3)):
        path = os.path.join(tmp, f"{name}.jpg")
        subprocess.run([imghist, "gen", path, "--dist", "normal", "--size", "13x9", "--channels", str(channels), "--quality", "50"], check=True)
    wdir = os.path.join(HERE, "seeds", "webp")
    os.makedirs(wdir, exist_ok=True)
    for name, channels, quality in (("rgb-lossless", 3, []), ("rgba-lossless", 4, []), ("rgb-lossy", 3, ["--quality", "40"]),
                                    ("rgba-lossy", 4, ["--quality", "40"])):
        path = os.path.join(wdir, f"{name}.webp")
        subprocess.run([imghist, "gen", path, "--dist", "normal", "--size", "13x9", "--channels", str(channels)] + quality, check=True)
    exif = b"MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0\x06\0\0\0\0\0\0"
    extra = (chunk(b"eXIf", exif) + chunk(b"iCCP", b"icc\0\0" + zlib.compress(bytes(132))) +
             chunk(b"iTXt", b"XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta/>"))
    src = os.path.join(wdir, "meta.png")
    with open(src, "wb") as f:
        f.write(png(W, H, 8, 2, [bytes((x * 30 + c * 70 + y) % 256 for x in range(W) for c in range(3)) for y in range(H)], extra))
    subprocess.run([imghist, "equalize", src, os.path.join(wdir, "meta.webp"), "--device", "cpu"], check=True)
    os.remove(src)
    # A lossless WebP whose prefix codes have one symbol each: no bits at all per pixel.
    out("webp", "lossless-zero-bits-64x64.webp", make_bombs.tiny_webp(64, 64))
    # JPEG in TIFF (a whole JPEG stream as the strip) and WebP in TIFF.
    with open(os.path.join(tmp, "gray.jpg"), "rb") as f:
        out("tiff", "gray8-jpeg.tif", tiff(13, 9, 1, 8, [f.read()], compression=7))
    with open(os.path.join(wdir, "rgb-lossless.webp"), "rb") as f:
        out("tiff", "rgb8-webp.tif", tiff(13, 9, 3, 8, [f.read()], compression=50001))

# Progressive JPEGs of many scans, every AC coefficient alone (make_bombs.scans_jpeg at a small size): 64
# scans, under the default limit of 100, and 127, over it.
out("jpeg", "progressive-64-scans.jpg", make_bombs.scans_jpeg(16, 0))
out("jpeg", "progressive-127-scans.jpg", make_bombs.scans_jpeg(16, 1))

# The reproducers of the hostile-file findings that came before the fuzz targets (issue 9), replayed by
# scripts/fuzz.sh with the kept crashers (fuzz/regressions/<target>/).
def regression(target, name, data):
    d = os.path.join(HERE, "regressions", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

regression("pnm", "p6-16bit-byte-count-wraps.ppm", b"P6\n2147380029 1431724848\n65535\n" + b"\x11" * 64)
regression("pnm", "p5-comment-after-magic.pgm", b"P5#c\n2 1\n65535\n\x01\x02\x03\x04")
regression("bmp", "header-only-12x16776970.bmp",
           struct.pack("<2sIHHI", b"BM", 54, 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 12, 16776970, 1, 24, 0, 0, 0, 0, 0, 0))
regression("tga", "rle-3340x32778-154-bytes.tga",
           (struct.pack("<BBBHHBHHHHBB", 0, 0, 10, 0, 0, 0, 0, 0, 3340, 32778, 24, 0x20) + b"\xff\x01\x02\x03" * 40)[:154])
regression("png", "gray1-bad-idat-crc.png", (lambda p: p[:p.index(b"IDAT") + 6] + bytes((p[p.index(b"IDAT") + 6] ^ 1,)) + p[p.index(b"IDAT") + 7:])(
    png(5, 2, 1, 0, [packed([0, 1, 1, 0, 1], 1), packed([1, 0, 0, 1, 0], 1)])))
regression("png", "palette-index-beyond-palette.png", png(4, 1, 2, 3, [packed([0, 1, 3, 2], 2)], chunk(b"PLTE", bytes(range(9)))))
regression("raw", "range-overflows-double.raw", bytes((0, 255, 0)) + struct.pack("<dd", -1e308, 1e308) + bytes(range(32)))

# The hostile-input review of issue 30 (also end-to-end tests in tests/cli/test_limits.cpp and png_vs_pil.py):
# an Adam7 1-bit palette image that decoded wrongly or was refused ("palette index beyond palette"), a JPEG
# of 883 scans (the review's is 16384 x 16384: make_bombs.py), a 28-byte lossless WebP of 16383 x 16383.
regression("png", "palette1-interlaced-6x6.png", png_corpus.png(6, 6, 3, 1, 1, random.Random(6), palette_size=2, extras=False)[0])
regression("jpeg", "progressive-883-scans.jpg", make_bombs.scans_jpeg(16, 13))
regression("webp", "lossless-zero-bits-16383x16383.webp", make_bombs.tiny_webp())
