#!/usr/bin/env python3
"""Our implicit variational integrators against explicit baselines on chains and URDF arms.

    python benchmarks/chain_baselines.py --check            # right-hand sides agree (exit 1 if not)
    python benchmarks/chain_baselines.py [--quick] [--n 4 8 16 32 64 128] [--T 10 100]
                                         [--arms arm6 arm7] [--cap 20] [--rounds 3]

Systems: ``pendulum_chain(n)`` with unit masses and lengths ("chain") and with masses 2 -> 0.5 kg and
lengths 0.5 -> 0.2 m tapering from base to tip ("arm"), q_i(0) = 0.5 sin(1.3 i), at rest, g = 9.81
(benchmarks/models.py: chain_params, chain_q0, as section 10 of benchmarks/RESULTS.md); and the
URDF arms of tests/data/urdf (arm6: UR5-like, arm7: Panda-like) through
``symplectic.multibody.from_urdf`` (gravity -9.81 z, frictionless joints), from rest at
q_i(0) = 0.5 sin(1.3 i) as well (inside every joint's URDF limits; neither model applies limits).

Methods: ours, ``sp.integrate(system, q0, p0, h, N, method=...)`` with lobatto5 and lobatto4 (step
sizes h = T/N, N 2^(1/4) apart); GSL rk8pd with the accelerations by LU of M(q)
(benchmarks/compiled/gsl_rk8pd_chain.c) and by the O(n) articulated-body recursion
(gsl_rk8pd_chain_aba.c), tolerances 4 per decade; MuJoCo's RK4 (benchmarks/compiled/mujoco_chain.py),
time steps h = T/N as ours (the classes of these methods: benchmarks/suite/chain_peers.py, shared with
section 10 of benchmarks/RESULTS.md).  For each system and horizon T every method gets the cheapest setting
with e_H = max over steps |H - H0|/|H0| <= 1e-8 over [0, T] whose next finer setting reaches it too
(benchmarks/suite/peers.py: Search); a run projected to take longer than --cap seconds is not
started ("not run: cost").  The chosen settings of one horizon are then timed in interleaved rounds
(>= 3); times are medians, ratios are medians over rounds of peer time / our time in the same round.

--check: at random states (the chain's and the arm's masses and lengths, and random ones; angles in
[-pi, pi], rates in [-3, 3]; three states for every n = 2..128) the accelerations of the ABA program
against the LU program, and each (and NumPy's solve, and MuJoCo's after mapping its relative hinge
angles to absolute angles) against a reference solve of M qdd = r in extended precision with
iterative refinement.  Passes if ABA is within 1e-12 (relative, max norm) of the reference and of
the LU program, except where the LU program's own error against the reference accounts for the
difference (M(q) at random n ~ 100 configurations has condition numbers ~1e5..1e6).  For the URDF
arms, MuJoCo's M(q) and gravity forces against ours.

Writes benchmarks/results/chain_baselines.csv and .md (or --out DIR).
"""
import argparse
import datetime
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "compiled"))

import symplectic as sp  # noqa: E402

import models as M  # noqa: E402
import gsl as G  # noqa: E402
import mujoco_chain as MJ  # noqa: E402
from suite.chain_peers import MuJoCoRK4, gsl_chain, mujoco_chain, ours_chain  # noqa: E402
from suite.common import fmt_e, fmt_t, interleave, write_csv, _lscpu  # noqa: E402
from suite.peer_methods import Ours, h_grid  # noqa: E402
from suite.peers import Search, rows_for  # noqa: E402
from suite.solvers import tol_grid  # noqa: E402

NAN = float("nan")
TARGET = 1e-8
URDF_DIR = os.path.join(REPO, "tests", "data", "urdf")


def say(*a):
    print(*a, flush=True)


# ------------------------------------------------------------------------------- methods
def chain_methods(kind, n, gsl_exes, mj, cfg):
    hg = h_grid(10.0, cfg["h_max_ours"], 1e-5, 4)
    out = [ours_chain(kind, n, meth, hg, 1 << 20) for meth in ("lobatto5", "lobatto4")]
    tg = tol_grid(4, cfg.get("tol_max_exp", 4), 16)
    if gsl_exes.get("lu"):
        out.append(gsl_chain(G, gsl_exes["lu"], "gsl-lu", "GSL rk8pd, LU", kind, n, tg))
    if gsl_exes.get("aba"):
        out.append(gsl_chain(G, gsl_exes["aba"], "gsl-aba", "GSL rk8pd, ABA", kind, n, tg))
    if mj is not None:
        out.append(mujoco_chain(MJ, mj, kind, n, h_grid(10.0, 0.05, 1e-5, 4)))
    return out


def urdf_energy(S):
    """H(q, qd) of rows for the tree system S: p = M(q) qd, then S.energy (the H of our runs)."""
    def energy(Q, V):
        P = np.array([S.mass(q) @ v for q, v in zip(Q, V)])
        return S.energy(Q, P)
    return energy


def urdf_methods(name, mj):
    path = os.path.join(URDF_DIR, f"{name}.urdf")
    S = sp.multibody.from_urdf(path)
    q0 = M.chain_q0(S.n)
    hg = h_grid(10.0, 0.1, 1e-5, 4)
    out = [Ours(S, meth, q0, np.zeros(S.n), lambda q, p: S.energy(q, p), hg, 1 << 20, newton="auto")
           for meth in ("lobatto5", "lobatto4")]
    if mj is not None:
        sim = MJ.Sim(mj, MJ.urdf_model(mj, path), q0, np.zeros(S.n), urdf_energy(S))
        out.append(MuJoCoRK4(sim, h_grid(10.0, 0.05, 1e-5, 4)))
    return out


# ------------------------------------------------------------------------------- the check
def qdd_reference(m, l, q, qd, g=9.81):
    """qdd from M(q) qdd = r with M, r and the residuals in extended precision (np.longdouble) and
    three steps of iterative refinement of a double-precision solve: accurate to about
    cond(M) * 1e-19, far below the double-precision solvers' errors.  Also returns cond(M)."""
    L = np.longdouble
    A, r = MJ.chain_mass_rhs(m, l, q, qd, g, dtype=L)
    A64 = A.astype(float)
    x = np.linalg.solve(A64, r.astype(float)).astype(L)
    for _ in range(3):
        x = x + np.linalg.solve(A64, (r - A @ x).astype(float)).astype(L)
    return x.astype(float), float(np.linalg.cond(A64))


def check(gsl_exes, mj, ns=range(2, 129), states=3, seed=20261204):
    """Max-norm relative differences of the accelerations at random states; (worst, ok)."""
    rng = np.random.default_rng(seed)
    keys = ("aba_lu", "aba_ref", "lu_ref", "np_ref") + (("mj_ref",) if mj is not None else ())
    worst, where = dict.fromkeys(keys, 0.0), {}
    over, explained, total, worst_cond = 0, True, 0, 0.0
    for n in ns:
        for k in range(states):
            if k == 0:
                m, l = M.chain_params(n, "chain")
            elif k == 1:
                m, l = M.chain_params(n, "arm")
            else:
                m, l = rng.uniform(0.2, 3.0, n), rng.uniform(0.1, 1.5, n)
            q, qd = rng.uniform(-np.pi, np.pi, n), rng.uniform(-3, 3, n)
            ref, cond = qdd_reference(m, l, q, qd)
            worst_cond = max(worst_cond, cond)
            lu = np.array(G.rhs_chain(gsl_exes["lu"], m, l, q, qd)[n:])
            aba = np.array(G.rhs_chain(gsl_exes["aba"], m, l, q, qd)[n:])
            pairs = dict(aba_lu=(aba, lu), aba_ref=(aba, ref), lu_ref=(lu, ref),
                         np_ref=(MJ.chain_qdd_formula(m, l, q, qd), ref))
            if mj is not None:
                pairs["mj_ref"] = (MJ.chain_qdd(mj, m, l, q, qd), ref)
            d = {key: float(np.max(np.abs(a - b)) / np.max(np.abs(b))) for key, (a, b) in pairs.items()}
            for key, v in d.items():
                if v > worst[key]:
                    worst[key], where[key] = v, n
            total += 1
            if d["aba_lu"] > 1e-12:
                over += 1
                # a difference above 1e-12 must be the LU solution's own rounding error
                explained &= d["aba_ref"] <= 1e-13 and d["lu_ref"] >= 0.9 * d["aba_lu"]
    say(f"chain accelerations, n = {min(ns)}..{max(ns)}, {states} states each ({total} states; max-norm "
        f"relative differences; reference: extended-precision refined solve; cond(M) up to {worst_cond:.1e}):")
    labels = dict(aba_lu="GSL ABA vs GSL LU", aba_ref="GSL ABA vs reference", lu_ref="GSL LU vs reference",
                  np_ref="NumPy solve vs reference",
                  mj_ref="MuJoCo (1e-12 kg m^2 point inertias) vs reference")
    for key in keys:
        say(f"  {labels[key]}: {worst[key]:.3e} (worst at n = {where.get(key, '-')})")
    say(f"  states with ABA vs LU > 1e-12: {over} of {total}"
        + (" (each within the LU solution's own error against the reference)" if over and explained else ""))
    if mj is not None:
        for name in ("arm6", "arm7"):
            path = os.path.join(URDF_DIR, f"{name}.urdf")
            S = sp.multibody.from_urdf(path)
            model = MJ.urdf_model(mj, path)
            dm = dg = 0.0
            for _ in range(5):
                q = rng.uniform(-np.pi, np.pi, S.n)
                Mm, bias = MJ.urdf_matrices(mj, model, q, np.zeros(S.n))
                Mo, go = S.mass(q), S.potential_grad(q)
                dm = max(dm, float(np.max(np.abs(Mm - Mo)) / np.max(np.abs(Mo))))
                dg = max(dg, float(np.max(np.abs(bias - go)) / np.max(np.abs(go))))
            say(f"  {name}: MuJoCo M(q) vs ours {dm:.2e}, MuJoCo gravity forces vs our grad V {dg:.2e} (5 random q)")
    ok = worst["aba_ref"] <= 1e-12 and (over == 0 or explained)
    return worst, ok


# ------------------------------------------------------------------------------- the runs
def run_case(label, methods, horizons, cfg):
    say(f"-- {label}")
    searches = []
    for meth in methods:
        searches.append(Search(meth, horizons, (TARGET,), cfg["cap"]).run())
    rows = []
    for T in horizons:
        configs = {}
        for s in searches:
            _, i = s.pick(T, TARGET)
            if i is not None:
                configs[(s.m.name, i)] = s.m.timer(s.m.grid[i], T)
        say(f"  T = {T:g}: timing {len(configs)} settings in {cfg['rounds']} interleaved rounds")
        samples = interleave(configs, cfg["rounds"], budget=None)
        rs = rows_for(searches, T, (TARGET,), samples)
        for r, s in zip(rs, searches):
            r["system"] = label
            if r["reached"]:
                pt = s.points[(s.m.grid.index(r["prm"]), T)]
                r["accepted"], r["rejected"] = pt.get("accepted"), pt.get("rejected")
                r["per_step_us"] = 1e6 * r["wall"] / r["steps"] if r.get("steps") else NAN
            elif r["note"].startswith("not reached (cost"):
                r["note"] = "not run: cost (" + r["note"] + ")"
        rows += rs
    return rows


def fmt_cell(r):
    if r is None:
        return "–"
    if not r["reached"]:
        return r["note"]
    s = f"{fmt_t(r['wall'])}, {r['per_step_us']:.3g} µs/step ({r['param']}, {r['steps']} steps"
    if r.get("accepted") is not None:
        s += f", acc/rej {r['accepted']}/{r['rejected']}"
    s += f", e_H {fmt_e(r['e_H'])})"
    if r["method"] != "lobatto5":
        if math.isfinite(r["vs_lobatto5"]):
            s += f", **{r['vs_lobatto5']:.3g}×**"
        elif r["method"] != r.get("best_ours") and math.isfinite(r.get("vs_best", NAN)):
            s += f", **{r['vs_best']:.3g}× {r['best_ours']}**"
    if r.get("note"):
        s += f" [{r['note']}]"
    return s


def markdown(rows, header, method_order):
    out = header[:]
    labels = {}
    for r in rows:
        labels.setdefault(r["method"], r["label"])
    for kind in dict.fromkeys(r["kind"] for r in rows):
        rs = [r for r in rows if r["kind"] == kind]
        cols = [m for m in method_order if any(r["method"] == m for r in rs)]
        out += [f"\n**{kind}**\n",
                "| n | T (s) | " + " | ".join(labels[c] for c in cols) + " |",
                "|---|---|" + "---|" * len(cols)]
        for key in sorted(dict.fromkeys((int(r["n"]), float(r["T"])) for r in rs)):
            by = {r["method"]: r for r in rs if (int(r["n"]), float(r["T"])) == key}
            out.append(f"| {key[0]} | {key[1]:g} | " + " | ".join(fmt_cell(by.get(c)) for c in cols) + " |")
    return "\n".join(out) + "\n"


def shown_args():
    """The command line for the header, a --note's text left out (it follows in the header)."""
    out, skip = [], False
    for w in sys.argv[1:]:
        out.append("NOTE" if skip else w)
        skip = w == "--note"
    return " ".join(out)


def read_rows(path):
    """Rows of an earlier chain_baselines.csv, typed as run_case makes them (for --merge)."""
    import csv
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for r in csv.DictReader(f):
            r = {k: v for k, v in r.items()}
            r["reached"] = r["reached"] == "True"
            r["ours"] = r["method"] in ("lobatto5", "lobatto4")
            r["n"] = int(r["n"]) if r["n"] else ""
            for k in ("T", "e_H", "wall", "wall_min", "wall_max", "cpu", "per_step_us", "vs_lobatto5", "vs_best"):
                r[k] = float(r[k]) if r.get(k) not in (None, "") else NAN
            for k in ("steps", "accepted", "rejected", "samples"):
                r[k] = int(r[k]) if r.get(k) not in (None, "") else None
            out.append(r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare the right-hand sides and exit")
    ap.add_argument("--quick", action="store_true", help="n = 4 8, T = 10, cap 5 s")
    ap.add_argument("--n", type=int, nargs="+", default=[4, 8, 16, 32, 64])
    ap.add_argument("--T", type=float, nargs="+", default=[10.0, 100.0])
    ap.add_argument("--max-n-long", type=int, default=32, help="horizons beyond the first only up to this n")
    ap.add_argument("--kinds", nargs="*", default=["chain", "arm"])
    ap.add_argument("--arms", nargs="*", default=["arm6", "arm7"], help="URDF arms (T = the first horizon)")
    ap.add_argument("--cap", type=float, default=20.0, help="seconds: a run projected longer is not started")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--h-max-ours", type=float, default=0.1,
                    help="the largest step of our chain searches (coarse steps where Newton barely converges "
                         "can cost more than the cap alone and stop the search before its target)")
    ap.add_argument("--tol-max-exp", type=float, default=4.0, help="GSL's loosest tolerance is 10^-this")
    ap.add_argument("--note", default="", help="a sentence for the markdown's header (e.g. the merged runs)")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of the CSV in --out for the systems not run now")
    a = ap.parse_args()
    if a.quick:
        a.n, a.T, a.cap = [4, 8], [10.0], 5.0
    a.rounds = max(a.rounds, 3)

    exes = dict(lu=G.build(source=G.CHAIN_SOURCE), aba=G.build(source=G.CHAIN_ABA_SOURCE))
    mj = MJ.load()
    say(f"GSL programs: {exes}; MuJoCo: {mj.__version__ if mj else 'not installed'}")
    if a.check:
        if not (exes["lu"] and exes["aba"]):
            say("GSL (libgsl-dev) or a C compiler missing: nothing to check")
            return 2
        worst, ok = check(exes, mj)
        say("check " + ("passed" if ok else "FAILED") + f": ABA vs reference {worst['aba_ref']:.3e} (limit 1e-12), "
            f"ABA vs LU {worst['aba_lu']:.3e} (limit 1e-12 where not the LU solution's own error)")
        return 0 if ok else 1

    started = datetime.datetime.now(datetime.timezone.utc)
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no", "--", "csrc", "symplectic",
                            "benchmarks"],
                           capture_output=True, text=True).stdout
    info = _lscpu()
    rows = []
    cfg = dict(cap=a.cap, rounds=a.rounds, h_max_ours=a.h_max_ours, tol_max_exp=a.tol_max_exp)
    os.makedirs(a.out, exist_ok=True)
    kept = read_rows(os.path.join(a.out, "chain_baselines.csv")) if a.merge else []
    # a row is replaced only by its own case (kind, n, T): a run of another horizon keeps it
    now_run = {(k, n, float(T)) for k in a.kinds for n in a.n
               for T in (a.T if n <= a.max_n_long else a.T[:1])}
    kept = [r for r in kept if (r["kind"], r["n"], float(r["T"])) not in now_run
            and not (r["kind"].endswith("(URDF)") and a.arms)]

    def write(final):
        load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
        write_csv(os.path.join(a.out, "chain_baselines.csv"), kept + rows,
                  ["kind", "n", "T", "method", "label", "reached", "param", "steps", "e_H", "wall", "wall_min",
                   "wall_max", "cpu", "samples", "per_step_us", "vs_lobatto5", "vs_best", "best_ours", "accepted",
                   "rejected", "note"])
        if a.merge and kept:
            note = (f" Rows of the systems not in this invocation are kept from the earlier run(s) in "
                    f"{os.path.basename(a.out)}/chain_baselines.csv (--merge).")
        else:
            note = ""
        header = [
            "# Chains and arms: ours against explicit baselines (GSL rk8pd LU / ABA, MuJoCo RK4)\n",
            f"Generated by `python benchmarks/chain_baselines.py {shown_args()}` from "
            f"{started:%Y-%m-%d %H:%M} UTC to {datetime.datetime.now(datetime.timezone.utc):%H:%M} UTC"
            f"{'' if final else ' (PARTIAL: the run was still going)'} at commit {commit}"
            f"{' (+ local changes)' if dirty.strip() else ''}; machine: {info.get('Model name', '?')}, "
            f"{info.get('CPU(s)', '?')} CPUs, shared with other jobs; load average (1, 5, 15 min) before / at "
            f"writing: {load0} / {load1}; MuJoCo {mj.__version__ if mj else 'not installed'}. "
            "Do not edit by hand: rerun the command." + note + (" " + a.note if a.note else "") + "\n",
            f"Target e_H = max over steps |H − H0|/|H0| ≤ {TARGET:g} over [0, T]; each method's cheapest setting "
            "reaching it whose next finer setting reaches it too (ours and MuJoCo: h = 10/N, N 2^(1/4) apart, "
            "searched from h = 0.1 (ours; where a row says 'search from h = ...', from there: coarser steps "
            "where Newton barely converges cost more than the cap and stopped the search) and 0.05 (MuJoCo); "
            f"GSL: tol 4 per decade from 10^-{a.tol_max_exp:g}; rows run with --merge keep the settings of "
            "their own invocation, see the CSV); a run projected beyond "
            f"{a.cap:g} s is not started (\"not run: cost\"). Times: median of {a.rounds} interleaved rounds "
            "(GSL: the C program's own clock, process start excluded; MuJoCo: one `mj_step(m, d, nstep=N)` call "
            "with MuJoCo's RK4; ours: `sp.integrate` calls, trajectory storage included). **×**: median over "
            "rounds of time / lobatto5's time in the same round (< 1: the peer is faster). µs/step: time / "
            "steps (GSL: accepted steps). acc/rej: GSL's accepted and rejected steps. "
            "chain: unit masses and lengths; arm: masses 2 → 0.5 kg, lengths 0.5 → 0.2 m tapering linearly; "
            "q_i(0) = 0.5 sin(1.3 i), at rest, g = 9.81. arm6/arm7: tests/data/urdf via "
            "`symplectic.multibody.from_urdf` and MuJoCo's URDF import, frictionless, no limits, "
            "from rest at q_i(0) = 0.5 sin(1.3 i). MuJoCo's chain carries 1e-12 kg m^2 of rotational "
            "inertia on each point mass (MuJoCo refuses less; benchmarks/compiled/mujoco_chain.py).\n",
        ]
        md = markdown(kept + rows, header, ["lobatto5", "lobatto4", "gsl-lu", "gsl-aba", "mujoco-rk4"])
        with open(os.path.join(a.out, "chain_baselines.md"), "w") as f:
            f.write(md)
        return md

    for kind in a.kinds:
        for n in a.n:
            hz = tuple(T for T in a.T if T == a.T[0] or n <= a.max_n_long)
            new = [dict(r, kind=kind, n=n) for r in
                   run_case(f"{kind}, n = {n}", chain_methods(kind, n, exes, mj, cfg), hz, cfg)]
            if a.h_max_ours != 0.1:
                for r in new:
                    if r["ours"]:
                        r["note"] = "; ".join(x for x in (r.get("note"), f"search from h = {a.h_max_ours:g}") if x)
            rows += new
            write(False)
    for name in a.arms:
        rows += [dict(r, kind=f"{name} (URDF)", n=sp.multibody.from_urdf(os.path.join(URDF_DIR, f"{name}.urdf")).n)
                 for r in run_case(f"{name} (URDF)", urdf_methods(name, mj), (a.T[0],), cfg)]
        write(False)
    say(write(True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
