"""The Lobatto family of Galerkin variational integrators (s = 2..5 nodes,
orders 2s - 2) and dense output from the schemes' interpolating polynomials.

Order fits use step ranges chosen explicitly: above the rounding plateau
(errors > ~1e-13) and below the coarse-step region where the observed slopes
overshoot (listed per test)."""
import math

import numpy as np
import pytest

import symplectic as sp
from support.models import L_DP, TOP_PERIOD, dp_callables, fitted_order, symplecticity_defect

FAMILY = {"lobatto2": 2, "simpson": 3, "lobatto3": 3, "lobatto4": 4, "lobatto5": 5}


def test_family_is_registered():
    info = sp.methods(details=True)
    for name, s in FAMILY.items():
        assert info[name]["order"] == 2 * s - 2
        assert len(info[name]["nodes"]) == s and info[name]["symplectic"]
        assert info[name]["n_mid"] == s - 2


# Pendulum (FVCA, amplitude pi/2, 3 periods) against the exact solution; N steps over 3T.
# The Gauss-Legendre schemes (tests/validation/test_gauss.py) too: orders 4 and 6.
PENDULUM_RANGES = {"lobatto2": (60, 120, 240, 480), "simpson": (120, 240, 480, 960),
                   "lobatto4": (60, 90, 120, 180, 240), "lobatto5": (45, 60, 90, 120, 180),
                   "gauss2": (120, 240, 480, 960), "gauss3": (60, 90, 120, 180, 240)}
ORDER = {**{m: 2 * s - 2 for m, s in FAMILY.items()}, "gauss2": 4, "gauss3": 6}


@pytest.mark.parametrize("method", sorted(PENDULUM_RANGES))
def test_pendulum_orders(method):
    sys = sp.systems.pendulum()
    T = 3 * sp.exact.pendulum_period(math.pi / 2)
    hs, errs = [], []
    for N in PENDULUM_RANGES[method]:
        tr = sp.integrate(sys, [math.pi / 2], [0.0], T / N, N, method=method)
        q, p = sp.exact.pendulum(tr.t, math.pi / 2)
        hs.append(T / N)
        errs.append(np.max(np.hypot(tr.q[:, 0] - q, tr.p[:, 0] - p)))
    assert min(errs) > 1e-13           # above the rounding plateau
    assert fitted_order(hs, errs) == pytest.approx(ORDER[method], abs=0.2)


# Double pendulum (TOP Section 3), relative energy error over 10 s.
DP_RANGES = {"lobatto2": (0.05, 0.025, 0.0125, 0.00625), "simpson": (0.05, 0.025, 0.0125, 0.00625),
             "lobatto4": (0.025, 0.02, 0.016, 0.0125, 0.01),
             "lobatto5": (0.025, 0.02, 0.016, 0.0125)}


@pytest.mark.parametrize("method", sorted(DP_RANGES))
def test_double_pendulum_energy_orders(method):
    dp = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    q0, p0 = np.array([math.pi / 4, math.pi / 3]), np.zeros(2)
    H0 = dp.energy(q0, p0)
    hs, errs = [], []
    for h in DP_RANGES[method]:
        tr = sp.integrate(dp, q0, p0, h, int(round(10 / h)), method=method)
        hs.append(h)
        errs.append(np.max(np.abs(tr.energy - H0)) / abs(H0))
    assert min(errs) > 1e-14
    assert fitted_order(hs, errs) == pytest.approx(ORDER[method], abs=0.2)


def test_lobatto3_is_simpson():
    """The generic Lobatto kernels and Simpson's specialised kernels agree."""
    for sys, q0, p0, h in ((sp.systems.double_pendulum(l1=L_DP, l2=L_DP), [0.8, 1.0], [0, 0], 0.02),
                           (sp.systems.lagrange_top(), [0, 1.0, 0], [0.01, 0.0, 0.03], TOP_PERIOD / 40),
                           (sp.systems.pendulum_chain(6), np.linspace(0.1, 0.6, 6), np.zeros(6), 0.005)):
        a = sp.integrate(sys, q0, p0, h, 500, method="simpson")
        b = sp.integrate(sys, q0, p0, h, 500, method="lobatto3")
        assert np.max(np.abs(a.q - b.q)) <= 1e-13 * np.max(np.abs(a.q))
        assert np.max(np.abs(a.p - b.p)) <= 1e-13 * np.max(np.abs(a.p))
        assert np.allclose(a.q_mid, b.q_mid, rtol=0, atol=1e-13 * np.max(np.abs(a.q)))


@pytest.mark.parametrize("method", ["lobatto4", "lobatto5"])
def test_specialised_kernels_match_generic(method):
    """n <= 4 runs compile-time kernel instances, n > 4 the generic ones: the double
    pendulum embedded in a 5-DOF system with three decoupled oscillators
    (block-diagonal M) must follow the same trajectory as the 2-DOF one."""
    dp = dp_callables()
    w2 = np.array([3.0, 5.0, 7.0])

    def mass(q):
        M = np.eye(5)
        M[:2, :2] = dp["mass"](q[:2])
        return M

    def mass_grad(q):
        T = np.zeros((5, 5, 5))
        T[:2, :2, :2] = dp["mass_grad"](q[:2])
        return T

    def potential(q):
        return dp["potential"](q[:2]) + 0.5 * float(w2 @ q[2:] ** 2)

    def potential_grad(q):
        return np.concatenate([dp["potential_grad"](q[:2]), w2 * q[2:]])

    big = sp.System(5, mass=mass, mass_grad=mass_grad, potential=potential,
                    potential_grad=potential_grad)
    small = sp.System(2, mass=dp["mass"], mass_grad=dp["mass_grad"], potential=dp["potential"],
                      potential_grad=dp["potential_grad"])
    q0, p0 = [math.pi / 4, math.pi / 3], [0.0, 0.0]
    a = sp.integrate(small, q0, p0, 0.04, 100, method)
    b = sp.integrate(big, q0 + [0.0] * 3, p0 + [0.0] * 3, 0.04, 100, method)
    assert_embedded_follows(a, b, 2)


@pytest.mark.parametrize("newton", ["full", "step"])
@pytest.mark.parametrize("method", ["lobatto4", "lobatto5"])
def test_specialised_kernels_match_generic_n4(method, newton):
    """The same check at n = 4 (the fixed instances' Newton matrix in two-column
    pairs for even n): the 4-link chain's own evaluations as callables, alone (fixed
    instances) and with three decoupled oscillators (n = 7, generic kernels)."""
    ch = sp.systems.pendulum_chain(4)
    w2 = np.array([3.0, 5.0, 7.0])

    def embed(M, extra=0.0):
        B = np.zeros((7, 7))
        B[:4, :4] = M
        B[4:, 4:] = np.diag(np.broadcast_to(extra, 3))
        return B

    small = sp.System(4, mass=ch.mass, potential=ch.potential, potential_grad=ch.potential_grad,
                      potential_hess=ch.potential_hess, mass_dir=ch.mass_dir,
                      mass_hess_dir=ch.mass_hess_dir)
    big = sp.System(7, mass=lambda q: embed(ch.mass(q[:4]), 1.0),
                    potential=lambda q: ch.potential(q[:4]) + 0.5 * float(w2 @ q[4:] ** 2),
                    potential_grad=lambda q: np.concatenate([ch.potential_grad(q[:4]), w2 * q[4:]]),
                    potential_hess=lambda q: embed(ch.potential_hess(q[:4]), w2),
                    mass_dir=lambda q, g: embed(ch.mass_dir(q[:4], g[:4])),
                    mass_hess_dir=lambda q, g: embed(ch.mass_hess_dir(q[:4], g[:4])))
    q0, p0 = list(0.5 * np.sin(1.3 * np.arange(4))), [0.0] * 4
    a = sp.integrate(small, q0, p0, 0.02, 100, method, newton=newton)
    b = sp.integrate(big, q0 + [0.0] * 3, p0 + [0.0] * 3, 0.02, 100, method, newton=newton)
    assert_embedded_follows(a, b, 4)


def assert_embedded_follows(a, b, n):
    """b, the n-DOF system a embedded with decoupled oscillators at rest, follows a to
    1e-12 (the specialised kernels against the generic ones) and leaves the oscillators
    exactly at rest."""
    assert np.max(np.abs(a.q - b.q[:, :n])) <= 1e-12
    assert np.max(np.abs(a.p - b.p[:, :n])) <= 1e-12
    assert np.max(np.abs(b.q[:, n:])) == 0.0


@pytest.mark.parametrize("method", sorted(FAMILY) + ["gauss2", "gauss3"])
def test_symplectic_reversible_momenta(method):
    """The one-step map symplectic, symmetric (to Newton's tolerance: rtol 1e-15 here) and
    keeping the cyclic momenta; the Gauss-Legendre schemes too."""
    dp = sp.systems.double_pendulum(l1=L_DP, l2=L_DP)
    q, p = np.array([math.pi / 4, math.pi / 3]), np.array([0.3, -0.2])
    _, _, D = sp._core.step_tangent(dp, q, p, 0.1, method)
    assert symplecticity_defect(D) <= 1e-12
    top = sp.systems.lagrange_top()
    qt = np.array([0.3, math.pi / 3 - 0.2, 5.0])
    pt = top.mass(qt) @ np.array([9.2, 0.0, 252.0])
    _, _, Dt = sp._core.step_tangent(top, qt, pt, TOP_PERIOD / 40, method)
    assert symplecticity_defect(Dt) <= 1e-12
    for sys, q0, p0, h in ((dp, q, p, 0.1), (top, qt, pt, TOP_PERIOD / 40)):
        q1, p1 = sp.step(sys, q0, p0, h, method, rtol=1e-15)
        q2, p2 = sp.step(sys, q1, p1, -h, method, rtol=1e-15)
        scale = max(np.max(np.abs(q0)), np.max(np.abs(p0)))
        assert np.max(np.abs(q2 - q0)) <= 1e-12 * scale and np.max(np.abs(p2 - p0)) <= 1e-12 * scale
    tr = sp.integrate(top, qt, pt, TOP_PERIOD / 40, 400, method=method)
    assert np.all(tr.p[:, 0] == pt[0]) and np.all(tr.p[:, 2] == pt[2])


# Dense output orders (pendulum, 3 periods, error max over 2001 times):
# Lagrange order s, Hermite order min(s + 1, 2s - 2), as measured.
DENSE = {"lobatto2": (2, 2), "simpson": (3, 4), "lobatto4": (4, 5), "lobatto5": (5, 6),
         "gauss2": (3, 4), "gauss3": (4, 5)}


@pytest.mark.parametrize("method", sorted(DENSE))
def test_dense_output_orders(method):
    sys = sp.systems.pendulum()
    T = sp.exact.pendulum_period(math.pi / 2)
    te = np.linspace(0, 3 * T, 2001)
    qe, _ = sp.exact.pendulum(te, math.pi / 2)
    for kind, order in zip(("lagrange", "hermite"), DENSE[method]):
        hs, errs = [], []
        for N in (120, 240, 480):
            tr = sp.integrate(sys, [math.pi / 2], [0.0], 3 * T / N, N, method=method)
            errs.append(np.max(np.abs(tr.dense(te, kind)[:, 0] - qe)))
            hs.append(3 * T / N)
        assert fitted_order(hs, errs) == pytest.approx(order, abs=0.15), kind


def test_dense_output_hits_the_nodes_and_checks_range():
    tr = sp.integrate(sp.systems.double_pendulum(), [0.5, 0.1], [0, 0], 0.05, 20, method="lobatto4")
    for kind in ("lagrange", "hermite"):
        assert np.allclose(tr.dense(tr.t, kind), tr.q, rtol=0, atol=1e-14)
    assert tr.dense(0.5).shape == (2,)
    with pytest.raises(ValueError, match="must lie in"):
        tr.dense([2.0])
    with pytest.raises(ValueError, match="kind"):
        tr.dense([0.1], kind="spline")
