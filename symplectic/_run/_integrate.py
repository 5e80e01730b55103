"""step and integrate, and the one place where the package runs the C core.

Every run -- :func:`step`, :func:`integrate`, each member of
:func:`symplectic.integrate_many`, the tangent map of
:func:`symplectic.analysis.tangent_map` -- goes through the functions of the
second half of this module: :func:`linear_stepper` decides whether a linear
system takes its closed form (one-step matrices that the C core applies),
:func:`run` and :func:`run_step` run the C core's one driver and return what
it computed, failure included,
:func:`convergence_error` turns a failure into the one ConvergenceError,
:func:`make_trajectory` the arrays into a Trajectory.  Inputs are checked by
:mod:`symplectic._model._validate` before any of this runs.
"""
import collections

import numpy as np

from .._model import _derivcheck, _validate
from .. import _engine, forces, linear
from . import _docs, _events, _params, _progress, _stability
from .._model._errors import ConvergenceError
from ._trajectory import Counts, Trajectory

__all__ = ["step", "integrate"]


@_docs.fill
def step(system, q, p=None, h=None, method="simpson", *, qdot=None, rtol=None, max_iter=None,
         closed_form=True, check=True, force=None, force_jac=None, t=0.0, t_span=None,
         branch_check="auto", newton="auto"):
    """Advance one step: ``(q, p)`` at time t -> ``(q1, p1)`` at t + h.

    The states are bitwise those of row 1 of :func:`integrate` run for one
    step from ``(q, p)`` at ``t0 = t`` with the same options.

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
    {{newton}}
    {{branch_check}}
    {{closed_form}}
    {{check}}
    {{force}}
        An array is one row (n,) or (1, n) here: the force held over this
        step (a sampled controller calls ``step`` in a loop).
    t : float
        The time of ``(q, p)`` (default 0), for a time-dependent force.
    t_span : tuple of two floats, optional
        The step as a time span ``(t, t1)`` instead of ``h`` and ``t``: h = t1 - t (a
        given h must agree to 1e-9 relative, a nonzero ``t`` must equal
        t_span[0]).  The other words of :func:`integrate` (``t_eval``,
        ``store_every``, ``events``, ``progress``) describe runs of many
        steps; one step has its state at t + h only.

    Returns
    -------
    q1, p1 : ndarray (n,)

    Raises
    ------
    ConvergenceError
        Newton failed, a value became non-finite, or M stopped being positive
        definite within the step.
    ValueError
        M(q) is not symmetric positive definite at the given q (before the
        step; the message names q, the eigenvalues and the callback or the
        system's parameters).
    DerivativeError
        A supplied derivative disagrees with finite differences (first use only).
    """
    system = _validate.system(system)
    spec = _validate.run_spec(method, h, 1, t, t_span, one_step=True, closed_form=closed_form,
                              check=check, options=dict(rtol=rtol, max_iter=max_iter,
                                                        branch_check=branch_check, newton=newton))
    m, h = spec.method, spec.h
    q = _validate.state("q", q, system.n)
    p = _validate.initial_momentum(system, q, p, qdot, "p", "qdot")
    _validate.constrained_state(system, m, q, p, "q", "p", check)
    f = forces._resolve(system, force, force_jac, None, m)
    _derivcheck.ensure(system, q, check)
    if system.builtin == "linear":      # (other systems: integrate warns, once per run)
        _stability.warn(system, q, p, h, m)
    closed = linear_stepper(system, m, h, closed_form and f is None)
    q1, p1, failure = run_step(system, q, p, spec, closed, f)
    if failure is not None:
        raise convergence_error(m, h, failure, system=system)
    return q1, p1


@_docs.fill
def integrate(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
              t0=0.0, t_span=None, t_eval=None, store_every=None, events=None, progress=False,
              rtol=None, max_iter=None, predictor=True, newton="auto", closed_form=True,
              check=True, force=None, force_jac=None, branch_check="auto", tangent=False,
              wrt=None):
    """Integrate ``n_steps`` steps of size ``h`` from ``(q0, p0)`` at ``t0``,
    or over ``t_span``.

    The steps are fixed (a variational integrator keeps its long-time
    behaviour only at a constant step: docs/theory.md, *Why fixed steps*);
    ``t_span``, ``t_eval``, ``store_every``, ``events`` and ``progress``
    work around the fixed step, never change it.

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
        With ``t_span``: the largest step, adjusted down so that a whole
        number of steps spans it (the step used is ``traj.h``).
    n_steps : int
        Number of steps (>= 0); the trajectory has n_steps + 1 points.
        With ``t_span`` instead of h: h = (tf - t0) / n_steps.
    {{method}}
    qdot0 : array_like (n,), optional
        Initial velocities instead of ``p0`` (exactly one of the two):
        p0 = M(q0) qdot0.
    t0 : float
        Initial time (default 0; with ``t_span``, ``t_span[0]``: a nonzero
        t0 must then equal it).
    t_span : (t0, tf), optional
        The interval to integrate, instead of ``n_steps``: n = ceil(|tf -
        t0| / |h|) steps of h = (tf - t0) / n, so that the last time is tf
        exactly.  Given with both h and n_steps, they must agree with it
        (ValueError otherwise).  tf < t0 integrates backward (h < 0).
    t_eval : array_like, optional
        Return the states at these times instead of the step nodes: sorted
        in the direction of integration, inside the interval.  q, qdot and
        p come from each step's Hermite dense polynomial (p = M(q) qdot;
        see :meth:`Trajectory.dense_state` for the orders); only these
        states are kept.
    store_every : int, optional
        Keep every k-th step and the last one (memory for those rows only:
        the C loop keeps nothing else); ``traj.newton_iterations`` then
        sums the steps between rows.  Not with ``t_eval``.
    events : callable or list of callables, optional
        Functions g(t, q, p) -> float whose zeros are located (as in
        scipy.integrate.solve_ivp): attribute ``terminal`` (True, or the
        number of occurrences that stop the run) and ``direction`` (> 0:
        only upward crossings, < 0: downward, 0: both).  Each is evaluated
        once per step at the step's end; a sign change is located on the
        step's dense polynomial by Brent's method to 1e-12 in t (4 ulp of t
        beyond |t| = 1e3).  Results in ``traj.t_events``, ``q_events``,
        ``p_events``; a terminal event ends the trajectory at the end of
        the step that contains it (``status`` 1, the event state in the
        ``*_events`` lists; ``t_eval`` times after it are dropped).
    progress : bool
        Show a progress bar with the rate and the time left (tqdm when
        installed, else one line on stderr).  Off by default; it costs
        nothing when off and under 2 % when on (+0.2 % by median on a
        quiet machine, on the cheapest step there is:
        benchmarks/RESULTS.md section 15).
    {{newton_tolerances}}
    predictor : bool
        Start Newton from the extrapolated interpolating polynomial of the
        previous step (default); False starts every step from a Taylor
        predictor (slower, same result to the Newton tolerance).
    {{newton}}
    {{branch_check}}
    {{closed_form}}
    {{check}}
    {{force}}
    tangent : bool
        Also propagate the state-transition matrix d(q_k, p_k)/d(q_0, p_0)
        (``traj.tangent``, (rows, 2n, 2n), rows and columns ordered (q, p)):
        each step's exact derivative (implicit function theorem on the step
        equations at the converged root, the Newton matrix refactorised
        there; rk4: its linearised stages) times the last.  About one more
        Newton iteration and 2n linear solves per step.  The states are the
        same with and without it.  Every method and system form, with or
        without a force (its Jacobians enter as in Newton); a system of
        Python callables gets the second derivatives it needs from the
        core's finite differences when it does not give them (about 1e-10
        relative over 1000 steps with M, dM/dq and grad V given, 1e-6 with
        M and V alone: tests/run/test_tangent.py); not with
        ``t_eval``.  A constrained system's: the exact derivative of the
        constrained step map (the projection onto G M^-1 p = 0 included),
        whose columns lie in the tangent space of the manifold {g(q) = 0,
        G(q) M(q)^-1 p = 0} at each row; on a variation in that tangent
        space at (q0, p0) it is the derivative along the manifold (and
        preserves the symplectic form restricted to it); a variation off
        the manifold is carried onto it by the first step.
    wrt : sequence of str, optional
        With ``tangent=True``: also the derivatives of the run with respect
        to parameters, in ``traj.param_tangent`` ((rows, 2n, n_par):
        d(q_k, p_k)/dtheta at fixed (q0, p0) -- not at fixed qdot0 --, exact
        for the discrete run) and ``traj.param_names``: of a SymPy system's
        M, V and constraints, named as in ``system.parameters`` (symbol
        names, e.g. ``["m2", "l1"]``), or of any built-in (its ``params``
        names, ``"m[i]"`` for a chain's lists; ``"damping"``,
        ``"damping[i]"`` for the joint damping; ``"M[i,j]"``, ``"K[i,j]"``
        with i <= j for ``linear``, M_ij and M_ji moving together, the run
        then taking the Newton step, not the closed form).  A parameter of
        the constraints moves the constraint manifold: S_k is still at
        fixed (q0, p0), the first step carrying the start onto the moved
        manifold; for a start that moves with theta (e.g. from
        ``System.project``) add ``traj.tangent @ dx0/dtheta``.  A SymPy
        system's forces may depend on the parameters too (their dF/dtheta
        is derived with them).  Variational methods only
        (NotImplementedError otherwise); for systems of Python callables
        ``sensitivity.param_tangent_fd`` differentiates whole runs.

    Returns
    -------
    Trajectory
        with ``t``, ``q``, ``p``, ``qdot``, ``y``, ``q_mid`` (None, (N, n)
        or (N, s - 2, n): see :class:`Trajectory`), ``newton_iterations``,
        ``energy``, ``status``, ``message``, ``counts``, the ``work`` and
        ``impulse`` of the forces, with events ``t_events``, ``q_events``,
        ``p_events``, for a constrained system ``multipliers``, and with
        ``tangent=True`` the ``tangent``.

    Raises
    ------
    ConvergenceError
        If a step fails; ``err.trajectory`` holds the states computed so far
        and the message names the step, the time and the residual.
    ValueError
        M(q0) is not symmetric positive definite (before the first step; the
        message names q0, the eigenvalues and the callback or the system's
        parameters).
    DerivativeError
        A supplied derivative disagrees with finite differences (first use
        only; the message names the callback, the entry, both values and the
        layout it looks like).
    Exception from a callback or an event function, KeyboardInterrupt
        Propagate unchanged, with a note naming the step and time, and the
        steps completed before it in ``exc.trajectory``.
    MemoryError
        Before allocating, if the output arrays cannot fit in the available
        memory.
    """
    system = _validate.system(system)
    spec = _validate.run_spec(method, h, n_steps, t0, t_span, t_eval=t_eval,
                              store_every=store_every, events=events, progress=progress,
                              options=dict(rtol=rtol, max_iter=max_iter, newton=newton,
                                           predictor=predictor, branch_check=branch_check),
                              closed_form=closed_form, check=check, tangent=tangent)
    m, h, n_steps = spec.method, spec.h, spec.n_steps
    q0 = _validate.state("q0", q0, system.n)
    p0 = _validate.initial_momentum(system, q0, p0, qdot0, "p0", "qdot0", "q0")
    _validate.constrained_state(system, m, q0, p0, "q0", "p0", check, spec.options)
    f = forces._resolve(system, force, force_jac, n_steps, m)
    _validate.memory(spec.output_bytes(system.n, f is not None, system.n_constraints),
                     f"integrate(n_steps={n_steps}) with n = {system.n}")
    _derivcheck.ensure(system, q0, check)
    if n_steps > 0:
        _stability.warn(system, q0, p0, h, m)
    # the closed form has no parameter derivative: wrt= runs the Newton step
    closed = linear_stepper(system, m, h, closed_form and f is None and wrt is None)
    params = None
    if wrt is not None:
        if not tangent:
            raise ValueError("integrate: wrt= needs tangent=True")
        params = _params.prepare(system, wrt, m)
    return run_trajectory(system, q0, p0, spec, closed, f, f"integrate ({m.name})",
                          params=params)


def run_trajectory(system, q0, p0, spec, closed, force, what, *, kept=None, start=(0.0, None),
                   t_start=None, advance=None, tangent0=None, params=None, param0=None):
    """The Trajectory of a run by ``spec`` from validated inputs (integrate, an
    Integrator's piece): its observer (events, output times), the progress bar
    (labelled ``what``), the partial trajectory of an exception (in
    ``exc.trajectory``), the ConvergenceError of a failed step.  ``kept``,
    ``start`` as for :func:`run`; ``t_start`` the time of (q0, p0) (default
    spec.t0); ``advance(r)`` (an Integrator's) is called with the Run of the
    steps done -- also before a failure or an exception propagates;
    ``tangent0``, ``params``, ``param0`` as for :func:`run`."""
    m, h, every = spec.method, spec.h, spec.every
    outputs = force_outputs(force, spec.n_steps, system.n, every)
    observer = observer_of(spec, system, q0, p0, force, t_start)
    bar = _progress.bar(spec.progress, spec.n_steps, what)
    try:
        r = run(system, q0, p0, spec, closed, observer=observer,
                report=bar.report if bar else None, force=force, outputs=outputs,
                multipliers=spec.times is None, kept=kept, start=start, tangent0=tangent0,
                params=params, param0=param0)
        if bar:
            bar.report(r.done)
    except BaseException as exc:
        # a callback raised, or Ctrl-C: keep the steps completed before it
        part = getattr(exc, "__dict__", {}).pop("_symplectic_partial", None)
        if part is not None:
            pr = _partial_run(part, outputs)
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


# ---------------------------------------------------------------- running
#: What one run computed: the arrays (t (N+1,), q, p (N+1, n), q_mid
#: (N, n_mid, n) or None, iterations (N,)), the steps done, the failure
#: (None, or a Failure), the rows filled, whether a hook stopped the run, its
#: counts, with a force its accumulated work (N+1,) and impulse (N+1, n)
#: (None without one), and for a constrained system the multipliers
#: (rows - 1, s, m) at the nodes of the step ending at each stored row (or None).
Run = collections.namedtuple(
    "Run", "t q p q_mid iterations done failure rows stopped counts work impulse multipliers "
    "tangent param_tangent param_names",
    defaults=(None, False, None, None, None, None, None, None, None))

#: A failed step, as the binding reports it: the C core's status (an int) and
#: its text (sym_strerror; ``_engine.ECHART_REASON`` for the one failure
#: found in Python: the pre-run check's refusal, whose reason the check
#: completes); ``refused``: no step was
#: taken, the system's pre-run check refused the initial state.
Failure = collections.namedtuple(
    "Failure", "status reason step t iterations residual residual_rel refused",
    defaults=(False,))


def linear_stepper(system, method, h, closed_form):
    """The one decision about the closed form: for a ``systems.linear`` system,
    when ``closed_form`` is true and the method has one (``"simpson"``,
    ``"midpoint"``), the closed form's one-step matrices ``(h, D, A)``
    (:func:`symplectic.linear.step_matrices`), which ``_engine.work(...,
    linear=...)`` steps in the C driver; None for every other system, method
    or choice."""
    if system.builtin != "linear":
        return None
    M, K = system.params["M"], system.params["K"]
    if not closed_form or method.name not in ("simpson", "midpoint"):
        return None
    return (h, *linear.step_matrices(M, K, h, method.name))


def force_outputs(force, n_steps, n, every=1):
    """The arrays a forced run fills with its work and impulse at its stored
    rows (every ``every``-th step and the last), (None, None) without a
    force."""
    if force is None:
        return None, None
    rows = _stored_rows(n_steps, every)
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


def run(system, q0, p0, spec, closed=None, cancel=None, *, observer=None, report=None,
        force=None, outputs=None, multipliers=False, kept=None, start=(0.0, None),
        tangent0=None, jacobians=None, params=None, param_jac=None, param0=None,
        h_jacobians=None, points=None):
    """Run validated inputs by ``spec`` (a :class:`symplectic._model._validate.RunSpec`:
    the method, h, n_steps, t0, Newton's options, the thinning ``every``):
    the C core's run, on the closed form's workspace when ``closed`` is the
    closed form from :func:`linear_stepper`.  A failed step is returned in ``Run.failure``; an
    exception from a callback (or Ctrl-C, or ``cancel.is_set()``) propagates
    with the partial arrays attached by the binding.  ``observer`` (an
    :class:`symplectic._run._events.Observer`) is called after the steps it asks
    for, ``report(steps_done)`` with the periodic Ctrl-C check.  The arrays
    hold ``Run.rows`` valid rows.  ``force`` (a symplectic.forces.Force, or
    None) rides along, its work and impulse at the stored rows going to
    ``outputs`` (from :func:`force_outputs`; the C loop sums them over the
    steps between the rows).  ``multipliers``: keep a constrained system's
    multipliers (appended to the partial arrays of an exception too).  A
    state the built-in's own pre-run check refuses (:func:`_refused`) at the
    run's start (k0 = 0) returns a Run of the initial state alone.

    ``kept``: a run kept across calls (``_engine.work``, :class:`symplectic.Integrator`)
    that holds the system, method, options and force; the steps are steps
    ``spec.k0 ..`` of its run from the origin ``spec.t0`` (node 0 at t0 + k0 h),
    and ``start`` the force's accumulated (work, impulse) at node 0.

    ``spec.tangent``: the tangent d(q_k, p_k)/d(q_0, p_0) at the stored rows
    in ``Run.tangent`` (rows, 2n, k), times ``tangent0`` (2n, k; a kept
    run's tangent at node 0) when given (else the identity, k = 2n).
    ``jacobians``: an array (n_steps, 2n, (2 + P) n) that receives each step's
    own derivative (P = 0; with a held force also that with respect to it:
    P = 1 for a value held over the step, P = the method's force points for
    a value at each: sym_run.jacobians), for an adjoint sweep.
    ``h_jacobians``: an array (n_steps, 2, 2n) that receives each step's
    derivative with respect to h and to its start time (sym_run.h_jacobians:
    the unconstrained variational schemes; not on a kept run).
    ``points``: with ``jacobians``, an array (n_steps, r, 2n, 1 + c [+ 2])
    that receives the states (q_i, qdot_i) at each step's r force points
    t_k + x_i h (column 0) and their derivatives along the c columns of
    ``jacobians`` (then d/dh and d/dt_k with ``h_jacobians``; sym_run.points:
    the unconstrained variational schemes; not on a kept run).

    ``params``: a :class:`symplectic._run._params.ParamSpec`: with
    ``spec.tangent`` the parameter derivatives d(q_k, p_k)/dtheta at the
    stored rows in ``Run.param_tangent`` (rows, 2n, n_par), and each step's
    parameter block into ``param_jac`` (n_steps, 2n, n_par) when given;
    ``param0``: those derivatives at node 0 of a kept run's continuation
    (2n, n_par; None: 0)."""
    h, n_steps, method, t0, store_every = spec.h, spec.n_steps, spec.method, spec.t0, spec.every
    k0 = spec.k0
    if k0 == 0:         # the built-in's pre-run check, at the run's start
        refused = _refused(system, q0, p0, method, t0, force)
        if refused is not None:
            return refused
    hook = observer.hook if observer is not None else None
    if closed is not None and kept is None:     # the closed form's workspace, for this run
        kept = _engine.work(system, q0, p0, method.name, linear=closed)
    kw = {}
    if store_every > 1:
        kw["store_every"] = store_every
    if hook is not None:
        kw.update(hook=hook, hook_buf=observer.buf, hook_steps=observer.hook_steps)
        if force is not None and observer.fbuf is not None:
            kw["hook_force"] = observer.fbuf
    if report is not None:
        kw["report"] = report
    work = impulse = None
    if force is not None:
        work, impulse = outputs if outputs is not None else force_outputs(
            force, n_steps, system.n, store_every)
        if kept is None:
            kw["force"] = dict(force.spec(system.n), work=work, impulse=impulse)
        else:
            kw.update(work=work, impulse=impulse, work0=start[0], impulse0=start[1])
    lam, tan = _filled_outputs(kw, system, spec, multipliers, tangent0, jacobians)
    if h_jacobians is not None:
        kw["h_jacobians"] = h_jacobians
    if points is not None:
        kw["points"] = points
    ptan = None
    if params is not None:
        if spec.tangent:
            rows_all = _stored_rows(n_steps, store_every)
            ptan = np.zeros((rows_all, 2 * system.n, len(params.names)))
        kw["params"] = params.arg(ptan, param_jac, param0)
    try:
        if kept is None:
            t, q, p, qm, iters, done, fail, extras = _engine.integrate(
                system, q0, p0, h, n_steps, method.name, t0=t0, cancel=cancel,
                **spec.options, **kw)
        else:
            t, q, p, qm, iters, done, fail, extras = kept.integrate(
                q0, p0, h, n_steps, t0=t0, k0=k0, cancel=cancel, **kw)
    except BaseException as exc:
        part = getattr(exc, "__dict__", {}).get("_symplectic_partial")
        if part is not None:
            exc._symplectic_partial = tuple(part) + ({"multipliers": lam, "tangent": tan},)
        raise
    rows, stopped, counts = extras
    if rows < len(t):                      # stopped early: the rows filled
        t, q, p, iters = t[:rows], q[:rows], p[:rows], iters[:rows - 1]
        if qm is not None:
            qm = qm[:rows - 1]
        if work is not None:
            work, impulse = work[:rows], impulse[:rows]
    if lam is not None:
        lam = lam[:rows - 1]
    if tan is not None:
        tan = tan[:rows]
    if ptan is not None:
        ptan = ptan[:rows]
    return Run(t, q, p, qm, iters, done, None if fail is None else Failure(*fail), rows,
               bool(stopped), Counts(*counts), work, impulse, lam, tan, ptan,
               None if params is None else params.names)


def shoot(system, q0, p0, k, h, spec, force, jacobians, h_jacobians=None, points=None):
    """B independent single steps by ``spec``'s method and Newton options
    (the C core's shoot): item b from (q0[b], p0[b]) (B, n) at time
    k[b] h[b] with step h[b] and row b of ``force``'s held values (a
    symplectic.forces.Force whose ``hold`` has B rows), its derivatives into
    row b of ``jacobians``, ``h_jacobians`` and ``points`` (the arrays of
    :func:`run` with B for n_steps).  Each item starts as a fresh one-step
    run does.  Returns (q1, p1, failed, failure): the ends (B, n), and
    failed = B, failure None when every item stepped, else the first item
    that failed and its :class:`Failure` (the rows from it on unfilled)."""
    k = np.asarray(k, dtype=float)
    h = np.asarray(h, dtype=float)
    kw = {} if h_jacobians is None else {"h_jacobians": h_jacobians}
    if points is not None:
        kw["points"] = points
    q1, p1, failed, fail = _engine.shoot(system, q0, p0, k, h, spec.method.name,
                                         force=force.spec(system.n), jacobians=jacobians,
                                         **spec.options, **kw)
    if fail is None:
        return q1, p1, failed, None
    status, reason, iters, res, res_rel = fail
    return q1, p1, failed, Failure(status, reason, 0, float(k[failed] * h[failed]), iters, res,
                                   res_rel)


def _filled_outputs(kw, system, spec, multipliers, tangent0, jacobians):
    """The arrays the C run fills in place, added to its keywords ``kw``: a
    constrained system's multipliers (when ``multipliers``), the tangent
    (``spec.tangent``; from ``tangent0`` when given) and each step's
    derivative (``jacobians``, the caller's).  Returns (multipliers, tangent),
    each None when not asked for."""
    rows = _stored_rows(spec.n_steps, spec.every)
    lam = tan = None
    if multipliers and system.n_constraints:
        lam = np.zeros((rows - 1, len(spec.method.nodes), system.n_constraints))
        kw["multipliers"] = lam
    if spec.tangent:
        cols = 2 * system.n
        if tangent0 is not None:
            kw["tangent0"] = np.ascontiguousarray(tangent0, dtype=float)
            cols = kw["tangent0"].shape[1]
        tan = np.empty((rows, 2 * system.n, cols))
        kw["tangent"] = tan
    if jacobians is not None:
        kw["jacobians"] = jacobians
    return lam, tan


#: Rows of a run that keeps every ``every``-th state and the last: the C
#: core's sym_stored_rows, the one place that counts them.
_stored_rows = _engine.stored_rows


def _partial_run(part, outputs=(None, None)):
    """The Run of the partial arrays an exception carries (py_integrate.c
    attach_partial: t, q, p, q_mid, iters, done, (rows, stopped, counts)),
    with the force's work and impulse arrays (``outputs``), and the
    multipliers and tangent that :func:`run` appended (a dict)."""
    t, q, p, qm, iters, done, (rows, stopped, counts), *more = part
    more = more[0] if more else {}
    return Run(t, q, p, qm, iters, done, None, rows, bool(stopped), Counts(*counts), *outputs,
               more.get("multipliers"), more.get("tangent"))


def run_step(system, q, p, spec, closed=None, force=None):
    """One step from validated inputs by ``spec`` (a one-step RunSpec: its t0
    the step's time): (q1, p1, failure)."""
    h, method, t = spec.h, spec.method, spec.t0
    refused = _refused(system, q, p, method, t, force)      # the built-in's pre-run check
    if refused is not None:
        return q.copy(), p.copy(), refused.failure
    if closed is not None:
        q1, p1, _, status, iters, res, res_rel, _upd, reason = _engine.work(
            system, q, p, method.name, linear=closed).step(q, p, h, t)
    else:
        kw = dict(spec.options)
        if force is not None:
            kw["force"] = force.spec(system.n)
        if t != 0.0:
            kw["t"] = t
        q1, p1, _, status, iters, res, res_rel, _upd, reason = _engine.step(
            system, q, p, h, method.name, **kw)
    failure = None if status == 0 else Failure(status, reason, 0, t, iters, res, res_rel)
    return q1, p1, failure


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


def step_tangent(system, q, p, h, method="simpson", check=True, *, force=None, force_jac=None,
                 t=0.0):
    """One step and its exact tangent map: (q1, p1, D), D = d(q1, p1)/d(q, p)
    (2n, 2n) in (q, p) ordering (the implicit function theorem on the
    discrete Euler-Lagrange equations, with the force's terms dF/dq, dF/dqdot
    when there is one; the linearised stages for RK4; constrained: the
    derivative of the constrained step map, columns in the tangent space of
    the manifold {g = 0, G M^-1 p = 0} at (q1, p1), see :func:`integrate`).  ``force``,
    ``force_jac`` and ``t`` as for :func:`step`; the system's own force
    (``System.force``) is included.  Inputs are checked as :func:`step`
    checks them; a failed step raises the binding's RuntimeError
    ("step_tangent failed: <reason> (residual r)")."""
    system = _validate.system(system)
    spec = _validate.run_spec(method, h, 1, t, one_step=True, check=check)
    m, h, t = spec.method, spec.h, spec.t0
    q = _validate.state("q", q, system.n)
    p = _validate.state("p", p, system.n)
    _validate.start_mass(system, q, "q")
    f = forces._resolve(system, force, force_jac, None, m)
    _derivcheck.ensure(system, q, check)
    if f is None:
        return _engine.step_tangent(system, q, p, h, m.name)
    return _engine.step_tangent(system, q, p, h, m.name, force=f.spec(system.n), t=t)


# ---------------------------------------------------------------- results
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
