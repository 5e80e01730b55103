"""symplectic.multibody.from_urdf reads URDF's conventions right: origins and rpy, axes,
inertial frames, fixed-joint merging, the joint numbering, the data it keeps, and the
dynamics of systems whose M and V are known by hand (the planar chain against
symplectic.systems.pendulum_chain, the cart-pole).

Expected values are written here from URDF's conventions (R = Rz(yaw) Ry(pitch) Rx(roll)
from elementary rotations) and textbook formulas, never taken from the code under test.
"""
import math
import pathlib
import pickle

import numpy as np
import pytest

import symplectic as sp
from symplectic import multibody as mb
from support.rotations import Rx, Rz, rpy, rpy_of

G = 9.81




def nums(v):
    return " ".join(repr(float(x)) for x in v)


def inertial(mass, com=(0, 0, 0), I=None, origin_rpy=(0, 0, 0)):
    I = np.zeros((3, 3)) if I is None else np.asarray(I, dtype=float)
    return (f'<inertial><origin xyz="{nums(com)}" rpy="{nums(origin_rpy)}"/>'
            f'<mass value="{float(mass)!r}"/>'
            f'<inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" '
            f'ixz="{float(I[0, 2])!r}" iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" '
            f'izz="{float(I[2, 2])!r}"/></inertial>')


def link(name, body=""):
    return f'<link name="{name}">{body}</link>'


def joint(name, kind, parent, child, xyz=None, rpy=None, axis=None, extra=""):
    origin = ""
    if xyz is not None or rpy is not None:
        origin = (f'<origin xyz="{nums(xyz if xyz is not None else (0, 0, 0))}" '
                  f'rpy="{nums(rpy if rpy is not None else (0, 0, 0))}"/>')
    ax = "" if axis is None else f'<axis xyz="{nums(axis)}"/>'
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/>{origin}{ax}{extra}</joint>')


def robot(*parts, name="r"):
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(parts) + "\n</robot>\n"


def chain_urdf(ms, ls):
    """Point masses on massless rods, hanging along -z, joints about y (relative angles)."""
    parts = [link("world")]
    for i, (m, l) in enumerate(zip(ms, ls)):
        parts.append(link(f"rod{i}", inertial(m, (0, 0, -l))))
        parts.append(joint(f"j{i}", "continuous" if i % 2 else "revolute",
                           "world" if i == 0 else f"rod{i - 1}", f"rod{i}",
                           xyz=(0, 0, -ls[i - 1] if i else 0.0), axis=(0, 1, 0)))
    return robot(*parts, name="chain")


# ---------------------------------------------------------------- dynamics against hand formulas
@pytest.mark.parametrize("n", [1, 3, 5])
def test_planar_chain_equals_pendulum_chain_in_relative_angles(n):
    """q_abs = T q_rel with T the lower-triangular ones: M_rel = T^T M_abs T and
    V_rel(q) = V_abs(T q), to 1e-12."""
    rng = np.random.default_rng(n)
    ms, ls = rng.uniform(0.5, 2.0, n), rng.uniform(0.3, 1.5, n)
    sys = mb.from_urdf(chain_urdf(ms, ls))
    ref = sp.systems.pendulum_chain(n, m=ms, l=ls, g=G)
    assert sys.coordinates == tuple(f"j{i}" for i in range(n))
    T = np.tril(np.ones((n, n)))
    for _ in range(5):
        q = rng.uniform(-3, 3, n)
        Mref = T.T @ ref.mass(T @ q) @ T
        assert np.max(np.abs(sys.mass(q) - Mref)) <= 1e-12 * np.max(np.abs(Mref))
        Vref = ref.potential(T @ q)
        assert abs(sys.potential(q) - Vref) <= 1e-12 * abs(Vref)
        gref = T.T @ ref.potential_grad(T @ q)
        assert np.allclose(sys.potential_grad(q), gref, rtol=0, atol=1e-12 * np.max(abs(gref)))


def test_cart_pole_by_hand():
    """A prismatic cart along x carrying a pendulum about y: M = [[mc + m, -m l cos t],
    [-m l cos t, m l^2]], V = -m g l cos t (the mass at (x - l sin t, 0, -l cos t))."""
    mc, m, l = 2.0, 0.3, 0.8
    doc = robot(link("world"), link("cart", inertial(mc)), link("pole", inertial(m, (0, 0, -l))),
                joint("rail", "prismatic", "world", "cart", axis=(1, 0, 0)),
                joint("hinge", "continuous", "cart", "pole", axis=(0, 1, 0)))
    sys = mb.from_urdf(doc)
    for x, t in [(0.0, 0.0), (0.4, 0.7), (-1.0, 2.5)]:
        c = math.cos(t)
        M = np.array([[mc + m, -m * l * c], [-m * l * c, m * l * l]])
        assert np.allclose(sys.mass([x, t]), M, rtol=0, atol=1e-14)
        assert sys.potential([x, t]) == pytest.approx(-m * G * l * c, rel=1e-14, abs=1e-14)


def test_vertical_slider_by_hand():
    """A mass m on a prismatic joint along the rotated axis: M = m, V = m g z."""
    doc = robot(link("world"), link("slider", inertial(1.5, (0.1, 0.2, 0.3))),
                joint("lift", "prismatic", "world", "slider", xyz=(0, 0, 1.0),
                      rpy=(0, -math.pi / 2, 0), axis=(2, 0, 0)))   # pitch -pi/2: x -> +z
    sys = mb.from_urdf(doc)
    assert np.allclose(sys.mass([0.4]), [[1.5]], atol=1e-14)
    z = sys.tree.point("slider", [0.4], (0.1, 0.2, 0.3))[2]
    # the com (0.1, 0.2, 0.3) in the joint frame is at z = 1 + 0.4 + 0.1 (x_joint -> +z)
    assert z == pytest.approx(1.5, abs=1e-14)
    assert sys.potential([0.4]) == pytest.approx(1.5 * G * 1.5, rel=1e-14)


# ---------------------------------------------------------------- conventions
def test_origin_rpy_and_rotation_about_the_axis():
    r, p, y = 0.3, -0.4, 1.1
    xyz = (0.5, -0.2, 0.8)
    doc = robot(link("world"), link("a", inertial(1.0, (0.2, 0.1, 0.0), np.eye(3) * 0.01)),
                joint("j", "revolute", "world", "a", xyz=xyz, rpy=(r, p, y), axis=(0, 0, 1)))
    tree = mb.read_urdf(doc)
    R0 = rpy(r, p, y)
    for q in (0.0, 0.9):
        R, pos = tree.link_pose("a", [q])
        assert np.allclose(R, R0 @ Rz(q), rtol=0, atol=1e-15)
        assert np.allclose(pos, xyz, rtol=0, atol=1e-15)
    # the contract's layout: R row-major, then p
    par = tree.flat_parameters()
    assert np.allclose(par[3 + 5:3 + 14], R0.ravel(), atol=1e-15)
    assert np.array_equal(par[3 + 14:3 + 17], xyz)


def test_rpy_is_fixed_axis_roll_pitch_yaw():
    """Quarter turns: yaw pi/2 takes x to y; roll pi/2 then yaw pi/2 takes z to x (roll
    first: z -> -y, then yaw: -y -> x)."""
    doc = robot(link("world"), link("a", inertial(1.0, (1, 0, 0))),
                link("b", inertial(1.0, (0, 1, 0))),
                joint("j", "revolute", "world", "a", rpy=(0, 0, math.pi / 2), axis=(0, 0, 1)),
                joint("k", "revolute", "world", "b", rpy=(math.pi / 2, 0, math.pi / 2),
                      axis=(1, 0, 0)))
    tree = mb.read_urdf(doc)
    R = tree.link_pose("a", [0.0, 0.0])[0]
    assert np.allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    R = tree.link_pose("b", [0.0, 0.0])[0]
    assert np.allclose(R @ [0, 0, 1], [1, 0, 0], atol=1e-15)


def test_axis_normalised_and_default_axis():
    doc = robot(link("world"), link("a", inertial(1.0, (0, 0.5, 0.5), np.eye(3) * 0.01)),
                link("b", inertial(1.0, (0, 0.5, 0), np.eye(3) * 0.01)),
                joint("j", "revolute", "world", "a", axis=(0, 0, 2)),
                joint("k", "revolute", "a", "b"))                        # no <axis>: (1, 0, 0)
    tree = mb.read_urdf(doc)
    par = tree.flat_parameters()
    assert np.array_equal(par[3 + 2:3 + 5], [0.0, 0.0, 1.0])
    assert np.array_equal(par[30 + 2:30 + 5], [1.0, 0.0, 0.0])
    R = tree.link_pose("b", [0.0, 0.5])[0]
    assert np.allclose(R, Rx(0.5), atol=1e-15)


def test_missing_origin_is_the_identity():
    doc = robot(link("world"), link("a", inertial(1.0, (0.3, 0, 0))),
                joint("j", "revolute", "world", "a", axis=(0, 0, 1)))
    par = mb.read_urdf(doc).flat_parameters()
    assert np.array_equal(par[3 + 5:3 + 17], np.concatenate([np.eye(3).ravel(), np.zeros(3)]))


def test_inertial_origin_rpy_turns_the_inertia_into_the_link_frame():
    I = np.diag([0.01, 0.02, 0.03])
    doc = robot(link("world"), link("a", inertial(2.0, (0.1, 0.2, 0.3), I, (0, 0, math.pi / 2))),
                joint("j", "revolute", "world", "a", axis=(0, 0, 1)))
    par = mb.read_urdf(doc).flat_parameters()
    assert par[3 + 17] == 2.0 and np.array_equal(par[3 + 18:3 + 21], [0.1, 0.2, 0.3])
    # a quarter turn about z swaps the x and y moments
    assert np.allclose(par[3 + 21:3 + 27], [0.02, 0, 0, 0.01, 0, 0.03], rtol=0, atol=1e-17)
    # a general rotation: R I R^T with R = Rz Ry Rx
    ang = (0.4, -0.9, 2.0)
    I = np.array([[0.05, 0.001, -0.002], [0.001, 0.04, 0.003], [-0.002, 0.003, 0.06]])
    doc = robot(link("world"), link("a", inertial(2.0, (0.1, 0.2, 0.3), I, ang)),
                joint("j", "revolute", "world", "a", axis=(0, 0, 1)))
    par = mb.read_urdf(doc).flat_parameters()
    Il = rpy(*ang) @ I @ rpy(*ang).T
    assert np.allclose(par[3 + 21:3 + 27], Il[np.triu_indices(3)], rtol=0, atol=1e-16)


def test_fixed_joint_merging_equals_the_links_merged_by_hand():
    """a carries b on a fixed joint, c hangs from b; the hand-merged document has one link ab
    (mass, centre of mass and inertia combined by the parallel-axis theorem) and c's joint
    placed through the fixed joint."""
    rng = np.random.default_rng(21)

    def inertia(scale):
        a, b = rng.uniform(0.5, 1.5, 2) * scale
        R = rpy(*rng.uniform(-3, 3, 3))
        return R @ np.diag([a, b, rng.uniform(abs(a - b), a + b)]) @ R.T

    m1, c1, I1, o1 = 1.2, np.array([0.1, 0.0, -0.2]), inertia(0.1), (0.2, 0.1, -0.3)
    m2, c2, I2, o2 = 0.6, np.array([0.0, 0.3, 0.1]), inertia(0.05), (-0.5, 0.4, 0.2)
    xf, rf = np.array([0.3, -0.1, 0.4]), (0.7, 0.2, -0.5)
    xc, rc = np.array([0.0, 0.2, 0.1]), (0.1, -0.6, 0.3)
    top = joint("ja", "revolute", "world", "a", xyz=(0, 0, 1), axis=(0, 1, 0))
    c_link = link("c", inertial(0.5, (0, 0, -0.4), np.eye(3) * 0.001))
    with_fixed = robot(
        link("world"), link("a", inertial(m1, c1, I1, o1)), link("b", inertial(m2, c2, I2, o2)),
        c_link, top, joint("weld", "fixed", "a", "b", xyz=xf, rpy=rf),
        joint("jc", "revolute", "b", "c", xyz=xc, rpy=rc, axis=(0, 0, 1)))
    # by hand, in a's frame
    Rf = rpy(*rf)
    Ia = rpy(*o1) @ I1 @ rpy(*o1).T
    Ib = Rf @ rpy(*o2) @ I2 @ rpy(*o2).T @ Rf.T
    cb = Rf @ c2 + xf
    m = m1 + m2
    c = (m1 * c1 + m2 * cb) / m
    d1, d2 = c1 - c, cb - c
    I = (Ia + m1 * (d1 @ d1 * np.eye(3) - np.outer(d1, d1))
         + Ib + m2 * (d2 @ d2 * np.eye(3) - np.outer(d2, d2)))
    merged = robot(
        link("world"), link("ab", inertial(m, c, 0.5 * (I + I.T))), c_link,
        joint("ja", "revolute", "world", "ab", xyz=(0, 0, 1), axis=(0, 1, 0)),
        joint("jc", "revolute", "ab", "c", xyz=Rf @ xc + xf, rpy=rpy_of(Rf @ rpy(*rc)),
              axis=(0, 0, 1)))
    a, b = mb.from_urdf(with_fixed), mb.from_urdf(merged)
    assert a.coordinates == b.coordinates == ("ja", "jc")
    assert np.allclose(a.tree.flat_parameters(), b.tree.flat_parameters(), rtol=0, atol=1e-13)
    q = np.array([0.3, -0.8])
    assert np.allclose(a.mass(q), b.mass(q), rtol=0, atol=1e-13)
    assert a.potential(q) == pytest.approx(b.potential(q), rel=1e-13)
    # the merged link b still has its pose: a's pose composed with the fixed placement
    Ra, pa = a.tree.link_pose("a", q)
    Rb, pb = a.tree.link_pose("b", q)
    assert np.allclose(Rb, Ra @ Rf, atol=1e-15) and np.allclose(pb, Ra @ xf + pa, atol=1e-15)


def test_depth_first_numbering_in_document_order():
    """Joints listed out of order: q follows the depth-first walk from the root, a link's
    children in document order."""
    body = inertial(1.0, (0.2, 0.1, -0.3), np.eye(3) * 0.01)
    doc = robot(link("hand", body), link("world"), link("left", body), link("right", body),
                link("finger", body),
                joint("wrist", "revolute", "left", "hand", axis=(0, 0, 1)),
                joint("l_shoulder", "revolute", "world", "left", axis=(0, 1, 0)),
                joint("r_shoulder", "revolute", "world", "right", axis=(0, 1, 0)),
                joint("knuckle", "revolute", "hand", "finger", axis=(1, 0, 0)))
    tree = mb.read_urdf(doc)
    assert tree.coordinates == ("l_shoulder", "wrist", "knuckle", "r_shoulder")
    assert tree.root == "world"
    assert tree.links == ("world", "hand", "left", "right", "finger")
    par = tree.flat_parameters()
    assert [par[3 + 27 * j] for j in range(4)] == [-1.0, 0.0, 1.0, -1.0]


def test_sources_path_pathlib_string_and_bytes_agree(tmp_path):
    doc = chain_urdf([1.0, 2.0], [0.5, 0.7])
    path = tmp_path / "chain.urdf"
    path.write_text(doc)
    flats = [mb.from_urdf(s).tree.flat_parameters()
             for s in (doc, "\n  " + doc.split("\n", 1)[1], doc.encode(), path, str(path),
                       pathlib.PurePath(path))]
    for f in flats[1:]:
        assert np.array_equal(f, flats[0])


def test_ignored_tags_change_nothing():
    plain = chain_urdf([1.0, 2.0], [0.5, 0.7])
    dressed = plain.replace(
        '<link name="rod0">',
        '<link name="rod0"><visual><origin xyz="0 0 -0.25"/><geometry><mesh filename='
        '"package://r/meshes/rod.stl" scale="1 1 1"/></geometry><material name="red"><color '
        'rgba="1 0 0 1"/></material></visual><collision><geometry><cylinder radius="0.01" '
        'length="0.5"/></geometry></collision>').replace(
        "</robot>",
        '<transmission name="t"><type>transmission_interface/SimpleTransmission</type>'
        '<joint name="j0"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
        '</transmission><gazebo reference="rod0"><material>Gazebo/Red</material></gazebo>'
        '<material name="blue"><color rgba="0 0 1 1"/></material></robot>').replace(
        '<axis xyz="0.0 1.0 0.0"/>',
        '<axis xyz="0.0 1.0 0.0"/><safety_controller k_velocity="10"/><calibration rising="0"/>')
    assert np.array_equal(mb.from_urdf(dressed).tree.flat_parameters(),
                          mb.from_urdf(plain).tree.flat_parameters())


def test_root_inertial_does_not_enter():
    plain = chain_urdf([1.0], [0.5])
    heavy = plain.replace('<link name="world"></link>',
                          '<link name="world">' + inertial(100.0, (1, 2, 3), np.eye(3)) +
                          "</link>")
    assert heavy != plain
    a, b = mb.from_urdf(plain), mb.from_urdf(heavy)
    assert np.array_equal(a.tree.flat_parameters(), b.tree.flat_parameters())
    assert b.tree.mass == 1.0


def test_limits_dynamics_and_mimic_are_kept_as_data():
    extra = ('<limit lower="-1.5" upper="2.0" effort="30" velocity="3.5"/>'
             '<dynamics damping="0.7" friction="0.05"/>')
    body = inertial(1.0, (0.3, 0, -0.2), np.eye(3) * 0.01)
    doc = robot(link("world"), link("a", body), link("b", body),
                joint("j", "revolute", "world", "a", axis=(0, 1, 0), extra=extra),
                joint("k", "revolute", "a", "b", axis=(0, 0, 1),
                      extra='<mimic joint="j" multiplier="-2" offset="0.1"/>'
                            '<dynamics damping="0.2"/>'),
                name="arm")
    sys = mb.from_urdf(doc)
    j, k = sys.tree.joint("j"), sys.tree.joint("k")
    assert j.limit == {"lower": -1.5, "upper": 2.0, "effort": 30.0, "velocity": 3.5}
    assert (j.damping, j.friction) == (0.7, 0.05)
    assert k.mimic == ("j", -2.0, 0.1) and k.limit is None and k.friction == 0.0
    assert sys.name == "arm" and sys.tree.name == "arm"
    assert sys.force is None and sys.n_constraints == 0
    # joint damping: -c_j qdot_j on each coordinate
    damped = mb.from_urdf(doc, joint_damping=True)
    assert np.array_equal(damped.force.damping, np.diag([0.7, 0.2]))
    # mimic as a constraint: g = q_k + 2 q_j - 0.1
    tied = mb.from_urdf(doc, mimic="constraint")
    assert tied.n_constraints == 1
    assert np.allclose(tied.constraint([0.3, -0.2]), [-0.2 + 2 * 0.3 - 0.1], atol=1e-15)
    assert np.allclose(tied.constraint_jac([0.3, -0.2]), [[2.0, 1.0]], atol=1e-15)
    back = pickle.loads(pickle.dumps(tied))
    assert type(back) is mb.TreeSystem and back.n_constraints == 1 and back.mimic == "constraint"


def test_gravity_option():
    doc = chain_urdf([2.0], [0.5])
    sys = mb.from_urdf(doc, gravity=(0.0, 0.0, -1.0))
    assert sys.potential([0.0]) == pytest.approx(-2.0 * 1.0 * 0.5, rel=1e-15)
    sideways = mb.from_urdf(doc, gravity=(3.0, 0.0, 0.0))
    # the mass at (-0.5 sin t, 0, -0.5 cos t): V = -m g_x x = 2 * 3 * 0.5 sin t
    assert sideways.potential([0.4]) == pytest.approx(3.0 * math.sin(0.4), rel=1e-14)


def test_a_run_conserves_energy():
    """A run of a 3-D robot from URDF: Simpson keeps the energy, its error of order 4."""
    body = inertial(1.0, (0.05, 0.02, -0.25), np.diag([0.02, 0.025, 0.01]), (0.1, 0.2, 0.3))
    doc = robot(link("world"), link("a", body), link("b", body), link("c", body),
                joint("j1", "revolute", "world", "a", axis=(0, 0, 1)),
                joint("j2", "revolute", "a", "b", xyz=(0, 0.1, -0.5), rpy=(0.3, 0, 0),
                      axis=(0, 1, 0)),
                joint("j3", "revolute", "b", "c", xyz=(0, 0, -0.5), axis=(1, 0, 0)))
    sys = mb.from_urdf(doc)
    err = []
    for h in (0.01, 0.005):
        traj = sp.integrate(sys, [0.1, 0.8, 0.05], [0.5, 0.0, 0.0], h=h, n_steps=round(2 / h))
        err.append(np.max(np.abs(traj.energy - traj.energy[0])) / np.max(np.abs(traj.energy)))
    assert err[1] < 1e-6
    assert err[0] / err[1] > 10          # order 4: 16 (measured 15.6)
