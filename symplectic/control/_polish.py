"""The Newton polish of a solved control problem: Newton's iteration on the
first-order conditions of its NLP (:mod:`._nlp`) from the solver's (z, nu),

    [H  A^T] [dz ]     [g]
    [A   0 ] [nu+] = - [c],

H the Hessian of the Lagrangian (:mod:`._hessian`: the dynamics' curvature
exact or by differences), A the Jacobian of the equations and of the path
rows held at a bound, the variables at a bound held there.  A solver stops
on its own measures (SLSQP on the change of the cost, which leaves the
inputs only about sqrt(tol) accurate; IPOPT on its scaled residuals;
trust-constr also on its trust radius); the polish brings the unscaled
first-order residual (:meth:`NLP.kkt_residual`) to ``tol``."""
import numpy as np

from .._model._errors import ConvergenceError
from . import _hessian


def polish(nlp, z, nu, tol, active=None, iters=8):
    """Newton's iteration from (z, nu) until the residual is below ``tol`` or
    stops falling (at most ``iters`` iterations).  ``active`` (the solver's
    verdict: a bound multiplier that is not zero) puts those variables on
    their bound first.  The path rows active at the start
    (:meth:`NLP.path_active`) are held at their bound as equalities, the
    others left out (their multipliers 0); a held row whose multiplier comes
    out with the bound's wrong sign is let go, and a row a step takes past
    its bound is held from then on (the step solved again).  Returns the
    best (z, nu, residual) met."""
    neq, plo, phi = nlp.n_eq, nlp.path_lower, nlp.path_upper
    nu = np.asarray(nu, dtype=float)
    if len(nu) < neq + len(plo):      # a solver without the path's
        nu = np.concatenate([nu, np.zeros(neq + len(plo) - len(nu))])
    first = (z, nu, nlp.kkt_residual(z, nu))
    act, at_hi = nlp.path_active(z, nu)
    rows = np.concatenate([np.arange(neq), neq + np.flatnonzero(act)])
    target = np.concatenate([np.zeros(neq), np.where(at_hi, phi, plo)])
    if active is not None and active.any():
        z = z.copy()
        lo_side = np.abs(z - nlp.lower) <= np.abs(nlp.upper - z)
        z[active] = np.where(lo_side, nlp.lower, nlp.upper)[active]
    try:
        best = (z, nu, nlp.kkt_residual(z, nu))
    except ConvergenceError:
        return first
    for _ in range(iters):
        z, nu, res = best
        if res <= tol:
            break
        free = nlp.inside(z)
        try:
            H = _hessian.lagrangian_dense(nlp, z, 1.0, nu)[np.ix_(free, free)]
        except ConvergenceError:     # a step the differences could not take
            break
        A = nlp.constraints_jac(z)[np.ix_(rows, free)]
        nc = A.shape[0]
        K = np.block([[H, A.T], [A, np.zeros((nc, nc))]])
        rhs = -np.concatenate([nlp.objective_grad(z)[free],
                               (nlp.constraints(z) - target)[rows]])
        try:
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
        except np.linalg.LinAlgError:
            break
        z1 = z.copy()
        z1[free] += sol[:free.sum()]
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
            except ConvergenceError:    # a step the integrator cannot take: keep the best
                break
            past = ~act & ((cp > phi) | (cp < plo))
            if r1 < best[2]:
                best = (z1, nu1, r1)
            elif not past.any():
                break
            act |= past
            at_hi = np.where(past, cp > phi, at_hi)
            target[neq:] = np.where(at_hi, phi, plo)
        rows = np.concatenate([np.arange(neq), neq + np.flatnonzero(act)])
    return best if best[2] < first[2] else first
