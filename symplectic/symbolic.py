"""Systems from SymPy: a Lagrangian (or M and V) in, a fast System out.

Write the Lagrangian L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q) with SymPy;
:func:`system` (also :meth:`symplectic.System.from_sympy`) reads off M and V,
differentiates them symbolically -- M, A(q, g) = d(M g)/dq,
H(q, g) = d^2(1/2 g^T M g)/dq^2, V, grad V, hess V, exactly the quantities the
C core asks for -- removes common subexpressions, and returns a
:class:`SymbolicSystem` that evaluates them either

* as compiled C (``compile=True``, or ``"auto"`` when a C compiler exists):
  the generated source is compiled once into a shared library cached on disk
  (``$SYMPLECTIC_CACHE``, default ``~/.cache/symplectic``) and called from the
  core with no Python in the loop (the GIL is released); or
* with NumPy (``compile=False``, or ``"auto"`` without a compiler): one
  vectorised call per Newton iteration.

Parameters stay symbols in the generated code and their values are passed at
run time, so systems that differ only in parameter values share one compiled
module (:meth:`SymbolicSystem.with_params`).

Helpers build the energies from positions: :func:`kinetic_from_positions`
(point masses and rigid bodies), :func:`gravity_potential`,
:func:`angular_velocity`, :func:`rotation`.

Example (a pendulum on a cart)::

    import sympy as sy
    import symplectic as sp
    from symplectic import symbolic

    x, th, xd, thd = sy.symbols("x theta xdot thetadot")
    M, m, l, g = sy.symbols("M m l g", positive=True)
    cart, bob = (M, [x, 0]), (m, [x + l * sy.sin(th), -l * sy.cos(th)])
    T = symbolic.kinetic_from_positions([x, th], [xd, thd], [cart, bob])
    V = symbolic.gravity_potential([cart, bob], g)
    sys = sp.System.from_sympy(T - V, [x, th], [xd, thd],
                               params={M: 1.0, m: 0.3, l: 0.5, g: 9.81})
"""
try:
    import sympy as _sy
except ImportError as _exc:                       # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "symplectic.symbolic needs SymPy, which is not installed; install it with\n"
        "    pip install sympy\n"
        "or together with symplectic:  pip install 'symplectic-vi[sympy]'") from _exc

import ctypes
import hashlib
import math
import threading
import warnings

import numpy as np
from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from . import _ccache
from ._ccache import CompilerError
from ._system import System

__all__ = ["system", "SymbolicSystem", "kinetic_from_positions", "gravity_potential",
           "angular_velocity", "rotation", "RigidBody", "CompileWarning", "CompilerError"]

#: Version of the code generator; part of every generated source (and so of
#: the cache key).
CODEGEN_VERSION = 1


class CompileWarning(RuntimeWarning):
    """``compile="auto"`` could not compile and fell back to NumPy."""


# ====================================================================== helpers
def rotation(axis, angle):
    """Active rotation matrix (3 x 3) by ``angle`` about the axis ``"x"``, ``"y"`` or ``"z"``.

    ``rotation("z", a) @ [1, 0, 0] = [cos a, sin a, 0]``.  Products compose
    body-fixed rotations left to right: ZXZ Euler angles are
    ``rotation("z", phi) * rotation("x", theta) * rotation("z", psi)``.
    """
    c, s = _sy.cos(angle), _sy.sin(angle)
    if axis == "x":
        return _sy.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return _sy.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    if axis == "z":
        return _sy.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    raise ValueError(f'axis must be "x", "y" or "z", got {axis!r}')


def angular_velocity(R, q, qdot, frame="body", simplify=True):
    """Angular velocity (3 x 1 Matrix) of the rotation ``R(q)`` (body -> space).

    ``frame="body"``: Omega with hat(Omega) = R^T Rdot (components in the
    body frame, the one in which a body's inertia tensor is constant);
    ``frame="space"``: omega with hat(omega) = Rdot R^T.
    Rdot = sum_k dR/dq_k qdot_k.  With ``simplify`` (default) the coefficient
    of each qdot_k is passed through ``sympy.trigsimp``, which turns the
    products of rotation matrices into the familiar short forms.
    """
    R = _sy.Matrix(R)
    if R.shape != (3, 3):
        raise ValueError(f"R must be a 3 x 3 rotation matrix, got shape {R.shape}")
    q, qdot = _as_list(q, "q"), _as_list(qdot, "qdot")
    if len(q) != len(qdot):
        raise ValueError(f"q and qdot must have the same length, got {len(q)} and {len(qdot)}")
    if frame not in ("body", "space"):
        raise ValueError(f'frame must be "body" or "space", got {frame!r}')
    cols = []
    for qk in q:
        dR = R.diff(qk)
        W = R.T * dR if frame == "body" else dR * R.T
        col = [W[2, 1], W[0, 2], W[1, 0]]
        if simplify:
            col = [_sy.trigsimp(_sy.expand(c)) for c in col]
        cols.append(col)
    return _sy.Matrix([sum((cols[k][a] * qdot[k] for k in range(len(q))), _sy.S.Zero)
                       for a in range(3)])


class RigidBody:
    """A rigid body for :func:`kinetic_from_positions` and :func:`gravity_potential`.

    mass
        m (a number or a SymPy expression, typically a parameter symbol).
    position
        Position of the centre of mass in space, a 2- or 3-vector of
        expressions in q.
    inertia
        Inertia tensor about the centre of mass in body axes: a 3 x 3 matrix,
        a 3-sequence (principal moments) or a scalar (planar motion: the
        moment about the axis normal to the plane).
    rotation
        Orientation R(q) (body -> space, 3 x 3), from which the body-frame
        angular velocity is computed with :func:`angular_velocity`; or
    angular_velocity
        the body-frame angular velocity given directly (a 3-vector linear in
        qdot; for planar motion with a scalar inertia, the rate of the body's
        angle, a scalar).
    """

    def __init__(self, mass, position, inertia, rotation=None, angular_velocity=None):
        if (rotation is None) == (angular_velocity is None):
            raise ValueError("give exactly one of rotation= and angular_velocity=")
        self.mass = _sy.sympify(mass)
        self.position = _sy.Matrix(list(position))
        self.inertia = inertia
        self.rotation = None if rotation is None else _sy.Matrix(rotation)
        self.omega = angular_velocity

    def __repr__(self):
        return (f"RigidBody(mass={self.mass}, position={list(self.position)}, "
                f"inertia={self.inertia})")


def _body_parts(body, what="bodies"):
    if isinstance(body, RigidBody):
        return body.mass, body.position, body
    try:
        m, r = body
    except (TypeError, ValueError):
        raise TypeError(f"each entry of {what} must be a pair (mass, position) or a RigidBody, "
                        f"got {body!r}") from None
    return _sy.sympify(m), _sy.Matrix(list(r) if not isinstance(r, _sy.MatrixBase) else r), None


def _inertia_matrix(I):
    if isinstance(I, (_sy.MatrixBase, list, tuple)):
        Im = _sy.Matrix(I)
        if Im.shape == (3, 3):
            return Im
        if len(Im) == 3:
            return _sy.diag(*list(Im))
    raise ValueError(f"the inertia of a 3-D rigid body must be a 3 x 3 matrix or 3 principal "
                     f"moments, got {I!r}")


def kinetic_from_positions(q, qdot, bodies, simplify=False):
    """Kinetic energy of point masses and rigid bodies given by their positions.

    ``bodies`` is a sequence of pairs ``(m, r)`` -- a point mass m at
    position r(q) (2- or 3-vector) -- and :class:`RigidBody` instances.
    Returns T = sum 1/2 m |rdot|^2 + sum 1/2 Omega^T I Omega, with
    rdot = (dr/dq) qdot and Omega the body-frame angular velocity.
    ``simplify=True`` passes T through ``sympy.trigsimp`` (slow for large
    systems; :func:`system` can simplify M entry by entry instead).
    """
    q, qdot = _as_list(q, "q"), _as_list(qdot, "qdot")
    if len(q) != len(qdot):
        raise ValueError(f"q and qdot must have the same length, got {len(q)} and {len(qdot)}")
    qd = _sy.Matrix(qdot)
    T = _sy.S.Zero
    for body in bodies:
        m, r, rb = _body_parts(body)
        v = r.jacobian(q) * qd
        T += m * (v.T * v)[0, 0] / 2
        if rb is not None:
            if rb.omega is not None:
                Om = rb.omega
            else:
                Om = angular_velocity(rb.rotation, q, qdot, "body")
            if isinstance(Om, (_sy.MatrixBase, list, tuple)):
                Om = _sy.Matrix(list(Om))
                if Om.shape != (3, 1):
                    raise ValueError("a rigid body's angular velocity must have 3 components")
                T += (Om.T * _inertia_matrix(rb.inertia) * Om)[0, 0] / 2
            else:                                    # planar: scalar rate and moment
                if isinstance(rb.inertia, (_sy.MatrixBase, list, tuple)):
                    raise ValueError("a planar rigid body (scalar angular velocity) needs a scalar "
                                     "moment of inertia")
                T += _sy.sympify(rb.inertia) * _sy.sympify(Om) ** 2 / 2
    return _sy.expand(T) if not simplify else _sy.trigsimp(_sy.expand(T))


def gravity_potential(bodies, g, up=None):
    """V = sum m g (r . up) for point masses ``(m, r)`` and :class:`RigidBody` items.

    ``up`` is the upward unit vector; default: the last axis (y for 2-vectors,
    z for 3-vectors).
    """
    V = _sy.S.Zero
    for body in bodies:
        m, r, _ = _body_parts(body)
        if up is None:
            h = r[len(r) - 1]
        else:
            u = list(up)
            if len(u) != len(r):
                raise ValueError(f"up has {len(u)} components, the position {len(r)}")
            h = sum((ri * ui for ri, ui in zip(r, u)), _sy.S.Zero)
        V += m * g * h
    return V


# ====================================================================== inputs
def _as_list(seq, what):
    if isinstance(seq, _sy.MatrixBase):
        return list(seq)
    if isinstance(seq, _sy.Basic):
        return [seq]
    try:
        return [_sy.sympify(s) for s in seq]
    except TypeError:
        raise TypeError(f"{what} must be a sequence of SymPy symbols") from None


def _coordinates(q, qdot, has_velocities):
    """Plain Symbols for q (and qdot); SymPy functions of time q(t) with
    qdot = q'(t) are accepted and replaced.  Returns (qs, qds, replacements)."""
    q = _as_list(q, "q")
    if not q:
        raise ValueError("q must hold at least one coordinate")
    applied = [isinstance(x, _sy.core.function.AppliedUndef) for x in q]
    if any(applied) and not all(applied):
        raise TypeError("q must be all Symbols or all functions of time, not a mixture")
    repl = {}
    if all(applied):
        ts = {x.args for x in q}
        if len(ts) != 1 or len(next(iter(ts))) != 1:
            raise ValueError("functions of time in q must all depend on the same single variable")
        t = next(iter(ts))[0]
        if qdot is None and has_velocities:
            qdot = [x.diff(t) for x in q]
        qs = [_sy.Symbol(f"{x.func.__name__}") for x in q]
        if has_velocities:
            qdot = _as_list(qdot, "qdot")
            qds = [_sy.Symbol(f"{x.func.__name__}_dot") for x in q]
            for d, s in zip(qdot, qds):
                repl[d] = s
        else:
            qds = []
        for x, s in zip(q, qs):
            repl[x] = s
    else:
        for x in q:
            if not isinstance(x, _sy.Symbol):
                raise TypeError(f"coordinates must be SymPy Symbols (or functions of time), got {x!r}")
        qs = q
        if has_velocities:
            if qdot is None:
                raise ValueError("qdot (the velocity symbols) is required with a Lagrangian")
            qds = _as_list(qdot, "qdot")
            for x in qds:
                if not isinstance(x, _sy.Symbol):
                    raise TypeError(f"velocities must be SymPy Symbols, got {x!r}")
        else:
            qds = []
    if has_velocities and len(qds) != len(qs):
        raise ValueError(f"q and qdot must have the same length, got {len(qs)} and {len(qds)}")
    allsyms = list(qs) + list(qds)
    if len(set(allsyms)) != len(allsyms):
        raise ValueError("the coordinates and velocities must be distinct symbols")
    return qs, qds, repl


def _replace(expr, repl):
    """Replace derivatives before the functions they differentiate (functions
    of time q(t) -> plain symbols)."""
    if not repl:
        return expr
    taken = {s.name for s in expr.free_symbols} & {s.name for s in repl.values()}
    if taken:
        raise ValueError(f"the names {sorted(taken)} stand for the coordinates/velocities q(t), "
                         f"q'(t) and are already used by other symbols: rename those")
    ders = {k: v for k, v in repl.items() if isinstance(k, _sy.Derivative)}
    funcs = {k: v for k, v in repl.items() if not isinstance(k, _sy.Derivative)}
    out = expr.xreplace(ders).xreplace(funcs) if ders else expr.xreplace(funcs)
    t = next(iter(funcs)).args[0]
    if t in out.free_symbols or out.atoms(_sy.Derivative):
        raise ValueError(f"after replacing q(t) and q'(t), the expression still depends on {t} "
                         f"(explicitly time-dependent or higher derivatives): only autonomous "
                         f"Lagrangians L(q, qdot) are supported")
    return out


def _parameters(params, exprs, known):
    """{Symbol: float} for the parameters that appear in ``exprs``; every other
    free symbol must be a coordinate or velocity."""
    free = set()
    for e in exprs:
        free |= e.free_symbols
    free -= set(known)
    by_name = {}
    for s in free:
        by_name.setdefault(s.name, []).append(s)
    values = {}
    for k, v in (params or {}).items():
        if isinstance(k, str):
            syms = by_name.get(k, [])
            if len(syms) > 1:
                raise ValueError(f"parameter name {k!r} is ambiguous (symbols with different "
                                 f"assumptions); pass the Symbol itself")
            if not syms:
                continue
            s = syms[0]
        elif isinstance(k, _sy.Symbol):
            s = k
            if s not in free:
                continue
        else:
            raise TypeError(f"parameter keys must be SymPy Symbols or their names, got {k!r}")
        try:
            val = float(v)
        except (TypeError, ValueError):
            raise TypeError(f"parameter {s} must have a real numeric value, got {v!r}") from None
        if not math.isfinite(val):
            raise ValueError(f"parameter {s} must be finite, got {v!r}")
        values[s] = val
    missing = sorted((s for s in free if s not in values), key=lambda s: s.name)
    if missing:
        names = ", ".join(s.name for s in missing)
        raise ValueError(f"the expressions contain symbols that are neither coordinates, velocities "
                         f"nor parameters with values: {names} (give their values in params=)")
    order = sorted(values, key=lambda s: (s.name, _sy.srepr(s)))
    return {s: values[s] for s in order}


# ====================================================================== numbers
def _num(expr, values):
    """Evaluate a SymPy expression at numeric symbol values (float)."""
    e = _sy.sympify(expr).xreplace({s: _sy.Float(v) for s, v in values.items()})
    z = complex(e.evalf())
    if abs(z.imag) > 1e-12 * max(1.0, abs(z.real)):
        raise ValueError(f"{expr} is not real at the test point (value {z})")
    return z.real


def _num_matrix(M, values):
    return np.array([[_num(M[i, j], values) for j in range(M.shape[1])] for i in range(M.shape[0])])


def _random_points(n, seed, count):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.2, 1.3, n) * rng.choice([-1.0, 1.0], n) for _ in range(count)]


# ====================================================================== checks
def _split_lagrangian(L, qs, qds, pvals, test_q):
    """M = d^2 L/dqdot^2, V = -L(qdot = 0); ValueError unless L = 1/2 qdot^T M qdot - V."""
    n = len(qs)
    zero = {s: _sy.S.Zero for s in qds}
    pts = [test_q] + _random_points(n, 7, 2)
    rng = np.random.default_rng(11)
    vels = [rng.uniform(-0.5, 0.5, n) for _ in pts]

    def at(k):
        d = dict(pvals)
        d.update(zip(qs, pts[k]))
        d.update(zip(qds, vels[k]))
        return d

    M = _sy.hessian(L, qds)
    # 1. the Hessian in qdot must not depend on qdot (L quadratic)
    for i in range(n):
        for j in range(i, n):
            e = M[i, j]
            dep = [v for v in qds if v in e.free_symbols]
            if not dep:
                continue
            for k in range(len(pts)):
                vals = at(k)
                scale = max(1.0, abs(_num(e, vals)))
                for v in dep:
                    if abs(_num(e.diff(v), vals)) > 1e-9 * scale:
                        raise ValueError(
                            f"the Lagrangian is not of the form 1/2 qdot^T M(q) qdot - V(q): it is not "
                            f"quadratic in the velocities (d^2L/d{qds[i]} d{qds[j]} = {e} depends on "
                            f"{v})")
            M[i, j] = M[j, i] = e.xreplace(zero)
    # 2. no terms linear in qdot (b(q) . qdot, e.g. magnetic or gyroscopic terms)
    b = [L.diff(v).xreplace(zero) for v in qds]
    V = -L.xreplace(zero)
    for k in range(len(pts)):
        vals = at(k)
        scale = max(1.0, np.max(np.abs(_num_matrix(M, vals))), abs(_num(V, vals)))
        for i, e in enumerate(b):
            if e != 0 and abs(_num(e, vals)) > 1e-9 * scale:
                raise ValueError(
                    f"the Lagrangian is not of the form 1/2 qdot^T M(q) qdot - V(q): it has terms "
                    f"linear in the velocities (dL/d{qds[i]} at qdot = 0 is {e}, not 0); "
                    f"gyroscopic or magnetic terms b(q) . qdot are not supported")
    # 3. the decomposition reproduces L (catches anything the above missed)
    qd = _sy.Matrix(qds)
    rest = L - ((qd.T * M * qd)[0, 0] / 2 - V)
    for k in range(len(pts)):
        vals = at(k)
        scale = max(1.0, abs(_num(L, vals)))
        if abs(_num(rest, vals)) > 1e-9 * scale:
            raise ValueError("the Lagrangian is not of the form 1/2 qdot^T M(q) qdot - V(q) "
                             "(L differs from its quadratic part in the velocities)")
    return M, V


def _check_mass(M, qs, pvals, test_q, names):
    """Symmetric, not singular, positive definite (symbolically where cheap, and at test points)."""
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

    def eig(q):
        vals = dict(pvals)
        vals.update(zip(qs, q))
        Mn = _num_matrix(M, vals)
        w, U = np.linalg.eigh(0.5 * (Mn + Mn.T))
        return Mn, w, U

    def fmt(v):
        return "[" + ", ".join(f"{x:.6g}" for x in v) + "]"

    Mn, w, U = eig(test_q)
    if not np.all(np.isfinite(Mn)):
        raise ValueError(f"the mass matrix is not finite at the test point q = {fmt(test_q)}")
    big = max(np.max(np.abs(w)), 1e-300)
    if w[0] > 1e-12 * big:
        return
    v = U[:, 0]
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
    if w[0] < -1e-12 * big:
        raise ValueError(
            f"the mass matrix is not positive definite at the test point q = {fmt(test_q)} "
            f"(smallest eigenvalue {w[0]:.6g}): the kinetic energy is negative for the velocity "
            f"direction {combo}")
    # singular here: everywhere?
    others = [eig(p)[1] for p in _random_points(n, 5, 2)]
    everywhere = all(o[0] <= 1e-12 * max(np.max(np.abs(o)), 1e-300) for o in others)
    if everywhere and n <= 3:
        det = _sy.simplify(_sy.trigsimp(M.det(method="berkowitz")))
        if det == 0:
            raise ValueError(
                f"the mass matrix is singular for every q: det M(q) simplifies to 0; the velocity "
                f"combination {combo} carries no kinetic energy (at q = {fmt(test_q)})")
    where = ("at the test point and at two random points, so probably for every q"
             if everywhere else "at the test point")
    raise ValueError(
        f"the mass matrix is singular {where} (q = {fmt(test_q)}, eigenvalues {fmt(w)}): the "
        f"velocity combination {combo} carries no kinetic energy.  If M is singular only at "
        f"special configurations, pass another test_point=")


# ====================================================================== derivation
class _Model:
    """M and V in internal symbols (q_i, p_i) and everything derived from them."""

    def __init__(self, M, V, qs, params, names, title):
        n = len(qs)
        self.n = n
        self.names = names
        self.title = title
        self.param_symbols = list(params)
        self.qi = [_sy.Symbol(f"q_{i}") for i in range(n)]
        self.gi = [_sy.Symbol(f"g_{i}") for i in range(n)]
        self.pi = [_sy.Symbol(f"p_{k}") for k in range(len(params))]
        sub = dict(zip(qs, self.qi))
        sub.update(zip(params, self.pi))
        # one simultaneous replacement: user symbols whose names clash with the
        # internal ones are replaced correctly
        self.M = M.xreplace(sub)
        self.V = _sy.sympify(V).xreplace(sub)
        q = self.qi
        self.dM = [self.M.diff(qk) for qk in q]                                  # [k][i, j]
        self.d2M = {(k, l): self.dM[k].diff(q[l]) for k in range(n) for l in range(k, n)}
        self.dV = [self.V.diff(qk) for qk in q]
        self.d2V = {(k, l): self.dV[k].diff(q[l]) for k in range(n) for l in range(k, n)}
        g = self.gi
        self.A = _sy.Matrix(n, n, lambda i, c: sum((self.dM[c][i, j] * g[j] for j in range(n)),
                                                 _sy.S.Zero))
        self.H = {}
        for (a, b), T in self.d2M.items():
            s = sum((T[i, i] * g[i] ** 2 / 2 for i in range(n)), _sy.S.Zero)
            s += sum((T[i, j] * g[i] * g[j] for i in range(n) for j in range(i + 1, n)), _sy.S.Zero)
            self.H[(a, b)] = s
        self._source = None
        self._numpy = None
        self._consts = None
        self._const_fn = None
        self._libs = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------ constants
    def _hoist(self):
        """Pull every maximal parameter-only subexpression out into constants
        c_j computed once per parameter set (constant folding for symbolic
        parameters).  Returns (outputs with constants, [(c_j, definition)])."""
        if self._consts is not None:
            return self._consts
        P = set(self.pi)
        table = {}

        def const(e):
            if e not in table:
                table[e] = _sy.Symbol(f"c_{len(table)}")
            return table[e]

        memo = {}

        def hoist(e):
            if e.is_Atom:
                return e
            if e in memo:
                return memo[e]
            fs = e.free_symbols
            if not fs:
                r = e
            elif fs <= P:
                r = const(e)
            elif isinstance(e, (_sy.Add, _sy.Mul)):
                cargs = [a for a in e.args if a.free_symbols <= P]
                rest = [hoist(a) for a in e.args if not a.free_symbols <= P]
                if cargs:
                    cpart = e.func(*cargs)
                    if cpart.free_symbols and not cpart.is_Symbol:
                        cargs = [const(cpart)]
                    else:
                        cargs = [cpart]
                r = e.func(*(cargs + rest))
            else:
                r = e.func(*[hoist(a) for a in e.args])
            memo[e] = r
            return r

        n = self.n
        out = {
            "M": [[hoist(self.M[i, j]) for j in range(n)] for i in range(n)],
            "A": [[hoist(self.A[i, c]) for c in range(n)] for i in range(n)],
            "H": {k: hoist(v) for k, v in self.H.items()},
            "V": hoist(self.V),
            "dV": [hoist(e) for e in self.dV],
            "d2V": {k: hoist(v) for k, v in self.d2V.items()},
            "dM": [[[hoist(self.dM[k][i, j]) for j in range(n)] for i in range(n)] for k in range(n)],
            "d2M": {k: [[hoist(T[i, j]) for j in range(n)] for i in range(n)]
                    for k, T in self.d2M.items()},
        }
        consts = [(s, e) for e, s in table.items()]
        self._consts = (out, consts)
        return self._consts

    def data(self, pvalues):
        """The run-time data vector: parameter values, then the constants."""
        _, consts = self._hoist()
        p = [float(v) for v in pvalues]
        if not consts:
            return np.array(p, dtype=float)
        if self._const_fn is None:
            self._const_fn = _sy.lambdify(self.pi, [e for _, e in consts], modules="math",
                                          cse=True, printer=_MathPrinter)
        try:
            vals = [complex(v) for v in self._const_fn(*p)]
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            raise ValueError(f"the parameter values {dict(zip(self.param_symbols, p))} make an "
                             f"expression of the parameters undefined ({exc})") from None
        bad = [str(consts[i][1].xreplace(dict(zip(self.pi, self.param_symbols))))
               for i, v in enumerate(vals) if v.imag != 0 or not math.isfinite(v.real)]
        if bad:
            raise ValueError(f"with these parameter values, expressions of the parameters are not "
                             f"finite real numbers: {', '.join(bad)}")
        return np.array(p + [v.real for v in vals], dtype=float)

    # ------------------------------------------------------------ C source
    def source(self):
        if self._source is None:
            self._source = _c_source(self)
        return self._source

    def library(self, cache_dir):
        """(ctypes library, path) of the compiled module, loaded once per process."""
        src = self.source()
        cmd = tuple(_ccache.compiler_command())          # CompilerError when there is none
        with self._lock:
            key = (str(_ccache.cache_dir(cache_dir)), cmd)
            hit = self._libs.get(key)
            if hit is not None:
                return hit
            expected = src.split("symplectic_module_id(void) { return \"", 1)[1][:64]

            def check(lib):
                f = lib.symplectic_module_id
                f.restype = ctypes.c_char_p
                f.argtypes = []
                got = f().decode("ascii")
                if got != expected:
                    raise ValueError(f"module id {got} != {expected}")

            lib, path = _ccache.load(src, cache_dir, check)
            self._libs[key] = (lib, path)
            return lib, path

    # ------------------------------------------------------------ NumPy
    def numpy_function(self):
        if self._numpy is None:
            self._numpy = _numpy_function(self)
        return self._numpy


# ---------------------------------------------------------------------- C printer
class _CPrinter(C99CodePrinter):
    """C99 with exact double literals (also for pi, e, sqrt(2), ...: the M_PI
    family of macros is not part of strict C99) and products for small
    integer powers."""

    def __init__(self, settings=None):
        super().__init__(dict(settings or {}, math_macros={}))

    def _print_NumberSymbol(self, expr):
        return repr(float(expr))

    _print_Pi = _print_Exp1 = _print_GoldenRatio = _print_EulerGamma = _print_Catalan = \
        _print_NumberSymbol

    def _print_Float(self, expr):
        if expr._prec <= 53:
            return repr(float(expr))
        return super()._print_Float(expr)

    def _print_Pow(self, expr):
        b, e = expr.args
        if e.is_Integer and 2 <= abs(int(e)) <= 4:
            base = self.parenthesize(b, 100)          # always parenthesise non-atoms
            prod = "*".join([base] * abs(int(e)))
            return f"({prod})" if int(e) > 0 else f"(1.0/({prod}))"
        return super()._print_Pow(expr)


class _MathPrinter(PythonCodePrinter):
    def _print_Float(self, expr):
        if expr._prec <= 53:
            return repr(float(expr))
        return super()._print_Float(expr)


class _NumPyPrinter(NumPyPrinter):
    def _print_Float(self, expr):
        if expr._prec <= 53:
            return repr(float(expr))
        return super()._print_Float(expr)


_BITS = {"M": 1, "A": 2, "H": 4, "V": 8, "dV": 16, "d2V": 32}


def _c_source(model):
    """The flat eval callback (sym_flat_eval_fn of symplectic.h) as C source."""
    n = model.n
    out, consts = model._hoist()
    # outputs: (bit, C target(s), expression); symmetric matrices once per pair
    items = []
    for i in range(n):
        for j in range(i, n):
            tg = [f"M[{i * n + j}]"] + ([f"M[{j * n + i}]"] if i != j else [])
            items.append(("M", tg, out["M"][i][j]))
    for i in range(n):
        for c in range(n):
            items.append(("A", [f"A[{i * n + c}]"], out["A"][i][c]))
    for (a, b), e in sorted(out["H"].items()):
        items.append(("H", [f"H[{a * n + b}]"] + ([f"H[{b * n + a}]"] if a != b else []), e))
    items.append(("V", ["V[0]"], out["V"]))
    for k in range(n):
        items.append(("dV", [f"dV[{k}]"], out["dV"][k]))
    for (a, b), e in sorted(out["d2V"].items()):
        items.append(("d2V", [f"d2V[{a * n + b}]"] + ([f"d2V[{b * n + a}]"] if a != b else []), e))

    exprs = [e for _, _, e in items]
    temps, reduced = _sy.cse(exprs, symbols=_sy.numbered_symbols("t_"), order="canonical")
    # mask of every temporary: the outputs that use it, directly or through
    # later temporaries (walked backwards)
    tnames = {s: k for k, (s, _) in enumerate(temps)}
    masks = [0] * len(temps)
    for (bit, _, _), e in zip(items, reduced):
        for s in e.free_symbols:
            if s in tnames:
                masks[tnames[s]] |= _BITS[bit]
    for k in range(len(temps) - 1, -1, -1):
        for s in temps[k][1].free_symbols:
            if s in tnames:
                masks[tnames[s]] |= masks[k]
    # a dependency's mask contains its user's mask, so sorting by decreasing
    # popcount (stable) keeps every temporary after its dependencies
    order = sorted(range(len(temps)), key=lambda k: (-bin(masks[k]).count("1"), masks[k], k))

    pr = _CPrinter()
    np_ = len(model.pi)
    lines = []
    w = lines.append
    w("/* Generated by symplectic.symbolic (code generator version "
      f"{CODEGEN_VERSION}); do not edit.")
    w(f" * {model.title}")
    w(f" * n = {n}; coordinates: {', '.join(model.names)}")
    w(f" * run-time data (user_data): {np_} parameters "
      f"({', '.join(s.name for s in model.param_symbols) or 'none'}), then {len(consts)} constants")
    w(" * Contract: sym_flat_eval_fn of symplectic.h. */")
    w("#include <math.h>")
    w("")
    w("#if defined(_WIN32)")
    w("#define SYMPLECTIC_EXPORT __declspec(dllexport)")
    w("#else")
    w("#define SYMPLECTIC_EXPORT __attribute__((visibility(\"default\")))")
    w("#endif")
    w("")
    w('SYMPLECTIC_EXPORT const char *symplectic_module_id(void) { return "@ID@"; }')
    w(f"SYMPLECTIC_EXPORT int symplectic_module_n(void) {{ return {n}; }}")
    w(f"SYMPLECTIC_EXPORT int symplectic_module_ndata(void) {{ return {np_ + len(consts)}; }}")
    w("")
    w("SYMPLECTIC_EXPORT int symplectic_eval(const double *q, const double *g, unsigned need,")
    w("                                      double *M, double *A, double *H, double *V,")
    w("                                      double *dV, double *d2V, void *user_data)")
    w("{")
    w("    const double *data = (const double *)user_data;")
    w("    (void)data; (void)g; (void)M; (void)A; (void)H; (void)V; (void)dV; (void)d2V;")
    used = set()
    for e in list(reduced) + [e for _, e in temps]:
        used |= e.free_symbols
    for i in range(n):
        if model.qi[i] in used:
            w(f"    const double q_{i} = q[{i}];")
    for k in range(np_):
        if model.pi[k] in used:
            w(f"    const double p_{k} = data[{k}];")
    for j, (c, _) in enumerate(consts):
        if c in used:
            w(f"    const double c_{j} = data[{np_ + j}];")
    for i in range(n):
        if model.gi[i] in used:         # g is NULL unless A or H is asked for
            w(f"    const double g_{i} = (need & 6u) ? g[{i}] : 0.0;")
    if temps:
        # initialised so that no path reads an indeterminate value (the masks
        # guarantee it; this keeps compilers' flow analysis quiet too)
        w("    double " + ", ".join(f"{s} = 0.0" for s, _ in temps) + ";")
    cur = None
    for k in order:
        if masks[k] != cur:
            if cur is not None:
                w("    }")
            cur = masks[k]
            w(f"    if (need & {cur}u) {{")
        s, e = temps[k]
        w(f"        {s} = {pr.doprint(e)};")
    if cur is not None:
        w("    }")
    blocks = {}
    for (bit, tg, _), e in zip(items, reduced):
        blocks.setdefault(bit, []).append((tg, e))
    for bit in ("M", "A", "H", "V", "dV", "d2V"):
        w(f"    if (need & {_BITS[bit]}u) {{")
        for tg, e in blocks[bit]:
            w(f"        {' = '.join(tg)} = {pr.doprint(e)};")
        w("    }")
    w("    return 0;")
    w("}")
    src = "\n".join(lines) + "\n"
    digest = hashlib.sha256(src.encode("utf-8")).hexdigest()
    return src.replace("@ID@", digest)


# ---------------------------------------------------------------------- NumPy
def _numpy_function(model):
    """A vectorised func(Q) -> dict for System.vectorized, and its data layout."""
    n = model.n
    out, consts = model._hoist()
    sizes = {"mass": n * n, "mass_grad": n ** 3, "mass_hess": n ** 4, "potential": 1,
             "potential_grad": n, "potential_hess": n * n}
    offs, o = {}, 0
    for key in sizes:
        offs[key] = o
        o += sizes[key]
    total = o
    exprs, src, dst = [], [], []

    def add(e, key, flats):
        if e == 0:
            return
        exprs.append(e)
        for f in flats:
            src.append(len(exprs) - 1)
            dst.append(offs[key] + f)

    for i in range(n):
        for j in range(i, n):
            add(out["M"][i][j], "mass", {i * n + j, j * n + i})
    for k in range(n):
        for i in range(n):
            for j in range(i, n):
                add(out["dM"][k][i][j], "mass_grad", {(k * n + i) * n + j, (k * n + j) * n + i})
    for (k, l), T in sorted(out["d2M"].items()):
        for i in range(n):
            for j in range(i, n):
                flats = {((a * n + b) * n + c) * n + d for a, b in ((k, l), (l, k))
                         for c, d in ((i, j), (j, i))}
                add(T[i][j], "mass_hess", flats)
    add(out["V"], "potential", {0})
    for k in range(n):
        add(out["dV"][k], "potential_grad", {k})
    for (k, l), e in sorted(out["d2V"].items()):
        add(e, "potential_hess", {k * n + l, l * n + k})
    args = list(model.qi) + list(model.pi) + [s for s, _ in consts]
    f = _sy.lambdify(args, exprs, modules="numpy", cse=True, printer=_NumPyPrinter) if exprs else None
    src = np.array(src, dtype=np.intp)
    dst = np.array(dst, dtype=np.intp)
    nexpr = len(exprs)
    shapes = {"mass": (n, n), "mass_grad": (n, n, n), "mass_hess": (n, n, n, n), "potential": (),
              "potential_grad": (n,), "potential_hess": (n, n)}

    def make(data):
        data = [float(x) for x in data]

        def func(Q):
            Q = np.asarray(Q, dtype=float)
            k = Q.shape[0]
            flat = np.zeros((k, total))
            if f is not None:
                vals = f(*[Q[:, i] for i in range(n)], *data)
                buf = np.empty((nexpr, k))
                for i, v in enumerate(vals):
                    buf[i] = v
                flat[:, dst] = buf[src].T
            return {key: flat[:, offs[key]:offs[key] + sizes[key]].reshape((k,) + shapes[key])
                    for key in sizes}

        return func

    return make


# ====================================================================== the System
_MODELS = {}
_MODELS_LOCK = threading.Lock()
_MAX_MODELS = 64


class SymbolicSystem(System):
    """A :class:`symplectic.System` built from SymPy expressions by :func:`system`.

    Extra attributes: ``backend`` (``"c"`` or ``"numpy"``), ``library`` (path
    of the compiled module, or None), ``c_source`` (the generated C),
    ``coordinates`` and ``velocities`` (the symbols), ``parameters``
    ({Symbol: value}), ``mass_matrix`` and ``potential_energy`` (SymPy, in the
    user's symbols); ``with_params`` makes a copy with other parameter values
    (no new compilation).
    """

    @property
    def c_source(self):
        """The generated C source of the flat eval callback."""
        return self._model.source()

    def with_params(self, params=None, **by_name):
        """The same system with some parameter values changed (by Symbol or by name)."""
        new = dict(self.parameters)
        names = {s.name: s for s in new}
        for k, v in list((params or {}).items()) + list(by_name.items()):
            s = names.get(k) if isinstance(k, str) else k
            if s not in new:
                raise ValueError(f"{k} is not a parameter of this system "
                                 f"(parameters: {', '.join(names)})")
            new[s] = v
        return _make(self._spec, new, self._options)

    def __reduce__(self):
        return (_rebuild_symbolic, (self._spec, self.parameters, self._options))

    def __repr__(self):
        label = f" {self._name!r}" if self._name else ""
        how = "compiled C" if self.backend == "c" else "NumPy"
        return f"<symplectic.System{label} n={self.n}, from SymPy ({how})>"


def _rebuild_symbolic(spec, params, options):
    return _make(spec, params, options)


def system(expr, q, qdot=None, params=None, *, compile="auto", simplify=False, name=None,
           test_point=None, cache_dir=None):
    """A :class:`SymbolicSystem` from a SymPy Lagrangian or from (M, V).

    Parameters
    ----------
    expr
        The Lagrangian L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q) (a SymPy
        expression), or a pair ``(M, V)``: the mass matrix (n x n, any
        matrix-like of expressions in q) and the potential.
    q, qdot
        The coordinates and velocities as SymPy Symbols (qdot only with a
        Lagrangian).  Functions of time ``q_i(t)`` (e.g. from
        ``sympy.physics.mechanics.dynamicsymbols``) are accepted too, with
        qdot defaulting to their time derivatives.
    params
        ``{Symbol or name: value}`` for every other symbol in the expressions.
        The values are used at run time; they are not compiled in.
    compile
        ``"auto"`` (default): compiled C when a C compiler works, else NumPy
        with a :class:`CompileWarning`.  ``True``: compiled C or
        :class:`CompilerError`.  ``False``: NumPy.
    simplify
        ``True`` passes every entry of M and V through ``sympy.trigsimp``
        before differentiating (helps with M from positions or rotation
        matrices; can be slow for large systems); a callable is applied to
        each entry instead.
    name
        Label for ``repr``.
    test_point
        Configuration at which M is checked numerically (default: a fixed
        generic point); change it when M is singular only at special points.
    cache_dir
        Directory of compiled modules (default ``$SYMPLECTIC_CACHE``, else
        ``~/.cache/symplectic``).

    Raises
    ------
    ValueError
        When L is not of the form 1/2 qdot^T M qdot - V (terms linear in
        qdot, or not quadratic), when M is not symmetric, is singular
        (identically, or at the test point) or is not positive definite, or
        when a symbol has no value.
    """
    if compile not in ("auto", True, False):
        raise ValueError(f'compile must be "auto", True or False, got {compile!r}')
    spec = _spec(expr, q, qdot, params, simplify, test_point)
    options = dict(compile=compile, name=name, cache_dir=cache_dir)
    return _make(spec, spec["params"], options)


def _spec(expr, q, qdot, params, simplify, test_point):
    """Validated, normalised input: M, V in plain symbols, ordered parameters."""
    if isinstance(expr, (tuple, list)) and len(expr) == 2:
        kind = "mass_potential"
        if qdot is not None:
            raise ValueError("qdot is only used with a Lagrangian, not with (M, V)")
        qs, qds, repl = _coordinates(q, None, False)
        M = _sy.Matrix(expr[0]).applyfunc(lambda e: _replace(_sy.sympify(e), repl))
        V = _replace(_sy.sympify(expr[1]), repl)
        n = len(qs)
        if M.shape != (n, n):
            raise ValueError(f"M must be {n} x {n} for {n} coordinates, got {M.shape[0]} x {M.shape[1]}")
        if isinstance(V, _sy.MatrixBase):
            raise TypeError("V must be a scalar expression")
        L = None
        pvals = _parameters(params, list(M) + [V], qs)
    else:
        kind = "lagrangian"
        L = _sy.sympify(expr)
        if isinstance(L, _sy.MatrixBase):
            if L.shape != (1, 1):
                raise TypeError(f"the Lagrangian must be a scalar expression, got a {L.shape} matrix")
            L = L[0, 0]
        qs, qds, repl = _coordinates(q, qdot, True)
        L = _replace(L, repl)
        pvals = _parameters(params, [L], qs + qds)
        n = len(qs)
    if test_point is None:
        test_q = _random_points(n, 20240601, 1)[0]
    else:
        test_q = np.asarray(test_point, dtype=float)
        if test_q.shape != (n,):
            raise ValueError(f"test_point must have shape ({n},), got {test_q.shape}")
    if kind == "lagrangian":
        M, V = _split_lagrangian(L, qs, qds, pvals, test_q)
    else:
        for e in list(M) + [V]:
            if not e.free_symbols <= set(qs) | set(pvals):       # pragma: no cover - _parameters checks
                raise ValueError(f"{e} contains unknown symbols")
    if simplify:
        fn = _sy.trigsimp if simplify is True else simplify
        if not callable(fn):
            raise TypeError("simplify must be True, False or a callable")
        M = M.applyfunc(fn)
        V = fn(V)
    names = [s.name for s in qs]
    _check_mass(M, qs, pvals, test_q, names)
    title = ("Lagrangian " if kind == "lagrangian" else "M(q), V(q) ") + \
        f"in {', '.join(names)}"
    return dict(kind=kind, M=M, V=V, q=tuple(qs), qdot=tuple(qds), params=pvals,
                param_order=tuple(pvals), names=tuple(names), title=title)


def _model_for(spec):
    key = (spec["M"].as_immutable(), spec["V"], spec["q"], spec["param_order"])
    with _MODELS_LOCK:
        m = _MODELS.get(key)
        if m is None:
            if len(_MODELS) >= _MAX_MODELS:
                _MODELS.pop(next(iter(_MODELS)))
            m = _Model(spec["M"], spec["V"], list(spec["q"]), list(spec["param_order"]),
                       list(spec["names"]), spec["title"])
            _MODELS[key] = m
        return m


def _make(spec, params, options):
    model = _model_for(spec)
    order = spec["param_order"]
    values = []
    for s in order:
        try:
            v = float(params[s])
        except KeyError:
            raise ValueError(f"no value for parameter {s}") from None
        if not math.isfinite(v):
            raise ValueError(f"parameter {s} must be finite, got {v!r}")
        values.append(v)
    data = model.data(values)
    compile_ = options["compile"]
    name = options["name"]
    n = model.n
    obj = None
    if compile_ is not False:
        try:
            lib, path = model.library(options["cache_dir"])
        except (CompilerError, OSError) as exc:         # OSError: e.g. an unwritable cache
            if compile_ is True:
                raise
            warnings.warn(f"symplectic.symbolic: cannot compile ({exc}); using the NumPy "
                          f"evaluation instead (slower).  Install a C compiler or set $CC, or "
                          f"pass compile=False to silence this warning.", CompileWarning,
                          stacklevel=3)
        else:
            arr = (ctypes.c_double * max(1, len(data)))(*data)
            fn = lib.symplectic_eval
            obj = SymbolicSystem.from_cfunc(n, fn, ctypes.addressof(arr),
                                            keepalive=(lib, arr, model), name=name)
            obj.backend = "c"
            obj.library = str(path)
    if obj is None:
        obj = SymbolicSystem.vectorized(n, model.numpy_function()(data), name=name)
        obj.backend = "numpy"
        obj.library = None
    obj._model = model
    obj._spec = spec
    obj._options = dict(options)
    obj.parameters = dict(zip(order, values))
    obj._params = {s.name: v for s, v in zip(order, values)}
    obj.coordinates = spec["q"]
    obj.velocities = spec["qdot"] or None
    obj.mass_matrix = spec["M"]
    obj.potential_energy = spec["V"]
    return obj
