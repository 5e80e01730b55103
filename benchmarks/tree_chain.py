"""The cost per step of the pendulum chain as a rigid-body tree against the built-in chain.

    python benchmarks/tree_chain.py [--rounds 7] [--sizes 4 8 16 32 64] [--method lobatto5]
                                    [--newton auto full]

``sp.systems.pendulum_chain(n)`` (absolute angles; M_q in closed form, csrc/core/
sym_sys_pendulums.c) and ``multibody.pendulum_chain(n)`` (the same chain in relative joint
angles through the C built-in "tree", csrc/core/sym_sys_tree.c), unit masses and lengths,
q_i(0) = 0.5 sin(1.3 i) at rest (theta = L^-1 q for the tree), h = 0.01, with Newton's
"auto" policy (the default) and "full".  The two discretisations are the same up to the
constant change of coordinates q = L theta (tests/validation/test_tree_chain.py), and so are
Newton's iterates (its matrix transforms as L^T J L); but the policies' tests -- the update
against the step's increment, the contraction rates -- are measured in each system's own
coordinates, and L^T M_q L is worse conditioned than M_q (about 1800x at n = 64), so with
"auto" the iteration counts can differ, and a run of one can fail where the other's does
not (reported, not timed).  With "full" the counts agree, and the ratio is the cost of
evaluating the model (M, V and their derivatives) against the shared linear algebra.

Timed in one process, the systems (and modes) alternating round by round (best of 2 calls per round,
median over the rounds), so that a slow phase of the machine hits both.  Prints microseconds
per step, the ratio tree / built-in (> 1: the tree is slower), Newton iterations per step and
the largest deviation of the tree's run, mapped by L, from the built-in's (relative to the
largest |q|).  A measurement for the issue or the commit message, not a section of
RESULTS.md.
"""
import argparse
import datetime
import os
import platform
import statistics
import time

import numpy as np

import symplectic as sp
from symplectic import multibody

H = 0.01
#: steps per timed call, so that a call takes some 0.05 - 0.3 s
STEPS = {4: 4000, 8: 2000, 16: 800, 32: 300, 64: 100}


def best_of(fn, k=2):
    best = float("inf")
    for _ in range(k):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    ap.add_argument("--method", default="lobatto5")
    ap.add_argument("--newton", nargs="+", default=["auto", "full"])
    args = ap.parse_args(argv)
    print(f"# pendulum_chain(n): built-in vs multibody tree, {args.method}, h = {H}, "
          f"{args.rounds} interleaved rounds (best of 2 each, median)")
    print(f"symplectic {sp.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n")
    print("| n | newton | steps | built-in (us/step) | tree (us/step) | tree / built-in "
          "| Newton it./step (built-in, tree) | max dev. q |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        steps = STEPS.get(n, max(20, 4000 * 4 // n))
        L = np.tril(np.ones((n, n)))
        q0 = 0.5 * np.sin(1.3 * np.arange(1, n + 1))
        starts = {"builtin": (sp.systems.pendulum_chain(n), q0),
                  "tree": (multibody.pendulum_chain(n), np.linalg.solve(L, q0))}

        def run(which, newton, k=steps):
            system, x0 = starts[which]
            return sp.integrate(system, x0, np.zeros(n), H, k, method=args.method,
                                newton=newton)

        configs, rows = [], {}
        for newton in args.newton:
            runs, failed = {}, []
            for w in starts:                                 # warm-up, and the states
                try:
                    runs[w] = run(w, newton)
                except sp.ConvergenceError as e:
                    failed.append(f"{w}: {e.args[0].split(';')[0]}")
            if failed:
                rows[newton] = (f"| {n} | {newton} | {steps} | – | – | – | – | not timed, "
                                f"{'; '.join(failed)} |")
                continue
            dev = (np.max(np.abs(runs["tree"].q @ L.T - runs["builtin"].q))
                   / np.max(np.abs(runs["builtin"].q)))
            its = {w: float(r.newton_iterations[1:].mean()) for w, r in runs.items()}
            rows[newton] = (dev, its)
            configs += [(w, newton) for w in starts]
        times = {c: [] for c in configs}
        for _ in range(args.rounds):
            for c in configs:
                times[c].append(best_of(lambda: run(*c)) / steps)
        for newton in args.newton:
            if isinstance(rows[newton], str):
                print(rows[newton], flush=True)
                continue
            dev, its = rows[newton]
            us = {w: statistics.median(times[(w, newton)]) * 1e6 for w in starts}
            print(f"| {n} | {newton} | {steps} | {us['builtin']:.1f} | {us['tree']:.1f} | "
                  f"{us['tree'] / us['builtin']:.2f} | {its['builtin']:.2f}, {its['tree']:.2f} "
                  f"| {dev:.1e} |", flush=True)


if __name__ == "__main__":
    main()
