"""symplectic.control: running costs of the state, int l(t, q, qdot, u) dt at the scheme's
force points with the step's own states there (sym_run.deriv.points).

Expected values: the LQ oscillator with a state cost in closed form (the Hamiltonian system
x' = A x - B R^-1 B^T lambda, lambda' = -Q x - A^T lambda solved by the matrix exponential,
J* = 1/2 (lambda(0) . x(0) - lambda(T) . x(T))), finite differences for the derivatives, and
for a nonlinear swing-up the finest run (its orders, not its value, are checked)."""
import numpy as np
import pytest

import symplectic as sp
from support.control_checks import check_derivatives, random_point
from symplectic import control

pytest.importorskip("scipy.optimize")

ORDERS = {"midpoint": 2, "simpson": 4, "lobatto4": 6, "gauss2": 4, "gauss3": 6}
W_Q, W_V, T_LQ = 3.0, 0.5, 2.0          # the state cost 1/2 (W_Q q^2 + W_V qdot^2)


def _order(Ns, errs):
    return -np.polyfit(np.log(Ns), np.log(errs), 1)[0]


def lq_closed_form(t):
    """x(t) = (q, qdot) and lambda(t) = (lambda_q, lambda_v) of q'' = -q + u, (0, 0) -> (1, 0)
    in T_LQ, min 1/2 int W_Q q^2 + W_V qdot^2 + u^2 dt; and J*."""
    from scipy.linalg import expm
    from scipy.sparse.linalg import expm_multiply
    A = np.array([[0.0, 1.0], [-1.0, 0.0]])
    Bu = np.array([[0.0], [1.0]])
    Q = np.diag([W_Q, W_V])
    H = np.block([[A, -Bu @ Bu.T], [-Q, -A.T]])
    x0, xT = np.zeros(2), np.array([1.0, 0.0])
    E = expm(H * T_LQ)
    lam0 = np.linalg.solve(E[:2, 2:], xT - E[:2, :2] @ x0)
    t, y0 = np.atleast_1d(t), np.concatenate([x0, lam0])
    if t.size == 1:
        y = (expm(H * t[0]) @ y0)[None]
    else:                           # an equally spaced grid: expm(H t) y0 on it at once
        assert np.allclose(np.diff(t), t[1] - t[0], rtol=1e-12, atol=0)
        y = expm_multiply(H, y0, start=t[0], stop=t[-1], num=t.size, endpoint=True)
    yT = E @ np.concatenate([x0, lam0])
    J = 0.5 * (lam0 @ x0 - yT[2:] @ yT[:2])
    return y[:, :2], y[:, 2:], J


def _state_cost(t, q, qdot, u):
    return 0.5 * (W_Q * q[0] ** 2 + W_V * qdot[0] ** 2)


def _state_cost_grad(t, q, qdot, u):
    return np.array([W_Q * q[0]]), np.array([W_V * qdot[0]]), np.zeros(1)


def _lq(method, N):
    pb = control.Problem(sp.systems.linear([[1.0]], [[1.0]]), T_LQ, N, method=method,
                         inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [1.0], "qdot": [0.0]},
                         cost=control.effort() + control.running(_state_cost, _state_cost_grad),
                         rtol=1e-15)
    return pb.solve(tol=1e-12)


def test_the_closed_form_satisfies_its_own_conditions():
    """The closed form reaches (1, 0) at T, and J* equals the cost integrated by quadrature
    along it (u = -lambda_v)."""
    t = np.linspace(0.0, T_LQ, 4001)
    x, lam, J = lq_closed_form(t)
    assert np.abs(x[0]).max() < 1e-14 and np.abs(x[-1] - [1.0, 0.0]).max() < 1e-12
    f = 0.5 * (W_Q * x[:, 0] ** 2 + W_V * x[:, 1] ** 2 + lam[:, 1] ** 2)
    w = np.full(t.size, 2.0)
    w[1::2], w[0], w[-1] = 4.0, 1.0, 1.0                    # Simpson's rule
    assert abs(np.sum(w * f) * (t[1] - t[0]) / 3 - J) < 1e-12


@pytest.mark.parametrize("method, Ns", [
    ("midpoint", (4, 8, 16)), ("simpson", (4, 8, 16)), ("lobatto4", (3, 4, 6)),
    ("gauss2", (4, 8, 16)), ("gauss3", (3, 4, 6))])
def test_lq_with_a_state_cost_converges_at_the_scheme_order(method, Ns):
    """J, the states at the nodes and the costates (the multipliers; lambda_0 with the
    running cost's own derivative at node 0) against the closed form."""
    errs = {"J": [], "x": [], "lam": []}
    for N in Ns:
        sol = _lq(method, N)
        assert sol.success and sol.kkt_residual < 1e-11, (sol.message, sol.kkt_residual)
        x, lam, J = lq_closed_form(sol.t)
        errs["J"].append(abs(sol.cost - J))
        errs["x"].append(np.abs(np.column_stack([sol.q[:, 0], sol.qdot[:, 0]]) - x).max())
        errs["lam"].append(np.abs(sol.costate - lam).max())
    for key, e in errs.items():
        assert _order(Ns, e) > ORDERS[method] - 0.3, (key, e)


def _swing(method, N, **kw):
    """The 3 s swing-up with a cost on the swing as well: min int T^2 + 0.1 theta'^2 +
    (1 - cos theta) dt (nonlinear in the state)."""
    def swing_cost(t, q, v, u):
        return 0.1 * v[0] ** 2 + 1.0 - np.cos(q[0])

    def grad(t, q, v, u):
        return np.array([np.sin(q[0])]), np.array([0.2 * v[0]]), np.zeros(1)
    system = sp.systems.pendulum(m=1.0, omega=np.sqrt(9.81))
    pb = control.Problem(system, 3.0, N, method=method, inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [np.pi], "qdot": [0.0]},
                         cost=control.effort(2.0) + control.running(swing_cost, grad), rtol=1e-15, **kw)
    return pb.solve(tol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto4"])
def test_nonlinear_running_cost_converges_at_the_scheme_order(method):
    """J of the swing-up with a state cost against lobatto5 on 40 intervals."""
    ref = _swing("lobatto5", 40)
    assert ref.success and ref.kkt_residual < 1e-10
    Ns = (16, 32)
    errs = [abs(_swing(method, N).cost - ref.cost) for N in Ns]
    assert _order(Ns, errs) > ORDERS[method] - 0.5, errs


def _timed(t, q, v, u):
    return np.sin(2 * t) * q[0] * v[1] + 0.3 * q[1] ** 2 * u[0] ** 2


def _timed_grad(t, q, v, u):
    return (np.array([np.sin(2 * t) * v[1], 0.6 * q[1] * u[0] ** 2]),
            np.array([0.0, np.sin(2 * t) * q[0]]), np.array([0.6 * q[1] ** 2 * u[0]]))


@pytest.mark.parametrize("free", [False, True])
def test_running_cost_gradient_and_hessian_equal_differences(free):
    """A damped double pendulum, one input, a running cost in t, q, qdot and u (and a free
    duration, where the nodes and points move with h): the cost's gradient against central
    differences of the cost, and the Lagrangian's Hessian against differences of its exact
    gradient."""
    cost = control.effort(1.5) + 0.7 * control.running(_timed, _timed_grad)
    extra = dict(free_duration=(0.1, 2.0), cost=cost + control.duration()) if free else \
        dict(cost=cost)
    pb = control.Problem(sp.systems.double_pendulum(damping=(0.2, 0.1)), 0.6, 3,
                         method="simpson", inputs=[[0.0], [1.0]],
                         start={"q": [0.3, 0.2], "p": [0.0, 0.1]}, end={"q": [0.5, np.nan]},
                         rtol=1e-15, **extra)
    z, nu = random_point(pb, 11)
    _J, g = check_derivatives(pb, z, nu)   # (the end conditions here are linear)
    assert np.abs(g[:pb.transcription.n_states]).max() > 1e-2            # the states do enter the cost


def test_running_costs_are_refused_where_the_points_are_not_given():
    cost = control.effort() + control.running(_state_cost, _state_cost_grad)
    with pytest.raises(NotImplementedError, match="running cost .* rk4"):
        control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 1.0, 4, method="rk4",
                        inputs=[1.0], start={"q": [0.0], "qdot": [0.0]}, cost=cost)
    with pytest.raises(TypeError, match="running"):
        control.running(lambda t, q, v, u: 0.0, None)
    bad = control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 1.0, 2, inputs=[1.0],
                          start={"q": [0.0], "qdot": [0.0]},
                          cost=control.running(_state_cost, lambda t, q, v, u: (q, v)))
    with pytest.raises(ValueError, match=r"grad\(t, q, qdot, u\) must return \(dl/dq, "
                                         r"dl/dqdot, dl/du\)"):
        bad.objective_grad(np.zeros(bad.n_variables))


# ---------------------------------------------------------------- path constraints
ELL = 1.0 / 9.0          # Bryson-Denham: q <= ELL, ELL <= 1/6


def bryson_denham(t):
    """The Bryson-Denham problem's closed form (Bryson & Ho, Applied Optimal Control, 1975,
    sec. 3.11): q'' = u, (q, qdot): (0, 1) -> (0, -1) in T = 1, min 1/2 int u^2, q <= ELL.
    With ELL <= 1/6 the path touches q = ELL on [3 ELL, 1 - 3 ELL]: q = ELL (1 - (1 -
    t / (3 ELL))^3) before it (and mirrored after), u = -2 / (3 ELL) (1 - t / (3 ELL));
    J* = 4 / (9 ELL)."""
    s = np.minimum(t, 1.0 - t)
    a = np.clip(1.0 - s / (3 * ELL), 0.0, None)
    return ELL * (1.0 - a ** 3), -2.0 / (3 * ELL) * a, 4.0 / (9 * ELL)


def _bryson_denham(method, N, solver="auto"):
    pb = control.Problem(sp.systems.linear([[1.0]], [[0.0]]), 1.0, N, method=method,
                         inputs=[1.0], start={"q": [0.0], "qdot": [1.0]},
                         end={"q": [0.0], "qdot": [-1.0]},
                         path=control.path(lambda t, q, v, u: q[:1],
                                           lambda t, q, v, u: ([[1.0]], [[0.0]], [[0.0]]),
                                           upper=ELL), rtol=1e-15)
    return pb, pb.solve(solver, tol=1e-12)


def test_bryson_denham_closed_form_is_consistent():
    t = np.linspace(0.0, 1.0, 9001)
    q, u, J = bryson_denham(t)
    assert abs(np.gradient(q, t)[0] - 1.0) < 1e-3 and q.max() <= ELL + 1e-15
    w = np.full(t.size, 2.0)
    w[1::2], w[0], w[-1] = 4.0, 1.0, 1.0
    assert abs(0.5 * np.sum(w * u ** 2) * (t[1] - t[0]) / 3 - J) < 1e-6
    qdd = np.gradient(np.gradient(q, t), t)
    inner = (np.abs(t - 3 * ELL) > 0.01) & (np.abs(t - (1 - 3 * ELL)) > 0.01)
    assert np.abs(qdd - u)[inner][5:-5].max() < 1e-3


def _bryson_denham_errors(method, Ns, arc=False):
    """|J - J*| and the largest error of q at the nodes for each N, with the checks every
    solution must pass: converged, the constraint held at every force point, and with
    ``arc`` active at every point on the arc.  (The midpoint rule's optimum
    touches q = ELL at two points and dips between them: with one point a step the discrete
    problem has no arc.)"""
    errs, qerrs = [], []
    for N in Ns:
        pb, sol = _bryson_denham(method, N)
        assert sol.success and sol.kkt_residual < 1e-9, (sol.message, sol.kkt_residual)
        q, _u, J = bryson_denham(sol.t)
        errs.append(abs(sol.cost - J))
        qerrs.append(np.abs(sol.q[:, 0] - q).max())
        z = pb.transcription.pack(sol.q, sol.p, sol.u, sol.duration)
        c = pb.constraints(z)[pb.nlp.n_eq:].reshape(N, pb.P)
        assert c.max() <= ELL + 1e-12
        tu = pb.point_times()
        on_arc = (tu > 3 * ELL + 1e-9) & (tu < 1 - 3 * ELL - 1e-9)
        assert not arc or (on_arc.any() and np.allclose(c[on_arc], ELL, rtol=0, atol=1e-10))
    return errs, qerrs


@pytest.mark.parametrize("method", ["simpson", "lobatto4"])
def test_bryson_denham_is_exact_with_its_junctions_on_nodes(method):
    """The path constraint q <= 1/9 at every force point.  With the junctions of the
    constrained arc (t = 1/3, 2/3) on nodes, the Lobatto schemes reproduce the closed form
    (piecewise cubic) to rounding: J = 4 / (9 ELL) and q at the nodes."""
    errs, qerrs = _bryson_denham_errors(method, (6, 12), arc=True)
    assert max(errs) < 1e-10 and max(qerrs) < 1e-11, (errs, qerrs)


@pytest.mark.parametrize("method, Ns", [("midpoint", (6, 12, 24)), ("gauss2", (6, 12, 24)),
                                        ("simpson", (8, 16, 32)), ("lobatto4", (8, 16, 32))])
def test_bryson_denham_converges_to_the_closed_form(method, Ns):
    """Where the scheme cannot be exact (the midpoint rule and gauss2, whose points are not
    the nodes; the Lobatto schemes with the junctions inside steps, where u has a kink), J
    and q at the nodes converge to the closed form (at order 2 or more: the kink limits the
    order)."""
    errs, qerrs = _bryson_denham_errors(method, Ns)
    assert errs[-1] < 2e-2 and _order(Ns, errs) > 1.5, errs
    assert qerrs[-1] < 2e-3 and _order(Ns, qerrs) > 1.0, qerrs


def test_a_wrong_signed_path_multiplier_is_a_residual():
    """The path rows' part of the first-order residual: q <= 1/9 has no lower bound, so a
    row at its upper bound needs nu >= 0 and a row inside it nu = 0 (the missing lower
    bound, -inf, is not one the row is "at"); at the optimum it is zero."""
    pb, sol = _bryson_denham("lobatto4", 6)
    rows = len(pb.nlp.path_lower)
    at, inside = np.full(rows, ELL), np.full(rows, ELL - 0.5)
    assert pb.nlp.path_residual(at, np.full(rows, -0.25)) == 0.25
    assert pb.nlp.path_residual(at, np.full(rows, 0.25)) == 0.0
    assert pb.nlp.path_residual(inside, np.full(rows, -0.25)) == 0.25
    assert pb.nlp.path_residual(inside, np.full(rows, 0.25)) == 0.25
    assert sol.kkt_residual < 1e-9


def test_bryson_denham_with_slsqp_matches_ipopt():
    pytest.importorskip("ipyopt")
    _, a = _bryson_denham("simpson", 12, "slsqp")
    _, b = _bryson_denham("simpson", 12, "ipopt")
    assert a.success and b.success and a.kkt_residual < 1e-9
    assert abs(a.cost - b.cost) < 1e-10 and np.abs(a.q - b.q).max() < 1e-8


def _limit(t, q, v, u):
    return np.array([np.cos(t) * q[0] + v[1] ** 2 + 0.5 * u[0], q[0] * q[1]])


def _limit_jac(t, q, v, u):
    return (np.array([[np.cos(t), 0.0], [q[1], q[0]]]), np.array([[0.0, 2 * v[1]], [0.0, 0.0]]),
            np.array([[0.5], [0.0]]))


@pytest.mark.parametrize("free", [False, True])
def test_path_constraint_jacobian_and_hessian_equal_differences(free):
    """Path rows in t, q, qdot and u (and with a free duration): the dense and the sparse
    Jacobian against central differences of the constraints, and the Lagrangian's Hessian
    (the path rows' curvature by differences of their exact gradient) against differences
    of its exact gradient with random multipliers on every row."""
    extra = dict(free_duration=(0.1, 2.0), cost=control.duration() + control.effort()) \
        if free else {}
    pb = control.Problem(sp.systems.double_pendulum(damping=(0.2, 0.1)), 0.6, 3,
                         method="lobatto4", inputs=[[0.0], [1.0]],
                         start={"q": [0.3, 0.2], "p": [0.0, 0.1]}, end={"q": [0.5, np.nan]},
                         path=[control.path(_limit, _limit_jac, lower=[-1.0, -np.inf],
                                            upper=[1.0, 0.5])], rtol=1e-15, **extra)
    assert pb.constraint_bounds()[1][-2:].tolist() == [1.0, 0.5]
    z, nu = random_point(pb, 13)
    J, _g = check_derivatives(pb, z, nu)   # (the end conditions here are linear)
    assert J.shape[0] == pb.nlp.n_eq + 3 * 4 * 2


def test_path_constraints_are_checked():
    lin = sp.systems.linear([[1.0]], [[0.0]])
    kw = dict(inputs=[1.0], start={"q": [0.0], "qdot": [0.0]})
    with pytest.raises(TypeError, match="path must be a control.path"):
        control.Problem(lin, 1.0, 4, path=[lambda t, q, v, u: q], **kw)
    with pytest.raises(ValueError, match="need lower <= upper"):
        control.Problem(lin, 1.0, 4, path=control.path(_limit, _limit_jac, 1.0, 0.0, size=1),
                        **kw)
    with pytest.raises(ValueError, match="finite lower or upper"):
        control.Problem(lin, 1.0, 4, path=control.path(_limit, _limit_jac, None, None, size=1),
                        **kw)
    with pytest.raises(NotImplementedError, match="path constraint .* rk4"):
        control.Problem(lin, 1.0, 4, method="rk4", path=control.path(_limit, _limit_jac, size=2),
                        **kw)
    pb = control.Problem(lin, 1.0, 2, path=control.path(lambda t, q, v, u: [q[0], 1.0, 2.0],
                                                        _limit_jac, size=2), **kw)
    with pytest.raises(ValueError, match="must return 2 finite values"):
        pb.constraints(np.zeros(pb.n_variables))


def test_sympy_costs_and_paths_equal_their_callables():
    """running, terminal and path from SymPy expressions (with a parameter): the same
    values and derivatives as hand-written callables at random arguments, and the same
    optimum of the Bryson-Denham problem."""
    sy = pytest.importorskip("sympy")
    t, a = sy.symbols("t a")
    q, v, u, p = sy.symbols("q0:2"), sy.symbols("v0:2"), sy.symbols("u0:1"), sy.symbols("p0:2")
    run = control.running(a * sy.sin(2 * t) * q[0] * v[1] + 0.3 * q[1] ** 2 * u[0] ** 2,
                          symbols={"t": t, "q": q, "qdot": v, "u": u}, params={"a": 1.0})
    term = control.terminal(sy.cos(q[1]) * p[0] ** 2, symbols={"q": q, "p": p})
    pc = control.path([sy.cos(t) * q[0] + v[1] ** 2 + 0.5 * u[0], q[0] * q[1]],
                      symbols={"t": t, "q": q, "qdot": v, "u": u}, upper=[1.0, 0.5])
    rng = np.random.default_rng(3)
    for _ in range(3):
        tt, Q, V, U, Pm = rng.normal(), rng.normal(size=2), rng.normal(size=2), \
            rng.normal(size=1), rng.normal(size=2)
        assert abs(run.l(tt, Q, V, U) - _timed(tt, Q, V, U)) < 1e-14
        for x, y in zip(run.grad(tt, Q, V, U), _timed_grad(tt, Q, V, U)):
            assert np.allclose(x, y, rtol=0, atol=1e-14)
        assert abs(term.phi(Q, Pm) - np.cos(Q[1]) * Pm[0] ** 2) < 1e-14
        assert np.allclose(term.grad(Q, Pm)[0], [0.0, -np.sin(Q[1]) * Pm[0] ** 2], atol=1e-14)
        assert np.allclose(pc.c(tt, Q, V, U), _limit(tt, Q, V, U), rtol=0, atol=1e-14)
        for x, y in zip(pc.jac(tt, Q, V, U), _limit_jac(tt, Q, V, U)):
            assert np.allclose(x, y, rtol=0, atol=1e-14)
    x = sy.Symbol("x")
    below = control.path(x, symbols={"q": [x], "qdot": [sy.Symbol("xd")],
                                     "u": [sy.Symbol("F")]}, upper=ELL)
    pb = control.Problem(sp.systems.linear([[1.0]], [[0.0]]), 1.0, 6, inputs=[1.0],
                         start={"q": [0.0], "qdot": [1.0]}, end={"q": [0.0], "qdot": [-1.0]},
                         path=below, rtol=1e-15)
    assert abs(pb.solve(tol=1e-12).cost - 4.0 / (9 * ELL)) < 1e-10
    with pytest.raises(ValueError, match="symbols without a value: \\['b'\\]"):
        control.running(sy.Symbol("b") * q[0], symbols={"q": q, "qdot": v, "u": u})
    with pytest.raises(ValueError, match="missing \\['u'\\]"):
        control.running(q[0], symbols={"q": q, "qdot": v})
    with pytest.raises(TypeError, match="give symbols=, not a gradient"):
        control.running(q[0], _timed_grad, symbols={"q": q, "qdot": v, "u": u})
