"""The C core's shoot (symplectic._run._driver.shoot on a kept workspace): B independent
single steps in one call, each from its own state, time, step size and row
of the held force.  Every item must be the one-step run that
_driver.run gives for it alone -- its end, its derivatives in (q, p) and
the force, in h and t, and its states at the force points -- whatever the
items before it; a failed item is named, the rows before it filled; bad
arguments raise."""
import numpy as np
import pytest

import symplectic as sp
from symplectic import _core, forces
from symplectic._model import _runspec
from symplectic._run import _driver, _prepare


def _python_pendulum():
    """The plane pendulum as Python callables (the GIL held in the loop)."""
    g = 9.81
    return sp.System(1, lambda q: np.array([[1.0]]), lambda q: -g * np.cos(q[0]),
                     mass_grad=lambda q: np.zeros((1, 1, 1)),
                     potential_grad=lambda q: np.array([g * np.sin(q[0])]),
                     potential_hess=lambda q: np.array([[g * np.cos(q[0])]]))


def _damped_double_pendulum():
    """Damped, and driven by a force of the time (each item's own t = k h)."""
    S = sp.systems.double_pendulum()
    drive = forces.from_callable(
        lambda t, q, v: np.array([np.sin(3.0 * t), 0.5 * np.cos(2.0 * t)]),
        lambda t, q, v: (np.zeros((2, 2)), np.zeros((2, 2))))
    return S, forces.linear_damping(np.array([[0.3, 0.05], [0.05, 0.2]])) + drive


def _shoot(system, q0, p0, ks, hs, spec, f, jac, hj=None, pts=None):
    """The items by the driver's shoot on a workspace kept for them (the force's held part
    pointed at their values, f.hold (B, P, n))."""
    kept = _prepare.Prepared(system, spec, q0[0], p0[0], f).workspace()
    return _driver.shoot(kept, q0, p0, ks, hs, f.hold,
                         _driver.Outputs(jacobians=jac, h_jacobians=hj, points=pts))


def _alone(system, q0, p0, k, h, method, hold, extra, free, points):
    """The item by the driver's run: one step at t = k h."""
    n = system.n
    P = hold.shape[0]
    spec = _runspec.run_spec(method, h, 1, k * h)
    f = forces.Force(hold=hold[None]) + extra if extra is not None else \
        forces.Force(hold=hold[None])
    jac = np.empty((1, 2 * n, (2 + P) * n))
    hj = np.empty((1, 2, 2 * n)) if free else None
    pts = np.empty((1, P, 2 * n, 1 + (2 + P) * n + (2 if free else 0))) if points else None
    r = _driver.run(_prepare.Prepared(system, spec, q0, p0, f),
                    outputs=_driver.Outputs(jacobians=jac, h_jacobians=hj, points=pts))
    assert r.failure is None
    return np.concatenate([r.q[-1], r.p[-1]]), jac[0], None if hj is None else hj[0], \
        None if pts is None else pts[0]


CASES = {
    "double pendulum, damped": (_damped_double_pendulum, ("simpson", "lobatto4", "gauss2",
                                                          "midpoint")),
    "Python callables": (lambda: (_python_pendulum(), None), ("simpson", "lobatto5")),
    "Cartesian pendulum (constrained)": (lambda: (sp.systems.pendulum_cartesian(), None),
                                        ("simpson", "lobatto4")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_item_is_its_own_one_step_run(case):
    make, methods = CASES[case]
    system, extra = make()
    n = system.n
    rng = np.random.default_rng(7)
    for method in methods:
        P = len(sp.methods(details=True)[method]["force_points"])
        B = 7
        if system.n_constraints:
            ang = rng.uniform(-1.0, 1.0, B)        # on the circle x^2 + y^2 = 1, p tangent
            q0 = np.stack([np.sin(ang), -np.cos(ang)], axis=1)
            p0 = rng.normal(size=(B, 1)) * np.stack([np.cos(ang), np.sin(ang)], axis=1)
        else:
            q0, p0 = rng.normal(scale=0.5, size=(B, n)), rng.normal(scale=0.5, size=(B, n))
        ks = np.array([0, 3, 3, 1, 9, 2, 3], dtype=float)     # repeated, out of order
        hs = rng.uniform(0.02, 0.06, B)
        hold = rng.normal(scale=0.5, size=(B, P, n))
        if system.n_constraints:
            # a force along the tangent keeps the items' forces meaningful on the circle
            hold = hold * 0.0 + rng.normal(size=(B, P, 1)) * np.stack(
                [np.cos(ang), np.sin(ang)], axis=1)[:, None, :]
        free, points = True, True
        f = forces.Force(hold=hold) + extra if extra is not None else forces.Force(hold=hold)
        jac = np.empty((B, 2 * n, (2 + P) * n))
        hj = np.empty((B, 2, 2 * n))
        pts = np.empty((B, P, 2 * n, 1 + (2 + P) * n + 2))
        spec = _runspec.run_spec(method, 0.05, 1, 0.0)
        q1, p1, failed, fail = _shoot(system, q0, p0, ks, hs, spec, f, jac, hj, pts)
        assert failed == B and fail is None
        for b in range(B):
            end, J, HJ, PT = _alone(system, q0[b], p0[b], ks[b], hs[b], method, hold[b], extra,
                                    free, points)
            scale = max(1.0, np.abs(J).max())
            np.testing.assert_allclose(np.concatenate([q1[b], p1[b]]), end, rtol=0,
                                       atol=1e-13 * max(1.0, np.abs(end).max()),
                                       err_msg=f"{case} {method} item {b}")
            np.testing.assert_allclose(jac[b], J, rtol=0, atol=1e-12 * scale)
            np.testing.assert_allclose(hj[b], HJ, rtol=0, atol=1e-11 * max(1.0, np.abs(HJ).max()))
            np.testing.assert_allclose(pts[b], PT, rtol=0, atol=1e-11 * max(1.0, np.abs(PT).max()))


def test_a_failed_item_is_named_and_the_rows_before_it_filled():
    system = sp.systems.pendulum()
    B = 5
    q0, p0 = np.zeros((B, 1)), np.zeros((B, 1))
    p0[3, 0] = 1e3                          # item 3: a step far too long for its speed
    hs = np.full(B, 0.05)
    hs[3] = 2.0
    hold = np.zeros((B, 3, 1))
    spec = _runspec.run_spec("simpson", 0.05, 1, 0.0, options={"max_iter": 3})
    jac = np.full((B, 2, 5), np.nan)
    q1, p1, failed, fail = _shoot(system, q0, p0, np.arange(B), hs, spec,
                                  forces.Force(hold=hold), jac)
    assert failed == 3
    assert fail.status != 0 and fail.reason and fail.t == pytest.approx(3 * 2.0)
    assert np.isfinite(jac[:3]).all() and np.isnan(jac[4]).all()
    np.testing.assert_array_equal(q1[:3], 0.0)          # at rest at the bottom: stays there


def test_bad_arguments_raise_naming_them():
    system = sp.systems.pendulum()
    f = forces.Force(hold=np.zeros((2, 3, 1))).spec(1)
    q0, p0 = np.zeros((2, 1)), np.zeros((2, 1))
    with pytest.raises(ValueError, match="same length"):
        _core.shoot(system, q0, p0, [0.0, 1.0], [0.1], force=f)
    with pytest.raises(ValueError, match=r"shoot: q0 must have shape \(B, n\) = \(2, 1\)"):
        _core.shoot(system, np.zeros((3, 1)), p0, [0.0, 1.0], [0.1, 0.1], force=f)
    with pytest.raises(ValueError, match="nonempty"):
        _core.shoot(system, q0, p0, [], [], force=f)
    with pytest.raises(ValueError, match=r"invalid run argument \(h\)"):
        _core.shoot(system, q0, p0, [0.0, 1.0], [0.1, 0.0], force=f)
    with pytest.raises(ValueError, match="jacobians must be"):
        _core.shoot(system, q0, p0, [0.0, 1.0], [0.1, 0.1], force=f,
                      jacobians=np.empty((1, 2, 5)))
    with pytest.raises(ValueError, match="2 rows, fewer than the 3"):    # than items
        _core.shoot(system, np.zeros((3, 1)), np.zeros((3, 1)), [0.0, 1.0, 2.0],
                      [0.1] * 3, force=f)


def test_a_callback_error_propagates():
    calls = []

    def dV(q):
        calls.append(1)
        if len(calls) > 40:
            raise RuntimeError("dV gave up")
        return np.array([9.81 * np.sin(q[0])])
    system = sp.System(1, lambda q: np.array([[1.0]]), lambda q: -9.81 * np.cos(q[0]),
                       mass_grad=lambda q: np.zeros((1, 1, 1)), potential_grad=dV,
                       potential_hess=lambda q: np.array([[9.81 * np.cos(q[0])]]),
                       derivative_check=False)
    B = 50
    spec = _runspec.run_spec("simpson", 0.05, 1, 0.0)
    with pytest.raises(RuntimeError, match="dV gave up"):
        _shoot(system, np.full((B, 1), 0.3), np.zeros((B, 1)), np.arange(B),
               np.full(B, 0.05), spec, forces.Force(hold=np.zeros((B, 3, 1))),
               np.empty((B, 2, 5)))
