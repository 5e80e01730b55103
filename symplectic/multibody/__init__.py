"""Rigid-body trees (robot arms, linkages) from URDF or by hand, integrated in C.

A tree of rigid links joined by revolute, continuous, prismatic and fixed
joints, its root link fixed in the world, is a Lagrangian system
L = 1/2 qdot^T M(q) qdot - V(q) in the joint coordinates q.  This module
reads it from a URDF file (:func:`from_urdf`) or builds it from
:class:`Body` and :class:`Joint` objects (:class:`Tree`), checks it, and
makes its :class:`TreeSystem`: a :class:`symplectic.System` whose M, V and
their derivatives are computed in C (the built-in ``"tree"``), for every
method of :func:`symplectic.integrate`.

>>> from symplectic import multibody
>>> tree = multibody.Tree(
...     [multibody.Body("base"), multibody.Body("arm", mass=1.0, com=(0, 0, -0.5))],
...     [multibody.Joint("shoulder", "revolute", "base", "arm", axis=(0, 1, 0))])
>>> sys = tree.system()
>>> sys.coordinates
('shoulder',)

Units: SI throughout -- metres, kilograms, kg m^2, radians, seconds (any
consistent system works).

Conventions (URDF's):

- The root link (the one link that is no joint's child) is fixed: its frame
  is the world frame.  Gravity is a vector in the world frame (default
  (0, 0, -9.81) m/s^2, z up).
- A joint's ``<origin xyz rpy>`` places the joint frame in the parent link's
  frame at q = 0: x_parent = R(rpy) x_joint + xyz, with
  R(rpy) = Rz(yaw) Ry(pitch) Rx(roll) for rpy = (roll, pitch, yaw) -- roll
  about the fixed x axis first, then pitch about the fixed y axis, then yaw
  about the fixed z axis.
- The child link's frame is the joint frame moved by the joint: revolute and
  continuous joints turn it by q (rad, right-handed) about ``axis``, a vector
  in the joint frame (normalised; default (1, 0, 0)); prismatic joints move
  it by q (m) along the axis.  Fixed joints do not move.
- A link's ``<inertial>``: the mass, the centre of mass (``<origin xyz>``)
  and the inertia tensor about the centre of mass in the inertia frame
  (``<origin rpy>``, turned into the link frame: I_link = R I R^T).
- The coordinates q: the movable joints in depth-first order from the root,
  a link's children in document order (the numbering of KDL and Pinocchio):
  :attr:`Tree.coordinates`, :attr:`TreeSystem.coordinates`.  Joint limits
  do not enter the dynamics (a joint moves freely past them).

Massless links.  A link without ``<inertial>`` has zero mass and inertia:
a frame that carries nothing (a tool frame, a sensor mount, an intermediate
link between the two axes of a universal joint).  Fixed joints are merged:
a link fixed to another adds its mass, centre of mass and inertia to it
(parallel-axis theorem), so massless fixed links cost nothing.  But every
movable joint must move some mass: a joint below which every link is
massless, or whose motion the mass matrix cannot see (M(q) singular at
q = 0: point masses on its axis, two joints on one axis with nothing
between them), is refused with a ValueError naming it -- its equations of
motion would not determine its acceleration.  The root's own mass, and that
of links fixed to it, does not move and does not enter.

Not supported yet: floating, planar (and spherical) joints
(NotImplementedError naming the joint), closed loops (a URDF cannot
describe them either), joint limits as constraints.  Mimic joints are free
coordinates by default, or holonomic constraints with
``mimic="constraint"``.

Ready-made: :func:`pendulum_chain`, the planar chain of
:func:`symplectic.systems.pendulum_chain` as a tree in relative joint angles.

Pictures: :func:`draw` and :func:`animate` (matplotlib) show a tree or a
system as a stick figure.
"""
from ._chain import pendulum_chain
from ._system import LoopClosure, TreeSystem
from ._tree import JOINT_TYPES, Body, Joint, Tree
from ._urdf import read_tree

__all__ = ["Body", "Joint", "Tree", "TreeSystem", "LoopClosure", "from_urdf", "read_urdf",
           "pendulum_chain", "draw", "animate", "JOINT_TYPES"]


def read_urdf(source, *, gravity=(0.0, 0.0, -9.81)):
    """The :class:`Tree` of a URDF document (a path or the XML text), read as
    :func:`from_urdf` reads it, without making its system (for the kinematics
    alone, or to make the system later with :meth:`Tree.system`).  The same
    errors as :func:`from_urdf`."""
    return read_tree(source, gravity=gravity)


def from_urdf(source, *, gravity=(0.0, 0.0, -9.81), joint_damping=False, mimic="independent"):
    """The :class:`TreeSystem` of a URDF robot.

    Parameters
    ----------
    source : str or os.PathLike
        A path to a ``.urdf`` file, or the URDF's XML text itself (a string
        that starts with ``<`` or contains ``<robot``; bytes are XML too).
    gravity : 3 floats
        Gravitational acceleration in the world (root link) frame, m/s^2.
    joint_damping : bool
        With True, each joint's ``<dynamics damping>`` c_j gives the
        generalized force -c_j qdot_j on its coordinate (``System.force``,
        evaluated in C).  Default False: frictionless joints.
        ``<dynamics friction>`` (Coulomb) is never modelled.
    mimic : {"independent", "constraint"}
        ``"independent"``: a ``<mimic>`` joint is a coordinate of its own.
        ``"constraint"``: it follows q_j = multiplier q_k + offset as a
        holonomic constraint (``System.n_constraints``; integrate from a
        consistent state, e.g. with ``System.project``).

    Returns
    -------
    TreeSystem
        With ``.coordinates`` (the movable joints' names in q's order) and
        ``.tree`` (the :class:`Tree`, for the kinematics).

    Read from the URDF: links' ``<inertial>`` (origin, mass, inertia) and
    joints' type, parent, child, origin, axis, limit (kept as data), dynamics
    and mimic; visuals, collisions, meshes, transmissions and Gazebo tags are
    ignored.  Missing ``<origin>``: identity; missing ``<axis>``: (1, 0, 0);
    missing ``<inertial>``: a massless link.

    Raises
    ------
    ValueError
        Malformed XML, a document that is not a URDF (no ``<robot>``; a
        xacro file to expand first), a missing required element or attribute
        (naming the element and the attribute), a value that is not a
        number; and the checks of :class:`Tree` (a cycle, a link with two
        parents, an unknown link, an unphysical inertia, a zero axis, a joint
        that moves no mass, a mimic of an unknown joint, ...), each naming the
        link or joint (and the file).
    NotImplementedError
        A floating or planar joint.
    FileNotFoundError
        A path that does not exist.
    """
    tree = read_tree(source, gravity=gravity)
    return tree.system(joint_damping=joint_damping, mimic=mimic)


def __getattr__(name):
    # the pictures import matplotlib: load them on first use
    if name in ("draw", "animate"):
        from . import _plot
        return getattr(_plot, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
