"""Quadratic Lagrangians (AXIOMS paper): closed-form schemes, Table 2, structure, stability.

Expected values come from the paper's Table 2 (conventions of docs/errata.md#axioms-table-2), from
the closed-form frequencies/modes of eqs. (49)-(51), from Proposition 7, and
from an independent ODE solve; never from the code under test.
"""
import math
import warnings

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core, linear, papers, reproduce

W0 = 2 * math.pi
G = 9.81
L_ROD = G / W0 ** 2
Q0 = np.array([0.0, math.pi / 6])
P0 = np.zeros(2)


def _ldp():
    s = sp.systems.linear_double_pendulum()
    return s, s.params["M"], s.params["K"]


def _spd(rng, n, lo=0.5, hi=2.0):
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return Q @ np.diag(rng.uniform(lo, hi, n)) @ Q.T


def _J(n):
    J = np.zeros((2 * n, 2 * n))
    J[:n, n:] = -np.eye(n)
    J[n:, :n] = np.eye(n)
    return J


# ---------------------------------------------------------------- Table 2
@pytest.fixture(scope="module")
def table2():
    return reproduce.axioms_table2()


def test_table2_every_target_entry_within_1_5_percent(table2):
    skip = papers.AXIOMS_TABLE2["not_targets"]
    checked = 0
    for r in table2:
        key = (r["T"], r["method"], r["quantity"], r["N"])
        if r["N"] == "order" or key in skip:
            continue
        assert abs(r["rel_diff"]) <= 0.015, r
        checked += 1
    # 4 horizons x 3 methods x 2 quantities x 3 meshes, minus the five flagged RK4 entries
    assert checked == 72 - 5


def test_table2_orders_within_0_03(table2):
    skip = papers.AXIOMS_TABLE2["not_targets"]
    orders = [r for r in table2 if r["N"] == "order"
              and (r["T"], r["method"], r["quantity"], "order") not in skip]
    assert len(orders) == 24 - 2
    for r in orders:
        assert abs(r["value"] - r["paper"]) <= 0.03, r


def test_table2_flagged_rk4_entries_are_what_errata_says(table2):
    """The T = 10, 400-mesh RK4 entries: a converged RK4 gives ~6.4e-4 and ~2.2e-3."""
    got = {(r["quantity"]): r["value"] for r in table2
           if r["T"] == 10 and r["method"] == "rk4" and r["N"] == 400}
    assert got["p"] == pytest.approx(6.4e-4, rel=0.02)
    assert got["q"] == pytest.approx(2.2e-3, rel=0.02)


def test_table2_through_the_newton_engine():
    """The same T = 10 t_bar block with sp.integrate's general (Newton) path."""
    s, M, K = _ldp()
    printed = {(m, qty): v for T, m, qty, v, _ in papers.AXIOMS_TABLE2["rows"] if T == 10}
    for N_i, N in enumerate((100, 200, 400)):
        h = 10.0 / N
        for method, name in (("simpson", "simpson"), ("midpoint", "newmark")):
            tr = sp.integrate(s, Q0, P0, h, N, method, closed_form=False)
            assert tr.newton_iterations.max() >= 1
            q_ex, p_ex = sp.exact.linear(M, K, Q0, P0, tr.t)
            ep = np.max(np.linalg.norm(tr.p - p_ex, axis=1))
            eq = np.max(np.linalg.norm(tr.q - q_ex, axis=1))
            assert ep == pytest.approx(printed[(name, "p")][N_i], rel=0.015)
            assert eq == pytest.approx(printed[(name, "q")][N_i], rel=0.015)


# ---------------------------------------------------------------- exact solution
def test_closed_form_frequencies_and_modes():
    s, M, K = _ldp()
    w1, w2 = linear.double_pendulum_frequencies(1.0, 1.0, L_ROD, G)
    # eq. (49) with mu = 1: omega^2 = omega0^2 (2 -/+ sqrt 2)
    assert w1 == pytest.approx(W0 * math.sqrt(2 - math.sqrt(2)), rel=1e-15)
    assert w2 == pytest.approx(W0 * math.sqrt(2 + math.sqrt(2)), rel=1e-15)
    np.testing.assert_allclose(linear.frequencies(M, K), [w1, w2], rtol=1e-13)
    # unequal masses: the roots of det(K - w^2 M) = 0
    s2 = sp.systems.linear_double_pendulum(m1=2.0, m2=0.5, l=0.3, g=G)
    w = linear.double_pendulum_frequencies(2.0, 0.5, 0.3, G)
    for wi in w:
        A = s2.params["K"] - wi ** 2 * s2.params["M"]
        assert abs(np.linalg.det(A)) < 1e-10 * np.linalg.norm(s2.params["K"]) ** 2


def test_exact_linear_matches_modal_closed_form():
    """Eq. (51) for q(0) = (0, pi/6), p(0) = 0 with modes (1, -/+ sqrt 2) of eq. (50):
    q1 = pi/(12 sqrt 2) (cos w_slow t - cos w_fast t), q2 = pi/12 (cos w_slow t + cos w_fast t).
    (The printed q_ex puts the sqrt 2 on the wrong component: it would give q2(0) = pi sqrt2/6.)"""
    s, M, K = _ldp()
    ws, wf = linear.double_pendulum_frequencies()
    t = np.linspace(0, 20, 2001)
    q, p = sp.exact.linear(M, K, Q0, P0, t)
    q1 = math.pi / (12 * math.sqrt(2)) * (np.cos(ws * t) - np.cos(wf * t))
    q2 = math.pi / 12 * (np.cos(ws * t) + np.cos(wf * t))
    np.testing.assert_allclose(q[:, 0], q1, atol=1e-13)
    np.testing.assert_allclose(q[:, 1], q2, atol=1e-13)
    qd = np.stack([math.pi / (12 * math.sqrt(2)) * (-ws * np.sin(ws * t) + wf * np.sin(wf * t)),
                   -math.pi / 12 * (ws * np.sin(ws * t) + wf * np.sin(wf * t))], axis=1)
    np.testing.assert_allclose(p, qd @ M.T, atol=1e-12)


def test_exact_linear_matches_ode_solve_random_systems():
    solve_ivp = pytest.importorskip("scipy.integrate").solve_ivp
    rng = np.random.default_rng(7)
    for n in (1, 3, 5):
        M, K = _spd(rng, n), _spd(rng, n)
        q0, p0 = rng.normal(size=n), rng.normal(size=n)
        Mi = np.linalg.inv(M)
        t = np.linspace(0, 5, 11)
        sol = solve_ivp(lambda _, y: np.concatenate([Mi @ y[n:], -K @ y[:n]]), (0, 5),
                        np.concatenate([q0, p0]), method="DOP853", rtol=1e-13, atol=1e-14,
                        t_eval=t)
        q, p = sp.exact.linear(M, K, q0, p0, t)
        np.testing.assert_allclose(q, sol.y[:n].T, atol=1e-10)
        np.testing.assert_allclose(p, sol.y[n:].T, atol=1e-10)


def test_exact_linear_zero_and_negative_stiffness_modes():
    M = np.diag([2.0, 1.0])
    K = np.diag([0.0, -4.0])                   # free drift, and an unstable mode
    t = np.array([0.0, 0.5, 1.0])
    q, p = sp.exact.linear(M, K, [1.0, 0.5], [0.4, 1.0], t)
    np.testing.assert_allclose(q[:, 0], 1.0 + 0.2 * t, rtol=1e-14)       # qdot = p/m
    np.testing.assert_allclose(p[:, 0], 0.4, rtol=1e-14)
    np.testing.assert_allclose(q[:, 1], 0.5 * np.cosh(2 * t) + 0.5 * np.sinh(2 * t), rtol=1e-13)
    np.testing.assert_allclose(p[:, 1], 1.0 * np.sinh(2 * t) + 1.0 * np.cosh(2 * t), rtol=1e-13)


# ---------------------------------------------------------------- structure
@pytest.mark.parametrize("n", range(1, 9))
def test_propagators_are_symplectic_below_the_limit(n):
    rng = np.random.default_rng(100 + n)
    M, K = _spd(rng, n), _spd(rng, n)
    hmax = linear.stability_limit(M, K)
    J = _J(n)
    for f in (0.05, 0.5, 0.95):
        for method in ("simpson", "newmark"):
            Phi = linear.propagator(M, K, f * hmax, method)
            assert np.max(np.abs(Phi.T @ J @ Phi - J)) <= 1e-13, (method, f)
        Phi = linear.propagator(M, K, 0.5 * hmax, "rk4")
        assert np.max(np.abs(Phi.T @ J @ Phi - J)) > 1e-4


def test_blocks_satisfy_propositions_3_to_5():
    """X_s, Y_s symmetric positive definite for omega_max h < 2 sqrt 2 (Props. 3-5)."""
    rng = np.random.default_rng(3)
    M, K = _spd(rng, 4), _spd(rng, 4)
    hmax = linear.stability_limit(M, K)
    X, Y = linear._simpson_blocks(M, K, 0.99 * hmax)
    for A in (X, Y):
        np.testing.assert_allclose(A, A.T, rtol=1e-14, atol=1e-14 * np.abs(A).max())
        assert np.linalg.eigvalsh(A).min() > 0
    # Y_s stops being positive definite past the limit
    X, Y = linear._simpson_blocks(M, K, 1.05 * hmax)
    assert np.linalg.eigvalsh(Y).min() < 0


def test_conserved_quadratic_form_over_1e4_steps():
    s, M, K = _ldp()
    for h in (0.1, 0.01):
        xi, zeta = linear.conserved_form(M, K, h)
        q, p = linear.propagate(M, K, Q0, P0, h, 10_000, "simpson")
        phi = linear.quadratic_form(xi, zeta, p, q)
        assert np.max(np.abs(phi - phi[0])) / phi[0] <= 1e-12
        # zeta = X xi Y (proof of Proposition 7)
        X, Y = linear._simpson_blocks(M, K, h)
        np.testing.assert_allclose(zeta, X @ xi @ Y, rtol=1e-12, atol=1e-12 * np.abs(zeta).max())
        # ... while the energy itself is not conserved by Simpson
        H = linear.energy(M, K, p, q)
        assert np.max(np.abs(H - H[0])) / H[0] > 1e-9


def test_newmark_conserves_energy_exactly():
    s, M, K = _ldp()
    for h in (0.1, 0.025):
        q, p = linear.propagate(M, K, Q0, P0, h, 10_000, "newmark")
        H = linear.energy(M, K, p, q)
        assert np.max(np.abs(H - H[0])) / H[0] <= 1e-12
    tr = sp.integrate(sp.systems.linear_double_pendulum(), Q0, P0, 0.1, 1000, "midpoint",
                      closed_form=False)
    assert np.max(np.abs(tr.energy - tr.energy[0])) / tr.energy[0] <= 1e-12


def test_figure6_energy_error_statement():
    """Simpson's max relative energy error over 10 t_bar: order 1e-3 at h = 0.1 t_bar,
    about four orders of magnitude smaller at h = 0.01 t_bar (AXIOMS Sec. 6.3, Fig. 6)."""
    s, M, K = _ldp()
    e = {}
    for h in (0.1, 0.01):
        tr = sp.integrate(s, Q0, P0, h, round(10 / h), "simpson")
        e[h] = np.max(np.abs(tr.energy - tr.energy[0])) / tr.energy[0]
    assert math.floor(math.log10(e[0.1])) == -3, e          # "in the order of 10^-3"
    assert 10 ** 3.5 <= e[0.1] / e[0.01] <= 10 ** 4.5, e
    # bounded, not growing: the last period is no worse than the first ones
    tr = sp.integrate(s, Q0, P0, 0.1, 1000, "simpson")
    rel = np.abs(tr.energy - tr.energy[0]) / tr.energy[0]
    assert rel[-100:].max() <= 1.5 * rel[:100].max()


# ---------------------------------------------------------------- stability
@pytest.mark.parametrize("system", ["scalar", "2dof"])
def test_spectral_radius_at_the_stability_edge(system):
    if system == "scalar":
        M, K = np.array([[2.0]]), np.array([[8.0]])          # omega = 2
    else:
        _, M, K = _ldp()
    wmax = math.sqrt(np.max(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    hmax = linear.stability_limit(M, K)
    assert hmax == pytest.approx(2 * math.sqrt(2) / wmax, rel=1e-14)
    for x in (0.1, 1.0, 2.0, 2.8, 2.828):
        rho = linear.spectral_radius(linear.propagator(M, K, x / wmax, "simpson"))
        assert rho == pytest.approx(1.0, abs=1e-12), x
    for x in (2.83, 2.9, 3.2):
        rho = linear.spectral_radius(linear.propagator(M, K, x / wmax, "simpson"))
        assert rho > 1.0 + 1e-3, x
    # Newmark is unconditionally stable
    for x in (0.5, 3.0, 30.0):
        rho = linear.spectral_radius(linear.propagator(M, K, x / wmax, "newmark"))
        assert rho == pytest.approx(1.0, abs=1e-12)


def test_spurious_second_stability_window_scalar():
    """docs/errata.md#axioms-linear-simpson: Phi_s is stable again for 2 sqrt 3 < omega h < 2 sqrt 6 (scalar case)."""
    M, K = np.array([[1.0]]), np.array([[1.0]])
    for x in (3.3, 3.4):
        assert linear.spectral_radius(linear.propagator(M, K, x, "simpson")) > 1.0 + 1e-3
    for x in (3.6, 4.0, 4.8):
        assert linear.spectral_radius(linear.propagator(M, K, x, "simpson")) == \
            pytest.approx(1.0, abs=1e-12)
    assert linear.spectral_radius(linear.propagator(M, K, 5.0, "simpson")) > 1.0 + 1e-3


def test_integrate_warns_at_the_stability_limit():
    s, M, K = _ldp()
    hmax = linear.stability_limit(M, K)
    w2 = linear.double_pendulum_frequencies()[1]
    assert hmax == pytest.approx(2 * math.sqrt(2) / w2, rel=1e-13)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sp.integrate(s, Q0, P0, 0.99 * hmax, 10, "simpson")
        sp.integrate(s, Q0, P0, 2 * hmax, 10, "midpoint")
    for method, kw in (("simpson", {}), ("simpson", {"closed_form": False}), ("rk4", {})):
        growth = 10
        with pytest.warns(linear.StabilityWarning) as rec:
            try:
                tr = sp.integrate(s, Q0, P0, 1.2 * hmax, 200, method, **kw)
            except sp.ConvergenceError as err:
                # the Newton path stops when the energy has grown 100-fold as
                # only an unstable step can make it grow (amplitude ~ x 10)
                assert kw and err.reason.startswith("unstable step size")
                tr, growth = err.trajectory, 3
        msg = str(rec[0].message)
        assert f"{1.2 * hmax:g}" in msg and f"{hmax:g}" in msg and f"{w2:g}" in msg
        assert np.abs(tr.q[-1]).max() > growth * np.abs(Q0).max()  # it does blow up
    with pytest.warns(linear.StabilityWarning):
        sp.integrate(s, Q0, P0, -1.2 * hmax, 5, "simpson")
    with pytest.raises(ValueError, match="singular"):
        linear.propagator(M, K, hmax, "simpson")


# ---------------------------------------------------------------- fast path
@pytest.mark.parametrize("method", ["simpson", "midpoint"])
@pytest.mark.parametrize("n", [1, 2, 4])
def test_closed_form_path_matches_newton_path(method, n):
    rng = np.random.default_rng(20 + n)
    M, K = _spd(rng, n), _spd(rng, n)
    s = sp.systems.linear(M, K)
    q0, p0 = rng.normal(size=n), rng.normal(size=n)
    h = 0.3 * linear.stability_limit(M, K)
    fast = sp.integrate(s, q0, p0, h, 1000, method, t0=1.5)
    slow = sp.integrate(s, q0, p0, h, 1000, method, t0=1.5, closed_form=False)
    assert fast.newton_iterations.sum() == 0 and slow.newton_iterations.min() >= 1
    np.testing.assert_array_equal(fast.t, slow.t)
    scale = max(np.abs(slow.q).max(), np.abs(slow.p).max())
    assert np.max(np.abs(fast.q - slow.q)) <= 1e-12 * scale
    assert np.max(np.abs(fast.p - slow.p)) <= 1e-12 * scale
    if method == "simpson":
        assert np.max(np.abs(fast.q_mid - slow.q_mid)) <= 1e-12 * scale
    else:
        assert fast.q_mid is None and slow.q_mid is None


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
def test_the_closed_form_stepped_in_c_is_numpys_recursion_to_rounding(method):
    # linear.propagate iterates eta += D eta with NumPy's products on (p, q); the
    # integrators apply step_matrices' reordered D (and A for the midpoint) in the C
    # driver: the same recursion summed in another order, so agreement to rounding
    rng = np.random.default_rng(31)
    M, K = _spd(rng, 3), _spd(rng, 3)
    s = sp.systems.linear(M, K)
    q0, p0 = rng.normal(size=3), rng.normal(size=3)
    h = 0.3 * linear.stability_limit(M, K)
    tr = sp.integrate(s, q0, p0, h, 2000, method)
    ref = linear.propagate(M, K, q0, p0, h, 2000, "newmark" if method == "midpoint" else method,
                           with_midpoint=True)
    scale = max(np.abs(ref[0]).max(), np.abs(ref[1]).max())
    assert 0 < np.max(np.abs(tr.q - ref[0])) <= 1e-13 * scale
    assert np.max(np.abs(tr.p - ref[1])) <= 1e-13 * scale
    if method == "simpson":
        assert np.max(np.abs(tr.q_mid - ref[2])) <= 1e-13 * scale
    assert tr.counts.steps == 2000 and tr.counts.evaluations == 0
    assert tr.newton_iterations.sum() == 0


def test_the_closed_form_runs_through_the_one_driver():
    # thinning, hooks (events, t_eval) and failures are the C driver's, as for Newton
    s = sp.systems.linear_double_pendulum()
    q0, p0, h = [0.0, math.pi / 6], [0.0, 0.0], 0.025
    full = sp.integrate(s, q0, p0, h, 1000)
    thin = sp.integrate(s, q0, p0, h, 1000, store_every=7)
    rows = np.r_[0:1001:7, 1000]
    assert np.array_equal(thin.q, full.q[rows]) and np.array_equal(thin.t, full.t[rows])
    ev = sp.integrate(s, q0, p0, h, 1000, events=lambda t, q, p: q[1])
    assert ev.t_events[0].size > 0 and np.all(np.abs(ev.q_events[0][:, 1]) < 1e-9)
    D, A = linear.step_matrices(s.params["M"], s.params["K"], h, "simpson")
    w = _core.work(s, np.array(q0), np.array(p0), "simpson", linear=(h, D, A))
    with pytest.raises(ValueError, match=r"step: invalid argument \(h\)"):
        w.step(np.array(q0), np.array(p0), 2 * h)
    with pytest.raises(ValueError, match="A given exactly"):
        _core.work(s, np.array(q0), np.array(p0), "simpson", linear=(h, D, None))
    # a step that overflows fails there, as the Newton path's does
    big = sp.systems.linear(np.eye(1), np.eye(1))
    with pytest.warns(linear.StabilityWarning), pytest.raises(sp.ConvergenceError) as err:
        sp.integrate(big, [1.0], [0.0], 5.0, 2000)
    assert _core.strerror(_core.ENONFINITE) in err.value.reason
    assert 0 < err.value.step < 2000 and len(err.value.trajectory.t) == err.value.step + 1


def test_first_variant_equals_second_and_gives_the_midpoint():
    rng = np.random.default_rng(5)
    M, K = _spd(rng, 3), _spd(rng, 3)
    h = 0.4 * linear.stability_limit(M, K)
    G = linear.simpson_first_variant(M, K, h)
    np.testing.assert_allclose(G[3:], linear.propagator(M, K, h, "simpson"), atol=1e-13)
    q0, p0 = rng.normal(size=3), rng.normal(size=3)
    tr = sp.integrate(sp.systems.linear(M, K), q0, p0, h, 1, "simpson", closed_form=False)
    qm = G[:3] @ np.concatenate([p0, q0])
    np.testing.assert_allclose(qm, tr.q_mid[0], atol=1e-13)


def test_linear_module_input_errors():
    with pytest.raises(ValueError, match="symmetric"):
        linear.propagator([[1, 2], [0, 1]], np.eye(2), 0.1)
    with pytest.raises(ValueError, match="positive definite"):
        linear.stability_limit(-np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match="shape"):
        linear.propagator(np.eye(2), np.eye(3), 0.1)
    with pytest.raises(ValueError, match="nonzero"):
        linear.propagator(np.eye(2), np.eye(2), 0.0)
    with pytest.raises(ValueError, match="unknown method"):
        linear.propagator(np.eye(2), np.eye(2), 0.1, "euler")
    assert linear.stability_limit(np.eye(2), np.zeros((2, 2))) == math.inf
