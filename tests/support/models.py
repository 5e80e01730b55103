"""Independent NumPy models of the papers' systems, reference solvers and order fitting.

Nothing here imports symplectic, so these serve as an independent check of the C core.
"""
import math

import numpy as np

OMEGA0 = 2 * math.pi
G = 9.81
L_DP = G / OMEGA0 ** 2            # TOP/AXIOMS rod length l = g / omega0^2
TOP = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81)   # TOP Table 3
TOP_Q0 = np.array([0.0, math.pi / 3, 0.0])
TOP_QDOT0 = np.array([9.2, 0.0, 252.0])
# Exact nutation period of TOP Table 3's parameters (docs/errata.md; the printed
# 1.84671 s corresponds to I rounded to 0.00233).
TOP_PERIOD = 1.8472390


# ---------------------------------------------------------------- models
def dp_callables(m1=1.0, m2=1.0, l1=L_DP, l2=L_DP, g=G):
    """Double pendulum of TOP Section 3.1 written directly from the paper."""
    k = m2 * l1 * l2

    def mass(q):
        c = math.cos(q[0] - q[1])
        return np.array([[(m1 + m2) * l1 ** 2, k * c], [k * c, m2 * l2 ** 2]])

    def mass_grad(q):
        s = math.sin(q[0] - q[1])
        T = np.zeros((2, 2, 2))
        T[0, 0, 1] = T[0, 1, 0] = -k * s
        T[1, 0, 1] = T[1, 1, 0] = k * s
        return T

    def mass_hess(q):
        c = math.cos(q[0] - q[1])
        T = np.zeros((2, 2, 2, 2))
        for a, b, sgn in ((0, 0, -1), (0, 1, 1), (1, 0, 1), (1, 1, -1)):
            T[a, b, 0, 1] = T[a, b, 1, 0] = sgn * k * c
        return T

    def potential(q):
        return -(m1 + m2) * g * l1 * math.cos(q[0]) - m2 * g * l2 * math.cos(q[1])

    def potential_grad(q):
        return np.array([(m1 + m2) * g * l1 * math.sin(q[0]), m2 * g * l2 * math.sin(q[1])])

    def potential_hess(q):
        return np.diag([(m1 + m2) * g * l1 * math.cos(q[0]), m2 * g * l2 * math.cos(q[1])])

    return dict(mass=mass, mass_grad=mass_grad, mass_hess=mass_hess, potential=potential,
                potential_grad=potential_grad, potential_hess=potential_hess)


def top_callables(m=TOP["m"], I=TOP["I"], I3=TOP["I3"], l=TOP["l"], g=TOP["g"]):
    """Lagrange top of TOP Section 4.1 (ZXZ Euler angles) in NumPy."""
    mgl = m * g * l

    def mass(q):
        s, c = math.sin(q[1]), math.cos(q[1])
        return np.array([[I * s * s + I3 * c * c, 0, I3 * c], [0, I, 0], [I3 * c, 0, I3]])

    def mass_grad(q):
        s, c = math.sin(q[1]), math.cos(q[1])
        T = np.zeros((3, 3, 3))
        T[1] = [[2 * (I - I3) * s * c, 0, -I3 * s], [0, 0, 0], [-I3 * s, 0, 0]]
        return T

    def mass_hess(q):
        s, c = math.sin(q[1]), math.cos(q[1])
        T = np.zeros((3, 3, 3, 3))
        T[1, 1] = [[2 * (I - I3) * (c * c - s * s), 0, -I3 * c], [0, 0, 0], [-I3 * c, 0, 0]]
        return T

    def potential(q):
        return mgl * math.cos(q[1])

    def potential_grad(q):
        return np.array([0.0, -mgl * math.sin(q[1]), 0.0])

    def potential_hess(q):
        K = np.zeros((3, 3))
        K[1, 1] = -mgl * math.cos(q[1])
        return K

    return dict(mass=mass, mass_grad=mass_grad, mass_hess=mass_hess, potential=potential,
                potential_grad=potential_grad, potential_hess=potential_hess)


def hamilton_rhs(c):
    """Hamilton's equations y = (q, p) from NumPy callables (for SciPy references)."""

    def f(t, y):
        n = len(y) // 2
        q, p = y[:n], y[n:]
        M = c["mass"](q)
        v = np.linalg.solve(M, p)
        T = c["mass_grad"](q)
        pdot = -c["potential_grad"](q) + 0.5 * np.einsum("kij,i,j->k", T, v, v)
        return np.concatenate([v, pdot])

    return f


def reference(c, q0, p0, t_eval, rtol=1e-13):
    """Tight DOP853 solution of Hamilton's equations (independent of the C core)."""
    from scipy.integrate import solve_ivp
    y0 = np.concatenate([q0, p0])
    sol = solve_ivp(hamilton_rhs(c), (t_eval[0], t_eval[-1]), y0, method="DOP853",
                    t_eval=t_eval, rtol=rtol, atol=rtol * 1e-2)
    assert sol.success
    n = len(q0)
    return sol.y[:n].T, sol.y[n:].T


def symplecticity_defect(D):
    """||D^T J D - J|| / ||D||^2 of a map's derivative D (2n x 2n, (q, p) order)."""
    n = D.shape[0] // 2
    J = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    return np.linalg.norm(D.T @ J @ D - J) / np.linalg.norm(D) ** 2


def fitted_order(hs, errs):
    """Least-squares slope of log(err) against log(h)."""
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0])
