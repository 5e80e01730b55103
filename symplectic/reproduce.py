"""Reproduce the papers' published tables on the built-in systems.

``python -m symplectic reproduce [--out DIR]`` prints every table side by
side with the printed values and the relative difference, and writes CSV
files and PNG figures into DIR.  A printed value that we do not reproduce, for
a known reason, is flagged with a note and a key (``errata fvca-t1/...``):
``docs/errata.md`` in the repository explains each key (:func:`symplectic.papers.flags`).
"""
import csv
import math
import os

import numpy as np

from . import exact, papers, systems
from ._integrate import integrate

#: The line printed before the tables: where the flagged values are explained.
ERRATA_LINE = ("Values flagged [note; errata KEY] differ from the printed ones for a known reason; "
               "docs/errata.md in the symplectic repository explains each KEY.")


def _note(notes, table, entry):
    """The note printed next to a flagged entry: the reason and its errata key."""
    note = notes.get(entry)
    return f"{note}; errata {papers.flag_key(table, entry)}" if note else ""


def _top_note(table, entry):
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


def _top_dp():
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
    dp, q0, p0 = _top_dp()
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


def top_dp_figures(out):
    """TOP Figures 2-5 on the nonlinear double pendulum: q and p over 10 s at
    h = 0.1 against RK4 at h = 1e-5 (the paper's reference), energy-error
    convergence, and the relative energy error over 10 s."""
    plot = _plot()
    plt = plot._plt()
    dp, q0, p0 = _top_dp()
    ref = integrate(dp, q0, p0, 1e-5, 1_000_000, "rk4")
    sub = slice(None, None, 1000)
    names = {"midpoint": "Implicit midpoint", "rk4": "RK4", "simpson": "Simpson"}
    trs = [integrate(dp, q0, p0, 0.1, 100, m) for m in ("midpoint", "rk4", "simpson")]
    labels = [f"{names[tr.method]}, h = 0.1 s" for tr in trs]
    paths = []
    for quantity, fig_no in (("q", 2), ("p", 3)):
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        for c in range(2):
            plot.state_vs_exact(trs, (ref.q[sub], ref.p[sub]), t_exact=ref.t[sub], coord=c,
                                ax=axs[c], quantity=quantity, labels=labels, legend=None,
                                exact_label="RK4, h = 1e-5 s (reference)")
        plot.figure_legend(fig, axs[0])
        fig.suptitle(f"TOP Fig. {fig_no}: double pendulum, "
                     f"{'angles' if quantity == 'q' else 'momenta'}")
        paths.append(plot.savefig(axs[0], os.path.join(out, f"top_fig{fig_no}_dp_{quantity}.png")))
    hs = [0.1, 0.05, 0.025, 0.0125, 0.00625]
    data = {}
    for m in ("midpoint", "rk4", "simpson"):
        errs = []
        for h in hs:
            tr = integrate(dp, q0, p0, h, round(10 / h), m)
            errs.append(np.max(np.abs(tr.energy - tr.energy[0])) / abs(tr.energy[0]))
        data[names[m]] = (hs, errs)
    ax = plot.convergence(data, xlabel="h [s]", ylabel="relative energy error |H − H₀|/|H₀|")
    ax.set_title("TOP Fig. 4: max energy error over 10 s, double pendulum")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig4_dp_energy_convergence.png")))
    ax = plot.energy_error(trs, labels=labels)
    ax.set_title("TOP Fig. 5: relative energy error, double pendulum")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig5_dp_energy.png")))
    return paths


def _top_table3():
    """The TOP Table 3 top, its initial state and its exact solution."""
    P = papers.TOP_TABLE3
    top = systems.lagrange_top(P["m"], P["I"], P["I3"], P["l"], P["g"])
    q0 = np.array(P["q0"])
    p0 = top.mass(q0) @ np.array(P["qdot0"])
    ex = exact.LagrangeTop(q0, p0, P["m"], P["I"], P["I3"], P["l"], P["g"])
    return top, q0, p0, ex


def _top_errors(top, q0, p0, ex, method, N, periods):
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
    top, q0, p0, ex = _top_table3()
    rows4, rows5 = [], []
    for T in periods:
        for method in ("midpoint", "rk4", "simpson"):
            e4, e5 = [], []
            for N in meshes:
                e_th, e_H, _ = _top_errors(top, q0, p0, ex, method, N, T)
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


def _reduced_top():
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
    top, q0, p0, red, y0 = _reduced_top()
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


def top_figures(out, quick=False):
    """TOP Figures 7-14: the Table 3 top (loops: axis trace, nutation against
    the exact solution, energy error, conserved momenta, convergence) and the
    Table 6 reduced top (cusps: axis trace, complete Simpson against reduced
    RK4, convergence of their difference)."""
    from . import analysis
    plot = _plot()
    plt = plot._plt()
    top, q0, p0, ex = _top_table3()
    tb = ex.period
    names = {"midpoint": "Implicit midpoint", "rk4": "RK4", "simpson": "Simpson"}
    paths = []

    ax = plot.top_axis_trace([integrate(top, q0, p0, tb / 200, 1000, "simpson")],
                             labels=["Simpson, h = t̄/200, 5 periods"])
    ax.set_title("TOP Fig. 7: axis of the Table 3 top (loops)")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig7_top_loops.png")))

    h = 0.05
    trs = [integrate(top, q0, p0, h, int(math.ceil(tb / h)), m) for m in names]
    ax = plot._axes(None)
    te = np.linspace(0, trs[0].t[-1], 1000)
    ax.plot(te, ex.theta(te), "k-", lw=1, label="exact (Jacobi sn)")
    for tr in trs:
        ax.plot(tr.t, tr.q[:, 1], "o--", ms=3, lw=0.8, label=f"{names[tr.method]}, h = {h} s")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("nutation θ [rad]")
    ax.set_title(f"TOP Fig. 8: nutation over one period (t̄ = {tb:.7f} s)")
    plot.place_legend(ax)
    ax.grid(alpha=0.3)
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig8_nutation.png")))

    trs = [integrate(top, q0, p0, h, int(math.ceil(10 * tb / h)), m) for m in names]
    ax = plot.energy_error(trs, labels=[f"{names[tr.method]}, h = {h} s" for tr in trs])
    ax.set_title("TOP Fig. 9: relative energy error, 10 nutation periods")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig9_top_energy.png")))

    fig, axs = plt.subplots(1, 2, figsize=(11, 4))
    drifts = {tr.method: [] for tr in trs}
    for k, (c, lab) in enumerate(((0, "p_φ"), (2, "p_ψ"))):
        for tr in trs:
            mom = analysis.conserved_momenta(tr, coords=[c])
            rel = np.abs(mom.series[:, 0] - mom.series[0, 0]) / abs(mom.series[0, 0])
            drifts[tr.method].append(f"{lab} {rel.max():.1e}")
            axs[k].plot(tr.t, rel, lw=1, label=names[tr.method])
        axs[k].set_xlabel("t [s]")
        axs[k].set_ylabel(f"relative drift |{lab} − {lab}(0)|/|{lab}(0)|")
        axs[k].grid(alpha=0.3)
    handles, _ = axs[0].get_legend_handles_labels()
    plot.figure_legend(fig, handles=handles,
                       labels=[f"{names[tr.method]}, h = {h} s (max {', '.join(drifts[tr.method])})"
                               for tr in trs], ncol=1)
    fig.suptitle("TOP Fig. 10: drift of the conserved momenta p_φ, p_ψ over 10 periods")
    paths.append(plot.savefig(axs[0], os.path.join(out, "top_fig10_momenta.png")))

    Ns = [40, 80, 160, 320]
    data = {}
    for m in names:
        e4, e5 = zip(*[_top_errors(top, q0, p0, ex, m, N, 1)[:2] for N in Ns])
        data[f"{names[m]}, nutation"] = ([tb / N for N in Ns], e4)
        data[f"{names[m]}, energy"] = ([tb / N for N in Ns], e5)
    ax = plot.convergence(data, xlabel="h [s]", ylabel="relative error, max over one period")
    ax.set_title("TOP Fig. 11: nutation and energy error convergence")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig11_top_convergence.png")))

    rtop, rq0, rp0, red, y0 = _reduced_top()
    ax = plot.top_axis_trace([integrate(rtop, rq0, rp0, 0.001, 3000, "simpson")],
                             labels=["Simpson, h = 1e-3 s, 3 s"])
    ax.set_title("TOP Fig. 12: axis of the Table 6 top (cusps)")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig12_top_cusps.png")))

    h_ref = 1e-4 if quick else 1e-5
    t_ref, y_ref = analysis.rk4_ode(red, y0, h_ref, round(1.0 / h_ref))
    trs = [integrate(rtop, rq0, rp0, 0.1, 10, m) for m in names]
    ax = plot._axes(None)
    ax.plot(t_ref, y_ref[:, 1], "k-", lw=1, label=f"RK4 on the reduced model, h = {h_ref:g} s")
    for tr in trs:
        ax.plot(tr.t, tr.q[:, 1], "o--", ms=3, lw=0.8, label=f"{names[tr.method]}, h = 0.1 s")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("nutation θ [rad]")
    ax.set_title("TOP Fig. 13: complete top vs reduced-model reference")
    plot.place_legend(ax)
    ax.grid(alpha=0.3)
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig13_reduced.png")))

    rows = top_table6_convergence()
    hs = [1.0 / r["N"] for r in rows if r["N"] != "order"]
    errs = [r["value"] for r in rows if r["N"] != "order"]
    ax = plot.convergence({"Simpson (complete top) vs RK4 (reduced model)": (hs, errs)},
                          xlabel="h [s]", ylabel="max |θ_Simpson − θ_RK4| over [0, 1 s] [rad]")
    ax.set_title("TOP Fig. 14: complete Simpson vs reduced RK4, equal h")
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig14_reduced_convergence.png")))
    return paths


# ---------------------------------------------------------------------------
# Figures.  Each function takes the output directory, writes PNG (and the
# data behind it as CSV where it is a table of numbers) and returns the paths.

def _plot():
    from . import plot       # matplotlib; optional dependency
    return plot


def fvca_figures(out):
    """FVCA Figures 1-2: the exact pendulum over five periods, and Newmark vs
    Simpson with 10 steps per period against it."""
    plot = _plot()
    plt = plot._plt()
    P = papers.FVCA_PENDULUM
    sys_ = systems.pendulum(m=P["m"], omega=P["omega"])
    T = exact.pendulum_period(P["q0"], P["p0"], P["m"], P["omega"])
    t = np.linspace(0, 5 * T, 2001)
    ex = exact.pendulum(t, P["q0"], P["p0"], P["m"], P["omega"])
    fig, axs = plt.subplots(1, 2, figsize=(13, 4))
    axs[0].plot(t, ex[0], label="θ")
    axs[0].plot(t, ex[1] / (P["m"] * P["omega"]), label="p_θ/(m ω)")
    axs[0].set_xlabel("t [s]")
    axs[0].set_ylabel("θ and p_θ/(m ω) [rad]")
    axs[0].set_title(f"FVCA Fig. 1: exact pendulum, T = {T:.10f} s")
    plot.place_legend(axs[0])
    axs[0].grid(alpha=0.3)
    trajs = [integrate(sys_, [P["q0"]], [P["p0"]], T / 10, 50, method=m)
             for m in ("midpoint", "simpson")]
    plot.state_vs_exact(trajs, (ex[0], ex[1]), t_exact=t, ax=axs[1],
                        labels=["Newmark (midpoint), h = T/10", "Simpson, h = T/10"])
    axs[1].set_title("FVCA Fig. 2: 10 steps per period, 5 periods")
    path = os.path.join(out, "fvca_fig1_2_pendulum.png")
    plot.savefig(axs[0], path)
    return [path]


def axioms_figures(out):
    """AXIOMS Figures 2-8 on the linearised double pendulum (h = 0.1 t_bar
    unless stated): q and p against the exact solution (1 and 10 t_bar),
    phase portraits (3 t_bar), relative energy error (h = 0.1 and 0.01 t_bar),
    the conserved form phi of Proposition 7, and convergence (h = 0.1 ...
    0.001 t_bar, 1 t_bar)."""
    from . import linear
    plot = _plot()
    plt = plot._plt()
    P = papers.AXIOMS_DOUBLE_PENDULUM
    l = P["g"] / P["omega0"] ** 2
    sysl = systems.linear_double_pendulum(P["m1"], P["m2"], l, P["g"])
    M, K = sysl.params["M"], sysl.params["K"]
    q0, p0 = P["q0"], P["p0"]
    names = {"midpoint": "Newmark", "simpson": "Simpson", "rk4": "RK4"}
    coords = dict(coord_names=("θ₁", "θ₂"), coord_units="rad")
    paths = []

    def run(h, T):
        return [integrate(sysl, q0, p0, h, round(T / h), m) for m in ("midpoint", "rk4", "simpson")]

    def ex(t):
        return linear.exact(M, K, q0, p0, t)

    labels = [f"{names[m]}, h = 0.1 t̄" for m in ("midpoint", "rk4", "simpson")]
    for T, fig_no in ((1, 2), (10, 3)):
        trs = run(0.1, T)
        fig, axs = plt.subplots(1, 2, figsize=(11, 4))
        for c in range(2):
            plot.state_vs_exact(trs, ex, coord=c, ax=axs[c], labels=labels, legend=None, **coords)
        plot.figure_legend(fig, axs[0])
        fig.suptitle(f"AXIOMS Fig. {fig_no}: angles over {T} t̄ (t̄ = 1 s)")
        paths.append(plot.savefig(axs[0], os.path.join(out, f"axioms_fig{fig_no}_q_{T}tbar.png")))
    trs = run(0.1, 10)
    fig, axs = plt.subplots(1, 2, figsize=(11, 4))
    for c in range(2):
        plot.state_vs_exact(trs, ex, coord=c, ax=axs[c], quantity="p", labels=labels,
                            legend=None, **coords)
    plot.figure_legend(fig, axs[0])
    fig.suptitle("AXIOMS Fig. 4: momenta over 10 t̄ (t̄ = 1 s)")
    paths.append(plot.savefig(axs[0], os.path.join(out, "axioms_fig4_p_10tbar.png")))

    trs = [tr for tr in run(0.1, 3) if tr.method != "rk4"]
    te = np.linspace(0, 3, 3001)
    fig, axs = plt.subplots(1, 2, figsize=(11, 4))
    for c in range(2):
        plot.phase_portrait(trs, coord=c, ax=axs[c], exact=ex(te), legend=None,
                            labels=["Newmark, h = 0.1 t̄", "Simpson, h = 0.1 t̄"], **coords)
    plot.figure_legend(fig, axs[0])
    fig.suptitle("AXIOMS Fig. 5: phase portraits over 3 t̄ (t̄ = 1 s)")
    paths.append(plot.savefig(axs[0], os.path.join(out, "axioms_fig5_phase.png")))

    fig, axs = plt.subplots(1, 2, figsize=(11, 4))
    for k, h in enumerate((0.1, 0.01)):
        trs = run(h, 10)
        plot.energy_error(trs, ax=axs[k], labels=[names[tr.method] for tr in trs], legend=None)
        axs[k].set_title(f"h = {h} t̄")
    plot.figure_legend(fig, axs[0])
    fig.suptitle("AXIOMS Fig. 6: relative energy error (Newmark: rounding only; t̄ = 1 s)")
    paths.append(plot.savefig(axs[0], os.path.join(out, "axioms_fig6_energy.png")))

    ax = plot._axes(None)
    for h in (0.1, 0.01):
        tr = integrate(sysl, q0, p0, h, round(10 / h), "simpson")
        xi, zeta = linear.conserved_form(M, K, h)
        phi = linear.quadratic_form(xi, zeta, tr.p, tr.q)
        err = np.abs(phi - phi[0])
        ax.semilogy(tr.t, np.where(err > 0, err, np.nan), lw=0.8, label=f"Simpson, h = {h} t̄")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("|φ − φ₀| [J]")
    ax.set_title("AXIOMS Fig. 7: conserved quadratic form φ (Prop. 7)")
    plot.place_legend(ax)
    ax.grid(True, which="both", alpha=0.3)
    paths.append(plot.savefig(ax, os.path.join(out, "axioms_fig7_phi.png")))

    hs = [0.1, 0.05, 0.025, 0.0125, 0.01, 0.005, 0.0025, 0.001]
    data, rows = {}, []
    for m in ("midpoint", "rk4", "simpson"):
        errs = []
        for h in hs:
            N = round(1 / h)
            q, p = linear.propagate(M, K, q0, p0, h, N, "newmark" if m == "midpoint" else m)
            qe, _ = ex(h * np.arange(N + 1))
            errs.append(float(np.max(np.linalg.norm(q - qe, axis=1))))
            rows.append(dict(method=names[m], h=h, error_q=errs[-1]))
        data[names[m]] = (hs, errs)
    ax = plot.convergence(data, xlabel="h [s] (= h/t̄, t̄ = 1 s)",
                          ylabel="max ‖q − q_ex‖ over 1 t̄ [rad]")
    ax.set_title("AXIOMS Fig. 8: convergence")
    paths.append(plot.savefig(ax, os.path.join(out, "axioms_fig8_convergence.png")))
    write_csv(os.path.join(out, "axioms_fig8_convergence.csv"), rows)
    return paths


def format_table(title, rows, conventions=""):
    """Plain-text table: ours next to the paper's printed value."""
    lines = [title]
    if conventions:
        lines.append(f"  ({conventions})")
    has_T = bool(rows) and "T" in rows[0]
    head = f"  {'T':>5} " if has_T else "  "
    lines.append(f"{head}{'method':<9} {'quantity':<16} {'N':>6} {'ours':>11} {'paper':>9} "
                 f"{'diff':>8}")
    for r in rows:
        lead = f"  {r['T']:>5} " if has_T else "  "
        if r.get("paper") is None:
            val = f"{r['value']:>11.3f}" if r["N"] == "order" else f"{r['value']:>11.4e}"
            lines.append(f"{lead}{r['method']:<9} {r['quantity']:<16} {r['N']:>6} {val} "
                         f"{'-':>9} {'-':>8}")
        elif r["N"] == "order":
            note = f"  [{r['note']}]" if r.get("note") else ""
            lines.append(f"{lead}{r['method']:<9} {r['quantity']:<16} {'order':>6} "
                         f"{r['value']:>11.3f} {r['paper']:>9.2f} {r['rel_diff']:>+8.3f}{note}")
        else:
            note = f"  [{r['note']}]" if r["note"] else ""
            lines.append(f"{lead}{r['method']:<9} {r['quantity']:<16} {r['N']:>6} "
                         f"{r['value']:>11.4e} {r['paper']:>9.3g} {100 * r['rel_diff']:>+7.2f}%"
                         f"{note}")
    return "\n".join(lines)


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _fvca_table_task(ctx):
    rows = fvca_table1()
    ctx.table("FVCA 2023, Table 1 -- nonlinear pendulum, errors in the max norm", rows,
              papers.FVCA_TABLE1["conventions"], "fvca_table1.csv")
    worst = max(abs(r["rel_diff"]) for r in rows if r["N"] != "order")
    ctx.say(f"  largest relative difference from the printed values: {100 * worst:.2f}%")
    return rows


def _axioms_table_task(ctx):
    rows = axioms_table2()
    ctx.table("AXIOMS 2024, Table 2 -- linearised double pendulum, ||e||_inf of p and q "
              "(T in t_bar = 1 s)", rows, papers.AXIOMS_TABLE2["conventions"], "axioms_table2.csv")
    skip = papers.AXIOMS_TABLE2["not_targets"]
    kept = [r for r in rows if (r["T"], r["method"], r["quantity"], r["N"]) not in skip]
    worst = max(abs(r["rel_diff"]) for r in kept if r["N"] != "order")
    worst_o = max(abs(r["rel_diff"]) for r in kept if r["N"] == "order")
    ctx.say(f"  largest relative difference (all but the 5 RK4 entries and the 2 orders built "
            f"on them, flagged above): {100 * worst:.2f}%; largest order difference "
            f"{worst_o:.3f}")
    return rows


def _top_dp_table_task(ctx):
    rows = top_dp_table2()
    ctx.table("TOP 2025, Table 2 -- nonlinear double pendulum, ||e_H||_inf (T in s; the paper "
              "prints this table as an image: ours only)", rows,
              "m1 = m2 = 1, l = g/omega0^2 [" + _top_note("top-t1", "l")
              + "], q(0) = (pi/4, pi/3), p(0) = 0; h = 0.1, 0.05, 0.025 s",
              "top_table2_dp_energy.csv")
    return rows


def _top_tables45_task(ctx, periods):
    rows4, rows5 = top_tables45(periods)
    tag = "_".join(str(p) for p in periods)
    conv = ("TOP Table 3 top, t_bar = exact nutation period 1.8472390 s ["
            + _top_note("top-t3", "nutation period")
            + "], h = t_bar/N, N = 40, 80, 160 per period; N column = total steps")
    ctx.table(f"TOP 2025, Table 4 -- Lagrange top, relative nutation error (T in periods; "
              f"printed as an image: ours only)", rows4, conv, f"top_table4_nutation_{tag}.csv")
    ctx.table(f"TOP 2025, Table 5 -- Lagrange top, relative energy error (T in periods; "
              f"printed as an image: ours only)", rows5, conv, f"top_table5_energy_{tag}.csv")
    return rows4, rows5


def _top_table6_task(ctx):
    rows = top_table6_convergence()
    ctx.table("TOP 2025, Figure 14 -- reduced top (Table 6): max |theta_Simpson(complete) - "
              "theta_RK4(reduced)| over [0, 1 s] at equal h", rows,
              "I = 1, I3 = 2, m g l = 4 pi^2, q0 = (0, pi/6, 0), qdot0 = (0, 0, 2 pi); "
              "h = 0.1 / 2^k", "top_fig14_reduced_convergence.csv")
    return rows


class _Context:
    """Where a reproduction task prints and writes."""

    def __init__(self, out, stream, quick=False):
        self.out = out
        self.stream = stream
        self.quick = quick

    def say(self, text=""):
        print(text, file=self.stream)

    def table(self, title, rows, conventions, csv_name):
        self.say()
        self.say(format_table(title, rows, conventions))
        if self.out:
            write_csv(os.path.join(self.out, csv_name), rows)


#: (name, function, is_figure, in --quick): the reproduction tasks in order.
TASKS = [
    ("FVCA Table 1", _fvca_table_task, False, True),
    ("AXIOMS Table 2", _axioms_table_task, False, True),
    ("FVCA Figures 1-2", lambda ctx: fvca_figures(ctx.out), True, True),
    ("AXIOMS Figures 2-8", lambda ctx: axioms_figures(ctx.out), True, True),
    ("TOP Table 2", _top_dp_table_task, False, False),
    ("TOP Figures 2-5", lambda ctx: top_dp_figures(ctx.out), True, True),
    ("TOP Tables 4-5 (short horizons)", lambda ctx: _top_tables45_task(ctx, (1, 10)), False, True),
    ("TOP Tables 4-5 (100 and 1000 periods)",
     lambda ctx: _top_tables45_task(ctx, (100, 1000)), False, False),
    ("TOP Figure 14 data (Table 6)", _top_table6_task, False, True),
    ("TOP Figures 7-14", lambda ctx: top_figures(ctx.out, ctx.quick), True, True),
]


def run(out=None, quick=False, stream=None, progress=None):
    """Run every reproduction; print the tables; write CSVs and PNGs into ``out``.

    ``quick`` runs the short-horizon subset.  Progress lines go to
    ``progress`` (default: stderr).  Figures need matplotlib and ``out``;
    without matplotlib they are skipped with a message and the tables are
    still produced.  Returns {task name: result}.
    """
    import sys
    import time
    stream = stream or sys.stdout
    progress = progress or sys.stderr
    if out:
        os.makedirs(out, exist_ok=True)
    ctx = _Context(out, stream, quick)
    ctx.say(ERRATA_LINE)
    tasks = [t for t in TASKS if t[3] or not quick]
    results = {}
    t_start = time.perf_counter()
    for k, (name, fn, is_figure, _) in enumerate(tasks, 1):
        if is_figure and not out:
            continue
        if is_figure:
            try:
                _plot()._plt()
            except ImportError as exc:
                print(f"[{k}/{len(tasks)}] {name}: skipped ({exc})", file=progress)
                continue
        print(f"[{k}/{len(tasks)}] {name} ...", file=progress, flush=True)
        t0 = time.perf_counter()
        results[name] = fn(ctx)
        print(f"[{k}/{len(tasks)}] {name} done in {time.perf_counter() - t0:.1f} s",
              file=progress, flush=True)
    if out:
        files = sorted(os.listdir(out))
        ctx.say(f"\nwrote {len(files)} files into {out}: {', '.join(files)}")
    print(f"reproduce: finished in {time.perf_counter() - t_start:.1f} s", file=progress)
    return results
