"""heyoka.py (Taylor method, LLVM JIT) on the benchmark problems.

- the double pendulum: Hamilton's equations written out explicitly (the closed-form 2 x 2 inverse
  of M(q), the same formulas as ``models.dp_rhs`` and the GSL program);
- the n-link chain and the arm-like chain: the Lagrangian L = T - V written from the Cartesian
  positions of the masses, turned into explicit equations of motion by heyoka's Lagrangian helper
  (``heyoka.lagrangian``), state (q, qdot).

The integrator is compiled once per (system, tolerance, mode) and reused: a timed run resets its
time and state and calls ``propagate_until`` (no callback); e_H is measured in a separate run with
a step callback that records the state after every step.  The JIT (compile) time is measured with
heyoka's in-memory cache cleared and its disk cache off.
"""
import time

import numpy as np

import models as M

from .peers import Method

NAN = float("nan")


def load():
    """The heyoka module with its disk cache off, or None when it is not installed."""
    try:
        import heyoka as hy
    except ImportError:
        return None
    try:
        hy.llvm_state.set_diskcache_enabled(False)
    except AttributeError:                 # older heyoka: no disk cache
        pass
    return hy


def dp_system(hy):
    """Hamilton's equations of the TOP double pendulum, y = (q1, q2, p1, p2)."""
    q1, q2, p1, p2 = hy.make_vars("q1", "q2", "p1", "p2")
    m12 = M._B * hy.cos(q1 - q2)
    det = M._A * M._D - m12 * m12
    v1 = (M._D * p1 - m12 * p2) / det
    v2 = (M._A * p2 - m12 * p1) / det
    w = M._B * hy.sin(q1 - q2) * v1 * v2        # 1/2 qdot^T dM/dq1 qdot = -w, and +w for q2
    return [(q1, v1), (q2, v2), (p1, -M._V1 * hy.sin(q1) - w), (p2, -M._V2 * hy.sin(q2) + w)]


def chain_system(hy, m, l, g=9.81):
    """The planar chain of point masses m_k on rods l_k, absolute angles q_k from the downward
    vertical, through heyoka.lagrangian; returns (system, names of the state variables in order)."""
    n = len(m)
    qs = [hy.make_vars(f"q{i}") for i in range(n)]
    vs = [hy.make_vars(f"v{i}") for i in range(n)]
    xd = yd = y = hy.expression(0.0)
    T = V = hy.expression(0.0)
    for k in range(n):
        xd = xd + l[k] * hy.cos(qs[k]) * vs[k]
        yd = yd + l[k] * hy.sin(qs[k]) * vs[k]
        y = y - l[k] * hy.cos(qs[k])
        T = T + 0.5 * m[k] * (xd * xd + yd * yd)
        V = V + m[k] * g * y
    sys_ = hy.lagrangian(T - V, qs, vs)
    return sys_, [str(var) for var, _ in sys_]


class Heyoka(Method):
    """heyoka.taylor_adaptive at tolerance tol; energy(Y) maps states (rows) to H."""
    family = "heyoka (Taylor, LLVM)"

    def __init__(self, hy, name, label, grid, sys_, y0, energy, compact=False):
        super().__init__(name, label, self.family, grid)
        self.hy, self.sys, self.y0, self.energy, self.compact = hy, sys_, np.asarray(y0, float), energy, compact
        self.H0 = float(energy(self.y0[None])[0])
        self._ta, self.jit = {}, {}

    def ta(self, tol):
        """The integrator at tol, built once; its build (JIT compile, in-memory cache cleared first:
        the disk cache is off, see load) timed as the tolerance's JIT time."""
        if tol not in self._ta:
            self.hy.llvm_state.clear_memcache()
            t0 = time.perf_counter()
            self._ta[tol] = self.hy.taylor_adaptive(self.sys, self.y0, tol=tol, compact_mode=self.compact)
            self.jit[tol] = time.perf_counter() - t0
        return self._ta[tol]

    def _reset(self, tol):
        ta = self.ta(tol)
        ta.time = 0.0
        ta.state[:] = self.y0
        return ta

    def measure(self, tol, T):
        ta = self._reset(tol)
        states = [self.y0.copy()]

        def record(ta_):
            states.append(ta_.state.copy())
            return True

        t0 = time.perf_counter()
        res = ta.propagate_until(T, callback=record)
        wall = time.perf_counter() - t0
        if "time_limit" not in str(res[0]):
            return dict(status=f"failed: {res[0]}", wall=wall, e_H=float("inf"))
        Y = np.array(states)
        eh = float(np.max(np.abs(self.energy(Y) - self.H0)) / abs(self.H0))
        return dict(status="ok", e_H=eh, steps=int(res[3]), wall=wall, order=ta.order)

    def timer(self, tol, T):
        def run():
            ta = self._reset(tol)
            c0, t0 = time.process_time(), time.perf_counter()
            ta.propagate_until(T)
            return time.perf_counter() - t0, time.process_time() - c0
        return run

    def measure_jit(self, tol):
        self.ta(tol)
        return self.jit[tol]

    def extra(self, tol):
        return dict(jit_s=self.jit.get(tol, NAN), order=self.ta(tol).order)


def dp_energy_rows(Y):
    """H of double-pendulum states (rows q1, q2, p1, p2)."""
    return M.dp_energy(Y[:, :2], Y[:, 2:])
