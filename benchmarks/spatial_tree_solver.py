"""Per-step cost of the spatial trees' O(n) Newton linear algebra (``linear_solver="tree"``
on URDF / multibody trees, csrc/core/sym_galerkin_stree.c) against the dense LU path,
same run, interleaved.

Systems: generated spatial trees of n links (tests/support/spatial_trees.py: revolute
joints about x, y, z in turn, every fifth prismatic, 0.4 m offsets, 0.2 rad twists),
as a chain and branched, and the 7-joint arm of tests/data/urdf; q_i(0) = 0.3 sin(1.3 i +
0.2), p_i(0) = 0.1 cos i, h = 0.005, each solver with its default Newton mode.  For
each system, n and method the two solvers run alternately ``--rounds`` times; the table
gives the median time per step of each, the median of the per-round ratios tree / dense,
the Newton iterations and factorisations per step and the largest difference of the two
runs' states.  alpha is the least-squares slope of log(time per step) against log n over
n = 16..128; the crossover is where the ratio passes 1 (the first n from which the tree
path is the faster at every larger n measured).  Its value sets SYM_STREE_MIN_N
(csrc/core/sym_galerkin_tree.c), where linear_solver="auto" takes the tree path.

    python benchmarks/spatial_tree_solver.py [--n 8 16 24 32 48 56 64 96 128]
        [--methods lobatto5 simpson] [--rounds 3] [--out benchmarks/results/spatial_tree_solver.md]
"""
import argparse
import datetime
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)
from support.spatial_trees import spatial_urdf  # noqa: E402
from symplectic import multibody as mb  # noqa: E402
from tree_solver import one, provenance  # noqa: E402


def steps_for(n, solver):
    # enough steps for a stable timing, few where the dense step costs milliseconds
    if solver == "dense":
        return 300 if n <= 16 else 100 if n <= 32 else 30 if n <= 64 else 12
    return 300 if n <= 16 else 100 if n <= 64 else 40


def system_for(kind, n):
    if kind == "arm7":
        return mb.from_urdf(os.path.join(HERE, "..", "tests", "data", "urdf", "arm7.urdf"))
    return mb.from_urdf(spatial_urdf(n, branched=kind == "branched"))


def compare(kind, n, method, h, rounds):
    system = system_for(kind, n)
    n = system.n
    q0, p0 = 0.3 * np.sin(1.3 * np.arange(n) + 0.2), 0.1 * np.cos(np.arange(n))
    for solver in ("dense", "tree"):   # warm-up
        one(system, q0, p0, h, 3, method, solver)
    per = {"dense": [], "tree": []}
    runs, ratios = {}, []
    for _ in range(rounds):
        t = {}
        for solver in ("dense", "tree"):
            steps = steps_for(n, solver)
            dt, runs[solver] = one(system, q0, p0, h, steps, method, solver)
            t[solver] = dt / steps
            per[solver].append(t[solver])
        ratios.append(t["tree"] / t["dense"])
    m = min(len(runs["dense"].q), len(runs["tree"].q))
    diff = np.abs(runs["dense"].q[:m] - runs["tree"].q[:m]).max()
    cd, ct = runs["dense"].counts, runs["tree"].counts
    return (n, np.median(per["dense"]), np.median(per["tree"]), np.median(ratios),
            cd.newton_iterations / cd.steps, cd.factorizations / cd.steps,
            ct.newton_iterations / ct.steps, ct.factorizations / ct.steps, diff, m - 1)


def table(kind, method, rows):
    out = [f"\n**{kind}, {method}**\n",
           "| n | dense µs/step | tree µs/step | tree / dense (median of rounds) | "
           "dense it, fact / step | tree it, fact / step | max abs Δq (steps) |",
           "|---|---|---|---|---|---|---|"]
    for (n, td, tt, rr, di, df, ti, tf, diff, m) in rows:
        out.append(f"| {n} | {td * 1e6:.3g} | {tt * 1e6:.3g} | **{rr:.3g}** | {di:.2f}, {df:.2f} "
                   f"| {ti:.2f}, {tf:.2f} | {diff:.1e} ({m}) |")
    big = [(n, tt, td) for (n, td, tt, *_r) in rows if 16 <= n <= 128]
    if len(big) >= 2:
        x = np.log([b[0] for b in big])
        for label, k in (("tree", 1), ("dense", 2)):
            alpha = np.polyfit(x, np.log([b[k] for b in big]), 1)[0]
            out.append(f"\n{label}: time per step ~ n^{alpha:.2f} over n = {big[0][0]}..{big[-1][0]} "
                       "(least squares on the medians)")
    ahead = [n for (n, _td, _tt, rr, *_r) in rows if rr < 1.0]
    cross = next((n for (n, *_r) in rows if all(k in ahead for k in [r[0] for r in rows if r[0] >= n])),
                 None)
    out.append(f"\ncrossover: the tree path is the faster from n = {cross} on"
               if cross is not None else "\ncrossover: the dense path is the faster at every n measured")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[8, 16, 24, 32, 48, 56, 64, 96, 128])
    ap.add_argument("--methods", nargs="+", default=["lobatto5", "simpson"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--h", type=float, default=0.005)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=HERE).stdout.strip()
    load0 = os.getloadavg()
    start = datetime.datetime.now(datetime.timezone.utc)
    lines = []
    for method in a.methods:
        for kind in ("chain", "branched"):
            rows = []
            for n in a.n:
                rows.append(compare(kind, n, method, a.h, a.rounds))
                print(kind, method, rows[-1], flush=True)
            lines += table(kind, method, rows)
        lines += table("arm7", method, [compare("arm7", 7, method, a.h, a.rounds)])
    load1 = os.getloadavg()
    head = (f"# The spatial trees' O(n) Newton linear algebra against the dense LU\n\n"
            f"{provenance('spatial_tree_solver.py', start, commit, load0, load1)}\n\n"
            f"Generated spatial trees (tests/support/spatial_trees.py) as a chain and branched, "
            f"and arm7.urdf; q_i(0) = 0.3 sin(1.3 i + 0.2), p_i(0) = 0.1 cos i, h = {a.h}, "
            f"default Newton mode of each solver; {a.rounds} interleaved rounds; time per step = "
            f"one `sp.integrate` call / its steps (storage included).\n")
    text = head + "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
