"""The fast paths of the Newton engine against the plain one (benchmarks/NOTES.md, sections 1-5).

newton="step" (one Newton matrix and LU per step, reused by the step's iterations and
refreshed when they contract poorly; sym_newton.c) solves the same discrete equations as
newton="full" to the Newton tolerance, so the states agree to ~1e-13 relative over runs short
enough that the dynamics have not amplified rounding; its errors against the exact pendulum
give the registered orders.  (The unrolled small LU kernels are bitwise the plain ones:
tests/c_core/test_lu_kernels.py; the default path is bitwise main's: benchmarks/bitwise_check.py.)
No timing here: speed is measured in section 9 of benchmarks/run.py (--only yardstick).
"""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _registry
from support.cases import method_cases

IMPLICIT = [m for m in method_cases() if m != "rk4"]


def systems():
    sy = sp.systems
    L = 9.81 / (2 * math.pi) ** 2
    return {
        "pendulum": (sy.pendulum(), [2.0], [0.0], 0.05),
        "double_pendulum": (sy.double_pendulum(m1=1, m2=1, l1=L, l2=L, g=9.81),
                            [math.pi / 4, math.pi / 3], [0.0, 0.0], 0.05),
        "lagrange_top": (sy.lagrange_top(m=1.0, I=1.0, I3=0.5, l=1.0, g=9.81),
                         [0.0, 1.0, 0.0], [1.75, 0.0, 2.625], 0.02),
        "chain8": (sy.pendulum_chain(8, l=1.0 / 8), 0.3 + 0.05 * np.arange(8), np.zeros(8), 0.002),
    }


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("name", list(systems()))
def test_step_newton_matches_full_newton(method, name):
    """Iterated to rounding (rtol = 1e-15: both modes stop on the residual or an update at
    rounding level), both modes give the root of the same step equations: 100 steps agree
    to 1e-12 relative."""
    system, q0, p0, h = systems()[name]
    full = sp.integrate(system, q0, p0, h, 100, method=method, rtol=1e-15)
    step = sp.integrate(system, q0, p0, h, 100, method=method, rtol=1e-15, newton="step")
    for a, b in ((step.q, full.q), (step.p, full.p)):
        assert np.max(np.abs(a - b)) <= 1e-12 * max(1.0, np.max(np.abs(b))), (name, method)
    if full.q_mid is not None:
        assert np.max(np.abs(step.q_mid - full.q_mid)) <= 1e-12 * np.max(np.abs(full.q_mid))


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("name", list(systems()))
def test_step_newton_steps_match_full_newton_steps(method, name):
    """At the default tolerance (1e-13 on the update relative to the increment) each step
    of the per-step mode from a state of the full-Newton run lands on that run's next state
    to 1e-12 relative; over many steps the two differ by the accumulated tolerance only."""
    system, q0, p0, h = systems()[name]
    full = sp.integrate(system, q0, p0, h, 60, method=method)
    for j in range(0, 60, 7):
        one = sp.integrate(system, full.q[j], full.p[j], h, 1, method=method, newton="step")
        ref = sp.integrate(system, full.q[j], full.p[j], h, 1, method=method)
        for a, b in ((one.q[1], ref.q[1]), (one.p[1], ref.p[1])):
            assert np.max(np.abs(a - b)) <= 1e-12 * max(1.0, np.max(np.abs(b))), (name, method, j)
    step = sp.integrate(system, q0, p0, h, 60, method=method, newton="step")
    assert np.max(np.abs(step.q - full.q)) <= 1e-10 * max(1.0, np.max(np.abs(full.q)))
    # With the same start (s = 2: both extrapolate the last step's polynomial) never fewer
    # iterations than full Newton: stale updates converge linearly.  For s >= 3 the per-step
    # mode starts from a predictor through the last two steps (sym_galerkin.c SYM_PRED_POLY2,
    # SYM_PRED_POLY1), which saves iterations at small h (chain8, Simpson: 1.78 against 1.78)
    # and at large h costs what linear convergence costs down to the stopping rule's 1e-3 rtol
    # (double pendulum, h = 0.05: 4.53 against 3.07 with Simpson, 4.52 against 2.93 with gauss2,
    # the most; before the stopping rule took 1e-3 rtol, 4.13 against 2.92 and 4.17 against
    # 2.88).
    its_step, its_full = step.newton_iterations.mean(), full.newton_iterations.mean()
    if len(_registry.METHODS[method].nodes) == 2:
        assert its_step >= its_full - 1e-12
    else:
        assert its_step <= its_full + 2.0


def test_step_newton_refreshes_early_at_large_h():
    """At large h a stale second update contracts too slowly to be kept: the per-step mode
    predicts its rate from the chord constant of recent steps and refreshes the factors right
    after the first update (sym_newton.c, STEP_KC_AGE).  Simpson, double pendulum, h = 0.1:
    3.96 iterations a step against full Newton's 3.61 (without the early refresh 4.53), the
    same states to the Newton tolerance."""
    system, q0, p0, _ = systems()["double_pendulum"]
    full = sp.integrate(system, q0, p0, 0.1, 300, method="simpson")
    step = sp.integrate(system, q0, p0, 0.1, 300, method="simpson", newton="step")
    assert step.newton_iterations.mean() <= full.newton_iterations.mean() + 0.5
    assert np.max(np.abs(step.q - full.q)) <= 1e-10 * np.max(np.abs(full.q))


def test_step_newton_keeps_cyclic_momenta_bitwise():
    """The top's phi and psi are cyclic: p_phi and p_psi stay bitwise constant in any
    Newton mode (the momentum update is in difference form)."""
    top = sp.systems.lagrange_top(m=1.0, I=1.0, I3=0.5, l=1.0, g=9.81)
    tr = sp.integrate(top, [0.0, 1.0, 0.0], [1.75, 0.0, 2.625], 0.02, 500, method="lobatto5",
                      newton="step")
    assert np.all(tr.p[:, 0] == 1.75) and np.all(tr.p[:, 2] == 2.625)


Q0 = 2.0


def pendulum_errors(method, newton):
    """Errors at the eighth-period nodes of one period of the pendulum released at 2 rad,
    against the exact solution, relative to the size of q and p; N = 8 j steps."""
    T = sp.exact.pendulum_period(Q0)
    pendulum = sp.systems.pendulum()
    out = []
    for N in (32, 64, 128, 256):
        tr = sp.integrate(pendulum, [Q0], [0.0], T / N, N, method, newton=newton)
        at = slice(N // 8, N + 1, N // 8)
        q, p = sp.exact.pendulum(tr.t[at], Q0)
        out.append(float(np.max(np.hypot((tr.q[at, 0] - q) / Q0,
                                         (tr.p[at, 0] - p) / np.max(np.abs(p))))))
    return T / np.array([32, 64, 128, 256]), np.array(out)


@pytest.mark.parametrize("method", ["simpson", "midpoint", "lobatto4"])
def test_step_newton_orders_against_the_exact_pendulum(method):
    hs, errs = pendulum_errors(method, "step")
    _, errs_full = pendulum_errors(method, "full")
    keep = errs > 5e-14
    assert keep.sum() >= 3
    order = float(np.polyfit(np.log(hs[keep]), np.log(errs[keep]), 1)[0])
    assert order == pytest.approx(_registry.METHODS[method].order, abs=0.15)
    # the same discrete solution to the Newton tolerance: the errors agree to 1e-12 plus
    # 1e-6 of themselves (measured: at most 2.4e-13 apart, midpoint, errors 5e-5 ... 3e-3;
    # 1e-14 for simpson and lobatto4, down to errors of 6e-14)
    assert np.all(np.abs(errs - errs_full) <= 1e-12 + 1e-6 * errs_full)


def test_step_newton_recovers_when_the_step_matrix_stops_contracting():
    """A stiff 64-link chain at h = 0.01 with a poor predictor (predictor=False): the first
    matrix of a step is far from the root's, the stale updates contract poorly and the
    factors are refreshed (or the step restarted); the run still solves the equations."""
    n = 64
    chain = sp.systems.pendulum_chain(n)
    q0 = 0.5 * np.sin(1.3 * np.arange(n))
    full = sp.integrate(chain, q0, np.zeros(n), 0.01, 60, predictor=False, newton="full")
    step = sp.integrate(chain, q0, np.zeros(n), 0.01, 60, predictor=False, newton="step")
    assert np.max(np.abs(full.q - step.q)) <= 1e-11 * np.max(np.abs(full.q))
    assert np.max(np.abs(full.p - step.p)) <= 1e-11 * np.max(np.abs(full.p))
    assert step.newton_iterations.mean() > full.newton_iterations.mean()


def test_newton_mode_is_checked():
    pendulum = sp.systems.pendulum()
    with pytest.raises(ValueError, match="newton must be 'full', 'chord', 'step', 'decoupled' or 'auto', got 'simplified'"):
        sp.integrate(pendulum, [1.0], [0.0], 0.1, 4, newton="simplified")
