"""Section 8: the TOP double pendulum against the strongest peers.

For every horizon T in 100 ... 10^5 s and target e_H <= 1e-6 ... 1e-12: the cheapest setting of
each method that reaches the target over [0, T] (search: suite/peers.py), then the chosen settings
of one horizon timed in interleaved rounds; ratios per round to lobatto5, Simpson and the best of
ours, medians.  Peers: heyoka.py (Taylor, LLVM JIT; compile time reported separately, and a
one-off run's end to end), GSL rk8pd (compiled C), SciPy DOP853 and SUNDIALS CVODE (Adams), the
last two with the closed-form Python right-hand side of models.py."""
import os
import subprocess
import sys

import models as M

from . import heyoka_models as HY
from .common import med, say, write_csv
from .peer_methods import FromSolver, Ours, h_grid
from .peers import run_all, search_points
from .solvers import GSL, Cvode, Problem, SciPy, tol_grid

# ours: (method, newton); newton="step" (one Newton matrix and LU per step) is named method + "_step"
OURS = (("simpson", "full"), ("lobatto4", "full"), ("lobatto4", "step"), ("lobatto5", "full"),
        ("lobatto5", "step"), ("lobatto6", "step"), ("lobatto7", "step"))
REFS = ("lobatto5", "simpson")


def methods(cfg, ctx):
    hg = h_grid(100.0, 0.2, 1e-4, cfg["n_per_octave"])
    out = [Ours(M.dp_system(), m, M.DP_Q0, M.DP_P0, M.dp_energy, hg, cfg["peer_chunk"], newton=nw,
                **(dict(name=f"{m}_step", label=f"symplectic {m}, newton='step'") if nw == "step" else {}))
           for m, nw in OURS]
    hy = ctx.get("heyoka")
    if hy is not None:
        out.append(HY.Heyoka(hy, "heyoka", "heyoka.py (Taylor, LLVM JIT)", tol_grid(cfg["tol_per_decade"], 4, 16),
                             HY.dp_system(hy), list(M.DP_Q0) + list(M.DP_P0), HY.dp_energy_rows))
    pb = Problem("double_pendulum", 100.0, 0.2, 1e-5)
    if ctx["gsl_exe"]:
        out.append(FromSolver(GSL(pb, [], ctx["gsl_exe"], ctx["gsl"]), tol_grid(cfg["tol_per_decade"], 4, 15)))
    slow = dict(max_T=cfg["peer_python_max_T"])
    out.append(FromSolver(SciPy(pb, "DOP853", []), tol_grid(cfg["tol_per_decade"], 4, 14), **slow))
    if ctx["sksundae"]:
        out.append(FromSolver(Cvode(pb, []), tol_grid(cfg["tol_per_decade"], 4, 14), **slow))
    return out


def import_seconds(module, repeats=3):
    """The least wall time of `import module` in a fresh interpreter (of `repeats`)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    best = float("inf")
    for _ in range(repeats):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if r.returncode == 0:
            best = min(best, float(r.stdout.strip()))
    return best


def jit_times(searches, rows):
    """heyoka's compile time of every chosen tolerance (cache cleared), and the one-off end to end
    (compile + the median integration) next to it in the rows."""
    hs = next((s for s in searches if s.m.name == "heyoka"), None)
    if hs is None:
        return
    for r in rows:
        if r["method"] == "heyoka" and r["reached"]:
            r["jit_s"] = hs.m.measure_jit(r["prm"])
            r["one_off_s"] = r["jit_s"] + r["wall"]
    for r in rows:
        if r["method"] == "heyoka" and r["reached"]:
            best = next((x for x in rows if x["T"] == r["T"] and x["target"] == r["target"]
                         and x["method"] == r["best_ours"]), None)
            r["one_off_vs_best"] = r["one_off_s"] / best["wall"] if best else float("nan")
            r["order"] = hs.m.ta(r["prm"]).order


def run_section(cfg, ctx, out, rel, info, stamp):
    from .report_peers import dp_block
    from .plots_peers import plot_dp
    say("== 8. double pendulum against the strongest peers")
    ms = methods(cfg, ctx)
    rows, searches = run_all(ms, cfg["peer_horizons"], cfg["peer_targets"], cfg["peer_cap"], cfg["peer_rounds"],
                             cfg["peer_min_rounds"], cfg["peer_round_budget"], refs=REFS)
    jit_times(searches, rows)
    imports = {mod: import_seconds(mod) for mod in ("symplectic", "heyoka") if mod != "heyoka" or ctx.get("heyoka")}
    write_csv(os.path.join(out, "peers_dp.csv"), rows,
              ["T", "target", "method", "label", "reached", "param", "steps", "e_H", "newton", "wall", "wall_min",
               "wall_max", "cpu", "samples", "best_ours", "vs_lobatto5", "vs_simpson", "vs_best", "jit_s",
               "one_off_s", "one_off_vs_best", "order", "note"])
    write_csv(os.path.join(out, "peers_dp_search.csv"), search_points(searches))
    png = plot_dp(out, rows, cfg)
    say("  imports (fresh interpreter): " + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in imports.items()))
    return dp_block(cfg, rows, ms, imports, rel, png, info, stamp)


def median_ratio(rows, method, key="vs_best"):
    """Median of a method's ratio column over every (T, target) where it was timed."""
    return med([r.get(key) for r in rows if r["method"] == method and r["reached"]])
