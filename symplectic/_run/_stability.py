"""The stability of a step size: the fastest linearised frequency at a state
against the method's limit on the harmonic oscillator.

Every method has a limit omega |h| < c on the harmonic oscillator q'' =
-omega^2 q (``methods(details=True)[m]["stability"]``: Simpson 2 sqrt 2,
rk4 2 sqrt 2, lobatto2 2, lobatto4 3.11, lobatto5 6.05, lobatto6 6.25,
lobatto7 9.27, the midpoint rule,
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
message (with the estimate at the run's start: symplectic._run._failures.unstable_reason).

The methods without a limit (the midpoint rule, gauss2, gauss3: A-stable)
keep every mode bounded, but a mode stepped at omega h >= :data:`RESOLUTION`
= 2 pi is not resolved: its numerical phase per step (:func:`phase`) is far
from the exact omega h, and :func:`warn` says so (the threshold's reasons:
:data:`RESOLUTION`).
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


#: omega_max |h| from which :func:`warn` tells a method without a stability
#: limit that the fastest mode is not resolved: 2 pi, one step a period of
#: that mode or longer.  There the steps sample the mode at most once a
#: period (the exact motion turns a full period or more per step; even its
#: samples alias it from omega h = pi on), and the numerical phase per step
#: (:func:`phase`) is short of omega h by 59.8 % for the midpoint rule
#: (2 atan(pi) = 2.525 rad instead of 2 pi), 30.0 % for gauss2 (4.401 rad) and
#: 11.1 % for gauss3 (5.584 rad); the shortfall grows to 100 % as omega h
#: grows (the numerical phase per step stays below s pi, s the Gauss points:
#: at omega h = 50, 3.06, 6.04 and 8.94 rad).  Not pi: between pi and 2 pi
#: the A-stable rules are the documented choice for stepping over a stiff
#: mode on purpose (gauss3's phase is still within 0.6 % at pi, 8 % at
#: 5.66), and a warning on every such run would be noise.  The methods with
#: a finite limit have their own warning at and beyond it; all limits are
#: below 2 pi but lobatto7's 9.27, and from 2 pi to 9.27 a lobatto7 step is
#: stable and unresolved: it gets this warning there.
RESOLUTION = 2.0 * math.pi

#: The largest relative phase error per step that :func:`resolving_step`
#: counts as resolved.
PHASE_TOL = 0.01


def _gauss_points(method):
    """s of a method without a stability limit: each is the s-stage Gauss
    collocation method on the harmonic oscillator (the midpoint rule s = 1,
    gauss2, gauss3; order 2 s), whose one-step map has the eigenvalues
    R(+-i omega h), R the (s, s) Pade approximant of exp (Hairer, Lubich &
    Wanner, GNI II.1.3, IV.3; tests/run/test_stability.py checks :func:`phase`
    against each such method's tangent map).  None for a method with a limit."""
    if math.isfinite(method.stability) or not method.stability > 0 or method.order % 2:
        return None
    return method.order // 2


def phase(method, omega_h):
    """The numerical phase per step (rad, unwrapped) of ``method``'s step on
    the harmonic oscillator at omega |h| = ``omega_h``, for a method without
    a stability limit: 2 arg P_s(i omega h), P_s the numerator of the (s, s)
    Pade approximant of exp -- the midpoint rule's 2 atan(omega h / 2) for
    s = 1 -- where the exact motion turns omega h.  It is summed over the
    roots r_j of P_s (all in the left half plane, so that each term is a
    continuous atan): 2 sum_j atan((omega h - Im r_j) / -Re r_j), below s pi.
    None for a method with a finite (or undetermined) limit."""
    s = _gauss_points(method)
    if s is None:
        return None
    y = abs(float(omega_h))
    c = [math.factorial(2 * s - k) * math.factorial(s)
         / (math.factorial(2 * s) * math.factorial(k) * math.factorial(s - k))
         for k in range(s, -1, -1)]                                  # highest power first
    return 2.0 * sum(math.atan2(y - r.imag, -r.real) for r in np.roots(c))


def resolving_step(method, w):
    """The largest |h| that resolves a mode of frequency ``w`` (rad/s) for a
    method without a stability limit: at least two steps a period (omega h
    <= pi) and a numerical phase per step within :data:`PHASE_TOL` (1 %) of
    the exact (omega h <= 0.350 for the midpoint rule, 1.716 for gauss2;
    gauss3's 3.44 is beyond pi).  None when :func:`phase` does not know the
    method or w is not positive."""
    if phase(method, 1.0) is None or not w > 0.0:
        return None
    lo, hi = 0.0, math.pi                 # the relative phase error grows with omega h
    if 1.0 - phase(method, hi) / hi > PHASE_TOL:
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if 1.0 - phase(method, mid) / mid <= PHASE_TOL else (lo, mid)
    else:
        lo = hi
    return lo / w


def describe(est, method_name, where="there"):
    """The words of an estimate for a message (``where``: the state it is at,
    e.g. "at q0", "at the run's start")."""
    if est is None:
        return ""
    if not math.isfinite(est.limit):
        return (f"omega_max h = {est.omega_h:.3g} {where} (omega_max = {est.omega_max:g} "
                f"rad/s); {method_name} has no stability limit on the harmonic oscillator")
    return (f"omega_max h = {est.omega_h:.3g} {where} (omega_max = {est.omega_max:g} rad/s, "
            f"the fastest linearised mode); {method_name} is stable for omega h < "
            f"{est.limit:.4g}, i.e. h < h_max = {est.h_max:g} s")


def describe_short(est, where):
    """The words of a second estimate in a message, after :func:`describe`'s
    first (the method and its limit named there)."""
    if est is None:
        return ""
    text = f"{where}: omega_max h = {est.omega_h:.3g} (omega_max = {est.omega_max:g} rad/s"
    return text + (f", h_max = {est.h_max:g} s)" if math.isfinite(est.h_max) else ")")


def warn(system, q0, p0, h, method, stacklevel=2):
    """A :class:`symplectic.StabilityWarning` before a run whose step is at
    or beyond the method's limit for the fastest mode at (q0, p0); for a
    method without a limit (the midpoint rule, gauss2, gauss3) or with one
    above 2 pi (lobatto7), one whose step is below the limit and at
    omega_max |h| >= :data:`RESOLUTION` (2 pi), where the fastest
    mode stays bounded but its phase is not resolved: the message gives
    omega_max, omega_max h, the method's phase per step against the exact
    one (:func:`phase`) and the step that resolves it
    (:func:`resolving_step`).  ``stacklevel`` counts from the caller (2: the
    caller's caller, the user's line).  Returns the estimate (or None)."""
    est = estimate(system, q0, h, method, p0)
    if est is None:
        return est
    if math.isfinite(est.limit) and est.omega_h >= est.limit:
        warnings.warn(
            f"{method.name} with |h| = {abs(h):g} s at or beyond its stability limit for "
            f"this system: {describe(est, method.name, 'at q0')}; the numerical solution "
            f"grows exponentially on that mode",
            StabilityWarning, stacklevel=stacklevel + 1)
    elif est.omega_h >= RESOLUTION:
        warnings.warn(_unresolved(est, h, method), StabilityWarning, stacklevel=stacklevel + 1)
    return est


def _unresolved(est, h, method):
    """The words of :func:`warn` at omega_max |h| >= RESOLUTION below the
    method's limit (none, or lobatto7's 9.27)."""
    w, wh = est.omega_max, est.omega_h
    msg = (f"{method.name} with |h| = {abs(h):g} s does not resolve the fastest mode of this "
           f"system: omega_max h = {wh:.3g} at q0 (omega_max = {w:g} rad/s, the fastest "
           f"linearised mode: {wh / (2.0 * math.pi):.3g} of its periods per step); "
           + (f"{method.name} has no stability limit" if not math.isfinite(est.limit) else
              f"the step is below {method.name}'s stability limit ({est.limit:.3g})")
           + ", so the mode stays bounded, but the fast phase is not resolved: ")
    theta = phase(method, wh)
    if theta is not None:
        msg += (f"the step turns it by {theta:.3g} rad instead of {wh:.3g} (a frequency of "
                f"{theta / abs(h):.3g} rad/s instead of {w:g})")
    else:
        msg += "its numerical frequency is wrong"
    h_res = resolving_step(method, w)
    if h_res is not None:
        msg += (f"; h <= {h_res:.3g} s resolves it (at least two steps a period, its phase per "
                f"step within {100 * PHASE_TOL:g} %)")
    else:
        msg += f"; h <= {math.pi / w:.3g} s gives it at least two steps a period"
    return msg + " -- unless stepping over that mode is meant"
