"""The papers' tables recomputed on the built-in systems, and the set-ups the
figures share (symplectic.reproduce prints and writes them)."""
import csv
import math

import numpy as np

from . import exact, papers, systems
from ._run._integrate import integrate


def _note(notes, table, entry):
    """The note printed next to a flagged entry: the reason and its errata key."""
    note = notes.get(entry)
    return f"{note}; errata {papers.flag_key(table, entry)}" if note else ""


def top_note(table, entry):
    return f"{papers.TOP_NOTES[(table, entry)]}; errata {papers.flag_key(table, (entry,))}"


def fitted_order(hs, errs):
    """Least-squares slope of log(error) against log(h)."""
    return float(np.polyfit(np.log(hs), np.log(errs), 1)[0])


def fvca_table1():
    """FVCA Table 1: errors of Newmark (midpoint) and Simpson on the pendulum.

    Returns a list of dict rows: method, quantity, N, value, paper, rel_diff,
    plus an 'order' row per (method, quantity).
    """
    P = papers.FVCA_PENDULUM
    sys = systems.pendulum(m=P["m"], omega=P["omega"])
    T = exact.pendulum_period(P["q0"], P["p0"], P["m"], P["omega"])
    H0 = P["m"] * P["omega"] ** 2 * (1 - math.cos(P["q0"])) + 0.5 * P["p0"] ** 2 / P["m"]
    meshes = papers.FVCA_TABLE1["meshes"]
    errors = {}
    for method in ("midpoint", "simpson"):
        for N in meshes:
            traj = integrate(sys, [P["q0"]], [P["p0"]], T / N, N, method=method)
            q_ex, p_ex = exact.pendulum(traj.t, P["q0"], P["p0"], P["m"], P["omega"])
            errors[(method, "momentum", N)] = float(np.max(np.abs(traj.p[:, 0] - p_ex)))
            errors[(method, "state", N)] = float(np.max(np.abs(traj.q[:, 0] - q_ex)))
            errors[(method, "relative energy", N)] = float(np.max(np.abs(traj.energy - H0)) / H0)
    rows = []
    for method, quantity, printed, printed_order in papers.FVCA_TABLE1["rows"]:
        vals = [errors[(method, quantity, N)] for N in meshes]
        for N, v, pv in zip(meshes, vals, printed):
            rows.append(dict(method=method, quantity=quantity, N=N, value=v, paper=pv,
                             rel_diff=v / pv - 1,
                             note=_note(papers.FVCA_TABLE1["notes"], "fvca-t1",
                                        (method, quantity, N))))
        order = fitted_order([T / N for N in meshes], vals)
        rows.append(dict(method=method, quantity=quantity, N="order", value=order,
                         paper=printed_order, rel_diff=order - printed_order,
                         note=_note(papers.FVCA_TABLE1["notes"], "fvca-t1",
                                    (method, quantity, "order"))))
    return rows


def axioms_table2(horizons=None):
    """AXIOMS Table 2: Newmark, RK4 and Simpson on the linearised double pendulum.

    Errors ||e||_inf = max over nodes of the Euclidean norm of p - p_ex and
    q - q_ex over [0, T], T = 1, 10, 100, 1000 t_bar (t_bar = 1 s), with
    h = 0.1, 0.05, 0.025 t_bar; exact solution by modal superposition
    (:func:`symplectic.linear.exact`).  The schemes are stepped with their
    closed-form one-step matrices (:func:`symplectic.linear.propagate`).
    Returns rows like :func:`fvca_table1` plus the horizon ``T``.
    """
    from . import linear
    P = papers.AXIOMS_DOUBLE_PENDULUM
    tab = papers.AXIOMS_TABLE2
    l = P["g"] / P["omega0"] ** 2
    sysl = systems.linear_double_pendulum(P["m1"], P["m2"], l, P["g"])
    M, K = sysl.params["M"], sysl.params["K"]
    horizons = tab["horizons"] if horizons is None else list(horizons)
    errors = {}
    for T in horizons:
        for N in tab["meshes"][T]:
            h = T * P["t_bar"] / N
            t = h * np.arange(N + 1)
            q_ex, p_ex = linear.exact(M, K, P["q0"], P["p0"], t)
            for method in ("newmark", "rk4", "simpson"):
                q, p = linear.propagate(M, K, P["q0"], P["p0"], h, N, method)
                errors[(T, method, "p", N)] = float(np.max(np.linalg.norm(p - p_ex, axis=1)))
                errors[(T, method, "q", N)] = float(np.max(np.linalg.norm(q - q_ex, axis=1)))
    rows = []
    for T, method, quantity, printed, printed_order in tab["rows"]:
        if T not in horizons:
            continue
        meshes = tab["meshes"][T]
        vals = [errors[(T, method, quantity, N)] for N in meshes]
        for N, v, pv in zip(meshes, vals, printed):
            rows.append(dict(T=T, method=method, quantity=quantity, N=N, value=v, paper=pv,
                             rel_diff=v / pv - 1,
                             note=_note(tab["notes"], "axioms-t2", (T, method, quantity, N))))
        order = fitted_order([T / N for N in meshes], vals)
        rows.append(dict(T=T, method=method, quantity=quantity, N="order", value=order,
                         paper=printed_order, rel_diff=order - printed_order,
                         note=_note(tab["notes"], "axioms-t2", (T, method, quantity, "order"))))
    return rows


def top_dp():
    P = papers.TOP_TABLE1
    l = P["l"]
    return (systems.double_pendulum(P["m1"], P["m2"], l, l, P["g"]), np.array(P["q0"]),
            np.array(P["p0"]))


def top_dp_table2(horizons=(10, 100, 1000), hs=(0.1, 0.05, 0.025)):
    """TOP Table 2 (printed as an image without numbers, so ours only): the
    double pendulum's ||e_H||_inf = max_n |H_n - H_0|/|H_0| for midpoint,
    RK4 and Simpson over T = 10, 100, 1000 s, with the fitted order.  The
    symplectic schemes keep their orders (2, 4) and bounded errors; RK4's
    error grows with T."""
    dp, q0, p0 = top_dp()
    rows = []
    for T in horizons:
        for method in ("midpoint", "rk4", "simpson"):
            errs = []
            for h in hs:
                tr = integrate(dp, q0, p0, h, round(T / h), method)
                errs.append(float(np.max(np.abs(tr.energy - tr.energy[0])) / abs(tr.energy[0])))
                rows.append(dict(T=T, method=method, quantity="e_H", N=round(T / h), value=errs[-1],
                                 paper=None, rel_diff=None, note=""))
            rows.append(dict(T=T, method=method, quantity="e_H", N="order",
                             value=fitted_order(hs, errs), paper=None, rel_diff=None, note=""))
    return rows


def top_table3():
    """The TOP Table 3 top, its initial state and its exact solution."""
    P = papers.TOP_TABLE3
    top = systems.lagrange_top(P["m"], P["I"], P["I3"], P["l"], P["g"])
    q0 = np.array(P["q0"])
    p0 = top.mass(q0) @ np.array(P["qdot0"])
    ex = exact.LagrangeTop(q0, p0, P["m"], P["I"], P["I3"], P["l"], P["g"])
    return top, q0, p0, ex


def top_errors(top, q0, p0, ex, method, N, periods):
    """Relative nutation error max_n |theta_n - theta_ex|/theta_ex and relative
    energy error max_n |H_n - H0|/|H0| over ``periods`` nutation periods, h = t_bar/N."""
    tr = integrate(top, q0, p0, ex.period / N, N * periods, method)
    th = ex.theta(tr.t)
    e_th = float(np.max(np.abs(tr.q[:, 1] - th) / th))
    e_H = float(np.max(np.abs(tr.energy - ex.energy)) / abs(ex.energy))
    return e_th, e_H, tr


def top_tables45(periods=(1, 10, 100, 1000), meshes=(40, 80, 160)):
    """TOP Tables 4 and 5 (printed as images without numbers, so ours only):
    the Lagrange top's relative nutation error ||e_theta||_inf and energy error
    ||e_H||_inf over T = 1 ... 1000 nutation periods t_bar (the exact period
    of the Table 3 parameters, 1.8472390 s), h = t_bar/N for N = 40, 80, 160,
    with fitted orders.  Returns (rows4, rows5)."""
    top, q0, p0, ex = top_table3()
    rows4, rows5 = [], []
    for T in periods:
        for method in ("midpoint", "rk4", "simpson"):
            e4, e5 = [], []
            for N in meshes:
                e_th, e_H, _ = top_errors(top, q0, p0, ex, method, N, T)
                e4.append(e_th)
                e5.append(e_H)
                for rows, v, qty in ((rows4, e_th, "e_theta"), (rows5, e_H, "e_H")):
                    rows.append(dict(T=T, method=method, quantity=qty, N=N * T, value=v,
                                     paper=None, rel_diff=None, note=""))
            hs = [ex.period / N for N in meshes]
            rows4.append(dict(T=T, method=method, quantity="e_theta", N="order",
                              value=fitted_order(hs, e4), paper=None, rel_diff=None, note=""))
            rows5.append(dict(T=T, method=method, quantity="e_H", N="order",
                              value=fitted_order(hs, e5), paper=None, rel_diff=None, note=""))
    return rows4, rows5


def reduced_top():
    """TOP Table 6: the complete top, its initial state, and the reduced model."""
    from . import analysis
    P = papers.TOP_TABLE6
    top = systems.lagrange_top(P["m"], P["I"], P["I3"], P["l"], P["g"])
    q0 = np.array(P["q0"])
    p0 = top.mass(q0) @ np.array(P["qdot0"])
    red, y0 = analysis.ReducedLagrangeTop.from_state(q0, p0, P["m"], P["I"], P["I3"], P["l"],
                                                     P["g"])
    return top, q0, p0, red, y0


def top_table6_convergence(hs=(0.1, 0.05, 0.025, 0.0125, 0.00625, 0.003125)):
    """TOP Figure 14: max over [0, 1 s] of |theta_Simpson(complete top) -
    theta_RK4(reduced top)| at equal h (Table 6), and its fitted order (4)."""
    from . import analysis
    top, q0, p0, red, y0 = reduced_top()
    rows, errs = [], []
    for h in hs:
        N = round(1.0 / h)
        tr = integrate(top, q0, p0, h, N, "simpson")
        _, y = analysis.rk4_ode(red, y0, h, N)
        errs.append(float(np.max(np.abs(tr.q[:, 1] - y[:, 1]))))
        rows.append(dict(method="simpson vs rk4(reduced)", quantity="max|dtheta|", N=N,
                         value=errs[-1], paper=None, rel_diff=None, note=""))
    rows.append(dict(method="simpson vs rk4(reduced)", quantity="max|dtheta|", N="order",
                     value=fitted_order(hs, errs), paper=None, rel_diff=None, note=""))
    return rows


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
