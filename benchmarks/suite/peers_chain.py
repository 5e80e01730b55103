"""Section 10: where M(q) is a real n x n matrix.  The n-link pendulum chain (unit masses and
lengths) and an arm-like chain (masses 2 -> 0.5 kg and lengths 0.5 -> 0.2 m tapering from base to
tip; ``models.chain_params``), n = 4 ... 32, q_i(0) = 0.5 sin(1.3 i), at rest, against

- heyoka.py through its Lagrangian helper (L = T - V from the Cartesian positions of the masses;
  ``heyoka.lagrangian`` forms the explicit equations of motion), in compact mode (what compiles
  for every n) and in its default mode where the compile time is affordable (a power law through
  the measured compile times predicts the next n; beyond the budget it is reported, not run);
- GSL rk8pd with a compiled right-hand side that assembles M(q) and solves M(q) qdd = r by LU
  (``benchmarks/compiled/gsl_rk8pd_chain.c``).

One accuracy target (e_H <= pc_target over [0, T]), horizons 10 ... 1000 s; search and timing as
in section 8 (suite/peers.py)."""
import math
import os

import numpy as np

import models as M

from . import heyoka_models as HY
from .common import say, write_csv
from .peer_methods import Ours, h_grid
from .peers import Method, Search, rows_for, search_points, time_horizon
from .solvers import tol_grid

OURS = ("simpson", "lobatto4", "lobatto5")
NAN = float("nan")


class GSLChain(Method):
    """GSL rk8pd on the chain, the accelerations by LU at every right-hand-side call (compiled C)."""

    def __init__(self, gslmod, exe, m, l, q0, grid):
        super().__init__("GSL-rk8pd-LU", "GSL rk8pd (C, LU right-hand side)", "GSL (compiled C)", grid)
        self.gsl, self.exe, self.args = gslmod, exe, (m, l, q0, np.zeros(len(m)))

    def measure(self, tol, T):
        try:
            r = self.gsl.run_chain(self.exe, T, tol, *self.args, repeats=1)
        except Exception as exc:                 # noqa: BLE001 - a failed run is a data point
            return dict(status=f"failed: {exc}", e_H=float("inf"), wall=NAN)
        return dict(status="ok", e_H=r["e_H"], steps=r["steps"], wall=r["seconds"])

    def timer(self, tol, T):
        return lambda: (self.gsl.run_chain(self.exe, T, tol, *self.args, repeats=1, track=False)["seconds"], NAN)


def heyoka_method(hy, kind, n, grid, compact):
    m, l = M.chain_params(n, kind)
    sys_, names = HY.chain_system(hy, m, l)
    start = dict(zip([f"q{i}" for i in range(n)], M.chain_q0(n)), **{f"v{i}": 0.0 for i in range(n)})
    qi = [names.index(f"q{i}") for i in range(n)]
    vi = [names.index(f"v{i}") for i in range(n)]

    def energy(Y):
        return M.chain_energy_qv(Y[:, qi], Y[:, vi], m, l)

    mode = "compact" if compact else "default"
    return HY.Heyoka(hy, f"heyoka-{mode}", f"heyoka.py (Lagrangian helper, {mode} mode)", grid, sys_,
                     [start[v] for v in names], energy, compact=compact)


def methods(cfg, ctx, kind, n):
    m, l = M.chain_params(n, kind)
    q0 = M.chain_q0(n)
    hg = h_grid(10.0, 0.1, 2e-4, cfg["n_per_octave"])
    tg = tol_grid(cfg["tol_per_decade"], 6, 16)
    system = M.chain_system(n, kind)
    out = [Ours(system, meth, q0, np.zeros(n), lambda q, p: M.chain_energy_qp(q, p, m, l), hg, cfg["peer_chunk"],
                newton="auto")
           for meth in OURS]
    if ctx.get("heyoka") is not None:
        out.append(heyoka_method(ctx["heyoka"], kind, n, tg, compact=True))
    if ctx.get("gsl_chain_exe"):
        out.append(GSLChain(ctx["gsl"], ctx["gsl_chain_exe"], m, l, q0, tg))
    return out


def predicted_compile(history, n):
    """Default-mode compile time at n from a power law through the last two measured (n, seconds)."""
    if not history:
        return 0.0
    if len(history) == 1:
        (n1, t1), = history
        return t1 * (n / n1) ** 3
    (n1, t1), (n2, t2) = history[-2:]
    k = math.log(t2 / t1) / math.log(n2 / n1)
    return t2 * (n / n2) ** k


def shadow(method, like):
    """A search for `method` that takes the settings chosen by the search `like` (the same
    equations at the same tolerance: heyoka's default mode after its compact-mode search)."""
    s = Search(method, like.horizons, like.targets, like.cap, log=False)
    s.picks, s.notes = dict(like.picks), dict(like.notes)
    for (T, _), i in like.picks.items():
        if not isinstance(i, str):
            s.points[(i, T)] = method.measure(method.grid[i], T)
    return s


def default_mode(cfg, ctx, kind, n, compact_search, history):
    """heyoka's default mode at the chosen tolerances if its compile is predicted affordable;
    (search or None, a note)."""
    pred = predicted_compile(history, n)
    if pred > cfg["pc_default_max_compile"]:
        return None, f"default mode not run: compile predicted {pred:.0f} s (> {cfg['pc_default_max_compile']:g} s)"
    meth = heyoka_method(ctx["heyoka"], kind, n, compact_search.m.grid, compact=False)
    tols = {meth.grid[i] for i in compact_search.picks.values() if not isinstance(i, str)}
    if not tols:
        return None, "default mode not run: compact mode reached no target"
    jit = max(meth.measure_jit(t) for t in tols)
    history.append((n, jit))
    return shadow(meth, compact_search), f"default mode compile {jit:.1f} s"


def one_case(cfg, ctx, kind, n, history):
    """Search and time every method on (kind, n); result rows."""
    horizons = tuple(T for T in cfg["pc_horizons"] if T <= cfg["pc_max_T"].get(n, float("inf")))
    targets = (cfg["pc_target"],)
    say(f"  -- {kind}, n = {n}")
    searches = [Search(meth, horizons, targets, cfg["pc_cap"]).run() for meth in methods(cfg, ctx, kind, n)]
    note = ""
    hc = next((s for s in searches if s.m.name == "heyoka-compact"), None)
    if hc is not None:
        sd, note = default_mode(cfg, ctx, kind, n, hc, history)
        searches += [sd] if sd is not None else []
    rows = []
    for T in horizons:
        samples = time_horizon(searches, T, targets, cfg["pc_rounds"], cfg["pc_rounds"], cfg["pc_round_budget"])
        rows += rows_for(searches, T, targets, samples)
    for r in rows:
        r.update(kind=kind, n=n, heyoka_note=note)
        s = next(s for s in searches if s.m.name == r["method"])
        if r["reached"] and isinstance(s.m, HY.Heyoka):
            r["jit_s"] = s.m.measure_jit(r["prm"])
            r["one_off_s"] = r["jit_s"] + r["wall"]
    return rows, searches


def run_section(cfg, ctx, out, rel, info, stamp):
    from .report_peers import chain_block
    from .plots_peers import plot_chain
    say("== 10. chain and arm against heyoka and GSL rk8pd (LU right-hand side)")
    if ctx.get("gsl"):
        ctx["gsl_chain_exe"] = ctx["gsl"].build(ctx["tmp"], ctx["gsl"].CHAIN_SOURCE)
    rows, points = [], []
    for kind in ("chain", "arm"):
        history = []
        for n in cfg["pc_ns"]:
            r, searches = one_case(cfg, ctx, kind, n, history)
            rows += r
            points += [dict(kind=kind, n=n, **p) for p in search_points(searches)]
    write_csv(os.path.join(out, "peers_chain.csv"), rows,
              ["kind", "n", "T", "target", "method", "label", "reached", "param", "steps", "e_H", "newton", "wall",
               "wall_min", "wall_max", "cpu", "samples", "best_ours", "vs_lobatto5", "vs_best", "jit_s", "one_off_s",
               "order", "heyoka_note", "note"])
    write_csv(os.path.join(out, "peers_chain_search.csv"), points)
    png = plot_chain(out, rows, cfg)
    return chain_block(cfg, rows, rel, png, info, stamp, have_gsl=bool(ctx.get("gsl_chain_exe")),
                       have_heyoka=ctx.get("heyoka") is not None)
