"""The C built-in "tree" (csrc/core/sym_sys_tree.c) on its own, made from flat parameters by
``System._from_builtin("tree", n, flat, {})`` (the layout of /work/notes/tree_contract.md).

Expected values come from an independent NumPy model written here from the contract: poses by
4 x 4 homogeneous transforms (joint rotations from unit quaternions, joint frames from
rpy = Rz Ry Rx), the centre-of-mass velocity Jacobians Jv_i and angular Jacobians Jw_i of the
bodies (geometric: a revolute ancestor k contributes z_k x (x_ci - o_k) and z_k, a prismatic one
z_k and 0), M = sum_i m_i Jv_i^T Jv_i + Jw_i^T I_i^w Jw_i and V = -sum_i m_i g_w . x_ci -- never
from the C code's spatial-vector algebra.  The derivatives A, H, dV and d2V are checked
against fourth-order central differences (of this model's M g and V, and of the built-in's
own gradients once those agree with the model) and by System.check_derivatives.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic._model._system import System

G_W = (0.0, 0.0, -9.81)


# ---------------------------------------------------------------- the flat parameters
def rpy_matrix(r, p, y):
    """URDF's fixed-axis roll, pitch, yaw: Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp_, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p),
                               math.cos(y), math.sin(y))
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    Ry = np.array([[cp, 0.0, sp_], [0.0, 1.0, 0.0], [-sp_, 0.0, cp]])
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


def joint(parent, kind, axis, rpy=(0, 0, 0), xyz=(0, 0, 0), m=1.0, com=(0, 0, 0), inertia=None):
    """One movable joint and its child body (kind "revolute" or "prismatic")."""
    axis = np.asarray(axis, float)
    inertia = np.diag([0.01, 0.02, 0.03]) if inertia is None else np.asarray(inertia, float)
    return dict(parent=parent, kind=kind, axis=axis / np.linalg.norm(axis),
                R=rpy_matrix(*rpy), xyz=np.asarray(xyz, float), m=float(m),
                com=np.asarray(com, float), inertia=inertia)


def flat_params(joints, gravity=G_W, mimic=()):
    """The contract's layout: g_w, 27 values per joint, m_c, 4 per mimic constraint."""
    out = list(gravity)
    for J in joints:
        I = J["inertia"]
        out += [J["parent"], {"revolute": 0, "prismatic": 1}[J["kind"]], *J["axis"],
                *J["R"].ravel(), *J["xyz"], J["m"], *J["com"],
                I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]]
    out.append(len(mimic))
    for c in mimic:
        out += list(c)
    return np.array(out, float)


def make(joints, gravity=G_W, mimic=()):
    return System._from_builtin("tree", len(joints), flat_params(joints, gravity, mimic), {})


# ---------------------------------------------------------------- the independent model
def quat_rotation(axis, angle):
    """The rotation by `angle` about the unit `axis`, from its unit quaternion."""
    w = math.cos(angle / 2)
    x, y, z = math.sin(angle / 2) * np.asarray(axis)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def homogeneous(R=np.eye(3), p=(0, 0, 0)):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def model(joints, q, gravity=G_W):
    """(M, V) at q from the bodies' poses and Jacobians."""
    n = len(joints)
    poses, axes = [], []       # body frames T_j; joint j's world axis z_j and origin o_j
    for j, J in enumerate(joints):
        T_parent = poses[J["parent"]] if J["parent"] >= 0 else np.eye(4)
        T_joint = T_parent @ homogeneous(J["R"], J["xyz"])
        if J["kind"] == "revolute":
            motion = homogeneous(quat_rotation(J["axis"], q[j]))
        else:
            motion = homogeneous(p=q[j] * J["axis"])
        poses.append(T_joint @ motion)
        axes.append((T_joint[:3, :3] @ J["axis"], T_joint[:3, 3]))
    M, V = np.zeros((n, n)), 0.0
    for i, J in enumerate(joints):
        R, x = poses[i][:3, :3], poses[i][:3, :3] @ J["com"] + poses[i][:3, 3]
        Jv, Jw = np.zeros((3, n)), np.zeros((3, n))
        k = i
        while k >= 0:                               # the joints that move body i
            z, o = axes[k]
            if joints[k]["kind"] == "revolute":
                Jw[:, k], Jv[:, k] = z, np.cross(z, x - o)
            else:
                Jv[:, k] = z
            k = joints[k]["parent"]
        M += J["m"] * Jv.T @ Jv + Jw.T @ (R @ J["inertia"] @ R.T) @ Jw
        V -= J["m"] * np.dot(gravity, x)
    return M, V


def diff(f, q, h=1e-3):
    """d f/dq_c (stacked on the last axis) by the five-point central difference."""
    cols = []
    for c in range(len(q)):
        e = np.zeros(len(q))
        e[c] = h
        cols.append((-f(q + 2 * e) + 8 * f(q + e) - 8 * f(q - e) + f(q - 2 * e)) / (12 * h))
    return np.stack(cols, axis=-1)


def rel(a, b):
    """max |a - b| relative to the larger of 1 and max |b|."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))


# ---------------------------------------------------------------- trees
def random_inertia(rng):
    """A random symmetric positive definite (full) inertia tensor."""
    A = rng.uniform(-0.2, 0.2, (3, 3))
    return A @ A.T + 0.01 * np.eye(3)


def random_tree(rng, n, shape="tree", p_prismatic=0.3):
    """n joints: a chain (parent j - 1), a star-like tree or a random tree, random axes,
    rotated joint frames, offsets, masses, centres of mass and full inertias."""
    joints = []
    for j in range(n):
        if shape == "chain" or j == 0:
            parent = j - 1
        else:
            parent = int(rng.integers(-1, j))
        kind = "prismatic" if rng.uniform() < p_prismatic else "revolute"
        joints.append(joint(parent, kind, rng.normal(size=3), rng.uniform(-math.pi, math.pi, 3),
                            rng.uniform(-0.5, 0.5, 3), rng.uniform(0.2, 2.0),
                            rng.uniform(-0.3, 0.3, 3), random_inertia(rng)))
    return joints


def trees():
    """Several random trees (chains, branches, prismatic joints) and two hand-made ones: a
    universal joint (two revolute joints and a massless link between them) and a prismatic
    root."""
    rng = np.random.default_rng(49)
    out = [random_tree(rng, 1), random_tree(rng, 3, "chain"), random_tree(rng, 5),
           random_tree(rng, 7, "chain", 0.5), random_tree(rng, 8),
           random_tree(rng, 6, p_prismatic=0.0)]
    out.append([joint(-1, "revolute", (0, 0, 1), xyz=(0, 0, 0.3), m=0.0, inertia=np.zeros((3, 3))),
                joint(0, "revolute", (0, 1, 0), rpy=(0.1, 0.2, 0.3), m=1.5, com=(0.1, 0, -0.4),
                      inertia=random_inertia(rng)),
                joint(0, "prismatic", (1, 0, 1), rpy=(0.5, 0, 0), xyz=(0.2, 0, 0), m=0.4,
                      inertia=random_inertia(rng))])
    out.append([joint(-1, "prismatic", (0, 1, 1), m=2.0, com=(0.1, 0.2, 0.0)),
                joint(0, "revolute", (1, 0, 0), rpy=(0.0, 1.0, 0.0), xyz=(0.3, 0.0, 0.0), m=0.7,
                      com=(0.0, 0.0, -0.5), inertia=random_inertia(rng))])
    return out


TREES = trees()


# the worked example of the registry row (csrc/core/sym_systems.c's tree_ex, made by these
# formulas): a turntable, a cart on a rail with a pendulum, a branch pendulum
EXAMPLE = [
    joint(-1, "revolute", (0, 0, 1), (0, 0, 0), (0, 0, 0.1), 2.0, (0.25, 0.0, 0.05),
          [[0.02, 0.001, -0.002], [0.001, 0.05, 0.0015], [-0.002, 0.0015, 0.06]]),
    joint(0, "prismatic", (1, 0, 0), (0.3, 0.0, 0.2), (0.4, 0.0, 0.0), 0.7, (0.05, 0.02, -0.01),
          [[0.003, 0.0002, 0.0001], [0.0002, 0.004, -0.0003], [0.0001, -0.0003, 0.005]]),
    joint(1, "revolute", (0, 1, 0), (-0.25, 0.0, 0.1), (0.0, 0.0, -0.05), 1.0, (0.0, 0.02, -0.35),
          [[0.04, -0.001, 0.002], [-0.001, 0.045, 0.003], [0.002, 0.003, 0.01]]),
    joint(0, "revolute", (1, 1, 0), (0.3, -0.2, 0.4), (-0.2, 0.1, 0.05), 0.8, (0.0, 0.05, -0.25),
          [[0.02, 0.0005, -0.001], [0.0005, 0.018, 0.002], [-0.001, 0.002, 0.006]]),
]
EXAMPLE_Q0, EXAMPLE_P0 = [0.3, 0.05, 0.6, -0.5], [0.1, 0.1, 0.0, 0.05]


def states(joints, rng, k=4):
    n = len(joints)
    return [(rng.uniform(-2.5, 2.5, n), rng.uniform(-1.5, 1.5, n)) for _ in range(k)]


# ---------------------------------------------------------------- M and V
@pytest.mark.parametrize("t", range(len(TREES)))
def test_mass_and_potential_equal_the_independent_model(t):
    joints, rng = TREES[t], np.random.default_rng(t)
    system = make(joints)
    assert system.builtin == "tree" and system.n == len(joints) and not system.n_constraints
    for q, _ in states(joints, rng):
        M, V = model(joints, q)
        assert rel(system.mass(q), M) <= 1e-12
        assert abs(system.potential(q) - V) <= 1e-12 * max(1.0, abs(V))
        assert np.array_equal(system.mass(q), system.mass(q).T)


def test_gravity_is_any_world_vector():
    joints, q = TREES[4], np.linspace(-1, 1, len(TREES[4]))
    for g in [(0, 0, 0), (1.0, -2.0, 3.0), (0, 9.81, 0)]:
        system = make(joints, gravity=g)
        assert abs(system.potential(q) - model(joints, q, g)[1]) <= 1e-12 * 10
        assert rel(system.potential_grad(q), diff(lambda x: model(joints, x, g)[1], q)) <= 1e-10


# ---------------------------------------------------------------- A, H, dV, d2V
@pytest.mark.parametrize("t", range(len(TREES)))
def test_derivatives_against_central_differences(t):
    joints, rng = TREES[t], np.random.default_rng(100 + t)
    system = make(joints)
    for q, g in states(joints, rng, 3):
        # A = d(M g)/dq of the model; the gradient of T = 1/2 g^T M g is 1/2 A^T g
        assert rel(system.mass_dir(q, g), diff(lambda x: model(joints, x)[0] @ g, q)) <= 1e-10
        grad_T = diff(lambda x: 0.5 * g @ model(joints, x)[0] @ g, q)
        assert rel(0.5 * system.mass_dir(q, g).T @ g, grad_T) <= 1e-10
        # H = d^2 T/dq^2: differences of the (now checked) exact gradient
        H = system.mass_hess_dir(q, g)
        assert rel(H, diff(lambda x: 0.5 * system.mass_dir(x, g).T @ g, q)) <= 1e-10
        assert np.allclose(H, H.T, rtol=0, atol=1e-13 * max(1.0, np.max(np.abs(H))))
        # dV of the model's V, d2V of the exact dV
        dV = diff(lambda x: np.array(model(joints, x)[1]), q)
        assert rel(system.potential_grad(q), dV) <= 1e-10
        d2V = system.potential_hess(q)
        assert rel(d2V, diff(system.potential_grad, q)) <= 1e-10
        assert np.array_equal(d2V, d2V.T)
        system.check_derivatives(q, g)              # the package's check (raises if wrong)


# ---------------------------------------------------------------- mimic constraints
def test_mimic_constraints():
    joints = TREES[4]                                       # 8 joints
    mimic = [(3, 1, 2.0, 0.1), (6, 0, -0.5, 0.0), (7, 5, 1.0, -0.3)]
    system = make(joints, mimic=mimic)
    plain = make(joints)
    n, m = len(joints), len(mimic)
    assert system.n_constraints == m
    rng = np.random.default_rng(5)
    for q, g in states(joints, rng, 2):
        assert np.array_equal(system.mass(q), plain.mass(q))
        assert np.array_equal(system.mass_hess_dir(q, g), plain.mass_hess_dir(q, g))
        expect = [q[j] - a * q[k] - b for j, k, a, b in mimic]
        assert np.allclose(system.constraint(q), expect, rtol=0, atol=1e-15)
        G = np.zeros((m, n))
        for r, (j, k, a, _) in enumerate(mimic):
            G[r, j], G[r, k] = 1.0, -a
        assert np.array_equal(system.constraint_jac(q), G)
        assert np.array_equal(system.constraint_hess(q, rng.normal(size=m)), np.zeros((n, n)))
        system.check_constraint_derivatives(q)


def test_mimic_constrained_motion_stays_on_the_constraints():
    mimic = [(3, 2, 0.5, 0.2)]                        # the branch pendulum follows the cart's
    system = make(EXAMPLE, mimic=mimic)
    q0 = np.array([0.3, 0.05, 0.6, 0.5])                 # q3 = 0.5 q2 + 0.2
    p0 = np.zeros(4)
    for method, tol in (("simpson", 2e-7), ("lobatto5", 1e-12)):
        tr = sp.integrate(system, q0, p0, 0.01, 200, method)
        assert np.max(np.abs(tr.q[:, 3] - 0.5 * tr.q[:, 2] - 0.2)) < 1e-12
        E = [system.energy(q, p) for q, p in zip(tr.q, tr.p)]
        assert np.max(np.abs(np.array(E) - E[0])) <= tol * abs(E[0]), method


# ---------------------------------------------------------------- the worked example
@pytest.mark.parametrize("method, tol", [("simpson", 2e-7), ("lobatto5", 1e-12)])
def test_worked_example_conserves_energy(method, tol):
    system = make(EXAMPLE)
    assert system.n == 4
    tr = sp.integrate(system, EXAMPLE_Q0, EXAMPLE_P0, 0.01, 200, method)
    E = np.array([system.energy(q, p) for q, p in zip(tr.q, tr.p)])
    assert np.max(np.abs(E - E[0])) <= tol * abs(E[0]), (method, np.max(np.abs(E - E[0])))
    # the motion the registry's row describes: the cart within [-0.14, 0.12] m, the
    # pendulums within 0.6 rad of q = 0
    assert -0.15 < tr.q[:, 1].min() and tr.q[:, 1].max() < 0.13
    assert np.max(np.abs(tr.q[:, 2:])) < 0.61
    # the same motion as the twin made of the independent model's M and V
    twin = sp.System(4, mass=lambda q: model(EXAMPLE, q)[0],
                     potential=lambda q: model(EXAMPLE, q)[1],
                     mass_dir=lambda q, g: system.mass_dir(q, g),
                     potential_grad=lambda q: system.potential_grad(q))
    tw = sp.integrate(twin, EXAMPLE_Q0, EXAMPLE_P0, 0.01, 50, method)
    assert rel(tw.q, tr.q[:51]) <= 1e-10 and rel(tw.p, tr.p[:51]) <= 1e-10


# ---------------------------------------------------------------- bad parameters
def _with(flat, index, value):
    out = np.array(flat, float)
    out[index] = value
    return out


BASE = TREES[2]                                           # 5 joints


def bad_flats():
    """(label, n, flat) that the C check refuses."""
    n, f = len(BASE), flat_params(BASE)
    def k(j):                                        # where joint j starts
        return 3 + 27 * j

    R_bad = _with(f, slice(k(2) + 5, k(2) + 14), np.diag([1.0, 1.0, 1.001]).ravel())
    reflection = _with(f, slice(k(2) + 5, k(2) + 14), np.diag([1.0, 1.0, -1.0]).ravel())
    return [
        ("parent >= j", n, _with(f, k(2), 2.0)),
        ("parent > j", n, _with(f, k(2), 4.0)),
        ("parent < -1", n, _with(f, k(0), -2.0)),
        ("parent not whole", n, _with(f, k(3), 0.5)),
        ("type 2", n, _with(f, k(1) + 1, 2.0)),
        ("type -1", n, _with(f, k(1) + 1, -1.0)),
        ("axis not unit", n, _with(f, slice(k(1) + 2, k(1) + 5), [1.0, 1.0, 0.0])),
        ("axis zero", n, _with(f, slice(k(1) + 2, k(1) + 5), [0.0, 0.0, 0.0])),
        ("R not orthonormal", n, R_bad),
        ("R a reflection", n, reflection),
        ("negative mass", n, _with(f, k(4) + 17, -0.1)),
        ("NaN", n, _with(f, k(1) + 20, np.nan)),
        ("infinite gravity", n, _with(f, 0, np.inf)),
        ("npar short by one", n, f[:-1]),
        ("npar without m_c", n, f[:3 + 27 * n]),
        ("npar long by one", n, np.append(f, 0.0)),
        ("npar of another n", n - 1, f),
        ("npar of another n", n + 1, f),
        ("m_c not whole", n, _with(f, -1, 0.5)),
        ("m_c negative", n, _with(f, -1, -1.0)),
        ("m_c NaN", n, _with(f, -1, np.nan)),
        ("m_c without its rows", n, _with(f, -1, 1.0)),
        ("m_c >= n", n, flat_params(BASE, mimic=[(1, 0, 1.0, 0.0)] * n)),
        ("mimic j == k", n, flat_params(BASE, mimic=[(2, 2, 1.0, 0.0)])),
        ("mimic index >= n", n, flat_params(BASE, mimic=[(1, n, 1.0, 0.0)])),
        ("mimic index < 0", n, flat_params(BASE, mimic=[(-1, 0, 1.0, 0.0)])),
        ("mimic index not whole", n, flat_params(BASE, mimic=[(1.5, 0, 1.0, 0.0)])),
        ("n = 0", 0, f[:4]),
        ("empty", n, np.zeros(0)),
    ]


@pytest.mark.parametrize("label, n, flat", bad_flats(), ids=[b[0] for b in bad_flats()])
def test_bad_parameters_are_refused(label, n, flat):
    with pytest.raises(ValueError):
        System._from_builtin("tree", n, flat, {})


def test_the_check_tolerances():
    """|axis| = 1 and R R^T = 1 to 1e-9: within it accepted (the axis made unit), beyond it
    refused; zero masses are accepted."""
    f, k = flat_params(BASE), 3 + 27
    axis, q = slice(k + 2, k + 5), np.ones(5)
    ok = System._from_builtin("tree", 5, _with(f, axis, BASE[1]["axis"] * (1 + 5e-10)), {})
    assert rel(ok.mass(q), make(BASE).mass(q)) < 1e-9
    with pytest.raises(ValueError):
        System._from_builtin("tree", 5, _with(f, axis, BASE[1]["axis"] * (1 + 5e-9)), {})
    zero = [dict(J, m=0.0) if j == 2 else J for j, J in enumerate(BASE)]
    make(zero)
