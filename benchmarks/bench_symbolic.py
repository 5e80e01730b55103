"""Per-step cost of systems built from SymPy against the built-in C systems.

    python benchmarks/bench_symbolic.py [--repeats 15] [--steps 20000]

Simpson, h = 0.01.  For each case the built-in C system, the same system
from a SymPy Lagrangian compiled to C (symplectic.symbolic, compile=True) and
the NumPy path (compile=False) integrate the same initial state; the runs are
interleaved (one of each per repeat) and the median time per step is
reported, with the ratios to the built-in system.  The NumPy path runs 10x
fewer steps (it is ~100x slower).  Compilation happens once, before timing
(the module cache is a temporary directory unless $SYMPLECTIC_CACHE is set).
"""
import argparse
import math
import os
import platform
import statistics
import sys
import tempfile
import time

import numpy as np
import sympy as sy

import symplectic as sp
from symplectic import symbolic

TOP = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81)   # TOP Table 3


def dp_lagrangian():
    q1, q2, u1, u2 = sy.symbols("q1 q2 u1 u2")
    m1, m2, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    T = ((m1 + m2) * l1 ** 2 * u1 ** 2 / 2 + m2 * l1 * l2 * sy.cos(q1 - q2) * u1 * u2
         + m2 * l2 ** 2 * u2 ** 2 / 2)
    V = -(m1 + m2) * g * l1 * sy.cos(q1) - m2 * g * l2 * sy.cos(q2)
    return T - V, [q1, q2], [u1, u2], {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81}


def dp_positions():
    q1, q2, u1, u2 = sy.symbols("q1 q2 u1 u2")
    m1, m2, l1, l2, g = sy.symbols("m1 m2 l1 l2 g", positive=True)
    r1 = [l1 * sy.sin(q1), -l1 * sy.cos(q1)]
    r2 = [r1[0] + l2 * sy.sin(q2), r1[1] - l2 * sy.cos(q2)]
    bodies = [(m1, r1), (m2, r2)]
    L = (symbolic.kinetic_from_positions([q1, q2], [u1, u2], bodies)
         - symbolic.gravity_potential(bodies, g))
    return L, [q1, q2], [u1, u2], {m1: 1.0, m2: 1.0, l1: 1.0, l2: 1.0, g: 9.81}


def top_lagrangian():
    ph, th, ps, a, b, c = sy.symbols("phi theta psi phidot thetadot psidot")
    m, I, I3, l, g = sy.symbols("m I I3 l g", positive=True)
    L = (I / 2 * (b ** 2 + a ** 2 * sy.sin(th) ** 2) + I3 / 2 * (c + a * sy.cos(th)) ** 2
         - m * g * l * sy.cos(th))
    return L, [ph, th, ps], [a, b, c], {m: TOP["m"], I: TOP["I"], I3: TOP["I3"], l: TOP["l"],
                                        g: TOP["g"]}


def cases():
    dp = sp.systems.double_pendulum(1.0, 1.0, 1.0, 1.0, 9.81)
    top = sp.systems.lagrange_top(**TOP)
    q_top = np.array([0.0, math.pi / 3, 0.0])
    p_top = top.mass(q_top) @ np.array([9.2, 0.0, 252.0])
    return [
        ("double pendulum", dp, dp_lagrangian(), ([math.pi / 4, math.pi / 3], [0.0, 0.0]), 0.01),
        ("double pendulum from positions", dp, dp_positions(), ([math.pi / 4, math.pi / 3],
                                                                     [0.0, 0.0]), 0.01),
        ("Lagrange top (h = T/40)", top, top_lagrangian(), (q_top, p_top), 1.8472390 / 40),
    ]


def per_step(system, q0, p0, h, steps):
    t0 = time.perf_counter()
    tr = sp.integrate(system, q0, p0, h, steps)
    return (time.perf_counter() - t0) / steps, tr


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--steps", type=int, default=20000)
    args = ap.parse_args(argv)
    if not os.environ.get("SYMPLECTIC_CACHE"):
        os.environ["SYMPLECTIC_CACHE"] = tempfile.mkdtemp(prefix="symplectic-bench-")

    print(f"# bench_symbolic: Simpson, median of {args.repeats} interleaved repeats")
    print(f"# {cpu_model()}; Python {platform.python_version()}, NumPy {np.__version__}, "
          f"SymPy {sy.__version__}; {time.strftime('%Y-%m-%d')}")
    rows = []
    for label, builtin, (L, q, qd, params), (q0, p0), h in cases():
        t0 = time.perf_counter()
        comp = sp.System.from_sympy(L, q, qd, params, compile=True)
        t_build = time.perf_counter() - t0
        nump = sp.System.from_sympy(L, q, qd, params, compile=False)
        runs = {"built-in C": [], "SymPy -> C": [], "SymPy -> NumPy": []}
        trs = {}
        for _ in range(args.repeats):
            for name, system, steps in (("built-in C", builtin, args.steps),
                                        ("SymPy -> C", comp, args.steps),
                                        ("SymPy -> NumPy", nump, max(1, args.steps // 10))):
                t, tr = per_step(system, q0, p0, h, steps)
                runs[name].append(t)
                trs[name] = tr
        med = {k: statistics.median(v) for k, v in runs.items()}
        # agreement over the first 400 steps (longer runs of the chaotic double
        # pendulum amplify rounding differences without bound)
        ref = sp.integrate(builtin, q0, p0, h, 400)
        agree = {}
        for k, system in (("built-in C", builtin), ("SymPy -> C", comp), ("SymPy -> NumPy", nump)):
            tr = sp.integrate(system, q0, p0, h, 400)
            agree[k] = max(np.max(np.abs(tr.q - ref.q)) / np.max(np.abs(ref.q)),
                           np.max(np.abs(tr.p - ref.p)) / np.max(np.abs(ref.p)))
        rows.append((label, med, agree, {k: tr.newton_iterations.mean() for k, tr in trs.items()},
                     t_build))

    print()
    print("| system | evaluation | us/step | ratio to built-in | Newton it./step | max rel. diff. to built-in, 400 steps |")
    print("|---|---|---|---|---|---|")
    for label, med, agree, its, _ in rows:
        base = med["built-in C"]
        for k in med:
            print(f"| {label} | {k} | {med[k] * 1e6:.2f} | {med[k] / base:.2f} | {its[k]:.2f} | "
                  f"{agree[k]:.1e} |")
    print()
    for label, _, _, _, t_build in rows:
        print(f"# {label}: SymPy derivation + C generation + compilation {t_build:.2f} s (first build)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
