"""Parameter identification: the parameters of a system (and its initial
state) fitted to sampled positions, by least squares with the run's exact
derivatives (symplectic.control.identify)."""
import dataclasses
import time

import numpy as np

from .._model import _registry, _validate
from .._run import _integrate, _params


@dataclasses.dataclass
class Identification:
    """The result of :func:`identify`.

    Attributes
    ----------
    params : dict
        The fitted values {name: value}.
    std : dict
        Their standard errors {name: value}: sqrt of the diagonal of the
        covariance sigma^2 (J^T J)^-1 at the fit (J the Jacobian of the
        residuals in the units of q; sigma the given noise level, else the
        residuals' own estimate sqrt(|r|^2 / (m - k)), m residuals, k unknowns).
    q0, p0 : ndarray (n,)
        The initial state: fitted (``fit_start=True``) or the one given.
    covariance : ndarray (k, k)
        Of the unknowns: the parameters in the order given, then q0, p0 when
        fitted.
    sigma : float
        The noise level used for the covariance.
    residual_rms : float
        sqrt(mean of the squared residuals), in the units of q.
    system : symplectic.System
        The system at the fitted parameters.
    trajectory : symplectic.Trajectory
        Its run from the fitted start.
    iterations, evaluations : int
        The least-squares solver's Jacobian evaluations (its iterations) and
        function evaluations (runs); every evaluation is one integration.
    success : bool
    message : str
    solve_time : float
        Wall seconds.
    """
    params: dict
    std: dict
    q0: np.ndarray
    p0: np.ndarray
    covariance: np.ndarray
    sigma: float
    residual_rms: float
    system: object
    trajectory: object
    iterations: int
    evaluations: int
    success: bool
    message: str
    solve_time: float


def _rebuild(system, values):
    """``system`` with new parameter values: a SymPy system's with_params, a
    built-in's factory with its parameters updated (a tree's ``mass[j]`` in
    its flat parameters: the rebuilt system is a plain System of the C
    built-in ``"tree"``, the same Lagrangian, not a TreeSystem)."""
    if hasattr(system, "with_params"):
        return system.with_params(**values)
    if system.builtin is not None:
        # by name: a keyword, an element of one (m[2], damping[1]), a tree's mass[j] in its par
        return _registry.builtin_factory(system.builtin)(
            **_params.builtin_keywords(system, values))
    raise TypeError("identify: the system must come from SymPy (System.from_sympy) or be a "
                    "built-in (symplectic.systems): the parameters of Python callables have "
                    "no names to fit")


def identify(system, t_data, q_data, params, *, q0, p0, h, method="simpson", fit_start=False,
             sigma=None, guess=None, bounds=None, t0=0.0, max_iter=100, tol=1e-12,
             **method_options):
    """Fit parameters of ``system`` (and optionally its initial state) to
    sampled positions, by least squares with the run's exact derivatives.

    Parameters
    ----------
    system : symplectic.System
        From SymPy (its symbols' names) or a built-in (its ``params`` names,
        ``"damping"`` for the pendulums' joint friction), with the values the
        fit starts from (or ``guess``).
    t_data : array_like (m,)
        Sample times (s), each a node t0 + k h of the run (to 1e-9 h).
    q_data : array_like (m, n) or (m,) for n = 1
        The sampled positions.
    params : sequence of str
        The parameters to fit.
    q0, p0 : array_like (n,)
        The initial state (canonical momenta p = M(q) qdot: at fixed p0 the
        run's derivative in a parameter is exact); the starting guess of it
        with ``fit_start=True``.
    h : float
        The step of the model's runs.
    method : str
        The variational scheme (the parameter derivatives need one).
    fit_start : bool
        Fit (q0, p0) too.
    sigma : float, optional
        The noise level of the samples (units of q); None: estimated from
        the residuals.
    guess : dict, optional
        Starting values {name: value} (default: the system's own).
    bounds : dict, optional
        {name: (lower, upper)} for parameters that must stay in a range (a
        mass > 0: a step of the solver would otherwise try any value).
    max_iter, tol :
        The least-squares solver's (SciPy's trust-region reflective, with
        the exact Jacobian): its evaluations, and its ``xtol``, ``ftol`` and
        ``gtol``.
    **method_options :
        Newton's options of the runs.

    Notes
    -----
    Each evaluation is one ``integrate(..., tangent=True, wrt=params)``:
    the residuals q(t_i) - q_data_i and their exact Jacobian from the run's
    tangent (in q0, p0) and parameter tangent (in the parameters), so that
    a solver iteration costs one run, against 1 + (unknowns) runs for a fit
    by finite differences.  Returns an :class:`Identification`.
    """
    from scipy import optimize     # SciPy: the extras "control", "exact", "test"
    system = _validate.system(system)
    names = [str(p) for p in params]
    if not names:
        raise ValueError("identify: name at least one parameter in params")
    n = system.n
    h = _validate.positive("h", h)
    t = np.asarray(t_data, dtype=float).reshape(-1)
    qd = np.asarray(q_data, dtype=float).reshape(len(t), -1)
    if qd.shape != (len(t), n) or not np.isfinite(qd).all() or not np.isfinite(t).all():
        raise ValueError(f"identify: q_data must be finite, of shape (len(t_data), n) = "
                         f"({len(t)}, {n}), got {np.shape(q_data)}")
    k = np.rint((t - t0) / h).astype(int)
    if (k < 0).any() or np.abs(t0 + k * h - t).max(initial=0.0) > 1e-9 * h:
        raise ValueError(f"identify: every sample time must be a node t0 + k h of the run "
                         f"(h = {h})")
    N = int(k.max(initial=0))
    q0 = _validate.state("q0", q0, n)
    p0 = _validate.state("p0", p0, n)
    if hasattr(system, "parameters"):                      # SymPy: {symbol: value}
        current = {str(sym): v for sym, v in system.parameters.items()}
    else:
        current = dict(system.params or {})
        current.update(_params.builtin_values(system))   # m[2], damping[1], a tree's mass[j]
    guess = {} if guess is None else dict(guess)
    theta0 = []
    for name in names:
        value = guess.get(name, current.get(name))
        if value is None:
            raise ValueError(f"identify: no starting value for {name!r}: give guess={{...}}")
        theta0.append(float(value))
    npar = len(names)
    x0 = np.concatenate([theta0, q0, p0]) if fit_start else np.array(theta0)
    lo, hi = np.full(x0.size, -np.inf), np.full(x0.size, np.inf)
    for name, pair in (bounds or {}).items():
        if name not in names:
            raise ValueError(f"identify: bounds for {name!r}, which is not among params")
        i = names.index(name)
        lo[i], hi[i] = (-np.inf if pair[0] is None else pair[0]), \
            (np.inf if pair[1] is None else pair[1])
        if not lo[i] < hi[i] or not lo[i] <= x0[i] <= hi[i]:
            raise ValueError(f"identify: bounds {pair} for {name!r} must hold its start "
                             f"{x0[i]} and have lower < upper")

    def run(x):
        values = dict(zip(names, x[:npar]))
        s = _rebuild(system, values)
        qa, pa = (x[npar:npar + n], x[npar + n:]) if fit_start else (q0, p0)
        tr = _integrate.integrate(s, qa, pa, h, N, method=method, t0=t0, tangent=True,
                                  wrt=names, **method_options)
        return s, tr

    cache = {}

    def evaluate(x):
        key = x.tobytes()
        if key not in cache:
            cache.clear()
            s, tr = run(x)
            r = (tr.q[k] - qd).ravel()
            J = tr.param_tangent[k, :n, :]                       # dq_k / dtheta
            if fit_start:
                J = np.concatenate([J, tr.tangent[k, :n, :]], axis=2)   # dq_k / d(q0, p0)
            cache[key] = (r, J.reshape(len(k) * n, -1))
        return cache[key]

    t_start = time.perf_counter()
    res = optimize.least_squares(lambda x: evaluate(x)[0], x0, jac=lambda x: evaluate(x)[1],
                                 bounds=(lo, hi), method="trf", xtol=tol, ftol=tol, gtol=tol,
                                 max_nfev=int(max_iter))
    elapsed = time.perf_counter() - t_start
    r, J = evaluate(res.x)
    dof = max(1, r.size - res.x.size)
    sig = float(np.sqrt(r @ r / dof)) if sigma is None else _validate.positive("sigma", sigma)
    cov = sig ** 2 * np.linalg.pinv(J.T @ J)
    s, tr = run(res.x)
    qf, pf = (res.x[npar:npar + n], res.x[npar + n:]) if fit_start else (q0, p0)
    return Identification(
        params=dict(zip(names, (float(v) for v in res.x[:npar]))),
        std=dict(zip(names, (float(np.sqrt(cov[i, i])) for i in range(npar)))),
        q0=np.array(qf), p0=np.array(pf), covariance=cov, sigma=sig,
        residual_rms=float(np.sqrt(np.mean(r ** 2))), system=s, trajectory=tr,
        iterations=int(res.njev if res.njev is not None else 0), evaluations=int(res.nfev),
        success=bool(res.success), message=str(res.message), solve_time=elapsed)
