"""Section 17: the Lagrange top in ZXZ Euler angles and in a unit quaternion (issue 17).

Part A -- the ZXZ singularity.  A top of TOP Table 3 started at
theta = pi/3 with thetadot = 0 and the papers' p_psi, whose p_phi is tuned
(p_phi ~ p_psi) so that the nutation brings the axis within theta_min of the
vertical.  The ZXZ equations are integrated by Simpson as Python callables
(the same M and V as the built-in, but without its refusal, so the failure it
guards against can be measured), over three nutation periods, for theta_min
from 47 mrad (the papers' own motion) down to 0.1 mrad and h = 0.05 ... 0.001;
reported: max over the run of |axis - axis_ref|, the reference being the
rigid body of tests/support/rigid_body_ref.py (unit quaternion + Euler's equations,
DOP853 at rtol = atol = 1e-13).  Then what the built-in lagrange_top does on
the same motions (runs, or refuses with SYM_ECHART at time t), and the
smallest |sin theta| that any evaluation (Newton iterates included) sees on
the papers' runs, against the threshold 0.01.

Part B -- cost per step and at equal accuracy (the constrained quaternion
top).  The papers' motion over 10 nutation periods for midpoint, simpson and
lobatto4 at h = t_bar / N (ZXZ: N = 20 ... 640; quaternion: N = 320 ... 10240,
since it must resolve the 257 rad/s spin): the axis error against
exact.LagrangeTop.axis, the time per step (median of interleaved repeats) of
either form, and the cost of either form per simulated second at equal axis
error (log-log interpolation); then the 2 mrad motion in the quaternion form
against the spin-frame rigid-body reference.  ``--only-b`` reruns part B
alone and replaces it in the results file.

No assertions: this measures.  The results are written as Markdown.
"""
import math
import os
import statistics
import sys

import numpy as np

import symplectic as sp

from .common import REPO, interleave, say, summarize, timer

sys.path.insert(0, os.path.join(REPO, "tests"))
from support.rigid_body_ref import RigidBodyTop, euler_zxz   # noqa: E402

TOP = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81)   # TOP Table 3
Q0 = np.array([0.0, math.pi / 3, 0.0])
QDOT0 = np.array([9.2, 0.0, 252.0])
TABLE6 = dict(m=1.0, I=1.0, I3=2.0, l=4 * math.pi ** 2 / 9.81, g=9.81)
THRESHOLD = 0.01      # |sin theta| below which the built-in refuses (csrc/core/sym_sys_tops.c)


def zxz_combined(I, I3, mgl, seen=None):
    """The ZXZ top as a combined callable (no refusal); ``seen`` (a list) gets
    the smallest |sin theta| of every evaluation."""
    def f(q, M, dM, dV, d2M, d2V):
        s, c = math.sin(q[1]), math.cos(q[1])
        if seen is not None:
            seen[0] = min(seen[0], abs(s))
        M[0, 0] = I * s * s + I3 * c * c
        M[0, 2] = M[2, 0] = I3 * c
        M[1, 1], M[2, 2] = I, I3
        dM[1, 0, 0] = 2 * (I - I3) * s * c
        dM[1, 0, 2] = dM[1, 2, 0] = -I3 * s
        d2M[1, 1, 0, 0] = 2 * (I - I3) * (c * c - s * s)
        d2M[1, 1, 0, 2] = d2M[1, 1, 2, 0] = -I3 * c
        dV[1] = -mgl * s
        d2V[1, 1] = -mgl * c
        return mgl * c
    return f


def euler_axis(q):
    phi, th = q[..., 0], q[..., 1]
    return np.stack([np.sin(th) * np.sin(phi), -np.sin(th) * np.cos(phi), np.cos(th)], axis=-1)


def near_vertical_momenta(theta_min, side=-1):
    """p at Q0 with thetadot = 0 and Table 3's p_psi whose nutation reaches
    theta_min: u0 = cos(pi/3) and cos(theta_min) are turning points, roots of
    f(u) = (1 - u^2)(alpha - beta u) - (b - a u)^2 -- a quadratic in b = p_phi/I."""
    I, I3 = TOP["I"], TOP["I3"]
    p_psi = I3 * (QDOT0[2] + QDOT0[0] * math.cos(Q0[1]))
    a, beta = p_psi / I, 2 * TOP["m"] * TOP["g"] * TOP["l"] / I
    u0, u2 = math.cos(Q0[1]), math.cos(theta_min)
    k = (1 - u2 * u2) / (1 - u0 * u0)
    C = (1 - u2 * u2) * beta * (u0 - u2)
    roots = np.roots([k - 1, -2 * a * (k * u0 - u2), k * a * a * u0 * u0 - a * a * u2 * u2 + C])
    b = [r for r in roots.real if np.sign(r - a) == side and abs(r - a) < 1e-3 * a][0]
    return np.array([b * I, 0.0, p_psi])


def papers_momenta():
    top = sp.systems.lagrange_top(**TOP)
    return top.momentum(Q0, QDOT0)


# ---------------------------------------------------------------- part A
def part_a(quick):
    I, I3 = TOP["I"], TOP["I3"]
    mgl = TOP["m"] * TOP["g"] * TOP["l"]
    python_top = sp.System.combined(3, zxz_combined(I, I3, mgl), name="zxz (no refusal)")
    builtin = sp.systems.lagrange_top(**TOP)
    rb = RigidBodyTop(**TOP)
    thetas = [0.047, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002, 0.0001]
    hs = [0.05, 0.02, 0.01, 0.005, 0.001] if not quick else [0.02, 0.01]
    if quick:
        thetas = [0.047, 0.01, 0.002, 0.0005]
    lines = ["### A. The ZXZ top near the vertical", "",
             "Simpson on the ZXZ equations (Python callables, no refusal) over three nutation "
             "periods; max |axis - axis_ref| against the rigid-body reference (DOP853, 1e-13). "
             "p_phi < p_psi; `fail` = Newton did not converge.", ""]
    lines.append("| theta_min (mrad) | (p_psi - p_phi)/p_psi | " + " | ".join(f"h = {h}" for h in hs)
                 + " | built-in lagrange_top, h = 0.01 |")
    lines.append("|---" * (len(hs) + 3) + "|")
    errs = {}
    for th in thetas:
        p0 = near_vertical_momenta(th) if th != 0.047 else papers_momenta()
        ex = sp.exact.LagrangeTop(Q0, p0, **TOP)
        th_min = math.acos(min(1.0, ex.u_range[1]))
        T = 3 * ex.period
        Qr0, W0 = euler_zxz(Q0, builtin.velocity(Q0, p0))
        row = [f"{1e3 * th_min:.3g}", f"{(p0[2] - p0[0]) / p0[2]:.2e}"]
        for h in hs:
            N = int(round(T / h))
            t = h * np.arange(N + 1)
            try:
                tr = sp.integrate(python_top, Q0, p0, h, N)
            except sp.ConvergenceError:
                row.append("fail")
                continue
            Q, _ = rb.solve(Qr0, W0, t)
            errs[th, h] = np.max(np.linalg.norm(euler_axis(tr.q) - rb.axis(Q), axis=1))
            row.append(f"{errs[th, h]:.2e}")
        try:
            sp.integrate(builtin, Q0, p0, 0.01, int(round(T / 0.01)))
            row.append("runs")
        except sp.ConvergenceError as e:
            row.append(f"refuses at t = {e.t:.2f} s" if "coordinate singularity" in str(e)
                       else "fails: " + e.reason[:40])
        lines.append("| " + " | ".join(row) + " |")
        say(lines[-1])
    base = thetas[1]
    lines += ["", f"The same errors relative to those of the motion passing at {1e3 * base:g} mrad "
              "(the growth of the error constant as the axis passes closer):", "",
              "| theta_min (mrad) | " + " | ".join(f"h = {h}" for h in hs) + " |",
              "|---" * (len(hs) + 1) + "|"]
    for th in thetas[1:]:
        lines.append(f"| {1e3 * th:g} | " + " | ".join(
            f"{errs[th, h] / errs[base, h]:.3g}" if (th, h) in errs and (base, h) in errs else "-"
            for h in hs) + " |")
    # the closest approach any evaluation makes on the papers' runs
    lines += ["", "Smallest |sin theta| seen by any evaluation (Newton iterates, RK4 stages "
              "included) on the papers' runs, against the threshold 0.01:", "",
              "| run | method | min abs(sin theta) | / threshold |", "|---|---|---|---|"]
    tb = sp.exact.LagrangeTop(Q0, papers_momenta(), **TOP).period
    runs = [("Table 3, h = t/40, %d periods" % (10 if quick else 100), TOP, Q0, papers_momenta(),
             tb / 40, 40 * (10 if quick else 100)),
            ("Table 3, h = 0.05, 10 periods", TOP, Q0, papers_momenta(), 0.05,
             int(10 * tb / 0.05)),
            ("Table 6, h = 0.1, 1 s", TABLE6, np.array([0.0, math.pi / 6, 0.0]),
             sp.systems.lagrange_top(**TABLE6).momentum([0.0, math.pi / 6, 0.0],
                                                        [0.0, 0.0, 2 * math.pi]), 0.1, 10)]
    for label, prm, q0, p0, h, N in runs:
        for method in ("midpoint", "simpson", "rk4"):
            seen = [1.0]
            f = zxz_combined(prm["I"], prm["I3"], prm["m"] * prm["g"] * prm["l"], seen)
            sp.integrate(sp.System.combined(3, f), q0, p0, h, N, method)
            lines.append(f"| {label} | {method} | {seen[0]:.4f} | {seen[0] / THRESHOLD:.2f} |")
            say(lines[-1])
    return lines


# ---------------------------------------------------------------- part B
def constrained(system):
    """Whether the quaternion top carries its constraint (issue 17's API)."""
    for name in ("constraint", "n_constraints", "constraints"):
        v = getattr(system, name, None)
        if v is not None and v is not False and v != 0:
            return True
    return False


def timed(system, q0, p0, h, N, method, repeats):
    """(the trajectory, the median wall time of ``repeats`` runs)."""
    tr = sp.integrate(system, q0, p0, h, N, method)
    fn = timer(lambda: sp.integrate(system, q0, p0, h, N, method))
    return tr, summarize(interleave({0: fn}, repeats)[0])["wall"]


ZXZ_NS = (20, 40, 80, 160, 320, 640)
NOTE_B = ("Reading: a quaternion step is a constrained step on four coordinates (Newton on "
          "(s-1)(n+m) unknowns, n = 4, m = 1) against an unconstrained one on three angles; the "
          "ratio at equal accuracy is far larger because the quaternion form must resolve the spin "
          "(h Omega3 < 0.4 where its error is asymptotic) while the ZXZ form reaches the same error"
          " at N = 40 ... 320.  The ratios come from interleaved runs.")
QUAT_NS = (320, 640, 1280, 2560, 5120, 10240)


def part_b(quick, repeats, qt=None):
    """``qt``: the quaternion top (default: the built-in with TOP's parameters)."""
    qt = sp.systems.lagrange_top_quaternion(**TOP) if qt is None else qt
    if not constrained(qt):
        msg = ("### B. Cost per step at equal accuracy\n\nSkipped: "
               "systems.lagrange_top_quaternion does not carry its constraint |Q|^2 = 1 yet "
               "(holonomic constraints, issue 17); rerun this script once it does.")
        return msg.splitlines()
    from support.rigid_body_ref import SpinFrameTop
    top = sp.systems.lagrange_top(**TOP)
    p0 = papers_momenta()
    ex = sp.exact.LagrangeTop(Q0, p0, **TOP)
    QQ0, PP0 = qt.from_euler(Q0, p0)
    periods = 3 if quick else 10
    w3 = p0[2] / TOP["I3"]
    lines = ["### B. Cost per step at equal accuracy", "",
             f"TOP Table 3 over {periods} nutation periods (t_bar = {ex.period:.4f} s), "
             "h = t_bar/N; axis error: max over the run against exact.LagrangeTop.axis; time "
             f"per step: median of {repeats} repeats, the two forms' runs interleaved "
             "(A B A B ...) so that drifts of the shared machine hit both alike.  The "
             "quaternion form resolves the body's spin (Omega3 = p_psi/I3 = "
             f"{w3:.1f} rad/s; Q turns by h Omega3/2 per step), which the ZXZ form never sees "
             "(psi is cyclic), so it needs smaller steps: its N starts where Newton converges "
             "and the spin is resolved.  `fail` = Newton did not converge.", "",
             "| method | N | h Omega3 (rad) | ZXZ error | quaternion error | ZXZ us/step | "
             "quaternion us/step |", "|---|---|---|---|---|---|---|"]
    summary = []
    zns = ZXZ_NS[:4] if quick else ZXZ_NS
    qns = QUAT_NS[:4] if quick else QUAT_NS
    for method in ("midpoint", "simpson", "lobatto4"):
        pts = {"zxz": [], "quat": []}
        per_step = {"zxz": [], "quat": []}
        rows = {"zxz": [], "quat": []}
        for k in range(max(len(zns), len(qns))):
            runs = {}
            if k < len(zns):
                runs["zxz"] = (top, Q0, p0, euler_axis, zns[k])
            if k < len(qns):
                runs["quat"] = (qt, QQ0, PP0, qt.axis, qns[k])
            res = {form: [None, []] for form in runs}
            for _ in range(repeats):            # interleaved round-robin
                for form, (system, a, b, _, N) in runs.items():
                    if res[form][0] is False:
                        continue
                    try:
                        tr, dt = timed(system, a, b, ex.period / N, N * periods, method, 1)
                    except sp.ConvergenceError:
                        res[form][0] = False
                        continue
                    res[form][0] = tr
                    res[form][1].append(dt)
            for form, (_, _, _, axis, N) in runs.items():
                tr, ts = res[form]
                n = N * periods
                if tr is False:
                    cell = ("fail", "-")
                else:
                    e = float(np.max(np.linalg.norm(axis(tr.q) - ex.axis(tr.t), axis=1)))
                    us = 1e6 * statistics.median(ts) / n
                    pts[form].append((e, us * N / ex.period))
                    per_step[form].append(us)
                    cell = (f"{e:.2e}", f"{us:.2f}")
                row = {"zxz": f"{cell[0]} | - | {cell[1]} | -",
                       "quat": f"- | {cell[0]} | - | {cell[1]}"}[form]
                rows[form].append(f"| {method} | {N} | {w3 * ex.period / N:.3g} | {row} |")
                print(rows[form][-1], flush=True)
        lines += rows["zxz"] + rows["quat"]
        ratio = (statistics.median(per_step["quat"]) / statistics.median(per_step["zxz"])
                 if per_step["quat"] and per_step["zxz"] else float("nan"))
        for target in (1e-3, 1e-4, 1e-6, 1e-8):
            cost = {}
            for form, p in pts.items():
                if len(p) < 2:
                    continue
                e, c = np.log([x[0] for x in p]), np.log([x[1] for x in p])
                if not (e.min() <= math.log(target) <= e.max()):
                    continue
                order = np.argsort(e)
                cost[form] = math.exp(np.interp(math.log(target), e[order], c[order]))
            if len(cost) == 2:
                summary.append(f"| {method} | {target:g} | {cost['zxz']:.0f} | {cost['quat']:.0f} | "
                               f"{cost['quat'] / cost['zxz']:.1f} | {ratio:.2f} |")
    lines += ["", "Cost per simulated second (us) at equal axis error (log-log interpolation "
              "in the table above), and the ratio of the median cost per step:", "",
              "| method | axis error | ZXZ | quaternion | quaternion / ZXZ | per step: "
              "quaternion / ZXZ |", "|---|---|---|---|---|---|"]
    lines += summary
    lines += ["", NOTE_B]
    # the motion passing 2 mrad from the vertical: the quaternion form only (the ZXZ form refuses)
    p2 = near_vertical_momenta(0.002)
    T2 = sp.exact.LagrangeTop(Q0, p2, **TOP).period
    rb = SpinFrameTop(**TOP)
    Qr0, W0 = euler_zxz(Q0, top.velocity(Q0, p2))
    QQ2, PP2 = qt.from_euler(Q0, p2)
    lines += ["", f"The motion passing 2 mrad from the vertical (three nutation periods, "
              f"t_bar = {T2:.4f} s; the ZXZ form refuses it): the quaternion form against the "
              "rigid-body reference integrated in the spin frame (tests/support/rigid_body_ref.py, "
              "SpinFrameTop).", "",
              "| method | N per period | axis error | us/step |", "|---|---|---|---|"]
    for method in ("midpoint", "simpson", "lobatto4"):
        for N in ((640, 1280, 2560) if quick else (640, 1280, 2560, 5120)):
            n = 3 * N
            try:
                tr, dt = timed(qt, QQ2, PP2, T2 / N, n, method, repeats)
            except sp.ConvergenceError as e:
                lines.append(f"| {method} | {N} | fails: {e.reason[:50]} | - |")
                continue
            Q, _ = rb.solve_spin(Qr0, W0, tr.t)
            e = float(np.max(np.linalg.norm(qt.axis(tr.q) - rb.axis(Q), axis=1)))
            lines.append(f"| {method} | {N} | {e:.2e} | {1e6 * dt / n:.2f} |")
            say(lines[-1])
    return lines


def run_section(cfg, ctx):
    quick = cfg["top_quick"]
    return "\n".join(part_a(quick) + [""] + part_b(quick, cfg["top_rounds"])) + "\n"
