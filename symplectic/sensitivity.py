"""Sensitivities of a run: how its outcome moves with the start.

The tangent of a run -- the state-transition matrix
Phi_k = d(q_k, p_k)/d(q_0, p_0) -- comes from ``integrate(..., tangent=True)``
or ``Integrator(..., tangent=True)``: each step's exact derivative (the
implicit function theorem on the converged step equations), so that Phi_k
is the derivative of the discrete map itself, exact to Newton's tolerance,
and approximates the flow's derivative at the method's order.  For a
variational integrator without forces it is symplectic,
Phi^T J Phi = J (J = [[0, I], [-I, 0]]), to rounding.

This module builds on it:

- :func:`gradient`: the gradient of a cost of the run with respect to its
  start, to the forces held over its steps and to parameters of the system
  (a SymPy system's M, V and constraints, a built-in's), by one backward
  (discrete adjoint) sweep, constrained systems included;
- :func:`lyapunov`: the Lyapunov spectrum by QR re-orthonormalisation of the
  tangent flow (on the constraint manifold for a constrained system).
"""
import collections

import numpy as np

from . import _engine
from ._model import _derivcheck, _runspec, _validate
from ._model._derivcheck import _gradients
from ._run import _driver, _integrate, _params, _prepare
from ._run._failures import convergence_error
from ._run._integrator import Integrator

__all__ = ["gradient", "sympy_cost", "param_tangent_fd", "lyapunov", "LyapunovRun"]

WRT = ("q0", "p0", "force", "params")


def gradient(system, q0, p0, h, n_steps, cost, *, method="simpson", force=None, force_jac=None,
             wrt=None, params=None, t0=0.0, check=True, **method_options):
    """The value of a cost of a run and its gradient, by one backward sweep.

    The run is ``integrate(system, q0, p0, h, n_steps, method=..., force=...)``
    with states y_k = (q_k, p_k) at t_k = t0 + k h; the cost

        C = phi(q_N, p_N) + h sum_{k=0}^{N-1} l(t_k, q_k, p_k)

    (either part optional).  Its gradient comes from each step's exact
    derivative -- d y_{k+1}/d y_k and, for a held force, d y_{k+1}/d u_k --
    recorded during the run, and the discrete adjoint recursion
    lambda_N = grad phi, lambda_k = D_k^T lambda_{k+1} + h grad l_k,
    dC/du_k = B_k^T lambda_{k+1}, dC/dy_0 = lambda_0 (csrc/core/sym_adjoint.c):
    the exact gradient of the discrete run (to the roots' accuracy), at a
    cost that does not grow with the number of force rows.

    Parameters
    ----------
    system, q0, p0, h, n_steps, method, force, force_jac, t0 :
        As for :func:`symplectic.integrate`.  For
        ``"force"`` in ``wrt``, ``force`` is an array (n_steps, n) (or a
        :class:`symplectic.forces.Force` with such a held part): row k is
        held over step k (the controls), or (n_steps, P, n) with a value at
        each of the method's P force points
        (:func:`symplectic.forces.at_points`), and the system may carry its
        own force besides.
    cost : dict
        ``{"terminal": (phi, grad_phi), "running": (l, grad_l)}``, either
        key optional: ``phi(q, p)`` and ``l(t, q, p)`` return floats (the
        cost's units; l per second), ``grad_phi(q, p)`` and ``grad_l(t, q,
        p)`` the pairs (dphi/dq, dphi/dp) and (dl/dq, dl/dp), two arrays
        (n,) each (p the canonical momentum, as in the run).
        :func:`sympy_cost` makes such a pair from a SymPy expression.
    wrt : sequence of str, optional
        What to differentiate with respect to: ``"q0"``, ``"p0"``,
        ``"force"``, ``"params"``.  Default: ``("q0", "p0")``, plus
        ``"force"`` when ``force`` has a held part (an array) and
        ``"params"`` when ``params`` is given.  An explicit ``"force"``
        needs a held force.
    check : bool
        As for :func:`symplectic.integrate` (the first-use check of a
        system's derivatives, the constraint check of the start), and the
        check of the cost's gradients: after the run, before the backward
        sweep, ``grad_phi`` is compared with central differences of ``phi``
        at the end state (q_N, p_N) -- the one point where it is used --
        and ``grad_l`` with those of ``l`` (at fixed t) at the first row
        (t_0, q_0, p_0) and at the middle row k = N // 2, with the steps and
        tolerance of the system check (h_c = 1e-4 sqrt(max(1, |x_c|)),
        Richardson values, a mismatch above max(1e-6 x the largest entry,
        10 x the differences' error estimate)).  A mismatch raises
        :class:`symplectic.DerivativeError` naming the term, the entry
        (``dq[i]``, ``dp[i]``), both values and the state; ``check=False``
        skips every check.  A gradient of the wrong shape is a ValueError
        in either case.
    params : sequence of str
        With ``"params"`` in ``wrt``: the parameters to differentiate with
        respect to, by name -- of a SymPy system's M, V, constraints and forces
        (symbol names, as ``system.parameters`` knows them), or of a
        built-in (its ``params`` names; ``"mass[j]"``, ``"com[j][k]"``,
        ``"inertia[j][xx]"`` of a multibody tree's body j; ``"damping"``,
        ``"damping[i]"`` for the joint damping of the pendulums and trees; ``"M[i,j]"``, ``"K[i,j]"``,
        i <= j, for ``linear``), as for ``integrate(..., wrt=...)``, a
        SymPy system's forces included.  The method must be variational
        (NotImplementedError otherwise).  The derivative is at fixed
        (q0, p0): dC/dtheta = sum_k C_k^T lambda_{k+1}, C_k = d y_{k+1}/dtheta
        each step's exact parameter block (csrc/core/sym_galerkin_param.c).
    **method_options :
        Newton's options, as for :func:`symplectic.integrate`.

    Returns
    -------
    value : float
        C.
    grads : dict
        Keyed by the names of ``wrt`` (as given, or the default's), in
        that order: arrays of the shapes of q0, p0 and
        the held force ((n_steps, n) or (n_steps, P, n)); ``"params"``: a dict {name: dC/dtheta}
        (units of C per unit of the parameter).

    Notes
    -----
    Constrained systems: each step's derivative is that of the step map on
    all of R^2n (csrc/core/sym_constraints_tangent.c), so ``grads["q0"]``,
    ``grads["p0"]`` are dC/d(q0, p0) for any variation, and along the
    constraint manifold (variations with G dq0 = 0 and the hidden
    constraint's derivative zero) they give the derivative of C in the
    directions the manifold allows; a parameter of the constraints is
    differentiated at fixed (q0, p0), the first step carrying the start onto
    the moved manifold.

    Memory: the run keeps each step's derivative, 2n x (2 + P) n numbers a
    step with a held force of P values a step (2n x 2n without), plus
    2n x n_par with parameters.
    """
    system = _validate.system(system)
    explicit = wrt is not None
    wrt = _wrt(wrt) if explicit else ("q0", "p0") + (("params",) if params is not None else ())
    spec = _runspec.run_spec(method, h, n_steps, t0, options=method_options, check=check)
    if "params" in wrt:
        _params.check_supported(system, spec.method, "gradient")
    if ("params" in wrt) != (params is not None):
        raise ValueError("gradient: name the parameters with params=[...] exactly when "
                         "'params' is in wrt")
    m, h, n_steps, n = spec.method, spec.h, spec.n_steps, system.n
    terminal, running = _cost_parts(cost)
    wanted = {}

    def derivative_bytes(f):      # each step's derivative (and parameter block), kept
        given = force is not None and f is not None and f.hold is not None
        held = "force" in wrt or (not explicit and given)
        hp = f.hold_points if held and given else 0   # u columns a step: 1, or P values
        wanted.update(given=given, hp=hp)
        return 8.0 * n_steps * 2 * n * ((2 + hp) * n + (len(params) if params else 0))
    prep = _prepare.prepare(system, spec, q0, p0, names=("q0", "p0", "qdot0"), force=force,
                            force_jac=force_jac, force_rows=n_steps,
                            wrt=params if params is not None else None, warn="steps",
                            extra_bytes=derivative_bytes, what="gradient")
    f, ps = prep.force, prep.params
    if not explicit and wanted["given"]:
        wrt = wrt[:2] + ("force",) + wrt[2:]
    if "force" in wrt and not wanted["given"]:
        raise ValueError(f"gradient: wrt = {wrt!r} asks for 'force', which needs a held force: "
                         f"force=U with U of shape (n_steps, n) = ({n_steps}, {n}) (row k held "
                         f"over step k); without one, leave wrt out or give wrt=(\"q0\", \"p0\")")
    hp = wanted["hp"]
    jac = np.empty((n_steps, 2 * n, (2 + hp) * n))
    pjac = None if ps is None else np.empty((n_steps, 2 * n, len(ps.names)))
    r = _driver.run(prep, outputs=_driver.Outputs(jacobians=jac, param_jac=pjac))
    if r.failure is not None:
        raise convergence_error(m, h, r.failure, system=system, trajectory=(
            _driver.make_trajectory(system, m, h, r, r.done, force=f)))
    value, lam_end, src = _cost_terms(terminal, running, r.t, r.q, r.p, h, n)
    if check:
        _check_costs(terminal, running, r.t, r.q, r.p, n)
    if ps is None:
        lam0, grad_u = _engine.adjoint_sweep(jac, lam_end, src)
        gpar = None
    else:
        lam0, grad_u, gp = _engine.adjoint_sweep(jac, lam_end, src, pjac=pjac)
        gpar = {name: float(v) for name, v in zip(ps.names, gp)}
    if grad_u is not None and f.hold.ndim == 3:
        grad_u = grad_u.reshape(f.hold.shape)
    out = {"q0": lam0[:n], "p0": lam0[n:], "force": grad_u, "params": gpar}
    return value, {k: out[k] for k in wrt}


def sympy_cost(expr, q, p, t=None):
    """A cost term of :func:`gradient` from a SymPy expression: the pair
    (value, gradient) of ``expr`` in the coordinates ``q`` and momenta ``p``
    (sequences of n SymPy symbols), its gradient (d/dq, d/dp) derived by
    SymPy and both turned into NumPy functions (``sympy.lambdify``).
    Without ``t`` the functions take ``(q, p)`` (a terminal cost); with the
    time symbol ``t`` they take ``(t, q, p)`` (a running cost).  Every free
    symbol of ``expr`` must be among q, p and t (numbers in place of
    parameters).

    >>> import sympy as sy, symplectic as sp
    >>> q1, q2, p1, p2 = sy.symbols("q1 q2 p1 p2")
    >>> phi = sp.sensitivity.sympy_cost((q1 - 1) ** 2 + p2 ** 2, [q1, q2], [p1, p2])
    >>> phi[1]([2.0, 0.0], [0.0, 3.0])
    (array([2., 0.]), array([0., 6.]))
    """
    import sympy as sy
    q, p = list(q), list(p)
    if len(q) != len(p) or not q:
        raise ValueError(f"sympy_cost: q and p must be n symbols each, got {len(q)} and {len(p)}")
    args = ([t] if t is not None else []) + [q, p]
    extra = set(sy.sympify(expr).free_symbols) - set(q) - set(p) - ({t} if t is not None else set())
    if extra:
        raise ValueError(f"sympy_cost: the expression has free symbols that are not q, p or t: "
                         f"{sorted(map(str, extra))} (substitute numbers for parameters)")
    f = sy.lambdify(args, expr, "numpy")
    gq = sy.lambdify(args, [sy.diff(expr, x) for x in q], "numpy")
    gp = sy.lambdify(args, [sy.diff(expr, x) for x in p], "numpy")
    n = len(q)

    def value(*a):
        return float(f(*a))

    def grad(*a):
        return (np.asarray(gq(*a), float).reshape(n), np.asarray(gp(*a), float).reshape(n))

    return value, grad


def param_tangent_fd(make, params, q0, p0, h, n_steps, *, rel=1e-5, **integrate_options):
    """Parameter sensitivities of a run by finite differences of whole runs:
    the route for systems whose parameters the exact one
    (``integrate(..., tangent=True, wrt=[...])``) does not reach -- Python
    callables, and the built-ins it does not cover.

    ``make(**params)`` builds the system for the parameter values ``params``
    (a dict name -> value); the run is ``integrate(make(**params), q0, p0, h,
    n_steps, **integrate_options)``.  Each parameter theta is moved by
    e = rel max(1, |theta|) and the four-point stencil
    (8 [y(theta + e) - y(theta - e)] - [y(theta + 2e) - y(theta - 2e)]) / 12e
    is taken row by row, at fixed (q0, p0).

    Returns ``(traj, S)``: the run at ``params`` and S (rows, 2n, n_par),
    S[k, :, j] = d(q_k, p_k)/d(theta_j), columns in the order of ``params``.

    Accuracy: the stencil's truncation is O(e^4) times the fifth derivative
    of the run in theta, and its rounding about rtol |y| / e, rtol the
    Newton tolerance (1e-13 by default): with the default rel = 1e-5, about
    1e-8 relative on a run whose states move smoothly with theta
    (tests/tools/test_sensitivity.py measures it against the exact route).
    A chaotic run or a long one, whose state moves by more than ~0.01 (in q's
    units) for a change e, needs a smaller rel -- or the exact route.  A
    system of Python callables should give ``mass_grad`` and
    ``potential_grad``: their finite-difference fallbacks put rounding noise
    into every step, which the quotient divides by e (7e-7 relative instead
    of 1e-8 in that test).  Costs 4 runs per parameter.
    """
    if not isinstance(params, dict) or not params:
        raise ValueError("params must be a non-empty dict {name: value}")
    if not (isinstance(rel, float) and 0.0 < rel < 0.1):
        raise ValueError(f"rel must be a float in (0, 0.1), got {rel!r}")
    base = _integrate.integrate(make(**params), q0, p0, h, n_steps, **integrate_options)
    S = np.empty((len(base.t), base.q.shape[1] * 2, len(params)))
    for j, (name, value) in enumerate(params.items()):
        e = rel * max(1.0, abs(float(value)))
        y = {}
        for k in (-2, -1, 1, 2):
            tr = _integrate.integrate(make(**dict(params, **{name: value + k * e})), q0, p0, h,
                                      n_steps, **integrate_options)
            y[k] = np.concatenate([tr.q, tr.p], axis=1)
        S[:, :, j] = (8 * (y[1] - y[-1]) - (y[2] - y[-2])) / (12 * e)
    return base, S


def _wrt(wrt):
    names = (wrt,) if isinstance(wrt, str) else tuple(wrt)
    bad = [w for w in names if w not in WRT]
    if bad or not names:
        raise ValueError(f"wrt: choose from {WRT}, got {wrt!r}")
    return names


def _cost_parts(cost):
    if not isinstance(cost, dict) or not cost or set(cost) - {"terminal", "running"}:
        raise ValueError("cost must be a dict with the keys 'terminal' and/or 'running', each "
                         "a pair (function, gradient)")
    parts = []
    for key in ("terminal", "running"):
        part = cost.get(key)
        if part is not None and not (isinstance(part, (tuple, list)) and len(part) == 2
                                     and all(callable(c) for c in part)):
            raise ValueError(f"cost[{key!r}] must be a pair of callables (value, gradient)")
        parts.append(part)
    return parts


def _pair(name, g, n):
    """A gradient callable's answer as one vector (dq, dp) of 2n finite values."""
    try:
        dq, dp = g
        v = np.concatenate([np.asarray(dq, float).reshape(n), np.asarray(dp, float).reshape(n)])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must return the pair (d/dq, d/dp) of two arrays of "
                         f"shape ({n},)") from exc
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} returned a non-finite gradient")
    return v


_TERMINAL = "the terminal cost's gradient grad_phi"
_RUNNING = "the running cost's gradient grad_l"


def _cost_terms(terminal, running, t, q, p, h, n):
    """(value, lambda_N, src) of the cost on the run's rows."""
    N = len(t) - 1
    value, lam_end, src = 0.0, np.zeros(2 * n), None
    if terminal is not None:
        value += float(terminal[0](q[N], p[N]))
        lam_end = _pair(_TERMINAL, terminal[1](q[N], p[N]), n)
    if running is not None and N > 0:
        src = np.empty((N, 2 * n))
        for k in range(N):
            value += h * float(running[0](t[k], q[k], p[k]))
            src[k] = h * _pair(_RUNNING, running[1](t[k], q[k], p[k]), n)
    return value, lam_end, src


def _check_costs(terminal, running, t, q, p, n):
    """The cost's gradients against central differences of its values (the
    docstring of :func:`gradient`, ``check``): grad_phi at the end state,
    grad_l at the first and the middle row; DerivativeError on a mismatch."""
    N = len(t) - 1
    words = dict(rtol=_derivcheck.RTOL, parts=(("dq", n), ("dp", n)),
                 skip="gradient(..., check=False)", quantity="cost_gradient",
                 fmt=lambda x: _gradients.fmt_state(q=x[:n], p=x[n:]))
    if terminal is not None:
        phi, grad_phi = terminal
        _gradients.verify(lambda x: float(phi(x[:n], x[n:])),
                          lambda x: _pair(_TERMINAL, grad_phi(x[:n], x[n:]), n),
                          [(np.concatenate([q[N], p[N]]), f"the run's end state (step {N})")],
                          callback=_TERMINAL, reference="phi(q, p)", **words)
    if running is not None and N > 0:
        ell, grad_l = running
        for k in sorted({0, N // 2}):
            tk = float(t[k])
            row = (np.concatenate([q[k], p[k]]), f"row {k} of the run, t = {tk:.10g}")
            _gradients.verify(lambda x, tk=tk: float(ell(tk, x[:n], x[n:])),
                              lambda x, tk=tk: _pair(_RUNNING, grad_l(tk, x[:n], x[n:]), n),
                              [row], callback=_RUNNING, reference="l(t, q, p) in q and p",
                              **words)


#: :func:`lyapunov` with ``running=True``: the final exponents (k,), the times
#: of the re-orthonormalisations (m,) and the running estimates there (m, k),
#: row i the exponents over [t0, t[i]].
LyapunovRun = collections.namedtuple("LyapunovRun", "exponents t estimates")


def lyapunov(system, q0, p0=None, h=None, n_steps=None, *, method="simpson", k=None,
             every=100, qdot0=None, t0=0.0, force=None, force_jac=None, running=False,
             **method_options):
    """The k largest Lyapunov exponents of the run from ``(q0, p0)`` (1/s).

    The tangent of ``n_steps`` steps of size ``h`` is carried on k columns,
    re-orthonormalised every ``every`` steps by a QR factorisation
    Y = Q R (diag R > 0); exponent i is sum log R_ii over the run divided by
    its length T = n_steps |h| (the standard QR method: Benettin et al.,
    Meccanica 15, 1980; Dieci, Russell & Van Vleck, SIAM J. Numer. Anal. 34,
    1997).  The tangent is the discrete map's own (see the module), so the
    exponents are those of the integrator's map per unit time; they
    approximate the flow's at the method's order in h, and converge in T
    like 1/T (finite-time exponents).

    Parameters
    ----------
    system, q0, p0, h, n_steps, method, qdot0, t0, force, force_jac :
        As for :func:`symplectic.integrate`.  With m holonomic constraints
        the step maps every variation onto the constraint manifold (2m
        exponents would be -inf): the columns start from a basis of the
        manifold's tangent space after the first step (the range of its
        derivative), and the exponents are the 2n - 2m of the motion on the
        manifold, averaged over the other n_steps - 1 steps.
    k : int, optional
        How many exponents (the k largest; default all 2n, or 2n - 2m with
        constraints).  Each costs one linear solve per step.
    every : int
        Steps between re-orthonormalisations (default 100).  Between two of
        them the columns grow like exp(lambda_max every |h|), and the
        smaller exponents fade against the largest one: keep
        lambda_max * every * |h| below about 10.
    running : bool
        Also return the running estimates (a :class:`LyapunovRun`).
    **method_options :
        Newton's options (``rtol``, ``newton``, ...), as for
        :func:`symplectic.integrate`.

    Returns
    -------
    ndarray (k,)
        The exponents, largest first; with ``running=True`` a
        :class:`LyapunovRun` (exponents, t, estimates).

    Notes
    -----
    For an unforced variational integrator the spectrum comes in pairs
    lambda_i = -lambda_{2n+1-i} (the map is symplectic) with one pair at 0
    (along the flow and across the energy shell) as T grows; with a force
    -D(q) qdot their sum is the time average of -tr(M(q)^-1 D(q)), the phase
    space contraction.

    Examples
    --------
    >>> import symplectic as sp
    >>> dp = sp.systems.double_pendulum()
    >>> lam = sp.sensitivity.lyapunov(dp, [2.0, 2.5], [0.0, 0.0], 0.01, 2000)
    >>> lam.shape
    (4,)
    """
    it = Integrator(system, h, q0, p0, method=method, t0=t0, qdot0=qdot0, force=force,
                    force_jac=force_jac, tangent=True, **method_options)
    n_steps = _positive_int("n_steps", n_steps)
    every = _positive_int("every", every)
    m2 = 2 * it.system.n
    basis, dim, done = _start_basis(it, n_steps)
    k = dim if k is None else _positive_int("k", k)
    if k > dim:
        raise ValueError(f"k = {k}: at most {dim} exponents"
                         + (" (2n - 2m on the constraint manifold)" if dim < m2 else " (2n)"))
    it.tangent = basis[:, :k]
    sums = np.zeros(k)
    times, estimates = [], []
    first = done
    while done < n_steps:
        chunk = min(every, n_steps - done)
        it.propagate(chunk, store_every=chunk)
        done += chunk
        Q, R = np.linalg.qr(it.tangent)
        d = np.diag(R)
        if not np.all(np.isfinite(d)) or np.any(d == 0.0):
            raise FloatingPointError(
                f"lyapunov: the tangent degenerated by step {done} (t = {it.t!r}): "
                f"|diag R| = {np.abs(d)}; re-orthonormalise more often (every < {every})")
        sums += np.log(np.abs(d))
        it.tangent = Q * np.sign(d)
        if running:
            times.append(it.t)
            estimates.append(sums / ((done - first) * abs(it.h)))
    lam = sums / ((n_steps - first) * abs(it.h))
    order = np.argsort(-lam, kind="stable")
    if not running:
        return lam[order]
    return LyapunovRun(lam[order], np.array(times), np.array(estimates).reshape(-1, k)[:, order])


def _start_basis(it, n_steps):
    """(basis (2n, dim), dim, steps taken): the identity at the start, or for a
    constrained system a basis of the constraint manifold's tangent space
    after one step -- the range of that step's derivative D_0, which maps
    every variation onto it (rank 2n - 2m, csrc/core/sym_constraints_tangent.c)."""
    m2, m = 2 * it.system.n, it.system.n_constraints or 0
    if not m:
        return np.eye(m2), m2, 0
    if n_steps < 2:
        raise ValueError("lyapunov: a constrained system needs n_steps >= 2 (the first step "
                         "finds the constraint manifold's tangent space)")
    it.tangent = np.eye(m2)
    it.propagate(1, store_every=1)
    U, sv, _ = np.linalg.svd(it.tangent)
    dim = m2 - 2 * m
    if not sv[dim - 1] > 1e-8 * sv[0] or sv[dim] > 1e-8 * sv[0]:
        raise FloatingPointError(f"lyapunov: the first step's derivative does not have rank "
                                 f"2n - 2m = {dim} (singular values {sv})")
    return U[:, :dim], dim, 1


def _positive_int(name, x):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {x!r}")
    return int(x)
