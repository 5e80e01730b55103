"""Input robustness, callbacks: Python callables that raise, return the wrong
type, shape or non-finite values, change their shape later, keep or mutate
their arguments, or re-enter the library -- a Python exception naming the
callback (or the callback's own exception, unchanged), never a crash."""
import gc

import numpy as np
import pytest

import symplectic as sp
from support.cases import Boom, dp_with
from support.models import dp_callables

Q0, P0 = [0.5, 0.2], [0.0, 0.0]


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


@pytest.mark.parametrize("k", [1, 7, 60])
def test_callback_raising_at_kth_call(k):
    c = dp_callables()
    calls = {"n": 0}

    def grad(q):
        calls["n"] += 1
        if calls["n"] == k:
            raise Boom(f"call {k}")
        return c["potential_grad"](q)

    with pytest.raises(Boom, match=f"call {k}"):       # the integration's calls: no first-use check
        sp.integrate(dp_with("potential_grad", grad), Q0, P0, 0.01, 100, check=False)
    assert calls["n"] == k


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


@pytest.mark.parametrize("ret,exc,match", [
    (lambda q: np.array([1.0, 2.0], dtype=complex), TypeError, "dtype complex128"),
    (lambda q: np.array(["a", "b"]), TypeError, "dtype <U1"),
    (lambda q: np.array([1, 2], dtype="m8[s]"), TypeError, "dtype timedelta64"),
    (lambda q: np.array([1.0, None]), TypeError, "dtype object"),
    (lambda q: ["a", "b"], TypeError, "list.*cannot be converted"),
    (lambda q: None, TypeError, "returned None"),
    (lambda q: {"x": 1}, TypeError, "dict"),
    (lambda q: 1j, TypeError, "complex"),
    (lambda q: np.array([np.inf, 0.0]), ValueError, r"non-finite value \(nan or inf\) at q ="),
    (lambda q: np.array([1, 2], dtype=np.int64), None, None),     # integers are converted
])
def test_callback_return_types(ret, exc, match):
    sys_ = dp_with("potential_grad", ret)
    if exc is None:                # (a wrong gradient: only the conversion is tested here)
        tr = sp.integrate(sys_, Q0, P0, 0.01, 10, check=False)
        assert np.all(np.isfinite(tr.q))
        return
    with pytest.raises(exc, match=match) as info:     # raised by the integration itself
        sp.integrate(sys_, Q0, P0, 0.01, 10, check=False)
    assert "potential_grad(q)" in str(info.value)
    assert any("step 0 of 10" in n for n in getattr(info.value, "__notes__", []))


def test_callback_changing_shape_on_a_later_call():
    c = dp_callables()
    calls = {"n": 0}

    def mass(q):
        calls["n"] += 1
        return c["mass"](q) if calls["n"] < 30 else np.eye(3)

    with pytest.raises(ValueError, match=r"mass\(q\) returned an array of shape \(3, 3\)"):
        sp.integrate(dp_with("mass", mass), Q0, P0, 0.01, 100)


def test_callbacks_that_keep_their_arguments():
    """Arrays handed to callbacks may be kept and mutated afterwards without
    affecting the integration (each call gets its own array)."""
    c = dp_callables()
    kept = []

    def grad(q):
        kept.append(q)
        return c["potential_grad"](q)

    tr1 = sp.integrate(dp_with("potential_grad", grad), Q0, P0, 0.01, 50)
    values = [k.copy() for k in kept]
    for k in kept:
        if k.flags.writeable:
            k[:] = 1e300
    tr2 = sp.integrate(dp_with("potential_grad", c["potential_grad"]), Q0, P0, 0.01, 50)
    np.testing.assert_array_equal(tr1.q, tr2.q)
    assert all(np.all(np.isfinite(v)) for v in values)
    gc.collect()


def test_reentrant_callback():
    """A callback that itself integrates another system."""
    c = dp_callables()
    pend = sp.systems.pendulum()

    def grad(q):
        q1, _ = sp.step(pend, [0.3], [0.0], 0.01)                 # re-enter the library
        assert np.isfinite(q1[0])
        return c["potential_grad"](q)

    a = sp.integrate(dp_with("potential_grad", grad), Q0, P0, 0.01, 30)
    b = sp.integrate(dp_with("potential_grad", c["potential_grad"]), Q0, P0, 0.01, 30)
    np.testing.assert_array_equal(a.q, b.q)
