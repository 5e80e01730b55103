"""The README's Python examples run as written."""
import importlib.util
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def python_blocks():
    text = README.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_examples():
    assert len(python_blocks()) >= 2


def test_readme_examples_run(monkeypatch, tmp_path):
    """Every Python block runs, in order, in one namespace -- except the API overview,
    which lists signatures with placeholder arguments."""
    pytest.importorskip("scipy")
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path / "cache"))
    blocks = [b for b in python_blocks() if "sp.methods(details=False)" not in b]
    assert len(blocks) == len(python_blocks()) - 1
    ns = {}
    for code in blocks:
        if "import sympy" in code and importlib.util.find_spec("sympy") is None:
            continue
        if "dask" in code and importlib.util.find_spec("distributed") is None:
            continue
        exec(compile(code, str(README), "exec"), ns)
    assert ns["e"].max() < 1e-4
    assert ns["traj"].q.shape[1] in (2, 3)
    assert abs(ns["exact"].period - 1.8472390) < 1e-7
