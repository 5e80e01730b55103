"""Ensembles: many initial conditions or parameter sets in one call, on all cores."""
import itertools
import operator
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _core, _derivcheck
from ._errors import ConvergenceError
from ._integrate import (_check_memory, _check_method, _newton_opts, _output_bytes, _real,
                         _required)
from ._system import System


class Ensemble:
    """The result of :func:`integrate_many`.

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

    def __init__(self, t, q, p, newton_iterations, failed, errors):
        self.t = t
        self.q = q
        self.p = p
        self.newton_iterations = newton_iterations
        self.failed = failed
        self.errors = errors

    def __len__(self):
        return self.q.shape[0]

    def __repr__(self):
        K, M, n = self.q.shape
        return f"<Ensemble of {K} trajectories, {M} stored times, n={n}, {int(self.failed.sum())} failed>"


def integrate_many(system, q0, p0=None, h=None, n_steps=None, method="simpson", *, qdot0=None,
                   t0=0.0, threads=None, store="all", errors="raise", rtol=None, max_iter=None,
                   newton="full", check=True):
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
    h, n_steps, method, t0, rtol, max_iter, newton :
        As for :func:`symplectic.integrate`, for every member.
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
    check : bool
        Check user-supplied derivatives against finite differences before
        the first use of each system (at its first member's initial state;
        :class:`symplectic.DerivativeError` on disagreement), as
        :func:`symplectic.integrate` does (about 0.5 ms per new System).
        Default True; False skips it -- e.g. in sweeps that build many
        compiled Systems for short runs, once one of them has been checked.

    Returns
    -------
    Ensemble
        Stacked arrays; each member's rows are bitwise identical to
        ``integrate`` run on it alone.
    """
    if isinstance(system, System):
        systems = None
        n = system.n
    else:
        systems = list(system)
        if not systems or not all(isinstance(s, System) for s in systems):
            raise TypeError("system must be a System or a non-empty sequence of Systems")
        n = systems[0].n
        if any(s.n != n for s in systems):
            raise ValueError("all systems of an ensemble must have the same n")
    _check_method(method)
    h = _real("h", _required("h", h))
    if h == 0.0:
        raise ValueError("h must be nonzero")
    t0 = _real("t0", t0)
    _required("n_steps", n_steps)
    if isinstance(n_steps, bool):
        raise TypeError("n_steps must be an int")
    try:
        n_steps = operator.index(n_steps)
    except TypeError:
        raise TypeError(f"n_steps must be an int, got {n_steps!r}") from None
    if n_steps < 0:
        raise ValueError(f"n_steps must be >= 0, got {n_steps}")
    if (p0 is None) == (qdot0 is None):
        raise TypeError("give either p0= (momenta) or qdot0= (velocities), not both"
                        if p0 is not None else
                        "give the initial momenta p0= (p = M(q) qdot) or the initial velocities qdot0=")
    velocities = p0 is None
    Q0 = _states("q0", q0, n)
    P0 = _states("qdot0" if velocities else "p0", qdot0 if velocities else p0, n)
    K = max(Q0.shape[0], P0.shape[0], len(systems) if systems else 1)
    Q0 = _broadcast("q0", Q0, K)
    P0 = _broadcast("qdot0" if velocities else "p0", P0, K)
    if systems is not None and len(systems) != K:
        raise ValueError(f"{len(systems)} systems for {K} initial conditions")
    if velocities:
        P0 = np.array([(systems[k] if systems else system).mass(Q0[k]) @ P0[k] for k in range(K)])
    if errors not in ("raise", "mark"):
        raise ValueError(f"errors must be 'raise' or 'mark', got {errors!r}")
    if newton not in ("full", "chord"):
        raise ValueError(f"newton must be 'full' or 'chord', got {newton!r}")
    opts = dict(_newton_opts(rtol, max_iter), t0=t0, chord=newton == "chord")
    _derivcheck.ensure_many(systems or [system], Q0, check)

    if store == "all":
        M = n_steps + 1
    elif store == "final":
        M = 1
    elif isinstance(store, (int, np.integer)) and not isinstance(store, bool) and store >= 1:
        M = n_steps // int(store) + 1 + (n_steps % int(store) != 0)
    else:
        raise ValueError(f"store must be 'all', 'final' or a positive int, got {store!r}")
    if threads is None:
        threads = os.cpu_count() or 1
    threads = max(1, int(threads))
    # stored arrays, plus one full trajectory in flight per worker thread
    _check_memory(16 * K * M * n + 8 * M + (4 * K * n_steps if store == "all" else 0)
                  + min(threads, K) * _output_bytes(n_steps, n, method),
                  f"integrate_many({K} members, n_steps={n_steps}) with n = {n}",
                  "integrate in chunks of steps (each worker holds one member's whole "
                  "trajectory while it runs; store= only shrinks the returned arrays), "
                  "or use fewer threads")
    all_t = t0 + h * np.arange(n_steps + 1)
    if store == "all":
        idx = np.arange(n_steps + 1)
    elif store == "final":
        idx = np.array([n_steps])
    else:
        idx = np.unique(np.r_[np.arange(0, n_steps + 1, int(store)), n_steps])
    assert len(idx) == M
    q = np.full((K, M, n), np.nan)
    p = np.full((K, M, n), np.nan)
    iters = np.zeros((K, n_steps), dtype=np.intc) if store == "all" else None
    failed = np.zeros(K, dtype=bool)
    errs = {}

    member_systems = systems or [system] * K
    if not all(s.nogil for s in member_systems):
        threads = 1
    cancel = threading.Event()
    counter = itertools.count()
    lock = threading.Lock()

    def run_one(k):
        t, qk, pk, _qm, it, done, fail = _core.integrate(
            member_systems[k], Q0[k], P0[k], h, n_steps, method, cancel=cancel, **opts)
        if fail is None:
            q[k] = qk[idx]
            p[k] = pk[idx]
            if iters is not None:
                iters[k] = it
            return None
        status, reason, step, tk, kit, res, res_rel = fail
        ok = idx <= done
        q[k, ok] = qk[idx[ok]]
        p[k, ok] = pk[idx[ok]]
        return ConvergenceError(
            f"{method} failed for ensemble member {k} at step {step} (t = {tk:.17g}): {reason}; "
            f"residual {res:.3g}", step=step, t=tk, residual=res, iterations=kit, reason=reason)

    def worker():
        while not cancel.is_set():
            with lock:
                k = next(counter)
            if k >= K:
                return
            err = run_one(k)
            if err is not None:
                failed[k] = True
                errs[k] = err
                if errors == "raise":
                    cancel.set()
                    return

    if threads == 1:
        worker()
    else:
        with ThreadPoolExecutor(max_workers=min(threads, K)) as pool:
            futures = [pool.submit(worker) for _ in range(min(threads, K))]
            try:
                for f in futures:
                    f.result()
            except BaseException:
                cancel.set()
                raise
    if errs and errors == "raise":
        raise errs[min(errs)]
    return Ensemble(all_t[idx], q, p, iters, failed, errs)


def _states(name, x, n):
    a = np.array(x, dtype=float)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != n:
        raise ValueError(f"{name} must have shape (K, {n}) or ({n},), got {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains non-finite values")
    return a


def _broadcast(name, a, K):
    if a.shape[0] == K:
        return a
    if a.shape[0] == 1:
        return np.repeat(a, K, axis=0)
    raise ValueError(f"{name} has {a.shape[0]} rows, expected 1 or {K}")
