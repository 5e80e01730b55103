"""The O(n) Newton linear algebra of the spatial multibody trees
(``linear_solver="tree"`` on a URDF / ``multibody`` system,
csrc/core/sym_galerkin_stree.c) against the dense LU path it replaces.

Expected values come from the dense path (an independent computation: the
assembled n x n M, A, H, hess V of the built-in "tree", the (s-1)n x (s-1)n
Newton matrix and its LU), from the exact kinetic energy 1/2 p^T M^-1 p by a
dense solve in NumPy, and from issue 50's acceptance: the tree step equals
the dense Newton path to 1e-12 per step.
"""
from pathlib import Path

import numpy as np
import pytest

import symplectic as sp
from support.spatial_trees import spatial_urdf
from support.tree_newton import (check_direction, check_mode_reaches_dense,
                                 worst_step_difference)
from symplectic import multibody as mb

DATA = Path(__file__).resolve().parents[1] / "data" / "urdf"

# every implicit Galerkin row
METHODS = ["simpson", "lobatto2", "lobatto3", "lobatto4", "lobatto5", "lobatto6", "lobatto7",
           "midpoint", "gauss2", "gauss3"]
# where "auto" takes the spatial path (SYM_STREE_MIN_N, csrc/core/sym_galerkin_tree.c)
AUTO_FROM = 48


def system_named(name):
    if name == "arm7":
        return mb.from_urdf(DATA / "arm7.urdf")
    if name == "branched":
        return mb.from_urdf(DATA / "branched.urdf")
    if name == "prismatic":
        return mb.from_urdf(DATA / "prismatic.urdf")
    if name == "planar10":   # the pendulum chain in relative angles, a multibody tree
        return mb.pendulum_chain(10, m=np.linspace(2.0, 0.5, 10), l=np.linspace(0.5, 0.2, 10))
    kind, n = name.split("-")
    return mb.from_urdf(spatial_urdf(int(n), branched=kind == "tree"))


def start(n):
    return 0.3 * np.sin(1.3 * np.arange(n) + 0.2), 0.1 * np.cos(np.arange(n))


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["arm7", "branched", "prismatic", "planar10", "chain-12",
                                  "tree-16"])
def test_step_equals_dense_per_step(method, name):
    """From states along a run, one tree step equals one dense step to 1e-12
    (q1 relative to max(|q1|, 1), p1 relative to |p1|), with full and
    per-step Newton."""
    system = system_named(name)
    n = system.n
    q0, p0 = start(n)
    worst_q, worst_p = worst_step_difference(system, q0, p0, 0.005, method, 30, 10)
    assert worst_q <= 1e-12 and worst_p <= 1e-12, (worst_q, worst_p)


@pytest.mark.parametrize("method", ["lobatto5", "gauss3"])
@pytest.mark.parametrize("newton", ["full", "chord", "step", "decoupled", "auto"])
def test_every_newton_mode_reaches_the_dense_root(newton, method):
    """Each Newton mode on the tree path, 30 steps on a branched 24-link
    tree, against full Newton with the dense LU from the same states."""
    system = system_named("tree-24")
    q0, p0 = start(system.n)
    check_mode_reaches_dense(system, q0, p0, 0.005, 30, 6, method, newton)


def test_whole_run_follows_the_dense_run():
    """200 steps of a 20-link spatial chain with lobatto5: the two runs agree
    to rounding (grown by the motion), the energy error is the method's on
    both; with full Newton the same updates but where the stopping rule's
    bound falls between the two paths' rounding (one update, in at most 10 %
    of the steps); with the default (per-step) Newton, whose refactorisation
    rule reads contraction rates where the increments are near rounding, the
    same number of updates to 10 % (measured 517 dense, 491 tree; the
    factorisations 247 and 221)."""
    system = system_named("chain-20")
    q0, p0 = start(system.n)
    kw = dict(method="lobatto5", newton="full")
    a = sp.integrate(system, q0, p0, 0.005, 200, linear_solver="dense", **kw)
    b = sp.integrate(system, q0, p0, 0.005, 200, linear_solver="tree", **kw)
    assert np.abs(b.q - a.q).max() <= 1e-9
    assert np.abs(b.energy - a.energy).max() <= 1e-10 * np.abs(a.energy).max()
    assert np.abs(a.energy - a.energy[0]).max() <= 1e-6 * np.abs(a.energy).max()
    d = np.abs(b.newton_iterations - a.newton_iterations)
    assert d.max() <= 1 and d.sum() <= 0.1 * len(d)
    a = sp.integrate(system, q0, p0, 0.005, 200, method="lobatto5", linear_solver="dense")
    b = sp.integrate(system, q0, p0, 0.005, 200, method="lobatto5", linear_solver="tree")
    assert np.abs(b.q - a.q).max() <= 1e-9
    x, y = a.counts.newton_iterations, b.counts.newton_iterations
    assert abs(x - y) <= 0.1 * x, (x, y)


@pytest.mark.parametrize("method", ["lobatto4", "lobatto5", "gauss2", "gauss3"])
@pytest.mark.parametrize("damped", [False, True])
def test_tangent_on_the_tree_path(method, damped):
    """The tangent map's columns solved with the tree factorisation at the
    root (so every term of the Newton matrix shows: the roots alone would
    not see a wrong one), from a fast start: along a run equal to the dense
    run's to 1e-9 (relative) and, without damping, symplectic to rounding;
    one step's equal to the dense LU's to 1e-11."""
    system = mb.from_urdf(spatial_urdf(12, branched=True, damping=0.3 * damped),
                          joint_damping=damped)
    n, h = system.n, 0.005
    q0, p0 = start(n)
    p0 = 20 * p0
    a = sp.integrate(system, q0, p0, h, 20, method=method, linear_solver="dense",
                     tangent=True)
    b = sp.integrate(system, q0, p0, h, 20, method=method, linear_solver="tree",
                     tangent=True)
    assert rel(b.tangent[-1], a.tangent[-1]) <= 1e-9
    D = b.tangent[-1]
    Jm = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    if not damped:
        assert np.abs(D.T @ Jm @ D - Jm).max() <= 1e-10 * np.abs(D).max() ** 2
    one = {sol: sp.integrate(system, b.q[5], b.p[5], h, 1, method=method, linear_solver=sol,
                             tangent=True).tangent[-1] for sol in ("dense", "tree")}
    assert rel(one["tree"], one["dense"]) <= 1e-11


@pytest.mark.parametrize("newton", ["chord", "step"])
def test_tangent_leaves_the_run_unchanged(newton):
    """Forming the tangent at each root puts the step's own factors back: the
    states are bitwise those of the run without it."""
    system = system_named("tree-14")
    q0, p0 = start(system.n)
    kw = dict(method="lobatto5", linear_solver="tree", newton=newton)
    a = sp.integrate(system, q0, p0, 0.005, 25, **kw)
    b = sp.integrate(system, q0, p0, 0.005, 25, tangent=True, **kw)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)


@pytest.mark.parametrize("method", ["simpson", "lobatto5", "gauss2", "midpoint"])
def test_joint_damping_on_the_tree_path(method):
    """The URDF's joint damping (diagonal, -c_j qdot_j) on the tree path: per
    step equal to the dense path to 1e-12, the same discrete work and energy
    along the run, and energy taken out."""
    system = mb.from_urdf(spatial_urdf(15, branched=True, seed=3, damping=0.05),
                          joint_damping=True)
    q0, p0 = start(system.n)
    h = 0.005
    a = sp.integrate(system, q0, p0, h, 40, method=method, linear_solver="dense", newton="full")
    b = sp.integrate(system, q0, p0, h, 40, method=method, linear_solver="tree", newton="full")
    assert np.abs(b.q - a.q).max() <= 1e-11
    assert np.abs(b.work - a.work).max() <= 1e-10 * np.abs(a.work).max()
    assert np.abs(b.energy - a.energy).max() <= 1e-10 * np.abs(a.energy).max()
    assert a.work[-1] < -1e-4   # the damping takes energy out
    worst_q, worst_p = worst_step_difference(system, None, None, h, method, 39, 10, ref=a,
                                             newtons=("full",))
    assert worst_q <= 1e-12 and worst_p <= 1e-12, (worst_q, worst_p)


def test_held_inputs_on_the_tree_path():
    """Inputs held over each step with the joints' damping: the tree run
    equals the dense one to rounding; a callable force, and a damping that
    couples two joints (the path takes a diagonal one), are refused on the
    tree path."""
    system = mb.from_urdf(spatial_urdf(10, damping=0.02), joint_damping=True)
    n, h, N = system.n, 0.005, 30
    q0, p0 = start(n)
    u = 0.5 * np.sin(np.add.outer(0.3 * np.arange(N), np.arange(n)))
    a = sp.integrate(system, q0, p0, h, N, method="lobatto4", force=u, linear_solver="dense")
    b = sp.integrate(system, q0, p0, h, N, method="lobatto4", force=u, linear_solver="tree")
    assert np.abs(b.q - a.q).max() <= 1e-11
    assert np.abs(b.work - a.work).max() <= 1e-10 * np.abs(a.work).max()
    with pytest.raises(ValueError, match="linear_solver='tree'"):
        sp.integrate(system, q0, p0, h, N, method="lobatto4", linear_solver="tree",
                     force=lambda t, q, qdot: -0.1 * qdot)
    coupled = 0.1 * np.eye(n)
    coupled[2, 3] = coupled[3, 2] = -0.05
    with pytest.raises(ValueError, match="linear_solver='tree'"):
        sp.integrate(mb.from_urdf(spatial_urdf(10)), q0, p0, h, N, method="lobatto4",
                     linear_solver="tree", force=sp.forces.linear_damping(coupled))
    diagonal = sp.integrate(mb.from_urdf(spatial_urdf(10)), q0, p0, h, N, method="lobatto4",
                            linear_solver="tree", force=sp.forces.linear_damping(0.1 * np.eye(n)))
    assert diagonal.work[-1] < 0.0


@pytest.mark.parametrize("name", ["arm7", "tree-16", "chain-9"])
def test_kinetic_energy_of_the_step_checks(name):
    """The plausibility gate reads T = 1/2 p^T M^-1 p, on the tree path from
    the O(n) articulated-body recursion: a wrong T would make a step look
    implausible or its energy balance off.  The branch check run at every
    step ("always") takes the same roots as on the dense path, and the exact
    energy (NumPy's dense solve) is the same along both runs."""
    system = system_named(name)
    q0, p0 = start(system.n)
    kw = dict(method="lobatto4", branch_check="always")
    a = sp.integrate(system, q0, p0, 0.005, 30, linear_solver="dense", **kw)
    b = sp.integrate(system, q0, p0, 0.005, 30, linear_solver="tree", **kw)
    assert a.counts.branch_checks == b.counts.branch_checks == 30
    assert np.abs(b.q - a.q).max() <= 1e-11
    H = []
    for r in (a, b):
        H.append(np.array([0.5 * p @ np.linalg.solve(system.mass(q), p) + system.potential(q)
                           for q, p in zip(r.q, r.p)]))
    assert np.abs(H[0] - H[1]).max() <= 1e-10 * np.abs(H[0]).max()
    assert np.abs(b.energy - H[1]).max() <= 1e-12 * np.abs(H[1]).max()


def test_auto_takes_the_tree_from_its_size():
    """linear_solver="auto": bitwise the dense run below AUTO_FROM joints,
    bitwise the tree run from there on (the sizes where each is the faster:
    benchmarks/tree_solver.md)."""
    for n, expect in ((AUTO_FROM - 1, "dense"), (AUTO_FROM, "tree")):
        system = mb.from_urdf(spatial_urdf(n))
        q0, p0 = start(n)
        kw = dict(method="lobatto3", newton="step")
        auto = sp.integrate(system, q0, p0, 0.005, 4, linear_solver="auto", **kw)
        same = sp.integrate(system, q0, p0, 0.005, 4, linear_solver=expect, **kw)
        other = sp.integrate(system, q0, p0, 0.005, 4,
                             linear_solver="dense" if expect == "tree" else "tree", **kw)
        assert np.array_equal(auto.q, same.q) and np.array_equal(auto.p, same.p), n
        assert not np.array_equal(auto.q, other.q), n


def test_false_roots_and_failures_as_dense():
    """At h = 0.1 on a spatial 8-link chain a Newton root is false and
    replaced by the continued one: the same checks, fixes and states on both
    paths; at h = 0.2 both fail at the same step, naming it; a non-finite
    start is refused before any step."""
    system = system_named("chain-8")
    q0, p0 = start(system.n)
    a = sp.integrate(system, q0, p0, 0.1, 10, method="lobatto5", linear_solver="dense")
    b = sp.integrate(system, q0, p0, 0.1, 10, method="lobatto5", linear_solver="tree")
    assert a.counts.branch_fixes >= 1
    assert (b.counts.branch_checks, b.counts.branch_fixes) == \
        (a.counts.branch_checks, a.counts.branch_fixes)
    assert np.abs(a.q - b.q).max() <= 1e-10
    msgs = []
    for sol in ("dense", "tree"):
        with pytest.raises(sp.ConvergenceError) as err:
            sp.integrate(system, q0, p0, 0.2, 10, method="lobatto5", linear_solver=sol)
        msgs.append(str(err.value).split(":")[0])
    assert msgs[0] == msgs[1] and "failed at step 2" in msgs[0]
    bad = q0.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match="finite"):
        sp.integrate(system, bad, p0, 0.005, 5, linear_solver="tree")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", ["arm7", "branched", "prismatic", "tree-12", "damped"])
def test_newton_direction_equals_dense(method, name):
    """The tree path's residual, the norm Newton reads, its direction J^{-1} b
    and the sign of det J against the dense J (support.tree_newton), from a
    fast start, with and without the joints' damping."""
    if name == "damped":
        system = mb.from_urdf(spatial_urdf(12, branched=True, damping=0.3), joint_damping=True)
    else:
        system = system_named(name)
    q0, p0 = start(system.n)
    force = system.force.spec(system.n) if system.force is not None else None
    check_direction(system, q0, 20 * p0, 0.01, method, force=force)
