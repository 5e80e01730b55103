"""Parameter sensitivities of constrained and linear systems: integrate(..., tangent=True,
wrt=[...]) -> traj.param_tangent against four-point differences of independent runs with
the parameter changed.

A parameter of the constraints (a rod's length) moves the constraint manifold, so a start
that is consistent for theta is not for theta +- e.  The run's S_k is the derivative at fixed
(q0, p0) (the step map is defined on all of R^2n and carries the start onto the manifold in
one step, csrc/core/sym_constraints_tangent.c), so the differences compare with the derivative of
the run from a start that moves with theta, x0(theta) = System.project(guess):

    d x_N / d theta = S_N + Phi_N d x0 / d theta,

Phi_N = traj.tangent (exact), d x0/d theta from the same stencil over the projected starts.
"""
import numpy as np
import pytest

import symplectic as sp

sy = pytest.importorskip("sympy")     # the exact route compiles an augmented SymPy system

from symplectic import symbolic  # noqa: E402

H, N = 0.01, 1000
STENCIL = (-2, -1, 1, 2)


def stencil(y, e):
    return (-y[2] + 8 * y[1] - 8 * y[-1] + y[-2]) / (12 * e)


def rel_err(got, want):
    return np.max(np.abs(got - want)) / np.max(np.abs(want))


def check(make, values, start, wrt, method="simpson", h=H, n_steps=N, rel=1e-4, tol=1e-7):
    """max over wrt of the relative error of d x_N/d theta; ``make(**values)`` builds the
    system, ``start(system)`` its consistent (q0, p0)."""
    S = make(**values)
    q0, p0 = start(S)
    tr = sp.integrate(S, q0, p0, h, n_steps, method=method, tangent=True, wrt=wrt,
                      store_every=n_steps)
    assert tr.param_tangent.shape == (2, 2 * S.n, len(wrt))
    errs = {}
    for j, name in enumerate(wrt):
        e = rel * abs(values[name])
        ends, starts = {}, {}
        for k in STENCIL:
            Sk = make(**dict(values, **{name: values[name] + k * e}))
            a, b = start(Sk)
            r = sp.integrate(Sk, a, b, h, n_steps, method=method, store_every=n_steps)
            ends[k] = np.concatenate([r.q[-1], r.p[-1]])
            starts[k] = np.concatenate([a, b])
        want = stencil(ends, e)
        got = tr.param_tangent[-1][:, j] + tr.tangent[-1] @ stencil(starts, e)
        errs[name] = rel_err(got, want)
    assert max(errs.values()) <= tol, errs
    return errs


def projected(qg, pg):
    return lambda S: S.project(qg, pg)


@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto4"])
def test_pendulum_cartesian(method):
    """m, l (the constraint's) and g of the Cartesian pendulum."""
    check(sp.systems.pendulum_cartesian, dict(m=1.3, l=1.1, g=9.81),
          projected([0.6, -0.8], [0.4, 0.3]), ["m", "l", "g"], method)


def test_spherical_pendulum_cartesian():
    check(sp.systems.spherical_pendulum_cartesian, dict(m=1.3, l=1.1, g=9.81),
          projected([0.6, 0.1, -0.8], [0.4, 0.3, 0.3]), ["m", "l", "g"], "lobatto5")


@pytest.mark.parametrize("method", ["simpson", "lobatto4"])
def test_four_bar(method):
    """Every parameter of the four-bar linkage: masses and lengths in M and V, lengths and d
    in its two loop-closure constraints."""
    values = dict(m1=0.3, m2=1.0, m3=0.8, l1=0.3, l2=1.0, l3=0.8, d=1.0, g=9.81)
    check(sp.systems.four_bar, values, projected([0.5, 0.3, 1.5], [0.02, 0.0, 0.0]),
          list(values), method)


def test_quaternion_top():
    """The quaternion top: M(Q) = 4 I |Q|^2 Id - 4 (I - I3) e e^T depends on I and I3, V on
    m, l, g; the constraint |Q|^2 = 1 on none.  A slow top (20 rad/s about its axis, axis
    0.4 rad from the vertical), so that a relative step of 1e-6 keeps the stencil's
    truncation below the tolerance."""
    values = dict(m=0.1, I=0.002329969592394382, I3=0.000125, l=0.15, g=9.81)
    check(sp.systems.lagrange_top_quaternion, values,
          lambda S: S.from_euler([0.0, 0.4, 0.0], [0.0, 0.0, 0.000125 * 20.0]), list(values),
          h=0.002, n_steps=1000, rel=1e-6)


@pytest.fixture(scope="module")
def sympy_cartesian():
    """A SymPy pendulum in Cartesian coordinates with a spring along x: l enters only the
    constraint, k only V, m the mass matrix and V."""
    x, y, u, v = sy.symbols("x y u v")
    m, l, g, k = sy.symbols("m l g k", positive=True)
    L = m * (u ** 2 + v ** 2) / 2 - m * g * y - k * x ** 2 / 2
    return symbolic.system(L, [x, y], [u, v], {m: 1.2, l: 0.9, g: 9.81, k: 3.0},
                           constraints=[x ** 2 + y ** 2 - l ** 2])


@pytest.mark.parametrize("method", ["midpoint", "lobatto4"])
def test_sympy_constrained_system(sympy_cartesian, method):
    S0 = sympy_cartesian
    values = {k: S0._params[k] for k in ("m", "l", "k")}
    check(lambda **v: S0.with_params(**v), values, projected([0.5, -0.7], [0.3, 0.2]),
          ["m", "l", "k"], method)


def linear_from(M00, M01, M11, K00, K01, K11):
    return sp.systems.linear(np.array([[M00, M01], [M01, M11]]),
                             np.array([[K00, K01], [K01, K11]]))


def test_linear_entries():
    """A ``linear`` system's M and K by their entries on and above the diagonal ("M[0,1]"
    moves M_01 and M_10 together); the run takes the Newton step (the closed form has no
    parameter derivative) and its states agree with the closed form's to rounding."""
    names = ["M00", "M01", "M11", "K00", "K01", "K11"]
    wrt = ["M[0,0]", "M[0,1]", "M[1,1]", "K[0,0]", "K[0,1]", "K[1,1]"]
    values = dict(zip(names, [2.0, 0.3, 1.5, 3.0, -0.4, 2.0]))
    q0, p0 = np.array([0.1, -0.2]), np.array([0.3, 0.1])
    S = linear_from(**values)
    tr = sp.integrate(S, q0, p0, 0.05, 400, tangent=True, wrt=wrt)
    closed = sp.integrate(S, q0, p0, 0.05, 400)
    assert tr.newton_iterations.sum() > 0 and closed.newton_iterations.sum() == 0
    assert rel_err(tr.q, closed.q) <= 1e-12
    for j, name in enumerate(names):
        e = 1e-4 * abs(values[name])
        ends = {}
        for k in STENCIL:
            r = sp.integrate(linear_from(**dict(values, **{name: values[name] + k * e})),
                             q0, p0, 0.05, 400, closed_form=False)
            ends[k] = np.concatenate([r.q[-1], r.p[-1]])
        assert rel_err(tr.param_tangent[-1][:, j], stencil(ends, e)) <= 1e-7, name
    it = sp.Integrator(S, 0.05, q0, p0, tangent=True, wrt=wrt)
    it.propagate(400)
    assert np.array_equal(it.param_tangent, tr.param_tangent[-1])


def test_refusals():
    S = sp.systems.linear(np.eye(2), np.diag([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"K is not a parameter.*K\[0,1\]"):
        sp.integrate(S, [0.1, 0.0], [0.0, 0.0], H, 10, tangent=True, wrt=["K"])
    with pytest.raises(ValueError, match="M\\[1,0\\] is not a parameter"):
        sp.integrate(S, [0.1, 0.0], [0.0, 0.0], H, 10, tangent=True, wrt=["M[1,0]"])
