"""The papers' figures recomputed on the built-in systems (PNG files; the
data of a figure that is a table of numbers also as CSV): each function takes
the output directory and returns the paths it wrote."""
import math
import os

import numpy as np

from . import exact, papers, systems
from ._run._integrate import integrate
from ._paper_tables import (reduced_top, top_dp, top_errors, top_table3, top_table6_convergence,
                            write_csv)


# ---------------------------------------------------------------------------
# Figures.  Each function takes the output directory, writes PNG (and the
# data behind it as CSV where it is a table of numbers) and returns the paths.

def plotting():
    from . import plot       # matplotlib; optional dependency
    return plot


def fvca_figures(out):
    """FVCA Figures 1-2: the exact pendulum over five periods, and Newmark vs
    Simpson with 10 steps per period against it."""
    plot = plotting()
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


def top_dp_figures(out):
    """TOP Figures 2-5 on the nonlinear double pendulum: q and p over 10 s at
    h = 0.1 against RK4 at h = 1e-5 (the paper's reference), energy-error
    convergence, and the relative energy error over 10 s."""
    plot = plotting()
    plt = plot._plt()
    dp, q0, p0 = top_dp()
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


_TOP_NAMES = {"midpoint": "Implicit midpoint", "rk4": "RK4", "simpson": "Simpson"}


def top_figures(out, quick=False):
    """TOP Figures 7-14: the Table 3 top (loops: axis trace, nutation against
    the exact solution, energy error, conserved momenta, convergence) and the
    Table 6 reduced top (cusps: axis trace, complete Simpson against reduced
    RK4, convergence of their difference)."""
    plot = plotting()
    top, q0, p0, ex = top_table3()
    return (_top_loops_and_nutation(plot, out, top, q0, p0, ex)
            + _top_energy_and_momenta(plot, out, top, q0, p0, ex)
            + _top_convergence(plot, out, top, q0, p0, ex)
            + _top_cusps(plot, out, quick))


def _top_loops_and_nutation(plot, out, top, q0, p0, ex):
    """TOP Figures 7 and 8."""
    tb, h = ex.period, 0.05
    ax = plot.top_axis_trace([integrate(top, q0, p0, tb / 200, 1000, "simpson")],
                             labels=["Simpson, h = t̄/200, 5 periods"])
    ax.set_title("TOP Fig. 7: axis of the Table 3 top (loops)")
    paths = [plot.savefig(ax, os.path.join(out, "top_fig7_top_loops.png"))]
    trs = [integrate(top, q0, p0, h, int(math.ceil(tb / h)), m) for m in _TOP_NAMES]
    ax = plot._axes(None)
    te = np.linspace(0, trs[0].t[-1], 1000)
    ax.plot(te, ex.theta(te), "k-", lw=1, label="exact (Jacobi sn)")
    for tr in trs:
        ax.plot(tr.t, tr.q[:, 1], "o--", ms=3, lw=0.8, label=f"{_TOP_NAMES[tr.method]}, h = {h} s")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("nutation θ [rad]")
    ax.set_title(f"TOP Fig. 8: nutation over one period (t̄ = {tb:.7f} s)")
    plot.place_legend(ax)
    ax.grid(alpha=0.3)
    paths.append(plot.savefig(ax, os.path.join(out, "top_fig8_nutation.png")))
    return paths


def _top_energy_and_momenta(plot, out, top, q0, p0, ex):
    """TOP Figures 9 and 10 (10 nutation periods)."""
    from . import analysis
    names, h = _TOP_NAMES, 0.05
    trs = [integrate(top, q0, p0, h, int(math.ceil(10 * ex.period / h)), m) for m in names]
    ax = plot.energy_error(trs, labels=[f"{names[tr.method]}, h = {h} s" for tr in trs])
    ax.set_title("TOP Fig. 9: relative energy error, 10 nutation periods")
    paths = [plot.savefig(ax, os.path.join(out, "top_fig9_top_energy.png"))]
    fig, axs = plot._plt().subplots(1, 2, figsize=(11, 4))
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
    return paths


def _top_convergence(plot, out, top, q0, p0, ex):
    """TOP Figure 11."""
    Ns, tb = [40, 80, 160, 320], ex.period
    data = {}
    for m in _TOP_NAMES:
        e4, e5 = zip(*[top_errors(top, q0, p0, ex, m, N, 1)[:2] for N in Ns])
        data[f"{_TOP_NAMES[m]}, nutation"] = ([tb / N for N in Ns], e4)
        data[f"{_TOP_NAMES[m]}, energy"] = ([tb / N for N in Ns], e5)
    ax = plot.convergence(data, xlabel="h [s]", ylabel="relative error, max over one period")
    ax.set_title("TOP Fig. 11: nutation and energy error convergence")
    return [plot.savefig(ax, os.path.join(out, "top_fig11_top_convergence.png"))]


def _top_cusps(plot, out, quick):
    """TOP Figures 12-14: the Table 6 top and its reduced model."""
    from . import analysis
    rtop, rq0, rp0, red, y0 = reduced_top()
    ax = plot.top_axis_trace([integrate(rtop, rq0, rp0, 0.001, 3000, "simpson")],
                             labels=["Simpson, h = 1e-3 s, 3 s"])
    ax.set_title("TOP Fig. 12: axis of the Table 6 top (cusps)")
    paths = [plot.savefig(ax, os.path.join(out, "top_fig12_top_cusps.png"))]
    h_ref = 1e-4 if quick else 1e-5
    t_ref, y_ref = analysis.rk4_ode(red, y0, h_ref, round(1.0 / h_ref))
    trs = [integrate(rtop, rq0, rp0, 0.1, 10, m) for m in _TOP_NAMES]
    ax = plot._axes(None)
    ax.plot(t_ref, y_ref[:, 1], "k-", lw=1, label=f"RK4 on the reduced model, h = {h_ref:g} s")
    for tr in trs:
        ax.plot(tr.t, tr.q[:, 1], "o--", ms=3, lw=0.8, label=f"{_TOP_NAMES[tr.method]}, h = 0.1 s")
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


_AXIOMS_NAMES = {"midpoint": "Newmark", "simpson": "Simpson", "rk4": "RK4"}
_AXIOMS_COORDS = dict(coord_names=("θ₁", "θ₂"), coord_units="rad")


class _AxiomsCase:
    """The linearised double pendulum of AXIOMS Table 1 and its exact solution."""

    def __init__(self):
        P = papers.AXIOMS_DOUBLE_PENDULUM
        l = P["g"] / P["omega0"] ** 2
        self.system = systems.linear_double_pendulum(P["m1"], P["m2"], l, P["g"])
        self.M, self.K = self.system.params["M"], self.system.params["K"]
        self.q0, self.p0 = P["q0"], P["p0"]

    def run(self, h, T):
        return [integrate(self.system, self.q0, self.p0, h, round(T / h), m)
                for m in ("midpoint", "rk4", "simpson")]

    def exact(self, t):
        from . import linear
        return linear.exact(self.M, self.K, self.q0, self.p0, t)


def axioms_figures(out):
    """AXIOMS Figures 2-8 on the linearised double pendulum (h = 0.1 t_bar
    unless stated): q and p against the exact solution (1 and 10 t_bar),
    phase portraits (3 t_bar), relative energy error (h = 0.1 and 0.01 t_bar),
    the conserved form phi of Proposition 7, and convergence (h = 0.1 ...
    0.001 t_bar, 1 t_bar)."""
    plot, case = plotting(), _AxiomsCase()
    return (_axioms_states(plot, out, case) + _axioms_phase_and_energy(plot, out, case)
            + _axioms_phi(plot, out, case) + _axioms_convergence(plot, out, case))


def _axioms_states(plot, out, case):
    """AXIOMS Figures 2-4: angles over 1 and 10 t_bar, momenta over 10 t_bar."""
    labels = [f"{_AXIOMS_NAMES[m]}, h = 0.1 t̄" for m in ("midpoint", "rk4", "simpson")]
    paths = []
    for T, fig_no, quantity in ((1, 2, "q"), (10, 3, "q"), (10, 4, "p")):
        trs = case.run(0.1, T)
        fig, axs = plot._plt().subplots(1, 2, figsize=(11, 4))
        for c in range(2):
            plot.state_vs_exact(trs, case.exact, coord=c, ax=axs[c], quantity=quantity,
                                labels=labels, legend=None, **_AXIOMS_COORDS)
        plot.figure_legend(fig, axs[0])
        what = "angles" if quantity == "q" else "momenta"
        fig.suptitle(f"AXIOMS Fig. {fig_no}: {what} over {T} t̄ (t̄ = 1 s)")
        paths.append(plot.savefig(axs[0], os.path.join(
            out, f"axioms_fig{fig_no}_{quantity}_{T}tbar.png")))
    return paths


def _axioms_phase_and_energy(plot, out, case):
    """AXIOMS Figures 5 (phase portraits over 3 t_bar) and 6 (energy error)."""
    trs = [tr for tr in case.run(0.1, 3) if tr.method != "rk4"]
    te = np.linspace(0, 3, 3001)
    fig, axs = plot._plt().subplots(1, 2, figsize=(11, 4))
    for c in range(2):
        plot.phase_portrait(trs, coord=c, ax=axs[c], exact=case.exact(te), legend=None,
                            labels=["Newmark, h = 0.1 t̄", "Simpson, h = 0.1 t̄"],
                            **_AXIOMS_COORDS)
    plot.figure_legend(fig, axs[0])
    fig.suptitle("AXIOMS Fig. 5: phase portraits over 3 t̄ (t̄ = 1 s)")
    paths = [plot.savefig(axs[0], os.path.join(out, "axioms_fig5_phase.png"))]
    fig, axs = plot._plt().subplots(1, 2, figsize=(11, 4))
    for k, h in enumerate((0.1, 0.01)):
        trs = case.run(h, 10)
        plot.energy_error(trs, ax=axs[k], labels=[_AXIOMS_NAMES[tr.method] for tr in trs],
                          legend=None)
        axs[k].set_title(f"h = {h} t̄")
    plot.figure_legend(fig, axs[0])
    fig.suptitle("AXIOMS Fig. 6: relative energy error (Newmark: rounding only; t̄ = 1 s)")
    paths.append(plot.savefig(axs[0], os.path.join(out, "axioms_fig6_energy.png")))
    return paths


def _axioms_phi(plot, out, case):
    """AXIOMS Figure 7: the conserved quadratic form of Proposition 7."""
    from . import linear
    ax = plot._axes(None)
    for h in (0.1, 0.01):
        tr = integrate(case.system, case.q0, case.p0, h, round(10 / h), "simpson")
        xi, zeta = linear.conserved_form(case.M, case.K, h)
        phi = linear.quadratic_form(xi, zeta, tr.p, tr.q)
        err = np.abs(phi - phi[0])
        ax.semilogy(tr.t, np.where(err > 0, err, np.nan), lw=0.8, label=f"Simpson, h = {h} t̄")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("|φ − φ₀| [J]")
    ax.set_title("AXIOMS Fig. 7: conserved quadratic form φ (Prop. 7)")
    plot.place_legend(ax)
    ax.grid(True, which="both", alpha=0.3)
    return [plot.savefig(ax, os.path.join(out, "axioms_fig7_phi.png"))]


def _axioms_convergence(plot, out, case):
    """AXIOMS Figure 8 (and its data as CSV): convergence over 1 t_bar."""
    from . import linear
    hs = [0.1, 0.05, 0.025, 0.0125, 0.01, 0.005, 0.0025, 0.001]
    data, rows = {}, []
    for m in ("midpoint", "rk4", "simpson"):
        errs = []
        for h in hs:
            N = round(1 / h)
            q, p = linear.propagate(case.M, case.K, case.q0, case.p0, h, N,
                                    "newmark" if m == "midpoint" else m)
            qe, _ = case.exact(h * np.arange(N + 1))
            errs.append(float(np.max(np.linalg.norm(q - qe, axis=1))))
            rows.append(dict(method=_AXIOMS_NAMES[m], h=h, error_q=errs[-1]))
        data[_AXIOMS_NAMES[m]] = (hs, errs)
    ax = plot.convergence(data, xlabel="h [s] (= h/t̄, t̄ = 1 s)",
                          ylabel="max ‖q − q_ex‖ over 1 t̄ [rad]")
    ax.set_title("AXIOMS Fig. 8: convergence")
    path = plot.savefig(ax, os.path.join(out, "axioms_fig8_convergence.png"))
    write_csv(os.path.join(out, "axioms_fig8_convergence.csv"), rows)
    return [path]
