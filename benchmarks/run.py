#!/usr/bin/env python3
"""The symplectic benchmark suite: everything side by side, in one run.

    python benchmarks/run.py [--quick] [--out DIR] [--results-md FILE]

Sections (numbers in the CSVs of the out directory, the summary in RESULTS.md):

1. work-precision on the TOP paper's double pendulum (100 s): time to reach
   e_H = max|H - H0|/|H0| <= 1e-6, 1e-8, 1e-10 for the built-in C methods
   (cheapest step h = T/N on a geometric grid of N) against SciPy's solve_ivp
   (DOP853, RK45, Radau; rtol = atol on a geometric grid), SUNDIALS CVODE
   (scikit-sundae, if installed) and GSL rk8pd (compiled C, if libgsl is
   there); final-state error against a tight reference;
2. per-step cost of the built-in double pendulum for each method at h = 0.1, 0.01;
3. the long-horizon story: e_H and cost at 100, 1000, 10^4 s for fixed h
   (Simpson, Lobatto) and fixed tolerance (DOP853, GSL rk8pd);
4. the double pendulum as Python callables / vectorized / combined / compiled
   callback against the built-in system;
5. the n-link chain, n = 2 ... 64, full Newton and chord Newton;
6. an ensemble of double-pendulum initial conditions on 1 and 2 threads;
7. work-precision on the pendulum and the Lagrange top.

Timing: wall-clock time (time.perf_counter) of the integration call alone
(energies and errors are computed outside the timed region), median of
repeats that are interleaved round-robin between the configurations being
compared, so that slow phases of a noisy shared machine hit all of them.  CPU
time (time.process_time) is recorded next to it in the CSVs.  The GSL program
times itself (CLOCK_MONOTONIC, same definition).
"""
import argparse
import datetime
import gc
import importlib.util
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import symplectic as sp  # noqa: E402
import models as M  # noqa: E402

TARGETS = (1e-6, 1e-8, 1e-10)

FULL = dict(
    quick=False,
    T=100.0,
    n_per_octave=4,            # step grid: N = N0 * 2^(k/4)
    tol_per_decade=4,          # tolerance grid for the cheap adaptive solvers
    slow_tol_per_decade=2,     # ... for RK45 and Radau (seconds per run)
    cap=25.0,                  # stop a solver's search after a run longer than this (s)
    rounds=7,                  # interleaved repeats of the chosen configurations
    budget=6.0,                # ... but no more repeats once a config used this many seconds
    perstep_steps=200_000,
    perstep_rounds=9,
    horizons=(100.0, 1000.0, 10_000.0),
    horizon_budget=20.0,
    hold_dop_max_T=1000.0,
    forms_steps=4000,
    forms_builtin_steps=100_000,
    forms_rounds=7,
    chain_ns=(2, 4, 8, 16, 32, 64),
    chain_rounds=7,
    chain_steps=200,           # a 2 s segment for every n, repeated chain_work / (n^2 steps) times
    chain_work=2e5,
    chain_long_steps=1000,     # untimed robustness run
    ens_K=1000,
    ens_steps=1000,
    ens_rounds=11,
    ens_max_rounds=40,
    ens_quiet=5,
    small_cap=10.0,
    small_rounds=5,
)
QUICK = dict(
    FULL,
    quick=True,
    n_per_octave=2,
    tol_per_decade=2,
    slow_tol_per_decade=1,
    cap=0.8,
    rounds=3,
    budget=1.5,
    perstep_steps=20_000,
    perstep_rounds=3,
    horizons=(100.0, 1000.0),
    horizon_budget=3.0,
    hold_dop_max_T=100.0,
    forms_steps=1000,
    forms_builtin_steps=20_000,
    forms_rounds=3,
    chain_ns=(2, 4, 8, 16, 32),
    chain_rounds=3,
    chain_work=5e4,
    chain_long_steps=500,
    ens_K=200,
    ens_steps=500,
    ens_rounds=3,
    ens_max_rounds=6,
    ens_quiet=2,
    small_cap=0.5,
    small_rounds=3,
)


# ===================================================================== helpers
def say(*args):
    print(*args, flush=True)


def clock(fn):
    """Run fn(); return (its result, wall seconds, cpu seconds)."""
    gc.collect()
    c0 = time.process_time()
    w0 = time.perf_counter()
    out = fn()
    w = time.perf_counter() - w0
    return out, w, time.process_time() - c0


def cpu_busy():
    """Seconds of CPU time used by everything on the machine so far (all CPUs, /proc/stat),
    or None where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    steal = v[7] if len(v) > 7 else 0
    return (sum(v[:8]) - idle - steal) / os.sysconf("SC_CLK_TCK")


def foreign_load(fn):
    """Run fn(); return (result, wall, own cpu, CPU-seconds used by other processes meanwhile)."""
    b0, c0, w0 = cpu_busy(), time.process_time(), time.perf_counter()
    out = fn()
    w, c, b1 = time.perf_counter() - w0, time.process_time() - c0, cpu_busy()
    other = float("nan") if b0 is None else max(0.0, (b1 - b0) - c)
    return out, w, c, other


def med(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return statistics.median(xs) if xs else float("nan")


def interleave(configs, rounds, budget=None, seeded=None):
    """Round-robin timing.  configs: {key: fn() -> (wall, cpu)}.

    Every config runs in round 0; in later rounds a config is skipped once its
    samples add up to more than ``budget`` seconds.  The order of the configs
    alternates between rounds.  Returns {key: [(wall, cpu), ...]}.
    """
    samples = {k: list((seeded or {}).get(k, [])) for k in configs}
    keys = list(configs)
    for r in range(rounds):
        order = keys if r % 2 == 0 else keys[::-1]
        for k in order:
            if samples[k] and budget is not None and sum(s[0] for s in samples[k]) > budget:
                continue
            samples[k].append(configs[k]())
    return samples


def summarize(samples):
    w = [s[0] for s in samples]
    c = [s[1] for s in samples]
    return dict(wall=med(w), wall_min=min(w), wall_max=max(w), cpu=med(c), samples=len(w))


def write_csv(path, rows, columns=None):
    import csv
    if not rows:
        return
    columns = columns or list(rows[0])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt_csv(r.get(k)) for k in columns})


def _fmt_csv(v):
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        v = float(v)
        return repr(v)
    return "" if v is None else v


def fmt_t(seconds):
    """Human-readable time."""
    if seconds is None or not math.isfinite(seconds):
        return "–"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_e(x):
    return "–" if x is None or not math.isfinite(x) else f"{x:.2e}"


def fmt_x(x, digits=3):
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}g}×"


def machine_info():
    info = {}
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            k, _, v = line.partition(":")
            info.setdefault("lscpu " + k.strip(), v.strip())
    except OSError:
        pass
    gcc = shutil.which("gcc") or shutil.which("cc")
    cc_version = ""
    if gcc:
        cc_version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "csrc", "symplectic"],
                               capture_output=True, text=True).stdout.strip()
        commit += " (+ local changes)" if dirty else ""
    except OSError:
        commit = "?"
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for mod in ("scipy", "sksundae", "matplotlib"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:                      # noqa: BLE001
            versions[mod] = "not installed"
    return dict(
        model=info.get("lscpu Model name", platform.processor() or "?"),
        cpus=info.get("lscpu CPU(s)", str(os.cpu_count())),
        threads_per_core=info.get("lscpu Thread(s) per core", "?"),
        mhz=info.get("lscpu CPU MHz", info.get("lscpu CPU max MHz", "?")),
        hypervisor=info.get("lscpu Hypervisor vendor", ""),
        platform=platform.platform(),
        compiler=cc_version,
        commit=commit,
        versions=versions,
    )


# ===================================================================== solvers
class Result(dict):
    """One run: solver, param, wall, cpu, e_H, err_final, steps, nfev, newton."""


def _eH(energy, q, p, H0):
    E = energy(q, p)
    return float(np.max(np.abs(E - H0)) / abs(H0))


def _rel(y, ref):
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
    kind = "?"

    def __init__(self, name, label, family, grid):
        self.name, self.label, self.family, self.grid = name, label, family, list(grid)

    def param_str(self, prm):
        return str(prm)


class VI(Solver):
    """A built-in (or any) symplectic System through sp.integrate, fixed step h = T/N."""
    kind = "h"

    def __init__(self, problem, method, grid, system=None, label=None, newton="full"):
        super().__init__(method, label or f"symplectic {method}", "symplectic (C)", grid)
        self.pb, self.method, self.newton = problem, method, newton
        self.system = system or problem.system

    def param_str(self, N):
        return f"h={self.pb.T / N:.4g}"

    def integrate(self, N, T=None):
        T = self.pb.T if T is None else T
        return sp.integrate(self.system, self.pb.q0, self.pb.p0, T / N, N, method=self.method,
                            newton=self.newton)

    def time_only(self, N, T=None):
        _, w, c = clock(lambda: self.integrate(N, T))
        return w, c

    def run(self, N, T=None):
        pb = self.pb
        try:
            tr, w, c = clock(lambda: self.integrate(N, T))
        except sp.ConvergenceError as exc:
            return Result(solver=self.name, param=N, h=pb.T / N, status=f"failed: {exc.reason}",
                          wall=float("nan"), cpu=float("nan"), e_H=float("inf"), err_final=float("inf"),
                          steps=N)
        y = np.r_[tr.q[-1], tr.p[-1]]
        res = Result(solver=self.name, param=N, h=(pb.T if T is None else T) / N, tol=None,
                     status="ok", wall=w, cpu=c, e_H=_eH(pb.energy, tr.q, tr.p, pb.H0), steps=N,
                     nfev=None, newton=float(np.mean(tr.newton_iterations)) if N else 0.0)
        res["err_final"] = _rel(y, pb.ref) if (pb.ref is not None and T is None) else float("nan")
        res["y_final"] = y
        return res


class SciPy(Solver):
    kind = "tol"

    def __init__(self, problem, method, grid, rhs=None, label=None, name=None):
        super().__init__(name or method, label or f"SciPy {method}", "SciPy solve_ivp", grid)
        self.pb, self.method = problem, method
        self.rhs = rhs or problem.rhs

    def param_str(self, tol):
        return f"tol={tol:.3g}"

    def solve(self, tol, T=None):
        from scipy.integrate import solve_ivp
        T = self.pb.T if T is None else T
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return solve_ivp(self.rhs, (0.0, T), self.pb.y0, method=self.method, rtol=tol, atol=tol)

    def time_only(self, tol, T=None):
        _, w, c = clock(lambda: self.solve(tol, T))
        return w, c

    def run(self, tol, T=None):
        pb = self.pb
        sol, w, c = clock(lambda: self.solve(tol, T))
        if sol.status != 0:
            return Result(solver=self.name, param=tol, tol=tol, status=f"failed: {sol.message}",
                          wall=w, cpu=c, e_H=float("inf"), err_final=float("inf"))
        n = pb.n
        Y = sol.y
        res = Result(solver=self.name, param=tol, h=None, tol=tol, status="ok", wall=w, cpu=c,
                     e_H=_eH(pb.energy, Y[:n].T, Y[n:].T, pb.H0), steps=len(sol.t) - 1,
                     nfev=int(sol.nfev), newton=None)
        res["err_final"] = _rel(Y[:, -1], pb.ref) if (pb.ref is not None and T is None) else float("nan")
        res["y_final"] = Y[:, -1]
        return res


class Cvode(Solver):
    kind = "tol"

    def __init__(self, problem, grid, method="Adams"):
        super().__init__(f"CVODE-{method}", f"SUNDIALS CVODE ({method})", "SUNDIALS (sksundae)", grid)
        self.pb, self.method = problem, method

    def param_str(self, tol):
        return f"tol={tol:.3g}"

    def solve(self, tol, T=None):
        from sksundae.cvode import CVODE
        T = self.pb.T if T is None else T
        s = CVODE(self.pb.rhs_inplace, method=self.method, rtol=tol, atol=tol, max_num_steps=10 ** 9)
        return s.solve(np.array([0.0, T]), self.pb.y0)

    def time_only(self, tol, T=None):
        _, w, c = clock(lambda: self.solve(tol, T))
        return w, c

    def run(self, tol, T=None):
        pb = self.pb
        r, w, c = clock(lambda: self.solve(tol, T))
        if not r.success:
            return Result(solver=self.name, param=tol, tol=tol, status=f"failed: {r.message}",
                          wall=w, cpu=c, e_H=float("inf"), err_final=float("inf"))
        n = pb.n
        Y = np.asarray(r.y)
        res = Result(solver=self.name, param=tol, tol=tol, status="ok", wall=w, cpu=c,
                     e_H=_eH(pb.energy, Y[:, :n], Y[:, n:], pb.H0), steps=len(r.t) - 1,
                     nfev=int(r.nfev), newton=None)
        res["err_final"] = _rel(Y[-1], pb.ref) if (pb.ref is not None and T is None) else float("nan")
        res["y_final"] = Y[-1]
        return res


class GSL(Solver):
    """GSL rk8pd, benchmarks/compiled/gsl_rk8pd_dp.c (double pendulum only)."""
    kind = "tol"

    def __init__(self, problem, grid, exe, gslmod):
        super().__init__("GSL-rk8pd", "GSL rk8pd (C, order 8)", "GSL (compiled C)", grid)
        self.pb, self.exe, self.gsl = problem, exe, gslmod

    def param_str(self, tol):
        return f"tol={tol:.3g}"

    def time_only(self, tol, T=None):
        r = self.gsl.run(self.exe, self.pb.T if T is None else T, tol, repeats=1)
        return r["seconds"], float("nan")

    def run(self, tol, T=None):
        pb = self.pb
        r = self.gsl.run(self.exe, pb.T if T is None else T, tol, repeats=1)
        res = Result(solver=self.name, param=tol, tol=tol, status="ok", wall=r["seconds"],
                     cpu=float("nan"), e_H=r["e_H"], steps=r["steps"], nfev=None, newton=None)
        y = np.asarray(r["y_final"])
        res["err_final"] = _rel(y, pb.ref) if (pb.ref is not None and T is None) else float("nan")
        res["y_final"] = y
        return res


def n_grid(pb, per_octave):
    N0 = max(1, math.ceil(pb.T / pb.h_max))
    N1 = pb.T / pb.h_min
    out, k = [], 0
    while True:
        N = int(round(N0 * 2 ** (k / per_octave)))
        if N > N1:
            return out
        if not out or N != out[-1]:
            out.append(N)
        k += 1


def tol_grid(per_decade, lo=3.0, hi=13.5):
    return [float(10.0 ** -e) for e in np.arange(lo, hi + 1e-9, 1.0 / per_decade)]


def search(solver, stop_at, cap, log=True):
    """Run the grid from cheap to expensive until e_H <= stop_at twice in a row,
    a run takes longer than cap seconds, or the grid ends."""
    pts, below, fails = [], 0, 0
    for prm in solver.grid:
        r = solver.run(prm)
        pts.append(r)
        if log:
            say(f"    {solver.label:28s} {solver.param_str(prm):14s} e_H={fmt_e(r['e_H']):9s} "
                f"err={fmt_e(r.get('err_final')):9s} {fmt_t(r['wall'])}")
        if r["status"] != "ok":
            fails += 1
            if fails >= 3 and solver.kind == "tol":
                break
            continue
        below = below + 1 if r["e_H"] <= stop_at else 0
        if below >= 2:
            break
        if r["wall"] > cap:
            r["capped"] = True
            break
    return pts


def choose(pts, target):
    """The cheapest grid point from which on every tested finer point reaches
    the target (a reliably reached accuracy, not a lucky coarse step)."""
    best = None
    for i in range(len(pts) - 1, -1, -1):
        if pts[i]["status"] == "ok" and pts[i]["e_H"] <= target:
            best = i
        else:
            break
    return None if best is None else pts[best]


def work_precision(pb, solvers, cfg, stop_at, cap, rounds, budget, targets=TARGETS):
    """Search every solver, choose per target, re-time the chosen configurations
    interleaved.  Returns (all points, chosen rows)."""
    all_pts = []
    curves = {}
    for s in solvers:
        say(f"  {s.label}")
        pts = search(s, stop_at, cap)
        curves[s.name] = pts
        for r in pts:
            all_pts.append(dict(problem=pb.name, solver=s.name, label=s.label, family=s.family,
                                **{k: v for k, v in r.items() if k not in ("y_final", "solver")}))
    picks = {}
    for s in solvers:
        for tgt in targets:
            r = choose(curves[s.name], tgt)
            if r is not None:
                picks[(s.name, tgt)] = r
    configs = {}
    by_name = {s.name: s for s in solvers}
    for (name, tgt), r in picks.items():
        key = (name, r["param"])
        if key not in configs:
            s = by_name[name]
            configs[key] = (lambda s=s, prm=r["param"]: s.time_only(prm))
    say(f"  re-timing {len(configs)} chosen configurations, {rounds} interleaved rounds")
    timing = {k: summarize(v) for k, v in interleave(configs, rounds, budget).items()}
    rows = []
    for s in solvers:
        for tgt in targets:
            r = picks.get((s.name, tgt))
            last = curves[s.name][-1] if curves[s.name] else {}
            if r is None:
                why = "capped" if last.get("capped") else "grid end"
                best = min((p["e_H"] for p in curves[s.name] if p["status"] == "ok"), default=float("inf"))
                rows.append(dict(problem=pb.name, target=tgt, solver=s.name, label=s.label,
                                 reached=False, note=f"not reached ({why}; best e_H {fmt_e(best)})"))
                continue
            t = timing[(s.name, r["param"])]
            rows.append(dict(problem=pb.name, target=tgt, solver=s.name, label=s.label, reached=True,
                             param=s.param_str(r["param"]), h=r.get("h"), tol=r.get("tol"),
                             steps=r.get("steps"), nfev=r.get("nfev"), newton=r.get("newton"),
                             e_H=r["e_H"], err_final=r.get("err_final"), **t, note=""))
    return all_pts, rows, curves


def cell(rows, solver, target, key="wall"):
    for r in rows:
        if r["solver"] == solver and r["target"] == target and r.get("reached"):
            return r.get(key)
    return None


# ===================================================================== sections
def section_dp(cfg, ctx):
    say("== 1. double pendulum work-precision (T = 100 s)")
    pb = Problem("double_pendulum", cfg["T"], h_max=0.2, h_min=1e-5)
    # reference: Lobatto (order 8) at h = 0.0025, checked against h = 0.005 and DOP853 at 1e-13
    ref = sp.integrate(pb.system, pb.q0, pb.p0, pb.T / 40000, 40000, method="lobatto5")
    ref2 = sp.integrate(pb.system, pb.q0, pb.p0, pb.T / 20000, 20000, method="lobatto5")
    pb.ref = np.r_[ref.q[-1], ref.p[-1]]
    d_h = _rel(np.r_[ref2.q[-1], ref2.p[-1]], pb.ref)
    d_dop = _rel(SciPy(pb, "DOP853", []).solve(1e-13).y[:, -1], pb.ref)
    pb.ref_note = (f"lobatto5 (order 8) with h = 0.0025; it differs from h = 0.005 by {d_h:.1e} and "
                   f"from DOP853 at rtol = atol = 1e-13 by {d_dop:.1e} (relative, max norm over (q, p))")
    say("  reference:", pb.ref_note)
    ng = n_grid(pb, cfg["n_per_octave"])
    fast = tol_grid(cfg["tol_per_decade"])
    slow = tol_grid(cfg["slow_tol_per_decade"])
    solvers = [VI(pb, m, ng) for m in ("simpson", "lobatto4", "lobatto5", "midpoint", "rk4")]
    solvers += [SciPy(pb, "DOP853", fast),
                SciPy(pb, "DOP853", fast, rhs=generic_rhs(), name="DOP853-generic",
                      label="SciPy DOP853 (generic RHS)"),
                SciPy(pb, "RK45", slow), SciPy(pb, "Radau", slow)]
    if ctx["sksundae"]:
        solvers.append(Cvode(pb, fast))
    if ctx["gsl_exe"]:
        solvers.append(GSL(pb, tol_grid(cfg["tol_per_decade"], hi=14.0), ctx["gsl_exe"], ctx["gsl"]))
    pts, rows, curves = work_precision(pb, solvers, cfg, stop_at=min(TARGETS), cap=cfg["cap"],
                                       rounds=cfg["rounds"], budget=cfg["budget"])
    return dict(problem=pb, points=pts, rows=rows, curves=curves, solvers=solvers)


def generic_rhs():
    """Hamilton's equations from the NumPy callables M(q), dM/dq, grad V (np.linalg.solve +
    einsum): what one writes for a general system, as in tests/conftest.py."""
    c = M.dp_callables()._callables
    mass, mass_grad, pot_grad = c["mass"], c["mass_grad"], c["potential_grad"]

    def f(t, y):
        q, p = y[:2], y[2:]
        v = np.linalg.solve(mass(q), p)
        return np.concatenate([v, -pot_grad(q) + 0.5 * np.einsum("kij,i,j->k", mass_grad(q), v, v)])

    return f


def section_perstep(cfg):
    say("== 2. per-step cost, built-in double pendulum")
    dp = M.dp_system()
    N = cfg["perstep_steps"]
    methods = ("simpson", "midpoint", "rk4", "lobatto2", "lobatto4", "lobatto5")
    configs, iters = {}, {}
    for m in methods:
        for h in (0.1, 0.01):
            tr = sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=m)
            iters[(m, h)] = float(np.mean(tr.newton_iterations))
            configs[(m, h)] = (lambda m=m, h=h: clock(lambda: sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N,
                                                                             method=m))[1:])
    samples = interleave(configs, cfg["perstep_rounds"])
    rows = []
    for (m, h), s in samples.items():
        t = summarize(s)
        rows.append(dict(method=m, h=h, steps=N, us_per_step=t["wall"] / N * 1e6,
                         us_min=t["wall_min"] / N * 1e6, us_max=t["wall_max"] / N * 1e6,
                         cpu_us_per_step=t["cpu"] / N * 1e6, newton_per_step=iters[(m, h)],
                         samples=t["samples"]))
        say(f"  {m:9s} h={h:<5g} {rows[-1]['us_per_step']:.3f} µs/step "
            f"(min {rows[-1]['us_min']:.3f}, max {rows[-1]['us_max']:.3f}), {iters[(m, h)]:.2f} Newton it/step")
    return rows


def section_horizon(cfg, dp_res, ctx):
    say("== 3. long horizons")
    pb = dp_res["problem"]
    rows8 = dp_res["rows"]
    by = {s.name: s for s in dp_res["solvers"]}
    picks = []
    for name in ("simpson", "lobatto5", "DOP853", "GSL-rk8pd", "CVODE-Adams"):
        if name not in by:
            continue
        r = next((r for r in rows8 if r["solver"] == name and r["target"] == 1e-8 and r["reached"]), None)
        if r is None:
            continue
        prm = round(pb.T / r["h"]) if by[name].kind == "h" else r["tol"]
        picks.append((by[name], prm))
    configs, first, meta = {}, {}, {}
    for s, prm in picks:
        for T in cfg["horizons"]:
            if s.kind == "h":
                N = int(round(prm * T / pb.T))
                res = s.run(N, T=T)
                fn = (lambda s=s, N=N, T=T: s.time_only(N, T))
                knob = s.param_str(prm)
            else:
                res = s.run(prm, T=T)
                fn = (lambda s=s, prm=prm, T=T: s.time_only(prm, T))
                knob = s.param_str(prm)
            key = (s.name, T)
            configs[key] = fn
            first[key] = [(res["wall"], res["cpu"])]
            meta[key] = dict(solver=s.name, label=s.label, knob=knob, T=T, e_H=res["e_H"],
                             steps=res.get("steps"))
            say(f"  {s.label:28s} {knob:12s} T={T:<7g} e_H={fmt_e(res['e_H'])} {fmt_t(res['wall'])}")
    # cost of *holding* e_H <= 1e-8 over [0, T]: the adaptive solvers tighten their tolerance
    hold_target = 1e-8
    for name in ("GSL-rk8pd", "DOP853"):
        s = by.get(name)
        r100 = next((r for r in rows8 if r["solver"] == name and r["target"] == hold_target and r["reached"]),
                    None)
        if s is None or r100 is None:
            continue
        grid = [t for t in tol_grid(cfg["tol_per_decade"], hi=14.0) if t <= r100["tol"] * 1.0001]
        for T in cfg["horizons"]:
            key = ("hold", name, T)
            if name == "DOP853" and T > cfg["hold_dop_max_T"]:
                meta[key] = dict(solver=name, label=s.label, knob="not measured (cost)", T=T, e_H=float("nan"),
                                 steps=None, hold=True)
                continue
            found = None
            for tol in grid:
                res = s.run(tol, T=T)
                say(f"  hold e_H <= 1e-8: {s.label:28s} T={T:<7g} tol={tol:.3g} e_H={fmt_e(res['e_H'])} "
                    f"{fmt_t(res['wall'])}")
                if res["status"] == "ok" and res["e_H"] <= hold_target:
                    found = (tol, res)
                    break
                if res["wall"] > cfg["cap"]:
                    break
            if found is None:
                meta[key] = dict(solver=name, label=s.label, knob="not reached", T=T, e_H=float("nan"),
                                 steps=None, hold=True)
                continue
            tol, res = found
            configs[key] = (lambda s=s, tol=tol, T=T: s.time_only(tol, T))
            first[key] = [(res["wall"], res["cpu"])]
            meta[key] = dict(solver=name, label=s.label, knob=s.param_str(tol), T=T, e_H=res["e_H"],
                             steps=res.get("steps"), hold=True)
    timing = interleave(configs, cfg["rounds"], cfg["horizon_budget"], seeded=first)
    rows = []
    for key, m in meta.items():
        t = summarize(timing[key]) if key in timing else dict(wall=float("nan"), samples=0)
        rows.append(dict(hold=False, **m, **t) if "hold" not in m else dict(**m, **t))
    return rows


def section_forms(cfg, ctx):
    say("== 4. Python forms of the double pendulum, Simpson h = 0.01")
    h = 0.01
    forms = [("built-in C", M.dp_system(), cfg["forms_builtin_steps"])]
    cf = None
    try:
        cf = M.dp_cfunc(ctx["tmp"])
    except (OSError, subprocess.CalledProcessError) as exc:
        say("  cfunc: could not compile:", exc)
    if cf is not None:
        forms.append(("compiled callback (from_cfunc)", cf, cfg["forms_builtin_steps"]))
    forms += [("combined", M.dp_combined(), cfg["forms_steps"]),
              ("plain callables", M.dp_callables(), cfg["forms_steps"]),
              ("plain callables, no Hessians", M.dp_callables(hessians=False), cfg["forms_steps"]),
              ("vectorized", M.dp_vectorized(), cfg["forms_steps"])]
    ref = sp.integrate(forms[0][1], M.DP_Q0, M.DP_P0, h, 1000)
    configs, info = {}, {}
    for name, s, N in forms:
        tr = sp.integrate(s, M.DP_Q0, M.DP_P0, h, 1000)
        dev = max(float(np.max(np.abs(tr.q - ref.q))), float(np.max(np.abs(tr.p - ref.p))))
        info[name] = dict(N=N, newton=float(np.mean(tr.newton_iterations)), dev=dev)
        configs[name] = (lambda s=s, N=N: clock(lambda: sp.integrate(s, M.DP_Q0, M.DP_P0, h, N))[1:])
    samples = interleave(configs, cfg["forms_rounds"])
    rows = []
    base = None
    for name, s, N in forms:
        t = summarize(samples[name])
        us = t["wall"] / N * 1e6
        base = us if base is None else base
        rows.append(dict(form=name, steps=N, us_per_step=us, us_min=t["wall_min"] / N * 1e6,
                         us_max=t["wall_max"] / N * 1e6, cpu_us_per_step=t["cpu"] / N * 1e6,
                         vs_builtin=us / base, newton_per_step=info[name]["newton"],
                         max_dev_vs_builtin=info[name]["dev"], samples=t["samples"]))
        say(f"  {name:32s} {us:9.3f} µs/step  {us / base:7.1f}× built-in  (dev {info[name]['dev']:.1e})")
    return rows


def section_chain(cfg):
    say("== 5. n-link chain, Simpson h = 0.01, full vs chord Newton")
    N = cfg["chain_steps"]
    configs, info = {}, {}
    for n in cfg["chain_ns"]:
        ch = sp.systems.pendulum_chain(n)
        q0 = 0.5 * np.sin(1.3 * np.arange(1, n + 1))
        p0 = np.zeros(n)
        reps = int(max(1, round(cfg["chain_work"] / (n * n * N))))
        for nw in ("full", "chord"):
            tr = sp.integrate(ch, q0, p0, 0.01, N, newton=nw)
            E = tr.energy
            info[(n, nw)] = dict(reps=reps, newton=float(np.mean(tr.newton_iterations)),
                                 e_H=float(np.max(np.abs(E / E[0] - 1))), q=tr.q[-1])

            def one(ch=ch, q0=q0, p0=p0, nw=nw, reps=reps):
                for _ in range(reps):
                    sp.integrate(ch, q0, p0, 0.01, N, newton=nw)

            configs[(n, nw)] = (lambda one=one: clock(one)[1:])
    samples = interleave(configs, cfg["chain_rounds"])
    rows = []
    for n in cfg["chain_ns"]:
        row = dict(n=n, steps=N)
        for nw in ("full", "chord"):
            t = summarize(samples[(n, nw)])
            k = info[(n, nw)]["reps"] * N
            row.update({f"{nw}_us": t["wall"] / k * 1e6, f"{nw}_us_min": t["wall_min"] / k * 1e6,
                        f"{nw}_us_max": t["wall_max"] / k * 1e6,
                        f"{nw}_newton": info[(n, nw)]["newton"], "reps": info[(n, nw)]["reps"],
                        "samples": t["samples"]})
        row["chord_speedup"] = row["full_us"] / row["chord_us"]
        row["chord_vs_full_dq"] = float(np.max(np.abs(info[(n, "full")]["q"] - info[(n, "chord")]["q"])))
        row["e_H"] = info[(n, "full")]["e_H"]
        rows.append(row)
        say(f"  n={n:3d} full {row['full_us']:9.1f} µs/step ({row['full_newton']:.2f} it)  "
            f"chord {row['chord_us']:9.1f} µs/step ({row['chord_newton']:.2f} it)  "
            f"speed-up {row['chord_speedup']:.2f}")
    # robustness over a longer run (untimed): does each variant complete it?
    L = cfg["chain_long_steps"]
    for row in rows:
        n = row["n"]
        ch = sp.systems.pendulum_chain(n)
        q0 = 0.5 * np.sin(1.3 * np.arange(1, n + 1))
        for nw in ("full", "chord"):
            try:
                tr = sp.integrate(ch, q0, np.zeros(n), 0.01, L, newton=nw)
                row[f"{nw}_long"] = f"ok ({np.mean(tr.newton_iterations):.2f} it/step, max {tr.newton_iterations.max()})"
            except sp.ConvergenceError as exc:
                row[f"{nw}_long"] = f"FAILED at step {exc.step}: {exc.reason}"
        say(f"  n={n:3d} {L} steps: full {row['full_long']}; chord {row['chord_long']}")
    return rows


def growth_exponent(rows, key, nmin=8):
    ns = np.array([r["n"] for r in rows if r["n"] >= nmin], float)
    ys = np.array([r[key] for r in rows if r["n"] >= nmin], float)
    if len(ns) < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns), np.log(ys), 1)[0])


def section_ensemble(cfg):
    say("== 6. ensemble of double-pendulum initial conditions")
    K, N, h = cfg["ens_K"], cfg["ens_steps"], 0.01
    rng = np.random.default_rng(2026)
    Q0 = M.DP_Q0 + rng.uniform(-0.3, 0.3, (K, 2))
    P0 = rng.uniform(-0.2, 0.2, (K, 2))
    dp = M.dp_system()

    def run(th):
        return sp.integrate_many(dp, Q0, P0, h, N, threads=th, store="final")

    e1, e2 = run(1), run(2)
    same_threads = bool(np.array_equal(e1.q, e2.q) and np.array_equal(e1.p, e2.p))
    same_seq = True
    for k in range(K):
        tr = sp.integrate(dp, Q0[k], P0[k], h, N)
        if not (np.array_equal(tr.q[-1], e2.q[k, -1]) and np.array_equal(tr.p[-1], e2.p[k, -1])):
            same_seq = False
            break
    # Interleaved rounds; /proc/stat tells how much CPU other processes took during each run, so
    # rounds where the second vCPU was busy elsewhere can be told apart (shared machine).
    # More rounds (up to ens_max_rounds) while fewer than ens_quiet rounds were free of other load.
    rec = {1: [], 2: []}

    def is_quiet(x):
        return x["other"] < 0.05 * x["wall"]

    r = 0
    while r < cfg["ens_rounds"] or (
            r < cfg["ens_max_rounds"]
            and sum(is_quiet(a) and is_quiet(b) for a, b in zip(rec[1], rec[2])) < cfg["ens_quiet"]):
        for th in ((1, 2) if r % 2 == 0 else (2, 1)):
            gc.collect()
            _, w, c, other = foreign_load(lambda: run(th))
            rec[th].append(dict(wall=w, cpu=c, other=other))
        r += 1
    t1 = summarize([(x["wall"], x["cpu"]) for x in rec[1]])
    t2 = summarize([(x["wall"], x["cpu"]) for x in rec[2]])
    ratios = [a["wall"] / b["wall"] for a, b in zip(rec[1], rec[2])]
    # a round is quiet when other processes used < 5 % of one CPU during both of its runs
    quiet = [a["wall"] / b["wall"] for a, b in zip(rec[1], rec[2]) if is_quiet(a) and is_quiet(b)]
    other_frac = med([x["other"] / x["wall"] for x in rec[1] + rec[2]])
    row = dict(K=K, steps=N, h=h, method="simpson", wall_1=t1["wall"], wall_2=t2["wall"],
               wall_1_min=t1["wall_min"], wall_2_min=t2["wall_min"], wall_1_max=t1["wall_max"],
               wall_2_max=t2["wall_max"], speedup=t1["wall"] / t2["wall"],
               speedup_round_median=med(ratios), speedup_pairs_min=min(ratios),
               speedup_pairs_max=max(ratios), quiet_rounds=len(quiet),
               speedup_quiet=med(quiet) if quiet else float("nan"),
               other_load_cpus=other_frac, cpu_2=t2["cpu"],
               parallelism_2=med([x["cpu"] / x["wall"] for x in rec[2]]),
               bitwise_threads=same_threads, bitwise_sequential=same_seq,
               samples=t1["samples"], us_per_step_1=t1["wall"] / (K * N) * 1e6)
    say(f"  K={K}, {N} steps: 1 thread {fmt_t(t1['wall'])}, 2 threads {fmt_t(t2['wall'])}, "
        f"speed-up {row['speedup']:.2f} (rounds {min(ratios):.2f}–{max(ratios):.2f}; "
        f"{len(quiet)} quiet rounds: {row['speedup_quiet']:.2f}; other load {other_frac:.2f} CPU); "
        f"bitwise equal: threads {same_threads}, sequential {same_seq}")
    return row


def section_small(cfg, ctx):
    out = {}
    specs = [("pendulum", 100.0, 0.25, 1e-5), ("lagrange_top", 10 * M.TOP_PERIOD, 0.2, 1e-6)]
    for name, T, hmax, hmin in specs:
        say(f"== 7. {name} work-precision (T = {T:.4g} s)")
        pb = Problem(name, T, hmax, hmin)
        if name == "pendulum":
            from symplectic import exact
            qT, pT = exact.pendulum(np.array([T]), q0=float(pb.q0[0]), p0=float(pb.p0[0]), **M.PEND)
            pb.ref = np.r_[np.ravel(qT), np.ravel(pT)]
            pb.ref_note = "exact solution (Jacobi elliptic functions, symplectic.exact.pendulum)"
        else:
            r = sp.integrate(pb.system, pb.q0, pb.p0, T / 40000, 40000, method="lobatto5")
            pb.ref = np.r_[r.q[-1], r.p[-1]]
            d = _rel(SciPy(pb, "DOP853", []).solve(1e-13).y[:, -1], pb.ref)
            pb.ref_note = (f"lobatto5 with h = T/40000; DOP853 at 1e-13 differs by {d:.1e} "
                           f"(relative to max|(q, p)|, dominated by the spin angle psi ~ {pb.ref[2]:.0f} rad)")
        ng = n_grid(pb, cfg["n_per_octave"])
        solvers = [VI(pb, m, ng) for m in ("simpson", "lobatto4", "lobatto5", "midpoint")]
        solvers.append(SciPy(pb, "DOP853", tol_grid(cfg["tol_per_decade"])))
        if ctx["sksundae"]:
            solvers.append(Cvode(pb, tol_grid(cfg["tol_per_decade"])))
        pts, rows, curves = work_precision(pb, solvers, cfg, stop_at=min(TARGETS), cap=cfg["small_cap"],
                                           rounds=cfg["small_rounds"], budget=cfg["budget"])
        out[name] = dict(problem=pb, points=pts, rows=rows, curves=curves, solvers=solvers)
    return out


# ===================================================================== output
def plot(out_dir, dp_res, small, horizon_rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("matplotlib missing: no PNG")
        return []
    style = {"symplectic (C)": "-", "SciPy solve_ivp": "--", "SUNDIALS (sksundae)": ":",
             "GSL (compiled C)": "-."}
    colors = {"simpson": "C0", "lobatto4": "C1", "lobatto5": "C2", "midpoint": "C3", "rk4": "C4",
              "DOP853": "C5", "DOP853-generic": "C6", "RK45": "C7", "Radau": "C8", "CVODE-Adams": "C9",
              "GSL-rk8pd": "black"}
    fig, axes = plt.subplots(2, 2, figsize=(13, 10))
    panels = [(axes[0, 0], dp_res, "e_H", "double pendulum, 100 s: energy error"),
              (axes[0, 1], dp_res, "err_final", "double pendulum, 100 s: final-state error"),
              (axes[1, 0], small["pendulum"], "e_H", "pendulum, 100 s: energy error"),
              (axes[1, 1], small["lagrange_top"], "e_H", "Lagrange top, 10 nutation periods: energy error")]
    for ax, res, key, title in panels:
        for s in res["solvers"]:
            pts = [p for p in res["curves"][s.name] if p["status"] == "ok" and math.isfinite(p["wall"])
                   and p.get(key) is not None and math.isfinite(p[key]) and p[key] > 0]
            if not pts:
                continue
            ax.loglog([p[key] for p in pts], [p["wall"] for p in pts], style.get(s.family, "-"),
                      marker="o", ms=3, lw=1.2, color=colors.get(s.name), label=s.label)
        if key == "e_H":
            for tgt in TARGETS:
                ax.axvline(tgt, color="0.85", lw=0.8, zorder=0)
        ax.invert_xaxis()
        ax.set_xlabel("max |H - H0| / |H0|" if key == "e_H" else "relative error of (q, p) at T")
        ax.set_ylabel("wall time per run (s)")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Work-precision (single runs of the search; tables in RESULTS.md use medians of "
                 "interleaved repeats)", fontsize=10)
    fig.tight_layout()
    p1 = os.path.join(out_dir, "work_precision.png")
    fig.savefig(p1, dpi=110)
    plt.close(fig)

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    horizon_rows = [r for r in horizon_rows if not r["hold"]]
    names = []
    for r in horizon_rows:
        if r["solver"] not in names:
            names.append(r["solver"])
    for name in names:
        rs = sorted([r for r in horizon_rows if r["solver"] == name], key=lambda r: r["T"])
        lab = f"{rs[0]['label']} ({rs[0]['knob']})"
        a1.loglog([r["T"] for r in rs], [r["e_H"] for r in rs], marker="o", color=colors.get(name), label=lab)
        a2.loglog([r["T"] for r in rs], [r["wall"] for r in rs], marker="o", color=colors.get(name), label=lab)
    a1.set_xlabel("horizon T (s)")
    a1.set_ylabel("max |H - H0| / |H0| over [0, T]")
    a2.set_xlabel("horizon T (s)")
    a2.set_ylabel("wall time (s)")
    a1.set_title("double pendulum: energy error vs horizon (settings that give 1e-8 at 100 s)", fontsize=9)
    a2.set_title("cost vs horizon", fontsize=9)
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    p2 = os.path.join(out_dir, "long_horizon.png")
    fig.savefig(p2, dpi=110)
    plt.close(fig)
    return [p1, p2]


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def wp_table(res):
    labels = {s.name: s.label for s in res["solvers"]}
    head = ["method"] + [f"e_H ≤ {t:.0e}: time (setting, steps)" for t in TARGETS]
    body = []
    for s in res["solvers"]:
        row = [labels[s.name]]
        for t in TARGETS:
            r = next(r for r in res["rows"] if r["solver"] == s.name and r["target"] == t)
            if not r["reached"]:
                row.append(r["note"])
            else:
                extra = f", {r['newton']:.1f} it/step" if r.get("newton") else ""
                extra += f", {r['nfev']} f-evals" if r.get("nfev") else ""
                row.append(f"**{fmt_t(r['wall'])}** ({r['param']}, {r['steps']} steps{extra}; "
                           f"e_H {fmt_e(r['e_H'])}, final err {fmt_e(r['err_final'])})")
        body.append(row)
    return md_table(head, body)


def ratio(rows, a, b, t):
    wa, wb = cell(rows, a, t), cell(rows, b, t)
    if wa is None or wb is None:
        return float("nan")
    return wb / wa


def write_results(path, out_dir, cfg, info, meta, dp_res, perstep, horizon, forms, chain, ens, small, pngs):
    rel = os.path.relpath(out_dir, os.path.dirname(os.path.abspath(path)))
    rows = dp_res["rows"]
    L = []
    A = L.append
    A("# Benchmarks\n")
    A(f"Generated by `{meta['command']}` on {meta['date']} in {meta['elapsed']:.0f} s "
      f"({'quick' if cfg['quick'] else 'full'} run). Do not edit by hand: rerun the command.\n")
    A("## Machine\n")
    A(md_table(["", ""], [
        ["CPU (lscpu model name)", info["model"]],
        ["logical CPUs", f"{info['cpus']} ({info['threads_per_core']} thread(s) per core)"
         + (f", {info['hypervisor']} VM" if info["hypervisor"] else "")],
        ["platform", info["platform"]], ["compiler", info["compiler"]],
        ["symplectic commit", info["commit"]],
        ["versions", ", ".join(f"{k} {v}" for k, v in info["versions"].items())],
        ["load average before / after", f"{meta['load_before']} / {meta['load_after']}"],
        ["CPU used by other processes during the run", f"{meta['foreign']:.2f} CPUs on average "
         "(/proc/stat minus this process and its children)"],
    ]))
    A("\nThis is a shared 2-vCPU virtual machine: other tenants of the host steal cycles and other "
      "processes on the VM itself (other sessions' builds and tests; the row above) compete for the "
      "two vCPUs, so single timings vary by tens of per cent. Every time below is the **median of repeats interleaved round-robin** between "
      "the configurations compared (the spread min–max is in the CSVs); ratios are taken between "
      "medians measured in the same rounds. Times are wall-clock of the integration call alone "
      "(CPU time is in the CSVs; GSL times itself the same way).\n")

    # ---------------------------------------------------------- acceptance
    r8 = ratio(rows, "simpson", "DOP853", 1e-8)
    r8g = ratio(rows, "simpson", "DOP853-generic", 1e-8)
    lob = {m: cell(rows, m, 1e-10) for m in ("lobatto4", "lobatto5")}
    lob = {m: v for m, v in lob.items() if v is not None}
    best_lob = min(lob, key=lob.get) if lob else None
    ps = {(r["method"], r["h"]): r for r in perstep}
    fastest_py = min((r for r in forms if r["form"] not in ("built-in C", "compiled callback (from_cfunc)")),
                     key=lambda r: r["us_per_step"])
    cf = next((r for r in forms if r["form"].startswith("compiled")), None)
    c64 = next((r for r in chain if r["n"] == 64), None)

    def ok(b):
        return "**met**" if b else "**missed**"

    acc = []
    acc.append(["Simpson vs SciPy DOP853, dp 100 s, e_H ≤ 1e-8", "≥ 50×",
                f"{fmt_x(r8)} (closed-form Hamilton RHS); {fmt_x(r8g)} (generic NumPy RHS)",
                ok(r8 >= 50) + ("" if r8 >= 50 else f" by {50 / r8:.2f}× (closed-form RHS)")
                + ("; met with the generic RHS" if r8g >= 50 else "")])
    if best_lob:
        vs_s = ratio(rows, best_lob, "simpson", 1e-10)
        vs_d = ratio(rows, best_lob, "DOP853", 1e-10)
        acc.append([f"best Lobatto ({best_lob}) faster than Simpson and DOP853 at e_H ≤ 1e-10", "goal",
                    f"{fmt_x(vs_s)} vs Simpson, {fmt_x(vs_d)} vs DOP853",
                    ok(vs_s > 1 and vs_d > 1)])
    for h, tgt in ((0.1, 1.065), (0.01, 0.645)):
        r = ps.get(("simpson", h))
        if r:
            acc.append([f"built-in dp Simpson per step, h = {h}", f"≤ {tgt} µs",
                        f"{r['us_per_step']:.3f} µs ({r['newton_per_step']:.2f} Newton it/step)",
                        ok(r["us_per_step"] <= tgt)
                        + ("" if r["us_per_step"] <= tgt else f" by {r['us_per_step'] / tgt:.2f}×")])
    acc.append(["fastest Python form, Simpson h = 0.01", "≤ 25 µs/step",
                f"{fastest_py['us_per_step']:.2f} µs/step ({fastest_py['form']})",
                ok(fastest_py["us_per_step"] <= 25)])
    if cf:
        acc.append(["compiled callback vs built-in", "≤ 2×", fmt_x(cf["vs_builtin"]),
                    ok(cf["vs_builtin"] <= 2)])
    if c64:
        acc.append(["chain n = 64, full Newton", "≤ 400 µs/step", f"{c64['full_us']:.0f} µs/step "
                    f"(chord {c64['chord_us']:.0f} µs/step)", ok(c64["full_us"] <= 400)
                    + ("" if c64["full_us"] <= 400 else f" by {c64['full_us'] / 400:.2f}×")])
    use_quiet = ens["quiet_rounds"] >= 3
    sp_judged = ens["speedup_quiet"] if use_quiet else ens["speedup"]
    acc.append([f"ensemble of {ens['K']} dp initial conditions, 1 → 2 threads", "≥ 1.8×, bitwise equal",
                f"{ens['speedup']:.2f}× over all {ens['samples']} rounds (per round {ens['speedup_pairs_min']:.2f}–"
                f"{ens['speedup_pairs_max']:.2f}); {fmt_x(ens['speedup_quiet'])} over the {ens['quiet_rounds']} "
                f"rounds with no other load; bitwise equal to 1 thread: {ens['bitwise_threads']}, to "
                f"sequential `integrate`: {ens['bitwise_sequential']}",
                ok(sp_judged >= 1.8 and ens["bitwise_threads"] and ens["bitwise_sequential"])
                + (" (judged on the quiet rounds)" if use_quiet else " (too few quiet rounds: judged on all)")])
    A("## Targets\n")
    A(md_table(["what", "target", "measured", ""], acc))
    if cfg["quick"]:
        A("\n(Quick run: coarser grids, short caps and few repeats; the numbers are indicative only.)")

    # ---------------------------------------------------------- section 1
    pb = dp_res["problem"]
    A("\n## 1. Double pendulum (TOP paper): work-precision\n")
    A(f"m1 = m2 = 1 kg, l1 = l2 = g/ω0² = {M.L_DP:.6f} m (ω0 = 2π), g = 9.81, q(0) = (π/4, π/3), "
      f"p(0) = 0, T = {pb.T:g} s. e_H = max over all steps of |H − H0|/|H0|; final err = "
      f"max|(q, p)(T) − ref| / max|ref|, ref: {pb.ref_note}.\n")
    A("Built-in methods run `sp.integrate(double_pendulum, …, h = T/N, N)` with N on a geometric grid "
      f"(2^(1/{cfg['n_per_octave']}) apart); adaptive solvers use rtol = atol on a geometric grid "
      f"({cfg['tol_per_decade']} per decade; {cfg['slow_tol_per_decade']} for RK45/Radau). The setting "
      "shown is the cheapest grid point **from which on every finer tested point also reaches the "
      "target** (no lucky coarse steps). A solver's search stops after a run longer than "
      f"{cfg['cap']:g} s. SciPy and CVODE integrate Hamilton's equations with a closed-form right-hand "
      "side in scalar `math` arithmetic (`benchmarks/models.py`, ~4 µs per call through solve_ivp); "
      "'generic RHS' is the same equations through `np.linalg.solve` and `einsum` on the NumPy "
      "M(q), ∂M, ∇V callables, the route for a general system. No Jacobian is supplied to Radau/CVODE "
      "(finite differences). GSL rk8pd is compiled C (`benchmarks/compiled/gsl_rk8pd_dp.c`).\n")
    A(wp_table(dp_res))
    A("\nRatios (time of the other method / time of the first, same run):\n")
    rr = []
    for t in TARGETS:
        line = [f"{t:.0e}"]
        for a, b in (("simpson", "DOP853"), ("simpson", "DOP853-generic"), ("simpson", "GSL-rk8pd"),
                     ("simpson", "CVODE-Adams"), ("lobatto4", "simpson"), ("lobatto5", "simpson"),
                     ("lobatto5", "DOP853"), ("lobatto5", "GSL-rk8pd")):
            line.append(fmt_x(ratio(rows, a, b, t)))
        rr.append(line)
    A(md_table(["e_H ≤", "DOP853 / Simpson", "DOP853 generic / Simpson", "GSL rk8pd / Simpson",
                "CVODE / Simpson", "Simpson / lobatto4", "Simpson / lobatto5", "DOP853 / lobatto5",
                "GSL / lobatto5"], rr))
    if pngs:
        A(f"\n![work-precision]({rel}/work_precision.png)\n")
    A(f"All points of the searches: `{rel}/work_precision.csv`; the chosen settings with their "
      f"repeated timings: `{rel}/targets.csv`.\n")

    # ---------------------------------------------------------- section 2
    A("## 2. Per-step cost, built-in double pendulum\n")
    A(f"`sp.integrate` over {cfg['perstep_steps']} steps (trajectory stored), median of "
      f"{cfg['perstep_rounds']} interleaved repeats, µs per step; min–max over the repeats in brackets.\n")
    body = []
    for m in ("simpson", "midpoint", "rk4", "lobatto2", "lobatto4", "lobatto5"):
        line = [m]
        for h in (0.1, 0.01):
            r = ps[(m, h)]
            line.append(f"{r['us_per_step']:.3f} ({r['us_min']:.3f}–{r['us_max']:.3f}), "
                        f"{r['newton_per_step']:.2f} it")
        body.append(line)
    A(md_table(["method", "h = 0.1: µs/step, Newton it/step", "h = 0.01"], body))

    # ---------------------------------------------------------- section 3
    A("\n## 3. Long horizons: bounded vs growing energy error\n")
    A("Each method keeps the setting that gives e_H ≤ 1e-8 over 100 s (section 1) and integrates "
      "longer. Times: median of interleaved repeats (a single run where one run exceeds the "
      f"{cfg['horizon_budget']:g} s budget).\n")
    fixed = [r for r in horizon if not r["hold"]]
    hold = [r for r in horizon if r["hold"]]
    hs = sorted({r["T"] for r in fixed})
    names = []
    for r in fixed:
        if r["solver"] not in names:
            names.append(r["solver"])
    body = []
    for name in names:
        rs = {r["T"]: r for r in fixed if r["solver"] == name}
        first = rs[hs[0]]
        body.append([f"{first['label']} ({first['knob']})"]
                    + [f"{fmt_e(rs[T]['e_H'])}, {fmt_t(rs[T]['wall'])}" for T in hs])
    A(md_table(["method"] + [f"T = {T:g} s: e_H, time" for T in hs], body))

    def get(rows_, name, T):
        return next((r for r in rows_ if r["solver"] == name and r["T"] == T), None)

    if "simpson" in names:
        for other in ("DOP853", "GSL-rk8pd"):
            if other in names:
                line = []
                for T in hs:
                    x, y = get(fixed, "simpson", T), get(fixed, other, T)
                    line.append(f"T = {T:g}: e_H {y['e_H'] / x['e_H']:.3g}× Simpson's, time "
                                f"{y['wall'] / x['wall']:.3g}× Simpson's")
                A(f"\n{other}: " + "; ".join(line) + ".")
    if hold:
        A("\n**Cost of keeping e_H ≤ 1e-8 over the whole horizon.** The symplectic methods keep their "
          "step (their energy error does not grow: the e_H above); the adaptive ones need a tighter "
          "tolerance as T grows (searched down the tolerance grid from the 100 s setting).\n")
        body = []
        for name in names:
            if name in ("simpson", "lobatto4", "lobatto5"):
                rs = [get(fixed, name, T) for T in hs]
                body.append([rs[0]["label"]] + [
                    (f"{fmt_t(r['wall'])} ({r['knob']}, e_H {fmt_e(r['e_H'])})" if r["e_H"] <= 1e-8
                     else f"e_H {fmt_e(r['e_H'])} > 1e-8 at this h") for r in rs])
        for name in ("GSL-rk8pd", "DOP853"):
            rs = [get(hold, name, T) for T in hs]
            if all(r is None for r in rs):
                continue
            body.append([next(r for r in rs if r)["label"]] + [
                ("–" if r is None else (f"{fmt_t(r['wall'])} ({r['knob']}, e_H {fmt_e(r['e_H'])})"
                                        if math.isfinite(r["wall"]) else r["knob"])) for r in rs])
        A(md_table(["method"] + [f"T = {T:g} s" for T in hs], body))
        for name in ("GSL-rk8pd", "DOP853"):
            line = []
            for T in hs:
                x, y = get(fixed, "simpson", T), get(hold, name, T)
                if x and y and math.isfinite(y["wall"]):
                    line.append(f"T = {T:g} s: {y['wall'] / x['wall']:.3g}×")
            if line:
                A(f"\n{name} time / Simpson time at e_H ≤ 1e-8 over [0, T]: " + ", ".join(line) + ".")
        A("")
    if pngs:
        A(f"\n![long horizon]({rel}/long_horizon.png)\n")

    # ---------------------------------------------------------- section 4
    A("## 4. Python-defined double pendulum (Simpson, h = 0.01)\n")
    A("The same double pendulum in each form `symplectic.System` accepts (`benchmarks/models.py`; "
      "`benchmarks/cfunc_dp.c` compiled at benchmark time with `cc -O2`). Median of "
      f"{cfg['forms_rounds']} interleaved repeats. 'max dev' is the largest difference from the "
      "built-in trajectory over 1000 steps.\n")
    A(md_table(["form", "µs/step (min–max)", "× built-in", "Newton it/step", "max dev"],
               [[r["form"], f"{r['us_per_step']:.3f} ({r['us_min']:.3f}–{r['us_max']:.3f})",
                 f"{r['vs_builtin']:.2f}", f"{r['newton_per_step']:.2f}", f"{r['max_dev_vs_builtin']:.1e}"]
                for r in forms]))

    # ---------------------------------------------------------- section 5
    A("\n## 5. n-link pendulum chain (Simpson, h = 0.01)\n")
    A("`pendulum_chain(n)` (unit masses and lengths), q_i(0) = 0.5 sin(1.3 i), p(0) = 0, the first "
      f"{cfg['chain_steps']} steps (2 s; repeated for small n so that a sample lasts long enough); "
      "`newton=\"full\"` (fresh Jacobian and LU every iteration) vs `newton=\"chord\"` (LU kept while it "
      f"contracts). Median of {cfg['chain_rounds']} interleaved repeats. The last two columns: does an "
      f"untimed run of {cfg['chain_long_steps']} steps complete?\n")
    A(md_table(["n", "full: µs/step (min–max)", "it/step", "chord: µs/step (min–max)", "it/step",
                "chord speed-up", "|q_full − q_chord| at 2 s", f"{cfg['chain_long_steps']} steps: full",
                "chord"],
               [[r["n"], f"{r['full_us']:.1f} ({r['full_us_min']:.1f}–{r['full_us_max']:.1f})",
                 f"{r['full_newton']:.2f}", f"{r['chord_us']:.1f} ({r['chord_us_min']:.1f}–{r['chord_us_max']:.1f})",
                 f"{r['chord_newton']:.2f}", f"{r['chord_speedup']:.2f}", f"{r['chord_vs_full_dq']:.1e}",
                 r["full_long"], r["chord_long"]] for r in chain]))
    ex_f, ex_c = growth_exponent(chain, "full_us"), growth_exponent(chain, "chord_us")
    steps_ = [f"{a['n']}→{b['n']}: {math.log(b['full_us'] / a['full_us']) / math.log(b['n'] / a['n']):.2f}"
              for a, b in zip(chain, chain[1:])]
    A(f"\nCost growth exponent (least-squares slope of log cost vs log n, n ≥ 8): full {ex_f:.2f}, "
      f"chord {ex_c:.2f}. Local exponents (full): {', '.join(steps_)}.\n")

    # ---------------------------------------------------------- section 6
    A("## 6. Ensemble (integrate_many)\n")
    A(f"{ens['K']} double-pendulum initial conditions (q(0) = (π/4, π/3) + U(−0.3, 0.3), "
      f"p(0) = U(−0.2, 0.2)), Simpson, h = {ens['h']}, {ens['steps']} steps each, `store=\"final\"`; "
      f"wall time, median of {ens['samples']} interleaved rounds (at least {cfg['ens_rounds']}, more -- up "
      f"to {cfg['ens_max_rounds']} -- until {cfg['ens_quiet']} rounds ran without other load).\n")
    A(md_table(["threads", "wall time (min–max)", "µs per member-step"],
               [["1", f"{fmt_t(ens['wall_1'])} ({fmt_t(ens['wall_1_min'])}–{fmt_t(ens['wall_1_max'])})",
                 f"{ens['us_per_step_1']:.3f}"],
                ["2", f"{fmt_t(ens['wall_2'])} ({fmt_t(ens['wall_2_min'])}–{fmt_t(ens['wall_2_max'])})",
                 f"{ens['wall_2'] / (ens['K'] * ens['steps']) * 1e6:.3f}"]]))
    A(f"\nSpeed-up {ens['speedup']:.2f}× (ratio of medians; per-round ratios "
      f"{ens['speedup_pairs_min']:.2f}–{ens['speedup_pairs_max']:.2f}, median {ens['speedup_round_median']:.2f}). "
      f"Other processes on the VM used a median {ens['other_load_cpus']:.2f} CPU during these runs "
      f"(from /proc/stat); in the {ens['quiet_rounds']} rounds where they used < 5 % of a CPU the "
      f"speed-up is {fmt_x(ens['speedup_quiet'])}. The 2-thread runs kept a median "
      f"{ens['parallelism_2']:.2f} CPUs busy (CPU time / wall time). Bitwise identical: 2 threads vs "
      f"1 thread {ens['bitwise_threads']}; every member vs its own `sp.integrate` run "
      f"{ens['bitwise_sequential']}.\n")

    # ---------------------------------------------------------- section 7
    for name, title in (("pendulum", "Pendulum (FVCA): q(0) = π/2, p(0) = 0, ω = 2π, T = 100 s"),
                        ("lagrange_top", "Lagrange top (TOP Table 3), T = 10 nutation periods")):
        res = small[name]
        A(f"## 7. {title}\n")
        A(f"Reference for the final-state error: {res['problem'].ref_note}. Search cap "
          f"{cfg['small_cap']:g} s per run.\n")
        A(wp_table(res))
        A("")
        line = []
        for t in TARGETS:
            line.append(f"e_H ≤ {t:.0e}: DOP853 / Simpson {fmt_x(ratio(res['rows'], 'simpson', 'DOP853', t))}, "
                        f"DOP853 / lobatto5 {fmt_x(ratio(res['rows'], 'lobatto5', 'DOP853', t))}")
        A("Ratios: " + "; ".join(line) + ".\n")

    A("## Files\n")
    A(f"`{rel}/`: work_precision.csv (every run of the searches), targets.csv (chosen settings, "
      "repeated timings), per_step.csv, long_horizon.csv, python_forms.csv, chain.csv, ensemble.csv, "
      "work_precision.png, long_horizon.png.\n")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


# ===================================================================== main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="coarse grids and few repeats (~1 minute)")
    ap.add_argument("--out", default=None, help="output directory (default benchmarks/results, "
                    "or benchmarks/results-quick with --quick)")
    ap.add_argument("--results-md", default=None, help="where to write the summary (default "
                    "benchmarks/RESULTS.md for a full run into the default directory, else OUT/RESULTS.md)")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = os.path.abspath(args.out or os.path.join(HERE, "results-quick" if args.quick else "results"))
    os.makedirs(out, exist_ok=True)
    default_out = not args.quick and args.out is None
    md = args.results_md or (os.path.join(HERE, "RESULTS.md") if default_out
                             else os.path.join(out, "RESULTS.md"))
    import resource
    t_start = time.perf_counter()
    busy0, own0 = cpu_busy(), time.process_time()
    ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    meta = dict(command="python benchmarks/run.py" + (" --quick" if args.quick else "")
                + (f" --out {args.out}" if args.out else ""),
                date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                load_before=" ".join(f"{x:.2f}" for x in os.getloadavg()))
    info = machine_info()
    say(f"machine: {info['model']}, {info['cpus']} CPUs; {meta['date']}; out: {out}")

    tmp = tempfile.mkdtemp(prefix="symplectic-bench-")
    ctx = dict(tmp=tmp, sksundae=False, gsl_exe=None, gsl=None)
    try:
        import sksundae  # noqa: F401
        ctx["sksundae"] = True
    except ImportError:
        say("scikit-sundae is not installed: no SUNDIALS comparison (pip install scikit-sundae)")
    spec = importlib.util.spec_from_file_location("bench_gsl", os.path.join(HERE, "compiled", "gsl.py"))
    if spec is not None and os.path.exists(spec.origin):
        gslmod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gslmod)
        ctx["gsl"] = gslmod
        ctx["gsl_exe"] = gslmod.build(tmp)
        if ctx["gsl_exe"] is None:
            say("GSL rk8pd could not be built (apt-get install libgsl-dev): no GSL comparison")
    def timed_section(fn, *a):
        t0 = time.perf_counter()
        out_ = fn(*a)
        say(f"  [{fn.__name__}: {time.perf_counter() - t0:.1f} s]")
        return out_

    try:
        dp_res = timed_section(section_dp, cfg, ctx)
        perstep = timed_section(section_perstep, cfg)
        horizon = timed_section(section_horizon, cfg, dp_res, ctx)
        forms = timed_section(section_forms, cfg, ctx)
        chain = timed_section(section_chain, cfg)
        ens = timed_section(section_ensemble, cfg)
        small = timed_section(section_small, cfg, ctx)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    pts = dp_res["points"] + small["pendulum"]["points"] + small["lagrange_top"]["points"]
    write_csv(os.path.join(out, "work_precision.csv"), pts,
              ["problem", "solver", "label", "family", "param", "h", "tol", "steps", "nfev", "newton",
               "wall", "cpu", "e_H", "err_final", "status"])
    trows = dp_res["rows"] + small["pendulum"]["rows"] + small["lagrange_top"]["rows"]
    write_csv(os.path.join(out, "targets.csv"), trows,
              ["problem", "target", "solver", "label", "reached", "param", "h", "tol", "steps", "nfev",
               "newton", "e_H", "err_final", "wall", "wall_min", "wall_max", "cpu", "samples", "note"])
    write_csv(os.path.join(out, "per_step.csv"), perstep)
    write_csv(os.path.join(out, "long_horizon.csv"), horizon,
              ["hold", "solver", "label", "knob", "T", "steps", "e_H", "wall", "wall_min", "wall_max", "cpu",
               "samples"])
    write_csv(os.path.join(out, "python_forms.csv"), forms)
    write_csv(os.path.join(out, "chain.csv"), chain)
    write_csv(os.path.join(out, "ensemble.csv"), [ens])
    pngs = plot(out, dp_res, small, horizon)
    meta["elapsed"] = time.perf_counter() - t_start
    ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (time.process_time() - own0) + (ch1.ru_utime + ch1.ru_stime - ch0.ru_utime - ch0.ru_stime)
    meta["foreign"] = (float("nan") if busy0 is None
                       else max(0.0, cpu_busy() - busy0 - own) / meta["elapsed"])
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    write_results(md, out, cfg, info, meta, dp_res, perstep, horizon, forms, chain, ens, small, pngs)
    say(f"done in {meta['elapsed']:.0f} s: {md}, {out}")


if __name__ == "__main__":
    main()
