"""Starting from velocities (qdot0=) and the velocities of a trajectory (Trajectory.qdot)."""
import math

import numpy as np
import pytest

import symplectic as sp

M1, M2, L1, L2, G = 1.0, 1.5, 0.8, 0.6, 9.81
DP = sp.systems.double_pendulum(M1, M2, L1, L2, G)
Q0 = np.array([math.pi / 4, math.pi / 3])
V0 = np.array([1.2, -0.7])


def dp_mass(q):
    """Double pendulum mass matrix, written out here (independent of the C system)."""
    c = math.cos(q[0] - q[1])
    return np.array([[(M1 + M2) * L1 ** 2, M2 * L1 * L2 * c], [M2 * L1 * L2 * c, M2 * L2 ** 2]])


def test_system_mass_is_the_double_pendulum_mass():
    for q in (Q0, [0.0, 0.0], [2.0, -1.0]):
        assert np.max(np.abs(DP.mass(q) - dp_mass(q))) <= 1e-15


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4", "lobatto5"])
def test_qdot0_equals_p0_from_mass(method):
    p0 = DP.mass(Q0) @ V0
    a = sp.integrate(DP, Q0, p0, 0.01, 300, method=method)
    b = sp.integrate(DP, Q0, h=0.01, n_steps=300, method=method, qdot0=V0)
    assert np.max(np.abs(a.q - b.q)) <= 1e-15 and np.max(np.abs(a.p - b.p)) <= 1e-15


def test_qdot0_on_python_callables_and_top():
    top = sp.systems.lagrange_top()
    q0 = np.array([0.1, math.pi / 3, 0.2])
    v0 = np.array([9.2, 0.0, 252.0])
    a = sp.integrate(top, q0, top.mass(q0) @ v0, 1e-3, 200)
    b = sp.integrate(top, q0, qdot0=v0, h=1e-3, n_steps=200)
    assert np.max(np.abs(a.q - b.q)) <= 1e-15 * max(1.0, np.max(np.abs(a.q)))
    assert np.max(np.abs(a.p - b.p)) <= 1e-15 * np.max(np.abs(a.p))

    py = sp.System(2, dp_mass, lambda q: -(M1 + M2) * G * L1 * math.cos(q[0])
                   - M2 * G * L2 * math.cos(q[1]))
    c = sp.integrate(py, Q0, dp_mass(Q0) @ V0, 0.01, 50)
    d = sp.integrate(py, Q0, qdot0=V0, h=0.01, n_steps=50)
    assert np.array_equal(c.q, d.q) and np.array_equal(c.p, d.p)


def test_step_and_integrate_many_take_velocities():
    ref = sp.integrate(DP, Q0, DP.mass(Q0) @ V0, 0.01, 20)
    q1, p1 = sp.step(DP, Q0, qdot=V0, h=0.01)
    assert np.max(np.abs(q1 - ref.q[1])) <= 1e-15 and np.max(np.abs(p1 - ref.p[1])) <= 1e-15
    ens = sp.integrate_many(DP, [Q0, Q0 + 0.1], qdot0=V0, h=0.01, n_steps=20)
    assert np.max(np.abs(ens.q[0] - ref.q)) <= 1e-15
    other = sp.integrate(DP, Q0 + 0.1, DP.mass(Q0 + 0.1) @ V0, 0.01, 20)
    assert np.max(np.abs(ens.q[1] - other.q)) <= 1e-15
    # one system per member: each member's own M
    heavy = sp.systems.double_pendulum(M1, 3.0, L1, L2, G)
    ens2 = sp.integrate_many([DP, heavy], Q0, qdot0=V0, h=0.01, n_steps=5)
    assert np.max(np.abs(ens2.p[1, 0] - heavy.mass(Q0) @ V0)) <= 1e-15 * 10


def test_trajectory_qdot_is_the_velocity():
    tr = sp.integrate(DP, Q0, qdot0=V0, h=0.01, n_steps=100)
    assert tr.qdot.shape == tr.q.shape
    assert np.max(np.abs(tr.qdot[0] - V0)) <= 1e-14
    expect = np.array([np.linalg.solve(dp_mass(q), p) for q, p in zip(tr.q, tr.p)])
    assert np.max(np.abs(tr.qdot - expect)) <= 1e-13
    # finite differences of q agree with qdot to the difference quotient's O(h^2)
    fd = (tr.q[2:] - tr.q[:-2]) / (2 * 0.01)
    assert np.max(np.abs(fd - tr.qdot[1:-1])) < 5e-3


@pytest.mark.parametrize("call", ["integrate", "step", "integrate_many"])
def test_exactly_one_of_momenta_and_velocities(call):
    f = getattr(sp, call)
    kw = dict(h=0.01) if call == "step" else dict(h=0.01, n_steps=3)
    vname, pname = ("qdot", "p") if call == "step" else ("qdot0", "p0")
    with pytest.raises(TypeError, match=rf"give either {pname}= \(momenta\) or {vname}= "
                                        rf"\(velocities\), not both"):
        f(DP, Q0, [0.0, 0.0], **kw, **{vname: V0})
    with pytest.raises(TypeError, match=rf"give the initial momenta {pname}= \(p = M\(q\) qdot\) "
                                        rf"or the initial velocities {vname}="):
        f(DP, Q0, **kw)
    with pytest.raises(ValueError, match=rf"{vname} must have shape \(2,\)|{vname} must have "
                                         rf"shape \(K, 2\)"):
        f(DP, Q0, **kw, **{vname: [1.0, 2.0, 3.0]})
