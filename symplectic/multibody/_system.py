"""The System of a rigid-body tree: the C built-in ``"tree"``, optionally
closed into kinematic loops by holonomic constraints (:class:`LoopClosure`)."""
import numpy as np

from .. import forces
from .._model._system import System

_AXES = {"x": 0, "y": 1, "z": 2}


def _check_tree(tree):
    """TypeError unless ``tree`` is a :class:`~symplectic.multibody.Tree` (by what this module
    uses of it: a Tree's flat parameters and kinematics; _tree.py imports this module, not
    the other way round)."""
    if not all(callable(getattr(tree, a, None))
               for a in ("flat_parameters", "mimic_rows", "point_jacobian", "link_pose")):
        raise TypeError(f"tree must be a symplectic.multibody.Tree, got {tree!r}")


class TreeSystem(System):
    """A :class:`symplectic.System` made from a :class:`~symplectic.multibody.Tree`
    (by :meth:`Tree.system` or :func:`~symplectic.multibody.from_urdf`).

    M(q), V(q) and all their derivatives are evaluated in C (the built-in
    ``"tree"``, analytic derivatives, no Python in the loop), from the tree's
    flat parameters (:meth:`Tree.flat_parameters`).  With v_c the velocity of
    a body's centre of mass, w its angular velocity and I^w its inertia in
    world axes,

        L = 1/2 sum_j (m_j |v_cj|^2 + w_j^T I_j^w w_j) + sum_j m_j g . x_cj(q),

    i.e. V(q) = -sum_j m_j g . x_cj(q) = -mass * g . com(q) (no constant:
    V = 0 when the centre of mass is at the world origin's height).

    Besides the System's members: :attr:`coordinates` (the movable joints'
    names in q's order) and :attr:`tree`.  ``name`` is the tree's name (a
    URDF's robot name), or ``"tree"``; ``builtin`` is ``"tree"``.  A
    TreeSystem pickles by its tree (and rebuilds as a TreeSystem), with its
    loop constraints when they pickle (a :class:`LoopClosure`, module-level
    functions; not lambdas).

    Closed loops: :meth:`with_constraints` returns the system with holonomic
    constraints g(q) = 0 of your own -- typically a :class:`LoopClosure`
    from :meth:`loop_closure`, which pins a point of one link to a point of
    another link or of the world with the tree's exact kinematics.
    """

    @classmethod
    def _of_tree(cls, tree, joint_damping=False, mimic="independent", constraints=None):
        """The system of ``tree`` (:meth:`Tree.system`, which checks ``mimic``)."""
        _check_tree(tree)
        if not isinstance(joint_damping, (bool, np.bool_)):
            raise TypeError(f"joint_damping must be True or False, got {joint_damping!r}")
        n = tree.n
        if n == 0:
            raise ValueError(f"the tree{'' if tree.name is None else ' ' + repr(tree.name)} has "
                             f"no movable joint: a system needs at least one coordinate")
        rows = tree.mimic_rows() if mimic == "constraint" else []
        attached = None
        if constraints:
            # the C tree carries either its own mimic rows or none: with loop
            # constraints the mimic rows join them on the Python side instead
            flat = tree.flat_parameters(mimic="independent")
            attached = _attach(n, rows, constraints)
        else:
            flat = tree.flat_parameters(mimic=mimic)
        params = {"n": n, "par": flat.copy()}
        force = None
        if joint_damping:
            c = np.array([tree.joint(name).damping for name in tree.coordinates])
            if np.any(c > 0.0):
                force = forces.linear_damping(np.diag(c))
                params["damping"] = c
        obj = cls._from_builtin("tree", n, flat, params, force, attached)
        obj._tree = tree
        obj._joint_damping = bool(joint_damping)
        obj._mimic = mimic
        obj._n_mimic = len(rows)
        obj._loops = dict(constraints) if constraints else None
        obj._name = tree.name or "tree"
        return obj

    @property
    def tree(self):
        """The :class:`~symplectic.multibody.Tree` the system was made from."""
        return self._tree

    @property
    def coordinates(self):
        """The movable joints' names, in q's order."""
        return self._tree.coordinates

    @property
    def mimic(self):
        """``"independent"`` or ``"constraint"``: how mimic joints enter."""
        return self._mimic

    @property
    def joint_damping(self):
        """Whether the joints' damping is the system's own force."""
        return self._joint_damping

    @property
    def loop_constraints(self):
        """The constraints given to :meth:`with_constraints`, as a dict
        (``constraint``, ``constraint_jac``, ``constraint_hess``,
        ``n_constraints``), or None."""
        return None if self._loops is None else dict(self._loops)

    # ------------------------------------------------------------------ closed loops
    def loop_closure(self, link_a, point_a, link_b=None, point_b=(0.0, 0.0, 0.0), *,
                     axes="xyz"):
        """The loop closure "point a of ``link_a`` coincides with point b of
        ``link_b``" as constraints for :meth:`with_constraints`.

        ``point_a``: a point in ``link_a``'s frame (m).  ``link_b``: another
        link, with ``point_b`` in its frame, or None (or the root link) for a
        point fixed in the world, ``point_b`` then in world coordinates.
        ``axes``: the world components that must agree, a string of distinct
        letters of ``"xyz"`` (``"xz"`` for a loop in the x-z plane, whose
        other components hold by themselves) or a sequence of indices 0-2.

        Returns a :class:`LoopClosure`: g(q) = (x_a(q) - x_b(q))[axes], its
        exact Jacobian (:meth:`Tree.point_jacobian`) and its exact second
        derivatives (from the joints' world axes).  Several closures add up
        with ``+`` (their rows stacked).
        """
        return LoopClosure(self._tree, link_a, point_a, link_b, point_b, axes=axes)

    def with_constraints(self, constraint, constraint_jac=None, constraint_hess=None,
                         n_constraints=None):
        """This tree's system (same damping and mimic mode) with holonomic
        constraints g(q) = 0 added: closed kinematic loops.

        ``constraint`` is either a :class:`LoopClosure` (from
        :meth:`loop_closure`; then give nothing else), or your own callables
        as for :class:`symplectic.System`: ``constraint(q) -> (m,)``,
        ``constraint_jac(q) -> (m, n)`` (required), optionally
        ``constraint_hess(q) -> (m, n, n)`` (otherwise the core differences
        G^T mu) and ``n_constraints`` = m.  They replace any constraints an
        earlier ``with_constraints`` gave; with ``mimic="constraint"`` the
        mimic rows stay and come first (rows 0..m_c-1 of g, of
        :attr:`Trajectory.multipliers`), the loop rows after them.

        M, V and their derivatives stay in C; the constraints are Python, so a
        run holds the GIL (``nogil`` False: ``integrate_many`` runs the members
        one at a time).  An exception in a constraint callable propagates out
        of the run with a note naming the step.  The first-use derivative
        check of :class:`symplectic.System` does not run on a built-in: check
        hand-written derivatives with :meth:`check_constraint_derivatives`
        (a :class:`LoopClosure`'s are exact).  Integrate from a consistent
        state (:meth:`project`) with a variational method.
        """
        if isinstance(constraint, LoopClosure):
            if any(x is not None for x in (constraint_jac, constraint_hess, n_constraints)):
                raise TypeError("a LoopClosure brings its own Jacobian, second derivatives and "
                                "count: give it alone")
            if constraint.tree is not self._tree:
                raise ValueError("the LoopClosure was made for another tree")
            cons = dict(constraint=constraint.constraint, constraint_jac=constraint.constraint_jac,
                        constraint_hess=constraint.constraint_hess,
                        n_constraints=constraint.n_constraints)
        else:
            if constraint is None:
                raise TypeError("with_constraints needs constraint (a LoopClosure, or "
                                "constraint(q) -> (m,) with constraint_jac)")
            cons = dict(constraint=constraint, constraint_jac=constraint_jac,
                        constraint_hess=constraint_hess, n_constraints=n_constraints)
        return type(self)._of_tree(self._tree, self._joint_damping, self._mimic, cons)

    def __reduce__(self):
        return (_rebuild, (self._tree, self._joint_damping, self._mimic, self._loops))

    def __repr__(self):
        label = f" {self._tree.name!r}" if self._tree.name else ""
        extra = ""
        if self._n_mimic:
            extra += f", {self._n_mimic} mimic constraint(s)"
        if self._loops is not None:
            m = self.n_constraints
            k = "?" if m is None else m - self._n_mimic
            extra += f", {k} loop constraint(s) (Python)"
        if self.force is not None:
            extra += ", joint damping"
        return (f"<symplectic.multibody.TreeSystem{label} n={self.n} "
                f"({', '.join(self.coordinates)}){extra}, built-in C tree>")


def _rebuild(tree, joint_damping, mimic, constraints=None):
    return TreeSystem._of_tree(tree, joint_damping, mimic, constraints)


def _attach(n, rows, cons):
    """The constraint keywords for the C binding: the user's, or with mimic
    rows (j, k, a, b) the stacked :class:`_MimicAndLoops`."""
    if not rows:
        return dict(cons)
    both = _MimicAndLoops(n, rows, cons["constraint"], cons["constraint_jac"],
                          cons.get("constraint_hess"))
    m = cons.get("n_constraints")
    return dict(constraint=both.constraint, constraint_jac=both.constraint_jac,
                constraint_hess=None if cons.get("constraint_hess") is None
                else both.constraint_hess,
                n_constraints=None if m is None else len(rows) + int(m))


class _MimicAndLoops:
    """Mimic rows g = q_j - a q_k - b (constant G, zero second derivatives)
    followed by the user's constraints: one set of callables.  Pickles when
    the user's callables do."""

    def __init__(self, n, rows, g, G, H):
        self.n = n
        self.Gm = np.zeros((len(rows), n))
        self.bm = np.zeros(len(rows))
        for r, (j, k, a, b) in enumerate(rows):
            self.Gm[r, int(j)] += 1.0
            self.Gm[r, int(k)] -= a
            self.bm[r] = b
        self.g, self.G, self.H = g, G, H

    def constraint(self, q):
        return np.concatenate([self.Gm @ q - self.bm,
                               np.asarray(self.g(q), dtype=float).reshape(-1)])

    def constraint_jac(self, q):
        return np.vstack([self.Gm, np.asarray(self.G(q), dtype=float).reshape(-1, self.n)])

    def constraint_hess(self, q):
        H = np.asarray(self.H(q), dtype=float).reshape(-1, self.n, self.n)
        return np.concatenate([np.zeros((len(self.bm), self.n, self.n)), H])


class LoopClosure:
    """Loop-closure constraints of a tree: point a on link A coincides with
    point b on link B (or a point fixed in the world), in chosen world
    components.  Made by :meth:`TreeSystem.loop_closure`; ``+`` stacks two.

    ``constraint(q)`` -> (m,): (x_a(q) - x_b(q))[axes] per closure,
    ``constraint_jac(q)`` -> (m, n): the exact Jacobian (J_a - J_b)[axes],
    ``constraint_hess(q)`` -> (m, n, n): the exact second derivatives, from
    d^2 x / dq_i dq_j = w_i x J_j (i <= j, i.e. joint i at or above joint j
    on the link's chain; w_i the world axis of a revolute joint i, 0 for a
    prismatic one; J_j the point's Jacobian column j); ``n_constraints`` = m.
    Unpacks as ``g, G, S = closure``.  Pickles with its tree.
    """

    def __init__(self, tree, link_a, point_a, link_b=None, point_b=(0.0, 0.0, 0.0), *,
                 axes="xyz"):
        _check_tree(tree)
        self.tree = tree
        self._terms = (_term(tree, link_a, point_a, link_b, point_b, axes),)

    @property
    def n_constraints(self):
        """m, the number of constraint rows."""
        return sum(len(t[4]) for t in self._terms)

    def __add__(self, other):
        if not isinstance(other, LoopClosure):
            return NotImplemented
        if other.tree is not self.tree:
            raise ValueError("loop closures of different trees do not add up")
        out = LoopClosure.__new__(LoopClosure)
        out.tree = self.tree
        out._terms = self._terms + other._terms
        return out

    def __iter__(self):
        return iter((self.constraint, self.constraint_jac, self.constraint_hess))

    def __repr__(self):
        parts = []
        for a, pa, b, pb, ax in self._terms:
            where = "world" if b is None else repr(b)
            parts.append(f"{a!r}{tuple(pa.tolist())} = {where}{tuple(pb.tolist())} "
                         f"in {''.join('xyz'[i] for i in ax)}")
        return f"<LoopClosure m={self.n_constraints}: {'; '.join(parts)}>"

    # ------------------------------------------------------------------ g, G, S
    def constraint(self, q):
        t = self.tree
        out = []
        for a, pa, b, pb, ax in self._terms:
            x = t.point(a, q, pa) - (pb if b is None else t.point(b, q, pb))
            out.append(x[ax])
        return np.concatenate(out)

    def constraint_jac(self, q):
        t = self.tree
        out = []
        for a, pa, b, pb, ax in self._terms:
            J = t.point_jacobian(a, q, pa)
            if b is not None:
                J = J - t.point_jacobian(b, q, pb)
            out.append(J[ax])
        return np.vstack(out)

    def constraint_hess(self, q):
        out = []
        for a, pa, b, pb, ax in self._terms:
            H = _point_hessian(self.tree, a, q, pa)
            if b is not None:
                H = H - _point_hessian(self.tree, b, q, pb)
            out.append(H[ax])
        return np.concatenate(out)


def _term(tree, link_a, point_a, link_b, point_b, axes):
    """One closure (link_a, point_a, link_b or None, point_b, axis indices), checked."""
    links = tree.links
    for name in (link_a,) if link_b is None else (link_a, link_b):
        if not isinstance(name, str) or name not in links:
            raise KeyError(f"no link {name!r} in the tree; its links: "
                           f"{', '.join(repr(x) for x in links)}")
    if link_b == tree.root:
        link_b = None
    pa = _point("point_a", point_a)
    pb = _point("point_b", point_b)
    if link_b is None and link_a == tree.root:
        raise ValueError(f"link_a {link_a!r} is the root: it does not move, so a closure of "
                         f"it with the world is no constraint")
    if link_b is not None and link_b == link_a:
        raise ValueError(f"both points are on link {link_a!r}: their distance never changes, "
                         f"so the closure is no constraint")
    return (link_a, pa, link_b, pb, _axes(axes))


def _point(name, value):
    try:
        p = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be 3 real numbers, got {value!r}") from None
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"{name} must be 3 finite numbers, got {value!r}")
    return p


def _axes(axes):
    if isinstance(axes, str):
        bad = [c for c in axes if c not in _AXES]
        if bad or not axes:
            raise ValueError(f"axes must be letters of 'xyz' (e.g. 'xz'), got {axes!r}")
        idx = [_AXES[c] for c in axes]
    else:
        try:
            idx = [int(i) for i in axes]
        except (TypeError, ValueError):
            raise TypeError(f"axes must be a string of 'xyz' or a sequence of 0, 1, 2, "
                            f"got {axes!r}") from None
        if not idx or any(i not in (0, 1, 2) for i in idx):
            raise ValueError(f"axes must be indices 0, 1, 2 (x, y, z), got {axes!r}")
    if len(set(idx)) != len(idx):
        raise ValueError(f"axes must not repeat a component, got {axes!r}")
    return np.array(idx, dtype=np.intp)


def _point_hessian(tree, link, q, point):
    """d^2 x / dq_i dq_j, (3, n, n), of the world position x of ``point`` on
    ``link``: w_i x J_j for i <= j (symmetric), with w_i the world axis of a
    revolute joint i (the angular Jacobian's column, 0 for a prismatic or an
    unrelated joint) and J_j the point's Jacobian column.  Among the joints
    that move the link, q's order is the chain's order (parents first), so
    i <= j with both nonzero means joint i is at or above joint j."""
    W = tree.frame_jacobian(link, q)[:3]
    J = tree.point_jacobian(link, q, point)
    C = np.cross(W.T[:, None, :], J.T[None, :, :])       # C[i, j] = w_i x J_j
    n = W.shape[1]
    upper = np.triu(np.ones((n, n), dtype=bool))[:, :, None]
    H = np.where(upper, C, np.transpose(C, (1, 0, 2)))
    return np.transpose(H, (2, 0, 1))
