"""Inputs given step by step to an Integrator (``step(force=u)``,
``propagate(force=U)``): a sampled-data loop.  The reference is one
``integrate`` call with the same inputs as the rows of its held force array:
the same steps of the same driver, so the states must be equal bitwise."""
import numpy as np
import pytest

import symplectic as sp
from symplectic import forces

METHODS = ["simpson", "lobatto4", "lobatto5", "midpoint", "gauss2", "rk4"]
Q0, P0, H = np.array([1.0, 0.5]), np.array([0.0, 0.3]), 0.01


def pd(q, p):
    """A PD law toward q = 0.2 (its inputs depend on the state: a closed loop)."""
    return -5.0 * (q - 0.2) - 0.8 * p


@pytest.mark.parametrize("method", METHODS)
def test_a_pd_loop_of_steps_equals_one_integrate_with_its_inputs(method):
    dp = sp.systems.double_pendulum()
    it = sp.Integrator(dp, H, Q0, P0, method=method)
    U = []
    for _ in range(300):
        u = pd(it.q, it.p)
        U.append(u)
        q1, p1 = it.step(force=u)
        assert np.array_equal(q1, it.q) and np.array_equal(p1, it.p)
    tr = sp.integrate(dp, Q0, P0, H, 300, method=method, force=np.array(U))
    assert np.array_equal(tr.q[-1], it.q) and np.array_equal(tr.p[-1], it.p)
    assert it.steps == 300 and it.t == tr.t[-1]
    # the loop actually steers: the inputs are not small, and the run differs from the free one
    free = sp.integrate(dp, Q0, P0, H, 300, method=method)
    assert np.max(np.abs(free.q[-1] - it.q)) > 0.1


def test_per_point_inputs_equal_integrate_with_a_per_point_array():
    dp = sp.systems.double_pendulum()
    P = len(sp.methods(details=True)["lobatto4"]["force_points"])
    rng = np.random.default_rng(3)
    U = rng.normal(size=(50, P, 2))
    it = sp.Integrator(dp, H, Q0, P0, method="lobatto4")
    for k in range(50):
        it.step(force=U[k])
    tr = sp.integrate(dp, Q0, P0, H, 50, method="lobatto4", force=U)
    assert np.array_equal(tr.q[-1], it.q) and np.array_equal(tr.p[-1], it.p)


def test_pieces_with_inputs_and_without_equal_one_run():
    """propagate(force=U) pieces, single steps with and without an input (none:
    zero), and a piece without one: the same states, work and impulse as one
    integrate call whose rows hold the same values (zeros where none)."""
    dp = sp.systems.double_pendulum()
    rng = np.random.default_rng(5)
    U = rng.normal(size=(40, 2))
    U[10] = 0.0
    U[25:] = 0.0
    it = sp.Integrator(dp, H, Q0, P0)
    a = it.propagate(10, force=U[:10])
    it.step()                                  # no input on step 10
    b = it.propagate(n_steps=14, force=U[11:25])
    c = it.propagate(15)                       # no input on 25 .. 39
    tr = sp.integrate(dp, Q0, P0, H, 40, force=U)
    assert np.array_equal(np.vstack([a.q, b.q, c.q[1:]]), tr.q)
    assert np.array_equal(np.vstack([a.p, b.p, c.p[1:]]), tr.p)
    assert np.allclose(c.work, tr.work[25:], rtol=1e-13, atol=1e-15)
    assert np.allclose(c.impulse[-1], tr.impulse[-1], rtol=1e-13, atol=1e-15)
    assert np.allclose(a.work, tr.work[:11], rtol=1e-13, atol=1e-15)


def test_inputs_add_to_the_run_own_force_and_its_tangent():
    """With a damping force given at construction and tangent=True: the same
    states and tangent as integrate with that force plus the held rows."""
    dp = sp.systems.double_pendulum()
    damp = forces.linear_damping(0.3 * np.eye(2))
    rng = np.random.default_rng(7)
    U = rng.normal(size=(30, 2))
    it = sp.Integrator(dp, H, Q0, P0, force=damp, tangent=True)
    for k in range(30):
        it.step(force=U[k])
    tr = sp.integrate(dp, Q0, P0, H, 30, force=damp + forces.zero_order_hold(U),
                      tangent=True)
    assert np.array_equal(tr.q[-1], it.q)
    assert np.array_equal(tr.tangent[-1], it.tangent)


def test_an_array_given_at_construction_is_copied():
    """Documented: the construction's array is copied; filling it afterwards
    (as one might a preallocated buffer) changes nothing."""
    dp = sp.systems.double_pendulum()
    U = np.zeros((20, 2))
    it = sp.Integrator(dp, H, Q0, P0, force=U)
    U[:] = 3.0
    it.propagate(20)
    free = sp.integrate(dp, Q0, P0, H, 20, force=np.zeros((20, 2)))
    assert np.array_equal(free.q[-1], it.q)


def test_refusals_name_the_problem():
    dp = sp.systems.double_pendulum()
    it = sp.Integrator(dp, H, Q0, P0, force=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="force array given at its construction"):
        it.step(force=[1.0, 2.0])
    lin = sp.systems.linear(np.eye(1), np.eye(1))
    with pytest.raises(ValueError, match="closed_form=False"):
        sp.Integrator(lin, H, [1.0], [0.0]).step(force=[1.0])
    it = sp.Integrator(dp, H, Q0, P0)
    it.step()
    it.step()
    with pytest.raises(ValueError, match="non-finite value in the input of step 2"):
        it.step(force=[np.nan, 0.0])
    assert it.steps == 2                        # the state stays
    with pytest.raises(ValueError, match=r"must have shape \(n,\) = \(2,\).*got shape \(3,\)"):
        it.step(force=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"shape \(n_steps = 4, n = 2\).*got shape \(3, 2\)"):
        it.propagate(4, force=np.zeros((3, 2)))
    with pytest.raises(TypeError, match="force must be an array"):
        it.step(force="x")
