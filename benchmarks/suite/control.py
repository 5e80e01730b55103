"""Section 24: optimal control -- symplectic.control against collocation baselines (issue
"Optimal control with the variational schemes themselves (DMOC)").

The pendulum swing-up of opty's beginner example, from its definition: I theta'' + m g d sin
theta = T, I = m = d = 1, g = 9.81; theta: 0 -> pi, theta': 0 -> 0 in 10 s; |T| <= 2;
minimise int T^2 dt.  Transcribed

- by symplectic.control (the scheme's own forced step, the inputs at its force points), Simpson
  and lobatto4 on 25 .. 100 intervals;
- by backward Euler on N + 1 = 501 nodes (opty's default transcription: theta_{k+1} - theta_k =
  h omega_{k+1}, omega_{k+1} - omega_k = h (T_{k+1} - g sin theta_{k+1}), cost h sum_k T_k^2) and
  by the midpoint rule on the same nodes (the right-hand side at the interval's midpoint, T
  linear between nodes), both written here with their exact sparse Jacobian and Hessian;

every one solved by IPOPT (ipyopt, the same options: tol 1e-10).  Measured: the cost J of each
transcription, its difference from the finest of ours (lobatto4, 100 intervals), the miss of the
target when the control is replayed through ``sp.integrate`` with lobatto5 at h = 10/4000 (ours
through ``Solution.u_at``; backward Euler's T held over each interval; the midpoint rule's T
linear), and the solve time (wall, the best of the rounds, interleaved).  Then opty's
cart-pole crane in minimum time (ours on 20 .. 160 intervals beside opty's published duration).
The rows go to ``control.csv``.
"""
import os
import time

import numpy as np

import symplectic as sp

from .common import fmt_e, md_table, say, write_csv

G = 9.81
FINE = 4000                                   # replay steps (lobatto5)
#: (label, duration T, bound on |T| or None): opty's example, and the tests' 3 s swing-up
PROBLEMS = (("opty's swing-up: 10 s, |T| <= 2", 10.0, 2.0), ("3 s, no bound", 3.0, None))
CSV_COLUMNS = ["problem", "transcription", "method", "intervals", "unknowns", "J", "J_diff",
               "miss", "own_miss", "solve_s", "iterations", "status"]


def pendulum():
    return sp.systems.pendulum(m=1.0, omega=np.sqrt(G))


def _miss(tr):
    return max(abs(tr.q[-1, 0] - np.pi), abs(tr.p[-1, 0]))


def ours(method, N, dur, umax):
    pb = sp.control.Problem(pendulum(), dur, N, method=method, inputs=[1.0],
                            start={"q": [0.0], "qdot": [0.0]}, end={"q": [np.pi], "qdot": [0.0]},
                            cost=sp.control.effort(2.0),
                            input_bounds=None if umax is None else (-umax, umax))
    t0 = time.perf_counter()
    sol = pb.solve("ipopt", tol=1e-10)
    wall = time.perf_counter() - t0
    return dict(J=sol.cost, miss=_miss(sol.replay(method="lobatto5", h=dur / FINE)),
                own_miss=_miss(sol.replay()), solve_s=wall, iterations=sol.iterations,
                status=sol.message, unknowns=pb.n_variables)


class Collocation:
    """Backward Euler ("be") or the midpoint rule ("mid") on N intervals: x = (theta_0..N,
    omega_0..N, T_0..N), 2N dynamics rows and 4 end conditions."""

    def __init__(self, kind, N, dur, umax):
        self.kind, self.N, self.h = kind, N, dur / N
        self.dur, self.umax = dur, umax
        self.n = 3 * (N + 1)
        k = np.arange(N)
        th, om, tq = k, (N + 1) + k, 2 * (N + 1) + k
        r1, r2 = k, N + k
        if kind == "be":        # c1 = th1 - th0 - h om1; c2 = om1 - om0 - h (T1 - g sin th1)
            rows = [r1, r1, r1, r2, r2, r2, r2]
            cols = [th + 1, th, om + 1, om + 1, om, tq + 1, th + 1]
        else:                   # c1 = th1 - th0 - h (om0 + om1)/2; c2 = om1 - om0 - h (Tm - g sin thm)
            rows = [r1, r1, r1, r1, r2, r2, r2, r2, r2, r2]
            cols = [th + 1, th, om, om + 1, om + 1, om, tq, tq + 1, th, th + 1]
        ends = 2 * N + np.arange(4)
        self.jr = np.concatenate(rows + [ends]).astype(np.int64)
        self.jc = np.concatenate(cols + [np.array([0, N + 1, N, 2 * N + 1])]).astype(np.int64)
        if kind == "be":
            self.hr = np.concatenate([k + 1, 2 * (N + 1) + np.arange(N + 1)]).astype(np.int64)
            self.hc = self.hr.copy()
        else:
            self.hr = np.concatenate([k, k + 1, k + 1, 2 * (N + 1) + np.arange(N + 1)]).astype(np.int64)
            self.hc = np.concatenate([k, k, k + 1, 2 * (N + 1) + np.arange(N + 1)]).astype(np.int64)

    def split(self, x):
        N = self.N
        return x[:N + 1], x[N + 1:2 * (N + 1)], x[2 * (N + 1):]

    def weights(self):
        w = np.full(self.N + 1, self.h)
        if self.kind == "be":
            w[0] = 0.0                      # T_0 acts on no interval: h sum_{k>=1} T_k^2
        else:
            w[0] = w[-1] = self.h / 2        # the trapezoid of a linear T
        return w

    def f(self, x):
        return float(self.weights() @ self.split(x)[2] ** 2)

    def grad(self, x, out):
        out[:] = 0.0
        out[2 * (self.N + 1):] = 2 * self.weights() * self.split(x)[2]

    def g(self, x, out):
        th, om, tq = self.split(x)
        h, N = self.h, self.N
        if self.kind == "be":
            out[:N] = th[1:] - th[:-1] - h * om[1:]
            out[N:2 * N] = om[1:] - om[:-1] - h * (tq[1:] - G * np.sin(th[1:]))
        else:
            out[:N] = th[1:] - th[:-1] - h * (om[:-1] + om[1:]) / 2
            thm = (th[:-1] + th[1:]) / 2
            out[N:2 * N] = om[1:] - om[:-1] - h * ((tq[:-1] + tq[1:]) / 2 - G * np.sin(thm))
        out[2 * N:] = [th[0], om[0], th[-1] - np.pi, om[-1]]

    def jac(self, x, out):
        th = self.split(x)[0]
        h, one = self.h, np.ones(self.N)
        if self.kind == "be":
            out[:] = np.concatenate([one, -one, -h * one, one, -one, -h * one,
                                     h * G * np.cos(th[1:]), np.ones(4)])
        else:
            c = h * G * np.cos((th[:-1] + th[1:]) / 2) / 2
            out[:] = np.concatenate([one, -one, -h / 2 * one, -h / 2 * one, one, -one,
                                     -h / 2 * one, -h / 2 * one, c, c, np.ones(4)])

    def hess(self, x, lam, obj, out):
        th = self.split(x)[0]
        h, N = self.h, self.N
        l2 = lam[N:2 * N]
        if self.kind == "be":
            out[:] = np.concatenate([-l2 * h * G * np.sin(th[1:]), 2 * obj * self.weights()])
        else:
            d = -l2 * h * G * np.sin((th[:-1] + th[1:]) / 2) / 4
            out[:] = np.concatenate([d, d, d, 2 * obj * self.weights()])

    def solve(self):
        import ipyopt
        N = self.N
        lo, hi = np.full(self.n, -1e20), np.full(self.n, 1e20)
        if self.umax is not None:
            lo[2 * (N + 1):], hi[2 * (N + 1):] = -self.umax, self.umax
        m = 2 * N + 4
        nlp = ipyopt.Problem(self.n, lo, hi, m, np.zeros(m), np.zeros(m), (self.jr, self.jc),
                             (self.hr, self.hc), self.f, self.grad, self.g, self.jac, self.hess,
                             ipopt_options={"tol": 1e-10, "constr_viol_tol": 1e-10,
                                            "print_level": 0, "sb": "yes"})
        x0 = np.zeros(self.n)         # at rest at theta = 0, T = 0 (from theta linear in t,
        t0 = time.perf_counter()      # IPOPT finds backward Euler's problem locally infeasible)
        x, J, status = nlp.solve(x0)
        wall = time.perf_counter() - t0
        return x, J, status, wall, int(nlp.stats.get("n_iter", 0))

    def replay(self, x):
        """The control through lobatto5 at T/FINE: held (backward Euler: T_{k+1} on interval k)
        or linear between the nodes (midpoint), sampled at lobatto5's force points."""
        tq = self.split(x)[2]
        dur = self.dur
        tu = sp.forces.point_times("lobatto5", dur / FINE, FINE)
        k = np.clip(np.floor(tu / self.h).astype(int), 0, self.N - 1)
        if self.kind == "be":
            U = tq[k + 1]
        else:
            s = tu / self.h - k
            U = (1 - s) * tq[k] + s * tq[k + 1]
        tr = sp.integrate(pendulum(), [0.0], [0.0], dur / FINE, FINE, method="lobatto5",
                          force=U[..., None])
        return _miss(tr)


def baseline(kind, N, dur, umax):
    c = Collocation(kind, N, dur, umax)
    x, J, status, wall, its = c.solve()
    return dict(J=J, miss=c.replay(x), own_miss=float("nan"), solve_s=wall, iterations=its,
                status="Solve_Succeeded" if status == 0 else f"IPOPT status {status}",
                unknowns=c.n)


def crane():
    """opty's cart-pole crane from its definition: cart 1 kg, a 10 kg point load on a 5 m rod
    (theta from the downward vertical), g = 9.81."""
    import sympy as sy
    x, th, xd, thd = sy.symbols("x theta xd thd")
    L = (sy.Rational(11, 2) * xd ** 2 + 50 * xd * thd * sy.cos(th) + 125 * thd ** 2
         + 50 * sy.Rational(981, 100) * sy.cos(th))
    return sp.System.from_sympy(L, [x, th], [xd, thd])


def cart_double_pendulum():
    """opty's double pendulum on a cart from its definition: the cart (1 kg) at x, two links
    of length 2 at absolute angles a, b from +x, each of mass 1 with central inertia 2 at its
    mass centre, placed at the link's far end; g = 9.81."""
    import sympy as sy
    x, a, b, xd, ad, bd = sy.symbols("x a b xd ad bd")
    q, qd = [x, a, b], [xd, ad, bd]
    P1 = sy.Matrix([x + 2 * sy.cos(a), 2 * sy.sin(a)])
    P2 = P1 + sy.Matrix([2 * sy.cos(b), 2 * sy.sin(b)])

    def speed2(P):
        v = P.jacobian(q) * sy.Matrix(qd)
        return (v.T * v)[0]
    T = (xd ** 2 + speed2(P1) + speed2(P2)) / 2 + ad ** 2 + bd ** 2
    V = sy.Rational(981, 100) * (P1[1] + P2[1])
    return sp.System.from_sympy(T - V, q, qd)


def min_time_text(cfg, rows, title, intro, make, cases, problem_kw, fine):
    """A minimum-time problem solved on each (method, N) of ``cases``, each warm-started from
    the previous one of its method: T, the first-order residual, the misses, the solve time."""
    try:
        system = make()
    except Exception as exc:                       # SymPy or a compiler missing
        return f"{title} needs SymPy and a C compiler ({exc}): skipped.\n"
    body, prev = [], {}
    for method, N in cases:
        pb = sp.control.Problem(system, intervals=N, method=method, **problem_kw)
        t0 = time.perf_counter()
        sol = pb.solve("ipopt", tol=1e-10, guess=prev.get(method), max_iter=1000)
        wall = time.perf_counter() - t0
        if sol.success:
            prev[method] = sol
        fine_tr = sol.replay(method="lobatto5", n_steps=fine)
        rows.append(dict(problem=title, transcription="symplectic.control", method=method,
                         intervals=N, unknowns=pb.n_variables, J=sol.duration,
                         miss=sol.miss(fine_tr), own_miss=sol.miss(), solve_s=wall,
                         iterations=sol.iterations, status=sol.message))
        body.append([method, N, pb.n_variables, f"{sol.duration:.7f}", fmt_e(sol.kkt_residual),
                     fmt_e(sol.miss()), fmt_e(sol.miss(fine_tr)), f"{wall:.2f}", sol.iterations,
                     sol.message[:40]])
    return "\n".join([f"### {title}\n", intro,
                      md_table(["method", "intervals", "unknowns", "T (s)", "KKT residual",
                                "own step miss", "replayed miss", "solve (s)",
                                "IPOPT iterations", "status"], body), ""])


def crane_text(cfg, rows):
    """Minimum time, |F| <= 20, x: 0 -> 15 rest to rest, 0 <= x <= 15: ours beside opty's
    published 150-node backward-Euler duration."""
    kw = dict(duration=6.0, inputs=[1.0, 0.0], start={"q": [0, 0], "qdot": [0, 0]},
              end={"q": [15, 0], "qdot": [0, 0]}, cost=sp.control.duration(),
              input_bounds=(-20, 20), state_bounds=([0, -np.inf], [15, np.inf]),
              free_duration=(1.0, 20.0))
    intro = ("opty's example from its definition: cart 1 kg, a 10 kg load on a 5 m rod, |F| ≤ 20 "
             "N, x: 0 → 15 m rest to rest, 0 ≤ x ≤ 15 (`sp.System.from_sympy`); "
             "`free_duration=(1, 20)`, `cost=control.duration()`, IPOPT, each N warm-started from "
             "the previous one of its method (the first from the default guess, T = 6 s). opty's "
             "stored optimum on 150 backward-Euler nodes: T = 5.894364 s. Columns: T; the "
             "first-order conditions' residual; the end's miss replayed at the transcription's "
             f"own step and by lobatto5 on {FINE} steps through `u_at` (the bang-bang input's "
             "switches fall inside steps, where the interpolant cannot follow them); the solve "
             "time.\n")
    return min_time_text(cfg, rows, "The cart-pole crane, minimum time", intro, crane,
                         cfg["control_crane"], kw, FINE)


def cart_pendulum_text(cfg, rows):
    """opty's double pendulum on a cart: rest hanging to rest upright, minimum time."""
    kw = dict(duration=3.0, inputs=[1.0, 0.0, 0.0],
              start={"q": [0, -np.pi / 2, -np.pi / 2], "qdot": [0, 0, 0]},
              end={"q": [np.nan, np.pi / 2, np.pi / 2], "qdot": [0, 0, 0]},
              cost=sp.control.duration(), input_bounds=(-50, 50),
              state_bounds=([-5, -np.inf, -np.inf], [5, np.inf, np.inf]),
              free_duration=(0.5, 10.0))
    intro = ("opty's intermediate example from its definition: a cart (1 kg) at x, two links of "
             "length 2 at absolute angles from +x, each of mass 1 with central inertia 2 at its "
             "mass centre, placed at the link's far end, g = 9.81; |F| ≤ 50 N on the cart, "
             "|x| ≤ 5; from rest hanging (−π/2, −π/2) to rest upright (π/2, π/2), x at the end "
             "free; minimum time from the default guess (angles linear over 3 s), each N "
             "warm-started from the previous one. opty's stored optimum on 300 backward-Euler "
             "nodes: T = 2.924255 s. Columns as for the crane (replayed by lobatto5 on 6000 "
             "steps; the upright end is unstable, so open-loop replays drift).\n")
    return min_time_text(cfg, rows, "The double pendulum on a cart, minimum time", intro,
                         cart_double_pendulum, cfg["control_cart_pendulum"], kw, 6000)


def run_section(cfg, ctx):
    try:
        import ipyopt  # noqa: F401
    except ImportError as exc:
        return f"This section needs ipyopt (pip install 'symplectic[control]'): {exc}. Skipped.\n"
    rows, text = [], []
    for label, dur, umax in PROBLEMS:
        text.append(problem_text(cfg, label, dur, umax, rows))
    say("  the crane, minimum time")
    text.append(crane_text(cfg, rows))
    say("  the double pendulum on a cart, minimum time")
    text.append(cart_pendulum_text(cfg, rows))
    write_csv(os.path.join(ctx["out"], "control.csv"), rows, CSV_COLUMNS)
    return "\n".join(text) + "\n"


def problem_text(cfg, label, dur, umax, rows):
    cases = [("symplectic.control", m, N) for m, N in cfg["control_ours"]]
    cases += [("backward Euler", "–", N) for N in cfg["control_baseline_N"]]
    cases += [("midpoint collocation", "–", N) for N in cfg["control_baseline_N"]]
    best = {}
    for r in range(cfg["control_rounds"]):          # interleaved: every case once a round
        say(f"  {label}: round {r + 1} of {cfg['control_rounds']}")
        for case in cases:
            kind, m, N = case
            out = (ours(m, N, dur, umax) if kind == "symplectic.control" else
                   baseline("be" if kind == "backward Euler" else "mid", N, dur, umax))
            if case not in best or out["solve_s"] < best[case]["solve_s"]:
                best[case] = out
    ref = best[("symplectic.control", *cfg["control_reference"])]["J"]
    body = []
    for kind, m, N in cases:
        b = best[(kind, m, N)]
        rows.append(dict(problem=label, transcription=kind, method=m, intervals=N,
                         J_diff=b["J"] - ref, **b))
        body.append([kind, m, N, b["unknowns"], f"{b['J']:.8f}", fmt_e(abs(b["J"] - ref)),
                     fmt_e(b["miss"]), fmt_e(b["own_miss"]), f"{b['solve_s']:.2f}",
                     b["iterations"], b["status"]])
    bound = "no bound" if umax is None else f"|T| ≤ {umax:g}"
    out = [
        f"### The pendulum swing-up, {dur:g} s, {bound}, min ∫T²\n",
        f"I θ̈ + m g d sin θ = T, I = m = d = 1, g = 9.81, θ: 0 → π at rest in {dur:g} s "
        "(opty's beginner example is the 10 s case). Ours: `sp.control.Problem(...).solve("
        "\"ipopt\", tol=1e-10)` from its default guess (θ linear, at rest, no input); the "
        "baselines written in `benchmarks/suite/control.py` from their definitions (backward "
        "Euler as opty transcribes by default, the midpoint rule) with exact sparse derivatives, "
        "solved by the same IPOPT (ipyopt) with the same tolerances from θ = ω = T = 0. J: each "
        "transcription's own cost; |J − J_ref|: against ours with "
        f"{cfg['control_reference'][0]} on {cfg['control_reference'][1]} intervals; replayed "
        f"miss: max(|θ(T) − π|, |θ̇(T)|) of the control fed to lobatto5 at h = T/{FINE} (ours "
        "through `Solution.u_at`, backward Euler's T held over each interval, the midpoint "
        "rule's linear); own step: ours replayed with its own method and step (the transcription "
        "itself, to Newton's tolerance); solve time: the best of "
        f"{cfg['control_rounds']} interleaved rounds (ours with the Newton polish).\n",
        ("The 10 s problem has several local optima (the number and timing of the swings): "
         "each transcription's IPOPT run finds one from its guess, so its J values compare only "
         "where they are the same optimum. Replayed open loop, the upright end amplifies any "
         "difference: ours at its own step, a residual of 1e-14, misses by the \"own step\" "
         "column, so the replayed misses there are O(1) for every transcription.\n"
         if umax is not None else
         "No bound is active and the optimum is the tests' (`tests/validation/test_control.py`): "
         "J and the replayed miss fall at the scheme's order.\n"),
        md_table(["transcription", "method", "intervals", "unknowns", "J", "|J − J_ref|",
                  "replayed miss", "own step miss", "solve (s)", "IPOPT iterations", "status"],
                 body),
        "",
    ]
    key = ("symplectic.control", "simpson", 50)
    if key in best and ("backward Euler", "–", 500) in best:
        out.append(f"Replayed miss, backward Euler on 500 intervals / Simpson on 50: "
                   f"{best[('backward Euler', '–', 500)]['miss'] / best[key]['miss']:.3g}.\n")
    return "\n".join(out)
