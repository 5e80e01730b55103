"""step, integrate and integrate_many give bitwise the same states, for every
kind of system and every method of the registry: one step of ``step`` is row 1
of ``integrate(..., 1)``, and each member of ``integrate_many`` is its
``integrate`` run, row for row -- including the closed form of linear systems,
which all three take (or, with closed_form=False, all three leave) together."""
import math

import numpy as np
import pytest

import symplectic as sp
from support.cases import KINDS, method_cases

Q0 = np.array([[math.pi / 4, math.pi / 3], [0.3, -0.5], [1.1, 0.2]])
V0 = np.array([[0.0, 0.0], [0.4, -0.2], [-0.3, 0.9]])
H, N = 0.01, 25


@pytest.mark.parametrize("method", method_cases())
@pytest.mark.parametrize("kind", KINDS)
def test_step_integrate_and_integrate_many_agree_bitwise(kind, method, system_of):
    system, closed_form = system_of(kind)
    P0 = np.array([system.mass(q) @ v for q, v in zip(Q0, V0)])
    runs = [sp.integrate(system, q, p, H, N, method, closed_form=closed_form)
            for q, p in zip(Q0, P0)]
    for k, (q, p) in enumerate(zip(Q0, P0)):
        q1, p1 = sp.step(system, q, p, H, method, closed_form=closed_form)
        one = sp.integrate(system, q, p, H, 1, method, closed_form=closed_form)
        assert np.array_equal(q1, one.q[1]) and np.array_equal(p1, one.p[1]), k
        assert np.array_equal(one.q, runs[k].q[:2]) and np.array_equal(one.p, runs[k].p[:2]), k
    ens = sp.integrate_many(system, Q0, P0, H, N, method, closed_form=closed_form, threads=2)
    for k, tr in enumerate(runs):
        assert np.array_equal(ens.q[k], tr.q) and np.array_equal(ens.p[k], tr.p), k
        assert np.array_equal(ens.newton_iterations[k], tr.newton_iterations), k
    assert np.array_equal(ens.t, runs[0].t)
    linear_closed = kind == "linear" and method in ("simpson", "midpoint")
    assert (ens.newton_iterations.sum() == 0) == (linear_closed or method == "rk4")
