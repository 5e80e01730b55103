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
    hs = None if hessian == "limited-memory" else nlp.hess_structure()
    if hs is None:
        options["hessian_approximation"] = "limited-memory"
    var = _LogDuration(nlp, jc, hs) if nlp.tr.free else _Identity()

    def eval_f(x):
        return nlp.objective(var.z(x))

    def eval_grad_f(x, out):
        out[:] = var.grad(x, nlp.objective_grad(var.z(x)))
        return True

    def eval_g(x, out):
        out[:] = nlp.constraints(var.z(x))
        return True

    def eval_jac_g(x, out):
        out[:] = var.jac(x, nlp.jac_values(var.z(x)))
        return True

    def eval_h(x, lagrange, obj_factor, out):
        z = var.z(x)
        out[:] = var.hess(z, nlp.hess_values(z, obj_factor, lagrange), obj_factor, lagrange)
        return True

    lo, hi = var.bounds(nlp.lower, nlp.upper)
    lo, hi = np.where(np.isfinite(lo), lo, -_INF), np.where(np.isfinite(hi), hi, _INF)
    gl, gu = nlp.constraint_bounds()
    gl, gu = np.where(np.isfinite(gl), gl, -_INF), np.where(np.isfinite(gu), gu, _INF)
    no_h = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    ip = ipyopt.Problem(nlp.n_variables, lo, hi, nc, gl, gu, (jr, jc),
                         no_h if hs is None else hs, guarded(eval_f), guarded(eval_grad_f, 1),
                         guarded(eval_g, 1), guarded(eval_jac_g, 1),
                         None if hs is None else guarded(eval_h, 1), ipopt_options=options)
    mult_g, zl, zu = np.zeros(nc), np.zeros(nlp.n_variables), np.zeros(nlp.n_variables)
    x, _obj, status = ip.solve(var.x(np.array(z0, dtype=float)), mult_g=mult_g, mult_x_L=zl,
                                mult_x_U=zu)
    z = var.z(x)
    var.bound_multipliers(z, zl, zu)
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


class _Identity:
    """IPOPT's unknowns are z itself (a fixed duration)."""

    def x(self, z):
        return z

    def z(self, x):
        return x

    def grad(self, x, g):
        return g

    def jac(self, x, values):
        return values

    def hess(self, z, values, obj_factor, lagrange):
        return values

    def bounds(self, lower, upper):
        return lower, upper

    def bound_multipliers(self, z, zl, zu):
        pass


class _LogDuration(_Identity):
    """IPOPT's unknowns with a free duration: z with the duration T (the last unknown)
    replaced by tau = log T.

    Why: the cost's first-order term in T (duration(): dJ/dT = 1) meets, at the first
    guess, a Lagrangian whose curvature in T is small, so IPOPT's first step in T was the
    fraction-to-the-boundary cut of a step far past T_min -- on the cart-pole of
    benchmarks/results/control_casadi.md T went from 2 s to 0.515 s in one step and stayed
    at its bound for some 30 iterations (57-100 iterations in all on 20-80 intervals, against
    44-73 for CasADi's collocations).  In tau the cost e^tau has the curvature it has slope,
    so a Newton step changes T by a factor, not by a length: 22-39 iterations there, 18-31
    on the crane (was 24-37); the optimum is the same point (a change of variables).

    The derivatives by the chain rule, with T = e^tau (dT/dtau = T):
        df/dtau = T df/dT,   dc/dtau = T dc/dT,
        d2L/dtau dz_j = T d2L/dT dz_j,
        d2L/dtau2 = T^2 d2L/dT2 + T dL/dT,   dL/dT = sigma df/dT + sum_i lambda_i dc_i/dT
    (L = sigma f + lambda . c, IPOPT's Lagrangian); the bound multipliers of T are those of
    tau divided by T (z_tau dtau = z_T dT at the optimum's complementarity)."""

    def __init__(self, nlp, jac_cols, hess_structure):
        self.nlp = nlp
        self.last = nlp.n_variables - 1
        self.jac_T = np.flatnonzero(jac_cols == self.last)
        self.jac_rows = nlp.jac_structure()[0][self.jac_T]
        if hess_structure is not None:
            hr, hc = hess_structure
            self.hess_off = np.flatnonzero((hr == self.last) != (hc == self.last))
            self.hess_diag = np.flatnonzero((hr == self.last) & (hc == self.last))

    def x(self, z):
        x = np.array(z, dtype=float)
        x[-1] = np.log(z[-1])
        return x

    def z(self, x):
        z = np.array(x, dtype=float)
        z[-1] = np.exp(x[-1])
        return z

    def grad(self, x, g):
        g = np.array(g, dtype=float)
        g[-1] *= np.exp(x[-1])
        return g

    def jac(self, x, values):
        values = np.array(values, dtype=float)
        self._dc_dT = (np.array(x), values[self.jac_T].copy())    # the Hessian's, at this x
        values[self.jac_T] *= np.exp(x[-1])
        return values

    def hess(self, z, values, obj_factor, lagrange):
        T = z[-1]
        hit = getattr(self, "_dc_dT", None)
        x = self.x(z)
        dc_dT = hit[1] if hit is not None and np.array_equal(hit[0], x) else \
            self.nlp.jac_values(z)[self.jac_T]
        dL = obj_factor * self.nlp.objective_grad(z)[-1] + \
            np.dot(np.asarray(lagrange)[self.jac_rows], dc_dT)
        values = np.array(values, dtype=float)
        values[self.hess_off] *= T
        values[self.hess_diag] = T * T * values[self.hess_diag] + T * dL
        return values

    def bounds(self, lower, upper):
        lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
        with np.errstate(divide="ignore"):
            lower[-1], upper[-1] = np.log(lower[-1]), np.log(upper[-1])
        return lower, upper

    def bound_multipliers(self, z, zl, zu):
        zl[-1] /= z[-1]
        zu[-1] /= z[-1]
