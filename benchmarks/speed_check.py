"""Per-step cost of the built-in double pendulum against the yardstick (../shared/bench/limit),
interleaved in one process: ratios per round, medians.  Used while working on the Newton engine
(benchmarks/RESULTS_speed.md).

    python benchmarks/speed_check.py [--rounds R] [--newton full,step] [--cases simpson:0.1,...]

Our time: the least of several sp.integrate calls over T = 100 s (trajectory stored, as the
yardstick stores it); the yardstick's: the least of its own repeats (`wpone`, default stopping
rule).  e_H = max |H - H0| / |H0| over every step.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import symplectic as sp  # noqa: E402
import models as M  # noqa: E402
from suite.yardstick import build, run_yardstick  # noqa: E402


def ours_min(dp, method, h, N, newton, budget):
    best, spent, k = float("inf"), 0.0, 0
    while k < 3 or spent < budget:
        t0 = time.perf_counter()
        sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=method, newton=newton)
        dt = time.perf_counter() - t0
        best, spent, k = min(best, dt), spent + dt, k + 1
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget", type=float, default=0.3)
    ap.add_argument("--newton", default="full")
    ap.add_argument("--cases", default="simpson:0.1,simpson:0.01,lobatto5:0.05,lobatto5:0.03")
    ap.add_argument("--T", type=float, default=100.0)
    a = ap.parse_args()
    dp = M.dp_system()
    cases = [(c.split(":")[0], float(c.split(":")[1])) for c in a.cases.split(",")]
    modes = a.newton.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        exe, why = build(tmp)
        rows = []
        for method, h in cases:
            N = int(round(a.T / h))
            for nm in modes:
                tr = sp.integrate(dp, M.DP_Q0, M.DP_P0, h, N, method=method, newton=nm)
                E = M.dp_energy(tr.q, tr.p)
                rows.append(dict(method=method, h=h, N=N, newton=nm, it=float(np.mean(tr.newton_iterations)),
                                 eH=float(np.max(np.abs(E - E[0])) / abs(E[0])), ours=[], yard=[]))
        for r in range(a.rounds):
            for row in (rows if r % 2 == 0 else rows[::-1]):
                if exe and row["method"] == "simpson":
                    y = run_yardstick(exe, "simpson", row["h"], row["N"], a.budget)
                    row["yard"].append(y["t_min"])
                    row.update(yit=y["it"], yeH=y["e_H"])
                row["ours"].append(ours_min(dp, row["method"], row["h"], row["N"], row["newton"], a.budget))
        for row in rows:
            us = np.median(row["ours"]) / row["N"] * 1e6
            line = (f"{row['method']:9s} h={row['h']:<5g} newton={row['newton']:6s} {us:.3f} us/step "
                    f"it={row['it']:.2f} eH={row['eH']:.2e}")
            if row["yard"]:
                rat = [o / y for o, y in zip(row["ours"], row["yard"])]
                line += (f" | yard {np.median(row['yard']) / row['N'] * 1e6:.3f} us/step it={row['yit']:.2f} "
                         f"eH={row['yeH']:.2e} ratio {np.median(rat):.2f} ({min(rat):.2f}-{max(rat):.2f})")
            print(line, flush=True)


if __name__ == "__main__":
    main()
