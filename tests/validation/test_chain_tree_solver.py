"""The O(n) Newton linear algebra of the chain (``linear_solver="tree"``,
csrc/core/sym_galerkin_tree.c) against the dense LU path it replaces.

Expected values come from the dense path (an independent computation: the
assembled n x n M, A, H, hess V of the built-in, the (s-1)n x (s-1)n Newton
matrix and its LU), from the exact kinetic energy 1/2 p^T M^-1 p by a dense
solve in NumPy, and from the issue's acceptance: the tree step equals the
dense Newton path to 1e-12 per step.
"""
from pathlib import Path

import numpy as np
import pytest

import symplectic as sp
from support.tree_newton import (check_direction, check_mode_reaches_dense,
                                 check_norm_reads_every_joint, worst_step_difference)

DATA = Path(__file__).resolve().parents[1] / "data" / "urdf"

# every implicit Galerkin row: the Lobatto family (points = nodes, B = I) and the Gauss
# rows (points between the nodes: the midpoint rule, gauss2, gauss3)
METHODS = ["simpson", "lobatto2", "lobatto3", "lobatto4", "lobatto5", "lobatto6", "lobatto7",
           "midpoint", "gauss2", "gauss3"]


def chain(n, tapered=False):
    if tapered:   # the arm of benchmarks section 10: masses 2 -> 0.5, lengths 0.5 -> 0.2
        m = np.linspace(2.0, 0.5, n) if n > 1 else np.array([2.0])
        l = np.linspace(0.5, 0.2, n) if n > 1 else np.array([0.5])
        return sp.systems.pendulum_chain(n, m=m, l=l)
    return sp.systems.pendulum_chain(n)


def start(n):
    return 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n)


def rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n,tapered", [(8, False), (13, True), (32, False)])
def test_step_equals_dense_per_step(method, n, tapered):
    """From states along a run, one tree step equals one dense step to 1e-12
    (q1 relative to max(|q1|, 1), p1 relative to |p1|)."""
    system = chain(n, tapered)
    q0, p0 = start(n)
    worst_q, worst_p = worst_step_difference(system, q0, p0, 0.01, method, 60, 12)
    assert worst_q <= 1e-12 and worst_p <= 1e-12, (worst_q, worst_p)


@pytest.mark.parametrize("method", ["lobatto5", "gauss3"])
@pytest.mark.parametrize("newton", ["full", "chord", "step", "decoupled", "auto"])
def test_every_newton_mode_reaches_the_dense_root(newton, method):
    """Each Newton mode on the tree path, 40 steps on a 24-link chain,
    against full Newton with the dense LU run from the same states."""
    q0, p0 = start(24)
    check_mode_reaches_dense(chain(24), q0, p0, 0.01, 40, 8, method, newton)


def test_whole_run_follows_the_dense_run():
    """300 steps, 16 links, lobatto5: the two runs agree to rounding grown by
    the chain's chaos (measured 1.6e-11 in q); the energy error is the
    method's (the tree path does not change it); the Newton updates are the
    same but where the stopping rule's bound, at the increments' rounding,
    falls between the two paths' rounding (one update, at most in 10 % of the
    steps; a rounding-level change of the start, as another NumPy gives, moves
    which steps)."""
    n, h = 16, 0.01
    system = chain(n)
    q0, p0 = start(n)
    a = sp.integrate(system, q0, p0, h, 300, method="lobatto5", linear_solver="dense",
                     newton="full")
    b = sp.integrate(system, q0, p0, h, 300, method="lobatto5", linear_solver="tree",
                     newton="full")
    assert np.abs(a.q - b.q).max() <= 1e-9
    d = np.abs(b.newton_iterations - a.newton_iterations)
    assert d.max() <= 1 and d.sum() <= 0.1 * len(d)
    ea, eb = sp.analysis.energy_error_norm(a), sp.analysis.energy_error_norm(b)
    assert abs(ea - eb) <= 1e-3 * ea + 1e-14


def test_branch_checks_and_coarse_steps_as_dense():
    """Coarse steps (omega_max h ~ 5) where the branch check continues roots
    in h: the same checks on both paths (the check reads the sign of det J:
    on the tree path the product of the joints' pivot determinants) and the
    same states to 1e-10."""
    n, h = 16, 0.12
    system = chain(n)
    q0, p0 = start(n)
    a = sp.integrate(system, q0, p0, h, 20, method="lobatto5", linear_solver="dense")
    b = sp.integrate(system, q0, p0, h, 20, method="lobatto5", linear_solver="tree")
    assert a.counts.branch_checks >= 5
    assert b.counts.branch_checks == a.counts.branch_checks
    assert b.counts.branch_fixes == a.counts.branch_fixes
    assert np.abs(a.q - b.q).max() <= 1e-10


def test_always_branch_check_on_tree_path():
    """branch_check="always": every root is continued in h from h/8 (Taylor
    start, probes with tree factorisations); the result is the same root."""
    n, h = 10, 0.05
    system = chain(n, tapered=True)
    q0, p0 = start(n)
    a = sp.integrate(system, q0, p0, h, 10, method="simpson", linear_solver="dense",
                     branch_check="always")
    b = sp.integrate(system, q0, p0, h, 10, method="simpson", linear_solver="tree",
                     branch_check="always")
    assert b.counts.branch_checks == 10
    assert np.abs(a.q - b.q).max() <= 1e-11


def test_auto_takes_the_tree_from_8_links():
    """linear_solver="auto": bitwise the tree run from 6 links on (with the
    same Newton mode), bitwise the dense run below."""
    for n, expect in ((5, "dense"), (6, "tree"), (20, "tree")):
        system = chain(n)
        q0, p0 = start(n)
        kw = dict(method="lobatto4", newton="step")
        auto = sp.integrate(system, q0, p0, 0.01, 30, linear_solver="auto", **kw)
        same = sp.integrate(system, q0, p0, 0.01, 30, linear_solver=expect, **kw)
        other = sp.integrate(system, q0, p0, 0.01, 30,
                             linear_solver="dense" if expect == "tree" else "tree", **kw)
        assert np.array_equal(auto.q, same.q) and np.array_equal(auto.p, same.p), n
        assert not np.array_equal(auto.q, other.q), n


@pytest.mark.parametrize("method", ["lobatto4", "gauss2"])
def test_tangent_on_the_tree_path(method):
    """The tangent map solves its 2n columns with the tree factorisation at
    the root: along a run it equals the dense run's to 1e-9 (relative) and
    is symplectic to rounding; one step's equals the dense LU's to 1e-11."""
    n, h = 12, 0.01
    system = chain(n, tapered=True)
    q0, p0 = start(n)
    a = sp.integrate(system, q0, p0, h, 20, method=method, linear_solver="dense",
                     tangent=True)
    b = sp.integrate(system, q0, p0, h, 20, method=method, linear_solver="tree",
                     tangent=True)
    assert rel(b.tangent[-1], a.tangent[-1]) <= 1e-9
    D = b.tangent[-1]
    Jm = np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])
    assert np.abs(D.T @ Jm @ D - Jm).max() <= 1e-10 * np.abs(D).max() ** 2
    one = {sol: sp.integrate(system, b.q[5], b.p[5], h, 1, method=method, linear_solver=sol,
                             tangent=True).tangent[-1] for sol in ("dense", "tree")}
    assert rel(one["tree"], one["dense"]) <= 1e-11


@pytest.mark.parametrize("newton", ["chord", "step"])
def test_tangent_leaves_the_run_unchanged(newton):
    """Forming the tangent at each root (tangent=True) refactorises at the
    root and puts the step's own factors back: the states are bitwise those
    of the run without it, also where Newton reuses factors across steps."""
    n, h = 16, 0.01
    system = chain(n)
    q0, p0 = start(n)
    a = sp.integrate(system, q0, p0, h, 30, method="lobatto5", linear_solver="tree",
                     newton=newton)
    b = sp.integrate(system, q0, p0, h, 30, method="lobatto5", linear_solver="tree",
                     newton=newton, tangent=True)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)


def test_integrator_and_ensemble_take_the_option():
    n = 9
    system = chain(n)
    q0, p0 = start(n)
    ref = sp.integrate(system, q0, p0, 0.01, 10, method="lobatto5", linear_solver="tree")
    it = sp.Integrator(system, 0.01, q0, p0, method="lobatto5", linear_solver="tree")
    it.propagate(10)
    assert np.array_equal(it.q, ref.q[-1])
    many = sp.integrate_many(system, np.array([q0, q0]), np.array([p0, p0]), 0.01, 10,
                             method="lobatto5", linear_solver="tree")
    assert np.array_equal(many.q[0, -1], ref.q[-1])


@pytest.mark.parametrize("bad", [
    dict(system="double_pendulum"),
    dict(system="tree_chain"),   # (the spatial tree path takes no constraint)
    dict(force=True),
    dict(force=True, method="gauss2"),
])
def test_tree_refused_where_it_does_not_apply(bad):
    n = 6
    if bad.get("system") == "double_pendulum":
        system, n = sp.systems.double_pendulum(), 2
    elif bad.get("system") == "tree_chain":   # a URDF tree held by a mimic constraint
        system = sp.multibody.from_urdf(DATA / "mimic.urdf", mimic="constraint")
        n = system.n
    else:
        system = chain(n)
    q0, p0 = start(n)
    if system.n_constraints:
        q0, p0 = system.project(q0, p0)
    kw = dict(method=bad.get("method", "simpson"), linear_solver="tree")
    if bad.get("force"):
        kw["force"] = lambda t, q, qdot: -0.1 * qdot
    with pytest.raises(ValueError, match="linear_solver='tree'"):
        sp.integrate(system, q0, p0, 0.01, 5, **kw)
    with pytest.raises(ValueError, match="linear_solver='tree'"):
        sp.step(system, q0, p0, 0.01, **kw)


def test_callable_force_takes_the_dense_path_in_auto():
    """auto with a force given as a callable: the dense path, bitwise the
    numbers of "dense"."""
    n = 10
    q0, p0 = start(n)

    def damp(t, q, qdot):
        return -0.1 * qdot

    system = chain(n)
    a = sp.integrate(system, q0, p0, 0.01, 20, method="simpson", force=damp, newton="full")
    b = sp.integrate(system, q0, p0, 0.01, 20, method="simpson", force=damp, newton="full",
                     linear_solver="dense")
    assert np.array_equal(a.q, b.q)


@pytest.mark.parametrize("method", ["simpson", "lobatto5", "gauss2", "midpoint"])
@pytest.mark.parametrize("damping", ["uniform", "graded"])
def test_joint_damping_on_the_tree_path(method, damping):
    """The chain's own joint friction, F = -Delta^T diag(c) Delta qdot in the
    absolute angles (tridiagonal), on the tree path (its rates a third slot
    of the elimination): per step equal to the dense path to 1e-12, the same
    Newton iterations (an exact Jacobian; the stopping rule's bound is at the
    increments' rounding, 1e-16 of them, where the two paths' rounding may
    take a step over it with one update more: one update, in at most 10 % of
    the steps; measured 0-1 steps here, 3 with the start's last bits from
    NumPy 1.24), the same discrete work of the force and the same energy
    along the run."""
    n, h = 17, 0.01
    c = 0.3 if damping == "uniform" else np.linspace(0.1, 0.5, n)
    system = sp.systems.pendulum_chain(n, damping=c)
    q0, p0 = start(n)
    p0 = p0 + 0.2 * np.cos(np.arange(n))
    a = sp.integrate(system, q0, p0, h, 40, method=method, linear_solver="dense", newton="full")
    b = sp.integrate(system, q0, p0, h, 40, method=method, linear_solver="tree", newton="full")
    d = np.abs(b.newton_iterations - a.newton_iterations)
    assert d.max() <= 1 and d.sum() <= 0.1 * len(d)
    assert np.abs(b.q - a.q).max() <= 1e-11
    assert np.abs(b.work - a.work).max() <= 1e-10 * np.abs(a.work).max()
    assert np.abs(b.energy - a.energy).max() <= 1e-10 * np.abs(a.energy).max()
    assert a.energy[-1] < a.energy[0] - 1e-3        # the damping takes energy out
    worst_q, worst_p = worst_step_difference(system, None, None, h, method, 39, 8, ref=a,
                                             newtons=("full",))
    assert worst_q <= 1e-12 and worst_p <= 1e-12, (worst_q, worst_p)


def test_held_inputs_on_the_tree_path():
    """A force held over each step (an array of inputs, as a sampled
    controller or the transcriptions give), with the chain's damping: the
    tree path's run equals the dense one's to rounding."""
    n, h, N = 12, 0.01, 30
    system = sp.systems.pendulum_chain(n, damping=0.05)
    q0, p0 = start(n)
    u = 0.5 * np.sin(np.add.outer(0.3 * np.arange(N), np.arange(n)))
    a = sp.integrate(system, q0, p0, h, N, method="lobatto4", force=u, linear_solver="dense")
    b = sp.integrate(system, q0, p0, h, N, method="lobatto4", force=u, linear_solver="tree")
    assert np.abs(b.q - a.q).max() <= 1e-11
    assert np.abs(b.work - a.work).max() <= 1e-10 * np.abs(a.work).max()
    auto = sp.integrate(system, q0, p0, h, N, method="lobatto4", force=u)
    assert np.array_equal(auto.q, b.q)
    with pytest.raises(ValueError, match="linear_solver='tree'"):
        sp.integrate(system, q0, p0, h, N, method="lobatto4", linear_solver="tree",
                     force=lambda t, q, qdot: -0.1 * qdot)


def test_bad_value_and_explicit_method():
    system = chain(8)
    q0, p0 = start(8)
    with pytest.raises(ValueError, match="linear_solver"):
        sp.integrate(system, q0, p0, 0.01, 5, linear_solver="sparse")
    with pytest.raises(TypeError, match="explicit"):
        sp.integrate(system, q0, p0, 0.01, 5, method="rk4", linear_solver="tree")


@pytest.mark.parametrize("n", [1, 2, 9, 40])
def test_kinetic_energy_of_the_step_checks(n):
    """The plausibility gate and the branch check's energy balance read
    T = 1/2 p^T M^-1 p, on the tree path from the O(n) articulated-body
    recursion (not visible directly): a wrong T makes the step's energy
    balance look off and the check continue roots in h.  With a moving
    start: no check on either path, and the exact energy H = T + V (NumPy's
    dense solve) the same along both runs and kept to the method's error."""
    system = chain(n, tapered=True)
    q0, p0 = start(n)
    p0 = p0 + 0.3 * np.cos(np.arange(n))
    a = sp.integrate(system, q0, p0, 0.004, 50, method="lobatto4", linear_solver="dense")
    b = sp.integrate(system, q0, p0, 0.004, 50, method="lobatto4", linear_solver="tree")
    assert a.counts.branch_checks == b.counts.branch_checks == 0
    H = []
    for r in (a, b):
        e = []
        for q, p in zip(r.q, r.p):
            M = system.mass(q)
            e.append(0.5 * p @ np.linalg.solve(M, p) + system.potential(q))
        H.append(np.array(e))
    assert np.abs(H[0] - H[1]).max() <= 1e-10 * np.abs(H[0]).max()
    assert np.abs(H[1] - H[1][0]).max() <= 1e-6 * np.abs(H[1]).max()


def test_false_roots_and_failures_as_dense():
    """At h = 0.3 (omega_max h = 4.6 on 10 links) half of the steps' Newton
    roots are false and replaced by the continued ones: the same checks and
    fixes and the same states on both paths; past the stability limit both
    refuse the step with the same reason."""
    n = 10
    system = chain(n)
    q0, p0 = start(n)
    a = sp.integrate(system, q0, p0, 0.3, 10, method="lobatto5", linear_solver="dense")
    b = sp.integrate(system, q0, p0, 0.3, 10, method="lobatto5", linear_solver="tree")
    assert a.counts.branch_fixes >= 3
    assert (b.counts.branch_checks, b.counts.branch_fixes) == \
        (a.counts.branch_checks, a.counts.branch_fixes)
    assert np.abs(a.q - b.q).max() <= 1e-10
    msgs = []
    for sol in ("dense", "tree"):
        with pytest.warns(sp.StabilityWarning), pytest.raises(sp.ConvergenceError) as err:
            sp.integrate(system, q0, p0, 0.6, 10, method="lobatto5", linear_solver=sol)
        msgs.append(str(err.value).split(":")[1])
    assert msgs[0] == msgs[1] and "unstable step size" in msgs[0]


@pytest.mark.parametrize("method", ["simpson", "lobatto5", "gauss2"])
def test_step_derivatives_of_the_transcriptions(method):
    """What symplectic.control differentiates with, on the tree path: each
    step's Jacobian in (q, p, inputs at the force points), its derivative in
    h and t, and the force points' states -- a 10-link chain with its joint
    damping and inputs held at the force points -- equal to the dense LU's
    to 1e-10 (relative), and the run's states to rounding."""
    from symplectic._model import _runspec
    from symplectic._run import _driver, _prepare
    n, N, h = 10, 6, 0.02
    system = sp.systems.pendulum_chain(n, damping=0.1)
    P = len(sp.methods(details=True)[method]["force_points"])
    U = np.random.default_rng(3).normal(size=(N, P, n))
    q0, p0 = start(n)
    out = {}
    for sol in ("dense", "tree"):
        spec = _runspec.run_spec(method, h, N, 0.0, options={"linear_solver": sol,
                                                             "branch_check": "off"})
        cols = (2 + P) * n
        jac = np.empty((N, 2 * n, cols))
        hj = np.empty((N, 2, 2 * n))
        pts = np.empty((N, P, 2 * n, 1 + cols + 2))
        force = sp.forces.at_points(U) + system.force
        r = _driver.run(_prepare.Prepared(system, spec, q0, p0, force),
                        outputs=_driver.Outputs(jacobians=jac, h_jacobians=hj, points=pts))
        out[sol] = (r.q, jac, hj, pts)
    assert np.abs(out["tree"][0] - out["dense"][0]).max() <= 1e-12
    for k in (1, 2, 3):
        assert rel(out["tree"][k], out["dense"][k]) <= 1e-10, k


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("damped", [False, True])
def test_newton_direction_equals_dense(method, damped):
    """The chain's O(n) residual, the norm Newton reads (each lane of the
    four-lane maximum), its direction J^{-1} b and the sign of det J against
    the dense J (support.tree_newton), on 13 links (not a multiple of the
    four lanes), with and without the joint friction."""
    system = sp.systems.pendulum_chain(13, damping=0.3 * damped)
    q0, p0 = start(13)
    force = system.force.spec(13) if system.force is not None else None
    check_direction(system, q0, p0 + 2.0 * np.cos(np.arange(13)), 0.01, method, force=force)


@pytest.mark.parametrize("n", [8, 13])
def test_residual_norm_reads_every_joint(n):
    """The four-lane residual's norm (support.tree_newton) on 8 links (two
    full blocks of lanes) and 13 (a remainder)."""
    q0, p0 = start(n)
    check_norm_reads_every_joint(chain(n), q0, p0, 0.01, "simpson")
