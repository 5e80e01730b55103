"""Every check of the public API's inputs, in one place.

Each function takes what the user passed, raises a TypeError or ValueError
that names the argument, and returns the value converted (a float, an int, a
float64 array, a registry row).  ``step``, ``integrate``, ``integrate_many``,
``System``, :mod:`symplectic.systems`, :mod:`symplectic.linear` and
:mod:`symplectic.analysis` call these and check nothing themselves (a check
that belongs to one argument of one function -- e.g. that dense-output times
lie in the integrated interval -- stays with that function).  The C binding
checks its own arguments again (it is callable without this package); the
rules here are at least as strict, so its messages are reached only through
``symplectic._core`` directly.

Numbers: a real number is an int or float (a NumPy scalar, a 0-d real array),
never a bool or a string.

Matrices: one symmetry rule for every symmetric matrix the user gives -- the
constant mass matrix of :class:`System`, M and K of :func:`systems.linear` and
of :mod:`symplectic.linear` -- and the same rule the C binding applies to the
matrices a ``mass(q)`` callable returns: ``A`` is symmetric when
``|A_ij - A_ji| <= SYMMETRY_RTOL * max_kl |A_kl|`` for all i, j (relative to
the largest entry, so that rounding in an off-diagonal entry far smaller than
the diagonal is not mistaken for asymmetry).  Positive definiteness is
Cholesky's verdict.

The mass matrix of a state: M(q) at the initial q of every run is an input
like q itself, checked before the run (:func:`start_mass`: the C core's
Cholesky, and on refusal :func:`definiteness` to tell "not positive
definite" from "singular" whatever the scale of each coordinate, which the
SymPy front end also uses at its test point).
"""
import dataclasses
import inspect
import math
import numbers
import operator
import os
import types

import numpy as np

from .. import _engine
from . import _registry

#: The symmetry tolerance relative to the largest entry (module docstring):
#: the C core's SYM_SYMMETRY_RTOL, whose sym_symmetric is the one rule (the
#: built-in linear system and mass(q) callables are judged by it in C).
SYMMETRY_RTOL = _engine.SYMMETRY_RTOL


# ---------------------------------------------------------------- numbers
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


# ---------------------------------------------------------------- what to run
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


# newton= -> the core's sym_newton_mode
NEWTON_MODES = {"full": 0, "chord": 1, "step": 2, "decoupled": 3, "auto": 4}


def newton(rtol=None, max_iter=None, newton="auto", predictor=True, branch_check="auto"):
    """Newton's options as the core's keywords, those that differ from its
    defaults: rtol > 0, max_iter >= 1, newton "full", "chord", "step",
    "decoupled" or "auto" (-> chord = 1 .. 4), predictor (a truth value), branch_check "auto",
    "always", "never" or "off" (-> branch = 1, 2, 3)."""
    opts = {}
    check = choice("branch_check", branch_check, ("auto", "always", "never", "off"))
    if check != "auto":
        opts["branch"] = {"always": 1, "never": 2, "off": 3}[check]   # sym_branch_mode
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


# ---------------------------------------------------------------- states
def _as_floats(name, x, what):
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
    a = _as_floats(name, x, f"a sequence of {n} real numbers")
    if n == 1 and a.ndim == 0:
        a = a.reshape(1)
    if a.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},) for this system, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains non-finite values: {a.tolist()}")
    return a


def states(name, x, n):
    """The states of an ensemble: (K, n) finite floats, or one (n,) row -> (1, n)."""
    a = _as_floats(name, x, f"an array of shape (K, {n}) or ({n},) of real numbers")
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


def initial_momentum(system, q, p, qdot, pname="p", vname="qdot", qname="q"):
    """The canonical momentum of an initial state: ``p`` as given, or
    p = M(q) qdot from the velocities (exactly one of the two), once M(q) has
    passed :func:`start_mass` (the initial coordinates named ``qname``; an M
    evaluated there serves for p too)."""
    value, name, velocities = momentum_or_velocity(p, qdot, pname, vname)
    value = state(name, value, system.n)
    M = start_mass(system, q, qname)
    if not velocities:
        return value
    return (system.mass(q) if M is None else M) @ value


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


# ---------------------------------------------------------------- matrices
def square(name, A, n=None):
    """A finite square float matrix (a scalar is 1 x 1); of shape (n, n) if n is given."""
    A = np.array(A, dtype=float)
    if n is None and A.ndim == 0:
        A = A.reshape(1, 1)
    if n is not None and A.shape != (n, n):
        raise ValueError(f"{name} must have shape ({n}, {n}), got {A.shape}")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains non-finite values")
    return A


def symmetric(name, A):
    """A (finite, square) is symmetric by the one rule of this module."""
    bad = _engine.asymmetry(A)
    if bad is not None:
        i, j = bad
        raise ValueError(f"{name} must be symmetric (to {SYMMETRY_RTOL:g} of its largest "
                         f"entry): [{i}, {j}] = {float(A[i, j])!r} but [{j}, {i}] = "
                         f"{float(A[j, i])!r}")
    return A


def positive_definite(name, A):
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise ValueError(f"{name} must be positive definite") from None
    return A


def constant_mass(M, n):
    """The constant mass matrix of a System: (n, n), finite, symmetric, positive definite."""
    name = "the constant mass matrix"
    M = square(name, M, n)
    return positive_definite(name, symmetric(name, M))


def stiffness_pair(M, K):
    """M (symmetric positive definite) and K (symmetric) of a quadratic
    Lagrangian, square of one shape; returned symmetrised."""
    M = square("M", M)
    K = np.array(K, dtype=float)
    if K.ndim == 0:
        K = K.reshape(1, 1)
    if K.shape != M.shape:
        raise ValueError(f"K must have the shape of M {M.shape}, got {K.shape}")
    K = square("K", K)
    symmetric("M", M)
    symmetric("K", K)
    positive_definite("M", M)
    return 0.5 * (M + M.T), 0.5 * (K + K.T)


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


# ---------------------------------------------------------------- the mass matrix of a state
#: The threshold of :func:`definiteness`: an eigenvalue of the unit-diagonal
#: scaled matrix at most this fraction of its largest in magnitude is zero.
DEFINITE_RTOL = 1e-12


def definiteness(M):
    """Whether a finite square matrix M (its symmetric part) is positive
    definite, not positive definite or singular, whatever the scale of each
    coordinate: judged on the congruent matrix D^-1/2 M D^-1/2 of unit
    diagonal (D = diag M), whose eigenvalues have the signs of M's (Sylvester)
    and, for a positive definite M, lie in (0, n]: the smallest is zero when
    it is within ``DEFINITE_RTOL`` of the largest in magnitude.  So a
    regular M whose rows differ in scale by orders of magnitude (a 1e-12 kg
    tip mass on a 1 kg link) is positive definite, and a rank-deficient one
    is singular.  Without that scaling -- a diagonal entry <= 0, or an
    off-diagonal one so far beyond its diagonal entries that the scaled
    matrix overflows -- M is not positive definite, or singular when it has
    a zero row.

    Returns (verdict, w, v): ``"positive definite"``, ``"not positive
    definite"`` or ``"singular"``; the eigenvalues of M's symmetric part,
    ascending; and the velocity direction (largest component 1) of the
    smallest kinetic energy, negative or zero for a matrix that is not
    positive definite."""
    S = 0.5 * (M + M.T)
    d = S.diagonal()
    if (d > 0).all():
        r = 1.0 / np.sqrt(d)
        with np.errstate(over="ignore", invalid="ignore"):
            scaled = S * r[:, None] * r
        if np.isfinite(scaled).all():
            ws, Us = np.linalg.eigh(scaled)
            tol = DEFINITE_RTOL * max(-ws[0], ws[-1])
            verdict = ("positive definite" if ws[0] > tol else
                       "not positive definite" if ws[0] < -tol else "singular")
            return verdict, np.linalg.eigvalsh(S), _unit(r * Us[:, 0])
    w, U = np.linalg.eigh(S)
    i = int(np.argmin(d))
    if d[i] == 0 and not S[i].any():
        return "singular", w, np.eye(len(d))[i]                 # a zero row
    return "not positive definite", w, _unit(U[:, 0])


def _unit(v):
    """v scaled to largest component 1."""
    return v / v[np.argmax(np.abs(v))]


def start_mass(system, q, qname="q0", member=None):
    """M(q) at the initial coordinates q of a run (a step, an integration, an
    ensemble member, a tangent map), checked before the run: symmetric (by
    the rule of this module, for the forms whose M the binding takes as
    given: combined, vectorized, compiled callbacks -- it checks a ``mass``
    callable's itself, and SymPy and built-in systems are symmetric by
    construction) and positive definite: for those three forms by NumPy's
    Cholesky of the M evaluated for the symmetry (one call of the callback),
    for the others by the C core's own, through ``System.energy(q, 0)`` (one
    evaluation of M and V: about 0.5 us in C, 3 us with Python callables).
    Refused, the input is the error, not the run: ValueError naming
    ``qname`` and its values (``member``: the ensemble member), what is
    wrong (not symmetric, not finite, not positive definite or singular,
    with the eigenvalues: :func:`definiteness`) and where M comes from (the
    callback; the parameters of a SymPy or built-in system).  An exception
    from evaluating M (a callback's, the ZXZ top's coordinate singularity)
    is left to the run, which reports it with its step, as before.  Returns
    M when it was evaluated here (for p = M qdot), else None."""
    forms = getattr(system, "_callables", None) or {}
    if getattr(system, "_params", None) is None and \
            any(k in forms for k in ("combined", "vectorized", "cfunc")):
        try:
            M = system.mass(q)                          # the one call of the callback
        except Exception:
            return None
        if not np.all(np.isfinite(M)):
            return _mass_refusal(system, q, qname, member, M)
        symmetric(_mass_at(system, q, qname, member), M)
        try:
            np.linalg.cholesky(M)
            return M
        except np.linalg.LinAlgError:
            return _mass_refusal(system, q, qname, member, M)
    try:
        system.energy(q, np.zeros(system.n))           # the core's Cholesky of M(q)
    except Exception:
        return _mass_refusal(system, q, qname, member, None)
    return None


def _mass_refusal(system, q, qname, member, M):
    """Raise the ValueError of an M(q) that Cholesky refused (None when M
    cannot be evaluated or the refusal was not M's: the run reports those)."""
    if M is None:
        try:
            M = system.mass(q)
        except Exception:
            return None
    where = _mass_at(system, q, qname, member)
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{where} has non-finite entries: {M.tolist()}")
    try:
        np.linalg.cholesky(M)
        return M                               # energy failed for another reason (V)
    except np.linalg.LinAlgError:
        pass
    verdict, w, v = definiteness(M)
    vec = "[" + ", ".join(f"{x:.4g}" for x in v) + "]"
    if verdict == "not positive definite":
        why = f"the kinetic energy 1/2 qdot^T M qdot is negative for qdot = {vec}"
    else:
        verdict = "singular"                   # (positive definite only to rounding)
        why = (f"the velocity qdot = {vec} carries no kinetic energy, so p does not determine "
               f"qdot (a coordinate singularity? start away from it)")
    raise ValueError(f"{where} is {verdict} (smallest eigenvalue {w[0]:.6g}, largest "
                     f"{w[-1]:.6g}): {why}; a run needs M({qname}) symmetric positive definite")


def _mass_at(system, q, qname, member):
    """'the mass matrix at q0 = [...] (from <its source>)', the subject of
    :func:`start_mass`'s messages."""
    who = "" if member is None else f"ensemble member {member}: "
    return f"{who}the mass matrix at {qname} = {np.asarray(q).tolist()} (from " \
           f"{_mass_source(system)})"


def value_text(v):
    """A parameter value as a message or a System's repr writes it: an array
    to 6 digits (summarised beyond 8 entries), a float to 10 digits."""
    if isinstance(v, np.ndarray):
        return np.array2string(v, precision=6, separator=", ", threshold=8)
    if isinstance(v, float):
        return f"{v:.10g}"
    return repr(v)


def _mass_source(system):
    """Where a system's M comes from, for a message: the parameter values of a
    built-in or SymPy system, else the user's callback."""
    params = getattr(system, "_params", None)
    if params is not None:
        what = (f"the built-in {system.builtin}" if system.builtin is not None
                else "the SymPy model")
        values = ", ".join(f"{k}={value_text(v)}" for k, v in params.items())
        return f"{what} with parameters {values}" if values else what
    c = getattr(system, "_callables", None) or {}
    for key, label in (("mass", "the mass callback"), ("combined", "the combined callback"),
                       ("vectorized", "the vectorized callback")):
        if callable(c.get(key)):
            f = c[key]
            return f"{label} {getattr(f, '__name__', None) or type(f).__name__}"
    return "the compiled callback's M" if "cfunc" in c else "the system's M(q)"


# ---------------------------------------------------------------- forces
def nonnegative(name, x):
    """A finite real number >= 0 as a float."""
    v = real(name, x)
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {x!r}")
    return v


def damping_matrix(name, D, n=None):
    """A damping matrix: a scalar c (c I; needs n), n values (a diagonal) or
    an (n, n) matrix, finite and real, as an (n, n) float array."""
    a = _as_floats(name, D, "a scalar, n values or an (n, n) matrix of real numbers")
    if a.ndim == 0:
        if n is None:
            raise TypeError(f"{name}: a scalar damping needs n (the number of coordinates)")
        a = float(a) * np.eye(n)
    elif a.ndim == 1:
        a = np.diag(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or (n is not None and a.shape[0] != n):
        want = f"({n}, {n})" if n is not None else "(n, n)"
        raise ValueError(f"{name} must be a scalar, n values or a matrix of shape {want}, "
                         f"got shape {np.shape(D)}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} contains non-finite values")
    return np.ascontiguousarray(a)


def force_array(name, F, rows, n, what="n_steps", points=False):
    """A held force: (rows, n) finite floats (rows, n None: any), or with
    ``points`` also (rows, P, n), a value at each of a step's P force points;
    the error names the first step (row) with a non-finite value."""
    a = _as_floats(name, F, "an array of real numbers of shape (n_steps, n)")
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


# ---------------------------------------------------------------- the run spec
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
    tangent: bool = False       # propagate d(q, p)/d(q0, p0) with the steps (sym_run.tangent)

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
     "branch_check": "auto"})


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


# ---------------------------------------------------------------- time spans, output, events
def flag(name, x):
    """A truth value given as a bool (True/False, a NumPy bool)."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {x!r}")
    return bool(x)


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
    a = _as_floats("t_eval", times, "a 1-d array of real numbers")
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
