"""The exact tangent of a constrained run (csrc/sym_constraints_tangent.c):
``integrate(..., tangent=True).tangent`` and ``analysis.tangent_map`` for the
built-in constrained systems, every Galerkin method.

The systems: ``systems.pendulum_cartesian()`` (a point mass on a rod of length
1 in the plane, q = (x, y)) and ``systems.lagrange_top_quaternion()`` (TOP
Table 3's heavy top in a unit quaternion, started from the papers' motion:
theta0 = pi/3, psidot0 = 252 rad/s).  Both constraint manifolds are spheres,
|q| = r (r = 1), so the test writes them itself: g(q) = |q|^2 - r^2, the
hidden constraint K(q, p) = q . M(q)^-1 p (M from the system's model), and
the manifold {g = 0, K = 0} of dimension 2n - 2.  Its tangent space at
(q, p) is the null space of the 2 x 2n Jacobian of (g, K) (K's by central
differences); a retraction onto it projects q radially onto the sphere and
then p M^-1-orthogonally onto K = 0.

- Over 1000 steps, Phi = tangent[-1] applied to a basis V of the tangent
  space at (q0, p0) against central differences of ``integrate`` from the
  retracted states (q0, p0) + eps v (Richardson-extrapolated over eps, eps/2,
  eps/4 so that the truncation error, not the rounding of the runs, is
  removed): ||Phi V - FD||_F / ||Phi V||_F <= 1e-7.
- One step's D (``analysis.tangent_map``) on directions off the manifold
  against central differences of the core's step (which, unlike
  ``sp.step``, does not refuse a state off the manifold): <= 1e-8; every
  column of D in the tangent space at (q1, p1) (the step carries any
  variation onto the manifold), so D has rank 2n - 2.
- The states of a run are bitwise the same with and without tangent=True
  for newton = "full", "chord", "step".
- On the manifold the map is symplectic: V^T Phi^T J Phi V = V^T J V over
  1000 steps (the restricted form; on R^2n Phi is singular, rank 2n - 2).

Expected values are differences of the runs' states and the manifold's
formulas written here, never the code under test's tangent.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import TOP, TOP_Q0, TOP_QDOT0
from symplectic import _core, analysis

METHODS = ["midpoint", "simpson", "lobatto4", "lobatto5"]
N_STEPS = 1000


def _cases():
    pend = sp.systems.pendulum_cartesian()
    q0 = np.array([0.8, -0.6])
    p0 = 1.3 * np.array([0.6, 0.8])              # speed 1.3 along the circle
    top = sp.systems.lagrange_top_quaternion()
    Q0, P0 = top.from_euler(TOP_Q0, sp.systems.lagrange_top(**TOP).momentum(TOP_Q0, TOP_QDOT0))
    # pendulum: 20 s, about 9 swings; top: 1 s, half a nutation period, h Omega3 = 0.25
    return {"pendulum": (pend, q0, p0, 0.02), "top": (top, Q0, P0, 1e-3)}


CASES = _cases()


# ---------------------------------------------------------------- the manifold, written here
def hidden(system, q, p):
    """K(q, p) = q . M(q)^-1 p: G M^-1 p for g = |q|^2 - r^2, up to the factor 2."""
    return q @ np.linalg.solve(system.mass(q), p)


def normals(system, q, p, d=1e-4):
    """The 2 x 2n Jacobian of (g, K) at (q, p): 2 q exactly, K's by central
    differences of step d max(1, |y_j|), Richardson-extrapolated with d / 2
    (truncation O(d^4), rounding ~1e-12)."""
    n = len(q)
    y = np.concatenate([q, p])

    def quotient(j, dj):
        yp, ym = y.copy(), y.copy()
        yp[j] += dj
        ym[j] -= dj
        return (hidden(system, yp[:n], yp[n:]) - hidden(system, ym[:n], ym[n:])) / (2 * dj)

    dK = np.empty(2 * n)
    for j in range(2 * n):
        dj = d * max(1.0, abs(y[j]))
        dK[j] = (4 * quotient(j, dj / 2) - quotient(j, dj)) / 3
    return np.vstack([np.concatenate([2 * q, np.zeros(n)]), dK])


def scales(q, p):
    """Per-component weights (1 for q, |p| / |q| for p): perturbations of the
    size of the state in both halves."""
    n = len(q)
    return np.concatenate([np.ones(n), np.full(n, np.linalg.norm(p) / np.linalg.norm(q))])


def tangent_basis(system, q, p):
    """A basis (2n x (2n - 2)) of the tangent space of {g = 0, K = 0} at (q, p):
    W U with U an orthonormal basis of the null space of normals(...) W."""
    W = scales(q, p)
    _, _, vt = np.linalg.svd(normals(system, q, p) * W)
    return W[:, None] * vt[2:].T


def retract(system, q, p, r=1.0):
    """Onto the manifold: q radially onto |q| = r, then p - q (q.M^-1 p) / (q.M^-1 q)
    (the M^-1-orthogonal projection onto K = 0)."""
    q = q * (r / np.linalg.norm(q))
    Minv = np.linalg.inv(system.mass(q))
    return q, p - q * (q @ Minv @ p) / (q @ Minv @ q)


def _J(n):
    return np.block([[np.zeros((n, n)), np.eye(n)], [-np.eye(n), np.zeros((n, n))]])


# ---------------------------------------------------------------- differences of runs
def end_state(system, q, p, h, method):
    tr = sp.integrate(system, q, p, h, N_STEPS, method=method, store_every=N_STEPS, rtol=1e-15)
    return np.concatenate([tr.q[-1], tr.p[-1]])


def run_difference(system, q0, p0, h, method, v, eps):
    """Central difference of the run's end state along v through the retraction;
    Richardson over eps, eps/2, eps/4 (the retraction's second-order term is
    even in eps and cancels in each central difference)."""
    n = len(q0)

    def quotient(e):
        a = end_state(system, *retract(system, q0 + e * v[:n], p0 + e * v[n:]), h, method)
        b = end_state(system, *retract(system, q0 - e * v[:n], p0 - e * v[n:]), h, method)
        return (a - b) / (2 * e)

    f = [quotient(eps / 2 ** i) for i in range(3)]
    r = [(4 * f[i + 1] - f[i]) / 3 for i in range(2)]
    return (16 * r[1] - r[0]) / 15


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_run_tangent_along_the_manifold_is_the_derivative_of_the_run(case, method):
    system, q0, p0, h = CASES[case]
    tr = sp.integrate(system, q0, p0, h, N_STEPS, method=method, tangent=True,
                      store_every=N_STEPS)
    Phi = tr.tangent[-1]
    V = tangent_basis(system, q0, p0)
    exact = Phi @ V
    fd = np.column_stack([run_difference(system, q0, p0, h, method, V[:, k], 1e-3)
                          for k in range(V.shape[1])])
    err = np.linalg.norm(exact - fd) / np.linalg.norm(exact)
    assert err <= 1e-7
    assert np.linalg.norm(exact) > 10.0          # the runs' tangents grow: not a near-identity


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
    system, q0, p0, h = CASES[case]
    n = len(q0)
    rng = np.random.default_rng(7)
    # a start off the manifold too (|g| ~ 1e-3 r^2), and directions in all of R^2n
    W = scales(q0, p0)
    y = np.concatenate([q0, p0]) + 1e-3 * W * rng.standard_normal(2 * n)
    q, p = y[:n], y[n:]
    D = analysis.tangent_map(system, q, p, h, method)
    V = W[:, None] * rng.standard_normal((2 * n, 4))
    assert np.max(np.abs(normals(system, q, p) @ V)) > 0.1 * np.max(np.abs(V))   # off it
    fd = np.column_stack([step_difference(system, q, p, h, method, V[:, k], 1e-4)
                          for k in range(V.shape[1])])
    err = np.linalg.norm(D @ V - fd) / np.linalg.norm(D @ V)
    # every column in the tangent space at (q1, p1): the step lands on the manifold
    q1, p1, _ = _core.step(system, q, p, h, method)[:3]
    Nrm = normals(system, q1, p1)
    off = np.linalg.norm(Nrm @ D) / (np.linalg.norm(Nrm) * np.linalg.norm(D))
    sv = np.linalg.svd(D, compute_uv=False)
    fd_an = analysis.tangent_map(system, q, p, h, method, tangent="fd")
    err_an = np.max(np.abs(fd_an - D)) / np.max(np.abs(D))
    assert err <= 1e-8
    assert off <= 1e-9
    assert sv[-2] <= 1e-12 * sv[0] and sv[-3] > 1e-3 * sv[0]    # rank 2n - 2
    assert err_an <= 1e-8                         # tangent_map's own "fd" off the manifold


# ---------------------------------------------------------------- states, symplecticity
@pytest.mark.parametrize("newton", ["full", "chord", "step"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_states_are_bitwise_those_without_the_tangent(case, method, newton):
    system, q0, p0, h = CASES[case]
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
    system, q0, p0, h = CASES[case]
    n = len(q0)
    Phi = sp.integrate(system, q0, p0, h, N_STEPS, method=method, tangent=True,
                       store_every=N_STEPS).tangent[-1]
    V = tangent_basis(system, q0, p0)
    J = _J(n)
    omega0 = V.T @ J @ V
    omega1 = (Phi @ V).T @ J @ (Phi @ V)
    defect = np.linalg.norm(omega1 - omega0) / np.linalg.norm(Phi @ V) ** 2
    sv0 = np.linalg.svd(omega0, compute_uv=False)
    sv = np.linalg.svd(Phi, compute_uv=False)
    assert sv0[-1] > 1e-3 * sv0[0]
    assert defect <= 1e-12
    # on R^2n Phi^T J Phi = J cannot hold: Phi is singular (rank 2n - 2; the
    # other singular values come in pairs sigma, ~1/sigma: top 1.9e3, 5e-4)
    assert sv[-2] <= 1e-12 * sv[0] and sv[-3] > 1e6 * sv[-2]


def test_symplecticity_defect_refuses_a_constrained_system():
    system, q0, p0, h = CASES["pendulum"]
    with pytest.raises(NotImplementedError, match="constraint manifold only"):
        analysis.symplecticity_defect(system, q0, p0, h)
    assert math.isfinite(np.sum(analysis.tangent_map(system, q0, p0, h)))
