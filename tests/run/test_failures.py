"""Failures during a run: ConvergenceError (Newton, a non-finite value, a mass
matrix that stops being positive definite) built in one place for step,
integrate and ensemble members, with the trajectory up to the failing step;
and the completed steps kept when a callback fails or Ctrl-C stops a run."""
import os
import signal
import threading

import numpy as np
import pytest

import symplectic as sp
from support.cases import dp_with
from support.models import dp_callables

Q0, P0 = [0.5, 0.2], [0.0, 0.0]


def blowup_system():
    """qdd = 4 q^3: finite-time blow-up, so the implicit steps stop having a solution."""
    return sp.System(1, np.eye(1), lambda q: -q[0] ** 4, potential_grad=lambda q: -4 * q ** 3,
                     potential_hess=lambda q: np.array([[-12 * q[0] ** 2]]))


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
def test_newton_failure_names_step_time_residual(method):
    with pytest.raises(sp.ConvergenceError) as info:
        sp.integrate(blowup_system(), [1.0], [0.0], 0.05, 100, method=method)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.step > 5
    assert err.t == pytest.approx(0.05 * err.step)
    msg = str(err)
    assert f"step {err.step}" in msg and "t = " in msg and "residual" in msg
    assert err.residual > 0
    # the trajectory up to the failing step is kept
    tr = err.trajectory
    assert len(tr.t) == err.step + 1 and tr.t[-1] == err.t
    assert np.all(np.isfinite(tr.q))


def test_step_failure_raises_convergence_error():
    with pytest.raises(sp.ConvergenceError, match="did not converge"):
        sp.step(sp.systems.pendulum(), [3.0], [0.0], 1.0, max_iter=1)


# h = 1 s makes one Newton iteration fail at step 0 from every entry point; ensemble member 0
# starts at the bottom (omega h = 2 pi, beyond simpson's 2.83), so integrate_many warns before
# member 1 fails.  The warning is tests/run/test_stability.py's subject, ignored here.
@pytest.mark.filterwarnings(
    r"ignore:simpson with \|h\| = 1 s at or beyond its stability limit:symplectic.StabilityWarning")
def test_one_convergence_error_for_step_integrate_and_members():
    """The same reason (the C core's text), step, time and message layout from
    every entry point."""
    pend = sp.systems.pendulum()
    with pytest.raises(sp.ConvergenceError) as one:
        sp.step(pend, [3.0], [0.0], 1.0, max_iter=1)
    with pytest.raises(sp.ConvergenceError) as run:
        sp.integrate(pend, [3.0], [0.0], 1.0, 3, max_iter=1)
    with pytest.raises(sp.ConvergenceError) as member:
        sp.integrate_many(pend, [[0.0], [3.0]], [0.0], 1.0, 3, max_iter=1)
    for info, who in ((one, "simpson failed"), (run, "simpson failed"),
                      (member, "simpson (ensemble member 1) failed")):
        err = info.value
        assert err.reason == "Newton iteration did not converge" and err.step == 0 and err.t == 0.0
        assert str(err).startswith(f"{who} at step 0 (t = 0, h = 1): Newton iteration did not "
                                   f"converge; 1 Newton iterations, residual ")
    assert one.value.trajectory is None and member.value.trajectory is None
    assert len(run.value.trajectory.t) == 1


def test_mass_matrix_losing_positive_definiteness_mid_run():
    """A callable M(q) that becomes indefinite: ConvergenceError naming the reason."""
    sys_ = sp.System(1, lambda q: np.array([[1.0 - q[0]]]), lambda q: 0.0,
                     mass_grad=lambda q: np.array([[[-1.0]]]),
                     potential_grad=lambda q: np.zeros(1))
    with pytest.raises(sp.ConvergenceError, match="positive definite|singular|converge") as info:
        sp.integrate(sys_, [0.0], [1.0], 0.05, 100)
    assert info.value.trajectory is not None and info.value.step >= 1


def test_callback_failure_mid_integration_keeps_the_trajectory():
    """A NaN from a callback after 400 calls: ValueError naming the callback, a note
    naming the step and t, and the completed steps in exc.trajectory."""
    c = dp_callables()
    calls = {"n": 0}

    def grad(q):
        calls["n"] += 1
        return np.array([np.nan, 0.0]) if calls["n"] > 400 else c["potential_grad"](q)

    with pytest.raises(ValueError, match="potential_grad.*non-finite") as info:
        sp.integrate(dp_with("potential_grad", grad), Q0, P0, 0.01, 1000)
    err = info.value
    note = " ".join(getattr(err, "__notes__", []))
    part = err.trajectory
    k = len(part.t) - 1
    assert 10 < k < 1000 and f"at step {k} of 1000; {k} steps done" in note
    assert f"t = {0.01 * k:.10g}"[:8] in note
    ref = sp.integrate(dp_with("potential_grad", c["potential_grad"]), Q0, P0, 0.01, k)
    np.testing.assert_array_equal(part.q, ref.q)
    np.testing.assert_array_equal(part.p, ref.p)
    np.testing.assert_array_equal(part.q_mid, ref.q_mid)


@pytest.mark.parametrize("closed_form", [False, True])
def test_non_finite_state_raises_convergence_error_with_trajectory(closed_form):
    """Simpson far beyond its stability limit on x'' = -x (omega h = 3 > 2
    sqrt 2): the closed form (which computes what the scheme computes)
    overflows to inf; the Newton path stops as soon as the energy has grown
    as only an unstable step can make it (csrc/core/sym_galerkin_roots.c,
    track_balance), naming omega h and h_max."""
    osc = sp.systems.linear([[1.0]], [[1.0]])
    with pytest.warns(sp.linear.StabilityWarning):
        with pytest.raises(sp.ConvergenceError) as info:
            sp.integrate(osc, [1.0], [0.0], 3.0, 100_000, closed_form=closed_form)
    err = info.value
    assert f"step {err.step}" in str(err) and err.t == pytest.approx(3.0 * err.step)
    part = err.trajectory
    assert len(part.t) == err.step + 1 and np.all(np.isfinite(part.q))
    if closed_form:
        assert "non-finite" in err.reason and abs(part.q[-1, 0]) > 1e300
    else:
        assert err.reason.startswith("unstable step size") and err.step < 20
        assert "omega_max h = 3 " in err.reason and "h_max = 2.82843 s" in err.reason
        assert abs(part.q[-1, 0]) < 1e3


def test_ctrl_c_keeps_the_completed_steps():
    chain = sp.systems.pendulum_chain(16)
    q0 = np.linspace(0.1, 0.5, 16)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt) as info:
        sp.integrate(chain, q0, np.zeros(16), 1e-3, 1_000_000)
    part = info.value.trajectory
    k = len(part.t) - 1
    assert k > 0 and np.all(np.isfinite(part.q))
    ref = sp.integrate(chain, q0, np.zeros(16), 1e-3, min(k, 2000))
    np.testing.assert_array_equal(part.q[:len(ref.q)], ref.q)
