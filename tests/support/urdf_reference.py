"""An independent reference for rigid-body trees read from URDF (test helper).

Written from URDF's conventions and the physics of rigid bodies, sharing no code with
``symplectic.multibody`` (it does not import it, nor its C built-in):

- reading: its own small URDF reader (``xml.etree``): links with their ``<inertial>``,
  joints with ``<origin xyz rpy>``, ``<axis>`` (default (1, 0, 0), normalised), ``<limit>``,
  ``<dynamics damping>``, ``<mimic>``; the coordinates are the movable joints in depth-first
  order, a link's child joints visited in document order;
- kinematics: homogeneous transforms in SymPy, link by link from the root (whose frame is the
  world frame), x_parent = R(rpy) x_joint + xyz with R(rpy) = Rz(yaw) Ry(pitch) Rx(roll); the
  child link's frame is the joint frame turned by q about the axis (revolute, continuous),
  moved by q along it (prismatic) or not moved (fixed).  Fixed joints are not merged: every
  link keeps its own pose and its own inertial;
- energies: T = 1/2 sum_links (m |v_c|^2 + w_bᵀ I_b w_b), V = - sum_links m g·x_c(q), x_c
  from the world poses.  Velocities per unit qdot_k, in the link's own frame: the joint's own
  column is (w, v) = (a, 0) for a revolute joint (the child's origin is on the axis) and
  (0, a) for a prismatic one; a rigid motion of the parent carries a column to the child as
  w' = Sᵀ w, v' = Sᵀ (v + w x d) (S, d: the child's frame in the parent's); the centre of mass
  moves with v + w x c.  I_b = R I Rᵀ is the inertia about the centre of mass turned by the
  inertial origin's rpy into the link frame.  So M = sum_links (m J_vᵀ J_v + J_wᵀ I_b J_w),
  summed entry by entry (M_kl in joint l's child frame: shorter expressions; ``form="links"``
  sums link by link, the same to rounding).  tests/multibody/test_tree_reference.py checks this
  reference against the planar pendulum chain, hand formulas, SciPy's rotations, the published
  zero poses of the UR5 and the Panda, and finite differences of its own world poses (the
  kinetic energy of a motion, dV/dq) before it judges anything with it.

Rotation entries and axis components within 1e-15 of 0 or +-1 are taken as exactly 0 or
+-1 (a rpy of 1.5707963267948966 has cos = 6e-17): it keeps the SymPy expressions small and
changes M and V by ~1e-16 relative, far below any tolerance the tests use.

``TreeReference.system()`` hands M and V (with joint damping as a Rayleigh function, mimic
joints as holonomic constraints when asked) to ``symplectic.System.from_sympy``.
"""
import functools
import math
import xml.etree.ElementTree as ET

import numpy as np

_MOVABLE = ("revolute", "continuous", "prismatic")
_TYPES = _MOVABLE + ("fixed",)


def rpy_matrix(roll, pitch, yaw):
    """URDF's R(rpy) = Rz(yaw) Ry(pitch) Rx(roll), NumPy (3, 3)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp_ = math.cos(pitch), math.sin(pitch)
    cy, sy_ = math.cos(yaw), math.sin(yaw)
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    Ry = np.array([[cp, 0.0, sp_], [0.0, 1.0, 0.0], [-sp_, 0.0, cp]])
    Rz = np.array([[cy, -sy_, 0.0], [sy_, cy, 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


# ---------------------------------------------------------------------- reading
class LinkData:
    """A link: mass (kg), com (3,) and inertia (3, 3) about the com in the link frame."""

    def __init__(self, name, mass=0.0, com=(0.0, 0.0, 0.0), inertia=None):
        self.name = name
        self.mass = float(mass)
        self.com = np.asarray(com, float)
        self.inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, float)


class JointData:
    def __init__(self, name, type, parent, child, xyz, rpy, axis, lower, upper, damping, mimic):
        self.name, self.type, self.parent, self.child = name, type, parent, child
        self.xyz = np.asarray(xyz, float)
        self.rpy = np.asarray(rpy, float)
        self.axis = np.asarray(axis, float)
        self.lower, self.upper = lower, upper
        self.damping = damping
        self.mimic = mimic             # (joint name, multiplier, offset) or None


def _vec(elem, attr, default):
    if elem is None or elem.get(attr) is None:
        return np.array(default, float)
    vals = [float(t) for t in elem.get(attr).split()]
    assert len(vals) == len(default), (attr, vals)
    return np.array(vals, float)


def _inertial(link):
    """LinkData of a <link> element: the inertia about the com in the link frame."""
    name = link.get("name")
    el = link.find("inertial")
    if el is None:
        return LinkData(name)
    origin = el.find("origin")
    xyz = _vec(origin, "xyz", (0.0, 0.0, 0.0))
    rpy = _vec(origin, "rpy", (0.0, 0.0, 0.0))
    mass = float(el.find("mass").get("value"))
    i = el.find("inertia")
    g = {k: float(i.get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    I = np.array([[g["ixx"], g["ixy"], g["ixz"]],
                  [g["ixy"], g["iyy"], g["iyz"]],
                  [g["ixz"], g["iyz"], g["izz"]]])
    R = rpy_matrix(*rpy)
    I = R @ I @ R.T
    return LinkData(name, mass, xyz, (I + I.T) / 2)


class Robot:
    """A URDF read into plain data: ``links`` {name: LinkData} and ``joints`` {name:
    JointData} in document order, ``root``, ``coordinates`` (the movable joints, depth-first
    in document order)."""

    def __init__(self, source):
        text = str(source)
        if text.lstrip().startswith("<"):
            top = ET.fromstring(text)
        else:
            top = ET.parse(text).getroot()
        assert top.tag == "robot", top.tag
        self.name = top.get("name")
        self.links = {el.get("name"): _inertial(el) for el in top.findall("link")}
        self.joints = {}
        for el in top.findall("joint"):
            typ = el.get("type")
            assert typ in _TYPES, typ
            origin = el.find("origin")
            axis = _vec(el.find("axis"), "xyz", (1.0, 0.0, 0.0))
            if typ != "fixed":
                axis = axis / np.linalg.norm(axis)
            lim = el.find("limit")
            lower = float(lim.get("lower", "0")) if lim is not None else None
            upper = float(lim.get("upper", "0")) if lim is not None else None
            dyn = el.find("dynamics")
            damping = float(dyn.get("damping", "0")) if dyn is not None else 0.0
            mim = el.find("mimic")
            mimic = None if mim is None else (mim.get("joint"), float(mim.get("multiplier", "1")),
                                              float(mim.get("offset", "0")))
            self.joints[el.get("name")] = JointData(
                el.get("name"), typ, el.find("parent").get("link"), el.find("child").get("link"),
                _vec(origin, "xyz", (0.0, 0.0, 0.0)), _vec(origin, "rpy", (0.0, 0.0, 0.0)),
                axis, lower, upper, damping, mimic)
        children = {j.child for j in self.joints.values()}
        roots = [name for name in self.links if name not in children]
        assert len(roots) == 1, roots
        self.root = roots[0]
        order = []                      # all joints, depth-first, children in document order

        def visit(link):
            for j in self.joints.values():
                if j.parent == link:
                    order.append(j.name)
                    visit(j.child)

        visit(self.root)
        assert len(order) == len(self.joints)
        self.tree_order = tuple(order)
        self.coordinates = tuple(name for name in order if self.joints[name].type in _MOVABLE)

    @property
    def n(self):
        return len(self.coordinates)

    def index(self, joint):
        return self.coordinates.index(joint)

    def limits(self):
        """(lower, upper) of the coordinates; continuous joints: (-pi, pi)."""
        lo, hi = [], []
        for name in self.coordinates:
            j = self.joints[name]
            if j.type == "continuous" or j.lower is None:
                lo.append(-math.pi)
                hi.append(math.pi)
            else:
                lo.append(j.lower)
                hi.append(j.upper)
        return np.array(lo), np.array(hi)

    def damping(self):
        return np.array([self.joints[name].damping for name in self.coordinates])

    def mimics(self):
        """[(j, k, a, b)]: coordinate j mimics coordinate k, q_j = a q_k + b, in j's order."""
        out = []
        for j, name in enumerate(self.coordinates):
            m = self.joints[name].mimic
            if m is not None:
                out.append((j, self.index(m[0]), m[1], m[2]))
        return out

    def random_q(self, rng, shrink=0.9):
        """A configuration drawn uniformly inside the limits (shrunk about their middle)."""
        lo, hi = self.limits()
        mid, half = (lo + hi) / 2, (hi - lo) / 2 * shrink
        return rng.uniform(mid - half, mid + half)

    def mimic_q(self, q):
        """q with every mimicking coordinate set from its leader (q_j = a q_k + b)."""
        q = np.array(q, float)
        for j, k, a, b in self.mimics():
            q[j] = a * q[k] + b
        return q

    def mimic_qdot(self, qdot):
        qdot = np.array(qdot, float)
        for j, k, a, _ in self.mimics():
            qdot[j] = a * qdot[k]
        return qdot


# ---------------------------------------------------------------------- SymPy model
def _exact(x, sy):
    """A number as SymPy: exactly 0, +-1 within 1e-15, else a Float."""
    x = float(x)
    for v in (0.0, 1.0, -1.0):
        if abs(x - v) <= 1e-15:
            return sy.Integer(int(v))
    return sy.Float(x)


def _matrix(a, sy):
    a = np.asarray(a, float)
    if a.ndim == 1:
        return sy.Matrix([_exact(v, sy) for v in a])
    return sy.Matrix(a.shape[0], a.shape[1], lambda i, j: _exact(a[i, j], sy))


def _axis_rotation(axis, angle, sy):
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues), SymPy."""
    k = axis
    K = sy.Matrix([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    c, s = sy.cos(angle), sy.sin(angle)
    # I + s K + (1 - c) K^2, with K^2 = k kᵀ - I for a unit k
    return sy.eye(3) * c + K * s + (k * k.T) * (1 - c)


class TreeReference:
    """M(q), V(q) of a URDF in SymPy, and numeric functions of them.

    ``q``, ``qdot``: the SymPy symbols; ``M`` (Matrix), ``V``; ``mass(q)``,
    ``potential(q)``, ``potential_grad(q)``, ``link_pose(link, q)`` numeric;
    ``system(...)``: the same Lagrangian through ``symplectic.System.from_sympy``.
    """

    def __init__(self, source, gravity=(0.0, 0.0, -9.81), form="split"):
        import sympy as sy
        self._sy = sy
        self.robot = rb = Robot(source)
        self.gravity = np.asarray(gravity, float)
        n = rb.n
        self.q = sy.symbols(f"q_0:{n}")
        self.qdot = sy.symbols(f"qd_0:{n}")
        # world pose (R, p) of every link's frame, and its velocity columns
        # {coordinate k: (w_k, v_k)}: the angular velocity of the link and the velocity of its
        # frame's origin per unit qdot_k, both in the link's own frame
        pose = {rb.root: (sy.eye(3), sy.zeros(3, 1), {})}
        for name in rb.tree_order:
            j = rb.joints[name]
            R, p, cols = pose[j.parent]
            step, d = self._step(j)
            a = _matrix(j.axis, sy)
            # the child's frame: orientation R step, origin p + R d; a rigid motion of the
            # parent carries the child's origin along: v' = v + w x d, seen in the child frame
            child = {k: (step.T * w, step.T * (v + w.cross(d))) for k, (w, v) in cols.items()}
            if j.type in ("revolute", "continuous"):
                # the joint's own rotation: about a through the child's origin (Rjᵀ a = a)
                child[rb.index(name)] = (a, sy.zeros(3, 1))
            elif j.type == "prismatic":
                child[rb.index(name)] = (sy.zeros(3, 1), a)
            pose[j.child] = (R * step, p + R * d, child)
        self._pose = pose
        g = _matrix(self.gravity, sy)
        V = sy.S.Zero
        for name, link in rb.links.items():
            R, p, _ = pose[name]
            V -= link.mass * (g.T * (p + R * _matrix(link.com, sy)))[0, 0]
        M = self._mass_by_links() if form == "links" else self._mass_split()
        # Jvᵀ Jv and Jwᵀ I Jw are symmetric, their SymPy entries (i, j) and (j, i) only summed in
        # another order: the upper triangle, mirrored
        self.M = sy.Matrix(n, n, lambda i, j: M[min(i, j), max(i, j)])
        self.V = V
        self.dV = [sy.diff(V, s) for s in self.q]
        self._mass = sy.lambdify([self.q], self.M, modules="numpy", cse=True)
        self._potential = sy.lambdify([self.q], V, modules="numpy", cse=True)
        self._grad = sy.lambdify([self.q], self.dV, modules="numpy", cse=True)
        self._poses = {}

    def _step(self, j):
        """(S, d): joint j's child frame relative to its parent's, orientation S and origin d."""
        sy = self._sy
        R0, p0 = _matrix(rpy_matrix(*j.rpy), sy), _matrix(j.xyz, sy)
        a = _matrix(j.axis, sy)
        if j.type in ("revolute", "continuous"):
            return R0 * _axis_rotation(a, self.q[self.robot.index(j.name)], sy), p0
        if j.type == "prismatic":
            return R0, p0 + R0 * a * self.q[self.robot.index(j.name)]
        return R0, p0

    def _massive(self):
        return [k for k in self.robot.links.values() if k.mass != 0.0 or np.any(k.inertia)]

    def _mass_by_links(self):
        """M = sum over the links of m Jvᵀ Jv + Jwᵀ I Jw, every column in the link's frame."""
        sy, n = self._sy, self.robot.n
        M = sy.zeros(n, n)
        for link in self._massive():
            _, _, cols = self._pose[link.name]
            c = _matrix(link.com, sy)
            Jw, Jv = sy.zeros(3, n), sy.zeros(3, n)
            for k, (w, v) in cols.items():
                Jw[:, k] = w
                Jv[:, k] = v + w.cross(c)           # the centre of mass's velocity
            M += Jv.T * Jv * _exact(link.mass, sy) + Jw.T * _matrix(link.inertia, sy) * Jw
        return M

    def _mass_split(self):
        """The same sum, entry by entry, each M_kl (k an ancestor of l, or k = l) in the frame of
        joint l's child link: the links below joint l placed in that frame, joint k's column
        carried to it (shorter SymPy expressions than carrying both to every link)."""
        sy, rb = self._sy, self.robot
        n = rb.n
        M = sy.zeros(n, n)
        for l, lname in enumerate(rb.coordinates):
            jl = rb.joints[lname]
            top = jl.child
            a = _matrix(jl.axis, sy)
            wl, vl = (a, sy.zeros(3, 1)) if jl.type != "prismatic" else (sy.zeros(3, 1), a)
            # the links below joint l in its child's frame
            below = {top: (sy.eye(3), sy.zeros(3, 1))}
            for name in rb.tree_order:
                j = rb.joints[name]
                if j.parent in below:
                    R, p = below[j.parent]
                    S, d = self._step(j)
                    below[j.child] = (R * S, p + R * d)
            _, _, cols = self._pose[top]
            for link in self._massive():
                if link.name not in below:
                    continue
                R, p = below[link.name]
                x = p + R * _matrix(link.com, sy)           # the centre of mass
                I = _matrix(link.inertia, sy)
                ul, bl = vl + wl.cross(x), R.T * wl
                for k, (wk, vk) in cols.items():
                    if k > l:
                        continue
                    uk, bk = vk + wk.cross(x), R.T * wk
                    M[k, l] += _exact(link.mass, sy) * (uk.T * ul)[0, 0] + (bk.T * I * bl)[0, 0]
        return M

    # ------------------------------------------------------------ numbers
    def mass(self, q):
        return np.array(self._mass(np.asarray(q, float)), dtype=float)

    def potential(self, q):
        return float(self._potential(np.asarray(q, float)))

    def potential_grad(self, q):
        return np.array(self._grad(np.asarray(q, float)), dtype=float)

    def link_pose(self, link, q):
        """(R (3, 3), p (3,)): the world pose of a link's frame at q."""
        if link not in self._poses:
            R, p, _ = self._pose[link]
            self._poses[link] = self._sy.lambdify([self.q], [R, p], modules="numpy")
        R, p = self._poses[link](np.asarray(q, float))
        return np.array(R, dtype=float), np.array(p, dtype=float).reshape(3)

    def constraints(self):
        """The mimic constraints q_j - a q_k - b (SymPy), in the mimicking joints' order."""
        return [self.q[j] - _exact(a, self._sy) * self.q[k] - _exact(b, self._sy)
                for j, k, a, b in self.robot.mimics()]

    # ------------------------------------------------------------ the same Lagrangian, compiled
    def system(self, *, mimic="independent", joint_damping=False, **options):
        """``System.from_sympy((M, V), q, qdot, ...)``: joint damping as the Rayleigh function
        1/2 sum c_i qdot_i^2, mimic="constraint" adds the mimic constraints."""
        import symplectic as sp
        kw = dict(options)
        if joint_damping:
            c = self.robot.damping()
            kw["dissipation"] = sum((_exact(ci, self._sy) * qd ** 2 / 2
                                     for ci, qd in zip(c, self.qdot) if ci != 0.0), self._sy.S.Zero)
        if mimic == "constraint":
            kw["constraints"] = self.constraints()
        elif mimic != "independent":
            raise ValueError(mimic)
        kw.setdefault("name", f"reference {self.robot.name}")
        qdot = list(self.qdot) if "dissipation" in kw else None     # (M, V): qdot for forces only
        return sp.System.from_sympy((self.M, self.V), list(self.q), qdot, **kw)


@functools.lru_cache(maxsize=None)
def cached_reference(source, gravity=(0.0, 0.0, -9.81)):
    """TreeReference(source, gravity), built once per test session (a path or XML text)."""
    return TreeReference(source, gravity=gravity)


@functools.lru_cache(maxsize=None)
def cached_system(source, mimic="independent", joint_damping=False):
    """cached_reference(source).system(...), derived and compiled once per test session."""
    return cached_reference(source).system(mimic=mimic, joint_damping=joint_damping)
