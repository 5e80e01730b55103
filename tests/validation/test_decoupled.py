"""newton="decoupled" and newton="auto" (csrc/core/sym_galerkin_decouple.c, csrc/core/sym_newton.c).

The decoupled matrix freezes M(q) and the stiffness over the step and splits the Newton
system into s - 1 blocks of size n (2n for a complex pair) through the eigenvectors of the
method's constant tables.  On a linear system the frozen matrix is the exact one, so one
update reaches the root: the tables (eigenvectors, their inverse, the real form of the
complex pairs) are right exactly when every step takes a single factorisation and at most two
updates, and the states equal full Newton's to rounding.  On nonlinear systems the iteration
contracts linearly; the states equal full Newton's to the Newton tolerance.
"""
import numpy as np
import pytest

import symplectic as sp

#: the Galerkin methods with s >= 3 nodes (s - 1 >= 2 blocks to decouple)
BLOCKED = ["simpson", "lobatto3", "lobatto4", "lobatto5", "gauss2", "gauss3"]


def random_linear(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n), b @ b.T + np.eye(n)


def rel_diff(a, b):
    return np.max(np.abs(a.q - b.q)) / np.max(np.abs(b.q)) + \
        np.max(np.abs(a.p - b.p)) / np.max(np.abs(b.p))


def quadrature(method):
    """The method's quadrature on [0, 1], from its definition (not from the core): Lobatto
    at the nodes for the Lobatto family, Gauss-Legendre for the gauss rows."""
    from numpy.polynomial import legendre
    nodes = np.array(sp.methods(details=True)[method]["nodes"])
    if method.startswith("gauss"):
        x, w = legendre.leggauss(int(method[-1]))
        return nodes, (x + 1) / 2, w / 2
    s = len(nodes)
    Pm = legendre.legval(2 * nodes - 1, [0] * (s - 1) + [1])
    return nodes, nodes, 1.0 / (s * (s - 1) * Pm ** 2)


def tables(method):
    """Ah, Bh of the frozen Newton matrix (sym_galerkin_decouple.c) from the Lagrange basis
    on the nodes at the quadrature points."""
    c, x, b = quadrature(method)
    s = len(c)
    B = np.array([[np.prod([(xi - c[m]) / (c[a] - c[m]) for m in range(s) if m != a])
                   for a in range(s)] for xi in x])
    D = np.array([[sum(np.prod([(xi - c[m]) / (c[a] - c[m]) for m in range(s) if m not in (a, k)])
                       / (c[a] - c[k]) for k in range(s) if k != a)
                   for a in range(s)] for xi in x])
    Ah = np.einsum("i,ia,ib->ab", b, D[:, :-1], D[:, 1:])
    Bh = np.einsum("i,ia,ib->ab", b, B[:, :-1], B[:, 1:])
    return Ah, Bh


@pytest.mark.parametrize("method", BLOCKED)
def test_block_eigenvalues_against_numpy(method):
    """The eigenvalues the core decouples with are those of Ah^-1 Bh (NumPy's eig of the
    tables formed here from the nodes and the quadrature); the two-node methods and rk4
    have none."""
    Ah, Bh = tables(method)
    expect = np.sort_complex(np.linalg.eigvals(np.linalg.solve(Ah, Bh)))
    got = np.sort_complex(np.array(sp.methods(details=True)[method]["newton_blocks"]))
    assert got.shape == expect.shape
    assert np.max(np.abs(got - expect)) < 1e-14
    for other in ("midpoint", "lobatto2", "rk4"):
        assert sp.methods(details=True)[other]["newton_blocks"] == ()


@pytest.mark.parametrize("method", BLOCKED)
def test_linear_system_one_factorisation_and_full_newtons_states(method):
    M, K = random_linear(6, 3)
    S = sp.systems.linear(M, K)
    rng = np.random.default_rng(4)
    q0, p0 = rng.standard_normal(6), rng.standard_normal(6)
    h = 0.3 / np.sqrt(np.max(np.linalg.eigvals(np.linalg.solve(M, K)).real))
    kw = dict(method=method, closed_form=False)
    full = sp.integrate(S, q0, p0, h, 200, newton="full", **kw)
    dec = sp.integrate(S, q0, p0, h, 200, newton="decoupled", **kw)
    assert dec.counts.factorizations == 200
    assert np.max(dec.newton_iterations) <= 2
    assert rel_diff(dec, full) < 1e-12


def fpu(m=3, omega=50.0):
    """The Fermi-Pasta-Ulam problem of Hairer, Lubich & Wanner (I.5): 2m unit masses, stiff
    linear springs omega^2/4 d^2 inside each pair, soft quartic springs d^4 between the pairs
    and to the fixed walls; constant M = I."""
    n = 2 * m

    def diffs(q):
        x = np.concatenate([[0.0], q, [0.0]])
        return np.diff(x)            # d_0 (wall-soft), d_1 (stiff), d_2 (soft), ..., d_2m

    stiff = np.arange(2 * m + 1) % 2 == 1

    def V(q):
        d = diffs(q)
        return np.sum(np.where(stiff, 0.25 * omega ** 2 * d ** 2, d ** 4))

    def dV(q):
        d = diffs(q)
        f = np.where(stiff, 0.5 * omega ** 2 * d, 4 * d ** 3)
        return f[:-1] - f[1:]

    def d2V(q):
        d = diffs(q)
        k = np.where(stiff, 0.5 * omega ** 2, 12 * d ** 2)
        Hm = np.diag(k[:-1] + k[1:])
        for i in range(n - 1):
            Hm[i, i + 1] = Hm[i + 1, i] = -k[i + 1]
        return Hm

    return sp.System(n, np.eye(n), V, potential_grad=dV, potential_hess=d2V)


@pytest.mark.parametrize("method", ["simpson", "lobatto5", "gauss3"])
def test_constant_mass_nonlinear_springs(method):
    """Constant M, nonlinear stiffness: the frozen matrix serves every step (one
    factorisation each) as well as the exact matrix at the step's start does (the iterations
    of newton="step", the same policy), and the states are full Newton's to the Newton
    tolerance."""
    S = fpu()
    q0 = np.array([0.2, 0.21, -0.1, -0.08, 0.3, 0.31])
    p0 = np.array([0.5, -0.3, 0.2, 0.1, -0.4, 0.2])
    h = 0.5 / 50.0
    full = sp.integrate(S, q0, p0, h, 300, method=method, newton="full")
    step = sp.integrate(S, q0, p0, h, 300, method=method, newton="step")
    dec = sp.integrate(S, q0, p0, h, 300, method=method, newton="decoupled")
    assert dec.counts.factorizations == 300
    assert np.mean(dec.newton_iterations) <= np.mean(step.newton_iterations) + 0.05
    assert rel_diff(dec, full) < 1e-11


@pytest.mark.parametrize("method", ["lobatto5", "simpson"])
def test_fast_varying_mass_falls_back_and_keeps_the_states(method):
    """A chain whose M(q) changes fast over a step: the frozen matrix contracts poorly, the
    exact one takes over (more factorisations than steps) and the states stay full Newton's
    to the Newton tolerance (the chain's sensitivity over 1 s amplifies it ~100 times)."""
    S = sp.systems.pendulum_chain(8)
    q0, p0 = 0.5 * np.sin(1.3 * np.arange(8)), np.zeros(8)
    h, N = 0.0177, 60
    full = sp.integrate(S, q0, p0, h, N, method=method, newton="full")
    dec = sp.integrate(S, q0, p0, h, N, method=method, newton="decoupled")
    assert rel_diff(dec, full) < 1e-10


def test_forced_and_two_node_methods():
    """The force's derivatives are left out of the frozen matrix (it still converges to
    the same root); the two-node methods have one block already (the exact matrix)."""
    dp = sp.systems.double_pendulum(damping=0.3)
    q0, p0 = [0.6, -0.4], [0.1, 0.3]
    for method in ("simpson", "lobatto4", "midpoint", "lobatto2"):
        full = sp.integrate(dp, q0, p0, 0.02, 300, method=method, newton="full")
        dec = sp.integrate(dp, q0, p0, 0.02, 300, method=method, newton="decoupled")
        assert rel_diff(dec, full) < 1e-11, method
        assert np.allclose(dec.work, full.work, rtol=1e-10, atol=1e-14), method


def test_constrained_systems_refuse_decoupled_and_auto_takes_full():
    S = sp.systems.pendulum_cartesian()
    q0, p0 = [np.sin(0.5), -np.cos(0.5)], [0.0, 0.0]
    with pytest.raises(ValueError, match="decoupled.*constrained"):
        sp.integrate(S, q0, p0, 0.01, 10, newton="decoupled")
    with pytest.raises(ValueError, match="decoupled.*constrained"):
        sp.Integrator(S, 0.01, q0, p0, newton="decoupled")
    a = sp.integrate(S, q0, p0, 0.01, 50, method="lobatto5", newton="auto")
    b = sp.integrate(S, q0, p0, 0.01, 50, method="lobatto5", newton="full")
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)


def test_auto_by_size():
    """auto: full Newton below 16 unknowns ((s - 1) n), decoupled from 16 on -- bitwise."""
    dp = sp.systems.double_pendulum()
    q0, p0 = [0.7, -0.2], [0.0, 0.4]
    a = sp.integrate(dp, q0, p0, 0.05, 200, newton="auto")
    b = sp.integrate(dp, q0, p0, 0.05, 200, newton="full")
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
    S = sp.systems.pendulum_chain(4)                      # lobatto5: 16 unknowns
    q0, p0 = 0.5 * np.sin(1.3 * np.arange(4)), np.zeros(4)
    a = sp.integrate(S, q0, p0, 0.04, 100, method="lobatto5", newton="auto")
    b = sp.integrate(S, q0, p0, 0.04, 100, method="lobatto5", newton="decoupled")
    c = sp.integrate(S, q0, p0, 0.04, 100, method="lobatto5", newton="full")
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
    assert not np.array_equal(a.newton_iterations, c.newton_iterations)


def _python_chain(n):
    """The planar n-link chain with a callable M(q) in Python (its closed form, tests/support)."""
    from support import twins
    return sp.System(n, **twins.chain_callables(n, np.ones(n), np.ones(n)), derivative_check=False)


def test_auto_on_python_systems():
    """auto, from 16 unknowns on: a system evaluated in Python whose M(q) varies takes the
    per-step policy (each extra update of the frozen matrix costs a Python evaluation at every
    point), one with a constant M the decoupled matrix (exact in M: no extra updates) -- bitwise;
    the compiled chain of test_auto_by_size keeps the decoupled matrix."""
    n = 4
    q0, p0 = 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n)
    S = _python_chain(n)
    runs = {nw: sp.integrate(S, q0, p0, 0.04, 60, method="lobatto5", newton=nw)
            for nw in ("auto", "step", "decoupled")}
    assert np.array_equal(runs["auto"].q, runs["step"].q) and np.array_equal(runs["auto"].p, runs["step"].p)
    assert not np.array_equal(runs["auto"].newton_iterations, runs["decoupled"].newton_iterations)
    # below 16 unknowns (lobatto4: 12) full Newton, as for every system
    a = sp.integrate(S, q0, p0, 0.04, 60, method="lobatto4", newton="auto")
    b = sp.integrate(S, q0, p0, 0.04, 60, method="lobatto4", newton="full")
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
    # constant M in Python: an FPU-like chain of unit masses with quartic springs
    m = 8

    def V(q):
        d = np.diff(np.r_[0.0, q, 0.0])
        return float(np.sum(0.5 * d ** 2 + 0.25 * d ** 4))

    def dV(q):
        d = np.diff(np.r_[0.0, q, 0.0])
        t = d + d ** 3
        return t[:-1] - t[1:]

    C = sp.System(m, np.eye(m), V, potential_grad=dV, derivative_check=False)
    q0c, p0c = 0.3 * np.sin(np.arange(m)), 0.2 * np.cos(np.arange(m))
    a = sp.integrate(C, q0c, p0c, 0.05, 60, method="simpson", newton="auto")   # 16 unknowns
    b = sp.integrate(C, q0c, p0c, 0.05, 60, method="simpson", newton="decoupled")
    c = sp.integrate(C, q0c, p0c, 0.05, 60, method="simpson", newton="step")
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
    assert not (np.array_equal(a.q, c.q) and np.array_equal(a.p, c.p))


def test_auto_on_urdf_trees():
    """auto on a robot read from URDF (the built-in rigid-body tree, whose evaluations run
    its recursions for M, A and H at every point): the per-step policy, bitwise -- the
    decoupled matrix's extra updates cost more there (benchmarks/NOTES.md section 8)."""
    from symplectic.multibody import from_urdf
    from support.urdf_runs import moving_start, path
    S = from_urdf(path("arm7"))
    q0, p0 = moving_start("arm7", mass=S.mass)     # (the reference's M would need SymPy)
    runs = {nw: sp.integrate(S, q0, p0, 0.01, 40, method="lobatto5", newton=nw)
            for nw in ("auto", "step", "decoupled")}
    assert np.array_equal(runs["auto"].q, runs["step"].q) and np.array_equal(runs["auto"].p, runs["step"].p)
    assert not np.array_equal(runs["auto"].newton_iterations, runs["decoupled"].newton_iterations)


def test_unknown_mode_is_named():
    with pytest.raises(ValueError, match="newton"):
        sp.integrate(sp.systems.pendulum(), [0.1], [0.0], 0.1, 3, newton="decouple")


def test_position_force_joins_the_frozen_stiffness():
    """A stiff position-dependent force (F = -k q on every mass, k = 1e5: omega h = 3.2 at
    h = 0.01) enters the frozen matrix through dF/dq: one factorisation a step (224 without
    dF/dq in it), the iterations of newton="step", full Newton's states to the Newton tolerance (the stiff
    force amplifies it: newton="step" and "chord" are 9e-11 and 6e-11 from full Newton)."""
    S = fpu()
    k = 1e5
    force = sp.forces.from_callable(lambda t, q, v: -k * q,
                                    lambda t, q, v: (-k * np.eye(6), np.zeros((6, 6))),
                                    depends_on="q")
    q0 = np.array([0.02, 0.021, -0.01, -0.008, 0.03, 0.031])
    p0 = np.array([0.5, -0.3, 0.2, 0.1, -0.4, 0.2])
    kw = dict(method="gauss3", force=force, branch_check="never")  # (its probes factorise too)
    full = sp.integrate(S, q0, p0, 0.01, 200, newton="full", **kw)
    step = sp.integrate(S, q0, p0, 0.01, 200, newton="step", **kw)
    dec = sp.integrate(S, q0, p0, 0.01, 200, newton="decoupled", **kw)
    assert dec.counts.factorizations == 200
    assert np.mean(dec.newton_iterations) <= np.mean(step.newton_iterations) + 0.05
    assert rel_diff(dec, full) < 1e-10


def test_tangent_and_parameter_sensitivities_are_full_newtons():
    """The tangent map and the parameter block are taken at the root with the exact Jacobian,
    whatever matrix Newton iterated with: under the decoupled matrix they equal full
    Newton's to the Newton tolerance (chain of 8 links, lobatto5: 32 unknowns)."""
    S = sp.systems.pendulum_chain(8)
    q0, p0 = 0.5 * np.sin(1.3 * np.arange(8)), np.zeros(8)
    kw = dict(method="lobatto5", tangent=True)
    a = sp.integrate(S, q0, p0, 0.0177, 50, newton="decoupled", **kw)
    b = sp.integrate(S, q0, p0, 0.0177, 50, newton="full", **kw)
    assert rel_diff(a, b) < 1e-12
    assert np.max(np.abs(a.tangent[-1] - b.tangent[-1])) <= 1e-12 * np.max(np.abs(b.tangent[-1]))
    pytest.importorskip("sympy")        # wrt= compiles an augmented system with SymPy
    a = sp.integrate(S, q0, p0, 0.0177, 50, newton="decoupled", wrt=["g"], **kw)
    b = sp.integrate(S, q0, p0, 0.0177, 50, newton="full", wrt=["g"], **kw)
    x, y = a.param_tangent[-1], b.param_tangent[-1]
    assert np.max(np.abs(x - y)) <= 1e-12 * np.max(np.abs(y))
