"""The exact Hessian of a control problem's dynamics (symplectic/control/_curvature.py, the
second-order adjoint of the Galerkin step) for systems from SymPy.

Expected values, all independent of the code under test: the step's first derivatives from
the C core (the end's derivative that the adjoint's own equations give must equal them), and
central differences of the C core's exact gradients at step e, which approach the Hessian as
e^2 (halving e divides their error by 4, and Richardson's extrapolation of two of them leaves
~1e-12).  Two systems: a crane with Rayleigh damping and a constant input matrix, and a
two-link arm whose own force has inputs through B(q) and configuration- and
velocity-dependent friction (the input rows' curvature through the points' states), and the
crane driven by a time-dependent force; each also with a running cost and a path constraint
of (t, q, qdot, u) from SymPy."""
import functools

import numpy as np
import pytest

import symplectic as sp
from support.control_checks import check_derivatives
from symplectic import control

sy = pytest.importorskip("sympy")

METHODS = ["midpoint", "simpson", "lobatto4", "lobatto5", "gauss2", "gauss3"]


@functools.lru_cache(maxsize=None)
def _crane():
    x, th, xd, thd = sy.symbols("x theta xd thd")
    L = (sy.Rational(11, 2) * xd ** 2 + 50 * xd * thd * sy.cos(th) + 125 * thd ** 2
         + sy.Rational(981, 2) * sy.cos(th))
    return sp.System.from_sympy(L, [x, th], [xd, thd],
                                dissipation=sy.Rational(3, 10) * (xd ** 2 + thd ** 2) / 2)


@functools.lru_cache(maxsize=None)
def _arm():
    q1, q2, w1, w2, u1, u2 = sy.symbols("q1 q2 w1 w2 u1 u2")
    M = sy.Matrix([[3 + 2 * sy.cos(q2), 1 + sy.cos(q2)], [1 + sy.cos(q2), 1]])
    V = -9.81 * (2 * sy.cos(q1) + sy.cos(q1 + q2))
    forces = [u1 * sy.cos(q2) + u2 * sy.sin(q1) ** 2 - w1 / 5, u2 - w2 * sy.cos(q1) / 10]
    return sp.System.from_sympy((M, V), [q1, q2], [w1, w2], forces=forces, inputs=[u1, u2])


@functools.lru_cache(maxsize=None)
def _driven():
    """The crane shaken by a time-dependent force (t_ki = (k + x_i) h moves with h)."""
    t, x, th, xd, thd = sy.symbols("t x theta xd thd")
    L = (sy.Rational(11, 2) * xd ** 2 + 50 * xd * thd * sy.cos(th) + 125 * thd ** 2
         + sy.Rational(981, 2) * sy.cos(th))
    return sp.System.from_sympy(L, [x, th], [xd, thd], time=t,
                                forces=[3 * sy.sin(2 * t) * sy.cos(th), -sy.cos(t) * thd * t])


SYSTEMS = {"crane": _crane, "arm": _arm, "driven": _driven}


def _point_terms(name):
    """A running cost and a path constraint of (t, q, qdot, u) from SymPy."""
    t, a, b, va, vb = sy.symbols("t a b va vb")
    us = list(sy.symbols("u0:2"))[:2 if name == "arm" else 1]
    symbols = {"t": t, "q": [a, b], "qdot": [va, vb], "u": us}
    l = b ** 2 * sy.cos(t) + va * vb * a + us[0] ** 2 * sy.sin(a) * t / 4
    c = [a + sy.sin(t) * b ** 2 + va ** 2 / 3, us[-1] * b * vb - sy.cos(a) * t]
    return (control.running(l, symbols=symbols),
            control.path(c, symbols=symbols, lower=[-3.0, -np.inf], upper=[3.0, 2.0]))


def _problem(name, method, free, N=6, terms=False):
    system = SYSTEMS[name]()
    cost = control.effort(np.eye(2) if name == "arm" else 1.0)
    kw = {} if name == "arm" else dict(inputs=[1.0, 0.0])
    if free:
        cost = cost + control.duration()
    if terms:
        running, kw["path"] = _point_terms(name)
        cost = cost + 0.5 * running
    return control.Problem(system, 2.0, N, method=method, start={"q": [0, 0], "qdot": [0, 0]},
                           end={"q": [1.0, 0.5], "qdot": [0, 0]}, cost=cost,
                           free_duration=(1.0, 5.0) if free else None, **kw)


def _point(pb, seed):
    """A point away from any solution (the guess plus noise), multipliers at random."""
    rng = np.random.default_rng(seed)
    z = pb._guess(None) + 0.3 * rng.standard_normal(pb.n_variables)
    if pb.free:
        z[-1] = 2.0 / pb.intervals
    return z, rng.standard_normal(len(pb.constraint_bounds()[0]))


@pytest.mark.parametrize("terms", [False, True])
@pytest.mark.parametrize("free", [False, True])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_the_exact_hessian_is_the_limit_of_differences(name, method, free, terms):
    """With ``terms``, also a running cost and a path constraint from SymPy (their
    curvature through the points' states, and the running cost's explicit h)."""
    pb = _problem(name, method, free, terms=terms)
    z, nu = _point(pb, 7)
    pb._use_hessian("exact")
    _, dy = pb._steps(z)
    # the adjoint's first-order equations are the C core's step (whose d/dt of a force of
    # time, in the column h with a free duration, is a central difference: ~1e-10)
    D = pb._curvature.end_derivative(pb, z)
    assert np.abs(D - dy)[..., :-1 if free else None].max() < 1e-11 * np.abs(dy).max()
    assert np.abs(D - dy).max() < (1e-9 if name == "driven" else 1e-11) * np.abs(dy).max()
    He = pb._curvature.hessians(pb, z, 0.7, nu)
    V0 = z[pb._block_matrix()]
    if free:
        V0 = np.hstack([V0, np.full((pb.intervals, 1), z[-1])])
    diffs = []
    for e in (1e-3, 5e-4, 2.5e-4):
        Hd = pb._hessian_chunk(np.arange(pb.intervals), V0, e * np.maximum(1.0, np.abs(V0)),
                               0.7, nu)
        diffs.append(0.5 * (Hd + Hd.transpose(0, 2, 1)))
    scale = np.abs(He).max()
    err = [np.abs(Hd - He).max() / scale for Hd in diffs]
    assert 1e-9 < err[0] and 3.9 < err[0] / err[1] < 4.1 and 3.9 < err[1] / err[2] < 4.1, err
    # Richardson's extrapolation gains three digits or more over the differences
    richardson = (4 * diffs[2] - diffs[1]) / 3
    assert np.abs(richardson - He).max() < 1e-3 * err[0] * scale


@pytest.mark.parametrize("terms", [False, True])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_exact_hessian_assembled_equals_differences_of_the_gradient(name, terms):
    """hess_values with the exact curvature (the cost's part and a free duration's sums
    included) against central differences of the whole Lagrangian's gradient."""
    pb = _problem(name, "simpson", True, terms=terms)
    z, nu = _point(pb, 3)
    nu[pb.intervals * 2 * pb.system.n:pb.intervals * 2 * pb.system.n + pb._nend] = 0.0
    pb._use_hessian("exact")
    assert pb._curvature is not None
    check_derivatives(pb, z, nu, hess=1e-6)


@pytest.mark.parametrize("method", ["simpson", "lobatto4"])
def test_solves_with_the_exact_hessian_match_the_differences(method):
    """The damped crane, minimum effort and time: "auto" takes the exact Hessian for a
    SymPy system; the optimum is the one with the difference Hessian, at a KKT point."""
    sols = {}
    for hessian in ("auto", "differences"):
        pb = _problem("crane", method, True, N=10)
        sols[hessian] = pb.solve("slsqp" if not _has_ipopt() else "ipopt", hessian=hessian)
        assert sols[hessian].hessian == ("exact" if hessian == "auto" else hessian)
    a, d = sols["auto"], sols["differences"]
    assert a.success and a.kkt_residual < 1e-10 and d.kkt_residual < 1e-10
    assert abs(a.cost - d.cost) < 1e-10 and abs(a.duration - d.duration) < 1e-9


def _has_ipopt():
    from symplectic.control import _ipopt
    return _ipopt.available()


def test_what_the_exact_hessian_does_not_cover_is_named():
    """hessian="exact" names the part it cannot differentiate twice; "auto" then takes the
    differences."""
    pend = sp.systems.pendulum(m=1.0, omega=3.0)
    cases = [
        (control.Problem(pend, 1.0, 4, inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [1.0], "qdot": [0.0]}), "not from SymPy"),
        (control.Problem(_crane(), 1.0, 4, inputs=[1.0, 0.0],
                         start={"q": [0, 0], "qdot": [0, 0]},
                         cost=control.effort(1.0) + control.running(
                             lambda t, q, v, u: q[1] ** 2,
                             lambda t, q, v, u: (np.array([0, 2 * q[1]]), np.zeros(2),
                                                 np.zeros(1)))),
         "running cost"),
        (control.Problem(_crane(), 1.0, 4, inputs=lambda q: np.array([[1.0], [0.0]]),
                         start={"q": [0, 0], "qdot": [0, 0]}), "callable"),
    ]
    for pb, what in cases:
        with pytest.raises(ValueError, match=what):
            pb._use_hessian("exact")
        pb._use_hessian("auto")
        assert pb._curvature is None
    with pytest.raises(ValueError, match="hessian must be"):
        cases[0][0].solve(hessian="exactly")
