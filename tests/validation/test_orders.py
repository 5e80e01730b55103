"""Fitted convergence orders on nonlinear problems.

Pendulum (FVCA, amplitude pi/2) against the exact elliptic-function solution;
double pendulum (TOP Section 3) against a tight DOP853 solve of Hamilton's
equations written independently in NumPy (tests/support/models.py).  Error: max over
nodes of the Euclidean norm of the (q, p) error.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import L_DP, dp_callables, fitted_order, reference

pytest.importorskip("scipy")

EXPECTED = {"simpson": (4.0, 0.15), "midpoint": (2.0, 0.1), "rk4": (4.0, 0.2)}


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_pendulum_order(method):
    sys = sp.systems.pendulum()
    T = 3 * sp.exact.pendulum_period(math.pi / 2)
    hs, errs = [], []
    # asymptotic range (RK4 is still pre-asymptotic at 150 steps per 3 periods)
    for N in (600, 1200, 2400, 4800):
        traj = sp.integrate(sys, [math.pi / 2], [0.0], T / N, N, method=method)
        q, p = sp.exact.pendulum(traj.t, math.pi / 2)
        hs.append(T / N)
        errs.append(np.max(np.hypot(traj.q[:, 0] - q, traj.p[:, 0] - p)))
    order, tol = EXPECTED[method]
    assert fitted_order(hs, errs) == pytest.approx(order, abs=tol)


@pytest.mark.parametrize("method", sorted(EXPECTED))
def test_double_pendulum_order(method):
    sys = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    c = dp_callables()
    q0, p0 = np.array([math.pi / 4, math.pi / 3]), np.zeros(2)
    T = 2.0
    hs, errs = [], []
    for N in (80, 160, 320, 640):
        traj = sp.integrate(sys, q0, p0, T / N, N, method=method)
        qr, pr = reference(c, q0, p0, traj.t)
        hs.append(T / N)
        errs.append(np.max(np.linalg.norm(np.hstack([traj.q - qr, traj.p - pr]), axis=1)))
    order, tol = EXPECTED[method]
    assert fitted_order(hs, errs) == pytest.approx(order, abs=tol)
    # Simpson at h = T/640 is 1e-9 accurate: far above the reference's error.
    if method == "simpson":
        assert errs[-1] < 1e-8
