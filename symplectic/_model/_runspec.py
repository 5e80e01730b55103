"""The run spec: one run's arguments checked once (:func:`run_spec`,
:class:`RunSpec`) -- the method and Newton's options, the step and the time
span, the output (thinning, output times, events, progress), the memory its
outputs take -- read by every entry point and by the driver."""
import dataclasses
import math
import numbers
import os
import types

import numpy as np

from .. import _engine
from . import _registry
from ._validate import (NEWTON_MODES, as_floats, choice, flag, integer, method, real,
                        step_count, step_size)


def stored_rows(store, n_steps):
    """How many states integrate_many keeps per member for ``store`` ("all",
    "final" or every k-th state plus the last, k >= 1)."""
    if isinstance(store, str) and store in ("all", "final"):
        return n_steps + 1 if store == "all" else 1
    if isinstance(store, (int, np.integer)) and not isinstance(store, (bool, np.bool_)) \
            and store >= 1:
        # (a k beyond the step count keeps the first and the last state, as k = n_steps does)
        return _engine.stored_rows(n_steps, min(int(store), max(n_steps, 1)))
    raise ValueError(f"store must be 'all', 'final' or a positive int, got {store!r}")


# newton= -> the core's sym_newton_mode


def newton(rtol=None, max_iter=None, newton="auto", predictor=True, branch_check="auto",
           linear_solver="auto"):
    """Newton's options as the core's keywords, those that differ from its
    defaults: rtol > 0, max_iter >= 1, newton "full", "chord", "step",
    "decoupled" or "auto" (-> chord = 1 .. 4), predictor (a truth value), branch_check "auto",
    "always", "never" or "off" (-> branch = 1, 2, 3), linear_solver "auto", "dense" or
    "tree" (-> solver = 1, 2)."""
    opts = {}
    solver = choice("linear_solver", linear_solver, tuple(_engine.SOLVER_MODES))
    if solver != "auto":
        opts["solver"] = _engine.SOLVER_MODES[solver]         # the core's sym_solver_mode
    check = choice("branch_check", branch_check, tuple(_engine.BRANCH_MODES))
    if check != "auto":
        opts["branch"] = _engine.BRANCH_MODES[check]          # the core's sym_branch_mode
    if rtol is not None:
        rtol = real("rtol", rtol)
        if not rtol > 0:
            raise ValueError(f"rtol must be > 0, got {rtol}")
        opts["rtol"] = rtol
    if max_iter is not None:
        opts["max_iter"] = integer("max_iter", max_iter, 1)
    mode = choice("newton", newton, tuple(NEWTON_MODES))
    if mode != "full":
        opts["chord"] = NEWTON_MODES[mode]
    if not predictor:
        opts["predictor"] = False
    return opts


def available_memory():
    """Bytes of memory available to a new allocation (Linux: MemAvailable), or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def output_bytes(n_steps, n, method, every=1, forced=False, n_constraints=0):
    """Bytes of the arrays one integration returns: t, q, p (n_steps + 1 rows,
    or every ``every``-th and the last), the internal nodes (every step only)
    and the Newton counts (rows - 1), with a force its work and impulse (one
    row per stored row), and with m = ``n_constraints`` the multipliers at the
    s nodes (rows - 1); ``method`` a registry row.  The C core's formula
    (sym_run_output_bytes), the one place that sizes a run's outputs."""
    lam = len(method.nodes) * (n_constraints or 0)
    return int(_engine.output_bytes(n_steps, every, n, max(method.n_mid, 0), bool(forced), lam))


#: Requests below this many bytes are not checked: asking the kernel (reading
#: /proc/meminfo, ~15 us) would cost more than the short runs it guards, and a
#: MiB that does not fit means Python itself is out of memory.
MEMORY_CHECKED_FROM = 2 ** 20


def memory(nbytes, what, hint="integrate in chunks (start each from the last state of the "
                              "previous one; sp.Integrator(...).propagate(n_steps=...) does "
                              "that, bitwise one run), or store fewer rows (store_every=)"):
    """MemoryError before allocating ``nbytes`` if they cannot fit (not after a
    half-finished run, and not through the kernel's overcommit and OOM killer)."""
    if nbytes < MEMORY_CHECKED_FROM:
        return
    avail = available_memory()
    if avail is not None and nbytes > avail:
        raise MemoryError(
            f"{what} needs {nbytes / 2**30:.3g} GiB for its arrays but only "
            f"{avail / 2**30:.3g} GiB of memory is available; {hint}")


@dataclasses.dataclass(frozen=True)
class RunSpec:
    """One run's arguments, checked once (:func:`run_spec`) and read by every
    entry point -- step, integrate, each member of integrate_many, an
    Integrator's pieces -- and by symplectic._run._driver.run.  It holds what
    is the same for every member of an ensemble; the system, its state and
    its force are each member's.  Adding a keyword to a run means a field
    here, its check in :func:`run_spec`, its use in _driver.run and the C
    run struct (sym_run)."""
    method: _registry.Method
    h: float
    n_steps: int
    t0: float                   # the origin: node k at t0 + k h
    k0: int = 0                 # the first step's index (a run continued from node k0)
    tf: float = None            # t_span's end (the last time, exactly), or None
    h_req: float = None         # the h asked for (t_span adjusts it down), or None
    options: types.MappingProxyType = dataclasses.field(    # Newton's: the core's keywords
        default_factory=lambda: types.MappingProxyType({}))
    every: int = 1              # keep every k-th state and the last (at most n_steps)
    times: np.ndarray = None    # t_eval: the output times, or None
    events: tuple = ()          # the validated events (Event)
    progress: bool = False
    closed_form: bool = True    # a linear system may take its closed form
    check: object = True        # check the system's derivatives once (_derivcheck.ensure)
    tangent: bool = False       # propagate d(q, p)/d(q0, p0) with the steps (sym_run.deriv.tangent)

    @property
    def t_end(self):
        """The time of the last node: t_span's end, or t0 + (k0 + n_steps) h."""
        return self.t0 + (self.k0 + self.n_steps) * self.h if self.tf is None else self.tf

    def output_bytes(self, n, forced=False, n_constraints=0):
        """The bytes of the arrays this run returns for n degrees of freedom."""
        if self.times is not None:
            return 8 * len(self.times) * (1 + 3 * n + (1 + n if forced else 0))
        b = output_bytes(self.n_steps, n, self.method, self.every, forced, n_constraints)
        if self.tangent:
            b += 8 * _engine.stored_rows(self.n_steps, self.every) * 4 * n * n
        return b


#: The Newton options of a run and their defaults (the core's own).
NEWTON_DEFAULTS = types.MappingProxyType(
    {"rtol": None, "max_iter": None, "newton": "auto", "predictor": True,
     "branch_check": "auto", "linear_solver": "auto"})


def method_options(m, given):
    """Newton's options for method ``m`` (a registry row) as the core's
    keywords; ``given`` maps option names to values, None or the default
    meaning not given.  An explicit method (rk4) solves nothing: a Newton
    option given to it with a value other than its default is a TypeError,
    not ignored."""
    unknown = sorted(set(given) - set(NEWTON_DEFAULTS))
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {unknown}; the method options are "
                        f"{sorted(NEWTON_DEFAULTS)}")
    if not m.implicit:
        set_ = sorted(k for k, v in given.items()
                      if v is not None and not _is_default(v, NEWTON_DEFAULTS[k]))
        if set_:
            raise TypeError(f"method {m.name!r} is explicit: it has no Newton options, got "
                            f"{set_}")
    return types.MappingProxyType(newton(**{**NEWTON_DEFAULTS, **{k: v for k, v in given.items()
                                                                 if v is not None}}))


def _is_default(v, default):
    try:
        return bool(v == default) if not isinstance(v, np.ndarray) else False
    except Exception:
        return False


def run_spec(method_name, h, n_steps, t0=0.0, t_span=None, *, t_eval=None, store_every=None,
             events=None, progress=False, options=None, closed_form=True,
             check=True, one_step=False, tangent=False):
    """The :class:`RunSpec` of a run from the entry point's arguments, each
    checked here once: the method, the time grid (:func:`time_grid`), the
    output (t_eval or store_every), the events, the progress flag, Newton's
    options (``options``, a dict; :func:`method_options`), the tangent flag
    (kept at the stored nodes: not with t_eval).  ``one_step``: a step
    (n_steps 1; t_eval, store_every, events and progress do not apply)."""
    m = method(method_name)
    if one_step:
        if t_span is None:
            h, t0, tf, h_req = step_size(h), real("t", t0), None, None
        else:
            h, _n, t0, tf, h_req = time_grid(h, 1, t0, t_span)
        n_steps = 1
    else:
        h, n_steps, t0, tf, h_req = time_grid(h, n_steps, t0, t_span)
    # a k beyond the step count keeps the first and the last state, as k = n_steps does
    every = min(store_every_(store_every), max(n_steps, 1))
    spec = RunSpec(m, h, n_steps, t0, tf=tf, h_req=h_req,
                   options=method_options(m, options or {}), every=every,
                   closed_form=bool(closed_form), check=check,
                   tangent=flag("tangent", tangent))
    if one_step:
        return spec
    times = t_eval_(t_eval, t0, spec.t_end)
    if times is not None:
        if store_every is not None:
            raise TypeError("give t_eval (states at those times) or store_every (every k-th "
                            "step), not both")
        if spec.tangent:
            raise TypeError("tangent=True keeps the tangent at the step nodes, which t_eval "
                            "does not return: use store_every (or every step) with tangent")
        every = max(n_steps, 1)            # the C loop keeps the first and the last state only
    return dataclasses.replace(spec, every=every, times=times, events=tuple(events_(events)),
                               progress=flag("progress", progress))


def store_every(k):
    """store_every: None (every step) or an int >= 1."""
    if k is None:
        return 1
    return integer("store_every", k, 1)


def time_grid(h, n_steps, t0, t_span):
    """The steps of a run from ``h``, ``n_steps``, ``t0`` and ``t_span`` (each
    possibly None): returns (h, n_steps, t0, tf or None, h_requested).

    Without t_span: h and n_steps are required (t0 defaults to 0).  With
    t_span = (t0, tf), tf != t0: given h, the steps are n = ceil(|tf - t0| /
    |h|) (to within 1e-12 relative, so that a span that h divides gives that
    count) of size (tf - t0) / n, at most |h|; given n_steps instead, h =
    (tf - t0) / n_steps; given both, they must agree (|n h - (tf - t0)| <=
    1e-9 |tf - t0|).  h must run the way of the span; t0 (default 0) is then
    t_span[0], and a nonzero t0 must equal it."""
    t0 = real("t0", t0)
    if t_span is None:
        h = step_size(h)
        n_steps = step_count(n_steps)
        return h, n_steps, t0, None, h
    if isinstance(t_span, (str, bytes)) or not hasattr(t_span, "__len__") or len(t_span) != 2:
        raise TypeError(f"t_span must be a pair (t0, tf) of real numbers, got {t_span!r}")
    a, b = real("t_span[0]", t_span[0]), real("t_span[1]", t_span[1])
    if a == b:
        raise ValueError(f"t_span must have t0 != tf, got {t_span!r}")
    if t0 != 0.0 and t0 != a:
        raise ValueError(f"t0 = {t0!r} disagrees with t_span[0] = {a!r}; give one of them")
    span = b - a
    if h is None and n_steps is None:
        raise TypeError("with t_span, give the step h (adjusted down to divide the span) or "
                        "n_steps")
    if n_steps is not None:
        n_steps = integer("n_steps", n_steps, 1)
    h_req = None
    if h is not None:
        h_req = step_size(h)
        if (h_req > 0) != (span > 0):
            raise ValueError(f"h = {h_req!r} runs the other way than t_span = ({a!r}, {b!r}); "
                             f"give h of the sign of tf - t0")
        if n_steps is None:
            ratio = abs(span) / abs(h_req)
            n_steps = max(1, math.ceil(ratio * (1.0 - 1e-12)))
        elif abs(n_steps * h_req - span) > 1e-9 * abs(span):
            raise ValueError(f"n_steps = {n_steps} steps of h = {h_req!r} span "
                             f"{n_steps * h_req!r}, not t_span's {span!r}; give two of h, "
                             f"n_steps, t_span that agree (or t_span and h: h is then "
                             f"adjusted down to divide the span)")
    h = span / n_steps
    return h, n_steps, a, b, (h if h_req is None else h_req)


def t_eval(times, t0, tf):
    """Output times: a 1-d array of finite reals, sorted in the direction of
    integration (non-decreasing for tf > t0), inside [t0, tf] (a few rounding
    units outside are clipped to the bounds)."""
    if times is None:
        return None
    a = as_floats("t_eval", times, "a 1-d array of real numbers")
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"t_eval must be 1-d, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("t_eval contains non-finite values")
    lo, hi = min(t0, tf), max(t0, tf)
    slack = 4.0 * np.finfo(float).eps * max(abs(lo), abs(hi), 1.0)
    outside = (a < lo - slack) | (a > hi + slack)
    if outside.any():
        k = int(np.argmax(outside))
        raise ValueError(f"t_eval must lie within the integrated interval [{lo!r}, {hi!r}]; "
                         f"t_eval[{k}] = {float(a[k])!r} is outside")
    d = np.diff(a) * (1.0 if tf >= t0 else -1.0)
    if (d < 0).any():
        k = int(np.argmax(d < 0))
        way = "increasing" if tf >= t0 else "decreasing (the run goes backward in time)"
        raise ValueError(f"t_eval must be sorted, {way}: t_eval[{k}] = {float(a[k])!r} then "
                         f"t_eval[{k + 1}] = {float(a[k + 1])!r}")
    return np.clip(a, lo, hi)


class Event:
    """A validated event: the function, ``terminal`` (0: never stops; k >= 1:
    stops at its k-th occurrence) and ``direction`` (-1, 0 or 1)."""
    __slots__ = ("fn", "terminal", "direction")

    def __init__(self, fn, terminal, direction):
        self.fn, self.terminal, self.direction = fn, terminal, direction


def events(evs):
    """``events=``: None, a callable g(t, q, p) or a sequence of them, each with
    optional attributes ``terminal`` (bool, or an int k >= 0: stop at the k-th
    occurrence) and ``direction`` (a real number; its sign)."""
    if evs is None:
        return []
    if callable(evs):
        evs = [evs]
    try:
        evs = list(evs)
    except TypeError:
        raise TypeError(f"events must be a callable g(t, q, p) or a sequence of them, "
                        f"got {type(evs).__name__}") from None
    out = []
    for i, g in enumerate(evs):
        if not callable(g):
            raise TypeError(f"events[{i}] must be a callable g(t, q, p), got "
                            f"{type(g).__name__}")
        term = getattr(g, "terminal", False)
        if isinstance(term, (bool, np.bool_)):
            term = int(bool(term))
        else:
            try:
                term = integer(f"events[{i}].terminal", term, 0)
            except (TypeError, ValueError):
                raise TypeError(f"events[{i}].terminal must be True, False or an int >= 0, "
                                f"got {term!r}") from None
        direction = getattr(g, "direction", 0.0)
        try:
            direction = real(f"events[{i}].direction", direction)
        except (TypeError, ValueError):
            raise TypeError(f"events[{i}].direction must be a real number (its sign: > 0 "
                            f"upward, < 0 downward, 0 both), got {direction!r}") from None
        out.append(Event(g, term, (direction > 0) - (direction < 0)))
    return out


def event_value(i, fn, v, t):
    """The value an event function returned: a finite real scalar, as a float."""
    if type(v) is float and math.isfinite(v):
        return v                                            # the common case, quickly
    name = getattr(fn, "__name__", type(fn).__name__)
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        what = (f"an array of shape {np.shape(v)}" if isinstance(v, (np.ndarray, list, tuple))
                else repr(v))
        raise TypeError(f"event function {i} ({name}) must return a real scalar, got {what} "
                        f"at t = {t!r}")
    x = float(v)
    if not math.isfinite(x):
        raise ValueError(f"event function {i} ({name}) returned {x!r} at t = {t!r}; it must "
                         f"be finite")
    return x


# run_spec's parameters shadow these checks' names
store_every_, t_eval_, events_ = store_every, t_eval, events
