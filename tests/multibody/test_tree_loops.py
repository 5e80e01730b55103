"""Closed kinematic loops on a rigid-body tree (issue 49): the C built-in "tree" with holonomic
constraints given as Python callables (``TreeSystem.with_constraints``, ``loop_closure``).

The planar four-bar as a tree (revolute joints about y, rods of inertia m l^2/12 about their
centres, gravity along -z; the tree's relative angles turn the other way from the four-bar's
absolute ones: theta = S q with S = -(lower-triangular ones)) against the built-in
``systems.four_bar``:

- made as a tree that branches at the ground (crank and coupler from O, the rocker from D) and
  closed coupler end = rocker end, its Lagrangian is the four-bar's exactly (M = S^T M_abs S,
  same V), so the runs agree to rounding for any h (measured 6e-14 with simpson and lobatto5,
  h = 0.01 over 1 s; asserted 1e-9, p_rel = S^T p_abs);
- made as the chain crank-coupler-rocker from O with the rocker's far end pinned at (d, 0, 0),
  its Lagrangian agrees with the four-bar's only on the constraint manifold (the rocker hangs
  from B, not from D): the discrete runs differ by the schemes' error (positions: lobatto5
  5e-11 at h = 0.01, asserted 1e-9; simpson 1e-5 at h = 0.01, falling at order 4: fitted
  between 3.7 and 4.3).

Then: g stays at rounding (< 1e-10), the energy error of the variational schemes stays bounded
at the scheme's order (simpson: no drift over 5 s, order 4 in h), mimic rows and loop rows
together, exact second derivatives of ``loop_closure`` on a 3-D tree with a prismatic joint,
the refusal of a built-in with constraints of its own, the GIL (``nogil``) and
``integrate_many``'s threads, a raising callback, reference counts, and pickling.
"""
import gc
import pickle
import sys

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core, multibody as mb
from support import cbuild
from support.models import fitted_order

M1, M2, M3, L1, L2, L3, D, G = 0.3, 1.0, 0.8, 0.3, 1.0, 0.8, 1.0, 9.81
Y = (0.0, 1.0, 0.0)
H, STEPS = 0.01, 100            # 1 s
S_CHAIN = -np.tril(np.ones((3, 3)))
S_BRANCH = -np.array([[1.0, 0, 0], [1, 1, 0], [0, 0, 1]])


def rod(name, m, l, sign=1.0):
    """A uniform rod along the link frame's x axis (from the origin to sign * l)."""
    return mb.Body(name, mass=m, com=(sign * l / 2, 0.0, 0.0),
                   inertia=np.diag([0.0, m * l * l / 12, m * l * l / 12]))


def chain_tree():
    """Crank, coupler, rocker in a chain from O; the rocker points back (-x) to D."""
    return mb.Tree([mb.Body("ground"), rod("crank", M1, L1), rod("coupler", M2, L2),
                    rod("rocker", M3, L3, -1.0)],
                   [mb.Joint("j1", "revolute", "ground", "crank", axis=Y),
                    mb.Joint("j2", "revolute", "crank", "coupler", xyz=(L1, 0, 0), axis=Y),
                    mb.Joint("j3", "revolute", "coupler", "rocker", xyz=(L2, 0, 0), axis=Y)],
                   gravity=(0, 0, -G), name="four_bar_chain")


def branch_tree():
    """Crank and coupler from O, the rocker from D: the four-bar's own Lagrangian."""
    return mb.Tree([mb.Body("ground"), rod("crank", M1, L1), rod("coupler", M2, L2),
                    rod("rocker", M3, L3)],
                   [mb.Joint("j1", "revolute", "ground", "crank", axis=Y),
                    mb.Joint("j2", "revolute", "crank", "coupler", xyz=(L1, 0, 0), axis=Y),
                    mb.Joint("j3", "revolute", "ground", "rocker", xyz=(D, 0, 0), axis=Y)],
                   gravity=(0, 0, -G), name="four_bar_branch")


def chain_system():
    s = chain_tree().system()
    return s.with_constraints(s.loop_closure("rocker", (-L3, 0, 0), None, (D, 0, 0), axes="xz"))


def branch_system():
    s = branch_tree().system()
    return s.with_constraints(s.loop_closure("coupler", (L2, 0, 0), "rocker", (L3, 0, 0),
                                             axes="xz"))


@pytest.fixture(scope="module")
def four_bar():
    return sp.systems.four_bar(M1, M2, M3, L1, L2, L3, D, G)


@pytest.fixture(scope="module")
def start(four_bar):
    """A consistent moving state of the four-bar (absolute angles): crank at 1 rad, 2 rad/s."""
    q = four_bar.project([1.0, 0.4, 1.3])
    return four_bar.project(q, qdot=[2.0, 0.0, 0.0])


def tree_start(system, S, q_abs, p_abs):
    """The tree's consistent state of the four-bar's: q = S^-1 theta and the same velocity
    (p = M qdot; = S^T p_abs where the Lagrangians agree off the manifold too)."""
    q = np.linalg.solve(S, q_abs)
    v = np.linalg.solve(S, np.linalg.solve(sp.systems.four_bar(M1, M2, M3, L1, L2, L3, D, G)
                                           .mass(q_abs), p_abs))
    return system.project(q, qdot=v)


def max_g(system, Q):
    return max(float(np.max(np.abs(system.constraint(q)))) for q in Q)


# ---------------------------------------------------------------- the four-bar
def test_the_systems():
    s = branch_system()
    assert s.n_constraints == 2 and s.builtin == "tree" and not s.nogil
    assert chain_tree().system().nogil              # without Python constraints: GIL released
    assert "2 loop constraint(s)" in repr(s)
    q = np.array([0.3, -0.2, 0.9])
    fb = sp.systems.four_bar(M1, M2, M3, L1, L2, L3, D, G)
    np.testing.assert_allclose(s.mass(q), S_BRANCH.T @ fb.mass(S_BRANCH @ q) @ S_BRANCH,
                               atol=1e-15)
    assert abs(s.potential(q) - fb.potential(S_BRANCH @ q)) < 1e-14
    # the closure is the four-bar's loop up to the mirror: the same manifold
    for sysm, S in ((s, S_BRANCH), (chain_system(), S_CHAIN)):
        qc = sysm.project(np.linalg.solve(S, [1.0, 0.4, 1.3]))
        assert np.max(np.abs(fb.constraint(S @ qc))) < 1e-14


@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
def test_branched_tree_is_the_four_bar(four_bar, start, method):
    s = branch_system()
    q0, p0 = tree_start(s, S_BRANCH, *start)
    np.testing.assert_allclose(p0, S_BRANCH.T @ start[1], atol=1e-13)
    ta = sp.integrate(four_bar, *start, H, STEPS, method=method)
    tr = sp.integrate(s, q0, p0, H, STEPS, method=method)
    assert np.max(np.abs(tr.q @ S_BRANCH.T - ta.q)) < 1e-9        # measured 6e-14
    assert np.max(np.abs(tr.p - ta.p @ S_BRANCH)) < 1e-9
    assert max_g(s, tr.q) < 1e-10
    # the multipliers: the same pin force, the rows mirrored (x, z against the four-bar's x, y:
    # g_tree = (x_B - x_B', z_B - z_B') for the coupler's and the rocker's end B, B')
    assert tr.multipliers.shape == ta.multipliers.shape


@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
def test_chain_tree_converges_to_the_four_bar(four_bar, start, method):
    s = chain_system()
    errs = []
    for h in (H, H / 2):
        q0, p0 = tree_start(s, S_CHAIN, *start)
        ta = sp.integrate(four_bar, *start, h, round(1 / h), method=method)
        tr = sp.integrate(s, q0, p0, h, round(1 / h), method=method)
        assert max_g(s, tr.q) < 1e-10
        errs.append(float(np.max(np.abs(tr.q @ S_CHAIN.T - ta.q))))
        if method == "lobatto5":
            assert errs[-1] < 1e-9                                    # 5e-11, 2e-13
            break
    if method == "simpson":
        assert 3.7 < fitted_order([H, H / 2], errs) < 4.3              # 9.6e-6, 6.1e-7


def test_energy_of_the_loop(start):
    """Variational: the energy error is bounded (no drift over 5 s) and of order 4 (simpson);
    lobatto5 keeps it at 1e-9."""
    s = branch_system()
    q0, p0 = tree_start(s, S_BRANCH, *start)
    H0 = s.energy(q0, p0)
    errs = []
    for h in (0.02, 0.01):
        t = sp.integrate(s, q0, p0, h, round(5 / h), method="simpson")
        e = np.abs(s.energy(t.q, t.p) - H0)
        half = len(e) // 2
        assert e[half:].max() < 1.5 * e[:half].max()                 # no drift
        errs.append(e.max())
    assert 3.5 < fitted_order([0.02, 0.01], errs) < 4.5
    t = sp.integrate(s, q0, p0, H, STEPS, method="lobatto5")
    assert np.max(np.abs(s.energy(t.q, t.p) - H0)) < 1e-9


# ---------------------------------------------------------------- the closure's derivatives
def spatial_tree():
    """A 3-D chain with skew axes, offsets and a prismatic joint, and a side branch."""
    b = [mb.Body("base"), mb.Body("a", 1.0, (0.1, 0.2, 0.3), np.diag([0.1, 0.2, 0.15])),
         mb.Body("b", 0.7, (0.3, -0.1, 0.0), np.diag([0.05, 0.06, 0.07])),
         mb.Body("c", 0.5, (0.0, 0.1, 0.2), np.diag([0.02, 0.03, 0.04])),
         mb.Body("e", 0.4, (0.2, 0.0, 0.1), np.diag([0.02, 0.02, 0.03]))]
    j = [mb.Joint("ja", "revolute", "base", "a", xyz=(0, 0, 0.2), axis=(0, 0, 1)),
         mb.Joint("jb", "revolute", "a", "b", xyz=(0.3, 0.1, 0), rpy=(0.2, -0.3, 0.5),
                  axis=(1, 1, 0)),
         mb.Joint("jc", "prismatic", "b", "c", xyz=(0.2, 0, 0.1), axis=(0.3, 0, 1)),
         mb.Joint("je", "revolute", "base", "e", xyz=(0.5, 0, 0), axis=(0, 1, 0))]
    return mb.Tree(b, j)


def test_loop_closure_derivatives_are_exact():
    s = spatial_tree().system()
    first = s.loop_closure("c", (0.1, -0.2, 0.3), "e", (0.2, 0.1, 0.0))
    lc = first + s.loop_closure("b", (0.1, 0.0, 0.0), None, (0.3, 0.2, 0.1), axes=[2])
    assert lc.n_constraints == 4
    q = np.array([0.4, -0.7, 0.25, 1.1])
    g, Gf, Sf = lc
    Gq, Hq = Gf(q), Sf(q)
    assert g(q).shape == (4,) and Gq.shape == (4, 4) and Hq.shape == (4, 4, 4)
    e = 1e-6
    for k in range(4):
        dq = np.zeros(4)
        dq[k] = e
        np.testing.assert_allclose((g(q + dq) - g(q - dq)) / (2 * e), Gq[:, k], atol=1e-8)
        np.testing.assert_allclose((Gf(q + dq) - Gf(q - dq)) / (2 * e), Hq[:, :, k], atol=1e-8)
    np.testing.assert_array_equal(Hq, np.transpose(Hq, (0, 2, 1)))
    # the system's own check, S = sum mu_k hess g_k through the binding
    sc = s.with_constraints(first)                  # (4 rows would leave no freedom)
    mu = np.array([0.3, -1.2, 0.7])
    np.testing.assert_allclose(sc.constraint_hess(q, mu), np.einsum("k,kij->ij", mu, Hq[:3]),
                               atol=1e-14)
    assert sc.check_constraint_derivatives(q, mu)["constraint_hess"] < 1e-8


def test_without_second_derivatives(four_bar, start):
    """g and G only: the core differences G^T mu; lobatto5 (internal nodes) still gives the
    four-bar's run."""
    s0 = branch_tree().system()
    lc = s0.loop_closure("coupler", (L2, 0, 0), "rocker", (L3, 0, 0), axes="xz")
    s = s0.with_constraints(lc.constraint, lc.constraint_jac)
    assert s.n_constraints is None or s.n_constraints == 2
    q0, p0 = tree_start(s, S_BRANCH, *start)
    ta = sp.integrate(four_bar, *start, H, 50, method="lobatto5")
    tr = sp.integrate(s, q0, p0, H, 50, method="lobatto5")
    assert np.max(np.abs(tr.q @ S_BRANCH.T - ta.q)) < 1e-9


def test_mimic_rows_and_loops_combine():
    """mimic="constraint" with a loop: the mimic rows first (Python-side, with the loop's),
    then the loop's; the run keeps all of them."""
    t = chain_tree()
    bodies = list(t.bodies) + [rod("flag", 0.2, 0.3)]
    joints = list(t.joints) + [mb.Joint("jf", "revolute", "crank", "flag", xyz=(L1 / 2, 0, 0),
                                        axis=Y, mimic=("j2", 0.5, 0.1))]
    tree = mb.Tree(bodies, joints, gravity=(0, 0, -G))
    s0 = tree.system(mimic="constraint")
    assert s0.n_constraints == 1
    s = s0.with_constraints(s0.loop_closure("rocker", (-L3, 0, 0), None, (D, 0, 0), axes="xz"))
    assert s.n_constraints == 3 and "1 mimic constraint(s), 2 loop" in repr(s)
    jf, j2 = tree.coordinates.index("jf"), tree.coordinates.index("j2")
    q = np.zeros(4)
    q[[0, 1, 2]] = [-1.0, -0.4, -1.3]
    q0, p0 = s.project(q, qdot=np.array([-2.0, 0.0, 0.0, 0.0]))
    g = s.constraint(q0)
    assert abs(q0[jf] - 0.5 * q0[j2] - 0.1) < 1e-14 and np.max(np.abs(g)) < 1e-14
    tr = sp.integrate(s, q0, p0, H, 50, method="lobatto4")
    assert max_g(s, tr.q) < 1e-10
    E = s.energy(tr.q, tr.p)
    assert np.ptp(E) < 1e-6                                         # 1.0e-7
    # the C tree's own mimic rows refuse Python constraints: the binding's message
    with pytest.raises(TypeError, match="built-in system 'tree' carries its own 1 holonomic"):
        sp.System._from_builtin("tree", 4, tree.flat_parameters(mimic="constraint"), {},
                                constraints=dict(constraint=np.sin, constraint_jac=np.cos))


# ---------------------------------------------------------------- the binding
def test_builtin_with_its_own_constraints_refuses(four_bar):
    par = four_bar._flat
    with pytest.raises(TypeError, match="'four_bar' carries its own 2 holonomic constraint"):
        sp.System._from_builtin("four_bar", 3, par, four_bar.params,
                                constraints=dict(constraint=loop_g, constraint_jac=loop_G))
    with pytest.raises(TypeError, match="carries its own"):
        _core.System(3, builtin="four_bar", params=par, constraint=loop_g,
                     constraint_jac=loop_G)


def test_parameter_sensitivities_refuse_python_constraints(start):
    """wrt= and sensitivity.gradient(params=) compile the model from SymPy, which the loop's
    Python callables are not: a NotImplementedError that says so (it was a ValueError about
    the augmented system's coordinates)."""
    s = branch_system()
    q0, p0 = tree_start(s, S_BRANCH, *start)
    with pytest.raises(NotImplementedError, match="Python constraint callables"):
        sp.integrate(s, q0, p0, 0.01, 3, tangent=True, wrt=["mass[1]"])
    with pytest.raises(NotImplementedError, match="Python constraint callables"):
        sp.sensitivity.gradient(s, q0, p0, 0.01, 3,
                                {"terminal": (lambda q, p: q.sum(),
                                              lambda q, p: (np.ones(3), np.zeros(3)))},
                                wrt=("params",), params=["mass[1]"])


def test_plain_builtin_takes_constraints():
    """A built-in without constraints (here a pendulum chain) takes callables: the GIL kept."""
    pc = sp.systems.pendulum_chain(2)
    s = sp.System._from_builtin(pc.builtin, pc.n, pc._flat, pc.params,
                                constraints=dict(constraint=lambda q: q[0] - q[1],
                                                 constraint_jac=lambda q: np.array([1.0, -1.0])))
    assert pc.nogil and not s.nogil and s.n_constraints is None
    assert s.constraint(np.array([0.3, 0.1])) == pytest.approx([0.2])
    assert s.n_constraints == 1 and "with Python constraint callables" in repr(s)


class Raising:
    """A loop closure whose constraint_jac raises at its k-th call."""

    def __init__(self, lc, k):
        self.lc, self.k, self.calls = lc, k, 0

    def g(self, q):
        return self.lc.constraint(q)

    def G(self, q):
        self.calls += 1
        if self.calls == self.k:
            raise ArithmeticError("the loop's Jacobian gave up")
        return self.lc.constraint_jac(q)


def test_raising_callback_names_the_step(start):
    s0 = branch_tree().system()
    r = Raising(s0.loop_closure("coupler", (L2, 0, 0), "rocker", (L3, 0, 0), axes="xz"), 0)
    s = s0.with_constraints(r.g, r.G, n_constraints=2)
    q0, p0 = tree_start(s, S_BRANCH, *start)
    r.calls, r.k = 0, 60
    with pytest.raises(ArithmeticError, match="gave up") as info:
        sp.integrate(s, q0, p0, H, STEPS, method="simpson", check=False)
    notes = " ".join(getattr(info.value, "__notes__", []))
    assert "at step" in notes and "symplectic.integrate" in notes
    r.k = -1                                       # and the system still runs afterwards
    assert sp.integrate(s, q0, p0, H, 5, method="simpson").q.shape == (6, 3)


def test_integrate_many_threads(start):
    s = branch_system()
    q0, p0 = tree_start(s, S_BRANCH, *start)
    Q0 = np.array([q0, q0])
    P0 = np.array([p0, 0.5 * p0])
    ens = sp.integrate_many(s, Q0, P0, H, 30, method="simpson", threads=4)
    for k in range(2):
        one = sp.integrate(s, Q0[k], P0[k], H, 30, method="simpson")
        np.testing.assert_array_equal(ens.q[k], one.q)


def test_reference_counts():
    """The System holds one reference to each callable while it lives and none after."""
    fs = (loop_g, loop_G, loop_S)
    before = [sys.getrefcount(f) for f in fs]
    base = branch_tree().system()
    for _ in range(50):
        s = base.with_constraints(loop_g, loop_G, loop_S, 2)
        s.constraint_hess(np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0]))
        del s
    gc.collect()
    assert [sys.getrefcount(f) for f in fs] == before


# module-level callables: they pickle (by name)
def loop_g(q):
    return _LOOP.constraint(q)


def loop_G(q):
    return _LOOP.constraint_jac(q)


def loop_S(q):
    return _LOOP.constraint_hess(q)


_LOOP = mb.TreeSystem._of_tree(branch_tree()).loop_closure(
    "coupler", (L2, 0, 0), "rocker", (L3, 0, 0), axes="xz")


@pytest.mark.parametrize("how", ["closure", "functions"])
def test_pickle_round_trip(start, how):
    base = branch_tree().system()
    s = (branch_system() if how == "closure"
         else base.with_constraints(loop_g, loop_G, loop_S, n_constraints=2))
    s2 = pickle.loads(pickle.dumps(s))
    assert isinstance(s2, mb.TreeSystem) and s2.n_constraints == 2 and not s2.nogil
    assert s2.tree.coordinates == s.tree.coordinates
    q0, p0 = tree_start(s, S_BRANCH, *start)
    a = sp.integrate(s, q0, p0, H, 20, method="simpson")
    b = sp.integrate(s2, q0, p0, H, 20, method="simpson")
    np.testing.assert_array_equal(a.q, b.q)
    # a plain System of a built-in with constraints pickles too
    p = sp.System._from_builtin("tree", 3, base._flat, base.params,
                                constraints=dict(constraint=loop_g, constraint_jac=loop_G))
    p2 = pickle.loads(pickle.dumps(p))
    np.testing.assert_array_equal(p2.constraint(q0), p.constraint(q0))


def test_lambdas_do_not_pickle():
    base = branch_tree().system()
    s = base.with_constraints(lambda q: _LOOP.constraint(q), loop_G)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(s)


def test_argument_errors():
    s = branch_tree().system()
    lc = s.loop_closure("coupler", (L2, 0, 0), "rocker", (L3, 0, 0), axes="xz")
    with pytest.raises(TypeError, match="give it alone"):
        s.with_constraints(lc, loop_G)
    with pytest.raises(ValueError, match="another tree"):
        chain_tree().system().with_constraints(lc)
    with pytest.raises(TypeError, match="constraint_jac is required"):
        s.with_constraints(loop_g)
    with pytest.raises(KeyError, match="no link 'nope'"):
        s.loop_closure("nope", (0, 0, 0))
    with pytest.raises(ValueError, match="both points are on link 'rocker'"):
        s.loop_closure("rocker", (0, 0, 0), "rocker", (1, 0, 0))
    with pytest.raises(ValueError, match="axes"):
        s.loop_closure("rocker", (0, 0, 0), axes="xw")
    with pytest.raises(ValueError, match="repeat"):
        s.loop_closure("rocker", (0, 0, 0), axes="xx")
    with pytest.raises(ValueError, match="3 finite numbers"):
        s.loop_closure("rocker", (0, 0))
    with pytest.raises(ValueError, match="at most n - 1"):
        s.with_constraints(s.loop_closure("rocker", (L3, 0, 0)))     # 3 rows on n = 3


# ---------------------------------------------------------------- a compiled constraint
C_CIRCLE = """
int circle(const double *q, const double *mu, unsigned need, double *g, double *G, double *S,
           void *ud)
{
    const double l = *(const double *)ud;
    if (need & 1) g[0] = 0.5 * (q[0] * q[0] + q[1] * q[1] - l * l);
    if (need & 2) { G[0] = q[0]; G[1] = q[1]; }
    if (need & 4) { S[0] = S[3] = mu[0]; S[1] = S[2] = 0.0; }
    return 0;
}
"""


def test_compiled_constraint_on_a_builtin(tmp_path):
    """The binding's compiled path on a built-in: no Python in the loop, the GIL released."""
    lib = cbuild.shared_or_skip(C_CIRCLE, tmp_path, "circle")
    tree = mb.Tree([mb.Body("base"), mb.Body("slide"), mb.Body("bob", mass=1.0)],
                   [mb.Joint("x", "prismatic", "base", "slide", axis=(1, 0, 0)),
                    mb.Joint("z", "prismatic", "slide", "bob", axis=(0, 0, 1))])
    ell = np.array([0.7])
    addr = ctypes_address(lib.circle)
    s = _core.System(2, builtin="tree", params=tree.flat_parameters(), constraint=addr,
                     constraint_data=ell.ctypes.data, n_constraints=1)
    assert s.nogil and s.n_constraints == 1
    g, Gq, _ = s._constraint(np.array([0.3, -0.4]), None, 3)
    np.testing.assert_allclose(g, [0.5 * (0.25 - 0.49)])
    np.testing.assert_allclose(Gq, [[0.3, -0.4]])


def ctypes_address(fn):
    import ctypes
    return ctypes.cast(fn, ctypes.c_void_p).value


def test_save_and_load_do_not_drop_the_loop_silently(start, tmp_path):
    """A loop-closed tree's run saved and loaded: its arrays come back, but the system is not
    made again from the built-in's parameters alone (that would be the open tree, without
    the 2 loop constraints the multipliers belong to): a RuntimeWarning says so and the
    system is attached with load(path, system=S)."""
    s = branch_system()
    q0 = s.project(np.linalg.solve(S_BRANCH, [1.0, 0.4, 1.3]))
    tr = sp.integrate(s, q0, np.zeros(3), 0.01, 20, method="simpson")
    path = tmp_path / "loop.npz"
    tr.save(path)
    with pytest.warns(RuntimeWarning, match=r"constraints given as Python callables \(2\), which are not saved"):
        back = sp.load(path)
    assert back.system is None and np.array_equal(back.q, tr.q)
    again = sp.load(path, system=s)
    assert again.system is s and np.array_equal(again.multipliers, tr.multipliers)
