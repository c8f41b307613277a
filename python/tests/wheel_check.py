#!/usr/bin/env python3
"""The imghist package as a user gets it (a ctest test, label "package"):

  1. `python3 -m pip wheel --no-build-isolation --no-index --no-deps SOURCE` makes a wheel offline, the
     build saying what it does (its stage lines) and building the CPU-only module (cuda=OFF: the CUDA code
     is compiled by the project's own build; this checks the packaging) — or, with --cuda (a GPU host:
     scripts/python_gpu_check.sh), the CUDA module, whose use then includes device calls;
  2. the wheel holds the package, its stubs and py.typed, the extension and the library it links (libimghist), and
     nothing else (no CLI, tests or samples; the file layer, imghist_io, is linked into the extension);
  3. `python3 -m venv --system-site-packages` + `pip install` of the wheel works offline;
  4. from a directory outside the source tree, with neither PYTHONPATH nor LD_LIBRARY_PATH, the venv's
     Python imports imghist from the venv (the extension finds its libraries through RUNPATH $ORIGIN) and
     gets the project's version and correct results — image files (imghist.io, imread / imwrite) and
     imghist.dask.process_files included, unless --no-files (a host without OpenCV's C++ libraries); every
     library the extension needs is found (libimghist beside it, the others from the system).
Exit status 77 (skipped) when pip or venv is missing (Debian: python3-pip, python3-venv).
"""
import argparse
import os
import re
import shutil
import site
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

SKIP = 77


def run(cmd, env=None, cwd=None):
    t0 = time.monotonic()
    proc = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    elapsed = time.monotonic() - t0
    if proc.returncode != 0:
        print(proc.stdout)
        raise SystemExit(f"FAILED ({proc.returncode}): {' '.join(str(c) for c in cmd)}")
    return proc.stdout, elapsed


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH", "PYTHONHOME")}
    env.update(extra)
    return env


USE = r"""
import os, sys
import numpy as np
import imghist
from imghist import exposure, filters
here = os.path.realpath(imghist.__file__)
assert here.startswith(os.path.realpath(sys.prefix)), f"imghist imported from {here}, not the venv {sys.prefix}"
img = (np.arange(64 * 48) % 251).astype(np.uint8).reshape(64, 48)
assert (imghist.hist(img) == np.bincount(img.ravel(), minlength=256)).all()
eq = exposure.equalize_hist(img)
assert eq.dtype == np.float64 and 0 < eq.min() and eq.max() == 1.0
assert filters.threshold_otsu(img) == filters.threshold_otsu(hist=np.bincount(img.ravel()))
if os.environ.get("WHEEL_CHECK_FILES") == "1":
    import tempfile
    assert imghist._imghist.has_files, "the wheel has no image files"
    with tempfile.TemporaryDirectory() as d:
        rgb = np.dstack([img, img[::-1], img[:, ::-1]])
        meta = imghist.io.Metadata(icc=b"icc" * 50, quality=77)
        imghist.io.write(os.path.join(d, "a.jpg"), rgb, meta)
        back, m = imghist.io.read(os.path.join(d, "a.jpg"))
        assert back.shape == rgb.shape and m.icc == meta.icc and m.quality == 77, m
        assert imghist.imwrite(os.path.join(d, "b.png"), rgb[..., ::-1])
        assert (imghist.imread(os.path.join(d, "b.png")) == rgb[..., ::-1]).all()
        try:
            import dask  # noqa: F401
        except ImportError:
            dask = None
        if dask is not None:
            import imghist.dask
            # A gray PNG: the CLI's equalize of it is equalizeHist's (exactness is test_process_files.py's).
            assert imghist.imwrite(os.path.join(d, "g.png"), img)
            r = imghist.dask.process_files("equalize", os.path.join(d, "g.png"), os.path.join(d, "out"))
            assert [x.status for x in r] == ["done"], r
            assert (imghist.imread(r[0].output, imghist.IMREAD_UNCHANGED) == imghist.equalizeHist(img)).all()
    print("files checked")
assert (imghist.batch.equalizeHist(np.stack([img, img[::-1]]))[1] == imghist.equalizeHist(img[::-1])).all()
if os.environ.get("WHEEL_CHECK_CUDA") == "1":
    assert imghist.built_with_cuda(), "the CUDA wheel has no CUDA backend"
    if imghist.cuda_available():
        assert (imghist.hist(img, backend="cuda") == np.bincount(img.ravel(), minlength=256)).all()
        try:
            import cupy
        except ImportError:
            cupy = None
        if cupy is not None:
            d = cupy.asarray(img)
            assert (imghist.equalizeHist(d).get() == imghist.equalizeHist(img, backend="cpu")).all()
            assert (exposure.equalize_hist(d).get() == eq).all()
        print("device", imghist._imghist.cuda_device_name(0))
print("version", imghist.__version__)
print("dir", " ".join(dir(imghist)))
print("package", os.path.dirname(here))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cuda", action="store_true", help="build the CUDA module (IMGHIST_CUDA_ARCHS, default "
                                                       "native) and use the device when there is one")
    ap.add_argument("--no-files", action="store_true", help="build the module without image files (files=OFF: "
                                                           "a host without OpenCV's C++ libraries)")
    args = ap.parse_args()
    source, work = Path(args.source).resolve(), Path(args.work).resolve()
    for module in ("pip", "venv"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode != 0:
            print(f"skipped: {sys.executable} has no {module} (Debian: python3-{module})")
            return SKIP
    version = re.search(r"project\(imghist VERSION ([0-9.]+)", (source / "CMakeLists.txt").read_text()).group(1)
    dist, venv = work / "dist", work / "venv"
    for d in (dist, venv):
        shutil.rmtree(d, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)

    # 1. The wheel.
    # The settings as pip's --config-settings (the environment variables are the other way).
    settings = ["cuda=ON", f"cuda-archs={os.environ.get('IMGHIST_CUDA_ARCHS', 'native')}"] if args.cuda else ["cuda=OFF"]
    settings.append("files=OFF" if args.no_files else "files=ON")
    settings.append(f"build-dir={work / ('cmake-cuda' if args.cuda else 'cmake')}")
    out, t_wheel = run([sys.executable, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-index",
                        "--no-deps"] + [a for kv in settings for a in ("--config-settings", kv)] + ["-w", dist, source],
                       env=clean_env())
    if args.cuda:
        assert "imghist build: building the imghist module with the CUDA backend" in out, out[-3000:]
    else:
        assert "imghist build: building the imghist module with the CPU backend" in out, out[-3000:]
        assert "Why: CPU-only build (IMGHIST_WITH_CUDA=OFF)" in out, out[-3000:]
    wheels = list(dist.glob(f"imghist-{version}-*.whl"))
    assert len(wheels) == 1, f"expected one imghist-{version} wheel in {dist}: {os.listdir(dist)}"
    wheel = wheels[0]

    # 2. Its contents.
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {n for n in names if n.startswith("imghist/")}
    expected_py = {f"imghist/{f}" for f in os.listdir(source / "python" / "imghist")
                   if f.endswith((".py", ".pyi")) or f == "py.typed"}
    assert expected_py <= package, f"missing from the wheel: {sorted(expected_py - package)}"
    binaries = package - expected_py
    assert any(re.fullmatch(r"imghist/_imghist\..*\.so", b) for b in binaries), binaries
    assert any(re.fullmatch(r"imghist/libimghist\.so\.[0-9.]+", b) for b in binaries), binaries
    assert len(binaries) == 2, f"unexpected files in the wheel: {sorted(binaries)}"
    others = names - package
    assert all(n.startswith(f"imghist-{version}.dist-info/") for n in others), sorted(others)

    # 3. A fresh venv, the wheel installed into it.
    _, t_venv = run([sys.executable, "-m", "venv", "--system-site-packages", venv], env=clean_env())
    vpython = venv / "bin" / "python"
    if sys.prefix != sys.base_prefix:
        # This Python is a venv itself: --system-site-packages gives the base interpreter's packages, not the
        # ones installed here (NumPy, CuPy, ...); a .pth file adds them after the new venv's own.
        out, _ = run([vpython, "-c", "import site; print(site.getsitepackages()[0])"], env=clean_env())
        (Path(out.strip()) / "_wheel_check_parent.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    _, t_install = run([vpython, "-m", "pip", "install", "--no-index", "--no-deps", wheel], env=clean_env())

    # 4. Used from outside the source tree, without PYTHONPATH or LD_LIBRARY_PATH.
    with tempfile.TemporaryDirectory() as elsewhere:
        out, _ = run([vpython, "-c", USE], env=clean_env(WHEEL_CHECK_CUDA="1" if args.cuda else "0",
                                                         WHEEL_CHECK_FILES="0" if args.no_files else "1"), cwd=elsewhere)
    fields = dict(line.split(" ", 1) for line in out.strip().splitlines() if " " in line)
    assert args.no_files or "files checked" in out, out
    if "device" in fields:
        print(f"device calls checked on {fields['device']}")
    assert fields["version"] == version, (fields["version"], version)
    assert "np" not in fields["dir"].split() and "sys" not in fields["dir"].split(), fields["dir"]
    installed = Path(fields["package"])
    for f in ("py.typed", "__init__.pyi", "exposure.pyi", "filters.pyi", "dask.pyi"):
        assert (installed / f).is_file(), f"{f} is not installed"
    readelf = shutil.which("readelf")
    ext = next(installed.glob("_imghist*.so"))
    if readelf:
        dyn, _ = run([readelf, "-d", ext])
        assert re.search(r"R(UN)?PATH.*\[\$ORIGIN\]", dyn), dyn
        assert "imghist_io" not in dyn, "imghist_io must be linked in statically"
    ldd = shutil.which("ldd")
    if ldd:
        deps, _ = run([ldd, ext], env=clean_env())
        assert "not found" not in deps, deps
        ours = [line for line in deps.splitlines() if str(installed) in line]
        assert len(ours) == 1 and "libimghist.so" in ours[0], deps
    print(f"wheel {wheel.name} ({wheel.stat().st_size // 1024} KiB): built in {t_wheel:.1f} s; venv created in "
          f"{t_venv:.1f} s; installed in {t_install:.1f} s; imported and used from {installed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
