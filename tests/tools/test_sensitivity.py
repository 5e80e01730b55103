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
    with pytest.raises(ValueError, match="at most 2n = 4"):
        sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 10, k=5)
    for bad in (dict(every=0), dict(k=0), dict(every=2.5)):
        with pytest.raises(ValueError, match="integer >= 1"):
            sp.sensitivity.lyapunov(dp, *DP_CHAOS, 0.01, 10, **bad)
