"""What a failed step becomes: the one ConvergenceError of every run
(:func:`convergence_error`), the words of an unstable step size
(:func:`unstable_reason`: the stability estimate at the run's start and, while
it has not grown far, at the failing state), and the unstable step behind a
callback's complaint about a non-finite value at a state the integrator
produced (:func:`ran_off_error`)."""
import collections

import numpy as np

from .. import _engine
from .._model._errors import ConvergenceError
from . import _stability

__all__ = ["Failure", "convergence_error", "unstable_reason", "ran_off_error"]


#: A failed step, as the binding reports it: the C core's status (an int) and
#: its text (sym_strerror; ``_engine.ECHART_REASON`` for the one failure
#: found in Python: the pre-run check's refusal, whose reason the check
#: completes); ``refused``: no step was
#: taken, the system's pre-run check refused the initial state.
Failure = collections.namedtuple(
    "Failure", "status reason step t iterations residual residual_rel refused",
    defaults=(False,))


def convergence_error(method, h, failure, *, member=None, trajectory=None, system=None,
                      state=None, start=None):
    """The ConvergenceError of a failed step (``failure`` a :class:`Failure`),
    for a run (with the trajectory up to the failing step), an ensemble member
    or a single step.  ``state`` (q, p) is where the failing step started
    (default: the trajectory's last row), ``start`` (q, p) where the run
    started (default: the trajectory's first row when it is the run's
    initial state; else ``state``, as for a single step): the stability
    estimates that complete the reason of an unstable step
    (:func:`unstable_reason`)."""
    who = method.name if member is None else f"{method.name} (ensemble member {member})"
    f = failure
    reason = f.reason
    if f.status == _engine.ESINGULAR and getattr(system, "n_constraints", None):
        # with constraints, the saddle-point matrix is singular when G(q) loses rank
        reason += (" (this system has holonomic constraints: their Jacobian G(q) may have "
                   "lost rank, a singular configuration)")
    where = None
    if state is None and trajectory is not None and len(trajectory.q):
        state = (trajectory.q[-1], trajectory.p[-1])
        where = _row_words(trajectory, -1, f)
    if start is None and trajectory is not None and len(trajectory.q):
        start = _start_of(trajectory)
    if system is not None and state is not None:
        reason = unstable_reason(system, method, h, f.status, reason, state, start, where)
    if f.refused:                  # by the system's pre-run check: no step taken
        msg = f"{who} refused the initial state (t = {f.t:.17g}, h = {h:g}): {reason}"
    else:
        msg = (f"{who} failed at step {f.step} (t = {f.t:.17g}, h = {h:g}): {reason}; "
               f"{f.iterations} Newton iterations, residual {f.residual:.3g} "
               f"(relative {f.residual_rel:.3g})")
    if trajectory is not None:
        msg += f"; the trajectory up to t = {f.t:.17g} is in .trajectory"
    return ConvergenceError(msg, step=f.step, t=f.t, residual=f.residual,
                            iterations=f.iterations, reason=reason, trajectory=trajectory)


def _start_of(trajectory):
    """(q, p) of the run's initial state, the trajectory's first row -- None
    when that row is not it (``t_eval`` rows from a later time)."""
    t0 = trajectory.t0
    if trajectory.store_every is None and (t0 is None or float(trajectory.t[0]) != t0):
        return None
    return trajectory.q[0], trajectory.p[0]


def _row_words(trajectory, row, failure):
    """Where row ``row`` of a partial trajectory stands: the failing step's
    start when the rows are every step, else the last state kept before it."""
    t = float(trajectory.t[row])
    if trajectory.store_every == 1 and t == failure.t:
        return f"at t = {t:.6g} (the failing step's start)"
    return f"at t = {t:.6g} (the last state kept before the failing step)"


def ran_off_error(exc, system, method, h, q0):
    """A ConvergenceError ("unstable step size") for a callback's complaint
    about a non-finite value at a state the integrator produced -- the run
    had run off (or its step was beyond the stability limit) -- or None when
    the complaint may be the system's own.  ``exc.trajectory`` holds the
    steps before it."""
    traj = getattr(exc, "trajectory", None)
    if not isinstance(exc, ValueError) or traj is None or not len(traj.q):
        return None
    text = str(exc).splitlines()[0] if str(exc) else ""
    if "returned a non-finite value" not in text:
        return None
    done = len(traj.t) - 1 if traj.store_every == 1 else traj.counts.steps
    f = Failure(_engine.ENONFINITE, "the system was evaluated at a state the integrator "
                "produced and gave a non-finite value there (that message is this error's "
                "__cause__)", done, float(traj.t[-1]), 0, float("nan"), float("nan"))
    err = convergence_error(method, h, f, trajectory=traj, system=system)
    return err if err.reason.startswith("unstable step size") else None


#: Beyond this factor over the initial |q| (and 1) a state has run off: values
#: the integrator produced, not the system's.
_RUN_OFF = 1e100

#: Beyond this factor of the start's energy scale |T0| + |V0|, a change of the
#: energy H = T + V since the start means that the state has grown far from it
#: (the unstable growth's, not the motion's; :func:`unstable_reason`).
_GROWN = 10.0


def unstable_reason(system, method, h, status, reason, state, start=None, where=None):
    """The reason of a failed step, completed by the stability estimate
    (symplectic._run._stability) at the run's start ``start`` (q0, p0) --
    the numbers of the pre-run StabilityWarning -- and at the state ``state``
    (q, p) where the failing step started (``where``: its words, default
    "at the step's start"; ``start`` None: a single step, whose start it is).

    The rule: the estimate named first is the start's, always (when it can
    be evaluated).  The failing state's own is added after it only when it
    tells something: the state is finite, the estimate there is, it differs
    from the start's, and the state has not grown far from the start -- its
    |q| within 1e100 (1 + |q0|) and its energy H within ``_GROWN`` (10) times
    the start's |T0| + |V0| of H0 (a stable conservative motion keeps H0; an
    unstable one grows it: rk4 at h = 0.05 on the hardening spring V = q^2/2
    + 1e4 q^4/4 from q0 = 1 fails at a state of omega_max = 1.7e30 rad/s,
    against 173 at the start).  The words then say that the state had grown
    far from the start (its energy against the start's), and name no
    estimate there.  With no estimate at the start (none given, or it cannot
    be evaluated) the failing state's is the one named; with none at all,
    the reason stays as it is.

    For the core's "unstable step size": those words.  A failure that could
    not confirm the root, a non-finite value or Newton's divergence is named
    an unstable step size when the step is at or beyond the method's limit
    at the start or at the (not grown) failing state, or the state has run
    off (|q| beyond 1e100 (1 + |q0|))."""
    q, p = (np.asarray(x, dtype=float) for x in state)
    finite = bool(np.all(np.isfinite(q)) and np.all(np.isfinite(p)))
    if start is None:
        est0, label0 = None, None
        q0 = None
    else:
        q0, p0 = (np.asarray(x, dtype=float) for x in start)
        est0, label0 = _estimate_at(system, method, h, q0, p0), "at the run's start"
    run_off = (q0 is not None and finite
               and np.max(np.abs(q)) > _RUN_OFF * (1.0 + np.max(np.abs(q0))))
    grown = None if start is None else _grown(system, q, p, q0, p0, run_off)
    est = None if (grown is not None or not finite) else _estimate_at(system, method, h, q, p)
    where = "at the step's start" if where is None else where
    if est0 is None and est is not None:        # no start, or none there: the state's alone
        est0, label0, est = est, where, None
    words = _stability.describe(est0, method.name, label0)
    if est is not None and words and _stability.describe(est, method.name, where) != \
            _stability.describe(est0, method.name, where):
        words += "; " + _stability.describe_short(est, where)
    if grown is not None and words:
        words += f"; {where} the state had grown far from the run's start ({grown})"
    if status == _engine.EUNSTABLE:
        return f"{reason}: {words}" if words else reason
    beyond = any(e is not None and e.omega_h >= e.limit for e in (est0, est))
    if status in (_engine.EBRANCH, _engine.ENONFINITE, _engine.ENOCONV) and (beyond or run_off):
        text = (words if words else
                f"the state ran off to |q| = {np.max(np.abs(q)):.3g}")
        return f"unstable step size: {text} ({reason})"
    return f"{reason}; {words}" if words and status == _engine.EBRANCH else reason


def _estimate_at(system, method, h, q, p):
    """The stability estimate at (q, p), or None (a non-finite state, or a
    callback that raises there)."""
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(p))):
        return None
    with np.errstate(all="ignore"):
        try:
            return _stability.estimate(system, q, h, method, p)
        except Exception:                    # a callback that raises there: no estimate
            return None


def _grown(system, q, p, q0, p0, run_off):
    """The words of how the state (q, p) has grown far from the start (q0,
    p0) (:func:`unstable_reason`'s rule), or None when it has not."""
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(p))):
        return "it is not finite"
    if run_off:
        return f"|q| = {np.max(np.abs(q)):.3g}"
    with np.errstate(all="ignore"):
        try:
            H0, V0 = float(system.energy(q0, p0)), float(system.potential(q0))
            H = float(system.energy(q, p))
        except Exception:                    # (the start's was evaluated by the run)
            return "its energy cannot be evaluated there"
    scale = abs(H0 - V0) + abs(V0)
    if np.isfinite(H) and abs(H - H0) <= _GROWN * scale:
        return None
    return f"energy {H:.3g} against {H0:.3g} at the start"
