"""The energy (and qdot) of a partial trajectory (status -1: the steps before a
failure) has a value for every row, wherever the run stopped: nan where the
state overflowed, the system's own value (bitwise) elsewhere, and a genuine
callback error still raises (issue 30)."""
import math
import re
import warnings

import numpy as np
import pytest

import symplectic as sp
from support.cases import Boom


def same_bits(a, b):
    """a and b are the same array to the bit (dtype, shape, bytes; nan-safe)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


K = 1e6


def spring_potential(q):
    return 0.5 * K * (q[1] - q[0] - 1.0) ** 2


def spring_system():
    """The stiff two-mass spring of the issue, in Python callables."""
    return sp.System(2, mass=lambda q: np.eye(2), potential=spring_potential,
                     potential_grad=lambda q: np.array([-K * (q[1] - q[0] - 1.0),
                                                        K * (q[1] - q[0] - 1.0)]),
                     potential_hess=lambda q: K * np.array([[1, -1], [-1, 1.0]]))


def spring_energy(q, p):
    """H of the spring, independently: 1/2 |p|^2 + 1/2 K (q1 - q0 - 1)^2."""
    with np.errstate(over="ignore", invalid="ignore"):
        return 0.5 * np.sum(p * p, axis=1) + 0.5 * K * (q[:, 1] - q[:, 0] - 1.0) ** 2


# The run steps the spring at omega h = 14, beyond simpson's limit (2.83), so that it
# blows up; the StabilityWarning before it is tests/run/test_stability.py's subject, ignored here.
@pytest.mark.filterwarnings(
    r"ignore:simpson with \|h\| = [0-9.e+-]+ s at or beyond its stability limit:symplectic.StabilityWarning")
def test_the_energy_of_a_blown_up_run_has_every_row():
    """The issue's run, wherever it stops (the rows may or may not overflow)."""
    S = spring_system()
    with pytest.raises((ValueError, sp.ConvergenceError)) as info:
        with np.errstate(over="ignore", invalid="ignore"):
            sp.integrate(S, [0, 1.001], [0, 0], 14 / math.sqrt(2 * K), 1000)
    tr = info.value.trajectory
    assert tr.status == -1
    expected = spring_energy(tr.q, tr.p)
    ok = np.isfinite(expected)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="ignore", invalid="ignore"):
            E = tr.energy
    said = [str(w.message) for w in caught if w.category is RuntimeWarning
            and str(w.message).startswith("Trajectory.energy")]
    assert len(said) == (0 if ok.all() else 1)
    if not ok.all():
        assert re.match(r"Trajectory.energy: \d+ rows, \d+ to \d+ of this partial trajectory "
                        r"\(of \d+\) overflowed, nan there; at row \d+: potential\(q\) "
                        r"returned a non-finite value", said[0])
    assert len(E) == len(tr.t) and ok[:10].all()
    np.testing.assert_allclose(E[ok], expected[ok], rtol=1e-12)
    assert np.all(np.isnan(E[~ok]))
    # the rows that evaluate are those of the system's own row-wise energy, bitwise
    good = int(np.argmin(ok)) if not ok.all() else len(E)
    assert same_bits(E[:good], S.energy(tr.q[:good], tr.p[:good]))
    assert np.isfinite(sp.analysis.energy_error(tr)[:good]).all()
    np.testing.assert_array_equal(tr.qdot, tr.p)          # M = I


def stopped_at(system, rows):
    """A partial trajectory (status -1) whose last rows are ``rows`` (q, p) pairs."""
    q = np.array([[0.1, 1.2], [0.2, 1.1]] + [r[0] for r in rows], dtype=float)
    p = np.array([[0.0, 0.1], [0.3, -0.2]] + [r[1] for r in rows], dtype=float)
    return sp.Trajectory(system, "simpson", 0.01, 0.01 * np.arange(len(q)), q, p, None,
                         np.zeros(len(q) - 1, np.intc), status=-1, message="partial")


BAD_ROWS = {
    "inf": [([np.inf, 1.0], [0.0, 0.0])],
    "nan": [([0.0, 1.0], [np.nan, 0.0])],
    "1e300": [([-1e300, 1e300], [1e300, -1e300])],
    "1e152 then inf": [([-1e152, 1e152], [0.0, 0.0]), ([-np.inf, np.inf], [np.inf, 0.0])],
    "finite after overflow": [([-1e300, 1e300], [0.0, 0.0]), ([0.3, 1.0], [0.1, 0.1])],
}


@pytest.mark.parametrize("rows", BAD_ROWS, ids=list(BAD_ROWS))
@pytest.mark.parametrize("system", ["callables", "built-in"])
def test_any_overflowed_row_gives_a_non_finite_value_without_raising(rows, system):
    S = spring_system() if system == "callables" else sp.systems.double_pendulum()
    tr = stopped_at(S, BAD_ROWS[rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        E, V = tr.energy, tr.qdot
    assert E.shape == (len(tr.t),) and V.shape == tr.q.shape
    finite = np.isfinite(tr.q).all(axis=1) & np.isfinite(tr.p).all(axis=1)
    assert np.all(np.isfinite(E[:2]))
    assert np.all(np.isnan(E[~finite]))
    if system == "callables":
        expected = spring_energy(tr.q, tr.p)
        fine = np.isfinite(expected)
        np.testing.assert_allclose(E[fine], expected[fine], rtol=1e-12)
        assert np.all(~np.isfinite(E[~fine]))
    for r in np.flatnonzero(np.isfinite(E)):             # each evaluated row is the system's
        assert same_bits(E[r], S.energy(tr.q[r], tr.p[r]))


def test_a_completed_run_is_unchanged():
    S = spring_system()
    tr = sp.integrate(S, [0, 1.001], [0, 0], 1e-4, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same_bits(tr.energy, S.energy(tr.q, tr.p))
    # a completed run's callback errors still raise (status 0: no guard)
    done = sp.Trajectory(S, "simpson", 0.01, np.arange(3.0), np.array([[0, 1.0], [0, 1], [-1e200, 1e200]]),
                         np.zeros((3, 2)), None, np.zeros(2, np.intc))
    with pytest.raises(ValueError, match=r"potential\(q\) returned a non-finite value"):
        with np.errstate(over="ignore"):
            done.energy


def test_a_genuine_callback_error_on_a_partial_trajectory_still_raises():
    def potential(q):
        if q[0] == 0.25:
            raise Boom("a bug at an ordinary state")
        return float(q @ q)

    S = sp.System(2, np.eye(2), potential, potential_grad=lambda q: 2 * q)
    bug = [([0.25, 1.0], [0.0, 0.0])]
    with pytest.raises(Boom, match="a bug at an ordinary state"):
        stopped_at(S, bug).energy
    # an overflowed row before it does not hide it
    tr = stopped_at(S, BAD_ROWS["inf"] + bug)
    with pytest.raises(Boom, match="a bug at an ordinary state"):
        tr.energy
    # without the bug, that overflowed row alone is nan
    with pytest.warns(RuntimeWarning, match=r"row 2 of this partial trajectory \(of 3\) "
                                            r"overflowed, nan there; at row 2: the state "
                                            r"itself is not finite"):
        E = stopped_at(S, BAD_ROWS["inf"]).energy
    assert np.isnan(E[2]) and same_bits(E[:2], S.energy(np.array([[0.1, 1.2], [0.2, 1.1]]),
                                                       np.array([[0.0, 0.1], [0.3, -0.2]])))
