"""The exact tangent of a constrained run (csrc/core/sym_constraints_tangent.c):
``integrate(..., tangent=True).tangent`` and ``analysis.tangent_map``, every
method that takes constraints (the Galerkin ones: midpoint, simpson,
lobatto2 ... lobatto5).

The systems: ``systems.pendulum_cartesian()`` (a point mass on a rod of length
1 in the plane, q = (x, y)); the same pendulum from Python callables without
``constraint_hess`` (the core forms S(q, mu) by central differences);
``systems.lagrange_top_quaternion()`` (TOP Table 3's heavy top in a unit
quaternion, started from the papers' motion: theta0 = pi/3, psidot0 = 252
rad/s); ``systems.four_bar()`` (m = 2 constraints, a crank-rocker turning 18
times in the 1 s run).  The test writes each manifold itself: g and G (the
spheres |q|^2 = 1; the four-bar's loop closure from its docstring), the
hidden constraint K(q, p) = G(q) M(q)^-1 p (M from the system's model), the
manifold {g = 0, K = 0} of dimension 2n - 2m.  Its tangent space at (q, p)
is the null space of the 2m x 2n Jacobian of (g, K) (K's by central
differences); a retraction onto it takes minimum-norm Newton steps on g and
then projects p M^-1-orthogonally onto K = 0.

- Over 1000 steps, Phi = tangent[-1] applied to a basis V of the tangent
  space at (q0, p0) against central differences of ``integrate`` from the
  retracted states (q0, p0) +- eps v (Richardson-extrapolated over eps,
  eps/2, eps/4): ||Phi V - FD||_F / ||Phi V||_F <= 1e-7 (measured 1e-12 ...
  4e-9).
- One step's D (``analysis.tangent_map``) from a start off the manifold, on
  directions off it, against central differences of the core's step (which,
  unlike ``sp.step``, takes a state off the manifold): <= 1e-8 (measured
  ~1e-11); every column of D in the tangent space at (q1, p1) (the step
  carries any variation onto the manifold), so D has rank 2n - 2m;
  ``tangent_map(..., tangent="fd")`` agrees.
- The states of a run are bitwise the same with and without tangent=True
  for newton = "full", "chord", "step".
- On the manifold the map is symplectic: V^T Phi^T J Phi V = V^T J V over
  1000 steps (the restricted form; on R^2n Phi is singular, rank 2n - 2m).

Expected values are differences of the runs' states and the manifold's
formulas written here, never the code under test's tangent.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import TOP, TOP_Q0, TOP_QDOT0
from support.twins import cartesian_pendulum_callables
from symplectic import _core, analysis

METHODS = ["midpoint", "simpson", "lobatto2", "lobatto3", "lobatto4", "lobatto5"]   # every constrained one
N_STEPS = 1000


# ---------------------------------------------------------------- the manifolds, written here
def sphere(r=1.0):
    """g(q) = |q|^2 - r^2 and G(q) = 2 q^T."""
    return (lambda q: np.array([q @ q - r * r]), lambda q: 2 * q[None, :])


def four_bar_loop(l1=0.3, l2=1.0, l3=0.8, d=1.0):
    """The loop closure of systems.four_bar's docstring and its Jacobian."""
    def g(q):
        c, s = np.cos(q), np.sin(q)
        return np.array([l1 * c[0] + l2 * c[1] - l3 * c[2] - d, l1 * s[0] + l2 * s[1] - l3 * s[2]])

    def G(q):
        c, s = np.cos(q), np.sin(q)
        return np.array([[-l1 * s[0], -l2 * s[1], l3 * s[2]], [l1 * c[0], l2 * c[1], -l3 * c[2]]])
    return g, G


def _cases():
    pend = sp.systems.pendulum_cartesian()
    q0 = np.array([0.8, -0.6])
    p0 = 1.3 * np.array([0.6, 0.8])              # speed 1.3 along the circle
    top = sp.systems.lagrange_top_quaternion()
    Q0, P0 = top.from_euler(TOP_Q0, sp.systems.lagrange_top(**TOP).momentum(TOP_Q0, TOP_QDOT0))
    # the same pendulum from Python callables without constraint_hess: the core forms
    # S(q, mu) by central differences of G (about 1e-10 relative)
    c = cartesian_pendulum_callables(2, 1.0, 1.0)
    del c["constraint_hess"]
    pend_py = sp.System(2, **c)
    fb = sp.systems.four_bar()
    f0, fp0 = fb.project([0.4, 0.6, 1.6], [8.0, 0.0, 0.0])   # a crank-rocker in motion
    # pendulum: 20 s, about 9 swings; top: 1 s, half a nutation period, h Omega3 = 0.25;
    # four-bar (m = 2): 1 s, the crank turning 18 times
    return {"pendulum": (pend, q0, p0, 0.02, sphere()), "top": (top, Q0, P0, 1e-3, sphere()),
            "four_bar": (fb, f0, fp0, 1e-3, four_bar_loop()),
            "pendulum_fd_hessian": (pend_py, q0, p0, 0.02, sphere())}


CASES = _cases()
# the runs' central differences: the largest eps (Richardson over eps, eps/2, eps/4)
# whose truncation is below 1e-9 -- the four-bar's 18 crank turns are the most
# nonlinear (at 1e-3 its truncation is 5e-6 for the midpoint rule, at 1e-4 9e-10)
EPS = {"pendulum": 1e-3, "top": 1e-3, "four_bar": 1e-4, "pendulum_fd_hessian": 1e-3}


def hidden(system, G, q, p):
    """K(q, p) = G(q) M(q)^-1 p (m values)."""
    return G(q) @ np.linalg.solve(system.mass(q), p)


def normals(system, man, q, p, d=1e-4):
    """The 2m x 2n Jacobian of (g, K) at (q, p): [G, 0] exactly, K's by central
    differences of step d max(1, |y_j|), Richardson-extrapolated with d / 2
    (truncation O(d^4), rounding ~1e-12)."""
    n, G = len(q), man[1]
    y = np.concatenate([q, p])

    def quotient(j, dj):
        yp, ym = y.copy(), y.copy()
        yp[j] += dj
        ym[j] -= dj
        return (hidden(system, G, yp[:n], yp[n:]) - hidden(system, G, ym[:n], ym[n:])) / (2 * dj)

    dK = np.column_stack([(4 * quotient(j, d * max(1.0, abs(y[j])) / 2)
                           - quotient(j, d * max(1.0, abs(y[j])))) / 3 for j in range(2 * n)])
    Gq = G(q)
    return np.vstack([np.hstack([Gq, np.zeros_like(Gq)]), dK])


def scales(q, p):
    """Per-component weights (1 for q, |p| / |q| for p): perturbations of the
    size of the state in both halves."""
    n = len(q)
    return np.concatenate([np.ones(n), np.full(n, np.linalg.norm(p) / np.linalg.norm(q))])


def tangent_basis(system, man, q, p):
    """A basis (2n x (2n - 2m)) of the tangent space of {g = 0, K = 0} at (q, p):
    W U with U an orthonormal basis of the null space of normals(...) W."""
    W = scales(q, p)
    Nw = normals(system, man, q, p) * W
    _, _, vt = np.linalg.svd(Nw)
    return W[:, None] * vt[Nw.shape[0]:].T


def retract(system, man, q, p):
    """Onto the manifold: q by minimum-norm Newton steps q - G^T (G G^T)^-1 g(q)
    (to rounding), then p - G^T (G M^-1 G^T)^-1 G M^-1 p (the M^-1-orthogonal
    projection onto K = 0)."""
    g, G = man
    for _ in range(30):
        Gq = G(q)
        q = q - Gq.T @ np.linalg.solve(Gq @ Gq.T, g(q))
    Gq, Minv = G(q), np.linalg.inv(system.mass(q))
    return q, p - Gq.T @ np.linalg.solve(Gq @ Minv @ Gq.T, Gq @ Minv @ p)


def _J(n):
    return np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])


# ---------------------------------------------------------------- differences of runs
def end_state(system, q, p, h, method):
    tr = sp.integrate(system, q, p, h, N_STEPS, method=method, store_every=N_STEPS, rtol=1e-15)
    return np.concatenate([tr.q[-1], tr.p[-1]])


def run_difference(system, man, q0, p0, h, method, v, eps):
    """Central difference of the run's end state along v through the retraction;
    Richardson over eps, eps/2, eps/4 (the retraction's second-order term is
    even in eps and cancels in each central difference)."""
    n = len(q0)

    def quotient(e):
        a = end_state(system, *retract(system, man, q0 + e * v[:n], p0 + e * v[n:]), h, method)
        b = end_state(system, *retract(system, man, q0 - e * v[:n], p0 - e * v[n:]), h, method)
        return (a - b) / (2 * e)

    f = [quotient(eps / 2 ** i) for i in range(3)]
    r = [(4 * f[i + 1] - f[i]) / 3 for i in range(2)]
    return (16 * r[1] - r[0]) / 15


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_run_tangent_along_the_manifold_is_the_derivative_of_the_run(case, method):
    system, q0, p0, h, man = CASES[case]
    tr = sp.integrate(system, q0, p0, h, N_STEPS, method=method, tangent=True,
                      store_every=N_STEPS)
    Phi = tr.tangent[-1]
    V = tangent_basis(system, man, q0, p0)
    exact = Phi @ V
    fd = np.column_stack([run_difference(system, man, q0, p0, h, method, V[:, k], EPS[case])
                          for k in range(V.shape[1])])
    err = np.linalg.norm(exact - fd) / np.linalg.norm(exact)
    assert err <= 1e-7
    assert np.linalg.norm(exact) > 5 * np.linalg.norm(V)     # the tangent grew: not near I


# ---------------------------------------------------------------- one step, off the manifold
def step_difference(system, q, p, h, method, v, d):
    """Central difference of the core's step along v (Richardson over d, d/2)."""
    n = len(q)

    def quotient(e):
        a = _core.step(system, q + e * v[:n], p + e * v[n:], h, method, rtol=1e-15)
        b = _core.step(system, q - e * v[:n], p - e * v[n:], h, method, rtol=1e-15)
        return (np.concatenate(a[:2]) - np.concatenate(b[:2])) / (2 * e)

    return (4 * quotient(d / 2) - quotient(d)) / 3


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_one_step_map_off_the_manifold(case, method):
    system, q0, p0, h, man = CASES[case]
    n, m = len(q0), len(man[0](q0))
    rng = np.random.default_rng(7)
    # a start off the manifold too (|g| ~ 1e-3 r^2), and directions in all of R^2n
    W = scales(q0, p0)
    y = np.concatenate([q0, p0]) + 1e-3 * W * rng.standard_normal(2 * n)
    q, p = y[:n], y[n:]
    D = analysis.tangent_map(system, q, p, h, method)
    V = W[:, None] * rng.standard_normal((2 * n, 4))
    assert np.max(np.abs(normals(system, man, q, p) @ V)) > 0.1 * np.max(np.abs(V))   # off it
    fd = np.column_stack([step_difference(system, q, p, h, method, V[:, k], 1e-4)
                          for k in range(V.shape[1])])
    err = np.linalg.norm(D @ V - fd) / np.linalg.norm(D @ V)
    # every column in the tangent space at (q1, p1): the step lands on the manifold
    q1, p1, _ = _core.step(system, q, p, h, method)[:3]
    Nrm = normals(system, man, q1, p1)
    off = np.linalg.norm(Nrm @ D) / (np.linalg.norm(Nrm) * np.linalg.norm(D))
    sv = np.linalg.svd(D, compute_uv=False)
    fd_an = analysis.tangent_map(system, q, p, h, method, tangent="fd")
    err_an = np.max(np.abs(fd_an - D)) / np.max(np.abs(D))
    assert err <= 1e-8
    assert off <= 1e-9
    assert sv[-2 * m] <= 1e-12 * sv[0] and sv[-2 * m - 1] > 1e-3 * sv[0]    # rank 2n - 2m
    assert err_an <= 1e-8                         # tangent_map's own "fd" off the manifold


# ---------------------------------------------------------------- states, symplecticity
@pytest.mark.parametrize("newton", ["full", "chord", "step"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_states_are_bitwise_those_without_the_tangent(case, method, newton):
    system, q0, p0, h, _ = CASES[case]
    a = sp.integrate(system, q0, p0, h, N_STEPS, method=method, newton=newton)
    b = sp.integrate(system, q0, p0, h, N_STEPS, method=method, newton=newton, tangent=True)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
    assert np.array_equal(a.newton_iterations, b.newton_iterations)
    assert b.tangent.shape == (N_STEPS + 1, 2 * len(q0), 2 * len(q0))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_restricted_map_is_symplectic(case, method):
    """V^T Phi^T J Phi V = V^T J V for a basis V of the tangent space at (q0, p0)
    (the restricted form is nondegenerate: V^T J V is invertible)."""
    system, q0, p0, h, man = CASES[case]
    n, m = len(q0), len(man[0](q0))
    Phi = sp.integrate(system, q0, p0, h, N_STEPS, method=method, tangent=True,
                       store_every=N_STEPS).tangent[-1]
    V = tangent_basis(system, man, q0, p0)
    J = _J(n)
    omega0 = V.T @ J @ V
    omega1 = (Phi @ V).T @ J @ (Phi @ V)
    defect = np.linalg.norm(omega1 - omega0) / np.linalg.norm(Phi @ V) ** 2
    sv0 = np.linalg.svd(omega0, compute_uv=False)
    sv = np.linalg.svd(Phi, compute_uv=False)
    assert sv0[-1] > 1e-3 * sv0[0]
    assert defect <= 1e-12
    # on R^2n Phi^T J Phi = J cannot hold: Phi is singular (rank 2n - 2m; the
    # other singular values come in pairs sigma, ~1/sigma: top 1.9e3, 5e-4)
    assert sv[-2 * m] <= 1e-12 * sv[0] and sv[-2 * m - 1] > 1e6 * sv[-2 * m]


def test_symplecticity_defect_refuses_a_constrained_system():
    system, q0, p0, h, _ = CASES["pendulum"]
    with pytest.raises(NotImplementedError, match="constraint manifold only"):
        analysis.symplecticity_defect(system, q0, p0, h)
    assert math.isfinite(np.sum(analysis.tangent_map(system, q0, p0, h)))
