"""store_every= and t_eval= with a force (issue: a user's first week, item 4).

A forced run keeps its work and impulse at the stored rows only: with
``store_every`` summed over the steps between them in the C loop (bitwise
the rows of the run that keeps every step), with ``t_eval`` from the step's
own quadrature of the work, whose error is checked here against an
independent reference (SciPy's DOP853 on the ODE with the work as a state).
"""
import math
import tracemalloc

import numpy as np
import pytest

import symplectic as sp
from support.models import fitted_order
from symplectic import forces

ALL = list(sp.methods())
L = 9.81 / (2 * math.pi) ** 2
DP_Q0 = [math.pi / 4, math.pi / 3]


def damped_dp():
    """The papers' double pendulum with joint friction (C damping)."""
    return sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81, damping=(0.3, 0.2))


@pytest.mark.parametrize("method", ALL)
def test_store_every_with_a_force_keeps_the_per_step_rows_bitwise(method):
    S, N = damped_dp(), 1003
    held = forces.zero_order_hold(0.2 * np.sin(0.01 * np.arange(N))[:, None] * [1.0, -0.5])
    full = sp.integrate(S, DP_Q0, [0, 0], 0.01, N, method, force=held)
    for k in (1, 10, 100, N + 5):
        th = sp.integrate(S, DP_Q0, [0, 0], 0.01, N, method, force=held, store_every=k)
        idx = np.unique(np.r_[np.arange(0, N + 1, min(k, N)), N])
        for key in ("t", "q", "p", "work", "impulse"):
            assert np.array_equal(getattr(th, key), getattr(full, key)[idx]), (k, key)
        assert th.work.shape == (len(idx),) and th.impulse.shape == (len(idx), 2)
        assert th.newton_iterations.sum() == full.newton_iterations.sum()


def test_integrate_many_with_a_force_keeps_integrate_rows():
    S, N = damped_dp(), 400
    Q0 = np.array([DP_Q0, [0.5, -0.2], [1.0, 0.3]])
    E = sp.integrate_many(S, Q0, np.zeros_like(Q0), 0.01, N, store_every=30, threads=2)
    T = sp.integrate_many(S, Q0, np.zeros_like(Q0), 0.01, N, t_eval=[0.5, 1.234, 4.0])
    for k in range(3):
        a = sp.integrate(S, Q0[k], [0, 0], 0.01, N, store_every=30)
        b = sp.integrate(S, Q0[k], [0, 0], 0.01, N, t_eval=[0.5, 1.234, 4.0])
        for key in ("q", "p", "work", "impulse"):
            assert np.array_equal(getattr(E, key)[k], getattr(a, key)), key
            assert np.array_equal(getattr(T, key)[k], getattr(b, key)), key


# ---------------------------------------------------------------- t_eval: the order of the work
OM, C, A, W = 2.0, 0.4, 1.5, 1.3      # pendulum: M = 1, V = OM^2 (1 - cos q)


def _drive(t, q, v):
    return np.array([A * math.cos(W * t)])


def _driven_pendulum():
    S = sp.systems.pendulum(m=1.0, omega=OM)
    f = forces.linear_damping([[C]]) + forces.from_callable(_drive, depends_on="")
    return S, f


def _reference(times):
    """(q, p, W) at the times: the forced ODE with dW/dt = F . qdot, by DOP853."""
    integrate = pytest.importorskip("scipy.integrate")

    def rhs(t, y):
        q, v, _ = y
        F = -C * v + A * math.cos(W * t)
        return [v, -OM ** 2 * math.sin(q) + F, F * v]

    sol = integrate.solve_ivp(rhs, (0.0, times[-1]), [1.0, 0.0, 0.0], method="DOP853",
                              rtol=1e-13, atol=1e-13, t_eval=times)
    return sol.y


@pytest.mark.parametrize("method, order, p_order, Ns", [
    ("midpoint", 2, 2, (200, 400, 800, 1600)),
    ("simpson", 3, 3, (50, 100, 200, 400)),
    ("lobatto4", 4, 4, (25, 50, 100, 200)),
    ("lobatto5", 5, 5, (20, 40, 80)),
    ("rk4", 4, 3, (50, 100, 200, 400)),
])
def test_t_eval_work_between_the_steps_has_the_dense_order(method, order, p_order, Ns):
    """The work at output times inside the steps, against the exact work: the
    step's power at its quadrature points interpolated and integrated, of
    the order of the dense qdot and p (min(s, 2s - 2) for the Galerkin
    schemes: the points' velocities are the interpolating polynomial's; 2
    for the midpoint rule), and 4 for rk4 (its stages)."""
    T = 4.0
    # 800 times at generic positions in the steps (not at the quadrature points)
    te = np.sort((np.arange(1, 801) * (math.sqrt(5) - 1) / 2) % 1.0) * T
    ref = _reference(te)
    S, f = _driven_pendulum()
    hs, ew, eb = [], [], []
    for N in Ns:
        tr = sp.integrate(S, [1.0], [0.0], T / N, N, method, force=f, t_eval=te)
        assert tr.work.shape == (800,) and tr.impulse.shape == (800, 1)
        hs.append(T / N)
        ew.append(np.max(np.abs(tr.work - ref[2])))
        eb.append(np.max(np.abs((tr.energy - tr.work) - (tr.energy[0] - tr.work[0]))))
    assert abs(fitted_order(hs, ew) - order) < 0.3, ew
    # and energy - work, the conserved quantity of the forced run, keeps the
    # order of the dense p (Trajectory.dense_state)
    assert fitted_order(hs, eb) > p_order - 0.4, eb


def test_t_eval_work_at_the_nodes_is_the_per_step_runs():
    S, f = _driven_pendulum()
    full = sp.integrate(S, [1.0], [0.0], 0.01, 400, "simpson", force=f)
    tr = sp.integrate(S, [1.0], [0.0], 0.01, 400, "simpson", force=f, t_eval=full.t[::40])
    assert np.allclose(tr.work, full.work[::40], rtol=1e-15, atol=1e-16)
    assert np.allclose(tr.impulse, full.impulse[::40], rtol=1e-15, atol=1e-16)
    assert tr.work[-1] == full.work[-1]           # the span's end: the step's own value


# ---------------------------------------------------------------- the acceptance
@pytest.mark.slow
def test_a_million_steps_thinned_with_a_force():
    """A damped double pendulum over 1e6 steps: store_every=100 and 101 output
    times give the unthinned run's states (bitwise at kept steps) and work,
    and take the memory of the run without a force."""
    S, N = damped_dp(), 1_000_000
    full = sp.integrate(S, DP_Q0, [0, 0], 0.01, N)
    th = sp.integrate(S, DP_Q0, [0, 0], 0.01, N, store_every=100)
    for key in ("t", "q", "p", "work", "impulse"):
        assert np.array_equal(getattr(th, key), getattr(full, key)[::100]), key
    te = np.linspace(0.0, 1e4, 101)
    tt = sp.integrate(S, DP_Q0, [0, 0], 0.01, N, t_eval=te)
    k = np.arange(0, N + 1, 10_000)
    assert np.allclose(tt.q, full.q[k], rtol=0, atol=1e-12)
    assert np.allclose(tt.p, full.p[k], rtol=0, atol=1e-12)
    assert np.allclose(tt.work, full.work[k], rtol=1e-13, atol=1e-15)
    del full
    # memory: the forced thinned run allocates what the unforced one does, plus
    # its work and impulse rows (3 doubles a row here)
    free = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
    peaks = {}
    for name, system in (("forced", S), ("free", free)):
        tracemalloc.start()
        sp.integrate(system, DP_Q0, [0, 0], 0.01, N, store_every=100)
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks["forced"] <= peaks["free"] + 3 * 8 * (N // 100 + 1) + 64 * 1024, peaks


def test_cli_damping_with_store_every_and_t_eval(tmp_path):
    from symplectic.__main__ import main
    S = sp.systems.double_pendulum(damping=(0.3, 0.2))
    ref = sp.integrate(S, [np.pi / 4, np.pi / 3], [0, 0], 0.01, 300)
    out = tmp_path / "a.npz"
    assert main(["run", "double_pendulum", "--damping", "0.3", "0.2", "--steps", "300",
                 "--store-every", "7", "--out", str(out)]) == 0
    d = np.load(out)
    idx = np.r_[np.arange(0, 301, 7), 300]
    assert np.array_equal(d["q"], ref.q[idx]) and np.array_equal(d["work"], ref.work[idx])
    assert main(["run", "double_pendulum", "--damping", "0.3", "0.2", "--steps", "300",
                 "--t-eval", "1.0", "2.0", "--out", str(out)]) == 0
    d = np.load(out)
    assert np.allclose(d["work"], ref.work[[100, 200]], rtol=1e-14, atol=1e-16)
