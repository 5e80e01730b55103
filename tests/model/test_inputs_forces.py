"""Bad input to force= (issue 16): every one a clear exception naming the
force and, where there is one, the step; never a crash (the sanitizer run
covers leaks)."""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core, forces

S2 = sp.systems.double_pendulum()
Q0, P0 = [0.3, 0.2], [0.0, 0.0]


def run(force, n_steps=10, method="simpson", **kw):
    return sp.integrate(S2, Q0, P0, 0.01, n_steps, method, force=force, **kw)


# ---------------------------------------------------------------- held arrays
@pytest.mark.parametrize("shape", [(9, 2), (11, 2), (10, 3), (10,), (2, 10, 2)])
def test_held_array_of_the_wrong_shape(shape):
    with pytest.raises(ValueError, match=r"force: a held force array must have shape "
                                         r"\(n_steps = 10, n = 2\).*got shape"):
        run(np.zeros(shape))


def test_held_array_with_a_nan_names_the_step():
    F = np.zeros((10, 2))
    F[7, 1] = np.nan
    with pytest.raises(ValueError, match=r"non-finite value at step 7: \[0.0, nan\]"):
        run(F)
    F[7, 1] = np.inf
    with pytest.raises(ValueError, match="at step 7"):
        sp.integrate_many(S2, Q0, P0, 0.01, 10, force=F)


@pytest.mark.parametrize("bad, kind", [
    (np.zeros((10, 2), dtype=complex), TypeError),
    (np.array([[object()] * 2] * 10, dtype=object), TypeError),
    ([["a", "b"]] * 10, TypeError),
    ("force", TypeError),
    ({"damping": 1.0}, TypeError),
    (True, TypeError),
])
def test_held_array_of_the_wrong_type(bad, kind):
    with pytest.raises(kind, match="force"):
        run(bad)


def test_step_takes_one_row():
    with pytest.raises(ValueError, match=r"n_steps = 1"):
        sp.step(S2, Q0, P0, 0.01, force=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="force"):
        sp.step(S2, Q0, P0, 0.01, force=np.zeros(3))
    with pytest.raises(ValueError, match="t must be finite"):
        sp.step(S2, Q0, P0, 0.01, force=np.zeros(2), t=math.nan)


# ---------------------------------------------------------------- Python callables
@pytest.mark.parametrize("method", ["simpson", "rk4", "midpoint"])
def test_callable_returning_the_wrong_shape(method):
    with pytest.raises(ValueError, match=r"^force\(t, q, qdot\) at step 0 \(t = 0\) returned an "
                                         r"array of shape \(3,\), expected \(2,\)"):
        run(lambda t, q, v: np.zeros(3), method=method)


@pytest.mark.parametrize("ret, kind, what", [
    (None, TypeError, "returned None"),
    ("x", TypeError, "cannot be converted|returned"),
    (1j * np.ones(2), TypeError, "complex"),
    (np.array([1.0, np.nan]), ValueError, "non-finite value"),
])
def test_callable_returning_bad_values(ret, kind, what):
    with pytest.raises(kind, match=r"force\(t, q, qdot\) at step 0 .*" + what):
        run(lambda t, q, v: ret)


def test_callable_nan_later_names_the_step_and_time():
    f = lambda t, q, v: np.array([np.nan if t > 0.0395 else 0.0, 0.0])   # noqa: E731
    with pytest.raises(ValueError, match=r"force\(t, q, qdot\) at step 3 \(t = 0\.04"):
        run(f, method="rk4")
    with pytest.raises(ValueError, match=r"at step 3 \(t = 0\.0"):
        run(f, method="simpson")


def test_callable_exception_propagates_unchanged():
    class Boom(Exception):
        pass

    def f(t, q, v):
        raise Boom("from the force")

    with pytest.raises(Boom, match="^from the force") as ei:
        run(f)
    assert "at step 0" in "".join(getattr(ei.value, "__notes__", []))
    with pytest.raises(Boom):
        sp.step(S2, Q0, P0, 0.01, force=f)


@pytest.mark.parametrize("jac, kind, what", [
    (lambda t, q, v: np.zeros((3, 2, 2)), ValueError, r"returned 3 items; expected a pair"),
    (lambda t, q, v: np.zeros((2, 2)), ValueError,
     r"\[1\] \(dF/dqdot\) at step 0 \(t = 0\) returned an array of shape \(2,\), "
     r"expected \(2, 2\)"),
    (lambda t, q, v: 3.0, TypeError, r"at step 0 \(t = 0\) returned .*expected a pair"),
    (lambda t, q, v: (np.zeros((2, 2)), np.zeros((3, 3))), ValueError,
     r"\[1\] \(dF/dqdot\) at step 0 \(t = 0\) returned an array of shape \(3, 3\), "
     r"expected \(2, 2\)"),
    (lambda t, q, v: (np.full((2, 2), np.nan), np.zeros((2, 2))), ValueError,
     r"\[0\] \(dF/dq\) at step 0 .*returned a non-finite"),
])
def test_bad_force_jac(jac, kind, what):
    with pytest.raises(kind, match=r"^force_jac\(t, q, qdot\).*" + what):
        run(lambda t, q, v: -v, force_jac=jac)


def test_force_jac_needs_a_callable_force():
    with pytest.raises(TypeError, match="force_jac is only used with a callable force"):
        run(np.zeros((10, 2)), force_jac=lambda t, q, v: None)
    with pytest.raises(TypeError, match="force_jac must be callable"):
        run(lambda t, q, v: -v, force_jac=3)


# ---------------------------------------------------------------- Force objects
def test_force_with_the_wrong_number_of_components():
    with pytest.raises(ValueError, match="force has 3 components but the system has n = 2"):
        run(forces.linear_damping(np.eye(3)))


@pytest.mark.parametrize("D, kind", [
    (np.ones((2, 3)), ValueError), ([[1.0, np.nan], [0.0, 1.0]], ValueError),
    (np.ones((2, 2, 2)), ValueError), ("a", TypeError),
])
def test_bad_damping_matrix(D, kind):
    with pytest.raises(kind, match="D"):
        forces.linear_damping(D)
    with pytest.raises(TypeError, match="needs n"):
        forces.linear_damping(0.5)


def test_bad_depends_on():
    with pytest.raises(ValueError, match="depends_on"):
        forces.from_callable(lambda t, q, v: q, depends_on="x")


@pytest.mark.parametrize("factory, kw", [
    (sp.systems.pendulum, dict(damping=-1.0)),
    (sp.systems.lagrange_top, dict(damping=math.nan)),
    (sp.systems.double_pendulum, dict(damping=[0.1, 0.2, 0.3])),
    (sp.systems.double_pendulum, dict(damping=[0.1, -0.2])),
])
def test_bad_builtin_damping(factory, kw):
    with pytest.raises(ValueError, match="damping"):
        factory(**kw)
    with pytest.raises(ValueError, match="damping"):
        sp.systems.pendulum_chain(3, damping=[0.1, 0.2])


def test_compiled_callback_failures_name_the_step(force_lib):
    with pytest.raises(RuntimeError, match=r"compiled force callback returned 7 \(nonzero: "
                                           r"stop\) at step 3 \(t = 0\.0"):
        run(forces.from_cfunc(force_lib.fails_at_step_3, n=2))
    with pytest.raises(ValueError, match=r"compiled force callback returned a non-finite value "
                                         r"\(nan or inf\) at step 2 \(t = 0\.0"):
        run(forces.from_cfunc(force_lib.nan_at_step_2, n=2), method="rk4")
    with pytest.raises(ValueError, match="force has 3 components"):
        run(forces.from_cfunc(force_lib.torque0, np.array([1.0]), n=3))
    with pytest.raises(TypeError, match="func must be an address"):
        forces.from_cfunc("not an address")


# ---------------------------------------------------------------- ensembles
def test_ensemble_forces():
    Q = np.array([Q0, Q0, Q0])
    with pytest.raises(ValueError, match=r"2 forces for 3 ensemble members"):
        sp.integrate_many(S2, Q, np.zeros((3, 2)), 0.01, 10, force=[None, None])
    with pytest.raises(ValueError, match=r"shape \(K = 3, n_steps, n\)"):
        sp.integrate_many(S2, Q, np.zeros((3, 2)), 0.01, 10, force=np.zeros((2, 10, 2)))
    with pytest.raises(ValueError, match=r"ensemble member 1: force: a held force array"):
        sp.integrate_many(S2, Q, np.zeros((3, 2)), 0.01, 10,
                          force=[None, np.zeros((9, 2)), None])
    with pytest.raises(ValueError, match=r"force\(t, q, qdot\) at step 0"):
        sp.integrate_many(S2, Q, np.zeros((3, 2)), 0.01, 10,
                          force=lambda t, q, v: np.zeros(5))


# ---------------------------------------------------------------- the binding's own checks
@pytest.mark.parametrize("spec, kind, what", [
    ([1, 2], TypeError, "force must be a dict"),
    ({"damping": np.eye(3)}, ValueError, r"the damping matrix must have shape \(n, 2\)"),
    ({"damping": [[np.nan, 0], [0, 1]]}, ValueError, "non-finite"),
    ({"hold": np.zeros((3, 2))}, ValueError, "fewer than the 10 steps"),
    ({"terms": [("nope",)]}, ValueError, "unknown term"),
    ({"terms": [3]}, TypeError, "each term must be a tuple"),
    ({"terms": [("python", 3, None, 0)]}, TypeError, "force must be callable"),
    ({"terms": [("builtin", "pivot_friction", [0.1])]}, ValueError, "applies to n = 3"),
    ({"terms": [("builtin", "nothing", [0.1])]}, ValueError, "unknown built-in"),
    ({"terms": [("cfunc", 0, None, 0, 0)]}, ValueError, "nonzero function address"),
    ({"terms": [("python", abs, None, 0)] * 5}, ValueError, "at most 4"),
    ({"work": np.zeros(3)}, ValueError, r"'work' must be a writeable"),
    ({"impulse": np.zeros((11, 2), dtype=np.float32)}, ValueError, "'impulse'"),
])
def test_core_checks_the_force_description(spec, kind, what):
    with pytest.raises(kind, match=what):
        _core.integrate(S2, Q0, P0, 0.01, 10, force=spec)


def test_core_builtin_term_parameters():
    top = sp.systems.lagrange_top()
    for par in ([-1.0], [0.1, 0.2]):
        with pytest.raises(ValueError, match="bad parameters for the built-in term"):
            _core.integrate(top, [0, 1, 0], [0, 0, 0], 0.01, 2,
                            force={"terms": [("builtin", "pivot_friction", par)]})
