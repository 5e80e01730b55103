"""Trajectories on disk and between processes (issue 30).

Trajectory.save / symplectic.load: every field back bitwise, a plain .npz that
NumPy reads without symplectic and without pickle, the documented layout, the
system rebuilt where it can be (built-in, SymPy -- without evaluating the
file's text) and a clear error where it cannot.  Pickling: a SymPy system with
forces and its trajectory travel to a spawned process and back, bitwise.
(The energy of partial trajectories: tests/run/test_partial_energy.py.)"""
import concurrent.futures
import json
import math
import multiprocessing
import os
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest

import symplectic as sp
from support.models import dp_callables

REPO = os.path.dirname(os.path.dirname(os.path.abspath(sp.__file__)))


# ---------------------------------------------------------------- helpers
def same_bits(a, b):
    """a and b are the same array to the bit (dtype, shape, bytes; nan-safe)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


ARRAYS = ("t", "q", "p", "q_mid", "newton_iterations", "multipliers", "_qdot", "_energy",
          "_work", "_impulse", "tangent")


def assert_same_trajectory(a, b):
    """Every field of two trajectories equal, the arrays bitwise."""
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert same_bits(x, y), name
    for name in ("t_events", "q_events", "p_events"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert len(x) == len(y) and all(same_bits(u, v) for u, v in zip(x, y)), name
    assert a.method == b.method and a.status == b.status and a.message == b.message
    assert same_bits(a.h, b.h) and a.counts == b.counts and a.store_every == b.store_every
    assert a.t0 == b.t0


def drive(t, q, qdot):
    """A module-level (picklable) driving force."""
    return np.full(len(q), 0.1 * math.cos(t))


def crossing(t, q, p):
    return q[0]


crossing.terminal = 2


def sympy_pendulum(**options):
    """A SymPy pendulum with Rayleigh dissipation: M, V and a force compiled to C."""
    sy = pytest.importorskip("sympy")
    q, v, c, w = sy.symbols("q v c omega")
    L = sy.Rational(1, 2) * v ** 2 - w ** 2 * (1 - sy.cos(q))
    return sp.symbolic.system(L, [q], [v], {c: 0.3, w: 2.0}, dissipation=c * v ** 2 / 2,
                              name="damped", **options)


DP = sp.systems.double_pendulum()
RUNS = {
    "simpson": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 60),
    "lobatto4 (3-d q_mid)": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 30,
                                                 method="lobatto4"),
    "midpoint (no q_mid)": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 30,
                                                method="midpoint"),
    "rk4": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 30, method="rk4"),
    "t0 and store_every": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 47, t0=3.5,
                                               store_every=5),
    "t_eval": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 50,
                                   t_eval=np.linspace(0.1, 0.45, 8)),
    "terminal events": lambda: sp.integrate(sp.systems.pendulum(), [1.0], [0.0], 0.01, 400,
                                            events=[crossing, crossing]),
    "damped built-in": lambda: sp.integrate(sp.systems.double_pendulum(damping=[0.1, 0.2]),
                                            [1.0, 2.0], [0, 0], 0.01, 40),
    "held force": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20,
                                       force=np.linspace(0, 1, 40).reshape(20, 2)),
    "constraints": lambda: sp.integrate(sp.systems.pendulum_cartesian(), [1.0, 0.0], [0, 0],
                                        0.01, 30),
    "Python force": lambda: sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 20, force=drive),
    "tangent": lambda: sp.integrate(sp.systems.double_pendulum(damping=0.1), [1.0, 2.0], [0, 0],
                                    0.01, 30, tangent=True, store_every=4),
    "partial": lambda: partial_run(),
}


def partial_run():
    """The steps before a Newton failure (ConvergenceError.trajectory)."""
    blow = sp.System(1, np.eye(1), quartic, potential_grad=quartic_grad)
    with pytest.raises(sp.ConvergenceError) as info:
        sp.integrate(blow, [1.0], [0.0], 0.05, 100)
    return info.value.trajectory


def quartic(q):
    return -q[0] ** 4


def quartic_grad(q):
    return -4 * q ** 3


# ---------------------------------------------------------------- save / load
@pytest.mark.parametrize("run", RUNS, ids=list(RUNS))
@pytest.mark.parametrize("derived", [True, False])
def test_every_field_comes_back_bitwise(tmp_path, run, derived):
    tr = RUNS[run]()
    path = tmp_path / "run.npz"
    tr.save(path, derived=derived)
    back = sp.load(path)
    assert_same_trajectory(tr, back)
    assert (back._energy is not None) == derived
    # with the system rebuilt or attached, what is derived is the original's, bitwise
    if back.system is None:
        back = sp.load(path, system=tr.system)
    assert same_bits(back.energy, tr.energy) and same_bits(back.qdot, tr.qdot)


def test_the_file_is_plain_numpy_readable_without_symplectic(tmp_path):
    tr = sp.integrate(sp.systems.double_pendulum(damping=0.1), [1.0, 2.0], [0, 0], 0.01, 20,
                      events=crossing)
    path = tmp_path / "run.npz"
    tr.save(path)
    # a fresh interpreter in which symplectic cannot be imported
    code = ("import sys, numpy as np; sys.modules['symplectic'] = None\n"
            f"z = np.load({str(path)!r}, allow_pickle=False)\n"
            "d = {k: z[k] for k in z.files}\n"
            "assert str(d['format']) == 'symplectic.Trajectory' and int(d['format_version']) == 1\n"
            "print(d['energy'].size, d['q'].shape, str(d['system_builtin']), float(d['h']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["21", "(21,", "2)", "double_pendulum", "0.01"]


def documented_keys():
    """The key patterns of the layout table in load's docstring (its first
    column, on the lines indented as the header)."""
    lines = sp.load.__doc__.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("key  "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    keys = set()
    for line in lines[start + 1:]:
        if line.strip().startswith("Raises"):
            break
        if line.strip() and len(line) - len(line.lstrip()) == indent:
            keys.update(k.strip() for k in re.split(r"\s{2,}", line.strip())[0].split(","))
    return keys


@pytest.mark.parametrize("run", ["simpson", "t_eval", "terminal events", "damped built-in",
                                 "held force", "constraints", "Python force"])
def test_the_keys_shapes_and_dtypes_are_the_documented_ones(tmp_path, run):
    tr = RUNS[run]()
    tr.save(tmp_path / "run.npz")
    z = np.load(tmp_path / "run.npz", allow_pickle=False)
    patterns = [re.compile("^" + re.sub(r"<\w+>", r"\\w+", k) + "$") for k in documented_keys()]
    for k in z.files:
        assert any(p.match(k) for p in patterns), f"{k} is not in load's layout table"
    N, n = len(tr.t) - 1, tr.q.shape[1]
    assert z["t"].shape == (N + 1,) and z["q"].shape == z["p"].shape == (N + 1, n)
    assert z["counts"].dtype == np.int64 and z["counts"].shape == (6,)
    for k in ("format", "method", "message", "system_kind", "system_repr"):
        assert z[k].dtype.kind == "U" and z[k].shape == ()
    for k in ("h", "t0"):
        assert z[k].dtype == np.float64 and z[k].shape == ()
    assert int(z["store_every"]) == (tr.store_every or 0)
    assert list(z["counts"]) == [tr.counts.steps, tr.counts.evaluations,
                                 tr.counts.newton_iterations, tr.counts.factorizations,
                                 tr.counts.branch_checks, tr.counts.branch_fixes]


def test_the_docs_page_lists_the_same_keys():
    path = os.path.join(REPO, "docs", "saving.md")
    if not os.path.exists(path):
        pytest.skip("docs/ is not in this tree (the tests of an installed sdist)")
    page = open(path).read()
    for k in documented_keys():
        assert f"`{k}`" in page, k


def test_t0_of_a_t_eval_run_is_saved(tmp_path):
    """A t_eval run's rows start at its first output time, not at t0: t0 is
    kept separately (the run's own, from integrate)."""
    tr = RUNS["t_eval"]()
    assert tr.t0 == 0.0 and tr.t[0] != tr.t0 and tr.store_every is None
    tr.save(tmp_path / "a.npz")
    assert np.load(tmp_path / "a.npz")["t0"] == 0.0
    assert sp.load(tmp_path / "a.npz").t0 == 0.0
    assert RUNS["t0 and store_every"]().t0 == 3.5


def test_a_builtin_system_is_rebuilt_and_integrates_bitwise(tmp_path):
    S = sp.systems.pendulum_chain(3, m=[1.0, 2.0, 0.5], damping=[0.1, 0.0, 0.2])
    tr = sp.integrate(S, [0.3, 0.2, 0.1], [0, 0, 0], 0.01, 50)
    tr.save(tmp_path / "a.npz", derived=False)
    back = sp.load(tmp_path / "a.npz")
    assert back.system is not S and back.system.builtin == "pendulum_chain"
    assert back.saved["system"]["kind"] == "builtin"
    assert same_bits(back.energy, tr.energy)                 # recomputed by the rebuilt one
    again = sp.integrate(back.system, [0.3, 0.2, 0.1], [0, 0, 0], 0.01, 50)
    assert same_bits(again.q, tr.q) and same_bits(again.work, tr.work)
    assert back.force is back.system.force                  # the joint friction, rebuilt
    # rebuild=False: the file alone
    assert sp.load(tmp_path / "a.npz", rebuild=False).system is None


def test_callables_systems_are_described_and_attached_by_hand(tmp_path):
    S = sp.System(2, **dp_callables())
    tr = sp.integrate(S, [1.0, 2.0], [0, 0], 0.01, 20)
    tr.save(tmp_path / "a.npz", derived=False)
    back = sp.load(tmp_path / "a.npz")
    assert back.system is None and back.saved["system"]["kind"] == "callables"
    slots = json.loads(back.saved["system"]["text"])
    assert slots["potential"] == "support.models.dp_callables.<locals>.potential"
    for what in ("energy", "qdot"):
        with pytest.raises(ValueError, match=rf"^{what} needs the system, and this trajectory "
                                             r"has none attached .*load\(path, system=S\)"):
            getattr(back, what)
    with pytest.raises(ValueError, match="dense_state needs the system"):
        back.dense_state(0.05)
    assert same_bits(back.dense(0.05), tr.dense(0.05))      # q alone needs no system
    attached = sp.load(tmp_path / "a.npz", system=S)
    assert same_bits(attached.energy, tr.energy)
    # saved again without its system, the file keeps the description of it
    back.save(tmp_path / "again.npz")
    again = sp.load(tmp_path / "again.npz")
    assert again.saved["system"] == back.saved["system"] and again.system is None
    assert_same_trajectory(again, back)
    bare = sp.Trajectory(None, "simpson", 0.1, np.zeros(1), np.zeros((1, 1)), np.zeros((1, 1)),
                         None, None)
    with pytest.raises(ValueError, match="^energy needs the system, and this trajectory has "
                                         "none attached: set traj.system = S$"):
        bare.energy
    with pytest.raises(ValueError, match="n = 1, the saved trajectory n = 2"):
        sp.load(tmp_path / "a.npz", system=sp.systems.pendulum())
    with pytest.raises(TypeError, match="must be a symplectic.System"):
        sp.load(tmp_path / "a.npz", system="pendulum")


def test_the_force_is_described_and_rebuilt_where_it_can_be(tmp_path):
    tr = RUNS["Python force"]()
    tr.save(tmp_path / "a.npz")
    back = sp.load(tmp_path / "a.npz")
    assert back.force is None and back.saved["force"]["terms"] == [
        {"kind": "python", "callable": "test_io.drive", "jacobian": False}]
    back.save(tmp_path / "again.npz")                        # the description is kept
    assert sp.load(tmp_path / "again.npz").saved["force"] == back.saved["force"]
    tr = RUNS["held force"]()
    tr.save(tmp_path / "b.npz")
    back = sp.load(tmp_path / "b.npz")
    assert same_bits(back.force.hold, tr.force.hold) and not back.saved["force"]["own"]
    tr = sp.integrate(sp.systems.lagrange_top(damping=0.01), [0.1, 1.0, 0.0], [0, 0, 0.01],
                      0.01, 10)
    tr.save(tmp_path / "c.npz")
    back = sp.load(tmp_path / "c.npz", rebuild=False)      # the C term alone, from the file
    assert repr(back.force) == repr(tr.force) == ("<symplectic.forces.Force: built-in "
                                                  "pivot_friction(0.01,)>")


def test_files_that_are_not_trajectories_or_newer_are_refused(tmp_path):
    np.savez(tmp_path / "other.npz", t=np.zeros(3))
    with pytest.raises(ValueError, match="not a symplectic trajectory file"):
        sp.load(tmp_path / "other.npz")
    RUNS["simpson"]().save(tmp_path / "a.npz")
    d = dict(np.load(tmp_path / "a.npz"))
    d["format_version"] = np.array(2, np.int64)
    np.savez(tmp_path / "newer.npz", **d)
    with pytest.raises(ValueError, match="format_version 2; this symplectic reads up to 1"):
        sp.load(tmp_path / "newer.npz")


# ---------------------------------------------------------------- SymPy systems from text
def test_a_sympy_system_is_rebuilt_in_a_fresh_process_bitwise(tmp_path):
    S = sympy_pendulum()
    tr = sp.integrate(S, [1.0], [0.0], 0.05, 40)
    tr.save(tmp_path / "a.npz", derived=False)
    code = ("import numpy as np, symplectic as sp\n"
            f"tr = sp.load({str(tmp_path / 'a.npz')!r})\n"
            "assert tr.system.name == 'damped' and tr.force is tr.system.force\n"
            f"np.save({str(tmp_path / 'energy.npy')!r}, tr.energy)\n"
            "again = sp.integrate(tr.system, [1.0], [0.0], 0.05, 40)\n"
            f"np.save({str(tmp_path / 'q.npy')!r}, again.q)\n")
    env = dict(os.environ, PYTHONPATH=REPO)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=tmp_path)
    assert same_bits(np.load(tmp_path / "energy.npy"), tr.energy)
    assert same_bits(np.load(tmp_path / "q.npy"), tr.q)
    text = json.loads(str(np.load(tmp_path / "a.npz")["system_text"]))
    assert text["backend"] == S.backend and text["name"] == "damped"


def spec_text(tmp_path, edit):
    """A trajectory file of the SymPy pendulum whose system text ``edit`` changed."""
    tr = sp.integrate(sympy_pendulum(), [1.0], [0.0], 0.05, 4)
    tr.save(tmp_path / "a.npz")
    d = dict(np.load(tmp_path / "a.npz"))
    d["system_text"] = np.array(edit(str(d["system_text"])))
    np.savez(tmp_path / "edited.npz", **d)
    return tmp_path / "edited.npz"


@pytest.mark.parametrize("edit, why", [
    (lambda s: s.replace("Symbol('q')", "__import__('pathlib').Path('PWNED').touch()", 1),
     "not a call of a SymPy class"),
    (lambda s: s.replace("Symbol('q')", "Symbol('q */ int x; /*')"), "not allowed"),
    (lambda s: s.replace("Symbol('omega')", "Symbol('zeta')", 1),
     r"the symbols \['zeta'\] are neither"),
    (lambda s: s.replace("cos(Symbol('q'))", "Function('f')(Symbol('q'))", 1),
     "not a call of a SymPy class"),
    (lambda s: s.replace("Integer(1)", "MutableDenseMatrix([['1']])", 1), "not allowed here"),
    (lambda s: s.replace("Integer(1)", "Float('__import__')", 1), "not a number"),
])
def test_a_text_that_breaks_the_rules_is_not_evaluated(tmp_path, monkeypatch, edit, why):
    monkeypatch.chdir(tmp_path)                   # where the payload would leave its mark
    path = spec_text(tmp_path, edit)
    with pytest.warns(RuntimeWarning, match=f"was not rebuilt \\(UnsafeText: .*{why}"):
        back = sp.load(path)
    assert back.system is None and not (tmp_path / "PWNED").exists()
    assert same_bits(back.energy, np.load(path)["energy"])  # the arrays are there


# ---------------------------------------------------------------- pickling
def spawn_pool():
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"))


def test_a_sympy_system_with_forces_and_its_trajectory_cross_processes_bitwise():
    S = sympy_pendulum()
    assert S.force is not None
    tr = sp.integrate(S, [1.0], [0.0], 0.05, 60)
    with spawn_pool() as pool:
        # the system goes to a fresh process (rebuilt there), its run comes back pickled
        remote = pool.submit(sp.integrate, S, [1.0], [0.0], 0.05, 60).result()
        # and a trajectory goes there and back
        echoed = pool.submit(pickle.loads, pickle.dumps(tr)).result()
    for other in (remote, echoed):
        assert_same_trajectory(tr, other)
        assert same_bits(other.work, tr.work) and same_bits(other.impulse, tr.impulse)
        assert other.system.force is not None and other.force is not None
    for other in (remote, echoed):
        assert same_bits(other.energy, tr.energy)


def test_a_numpy_sympy_force_pickles():
    S = sympy_pendulum(compile=False)
    assert S.force_backend == "numpy"
    tr = sp.integrate(S, [1.0], [0.0], 0.05, 30)
    back = pickle.loads(pickle.dumps(tr))
    assert_same_trajectory(tr, back)
    # the force alone, on another system of the same n
    alone = pickle.loads(pickle.dumps(S.force))
    a = sp.integrate(sp.systems.pendulum(omega=2.0), [1.0], [0.0], 0.05, 30, force=S.force)
    b = sp.integrate(sp.systems.pendulum(omega=2.0), [1.0], [0.0], 0.05, 30, force=alone)
    assert same_bits(a.q, b.q) and same_bits(a.work, b.work)


def test_what_cannot_pickle_says_why():
    S = sympy_pendulum()
    if S.force_backend != "c":
        pytest.skip("no C compiler: no compiled force to refuse")
    raw = sp.forces.from_cfunc(S.force.terms[0].address, np.array([0.3]))
    with pytest.raises(TypeError, match="from_cfunc.*cannot be pickled: its code address is "
                                        "process-local"):
        pickle.dumps(raw)
    with pytest.raises(TypeError, match="compiled callback cannot be pickled"):
        pickle.dumps(sp.System.from_cfunc(1, S.force.terms[0].address))
    tr = sp.integrate(DP, [1.0, 2.0], [0, 0], 0.01, 5, force=lambda t, q, v: -v)
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(tr)                                   # a lambda: pickle's own limit
