"""Unstable step sizes named as such (issue 30, item 2).

Before the first step, integrate and integrate_many compare omega_max |h|
(omega_max: the fastest linearised mode at q0) with the method's stability
limit on the harmonic oscillator and warn; during the run the core stops an
energy growth that only an unstable step makes, with "unstable step size",
omega h and h_max in the message -- never a message blaming the user's
callback for values the integrator produced.  The limits in the registry
are checked here on the exact tangent map of the oscillator's step, and the
frequencies against eigenvalues computed here with SciPy.
"""
import math
import warnings

import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _registry

K_SPRING = 1e6                       # the stiff two-mass spring of the trial
OMEGA_SPRING = math.sqrt(2 * K_SPRING)
LIMITED = [m for m, d in sp.methods(details=True).items() if math.isfinite(d["stability"])]


def spectral_radius(method, omega_h):
    """max |eigenvalue| of the step's tangent map on q'' = -q at h = omega h."""
    S = sp.systems.linear([[1.0]], [[1.0]])
    D = sp.analysis.tangent_map(S, [0.3], [0.1], omega_h, method)
    return float(np.max(np.abs(np.linalg.eigvals(D))))


@pytest.mark.parametrize("method", LIMITED)
def test_each_limit_is_where_the_oscillators_step_turns_unstable(method):
    c = sp.methods(details=True)[method]["stability"]
    assert spectral_radius(method, 0.999 * c) <= 1 + 1e-10
    assert spectral_radius(method, 1.001 * c) > 1 + 1e-6
    for f in (0.25, 0.5, 0.9):                        # and stable below it
        assert spectral_radius(method, f * c) <= 1 + 1e-10


def test_known_limits():
    d = sp.methods(details=True)
    assert d["simpson"]["stability"] == pytest.approx(2 * math.sqrt(2), rel=1e-15)
    assert d["rk4"]["stability"] == pytest.approx(2 * math.sqrt(2), rel=1e-15)
    assert d["lobatto2"]["stability"] == 2.0
    for m in ("midpoint", "gauss2", "gauss3"):
        assert d[m]["stability"] == math.inf
        for omega_h in (1.0, 10.0, 100.0, 1e4):        # A-stable: no limit
            assert spectral_radius(m, omega_h) <= 1 + 1e-12, (m, omega_h)


@pytest.mark.parametrize("method", ["gauss2", "gauss3"])
def test_gauss_step_of_the_oscillator_is_the_diagonal_pade_approximant(method):
    """On q'' = -q the Gauss-Legendre scheme with s points is the s-stage Gauss collocation
    method: its one-step map has the eigenvalues R(+-i omega h), R the (s, s) Pade approximant
    of exp (Hairer, Lubich & Wanner, GNI II.1.3, IV.3), |R(iy)| = 1 for every y: the phase
    error is exp's to order 2s, the amplitude exact."""
    s = {"gauss2": 2, "gauss3": 3}[method]
    for y in (0.1, 1.0, 3.0, 50.0):
        z = 1j * y
        if s == 2:
            R = (1 + z / 2 + z * z / 12) / (1 - z / 2 + z * z / 12)
        else:
            R = (1 + z / 2 + z * z / 10 + z ** 3 / 120) / (1 - z / 2 + z * z / 10 - z ** 3 / 120)
        S = sp.systems.linear([[1.0]], [[1.0]])
        ev = np.linalg.eigvals(sp.analysis.tangent_map(S, [0.3], [0.1], y, method))
        assert np.min(np.abs(ev - R)) <= 1e-12 and np.min(np.abs(ev - np.conj(R))) <= 1e-12


# ---------------------------------------------------------------- the estimate
@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_omega_max_is_the_largest_generalized_eigenvalue(n):
    """(n = 1 and 2 are closed forms, larger n LAPACK: each against SciPy; K
    indefinite too -- a negative curvature is a divergence, not a frequency.)"""
    linalg = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(7 + n)
    for shift in (0.0, -1.0):
        A, B = rng.normal(size=(n, n)), rng.normal(size=(n, n))
        M, K = A @ A.T + 3 * np.eye(n), B @ B.T + shift * np.eye(n)
        S = sp.systems.linear(M, K)
        w2 = linalg.eigh(K, M, eigvals_only=True).max()
        w = math.sqrt(max(w2, 0.0))
        est = sp.analysis.stability_estimate(S, np.zeros(n), 0.1, "lobatto4")
        assert est.omega_max == pytest.approx(w, rel=1e-12)
        assert est.omega_h == pytest.approx(0.1 * w, rel=1e-12)
        c = _registry.METHODS["lobatto4"].stability
        assert est.h_max == (math.inf if w == 0.0 else pytest.approx(c / w, rel=1e-12))
    # the papers' double pendulum at rest hanging: its frequencies written out
    L = 9.81 / (2 * math.pi) ** 2
    dp = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
    est = sp.analysis.stability_estimate(dp, [0.0, 0.0], 0.01)
    assert est.omega_max == pytest.approx(sp.linear.double_pendulum_frequencies()[1], rel=1e-12)


def test_a_constraint_force_makes_the_frequency():
    """The Cartesian pendulum has V = m g y (no curvature): its frequency
    sqrt(g/l) comes from the rod's tension, the multiplier's term."""
    S = sp.systems.pendulum_cartesian(m=2.0, l=0.5, g=9.81)
    est = sp.analysis.stability_estimate(S, [0.0, -0.5], 0.01, p=[0.0, 0.0])
    assert est.omega_max == pytest.approx(math.sqrt(9.81 / 0.5), rel=1e-12)
    # off the vertical, at rest: g cos(theta) / l
    th = 0.4
    est = sp.analysis.stability_estimate(S, [0.5 * math.sin(th), -0.5 * math.cos(th)], 0.01)
    assert est.omega_max == pytest.approx(math.sqrt(9.81 * math.cos(th) / 0.5), rel=1e-12)


# ---------------------------------------------------------------- the trial's stiff spring
def spring_callables():
    k = K_SPRING
    return sp.System(2, mass=lambda q: np.eye(2),
                     potential=lambda q: 0.5 * k * (q[1] - q[0] - 1.0) ** 2,
                     potential_grad=lambda q: np.array([-k * (q[1] - q[0] - 1.0),
                                                        k * (q[1] - q[0] - 1.0)]),
                     potential_hess=lambda q: k * np.array([[1.0, -1.0], [-1.0, 1.0]]))


def spring_sympy():
    sy = pytest.importorskip("sympy")
    x1, x2, v1, v2 = sy.symbols("x1 x2 v1 v2")
    return sp.System.from_sympy((v1 ** 2 + v2 ** 2) / 2 - K_SPRING / 2 * (x2 - x1 - 1) ** 2,
                                [x1, x2], [v1, v2])


@pytest.mark.parametrize("form", [spring_callables, spring_sympy])
@pytest.mark.parametrize("method", ["simpson", "lobatto4", "lobatto5", "lobatto2", "rk4"])
def test_the_stiff_spring_at_omega_h_14_warns_then_names_an_unstable_step(form, method):
    """Two masses joined by a spring of k = 1e6 at omega h = 14: Simpson used
    to grow x 1e40 every 20 steps for 138 steps and then blame the callback
    (potential_grad returned a non-finite value at q = [-2.8e302, ...])."""
    S = form()
    h = 14.0 / OMEGA_SPRING
    with pytest.warns(sp.StabilityWarning, match="omega_max h = 14 at q0") as rec:
        with pytest.raises(sp.ConvergenceError) as info:
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], h, 1000, method)
    c = sp.methods(details=True)[method]["stability"]
    assert f"h_max = {c / OMEGA_SPRING:g}" in str(rec[0].message)
    err = info.value
    assert err.reason.startswith("unstable step size"), err.reason
    if method != "rk4":                    # the core's balance check: within 20 steps
        assert err.step < 20 and "omega_max h = 14" in err.reason
        assert f"h_max = {c / OMEGA_SPRING:g}" in err.reason
    for word in ("potential_grad", "callback", "returned"):
        assert word not in str(err)
    E = err.trajectory.energy                              # on every partial trajectory
    assert len(E) == err.step + 1


@pytest.mark.parametrize("form", [spring_callables, spring_sympy])
@pytest.mark.parametrize("method,omega_h", [("midpoint", 14.0), ("gauss2", 14.0),
                                            ("gauss3", 14.0), ("gauss2", 141.0),
                                            ("gauss3", 141.0)])
def test_the_a_stable_rules_return_a_bounded_trajectory(form, method, omega_h):
    S = form()
    h = omega_h / OMEGA_SPRING
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # no limit: no warning
        tr = sp.integrate(S, [0.0, 1.001], [0.0, 0.0], h, 1000, method)
    assert np.max(np.abs(tr.q[:, 1] - tr.q[:, 0] - 1.0)) <= 1.001e-3
    assert np.max(np.abs(tr.energy - tr.energy[0])) <= 1e-9 * tr.energy[0]


def test_no_warning_below_the_limit_for_every_method():
    S = spring_callables()
    for m, d in sp.methods(details=True).items():
        c = d["stability"] if math.isfinite(d["stability"]) else 10.0
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], 0.9 * c / OMEGA_SPRING, 30, m)
    ens_h = 1.1 * 2 * math.sqrt(2) / OMEGA_SPRING
    with pytest.warns(sp.StabilityWarning):                # integrate_many warns too
        sp.integrate_many(S, [[0.0, 1.001]], [[0.0, 0.0]], ens_h, 3, "simpson",
                          errors="mark")


def test_integrate_many_names_the_unstable_member():
    S = spring_callables()
    with pytest.warns(sp.StabilityWarning):
        with pytest.raises(sp.ConvergenceError, match=r"ensemble member 1.*unstable step size"):
            sp.integrate_many(S, [[0.0, 1.0], [0.0, 1.001]], np.zeros((2, 2)),
                              14.0 / OMEGA_SPRING, 100, "simpson")
