"""The exact forward sensitivities against an independent reference, and the reference's checks.

The reference (tests/support/variational.py) integrates the continuous variational equations
of Hamilton's equations, derived with SymPy from Lagrangians built from the point masses'
positions, with DOP853 at rtol = atol = 1e-13.  Its checks here: the model matches the
docstrings of ``systems.double_pendulum`` / ``pendulum_chain``; Phi against central
differences of its own flow; Phi^T J Phi = J without damping; det Phi = exp(-int tr(M^-1 D))
with damping (Liouville); its error estimated against a tighter solve.

The schemes' state-transition matrix Phi_N = d(q_N, p_N)/d(q_0, p_0) (rows and columns
ordered (q, p), p the canonical momentum) comes from :func:`phi_of_run`.  Error: max over
the entries of Phi_N - Phi(T), relative to max |Phi(T)|; the fitted order of that error in h
(``analysis.convergence_order``, all points in the asymptotic range, none dropped as plateau)
is the method's order: midpoint 2, simpson 4, lobatto4 6, lobatto5 8, gauss2 4, gauss3 6.
"""
import functools
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import G, L_DP

pytest.importorskip("scipy")
pytest.importorskip("sympy")

from support import variational as vr  # noqa: E402


def phi_of_run(system, q0, p0, h, n_steps, method):
    """Phi_N = d(q_N, p_N)/d(q_0, p_0) of an ``n_steps`` run of step h, (2n, 2n): the
    run's own tangent (``integrate(..., tangent=True)``), its last row alone."""
    traj = sp.integrate(system, q0, p0, h, n_steps, method=method, tangent=True,
                        store_every=n_steps)
    return traj.tangent[-1]


# ---------------------------------------------------------------- cases
Q_DP = (math.pi / 4, math.pi / 3)
QDOT_DP = (1.0, -1.5)                      # rad/s
C_DP = (0.02, 0.01)                        # N m s/rad: pivot, elbow
Q_CHAIN = tuple(0.5 + 0.1 * i for i in range(8))

# name -> (reference, system, q0, qdot0, T (s))
CASES = {
    "dp_rest": (lambda: vr.double_pendulum(), lambda: sp.systems.double_pendulum(l1=L_DP, l2=L_DP),
                Q_DP, (0.0, 0.0), 1.5),
    "dp_moving": (lambda: vr.double_pendulum(),
                  lambda: sp.systems.double_pendulum(l1=L_DP, l2=L_DP), Q_DP, QDOT_DP, 1.5),
    "dp_damped": (lambda: vr.double_pendulum(damping=C_DP),
                  lambda: sp.systems.double_pendulum(l1=L_DP, l2=L_DP, damping=C_DP),
                  Q_DP, QDOT_DP, 1.5),
    "chain8": (lambda: vr.pendulum_chain(8), lambda: sp.systems.pendulum_chain(8),
               Q_CHAIN, (0.0,) * 8, 1.0),
}


@functools.lru_cache(maxsize=None)
def case(name):
    """(reference, system, q0, p0, T, Phi_ref(T)) of a case; p0 = M(q0) qdot0 from the reference."""
    make_ref, make_sys, q0, qdot0, T = CASES[name]
    ref = make_ref()
    q0 = np.array(q0)
    p0 = ref.mass(q0) @ np.array(qdot0)
    return ref, make_sys(), q0, p0, T, ref(q0, p0, [0.0, T])[2][-1]


def rel_err(Phi, Phi_ref):
    return float(np.max(np.abs(Phi - Phi_ref)) / np.max(np.abs(Phi_ref)))


# ---------------------------------------------------------------- the reference's checks
def test_reference_model_matches_the_docstrings():
    """M, -dV/dq and D of the position-built chains against the formulae of the docstrings."""
    rng = np.random.default_rng(33)
    m1, m2, l1, l2 = 1.0, 1.0, L_DP, L_DP
    ref = vr.double_pendulum(damping=C_DP)
    for q in rng.uniform(-3, 3, (5, 2)):
        c = math.cos(q[0] - q[1])
        M = np.array([[(m1 + m2) * l1 ** 2, m2 * l1 * l2 * c], [m2 * l1 * l2 * c, m2 * l2 ** 2]])
        np.testing.assert_allclose(ref.mass(q), M, rtol=1e-14, atol=1e-16)
        force = -np.array([(m1 + m2) * G * l1 * math.sin(q[0]), m2 * G * l2 * math.sin(q[1])])
        np.testing.assert_allclose(ref.vector_field(q, np.zeros(2))[1], force, rtol=1e-13,
                                   atol=1e-14)
        c1, c2 = C_DP
        np.testing.assert_allclose(ref.damping(q), [[c1 + c2, -c2], [-c2, c2]], rtol=1e-14)
    ms, ls, cs = np.array([1.0, 0.5, 2.0, 0.7]), np.array([0.3, 1.1, 0.6, 0.9]), [0.1, 0, .3, .2]
    ref = vr.pendulum_chain(4, m=ms, l=ls, damping=cs)
    mu = np.cumsum(ms[::-1])[::-1]
    delta = np.eye(4) - np.eye(4, k=-1)
    for q in rng.uniform(-3, 3, (5, 4)):
        M = np.array([[ls[i] * ls[j] * mu[max(i, j)] * math.cos(q[i] - q[j]) for j in range(4)]
                      for i in range(4)])
        np.testing.assert_allclose(ref.mass(q), M, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(ref.vector_field(q, np.zeros(4))[1],
                                   -G * mu * ls * np.sin(q), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(ref.damping(q), delta.T @ np.diag(cs) @ delta, atol=1e-16)


def test_reference_from_m_and_v_agrees_with_the_position_built_one():
    """variational_reference on the docstring's M(q), V(q), D of the damped double pendulum
    (SymPy, written out here) against vr.double_pendulum (from the masses' positions): the
    whole (q, p, Phi) at 21 times over T = 1.5 s."""
    import sympy as sy
    q1, q2 = sy.symbols("q1 q2", real=True)
    m1, m2, l1, l2, g = 1.0, 1.0, L_DP, L_DP, G
    c1, c2 = C_DP
    k = m2 * l1 * l2 * sy.cos(q1 - q2)
    M = sy.Matrix([[(m1 + m2) * l1 ** 2, k], [k, m2 * l2 ** 2]])
    V = -(m1 + m2) * g * l1 * sy.cos(q1) - m2 * g * l2 * sy.cos(q2)
    D = sy.Matrix([[c1 + c2, -c2], [-c2, c2]])
    generic = vr.variational_reference(M, V, [q1, q2], D)
    ref, _, q0, p0, T, _ = case("dp_damped")
    t = np.linspace(0.0, T, 21)
    for a, b in zip(generic(q0, p0, t), ref(q0, p0, t)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.max(np.abs(b)))


@pytest.mark.parametrize("name", ["dp_moving", "dp_damped"])
def test_reference_phi_against_central_differences(name):
    """Phi(T) against the 4-point central differences of the reference's own flow.

    Increments 1e-3 rad in q and 1e-3 rad/s times max|M(q0)| in p: the stencil's truncation
    (~delta^4) and the solver's noise amplified by 1/delta (~1e-13 / 1e-3) are both < 1e-9.
    """
    ref, _, q0, p0, T, Phi = case(name)
    n = len(q0)
    y0 = np.concatenate([q0, p0])
    steps = np.r_[np.full(n, 1e-3), np.full(n, 1e-3 * np.max(np.abs(ref.mass(q0))))]

    def flow(y):
        q, p, _ = ref(y[:n], y[n:], [0.0, T])
        return np.concatenate([q[-1], p[-1]])

    F = np.empty((2 * n, 2 * n))
    for k in range(2 * n):
        e = np.zeros(2 * n)
        e[k] = steps[k]
        F[:, k] = (8 * (flow(y0 + e) - flow(y0 - e)) - (flow(y0 + 2 * e) - flow(y0 - 2 * e))) \
            / (12 * steps[k])
    assert rel_err(F, Phi) < 1e-9


@pytest.mark.parametrize("name", ["dp_moving", "chain8"])
def test_reference_is_symplectic_without_damping(name):
    """max |Phi^T J Phi - J| / max|Phi|^2 at 11 times in [0, T]."""
    ref, _, q0, p0, T, _ = case(name)
    J = vr.symplectic_J(len(q0))
    _, _, Phis = ref(q0, p0, np.linspace(0.0, T, 11))
    defect = max(np.max(np.abs(P.T @ J @ P - J)) / np.max(np.abs(P)) ** 2 for P in Phis)
    assert defect < 1e-12


@pytest.mark.parametrize("damped", ["dp_damped", "chain4_damped"])
def test_reference_liouville_with_damping(damped):
    """det Phi(t) = exp(-int_0^t tr(M^-1 D) dt') along the reference.

    The integral: 8-node Gauss-Legendre on 240 panels of [0, T].  For the 4-chain (T = 2 s,
    exponent 12.9) 30, 60, 120, 240 and 600 panels give exponents differing in turn by 4e-7,
    2e-10, 1e-14, 2e-14: 240 panels are converged.
    """
    if damped == "dp_damped":
        ref, _, q0, p0, T, _ = case("dp_damped")
    else:
        ref = vr.pendulum_chain(4, m=[1.0, 0.5, 2.0, 0.7], l=[0.3, 1.1, 0.6, 0.9],
                                damping=[0.1, 0.0, 0.3, 0.2])
        q0, p0, T = np.array([0.4, -0.3, 1.0, 0.2]), np.array([0.1, 0.0, -0.2, 0.05]), 2.0
    edges, expo = vr.liouville_exponent(ref, q0, p0, T, panels=240)
    times, expo = edges[::24], expo[::24]
    _, _, Phis = ref(q0, p0, times)
    assert expo[-1] > 1.0                               # the volume does shrink
    dets = np.array([np.linalg.det(P) for P in Phis])
    np.testing.assert_allclose(dets, np.exp(-expo), rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_error_estimate(name):
    """Phi(T) at rtol = atol = 1e-13 against a tighter solve (rtol 2.3e-14, atol 1e-15)."""
    ref, _, q0, p0, T, Phi = case(name)
    tight = ref(q0, p0, [0.0, T], rtol=2.3e-14, atol=1e-15)[2][-1]
    assert rel_err(Phi, tight) < 1e-12


# ---------------------------------------------------------------- orders of the schemes' tangent
ORDER = {"midpoint": 2, "simpson": 4, "lobatto4": 6, "lobatto5": 8, "gauss2": 4, "gauss3": 6}
TOL = 0.15
# steps N over [0, T]: the asymptotic range (local orders within 0.1 of the order) with the
# errors >= ~1e-11, 100 times the reference's (test_reference_error_estimate)
STEPS = {"midpoint": (100, 200, 400, 800), "simpson": (50, 100, 200, 400),
         "lobatto4": (40, 60, 80, 120), "lobatto5": (50, 60, 70, 80),
         "gauss2": (50, 100, 200, 400), "gauss3": (60, 80, 120, 160)}
CHAIN_STEPS = {"simpson": (25, 50, 100, 200), "lobatto4": (20, 30, 40, 60)}
ORDER_CASES = ([(name, m, STEPS[m]) for name in ("dp_rest", "dp_moving", "dp_damped")
                for m in ORDER]
               + [("chain8", m, CHAIN_STEPS[m]) for m in CHAIN_STEPS])


@pytest.mark.parametrize("name, method, steps", ORDER_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in ORDER_CASES])
def test_tangent_order(name, method, steps):
    ref, system, q0, p0, T, Phi_ref = case(name)
    hs = np.array([T / N for N in steps])
    errs = np.array([rel_err(phi_of_run(system, q0, p0, T / N, N, method), Phi_ref)
                     for N in steps])
    fit = sp.analysis.convergence_order(hs, errs, full=True)
    assert fit.used.all()
    assert errs.min() > 1e-11
    assert fit.order == pytest.approx(ORDER[method], abs=TOL)
