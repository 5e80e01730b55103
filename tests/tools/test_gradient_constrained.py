"""``sp.sensitivity.gradient`` on constrained systems: the adjoint sweep over each step's
exact derivative on all of R^2n (csrc/core/sym_constraints_tangent.c), with a held force.

The force rows are checked against central differences of independent runs (a force does not
move the constraint manifold, so the perturbed runs start from the same consistent state); the
start against the forward tangent (dC/dy0 = Phi_N^T grad phi, Phi_N checked against
differences along the manifold in tests/run/test_tangent_constrained.py) and against
differences along the manifold; the parameters against four-point differences (m, g) and
against the forward parameter tangent (l, which moves the manifold: S_N at fixed start,
tests/run/test_param_tangent_constrained.py).
"""
import numpy as np
import pytest

import symplectic as sp

H, N = 0.01, 200
TH0 = 0.7


def start(S, th=TH0, w=0.5):
    l = S.params["l"]
    q0 = l * np.array([np.sin(th), -np.cos(th)])
    return q0, S.params["m"] * l * w * np.array([np.cos(th), np.sin(th)])


def controls():
    return 0.3 * np.sin(np.outer(np.arange(N) * H, [1.1, 2.3]) + [0.0, 0.4])


TARGET = np.array([0.3, -0.9])


def terminal():
    return (lambda q, p: 0.5 * np.sum((q - TARGET) ** 2) + 0.05 * p @ p,
            lambda q, p: (q - TARGET, 0.1 * p))


def running():
    return (lambda t, q, p: q[0] ** 2 + np.sin(t) * p[1],
            lambda t, q, p: (np.array([2 * q[0], 0.0]), np.array([0.0, np.sin(t)])))


def cost_of(tr):
    phi = terminal()[0](tr.q[-1], tr.p[-1])
    return phi + H * sum(running()[0](t, q, p) for t, q, p in zip(tr.t[:-1], tr.q[:-1],
                                                                  tr.p[:-1]))


def four_point(f, e):
    """(8 [f(e) - f(-e)] - [f(2e) - f(-2e)]) / 12e: truncation O(e^4); with e = 1e-4 its
    rounding and Newton-tolerance noise, ~1e-15 C / e, stays far below the tolerance, where
    the two-point stencil at e = 1e-6 shows 1e-10 of noise on gradients of 1e-3."""
    return (8 * (f(e) - f(-e)) - (f(2 * e) - f(-2 * e))) / (12 * e)


@pytest.mark.parametrize("method,every", [("midpoint", 7), ("simpson", 1), ("lobatto4", 7)])
def test_force_rows_and_start(method, every):
    S = sp.systems.pendulum_cartesian(m=1.2, l=0.9)
    q0, p0 = start(S)
    U = controls()
    cost = {"terminal": terminal(), "running": running()}
    value, g = sp.sensitivity.gradient(S, q0, p0, H, N, cost, method=method, force=U)
    tr = sp.integrate(S, q0, p0, H, N, method=method, force=U, tangent=True)
    assert abs(value - cost_of(tr)) <= 1e-12 * abs(value)
    # the force rows (every one for simpson) against differences of independent runs
    rows = list(np.ndindex(*U.shape))[::every]
    for k, c in rows:
        def C(d):
            Ud = U.copy()
            Ud[k, c] += d
            return cost_of(sp.integrate(S, q0, p0, H, N, method=method, force=Ud))
        assert abs(g["force"][k, c] - four_point(C, 1e-4)) <= 1e-7 * np.max(np.abs(g["force"]))
    # the start: lambda_0 = sum_k Phi_k^T h grad l_k + Phi_N^T grad phi, from the forward tangent
    lam = tr.tangent[-1].T @ np.concatenate(terminal()[1](tr.q[-1], tr.p[-1]))
    for k in range(N):
        lam += H * tr.tangent[k].T @ np.concatenate(running()[1](tr.t[k], tr.q[k], tr.p[k]))
    got = np.concatenate([g["q0"], g["p0"]])
    assert np.max(np.abs(got - lam)) <= 1e-10 * np.max(np.abs(lam))
    # along the manifold: the start moved along the circle (its angle) and in its speed
    for which in (0, 1):
        def moved(d):
            return start(S, TH0 + d, 0.5) if which == 0 else start(S, TH0, 0.5 + d)

        def C(d):
            return cost_of(sp.integrate(S, *moved(d), H, N, method=method, force=U))
        dy = four_point(lambda d: np.concatenate(moved(d)), 1e-4)
        assert abs(got @ dy - four_point(C, 1e-4)) <= 1e-7 * np.max(np.abs(got)) * np.max(
            np.abs(dy))


def test_parameters():
    pytest.importorskip("sympy")
    S = sp.systems.pendulum_cartesian(m=1.2, l=0.9)
    q0, p0 = start(S)
    U = controls()
    cost = {"terminal": terminal()}
    names = ["m", "l", "g"]
    _, g = sp.sensitivity.gradient(S, q0, p0, H, N, cost, force=U, wrt=["params"], params=names)
    tr = sp.integrate(S, q0, p0, H, N, force=U, tangent=True, wrt=names, store_every=N)
    lam_end = np.concatenate(terminal()[1](tr.q[-1], tr.p[-1]))
    fwd = tr.param_tangent[-1].T @ lam_end
    got = np.array([g["params"][k] for k in names])
    assert np.max(np.abs(got - fwd)) <= 1e-10 * np.max(np.abs(fwd))
    for j, name in enumerate(["m", "g"]):      # these leave the start consistent
        e = 1e-4 * S.params[name]
        c = {}
        for k in (-2, -1, 1, 2):
            Sk = sp.systems.pendulum_cartesian(**{**S.params, name: S.params[name] + k * e})
            r = sp.integrate(Sk, q0, p0, H, N, force=U, store_every=N)
            c[k] = terminal()[0](r.q[-1], r.p[-1])
        fd = (-c[2] + 8 * c[1] - 8 * c[-1] + c[-2]) / (12 * e)
        assert abs(g["params"][name] - fd) <= 1e-7 * abs(fd), name
