"""Sections 1 and 7: work-precision on the double pendulum (against SciPy, SUNDIALS CVODE and
GSL rk8pd), the pendulum and the Lagrange top.  Every solver's grid is searched from cheap to
expensive; per target the cheapest reliably reaching setting is re-timed in interleaved rounds."""
import numpy as np

import symplectic as sp
import models as M

from .common import fmt_e, fmt_t, interleave, say, summarize
from .config import TARGETS
from .solvers import VI, Cvode, GSL, Problem, SciPy, n_grid, rel, tol_grid


def search(solver, stop_at, cap, log=True):
    """Run the grid from cheap to expensive until e_H <= stop_at twice in a row,
    a run takes longer than cap seconds, or the grid ends."""
    pts, below, fails = [], 0, 0
    for prm in solver.grid:
        r = solver.run(prm)
        pts.append(r)
        if log:
            say(f"    {solver.label:28s} {solver.param_str(prm):14s} e_H={fmt_e(r['e_H']):9s} "
                f"err={fmt_e(r.get('err_final')):9s} {fmt_t(r['wall'])}")
        if r["status"] != "ok":
            fails += 1
            if fails >= 3 and solver.kind == "tol":
                break
            continue
        below = below + 1 if r["e_H"] <= stop_at else 0
        if below >= 2:
            break
        if r["wall"] > cap:
            r["capped"] = True
            break
    return pts


def choose(pts, target):
    """The cheapest grid point from which on every tested finer point reaches
    the target (a reliably reached accuracy, not a lucky coarse step)."""
    best = None
    for i in range(len(pts) - 1, -1, -1):
        if pts[i]["status"] == "ok" and pts[i]["e_H"] <= target:
            best = i
        else:
            break
    return None if best is None else pts[best]


def _target_row(pb, s, tgt, r, curve, timing):
    """One row of the targets table: the chosen setting with its re-timed median, or why none."""
    if r is None:
        last = curve[-1] if curve else {}
        why = "capped" if last.get("capped") else "grid end"
        best = min((p["e_H"] for p in curve if p["status"] == "ok"), default=float("inf"))
        return dict(problem=pb.name, target=tgt, solver=s.name, label=s.label,
                    reached=False, note=f"not reached ({why}; best e_H {fmt_e(best)})")
    t = timing[(s.name, r["param"])]
    return dict(problem=pb.name, target=tgt, solver=s.name, label=s.label, reached=True,
                param=s.param_str(r["param"]), h=r.get("h"), tol=r.get("tol"),
                steps=r.get("steps"), nfev=r.get("nfev"), newton=r.get("newton"),
                e_H=r["e_H"], err_final=r.get("err_final"), **t, note="")


def work_precision(pb, solvers, stop_at, cap, rounds, budget, targets=TARGETS):
    """Search every solver, choose per target, re-time the chosen configurations
    interleaved.  Returns (all points, chosen rows, curves)."""
    all_pts, curves = [], {}
    for s in solvers:
        say(f"  {s.label}")
        curves[s.name] = search(s, stop_at, cap)
        all_pts += [dict(problem=pb.name, solver=s.name, label=s.label, family=s.family,
                         **{k: v for k, v in r.items() if k not in ("y_final", "solver")})
                    for r in curves[s.name]]
    picks = {(s.name, tgt): choose(curves[s.name], tgt) for s in solvers for tgt in targets}
    configs = {}
    for s in solvers:
        for tgt in targets:
            r = picks[(s.name, tgt)]
            if r is not None and (s.name, r["param"]) not in configs:
                configs[(s.name, r["param"])] = (lambda s=s, prm=r["param"]: s.time_only(prm))
    say(f"  re-timing {len(configs)} chosen configurations, {rounds} interleaved rounds")
    timing = {k: summarize(v) for k, v in interleave(configs, rounds, budget).items()}
    rows = [_target_row(pb, s, tgt, picks[(s.name, tgt)], curves[s.name], timing)
            for s in solvers for tgt in targets]
    return all_pts, rows, curves


def cell(rows, solver, target, key="wall"):
    for r in rows:
        if r["solver"] == solver and r["target"] == target and r.get("reached"):
            return r.get(key)
    return None


def ratio(rows, a, b, t):
    """time of b / time of a at target t (nan where either did not reach it)."""
    wa, wb = cell(rows, a, t), cell(rows, b, t)
    if wa is None or wb is None:
        return float("nan")
    return wb / wa


def generic_rhs():
    """Hamilton's equations from the NumPy callables M(q), dM/dq, grad V (np.linalg.solve +
    einsum): what one writes for a general system, as in tests/support/models.py."""
    c = M.dp_callables()._callables
    mass, mass_grad, pot_grad = c["mass"], c["mass_grad"], c["potential_grad"]

    def f(t, y):
        q, p = y[:2], y[2:]
        v = np.linalg.solve(mass(q), p)
        return np.concatenate([v, -pot_grad(q) + 0.5 * np.einsum("kij,i,j->k", mass_grad(q), v, v)])

    return f


def _dp_reference(pb):
    """Lobatto (order 8) at h = 0.0025, checked against h = 0.005 and DOP853 at 1e-13."""
    ref = sp.integrate(pb.system, pb.q0, pb.p0, pb.T / 40000, 40000, method="lobatto5")
    ref2 = sp.integrate(pb.system, pb.q0, pb.p0, pb.T / 20000, 20000, method="lobatto5")
    pb.ref = np.r_[ref.q[-1], ref.p[-1]]
    d_h = rel(np.r_[ref2.q[-1], ref2.p[-1]], pb.ref)
    d_dop = rel(SciPy(pb, "DOP853", []).solve(1e-13).y[:, -1], pb.ref)
    pb.ref_note = (f"lobatto5 (order 8) with h = 0.0025; it differs from h = 0.005 by {d_h:.1e} and "
                   f"from DOP853 at rtol = atol = 1e-13 by {d_dop:.1e} (relative, max norm over (q, p))")
    say("  reference:", pb.ref_note)


def section_dp(cfg, ctx):
    say("== 1. double pendulum work-precision (T = 100 s)")
    pb = Problem("double_pendulum", cfg["T"], h_max=0.2, h_min=1e-5)
    _dp_reference(pb)
    ng = n_grid(pb, cfg["n_per_octave"])
    fast = tol_grid(cfg["tol_per_decade"])
    slow = tol_grid(cfg["slow_tol_per_decade"])
    solvers = [VI(pb, m, ng) for m in ("simpson", "lobatto4", "lobatto5", "midpoint", "rk4")]
    solvers += [SciPy(pb, "DOP853", fast),
                SciPy(pb, "DOP853", fast, rhs=generic_rhs(), name="DOP853-generic",
                      label="SciPy DOP853 (generic RHS)"),
                SciPy(pb, "RK45", slow), SciPy(pb, "Radau", slow)]
    if ctx["sksundae"]:
        solvers.append(Cvode(pb, fast))
    if ctx["gsl_exe"]:
        solvers.append(GSL(pb, tol_grid(cfg["tol_per_decade"], hi=14.0), ctx["gsl_exe"], ctx["gsl"]))
    pts, rows, curves = work_precision(pb, solvers, stop_at=min(TARGETS), cap=cfg["cap"],
                                       rounds=cfg["rounds"], budget=cfg["budget"])
    return dict(problem=pb, points=pts, rows=rows, curves=curves, solvers=solvers)


def _small_problem(name, T, hmax, hmin):
    pb = Problem(name, T, hmax, hmin)
    if name == "pendulum":
        from symplectic import exact
        qT, pT = exact.pendulum(np.array([T]), q0=float(pb.q0[0]), p0=float(pb.p0[0]), **M.PEND)
        pb.ref = np.r_[np.ravel(qT), np.ravel(pT)]
        pb.ref_note = "exact solution (Jacobi elliptic functions, symplectic.exact.pendulum)"
    else:
        r = sp.integrate(pb.system, pb.q0, pb.p0, T / 40000, 40000, method="lobatto5")
        pb.ref = np.r_[r.q[-1], r.p[-1]]
        d = rel(SciPy(pb, "DOP853", []).solve(1e-13).y[:, -1], pb.ref)
        pb.ref_note = (f"lobatto5 with h = T/40000; DOP853 at 1e-13 differs by {d:.1e} "
                       f"(relative to max|(q, p)|, dominated by the spin angle psi ~ {pb.ref[2]:.0f} rad)")
    return pb


def section_small(cfg, ctx):
    out = {}
    specs = [("pendulum", 100.0, 0.25, 1e-5), ("lagrange_top", 10 * M.TOP_PERIOD, 0.2, 1e-6)]
    for name, T, hmax, hmin in specs:
        say(f"== 7. {name} work-precision (T = {T:.4g} s)")
        pb = _small_problem(name, T, hmax, hmin)
        ng = n_grid(pb, cfg["n_per_octave"])
        solvers = [VI(pb, m, ng) for m in ("simpson", "lobatto4", "lobatto5", "midpoint")]
        solvers.append(SciPy(pb, "DOP853", tol_grid(cfg["tol_per_decade"])))
        if ctx["sksundae"]:
            solvers.append(Cvode(pb, tol_grid(cfg["tol_per_decade"])))
        pts, rows, curves = work_precision(pb, solvers, stop_at=min(TARGETS), cap=cfg["small_cap"],
                                           rounds=cfg["small_rounds"], budget=cfg["budget"])
        out[name] = dict(problem=pb, points=pts, rows=rows, curves=curves, solvers=solvers)
    return out
