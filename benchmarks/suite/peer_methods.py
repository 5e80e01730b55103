"""Our integrators and the work-precision solvers as methods of the peer searches (sections 8, 10).

Ours run ``sp.integrate`` in calls of at most ``chunk`` steps, each starting from the last state of
the one before (the stored trajectory of a 10^8-step run would not fit in memory; the first step
of a call has no previous step for its Newton predictor, once per ~10^6 steps).  The timed region
is the integration calls, trajectory storage included; e_H is computed per call outside it."""
import time

import numpy as np

import symplectic as sp

from .common import clock, timer
from .peers import Method
from .solvers import steps_grid

NAN = float("nan")


class Ours(Method):
    """symplectic's `method` on `system` with a fixed step h (the grid: step sizes, largest first)."""
    kind = "h"
    ours = True

    def __init__(self, system, method, q0, p0, energy, grid, chunk, newton="full", name=None, label=None):
        super().__init__(name or method, label or f"symplectic {method}", "symplectic (C)", grid)
        self.system, self.method, self.newton, self.chunk = system, method, newton, int(chunk)
        self.q0, self.p0, self.energy = np.asarray(q0, float), np.asarray(p0, float), energy
        self.H0 = float(energy(self.q0[None], self.p0[None])[0])

    def integrate(self, h, T, on_call=None):
        N = int(round(T / h))
        q, p, done = self.q0, self.p0, 0
        while done < N:
            n = min(self.chunk, N - done)
            tr = sp.integrate(self.system, q, p, h, n, method=self.method, t0=done * h, newton=self.newton)
            if on_call is not None:
                on_call(tr)
            q, p, done = tr.q[-1], tr.p[-1], done + n
        return N

    def measure(self, h, T):
        """e_H and the Newton iterations of a run; its wall time is that of the integration alone
        (the e_H evaluation between the calls, ~0.5 ms a state at n = 128, is left out), as the
        peers' measurements time their integration alone, so that the searches' projections of run
        times compare like with like."""
        acc = dict(e_H=0.0, it=0, eval=0.0)

        def on_call(tr):
            t0 = time.perf_counter()
            E = self.energy(tr.q, tr.p)
            acc["e_H"] = max(acc["e_H"], float(np.max(np.abs(E - self.H0)) / abs(self.H0)))
            acc["it"] += int(np.sum(tr.newton_iterations))
            acc["eval"] += time.perf_counter() - t0

        try:
            N, wall, _ = clock(lambda: self.integrate(h, T, on_call))
        except sp.ConvergenceError as exc:
            return dict(status=f"failed: {exc.reason}", e_H=float("inf"), wall=NAN)
        return dict(status="ok", e_H=acc["e_H"], steps=N, wall=wall - acc["eval"], newton=acc["it"] / max(N, 1))

    def timer(self, h, T):
        return timer(lambda: self.integrate(h, T))


class FromSolver(Method):
    """A solver of the work-precision sections (SciPy, CVODE, GSL on the double pendulum)."""

    def __init__(self, solver, grid, max_T=float("inf")):
        super().__init__(solver.name, solver.label, solver.family, grid)
        self.solver, self.max_T = solver, max_T

    def measure(self, tol, T):
        r = self.solver.run(tol, T=T)
        return dict(status=r["status"], e_H=r["e_H"], steps=r.get("steps"), wall=r["wall"])

    def timer(self, tol, T):
        return lambda: self.solver.time_only(tol, T)


def h_grid(T, h_max, h_min, per_octave):
    """Step sizes T/N, N on a geometric grid 2^(1/per_octave) apart, largest h first (T/h is an
    integer for every horizon that is a multiple of T)."""
    return [T / N for N in steps_grid(T, h_max, h_min, per_octave)]
