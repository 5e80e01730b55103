"""The double pendulum and the Lagrange top as SymPy Lagrangians, in the form
``System.from_sympy(L, q, qdot, params)`` takes: tests/model/test_symbolic.py
checks them against the built-in C systems, benchmarks/suite/symbolic.py times
them.  Needs SymPy."""
import sympy as sy

from symplectic import symbolic

from .models import L_DP, TOP


def dp_lagrangian(l1=L_DP, l2=L_DP):
    """The double pendulum of the TOP paper, Section 3 (absolute angles from the vertical)."""
    q1, q2, u1, u2 = sy.symbols("q1 q2 u1 u2")
    m1, m2, L1, L2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    T = ((m1 + m2) * L1 ** 2 * u1 ** 2 / 2 + m2 * L1 * L2 * sy.cos(q1 - q2) * u1 * u2
         + m2 * L2 ** 2 * u2 ** 2 / 2)
    V = -(m1 + m2) * g * L1 * sy.cos(q1) - m2 * g * L2 * sy.cos(q2)
    params = {m1: 1.0, m2: 1.0, L1: l1, L2: l2, g: 9.81}
    return T - V, [q1, q2], [u1, u2], params


def dp_from_positions(l1=L_DP, l2=L_DP):
    """The same pendulum from the positions of its two point masses (parameters by name)."""
    q1, q2, u1, u2 = sy.symbols("q1 q2 u1 u2")
    m1, m2, L1, L2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    r1 = [L1 * sy.sin(q1), -L1 * sy.cos(q1)]
    r2 = [r1[0] + L2 * sy.sin(q2), r1[1] - L2 * sy.cos(q2)]
    bodies = [(m1, r1), (m2, r2)]
    T = symbolic.kinetic_from_positions([q1, q2], [u1, u2], bodies)
    V = symbolic.gravity_potential(bodies, g)
    params = {"m1": 1.0, "m2": 1.0, "l1": l1, "l2": l2, "g": 9.81}
    return T - V, [q1, q2], [u1, u2], params


def _top_symbols():
    q = list(sy.symbols("phi theta psi"))
    qd = list(sy.symbols("phidot thetadot psidot"))
    m, I, I3, l, g = sy.symbols("m I I3 l g", positive=True)
    params = {m: TOP["m"], I: TOP["I"], I3: TOP["I3"], l: TOP["l"], g: TOP["g"]}
    return q, qd, (m, I, I3, l, g), params


def top_lagrangian():
    """The Lagrange top in ZXZ Euler angles (TOP paper, Section 4, Table 3), textbook form."""
    (ph, th, ps), (dph, dth, dps), (m, I, I3, l, g), params = _top_symbols()
    L = (I / 2 * (dth ** 2 + dph ** 2 * sy.sin(th) ** 2) + I3 / 2 * (dps + dph * sy.cos(th)) ** 2
         - m * g * l * sy.cos(th))
    return L, [ph, th, ps], [dph, dth, dps], params


def top_rigid_body():
    """The top as a rigid body: rotation matrix, centre of mass, inertia about it."""
    q, qd, (m, I, I3, l, g), params = _top_symbols()
    ph, th, ps = q
    R = symbolic.rotation("z", ph) * symbolic.rotation("x", th) * symbolic.rotation("z", ps)
    # I is about the fixed contact point; about the centre of mass it is I - m l^2
    body = symbolic.RigidBody(m, R * sy.Matrix([0, 0, l]), [I - m * l ** 2, I - m * l ** 2, I3],
                              rotation=R)
    L = symbolic.kinetic_from_positions(q, qd, [body]) - symbolic.gravity_potential([body], g)
    return L, q, qd, params
