"""The README's Python examples, run as written: every ```python block of its "## Python" section is executed
(in a temporary folder holding samples/images, with the names a block takes from its prose bound beforehand:
`video`, `a`, `b`, `c`, a photo.jpg), and what its comments claim is checked against cv2, scikit-image and the
command-line tool. A block this file does not know fails the test, so that a new example gets its checks."""
import os
import re
import subprocess

import numpy as np
import pytest

import imghist
from conftest import SAMPLES_DIR

cv2 = pytest.importorskip("cv2", reason="cv2 (the reference) is not installed (python3-opencv)")

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")


def python_blocks():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    section = re.search(r"^## Python\n(.*?)^## ", text, re.S | re.M)
    assert section, "README.md has no '## Python' section"
    return re.findall(r"^```python\n(.*?)^```", section.group(1), re.S | re.M)


# How a block is recognised: a line only it has.
KINDS = {
    "single": "imghist.calcHist(",
    "batch": "imghist.batch.equalizeHist(",
    "files": "imghist.io.read(",
    "skimage": "from imghist import exposure, filters",
    "local_cluster": "LocalCluster(",
    "clusters": "SLURMCluster(",
}


def block(kind):
    found = [b for b in python_blocks() if KINDS[kind] in b]
    assert len(found) == 1, f"README's Python section should have one block with {KINDS[kind]!r}: {len(found)}"
    return found[0]


def test_every_block_is_checked():
    for b in python_blocks():
        kinds = [k for k, marker in KINDS.items() if marker in b]
        assert len(kinds) == 1, f"a README example this test does not check (or checks twice):\n{b}"


def device_available():
    try:
        import cupy
        return imghist.cuda_available() and cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.fixture
def in_folder(tmp_path, monkeypatch):
    """A working folder whose samples/images are the shipped photographs, as in the source tree."""
    os.makedirs(tmp_path / "samples")
    os.symlink(os.path.abspath(SAMPLES_DIR), tmp_path / "samples" / "images")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(code, **names):
    ns = dict(names)
    exec(compile(code, "README.md", "exec"), ns)
    return ns


def test_single_image_functions(in_folder):
    from skimage import exposure, filters
    code = block("single")
    # The block ends on CuPy: run that part only where there is a device.
    host_part, device_part = code.split("import cupy", 1)
    ns = run(host_part)
    img, bgr, ref = ns["img"], ns["bgr"], ns["ref"]
    assert img is not None and bgr is not None and ref is not None
    assert np.array_equal(ns["counts"], np.bincount(img.ravel(), minlength=256))
    # cv2 4.x's shape, (256, 1); OpenCV 5 returns (256,).
    assert ns["h"].shape == (256, 1)
    assert np.array_equal(ns["h"].ravel(), cv2.calcHist([img], [0], None, [256], [0, 256]).ravel())
    assert np.array_equal(ns["eq"], cv2.equalizeHist(img))
    ycrcb = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    ycrcb[:, :, 0] = cv2.equalizeHist(np.ascontiguousarray(ycrcb[:, :, 0]))
    assert np.array_equal(ns["eqc"], cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2BGR))
    t, bw = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    assert ns["t"] == t and np.array_equal(ns["bw"], bw)
    assert np.array_equal(ns["out"], cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8)).apply(img))
    assert np.array_equal(ns["st"], exposure.rescale_intensity(img, in_range=tuple(np.percentile(img, (2, 99)))))
    assert np.array_equal(ns["m"], np.round(exposure.match_histograms(img, ref)).astype(np.uint8))
    expected = [int(v) for v in filters.threshold_multiotsu(img, 4)]
    assert list(ns["thresholds"]) == expected
    # The label image: the classes' indices spread over the dtype's range (0, 85, 170, 255 for 4 classes).
    scaled = np.floor(np.digitize(img, expected) * 255 / 3 + 0.5).astype(np.uint8)
    assert np.array_equal(ns["labels"], scaled)
    if not device_available():
        pytest.skip("the host part checked; its CuPy lines need CuPy and a CUDA device")
    ns = run("import cupy" + device_part, imghist=imghist, img=img)
    assert np.array_equal(ns["g"].get(), cv2.equalizeHist(img))


def test_batches():
    rng = np.random.default_rng(33)
    video = rng.integers(0, 256, (256, 480, 640), dtype=np.uint8)
    video[::2] //= 3  # frames of two different histograms
    a, b, c = (rng.integers(0, 256, shape, dtype=np.uint8) for shape in ((37, 91), (480, 640), (8, 8)))
    code = block("batch")
    if device_available():
        ns = run("import imghist, cupy\n" + code, video=video, a=a, b=b, c=c)
        eq, t, bw = ns["eq"].get(), ns["t"].get(), ns["bw"].get()
        assert ns["t"].dtype == np.int32 and ns["t"].shape == (256,)
    else:
        # The same calls on NumPy arrays where there is no device (the batch functions take both).
        class HostArrays:
            asarray = staticmethod(np.asarray)
        ns = run("import imghist\n" + code, cupy=HostArrays, video=video, a=a, b=b, c=c)
        eq, t, bw = ns["eq"], ns["t"], ns["bw"]
    for i in range(0, 256, 17):
        assert np.array_equal(eq[i], cv2.equalizeHist(video[i])), i
        level, expected = cv2.threshold(video[i], 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
        assert t[i] == level and np.array_equal(bw[i], expected), i
    clahe = cv2.createCLAHE(2.0, (8, 8))
    assert isinstance(ns["outs"], list) and len(ns["outs"]) == 3
    for got, image in zip(ns["outs"], (a, b, c)):
        assert np.array_equal(got, clahe.apply(image))


def test_image_files(in_folder):
    if not imghist._imghist.has_files:
        pytest.skip("this build of imghist has no image files (IMGHIST_PYTHON_FILES=OFF)")
    Image = pytest.importorskip("PIL.Image", reason="PIL (used to make the photo) is not installed (python3-pil)")
    # photo.jpg: a JPEG with an ICC profile and an EXIF orientation, as cameras write them.
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.open(os.path.join(SAMPLES_DIR, "coffee.png")).convert("RGB").save(
        "photo.jpg", quality=85, exif=exif.tobytes(), icc_profile=b"profile" * 20)
    ns = run(block("files"), imghist=imghist)
    upright = np.asarray(Image.open("photo.jpg").convert("RGB").transpose(Image.ROTATE_270))
    assert ns["img"].shape == upright.shape  # auto_orient turned it upright
    meta = ns["meta"]
    assert meta.icc == b"profile" * 20 and meta.quality == 85 and meta.orientation == 1
    back, back_meta = imghist.io.read("photo-eq.jpg")
    assert back.shape == upright.shape and back_meta.icc == meta.icc and back_meta.quality == 85
    assert np.array_equal(ns["bgr"], cv2.imread("photo.jpg"))


def test_scikit_image_names():
    from skimage import exposure, filters
    img = cv2.imread(os.path.join(SAMPLES_DIR, "camera.png"), cv2.IMREAD_GRAYSCALE)
    ns = run(block("skimage"), np=np, img=img)
    p2, p98 = np.percentile(img, (2, 98))
    assert np.array_equal(ns["stretched"], exposure.rescale_intensity(img, in_range=(p2, p98)))
    assert ns["eq"].dtype == np.float64 and np.array_equal(ns["eq"], exposure.equalize_hist(img))
    assert ns["t"] == filters.threshold_otsu(img)


def test_process_files_on_a_local_cluster(in_folder):
    pytest.importorskip("distributed", reason="dask.distributed is not installed (python3-distributed)")
    cli = os.environ.get("IMGHIST_CLI", "")
    if not imghist._imghist.has_files:
        pytest.skip("this build of imghist has no image files (IMGHIST_PYTHON_FILES=OFF)")
    if not os.access(cli, os.X_OK):
        pytest.skip("the imghist command-line tool (the reference) is not built: IMGHIST_CLI is unset")
    ns = run(block("local_cluster"))
    results = ns["results"]
    pngs = sorted(f for f in os.listdir("samples/images") if f.endswith(".png"))
    assert sorted(os.path.basename(r.file) for r in results) == pngs
    assert all(r.status == "done" for r in results), results
    subprocess.run([cli, "equalize", "-q", "--threads", "1", "samples/images", "cli-eq/"], check=True)
    for r in results:
        with open(r.output, "rb") as got, open(os.path.join("cli-eq", os.path.basename(r.output)), "rb") as want:
            assert got.read() == want.read(), r.output


def test_cluster_examples_compile():
    # Slurm and a Kubernetes scheduler are not here: the block is compiled, and its calls are the local block's.
    code = block("clusters")
    compile(code, "README.md", "exec")
    assert code.count("imghist.dask.process_files(") == 2
