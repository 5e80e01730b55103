"""Section 21: the branch rule of the implicit schemes, what it catches and what it costs.

Each implicit step's root may be a false one (not continued from h -> 0); with
``branch_check="auto"`` the core checks a suspicious root by continuation in h
(csrc/core/sym_galerkin_roots.c, branch_check), with ``"always"`` every root.

Part 1 -- what "auto" catches.  A sample of runs (the papers' systems, chains of 2-8 links from
fixed and random states, two 3-link cart pendulums, a stiff linear system; h = 0.005-0.7; every
implicit method; full, chord and per-step Newton, with and without the predictor) runs with
"always" and with "auto".  "always" finds every false root Newton produced (its
``counts.branch_fixes``); "auto" caught them all in a run when its states equal "always"'s (to
1e-7 relative: chord-mode factorisations differ at rounding) over the rows both keep.

Part 2 -- what it costs on ordinary runs.  The double pendulum of the papers at h = 0.01 and
0.05 over 100 s: "auto" against "never" in the same process, interleaved rounds, the median of
the paired ratios.  (A comparison with another build is a job for benchmarks/ab_chain.py.)
"""
import math
import os
import sys
import warnings

import numpy as np

import symplectic as sp

from .common import REPO, md_table, med, say, timed_rounds

sys.path.insert(0, os.path.join(REPO, "tests"))

IMPLICIT = [m for m, d in sp.methods(details=True).items() if d["symplectic"]]
MODES = [dict(), dict(predictor=False), dict(newton="chord"), dict(newton="step")]
L = 9.81 / (2 * math.pi) ** 2


def cases(quick):
    sy = sp.systems
    out = []
    pend = sy.pendulum(1.0, 2 * math.pi)
    for q0, p0 in ((math.pi / 2, 0.0), (3.0, 0.0), (0.0, 15.0)):
        for h in ([0.05, 0.3] if quick else [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7]):
            out.append(("pendulum", pend, [q0], [p0], h, 5.0))
    dp = sy.double_pendulum(1.0, 1.0, L, L, 9.81)
    for h in ([0.01, 0.1, 0.2] if quick else [0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]):
        out.append(("double pendulum", dp, [math.pi / 4, math.pi / 3], [0, 0], h, 5.0))
        out.append(("double pendulum, fast", dp, [2.5, -2.0], [0.3, 0.1], h, 5.0))
    if not quick:
        top = sy.lagrange_top()
        tq0 = np.array([0.0, math.pi / 3, 0.0])
        tp0 = top.mass(tq0) @ np.array([9.2, 0.0, 252.0])
        for N in (20, 40, 80, 160):
            out.append(("Lagrange top", top, tq0, tp0, 1.8472390 / N, 2 * 1.8472390))
    rng = np.random.default_rng(1)
    for n in ((3, 5) if quick else (2, 3, 4, 5, 8)):
        ch = sy.pendulum_chain(n)
        starts = [(0.8 * np.cos(0.7 * np.arange(n)), np.zeros(n)),
                  (1.2 * np.cos(0.5 * np.arange(n)), np.zeros(n))]
        starts += [(rng.uniform(-2.5, 2.5, n), rng.uniform(-3, 3, n))
                   for _ in range(1 if quick else 4)]
        for i, (qc, vc) in enumerate(starts):
            for h in ([0.1, 0.3] if quick else [0.05, 0.1, 0.2, 0.3, 0.4, 0.5]):
                out.append((f"chain of {n}", ch, qc, ch.mass(qc) @ vc, h, 5.0))
    try:
        from support.models_cart import (Q0_TRIAL_CART, TRIAL_Q0, TRIAL_QDOT0, cart_pendulum3,
                                         cart_pendulum3_trial)
        cart = cart_pendulum3()
        trial = cart_pendulum3_trial()
        for h in ([0.1, 0.2] if quick else [0.05, 0.1, 0.15, 0.2, 0.3]):
            out.append(("cart pendulum (trust issue)", cart, Q0_TRIAL_CART, np.zeros(4), h, 5.0))
        for h in ([0.18, 0.3] if quick else [0.05, 0.1, 0.18, 0.22, 0.26, 0.3, 0.35, 0.5]):
            out.append(("cart pendulum (first-week trial)", trial, TRIAL_Q0,
                        trial.mass(TRIAL_Q0) @ TRIAL_QDOT0, h, 4.0))
    except ImportError:                         # pragma: no cover (no SymPy)
        pass
    lin = sy.linear(np.eye(2), np.diag([1.0, 1e4]))
    for h in ([0.01] if quick else [0.01, 0.1, 1.0]):
        out.append(("stiff linear", lin, [1.0, 1.0], [0.0, 0.0], h, 5.0))
    return out


def _run(S, q0, p0, h, n, m, kw, check):
    kw = dict(kw, branch_check=check)
    if S.builtin == "linear":
        kw["closed_form"] = False
    try:
        tr = sp.integrate(S, q0, p0, h, n, m, **kw)
        return tr, None
    except sp.ConvergenceError as err:
        return err.trajectory, err.reason


def part1(quick):
    rows = []
    for name, S, q0, p0, h, T in cases(quick):
        n = min(max(1, int(round(T / h))), 300)
        for m in IMPLICIT:
            for kw in MODES:
                a, ra = _run(S, q0, p0, h, n, m, kw, "always")
                b, rb = _run(S, q0, p0, h, n, m, kw, "auto")
                k = min(len(a.t), len(b.t))
                scale = max(np.max(np.abs(a.q[:k])), 1.0)
                same = bool(np.max(np.abs(a.q[:k] - b.q[:k])) <= 1e-7 * scale) and \
                    (ra is None) == (rb is None)
                rows.append(dict(system=name, method=m, h=h, mode=str(kw) or "full",
                                 steps=a.counts.steps, fixes=a.counts.branch_fixes,
                                 checks_auto=b.counts.branch_checks, steps_auto=b.counts.steps,
                                 same=same))
    return rows


def part2(rounds):
    S = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
    q0, p0 = [math.pi / 4, math.pi / 3], [0.0, 0.0]
    out = []
    for m in ("simpson", "lobatto5", "midpoint"):
        for h in (0.01, 0.05):
            n = int(round(100 / h))
            fns = {c: (lambda c=c: sp.integrate(S, q0, p0, h, n, m, branch_check=c)) for c in ("never", "auto")}
            checks = fns["auto"]().counts.branch_checks                    # and warm-up
            t, paired = timed_rounds(fns, rounds)
            r = paired["auto"]
            out.append([m, h, checks, f"{1e6 * t['auto']['wall'] / n:.3f}", f"{1e6 * t['never']['wall'] / n:.3f}",
                        f"{med(r):.3f} ({min(r):.3f}–{max(r):.3f})"])
    return out


def part1_lines(r1):
    with_false = [r for r in r1 if r["fixes"] > 0]
    missed = [r for r in with_false if not r["same"]]
    diff_clean = [r for r in r1 if r["fixes"] == 0 and not r["same"]]
    rows = [["all", len(r1), sum(r["steps"] for r in r1), sum(r["fixes"] for r in r1), len(with_false),
             len(with_false) - len(missed)]]
    for m in IMPLICIT:
        rm = [r for r in r1 if r["method"] == m]
        wf = [r for r in rm if r["fixes"] > 0]
        rows.append([m, len(rm), sum(r["steps"] for r in rm), sum(r["fixes"] for r in rm), len(wf),
                     len([r for r in wf if r["same"]])])
    checks, steps = sum(r["checks_auto"] for r in r1), sum(r["steps_auto"] for r in r1)
    return (["### Part 1. False roots caught by `branch_check=\"auto\"`\n",
            "Every run of the sample with `\"always\"` (every root checked: its `branch_fixes` are the false roots "
            "Newton produced) and with `\"auto\"`. A run counts as caught when its states equal the `\"always\"` "
            "run's (1e-7 relative) with the same outcome.\n",
            md_table(["", "runs", "steps", "false roots (always)", "runs with false roots", "of them caught by auto"],
                     rows),
            f"\nRuns with a false root that `\"auto\"` did not catch: {len(missed)}."]
    + [f"- {r['system']}, {r['method']}, h = {r['h']}, {r['mode']}" for r in missed] + [
        f"\nRuns without a false root whose `\"auto\"` states differ anyway: {len(diff_clean)} (a check's "
        "factorisations replace chord mode's kept one, or a Newton failure that the continuation rescues in "
        "only one of the two)."] + [f"- {r['system']}, {r['method']}, h = {r['h']}, {r['mode']}" for r in diff_clean[:10]] + [
        "",
        f"Roots checked by `\"auto\"`: {checks} of {steps} steps ({100 * checks / max(steps, 1):.1f} %, mostly at "
        "the large h of the sample).\n"])


def run_section(cfg, ctx):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        say("  part 1: the sample, always against auto")
        r1 = part1(cfg["branch_quick"])
        say("  part 2: auto against never, timed")
        r2 = part2(cfg["branch_rounds"])
    return "\n".join(part1_lines(r1) + [
        "### Part 2. Cost on ordinary runs, same process\n",
        f"Double pendulum (TOP Table 1), 100 s; per-step time of `\"auto\"` and `\"never\"` (medians of "
        f"{cfg['branch_rounds']} interleaved rounds) and the median of the paired ratios (min–max).\n",
        md_table(["method", "h", "checks in the run", "auto µs/step", "never µs/step", "auto / never"], r2)]) + "\n"
