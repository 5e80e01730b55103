"""Section 9: per-step cost of the built-in double pendulum against the yardstick, a hand-written
C Simpson (and midpoint) step for the same double pendulum kept outside the repository in
../shared/bench/limit/ (its README says how to run it beside ours).  It is compiled from there at
benchmark time (nothing of it is copied here); without it the section says so and is skipped.

Per round: our time is the least of several ``sp.integrate`` calls over the same N steps, the
yardstick's the least of its own repeats (``wpone`` mode, its default stopping rule); the ratio is
taken round by round, median reported.  The yardstick's timed repeats store no trajectory (its
``time_cfg`` passes no output arrays; only its untimed energy run does), so ours is timed both ways:
with the trajectory stored (what ``sp.integrate`` returns by default: t, q, p, the mid nodes and
the iteration counts, newly allocated arrays) and with ``store_every=N`` (the end state only), the
like-for-like figure."""
import os
import re
import subprocess
import time

import numpy as np

import symplectic as sp
import models as M

from .common import REPO, med, say, write_csv

# (method, h, newton mode): the default full Newton, and the per-step mode (one matrix and LU a step,
# started from the two-step predictor); Lobatto-5 at its step sizes of section 8, ours only (the
# yardstick has Simpson and the midpoint rule)
CASES = (("simpson", 0.1, "full"), ("simpson", 0.01, "full"), ("simpson", 0.1, "step"),
         ("simpson", 0.01, "step"), ("midpoint", 0.1, "full"), ("midpoint", 0.01, "full"),
         ("lobatto5", 0.05, "full"), ("lobatto5", 0.05, "step"), ("lobatto5", 0.03, "full"),
         ("lobatto5", 0.03, "step"))
YARD_METHODS = ("simpson", "midpoint")
NAN = float("nan")


def find_source():
    """bench.c of the yardstick: $SYMPLECTIC_YARDSTICK, or shared/bench/limit beside the checkout."""
    cands = [os.environ.get("SYMPLECTIC_YARDSTICK", "")]
    cands += [os.path.join(REPO, *[".."] * k, "shared", "bench", "limit") for k in (1, 2)]
    for d in cands:
        if d and os.path.exists(os.path.join(d, "bench.c")):
            return os.path.join(os.path.abspath(d), "bench.c")
    return None


def build(tmp):
    """Compile the yardstick into tmp: (path, None) or (None, why not)."""
    src = find_source()
    if src is None:
        return None, "the yardstick (../shared/bench/limit/bench.c) is not there"
    exe = os.path.join(tmp, "limit_bench")
    r = subprocess.run(["gcc", "-O2", "-std=gnu99", "-o", exe, src, "-lm"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"the yardstick did not compile: {r.stderr.strip()[:200]}"
    return exe, None


def run_yardstick(exe, method, h, N, budget):
    """One `wpone` run: dict(N, it, e_H, t_min) (t_min: seconds for the N steps, least of its repeats)."""
    out = subprocess.run([exe, "wpone", method, repr(h), repr(budget), "2", repr(N * h)],
                         check=True, capture_output=True, text=True).stdout
    f = dict(re.findall(r"(\S+)=(\S+)", out))
    return dict(N=int(f["N"]), it=float(f["it/step"]), e_H=float(f["eH"]), t_min=float(f["t_min_s"]))


def ours_min(dp, method, h, N, budget, newton="full", store=True):
    """The least wall time of sp.integrate over N steps, repeated for about `budget` seconds (>= 3 calls);
    store=False: store_every=N (the end state only, no trajectory arrays)."""
    best, spent, k = float("inf"), 0.0, 0
    kw = {} if store else dict(store_every=N)
    while k < 3 or spent < budget:
        t0 = time.perf_counter()
        sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=method, newton=newton, **kw)
        dt = time.perf_counter() - t0
        best, spent, k = min(best, dt), spent + dt, k + 1
    return best


def measure(cfg, exe):
    dp, N = M.dp_system(), cfg["yard_steps"]
    rows = []
    for method, h, mode in CASES:
        tr = sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=method, newton=mode)
        E = M.dp_energy(tr.q, tr.p)
        rows.append(dict(method=method, mode=mode, h=h, steps=N, newton=float(np.mean(tr.newton_iterations)),
                         e_H=float(np.max(np.abs(E - E[0])) / abs(E[0])), ours=[], bare=[], yard=[]))
    for r in range(cfg["yard_rounds"]):
        for row in (rows if r % 2 == 0 else rows[::-1]):
            if row["method"] in YARD_METHODS:
                y = run_yardstick(exe, row["method"], row["h"], N, cfg["yard_budget"])
                row["yard"].append(y["t_min"])
                row.update(yard_newton=y["it"], yard_e_H=y["e_H"])
            row["ours"].append(ours_min(dp, row["method"], row["h"], N, cfg["yard_budget"], row["mode"]))
            row["bare"].append(ours_min(dp, row["method"], row["h"], N, cfg["yard_budget"], row["mode"],
                                        store=False))
    for row in rows:
        ratios = [a / b for a, b in zip(row["ours"], row["yard"])] or [NAN]
        bare = [a / b for a, b in zip(row["bare"], row["yard"])] or [NAN]
        row.setdefault("yard_newton", NAN)
        row.setdefault("yard_e_H", NAN)
        row.update(us_ours=med(row["ours"]) / N * 1e6, us_bare=med(row["bare"]) / N * 1e6,
                   us_yard=med(row["yard"]) / N * 1e6,
                   ratio=med(ratios), ratio_min=min(ratios), ratio_max=max(ratios), rounds=len(row["ours"]),
                   ratio_bare=med(bare), ratio_bare_min=min(bare), ratio_bare_max=max(bare))
        say(f"  {row['method']:9s} {row['mode']:4s} h={row['h']:<5g} ours {row['us_ours']:.3f} µs/step ({row['newton']:.2f} it), "
            f"not stored {row['us_bare']:.3f}, yardstick {row['us_yard']:.3f} µs/step ({row['yard_newton']:.2f} it): "
            f"ratio {row['ratio']:.2f} ({row['ratio_min']:.2f}–{row['ratio_max']:.2f}), not stored "
            f"{row['ratio_bare']:.2f} ({row['ratio_bare_min']:.2f}–{row['ratio_bare_max']:.2f})")
    return rows


def run_section(cfg, ctx, out, rel, info, stamp):
    from .report_peers import yard_block
    say("== 9. per-step cost against the hand-written C Simpson step (yardstick)")
    exe, why = build(ctx["tmp"])
    if exe is None:
        say(f"  skipped: {why}")
        return yard_block(cfg, None, why, info, stamp)
    rows = measure(cfg, exe)
    write_csv(os.path.join(out, "yardstick.csv"), rows,
              ["method", "mode", "h", "steps", "us_ours", "us_bare", "us_yard", "ratio", "ratio_min", "ratio_max",
               "ratio_bare", "ratio_bare_min", "ratio_bare_max", "rounds",
               "newton", "yard_newton", "e_H", "yard_e_H"])
    return yard_block(cfg, rows, None, info, stamp)
