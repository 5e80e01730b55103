"""A 3-link pendulum on a cart, built with ``symplectic.symbolic`` (test helper).

q = (x, theta_1, theta_2, theta_3): cart position on a horizontal rail and the
absolute angles of three massless rods from the downward vertical, with point
masses at the rod ends (the layout of pydy's n-link pendulum on a cart).
Parameters: cart mass 1 kg, three bobs of 1 kg, rods of 0.96 m, g = 9.81 m/s^2.
Linearised about the hanging equilibrium, omega^2 are the generalised eigenvalues
of (hess V, M) at q = 0; they are 0, 3.85, 8.03 and 8.90 rad/s, so
omega_max = 8.90 rad/s (checked independently in test_spurious_roots.py).
"""
import functools

import numpy as np

CART = dict(mc=1.0, m=1.0, l=0.96, g=9.81)


@functools.lru_cache(maxsize=None)
def cart_pendulum3():
    """The compiled SymPy system (cached per test session)."""
    import sympy as sy
    from symplectic import symbolic
    x, t1, t2, t3 = sy.symbols("x theta1 theta2 theta3")
    xd, d1, d2, d3 = sy.symbols("xdot theta1dot theta2dot theta3dot")
    mc, m, l, g = sy.symbols("m_c m l g", positive=True)
    bodies = [(mc, [x, 0])]
    px, py = x, sy.Integer(0)
    for th in (t1, t2, t3):
        px, py = px + l * sy.sin(th), py - l * sy.cos(th)
        bodies.append((m, [px, py]))
    q, qd = [x, t1, t2, t3], [xd, d1, d2, d3]
    T = symbolic.kinetic_from_positions(q, qd, bodies)
    V = symbolic.gravity_potential(bodies, g)
    return symbolic.system(T - V, q, qd, params={mc: CART["mc"], m: CART["m"],
                                                 l: CART["l"], g: CART["g"]})


def linearised_MK(mc=CART["mc"], m=CART["m"], l=CART["l"], g=CART["g"]):
    """M(0) and hess V(0) written by hand (independent of the SymPy model):
    bob i sits at x + l sum_{k<=i} sin theta_k, so M_00 = mc + 3m,
    M_0i = m l (4 - i), M_ij = m l^2 (4 - max(i, j)), K_ii = m g l (4 - i)."""
    M = np.zeros((4, 4))
    K = np.zeros((4, 4))
    M[0, 0] = mc + 3 * m
    for i in range(1, 4):
        M[0, i] = M[i, 0] = m * l * (4 - i)
        for j in range(1, 4):
            M[i, j] = m * l * l * (4 - max(i, j))
        K[i, i] = m * g * l * (4 - i)
    return M, K


@functools.lru_cache(maxsize=None)
def cart_pendulum3_trial():
    """The first-week trial's 3-link pendulum on a cart (issue 30, item 3):
    cart 1 kg, bobs 0.5, 0.4, 0.3 kg on rods of 0.8, 0.6, 0.5 m, absolute
    angles from +x, g = 9.81, built exactly as the trial wrote it."""
    import sympy as sy
    from symplectic import symbolic
    import symplectic as sp
    x, a1, a2, a3 = q = sy.symbols("x a1 a2 a3")
    qd = sy.symbols("xd ad1 ad2 ad3")
    m, ln, P = [1.0, 0.5, 0.4, 0.3], [0.8, 0.6, 0.5], [x, 0]
    pts = [(m[0], [x, 0])]
    for i, ai in enumerate((a1, a2, a3)):
        P = [P[0] + ln[i] * sy.cos(ai), P[1] + ln[i] * sy.sin(ai)]
        pts.append((m[i + 1], P))
    L = symbolic.kinetic_from_positions(q, qd, pts) - symbolic.gravity_potential(pts, 9.81)
    return sp.System.from_sympy(L, q, qd)


#: The trial's start: q0 and the velocities that give p0 = M(q0) qdot0.
TRIAL_Q0 = np.array([0.1, -np.pi / 2 + 1.0, -np.pi / 2 + 0.5, -np.pi / 2 - 0.3])
TRIAL_QDOT0 = np.array([0.3, -0.5, 1.0, -0.7])

#: The earlier trust issue's trial state of cart_pendulum3: cart at rest, links
#: at 0.8, 0.5, -0.4 rad, at rest.
Q0_TRIAL_CART = np.array([0.0, 0.8, 0.5, -0.4])
