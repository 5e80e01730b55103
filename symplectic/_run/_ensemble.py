"""Ensembles: many initial conditions or parameter sets in one call, on all cores."""
import dataclasses
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._model import _runspec, _validate
from .. import forces
from . import _docs, _driver, _prepare, _progress
from ._failures import convergence_error


@dataclasses.dataclass(repr=False)
class Ensemble:
    """The result of :func:`integrate_many`.

    For a system with holonomic constraints every member's initial state is
    checked as by :func:`integrate`; the multipliers are not stored (use
    :func:`integrate` for ``Trajectory.multipliers``).

    Attributes
    ----------
    t : ndarray (M,)
        The stored times (all N + 1 step times, or every ``store_every``-th
        and the last, or only the final time, or the ``t_eval`` times).
    q, p : ndarray (K, M, n)
        Coordinates and momenta of the K members at those times.
    newton_iterations : ndarray (K, N) of int, or None
        Per-step Newton iterations (stored with ``store="all"``).
    failed : ndarray (K,) of bool
        Members whose integration stopped early (only with
        ``errors="mark"``; their rows after the failure are nan).
    errors : dict
        {member index: the ConvergenceError} for failed members.
    status : ndarray (K,) of int
        0: the member reached the end; 1: a terminal event stopped it (its
        rows after the end of that step are nan); -1: it failed.
    t_events, q_events, p_events : list or None
        With ``events=``: for member k, ``t_events[k]`` is the list over the
        event functions of the times found (as ``Trajectory.t_events``).
    counts : list of Counts
        The work of each member's run (``Trajectory.counts``).
    work, impulse : ndarray (K, M) and (K, M, n), or None
        With a force: the work and impulse of the forces from t0 to the
        stored times (see :class:`symplectic.Trajectory`); None without.
    """
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    newton_iterations: object
    failed: np.ndarray
    errors: dict
    status: np.ndarray = None
    t_events: list = None
    q_events: list = None
    p_events: list = None
    counts: list = None
    work: object = None
    impulse: object = None

    def __len__(self):
        return self.q.shape[0]

    def __repr__(self):
        K, M, n = self.q.shape
        return f"<Ensemble of {K} trajectories, {M} stored times, n={n}, {int(self.failed.sum())} failed>"


@_docs.fill
def integrate_many(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
                   t0=0.0, t_span=None, t_eval=None, store_every=None, events=None,
                   progress=False, threads=None, store="all", errors="raise", rtol=None,
                   max_iter=None, newton="auto", closed_form=True, check=True, force=None,
                   force_jac=None, branch_check="auto", linear_solver="auto"):
    """Integrate K initial conditions (or K systems) in one call, in parallel.

    Parameters
    ----------
    system : System or sequence of K Systems
        One system for all members, or one per member (parameter sweeps:
        e.g. ``[sp.systems.double_pendulum(m2=m) for m in masses]``); all with
        the same n.
    q0, p0 : array_like (K, n) or (n,)
        Initial states; a single (n,) row is broadcast to all members.
    qdot0 : array_like (K, n) or (n,), optional
        Initial velocities instead of ``p0`` (exactly one of the two): each
        member starts from p0 = M(q0) qdot0 with its own system's M.
    {{h}}
    n_steps, t0, t_span :
        As for :func:`symplectic.integrate`, for every member.
    t_eval : array_like, optional
        The states at these times (as for :func:`symplectic.integrate`)
        instead of the stored steps; not with ``store``/``store_every``.
    store_every : int, optional
        The same as ``store=k`` (keep every k-th step and the last); the
        thinning happens in the C loop, so a member in flight holds only
        the rows kept.
    events : callable or list of callables, optional
        As for :func:`symplectic.integrate`, for each member (the event
        functions hold the GIL: members with events run their event calls
        one at a time); results per member in ``t_events``, ``q_events``,
        ``p_events``; a terminal event ends that member (``status`` 1).
    progress : bool
        One progress bar over all members' steps (default off).
    {{method}}
    {{newton_tolerances}}
    {{newton}}
    {{branch_check}}
    {{linear_solver}}
    {{closed_form}}
    threads : int, optional
        Worker threads (default: ``os.cpu_count()``).  Built-in and compiled
        systems integrate in C with the GIL released, so the threads run in
        parallel; systems made of Python callables hold the GIL and run one
        at a time (threads is then forced to 1).
    store : "all", "final" or int
        Keep every state (default), only the final state, or every k-th
        state plus the last (memory: K x M x n x 16 bytes).
    errors : "raise" or "mark"
        On a member's failure: raise its ConvergenceError (after stopping the
        other workers), or mark it in ``failed`` and keep going.
    {{check}}
        Here the check runs before the first use of each system, at its
        first member's initial state (about 0.5 ms per new System); False
        suits sweeps that build many compiled Systems for short runs, once
        one of them has been checked.
    {{force}}
        Here also one per member: an array of shape (K, n_steps, n) (one held
        force each) or a sequence of K forces.  A Python callable in any
        member's force holds the GIL (threads is then forced to 1).  The
        work and impulse of a forced member are kept at the stored rows (or
        the ``t_eval`` times), like its states.

    Returns
    -------
    Ensemble
        Stacked arrays; each member's rows are bitwise identical to
        ``integrate`` run on it alone (with the same options).
    """
    members, n = _validate.systems(system)
    spec = _runspec.run_spec(method, h, n_steps, t0, t_span, t_eval=t_eval, events=events,
                              progress=progress, closed_form=closed_form, check=check,
                              options=dict(rtol=rtol, max_iter=max_iter, newton=newton,
                                           branch_check=branch_check,
                                           linear_solver=linear_solver))
    m, h, n_steps, t0, tf, times = (spec.method, spec.h, spec.n_steps, spec.t0, spec.tf,
                                    spec.times)
    Q0, V0, velocities = _initial_states(members, q0, p0, qdot0, n)
    K = len(Q0)
    members = members or [system] * K
    P0 = np.empty_like(V0)
    vname = "qdot0" if velocities else "p0"
    for k in range(K):                   # the prologue's start, member by member
        Q0[k], P0[k] = _prepare.start(
            members[k], spec, Q0[k], None if velocities else V0[k],
            V0[k] if velocities else None, (f"q0[{k}]", f"p0[{k}]", f"{vname}[{k}]"), member=k)
    errors = _validate.choice("errors", errors, ("raise", "mark"))
    store = _store(store, store_every, times)
    evs = spec.events
    fs = forces._resolve_members(members, force, force_jac, n_steps)
    forced = any(f is not None for f in fs)
    first = {}                           # the prologue's checks: each system once, at its first
    for k, s in enumerate(members):
        first.setdefault(id(s), k)
    for k in first.values():
        _prepare.checks(members[k], spec, Q0[k], P0[k], warn="steps")
    threads = (os.cpu_count() or 1) if threads is None else _validate.integer("threads", threads, 1)
    if not all(s.nogil for s in members) or any(f is not None and f.python for f in fs):
        threads = 1                    # Python callables hold the GIL: one at a time
    out = _Stack(K, n, n_steps, m, store, threads, times, forced)
    closed = {(id(s), f is None): _prepare.linear_stepper(s, m, h, closed_form and f is None)
              for s, f in zip(members, fs)}
    cancel = threading.Event()
    bar = _progress.bar(spec.progress, K * n_steps, f"integrate_many ({K} x {m.name})")
    mspec = dataclasses.replace(spec, every=out.every)   # the members' thinning: store=

    def run_one(k):
        s = members[k]
        prep = _prepare.Prepared(s, mspec, Q0[k], P0[k], fs[k], closed[id(s), fs[k] is None])
        obs = _driver.observer_of(spec, s, Q0[k], P0[k], fs[k])
        report = (lambda done, k=k: bar.report(done, k)) if bar else None
        r = _driver.run(prep, cancel=cancel, observer=obs, report=report)
        out.keep(k, r, obs)
        if bar:
            bar.report(r.done, k)
        if r.failure is not None:
            last = (r.rows if r.rows is not None else len(r.t)) - 1
            return convergence_error(m, h, r.failure, member=k, system=members[k],
                                     state=(r.q[last], r.p[last]), start=(Q0[k], P0[k]))
        return None

    try:
        errs = _run_pool(run_one, K, threads, cancel, stop_on_error=errors == "raise")
    finally:
        if bar:
            bar.close()
    if errs and errors == "raise":
        raise errs[min(errs)]
    return out.ensemble(t0, h, errs, tf, evs)


def _store(store, store_every, times):
    """The one storage rule from store=, store_every= and t_eval=."""
    default = isinstance(store, str) and store == "all"
    if store_every is not None:
        k = _runspec.store_every(store_every)
        if not default:
            raise TypeError("give store= or store_every=, not both (store_every=k is store=k)")
        store = k
    if times is not None:
        if not default:
            raise TypeError("give t_eval (states at those times) or store/store_every, not both")
        return "t_eval"
    return store


def _initial_states(members, q0, p0, qdot0, n):
    """(Q0, V0, velocities): the rows (K, n) of q0 and of p0 or the velocities
    (``velocities``) broadcast to K members (each member's momenta come from
    its own M: the prologue's start)."""
    value, name, velocities = _validate.momentum_or_velocity(p0, qdot0, "p0", "qdot0")
    Q0 = _validate.states("q0", q0, n)
    V0 = _validate.states(name, value, n)
    K = max(Q0.shape[0], V0.shape[0], len(members) if members else 1)
    Q0 = _validate.broadcast("q0", Q0, K).copy()
    V0 = _validate.broadcast(name, V0, K)
    if members is not None and len(members) != K:
        raise ValueError(f"{len(members)} systems for {K} initial conditions")
    return Q0, V0, velocities


class _Stack:
    """The stored rows of every member (nan after a failure or a terminal
    event).  Each member's run keeps only its stored rows (the C loop thins
    them: ``every``)."""

    def __init__(self, K, n, n_steps, method, store, threads, times=None, forced=False):
        self.t_eval = times
        if times is not None:
            rows, self.every = len(times), max(n_steps, 1)
            self.idx = None
        else:
            rows = _runspec.stored_rows(store, n_steps)
            if not isinstance(store, str):
                self.every = min(int(store), max(n_steps, 1))   # k > n_steps: first and last
            elif store == "all":
                self.every = 1
            else:                              # "final": the run keeps its first and last row
                self.every = max(n_steps, 1)
        store_all = isinstance(store, str) and store == "all"
        # stored arrays, plus one run's stored rows in flight per worker thread
        _runspec.memory(16 * K * rows * n + 8 * rows + (4 * K * n_steps if store_all else 0)
                         + (8 * K * rows * (1 + n) if forced else 0)
                         + min(threads, K) * _runspec.output_bytes(
                             n_steps, n, method, self.every, forced),
                         f"integrate_many({K} members, n_steps={n_steps}) with n = {n}",
                         "integrate in chunks of steps, store fewer rows (store=, "
                         "store_every=, t_eval=), or use fewer threads")
        if times is None:                      # the stored steps, after the memory check
            if not isinstance(store, str):
                self.idx = np.unique(np.r_[np.arange(0, n_steps + 1, self.every), n_steps])
            else:
                self.idx = np.arange(n_steps + 1) if store_all else np.array([n_steps])
            assert len(self.idx) == rows
        self.n_steps = n_steps
        self.q = np.full((K, rows, n), np.nan)
        self.p = np.full((K, rows, n), np.nan)
        self.iters = np.zeros((K, n_steps), dtype=np.intc) if store_all else None
        self.status = np.zeros(K, dtype=int)
        self.found = [None] * K
        self.counts = [None] * K
        self.work = np.full((K, rows), np.nan) if forced else None
        self.impulse = np.full((K, rows, n), np.nan) if forced else None

    def keep(self, k, r, obs=None):
        """Member k's rows from its Run ``r`` (and their work and impulse, zero
        for an unforced member of a forced ensemble)."""
        self.counts[k] = r.counts
        self._keep(k, r, obs)
        if self.work is not None and r.work is None:
            filled = ~np.isnan(self.q[k, :, 0]) if self.q.shape[2] else slice(None)
            self.work[k, filled] = 0.0
            self.impulse[k, filled] = 0.0

    def _mark(self, k, r, obs):
        """Member k's events found and status (-1 failed, 1 stopped by an event)."""
        if obs is not None and obs.events:
            self.found[k] = obs.events_found()
        if r.failure is not None:
            self.status[k] = -1
        elif r.stopped:
            self.status[k] = 1

    def _rows(self, k, dst, r, src):
        """Member k's rows dst of q, p (and work, impulse) from rows src of r."""
        self.q[k, dst], self.p[k, dst] = r.q[src], r.p[src]
        if self.work is not None and r.work is not None:
            self.work[k, dst], self.impulse[k, dst] = r.work[src], r.impulse[src]

    def _keep(self, k, r, obs=None):
        self._mark(k, r, obs)
        if self.t_eval is not None:
            _t, q, p, _v = obs.samples()
            self.q[k, :len(q)], self.p[k, :len(p)] = q, p
            if self.work is not None and r.work is not None:
                w, i = obs.force_samples()
                self.work[k, :len(w)], self.impulse[k, :len(i)] = w, i
            return
        if r.failure is None and not r.stopped:
            sel = slice(None) if self.every > 1 or len(self.idx) == len(r.t) else self.idx
            if len(self.idx) == 1 and self.n_steps > 0:
                sel = [-1]                     # "final": the run's last row
            self._rows(k, slice(None), r, sel)
            if self.iters is not None:
                self.iters[k] = r.iterations
            return
        # stopped early: the stored rows at steps up to the last one done (the
        # run's rows are those steps, then possibly the last state off the grid)
        last = r.done
        nk = int(np.searchsorted(self.idx, last, side="right"))
        if len(self.idx) == 1:
            nk = 1 if self.idx[0] <= last else 0
            if nk:
                self._rows(k, 0, r, -1)
            return
        self._rows(k, slice(0, nk), r, slice(0, nk))

    def ensemble(self, t0, h, errs, tf=None, evs=()):
        failed = np.zeros(len(self.q), dtype=bool)
        failed[list(errs)] = True
        if self.t_eval is not None:
            t = self.t_eval.copy()
        else:
            t = t0 + h * self.idx
            if tf is not None and len(t) and self.idx[-1] == self.n_steps and self.n_steps > 0:
                t[-1] = tf
        found = [f if f is not None else ([], [], []) for f in self.found] if evs else None
        return Ensemble(t, self.q, self.p, self.iters, failed, errs, self.status,
                        [f[0] for f in found] if found else None,
                        [f[1] for f in found] if found else None,
                        [f[2] for f in found] if found else None, self.counts, self.work,
                        self.impulse)


def _run_pool(run_one, K, threads, cancel, stop_on_error):
    """run_one(k) for k < K on ``threads`` workers taking members in turn:
    {k: the error run_one returned}.  With ``stop_on_error`` the first error
    stops the others (through ``cancel``, which the C loop polls); an
    exception (Ctrl-C) stops them too and propagates."""
    errs = {}
    counter = itertools.count()
    lock = threading.Lock()

    def worker():
        while not cancel.is_set():
            with lock:
                k = next(counter)
            if k >= K:
                return
            try:
                err = run_one(k)
            except KeyboardInterrupt:
                if errs:        # cancelled because another member failed (errs is set before
                    return      # cancel): that member's error is what the caller gets
                raise
            if err is not None:
                errs[k] = err
                if stop_on_error:
                    cancel.set()
                    return

    if threads == 1:
        worker()
        return errs
    with ThreadPoolExecutor(max_workers=min(threads, K)) as pool:
        futures = [pool.submit(worker) for _ in range(min(threads, K))]
        try:
            for f in futures:
                f.result()
        except BaseException:
            cancel.set()
            raise
    return errs
