"""Holonomic constraints on the Python side: the check of a constrained initial
state (consistency, rank, the user's derivatives on first use) and the
projection of a state onto the constraint manifold.

The scheme itself (the constrained discrete Euler-Lagrange equations) is in the
C core, csrc/core/sym_constraints.c; a system carries its constraints g(q) = 0
through :class:`symplectic.System` (``constraint=``, ``constraint_jac=``,
``constraint_hess=``), a compiled callback, SymPy (``constraints=``) or a
built-in system.
"""
import sys

import numpy as np

from ._errors import DerivativeError

_G, _JAC, _HESS = 1, 2, 4

#: An initial state is consistent when max_k |g_k(q0)| and max_k |(G M^-1 p0)_k|
#: are at most STATE_RTOL times the size of the terms they are sums of
#: (max_k sum_j |G_kj| |q_j| and max_k sum_j |G_kj| |qdot_j|): about 1e6 times
#: rounding, far below any modelling error, far above what formulas like
#: (l sin a, -l cos a) leave.
STATE_RTOL = 1e-10

#: G(q) counts as rank-deficient when its smallest singular value is below
#: RANK_RTOL times its largest (the core's own test on G M^-1 G^T is the square).
RANK_RTOL = 1e-10

#: The first-use check of constraint_jac / constraint_hess against central
#: differences (step FD_STEP max(1, |q|)): relative to the largest entry.
DERIV_RTOL = 1e-6
FD_STEP = 1e-5


def _eval(system, q, need, mu=None):
    return system._constraint(q, mu, need)


def count(system, q=None):
    """The number of constraints (0: none); evaluates g at q when a system of
    Python callables has not told it yet."""
    m = system.n_constraints
    if m is None and q is not None:
        _eval(system, q, _G)
        m = system.n_constraints
    return m


def _term_scale(G, x):
    """max_k sum_j |G_kj| |x_j|: the size of the terms of G x."""
    return float(np.max(np.abs(G) @ np.abs(x))) if G.size else 0.0


def _fmt(x):
    return np.array2string(np.asarray(x), precision=6, separator=", ", threshold=8)


# ---------------------------------------------------------------- the initial-state check
def check_state(system, method, q, p, qname="q0", pname="p0", check=True):
    """Check a constrained initial state (no-op without constraints):
    ``method`` supports constraints; G(q) has full rank m; on first use the
    user's constraint derivatives agree with finite differences; |g(q)| and
    |G M^-1 p| are within STATE_RTOL of the size of their terms.  Raises
    ValueError (DerivativeError for a wrong derivative) naming the problem."""
    m = count(system, q)
    if not m:
        return
    if not method.constrained:
        raise ValueError(f"method {method.name!r} does not support holonomic constraints (this "
                         f"system has {m}); use a variational method, e.g. 'simpson', "
                         f"'lobatto4', 'midpoint' (symplectic.methods(details=True)"
                         f"[name]['constrained'])")
    g, G, _ = _eval(system, q, _G | _JAC)
    _check_rank(G, m, f"{qname} = {_fmt(q)}")
    if check:
        ensure_derivatives(system, q)
    gs = _term_scale(G, q)
    gbad = float(np.max(np.abs(g)))
    if gbad > STATE_RTOL * gs or (gs == 0.0 and gbad > 0.0):
        raise ValueError(
            f"the initial state violates the constraints: |g({qname})| = {gbad:.3g} (largest of "
            f"g = {_fmt(g)}) exceeds {STATE_RTOL:g} of the size of its terms ({gs:.3g}); "
            f"System.project({qname}, {pname}) returns the nearby consistent state")
    v = np.linalg.solve(system.mass(q), p)
    Gv = G @ v
    vs = _term_scale(G, v)
    vbad = float(np.max(np.abs(Gv)))
    if vbad > STATE_RTOL * vs or (vs == 0.0 and vbad > 0.0):
        raise ValueError(
            f"the initial momentum violates the hidden constraint G(q) M(q)^-1 p = 0 (the "
            f"velocity must be tangent to the constraint manifold): |G M^-1 {pname}| = "
            f"{vbad:.3g} exceeds {STATE_RTOL:g} of the size of its terms ({vs:.3g}); "
            f"System.project({qname}, {pname}) returns the nearby consistent state")


def _check_rank(G, m, where):
    sv = np.linalg.svd(G, compute_uv=False)
    if not (sv.size == m and sv[-1] > RANK_RTOL * sv[0]):
        rank = int(np.sum(sv > RANK_RTOL * sv[0])) if sv.size and sv[0] > 0 else 0
        raise ValueError(
            f"the constraint Jacobian G(q) is rank-deficient at {where}: rank {rank} < m = {m} "
            f"(singular values {_fmt(sv)}); the constraints are dependent there, or the "
            f"configuration is singular -- drop the redundant constraints or start elsewhere")


# ---------------------------------------------------------------- the user's derivatives
def _user_supplied(system):
    """Constraint derivatives written by the user: Python callables or a compiled
    callback; not a built-in's, not SymPy's (derived, not written)."""
    if system.builtin is not None or system._callables is None:
        return False
    symbolic = sys.modules.get("symplectic.symbolic")
    return not (symbolic is not None and isinstance(system, symbolic.SymbolicSystem))


def _names(system):
    c = system._callables or {}
    if "cfunc" in c:
        return "the compiled constraint callback's G (need bit 2)", \
            "the compiled constraint callback's S (need bit 4)"
    return "constraint_jac", "constraint_hess"


def ensure_derivatives(system, q):
    """On first use: G against central differences of g, and S(q, mu) (when
    supplied) against central differences of G^T mu, at q.  A pass is kept on
    the system (as the derivative check of M and V)."""
    if system.__dict__.get("_constraint_verdict") is not None:
        return
    if not getattr(system, "derivative_check", True) or not _user_supplied(system):
        return
    c = system._callables or {}
    check_derivatives(system, q, hess="cfunc" in c or c.get("constraint_hess") is not None)
    system._constraint_verdict = True


def check_derivatives(system, q, mu=None, rtol=DERIV_RTOL, hess=True):
    """{"constraint_jac": relative error, "constraint_hess": relative error or
    None when not checked (``hess`` False)} at q; raises DerivativeError on a
    disagreement.  (S that the core forms by differences itself passes.)
    The tolerance is rtol times the larger of the entries compared and the
    size the differences are taken of (|g| or |G^T mu| over max(1, |q|)), so
    that an identically zero derivative is not failed for the rounding of its
    finite differences."""
    q = np.array(q, dtype=float)
    n = q.size
    g0, G, _ = _eval(system, q, _G | _JAC)
    m = g0.size
    qs = max(1.0, float(np.max(np.abs(q))))
    step = FD_STEP * qs
    Gfd = np.empty((m, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = step
        Gfd[:, j] = (_eval(system, q + e, _G)[0] - _eval(system, q - e, _G)[0]) / (2 * step)
    jname, hname = _names(system)
    report = {"constraint_jac": _compare(G, Gfd, float(np.max(np.abs(g0))) / qs, jname,
                                         "constraint_jac", q, rtol, "dg_k/dq_j at [k, j]"),
              "constraint_hess": None}
    if hess:
        mu = 1.0 + 0.37 * np.arange(m) if mu is None else np.asarray(mu, dtype=float)
        S = _eval(system, q, _HESS, mu)[2]
        Sfd = np.empty((n, n))
        for j in range(n):
            e = np.zeros(n)
            e[j] = step
            Sfd[:, j] = (_eval(system, q + e, _JAC)[1].T @ mu
                         - _eval(system, q - e, _JAC)[1].T @ mu) / (2 * step)
        report["constraint_hess"] = _compare(
            S, Sfd, float(np.max(np.abs(G.T @ mu))) / qs, hname, "constraint_hess", q, rtol,
            "sum_k mu_k d^2 g_k/dq_i dq_j at [i, j]")
    return report


def _compare(A, B, base, name, quantity, q, rtol, what):
    """Relative error of A against B; DerivativeError beyond rtol (see above)."""
    big = max(float(np.max(np.abs(A))), float(np.max(np.abs(B))), base)
    D = np.abs(A - B)
    err = float(np.max(D))
    tol = rtol * big
    if not err <= tol:
        idx = np.unravel_index(int(np.argmax(D)), D.shape)
        raise DerivativeError(
            f"{name} disagrees with finite differences at q = {_fmt(q)}: {what} = "
            f"{list(map(int, idx))}, supplied {A[idx]!r}, finite differences {B[idx]!r} "
            f"(error {err:.3g} > tolerance {tol:.3g})",
            callback=name, quantity=quantity, index=tuple(int(i) for i in idx),
            supplied=float(A[idx]), finite_difference=float(B[idx]), q=q, error=err,
            tolerance=tol)
    return err / big if big > 0 else 0.0


# ---------------------------------------------------------------- the projection
def project(system, q, p=None, qdot=None, tol=1e-14, max_iter=50):
    """(q, p) moved onto the constraint manifold: q by Newton's iteration

        q <- q - M^-1 G(q)^T (G(q) M^-1 G(q)^T)^-1 g(q)        (M = M(q_start))

    (the M-orthogonal projection, to first order) until |g| <= tol times the
    size of its terms, then p by the M(q)^-1-orthogonal projection onto
    G(q) M(q)^-1 p = 0."""
    n = system.n
    q = np.array(q, dtype=float)
    if q.shape != (n,) or not np.isfinite(q).all():
        raise ValueError(f"q must be {n} finite values, got {q!r}")
    m = count(system, q)
    if not m:
        raise ValueError("this system has no constraints to project onto")
    Minv = np.linalg.inv(system.mass(q))
    for it in range(max_iter + 1):
        g, G, _ = _eval(system, q, _G | _JAC)
        gs = _term_scale(G, q)
        if float(np.max(np.abs(g))) <= tol * max(gs, np.finfo(float).tiny):
            break
        if it == max_iter:
            raise ValueError(f"System.project: no convergence in {max_iter} iterations "
                             f"(|g| = {float(np.max(np.abs(g))):.3g}); the state is too far "
                             f"from the constraint manifold, or G(q) is singular there")
        _check_rank(G, m, f"q = {_fmt(q)} (while projecting)")
        W = Minv @ G.T
        dq = W @ np.linalg.solve(G @ W, g)
        q_new = q - dq
        if np.array_equal(q_new, q):
            break                                      # at rounding
        q = q_new
    if p is None and qdot is None:
        return q
    if p is not None and qdot is not None:
        raise TypeError("give p (momenta) or qdot (velocities), not both")
    M = system.mass(q)
    p = M @ np.asarray(qdot, float) if qdot is not None else np.array(p, dtype=float)
    if p.shape != (n,) or not np.isfinite(p).all():
        raise ValueError(f"p must be {n} finite values, got {p!r}")
    G = _eval(system, q, _JAC)[1]
    _check_rank(G, m, f"q = {_fmt(q)}")
    W = np.linalg.solve(M, G.T)                        # M^-1 G^T
    p = p - G.T @ np.linalg.solve(G @ W, W.T @ p)
    return q, p
