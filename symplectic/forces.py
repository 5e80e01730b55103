"""Non-conservative forces: damping, driving, control inputs.

A generalized force F(t, q, qdot) (n components, doing the virtual work
F . delta q) enters every method through ``force=`` of
:func:`symplectic.integrate`, :func:`symplectic.step` and
:func:`symplectic.integrate_many`; the variational schemes evaluate it at
their own quadrature points (the discrete Lagrange-d'Alembert principle,
see the method page), RK4 at its stages.  ``force=`` takes

* a Python callable ``f(t, q, qdot) -> (n,)`` (with ``force_jac=`` an
  optional ``jac(t, q, qdot) -> (dF/dq, dF/dqdot)``, each (n, n));
* an array of shape (n_steps, n): row k is held constant over step k (a
  zero-order hold, what a sampled controller or an optimiser produces);
* an array of shape (n_steps, P, n): a value at each of the P points at
  which the method evaluates a force in step k (times t0 + (k + x_i) h,
  :func:`point_times`), so that a smooth input keeps the method's order (a
  value held over the step caps any method at order 1 when sampled at the
  step's start, at order 2 when sampled at its midpoint);
* a :class:`Force` built here: :func:`linear_damping` (F = -D qdot in C),
  :func:`from_cfunc` (a compiled callback, no Python in the loop),
  :func:`from_callable`, :func:`zero_order_hold`, :func:`at_points`, or a
  sum of these
  (``f1 + f2``).

A system may carry a force of its own (``System.force``): the built-in
systems' ``damping=`` (joint friction) and the forces of
:meth:`System.from_sympy` (``forces=``, ``dissipation=``, ``applied=``).
Every run includes it, added to the ``force=`` of the call.

Jacobians that a force does not supply are central differences of F (about
1e-10 relative, 4n extra evaluations per point); they only steer Newton's
iteration, whose root is that of the exact F.  Built-in damping and the
compiled SymPy forces supply theirs.

A callable force is checked before the run: one that cannot be called with
three positional arguments (t, q, qdot) -- e.g. ``f(q, qdot)`` -- is a
TypeError naming the expected signature (likewise ``force_jac``); a callable
without an inspectable signature (some builtins) is passed as it is.

Pickling (a Force to a process pool, or a Trajectory that holds one): linear
damping, held arrays, the C core's built-in terms and the forces of
:meth:`System.from_sympy` pickle (these are compiled again from their SymPy
expressions in the unpickling process, through the on-disk cache: the same
code); a Python callable pickles when pickle can pickle it (a module-level
function, not a lambda or a closure); :func:`from_cfunc` does not (a code
address means nothing in another process: build the Force there).
"""

import numpy as np

from . import _engine
from ._model import _matrices, _validate
from ._model._addresses import _address_of, _data_address

__all__ = ["Force", "linear_damping", "from_callable", "from_cfunc", "zero_order_hold",
           "at_points", "point_times",
           "builtin_terms"]

# need bits and flags of the C core (sym_force_api.h: sym_force_need, sym_force_flags)
NEED_F, NEED_DQ, NEED_DV = 1, 2, 4
NO_Q, NO_V = 1, 2


def _depends(depends_on):
    """The core's flags from ``depends_on`` ("qv", "q", "v" or "")."""
    if not isinstance(depends_on, str) or set(depends_on) - set("qv"):
        raise ValueError(f'depends_on must be a string of the letters "q" and "v" (e.g. "qv", '
                         f'"v", ""), got {depends_on!r}')
    return (0 if "q" in depends_on else NO_Q) | (0 if "v" in depends_on else NO_V)


class Force:
    """A generalized force F(t, q, qdot): the sum of a linear damping -D qdot,
    a held (zero-order-hold) array and up to four callback terms.

    Build one with the functions of this module; add them with ``+``.  The
    attributes describe the parts: ``damping`` ((n, n) or None), ``hold``
    ((rows, n), (rows, P, n) with a value at each force point, or None) and
    ``terms`` (a tuple of callback terms).
    """

    __slots__ = ("damping", "hold", "terms")

    def __init__(self, damping=None, hold=None, terms=()):
        self.damping = damping
        self.hold = hold
        self.terms = tuple(terms)

    @property
    def n(self):
        """The number of components when a part fixes it (None otherwise)."""
        if self.damping is not None:
            return self.damping.shape[0]
        if self.hold is not None:
            return self.hold.shape[-1]
        for t in self.terms:
            if t.n is not None:
                return t.n
        return None

    @property
    def python(self):
        """True when a Python callable runs in the loop (the GIL is held)."""
        return any(isinstance(t, _PythonTerm) for t in self.terms)

    def __add__(self, other):
        if other is None:
            return self
        if not isinstance(other, Force):
            return NotImplemented
        if self.n is not None and other.n is not None and self.n != other.n:
            raise ValueError(f"cannot add forces of {self.n} and {other.n} components")
        damping = _add(self.damping, other.damping)
        hold = self.hold
        if other.hold is not None:
            if hold is not None and hold.shape != other.hold.shape:
                raise ValueError(f"cannot add held forces of shapes {hold.shape} and "
                                 f"{other.hold.shape}")
            hold = other.hold if hold is None else hold + other.hold
        terms = self.terms + other.terms
        if len(terms) > _engine.FORCE_MAX_TERMS:
            raise ValueError(f"a force has at most {_engine.FORCE_MAX_TERMS} callback terms; "
                             f"combine Python callables into one")
        return Force(damping, hold, terms)

    __radd__ = __add__

    def spec(self, n):
        """The description the C binding reads (csrc/binding/py_forces.c)."""
        hold, points = self.hold, None
        if hold is not None and hold.ndim == 3:     # (rows, P, n): P values a step
            hold, points = hold.reshape(hold.shape[0], -1), hold.shape[1]
        return {"damping": self.damping, "hold": hold, "hold_points": points,
                "terms": [t.spec() for t in self.terms]}

    @property
    def hold_points(self):
        """Values of the held force a step: 1 (a zero-order hold), P (one
        at each force point), or 0 without a held part."""
        if self.hold is None:
            return 0
        return self.hold.shape[1] if self.hold.ndim == 3 else 1

    def __reduce__(self):
        return (Force, (self.damping, self.hold, self.terms))

    def __repr__(self):
        parts = []
        if self.damping is not None:
            parts.append(f"damping {self.damping.shape}")
        if self.hold is not None:
            parts.append(f"held {self.hold.shape}")
        parts += [repr(t) for t in self.terms]
        return f"<symplectic.forces.Force: {' + '.join(parts) or 'zero'}>"


def _add(a, b):
    if a is None:
        return b
    return a if b is None else a + b



class _PythonTerm:
    """f(t, q, qdot) in Python, with an optional jac(t, q, qdot).

    ``recipe``: None, or ``(function, args)`` such that ``function(*args)``
    builds an equivalent term in another process (the NumPy forces of
    :mod:`symplectic.symbolic`, whose callables are closures); pickling uses
    it.  Without one the term pickles by its callables, which pickle's own
    rules then govern (a lambda or a closure cannot be pickled)."""
    __slots__ = ("f", "jac", "flags", "n", "recipe")

    def __init__(self, f, jac, flags):
        self.f, self.jac, self.flags, self.n = f, jac, flags, None
        self.recipe = None

    def spec(self):
        return ("python", self.f, self.jac, self.flags)

    def __reduce__(self):
        if self.recipe is not None:
            return self.recipe
        return (_PythonTerm, (self.f, self.jac, self.flags))

    def __repr__(self):
        name = getattr(self.f, "__name__", type(self.f).__name__)
        return f"python {name}" + (" (with Jacobian)" if self.jac is not None else "")


class _CTerm:
    """A compiled sym_force_fn: its address, user data, Jacobians it fills.

    ``recipe`` as for :class:`_PythonTerm`: how to compile the same callback
    again in another process (set for the forces of
    :mod:`symplectic.symbolic`, rebuilt from their SymPy expressions).
    Without one -- :func:`from_cfunc` -- the term cannot be pickled: an
    address means nothing in another process."""
    __slots__ = ("address", "data", "provides", "flags", "keepalive", "n", "recipe")

    def __init__(self, address, data, provides, flags, keepalive, n):
        self.address, self.data, self.provides = address, data, provides
        self.flags, self.keepalive, self.n = flags, keepalive, n
        self.recipe = None

    def spec(self):
        return ("cfunc", self.address, self.data, self.provides, self.flags)

    def __reduce__(self):
        if self.recipe is not None:
            return self.recipe
        raise TypeError("a compiled force callback (symplectic.forces.from_cfunc) cannot be "
                        "pickled: its code address is process-local; build the Force again "
                        "in the worker process (forces from SymPy pickle: they are compiled "
                        "again from their expressions)")

    def __repr__(self):
        return f"compiled callback at {self.address:#x}"


class _BuiltinTerm:
    """A named force term of the C core (sym_forces.c)."""
    __slots__ = ("name", "params", "n")

    def __init__(self, name, params, n):
        self.name, self.params, self.n = name, np.asarray(params, dtype=float), n

    def spec(self):
        return ("builtin", self.name, self.params)

    def __reduce__(self):
        return (_BuiltinTerm, (self.name, self.params, self.n))

    def __repr__(self):
        return f"built-in {self.name}{tuple(self.params.tolist())}"


# ---------------------------------------------------------------- constructors
def linear_damping(D, n=None):
    """F = -D qdot, evaluated in C (no Python in the loop).

    ``D`` is a scalar (D = c I, then ``n`` is required), n values (a
    diagonal) or an (n, n) matrix.  A symmetric positive semi-definite D
    dissipates energy at the rate qdot^T D qdot; any real matrix is accepted
    (e.g. an antisymmetric gyroscopic term, which does no work).
    """
    return Force(damping=_matrices.damping_matrix("D", D, n))


def from_callable(f, jac=None, *, depends_on="qv"):
    """F = f(t, q, qdot) in Python (what ``force=f`` makes).

    ``f`` returns n real numbers; ``jac(t, q, qdot)``, if given, returns the
    pair (dF/dq, dF/dqdot) of (n, n) arrays ([c, d] = dF_c/dq_d), else
    Newton uses central differences of f.  ``depends_on`` says which of q
    ("q") and qdot ("v") F depends on (default "qv"; "" for F(t) alone):
    the Jacobians with respect to the others are taken as zero and never
    evaluated.  TypeError when ``f`` or ``jac`` has a signature that cannot
    take the three positional arguments (t, q, qdot).
    """
    _validate.function("force", f, "f(t, q, qdot) -> (n,)")
    _check_signature("force", f, "force(t, q, qdot) -> (n,)")
    if jac is not None:
        _validate.function("force_jac", jac, "jac(t, q, qdot) -> (dF/dq, dF/dqdot)")
        _check_signature("force_jac", jac, "force_jac(t, q, qdot) -> (dF/dq, dF/dqdot)")
    return Force(terms=[_PythonTerm(f, jac, _depends(depends_on))])


def _check_signature(name, f, expected):
    """TypeError, before any run, when ``f`` cannot be called with the three
    positional arguments (t, q, qdot) of ``expected`` (the check the
    system's callbacks have too: :func:`symplectic._model._validate.signature`)."""
    _validate.signature(name, f, expected, 3, "the time t (float), the coordinates q (n,) "
                        "and the velocities qdot (n,)")


def zero_order_hold(F):
    """A force held constant over each step: row k of ``F`` (n_steps, n)
    acts on step k (from t0 + k h to t0 + (k + 1) h), whatever t and the
    state (what ``force=F`` makes for an array)."""
    return Force(hold=_validate.force_array("force", F, None, None))


def at_points(U):
    """A force given by its values where the method evaluates a force:
    ``U[k, i]`` (an array (n_steps, P, n)) acts at the i-th of the P force
    points of step k, time t0 + (k + x_i) h (:func:`point_times`; P and x_i
    are the method's, ``symplectic.methods(details=True)[m]["force_points"]``),
    whatever the state.  Sampling a smooth input u(t) there keeps the
    method's order; a run with another method refuses it when P differs.
    The inputs of :mod:`symplectic.control` are such arrays."""
    a = _validate.force_array("force", U, None, None, points=True)
    if a.ndim != 3:
        raise ValueError(f"at_points: U must have shape (n_steps, P, n), got {a.shape}")
    return Force(hold=a)


def point_times(method, h, n_steps, t0=0.0):
    """The times (n_steps, P) at which ``method`` evaluates a force in each
    of ``n_steps`` steps of size ``h`` from ``t0``: t0 + (k + x_i) h, x_i the
    method's force points.  ``at_points(u(point_times(...)))``-style sampling
    gives a force that keeps the method's order::

        t = sp.forces.point_times("simpson", h, N)            # (N, 3)
        U = np.stack([u(tk) for tk in t.ravel()]).reshape(N, 3, n)
        sp.integrate(system, q0, p0, h, N, force=U)
    """
    m = _validate.method(method)
    n_steps = _validate.step_count(n_steps)
    k = np.arange(n_steps, dtype=float)[:, None]
    x = np.asarray(m.force_x, dtype=float)[None, :]
    return float(t0) + (k + x) * float(h)


def from_cfunc(func, user_data=None, *, n=None, jacobian=False, depends_on="qv",
               keepalive=None):
    """A compiled force callback: no Python in the loop, the GIL is released.

    ``func`` is the address of a C function (an int, a ctypes function
    pointer, a numba ``cfunc``, a ``scipy.LowLevelCallable``) with the
    signature::

        int force(double t, long k, const double *q, const double *qdot,
                  unsigned need, double *F, double *dFdq, double *dFdqdot,
                  void *user_data);

    It fills what ``need`` asks for (bits: F = 1, dF/dq = 2, dF/dqdot = 4;
    the others are NULL): F (n), dF/dq and dF/dqdot (n x n, row-major,
    [c][d] = dF_c/dq_d), and returns 0 (nonzero stops the run with an error
    naming the value, the step and its time; a non-finite output too).
    ``k`` is the index of the step and t the time of the evaluation point.
    ``jacobian=True`` says that it fills the Jacobians when asked (else they
    are central differences of F); ``depends_on`` as for
    :func:`from_callable`.  ``user_data`` as for
    :meth:`symplectic.System.from_cfunc` (None, an address, a C-contiguous
    NumPy array, a ctypes object; kept alive with the Force), and so is
    ``keepalive``.  ``n`` (optional) is checked against the system's.

    The callback must be thread-safe and must not call Python; a wrong
    address or signature crashes the interpreter.  Such a Force cannot be
    pickled (the address is process-local): build it in each process.
    """
    address = _address_of(func)
    data = _data_address(user_data)
    if n is not None:
        n = _validate.dof(n)
    provides = (NEED_DQ | NEED_DV) if bool(jacobian) else 0
    return Force(terms=[_CTerm(address, data, provides, _depends(depends_on),
                               (func, user_data, keepalive), n)])


def builtin_terms():
    """{name: description} of the force terms built into the C core (used
    by the built-in systems' ``damping=``)."""
    return {name: doc for name, doc, _n, _npar in _engine.force_builtins()}


def _builtin(name, params, n):
    """A named C force term (``lagrange_top(damping=c)`` uses "pivot_friction")."""
    return Force(terms=[_BuiltinTerm(name, params, n)])


# ---------------------------------------------------------------- force= of a run
def _resolve(system, f, jac, rows, method=None):
    """The input check of ``force=`` and ``force_jac=`` of a run on ``system`` with ``rows``
    steps (None: one step, where an (n,) array is one row too) by ``method``
    (a registry Method: a held force with a value at each force point must
    have its number of points), plus the system's own force: a
    symplectic.Force, or None when there is no force at all."""
    n = system.n
    if jac is not None and not callable(f):
        raise TypeError("force_jac is only used with a callable force f(t, q, qdot)")
    if f is None:
        out = None
    elif isinstance(f, Force):
        out = f
    elif callable(f):
        out = from_callable(f, jac)
    elif isinstance(f, (str, bytes, dict, set)) or isinstance(f, (bool, np.bool_)):
        raise TypeError(f"force must be a callable f(t, q, qdot), an array of shape (n_steps, "
                        f"n), a symplectic.Force or None, got {type(f).__name__}")
    else:
        a = f
        if rows is None and np.ndim(a) == 1:
            a = np.reshape(a, (1, -1))
        out = Force(hold=_validate.force_array("force", a, 1 if rows is None else rows, n,
                                               points=True))
    if out is not None:
        if out.n is not None and out.n != n:
            raise ValueError(f"force has {out.n} components but the system has n = {n}")
        if out.hold is not None:
            need = 1 if rows is None else rows
            if out.hold.shape[0] != need:
                raise ValueError(f"force: the held force array has {out.hold.shape[0]} rows but "
                                 f"the run has {need} steps (one row per step)")
            if method is not None and out.hold.ndim == 3 and \
                    out.hold.shape[1] != method.force_points:
                raise ValueError(f"force: the held force array has {out.hold.shape[1]} values a "
                                 f"step (shape {out.hold.shape}), but {method.name} evaluates a "
                                 f"force at {method.force_points} points a step (x = "
                                 f"{', '.join(f'{x:.6g}' for x in method.force_x)}; "
                                 f"symplectic.forces.point_times)")
    own = getattr(system, "force", None)
    if own is None:
        return out
    return own if out is None else own + out


def _resolve_members(members, f, jac, n_steps):
    """``force=`` of integrate_many for its K members (systems): one force for
    all (a callable, a Force, an (n_steps, n) array), an array of shape
    (K, n_steps, n) (one held force per member) or a sequence of K forces.
    Returns the K Forces (or Nones), each with its system's own."""
    K = len(members)
    per = None
    if isinstance(f, (list, tuple)) and not _is_numeric_sequence(f):
        if len(f) != K:
            raise ValueError(f"force: {len(f)} forces for {K} ensemble members")
        per = list(f)
    elif f is not None and not callable(f) and not isinstance(f, Force):
        a = _validate.as_floats("force", f, "an array of real numbers")
        if a.ndim == 3:
            if a.shape[0] != K:
                raise ValueError(f"force: a per-member held force array must have shape "
                                 f"(K = {K}, n_steps, n), got {a.shape}")
            per = list(a)
    if per is None:
        per = [f] * K
    out = []
    for k, (s, fk) in enumerate(zip(members, per)):
        try:
            out.append(_resolve(s, fk, jac, n_steps))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"ensemble member {k}: {exc}") from None
    return out


def _is_numeric_sequence(x):
    """True for nested sequences of numbers (an array), False for a list of
    callables or Force objects."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        return False
    return a.dtype.kind in "biuf"


# ---------------------------------------------------------------- memory
