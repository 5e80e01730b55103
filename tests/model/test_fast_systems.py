"""The fast ways to define a system: one vectorised Python callable per Newton
iteration, and compiled C callbacks (no Python in the loop).  Both must give
the trajectories of the built-in C systems."""
import collections
import ctypes
import math
import threading

import numpy as np
import pytest

import symplectic as sp
from support.forms_dp import G, L1, L2, M1, M2, Par, compile_library, dp_combined, dp_vectorized


def rel_diff(a, b):
    return max(np.max(np.abs(a.q - b.q)) / np.max(np.abs(a.q)),
               np.max(np.abs(a.p - b.p)) / np.max(np.abs(a.p)))


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_vectorized_equals_builtin(method):
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 1000, method=method)
    vec = sp.System.vectorized(2, dp_vectorized())
    tr = sp.integrate(vec, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000, method=method)
    assert rel_diff(ref, tr) <= 1e-12
    assert np.allclose(tr.energy, ref.energy, rtol=1e-12, atol=0)
    assert vec.check_derivatives([0.3, -1.0], rtol=1e-7)


def test_vectorized_without_hessians_uses_finite_differences():
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [1.0, -0.3], [0.2, 0.0],
                       0.02, 200)
    tr = sp.integrate(sp.System.vectorized(2, dp_vectorized(False)), [1.0, -0.3], [0.2, 0.0],
                      0.02, 200)
    assert rel_diff(ref, tr) <= 1e-12       # only Newton's matrix is approximate


def test_vectorized_errors_name_the_key():
    def bad(Q):
        d = dp_vectorized()(Q)
        d["mass"] = d["mass"][:, :1]
        return d

    with pytest.raises(ValueError, match=r"vectorized .mass. has shape \(\d, 1, 2\), expected \(\d, 2, 2\)"):
        sp.integrate(sp.System.vectorized(2, bad), [1.0, 0.0], [0.0, 0.0], 0.01, 5)

    def missing(Q):
        d = dp_vectorized()(Q)
        del d["potential_grad"]
        return d

    with pytest.raises(KeyError, match="potential_grad"):
        sp.integrate(sp.System.vectorized(2, missing), [1.0, 0.0], [0.0, 0.0], 0.01, 5)
    with pytest.raises(TypeError, match="must return a dict"):
        sp.integrate(sp.System.vectorized(2, lambda Q: 1.0), [1.0, 0.0], [0.0, 0.0], 0.01, 5)


# ---------------------------------------------------------------- compiled callbacks
@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    lib = compile_library(tmp_path_factory.mktemp("cfunc"))
    if lib is None:
        pytest.skip("no C compiler on this machine")
    return lib


@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_cfunc_equals_builtin(compiled, method):
    par = Par(M1, M2, L1, L2, G)
    sys = sp.System.from_cfunc(2, compiled.dp_eval, ctypes.addressof(par), keepalive=par)
    assert sys.nogil
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 1000, method=method)
    tr = sp.integrate(sys, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000, method=method)
    assert rel_diff(ref, tr) <= 1e-13
    assert np.allclose(tr.energy, ref.energy, rtol=1e-13, atol=0)
    sys.check_derivatives([0.3, -1.0], rtol=1e-7)


def test_cfunc_runs_in_threads(compiled):
    par = Par(M1, M2, L1, L2, G)
    sys = sp.System.from_cfunc(2, compiled.dp_eval, ctypes.addressof(par), keepalive=par)
    starts = [[0.1 * k, 0.2] for k in range(4)]
    seq = [sp.integrate(sys, s, [0, 0], 0.01, 3000).q for s in starts]
    out = [None] * 4
    ths = [threading.Thread(target=lambda k=k: out.__setitem__(k, sp.integrate(sys, starts[k], [0, 0], 0.01, 3000).q))
           for k in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert all(np.array_equal(a, b) for a, b in zip(seq, out))


def test_cfunc_failure_is_reported(compiled):
    sys = sp.System.from_cfunc(2, compiled.failing_eval)
    with pytest.raises(RuntimeError, match="callback"):
        sp.integrate(sys, [0.1, 0.2], [0, 0], 0.01, 10)


def test_cfunc_bad_address():
    with pytest.raises(ValueError, match="null"):
        sp.System.from_cfunc(2, 0)
    with pytest.raises(TypeError, match="address"):
        sp.System.from_cfunc(2, "dp_eval")




@pytest.mark.parametrize("method", ["simpson", "midpoint", "rk4"])
def test_combined_equals_builtin(method):
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 1000, method=method)
    sys = sp.System.combined(2, dp_combined())
    tr = sp.integrate(sys, [math.pi / 4, math.pi / 3], [0, 0], 0.01, 1000, method=method)
    assert rel_diff(ref, tr) <= 1e-12
    assert np.allclose(tr.energy, ref.energy, rtol=1e-12, atol=0)
    assert max(sys.check_derivatives([0.3, -1.0], rtol=1e-7).values()) < 1e-7


def test_combined_calls_once_per_new_point():
    calls = {"n": 0}
    points = []
    fill = dp_combined()

    def counted(*args):
        calls["n"] += 1
        points.append(tuple(args[0]))
        return fill(*args)

    sys_ = sp.System.combined(2, counted)
    sp.integrate(sys_, [0.5, 0.2], [0, 0], 0.01, 0, check=False)
    before = calls["n"]                        # the run's check of M(q0), before any step
    assert before == 1
    sp.analysis.stability_estimate(sys_, [0.5, 0.2], 0.01)
    estimate = calls["n"] - before             # and its stability estimate at q0
    assert estimate == 2                       # M and hess V
    points.clear()
    tr = sp.integrate(sys_, [0.5, 0.2], [0, 0], 0.01, 200,
                      check=False)             # the integration's calls only
    per_step = (calls["n"] - 2 * before - 2 * estimate) / 200
    # left node once, then (mid, right) per residual: one per Newton iteration and, where the
    # residual test ends the solve, one more (not followed by a counted update)
    assert per_step <= 1 + 2 * (tr.newton_iterations.mean() + 1) + 1e-9
    # never twice at one point of the run (the start is also where the run's set-up evaluates)
    seen = collections.Counter(points)
    assert {q for q, k in seen.items() if k > 1} <= {(0.5, 0.2)}


def test_combined_errors():
    def wrong_return(q, M, dM, dV, d2M, d2V):
        dp_combined()(q, M, dM, dV, d2M, d2V)
        return None

    with pytest.raises(TypeError, match="must return the potential"):
        sp.integrate(sp.System.combined(2, wrong_return), [0.5, 0.2], [0, 0], 0.01, 5)

    def nan_fill(q, M, dM, dV, d2M, d2V):
        v = dp_combined()(q, M, dM, dV, d2M, d2V)
        dV[0] = float("nan")
        return v

    with pytest.raises(ValueError, match="non-finite value into dV"):
        sp.integrate(sp.System.combined(2, nan_fill), [0.5, 0.2], [0, 0], 0.01, 5)


def test_combined_reentrant():
    """A callable that integrates the same system inside itself."""
    fill = dp_combined()
    holder = {}

    def nested(q, M, dM, dV, d2M, d2V):
        if "done" not in holder:
            holder["done"] = True
            holder["inner"] = sp.integrate(holder["sys"], [0.1, 0.1], [0, 0], 0.01, 20)
        return fill(q, M, dM, dV, d2M, d2V)

    holder["sys"] = sp.System.combined(2, nested)
    tr = sp.integrate(holder["sys"], [math.pi / 4, math.pi / 3], [0, 0], 0.01, 100)
    ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [math.pi / 4, math.pi / 3],
                       [0, 0], 0.01, 100)
    assert rel_diff(ref, tr) <= 1e-12
    inner_ref = sp.integrate(sp.systems.double_pendulum(M1, M2, L1, L2, G), [0.1, 0.1], [0, 0], 0.01, 20)
    assert rel_diff(inner_ref, holder["inner"]) <= 1e-12


@pytest.mark.parametrize("method", ["simpson", "lobatto4", "lobatto5", "lobatto7", "gauss3"])
@pytest.mark.parametrize("centre", [0.0, 2 * math.pi * 127324], ids=["small", "across-fast-range"])
def test_builtin_batched_prep_is_the_pointwise_evaluation_bitwise(method, centre):
    """The built-in double pendulum prepares the sines and cosines of a Newton
    iterate's points in one pass (four lanes where the CPU has AVX2); that
    must be bitwise its evaluation point by point, which a Python system
    built from the built-in's single-point evaluations gets.  The second
    case swings about the equilibrium at 2 pi 127324 = 800000.29 rad, so q1
    crosses 8e5 rad, where the built-in sines and cosines give way to the C
    library's point by point (a batch sent to the C library whole is caught
    there: lobatto5's and gauss3's momenta then differ in the last bits)."""
    from symplectic import _engine as E
    dp = sp.systems.double_pendulum()
    z = np.zeros(2)

    def ev(q, g, need, k):
        return dp._eval(np.asarray(q, float), np.asarray(g, float), need)[k]

    pointwise = sp.System(2, mass=lambda q: ev(q, z, E.NEED_M, 0),
                          potential=lambda q: ev(q, z, E.NEED_V, 3),
                          mass_dir=lambda q, g: ev(q, g, E.NEED_A, 1),
                          mass_hess_dir=lambda q, g: ev(q, g, E.NEED_H, 2),
                          potential_grad=lambda q: ev(q, z, E.NEED_DV, 4),
                          potential_hess=lambda q: ev(q, z, E.NEED_D2V, 5), derivative_check=False)
    q0 = [centre - 0.6, centre - 0.3]
    a = sp.integrate(dp, q0, [0.0, 0.0], 0.02, 200, method, newton="full")
    b = sp.integrate(pointwise, q0, [0.0, 0.0], 0.02, 200, method, newton="full")
    if centre:
        assert np.count_nonzero(np.diff(np.sign(a.q[:, 0] - 8e5))) >= 2
    assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p)
