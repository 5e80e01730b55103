"""symplectic.control: inputs that act through the configuration, the generalized force
B(q) u (the forces at the force points as unknowns tied to B(q_ki) u_ki on the step's own
states there).

Expected values: the same problem with a constant matrix B (a callable returning it must
give the same optimum), finite differences for the derivatives, and for a nonlinear
problem the finest run (orders) and a fine replay by another scheme."""
import numpy as np
import pytest

import symplectic as sp
from support.control_checks import check_derivatives, random_point
from symplectic import control

pytest.importorskip("scipy.optimize")

ORDERS = {"midpoint": 2, "simpson": 4, "lobatto4": 6}
G = 9.81


def _order(Ns, errs):
    return -np.polyfit(np.log(Ns), np.log(errs), 1)[0]


def test_a_constant_b_as_a_callable_gives_the_matrix_optimum():
    """B(q) = B for all q: the transcription with the forces as unknowns has the same
    optimum as the matrix one (the LQ oscillator, two methods)."""
    osc = sp.systems.linear([[1.0]], [[1.0]])
    kw = dict(start={"q": [0.0], "qdot": [0.0]}, end={"q": [1.0], "qdot": [0.0]}, rtol=1e-15)
    for method in ("simpson", "gauss2"):
        a = control.Problem(osc, 2.0, 6, method=method, inputs=[[2.0]], **kw).solve(tol=1e-12)
        b = control.Problem(osc, 2.0, 6, method=method, inputs=lambda q: np.array([[2.0]]),
                            inputs_jac=lambda q: np.zeros((1, 1, 1)), **kw).solve(tol=1e-12)
        assert a.success and b.success and b.kkt_residual < 1e-11
        assert abs(a.cost - b.cost) < 1e-12 and np.abs(a.u - b.u).max() < 1e-10
        assert np.abs(a.costate - b.costate).max() < 1e-10
        assert np.abs(b.forces - 2.0 * b.u).max() < 1e-12


def _thruster(q):
    """A pendulum (length 1) pushed horizontally at its bob: the torque is cos(theta) u."""
    return np.array([[np.cos(q[0])]])


def _thruster_jac(q):
    return np.array([[[-np.sin(q[0])]]])


def _push(method, N, jac=_thruster_jac):
    pb = control.Problem(sp.systems.pendulum(m=1.0, omega=np.sqrt(G)), 2.0, N, method=method,
                         inputs=_thruster, inputs_jac=jac,
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [1.2], "qdot": [0.0]},
                         rtol=1e-15)
    return pb.solve(tol=1e-12)


@pytest.fixture(scope="module")
def push_reference():
    sol = _push("lobatto5", 32)
    assert sol.success and sol.kkt_residual < 1e-10
    return sol


@pytest.mark.parametrize("method, Ns", [("midpoint", (8, 16)), ("simpson", (12, 24)),
                                        ("lobatto4", (12, 24))])
def test_configuration_dependent_inputs_converge_at_the_scheme_order(method, Ns,
                                                                     push_reference):
    """The pendulum pushed at its bob by a horizontal force u (torque cos(theta) u), from
    rest at 0 to rest at 1.2 rad in 2 s, min 1/2 int u^2: J against lobatto5 on 32
    intervals at the scheme's order (Simpson on 8 intervals is still short of it: 6.4x to
    16, then 16.5x to 32); and the inputs replayed by lobatto5 at a fine step (B(q) u_at(t)
    on the replay's own states) reach the end, the miss falling with N."""
    sols = [_push(method, N) for N in Ns]
    errs = [abs(s.cost - push_reference.cost) for s in sols]
    assert _order(Ns, errs) > ORDERS[method] - 0.5, errs
    for s in sols:
        assert s.success and s.kkt_residual < 1e-10 and s.own_scheme_miss() < 1e-10
    misses = [s.miss(s.replay(method="lobatto5", n_steps=400)) for s in sols]
    assert misses[1] < misses[0] / 2 ** (ORDERS[method] - 1), misses
    assert misses[1] < {"midpoint": 0.2, "simpson": 1e-3, "lobatto4": 1e-5}[method], misses
    assert push_reference.miss(push_reference.replay(method="lobatto5", n_steps=400)) < 1e-7


def test_without_the_jacobian_differences_of_b_give_the_same_optimum(push_reference):
    a = _push("simpson", 8)
    b = _push("simpson", 8, jac=None)
    assert b.success and b.kkt_residual < 1e-8
    assert abs(a.cost - b.cost) < 1e-9


def _b2(q):
    return np.array([[np.cos(q[1]), 0.3], [np.sin(q[0]) * q[1], 1.0]])


def _b2_jac(q):
    d = np.zeros((2, 2, 2))
    d[0, 0, 1] = -np.sin(q[1])
    d[1, 0, 0] = np.cos(q[0]) * q[1]
    d[1, 0, 1] = np.sin(q[0])
    return d


@pytest.mark.parametrize("free", [False, True])
def test_state_input_jacobian_and_hessian_equal_differences(free):
    """A damped double pendulum with two inputs through B(q), a running cost and a path
    constraint (and a free duration): the Jacobian (dense and sparse) against central
    differences of the constraints, the cost's gradient against differences of the cost, and
    the Lagrangian's Hessian against differences of its exact gradient."""
    cost = control.effort(np.diag([1.0, 2.0])) + control.running(
        lambda t, q, v, u: q[0] * v[1] * u[1], lambda t, q, v, u: ([v[1] * u[1], 0.0],
                                                                   [0.0, q[0] * u[1]],
                                                                   [0.0, q[0] * v[1]]))
    extra = dict(free_duration=(0.1, 2.0), cost=cost + control.duration()) if free else \
        dict(cost=cost)
    pb = control.Problem(sp.systems.double_pendulum(damping=(0.2, 0.1)), 0.6, 3,
                         method="simpson", inputs=_b2, inputs_jac=_b2_jac,
                         start={"q": [0.3, 0.2], "p": [0.0, 0.1]}, end={"q": [0.5, np.nan]},
                         path=control.path(lambda t, q, v, u: [q[1] * u[0]],
                                           lambda t, q, v, u: ([[0.0, u[0]]], [[0.0, 0.0]],
                                                               [[q[1], 0.0]]), upper=2.0),
                         rtol=1e-15, **extra)
    z, nu = random_point(pb, 17)
    J, _g = check_derivatives(pb, z, nu)   # (the end conditions here are linear)
    assert J.shape[0] == pb.nlp.n_eq + 3 * 3
    # the Hessian's perturbed steps taken in batches of one interval each: the same values
    whole = pb.hess_values(z, 0.7, nu)
    pb._HESSIAN_BATCH_BYTES = 1.0
    np.testing.assert_array_equal(pb.hess_values(z, 0.7, nu), whole)


def test_state_inputs_are_checked():
    lin = sp.systems.linear([[1.0]], [[1.0]])
    kw = dict(start={"q": [0.0], "qdot": [0.0]})
    with pytest.raises(ValueError, match=r"B\(q\) must return an \(n, m\) = \(1, m\)"):
        control.Problem(lin, 1.0, 4, inputs=lambda q: np.ones((2, 1)), **kw)
    with pytest.raises(ValueError, match="inputs_jac goes with a callable"):
        control.Problem(lin, 1.0, 4, inputs=[1.0], inputs_jac=lambda q: 0, **kw)
    with pytest.raises(NotImplementedError, match=r"inputs B\(q\) .* rk4"):
        control.Problem(lin, 1.0, 4, method="rk4", inputs=lambda q: np.ones((1, 1)), **kw)
    pb = control.Problem(lin, 1.0, 2, inputs=lambda q: np.ones((1, 1)),
                         inputs_jac=lambda q: np.ones(3), **kw)
    with pytest.raises(ValueError, match=r"dB/dq\(q\) must return an \(n, m, n\)"):
        pb.constraints_jac(np.zeros(pb.n_variables))


def test_sympy_inputs_drive_the_problem_by_default():
    """from_sympy(..., applied=[PointForce(bob, (u, 0))], inputs=[u]): the system's own
    B(q) = dF/du (here L cos(theta)) is what Problem takes without inputs=, and gives the
    optimum of the callable B(q) of the same pendulum; its parameters follow with_params,
    and a pickled copy keeps it."""
    sy = pytest.importorskip("sympy")
    import pickle
    th, w, u, L = sy.symbols("theta omega u L")
    lag = L ** 2 * w ** 2 / 2 + G * L * sy.cos(th)
    bob = sp.symbolic.PointForce([L * sy.sin(th), -L * sy.cos(th)], [u, 0])
    system = sp.System.from_sympy(lag, [th], [w], params={"L": 1.0}, applied=[bob], inputs=[u])
    assert system.inputs == [u] and system.force is None
    assert np.allclose(system.input_matrix([0.4]), [[np.cos(0.4)]], rtol=0, atol=1e-15)
    assert np.allclose(system.input_matrix_jac([0.4]), [[[-np.sin(0.4)]]], rtol=0, atol=1e-15)
    assert np.allclose(system.with_params(L=2.0).input_matrix([0.4]), [[2 * np.cos(0.4)]])
    assert np.allclose(pickle.loads(pickle.dumps(system)).input_matrix([0.4]), [[np.cos(0.4)]])
    pb = control.Problem(system, 2.0, 12, start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [1.2], "qdot": [0.0]}, rtol=1e-15)
    sol = pb.solve(tol=1e-12)
    assert sol.success and sol.kkt_residual < 1e-10
    assert abs(sol.cost - _push("simpson", 12).cost) < 1e-10


def test_sympy_inputs_are_checked():
    sy = pytest.importorskip("sympy")
    th, w, u = sy.symbols("theta omega u")
    lag = w ** 2 / 2 + sy.cos(th)
    with pytest.raises(ValueError, match="linearly"):
        sp.System.from_sympy(lag, [th], [w], forces=[u ** 2], inputs=[u])
    with pytest.raises(ValueError, match="may depend on q only"):
        sp.System.from_sympy(lag, [th], [w], forces=[w * u], inputs=[u])
    with pytest.raises(ValueError, match="give the forces they drive"):
        sp.System.from_sympy(lag, [th], [w], inputs=[u])
    with pytest.raises(ValueError, match="distinct SymPy Symbols"):
        sp.System.from_sympy(lag, [th], [w], forces=[u], inputs=[u, u])


def _tangential(q):
    """A force of magnitude u along the Cartesian pendulum's tangent (-y, x): on the unit
    circle, the torque u of the angle pendulum."""
    return np.array([[-q[1]], [q[0]]])


def _tangential_jac(q):
    d = np.zeros((2, 1, 2))
    d[0, 0, 1] = -1.0
    d[1, 0, 0] = 1.0
    return d


def _cartesian(N, **kw):
    pytest.importorskip("ipyopt")
    pb = control.Problem(sp.systems.pendulum_cartesian(m=1.0, l=1.0, g=G), 3.0, N,
                         method="simpson", inputs=_tangential, inputs_jac=_tangential_jac,
                         start={"q": [0.0, -1.0], "qdot": [0.0, 0.0]},
                         end={"q": [np.nan, 1.0], "qdot": [0.0, np.nan]},
                         cost=control.effort(2.0), rtol=1e-14, **kw)
    phi = np.pi * np.linspace(0.0, 1.0, N + 1)
    guess = {"q": np.column_stack([np.sin(phi), -np.cos(phi)]),
             "p": np.column_stack([np.cos(phi), np.sin(phi)]) * np.pi / 3}
    return pb, pb.solve("ipopt", guess=guess)


def test_constrained_pendulum_with_a_tangential_input_matches_the_angle_pendulum():
    """The Cartesian pendulum (x^2 + y^2 = 1 by a multiplier) swung up in 3 s by a force
    B(q) u along its tangent is the angle pendulum swung up by the torque u: its J converges
    to that problem's optimum (36.640289055, ours with lobatto4 on 100 intervals in the
    benchmark record, section 24) at Simpson's order, on a different discretization; the
    nodes stay on the circle."""
    J_angle = _swing_angle_reference()
    errs = []
    for N in (12, 24):
        _pb, sol = _cartesian(N)
        # (the constrained polish stops near 1e-6 here, as in test_control.py's swing-up)
        assert sol.success and sol.kkt_residual < 1e-6, (sol.message, sol.kkt_residual)
        assert np.abs((sol.q ** 2).sum(axis=1) - 1).max() < 1e-12
        errs.append(abs(sol.cost - J_angle))
    assert _order((12, 24), errs) > 3.5 and errs[-1] < 2e-2, errs     # 0.146, 8.6e-3


def _swing_angle_reference():
    """The angle pendulum's 3 s swing-up (torque u, min int u^2) by lobatto5 on 40 intervals:
    converged to 1e-9 (the tests of test_control.py fit its orders against it)."""
    pb = control.Problem(sp.systems.pendulum(m=1.0, omega=np.sqrt(G)), 3.0, 40,
                         method="lobatto5", inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [np.pi], "qdot": [0.0]}, cost=control.effort(2.0),
                         rtol=1e-15)
    return pb.solve(tol=1e-12).cost


def test_constrained_state_inputs_running_cost_and_path_derivatives_equal_differences():
    """With holonomic constraints too (the constrained step's states at its force points):
    the Jacobian, the cost's gradient and the Hessian against differences."""
    pb = control.Problem(sp.systems.pendulum_cartesian(m=1.0, l=1.0, g=G), 0.4, 2,
                         method="lobatto4", inputs=_tangential, inputs_jac=_tangential_jac,
                         start={"q": [0.6, -0.8], "p": [0.8 * 0.3, 0.6 * 0.3]},
                         end={"q": [np.nan, -0.5]},
                         cost=control.effort() + control.running(
                             lambda t, q, v, u: q[0] * v[1] ** 2,
                             lambda t, q, v, u: ([v[1] ** 2, 0.0], [0.0, 2 * q[0] * v[1]],
                                                 [0.0])),
                         path=control.path(lambda t, q, v, u: [v[0] * u[0]],
                                           lambda t, q, v, u: ([[0.0, 0.0]], [[u[0], 0.0]],
                                                               [[v[0]]]), upper=3.0),
                         rtol=1e-15)
    rng = np.random.default_rng(21)
    phi = rng.uniform(-1.0, 1.0, size=3)
    z = pb.transcription.pack(np.column_stack([np.sin(phi), -np.cos(phi)]),
                 0.3 * np.column_stack([np.cos(phi), np.sin(phi)]),
                 rng.normal(scale=0.3, size=(2, pb.P, 1)), 0.4)
    nu = rng.normal(size=len(pb.constraints(z)))
    check_derivatives(pb, z, nu, jac=1e-6, grad=1e-7)


TH1 = 1.2


def _time_and_effort(system, N, method, **kw):
    """min 10 T + 1/2 int u^2 dt, rest at theta = 0 to rest at TH1, T free."""
    pb = control.Problem(system, 2.0, N, method=method, cost=10 * control.duration()
                         + control.effort(), free_duration=(0.2, 10.0), rtol=1e-14, **kw)
    return pb


def test_constrained_free_duration_converges_to_the_angle_pendulums_optimum():
    """A free duration with holonomic constraints (the constrained step's derivative in h,
    sym_gcon_time_tangent): the Cartesian pendulum driven along its tangent, min 10 T +
    1/2 int u^2 from rest hanging to rest at 1.2 rad, converges at Simpson's order to the
    angle pendulum's optimum (lobatto5, 40 intervals), T = 0.89175."""
    pytest.importorskip("ipyopt")
    ref = _time_and_effort(sp.systems.pendulum(m=1.0, omega=np.sqrt(G)), 40, "lobatto5",
                           inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                           end={"q": [TH1], "qdot": [0.0]}).solve(tol=1e-12)
    assert ref.success and ref.kkt_residual < 1e-9 and abs(ref.duration - 0.89175) < 1e-5
    errs = []
    for N in (8, 16):
        pb = _time_and_effort(sp.systems.pendulum_cartesian(m=1.0, l=1.0, g=G), N, "simpson",
                              inputs=_tangential, inputs_jac=_tangential_jac,
                              start={"q": [0.0, -1.0], "qdot": [0.0, 0.0]},
                              end={"q": [np.sin(TH1), np.nan], "qdot": [0.0, np.nan]})
        phi = TH1 * np.linspace(0.0, 1.0, N + 1)
        sol = pb.solve("ipopt", guess={"q": np.column_stack([np.sin(phi), -np.cos(phi)]),
                                       "p": np.zeros((N + 1, 2))})
        assert sol.success and sol.kkt_residual < 1e-9, (sol.message, sol.kkt_residual)
        # the nodes are the NLP's: on the circle to its residual
        assert np.abs((sol.q ** 2).sum(axis=1) - 1).max() < 1e-10
        assert sol.own_scheme_miss() < 1e-9
        errs.append(abs(sol.cost - ref.cost))
    assert _order((8, 16), errs) > 3.5, errs
