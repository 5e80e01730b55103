"""The run's tangent, ``integrate(..., tangent=True)`` and ``Integrator(..., tangent=True)``.

Phi_k = d(q_k, p_k)/d(q_0, p_0) against central differences of ``integrate`` itself (the
derivative of the discrete map, which the tangent claims to be exactly), the states with and
without it (bitwise), thinning and pieces, symplecticity of the product over 10^4 steps,
the Liouville balance of a damped run, and the refusals.  The tangent's convergence to the
flow's derivative is in tests/validation/test_tangent_reference.py.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic import forces
from support.differences import central_differences
from support.models import L_DP

METHODS = ["midpoint", "simpson", "lobatto4", "lobatto5", "rk4"]
Q_DP, P_DP = np.array([0.7, 1.1]), np.array([0.1, -0.2])


def J(n):
    return np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])


def rel_err(A, B):
    return float(np.max(np.abs(A - B)) / np.max(np.abs(B)))


# ---------------------------------------------------------------- against central differences
@pytest.mark.parametrize("method", METHODS)
def test_double_pendulum_tangent_is_the_derivative_of_the_run(method):
    dp = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    tr = sp.integrate(dp, Q_DP, P_DP, 0.01, 1000, method=method, tangent=True)
    assert tr.tangent.shape == (1001, 4, 4)
    assert np.array_equal(tr.tangent[0], np.eye(4))
    fd = central_differences(dp, Q_DP, P_DP, 0.01, 1000, method=method)
    assert rel_err(tr.tangent[-1], fd) < 1e-7


def test_chain8_tangent_is_the_derivative_of_the_run():
    ch = sp.systems.pendulum_chain(8)
    q0 = 0.5 * np.sin(1.3 * np.arange(8))
    p0 = np.zeros(8)
    tr = sp.integrate(ch, q0, p0, 0.005, 1000, tangent=True, store_every=1000)
    fd = central_differences(ch, q0, p0, 0.005, 1000)
    assert rel_err(tr.tangent[-1], fd) < 1e-7


@pytest.mark.parametrize("method", ["simpson", "lobatto4", "rk4"])
def test_sympy_cart_pendulum_damped_and_driven(method):
    """A SymPy cart with a 3-link pendulum, joint damping (linear_damping, in C) and a
    driving force on the cart (a Python callable of t and q, its Jacobian by finite
    differences in the core): the force's Jacobians enter the tangent as they enter Newton."""
    pytest.importorskip("sympy")
    from support.models_cart import cart_pendulum3
    S = cart_pendulum3()
    D = np.diag([0.3, 0.05, 0.05, 0.05])

    def drive(t, q, qd):
        return np.array([2.0 * math.cos(3.0 * t) - 0.5 * q[0], 0.0, 0.0, 0.0])

    f = forces.linear_damping(D) + forces.from_callable(drive, depends_on="q")
    q0, p0 = np.array([0.1, 0.3, -0.2, 0.4]), np.zeros(4)
    kw = dict(method=method, force=f)
    tr = sp.integrate(S, q0, p0, 0.01, 1000, tangent=True, store_every=1000, **kw)
    fd = central_differences(S, q0, p0, 0.01, 1000, **kw)
    assert rel_err(tr.tangent[-1], fd) < 1e-7


# ---------------------------------------------------------------- the states, thinning, pieces
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("newton", ["full", "chord", "step", "decoupled"])
def test_states_are_bitwise_those_without_the_tangent(method, newton):
    if method == "rk4" and newton != "full":
        pytest.skip("rk4 has no Newton")
    dp = sp.systems.double_pendulum(damping=0.1)
    kw = {} if method == "rk4" else dict(newton=newton)
    a = sp.integrate(dp, Q_DP, P_DP, 0.02, 400, method=method, tangent=True, **kw)
    b = sp.integrate(dp, Q_DP, P_DP, 0.02, 400, method=method, **kw)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
    assert np.array_equal(a.newton_iterations, b.newton_iterations)


def test_store_every_thins_the_tangent_like_the_states():
    dp = sp.systems.double_pendulum()
    full = sp.integrate(dp, Q_DP, P_DP, 0.01, 503, tangent=True)
    thin = sp.integrate(dp, Q_DP, P_DP, 0.01, 503, tangent=True, store_every=50)
    rows = list(range(0, 503, 50)) + [503]
    assert thin.tangent.shape == (len(rows), 4, 4)
    assert np.array_equal(thin.tangent, full.tangent[rows])


def test_integrator_pieces_carry_the_tangent_from_the_origin():
    dp = sp.systems.double_pendulum(damping=0.2)
    one = sp.integrate(dp, Q_DP, P_DP, 0.01, 400, tangent=True)
    it = sp.Integrator(dp, 0.01, Q_DP, P_DP, tangent=True)
    a = it.propagate(150)
    b = it.propagate(t_end=3.99, store_every=7)
    it.step()
    assert np.array_equal(a.tangent, one.tangent[:151])
    assert np.array_equal(b.tangent[-1], one.tangent[399])
    assert np.array_equal(it.tangent, one.tangent[400])
    it.reset(Q_DP, P_DP)
    assert np.array_equal(it.tangent, np.eye(4))


def test_integrator_tangent_on_k_columns():
    """A (2n, k) tangent carries those variations: Phi V, column by column."""
    dp = sp.systems.double_pendulum()
    one = sp.integrate(dp, Q_DP, P_DP, 0.01, 200, tangent=True)
    V = np.array([[1.0, 0.0], [0.5, 1.0], [0.0, -2.0], [0.25, 0.0]])
    it = sp.Integrator(dp, 0.01, Q_DP, P_DP, tangent=True)
    it.tangent = V
    tr = it.propagate(200)
    assert tr.tangent.shape == (201, 4, 2)
    assert np.allclose(tr.tangent[-1], one.tangent[-1] @ V, rtol=1e-12, atol=1e-12)


def test_exception_keeps_the_tangent_of_the_steps_done():
    calls = []

    def force(t, q, qd):
        calls.append(t)
        if t > 0.5:
            raise RuntimeError("stop here")
        return np.zeros(2)

    dp = sp.systems.double_pendulum()
    with pytest.raises(RuntimeError) as ei:
        sp.integrate(dp, Q_DP, P_DP, 0.01, 100, tangent=True, force=force,
                     force_jac=lambda t, q, qd: (np.zeros((2, 2)), np.zeros((2, 2))))
    part = ei.value.trajectory
    assert part.tangent is not None and len(part.tangent) == len(part.t)
    ref = sp.integrate(dp, Q_DP, P_DP, 0.01, len(part.t) - 1, tangent=True)
    assert np.allclose(part.tangent, ref.tangent, rtol=1e-13, atol=1e-13)


# ---------------------------------------------------------------- structure
@pytest.mark.parametrize("name", ["double_pendulum", "chain8"])
def test_tangent_is_symplectic_over_10000_steps(name):
    """Unforced, unconstrained: ||Phi^T J Phi - J|| / ||Phi||^2 <= 1e-12 for the product
    over 10^4 steps (the discrete map is symplectic; each step's D is exact to the root)."""
    if name == "double_pendulum":
        S, q0, p0, h = sp.systems.double_pendulum(), Q_DP, P_DP, 0.01
    else:
        S, q0, p0, h = sp.systems.pendulum_chain(8), 0.5 * np.sin(1.3 * np.arange(8)), \
            np.zeros(8), 0.005
    tr = sp.integrate(S, q0, p0, h, 10_000, tangent=True, store_every=10_000)
    Phi = tr.tangent[-1]
    Jn = J(S.n)
    assert np.linalg.norm(Phi.T @ Jn @ Phi - Jn) / np.linalg.norm(Phi) ** 2 < 1e-12


def test_rk4_tangent_is_not_symplectic():
    """The same test fails for rk4 (it would pass vacuously if the check were blind)."""
    tr = sp.integrate(sp.systems.double_pendulum(), Q_DP, P_DP, 0.05, 2000, method="rk4",
                      tangent=True, store_every=2000)
    Phi, Jn = tr.tangent[-1], J(2)
    assert np.linalg.norm(Phi.T @ Jn @ Phi - Jn) / np.linalg.norm(Phi) ** 2 > 1e-8


@pytest.mark.parametrize("method,tol", [("simpson", 5e-8), ("lobatto5", 1e-9)])
def test_damped_log_det_is_the_phase_space_contraction(method, tol):
    """Damped double pendulum: log det Phi_N equals the sum of log det of the one-step maps
    (analysis.tangent_map with the force, a separate entry point) and, to the method's error,
    -int_0^T tr(M(q)^-1 D) dt along the run (Liouville), here by the composite Simpson rule
    on the stored nodes (error O(h^4)).  Measured: 5e-9 (simpson), 8e-11 (lobatto5); midpoint's
    8e-4 would fail either tolerance."""
    c = (0.3, 0.1)
    dp = sp.systems.double_pendulum(damping=c)
    Dm = np.array([[c[0] + c[1], -c[1]], [-c[1], c[1]]])
    h, N = 0.01, 1000
    tr = sp.integrate(dp, Q_DP, P_DP, h, N, method=method, tangent=True)
    logdet = np.linalg.slogdet(tr.tangent[-1])[1]
    steps = sum(np.linalg.slogdet(sp.analysis.tangent_map(dp, tr.q[k], tr.p[k], h, method))[1]
                for k in range(N))
    assert abs(logdet - steps) < 1e-10 * abs(logdet)
    def M(q):   # the double pendulum's mass matrix, m1 = m2 = 1 kg, l1 = l2 = 1 m
        c12 = math.cos(q[0] - q[1])
        return np.array([[2.0, c12], [c12, 1.0]])

    tr_rate = np.array([np.trace(np.linalg.solve(M(q), Dm)) for q in tr.q])
    w = np.ones(N + 1)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    integral = h / 3.0 * np.dot(w, tr_rate)
    assert abs(logdet + integral) < tol * abs(integral)


# ---------------------------------------------------------------- refusals
def test_tangent_refusals():
    dp = sp.systems.double_pendulum()
    with pytest.raises(TypeError, match="t_eval"):
        sp.integrate(dp, Q_DP, P_DP, 0.01, 10, tangent=True, t_eval=[0.05])
    with pytest.raises(TypeError, match="tangent must be True or False"):
        sp.integrate(dp, Q_DP, P_DP, 0.01, 10, tangent="yes")
    it = sp.Integrator(dp, 0.01, Q_DP, P_DP)
    assert it.tangent is None
    with pytest.raises(ValueError, match="tangent=True"):
        it.tangent = np.eye(4)
    it = sp.Integrator(dp, 0.01, Q_DP, P_DP, tangent=True)
    with pytest.raises(ValueError, match=r"shape \(2n, k\)"):
        it.tangent = np.eye(3)
    with pytest.raises(ValueError, match="finite"):
        it.tangent = np.full((4, 1), np.nan)
    with pytest.raises(TypeError, match="t_eval"):
        it.propagate(10, t_eval=[0.05])


@pytest.mark.parametrize("method,closed_form", [("simpson", True), ("simpson", False),
                                                ("midpoint", True)])
def test_linear_system_tangent_is_the_propagator_power(method, closed_form):
    """A quadratic Lagrangian: every step's map is the closed form's propagator (linear
    .propagator, the papers' (p, q) order), so Phi_N is its N-th power, reordered to (q, p);
    both the closed form's workspace and Newton's give it."""
    M = np.array([[2.0, 0.3], [0.3, 1.0]])
    K = np.array([[5.0, -1.0], [-1.0, 3.0]])
    S = sp.systems.linear(M, K)
    h, N = 0.05, 200
    tr = sp.integrate(S, [0.3, -0.1], [0.0, 0.2], h, N, method=method, tangent=True,
                      closed_form=closed_form)
    P = sp.linear.propagator(M, K, h, "newmark" if method == "midpoint" else method)
    swap = np.block([[np.zeros((2, 2)), np.eye(2)], [np.eye(2), np.zeros((2, 2))]])
    want = swap @ np.linalg.matrix_power(P, N) @ swap
    assert rel_err(tr.tangent[-1], want) < 1e-11


def test_python_callables_tangent():
    """A double pendulum of Python callables: with M, dM/dq and grad V given (the Hessians by
    the core's finite differences) its tangent is the built-in's to 1e-9; with M and V alone
    (every derivative by finite differences) to about 1e-6, as integrate's docstring says."""
    def mass(q):
        c = math.cos(q[0] - q[1])
        return np.array([[2.0, c], [c, 1.0]])

    def mass_grad(q):
        s = math.sin(q[0] - q[1])
        return np.array([[[0.0, -s], [-s, 0.0]], [[0.0, s], [s, 0.0]]])

    def potential(q):
        return -2 * 9.81 * math.cos(q[0]) - 9.81 * math.cos(q[1])

    def potential_grad(q):
        return np.array([2 * 9.81 * math.sin(q[0]), 9.81 * math.sin(q[1])])

    ref = sp.integrate(sp.systems.double_pendulum(), Q_DP, P_DP, 0.01, 1000, tangent=True,
                       store_every=1000).tangent[-1]
    given = sp.System(2, mass, potential, mass_grad=mass_grad, potential_grad=potential_grad)
    bare = sp.System(2, mass, potential)
    for S, tol in ((given, 1e-9), (bare, 1e-5)):
        got = sp.integrate(S, Q_DP, P_DP, 0.01, 1000, tangent=True, store_every=1000).tangent[-1]
        assert rel_err(got, ref) < tol
