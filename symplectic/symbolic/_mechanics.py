"""Energies from positions: point masses, rigid bodies, rotations.

:func:`kinetic_from_positions` builds T = sum 1/2 m |rdot|^2 + sum 1/2
Omega^T I Omega from the positions r(q) of point masses and rigid bodies,
:func:`gravity_potential` V = sum m g h; :func:`rotation` and
:func:`angular_velocity` describe orientations.  Plain SymPy in, plain SymPy
out: nothing here knows about the integrators.
"""
import numbers

import sympy as _sy

from ._inputs import as_list


def rotation(axis, angle):
    """Active rotation matrix (3 x 3) by ``angle`` about the axis ``"x"``, ``"y"`` or ``"z"``.

    ``rotation("z", a) @ [1, 0, 0] = [cos a, sin a, 0]``.  Products compose
    body-fixed rotations left to right: ZXZ Euler angles are
    ``rotation("z", phi) * rotation("x", theta) * rotation("z", psi)``.
    """
    c, s = _sy.cos(angle), _sy.sin(angle)
    if axis == "x":
        return _sy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return _sy.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    if axis == "z":
        return _sy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    raise ValueError(f'axis must be "x", "y" or "z", got {axis!r}')


def angular_velocity(R, q, qdot, frame="body", simplify=True):
    """Angular velocity (3 x 1 Matrix) of the rotation ``R(q)`` (body -> space).

    ``frame="body"``: Omega with hat(Omega) = R^T Rdot (components in the
    body frame, the one in which a body's inertia tensor is constant);
    ``frame="space"``: omega with hat(omega) = Rdot R^T.
    Rdot = sum_k dR/dq_k qdot_k.  With ``simplify`` (default) the coefficient
    of each qdot_k is passed through ``sympy.trigsimp``, which turns the
    products of rotation matrices into the familiar short forms.
    """
    R = _sy.Matrix(R)
    if R.shape != (3, 3):
        raise ValueError(f"R must be a 3 x 3 rotation matrix, got shape {R.shape}")
    q, qdot = _velocities_for(q, qdot)
    if frame not in ("body", "space"):
        raise ValueError(f'frame must be "body" or "space", got {frame!r}')
    cols = []
    for qk in q:
        dR = R.diff(qk)
        W = R.T * dR if frame == "body" else dR * R.T
        col = [W[2, 1], W[0, 2], W[1, 0]]
        if simplify:
            col = [_sy.trigsimp(_sy.expand(c)) for c in col]
        cols.append(col)
    return _sy.Matrix([sum((cols[k][a] * qdot[k] for k in range(len(q))), _sy.S.Zero)
                       for a in range(3)])


def _velocities_for(q, qdot):
    q, qdot = as_list(q, "q"), as_list(qdot, "qdot")
    if len(q) != len(qdot):
        raise ValueError(f"q and qdot must have the same length, got {len(q)} and {len(qdot)}")
    return q, qdot


def _is_scalar(x):
    return not isinstance(x, _sy.MatrixBase) and isinstance(x, (numbers.Number, _sy.Expr))


class RigidBody:
    """A rigid body for :func:`kinetic_from_positions` and :func:`gravity_potential`.

    mass
        m (a number or a SymPy expression, typically a parameter symbol).
    position
        Position of the centre of mass in space, a 2- or 3-vector of
        expressions in q.
    inertia
        Inertia tensor about the centre of mass in body axes: a 3 x 3 matrix,
        a 3-sequence (principal moments) or a scalar (planar motion: the
        moment about the axis normal to the plane; only with
        ``angular_velocity=``).
    rotation
        Orientation R(q) (body -> space, 3 x 3), from which the body-frame
        angular velocity is computed with :func:`angular_velocity`; or
    angular_velocity
        the body-frame angular velocity given directly (a 3-vector linear in
        qdot; for planar motion with a scalar inertia, the rate of the body's
        angle, a scalar).
    """

    def __init__(self, mass, position, inertia, rotation=None, angular_velocity=None):
        if (rotation is None) == (angular_velocity is None):
            raise ValueError("give exactly one of rotation= and angular_velocity=")
        if rotation is not None and _is_scalar(inertia):
            # rotation= gives a 3-vector Omega, and 1/2 Omega^T I Omega needs a tensor
            raise ValueError(
                f"a scalar inertia ({inertia}) is the moment of a planar body about the axis "
                f"normal to its plane and goes with angular_velocity=, not rotation= (which gives "
                f"a 3-D angular velocity): for planar motion replace rotation=R by "
                f"angular_velocity=<the rate of the body's angle> (e.g. angular_velocity=thetadot "
                f"for rotation('z', theta)); for motion in 3-D keep rotation= and give inertia= "
                f"as 3 principal moments [I1, I2, I3] or a 3 x 3 matrix")
        self.mass = _sy.sympify(mass)
        self.position = _sy.Matrix(list(position))
        self.inertia = inertia
        self.rotation = None if rotation is None else _sy.Matrix(rotation)
        self.omega = angular_velocity

    def __repr__(self):
        return (f"RigidBody(mass={self.mass}, position={list(self.position)}, "
                f"inertia={self.inertia})")


def _body_parts(body, what="bodies"):
    if isinstance(body, RigidBody):
        return body.mass, body.position, body
    try:
        m, r = body
    except (TypeError, ValueError):
        raise TypeError(f"each entry of {what} must be a pair (mass, position) or a RigidBody, "
                        f"got {body!r}") from None
    return _sy.sympify(m), _sy.Matrix(list(r) if not isinstance(r, _sy.MatrixBase) else r), None


def _inertia_matrix(I):
    if isinstance(I, (_sy.MatrixBase, list, tuple)):
        Im = _sy.Matrix(I)
        if Im.shape == (3, 3):
            return Im
        if len(Im) == 3:
            return _sy.diag(*list(Im))
    raise ValueError(f"the inertia of a 3-D rigid body must be a 3 x 3 matrix or 3 principal "
                     f"moments, got {I!r}")


def _rotational_energy(rb, q, qdot):
    """1/2 Omega^T I Omega of the rigid body ``rb`` (1/2 I w^2 for planar motion)."""
    if rb.omega is not None:
        Om = rb.omega
    else:
        Om = angular_velocity(rb.rotation, q, qdot, "body")
    if isinstance(Om, (_sy.MatrixBase, list, tuple)):
        Om = _sy.Matrix(list(Om))
        if Om.shape != (3, 1):
            raise ValueError("a rigid body's angular velocity must have 3 components")
        return (Om.T * _inertia_matrix(rb.inertia) * Om)[0, 0] / 2
    # planar: scalar rate and moment
    if isinstance(rb.inertia, (_sy.MatrixBase, list, tuple)):
        raise ValueError("a planar rigid body (scalar angular velocity) needs a scalar "
                         "moment of inertia")
    return _sy.sympify(rb.inertia) * _sy.sympify(Om) ** 2 / 2


def kinetic_from_positions(q, qdot, bodies, simplify=False):
    """Kinetic energy of point masses and rigid bodies given by their positions.

    ``bodies`` is a sequence of pairs ``(m, r)`` -- a point mass m at
    position r(q) (2- or 3-vector) -- and :class:`RigidBody` instances.
    Returns T = sum 1/2 m |rdot|^2 + sum 1/2 Omega^T I Omega, with
    rdot = (dr/dq) qdot and Omega the body-frame angular velocity.
    ``simplify=True`` passes T through ``sympy.trigsimp`` (slow for large
    systems; :func:`system` can simplify M entry by entry instead).
    """
    q, qdot = _velocities_for(q, qdot)
    qd = _sy.Matrix(qdot)
    T = _sy.S.Zero
    for body in bodies:
        m, r, rb = _body_parts(body)
        v = r.jacobian(q) * qd
        T += m * (v.T * v)[0, 0] / 2
        if rb is not None:
            T += _rotational_energy(rb, q, qdot)
    return _sy.expand(T) if not simplify else _sy.trigsimp(_sy.expand(T))


def gravity_potential(bodies, g, up=None):
    """V = sum m g (r . up) for point masses ``(m, r)`` and :class:`RigidBody` items.

    ``up`` is the upward unit vector; default: the last axis (y for 2-vectors,
    z for 3-vectors).
    """
    V = _sy.S.Zero
    for body in bodies:
        m, r, _ = _body_parts(body)
        if up is None:
            h = r[len(r) - 1]
        else:
            u = list(up)
            if len(u) != len(r):
                raise ValueError(f"up has {len(u)} components, the position {len(r)}")
            h = sum((ri * ui for ri, ui in zip(r, u)), _sy.S.Zero)
        V += m * g * h
    return V
