"""An independent reference for the state-transition matrix of a mechanical system.

For L = 1/2 qdot^T M(q) qdot - V(q) and a viscous generalised force F = -D(q) qdot, the
Hamiltonian is H(q, p) = 1/2 p^T M(q)^-1 p + V(q) (p = M(q) qdot, the canonical momentum)
and the flow is

    dq/dt = dH/dp = v,    dp/dt = -dH/dq + F = 1/2 (v^T dM/dq_k v)_k - dV/dq - D v,

with v = M(q)^-1 p.  Its state-transition matrix Phi(t) = d(q(t), p(t))/d(q0, p0) (rows and
columns ordered (q, p)) solves the variational equation dPhi/dt = A(q, p) Phi, Phi(0) = I, with
A the Jacobian of the right-hand side.  :func:`variational_reference` derives both from a SymPy
M(q), V(q) (and D(q)) and integrates the augmented state (q, p, Phi) with SciPy's DOP853 at
rtol = atol = 1e-13.

What SymPy differentiates and what is done numerically.  The right-hand side is written in
(q, v): g(q, v) = dp/dt above, a polynomial in v.  SymPy gives M, B = d(M v)/dq at fixed v
(column j: dM/dq_j v), g, dg/dq at fixed v and dg/dv.  The chain rule through v = M^-1 p is
exact algebra, done numerically at each evaluation with one inverse of M:
dv/dq = -M^-1 B, dv/dp = M^-1, so

    A = [[-M^-1 B,               M^-1       ],
         [dg/dq - dg/dv M^-1 B,  dg/dv M^-1 ]].

Nothing here calls symplectic: the systems are built from the positions of their point masses
(:func:`planar_chain`), not from the library's formulae or its C code.  SI units (kg, m, s,
rad, N m s/rad for the damping).
"""
import functools

import numpy as np
import sympy as sy

from .models import G, L_DP

RTOL = 1e-13
ATOL = 1e-13


def symplectic_J(n):
    """J = [[0, I], [-I, 0]] (2n x 2n), (q, p) ordering."""
    Z, E = np.zeros((n, n)), np.eye(n)
    return np.block([[Z, E], [-E, Z]])


class Reference:
    """The compiled flow and variational equation of one system (see the module docstring).

    Call ``ref(q0, p0, t)`` -> (q (K, n), p (K, n), Phi (K, 2n, 2n)) at the times t (s; t[0]
    is the initial time, t increasing).  ``mass(q)`` and ``damping(q)`` evaluate M(q) and
    D(q) (zero without damping); ``trace_rate(q)`` is tr(M(q)^-1 D(q)) (1/s), the rate at
    which the phase-space volume contracts: det Phi(t) = exp(-int_0^t trace_rate dt').
    """

    def __init__(self, M, V, q, D=None):
        q = list(q)
        n = len(q)
        M = sy.Matrix(M)
        D = sy.zeros(n, n) if D is None else sy.Matrix(D)
        if M.shape != (n, n) or D.shape != (n, n):
            raise ValueError("M and D must be n x n for the n coordinates q")
        v = [sy.Dummy(f"v{i}", real=True) for i in range(n)]     # v = M^-1 p (no clash with q)
        vv = sy.Matrix(v)
        Mv = M * vv
        B = Mv.jacobian(q)                                        # column j: dM/dq_j v
        dV = sy.Matrix([sy.diff(V, qk) for qk in q])
        g = sy.Matrix([(vv.T * M.diff(qk) * vv)[0, 0] / 2 for qk in q]) - dV - D * vv
        gq = g.jacobian(q)
        gv = g.jacobian(v)
        self.n = n
        self.has_damping = any(e != 0 for e in D)
        self._eval = sy.lambdify([q, v], [B, g, gq, gv], modules="numpy", cse=True)
        self._mass = sy.lambdify([q], M, modules="numpy", cse=True)
        self._damp = sy.lambdify([q], D, modules="numpy", cse=True)

    def mass(self, q):
        """M(q), (n, n)."""
        return np.asarray(self._mass(np.asarray(q, dtype=float)), dtype=float)

    def damping(self, q):
        """D(q), (n, n)."""
        return np.asarray(self._damp(np.asarray(q, dtype=float)), dtype=float).reshape(
            self.n, self.n)

    def trace_rate(self, q):
        """tr(M(q)^-1 D(q)) (1/s)."""
        return float(np.trace(np.linalg.solve(self.mass(q), self.damping(q))))

    def _parts(self, q, p):
        W = np.linalg.inv(self.mass(q))
        v = W @ p
        B, g, gq, gv = (np.asarray(a, dtype=float) for a in self._eval(q, v))
        return v, W, B, g.ravel(), gq, gv

    def vector_field(self, q, p):
        """(dq/dt, dp/dt) at (q, p), each (n,)."""
        v, _, _, g, _, _ = self._parts(np.asarray(q, float), np.asarray(p, float))
        return v, g

    def jacobian(self, q, p):
        """A = d(dq/dt, dp/dt)/d(q, p), (2n, 2n)."""
        _, W, B, _, gq, gv = self._parts(np.asarray(q, float), np.asarray(p, float))
        return self._assemble(W, B, gq, gv)

    def _assemble(self, W, B, gq, gv):
        n = self.n
        WB = W @ B
        A = np.empty((2 * n, 2 * n))
        A[:n, :n] = -WB
        A[:n, n:] = W
        A[n:, :n] = gq - gv @ WB
        A[n:, n:] = gv @ W
        return A

    def _rhs(self, t, y):
        n = self.n
        q, p = y[:n], y[n:2 * n]
        Phi = y[2 * n:].reshape(2 * n, 2 * n)
        v, W, B, g, gq, gv = self._parts(q, p)
        return np.concatenate([v, g, (self._assemble(W, B, gq, gv) @ Phi).ravel()])

    def __call__(self, q0, p0, t, rtol=RTOL, atol=ATOL):
        from scipy.integrate import solve_ivp
        n = self.n
        t = np.asarray(t, dtype=float).ravel()
        y0 = np.concatenate([np.asarray(q0, float).ravel(), np.asarray(p0, float).ravel(),
                             np.eye(2 * n).ravel()])
        if len(t) == 1:
            return y0[None, :n], y0[None, n:2 * n], np.eye(2 * n)[None]
        sol = solve_ivp(self._rhs, (t[0], t[-1]), y0, method="DOP853", t_eval=t,
                        rtol=rtol, atol=atol)
        if not sol.success:
            raise RuntimeError(f"reference solve failed: {sol.message}")
        Y = sol.y.T
        return Y[:, :n], Y[:, n:2 * n], Y[:, 2 * n:].reshape(len(t), 2 * n, 2 * n)


def variational_reference(M, V, q, D=None):
    """The reference flow of L = 1/2 qdot^T M(q) qdot - V(q) with the force -D(q) qdot.

    M, D: SymPy n x n matrices in the symbols q (D optional: no force); V: a SymPy
    expression.  Returns a :class:`Reference`, called as ``ref(q0, p0, t)``.
    """
    return Reference(M, V, q, D)


def mechanics_from_lagrangian(L, q, qdot, R=None):
    """(M, V, D) of L = 1/2 qdot^T M qdot - V and a Rayleigh function R = 1/2 qdot^T D qdot.

    M and D are the Hessians in qdot, V = -L at qdot = 0 (L must be quadratic in qdot with
    no linear term, R quadratic; D None without R).
    """
    M = sy.hessian(L, qdot)
    V = -L.subs({u: 0 for u in qdot})
    D = None if R is None else sy.hessian(R, qdot)
    return M, V, D


def chain_lagrangian(m, l, g=G, c=None):
    """A planar chain of point masses m_i (kg) on massless rods l_i (m), built from positions.

    q_i: absolute angle of rod i from the downward vertical (rad); the pivot is at the origin,
    y points up, mass i sits at r_i = r_(i-1) + l_i (sin q_i, -cos q_i); gravity g (m/s^2).
    T = 1/2 sum m_i |dr_i/dt|^2, V = sum m_i g y_i.  c: viscous joint friction c_i (N m s/rad;
    joint 0 the pivot, rate q0'; joint i > 0 between rods i - 1 and i, rate q_i' - q_(i-1)'),
    Rayleigh R = 1/2 sum c_i rate_i^2.  Returns (L, R or None, q, qdot).
    """
    n = len(m)
    q = list(sy.symbols(f"q0:{n}", real=True))
    u = list(sy.symbols(f"u0:{n}", real=True))
    x = y = xd = yd = sy.Integer(0)
    T = V = sy.Integer(0)
    for i in range(n):
        li, mi = sy.Float(l[i]), sy.Float(m[i])
        x, y = x + li * sy.sin(q[i]), y - li * sy.cos(q[i])
        xd, yd = xd + li * sy.cos(q[i]) * u[i], yd + li * sy.sin(q[i]) * u[i]
        T += mi * (xd ** 2 + yd ** 2) / 2
        V += mi * sy.Float(g) * y
    R = None
    if c is not None and any(ci != 0 for ci in c):
        rates = [u[0]] + [u[i] - u[i - 1] for i in range(1, n)]
        R = sum(sy.Float(ci) * r ** 2 for ci, r in zip(c, rates)) / 2
    return sy.expand(T - V), (None if R is None else sy.expand(R)), q, u


def _damping_values(damping, n):
    c = np.broadcast_to(np.asarray(damping, dtype=float), (n,))
    return None if not np.any(c) else tuple(float(x) for x in c)


@functools.lru_cache(maxsize=None)
def _chain_reference(m, l, g, c):
    L, R, q, u = chain_lagrangian(m, l, g, c)
    M, V, D = mechanics_from_lagrangian(L, q, u, R)
    return variational_reference(M, V, q, D)


def planar_chain(m, l, g=G, damping=0.0):
    """:class:`Reference` of the planar chain of :func:`chain_lagrangian` (cached by value).

    m, l: sequences of n masses (kg) and lengths (m); damping: a scalar or n values c_i.
    """
    m = tuple(float(x) for x in m)
    l = tuple(float(x) for x in l)
    if len(m) != len(l):
        raise ValueError("m and l must have the same length")
    return _chain_reference(m, l, float(g), _damping_values(damping, len(m)))


def double_pendulum(m1=1.0, m2=1.0, l1=L_DP, l2=L_DP, g=G, damping=0.0):
    """The double pendulum of ``symplectic.systems.double_pendulum`` (absolute angles from the
    downward vertical; defaults: the tests' rods l = g / (2 pi)^2 m, 1 kg masses).  damping: a
    scalar or (c_pivot, c_elbow) (N m s/rad)."""
    return planar_chain((m1, m2), (l1, l2), g, damping)


def pendulum_chain(n, m=1.0, l=1.0, g=G, damping=0.0):
    """The n-link chain of ``symplectic.systems.pendulum_chain`` (same arguments: m, l scalars
    or n values, damping a scalar or n values)."""
    ms = np.broadcast_to(np.asarray(m, dtype=float), (n,))
    ls = np.broadcast_to(np.asarray(l, dtype=float), (n,))
    return planar_chain(ms, ls, g, damping)


def liouville_exponent(ref, q0, p0, t_end, panels=200):
    """int_0^t tr(M^-1 D) dt' along the reference path from (q0, p0) at t = the panel edges.

    Composite 8-node Gauss-Legendre on ``panels`` equal panels of [0, t_end], q(t) from the
    reference's own flow at the nodes.  Returns (edges (panels + 1,) in s, the integrals there
    (dimensionless), 0 at t = 0); det Phi(t) = exp(-integral) (Liouville).
    """
    x, w = np.polynomial.legendre.leggauss(8)
    edges = np.linspace(0.0, float(t_end), panels + 1)
    a, b = edges[:-1], edges[1:]
    nodes = ((b - a)[:, None] * (x[None, :] + 1) / 2 + a[:, None]).ravel()   # ascending
    qs = ref(q0, p0, np.concatenate([[0.0], nodes]))[0][1:]
    rates = np.array([ref.trace_rate(qk) for qk in qs]).reshape(panels, len(x))
    return edges, np.concatenate([[0.0], np.cumsum((b - a) / 2 * (rates @ w))])


__all__ = ["Reference", "variational_reference", "mechanics_from_lagrangian", "chain_lagrangian",
           "planar_chain", "double_pendulum", "pendulum_chain", "liouville_exponent",
           "symplectic_J", "RTOL", "ATOL"]
