"""Clear errors: exceptions from callbacks, bad shapes, Newton failure, bad input."""
import math

import numpy as np
import pytest

import symplectic as sp
from conftest import dp_callables


class Boom(Exception):
    pass


def counting(fn, fail_at, exc=Boom):
    calls = {"n": 0}

    def wrapped(*args):
        calls["n"] += 1
        if calls["n"] == fail_at:
            raise exc(f"boom at call {fail_at}")
        return fn(*args)

    return wrapped, calls


CASES = [(m, s) for m in ("simpson", "midpoint", "rk4")
         for s in ("mass", "potential_grad", "mass_grad", "mass_hess", "potential_hess")
         if not (m == "rk4" and s in ("mass_hess", "potential_hess"))]   # rk4: first derivatives only


@pytest.mark.parametrize("method,slot", CASES)
def test_callback_exception_propagates_unchanged(method, slot):
    c = dict(dp_callables())
    c[slot], calls = counting(c[slot], fail_at=40)
    sys = sp.System(2, **c)
    with pytest.raises(Boom) as info:
        sp.integrate(sys, [0.5, 0.2], [0.0, 0.0], 0.01, 1000, method=method)
    assert str(info.value) == "boom at call 40"     # type and message unchanged
    assert calls["n"] == 40       # the C loop stopped at once
    notes = getattr(info.value, "__notes__", [])
    assert any("step" in note and "t = " in note for note in notes)


def test_keyboard_interrupt_in_callback_propagates():
    c = dict(dp_callables())
    c["potential_grad"], _ = counting(c["potential_grad"], 25, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        sp.integrate(sp.System(2, **c), [0.5, 0.2], [0.0, 0.0], 0.01, 100)


@pytest.mark.parametrize("slot,bad,expect", [
    ("mass", lambda q: np.ones(3), r"mass\(q\) returned an array of shape \(3,\), expected \(2, 2\)"),
    ("mass_grad", lambda q: np.zeros((2, 2)), r"mass_grad\(q\) returned an array of shape \(2, 2\), expected \(2, 2, 2\)"),
    ("potential", lambda q: np.zeros(2), r"potential\(q\) returned an array of shape \(2,\), expected a scalar"),
    ("potential_grad", lambda q: [1.0, 2.0, 3.0], r"potential_grad\(q\) returned an array of shape \(3,\), expected \(2,\)"),
    ("potential_hess", lambda q: np.zeros(4), r"potential_hess\(q\) returned an array of shape \(4,\), expected \(2, 2\)"),
])
def test_wrong_return_shape_names_the_callback(slot, bad, expect):
    c = dict(dp_callables())
    c[slot] = bad
    sys = sp.System(2, **c)
    with pytest.raises(ValueError, match=expect):
        sp.integrate(sys, [0.5, 0.2], [0.0, 0.0], 0.01, 10)
        sys.energy(np.array([0.5, 0.2]), np.zeros(2))   # potential is used for the energy


def test_non_numeric_return_is_a_type_error():
    c = dict(dp_callables())
    c["potential_grad"] = lambda q: "abc"
    with pytest.raises(TypeError, match="potential_grad"):
        sp.integrate(sp.System(2, **c), [0.5, 0.2], [0.0, 0.0], 0.01, 10)


def test_nan_from_callback_is_reported():
    c = dict(dp_callables())
    c["potential_grad"] = lambda q: np.array([np.nan, 0.0])
    with pytest.raises(ValueError, match=r"potential_grad\(q\) returned a non-finite value"):
        sp.integrate(sp.System(2, **c), [0.5, 0.2], [0.0, 0.0], 0.01, 10)


def test_non_symmetric_mass_is_reported():
    c = dict(dp_callables())
    c["mass"] = lambda q: np.array([[2.0, 0.1], [0.3, 1.0]])
    with pytest.raises(ValueError, match="non-symmetric"):
        sp.integrate(sp.System(2, **c), [0.5, 0.2], [0.0, 0.0], 0.01, 10)


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


# ---------------------------------------------------------------- input checks
def test_bad_inputs():
    sys = sp.systems.double_pendulum()
    with pytest.raises(ValueError, match=r"q0 must have shape \(2,\)"):
        sp.integrate(sys, [0.1, 0.2, 0.3], [0, 0], 0.01, 10)
    with pytest.raises(ValueError, match=r"p0 must have shape \(2,\)"):
        sp.integrate(sys, [0.1, 0.2], [[0, 0]], 0.01, 10)
    with pytest.raises(ValueError, match="h must be nonzero"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.0, 10)
    with pytest.raises(ValueError, match="h must be finite"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], float("nan"), 10)
    with pytest.raises(ValueError, match="n_steps must be >= 0"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.01, -1)
    with pytest.raises(ValueError, match="unknown method 'rk5'"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.01, 10, method="rk5")
    with pytest.raises(ValueError, match="non-finite"):
        sp.integrate(sys, [0.1, np.inf], [0, 0], 0.01, 10)
    with pytest.raises(TypeError, match="symplectic.System"):
        sp.integrate("double_pendulum", [0.1, 0.2], [0, 0], 0.01, 10)
    with pytest.raises(TypeError, match="object array"):
        sp.integrate(sys, np.array([0.1, 0.2], dtype=object), [0, 0], 0.01, 10)
    with pytest.raises(ValueError, match="M must be positive definite"):
        sp.systems.linear([[1.0, 2.0], [2.0, 1.0]], np.eye(2))
    with pytest.raises(ValueError, match="m1 must be finite and > 0"):
        sp.systems.double_pendulum(m1=-1.0)


def test_inputs_are_not_modified_and_flexible_inputs_work():
    sys = sp.systems.double_pendulum()
    q0 = np.array([0.3, 0.9, 99.0])[:2]
    p0 = np.array([0.0, 7.0, 0.0, 0.0])[::2]         # non-contiguous view
    p0.flags.writeable = False
    qc, pc = q0.copy(), p0.copy()
    a = sp.integrate(sys, q0, p0, 0.01, 50)
    assert np.array_equal(q0, qc) and np.array_equal(p0, pc)
    b = sp.integrate(sys, [0.3, 0.9], [0, 0], 0.01, 50)    # lists of ints
    assert np.array_equal(a.q, b.q)
    pend = sp.systems.pendulum()
    c = sp.integrate(pend, 1, 0, 0.01, 5)                   # scalars for n = 1
    assert c.q.shape == (6, 1)


def test_system_cannot_be_reinitialised():
    sys = sp.systems.pendulum()
    with pytest.raises(TypeError, match="re-initialised"):
        sp._core.System.__init__(sys, 1, builtin="pendulum", params=[1.0, 1.0])


def test_t0_and_zero_steps():
    sys = sp.systems.pendulum()
    tr = sp.integrate(sys, [1.0], [0.0], 0.1, 0, t0=5.0)
    assert tr.t.tolist() == [5.0] and tr.q.shape == (1, 1) and tr.newton_iterations.shape == (0,)
    tr = sp.integrate(sys, [1.0], [0.0], 0.1, 3, t0=5.0)
    assert np.allclose(tr.t, [5.0, 5.1, 5.2, 5.3])
