"""symplectic.multibody's model: Body, Joint and Tree -- their checks, the flat parameters of
the C built-in "tree", the NumPy kinematics, and the TreeSystem.

Expected values come from hand formulas written here (elementary rotations, the
parallel-axis theorem, the planar chain's link positions), from central differences of the
kinematics, and from symplectic.systems.pendulum_chain (another built-in) -- never from the
code under test.
"""
import math
import pickle

import numpy as np
import pytest

import symplectic as sp
from symplectic import multibody as mb
from support.rotations import Ry, rpy, rpy_of

G = 9.81


# ---------------------------------------------------------------- hand-written helpers
def physical_inertia(rng, scale=1.0):
    """R diag(a, b, c) R^T with a, b, c satisfying the triangle inequality."""
    a, b = rng.uniform(0.5, 1.5, 2) * scale
    c = rng.uniform(abs(a - b), a + b)
    R = rpy(*rng.uniform(-3, 3, 3))
    return R @ np.diag([a, b, c]) @ R.T


def chain_tree(masses, lengths):
    """A planar chain of point masses hanging along -z, revolute joints about y: joint i at
    the end of rod i - 1 (the pivot for i = 0), mass i at the end of rod i."""
    bodies = [mb.Body("base")]
    joints = []
    for i, (m, l) in enumerate(zip(masses, lengths)):
        bodies.append(mb.Body(f"rod{i}", mass=m, com=(0.0, 0.0, -l)))
        parent = "base" if i == 0 else f"rod{i - 1}"
        xyz = (0.0, 0.0, 0.0) if i == 0 else (0.0, 0.0, -lengths[i - 1])
        joints.append(mb.Joint(f"j{i}", "revolute", parent, f"rod{i}", xyz=xyz,
                               axis=(0.0, 1.0, 0.0)))
    return mb.Tree(bodies, joints, gravity=(0.0, 0.0, -G), name="chain")


def spatial_tree(rng):
    """A 3-D tree: a revolute joint, a prismatic one, a fixed link, a branch (continuous
    joint), an axis to normalise, offsets and rotations everywhere."""
    def body(name, scale=1.0):
        return mb.Body(name, mass=rng.uniform(0.5, 2.0), com=rng.uniform(-0.3, 0.3, 3),
                       inertia=physical_inertia(rng, 0.1 * scale))

    def place():
        return dict(xyz=rng.uniform(-0.5, 0.5, 3), rpy=rng.uniform(-1.5, 1.5, 3))

    bodies = [body("base"), body("upper"), body("slide"), body("plate", 0.5), body("side"),
              body("tip")]
    joints = [mb.Joint("shoulder", "revolute", "base", "upper", axis=(0.3, -0.5, 0.8),
                       **place()),
              mb.Joint("slider", "prismatic", "upper", "slide", axis=(0.0, 2.0, 1.0), **place()),
              mb.Joint("weld", "fixed", "slide", "plate", **place()),
              mb.Joint("branch", "continuous", "upper", "side", axis=(1.0, 1.0, 0.0), **place()),
              mb.Joint("wrist", "revolute", "plate", "tip", axis=(0.0, 0.0, -1.0), **place())]
    return mb.Tree(bodies, joints, gravity=(0.5, -1.0, -G), name="spatial")


def central_jacobian(f, q, h=1e-6):
    cols = []
    for j in range(len(q)):
        e = np.zeros(len(q)); e[j] = h
        cols.append((f(q + e) - f(q - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.fixture
def spatial():
    return spatial_tree(np.random.default_rng(7))


# ---------------------------------------------------------------- Body and Joint checks
def test_point_mass_is_physical():
    b = mb.Body("p", mass=2.0, com=(0.1, 0.0, 0.0), inertia=np.zeros((3, 3)))
    assert b.mass == 2.0 and not np.any(b.inertia)


def test_thin_rod_and_flat_plate_are_on_the_triangle_boundary_and_accepted():
    mb.Body("rod", mass=1.0, inertia=np.diag([0.0, 1.0, 1.0]))
    mb.Body("plate", mass=1.0, inertia=np.diag([1.0, 2.0, 3.0]))
    mb.Body("printed", mass=1.0, inertia=[0.333333, 0.0, 0.0, 0.333333, 0.0, 0.666667])


def test_negative_principal_moment_is_refused():
    R = rpy(0.3, -0.2, 1.0)
    with pytest.raises(ValueError, match=r"link 'bad'.*not physical.*principal moment is "
                                         r"negative"):
        mb.Body("bad", mass=1.0, inertia=R @ np.diag([1.0, 1.0, -0.1]) @ R.T)


def test_triangle_inequality_violation_is_refused():
    with pytest.raises(ValueError, match=r"link 'bad'.*triangle inequality I1 \+ I2 >= I3"):
        mb.Body("bad", mass=1.0, inertia=np.diag([1.0, 1.0, 2.1]))


def test_asymmetric_inertia_is_refused():
    I = np.diag([1.0, 1.0, 1.0]); I[0, 1] = 0.1
    with pytest.raises(ValueError, match=r"link 'bad'.*not symmetric"):
        mb.Body("bad", mass=1.0, inertia=I)


def test_negative_mass_and_non_finite_values_are_refused():
    with pytest.raises(ValueError, match=r"link 'b'.*mass must be >= 0"):
        mb.Body("b", mass=-1.0)
    with pytest.raises(ValueError, match=r"link 'b'.*mass must be finite"):
        mb.Body("b", mass=float("nan"))
    with pytest.raises(ValueError, match=r"link 'b'.*com must be finite"):
        mb.Body("b", mass=1.0, com=(0.0, float("inf"), 0.0))
    with pytest.raises(ValueError, match=r"link 'b'.*inertia must be finite"):
        mb.Body("b", mass=1.0, inertia=np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match=r"joint 'j'.*xyz must be finite"):
        mb.Joint("j", "revolute", "a", "b", xyz=(0.0, np.nan, 0.0))
    with pytest.raises(ValueError, match=r"the tree.*gravity must be finite"):
        mb.Tree([mb.Body("a")], [], gravity=(0, 0, np.inf))


@pytest.mark.parametrize("kind", ["floating", "planar", "spherical"])
def test_floating_planar_spherical_joints_are_not_supported(kind):
    with pytest.raises(NotImplementedError, match=rf"joint 'free' is {kind}: floating, planar "
                                                  r"and spherical joints are not supported yet"):
        mb.Joint("free", kind, "world", "base")


def test_unknown_joint_type_is_refused():
    with pytest.raises(ValueError, match=r"joint 'j': unknown joint type 'hinge'"):
        mb.Joint("j", "hinge", "a", "b")


def test_zero_axis_is_refused_on_a_movable_joint():
    with pytest.raises(ValueError, match=r"joint 'j': the axis is zero"):
        mb.Joint("j", "revolute", "a", "b", axis=(0.0, 0.0, 0.0))
    mb.Joint("f", "fixed", "a", "b", axis=(0.0, 0.0, 0.0))      # a fixed joint has no use for it


def test_axis_is_normalised_and_defaults_to_x():
    assert np.allclose(mb.Joint("j", "prismatic", "a", "b", axis=(0, 3, 4)).axis,
                       [0.0, 0.6, 0.8], rtol=0, atol=1e-16)
    assert np.array_equal(mb.Joint("j", "revolute", "a", "b").axis, [1.0, 0.0, 0.0])


def test_negative_damping_and_self_mimic_are_refused():
    with pytest.raises(ValueError, match=r"joint 'j'.*damping must be >= 0"):
        mb.Joint("j", "revolute", "a", "b", damping=-0.1)
    with pytest.raises(ValueError, match=r"joint 'j'.*cannot mimic itself"):
        mb.Joint("j", "revolute", "a", "b", mimic=("j", 1.0, 0.0))


def test_bodies_and_joints_are_immutable():
    b = mb.Body("b", mass=1.0, com=(1.0, 2.0, 3.0))
    with pytest.raises(ValueError):
        b.com[0] = 5.0
    with pytest.raises(AttributeError):
        b.mass = 3.0


# ---------------------------------------------------------------- Tree checks
def _b(*names):
    return [mb.Body(n, mass=1.0, com=(0.1, 0.2, 0.3), inertia=np.eye(3) * 0.01) for n in names]


def test_cycle_is_refused():
    joints = [mb.Joint("ab", "revolute", "a", "b"), mb.Joint("bc", "revolute", "b", "c"),
              mb.Joint("ca", "revolute", "c", "a")]
    with pytest.raises(ValueError, match=r"the joints .*'ab'.*form a cycle"):
        mb.Tree(_b("root", "a", "b", "c"), joints)


def test_cycle_beside_a_proper_root_is_refused():
    joints = [mb.Joint("r", "revolute", "root", "a"), mb.Joint("bc", "revolute", "b", "c"),
              mb.Joint("cb", "revolute", "c", "b")]
    with pytest.raises(ValueError, match=r"form a cycle"):
        mb.Tree(_b("root", "a", "b", "c"), joints)


def test_joint_to_itself_is_a_cycle():
    with pytest.raises(ValueError, match=r"joint 'loop' joins link 'a' to itself"):
        mb.Tree(_b("root", "a"), [mb.Joint("r", "revolute", "root", "a"),
                                  mb.Joint("loop", "revolute", "a", "a")])


def test_unknown_parent_and_child_are_refused():
    with pytest.raises(ValueError, match=r"joint 'j': its parent link 'ghost' is not a link"):
        mb.Tree(_b("root", "a"), [mb.Joint("j", "revolute", "ghost", "a")])
    with pytest.raises(ValueError, match=r"joint 'j': its child link 'ghost' is not a link"):
        mb.Tree(_b("root", "a"), [mb.Joint("j", "revolute", "root", "ghost")])


def test_link_with_two_parents_is_refused():
    joints = [mb.Joint("j1", "revolute", "root", "a"), mb.Joint("j2", "revolute", "root", "b"),
              mb.Joint("j3", "revolute", "b", "a")]
    with pytest.raises(ValueError, match=r"link 'a' has two parents.*'j1' and 'j3'"):
        mb.Tree(_b("root", "a", "b"), joints)


def test_duplicate_names_are_refused():
    with pytest.raises(ValueError, match=r"two links are called 'a'"):
        mb.Tree(_b("root", "a", "a"), [mb.Joint("j", "revolute", "root", "a")])
    with pytest.raises(ValueError, match=r"two joints are called 'j'"):
        mb.Tree(_b("root", "a", "b"), [mb.Joint("j", "revolute", "root", "a"),
                                       mb.Joint("j", "revolute", "root", "b")])


def test_more_than_one_root_is_refused():
    with pytest.raises(ValueError, match=r"2 root links.*'root', 'stray'"):
        mb.Tree(_b("root", "a", "stray"), [mb.Joint("j", "revolute", "root", "a")])


def test_mimic_of_an_unknown_joint_is_refused():
    joints = [mb.Joint("j1", "revolute", "root", "a"),
              mb.Joint("j2", "revolute", "a", "b", mimic=("nope", 2.0, 0.0))]
    with pytest.raises(ValueError, match=r"joint 'j2' mimics joint 'nope', which is not a joint"):
        mb.Tree(_b("root", "a", "b"), joints)


def test_mimic_of_a_fixed_joint_is_refused():
    joints = [mb.Joint("j1", "fixed", "root", "a"),
              mb.Joint("j2", "revolute", "a", "b", mimic=("j1",))]
    with pytest.raises(ValueError, match=r"joint 'j2' mimics joint 'j1', which is fixed"):
        mb.Tree(_b("root", "a", "b"), joints)


def test_joint_that_moves_no_mass_is_refused():
    bodies = [mb.Body("root"), mb.Body("a", mass=1.0, com=(0.5, 0, 0)), mb.Body("empty"),
              mb.Body("empty2")]
    joints = [mb.Joint("j1", "revolute", "root", "a", axis=(0, 0, 1)),
              mb.Joint("idle", "revolute", "a", "empty"),
              mb.Joint("idle2", "prismatic", "empty", "empty2")]
    with pytest.raises(ValueError, match=r"joints 'idle', 'idle2' move no mass: the links below "
                                         r"them \('empty', 'empty2'\) have zero mass"):
        mb.Tree(bodies, joints)


def test_point_mass_on_the_axis_is_a_joint_that_moves_no_mass():
    bodies = [mb.Body("root"), mb.Body("a", mass=1.0, com=(0.0, 0.0, 0.5))]
    with pytest.raises(ValueError, match=r"joint 'spin' moves no mass at q = 0: its column of "
                                         r"M\(0\) is zero"):
        mb.Tree(bodies, [mb.Joint("spin", "revolute", "root", "a", axis=(0, 0, 1))])


def test_two_joints_on_one_axis_make_m_singular():
    bodies = [mb.Body("root"), mb.Body("mid"), mb.Body("a", mass=1.0, com=(0.5, 0, 0))]
    joints = [mb.Joint("first", "revolute", "root", "mid", axis=(0, 0, 1)),
              mb.Joint("second", "revolute", "mid", "a", xyz=(0, 0, 0.3), axis=(0, 0, 2))]
    with pytest.raises(ValueError, match=r"joint 'second' moves nothing that joint\(s\) "
                                         r"'first' do not: M\(q\) is singular at q = 0"):
        mb.Tree(bodies, joints)


def test_tiny_tool_near_its_axis_on_a_heavy_gantry_is_accepted():
    """The zero-column test is per joint: a 1 g tool 0.1 mm from its axis (M[1, 1] = 1.1e-11
    kg m^2) beside a 1000 kg carriage (M[0, 0] = 1000 kg) is a regular system."""
    bodies = [mb.Body("world"), mb.Body("gantry", 1000.0, (0, 0, 0), np.eye(3) * 100.0),
              mb.Body("tool", 1e-3, (1e-4, 0, 0), np.eye(3) * 1e-12)]
    joints = [mb.Joint("x", "prismatic", "world", "gantry"),
              mb.Joint("spin", "revolute", "gantry", "tool", axis=(0, 0, 1))]
    sys = mb.Tree(bodies, joints).system()
    assert np.allclose(sys.mass([0.0, 0.0]), np.diag([1000.001, 1e-3 * 1e-8 + 1e-12]),
                       rtol=1e-12, atol=0)


def test_massless_link_between_joints_on_different_axes_is_fine():
    """A universal joint: a massless cross between two axes, a body with inertia below."""
    bodies = [mb.Body("root"), mb.Body("cross"),
              mb.Body("a", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.05]))]
    joints = [mb.Joint("u1", "revolute", "root", "cross", axis=(1, 0, 0)),
              mb.Joint("u2", "revolute", "cross", "a", axis=(0, 1, 0))]
    assert mb.Tree(bodies, joints).coordinates == ("u1", "u2")


# ---------------------------------------------------------------- structure and flattening
def test_depth_first_document_order_and_parents():
    bodies = [mb.Body(n, mass=1.0, com=(0.3, 0.1, 0.0), inertia=np.eye(3) * 0.01)
              for n in ("c", "root", "a", "b", "d")]
    joints = [mb.Joint("jc", "revolute", "a", "c", axis=(0, 0, 1)),     # listed first, visited 2nd
              mb.Joint("ja", "revolute", "root", "a", axis=(0, 0, 1)),
              mb.Joint("jb", "revolute", "root", "b", axis=(0, 1, 0)),
              mb.Joint("jd", "fixed", "b", "d", xyz=(1, 0, 0))]
    tree = mb.Tree(bodies, joints)
    assert tree.coordinates == ("ja", "jc", "jb")
    assert tree.root == "root"
    assert tree.links == ("root", "c", "a", "b", "d")
    assert [tree.parent_link(x) for x in tree.links] == [None, "a", "root", "root", "b"]
    par = tree.flat_parameters()
    assert len(par) == 4 + 27 * 3
    assert [par[3 + 27 * j] for j in range(3)] == [-1.0, 0.0, -1.0]
    assert tree.mass == pytest.approx(4.0)            # c, a, b and d (fixed to b); not the root


def test_flat_parameters_by_hand():
    """Every field of a two-body tree's parameters, from the contract's layout."""
    I1 = np.array([[0.3, 0.01, 0.02], [0.01, 0.4, 0.03], [0.02, 0.03, 0.5]])
    bodies = [mb.Body("root", mass=5.0), mb.Body("a", mass=2.0, com=(0.1, 0.2, 0.3), inertia=I1),
              mb.Body("b", mass=0.5, com=(0.0, 0.0, -0.4))]
    joints = [mb.Joint("ja", "revolute", "root", "a", xyz=(1.0, 2.0, 3.0), rpy=(0.1, 0.2, 0.3),
                       axis=(0.0, 0.0, 2.0)),
              mb.Joint("jb", "prismatic", "a", "b", xyz=(0.0, 0.5, 0.0), axis=(3.0, 4.0, 0.0))]
    par = mb.Tree(bodies, joints, gravity=(0.1, 0.2, -9.0)).flat_parameters()
    expect = np.concatenate([
        [0.1, 0.2, -9.0],
        [-1.0, 0.0], [0.0, 0.0, 1.0], rpy(0.1, 0.2, 0.3).ravel(), [1.0, 2.0, 3.0],
        [2.0], [0.1, 0.2, 0.3], [0.3, 0.01, 0.02, 0.4, 0.03, 0.5],
        [0.0, 1.0], [0.6, 0.8, 0.0], np.eye(3).ravel(), [0.0, 0.5, 0.0],
        [0.5], [0.0, 0.0, -0.4], np.zeros(6),
        [0.0]])
    assert par.shape == expect.shape
    assert np.allclose(par, expect, rtol=0, atol=1e-15)


def test_fixed_link_gives_the_flat_parameters_of_the_two_merged_by_hand():
    """a carries b on a fixed joint (offset and rotated); c hangs from b.  The same tree with
    b merged into a by hand: masses added, centres of mass averaged, inertias by the
    parallel-axis theorem, c's joint placed through the fixed joint's placement."""
    rng = np.random.default_rng(3)
    m1, c1, I1 = 1.5, np.array([0.1, -0.2, 0.05]), physical_inertia(rng, 0.1)
    m2, c2, I2 = 0.7, np.array([0.3, 0.0, -0.1]), physical_inertia(rng, 0.05)
    m3, c3, I3 = 0.4, np.array([0.0, 0.0, -0.3]), physical_inertia(rng, 0.02)
    xf, rf = np.array([0.2, 0.4, -0.6]), (0.4, -0.3, 0.8)
    xc, rc = np.array([0.0, 0.1, 0.25]), (-0.2, 0.5, 0.1)
    ja = dict(xyz=(0.1, 0.0, 0.2), rpy=(0.0, 0.3, 0.0), axis=(0, 1, 0))
    fixed = mb.Tree(
        [mb.Body("root"), mb.Body("a", m1, c1, I1), mb.Body("b", m2, c2, I2),
         mb.Body("c", m3, c3, I3)],
        [mb.Joint("ja", "revolute", "root", "a", **ja),
         mb.Joint("weld", "fixed", "a", "b", xyz=xf, rpy=rf),
         mb.Joint("jc", "revolute", "b", "c", xyz=xc, rpy=rc, axis=(1, 0, 0))])
    Rf = rpy(*rf)
    cb = Rf @ c2 + xf                         # b's centre of mass in a's frame
    m = m1 + m2
    c = (m1 * c1 + m2 * cb) / m
    d1, d2 = c1 - c, cb - c
    I = (I1 + m1 * (d1 @ d1 * np.eye(3) - np.outer(d1, d1))
         + Rf @ I2 @ Rf.T + m2 * (d2 @ d2 * np.eye(3) - np.outer(d2, d2)))
    Rc = Rf @ rpy(*rc)
    merged = mb.Tree(
        [mb.Body("root"), mb.Body("ab", m, c, I), mb.Body("c", m3, c3, I3)],
        [mb.Joint("ja", "revolute", "root", "ab", **ja),
         mb.Joint("jc", "revolute", "ab", "c", xyz=Rf @ xc + xf, rpy=rpy_of(Rc), axis=(1, 0, 0))])
    assert np.allclose(fixed.flat_parameters(), merged.flat_parameters(), rtol=0, atol=1e-13)
    # the merged link still answers
    q = np.array([0.4, -1.1])
    R_a, p_a = fixed.link_pose("a", q)
    R_b, p_b = fixed.link_pose("b", q)
    assert np.allclose(R_b, R_a @ Rf, atol=1e-14) and np.allclose(p_b, R_a @ xf + p_a,
                                                                   atol=1e-14)
    assert fixed.parent_link("b") == "a" and fixed.links == ("root", "a", "b", "c")


def test_links_fixed_to_the_root_do_not_move_and_carry_no_mass():
    bodies = [mb.Body("world"), mb.Body("pedestal", mass=50.0, com=(0, 0, 0.5)),
              mb.Body("arm", mass=1.0, com=(0.5, 0, 0))]
    joints = [mb.Joint("bolt", "fixed", "world", "pedestal", xyz=(0, 0, 1.0)),
              mb.Joint("shoulder", "revolute", "pedestal", "arm", xyz=(0, 0, 1.0),
                       axis=(0, 1, 0))]
    tree = mb.Tree(bodies, joints)
    assert tree.mass == 1.0
    par = tree.flat_parameters()
    assert par[3] == -1.0 and np.array_equal(par[3 + 14:3 + 17], [0.0, 0.0, 2.0])
    R, p = tree.link_pose("pedestal", [0.7])
    assert np.array_equal(R, np.eye(3)) and np.array_equal(p, [0.0, 0.0, 1.0])


def test_mimic_rows():
    bodies = _b("root", "a", "b", "c")
    joints = [mb.Joint("j1", "revolute", "root", "a"),
              mb.Joint("j2", "revolute", "a", "b", axis=(0, 1, 0), mimic=("j3", -2.0, 0.25)),
              mb.Joint("j3", "revolute", "b", "c", axis=(0, 0, 1))]
    tree = mb.Tree(bodies, joints)
    assert tree.flat_parameters("independent")[-1] == 0.0
    par = tree.flat_parameters("constraint")
    assert len(par) == 4 + 27 * 3 + 4
    assert np.array_equal(par[-5:], [1.0, 1.0, 2.0, -2.0, 0.25])
    with pytest.raises(ValueError, match=r'mimic must be "independent".*got \'both\''):
        tree.flat_parameters("both")


def test_mimics_in_a_cycle_are_refused_as_constraints():
    bodies = _b("root", "a", "b", "c")
    joints = [mb.Joint("j1", "revolute", "root", "a"),
              mb.Joint("j2", "revolute", "a", "b", axis=(0, 1, 0), mimic=("j3", 1.0, 0.0)),
              mb.Joint("j3", "revolute", "b", "c", axis=(0, 0, 1), mimic=("j2", 1.0, 0.0))]
    tree = mb.Tree(bodies, joints)
    with pytest.raises(ValueError, match=r"not independent"):
        tree.flat_parameters("constraint")


# ---------------------------------------------------------------- kinematics
def test_planar_chain_link_positions_by_hand():
    ls = [1.0, 0.5, 0.8]
    tree = chain_tree([1.0, 2.0, 3.0], ls)
    q = np.array([0.3, -0.7, 1.2])
    th = np.cumsum(q)                     # absolute angles: a rotation by t about +y takes
    x, z = 0.0, 0.0                       # (0, 0, -l) to (-l sin t, 0, -l cos t)
    for i, (t, l) in enumerate(zip(th, ls)):
        R, p = tree.link_pose(f"rod{i}", q)
        assert np.allclose(p, [x, 0.0, z], atol=1e-15)
        assert np.allclose(R, Ry(t), atol=1e-15)
        x, z = x - l * math.sin(t), z - l * math.cos(t)
        assert np.allclose(tree.point(f"rod{i}", q, (0, 0, -l)), [x, 0.0, z], atol=1e-15)
    # the centre of mass and the potential of the moving masses
    xs = -np.cumsum([l * math.sin(t) for t, l in zip(th, ls)])
    zs = -np.cumsum([l * math.cos(t) for t, l in zip(th, ls)])
    m = np.array([1.0, 2.0, 3.0])
    assert tree.mass == 6.0
    assert np.allclose(tree.com(q), [m @ xs / 6, 0.0, m @ zs / 6], atol=1e-15)


def test_rotation_directions_by_hand():
    """A quarter turn about z takes the child's x axis to the world's y; a prismatic joint
    moves the child along its axis turned into the parent frame."""
    bodies = [mb.Body("root"), mb.Body("a", mass=1.0, com=(1, 0, 0)),
              mb.Body("b", mass=1.0, com=(0, 0, 0))]
    joints = [mb.Joint("turn", "revolute", "root", "a", xyz=(0, 0, 1), axis=(0, 0, 1)),
              mb.Joint("push", "prismatic", "a", "b", xyz=(1, 0, 0), rpy=(0, 0, math.pi / 2),
                       axis=(1, 0, 0))]
    tree = mb.Tree(bodies, joints)
    R, p = tree.link_pose("a", [math.pi / 2, 0.0])
    assert np.allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15) and np.allclose(p, [0, 0, 1])
    # b: at (1, 0, 0) in a, pushed 0.5 along a's y (the joint frame's x turned by yaw pi/2)
    assert np.allclose(tree.point("b", [0.0, 0.5]), [1.0, 0.5, 1.0], atol=1e-15)
    assert np.allclose(tree.point("b", [math.pi / 2, 0.5]), [-0.5, 1.0, 1.0], atol=1e-15)


def test_point_jacobians_against_central_differences(spatial):
    rng = np.random.default_rng(11)
    for _ in range(3):
        q = rng.uniform(-2, 2, spatial.n)
        for link in spatial.links:
            pt = rng.uniform(-0.5, 0.5, 3)
            J = spatial.point_jacobian(link, q, pt)
            fd = central_jacobian(lambda x: spatial.point(link, x, pt), q)
            assert J.shape == (3, spatial.n)
            assert np.allclose(J, fd, rtol=0, atol=1e-8), link


def test_frame_jacobians_against_central_differences(spatial):
    """Rows 0-2: dR/dq_j R^T = [w_j]x; rows 3-5: the origin's velocity."""
    rng = np.random.default_rng(12)
    for _ in range(3):
        q = rng.uniform(-2, 2, spatial.n)
        for link in spatial.links:
            J = spatial.frame_jacobian(link, q)
            R = spatial.link_pose(link, q)[0]
            dR = central_jacobian(lambda x: spatial.link_pose(link, x)[0], q)   # (3, 3, n)
            for j in range(spatial.n):
                W = dR[:, :, j] @ R.T
                w = np.array([W[2, 1], W[0, 2], W[1, 0]])
                assert np.allclose(W, -W.T, atol=1e-8)
                assert np.allclose(J[:3, j], w, rtol=0, atol=1e-8), (link, j)
            fd = central_jacobian(lambda x: spatial.link_pose(link, x)[1], q)
            assert np.allclose(J[3:], fd, rtol=0, atol=1e-8), link


def test_root_and_columns_of_other_branches_are_zero(spatial):
    q = np.linspace(-1, 1, spatial.n)
    assert not np.any(spatial.frame_jacobian("base", q))
    J = spatial.frame_jacobian("side", q)          # on the branch: shoulder and branch only
    k = {name: i for i, name in enumerate(spatial.coordinates)}
    assert not np.any(J[:, [k["slider"], k["wrist"]]])
    assert np.all(np.any(J[:, [k["shoulder"], k["branch"]]] != 0, axis=0))


def test_kinematics_input_checks(spatial):
    with pytest.raises(ValueError, match=r"q must have shape \(4,\)"):
        spatial.point("tip", [0.0, 0.0])
    with pytest.raises(KeyError, match=r"no link 'hand'"):
        spatial.link_pose("hand", np.zeros(4))
    with pytest.raises(ValueError, match=r"q must be finite"):
        spatial.com([0.0, np.nan, 0.0, 0.0])


# ---------------------------------------------------------------- the system (C built-in)
def test_planar_chain_system_equals_pendulum_chain_in_relative_angles():
    """q_abs = T q_rel with T the lower-triangular ones: M_rel = T^T M_abs T and
    V_rel(q) = V_abs(T q), to 1e-12."""
    ms, ls = [1.0, 2.0, 0.5, 1.5], [1.0, 0.7, 1.3, 0.4]
    sys = chain_tree(ms, ls).system()
    ref = sp.systems.pendulum_chain(4, m=ms, l=ls, g=G)
    T = np.tril(np.ones((4, 4)))
    rng = np.random.default_rng(5)
    for _ in range(5):
        q = rng.uniform(-3, 3, 4)
        M = sys.mass(q)
        Mref = T.T @ ref.mass(T @ q) @ T
        assert np.max(np.abs(M - Mref)) <= 1e-12 * np.max(np.abs(Mref))
        assert abs(sys.potential(q) - ref.potential(T @ q)) <= 1e-12 * abs(ref.potential(T @ q))


def test_system_mass_matrix_and_potential_from_the_links_jacobians(spatial):
    """M = sum over the links (not the merged bodies) of m J_c^T J_c + J_w^T R I R^T J_w and
    V = -sum m g . x_c, from the public kinematics (checked above against differences)."""
    sys = spatial.system()
    rng = np.random.default_rng(9)
    for _ in range(4):
        q = rng.uniform(-2, 2, spatial.n)
        M, V = np.zeros((spatial.n, spatial.n)), 0.0
        for name in spatial.links[1:]:
            b = spatial.body(name)
            R, _ = spatial.link_pose(name, q)
            Jv = spatial.point_jacobian(name, q, b.com)
            Jw = spatial.frame_jacobian(name, q)[:3]
            M += b.mass * Jv.T @ Jv + Jw.T @ R @ b.inertia @ R.T @ Jw
            V -= b.mass * spatial.gravity @ spatial.point(name, q, b.com)
        assert np.allclose(sys.mass(q), M, rtol=0, atol=1e-12 * np.max(np.abs(M)))
        assert sys.potential(q) == pytest.approx(V, rel=1e-12, abs=1e-12)
        assert sys.potential(q) == pytest.approx(-spatial.mass * spatial.gravity
                                                 @ spatial.com(q), rel=1e-12, abs=1e-12)


def test_system_derivatives_check(spatial):
    """The C built-in's analytic derivatives against finite differences of its M and V."""
    sys = spatial.system()
    errs = sys.check_derivatives(np.array([0.3, -0.2, 1.1, 0.6]))
    assert all(e is None or e < 1e-6 for e in errs.values())


def test_system_attributes_and_name(spatial):
    sys = spatial.system()
    assert isinstance(sys, mb.TreeSystem) and isinstance(sys, sp.System)
    assert sys.builtin == "tree" and sys.name == "spatial"
    assert sys.tree is spatial and sys.coordinates == spatial.coordinates == (
        "shoulder", "slider", "wrist", "branch")
    assert sys.n == 4 and sys.n_constraints == 0 and sys.force is None
    assert "'spatial'" in repr(sys) and "shoulder, slider, wrist, branch" in repr(sys)
    bodies = [mb.Body("root"), mb.Body("a", mass=1.0, com=(0, 0, -1))]
    anonymous = mb.Tree(bodies, [mb.Joint("j", "revolute", "root", "a", axis=(0, 1, 0))])
    assert anonymous.system().name == "tree"


def test_tree_without_movable_joints_has_no_system():
    tree = mb.Tree(_b("root", "a"), [mb.Joint("f", "fixed", "root", "a")])
    assert tree.n == 0 and tree.coordinates == ()
    with pytest.raises(ValueError, match=r"no movable joint"):
        tree.system()


def test_pickle_round_trip(spatial):
    sys = spatial.system(joint_damping=True)
    back = pickle.loads(pickle.dumps(sys))
    assert type(back) is mb.TreeSystem
    assert back.coordinates == sys.coordinates and back.name == sys.name
    q = np.array([0.1, 0.2, -0.3, 0.4])
    assert np.array_equal(back.mass(q), sys.mass(q))
    assert back.potential(q) == sys.potential(q)
    tree = pickle.loads(pickle.dumps(spatial))
    assert np.array_equal(tree.flat_parameters(), spatial.flat_parameters())


def test_joint_damping_only_when_asked():
    bodies = [mb.Body("root"), mb.Body("a", mass=1.0, com=(0, 0, -1)),
              mb.Body("b", mass=1.0, com=(0, 0, -1))]
    joints = [mb.Joint("j0", "revolute", "root", "a", axis=(0, 1, 0), damping=0.5),
              mb.Joint("j1", "revolute", "a", "b", xyz=(0, 0, -1), axis=(0, 1, 0),
                       damping=0.2)]
    tree = mb.Tree(bodies, joints)
    assert tree.system().force is None
    sys = tree.system(joint_damping=True)
    assert np.array_equal(sys.force.damping, np.diag([0.5, 0.2]))
    # energy falls at the rate qdot^T D qdot: a damped run loses energy, an undamped one not
    q0, p0 = np.array([0.5, -0.3]), np.zeros(2)
    e = [sp.integrate(s, q0, p0, h=0.01, n_steps=300).energy for s in (tree.system(), sys)]
    assert abs(e[0][-1] - e[0][0]) < 1e-6 * abs(e[0][0])
    assert e[1][-1] < e[1][0] - 0.01


def test_mimic_constraint_system():
    bodies = [mb.Body("root"), mb.Body("a", mass=1.0, com=(0, 0, -1)),
              mb.Body("b", mass=1.0, com=(0, 0, -1))]
    joints = [mb.Joint("j0", "revolute", "root", "a", axis=(0, 1, 0)),
              mb.Joint("j1", "revolute", "a", "b", xyz=(0, 0, -1), axis=(0, 1, 0),
                       mimic=("j0", 0.5, 0.1))]
    tree = mb.Tree(bodies, joints)
    assert tree.system().n_constraints == 0
    sys = tree.system(mimic="constraint")
    assert sys.n_constraints == 1 and sys.mimic == "constraint"
    q = np.array([0.4, 0.9])
    assert np.allclose(sys.constraint(q), [0.9 - 0.5 * 0.4 - 0.1], atol=1e-15)
    assert np.allclose(sys.constraint_jac(q), [[-0.5, 1.0]], atol=1e-15)
    # a run keeps q1 = 0.5 q0 + 0.1
    traj = sp.integrate(sys, [0.4, 0.3], [0.0, 0.0], h=0.01, n_steps=200)
    assert np.max(np.abs(traj.q[:, 1] - 0.5 * traj.q[:, 0] - 0.1)) < 1e-10
    back = pickle.loads(pickle.dumps(sys))
    assert back.n_constraints == 1


def test_system_argument_checks():
    tree = chain_tree([1.0], [1.0])
    with pytest.raises(ValueError, match=r'mimic must be "independent"'):
        tree.system(mimic="yes")
    with pytest.raises(TypeError, match=r"joint_damping must be True or False"):
        tree.system(joint_damping="yes")
