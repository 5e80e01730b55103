"""The methods compared in the work-precision sections: a solver has a one-parameter accuracy
knob (a step count N for the fixed-step symplectic methods, a tolerance for the adaptive ones),
``run(param)`` (time and accuracy of one run) and ``time_only(param)`` (time alone)."""
import math
import warnings

import numpy as np

import symplectic as sp
import models as M

from .common import clock

INF, NAN = float("inf"), float("nan")


class Result(dict):
    """One run: solver, param, wall, cpu, e_H, err_final, steps, nfev, newton."""


def e_H(energy, q, p, H0):
    """max |H - H0| / |H0| over the stored states."""
    E = energy(q, p)
    return float(np.max(np.abs(E - H0)) / abs(H0))


def rel(y, ref):
    return float(np.max(np.abs(np.asarray(y) - ref)) / np.max(np.abs(ref)))


class Problem:
    def __init__(self, name, T, h_max, h_min):
        P = M.PROBLEMS[name]
        self.name = name
        self.system = P["system"]()
        self.q0 = np.asarray(P["q0"](), float)
        self.p0 = np.asarray(P["p0"](), float)
        self.y0 = np.r_[self.q0, self.p0]
        self.n = len(self.q0)
        self.rhs = P["rhs"]
        self.rhs_inplace = P["rhs_inplace"]
        self.energy = P["energy"]
        self.H0 = float(self.energy(self.q0[None], self.p0[None])[0])
        self.T = T
        self.h_max = h_max
        self.h_min = h_min
        self.ref = None
        self.ref_note = ""


class Solver:
    """A method with a 1-parameter accuracy knob (step count N or tolerance)."""
    kind = "tol"

    def __init__(self, problem, name, label, family, grid):
        self.pb = problem
        self.name, self.label, self.family, self.grid = name, label, family, list(grid)

    def param_str(self, tol):
        return f"tol={tol:.3g}"

    def solve(self, prm, T=None):
        raise NotImplementedError

    def time_only(self, prm, T=None):
        _, w, c = clock(lambda: self.solve(prm, T))
        return w, c

    def failed(self, prm, message, w=NAN, c=NAN, **extra):
        return Result(solver=self.name, param=prm, tol=None if self.kind == "h" else prm,
                      status=f"failed: {message}", wall=w, cpu=c, e_H=INF, err_final=INF, **extra)

    def finish(self, res, y, T):
        """Add the final-state error against the problem's reference (at its own horizon only)."""
        pb = self.pb
        res["err_final"] = rel(y, pb.ref) if (pb.ref is not None and T is None) else NAN
        res["y_final"] = y
        return res

    def from_states(self, tol, w, c, Q, P, steps, nfev, T):
        """Result of an adaptive run whose accepted states are the rows of (Q, P)."""
        pb = self.pb
        res = Result(solver=self.name, param=tol, h=None, tol=tol, status="ok", wall=w, cpu=c,
                     e_H=e_H(pb.energy, Q, P, pb.H0), steps=steps, nfev=nfev, newton=None)
        return self.finish(res, np.r_[Q[-1], P[-1]], T)


class VI(Solver):
    """A built-in (or any) symplectic System through sp.integrate, fixed step h = T/N."""
    kind = "h"

    def __init__(self, problem, method, grid, system=None, label=None, newton="full"):
        super().__init__(problem, method, label or f"symplectic {method}", "symplectic (C)", grid)
        self.method, self.newton = method, newton
        self.system = system or problem.system

    def param_str(self, N):
        return f"h={self.pb.T / N:.4g}"

    def solve(self, N, T=None):
        T = self.pb.T if T is None else T
        return sp.integrate(self.system, self.pb.q0, self.pb.p0, T / N, N, method=self.method,
                            newton=self.newton)

    def run(self, N, T=None):
        pb = self.pb
        try:
            tr, w, c = clock(lambda: self.solve(N, T))
        except sp.ConvergenceError as exc:
            return self.failed(N, exc.reason, h=pb.T / N, steps=N)
        res = Result(solver=self.name, param=N, h=(pb.T if T is None else T) / N, tol=None,
                     status="ok", wall=w, cpu=c, e_H=e_H(pb.energy, tr.q, tr.p, pb.H0), steps=N,
                     nfev=None, newton=float(np.mean(tr.newton_iterations)) if N else 0.0)
        return self.finish(res, np.r_[tr.q[-1], tr.p[-1]], T)


class SciPy(Solver):
    def __init__(self, problem, method, grid, rhs=None, label=None, name=None):
        super().__init__(problem, name or method, label or f"SciPy {method}", "SciPy solve_ivp", grid)
        self.method = method
        self.rhs = rhs or problem.rhs

    def solve(self, tol, T=None):
        from scipy.integrate import solve_ivp
        T = self.pb.T if T is None else T
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return solve_ivp(self.rhs, (0.0, T), self.pb.y0, method=self.method, rtol=tol, atol=tol)

    def run(self, tol, T=None):
        sol, w, c = clock(lambda: self.solve(tol, T))
        if sol.status != 0:
            return self.failed(tol, sol.message, w, c)
        n = self.pb.n
        return self.from_states(tol, w, c, sol.y[:n].T, sol.y[n:].T, len(sol.t) - 1, int(sol.nfev), T)


class Cvode(Solver):
    def __init__(self, problem, grid, method="Adams"):
        super().__init__(problem, f"CVODE-{method}", f"SUNDIALS CVODE ({method})", "SUNDIALS (sksundae)",
                         grid)
        self.method = method

    def solve(self, tol, T=None):
        from sksundae.cvode import CVODE
        T = self.pb.T if T is None else T
        s = CVODE(self.pb.rhs_inplace, method=self.method, rtol=tol, atol=tol, max_num_steps=10 ** 9)
        return s.solve(np.array([0.0, T]), self.pb.y0)

    def run(self, tol, T=None):
        r, w, c = clock(lambda: self.solve(tol, T))
        if not r.success:
            return self.failed(tol, r.message, w, c)
        n = self.pb.n
        Y = np.asarray(r.y)
        return self.from_states(tol, w, c, Y[:, :n], Y[:, n:], len(r.t) - 1, int(r.nfev), T)


class GSL(Solver):
    """GSL rk8pd, benchmarks/compiled/gsl_rk8pd_dp.c (double pendulum only).  The program times
    itself (CLOCK_MONOTONIC, the same definition as the Python timings)."""

    def __init__(self, problem, grid, exe, gslmod):
        super().__init__(problem, "GSL-rk8pd", "GSL rk8pd (C, order 8)", "GSL (compiled C)", grid)
        self.exe, self.gsl = exe, gslmod

    def time_only(self, tol, T=None):
        r = self.gsl.run(self.exe, self.pb.T if T is None else T, tol, repeats=1, track=False)
        return r["seconds"], NAN

    def run(self, tol, T=None):
        r = self.gsl.run(self.exe, self.pb.T if T is None else T, tol, repeats=1)
        res = Result(solver=self.name, param=tol, tol=tol, status="ok", wall=r["seconds"],
                     cpu=NAN, e_H=r["e_H"], steps=r["steps"], nfev=None, newton=None)
        return self.finish(res, np.asarray(r["y_final"]), T)


def steps_grid(T, h_max, h_min, per_octave):
    """Step counts N from T/h_max up to T/h_min, geometric, 2^(1/per_octave) apart."""
    N0 = max(1, math.ceil(T / h_max))
    N1 = T / h_min
    out, k = [], 0
    while True:
        N = int(round(N0 * 2 ** (k / per_octave)))
        if N > N1:
            return out
        if not out or N != out[-1]:
            out.append(N)
        k += 1


def n_grid(pb, per_octave):
    return steps_grid(pb.T, pb.h_max, pb.h_min, per_octave)


def tol_grid(per_decade, lo=3.0, hi=13.5):
    return [float(10.0 ** -e) for e in np.arange(lo, hi + 1e-9, 1.0 / per_decade)]
