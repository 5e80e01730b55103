"""Regressions for the bugs the sanitizer run (.ci/sanitize) found in the binding and the
driver.  Each test fails (or, under ASan, crashes with a report) on the code before its fix."""
import sys

import numpy as np
import pytest

import symplectic as sp
from symplectic import _core

Q0, P0 = np.array([0.5, 0.2]), np.array([0.1, -0.3])


def _dp_combined(q, M, dM, dV, d2M, d2V):
    k = 0.25
    c, s = np.cos(q[0] - q[1]), np.sin(q[0] - q[1])
    M[...] = [[2 * k * k, k * k * c], [k * k * c, k * k]]
    dM[0, 0, 1] = dM[0, 1, 0] = -k * k * s
    dM[1, 0, 1] = dM[1, 1, 0] = k * k * s
    d2M[0, 0, 0, 1] = d2M[0, 0, 1, 0] = d2M[1, 1, 0, 1] = d2M[1, 1, 1, 0] = -k * k * c
    d2M[0, 1, 0, 1] = d2M[0, 1, 1, 0] = d2M[1, 0, 0, 1] = d2M[1, 0, 1, 0] = k * k * c
    dV[...] = [2 * 9.81 * k * np.sin(q[0]), 9.81 * k * np.sin(q[1])]
    d2V[0, 0], d2V[1, 1] = 2 * 9.81 * k * np.cos(q[0]), 9.81 * k * np.cos(q[1])
    return -2 * 9.81 * k * np.cos(q[0]) - 9.81 * k * np.cos(q[1])


# (a) the combined form copied from its persistent arrays without checking them: a
# callable that resized one (ndarray.resize(..., refcheck=False) reallocates the buffer)
# made the binding read past the new, smaller buffer (ASan: heap-buffer-overflow in
# cb_combined).  Now: a ValueError naming the array, and a fresh array for the next call.
@pytest.mark.parametrize("damage, name", [
    (lambda M, dM, dV, d2M, d2V: dM.resize((1,), refcheck=False), "dM"),
    (lambda M, dM, dV, d2M, d2V: M.resize((1, 1), refcheck=False), "M"),
    (lambda M, dM, dV, d2M, d2V: setattr(M, "shape", (4,)), "M"),
    (lambda M, dM, dV, d2M, d2V: setattr(d2V, "dtype", np.float32), "d2V"),
    (lambda M, dM, dV, d2M, d2V: d2M.resize((2, 2, 2, 2, 2), refcheck=False), "d2M"),
])
def test_combined_callable_damaging_its_arrays_is_a_value_error(damage, name):
    broken = [True]

    def f(q, M, dM, dV, d2M, d2V):
        V = _dp_combined(q, M, dM, dV, d2M, d2V)
        if broken[0]:
            damage(M, dM, dV, d2M, d2V)
        return V

    sys_ = sp.System.combined(2, f)
    for method in ("simpson", "rk4"):
        with pytest.raises(ValueError, match=f"changed the array {name} "):
            sp.integrate(sys_, Q0, P0, 0.01, 5, method)
    broken[0] = False              # the damaged array was replaced: the system works again
    ref = sp.integrate(sp.System.combined(2, _dp_combined), Q0, P0, 0.01, 5)
    np.testing.assert_array_equal(sp.integrate(sys_, Q0, P0, 0.01, 5).q, ref.q)


# (b) the combined form's point cache (last point, and a ring of recent dM) outlived the
# call that filled it: after the callable's parameters changed, the next call at the
# same q reused the old values.
def test_combined_cache_does_not_survive_the_call():
    k = [1.0]

    def f(q, M, dM, dV, d2M, d2V):
        M[0, 0] = 1 + k[0] * q[0] ** 2
        dM[0, 0, 0] = 2 * k[0] * q[0]
        d2M[0, 0, 0, 0] = 2 * k[0]
        dV[0] = k[0] * q[0]
        d2V[0, 0] = k[0]
        return 0.5 * k[0] * q[0] ** 2

    q0, p0 = np.array([0.3]), np.array([0.1])
    sys_ = sp.System.combined(1, f)
    for call in (lambda s: s.energy(q0, p0), lambda s: sp.step(s, q0, p0, 0.1),
                 lambda s: sp.integrate(s, q0, p0, 0.1, 3).q,
                 lambda s: s._eval(q0, p0, 63)[0]):
        k[0] = 1.0
        call(sys_)                 # fills the cache at q0
        k[0] = 4.0
        fresh = sp.System.combined(1, f)
        np.testing.assert_array_equal(np.asarray(sp.step(sys_, q0, p0, 0.1)[0]),
                                      np.asarray(sp.step(fresh, q0, p0, 0.1)[0]))
        k[0] = 1.0
        call(sys_)
        k[0] = 4.0
        assert sys_.energy(q0, p0) == fresh.energy(q0, p0)


# (c) None (or something that is not numbers) in one slot of a vectorized callable's
# dict: None read as "missing" (a KeyError saying the key must be returned, although it
# was), and unconvertible values gave NumPy's message without naming the slot.  (The
# binding's own vectorized form; System.vectorized adds finite differences in Python.)
def _vec(**over):
    def f(Q):
        K = len(Q)
        d = dict(mass=np.broadcast_to(np.eye(2), (K, 2, 2)), mass_grad=np.zeros((K, 2, 2, 2)),
                 mass_hess=np.zeros((K, 2, 2, 2, 2)), potential=0.5 * (Q * Q).sum(1),
                 potential_grad=Q.copy(), potential_hess=np.broadcast_to(np.eye(2), (K, 2, 2)))
        d.update(over)
        return {k: v for k, v in d.items() if v is not _MISSING}
    return _core.System(2, vectorized=f)


_MISSING = object()


@pytest.mark.parametrize("value, match", [
    (None, "vectorized 'potential_grad' is None"),
    ("abc", "vectorized 'potential_grad' .*cannot be converted"),
    ({}, "vectorized 'potential_grad' .*cannot be converted"),
    (np.ones((3, 2), complex), "vectorized 'potential_grad' is an array of dtype complex"),
    (np.array([["a", "b"]] * 3), "vectorized 'potential_grad' is an array of dtype <U1"),
    (np.array([[None, 1.0]] * 3), "vectorized 'potential_grad' is an array of dtype object"),
])
def test_vectorized_bad_slot_is_named(value, match):
    with pytest.raises(TypeError, match=match):
        _core.integrate(_vec(potential_grad=value), Q0, P0, 0.01, 3)


def test_vectorized_missing_key_is_still_a_key_error():
    with pytest.raises(KeyError, match="must return 'mass'"):
        _core.integrate(_vec(mass=_MISSING), Q0, P0, 0.01, 3)
    _core.integrate(_vec(), Q0, P0, 0.01, 3)


# (d) an __init__ that failed half-way (after storing the callables) followed by another
# __init__ overwrote the stored references without releasing them: a leak.
def test_failed_init_then_init_leaks_nothing():
    mass = lambda q: np.eye(2)                                      # noqa: E731
    grad = lambda q: np.asarray(q, float)                           # noqa: E731
    before = sys.getrefcount(mass), sys.getrefcount(grad)
    obj = _core.System.__new__(_core.System)
    with pytest.raises(TypeError, match="needs mass_grad"):
        _core.System.__init__(obj, 2, mass, lambda q: 0.0, potential_grad=grad)
    _core.System.__init__(obj, 2, mass, lambda q: 0.0, potential_grad=grad,
                          mass_grad=lambda q: np.zeros((2, 2, 2)))
    with pytest.raises(TypeError, match="cannot be re-initialised"):
        _core.System.__init__(obj, 2, mass, lambda q: 0.0, potential_grad=grad)
    del obj
    assert (sys.getrefcount(mass), sys.getrefcount(grad)) == before


# (e) the energy of a finite state whose value overflows the double range raised
# RuntimeError("a non-finite value appeared"); it is +inf (the IEEE result).
@pytest.mark.parametrize("make", [sp.systems.pendulum, sp.systems.double_pendulum,
                                  sp.systems.lagrange_top, lambda: sp.systems.pendulum_chain(3),
                                  lambda: sp.systems.linear(np.eye(2), np.eye(2))])
def test_energy_overflow_is_inf(make):
    s = make()
    n = s.n
    assert s.energy(np.full(n, 1.0), np.full(n, 1e200)) == np.inf
    E = s.energy(np.tile(np.full(n, 0.5), (3, 1)), np.array([[0.1] * n, [1e300] * n, [0.2] * n]))
    assert np.isfinite(E[0]) and E[1] == np.inf and np.isfinite(E[2])


def test_energy_overflow_python_system_and_potential_overflow():
    s = sp.System(2, np.eye(2), lambda q: 0.5 * float(q @ q), potential_grad=lambda q: q)
    assert s.energy(np.zeros(2), np.array([1e300, 0.0])) == np.inf
    lin = sp.systems.linear(np.eye(2), np.eye(2))          # V = 1/2 q^T K q overflows
    assert lin.energy(np.full(2, 1e200), np.zeros(2)) == np.inf
    with pytest.raises((ValueError, RuntimeError)):        # non-finite input stays an error
        lin.energy(np.array([np.nan, 0.0]), np.zeros(2))


# (f) n up to 65536 was accepted, but the core indexes n x n matrices with int
# arithmetic (i * n + j), which overflows (undefined behaviour) beyond n = 46340.
def test_n_beyond_int_indexing_is_a_value_error():
    with pytest.raises(ValueError, match="n must be between 1 and 46340, got 46341"):
        sp.System(46341, lambda q: None, lambda q: 0.0, potential_grad=lambda q: q,
                  mass_dir=lambda q, g: None)
    with pytest.raises(ValueError, match="46340"):
        _core.System(65536, lambda q: None, lambda q: 0.0, lambda q: None, lambda q: q)
    s = _core.System(46340, lambda q: None, lambda q: 0.0, lambda q: None, lambda q: q)
    assert s.n == 46340


# (g) the Newton matrix is (s-1) n squared and the LU indexes it with int arithmetic:
# a Newton size beyond 46340 must be a MemoryError before any allocation, not an
# attempt at a > 16 GiB block (or an int overflow if it succeeded).
@pytest.mark.parametrize("n, method, size", [(23171, "simpson", 46342),
                                              (11586, "lobatto5", 46344)])
def test_huge_newton_workspace_is_a_memory_error(n, method, size):
    s = sp.System(n, lambda q: None, lambda q: 0.0, potential_grad=lambda q: q,
                  mass_dir=lambda q, g: None)
    z = np.zeros(n)
    msg = f"needs a {size} x {size} Newton matrix"
    with pytest.raises(MemoryError, match=msg):      # (check=False: the callbacks are dummies)
        sp.step(s, z, z, 0.1, method, check=False)
    with pytest.raises(MemoryError, match=msg):
        sp.integrate(s, z, z, 0.1, 2, method, check=False)
    with pytest.raises(MemoryError, match=msg):
        _core.step_tangent(s, z, z, 0.1, method)
