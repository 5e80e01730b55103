"""Rigid-body trees from URDF (issue 49): ``symplectic.multibody.from_urdf`` against an
independent reference.

The reference (tests/support/urdf_reference.py) reads the URDF itself and writes M(q) and
V(q) in SymPy from homogeneous transforms, sharing no code with symplectic.multibody.  It is
checked first against what is known without it: URDF's rpy convention (SciPy's extrinsic
x-y-z rotations and exact rotations of the axes), the planar pendulum chain (point masses:
M_rel = Tᵀ M_abs T, q_abs = cumsum(q_rel)), one link with an inertia and one slider by hand,
the published zero poses of the UR5 and Panda kinematics, and finite differences of its own
link poses (the kinetic energy of a motion, the gradient of V).  Then, for every test robot of
tests/data/urdf/ at several random states, M, V(q) - V(q0) and dV/dq of ``from_urdf`` equal it
to 1e-12 relative (the largest deviation over the entries against the largest entry), with
both mimic modes of mimic.urdf.
"""
import math
import zlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sympy")

from support.urdf_reference import (Robot, TreeReference, cached_reference,  # noqa: E402
                                    rpy_matrix)

DATA = Path(__file__).resolve().parents[1] / "data" / "urdf"
URDFS = ("planar_chain_5", "arm6", "arm7", "branched", "prismatic", "mimic", "fixed")
N_STATES = 5
RTOL = 1e-12


def path(name):
    return str(DATA / f"{name}.urdf")


def reference(name, gravity=(0.0, 0.0, -9.81)):
    return cached_reference(path(name), gravity)


def from_urdf(*args, **kw):
    from symplectic.multibody import from_urdf as make
    return make(*args, **kw)


def states(robot, name, k=N_STATES):
    """k configurations inside the joint limits (seeded by the robot's name)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [robot.random_q(rng) for _ in range(k)]


def rel(a, b):
    """The largest deviation of a from b, relative to b's largest entry."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


# ====================================================================== the test data
EXPECTED = {           # movable joints, fixed joints, links without mass
    "planar_chain_5": (5, 0, 1), "arm6": (6, 0, 0), "arm7": (7, 2, 1), "branched": (7, 0, 1),
    "prismatic": (5, 0, 1), "mimic": (5, 0, 1), "fixed": (4, 6, 4)}


@pytest.mark.parametrize("name", URDFS)
def test_data_files_are_valid_robots(name):
    """Each file reads as a tree with the joints it advertises, and every inertia is
    physically valid: positive definite, its principal moments obeying the triangle
    inequality (A + B >= C)."""
    rb = Robot(path(name))
    assert rb.name == name
    movable = [j for j in rb.joints.values() if j.type != "fixed"]
    fixed = [j for j in rb.joints.values() if j.type == "fixed"]
    massless = [k for k in rb.links.values() if k.mass == 0.0]
    assert (len(movable), len(fixed), len(massless)) == EXPECTED[name]
    assert len(rb.links) == len(rb.joints) + 1
    for link in rb.links.values():
        if link.mass == 0.0:
            assert not np.any(link.inertia)
            continue
        w = np.linalg.eigvalsh(link.inertia)
        assert w[0] > 0, (link.name, w)
        assert w[0] + w[1] >= w[2], (link.name, w)
        # a full tensor: some product of inertia in the link frame
        assert np.max(np.abs(link.inertia - np.diag(np.diag(link.inertia)))) > 0, link.name
    for j in rb.joints.values():
        if j.type != "fixed":
            assert j.lower is not None or j.type == "continuous", j.name
    if name == "arm7":
        assert all(rb.joints[c].damping > 0 for c in rb.coordinates)


def test_depth_first_document_order():
    """The coordinates of branched.urdf: depth-first from the root, a link's child joints in
    document order (the document lists them interleaved, the right arm first)."""
    rb = Robot(path("branched"))
    assert rb.coordinates == ("waist", "r_shoulder", "r_elbow", "r_wrist", "l_shoulder",
                              "l_elbow", "l_wrist")
    assert [n for n in rb.joints if rb.joints[n].type != "fixed"] != list(rb.coordinates)
    mim = Robot(path("mimic"))
    assert mim.coordinates == ("wrist", "right_knuckle", "left_knuckle", "pad_left", "pad_right")
    assert mim.mimics() == [(1, 2, -1.2, 0.1), (4, 3, -1.0, 0.02)]


# ====================================================================== the reference itself
def test_rpy_is_extrinsic_xyz():
    """R(rpy) = Rz(yaw) Ry(pitch) Rx(roll): SciPy's extrinsic 'xyz' Euler angles, and the
    exact images of the axes for quarter turns."""
    Rotation = pytest.importorskip("scipy.spatial.transform").Rotation
    rng = np.random.default_rng(3)
    for _ in range(10):
        a = rng.uniform(-math.pi, math.pi, 3)
        assert np.max(np.abs(rpy_matrix(*a) - Rotation.from_euler("xyz", a).as_matrix())) < 1e-15
    h = math.pi / 2
    ex, ey, ez = np.eye(3)
    assert np.allclose(rpy_matrix(0, 0, h) @ ex, ey, atol=1e-16)      # yaw: x -> y
    assert np.allclose(rpy_matrix(0, h, 0) @ ez, ex, atol=1e-16)      # pitch: z -> x
    assert np.allclose(rpy_matrix(h, 0, 0) @ ey, ez, atol=1e-16)      # roll: y -> z
    # roll first, then pitch, then yaw, all about the fixed axes: y -roll-> z -pitch-> x -yaw-> y
    assert np.allclose(rpy_matrix(h, h, h) @ ey, ey, atol=1e-15)


def point_chain_urdf(m, l, inertia=None):
    """A planar chain of point masses: joint i about y, mass i at the end of rod i."""
    parts = ['<robot name="chain">', '<link name="l0"/>']
    for i, (mi, li) in enumerate(zip(m, l)):
        xyz = "0 0 0.7" if i == 0 else f"0 0 {-l[i - 1]!r}"
        parts.append(f'<joint name="j{i}" type="revolute"><parent link="l{i}"/>'
                     f'<child link="l{i + 1}"/><origin xyz="{xyz}" rpy="0 0 0"/>'
                     f'<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/>'
                     f'</joint>')
        parts.append(f'<link name="l{i + 1}"><inertial><origin xyz="0 0 {-li!r}"/>'
                     f'<mass value="{mi!r}"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" '
                     f'izz="0"/></inertial></link>')
    parts.append("</robot>")
    return "".join(parts)


def test_reference_is_the_pendulum_chain():
    """Point masses on a chain of y-joints: the reference in relative angles equals
    symplectic.systems.pendulum_chain in absolute angles, q_abs = T q_rel with T the lower
    triangular matrix of ones: M_rel = Tᵀ M_abs T, dV_rel = Tᵀ dV_abs, V up to a constant."""
    import symplectic as sp
    m, l = [1.2, 0.8, 1.1, 0.6, 0.9], [0.5, 0.4, 0.45, 0.35, 0.3]
    ref = TreeReference(point_chain_urdf(m, l))
    chain = sp.systems.pendulum_chain(5, m=m, l=l, g=9.81)
    T = np.tril(np.ones((5, 5)))
    rng = np.random.default_rng(5)
    q0 = np.zeros(5)
    for _ in range(N_STATES):
        q = rng.uniform(-3, 3, 5)
        qa = np.cumsum(q)
        assert rel(ref.mass(q), T.T @ chain.mass(qa) @ T) < 1e-14
        assert rel(ref.potential_grad(q), T.T @ chain.potential_grad(qa)) < 1e-14
        dv = ref.potential(q) - ref.potential(q0)
        assert abs(dv - (chain.potential(qa) - chain.potential(q0))) < 1e-13 * sum(m) * 9.81


def test_reference_single_link_and_slider_by_hand():
    """A link about y with its centre of mass at (e, 0, -d) and principal moments (a, b, c)
    turned by alpha about x (inertial rpy): M = m (d^2 + e^2) + b cos^2 alpha + c sin^2 alpha,
    height h - e sin q - d cos q.  A slider along (0, 0.6, 0.8): M = m, V = 0.8 m g q."""
    m, e, d, h, al = 1.7, 0.05, 0.3, 0.9, 0.4
    a, b, c = 0.02, 0.03, 0.015
    xml = (f'<robot name="one"><link name="w"/><joint name="j" type="revolute">'
           f'<parent link="w"/><child link="b"/><origin xyz="0 0 {h}"/><axis xyz="0 1 0"/>'
           f'<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
           f'<link name="b"><inertial><origin xyz="{e} 0 {-d}" rpy="{al} 0 0"/>'
           f'<mass value="{m}"/><inertia ixx="{a}" ixy="0" ixz="0" iyy="{b}" iyz="0" '
           f'izz="{c}"/></inertial></link></robot>')
    ref = TreeReference(xml)
    Mh = m * (d * d + e * e) + b * math.cos(al) ** 2 + c * math.sin(al) ** 2
    for q in (-2.0, -0.3, 0.0, 1.1, 2.9):
        assert ref.mass([q])[0, 0] == pytest.approx(Mh, rel=1e-15)
        assert ref.potential([q]) == pytest.approx(
            m * 9.81 * (h - e * math.sin(q) - d * math.cos(q)), rel=1e-15)
        assert ref.potential_grad([q])[0] == pytest.approx(
            m * 9.81 * (-e * math.cos(q) + d * math.sin(q)), rel=1e-14)
    slider = (f'<robot name="s"><link name="w"/><joint name="j" type="prismatic">'
              f'<parent link="w"/><child link="b"/><origin xyz="0.1 0.2 0.3" rpy="0 0 0.7"/>'
              f'<axis xyz="0 0.6 0.8"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
              f'</joint><link name="b"><inertial><origin xyz="0.1 0 0"/><mass value="{m}"/>'
              f'<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
              f'</robot>')
    ref = TreeReference(slider)
    assert ref.mass([0.37])[0, 0] == pytest.approx(m, rel=1e-15)
    assert ref.potential([0.37]) - ref.potential([0.0]) == pytest.approx(0.8 * m * 9.81 * 0.37,
                                                                         rel=1e-14)


def test_reference_normalises_the_axis():
    """An axis given as (0, 3, 4) is the unit axis (0, 0.6, 0.8)."""
    one = TreeReference(path("prismatic"))
    text = Path(path("prismatic")).read_text().replace('<axis xyz="0.6 0 0.8"/>',
                                                       '<axis xyz="3 0 4"/>')
    assert '<axis xyz="3 0 4"/>' in text
    other = TreeReference(text)
    q = one.robot.random_q(np.random.default_rng(2))
    assert rel(other.mass(q), one.mass(q)) < 1e-15


def test_reference_zero_poses_of_the_published_kinematics():
    """The zero poses of the UR5 (standard DH, all angles 0: the flange at (a2 + a3,
    -(d4 + d6), d1 - d5) = (-0.81725, -0.19145, -0.005491) m in the base frame) and of the
    Panda (the flange at (0.088, 0, 0.333 + 0.316 + 0.384 - 0.107) = (0.088, 0, 0.926) m,
    its z axis pointing down)."""
    ur = reference("arm6")
    q = np.zeros(6)
    Rm, pm = ur.link_pose("shoulder_link", q)        # the tilted mount = joint 1's frame at 0
    R6, p6 = ur.link_pose("wrist_3_link", q)
    flange = Rm.T @ (p6 + R6 @ [0, 0, 0.0823] - pm)
    assert np.max(np.abs(flange - [-0.81725, -0.19145, 0.089159 - 0.09465])) < 1e-15
    panda = reference("arm7")
    R8, p8 = panda.link_pose("panda_link8", np.zeros(7))
    assert np.max(np.abs(p8 - [0.088, 0.0, 0.926])) < 1e-15
    assert np.max(np.abs(R8 - np.diag([1.0, -1.0, -1.0]))) < 1e-15


def _vee(W):
    return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


@pytest.mark.parametrize("name", URDFS)
def test_reference_kinetic_energy_is_that_of_its_poses(name):
    """1/2 qdotᵀ M qdot equals the kinetic energy of the links moving along q + t qdot, the
    velocities taken by central differences of the reference's world poses (homogeneous
    transforms): v_c = d x_c/dt, [w]x = dR/dt Rᵀ, T = sum 1/2 (m |v_c|^2 + wᵀ R I Rᵀ w); and
    dV/dq equals central differences of V."""
    ref = reference(name)
    rb = ref.robot
    rng = np.random.default_rng(17)
    eps = 1e-5
    for q in states(rb, name, 2):
        qd = rng.uniform(-1, 1, rb.n)
        T = 0.0
        for link in rb.links.values():
            if link.mass == 0.0:
                continue
            (Rp, pp), (Rm, pm) = (ref.link_pose(link.name, q + s * eps * qd) for s in (1, -1))
            R, p = ref.link_pose(link.name, q)
            v = ((pp + Rp @ link.com) - (pm + Rm @ link.com)) / (2 * eps)
            w = _vee((Rp - Rm) / (2 * eps) @ R.T)
            T += 0.5 * (link.mass * v @ v + w @ R @ link.inertia @ R.T @ w)
        assert 0.5 * qd @ ref.mass(q) @ qd == pytest.approx(T, rel=1e-8)
        fd = np.array([(ref.potential(q + eps * e) - ref.potential(q - eps * e)) / (2 * eps)
                       for e in np.eye(rb.n)])
        assert rel(ref.potential_grad(q), fd) < 1e-8


def test_reference_sums_agree():
    """The reference's M summed link by link (every column carried to each link's frame) and
    entry by entry (each M_kl in joint l's child frame, the default) agree to rounding."""
    for name in ("fixed", "prismatic", "branched"):
        a, b = reference(name), TreeReference(path(name), form="links")
        for q in states(a.robot, name, 3):
            assert rel(a.mass(q), b.mass(q)) < 1e-14


# ====================================================================== the acceptance
def check_against_reference(system, ref, name):
    """M, V(q) - V(q0), dV/dq of ``system`` against the reference at N_STATES states."""
    rb = ref.robot
    assert system.n == rb.n
    assert tuple(system.coordinates) == rb.coordinates
    lo, hi = rb.limits()
    q0 = (lo + hi) / 2
    dV, dV_ref, worst = [], [], {}
    for q in states(rb, name):
        worst["M"] = max(worst.get("M", 0.0), rel(system.mass(q), ref.mass(q)))
        worst["dV"] = max(worst.get("dV", 0.0), rel(system.potential_grad(q),
                                                    ref.potential_grad(q)))
        dV.append(system.potential(q) - system.potential(q0))
        dV_ref.append(ref.potential(q) - ref.potential(q0))
    worst["V"] = rel(dV, dV_ref)
    assert max(worst.values()) < RTOL, worst
    return worst


@pytest.mark.parametrize("name", URDFS)
def test_mass_and_potential_equal_the_reference(name):
    check_against_reference(from_urdf(path(name)), reference(name), name)


@pytest.mark.parametrize("name", ["arm6", "branched", "prismatic"])
def test_other_gravity_equals_the_reference(name):
    """A gravity vector off the vertical (a robot on a slope), given to both."""
    g = (1.3, -0.7, -9.6)
    check_against_reference(from_urdf(path(name), gravity=g), reference(name, g), name)


def test_xml_string_is_read_like_the_file():
    text = Path(path("fixed")).read_text()
    check_against_reference(from_urdf(text), reference("fixed"), "fixed")


@pytest.mark.parametrize("mimic", ["independent", "constraint"])
def test_mimic_modes(mimic):
    """mimic.urdf: both modes have the 5 joints as coordinates and the same M and V;
    "constraint" adds g = q_j - a q_k - b for each mimicking joint j of leader k (in the
    mimicking joints' order), with its exact Jacobian, and "independent" none."""
    ref = reference("mimic")
    S = from_urdf(path("mimic"), mimic=mimic)
    check_against_reference(S, ref, "mimic")
    if mimic == "independent":
        assert not S.n_constraints
        return
    assert S.n_constraints == 2
    G = np.zeros((2, 5))
    G[0, 1], G[0, 2] = 1.0, 1.2          # right_knuckle = -1.2 left_knuckle + 0.1
    G[1, 4], G[1, 3] = 1.0, 1.0          # pad_right = -pad_left + 0.02
    for q in states(ref.robot, "mimic"):
        g = [q[1] + 1.2 * q[2] - 0.1, q[4] + q[3] - 0.02]
        assert np.max(np.abs(S.constraint(q) - g)) < 1e-15
        assert np.array_equal(S.constraint_jac(q), G)
        assert np.array_equal(S.constraint_hess(q, [0.3, -0.7]), np.zeros((5, 5)))
        # the reference's constraints are the same expressions
        rg = [float(e.subs(dict(zip(ref.q, q)))) for e in ref.constraints()]
        assert np.max(np.abs(np.array(rg) - g)) < 1e-15


def _moving_links(rb):
    """The links that move: those below a movable joint."""
    below = {rb.root: False}
    for name in rb.tree_order:
        j = rb.joints[name]
        below[j.child] = below[j.parent] or j.type != "fixed"
    return [k for k, moves in below.items() if moves]


@pytest.mark.parametrize("name", URDFS)
def test_tree_kinematics_equal_the_reference(name):
    """The tree's link poses (every link, merged ones too), points and centre of mass equal
    the reference's homogeneous transforms; its frame Jacobian equals central differences of
    them; its mass is that of the moving links."""
    ref = reference(name)
    rb = ref.robot
    tree = from_urdf(path(name)).tree
    assert tree.root == rb.root
    assert set(tree.links) == set(rb.links) and tree.links[0] == rb.root
    assert tuple(tree.coordinates) == rb.coordinates
    moving = _moving_links(rb)
    assert tree.mass == pytest.approx(sum(rb.links[k].mass for k in moving), rel=1e-15)
    eps = 1e-6
    for q in states(rb, name, 2):
        num = np.zeros(3)
        for link in rb.links:
            R, p = ref.link_pose(link, q)
            Rt, pt = tree.link_pose(link, q)
            assert np.max(np.abs(Rt - R)) < 1e-14 and np.max(np.abs(pt - p)) < 1e-13, link
            x = np.array([0.03, -0.02, 0.05])
            assert np.max(np.abs(tree.point(link, q, x) - (p + R @ x))) < 1e-13, link
            if link in moving:
                num += rb.links[link].mass * (p + R @ rb.links[link].com)
        assert np.max(np.abs(tree.com(q) - num / tree.mass)) < 1e-13
        for link in moving[-2:]:
            J = np.empty((6, rb.n))
            for k, e in enumerate(np.eye(rb.n)):
                (Rp, pp), (Rm, pm) = (ref.link_pose(link, q + s * eps * e) for s in (1, -1))
                J[:3, k] = _vee((Rp - Rm) / (2 * eps) @ ref.link_pose(link, q)[0].T)
                J[3:, k] = (pp - pm) / (2 * eps)
            assert rel(tree.frame_jacobian(link, q), J) < 1e-8, link
