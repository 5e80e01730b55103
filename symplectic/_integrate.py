"""step and integrate, and the one place where the package runs the C core.

Every run -- :func:`step`, :func:`integrate`, each member of
:func:`symplectic.integrate_many`, the tangent map of
:func:`symplectic.analysis.tangent_map` -- goes through the functions of the
second half of this module: :func:`linear_stepper` decides whether a linear
system takes its closed form, :func:`run` and :func:`run_step` run the C core
(or that closed form) and return what it computed, failure included,
:func:`convergence_error` turns a failure into the one ConvergenceError,
:func:`make_trajectory` the arrays into a Trajectory.  Inputs are checked by
:mod:`symplectic._validate` before any of this runs.
"""
import collections

import numpy as np

from . import _core, _derivcheck, _docs, _validate, linear
from ._errors import ConvergenceError
from ._trajectory import Trajectory

__all__ = ["step", "integrate"]


@_docs.fill
def step(system, q, p=None, h=None, method="simpson", *, qdot=None, rtol=None, max_iter=None,
         closed_form=True, check=True):
    """Advance one step: ``(q, p)`` at time t -> ``(q1, p1)`` at t + h.

    The states are bitwise those of row 1 of :func:`integrate` run for one
    step from ``(q, p)`` with the same options.

    Parameters
    ----------
    system : symplectic.System
    q, p : array_like (n,)
        Coordinates and canonical momenta p = M(q) qdot.
    qdot : array_like (n,), optional
        Velocities instead of ``p`` (exactly one of the two): p = M(q) qdot.
    {{h}}
    {{method}}
    {{newton_tolerances}}
    {{closed_form}}
    {{check}}

    Returns
    -------
    q1, p1 : ndarray (n,)

    Raises
    ------
    ConvergenceError
        Newton failed, a value became non-finite, or M(q) is not positive definite.
    DerivativeError
        A supplied derivative disagrees with finite differences (first use only).
    """
    system = _validate.system(system)
    m = _validate.method(method)
    h = _validate.step_size(h)
    q = _validate.state("q", q, system.n)
    p = _validate.initial_momentum(system, q, p, qdot, "p", "qdot")
    _validate.constrained_state(system, m, q, p, "q", "p", check)
    options = _validate.newton(rtol, max_iter)
    _derivcheck.ensure(system, q, check)
    closed = linear_stepper(system, m, h, closed_form)
    q1, p1, failure = run_step(system, q, p, h, m, options, closed)
    if failure is not None:
        raise convergence_error(m, h, failure, system=system)
    return q1, p1


@_docs.fill
def integrate(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
              t0=0.0, rtol=None, max_iter=None, predictor=True, newton="full",
              closed_form=True, check=True):
    """Integrate ``n_steps`` steps of size ``h`` from ``(q0, p0)`` at ``t0``.

    Parameters
    ----------
    system : symplectic.System
        A built-in system (:mod:`symplectic.systems`), a compiled C callback
        (:meth:`System.from_cfunc`) or a SymPy Lagrangian compiled to C
        (:meth:`System.from_sympy`) -- these run in C without the GIL -- or
        one made of Python callables (:class:`System`,
        :meth:`System.combined`, :meth:`System.vectorized`).
    q0, p0 : array_like (n,)
        Initial coordinates and canonical momenta p = M(q) qdot.
    {{h}}
    n_steps : int
        Number of steps (>= 0); the trajectory has n_steps + 1 points.
    {{method}}
    qdot0 : array_like (n,), optional
        Initial velocities instead of ``p0`` (exactly one of the two):
        p0 = M(q0) qdot0.
    t0 : float
        Initial time (default 0).
    {{newton_tolerances}}
    predictor : bool
        Start Newton from the extrapolated interpolating polynomial of the
        previous step (default); False starts every step from a Taylor
        predictor (slower, same result to the Newton tolerance).
    {{newton}}
    {{closed_form}}
    {{check}}

    Returns
    -------
    Trajectory
        with ``t``, ``q``, ``p``, ``qdot``, ``q_mid`` (None, (N, n) or
        (N, s - 2, n): see :class:`Trajectory`), ``newton_iterations``,
        ``energy``.

    Raises
    ------
    ConvergenceError
        If a step fails; ``err.trajectory`` holds the states computed so far
        and the message names the step, the time and the residual.
    DerivativeError
        A supplied derivative disagrees with finite differences (first use
        only; the message names the callback, the entry, both values and the
        layout it looks like).
    Exception from a callback, KeyboardInterrupt
        Propagate unchanged, with a note naming the step and time, and the
        steps completed before it in ``exc.trajectory``.
    MemoryError
        Before allocating, if the output arrays cannot fit in the available
        memory.
    """
    system = _validate.system(system)
    m = _validate.method(method)
    h = _validate.step_size(h)
    t0 = _validate.real("t0", t0)
    n_steps = _validate.step_count(n_steps)
    q0 = _validate.state("q0", q0, system.n)
    p0 = _validate.initial_momentum(system, q0, p0, qdot0, "p0", "qdot0")
    _validate.constrained_state(system, m, q0, p0, "q0", "p0", check)
    options = _validate.newton(rtol, max_iter, newton, predictor)
    _validate.memory(_validate.output_bytes(n_steps, system.n, m, system.n_constraints),
                     f"integrate(n_steps={n_steps}) with n = {system.n}")
    _derivcheck.ensure(system, q0, check)
    closed = linear_stepper(system, m, h, closed_form)
    try:
        r = run(system, q0, p0, h, n_steps, m, t0, options, closed, multipliers=True)
    except BaseException as exc:
        # a callback raised, or Ctrl-C: keep the steps completed before it
        part = getattr(exc, "__dict__", {}).pop("_symplectic_partial", None)
        if part is not None:
            exc.trajectory = make_trajectory(system, m, h, Run(*part[:6], None, *part[6:]),
                                             part[5])
        raise
    if r.failure is None:
        return make_trajectory(system, m, h, r)
    raise convergence_error(m, h, r.failure, trajectory=make_trajectory(system, m, h, r, r.done),
                            system=system)


# ---------------------------------------------------------------- running
#: What one run computed: the arrays (t (N+1,), q, p (N+1, n), q_mid
#: (N, n_mid, n) or None, iterations (N,)), the steps done, the failure
#: (None, or a Failure) and, for a constrained system, the multipliers
#: (N, s, m) at the nodes of each step (or None).
Run = collections.namedtuple("Run", "t q p q_mid iterations done failure multipliers",
                             defaults=(None,))

#: A failed step, as the binding reports it (reason: the C core's
#: sym_strerror text; status None for the closed form).
Failure = collections.namedtuple("Failure",
                                 "status reason step t iterations residual residual_rel")

# the reason the closed form gives when its values overflow: the text of the
# core's status for the same event (SYM_ENONFINITE), so that both paths say the same
_NONFINITE = "a non-finite value (nan or inf) appeared"


def linear_stepper(system, method, h, closed_form):
    """The one decision about the closed form: for a ``systems.linear`` system
    warn when |h| reaches the stability limit of ``"simpson"`` or ``"rk4"``,
    and return the closed-form stepper (:func:`symplectic.linear.stepper`)
    when ``closed_form`` is true and the method has one (``"simpson"``,
    ``"midpoint"``); None for every other system, method or choice."""
    if system.builtin != "linear":
        return None
    M, K = system.params["M"], system.params["K"]
    linear.check_stability(M, K, h, method.name, stacklevel=4)
    if not closed_form or method.name not in ("simpson", "midpoint"):
        return None
    return linear.stepper(M, K, h, "simpson" if method.name == "simpson" else "newmark")


def run(system, q0, p0, h, n_steps, method, t0=0.0, options=None, closed=None, cancel=None,
        multipliers=False):
    """Integrate validated inputs: the C core's run, or the closed form's when
    ``closed`` is a stepper from :func:`linear_stepper`.  A failed step is
    returned in ``Run.failure``; an exception from a callback (or Ctrl-C, or
    ``cancel.is_set()``) propagates with the partial arrays attached by the
    binding (and the multipliers, when asked for, appended to them)."""
    refused = _refused(system, q0, p0, method, t0)       # the built-in's pre-run check
    if refused is not None:
        return refused
    if closed is not None:
        return _run_closed(closed, q0, p0, h, n_steps, method, t0)
    kw = dict(options or {})
    lam = None
    if multipliers and system.n_constraints:
        lam = np.zeros((n_steps, len(method.nodes), system.n_constraints))
        kw["multipliers"] = lam
    try:
        t, q, p, qm, iters, done, fail = _core.integrate(
            system, q0, p0, h, n_steps, method.name, t0=t0, cancel=cancel, **kw)
    except BaseException as exc:
        part = getattr(exc, "__dict__", {}).get("_symplectic_partial")
        if part is not None and lam is not None:
            exc._symplectic_partial = tuple(part) + (lam,)
        raise
    return Run(t, q, p, qm, iters, done, None if fail is None else Failure(*fail), lam)


def run_step(system, q, p, h, method, options=None, closed=None):
    """One step from validated inputs: (q1, p1, failure)."""
    refused = _refused(system, q, p, method, 0.0)          # the built-in's pre-run check
    if refused is not None:
        return q.copy(), p.copy(), refused.failure
    if closed is not None:
        r = _run_closed(closed, q, p, h, 1, method, 0.0)
        return r.q[1].copy(), r.p[1].copy(), r.failure
    q1, p1, _, status, iters, res, res_rel, _upd, reason = _core.step(
        system, q, p, h, method.name, **(options or {}))
    failure = None if status == 0 else Failure(status, reason, 0, 0.0, iters, res, res_rel)
    return q1, p1, failure


def _refused(system, q0, p0, method, t0):
    """The Run of a run that the system's own pre-run check
    (:func:`symplectic._validate.chart`) refuses: no step done, the initial
    state alone, a Failure at step 0 whose reason is the check's (status
    ``"refused"``); None when the check passes (or the system has none)."""
    reason = _validate.chart(system, q0, p0)
    if reason is None:
        return None
    n = len(q0)
    q_mid = np.empty((0, method.n_mid, n)) if method.n_mid > 0 else None
    fail = Failure("refused", reason, 0, float(t0), 0, float("nan"), float("nan"))
    return Run(t=np.array([float(t0)]), q=q0[None, :].copy(), p=p0[None, :].copy(),
               q_mid=q_mid, iterations=np.zeros(0, dtype=np.intc), done=0, failure=fail)


def _run_closed(closed, q0, p0, h, n_steps, method, t0):
    """The closed form's Run: no Newton iterations; a failure at the first step
    whose result is not finite (the core's rule)."""
    out = closed(q0, p0, n_steps, with_midpoint=method.n_mid > 0)
    q, p = out[0], out[1]
    q_mid = out[2][:, None, :] if method.n_mid > 0 else None
    t = t0 + h * np.arange(n_steps + 1, dtype=float)
    iters = np.zeros(n_steps, dtype=np.intc)
    bad = ~(np.isfinite(q).all(axis=1) & np.isfinite(p).all(axis=1))
    if not bad.any():
        return Run(t, q, p, q_mid, iters, n_steps, None)
    done = int(np.argmax(bad)) - 1
    fail = Failure(None, _NONFINITE, done, float(t[done]), 0, float("nan"), float("nan"))
    return Run(t, q, p, q_mid, iters, done, fail)


def step_tangent(system, q, p, h, method="simpson", check=True):
    """One step and its exact tangent map: (q1, p1, D), D = d(q1, p1)/d(q, p)
    (2n, 2n) in (q, p) ordering (the implicit function theorem on the
    discrete Euler-Lagrange equations; the linearised stages for RK4).
    Inputs are checked as :func:`step` checks them; a failed step raises the
    binding's RuntimeError ("step_tangent failed: <reason> (residual r)")."""
    system = _validate.system(system)
    m = _validate.method(method)
    h = _validate.step_size(h)
    q = _validate.state("q", q, system.n)
    p = _validate.state("p", p, system.n)
    _derivcheck.ensure(system, q, check)
    return _core.step_tangent(system, q, p, h, m.name)


# ---------------------------------------------------------------- results
#: The core's text for a singular Newton matrix (sym_strerror(SYM_ESINGULAR)).
_SINGULAR = "Newton matrix is singular"


def convergence_error(method, h, failure, *, member=None, trajectory=None, system=None):
    """The ConvergenceError of a failed step (``failure`` a :class:`Failure`),
    for a run (with the trajectory up to the failing step), an ensemble member
    or a single step."""
    who = method.name if member is None else f"{method.name} (ensemble member {member})"
    f = failure
    reason = f.reason
    if reason == _SINGULAR and getattr(system, "n_constraints", None):
        # with constraints, the saddle-point matrix is singular when G(q) loses rank
        reason += (" (this system has holonomic constraints: their Jacobian G(q) may have "
                   "lost rank, a singular configuration)")
    if f.status == "refused":                  # by the system's pre-run check: no step taken
        msg = f"{who} refused the initial state (t = {f.t:.17g}, h = {h:g}): {reason}"
    else:
        msg = (f"{who} failed at step {f.step} (t = {f.t:.17g}, h = {h:g}): {reason}; "
               f"{f.iterations} Newton iterations, residual {f.residual:.3g} "
               f"(relative {f.residual_rel:.3g})")
    if trajectory is not None:
        msg += f"; the trajectory up to t = {f.t:.17g} is in .trajectory"
    return ConvergenceError(msg, step=f.step, t=f.t, residual=f.residual,
                            iterations=f.iterations, reason=f.reason, trajectory=trajectory)


def make_trajectory(system, method, h, r, done=None):
    """The Trajectory of a Run: all of it, or (``done``) the steps before a
    failure or an exception (copies, so that the full arrays can go)."""
    q_mid = r.q_mid
    if q_mid is not None and q_mid.shape[1] == 1:
        q_mid = q_mid[:, 0, :]                  # one internal node: (N, n)
    lam = r.multipliers
    if done is None:
        return Trajectory(system, method.name, h, r.t, r.q, r.p, q_mid, r.iterations,
                          multipliers=lam)
    return Trajectory(system, method.name, h, r.t[:done + 1].copy(), r.q[:done + 1].copy(),
                      r.p[:done + 1].copy(), None if q_mid is None else q_mid[:done].copy(),
                      r.iterations[:done].copy(),
                      multipliers=None if lam is None else lam[:done].copy())
