"""Plot helpers draw what they claim, name every axis with a unit, and keep
their legends off the data (Agg backend)."""
import math

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import symplectic as sp  # noqa: E402
from symplectic import plot  # noqa: E402
from support.figcheck import axis_labels, has_unit, legend_overlaps, legends  # noqa: E402


@pytest.fixture(scope="module")
def pendulum_trajs():
    pend = sp.systems.pendulum()
    return [sp.integrate(pend, [math.pi / 2], [0], 0.05, 200, method=m) for m in ("simpson", "rk4")]


@pytest.fixture(scope="module")
def top_traj():
    top = sp.systems.lagrange_top()
    q0 = np.array([0.0, math.pi / 3, 0.0])
    return sp.integrate(top, q0, top.mass(q0) @ [9.2, 0, 252], 0.01, 300)


def test_plots_write_pngs(tmp_path, pendulum_trajs, top_traj):
    trs = pendulum_trajs
    ax = plot.energy_error(trs)
    assert len(ax.get_lines()) == 2
    plot.savefig(ax, tmp_path / "e.png")
    t = np.linspace(0, 10, 500)
    ax = plot.phase_portrait(trs[0], exact=sp.exact.pendulum(t, math.pi / 2))
    plot.savefig(ax, tmp_path / "phase.png")
    ax = plot.convergence({"simpson": ([0.1, 0.05, 0.025], [1e-4, 6.25e-6, 3.9e-7])})
    assert "order 4.00" in ax.get_legend().get_texts()[0].get_text()
    plot.savefig(ax, tmp_path / "conv.png")
    ax = plot.state_vs_exact(trs[0], lambda tt: sp.exact.pendulum(tt, math.pi / 2))
    plot.savefig(ax, tmp_path / "state.png")
    ax = plot.top_axis_trace(top_traj)
    plot.savefig(ax, tmp_path / "top.png")
    for name in ("e", "phase", "conv", "state", "top"):
        assert (tmp_path / f"{name}.png").stat().st_size > 5000


def test_top_axis_is_a_unit_vector_at_the_right_angle():
    q = np.array([[0.3, 0.7, 5.0], [1.0, 0.2, -2.0]])
    z = plot.top_axis(q)
    assert np.allclose(np.linalg.norm(z, axis=1), 1.0)
    assert np.allclose(z[:, 2], np.cos(q[:, 1]))          # angle to the vertical is theta


# ---------------------------------------------------------------- names and units

def test_labels_of_builtin_systems_have_names_and_units(pendulum_trajs, top_traj):
    ax = plot.phase_portrait(pendulum_trajs)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("θ [rad]", "p_θ [kg m² s⁻¹]")
    ax = plot.state_vs_exact(top_traj, lambda t: (np.ones((len(t), 3)), None), coord=1)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("t [s]", "θ [rad]")
    ax = plot.state_vs_exact(top_traj, lambda t: (None, np.ones((len(t), 3))), coord=2,
                             quantity="p")
    assert ax.get_ylabel() == "p_ψ [kg m² s⁻¹]"
    dp = sp.systems.double_pendulum()
    tr = sp.integrate(dp, [0.1, 0.2], [0, 0], 0.01, 10)
    ax = plot.phase_portrait(tr, coord=1)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("θ₂ [rad]", "p_θ₂ [kg m² s⁻¹]")
    ax = plot.energy_error(tr)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("t [s]", "relative energy error |H − H₀|/|H₀|")
    ax = plot.energy_error(tr, relative=False)
    assert ax.get_ylabel() == "energy error |H − H₀| [J]"
    ax = plot.convergence({"a": ([0.1, 0.05], [1e-3, 1e-4])})
    assert ax.get_xlabel() == "h [s]"
    ax = plot.top_axis_trace(top_traj)
    assert all(has_unit(lab) for _, _, lab in axis_labels(ax.get_figure()))
    plt.close("all")


def test_chain_and_generic_systems():
    chain = sp.systems.pendulum_chain(3)
    tr = sp.integrate(chain, [0.1, 0.2, 0.3], [0, 0, 0], 0.01, 5)
    ax = plot.phase_portrait(tr, coord=2)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("θ₃ [rad]", "p_θ₃ [kg m² s⁻¹]")
    lin = sp.systems.linear(np.eye(2), np.diag([1.0, 4.0]))
    tr = sp.integrate(lin, [0.1, 0.2], [0, 0], 0.01, 5)
    ax = plot.phase_portrait(tr, coord=1)                  # units unknown: names only
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("q₁", "p₁")
    ax = plot.phase_portrait(tr, coord=1, coord_names=["x", "y"], coord_units="m")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("y [m]", "p_y [kg m s⁻¹]")
    ax = plot.state_vs_exact(tr, lambda t: (np.zeros((len(t), 2)), np.zeros((len(t), 2))),
                             quantity="p", coord_names=["s", "φ"], coord_units=["m", "rad"],
                             coord=1, time_label="t [ms]")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("t [ms]", "p_φ [kg m² s⁻¹]")
    ax = plot.phase_portrait(tr, coord=0, coord_names=["x", "y"], coord_units=["mm", None])
    assert ax.get_ylabel() == "p_x [J s/mm]"
    plt.close("all")


def test_sympy_system_names_its_coordinates():
    sy = pytest.importorskip("sympy")
    th, thd = sy.symbols("theta1 thetadot1")
    L = sy.Rational(1, 2) * thd ** 2 + sy.cos(th)
    system = sp.System.from_sympy(L, [th], [thd], compile=False)
    tr = sp.integrate(system, [0.5], [0.0], 0.01, 5)
    ax = plot.phase_portrait(tr)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("θ₁", "p_θ₁")
    plt.close("all")


def test_legend_option():
    lin = sp.systems.pendulum()
    tr = sp.integrate(lin, [0.5], [0.0], 0.01, 5)
    assert plot.energy_error(tr, legend=None).get_legend() is None
    ax = plot.energy_error(tr, legend="best")
    assert ax.get_legend() is not None and ax.get_legend().get_bbox_to_anchor() == ax.bbox
    with pytest.raises(ValueError, match="legend must be 'right', 'best' or None, got 'left'"):
        plot.energy_error(tr, legend="left")
    plt.close("all")


# ---------------------------------------------------------------- legends off the data

def _check(ax):
    fig = ax.get_figure()
    fig.tight_layout()                       # what savefig does before writing
    assert legends(fig), "no legend drawn"
    assert legend_overlaps(fig) == []
    for where, axis, label in axis_labels(fig):
        assert label and has_unit(label), (where, axis, label)
    plt.close(fig)


def test_overlap_check_detects_a_legend_on_the_data():
    """The check itself: a legend placed in the middle of a dense curve is found."""
    fig, ax = plt.subplots()
    t = np.linspace(0, 1, 400)
    ax.plot(t, np.sin(40 * t), label="data")
    ax.plot(t, np.cos(40 * t), label="more")
    ax.legend(loc="center")
    hits = legend_overlaps(fig)
    assert hits and {h[1] for h in hits} == {"data", "more"}
    # a segment crossing the box with no vertex inside is found too
    fig2, ax2 = plt.subplots()
    ax2.plot([0, 1], [0.5, 0.5], "-", label="segment")
    ax2.set_xlim(0, 1)
    ax2.set_ylim(0, 1)
    ax2.legend(loc="center")
    assert legend_overlaps(fig2) == [(0, "segment", legend_overlaps(fig2)[0][2])]
    plt.close("all")


def test_every_plot_function_keeps_its_legend_off_the_data(pendulum_trajs, top_traj):
    trs = pendulum_trajs
    t = np.linspace(0, 10, 500)
    _check(plot.energy_error(trs))
    _check(plot.energy_error(trs, relative=False))
    _check(plot.phase_portrait(trs, exact=sp.exact.pendulum(t, math.pi / 2)))
    _check(plot.convergence({"simpson": ([0.1, 0.05, 0.025], [1e-4, 6.25e-6, 3.9e-7]),
                             "midpoint": ([0.1, 0.05, 0.025], [1e-2, 2.5e-3, 6.2e-4])},
                            ylabel="max |q − q_ex| [rad]"))
    _check(plot.state_vs_exact(trs, lambda tt: sp.exact.pendulum(tt, math.pi / 2)))
    _check(plot.state_vs_exact(trs, lambda tt: sp.exact.pendulum(tt, math.pi / 2),
                               quantity="p"))
    _check(plot.top_axis_trace(top_traj))


def test_figure_legend_below_two_panels(pendulum_trajs):
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    for c, qty in enumerate("qp"):
        plot.state_vs_exact(pendulum_trajs, lambda tt: sp.exact.pendulum(tt, math.pi / 2),
                            ax=axs[c], quantity=qty, legend=None)
    leg = plot.figure_legend(fig, axs[0])
    assert [t.get_text() for t in leg.get_texts()] == ["exact", "simpson, h = 0.05",
                                                       "rk4, h = 0.05"]
    fig.tight_layout()
    assert legend_overlaps(fig) == []
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert leg.get_window_extent(r).y1 <= min(ax.get_window_extent(r).y0 for ax in axs)
    plt.close(fig)


def test_right_legend_makes_room_in_a_grid_of_panels(pendulum_trajs):
    """A legend outside the right edge of a left panel does not cover the right panel,
    even one added after the plot call and without any layout call by the user."""
    fig = plt.figure(figsize=(10, 4))
    plot.energy_error(pendulum_trajs, ax=fig.add_subplot(1, 2, 1))
    ax2 = fig.add_subplot(1, 2, 2)
    t = np.linspace(0, 1, 2000)
    ax2.plot(t, np.sin(60 * t), label="dense")        # fills the right panel
    assert fig.get_layout_engine() is not None
    assert legend_overlaps(fig) == []
    plt.close(fig)
    # a figure that already has a layout engine keeps it
    fig, axs = plt.subplots(1, 2, layout="constrained")
    plot.energy_error(pendulum_trajs, ax=axs[0])
    assert type(fig.get_layout_engine()).__name__ == "ConstrainedLayoutEngine"
    assert legend_overlaps(fig) == []
    plt.close(fig)


# ---------------------------------------------------------------- forced runs: the energy balance

@pytest.fixture(scope="module")
def forced_trajs():
    """A double pendulum with joint friction (the system's own damping) and one damped by a
    ``force=``; in both, H falls by about half of |H0| while H - W is conserved."""
    damped = sp.systems.double_pendulum(damping=(0.3, 0.2))
    a = sp.integrate(damped, [0.6, -0.4], [0.0, 0.0], 0.01, 500)
    dp = sp.systems.double_pendulum()
    b = sp.integrate(dp, [0.6, -0.4], [0.0, 0.0], 0.02, 250, method="lobatto4",
                     force=sp.forces.linear_damping(np.diag([0.4, 0.1])))
    return [a, b]


def _ydata(line):
    return np.asarray(line.get_ydata(), float)


def test_energy_balance_plots_the_balance_and_the_work(forced_trajs):
    a, b = forced_trajs
    assert abs(a.energy[-1] - a.energy[0]) > 0.1 * abs(a.energy[0])   # H changes: forced
    ax_bal, ax_work = plot.energy_balance(forced_trajs)
    for k, tr in enumerate(forced_trajs):
        bal = sp.analysis.energy_balance(tr)
        scale = max(abs(tr.energy[0]), np.max(np.abs(tr.energy - tr.energy[0])),
                    np.max(np.abs(tr.work)))
        line = ax_bal.get_lines()[k]
        assert np.array_equal(line.get_xdata(), tr.t)
        y = _ydata(line)
        ok = np.isfinite(y)                                # exact zeros (t = 0) are not drawn
        assert ok.sum() >= len(y) - 2
        np.testing.assert_allclose(y[ok], np.abs(bal.residual[ok]) / scale, rtol=1e-12)
        assert np.nanmax(y) == pytest.approx(bal.relative, rel=1e-12)
        assert bal.relative < 1e-6                           # conserved to the scheme's error
        w, dH = ax_work.get_lines()[2 * k: 2 * k + 2]
        np.testing.assert_array_equal(_ydata(w), tr.work)
        np.testing.assert_allclose(_ydata(dH), tr.energy - tr.energy[0], rtol=0, atol=1e-14)
        assert w.get_color() == dH.get_color() == line.get_color()
        assert dH.get_linestyle() == "--"
    assert ax_bal.get_ylabel() == ("relative energy balance error\n"
                                   "|H − W − H₀| / max(|H₀|, |H − H₀|, |W|)")
    assert ax_bal.get_yscale() == "log" and ax_work.get_yscale() == "linear"
    assert ax_work.get_ylabel() == "work W, energy change H − H₀ [J]"
    assert ax_work.get_xlabel() == "t [s]"
    assert [t.get_text() for t in ax_work.get_legend().get_texts()][:2] == [
        "simpson, h = 0.01: W", "simpson, h = 0.01: H − H₀"]
    plt.close("all")


def test_energy_balance_absolute_and_given_axes(forced_trajs):
    a = forced_trajs[0]
    fig, axs = plt.subplots(2, 1, sharex=True)
    got = plot.energy_balance(a, ax=axs, relative=False, energy_unit="kJ", labels=["friction"])
    assert got[0] is axs[0] and got[1] is axs[1]
    y = _ydata(axs[0].get_lines()[0])
    ok = np.isfinite(y)
    np.testing.assert_array_equal(y[ok], np.abs(sp.analysis.energy_balance(a).residual)[ok])
    assert axs[0].get_ylabel() == "energy balance error |H − W − H₀| [kJ]"
    assert axs[1].get_legend().get_texts()[0].get_text() == "friction: W"
    with pytest.raises(ValueError, match="ax must be a pair of axes"):
        plot.energy_balance(a, ax=[axs[0]])
    plt.close("all")


def test_energy_balance_of_an_unforced_run_is_its_energy_error(pendulum_trajs):
    tr = pendulum_trajs[0]
    ax_bal, ax_work = plot.energy_balance(tr)
    y = _ydata(ax_bal.get_lines()[0])
    e = np.abs(tr.energy - tr.energy[0]) / abs(tr.energy[0])
    ok = np.isfinite(y)
    np.testing.assert_allclose(y[ok], e[ok], rtol=1e-12)
    assert not np.any(_ydata(ax_work.get_lines()[0]))           # W = 0
    plt.close("all")


def test_energy_error_of_a_forced_run_draws_the_balance(forced_trajs, pendulum_trajs):
    """Not |H − H0|/|H0| (0.1-1 here, the force's doing) but the balance error, labelled so."""
    a, b = forced_trajs
    ax = plot.energy_error([a, b, pendulum_trajs[0]])
    assert ax.get_ylabel() == "relative energy error |H − W − H₀|/|H₀|"
    for line, tr in zip(ax.get_lines(), [a, b]):
        y = _ydata(line)
        ok = np.isfinite(y)
        want = np.abs(sp.analysis.energy_balance(tr).residual) / abs(tr.energy[0])
        np.testing.assert_allclose(y[ok], want[ok], rtol=1e-12)
        assert np.nanmax(y) < 1e-6 < np.max(np.abs(tr.energy / tr.energy[0] - 1))
    un = pendulum_trajs[0]                                # unforced in the same list: W = 0
    y = _ydata(ax.get_lines()[2])
    ok = np.isfinite(y)
    np.testing.assert_allclose(y[ok], (np.abs(un.energy - un.energy[0]) / abs(un.energy[0]))[ok],
                               rtol=1e-12)
    ax = plot.energy_error(a, relative=False)
    assert ax.get_ylabel() == "energy error |H − W − H₀| [J]"
    plt.close("all")


def test_energy_balance_keeps_its_legends_off_the_data(forced_trajs):
    ax_bal, ax_work = plot.energy_balance(forced_trajs)
    fig = ax_bal.get_figure()
    fig.tight_layout()
    assert len(legends(fig)) == 2
    assert legend_overlaps(fig) == []
    for where, axis, label in axis_labels(fig):
        assert label and has_unit(label), (where, axis, label)
    plt.close(fig)
