"""The package as users and type checkers see it: dir() shows the API and nothing else, the .pyi stubs name
exactly that API with the runtime's parameters, __version__ is the project's, py.typed is present."""
import ast
import importlib
import importlib.util
import inspect
import os
import re

import pytest

import imghist

MODULES = ["imghist", "imghist.exposure", "imghist.filters", "imghist.dask", "imghist.batch", "imghist.io"]
# Namespaces imported on first use that need an optional package (their own tests skip without it).
OPTIONAL = {"dask": "dask"}


def load(name):
    if name == "imghist.dask":
        pytest.importorskip("dask.array", reason="dask is not installed (Debian: python3-dask)")
    return importlib.import_module(name)


def stub_path(module):
    base = os.path.dirname(module.__file__)
    leaf = "__init__" if module.__name__ == "imghist" else module.__name__.rsplit(".", 1)[1]
    return os.path.join(base, leaf + ".pyi")


def stub_names(tree):
    """Public names a stub declares at module level: functions, classes, annotated names, re-exported
    submodules (`from . import x as x`)."""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if alias.asname == alias.name:
                    names[alias.name] = node
    return {n: v for n, v in names.items() if not n.startswith("_") or n == "__version__"}


def stub_parameters(fn):
    a = fn.args
    params = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, default in zip(positional, defaults):
        params.append((arg.arg, "positional", None if default is None else ast.literal_eval(default)))
    for arg, default in zip(a.kwonlyargs, a.kw_defaults):
        params.append((arg.arg, "keyword", None if default is None else ast.literal_eval(default)))
    if a.kwarg is not None:
        params.append((a.kwarg.arg, "var-keyword", None))
    return [p for p in params if p[0] != "self"]


def runtime_parameters(obj):
    params = []
    for p in inspect.signature(obj).parameters.values():
        kind = {p.KEYWORD_ONLY: "keyword", p.VAR_KEYWORD: "var-keyword"}.get(p.kind, "positional")
        default = None if p.default is p.empty else p.default
        params.append((p.name, kind, default))
    return [p for p in params if p[0] != "self"]


@pytest.mark.parametrize("name", MODULES)
def test_dir_shows_the_api_and_the_stub_names_exactly_it(name):
    module = load(name)
    with open(stub_path(module)) as f:
        declared = stub_names(ast.parse(f.read()))
    public = set(dir(module))
    assert public == set(declared), (f"{name}: only in dir(): {sorted(public - set(declared))}; only in the stub: "
                                     f"{sorted(set(declared) - public)}")
    for hidden in ["np", "sys", "numpy", "_core", "_imghist", "_errors", "_arrays", "_skimage", "_levels", "da"]:
        assert hidden not in public, f"{name} shows {hidden}"
        for attr in public:
            if attr not in OPTIONAL or importlib.util.find_spec(OPTIONAL[attr]) is not None:
                assert getattr(module, attr) is not None


@pytest.mark.parametrize("name", MODULES)
def test_stubs_have_the_runtime_parameters(name):
    module = load(name)
    with open(stub_path(module)) as f:
        declared = stub_names(ast.parse(f.read()))
    checked = 0
    for attr, node in declared.items():
        if attr in OPTIONAL and importlib.util.find_spec(OPTIONAL[attr]) is None:
            continue  # imported on first use, and needs a package this Python lacks
        obj = getattr(module, attr)
        nodes = [(attr, node, obj)]
        if isinstance(node, ast.ClassDef):
            nodes = [(f"{attr}.{m.name}", m, getattr(obj, m.name)) for m in node.body
                     if isinstance(m, ast.FunctionDef) and (not m.name.startswith("_") or m.name == "__init__")
                     and inspect.isfunction(getattr(obj, m.name, None))]
        for label, fn, runtime in nodes:
            if not isinstance(fn, ast.FunctionDef) or not inspect.isfunction(runtime):
                continue  # compiled functions and properties: no Python signature to compare
            assert stub_parameters(fn) == runtime_parameters(runtime), label
            checked += 1
    assert checked >= 2  # imghist.io has two functions


def test_version_is_the_projects():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        version = re.search(r"project\(imghist VERSION ([0-9.]+)", f.read()).group(1)
    assert imghist.__version__ == version


def test_the_package_is_typed():
    assert os.path.isfile(os.path.join(os.path.dirname(imghist.__file__), "py.typed"))


def test_dask_is_imported_when_first_used():
    import subprocess
    import sys
    code = "import sys, imghist; assert 'dask' not in sys.modules; print('dask' in dir(imghist))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
