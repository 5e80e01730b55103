"""Section 23: stiff oscillations -- the Fermi-Pasta-Ulam problem and a stiff spring (issue
"Gauss-Legendre variational integrators for stiffness").

1. The Fermi-Pasta-Ulam problem of Hairer, Lubich & Wanner, Geometric Numerical Integration
   (2nd ed.), Section I.5.1: 2m = 6 unit masses q_1 .. q_6 between fixed walls (q_0 = q_7 = 0),
   stiff linear springs inside each pair and soft quartic springs between the pairs and to the
   walls,

       H = 1/2 |p|^2 + omega^2/4 sum_{i=1..m} (q_{2i} - q_{2i-1})^2 + sum_{i=0..m} (q_{2i+1} - q_{2i})^4,

   omega = 50.  (In HLW's variables x_{0,i} = (q_{2i} + q_{2i-1})/sqrt 2, x_{1,i} = (q_{2i} -
   q_{2i-1})/sqrt 2 the soft part is 1/4 sum (x_{0,i+1} - x_{1,i+1} - x_{0,i} - x_{1,i})^4: the
   quartic has no 1/4 in the q_i.  The chain here is built from SymPy; benchmarks/cfunc_fpu.c
   is the same potential as a compiled callback for any n.)
   HLW's initial values x_{0,1} = 1, y_{0,1} = 1, x_{1,1} = 1/omega, y_{1,1} = 1, all others 0,
   i.e. q_1 = (1 - 1/omega)/sqrt 2, q_2 = (1 + 1/omega)/sqrt 2, p_2 = sqrt 2.  Measured per method
   and omega h: the energy error, the oscillatory energies I_j = (y_{1,j}^2 + omega^2 x_{1,j}^2)/2
   and their sum I (an adiabatic invariant), the error of the pairs' centres x_{0,j} against a
   lobatto5 run at omega h = 0.05 (checked against gauss3 at the same step), the wall time of the
   run (interleaved rounds across methods, the best), and newton="full" against "decoupled" for
   gauss3 and lobatto5.
2. Two unit masses, a soft spring (k = 1) to the wall and a stiff one (k = 1e6) between them,
   started with the stiff spring stretched by 1e-4 and the pair displaced by 1, at rest; 2000
   steps at omega_max h = 1.4, 14, 141: the energy error, or the failure; the centre of mass at the
   end against the exact (modal) solution.
3. The cost per step of gauss2, gauss3 against simpson and lobatto4 on the double pendulum and
   pendulum_chain(32).

A method past its stability limit on the harmonic oscillator (``sp.methods(details=True)``)
gets a StabilityWarning before the run; a run that the core stops (sp.ConvergenceError) is
recorded as "unstable" with its step, not timed.  The rows go to ``stiff.csv`` in the output
directory.
"""
import math
import os
import time
import warnings

import numpy as np

import symplectic as sp

from .common import fmt_e, interleave, md_table, med, say, summarize, timed_rounds, timer, write_csv

METHODS = ("midpoint", "gauss2", "gauss3", "simpson", "lobatto4", "lobatto5")
DECOUPLED = ("gauss3", "lobatto5")
OMEGA = 50.0
SQ2 = math.sqrt(2.0)
REF = ("lobatto5", 0.05)                 # the slow motion's reference run (method, omega h)
CHECK = ("gauss3", 0.05)                 # ... and the run it is checked against


def limits():
    return {m: sp.methods(details=True)[m]["stability"] for m in METHODS}


# ------------------------------------------------------------------ runs that may fail
def attempt(fn):
    """(trajectory or None, status, warned): the run, 'ok' or 'unstable (step k)' / the reason,
    and whether it raised the StabilityWarning of a step past the method's stability limit (not
    the one of an A-stable method's unresolved phase)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tr, status = fn(), "ok"
        except sp.ConvergenceError as exc:
            reason = getattr(exc, "reason", "") or str(exc)
            tr = None
            status = (f"unstable (step {exc.step})" if "unstable" in reason
                      else f"failed at step {exc.step}: {reason[:60]}")
    warned = any(issubclass(w.category, sp.StabilityWarning) and
                 "at or beyond its stability limit" in str(w.message) for w in caught)
    return tr, status, warned


def quiet(fn):
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    return run


# ------------------------------------------------------------------ 1. FPU
def fpu_system(cache_dir, m=3):
    """HLW's FPU chain (module doc) from SymPy, compiled to C; omega a run-time parameter."""
    import sympy as sy
    from symplectic import symbolic
    n = 2 * m
    q = sy.symbols(f"q1:{n + 1}")
    om = sy.Symbol("omega", positive=True)
    x = (0,) + tuple(q) + (0,)
    V = (om ** 2 / 4 * sum((x[2 * i] - x[2 * i - 1]) ** 2 for i in range(1, m + 1))
         + sum((x[2 * i + 1] - x[2 * i]) ** 4 for i in range(m + 1)))
    return symbolic.system((sy.eye(n), V), list(q), params={om: OMEGA}, compile=True,
                           cache_dir=cache_dir, name="FPU (HLW I.5)")


def fpu_start(m=3):
    """HLW's x_{0,1} = 1, y_{0,1} = 1, x_{1,1} = 1/omega, y_{1,1} = 1, the rest 0, in q and p."""
    q0, p0 = np.zeros(2 * m), np.zeros(2 * m)
    x0, x1, y0, y1 = 1.0, 1.0 / OMEGA, 1.0, 1.0
    q0[0], q0[1] = (x0 - x1) / SQ2, (x0 + x1) / SQ2
    p0[0], p0[1] = (y0 - y1) / SQ2, (y0 + y1) / SQ2
    return q0, p0


def centres(tr):
    return (tr.q[:, 1::2] + tr.q[:, 0::2]) / SQ2          # x_{0,j}


def oscillatory(tr):
    x1 = (tr.q[:, 1::2] - tr.q[:, 0::2]) / SQ2
    y1 = (tr.p[:, 1::2] - tr.p[:, 0::2]) / SQ2             # p = qdot (M = I)
    return 0.5 * (y1 ** 2 + OMEGA ** 2 * x1 ** 2)         # I_j, one column per stiff spring


def fpu_measures(tr, ref, k, t_slow):
    """Errors of a run at h = k h_ref against the reference run (same grid every k rows)."""
    Ij, Iref = oscillatory(tr), oscillatory(ref)[::k]
    I = Ij.sum(axis=1)
    dx = np.max(np.abs(centres(tr) - centres(ref)[::k]), axis=1)
    early = tr.t <= t_slow * (1 + 1e-12)
    return dict(e_H=float(np.max(np.abs(tr.energy - tr.energy[0])) / abs(tr.energy[0])),
                I_err=float(np.max(np.abs(I - I[0]))),
                I_exchange_err=float(np.max(np.abs(Ij[-1] - Iref[-1]))),
                slow_err_early=float(np.max(dx[early])), slow_err_T=float(dx[-1]),
                slow_err_max=float(np.max(dx)),
                newton_its=float(np.mean(tr.newton_iterations)),
                branch_checks=tr.counts.branch_checks / tr.counts.steps)


def section_fpu(cfg, ctx, rows):
    S = fpu_system(os.path.join(ctx["tmp"], "sympy-cache"))
    q0, p0 = fpu_start()
    T, t_slow = cfg["stiff_T"], cfg["stiff_slow_T"]
    say(f"  FPU: references ({REF[0]}, {CHECK[0]} at omega h = {REF[1]}), T = {T:g}")
    refs = {}
    for method, wh in (REF, CHECK):
        h = wh / OMEGA
        refs[method] = sp.integrate(S, q0, p0, h, int(round(T / h)), method=method)
    ref = refs[REF[0]]
    chk = fpu_measures(refs[CHECK[0]], ref, 1, t_slow)
    ref_m = fpu_measures(ref, ref, 1, t_slow)
    runs, fns = {}, {}
    for wh in cfg["stiff_omega_h"]:
        k = int(round(wh / REF[1]))
        assert abs(k * REF[1] - wh) < 1e-12, wh
        h = wh / OMEGA
        N = int(round(T / h))
        for method in METHODS:
            for newton in ("full", "decoupled") if method in DECOUPLED else ("full",):
                fn = (lambda method=method, newton=newton, h=h, N=N:
                      sp.integrate(S, q0, p0, h, N, method=method, newton=newton))
                tr, status, warned = attempt(fn)
                runs[(method, wh, newton)] = (tr, status, warned, h, N, k)
                if tr is not None:
                    fns[(method, wh, newton)] = timer(quiet(fn))
    say(f"  FPU: timing {len(fns)} runs, {cfg['stiff_rounds']} interleaved rounds")
    samples = interleave(fns, cfg["stiff_rounds"])
    for (method, wh, newton), (tr, status, warned, h, N, k) in runs.items():
        row = dict(part="fpu", problem="FPU m=3 omega=50", method=method, omega_h=wh, h=h, steps=N,
                   T=T, newton=newton, status=status, warned=warned)
        if tr is not None:
            t = summarize(samples[(method, wh, newton)])
            row.update(fpu_measures(tr, ref, k, t_slow), **t, us_per_step=1e6 * t["wall_min"] / N)
            full = runs[(method, wh, "full")][0]
            if newton == "decoupled" and full is not None:
                row["diff_from_full"] = float(max(np.max(np.abs(tr.q - full.q)), np.max(np.abs(tr.p - full.p))))
                a, b = samples[(method, wh, "full")], samples[(method, wh, "decoupled")]
                row["full_over_decoupled"] = med([x[0] / y[0] for x, y in zip(a, b)])
        rows.append(row)
    return fpu_text(cfg, rows, ref_m, chk, float(ref.energy[0]))


def _cell(r, key, fmt=fmt_e):
    return fmt(r[key]) if r.get(key) is not None else "–"


def fpu_text(cfg, rows, ref_m, chk, H0):
    lim = limits()
    main = [r for r in rows if r["part"] == "fpu" and r["newton"] == "full"]
    body = []
    for r in main:
        note = r["status"] if r["status"] != "ok" else ("ok, past the limit" if r["warned"] else "ok")
        body.append([r["method"], f"{r['omega_h']:g}", note, _cell(r, "e_H"), _cell(r, "I_err"),
                     _cell(r, "I_exchange_err"), _cell(r, "slow_err_early"), _cell(r, "slow_err_T"),
                     f"{1e3 * r['wall_min']:.1f}" if r.get("wall_min") else "–",
                     f"{r['us_per_step']:.2f}" if r.get("us_per_step") else "–",
                     f"{r['newton_its']:.2f}" if r.get("newton_its") else "–",
                     f"{r['branch_checks']:.2f}" if r.get("branch_checks") is not None else "–"])
    dec = []
    for r in rows:
        if r["part"] == "fpu" and r["newton"] == "decoupled":
            full = next(x for x in main if x["method"] == r["method"] and x["omega_h"] == r["omega_h"])
            if r["status"] != "ok" or full["status"] != "ok":
                dec.append([r["method"], f"{r['omega_h']:g}", full["status"], r["status"], "–", "–", "–"])
                continue
            dec.append([r["method"], f"{r['omega_h']:g}", f"{1e3 * full['wall_min']:.1f}",
                        f"{1e3 * r['wall_min']:.1f}", f"{r['full_over_decoupled']:.2f}",
                        f"{full['newton_its']:.2f} / {r['newton_its']:.2f}", fmt_e(r["diff_from_full"])])
    T, ts = cfg["stiff_T"], cfg["stiff_slow_T"]
    return "\n".join([
        "### The Fermi–Pasta–Ulam problem (Hairer, Lubich & Wanner, *Geometric Numerical Integration*, I.5.1)\n",
        "Six unit masses between fixed walls, stiff linear springs (ω = 50) inside the three pairs, soft "
        "quartic springs between them and to the walls: H = ½|p|² + ω²/4 Σ (q₂ᵢ − q₂ᵢ₋₁)² + Σ (q₂ᵢ₊₁ − q₂ᵢ)⁴ "
        "(q₀ = q₇ = 0), built with `symplectic.symbolic.system` (compiled C). HLW's initial values "
        "x₀,₁ = 1, y₀,₁ = 1, x₁,₁ = 1/ω, y₁,₁ = 1, the rest 0 (x₀,ⱼ = (q₂ⱼ + q₂ⱼ₋₁)/√2 the pairs' centres, "
        "x₁,ⱼ = (q₂ⱼ − q₂ⱼ₋₁)/√2 the scaled stretches, y their momenta); H₀ = "
        f"{H0:.6g}. I = Σⱼ Iⱼ, Iⱼ = (y₁,ⱼ² + ω² x₁,ⱼ²)/2, is an adiabatic invariant (I₀ = 1); its "
        f"exact motion oscillates by O(1/ω): max |I − I₀| of the reference run is {fmt_e(ref_m['I_err'])}. "
        f"T = {T:g}, h = (ωh)/ω, `sp.integrate(..., method=m)` with the default newton=\"full\".\n",
        f"Reference: {REF[0]} at ωh = {REF[1]:g}; {CHECK[0]} at the same step differs from it in the centres "
        f"x₀,ⱼ by {fmt_e(chk['slow_err_early'])} up to t = {ts:g} and {fmt_e(chk['slow_err_T'])} at t = {T:g} "
        f"(the slow motion is chaotic: errors grow along the run), in Iⱼ(T) by {fmt_e(chk['I_exchange_err'])}. "
        "Columns: e_H = max |H − H₀|/H₀; ΔI = max |I − I₀| over the run; ΔIⱼ(T) = maxⱼ |Iⱼ(T) − Iⱼ,ref(T)| "
        f"(the slow exchange of energy among the stiff springs); slow error = maxⱼ |x₀,ⱼ − x₀,ⱼ,ref| over "
        f"t ≤ {ts:g} and at t = T; the wall time of the whole run, the best of {cfg['stiff_rounds']} rounds "
        "interleaved across every run of the table and the one below (µs/step from it); Newton iterations and "
        "branch checks (`branch_check=\"auto\"`'s continuation of a suspicious root, "
        "`traj.counts.branch_checks`) per step. Stability limits in ωh on the harmonic "
        "oscillator: " + ", ".join(f"{m} {'none' if not math.isfinite(v) else f'{v:.3g}'}"
                                  for m, v in lim.items())
        + "; \"past the limit\": completed after a StabilityWarning; \"unstable (step k)\": stopped by the "
        "core (sp.ConvergenceError), not timed.\n",
        md_table(["method", "ωh", "run", "e_H", "ΔI", "ΔIⱼ(T)", f"slow err. t ≤ {ts:g}",
                  "slow err. at T", "best (ms)", "µs/step", "Newton it./step", "branch checks/step"], body),
        "\nnewton=\"full\" against newton=\"decoupled\" (same runs, same rounds): best wall times, the median "
        "of the rounds' paired ratios, Newton iterations per step, the largest difference of the states (q and "
        "p) from full Newton's.\n",
        md_table(["method", "ωh", "full (ms)", "decoupled (ms)", "full / decoupled", "Newton it./step full / "
                  "decoupled", "max state difference"], dec)]) + "\n"


# ------------------------------------------------------------------ 2. the stiff spring
K_STIFF = 1e6


def spring():
    K = np.array([[1.0 + K_STIFF, -K_STIFF], [-K_STIFF, K_STIFF]])
    lam, U = np.linalg.eigh(K)
    q0 = np.array([1.0, 1.0 + 1e-4])

    def exact(t):
        return (U @ (np.cos(np.outer(t, np.sqrt(lam))) * (U.T @ q0)).T).T      # at rest at t = 0
    return sp.systems.linear(np.eye(2), K), q0, np.zeros(2), float(np.sqrt(lam.max())), exact


def section_spring(cfg, rows):
    S, q0, p0, wmax, exact = spring()
    N = cfg["stiff_spring_steps"]
    say(f"  stiff spring: omega_max = {wmax:.6g}, {N} steps")
    cells = {}
    for wh in cfg["stiff_spring_omega_h"]:
        h = wh / wmax
        ex = exact(np.arange(N + 1) * h).mean(axis=1)
        for method in METHODS:
            tr, status, warned = attempt(lambda: sp.integrate(S, q0, p0, h, N, method=method, closed_form=False))
            row = dict(part="spring", problem="two masses k=1, 1e6", method=method, omega_h=wh, h=h, steps=N,
                       T=N * h, newton="full", status=status, warned=warned)
            if tr is not None:
                com = tr.q.mean(axis=1)
                row.update(e_H=float(np.max(np.abs(tr.energy - tr.energy[0])) / abs(tr.energy[0])),
                           slow_err_T=float(abs(com[-1] - ex[-1])), slow_err_max=float(np.max(np.abs(com - ex))),
                           stretch_max=float(np.max(np.abs(np.diff(tr.q, axis=1)))),
                           newton_its=float(np.mean(tr.newton_iterations)))
            rows.append(row)
            cells[(method, wh)] = row
    header = ["method"] + [f"ωh = {wh:g}: {col}" for wh in cfg["stiff_spring_omega_h"]
                           for col in ("e_H", "centre of mass error at the end")]
    body = []
    for method in METHODS:
        line = [method]
        for wh in cfg["stiff_spring_omega_h"]:
            r = cells[(method, wh)]
            if r["status"] != "ok":
                line += [r["status"], "–"]
            else:
                line += [fmt_e(r["e_H"]) + (" (past the limit)" if r["warned"] else ""), fmt_e(r["slow_err_T"])]
        body.append(line)
    hs = ", ".join(f"{wh / wmax:.4g}" for wh in cfg["stiff_spring_omega_h"])
    return "\n".join([
        "### A stiff spring: two masses, k = 1 to the wall and k = 10⁶ between them\n",
        f"Unit masses, V = x₁²/2 + 10⁶ (x₂ − x₁)²/2, ω_max = {wmax:.6g} rad/s (the slow mode "
        f"{math.sqrt(np.linalg.eigvalsh([[1 + K_STIFF, -K_STIFF], [-K_STIFF, K_STIFF]])[0]):.4g} rad/s); from "
        f"x = (1, 1 + 10⁻⁴) at rest; {N} steps of h = {hs} (`sp.systems.linear`, closed_form=False: Newton for "
        "every method). e_H = max |H − H₀|/H₀ over the run; the centre of mass (x₁ + x₂)/2 at the last step "
        "against the exact modal solution.\n",
        md_table(header, body)]) + "\n"


# ------------------------------------------------------------------ 3. cost per step
def section_cost(cfg, rows):
    order = ("simpson", "lobatto4", "gauss2", "gauss3")
    body = []
    for n, h, N in cfg["stiff_cost_cases"]:
        if n == 2:
            S, q0, label = sp.systems.double_pendulum(), np.array([1.0, 0.5]), "double pendulum"
        else:
            S, q0, label = sp.systems.pendulum_chain(n), 0.5 * np.sin(1.3 * np.arange(n)), f"pendulum_chain({n})"
        p0 = np.zeros(n)
        fns = {m: (lambda m=m: sp.integrate(S, q0, p0, h, N, method=m)) for m in order}
        its = {m: float(np.mean(fn().newton_iterations)) for m, fn in fns.items()}     # and warm-up
        say(f"  cost per step: {label}, {N} steps, {cfg['stiff_cost_rounds']} rounds")
        t, paired = timed_rounds(fns, cfg["stiff_cost_rounds"])
        for m in order:
            us = 1e6 * t[m]["wall_min"] / N
            best_ratio = t[m]["wall_min"] / t["simpson"]["wall_min"]
            rows.append(dict(part="cost", problem=label, method=m, h=h, steps=N, status="ok",
                             newton_its=its[m], us_per_step=us, ratio_to_simpson=best_ratio,
                             paired_ratio_to_simpson=med(paired[m]), **t[m]))
            body.append([label, f"{h:g}", m, f"{us:.2f}", f"{1e6 * t[m]['wall'] / N:.2f}", f"{best_ratio:.2f}",
                         f"{med(paired[m]):.2f}", f"{its[m]:.2f}"])
    return "\n".join([
        "### Cost per step: gauss2 and gauss3 against simpson and lobatto4\n",
        "One `sp.integrate` call of N steps from rest (double pendulum `sp.systems.double_pendulum()`, "
        "q₀ = (1, 0.5); the chain q₀,ᵢ = 0.5 sin(1.3 i)), newton=\"full\"; "
        f"{cfg['stiff_cost_rounds']} interleaved rounds: the best and the median µs per step; the ratio of the "
        "best to simpson's best, and the median of the rounds' paired ratios to simpson.\n",
        md_table(["system", "h", "method", "best (µs/step)", "median (µs/step)", "× simpson (best)",
                  "× simpson (paired median)", "Newton it./step"], body)]) + "\n"


# ------------------------------------------------------------------ findings
def findings(cfg, rows):
    out = []
    fpu = [r for r in rows if r["part"] == "fpu" and r["newton"] == "full"]
    if fpu:
        whs = sorted({r["omega_h"] for r in fpu})
        for wh in (whs[-1],):
            ran = [r for r in fpu if r["omega_h"] == wh and r["status"] == "ok" and not r["warned"]]
            if ran:
                best = min(ran, key=lambda r: r["e_H"])
                worst = max(ran, key=lambda r: r["e_H"])
                out.append(f"FPU at ωh = {wh:g}: " + ", ".join(r["method"] for r in ran)
                           + f" complete within their limits; the smallest energy error is {best['method']}'s "
                           f"({fmt_e(best['e_H'])}" + (f", {worst['e_H'] / best['e_H']:.3g}× below {worst['method']}'s"
                                                  if worst is not best else "") + "); slow error up to "
                           f"t = {cfg['stiff_slow_T']:g}: "
                           + ", ".join(f"{r['method']} {fmt_e(r['slow_err_early'])}" for r in ran) + ".")
        checked = [r for r in fpu if r.get("branch_checks") is not None and r["branch_checks"] > 0.5]
        for r in checked:
            calm = [x for x in fpu if x["method"] == r["method"] and x.get("branch_checks") == 0
                    and x.get("us_per_step")]
            if calm:
                c = max(calm, key=lambda x: x["omega_h"])
                out.append(f"{r['method']} at ωh = {r['omega_h']:g}: a branch check on {100 * r['branch_checks']:.0f} % "
                           f"of the steps, {r['us_per_step'] / c['us_per_step']:.3g}× the time per step at "
                           f"ωh = {c['omega_h']:g} (no checks).")
        for m in METHODS:
            bad = [r["omega_h"] for r in fpu if r["method"] == m and (r["status"] != "ok" or r["warned"])]
            if bad:
                out.append(f"{m} (limit ωh < {limits()[m]:.3g}): stopped or warned from ωh = {min(bad):g} on ("
                           + "; ".join(
                    f"{r['omega_h']:g}: {r['status'] if r['status'] != 'ok' else 'completed, e_H ' + fmt_e(r['e_H'])}"
                    for r in fpu if r["method"] == m and r["omega_h"] in bad) + ").")
        for wh in whs:
            g3 = next((r for r in fpu if r["method"] == "gauss3" and r["omega_h"] == wh), None)
            l5 = next((r for r in fpu if r["method"] == "lobatto5" and r["omega_h"] == wh), None)
            if g3 and l5 and g3["status"] == "ok" and l5["status"] == "ok" and not l5["warned"]:
                out.append(f"ωh = {wh:g}: gauss3 takes {g3['wall_min'] / l5['wall_min']:.2f}× lobatto5's time, "
                           f"e_H {fmt_e(g3['e_H'])} against {fmt_e(l5['e_H'])}.")
    dec = [r for r in rows if r["part"] == "fpu" and r["newton"] == "decoupled" and r.get("full_over_decoupled")]
    if dec:
        ratios = [r["full_over_decoupled"] for r in dec]
        out.append(f"newton=\"decoupled\" on the FPU chain (n = 6): full / decoupled {min(ratios):.2f}–"
                   f"{max(ratios):.2f}× over the completed runs, states within "
                   f"{fmt_e(max(r['diff_from_full'] for r in dec))} of full Newton's.")
    spr = [r for r in rows if r["part"] == "spring"]
    if spr:
        ams = [r for r in spr if r["method"] in ("midpoint", "gauss2", "gauss3") and r["status"] == "ok"]
        if ams:
            out.append("Stiff spring: midpoint, gauss2 and gauss3 (A-stable, and they conserve quadratic "
                       "invariants: the energy of a linear system up to the Newton tolerance and rounding) "
                       f"{'complete every run' if len(ams) == 3 * len({r['omega_h'] for r in spr}) else 'complete'}"
                       f" with e_H ≤ {fmt_e(max(r['e_H'] for r in ams))}.")
        wh = max(r["omega_h"] for r in spr)
        ok = [r for r in spr if r["omega_h"] == wh and r["status"] == "ok"]
        out.append(f"Stiff spring at ωh = {wh:g}: " + (", ".join(
            f"{r['method']} centre-of-mass error {fmt_e(r['slow_err_T'])} (e_H {fmt_e(r['e_H'])})" for r in ok)
            or "no method completed") + "; " + ", ".join(
            f"{r['method']} {r['status']}" for r in spr if r["omega_h"] == wh and r["status"] != "ok") + ".")
    cost = [r for r in rows if r["part"] == "cost"]
    for label in dict.fromkeys(r["problem"] for r in cost):
        c = {r["method"]: r for r in cost if r["problem"] == label}
        out.append(f"Per step on the {label} (best times): gauss2 {c['gauss2']['ratio_to_simpson']:.2f}× simpson, "
                   f"gauss3 {c['gauss3']['ratio_to_simpson']:.2f}× simpson and "
                   f"{c['gauss3']['ratio_to_simpson'] / c['lobatto4']['ratio_to_simpson']:.2f}× lobatto4 "
                   f"(paired medians: gauss2 {c['gauss2']['paired_ratio_to_simpson']:.2f}×, gauss3 "
                   f"{c['gauss3']['paired_ratio_to_simpson']:.2f}× simpson).")
    return "### Findings (computed from the tables above)\n\n" + "\n".join(f"- {s}" for s in out) + "\n"


CSV_COLUMNS = ["part", "problem", "method", "omega_h", "h", "steps", "T", "newton", "status", "warned", "e_H",
               "I_err", "I_exchange_err", "slow_err_early", "slow_err_T", "slow_err_max", "stretch_max",
               "newton_its", "branch_checks", "wall", "wall_min", "wall_max", "cpu", "samples", "us_per_step",
               "ratio_to_simpson", "paired_ratio_to_simpson", "full_over_decoupled", "diff_from_full"]


def run_section(cfg, ctx):
    rows, parts = [], []
    t0 = time.perf_counter()
    try:
        from symplectic.symbolic import CompilerError
    except ImportError as exc:                               # SymPy missing
        parts.append(f"The FPU part needs SymPy ({exc}): skipped.\n")
    else:
        try:
            parts.append(section_fpu(cfg, ctx, rows))
        except CompilerError as exc:
            parts.append(f"The FPU part needs a C compiler ({exc}): skipped.\n")
    say(f"  [FPU: {time.perf_counter() - t0:.1f} s]")
    parts.append(section_spring(cfg, rows))
    parts.append(section_cost(cfg, rows))
    parts.append(findings(cfg, rows))
    write_csv(os.path.join(ctx["out"], "stiff.csv"), rows, CSV_COLUMNS)
    return "\n".join(parts)
