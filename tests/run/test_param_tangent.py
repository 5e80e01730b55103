"""Parameter sensitivities of a run: ``integrate(..., tangent=True, wrt=[...])`` and
``sensitivity.gradient(..., wrt=("params", ...), params=[...])`` for SymPy systems.

S_N = d(q_N, p_N)/dtheta at fixed (q0, p0) against four-point central differences of
``integrate`` over systems rebuilt with ``with_params(theta +- eps)`` (an independent
computation of the same derivative of the discrete run, which S claims to be exactly), the
states bitwise the same with and without ``wrt``, the gradient of a cost against central
differences of the cost, and the refusals.
"""
import numpy as np
import pytest

import symplectic as sp

sy = pytest.importorskip("sympy")     # the exact route compiles an augmented SymPy system

from symplectic import symbolic  # noqa: E402
from support.lagrangians import dp_lagrangian  # noqa: E402

Q0, P0 = np.array([0.5, -0.3]), np.array([0.1, 0.2])
H, N = 0.01, 1000
WRT = ["m2", "l1"]


@pytest.fixture(scope="module")
def dp():
    L, q, u, params = dp_lagrangian()
    return symbolic.system(L, q, u, params)


@pytest.fixture(scope="module")
def damped():
    """A damped pendulum with a torsion spring (Rayleigh dissipation 1/2 c qdot^2): parameters
    m, l, g, k of M and V, c of the force only."""
    th, w = sy.symbols("theta w")
    m, l, g, k, c = sy.symbols("m l g k c", positive=True)
    L = m * l ** 2 * w ** 2 / 2 + m * g * l * sy.cos(th) - k * th ** 2 / 2
    return symbolic.system(L, [th], [w], {m: 1.3, l: 0.8, g: 9.81, k: 0.4, c: 0.3},
                           dissipation=c * w ** 2 / 2)


def end_state(system, q0, p0, method, n_steps=N):
    tr = sp.integrate(system, q0, p0, H, n_steps, method=method, store_every=n_steps)
    return np.concatenate([tr.q[-1], tr.p[-1]])


def four_point(system, name, q0, p0, method, rel=1e-4):
    """d(q_N, p_N)/dtheta by the four-point stencil, step rel max(1, |theta|)."""
    th = system._params[name]
    e = rel * max(1.0, abs(th))
    y = {k: end_state(system.with_params(**{name: th + k * e}), q0, p0, method)
         for k in (-2, -1, 1, 2)}
    return (-y[2] + 8 * y[1] - 8 * y[-1] + y[-2]) / (12 * e)


def rel_err(got, want):
    return np.max(np.abs(got - want)) / np.max(np.abs(want))


@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto4"])
def test_param_tangent_matches_differences(dp, method):
    tr = sp.integrate(dp, Q0, P0, H, N, method=method, tangent=True, wrt=WRT)
    assert tr.param_tangent.shape == (N + 1, 4, 2)
    assert tr.param_names == tuple(WRT)
    assert np.array_equal(tr.param_tangent[0], np.zeros((4, 2)))
    for j, name in enumerate(WRT):
        want = four_point(dp, name, Q0, P0, method)
        assert rel_err(tr.param_tangent[-1][:, j], want) <= 1e-7, (method, name)


def chain4(**change):
    """pendulum_chain(4), masses 1.2, 1.0, 0.8, 0.6 kg, lengths 0.5, 0.4, 0.3, 0.2 m, damped,
    one entry of m or l (or g) changed."""
    m, ln, g = [1.2, 1.0, 0.8, 0.6], [0.5, 0.4, 0.3, 0.2], 9.81
    for k, v in change.items():
        if k == "g":
            g = v
        else:
            (m if k[0] == "m" else ln)[int(k[2:-1])] = v
    return sp.systems.pendulum_chain(4, m=m, l=ln, g=g, damping=0.05)


@pytest.mark.parametrize("name,make,q0,p0,wrt,rel", [
    ("double_pendulum", lambda **k: sp.systems.double_pendulum(damping=0.1, **k), Q0, P0,
     ["m2", "l1", "g"], 1e-4),
    ("pendulum", lambda **k: sp.systems.pendulum(**k), np.array([1.0]), np.array([0.3]),
     ["m", "omega"], 1e-4),
    ("pendulum_chain", lambda **k: chain4(**k), 0.5 * np.sin(1.3 * np.arange(4)), np.zeros(4),
     ["m[1]", "l[3]", "g"], 1e-4),
    # the top's phase moves by ~0.1 rad for a 1e-4 change of m: a smaller step keeps the
    # stencil's truncation (that phase to the 4th power) below the tolerance
    ("lagrange_top", lambda **k: sp.systems.lagrange_top(**k), np.array([0.0, np.pi / 3, 0.0]),
     np.array([0.03211429, 0.0, 0.032075]), ["m", "I", "I3", "l"], 1e-6)])
def test_builtin_systems(name, make, q0, p0, wrt, rel):
    """Built-ins (their M and V written in SymPy in symplectic/_run/_params.py, the C code's
    formulas) against four-point differences over the built-in rebuilt with theta +- e; the
    double pendulum damped (its damping not differentiated)."""
    S = make()
    tr = sp.integrate(S, q0, p0, H, N, tangent=True, wrt=wrt)
    for j, p in enumerate(wrt):
        th = S.params[p] if p in S.params else S.params[p[0]][int(p[2:-1])]
        e = rel * (abs(th) if rel < 1e-4 else max(1.0, abs(th)))
        y = {k: end_state(make(**{p: th + k * e}), q0, p0, "simpson") for k in (-2, -1, 1, 2)}
        want = (-y[2] + 8 * y[1] - 8 * y[-1] + y[-2]) / (12 * e)
        assert rel_err(tr.param_tangent[-1][:, j], want) <= 1e-7, (name, p)


@pytest.mark.parametrize("damping,wrt", [(0.2, ["damping", "m2"]),
                                          ((0.2, 0.1), ["damping[0]", "damping[1]"])])
def test_builtin_joint_damping(damping, wrt):
    """A built-in's joint damping F = -D(c) qdot: dF/dc_i = -Delta_i^T Delta_i qdot at every
    point, exactly; against four-point differences over the built-in rebuilt with c +- e."""
    def make(**change):
        c = np.array(damping, float)
        m2 = change.pop("m2", 1.0)
        for k, v in change.items():
            if k == "damping":
                c = c + v
            else:
                c = c + v * np.eye(2)[int(k[8:-1])]
        return sp.systems.double_pendulum(m2=m2, damping=float(c) if c.ndim == 0 else tuple(c))
    tr = sp.integrate(make(), Q0, P0, H, N, tangent=True, wrt=wrt)
    for j, p in enumerate(wrt):
        e = 1e-4
        base = 1.0 if p == "m2" else 0.0
        y = {k: end_state(make(**{p: base + k * e}), Q0, P0, "simpson") for k in (-2, -1, 1, 2)}
        want = (-y[2] + 8 * y[1] - 8 * y[-1] + y[-2]) / (12 * e)
        assert rel_err(tr.param_tangent[-1][:, j], want) <= 1e-7, p


def test_damped_system(damped):
    """With the system's own force (its parameter c not differentiated): the force's
    Jacobians enter the step's derivative as in Newton."""
    q0, p0 = np.array([1.0]), np.array([0.3])
    names = ["m", "l", "k"]
    tr = sp.integrate(damped, q0, p0, H, N, tangent=True, wrt=names)
    assert tr.param_tangent.shape == (N + 1, 2, 3)
    for j, name in enumerate(names):
        want = four_point(damped, name, q0, p0, "simpson")
        assert rel_err(tr.param_tangent[-1][:, j], want) <= 1e-7, name


def driven_system(compile="auto"):
    """A pendulum with a torsion spring, a nonlinear dissipation whose coefficient c and
    length l also enter the force, and a drive a cos(omega t): every parameter of the force
    (time-dependent too) next to those of M and V."""
    th, w, t = sy.symbols("theta w t")
    m, l, g, k, c, a, om = sy.symbols("m l g k c a omega", positive=True)
    L = m * l ** 2 * w ** 2 / 2 + m * g * l * sy.cos(th) - k * th ** 2 / 2
    return symbolic.system(L, [th], [w], {m: 1.3, l: 0.8, g: 9.81, k: 0.4, c: 0.3, a: 0.5,
                                          om: 2.0},
                           dissipation=c * w ** 2 / 2 + c * l * sy.sin(th) * w ** 4 / 8,
                           forces=[a * sy.cos(om * t)], time=t, compile=compile)


@pytest.fixture(scope="module")
def driven():
    return driven_system()


@pytest.mark.parametrize("method", ["midpoint", "lobatto4"])
def test_parameters_of_the_forces(driven, method):
    """Parameters of a SymPy system's forces: the augmented system carries (F(t, q, v,
    theta), 0) and each point adds dF/dtheta (csrc/core/sym_galerkin_param.c); against four-point
    differences over with_params, and the gradient against S_N."""
    q0, p0 = np.array([1.0]), np.array([0.3])
    names = ["c", "a", "omega", "l"]
    tr = sp.integrate(driven, q0, p0, H, N, method=method, tangent=True, wrt=names)
    for j, name in enumerate(names):
        want = four_point(driven, name, q0, p0, method)
        assert rel_err(tr.param_tangent[-1][:, j], want) <= 1e-7, name
    cost = {"terminal": (lambda q, p: q[0] ** 2 + 0.5 * p[0] ** 2,
                         lambda q, p: (2 * q, p.copy()))}
    _, g = sp.sensitivity.gradient(driven, q0, p0, H, N, cost, method=method,
                                   wrt=["params"], params=names)
    lam = np.array([2 * tr.q[-1][0], tr.p[-1][0]])
    want = tr.param_tangent[-1].T @ lam
    assert rel_err(np.array([g["params"][k] for k in names]), want) <= 1e-10


def test_parameters_of_the_forces_numpy_backend(driven):
    """The NumPy evaluation (compile=False): the augmented force is a Python term (the run
    keeps the GIL), the same derivatives to rounding."""
    ref = sp.integrate(driven, [1.0], [0.3], H, 200, tangent=True, wrt=["c", "omega"])
    got = sp.integrate(driven_system(compile=False), [1.0], [0.3], H, 200, tangent=True,
                       wrt=["c", "omega"])
    assert rel_err(got.param_tangent[-1], ref.param_tangent[-1]) <= 1e-12


def test_states_bitwise_and_thinning(dp):
    with_wrt = sp.integrate(dp, Q0, P0, H, 200, tangent=True, wrt=WRT)
    plain = sp.integrate(dp, Q0, P0, H, 200)
    assert np.array_equal(with_wrt.q, plain.q) and np.array_equal(with_wrt.p, plain.p)
    tangent_only = sp.integrate(dp, Q0, P0, H, 200, tangent=True)
    assert np.array_equal(with_wrt.tangent, tangent_only.tangent)
    thin = sp.integrate(dp, Q0, P0, H, 200, tangent=True, wrt=WRT, store_every=7)
    assert np.array_equal(thin.param_tangent, with_wrt.param_tangent[thin_rows(200, 7)])
    # another augmented system (its own generated code): the same column to rounding
    one = sp.integrate(dp, Q0, P0, H, 200, tangent=True, wrt=["l1"])
    assert rel_err(one.param_tangent[-1][:, 0], with_wrt.param_tangent[-1][:, 1]) <= 1e-12


def thin_rows(n_steps, every):
    return list(range(0, n_steps + 1, every)) + ([n_steps] if n_steps % every else [])


def cost():
    phi = (lambda q, p: float(q[0] ** 2 + 0.5 * p[1] ** 2),
           lambda q, p: (np.array([2 * q[0], 0.0]), np.array([0.0, p[1]])))
    run = (lambda t, q, p: float(np.cos(q[1])),
           lambda t, q, p: (np.array([0.0, -np.sin(q[1])]), np.zeros(2)))
    return {"terminal": phi, "running": run}


def test_gradient_params(dp):
    c = cost()
    value, grads = sp.sensitivity.gradient(dp, Q0, P0, H, N, c, wrt=("q0", "params"),
                                           params=WRT)
    assert set(grads) == {"q0", "params"} and list(grads["params"]) == WRT
    plain, _ = sp.sensitivity.gradient(dp, Q0, P0, H, N, c, wrt=("q0",))
    assert value == plain

    def C(name, val):
        return sp.sensitivity.gradient(dp.with_params(**{name: val}), Q0, P0, H, N, c,
                                       wrt=("q0",))[0]

    for name in WRT:
        th = dp._params[name]
        e = 1e-4 * max(1.0, abs(th))
        want = (-C(name, th + 2 * e) + 8 * C(name, th + e) - 8 * C(name, th - e)
                + C(name, th - 2 * e)) / (12 * e)
        assert abs(grads["params"][name] - want) <= 1e-7 * abs(want), name


def test_gradient_agrees_with_param_tangent(dp):
    """A terminal cost linear in the state: the gradient is that row combination of S_N."""
    w = np.array([0.3, -1.2, 0.7, 2.0])
    c = {"terminal": (lambda q, p: float(w @ np.concatenate([q, p])),
                      lambda q, p: (w[:2].copy(), w[2:].copy()))}
    _, grads = sp.sensitivity.gradient(dp, Q0, P0, H, 300, c, wrt="params", params=WRT)
    tr = sp.integrate(dp, Q0, P0, H, 300, tangent=True, wrt=WRT)
    want = w @ tr.param_tangent[-1]
    got = np.array([grads["params"][k] for k in WRT])
    assert np.max(np.abs(got - want)) <= 1e-11 * np.max(np.abs(want))


def test_refusals(dp, damped):
    with pytest.raises(ValueError, match="mass is not a parameter.*m1, m2|parameters: "):
        sp.integrate(dp, Q0, P0, H, 10, tangent=True, wrt=["mass"])
    with pytest.raises(ValueError, match="needs tangent=True"):
        sp.integrate(dp, Q0, P0, H, 10, wrt=WRT)
    with pytest.raises(NotImplementedError, match="variational.*'rk4'"):
        sp.integrate(dp, Q0, P0, H, 10, method="rk4", tangent=True, wrt=WRT)
    plain = sp.System(2, np.eye(2), lambda q: 0.5 * q @ q, potential_grad=lambda q: q)
    with pytest.raises(NotImplementedError, match="symplectic.symbolic.system"):
        sp.integrate(plain, [0.1, 0.0], [0.0, 0.0], H, 10, tangent=True, wrt=["k"])
    with pytest.raises(ValueError, match="damping is not a parameter"):
        sp.integrate(sp.systems.double_pendulum(), Q0, P0, H, 10, tangent=True,
                     wrt=["damping"])          # no damping: the system has no such force
    with pytest.raises(ValueError, match=r"damping\[2\] is not a parameter"):
        sp.integrate(sp.systems.double_pendulum(damping=0.1), Q0, P0, H, 10, tangent=True,
                     wrt=["damping[2]"])
    with pytest.raises(ValueError, match="params="):
        sp.sensitivity.gradient(dp, Q0, P0, H, 10, cost(), wrt=("q0", "params"))
    with pytest.raises(NotImplementedError, match="'rk4'"):
        sp.sensitivity.gradient(dp, Q0, P0, H, 10, cost(), method="rk4", wrt="params",
                                params=WRT)


def test_numpy_backend_and_from_sympy(dp):
    """The NumPy evaluation (compile=False: its augmented system is NumPy too, the run keeps
    the GIL) and System.from_sympy give the compiled system's derivatives to rounding."""
    L, q, u, params = dp_lagrangian()
    wrt = ["m2", "g"]
    ref = sp.integrate(dp, Q0, P0, H, 100, tangent=True, wrt=wrt).param_tangent[-1]
    for s in (symbolic.system(L, q, u, params, compile=False),
              sp.System.from_sympy(L, q, u, params)):
        got = sp.integrate(s, Q0, P0, H, 100, tangent=True, wrt=wrt).param_tangent[-1]
        assert rel_err(got, ref) <= 1e-12


def test_integrator_pieces_carry_the_parameter_tangent():
    """Integrator(..., tangent=True, wrt=...) carries S from its origin across pieces and steps:
    bitwise the rows of one integrate call; reset starts it again at 0."""
    S = sp.systems.double_pendulum(damping=0.1)
    wrt = ["m2", "damping"]
    one = sp.integrate(S, Q0, P0, H, 400, tangent=True, wrt=wrt)
    it = sp.Integrator(S, H, Q0, P0, tangent=True, wrt=wrt)
    a = it.propagate(150)
    b = it.propagate(249, store_every=7)
    it.step()
    assert np.array_equal(a.param_tangent, one.param_tangent[:151])
    assert np.array_equal(b.param_tangent[-1], one.param_tangent[399])
    assert np.array_equal(it.param_tangent, one.param_tangent[400])
    it.reset(Q0, P0)
    assert np.array_equal(it.param_tangent, np.zeros((4, 2)))
    with pytest.raises(ValueError, match="wrt= needs tangent=True"):
        sp.Integrator(S, H, Q0, P0, wrt=wrt)
    assert sp.Integrator(S, H, Q0, P0).param_tangent is None
