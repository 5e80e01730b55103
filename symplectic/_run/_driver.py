"""The one place where the package runs the C core's driver, on a prepared
run (:class:`symplectic._run._prepare.Prepared`) and a workspace kept across
calls (``_engine.work``: made here for a one-off run, an Integrator's own
for its pieces): :func:`run` (a run of steps, with what it keeps and
differentiates, :class:`Outputs`), :func:`run_step` (one step),
:func:`run_trajectory` (a run made a Trajectory: events, output times,
progress, the partial trajectory of an exception, the ConvergenceError of a
failed step) and :func:`make_trajectory`."""
import collections
import dataclasses

import numpy as np

from .. import _engine
from .._model import _validate
from . import _events, _progress
from ._failures import Failure, convergence_error, ran_off_error
from ._trajectory import Counts, Trajectory

__all__ = ["Run", "Outputs", "run", "run_step", "shoot", "run_trajectory", "make_trajectory",
           "force_outputs", "observer_of"]

#: What one run computed: the arrays (t (N+1,), q, p (N+1, n), q_mid
#: (N, n_mid, n) or None, iterations (N,)), the steps done, the failure
#: (None, or a Failure), the rows filled, whether a hook stopped the run, its
#: counts, with a force its accumulated work (N+1,) and impulse (N+1, n)
#: (None without one), for a constrained system the multipliers
#: (rows - 1, s, m) at the nodes of the step ending at each stored row (or
#: None), and the derivatives :class:`Outputs` asked for.
Run = collections.namedtuple(
    "Run", "t q p q_mid iterations done failure rows stopped counts work impulse multipliers "
    "tangent param_tangent param_names",
    defaults=(None, False, None, None, None, None, None, None, None))


@dataclasses.dataclass
class Outputs:
    """What a run keeps besides its states, and what it differentiates: one
    concept from the caller to the binding (its keywords, :meth:`arguments`)
    and the C run (sym_run's outputs).  The arrays the caller owns are filled
    in place; those :meth:`arguments` allocates come back in the :class:`Run`.

    - ``force``: (work, impulse) arrays at the stored rows, or None (made for
      a forced run: :func:`force_outputs`);
    - ``multipliers``: keep a constrained system's multipliers;
    - ``tangent0``: with ``spec.tangent``, the tangent at node 0 (2n, k) of a
      continued run (None: the identity);
    - ``jacobians``: an array (n_steps, 2n, (2 + P) n) for each step's own
      derivative (P = 0; a held force's columns too: 1 for a value a step,
      the method's force points for a value at each), for an adjoint sweep;
    - ``h_jacobians``: (n_steps, 2, 2n), each step's derivative in h and in
      its start time (the variational schemes);
    - ``points``: with ``jacobians``, (n_steps, r, 2n, 1 + c [+ 2]) the
      states at each step's r force points and their derivatives;
    - ``param_jac``: with parameters (the prepared run's ``params``), each
      step's parameter block (n_steps, 2n, n_par); ``param0``: the parameter
      derivatives at node 0 of a continued run (2n, n_par; None: 0).

    A new output is a field here, its keyword in :meth:`arguments` (and the
    arrays it allocates), sym_run's field in the driver, and its test."""
    force: object = None
    multipliers: bool = False
    tangent0: object = None
    jacobians: object = None
    h_jacobians: object = None
    points: object = None
    param_jac: object = None
    param0: object = None

    def arguments(self, prep, spec):
        """(keywords of the binding's integrate, the arrays it fills that this
        call allocates: {"multipliers", "tangent", "param_tangent"}, each
        None when not asked for)."""
        system = prep.system
        rows = _engine.stored_rows(spec.n_steps, spec.every)
        kw, made = {}, dict(multipliers=None, tangent=None, param_tangent=None)
        if self.multipliers and system.n_constraints:
            made["multipliers"] = kw["multipliers"] = np.zeros(
                (rows - 1, len(spec.method.nodes), system.n_constraints))
        if spec.tangent:
            cols = 2 * system.n
            if self.tangent0 is not None:
                kw["tangent0"] = np.ascontiguousarray(self.tangent0, dtype=float)
                cols = kw["tangent0"].shape[1]
            made["tangent"] = kw["tangent"] = np.empty((rows, 2 * system.n, cols))
        for name in ("jacobians", "h_jacobians", "points"):
            if getattr(self, name) is not None:
                kw[name] = getattr(self, name)
        if prep.params is not None:
            if spec.tangent:
                made["param_tangent"] = np.zeros((rows, 2 * system.n, len(prep.params.names)))
            kw["params"] = prep.params.arg(made["param_tangent"], self.param_jac, self.param0)
        return kw, made


def force_outputs(force, n_steps, n, every=1):
    """The arrays a forced run fills with its work and impulse at its stored
    rows (every ``every``-th step and the last), (None, None) without a
    force."""
    if force is None:
        return None, None
    rows = _engine.stored_rows(n_steps, every)
    return np.zeros(rows), np.zeros((rows, n))


def observer_of(spec, system, q0, p0, force=None, t_start=None):
    """The :class:`symplectic._run._events.Observer` of a run from (q0, p0) at
    ``t_start`` (default spec.t0) -- its events and output times -- or None
    when the spec asks for neither."""
    if not spec.events and spec.times is None:
        return None
    t = spec.t0 if t_start is None else t_start
    return _events.Observer(system, spec.method, t, spec.h, spec.n_steps, q0, p0, spec.events,
                            spec.times, forced=force is not None)


def run(prep, q0=None, p0=None, spec=None, *, kept=None, cancel=None, observer=None,
        report=None, outputs=None, start=(0.0, None)):
    """The C core's run of the prepared run ``prep`` from (q0, p0) (default:
    its own initial state) by ``spec`` (default: its own; a continued run's
    has k0 > 0): the steps ``spec.k0 ..`` of a run from the origin
    ``spec.t0`` (node 0 at t0 + k0 h), on ``kept`` (a workspace kept across
    calls, an Integrator's; default: a new one, :meth:`Prepared.workspace`).
    ``start``: the force's accumulated (work, impulse) at node 0.

    A failed step is returned in ``Run.failure``; an exception from a
    callback (or Ctrl-C, or ``cancel.is_set()``) propagates with the partial
    arrays attached by the binding.  ``observer`` (an
    :class:`symplectic._run._events.Observer`) is called after the steps it
    asks for, ``report(steps_done)`` with the periodic Ctrl-C check.  The
    arrays hold ``Run.rows`` valid rows.  What the run keeps and
    differentiates besides the states: ``outputs`` (:class:`Outputs`).  A
    state the built-in's own pre-run check refuses (:func:`_refused`) at the
    run's start (k0 = 0) returns a Run of the initial state alone."""
    system, force = prep.system, prep.force
    spec = prep.spec if spec is None else spec
    q0 = prep.q0 if q0 is None else q0
    p0 = prep.p0 if p0 is None else p0
    outputs = Outputs() if outputs is None else outputs
    h, n_steps, t0, every = spec.h, spec.n_steps, spec.t0, spec.every
    if spec.k0 == 0:         # the built-in's pre-run check, at the run's start
        refused = _refused(system, q0, p0, spec.method, t0, force)
        if refused is not None:
            return refused
    if kept is None:
        kept = prep.workspace()
    kw = {}
    if every > 1:
        kw["store_every"] = every
    hook = observer.hook if observer is not None else None
    if hook is not None:
        kw.update(hook=hook, hook_buf=observer.buf, hook_steps=observer.hook_steps)
        if force is not None and observer.fbuf is not None:
            kw["hook_force"] = observer.fbuf
    if report is not None:
        kw["report"] = report
    work = impulse = None
    if force is not None:
        work, impulse = outputs.force if outputs.force is not None else force_outputs(
            force, n_steps, system.n, every)
        kw.update(work=work, impulse=impulse, work0=start[0], impulse0=start[1])
    more, made = outputs.arguments(prep, spec)
    kw.update(more)
    try:
        t, q, p, qm, iters, done, fail, extras = kept.integrate(
            q0, p0, h, n_steps, t0=t0, k0=spec.k0, cancel=cancel, **kw)
    except BaseException as exc:
        part = getattr(exc, "__dict__", {}).get("_symplectic_partial")
        if part is not None:
            exc._symplectic_partial = tuple(part) + (
                {"multipliers": made["multipliers"], "tangent": made["tangent"]},)
        raise
    rows, stopped, counts = extras
    if rows < len(t):                      # stopped early: the rows filled
        t, q, p, iters = t[:rows], q[:rows], p[:rows], iters[:rows - 1]
        if qm is not None:
            qm = qm[:rows - 1]
        if work is not None:
            work, impulse = work[:rows], impulse[:rows]
    lam, tan, ptan = made["multipliers"], made["tangent"], made["param_tangent"]
    return Run(t, q, p, qm, iters, done, None if fail is None else Failure(*fail), rows,
               bool(stopped), Counts(*counts), work, impulse,
               None if lam is None else lam[:rows - 1], None if tan is None else tan[:rows],
               None if ptan is None else ptan[:rows],
               None if prep.params is None else prep.params.names)


def run_step(prep):
    """One step of the prepared one-step run ``prep`` (its spec's t0 the
    step's time): (q1, p1, failure)."""
    system, spec, q, p = prep.system, prep.spec, prep.q0, prep.p0
    refused = _refused(system, q, p, spec.method, spec.t0, prep.force)
    if refused is not None:
        return q.copy(), p.copy(), refused.failure
    q1, p1, _, status, iters, res, res_rel, _upd, reason = prep.workspace().step(
        q, p, spec.h, spec.t0)
    failure = None if status == 0 else Failure(status, reason, 0, spec.t0, iters, res, res_rel)
    return q1, p1, failure


def shoot(kept, q0, p0, k, h, hold, outputs):
    """B independent single steps on the kept workspace ``kept`` (whose force
    has a held part of P values a step): item b from (q0[b], p0[b]) (B, n) at
    time k[b] h[b] with step h[b], its held force values hold[b] (B, P, n;
    pointed at in place, ``Work.set_hold``), its derivatives into row b of
    ``outputs``' jacobians, h_jacobians and points (:class:`Outputs`, with B
    for n_steps).  Each item starts as a fresh one-step run does.  Returns
    (q1, p1, failed, failure): the ends (B, n), and failed = B, failure None
    when every item stepped, else the first item that failed and its
    :class:`Failure` (the rows from it on unfilled)."""
    k = np.asarray(k, dtype=float)
    h = np.asarray(h, dtype=float)
    kept.set_hold(np.ascontiguousarray(hold, dtype=float).reshape(len(hold), -1), 0)
    kw = {name: getattr(outputs, name) for name in ("h_jacobians", "points")
          if getattr(outputs, name) is not None}
    q1, p1, failed, fail = kept.shoot(q0, p0, k, h, jacobians=outputs.jacobians, **kw)
    if fail is None:
        return q1, p1, failed, None
    status, reason, iters, res, res_rel = fail
    return q1, p1, failed, Failure(status, reason, 0, float(k[failed] * h[failed]), iters, res,
                                   res_rel)


def _refused(system, q0, p0, method, t0, force=None):
    """The Run of a run that the system's own pre-run check
    (:func:`symplectic._model._validate.chart`) refuses: no step done, the initial
    state alone, a Failure at step 0 whose reason is the check's (status
    SYM_ECHART, ``refused`` true); None when the check passes (or the system has none, or a
    force -- ``force`` or the system's own damping -- drives the motion, which
    the check's conserved quantities then do not describe)."""
    reason = _validate.chart(system, q0, p0, force)
    if reason is None:
        return None
    n = len(q0)
    q_mid = np.empty((0, method.n_mid, n)) if method.n_mid > 0 else None
    fail = Failure(_engine.ECHART, reason, 0, float(t0), 0, float("nan"), float("nan"), True)
    return Run(t=np.array([float(t0)]), q=q0[None, :].copy(), p=p0[None, :].copy(),
               q_mid=q_mid, iterations=np.zeros(0, dtype=np.intc), done=0, failure=fail,
               rows=1, stopped=False, counts=Counts(0, 0, 0, 0))


def _partial_run(part, outputs=(None, None)):
    """The Run of the partial arrays an exception carries (py_integrate.c
    attach_partial: t, q, p, q_mid, iters, done, (rows, stopped, counts)),
    with the force's work and impulse arrays (``outputs``), and the
    multipliers and tangent that :func:`run` appended (a dict)."""
    t, q, p, qm, iters, done, (rows, stopped, counts), *more = part
    more = more[0] if more else {}
    return Run(t, q, p, qm, iters, done, None, rows, bool(stopped), Counts(*counts), *outputs,
               more.get("multipliers"), more.get("tangent"))


def run_trajectory(prep, what, *, spec=None, q0=None, p0=None, kept=None, start=(0.0, None),
                   t_start=None, advance=None, tangent0=None, param0=None):
    """The Trajectory of the prepared run ``prep`` (integrate, an
    Integrator's piece: ``spec``, ``q0``, ``p0``, ``kept``, ``start`` as for
    :func:`run`): its observer (events, output times), the progress bar
    (labelled ``what``), the partial trajectory of an exception (in
    ``exc.trajectory``), the ConvergenceError of a failed step.
    ``t_start`` the time of (q0, p0) (default spec.t0); ``advance(r)`` (an
    Integrator's) is called with the Run of the steps done -- also before a
    failure or an exception propagates; ``tangent0``, ``param0``: the
    derivatives at node 0 of a continued run (:class:`Outputs`)."""
    system, force = prep.system, prep.force
    spec = prep.spec if spec is None else spec
    q0 = prep.q0 if q0 is None else q0
    p0 = prep.p0 if p0 is None else p0
    m, h, every = spec.method, spec.h, spec.every
    outputs = Outputs(force=force_outputs(force, spec.n_steps, system.n, every),
                      multipliers=spec.times is None, tangent0=tangent0, param0=param0)
    observer = observer_of(spec, system, q0, p0, force, t_start)
    bar = _progress.bar(spec.progress, spec.n_steps, what)
    try:
        r = run(prep, q0, p0, spec, kept=kept, observer=observer,
                report=bar.report if bar else None, outputs=outputs, start=start)
        if bar:
            bar.report(r.done)
    except BaseException as exc:
        # a callback raised, or Ctrl-C: keep the steps completed before it
        part = getattr(exc, "__dict__", {}).pop("_symplectic_partial", None)
        if part is not None:
            pr = _partial_run(part, outputs.force)
            exc.trajectory = make_trajectory(system, m, h, pr, part[5], every=every,
                                             observer=observer, force=force)
            if advance is not None:
                advance(pr)
            ran_off = ran_off_error(exc, system, m, h, q0)
            if ran_off is not None:
                raise ran_off from exc
        raise
    finally:
        if bar:
            bar.close()
    if advance is not None:
        advance(r)
    if spec.tf is not None and r.failure is None and not r.stopped and spec.n_steps > 0:
        r.t[-1] = spec.tf                  # t0 + n h is tf to rounding: the span's end exactly
    if r.failure is None:
        return make_trajectory(system, m, h, r, every=every, observer=observer,
                               h_req=spec.h_req, force=force)
    raise convergence_error(m, h, r.failure, trajectory=make_trajectory(
        system, m, h, r, r.done, every=every, observer=observer, force=force), system=system)


def make_trajectory(system, method, h, r, done=None, *, every=1, observer=None, h_req=None,
                    force=None):
    """The Trajectory of a Run: all of it, or (``done``) the steps before a
    failure or an exception (copies, so that the full arrays can go).  With
    an observer: its events, and with ``t_eval`` its states as the rows."""
    q_mid = r.q_mid
    if q_mid is not None and q_mid.shape[1] == 1:
        q_mid = q_mid[:, 0, :]                  # one internal node: (N, n)
    partial = done is not None
    rows = r.rows if r.rows is not None else (len(r.t) if done is None else done + 1)
    if every == 1 and partial:
        rows = done + 1
    t, q, p, iters = r.t[:rows], r.q[:rows], r.p[:rows], r.iterations[:rows - 1]
    lam = None if r.multipliers is None else r.multipliers[:rows - 1]
    tan = None if r.tangent is None else r.tangent[:rows]
    ptan = None if r.param_tangent is None else r.param_tangent[:rows]
    if q_mid is not None:
        q_mid = q_mid[:rows - 1]
    if partial:
        t, q, p, iters = t.copy(), q.copy(), p.copy(), iters.copy()
        q_mid = None if q_mid is None else q_mid.copy()
        lam = None if lam is None else lam.copy()
        tan = None if tan is None else tan.copy()
        ptan = None if ptan is None else ptan.copy()
    events = qdot = None
    store = every
    if observer is not None:
        if observer.events:
            events = observer.events_found()
        if observer.t_eval is not None:
            t, q, p, qdot = observer.samples()
            iters, q_mid, store, lam = None, None, None, None
            if r.work is not None:             # the work and impulse at the t_eval times
                sw, si = observer.force_samples()
                r = r._replace(work=sw, impulse=si)
                rows = len(t)
    status, message = _status(r, partial, observer, h, h_req, method)
    counts = r.counts if r.counts is not None else Counts(r.done, 0, 0, 0)
    work = None if r.work is None else r.work[:rows]
    impulse = None if r.impulse is None else r.impulse[:rows]
    if partial and work is not None:
        work, impulse = work.copy(), impulse.copy()
    return Trajectory(system, method.name, h, t, q, p, q_mid, iters, status=status,
                      message=message, counts=counts, store_every=store, events=events,
                      qdot=qdot, work=work, impulse=impulse, force=force, multipliers=lam,
                      t0=observer.t0 if observer is not None else None, tangent=tan,
                      param_tangent=ptan, param_names=r.param_names)


def _status(r, partial, observer, h, h_req, method):
    """(status, message) of a run."""
    if partial:
        f = r.failure
        why = f.reason if f is not None else "interrupted (an exception)"
        return -1, f"the steps before a failure at step {r.done}: {why}"
    if r.stopped and observer is not None and observer.stop is not None:
        i, te = observer.stop
        name = getattr(observer.events[i].fn, "__name__", "event")
        return 1, (f"stopped by terminal event {i} ({name}) at t = {te:.17g}, in the step "
                   f"ending at t = {float(r.t[-1]):.17g}")
    msg = f"completed: {r.done} {method.name} steps of h = {h:.17g}"
    if h_req is not None and h != h_req:
        msg += f" (adjusted from h = {h_req:.17g} so that whole steps span t_span)"
    return 0, msg
