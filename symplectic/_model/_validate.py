"""The checks of the public API's inputs: numbers, names, callables, the
system and the method, states, forces.

Each function takes what the user passed, raises a TypeError or ValueError
that names the argument, and returns the value converted (a float, an int, a
float64 array, a registry row).  ``step``, ``integrate``, ``integrate_many``,
``System``, :mod:`symplectic.systems`, :mod:`symplectic.linear` and
:mod:`symplectic.analysis` call these (and those of :mod:`._matrices`, the
matrices and the mass matrix of a state, and :mod:`._runspec`, the run spec)
and check nothing themselves (a check that belongs to one argument of one
function -- e.g. that dense-output times lie in the integrated interval --
stays with that function).  The C binding checks its own arguments again (it
is callable without this package); the rules here are at least as strict, so
its messages are reached only through ``symplectic._core`` directly.

Numbers: a real number is an int or float (a NumPy scalar, a 0-d real array),
never a bool or a string.
"""
import inspect
import math
import numbers
import operator

import numpy as np

from .. import _engine
from . import _registry

#: Newton's modes: name -> the value of the core's ``chord=`` (its own table, read from it).
NEWTON_MODES = _engine.NEWTON_MODES


def required(name, value):
    if value is None:
        raise TypeError(f"{name} is required")
    return value


def real(name, x):
    """A finite real number as a float."""
    if type(x) is float and math.isfinite(x):
        return x                                            # the common case, quickly
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {x!r}")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return v


def positive(name, x):
    """A finite real number > 0 as a float."""
    try:
        v = real(name, x)
    except ValueError:
        v = math.nan
    if not v > 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {x!r}")
    return v


def integer(name, x, minimum):
    """An int (not a bool, not a float) >= minimum."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be an int")
    try:
        v = operator.index(x)
    except TypeError:
        raise TypeError(f"{name} must be an int, got {x!r}") from None
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


def step_size(h):
    """h: required, real, finite and nonzero (negative integrates backward)."""
    h = real("h", required("h", h))
    if h == 0.0:
        raise ValueError("h must be nonzero")
    return h


def step_count(n_steps):
    return integer("n_steps", required("n_steps", n_steps), 0)


def dof(n):
    """The number of degrees of freedom of a system: an int >= 1."""
    return integer("n", n, 1)


def choice(name, value, allowed):
    if not (isinstance(value, str) and value in allowed):
        names = [repr(a) for a in allowed]
        listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]
        raise ValueError(f"{name} must be {listed}, got {value!r}")
    return value


def function(name, f, signature):
    if not callable(f):
        raise TypeError(f"{name} must be callable: {signature}")
    return f


#: How the positional arguments of a callback are said, by their number.
_COUNT_WORDS = {1: "one positional argument", 2: "two positional arguments",
                3: "three positional arguments", 6: "six positional arguments"}


def signature(name, f, expected, n_args, words):
    """TypeError, before any call, when the callable ``f`` cannot be called
    with ``n_args`` positional arguments, as ``expected`` (e.g.
    ``"mass(q) -> (n, n)"``) says it is; ``words`` names those arguments
    ("the coordinates q (n,)").  The message names the argument ``name``,
    the expected call, and ``f``'s own signature with the reason it does not
    bind.  Callables without an inspectable signature (some builtins and
    extension types) pass: their first call reports a wrong one.  (The
    system's callbacks -- :class:`symplectic.System` -- and the forces --
    :mod:`symplectic.forces` -- are checked here.)"""
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return f
    try:
        sig.bind(*([None] * n_args))
    except TypeError as exc:
        label = getattr(f, "__name__", type(f).__name__)
        count = _COUNT_WORDS.get(n_args, f"{n_args} positional arguments")
        raise TypeError(f"{name} must be callable as {expected}: {count}, {words}; "
                        f"{label}{sig} cannot be called so ({exc})") from None
    return f


def callback(name, f, expected, words, n_args=1):
    """A callable argument of a System: callable (:func:`function`) with
    ``n_args`` positional arguments (:func:`signature`)."""
    return signature(name, function(name, f, expected), expected, n_args, words)


def system(obj):
    """A System (any form: built-in, Python callables, compiled, SymPy)."""
    if not isinstance(obj, _engine.System):
        raise TypeError(f"system must be a symplectic.System (see symplectic.systems), "
                        f"got {type(obj).__name__}")
    return obj


def systems(obj):
    """One System, or a non-empty sequence of Systems of one n (an ensemble):
    returns (list or None, n)."""
    if isinstance(obj, _engine.System):
        return None, obj.n
    try:
        members = list(obj)
    except TypeError:
        members = []
    if not members or not all(isinstance(s, _engine.System) for s in members):
        raise TypeError("system must be a System or a non-empty sequence of Systems")
    n = members[0].n
    if any(s.n != n for s in members):
        raise ValueError("all systems of an ensemble must have the same n")
    return members, n


def method(name):
    """The registry row of a method name."""
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {type(name).__name__}")
    try:
        return _registry.METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; available: "
                         f"{sorted(_registry.METHODS)}") from None


def as_floats(name, x, what):
    array = isinstance(x, np.ndarray)
    if array and x.dtype == object:
        raise TypeError(f"{name} must be a float array, got an object array")
    if array and x.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex values")
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be {what} ({exc})") from None
    if not array and np.iscomplexobj(x):
        raise TypeError(f"{name} must be real, got complex values")
    return a


def state(name, x, n):
    """One state vector (q, p or qdot): (n,) finite floats (a scalar for n = 1)."""
    a = as_floats(name, x, f"a sequence of {n} real numbers")
    if n == 1 and a.ndim == 0:
        a = a.reshape(1)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) for this system, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains non-finite values: {a.tolist()}")
    return a


def states(name, x, n):
    """The states of an ensemble: (K, n) finite floats, or one (n,) row -> (1, n)."""
    a = as_floats(name, x, f"an array of shape (K, {n}) or ({n},) of real numbers")
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != n:
        raise ValueError(f"{name} must have shape (K, {n}) or ({n},), got {np.shape(x)}")
    bad = ~np.isfinite(a).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{name} contains non-finite values (row {k}: {a[k].tolist()})")
    return a


def broadcast(name, a, K):
    """(1, n) or (K, n) rows -> (K, n)."""
    if a.shape[0] == K:
        return a
    if a.shape[0] == 1:
        return np.repeat(a, K, axis=0)
    raise ValueError(f"{name} has {a.shape[0]} rows, expected 1 or {K}")


def momentum_or_velocity(p, qdot, pname, vname):
    """Exactly one of the initial momenta and velocities: returns (value, name,
    True if it is the velocities)."""
    if p is None and qdot is None:
        raise TypeError(f"give the initial momenta {pname}= (p = M(q) qdot) or the initial "
                        f"velocities {vname}=")
    if p is not None and qdot is not None:
        raise TypeError(f"give either {pname}= (momenta) or {vname}= (velocities), not both")
    return (p, pname, False) if p is not None else (qdot, vname, True)


def constrained_state(system, method, q, p, qname="q0", pname="p0", check=True, options=None):
    """A constrained system's initial state (nothing to check without
    constraints): the method supports constraints, Newton's mode (``options``,
    the core's keywords) is not "decoupled", G(q) has full rank, |g(q)|
    and |G M^-1 p| are at rounding level (symplectic._model._constraints.check_state,
    which also checks the user's constraint derivatives on first use unless
    ``check`` is False)."""
    if system.n_constraints == 0:
        return
    if options and options.get("chord") == NEWTON_MODES["decoupled"]:
        raise ValueError(f"newton='decoupled' has no form for constrained systems (this one "
                         f"has {system.n_constraints} constraint(s)); use 'auto', 'full', "
                         f"'step' or 'chord'")
    from . import _constraints
    _constraints.check_state(system, method, q, p, qname, pname, check)


def chart(system, q, p, force=None):
    """The built-in's own pre-run check of an initial state (a run's, a step's):
    None, or the reason to refuse the run before its first step (the C
    core's failure text and what the check found).  ``systems.lagrange_top``:
    the exact motion from (q, p) comes within |sin(theta)| < 0.01 of a pole
    of its ZXZ angles (symplectic._model._topchart), which steps can jump over
    unrefused by the core's pointwise check.  Other systems: None.  Not
    applied under a force (``force``, or the system's own damping): the
    check reads the unforced motion's conserved quantities."""
    if force is not None or getattr(system, "_force", None) is not None:
        return None
    check = _registry.STATE_CHECKS.get(system.builtin)
    return None if check is None else check(system.params, q, p)


def positive_values(name, x, n):
    """A scalar or n values, each finite and > 0, as an (n,) float array."""
    a = np.asarray(x, dtype=float)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have length n = {n}, got shape {a.shape}")
    if not (np.all(np.isfinite(a)) and np.all(a > 0)):
        raise ValueError(f"{name} must be finite and > 0, got {a.tolist()}")
    return a.copy()


def value_text(v):
    """A parameter value as a message or a System's repr writes it: an array
    to 6 digits (summarised beyond 8 entries), a float to 10 digits."""
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=6, separator=", ", threshold=8)
    if isinstance(v, float):
        return f"{v:.10g}"
    return repr(v)


def nonnegative(name, x):
    """A finite real number >= 0 as a float."""
    v = real(name, x)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return v


def force_array(name, F, rows, n, what="n_steps", points=False):
    """A held force: (rows, n) finite floats (rows, n None: any), or with
    ``points`` also (rows, P, n), a value at each of a step's P force points;
    the error names the first step (row) with a non-finite value."""
    a = as_floats(name, F, "an array of real numbers of shape (n_steps, n)")
    if not (a.ndim == 2 or (points and a.ndim == 3 and a.shape[1] >= 1)) or \
            (rows is not None and a.shape[0] != rows) or (n is not None and a.shape[-1] != n):
        want = f"({what} = {rows if rows is not None else 'rows'}, n = " \
               f"{n if n is not None else 'n'})"
        also = (f", or ({what}, P, n) with a value at each of the step's P force points"
                if points else "")
        raise ValueError(f"{name}: a held force array must have shape {want}: one row of "
                         f"generalized forces per step{also}, got shape {np.shape(F)}")
    bad = ~np.isfinite(a.reshape(a.shape[0], -1)).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{name}: the held force array has a non-finite value at step {k}: "
                         f"{a[k].tolist()}")
    return np.ascontiguousarray(a)


def flag(name, x):
    """A truth value given as a bool (True/False, a NumPy bool)."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {x!r}")
    return bool(x)
