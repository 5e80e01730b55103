"""IPOPT (through ipyopt, the optional extra ``symplectic-vi[control]``) on a
transcribed control problem: the sparse exact Jacobian and the Hessian of
a transcribed problem's NLP (symplectic.control._nlp.NLP)."""
import numpy as np

from .._model._errors import ConvergenceError
from ._solution import Report

_INF = 1e20                       # IPOPT's infinity (nlp_*_bound_inf is 1e19)

#: IPOPT's return codes (ApplicationReturnStatus) that mean a solution.
_SOLVED = {0: "Solve_Succeeded", 1: "Solved_To_Acceptable_Level"}
_MESSAGES = {-1: "Maximum_Iterations_Exceeded", 2: "Infeasible_Problem_Detected",
             3: "Search_Direction_Becomes_Too_Small", 4: "Diverging_Iterates",
             5: "User_Requested_Stop", 6: "Feasible_Point_Found",
             -2: "Restoration_Failed", -3: "Error_In_Step_Computation",
             -4: "Maximum_CpuTime_Exceeded", -10: "Not_Enough_Degrees_Of_Freedom",
             -11: "Invalid_Problem_Definition", -12: "Invalid_Option",
             -13: "Invalid_Number_Detected", -100: "Unrecoverable_Exception",
             -101: "NonIpopt_Exception_Thrown", -102: "Insufficient_Memory",
             -199: "Internal_Error"}


def available():
    """True when ipyopt imports."""
    try:
        import ipyopt  # noqa: F401
    except ImportError:
        return False
    return True


def _module():
    try:
        import ipyopt
    except ImportError:
        raise ImportError("control: solver='ipopt' needs ipyopt (IPOPT in a wheel, Linux "
                          "x86_64): pip install 'symplectic-vi[control]'; or use "
                          "solver='scipy'") from None
    return ipyopt


def solve(nlp, z0, *, tol, max_iter, hessian, verbose):
    """(z, nu, active, Report) of IPOPT from z0; nu the multipliers of the
    constraints in nlp's convention (L = J + nu . c, the same as IPOPT's),
    active the variables at a bound (their multiplier above a tenth of their
    distance to it)."""
    ipyopt = _module()
    failed = []          # steps the integrator could not take at points IPOPT tried

    def guarded(fn, size=None):
        """fn, with a step's failure reported to IPOPT as NaN (an evaluation
        error: it cuts the line search back) instead of an exception that
        would cross its C code."""
        def call(*args):
            try:
                return fn(*args)
            except ConvergenceError as exc:
                failed.append(exc)
                if size is None:
                    return float("nan")
                args[-1][:] = np.nan
                return False
        return call

    jr, jc = nlp.jac_structure()
    nc = len(nlp.constraints(z0))
    # tol bounds the scaled first-order residual; the constraints (the dynamics: the
    # replayed run's miss) are held to it too, not to IPOPT's default 1e-4
    # the barrier parameter by IPOPT's adaptive rule (a quality function; Nocedal, Waechter &
    # Waltz, SIAM J. Optim. 19, 2009) rather than its default monotone decrease: on the
    # minimum-time problems of benchmarks/results/control_casadi.md 25-37 iterations on the
    # crane (Simpson, 20 to 160 intervals) against 33-90, and fewer on the fixed-time ones
    options = {"tol": float(tol), "constr_viol_tol": float(tol), "max_iter": int(max_iter),
               "print_level": 5 if verbose else 0, "sb": "yes", "mu_strategy": "adaptive"}
    if hessian == "limited-memory":
        options["hessian_approximation"] = "limited-memory"
        hs, eval_h = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)), None
    else:
        hs = nlp.hess_structure()

        def eval_h(z, lagrange, obj_factor, out):
            out[:] = nlp.hess_values(z, obj_factor, lagrange)
            return True

    def eval_grad_f(z, out):
        out[:] = nlp.objective_grad(z)
        return True

    def eval_g(z, out):
        out[:] = nlp.constraints(z)
        return True

    def eval_jac_g(z, out):
        out[:] = nlp.jac_values(z)
        return True

    lo = np.where(np.isfinite(nlp.lower), nlp.lower, -_INF)
    hi = np.where(np.isfinite(nlp.upper), nlp.upper, _INF)
    gl, gu = nlp.constraint_bounds()
    gl, gu = np.where(np.isfinite(gl), gl, -_INF), np.where(np.isfinite(gu), gu, _INF)
    ip = ipyopt.Problem(nlp.n_variables, lo, hi, nc, gl, gu, (jr, jc), hs,
                         guarded(nlp.objective), guarded(eval_grad_f, 1), guarded(eval_g, 1),
                         guarded(eval_jac_g, 1), None if eval_h is None else guarded(eval_h, 1),
                         ipopt_options=options)
    mult_g, zl, zu = np.zeros(nc), np.zeros(nlp.n_variables), np.zeros(nlp.n_variables)
    z, _obj, status = ip.solve(np.array(z0, dtype=float), mult_g=mult_g, mult_x_L=zl,
                                mult_x_U=zu)
    # at a bound: its multiplier is not small against the distance to it
    # (complementarity z_L (x - x_L) = mu; a degenerate bound, both ~ sqrt(mu),
    # counts as active: the polish's residual checks the multiplier's sign)
    with np.errstate(invalid="ignore"):
        active = (np.isfinite(nlp.lower) & (zl > 0.1 * (z - nlp.lower))) | \
            (np.isfinite(nlp.upper) & (zu > 0.1 * (nlp.upper - z)))
    iters = int(ip.stats.get("n_iter", 0)) if hasattr(ip, "stats") else 0
    message = _SOLVED.get(status) or _MESSAGES.get(status, f"IPOPT status {status}")
    if failed and status not in _SOLVED:
        message += (f"; {len(failed)} trial point(s) where a step failed, the last: "
                    f"{failed[-1]}")
    return z, mult_g, active, Report("ipopt", status in _SOLVED, int(status), message, iters)
