"""Section 12: the cost per step of systems built from SymPy against the built-in C systems.

Simpson, h = 0.01.  For each case the built-in C system, the same system from a SymPy Lagrangian
compiled to C (symplectic.symbolic, compile=True) and the NumPy path (compile=False) integrate the
same initial state; the runs are interleaved (one of each per round) and the median time per step
is reported, with the ratios to the built-in system.  The NumPy path runs 10x fewer steps (it is
~100x slower).  Compilation happens once, before timing, into a temporary module cache.
"""
import math
import os
import sys
import time

import numpy as np
import sympy as sy

import symplectic as sp

from .common import REPO, md_table, timed_rounds

sys.path.insert(0, os.path.join(REPO, "tests"))
from support.lagrangians import dp_from_positions, dp_lagrangian, top_lagrangian  # noqa: E402
from support.models import TOP  # noqa: E402


def cases():
    dp = sp.systems.double_pendulum(1.0, 1.0, 1.0, 1.0, 9.81)
    top = sp.systems.lagrange_top(**TOP)
    q_top = np.array([0.0, math.pi / 3, 0.0])
    p_top = top.mass(q_top) @ np.array([9.2, 0.0, 252.0])
    return [
        ("double pendulum", dp, dp_lagrangian(1.0, 1.0), ([math.pi / 4, math.pi / 3], [0.0, 0.0]), 0.01),
        ("double pendulum from positions", dp, dp_from_positions(1.0, 1.0), ([math.pi / 4, math.pi / 3],
                                                                     [0.0, 0.0]), 0.01),
        ("Lagrange top (h = T/40)", top, top_lagrangian(), (q_top, p_top), 1.8472390 / 40),
    ]


def agreement(builtin, system, q0, p0, h):
    """Largest relative difference of q and p from the built-in run over 400 steps (longer runs of the
    chaotic double pendulum amplify rounding differences without bound)."""
    ref, tr = sp.integrate(builtin, q0, p0, h, 400), sp.integrate(system, q0, p0, h, 400)
    return max(np.max(np.abs(tr.q - ref.q)) / np.max(np.abs(ref.q)),
               np.max(np.abs(tr.p - ref.p)) / np.max(np.abs(ref.p)))


def run_section(cfg, ctx):
    os.environ.setdefault("SYMPLECTIC_CACHE", os.path.join(ctx["tmp"], "sympy-cache"))
    N = cfg["sym_steps"]
    rows, builds = [], []
    for label, builtin, (L, q, qd, params), (q0, p0), h in cases():
        t0 = time.perf_counter()
        comp = sp.System.from_sympy(L, q, qd, params, compile=True)
        builds.append(f"{label} {time.perf_counter() - t0:.2f} s")
        paths = {"built-in C": (builtin, N), "SymPy -> C": (comp, N),
                 "SymPy -> NumPy": (sp.System.from_sympy(L, q, qd, params, compile=False), max(1, N // 10))}
        fns = {k: (lambda S=S, n=n: sp.integrate(S, q0, p0, h, n)) for k, (S, n) in paths.items()}
        its = {k: float(fn().newton_iterations.mean()) for k, fn in fns.items()}     # and warm-up
        t, _ = timed_rounds(fns, cfg["sym_rounds"])
        us = {k: 1e6 * t[k]["wall"] / paths[k][1] for k in fns}
        rows += [[label, k, f"{us[k]:.2f}", f"{us[k] / us['built-in C']:.2f}", f"{its[k]:.2f}",
                  f"{agreement(builtin, paths[k][0], q0, p0, h):.1e}"] for k in fns]
    return "\n".join([
        "Simpson variational integrator, h = 0.01 (double pendulum, m1 = m2 = l1 = l2 = 1, g = 9.81, "
        "q0 = (π/4, π/3), p0 = 0) and h = T/40 (Lagrange top, TOP Table 3, the paper's initial state). "
        f"Per round each evaluation path runs once, interleaved: {N} steps for the C paths, {max(1, N // 10)} "
        f"for NumPy; the table gives the median over {cfg['sym_rounds']} rounds of the time per step, and "
        "its ratio to the built-in system's. \"Max rel. diff.\" compares a separate 400-step run with the "
        f"built-in system's (q and p, relative to their largest entries). SymPy {sy.__version__}.\n",
        md_table(["system", "evaluation", "us/step", "ratio to built-in", "Newton it./step",
                  "max rel. diff. to built-in, 400 steps"], rows),
        "\nFirst construction (SymPy derivation, C generation and compilation) in a fresh cache: "
        + "; ".join(builds) + "."]) + "\n"
