"""Rigid-body trees: links (:class:`Body`), joints (:class:`Joint`) and the
validated tree (:class:`Tree`) with its forward kinematics in NumPy and its
flat parameters for the C built-in system ``"tree"``.

Conventions (URDF's; the package docstring of :mod:`symplectic.multibody`
gives them in full): SI units (m, kg, kg m^2, rad, s); the root link's frame
is the world frame; a joint's placement (xyz, rpy) is the joint frame in the
parent link's frame at q = 0, with R(rpy) = Rz(yaw) Ry(pitch) Rx(roll); the
child link's frame is the joint frame turned by q about the axis (revolute,
continuous) or moved by q along it (prismatic); the coordinates are the
movable joints in depth-first order, children in document order.
"""
import math

import numpy as np

from . import _frames

#: The joint types the model integrates.
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
#: URDF's other joint types, refused with NotImplementedError.
UNSUPPORTED_TYPES = ("floating", "planar", "spherical")
#: The mimic modes of :meth:`Tree.system` and :func:`from_urdf`.
MIMIC_MODES = ("independent", "constraint")

# Tolerances of the physical checks (relative).
_SYMMETRY_RTOL = 1e-9       # |I - I^T| against the largest entry
_INERTIA_RTOL = 1e-6        # principal moments and the triangle inequality, against the trace
                            # (inertias printed to 6-7 digits, as URDF files have them)
_NO_MASS_RTOL = 1e-12       # M(0)[k, k] this small against the joint's own scale: zero
_PIVOT_RTOL = 1e-10         # a pivot this small against its own diagonal entry: dependent

_IDENTITY = (np.eye(3), np.zeros(3))


def _name(what, name):
    if not isinstance(name, str) or not name:
        raise TypeError(f"{what} name must be a non-empty string, got {name!r}")
    return name


def _vector(owner, field, value, size=3):
    """``size`` finite floats as a read-only array (ValueError naming the owner and field)."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {field} must be {size} real numbers, got {value!r}") from None
    if a.shape != (size,):
        raise ValueError(f"{owner}: {field} must be {size} real numbers, got {value!r}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: {field} must be finite, got {a.tolist()}")
    a.flags.writeable = False
    return a


def _scalar(owner, field, value, minimum=None):
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{owner}: {field} must be a real number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: {field} must be a real number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{owner}: {field} must be finite, got {value!r}")
    if minimum is not None and v < minimum:
        raise ValueError(f"{owner}: {field} must be >= {minimum:g}, got {v!r}")
    return v


def inertia_matrix(owner, inertia):
    """The inertia tensor as a symmetric (3, 3) array, checked physical.

    ``inertia`` is a (3, 3) array or the six values (Ixx, Ixy, Ixz, Iyy, Iyz,
    Izz) (kg m^2).  Physical: symmetric, principal moments >= 0 and each at
    most the sum of the other two (I1 + I2 >= I3), both to a relative
    tolerance of 1e-6 of the trace (URDF files print inertias to 6 or 7
    digits, a thin rod or a flat plate is on the boundary).  Zero (a point
    mass) is physical.
    """
    try:
        a = np.array(inertia, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: inertia must be a (3, 3) array or the six values "
                         f"(Ixx, Ixy, Ixz, Iyy, Iyz, Izz), got {inertia!r}") from None
    if a.shape == (6,):
        xx, xy, xz, yy, yz, zz = a
        a = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if a.shape != (3, 3):
        raise ValueError(f"{owner}: inertia must be a (3, 3) array or the six values "
                         f"(Ixx, Ixy, Ixz, Iyy, Iyz, Izz), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{owner}: inertia must be finite, got {a.tolist()}")
    scale = float(np.max(np.abs(a)))
    if np.max(np.abs(a - a.T)) > _SYMMETRY_RTOL * scale:
        raise ValueError(f"{owner}: the inertia is not physical: it is not symmetric, "
                         f"{a.tolist()}")
    a = 0.5 * (a + a.T)
    moments = np.linalg.eigvalsh(a)           # ascending
    tol = _INERTIA_RTOL * float(np.sum(np.abs(moments)))
    if moments[0] < -tol:
        raise ValueError(f"{owner}: the inertia is not physical: a principal moment is negative "
                         f"(principal moments {_g(moments)} kg m^2)")
    if moments[0] + moments[1] < moments[2] - tol:
        raise ValueError(f"{owner}: the inertia is not physical: its principal moments "
                         f"{_g(moments)} kg m^2 break the triangle inequality I1 + I2 >= I3 "
                         f"({moments[0]:.6g} + {moments[1]:.6g} < {moments[2]:.6g}); every "
                         f"principal moment of a rigid body is at most the sum of the other two")
    a.flags.writeable = False
    return a


def _g(values):
    return "(" + ", ".join(f"{v:.6g}" for v in values) + ")"


class Body:
    """A link: a rigid body with its own frame.

    Parameters
    ----------
    name : str
        The link's name (unique in a tree).
    mass : float
        Mass m >= 0 (kg).  0 with zero inertia is a massless link (a frame
        carrying nothing: see :mod:`symplectic.multibody` on massless links).
    com : 3 floats
        Centre of mass in the link frame (m).
    inertia : (3, 3) array or 6 floats
        Inertia tensor about the centre of mass, in the link frame's axes
        (kg m^2); six values are (Ixx, Ixy, Ixz, Iyy, Iyz, Izz).  It must be
        physical (symmetric, principal moments >= 0 satisfying the triangle
        inequality I1 + I2 >= I3); zero is a point mass.  Default zero.

    ValueError (naming the link) for a negative mass, a non-finite value or
    an inertia that is not physical.  Bodies are immutable.
    """

    __slots__ = ("_name", "_mass", "_com", "_inertia")

    def __init__(self, name, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None):
        self._name = _name("link", name)
        owner = f"link {name!r}"
        self._mass = _scalar(owner, "mass", mass)
        if self._mass < 0.0:
            raise ValueError(f"{owner}: the mass must be >= 0 kg, got {self._mass!r}")
        self._com = _vector(owner, "com", com)
        self._inertia = inertia_matrix(owner, np.zeros((3, 3)) if inertia is None else inertia)

    name = property(lambda self: self._name, doc="The link's name.")
    mass = property(lambda self: self._mass, doc="Mass (kg).")
    com = property(lambda self: self._com, doc="Centre of mass in the link frame (m), (3,).")
    inertia = property(lambda self: self._inertia,
                       doc="Inertia about the centre of mass in the link frame's axes "
                           "(kg m^2), (3, 3).")

    def __repr__(self):
        return f"Body({self._name!r}, mass={self._mass:g}, com={self._com.tolist()})"

    def __reduce__(self):
        # by state, not through __init__: the checked values come back bit for bit
        return (_restore, (Body, {k: getattr(self, k) for k in Body.__slots__}))


class Joint:
    """A joint: it places the child link in the parent link.

    Parameters
    ----------
    name : str
        The joint's name (unique in a tree).
    type : str
        ``"revolute"``, ``"continuous"`` (a revolute joint without limits; the
        same dynamics), ``"prismatic"`` or ``"fixed"``.  URDF's ``"floating"``
        and ``"planar"`` (and ``"spherical"``) raise NotImplementedError.
    parent, child : str
        The names of the parent and child links.
    xyz : 3 floats
        The joint frame's origin in the parent link frame at q = 0 (m).
    rpy : 3 floats
        The joint frame's orientation in the parent link frame (rad):
        R = Rz(yaw) Ry(pitch) Rx(roll) (URDF's fixed-axis roll, pitch, yaw),
        x_parent = R x_joint + xyz.
    axis : 3 floats
        The joint axis in the joint frame, normalised here (default (1, 0, 0),
        URDF's); must not be zero for a movable joint.  Revolute joints turn
        the child by q (rad, right-handed) about it, prismatic joints move it
        by q (m) along it.
    damping : float
        Viscous friction c >= 0 (N m s/rad or N s/m): the generalized force
        -c qdot on the joint's own coordinate, used by
        ``Tree.system(joint_damping=True)`` only.
    friction : float
        Coulomb friction >= 0 (N m or N), kept as data (not modelled).
    mimic : None or tuple
        ``(joint_name, multiplier=1, offset=0)``: this joint follows
        q = multiplier q_joint + offset (used by ``mimic="constraint"``).
    limit : None or dict
        URDF's limits (``lower``, ``upper``, ``effort``, ``velocity``), kept as
        data: they do not enter the dynamics.

    Joints are immutable.
    """

    __slots__ = ("_name", "_type", "_parent", "_child", "_xyz", "_rpy", "_axis", "_damping",
                 "_friction", "_mimic", "_limit")

    def __init__(self, name, type, parent, child, *, xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0),
                 axis=(1.0, 0.0, 0.0), damping=0.0, friction=0.0, mimic=None, limit=None):
        self._name = _name("joint", name)
        owner = f"joint {name!r}"
        if type in UNSUPPORTED_TYPES:
            raise NotImplementedError(f"joint {name!r} is {type}: floating, planar and spherical "
                                      f"joints are not supported yet")
        if type not in JOINT_TYPES:
            raise ValueError(f"{owner}: unknown joint type {type!r}; the types are "
                             f"{', '.join(repr(t) for t in JOINT_TYPES)}")
        self._type = type
        self._parent = _name(f"{owner}: the parent link's", parent)
        self._child = _name(f"{owner}: the child link's", child)
        self._xyz = _vector(owner, "xyz", xyz)
        self._rpy = _vector(owner, "rpy", rpy)
        a = _vector(owner, "axis", axis)
        norm = float(np.linalg.norm(a))
        if norm > 0.0:
            a = a / norm
            a.flags.writeable = False
        elif type != "fixed":
            raise ValueError(f"{owner}: the axis is zero, {a.tolist()}: a {type} joint needs "
                             f"a direction")
        self._axis = a
        self._damping = _scalar(owner, "damping", damping, 0.0)
        self._friction = _scalar(owner, "friction", friction, 0.0)
        self._mimic = _mimic_spec(owner, mimic)
        if self._mimic is not None and self._mimic[0] == name:
            raise ValueError(f"{owner}: a joint cannot mimic itself")
        if limit is not None:
            if not isinstance(limit, dict):
                raise TypeError(f"{owner}: limit must be a dict (lower, upper, effort, "
                                f"velocity) or None, got {limit!r}")
            limit = {str(k): _scalar(owner, f"limit {k}", v) for k, v in limit.items()}
        self._limit = limit

    name = property(lambda self: self._name, doc="The joint's name.")
    type = property(lambda self: self._type,
                    doc='"revolute", "continuous", "prismatic" or "fixed".')
    parent = property(lambda self: self._parent, doc="The parent link's name.")
    child = property(lambda self: self._child, doc="The child link's name.")
    xyz = property(lambda self: self._xyz,
                   doc="The joint frame's origin in the parent link frame (m), (3,).")
    rpy = property(lambda self: self._rpy,
                   doc="Roll, pitch, yaw of the joint frame in the parent link frame (rad).")
    axis = property(lambda self: self._axis, doc="The unit axis in the joint frame, (3,).")
    damping = property(lambda self: self._damping, doc="Viscous friction coefficient (>= 0).")
    friction = property(lambda self: self._friction, doc="Coulomb friction (data only).")
    mimic = property(lambda self: self._mimic,
                     doc="(joint name, multiplier, offset) or None.")
    limit = property(lambda self: None if self._limit is None else dict(self._limit),
                     doc="The limits as a dict (data only), or None.")

    @property
    def movable(self):
        """True for revolute, continuous and prismatic joints."""
        return self._type != "fixed"

    @property
    def rotation(self):
        """R(rpy) = Rz(yaw) Ry(pitch) Rx(roll), (3, 3)."""
        return _frames.rpy_matrix(self._rpy)

    def __repr__(self):
        return (f"Joint({self._name!r}, {self._type!r}, parent={self._parent!r}, "
                f"child={self._child!r})")

    def __reduce__(self):
        return (_restore, (Joint, {k: getattr(self, k) for k in Joint.__slots__}))


def _restore(cls, state):
    """A Body or Joint from its pickled state (its values were checked when it was made)."""
    obj = cls.__new__(cls)
    for k, v in state.items():
        if isinstance(v, np.ndarray):
            v = v.copy()
            v.flags.writeable = False
        setattr(obj, k, v)
    return obj


def _mimic_spec(owner, mimic):
    if mimic is None:
        return None
    if isinstance(mimic, str):
        mimic = (mimic,)
    if not isinstance(mimic, (tuple, list)) or not 1 <= len(mimic) <= 3:
        raise TypeError(f"{owner}: mimic must be (joint_name, multiplier=1, offset=0) or None, "
                        f"got {mimic!r}")
    target = _name(f"{owner}: the mimicked joint's", mimic[0])
    a = _scalar(owner, "mimic multiplier", mimic[1] if len(mimic) > 1 else 1.0)
    b = _scalar(owner, "mimic offset", mimic[2] if len(mimic) > 2 else 0.0)
    return (target, a, b)


def mimic_mode(mimic):
    if mimic not in MIMIC_MODES:
        raise ValueError(f'mimic must be "independent" (mimic joints are coordinates of their '
                         f'own) or "constraint" (q_j = multiplier q_k + offset as a holonomic '
                         f'constraint), got {mimic!r}')
    return mimic


class Tree:
    """A rigid-body tree: links joined by joints, the root link fixed in the world.

    Parameters
    ----------
    bodies : sequence of Body
        The links, in document order.  Exactly one is no joint's child: the
        root, whose frame is the world frame (it does not move; its mass
        does not enter the dynamics).
    joints : sequence of Joint
        The joints, in document order (it fixes the coordinates' order).
    gravity : 3 floats
        The gravitational acceleration in the world frame (m/s^2).
    name : str, optional
        A label (a URDF's robot name).

    Every check runs here, and each error names the element: ValueError for
    duplicate link or joint names, a joint whose parent or child is not a
    link, a link with two parent joints, a cycle, no root or more than one, a
    mimic of an unknown joint (or of a fixed one, or by a fixed one), a
    non-finite gravity, and a movable joint that moves no mass -- the links
    below it have zero mass and inertia, or M(q) is singular at q = 0 (its
    column of M(0) is zero, or a combination of the columns of the joints
    before it: the joint moves nothing they do not).  Body and Joint check
    their own values (masses, inertias, axes).

    Fixed joints are merged: each link fixed (directly or through other fixed
    joints) to the child of a movable joint belongs to that joint's body,
    whose mass, centre of mass and inertia combine all of them (parallel-axis
    theorem), and later joints are placed in that body's frame.  Links fixed
    to the root do not move.  :meth:`link_pose` answers for every link.

    The coordinates q (:attr:`coordinates`): the movable joints in
    depth-first order from the root, the children of a link in the order of
    their joints in ``joints`` (URDF document order) -- the numbering of KDL
    and Pinocchio.  q_j is an angle (rad) for revolute and continuous
    joints, a displacement (m) for prismatic ones, measured from the joint's
    placement.
    """

    def __init__(self, bodies, joints, *, gravity=(0.0, 0.0, -9.81), name=None):
        bodies, joints = tuple(bodies), tuple(joints)
        for b in bodies:
            if not isinstance(b, Body):
                raise TypeError(f"bodies must be multibody.Body objects, got {b!r}")
        for j in joints:
            if not isinstance(j, Joint):
                raise TypeError(f"joints must be multibody.Joint objects, got {j!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string or None, got {name!r}")
        self._name = name
        self._gravity = _vector("the tree", "gravity", gravity)
        self._bodies, self._joints = bodies, joints
        self._by_link = _unique("link", bodies)
        self._by_joint = _unique("joint", joints)
        self._parent_joint, self._children, root = _topology(self._by_link, joints)
        self._root = root
        self._check_mimics()
        self._links = (root,) + tuple(b.name for b in bodies if b.name != root)
        self._build()
        self._check_moves_mass()

    # ------------------------------------------------------------------ building
    def _check_mimics(self):
        for j in self._joints:
            if j.mimic is None:
                continue
            target = self._by_joint.get(j.mimic[0])
            if target is None:
                raise ValueError(f"joint {j.name!r} mimics joint {j.mimic[0]!r}, which is not "
                                 f"a joint of the tree")
            if not j.movable:
                raise ValueError(f"joint {j.name!r} is fixed and has a mimic (of "
                                 f"{target.name!r}): only a movable joint can follow another")
            if not target.movable:
                raise ValueError(f"joint {j.name!r} mimics joint {target.name!r}, which is fixed")

    def _build(self):
        """Depth-first order, the bodies (fixed joints merged) and their placements."""
        order = []
        stack = [self._root]
        while stack:
            link = stack.pop()
            order.append(link)
            stack.extend(j.child for j in reversed(self._children[link]))
        self._order = tuple(order)
        # q's order: the movable joints in the preorder of their child links
        movable = [self._parent_joint[link] for link in order[1:]
                   if self._parent_joint[link].movable]
        self._movable = tuple(movable)
        self._coords = tuple(j.name for j in movable)
        index = {j.name: i for i, j in enumerate(movable)}
        self._index = index
        # each link's body (-1: the root's) and its frame in that body's frame
        body_of, X = {self._root: -1}, {self._root: _IDENTITY}
        n = len(movable)
        parent = np.full(n, -1, dtype=int)
        placement = [None] * n
        for link in order[1:]:
            j = self._parent_joint[link]
            local = (j.rotation, np.array(j.xyz))
            at_parent = _frames.compose(X[j.parent], local)
            if j.movable:
                k = index[j.name]
                body_of[link], X[link] = k, _IDENTITY
                parent[k] = body_of[j.parent]
                placement[k] = at_parent
            else:
                body_of[link], X[link] = body_of[j.parent], at_parent
        self._body_of, self._X = body_of, X
        self._parent_body = parent
        self._placement = placement
        # merged inertials: each body's mass, centre of mass and inertia in its frame
        parts = {k: [] for k in range(-1, n)}
        for link in order:
            b = self._by_link[link]
            R, p = X[link]
            parts[body_of[link]].append((b.mass, R @ b.com + p, R @ b.inertia @ R.T))
        self._mass = np.zeros(n)
        self._com = np.zeros((n, 3))
        self._inertia = np.zeros((n, 3, 3))
        for k in range(n):
            self._mass[k], self._com[k], self._inertia[k] = _frames.combine(parts[k])
        self._members = {k: tuple(link for link in order if body_of[link] == k)
                         for k in range(-1, n)}
        # each body's chain of bodies to the root (itself first)
        self._chain = []
        for k in range(n):
            chain, b = [], k
            while b >= 0:
                chain.append(b)
                b = parent[b]
            self._chain.append(tuple(chain))

    def _check_moves_mass(self):
        n = self.n
        if n == 0:
            return
        # a joint below which nothing has mass or inertia
        carries = [self._mass[k] > 0.0 or np.any(self._inertia[k] != 0.0) for k in range(n)]
        below = list(carries)
        for k in reversed(range(n)):           # children after parents: fold upward
            p = self._parent_body[k]
            if p >= 0:
                below[p] = below[p] or below[k]
        idle = [k for k in range(n) if not below[k]]
        if idle:
            names = ", ".join(repr(self._coords[k]) for k in idle)
            links = ", ".join(repr(link) for k in idle for link in self._members[k])
            one = len(idle) == 1
            raise ValueError(f"{'joint' if one else 'joints'} {names} "
                             f"{'moves' if one else 'move'} no mass: the links below "
                             f"{'it' if one else 'them'} ({links}) have zero mass and inertia, "
                             f"so M(q) is singular; give one of those links an <inertial> (mass "
                             f"and inertia), or make the {'joint' if one else 'joints'} fixed")
        # M(0): a zero column, or a column that is a combination of earlier ones
        M = self._mass_matrix(np.zeros(n))
        diag = np.diag(M).copy()
        scale = self._column_scales()
        L = np.zeros((n, n))                   # Cholesky, column by column in q's order
        for k in range(n):
            if diag[k] <= _NO_MASS_RTOL * scale[k]:
                raise ValueError(
                    f"joint {self._coords[k]!r} moves no mass at q = 0: its column of M(0) is "
                    f"zero (M[{k},{k}] = {diag[k]:.3g} against {scale[k]:.3g}, the sum of "
                    f"m |c - o|^2 + trace(I) below it), so M(q) is singular -- the mass below "
                    f"it lies on its axis with no inertia about it (a revolute joint turning "
                    f"point masses about an axis through them)")
            for i in range(k):
                L[k, i] = (M[k, i] - L[k, :i] @ L[i, :i]) / L[i, i]
            pivot = M[k, k] - L[k, :k] @ L[k, :k]
            if pivot <= _PIVOT_RTOL * diag[k]:
                # column k = M[:, :k] x: the joints x involves
                x = np.linalg.lstsq(M[:k, :k], M[:k, k], rcond=None)[0]
                big = [i for i in range(k) if abs(x[i]) > 1e-6 * np.max(np.abs(x))]
                others = ", ".join(repr(self._coords[i]) for i in big)
                raise ValueError(
                    f"joint {self._coords[k]!r} moves nothing that joint(s) {others} do not: "
                    f"M(q) is singular at q = 0 (the pivot of its column is "
                    f"{max(pivot, 0.0) / diag[k]:.3g} of its diagonal entry); the joints move "
                    f"the same masses the same way (e.g. joints on one axis with only a "
                    f"massless link between them)")
            L[k, k] = math.sqrt(pivot)

    def _column_scales(self):
        """Per joint k, what M(0)[k, k] is measured against: the mass below a
        prismatic joint (M[k, k] itself), sum(m |c - o_k|^2 + trace I) over the
        bodies below a revolute joint (o_k its origin; M[k, k] is at most this,
        and 0 when every centre of mass lies on the axis with no inertia about
        it).  Per joint, so that the units of the other columns (kg, kg m^2) and
        the sizes of other bodies do not enter."""
        poses = self._poses(np.zeros(self.n))
        out = np.zeros(self.n)
        for b, (R, p) in enumerate(poses):
            c = R @ self._com[b] + p
            for k in self._chain[b]:
                if self._movable[k].type == "prismatic":
                    out[k] += self._mass[b]
                else:
                    d = c - poses[k][1]
                    out[k] += self._mass[b] * float(d @ d) + float(np.trace(self._inertia[b]))
        return out

    # ------------------------------------------------------------------ description
    @property
    def name(self):
        """The tree's label (a URDF's robot name), or None."""
        return self._name

    @property
    def gravity(self):
        """The gravitational acceleration in the world frame (m/s^2), (3,)."""
        return self._gravity

    @property
    def bodies(self):
        """The links as given (tuple of :class:`Body`)."""
        return self._bodies

    @property
    def joints(self):
        """The joints as given (tuple of :class:`Joint`), fixed ones too."""
        return self._joints

    @property
    def n(self):
        """The number of coordinates (movable joints)."""
        return len(self._movable)

    @property
    def coordinates(self):
        """The movable joints' names in q's order (depth-first, document order)."""
        return self._coords

    @property
    def links(self):
        """All link names, the root first, then the others in document order."""
        return self._links

    @property
    def root(self):
        """The root link's name (its frame is the world frame)."""
        return self._root

    @property
    def mass(self):
        """The total mass of the moving links (kg): every link but the root and
        the links fixed to it."""
        return float(np.sum(self._mass))

    def body(self, name):
        """The :class:`Body` of link ``name``."""
        return self._by_link[self._link_name(name)]

    def joint(self, name):
        """The :class:`Joint` called ``name`` (KeyError naming it otherwise)."""
        if name not in self._by_joint:
            raise KeyError(f"no joint {name!r} in the tree; its joints: "
                           f"{', '.join(repr(j.name) for j in self._joints)}")
        return self._by_joint[name]

    def parent_link(self, link):
        """The name of ``link``'s parent link (None for the root)."""
        j = self._parent_joint[self._link_name(link)]
        return None if j is None else j.parent

    def parent_joint(self, link):
        """The name of the joint whose child is ``link`` (None for the root)."""
        j = self._parent_joint[self._link_name(link)]
        return None if j is None else j.name

    def __repr__(self):
        label = f" {self._name!r}" if self._name else ""
        return (f"<symplectic.multibody.Tree{label}: {len(self._bodies)} links, "
                f"{len(self._joints)} joints, n = {self.n}, coordinates "
                f"{', '.join(self._coords) or '()'}>")

    def __reduce__(self):
        return (_make_tree, (self._bodies, self._joints, self._gravity.copy(), self._name))

    # ------------------------------------------------------------------ flat parameters
    def flat_parameters(self, mimic="independent"):
        """The parameters of the C built-in ``"tree"`` (float64, 4 + 27 n + 4 m_c).

        ``par[0:3]`` gravity; then per body j (the child of movable joint j,
        fixed links merged into it; q's order) 27 values: the parent body
        index (-1 for the root), the joint type (0 revolute/continuous, 1
        prismatic), the unit axis in the joint frame (3), the joint frame's
        rotation at q = 0 in the parent body's frame (9, row-major), its origin
        there (3, m), the body's mass (kg), centre of mass (3, m, in the body
        frame) and inertia about it (6: Ixx, Ixy, Ixz, Iyy, Iyz, Izz, kg m^2,
        in the body frame's axes); then m_c, the number of mimic constraints,
        and 4 values (j, k, a, b) per constraint g = q_j - a q_k - b (m_c = 0
        unless ``mimic="constraint"``).
        """
        mimic = mimic_mode(mimic)
        n = self.n
        rows = self.mimic_rows() if mimic == "constraint" else []
        par = np.empty(4 + 27 * n + 4 * len(rows))
        par[0:3] = self._gravity
        for j, joint in enumerate(self._movable):
            k = 3 + 27 * j
            R, p = self._placement[j]
            I = self._inertia[j]
            par[k] = self._parent_body[j]
            par[k + 1] = 1.0 if joint.type == "prismatic" else 0.0
            par[k + 2:k + 5] = joint.axis
            par[k + 5:k + 14] = R.ravel()
            par[k + 14:k + 17] = p
            par[k + 17] = self._mass[j]
            par[k + 18:k + 21] = self._com[j]
            par[k + 21:k + 27] = (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])
        k = 3 + 27 * n
        par[k] = len(rows)
        for i, row in enumerate(rows):
            par[k + 1 + 4 * i:k + 5 + 4 * i] = row
        return par

    def mimic_rows(self):
        """The mimic constraints as rows (j, k, a, b): coordinate j follows
        q_j = a q_k + b (g = q_j - a q_k - b = 0), in q's order of j.
        ValueError when they are not independent (a cycle of mimics fixing
        the joints) or leave no degree of freedom."""
        rows = [(float(j), float(self._index[joint.mimic[0]]), joint.mimic[1], joint.mimic[2])
                for j, joint in enumerate(self._movable) if joint.mimic is not None]
        if rows:
            G = np.zeros((len(rows), self.n))
            for r, (j, k, a, _) in enumerate(rows):
                G[r, int(j)] += 1.0
                G[r, int(k)] -= a
            names = ", ".join(repr(self._coords[int(r[0])]) for r in rows)
            if len(rows) >= self.n:
                raise ValueError(f"the mimic joints {names} leave no degree of freedom "
                                 f"({len(rows)} constraints on {self.n} coordinates)")
            if np.linalg.matrix_rank(G) < len(rows):
                raise ValueError(f"the mimic constraints of joints {names} are not independent "
                                 f"(mimics that follow each other in a cycle)")
        return rows

    # ------------------------------------------------------------------ the system
    def system(self, *, joint_damping=False, mimic="independent"):
        """The :class:`TreeSystem` of this tree (the C built-in ``"tree"``).

        ``joint_damping``: with True, each joint's ``damping`` c_j gives the
        generalized force -c_j qdot_j on its own coordinate
        (``System.force``, evaluated in C); by default the joints are
        frictionless.  ``mimic``: ``"independent"`` (default) makes mimic
        joints coordinates of their own (the mimic is ignored);
        ``"constraint"`` adds the holonomic constraint
        q_j - multiplier q_k - offset = 0 for each (the system then has
        ``n_constraints`` of them: integrate it with a variational method
        from a consistent state, e.g. ``System.project``).
        """
        from ._system import TreeSystem
        return TreeSystem._of_tree(self, joint_damping, mimic_mode(mimic))

    # ------------------------------------------------------------------ kinematics
    def _link_name(self, link):
        if link not in self._by_link:
            raise KeyError(f"no link {link!r} in the tree; its links: "
                           f"{', '.join(repr(x) for x in self._links)}")
        return link

    def _q(self, q):
        a = np.asarray(q, dtype=float)
        if a.shape != (self.n,):
            raise ValueError(f"q must have shape ({self.n},) (the coordinates "
                             f"{', '.join(self._coords)}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"q must be finite, got {a.tolist()}")
        return a

    def _poses(self, q):
        """The world pose (R, p) of every body frame, in q's order."""
        out = []
        for j, joint in enumerate(self._movable):
            p = self._parent_body[j]
            base = _frames.compose(out[p] if p >= 0 else _IDENTITY, self._placement[j])
            if joint.type == "prismatic":
                out.append((base[0], base[1] + q[j] * (base[0] @ joint.axis)))
            else:
                out.append((base[0] @ _frames.axis_rotation(joint.axis, q[j]), base[1]))
        return out

    def _jacobian(self, body, x, poses):
        """(angular (3, n), linear (3, n)) Jacobians of the world point x moving
        with ``body`` (-1: the root, zero)."""
        Jw, Jv = np.zeros((3, self.n)), np.zeros((3, self.n))
        if body >= 0:
            for j in self._chain[body]:
                R, o = poses[j]
                a = R @ self._movable[j].axis
                if self._movable[j].type == "prismatic":
                    Jv[:, j] = a
                else:
                    Jw[:, j] = a
                    Jv[:, j] = np.cross(a, x - o)
        return Jw, Jv

    def link_pose(self, link, q):
        """The world pose of ``link``'s frame at q: (R (3, 3), p (3,)), with
        x_world = R x_link + p.  Every link answers, merged ones included."""
        link = self._link_name(link)
        q = self._q(q)
        b = self._body_of[link]
        base = self._poses(q)[b] if b >= 0 else _IDENTITY
        return _frames.compose(base, self._X[link])

    def point(self, link, q, point=(0.0, 0.0, 0.0)):
        """The world position (m), (3,), of ``point`` given in ``link``'s frame."""
        R, p = self.link_pose(link, q)
        return R @ _vector("the point", "point", point) + p

    def point_jacobian(self, link, q, point=(0.0, 0.0, 0.0)):
        """d point / d q, (3, n): the world velocity of ``point`` (fixed in
        ``link``'s frame) per unit qdot, exactly (column j: a_j x (x - o_j) for
        a revolute joint j between the root and the link, a_j for a prismatic
        one, zero otherwise; a_j the world axis, o_j the joint's origin)."""
        return self._link_jacobian(link, q, point)[1]

    def frame_jacobian(self, link, q):
        """(6, n): rows 0-2 the world angular velocity of ``link``'s frame,
        rows 3-5 the world velocity of its origin, per unit qdot."""
        return np.vstack(self._link_jacobian(link, q, (0.0, 0.0, 0.0)))

    def _link_jacobian(self, link, q, point):
        link = self._link_name(link)
        q = self._q(q)
        poses = self._poses(q)
        b = self._body_of[link]
        R, p = _frames.compose(poses[b] if b >= 0 else _IDENTITY, self._X[link])
        x = R @ _vector("the point", "point", point) + p
        return self._jacobian(b, x, poses)

    def com(self, q):
        """The centre of mass of the moving links in the world (m), (3,).  With
        :attr:`mass` it gives the potential: V(q) = -mass * gravity . com(q)."""
        q = self._q(q)
        if self.mass == 0.0:
            raise ValueError("the tree has no moving mass: its centre of mass is not defined")
        poses = self._poses(q)
        s = sum(self._mass[j] * (R @ self._com[j] + p) for j, (R, p) in enumerate(poses))
        return s / self.mass

    def _mass_matrix(self, q):
        """M(q) in NumPy (the checks of construction; the system's M is the C core's)."""
        poses = self._poses(q)
        M = np.zeros((self.n, self.n))
        for j, (R, p) in enumerate(poses):
            Jw, Jv = self._jacobian(j, R @ self._com[j] + p, poses)
            Iw = R @ self._inertia[j] @ R.T
            M += self._mass[j] * (Jv.T @ Jv) + Jw.T @ Iw @ Jw
        return 0.5 * (M + M.T)


def _make_tree(bodies, joints, gravity, name):
    return Tree(bodies, joints, gravity=gravity, name=name)


def _unique(what, items):
    out = {}
    for x in items:
        if x.name in out:
            raise ValueError(f"two {what}s are called {x.name!r}: {what} names must be unique")
        out[x.name] = x
    return out


def _topology(links, joints):
    """({link: its parent joint or None}, {link: its child joints in order}, root):
    ValueError for an unknown link, a link with two parents, a cycle, no root
    or several."""
    if not links:
        raise ValueError("a tree needs at least one link (the root)")
    parent = dict.fromkeys(links)
    children = {name: [] for name in links}
    for j in joints:
        for role, link in (("parent", j.parent), ("child", j.child)):
            if link not in links:
                raise ValueError(f"joint {j.name!r}: its {role} link {link!r} is not a link of "
                                 f"the tree")
        if j.parent == j.child:
            raise ValueError(f"joint {j.name!r} joins link {j.child!r} to itself (a cycle)")
        if parent[j.child] is not None:
            raise ValueError(f"link {j.child!r} has two parents: it is the child of joints "
                             f"{parent[j.child].name!r} and {j.name!r} (in a tree each link has "
                             f"at most one parent joint)")
        parent[j.child] = j
        children[j.parent].append(j)
    # a cycle: walking up from a link comes back to it
    done = set()
    for start in links:
        path, seen, link = [], set(), start
        while link is not None and link not in done:
            if link in seen:
                cyc = path[path.index(link):]
                joints_in = ", ".join(repr(parent[x].name) for x in cyc)
                chain = " <- ".join(repr(x) for x in cyc + [link])
                raise ValueError(f"the joints {joints_in} form a cycle (links {chain}): a tree "
                                 f"has none")
            seen.add(link)
            path.append(link)
            j = parent[link]
            link = None if j is None else j.parent
        done.update(path)
    roots = [name for name in links if parent[name] is None]
    if len(roots) != 1:      # never 0: without a cycle some link has no parent
        raise ValueError(f"the tree has {len(roots)} root links (links that are no joint's "
                         f"child): {', '.join(repr(r) for r in roots)}; it must have exactly "
                         f"one -- join the others to it with joints")
    return parent, children, roots[0]
