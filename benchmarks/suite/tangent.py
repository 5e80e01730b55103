"""Section 22: what ``tangent=True`` costs per step, against the plain step, in one run.

``integrate(..., tangent=True)`` propagates the state-transition matrix with each step's exact
derivative: the system's second derivatives at the root, the Newton matrix assembled and
factorised there, and 2n linear solves of the Newton size (s-1) n, then the 2n columns' update.
Each round times, interleaved, the same run with and without the tangent (``store_every=N``: the
last row only, so that storing 4n^2 numbers per row does not enter), for the double pendulum
(n = 2) and the pendulum chain with n = 8 and 32; and the Lyapunov spectrum
(``sensitivity.lyapunov``, every = 100) on the same steps, whose QR and Python loop come on top.
The states are checked bitwise equal with and without the tangent.

Then the discrete adjoint: ``sensitivity.gradient`` of a terminal cost with respect to the start
and every row of a held force (10 and 1000 rows, one per step, the damped double pendulum)
against one forward run, ``sp.integrate`` with the same held force, timed in the same rounds.
"""
import numpy as np

import symplectic as sp

from .common import md_table, med, per_unit, timed_rounds


def cases(cfg):
    out = []
    for n, steps in cfg["tan_cases"]:
        if n == 2:
            system, q0 = sp.systems.double_pendulum(), np.array([1.0, 0.5])
        else:
            system, q0 = sp.systems.pendulum_chain(n), 0.5 * np.sin(1.3 * np.arange(n))
        h = 0.01 if n == 2 else 0.005
        for method in cfg["tan_methods"]:
            out.append((n, method, system, q0, np.zeros(n), h, steps))
    return out


def run_section(cfg, ctx):
    rows = []
    for n, method, system, q0, p0, h, N in cases(cfg):
        kw = dict(method=method, store_every=N)
        fns = {
            "plain": lambda: sp.integrate(system, q0, p0, h, N, **kw),
            "tangent": lambda: sp.integrate(system, q0, p0, h, N, tangent=True, **kw),
            "lyapunov": lambda: sp.sensitivity.lyapunov(system, q0, p0, h, N, method=method,
                                                        every=100),
        }
        a, b = fns["plain"](), fns["tangent"]()          # warm-up, and the check
        same = np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
        t, paired = timed_rounds(fns, cfg["tan_rounds"])
        us = {k: per_unit(t[k], N) for k in fns}
        rows.append([str(n), method, str(N),
                     f"{us['plain']['us']:.2f} ({us['plain']['us_min']:.2f}–{us['plain']['us_max']:.2f})",
                     f"{us['tangent']['us']:.2f} ({us['tangent']['us_min']:.2f}–{us['tangent']['us_max']:.2f})",
                     f"{med(paired['tangent']):.2f}",
                     f"{us['lyapunov']['us']:.2f}", f"{med(paired['lyapunov']):.2f}",
                     "bitwise" if same else "DIFFERENT"])
    return "\n".join([section_tangent_text(cfg, rows), section_gradient(cfg)])


def section_gradient(cfg):
    dp = sp.systems.double_pendulum(damping=0.1)
    q0, p0, h = np.array([0.7, 1.1]), np.array([0.1, -0.2]), 0.01
    target = np.array([0.2, -0.3])
    cost = {"terminal": (lambda q, p: 0.5 * np.sum((q - target) ** 2) + 0.1 * p @ p,
                         lambda q, p: (q - target, 0.2 * p))}
    rows = []
    for N in cfg["tan_grad_rows"]:
        U = 0.2 * np.sin(np.outer(np.arange(N) * h, [1.3, 2.1]))
        fns = {"forward": lambda: sp.integrate(dp, q0, p0, h, N, force=U),
               "gradient": lambda: sp.sensitivity.gradient(dp, q0, p0, h, N, cost, force=U)}
        for fn in fns.values():
            fn()
        t, paired = timed_rounds(fns, cfg["tan_rounds"])
        rows.append([str(N), f"{1e3 * t['forward']['wall']:.3f}", f"{1e3 * t['gradient']['wall']:.3f}",
                     f"{med(paired['gradient']):.2f}"])
    return "\n".join([
        "The discrete adjoint: `sensitivity.gradient` (value and gradient with respect to q0, p0 and "
        "every row of the held force; the damped double pendulum, simpson, h = 0.01, N steps = N force "
        f"rows, a terminal cost) against one `sp.integrate` call with the same force; median of "
        f"{cfg['tan_rounds']} interleaved rounds, the ratio the median of the paired ratios.\n",
        md_table(["force rows", "forward run (ms)", "gradient (ms)", "× forward run"], rows)]) + "\n"


def section_tangent_text(cfg, rows):
    return "\n".join([
        f"Per step (µs): one `sp.integrate` call of N steps, `store_every=N`; median of "
        f"{cfg['tan_rounds']} interleaved rounds (min–max in brackets); the ratios are the medians "
        "of the rounds' paired ratios to the plain run.\n",
        md_table(["n", "method", "N", "plain (µs/step)", "tangent=True (µs/step)", "× plain",
                  "lyapunov, all 2n (µs/step)", "× plain", "states"], rows)]) + "\n"
