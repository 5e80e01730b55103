"""The issue-19 table rows re-measured for the Newton engine's speed work
(benchmarks/RESULTS_speed.md): the TOP double pendulum, e_H = max |H - H0|/|H0| over every step,
the cheapest setting of each method that reaches the target (search of suite/peers.py), then the
chosen settings timed in interleaved rounds; ratios per round, medians.

    python benchmarks/speed_peers.py [--horizons 100,1e4] [--targets 1e-8,1e-10] [--rounds 5]

Ours: lobatto5 and lobatto4 with full Newton (the default) and per-step Newton (newton="step"),
simpson with --simpson;
peers: GSL rk8pd (compiled C, if libgsl is there) and heyoka.py (if installed; its JIT time is not
in the integration time, see suite section 8 for that)."""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models as M  # noqa: E402
from suite import heyoka_models as HY  # noqa: E402
from suite.common import load_module  # noqa: E402
from suite.peer_methods import FromSolver, Ours, h_grid  # noqa: E402
from suite.peers import run_all  # noqa: E402
from suite.solvers import GSL, Problem, tol_grid  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--horizons", default="100,1e4")
    ap.add_argument("--targets", default="1e-8,1e-10")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cap", type=float, default=40.0)
    ap.add_argument("--budget", type=float, default=15.0)
    ap.add_argument("--per-octave", type=int, default=8)
    ap.add_argument("--simpson", action="store_true", help="time simpson too (never the best at these targets)")
    a = ap.parse_args()
    horizons = [float(x) for x in a.horizons.split(",")]
    targets = [float(x) for x in a.targets.split(",")]
    hg = h_grid(100.0, 0.2, 1e-4, a.per_octave)
    ms = [Ours(M.dp_system(), "lobatto5", M.DP_Q0, M.DP_P0, M.dp_energy, hg, 1 << 20),
          Ours(M.dp_system(), "lobatto5", M.DP_Q0, M.DP_P0, M.dp_energy, hg, 1 << 20, newton="step",
               name="lobatto5_step", label="symplectic lobatto5, newton='step'"),
          Ours(M.dp_system(), "lobatto4", M.DP_Q0, M.DP_P0, M.dp_energy, hg, 1 << 20),
          Ours(M.dp_system(), "lobatto4", M.DP_Q0, M.DP_P0, M.dp_energy, hg, 1 << 20, newton="step",
               name="lobatto4_step", label="symplectic lobatto4, newton='step'")]
    if a.simpson:
        ms.append(Ours(M.dp_system(), "simpson", M.DP_Q0, M.DP_P0, M.dp_energy, hg, 1 << 20))
    with tempfile.TemporaryDirectory() as tmp:
        gsl = load_module("bench_gsl", os.path.join(HERE, "compiled", "gsl.py"))
        exe = gsl.build(tmp) if gsl is not None else None
        pb = Problem("double_pendulum", 100.0, 0.2, 1e-5)
        if exe:
            ms.append(FromSolver(GSL(pb, [], exe, gsl), tol_grid(4, 4, 15)))
        hy = HY.load()
        if hy is not None:
            ms.append(HY.Heyoka(hy, "heyoka", "heyoka.py (Taylor, LLVM JIT)", tol_grid(4, 4, 16),
                                HY.dp_system(hy), list(M.DP_Q0) + list(M.DP_P0), HY.dp_energy_rows))
        rows, _ = run_all(ms, horizons, targets, a.cap, a.rounds, 3, a.budget, refs=("lobatto5",))
    print("| T (s) | e_H <= | method | setting | steps | it/step | e_H | wall (ms, median) | / lobatto5 (full) |")
    print("|---|---|---|---|---|---|---|---|---|")
    ours = {"lobatto5", "lobatto5_step", "lobatto4", "lobatto4_step", "simpson"}
    best = {}
    for r in rows:
        if r["reached"] and r["method"] in ours:
            k = (r["T"], r["target"])
            if k not in best or r["vs_lobatto5"] < best[k][1]:
                best[k] = (r["method"], r["vs_lobatto5"])
    for r in rows:
        if not r["reached"]:
            print(f"| {r['T']:g} | {r['target']:g} | {r['method']} | not reached ({r.get('note', '')}) | | | | | |")
            continue
        it = f"{r['newton']:.2f}" if r.get("newton") else ""
        print(f"| {r['T']:g} | {r['target']:g} | {r['method']} | {r['param']} | {r.get('steps') or ''} | {it} | "
              f"{r['e_H']:.2e} | {r['wall'] * 1e3:.2f} | {r['vs_lobatto5']:.2f} |")


    # peers against the best of ours, from the same rounds' medians (ratio of medians of
    # per-round ratios to lobatto5: time_peer / time_best)
    print()
    print("| T (s) | e_H <= | best of ours | peer | peer time / best of ours |")
    print("|---|---|---|---|---|")
    for r in rows:
        k = (r["T"], r["target"])
        if r["reached"] and r["method"] not in ours and k in best:
            print(f"| {r['T']:g} | {r['target']:g} | {best[k][0]} | {r['method']} | "
                  f"{r['vs_lobatto5'] / best[k][1]:.2f} |")


if __name__ == "__main__":
    main()
