"""imghist.io: image files read and written with the imghist command-line tool's codecs and rules.

    read(path, *, auto_orient=False, max_pixels=2**28)                -> (array, Metadata)
    write(path, array, metadata=None, quality=None, *, png_level=1, tiff_compression="deflate", threads=0)

Formats: PNG, JPEG, TIFF, WebP, BMP, TGA and PNM (PGM/PPM). read() recognises the format from the file's
content, write() takes it from the path's extension (png, jpg/jpeg, tif/tiff, webp, bmp, tga, pnm/pgm/ppm).

Arrays: uint8 or uint16 samples, (H, W) for gray, (H, W, C) with C = 2 (gray + alpha), 3 (RGB) or 4 (RGBA)
— RGB order, as PIL and scikit-image use; imghist.imread / imghist.imwrite are the cv2-shaped pair, in BGR
order. read() returns a C-contiguous NumPy array that owns the decoded pixels (no copy is made).

Metadata (an io.Metadata): EXIF, the ICC profile, XMP, comments and the resolution are read from every
format that holds them (PNG, JPEG, TIFF, WebP) and written back by write() to those formats, as the CLI
keeps them (a part the output's container cannot hold, such as an EXIF block above 64 KiB in a JPEG, is left
out). `orientation` is the EXIF Orientation (1-8): read(auto_orient=True) applies it to the pixels (rotating
or mirroring them, width and height swapped for 5-8) and resets the tag to 1, as `imghist ... --auto-orient`
and ImageMagick's -auto-orient do; write() writes a changed orientation into the EXIF block's tag.
`quality` is a lossy input's estimated quality (a JPEG's, or a lossy WebP's); write() gives a lossy output
that quality unless `quality=` says otherwise, so a photo re-encoded keeps its quality and a lossy WebP stays
lossy: JPEG outputs take quality=, else the estimate, else 90; WebP outputs are lossy at quality=, else at the
estimate, else lossless.

Safety, as the CLI's: files from outside are decoded with every header field bounded before it sizes an
allocation (max_pixels, the format's limits, the file's length), truncated or malformed files are refused
with an imghist.Error whose message starts with the file's path (IoError for files that cannot be read or
written, InvalidArgumentError / UnsupportedError for contents), and write() is atomic and durable: the file
is written under a temporary name in the destination's folder, flushed to disk, renamed over the
destination, and the folder entry flushed — a crash or an error never leaves a partial file under the final
name.
"""
import os as _os
from dataclasses import dataclass as _dataclass, field as _field
from typing import List as _List, Optional as _Optional, Tuple as _Tuple

import numpy as _np

from . import _imghist as _core
from ._errors import InvalidArgumentError as _InvalidArgumentError, UnsupportedError as _UnsupportedError

__all__ = ["read", "write", "Metadata"]

_MAX_PIXELS = 1 << 28  # the CLI's --max-pixels default
_TIFF_COMPRESSIONS = ("deflate", "lzw", "packbits", "none")


@_dataclass
class Metadata:
    """What an image file carries besides its pixels (see the module's docstring).

    exif: the EXIF block from its TIFF header on ("II*\\0" / "MM\\0*"; a leading "Exif\\0\\0" is removed);
    icc: the ICC profile; xmp: the XMP packet (UTF-8 XML); comments: text comments; dpi: (x, y) dots per
    inch, or None; orientation: the EXIF Orientation, 1-8 (read() gives 1 when there is no EXIF block; None
    on write keeps the EXIF block's tag as it is, a number is written into it); quality: a lossy
    input's estimated quality, 1-100, or None; progressive: a progressive JPEG (a JPEG output is then
    progressive too); format: the file's format as read ("PNG", "JPEG", "TIFF", "WebP", "BMP", "TGA", "PNM"),
    or None."""

    exif: bytes = b""
    icc: bytes = b""
    xmp: bytes = b""
    comments: _List[str] = _field(default_factory=list)
    dpi: _Optional[_Tuple[float, float]] = None
    orientation: _Optional[int] = None
    quality: _Optional[int] = None
    progressive: bool = False
    format: _Optional[str] = None

    def __repr__(self):
        size = lambda b: f"<{len(b)} bytes>"  # noqa: E731 (the blobs are long: their sizes say enough)
        return (f"Metadata(format={self.format!r}, exif={size(self.exif)}, icc={size(self.icc)}, "
                f"xmp={size(self.xmp)}, comments={self.comments!r}, dpi={self.dpi!r}, "
                f"orientation={self.orientation}, quality={self.quality!r}, progressive={self.progressive})")


def _files_module():
    if not _core.has_files:
        raise _UnsupportedError("this build of imghist has no image files (it was built without the command-line "
                                "tool: IMGHIST_PYTHON_FILES=OFF)")
    return _core


def read(path, *, auto_orient=False, max_pixels=_MAX_PIXELS):
    """The image in the file at `path` and its metadata: (array, Metadata). The array is uint8 or uint16,
    (H, W) or (H, W, C) in RGB(A) order, as stored (or turned upright with auto_orient=True). Images of more
    than `max_pixels` pixels are refused from their header, before anything is allocated."""
    core = _files_module()
    array, meta = core.read_image(_os.fspath(path), bool(auto_orient), int(max_pixels))
    return array, Metadata(**meta)


def write(path, array, metadata=None, quality=None, *, png_level=1, tiff_compression="deflate", threads=0):
    """Writes `array` (uint8 or uint16, (H, W) or (H, W, C), RGB(A) order) to `path`, in the format its
    extension names, with `metadata` (an io.Metadata, or None for none), atomically and durably.

    quality: 1-100 for JPEG and (lossy) WebP outputs; None takes metadata.quality, then the format's default
    (see the module's docstring). png_level: zlib level 0-9. tiff_compression: "deflate", "lzw",
    "packbits" or "none". threads: threads of the PNG writer, which deflates bands of rows in parallel (0:
    one per hardware thread; the bytes of a PNG depend on it, its pixels do not)."""
    core = _files_module()
    arr = _np.ascontiguousarray(array)
    meta = None
    if metadata is not None:
        meta = dict(vars(metadata)) if isinstance(metadata, Metadata) else dict(metadata)
    q = 0 if quality is None else int(quality)
    if quality is not None and not 1 <= q <= 100:
        raise _InvalidArgumentError(f"io.write: quality must be 1 to 100, got {quality}")
    if not 0 <= int(png_level) <= 9:
        raise _InvalidArgumentError(f"io.write: png_level must be 0 to 9, got {png_level}")
    if tiff_compression not in _TIFF_COMPRESSIONS:
        raise _InvalidArgumentError(f"io.write: tiff_compression must be one of {', '.join(_TIFF_COMPRESSIONS)}, "
                                    f"got {tiff_compression!r}")
    core.write_image(_os.fspath(path), arr, meta, q, int(png_level), str(tiff_compression), int(threads))


def __dir__():
    return list(__all__)
