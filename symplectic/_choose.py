"""The choice of method, step size and Newton mode for a target energy error
(:func:`symplectic.analysis.choose_step`, which makes it public).

The rule.  A symplectic method of order p keeps the energy error bounded, of
size C h^p over a stretch of motion (C set by the states the motion visits),
instead of letting it grow with time.  So the error of a short run predicts
the error of a long one from the same start, and its dependence on h is known
up to the constant: for each candidate method, pilot runs over a window of the
motion find the largest step h = window / N whose error max_n |H_n - H0| / |H0|
is below ``safety * energy_tol`` (each next h from the last by
(target / error)^(1/p), the order's prediction, kept inside the method's
stability limit), their cost per step is timed at that h with each Newton mode,
and the method and mode with the least predicted time T / h * (cost per step)
are chosen.  The window is the whole horizon when that is short, else 50
periods of the fastest linearised mode at the start (at least 2 of the
slowest).  What it cannot see: states first reached after the window (a
chaotic or slowly drifting motion may later visit stiffer ones), hence the
safety factor; and the check: when a run of the choice over the whole horizon
takes no more steps than the pilots did together, it is run, and while its
error misses ``energy_tol`` the step shrinks by the order's prediction and
the run is repeated (at most 4 runs).  Otherwise :meth:`StepChoice.integrate`
runs the choice and its energy error then says how it held.
"""
import dataclasses
import math
import time
import warnings

import numpy as np

from ._measures import energy_error_norm
from ._model import _validate
from ._run import _stability
from ._run._integrate import integrate

__all__ = ["choose_step", "StepChoice"]

#: The candidates when ``methods`` is not given: the Lobatto family, orders 4 to 12
#: (documented in docs/guide/methods.md, "Letting the library choose").
DEFAULT_METHODS = ("simpson", "lobatto4", "lobatto5", "lobatto6", "lobatto7")
_ORDERS = {"simpson": 4, "lobatto3": 4, "lobatto4": 6, "lobatto5": 8, "lobatto6": 10,
           "lobatto7": 12, "midpoint": 2, "lobatto2": 2, "gauss2": 4, "gauss3": 6}
_PERIODS_FAST = 50     # the window: this many periods of the fastest mode ...
_PERIODS_SLOW = 2      # ... and at least this many of the slowest
_MAX_PILOTS = 8        # pilot runs per method in the search for h
_OMEGA_H_START = 0.5   # the first pilot's omega_max h
_RESOLVE = 0.8         # keep omega_max h below this fraction of min(limit, 2 pi)
_MAX_STEPS = 2e5       # no pilot of more steps
_TIMINGS = 3           # timed runs per Newton mode at a method's chosen h
_CHECKS = 4            # runs over the whole horizon at most (the check)
_CHECK_SHRINK = 0.9    # a missed check shrinks h at least by this factor


@dataclasses.dataclass(repr=False)
class StepChoice:
    """What :func:`choose_step` chose, and the pilot runs behind it.

    - ``method``, ``h``, ``n_steps``, ``newton``: the setting (h = T / n_steps
      exactly, in the time unit of the system, s for the built-ins);
    - ``energy_error``: ``max_n |H_n - H0| / |H0|`` of a run at this setting
      over ``error_span``: the whole horizon T when the check ran, else the
      pilots' ``window``;
    - ``checked``: True when a run of this setting over T met ``energy_tol``
      (the check runs when such a run takes no more steps than the pilots
      took together); False when T was beyond that, or when _CHECKS runs
      over T, each at a smaller step, all missed (then energy_error > tol);
    - ``predicted_seconds``: n_steps times the pilot's time per step (this
      machine, this moment: a guide, not a promise);
    - ``window``: the pilot runs' time span; ``omega_max``: the fastest
      linearised frequency at the start (rad per time unit);
    - ``pilots``: one dict per pilot run (method, newton, h, steps, span,
      energy_error, seconds_per_step, newton_iterations per step, status),
      the checks over T last (span = T);
    - ``candidates``: per method, the setting found for it (or why none was).
    """
    method: str
    h: float
    n_steps: int
    newton: str
    energy_error: float
    predicted_seconds: float
    energy_tol: float
    T: float
    window: float
    omega_max: float
    pilots: list
    candidates: dict
    checked: bool = False
    error_span: float = math.nan
    _run: tuple = dataclasses.field(default=None, repr=False)

    def integrate(self, **kwargs):
        """Run the choice from the start it was made for: ``sp.integrate(system,
        q0, p0, h, n_steps, method, newton=newton, **kwargs)``."""
        system, q0, p0, t0 = self._run
        kwargs.setdefault("newton", self.newton)
        kwargs.setdefault("t0", t0)
        return integrate(system, q0, p0, self.h, self.n_steps, self.method, **kwargs)

    def __repr__(self):
        span = (f"T = {self.T:.4g}" + ("" if self.checked else ", missed")
                if self.error_span >= self.T else f"the window {self.window:.4g}")
        return (f"StepChoice(method={self.method!r}, h={self.h:.6g}, n_steps={self.n_steps}, "
                f"newton={self.newton!r}, energy_error={self.energy_error:.2e} over "
                f"{span} (tol {self.energy_tol:.1e}), "
                f"predicted {self.predicted_seconds:.3g} s)")


def _pilot(system, q0, p0, t0, window, h, method, newton):
    """One pilot run over ``window`` with about step h: a row of the table."""
    n = max(1, math.ceil(window / h - 1e-9))
    row = dict(method=method, newton=newton, h=window / n, steps=n, span=window)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            traj = integrate(system, q0, p0, window / n, n, method, newton=newton, t0=t0)
            seconds = time.perf_counter() - start
    except Exception as exc:   # a failed pilot (no convergence, unstable step) is a row
        row.update(energy_error=math.inf, seconds_per_step=math.nan, newton_iterations=math.nan,
                   status=f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
        return row
    it = np.asarray(traj.newton_iterations, dtype=float)
    row.update(energy_error=energy_error_norm(traj),
               seconds_per_step=seconds / n,
               newton_iterations=float(it[1:].mean()) if it.size > 1 else math.nan, status="ok")
    return row


def _search(system, q0, p0, t0, window, method, order, h_first, h_cap, h_min, target, newton,
            rows):
    """The largest pilot step with error <= target: its row, or None."""
    h, best, seen = min(h_first, h_cap), None, []
    for _ in range(_MAX_PILOTS):
        row = _pilot(system, q0, p0, t0, window, h, method, newton)
        rows.append(row)
        e = row["energy_error"]
        seen.append(row)
        if e <= target and (best is None or row["h"] > best["h"]):
            best = row
        if not math.isfinite(e):
            h *= 0.25
            continue
        # the next step from the order: e ~ C h^p, aiming a little inside the target
        factor = (0.5 * target / e) ** (1.0 / order) if e > 0.0 else 4.0
        factor = min(4.0, max(0.125, factor))
        if e <= target:
            if e >= 0.05 * target or row["h"] >= h_cap * (1.0 - 1e-12):
                break            # close enough to the target, or at the stability cap
            larger = [r for r in seen if r["h"] > row["h"] and r["energy_error"] > target]
            nxt = min(h * factor, h_cap)
            if larger:           # never step past a larger h that missed
                nxt = min(nxt, math.sqrt(row["h"] * min(r["h"] for r in larger)))
            if nxt <= row["h"] * (1.0 + 1e-3):
                break
            h = nxt
        else:
            larger = [r["energy_error"] for r in seen[:-1]
                      if r["h"] > row["h"] and math.isfinite(r["energy_error"])]
            if larger and e >= 0.5 * min(larger):
                break            # a smaller step did not lower the error: the rounding floor
            h *= factor
        if h < h_min:
            break                # a pilot of more than _MAX_STEPS steps: too slow a method
    return best


def _window(system, q0, p0, T, omega_max, window):
    if window is not None:
        w = float(window)
        if not (math.isfinite(w) and w > 0.0):
            raise ValueError(f"window must be a positive, finite time; got {window!r}")
        return min(w, T)
    w = _PERIODS_FAST * 2.0 * math.pi / omega_max
    try:
        M = np.asarray(system.mass(q0), dtype=float)
        K = np.asarray(system.potential_hess(q0), dtype=float)
        lam = np.linalg.eigvals(np.linalg.solve(M, K)).real
        lam = lam[lam > 1e-12 * omega_max ** 2]
        if lam.size:
            w = max(w, _PERIODS_SLOW * 2.0 * math.pi / math.sqrt(float(lam.min())))
    except Exception:   # the slowest mode is a refinement; the fastest one sets the window
        pass
    return min(w, T)


def choose_step(system, q0, p0=None, T=None, energy_tol=1e-8, *, qdot0=None, t0=0.0,
                methods=None, newton=("auto", "step"), safety=0.5, window=None):
    """Method, step size and Newton mode for an energy error below ``energy_tol``
    over ``T``, at the least predicted time (the rule: this module's
    documentation; docs/guide/methods.md, *Letting the library choose*).

    Parameters
    ----------
    system : symplectic.System
        Without forces (the criterion is the conservation of H = T + V).
    q0, p0 : array_like (n,)
        The start (or ``qdot0`` instead of ``p0``, as for ``integrate``).
    T : float
        The horizon the run will span (time unit of the system; > 0).
    energy_tol : float
        The target for ``max_n |H_n - H0| / |H0|`` (0 < energy_tol < 1; H0 != 0).
    methods : sequence of str, optional
        Candidates (default: simpson, lobatto4 ... lobatto7).
    newton : str or sequence of str
        Newton modes timed at each method's step (default "auto" and "step").
    safety : float
        The pilots aim at ``safety * energy_tol`` (0 < safety <= 1; default 0.5),
        a margin for states the window does not see.
    window : float, optional
        The pilot runs' span (default: T when short, else 50 periods of the
        fastest mode at q0, at least 2 of the slowest; never more than T).

    Returns
    -------
    StepChoice
        ``.method``, ``.h``, ``.n_steps``, ``.newton``, the pilot's
        ``.energy_error``, ``.predicted_seconds``, every pilot run in
        ``.pilots``; ``.integrate()`` runs it.

    Raises ValueError for bad arguments, a system with forces, H0 = 0, a start
    with no oscillating mode and no motion (no time scale), or when no
    candidate reaches the target (with each one's best error).  Costs a few
    runs over the window per candidate (pilots that need more than 2e5 steps
    are not run: that method is too slow for the target).

    >>> import math, symplectic as sp
    >>> from symplectic import analysis
    >>> sys = sp.systems.pendulum()
    >>> c = analysis.choose_step(sys, [1.0], [0.0], T=100.0, energy_tol=1e-9)
    >>> analysis.energy_error_norm(c.integrate()) <= 1e-9
    True
    """
    system = _validate.system(system)
    if getattr(system, "force", None) is not None:
        raise ValueError("choose_step: the system has a force (damping or a drive), so its energy "
                         "H is not conserved and cannot be the criterion; choose the step "
                         "for the same system without the force")
    if T is None:
        raise TypeError("choose_step: give the horizon T")
    T = float(T)
    if not (math.isfinite(T) and T > 0.0):
        raise ValueError(f"T must be a positive, finite time; got {T!r}")
    tol = float(energy_tol)
    if not (math.isfinite(tol) and 0.0 < tol < 1.0):
        raise ValueError(f"energy_tol must lie in (0, 1) (a relative energy error); got {energy_tol!r}")
    safety = float(safety)
    if not (0.0 < safety <= 1.0):
        raise ValueError(f"safety must lie in (0, 1]; got {safety!r}")
    names = DEFAULT_METHODS if methods is None else ((methods,) if isinstance(methods, str)
                                                     else tuple(methods))
    if not names:
        raise ValueError("methods: give at least one method")
    for name in names:
        _validate.method(name)
        if name not in _ORDERS:
            raise ValueError(f"choose_step: method {name!r} is not a symplectic method with a "
                             f"known energy order; choose among {sorted(_ORDERS)}")
    modes = (newton,) if isinstance(newton, str) else tuple(newton)
    if not modes:
        raise ValueError("newton: give at least one Newton mode")
    q0 = _validate.state("q0", q0, system.n)
    if (p0 is None) == (qdot0 is None):
        raise ValueError("give exactly one of p0 and qdot0")
    if p0 is None:
        qdot0 = _validate.state("qdot0", qdot0, system.n)
        p0 = np.asarray(system.mass(q0), dtype=float) @ qdot0
    p0 = _validate.state("p0", p0, system.n)
    t0 = float(t0)

    # the time scale: the fastest linearised mode, else the motion's own rate
    omega = _stability.omega_max(system, q0, p0)
    if not omega:
        v = np.linalg.solve(np.asarray(system.mass(q0), dtype=float), p0)
        omega = float(np.max(np.abs(v))) if np.any(v) else 0.0
        if not omega:
            raise ValueError("choose_step: at q0 no mode oscillates and nothing moves, so there "
                             "is no time scale to start from; give a moving start")
    # H0 against the energy scale of the start: its kinetic and potential energy and
    # the fastest mode's energy at the amplitude |q0| (a pendulum at q = pi/2 at rest has
    # H0 = -m g l cos(pi/2) ~ 1e-16 m g l: zero for the relative error)
    H0, V0 = float(system.energy(q0, p0)), float(system.potential(q0))
    M0 = np.asarray(system.mass(q0), dtype=float)
    scale = max(abs(H0 - V0), abs(V0), 0.5 * omega ** 2 * float(q0 @ M0 @ q0))
    if not abs(H0) > 1e-8 * scale:
        raise ValueError(f"choose_step: H0 = {H0:.3g} at the start, zero against the energy "
                         f"scale {scale:.3g}, so the relative energy error is undefined; add a "
                         "constant to V")
    window = _window(system, q0, p0, T, omega, window)
    target = safety * tol

    rows, candidates, best = [], {}, None
    for name in names:
        order = _ORDERS[name]
        limit = _stability.estimate(system, q0, 1.0, _validate.method(name), p0)
        lim = limit.limit if limit is not None else math.inf
        h_cap = _RESOLVE * min(lim, 2.0 * math.pi) / omega
        h_first = _OMEGA_H_START / omega
        # a pilot longer than _MAX_STEPS steps is not run: the method is too slow here
        h_min = window / _MAX_STEPS
        found = _search(system, q0, p0, t0, window, name, order, h_first, h_cap, h_min, target,
                        modes[0], rows) if h_cap > h_min else None
        if found is None or found["h"] < h_min:
            tried = [r["energy_error"] for r in rows if r["method"] == name]
            candidates[name] = dict(reached=False,
                                    best_error=min(tried) if tried else math.nan)
            continue
        # the cost per step of each Newton mode at that h: the least of _TIMINGS
        # runs, the modes interleaved (the pilot's own run counts as one)
        fastest = {modes[0]: found["seconds_per_step"]}
        for _ in range(_TIMINGS):
            for mode in modes:
                again = _pilot(system, q0, p0, t0, window, found["h"], name, mode)
                rows.append(again)
                if again["status"] == "ok" and again["energy_error"] <= target:
                    fastest[mode] = min(fastest.get(mode, math.inf), again["seconds_per_step"])
        mode = min(fastest, key=fastest.get)
        n_steps = max(1, math.ceil(T / found["h"] - 1e-9))
        cand = dict(reached=True, h=T / n_steps, n_steps=n_steps, newton=mode,
                    energy_error=found["energy_error"],
                    seconds_per_step=fastest[mode], predicted_seconds=n_steps * fastest[mode])
        candidates[name] = cand
        if best is None or cand["predicted_seconds"] < candidates[best]["predicted_seconds"]:
            best = name
    if best is None:
        got = ", ".join(f"{k}: best {v['best_error']:.1e}" for k, v in candidates.items())
        raise ValueError(f"choose_step: no method reached an energy error of {target:.1e} "
                         f"(safety {safety} x energy_tol) over the window {window:.4g} ({got}); "
                         f"a target near the rounding level (~1e-13) is out of reach")
    c = dict(candidates[best])
    checked, span = _check(system, q0, p0, t0, T, window, best, c, tol, target, rows)
    return StepChoice(method=best, h=c["h"], n_steps=c["n_steps"], newton=c["newton"],
                      energy_error=c["energy_error"], predicted_seconds=c["predicted_seconds"],
                      energy_tol=tol, T=T, window=window, omega_max=omega, pilots=rows,
                      candidates=candidates, checked=checked, error_span=span,
                      _run=(system, q0, p0, t0))


def _check(system, q0, p0, t0, T, window, method, c, tol, target, rows):
    """The choice c run over the whole horizon, when that run takes no more steps than
    the pilots took together (a count, so that the decision does not depend on the
    machine's timing): while a run misses tol, h shrinks by the order's prediction, as in
    the search (and at least by _CHECK_SHRINK), up to _CHECKS runs.  Updates c to the
    last run's setting and error; returns (checked, span of c's error)."""
    if window >= T:                              # the pilots' window was the horizon
        return c["energy_error"] <= tol, T
    budget = sum(r["steps"] for r in rows)
    order, n_steps = _ORDERS[method], c["n_steps"]
    if n_steps > budget:
        return False, window
    for _ in range(_CHECKS):
        row = _pilot(system, q0, p0, t0, T, T / n_steps, method, c["newton"])
        rows.append(row)
        e = row["energy_error"]
        if math.isfinite(row["seconds_per_step"]):
            c["seconds_per_step"] = row["seconds_per_step"]
        c.update(h=row["h"], n_steps=row["steps"], energy_error=e,
                 predicted_seconds=row["steps"] * c["seconds_per_step"])
        if e <= tol:
            return True, T
        factor = (target / e) ** (1.0 / order) if math.isfinite(e) else 0.25
        n_steps = max(n_steps + 1, math.ceil(n_steps / min(_CHECK_SHRINK, factor)))
    return False, T
