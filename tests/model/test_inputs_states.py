"""Input robustness, states: q, p, qdot as integrate and step take them, and
their (K, n) ensemble forms -- every bad state is a TypeError or ValueError
naming the argument (symplectic._model._validate), and every acceptable spelling of a
good one (lists, ints, float32, views, read-only arrays, scalars for n = 1)
gives the same result and is left untouched."""
import numpy as np
import pytest

import symplectic as sp

DP = sp.systems.double_pendulum()
Q0, P0 = [0.5, 0.2], [0.0, 0.0]


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


def test_bad_state_inputs():
    sys = sp.systems.double_pendulum()
    with pytest.raises(ValueError, match=r"q0 must have shape \(2,\)"):
        sp.integrate(sys, [0.1, 0.2, 0.3], [0, 0], 0.01, 10)
    with pytest.raises(ValueError, match=r"p0 must have shape \(2,\)"):
        sp.integrate(sys, [0.1, 0.2], [[0, 0]], 0.01, 10)
    with pytest.raises(ValueError, match="non-finite"):
        sp.integrate(sys, [0.1, np.inf], [0, 0], 0.01, 10)
    with pytest.raises(TypeError, match="object array"):
        sp.integrate(sys, np.array([0.1, 0.2], dtype=object), [0, 0], 0.01, 10)


@pytest.mark.parametrize("q0,exc,match", [
    ([[0.1, 0.2, 0.3]], ValueError, r"q0 must have shape \(K, 2\) or \(2,\), got \(1, 3\)"),
    (np.zeros((2, 2, 2)), ValueError, r"q0 must have shape \(K, 2\)"),
    ([[0.1, 0.2], [np.nan, 0.0]], ValueError, r"q0 contains non-finite values \(row 1: "),
    (np.array([[0.1, 0.2]], dtype=object), TypeError, "object array"),
    ([[1 + 1j, 0.0]], TypeError, "real"),
    ([["a", "b"]], TypeError, "q0 must be an array of shape"),
])
def test_bad_ensemble_states(q0, exc, match):
    """The (K, n) forms follow the rules of the single states."""
    with pytest.raises(exc, match=match):
        sp.integrate_many(DP, q0, [0.0, 0.0], 0.01, 5)
    with pytest.raises(exc, match=match.replace("q0", "qdot0")):
        sp.integrate_many(DP, [[0.1, 0.2]], qdot0=q0, h=0.01, n_steps=5)


def test_ensemble_rows_broadcast_or_match():
    with pytest.raises(ValueError, match="p0 has 2 rows, expected 1 or 3"):
        sp.integrate_many(DP, np.zeros((3, 2)), np.zeros((2, 2)), 0.01, 5)
    ens = sp.integrate_many(DP, [0.1, 0.2], np.zeros((3, 2)), 0.01, 5)
    assert ens.q.shape == (3, 6, 2) and np.array_equal(ens.q[0], ens.q[2])


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
