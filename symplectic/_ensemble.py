"""Ensembles: many initial conditions or parameter sets in one call, on all cores."""
import dataclasses
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _derivcheck, _docs, _integrate, _validate


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
        and the last, or only the final time).
    q, p : ndarray (K, M, n)
        Coordinates and momenta of the K members at those times.
    newton_iterations : ndarray (K, N) of int, or None
        Per-step Newton iterations (stored with ``store="all"``).
    failed : ndarray (K,) of bool
        Members whose integration stopped early (only with
        ``errors="mark"``; their rows after the failure are nan).
    errors : dict
        {member index: the ConvergenceError} for failed members.
    """
    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    newton_iterations: object
    failed: np.ndarray
    errors: dict

    def __len__(self):
        return self.q.shape[0]

    def __repr__(self):
        K, M, n = self.q.shape
        return f"<Ensemble of {K} trajectories, {M} stored times, n={n}, {int(self.failed.sum())} failed>"


@_docs.fill
def integrate_many(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
                   t0=0.0, threads=None, store="all", errors="raise", rtol=None, max_iter=None,
                   newton="full", closed_form=True, check=True):
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
    n_steps, t0 :
        As for :func:`symplectic.integrate`, for every member.
    {{method}}
    {{newton_tolerances}}
    {{newton}}
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

    Returns
    -------
    Ensemble
        Stacked arrays; each member's rows are bitwise identical to
        ``integrate`` run on it alone (with the same options).
    """
    members, n = _validate.systems(system)
    m = _validate.method(method)
    h = _validate.step_size(h)
    t0 = _validate.real("t0", t0)
    n_steps = _validate.step_count(n_steps)
    Q0, P0 = _initial_states(members, system, q0, p0, qdot0, n)
    K = len(Q0)
    members = members or [system] * K
    for k in range(K):                   # constrained systems: consistent states
        _validate.constrained_state(members[k], m, Q0[k], P0[k], f"q0[{k}]", f"p0[{k}]", check)
    errors = _validate.choice("errors", errors, ("raise", "mark"))
    options = _validate.newton(rtol, max_iter, newton)
    _derivcheck.ensure_many(members, Q0, check)
    threads = (os.cpu_count() or 1) if threads is None else _validate.integer("threads", threads, 1)
    if not all(s.nogil for s in members):
        threads = 1                    # Python callables hold the GIL: one at a time
    out = _Stack(K, n, n_steps, m, store, threads)
    closed = {id(s): _integrate.linear_stepper(s, m, h, closed_form) for s in members}
    cancel = threading.Event()

    def run_one(k):
        s = members[k]
        r = _integrate.run(s, Q0[k], P0[k], h, n_steps, m, t0, options, closed[id(s)], cancel)
        out.keep(k, r)
        if r.failure is not None:
            return _integrate.convergence_error(m, h, r.failure, member=k, system=members[k])
        return None

    errs = _run_pool(run_one, K, threads, cancel, stop_on_error=errors == "raise")
    if errs and errors == "raise":
        raise errs[min(errs)]
    return out.ensemble(t0, h, errs)


def _initial_states(members, system, q0, p0, qdot0, n):
    """(Q0, P0), (K, n) each: the rows broadcast to K members, momenta from
    the velocities with each member's own M."""
    value, name, velocities = _validate.momentum_or_velocity(p0, qdot0, "p0", "qdot0")
    Q0 = _validate.states("q0", q0, n)
    V0 = _validate.states(name, value, n)
    K = max(Q0.shape[0], V0.shape[0], len(members) if members else 1)
    Q0 = _validate.broadcast("q0", Q0, K)
    V0 = _validate.broadcast(name, V0, K)
    if members is not None and len(members) != K:
        raise ValueError(f"{len(members)} systems for {K} initial conditions")
    if velocities:
        V0 = np.array([(members[k] if members else system).mass(Q0[k]) @ V0[k]
                       for k in range(K)])
    return Q0, V0


class _Stack:
    """The stored rows of every member (nan after a failure)."""

    def __init__(self, K, n, n_steps, method, store, threads):
        rows = _validate.stored_rows(store, n_steps)
        store_all = isinstance(store, str) and store == "all"
        # stored arrays, plus one full trajectory in flight per worker thread
        _validate.memory(16 * K * rows * n + 8 * rows + (4 * K * n_steps if store_all else 0)
                         + min(threads, K) * _validate.output_bytes(n_steps, n, method),
                         f"integrate_many({K} members, n_steps={n_steps}) with n = {n}",
                         "integrate in chunks of steps (each worker holds one member's whole "
                         "trajectory while it runs; store= only shrinks the returned arrays), "
                         "or use fewer threads")
        if not isinstance(store, str):
            self.idx = np.unique(np.r_[np.arange(0, n_steps + 1, int(store)), n_steps])
        else:
            self.idx = np.arange(n_steps + 1) if store_all else np.array([n_steps])
        assert len(self.idx) == rows
        self.n_steps = n_steps
        self.q = np.full((K, rows, n), np.nan)
        self.p = np.full((K, rows, n), np.nan)
        self.iters = np.zeros((K, n_steps), dtype=np.intc) if store_all else None

    def keep(self, k, r):
        ok = self.idx <= r.done if r.failure is not None else slice(None)
        self.q[k, ok] = r.q[self.idx[ok]]
        self.p[k, ok] = r.p[self.idx[ok]]
        if self.iters is not None and r.failure is None:
            self.iters[k] = r.iterations

    def ensemble(self, t0, h, errs):
        failed = np.zeros(len(self.q), dtype=bool)
        failed[list(errs)] = True
        t = t0 + h * np.arange(self.n_steps + 1)
        return Ensemble(t[self.idx], self.q, self.p, self.iters, failed, errs)


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
            err = run_one(k)
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
