"""Ready-made trees: the planar pendulum chain of :func:`symplectic.systems.pendulum_chain`
as a rigid-body tree in relative joint angles."""
import numpy as np

from .._model import _validate
from ._tree import Body, Joint, Tree


def pendulum_chain(n, m=1.0, l=1.0, g=9.81, damping=0.0):
    """The planar chain of n point masses on massless rods as a tree: the
    chain of :func:`symplectic.systems.pendulum_chain` in RELATIVE joint
    angles.

    Parameters
    ----------
    n : int
        The number of rods (>= 1).
    m, l : float or n floats
        The masses (kg, each > 0) at the rods' ends and the rods' lengths (m,
        each > 0), rod 0 the one at the pivot.
    g : float
        Gravitational acceleration (m/s^2), downward.
    damping : float or n floats
        Viscous joint friction c_i >= 0 (N m s/rad): the torque -c_i
        thetadot_i at joint i, i.e. the system's force -diag(c) thetadot (in
        C).  This is the built-in's damping (joint 0 the pivot, joint i
        between rods i - 1 and i, -c_i times the relative rate), written in
        the relative angles, where its D = Delta^T diag(c) Delta becomes
        diag(c): the two systems are the same with or without damping.

    Returns
    -------
    TreeSystem
        Root link ``"base"`` (the pivot), links ``"rod0"`` ... ``"rod{n-1}"``
        (rod i: a point mass m_i at (0, 0, -l_i) in its frame, zero inertia),
        revolute joints ``"joint0"`` ... ``"joint{n-1}"`` (the coordinates, in
        this order); gravity (0, 0, -g), z up.  Each joint turns about -y,
        so the chain moves in the x-z plane and theta > 0 swings a rod toward
        +x: mass k is at x_k = sum_{i<=k} l_i sin q_i,
        z_k = -sum_{i<=k} l_i cos q_i (``system.tree.point(f"rod{k}", theta,
        (0, 0, -l_k))``).

    Raises
    ------
    TypeError, ValueError
        As the built-in raises them, with the same messages: n not an int
        >= 1, a mass or length not finite and > 0 or not a scalar or n
        values, g not a finite real number, damping not a scalar or n
        values, finite and >= 0.

    Coordinates.  theta_i, the angle of joint i: theta_0 = q_0 and theta_i =
    q_i - q_{i-1}, with q_i the built-in's ABSOLUTE angle of rod i from the
    downward vertical (rad).  So q = L theta with L the lower triangular
    matrix of ones, and since L is constant the momenta map by its
    transpose, p_theta = L^T p_q, and

        M_theta(theta) = L^T M_q(L theta) L,   V_theta(theta) = V_q(L theta),
        grad V_theta = L^T grad V_q,

    the built-in's M_q,ij = l_i l_j mu_max(i,j) cos(q_i - q_j) and V_q =
    -g sum_i mu_i l_i cos q_i (mu_i = sum_{k>=i} m_k) -- the tree's own
    potential is the same, -sum_k m_k g . x_k (zero at the pivot's height).
    In NumPy: ``theta = np.diff(q, prepend=0.0)``, ``q = np.cumsum(theta)``,
    ``p_theta = np.cumsum(p_q[::-1])[::-1]``,
    ``p_q = p_theta - np.append(p_theta[1:], 0.0)``.  A constant linear change
    of coordinates commutes with the Galerkin discretisation, so every
    variational method gives the built-in's discrete run mapped by L, to
    rounding and the Newton tolerance (tests/validation/test_tree_chain.py;
    a chaotic chain amplifies those over long runs, as it amplifies any
    rounding).

    Long chains: the relative angles make Newton's matrix worse conditioned
    (L^T J L; lobatto5, n = 64, h = 0.01: cond 8e8 against 2e5 in q), which
    raises the rounding floor of Newton's residual and updates (there to
    about 1e-11 of the residual's scale and 1e-10 of the step's increment)
    above the tolerance.  ``newton="full"`` ends each step by its quadratic
    convergence before that floor; the modes that reuse a factorisation
    ("auto", "step", "chord", "decoupled") contract into it and end there
    (csrc/core/sym_newton.c, residual_floor), with about 4.4 iterations a
    step against full Newton's 2.5 at n = 48 .. 64 -- the same run as the
    built-in's to 6e-11 either way.  For long chains ``newton="full"`` is
    the quicker, and the built-in quicker still.

    The built-in is the faster to integrate: its M_q is a closed form, the
    tree's the general composite-inertia algorithm (benchmarks/tree_chain.py
    times both per step).  The tree is the one to grow into a robot --
    rotational inertia, offsets, branches -- by building a :class:`Tree`
    from :attr:`TreeSystem.tree`'s bodies and joints.

    >>> from symplectic import multibody
    >>> chain = multibody.pendulum_chain(3, m=[2.0, 1.0, 0.5], l=0.5)
    >>> chain.coordinates
    ('joint0', 'joint1', 'joint2')
    """
    n = _validate.dof(n)
    ms = _validate.positive_values("m", m, n)
    ls = _validate.positive_values("l", l, n)
    g = _validate.real("g", g)
    c = _damping_values(damping, n)
    bodies = [Body("base")]
    joints = []
    for i in range(n):
        bodies.append(Body(f"rod{i}", mass=ms[i], com=(0.0, 0.0, -ls[i])))
        joints.append(Joint(f"joint{i}", "revolute", "base" if i == 0 else f"rod{i - 1}",
                            f"rod{i}", xyz=(0.0, 0.0, 0.0 if i == 0 else -ls[i - 1]),
                            axis=(0.0, -1.0, 0.0), damping=c[i]))
    tree = Tree(bodies, joints, gravity=(0.0, 0.0, -g), name="pendulum_chain")
    return tree.system(joint_damping=bool(np.any(c > 0.0)))


def _damping_values(damping, n):
    """The built-in's check of ``damping`` (systems.pendulum_chain): a scalar
    or n values, finite and >= 0, as an (n,) array."""
    a = np.asarray(damping, dtype=float)
    c = np.full(n, float(a)) if a.ndim == 0 else a
    if c.shape != (n,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError(f"damping must be a scalar or {n} values, finite and >= 0, got "
                         f"{np.asarray(damping).tolist()}")
    return c
