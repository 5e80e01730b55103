"""Dense output: q between the steps from the scheme's own interpolation.

A Galerkin variational integrator represents q on each step [t_j, t_j + h] by
the Lagrange polynomial of degree s - 1 through its s nodes q(t_j + c_a h)
(the papers' finite-element interpolation; for Simpson the parabola through
q_j, q_{j+1/2}, q_{j+1}).  Evaluating it between the nodes ("lagrange") is
accurate to order s, below the scheme's order 2s - 2 at the nodes.  The
"hermite" variant also matches the end velocities qdot = M(q)^-1 p of the
step (degree s + 1) and reaches order min(s + 1, 2s - 2).

The *state* between the nodes (:meth:`Trajectory.dense_state`, ``t_eval=``,
event location) is that Hermite polynomial and its time derivative: q(t),
qdot(t) = dq/dt, and p(t) = M(q(t)) qdot(t).  So qdot = M(q)^-1 p holds
exactly between the nodes as at them, and at a step's ends the state is the
step's own (q_j, p_j) (the polynomial matches q_j and M(q_j)^-1 p_j).  qdot
and p lose one order to the differentiation: order min(s, 2s - 2) where q
has min(s + 1, 2s - 2) (rk4: the cubic Hermite through (q, qdot) at both
ends, q of order 4, qdot and p of order 3); measured in
tests/run/test_timespans.py.
"""
import functools

import numpy as np

from .._model import _registry


def _lagrange_values(c, theta):
    """(len(theta), s) values of the Lagrange basis on nodes c at theta."""
    c = np.asarray(c, dtype=float)
    theta = np.asarray(theta, dtype=float)[:, None]
    s = len(c)
    out = np.ones((theta.shape[0], s))
    for a in range(s):
        for m in range(s):
            if m != a:
                out[:, a] *= (theta[:, 0] - c[m]) / (c[a] - c[m])
    return out


@functools.lru_cache(maxsize=32)
def _hermite_coef(c):
    """Monomial coefficients (column j: basis j) of the degree-(s+1) Hermite
    basis on the nodes c (a tuple): values at the nodes, P'(0), P'(1)."""
    c = np.asarray(c, dtype=float)
    s = len(c)
    deg = s + 1
    k = np.arange(deg + 1)
    V = np.zeros((deg + 1, deg + 1))
    V[:s] = c[:, None] ** k[None, :]
    V[s, 1] = 1.0                                     # P'(0)
    V[s + 1, 1:] = k[1:]                              # P'(1)
    coef = np.linalg.inv(V)
    coef.flags.writeable = False
    return coef


def _hermite_values(c, theta):
    """(len(theta), s + 2) values of the basis of the degree-(s+1) polynomial
    fixed by its values at the nodes c and its theta-derivatives at 0 and 1."""
    coef = _hermite_coef(tuple(float(x) for x in c))
    k = np.arange(coef.shape[0])
    theta = np.asarray(theta, dtype=float)
    powers = theta[:, None] ** k[None, :]
    return powers @ coef


def _hermite_derivatives(c, theta):
    """(len(theta), s + 2) theta-derivatives of the basis of _hermite_values."""
    coef = _hermite_coef(tuple(float(x) for x in c))
    deg = coef.shape[0] - 1
    k = np.arange(deg + 1)
    theta = np.asarray(theta, dtype=float)
    dpow = np.zeros((theta.shape[0], deg + 1))
    dpow[:, 1:] = k[1:] * theta[:, None] ** (k[1:] - 1)[None, :]
    return dpow @ coef


def hermite_state(c, theta, nodes, v0, v1, h):
    """q and qdot of the Hermite dense polynomial of steps at theta in [0, 1].

    nodes (m, s, n): each point's step nodes; v0, v1 (m, n): the velocities
    M^-1 p at the step's ends; h the step.  Returns q, qdot (m, n)."""
    s = len(c)
    w = _hermite_values(c, theta)
    dw = _hermite_derivatives(c, theta)
    # in increments from the first node: the basis reproduces constants (the
    # node weights sum to 1, their derivatives to 0), so this is the same
    # polynomial, without the rounding of the basis' coefficients times |q|
    # (which at a node made qdot differ from M^-1 p by ~eps |q| / h)
    q0 = nodes[:, 0, :]
    dX = nodes[:, 1:, :] - q0[:, None, :]
    q = (q0 + np.einsum("ma,man->mn", w[:, 1:s], dX)
         + h * (w[:, s, None] * v0 + w[:, s + 1, None] * v1))
    qdot = (np.einsum("ma,man->mn", dw[:, 1:s], dX) / h
            + dw[:, s, None] * v0 + dw[:, s + 1, None] * v1)
    # at the ends the step's own state (the basis there is a unit vector up to
    # the rounding of its coefficients)
    end0, end1 = theta == 0.0, theta == 1.0
    q[end0], qdot[end0] = nodes[end0, 0], v0[end0]
    q[end1], qdot[end1] = nodes[end1, s - 1], v1[end1]
    return q, qdot


def dense_state(traj, t):
    """(q, p, qdot) at the times t from the steps of ``traj`` (module doc)."""
    c = _registry.METHODS[traj.method].nodes
    t, scalar, j, theta = _locate(traj, t)
    nodes = _nodes(traj)
    v = traj.qdot
    q, qdot = hermite_state(c, theta, nodes[j], v[j], v[j + 1], traj.h)
    p = traj.system.momentum(q, qdot)
    return (q[0], p[0], qdot[0]) if scalar else (q, p, qdot)


def _locate(traj, t):
    """The times as an array, whether a scalar was given, and each time's step
    index j and position theta in it."""
    t = np.asarray(t, dtype=float)
    scalar = t.ndim == 0
    t = np.atleast_1d(t)
    N = traj.n_steps
    if N == 0:
        raise ValueError("dense output needs at least one step")
    lo, hi = min(traj.t[0], traj.t[-1]), max(traj.t[0], traj.t[-1])
    tol = 1e-12 * max(1.0, abs(hi), abs(lo))
    if np.any(t < lo - tol) or np.any(t > hi + tol):
        raise ValueError(f"times must lie in [{lo:g}, {hi:g}], the integrated interval")
    u = (t - traj.t[0]) / traj.h
    j = np.clip(np.floor(u).astype(int), 0, N - 1)
    return t, scalar, j, u - j


def _nodes(traj):
    """(N, s, n): the nodes of every step."""
    s = len(_registry.METHODS[traj.method].nodes)
    N, n = traj.n_steps, traj.q.shape[1]
    nodes = np.empty((N, s, n))
    nodes[:, 0] = traj.q[:-1]
    nodes[:, -1] = traj.q[1:]
    if s > 2:
        mid = traj.q_mid if traj.q_mid.ndim == 3 else traj.q_mid[:, None, :]
        nodes[:, 1:-1] = mid
    return nodes


def dense(traj, t, kind="lagrange"):
    """q at the times t (array_like) from the steps of ``traj``; see module doc."""
    c = _registry.METHODS[traj.method].nodes
    s = len(c)
    h = traj.h
    t, scalar, j, theta = _locate(traj, t)
    nodes = _nodes(traj)
    if kind == "lagrange":
        w = _lagrange_values(c, theta)                            # (m, s)
        q = np.einsum("ma,man->mn", w, nodes[j])
    elif kind == "hermite":
        v = traj.system.velocity(traj.q, traj.p)                  # (N+1, n)
        w = _hermite_values(c, theta)                             # (m, s + 2)
        q = (np.einsum("ma,man->mn", w[:, :s], nodes[j])
             + h * (w[:, s, None] * v[j] + w[:, s + 1, None] * v[j + 1]))
    else:
        raise ValueError(f"kind must be 'lagrange' or 'hermite', got {kind!r}")
    return q[0] if scalar else q
