"""Analytic derivatives of the built-in systems and of the Newton system
against finite differences; check_derivatives catches wrong derivatives."""

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core
from support.models import L_DP, dp_callables


def builtins():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((4, 4))
    B = rng.standard_normal((4, 4))
    return {
        "pendulum": sp.systems.pendulum(m=1.3, omega=2.0),
        "linear": sp.systems.linear(A @ A.T + 4 * np.eye(4), B + B.T),
        "double_pendulum": sp.systems.double_pendulum(1.0, 2.0, 0.7, 1.3, 9.81),
        "lagrange_top": sp.systems.lagrange_top(),
        "pendulum_chain": sp.systems.pendulum_chain(5, m=[1.0, 0.5, 2.0, 1.5, 0.7],
                                                    l=[0.3, 1.0, 0.6, 0.9, 1.2]),
    }


@pytest.mark.parametrize("name", sorted(builtins()))
def test_builtin_derivatives(name):
    sys = builtins()[name]
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.uniform(-2, 2, sys.n)
        g = rng.standard_normal(sys.n)
        report = sys.check_derivatives(q, g, rtol=1e-7)
        assert all(isinstance(v, float) for v in report.values()), report


def test_chain_of_two_is_the_double_pendulum():
    chain = sp.systems.pendulum_chain(2, m=[1.0, 2.0], l=[0.7, 1.3], g=9.81)
    dp = sp.systems.double_pendulum(1.0, 2.0, 0.7, 1.3, 9.81)
    q, g = np.array([0.4, -1.1]), np.array([0.3, 2.0])
    for f in ("mass", "potential", "potential_grad", "potential_hess"):
        assert np.allclose(getattr(chain, f)(q), getattr(dp, f)(q), rtol=1e-14, atol=1e-14)
    for f in ("mass_dir", "mass_hess_dir"):
        assert np.allclose(getattr(chain, f)(q, g), getattr(dp, f)(q, g), rtol=1e-14, atol=1e-14)


def test_python_double_pendulum_equals_builtin_pointwise():
    c = dp_callables()
    dp = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    py = sp.System(2, **c)
    q, g = np.array([0.4, -1.1]), np.array([0.3, 2.0])
    assert np.allclose(py.mass_dir(q, g), dp.mass_dir(q, g), rtol=1e-14, atol=1e-15)
    assert np.allclose(py.mass_hess_dir(q, g), dp.mass_hess_dir(q, g), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
@pytest.mark.parametrize("name", sorted(builtins()))
def test_newton_jacobian_against_finite_differences(method, name):
    """The analytic Newton matrix dR/dX equals central differences of R."""
    sys = builtins()[name]
    rng = np.random.default_rng(11)
    n, h = sys.n, 0.07
    q = rng.uniform(-1, 1, n)
    if name == "lagrange_top":
        q[1] += 1.0      # the draw is theta = -1.4 mrad, which the ZXZ top refuses (SYM_ECHART)
    p = rng.standard_normal(n)
    nu = (3 - 1) * n if method == "simpson" else n
    X = 0.1 * rng.standard_normal(nu)
    R, J = _core.newton_system(sys, q, p, h, X, method)
    J_fd = np.empty_like(J)
    for k in range(nu):
        d = 1e-6
        Xp, Xm = X.copy(), X.copy()
        Xp[k] += d
        Xm[k] -= d
        J_fd[:, k] = (_core.newton_system(sys, q, p, h, Xp, method)[0]
                      - _core.newton_system(sys, q, p, h, Xm, method)[0]) / (2 * d)
    assert np.max(np.abs(J - J_fd)) <= 1e-7 * np.max(np.abs(J))


def test_check_derivatives_catches_wrong_mass_grad():
    c = dict(dp_callables())
    good = c["mass_grad"]
    c["mass_grad"] = lambda q: -good(q)            # sign error
    sys = sp.System(2, **c)
    with pytest.raises(ValueError, match="mass_grad"):
        sys.check_derivatives([0.3, 1.2])
    report = sys.check_derivatives([0.3, 1.2], raise_on_failure=False)
    assert report["mass_grad"] > 0.5


def test_check_derivatives_catches_wrong_potential_hess():
    c = dict(dp_callables())
    c["potential_hess"] = lambda q: np.eye(2)
    with pytest.raises(ValueError, match="potential_hess"):
        sp.System(2, **c).check_derivatives([0.3, 1.2])


def test_check_derivatives_passes_on_correct_python_system():
    report = sp.System(2, **dp_callables()).check_derivatives([0.3, 1.2])
    assert set(report) == {"mass_grad", "mass_hess", "potential_grad", "potential_hess"}
    assert max(report.values()) < 1e-8
