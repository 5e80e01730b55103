"""Path constraints of a control problem: lower <= c(t, q, qdot, u) <= upper
at every force point of every step, on the step's own states there (the
points where the inputs live; sym_run.deriv.points)."""
import numpy as np

from .._model import _validate
from . import _sympy
from ._costs import Checked, check_at_point, check_flag, derivative_parts


class Path(Checked):
    """The path constraint lower <= c(t, q, qdot, u) <= upper, imposed at
    each of the scheme's force points t_k + x_i h with the step's own states
    there (the Galerkin polynomial's q_i and qdot_i) and the inputs u_ki.

    ``c(t, q, qdot, u)`` returns r values; ``jac(t, q, qdot, u)`` the triple
    (dc/dq, dc/dqdot, dc/du) of shapes (r, n), (r, n), (r, m), exact (the
    transcription's derivatives are exact with it; the constraints'
    curvature in the Hessian, which only steers the iterations, comes from
    differences of it).  ``lower``, ``upper``: scalars or arrays (r,), None
    or +-inf for no bound (default: c <= 0).  ``size``: r, when neither
    bound is an array (else c is evaluated at the start to learn it).  Or
    ``c`` SymPy expressions (one, a list or a Matrix) with ``symbols={"t":
    t, "q": [...], "qdot": [...], "u": [...]}`` ("t" optional) and
    ``params``: their Jacobians, dc/dt and Hessians are derived (the
    problem's exact Hessian takes them: :meth:`Problem.solve`).  ``check``
    (default True): compare ``jac`` with central differences of ``c`` (at
    fixed t) before the first solve (:meth:`_BoundPath.check`; not for
    SymPy expressions, whose Jacobians are derived)."""

    def __init__(self, c, jac=None, lower=None, upper=0.0, size=None, symbols=None,
                 params=None, check=True):
        self.derivative_check = check_flag("path", check) and not _sympy.is_expression(c)
        if _sympy.is_expression(c):
            if jac is not None:
                raise TypeError("path: with SymPy expressions the Jacobians are derived; give "
                                "symbols=, not jac")
            import sympy as sy
            c = list(c) if isinstance(c, (list, tuple, sy.MatrixBase)) else [c]
            size = len(c) if size is None else size
            c, jac = _sympy.functions(c, symbols, ("t", "q", "qdot", "u"), params, "path")
        elif symbols is not None or params is not None:
            raise TypeError("path: symbols= and params= go with SymPy expressions")
        if not callable(c) or not callable(jac):
            raise TypeError("path(c, jac): c(t, q, qdot, u) -> (r,) and jac(t, q, qdot, u) -> "
                            "(dc/dq, dc/dqdot, dc/du) must be callables")
        self.c, self.jac = c, jac
        self.lower, self.upper = lower, upper
        self.size = None if size is None else _validate.integer("path size", size, 1)

    def bind(self, n, m, probe):
        """The constraint for n coordinates and m inputs: a _BoundPath.
        ``probe`` = (t, q, qdot, u), where c is evaluated when its size is
        not given."""
        r = self.size
        for b in (self.lower, self.upper):
            if b is not None and np.ndim(b) == 1:
                r = len(b) if r is None else r
        if r is None:
            r = len(np.atleast_1d(np.asarray(self.c(*probe), dtype=float)))
        lo = np.broadcast_to(np.asarray(-np.inf if self.lower is None else self.lower,
                                        dtype=float), (r,)).copy()
        hi = np.broadcast_to(np.asarray(np.inf if self.upper is None else self.upper,
                                        dtype=float), (r,)).copy()
        if np.isnan(lo).any() or np.isnan(hi).any() or (lo > hi).any():
            raise ValueError(f"path: need lower <= upper (+-inf or None: no bound), got "
                             f"{self.lower!r}, {self.upper!r}")
        if not (np.isfinite(lo) | np.isfinite(hi)).all():
            raise ValueError("path: every component needs a finite lower or upper bound")
        return _BoundPath(self.c, self.jac, lo, hi, n, m, self)

    def __repr__(self):
        return f"path({getattr(self.c, '__name__', 'c')})"


def path(c, jac=None, lower=None, upper=0.0, size=None, *, symbols=None, params=None,
         check=True):
    """The path constraint lower <= c(t, q, qdot, u) <= upper at every force
    point (see :class:`Path`); ``Problem(..., path=[...])``.  ``check=False``:
    do not compare ``jac`` with central differences of ``c``."""
    return Path(c, jac, lower, upper, size, symbols, params, check)


class _BoundPath:
    """A path constraint with its size r and bounds (r,) checked."""

    def __init__(self, c, jac, lo, hi, n, m, source=None):
        self.c, self.jac, self.lo, self.hi = c, jac, lo, hi
        self.r, self.n, self.m, self.source = len(lo), n, m, source

    def check(self, t, q, qdot, u):
        """``jac`` against central differences of ``c`` in (q, qdot, u) at
        fixed t, at the force point (t, q, qdot, u) the problem uses first
        (its guess's first point of interval 0) and at a perturbed one (away
        from special points such as u = 0), with the steps and tolerance of
        the system derivative check (symplectic._model._derivcheck._gradients:
        steps 1e-4 sqrt(max(1, |x_c|)), a mismatch above max(1e-6 x the
        largest entry of the Jacobian, 10 x the differences' error estimate)),
        once per control.path object (not with check=False, nor from SymPy).
        Raises DerivativeError naming the entry (dq[k, i], dqdot[k, i],
        du[k, j]: row k of c), ValueError for a Jacobian of the wrong shape."""
        check_at_point(self, self.values, self.jacobians, (t, q, qdot, u), self.m,
                       callback="control.path's jac", reference="c(t, q, qdot, u) in q, qdot and u",
                       skip="control.path(c, jac, ..., check=False)", quantity="path_jacobian")

    def values(self, t, Q, V, U):
        """c at K points -> (K, r)."""
        out = np.empty((len(t), self.r))
        for j in range(len(t)):
            v = np.asarray(self.c(float(t[j]), Q[j].copy(), V[j].copy(), U[j].copy()),
                           dtype=float)
            if v.size != self.r or not np.isfinite(v).all():
                raise ValueError(f"path constraint: c(t, q, qdot, u) must return {self.r} finite "
                                 f"values, got {v!r} at t = {t[j]}")
            out[j] = v.reshape(self.r)
        return out

    def jacobians(self, t, Q, V, U):
        """(dc/dq, dc/dqdot, dc/du) at K points: (K, r, n), (K, r, n), (K, r, m)."""
        K, r, n, m = len(t), self.r, self.n, self.m
        jq, jv, ju = np.empty((K, r, n)), np.empty((K, r, n)), np.empty((K, r, m))
        what = (f"path constraint: jac(t, q, qdot, u) must return (dc/dq, dc/dqdot, dc/du) of "
                f"shapes ({r}, {n}), ({r}, {n}), ({r}, {m})")
        for j in range(K):
            g = self.jac(float(t[j]), Q[j].copy(), V[j].copy(), U[j].copy())
            jq[j], jv[j], ju[j] = derivative_parts(g, ((r, n), (r, n), (r, m)), what, t[j])
        return jq, jv, ju

    def dt(self, t, Q, V, U):
        """dc/dt at K points (a free duration): (K, r), exact for c from SymPy,
        else by central differences."""
        exact = getattr(self.jac, "dt", None)
        if exact is not None:
            return np.array(_sympy.at_points(exact, t, Q, V, U))
        e = 6e-6 * (np.abs(t) + 1.0)
        return (self.values(t + e, Q, V, U) - self.values(t - e, Q, V, U)) / (2 * e)[:, None]

    @property
    def exact(self):
        """Whether :meth:`second` is there (c from SymPy)."""
        return hasattr(self.jac, "second")

    def second(self, t, Q, V, U):
        """The Jacobian (K, r, k) and Hessians (K, r, k, k) of c in (t, q,
        qdot, u), k = 1 + 2n + m, at K points (c from SymPy)."""
        out = _sympy.at_points(self.jac.second, t, Q, V, U)
        return np.array([g for g, _ in out]), np.array([H for _, H in out])
