"""Section 13: the cost per step of the constrained schemes.

The planar pendulum two ways -- the angle (n = 1, ``systems.pendulum``) and Cartesian (n = 2, one
constraint, ``systems.pendulum_cartesian``) -- from the same state at the same step size, with the
error of each in the angle against ``exact.pendulum`` at the end, and the four-bar linkage (n = 3,
two constraints).  The three systems of a method run once per round, interleaved; medians.
"""
import math

import numpy as np

import symplectic as sp

from .common import md_table, med, timed_rounds

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


def angle_error(name, tr):
    th = tr.q[:, 0] if name == "angle" else np.arctan2(tr.q[:, 0], -tr.q[:, 1])
    ex, _ = sp.exact.pendulum(tr.t, TH0, 0.0, M * L * L, math.sqrt(G / L))
    return float(np.max(np.abs(th - ex)))


def run_section(cfg, ctx):
    N = cfg["con_steps"]
    systems = configs()
    rows = []
    for m in METHODS:
        fns = {k: (lambda S=S, q0=q0, p0=p0, m=m: sp.integrate(S, q0, p0, H, N, method=m))
               for k, (S, q0, p0) in systems.items()}
        err = {k: angle_error(k, fns[k]()) for k in ("angle", "cartesian")}      # and warm-up
        fns["four_bar"]()
        t, paired = timed_rounds(fns, cfg["con_rounds"])
        us = {k: 1e6 * t[k]["wall"] / N for k in fns}
        rows.append([m, f"{us['angle']:.2f}", f"{us['cartesian']:.2f}", f"{med(paired['cartesian']):.2f}",
                     f"{us['four_bar']:.2f}", f"{err['angle']:.2e} / {err['cartesian']:.2e}"])
    return "\n".join([
        f"The planar pendulum from θ = {TH0:g} rad at rest, h = {H}, {N} steps, written with its angle (n = 1, "
        "unconstrained) and in Cartesian coordinates (n = 2 with one constraint: Newton on (s−1)(n+m) = "
        "3(s−1) unknowns instead of (s−1)), and the four-bar linkage (n = 3, m = 2). Microseconds per "
        f"step, median of {cfg['con_rounds']} interleaved rounds; the ratio is Cartesian / angle, the median "
        "of the rounds' paired ratios; last column: the largest error of the angle over the run against "
        "`exact.pendulum`.\n",
        md_table(["method", "angle", "Cartesian", "ratio", "four-bar", "angle error: angle / Cartesian"], rows),
        "\nThe constrained form costs more per step (a larger, saddle-point Newton system, the constraint "
        "callbacks, the projection of the momentum at each step's end), and at equal h its error in the "
        "angle differs (another discretisation of the same motion): constraints are for systems without "
        "convenient minimal coordinates (closed chains like the four-bar, coordinate singularities), not a "
        "replacement for good ones."]) + "\n"
