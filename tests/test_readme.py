"""The README's Python examples run as written (and the Dask one as a script); its orders of the
spacing of events hold."""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import symplectic as sp

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


def _spacing_order(method, hs):
    """Fitted order of max |spacing of successive downward crossings of q = 0 − T| on the pendulum
    at 3 rad (period T), four crossings, at the steps hs."""
    from symplectic import exact

    pend = sp.systems.pendulum()
    T = exact.pendulum_period(3.0, 0.0)

    def crossing(t, q, p):
        return q[0]
    crossing.direction = -1
    errs = []
    for h in hs(T):
        te = sp.integrate(pend, [3.0], [0.0], h, int(4.2 * T / h) + 1, events=crossing,
                          method=method).t_events[0]
        assert len(te) == 4
        errs.append(np.max(np.abs(np.diff(te) - T)))
    return np.polyfit(np.log(hs(T)), np.log(errs), 1)[0]


@pytest.mark.parametrize("method, order, Ns", [("midpoint", 2, (160, 320, 640, 1280)),
                                               ("simpson", 4, (40, 80, 160, 320)),
                                               ("lobatto4", 5, (40, 80, 160, 320))])
def test_readme_event_spacing_orders(method, order, Ns):
    """The README's orders of the spacing of events ("Time spans, output times, events,
    progress"): the dense output's order at a step that does not divide the period, and for
    lobatto4 its node order, 6, only at one that does."""
    pytest.importorskip("scipy")
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert ("converges with order 2 for the midpoint rule, 4 for Simpson and 5 for `lobatto4` "
            "(`tests/test_readme.py` measures them at h = T/(N + 0.37), N = 40 … 320 for "
            "`lobatto4`") in text
    assert "and `lobatto4`'s spacing converges with the order of its nodes, 6." in text
    assert abs(_spacing_order(method, lambda T: [T / (N + 0.37) for N in Ns]) - order) < 0.1
    if method == "lobatto4":
        assert abs(_spacing_order(method, lambda T: [T / N for N in Ns[:3]]) - 6) < 0.1
