"""Error messages name the callback, the value and the point (issue: exact messages).

Each test matches the text a user sees, so a message that loses its numbers (e.g. a
format directive PyErr_Format does not know, printed literally) fails here.
"""
import ctypes

import numpy as np
import pytest

import symplectic as sp

# the compiled pendulum callback (fixture pendulum_lib): support/clibs.py, PENDULUM


def _unit_mass(q):
    return np.eye(2)


def _zero_grad(q):
    return np.zeros((2, 2, 2))


def test_non_symmetric_mass_names_the_entries_and_q():
    def mass(q):
        return np.array([[1.0, 0.5], [0.4, 1.0]])

    sys = sp.System(2, mass, lambda q: 0.0, mass_grad=_zero_grad,
                    potential_grad=lambda q: np.zeros(2))
    with pytest.raises(ValueError) as err:
        sp.integrate(sys, [0.1, 0.2], [0.0, 0.0], 0.01, 3, check=False)
    msg = str(err.value)
    assert "%" not in msg
    assert "mass(q) returned a non-symmetric matrix at q = array([0.1, 0.2]): " \
           "M[0, 1] = 0.5 but M[1, 0] = 0.40000000000000002" in msg


@pytest.mark.parametrize("ret, kind, text", [
    (None, TypeError, "potential(q) returned None (a missing return statement?)"),
    (np.array([1.0, 2.0]), ValueError,
     "potential(q) returned an array of shape (2,), expected a scalar (shape ())"),
    ("a", TypeError, "potential(q) returned str"),
])
def test_bad_potential_is_named_with_finite_difference_gradient(ret, kind, text):
    sys = sp.System(2, _unit_mass, lambda q: ret)        # grad V by finite differences of V
    with pytest.raises(kind) as err:
        sp.integrate(sys, [0.1, 0.2], [0.0, 0.0], 0.01, 3, check=False)
    assert text in str(err.value)


def test_bad_mass_is_named_with_finite_difference_gradient():
    sys = sp.System(2, lambda q: np.eye(3), lambda q: 0.0, potential_grad=lambda q: np.zeros(2))
    with pytest.raises(ValueError, match=r"mass\(q\) returned an array of shape \(3, 3\), "
                                         r"expected \(2, 2\)"):
        sp.integrate(sys, [0.1, 0.2], [0.0, 0.0], 0.01, 3, check=False)


def test_compiled_callback_status_gives_value_need_and_q(pendulum_lib):
    sys = sp.System.from_cfunc(2, pendulum_lib.seven_eval)
    with pytest.raises(RuntimeError) as err:
        sp.integrate(sys, [0.1, 0.2], [0.0, 0.0], 0.01, 3, check=False)
    msg = str(err.value)
    assert msg.startswith("the compiled callback returned 7 (nonzero: stop) when asked for ")
    # the first evaluation of a Simpson step asks for M and grad V at q0
    assert "when asked for M, grad V (need = 17) at q = array([0.1, 0.2])" in msg
    with pytest.raises(RuntimeError, match=r"returned 7 \(nonzero: stop\) when asked for V "
                                           r"\(need = 8\) at q = array\(\[0\.3, 0\.4\]\)"):
        sys.potential([0.3, 0.4])


def test_compiled_callback_status_in_threads_names_each_call(pendulum_lib):
    sys = sp.System.from_cfunc(2, pendulum_lib.seven_eval)
    with pytest.raises(RuntimeError, match=r"returned 7 \(nonzero: stop\) when asked for"):
        sp.integrate_many(sys, [[0.1, 0.2], [0.3, 0.4]], [0.0, 0.0], 0.01, 3, threads=2,
                          check=False)


def test_user_data_numpy_array_is_passed_and_kept_alive(pendulum_lib):
    par = np.array([1.3, 2.0 * np.pi])
    sys = sp.System.from_cfunc(1, pendulum_lib.pend_eval, user_data=par)
    del par                                                     # the System keeps it alive
    ref = sp.integrate(sp.systems.pendulum(m=1.3, omega=2.0 * np.pi), [1.0], [0.0], 0.01, 200)
    tr = sp.integrate(sys, [1.0], [0.0], 0.01, 200, check=False)
    assert np.max(np.abs(tr.q - ref.q)) <= 1e-13


def test_user_data_ctypes_objects(pendulum_lib):
    arr = (ctypes.c_double * 2)(1.3, 2.0 * np.pi)
    for ud in (arr, ctypes.cast(arr, ctypes.c_void_p), ctypes.pointer(arr)):
        sys = sp.System.from_cfunc(1, pendulum_lib.pend_eval, user_data=ud)
        assert sys.potential([0.5]) == pytest.approx(1.3 * (2 * np.pi) ** 2 * (1 - np.cos(0.5)),
                                                     rel=1e-14)


def test_user_data_bad_type_message_is_about_user_data(pendulum_lib):
    with pytest.raises(TypeError, match=r"^user_data must be None, an int address, a "
                                        r"C-contiguous NumPy array or a ctypes object"):
        sp.System.from_cfunc(1, pendulum_lib.pend_eval, user_data="params")
    with pytest.raises(ValueError, match="user_data: the NumPy array must be C-contiguous"):
        sp.System.from_cfunc(1, pendulum_lib.pend_eval, user_data=np.zeros((4, 4))[:, 0])


def test_compiled_system_repr(pendulum_lib):
    sys = sp.System.from_cfunc(1, pendulum_lib.pend_eval, user_data=np.array([1.0, 1.0]), name="pend")
    assert repr(sys) == "<symplectic.System 'pend' n=1, compiled C callback>"
    assert "Python callables" in repr(sp.System(1, lambda q: np.eye(1), lambda q: 0.0))


def test_step_failure_reason_comes_from_the_core():
    # M(q) = 1 - q stops being positive definite at q = 1, which the step from
    # q = 0.95 crosses (M at the start is an input, refused before the step:
    # tests/model/test_mass_validation.py)
    sys = sp.System(1, lambda q: np.array([[1.0 - q[0]]]), lambda q: 0.0,
                    mass_grad=lambda q: np.array([[[-1.0]]]),
                    potential_grad=lambda q: np.zeros(1))
    with pytest.raises(sp.ConvergenceError) as err:
        sp.step(sys, [0.95], [0.1], 0.05, check=False)
    assert err.value.reason == "mass matrix is not symmetric positive definite"
    assert ("simpson failed at step 0 (t = 0, h = 0.05): mass matrix is not symmetric positive "
            "definite; ") in str(err.value)


@pytest.mark.parametrize("ret, kind, text", [
    (None, TypeError, "potential(q) returned None (a missing return statement?)"),
    (np.array([1.0, 2.0]), ValueError,
     "potential(q) returned an array of shape (2,), expected a scalar (shape ())"),
])
def test_bad_potential_is_named_at_the_first_integrate_when_its_gradient_is_given(ret, kind, text):
    # the integration never calls V itself (only grad V): the first-use check evaluates it once
    sys = sp.System(2, _unit_mass, lambda q: ret, potential_grad=lambda q: np.array(q))
    with pytest.raises(kind) as err:
        sp.integrate(sys, [0.1, 0.2], [0.0, 0.0], 0.01, 3)
    assert text in str(err.value)
    with pytest.raises(kind):
        sp.step(sys, [0.1, 0.2], [0.0, 0.0], 0.01)
