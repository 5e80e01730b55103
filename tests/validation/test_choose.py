"""analysis.choose_step: the chosen setting meets its energy target over the whole
horizon, is close to the largest step a brute-force search over the horizon finds,
scales with the system's time unit, and bad input is refused by name."""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic.analysis import choose_step, energy_error_norm

L_TOP = 9.81 / (2.0 * math.pi) ** 2
Q0_DP = np.array([math.pi / 4, math.pi / 3])


def _dp():
    return sp.systems.double_pendulum(m1=1, m2=1, l1=L_TOP, l2=L_TOP, g=9.81)


def _largest_step(system, q0, p0, T, method, tol):
    """Brute force over the horizon itself: the largest h = T / N, N 2^(1/4) apart,
    whose run reaches max |H - H0| / |H0| <= tol, with the next finer step reaching it
    too (the rule of benchmarks/RESULTS.md section 8)."""
    ok = []
    for k in range(60):
        N = round(T / 0.2 * 2 ** (k / 4))
        e = energy_error_norm(sp.integrate(system, q0, p0, T / N, N, method))
        ok.append((T / N, e <= tol))
        if len(ok) >= 2 and ok[-1][1] and ok[-2][1]:
            return ok[-2][0]
    raise AssertionError("no step reached the target")


@pytest.mark.parametrize("tol", [1e-6, 1e-10])
@pytest.mark.parametrize("method", ["simpson", "lobatto4", "lobatto5", "lobatto6", "lobatto7"])
def test_choice_meets_its_target_over_the_horizon(method, tol):
    """The TOP double pendulum over T = 100 s, each candidate alone (which one the full
    search picks depends on its timings, so every one it can pick is tested here): the
    chosen run's energy error is below the target over all 100 s, and not wastefully far
    below it.  (The pilots see a window of 36 s; lobatto6 at 1e-6 is the case the window
    misses: its pilot at h = 0.101 has 4.3e-7 there, the whole 100 s 1.30e-6, and the
    check over T shrinks the step.)"""
    c = choose_step(_dp(), Q0_DP, np.zeros(2), T=100.0, energy_tol=tol, methods=[method])
    assert c.n_steps * c.h == pytest.approx(100.0, rel=1e-14)
    assert c.method == method and c.newton in ("auto", "step")
    e = energy_error_norm(c.integrate())
    assert e <= tol
    assert e >= 1e-3 * tol


def test_the_check_over_the_horizon_shrinks_a_missed_step():
    """lobatto6 at 1e-6 over 100 s: the window's setting (h = 0.101) misses over the whole
    horizon (1.30e-6); the check runs it over T (fewer steps than the pilots took), shrinks
    the step by the order's prediction and runs again; the choice holds the second run's
    setting and its error over T."""
    c = choose_step(_dp(), Q0_DP, np.zeros(2), T=100.0, energy_tol=1e-6, methods=["lobatto6"])
    checks = [r for r in c.pilots if r["span"] == 100.0]
    assert c.window < 100.0 and len(checks) == 2
    assert checks[0]["energy_error"] > 1e-6 and checks[1]["energy_error"] <= 1e-6
    assert checks[1]["h"] < 0.9 * checks[0]["h"] * (1 + 1e-12)
    assert c.checked and c.error_span == 100.0
    assert (c.h, c.n_steps, c.energy_error) == (checks[1]["h"], checks[1]["steps"],
                                                checks[1]["energy_error"])
    assert sum(r["steps"] for r in checks[:1]) <= sum(r["steps"] for r in c.pilots[:-2])
    assert "over T = 100 " in repr(c)


def test_a_long_horizon_is_not_checked():
    """Over 10^4 s a run of the choice takes far more steps than the pilots (over a
    window of 36 s): no check; the error is the window's."""
    c = choose_step(_dp(), Q0_DP, np.zeros(2), T=1e4, energy_tol=1e-6, methods=["lobatto5"])
    assert not c.checked and c.error_span == c.window < 1e4
    assert all(r["span"] == c.window for r in c.pilots)
    assert c.n_steps > sum(r["steps"] for r in c.pilots)
    assert f"over the window {c.window:.4g}" in repr(c)


def test_choice_is_one_of_the_candidates():
    """The full search (timed, so its pick may vary between machines) returns one of
    the default candidates and a Newton mode it timed."""
    c = choose_step(_dp(), Q0_DP, np.zeros(2), T=100.0, energy_tol=1e-8)
    assert c.n_steps * c.h == pytest.approx(100.0, rel=1e-14)
    assert c.method in ("simpson", "lobatto4", "lobatto5", "lobatto6", "lobatto7")
    assert c.newton in ("auto", "step")


def test_chosen_step_is_near_the_brute_force_largest():
    """One method, so that only the step is chosen: lobatto5 at 1e-8 over 100 s.  The
    choice (pilots over a window, safety 0.5) lies within a factor 2 below the largest
    step that reaches the target over the whole horizon."""
    dp = _dp()
    c = choose_step(dp, Q0_DP, np.zeros(2), T=100.0, energy_tol=1e-8, methods=["lobatto5"],
                    newton="auto")
    h_max = _largest_step(dp, Q0_DP, np.zeros(2), 100.0, "lobatto5", 1e-8)
    assert 0.5 * h_max <= c.h <= 1.2 * h_max


def test_choice_scales_with_the_time_unit():
    """A pendulum 100 times slower (omega 0.1 rad/s against 10): the same choice in its
    own time unit (h 100 times larger, the same number of steps for a 100 times longer
    horizon), and the same pilot errors -- the rule sees only dimensionless numbers."""
    a = choose_step(sp.systems.pendulum(omega=10.0), [1.2], [0.0], T=1.0, energy_tol=1e-9,
                    methods=["lobatto4"], newton="auto")
    b = choose_step(sp.systems.pendulum(omega=0.1), [1.2], [0.0], T=100.0, energy_tol=1e-9,
                    methods=["lobatto4"], newton="auto")
    assert b.n_steps == a.n_steps
    assert b.h / a.h == pytest.approx(100.0, rel=1e-12)
    # (equal but for rounding: the energies are sums in units 1e4 apart, ~10 eps of H0)
    assert b.energy_error == pytest.approx(a.energy_error, abs=1e-14)


def test_constrained_and_chain_systems():
    """The Cartesian pendulum (a constraint) and an 8-link chain: the chosen runs meet
    their targets."""
    s = sp.systems.pendulum_cartesian()
    q0 = np.array([math.sin(1.0), -math.cos(1.0)])
    c = choose_step(s, q0, np.zeros(2), T=50.0, energy_tol=1e-9, methods=["simpson", "lobatto5"])
    assert energy_error_norm(c.integrate()) <= 1e-9
    chain = sp.systems.pendulum_chain(8)
    q0 = 0.5 * np.sin(1.3 * np.arange(8))
    c = choose_step(chain, q0, np.zeros(8), T=10.0, energy_tol=1e-8,
                    methods=["lobatto4", "lobatto5"])
    assert energy_error_norm(c.integrate()) <= 1e-8


def test_qdot0_and_integrate_arguments():
    s = sp.systems.pendulum()
    c = choose_step(s, [1.0], qdot0=[0.5], T=20.0, energy_tol=1e-8, methods=["simpson"])
    traj = c.integrate(store_every=c.n_steps)
    assert traj.q.shape == (2, 1)
    assert traj.t[-1] == pytest.approx(20.0, rel=1e-14)
    p0 = np.asarray(s.mass([1.0])) @ [0.5]
    assert np.allclose(traj.p[0], p0, rtol=0, atol=1e-15)
    assert "StepChoice(method='simpson'" in repr(c)


def test_bad_input_is_refused_by_name():
    dp, z = _dp(), np.zeros(2)
    with pytest.raises(ValueError, match="force"):
        choose_step(sp.systems.pendulum_chain(2, damping=0.1), Q0_DP, z, T=10.0)
    with pytest.raises(ValueError, match="energy_tol"):
        choose_step(dp, Q0_DP, z, T=10.0, energy_tol=0.0)
    with pytest.raises(ValueError, match="energy_tol"):
        choose_step(dp, Q0_DP, z, T=10.0, energy_tol=2.0)
    with pytest.raises(ValueError, match="T must"):
        choose_step(dp, Q0_DP, z, T=-1.0)
    with pytest.raises(TypeError, match="horizon T"):
        choose_step(dp, Q0_DP, z)
    with pytest.raises(ValueError, match="rk4"):
        choose_step(dp, Q0_DP, z, T=10.0, methods=["rk4"])
    with pytest.raises(ValueError, match="safety"):
        choose_step(dp, Q0_DP, z, T=10.0, safety=0.0)
    with pytest.raises(ValueError, match="exactly one of p0 and qdot0"):
        choose_step(dp, Q0_DP, T=10.0)
    # V = m omega^2 (1 - cos q): H0 = 0 at rest at the bottom
    with pytest.raises(ValueError, match="H0 = 0 at the start"):
        choose_step(sp.systems.pendulum(), [0.0], [0.0], T=10.0)


def test_unreachable_target_says_what_each_method_reached():
    with pytest.raises(ValueError, match=r"no method reached .*\(simpson: best"):
        choose_step(sp.systems.pendulum(), [1.0], [0.0], T=10.0, energy_tol=1e-17,
                    methods=["simpson"])
