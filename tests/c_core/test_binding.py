"""The binding's own contracts: every C status has a Python exception, status messages carry
the core's text with their context, System()'s argument parser, the run prologue's checks."""
import builtins
import pathlib
import re

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core

CSRC = pathlib.Path(__file__).resolve().parents[2] / "csrc"


def _source(name):
    """The text of a C file of the core (csrc/core/) or the binding (csrc/binding/), by name."""
    path = CSRC / ("binding" if name.startswith(("py_", "_core")) else "core") / name
    if not path.is_file():
        pytest.skip("the C sources are not next to the tests (installed package)")
    return path.read_text()


def test_status_table_covers_every_code_of_the_header():
    header = _source("symplectic.h")
    enum = re.search(r"enum sym_status \{(.*?)\};", header, re.S).group(1)
    codes = set(re.findall(r"\b(SYM_E\w+)\s*=\s*-\d+", enum))
    assert len(codes) >= 10                      # the header's list was read
    errors = _source("py_errors.c")
    rows = dict(re.findall(r"\{(SYM_E\w+), PyExc_(\w+)\}", errors))
    assert set(rows) == codes
    for code, exc in rows.items():
        assert issubclass(getattr(builtins, exc), BaseException), (code, exc)


def _indefinite_mass_system():
    # M(q) = [[1 - q]]: positive definite for q < 1 only
    return sp.System(1, lambda q: np.array([[1.0 - q[0]]]), lambda q: 0.0,
                     mass_grad=lambda q: np.array([[[-1.0]]]),
                     potential_grad=lambda q: np.zeros(1))


def test_energy_failure_names_the_row():
    s = _indefinite_mass_system()
    q = np.array([[0.0], [0.5], [2.0], [0.1]])        # row 2: M = -1
    with pytest.raises(ValueError, match=r"^energy: .*positive definite.* at row 2$"):
        s.energy(q, np.ones_like(q))


def test_builtin_failure_names_system_and_n():
    with pytest.raises(ValueError, match=r"^cannot make built-in system 'double_pendulum' "
                                         r"\(n = 2\): \S"):
        _core.System(2, builtin="double_pendulum", params=[1.0])
    with pytest.raises(ValueError, match=r"^cannot make built-in system 'no_such' \(n = 1\)"):
        _core.System(1, builtin="no_such", params=[])
    with pytest.raises(TypeError, match="builtin must be str or None"):
        _core.System(1, builtin=3, params=[])


def test_step_tangent_failure_gives_reason_and_residual():
    dp = sp.systems.double_pendulum()
    with pytest.raises(RuntimeError, match=r"^step_tangent failed: .+ \(residual [-+.e0-9]+\)$"):
        _core.step_tangent(dp, np.array([0.5, 0.2]), np.array([50.0, -80.0]), 5.0, "simpson",
                           max_iter=1)


# --- System(): one argument parser for every form ---------------------------------------
def _pot(q):
    return 0.5 * float(q @ q)


def _grad(q):
    return np.asarray(q, float)


@pytest.mark.parametrize("call, match", [
    (lambda: _core.System(2, bogus=1), r"'bogus' is an invalid keyword argument for System\(\)"),
    (lambda: _core.System(2, np.eye(2), mass=np.eye(2)),
     r"argument for System\(\) given by name \('mass'\) and position \(2\)"),
    (lambda: _core.System(), r"missing required argument 'n'"),
    (lambda: _core.System(*range(1, 23)), r"takes at most 21 arguments \(22 given\)"),
    (lambda: _core.System(2.0, np.eye(2), _pot, potential_grad=_grad), "integer"),
    (lambda: _core.System(2, np.eye(2), None, potential_grad=_grad), "potential is required"),
    (lambda: _core.System(2, np.eye(2), _pot, potential_grad=_grad, potential_hess=3),
     "potential_hess must be callable, got <class 'int'>"),
    (lambda: _core.System(2, combined=3), "combined must be callable, got <class 'int'>"),
    (lambda: _core.System(2, vectorized="f"), "vectorized must be callable, got <class 'str'>"),
])
def test_system_argument_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize("n", [0, -1, 46341, 2**40])
def test_system_n_out_of_range(n):
    with pytest.raises(ValueError, match=f"n must be between 1 and 46340, got {n}"):
        _core.System(n, np.eye(2), _pot, potential_grad=_grad)


def test_the_first_given_form_is_taken():
    # builtin before every other form; a constant mass before separate callables
    s = _core.System(1, builtin="pendulum", params=[1.0, 2.0], combined=lambda *a: 0.0)
    assert s.builtin == "pendulum" and s.nogil
    c = _core.System(2, np.diag([2.0, 1.0]), _pot, potential_grad=_grad)
    assert c.constant_mass and c.builtin is None and not c.nogil
    v = _core.System(n=2, mass=lambda q: np.eye(2), potential=_pot, potential_grad=_grad,
                     mass_grad=lambda q: np.zeros((2, 2, 2)))
    assert not v.constant_mass
    # the constant mass gives the exact harmonic oscillator energy 1/2 p^T M^-1 p + 1/2 q.q
    assert c.energy(np.array([1.0, 2.0]), np.array([2.0, 3.0])) == pytest.approx(
        0.5 * (4.0 / 2.0 + 9.0 / 1.0) + 0.5 * 5.0, rel=1e-15)


# --- the run prologue ---------------------------------------------------------------------
def test_h_is_checked_when_passed_by_keyword():
    # the binding converts; the core refuses the value and names it (sym_work_invalid,
    # sym_run.report.invalid)
    pend = sp.systems.pendulum()
    for h in (0.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=r"^step: invalid argument \(h\)$"):
            _core.step(pend, np.zeros(1), np.zeros(1), h=h)
        with pytest.raises(ValueError, match=r"^integrate: invalid run argument \(h\)$"):
            _core.integrate(system=pend, q0=np.zeros(1), p0=np.zeros(1), h=h, n_steps=2)
        with pytest.raises(ValueError, match=r"^step_tangent: invalid argument \(h\)$"):
            _core.step_tangent(pend, np.zeros(1), np.zeros(1), h=h)
        with pytest.raises(ValueError, match=r"^newton_system: invalid argument \(h\)$"):
            _core.newton_system(pend, np.zeros(1), np.zeros(1), h, np.zeros(2), "simpson")


@pytest.mark.parametrize("kw, field", [
    (dict(n_steps=-1), "n_steps"), (dict(store_every=-2), "store_every"),
    (dict(t0=float("inf")), "t0"), (dict(t0=float("nan")), "t0")])
def test_the_core_names_the_run_argument_it_refuses(kw, field):
    pend = sp.systems.pendulum()
    args = dict(system=pend, q0=np.zeros(1), p0=np.zeros(1), h=0.1, n_steps=3) | kw
    with pytest.raises(ValueError, match=rf"^integrate: invalid run argument \({field}\)$"):
        _core.integrate(**args)
    with pytest.raises(ValueError, match=r"^step: invalid argument \(t\)$"):
        _core.step(pend, np.zeros(1), np.zeros(1), 0.1, t=float("nan"))


def test_store_every_0_keeps_every_row_as_1_does():
    pend = sp.systems.pendulum()
    a = _core.integrate(pend, np.zeros(1), np.ones(1), 0.1, 3, store_every=0)
    b = _core.integrate(pend, np.zeros(1), np.ones(1), 0.1, 3, store_every=1)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.array_equal(a[0], 0.1 * np.arange(4))


def test_prologue_order_system_method_then_state():
    pend = sp.systems.pendulum()
    with pytest.raises(TypeError, match="system must be a symplectic.System"):
        _core.step(object(), [1.0, 2.0], [0.0], 0.1, "euler")
    with pytest.raises(ValueError, match="unknown method 'euler'"):
        _core.step(pend, [1.0, 2.0], [0.0], 0.1, "euler")
    with pytest.raises(ValueError, match=r"q must have shape \(1,\), got \(2,\)"):
        _core.step(pend, [1.0, 2.0], [0.0], 0.1)
    with pytest.raises(ValueError, match="has no Newton system"):
        _core.newton_system(pend, [0.0], [0.0], 0.1, [0.0], "rk4")
    uninit = _core.System.__new__(_core.System)
    with pytest.raises(RuntimeError, match="not initialised"):
        _core.integrate(uninit, [0.0], [0.0], 0.1, 1)
    with pytest.raises(RuntimeError, match="not initialised"):
        uninit.energy([0.0], [0.0])
