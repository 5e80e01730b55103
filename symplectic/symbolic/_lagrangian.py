"""L (or M and V) in, a checked specification out.

Reads the mass matrix M = d^2 L/dqdot^2 and the potential V = -L(qdot = 0)
off a Lagrangian, refuses Lagrangians that are not 1/2 qdot^T M(q) qdot - V(q)
(not quadratic in qdot, terms linear in qdot), and checks that M is
symmetric and positive definite -- symbolically where cheap, numerically at
a test point and at fixed pseudo-random points, by
:func:`symplectic._model._matrices.definiteness` (an ill-conditioned but regular M
passes; a singular one does not, whatever the scale of its rows).
"""
import numpy as np
import sympy as _sy

from .._model._matrices import definiteness
from ._inputs import coordinates, parameters, replace


def spec(expr, q, qdot, params, simplify, test_point):
    """Validated, normalised input: M, V in plain symbols, ordered parameters."""
    if isinstance(expr, (tuple, list)) and len(expr) == 2:
        kind = "mass_potential"
        M, V, qs, qds, pvals = _read_pair(expr, q, qdot, params)
    else:
        kind = "lagrangian"
        L, qs, qds, pvals = _read_lagrangian(expr, q, qdot, params)
    n = len(qs)
    test_q = _test_point(test_point, n)
    if kind == "lagrangian":
        M, V = split_lagrangian(L, qs, qds, pvals, test_q)
    else:
        for e in list(M) + [V]:
            if not e.free_symbols <= set(qs) | set(pvals):       # pragma: no cover - parameters() checks
                raise ValueError(f"{e} contains unknown symbols")
    if simplify:
        fn = _sy.trigsimp if simplify is True else simplify
        if not callable(fn):
            raise TypeError("simplify must be True, False or a callable")
        M = M.applyfunc(fn)
        V = fn(V)
    names = [s.name for s in qs]
    check_mass(M, qs, pvals, test_q, names)
    title = ("Lagrangian " if kind == "lagrangian" else "M(q), V(q) ") + \
        f"in {', '.join(names)}"
    return dict(kind=kind, M=M, V=V, q=tuple(qs), qdot=tuple(qds), params=pvals,
                param_order=tuple(pvals), names=tuple(names), title=title,
                test_q=tuple(float(x) for x in test_q))


def _read_pair(expr, q, qdot, params):
    if qdot is not None:
        raise ValueError("qdot is only used with a Lagrangian, not with (M, V)")
    qs, qds, repl = coordinates(q, None, False)
    M = _sy.Matrix(expr[0]).applyfunc(lambda e: replace(_sy.sympify(e), repl))
    V = replace(_sy.sympify(expr[1]), repl)
    n = len(qs)
    if M.shape != (n, n):
        raise ValueError(f"M must be {n} x {n} for {n} coordinates, got {M.shape[0]} x {M.shape[1]}")
    if isinstance(V, _sy.MatrixBase):
        raise TypeError("V must be a scalar expression")
    return M, V, qs, qds, parameters(params, list(M) + [V], qs)


def _read_lagrangian(expr, q, qdot, params):
    L = _sy.sympify(expr)
    if isinstance(L, _sy.MatrixBase):
        if L.shape != (1, 1):
            raise TypeError(f"the Lagrangian must be a scalar expression, got a {L.shape} matrix")
        L = L[0, 0]
    qs, qds, repl = coordinates(q, qdot, True)
    L = replace(L, repl)
    return L, qs, qds, parameters(params, [L], qs + qds)


def _test_point(test_point, n):
    if test_point is None:
        return random_points(n, 20240601, 1)[0]
    test_q = np.asarray(test_point, dtype=float)
    if test_q.shape != (n,):
        raise ValueError(f"test_point must have shape ({n},), got {test_q.shape}")
    return test_q


# ---------------------------------------------------------------------- numbers
def num(expr, values):
    """Evaluate a SymPy expression at numeric symbol values (float)."""
    e = _sy.sympify(expr).xreplace({s: _sy.Float(v) for s, v in values.items()})
    z = complex(e.evalf())
    if abs(z.imag) > 1e-12 * max(1.0, abs(z.real)):
        raise ValueError(f"{expr} is not real at the test point (value {z})")
    return z.real


def num_matrix(M, values):
    return np.array([[num(M[i, j], values) for j in range(M.shape[1])] for i in range(M.shape[0])])


def random_points(n, seed, count):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.2, 1.3, n) * rng.choice([-1.0, 1.0], n) for _ in range(count)]


# ---------------------------------------------------------------------- checks
_NOT_OF_FORM = "the Lagrangian is not of the form 1/2 qdot^T M(q) qdot - V(q)"


def split_lagrangian(L, qs, qds, pvals, test_q):
    """M = d^2 L/dqdot^2, V = -L(qdot = 0); ValueError unless L = 1/2 qdot^T M qdot - V."""
    n = len(qs)
    zero = {s: _sy.S.Zero for s in qds}
    pts = [test_q] + random_points(n, 7, 2)
    rng = np.random.default_rng(11)
    vels = [rng.uniform(-0.5, 0.5, n) for _ in pts]

    def at(k):
        d = dict(pvals)
        d.update(zip(qs, pts[k]))
        d.update(zip(qds, vels[k]))
        return d

    samples = [at(k) for k in range(len(pts))]
    M = _sy.hessian(L, qds)
    # 1. the Hessian in qdot must not depend on qdot (L quadratic)
    for i in range(n):
        for j in range(i, n):
            _check_quadratic(M[i, j], qds, samples, f"d^2L/d{qds[i]} d{qds[j]}")
            M[i, j] = M[j, i] = M[i, j].xreplace(zero)
    # 2. no terms linear in qdot (b(q) . qdot, e.g. magnetic or gyroscopic terms)
    b = [L.diff(v).xreplace(zero) for v in qds]
    V = -L.xreplace(zero)
    for vals in samples:
        scale = max(1.0, np.max(np.abs(num_matrix(M, vals))), abs(num(V, vals)))
        for i, e in enumerate(b):
            if e != 0 and abs(num(e, vals)) > 1e-9 * scale:
                raise ValueError(
                    f"{_NOT_OF_FORM}: it has terms linear in the velocities (dL/d{qds[i]} at "
                    f"qdot = 0 is {e}, not 0); gyroscopic or magnetic terms b(q) . qdot are not "
                    f"supported")
    # 3. the decomposition reproduces L (catches anything the above missed)
    qd = _sy.Matrix(qds)
    rest = L - ((qd.T * M * qd)[0, 0] / 2 - V)
    for vals in samples:
        scale = max(1.0, abs(num(L, vals)))
        if abs(num(rest, vals)) > 1e-9 * scale:
            raise ValueError(f"{_NOT_OF_FORM} (L differs from its quadratic part in the velocities)")
    return M, V


def _check_quadratic(e, qds, samples, label):
    """ValueError when the entry ``e`` of d^2L/dqdot^2 depends on a velocity."""
    dep = [v for v in qds if v in e.free_symbols]
    for vals in samples if dep else []:
        scale = max(1.0, abs(num(e, vals)))
        for v in dep:
            if abs(num(e.diff(v), vals)) > 1e-9 * scale:
                raise ValueError(f"{_NOT_OF_FORM}: it is not quadratic in the velocities "
                                 f"({label} = {e} depends on {v})")


def check_mass(M, qs, pvals, test_q, names):
    """Symmetric, not singular, positive definite (symbolically where cheap,
    and at the test point: :func:`check_mass_at`)."""
    n = len(qs)
    for i in range(n):
        for j in range(i + 1, n):
            d = M[i, j] - M[j, i]
            if d != 0 and _sy.simplify(d) != 0:
                raise ValueError(f"the mass matrix is not symmetric: M[{i}, {j}] = {M[i, j]} but "
                                 f"M[{j}, {i}] = {M[j, i]}")
    for i in range(n):
        if all(M[i, j] == 0 for j in range(n)):
            raise ValueError(
                f"the mass matrix is singular for every q: row {i} of M is identically zero, i.e. "
                f"the velocity of {names[i]} does not enter the kinetic energy (a coordinate "
                f"without inertia cannot be integrated: eliminate it or give it a mass)")
    check_mass_at(M, qs, pvals, test_q, names, lambda q: _mass_values(M, qs, pvals, q))


def check_mass_at(M, qs, pvals, test_q, names, mass_at):
    """The parameter-dependent part of :func:`check_mass`: M at the test point
    (``mass_at(q)``, its values) finite and positive definite, judged by
    :func:`symplectic._model._matrices.definiteness` (independent of each
    coordinate's scale: an ill-conditioned but regular M passes).  The
    constructor evaluates M with SymPy; ``SymbolicSystem.with_params`` with
    the new system itself (the same messages)."""
    Mn = mass_at(test_q)
    finite = np.all(np.isfinite(Mn))
    verdict, w, v = definiteness(Mn) if finite else (None, None, None)
    if verdict == "positive definite":
        return
    at = f"q = {_fmt(test_q)}{_with_parameters(pvals)}"
    if not finite:
        raise ValueError(f"the mass matrix is not finite at the test point {at}")
    combo = _velocity_combination(v, names)
    if verdict == "not positive definite":
        raise ValueError(
            f"the mass matrix is not positive definite at the test point {at} (smallest "
            f"eigenvalue {w[0]:.6g}): the kinetic energy is negative for the velocity direction "
            f"{combo}")
    raise ValueError(_singular_message(M, at, w, combo, mass_at))


def _mass_values(M, qs, pvals, q):
    """M at q (numbers, by SymPy)."""
    vals = dict(pvals)
    vals.update(zip(qs, q))
    return num_matrix(M, vals)


def _with_parameters(pvals):
    """' with the parameters m=-0.3, l=1' ('' without parameters)."""
    if not pvals:
        return ""
    return " with the parameters " + ", ".join(f"{s}={float(v):.10g}" for s, v in pvals.items())


def _fmt(v):
    return "[" + ", ".join(f"{x:.6g}" for x in v) + "]"


def _velocity_combination(v, names):
    """The velocity direction ``v`` as text, e.g. ``x' - 2*y'`` (largest component 1)."""
    v = v / v[np.argmax(np.abs(v))]
    terms = []
    for c, nm in zip(v, names):
        if abs(c) <= 1e-12:
            continue
        mag = "" if abs(abs(c) - 1) < 1e-12 else f"{abs(c):.4g}*"
        terms.append(("- " if c < 0 else "+ ") + f"{mag}{nm}'")
    combo = " ".join(terms).lstrip("+ ")
    if combo.startswith("- "):
        combo = "-" + combo[2:]
    return combo


def _singular_message(M, at, w, combo, mass_at):
    """M is singular at the test point (``at``: its q and parameters): is it
    singular everywhere?"""
    n = M.shape[0]
    others = [mass_at(p) for p in random_points(n, 5, 2)]
    everywhere = all(not np.all(np.isfinite(o)) or definiteness(o)[0] != "positive definite"
                     for o in others)
    if everywhere and n <= 3:
        det = _sy.simplify(_sy.trigsimp(M.det(method="berkowitz")))
        if det == 0:
            return (f"the mass matrix is singular for every q: det M(q) simplifies to 0; the "
                    f"velocity combination {combo} carries no kinetic energy (at {at})")
    where = ("at the test point and at two random points, so probably for every q"
             if everywhere else "at the test point")
    return (f"the mass matrix is singular {where} ({at}, eigenvalues {_fmt(w)}): the velocity "
            f"combination {combo} carries no kinetic energy.  If M is singular only at special "
            f"configurations, pass another test_point=")
