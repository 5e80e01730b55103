"""The costs of a control problem: the input effort, the duration, and
weighted sums of them, each with the derivatives the transcription needs.

A cost is evaluated on the inputs U (N, P, m) at the force points, with
the step h and the weights b_i of the scheme's force quadrature:

    effort:    J = h sum_k sum_i b_i 1/2 u_ki^T R u_ki   (int 1/2 u^T R u dt)
    duration:  J = N h                                    (T, minimum time)
    terminal:  J = phi(q_N, p_N)                          (a cost of the end state)
    running:   J = h sum_k sum_i b_i l(t_ki, q_ki, qdot_ki, u_ki)
               (int l dt; q_ki, qdot_ki: the step's own states at its force
               points, sym_run.points)
"""
import numpy as np

from .._model import _validate
from . import _sympy


def fd_columns(f, v0, steps):
    """Central differences of f (an array) in each coordinate of v0, stacked
    on the last axis: (f(v0 + e_j) - f(v0 - e_j)) / (2 e_j), e_j = steps[j]."""
    cols = []
    for j, e in enumerate(steps):
        vp, vm = v0.copy(), v0.copy()
        vp[j] += e
        vm[j] -= e
        cols.append((f(vp) - f(vm)) / (2 * e))
    return np.stack(cols, axis=-1)


def fd_hessian(grad, v0, steps):
    """The symmetric part of the central differences of an exact gradient
    (the transcription's curvature, which only steers the iterations)."""
    H = fd_columns(grad, v0, steps)
    return 0.5 * (H + H.T)


def derivative_parts(g, shapes, what, t):
    """The arrays of a user's derivative tuple ``g`` with the given shapes,
    checked finite (``what``: its call and the shapes it must return; t: the
    time of the call, for the message)."""
    try:
        if len(g) != len(shapes):
            raise ValueError
        parts = [np.asarray(x, dtype=float).reshape(sh) for x, sh in zip(g, shapes)]
    except (TypeError, ValueError):
        raise ValueError(f"{what}") from None
    if not all(np.isfinite(x).all() for x in parts):
        raise ValueError(f"{what.split(' must ')[0]} returned non-finite values at t = {t}")
    return parts


class Cost:
    """A cost of a control problem: add costs with ``+``, weight them with
    ``*`` (``control.duration() + 0.1 * control.effort()``)."""

    terms = ()

    def __add__(self, other):
        if not isinstance(other, Cost):
            return NotImplemented
        return CostSum(self.terms + other.terms)

    def __mul__(self, w):
        w = _validate.real("cost weight", w)
        if not w >= 0:
            raise ValueError(f"a cost's weight must be >= 0, got {w}")
        return CostSum(tuple((c * w, t) for c, t in self.terms))

    __rmul__ = __mul__

    def bind(self, m):
        """The cost for m inputs (checks, matrices): a _Bound."""
        return _Bound([(c, t.bind_term(m)) for c, t in self.terms])


class CostSum(Cost):
    """sum_j c_j J_j."""

    def __init__(self, terms):
        self.terms = tuple(terms)

    def __repr__(self):
        return " + ".join(f"{c:g} * {t!r}" if c != 1 else repr(t) for c, t in self.terms)


class Effort(Cost):
    """The cost int_0^T 1/2 u(t)^T R u(t) dt (units of u squared times R
    times seconds), by the scheme's quadrature of a force:
    h sum_k sum_i b_i 1/2 u_ki^T R u_ki.  ``R`` (m, m) symmetric positive
    definite; None: the identity."""

    def __init__(self, R=None):
        self.R = None if R is None else np.array(R, dtype=float, ndmin=2)
        self.terms = ((1.0, self),)

    def matrix(self, m):
        """R for m inputs (checked)."""
        if self.R is None:
            return np.eye(m)
        R = self.R
        if R.shape != (m, m) or not np.isfinite(R).all():
            raise ValueError(f"effort: R must be a finite ({m}, {m}) matrix for {m} inputs, "
                             f"got shape {R.shape}")
        if not np.allclose(R, R.T, rtol=1e-12, atol=0.0):
            raise ValueError("effort: R must be symmetric")
        return _validate.positive_definite("effort: R", R)

    def bind_term(self, m):
        return _EffortTerm(self.matrix(m))

    def __repr__(self):
        return "effort(R=I)" if self.R is None else f"effort(R={self.R.tolist()})"


class Duration(Cost):
    """The cost T = N h, the duration (minimum time; needs ``free_duration``)."""

    def __init__(self):
        self.terms = ((1.0, self),)

    def bind_term(self, m):
        return _DurationTerm()

    def __repr__(self):
        return "duration()"


def _from_sympy(name, f, grad, symbols, params, groups):
    """(f, grad): as given, or from a SymPy expression f and ``symbols``."""
    if _sympy.is_expression(f):
        if grad is not None:
            raise TypeError(f"{name}: with a SymPy expression the derivatives are derived; "
                            f"give symbols=, not a gradient")
        return _sympy.functions(f, symbols, groups, params, name)
    if symbols is not None or params is not None:
        raise TypeError(f"{name}: symbols= and params= go with a SymPy expression")
    return f, grad


class Terminal(Cost):
    """A cost phi(q_N, p_N) of the end state: ``phi(q, p)`` returns a float,
    ``grad(q, p)`` the pair (dphi/dq, dphi/dp), two arrays (n,) (the exact
    gradient: the transcription's derivatives are exact with it; its
    Hessian, which only steers the iterations, comes from differences of
    it).  Or ``phi`` a SymPy expression with ``symbols={"q": [...], "p":
    [...]}`` (and ``params={symbol or name: value}``): its gradient is
    derived."""

    def __init__(self, phi, grad=None, symbols=None, params=None):
        phi, grad = _from_sympy("terminal", phi, grad, symbols, params, ("q", "p"))
        if not callable(phi) or not callable(grad):
            raise TypeError("terminal(phi, grad): phi(q, p) -> float and grad(q, p) -> "
                            "(dphi/dq, dphi/dp) must be callables")
        self.phi, self.grad = phi, grad
        self.terms = ((1.0, self),)

    def bind_term(self, m):
        return _TerminalTerm(self.phi, self.grad)

    def __repr__(self):
        return f"terminal({getattr(self.phi, '__name__', 'phi')})"


class Running(Cost):
    """A running cost int_0^T l(t, q, qdot, u) dt, by the scheme's quadrature
    at its force points with the step's own states there (the Galerkin
    polynomial's q_i and qdot_i, exact derivatives from the core), so that
    the transcription keeps the scheme's order.  ``l(t, q, qdot, u)`` returns
    a float; ``grad(t, q, qdot, u)`` the triple (dl/dq, dl/dqdot, dl/du),
    arrays (n,), (n,), (m,) (exact: the transcription's gradient is exact
    with it; its Hessian, which only steers the iterations, comes from
    differences of it, and with a free duration dl/dt from differences of
    l).  Units: those of the cost times 1/s.  Or ``l`` a SymPy expression
    with ``symbols={"t": t, "q": [...], "qdot": [...], "u": [...]}`` ("t"
    optional) and ``params={symbol or name: value}``: its gradient, dl/dt
    and Hessian are derived (the problem's exact Hessian takes them:
    :meth:`Problem.solve`)."""

    def __init__(self, l, grad=None, symbols=None, params=None):
        l, grad = _from_sympy("running", l, grad, symbols, params, ("t", "q", "qdot", "u"))
        if not callable(l) or not callable(grad):
            raise TypeError("running(l, grad): l(t, q, qdot, u) -> float and grad(t, q, qdot, "
                            "u) -> (dl/dq, dl/dqdot, dl/du) must be callables")
        self.l, self.grad = l, grad
        self.terms = ((1.0, self),)

    def bind_term(self, m):
        return _RunningTerm(self.l, self.grad, m)

    def __repr__(self):
        return f"running({getattr(self.l, '__name__', 'l')})"


def running(l, grad=None, *, symbols=None, params=None):
    """The running cost int l(t, q, qdot, u) dt (see :class:`Running`); add
    it to others: ``effort() + running(l, grad)``, or from SymPy:
    ``running(expr, symbols={"q": q, "qdot": qd, "u": u})``."""
    return Running(l, grad, symbols, params)


def terminal(phi, grad=None, *, symbols=None, params=None):
    """The cost phi(q(T), p(T)) of the end state (see :class:`Terminal`);
    add it to an effort: ``effort() + 10 * terminal(phi, grad)``, or from
    SymPy: ``terminal(expr, symbols={"q": q, "p": p})``."""
    return Terminal(phi, grad, symbols, params)


def effort(R=None):
    """The input effort cost 1/2 int u^T R u dt (see :class:`Effort`)."""
    return Effort(R)


def duration():
    """The duration T as a cost: minimum time, with ``Problem(...,
    free_duration=(T_min, T_max))`` (see :class:`Duration`)."""
    return Duration()


class _Term:
    """The parts a term does not have: zero."""
    timed = False

    def value(self, U, h, b):
        return 0.0

    def grad_u(self, U, h, b):
        return np.zeros_like(U)

    def grad_h(self, U, h, b):
        return 0.0

    def hess_uu(self, h, b):
        return 0.0

    def hess_uh(self, Uk, b):
        return 0.0

    def end_value(self, y):
        return 0.0

    def end_grad(self, y):
        return np.zeros_like(y)

    def end_hess(self, y):
        return 0.0


class _TerminalTerm(_Term):
    def __init__(self, phi, grad):
        self.phi, self.grad = phi, grad

    def end_value(self, y):
        n = len(y) // 2
        v = self.phi(y[:n].copy(), y[n:].copy())
        v = _validate.real("terminal cost phi(q, p)", v)
        return v

    def end_grad(self, y):
        n = len(y) // 2
        g = self.grad(y[:n].copy(), y[n:].copy())
        what = (f"terminal cost: grad(q, p) must return (dphi/dq, dphi/dp), two arrays of {n} "
                f"values")
        return np.concatenate(derivative_parts(g, ((n,), (n,)), what, "T"))

    def end_hess(self, y):
        return fd_hessian(self.end_grad, y, 6e-6 * np.maximum(1.0, np.abs(y)))


class _RunningTerm(_Term):
    """l at the force points: values, gradients, and dl/dt by differences."""

    def __init__(self, l, grad, m):
        self.l, self.grad, self.m = l, grad, m

    def values(self, t, Q, V, U):
        """l at each point: t (K,), Q, V (K, n), U (K, m) -> (K,)."""
        out = np.empty(len(t))
        for j in range(len(t)):
            out[j] = _validate.real("running cost l(t, q, qdot, u)",
                                    self.l(float(t[j]), Q[j].copy(), V[j].copy(), U[j].copy()))
        return out

    def grads(self, t, Q, V, U):
        """(dl/dq, dl/dqdot, dl/du) at each point: (K, n), (K, n), (K, m)."""
        K, n = Q.shape
        gq, gv, gu = np.empty((K, n)), np.empty((K, n)), np.empty((K, self.m))
        what = (f"running cost: grad(t, q, qdot, u) must return (dl/dq, dl/dqdot, dl/du), "
                f"arrays of {n}, {n} and {self.m} values")
        for j in range(K):
            g = self.grad(float(t[j]), Q[j].copy(), V[j].copy(), U[j].copy())
            gq[j], gv[j], gu[j] = derivative_parts(g, ((n,), (n,), (self.m,)), what, t[j])
        return gq, gv, gu

    def dt(self, t, Q, V, U):
        """dl/dt at each point (a free duration): exact for l from SymPy, else
        by central differences."""
        exact = getattr(self.grad, "dt", None)
        if exact is not None:
            return np.array(_sympy.at_points(exact, t, Q, V, U))
        e = 6e-6 * (np.abs(t) + 1.0)
        return (self.values(t + e, Q, V, U) - self.values(t - e, Q, V, U)) / (2 * e)

    @property
    def exact(self):
        """Whether :meth:`second` is there (l from SymPy)."""
        return hasattr(self.grad, "second")

    def second(self, t, Q, V, U):
        """The gradient (K, k) and Hessian (K, k, k) of l in (t, q, qdot, u),
        k = 1 + 2n + m, at each point (l from SymPy)."""
        out = _sympy.at_points(self.grad.second, t, Q, V, U)
        return np.array([g[0] for g, _ in out]), np.array([H[0] for _, H in out])


class _EffortTerm(_Term):
    timed = False

    def __init__(self, R):
        self.R = R

    def value(self, U, h, b):
        return float(0.5 * h * np.sum(b[None, :, None] * U * (U @ self.R)))

    def grad_u(self, U, h, b):
        return h * b[None, :, None] * (U @ self.R)

    def grad_h(self, U, h, b):
        return float(0.5 * np.sum(b[None, :, None] * U * (U @ self.R)))

    def hess_uu(self, h, b):
        """The (P m, P m) block of one interval."""
        m, P = self.R.shape[0], len(b)
        H = np.zeros((P * m, P * m))
        for i in range(P):
            H[i * m:(i + 1) * m, i * m:(i + 1) * m] = h * b[i] * self.R
        return H

    def hess_uh(self, Uk, b):
        """d^2 J / du_k dh, (P m,)."""
        return (b[:, None] * (Uk @ self.R)).ravel()


class _DurationTerm(_Term):
    timed = True

    def value(self, U, h, b):
        return float(U.shape[0] * h)

    def grad_u(self, U, h, b):
        return np.zeros_like(U)

    def grad_h(self, U, h, b):
        return float(U.shape[0])

    def hess_uu(self, h, b):
        return 0.0

    def hess_uh(self, Uk, b):
        return 0.0


class _Bound:
    """A cost bound to a problem's inputs: sum_j c_j J_j and its derivatives."""

    def __init__(self, terms):
        self.terms = terms
        self.timed = any(t.timed for _, t in terms)

    def value(self, U, h, b):
        return sum(c * t.value(U, h, b) for c, t in self.terms)

    def grad_u(self, U, h, b):
        return sum(c * t.grad_u(U, h, b) for c, t in self.terms)

    def grad_h(self, U, h, b):
        return sum(c * t.grad_h(U, h, b) for c, t in self.terms)

    def hess_uu(self, h, b):
        return sum(c * t.hess_uu(h, b) for c, t in self.terms)

    def hess_uh(self, Uk, b):
        return sum(c * t.hess_uh(Uk, b) for c, t in self.terms)

    @property
    def running(self):
        """The running terms, (weight, _RunningTerm) pairs."""
        return [(c, t) for c, t in self.terms if isinstance(t, _RunningTerm)]

    @property
    def has_end(self):
        return any(isinstance(t, _TerminalTerm) for _, t in self.terms)

    def end_value(self, y):
        return sum(c * t.end_value(y) for c, t in self.terms)

    def end_grad(self, y):
        return sum(c * t.end_grad(y) for c, t in self.terms)

    def end_hess(self, y):
        return sum(c * t.end_hess(y) for c, t in self.terms)
