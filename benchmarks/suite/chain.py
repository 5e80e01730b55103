"""Section 5: the n-link chain, n = 2 ... 64, full Newton and chord Newton (Simpson, h = 0.01)."""
import math

import numpy as np

import symplectic as sp
from models import chain_q0

from .common import clock, interleave, per_unit, say, summarize

NEWTON = ("full", "chord")


def _configs(cfg):
    N = cfg["chain_steps"]
    configs, info = {}, {}
    for n in cfg["chain_ns"]:
        ch = sp.systems.pendulum_chain(n)
        q0, p0 = chain_q0(n), np.zeros(n)
        reps = int(max(1, round(cfg["chain_work"] / (n * n * N))))
        for nw in NEWTON:
            tr = sp.integrate(ch, q0, p0, 0.01, N, newton=nw)
            E = tr.energy
            info[(n, nw)] = dict(reps=reps, newton=float(np.mean(tr.newton_iterations)),
                                 e_H=float(np.max(np.abs(E / E[0] - 1))), q=tr.q[-1])

            def one(ch=ch, q0=q0, p0=p0, nw=nw, reps=reps):
                for _ in range(reps):
                    sp.integrate(ch, q0, p0, 0.01, N, newton=nw)

            configs[(n, nw)] = (lambda one=one: clock(one)[1:])
    return configs, info


def _row(n, N, samples, info):
    row = dict(n=n, steps=N)
    for nw in NEWTON:
        t = summarize(samples[(n, nw)])
        u = per_unit(t, info[(n, nw)]["reps"] * N)
        row.update({f"{nw}_us": u["us"], f"{nw}_us_min": u["us_min"], f"{nw}_us_max": u["us_max"],
                    f"{nw}_newton": info[(n, nw)]["newton"], "reps": info[(n, nw)]["reps"],
                    "samples": t["samples"]})
    row["chord_speedup"] = row["full_us"] / row["chord_us"]
    row["chord_vs_full_dq"] = float(np.max(np.abs(info[(n, "full")]["q"] - info[(n, "chord")]["q"])))
    row["e_H"] = info[(n, "full")]["e_H"]
    return row


def _long_runs(rows, L):
    """Robustness over a longer run (untimed): does each variant complete it?"""
    for row in rows:
        n = row["n"]
        ch = sp.systems.pendulum_chain(n)
        for nw in NEWTON:
            try:
                tr = sp.integrate(ch, chain_q0(n), np.zeros(n), 0.01, L, newton=nw)
                row[f"{nw}_long"] = f"ok ({np.mean(tr.newton_iterations):.2f} it/step, max {tr.newton_iterations.max()})"
            except sp.ConvergenceError as exc:
                row[f"{nw}_long"] = f"FAILED at step {exc.step}: {exc.reason}"
        say(f"  n={n:3d} {L} steps: full {row['full_long']}; chord {row['chord_long']}")


def section_chain(cfg):
    say("== 5. n-link chain, Simpson h = 0.01, full vs chord Newton")
    N = cfg["chain_steps"]
    configs, info = _configs(cfg)
    samples = interleave(configs, cfg["chain_rounds"])
    rows = []
    for n in cfg["chain_ns"]:
        rows.append(_row(n, N, samples, info))
        row = rows[-1]
        say(f"  n={n:3d} full {row['full_us']:9.1f} µs/step ({row['full_newton']:.2f} it)  "
            f"chord {row['chord_us']:9.1f} µs/step ({row['chord_newton']:.2f} it)  "
            f"speed-up {row['chord_speedup']:.2f}")
    _long_runs(rows, cfg["chain_long_steps"])
    return rows


def growth_exponent(rows, key, nmin=8):
    ns = np.array([r["n"] for r in rows if r["n"] >= nmin], float)
    ys = np.array([r[key] for r in rows if r["n"] >= nmin], float)
    if len(ns) < 2:
        return float("nan")
    return float(np.polyfit(np.log(ns), np.log(ys), 1)[0])


def local_exponents(rows, key="full_us"):
    return [f"{a['n']}→{b['n']}: {math.log(b[key] / a[key]) / math.log(b['n'] / a['n']):.2f}"
            for a, b in zip(rows, rows[1:])]
