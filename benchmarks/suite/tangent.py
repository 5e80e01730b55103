"""Section 22: what ``tangent=True`` costs per step, against the plain step, in one run.

``integrate(..., tangent=True)`` propagates the state-transition matrix with each step's exact
derivative: the system's second derivatives at the root, the Newton matrix assembled and
factorised there, and 2n linear solves of the Newton size (s-1) n, then the 2n columns' update.
Each round times, interleaved, the same run with and without the tangent (``store_every=N``: the
last row only, so that storing 4n^2 numbers per row does not enter), for the double pendulum
(n = 2) and the pendulum chain with n = 8 and 32; and the Lyapunov spectrum
(``sensitivity.lyapunov``, every = 100) on the same steps, whose QR and Python loop come on top.
The states are checked bitwise equal with and without the tangent.
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
    return "\n".join([
        f"Per step (µs): one `sp.integrate` call of N steps, `store_every=N`; median of "
        f"{cfg['tan_rounds']} interleaved rounds (min–max in brackets); the ratios are the medians "
        "of the rounds' paired ratios to the plain run.\n",
        md_table(["n", "method", "N", "plain (µs/step)", "tangent=True (µs/step)", "× plain",
                  "lyapunov, all 2n (µs/step)", "× plain", "states"], rows)]) + "\n"
