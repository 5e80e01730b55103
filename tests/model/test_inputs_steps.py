"""Input robustness, the run: h, n_steps, t0, the method name, Newton's options,
integrate_many's options and the memory check -- one rule each
(symplectic._model._validate), the same in step, integrate, integrate_many,
symplectic.linear and symplectic.analysis."""
import inspect
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic import analysis, linear
from symplectic._model import _runspec

DP = sp.systems.double_pendulum()
Q0, P0 = [0.5, 0.2], [0.0, 0.0]


@pytest.mark.parametrize("h,exc,match", [
    (0.0, ValueError, "nonzero"), (float("nan"), ValueError, "finite"),
    (float("inf"), ValueError, "finite"), ("0.1", TypeError, "real number"),
    (None, TypeError, "h is required"), (True, TypeError, "real number"),
])
def test_bad_step_sizes(h, exc, match):
    with pytest.raises(exc, match=match):
        sp.integrate(DP, Q0, P0, h, 10)


@pytest.mark.parametrize("h,exc,match", [
    (0.0, ValueError, "h must be nonzero"), (float("nan"), ValueError, "h must be finite"),
    (float("inf"), ValueError, "h must be finite"), ("0.1", TypeError, "h must be a real number"),
    (True, TypeError, "h must be a real number"), (None, TypeError, "h is required"),
])
def test_one_rule_for_h_everywhere(h, exc, match):
    runs = [lambda: sp.step(DP, Q0, P0, h), lambda: sp.integrate(DP, Q0, P0, h, 3),
            lambda: sp.integrate_many(DP, [Q0], [P0], h, 3),
            lambda: analysis.tangent_map(DP, Q0, P0, h),
            lambda: linear.propagate(np.eye(2), np.eye(2), Q0, P0, h, 3)]
    for run in runs:
        with pytest.raises(exc, match=match):
            run()


def test_h_may_be_any_real_scalar():
    ref = sp.integrate(DP, Q0, P0, 0.01, 5)
    for h in (np.float64(0.01), np.array(0.01), np.array([0.01])[0]):
        assert np.array_equal(sp.integrate(DP, Q0, P0, h, 5).q, ref.q)


def test_negative_h_integrates_backward_and_retraces():
    fwd = sp.integrate(DP, Q0, P0, 0.01, 500)
    back = sp.integrate(DP, fwd.q[-1], fwd.p[-1], -0.01, 500, t0=fwd.t[-1])
    assert back.t[-1] == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(back.q[::-1], fwd.q, atol=1e-9)
    np.testing.assert_allclose(back.p[::-1], fwd.p, atol=1e-9)


@pytest.mark.parametrize("n_steps,exc", [(-1, ValueError), (2.0, TypeError), ("10", TypeError),
                                         (None, TypeError), (True, TypeError)])
def test_bad_step_counts(n_steps, exc):
    with pytest.raises(exc, match="n_steps"):
        sp.integrate(DP, Q0, P0, 0.01, n_steps)
    with pytest.raises(exc, match="n_steps"):
        sp.integrate_many(DP, [Q0], [P0], 0.01, n_steps)


def test_bad_step_inputs():
    sys = sp.systems.double_pendulum()
    with pytest.raises(ValueError, match="h must be nonzero"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.0, 10)
    with pytest.raises(ValueError, match="h must be finite"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], float("nan"), 10)
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.01, -1)
    with pytest.raises(ValueError, match="unknown method 'rk5'"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.01, 10, method="rk5")


def test_unknown_method_names():
    with pytest.raises(ValueError, match="unknown method 'euler'"):
        sp.integrate(DP, Q0, P0, 0.01, 10, method="euler")
    with pytest.raises(TypeError, match="method must be a string"):
        sp.integrate(DP, Q0, P0, 0.01, 10, method=3)
    for run in (lambda m: sp.step(DP, Q0, P0, 0.01, m),
                lambda m: sp.integrate_many(DP, [Q0], [P0], 0.01, 2, m),
                lambda m: analysis.tangent_map(DP, Q0, P0, 0.01, m),
                lambda m: analysis.convergence_study(DP, Q0, P0, m, [0.1], 0.1)):
        with pytest.raises(ValueError, match=r"unknown method 'euler'; available: \["):
            run("euler")


@pytest.mark.parametrize("kw,exc,match", [
    (dict(rtol=0.0), ValueError, "rtol must be > 0, got 0.0"),
    (dict(rtol="1e-10"), TypeError, "rtol must be a real number"),
    (dict(max_iter=0), ValueError, "max_iter must be >= 1, got 0"),
    (dict(max_iter=2.5), TypeError, "max_iter must be an int, got 2.5"),
])
def test_newton_options(kw, exc, match):
    for run in (lambda: sp.step(DP, Q0, P0, 0.01, **kw), lambda: sp.integrate(DP, Q0, P0, 0.01, 3, **kw),
                lambda: sp.integrate_many(DP, [Q0], [P0], 0.01, 3, **kw)):
        with pytest.raises(exc, match=match):
            run()
    with pytest.raises(ValueError, match="newton must be 'full', 'chord', 'step', 'decoupled' or 'auto', got 'broyden'"):
        sp.integrate_many(DP, [Q0], [P0], 0.01, 3, newton="broyden")


def test_ensemble_options():
    with pytest.raises(ValueError, match="errors must be 'raise' or 'mark', got 'ignore'"):
        sp.integrate_many(DP, [Q0], [P0], 0.01, 3, errors="ignore")
    for store in ("some", 0, -2, 2.5, True):
        with pytest.raises(ValueError, match="store must be 'all', 'final' or a positive int"):
            sp.integrate_many(DP, [Q0], [P0], 0.01, 3, store=store)
    with pytest.raises(ValueError, match="threads must be >= 1, got 0"):
        sp.integrate_many(DP, [Q0], [P0], 0.01, 3, threads=0)
    with pytest.raises(TypeError, match="threads must be an int"):
        sp.integrate_many(DP, [Q0], [P0], 0.01, 3, threads=1.5)


def test_huge_step_counts_fail_before_allocating(monkeypatch):
    with pytest.raises(MemoryError, match=r"n_steps=1000000000000000.*GiB.*available"):
        sp.integrate(DP, Q0, P0, 0.01, 10 ** 15)
    with pytest.raises(MemoryError, match="integrate_many"):
        sp.integrate_many(DP, np.zeros((4, 2)), np.zeros((4, 2)), 0.01, 10 ** 13)
    # the check uses the memory actually available: pretend there is 1 MiB
    monkeypatch.setattr(_runspec, "available_memory", lambda: 2 ** 20)
    sp.integrate(DP, Q0, P0, 0.01, 1000)                      # ~40 kB: fine
    with pytest.raises(MemoryError, match=r"0.0\d+ GiB .* 0.000977 GiB"):
        sp.integrate(DP, Q0, P0, 0.01, 100_000)               # ~4 MB: refused
    # with the memory size unknown, nothing is refused
    monkeypatch.setattr(_runspec, "available_memory", lambda: None)
    sp.integrate(DP, Q0, P0, 0.01, 100_000)


def test_small_outputs_do_not_ask_for_the_free_memory(monkeypatch):
    """Below _runspec.MEMORY_CHECKED_FROM bytes the kernel is not asked (it costs
    more than a short run); above, it is."""
    asked = []
    monkeypatch.setattr(_runspec, "available_memory", lambda: asked.append(1) or 2 ** 40)
    sp.integrate(DP, Q0, P0, 0.01, 1000)                      # ~40 kB
    assert not asked
    sp.integrate(DP, Q0, P0, 0.01, 100_000)                   # ~4 MB
    assert asked


def test_t0_and_zero_steps():
    sys = sp.systems.pendulum()
    tr = sp.integrate(sys, [1.0], [0.0], 0.1, 0, t0=5.0)
    assert tr.t.tolist() == [5.0] and tr.q.shape == (1, 1) and tr.newton_iterations.shape == (0,)
    tr = sp.integrate(sys, [1.0], [0.0], 0.1, 3, t0=5.0)
    assert np.allclose(tr.t, [5.0, 5.1, 5.2, 5.3])


def test_bad_start_times():
    for t0, exc in ((math.inf, ValueError), ("0", TypeError), (None, TypeError)):
        with pytest.raises(exc, match="t0 must be"):
            sp.integrate(DP, Q0, P0, 0.01, 3, t0=t0)
        with pytest.raises(exc, match="t0 must be"):
            sp.integrate_many(DP, [Q0], [P0], 0.01, 3, t0=t0)


@pytest.mark.parametrize("opt", [dict(rtol=1e-10), dict(max_iter=5), dict(newton="chord"),
                                 dict(predictor=False), dict(branch_check="never")])
def test_a_newton_option_on_rk4_is_an_error_in_every_entry_point(opt):
    # rk4 solves nothing: an option it would ignore is refused, as sp.Integrator refuses it
    name = next(iter(opt))
    calls = {sp.integrate: lambda: sp.integrate(DP, Q0, P0, 0.01, 3, "rk4", **opt),
             sp.step: lambda: sp.step(DP, Q0, P0, 0.01, "rk4", **opt),
             sp.integrate_many: lambda: sp.integrate_many(DP, [Q0], [P0], 0.01, 3, "rk4", **opt)}
    takes = [f for f in calls if name in inspect.signature(f).parameters]
    assert sp.integrate in takes
    for f in takes:
        with pytest.raises(TypeError, match=rf"method 'rk4' is explicit: .*'{name}'"):
            calls[f]()
    # the defaults, spelled out, are not options given
    tr = sp.integrate(DP, Q0, P0, 0.01, 3, "rk4", rtol=None, newton="auto", predictor=True,
                      branch_check="auto")
    assert np.array_equal(tr.q, sp.integrate(DP, Q0, P0, 0.01, 3, "rk4").q)
