"""Issue 47's control problems: CasADi's direct collocation against symplectic.control, side
by side in one run, with IPOPT's iteration counts.

    python benchmarks/suite/control_casadi.py [--md FILE] [--quick]

prints the tables (and writes them, with the machine, to FILE; about 5 minutes on 2 cores,
--quick about 1); skipped with a message when casadi, ipyopt or SymPy does not import.
Importable: ``compare`` (one problem, every case), ``casadi_run``, ``ours_run``, ``anatomy``
and ``unknowns_study`` return rows as dicts; ``min_time_iterations`` runs ours alone on one
minimum-time problem (a few seconds), for measuring changes to that transcription.

The problems, each from its definition (``PROBLEMS``: the keywords of ``sp.control.Problem``,
which the collocation reads too):

1. the cart-pole swing-up of Kelly's direct-collocation tutorial: cart 1 kg, a 0.3 kg point
   mass on a massless 0.5 m rod, g = 9.81, theta = 0 hanging down; from rest at x = 0,
   theta = 0 to rest at x = 1 m, theta = pi in T = 2 s; |u| <= 20 N on the cart, |x| <= 2 m;
   minimise int u^2 dt;
2. the same system, ends and bounds in minimum time: cost T + 1e-3 int u^2 dt (duration() + effort(2e-3)), T free in
   [0.5, 5] s;
3. the crane of section 24 (``control.CRANE_PROBLEM``, ``control.crane()``): cart 1 kg, 10 kg
   load on a 5 m rod, |F| <= 20 N, x: 0 -> 15 m rest to rest, 0 <= x <= 15, T free in
   [1, 20] s, cost T.

CasADi's side (``CasadiCollocation``): the state s = (x, theta, x', theta') a polynomial of
degree d on each of N equal intervals of the normalised time [0, 1] (h = T/N, T an unknown
when it is free), the unknowns the node states, the states at the d collocation points of
each interval (Radau IIA points, the last one the interval's end, or Gauss-Legendre points)
and the input at each collocation point; the collocation equations sum_r C_rj s_kr =
h f(s_kj, u_kj), the continuity s_{k+1} = sum_r D_r s_kr, the end states as equal bounds,
int u^2 dt by the collocation points' own quadrature (Radau's or Gauss's weights). The bound
on x holds at every node and collocation point. f: the Lagrangian's equations of motion in
closed form (``rhs``, checked against SymPy's Euler-Lagrange equations, ``check_dynamics``).
IPOPT (CasADi's own build) with tol = constr_viol_tol = 1e-10, the exact Hessian (CasADi's AD
on SX), max_iter 3000. Ours: ``sp.control.Problem(...).solve("ipopt", tol=1e-10,
max_iter=3000)`` with its default (exact) Hessian, with the Newton polish (its default) and
without (``polish=False``). Both start from the states linear between the ends over the
guessed T, at rest, the inputs zero (cart-pole: T = 2 s; crane: T = 6 s) -- ours' default
guess. Solve times: wall (and CPU), the best of ``ROUNDS`` interleaved rounds, the building
of the NLP (CasADi's expression graph and nlpsol; our Problem) outside the timed call.

Then, not timed: IPOPT's logs of each case (``anatomy``: restoration, the first barrier
problem, short steps), CasADi's NLPs solved by ipyopt's IPOPT too (the one ours uses: is the
IPOPT build a factor?), and CasADi's collocation with ours' choice of unknowns
(``unknowns_study``: the momentum p = M q' for q', the step h = T/N for T).
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")                 # one thread: as the suite times everything

import numpy as np  # noqa: E402

if __package__ in (None, ""):                   # `python benchmarks/suite/control_casadi.py`
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    __package__ = "suite"                       # noqa: A001

import symplectic as sp  # noqa: E402

from .common import LoadMeter, fmt_e, md_table  # noqa: E402
from .control import CRANE_PROBLEM, crane  # noqa: E402

G = 9.81
ROUNDS = 2
MAX_ITER = 3000
TOL = 1e-10
#: CasADi's transcriptions: (label, collocation points, degree)
SCHEMES = (("Radau 3", "radau", 3), ("Radau 5", "radau", 5), ("Legendre 3", "legendre", 3))
#: ours: the schemes, each with the polish (its default) and without
METHODS = ("simpson", "lobatto5")

#: Kelly's cart-pole: cart mass, pole mass, rod length (the crane: control.crane()'s numbers)
CARTPOLE = dict(mc=1.0, mp=0.3, l=0.5)
CRANE = dict(mc=1.0, mp=10.0, l=5.0)
CARTPOLE_D = 1.0                                # the cart's travel (m)
_CARTPOLE_KW = dict(inputs=[1.0, 0.0], start={"q": [0.0, 0.0], "qdot": [0.0, 0.0]},
                    end={"q": [CARTPOLE_D, np.pi], "qdot": [0.0, 0.0]}, input_bounds=(-20, 20),
                    state_bounds=([-2.0, -np.inf], [2.0, np.inf]))

#: name: the system's parameters, sp.control.Problem's keywords (duration: fixed, or the
#: guess of a free one), the cost's weights (T and int u^2 dt), the interval counts
PROBLEMS = {
    "cartpole": dict(
        title="Cart-pole swing-up, T = 2 s, min ∫u² dt", params=CARTPOLE,
        kw=dict(_CARTPOLE_KW, duration=2.0), time=0.0, effort=1.0, N=(20, 40, 80, 160)),
    "cartpole_min_time": dict(
        title="Cart-pole swing-up in minimum time, min T + 1e-3 ∫u² dt (duration() + "
              "effort(2e-3)), T in [0.5, 5] s",
        params=CARTPOLE, kw=dict(_CARTPOLE_KW, duration=2.0, free_duration=(0.5, 5.0)),
        time=1.0, effort=1e-3, N=(20, 40, 80)),
    "crane": dict(
        title="The crane in minimum time (section 24's CRANE_PROBLEM), min T", params=CRANE,
        kw=dict(CRANE_PROBLEM), time=1.0, effort=0.0, N=(20, 40, 80, 160)),
}
QUICK_N = {"cartpole": (20, 40), "cartpole_min_time": (20,), "crane": (20, 40)}


# ------------------------------------------------------------------ the system, both sides
def lagrangian(mc, mp, l):
    """(L, q, qdot) in SymPy: a cart of mass mc at x, a point mass mp on a massless rod of
    length l at the angle theta from the downward vertical: L = 1/2 (mc + mp) x'^2
    + mp l x' theta' cos(theta) + 1/2 mp l^2 theta'^2 + mp g l cos(theta)."""
    import sympy as sy
    mc, mp, l, g = (sy.nsimplify(v) for v in (mc, mp, l, G))
    x, th, xd, thd = sy.symbols("x theta xd thd")
    L = ((mc + mp) * xd ** 2 / 2 + mp * l * xd * thd * sy.cos(th) + mp * l ** 2 * thd ** 2 / 2
         + mp * g * l * sy.cos(th))
    return L, [x, th], [xd, thd]


def cart_pole_system(mc, mp, l):
    """The cart-pendulum as a symplectic System from its Lagrangian (``lagrangian``)."""
    return sp.System.from_sympy(*lagrangian(mc, mp, l))


_SYSTEMS = {}


def system(name):
    """Our System of problem ``name`` (built once): the crane is section 24's ``crane()``."""
    if name not in _SYSTEMS:
        _SYSTEMS[name] = crane() if name == "crane" else cart_pole_system(**CARTPOLE)
    return _SYSTEMS[name]


def rhs(s, u, mc, mp, l, lib=np):
    """s' = f(s, u), s = (x, theta, x', theta'), u the force on the cart: M (x'', theta'') =
    (u + mp l sin(theta) theta'^2, -mp g l sin(theta)), M = [[mc + mp, mp l cos(theta)],
    [mp l cos(theta), mp l^2]], solved in closed form.  ``lib``: numpy or casadi."""
    c, sn = lib.cos(s[1]), lib.sin(s[1])
    a, b, d = mc + mp, mp * l * c, mp * l ** 2
    r1 = u + mp * l * sn * s[3] ** 2
    r2 = -mp * G * l * sn
    det = a * d - b * b
    return [s[2], s[3], (d * r1 - b * r2) / det, (a * r2 - b * r1) / det]


def rhs_momentum(s, u, mc, mp, l, lib=np):
    """The same in (q, p), s = (x, theta, p_x, p_theta), p = M q' (ours' state variables):
    q' = M^-1 p, p_x' = u, p_theta' = dL/dtheta = -mp l x' theta' sin(theta) - mp g l
    sin(theta).  Only where the ends are at rest (p = 0 there as q' = 0)."""
    c, sn = lib.cos(s[1]), lib.sin(s[1])
    a, b, d = mc + mp, mp * l * c, mp * l ** 2
    det = a * d - b * b
    xd, thd = (d * s[2] - b * s[3]) / det, (a * s[3] - b * s[2]) / det
    return [xd, thd, u, -mp * l * xd * thd * sn - mp * G * l * sn]


def check_dynamics(params, trials=20, seed=0):
    """The largest difference between ``rhs``'s accelerations and SymPy's Euler-Lagrange
    equations of ``lagrangian`` (M q'' = dL/dq - d^2L/dq'dq q' + (u, 0)) at random states."""
    import sympy as sy
    L, q, qd = lagrangian(**params)
    u = sy.Symbol("u")
    M = sy.hessian(L, qd)
    rest = sy.Matrix([sy.diff(L, qi) for qi in q]) - sy.Matrix(
        [[sy.diff(L, a, b) for b in q] for a in qd]) * sy.Matrix(qd) + sy.Matrix([u, 0])
    acc = sy.lambdify(q + qd + [u], list(M.LUsolve(rest)), "numpy")
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        s, v = rng.uniform(-3, 3, 4), rng.uniform(-20, 20)
        worst = max(worst, float(np.max(np.abs(np.array(acc(*s, v), dtype=float)
                                               - np.array(rhs(s, v, **params)[2:])))))
    return worst


# ------------------------------------------------------------------ CasADi's collocation
def lagrange_coefficients(tau):
    """For the points tau_0 .. tau_d of [0, 1] and their Lagrange polynomials l_r: C[r, j] =
    l_r'(tau_j), D[r] = l_r(1), W[r] = int_0^1 l_r."""
    P = np.polynomial.polynomial
    tau = np.asarray(tau, dtype=float)
    n = len(tau)
    C, D, W = np.zeros((n, n)), np.zeros(n), np.zeros(n)
    for r in range(n):
        others = np.delete(tau, r)
        coef = P.polyfromroots(others) / np.prod(tau[r] - others)
        C[r] = P.polyval(tau, P.polyder(coef))
        D[r] = P.polyval(1.0, coef)
        W[r] = P.polyval(1.0, P.polyint(coef))
    return C, D, W


class CasadiCollocation:
    """Problem ``name`` by direct collocation on N intervals (``points``: "radau" or
    "legendre", ``degree`` d); the NLP built once (``solve`` may run it again)."""

    def __init__(self, name, N, points, degree, print_level=0, step_variable=False,
                 momentum=False):
        import casadi as ca
        self.ca = ca
        spec = PROBLEMS[name]
        kw, par = spec["kw"], spec["params"]
        self.name, self.N, self.points, self.degree = name, N, points, degree
        t0 = time.perf_counter()
        tau = [0.0] + list(ca.collocation_points(degree, points))
        C, D, _ = lagrange_coefficients(tau)
        W = lagrange_coefficients(tau[1:])[2]    # the d points' own quadrature (u lives there)
        free = kw.get("free_duration")
        xlo, xhi = (np.asarray(b, dtype=float)[0] for b in kw.get(
            "state_bounds", ([-np.inf] * 2, [np.inf] * 2)))
        ulo, uhi = kw["input_bounds"]
        s0 = np.concatenate([kw["start"]["q"], kw["start"]["qdot"]]).astype(float)
        s1 = np.concatenate([kw["end"]["q"], kw["end"]["qdot"]]).astype(float)
        sym_s, sym_u = ca.SX.sym("s", 4), ca.SX.sym("u")
        right = rhs_momentum if momentum else rhs       # (q, p) as ours, or (q, q')
        f = ca.Function("f", [sym_s, sym_u], [ca.vertcat(*right(sym_s, sym_u, lib=ca, **par))])
        # the free duration's unknown: T, or (``step_variable``, as ours) the step h = T/N
        v = ca.SX.sym("h" if step_variable else "T") if free else None
        T = kw["duration"] if not free else N * v if step_variable else v
        h = T / N
        z, lo, hi, z0, g, J = [], [], [], [], [], 0.0
        x_at = []                                    # where the cart's x sits in z

        def state(t_norm, pinned=None):
            v = ca.SX.sym("s", 4)
            x_at.append(sum(len(b) for b in lo))
            z.append(v)
            b_lo = np.array([xlo, -np.inf, -np.inf, -np.inf])
            b_hi = np.array([xhi, np.inf, np.inf, np.inf])
            if pinned is not None:
                b_lo = b_hi = pinned
            lo.append(b_lo); hi.append(b_hi)
            z0.append(s0 + t_norm * (s1 - s0))          # linear between the ends
            return v

        node = state(0.0, s0)
        for k in range(N):
            S, Us = [node], [None]
            for j in range(1, degree + 1):
                S.append(state((k + tau[j]) / N))
                Us.append(ca.SX.sym("u"))
                z.append(Us[j]); lo.append([ulo]); hi.append([uhi]); z0.append([0.0])
            for j in range(1, degree + 1):
                slope = sum(C[r, j] * S[r] for r in range(degree + 1))
                g.append(slope - h * f(S[j], Us[j]))
                J = J + spec["effort"] * h * W[j - 1] * Us[j] ** 2
            end = sum(D[r] * S[r] for r in range(degree + 1))
            node = state((k + 1) / N, s1 if k == N - 1 else None)
            g.append(end - node)
        if free:
            k = 1.0 / N if step_variable else 1.0
            z.append(v); lo.append([k * free[0]]); hi.append([k * free[1]])
            z0.append([k * kw["duration"]])
            J = J + spec["time"] * T
        self.z, self.g, self.J = ca.vertcat(*z), ca.vertcat(*g), J
        self.lbx, self.ubx = np.concatenate(lo), np.concatenate(hi)
        self.x0 = np.concatenate(z0)
        self.x_at = np.array(x_at)
        self.n = self.z.numel()
        self.free, self.step_variable = bool(free), step_variable
        opts = {"ipopt.tol": TOL, "ipopt.constr_viol_tol": TOL, "ipopt.max_iter": MAX_ITER,
                "ipopt.print_level": print_level, "ipopt.sb": "yes", "print_time": False}
        self.solver = ca.nlpsol("S", "ipopt", {"x": self.z, "f": self.J, "g": self.g}, opts)
        lam = ca.SX.sym("lam", self.g.numel())
        self.grad_l = ca.Function("grad_l", [self.z, lam], [
            ca.gradient(self.J, self.z) + ca.jtimes(self.g, self.z, lam, True)])
        self.build_s = time.perf_counter() - t0

    def solve(self):
        """One IPOPT run from the guess: a dict of the results."""
        t0, c0 = time.perf_counter(), time.process_time()
        out = self.solver(x0=self.x0, lbx=self.lbx, ubx=self.ubx, lbg=0.0, ubg=0.0)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        st = self.solver.stats()
        x = np.asarray(out["x"]).ravel()
        kkt, kkt_ipopt = self.residuals(x, out["lam_g"], out["lam_x"], out["g"])
        xs = float(np.min(x[self.x_at])), float(np.max(x[self.x_at]))
        return dict(iterations=int(st["iter_count"]), solve_s=wall, cpu_s=cpu, J=float(out["f"]),
                    T=(float(x[-1]) * (self.N if self.step_variable else 1) if self.free
                       else PROBLEMS[self.name]["kw"]["duration"]),
                    kkt=kkt, kkt_ipopt=kkt_ipopt, status=st["return_status"],
                    success=bool(st["success"]), x_min=xs[0], x_max=xs[1])

    def solve_ipyopt(self, print_level=0):
        """The same NLP (CasADi's exact derivatives: the gradient, the sparse Jacobian and the
        lower triangle of the Lagrangian's Hessian) solved by ipyopt's IPOPT, the one ours
        uses, with the same options: {"iterations", "J", "status"}.  Not timed (Python
        callbacks)."""
        import ipyopt
        ca = self.ca
        m = self.g.numel()
        lam, sigma = ca.SX.sym("lam", m), ca.SX.sym("sigma")
        jac = ca.jacobian(self.g, self.z)
        hess = ca.tril(ca.hessian(sigma * self.J + ca.dot(lam, self.g), self.z)[0])
        fj = ca.Function("fj", [self.z], [self.J, ca.gradient(self.J, self.z), self.g, jac])
        fh = ca.Function("fh", [self.z, sigma, lam], [hess])
        jr, jc = (np.array(v, dtype=np.int64) for v in jac.sparsity().get_triplet())
        hr, hc = (np.array(v, dtype=np.int64) for v in hess.sparsity().get_triplet())
        nz = lambda M: np.array(M.nonzeros())

        def grad(x, out):
            out[:] = np.asarray(fj(x)[1]).ravel()
            return True

        def cons(x, out):
            out[:] = np.asarray(fj(x)[2]).ravel()
            return True

        def jacv(x, out):
            out[:] = nz(fj(x)[3])
            return True

        def hessv(x, lagrange, obj_factor, out):
            out[:] = nz(fh(x, obj_factor, lagrange))
            return True
        big = 1e20
        lo = np.where(np.isfinite(self.lbx), self.lbx, -big)
        hi = np.where(np.isfinite(self.ubx), self.ubx, big)
        nlp = ipyopt.Problem(self.n, lo, hi, m, np.zeros(m), np.zeros(m), (jr, jc), (hr, hc),
                             lambda x: float(fj(x)[0]), grad, cons, jacv, hessv,
                             ipopt_options={"tol": TOL, "constr_viol_tol": TOL,
                                            "max_iter": MAX_ITER, "print_level": print_level,
                                            "sb": "yes"})
        _x, J, status = nlp.solve(self.x0.copy())
        return dict(iterations=int(nlp.stats.get("n_iter", 0)), J=float(J), status=int(status))

    def residuals(self, x, lam_g, lam_x, g):
        """The first-order residual at (x, lam_g) as ``Problem.kkt_residual`` defines it (r =
        grad f + J_g^T lam_g: |r_j| for a variable inside its bounds, max(0, -r_j) at its lower
        bound and max(0, r_j) at its upper one, within 1e-12 relative; none for the pinned end
        states; and |g|), and the same with IPOPT's bound multipliers, max |r + lam_x|."""
        r = np.asarray(self.grad_l(x, lam_g)).ravel()
        scale = 1e-12 * np.maximum(1.0, np.abs(x))
        at_lo, at_hi = x - self.lbx <= scale, self.ubx - x <= scale
        res = np.where(at_lo, np.maximum(0.0, -r), np.where(at_hi, np.maximum(0.0, r),
                                                              np.abs(r)))
        pinned = self.lbx == self.ubx
        res[pinned] = 0.0
        with_lam = np.abs(r + np.asarray(lam_x).ravel())
        with_lam[pinned] = 0.0
        viol = float(np.max(np.abs(np.asarray(g))))
        return max(float(res.max()), viol), max(float(with_lam.max()), viol)


def casadi_run(name, N, points="radau", degree=3, rounds=ROUNDS):
    """CasADi's collocation of problem ``name`` on N intervals: the best of ``rounds`` solves."""
    c = CasadiCollocation(name, N, points, degree)
    runs = [c.solve() for _ in range(rounds)]
    best = min(runs, key=lambda r: r["solve_s"])
    return dict(best, cpu_s=min(r["cpu_s"] for r in runs), unknowns=c.n, build_s=c.build_s)


def casadi_available():
    """Whether casadi imports (this module's CasADi side needs it)."""
    try:
        import casadi  # noqa: F401
    except ImportError:
        return False
    return True


def fewest_iterations(name, N):
    """(iterations, scheme) of the CasADi collocation of problem ``name`` on N intervals that
    takes the fewest IPOPT iterations (one solve of each scheme)."""
    runs = [(CasadiCollocation(name, N, points, degree).solve()["iterations"], label)
            for label, points, degree in SCHEMES]
    return min(runs)


# ------------------------------------------------------------------ ours
def our_problem(name, method, N):
    """sp.control.Problem of problem ``name`` on N intervals of ``method``."""
    spec = PROBLEMS[name]
    cost = None
    if spec["time"]:
        cost = spec["time"] * sp.control.duration()
    if spec["effort"]:           # effort(R) is int 1/2 u^T R u dt: R = 2 w for w int u^2 dt
        e = sp.control.effort(2.0 * spec["effort"])
        cost = e if cost is None else cost + e
    kw = dict(spec["kw"])
    return sp.control.Problem(system(name), kw.pop("duration"), N, method=method, cost=cost,
                              **kw)


def _our_row(pb, sol, cpu):
    return dict(iterations=sol.iterations, solve_s=sol.solve_time, cpu_s=cpu, J=sol.cost,
                T=sol.duration,
                kkt=sol.kkt_residual, status=sol.message, success=sol.success,
                unknowns=pb.n_variables, x_min=float(np.min(sol.q[:, 0])),
                x_max=float(np.max(sol.q[:, 0])), kkt_ipopt=float("nan"))


def ours_run(name, N, method="simpson", polish=None, rounds=ROUNDS, pb=None):
    """Ours on problem ``name``: the best of ``rounds`` solves (``polish``: None, the default;
    False: IPOPT alone)."""
    pb = our_problem(name, method, N) if pb is None else pb
    runs = []
    for _ in range(rounds):
        c0 = time.process_time()
        sol = pb.solve("ipopt", tol=TOL, max_iter=MAX_ITER, polish=polish)
        runs.append(_our_row(pb, sol, time.process_time() - c0))
    return dict(min(runs, key=lambda r: r["solve_s"]), cpu_s=min(r["cpu_s"] for r in runs))


def min_time_iterations(problem="cartpole", N=40, method="simpson", polish=None):
    """Ours alone on one minimum-time problem ("cartpole": T + 1e-3 int u^2 dt, T in
    [0.5, 5] s; "crane": T, T in [1, 20] s) on N intervals, one IPOPT solve (tol 1e-10, the
    default guess): {"iterations", "kkt_residual", "T", "J", "time", "status", "success"}."""
    name = {"cartpole": "cartpole_min_time", "crane": "crane"}[problem]
    pb = our_problem(name, method, N)
    sol = pb.solve("ipopt", tol=TOL, max_iter=MAX_ITER, polish=polish)
    return dict(iterations=sol.iterations, kkt_residual=sol.kkt_residual, T=sol.duration,
                J=sol.cost, time=sol.solve_time, status=sol.message, success=sol.success)


def fresh_iterations(name, method, N):
    """Ours' IPOPT run (no polish) of one case in a new Python process (the same interpreter,
    PYTHONPATH and so the same symplectic): {"iterations", "T", "success"}; a check that the
    in-run count does not depend on what the process did before."""
    import json
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
            "from suite import control_casadi as c; "
            "pb = c.our_problem(sys.argv[2], sys.argv[3], int(sys.argv[4])); "
            "s = pb.solve('ipopt', tol=c.TOL, max_iter=c.MAX_ITER, polish=False); "
            "print(json.dumps(dict(iterations=s.iterations, T=s.duration, "
            "success=bool(s.success))))")
    bench = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code, bench, name, method, str(N)],
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return dict(iterations=-1, T=float("nan"), success=False)


# ------------------------------------------------------------------ side by side
def _cases(name, N):
    """{(who, scheme, polish): a CasadiCollocation, or (our Problem, polish)}."""
    cases = {}
    for label, points, degree in SCHEMES:
        cases[("CasADi", label, "–")] = CasadiCollocation(name, N, points, degree)
    for m in METHODS:
        pb = our_problem(name, m, N)
        cases[("ours", m, "yes")] = (pb, None)
        cases[("ours", m, "no")] = (pb, False)
    return cases


def compare(name, Ns=None, rounds=ROUNDS, log=print):
    """Problem ``name`` on each N: CasADi's schemes and ours (each method with and without the
    polish), every case once a round, ``rounds`` interleaved rounds; rows (dicts) with the
    best time of each case."""
    rows = []
    for N in Ns or PROBLEMS[name]["N"]:
        cases = _cases(name, N)
        best = {}
        for r in range(rounds):
            log(f"  {name}, N = {N}: round {r + 1} of {rounds}")
            for key, case in cases.items():
                if key[0] == "CasADi":
                    out = dict(case.solve(), unknowns=case.n, build_s=case.build_s)
                else:
                    out = ours_run(name, N, key[1], case[1], rounds=1, pb=case[0])
                cpu = min(out["cpu_s"], best[key]["cpu_s"]) if key in best else out["cpu_s"]
                if key not in best or out["solve_s"] < best[key]["solve_s"]:
                    best[key] = out
                best[key]["cpu_s"] = cpu          # the least CPU time of the rounds
        fresh = {m: fresh_iterations(name, m, N) for m in METHODS}
        for (who, scheme, polish), out in best.items():
            rows.append(dict(problem=name, N=N, who=who, scheme=scheme, polish=polish,
                             fresh=fresh.get(scheme), **out))
    _ratios(rows)
    return rows


def _ratios(rows):
    """For each of ours: iterations / the fewest of CasADi's on the same problem and N, and
    time / CasADi's fastest there (among CasADi's successful runs)."""
    for r in rows:
        peers = [c for c in rows if c["who"] == "CasADi" and c["problem"] == r["problem"]
                 and c["N"] == r["N"] and c["success"]]
        if r["who"] == "ours" and peers:
            fewest = min(peers, key=lambda c: (c["iterations"], c["solve_s"]))
            fastest = min(peers, key=lambda c: c["solve_s"])
            r["iter_ratio"] = r["iterations"] / fewest["iterations"]
            r["iter_ref"] = fewest["scheme"]
            r["time_ratio"] = r["solve_s"] / fastest["solve_s"]
            r["time_ref"] = fastest["scheme"]
            r["cpu_ratio"] = r["cpu_s"] / min(c["cpu_s"] for c in peers)


def table(name, rows):
    """The Markdown table of one problem's rows."""
    free = "free_duration" in PROBLEMS[name]["kw"]
    body = []
    for r in rows:
        ratio = f"{r['iter_ratio']:.2f} ({r['iter_ref']})" if "iter_ratio" in r else ""
        tratio = f"{r['time_ratio']:.2f} ({r['time_ref']})" if "time_ratio" in r else ""
        its = str(r["iterations"])
        if r.get("fresh") and r["fresh"]["iterations"] != r["iterations"]:
            its += f" (alone: {r['fresh']['iterations']})"
        body.append([r["N"], r["who"], r["scheme"], r["polish"], r["unknowns"], its,
                     f"{r['J']:.8f}", f"{r['T']:.7f}" if free else "2 (fixed)",
                     fmt_e(r["kkt"]), fmt_e(r["kkt_ipopt"]), f"{r['solve_s']:.3f}",
                     f"{r['cpu_s']:.3f}", ratio,
                     tratio, f"[{r['x_min']:.3f}, {r['x_max']:.3f}]", r["status"][:40]])
    head = ["N", "who", "transcription", "polish", "unknowns", "IPOPT iterations", "J",
            "T (s)", "KKT residual", "KKT with IPOPT's bound multipliers", "solve (s)", "CPU (s)",
            "iterations / CasADi's fewest", "time / CasADi's fastest", "x range (m)", "status"]
    return md_table(head, body)


def summary(rows):
    """One line per problem and N: CasADi's fewest iterations and fastest time beside ours
    (each method with the polish: its iterations are the same without), and the ratios."""
    body = []
    keys = list(dict.fromkeys((r["problem"], r["N"]) for r in rows))
    for name, N in keys:
        here = [r for r in rows if r["problem"] == name and r["N"] == N]
        cas = [r for r in here if r["who"] == "CasADi" and r["success"]]
        if not cas:
            continue
        few = min(cas, key=lambda c: (c["iterations"], c["solve_s"]))
        fast = min(cas, key=lambda c: c["solve_s"])
        line = [name, N, f"{few['iterations']} ({few['scheme']})",
                f"{fast['solve_s']:.3f} ({fast['scheme']})"]
        for m in METHODS:
            yes = next(r for r in here if r["scheme"] == m and r["polish"] == "yes")
            no = next(r for r in here if r["scheme"] == m and r["polish"] == "no")
            its = str(yes["iterations"]) + ("" if yes["success"] else " (failed)")
            line += [its, f"{yes['iter_ratio']:.2f}", f"{no['time_ratio']:.2f} / "
                     f"{yes['time_ratio']:.2f}", f"{no['cpu_ratio']:.2f} / "
                     f"{yes['cpu_ratio']:.2f}"]
        body.append(line)
    head = ["problem", "N", "CasADi: fewest iterations", "CasADi: fastest (s)"]
    for m in METHODS:
        head += [f"{m}: iterations", f"{m}: iterations ratio",
                 f"{m}: time ratio, no polish / polish", f"{m}: CPU ratio, no polish / polish"]
    return md_table(head, body)


# ------------------------------------------------------------------ where the iterations go
def _captured(run):
    """What ``run`` prints to the C-level stdout (IPOPT's log), as text."""
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        sys.stdout.flush()
        saved = os.dup(1)
        try:
            os.dup2(tmp.fileno(), 1)
            run()
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def parse_log(text):
    """IPOPT's iteration lines (print_level 5): for iterations 1.. : (restoration?, lg(mu),
    alpha_pr, inf_pr, inf_du)."""
    out = []
    for line in text.splitlines():
        w = line.split()
        if len(w) < 10 or not w[0].rstrip("r").isdigit() or w[0] == "0":
            continue
        try:
            out.append((w[0].endswith("r"), float(w[4]), float(w[8].rstrip("fhHFkKnNRwst")),
                        float(w[2]), float(w[3])))
        except ValueError:
            continue
    return out


def anatomy_of(lines):
    """Counts over the iterations: in the restoration phase; before the barrier parameter
    first falls below its start (mu = 0.1: the cold start's globalisation); with a primal
    step alpha_pr < 0.1 (short steps); and after mu first falls (the local convergence)."""
    first = next((i for i, x in enumerate(lines) if not x[0] and x[1] < -1.0 - 1e-6),
                 len(lines))
    return dict(iterations=len(lines), restoration=sum(x[0] for x in lines),
                at_first_mu=first, short=sum(x[2] < 0.1 for x in lines),
                after=len(lines) - first)


def anatomy(name, N, log=print):
    """One extra IPOPT run of each case with IPOPT's log (not timed): anatomy_of each.  Ours
    without the polish (the polish does not change IPOPT's iterations)."""
    rows = []
    log(f"  {name}, N = {N}: IPOPT's logs")
    for label, points, degree in SCHEMES:
        c = CasadiCollocation(name, N, points, degree, print_level=5)
        rows.append(dict(problem=name, N=N, who="CasADi", scheme=label,
                         **anatomy_of(parse_log(_captured(c.solve)))))
        text = _captured(lambda: c.solve_ipyopt(print_level=5))
        rows.append(dict(problem=name, N=N, who="CasADi through ipyopt's IPOPT", scheme=label,
                         **anatomy_of(parse_log(text))))
    for m in METHODS:
        pb = our_problem(name, m, N)
        text = _captured(lambda: pb.solve("ipopt", tol=TOL, max_iter=MAX_ITER, polish=False,
                                          verbose=True))
        rows.append(dict(problem=name, N=N, who="ours", scheme=m,
                         **anatomy_of(parse_log(text))))
    return rows


def anatomy_table(rows):
    body = [[r["problem"], r["N"], r["who"], r["scheme"], r["iterations"], r["restoration"],
             r["at_first_mu"], r["short"], r["after"]] for r in rows]
    return md_table(["problem", "N", "who", "transcription", "iterations", "in restoration",
                     "at the first μ (0.1)", "α_pr < 0.1", "after μ first falls"], body)


# ------------------------------------------------------------------ the unknowns' choice
#: CasADi's collocation with ours' choices of unknowns: (label, h = T/N the unknown, p = M q')
VARIANTS = (("T, q'", False, False), ("h, q'", True, False), ("T, p", False, True),
            ("h, p", True, True))


def unknowns_study(name, Ns, log=print):
    """CasADi's three collocations of problem ``name`` with each of ``VARIANTS`` (the free
    duration's unknown T or h = T/N; the state's velocity part q' or the momentum p = M q'):
    IPOPT's iterations and the optimum (not timed)."""
    free = "free_duration" in PROBLEMS[name]["kw"]
    rows = []
    for N in Ns:
        log(f"  {name}, N = {N}: CasADi with ours' unknowns")
        for label, points, degree in SCHEMES:
            row = dict(problem=name, N=N, scheme=label)
            for vlabel, step, mom in VARIANTS:
                if step and not free:
                    continue
                r = CasadiCollocation(name, N, points, degree, step_variable=step,
                                      momentum=mom).solve()
                row[vlabel] = r
            rows.append(row)
    return rows


def unknowns_table(rows, ours):
    """Iterations (T or J) of each variant, beside ours' iterations on the same problem and N."""
    body = []
    for r in rows:
        obj = "T" if "h, q'" in r else "J"
        mine = [o for o in ours if o["problem"] == r["problem"] and o["N"] == r["N"]
                and o["polish"] == "no"]
        cells = []
        for vlabel, _, _ in VARIANTS:
            if vlabel in r:
                v = r[vlabel]
                fail = "" if v["success"] else f", {v['status']}"
                cells.append(f"{v['iterations']} ({obj} = {v[obj]:.7f}{fail})")
            else:
                cells.append("–")
        body.append([r["problem"], r["N"], r["scheme"], *cells,
                     ", ".join(f"{o['scheme']} {o['iterations']}" for o in mine)])
    return md_table(["problem", "N", "CasADi collocation"] + [
        f"unknowns {v}: iterations" for v, _, _ in VARIANTS] + ["ours: iterations"], body)


# ------------------------------------------------------------------ the cart-pole's optimum
def cartpole_optima(N=80, starts=40, seed=1):
    """The fixed-time cart-pole by CasADi's Legendre collocation (degree 3) on N intervals from
    the default guess and from ``starts`` random perturbations of it (normal, standard
    deviation 0.3, 1, 3 or 10 in turn on every free unknown, clipped to the bounds): the
    distinct local optima (J to 1e-6), each with how many starts found it and the cart's x
    range."""
    c = CasadiCollocation("cartpole", N, "legendre", 3)
    base, free = c.x0.copy(), c.lbx != c.ubx
    rng = np.random.default_rng(seed)
    found = {}
    for k in range(starts + 1):
        if k:
            scale = (0.3, 1.0, 3.0, 10.0)[k % 4]
            c.x0 = np.clip(base + scale * rng.standard_normal(base.size) * free, c.lbx, c.ubx)
        r = c.solve()
        if r["success"]:
            key = round(r["J"], 6)
            hit = found.setdefault(key, dict(J=r["J"], starts=0, x_min=r["x_min"],
                                             x_max=r["x_max"], default=False))
            hit["starts"] += 1
            hit["default"] |= k == 0
    c.x0 = base
    return sorted(found.values(), key=lambda h: h["J"])


def optima_text(optima, rows):
    fixed = [r for r in rows if r["problem"] == "cartpole"]
    if not fixed:
        return ""
    finest = max(r["N"] for r in fixed)
    at = {r["scheme"]: r["J"] for r in fixed if r["N"] == finest and r["polish"] != "no"}
    body = [[f"{o['J']:.6f}", f"{o['J'] / 2:.6f}", o["starts"], "yes" if o["default"] else "",
             f"[{o['x_min']:.3f}, {o['x_max']:.3f}]"] for o in optima]
    return ("## The cart-pole's optimum (d = 1 m)\n\n"
            f"At N = {finest} the transcriptions give J = ∫u² dt = "
            + ", ".join(f"{k} {v:.8f}" for k, v in at.items())
            + " (from the default guess). Local optima of CasADi's Legendre collocation "
            "(degree 3, N = 80) from the default guess and 40 seeded perturbations of it "
            "(`cartpole_optima`): J, J/2 (= ∫½u² dt), the number of starts that found it, "
            "whether the default guess did, the cart's x range.\n\n"
            + md_table(["J = ∫u² dt", "J/2", "starts", "default guess", "x range (m)"], body)
            + "\n")


# ------------------------------------------------------------------ the record
def ipopt_versions():
    """(CasADi's IPOPT, ipyopt's IPOPT): IPOPT's banner line, version and linear solver."""
    import casadi as ca
    import ipyopt

    def banner(run):
        try:
            text = _captured(run)
        except Exception as exc:          # a version line only: never the run's end
            return f"? ({exc})"
        line = next((s for s in text.splitlines() if "Ipopt version" in s), "?")
        return line.strip().replace("This is ", "").rstrip(".")
    x = ca.SX.sym("x")
    S = ca.nlpsol("S", "ipopt", {"x": x, "f": (x - 1) ** 2},
                  {"ipopt.print_level": 5, "print_time": False})

    def ours():
        def grad(z, out):
            out[:] = 2 * (z - 1)
            return True

        def hess(z, lam, obj_factor, out):
            out[0] = 2 * obj_factor
            return True
        e = np.zeros(0, dtype=np.int64)
        nlp = ipyopt.Problem(1, np.array([-10.0]), np.array([10.0]), 0, np.zeros(0),
                             np.zeros(0), (e, e), (np.array([0]), np.array([0])),
                             lambda z: float((z[0] - 1) ** 2), grad, lambda z, out: True,
                             lambda z, out: True, hess, ipopt_options={"print_level": 5})
        nlp.solve(np.zeros(1))
    return banner(lambda: S(x0=0.0)), banner(ours)


def machine():
    def run(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return "?"
    import casadi
    from importlib.metadata import version
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cas_ipopt, our_ipopt = ipopt_versions()
    return dict(lscpu="\n".join(run("lscpu").splitlines()[:20]), package=package_state(repo),
                python=platform.python_version(), casadi=casadi.__version__,
                ipyopt=version("ipyopt"), numpy=np.__version__, sympy=version("sympy"),
                casadi_ipopt=cas_ipopt, ipyopt_ipopt=our_ipopt,
                commit=run("git", "-C", repo, "rev-parse", "--short", "HEAD").strip(),
                csrc=run("git", "-C", repo, "status", "--porcelain", "--", "csrc").strip(),
                date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))


def package_state(repo, depth=30):
    """Where ``symplectic`` was imported from and which of the repository's last ``depth``
    commits its files equal (git hash-object of each file that commit has under
    symplectic/, and no .py file besides), if any."""
    pkg = os.path.dirname(os.path.abspath(sp.__file__))
    root = os.path.dirname(pkg)

    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True,
                              check=True).stdout
    try:
        here = {os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(pkg)
                for f in files if not f.endswith((".so", ".pyc"))}
        here = sorted(f for f in here if "__pycache__" not in f)
        hashes = dict(zip(here, subprocess.run(
            ["git", "hash-object", "--", *(os.path.join(root, f) for f in here)],
            capture_output=True, text=True, check=True).stdout.split()))
        for commit in git("rev-list", "-n", str(depth), "HEAD").split():
            listing = git("ls-tree", "-r", commit, "symplectic")
            tree = {line.split("\t")[1]: line.split()[2] for line in listing.splitlines()}
            if tree == hashes:
                return (f"imported from {pkg}: its files (the C extension aside) identical "
                        f"to commit {commit[:7]}'s")
    except (OSError, subprocess.CalledProcessError, IndexError):
        pass
    return (f"imported from {pkg}: its files equal none of the last {depth} commits' "
            "(local changes)")


def checks():
    """The collocation's right-hand side against SymPy's Euler-Lagrange equations of the
    Lagrangian ours is built from, and the crane's against section 24's crane_rhs()."""
    from .control import crane_rhs
    out = {name: check_dynamics(p) for name, p in (("cart-pole", CARTPOLE), ("crane", CRANE))}
    f_ref = crane_rhs()[0]
    V = np.random.default_rng(1).uniform(-3, 3, (20, 5))
    out["crane against crane_rhs()"] = float(np.max(np.abs(
        f_ref(V) - np.array([rhs(v[:4], v[4], **CRANE) for v in V]))))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--md", default=None, help="also write the tables and the machine here")
    ap.add_argument("--quick", action="store_true", help="the first N or two of each problem")
    ap.add_argument("--problems", default=",".join(PROBLEMS),
                    help=f"comma-separated, of {', '.join(PROBLEMS)} (default all)")
    args = ap.parse_args(argv)
    names = [n for n in args.problems.split(",") if n]
    if any(n not in PROBLEMS for n in names):
        ap.error(f"--problems: choose from {', '.join(PROBLEMS)}")
    for module, how in (("casadi", "pip install casadi"),
                        ("ipyopt", "pip install 'symplectic-vi[control]'"),
                        ("sympy", "pip install sympy")):
        try:
            __import__(module)
        except ImportError as exc:
            print(f"control_casadi: needs {module} ({how}): {exc}. Skipped.")
            return []
    say = lambda s: print(s, file=sys.stderr, flush=True)
    info, check = machine(), checks()
    meter = LoadMeter()
    text, rows, anat = [], [], []
    for name in names:
        spec = PROBLEMS[name]
        Ns = QUICK_N[name] if args.quick else spec["N"]
        mine = compare(name, Ns, log=say)
        rows += mine
        text.append(f"## {spec['title']}\n\n{table(name, mine)}\n")
        print(text[-1], flush=True)
        for N in Ns:
            anat += anatomy(name, N, log=say)
    text.append("## Where the iterations go\n\n" + ANATOMY_TEXT + "\n\n" + anatomy_table(anat)
                + "\n")
    print(text[-1], flush=True)
    study = []
    for name in names:
        study += unknowns_study(name, QUICK_N[name] if args.quick else PROBLEMS[name]["N"],
                                log=say)
    text.append("## CasADi's collocation with ours' unknowns\n\n" + UNKNOWNS_TEXT + "\n\n"
                + unknowns_table(study, rows) + "\n")
    print(text[-1], flush=True)
    if "cartpole" in names:
        say("  the cart-pole's local optima")
        text.insert(0, optima_text(cartpole_optima(), rows))
        print(text[0], flush=True)
    top = "## Summary\n\n" + SUMMARY_TEXT + "\n\n" + summary(rows) + "\n"
    print(top, flush=True)
    load = meter.stop()
    if args.md:
        with open(args.md, "w") as fh:
            fh.write(_header(info, check, load, args) + top + "\n" + "\n".join(text))
    return rows


SUMMARY_TEXT = (
    "Each problem and N: the fewest IPOPT iterations of CasADi's three collocations and its "
    "fastest solve (which one in brackets); ours' iterations (IPOPT's; the same with and "
    "without the polish), their ratio to CasADi's fewest, ours' solve time (wall) over "
    "CasADi's fastest, and ours' CPU time over CasADi's least, each without the polish / with "
    "it.")
ANATOMY_TEXT = (
    "One more run of each case with IPOPT's log (print_level 5; not timed; ours without the "
    "polish), its iterations counted: in the restoration phase (the iteration number with "
    "\"r\"); at the first barrier parameter μ = 0.1, before IPOPT first lowers it (the cold "
    "start's globalisation); with a primal step α_pr < 0.1; and after μ first falls (the "
    "local convergence).")


UNKNOWNS_TEXT = (
    "Ours' unknowns differ from the collocation's in two ways: the state's second half is the "
    "momentum p = M(q) q' (not q'), and a free duration enters as the step h = T/N (bounds "
    "T_min/N, T_max/N; cost N h), not T. CasADi's three collocations again (the same "
    "dynamics, p' = ∂L/∂q + (u, 0) and q' = M⁻¹p for the momentum form; not timed), with each "
    "choice: IPOPT's iterations and the optimum, beside ours' iterations (IPOPT's, from the "
    "tables above).")


def _header(info, check, load, args):
    checks_text = ", ".join(f"{k} {v:.1e}" for k, v in check.items())
    cmd = "python benchmarks/suite/control_casadi.py" + (" --quick" if args.quick else "") + (
        f" --md {args.md}" if args.md else "") + (
        f" --problems {args.problems}" if args.problems != ",".join(PROBLEMS) else "")
    csrc = " (csrc/ has local changes)" if info["csrc"] else " (csrc/ as HEAD's)"
    return f"""# CasADi's direct collocation against symplectic.control: issue 47's problems

Generated by `{cmd}` on {info['date']} at commit {info['commit']}{csrc}; `symplectic` \
{info['package']}. The solves \
and logs {load['elapsed']:.0f} s, during which other processes used {load['foreign']:.2f} CPUs \
on average (load average before / after: {load['load_before']} / {load['load_after']}). \
Python {info['python']}, CasADi {info['casadi']} (its IPOPT: \
{info['casadi_ipopt']}), ipyopt {info['ipyopt']} (its IPOPT: {info['ipyopt_ipopt']}), NumPy \
{info['numpy']}, SymPy {info['sympy']}. Do not edit by hand: rerun the command.

The problems, the two transcriptions and the way of timing: the docstring of \
`benchmarks/suite/control_casadi.py`. Every case is a cold start from the same guess (the \
states linear between the ends over the guessed T, at rest, the inputs zero; T = 2 s for the \
cart-pole, 6 s for the crane). CasADi: Radau IIA (degree 3, 5) and Gauss-Legendre (degree 3) \
collocation, the input at each collocation point, the exact Hessian (AD on SX), IPOPT with \
tol = constr_viol_tol = 1e-10, max_iter {MAX_ITER}. Ours: `sp.control.Problem(system, T, N, \
method=m, inputs=[1.0, 0.0], start=..., end=..., cost=..., input_bounds=(-20, 20), \
state_bounds=..., free_duration=...)` with Simpson and lobatto5, `.solve("ipopt", tol=1e-10, \
max_iter={MAX_ITER})` with the Newton polish (its default: polish "yes") and with \
`polish=False` ("no"); the costs: `effort(2.0)` (∫u² dt), `duration() + effort(2e-3)` \
(T + 1e-3 ∫u² dt: `effort(R)` is ∫ ½ R u² dt), `duration()`.

Columns: the NLP's unknowns (the fixed end states included); IPOPT's iterations (ours: \
IPOPT's alone, the polish's Newton steps not counted; each of ours' cases is also run once in \
a new Python process, `fresh_iterations`, and where that run's count differs it is given as \
"alone"); J, the transcription's own cost; T; \
the first-order residual after the solve, unscaled, as `Problem.kkt_residual` defines it \
(|r| of r = ∇f + J_cᵀν for a variable inside its bounds, only the wrong sign at a bound, a \
variable \"at\" its bound when within 1e-12 relative, and |c|) -- for ours \
`Solution.kkt_residual`, for CasADi the same formula over its own variables -- and for \
CasADi also max |r + λ_x| with IPOPT's bound multipliers λ_x (ours does not expose them: \
\"–\"); the solve (wall s, the best of {ROUNDS} interleaved rounds; ours \
`Solution.solve_time`, the polish included when on; CasADi the solver call) and its CPU \
time (process time around the call, the least of the rounds; ours' call also looks up the \
problem's exact curvature, built in its first round); ours' iterations over the fewest of \
CasADi's three on the same problem and N, and ours' time over CasADi's fastest (which one in brackets); the cart's x over the nodes (CasADi: and its \
collocation points), to see whether the bound on x (cart-pole |x| ≤ 2 m, crane 0 ≤ x ≤ 15; \
CasADi holds it at every node and collocation point, ours at the nodes) is reached; IPOPT's \
status.

Checks: the closed-form right-hand side the collocation uses against SymPy's Euler-Lagrange \
equations of the Lagrangian given to `sp.System.from_sympy` (and the crane's against \
section 24's `crane_rhs()`), the largest difference of the accelerations at 20 random \
states: {checks_text}.

The machine (`lscpu | head -20`):

```
{info['lscpu']}
```

"""


if __name__ == "__main__":
    main()
