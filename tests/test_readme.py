"""The README's Python examples run as written (and the Dask one as a script)."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

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
    ns = {"__name__": "__main__"}          # as when the blocks are run as a script
    for code in blocks:
        if "import sympy" in code and importlib.util.find_spec("sympy") is None:
            continue
        if "dask" in code and importlib.util.find_spec("distributed") is None:
            continue
        exec(compile(code, str(README), "exec"), ns)
    assert ns["e"].max() < 1e-4
    assert ns["traj"].q.shape[1] in (2, 3)
    assert abs(ns["exact"].period - 1.8472390) < 1e-7


def test_readme_dask_block_runs_as_a_script(tmp_path):
    """The Dask example is self-contained and guarded by ``if __name__ == "__main__":``, so
    ``python script.py`` works although LocalCluster's worker processes import the script."""
    pytest.importorskip("distributed")
    blocks = [b for b in python_blocks() if "LocalCluster" in b]
    assert len(blocks) == 1
    code = blocks[0]
    assert 'if __name__ == "__main__":' in code
    script = tmp_path / "dask_sweep.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, SYMPLECTIC_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    drifts = eval(r.stdout.strip().splitlines()[-1], {"np": __import__("numpy")})
    assert len(drifts) == 4 and all(0 < float(d) < 1e-5 for d in drifts), r.stdout
