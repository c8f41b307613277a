#!/usr/bin/env python3
"""Writes the resource bombs of the hostile-input review (issue 30) into a folder, for measuring what one
input costs (peak memory, CPU time) before and after the limits of the resource model (tools/imghist/README.md,
"What one input may cost"). Standard library only (zlib, lzma, struct); the ZSTD TIFF needs the zstd program.
Nothing here is valid-but-unusual data: each file is built to cost as much as possible per byte.

  ztxt.png     ~1 MB: 1000 zTXt "Comment" chunks, each inflating to 1 MiB of text (1 GiB of comments)
  scans.jpg    ~930 KB: a progressive 16384x16384 gray JPEG of 883 scans (DC, then every AC coefficient
               alone at Al = 13 and refined bit by bit to 0); all AC data is end-of-band runs
  zstd.tif     16384x16384 RGBA 16-bit (2 GiB of pixels), zeros, ZSTD-compressed strips (needs zstd)
  lzma.tif     the same with LZMA (xz) strips
  tiny.webp    28 bytes: a lossless 16383x16383 WebP whose prefix codes all have one symbol (0 bits a pixel)
  nested.json  {"total": {"total": ... 30000 levels ... }}
  big.png      a 1 GiB sparse file of zeros (not a PNG at all)

Usage: make_bombs.py FOLDER"""
import lzma
import os
import shutil
import struct
import subprocess
import sys
import zlib


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def ztxt_png():
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    text = zlib.compress(b"a" * (1 << 20), 9)
    comments = chunk(b"zTXt", b"Comment\0\0" + text) * 1000
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + comments + chunk(b"IDAT", zlib.compress(b"\0\0")) +
            chunk(b"IEND", b""))


def marker(code, body):
    return struct.pack(">BBH", 0xFF, code, len(body) + 2) + body


class Bits:
    """Entropy-coded data: bits most significant first, a 0x00 stuffed after each 0xFF, padded with ones."""

    def __init__(self):
        self.out, self.acc, self.n = bytearray(), 0, 0

    def put(self, value, count):
        for k in range(count - 1, -1, -1):
            self.acc = (self.acc << 1) | ((value >> k) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc, self.n = 0, 0

    def bytes(self):
        if self.n:
            self.put((1 << (8 - self.n)) - 1, 8 - self.n)
        return bytes(self.out)


def scans_jpeg(side=16384, top_al=13):
    """Gray progressive JPEG of 1 + 63 * (top_al + 1) scans: DC, then every AC coefficient alone at Al = top_al,
    refined bit by bit to 0. DC: one Huffman code of one bit (difference 0) per block. AC: end-of-band runs
    only (symbol r << 4 codes a run of 2^r + r extra bits blocks; all 15 get 4-bit codes), so a scan over
    4 Mi blocks is 480 bytes and decoding it walks all of them."""
    blocks = ((side + 7) // 8) ** 2
    out = b"\xff\xd8"
    out += marker(0xDB, b"\x00" + b"\x01" * 64)
    out += marker(0xC2, struct.pack(">BHHB", 8, side, side, 1) + b"\x01\x11\x00")
    out += marker(0xC4, b"\x00" + bytes([1] + [0] * 15) + b"\x00")                          # DC: '0' -> category 0
    out += marker(0xC4, b"\x10" + bytes([0, 0, 0, 15] + [0] * 12) + bytes(r << 4 for r in range(15)))  # AC: EOBr

    def sos(ss, se, ah, al):
        return marker(0xDA, bytes((1, 1, 0x00, ss, se, (ah << 4) | al)))

    dc = Bits()
    for _ in range(blocks):
        dc.put(0, 1)
    runs = Bits()
    left = blocks
    while left:
        r = min(14, left.bit_length() - 1)
        run = min(left, (2 << r) - 1)
        runs.put(r, 4)   # the code of symbol r << 4 is r itself (4-bit codes in symbol order)
        runs.put(run - (1 << r), r)
        left -= run
    ac = runs.bytes()
    out += sos(0, 0, 0, 0) + dc.bytes()
    for k in range(1, 64):
        out += sos(k, k, 0, top_al) + ac
        for al in range(top_al - 1, -1, -1):
            out += sos(k, k, al + 1, al) + ac
    return out + b"\xff\xd9"


def tiff(w, h, spp, bits, strips, rows_per_strip, compression):
    """Little-endian TIFF: the strips, then IFD0."""
    data = b"".join(strips)
    offsets, pos = [], 8
    for s in strips:
        offsets.append(pos)
        pos += len(s)
    ifd_pos = (8 + len(data) + 1) & ~1
    tags = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bits] * spp), (259, 3, [compression]),
            (262, 3, [2 if spp >= 3 else 1]), (273, 4, offsets), (277, 3, [spp]), (278, 4, [rows_per_strip]),
            (279, 4, [len(s) for s in strips]), (284, 3, [1])]
    if spp in (2, 4):
        tags.append((338, 3, [2]))
    tags.sort()
    fmt, size = {3: "H", 4: "I"}, {3: 2, 4: 4}
    entries, extra = b"", b""
    extra_pos = ifd_pos + 2 + 12 * len(tags) + 4
    for tag, kind, values in tags:
        raw = struct.pack("<" + fmt[kind] * len(values), *values)
        if len(raw) <= 4:
            entries += struct.pack("<HHI", tag, kind, len(values)) + raw.ljust(4, b"\0")
        else:
            entries += struct.pack("<HHII", tag, kind, len(values), extra_pos + len(extra))
            extra += raw
    return (b"II*\0" + struct.pack("<I", ifd_pos) + data + b"\0" * (ifd_pos - 8 - len(data)) +
            struct.pack("<H", len(tags)) + entries + b"\0\0\0\0" + extra)


def compressed_tiff(compress, code, side=16384, rows=64):
    strip = compress(b"\0" * (side * 4 * 2 * rows))
    return tiff(side, side, 4, 16, [strip] * (side // rows), rows, code)


def zstd(data):
    return subprocess.run(["zstd", "-19", "-c", "-q"], input=data, capture_output=True, check=True).stdout


def tiny_webp(width=16383, height=16383):
    """VP8L: no transform, no colour cache, no meta prefix codes, five simple prefix codes of one symbol."""
    bits, n = 0, 0

    def put(value, count):
        nonlocal bits, n
        bits |= value << n
        n += count

    put(0x2F, 8)
    put(width - 1, 14)
    put(height - 1, 14)
    put(0, 1)  # alpha not used
    put(0, 3)  # version
    put(0, 1)  # no transform
    put(0, 1)  # no colour cache
    put(0, 1)  # no meta prefix codes
    for _ in range(5):  # simple code, one symbol, 1-bit symbol, symbol 0
        put(1, 1)
        put(0, 1)
        put(0, 1)
        put(0, 1)
    vp8l = bits.to_bytes((n + 7) // 8, "little")
    body = b"VP8L" + struct.pack("<I", len(vp8l)) + vp8l + (b"\0" if len(vp8l) & 1 else b"")
    return b"RIFF" + struct.pack("<I", 4 + len(body)) + b"WEBP" + body


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    os.makedirs(folder, exist_ok=True)

    def write(name, data):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)

    write("ztxt.png", ztxt_png())
    write("scans.jpg", scans_jpeg())
    if shutil.which("zstd"):
        write("zstd.tif", compressed_tiff(zstd, 50000))
    write("lzma.tif", compressed_tiff(lambda b: lzma.compress(b, format=lzma.FORMAT_XZ, preset=9), 34925))
    write("tiny.webp", tiny_webp())
    write("nested.json", b'{"total": ' * 30000 + b"{}" + b"}" * 30000)
    with open(os.path.join(folder, "big.png"), "wb") as f:
        f.truncate(1 << 30)


if __name__ == "__main__":
    main()
