"""FVCA paper, Table 1: nonlinear pendulum, Newmark (midpoint) and Simpson.

Conventions (docs/errata.md#fvca-table-1): m = 1, omega = 2 pi, q(0) = pi/2, p(0) = 0; one
exact nonlinear period T = 4 K(k^2)/omega, h = T/N; errors are maxima over all
nodes j = 0..N of |q_j - q(t_j)|, |p_j - p(t_j)| and |H_j - H0|/H0, H0 = m omega^2.
"""
import math

import numpy as np
import pytest

import symplectic as sp

pytest.importorskip("scipy")

# Table 1 as printed (two entries are truncated, not rounded: see docs/errata.md).
TABLE1 = {
    ("midpoint", "p"): [2.93e-2, 7.32e-3, 1.83e-3],
    ("simpson", "p"): [6.08e-6, 3.78e-7, 2.36e-8],
    ("midpoint", "q"): [5.26e-3, 1.31e-3, 3.29e-4],
    ("simpson", "q"): [1.05e-6, 6.51e-8, 4.06e-9],
    ("midpoint", "H"): [9.06e-4, 2.29e-4, 5.73e-5],
    ("simpson", "H"): [1.30e-6, 8.42e-8, 5.25e-9],
}
MESHES = [50, 100, 200]
Q0 = math.pi / 2


def run(method, N):
    sys = sp.systems.pendulum(m=1.0, omega=2 * math.pi)
    T = sp.exact.pendulum_period(Q0, 0.0, 1.0, 2 * math.pi)
    traj = sp.integrate(sys, [Q0], [0.0], T / N, N, method=method)
    q_ex, p_ex = sp.exact.pendulum(traj.t, Q0, 0.0, 1.0, 2 * math.pi)
    H0 = (2 * math.pi) ** 2
    return traj, {
        "q": np.max(np.abs(traj.q[:, 0] - q_ex)),
        "p": np.max(np.abs(traj.p[:, 0] - p_ex)),
        "H": np.max(np.abs(traj.energy - H0)) / H0,
    }


def test_period_matches_errata():
    assert sp.exact.pendulum_period(Q0) == pytest.approx(1.1803405990, abs=1e-10)


@pytest.mark.parametrize("method", ["midpoint", "simpson"])
def test_table1(method):
    for j, N in enumerate(MESHES):
        _, errs = run(method, N)
        for quantity in ("p", "q", "H"):
            printed = TABLE1[(method, quantity)][j]
            assert errs[quantity] == pytest.approx(printed, rel=0.01), (method, quantity, N)


@pytest.mark.parametrize("method", ["midpoint", "simpson"])
def test_table1_orders(method):
    hs = [1.0 / N for N in MESHES]
    for quantity in ("p", "q", "H"):
        errs = [run(method, N)[1][quantity] for N in MESHES]
        order = np.polyfit(np.log(hs), np.log(errs), 1)[0]
        assert order == pytest.approx(2.0 if method == "midpoint" else 4.0, abs=0.05)


@pytest.mark.parametrize("method", ["midpoint", "simpson"])
def test_newton_iterations_at_50_meshes(method):
    traj, _ = run(method, 50)
    assert traj.newton_iterations.max() <= 6
    assert traj.newton_iterations.min() >= 1
