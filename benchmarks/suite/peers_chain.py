"""Section 10: where M(q) is a real n x n matrix.  The n-link pendulum chain (unit masses and
lengths) and an arm-like chain (masses 2 -> 0.5 kg and lengths 0.5 -> 0.2 m tapering from base to
tip; ``models.chain_params``), n = pc_ns, q_i(0) = 0.5 sin(1.3 i), at rest.  Ours: lobatto4 and
lobatto5 with newton="auto" (simpson, never the best of ours in this section, is left out for the
time budget), against

- GSL rk8pd with a compiled right-hand side that assembles M(q) and solves M(q) qdd = r by LU
  (``benchmarks/compiled/gsl_rk8pd_chain.c``) and with the O(n) articulated-body recursion
  (``gsl_rk8pd_chain_aba.c``); GSL's accepted and rejected steps are recorded;
- MuJoCo's fixed-step RK4 (``benchmarks/compiled/mujoco_chain.py``; PyPI ``mujoco``);
- heyoka.py through its Lagrangian helper (L = T - V from the Cartesian positions of the masses;
  ``heyoka.lagrangian`` forms the explicit equations of motion), in compact mode and in its default
  mode where the compile time is affordable (a power law through the measured compile times
  predicts the next n; beyond the budget it is reported, not run).

The method classes of GSL and MuJoCo are suite/chain_peers.py's (shared with
benchmarks/chain_baselines.py).  One accuracy target (e_H <= pc_target over [0, T]), horizons
pc_horizons; search and timing as in section 8 (suite/peers.py).  What keeps the section's time
bounded, each leaving a reason in the cell it empties:

- pc_max_T (per n) and pc_method_max_T (per method and n): the longest horizon run ("not run: cost
  (T > ...)");
- pc_cap: no search run projected longer ("cap: a run > ..."); and a method whose run at the first
  horizon is predicted longer than the cap from its times at the two previous n (a power law) is
  not run at that n nor at larger ones ("not run: cost (... predicted ...)");
- the search at the first horizon starts pc_warm settings before the one chosen at the previous n
  (the choices move monotonically with n); where the first setting searched already reaches the
  target, the search is repeated from the grid's first setting;
- heyoka's default mode: pc_default_max_compile.
"""
import collections
import math
import os
import re

import models as M

from . import heyoka_models as HY
from .chain_peers import gsl_chain, mujoco_chain, ours_chain
from .common import HERE, load_module, say, write_csv
from .peer_methods import h_grid
from .peers import Method, Search, rows_for, search_points, time_horizon
from .solvers import tol_grid

OURS = ("lobatto4", "lobatto5")
NAN, INF = float("nan"), float("inf")
CSV_COLUMNS = ["kind", "n", "T", "target", "method", "label", "reached", "param", "steps", "accepted", "rejected",
               "e_H", "newton", "wall", "wall_min", "wall_max", "cpu", "samples", "us_per_step", "best_ours",
               "vs_lobatto5", "vs_best", "jit_s", "one_off_s", "order", "heyoka_note", "note"]

# a method of the section before it is built: name, label, family and how to build it
Spec = collections.namedtuple("Spec", "name label family make")


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


def specs(cfg, ctx, kind, n):
    """The methods of (kind, n) in column order, not yet built."""
    hg = h_grid(10.0, 0.1, 2e-4, cfg["n_per_octave"])
    out = [Spec(meth, f"symplectic {meth}", "symplectic (C)",
                lambda meth=meth: ours_chain(kind, n, meth, hg, cfg["peer_chunk"], label=f"symplectic {meth}"))
           for meth in OURS]
    tg = tol_grid(cfg["tol_per_decade"], cfg["pc_gsl_loosest"], 16)
    for key, name, label in (("gsl_chain_exe", "GSL-rk8pd-LU", "GSL rk8pd (C, LU right-hand side)"),
                             ("gsl_aba_exe", "GSL-rk8pd-ABA", "GSL rk8pd (C, ABA right-hand side)")):
        if ctx.get(key):
            out.append(Spec(name, label, "GSL (compiled C)",
                            lambda exe=ctx[key], name=name, label=label:
                            gsl_chain(ctx["gsl"], exe, name, label, kind, n, tg)))
    if ctx.get("mujoco") is not None:
        mg = h_grid(10.0, 0.05, 1e-5, cfg["n_per_octave"])
        out.append(Spec("mujoco-rk4", "MuJoCo RK4", "MuJoCo (compiled C)",
                        lambda: mujoco_chain(ctx["mujoco_chain"], ctx["mujoco"], kind, n, mg)))
    if ctx.get("heyoka") is not None:
        hyg = tol_grid(cfg["tol_per_decade"], cfg["pc_heyoka_loosest"], 16)
        out.append(Spec("heyoka-compact", "heyoka.py (Lagrangian helper, compact mode)", HY.Heyoka.family,
                        lambda: heyoka_method(ctx["heyoka"], kind, n, hyg, compact=True)))
    return out


def power_law(points, n, k1=3.0):
    """The value at n from a power law through the last two (n, value) points (exponent at least 1:
    a cost grows at least as fast as n); through one point with exponent k1.  (value, 'from n = ...')."""
    if len(points) == 1:
        (n1, t1), = points
        return t1 * (n / n1) ** k1, f"n = {n1}"
    (n1, t1), (n2, t2) = points[-2:]
    k = max(1.0, math.log(t2 / t1) / math.log(n2 / n1))
    return t2 * (n / n2) ** k, f"n = {n1}, {n2}"


def predicted_compile(history, n):
    """Default-mode compile time at n from a power law through the last two measured (n, seconds)."""
    return power_law(history, n)[0] if history else 0.0


class Trail:
    """What each method did at the first horizon at the smaller n of one kind: its times (the cost
    prediction), its chosen settings (the warm start), and where it was stopped by cost."""

    def __init__(self):
        self.walls, self.pick, self.stopped = collections.defaultdict(list), {}, {}

    def why_not(self, name, n, T0, cap):
        """Why the method is not run at n (None: it is)."""
        if name in self.stopped:
            return "not run: cost ({1} at n = {0})".format(*self.stopped[name])
        if not self.walls[name]:
            return None
        pred, basis = power_law(self.walls[name], n)
        if pred > cap:
            return f"not run: cost (a run over {T0:g} s predicted {pred:.3g} s from {basis}; cap {cap:g} s)"
        return None

    def update(self, name, n, row):
        if row["reached"]:
            self.walls[name].append((n, row["wall"]))
            self.pick[name] = row["prm"]
        elif row["note"].startswith(("not run", "cap")):
            self.stopped.setdefault(name, (n, "over the cap" if row["note"].startswith("cap") else "not run"))


def skipped(spec, horizons, targets, why):
    """A search that ran nothing: every (horizon, target) says why."""
    m = Method(spec.name, spec.label, spec.family, [])
    m.ours = spec.name in OURS
    s = Search(m, horizons, targets, INF, log=False)
    s.picks = {(T, tgt): why for T in horizons for tgt in targets}
    return s


def warm_search(meth, horizons, targets, cap, prev, warm):
    """Search from ``warm`` settings before ``prev`` (the setting chosen at the previous n); again
    from the grid's first setting if the first setting searched is chosen at the first horizon."""
    full = list(meth.grid)
    start = max(0, full.index(prev) - warm) if warm and prev in full else 0
    meth.grid = full[start:]
    s = Search(meth, horizons, targets, cap).run()
    first = [s.picks.get((horizons[0], tgt)) for tgt in targets]
    if start and 0 in first:
        say(f"    {meth.label}: the first setting searched ({meth.param_str(full[start])}) reaches the target: "
            "searching again from the grid's first")
        meth.grid = full
        s = Search(meth, horizons, targets, cap).run()
    for tgt in targets:
        if s.picks.get((horizons[0], tgt)) == 0:
            s.notes[(horizons[0], tgt)] = "; ".join(x for x in (s.notes.get((horizons[0], tgt)),
                                                                 "the first setting searched") if x)
    return s


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
    tols = {i for i in compact_search.picks.values() if not isinstance(i, str)} if compact_search else set()
    if not tols:
        return None, "default mode not run: compact mode reached no target"
    meth = heyoka_method(ctx["heyoka"], kind, n, compact_search.m.grid, compact=False)
    jit = max(meth.measure_jit(meth.grid[i]) for i in tols)
    history.append((n, jit))
    return shadow(meth, compact_search), f"default mode compile {jit:.1f} s"


def plain_note(note):
    """The searches' reasons in the section's words: 'not run: cost (...)' or 'cap: ...'."""
    m = re.match(r"not run beyond T = (\S+) s \(cost\)", note)
    if m:
        return f"not run: cost (T > {m.group(1)} s at this n)"
    m = re.match(r"not reached \(cost: a run > (\S+) s(?:; best e_H (\S+))?\)", note)
    if m:
        return f"cap: a run > {m.group(1)} s" + (f" (best e_H {m.group(2)})" if m.group(2) else "")
    return note


def one_case(cfg, ctx, kind, n, trail, history):
    """Search and time every method on (kind, n); result rows and searches."""
    horizons, targets, cap = tuple(cfg["pc_horizons"]), (cfg["pc_target"],), cfg["pc_cap"]
    T0 = horizons[0]
    say(f"  -- {kind}, n = {n}")
    searches = []
    for spec in specs(cfg, ctx, kind, n):
        why = trail.why_not(spec.name, n, T0, cap)
        if why:
            say(f"    {spec.label}: {why}")
            searches.append(skipped(spec, horizons, targets, why))
            continue
        meth = spec.make()
        meth.max_T = min(cfg["pc_max_T"].get(n, INF), cfg["pc_method_max_T"].get(spec.name, {}).get(n, INF))
        searches.append(warm_search(meth, horizons, targets, cap, trail.pick.get(spec.name), cfg["pc_warm"]))
    note = ""
    if ctx.get("heyoka") is not None:
        hc = next((s for s in searches if s.m.name == "heyoka-compact" and isinstance(s.m, HY.Heyoka)), None)
        sd, note = default_mode(cfg, ctx, kind, n, hc, history)
        searches += [sd] if sd is not None else []
        say(f"    heyoka: {note}")
    rows = []
    for T in horizons:
        samples = time_horizon(searches, T, targets, cfg["pc_rounds"], cfg["pc_rounds"], cfg["pc_round_budget"])
        rows += rows_for(searches, T, targets, samples)
    for r in rows:
        r.update(kind=kind, n=n, heyoka_note=note)
        s = next(s for s in searches if s.m.name == r["method"])
        if not r["reached"]:
            r["note"] = plain_note(r["note"])
            continue
        pt = s.points[(s.m.grid.index(r["prm"]), r["T"])]
        r["accepted"], r["rejected"] = pt.get("accepted"), pt.get("rejected")
        r["us_per_step"] = 1e6 * r["wall"] / r["steps"] if r.get("steps") else NAN
        if isinstance(s.m, HY.Heyoka):
            r["jit_s"] = s.m.measure_jit(r["prm"])
            r["one_off_s"] = r["jit_s"] + r["wall"]
    for r in rows:
        if r["T"] == T0 and r["method"] != "heyoka-default":
            trail.update(r["method"], n, r)
    return rows, searches


def load_peers(ctx):
    """Build the GSL chain programs and load MuJoCo into ctx (each None when missing)."""
    if ctx.get("gsl"):
        ctx["gsl_chain_exe"] = ctx["gsl"].build(ctx["tmp"], ctx["gsl"].CHAIN_SOURCE)
        ctx["gsl_aba_exe"] = ctx["gsl"].build(ctx["tmp"], ctx["gsl"].CHAIN_ABA_SOURCE)
    mjc = load_module("bench_mujoco_chain", os.path.join(HERE, "compiled", "mujoco_chain.py"))
    ctx["mujoco_chain"], ctx["mujoco"] = mjc, (mjc.load() if mjc is not None else None)
    if ctx["mujoco"] is None:
        say("MuJoCo is not installed: no MuJoCo comparison (pip install mujoco)")
    return dict(gsl=bool(ctx.get("gsl_chain_exe")), gsl_aba=bool(ctx.get("gsl_aba_exe")),
                heyoka=ctx.get("heyoka") is not None,
                mujoco=ctx["mujoco"].__version__ if ctx["mujoco"] is not None else None)


def run_section(cfg, ctx, out, rel, info, stamp):
    from .report_peers import chain_block
    from .plots_peers import plot_chain
    say("== 10. chain and arm against GSL rk8pd (LU and ABA right-hand sides), MuJoCo RK4 and heyoka")
    have = load_peers(ctx)
    rows, points = [], []
    for kind in ("chain", "arm"):
        trail, history = Trail(), []
        for n in cfg["pc_ns"]:
            r, searches = one_case(cfg, ctx, kind, n, trail, history)
            rows += r
            points += [dict(kind=kind, n=n, **p) for p in search_points(searches)]
    write_csv(os.path.join(out, "peers_chain.csv"), rows, CSV_COLUMNS)
    write_csv(os.path.join(out, "peers_chain_search.csv"), points)
    png = plot_chain(out, rows, cfg)
    return chain_block(cfg, rows, rel, png, info, stamp, have)
