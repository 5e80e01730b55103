"""Cost callbacks checked against central differences of the user's own value function
(issue 47), as a system's derivatives are on first use: ``sensitivity.gradient``'s
``grad_phi`` (at the run's end state) and ``grad_l`` (at its first and middle rows), and
``control.terminal``'s, ``control.running``'s and ``control.path``'s derivatives (once per
term object, at the problem's first guess and a perturbed point); and ``gradient``'s default
``wrt``, which follows what the call has.

Expected values: the costs' exact derivatives written out here, and the end state of an
independent ``sp.integrate`` run; never the values of the check itself.
"""
import math
import re

import numpy as np
import pytest

import symplectic as sp
from symplectic import control

H, N = 0.01, 200
Q0, P0 = np.array([0.7, 1.1]), np.array([0.1, -0.2])
TARGET = np.array([0.2, -0.3])


def system():
    return sp.systems.double_pendulum(damping=0.1)


def phi(q, p):
    return 0.5 * np.sum((q - TARGET) ** 2) + 0.1 * p @ p


def dphi(q, p):
    """The exact gradient of phi, (dphi/dq, dphi/dp)."""
    return q - TARGET, 0.2 * p


def ell(t, q, p):
    return 0.5 * q @ q + math.sin(t) * p[0] + 0.25 * p[1] ** 2


def dell(t, q, p):
    """The exact gradient of ell in (q, p)."""
    return q.copy(), np.array([math.sin(t), 0.5 * p[1]])


def end_state():
    """(q_N, p_N) of the run that gradient() makes, by an independent integrate call."""
    tr = sp.integrate(system(), Q0, P0, H, N)
    return tr.q[-1], tr.p[-1], tr


# ---------------------------------------------------------------- sensitivity.gradient
def test_a_sign_flipped_terminal_gradient_is_refused_at_the_end_state():
    flipped = (phi, lambda q, p: tuple(-g for g in dphi(q, p)))
    with pytest.raises(sp.DerivativeError) as info:
        sp.sensitivity.gradient(system(), Q0, P0, H, N, {"terminal": flipped})
    e = info.value
    msg = str(e)
    assert "the terminal cost's gradient grad_phi" in msg
    assert "check=False" in msg and "flipped sign" in msg
    assert e.callback == "the terminal cost's gradient grad_phi"
    qN, pN, _ = end_state()
    assert np.allclose(e.q, qN, rtol=1e-12, atol=1e-14)          # checked where it is used
    part, i = e.index
    exact = dict(zip(("dq", "dp"), dphi(qN, pN)))[part][i]
    assert f"{part}[{i}]" in msg
    assert abs(e.finite_difference - exact) <= 1e-8 * max(1.0, abs(exact))
    assert e.supplied == pytest.approx(-exact, rel=1e-14)


def test_a_running_gradient_off_by_a_factor_in_one_component_is_named():
    def wrong(t, q, p):
        dq, dp = dell(t, q, p)
        dp[1] *= 1.5
        return dq, dp

    with pytest.raises(sp.DerivativeError) as info:
        sp.sensitivity.gradient(system(), Q0, P0, H, N, {"running": (ell, wrong)})
    e = info.value
    msg = str(e)
    assert "the running cost's gradient grad_l" in msg and "dp[1]" in msg
    assert e.index == ("dp", 1)
    exact = 0.5 * P0[1]                                           # row 0: t = 0, (Q0, P0)
    assert np.array_equal(e.q, Q0) and "row 0" in msg
    assert e.supplied == pytest.approx(1.5 * exact, rel=1e-14)
    assert abs(e.finite_difference - exact) <= 1e-9
    assert "flipped sign" not in msg


def test_a_running_gradient_wrong_only_away_from_the_first_row_is_found_at_the_middle_row():
    """dl/dp[0] = sin(t) is 0 at t = 0, so a factor on it shows only later: the middle row
    (k = N // 2) is checked too."""
    def wrong(t, q, p):
        dq, dp = dell(t, q, p)
        dp[0] *= 2.0
        return dq, dp

    with pytest.raises(sp.DerivativeError, match=rf"row {N // 2} of the run") as info:
        sp.sensitivity.gradient(system(), Q0, P0, H, N, {"running": (ell, wrong)})
    e = info.value
    assert e.index == ("dp", 0)
    _, _, tr = end_state()
    assert np.allclose(e.q, tr.q[N // 2], rtol=1e-12, atol=1e-14)
    exact = math.sin(tr.t[N // 2])
    assert abs(e.finite_difference - exact) <= 1e-9
    assert e.supplied == pytest.approx(2 * exact, rel=1e-14)


def test_correct_gradients_pass_by_hand_and_from_sympy():
    sy = pytest.importorskip("sympy")
    cost = {"terminal": (phi, dphi), "running": (ell, dell)}
    value, g = sp.sensitivity.gradient(system(), Q0, P0, H, N, cost)
    unchecked, g0 = sp.sensitivity.gradient(system(), Q0, P0, H, N, cost, check=False)
    assert value == unchecked and all(np.array_equal(g[k], g0[k]) for k in g0)
    q, p, t = sy.symbols("q1 q2"), sy.symbols("p1 p2"), sy.Symbol("t")
    e_phi = sum((qi - c) ** 2 for qi, c in zip(q, TARGET)) / 2 + (p[0] ** 2 + p[1] ** 2) / 10
    e_ell = (q[0] ** 2 + q[1] ** 2) / 2 + sy.sin(t) * p[0] + p[1] ** 2 / 4
    by_sympy = {"terminal": sp.sensitivity.sympy_cost(e_phi, q, p),
                "running": sp.sensitivity.sympy_cost(e_ell, q, p, t)}
    vs, gs = sp.sensitivity.gradient(system(), Q0, P0, H, N, by_sympy)
    assert abs(vs - value) <= 1e-13 * abs(value)
    assert all(np.allclose(gs[k], g[k], rtol=1e-12, atol=1e-15) for k in g)


def test_correct_gradients_of_large_and_tiny_costs_pass():
    """The tolerance is relative: a cost of size 1e8 and one of size 1e-8 (near its
    minimum) with correct gradients pass; a state far from 1 too."""
    big = (lambda q, p: 1e8 * phi(q, p), lambda q, p: tuple(1e8 * g for g in dphi(q, p)))
    qN, pN, _ = end_state()
    near = (lambda q, p: 1e-8 * np.sum((q - qN) ** 2 + np.sin(p - pN) ** 2),
            lambda q, p: (2e-8 * (q - qN), 2e-8 * np.sin(p - pN) * np.cos(p - pN)))
    for term in (big, near):
        sp.sensitivity.gradient(system(), Q0, P0, H, N, {"terminal": term})
    far = sp.systems.pendulum()
    sp.sensitivity.gradient(far, [1000 * np.pi + 0.3], [0.2], H, 50,
                            {"terminal": (lambda q, p: float(np.cos(q[0]) * p[0]),
                                          lambda q, p: (np.array([-np.sin(q[0]) * p[0]]),
                                                        np.array([np.cos(q[0])])))})


def test_check_false_skips_and_the_sign_then_flips_the_result():
    """Without the check a flipped grad_phi gives the negated gradient (the adjoint is
    linear in it): what the check is there to stop."""
    flipped = (phi, lambda q, p: tuple(-g for g in dphi(q, p)))
    _, good = sp.sensitivity.gradient(system(), Q0, P0, H, N, {"terminal": (phi, dphi)})
    _, bad = sp.sensitivity.gradient(system(), Q0, P0, H, N, {"terminal": flipped},
                                     check=False)
    for k in ("q0", "p0"):
        assert np.allclose(bad[k], -good[k], rtol=1e-12, atol=0)


def test_a_gradient_of_the_wrong_shape_is_a_value_error_naming_the_shape():
    short = (phi, lambda q, p: (q[:1] - TARGET[:1], 0.2 * p))
    for check in (True, False):
        with pytest.raises(ValueError, match=r"grad_phi must return the pair .* shape \(2,\)"):
            sp.sensitivity.gradient(system(), Q0, P0, H, 10, {"terminal": short}, check=check)
    three = (ell, lambda t, q, p: (q, p, q))
    with pytest.raises(ValueError, match=r"grad_l must return the pair"):
        sp.sensitivity.gradient(system(), Q0, P0, H, 10, {"running": three})


# ---------------------------------------------------------------- gradient's default wrt
def test_default_wrt_follows_the_call():
    cost = {"terminal": (phi, dphi)}
    _, g = sp.sensitivity.gradient(system(), Q0, P0, H, 20, cost)
    assert tuple(g) == ("q0", "p0")
    U = 0.1 * np.ones((20, 2))
    _, g = sp.sensitivity.gradient(system(), Q0, P0, H, 20, cost, force=U)
    assert tuple(g) == ("q0", "p0", "force") and g["force"].shape == (20, 2)
    _, g = sp.sensitivity.gradient(system(), Q0, P0, H, 20, cost, force=U, wrt=["p0"])
    assert tuple(g) == ("p0",)


def test_default_wrt_takes_params_when_they_are_named():
    pytest.importorskip("sympy")
    dp = sp.systems.double_pendulum()
    _, g = sp.sensitivity.gradient(dp, Q0, P0, H, 10, {"terminal": (phi, dphi)}, params=["m2"])
    assert tuple(g) == ("q0", "p0", "params") and set(g["params"]) == {"m2"}


def test_an_explicit_force_without_a_held_force_suggests_the_default():
    with pytest.raises(ValueError) as info:
        sp.sensitivity.gradient(system(), Q0, P0, H, 20, {"terminal": (phi, dphi)},
                                wrt=("q0", "p0", "force"))
    msg = str(info.value)
    assert "held force" in msg and 'wrt=("q0", "p0")' in msg


# ---------------------------------------------------------------- control terms, directly
def c_phi(q, p):
    return 0.5 * (q[0] - 1.0) ** 2 + 0.5 * p[0] ** 2 + q[0] * p[0]


def c_dphi(q, p):
    return np.array([q[0] - 1.0 + p[0]]), np.array([p[0] + q[0]])


def c_ell(t, q, v, u):
    return 0.5 * u[0] ** 2 + q[0] * v[0] + math.cos(t) * q[0] ** 2


def c_dell(t, q, v, u):
    return np.array([v[0] + 2 * math.cos(t) * q[0]]), np.array([q[0]]), np.array([u[0]])


def c_path(t, q, v, u):
    return np.array([q[0] + 0.5 * v[0], u[0] ** 2 + q[0] * u[0]])


def c_path_jac(t, q, v, u):
    return (np.array([[1.0], [u[0]]]), np.array([[0.5], [0.0]]),
            np.array([[0.0], [2 * u[0] + q[0]]]))


ZERO = (0.0, np.zeros(1), np.zeros(1), np.zeros(1))       # a default guess's first point


def test_control_terminal_sign_flip_is_refused_with_its_name():
    term = control.terminal(c_phi, lambda q, p: tuple(-g for g in c_dphi(q, p)))
    y = np.array([0.3, -0.2])
    with pytest.raises(sp.DerivativeError) as info:
        (control.effort() + 10 * term).bind(1).check(y_end=y)
    e, msg = info.value, str(info.value)
    assert "control.terminal's grad" in msg and "check=False" in msg
    part, i = e.index
    exact = dict(zip(("dq", "dp"), c_dphi(y[:1], y[1:])))[part][i]
    assert abs(e.finite_difference - exact) <= 1e-9 and e.supplied == pytest.approx(-exact)


def test_control_running_grad_wrong_in_du_is_found_away_from_u_zero():
    """At the default guess's point u = 0, dl/du = u is 0 whatever its factor: the
    perturbed point shows it."""
    wrong = lambda t, q, v, u: (*c_dell(t, q, v, u)[:2], 3.0 * u)
    with pytest.raises(sp.DerivativeError) as info:
        control.running(c_ell, wrong).bind(1).check(point=ZERO)
    e, msg = info.value, str(info.value)
    assert "control.running's grad" in msg and "du[0]" in msg and "perturbed" in msg
    assert e.index == ("du", 0)
    m = re.search(r"u = \[([-0-9.e]+)\]", msg)
    assert e.supplied == pytest.approx(3.0 * float(m.group(1)), rel=1e-9)
    assert e.finite_difference == pytest.approx(float(m.group(1)), rel=1e-8)


def test_control_path_jac_wrong_entry_is_named():
    def wrong(t, q, v, u):
        jq, jv, ju = c_path_jac(t, q, v, u)
        jv = jv.copy()
        jv[0, 0] = -0.5
        return jq, jv, ju

    bound = control.path(c_path, wrong, size=2).bind(1, 1, None)
    with pytest.raises(sp.DerivativeError) as info:
        bound.check(*ZERO)
    e, msg = info.value, str(info.value)
    assert "control.path's jac" in msg and "dqdot[0, 0]" in msg
    assert e.index == ("dqdot", 0, 0) and e.quantity == "path_jacobian"
    assert e.supplied == -0.5 and abs(e.finite_difference - 0.5) <= 1e-9


def test_control_correct_terms_pass_once_and_check_false_skips():
    calls = []

    def counted(q, p):
        calls.append(1)
        return c_dphi(q, p)

    term = control.terminal(c_phi, counted)
    b = term.bind(1)
    b.check(y_end=np.array([0.3, -0.2]))
    b.check(y_end=np.array([0.3, -0.2]))
    term.bind(1).check(y_end=np.array([0.5, 0.1]))
    assert len(calls) == 2 and term.derivative_checked       # the point and a perturbed one
    control.running(c_ell, c_dell).bind(1).check(point=ZERO)
    control.path(c_path, c_path_jac, size=2).bind(1, 1, None).check(*ZERO)
    flipped = lambda q, p: tuple(-g for g in c_dphi(q, p))
    control.terminal(c_phi, flipped, check=False).bind(1).check(y_end=np.array([0.3, -0.2]))
    control.running(c_ell, lambda t, q, v, u: (q, v, 3 * u), check=False).bind(1).check(
        point=ZERO)
    with pytest.raises(TypeError, match="check must be True or False"):
        control.terminal(c_phi, c_dphi, check="yes")


def test_control_sympy_terms_are_not_checked_and_wrong_shapes_are_value_errors():
    sy = pytest.importorskip("sympy")
    q, p = sy.symbols("q0:1"), sy.symbols("p0:1")
    term = control.terminal((q[0] - 1) ** 2 + p[0] ** 2, symbols={"q": q, "p": p})
    assert not term.derivative_check
    term.bind(1).check(y_end=np.array([0.3, -0.2]))
    short = control.running(c_ell, lambda t, q, v, u: (q, v, np.zeros(2)))
    with pytest.raises(ValueError, match=r"arrays of shapes \(1,\), \(1,\) and \(1,\)"):
        short.bind(1).check(point=ZERO)
    bad = control.path(c_path, lambda t, q, v, u: (np.ones((1, 1)), np.ones((2, 1)),
                                                   np.ones((2, 1))), size=2)
    with pytest.raises(ValueError, match=r"shapes \(2, 1\), \(2, 1\), \(2, 1\)"):
        bad.bind(1, 1, None).check(*ZERO)


# ---------------------------------------------------------------- control, through Problem


def _problem(cost=None, path=None):
    pytest.importorskip("scipy.optimize")
    return control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 1.0, 4, inputs=[1.0],
                           start={"q": [0.0], "qdot": [0.0]},
                           end=None if cost is not None else {"q": [1.0], "qdot": [0.0]},
                           cost=cost, path=path)


def test_problem_with_correct_terms_solves():
    pb = _problem(control.effort() + 10 * control.terminal(c_phi, c_dphi)
                  + control.running(c_ell, c_dell),
                  path=control.path(c_path, c_path_jac, upper=[10.0, 10.0]))
    sol = pb.solve(solver="slsqp", tol=1e-10)
    assert sol.success


def test_problem_refuses_a_sign_flipped_terminal_grad():
    flipped = lambda q, p: tuple(-g for g in c_dphi(q, p))
    pb = _problem(control.effort() + 10 * control.terminal(c_phi, flipped))
    with pytest.raises(sp.DerivativeError, match="control.terminal's grad"):
        pb.solve(solver="slsqp", max_iter=5)


def test_problem_refuses_a_wrong_running_grad():
    wrong = lambda t, q, v, u: (*c_dell(t, q, v, u)[:2], 3.0 * u)
    pb = _problem(control.effort() + control.running(c_ell, wrong))
    with pytest.raises(sp.DerivativeError, match=r"control.running's grad .* du\[0\]"):
        pb.solve(solver="slsqp", max_iter=5)


def test_problem_refuses_a_wrong_path_jac():
    def wrong(t, q, v, u):
        jq, jv, ju = c_path_jac(t, q, v, u)
        return -jq, jv, ju

    pb = _problem(path=control.path(c_path, wrong, upper=[10.0, 10.0]))
    with pytest.raises(sp.DerivativeError, match="control.path's jac"):
        pb.solve(solver="slsqp", max_iter=5)
