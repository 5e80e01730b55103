"""Newton's stopping rules leave no drift of the energy (csrc/core/sym_newton.c).

A variational integrator's energy error stays bounded only if each step solves its equations
to rounding.  A stop that leaves an error of the same sign at every step -- the residual test
|R| <= 16 eps |scale| without the final correction, or a bound that predicts an error of
rtol = 1e-13 of the increments -- makes the energy drift linearly, in every Newton mode (on
the code before the fix the mean energy error of the runs below moved by 1.3e-12 to 2.7e-11
over the run, benchmarks/NOTES.md section 1).  Here the drift is the least-squares slope of
the energy error (sampled every 16 steps), times the run's length, relative to the energy:
it must stay at the level of a random walk of rounding errors over the run's 10^5 - 10^6
steps, sqrt(N) eps ~ 1e-13, plus what the fit takes from the method's own bounded,
oscillating energy error over a finite run (1 % of its amplitude).  The energy is computed
here from the double pendulum's formula, not by the core.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import G, L_DP

#: the TOP paper's double pendulum (Section 3.1, Table 1): l = g / omega0^2, omega0 = 2 pi
DP = dict(m1=1.0, m2=1.0, l1=L_DP, l2=L_DP, g=G)

#: drift bound over a run, relative to |H|: ~3 sqrt(N) eps for N ~ 1e6 steps, and the
#: share of the bounded error's amplitude that a linear fit over the run can take
DRIFT, DRIFT_OF_AMPLITUDE = 3e-13, 0.01


def dp_energy(q, p, m1, m2, l1, l2, g):
    """H = 1/2 p^T M(q)^-1 p + V(q), TOP paper Section 3, vectorised over rows."""
    c = np.cos(q[:, 0] - q[:, 1])
    a, b, d = (m1 + m2) * l1 ** 2, m2 * l1 * l2 * c, m2 * l2 ** 2
    det = a * d - b * b
    kin = 0.5 * (d * p[:, 0] ** 2 - 2 * b * p[:, 0] * p[:, 1] + a * p[:, 1] ** 2) / det
    return kin - (m1 + m2) * g * l1 * np.cos(q[:, 0]) - m2 * g * l2 * np.cos(q[:, 1])


def energy_drift(method, h, T, newton):
    """Slope of the relative energy error over [0, T], times T (least squares)."""
    sysm = sp.systems.double_pendulum(**DP)
    q0, p0 = np.array([math.pi / 4, math.pi / 3]), np.zeros(2)
    n = int(round(T / h))
    tr = sp.integrate(sysm, q0, p0, h, n, method=method, newton=newton, store_every=16)
    H0 = dp_energy(q0[None], p0[None], **DP)[0]
    e = (dp_energy(tr.q, tr.p, **DP) - H0) / abs(H0)
    slope = np.polyfit(tr.t, e, 1)[0]
    return abs(slope) * T, np.max(np.abs(e))


@pytest.mark.parametrize("method, h, T, newton", [
    # the residual test ends most solves after one update here (1.2 updates a step)
    ("lobatto5", 0.0088, 10000.0, "step"),
    # the linear bound after a stale update ends them
    ("lobatto5", 0.0177, 20000.0, "step"),
    ("lobatto5", 0.0177, 5000.0, "chord"),
    ("lobatto5", 0.0297, 10000.0, "step"),
    # full Newton's quadratic bound after two fresh updates ends them
    ("lobatto5", 0.0297, 10000.0, "full"),
    ("lobatto7", 0.05, 10000.0, "full"),
    # the decoupled matrix's linear bound
    ("lobatto5", 0.0177, 5000.0, "decoupled"),
])
def test_no_energy_drift_from_newtons_stop(method, h, T, newton):
    drift, emax = energy_drift(method, h, T, newton)
    assert drift <= DRIFT + DRIFT_OF_AMPLITUDE * emax, (method, h, newton, drift, emax)


@pytest.mark.xfail(strict=True, reason="known: lobatto6's residual rounds with a bias "
                   "(benchmarks/prototypes/residual_rounding/README.md); the exact residual there "
                   "passes this (4.9e-14), so a fix turns this into an unexpected pass")
def test_lobatto6_long_run_drift():
    """lobatto6 drifts from the rounding of its residual, not from Newton's stops: over 5e4 s at
    the h of section 8's 1e-12 setting the drift is 1.65e-12 (main at f28b237), five times the
    bound above; evaluated with exact products and compensated sums, 4.9e-14."""
    drift, emax = energy_drift("lobatto6", 0.0297, 50000.0, "step")
    assert drift <= DRIFT + DRIFT_OF_AMPLITUDE * emax, (drift, emax)
