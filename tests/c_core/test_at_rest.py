"""Damped systems that come to rest away from q = 0 (issue: a user's first week).

At rest the step's increments X ~ h qdot go to zero while q stays O(1), and
the residual's terms grad V and the force cancel: Newton's update relative
to the increment then stalls above any tolerance at the rounding level of
the positions (csrc/core/sym_newton.c, ``stalled``).  These runs failed with
"Newton iteration did not converge" after 5-600 s; they must run 1e4 s and
end at the static equilibrium, which is computed here independently (the
equilibrium condition grad V(q) = tau solved in closed form).
"""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic import forces

IMPLICIT = [m for m, d in sp.methods(details=True).items() if d["symplectic"]]
OMEGA = 2 * math.pi
TAU = 10.0                           # N m, the constant torque
H = 0.01
N = 1_000_000                        # 1e4 s


def torque_pendulum(steps):
    """The built-in pendulum (unit mass: M = 1, V = omega^2 (1 - cos q)) with
    critical damping D = 2 omega and a constant torque held over every step."""
    S = sp.systems.pendulum(m=1.0, omega=OMEGA)
    assert np.array_equal(S.mass([0.3]), [[1.0]])
    f = forces.linear_damping([[2 * OMEGA]]) + forces.zero_order_hold(np.full((steps, 1), TAU))
    return S, f


@pytest.mark.slow
@pytest.mark.parametrize("method", IMPLICIT)
def test_torque_loaded_critically_damped_pendulum_rests_at_its_equilibrium(method):
    S, f = torque_pendulum(N)
    tr = sp.integrate(S, [0.0], [0.0], H, N, method, force=f, store_every=N)
    assert tr.status == 0 and tr.t[-1] == pytest.approx(1e4, rel=1e-12)
    # omega^2 sin q = tau
    q_eq = math.asin(TAU / OMEGA ** 2)
    assert abs(tr.q[-1, 0] - q_eq) <= 1e-10
    assert abs(tr.p[-1, 0]) <= 1e-10


@pytest.mark.parametrize("options", [dict(newton="chord"), dict(newton="step"),
                                     dict(predictor=False)])
@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto5"])
def test_newton_modes_rest_too(method, options):
    S, f = torque_pendulum(100_000)
    tr = sp.integrate(S, [0.0], [0.0], H, 100_000, method, force=f, store_every=100_000,
                      **options)
    assert abs(tr.q[-1, 0] - math.asin(TAU / OMEGA ** 2)) <= 1e-10
    assert abs(tr.p[-1, 0]) <= 1e-10


@pytest.fixture(scope="module")
def damped_arm(tmp_path_factory):
    """A two-link arm (unit masses at the link ends, unit lengths, absolute angles
    from +x) with joint friction R = c/2 (u1^2 + (u2 - u1)^2), from SymPy."""
    sy = pytest.importorskip("sympy")
    import os
    from symplectic import symbolic
    old = os.environ.get("SYMPLECTIC_CACHE")
    os.environ["SYMPLECTIC_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    try:
        a1, a2 = q = sy.symbols("a1 a2")
        u1, u2 = u = sy.symbols("u1 u2")
        P1 = [sy.cos(a1), sy.sin(a1)]
        P2 = [P1[0] + sy.cos(a2), P1[1] + sy.sin(a2)]
        pts = [(1.0, P1), (1.0, P2)]
        L = symbolic.kinetic_from_positions(q, u, pts) - symbolic.gravity_potential(pts, 9.81)
        return sp.System.from_sympy(L, q, u, dissipation=0.25 * (u1 ** 2 + (u2 - u1) ** 2))
    finally:
        if old is None:
            del os.environ["SYMPLECTIC_CACHE"]
        else:
            os.environ["SYMPLECTIC_CACHE"] = old


@pytest.mark.slow
@pytest.mark.parametrize("method", IMPLICIT)
def test_damped_arm_released_horizontally_hangs_at_rest(damped_arm, method):
    tr = sp.integrate(damped_arm, [0.0, 0.0], [0.0, 0.0], H, N, method, store_every=N)
    assert tr.status == 0
    # hanging straight down: both absolute angles -pi/2 (grad V = 0 there)
    assert np.max(np.abs(tr.q[-1] + math.pi / 2)) <= 1e-10
    assert np.max(np.abs(tr.p[-1])) <= 1e-10
