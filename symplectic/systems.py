"""Built-in systems, implemented in C with analytic derivatives.

Each factory returns a :class:`symplectic.System` whose M, V and all their
derivatives are evaluated in C (no Python in the integration loop; the GIL
is released).  SI units are assumed in the docstrings (kg, m, s, rad) but any
consistent system works.

Each C built-in (a row of ``csrc/core/sym_systems.c``) has its factory here,
bearing its name and registered with ``@_registry.builtin``; a named
configuration of a built-in is registered with ``@_registry.preset(name)``.
The test suite requires a factory for every C built-in
(:func:`symplectic._model._registry.missing_factories`) and an independently
written Python twin of each in tests/model/test_registry.py.
"""
import math

import numpy as np

from ._model import _matrices, _registry, _topchart, _validate
from . import forces
from ._model._system import System

__all__ = ["pendulum", "linear", "double_pendulum", "lagrange_top", "lagrange_top_quaternion",
           "pendulum_chain", "pendulum_cartesian", "spherical_pendulum_cartesian", "four_bar",
           "linear_double_pendulum", "available", "QuaternionTop"]

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
    M, K = _matrices.stiffness_pair(M, K)
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

    The coordinate singularity.  det M = I^2 I3 sin^2(theta): at theta = 0
    and pi the ZXZ angles are not defined, and a motion passing within a few
    milliradians of either makes the schemes' error grow like
    1/theta_min^3..4 with no other sign.  So the system refuses it, with a
    :class:`symplectic.ConvergenceError` whose reason begins "coordinate
    singularity" (:func:`lagrange_top_quaternion` is the same top in unit
    quaternions, without the singularity):

    - before the first step, in :func:`symplectic.step`,
      :func:`symplectic.integrate` and :func:`symplectic.integrate_many`:
      when the exact motion from (q0, p0) comes within |sin(theta)| < 0.01
      (10 mrad) of theta = 0 or pi.  Energy, p_phi and p_psi are conserved
      and u = cos(theta) moves between two roots of the cubic
      udot^2 = f(u) of :class:`symplectic.exact.LagrangeTop`, so the
      closest approach is known from (q0, p0) (the message gives it in mrad;
      ``err.step`` is 0, ``err.t`` is t0, ``err.trajectory`` the initial
      state alone; an ``integrate_many`` member is refused like a failing
      one).  The decision is about the whole motion, not the run's span: a
      top released at rest (it falls through theta = pi) is refused even
      for a run that would end before it gets there.  A motion keeping
      |sin(theta)| >= 0.01 runs as before, bitwise.
    - at every point the C core evaluates (nodes, Newton iterates, RK4
      stages): |sin(theta)| < 0.01 fails the step (SYM_ECHART).  This is the
      only check of what does not start from step/integrate/integrate_many
      (``analysis.tangent_map``, the binding ``symplectic._core``) and of a
      state whose cubic overflows (momenta beyond ~1e150); on its own it
      misses steps whose nodes straddle the 10 mrad disc.

    The exact cubic assumes the Lagrangian alone drives the motion: with
    ``damping`` > 0 or a ``force=`` the energy and momenta change, and only
    the pointwise check holds.
    """
    positive = _validate.positive
    vals = [positive("m", m), positive("I", I), positive("I3", I3), _validate.real("l", l),
            _validate.real("g", g)]
    c = _validate.nonnegative("damping", damping)
    force = forces._builtin("pivot_friction", [c], 3) if c > 0 else None
    return System._from_builtin("lagrange_top", 3, vals,
                                _with_damping(dict(zip(("m", "I", "I3", "l", "g"), vals)),
                                              c if c > 0 else None), force)


# the ZXZ top's pre-run check of its closest approach to theta = 0, pi (see above)
_registry.state_check("lagrange_top", _topchart.refusal)


class QuaternionTop(System):
    """The heavy symmetric top in a unit quaternion (:func:`lagrange_top_quaternion`).

    A :class:`symplectic.System` with n = 4 and, besides, the conversions to
    and from the ZXZ Euler angles of :func:`lagrange_top` and the symmetry
    axis in space.  Conventions: Q = (q0, q1, q2, q3), scalar first, Hamilton
    product; Q maps body to space vectors, x_space = Q x_body Q*, and the ZXZ
    angles (phi, theta, psi) give Q = qz(phi) qx(theta) qz(psi), i.e.

        Q = (cos(theta/2) cos((phi+psi)/2), sin(theta/2) cos((phi-psi)/2),
             sin(theta/2) sin((phi-psi)/2), cos(theta/2) sin((phi+psi)/2)).

    The body angular velocity is w = 2 E(Q) Qdot (the vector part of
    2 Q* Qdot) and the canonical momentum P = M(Q) Qdot = 2 E(Q)^T J w on the
    constraint manifold (|Q| = 1, Q.Qdot = 0), J w being the body angular
    momentum: so Q.P = 0 there, and p = (dQ/dq)^T P gives back the Euler
    momenta (p_phi the angular momentum about the vertical, p_theta about
    the line of nodes, p_psi about the body axis).
    """

    def __reduce__(self):
        return (lagrange_top_quaternion, tuple(self._params[k] for k in ("m", "I", "I3", "l", "g")))

    @staticmethod
    def _rows(name, x, width, shape=None):
        a = _validate.states(name, x, width)
        if shape is not None and np.shape(x) != shape:
            raise ValueError(f"{name} must have the shape of the angles/quaternions "
                             f"{shape}, got {np.shape(x)}")
        return a

    def from_euler(self, q, p):
        """ZXZ angles q = (phi, theta, psi) and their canonical momenta p (those
        of :func:`lagrange_top` with the same parameters) -> (Q, P).

        Rows (N, 3) -> (N, 4), or one state (3,) -> (4,).  Q is the unit
        quaternion of the rotation (class docstring); P = M(Q) Qdot with
        Qdot = (dQ/dq) qdot and qdot the Euler rates of (q, p): P = 2 E(Q)^T L
        with L the body angular momentum,

            L = (s sin psi + p_theta cos psi, s cos psi - p_theta sin psi, p_psi),
            s = (p_phi - p_psi cos theta) / sin theta,

        so Q.P = 0 (the hidden constraint).  theta with sin(theta) = 0 (the
        axis vertical) is refused: the Euler momenta do not determine P there.
        """
        one = np.ndim(q) == 1
        q = self._rows("q", q, 3)
        p = self._rows("p", p, 3, np.shape(q) if not one else (3,))
        phi, th, psi = q[:, 0], q[:, 1], q[:, 2]
        st = np.sin(th)
        if np.any(st == 0.0):
            k = int(np.argmax(st == 0.0))
            raise ValueError(f"from_euler: sin(theta) = 0 at row {k} (theta = {th[k]!r}): the "
                             "axis is vertical, where the ZXZ momenta do not determine P")
        c2, s2 = np.cos(0.5 * th), np.sin(0.5 * th)
        a, b = 0.5 * (phi + psi), 0.5 * (phi - psi)
        Q = np.stack([c2 * np.cos(a), s2 * np.cos(b), s2 * np.sin(b), c2 * np.sin(a)], axis=-1)
        sig = (p[:, 0] - p[:, 2] * np.cos(th)) / st
        sp_, cp_ = np.sin(psi), np.cos(psi)
        L = np.stack([sig * sp_ + p[:, 1] * cp_, sig * cp_ - p[:, 1] * sp_, p[:, 2]], axis=-1)
        P = 2.0 * np.einsum("nki,nk->ni", _quat_E(Q), L)
        return (Q[0], P[0]) if one else (Q, P)

    def to_euler(self, Q, P):
        """(Q, P) -> ZXZ angles q = (phi, theta, psi) and canonical momenta p.

        Rows (N, 4) -> (N, 3), or one state (4,) -> (3,).  Q need not be
        normalised (the rotation of Q/|Q|).  theta in [0, pi]; phi and psi in
        (-pi, pi] (from_euler(to_euler(Q, P)) gives Q or -Q, the same
        rotation).  At theta = 0 only phi + psi is defined: psi = phi is
        returned (at theta = pi, psi = -phi).  The momenta are
        p = (dQ/dq)^T P: p_phi = L . gamma, p_theta = L1 cos psi - L2 sin psi,
        p_psi = L3, with L = E(Q) P / (2 |Q|^2) the body angular momentum and
        gamma = (sin theta sin psi, sin theta cos psi, cos theta) the vertical
        in the body frame.  A component of P along Q (off the hidden
        constraint Q.P = 0) does not enter.
        """
        one = np.ndim(Q) == 1
        Q = self._rows("Q", Q, 4)
        P = self._rows("P", P, 4, np.shape(Q) if not one else (4,))
        nq = np.einsum("ni,ni->n", Q, Q)
        if np.any(nq == 0.0):
            raise ValueError(f"to_euler: Q = 0 at row {int(np.argmax(nq == 0.0))}")
        q0, q1, q2, q3 = Q.T
        th = 2.0 * np.arctan2(np.hypot(q1, q2), np.hypot(q0, q3))
        a, b = np.arctan2(q3, q0), np.arctan2(q2, q1)
        phi, psi = _wrap(a + b), _wrap(a - b)
        L = np.einsum("nki,ni->nk", _quat_E(Q), P) / (2.0 * nq[:, None])
        st, ct, sp_, cp_ = np.sin(th), np.cos(th), np.sin(psi), np.cos(psi)
        p = np.stack([L[:, 0] * st * sp_ + L[:, 1] * st * cp_ + L[:, 2] * ct,
                      L[:, 0] * cp_ - L[:, 1] * sp_, L[:, 2]], axis=-1)
        q = np.stack([phi, th, psi], axis=-1)
        return (q[0], p[0]) if one else (q, p)

    def axis(self, Q):
        """The symmetry axis in space, R(Q/|Q|) e3, shape (..., 3) for Q (..., 4):

            (2 (q1 q3 + q0 q2), 2 (q2 q3 - q0 q1), q0^2 - q1^2 - q2^2 + q3^2) / |Q|^2,

        equal to (sin theta sin phi, -sin theta cos phi, cos theta) in ZXZ angles.
        """
        Q = np.asarray(Q, dtype=float)
        if Q.ndim < 1 or Q.shape[-1] != 4:
            raise ValueError(f"Q must have shape (..., 4), got {Q.shape}")
        q0, q1, q2, q3 = np.moveaxis(Q, -1, 0)
        nq = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3
        return np.stack([2.0 * (q1 * q3 + q0 * q2), 2.0 * (q2 * q3 - q0 * q1),
                         q0 * q0 - q1 * q1 - q2 * q2 + q3 * q3], axis=-1) / nq[..., None]


def _quat_E(Q):
    """E(Q) of rows Q (N, 4): (N, 3, 4), the vector part of Q* Qdot = E(Q) Qdot."""
    q0, q1, q2, q3 = Q.T
    return np.stack([np.stack([-q1, q0, q3, -q2], -1), np.stack([-q2, -q3, q0, q1], -1),
                     np.stack([-q3, q2, -q1, q0], -1)], axis=1)


def _wrap(a):
    """Angles to (-pi, pi]."""
    return np.pi - np.mod(np.pi - a, 2.0 * np.pi)


@_registry.builtin
def lagrange_top_quaternion(m=TOP_TABLE3["m"], I=TOP_TABLE3["I"], I3=TOP_TABLE3["I3"],
                            l=TOP_TABLE3["l"], g=9.81):
    """Heavy symmetric (Lagrange) top in a unit quaternion Q = (q0, q1, q2, q3) (issue 17).

    The same top as :func:`lagrange_top` (same parameters, defaults TOP
    Table 3) without the Euler angles' singularity at theta = 0: the
    configuration is the unit quaternion Q of the rotation body -> space
    (scalar first; conventions and the ZXZ correspondence in
    :class:`QuaternionTop`), n = 4, with the holonomic constraint
    |Q|^2 = 1.  With E(Q) the 3 x 4 matrix of the body angular velocity
    w = 2 E(Q) Qdot and J = diag(I, I, I3),

        L = 1/2 Qdot^T M(Q) Qdot - V(Q),
        M(Q) = 4 E^T J E + c Q Q^T = 4 I |Q|^2 Id - 4 (I - I3) e e^T,   c = 4 I,
        V(Q) = m g l (q0^2 - q1^2 - q2^2 + q3^2)   (m g l times the axis' z-component),

    e = (-q3, q2, -q1, q0).  The rigid body's kinetic energy 2 Qdot^T E^T J E
    Qdot alone is singular along Q (E Q = 0), hence the added term
    (c/2) (Q.Qdot)^2, which makes M positive definite for Q != 0 with
    eigenvalues 4 I |Q|^2 (three) and 4 I3 |Q|^2: c = 4 I keeps the condition
    number at I/I3, the body's own (any c in [4 I3, 4 I] does; outside, it
    grows like c/(4 I3) or 4 I/c).

    The constraint (one, ``n_constraints == 1``): g(Q) = |Q|^2 - 1,
    G(Q) = 2 Q^T, second derivative 2 Id; the constraint force -2 lambda Q
    (:attr:`Trajectory.multipliers`) is radial in R^4.  On the constraint
    manifold the added term changes nothing: along any curve with |Q| = 1,
    Q.Qdot = 0 at all times, so the term, its contribution c (Q.Qdot) Q to
    the momentum and its Euler-Lagrange force c (d/dt (Q.Qdot)) Q all vanish
    -- the motion, the energy, P = M Qdot = 2 E^T J w and the multiplier are
    the rigid body's for every c.  Since M Q = c |Q|^2 Q, the hidden
    constraint G M^-1 P = 0 the schemes impose at every step's end is
    2 Q.P / (c |Q|^2) = 0, i.e. Q.P = 0 (P orthogonal to Q).  Off the exact
    solution, c enters the discrete equations only at O(h^order) (and the
    conditioning of Newton).

    Rotations about the space vertical (Q -> r Q) and the body axis
    (Q -> Q r) leave L and the constraint invariant, so the variational
    methods conserve the momentum maps p_phi = P.(k Q)/2 and
    p_psi = P.(Q k)/2 (k = (0, 0, 0, 1), Hamilton products) -- the Euler
    momenta of :func:`lagrange_top` -- to rounding.  Integrate with a
    variational method (not rk4) from a consistent state: |Q| = 1 and
    Q.P = 0, as :meth:`QuaternionTop.from_euler` gives.

    Step size -- the trade-off with :func:`lagrange_top`.  Q turns with the
    body, by about h |Omega| per step (Omega the body's angular velocity,
    mostly the spin Omega3 = p_psi / I3 on a fast top), which the ZXZ form
    never has to resolve (psi is cyclic there).  The schemes keep their order
    once h Omega3 is below about 0.2 ... 0.4 rad (measured,
    tests/model/test_quaternion_top.py): on TOP Table 3's top (Omega3 = 257 rad/s)
    only from N = 1280 steps per nutation period (h Omega3 = 0.37), not at
    the papers' N = 40 ... 320 (h Omega3 = 5.9 ... 0.74: Newton fails or the
    axis is off by up to 1.7 rad); on a top spinning at 20 rad/s whose axis
    passes 2 mrad from the vertical, already at the papers' N = 40 ... 320
    (h Omega3 = 0.33 ... 0.04; Simpson order 4.00, Lobatto-4 6.03, where the
    ZXZ equations are off by 1.7 rad at h = 0.01).  So a fast top that stays
    away from the vertical is cheaper in ZXZ angles (50 ... 170 x at equal
    accuracy on Table 3, benchmarks/RESULTS.md section 17); near the vertical,
    where the ZXZ form refuses, use this form with h resolving the spin.

    The returned :class:`QuaternionTop` has ``from_euler(q, p) -> (Q, P)``,
    ``to_euler(Q, P) -> (q, p)`` and ``axis(Q)``.
    """
    positive = _validate.positive
    vals = [positive("m", m), positive("I", I), positive("I3", I3), _validate.real("l", l),
            _validate.real("g", g)]
    return QuaternionTop._from_builtin("lagrange_top_quaternion", 4, vals,
                                       dict(zip(("m", "I", "I3", "l", "g"), vals)))


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


@_registry.builtin
def tree(n, par, damping=0.0):
    """A rigid-body tree of n revolute and prismatic joints from the C built-in's flat
    parameters (the layout: :meth:`symplectic.multibody.Tree.flat_parameters`).

    Build trees with :mod:`symplectic.multibody` (``Tree.system``, ``from_urdf``), which
    checks what C cannot (physical inertias, a joint that moves no mass) and names the
    element; this constructor is how a saved or pickled tree's system is made again.
    ``damping``: a scalar or n values c_j >= 0 (N m s/rad or N s/m), the generalized
    force -c_j qdot_j on coordinate j (``System.force``, in C).
    """
    n = _validate.dof(n)
    par = np.array(par, dtype=float).ravel()
    c = np.broadcast_to(np.asarray(damping, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"damping must be a scalar or {n} values, finite and >= 0, got "
                         f"{np.asarray(damping).tolist()}")
    force = forces.linear_damping(np.diag(c)) if np.any(c) else None
    return System._from_builtin("tree", n, par,
                                _with_damping(dict(n=n, par=par.copy()),
                                              c if np.any(c) else None), force)

