"""Built-in systems, implemented in C with analytic derivatives.

Each factory returns a :class:`symplectic.System` whose M, V and all their
derivatives are evaluated in C (no Python in the integration loop; the GIL
is released).  SI units are assumed in the docstrings (kg, m, s, rad) but any
consistent system works.

Each C built-in (a row of ``csrc/sym_systems.c``) has its factory here,
bearing its name and registered with ``@_registry.builtin``; a named
configuration of a built-in is registered with ``@_registry.preset(name)``.
The test suite requires a factory for every C built-in
(:func:`symplectic._registry.missing_factories`) and an independently
written Python twin of each in tests/test_registry.py.
"""
import math

import numpy as np

from . import _registry, _validate, forces
from ._system import System

__all__ = ["pendulum", "linear", "double_pendulum", "lagrange_top", "pendulum_chain",
           "pendulum_cartesian", "spherical_pendulum_cartesian", "four_bar",
           "linear_double_pendulum", "available"]

#: Table 3 of the TOP paper (a toy top; Laos 2022): mass, moments of inertia, distance.
TOP_TABLE3 = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81)


def _joint_damping(damping, n):
    """Viscous friction c_i at the joints of a planar chain in absolute angles.

    Joint 0 is the pivot (relative angle q_0), joint i > 0 joins rods i - 1
    and i (relative angle q_i - q_{i-1}); its torque -c_i (relative rate)
    acts on both rods, so F = -D qdot with D = Delta^T diag(c) Delta,
    Delta the difference matrix (row i: e_i - e_{i-1}; row 0: e_0).
    Returns (the Force or None when every c_i is 0, the values for params).
    """
    a = np.asarray(damping, dtype=float)
    c = np.full(n, float(a)) if a.ndim == 0 else a
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"damping must be a scalar or {n} values, finite and >= 0, got "
                         f"{np.asarray(damping).tolist()}")
    if not np.any(c):
        return None, None
    delta = np.eye(n) - np.eye(n, k=-1)
    D = delta.T @ np.diag(c) @ delta
    return forces.linear_damping(D), (float(c[0]) if a.ndim == 0 else c.copy())


def _with_damping(params, value):
    """params with ``damping`` when the system has some."""
    return dict(params, damping=value) if value is not None else params


@_registry.builtin
def pendulum(m=1.0, omega=2 * math.pi, damping=0.0):
    """Nonlinear pendulum, L = 1/2 m qdot^2 - m omega^2 (1 - cos q)  (FVCA paper).

    q is the angle from the downward vertical (rad), p = m qdot.  ``m`` plays
    the role of the moment of inertia (kg m^2) and ``omega`` (rad/s) is the
    small-oscillation angular frequency sqrt(g/l).  Defaults: m = 1, omega = 2 pi
    (FVCA Table 1).  ``damping`` c >= 0 (N m s/rad): viscous friction at the
    pivot, the torque -c qdot (``System.force``, evaluated in C).
    """
    m = _validate.positive("m", m)
    omega = _validate.real("omega", omega)
    force, c = _joint_damping(_validate.nonnegative("damping", damping), 1)
    return System._from_builtin("pendulum", 1, [m, omega],
                                _with_damping(dict(m=m, omega=omega), c), force)


@_registry.builtin
def linear(M, K):
    """Quadratic Lagrangian L = 1/2 qdot^T M qdot - 1/2 q^T K q  (AXIOMS paper).

    ``M`` must be symmetric positive definite and ``K`` symmetric (both
    constant, shape (n, n)).  The equations of motion are M qdd + K q = 0;
    see :mod:`symplectic.linear` for the schemes in closed form.
    """
    M, K = _validate.stiffness_pair(M, K)
    n = M.shape[0]
    return System._from_builtin("linear", n, np.concatenate([M.ravel(), K.ravel()]),
                                dict(M=M.copy(), K=K.copy()))


@_registry.builtin
def double_pendulum(m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=9.81, damping=0.0):
    """Planar double pendulum (TOP paper, Section 3).

    q = (q1, q2): absolute angles of the two rods from the downward vertical
    (rad); point masses m1, m2 (kg) on massless rods l1, l2 (m); gravity g
    (m/s^2).  M = [[(m1+m2) l1^2, m2 l1 l2 cos(q1-q2)], [.., m2 l2^2]],
    V = -(m1+m2) g l1 cos q1 - m2 g l2 cos q2 (no constant: V < 0 near rest).
    The TOP paper's runs use l1 = l2 = g/omega0^2 with omega0 = 2 pi.
    ``damping``: viscous joint friction c >= 0 (N m s/rad), a scalar or
    (c_pivot, c_elbow): torques -c_1 q1' at the pivot and -c_2 (q2' - q1')
    at the elbow, F = -D qdot with D = [[c1 + c2, -c2], [-c2, c2]]
    (``System.force``, evaluated in C).
    """
    positive = _validate.positive
    vals = [positive("m1", m1), positive("m2", m2), positive("l1", l1), positive("l2", l2),
            _validate.real("g", g)]
    force, c = _joint_damping(damping, 2)
    return System._from_builtin("double_pendulum", 2, vals,
                                _with_damping(dict(zip(("m1", "m2", "l1", "l2", "g"), vals)), c),
                                force)


@_registry.builtin
def lagrange_top(m=TOP_TABLE3["m"], I=TOP_TABLE3["I"], I3=TOP_TABLE3["I3"], l=TOP_TABLE3["l"],
                 g=9.81, damping=0.0):
    """Heavy symmetric (Lagrange) top in ZXZ Euler angles q = (phi, theta, psi) (TOP paper, Sec. 4).

    m: mass (kg); I = I1 = I2 and I3: moments of inertia about the fixed
    contact point (kg m^2); l: distance from the contact point to the centre of
    mass (m); g (m/s^2).  M = [[I sin^2 + I3 cos^2, 0, I3 cos], [0, I, 0],
    [I3 cos, 0, I3]] (theta), V = m g l cos(theta).  phi (precession) and psi
    (spin) are cyclic: p_phi and p_psi are conserved.  Defaults: TOP Table 3.
    ``damping`` c >= 0 (N m s/rad): viscous friction at the fixed point, the
    torque -c omega against the angular velocity, i.e. F = -c G(theta) qdot
    with G = [[1, 0, cos theta], [0, 1, 0], [cos theta, 0, 1]] (the C force
    term "pivot_friction"; it dissipates c |omega|^2).
    """
    positive = _validate.positive
    vals = [positive("m", m), positive("I", I), positive("I3", I3), _validate.real("l", l),
            _validate.real("g", g)]
    c = _validate.nonnegative("damping", damping)
    force = forces._builtin("pivot_friction", [c], 3) if c > 0 else None
    return System._from_builtin("lagrange_top", 3, vals,
                                _with_damping(dict(zip(("m", "I", "I3", "l", "g"), vals)),
                                              c if c > 0 else None), force)


@_registry.builtin
def pendulum_chain(n, m=1.0, l=1.0, g=9.81, damping=0.0):
    """Planar chain of n point masses on massless rods (n-link pendulum).

    q_i: absolute angle of rod i from the downward vertical (rad).  ``m`` and
    ``l`` are scalars or length-n sequences (kg, m).  With mu_i = sum_{k>=i} m_k,
    M_ij = l_i l_j mu_max(i,j) cos(q_i - q_j) and V = -g sum_i mu_i l_i cos q_i.
    Every evaluation costs O(n^2) (O(n) sines and cosines).  n = 2 is the
    double pendulum.  ``damping``: viscous joint friction, a scalar or n
    values c_i >= 0 (joint 0 the pivot, joint i between rods i - 1 and i):
    torques -c_i times the relative angular rate, F = -D qdot with the
    tridiagonal D = Delta^T diag(c) Delta (``System.force``, in C).
    """
    n = _validate.dof(n)
    ms = _validate.positive_values("m", m, n)
    ls = _validate.positive_values("l", l, n)
    g = _validate.real("g", g)
    force, c = _joint_damping(damping, n)
    return System._from_builtin("pendulum_chain", n, np.concatenate([ms, ls, [g]]),
                                _with_damping(dict(n=n, m=ms, l=ls, g=g), c), force)


@_registry.builtin
def pendulum_cartesian(m=1.0, l=1.0, g=9.81):
    """Planar pendulum in Cartesian coordinates, a holonomically constrained system.

    q = (x, y): the position of the point mass m (kg) with the pivot at the
    origin and y pointing up (m); M = m I, V = m g y.  One constraint,
    g(q) = (x^2 + y^2 - l^2) / 2 (the rod of length l), G = (x, y); the
    constraint force is -lambda (x, y), so the rod's tension is lambda l
    (:attr:`Trajectory.multipliers`).  The angle from the downward vertical
    is theta = atan2(x, -y); theta follows the pendulum of
    :func:`symplectic.exact.pendulum` with omega = sqrt(g / l) and
    moment of inertia m l^2.  Integrate with a variational method (not
    rk4) from a consistent state (x^2 + y^2 = l^2, velocity tangent to the
    circle; :meth:`System.project`).
    """
    vals = [_validate.positive("m", m), _validate.positive("l", l), _validate.real("g", g)]
    return System._from_builtin("pendulum_cartesian", 2, vals, dict(zip(("m", "l", "g"), vals)))


@_registry.builtin
def spherical_pendulum_cartesian(m=1.0, l=1.0, g=9.81):
    """Spherical pendulum in Cartesian coordinates q = (x, y, z), z up.

    A point mass m (kg) on a rod of length l (m) pivoting at the origin;
    M = m I, V = m g z, one constraint g(q) = (|q|^2 - l^2) / 2 with
    G = q^T; the constraint force is -lambda q (tension lambda l).  The
    vertical angular momentum L_z = x p_y - y p_x is conserved (the
    variational schemes conserve it to rounding: the constraint and V are
    invariant under rotations about z).
    """
    vals = [_validate.positive("m", m), _validate.positive("l", l), _validate.real("g", g)]
    return System._from_builtin("spherical_pendulum_cartesian", 3, vals,
                                dict(zip(("m", "l", "g"), vals)))


@_registry.builtin
def four_bar(m1=0.3, m2=1.0, m3=0.8, l1=0.3, l2=1.0, l3=0.8, d=1.0, g=9.81):
    """Planar four-bar linkage: a closed kinematic chain with two holonomic constraints.

    Three uniform rods -- crank OA (mass m1, length l1), coupler AB (m2, l2)
    and rocker DB (m3, l3) -- pinned to the ground at O = (0, 0) and
    D = (d, 0) and to each other at A and B, under gravity g along -y.
    q = (theta1, theta2, theta3): the absolute angles of crank, coupler and
    rocker from the +x axis (rad).  M(q) = [[(m1/3 + m2) l1^2,
    m2 l1 l2 cos(theta1 - theta2) / 2, 0], [.., m2 l2^2 / 3, 0],
    [0, 0, m3 l3^2 / 3]], V = g [(m1/2 + m2) l1 sin theta1
    + m2 l2/2 sin theta2 + m3 l3/2 sin theta3], and the loop closure

        g1 = l1 cos theta1 + l2 cos theta2 - l3 cos theta3 - d = 0,
        g2 = l1 sin theta1 + l2 sin theta2 - l3 sin theta3 = 0,

    leaving one degree of freedom.  -G^T lambda is the generalised force of
    the pin force lambda that the rocker exerts on the coupler at B (in the
    -x, -y directions).  Defaults: a Grashof crank-rocker (l1 + l2 < l3 + d)
    of rods with 1 kg/m.  A consistent state from a crank angle:
    ``sys.project([theta1, theta2_guess, theta3_guess], p)``.
    """
    positive = _validate.positive
    names = ("m1", "m2", "m3", "l1", "l2", "l3", "d")
    vals = [positive(k, v) for k, v in zip(names, (m1, m2, m3, l1, l2, l3, d))]
    vals.append(_validate.real("g", g))
    return System._from_builtin("four_bar", 3, vals, dict(zip(names + ("g",), vals)))


@_registry.preset("linear")
def linear_double_pendulum(m1=1.0, m2=1.0, l=9.81 / (2 * math.pi) ** 2, g=9.81):
    """Linearised double pendulum (AXIOMS paper, Section 5) as a ``linear`` system.

    Small oscillations about the downward rest position with equal rods l:
    M = [[(m1+m2) l^2, m2 l^2], [m2 l^2, m2 l^2]], K = diag((m1+m2) g l, m2 g l).
    Defaults: m1 = m2 = 1 and l = g/omega0^2 with omega0 = 2 pi (AXIOMS Table 1).
    """
    positive = _validate.positive
    m1, m2, l, g = positive("m1", m1), positive("m2", m2), positive("l", l), positive("g", g)
    M = np.array([[(m1 + m2) * l * l, m2 * l * l], [m2 * l * l, m2 * l * l]])
    K = np.diag([(m1 + m2) * g * l, m2 * g * l])
    return linear(M, K)


def available():
    """{name: description} of the built-in C systems."""
    return {name: b.doc for name, b in _registry.BUILTINS.items()}
