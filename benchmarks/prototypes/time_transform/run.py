"""Issue 51, tried and not kept: fewer steps through a Poincare time transformation.

The TOP double pendulum (benchmarks/models.py) integrated in a fictitious time s with
dt = g(q) ds, g = (T(q) + c)^(-alpha), T(q) = E0 - V(q) the kinetic energy on the energy surface
H = E0 (small steps where the motion is fast).  The transformed Hamiltonian
K = g (H - E0) = 1/2 p^T (M / g)^-1 p + g (V - E0) is again of the form the library integrates:
a mass matrix M / g and a potential g (V - E0), with p the same momentum, so lobatto5 with
newton="step" runs it as a Python-defined System with a fixed step ds; the steps in t follow g.
K = 0 along the solution, and H - E0 = K / g is the energy error read here.

For each (c, alpha) and step count N: ds is chosen so that N steps cover t = 100 s (t from the
trapezoid rule on g at the nodes: it counts steps, it is not a clock of the run), and the run's
max |H - H0| / |H0| over those N steps is printed with the Newton updates a step.  alpha = 0 is
the fixed step of RESULTS.md section 8.  Python callbacks: ~1 min a row.

    python benchmarks/prototypes/time_transform/run.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import models as M  # noqa: E402

import symplectic as sp  # noqa: E402

P = M.DP
A, B = (P["m1"] + P["m2"]) * P["l1"] ** 2, P["m2"] * P["l1"] * P["l2"]
D = P["m2"] * P["l2"] ** 2
V1, V2 = (P["m1"] + P["m2"]) * P["g"] * P["l1"], P["m2"] * P["g"] * P["l2"]
Q0, P0 = M.DP_Q0, M.DP_P0


def mass(q):
    c = B * math.cos(q[0] - q[1])
    return np.array([[A, c], [c, D]])


def mass_grad(q):
    s = -B * math.sin(q[0] - q[1])
    return np.array([[[0.0, s], [s, 0.0]], [[0.0, -s], [-s, 0.0]]])


def pot(q):
    return -V1 * math.cos(q[0]) - V2 * math.cos(q[1])


def pot_grad(q):
    return np.array([V1 * math.sin(q[0]), V2 * math.sin(q[1])])


E0 = pot(Q0)


def transformed(c, alpha):
    """The System of K and g(q)."""
    def g(q):
        return (E0 - pot(q) + c) ** (-alpha)

    def dg(q):
        return alpha * (E0 - pot(q) + c) ** (-alpha - 1.0) * pot_grad(q)

    system = sp.System(
        2, lambda q: mass(q) / g(q), lambda q: g(q) * (pot(q) - E0),
        mass_grad=lambda q: np.array([mass_grad(q)[k] / g(q) - mass(q) * dg(q)[k] / g(q) ** 2
                                      for k in range(2)]),
        potential_grad=lambda q: dg(q) * (pot(q) - E0) + g(q) * pot_grad(q))
    return system, g


def run(c, alpha, N, T=100.0):
    """(steps to reach T, e_H over them, Newton updates a step) with ds set for N steps."""
    system, g = transformed(c, alpha)
    ds = T / N / g(Q0)
    for _ in range(2):   # the second pass rescales ds by the first pass's mean g
        tr = sp.integrate(system, Q0, P0, ds, int(3 * T / ds / min(g(Q0), 1.0)) + 10,
                          method="lobatto5", newton="step")
        gs = np.array([g(q) for q in tr.q])
        t = np.concatenate([[0.0], np.cumsum(0.5 * ds * (gs[1:] + gs[:-1]))])
        n = int(np.searchsorted(t, T))
        ds *= n / N
    H = np.array([0.5 * p @ np.linalg.solve(mass(q), p) + pot(q) for q, p in zip(tr.q, tr.p)])
    e = np.abs(H[:n + 1] - E0) / abs(E0)
    return n, float(e.max()), float(np.mean(tr.newton_iterations[1:n + 1]))


if __name__ == "__main__":
    print("| c | alpha | N | steps to 100 s | e_H | Newton updates a step |")
    print("|---|---|---|---|---|---|")
    for c, alpha in ((1.0, 0.0), (3.0, 0.5), (5.0, 1.0), (0.5, 0.5)):
        for N in (2400, 2828, 3364):
            n, e, it = run(c, alpha, N)
            print(f"| {c:g} | {alpha:g} | {N} | {n} | {e:.2e} | {it:.2f} |", flush=True)
