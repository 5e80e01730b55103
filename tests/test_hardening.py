"""Robustness: bad input, failing and misbehaving callbacks, failure mid-integration,
Ctrl-C on the C path, thread safety, reference leaks.  Every case ends in a correct
result or a Python exception that names the problem -- never a crash."""
import gc
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import symplectic as sp
from symplectic import _validate
from conftest import dp_callables

DP = sp.systems.double_pendulum()
Q0, P0 = [0.5, 0.2], [0.0, 0.0]


# ---------------------------------------------------------------- inputs
@pytest.mark.parametrize("q0,p0,exc,match", [
    ([0.1], P0, ValueError, r"q0 must have shape \(2,\)"),
    ([[0.1, 0.2]], P0, ValueError, r"q0 must have shape \(2,\)"),
    (Q0, [0.0, 0.0, 0.0], ValueError, r"p0 must have shape \(2,\)"),
    ([np.nan, 0.1], P0, ValueError, "q0 contains non-finite"),
    (Q0, [np.inf, 0.0], ValueError, "p0 contains non-finite"),
    (np.array([0.1, 0.2], dtype=object), P0, TypeError, "object array"),
    (["a", "b"], P0, TypeError, "q0 must be a sequence"),
    ([1 + 1j, 0.0], P0, TypeError, "real"),
])
def test_bad_states(q0, p0, exc, match):
    with pytest.raises(exc, match=match):
        sp.integrate(DP, q0, p0, 0.01, 10)
    with pytest.raises(exc, match=match.replace("q0", "q").replace("p0", "p")):
        sp.step(DP, q0, p0, 0.01)


@pytest.mark.parametrize("h,exc,match", [
    (0.0, ValueError, "nonzero"), (float("nan"), ValueError, "finite"),
    (float("inf"), ValueError, "finite"), ("0.1", TypeError, "real number"),
    (None, TypeError, "h is required"), (True, TypeError, "real number"),
])
def test_bad_step_sizes(h, exc, match):
    with pytest.raises(exc, match=match):
        sp.integrate(DP, Q0, P0, h, 10)


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


def test_huge_step_counts_fail_before_allocating(monkeypatch):
    with pytest.raises(MemoryError, match=r"n_steps=1000000000000000.*GiB.*available"):
        sp.integrate(DP, Q0, P0, 0.01, 10 ** 15)
    with pytest.raises(MemoryError, match="integrate_many"):
        sp.integrate_many(DP, np.zeros((4, 2)), np.zeros((4, 2)), 0.01, 10 ** 13)
    # the check uses the memory actually available: pretend there is 1 MiB
    monkeypatch.setattr(_validate, "available_memory", lambda: 2 ** 20)
    sp.integrate(DP, Q0, P0, 0.01, 1000)                      # ~40 kB: fine
    with pytest.raises(MemoryError, match=r"0.0\d+ GiB .* 0.000977 GiB"):
        sp.integrate(DP, Q0, P0, 0.01, 100_000)               # ~4 MB: refused
    # with the memory size unknown, nothing is refused
    monkeypatch.setattr(_validate, "available_memory", lambda: None)
    sp.integrate(DP, Q0, P0, 0.01, 100_000)


@pytest.mark.parametrize("M,K,match", [
    ([[1.0, 0.0], [0.0, 0.0]], np.eye(2), "positive definite"),          # singular
    ([[1.0, 0.0], [0.0, -1.0]], np.eye(2), "positive definite"),         # indefinite
    ([[1.0, 2.0], [0.0, 1.0]], np.eye(2), "symmetric"),
    (np.eye(2), np.eye(3), "shape"),
    (np.ones((2, 3)), np.ones((2, 3)), "square"),
    ([[np.nan, 0], [0, 1]], np.eye(2), "non-finite"),
])
def test_bad_linear_systems(M, K, match):
    with pytest.raises(ValueError, match=match):
        sp.systems.linear(M, K)


def test_mass_matrix_losing_positive_definiteness_mid_run():
    """A callable M(q) that becomes indefinite: ConvergenceError naming the reason."""
    sys_ = sp.System(1, lambda q: np.array([[1.0 - q[0]]]), lambda q: 0.0,
                     mass_grad=lambda q: np.array([[[-1.0]]]),
                     potential_grad=lambda q: np.zeros(1))
    with pytest.raises(sp.ConvergenceError, match="positive definite|singular|converge") as info:
        sp.integrate(sys_, [0.0], [1.0], 0.05, 100)
    assert info.value.trajectory is not None and info.value.step >= 1


def test_unknown_names():
    with pytest.raises(ValueError, match="unknown method 'euler'"):
        sp.integrate(DP, Q0, P0, 0.01, 10, method="euler")
    with pytest.raises(TypeError, match="method must be a string"):
        sp.integrate(DP, Q0, P0, 0.01, 10, method=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'mass'"):
        sp.systems.double_pendulum(mass=2.0)
    with pytest.raises(AttributeError):
        sp.systems.triple_pendulum()
    with pytest.raises(ValueError, match="m1"):
        sp.systems.double_pendulum(m1=-1.0)
    with pytest.raises(TypeError, match="symplectic.System"):
        sp.integrate("double_pendulum", Q0, P0, 0.01, 10)


def test_flexible_array_inputs_give_identical_results():
    ref = sp.integrate(DP, np.array(Q0), np.array(P0), 0.01, 200)
    big = np.zeros((4, 3))
    big[::2, 1] = Q0                                              # non-contiguous view
    ro = np.array(Q0)
    ro.flags.writeable = False                                    # read-only
    for q0 in (Q0, tuple(Q0), big[::2, 1], ro):
        tr = sp.integrate(DP, q0, [0, 0], 0.01, 200)              # ints for p0
        np.testing.assert_array_equal(tr.q, ref.q)
    a = sp.integrate(DP, [1, 0], P0, 0.01, 20)                   # int coordinates
    b = sp.integrate(DP, np.array([1.0, 0.0], dtype=np.float32), P0, 0.01, 20)
    c = sp.integrate(DP, [1.0, 0.0], P0, 0.01, 20)
    np.testing.assert_array_equal(a.q, c.q)
    np.testing.assert_array_equal(b.q, c.q)
    tr = sp.integrate(sp.systems.pendulum(), 1, 0, 0.01, 10)      # scalars for n = 1
    assert tr.q.shape == (11, 1)
    assert not ro.flags.writeable and np.all(big[::2, 1] == Q0)   # inputs untouched


# ---------------------------------------------------------------- callbacks
def _dp_with(slot, fn):
    c = dict(dp_callables())
    c[slot] = fn
    return sp.System(2, **c)


class Boom(Exception):
    pass


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
        sp.integrate(_dp_with("potential_grad", grad), Q0, P0, 0.01, 100, check=False)
    assert calls["n"] == k


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
    sys_ = _dp_with("potential_grad", ret)
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
        sp.integrate(_dp_with("mass", mass), Q0, P0, 0.01, 100)


def test_callbacks_that_keep_their_arguments():
    """Arrays handed to callbacks may be kept and mutated afterwards without
    affecting the integration (each call gets its own array)."""
    c = dp_callables()
    kept = []

    def grad(q):
        kept.append(q)
        return c["potential_grad"](q)

    tr1 = sp.integrate(_dp_with("potential_grad", grad), Q0, P0, 0.01, 50)
    values = [k.copy() for k in kept]
    for k in kept:
        if k.flags.writeable:
            k[:] = 1e300
    tr2 = sp.integrate(_dp_with("potential_grad", c["potential_grad"]), Q0, P0, 0.01, 50)
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

    a = sp.integrate(_dp_with("potential_grad", grad), Q0, P0, 0.01, 30)
    b = sp.integrate(_dp_with("potential_grad", c["potential_grad"]), Q0, P0, 0.01, 30)
    np.testing.assert_array_equal(a.q, b.q)


# ---------------------------------------------------------------- failure mid-run
def test_callback_failure_mid_integration_keeps_the_trajectory():
    """A NaN from a callback after 400 calls: ValueError naming the callback, a note
    naming the step and t, and the completed steps in exc.trajectory."""
    c = dp_callables()
    calls = {"n": 0}

    def grad(q):
        calls["n"] += 1
        return np.array([np.nan, 0.0]) if calls["n"] > 400 else c["potential_grad"](q)

    with pytest.raises(ValueError, match="potential_grad.*non-finite") as info:
        sp.integrate(_dp_with("potential_grad", grad), Q0, P0, 0.01, 1000)
    err = info.value
    note = " ".join(getattr(err, "__notes__", []))
    part = err.trajectory
    k = len(part.t) - 1
    assert 10 < k < 1000 and f"at step {k} of 1000; {k} steps done" in note
    assert f"t = {0.01 * k:.10g}"[:8] in note
    ref = sp.integrate(_dp_with("potential_grad", c["potential_grad"]), Q0, P0, 0.01, k)
    np.testing.assert_array_equal(part.q, ref.q)
    np.testing.assert_array_equal(part.p, ref.p)
    np.testing.assert_array_equal(part.q_mid, ref.q_mid)


@pytest.mark.parametrize("closed_form", [False, True])
def test_non_finite_state_raises_convergence_error_with_trajectory(closed_form):
    """Simpson far beyond its stability limit on x'' = -x overflows to inf."""
    osc = sp.systems.linear([[1.0]], [[1.0]])
    with pytest.warns(sp.linear.StabilityWarning):
        with pytest.raises(sp.ConvergenceError, match="non-finite") as info:
            sp.integrate(osc, [1.0], [0.0], 3.0, 100_000, closed_form=closed_form)
    err = info.value
    assert f"step {err.step}" in str(err) and err.t == pytest.approx(3.0 * err.step)
    part = err.trajectory
    assert len(part.t) == err.step + 1 and np.all(np.isfinite(part.q))
    assert abs(part.q[-1, 0]) > 1e300


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


# ---------------------------------------------------------------- Ctrl-C, threads
def test_ctrl_c_interrupts_a_long_builtin_run_promptly():
    chain = sp.systems.pendulum_chain(32)
    q0 = np.linspace(0.1, 0.5, 32)
    fired = {}

    def fire():
        fired["t"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(0.3, fire)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sp.integrate(chain, q0, np.zeros(32), 1e-3, 300_000)     # ~10 s uninterrupted
    assert time.perf_counter() - fired["t"] < 0.5


def test_threads_integrating_builtin_systems_match_sequential_runs():
    systems = [sp.systems.double_pendulum(m2=1 + 0.1 * k) for k in range(4)]
    seq = [sp.integrate(s, Q0, P0, 0.01, 20_000).q for s in systems]
    out = [None] * 4

    def work(k):
        out[k] = sp.integrate(systems[k], Q0, P0, 0.01, 20_000).q

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(seq, out):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- reference counts
def test_no_reference_leaks_on_success_and_error_paths():
    c = dp_callables()
    q0 = np.array(Q0)
    p0 = np.array(P0)
    fail = {"n": 0}

    def bad_grad(q):
        fail["n"] += 1
        if fail["n"] % 5 == 0:
            raise Boom()
        return c["potential_grad"](q)

    good = sp.System(2, **c)
    bad = _dp_with("potential_grad", bad_grad)
    objs = [q0, p0, good, bad, bad_grad, c["mass"], DP]

    def run():
        sp.integrate(good, q0, p0, 0.01, 20)
        sp.integrate(DP, q0, p0, 0.01, 20)
        sp.step(good, q0, p0, 0.01)
        for call in (lambda: sp.integrate(bad, q0, p0, 0.01, 20),
                     lambda: sp.integrate(DP, q0, p0, 0.0, 20),
                     lambda: sp.integrate(DP, q0[:1], p0, 0.01, 20)):
            try:
                call()
            except (Boom, ValueError):
                pass

    run()
    gc.collect()
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(200):
        run()
    gc.collect()
    after = [sys.getrefcount(o) for o in objs]
    assert after == before
