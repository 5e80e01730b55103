"""symplectic.control: optimal control transcribed with the schemes themselves.

Expected values: the LQ oscillator's closed form (q'' = -q + u, (0, 0) -> (1, 0)
in T = 2, min 1/2 int u^2: u* = a cos t + b sin t, a and b below, J* below;
q* = (a t sin t + b (sin t - t cos t)) / 2 solves q'' = -q + u* from rest; the
costate of H = u^2/2 + l_q p + l_p (-q + u) is l_p = -u*, l_q = -l_p' = u*'),
finite differences for the derivatives, and for the nonlinear swing-up the
finest run (the orders, not the value, are what is checked there)."""
import numpy as np
import pytest

import symplectic as sp
from support.control_checks import check_derivatives, random_point
from symplectic import control

pytest.importorskip("scipy.optimize")

A, B, J_STAR = 1.146229266058858, -0.04853415038874672, 0.5110329945154145
ORDERS = {"midpoint": 2, "simpson": 4, "lobatto4": 6, "lobatto5": 8, "gauss2": 4, "gauss3": 6}


def u_star(t):
    return A * np.cos(t) + B * np.sin(t)


def q_star(t):
    return (A * t * np.sin(t) + B * (np.sin(t) - t * np.cos(t))) / 2


def test_the_closed_form_is_one():
    """a, b of the issue steer q* to (1, 0) at T = 2 with cost J*."""
    t = np.linspace(0, 2, 20001)
    qdot = (A * (np.sin(t) + t * np.cos(t)) + B * t * np.sin(t)) / 2
    assert abs(q_star(2.0) - 1) < 1e-13 and abs(qdot[-1]) < 1e-13
    w = np.full(t.size, 2.0)
    w[1::2], w[0], w[-1] = 4.0, 1.0, 1.0                    # Simpson's rule
    assert abs(0.5 * np.sum(w * u_star(t) ** 2) * (t[1] - t[0]) / 3 - J_STAR) < 1e-12


def _lq(method, N, solver="auto"):
    pb = control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 2.0, N, method=method, inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [1.0], "qdot": [0.0]},
                         rtol=1e-15)
    return pb.solve(solver, tol=1e-12)


def _order(Ns, errs):
    return -np.polyfit(np.log(Ns), np.log(errs), 1)[0]


@pytest.mark.parametrize("method, Ns", [
    ("midpoint", (4, 8, 16)), ("simpson", (4, 8, 16)), ("lobatto4", (4, 8, 16)),
    ("lobatto5", (3, 4, 6, 8)), ("gauss2", (4, 8, 16)), ("gauss3", (4, 8, 16))])
def test_lq_oscillator_converges_at_the_scheme_order(method, Ns):
    errs = {"J": [], "q": [], "u": [], "l_p": [], "l_q": []}
    for N in Ns:
        sol = _lq(method, N)
        assert sol.success and sol.kkt_residual < 1e-12, (sol.message, sol.kkt_residual)
        t = sol.t
        errs["J"].append(abs(sol.cost - J_STAR))
        errs["q"].append(np.abs(sol.q[:, 0] - q_star(t)).max())
        # the input at the nodes: u = -R^-1 B^T lambda_p (Pontryagin), from the costates
        errs["u"].append(np.abs(-sol.costate[:, 1] - u_star(t)).max())
        errs["l_p"].append(np.abs(sol.costate[:, 1] + u_star(t)).max())
        errs["l_q"].append(np.abs(sol.costate[:, 0] - (-A * np.sin(t) + B * np.cos(t))).max())
        # the solution is a trajectory of the integrator: replayed, the same states
        tr = sol.replay()
        assert np.abs(tr.q - sol.q).max() < 1e-12 and sol.miss(tr) < 1e-12
    p = ORDERS[method]
    for what, e in errs.items():
        assert _order(Ns, e) > p - 0.3, (what, e, _order(Ns, e))


def test_lq_inputs_at_lobatto_nodes_match_the_closed_form():
    """Where a force point is a node (Lobatto's x = 0, 1) the input itself converges at
    the scheme's order too."""
    Ns, errs = (4, 8, 16), []
    for N in Ns:
        sol = _lq("lobatto4", N)
        at_nodes = sol.u[:, [0, -1], 0]
        errs.append(np.abs(at_nodes - u_star(sol.t_u[:, [0, -1]])).max())
    assert _order(Ns, errs) > 5.7, errs


def _swing(method, N, solver="auto", **kw):
    system = sp.systems.pendulum(m=1.0, omega=np.sqrt(9.81))
    pb = control.Problem(system, 3.0, N, method=method, inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [np.pi], "qdot": [0.0]},
                         cost=control.effort(2.0), rtol=1e-15, **kw)
    return pb.solve(solver, tol=1e-12)


@pytest.fixture(scope="module")
def swing_reference():
    sol = _swing("lobatto5", 40)
    assert sol.success and sol.kkt_residual < 1e-10
    return sol


@pytest.mark.slow
@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto4"])
def test_swing_up_cost_converges_at_the_scheme_order(method, swing_reference):
    """The pendulum swing-up (I theta'' + m g d sin theta = T, 0 -> pi at rest in 3 s, min
    int T^2, no bound active): J against the finest run."""
    Ns = (16, 32)
    errs = [abs(_swing(method, N).cost - swing_reference.cost) for N in Ns]
    assert _order(Ns, errs) > ORDERS[method] - 0.5, errs


@pytest.mark.slow
@pytest.mark.parametrize("method", ["simpson", "lobatto4"])
def test_swing_up_replayed_finely_reaches_the_target(method, swing_reference):
    """Replayed with its own step the solution is the integrator's trajectory; replayed by
    lobatto5 at h = T/600 with u_at between the points, its miss of the target falls at
    the scheme's order (a check of the transcription against the continuous dynamics)."""
    misses = []
    for N in (16, 32):
        sol = _swing(method, N)
        assert sol.own_scheme_miss() < 1e-10                   # its own step: to Newton's tolerance
        misses.append(sol.miss(sol.replay(method="lobatto5", h=3.0 / 600)))
    assert _order((16, 32), misses) > ORDERS[method] - 0.5, misses
    assert swing_reference.miss(swing_reference.replay(method="lobatto5", h=3.0 / 600)) < 1e-7


def test_the_default_miss_is_the_open_loop_one_and_falls_at_the_order():
    """sol.miss() replays the returned inputs independently (lobatto5, 16 steps an interval):
    on the swing-up with Simpson it is within 3x of a replay by lobatto5 at h = T/4000, far
    above the transcription's own-step miss (Newton's tolerance), and falls at order 4."""
    misses = []
    for N in (12, 24):
        sol = _swing("simpson", N)
        fine = sol.miss(sol.replay(method="lobatto5", n_steps=4000))
        assert fine / 3 <= sol.miss() <= 3 * fine
        assert sol.own_scheme_miss() < 1e-10 < 1e-4 * sol.miss()
        misses.append(sol.miss())
    assert _order((12, 24), misses) > 3.5, misses


@pytest.mark.parametrize("free", [False, True])
def test_constraint_jacobian_equals_finite_differences(free):
    """A damped double pendulum with one input at the elbow, a qdot condition at a free
    q (and a free duration): the dense and the sparse Jacobian of every constraint and
    the cost's gradient at a random point."""
    extra = dict(free_duration=(0.1, 2.0), cost=control.duration() + 0.3 * control.effort(1.5)) \
        if free else dict(cost=control.effort(1.5))
    pb = control.Problem(sp.systems.double_pendulum(damping=(0.2, 0.1)), 0.6, 3,
                         method="lobatto4", inputs=[[0.0], [1.0]],
                         start={"q": [0.3, np.nan], "qdot": [0.0, 0.1]},
                         end={"qdot": [np.nan, 0.2], "p": [0.5, np.nan]}, rtol=1e-15, **extra)
    z = np.random.default_rng(5).normal(scale=0.3, size=pb.n_variables)
    if free:
        z[-1] = 0.6                          # the duration T (h = 0.2)
    J = pb.constraints_jac(z)
    fd = np.empty_like(J)
    e = 1e-6
    for j in range(pb.n_variables):
        zp, zm = z.copy(), z.copy()
        zp[j] += e
        zm[j] -= e
        fd[:, j] = (pb.constraints(zp) - pb.constraints(zm)) / (2 * e)
    assert np.abs(J - fd).max() < 1e-7 * max(1.0, np.abs(fd).max())
    rows, cols = pb.jac_structure()
    sparse = np.zeros_like(J)
    np.add.at(sparse, (rows, cols), pb.jac_values(z))
    assert np.array_equal(sparse, J)                  # the same numbers, every nonzero listed
    g = pb.objective_grad(z)
    gfd = np.array([(pb.objective(z + e * d) - pb.objective(z - e * d)) / (2 * e)
                    for d in np.eye(pb.n_variables)])
    assert np.abs(g - gfd).max() < 1e-8


def test_lagrangian_hessian_equals_differences_of_the_gradient():
    """The sparse Hessian (lower triangle) against central differences of the exact
    gradient of the Lagrangian, free duration included."""
    pb = control.Problem(sp.systems.double_pendulum(), 0.6, 3, method="simpson",
                         inputs=[[1.0], [0.5]], start={"q": [0.3, 0.1], "p": [0.0, 0.1]},
                         end={"q": [0.5, np.nan]}, free_duration=(0.1, 2.0),
                         cost=control.duration() + control.effort(2.0) + 0.5 * control.terminal(
                             lambda q, p: float(np.cos(q[1]) * p[0] ** 2),
                             lambda q, p: (np.array([0.0, -np.sin(q[1]) * p[0] ** 2]),
                                           np.array([2 * np.cos(q[1]) * p[0], 0.0]))),
                         rtol=1e-15)
    z, nu = random_point(pb, 9)
    check_derivatives(pb, z, nu)     # (the end conditions here are linear)


@pytest.mark.parametrize("method, order", [("midpoint", 2), ("simpson", 4), ("lobatto4", 6)])
def test_terminal_cost_converges_at_the_scheme_order(method, order):
    """The oscillator with a soft end: min 1/2 int u^2 + w/2 (q(T) - 1)^2, free end state.
    Pontryagin: u = kappa sin(T - t), kappa = w / (1 + w S), S = T/2 - sin(2T)/4,
    q(T) = w S / (1 + w S), J* = w / (2 (1 + w S))."""
    w, T = 10.0, 2.0
    S = T / 2 - np.sin(2 * T) / 4
    J_soft, qT = w / (2 * (1 + w * S)), w * S / (1 + w * S)
    errs, qerrs = [], []
    for N in (4, 8, 16):
        pb = control.Problem(sp.systems.linear([[1.0]], [[1.0]]), T, N, method=method,
                             inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                             cost=control.effort() + w * control.terminal(
                                 lambda q, p: 0.5 * (q[0] - 1) ** 2,
                                 lambda q, p: (np.array([q[0] - 1]), np.zeros(1))), rtol=1e-15)
        sol = pb.solve(tol=1e-12)
        assert sol.success and sol.kkt_residual < 1e-12
        errs.append(abs(sol.cost - J_soft))
        qerrs.append(abs(sol.q[-1, 0] - qT))
    assert _order((4, 8, 16), errs) > order - 0.2, errs
    assert _order((4, 8, 16), qerrs) > order - 0.3, qerrs


@pytest.mark.parametrize("method", ["simpson", "lobatto4", "midpoint"])
def test_minimum_time_of_the_double_integrator(method):
    """q'' = u, |u| <= 1, rest at 0 to rest at 1: bang-bang, T* = 2 (full thrust, then
    full brake); with an even N the switch is a node and the transcription is exact.
    (gauss2, whose points straddle no node, stops 1e-8 short of T = 2 with IPOPT: the
    switch is degenerate there, the discrete switching function crossing zero between
    two points.)"""
    pb = control.Problem(sp.systems.linear([[1.0]], [[0.0]]), 1.5, 8, method=method,
                         inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [1.0], "qdot": [0.0]}, cost=control.duration(),
                         input_bounds=(-1.0, 1.0), free_duration=(0.1, 10.0))
    sol = pb.solve()
    assert sol.success and abs(sol.duration - 2.0) < 1e-10 and sol.kkt_residual < 1e-10
    # inside the steps full thrust, then full brake (at a node the two steps' end and
    # start values act together: only their sum is fixed)
    inner = [i for i, x in enumerate(sp.methods(details=True)[method]["force_points"])
             if 0 < x < 1]
    assert np.allclose(sol.u[:4, inner, 0], 1.0) and np.allclose(sol.u[4:, inner, 0], -1.0)
    assert sol.own_scheme_miss() < 1e-10


@pytest.mark.parametrize("method", ["simpson", "midpoint"])
def test_the_polish_settles_a_bang_bang_optimum_from_an_interior_point(method):
    """trust-constr (an interior point method) ends with the inputs 1e-6 inside their bounds
    and the end 1e-5 off; every input at a bound, the first-order conditions are degenerate
    (more equations than free unknowns).  The polish holds the inputs at their bounds, keeps
    the bounds' multipliers' signs (its step is in the multipliers) and reaches T = 2."""
    pb = control.Problem(sp.systems.linear([[1.0]], [[0.0]]), 1.5, 8, method=method,
                         inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [1.0], "qdot": [0.0]}, cost=control.duration(),
                         input_bounds=(-1.0, 1.0), free_duration=(0.1, 10.0))
    raw = pb.solve("trust-constr", polish=False)
    assert raw.kkt_residual > 1e-8                 # what the polish starts from
    sol = pb.solve("trust-constr")
    assert sol.success and abs(sol.duration - 2.0) < 1e-10 and sol.kkt_residual < 1e-10


def _cart_pole():
    """A cart-pole: cart 1 kg, a 0.3 kg point mass on a 0.5 m massless rod, g = 9.81; theta
    from the downward vertical."""
    sy = pytest.importorskip("sympy")
    from symplectic import symbolic
    x, th, xd, thd = sy.symbols("x theta xd thd")
    cart, bob = (1.0, [x, 0]), (0.3, [x + 0.5 * sy.sin(th), -0.5 * sy.cos(th)])
    T = symbolic.kinetic_from_positions([x, th], [xd, thd], [cart, bob])
    V = symbolic.gravity_potential([cart, bob], 9.81)
    return sp.System.from_sympy(T - V, [x, th], [xd, thd])


@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
def test_minimum_time_cart_pole_meets_its_first_order_conditions(method):
    """The cart-pole swung up to x = 1 m in least time plus a little effort (T + 2e-3 int u^2,
    |u| <= 20, T free in [0.5, 5]): with the defaults the first-order residual is <= 1e-8
    (the interior point solvers leave 1e-5 - 7e-5; the polish takes it to rounding) and both
    methods find the same optimum (T = 1.2290 s) to the transcription's accuracy."""
    pb = control.Problem(_cart_pole(), 2.0, 40, method=method, inputs=[1.0, 0.0],
                         start={"q": [0, 0], "qdot": [0, 0]}, end={"q": [1, np.pi], "qdot": [0, 0]},
                         input_bounds=(-20, 20), cost=control.duration() + control.effort(2e-3),
                         free_duration=(0.5, 5.0))
    sol = pb.solve()
    assert sol.success and sol.kkt_residual <= 1e-8, (sol.message, sol.kkt_residual)
    assert abs(sol.duration - 1.2290) < 1e-3 and sol.own_scheme_miss() < 1e-9
    if sol.solver == "ipopt":
        # within 1.3x of the fewest IPOPT iterations of CasADi's collocations of this problem
        # on 40 intervals (Radau 3: 56; benchmarks/results/control_casadi.md); on T in
        # seconds, before IPOPT iterated on log T, lobatto5 took 94
        assert sol.iterations <= 1.3 * 56, sol.iterations


def test_ipopt_log_duration_derivatives_equal_differences():
    """IPOPT's unknowns with a free duration have tau = log T in T's place
    (control._ipopt._LogDuration): the gradient, the constraints' Jacobian and the
    Lagrangian's Hessian it hands IPOPT equal central differences in tau."""
    pytest.importorskip("scipy")
    from symplectic.control import _ipopt
    pb = control.Problem(sp.systems.pendulum(m=1.0, omega=3.0), 1.5, 6, method="simpson",
                         inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [1.0], "qdot": [0.0]},
                         cost=control.duration() + control.effort(0.3),
                         free_duration=(0.1, 10.0))
    nlp = pb.nlp
    rng = np.random.default_rng(4)
    z = np.clip(pb.guess(None) + rng.normal(scale=0.1, size=nlp.n_variables), nlp.lower,
                nlp.upper)
    z[-1] = 1.3
    nu = rng.normal(size=nlp.n_constraints)
    sigma = 0.7
    jr, jc = nlp.jac_structure()
    hr, hc = nlp.hess_structure()
    var = _ipopt._LogDuration(nlp, jc, (hr, hc))
    x = var.x(z)
    assert abs(x[-1] - np.log(1.3)) < 1e-15

    def jac(x):
        J = np.zeros((nlp.n_constraints, nlp.n_variables))
        np.add.at(J, (jr, jc), var.jac(x, nlp.jac_values(var.z(x))))
        return J

    def grad_L(x):
        return sigma * var.grad(x, nlp.objective_grad(var.z(x))) + jac(x).T @ nu

    e = 1e-6
    fd_g = np.array([(nlp.objective(var.z(x + e * u)) - nlp.objective(var.z(x - e * u))) / (2 * e)
                     for u in np.eye(len(x))])
    assert np.allclose(var.grad(x, nlp.objective_grad(z)), fd_g, rtol=1e-7, atol=1e-8)
    fd_J = np.array([(nlp.constraints(var.z(x + e * u)) - nlp.constraints(var.z(x - e * u)))
                     / (2 * e) for u in np.eye(len(x))]).T
    assert np.allclose(jac(x), fd_J, rtol=1e-6, atol=1e-7)
    H = np.zeros((len(x), len(x)))
    np.add.at(H, (hr, hc), var.hess(z, nlp.hess_values(z, sigma, nu), sigma, nu))
    H = H + np.tril(H, -1).T
    fd_H = np.array([(grad_L(x + e * u) - grad_L(x - e * u)) / (2 * e) for u in np.eye(len(x))])
    assert np.allclose(H, fd_H, rtol=1e-6, atol=1e-6), np.abs(H - fd_H).max()
    assert abs(H[-1, -1]) > 1e-3            # the entry the change of variables rewrites


@pytest.mark.slow
def test_minimum_time_crane_converges_beside_optys_value():
    """The cart-pole crane (cart 1 kg, a 10 kg load on a 5 m rod, |F| <= 20, x: 0 -> 15 m
    rest to rest, 0 <= x <= 15), minimum time.  opty's 150-node backward-Euler optimum
    is 5.894364 s (149 intervals, zero end acceleration too; backward Euler on 150 intervals
    without it gives 5.8535, 1.06 % above: benchmarks section 24); ours converge (Simpson on
    40 and 80 intervals, lobatto4 on 40) to 5.7919 s.  IPOPT: trust-constr's 500 iterations
    end short (T 1.5e-3 above, residual 4e-3); SLSQP converges in 431 (167 s)."""
    pytest.importorskip("ipyopt")
    sy = pytest.importorskip("sympy")
    x, th, xd, thd = sy.symbols("x theta xd thd")
    L = (sy.Rational(11, 2) * xd ** 2 + 50 * xd * thd * sy.cos(th) + 125 * thd ** 2
         + 50 * sy.Rational(981, 100) * sy.cos(th))
    crane = sp.System.from_sympy(L, [x, th], [xd, thd])

    def solve(method, N, guess=None):
        pb = control.Problem(crane, 6.0, N, method=method, inputs=[1.0, 0.0],
                             start={"q": [0, 0], "qdot": [0, 0]},
                             end={"q": [15, 0], "qdot": [0, 0]}, cost=control.duration(),
                             input_bounds=(-20, 20), state_bounds=([0, -np.inf], [15, np.inf]),
                             free_duration=(1.0, 20.0))
        sol = pb.solve(guess=guess)
        assert sol.success and sol.kkt_residual < 1e-10 and sol.own_scheme_miss() < 1e-9, sol.message
        return sol

    s40 = solve("simpson", 40)
    s80 = solve("simpson", 80, guess=s40)
    l40 = solve("lobatto4", 40)
    solve("lobatto5", 40)       # (its inputs left 1e-5 inside the bounds: the polish's snap)
    # the inputs either side of two switches left 1.2e-5 inside the bounds: the Newton
    # matrix singular and inconsistent until the polish holds them there (_polish._pin;
    # residual 4.4e-7 before)
    solve("lobatto5", 160)
    assert abs(s80.duration - l40.duration) < abs(s40.duration - l40.duration) < 1e-3
    assert abs(l40.duration - 5.7919) < 1e-4
    assert 0.01 < (5.894364 - l40.duration) / 5.894364 < 0.03


@pytest.mark.parametrize("solver", ["scipy", "ipopt"])
def test_input_bounds_hold_and_the_target_is_reached(solver):
    """The swing-up in 3 s with |T| <= 5 (unbounded, the optimum reaches 5.8): the bound is
    active, respected, and the target reached; both solvers find the same optimum."""
    if solver == "ipopt":
        pytest.importorskip("ipyopt")
    system = sp.systems.pendulum(m=1.0, omega=np.sqrt(9.81))
    pb = control.Problem(system, 3.0, 24, inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                         end={"q": [np.pi], "qdot": [0.0]}, cost=control.effort(2.0),
                         input_bounds=(-5.0, 5.0))
    sol = pb.solve(solver)
    assert sol.success and sol.solver == {"scipy": "trust-constr"}.get(solver, solver), \
        sol.message
    assert np.abs(sol.u).max() <= 5.0 + 1e-12
    assert np.abs(sol.u).max() > 5.0 - 1e-9                 # the bound is active
    assert sol.own_scheme_miss() < 1e-9 and sol.kkt_residual < 1e-10
    free = _swing("simpson", 24, solver)
    assert np.abs(free.u).max() > 5.5 and sol.cost > free.cost
    # trust-constr's and IPOPT's optima agree (independent algorithms, one transcription)
    assert abs(sol.cost - 37.11767824821) < 1e-9


def test_ipopt_and_slsqp_agree_on_the_lq_oscillator():
    pytest.importorskip("ipyopt")
    a, b = _lq("lobatto4", 8, "ipopt"), _lq("lobatto4", 8, "slsqp")
    assert a.solver == "ipopt" and b.solver == "slsqp"
    assert abs(a.cost - b.cost) < 1e-13 and np.abs(a.u - b.u).max() < 1e-10
    assert np.abs(a.costate - b.costate).max() < 1e-10
    assert a.iterations <= 2                    # a QP with the exact Hessian: one Newton step


def test_without_ipyopt_the_message_names_the_extra(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_ipyopt(name, *args, **kw):
        if name == "ipyopt":
            raise ImportError("no ipyopt here")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ipyopt)
    pb = control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 2.0, 4, inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [1.0], "qdot": [0.0]})
    with pytest.raises(ImportError, match=r"pip install 'symplectic-vi\[control\]'"):
        pb.solve("ipopt")
    assert pb.solve().solver == "trust-constr"      # "auto" falls back to SciPy's trust-constr


def test_damped_system_energy_balance():
    """A damped pendulum (its own force) steered to rest upright: the replayed run's
    energy - work of all forces stays at the scheme's accuracy."""
    system = sp.systems.pendulum(m=1.0, omega=np.sqrt(9.81), damping=0.3)
    pb = control.Problem(system, 3.0, 24, method="lobatto4", inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [np.pi], "qdot": [0.0]},
                         rtol=1e-15)
    sol = pb.solve()
    assert sol.success and sol.own_scheme_miss() < 1e-10
    tr = sol.replay()
    balance = tr.energy - tr.work - (tr.energy[0] - tr.work[0])
    assert np.abs(balance).max() < 1e-4 * np.abs(tr.work).max()


def test_warm_start_from_a_solution():
    coarse = _lq("simpson", 8)
    pb = control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 2.0, 16, inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [1.0], "qdot": [0.0]})
    cold = pb.solve()
    warm = pb.solve(guess=coarse)
    assert warm.success and abs(warm.cost - cold.cost) < 1e-12
    assert warm.iterations <= cold.iterations


def test_bad_problems_are_named():
    dp = sp.systems.double_pendulum()
    with pytest.raises(NotImplementedError, match="needs the whole start"):
        control.Problem(sp.systems.pendulum_cartesian(), 1.0, 4, inputs="all", start={"q": [0.0, -1.0]})
    with pytest.raises(ValueError, match="rk4 does not solve"):
        control.Problem(sp.systems.pendulum_cartesian(), 1.0, 4, method="rk4", inputs="all",
                        start={"q": [0.0, -1.0], "qdot": [0.0, 0.0]})
    with pytest.raises(ValueError, match="needs free_duration"):
        control.Problem(dp, 1.0, 4, inputs="all", cost=control.duration())
    with pytest.raises(NotImplementedError, match="derivative in h"):
        control.Problem(dp, 1.0, 4, inputs="all", method="rk4", free_duration=(0.5, 2.0))
    with pytest.raises(ValueError, match="lower bound must be > 0"):
        control.Problem(dp, 1.0, 4, inputs="all", free_duration=(0.0, 2.0))
    with pytest.raises(TypeError, match="cost must be"):
        control.Problem(dp, 1.0, 4, inputs="all", cost="effort")
    with pytest.raises(ValueError, match="unknown keys"):
        control.Problem(dp, 1.0, 4, inputs="all", start={"v": [0, 0]})
    with pytest.raises(ValueError, match=r"component\(s\) \[1\] given in both"):
        control.Problem(dp, 1.0, 4, inputs="all", end={"qdot": [np.nan, 0], "p": [0, 0]})
    with pytest.raises(ValueError, match=r"n = 2 values"):
        control.Problem(dp, 1.0, 4, inputs="all", end={"q": [0, 0, 0]})
    with pytest.raises(ValueError, match=r"inputs must be a finite \(n, m\)"):
        control.Problem(dp, 1.0, 4, inputs=np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"say which coordinates the inputs actuate.*inputs='all'"):
        control.Problem(dp, 1.0, 4)
    with pytest.raises(ValueError, match="the one name is 'all'"):
        control.Problem(dp, 1.0, 4, inputs="none")
    with pytest.raises(ValueError, match="R must be a finite"):
        control.Problem(dp, 1.0, 4, inputs="all", cost=control.effort(np.eye(3)))
    with pytest.raises(ValueError, match="positive definite"):
        control.Problem(dp, 1.0, 4, inputs="all", cost=control.effort(-np.eye(2)))
    with pytest.raises(ValueError, match="lower <= upper"):
        control.Problem(dp, 1.0, 4, inputs="all", input_bounds=(1.0, -1.0))
    with pytest.raises(ValueError, match="duration"):
        control.Problem(dp, -1.0, 4, inputs="all")
    with pytest.raises(ValueError, match="solver must be"):
        control.Problem(dp, 1.0, 4, inputs="all").solve(solver="snopt")
    with pytest.raises(ValueError, match="hessian must be"):
        control.Problem(dp, 1.0, 4, inputs="all").solve(hessian="bfgs")
    with pytest.raises(ValueError, match="hessian='exact': the system is not from SymPy"):
        control.Problem(dp, 1.0, 4, inputs="all").solve(hessian="exact")


def test_identify_recovers_mass_and_damping_of_a_damped_cart_pole():
    """A damped cart-pole (SymPy, Rayleigh dissipation c (x'^2 + theta'^2)/2) simulated by
    lobatto5, 101 samples of q every 0.05 s with noise sigma = 1e-3: identify fits m, c and
    the initial state from m = 0.5, c = 0.05 to within 3 standard errors of the truth, in
    fewer evaluations (one run each, with the exact Jacobian) than a least-squares fit by
    finite differences needs runs, and both reach the same estimate."""
    sy = pytest.importorskip("sympy")
    from scipy.optimize import least_squares

    from symplectic import symbolic
    x, th, xd, thd = sy.symbols("x theta xdot thetadot")
    Mc, mb, lb, gg, c = sy.symbols("M m l g c", positive=True)
    cart, bob = (Mc, [x, 0]), (mb, [x + lb * sy.sin(th), -lb * sy.cos(th)])
    T = symbolic.kinetic_from_positions([x, th], [xd, thd], [cart, bob])
    V = symbolic.gravity_potential([cart, bob], gg)
    cp = sp.System.from_sympy(T - V, [x, th], [xd, thd], dissipation=c * (xd ** 2 + thd ** 2) / 2,
                              params={Mc: 1.0, mb: 0.3, lb: 0.5, gg: 9.81, c: 0.2})
    h, N, sig = 0.01, 500, 1e-3
    q0, p0 = np.array([0.0, 1.2]), np.array([0.3, 0.0])
    ref = sp.integrate(cp, q0, p0, h, N, method="lobatto5", rtol=1e-14)
    ks = np.arange(0, N + 1, 5)
    data = ref.q[ks] + sig * np.random.default_rng(0).normal(size=(len(ks), 2))
    fit = control.identify(cp.with_params(m=0.5, c=0.05), ref.t[ks], data, ["m", "c"],
                           q0=q0 + 0.01, p0=p0, h=h, fit_start=True, sigma=sig,
                           bounds={"m": (1e-3, None), "c": (0.0, None)})
    assert fit.success
    assert abs(fit.params["m"] - 0.3) < 3 * fit.std["m"] and fit.std["m"] < 2e-3
    assert abs(fit.params["c"] - 0.2) < 3 * fit.std["c"] and fit.std["c"] < 2e-3
    assert abs(fit.residual_rms - sig) < 0.2 * sig

    runs = [0]

    def residuals(v):
        runs[0] += 1
        tr = sp.integrate(cp.with_params(m=v[0], c=v[1]), v[2:4], v[4:6], h, N)
        return (tr.q[ks] - data).ravel()
    fd = least_squares(residuals, np.concatenate([[0.5, 0.05], q0 + 0.01, p0]), method="trf",
                       bounds=([1e-3, 0.0] + [-np.inf] * 4, np.inf), xtol=1e-12, ftol=1e-12,
                       gtol=1e-12)
    assert np.allclose(fd.x[:2], [fit.params["m"], fit.params["c"]], rtol=1e-6)
    assert fit.evaluations < runs[0]


@pytest.mark.parametrize("method, ratio", [("simpson", 8.0), ("lobatto4", 32.0)])
def test_damped_arm_energy_minus_work_at_the_scheme_order(method, ratio):
    """A two-link arm with joint friction (the double pendulum with damping (0.3, 0.2)),
    fully actuated, from hanging at rest to (pi/2, 0.3) at rest in 2 s at least effort:
    replayed, energy - work of all the forces (inputs and friction) stays constant to an
    error that falls at the scheme's order (measured 23x for Simpson, 198x for lobatto4
    from 20 to 40 intervals)."""
    arm = sp.systems.double_pendulum(damping=(0.3, 0.2))
    errs = []
    for N in (20, 40):
        pb = control.Problem(arm, 2.0, N, method=method, inputs="all",
                             start={"q": [0.0, 0.0], "qdot": [0.0, 0.0]},
                             end={"q": [np.pi / 2, 0.3], "qdot": [0.0, 0.0]})
        sol = pb.solve()
        assert sol.success and sol.kkt_residual < 1e-10 and sol.own_scheme_miss() < 1e-9
        tr = sol.replay()
        assert tr.work[-1] != 0.0
        errs.append(np.abs(tr.energy - tr.work - (tr.energy[0] - tr.work[0])).max())
    assert errs[0] / errs[1] > ratio, errs


def _cartesian_swing(method, N):
    """The pendulum in Cartesian coordinates (x^2 + y^2 = 1, the rod's force a multiplier),
    a horizontal force on the bob, from hanging at rest to upright at rest in 3 s, least
    effort; the end conditions the constraint leaves free (y = 1, x' = 0), a guess on the
    manifold (the angle linear in t).  IPOPT: SLSQP does not converge here (500 iterations;
    a failed step at a trial point is a cut-back for IPOPT, a far-off constraint for SLSQP)."""
    pytest.importorskip("ipyopt")
    pb = control.Problem(sp.systems.pendulum_cartesian(m=1.0, l=1.0, g=9.81), 3.0, N,
                         method=method, inputs=[1.0, 0.0],
                         start={"q": [0.0, -1.0], "qdot": [0.0, 0.0]},
                         end={"q": [np.nan, 1.0], "qdot": [0.0, np.nan]},
                         cost=control.effort(2.0), rtol=1e-14)
    phi = np.pi * np.linspace(0.0, 1.0, N + 1)
    guess = {"q": np.column_stack([np.sin(phi), -np.cos(phi)]),
             "p": np.column_stack([np.cos(phi), np.sin(phi)]) * np.pi / 3}
    sol = pb.solve("ipopt", guess=guess)
    assert sol.success and sol.kkt_residual < 1e-6, (sol.message, sol.kkt_residual)
    tr = sol.replay()
    assert sol.miss(tr) < 1e-8
    # on the manifold at every node, positions and velocities, to rounding
    assert np.abs((tr.q ** 2).sum(axis=1) - 1).max() < 1e-13
    assert np.abs((tr.q * tr.qdot).sum(axis=1)).max() < 1e-13
    return sol, np.abs(tr.energy - tr.work - (tr.energy[0] - tr.work[0])).max()


def test_constrained_swing_up_stays_on_the_manifold():
    _cartesian_swing("simpson", 24)


def test_slsqp_reports_a_failed_solve_instead_of_raising():
    """A step that fails at one of SLSQP's trial points makes its constraints far from zero
    (it cannot cut back on an error): the solve ends with success False and a message,
    not an exception."""
    pb = control.Problem(sp.systems.pendulum_cartesian(m=1.0, l=1.0, g=9.81), 3.0, 24,
                         inputs=[1.0, 0.0], start={"q": [0.0, -1.0], "qdot": [0.0, 0.0]},
                         end={"q": [np.nan, 1.0], "qdot": [0.0, np.nan]},
                         cost=control.effort(2.0), rtol=1e-14)
    phi = np.pi * np.linspace(0.0, 1.0, 25)
    guess = {"q": np.column_stack([np.sin(phi), -np.cos(phi)]),
             "p": np.column_stack([np.cos(phi), np.sin(phi)]) * np.pi / 3}
    sol = pb.solve("slsqp", guess=guess, max_iter=40)
    assert sol.solver == "slsqp" and not sol.success and sol.message


@pytest.mark.slow
@pytest.mark.parametrize("method, ratio", [("simpson", 8.0), ("lobatto4", 32.0)])
def test_constrained_swing_up_energy_balance_at_the_scheme_order(method, ratio):
    """energy - work of the replayed solution (the rod does no work) falls at the scheme's
    order (measured 18x for Simpson, 80x for lobatto4 from 24 to 48 intervals), and the
    costs agree (lobatto4 on 48: 53.61142)."""
    (_, e24), (s48, e48) = _cartesian_swing(method, 24), _cartesian_swing(method, 48)
    assert e24 / e48 > ratio, (e24, e48)
    assert abs(s48.cost - 53.61142) < 2e-3
