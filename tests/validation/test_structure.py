"""Geometric properties: symplecticity of the one-step map, time
reversibility, exact conservation of the momenta of cyclic coordinates."""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import L_DP, TOP_PERIOD, symplecticity_defect


def one_step_jacobian(sys, q, p, h, method, delta=1e-6):
    """Central finite-difference Jacobian D of (q, p) -> (q1, p1)."""
    n = sys.n
    y = np.concatenate([q, p])
    D = np.empty((2 * n, 2 * n))
    for k in range(2 * n):
        dk = delta * max(1.0, abs(y[k]))
        cols = []
        for s in (1, -1):
            yy = y.copy()
            yy[k] += s * dk
            q1, p1 = sp.step(sys, yy[:n], yy[n:], h, method)
            cols.append(np.concatenate([q1, p1]))
        D[:, k] = (cols[0] - cols[1]) / (2 * dk)
    return D


def dp_case():
    sys = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    q = np.array([math.pi / 4, math.pi / 3])
    p = sys.mass(q) @ np.array([0.7, -1.3])
    return sys, q, p, 0.1


def top_case(top_state):
    top, q0, p0 = top_state
    q = q0 + np.array([0.3, -0.2, 5.0])
    return top, q, p0, TOP_PERIOD / 40


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
def test_symplectic_double_pendulum(method):
    sys, q, p, h = dp_case()
    assert symplecticity_defect(one_step_jacobian(sys, q, p, h, method)) <= 1e-8


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
def test_symplectic_top(method, top_state):
    sys, q, p, h = top_case(top_state)
    assert symplecticity_defect(one_step_jacobian(sys, q, p, h, method)) <= 1e-8


def test_rk4_is_not_symplectic():
    sys, q, p, h = dp_case()
    assert symplecticity_defect(one_step_jacobian(sys, q, p, h, "rk4")) > 1e-5


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
@pytest.mark.parametrize("case", ["dp", "top"])
def test_time_reversible(method, case, top_state):
    sys, q, p, h = dp_case() if case == "dp" else top_case(top_state)
    q1, p1 = sp.step(sys, q, p, h, method)
    q2, p2 = sp.step(sys, q1, p1, -h, method)
    scale = max(np.max(np.abs(q)), np.max(np.abs(p)))
    assert np.max(np.abs(q2 - q)) <= 1e-12 * scale
    assert np.max(np.abs(p2 - p)) <= 1e-12 * scale


def test_rk4_is_not_time_reversible():
    sys, q, p, h = dp_case()
    q1, p1 = sp.step(sys, q, p, h, "rk4")
    q2, p2 = sp.step(sys, q1, p1, -h, "rk4")
    assert np.max(np.abs(q2 - q)) > 1e-6


def test_backward_integration_retraces(top_state):
    sys, q, p, h = dp_case()
    fwd = sp.integrate(sys, q, p, 0.01, 200)
    back = sp.integrate(sys, fwd.q[-1], fwd.p[-1], -0.01, 200, t0=fwd.t[-1])
    assert back.t[-1] == pytest.approx(0.0, abs=1e-12)
    assert np.allclose(back.q[-1], q, atol=1e-10, rtol=0)


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_top_cyclic_momenta_constant(method, top_state):
    top, q0, p0 = top_state
    traj = sp.integrate(top, q0, p0, TOP_PERIOD / 40, 1000, method=method)
    for k in (0, 2):          # p_phi, p_psi
        rel = np.max(np.abs(traj.p[:, k] - p0[k])) / abs(p0[k])
        assert rel <= 1e-14
    # ... and they really are bitwise constant with the difference form
    assert np.all(traj.p[:, 0] == p0[0]) and np.all(traj.p[:, 2] == p0[2])
    # while theta moves
    assert np.ptp(traj.q[:, 1]) > 0.5


def test_threads_run_builtin_systems_concurrently():
    """The GIL is released: concurrent integrations give the sequential results."""
    import threading
    sys = sp.systems.pendulum_chain(6)
    q0 = np.linspace(0.1, 0.6, 6)
    starts = [q0 + 0.01 * k for k in range(4)]
    seq = [sp.integrate(sys, s, np.zeros(6), 0.005, 2000).q for s in starts]
    out = [None] * 4

    def work(k):
        out[k] = sp.integrate(sys, starts[k], np.zeros(6), 0.005, 2000).q

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for a, b in zip(seq, out):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
@pytest.mark.parametrize("case", ["dp", "top", "chain"])
def test_exact_tangent_map(method, case, top_state):
    """_core.step_tangent's D (implicit function theorem / linearised RK
    stages) equals the finite-difference Jacobian; the variational schemes'
    D is symplectic to rounding."""
    if case == "dp":
        sys, q, p, h = dp_case()
    elif case == "top":
        sys, q, p, h = top_case(top_state)
    else:
        sys = sp.systems.pendulum_chain(4, m=[1, 2, 1, 0.5], l=[0.3, 0.5, 0.7, 0.2])
        q, p, h = np.array([0.1, 0.5, -0.3, 0.8]), np.array([0.2, -0.1, 0.3, 0.1]), 0.05
    q1, p1, D = sp._core.step_tangent(sys, q, p, h, method)
    q1s, p1s = sp.step(sys, q, p, h, method)
    assert np.array_equal(q1, q1s) and np.array_equal(p1, p1s)
    D_fd = one_step_jacobian(sys, q, p, h, method)
    assert np.max(np.abs(D - D_fd)) <= 1e-8 * np.max(np.abs(D))
    if method == "rk4":
        assert symplecticity_defect(D) > 1e-10
    else:
        assert symplecticity_defect(D) <= 1e-14
