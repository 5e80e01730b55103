"""sp.Integrator: one run kept as an object.

Its pieces -- propagate in chunks of any size, step() -- give bitwise the
states of one ``integrate`` call from the same start, for every method of the
registry and every kind of system (built-in, linear closed form and Newton,
Python callables in three forms, compiled, SymPy, constrained, forced by
damping, a callable, a held array); its forced runs continue the work and
impulse; its options are checked per method; its state, reset, counts and
failures behave as documented."""
import math

import numpy as np
import pytest

import symplectic as sp
from support.cases import KINDS, method_cases

Q0, V0 = np.array([math.pi / 4, math.pi / 3]), np.array([0.4, -0.2])
H, N = 0.01, 37
CHUNKS = [[37], [1] * 37, [5, 1, 0, 13, 18], [36, 1], [2, 3, 5, 7, 11, 9]]


def pieces(it, chunks):
    """The rows of the run propagated in chunks (the first row once)."""
    rows_q, rows_p, rows_t = [it.q[None]], [it.p[None]], [np.array([it.t])]
    for c in chunks:
        before = it.q
        tr = it.propagate(n_steps=c)
        assert len(tr.t) == c + 1
        assert np.array_equal(tr.q[0], before)
        rows_q.append(tr.q[1:])
        rows_p.append(tr.p[1:])
        rows_t.append(tr.t[1:])
    return np.vstack(rows_q), np.vstack(rows_p), np.concatenate(rows_t)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("method", method_cases())
def test_chunks_are_one_integrate_call_bitwise(kind, method, system_of):
    system, closed = system_of(kind)
    p0 = system.momentum(Q0, V0)
    full = sp.integrate(system, Q0, p0, H, N, method, closed_form=closed, t0=0.25)
    for chunks in CHUNKS:
        it = sp.Integrator(system, H, Q0, p0, method=method, closed_form=closed, t0=0.25)
        q, p, t = pieces(it, chunks)
        assert np.array_equal(q, full.q) and np.array_equal(p, full.p), chunks
        assert np.array_equal(t, full.t)          # the C driver's node times, closed form too
        assert it.steps == N and it.t == full.t[-1]


@pytest.mark.parametrize("method", method_cases())
def test_step_is_the_next_row(method):
    system = sp.systems.double_pendulum()
    p0 = system.momentum(Q0, V0)
    full = sp.integrate(system, Q0, p0, H, N, method)
    it = sp.Integrator(system, H, Q0, p0, method=method)
    for k in range(1, N + 1):
        q1, p1 = it.step()
        assert np.array_equal(q1, full.q[k]) and np.array_equal(p1, full.p[k])
    assert it.counts.steps == N
    if method != "rk4":
        assert it.counts.newton_iterations == int(full.newton_iterations.sum())


def test_step_then_propagate_mixed():
    system = sp.systems.double_pendulum()
    p0 = system.momentum(Q0, V0)
    full = sp.integrate(system, Q0, p0, H, 40, "lobatto5", newton="chord")
    it = sp.Integrator(system, H, Q0, p0, method="lobatto5", newton="chord")
    it.step()
    tr = it.propagate(n_steps=20)
    it.step()
    it.step()
    tr2 = it.propagate(n_steps=17, store_every=4)
    assert np.array_equal(tr.q, full.q[1:22])
    assert np.array_equal(tr2.q, np.vstack([full.q[23:40:4], full.q[40:41]]))   # 23, 27, .. 39, 40
    assert np.array_equal(it.q, full.q[40])


@pytest.mark.parametrize("method", ["simpson", "midpoint", "lobatto4"])
def test_constrained_chunks_and_multipliers(method):
    system = sp.systems.pendulum_cartesian()
    q0 = np.array([math.sin(1.0), -math.cos(1.0)])
    p0 = np.zeros(2)
    full = sp.integrate(system, q0, p0, H, N, method)
    it = sp.Integrator(system, H, q0, p0, method=method)
    a = it.propagate(n_steps=10)
    b = it.propagate(n_steps=27)
    assert np.array_equal(np.vstack([a.q, b.q[1:]]), full.q)
    assert np.array_equal(np.concatenate([a.multipliers, b.multipliers]), full.multipliers)


def _forces(n_rows):
    rng = np.random.default_rng(3)
    held = rng.normal(size=(n_rows, 2))
    D = np.array([[0.3, 0.05], [0.05, 0.2]])

    def drive(t, q, v):
        return np.array([0.7 * math.cos(3.0 * t), -0.2 * v[1] * q[0]])
    return {"held": held, "callable": drive, "damping": sp.forces.linear_damping(D)}


@pytest.mark.parametrize("which", ["held", "callable", "damping"])
@pytest.mark.parametrize("method", method_cases())
def test_forced_chunks_continue_work_and_impulse(which, method):
    system = sp.systems.double_pendulum()
    p0 = system.momentum(Q0, V0)
    f = _forces(N)[which]
    full = sp.integrate(system, Q0, p0, H, N, method, force=f, t0=0.5)
    it = sp.Integrator(system, H, Q0, p0, method=method, force=f, t0=0.5)
    parts = [it.propagate(n_steps=c) for c in (4, 1, 20, 12)]
    q = np.vstack([parts[0].q] + [r.q[1:] for r in parts[1:]])
    W = np.concatenate([parts[0].work] + [r.work[1:] for r in parts[1:]])
    Imp = np.vstack([parts[0].impulse] + [r.impulse[1:] for r in parts[1:]])
    assert np.array_equal(q, full.q)
    assert np.array_equal(W, full.work) and np.array_equal(Imp, full.impulse)


def test_held_force_rows_bound_the_run():
    system = sp.systems.double_pendulum()
    it = sp.Integrator(system, H, Q0, [0.0, 0.0], force=np.zeros((5, 2)))
    it.propagate(n_steps=3)
    with pytest.raises(ValueError, match="5 rows"):
        it.propagate(n_steps=3)
    it.propagate(n_steps=2)
    with pytest.raises(ValueError, match="held force array"):
        it.step()


def test_t_end_events_and_t_eval_on_a_piece():
    system = sp.systems.pendulum()
    it = sp.Integrator(system, 0.01, [1.0], [0.0])
    tr = it.propagate(t_end=0.105)                     # 11 whole steps: up to one step beyond
    assert it.steps == 11 and tr.t[-1] == pytest.approx(0.11)
    tr = it.propagate(t_end=0.2)                       # on the grid: exactly there
    assert it.steps == 20 and it.t == pytest.approx(0.2, abs=1e-15)

    def crossing(t, q, p):
        return q[0]
    crossing.terminal = True
    tr = it.propagate(n_steps=1000, events=crossing)
    assert tr.status == 1 and len(tr.t_events[0]) == 1
    # the same event as one integrate call finds
    ref = sp.integrate(system, [1.0], [0.0], 0.01, 1020, events=crossing)
    assert tr.t_events[0][0] == pytest.approx(ref.t_events[0][0], abs=1e-12)
    assert it.steps == len(ref.t) - 1
    ts = it.t + np.array([0.013, 0.05])
    tr = it.propagate(n_steps=10, t_eval=ts)
    assert np.allclose(tr.t, ts)


def test_state_reset_and_repr():
    system = sp.systems.double_pendulum()
    it = sp.Integrator(system, H, Q0, qdot0=V0, t0=2.0)
    st = it.state
    assert isinstance(st, sp.State) and st.t == 2.0 and np.array_equal(st.q, Q0)
    st.q[0] = 99.0                                       # a copy
    assert it.q[0] == Q0[0]
    it.propagate(n_steps=10)
    it.reset(Q0, qdot=V0, t=2.0)
    assert it.steps == 0 and it.t == 2.0
    a = it.propagate(n_steps=10)
    b = sp.integrate(system, Q0, qdot0=V0, h=H, n_steps=10, t0=2.0)
    assert np.array_equal(a.q, b.q)
    assert it.counts.steps == 20
    assert "Integrator simpson" in repr(it)


def test_method_options_are_checked_per_method():
    system = sp.systems.double_pendulum()
    with pytest.raises(TypeError, match="explicit"):
        sp.Integrator(system, H, Q0, [0, 0], method="rk4", rtol=1e-10)
    with pytest.raises(TypeError, match="unexpected keyword"):
        sp.Integrator(system, H, Q0, [0, 0], rtoll=1e-10)
    with pytest.raises(ValueError, match="rtol"):
        sp.Integrator(system, H, Q0, [0, 0], rtol=-1.0)
    with pytest.raises(ValueError, match="newton"):
        sp.Integrator(system, H, Q0, [0, 0], newton="fast")
    with pytest.raises(TypeError, match="n_steps or t_end"):
        sp.Integrator(system, H, Q0, [0, 0]).propagate()
    with pytest.raises(ValueError, match="h must"):
        sp.Integrator(system, 0.0, Q0, [0, 0])


def test_failure_keeps_the_last_completed_state():
    """qdd = 4 q^3 blows up in finite time: the implicit steps stop having a
    solution (tests/run/test_failures.py); the same failure, at the same time, as
    one integrate call, and the state stays at the last completed step."""
    system = sp.System(1, np.eye(1), lambda q: -q[0] ** 4, potential_grad=lambda q: -4 * q ** 3,
                       potential_hess=lambda q: np.array([[-12 * q[0] ** 2]]))
    with pytest.raises(sp.ConvergenceError) as whole:
        sp.integrate(system, [1.0], [0.0], 0.05, 100)
    it = sp.Integrator(system, 0.05, [1.0], [0.0])
    it.propagate(n_steps=5)
    with pytest.raises(sp.ConvergenceError) as ei:
        it.propagate(n_steps=95)
    err, ref = ei.value, whole.value
    assert err.t == ref.t and err.step == ref.step - 5        # the piece's own step index
    assert it.steps == ref.step and np.array_equal(it.q, ref.trajectory.q[-1])
    assert np.array_equal(err.trajectory.q[-1], it.q)


def test_an_exception_in_a_callback_moves_the_state_to_the_partial_end():
    system = sp.systems.double_pendulum()

    def force(t, q, v):
        if t > 0.1:
            raise RuntimeError("stop here")
        return np.zeros(2)
    it = sp.Integrator(system, H, Q0, [0.0, 0.0], force=force)
    with pytest.raises(RuntimeError, match="stop here") as ei:
        it.propagate(n_steps=100)
    tr = ei.value.trajectory
    assert it.steps == len(tr.t) - 1 and 0 < it.steps < 100
    assert np.array_equal(it.q, tr.q[-1])


def test_the_pre_run_check_refuses_the_start_of_the_run():
    """lagrange_top's pre-run check (tests/model/test_topchart.py): a motion through
    theta = pi is refused at the run's start -- by propagate and by step, as
    by integrate -- and nothing moves."""
    # a slow top (a 5 cm disc on a 2 cm stem: tests/model/test_quaternion_top.py's SLOW)
    slow = dict(m=0.1, I=0.1 * (0.05 ** 2 / 4 + 0.02 ** 2), I3=0.1 * 0.05 ** 2 / 2, l=0.02, g=9.81)
    q0 = np.array([0.0, 2 * math.pi / 3, 0.0])
    p_psi = slow["I3"] * 20.0
    p0 = np.array([-p_psi, 0.0, p_psi])
    top = sp.systems.lagrange_top(**slow)
    it = sp.Integrator(top, 0.01, q0, p0)
    with pytest.raises(sp.ConvergenceError, match=r"refused the initial state.*theta = pi"):
        it.propagate(n_steps=5)
    with pytest.raises(sp.ConvergenceError, match=r"refused the initial state.*theta = pi"):
        it.step()
    assert it.steps == 0 and np.array_equal(it.q, q0)


def test_step_failure_raises_and_the_state_stays():
    """The blow-up of qdd = 4 q^3 reached by step() after the first step (the
    lean path): ConvergenceError at the same step and time as one integrate
    call; the state stays at the last completed step."""
    system = sp.System(1, np.eye(1), lambda q: -q[0] ** 4, potential_grad=lambda q: -4 * q ** 3,
                       potential_hess=lambda q: np.array([[-12 * q[0] ** 2]]))
    with pytest.raises(sp.ConvergenceError) as whole:
        sp.integrate(system, [1.0], [0.0], 0.05, 100)
    it = sp.Integrator(system, 0.05, [1.0], [0.0])
    with pytest.raises(sp.ConvergenceError) as ei:
        for _ in range(100):
            it.step()
    assert ei.value.t == whole.value.t and it.steps == whole.value.step
    assert np.array_equal(it.q, whole.value.trajectory.q[-1])


def test_the_kept_work_steps_and_counts():
    """The binding's Work (what an Integrator keeps): its step is the driver's
    step k at t0 + k h on the kept workspace, its counts accumulate, reset
    keeps them, and a held force's rows bound its runs."""
    from symplectic import _core
    system = sp.systems.double_pendulum()
    p0 = system.momentum(Q0, V0)
    full = sp.integrate(system, Q0, p0, H, 3)
    w = _core.work(system, Q0, p0, "simpson")
    q1, p1, *_rest, status, _it, _res, _rel, _upd, reason = w.step(Q0, p0, H)
    assert status == 0 and reason == ""
    q2, p2, *_ = w.step(q1, p1, H, 0.0, 1)
    assert np.array_equal(q1, full.q[1]) and np.array_equal(q2, full.q[2])
    assert w.counts()[0] == 2
    w.reset()
    assert w.counts()[0] == 2
    with pytest.raises(ValueError, match=r"step: invalid argument \(k\)"):
        w.step(Q0, p0, H, 0.0, -1)
    held = _core.work(system, Q0, p0, "simpson", force={"hold": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="invalid run argument \\(hold\\)"):
        held.integrate(Q0, p0, H, 3)
    with pytest.raises(ValueError, match="outputs of a run with a force"):
        w.integrate(Q0, p0, H, 3, work=np.zeros(4))


def test_newton_options_reach_the_kept_workspace():
    """max_iter given to an Integrator (and to every run, which goes through a kept workspace)
    bounds Newton's iterations as it does sp.step's: one iteration cannot converge from a
    pendulum at 3 rad with h = 1 s.  (The kept workspace's parser once read max_iter as a
    double into an int, which left it at the core's default.)"""
    pend = sp.systems.pendulum()
    with pytest.raises(sp.ConvergenceError, match="did not converge; 1 Newton iteration"):
        sp.Integrator(pend, 1.0, [3.0], [0.0], max_iter=1).step()
    with pytest.raises(sp.ConvergenceError, match="did not converge; 1 Newton iteration"):
        sp.integrate(pend, [3.0], [0.0], 1.0, 1, max_iter=1)
    tr = sp.integrate(pend, [3.0], [0.0], 0.01, 10, max_iter=3)
    assert tr.newton_iterations.max() <= 3
