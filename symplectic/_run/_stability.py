"""The stability of a step size: the fastest linearised frequency at a state
against the method's limit on the harmonic oscillator.

Every method has a limit omega |h| < c on the harmonic oscillator q'' =
-omega^2 q (``methods(details=True)[m]["stability"]``: Simpson 2 sqrt 2,
rk4 2 sqrt 2, lobatto2 2, lobatto4 3.11, lobatto5 6.05, the midpoint rule,
gauss2 and gauss3 none).  For a mechanical system, omega_max^2 at q is the largest eigenvalue
of the pencil (hess V(q), M(q)) -- the fastest mode of the motion linearised
about q, which is what a step must resolve; with holonomic constraints g(q)
= 0, of the pencil reduced to the constraint manifold's tangent space N
(G N = 0), N^T (hess V + sum_k lambda_k hess g_k) N and N^T M N, with the
multipliers lambda that hold the state on the manifold (a pendulum rod's
tension makes its frequency).  The estimate is local: velocity-dependent
(gyroscopic, centrifugal) stiffness is not included, and a nonlinear motion
may visit stiffer states.  :func:`warn` uses it before a run; the core
stops a run whose energy grows as only an unstable step can make it
(sym_galerkin_roots.c, track_balance), and :func:`describe` completes that error's
message.
"""
import collections
import math
import warnings

import numpy as np

from .._model._errors import StabilityWarning

#: What :func:`estimate` returns: omega_max (rad/s; 0 when no mode
#: oscillates), omega_max |h|, the method's limit on omega |h| (inf: none) and
#: h_max = limit / omega_max (inf when omega_max = 0 or there is no limit).
Estimate = collections.namedtuple("Estimate", "omega_max omega_h limit h_max")


def omega_max(system, q, p=None):
    """The fastest linearised frequency of ``system`` at ``q`` (module doc);
    with constraints the multipliers need the momenta ``p`` (default: at
    rest).  0.0 when no mode oscillates; None when the system's M(q) or
    hess V(q) cannot be evaluated there (an advisory estimate: a callback's
    own exception is left to the run, which reports it with its step)."""
    q = np.asarray(q, dtype=float)
    try:
        M = np.asarray(system.mass(q), dtype=float)
        K = np.asarray(system.potential_hess(q), dtype=float)
        if system.n_constraints:
            M, K = _reduced(system, q, M, K, p)
        w2 = _largest_eigenvalue(M, K)
    except Exception:
        return None
    if w2 is None or not math.isfinite(w2):
        return None
    return math.sqrt(w2) if w2 > 0.0 else 0.0


def _largest_eigenvalue(M, K):
    """The largest lambda of K x = lambda M x (M SPD, both symmetrised); None
    when M is not positive definite.  One and two dimensions in closed form
    (a run's pre-run estimate costs a few microseconds there), more through
    the Cholesky factor and LAPACK's symmetric eigenvalues."""
    n = M.shape[0]
    if n == 0:
        return 0.0
    if n == 1:
        return float(K[0, 0] / M[0, 0]) if M[0, 0] > 0.0 else None
    if n == 2:
        m00, m11, m01 = M[0, 0], M[1, 1], 0.5 * (M[0, 1] + M[1, 0])
        k00, k11, k01 = K[0, 0], K[1, 1], 0.5 * (K[0, 1] + K[1, 0])
        a = m00 * m11 - m01 * m01                   # det(K - lambda M) = a l^2 + b l + c
        if not (m00 > 0.0 and a > 0.0):
            return None
        b = -(m00 * k11 + m11 * k00 - 2.0 * m01 * k01)
        c = k00 * k11 - k01 * k01
        return float((-b + math.sqrt(max(b * b - 4.0 * a * c, 0.0))) / (2.0 * a))
    L = np.linalg.cholesky(0.5 * (M + M.T))
    B = np.linalg.solve(L, np.linalg.solve(L, 0.5 * (K + K.T)).T)      # L^-1 K L^-T
    return float(np.max(np.linalg.eigvalsh(0.5 * (B + B.T))))


def _reduced(system, q, M, K, p):
    """(N^T M N, N^T (K + sum lambda_k hess g_k) N) on the tangent space of
    the constraints, lambda from the constraint rows of the equations of
    motion: G M^-1 (-grad V - G^T lambda) + qdot^T hess g qdot = 0."""
    G = np.atleast_2d(np.asarray(system.constraint_jac(q), dtype=float))
    m = G.shape[0]
    v = np.zeros(len(q)) if p is None else np.linalg.solve(M, np.asarray(p, dtype=float))
    curv = np.array([v @ system.constraint_hess(q, np.eye(m)[k]) @ v for k in range(m)])
    MiGt = np.linalg.solve(M, G.T)
    rhs = -G @ np.linalg.solve(M, system.potential_grad(q)) + curv
    lam = np.linalg.solve(G @ MiGt, rhs)
    Keff = K + system.constraint_hess(q, lam)
    _, s, Vt = np.linalg.svd(G)
    N = Vt[np.sum(s > 1e-12 * s.max()):].T                      # null space of G
    return N.T @ M @ N, N.T @ Keff @ N


def estimate(system, q, h, method, p=None):
    """The :data:`Estimate` of step size ``h`` for ``method`` (a registry row)
    at the state (q, p); None when omega_max cannot be evaluated."""
    w = omega_max(system, q, p)
    if w is None or not method.stability > 0:     # (0: the limit is not determined)
        return None
    limit = method.stability
    h_max = limit / w if w > 0.0 and math.isfinite(limit) else math.inf
    return Estimate(w, w * abs(h), limit, h_max)


def describe(est, method_name, where="there"):
    """The words of an estimate for a message."""
    if est is None:
        return ""
    if not math.isfinite(est.limit):
        return (f"omega_max h = {est.omega_h:.3g} {where} (omega_max = {est.omega_max:g} "
                f"rad/s); {method_name} has no stability limit on the harmonic oscillator")
    return (f"omega_max h = {est.omega_h:.3g} {where} (omega_max = {est.omega_max:g} rad/s, "
            f"the fastest linearised mode); {method_name} is stable for omega h < "
            f"{est.limit:.4g}, i.e. h < h_max = {est.h_max:g} s")


def warn(system, q0, p0, h, method, stacklevel=2):
    """A :class:`symplectic.StabilityWarning` before a run whose step is at or beyond the
    method's limit for the fastest mode at (q0, p0); ``stacklevel`` counts
    from the caller (2: the caller's caller, the user's line)."""
    est = estimate(system, q0, h, method, p0)
    if est is None or not est.omega_h >= est.limit:
        return est
    warnings.warn(
        f"{method.name} with |h| = {abs(h):g} s at or beyond its stability limit for this "
        f"system: {describe(est, method.name, 'at q0')}; the numerical solution grows "
        f"exponentially on that mode",
        StabilityWarning, stacklevel=stacklevel + 1)
    return est
