"""Every run-level feature on a rigid-body tree (issue 49): arm6.urdf (a 6-DOF spatial arm, UR5
kinematics and masses on a tilted base) with joint torques, a closed loop, the discrete adjoint
and optimal control.  The same features are tested on the other systems in tests/run and
tests/validation; here each is checked on the built-in C tree against an independent value:

- joint torques: a constant torque tau does the work tau . (q(T) - q(0)) exactly, so the
  energy change equals it to the scheme's order (4 for simpson, 8 for lobatto5) and the run's
  own work measure equals it to rounding; a torque given as a callable, as held rows and as
  values at the force points (N, P, n) gives the same run (bitwise for rows vs points); a
  driven and damped callable f(t, q, qdot) does the work that a quadrature of the dense output
  gives, and equals the same force in C (linear damping plus the drive at the force points);
- a closed loop: 300 ``Integrator.step(force=u)`` of a PD controller equal one ``integrate``
  with the recorded inputs as held rows, bitwise (tests/run/test_integrator_inputs.py's check);
- ``sensitivity.gradient`` of the end effector's final height w.r.t. q0 and p0 equals central
  differences of whole runs;
- ``control.Problem``: a rest-to-rest move of arm6 with an active torque bound solves on 8, 16,
  32 Simpson intervals, and the open-loop replay's miss falls at about Simpson's order.
"""
from pathlib import Path

import numpy as np
import pytest

import symplectic as sp
from symplectic import control, forces
from symplectic.multibody import from_urdf

ARM6 = str(Path(__file__).resolve().parents[1] / "data" / "urdf" / "arm6.urdf")
# near arm6's stable equilibrium (every link hanging: the minimum of V is at
# (-0.591, pi/2, 0, -1.429, 0.661, any)), so that an open-loop run stays near a smooth motion
# (from an upright pose the light wrist links fall away within the second)
Q_HANG = np.array([-0.6, 1.6, 0.0, -1.4, 0.7, 0.2])
QDOT0 = np.array([0.4, -0.3, 0.5, -0.6, 0.8, -1.0])
# torques scaled to the joints' inertias (the wrist's diagonal of M is 1e-2 ... 1e-4 kg m^2)
TAU = np.array([2.0, -5.0, 3.0, 0.3, -0.1, 0.005])
TOOL = ("wrist_3_link", (0.0, 0.0, 0.1))            # a point 10 cm out on the last link


@pytest.fixture(scope="module")
def arm():
    return from_urdf(ARM6)


def start(S):
    return Q_HANG.copy(), S.mass(Q_HANG) @ QDOT0


def force_points(method):
    return len(sp.methods(details=True)[method]["force_points"])


# ====================================================================== joint torques
@pytest.mark.parametrize("method, order, hs", [("simpson", 4, (0.01, 0.005, 0.0025)),
                                               ("lobatto5", 8, (0.05, 0.025, 0.0125))])
def test_constant_torque_energy_change_is_its_exact_work(arm, method, order, hs):
    """A constant torque's work is tau . (q(T) - q(0)) (an exact integral): the energy change
    equals it to the scheme's error, falling at its order (the slope of a least-squares fit of
    log error on log h within 0.7; lobatto5 at larger steps, its errors reach rounding at
    h = 0.005); the run's own work (traj.work, its quadrature of tau . qdot) equals it to
    rounding."""
    q0, p0 = start(arm)
    errs = []
    for h in hs:
        N = int(round(1.0 / h))
        tr = sp.integrate(arm, q0, p0, h, N, method=method, force=np.tile(TAU, (N, 1)))
        exact = (tr.q - tr.q[0]) @ TAU
        assert np.max(np.abs(tr.work - exact)) < 1e-12 * max(1.0, np.max(np.abs(exact)))
        errs.append(np.max(np.abs(tr.energy - tr.energy[0] - exact)))
    assert np.max(np.abs(exact)) > 1.0                       # the torque does real work
    assert errs[-1] < 1e-4 * np.max(np.abs(exact)), errs
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert slope == pytest.approx(order, abs=0.7), (errs, slope)


@pytest.mark.parametrize("method", ["simpson", "lobatto5", "midpoint"])
def test_constant_torque_as_rows_points_and_callable_is_one_run(arm, method):
    """The same constant torque as held rows (N, n), as values at the P force points
    (N, P, n) (bitwise the same run), and as a callable f(t, q, qdot) (the same steps, to
    Newton's tolerance); a single step takes it as an (n,) array, like one held row."""
    q0, p0 = start(arm)
    h, N = 0.01, 100
    rows = sp.integrate(arm, q0, p0, h, N, method=method, force=np.tile(TAU, (N, 1)))
    pts = np.broadcast_to(TAU, (N, force_points(method), arm.n)).copy()
    points = sp.integrate(arm, q0, p0, h, N, method=method, force=pts)
    assert np.array_equal(rows.q, points.q) and np.array_equal(rows.p, points.p)
    assert np.array_equal(rows.work, points.work)
    called = sp.integrate(arm, q0, p0, h, N, method=method, force=lambda t, q, qd: TAU)
    assert np.max(np.abs(called.q - rows.q)) < 1e-12
    assert np.max(np.abs(called.p - rows.p)) < 1e-12 * np.max(np.abs(rows.p))
    q1, p1 = sp.step(arm, q0, p0, h, method=method, force=TAU)
    assert np.array_equal(q1, rows.q[1]) and np.array_equal(p1, rows.p[1])
    free = sp.integrate(arm, q0, p0, h, N, method=method)
    assert np.max(np.abs(free.q[-1] - rows.q[-1])) > 0.05    # the torque moved the arm


D = np.diag([0.5, 0.8, 0.3, 0.02, 0.005, 2e-4])                # N m s/rad


def drive(t):
    """A time-varying torque (N m), scaled like TAU."""
    t = np.asarray(t, dtype=float)
    return np.stack([TAU[i] * np.sin((2.0 + 0.7 * i) * t + 0.3 * i) for i in range(6)], axis=-1)


def driven_damped(t, q, qdot):
    return drive(t) - D @ qdot


def gauss_work(tr, f, points=4):
    """sum over the steps of the Gauss-Legendre quadrature of f(t, q, qdot) . qdot on the
    dense output (dense_state: the Hermite polynomial of each step)."""
    x, w = np.polynomial.legendre.leggauss(points)
    h = tr.h
    t = (tr.t[:-1, None] + 0.5 * h * (x + 1.0)).ravel()
    st = tr.dense_state(t)
    power = np.array([f(ti, qi, vi) @ vi for ti, qi, vi in zip(t, st.q, st.qdot)])
    return float(np.sum(power.reshape(-1, points) * (0.5 * h * w)))


def test_callable_torque_work_and_energy_balance(arm):
    """A driven and damped callable f(t, q, qdot): the run's work equals an independent
    quadrature of f . qdot on the dense output (its error falls with h), energy - work is
    conserved at Simpson's order 4, and the run equals the same force made of C parts (the
    damping forces.linear_damping(D), the drive as values at the force points) to 1e-10."""
    q0, p0 = start(arm)
    res, gaps = [], []
    for h in (0.01, 0.005):
        N = int(round(1.0 / h))
        tr = sp.integrate(arm, q0, p0, h, N, method="simpson", force=driven_damped)
        res.append(sp.analysis.energy_balance(tr).max_error)
        gaps.append(abs(tr.work[-1] - gauss_work(tr, driven_damped)))
    change = np.max(np.abs(tr.energy - tr.energy[0]))
    assert change > 0.5 and abs(tr.work[-1]) > 0.5
    assert gaps[-1] < 1e-5 * abs(tr.work[-1]) and gaps[1] < gaps[0], gaps
    assert res[-1] < 1e-4 * change and np.log2(res[0] / res[1]) > 3.3, res
    in_c = forces.linear_damping(D) + forces.at_points(drive(forces.point_times("simpson", h, N)))
    other = sp.integrate(arm, q0, p0, h, N, method="simpson", force=in_c)
    assert np.max(np.abs(other.q - tr.q)) < 1e-10
    assert np.max(np.abs(other.p - tr.p)) < 1e-10 * np.max(np.abs(tr.p))
    assert abs(other.work[-1] - tr.work[-1]) < 1e-10 * abs(tr.work[-1])


# ====================================================================== a closed loop
@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
def test_a_pd_loop_of_steps_equals_one_integrate_with_its_inputs(arm, method):
    """u = Kp (q_ref - q) - Kd qdot from the Integrator's state before each of 300 steps of
    10 ms; one integrate with the recorded u as held rows gives bitwise the same states."""
    q0, p0 = start(arm)
    M0 = np.diag(np.diag(arm.mass(Q_HANG)))
    Kp, Kd = 36.0 * M0, 8.0 * M0                     # ~6 rad/s, about critically damped
    q_ref = Q_HANG + np.array([0.3, -0.25, 0.2, 0.3, -0.2, 0.3])
    it = sp.Integrator(arm, 0.01, q0, p0, method=method)
    U = []
    for _ in range(300):
        u = Kp @ (q_ref - it.q) - Kd @ arm.velocity(it.q, it.p)
        U.append(u)
        q1, p1 = it.step(force=u)
        assert np.array_equal(q1, it.q) and np.array_equal(p1, it.p)
    tr = sp.integrate(arm, q0, p0, 0.01, 300, method=method, force=np.array(U))
    assert np.array_equal(tr.q[-1], it.q) and np.array_equal(tr.p[-1], it.p)
    assert it.steps == 300 and it.t == tr.t[-1]
    free = sp.integrate(arm, q0, p0, 0.01, 300, method=method)
    assert np.max(np.abs(free.q[-1] - it.q)) > 0.1          # the loop steers
    assert np.max(np.abs(it.q - q_ref)) < np.max(np.abs(q0 - q_ref))


# ====================================================================== the discrete adjoint
def test_gradient_of_the_tool_height_equals_central_differences(arm):
    """sensitivity.gradient of phi = the tool point's height at q_N (tree.point; its gradient
    tree.point_jacobian's z row) w.r.t. q0 and p0 equals central differences of whole runs
    (step 1e-6, relative 1e-6 of the largest entry)."""
    tree = arm.tree
    q0, p0 = start(arm)
    h, N, method = 0.01, 50, "simpson"

    def height(q, p):
        return float(tree.point(TOOL[0], q, point=TOOL[1])[2])

    def grad(q, p):
        return tree.point_jacobian(TOOL[0], q, point=TOOL[1])[2], np.zeros(arm.n)

    value, g = sp.sensitivity.gradient(arm, q0, p0, h, N, {"terminal": (height, grad)},
                                       method=method)
    y0 = np.concatenate([q0, p0])

    def phi(y):
        tr = sp.integrate(arm, y[:6], y[6:], h, N, method=method, store_every=N)
        return height(tr.q[-1], tr.p[-1])

    assert value == pytest.approx(phi(y0), abs=1e-14)
    fd = np.empty(12)
    for j in range(12):
        e = np.zeros(12)
        e[j] = 1e-6 * max(1.0, abs(y0[j]))
        fd[j] = (phi(y0 + e) - phi(y0 - e)) / (2.0 * e[j])
    adj = np.concatenate([g["q0"], g["p0"]])
    assert np.max(np.abs(fd)) > 0.1
    assert np.max(np.abs(adj - fd)) < 1e-6 * np.max(np.abs(fd)), (adj, fd)


# ====================================================================== optimal control
def test_point_to_point_move_miss_falls_with_the_intervals(arm):
    """From rest at q_a to rest at q_b (0.2-0.3 rad per joint) in 1 s, min 1/2 int u^T R u dt
    (R = diag(1/M_ii(q_a)): a torque costs by the acceleration it gives, so that the light
    wrist is not used as a reaction wheel), every joint actuated, |u| within the URDF's
    efforts except the shoulder lift's, bounded at 2.2 N m below its unbounded peak (2.39), so
    the bound is active near the start; Simpson on 8, 16, 32 intervals: each solves
    (first-order residual < 1e-9), the bound is met and active, and the open-loop miss of the
    returned inputs (sol.miss(): a lobatto5 replay at 16 steps an interval) falls at least
    16x from 8 to 16 and from 16 to 32 intervals."""
    pytest.importorskip("ipyopt")
    qa = Q_HANG
    qb = qa + np.array([0.3, -0.25, 0.2, 0.3, -0.2, 0.3])
    R = np.diag(1.0 / np.diag(arm.mass(qa)))
    lim = np.array([150.0, 2.2, 150.0, 28.0, 28.0, 28.0])
    misses, costs = [], []
    for N in (8, 16, 32):
        pb = control.Problem(arm, 1.0, N, method="simpson", inputs="all",
                             start={"q": qa, "qdot": np.zeros(6)},
                             end={"q": qb, "qdot": np.zeros(6)},
                             cost=control.effort(R), input_bounds=(-lim, lim))
        sol = pb.solve()
        assert sol.success, sol
        assert sol.kkt_residual < 1e-9, sol.kkt_residual
        assert np.all(np.abs(sol.u) <= lim + 1e-9)
        assert np.any(np.abs(np.abs(sol.u[:, :, 1]) - lim[1]) < 1e-8)     # the bound is active
        assert sol.own_scheme_miss() < 1e-7
        misses.append(sol.miss())
        costs.append(sol.cost)
    assert misses[0] > 16 * misses[1] and misses[1] > 16 * misses[2], misses
    assert misses[2] < 1e-4, misses
    assert abs(costs[2] - costs[1]) < abs(costs[1] - costs[0]), costs
