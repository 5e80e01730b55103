"""The Python code of the README and of the documentation pages runs as written.

Every ```python block of each page runs, in the page's order, in one namespace per page (as a
reader pasting the page into one session would run it) -- except the API overview of
docs/guide/api.md, which lists signatures with placeholder arguments.  The Dask example of
docs/performance.md also runs as a script.  After each page, a few of the values it computes
are checked against what its text says.  The orders of the spacing of events that
docs/guide/time.md states are measured here too.
"""
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import symplectic as sp

ROOT = pathlib.Path(__file__).resolve().parents[2]
API_OVERVIEW = "sp.methods(details=False)"          # the one block that is not run


def _fore_mass_difference(ns):
    """robots.md's d q(1 s) / d mass[2] against central differences of the arm read from
    its URDF with the forearm's mass 1 +- 1e-5 kg, at the same (q0, p0): the relative gap."""
    arm, q0, v0, e = ns["damped"], ns["q0"], ns["v0"], 1e-5
    p0 = arm.mass(q0) @ np.asarray(v0)
    assert ns["ARM"].count('<mass value="1.0"/>') == 1
    ends = [sp.integrate(ns["multibody"].from_urdf(
        ns["ARM"].replace('<mass value="1.0"/>', f'<mass value="{1.0 + s * e!r}"/>'),
        joint_damping=True), q0, p0, 0.01, 100, method="simpson").q[-1] for s in (1, -1)]
    fd = (ends[0] - ends[1]) / (2 * e)
    exact = ns["sens"].param_tangent[-1, :3, 0]
    return np.abs(exact - fd).max() / np.abs(fd).max()


def _chain_end(lengths, q):
    """The end of a planar chain of rods at absolute angles q from the downward vertical, in
    the x-z plane (z up): (sum l sin q, 0, -sum l cos q)."""
    return np.array([np.sum(lengths * np.sin(q)), 0.0, -np.sum(lengths * np.cos(q))])


def _close(a, b, rel):
    return abs(a - b) <= rel * abs(b)


#: page -> the checks of its namespace after its blocks ran (each: description, predicate).
CHECKS = {
    "README.md": [
        ("the double pendulum's energy error stays below 1e-4", lambda ns: ns["e"].max() < 1e-4),
        ("the spherical pendulum ran 2000 steps in 2 coordinates",
         lambda ns: ns["traj"].q.shape == (2001, 2)),
    ],
    "docs/guide/sympy.md": [
        ("the cart-pole ran 3000 steps", lambda ns: ns["traj"].q.shape == (3001, 2)),
        ("with_params keeps the system's form", lambda ns: ns["heavier"].n == 2),
    ],
    "docs/guide/forces.md": [
        ("energy - work is conserved to the scheme's error",
         lambda ns: ns["bal"].max_error < 1e-6),
        ("inputs sampled at the force points are the callable's steps",
         lambda ns: np.abs(ns["sampled"].q - ns["called"].q).max() < 1e-12),
    ],
    "docs/guide/time.md": [
        ("t_span ends at 10 exactly with h = 0.01",
         lambda ns: ns["traj"].t[-1] == 10.0 and _close(ns["traj"].h, 0.01, 1e-12)),
        ("the crossings are one period (2.5712339 s) apart",
         lambda ns: np.allclose(np.diff(ns["traj"].t_events[0]), 2.5712339, atol=1e-6)),
        ("a terminal event ends the run (status 1)", lambda ns: ns["first"].status == 1),
        ("t_eval gives 101 states", lambda ns: ns["sampled"].q.shape == (101, 1)),
        ("store_every=100 keeps 10^4 + 1 states", lambda ns: ns["thin"].q.shape == (10001, 1)),
    ],
    "docs/guide/methods.md": [
        ("the chosen run meets 1e-10 over the whole 100 s",
         lambda ns: sp.analysis.energy_error_norm(ns["traj"]) <= 1e-10
         and _close(ns["traj"].t[-1], 100.0, 1e-12)),
        ("the choice is a symplectic method with its Newton mode",
         lambda ns: ns["choice"].method.startswith(("simpson", "lobatto"))
         and ns["choice"].newton in ("auto", "step")),
    ],
    "docs/guide/integrator.md": [
        ("the pieces end bitwise where one integrate call ends",
         lambda ns: np.array_equal(ns["whole"].q[-1], ns["q1"])),
        ("the run is at t = 5.01", lambda ns: _close(ns["it"].state.t, 5.01, 1e-12)),
        ("the PD loop's steps are bitwise one integrate with its inputs",
         lambda ns: np.array_equal(ns["replay"].q[-1], ns["loop"].q)),
        ("the PD loop steers toward q = 0.2",
         lambda ns: np.max(np.abs(ns["loop"].q - 0.2)) < np.max(np.abs(ns["replay"].q[0] - 0.2))),
    ],
    "docs/guide/sensitivity.md": [
        ("Phi is symplectic to rounding", lambda ns: ns["defect"] < 1e-13),
        ("one column carries Phi's first", lambda ns: np.allclose(ns["piece"].tangent[-1],
                                                                  ns["Phi"][:, :1])),
        ("the spectrum printed", lambda ns: np.allclose(np.round(ns["lam"], 3),
                                                        [1.481, 0.005, -0.006, -1.48])),
        ("one gradient row per force row", lambda ns: ns["grads"]["force"].shape == (500, 2)),
        ("the parameter tangent has one column per name",
         lambda ns: ns["pt"].param_tangent.shape == (501, 4, 2)),
    ],
    "docs/guide/control.md": [
        ("the oscillator's cost is within 1e-5 of J* (Simpson, 8 intervals)",
         lambda ns: abs(ns["sol"].cost - 0.5110329945154145) < 1e-5),
        ("the costates give u at the nodes to 1e-4",
         lambda ns: np.abs(ns["u_nodes"] - (1.146229266058858 * np.cos(ns["sol"].t)
                                            - 0.04853415038874672 * np.sin(ns["sol"].t))
                           ).max() < 1e-4),
        ("replayed, the end is met to Newton's tolerance", lambda ns: ns["sol"].own_scheme_miss() < 1e-10),
        ("the double integrator's minimum time is 2 s", lambda ns: abs(ns["fastest"].duration - 2)
         < 1e-10),
        ("Bryson-Denham: J = 4 and q <= 1/9 (junctions on nodes)",
         lambda ns: abs(ns["bd"].cost - 4.0) < 1e-10 and ns["bd"].q.max() <= 1 / 9 + 1e-12),
        ("the running cost on q keeps the unbounded path below its 1/4, at a cost above 2",
         lambda ns: ns["bd2"].q.max() < 0.25 - 0.01 and ns["bd2"].cost > 2.0 + 0.1),
        ("the pushed pendulum reaches 1.2 rad at rest, B(0) = cos 0 = 1",
         lambda ns: ns["push"].success and ns["push"].own_scheme_miss() < 1e-9
         and ns["swing"].input_matrix([0.0])[0, 0] == 1.0),
    ],
    "docs/guide/constraints.md": [
        ("the rod's tension is positive (the bob hangs)", lambda ns: np.all(ns["tension"] > 0)),
    ],
    "docs/guide/robots.md": [
        # the tool point from the page's URDF by hand (turret yaw, shoulder, elbow offsets)
        ("the tool's position is the hand computation",
         lambda ns: np.allclose(ns["tip"], [0.61594622, 0.19053449, 0.43894183])),
        ("energy - work conserved", lambda ns: ns["bal"].max_error < 1e-9),
        ("the PD law reaches its target",
         lambda ns: np.abs(ns["held"].q[-1] - ns["target"]).max() < 1e-3),
        ("the move's optimum", lambda ns: abs(ns["sol"].cost - 1.9497) < 1e-3
         and ns["sol"].own_scheme_miss() < 1e-10),
        ("the mass sensitivity is the central difference of two rebuilt arms",
         lambda ns: _fore_mass_difference(ns) < 1e-6),
        ("the mimic holds", lambda ns: ns["gap"] < 1e-12),
        ("the four-bar's loop stays closed and its energy constant",
         lambda ns: ns["loop_gap"] < 1e-12 and np.ptp(ns["spin"].energy) < 1e-8),
        ("the chain as a tree is the built-in in relative angles, and so is its run",
         lambda ns: ns["model_gap"] < 1e-13 and ns["run_gap"] < 1e-12
         and ns["swing"].energy[-1] < ns["swing"].energy[0]),
        ("the tree's last mass is where the built-in's absolute angles put it",
         lambda ns: np.allclose(ns["last_mass"], _chain_end(ns["lengths"], ns["ref"].q[-1]),
                                rtol=0, atol=1e-12)),
    ],
    "docs/guide/linear.md": [
        ("the stability limit is 0.2436 s",
         lambda ns: _close(sp.linear.stability_limit(ns["M"], ns["K"]), 0.2436, 5e-4)),
        ("the propagator is 4 x 4", lambda ns: ns["Phi"].shape == (4, 4)),
    ],
    "docs/guide/validation.md": [
        ("the exact nutation period is 1.8472390 s",
         lambda ns: abs(ns["exact"].period - 1.8472390) < 1e-7),
        ("the fitted order of the nutation error is 4",
         lambda ns: abs(ns["table"].fitted["theta"] - 4) < 0.1),
    ],
    "docs/saving.md": [
        ("the loaded run has its 1001 states and its system",
         lambda ns: ns["back"].q.shape == (1001, 2) and ns["back"].system is not None),
        ("the damped run from the process pool lost energy to its dissipation",
         lambda ns: ns["traj"].work[-1] < 0),
    ],
    "docs/performance.md": [],
}
NEEDS = {"import sympy": "sympy", "dask": "distributed", "wrt=wrt": "sympy",
         "tangent=True, wrt=[": "sympy",       # (parameter sensitivities compile with SymPy)
         "import matplotlib": "matplotlib"}


def python_blocks(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_every_page_with_python_code_is_run():
    """A page that gains Python code is added to CHECKS (and so run), and no run page lost it."""
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    with_code = {str(p.relative_to(ROOT)) for p in pages if p.is_file()
                 and "```python" in p.read_text(encoding="utf-8")}
    if not (ROOT / "docs").is_dir():
        pytest.skip("docs/ is not in this tree")
    assert with_code == set(CHECKS) | {"docs/guide/api.md"}
    assert len(python_blocks("README.md")) >= 2
    blocks = python_blocks("docs/guide/api.md")
    assert len(blocks) == 1 and API_OVERVIEW in blocks[0]


@pytest.mark.parametrize("page", sorted(CHECKS))
def test_page_examples_run(page, monkeypatch, tmp_path):
    """The page's blocks run, in order, in one namespace; then its checks hold."""
    if not (ROOT / page).is_file():
        pytest.skip(f"{page} is not in this tree")
    pytest.importorskip("scipy")
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)                       # files the examples write land here
    blocks = [b for b in python_blocks(page) if API_OVERVIEW not in b]
    assert blocks
    ns = {"__name__": "__main__"}                     # as when the blocks are run as a script
    ran = 0
    for code in blocks:
        missing = [mod for key, mod in NEEDS.items()
                   if key in code and importlib.util.find_spec(mod) is None]
        if missing:
            continue
        exec(compile(code, str(ROOT / page), "exec"), ns)
        ran += 1
    if ran < len(blocks):
        pytest.skip(f"{len(blocks) - ran} block(s) of {page} need a missing package")
    for what, check in CHECKS[page]:
        assert check(ns), f"{page}: {what}"


def test_dask_block_runs_as_a_script(tmp_path):
    """The Dask example is self-contained and guarded by ``if __name__ == "__main__":``, so
    ``python script.py`` works although LocalCluster's worker processes import the script."""
    pytest.importorskip("distributed")
    if not (ROOT / "docs" / "performance.md").is_file():
        pytest.skip("docs/ is not in this tree")
    blocks = [b for b in python_blocks("docs/performance.md") if "LocalCluster" in b]
    assert len(blocks) == 1
    code = blocks[0]
    assert 'if __name__ == "__main__":' in code
    script = tmp_path / "dask_sweep.py"
    script.write_text(code, encoding="utf-8")
    env = dict(os.environ, SYMPLECTIC_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    drifts = eval(r.stdout.strip().splitlines()[-1], {"np": np})
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
def test_event_spacing_orders(method, order, Ns):
    """The orders of the spacing of events that docs/guide/time.md states: the dense output's
    order at a step that does not divide the period, and for lobatto4 its node order, 6, only at
    one that does."""
    pytest.importorskip("scipy")
    page = ROOT / "docs" / "guide" / "time.md"
    if not page.is_file():
        pytest.skip("docs/ is not in this tree")
    text = " ".join(page.read_text(encoding="utf-8").split())
    assert ("converges with order 2 for the midpoint rule, 4 for Simpson and 5 for `lobatto4` "
            "(`tests/docs/test_docs_pages.py` measures them at h = T/(N + 0.37), N = 40 … 320 for "
            "`lobatto4`") in text
    assert "and `lobatto4`'s spacing converges with the order of its nodes, 6." in text
    assert abs(_spacing_order(method, lambda T: [T / (N + 0.37) for N in Ns]) - order) < 0.1
    if method == "lobatto4":
        assert abs(_spacing_order(method, lambda T: [T / N for N in Ns[:3]]) - 6) < 0.1


LINK = re.compile(r"\]\(([^)#\s:]+\.(?:md|ipynb|png))(?:#[^)\s]*)?\)")


def test_the_pages_links_to_files_resolve():
    """Links between the pages name files that exist (GitHub shows the pages as they are).
    A link into a top-level folder that this tree does not have (the sdist carries no
    benchmarks/) is not checked here; the repository's own run checks it."""
    if not (ROOT / "docs").is_dir():
        pytest.skip("docs/ is not in this tree")
    bad, n = [], 0
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve()
            top = path.relative_to(ROOT.resolve()).parts[0]
            if not (ROOT / top).exists():
                continue
            n += 1
            if not path.is_file():
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert n > 20 and bad == []
