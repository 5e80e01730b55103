"""The Gauss-Legendre variational integrators gauss2 and gauss3 (issue 35): the Galerkin
family of csrc/core/sym_methods.c with interpolation of degree s - 1 (s = 3, 4 nodes) and the
(s - 1)-point Gauss quadrature of the action, equivalent to the (s - 1)-stage Gauss
collocation method (Hairer, Lubich & Wanner, GNI VI.6): orders 4 and 6, symplectic,
symmetric and A-stable on linear systems (tests/run/test_stability.py checks the one-step map
of the oscillator against the diagonal Pade approximant).

Orders are fitted on nonlinear problems against exact solutions (the pendulum, in
test_lobatto.py with the Lobatto family, where the symplecticity, symmetry and cyclic momenta of
the step are checked too) or against a
reference of another method at a step 8 to 40 times smaller (lobatto5, order 8, itself
checked against exact solutions in test_lobatto.py): the double pendulum and the quaternion
top (a constrained system whose M(Q) is quartic, so that the Gauss quadrature is not exact
on its action; on the Cartesian pendulum, whose action is a polynomial that Simpson's and the
2-point Gauss rule both integrate exactly, gauss2 and simpson give the same steps).
"""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import L_DP, fitted_order

GAUSS = {"gauss2": 4, "gauss3": 6}


def test_registered():
    info = sp.methods(details=True)
    for name, order in GAUSS.items():
        d = info[name]
        s = order // 2 + 1
        assert d["order"] == order and d["symplectic"] and d["constrained"]
        assert len(d["nodes"]) == s and d["n_mid"] == s - 2
        assert d["stability"] == math.inf


def end_error(system, q0, p0, T, N, method, ref):
    r = sp.integrate(system, q0, p0, T / N, N, method=method, store_every=N)
    scale = max(1.0, np.max(np.abs(ref.p[-1])))
    return max(np.max(np.abs(r.q[-1] - ref.q[-1])), np.max(np.abs(r.p[-1] - ref.p[-1])) / scale)


@pytest.mark.parametrize("method,Ns", [("gauss2", (100, 200, 400, 800)),
                                       ("gauss3", (100, 150, 200, 300))])
def test_double_pendulum_orders(method, Ns):
    dp = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    q0, p0 = np.array([math.pi / 4, math.pi / 3]), np.zeros(2)
    T = 2.0
    ref = sp.integrate(dp, q0, p0, T / 8000, 8000, method="lobatto5", store_every=8000)
    errs = [end_error(dp, q0, p0, T, N, method, ref) for N in Ns]
    assert min(errs) > 1e-12
    assert fitted_order([T / N for N in Ns], errs) == pytest.approx(GAUSS[method], abs=0.15)


@pytest.mark.parametrize("method,Ns", [("gauss2", (200, 400, 800, 1600)),
                                       ("gauss3", (100, 150, 200, 300))])
def test_constrained_quaternion_top_orders(method, Ns):
    """The multipliers at the nodes with the nodes' interpolatory weights (csrc/core/
    sym_constraints.c), the action by the Gauss rule: the orders hold in (Q, P)."""
    S = sp.systems.lagrange_top_quaternion()
    Q0, P0 = S.from_euler([0.0, 0.5, 0.0], [0.0, 0.0, 0.000125 * 20.0])
    T = 2.0
    ref = sp.integrate(S, Q0, P0, T / 8000, 8000, method="lobatto5", store_every=8000)
    errs = [end_error(S, Q0, P0, T, N, method, ref) for N in Ns]
    assert min(errs) > 1e-12
    assert fitted_order([T / N for N in Ns], errs) == pytest.approx(GAUSS[method], abs=0.15)


def test_stiff_chain_long_run():
    """Masses joined by soft and stiff springs (a Fermi-Pasta-Ulam-type chain, fast
    frequency 1414 rad/s) at omega h = 14 over 2000 steps: the A-stable rules keep the stiff
    springs' lengths at their initial stretch and the energy without drift, the Gauss rules
    (orders 4, 6) with an error below 1/100 of the midpoint rule's (order 2) at the same step
    (measured: 4.3e-9 and 3.6e-9 against 8.2e-6 relative); simpson is past its limit
    2 sqrt 2 (a StabilityWarning, then an unstable step named as such)."""
    k_soft, k_stiff = 1.0, 1e6
    n = 4

    def V(q):
        d = np.diff(np.concatenate([[0.0], q]))
        return 0.5 * np.sum(np.where(np.arange(n) % 2 == 0, k_stiff, k_soft) * d ** 2) \
            + 0.25 * np.sum(d ** 4)

    def dV(q):
        d = np.diff(np.concatenate([[0.0], q]))
        f = np.where(np.arange(n) % 2 == 0, k_stiff, k_soft) * d + d ** 3
        return f - np.append(f[1:], 0.0)

    S = sp.System(n, np.eye(n), V, potential_grad=dV)
    q0 = np.array([1e-4, 1.0, 1.0, 2.0])
    h = 14.0 / math.sqrt(2 * k_stiff)
    err = {}
    for method in ("midpoint", *sorted(GAUSS)):
        # stepping over the stiff mode on purpose: the warning that its phase is not resolved
        with pytest.warns(sp.StabilityWarning, match="does not resolve the fastest mode"):
            tr = sp.integrate(S, q0, np.zeros(n), h, 2000, method=method)
        e = np.abs(tr.energy - tr.energy[0]) / tr.energy[0]
        assert np.max(e[1000:]) <= 1.5 * np.max(e[:1000]), method          # no drift
        err[method] = np.max(e)
        stiff = np.diff(np.concatenate([np.zeros((tr.q.shape[0], 1)), tr.q], axis=1))[:, ::2]
        assert np.max(np.abs(stiff)) <= 1.05e-4, method
    assert max(err["gauss2"], err["gauss3"]) <= 1e-2 * err["midpoint"], err
    with pytest.warns(sp.StabilityWarning), pytest.raises(sp.ConvergenceError,
                                                          match="unstable step size"):
        sp.integrate(S, q0, np.zeros(n), h, 2000, method="simpson")
