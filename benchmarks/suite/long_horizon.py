"""Section 3: the long-horizon story: e_H and cost at 100, 1000, 10^4 s for fixed h (Simpson,
Lobatto) and fixed tolerance (DOP853, GSL rk8pd, CVODE), and the cost of *holding* e_H <= 1e-8
over [0, T] for the adaptive solvers (they must tighten their tolerance as T grows)."""
from .common import fmt_e, fmt_t, interleave, say, summarize
from .solvers import tol_grid

HOLD_TARGET = 1e-8
NAN = float("nan")


def _row_at(rows8, name, target=HOLD_TARGET):
    return next((r for r in rows8 if r["solver"] == name and r["target"] == target and r["reached"]), None)


def _fixed_settings(cfg, pb, by, rows8, configs, first, meta):
    """Every method keeps its 100-s setting for e_H <= 1e-8 and integrates longer."""
    for name in ("simpson", "lobatto5", "DOP853", "GSL-rk8pd", "CVODE-Adams"):
        r = _row_at(rows8, name) if name in by else None
        if r is None:
            continue
        s = by[name]
        prm = round(pb.T / r["h"]) if s.kind == "h" else r["tol"]
        knob = s.param_str(prm)
        for T in cfg["horizons"]:
            p_T = int(round(prm * T / pb.T)) if s.kind == "h" else prm
            res = s.run(p_T, T=T)
            key = (s.name, T)
            configs[key] = (lambda s=s, p_T=p_T, T=T: s.time_only(p_T, T))
            first[key] = [(res["wall"], res["cpu"])]
            meta[key] = dict(solver=s.name, label=s.label, knob=knob, T=T, e_H=res["e_H"],
                             steps=res.get("steps"))
            say(f"  {s.label:28s} {knob:12s} T={T:<7g} e_H={fmt_e(res['e_H'])} {fmt_t(res['wall'])}")


def _hold_search(cfg, s, grid, T):
    """The loosest tolerance of grid (loosest first) that keeps e_H <= 1e-8 over [0, T], or None."""
    for tol in grid:
        res = s.run(tol, T=T)
        say(f"  hold e_H <= 1e-8: {s.label:28s} T={T:<7g} tol={tol:.3g} e_H={fmt_e(res['e_H'])} "
            f"{fmt_t(res['wall'])}")
        if res["status"] == "ok" and res["e_H"] <= HOLD_TARGET:
            return tol, res
        if res["wall"] > cfg["cap"]:
            return None
    return None


def _hold(cfg, by, rows8, configs, first, meta):
    for name in ("GSL-rk8pd", "DOP853"):
        s, r100 = by.get(name), _row_at(rows8, name)
        if s is None or r100 is None:
            continue
        grid = [t for t in tol_grid(cfg["tol_per_decade"], hi=14.0) if t <= r100["tol"] * 1.0001]
        for T in cfg["horizons"]:
            key = ("hold", name, T)
            found = None
            if name == "DOP853" and T > cfg["hold_dop_max_T"]:
                knob = "not measured (cost)"
            else:
                found = _hold_search(cfg, s, grid, T)
                knob = "not reached"
            if found is None:
                meta[key] = dict(solver=name, label=s.label, knob=knob, T=T, e_H=NAN, steps=None, hold=True)
                continue
            tol, res = found
            configs[key] = (lambda s=s, tol=tol, T=T: s.time_only(tol, T))
            first[key] = [(res["wall"], res["cpu"])]
            meta[key] = dict(solver=name, label=s.label, knob=s.param_str(tol), T=T, e_H=res["e_H"],
                             steps=res.get("steps"), hold=True)


def section_horizon(cfg, dp_res, ctx):
    say("== 3. long horizons")
    by = {s.name: s for s in dp_res["solvers"]}
    configs, first, meta = {}, {}, {}
    _fixed_settings(cfg, dp_res["problem"], by, dp_res["rows"], configs, first, meta)
    _hold(cfg, by, dp_res["rows"], configs, first, meta)
    timing = interleave(configs, cfg["rounds"], cfg["horizon_budget"], seeded=first)
    rows = []
    for key, m in meta.items():
        t = summarize(timing[key]) if key in timing else dict(wall=NAN, samples=0)
        rows.append(dict(hold=False, **m, **t) if "hold" not in m else dict(**m, **t))
    return rows
