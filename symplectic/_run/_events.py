"""Events and output times: what a run does after each step.

The C driver calls one Python hook after accepted steps (``sym_run.obs``,
the run's observers, in csrc/core/sym_run.h; csrc/binding/py_integrate.c copies the step's data into a buffer first):

- with ``events=`` after *every* step: each event function is evaluated once
  per step, at the step's end node (its value at the start is the previous
  step's), and only a step whose end values change sign is searched;
- with ``t_eval=`` alone only after the steps that contain a requested time
  (the C driver skips the call for the others), so a run with output times
  costs one call per output step, not one per step.

Between the nodes the state is the Hermite dense polynomial of the step
(:mod:`symplectic._run._dense`: q through the step's nodes with the end velocities
M^-1 p, qdot its derivative, p = M(q) qdot).  An event inside a step is the
root of g(t, q(t), p(t)) on that polynomial, found by Brent's method to
``|t - t*| <= XTOL + 4 eps |t|``: the location is exact for the dense output
to 1e-12; how close it is to the exact solution's crossing is the dense
output's order (documented in _dense).  Two sign changes of g inside one step
cancel and go unseen (as in scipy.integrate.solve_ivp): keep h below the
time between events.  A zero of g at t0 is not an event; a zero exactly at a
node is reported once, for the step that ends there.
"""
import math

import numpy as np

from . import _dense
from .._model import _runspec

#: Absolute tolerance of event times (s); 4 eps |t| is added for large |t|.
XTOL = 1e-12
_EPS = np.finfo(float).eps


class Observer:
    """The hook of one run: event detection and location, output times.

    After construction, ``hook`` is the callable for the C driver (or None),
    ``buf`` the buffer it fills, ``hook_steps`` the steps to call it for
    (None: every step).  After the run: :meth:`events_found`,
    :meth:`samples`, ``stop`` (the terminal event's (index, t) or None).
    """

    def __init__(self, system, method, t0, h, n_steps, q0, p0, events=(), t_eval=None,
                 forced=False):
        self.system = system
        self.c = np.asarray(method.nodes, dtype=float)
        self.s = len(self.c)
        self.n = system.n
        self.t0, self.h, self.n_steps = t0, h, n_steps
        self.buf = np.zeros((method.n_mid + 4, self.n))
        self.events = list(events)
        self.stop = None
        self._cur_t = None
        self._t_a = t0
        # events: values at t0, what was found
        self.g_prev = [_runspec.event_value(i, ev.fn, ev.fn(t0, q0.copy(), p0.copy()), t0)
                       for i, ev in enumerate(self.events)]
        self.found = [[] for _ in self.events]           # (t, q, p) per event
        # output times: the step of each, the arrays they fill
        self.t_eval = t_eval
        if t_eval is not None:
            m = len(t_eval)
            self.sample_step = _steps_of(t_eval, t0, h, n_steps)
            self.sq = np.empty((m, self.n))
            self.sp = np.empty((m, self.n))
            self.sv = np.empty((m, self.n))
            self.n_samples = 0
            if n_steps == 0:                              # t_eval == [t0, ...]: the start
                self.sq[:] = q0
                self.sp[:] = p0
                self.sv[:] = system.velocity(q0, p0)
                self.n_samples = m
        # a forced run with output times: the work and impulse there, from the
        # step's own quadrature of the work (the C driver fills fbuf: W_k,
        # W_{k+1}, I_k, I_{k+1}, then the quadrature's x, b, P, F)
        self.fbuf = None
        if forced and t_eval is not None:
            self.n_fpts = method.force_points
            self.fbuf = np.zeros(2 + 2 * self.n + self.n_fpts * (3 + self.n))
            self.sw = np.zeros(len(t_eval))
            self.si = np.zeros((len(t_eval), self.n))
        self.hook = self._hook if (self.events or t_eval is not None) and n_steps > 0 else None
        self.hook_steps = None
        if self.hook is not None and not self.events:
            self.hook_steps = np.unique(self.sample_step).astype(np.int_)

    # ---------------------------------------------------------------- the hook
    def _hook(self, k):
        """After step k: True stops the run (a terminal event in this step)."""
        buf, s = self.buf, self.s
        t_a = self.t0 + k * self.h
        t_b = self.t0 + (k + 1) * self.h
        self._cur_t = None                   # a new step: its data are computed on demand
        self._t_a = t_a
        stop_t = None
        if self.events:
            q1, p1 = buf[s - 1].copy(), buf[s + 1].copy()
            hits = []
            for i, ev in enumerate(self.events):
                g1 = _runspec.event_value(i, ev.fn, ev.fn(t_b, q1, p1), t_b)
                g0 = self.g_prev[i]
                self.g_prev[i] = g1
                if _crosses(g0, g1, ev.direction):
                    te = t_b if g1 == 0.0 else self._locate(i, ev, t_a, t_b, g0, g1)
                    hits.append((te, i))
            if hits:
                stop_t = self._record(sorted(hits, key=lambda x: x[0] * math.copysign(1, self.h)))
        if self.t_eval is not None:
            self._sample(k, stop_t)
        return stop_t is not None

    def _record(self, hits):
        """Keep the events of one step in time order up to a terminal one;
        its time (or None)."""
        for te, i in hits:
            ev = self.events[i]
            q, p, _ = self._state(np.array([te]))
            self.found[i].append((te, q[0], p[0]))
            if ev.terminal and len(self.found[i]) >= ev.terminal:
                self.stop = (i, te)
                return te
        return None

    # ---------------------------------------------------------------- dense state
    def _step_data(self):
        """The current step's nodes (s, n) and end velocities (cached per step)."""
        buf, s = self.buf, self.s
        nodes = buf[:s]
        v = self.system.velocity(np.stack([buf[0], buf[s - 1]]), buf[s:s + 2])
        return nodes, v[0], v[1]

    def _state(self, t):
        """(q, p, qdot) at the times t (all in the current step)."""
        self._begin_step()
        nodes, v0, v1 = self._cur
        theta = (t - self._t_a) / self.h
        m = len(theta)
        q, qdot = _dense.hermite_state(self.c, theta, np.broadcast_to(nodes, (m,) + nodes.shape),
                                       np.broadcast_to(v0, (m, self.n)),
                                       np.broadcast_to(v1, (m, self.n)), self.h)
        p = self.system.momentum(q, qdot) if m > 1 else self.system.mass(q[0]) @ qdot[0]
        return q, np.atleast_2d(p), qdot

    def _begin_step(self):
        if self._cur_t is None:
            self._cur = self._step_data()
            self._cur_t = self._t_a

    def _locate(self, i, ev, t_a, t_b, g0, g1):
        """The root of g_i on the step's dense polynomial (Brent)."""

        def f(t):
            q, p, _ = self._state(np.array([t]))
            return _runspec.event_value(i, ev.fn, ev.fn(t, q[0].copy(), p[0].copy()), t)

        return brent(f, t_a, t_b, g0, g1, XTOL)

    def _sample(self, k, stop_t):
        """The output times inside step k (those before a terminal event)."""
        lo = self.n_samples
        hi = lo
        m = len(self.t_eval)
        while hi < m and self.sample_step[hi] == k:
            hi += 1
        if stop_t is not None:
            sgn = math.copysign(1.0, self.h)
            while hi > lo and (self.t_eval[hi - 1] - stop_t) * sgn > 0:
                hi -= 1
        if hi > lo:
            q, p, qdot = self._state(self.t_eval[lo:hi])
            self.sq[lo:hi], self.sp[lo:hi], self.sv[lo:hi] = q, p, qdot
            if self.fbuf is not None:
                theta = (self.t_eval[lo:hi] - self._t_a) / self.h
                self.sw[lo:hi], self.si[lo:hi] = _work_in_step(self.fbuf, self.n,
                                                               self.n_fpts, theta, self.h)
            self.n_samples = hi
        if stop_t is not None:
            self.t_eval = self.t_eval[:hi]
            self.sample_step = self.sample_step[:hi]

    # ---------------------------------------------------------------- results
    def events_found(self):
        """(t_events, q_events, p_events): per event, arrays (k,), (k, n), (k, n)."""
        t_ev, q_ev, p_ev = [], [], []
        for rows in self.found:
            t_ev.append(np.array([r[0] for r in rows], dtype=float))
            q_ev.append(np.array([r[1] for r in rows], dtype=float).reshape(len(rows), self.n))
            p_ev.append(np.array([r[2] for r in rows], dtype=float).reshape(len(rows), self.n))
        return t_ev, q_ev, p_ev

    def samples(self):
        """(t, q, p, qdot) at the output times reached."""
        k = self.n_samples
        return self.t_eval[:k].copy(), self.sq[:k], self.sp[:k], self.sv[:k]

    def force_samples(self):
        """(work, impulse) at the output times reached (a forced run)."""
        k = self.n_samples
        return self.sw[:k], self.si[:k]


def _work_in_step(buf, n, m, theta, h):
    """The work and impulse of the forces at the positions theta in [0, 1] of a
    step, from the step's data in ``buf`` (the C driver's hook_force: W_k,
    W_{k+1}, I_k (n), I_{k+1} (n), the quadrature's positions x (m), weights
    b (m), powers P (m) and forces F (m, n)):

        W(t_k + theta h) = W_k + h int_0^theta P~(s) ds,

    P~ the polynomial through the points (x_i, P_i) (points at one position,
    as RK4's two midpoint stages, merged with their weights), and the
    impulse likewise with F.  The scheme's quadrature is interpolatory, so
    at theta = 1 this is W_{k+1} to rounding (taken exactly there); inside
    the step it has the order of the polynomial, like the dense states."""
    W0, W1 = buf[0], buf[1]
    I0, I1 = buf[2:2 + n], buf[2 + n:2 + 2 * n]
    x, b = buf[2 + 2 * n:2 + 2 * n + m], buf[2 + 2 * n + m:2 + 2 * n + 2 * m]
    P = buf[2 + 2 * n + 2 * m:2 + 2 * n + 3 * m]
    F = buf[2 + 2 * n + 3 * m:].reshape(m, n)
    xs = np.unique(x)
    wsum = np.array([b[x == v].sum() for v in xs])
    Pm = np.array([(b[x == v] * P[x == v]).sum() for v in xs]) / wsum
    Fm = np.array([(b[x == v, None] * F[x == v]).sum(axis=0) for v in xs]) / wsum[:, None]
    A = _integrated_basis(tuple(xs.tolist()), np.asarray(theta, dtype=float))   # (k, len(xs))
    work = W0 + h * (A @ Pm)
    impulse = I0 + h * (A @ Fm)
    end = theta == 1.0
    work[end], impulse[end] = W1, I1
    return work, impulse


def _integrated_basis(xs, theta):
    """int_0^theta l_j(s) ds for the Lagrange basis l_j on the points xs,
    shape (len(theta), len(xs))."""
    m = len(xs)
    V = np.vander(np.asarray(xs), m, increasing=True)   # V[i, k] = x_i^k
    C = np.linalg.inv(V)                                # l_j(s) = sum_k C[k, j] s^k
    k = np.arange(m)
    powers = theta[:, None] ** (k + 1)[None, :] / (k + 1)[None, :]
    return powers @ C


def _crosses(g0, g1, direction):
    """A sign change from g0 (start of the step) to g1 (its end) in the
    requested direction (> 0: upward, < 0: downward, 0: either)."""
    up = g0 < 0.0 <= g1
    down = g0 > 0.0 >= g1
    if direction > 0:
        return up
    if direction < 0:
        return down
    return up or down


def _steps_of(t_eval, t0, h, n_steps):
    """The step j (0 <= j < n_steps) whose interval holds each output time."""
    if n_steps == 0:
        return np.zeros(len(t_eval), dtype=np.int_)
    u = (np.asarray(t_eval) - t0) / h
    return np.clip(np.floor(u), 0, n_steps - 1).astype(np.int_)


def brent(f, a, b, fa, fb, xtol, maxiter=100):
    """A root of f in the bracket [a, b] (fa, fb of opposite signs or one zero)
    by Brent's method (inverse quadratic interpolation, secant and bisection,
    R. P. Brent, Algorithms for Minimization without Derivatives, 1973, ch. 4),
    to |x - x*| <= xtol + 4 eps |x|."""
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    c, fc = a, fa
    d = e = b - a
    for _ in range(maxiter):
        if (fb > 0) == (fc > 0):
            c, fc = a, fa
            d = e = b - a
        if abs(fc) < abs(fb):
            a, b, c = b, c, b
            fa, fb, fc = fb, fc, fb
        tol = 2.0 * _EPS * abs(b) + 0.5 * xtol
        mid = 0.5 * (c - b)
        if abs(mid) <= tol or fb == 0.0:
            return b
        if abs(e) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:                                   # secant
                p, q = 2.0 * mid * s, 1.0 - s
            else:                                        # inverse quadratic
                qq, r = fa / fc, fb / fc
                p = s * (2.0 * mid * qq * (qq - r) - (b - a) * (r - 1.0))
                q = (qq - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0:
                q = -q
            else:
                p = -p
            if 2.0 * p < min(3.0 * mid * q - abs(tol * q), abs(e * q)):
                e, d = d, p / q
            else:
                d = e = mid
        else:
            d = e = mid
        a, fa = b, fb
        b += d if abs(d) > tol else math.copysign(tol, mid)
        fb = f(b)
    return b
