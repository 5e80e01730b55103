"""Plot helpers draw what they claim (smoke tests on the Agg backend)."""
import math

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import symplectic as sp  # noqa: E402
from symplectic import plot  # noqa: E402


def test_plots_write_pngs(tmp_path):
    pend = sp.systems.pendulum()
    trs = [sp.integrate(pend, [math.pi / 2], [0], 0.05, 200, method=m) for m in ("simpson", "rk4")]
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
    top = sp.systems.lagrange_top()
    q0 = np.array([0.0, math.pi / 3, 0.0])
    tr = sp.integrate(top, q0, top.mass(q0) @ [9.2, 0, 252], 0.01, 300)
    ax = plot.top_axis_trace(tr)
    plot.savefig(ax, tmp_path / "top.png")
    for name in ("e", "phase", "conv", "state", "top"):
        assert (tmp_path / f"{name}.png").stat().st_size > 5000


def test_top_axis_is_a_unit_vector_at_the_right_angle():
    q = np.array([[0.3, 0.7, 5.0], [1.0, 0.2, -2.0]])
    z = plot.top_axis(q)
    assert np.allclose(np.linalg.norm(z, axis=1), 1.0)
    assert np.allclose(z[:, 2], np.cos(q[:, 1]))          # angle to the vertical is theta
