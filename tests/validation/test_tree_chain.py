"""``multibody.pendulum_chain`` (issue 50): the planar pendulum chain as a rigid-body tree in
relative joint angles theta, against the built-in ``systems.pendulum_chain`` -- an independent
implementation (the closed form M_q,ij = l_i l_j mu_max(i,j) cos(q_i - q_j) of
csrc/core/sym_sys_pendulums.c, in absolute angles q) -- mapped by q = L theta, L the lower
triangular matrix of ones (p_theta = L^T p_q).

For the unit chain and the tapered arm of benchmarks/RESULTS.md section 10 (masses 2 -> 0.5 kg,
lengths 0.5 -> 0.2 m), n = 1, 2, 5, 16:

- M_theta = L^T M_q(L theta) L, V_theta = V_q(L theta), grad V_theta = L^T grad V_q and
  hess V_theta = L^T hess V_q L at random states, to 1e-13 relative (the largest deviation
  against the largest entry; V against g sum_i mu_i l_i, the largest |V|);
- whole runs over 1 s from q_i(0) = 0.5 sin(1.3 i) at rest, lobatto5, simpson and gauss2,
  without and with joint damping: at every step q = L theta and p_theta = L^T p_q to 1e-12
  relative (the deviation at the step against the largest |q|, |p_theta| of the run).  The
  Galerkin discretisation commutes with a constant linear change of coordinates, so the two
  discrete runs differ only by rounding and the Newton tolerance.  Measured when written
  (x86-64, GCC -O3): at most 2e-13 (the unit chain 8e-14, n <= 5 8e-14), the model 1.3e-15.
  The free 16-link arm runs 0.5 s only (measured 9e-14 from ten starts perturbed by an ulp):
  its dynamics are chaotic and amplify the per-step rounding difference by about 10 every
  0.5 s (the rate at which the norm of the run's state-transition matrix grows), so that at
  1 s the deviation is 1e-13 to 1.3e-12 depending on the last bits of the start (8.2e-13
  from this test's start), and 6e-11 at 2 s.  That is rounding, not the tree: the built-in's
  run against itself written in theta through L by Python callables drifts at the same rate
  (3e-12 at 2 s), and running Newton to 1e-16 changes nothing.
- the damping: the built-in's D_q = Delta^T diag(c) Delta becomes the tree's joint damping
  diag(c) in theta (L^T D_q L = diag(c));
- the arguments are checked as the built-in checks them (the same errors and messages).
"""
import numpy as np
import pytest

import symplectic as sp
from symplectic import multibody

G = 9.81
SIZES = (1, 2, 5, 16)
KINDS = ("chain", "arm")
STEPS = {"lobatto5": 0.01, "simpson": 0.005, "gauss2": 0.005}
T_RUN = 1.0
#: (kind, n, damped) -> a shorter run, where chaos amplifies rounding to 1e-12 by 1 s
T_SHORT = {("arm", 16, False): 0.5}
MODEL_RTOL = 1e-13
RUN_RTOL = 1e-12


def chain_params(n, kind):
    """Unit masses and lengths ("chain"), or the arm of benchmarks/RESULTS.md section 10
    (benchmarks/models.chain_params): m from 2 to 0.5 kg and l from 0.5 to 0.2 m, linear
    tapers from the base to the tip."""
    if kind == "chain":
        return np.ones(n), np.ones(n)
    x = np.arange(n) / max(n - 1, 1)
    return 2.0 - 1.5 * x, 0.5 - 0.3 * x


def damping_values(n, kind):
    """A scalar for the chain, a different value per joint for the arm."""
    return 0.3 if kind == "chain" else np.linspace(0.5, 0.1, n)


def ones_below(n):
    """L: q = L theta (theta_0 = q_0, theta_i = q_i - q_{i-1})."""
    return np.tril(np.ones((n, n)))


def pair(n, kind, damping=0.0):
    m, l = chain_params(n, kind)
    return (sp.systems.pendulum_chain(n, m=m, l=l, g=G, damping=damping),
            multibody.pendulum_chain(n, m=m, l=l, g=G, damping=damping))


def rel(a, b):
    """The largest deviation against the largest entry of b."""
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
def test_model_is_the_builtin_in_relative_angles(n, kind):
    builtin, tree = pair(n, kind)
    L = ones_below(n)
    m, l = chain_params(n, kind)
    v_scale = G * np.sum(np.cumsum(m[::-1])[::-1] * l)      # g sum_i mu_i l_i >= |V|
    rng = np.random.default_rng(50 + n)
    for _ in range(8):
        theta = rng.uniform(-np.pi, np.pi, n)
        q = L @ theta
        assert rel(tree.mass(theta), L.T @ builtin.mass(q) @ L) <= MODEL_RTOL
        assert abs(tree.potential(theta) - builtin.potential(q)) <= MODEL_RTOL * v_scale
        assert rel(tree.potential_grad(theta), L.T @ builtin.potential_grad(q)) <= MODEL_RTOL
        assert rel(tree.potential_hess(theta), L.T @ builtin.potential_hess(q) @ L) <= MODEL_RTOL


def start(n):
    """q_i(0) = 0.5 sin(1.3 i), i = 1..n (benchmarks/models.chain_q0), at rest."""
    return 0.5 * np.sin(1.3 * np.arange(1, n + 1)), np.zeros(n)


@pytest.mark.parametrize("damped", [False, True], ids=["free", "damped"])
@pytest.mark.parametrize("method", sorted(STEPS))
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
def test_runs_are_the_builtins_mapped(n, kind, method, damped):
    builtin, tree = pair(n, kind, damping_values(n, kind) if damped else 0.0)
    L = ones_below(n)
    q0, p0 = start(n)
    h = STEPS[method]
    N = round(T_SHORT.get((kind, n, damped), T_RUN) / h)
    ref = sp.integrate(builtin, q0, p0, h, N, method=method)
    run = sp.integrate(tree, np.linalg.solve(L, q0), L.T @ p0, h, N, method=method)
    assert run.status == ref.status == 0
    q_dev = np.max(np.abs(run.q @ L.T - ref.q), axis=1) / np.max(np.abs(ref.q))
    p_ref = ref.p @ L                                        # rows: p_theta = L^T p_q
    p_dev = np.max(np.abs(run.p - p_ref), axis=1) / np.max(np.abs(p_ref))
    assert q_dev.max() <= RUN_RTOL, f"q: {q_dev.max():.2e} at step {q_dev.argmax()}"
    assert p_dev.max() <= RUN_RTOL, f"p: {p_dev.max():.2e} at step {p_dev.argmax()}"
    e_scale = np.max(np.abs(ref.energy))
    assert np.max(np.abs(run.energy - ref.energy)) <= RUN_RTOL * e_scale
    if damped:
        assert np.max(np.abs(run.work - ref.work)) <= RUN_RTOL * e_scale
        assert ref.work[-1] < 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", SIZES)
def test_damping_is_the_builtins_in_relative_angles(n, kind):
    c = damping_values(n, kind)
    builtin, tree = pair(n, kind, c)
    L = ones_below(n)
    D = tree.force.damping
    assert tree.joint_damping and D.shape == (n, n)
    assert np.array_equal(D, np.diag(np.broadcast_to(c, (n,))))
    assert rel(D, L.T @ builtin.force.damping @ L) <= 1e-15
    assert [tree.tree.joint(j).damping for j in tree.coordinates] == list(np.broadcast_to(c, (n,)))
    free_builtin, free_tree = pair(n, kind)
    assert free_builtin.force is None and free_tree.force is None and not free_tree.joint_damping


def test_tree_layout():
    """The links, the joints, the names and the planar geometry the docstring states: mass k
    at (sum_{i<=k} l_i sin q_i, 0, -sum_{i<=k} l_i cos q_i), z up, q = L theta."""
    m, l = chain_params(4, "arm")
    sys = multibody.pendulum_chain(4, m=m, l=l, g=3.7)
    tree = sys.tree
    assert isinstance(sys, multibody.TreeSystem) and sys.name == "pendulum_chain"
    assert sys.coordinates == ("joint0", "joint1", "joint2", "joint3")
    assert tree.links == ("base", "rod0", "rod1", "rod2", "rod3") and tree.root == "base"
    assert np.array_equal(tree.gravity, [0.0, 0.0, -3.7])
    assert tree.mass == pytest.approx(m.sum(), rel=1e-15)
    for k, name in enumerate(tree.links[1:]):
        b = tree.body(name)
        assert b.mass == m[k] and np.array_equal(b.com, [0, 0, -l[k]])
        assert not np.any(b.inertia)                          # a point mass
    theta = np.array([0.4, -1.1, 2.0, 0.3])
    q = np.cumsum(theta)
    for k in range(4):
        x = tree.point(f"rod{k}", theta, (0.0, 0.0, -l[k]))
        assert np.allclose(x, [np.sum(l[:k + 1] * np.sin(q[:k + 1])), 0.0,
                               -np.sum(l[:k + 1] * np.cos(q[:k + 1]))], rtol=0, atol=1e-15)


@pytest.mark.parametrize("args", [
    dict(n=0), dict(n=2.0), dict(n=True),
    dict(n=3, m=[1.0, 2.0]), dict(n=2, m=[1.0, -1.0]), dict(n=2, m=0.0),
    dict(n=2, l=[1.0, np.inf]), dict(n=2, l="a"),
    dict(n=2, g=np.nan), dict(n=2, g="9.81"), dict(n=2, g=True),
    dict(n=2, damping=-0.1), dict(n=2, damping=[0.1, 0.2, 0.3]), dict(n=2, damping=[0.1, np.nan]),
], ids=lambda a: ",".join(f"{k}={v!r}" for k, v in a.items()))
def test_arguments_are_checked_as_the_builtin_checks_them(args):
    with pytest.raises((TypeError, ValueError)) as builtin_error:
        sp.systems.pendulum_chain(**args)
    with pytest.raises(builtin_error.type) as tree_error:
        multibody.pendulum_chain(**args)
    assert str(tree_error.value) == str(builtin_error.value)


@pytest.mark.parametrize("newton", ["step", "auto", "chord"])
def test_long_chain_converges_with_reused_factors(newton):
    """A 64-link chain in relative angles: Newton's residual and updates stop at a
    rounding floor above the tolerance (cond L^T J L ~ 1e9); the modes that reuse a
    factorisation used to run out of iterations there (a ConvergenceError at step
    75) and now end at the floor (sym_newton.c, residual_floor).  Their run is the
    built-in's in absolute angles as closely as full Newton's is."""
    n = 64
    q0 = 0.5 * np.sin(1.3 * np.arange(n))
    ref = sp.integrate(sp.systems.pendulum_chain(n), q0, np.zeros(n), 0.01, 100, "lobatto5",
                       newton="full").q
    chain = multibody.pendulum_chain(n)
    theta0 = np.diff(q0, prepend=0.0)

    def gap(mode):
        traj = sp.integrate(chain, theta0, np.zeros(n), 0.01, 100, "lobatto5", newton=mode)
        return float(np.max(np.abs(np.cumsum(traj.q, axis=1) - ref)))

    full = gap("full")
    assert full < 1e-9
    assert gap(newton) <= 10.0 * full
