"""Section 20: statistics of step-plausibility measures on genuine steps and on false roots.

The rule of csrc/core/sym_galerkin_roots.c ("Plausibility of a root") rejects a converged step when
T_{j+1} > PLAUS_GAIN (T_j + |W|).  For one step (q, p) -> nodes Q_a = q + X_a, (q1, p1), with T = 1/2 p^T M^-1 p:

* ``GW = T1 / (T0 + |W|)``, W = h sum_i b_i grad V(q_i) . g_i the discrete
  work of the potential along the step -- the rule of the C core
  (implausible above 10; see "Plausibility of a root" in sym_galerkin_roots.c);
* for comparison: ``rho`` = max_a |X_a| / (|h| |v| + h^2/2 |a|) (the
  increment over the terms of the step's Taylor expansion), ``G`` = T1 /
  (T0 + |V1 - V0|) (the same balance with V), ``GWm`` = T1 / (T0 + max(-W, 0)).

Every measure is computed here in NumPy from the System's public evaluators
(independently of the C code), for

* genuine steps: every step of integrations on the built-in systems (the
  papers' step sizes, large h up to and past the stability limits, the n-link
  chain, the Lagrange top, stiff linear systems) and on the 3-link cart
  pendulum of tests/support/models_cart.py; the runs whose relative energy error
  stays below 1 are the reference;
* false roots: other solutions of the same step equations, found by Newton
  from scattered starting points (on the Newton system exposed by
  ``_core.newton_system``), which are not the root reached by continuation in
  h from h -> 0 (the branch that tends to the exact flow); and the trial's
  midpoint runs on the cart, classified step by step the same way.
"""
import math
import os
import re
import sys

import numpy as np

import symplectic as sp
from symplectic import _core

from .common import REPO, md_table, say, write_csv

sys.path.insert(0, os.path.join(REPO, "tests"))

IMPLICIT = ["midpoint", "lobatto2", "simpson", "lobatto3", "lobatto4", "lobatto5"]
NODES = {m: sp.methods(True)[m]["nodes"] for m in IMPLICIT}


# ------------------------------------------------------------------ the measures
LOB = {2: ([0.0, 1.0], [0.5, 0.5]),
       3: ([0.0, 0.5, 1.0], [1 / 6, 2 / 3, 1 / 6]),
       4: ([0.0, 0.5 - math.sqrt(5) / 10, 0.5 + math.sqrt(5) / 10, 1.0], [1 / 12, 5 / 12, 5 / 12, 1 / 12]),
       5: ([0.0, 0.5 - math.sqrt(21) / 14, 0.5, 0.5 + math.sqrt(21) / 14, 1.0],
           [1 / 20, 49 / 180, 16 / 45, 49 / 180, 1 / 20])}
QUAD = {"midpoint": ([0.0, 1.0], [0.5], [1.0]), "lobatto2": (LOB[2][0], LOB[2][0], LOB[2][1]),
        "simpson": (LOB[3][0], LOB[3][0], LOB[3][1]), "lobatto3": (LOB[3][0], LOB[3][0], LOB[3][1]),
        "lobatto4": (LOB[4][0], LOB[4][0], LOB[4][1]), "lobatto5": (LOB[5][0], LOB[5][0], LOB[5][1])}


def _lagrange(c, a, x):
    return math.prod((x - c[m]) / (c[a] - c[m]) for m in range(len(c)) if m != a)


def _lagrange_d(c, a, x):
    return sum(math.prod((x - c[m]) / (c[a] - c[m]) for m in range(len(c)) if m not in (a, k))
               / (c[a] - c[k]) for k in range(len(c)) if k != a)


def end_momentum(S, q, p, h, method, X):
    """p_{j+1} = p_j + h sum_i b_i f_i of the Galerkin scheme at increments X
    (written here from the formula, independently of the C kernels)."""
    c, x, b = QUAD[method]
    Q = np.vstack([np.zeros(S.n), X])
    acc = np.zeros(S.n)
    for xi, bi in zip(x, b):
        qi = q + sum(_lagrange(c, a, xi) * Q[a] for a in range(len(c)))
        gi = sum(_lagrange_d(c, a, xi) * Q[a] for a in range(len(c))) / h
        acc += bi * (0.5 * S.mass_dir(qi, gi).T @ gi - S.potential_grad(qi))
    return p + h * acc


def discrete_work(S, q, h, method, X):
    """W = h sum_i b_i grad V(q_i) . g_i: the quadrature of the potential's
    change along the step's interpolating polynomial."""
    c, x, b = QUAD[method]
    Q = np.vstack([np.zeros(S.n), X])
    W = 0.0
    for xi, bi in zip(x, b):
        qi = q + sum(_lagrange(c, a, xi) * Q[a] for a in range(len(c)))
        gi = sum(_lagrange_d(c, a, xi) * Q[a] for a in range(len(c))) / h
        W += bi * S.potential_grad(qi) @ gi
    return h * W


def kinetic(S, q, p):
    return 0.5 * p @ np.linalg.solve(S.mass(q), p)


def taylor_scale(S, q, p, h):
    M = S.mass(q)
    v = np.linalg.solve(M, p)
    A = S.mass_dir(q, v)
    a = np.linalg.solve(M, 0.5 * A.T @ v - A @ v - S.potential_grad(q))
    return abs(h) * np.max(np.abs(v)) + 0.5 * h * h * np.max(np.abs(a))


def measures(S, q, p, h, method, X, p1=None):
    """X: (s-1, n) increments of the nodes 1..s-1.  Returns rho (kinematic) and
    the energy measures of the step."""
    X = np.asarray(X).reshape(-1, S.n)
    d = taylor_scale(S, q, p, h)
    x = np.max(np.abs(X))
    q1 = q + X[-1]
    if p1 is None:
        p1 = end_momentum(S, q, p, h, method, X)
    T0, T1 = kinetic(S, q, p), kinetic(S, q1, p1)
    V0, V1 = S.potential(q), S.potential(q1)
    dH = (T1 + V1) - (T0 + V0)
    dV = V1 - V0
    W = discrete_work(S, q, h, method, X)
    return dict(GW=T1 / max(T0 + abs(W), 1e-300), GWm=T1 / max(T0 + max(-W, 0.0), 1e-300),
                GWs=max(T0, T1) / max(min(T0, T1) + abs(W), 1e-300), W=W,
                rho=x / d if d > 0 else (0.0 if x == 0 else math.inf),
                eA=abs(dH) / max(min(T0, T1) + abs(dV), 1e-300),
                eB=abs(dH) / max(T0 + abs(dV), 1e-300),
                G=T1 / max(T0 + abs(dV), 1e-300),
                Gs=max(T0, T1) / max(min(T0, T1) + abs(dV), 1e-300),
                T0=T0, T1=T1, dV=dV, dH=dH)


def traj_measures(tr):
    S, h = tr.system, tr.h
    out = []
    for k in range(tr.n_steps):
        X = [tr.q[k + 1] - tr.q[k]]
        if tr.q_mid is not None:
            X = list(tr.q_mid[k].reshape(-1, S.n) - tr.q[k]) + X
        out.append(measures(S, tr.q[k], tr.p[k], h, tr.method, np.array(X), tr.p[k + 1]))
    return out


def rel_energy_error(tr):
    E = tr.energy
    return float(np.max(np.abs(E - E[0])) / max(abs(E[0]), 1e-300))


# ------------------------------------------------------------------ genuine runs
def genuine_cases(quick):
    from support.models_cart import cart_pendulum3
    sy = sp.systems
    cases = []
    # FVCA pendulum: h = T/N of Table 1 and large h (Simpson's limit 2 sqrt 2/omega = 0.45)
    pend = sy.pendulum(1.0, 2 * math.pi)
    T = 1.1803406089182313   # one period at q0 = pi/2 (4 K(1/2)/omega)
    for q0, p0, tag in ((math.pi / 2, 0.0, "pi/2"), (3.0, 0.0, "3.0"), (0.0, 15.0, "rotating")):
        for h in [T / 200, T / 100, T / 50, 0.1, 0.2, 0.3, 0.4, 0.44, 0.6, 1.0, 2.0]:
            cases.append((f"pendulum q0={tag}", pend, [q0], [p0], h, 20.0))
    # TOP Table 1 double pendulum (omega_max = 11.2 rad/s: Simpson's limit h = 0.25)
    L = 9.81 / (2 * math.pi) ** 2
    dp = sy.double_pendulum(1.0, 1.0, L, L, 9.81)
    for h in [0.001, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.24, 0.3]:
        cases.append(("double pendulum TOP1", dp, [math.pi / 4, math.pi / 3], [0, 0], h, 10.0))
    # AXIOMS linearised double pendulum, through Newton (closed_form=False)
    ldp = sy.linear_double_pendulum()
    for h in [0.025, 0.05, 0.1, 0.2]:
        cases.append(("linear double pendulum AXIOMS", ldp, [0, math.pi / 6], [0, 0], h, 10.0))
    # stiff linear system far past Simpson's limit (midpoint/Lobatto-2 are A-stable)
    lin = sy.linear(np.eye(2), np.diag([1.0, 1e4]))
    for h in [0.01, 0.1, 1.0]:
        cases.append(("stiff linear omega=1,100", lin, [1.0, 1.0], [0.0, 0.0], h, 20.0))
    # Lagrange top, TOP Table 3 (h = tbar/N; psi turns 252 rad/s)
    top = sy.lagrange_top()
    tq0 = np.array([0.0, math.pi / 3, 0.0])
    tp0 = top.mass(tq0) @ np.array([9.2, 0.0, 252.0])
    tbar = 1.8472390
    for N in [10, 20, 40, 80, 160]:
        cases.append(("Lagrange top TOP3", top, tq0, tp0, tbar / N, 2 * tbar))
    # n-link chain (run.py section 5 state)
    for n in ([8] if quick else [8, 64]):
        ch = sy.pendulum_chain(n)
        q0 = 0.5 * np.sin(1.3 * np.arange(n))
        for h in [0.01, 0.05, 0.1]:
            cases.append((f"chain n={n}", ch, q0, np.zeros(n), h, 3.0 if n > 8 else 10.0))
    # 3-link cart pendulum, small and moderate amplitudes
    cart = cart_pendulum3()
    for q0 in ([0, 0.3, -0.2, 0.1], [0, 0.8, 0.5, -0.4]):
        for h in [0.01, 0.05, 0.1, 0.15, 0.2, 0.3]:
            cases.append((f"cart q0={q0}", cart, q0, [0, 0, 0, 0], h, 10.0))
    return cases


KEYS = ("rho", "G", "GW", "GWm")


def run_genuine(quick, thin=1):
    rows = []
    for name, S, q0, p0, h, T in genuine_cases(quick)[::thin]:
        n = max(1, int(round(T / h)))
        for m in IMPLICIT:
            for pred in (True, False):
                kw = dict(closed_form=False) if S.builtin == "linear" else {}
                try:
                    tr = sp.integrate(S, q0, p0, h, n, m, predictor=pred, **kw)
                except sp.ConvergenceError as e:
                    tr, status = e.trajectory, f"fails at step {e.step}"
                else:
                    status = "ok"
                if tr.n_steps == 0:
                    rows.append((name, m, pred, h, status, 0, {}, float("nan")))
                    continue
                ms = traj_measures(tr)
                mx = {k: max(d[k] for d in ms) for k in KEYS}
                rows.append((name, m, pred, h, status, tr.n_steps, mx, rel_energy_error(tr)))
    return rows


# ------------------------------------------------------------------ false roots
def newton(S, q, p, h, X, method, maxit=60):
    for _ in range(maxit):
        R, J = _core.newton_system(S, q, p, h, X, method)
        try:
            dX = np.linalg.solve(J, -R)
        except np.linalg.LinAlgError:
            return None
        X = X + dX
        if not np.all(np.isfinite(X)) or np.max(np.abs(X)) > 1e8:
            return None
        if np.max(np.abs(dX)) <= 1e-12 * max(1.0, np.max(np.abs(X))):
            R, _ = _core.newton_system(S, q, p, h, X, method)
            scale = max(1.0, np.max(np.abs(p)))
            return X if np.max(np.abs(R)) <= 1e-9 * scale else None
    return None


def taylor_X(S, q, p, h, method):
    M = S.mass(q)
    v = np.linalg.solve(M, p)
    A = S.mass_dir(q, v)
    a = np.linalg.solve(M, 0.5 * A.T @ v - A @ v - S.potential_grad(q))
    return np.concatenate([c * h * v + 0.5 * (c * h) ** 2 * a for c in NODES[method][1:]])


def continuation_root(S, q, p, h, method, K=16, depth=6):
    """The root on the branch that starts at X = 0 for h -> 0: Newton along
    h_k = k h / K, each from the previous root scaled to the new h, and each
    interval refined (halved, up to `depth` times) until stepping it whole and
    in two halves reach the same root; None when no refinement agrees (a fold
    or a branch Newton cannot follow)."""
    def advance(X, ha, hb, d):
        X1 = newton(S, q, p, hb, X * (hb / ha), method)
        hm = 0.5 * (ha + hb)
        Xm = newton(S, q, p, hm, X * (hm / ha), method)
        X2 = None if Xm is None else newton(S, q, p, hb, Xm * (hb / hm), method)
        if X1 is not None and X2 is not None and same(X1, X2):
            return X1
        if d == 0:
            return None
        Xm = advance(X, ha, hm, d - 1)
        return None if Xm is None else advance(Xm, hm, hb, d - 1)

    h0 = h / (K * 2 ** depth)
    X = newton(S, q, p, h0, taylor_X(S, q, p, h0, method), method)
    if X is None:
        return None
    ha = h0
    for hb in h * np.arange(1, K + 1) / K:
        X = advance(X, ha, hb, depth)
        if X is None:
            return None
        ha = hb
    return X


def same(X, Y):
    return np.max(np.abs(X - Y)) <= 1e-6 * max(1.0, np.max(np.abs(Y)))


def false_roots(S, q, p, h, method, rng, starts=24):
    Xg = continuation_root(S, q, p, h, method)
    if Xg is None:
        return None, []
    scale = max(np.max(np.abs(Xg)), 1e-3)
    found = []
    for k in range(starts):
        X0 = Xg + scale * [0.5, 2.0, 10.0, 100.0][k % 4] * rng.standard_normal(Xg.shape)
        Xr = newton(S, q, p, h, X0, method)
        if Xr is None or same(Xr, Xg) or any(same(Xr, f) for f in found):
            continue
        found.append(Xr)
    return measures(S, q, p, h, method, Xg), [measures(S, q, p, h, method, f) for f in found]


def state_samples(S, q0, p0, T, every, h_ref=0.005):
    tr = sp.integrate(S, q0, p0, h_ref, int(round(T / h_ref)), "lobatto4")
    idx = np.arange(0, tr.n_steps, int(round(every / h_ref)))
    return [(tr.q[i], tr.p[i]) for i in idx]


def run_false(quick, thin=1):
    from support.models_cart import cart_pendulum3
    rng = np.random.default_rng(20240611)
    cart = cart_pendulum3()
    L = 9.81 / (2 * math.pi) ** 2
    dp = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
    sets = [("cart", cart, [0, 0.8, 0.5, -0.4], [0, 0, 0, 0], 6.0, 0.6 if quick else 0.3,
             [0.1, 0.15, 0.2, 0.3]),
            ("double pendulum", dp, [math.pi / 4, math.pi / 3], [0, 0], 4.0,
             0.8 if quick else 0.4, [0.1, 0.2, 0.3]),
            ("pendulum", sp.systems.pendulum(), [3.0], [0.0], 2.0, 0.5 if quick else 0.25,
             [0.2, 0.4, 0.8])]
    methods = ["midpoint", "lobatto2", "simpson", "lobatto4"] + ([] if quick else ["lobatto5"])
    genuine, false, no_branch = [], [], 0
    for name, S, q0, p0, T, every, hs in sets:
        for q, p in state_samples(S, q0, p0, T, every * thin):
            for h in hs:
                for m in methods:
                    g, fs = false_roots(S, q, p, h, m, rng)
                    if g is None:
                        no_branch += 1
                        continue
                    genuine.append((name, m, h, g))
                    false.extend((name, m, h, f) for f in fs)
    return genuine, false, no_branch


def trial_runs():
    """The trial's case: midpoint on the cart at h = 0.2 and 0.3 with the
    predictor returned a trajectory with huge energy errors.  Every step is
    classified by continuation: the first step whose accepted root is not the
    continuation root is a false root."""
    from support.models_cart import cart_pendulum3
    cart = cart_pendulum3()
    out = []
    for m, h, pred in (("midpoint", 0.2, True), ("midpoint", 0.3, True)):
        try:
            tr = sp.integrate(cart, [0, 0.8, 0.5, -0.4], [0, 0, 0, 0], h, int(round(10 / h)), m,
                              predictor=pred)
        except sp.ConvergenceError as e:
            tr = e.trajectory
        ms = traj_measures(tr)
        for k in range(tr.n_steps):
            X = tr.q[k + 1] - tr.q[k]
            Xg = continuation_root(cart, tr.q[k], tr.p[k], h, m)
            kind = "fold" if Xg is None else ("genuine" if same(X, Xg) else "FALSE")
            out.append((m, h, k, kind, ms[k]))
            if kind != "genuine":
                break
    return out


def fmt(d):
    return ", ".join(f"{k} = {d[k]:.3g}" for k in KEYS)


def plaus_gain():
    """PLAUS_GAIN as csrc/core/sym_galerkin_roots.c defines it (None without the C sources)."""
    try:
        with open(os.path.join(REPO, "csrc", "core", "sym_galerkin_roots.c")) as fh:
            m = re.search(r"#define PLAUS_GAIN ([0-9.eE+-]+)", fh.read())
    except OSError:
        return None
    return float(m.group(1)) if m else None


def _pct(xs):
    return " / ".join(f"{np.percentile(xs, q):.3g}" for q in (1, 10, 50))


def summary(rows, trial, gen, fal, gain):
    """The table of GW by population, and the threshold's margins."""
    ok = [(mx["GW"], name, m, h) for (name, m, _, h, _, n, mx, e) in rows if n > 0 and e < 1]
    top = max(ok)
    fal_gw = [d["GW"] for *_, d in fal]
    trial_gw = [d["GW"] for (m, h, k, kind, d) in trial if kind != "genuine"]
    body = [[f"every step of the {len(ok)} integrations with relative energy error < 1 (all implicit methods, "
             "predictor on and off; h from the papers' to past the stability limits)",
             f"max {top[0]:.3g} ({top[2]}, {top[1]}, h = {top[3]:.3g})"],
            [f"roots reached by continuation in h ({len(gen)} sampled large-h step equations)",
             f"max {max(d['GW'] for *_, d in gen):.3g}"],
            ["the trial's first non-genuine steps (midpoint, cart, h = 0.2 / 0.3)",
             " / ".join(f"{x:.3g}" for x in trial_gw) or "none: the build measured stops those runs first"],
            [f"{len(fal)} false roots of sampled step equations (Newton from scattered starts)",
             f"percentiles 1/10/50 %: {_pct(fal_gw)}"]]
    out = [md_table(["population", "GW"], body)]
    if gain is not None:
        out.append(f"\nPLAUS_GAIN = {gain:g} (csrc/core/sym_galerkin_roots.c): {gain / top[0]:.2g}× the largest genuine value; "
                   f"the median false root is {np.median(fal_gw) / gain:.3g}× PLAUS_GAIN; "
                   f"{100 * np.mean(np.array(fal_gw) <= gain):.0f} % of the sampled false roots lie at or below it "
                   "(other solutions that change the energy moderately: no measure tried separates those from "
                   "genuine large-h steps).")
    return out


def measure_lines(gen, fal):
    out = []
    for key in KEYS:
        out.append(f"- {key}: continuation roots ({len(gen)}) max {max(d[key] for *_, d in gen):.3g}; false roots "
                   f"({len(fal)}) min {min(d[key] for *_, d in fal):.3g}, percentiles 1/10/50 % "
                   + _pct([d[key] for *_, d in fal]))
    for m in sorted({m for _, m, _, _ in fal}):
        out.append(f"  - {m}: " + "; ".join(
            f"{key} genuine max {max(d[key] for _, mm, _, d in gen if mm == m):.3g}, false min "
            f"{min(d[key] for _, mm, _, d in fal if mm == m):.3g}" for key in KEYS))
    return out


def run_section(cfg, ctx):
    quick, thin = cfg["plaus_quick"], cfg["plaus_thin"]
    say("  the trial's runs")
    trial = trial_runs()
    say("  genuine runs")
    rows = run_genuine(quick, thin)
    write_csv(os.path.join(ctx["out"], "plausibility_runs.csv"),
              [dict(system=name, method=m, predictor=pred, h=h, outcome=st, steps=n, rel_energy_error=e,
                    **{f"max_{k}": mx.get(k) for k in KEYS}) for (name, m, pred, h, st, n, mx, e) in rows if n])
    say("  roots of sampled step equations")
    gen, fal, nob = run_false(quick, thin)
    ok = [mx for (*_, n, mx, e) in rows if n > 0 and e < 1]
    return "\n".join([
        "GW = T1 / (T0 + |W|), W = h Σ b_i ∇V(q_i)·g_i the discrete work of the potential along the step "
        "(the rule's measure); for comparison rho = max_a |X_a| / (|h| |v| + h²/2 |a|), G = T1 / (T0 + |V1 − V0|), "
        "GWm = T1 / (T0 + max(−W, 0)). Every measure is computed in NumPy from the System's public evaluators, "
        "independently of the C code. Genuine steps: every step of integrations on the built-in systems (the "
        "papers' step sizes, large h up to and past the stability limits, the n-link chain, the Lagrange top, "
        "stiff linear systems) and the 3-link cart pendulum of tests/support/models_cart.py"
        + (f" (every {thin}th case of the list)" if thin > 1 else "") + "; false roots: other solutions of the "
        "same step equations, found by Newton from scattered starts (`_core.newton_system`), that are not the "
        "root reached by continuation in h from h → 0.\n",
        *summary(rows, trial, gen, fal, plaus_gain()),
        "\nMaxima over the runs with relative energy error < 1: "
        + ", ".join(f"{k} {max(mx[k] for mx in ok):.3g}" for k in KEYS) + f" ({len(ok)} runs; each run's maxima: "
        f"`plausibility_runs.csv` in the output directory). Step equations with no continuation branch up to h "
        f"(fold): {nob}.\n",
        *measure_lines(gen, fal)]) + "\n"
