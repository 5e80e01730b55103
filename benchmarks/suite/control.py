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
linear), and the solve time (wall, the best of the rounds, interleaved).  The 10 s problem
has several local optima; a second table starts every transcription from one of them (ours with
Simpson on 100 intervals, solved from the nodes of ours with lobatto4 on 100).  Then opty's
cart-pole crane in minimum time: ours on 20 .. 160 intervals against backward Euler and the
midpoint rule on 150 and 300 (exact sparse Jacobian, IPOPT's limited-memory Hessian, as opty
runs it) and opty's own end condition, beside opty's published duration; and opty's double
pendulum on a cart.  The rows go to ``control.csv``.
"""
import os
import time

import numpy as np

import symplectic as sp

from .common import fmt_e, fmt_x, md_table, say, write_csv

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


def ours(method, N, dur, umax, guess=None):
    pb = sp.control.Problem(pendulum(), dur, N, method=method, inputs=[1.0],
                            start={"q": [0.0], "qdot": [0.0]}, end={"q": [np.pi], "qdot": [0.0]},
                            cost=sp.control.effort(2.0),
                            input_bounds=None if umax is None else (-umax, umax))
    t0 = time.perf_counter()
    sol = pb.solve("ipopt", tol=1e-10, guess=guess)
    wall = time.perf_counter() - t0
    return dict(J=sol.cost, miss=_miss(sol.replay(method="lobatto5", h=dur / FINE)),
                own_miss=_miss(sol.replay()), solve_s=wall, iterations=sol.iterations,
                status=sol.message, unknowns=pb.n_variables, sol=sol, t=sol.t, theta=sol.q[:, 0])


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
        else:       # c1 = th1 - th0 - h (om0 + om1)/2; c2 = om1 - om0 - h (Tm - g sin thm)
            rows = [r1, r1, r1, r1, r2, r2, r2, r2, r2, r2]
            cols = [th + 1, th, om, om + 1, om + 1, om, tq, tq + 1, th, th + 1]
        ends = 2 * N + np.arange(4)
        self.jr = np.concatenate(rows + [ends]).astype(np.int64)
        self.jc = np.concatenate(cols + [np.array([0, N + 1, N, 2 * N + 1])]).astype(np.int64)
        if kind == "be":
            self.hr = np.concatenate([k + 1, 2 * (N + 1) + np.arange(N + 1)]).astype(np.int64)
            self.hc = self.hr.copy()
        else:
            self.hr = np.concatenate([k, k + 1, k + 1,
                                      2 * (N + 1) + np.arange(N + 1)]).astype(np.int64)
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

    def solve(self, x0=None):
        """IPOPT from x0 (theta, omega, T at the nodes; default all zero)."""
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
        # default: at rest at theta = 0, T = 0 (from theta linear in t, IPOPT finds backward
        # Euler's problem locally infeasible)
        x0 = np.zeros(self.n) if x0 is None else np.array(x0, dtype=float)
        t0 = time.perf_counter()
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


def baseline(kind, N, dur, umax, x0=None):
    c = Collocation(kind, N, dur, umax)
    x, J, status, wall, its = c.solve(x0)
    return dict(J=J, miss=c.replay(x), own_miss=float("nan"), solve_s=wall, iterations=its,
                status="Solve_Succeeded" if status == 0 else f"IPOPT status {status}",
                unknowns=c.n, t=np.linspace(0.0, dur, N + 1), theta=c.split(x)[0])


#: the two minimum-time problems' keywords of sp.control.Problem (the cost duration() aside)
CRANE_PROBLEM = dict(duration=6.0, inputs=[1.0, 0.0], start={"q": [0, 0], "qdot": [0, 0]},
                     end={"q": [15, 0], "qdot": [0, 0]}, input_bounds=(-20, 20),
                     state_bounds=([0, -np.inf], [15, np.inf]), free_duration=(1.0, 20.0))
CART_PROBLEM = dict(duration=3.0, inputs=[1.0, 0.0, 0.0],
                    start={"q": [0, -np.pi / 2, -np.pi / 2], "qdot": [0, 0, 0]},
                    end={"q": [np.nan, np.pi / 2, np.pi / 2], "qdot": [0, 0, 0]},
                    input_bounds=(-50, 50), free_duration=(0.5, 10.0),
                    state_bounds=([-5, -np.inf, -np.inf], [5, np.inf, np.inf]))


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


def crane_rhs():
    """The crane's first-order dynamics s' = f(s, F), s = (x, theta, x', theta'), from its
    Lagrangian: M(theta) (x'', theta'') = (F + 50 sin(theta) theta'^2, -490.5 sin(theta)),
    M = [[11, 50 cos(theta)], [50 cos(theta), 250]].  Returns f and the structurally nonzero
    entries df_i/dv_j, v = (s, F), as functions of V (K, 5) giving (K, 4) and (K, #entries),
    and the list of those entries (i, j)."""
    import sympy as sy
    v = sy.symbols("x theta xd thd F")
    th, xd, thd, F = v[1:]
    M = sy.Matrix([[11, 50 * sy.cos(th)], [50 * sy.cos(th), 250]])
    acc = M.LUsolve(sy.Matrix([F + 50 * sy.sin(th) * thd ** 2,
                               -sy.Rational(981, 2) * sy.sin(th)]))
    f = sy.Matrix([xd, thd, sy.simplify(acc[0]), sy.simplify(acc[1])])
    J = f.jacobian(v)
    entries = [(i, j) for i in range(4) for j in range(5) if J[i, j] != 0]

    def columns(exprs):
        fns = [sy.lambdify(v, e, "numpy") for e in exprs]
        return lambda V: np.stack([np.broadcast_to(np.asarray(fn(*V.T), dtype=float),
                                                   V.shape[:1]) for fn in fns], axis=1)
    return columns(list(f)), columns([J[i, j] for i, j in entries]), entries


class CraneCollocation:
    """The crane in minimum time by backward Euler ("be") or the midpoint rule ("mid") on N
    intervals: z = (s_0 .. s_N (4 each, node by node), F_0 .. F_N, h), cost N h; 4N dynamics
    rows c_k = s_{k+1} - s_k - h f(v_k), v_k = (s_{k+1}, F_{k+1}) (be) or the average of nodes
    k and k+1 (mid); 8 rows fixing s_0 and s_N; 0 <= x <= 15, |F| <= 20, 1 <= N h <= 20 as
    bounds.  ``opty_end``: also x' = theta' = 0 at node N-1, which is what opty's condition of
    zero acceleration at the end (its accelerations are backward differences of the
    velocities) comes to.  IPOPT gets the exact sparse Jacobian and a limited-memory Hessian."""

    START, END = np.zeros(4), np.array([15.0, 0.0, 0.0, 0.0])

    def __init__(self, kind, N, system, opty_end=False):
        self.kind, self.N, self.system, self.opty_end = kind, N, system, opty_end
        self.f, self.df, self.entries = crane_rhs()
        self.iF, self.ih = 4 * (N + 1), 5 * (N + 1)
        self.n, self.m = self.ih + 1, 4 * N + 8 + 2 * opty_end
        # v_k = a (node k+1) + b (node k): dc_k/ds_{k+1} = I - a h df/ds, dc_k/ds_k = -I - b h df/ds
        self.a, self.b = (1.0, 0.0) if kind == "be" else (0.5, 0.5)
        ds = sorted({(i, i) for i in range(4)} | {e for e in self.entries if e[1] < 4})
        self.ds = (ds, ds if self.b else [(i, i) for i in range(4)])    # nodes k+1, k
        self.dF = [i for i, j in self.entries if j == 4]
        k = np.arange(N)[:, None]
        rows, cols = [], []
        for block, node in zip(self.ds, (k + 1, k)):
            bi, bj = (np.array(x)[None, :] for x in zip(*block))
            rows.append(4 * k + bi); cols.append(4 * node + bj)
        for node in (k + 1, k)[:1 + bool(self.b)]:                       # F_{k+1}, F_k
            rows.append(4 * k + np.array(self.dF)[None, :])
            cols.append(np.broadcast_to(self.iF + node, (N, len(self.dF))))
        rows.append(4 * k + np.arange(4)[None, :]); cols.append(np.full((N, 4), self.ih))
        ends = [np.arange(4), 4 * N + np.arange(4)] + opty_end * [4 * (N - 1) + np.arange(2, 4)]
        self.jr = np.concatenate([r.ravel() for r in rows] + [4 * N + np.arange(self.m - 4 * N)])
        self.jc = np.concatenate([c.ravel() for c in cols] + ends)
        self.jr, self.jc = self.jr.astype(np.int64), self.jc.astype(np.int64)

    def split(self, z):
        return z[:self.iF].reshape(-1, 4), z[self.iF:self.ih], z[self.ih]

    def points(self, z):
        """v_k, k = 0 .. N-1, where each interval's right-hand side is taken: (N, 5)."""
        s, F, _ = self.split(z)
        V = np.column_stack([s, F])
        return self.a * V[1:] + self.b * V[:-1]

    def g(self, z, out):
        s, _, h = self.split(z)
        out[:4 * self.N] = (s[1:] - s[:-1] - h * self.f(self.points(z))).ravel()
        ends = [s[0] - self.START, s[-1] - self.END] + self.opty_end * [s[-2, 2:]]
        out[4 * self.N:] = np.concatenate(ends)

    def jac(self, z, out):
        h, V = z[self.ih], self.points(z)
        D = np.zeros((self.N, 4, 5))
        ei, ej = (list(x) for x in zip(*self.entries))
        D[:, ei, ej] = self.df(V)                                   # df/dv at each v_k
        vals = []
        for block, w, sign in zip(self.ds, (self.a, self.b), (1.0, -1.0)):
            bi, bj = (list(x) for x in zip(*block))
            vals.append(sign * np.eye(4)[bi, bj][None, :] - h * w * D[:, bi, bj])
        for w in (self.a, self.b)[:1 + bool(self.b)]:
            vals.append(-h * w * D[:, self.dF, 4])
        vals.append(-self.f(V))                                     # dc_k/dh
        out[:] = np.concatenate([x.ravel() for x in vals] + [np.ones(self.m - 4 * self.N)])

    def solve(self, T0=6.0):
        """IPOPT from x linear from 0 to 15 over T0, theta = x' = theta' = 0, F = 0."""
        import ipyopt
        N, n = self.N, self.n
        lo, hi = np.full(n, -1e20), np.full(n, 1e20)
        lo[0:self.iF:4], hi[0:self.iF:4] = 0.0, 15.0               # 0 <= x_k <= 15
        lo[self.iF:self.ih], hi[self.iF:self.ih] = -20.0, 20.0     # |F_k| <= 20
        lo[self.ih], hi[self.ih] = 1.0 / N, 20.0 / N               # 1 <= T <= 20
        z0 = np.zeros(n)
        z0[0:self.iF:4] = np.linspace(0.0, 15.0, N + 1)
        z0[self.ih] = T0 / N
        grad = np.zeros(n)
        grad[self.ih] = N                                          # d(N h)/dh

        def eval_grad(z, out):
            out[:] = grad
        nlp = ipyopt.Problem(n, lo, hi, self.m, np.zeros(self.m), np.zeros(self.m),
                             (self.jr, self.jc), (np.zeros(0, np.int64), np.zeros(0, np.int64)),
                             lambda z: N * z[self.ih], eval_grad, self.g, self.jac,
                             ipopt_options={"tol": 1e-10, "constr_viol_tol": 1e-10,
                                            "hessian_approximation": "limited-memory",
                                            "max_iter": 3000, "print_level": 0, "sb": "yes"})
        t0 = time.perf_counter()
        z, T, status = nlp.solve(z0)
        wall = time.perf_counter() - t0
        return z, T, status, wall, int(nlp.stats.get("n_iter", 0))

    def replay(self, z, fine):
        """F through lobatto5 on ``fine`` steps of T/fine, at its force points: backward
        Euler's F_{k+1} held over interval k, the midpoint rule's F linear between the nodes.
        Returns max(|x(T) - 15|, |theta(T)|, |x'(T)|, |theta'(T)|)."""
        _, F, h = self.split(z)
        T = self.N * h
        tu = sp.forces.point_times("lobatto5", T / fine, fine)
        k = np.clip(np.floor(tu / h).astype(int), 0, self.N - 1)
        if self.kind == "be":
            U = F[k + 1]
        else:
            w = tu / h - k
            U = (1 - w) * F[k] + w * F[k + 1]
        force = np.zeros(tu.shape + (2,))
        force[..., 0] = U                                          # on the cart's x only
        tr = sp.integrate(self.system, q0=[0.0, 0.0], p0=[0.0, 0.0], h=T / fine, n_steps=fine,
                          method="lobatto5", force=force)
        end = np.concatenate([tr.q[-1], tr.qdot[-1]])
        return float(np.max(np.abs(end - self.END)))


#: opty's crane: 150 nodes, 149 intervals
OPTY_CRANE_INTERVALS = 149


def crane_baseline(kind, N, system, opty_end=False):
    c = CraneCollocation(kind, N, system, opty_end)
    z, T, status, wall, its = c.solve()
    return dict(transcription="backward Euler" if kind == "be" else "midpoint collocation",
                method="opty's end" if opty_end else "–", intervals=N, unknowns=c.n, T=T,
                kkt=float("nan"), own_miss=float("nan"), miss=c.replay(z, FINE), solve_s=wall,
                iterations=its,
                status="Solve_Succeeded" if status == 0 else f"IPOPT status {status}")


def min_time_runs(system, cases, problem_kw, fine):
    """A minimum-time problem solved on each (method, N) of ``cases``, each warm-started from
    the previous one of its method: T, the first-order residual, the misses, the solve time."""
    out, prev = [], {}
    for method, N in cases:
        pb = sp.control.Problem(system, intervals=N, method=method, **problem_kw)
        t0 = time.perf_counter()
        sol = pb.solve("ipopt", tol=1e-10, guess=prev.get(method), max_iter=1000)
        wall = time.perf_counter() - t0
        if sol.success:
            prev[method] = sol
        fine_tr = sol.replay(method="lobatto5", n_steps=fine)
        out.append(dict(transcription="symplectic.control", method=method, intervals=N,
                        unknowns=pb.n_variables, T=sol.duration, kkt=sol.kkt_residual,
                        own_miss=sol.own_scheme_miss(), miss=sol.miss(fine_tr), solve_s=wall,
                        iterations=sol.iterations, status=sol.message))
    return out


def min_time_csv(rows, title, runs, T_ref=float("nan")):
    for r in runs:
        rows.append(dict(problem=title, J=r["T"], J_diff=r["T"] - T_ref,
                         **{k: r[k] for k in ("transcription", "method", "intervals", "unknowns",
                                              "miss", "own_miss", "solve_s", "iterations",
                                              "status")}))


def min_time_text(cfg, rows, title, intro, make, cases, problem_kw, fine):
    """Ours on each (method, N) of ``cases``: the table of min_time_runs."""
    try:
        system = make()
    except Exception as exc:                       # SymPy or a compiler missing
        return f"{title} needs SymPy and a C compiler ({exc}): skipped.\n"
    runs = min_time_runs(system, cases, problem_kw, fine)
    min_time_csv(rows, title, runs)
    body = [[r["method"], r["intervals"], r["unknowns"], f"{r['T']:.7f}", fmt_e(r["kkt"]),
             fmt_e(r["own_miss"]), fmt_e(r["miss"]), f"{r['solve_s']:.2f}", r["iterations"],
             r["status"][:40]] for r in runs]
    return "\n".join([f"### {title}\n", intro,
                      md_table(["method", "intervals", "unknowns", "T (s)", "KKT residual",
                                "own step miss", "replayed miss", "solve (s)",
                                "IPOPT iterations", "status"], body), ""])


def crane_ratios(runs, base, ref):
    """The baselines' |T - T_ref|, replayed miss and solve time over Simpson's at 80 intervals
    (or its finest run when 80 is not among them)."""
    simpson = [r for r in runs if r["method"] == "simpson"]
    if not simpson:
        return ""
    s = next((r for r in simpson if r["intervals"] == 80), simpson[-1])
    chain = sum(r["solve_s"] for r in simpson if r["intervals"] <= s["intervals"])
    dT = abs(s["T"] - ref["T"])
    lines = [f"Against Simpson on {s['intervals']} intervals (|T − T_ref| {fmt_e(dT)}, replayed "
             f"miss {fmt_e(s['miss'])}, solve {s['solve_s']:.2f} s; warm-started, its chain of "
             f"Simpson solves up to {s['intervals']} intervals {chain:.2f} s): the ratios "
             "|T − T_ref|, replayed miss, solve time (and solve time over the chain's):\n"]
    ratio = lambda a, b: fmt_x(a / b) if b > 0 else "–"
    for b in base:
        name = b["transcription"] + (", opty's end" if b["method"] != "–" else "")
        lines.append(f"- {name}, {b['intervals']} intervals: "
                     f"{ratio(abs(b['T'] - ref['T']), dT)}, {ratio(b['miss'], s['miss'])}, "
                     f"{ratio(b['solve_s'], s['solve_s'])} ({ratio(b['solve_s'], chain)})")
    return "\n".join(lines) + "\n"


def crane_text(cfg, rows):
    """Minimum time, |F| <= 20, x: 0 -> 15 rest to rest, 0 <= x <= 15: ours against backward
    Euler and the midpoint rule, and beside opty's published 150-node backward-Euler duration."""
    title = "The cart-pole crane, minimum time"
    kw = dict(CRANE_PROBLEM, cost=sp.control.duration())
    try:
        system = crane()
    except Exception as exc:                       # SymPy or a compiler missing
        return f"{title} needs SymPy and a C compiler ({exc}): skipped.\n"
    runs = min_time_runs(system, cfg["control_crane"], kw, FINE)
    finest = [[r for r in runs if r["method"] == m][-1] for m in dict.fromkeys(
        r["method"] for r in runs)]
    ref = min(finest, key=lambda r: r["kkt"])      # the finest run of a method, best converged
    say("  the crane: backward Euler and the midpoint rule")
    base = [crane_baseline(kind, N, system) for kind in ("be", "mid")
            for N in cfg["control_crane_baseline_N"]]
    base.append(crane_baseline("be", OPTY_CRANE_INTERVALS, system, opty_end=True))
    min_time_csv(rows, title, runs + base, ref["T"])
    body = [[r["transcription"], r["method"], r["intervals"], r["unknowns"], f"{r['T']:.7f}",
             fmt_e(abs(r["T"] - ref["T"])), fmt_e(r["kkt"]), fmt_e(r["own_miss"]),
             fmt_e(r["miss"]), f"{r['solve_s']:.2f}", r["iterations"], r["status"][:40]]
            for r in runs + base]
    opty = base[-1]
    intro = (
        "opty's example from its definition: cart 1 kg, a 10 kg load on a 5 m rod, |F| ≤ 20 N, "
        "x: 0 → 15 m rest to rest, 0 ≤ x ≤ 15 at every node, T free in [1, 20] s. Ours: "
        "`sp.System.from_sympy`, `free_duration=(1, 20)`, `cost=control.duration()`, IPOPT "
        "(tol 1e-10, the exact Hessian: `hessian=\"auto\"`), each N warm-started from the previous one of "
        "its method (the first from the default guess, T = 6 s). The baselines, written in "
        "`benchmarks/suite/control.py` from their definitions on N intervals with the state "
        "(x, θ, ẋ, θ̇) and F at the N + 1 nodes and h = T/N an unknown (cost N h): backward "
        "Euler, s_{k+1} − s_k = h f(s_{k+1}, F_{k+1}), and the midpoint rule, s_{k+1} − s_k = "
        "h f((s_k + s_{k+1})/2, (F_k + F_{k+1})/2), with f from M(θ) [ẍ, θ̈] = [F + 50 sin θ θ̇², "
        "−490.5 sin θ], M = [[11, 50 cos θ], [50 cos θ, 250]] and its exact sparse Jacobian "
        "(SymPy); solved by the same IPOPT (ipyopt, tol = constr_viol_tol = 1e-10) with "
        "`hessian_approximation = \"limited-memory\"`, as opty runs IPOPT, from x linear from 0 "
        "to 15 over T = 6 s, θ = ẋ = θ̇ = 0, F = 0; one run each. opty's stored optimum "
        "(150 nodes, 149 backward-Euler intervals): T = 5.894364 s. opty's example also asks "
        "zero acceleration at the end, which its backward differences make ẋ = θ̇ = 0 at the "
        f"last two nodes: backward Euler with that on {OPTY_CRANE_INTERVALS} intervals (\"opty's "
        f"end\") gives T = {opty['T']:.6f} s (the last row); every other row solves the problem "
        "above, at rest at the end only. Columns: T; |T − T_ref| against ours with "
        f"{ref['method']} on {ref['intervals']} intervals (of the finest run of each method, "
        "the one with the smaller KKT residual" + "".join(
            f"; {r['method']} on {r['intervals']} differs from it by "
            f"{fmt_e(abs(r['T'] - ref['T']))}" for r in finest if r is not ref)
        + "); the first-order conditions' residual (ours); the end's miss "
        "max(|x(T) − 15|, |θ(T)|, |ẋ(T)|, |θ̇(T)|) replayed at the transcription's own step "
        f"(ours) and by lobatto5 on {FINE} steps (ours through `u_at`, whose interpolant cannot "
        "follow the bang-bang input's switches inside steps; backward Euler's F_{k+1} held over "
        "interval k; the midpoint rule's F linear between nodes); the solve time.\n")
    return "\n".join([f"### {title}\n", intro,
                      md_table(["transcription", "method", "intervals", "unknowns", "T (s)",
                                "|T − T_ref|", "KKT residual", "own step miss", "replayed miss",
                                "solve (s)", "IPOPT iterations", "status"], body), "",
                      crane_ratios(runs, base, ref)])


def cart_pendulum_text(cfg, rows):
    """opty's double pendulum on a cart: rest hanging to rest upright, minimum time."""
    kw = dict(CART_PROBLEM, cost=sp.control.duration())
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


def _min_time_problem(name, method, N, system):
    """The crane's or the cart double pendulum's minimum-time problem (the tables' own)."""
    kw = CRANE_PROBLEM if name == "crane" else CART_PROBLEM
    return sp.control.Problem(system, intervals=N, method=method, cost=sp.control.duration(),
                              **kw)


def hessian_text(cfg, rows):
    """The exact Hessian (symplectic/control/_curvature.py) against the one by differences:
    the cost of one evaluation at the optimum, their agreement, and whole solves with each."""
    try:
        systems = {"crane": crane(), "cart": cart_double_pendulum()}
    except Exception as exc:                       # SymPy or a compiler missing
        return f"The Hessian comparison needs SymPy and a C compiler ({exc}): skipped.\n"
    body = []
    for name, method, N in cfg["control_hessian"]:
        say(f"  the Hessian: {name}, {method} on {N}")
        pb = _min_time_problem(name, method, N, systems[name])
        sol = pb.solve("ipopt", tol=1e-10, max_iter=1000)
        z = pb.guess(sol)                          # the solution's variables
        nu = np.random.default_rng(0).standard_normal(len(pb.constraint_bounds()[0]))
        times = {"exact": [], "differences": []}
        values = {}
        for _ in range(cfg["control_hessian_reps"]):      # interleaved, a pair at a time
            for mode in times:
                pb.use_hessian(mode)
                t0 = time.perf_counter()
                values[mode] = pb.hess_values(z, 1.0, nu)
                times[mode].append(time.perf_counter() - t0)
        agree = np.abs(values["exact"] - values["differences"]).max() / np.abs(
            values["exact"]).max()
        solves = {"exact": [], "differences": []}
        for _ in range(cfg["control_hessian_solves"]):
            for mode in solves:
                pb2 = _min_time_problem(name, method, N, systems[name])
                t0 = time.perf_counter()
                s = pb2.solve("ipopt", tol=1e-10, max_iter=1000, hessian=mode)
                solves[mode].append((time.perf_counter() - t0, s))
        (te, se), (td, sd) = (min(solves[m], key=lambda x: x[0]) for m in ("exact", "differences"))
        me, md = (float(np.median(times[m])) for m in ("exact", "differences"))
        body.append([name, method, N, pb.n_variables, f"{1e3 * me:.2f}", f"{1e3 * md:.2f}",
                     f"{md / me:.2f}", fmt_e(agree), f"{te:.2f} ({se.iterations})",
                     f"{td:.2f} ({sd.iterations})", fmt_e(abs(se.duration - sd.duration)),
                     f"{fmt_e(se.kkt_residual)} / {fmt_e(sd.kkt_residual)}"])
    intro = (
        "The Hessian of the Lagrangian of the two minimum-time problems above: exact (the "
        "second-order adjoint of the Galerkin step with SymPy's third derivatives of L, "
        "`hessian=\"exact\"`, what `\"auto\"` takes for these SymPy systems) against central "
        "differences of the exact gradients (`hessian=\"differences\"`, every interval's "
        "perturbed steps in one call of the C core). One evaluation of `Problem.hess_values` at "
        "the optimum of a cold IPOPT solve (multipliers random), median of "
        f"{cfg['control_hessian_reps']} interleaved pairs; their largest difference relative "
        "to the largest entry; then the whole IPOPT solve (tol 1e-10, from the default guess, "
        "the polish included) with each, the best of "
        f"{cfg['control_hessian_solves']} interleaved rounds, with its iterations, the "
        "difference of the two optimal durations and the KKT residuals.\n")
    return "\n".join(["### The Hessian: exact against differences\n", intro, md_table(
        ["problem", "method", "intervals", "unknowns", "exact (ms)", "differences (ms)",
         "differences / exact", "max difference", "solve, exact (s, iterations)",
         "solve, differences (s, iterations)", "|ΔT|", "KKT residual exact / differences"],
        body), ""])


def run_section(cfg, ctx):
    try:
        import ipyopt  # noqa: F401
    except ImportError as exc:
        return f"This section needs ipyopt (pip install 'symplectic-vi[control]'): {exc}. Skipped.\n"
    rows, text = [], []
    for i, (label, dur, umax) in enumerate(PROBLEMS):
        table, best = problem_text(cfg, label, dur, umax, rows)
        text.append(table)
        if i == 0:
            say(f"  {label}: every transcription from one optimum")
            text.append(same_optimum_text(cfg, rows, best))
    say("  the crane, minimum time")
    text.append(crane_text(cfg, rows))
    say("  the double pendulum on a cart, minimum time")
    text.append(cart_pendulum_text(cfg, rows))
    text.append(hessian_text(cfg, rows))
    write_csv(os.path.join(ctx["out"], "control.csv"), rows, CSV_COLUMNS)
    return "\n".join(text) + "\n"


def best_of_rounds(cfg, label, cases, run):
    """{case: run(case)} of the fastest of ``control_rounds`` interleaved rounds (every case
    once a round)."""
    best = {}
    for r in range(cfg["control_rounds"]):
        say(f"  {label}: round {r + 1} of {cfg['control_rounds']}")
        for case in cases:
            out = run(case)
            if case not in best or out["solve_s"] < best[case]["solve_s"]:
                best[case] = out
    return best


def swing_cases(cfg, ours_cases):
    return ([("symplectic.control", m, N) for m, N in ours_cases]
            + [("backward Euler", "–", N) for N in cfg["control_baseline_N"]]
            + [("midpoint collocation", "–", N) for N in cfg["control_baseline_N"]])


def swing_table(label, cases, best, ref, rows, anchor=None):
    """The rows of ``cases``; with an ``anchor`` result, also each one's distance from the
    anchor's trajectory, max_k |theta_k - theta_a(t_k)| over the case's nodes (theta_a linear
    between the anchor's nodes)."""
    body = []
    for kind, m, N in cases:
        b = best[(kind, m, N)]
        rows.append(dict(problem=label, transcription=kind, method=m, intervals=N,
                         J_diff=b["J"] - ref, **b))
        dist = [] if anchor is None else [fmt_e(np.max(np.abs(
            b["theta"] - np.interp(b["t"], anchor["t"], anchor["theta"]))))]
        body.append([kind, m, N, b["unknowns"], f"{b['J']:.8f}", fmt_e(abs(b["J"] - ref)),
                     *dist, fmt_e(b["miss"]), fmt_e(b["own_miss"]), f"{b['solve_s']:.2f}",
                     b["iterations"], b["status"]])
    return md_table(["transcription", "method", "intervals", "unknowns", "J", "|J − J_ref|"]
                    + ([] if anchor is None else ["max |θ − θ_a|"])
                    + ["replayed miss", "own step miss", "solve (s)", "IPOPT iterations",
                       "status"], body)


def miss_ratio(best):
    """Replayed miss, backward Euler on 500 intervals over Simpson on 50 (or None)."""
    a, b = ("backward Euler", "–", 500), ("symplectic.control", "simpson", 50)
    if a in best and b in best:
        return (f"Replayed miss, backward Euler on 500 intervals / Simpson on 50: "
                f"{best[a]['miss'] / best[b]['miss']:.3g}.\n")
    return ""


def problem_text(cfg, label, dur, umax, rows):
    """The swing-up, every transcription from its default guess; returns the text and
    {case: the fastest round's result} (with ours' Solution)."""
    cases = swing_cases(cfg, cfg["control_ours"])
    best = best_of_rounds(cfg, label, cases, lambda case: (
        ours(case[1], case[2], dur, umax) if case[0] == "symplectic.control" else
        baseline("be" if case[0] == "backward Euler" else "mid", case[2], dur, umax)))
    ref = best[("symplectic.control", *cfg["control_reference"])]["J"]
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
         "where they are the same optimum (the next table starts them all from one). Replayed "
         "open loop, the upright end amplifies any difference: ours at its own step, a residual "
         "of 1e-14, misses by the \"own step\" column.\n"
         if umax is not None else
         "No bound is active and the optimum is the tests' (`tests/validation/test_control.py`): "
         "J and the replayed miss fall at the scheme's order.\n"),
        swing_table(label, cases, best, ref, rows),
        "",
        miss_ratio(best),
    ]
    return "\n".join(out), best


def node_guess(src, N, dur):
    """Ours' guess on N intervals: q and p of the Solution ``src`` interpolated (linearly) at
    the N + 1 nodes, no input."""
    t = np.linspace(0.0, dur, N + 1)
    return {"q": np.interp(t, src.t, src.q[:, 0])[:, None],
            "p": np.interp(t, src.t, src.p[:, 0])[:, None]}


def collocation_guess(src, N, dur):
    """A baseline's x0 on N intervals: theta and omega of ``src`` interpolated at the nodes,
    T = src.u_at there."""
    t = np.linspace(0.0, dur, N + 1)
    return np.concatenate([np.interp(t, src.t, src.q[:, 0]), np.interp(t, src.t, src.qdot[:, 0]),
                           src.u_at(t)[:, 0]])


def same_optimum_text(cfg, rows, first):
    """The 10 s swing-up with every transcription started from one optimum: ours with the
    ``control_same_anchor`` scheme solved from the nodes of ours with ``control_same_seed``
    (taken from the first table, ``first``, or solved here), then every case from it."""
    label, dur, umax = PROBLEMS[0]
    seed_key = ("symplectic.control", *cfg["control_same_seed"])
    seed = (first[seed_key] if seed_key in first else ours(*seed_key[1:], dur, umax))["sol"]
    am, aN = cfg["control_same_anchor"]
    anchor = ours(am, aN, dur, umax, guess=node_guess(seed, aN, dur))
    Ja = anchor["J"]
    cases = swing_cases(cfg, cfg["control_same_ours"])
    best = best_of_rounds(cfg, f"{label}, from one optimum", cases, lambda case: (
        ours(case[1], case[2], dur, umax, guess=node_guess(anchor["sol"], case[2], dur))
        if case[0] == "symplectic.control" else
        baseline("be" if case[0] == "backward Euler" else "mid", case[2], dur, umax,
                 x0=collocation_guess(anchor["sol"], case[2], dur))))
    def name(case):
        return f"{case[0] if case[1] == '–' else case[1]} {case[2]}"

    def dist(b):                       # from the anchor's trajectory, at b's nodes
        return np.max(np.abs(b["theta"] - np.interp(b["t"], anchor["t"], anchor["theta"])))
    back = [name(c) for c in cases if c in first and abs(best[c]["J"] - first[c]["J"]) <= 1e-6]
    text = (
        f"The {dur:g} s problem, every transcription started from one optimum (the anchor): "
        f"ours with {am} on {aN} intervals from q and p of ours with {seed_key[1]} on "
        f"{seed_key[2]} (the table above, J = {seed.cost:.6f}) at its nodes lands at J = "
        f"{Ja:.8f} ({anchor['iterations']} iterations, {anchor['solve_s']:.1f} s, "
        f"{anchor['status']}). Each case below starts from the anchor: ours from its q and p "
        "interpolated at the case's nodes (no input), the baselines from θ and ω interpolated "
        "at their nodes and T = `u_at` there. Columns as above, |J − J_ref| against the "
        "anchor's J, and max |θ − θ_a|, the largest distance of the case's θ at its nodes from "
        "the anchor's (linear between the anchor's nodes): which optimum the case lands in; "
        f"solve time: the best of {cfg['control_rounds']} interleaved rounds. "
        + (f"Landing at the J of their own cold start in the table above (to 1e-6): "
           f"{', '.join(back)}. " if back else "")
        + "The table above's runs, max |θ − θ_a| from the anchor: "
        + ", ".join(f"{name(c)} {fmt_e(dist(b))}" for c, b in first.items()) + ".\n")
    return "\n".join([f"### The pendulum swing-up, {dur:g} s, |T| ≤ {umax:g}, from one "
                      "optimum\n", text,
                      swing_table(f"{label}, from one optimum", cases, best, Ja, rows,
                                  anchor), "",
                      miss_ratio(best)])
