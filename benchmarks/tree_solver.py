"""Per-step cost of the chain's O(n) Newton linear algebra (``linear_solver="tree"``,
csrc/core/sym_galerkin_tree.c) against the dense LU path, same run, interleaved.

Issue 50's setting: ``pendulum_chain(n)``, unit masses and lengths, q_i(0) = 0.5 sin(1.3 i),
at rest, h = 0.005, each solver with its default Newton mode ("auto": per step on the tree
path, decoupled / full on the dense one).  For each n and method the two solvers run
alternately ``--rounds`` times (``--steps`` steps each, trajectory storage included); the
table gives the median time per step of each, the median of the per-round ratios
tree / dense, the Newton iterations and factorisations per step, and the largest
difference of the two runs' states (rounding grown by the chain's chaos).  The exponent
alpha is the least-squares slope of log(time per step) against log n over n = 16..128
(issue 50: alpha <= 1.3 for lobatto5).  A second table times the Newton modes on the tree
path (lobatto5, the same runs), behind newton="auto" taking "step" there.

    python benchmarks/tree_solver.py [--n 4 8 16 32 64 128] [--methods lobatto5 simpson]
        [--rounds 5] [--out benchmarks/results/tree_solver.md]
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import symplectic as sp  # noqa: E402


def steps_for(n, solver):
    # enough steps for a stable timing, few where the dense step costs milliseconds
    if solver == "dense":
        return 400 if n <= 16 else 200 if n <= 32 else 60 if n <= 64 else 20
    return 400 if n <= 32 else 200


def one(system, q0, p0, h, steps, method, solver, newton="auto"):
    t = time.perf_counter()
    r = sp.integrate(system, q0, p0, h, steps, method=method, linear_solver=solver,
                     newton=newton)
    return time.perf_counter() - t, r


def modes_table(ns, h, rounds, modes=("full", "chord", "step")):
    """lobatto5 on the tree path, each Newton mode, interleaved: median us/step, it and
    factorisations per step."""
    out = ["\n**Newton modes on the tree path (lobatto5)**\n",
           "| n | " + " | ".join(f"{m}: µs/step (it, fact / step)" for m in modes) + " |",
           "|---|" + "---|" * len(modes)]
    for n in ns:
        system = sp.systems.pendulum_chain(n)
        q0, p0 = 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n)
        per = {m: [] for m in modes}
        counts = {}
        steps = steps_for(n, "tree")
        for _ in range(rounds):
            for m in modes:
                dt, r = one(system, q0, p0, h, steps, "lobatto5", "tree", m)
                per[m].append(dt / steps)
                counts[m] = r.counts
        cells = [f"{np.median(per[m]) * 1e6:.3g} ({counts[m].newton_iterations / steps:.2f}, "
                 f"{counts[m].factorizations / steps:.2f})" for m in modes]
        out.append(f"| {n} | " + " | ".join(cells) + " |")
        print(out[-1], flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[4, 6, 8, 12, 16, 32, 64, 128])
    ap.add_argument("--methods", nargs="+", default=["lobatto5", "simpson"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--h", type=float, default=0.005)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    load0 = os.getloadavg()
    start = datetime.datetime.now(datetime.timezone.utc)
    lines = []
    for method in a.methods:
        rows = []
        for n in a.n:
            system = sp.systems.pendulum_chain(n)
            q0, p0 = 0.5 * np.sin(1.3 * np.arange(n)), np.zeros(n)
            per = {"dense": [], "tree": []}
            runs = {}
            for solver in ("dense", "tree"):   # warm-up (and the runs compared below)
                one(system, q0, p0, a.h, 5, method, solver)
            ratios = []
            for _ in range(a.rounds):
                t = {}
                for solver in ("dense", "tree"):
                    steps = steps_for(n, solver)
                    dt, r = one(system, q0, p0, a.h, steps, method, solver)
                    t[solver] = dt / steps
                    per[solver].append(t[solver])
                    runs[solver] = r
                ratios.append(t["tree"] / t["dense"])
            m = min(len(runs["dense"].q), len(runs["tree"].q))
            diff = np.abs(runs["dense"].q[:m] - runs["tree"].q[:m]).max()
            cd, ct = runs["dense"].counts, runs["tree"].counts
            rows.append((n, np.median(per["dense"]), np.median(per["tree"]), np.median(ratios),
                         cd.newton_iterations / cd.steps, cd.factorizations / cd.steps,
                         ct.newton_iterations / ct.steps, ct.factorizations / ct.steps, diff, m - 1))
            print(method, rows[-1], flush=True)
        lines.append(f"\n**{method}**\n")
        lines.append("| n | dense µs/step | tree µs/step | tree / dense (median of rounds) | "
                     "dense it, fact / step | tree it, fact / step | max abs Δq (steps) |")
        lines.append("|---|---|---|---|---|---|---|")
        for (n, td, tt, rr, di, df, ti, tf, diff, m) in rows:
            lines.append(f"| {n} | {td * 1e6:.3g} | {tt * 1e6:.3g} | **{rr:.3g}** | {di:.2f}, {df:.2f} "
                         f"| {ti:.2f}, {tf:.2f} | {diff:.1e} ({m}) |")
        big = [(n, tt, td) for (n, td, tt, *_r) in rows if 16 <= n <= 128]
        if len(big) >= 2:
            x = np.log([b[0] for b in big])
            for label, k in (("tree", 1), ("dense", 2)):
                y = np.log([b[k] for b in big])
                alpha = np.polyfit(x, y, 1)[0]
                lines.append(f"\n{label}: time per step ~ n^{alpha:.2f} over n = "
                             f"{big[0][0]}..{big[-1][0]} (least squares on the medians)")
    lines += modes_table([n for n in a.n if n >= 8], a.h, a.rounds)
    load1 = os.getloadavg()
    head = (f"# The chain's O(n) Newton linear algebra against the dense LU\n\n"
            f"{provenance('tree_solver.py', start, commit, load0, load1)}\n\n"
            f"`pendulum_chain(n)`, unit masses and lengths, q_i(0) = 0.5 sin(1.3 i), at rest, "
            f"h = {a.h}, default Newton mode of each solver; {a.rounds} interleaved rounds; time per "
            f"step = one `sp.integrate` call / its steps (storage included).\n")
    text = head + "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


def provenance(script, start, commit, load0, load1):
    """The results file's line on how, when, at which commit and where it was made."""
    return (f"Generated by `python benchmarks/{script} {' '.join(sys.argv[1:])}` on "
            f"{start:%Y-%m-%d %H:%M} UTC at commit {commit}; machine: "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs ({_cpu_name()}); "
            f"load average before / after: {' '.join(f'{v:.2f}' for v in load0)} / "
            f"{' '.join(f'{v:.2f}' for v in load1)}. Do not edit by hand: rerun the command.")


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    main()
