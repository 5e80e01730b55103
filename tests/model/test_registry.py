"""Tests driven by the registries (symplectic._model._registry): each covers every row
the C core registers, so a new method or built-in system is tested without
editing a list here -- and fails until it is right.

- every method's fitted order on a nonlinear problem with an exact solution
  (the pendulum at 115 degrees of amplitude, sp.exact.pendulum) against the
  order it registers;
- every C built-in system has a Python factory in symplectic.systems, and an
  independently written Python twin (tests/support/twins.py) that passes the
  derivative check and agrees with it;
- the parametrisations come from functions of the registry (support/cases.py), and
  test_registry_driven_tests_pick_up_new_rows shows that they pick up a row
  added to it.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _registry
from support.cases import builtin_cases, method_cases
from support.twins import builtin_twins

# ---------------------------------------------------------------- orders
# The pendulum V = m w^2 (1 - cos q) (m = 1, w = 2 pi) released at q0 = 2.0 rad (period
# 1.33 x the small-oscillation one), over one period T with N = 8 j steps,
# j = round(2 sqrt(2)^k): the error is taken at the eight nodes t = T i / 8, common to all
# runs (the maximum over all nodes jumps with N, by whether the fastest point of the
# swing is a node), relative to the size of q and of p.  Its rounding floor is ~1.5e-15;
# the fit is the least-squares slope over the three finest runs whose error is above
# FLOOR = 5e-14 (about 30x the floor; N <= 2048).  Measured: simpson 4.001, midpoint 2.000,
# rk4 3.984, lobatto2 2.000, lobatto3 4.001, lobatto4 6.007, lobatto5 8.108 -- an order-8
# method has about two halvings of h between its pre-asymptotic range and the floor, and
# a symmetric method's error C h^p (1 + D h^2) approaches its order from above: lobatto5's
# local orders are 8.84, 8.29, 8.13, 8.07, 8.09 down to 1.0e-13.
Q0, FLOOR, TOL = 2.0, 5e-14, 0.15


def order_errors(method):
    """[(h, relative error)] for the runs above FLOOR, coarse to fine."""
    T = sp.exact.pendulum_period(Q0)
    pendulum = sp.systems.pendulum()
    out = []
    for k in range(20):
        N = 8 * int(round(2 * math.sqrt(2) ** k))
        if N > 2048:
            break
        tr = sp.integrate(pendulum, [Q0], [0.0], T / N, N, method)
        at = slice(N // 8, N + 1, N // 8)
        q, p = sp.exact.pendulum(tr.t[at], Q0)
        e = float(np.max(np.hypot((tr.q[at, 0] - q) / Q0,
                                  (tr.p[at, 0] - p) / np.max(np.abs(p)))))
        if e < FLOOR:
            break
        out.append((T / N, e))
    return out


@pytest.mark.parametrize("method", method_cases())
def test_fitted_order_is_the_registered_order(method):
    if _registry.METHODS[method].order > 8:
        # above order 8 the runs here reach FLOOR before the asymptotic range (lobatto6:
        # local orders 11.3, 10.5 down to 5e-14; lobatto7 one run above FLOOR): every such
        # row is fitted by tests/validation/test_high_order.py, which takes them from the
        # registry the same way (its HIGH: the rows of order above 8)
        pytest.skip("order above 8: fitted in tests/validation/test_high_order.py")
    points = order_errors(method)[-3:]
    assert len(points) == 3, points
    hs, errs = zip(*points)
    order = float(np.polyfit(np.log(hs), np.log(errs), 1)[0])
    assert order == pytest.approx(_registry.METHODS[method].order, abs=TOL), (method, points)


# ---------------------------------------------------------------- built-in systems
def test_every_builtin_has_a_factory():
    assert _registry.missing_factories() == []
    for name in builtin_cases():
        assert callable(_registry.builtin_factory(name))
        assert getattr(sp.systems, name) is _registry.builtin_factory(name)
    assert sp.systems.available() == {b.name: b.doc for b in _registry.BUILTINS.values()}


def close(a, b, rel):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.max(np.abs(a - b)) <= rel * max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize("name", builtin_cases())
def test_builtin_agrees_with_its_independent_twin(name):
    rng = np.random.default_rng(11)
    twins = builtin_twins(rng)
    assert name in twins, f"write an independent Python twin of the built-in {name!r} in tests/support/twins.py"
    twin = twins[name]
    builtin = _registry.builtin_factory(name)(**twin.kwargs)
    assert builtin.builtin == name and builtin.n == twin.n
    python = sp.System(twin.n, **twin.callables)
    for _ in range(3):
        q, g = twin.draw(), rng.uniform(-1, 1, twin.n)
        python.check_derivatives(q)                        # raises DerivativeError if wrong
        builtin.check_derivatives(q)
        assert close(builtin.mass(q), python.mass(q), 1e-14)
        assert close(builtin.potential(q), python.potential(q), 1e-14)
        assert close(builtin.potential_grad(q), python.potential_grad(q), 1e-13)
        assert close(builtin.mass_dir(q, g), python.mass_dir(q, g), 1e-13)
        if "potential_hess" in twin.callables:
            assert close(builtin.potential_hess(q), python.potential_hess(q), 1e-13)
        if "mass_hess" in twin.callables:
            assert close(builtin.mass_hess_dir(q, g), python.mass_hess_dir(q, g), 1e-13)
    q0 = twin.draw() * 0.3
    if builtin.n_constraints:         # holonomic constraints: the same g, G, S
        assert python.n_constraints in (None, builtin.n_constraints)
        for _ in range(3):
            q, mu = twin.draw(), rng.uniform(-1, 1, builtin.n_constraints)
            python.check_constraint_derivatives(q)
            builtin.check_constraint_derivatives(q)
            assert close(builtin.constraint(q), python.constraint(q), 1e-14)
            assert close(builtin.constraint_jac(q), python.constraint_jac(q), 1e-14)
            assert close(builtin.constraint_hess(q, mu), python.constraint_hess(q, mu), 1e-13)
        q0 = twin.draw()                    # on the constraint manifold
        assert np.max(np.abs(builtin.constraint(q0))) < 1e-14
    p0 = np.zeros(twin.n)
    if name == "lagrange_top":   # at rest it would fall through theta = pi: refused before the run
        p0 = builtin.momentum(q0, [0.0, 0.0, 252.0])
    a = sp.integrate(builtin, q0, p0, 1e-3, 200, closed_form=False)
    b = sp.integrate(python, q0, p0, 1e-3, 200)
    assert close(a.q, b.q, 1e-11) and close(a.p, b.p, 1e-11)


# ---------------------------------------------------------------- the tests follow the registry
def test_registry_driven_tests_pick_up_new_rows(monkeypatch):
    """A row added to the registry appears in the parametrisations above, in the
    public method list, and is accepted by the input checks -- and a built-in
    without a factory or a twin makes the built-in tests fail."""
    fake = _registry.Method("fake8", "a scheme that is not there", 8, True, 3,
                            (0.0, 0.2, 0.5, 0.8, 1.0))
    monkeypatch.setitem(_registry.METHODS, "fake8", fake)
    assert "fake8" in method_cases()
    assert sp.methods(details=True)["fake8"]["order"] == 8
    from symplectic._model import _validate
    assert _validate.method("fake8") is fake

    monkeypatch.setitem(_registry.BUILTINS, "fake_system",
                        _registry.Builtin("fake_system", "not there", ""))
    assert "fake_system" in builtin_cases()
    assert _registry.missing_factories() == ["fake_system"]      # test_every_builtin_has_a_factory
    with pytest.raises(KeyError):
        _registry.builtin_factory("fake_system")
    assert "fake_system" not in builtin_twins(np.random.default_rng(0))   # ... and the twin test


def test_a_factory_of_an_unknown_builtin_is_refused_at_registration():
    def no_such_system():
        pass

    with pytest.raises(ValueError, match="no_such_system.*C core does not have"):
        _registry.builtin(no_such_system)
    with pytest.raises(ValueError, match="not a C built-in"):
        _registry.preset("no_such_system")
