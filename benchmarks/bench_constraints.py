"""Per-step cost of the constrained schemes.

    python benchmarks/bench_constraints.py [STEPS] [--only METHOD SYSTEM]

The planar pendulum two ways -- the angle (n = 1, ``systems.pendulum``) and
Cartesian (n = 2, one constraint, ``systems.pendulum_cartesian``) -- from the
same state at the same step size, with the error of each in the angle against
``exact.pendulum`` at the end, and the four-bar linkage (n = 3, two
constraints).  Prints microseconds per step (best of 5 runs of STEPS steps;
in-process timing, so noisy on a shared machine: compare the ratios, or time
single configurations with ``--only`` under farm-bench).  Results:
benchmarks/RESULTS_constraints.md.
"""
import math
import sys
import time

import numpy as np

import symplectic as sp

M, L, G = 1.0, 1.0, 9.81
TH0 = 2.0
H = 0.02
METHODS = ["midpoint", "simpson", "lobatto4", "lobatto5"]


def configs():
    omega = math.sqrt(G / L)
    ang = sp.systems.pendulum(m=M * L * L, omega=omega)
    cart = sp.systems.pendulum_cartesian(m=M, l=L, g=G)
    fb = sp.systems.four_bar()
    q3 = fb.project([0.4, 0.6, 1.6])
    u = np.linalg.svd(fb.constraint_jac(q3))[2][-1]
    q3, p3 = fb.project(q3, qdot=8.0 * u / u[0])
    return {
        "angle": (ang, np.array([TH0]), np.array([0.0])),
        "cartesian": (cart, L * np.array([math.sin(TH0), -math.cos(TH0)]), np.zeros(2)),
        "four_bar": (fb, q3, p3),
    }


def best(system, q0, p0, method, steps, runs=5):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        tr = sp.integrate(system, q0, p0, H, steps, method=method)
        times.append(time.perf_counter() - t0)
    return min(times) / steps * 1e6, tr


def angle_error(name, tr):
    th = tr.q[:, 0] if name == "angle" else np.arctan2(tr.q[:, 0], -tr.q[:, 1])
    ex, _ = sp.exact.pendulum(tr.t, TH0, 0.0, M * L * L, math.sqrt(G / L))
    return float(np.max(np.abs(th - ex)))


def main(argv):
    steps = int(argv[0]) if argv and argv[0] != "--only" else 20000
    cfg = configs()
    if "--only" in argv:
        i = argv.index("--only")
        method, name = argv[i + 1], argv[i + 2]
        sp.integrate(*cfg[name], H, steps, method=method)
        return
    print(f"{steps} steps of h = {H}, best of 5, microseconds per step")
    print(f"{'method':>9} {'angle':>8} {'cartesian':>10} {'ratio':>6} {'four_bar':>9}   "
          f"angle error (angle / cartesian)")
    for method in METHODS:
        ua, ta = best(*cfg["angle"], method, steps)
        uc, tc = best(*cfg["cartesian"], method, steps)
        uf, _ = best(*cfg["four_bar"], method, steps)
        print(f"{method:>9} {ua:8.2f} {uc:10.2f} {uc / ua:6.2f} {uf:9.2f}   "
              f"{angle_error('angle', ta):.2e} / {angle_error('cartesian', tc):.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
