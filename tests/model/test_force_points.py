"""A held force with a value at each of the method's force points
(``force=`` of shape (n_steps, P, n), ``forces.at_points``): the run keeps the
method's order for a smooth input sampled there, and the derivatives of a
step with respect to each point's value (sensitivity.gradient, the C
jacobians) are those of finite differences."""
import numpy as np
import pytest

import symplectic as sp
from support.control_checks import central_columns

scipy_integrate = pytest.importorskip("scipy.integrate")

OMEGA = 2.0 * np.pi          # sp.systems.pendulum(): q'' = -omega^2 sin q + u (m = 1)
T, Q0, P0 = 2.0, 1.0, 0.0


def u(t):
    return 0.7 * np.sin(3.0 * t) + 0.2 * np.cos(5.0 * t)


@pytest.fixture(scope="module")
def reference():
    """The forced pendulum's state at T from SciPy's DOP853 (independent of the core)."""
    sol = scipy_integrate.solve_ivp(lambda t, y: [y[1], -OMEGA ** 2 * np.sin(y[0]) + u(t)],
                                    (0.0, T), [Q0, P0], method="DOP853", rtol=1e-13,
                                    atol=1e-14)
    return sol.y[:, -1]


def _end_error(method, N, U, ref):
    opts = {} if method == "rk4" else {"rtol": 1e-15}
    tr = sp.integrate(sp.systems.pendulum(), [Q0], [P0], T / N, N, method=method, force=U,
                      **opts)
    return abs(tr.q[-1, 0] - ref[0]) + abs(tr.p[-1, 0] - ref[1])


@pytest.mark.parametrize("method, Ns", [
    ("midpoint", (20, 40, 80)), ("simpson", (20, 40, 80)), ("lobatto4", (10, 20, 40)),
    ("lobatto5", (10, 20, 40)), ("gauss2", (20, 40, 80)), ("gauss3", (20, 40, 80)),
    ("rk4", (80, 160, 320))])
def test_samples_at_the_force_points_keep_the_order(method, Ns, reference):
    order = sp.methods(details=True)[method]["order"]
    errs = []
    for N in Ns:
        t = sp.forces.point_times(method, T / N, N)
        errs.append(_end_error(method, N, u(t)[..., None], reference))
    fitted = np.polyfit(np.log(Ns), np.log(errs), 1)[0]
    assert -fitted > order - 0.3, (errs, fitted)


@pytest.mark.parametrize("where, Ns, order", [(0.0, (40, 80, 160), 1),
                                               (0.5, (640, 1280, 2560), 2)])
def test_a_value_held_over_the_step_caps_the_order(where, Ns, order, reference):
    """A zero-order hold sampled at the step's start is first order, at its midpoint second
    order, whatever the method (here Simpson, order 4 with the per-point form)."""
    errs = [_end_error("simpson", N, u((np.arange(N) + where) * T / N)[:, None], reference)
            for N in Ns]
    fitted = -np.polyfit(np.log(Ns), np.log(errs), 1)[0]
    assert order - 0.2 < fitted < order + 0.3, (errs, fitted)


def test_point_times_and_weights():
    for name, d in sp.methods(details=True).items():
        x, b = np.array(d["force_points"]), np.array(d["force_weights"])
        assert len(x) == len(b) >= 1 and abs(b.sum() - 1.0) < 1e-14, name
        assert np.all((x >= 0) & (x <= 1)), name
        t = sp.forces.point_times(name, 0.25, 3, t0=1.0)
        np.testing.assert_allclose(t, 1.0 + (np.arange(3)[:, None] + x) * 0.25, rtol=0,
                                   atol=1e-15)
    # the quadrature integrates the method's degree: Gauss-Legendre with 3 points, x^5 exactly
    d = sp.methods(details=True)["gauss3"]
    x, b = np.array(d["force_points"]), np.array(d["force_weights"])
    assert abs(b @ x ** 5 - 1 / 6) < 1e-15


def _cost():
    return {"terminal": (lambda q, p: float(q @ q + 0.5 * p @ p + q[0] * p[-1]),
                         lambda q, p: (2 * q + np.eye(len(q))[0] * p[-1],
                                       p + np.eye(len(q))[-1] * q[0]))}


@pytest.mark.parametrize("system, method, q0, p0", [
    ("double_pendulum", "simpson", [0.5, -0.3], [0.1, 0.2]),
    ("double_pendulum", "gauss3", [0.5, -0.3], [0.1, 0.2]),
    ("double_pendulum", "lobatto5", [0.5, -0.3], [0.1, 0.2]),
    ("double_pendulum", "rk4", [0.5, -0.3], [0.1, 0.2]),
    ("double_pendulum", "midpoint", [0.5, -0.3], [0.1, 0.2]),
    ("pendulum_cartesian", "simpson", [np.sin(0.4), -np.cos(0.4)], [0.0, 0.0]),
    ("pendulum_cartesian", "lobatto4", [np.sin(0.4), -np.cos(0.4)], [0.0, 0.0]),
])
def test_gradient_per_point_equals_finite_differences(system, method, q0, p0):
    sysm = getattr(sp.systems, system)()
    P = len(sp.methods(details=True)[method]["force_points"])
    N, h = 5, 0.05
    U = np.random.default_rng(7).normal(size=(N, P, sysm.n))
    opts = {} if method == "rk4" else {"rtol": 1e-14}
    value, g = sp.sensitivity.gradient(sysm, q0, p0, h, N, _cost(), method=method, force=U,
                                       **opts)
    assert g["force"].shape == U.shape
    fd, e = np.zeros_like(U), 1e-6
    for idx in np.ndindex(U.shape):
        vals = []
        for sgn in (1, -1):
            Ue = U.copy()
            Ue[idx] += sgn * e
            vals.append(sp.sensitivity.gradient(sysm, q0, p0, h, N, _cost(), method=method,
                                                force=Ue, wrt=("q0",), **opts)[0])
        fd[idx] = (vals[0] - vals[1]) / (2 * e)
    err = np.abs(g["force"] - fd).max() / np.abs(fd).max()
    assert err < 1e-7, err


def test_equal_values_at_every_point_are_the_zero_order_hold():
    sysm, N, h = sp.systems.double_pendulum(), 20, 0.05
    U = np.random.default_rng(3).normal(size=(N, 2))
    for m in ("simpson", "gauss2", "rk4"):
        P = len(sp.methods(details=True)[m]["force_points"])
        a = sp.integrate(sysm, [0.5, 0.1], [0.0, 0.0], h, N, method=m, force=U)
        b = sp.integrate(sysm, [0.5, 0.1], [0.0, 0.0], h, N, method=m,
                         force=np.repeat(U[:, None, :], P, axis=1))
        assert np.array_equal(a.q, b.q) and np.array_equal(a.p, b.p), m


def test_integrator_takes_the_per_point_array_as_integrate_does():
    sysm, N, h = sp.systems.double_pendulum(), 12, 0.05
    U = np.random.default_rng(4).normal(size=(N, 3, 2))
    ref = sp.integrate(sysm, [0.5, 0.1], [0.0, 0.0], h, N, force=U)
    it = sp.Integrator(sysm, h, [0.5, 0.1], [0.0, 0.0], force=U)
    for _ in range(N):
        it.step()
    assert np.array_equal(it.q, ref.q[-1]) and np.array_equal(it.p, ref.p[-1])


def test_bad_per_point_arrays_are_named():
    sysm = sp.systems.double_pendulum()
    with pytest.raises(ValueError, match=r"2 values a step.*simpson evaluates a force at 3 "
                                         r"points.*point_times"):
        sp.integrate(sysm, [0.5, 0.1], [0.0, 0.0], 0.1, 4, force=np.zeros((4, 2, 2)))
    with pytest.raises(ValueError, match=r"\(n_steps, P, n\)"):
        sp.forces.at_points(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="non-finite value at step 1"):
        bad = np.zeros((4, 3, 2))
        bad[1, 2, 0] = np.nan
        sp.integrate(sysm, [0.5, 0.1], [0.0, 0.0], 0.1, 4, force=bad)
    with pytest.raises(ValueError, match="cannot add held forces of shapes"):
        sp.forces.at_points(np.zeros((4, 3, 2))) + sp.forces.zero_order_hold(np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"shape \(n_steps = 4, n = 2\).*got shape \(4, 3, 3\)"):
        sp.integrate(sysm, [0.5, 0.1], [0.0, 0.0], 0.1, 4, force=np.zeros((4, 3, 3)))


def test_an_input_at_one_point_needs_branch_check_off():
    """From rest, an input at Simpson's first point only moves the energy as no smooth force
    does: the default checks refuse the (genuine) root as a wrong branch unless they are
    off, as symplectic.control sets them; the step is then the root of the step equations, whose
    momentum gain is the input's impulse h b_0 u (a linear system: exactly)."""
    osc, h = sp.systems.linear([[1.0]], [[1.0]]), 0.25
    U = np.zeros((1, 3, 1))
    U[0, 0, 0] = 1.0
    with pytest.raises(sp.ConvergenceError, match="wrong branch"):
        sp.integrate(osc, [0.0], [0.0], h, 1, force=U, closed_form=False)
    tr = sp.integrate(osc, [0.0], [0.0], h, 1, force=U, closed_form=False, branch_check="off")
    # p1 = p0 + h sum_i b_i (-q_i + u_i): the impulse h/6 minus the spring's
    q_mid = tr.q_mid[0, 0]                 # Simpson's internal node, (n_steps, n)
    assert abs(tr.p[-1, 0] - (h / 6 - h * (4 * q_mid + tr.q[-1, 0]) / 6)) < 1e-15


@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto4", "lobatto5", "gauss3"])
def test_the_step_derivative_in_h_and_t_equals_differences(method):
    """sym_run.deriv.h_jacobians (what control's free duration differentiates with): d(q1, p1)/dh
    and d(q1, p1)/dt of a damped double pendulum under a time-dependent force plus inputs at
    the force points, against central differences of the step in h and in its start time."""
    from symplectic._model import _runspec
    system = sp.systems.double_pendulum(damping=(0.3, 0.1))
    P = len(sp.methods(details=True)[method]["force_points"])
    U = np.random.default_rng(2).normal(size=(1, P, 2))
    drive = sp.forces.from_callable(lambda t, q, v: np.array([np.sin(3 * t), 0.5 * np.cos(2 * t)]))
    force = drive + sp.forces.at_points(U)
    q, p = np.array([0.4, -0.2]), np.array([0.3, 0.1])

    def step(h, t0, want=False):
        spec = _runspec.run_spec(method, h, 1, t0, options={"rtol": 1e-15})
        hj = np.empty((1, 2, 4)) if want else None
        r = _run(system, q, p, spec, force + system.force, h_jacobians=hj)
        return np.concatenate([r.q[-1], r.p[-1]]), hj

    _, hj = step(0.1, 0.7, True)
    e = 1e-6
    fd_h = (step(0.1 + e, 0.7)[0] - step(0.1 - e, 0.7)[0]) / (2 * e)
    fd_t = (step(0.1, 0.7 + e)[0] - step(0.1, 0.7 - e)[0]) / (2 * e)
    assert np.abs(hj[0, 0] - fd_h).max() < 1e-8 * max(1.0, np.abs(fd_h).max())
    assert np.abs(hj[0, 1] - fd_t).max() < 1e-8 * max(1.0, np.abs(fd_t).max())
    assert np.abs(fd_t).max() > 0.01                 # the force does depend on t


@pytest.mark.parametrize("method", ["simpson", "lobatto4", "gauss2"])
def test_the_constrained_step_derivative_in_h_and_t_equals_differences(method):
    """sym_run.deriv.h_jacobians of the constrained step (sym_gcon_time_tangent): the Cartesian
    pendulum under a time-dependent force plus inputs at the points, d(q1, p1)/dh and /dt
    and the force points' states' (sym_run.deriv.points' last two columns) against central
    differences in h and in the start time."""
    system = sp.systems.pendulum_cartesian()
    P = len(sp.methods(details=True)[method]["force_points"])
    U = np.random.default_rng(4).normal(size=(1, P, 2))
    drive = sp.forces.from_callable(lambda t, q, v: np.array([np.sin(3 * t), 0.5 * np.cos(2 * t)]))
    q, p = np.array([0.6, -0.8]), np.array([0.8, 0.6]) * 0.3

    def at(h, t0):
        return _point_run(system, method, q, p, U, drive + sp.forces.at_points(U), h, t0,
                          free=True)

    def step(h, t0):
        from symplectic._model import _runspec
        spec = _runspec.run_spec(method, h, 1, t0, options={"rtol": 1e-15})
        hj = np.empty((1, 2, 4))
        r = _run(system, q, p, spec, drive + sp.forces.at_points(U), h_jacobians=hj)
        return np.concatenate([r.q[-1], r.p[-1]]), hj[0]

    _, hj = step(0.05, 0.7)
    _, pts = at(0.05, 0.7)
    e = 1e-6
    for col, (dh, dt) in enumerate(((e, 0.0), (0.0, e))):
        fd = (step(0.05 + dh, 0.7 + dt)[0] - step(0.05 - dh, 0.7 - dt)[0]) / (2 * e)
        assert np.abs(hj[col] - fd).max() < 1e-7 * max(1.0, np.abs(fd).max()), col
        assert np.abs(fd).max() > 1e-3
        fdp = (at(0.05 + dh, 0.7 + dt)[1][:, :, 0] - at(0.05 - dh, 0.7 - dt)[1][:, :, 0]) / (2 * e)
        assert np.abs(pts[:, :, -2 + col] - fdp).max() < 1e-7 * max(1.0, np.abs(fdp).max())


def test_the_step_derivative_in_h_is_refused_where_there_is_none():
    from symplectic._model import _runspec
    spec = _runspec.run_spec("rk4", 0.1, 1, 0.0)
    with pytest.raises(ValueError, match=r"invalid run argument \(h_jacobians\)"):
        _run(sp.systems.double_pendulum(), np.array([0.4, 0.1]), np.zeros(2), spec,
             h_jacobians=np.empty((1, 2, 4)))


def _run(system, q, p, spec, force=None, **outputs):
    """One run of the driver from (q, p) by spec with ``force`` (the whole force: the
    system's own included) and the outputs named (symplectic._run._driver.Outputs)."""
    from symplectic._run import _driver, _prepare
    return _driver.run(_prepare.Prepared(system, spec, q, p, force),
                       outputs=_driver.Outputs(**outputs))


def _point_run(system, method, q, p, U, force, h, t0, *, free=False):
    """One step with sym_run.deriv.points (and h_jacobians with ``free``): (end state, points)."""
    from symplectic._model import _runspec
    n, P = system.n, U.shape[1]
    spec = _runspec.run_spec(method, h, 1, t0, options={"rtol": 1e-15})
    cols = (2 + P) * n
    jac = np.empty((1, 2 * n, cols))
    pts = np.empty((1, P, 2 * n, 1 + cols + (2 if free else 0)))
    hj = np.empty((1, 2, 2 * n)) if free else None
    r = _run(system, q, p, spec, force, jacobians=jac, h_jacobians=hj, points=pts)
    return np.concatenate([r.q[-1], r.p[-1]]), pts[0]


@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto4", "lobatto5", "gauss2",
                                    "gauss3"])
def test_the_states_at_the_force_points_and_their_derivatives_equal_differences(method):
    """sym_run.deriv.points (what control's running costs read): the states (q_i, qdot_i) at a
    step's force points and their derivatives in (q, p), in the inputs at each point, in h and
    in the start time, against central differences of the states themselves; a damped double
    pendulum under a time-dependent force plus the inputs.  The values: at a point on a node
    (Lobatto's ends) the node's q, and the midpoint rule's (q0 + q1) / 2 and (q1 - q0) / h."""
    system = sp.systems.double_pendulum(damping=(0.3, 0.1))
    x = np.array(sp.methods(details=True)[method]["force_points"])
    P, n = len(x), 2
    U0 = np.random.default_rng(5).normal(size=(1, P, 2))
    drive = sp.forces.from_callable(lambda t, q, v: np.array([np.sin(3 * t), 0.5 * np.cos(2 * t)]))
    q, p, h, t0 = np.array([0.4, -0.2]), np.array([0.3, 0.1]), 0.1, 0.7

    def at(q, p, U, h, t0, free=False):
        force = drive + sp.forces.at_points(U) + system.force
        return _point_run(system, method, q, p, U, force, h, t0, free=free)

    end, pts = at(q, p, U0, h, t0, True)
    val = pts[:, :, 0]
    if method == "midpoint":
        assert np.allclose(val[0, :n], (q + end[:n]) / 2, rtol=0, atol=1e-14)
        assert np.allclose(val[0, n:], (end[:n] - q) / h, rtol=0, atol=1e-12)
    if x[0] == 0.0 and x[-1] == 1.0:
        assert np.array_equal(val[0, :n], q)
        assert np.allclose(val[-1, :n], end[:n], rtol=0, atol=1e-15)
    e = 1e-6
    v0 = np.concatenate([q, p, U0.ravel()])
    fd = central_columns(lambda v: at(v[:n], v[n:2 * n], v[2 * n:].reshape(1, P, 2), h,
                                      t0)[1][:, :, 0], v0, np.full(len(v0), e))
    assert np.abs(pts[:, :, 1:1 + len(v0)] - fd).max() < 1e-8 * max(1.0, np.abs(fd).max())
    for col, (dh, dt) in ((1 + len(v0), (e, 0.0)), (2 + len(v0), (0.0, e))):
        fd = (at(q, p, U0, h + dh, t0 + dt)[1][:, :, 0]
              - at(q, p, U0, h - dh, t0 - dt)[1][:, :, 0]) / (2 * e)
        assert np.abs(pts[:, :, col] - fd).max() < 1e-8 * max(1.0, np.abs(fd).max()), col
        assert np.abs(fd).max() > 1e-3


@pytest.mark.parametrize("method", ["simpson", "lobatto4", "gauss2"])
def test_the_constrained_step_gives_the_states_at_its_force_points(method):
    """sym_run.deriv.points on a constrained step (the Cartesian pendulum, inputs at each point):
    the states at the force points satisfy the constraint where they are nodes, and their
    derivatives in (q, p) and the inputs equal central differences."""
    system = sp.systems.pendulum_cartesian()
    P = len(sp.methods(details=True)[method]["force_points"])
    U0 = np.random.default_rng(7).normal(size=(1, P, 2))
    q, p, h = np.array([0.6, -0.8]), np.array([0.8, 0.6]) * 0.3, 0.05

    def at(q, p, U):
        return _point_run(system, method, q, p, U, sp.forces.at_points(U), h, 0.2)

    end, pts = at(q, p, U0)
    val = pts[:, :, 0]
    x = np.array(sp.methods(details=True)[method]["force_points"])
    if x[-1] == 1.0:
        assert np.allclose(val[-1, :2], end[:2], rtol=0, atol=1e-15)
    v0 = np.concatenate([q, p, U0.ravel()])
    fd = central_columns(lambda v: at(v[:2], v[2:4], v[4:].reshape(1, P, 2))[1][:, :, 0], v0,
                         np.full(len(v0), 1e-6))
    assert np.abs(pts[:, :, 1:1 + len(v0)] - fd).max() < 1e-7 * max(1.0, np.abs(fd).max())


def test_the_states_at_the_force_points_are_refused_where_there_are_none():
    from symplectic._model import _runspec
    system = sp.systems.double_pendulum()
    q, p = np.array([0.4, 0.1]), np.zeros(2)
    spec = _runspec.run_spec("simpson", 0.1, 1, 0.0)
    with pytest.raises(ValueError, match=r"invalid run argument \(points\)"):   # no jacobians
        _run(system, q, p, spec, points=np.empty((1, 3, 4, 5)))
    with pytest.raises(ValueError, match=r"points must be .* shape \(n_steps, r, 2n, 1 \+ c\) "
                                         r"= \(1, 3, 4, 5\)"):
        _run(system, q, p, spec, jacobians=np.empty((1, 4, 4)), points=np.empty((1, 3, 4, 6)))
    spec = _runspec.run_spec("rk4", 0.1, 1, 0.0)
    with pytest.raises(ValueError, match=r"invalid run argument \(points\)"):
        _run(system, q, p, spec, jacobians=np.empty((1, 4, 4)), points=np.empty((1, 4, 4, 5)))
