"""Image files: imghist.io.read / write (RGB, metadata) and imghist.imread / imwrite (cv2's) against cv2 and PIL —
pixels identical for lossless formats and for JPEG decoding (cv2 and PIL decode with libjpeg-turbo, as the CLI's
tests compare), metadata as PIL reads it, cv2.imread's answer for every flag, hostile files refused with the
file's name, and writes that never leave a partial file."""
import glob
import os
import zlib

import cv2
import numpy as np
import pytest

import imghist
from conftest import photographs, random_image

PIL = pytest.importorskip("PIL", reason="PIL (an independent reader) is not installed (Debian: python3-pil)")
from PIL import Image, ImageOps  # noqa: E402

pytestmark = pytest.mark.skipif(not imghist._imghist.has_files,
                                reason="this build of imghist has no image files (IMGHIST_PYTHON_FILES=OFF)")


def rgb(bgr):
    return bgr[..., ::-1] if bgr.ndim == 3 and bgr.shape[2] == 3 else (
        bgr[..., [2, 1, 0, 3]] if bgr.ndim == 3 else bgr)


def images():
    """(name, BGR(A) array as cv2 holds it): photographs, an alpha channel, 16-bit colour and gray. No pixel is
    fully transparent: lossless WebP encoders may change the colour of those."""
    photo = photographs()["astronaut.png"]
    gray = photographs()["camera.png"]
    gray = gray if gray.ndim == 2 else cv2.cvtColor(gray, cv2.COLOR_BGR2GRAY)
    c16 = photo.astype(np.uint16) * 257 + random_image(photo.shape, "uint16", 1, 0, 256)
    return {"photo": photo, "gray": gray, "bgra": np.dstack([photo, random_image(photo.shape[:2], "uint8", 2, 1, 255)]),
            "odd": random_image((37, 53, 3), "uint8", 3), "c16": c16, "g16": np.ascontiguousarray(c16[..., 1])}


def lossless_files(folder):
    """Files written by cv2 (PNG, TIFF, BMP, lossless WebP, PPM/PGM) and PIL (PNG, TIFF, TGA, BMP, palette
    PNG): {path: the pixels in RGB(A) order}."""
    files = {}
    for name, img in images().items():
        for ext in ["png", "tif", "bmp", "webp", "ppm", "pgm"]:
            if (ext in ("bmp", "webp") and img.dtype != np.uint8) or (ext == "ppm" and (img.ndim != 3 or img.shape[2] != 3)) \
                    or (ext == "pgm" and img.ndim != 2) or (ext == "bmp" and img.ndim == 3 and img.shape[2] == 4):
                continue
            p = os.path.join(folder, f"cv2-{name}.{ext}")
            assert cv2.imwrite(p, img, [cv2.IMWRITE_WEBP_QUALITY, 101])
            # Gray BMPs (cv2 writes a gray palette) and WebPs (which have no gray) are read as RGB.
            files[p] = np.dstack([img] * 3) if ext in ("bmp", "webp") and img.ndim == 2 else rgb(img)
        if img.dtype == np.uint8:
            for ext in ["png", "tiff", "tga", "bmp"]:
                p = os.path.join(folder, f"pil-{name}.{ext}")
                Image.fromarray(rgb(img)).save(p)
                files[p] = np.dstack([img] * 3) if ext == "bmp" and img.ndim == 2 else rgb(img)
    pal = Image.fromarray(rgb(images()["odd"])).convert("P")
    pal.save(os.path.join(folder, "pil-palette.png"))
    files[os.path.join(folder, "pil-palette.png")] = np.asarray(pal.convert("RGB"))
    return files


def cv2_premultiplies(path, pixels):
    """cv2 reads 8-bit RGBA TIFFs with unassociated alpha (PIL's and imghist's) through libtiff's RGBA interface,
    which premultiplies the colour by the alpha (imghist.imread does as cv2; imghist.io.read keeps the stored
    values, as PIL does)."""
    return path.endswith((".tif", ".tiff")) and pixels.dtype == np.uint8 and pixels.ndim == 3 and pixels.shape[2] == 4


def assert_reads_alike(theirs, ours, path):
    """cv2 and PIL read gray-palette BMPs as gray (imghist as RGB) and 32-bit BMPs without their alpha."""
    if theirs.ndim == 2 and ours.ndim == 3:
        theirs = np.dstack([theirs] * ours.shape[2])
    if path.endswith(".bmp") and ours.ndim == 3 and theirs.shape[2] == 3:
        ours = ours[..., :3]
    np.testing.assert_array_equal(theirs, ours, err_msg=path)


def test_read_gives_the_pixels_cv2_and_pil_read(tmp_path):
    for path, expected in lossless_files(str(tmp_path)).items():
        got, meta = imghist.io.read(path)
        assert got.dtype == expected.dtype and got.shape == expected.shape, path
        np.testing.assert_array_equal(got, expected, err_msg=path)
        assert got.flags.c_contiguous and got.flags.owndata is False  # the decoded buffer itself, no copy
        assert meta.format is not None and meta.orientation == 1
        if not path.endswith(".tga") and not cv2_premultiplies(path, got):
            assert_reads_alike(rgb(cv2.imread(path, cv2.IMREAD_UNCHANGED)), got, path)
        if expected.dtype == np.uint8:
            pil = Image.open(path)
            assert_reads_alike(np.asarray(pil.convert("RGB") if pil.mode == "P" else pil), got, path)


def jpeg_files(folder):
    photo = Image.fromarray(rgb(images()["photo"]))
    files = []
    for name, kw in {"420": {}, "422": {"subsampling": 1}, "444": {"subsampling": 0}, "progressive": {"progressive": True},
                     "q30": {"quality": 30}}.items():
        files.append(os.path.join(folder, f"{name}.jpg"))
        photo.save(files[-1], **kw)
    files.append(os.path.join(folder, "gray.jpg"))
    photo.convert("L").save(files[-1])
    files.append(os.path.join(folder, "odd.jpg"))
    Image.fromarray(rgb(images()["odd"])).save(files[-1])
    files.append(os.path.join(folder, "cv2.jpg"))
    cv2.imwrite(files[-1], images()["photo"])
    return files


def test_jpeg_decoding_equals_libjpeg_turbo(tmp_path):
    for path in jpeg_files(str(tmp_path)):
        got, meta = imghist.io.read(path)
        np.testing.assert_array_equal(got, rgb(cv2.imread(path, cv2.IMREAD_UNCHANGED)), err_msg=path)
        np.testing.assert_array_equal(got, np.asarray(Image.open(path)), err_msg=path)
        assert meta.format == "JPEG" and 1 <= meta.quality <= 100
        assert meta.progressive == path.endswith("progressive.jpg")


def test_write_then_read_back_with_cv2_and_pil(tmp_path):
    for name, img in images().items():
        arr = rgb(img)
        for ext in ["png", "tif", "webp", "bmp", "tga", "ppm", "pgm"]:
            if (img.dtype != np.uint8 and ext in ("webp", "bmp", "tga")) or (ext == "ppm" and arr.ndim != 3) \
                    or (ext == "pgm" and arr.ndim != 2) or (ext == "ppm" and arr.shape[2] != 3):
                continue
            path = str(tmp_path / f"{name}.{ext}")
            imghist.io.write(path, arr)
            back = imghist.io.read(path)[0]
            # WebP has no gray; our BMP writer stores gray as 24-bit.
            expected = np.dstack([arr] * 3) if ext in ("webp", "bmp") and arr.ndim == 2 else arr
            np.testing.assert_array_equal(back, expected, err_msg=path)
            if ext != "tga" and not cv2_premultiplies(path, expected):
                np.testing.assert_array_equal(rgb(cv2.imread(path, cv2.IMREAD_UNCHANGED)), expected, err_msg=path)
            if img.dtype == np.uint8:
                np.testing.assert_array_equal(np.asarray(Image.open(path).convert(
                    {1: "L", 3: "RGB", 4: "RGBA"}[1 if expected.ndim == 2 else expected.shape[2]])), expected,
                    err_msg=path)
    # A view with strides is written as the pixels it shows.
    view = rgb(images()["photo"])[10:-20:2, 5:-7]
    imghist.io.write(str(tmp_path / "view.png"), view)
    np.testing.assert_array_equal(imghist.io.read(str(tmp_path / "view.png"))[0], view)


# ---- metadata -----------------------------------------------------------------------------------------------------

def an_icc_profile():
    return Image.open(os.path.join(os.environ.get("IMGHIST_SAMPLES_DIR", ""), "astronaut.png")).info.get("icc_profile") \
        or b"\0" * 128


XMP = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
       b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/></x:xmpmeta><?xpacket end="w"?>')


def pil_exif(orientation=1, make="imghist-test"):
    ex = Image.Exif()
    ex[271] = make
    ex[0x0112] = orientation
    return ex.tobytes()


def pil_xmp(im, ext):
    if ext == "png":
        return im.info.get("XML:com.adobe.xmp", "").encode()
    if ext == "tif":
        return bytes(im.tag_v2.get(700, b""))
    if ext == "jpg":
        return b"".join(data for marker, data in im.applist if data.startswith(b"http://ns.adobe.com/xap/1.0/\0"))
    return im.info.get("xmp", b"")


@pytest.mark.parametrize("ext", ["jpg", "png", "tif", "webp"])
def test_metadata_written_is_what_pil_reads_and_read_back(tmp_path, ext):
    arr = rgb(images()["odd"])
    meta = imghist.io.Metadata(exif=pil_exif(3), icc=an_icc_profile(), xmp=XMP, dpi=(300.0, 300.0))
    path = str(tmp_path / f"m.{ext}")
    imghist.io.write(path, arr, meta)
    im = Image.open(path)
    assert im.info.get("icc_profile") == meta.icc
    exif = im.getexif()
    assert exif.get(271) == "imghist-test" and exif.get(0x0112) == 3
    assert XMP in pil_xmp(im, ext)
    back, m = imghist.io.read(path)
    assert m.icc == meta.icc and m.orientation == 3 and XMP in m.xmp
    if ext in ("jpg", "png", "tif"):
        assert m.dpi is not None and abs(m.dpi[0] - 300) < 0.5
    # --strip's equivalent: no metadata at all.
    imghist.io.write(path, arr)
    im = Image.open(path)
    assert "icc_profile" not in im.info and not im.getexif().get(271)


@pytest.mark.parametrize("ext", ["jpeg", "png", "webp", "tiff"])
def test_metadata_of_pil_files_and_auto_orient(tmp_path, ext):
    pixels = rgb(images()["odd"])
    base = Image.fromarray(pixels)
    path = str(tmp_path / f"o6.{ext}")
    base.save(path, exif=pil_exif(6), icc_profile=an_icc_profile(), **({"lossless": True} if ext == "webp" else {}))
    stored, meta = imghist.io.read(path)
    assert meta.orientation == 6 and meta.icc == an_icc_profile()
    if ext != "jpeg":
        np.testing.assert_array_equal(stored, pixels)
    upright, m = imghist.io.read(path, auto_orient=True)
    assert m.orientation == 1
    np.testing.assert_array_equal(upright, np.rot90(stored, -1))  # orientation 6: turned 90 degrees clockwise
    if ext != "tiff":  # (PIL reads a TIFF's orientation tag by rules of its own)
        np.testing.assert_array_equal(upright, np.asarray(ImageOps.exif_transpose(Image.open(path))))
    # Written back: the tag says 1 (a TIFF may leave the tag out: 1 is its default).
    out = str(tmp_path / f"upright.{ext}")
    imghist.io.write(out, upright, m)
    assert Image.open(out).getexif().get(0x0112) in ((1, None) if ext == "tiff" else (1,))
    # A changed orientation is written into the EXIF block.
    m.orientation = 8
    imghist.io.write(out, upright, m)
    assert Image.open(out).getexif().get(0x0112) == 8


def test_a_lossy_input_stays_lossy_at_its_quality(tmp_path):
    src = str(tmp_path / "q70.jpg")
    Image.fromarray(rgb(images()["photo"])).save(src, quality=70)
    arr, meta = imghist.io.read(src)
    assert meta.quality == 70
    out = str(tmp_path / "again.jpg")
    imghist.io.write(out, arr, meta)
    assert Image.open(out).quantization == Image.open(src).quantization  # libjpeg's tables for quality 70
    assert imghist.io.read(out)[1].quality == 70
    imghist.io.write(out, arr, meta, quality=40)
    q40 = str(tmp_path / "q40.jpg")
    Image.fromarray(arr).save(q40, quality=40)
    assert Image.open(out).quantization == Image.open(q40).quantization
    imghist.io.write(out, arr)  # no metadata: the CLI's default, 90
    assert imghist.io.read(out)[1].quality == 90
    # WebP: lossy at the input's quality when the input was lossy, lossless otherwise.
    webp = str(tmp_path / "x.webp")
    imghist.io.write(webp, arr, meta)
    assert open(webp, "rb").read(16)[12:16] == b"VP8 " and imghist.io.read(webp)[1].quality is not None
    imghist.io.write(webp, arr)
    assert open(webp, "rb").read(16)[12:16] == b"VP8L"
    np.testing.assert_array_equal(imghist.io.read(webp)[0], arr)


# ---- hostile files, errors, atomic writes --------------------------------------------------------------------------

def hostile_files(folder):
    good = os.path.join(folder, "good.png")
    cv2.imwrite(good, images()["photo"])
    data = open(good, "rb").read()
    jpeg = os.path.join(folder, "good.jpg")
    cv2.imwrite(jpeg, images()["photo"])
    jdata = open(jpeg, "rb").read()
    files = {
        "truncated.png": data[: len(data) // 2],
        "truncated.jpg": jdata[: len(jdata) // 3],
        "garbage.png": bytes(range(256)) * 4,
        "empty.png": b"",
    }
    # An IHDR claiming 100000 x 100000 RGBA pixels, its CRC right: only the size is hostile.
    ihdr = bytes.fromhex("49484452000186a0000186a00806000000")
    files["huge.png"] = bytes.fromhex("89504e470d0a1a0a0000000d") + ihdr + zlib.crc32(ihdr).to_bytes(4, "big") + \
        bytes.fromhex("0000000049454e44ae426082")
    out = {}
    for name, content in files.items():
        p = os.path.join(folder, name)
        with open(p, "wb") as f:
            f.write(content)
        out[name] = p
    return out


def test_hostile_files_are_refused_with_the_files_name(tmp_path):
    for name, path in hostile_files(str(tmp_path)).items():
        with pytest.raises(imghist.Error) as e:
            imghist.io.read(path)
        assert str(e.value).startswith(f"io.read: {path}: ") or str(e.value).startswith(path), (name, str(e.value))
        with pytest.warns(RuntimeWarning, match=path):
            assert imghist.imread(path) is None
    with pytest.raises(imghist.Error, match="pixels"):
        imghist.io.read(str(tmp_path / "good.png"), max_pixels=1000)
    missing = str(tmp_path / "missing.png")
    with pytest.raises(imghist.IoError, match="missing.png") as e:
        imghist.io.read(missing)
    assert isinstance(e.value, OSError)
    with pytest.warns(RuntimeWarning, match="missing.png"):
        assert imghist.imread(missing) is None


def no_temporaries(folder):
    return [f for f in os.listdir(folder) if f.startswith(".imghist-")] == []


def test_writes_are_atomic(tmp_path):
    arr = rgb(images()["photo"])
    path = str(tmp_path / "x.jpg")
    imghist.io.write(path, arr)
    before = open(path, "rb").read()
    with pytest.raises(imghist.UnsupportedError, match="x.jpg"):  # JPEG holds no alpha: refused, nothing touched
        imghist.io.write(path, np.dstack([arr, arr[..., :1]]))
    assert open(path, "rb").read() == before and no_temporaries(str(tmp_path))
    with pytest.raises(imghist.IoError, match="no-such-folder"):
        imghist.io.write(str(tmp_path / "no-such-folder" / "y.png"), arr)
    with pytest.raises(imghist.UnsupportedError, match=r"x\.xyz: unknown image format"):
        imghist.io.write(str(tmp_path / "x.xyz"), arr)
    with pytest.raises(imghist.UnsupportedError, match="float32"):
        imghist.io.write(str(tmp_path / "f.png"), arr.astype(np.float32))
    with pytest.raises(imghist.InvalidArgumentError):
        imghist.io.write(str(tmp_path / "f.png"), np.zeros((4, 4, 5), np.uint8))
    os.chmod(tmp_path, 0o500)
    try:
        if not os.access(str(tmp_path), os.W_OK):  # (root may write anyway)
            with pytest.raises(imghist.IoError, match="x.jpg"):
                imghist.io.write(path, arr[::2])
            assert open(path, "rb").read() == before
    finally:
        os.chmod(tmp_path, 0o700)
    assert no_temporaries(str(tmp_path)) and sorted(os.listdir(tmp_path)) == ["x.jpg"]


# ---- cv2.imread / cv2.imwrite --------------------------------------------------------------------------------------

IMREAD_FLAGS = [cv2.IMREAD_UNCHANGED, cv2.IMREAD_GRAYSCALE, cv2.IMREAD_COLOR, cv2.IMREAD_ANYDEPTH,
                cv2.IMREAD_ANYDEPTH | cv2.IMREAD_COLOR, cv2.IMREAD_ANYCOLOR, cv2.IMREAD_ANYCOLOR | cv2.IMREAD_ANYDEPTH,
                cv2.IMREAD_GRAYSCALE | cv2.IMREAD_IGNORE_ORIENTATION, cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION]


def test_constants_are_cv2s():
    for name in ["IMREAD_UNCHANGED", "IMREAD_GRAYSCALE", "IMREAD_COLOR", "IMREAD_ANYDEPTH", "IMREAD_ANYCOLOR",
                 "IMREAD_IGNORE_ORIENTATION", "IMWRITE_JPEG_QUALITY", "IMWRITE_PNG_COMPRESSION", "IMWRITE_WEBP_QUALITY"]:
        assert getattr(imghist, name) == getattr(cv2, name), name


def test_imread_gives_cv2s_answer_for_every_flag(tmp_path):
    folder = str(tmp_path)
    paths = list(lossless_files(folder)) + jpeg_files(folder)
    Image.fromarray(np.dstack([images()["gray"], images()["gray"][::-1]]), "LA").save(os.path.join(folder, "la.png"))
    base = Image.fromarray(rgb(images()["odd"]))
    for o in (3, 6, 8):
        for ext in ("jpeg", "png", "webp", "tiff"):
            base.save(os.path.join(folder, f"orientation{o}.{ext}"), exif=pil_exif(o))
    paths += glob.glob(os.path.join(folder, "la.png")) + glob.glob(os.path.join(folder, "orientation*"))
    checked = 0
    for path in paths:
        for flags in IMREAD_FLAGS:
            expected = cv2.imread(path, flags)
            if expected is None:  # TGA: cv2 has no reader for it
                assert path.endswith(".tga")
                continue
            got = imghist.imread(path, flags)
            what = f"{os.path.basename(path)} flags {flags}"
            assert got is not None and got.dtype == expected.dtype and got.shape == expected.shape, what
            np.testing.assert_array_equal(got, expected, err_msg=what)
            checked += 1
    assert checked > 300
    with pytest.raises(imghist.UnsupportedError, match="IMREAD_REDUCED|unsupported flags"):
        imghist.imread(paths[0], cv2.IMREAD_REDUCED_GRAYSCALE_2)


def test_imwrite_writes_what_cv2_writes(tmp_path):
    for name in ["photo", "gray"]:
        img = images()[name]
        for params in ([], [cv2.IMWRITE_JPEG_QUALITY, 60]):
            a, b = str(tmp_path / "cv2.jpg"), str(tmp_path / "ours.jpg")
            cv2.imwrite(a, img, params)
            assert imghist.imwrite(b, img, params) is True
            # The same libjpeg-turbo settings as cv2 (quality 95 by default, 4:2:0): the same file.
            assert open(a, "rb").read() == open(b, "rb").read(), (name, params)
        for ext, params in [("png", []), ("png", [cv2.IMWRITE_PNG_COMPRESSION, 9]), ("tif", []), ("webp", []),
                            ("webp", [cv2.IMWRITE_WEBP_QUALITY, 80]), ("bmp", [])]:
            a, b = str(tmp_path / f"cv2.{ext}"), str(tmp_path / f"ours.{ext}")
            cv2.imwrite(a, img, params)
            imghist.imwrite(b, img, params)
            ours, theirs = cv2.imread(b, cv2.IMREAD_UNCHANGED), cv2.imread(a, cv2.IMREAD_UNCHANGED)
            if ext == "bmp" and img.ndim == 2:  # our BMP writer stores gray as 24-bit
                ours = ours[..., 0]
            np.testing.assert_array_equal(ours, theirs, err_msg=f"{name} {ext} {params}")
            if ext == "webp":
                assert open(b, "rb").read(16)[12:16] == (b"VP8 " if params else b"VP8L")
    img16 = images()["c16"]
    imghist.imwrite(str(tmp_path / "c16.png"), img16)
    np.testing.assert_array_equal(cv2.imread(str(tmp_path / "c16.png"), cv2.IMREAD_UNCHANGED), img16)
    assert no_temporaries(str(tmp_path))
