"""Section 18: the linear closed form's cost per step against Newton on the same system.

``sp.integrate`` on ``sp.systems.linear`` systems (the AXIOMS linearised double pendulum and a
random n = 8 system), Simpson and midpoint: the default closed form (the one-step matrices applied
by the C driver, csrc/core/sym_linear.c) against ``closed_form=False`` (the Newton path), interleaved
rounds, medians in µs per step of one call, set-up included: the short runs are mostly set-up (the
one-step matrices in extended precision).
"""
import numpy as np

import symplectic as sp

from .common import md_table, med, timed_rounds


def cases():
    out = [("linear_dp", sp.systems.linear_double_pendulum(), [0.0, np.pi / 6], [0.0, 0.0], 0.025)]
    rng = np.random.default_rng(3)
    A = rng.normal(size=(8, 8))
    out.append(("linear_n8", sp.systems.linear(A @ A.T + 8 * np.eye(8), np.diag(np.linspace(1.0, 4.0, 8))),
                np.ones(8), np.zeros(8), 0.05))
    return out


def run_section(cfg, ctx):
    rows = []
    for name, S, q0, p0, h in cases():
        for method in ("simpson", "midpoint"):
            for n in cfg["closed_steps"]:
                fns = {cf: (lambda cf=cf: sp.integrate(S, q0, p0, h, n, method, closed_form=cf))
                       for cf in (True, False)}
                a, b = (fn() for fn in fns.values())                    # warm-up, and the agreement
                t, paired = timed_rounds(fns, cfg["closed_rounds"])
                dev = float(np.max(np.abs(a.q - b.q)) / np.max(np.abs(b.q)))
                rows.append([name, method, n, f"{1e6 * t[True]['wall'] / n:.4f}", f"{1e6 * t[False]['wall'] / n:.4f}",
                             f"{med(paired[False]):.2f}", f"{dev:.1e}"])
    return "\n".join([
        f"Medians of {cfg['closed_rounds']} interleaved rounds, µs per step of one `sp.integrate` call (set-up "
        "included); the ratio is Newton / closed form, the median of the rounds' paired ratios; the last "
        "column is the largest difference of q between the two, relative to max |q|.\n",
        md_table(["system", "method", "steps", "closed form (µs/step)", "closed_form=False (µs/step)",
                  "Newton / closed form", "max |Δq| / max |q|"], rows)]) + "\n"
