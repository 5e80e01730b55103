"""Section 25: what control's defaults cost and report, on a cart-pole and the crane.

The cart-pole: a cart of 1 kg, a 0.3 kg point mass on a 0.5 m massless rod (theta from the
downward vertical), g = 9.81; from rest at x = 0, theta = 0 to rest at x = 1 m, theta = pi, the
force on the cart alone (``inputs=[1, 0]``), |u| <= 20 N; in T = 2 s at least effort
(``effort()``, 1/2 int u^2 dt), or in least time plus a little effort (``duration() +
effort(2e-3)``, T free in [0.5, 5] s).  The crane: section 24's ``CRANE_PROBLEM`` in minimum time.

1. The Newton polish: ``solve()`` against ``solve(polish=False)``, interleaved rounds, each
   on a Problem made afresh (the system built once); the ratio of the medians and the largest
   relative difference of J.
2. The miss of the end: ``sol.miss()`` (the returned inputs replayed by lobatto5 at 16 steps an
   interval), the same inputs replayed by lobatto5 at h = T/4000, and ``sol.own_scheme_miss()``
   (the problem's own scheme and step).
3. The default solver where ipyopt does not import (``solver="auto"``: SciPy's trust-constr),
   in a child process with ipyopt made unimportable, against IPOPT in this one: the solve's own
   time (``sol.solve_time``), median of the rounds, after a warm-up solve in each process.
4. Minimum time with the defaults: IPOPT's iterations, T and the first-order residual
   (``sol.kkt_residual``) after the polish; beside them the fewest iterations of CasADi's direct
   collocation of the same problem (``control_casadi.py``), when casadi imports.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np

import symplectic as sp
from symplectic import control

from .common import md_table, med, say
from .control import CRANE_PROBLEM, crane

CARTPOLE_KW = dict(inputs=[1.0, 0.0], start={"q": [0, 0], "qdot": [0, 0]},
                   end={"q": [1, np.pi], "qdot": [0, 0]}, input_bounds=(-20, 20))


def cartpole():
    import sympy as sy
    from symplectic import symbolic
    x, th, xd, thd = sy.symbols("x theta xd thd")
    cart, bob = (1.0, [x, 0]), (0.3, [x + 0.5 * sy.sin(th), -0.5 * sy.cos(th)])
    T = symbolic.kinetic_from_positions([x, th], [xd, thd], [cart, bob])
    V = symbolic.gravity_potential([cart, bob], 9.81)
    return sp.System.from_sympy(T - V, [x, th], [xd, thd])


def problem(system, N, method, free=False):
    if free:
        return control.Problem(system, 2.0, N, method=method, free_duration=(0.5, 5.0),
                               cost=control.duration() + control.effort(2e-3), **CARTPOLE_KW)
    return control.Problem(system, 2.0, N, method=method, **CARTPOLE_KW)


def polish_rows(system, cases, rounds):
    rows = []
    for method, N in cases:
        problem(system, N, method).solve()                       # warm-up (the curvature)
        t = {True: [], False: []}
        J = {}
        for _ in range(rounds):
            for pol in (True, False):
                sol = problem(system, N, method).solve(polish=None if pol else False)
                t[pol].append(sol.solve_time)
                J[pol] = (sol.cost, sol.kkt_residual)
        rows.append([method, str(N), f"{1e3 * med(t[True]):.1f}", f"{1e3 * med(t[False]):.1f}",
                     f"{med(t[True]) / med(t[False]):.2f}",
                     f"{abs(J[True][0] - J[False][0]) / J[True][0]:.1e}",
                     f"{J[False][1]:.1e} / {J[True][1]:.1e}"])
    return rows


def miss_rows(system, cases):
    rows = []
    for method, N in cases:
        sol = problem(system, N, method).solve()
        fine = sol.miss(sol.replay(method="lobatto5", n_steps=4000))
        rows.append([method, str(N), f"{sol.miss():.3e}", f"{fine:.3e}",
                     f"{sol.miss() / fine:.3f}", f"{sol.own_scheme_miss():.1e}"])
    return rows


_CHILD = textwrap.dedent("""
    import sys, json
    sys.modules["ipyopt"] = None            # as on macOS, Windows, ARM: no IPOPT wheel
    sys.path.insert(0, {bench!r})
    from suite.control_defaults import cartpole, problem
    s = cartpole()
    out = {{}}
    for method, N in {cases!r}:
        problem(s, N, method).solve()
        ts = []
        for _ in range({rounds}):
            sol = problem(s, N, method).solve()
            ts.append(sol.solve_time)
        out[f"{{method}} {{N}}"] = dict(solver=sol.solver, t=sorted(ts)[len(ts) // 2],
                                     it=sol.iterations, J=sol.cost, kkt=sol.kkt_residual)
    print(json.dumps(out))
""")


def solver_rows(system, cases, rounds):
    import json
    bench = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _CHILD.format(bench=bench, cases=list(cases), rounds=rounds)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    other = json.loads(r.stdout.strip().splitlines()[-1])
    rows = []
    for method, N in cases:
        problem(system, N, method).solve()
        ts = []
        for _ in range(rounds):
            sol = problem(system, N, method).solve()
            ts.append(sol.solve_time)
        o = other[f"{method} {N}"]
        rows.append([method, str(N), f"{1e3 * med(ts):.1f} ({sol.iterations})",
                     f"{1e3 * o['t']:.1f} ({o['it']})", o["solver"], f"{o['t'] / med(ts):.1f}",
                     f"{abs(o['J'] - sol.cost) / sol.cost:.1e}", f"{o['kkt']:.1e}"])
    return rows


def min_time_rows(system, cases):
    try:
        from . import control_casadi
        casadi = control_casadi.casadi_available()
    except Exception:                   # noqa: BLE001 (no casadi: the column says so)
        casadi = False
    rows = []
    cr = crane()
    for name, method, N in cases:
        if name == "cartpole":
            sol = problem(system, N, method, free=True).solve()
        else:
            sol = control.Problem(cr, intervals=N, method=method, cost=control.duration(),
                                  **CRANE_PROBLEM).solve()
        ref = "–"
        if casadi:
            fewest = control_casadi.fewest_iterations(
                "cartpole_min_time" if name == "cartpole" else "crane", N)
            ref = f"{fewest[0]} ({fewest[1]}), ratio {sol.iterations / fewest[0]:.2f}"
        rows.append([name, method, str(N), str(sol.iterations), f"{sol.duration:.7f}",
                     f"{sol.kkt_residual:.1e}", ref])
    return rows


def run_section(cfg, ctx):
    system = cartpole()
    rounds = cfg["control_defaults_rounds"]
    say("  control's defaults: the polish")
    pol = polish_rows(system, cfg["control_defaults_polish"], rounds)
    say("  control's defaults: the miss")
    mis = miss_rows(system, cfg["control_defaults_miss"])
    say("  control's defaults: without ipyopt")
    sol = solver_rows(system, cfg["control_defaults_solver"], rounds)
    say("  control's defaults: minimum time")
    mt = min_time_rows(system, cfg["control_defaults_min_time"])
    return "\n".join([
        __doc__.split("\n\n", 1)[1].strip(), "",
        f"**The polish** (lobatto5 and Simpson, T = 2 s; solve time median of {rounds} "
        "interleaved rounds):", "",
        md_table(["method", "intervals", "solve() (ms)", "solve(polish=False) (ms)",
                  "ratio", "|ΔJ| / J", "KKT residual without / with"], pol), "",
        "**The miss of the end** (T = 2 s; the open-loop miss of the returned inputs):", "",
        md_table(["method", "intervals", "sol.miss()", "lobatto5, h = T/4000", "ratio",
                  "own_scheme_miss()"], mis), "",
        f"**Without ipyopt** (solve time, median of {rounds}; iterations in brackets):", "",
        md_table(["method", "intervals", "IPOPT (ms)", "solver=\"auto\" without ipyopt (ms)",
                  "it is", "ratio", "|ΔJ| / J", "its KKT residual"], sol), "",
        "**Minimum time with the defaults** (IPOPT, the polish):", "",
        md_table(["problem", "method", "intervals", "IPOPT iterations", "T (s)",
                  "KKT residual", "CasADi's fewest (scheme), ratio"], mt)]) + "\n"
