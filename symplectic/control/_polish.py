"""The Newton polish of a solved control problem: Newton's iteration on the
first-order conditions of its NLP (:mod:`._nlp`) from the solver's (z, nu),

    [H  A^T] [dz ]     [g + A^T nu]
    [A   0 ] [dnu] = - [c         ],

H the Hessian of the Lagrangian (:mod:`._hessian`: the dynamics' curvature
exact or by differences), A the Jacobian of the equations and of the path
rows held at a bound, the variables at a bound held there.  A solver stops
on its own measures (SLSQP on the change of the cost, which leaves the
inputs only about sqrt(tol) accurate; IPOPT on its scaled residuals;
trust-constr also on its trust radius); the polish brings the unscaled
first-order residual (:meth:`NLP.kkt_residual`) to ``tol``, and costs
nothing more than that residual when the solver's point is already there.

The matrix is sparse -- one block per interval, as the NLP's Jacobian and
Hessian are -- and is factorised by SuperLU (SciPy's ``splu``), so that an
iteration costs about one evaluation of the Hessian, not a dense solve of
order n_variables (3.25 s against 0.51 s for the whole solve of a cart-pole
on 160 lobatto5 intervals, before).  A singular matrix (a redundant end
condition, a Hessian singular on the constraints' tangent space, the
degenerate first-order conditions of a bang-bang optimum) is solved by
iterative refinement on the matrix regularised by +-1e-8 of its largest
entry on its diagonal (:func:`_refined`: one sparse factorisation), else by
the dense least squares up to :data:`DENSE_LIMIT` unknowns.  The unknowns are the step
in the primal variables and in the multipliers, so that the least-squares
step of a singular system -- the least change -- keeps the solver's
multipliers where the conditions leave them free."""
import numpy as np

from .._model._errors import ConvergenceError
from . import _hessian

#: Up to this many rows of the Newton matrix a singular one takes the dense
#: least-squares step.
DENSE_LIMIT = 1000


def polish(nlp, z, nu, tol, active=None, iters=8):
    """Newton's iteration from (z, nu) until the residual is below ``tol`` or
    stops falling (at most ``iters`` iterations), with active sets for the
    variables' bounds and the path rows.  ``active`` (the solver's verdict: a
    bound multiplier that is not zero) puts those variables on their bound
    first, and those left near a bound are put on it when that lowers the
    residual (:func:`_snap`); a variable at a bound is held there, let go when its bound's
    multiplier comes out with the wrong sign, and a variable a step takes
    past its bound is clipped to it and held from then on.  The path rows
    active at the start (:meth:`NLP.path_active`) are held at their bound as
    equalities, the others left out (their multipliers 0); a held row whose
    multiplier comes out with the bound's wrong sign is let go, and a row a
    step takes past its bound is held from then on (the step solved again).
    An iteration that changes an active set goes on from its point even
    when the residual has not fallen yet; a step that cannot be solved
    (singular and inconsistent) puts the free variables near a bound on it
    and holds them, once (:func:`_pin`).  Returns the best (z, nu,
    residual) met."""
    neq, plo, phi = nlp.n_eq, nlp.path_lower, nlp.path_upper
    nu = np.asarray(nu, dtype=float)
    if len(nu) < neq + len(plo):      # a solver without the path's
        nu = np.concatenate([nu, np.zeros(neq + len(plo) - len(nu))])
    first = (z, nu, nlp.kkt_residual(z, nu))
    if first[2] <= tol:
        return first
    act, at_hi = nlp.path_active(z, nu)
    rows = np.concatenate([np.arange(neq), neq + np.flatnonzero(act)])
    target = np.concatenate([np.zeros(neq), np.where(at_hi, phi, plo)])
    if active is not None and active.any():
        z = z.copy()
        lo_side = np.abs(z - nlp.lower) <= np.abs(nlp.upper - z)
        z[active] = np.where(lo_side, nlp.lower, nlp.upper)[active]
    try:
        best = cur = (z, nu, nlp.kkt_residual(z, nu))
    except ConvergenceError:
        return first
    held = ~nlp.inside(z)
    best = cur = _snap(nlp, best, held)
    held = ~nlp.inside(best[0])
    hess = _hessian.lagrangian_sparse(nlp) if _has_scipy() else None
    pinned = False
    for _ in range(iters):
        z, nu, res = cur
        if best[2] <= tol:
            break
        free = ~held
        try:
            sol = _newton_step(nlp, hess, z, nu, rows, free, target)
        except ConvergenceError:     # a step the differences could not take
            break
        if sol is None:
            if pinned:
                break
            # a singular, inconsistent system: the free variables near a bound are put
            # on it and held (an active-set guess), once
            pinned = True
            cur, held = _pin(nlp, cur, held)
            if cur is None:
                break
            continue
        z1 = z.copy()
        z1[free] += sol[:free.sum()]
        crossed = free & ((z1 < nlp.lower) | (z1 > nlp.upper))
        z1 = np.clip(z1, nlp.lower, nlp.upper)
        nu1 = np.zeros_like(nu)
        nu1[rows] = sol[free.sum():]
        # the held path rows: one whose multiplier has the bound's wrong sign is let
        # go (the optimum leaves it, or it is degenerate), one that the step takes
        # past its bound is held (an active-set iteration), and the step solved again
        wrong = act & np.where(at_hi, nu1[neq:] < 0, nu1[neq:] > 0)
        if wrong.any():
            act &= ~wrong
        else:
            try:
                r1 = nlp.kkt_residual(z1, nu1)
                cp = nlp.constraints(z1)[neq:]
                loose = _wrong_bounds(nlp, z1, nu1, held & ~crossed, tol)
            except ConvergenceError:    # a step the integrator cannot take: keep the best
                break
            past = ~act & ((cp > phi) | (cp < plo))
            if r1 < best[2]:
                best = (z1, nu1, r1)
            elif not (past.any() or crossed.any() or loose.any()):
                break
            held = (held & ~loose) | crossed
            act |= past
            at_hi = np.where(past, cp > phi, at_hi)
            target[neq:] = np.where(at_hi, phi, plo)
            cur = (z1, nu1, r1)
        rows = np.concatenate([np.arange(neq), neq + np.flatnonzero(act)])
    return best if best[2] < first[2] else first


#: The distances (relative) within which :func:`_snap` tries to put a variable on
#: its bound, nearest first.
SNAP = (1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


def _snap(nlp, point, held):
    """``point`` (z, nu, residual) with the variables that an interior point
    method left near a bound put on it -- inputs of a bang-bang arc whose
    bound multiplier is ~0 (a node's two values whose sum alone is fixed, say),
    which the solver's verdict does not count as active: within each distance
    of :data:`SNAP` in turn (relative), all of them at once when that lowers
    the residual."""
    for rel in SNAP:
        z, nu, res = point
        at_lo, at_hi = nlp.at_bound(z, rel)
        lo = ~held & at_lo & (z != nlp.lower)
        hi = ~held & ~lo & at_hi & (z != nlp.upper)
        if not (lo.any() or hi.any()):
            continue
        z1 = _on_bound(nlp, z, lo, hi)
        try:
            r1 = nlp.kkt_residual(z1, nu)
        except ConvergenceError:
            return point
        if r1 < res:
            point = (z1, nu, r1)
    return point


def _pin(nlp, point, held):
    """(``point`` with the free variables within the widest distance of
    :data:`SNAP` of a bound put on it, the held set with them), or (None,
    held) when there are none.  For a Newton matrix that is singular and
    inconsistent: a bang-bang optimum whose switch falls inside an interval,
    where the inputs of the nodes either side of the switch stay a little
    off their bound (the crane's minimum time on 160 lobatto5 intervals:
    1.2e-5 relative) and their differences are directions with almost no
    curvature (4e-11 of the matrix's largest singular value) that the
    gradient does not vanish on -- held on the bound they leave the
    first-order conditions of the input at the switch, which the next step
    solves.  Unlike :func:`_snap` this does not ask the residual to fall at
    once (it falls after the step; the polish keeps the best point met)."""
    z, nu, _ = point
    at_lo, at_hi = nlp.at_bound(z, SNAP[-1])
    lo = ~held & at_lo
    hi = ~held & ~lo & at_hi
    if not (lo.any() or hi.any()):
        return None, held
    z1 = _on_bound(nlp, z, lo, hi)
    try:
        return (z1, nu, nlp.kkt_residual(z1, nu)), held | lo | hi
    except ConvergenceError:
        return None, held


def _on_bound(nlp, z, lo, hi):
    """z with the variables of ``lo`` put on their lower bound and the others
    of ``hi`` on their upper one (the masks of :meth:`NLP.at_bound`)."""
    return np.where(lo, nlp.lower, np.where(hi, nlp.upper, z))


def _wrong_bounds(nlp, z, nu, held, tol):
    """The held variables whose bound's multiplier has the wrong sign by more
    than ``tol`` at (z, nu): r = grad J + J_c^T nu must be >= 0 at a lower
    bound, <= 0 at an upper one (:meth:`NLP.kkt_residual`)."""
    if not held.any():
        return held
    r = nlp.objective_grad(z) + nlp.jac_t_dot(z, nu)
    at_lo, at_hi = nlp.at_bound(z, 1e-12)
    return held & ((at_lo & (r < -tol)) | (at_hi & (r > tol)))


def _newton_step(nlp, hess, z, nu, rows, free, target):
    """The step dz on the free variables and the held rows' new multipliers
    nu + dnu, from [H A^T; A 0] (dz, dnu) = -(g + A^T nu, c - target) at (z,
    nu), or None when it cannot be solved (module docstring)."""
    try:
        from scipy import sparse
    except ImportError:                 # (SciPy comes with the control extra)
        return _dense_step(nlp, z, nu, rows, free, target)
    H = hess(z, nu).tocsc()[free][:, free]
    jr, jc = nlp.jac_structure()
    J = sparse.csr_matrix((nlp.jac_values(z), (jr, jc)),
                          shape=(nlp.n_constraints, nlp.n_variables))
    A = J[rows][:, free]
    K = sparse.bmat([[H, A.T], [A, None]], format="csc")
    rhs = _rhs(nlp, z, nu, rows, free, target, J.T @ _held(nu, rows))
    sol = _solve(K, rhs)
    if sol is None:
        sol = _refined(K, rhs, H.shape[0])
    if sol is None and K.shape[0] <= DENSE_LIMIT:
        try:
            sol = np.linalg.lstsq(K.toarray(), rhs, rcond=None)[0]
        except np.linalg.LinAlgError:
            return None
    return _to_multipliers(sol, nu, rows, free)


def _refined(K, rhs, nh, iters=30):
    """A solution of the singular K x = rhs (K symmetric) by iterative
    refinement on the regularised K_d = K + diag(d I_nh, -d I): x <- x +
    K_d^-1 (rhs - K x) from x = 0, d = 1e-8 of K's largest entry -- a proximal
    point iteration, which converges to a solution of a consistent system
    near 0 (the least change, as the least squares one) at the cost of one
    sparse factorisation; None when it does not reach 1e-10 of the
    right-hand side."""
    from scipy import sparse
    from scipy.sparse import linalg
    d = 1e-8 * abs(K).max()
    shift = np.concatenate([np.full(nh, d), np.full(K.shape[0] - nh, -d)])
    try:
        lu = linalg.splu((K + sparse.diags(shift)).tocsc())
    except RuntimeError:
        return None
    x = np.zeros_like(rhs)
    target = 1e-10 * max(np.linalg.norm(rhs), 1e-300)
    for _ in range(iters):
        r = rhs - K @ x
        if np.linalg.norm(r) <= target:
            return x
        x = x + lu.solve(r)
        if not np.all(np.isfinite(x)):
            return None
    return x if np.linalg.norm(rhs - K @ x) <= target else None


def _held(nu, rows):
    """The multipliers of the held rows (the others 0)."""
    out = np.zeros_like(nu)
    out[rows] = nu[rows]
    return out


def _rhs(nlp, z, nu, rows, free, target, jt_nu):
    """The Newton system's right-hand side in the step (dz, dnu): the
    Lagrangian's gradient on the free variables, the held rows' residuals."""
    return -np.concatenate([(nlp.objective_grad(z) + jt_nu)[free],
                            (nlp.constraints(z) - target)[rows]])


def _to_multipliers(sol, nu, rows, free):
    """(dz, nu + dnu) from the solution (dz, dnu): the step in the multipliers,
    so that a singular system's least-squares (or regularised) solution --
    the least change -- keeps the solver's multipliers where the first-order
    conditions leave them free (a bang-bang input with every value at a
    bound: the bounds' multipliers must keep their signs)."""
    if sol is None:
        return None
    nf = int(free.sum())
    return np.concatenate([sol[:nf], nu[rows] + sol[nf:]])


def _solve(K, rhs):
    """K x = rhs by SuperLU, or None when K is singular: exactly, or
    numerically (a pivot below 1e-11 of the largest, where a consistent
    singular system would get an arbitrary multiple of its null vector: a
    degenerate optimum's multipliers, whose signs at the bounds matter), or x
    not finite, or its residual above 1e-8 of the right-hand side."""
    from scipy.sparse import linalg
    try:
        lu = linalg.splu(K)
    except RuntimeError:                # "Factor is exactly singular"
        return None
    pivots = np.abs(lu.U.diagonal())
    if not pivots.min() > 1e-11 * pivots.max():
        return None
    x = lu.solve(rhs)
    if not np.all(np.isfinite(x)) or \
            np.linalg.norm(K @ x - rhs) > 1e-8 * max(np.linalg.norm(rhs), 1e-300):
        return None
    return x


def _dense_step(nlp, z, nu, rows, free, target):
    """:func:`_newton_step` dense (without SciPy): the least-squares solution."""
    H = _hessian.lagrangian_dense(nlp, z, 1.0, nu)[np.ix_(free, free)]
    Jc = nlp.constraints_jac(z)
    A = Jc[np.ix_(rows, free)]
    nc = A.shape[0]
    K = np.block([[H, A.T], [A, np.zeros((nc, nc))]])
    rhs = _rhs(nlp, z, nu, rows, free, target, Jc.T @ _held(nu, rows))
    try:
        return _to_multipliers(np.linalg.lstsq(K, rhs, rcond=None)[0], nu, rows, free)
    except np.linalg.LinAlgError:
        return None


def _has_scipy():
    try:
        import scipy.sparse  # noqa: F401
    except ImportError:
        return False
    return True
