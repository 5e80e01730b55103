"""The costs of a control problem: the input effort, the duration, and
weighted sums of them, each with the derivatives the transcription needs.

A cost is evaluated on the inputs U (N, P, m) at the force points, with
the step h and the weights b_i of the scheme's force quadrature:

    effort:    J = h sum_k sum_i b_i 1/2 u_ki^T R u_ki   (int 1/2 u^T R u dt)
    duration:  J = N h                                    (T, minimum time)
    terminal:  J = phi(q_N, p_N)                          (a cost of the end state)
    running:   J = h sum_k sum_i b_i l(t_ki, q_ki, qdot_ki, u_ki)
               (int l dt; q_ki, qdot_ki: the step's own states at its force
               points, sym_run.deriv.points)

The user's derivatives of ``terminal`` and ``running`` (and of
``control.path``, _path.py) are checked once per term object against
central differences of the user's own function, as a system's are
(symplectic._model._derivcheck._gradients): the bound term's ``check``,
which the Problem calls at its first guess, raises DerivativeError on a
mismatch; ``check=False`` on the term (``terminal(phi, grad,
check=False)``) turns it off, and terms from SymPy expressions, whose
derivatives are derived, are not checked.
"""
import numpy as np

from .._model import _derivcheck, _matrices, _validate
from .._model._derivcheck import _gradients
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
        return _matrices.positive_definite("effort: R", R)

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


def check_flag(name, check):
    """The ``check=`` of a term: a bool."""
    if not isinstance(check, (bool, np.bool_)):
        raise TypeError(f"{name}: check must be True or False, got {check!r}")
    return bool(check)


class Checked:
    """A term whose user derivatives are checked once (see the module):
    ``derivative_check`` (False: never; also for SymPy-derived ones) and
    whether a check has passed."""

    derivative_check = False
    derivative_checked = False

    def pending(self):
        return self.derivative_check and not self.derivative_checked


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


class Terminal(Cost, Checked):
    """A cost phi(q_N, p_N) of the end state: ``phi(q, p)`` returns a float,
    ``grad(q, p)`` the pair (dphi/dq, dphi/dp), two arrays (n,) (the exact
    gradient: the transcription's derivatives are exact with it; its
    Hessian, which only steers the iterations, comes from differences of
    it).  Or ``phi`` a SymPy expression with ``symbols={"q": [...], "p":
    [...]}`` (and ``params={symbol or name: value}``): its gradient is
    derived.  ``check`` (default True): compare ``grad`` with central
    differences of ``phi`` before the first solve (the module's docstring;
    :meth:`_TerminalTerm.check`)."""

    def __init__(self, phi, grad=None, symbols=None, params=None, check=True):
        derived = _sympy.is_expression(phi)
        phi, grad = _from_sympy("terminal", phi, grad, symbols, params, ("q", "p"))
        if not callable(phi) or not callable(grad):
            raise TypeError("terminal(phi, grad): phi(q, p) -> float and grad(q, p) -> "
                            "(dphi/dq, dphi/dp) must be callables")
        self.phi, self.grad = phi, grad
        self.derivative_check = check_flag("terminal", check) and not derived
        self.terms = ((1.0, self),)

    def bind_term(self, m):
        return _TerminalTerm(self.phi, self.grad, self)

    def __repr__(self):
        return f"terminal({getattr(self.phi, '__name__', 'phi')})"


class Running(Cost, Checked):
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
    :meth:`Problem.solve`).  ``check`` (default True): compare ``grad`` with
    central differences of ``l`` (at fixed t) before the first solve (the
    module's docstring; :meth:`_RunningTerm.check`)."""

    def __init__(self, l, grad=None, symbols=None, params=None, check=True):
        derived = _sympy.is_expression(l)
        l, grad = _from_sympy("running", l, grad, symbols, params, ("t", "q", "qdot", "u"))
        if not callable(l) or not callable(grad):
            raise TypeError("running(l, grad): l(t, q, qdot, u) -> float and grad(t, q, qdot, "
                            "u) -> (dl/dq, dl/dqdot, dl/du) must be callables")
        self.l, self.grad = l, grad
        self.derivative_check = check_flag("running", check) and not derived
        self.terms = ((1.0, self),)

    def bind_term(self, m):
        return _RunningTerm(self.l, self.grad, m, self)

    def __repr__(self):
        return f"running({getattr(self.l, '__name__', 'l')})"


def running(l, grad=None, *, symbols=None, params=None, check=True):
    """The running cost int l(t, q, qdot, u) dt (see :class:`Running`); add
    it to others: ``effort() + running(l, grad)``, or from SymPy:
    ``running(expr, symbols={"q": q, "qdot": qd, "u": u})``.  ``check=False``:
    do not compare ``grad`` with central differences of ``l``."""
    return Running(l, grad, symbols, params, check)


def terminal(phi, grad=None, *, symbols=None, params=None, check=True):
    """The cost phi(q(T), p(T)) of the end state (see :class:`Terminal`);
    add it to an effort: ``effort() + 10 * terminal(phi, grad)``, or from
    SymPy: ``terminal(expr, symbols={"q": q, "p": p})``.  ``check=False``: do
    not compare ``grad`` with central differences of ``phi``."""
    return Terminal(phi, grad, symbols, params, check)


def effort(R=None):
    """The input effort cost 1/2 int u^T R u dt (see :class:`Effort`)."""
    return Effort(R)


def duration():
    """The duration T as a cost: minimum time, with ``Problem(...,
    free_duration=(T_min, T_max))`` (see :class:`Duration`)."""
    return Duration()


def check_at_point(term, values, derivatives, point, m, **words):
    """A force-point term's user derivatives (``derivatives(t, Q, V, U)`` ->
    the parts in q, qdot and u) against central differences of its values
    (``values(t, Q, V, U)``) in (q, qdot, u) at fixed t, at ``point`` (t, q,
    qdot, u) -- the first force point of the problem's first guess -- and at
    a perturbed one (symplectic._model._derivcheck._gradients), once per
    user's term object (``term.source``, pending until a check has passed):
    the running costs' and the path constraints' check.  ``words``: the
    messages' callback, reference, skip and quantity."""
    if term.source is None or not term.source.pending():
        return
    t, q, qdot, u = point
    n, t = len(q), float(t)
    x = np.concatenate([np.asarray(q, float), np.asarray(qdot, float), np.asarray(u, float)])

    def split(x):
        return np.array([t]), x[None, :n], x[None, n:2 * n], x[None, 2 * n:]

    def f(x):
        return values(*split(x))[0]

    def derivative(x):
        return np.concatenate([d[0] for d in derivatives(*split(x))], axis=-1)

    done = _gradients.verify(
        f, derivative, [(x, "the first force point of the problem's first guess")],
        rtol=_derivcheck.RTOL, parts=(("dq", n), ("dqdot", n), ("du", m)),
        fmt=lambda x: _gradients.fmt_state(t=t, q=x[:n], qdot=x[n:2 * n], u=x[2 * n:]),
        perturb="a perturbed point (the first one's q, qdot, u plus a fixed offset, away "
                "from special points such as u = 0)", **words)
    term.source.derivative_checked = done > 0


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
    def __init__(self, phi, grad, source=None):
        self.phi, self.grad, self.source = phi, grad, source

    def end_value(self, y):
        n = len(y) // 2
        v = self.phi(y[:n].copy(), y[n:].copy())
        v = _validate.real("terminal cost phi(q, p)", v)
        return v

    def end_grad(self, y):
        n = len(y) // 2
        g = self.grad(y[:n].copy(), y[n:].copy())
        what = (f"terminal cost: grad(q, p) must return (dphi/dq, dphi/dp), two arrays of shape "
                f"({n},)")
        return np.concatenate(derivative_parts(g, ((n,), (n,)), what, "T"))

    def end_hess(self, y):
        return fd_hessian(self.end_grad, y, 6e-6 * np.maximum(1.0, np.abs(y)))

    def check(self, y):
        """``grad`` against central differences of ``phi`` at the end state
        y = (q, p) (2n,) the problem uses first (its guess's) and at a
        perturbed one, y + dy (symplectic._model._derivcheck._gradients:
        steps 1e-4 sqrt(max(1, |y_c|)), tolerance max(1e-6 x the largest
        entry, 10 x the differences' error estimate)), once per
        control.terminal term (not with check=False, nor from SymPy).
        Raises DerivativeError naming the entry (dq[i], dp[i]) on a
        mismatch, ValueError for a gradient of the wrong shape."""
        if self.source is None or not self.source.pending():
            return
        y = np.array(y, dtype=float)
        n = len(y) // 2
        done = _gradients.verify(
            self.end_value, self.end_grad, [(y, "the end state of the problem's first guess")],
            rtol=_derivcheck.RTOL, callback="control.terminal's grad", reference="phi(q, p)",
            parts=(("dq", n), ("dp", n)), skip="control.terminal(phi, grad, check=False)",
            fmt=lambda x: _gradients.fmt_state(q=x[:n], p=x[n:]), quantity="cost_gradient",
            perturb="a perturbed end state (the guess's plus a fixed offset, away from special "
                    "points)")
        self.source.derivative_checked = done > 0


class _RunningTerm(_Term):
    """l at the force points: values, gradients, and dl/dt by differences."""

    def __init__(self, l, grad, m, source=None):
        self.l, self.grad, self.m, self.source = l, grad, m, source

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
                f"arrays of shapes ({n},), ({n},) and ({self.m},)")
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

    def check(self, t, q, qdot, u):
        """``grad`` against central differences of ``l`` in (q, qdot, u) at
        fixed t, at the force point (t, q, qdot, u) the problem uses first
        (its guess's first point of interval 0) and at a perturbed one
        (q, qdot, u) + d (away from u = 0 of a default guess, where a wrong
        sign of dl/du gives 0 either way); the steps and the tolerance as
        for :meth:`_TerminalTerm.check`, once per control.running term.
        Raises DerivativeError naming the entry (dq[i], dqdot[i], du[j]),
        ValueError for a gradient of the wrong shape."""
        check_at_point(self, self.values, self.grads, (t, q, qdot, u), self.m,
                       callback="control.running's grad",
                       reference="l(t, q, qdot, u) in q, qdot and u",
                       skip="control.running(l, grad, check=False)", quantity="cost_gradient")

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

    def check(self, y_end=None, point=None):
        """The user derivatives of the terms (see the module's docstring):
        each terminal term's at the end state ``y_end`` = (q_N, p_N) (2n,),
        each running term's at the force point ``point`` = (t, q, qdot, u)
        -- the first the problem uses, its guess's -- once per term object;
        either argument None: those terms are not checked now.  Raises
        DerivativeError (a mismatch) or ValueError (a wrong shape)."""
        for _, term in self.terms:
            if y_end is not None and isinstance(term, _TerminalTerm):
                term.check(y_end)
            if point is not None and isinstance(term, _RunningTerm):
                term.check(*point)
