"""The exact Hessian of a control problem's dynamics (symplectic/control/_curvature.py, the
second-order adjoint of the Galerkin step) for systems from SymPy.

Expected values, all independent of the code under test: the step's first derivatives from
the C core (the end's derivative that the adjoint's own equations give must equal them), and
central differences of the C core's exact gradients at step e, which approach the Hessian as
e^2 (halving e divides their error by 4, and Richardson's extrapolation of two of them gains
three digits or more: measured 4e-13 to 6e-12 relative).  The systems: a crane with Rayleigh
damping and a constant input matrix; a two-link arm whose own force has inputs through B(q)
and configuration- and velocity-dependent friction (the input rows' curvature through the
points' states); the crane driven by a time-dependent force -- each also with a running cost
and a path constraint of (t, q, qdot, u) from SymPy --; and a bead on a curve in space (two
holonomic constraints with third derivatives: the constrained step's impulses and hidden
constraint)."""
import functools

import numpy as np
import pytest

import symplectic as sp
from support.control_checks import check_derivatives
from symplectic import control
from symplectic.control import _hessian

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


@functools.lru_cache(maxsize=None)
def _bead():
    """A bead on a curve in space: two holonomic constraints with third derivatives, a
    configuration-dependent mass matrix and damping (n = 3)."""
    x, y, z, xd, yd, zd = sy.symbols("x y z xd yd zd")
    M = sy.diag(1, 2, 1) + sy.diag(0, 0, 1) * sy.cos(x) / 3
    g = [x ** 2 + y ** 2 + z ** 2 - 1 + x * y ** 2 / 5, z - sy.sin(x * y) / 3]
    return sp.System.from_sympy((M, 9.81 * y), [x, y, z], [xd, yd, zd], constraints=g,
                                dissipation=(xd ** 2 + yd ** 2 + zd ** 2) / 10)


def _bead_problem(method, free, N=6):
    cost = control.effort(2.0) + control.duration() if free else control.effort(2.0)
    return control.Problem(_bead(), 1.0, N, method=method, inputs=[[1.0], [0.0], [0.5]],
                           start={"q": [0.0, -1.0, 0.0], "qdot": [0.0, 0.0, 0.0]},
                           end={"q": [np.nan, -0.8, np.nan]}, cost=cost,
                           free_duration=(0.5, 5.0) if free else None)


def _limit_of_differences(pb, z, nu, tol_first=1e-11):
    """The end's derivative from the adjoint's equations equals the C core's (relative
    tol_first); the Hessian is the limit of central differences of the C core's gradient:
    their error falls by 4 when the step halves, and Richardson's extrapolation of two of
    them gains three digits or more."""
    pb.use_hessian("exact")
    dy = pb.transcription.steps(z).jac
    D = pb.nlp.curvature.end_derivative(pb.nlp, z)
    assert np.abs(D - dy).max() < tol_first * np.abs(dy).max()
    He = pb.nlp.curvature.hessians(pb.nlp, z, 0.7, nu)
    V0 = z[pb.transcription.blocks]
    if pb.free:
        V0 = np.hstack([V0, np.full((pb.intervals, 1), z[-1])])
    diffs = []
    for e in (1e-3, 5e-4, 2.5e-4):
        Hd = _hessian.difference_quotients(pb.nlp, np.arange(pb.intervals), V0,
                                          e * np.maximum(1.0, np.abs(V0)), 0.7, nu)
        diffs.append(0.5 * (Hd + Hd.transpose(0, 2, 1)))
    scale = np.abs(He).max()
    err = [np.abs(Hd - He).max() / scale for Hd in diffs]
    assert 1e-9 < err[0] and 3.9 < err[0] / err[1] < 4.1 and 3.9 < err[1] / err[2] < 4.1, err
    richardson = (4 * diffs[2] - diffs[1]) / 3
    assert np.abs(richardson - He).max() < 1e-3 * err[0] * scale


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
    z = pb.guess(None) + 0.3 * rng.standard_normal(pb.n_variables)
    if pb.free:
        z[-1] = 2.0                          # the duration T
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
    # the C core's d/dt of a force of time (column h with a free duration) is a central
    # difference: ~1e-10
    _limit_of_differences(pb, z, nu, 1e-9 if name == "driven" and free else 1e-11)


@pytest.mark.parametrize("free", [False, True])
@pytest.mark.parametrize("method", METHODS)
def test_the_constrained_exact_hessian_is_the_limit_of_differences(method, free):
    """The constrained step (impulses, the hidden constraint through w = M^-1 p): the bead,
    from a guess of random inputs (its nodes on the manifold from the steps)."""
    pb = _bead_problem(method, free)
    rng = np.random.default_rng(3)
    z = pb.guess({"u": 2 * rng.standard_normal((pb.intervals, pb.P, 1))})
    if free:
        z[-1] = 1.0                          # the duration T
    _limit_of_differences(pb, z, rng.standard_normal(len(pb.constraint_bounds()[0])))


@pytest.mark.parametrize("terms", [False, True])
@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_exact_hessian_assembled_equals_differences_of_the_gradient(name, terms):
    """hess_values with the exact curvature (the cost's part and a free duration's sums
    included) against central differences of the whole Lagrangian's gradient."""
    pb = _problem(name, "simpson", True, terms=terms)
    z, nu = _point(pb, 3)
    nu[pb.intervals * 2 * pb.system.n:pb.intervals * 2 * pb.system.n + pb.nlp.n_end] = 0.0
    pb.use_hessian("exact")
    assert pb.nlp.curvature is not None
    check_derivatives(pb, z, nu, hess=1e-6)


def test_constrained_exact_hessian_assembled_equals_differences_of_the_gradient():
    pb = _bead_problem("simpson", True)
    rng = np.random.default_rng(5)
    z = pb.guess({"u": rng.standard_normal((pb.intervals, pb.P, 1))})
    z[-1] = 1.0                              # the duration T
    pb.use_hessian("exact")
    assert type(pb.nlp.curvature).__name__ == "ConstrainedCurvature"
    check_derivatives(pb, z, rng.standard_normal(len(pb.constraint_bounds()[0])), hess=1e-6)


@pytest.mark.parametrize("method", ["simpson", "lobatto4"])
def test_solves_with_the_exact_hessian_match_the_differences(method):
    """The damped crane, minimum effort and time: "auto" takes the exact Hessian for a
    SymPy system; the optimum is the one with the difference Hessian, at a KKT point.
    IPOPT (SLSQP stops at its iteration limit here with lobatto4; trust-constr's SymPy
    constrained case is test_constrained_swing_up_with_the_exact_hessian)."""
    pytest.importorskip("ipyopt")
    sols = {}
    for hessian in ("auto", "differences"):
        pb = _problem("crane", method, True, N=10)
        sols[hessian] = pb.solve("ipopt", hessian=hessian)
        assert sols[hessian].hessian == ("exact" if hessian == "auto" else hessian)
    a, d = sols["auto"], sols["differences"]
    assert a.success and a.kkt_residual < 1e-10 and d.kkt_residual < 1e-10
    assert abs(a.cost - d.cost) < 1e-10 and abs(a.duration - d.duration) < 1e-9


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
            pb.use_hessian("exact")
        pb.use_hessian("auto")
        assert pb.nlp.curvature is None
    with pytest.raises(ValueError, match="hessian must be"):
        cases[0][0].solve(hessian="exactly")


@pytest.mark.parametrize("solver", ["ipopt", "trust-constr"])
def test_constrained_swing_up_with_the_exact_hessian(solver):
    """The Cartesian pendulum's swing-up (test_control.py's on 12 intervals, its constraint
    from SymPy): "auto" takes the constrained exact Hessian; the optimum is the built-in
    pendulum's with the difference Hessian (the same transcription, its derivatives by hand
    in C)."""
    if solver == "ipopt":
        pytest.importorskip("ipyopt")
    x, y = sy.symbols("x y")
    cart = sp.System.from_sympy((sy.eye(2), 9.81 * y), [x, y], constraints=[x ** 2 + y ** 2 - 1])
    phi = np.pi * np.linspace(0.0, 1.0, 13)
    guess = {"q": np.column_stack([np.sin(phi), -np.cos(phi)]),
             "p": np.column_stack([np.cos(phi), np.sin(phi)]) * np.pi / 3}
    sols = []
    for system in (cart, sp.systems.pendulum_cartesian(m=1.0, l=1.0, g=9.81)):
        pb = control.Problem(system, 3.0, 12, inputs=[1.0, 0.0],
                             start={"q": [0.0, -1.0], "qdot": [0.0, 0.0]},
                             end={"q": [np.nan, 1.0], "qdot": [0.0, np.nan]},
                             cost=control.effort(2.0), rtol=1e-14)
        sols.append(pb.solve(solver, guess=guess))
    exact, diff = sols
    assert exact.hessian == "exact" and diff.hessian == "differences"
    # neither polish gets below ~1e-8 on this problem (with either Hessian): the costs agree
    # to what the first-order residuals allow
    assert exact.success and exact.kkt_residual < 1e-6 and diff.kkt_residual < 1e-6
    assert abs(exact.cost - diff.cost) < 1e-6 * diff.cost
