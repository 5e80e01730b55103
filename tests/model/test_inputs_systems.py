"""Input robustness, systems: what System, its forms and the built-in factories
accept -- the number of coordinates, the callables, the parameters of the
built-ins, and one symmetry rule for every symmetric matrix (a constant mass,
M and K of a linear system, the matrices a mass(q) callable returns)."""
import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _matrices

DP = sp.systems.double_pendulum()
Q0, P0 = [0.5, 0.2], [0.0, 0.0]


@pytest.mark.parametrize("M,K,match", [
    ([[1.0, 0.0], [0.0, 0.0]], np.eye(2), "positive definite"),          # singular
    ([[1.0, 0.0], [0.0, -1.0]], np.eye(2), "positive definite"),         # indefinite
    ([[1.0, 2.0], [0.0, 1.0]], np.eye(2), "symmetric"),
    (np.eye(2), np.eye(3), "shape"),
    (np.ones((2, 3)), np.ones((2, 3)), "square"),
    ([[np.nan, 0], [0, 1]], np.eye(2), "non-finite"),
])
def test_bad_linear_systems(M, K, match):
    with pytest.raises(ValueError, match=match):
        sp.systems.linear(M, K)


def test_bad_system_inputs():
    with pytest.raises(TypeError, match="symplectic.System"):
        sp.integrate("double_pendulum", [0.1, 0.2], [0, 0], 0.01, 10)
    with pytest.raises(ValueError, match="M must be positive definite"):
        sp.systems.linear([[1.0, 2.0], [2.0, 1.0]], np.eye(2))
    with pytest.raises(ValueError, match="m1 must be finite and > 0"):
        sp.systems.double_pendulum(m1=-1.0)


def test_unknown_system_names_and_parameters():
    with pytest.raises(TypeError, match="unexpected keyword argument 'mass'"):
        sp.systems.double_pendulum(mass=2.0)
    with pytest.raises(AttributeError):
        sp.systems.triple_pendulum()
    with pytest.raises(ValueError, match="m1"):
        sp.systems.double_pendulum(m1=-1.0)
    with pytest.raises(TypeError, match="symplectic.System"):
        sp.integrate("double_pendulum", Q0, P0, 0.01, 10)


@pytest.mark.parametrize("value,exc,match", [
    ("1.0", TypeError, "m must be a real number, got '1.0'"),
    (True, TypeError, "m must be a real number, got True"),
    (np.nan, ValueError, "m must be finite and > 0, got nan"),
    (0, ValueError, "m must be finite and > 0, got 0"),
])
def test_builtin_parameters_are_real_numbers(value, exc, match):
    with pytest.raises(exc, match=match):
        sp.systems.pendulum(m=value)
    assert sp.systems.pendulum(m=np.float32(2.0)).params["m"] == 2.0
    assert sp.systems.pendulum(m=np.array(2.0)).params["m"] == 2.0


def test_chain_masses_and_lengths():
    with pytest.raises(ValueError, match=r"m must be a scalar or have length n = 3, got shape \(2,\)"):
        sp.systems.pendulum_chain(3, m=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"l must be finite and > 0, got \[1.0, -1.0, 1.0\]"):
        sp.systems.pendulum_chain(3, l=[1.0, -1.0, 1.0])
    assert np.array_equal(sp.systems.pendulum_chain(3, m=2).params["m"], [2.0, 2.0, 2.0])


@pytest.mark.parametrize("n,exc,match", [(0, ValueError, "n must be >= 1, got 0"),
                                         (2.0, TypeError, "n must be an int, got 2.0"),
                                         (True, TypeError, "n must be an int")])
def test_number_of_coordinates(n, exc, match):
    for make in (lambda: sp.System(n, np.eye(2), lambda q: 0.0),
                 lambda: sp.System.combined(n, lambda *a: 0.0),
                 lambda: sp.System.vectorized(n, lambda Q: {}),
                 lambda: sp.System.from_cfunc(n, 1),
                 lambda: sp.systems.pendulum_chain(n)):
        with pytest.raises(exc, match=match):
            make()


def test_callables_must_be_callable():
    with pytest.raises(TypeError, match=r"potential must be callable: potential\(q\) -> float"):
        sp.System(2, np.eye(2), 3.0)
    with pytest.raises(TypeError, match="func must be callable"):
        sp.System.combined(2, None)
    with pytest.raises(TypeError, match="func must be callable"):
        sp.System.vectorized(2, "f")


def test_one_symmetry_rule_for_every_matrix():
    """Symmetric to SYMMETRY_RTOL (1e-10) of the largest entry: a constant mass,
    M and K of systems.linear and symplectic.linear, and the matrices a mass(q)
    callable returns (checked by the C binding) -- rounding in a small
    off-diagonal entry is accepted, a real asymmetry refused, everywhere."""
    assert _matrices.SYMMETRY_RTOL == 1e-10
    for off, ok in ((1e-3 + 1e-14, True), (1e-3 + 1e-9, False)):
        A = np.array([[2.0, 1e-3], [off, 1.0]])
        makers = [lambda: sp.System(2, A, lambda q: 0.0),
                  lambda: sp.systems.linear(A, np.eye(2)),
                  lambda: sp.systems.linear(np.eye(2), A),
                  lambda: sp.linear.propagator(A, np.eye(2), 0.1)]
        for make in makers:
            if ok:
                make()
            else:
                with pytest.raises(ValueError, match="must be symmetric"):
                    make()
        python = sp.System(2, lambda q: A, lambda q: 0.0, mass_grad=lambda q: np.zeros((2, 2, 2)),
                           potential_grad=lambda q: np.zeros(2))
        if ok:
            sp.integrate(python, Q0, P0, 0.01, 2, check=False)
        else:
            with pytest.raises(ValueError, match="non-symmetric"):
                sp.integrate(python, Q0, P0, 0.01, 2, check=False)


def test_constant_mass_checks():
    with pytest.raises(ValueError, match=r"the constant mass matrix must have shape \(2, 2\), got \(3, 3\)"):
        sp.System(2, np.eye(3), lambda q: 0.0)
    with pytest.raises(ValueError, match="the constant mass matrix contains non-finite values"):
        sp.System(2, [[1.0, 0.0], [0.0, np.inf]], lambda q: 0.0)
    with pytest.raises(ValueError, match="the constant mass matrix must be positive definite"):
        sp.System(2, [[1.0, 0.0], [0.0, -1.0]], lambda q: 0.0)
    with pytest.raises(ValueError, match="a constant mass takes no mass derivatives"):
        sp.System(2, np.eye(2), lambda q: 0.0, mass_grad=lambda q: np.zeros((2, 2, 2)))


def test_system_cannot_be_reinitialised():
    sys = sp.systems.pendulum()
    with pytest.raises(TypeError, match="re-initialised"):
        sp._core.System.__init__(sys, 1, builtin="pendulum", params=[1.0, 1.0])
