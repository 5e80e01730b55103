"""The structure checks of :mod:`symplectic.analysis` (which makes them
public): the stability estimate of a step, the one-step tangent map (exact or
by differences), the symplecticity defect and the reversibility error."""
import dataclasses

import numpy as np

from ._model import _runspec, _validate
from ._run import _driver, _integrate, _prepare, _stability
from ._run._failures import convergence_error
from ._run._integrate import integrate, step

__all__ = ["stability_estimate", "tangent_map", "symplecticity_defect", "reversibility_error"]


# ------------------------------------------------------------------ structure
def _J(n):
    Z, E = np.zeros((n, n)), np.eye(n)
    return np.block([[Z, E], [-E, Z]])


def stability_estimate(system, q, h, method="simpson", p=None):
    """The stability of step size ``h`` for ``method`` at the state (q, p).

    Returns ``(omega_max, omega_h, limit, h_max)``: the fastest linearised
    frequency at q (rad/s; the square root of the largest eigenvalue of
    M(q)^-1 hess V(q), on the constraint manifold for a constrained system,
    whose multipliers use p -- default at rest), omega_max |h|, the method's
    limit on the harmonic oscillator (``methods(details=True)[m]["stability"]``:
    Simpson 2 sqrt 2, the midpoint rule inf) and h_max = limit / omega_max.
    The step is linearly stable on that mode for omega_h < limit.  A local
    estimate: velocity-dependent stiffness is not included and a nonlinear
    motion may visit stiffer states.  ``integrate`` and ``integrate_many``
    warn with it (:class:`symplectic.StabilityWarning`) before the first
    step.  None when M(q) or hess V(q) cannot be evaluated there (or the
    method's limit is not determined).
    """
    system = _validate.system(system)
    m = _validate.method(method)
    q = _validate.state("q", q, system.n)
    h = _validate.step_size(h)
    if p is not None:
        p = _validate.state("p", p, system.n)
    return _stability.estimate(system, q, h, m, p)


def tangent_map(system, q, p, h, method="simpson", tangent="exact", delta=1e-6, *,
                force=None, force_jac=None, t=0.0):
    """Jacobian D = d(q1, p1)/d(q, p) of one step, (2n, 2n), (q, p) ordering.

    ``tangent="exact"``: the core's exact tangent map (implicit function
    theorem on the discrete Euler-Lagrange equations at the converged root;
    linearised stages for RK4); the one each step of
    ``integrate(..., tangent=True)`` applies.  ``tangent="fd"``: central
    finite differences of :func:`symplectic.step` with increments
    ``delta * max(1, |y_k|)``.  ``force``, ``force_jac`` and ``t`` (the
    step's time) as for :func:`symplectic.step`: the force's Jacobians
    dF/dq, dF/dqdot enter the exact map as they enter Newton's matrix.

    A constrained system (holonomic g(q) = 0): D is the derivative of the
    constrained step map on all of R^2n, so (q, p) need not be on the
    manifold {g = 0, G M^-1 p = 0} and neither do the finite differences'
    perturbed states (taken without :func:`symplectic.step`'s check of the
    state).  Every column of D lies in the manifold's tangent space at
    (q1, p1) (the step carries any variation onto it); on the tangent space
    at (q, p) D is the derivative along the manifold.
    """
    fkw = dict(force=force, force_jac=force_jac, t=t)
    if _validate.choice("tangent", tangent, ("exact", "fd")) == "exact":
        return _integrate.step_tangent(system, q, p, h, method, **fkw)[2]
    n = system.n
    one = _fd_step(system, q, p, h, method, fkw)
    y = np.concatenate([np.asarray(q, float).ravel(), np.asarray(p, float).ravel()])
    D = np.empty((2 * n, 2 * n))
    for k in range(2 * n):
        dk = delta * max(1.0, abs(y[k]))
        out = []
        for s in (1.0, -1.0):
            yy = y.copy()
            yy[k] += s * dk
            q1, p1 = one(yy[:n], yy[n:])
            out.append(np.concatenate([q1, p1]))
        D[:, k] = (out[0] - out[1]) / (2.0 * dk)
    return D


def _fd_step(system, q, p, h, method, fkw):
    """The step of tangent_map's finite differences at (q, p): :func:`step`,
    or for a constrained system the same step without the check that the
    state is on the manifold (a perturbed state is not)."""
    system = _validate.system(system)
    if not system.n_constraints:
        return lambda q, p: step(system, q, p, h, method, **fkw)
    spec = _runspec.run_spec(method, h, 1, fkw["t"], one_step=True)
    # the prologue once, at the unperturbed state; the perturbed states then step as it
    # prepared (they are off the manifold on purpose: no start check for them)
    prep = _prepare.prepare(system, spec, q, p, names=("q", "p", "qdot"), force=fkw["force"],
                            force_jac=fkw["force_jac"], warn="never", what="tangent_map",
                            manifold=False)

    def one(q, p):
        q1, p1, failure = _driver.run_step(dataclasses.replace(
            prep, q0=_validate.state("q", q, system.n), p0=_validate.state("p", p, system.n)))
        if failure is not None:
            raise convergence_error(spec.method, spec.h, failure, system=system)
        return q1, p1
    return one


def symplecticity_defect(system, q, p, h, method="simpson", tangent="exact", delta=1e-6, **kw):
    """``||D^T J D - J||_F / ||D||_F^2`` for the one-step map D at (q, p).

    Zero (to rounding) for a symplectic method; of the size of the local
    error for a non-symplectic one (RK4).  The tangent map comes from
    :func:`tangent_map` (``"exact"`` or ``"fd"``; finite differences add
    about 1e-10 of truncation and cancellation error); ``kw`` (``force``,
    ``force_jac``, ``t``) as for :func:`tangent_map` -- a dissipative force
    makes any method's map non-symplectic.

    Unconstrained systems: a constrained step is symplectic on the manifold
    {g = 0, G M^-1 p = 0} only (V^T D^T J D V = V^T J V for a basis V of its
    tangent space at (q, p)); on R^2n its D has rank 2n - 2m and this
    measure is of order one (NotImplementedError).
    """
    if _validate.system(system).n_constraints:
        raise NotImplementedError(
            "symplecticity_defect: the system has holonomic constraints, whose step map is "
            "symplectic on the constraint manifold only (V^T D^T J D V = V^T J V for a basis V "
            "of its tangent space); D = tangent_map(...) is the exact map to restrict")
    D = tangent_map(system, q, p, h, method, tangent, delta, **kw)
    n = D.shape[0] // 2
    J = _J(n)
    return float(np.linalg.norm(D.T @ J @ D - J) / np.linalg.norm(D) ** 2)


def reversibility_error(system, q, p, h, method="simpson", n_steps=1, relative=True, **kw):
    """Integrate ``n_steps`` forward with h, then back with -h; distance to the start.

    Returns max_k |y_back,k - y0,k| / s_k over the 2n components of y = (q, p),
    where s_k is the largest |y_k| met on the forward trajectory (1 where that
    is 0), so that a small angle is not hidden behind a large one; with
    ``relative=False`` the plain max_k |y_back,k - y0,k|.  Symmetric methods
    (the variational ones) give values at the level of the Newton tolerance
    (``rtol=``, default 1e-13 per step) amplified by the dynamics; RK4 gives
    its local error.  Extra keywords go to :func:`symplectic.integrate`.
    """
    fwd = integrate(system, q, p, h, n_steps, method, **kw)
    back = integrate(system, fwd.q[-1], fwd.p[-1], -h, n_steps, method, t0=fwd.t[-1], **kw)
    d = np.abs(np.concatenate([back.q[-1] - fwd.q[0], back.p[-1] - fwd.p[0]]))
    if not relative:
        return float(np.max(d))
    s = np.max(np.abs(np.hstack([fwd.q, fwd.p])), axis=0)
    s[s == 0.0] = 1.0
    return float(np.max(d / s))
