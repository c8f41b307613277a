"""imghist.dask.process_files on a dask.distributed LocalCluster (worker processes on this machine, loopback only):
its outputs are the command-line tool's, byte for byte, for every image command and the options that change
outputs; failures are per file; reruns resume; and a worker killed in the middle of a run (SIGKILL, its temporary
files left behind) loses nothing: every output is there, whole, and no temporary remains."""
import os
import re
import signal
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import imghist
from conftest import SAMPLES_DIR

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (python3-distributed)")
PIL = pytest.importorskip("PIL", reason="PIL (used to make the test files) is not installed (python3-pil)")
from PIL import Image  # noqa: E402

import imghist.dask as idask  # noqa: E402

CLI = os.environ.get("IMGHIST_CLI", "")
pytestmark = [
    pytest.mark.skipif(not imghist._imghist.has_files,
                       reason="this build of imghist has no image files (IMGHIST_PYTHON_FILES=OFF)"),
    pytest.mark.skipif(not os.access(CLI, os.X_OK),
                       reason="the imghist command-line tool (the reference) is not built: IMGHIST_CLI is unset"),
]


def make_inputs(folder):
    """A folder of the kinds of file the CLI treats differently: PNG photographs, a JPEG with EXIF orientation and
    an ICC profile (the planar JPEG path), a lossy WebP, a 16-bit TIFF, a gray PNG in a sub-folder, a broken PNG."""
    os.makedirs(os.path.join(folder, "sub"))
    astronaut = Image.open(os.path.join(SAMPLES_DIR, "astronaut.png")).convert("RGB")
    camera = Image.open(os.path.join(SAMPLES_DIR, "camera.png")).convert("L")
    exif = Image.Exif()
    exif[271] = "imghist-test"
    exif[0x0112] = 6
    icc = Image.open(os.path.join(SAMPLES_DIR, "astronaut.png")).info.get("icc_profile")
    astronaut.save(os.path.join(folder, "photo.jpg"), quality=83, exif=exif.tobytes(), icc_profile=icc)
    astronaut.crop((0, 0, 301, 207)).save(os.path.join(folder, "lossy.webp"), quality=71)
    Image.open(os.path.join(SAMPLES_DIR, "coffee.png")).save(os.path.join(folder, "coffee.png"))
    camera.save(os.path.join(folder, "sub", "camera.png"))
    wide = (np.asarray(camera).astype(np.uint16) * 257 + 128)[:300, :400]
    import cv2
    cv2.imwrite(os.path.join(folder, "sub", "deep.tif"), wide)
    with open(os.path.join(SAMPLES_DIR, "camera.png"), "rb") as f:
        data = f.read()
    with open(os.path.join(folder, "broken.png"), "wb") as f:
        f.write(data[: len(data) // 3])


def run_cli(args):
    """The CLI's run over the folder, one thread (process_files' default): (exit status, notes by input)."""
    p = subprocess.run([CLI] + args, capture_output=True, text=True)
    notes = {}
    for line in p.stdout.splitlines():
        m = re.match(r"(.*): ((?:threshold|thresholds): .*)$", line)
        if m:
            notes[m.group(1)] = m.group(2)
    return p.returncode, notes, p.stderr


def files_under(folder):
    out = {}
    for root, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, folder)] = f.read()
    return out


@pytest.fixture(scope="module")
def client():
    """Two single-threaded worker processes."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=40) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("pf") / "in")
    make_inputs(folder)
    return folder


# (operation, process_files options, the same as CLI arguments)
CASES = [
    ("equalize", {}, []),
    ("equalize", {"mode": "per-channel", "to": "png", "strip": True}, ["--mode", "per-channel", "--to", "png", "--strip"]),
    ("stretch", {"low": 1, "high": 0.5, "auto_orient": True, "quality": 88},
     ["--low", "1", "--high", "0.5", "--auto-orient", "--quality", "88"]),
    ("threshold", {"method": "otsu"}, ["--method", "otsu"]),
    ("threshold", {"method": "multiotsu", "classes": 4, "to": "tif"}, ["--method", "multiotsu", "--classes", "4", "--to", "tif"]),
    ("clahe", {"clip": 3.0, "tiles": (4, 6), "depth": 8}, ["--clip", "3.0", "--tiles", "4x6", "--depth", "8"]),
    ("match", {"reference": "REF"}, ["REF"]),
]


@pytest.mark.parametrize("operation,options,cli_args", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_outputs_are_the_clis_byte_for_byte(client, inputs, tmp_path, operation, options, cli_args):
    ref = os.path.join(SAMPLES_DIR, "astronaut.png")
    options = {k: (ref if v == "REF" else v) for k, v in options.items()}
    cli_args = [ref if a == "REF" else a for a in cli_args]
    out_cli, out_dask = str(tmp_path / "cli"), str(tmp_path / "dask")
    ref_args = cli_args[-1:] if operation == "match" else []
    status, notes, stderr = run_cli([operation] + [a for a in cli_args if a not in ref_args] + ["--threads", "1", "-r",
                                                                                                inputs] + ref_args + [out_cli + "/"])
    assert status == 1  # the broken file fails (and the 16-bit one where the operation refuses it)
    cli_failed = sorted(re.findall(r"^imghist: (/[^:]*): ", stderr, re.M))
    assert os.path.join(inputs, "broken.png") in cli_failed and len(cli_failed) <= 2
    results = idask.process_files(operation, inputs, out_dask, client=client, recursive=True, **options)
    written = files_under(out_cli)
    assert len(written) == 6 - len(cli_failed)
    assert files_under(out_dask) == written
    assert [os.path.relpath(r.file, inputs) for r in results] == [
        "broken.png", "coffee.png", "lossy.webp", "photo.jpg", "sub/camera.png", "sub/deep.tif"]
    assert sorted(r.file for r in results if r.status == "failed") == cli_failed
    for r in results:
        if r.status == "failed":
            assert r.error.startswith(r.file + ": ") and f"imghist: {r.error}" in stderr, r
        else:
            assert r.status == "done" and r.error is None and os.path.relpath(r.output, out_dask) in written, r
            assert r.note == notes.get(r.file), r
            assert bool(r.note) == (operation == "threshold"), r


def test_resumes_with_skip_existing_and_refuses_what_the_cli_refuses(client, inputs, tmp_path):
    out = str(tmp_path / "out")
    first = idask.process_files("equalize", inputs, out, client=client, recursive=True)
    assert [r.status for r in first].count("done") == 5
    again = idask.process_files("equalize", inputs, out, client=client, recursive=True, skip_existing=True)
    assert {os.path.basename(r.file): r.status for r in again} == {
        "broken.png": "failed", "coffee.png": "skipped", "lossy.webp": "skipped", "photo.jpg": "skipped",
        "camera.png": "skipped", "deep.tif": "skipped"}
    os.remove(os.path.join(out, "coffee.png"))
    again = idask.process_files("equalize", inputs, out, client=client, recursive=True, skip_existing=True)
    assert [r.status for r in again if r.status == "done"] == ["done"]
    # Two inputs with one output: refused before anything is written (the CLI's check).
    other = str(tmp_path / "other")
    os.makedirs(other)
    with open(os.path.join(inputs, "coffee.png"), "rb") as f, open(os.path.join(other, "coffee.png"), "wb") as g:
        g.write(f.read())
    with pytest.raises(imghist.InvalidArgumentError):
        idask.process_files("equalize", [inputs, other], str(tmp_path / "clash"), client=client)
    assert not os.listdir(str(tmp_path / "clash"))
    with pytest.raises(imghist.InvalidArgumentError, match="--no-such-option"):
        idask.process_files("equalize", inputs, out, client=client, no_such_option=3)
    with pytest.raises(TypeError, match="shard"):
        idask.process_files("equalize", inputs, out, client=client, shard="1/2")
    with pytest.raises(TypeError, match="reference"):
        idask.process_files("match", inputs, out, client=client)
    with pytest.raises(imghist.InvalidArgumentError, match="unknown operation"):
        idask.process_files("blur", inputs, out, client=client)


@pytest.mark.parametrize("operation,options,message", [
    ("equalize", {"quality": 101}, "quality=101: expected an integer from 1 to 100"),
    ("equalize", {"mode": "lum"}, "mode='lum': expected one of 'luma', 'per-channel'"),
    ("equalize", {"strip": 1}, "strip=1: expected True or False"),
    ("stretch", {"low": 60, "high": 50}, "low= + high= must not exceed 100 (percent)"),
    ("stretch", {"normalize": True, "auto_level": True}, "normalize=True and auto_level=True exclude each other"),
    ("stretch", {"auto_level": True, "low": 3}, "auto_level=True sets low and high"),
    ("threshold", {"method": "value"}, "method='value' needs value="),
    ("threshold", {"classes": 4}, "classes= is only used with method='multiotsu'"),
    ("threshold", {"method": "multiotsu", "invert": True}, "value= and invert=True do not apply to method='multiotsu'"),
    ("threshold", {"value": 3}, "value= is only used with method='value'"),
    ("clahe", {"tiles": "8x8"}, "tiles='8x8': expected a pair of integers"),
    ("clahe", {"mode": "luma"}, "'clahe' has no option mode= (--mode)"),
])
def test_options_are_checked_by_name_before_anything_runs(inputs, tmp_path, operation, options, message):
    out = str(tmp_path / "out")
    with pytest.raises(imghist.InvalidArgumentError, match=re.escape(message)):
        idask.process_files(operation, inputs, out, **options)
    assert not os.listdir(out)


def test_without_a_cluster_the_local_scheduler_runs_the_files(inputs, tmp_path):
    code = ("import sys, imghist.dask as d; r = d.process_files('equalize', sys.argv[1], sys.argv[2], recursive=True); "
            "print(sorted((x.status for x in r)))")
    p = subprocess.run([sys.executable, "-c", code, inputs, str(tmp_path / "local")], capture_output=True, text=True,
                       env=dict(os.environ))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "['done', 'done', 'done', 'done', 'done', 'failed']"
    status, _, _ = run_cli(["equalize", "--threads", "1", "-r", inputs, str(tmp_path / "cli") + "/"])
    assert files_under(str(tmp_path / "local")) == files_under(str(tmp_path / "cli"))


# ---- a worker killed in the middle of a run ------------------------------------------------------------------------

def killer_plugin(marker, after):
    """A worker plugin that, on the worker that starts the `after`-th task of a run first, kills its own process
    with SIGKILL 30 ms into that task (while it decodes, processes or writes) — once per cluster: the marker
    file records the pid. Defined in a function so that it travels by value to the workers."""

    class Killer(distributed.WorkerPlugin):
        def setup(self, worker):
            self.started = 0

        def transition(self, key, start, finish, **kwargs):
            if finish != "executing" or not str(key).startswith("imghist-process_files"):
                return
            self.started += 1
            if self.started < after:
                return
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            threading.Timer(0.03, os.kill, (os.getpid(), signal.SIGKILL)).start()

    return Killer()


def fnv1a32(text):
    h = 2166136261
    for b in text.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return f"{h:08x}"


def test_a_worker_killed_mid_run_loses_nothing(tmp_path):
    folder = str(tmp_path / "in")
    os.makedirs(folder)
    photo = np.asarray(Image.open(os.path.join(SAMPLES_DIR, "astronaut.png")).convert("RGB"))
    big = np.tile(photo, (2, 3, 1))  # 1024 x 1536: a task long enough to be killed inside
    for i in range(12):
        Image.fromarray(np.roll(big, 37 * i, axis=1)).save(os.path.join(folder, f"f{i:02d}.png"), compress_level=1)
    out = str(tmp_path / "out")
    os.makedirs(out)
    # A temporary that a writer killed earlier left (its process is gone): removed by the run too.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = os.path.join(out, f".imghist-{fnv1a32(socket.gethostname())}-{dead.stdout.strip()}-0.tmp")
    with open(stale, "wb") as f:
        f.write(b"half a file")
    marker = str(tmp_path / "killed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, silence_logs=50) as cluster:
        with distributed.Client(cluster) as c:
            c.register_worker_plugin(killer_plugin(marker, after=3), name="killer")
            pids = set(c.run(os.getpid).values())
            results = idask.process_files("equalize", folder, out, client=c, mode="per-channel")
            after = set(c.run(os.getpid).values())
    with open(marker) as f:
        killed = int(f.read())
    assert killed in pids and killed not in after  # a worker died in the run, and the nanny replaced it
    assert [r.status for r in results] == ["done"] * 12, [r for r in results if r.status != "done"]
    status, _, _ = run_cli(["equalize", "--mode", "per-channel", "--threads", "1", folder, str(tmp_path / "cli") + "/"])
    assert status == 0
    assert files_under(out) == files_under(str(tmp_path / "cli"))  # all there, whole, and nothing else
