"""Systems written as Python callables agree with the built-in C systems."""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import L_DP, TOP, TOP_PERIOD, TOP_Q0, TOP_QDOT0, dp_callables, top_callables

METHODS = ["simpson", "midpoint", "rk4"]


def rel_diff(a, b):
    return max(np.max(np.abs(a.q - b.q)) / np.max(np.abs(a.q)),
               np.max(np.abs(a.p - b.p)) / np.max(np.abs(a.p)))


@pytest.mark.parametrize("method", METHODS)
def test_double_pendulum_python_equals_c(method):
    c_sys = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    py_sys = sp.System(2, **dp_callables())
    q0, p0 = [math.pi / 4, math.pi / 3], [0.0, 0.0]
    a = sp.integrate(c_sys, q0, p0, 0.01, 1000, method=method)
    b = sp.integrate(py_sys, q0, p0, 0.01, 1000, method=method)
    assert rel_diff(a, b) <= 1e-12
    assert np.array_equal(a.t, b.t)


@pytest.mark.parametrize("method", METHODS)
def test_top_python_equals_c(method):
    c_sys = sp.systems.lagrange_top(**TOP)
    py_sys = sp.System(3, **top_callables())
    p0 = c_sys.mass(TOP_Q0) @ TOP_QDOT0
    a = sp.integrate(c_sys, TOP_Q0, p0, TOP_PERIOD / 40, 1000, method=method)
    b = sp.integrate(py_sys, TOP_Q0, p0, TOP_PERIOD / 40, 1000, method=method)
    assert rel_diff(a, b) <= 1e-12


def test_contracted_forms_equal_tensors():
    """mass_dir / mass_hess_dir (O(n^2) forms) give the tensors' trajectory."""
    c = dp_callables()

    def mass_dir(q, g):
        return np.einsum("cij,j->ic", c["mass_grad"](q), g)

    def mass_hess_dir(q, g):
        return 0.5 * np.einsum("klij,i,j->kl", c["mass_hess"](q), g, g)

    a = sp.System(2, **c)
    b = sp.System(2, c["mass"], c["potential"], potential_grad=c["potential_grad"],
                  potential_hess=c["potential_hess"], mass_dir=mass_dir,
                  mass_hess_dir=mass_hess_dir)
    ta = sp.integrate(a, [1.0, -0.5], [0.3, 0.1], 0.02, 200)
    tb = sp.integrate(b, [1.0, -0.5], [0.3, 0.1], 0.02, 200)
    assert rel_diff(ta, tb) <= 1e-13


def test_missing_derivatives_fall_back_to_finite_differences():
    """Only M and V given: finite differences, same trajectory to ~1e-9."""
    c = dp_callables()
    full = sp.System(2, **c)
    bare = sp.System(2, c["mass"], c["potential"])
    ta = sp.integrate(full, [1.0, -0.5], [0.3, 0.1], 0.02, 100)
    tb = sp.integrate(bare, [1.0, -0.5], [0.3, 0.1], 0.02, 100)
    assert rel_diff(ta, tb) <= 1e-8
    report = bare.check_derivatives([1.0, -0.5])
    assert report["mass_grad"] == "finite differences"
    assert report["potential_grad"] == "finite differences"


def test_second_derivatives_optional():
    """Without mass_hess/potential_hess Newton's Jacobian is approximate; the
    converged trajectory is the same to the Newton tolerance."""
    c = dp_callables()
    full = sp.System(2, **c)
    no_hess = sp.System(2, c["mass"], c["potential"], c["mass_grad"], c["potential_grad"])
    ta = sp.integrate(full, [1.0, -0.5], [0.3, 0.1], 0.02, 200)
    tb = sp.integrate(no_hess, [1.0, -0.5], [0.3, 0.1], 0.02, 200)
    assert rel_diff(ta, tb) <= 1e-12


def test_constant_mass_array():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    K = np.array([[3.0, -1.0], [-1.0, 2.0]])
    py = sp.System(2, M, lambda q: 0.5 * q @ K @ q, potential_grad=lambda q: K @ q,
                   potential_hess=lambda q: K)
    c = sp.systems.linear(M, K)
    for method in METHODS:
        a = sp.integrate(c, [0.1, 0.2], [0.0, 0.3], 0.05, 400, method=method)
        b = sp.integrate(py, [0.1, 0.2], [0.0, 0.3], 0.05, 400, method=method)
        assert rel_diff(a, b) <= 1e-13


def chain_callables(n, m, l, g=9.81):
    """An n-link chain written directly from positions: x_k = sum_{i<=k} l_i sin q_i,
    y_k = -sum_{i<=k} l_i cos q_i, T = sum_k 1/2 m_k |v_k|^2."""
    m, l = np.asarray(m, float), np.asarray(l, float)
    mu = np.cumsum(m[::-1])[::-1]                       # mass hanging from link i
    C = np.outer(l, l) * mu[np.maximum.outer(np.arange(n), np.arange(n))]

    def mass(q):
        return C * np.cos(q[:, None] - q[None, :])

    def mass_grad(q):
        S = -C * np.sin(q[:, None] - q[None, :])
        T = np.zeros((n, n, n))
        for k in range(n):
            T[k, k, :] += S[k, :]
            T[k, :, k] -= S[:, k]
        return T

    def potential(q):
        return -g * np.sum(mu * l * np.cos(q))

    def potential_grad(q):
        return g * mu * l * np.sin(q)

    return dict(mass=mass, mass_grad=mass_grad, potential=potential, potential_grad=potential_grad)


def test_chain_equals_independent_numpy_model():
    """24 links: also exercises the blocked LU (Newton size 48 > 32)."""
    n = 24
    rng = np.random.default_rng(5)
    m, l = rng.uniform(0.5, 2.0, n), rng.uniform(0.02, 0.08, n)
    c_sys = sp.systems.pendulum_chain(n, m=m, l=l)
    py = sp.System(n, **chain_callables(n, m, l))
    q0 = rng.uniform(-0.5, 0.5, n)
    py.check_derivatives(q0, rtol=1e-7)
    a = sp.integrate(c_sys, q0, np.zeros(n), 1e-3, 60)
    b = sp.integrate(py, q0, np.zeros(n), 1e-3, 60)
    assert rel_diff(a, b) <= 1e-11
