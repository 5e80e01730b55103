"""``sp.sensitivity.lyapunov``: the Lyapunov spectrum from the run's tangent.

Checked against the finite-time exponents of an independent reference (the continuous
variational equations, tests/support/variational.py, DOP853 at 1e-13: one QR of Phi(T)
gives the same finite-time exponents as re-orthonormalising along the way), their
convergence in h at the method's order, the structure of a symplectic map's spectrum
(pairs lambda_i = -lambda_{2n+1-i}, a pair -> 0), an integrable system (lambda_max -> 0),
and the phase-space contraction of a damped one.
"""
import math

import numpy as np
import pytest

import symplectic as sp

DP_CHAOS = (np.array([2.0, 2.5]), np.zeros(2))     # released from rest, chaotic


@pytest.fixture(scope="module")
def finite_time_reference():
    """The double pendulum (m = l = 1) from DP_CHAOS over T = 5 s: log |diag R| / T of the
    QR of the reference's Phi(T), largest first."""
    pytest.importorskip("scipy")
    pytest.importorskip("sympy")
    from support import variational as vr
    ref = vr.double_pendulum(l1=1.0, l2=1.0)
    T = 5.0
    _, _, Phi = ref(*DP_CHAOS, np.array([0.0, T]))
    R = np.linalg.qr(Phi[-1])[1]
    return T, np.sort(np.log(np.abs(np.diag(R))) / T)[::-1]


def test_finite_time_exponents_converge_to_the_reference_at_the_method_order(
        finite_time_reference):
    T, ref = finite_time_reference
    dp = sp.systems.double_pendulum()
    hs = np.array([0.02, 0.01, 0.005])
    err = np.array([np.max(np.abs(sp.sensitivity.lyapunov(dp, *DP_CHAOS, h, int(round(T / h)),
                                                           every=50) - ref)) for h in hs])
    order = sp.analysis.convergence_order(hs, err)
    assert abs(order - 4.0) < 0.3, (order, err)
    assert err[-1] < 5e-5
    # lobatto5 (order 8) at h = 0.02 is closer than simpson at 0.005
    l5 = sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.02, int(round(T / 0.02)), method="lobatto5")
    assert np.max(np.abs(l5 - ref)) < 1e-5


def test_chaotic_double_pendulum_spectrum_comes_in_pairs():
    """Symplectic map: the exponents pair, |lambda_i + lambda_{2n+1-i}| <= 1e-3 lambda_max
    over 10^5 steps, and the middle pair (along the flow, across the energy shell) falls
    towards 0 as the run grows; their sum is 0 to rounding (det Phi = 1)."""
    dp = sp.systems.double_pendulum()
    short = sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.02, 10_000, every=50)
    lam = sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.02, 100_000, every=50)
    assert lam[0] > 1.0                                   # chaotic: about 1.46 /s
    assert np.all(np.diff(lam) <= 0)
    assert np.max(np.abs(lam + lam[::-1])) <= 1e-3 * lam[0]
    assert abs(lam.sum()) < 1e-12
    assert max(abs(lam[1]), abs(lam[2])) < 0.01 * lam[0]
    assert max(abs(lam[1]), abs(lam[2])) < max(abs(short[1]), abs(short[2]))


def test_integrable_pendulum_exponent_falls_to_zero():
    """The pendulum is integrable: its largest finite-time exponent falls like log(T)/T."""
    pend = sp.systems.pendulum()
    lam = [sp.sensitivity.lyapunov(pend, [1.0], [0.0], 0.01, N)[0] for N in (1000, 10_000,
                                                                            100_000)]
    assert lam[0] > lam[1] > lam[2] > 0
    assert lam[2] < 0.01


def test_damped_spectrum_sums_to_the_mean_contraction():
    """With F = -D qdot the exponents sum to the time average of -tr(M(q)^-1 D) over the run
    (here by the composite Simpson rule on a separate run's nodes, error O(h^4)), to the
    method's error: the difference falls 16-fold when h halves with simpson (measured 7.4e-7,
    4.6e-8 relative) and is 1e-11 with lobatto5 (the quadrature's error)."""
    c = (0.3, 0.1)
    dp = sp.systems.double_pendulum(damping=c)
    Dm = np.array([[c[0] + c[1], -c[1]], [-c[1], c[1]]])

    def rate(q):    # tr(M^-1 D), M of the double pendulum with m = l = 1
        c12 = math.cos(q[0] - q[1])
        return np.trace(np.linalg.solve(np.array([[2.0, c12], [c12, 1.0]]), Dm))

    def mismatch(method, h, T=20.0):
        N = int(round(T / h))
        lam = sp.sensitivity.lyapunov(dp, *DP_CHAOS, h, N, every=25, method=method)
        tr = sp.integrate(dp, *DP_CHAOS, h, N, method=method)
        w = np.ones(N + 1)
        w[1:-1:2], w[2:-1:2] = 4.0, 2.0
        mean = h / 3.0 * np.dot(w, [rate(q) for q in tr.q]) / T
        return abs(lam.sum() + mean) / mean

    e1, e2 = mismatch("simpson", 0.01), mismatch("simpson", 0.005)
    assert abs(math.log2(e1 / e2) - 4.0) < 0.3, (e1, e2)
    assert e2 < 1e-7
    assert mismatch("lobatto5", 0.01) < 1e-10


def test_k_largest_and_running_estimates():
    dp = sp.systems.double_pendulum()
    full = sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 3000, every=30)
    two = sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 3000, every=30, k=2)
    assert np.allclose(two, full[:2], rtol=1e-10, atol=1e-12)
    r = sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 3000, every=30, running=True)
    assert np.array_equal(r.exponents, full)
    assert r.estimates.shape == (100, 4) and len(r.t) == 100
    assert np.isclose(r.t[-1], 30.0) and np.array_equal(r.estimates[-1], full)


def test_lyapunov_refusals():
    dp = sp.systems.double_pendulum()
    with pytest.raises(ValueError, match=r"at most 4 exponents \(2n\)"):
        sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 10, k=5)
    for bad in (dict(every=0), dict(k=0), dict(every=2.5)):
        with pytest.raises(ValueError, match="integer >= 1"):
            sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 10, **bad)


# ---------------------------------------------------------------- gradient (discrete adjoint)
H_G, N_G = 0.01, 1000
Q_G, P_G = np.array([0.7, 1.1]), np.array([0.1, -0.2])
TARGET = np.array([0.2, -0.3])


def terminal_cost():
    return (lambda q, p: 0.5 * np.sum((q - TARGET) ** 2) + 0.1 * p @ p,
            lambda q, p: (q - TARGET, 0.2 * p))


def running_cost():
    return (lambda t, q, p: 0.5 * q @ q + math.sin(t) * p[0],
            lambda t, q, p: (q, np.array([math.sin(t), 0.0])))


def cost_of_ends(t, q, p, parts):
    """The cost on a run's rows, written out independently of sensitivity.gradient."""
    c = 0.0
    if "terminal" in parts:
        c += 0.5 * np.sum((q[-1] - TARGET) ** 2) + 0.1 * p[-1] @ p[-1]
    if "running" in parts:
        c += H_G * sum(0.5 * qk @ qk + math.sin(tk) * pk[0] for tk, qk, pk in zip(t[:-1], q[:-1],
                                                                               p[:-1]))
    return c


def ensemble_costs(system, held):
    """The terminal + running cost of the runs from (Q_G, P_G) under each held force of
    ``held`` (K, N_G, 2), vectorised over the members (the formulas of cost_of_ends)."""
    K = len(held)
    ens = sp.integrate_many(system, np.tile(Q_G, (K, 1)), np.tile(P_G, (K, 1)), H_G, N_G,
                            force=held)
    q, p, t = ens.q, ens.p, ens.t[:-1]
    end = 0.5 * np.sum((q[:, -1] - TARGET) ** 2, axis=1) + 0.1 * np.sum(p[:, -1] ** 2, axis=1)
    run = H_G * np.sum(0.5 * np.sum(q[:, :-1] ** 2, axis=2) + np.sin(t) * p[:, :-1, 0], axis=1)
    return end + run


def controls(N=N_G):
    return 0.2 * np.sin(np.outer(np.arange(N) * H_G, [1.3, 2.1]) + [0.0, 0.5])


@pytest.mark.parametrize("parts", [("terminal",), ("running",), ("terminal", "running")])
@pytest.mark.parametrize("method", ["simpson", "lobatto4", "rk4"])
def test_gradient_in_the_start_equals_central_differences(parts, method):
    dp = sp.systems.double_pendulum(damping=0.1)
    U = controls()
    cost = {k: (terminal_cost() if k == "terminal" else running_cost()) for k in parts}
    value, g = sp.sensitivity.gradient(dp, Q_G, P_G, H_G, N_G, cost, method=method, force=U)

    def C(q0, p0):
        tr = sp.integrate(dp, q0, p0, H_G, N_G, method=method, force=U)
        return cost_of_ends(tr.t, tr.q, tr.p, parts)

    assert abs(value - C(Q_G, P_G)) <= 1e-12 * abs(value)
    eps = 1e-6
    fd = np.empty(4)
    for j in range(4):
        e = np.zeros(4)
        e[j] = eps
        fd[j] = (C(Q_G + e[:2], P_G + e[2:]) - C(Q_G - e[:2], P_G - e[2:])) / (2 * eps)
    got = np.concatenate([g["q0"], g["p0"]])
    assert np.max(np.abs(got - fd)) <= 1e-7 * np.max(np.abs(fd))


@pytest.mark.slow
def test_gradient_in_every_row_of_a_1000_row_held_force():
    """All 2000 components of dC/dU against central differences (the four-point stencil,
    (8 [C(u+e) - C(u-e)] - [C(u+2e) - C(u-2e)]) / 12e with e = 1e-4: its truncation error
    O(e^4) and its rounding error 1e-15 C / e stay far below the tolerance, where the
    two-point stencil's rounding, 1e-8 here, is of the size of the smallest rows' gradient
    times 1e-6), the 8000 perturbed runs done as one ensemble (one held force per member)."""
    dp = sp.systems.double_pendulum(damping=0.1)
    U = controls()
    cost = {"terminal": terminal_cost(), "running": running_cost()}
    _, g = sp.sensitivity.gradient(dp, Q_G, P_G, H_G, N_G, cost, force=U, wrt=["force"])
    assert set(g) == {"force"} and g["force"].shape == U.shape
    eps = 1e-4
    steps = (eps, -eps, 2 * eps, -2 * eps)
    K = len(steps) * U.size
    forces_ = np.repeat(U[None], K, axis=0)
    for i, (k, c) in enumerate(np.ndindex(*U.shape)):
        for j, d in enumerate(steps):
            forces_[len(steps) * i + j, k, c] += d
    C = np.concatenate([ensemble_costs(dp, forces_[i:i + 500]) for i in range(0, K, 500)])
    C = C.reshape(-1, 4)
    fd = ((8 * (C[:, 0] - C[:, 1]) - (C[:, 2] - C[:, 3])) / (12 * eps)).reshape(U.shape)
    assert np.max(np.abs(g["force"] - fd)) <= 1e-7 * np.max(np.abs(fd))


def test_gradient_of_a_sympy_system_with_its_own_force():
    """A SymPy cart with a 3-link pendulum, joint damping on the system and held controls."""
    pytest.importorskip("sympy")
    from support.models_cart import cart_pendulum3
    S = cart_pendulum3()
    damping = sp.forces.linear_damping(np.diag([0.3, 0.05, 0.05, 0.05]))
    N = 200
    U = np.zeros((N, 4))
    U[:, 0] = np.cos(np.arange(N) * 0.05)
    q0, p0 = np.array([0.1, 0.3, -0.2, 0.4]), np.zeros(4)

    def force(Uk):
        return damping + sp.forces.Force(hold=Uk)

    cost = {"terminal": (lambda q, p: q[1] ** 2 + p @ p, lambda q, p: (np.eye(4)[1] * 2 * q[1],
                                                                      2 * p))}
    _, g = sp.sensitivity.gradient(S, q0, p0, 0.01, N, cost, force=force(U))

    def C(q0_, p0_, U_):
        tr = sp.integrate(S, q0_, p0_, 0.01, N, force=force(U_), store_every=N)
        return tr.q[-1][1] ** 2 + tr.p[-1] @ tr.p[-1]

    eps = 1e-6
    fd0 = np.empty(8)
    for j in range(8):
        e = np.zeros(8)
        e[j] = eps
        fd0[j] = (C(q0 + e[:4], p0 + e[4:], U) - C(q0 - e[:4], p0 - e[4:], U)) / (2 * eps)
    got = np.concatenate([g["q0"], g["p0"]])
    assert np.max(np.abs(got - fd0)) <= 1e-7 * np.max(np.abs(fd0))
    for k, c in [(0, 0), (77, 0), (150, 2), (199, 3)]:
        Up, Um = U.copy(), U.copy()
        Up[k, c] += eps
        Um[k, c] -= eps
        fd = (C(q0, p0, Up) - C(q0, p0, Um)) / (2 * eps)
        assert abs(g["force"][k, c] - fd) <= 1e-7 * np.max(np.abs(g["force"]))


def test_gradient_refusals():
    dp = sp.systems.double_pendulum()
    cost = {"terminal": terminal_cost()}
    plain = sp.System(2, np.eye(2), lambda q: 0.5 * q @ q, potential_grad=lambda q: q)
    with pytest.raises(NotImplementedError, match="params"):
        sp.sensitivity.gradient(plain, Q_G, P_G, 0.01, 10, cost, wrt=["q0", "params"],
                                params=["k"])
    with pytest.raises(ValueError, match=r'held force.*wrt=\("q0", "p0"\)'):
        sp.sensitivity.gradient(dp, Q_G, P_G, 0.01, 10, cost, wrt=("q0", "p0", "force"))
    with pytest.raises(ValueError, match="wrt"):
        sp.sensitivity.gradient(dp, Q_G, P_G, 0.01, 10, cost, wrt=["mass"])
    with pytest.raises(ValueError, match="cost must be a dict"):
        sp.sensitivity.gradient(dp, Q_G, P_G, 0.01, 10, {"final": cost["terminal"]}, wrt="q0")
    bad = {"terminal": (lambda q, p: 0.0, lambda q, p: q)}
    with pytest.raises(ValueError, match="pair"):
        sp.sensitivity.gradient(dp, Q_G, P_G, 0.01, 10, bad, wrt="q0")
    with pytest.raises(ValueError, match="violates the constraints"):
        sp.sensitivity.gradient(sp.systems.pendulum_cartesian(), [1.0, 0.1], [0.0, 0.0], 0.01,
                                10, cost, wrt="q0")


def test_sympy_cost_gives_the_same_gradient_as_the_hand_written_one():
    sy = pytest.importorskip("sympy")
    q = sy.symbols("q1 q2")
    p = sy.symbols("p1 p2")
    t = sy.Symbol("t")
    phi = sum((qi - c) ** 2 for qi, c in zip(q, TARGET)) / 2 + sum(pi ** 2 for pi in p) / 10
    ell = sum(qi ** 2 for qi in q) / 2 + sy.sin(t) * p[0]
    dp = sp.systems.double_pendulum(damping=0.1)
    U = controls(200)
    by_hand = {"terminal": terminal_cost(), "running": running_cost()}
    by_sympy = {"terminal": sp.sensitivity.sympy_cost(phi, q, p),
                "running": sp.sensitivity.sympy_cost(ell, q, p, t)}
    va, ga = sp.sensitivity.gradient(dp, Q_G, P_G, H_G, 200, by_hand, force=U)
    vb, gb = sp.sensitivity.gradient(dp, Q_G, P_G, H_G, 200, by_sympy, force=U)
    assert abs(va - vb) <= 1e-13 * abs(va)
    for k in ga:
        assert np.allclose(ga[k], gb[k], rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="free symbols"):
        sp.sensitivity.sympy_cost(phi * sy.Symbol("alpha"), q, p)


def test_lyapunov_of_a_constrained_chaotic_system_is_the_angle_forms():
    """The double pendulum in Cartesian coordinates (x1, y1, x2, y2) with its two rods as
    constraints (SymPy) against the built-in in angles, the same physical system from the same
    state: 2n - 2m = 4 exponents on the manifold, in +- pairs (|lambda_i + lambda_{5-i}| <=
    1e-3 lambda_max over 2e5 steps, T = 2000 s: the map preserves the restricted symplectic
    form, not the Euclidean volume the QR measures, so the pairs close like 1/T; at T = 400 s
    they were 4e-3 apart), lambda_max that of the angle form to 3 % (finite-time estimates of
    two different discrete maps of one chaotic motion: 1.446 and 1.447 /s)."""
    sy = pytest.importorskip("sympy")
    x1, y1, x2, y2, u1, v1, u2, v2 = sy.symbols("x1 y1 x2 y2 u1 v1 u2 v2")
    L = (u1 ** 2 + v1 ** 2 + u2 ** 2 + v2 ** 2) / 2 - 9.81 * (y1 + y2)
    S = sp.symbolic.system(L, [x1, y1, x2, y2], [u1, v1, u2, v2], {},
                           constraints=[x1 ** 2 + y1 ** 2 - 1, (x2 - x1) ** 2 + (y2 - y1) ** 2 - 1])
    th = DP_CHAOS[0]
    q0 = np.array([np.sin(th[0]), -np.cos(th[0]), np.sin(th[0]) + np.sin(th[1]),
                   -np.cos(th[0]) - np.cos(th[1])])
    lam = sp.sensitivity.lyapunov(S, q0, np.zeros(4), 0.01, 200_000, every=50)
    ref = sp.sensitivity.lyapunov(sp.systems.double_pendulum(), *DP_CHAOS, 0.01, 200_000,
                                  every=50)
    assert lam.shape == (4,) and np.all(np.diff(lam) <= 0)
    assert np.max(np.abs(lam + lam[::-1])) <= 1e-3 * lam[0]
    assert abs(lam[0] - ref[0]) <= 0.03 * ref[0]
    with pytest.raises(ValueError, match="at most 4 exponents"):
        sp.sensitivity.lyapunov(S, q0, np.zeros(4), 0.01, 10, k=5)


def test_lyapunov_of_the_integrable_cartesian_pendulum_falls_to_zero():
    """Integrable: tangent vectors grow linearly, lambda_max(T) ~ log(a T) / T -> 0 (past
    its maximum near T = e / a); 2 exponents on the manifold (n = 2, m = 1), a +- pair."""
    P = sp.systems.pendulum_cartesian()
    short = sp.sensitivity.lyapunov(P, [0.6, -0.8], [0.8, 0.6], 0.01, 20_000, every=500)
    long = sp.sensitivity.lyapunov(P, [0.6, -0.8], [0.8, 0.6], 0.01, 200_000, every=500)
    assert short.shape == long.shape == (2,)
    assert long[0] < short[0] / 3 and long[0] < 5e-3
    assert abs(long[0] + long[1]) <= 0.2 * long[0]
    with pytest.raises(ValueError, match="n_steps >= 2"):
        sp.sensitivity.lyapunov(P, [0.6, -0.8], [0.8, 0.6], 0.01, 1)


def test_param_tangent_fd_against_the_exact_route():
    """The finite-difference route on a double pendulum of Python callables against the exact
    parameter tangent of the built-in (the same M and V): the accuracy the docstring states."""
    pytest.importorskip("sympy")      # the exact route's augmented system
    def make(m2=1.0, l1=1.0):
        # M, dM/dq and grad V exact (finite-difference fallbacks in the residual would add
        # rounding noise that the run's differences divide by e)
        def mass(q):
            c = m2 * l1 * math.cos(q[0] - q[1])
            return np.array([[(1.0 + m2) * l1 ** 2, c], [c, m2]])

        def mass_grad(q):
            s = m2 * l1 * math.sin(q[0] - q[1])
            return np.array([[[0.0, -s], [-s, 0.0]], [[0.0, s], [s, 0.0]]])

        def potential(q):
            return -(1.0 + m2) * 9.81 * l1 * math.cos(q[0]) - m2 * 9.81 * math.cos(q[1])

        def potential_grad(q):
            return np.array([(1.0 + m2) * 9.81 * l1 * math.sin(q[0]), m2 * 9.81 * math.sin(q[1])])

        return sp.System(2, mass, potential, mass_grad=mass_grad, potential_grad=potential_grad)

    q0, p0 = np.array([0.5, -0.3]), np.array([0.1, 0.2])
    traj, S = sp.sensitivity.param_tangent_fd(make, {"m2": 1.0, "l1": 1.0}, q0, p0, 0.01, 300,
                                              store_every=100)
    exact = sp.integrate(sp.systems.double_pendulum(), q0, p0, 0.01, 300, store_every=100,
                         tangent=True, wrt=["m2", "l1"]).param_tangent
    assert S.shape == exact.shape == (4, 4, 2)
    assert np.max(np.abs(S - exact)) <= 1e-7 * np.max(np.abs(exact))
    with pytest.raises(ValueError, match="rel"):
        sp.sensitivity.param_tangent_fd(make, {"m2": 1.0}, q0, p0, 0.01, 3, rel=1)
