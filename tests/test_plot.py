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
from figcheck import axis_labels, has_unit, legend_overlaps, legends  # noqa: E402


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
