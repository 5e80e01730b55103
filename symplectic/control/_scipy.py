"""SciPy's solvers on a transcribed control problem
(its NLP, symplectic.control._nlp.NLP): SLSQP (dense Jacobian, a quasi-Newton
Hessian) and trust-constr (the sparse exact Jacobian and the Hessian of the
Lagrangian, or SciPy's quasi-Newton updates).  Each returns the multipliers
of the constraints in the problem's convention, L = J + nu . c."""
import warnings

import numpy as np

from .._model._errors import ConvergenceError
from . import _hessian
from ._solution import Report


def _far(z):
    """The size of a constraint's value at a trial point whose step failed:
    far from any bound, so that the solver's merit function refuses the point."""
    return 1e6 * (1.0 + float(np.max(np.abs(z))))


def slsqp(nlp, z0, tol, max_iter):
    """(z, nu, Report) of SciPy's SLSQP from z0 (dense; ``tol`` its ``ftol``)."""
    from scipy import optimize      # SciPy: in the extras "control", "exact", "test"
    bounded = np.isfinite(nlp.lower).any() or np.isfinite(nlp.upper).any()
    neq = nlp.n_eq
    up, low = np.flatnonzero(np.isfinite(nlp.path_upper)), np.flatnonzero(
        np.isfinite(nlp.path_lower))
    far = []         # the value of a row at a trial point whose step fails

    def values(z):
        # a trial point whose step fails: constraints far from zero (violated), which
        # SLSQP's merit function refuses, so that its line search cuts the step back
        try:
            return nlp.constraints(z)
        except ConvergenceError:
            far[:] = [_far(z)]
            return None

    def eq(z):
        c = values(z)
        return np.full(neq, far[0]) if c is None else c[:neq]

    def ineq(z):     # SLSQP's form: >= 0
        c = values(z)
        if c is None:
            return np.full(len(up) + len(low), -far[0])
        cp = c[neq:]
        return np.concatenate([nlp.path_upper[up] - cp[up], cp[low] - nlp.path_lower[low]])

    def ineq_jac(z):
        Jp = nlp.constraints_jac(z)[neq:]
        return np.vstack([-Jp[up], Jp[low]])
    cons = [{"type": "eq", "fun": eq, "jac": lambda z: nlp.constraints_jac(z)[:neq]}]
    if len(up) + len(low):
        cons.append({"type": "ineq", "fun": ineq, "jac": ineq_jac})
    res = optimize.minimize(
        nlp.objective, z0, jac=nlp.objective_grad, method="SLSQP",
        bounds=optimize.Bounds(nlp.lower, nlp.upper) if bounded else None,
        constraints=cons, options={"maxiter": int(max_iter), "ftol": float(tol)})
    nu = np.zeros(neq + len(nlp.path_lower))
    mult = getattr(res, "multipliers", None)
    if mult is not None:
        # SciPy's Lagrangian is J - mu . g, g = c (equalities), hi - c and c - lo (>= 0);
        # ours J + nu . c
        mult = np.asarray(mult, dtype=float)
        nu[:neq] = -mult[:neq]
        nu[neq + up] += mult[neq:neq + len(up)]
        nu[neq + low] -= mult[neq + len(up):]
    return res.x, nu, Report("slsqp", bool(res.success), int(res.status), str(res.message),
                             int(getattr(res, "nit", 0)))


#: Up to this many unknowns the multipliers of a problem with path rows are recomputed
#: (dense least squares, as the polish solves its steps).
_DENSE = 3000


def _path_multipliers(nlp, z, active):
    """The multipliers at z of the equality rows and of the path rows at a
    bound (within 1e-6 relative), the others 0: the least-squares (minimum
    norm) solution of grad J + A^T nu = 0 over the variables not at a bound.
    (trust-constr's own, from its interior point method, can be far off on
    path rows that repeat one another -- a row at a node is in both of its
    steps: +-1e16 on the two copies of one seen -- and on rows off their
    bound, which the polish would then hold there.)"""
    m = nlp.n_eq + len(nlp.path_lower)
    at, _ = nlp.path_active(z, np.zeros(m))      # with no multiplier: near a bound
    rows = np.concatenate([np.arange(nlp.n_eq), nlp.n_eq + np.flatnonzero(at)])
    free = ~active
    A = nlp.constraints_jac(z)[np.ix_(rows, free)]
    nu = np.zeros(m)
    nu[rows] = np.linalg.lstsq(A.T, -nlp.objective_grad(z)[free], rcond=None)[0]
    return nu


def _multipliers(nlp, res, z, bounded):
    """(nu, active) of trust-constr's result res at z: the constraints'
    multipliers as SciPy's are (its Lagrangian is J + v . c, ours), with
    path rows recomputed (:func:`_path_multipliers`); the variables at a
    bound (their multiplier above a tenth of their distance to it)."""
    nu = np.array(res.v[0], dtype=float)
    active = np.zeros(len(z), dtype=bool)
    if bounded:
        # the bounds' multipliers: > 0 at the upper bound, < 0 at the lower one
        vb = np.asarray(res.v[1], dtype=float)
        with np.errstate(invalid="ignore"):
            active = (np.isfinite(nlp.lower) & (-vb > 0.1 * (z - nlp.lower))) | \
                (np.isfinite(nlp.upper) & (vb > 0.1 * (nlp.upper - z)))
    if nlp.paths and len(z) <= _DENSE:
        nu = _path_multipliers(nlp, z, active)
    return nu, active


#: trust-constr's first trust radius (SciPy's default 1): the unknowns are states of O(1)
#: and inputs of O(1..10), and a first radius of 10 lets the first steps reach them
#: (a cart-pole swing-up on 40 lobatto5 intervals: 53 iterations against 77, 0.39 s
#: against 0.50; in minimum time on 40 Simpson intervals 0.71 s against 0.93).
INITIAL_TR_RADIUS = 10.0


def trust_constr(nlp, z0, tol, max_iter, hessian, verbose=False):
    """(z, nu, active, Report) of SciPy's trust-constr from z0.

    Every constraint row -- the dynamics, the end conditions and the
    inputs' equations (= 0), the path rows (between their bounds) -- is in
    one NonlinearConstraint with the sparse exact Jacobian; the variables'
    bounds are a Bounds, which the iterates may cross (``keep_feasible``
    left the iterates of the free-duration problems at h's lower bound,
    far from feasible), except that a trial point with h <= 0 counts as a
    failed one.  With bounds or path rows SciPy runs its interior point
    method, else its equality-constrained SQP.  ``tol``: its
    ``gtol`` (on the largest entry of the Lagrangian's gradient and of the
    constraints' violation) and ``barrier_tol``; its ``xtol``, a trust
    radius that ends the solve (once the gradient's rounding floor lies
    above ``gtol``), is SciPy's 1e-8.  ``hessian``: ``"exact"``, ``"auto"``
    or ``"differences"`` (the problem's Hessian of the Lagrangian, as
    Problem.solve set it) or ``"limited-memory"`` (SciPy's BFGS for the
    cost, SR1 for the constraints).  nu: the multipliers, as
    SciPy's are (its Lagrangian is J + v . c, ours; with path rows
    recomputed, :func:`_path_multipliers`); active: the variables at a bound
    (their multiplier above a tenth of their distance to it)."""
    from scipy import optimize, sparse
    n = nlp.n_variables
    clo, chi = nlp.constraint_bounds()
    m = len(clo)
    jr, jc = nlp.jac_structure()
    failed = []          # steps the integrator could not take at trial points
    good = {}            # the last values that could be computed, by kind

    def guarded(kind, fn, far):
        """fn, with a step's failure at a trial point (or a free duration's
        h <= 0 there: no trajectory) answered by ``far(z)``: values that
        SciPy's merit function refuses (it cuts the trust region back), or
        the last derivative computed (a zero change, which its quasi-Newton
        updates skip)."""
        def call(z, *args):
            try:
                if nlp.tr.free and not z[-1] > 0:
                    raise ConvergenceError(f"control.Problem: a trial point with the "
                                           f"duration T = {z[-1]:.6g} <= 0")
                out = good[kind] = fn(z, *args)
            except ConvergenceError as exc:
                failed.append(exc)
                return far(z)
            return out
        return call

    def far_rows(z):
        # violated: past the upper bound (the equalities' 0), or below a lower-only one
        return np.where(np.isfinite(chi), chi + _far(z), clo - _far(z))

    def last(kind):
        return lambda z, *args: good[kind]

    def jac(z):
        return sparse.csr_matrix((nlp.jac_values(z), (jr, jc)), shape=(m, n))
    # the start must be one the steps can take (as for the other solvers: raise if not)
    good["c"], good["J"] = nlp.constraints(z0), jac(z0)
    good["g"] = nlp.objective_grad(z0)
    fun = guarded("f", nlp.objective, _far)
    grad = guarded("g", nlp.objective_grad, last("g"))
    cfun = guarded("c", nlp.constraints, far_rows)
    cjac = guarded("J", jac, last("J"))
    if hessian == "limited-memory":
        obj_hess, con_hess = optimize.BFGS(), optimize.SR1()
    else:
        # SciPy adds the cost's Hessian to the constraints' (sum v_i Hess c_i); the
        # problem's Hessian of J + nu . c comes whole from one pass of differences
        # over the intervals' steps, so the constraints' hess(z, v) returns it all
        # and the cost's is zero
        zero = good["H"] = sparse.csr_matrix((n, n))
        obj_hess = lambda z: zero
        con_hess = guarded("H", _hessian.lagrangian_sparse(nlp), last("H"))
    constraint = optimize.NonlinearConstraint(cfun, clo, chi, jac=cjac, hess=con_hess)
    bounded = np.isfinite(nlp.lower).any() or np.isfinite(nlp.upper).any()
    with warnings.catch_warnings():
        # the quasi-Newton updates skip, with a warning, the zero change of the
        # gradient that a failed trial point gives (guarded: the last one computed)
        warnings.filterwarnings("ignore", message="delta_grad == 0.0")
        # path rows at a node shared by two steps repeat one another, so the rows' Jacobian
        # is rank deficient by construction; SciPy then projects by a dense SVD, which it
        # announces each time (the slowness on path constraints the solve's docstring names)
        warnings.filterwarnings("ignore", message="Singular Jacobian matrix. Using dense SVD")
        res = optimize.minimize(
            fun, np.array(z0, dtype=float), jac=grad, hess=obj_hess, method="trust-constr",
            bounds=optimize.Bounds(nlp.lower, nlp.upper, keep_feasible=False) if bounded else None,
            constraints=[constraint],
            options={"maxiter": int(max_iter), "gtol": float(tol), "barrier_tol": float(tol),
                     "initial_tr_radius": INITIAL_TR_RADIUS, "verbose": 2 if verbose else 0})
    z = np.asarray(res.x, dtype=float)
    nu, active = _multipliers(nlp, res, z, bounded)
    message = str(res.message).rstrip(".")
    if failed and not res.success:
        message += (f"; {len(failed)} trial point(s) where a step failed, the last: "
                    f"{failed[-1]}")
    return z, nu, active, Report("trust-constr", bool(res.success), int(res.status), message,
                                 int(res.nit))
