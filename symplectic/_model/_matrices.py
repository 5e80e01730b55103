"""The checks of matrices and of the mass matrix of a state.

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
import numpy as np

from .. import _engine
from ._validate import as_floats, value_text


#: The symmetry tolerance relative to the largest entry (module docstring):
#: the C core's SYM_SYMMETRY_RTOL, whose sym_symmetric is the one rule (the
#: built-in linear system and mass(q) callables are judged by it in C).
SYMMETRY_RTOL = _engine.SYMMETRY_RTOL


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


def damping_matrix(name, D, n=None):
    """A damping matrix: a scalar c (c I; needs n), n values (a diagonal) or
    an (n, n) matrix, finite and real, as an (n, n) float array."""
    a = as_floats(name, D, "a scalar, n values or an (n, n) matrix of real numbers")
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
