#!/usr/bin/env python3
"""An independent reader and writer for the CLI tests: PIL (Pillow) makes photos with metadata and reads back
what imghist wrote. Commands (all print one JSON object on stdout):

  info FILE                    what PIL sees: size, mode, EXIF orientation and make, ICC profile, dpi, XMP,
                               comments, progressive, JPEG quantisation tables
  photo OUT W H MODE [KEY=VALUE...]
                               writes a synthetic photo (MODE: L, RGB, RGBA, I16 = 16-bit gray) with metadata:
                               orientation=N make=TEXT icc=srgb dpi=N comment=TEXT xmp=TEXT quality=N
                               progressive=1 lossless=1 (WebP) compression=NAME (TIFF)
                               full_exif=MM|II: instead of orientation/make, an EXIF block in that byte
                               order with Make, Model, Software, Orientation 6, an Exif sub-IFD
                               (ExposureTime 1/250, ISO 400, DateTimeOriginal) and a GPS sub-IFD
  transpose IN OUT             ImageOps.exif_transpose(IN) saved as PNG OUT
  decode IN OUT                PIL's decode of IN saved as PNG OUT (8-bit modes and I;16)
"""
import hashlib
import json
import struct
import sys

from PIL import Image, ImageCms, ImageOps, PngImagePlugin

XMP_PREFIX = b"http://ns.adobe.com/xap/1.0/\x00"


def text(v):
    if v is None:
        return None
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def ifd_bytes(entries, at, e):
    """An IFD at offset `at` from (tag, type, count, payload) entries, with its out-of-line values after it."""
    out, data = struct.pack(e + "H", len(entries)), b""
    data_at = at + 2 + 12 * len(entries) + 4
    for tag, typ, count, payload in entries:
        if len(payload) <= 4:
            out += struct.pack(e + "HHI", tag, typ, count) + payload.ljust(4, b"\0")
        else:
            out += struct.pack(e + "HHII", tag, typ, count, data_at + len(data))
            data += payload + (b"\0" if len(payload) & 1 else b"")
    return out + b"\0\0\0\0" + data


def full_exif(order):
    """A camera-like EXIF block written by hand (PIL 9 cannot write sub-IFDs reliably)."""
    e = ">" if order == "MM" else "<"
    sub = [(0x829A, 5, 1, struct.pack(e + "II", 1, 250)), (0x8827, 3, 1, struct.pack(e + "H", 400)),
           (0x9003, 2, 20, b"2024:01:02 03:04:05\0")]
    gps = [(1, 2, 2, b"N\0"), (5, 1, 1, b"\0")]

    def ifd0(sub_at, gps_at):
        return [(271, 2, 8, b"CamMake\0"), (272, 2, 7, b"ModelX\0"), (274, 3, 1, struct.pack(e + "H", 6)),
                (305, 2, 4, b"sw1\0"), (0x8769, 4, 1, struct.pack(e + "I", sub_at)),
                (0x8825, 4, 1, struct.pack(e + "I", gps_at))]
    sub_at = 8 + len(ifd_bytes(ifd0(0, 0), 8, e))
    sub_b = ifd_bytes(sub, sub_at, e)
    gps_at = sub_at + len(sub_b)
    head = (b"MM\0*" if order == "MM" else b"II*\0") + struct.pack(e + "I", 8)
    return head + ifd_bytes(ifd0(sub_at, gps_at), 8, e) + sub_b + ifd_bytes(gps, gps_at, e)


def info(path):
    im = Image.open(path)
    exif = im.getexif()
    out = {"format": im.format, "size": list(im.size), "mode": im.mode,
           "orientation": exif.get(0x0112), "make": text(exif.get(0x010F)),
           "exif_bytes": len(im.info.get("exif") or b""),
           "software": text(exif.get(305)),
           "exif_ifd": {str(k): text(v) for k, v in exif.get_ifd(0x8769).items()},
           "gps_ifd": {str(k): text(v) for k, v in exif.get_ifd(0x8825).items()}}
    icc = im.info.get("icc_profile")
    out["icc_sha256"] = hashlib.sha256(icc).hexdigest() if icc else None
    dpi = im.info.get("dpi")
    out["dpi"] = [float(dpi[0]), float(dpi[1])] if dpi else None
    comments, xmp = [], None
    if im.format == "JPEG":
        for marker, data in im.applist:
            if marker == "COM":
                comments.append(text(data))
            elif marker == "APP1" and data.startswith(XMP_PREFIX):
                xmp = text(data[len(XMP_PREFIX):])
        out["progressive"] = bool(im.info.get("progressive", 0))
        out["quantization"] = {str(k): list(v) for k, v in im.quantization.items()}
    elif im.format == "PNG":
        if "Comment" in im.info:
            comments.append(text(im.info["Comment"]))
        xmp = text(im.info.get("XML:com.adobe.xmp"))
    elif im.format == "TIFF":
        if 270 in im.tag_v2:
            comments.append(text(im.tag_v2[270]))
        xmp = text(im.tag_v2.get(700))
        out["orientation"] = im.tag_v2.get(274, out["orientation"])
        out["compression"] = im.info.get("compression")
    elif im.format == "WEBP":
        xmp = text(im.info.get("xmp"))
        out["lossless"] = None
    out["comments"] = comments
    out["xmp"] = xmp
    return out


def photo(path, w, h, mode, opts):
    w, h = int(w), int(h)
    bands = {"L": 1, "RGB": 3, "RGBA": 4, "I16": 1}[mode]
    if mode == "I16":
        im = Image.new("I", (w, h))
        im.putdata([((x * 977 + y * 613 + (x * y) % 251) * 37) % 65536 for y in range(h) for x in range(w)])
        im = im.convert("I;16")
    else:
        im = Image.new(mode, (w, h))
        data = []
        for y in range(h):
            for x in range(w):
                px = tuple((40 + x * (3 + c) + y * (5 - c) + ((x // 4 + y // 3) % 2) * 30) % 256 for c in range(bands))
                if mode == "RGBA":
                    px = px[:3] + ((x * 9 + y * 4) % 256,)
                data.append(px[0] if bands == 1 else px)
        im.putdata(data)
    kw = {}
    exif = Image.Exif()
    if "orientation" in opts:
        exif[0x0112] = int(opts["orientation"])
    if "make" in opts:
        exif[0x010F] = opts["make"]
    fmt = path.rsplit(".", 1)[-1].lower()
    if len(exif):
        kw["exif"] = exif.tobytes()
    if "full_exif" in opts:
        kw["exif"] = b"Exif\0\0" + full_exif(opts["full_exif"])
    if opts.get("icc") == "srgb":
        kw["icc_profile"] = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    if "dpi" in opts:
        kw["dpi"] = (int(opts["dpi"]), int(opts["dpi"]))
    if fmt in ("jpg", "jpeg"):
        if "quality" in opts:
            kw["quality"] = int(opts["quality"])
        if opts.get("progressive") == "1":
            kw["progressive"] = True
        if "comment" in opts:
            kw["comment"] = opts["comment"].encode()
    elif fmt == "png":
        pi = PngImagePlugin.PngInfo()
        if "comment" in opts:
            pi.add_text("Comment", opts["comment"])
        if "xmp" in opts:
            pi.add_itxt("XML:com.adobe.xmp", opts["xmp"])
        kw["pnginfo"] = pi
    elif fmt == "webp":
        kw["lossless"] = opts.get("lossless") == "1"
        if "quality" in opts:
            kw["quality"] = int(opts["quality"])
        if "xmp" in opts:
            kw["xmp"] = opts["xmp"].encode()
    elif fmt in ("tif", "tiff"):
        if "compression" in opts:
            kw["compression"] = opts["compression"]
        if "orientation" in opts:
            kw.pop("exif", None)
            kw["tiffinfo"] = {274: int(opts["orientation"])}
    im.save(path, **kw)
    return {"written": path}


def main(argv):
    cmd = argv[1]
    if cmd == "info":
        res = info(argv[2])
    elif cmd == "photo":
        opts = dict(a.split("=", 1) for a in argv[6:])
        res = photo(argv[2], argv[3], argv[4], argv[5], opts)
    elif cmd == "transpose":
        ImageOps.exif_transpose(Image.open(argv[2])).save(argv[3])
        res = {"written": argv[3]}
    elif cmd == "decode":
        Image.open(argv[2]).save(argv[3])
        res = {"written": argv[3]}
    else:
        raise SystemExit("unknown command " + cmd)
    print(json.dumps(res))


if __name__ == "__main__":
    main(sys.argv)
