"""Non-conservative forces (issue 16): the discrete Lagrange-d'Alembert
principle in every scheme, RK4 with forces, the force forms, the energy and
momentum balances.

Expected values come from exact solutions (the damped, driven harmonic
oscillator), from an independent reference (DOP853 at rtol = atol = 1e-13 on
the forced Hamilton equations of the double pendulum, written out below), and
from the arrays the build before forces saved (tests/data/unforced_base.npz).
"""
import math
import pathlib
import pickle

import numpy as np
import pytest

import symplectic as sp
from support.models import fitted_order
from symplectic import _core, forces

METHODS = list(sp.methods())
VARIATIONAL = [m for m, d in sp.methods(details=True).items() if d["symplectic"]]
ORDER = {m: d["order"] for m, d in sp.methods(details=True).items()}
IMPLICIT = [m for m in METHODS if m != "rk4"]


# ---------------------------------------------------------------- the damped, driven oscillator
class Oscillator:
    """x'' + c x' + w0^2 x = A cos(W t) (unit mass), x(0) = x0, x'(0) = v0:
    the homogeneous part e^{-a t} (C1 cos wd t + C2 sin wd t), a = c/2,
    wd = sqrt(w0^2 - a^2), plus the particular P cos W t + Q sin W t with
    (w0^2 - W^2) P + c W Q = A, (w0^2 - W^2) Q - c W P = 0."""
    w0, c, A, W, x0, v0 = 2.0, 0.4, 0.7, 1.3, 1.0, 0.0

    def __init__(self):
        w0, c, A, W = self.w0, self.c, self.A, self.W
        det = (w0 ** 2 - W ** 2) ** 2 + (c * W) ** 2
        self.P, self.Q = A * (w0 ** 2 - W ** 2) / det, A * c * W / det
        self.a = c / 2
        self.wd = math.sqrt(w0 ** 2 - self.a ** 2)
        self.C1 = self.x0 - self.P
        self.C2 = (self.v0 - self.Q * W + self.a * self.C1) / self.wd

    def exact(self, t):
        a, wd, W = self.a, self.wd, self.W
        e, cs, sn = np.exp(-a * t), np.cos(wd * t), np.sin(wd * t)
        hom = self.C1 * cs + self.C2 * sn
        x = e * hom + self.P * np.cos(W * t) + self.Q * np.sin(W * t)
        v = (e * (-a * hom + wd * (-self.C1 * sn + self.C2 * cs))
             - self.P * W * np.sin(W * t) + self.Q * W * np.cos(W * t))
        return x, v

    def energy(self, x, v):
        return 0.5 * v ** 2 + 0.5 * self.w0 ** 2 * x ** 2

    def system(self):
        return sp.systems.linear([[1.0]], [[self.w0 ** 2]])

    def force(self, t, q, qdot):
        return np.array([-self.c * qdot[0] + self.A * math.cos(self.W * t)])

    def force_jac(self, t, q, qdot):
        return np.zeros((1, 1)), np.array([[-self.c]])


# steps over T = 6 s for each order: errors in the asymptotic range, above rounding
OSC_STEPS = {2: [50, 100, 200, 400], 4: [50, 100, 200, 400], 6: [12, 16, 24, 32],
             8: [10, 14, 20, 28], 10: [10, 12, 14, 16], 12: [5, 6, 7, 8]}


@pytest.mark.parametrize("method", METHODS)
def test_damped_driven_oscillator_orders(method):
    """Fitted orders on the position and the energy against the exact
    solution: 2s - 2 for the Lobatto family and Simpson, 2 for midpoint, 4 for
    rk4, within 0.15 (the drive makes F depend on t: the stage times count)."""
    osc = Oscillator()
    S, T, order = osc.system(), 6.0, ORDER[method]
    hs, eq, eE = [], [], []
    for N in OSC_STEPS[order]:
        h = T / N
        tr = sp.integrate(S, [osc.x0], [osc.v0], h, N, method, force=osc.force,
                          force_jac=osc.force_jac)
        x, v = osc.exact(tr.t)
        hs.append(h)
        eq.append(np.max(np.abs(tr.q[:, 0] - x)))
        eE.append(np.max(np.abs(tr.energy - osc.energy(x, v))))
    assert abs(fitted_order(hs, eq) - order) <= 0.15, (eq, fitted_order(hs, eq))
    assert abs(fitted_order(hs, eE) - order) <= 0.15, (eE, fitted_order(hs, eE))


# ---------------------------------------------------------------- the damped, driven double pendulum
DP = dict(m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=9.81)
DP_D = np.array([[0.5, -0.2], [-0.2, 0.2]])     # joint friction c1 = 0.3, c2 = 0.2
DP_DRIVE = dict(A=2.0, W=2.3, B=1.5, W2=3.1, kappa=0.05)
DP_Q0, DP_V0 = np.array([0.6, -0.4]), np.array([0.3, 0.5])


def dp_force(t, q, v):
    """Joint friction -D v, a pivot torque A cos(W t), a horizontal tip force
    B sin(W2 t) (virtual work: B sin(W2 t) (l1 cos q1, l2 cos q2)) and a cubic
    drag -kappa v^3: F depends on t, q and v."""
    d = DP_DRIVE
    tip = d["B"] * math.sin(d["W2"] * t)
    return (-DP_D @ v + np.array([d["A"] * math.cos(d["W"] * t), 0.0])
            + tip * np.array([DP["l1"] * math.cos(q[0]), DP["l2"] * math.cos(q[1])])
            - d["kappa"] * v ** 3)


def dp_force_jac(t, q, v):
    tip = DP_DRIVE["B"] * math.sin(DP_DRIVE["W2"] * t)
    Fq = np.diag([-tip * DP["l1"] * math.sin(q[0]), -tip * DP["l2"] * math.sin(q[1])])
    Fv = -DP_D - 3 * DP_DRIVE["kappa"] * np.diag(v ** 2)
    return Fq, Fv


def dp_hamilton(t, y):
    """The forced Hamilton equations of the double pendulum, written out:
    qdot = M^-1 p, pdot = 1/2 qdot^T dM/dq qdot - grad V + F(t, q, qdot) with
    M12 = m2 l1 l2 cos(q1 - q2), so 1/2 qdot^T dM/dq1 qdot = -k s v1 v2 and
    1/2 qdot^T dM/dq2 qdot = +k s v1 v2 (k = m2 l1 l2, s = sin(q1 - q2))."""
    m1, m2, l1, l2, g = (DP[k] for k in ("m1", "m2", "l1", "l2", "g"))
    q, p = y[:2], y[2:]
    k = m2 * l1 * l2
    c, s = math.cos(q[0] - q[1]), math.sin(q[0] - q[1])
    M = np.array([[(m1 + m2) * l1 ** 2, k * c], [k * c, m2 * l2 ** 2]])
    v = np.linalg.solve(M, p)
    gyro = k * s * v[0] * v[1]
    dV = np.array([(m1 + m2) * g * l1 * math.sin(q[0]), m2 * g * l2 * math.sin(q[1])])
    return np.concatenate([v, np.array([-gyro, gyro]) - dV + dp_force(t, q, v)])


@pytest.fixture(scope="module")
def dp_reference():
    integrate = pytest.importorskip("scipy.integrate")
    S = sp.systems.double_pendulum(**DP)
    p0 = S.mass(DP_Q0) @ DP_V0
    sol = integrate.solve_ivp(dp_hamilton, (0.0, 2.0), np.concatenate([DP_Q0, p0]),
                              method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True)
    assert sol.status == 0
    return S, p0, sol.sol


DP_STEPS = {2: [100, 200, 400, 800], 4: [100, 200, 400, 800], 6: [40, 56, 80, 112],
            8: [40, 48, 56, 64]}


@pytest.mark.parametrize("method", METHODS)
def test_damped_driven_double_pendulum_orders(method, dp_reference):
    """Against DOP853 at 1e-13 on the forced Hamilton equations: the
    registered order on q, p and the energy, within 0.15."""
    S, p0, ref = dp_reference
    order, T = ORDER[method], 2.0
    if order not in DP_STEPS:
        # orders 10, 12 (lobatto6, lobatto7): their errors fall from the pre-asymptotic range
        # (local orders 12-14 at N = 14..20) to the 1e-11 bar within a factor 1.5 of h, so
        # no run sits in the asymptotic range above the reference's error; their orders are
        # fitted in tests/validation/test_high_order.py
        pytest.skip(f"order {order}: see tests/validation/test_high_order.py")
    hs, errs = [], {"q": [], "p": [], "E": []}
    for N in DP_STEPS[order]:
        tr = sp.integrate(S, DP_Q0, p0, T / N, N, method, force=dp_force, force_jac=dp_force_jac)
        Y = ref(tr.t).T
        hs.append(T / N)
        errs["q"].append(np.max(np.abs(tr.q - Y[:, :2])))
        errs["p"].append(np.max(np.abs(tr.p - Y[:, 2:])))
        errs["E"].append(np.max(np.abs(tr.energy - S.energy(Y[:, :2], Y[:, 2:]))))
    for k, e in errs.items():
        assert min(e) > 1e-11, (k, e)       # well above the reference's own error
        assert abs(fitted_order(hs, e) - order) <= 0.15, (k, e, fitted_order(hs, e))


# ---------------------------------------------------------------- the forms agree
# the compiled forces (fixture force_lib): support/clibs.py, FORCE


def compiled_dp_force(lib, jacobian=True):
    d = DP_DRIVE
    par = np.concatenate([DP_D.ravel(), [d["A"], d["W"], d["B"], d["W2"], d["kappa"],
                                         DP["l1"], DP["l2"]]])
    return forces.from_cfunc(lib.dp_force, par, n=2, jacobian=jacobian)


def sympy_dp(tmp_path, monkeypatch):
    sy = pytest.importorskip("sympy")
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path / "cache"))
    from symplectic import symbolic
    q1, q2, u1, u2, t = sy.symbols("q1 q2 u1 u2 t")
    m1, m2, l1, l2, g = (DP[k] for k in ("m1", "m2", "l1", "l2", "g"))
    c1, c2, A, W, B, W2, ka = sy.symbols("c1 c2 A W B W2 kappa")
    T = ((m1 + m2) * l1 ** 2 * u1 ** 2 / 2 + m2 * l1 * l2 * sy.cos(q1 - q2) * u1 * u2
         + m2 * l2 ** 2 * u2 ** 2 / 2)
    V = -(m1 + m2) * g * l1 * sy.cos(q1) - m2 * g * l2 * sy.cos(q2)
    R = c1 * u1 ** 2 / 2 + c2 * (u2 - u1) ** 2 / 2             # joint friction
    tip = [l1 * sy.sin(q1) + l2 * sy.sin(q2), -l1 * sy.cos(q1) - l2 * sy.cos(q2)]
    d = DP_DRIVE
    pars = {c1: 0.3, c2: 0.2, A: d["A"], W: d["W"], B: d["B"], W2: d["W2"], ka: d["kappa"]}
    return sp.System.from_sympy(
        T - V, [q1, q2], [u1, u2], params=pars, dissipation=R, time=t,
        forces=[A * sy.cos(W * t) - ka * u1 ** 3, -ka * u2 ** 3],
        applied=[symbolic.PointForce(tip, [B * sy.sin(W2 * t), 0])])


@pytest.mark.parametrize("method", METHODS)
def test_python_compiled_and_sympy_forms_agree(method, force_lib, tmp_path, monkeypatch):
    """The same force as a Python callable (with and without its Jacobian),
    a compiled callback (with and without), and from SymPy (dissipation +
    generalized forces + an applied point force): trajectories, work and
    impulse agree to 1e-12."""
    S = sp.systems.double_pendulum(**DP)
    p0 = S.mass(DP_Q0) @ DP_V0
    base = sp.integrate(S, DP_Q0, p0, 0.01, 300, method, force=dp_force, force_jac=dp_force_jac)
    sym = sympy_dp(tmp_path, monkeypatch)
    runs = {
        "python, finite differences": sp.integrate(S, DP_Q0, p0, 0.01, 300, method,
                                                   force=dp_force),
        "compiled": sp.integrate(S, DP_Q0, p0, 0.01, 300, method,
                                 force=compiled_dp_force(force_lib)),
        "compiled, finite differences": sp.integrate(
            S, DP_Q0, p0, 0.01, 300, method, force=compiled_dp_force(force_lib, False)),
        "sympy": sp.integrate(sym, DP_Q0, p0, 0.01, 300, method),
    }
    assert sym.backend == "c" and sym.force_backend == "c"
    assert np.max(np.abs(base.work)) > 1.0
    for name, tr in runs.items():
        for a in ("q", "p", "work", "impulse"):
            assert np.max(np.abs(getattr(tr, a) - getattr(base, a))) <= 1e-12, (name, a)


def test_sympy_numpy_backend_and_generalized_forces(tmp_path, monkeypatch):
    """compile=False evaluates the SymPy force with NumPy (a Python term with
    its Jacobian): the same trajectory; the generalized forces are the sum of
    the parts (virtual work of the tip force: B sin(W2 t) l_i cos q_i)."""
    sy = pytest.importorskip("sympy")
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path / "cache"))
    q, v, t, c, F0 = sy.symbols("q v t c F0")
    L = v ** 2 / 2 - (1 - sy.cos(q))
    kw = dict(params={c: 0.3, F0: 0.5}, dissipation=c * v ** 2 / 2, forces=[F0 * sy.cos(t)],
              time=t)
    a = sp.System.from_sympy(L, [q], [v], compile=False, **kw)
    b = sp.System.from_sympy(L, [q], [v], **kw)
    assert a.force_backend == "numpy" and b.force_backend == "c"
    assert sy.simplify(a.generalized_forces[0] - (F0 * sy.cos(t) - c * v)) == 0
    ta = sp.integrate(a, [1.0], [0.0], 0.02, 200)
    tb = sp.integrate(b, [1.0], [0.0], 0.02, 200)
    pend = sp.integrate(sp.systems.pendulum(1.0, 1.0), [1.0], [0.0], 0.02, 200,
                        force=lambda t, q, v: np.array([0.5 * math.cos(t) - 0.3 * v[0]]))
    assert np.max(np.abs(ta.q - tb.q)) <= 1e-12
    assert np.max(np.abs(ta.q - pend.q)) <= 1e-12
    # with_params and pickling keep the force (with its new parameter values)
    c2 = a.with_params(c=0.0, F0=0.0)
    assert np.max(np.abs(sp.integrate(c2, [1.0], [0.0], 0.02, 50).work)) == 0.0
    r = pickle.loads(pickle.dumps(b))
    assert np.array_equal(sp.integrate(r, [1.0], [0.0], 0.02, 200).q, tb.q)


def test_sympy_torque_and_functions_of_time(tmp_path, monkeypatch):
    """A Torque on a body (virtual work torque . d omega/d qdot): a unit
    torque about the vertical on the Lagrange top (ZXZ angles, omega in the
    space frame) is the generalized force (1, 0, cos theta).  Coordinates as
    functions of time q(t): their variable is the time of the forces."""
    sy = pytest.importorskip("sympy")
    monkeypatch.setenv("SYMPLECTIC_CACHE", str(tmp_path / "cache"))
    from sympy.physics.mechanics import dynamicsymbols
    from symplectic import symbolic
    phi, th, psi, d0, d1, d2 = sy.symbols("phi theta psi d0 d1 d2")
    R = symbolic.rotation("z", phi) * symbolic.rotation("x", th) * symbolic.rotation("z", psi)
    w = symbolic.angular_velocity(R, [phi, th, psi], [d0, d1, d2], frame="space")
    Q = symbolic.generalized_forces([symbolic.Torque(w, [0, 0, 1])], [phi, th, psi],
                                    [d0, d1, d2])
    assert [sy.simplify(e) for e in Q] == [1, 0, sy.cos(th)]
    x = dynamicsymbols("x")
    tt = sy.Symbol("t")
    S = sp.System.from_sympy(x.diff(tt) ** 2 / 2 - 2 * x ** 2, [x],
                             forces=[sy.Rational(7, 10) * sy.cos(sy.Rational(13, 10) * tt)],
                             dissipation=sy.Rational(2, 5) * x.diff(tt) ** 2 / 2)
    osc = Oscillator()
    tr = sp.integrate(S, [osc.x0], [osc.v0], 0.01, 300)
    ref = sp.integrate(osc.system(), [osc.x0], [osc.v0], 0.01, 300, force=osc.force)
    assert np.max(np.abs(tr.q - ref.q)) <= 1e-13


# ---------------------------------------------------------------- energy - work, momentum balance
def test_energy_minus_work_bounded_over_1e4_steps():
    """A damped pendulum (the energy falls from 55.9 to 8.4 J over 1e4 steps):
    for the variational schemes energy - work stays within the scheme's error
    -- the residual's size scales with h^order and it does not grow (its
    largest value in the last quarter of the run is below that of the first
    quarter) -- while RK4's grows.  The schemes of order >= 8 are at rounding
    level here (1e-13 - 3e-13), where the quarters compare a random walk of
    rounding errors: for them no drift above 1e-12 over the whole run."""
    S = sp.systems.pendulum(damping=0.02)
    res = {}
    for h in (0.02, 0.01):
        N = int(round(100 / h))
        for m in METHODS:
            tr = sp.integrate(S, [2.0], [0.0], h, N, m)
            r = sp.analysis.energy_balance(tr).residual
            res[m, h] = (np.max(np.abs(r)), np.max(np.abs(r[:N // 4])), np.max(np.abs(r[-N // 4:])))
    for m in VARIATIONAL:
        full, first, last = res[m, 0.01]
        if ORDER[m] <= 6:           # lobatto5 ... lobatto7 are at rounding level (1e-13 - 3e-13)
            assert last <= first, (m, res[m, 0.01])
            ratio = res[m, 0.02][0] / full
            assert abs(math.log2(ratio) - ORDER[m]) <= 0.3, (m, ratio)
        else:
            assert full <= 1e-12, (m, res[m, 0.01])
    assert res["simpson", 0.01][0] <= 5e-6
    _, first, last = res["rk4", 0.01]
    assert last > 2 * first            # RK4: energy - work drifts


@pytest.mark.parametrize("method", METHODS)
def test_constant_torque_on_a_cyclic_coordinate(method, force_lib):
    """A constant torque tau on the precession angle phi of the Lagrange top
    (cyclic): p_phi(t_N) - p_phi(0) = tau t_N to rounding, for the held array,
    a callable and a compiled term alike; p_psi (no torque) stays bitwise
    constant; the momentum balance holds to rounding."""
    top = sp.systems.lagrange_top()
    q0 = np.array([0.0, math.pi / 3, 0.0])
    p0 = top.mass(q0) @ np.array([9.2, 0.0, 252.0])
    tau, h, N = 1e-3, 1.8472390 / 200, 400
    tau_c = np.array([tau])
    for f in (np.tile([tau, 0.0, 0.0], (N, 1)),
              lambda t, q, v: np.array([tau, 0.0, 0.0]),
              forces.from_cfunc(force_lib.torque0, tau_c, n=3, depends_on="")):
        tr = sp.integrate(top, q0, p0, h, N, method, force=f)
        # rounding: N additions to p, each within eps |p|
        rounding = N * np.finfo(float).eps * np.max(np.abs(tr.p[:, 0]))
        dp = tr.p[-1, 0] - tr.p[0, 0]
        assert abs(dp - tau * tr.t[-1]) <= rounding
        assert np.all(tr.p[:, 2] == p0[2])
        mb = sp.analysis.momentum_balance(tr)
        assert mb.coords == (0, 2)
        assert mb.max_error <= rounding
        assert np.allclose(tr.impulse[:, 0], tau * (tr.t - tr.t[0]), rtol=0, atol=1e-16)


# ---------------------------------------------------------------- force=None is today's path
def test_force_none_is_the_unforced_path_bitwise():
    """Every method on five systems, integrate and step: bitwise the arrays
    the build before forces saved (tests/data/unforced_base.npz); skipped on
    another platform (libm may differ in the last bit)."""
    from support.unforced_cases import platform_tag, runs
    saved = np.load(pathlib.Path(__file__).resolve().parents[1] / "data" / "unforced_base.npz")
    if str(saved["platform"]) != platform_tag():
        pytest.skip(f"saved on {saved['platform']}, this is {platform_tag()}")
    now = runs(sp, force=None)
    # methods registered after the baseline (gauss2, gauss3) have no earlier build to match
    old = set(saved.files) - {"platform"}
    assert old <= set(now)
    diff = [k for k in old if not np.array_equal(now[k], saved[k])]
    assert not diff


@pytest.mark.parametrize("method", METHODS)
def test_zero_force_gives_the_unforced_trajectory(method):
    S = sp.systems.double_pendulum()
    q0, p0 = [math.pi / 4, math.pi / 3], [0.0, 0.0]
    a = sp.integrate(S, q0, p0, 0.01, 200, method)
    b = sp.integrate(S, q0, p0, 0.01, 200, method, force=lambda t, q, qd: 0 * q)
    c = sp.integrate(S, q0, p0, 0.01, 200, method, force=np.zeros((200, 2)))
    for tr in (b, c):
        assert np.max(np.abs(tr.q - a.q)) <= 1e-14 and np.max(np.abs(tr.p - a.p)) <= 1e-14
        assert np.all(tr.work == 0.0)
    assert np.all(a.work == 0.0) and a.force is None and b.force is not None


# ---------------------------------------------------------------- the Jacobian terms
def fd_newton_matrix(S, q, p, h, X, method, spec, t):
    J = np.empty((len(X), len(X)))
    for j in range(len(X)):
        d = 1e-6 * max(1.0, abs(X[j]))
        Xp, Xm = X.copy(), X.copy()
        Xp[j] += d
        Xm[j] -= d
        Rp, _ = _core.newton_system(S, q, p, h, Xp, method, force=spec, t=t)
        Rm, _ = _core.newton_system(S, q, p, h, Xm, method, force=spec, t=t)
        J[:, j] = (Rp - Rm) / (2 * d)
    return J


@pytest.mark.parametrize("method", IMPLICIT)
@pytest.mark.parametrize("with_jac", [True, False])
def test_newton_matrix_with_a_force_is_the_derivative_of_the_residual(method, with_jac):
    """dR_a/dQ_b += sum_i b_i [h B_ia B_ib dF/dq_i + B_ia D_ib dF/dqdot_i]: the
    Newton matrix against central differences of the residual, with a force
    that depends on t, q and qdot (given Jacobians, or the core's differences)."""
    S = sp.systems.double_pendulum(**DP)
    q, p, h, t = np.array([0.6, -0.4]), np.array([0.7, 0.3]), 0.05, 0.37
    spec = forces.from_callable(dp_force, dp_force_jac if with_jac else None).spec(2)
    nu = _core.newton_system(S, q, p, h, np.zeros(0 + 2 * 0) if False else
                             np.zeros(2 * (len(sp.methods(details=True)[method]["nodes"]) - 1)),
                             method)[0].size
    X = 0.03 * np.sin(np.arange(1, nu + 1))
    R, J = _core.newton_system(S, q, p, h, X, method, force=spec, t=t)
    R0, J0 = _core.newton_system(S, q, p, h, X, method)
    assert np.max(np.abs(R - R0)) > 1e-3         # the force is in the residual
    Jfd = fd_newton_matrix(S, q, p, h, X, method, spec, t)
    tol = 1e-7 if with_jac else 1e-6
    assert np.max(np.abs(J - Jfd)) <= tol * np.max(np.abs(J))


@pytest.mark.parametrize("method", METHODS)
def test_forced_tangent_map_and_newton_iterations(method):
    """The exact tangent map of a forced step (implicit function theorem with
    the force's terms; RK4: the linearised stages with dF/dq, dF/dqdot)
    against central differences of the step; with the exact Jacobian Newton
    needs about as many iterations as without a force."""
    S = sp.systems.double_pendulum(**DP)
    q, p, h, t = np.array([0.6, -0.4]), np.array([0.7, 0.3]), 0.05, 0.37
    spec = forces.from_callable(dp_force, dp_force_jac).spec(2)
    _, _, D = _core.step_tangent(S, q, p, h, method, force=spec, t=t)
    y = np.concatenate([q, p])
    Dfd = np.empty((4, 4))
    for j in range(4):
        d = 1e-6
        yp, ym = y.copy(), y.copy()
        yp[j] += d
        ym[j] -= d
        a = _core.step(S, yp[:2], yp[2:], h, method, force=spec, t=t, rtol=1e-15)
        b = _core.step(S, ym[:2], ym[2:], h, method, force=spec, t=t, rtol=1e-15)
        Dfd[:, j] = (np.concatenate(a[:2]) - np.concatenate(b[:2])) / (2 * d)
    _, _, D0 = _core.step_tangent(S, q, p, h, method)
    assert np.max(np.abs(D - D0)) > 1e-3                 # the force changes the map
    assert np.max(np.abs(D - Dfd)) <= 1e-7 * np.max(np.abs(D))
    p0 = S.mass(DP_Q0) @ DP_V0
    a = sp.integrate(S, DP_Q0, p0, 0.01, 100, method, force=dp_force, force_jac=dp_force_jac)
    b = sp.integrate(S, DP_Q0, p0, 0.01, 100, method)
    assert np.mean(a.newton_iterations) <= np.mean(b.newton_iterations) + 0.5


# ---------------------------------------------------------------- step, t, ensembles
@pytest.mark.parametrize("method", METHODS)
def test_step_is_row_one_of_integrate(method):
    S = sp.systems.double_pendulum(**DP)
    p0 = S.mass(DP_Q0) @ DP_V0
    t0 = 0.83
    tr = sp.integrate(S, DP_Q0, p0, 0.02, 1, method, t0=t0, force=dp_force)
    q1, p1 = sp.step(S, DP_Q0, p0, 0.02, method, force=dp_force, t=t0)
    assert np.array_equal(q1, tr.q[1]) and np.array_equal(p1, tr.p[1])
    F = np.array([[0.4, -0.3]])
    tr = sp.integrate(S, DP_Q0, p0, 0.02, 1, method, force=F)
    for f in (F, F[0]):
        q1, p1 = sp.step(S, DP_Q0, p0, 0.02, method, force=f)
        assert np.array_equal(q1, tr.q[1]) and np.array_equal(p1, tr.p[1])
    # a closed loop in steps equals the held array of the same samples
    N, q, p = 30, DP_Q0.copy(), p0.copy()
    us = []
    for k in range(N):
        u = np.array([-2.0 * q[0], -1.0 * q[1]])       # a sampled feedback
        us.append(u)
        q, p = sp.step(S, q, p, 0.02, method, force=u, t=0.02 * k)
    # (step starts Newton from the Taylor predictor, as predictor=False does; rk4 has no
    # predictor to turn off)
    kw = {} if method == "rk4" else dict(predictor=False)
    tr = sp.integrate(S, DP_Q0, p0, 0.02, N, method, force=np.array(us), **kw)
    assert np.array_equal(q, tr.q[-1]) and np.array_equal(p, tr.p[-1])


def test_integrate_many_forces():
    """One shared force, one held array per member, a list of forces: each
    member bitwise its own integrate run; work and impulse are stored."""
    S = sp.systems.double_pendulum()
    Q0 = np.array([[0.1, 0.2], [0.5, -0.3], [1.0, 0.4]])
    P0 = np.zeros((3, 2))
    F = np.random.default_rng(1).normal(size=(3, 50, 2))
    lst = [None, lambda t, q, v: -0.2 * v, forces.linear_damping(0.3, 2)]
    for force in (F, F[0], dp_force, lst):
        e = sp.integrate_many(S, Q0, P0, 0.01, 50, force=force, threads=2)
        for k in range(3):
            fk = force[k] if isinstance(force, list) or (isinstance(force, np.ndarray)
                                                         and force.ndim == 3) else force
            tr = sp.integrate(S, Q0[k], P0[k], 0.01, 50, force=fk)
            assert np.array_equal(tr.q, e.q[k]) and np.array_equal(tr.p, e.p[k])
            assert np.array_equal(tr.work, e.work[k])
            assert np.array_equal(tr.impulse, e.impulse[k])
    assert sp.integrate_many(S, Q0, P0, 0.01, 5).work is None


def test_forced_ensemble_keeps_the_closed_form_of_unforced_members():
    """Members of an ensemble take the closed form exactly when integrate
    alone would (only the forced ones leave it)."""
    S = sp.systems.linear_double_pendulum()
    Q0, P0 = np.array([[0.0, 0.5], [0.1, 0.2]]), np.zeros((2, 2))
    e = sp.integrate_many(S, Q0, P0, 0.025, 40, force=[None, lambda t, q, v: -0.1 * v])
    assert np.array_equal(e.q[0], sp.integrate(S, Q0[0], P0[0], 0.025, 40).q)
    assert np.array_equal(e.q[1], sp.integrate(S, Q0[1], P0[1], 0.025, 40,
                                               force=lambda t, q, v: -0.1 * v).q)
    assert np.all(e.newton_iterations[0] == 0) and np.all(e.newton_iterations[1] > 0)


# ---------------------------------------------------------------- built-in damping
def test_builtin_damping_is_joint_friction():
    """damping= of the pendulum, double pendulum and chain is -D qdot with
    D = Delta^T diag(c) Delta (relative joint rates), evaluated in C: the same
    run as the matrix written out here as a Python force."""
    c1, c2 = 0.3, 0.2
    D2 = np.array([[c1 + c2, -c2], [-c2, c2]])
    cases = [
        (sp.systems.pendulum(damping=0.4), sp.systems.pendulum(), np.array([[0.4]]), [1.0]),
        (sp.systems.double_pendulum(damping=(c1, c2)), sp.systems.double_pendulum(), D2,
         [0.5, -0.2]),
        (sp.systems.pendulum_chain(3, damping=[0.1, 0.2, 0.3]), sp.systems.pendulum_chain(3),
         np.array([[0.3, -0.2, 0.0], [-0.2, 0.5, -0.3], [0.0, -0.3, 0.3]]), [0.3, -0.2, 0.4]),
    ]
    for damped, plain, D, q0 in cases:
        assert np.allclose(damped.force.damping, D, rtol=0, atol=1e-15)
        p0 = np.zeros(len(q0))
        a = sp.integrate(damped, q0, p0, 0.01, 200)
        b = sp.integrate(plain, q0, p0, 0.01, 200, force=lambda t, q, v, D=D: -D @ v)
        assert np.max(np.abs(a.q - b.q)) <= 1e-13
        assert a.work[-1] < 0 and a.energy[-1] < a.energy[0]
    assert sp.systems.double_pendulum(damping=0.0).force is None


def test_top_pivot_friction():
    """lagrange_top(damping=c): the torque -c omega at the pivot (the C term
    "pivot_friction"), against the same force written here from
    omega = phi' e_z + theta' e_N + psi' e_3; it dissipates c |omega|^2."""
    c = 2e-5
    damped, plain = sp.systems.lagrange_top(damping=c), sp.systems.lagrange_top()
    q0 = np.array([0.0, math.pi / 3, 0.0])
    p0 = plain.mass(q0) @ np.array([9.2, 0.0, 252.0])

    def omega(q, v):
        ph, th = q[0], q[1]
        ez = np.array([0.0, 0.0, 1.0])
        eN = np.array([math.cos(ph), math.sin(ph), 0.0])
        e3 = np.array([math.sin(th) * math.sin(ph), -math.sin(th) * math.cos(ph), math.cos(th)])
        return v[0] * ez + v[1] * eN + v[2] * e3, np.stack([ez, eN, e3])

    def friction(t, q, v):
        w, J = omega(q, v)
        return J @ (-c * w)

    for m in ("simpson", "rk4", "lobatto4"):
        a = sp.integrate(damped, q0, p0, 0.002, 300, m)
        b = sp.integrate(plain, q0, p0, 0.002, 300, m, force=friction)
        assert np.max(np.abs(a.q - b.q)) <= 1e-12 and np.max(np.abs(a.work - b.work)) <= 1e-15
    v = a.qdot
    wsq = np.array([omega(q, vv)[0] @ omega(q, vv)[0] for q, vv in zip(a.q, v)])
    # work = -c integral |omega|^2: the trapezoidal sum of the nodes agrees to O(h^2)
    trap = -c * np.sum(0.5 * (wsq[1:] + wsq[:-1])) * 0.002
    assert abs(a.work[-1] - trap) <= 1e-4 * abs(trap)
    assert abs(sp.analysis.energy_balance(a).max_error) <= 1e-12


def test_damped_systems_pickle_and_describe_themselves():
    for S in (sp.systems.pendulum(damping=0.1), sp.systems.lagrange_top(damping=1e-4),
              sp.systems.pendulum_chain(4, damping=[0.1, 0, 0, 0.2])):
        R = pickle.loads(pickle.dumps(S))
        assert "damping" in repr(S) and "damping" in S.params
        q0 = np.full(S.n, 0.3)
        assert np.array_equal(sp.integrate(S, q0, np.zeros(S.n), 0.01, 20).q,
                              sp.integrate(R, q0, np.zeros(S.n), 0.01, 20).q)
    assert "pivot_friction" in forces.builtin_terms()


def test_forces_add():
    f = forces.linear_damping([0.1, 0.2]) + forces.linear_damping([[0.0, 1.0], [-1.0, 0.0]])
    assert np.array_equal(f.damping, [[0.1, 1.0], [-1.0, 0.2]])
    g = f + forces.from_callable(lambda t, q, v: np.ones(2)) + forces.zero_order_hold(np.ones((5, 2)))
    assert g.n == 2 and len(g.terms) == 1 and g.hold.shape == (5, 2) and g.python
    S = sp.systems.double_pendulum()
    a = sp.integrate(S, [0.1, 0.2], [0, 0], 0.01, 5, force=g)
    b = sp.integrate(S, [0.1, 0.2], [0, 0], 0.01, 5,
                     force=lambda t, q, v: -f.damping @ v + 2.0)
    assert np.max(np.abs(a.q - b.q)) <= 1e-14
    with pytest.raises(ValueError, match="cannot add forces of 2 and 3"):
        f + forces.linear_damping(np.eye(3))
    with pytest.raises(ValueError, match="at most 4 callback terms"):
        sum([forces.from_callable(lambda t, q, v: q)] * 5, forces.Force())


def test_partial_trajectory_keeps_the_work():
    """A force that raises at step 5: the exception propagates with a note and
    the partial trajectory keeps its work."""
    S = sp.systems.pendulum()

    def f(t, q, v):
        if t > 0.045:
            raise KeyError("stop here")
        return -0.5 * v

    with pytest.raises(KeyError) as ei:
        sp.integrate(S, [1.0], [0.0], 0.01, 20, "rk4", force=f)
    tr = ei.value.trajectory
    assert tr.n_steps == 4 and len(tr.work) == 5 and tr.work[-1] < 0
    assert "at step 4" in "".join(getattr(ei.value, "__notes__", []))


@pytest.mark.parametrize("method", ["simpson", "midpoint", "lobatto4", "rk4"])
def test_step_tangent_includes_the_systems_force_and_force_arg(method):
    """sp.step_tangent (and analysis.tangent_map "exact") of a damped system
    is the tangent map of its forced step: it agrees with central
    differences of sp.step (tangent="fd"), and force=/t= pass through."""
    S = sp.systems.double_pendulum(damping=(0.3, 0.2))
    q, p, h = np.array([0.6, -0.4]), np.array([0.7, 0.3]), 0.05
    De = sp.analysis.tangent_map(S, q, p, h, method)
    Dfd = sp.analysis.tangent_map(S, q, p, h, method, tangent="fd")
    D0 = sp.analysis.tangent_map(sp.systems.double_pendulum(), q, p, h, method)
    assert np.max(np.abs(De - D0)) > 1e-3
    assert np.max(np.abs(De - Dfd)) <= 1e-7 * np.max(np.abs(De))
    plain = sp.systems.double_pendulum(**DP)
    _, _, D = sp._run._integrate.step_tangent(plain, q, p, h, method, force=dp_force,
                                         force_jac=dp_force_jac,
                                         t=0.37)
    spec = forces.from_callable(dp_force, dp_force_jac).spec(2)
    _, _, Dc = _core.step_tangent(plain, q, p, h, method, force=spec, t=0.37)
    assert np.array_equal(D, Dc)


@pytest.mark.parametrize("method", ["midpoint", "simpson", "lobatto5"])
@pytest.mark.parametrize("newton", ["chord", "step"])
def test_forced_runs_with_chord_and_per_step_newton(method, newton):
    """newton="chord" and "step" reuse a Newton matrix that includes the
    force's Jacobian terms: the same root as full Newton, to the Newton
    tolerance (q, p to 1e-11, the work to 1e-10 of its size)."""
    S = sp.systems.double_pendulum(**DP)
    p0 = S.mass(DP_Q0) @ DP_V0
    a = sp.integrate(S, DP_Q0, p0, 0.01, 300, method, force=dp_force, force_jac=dp_force_jac)
    b = sp.integrate(S, DP_Q0, p0, 0.01, 300, method, force=dp_force, force_jac=dp_force_jac,
                     newton=newton)
    assert np.max(np.abs(a.q - b.q)) <= 1e-11 and np.max(np.abs(a.p - b.p)) <= 1e-11
    assert np.max(np.abs(a.work - b.work)) <= 1e-10 * np.max(np.abs(a.work))


# ---------------------------------------------------------------- with time spans and events
def test_force_with_t_span_events_and_thinning():
    """force= works with t_span (the same steps as n_steps) and with events
    (the forced states are located on; a terminal event ends the work too);
    t_eval and store_every keep the work and impulse at their rows."""
    S = sp.systems.pendulum(damping=0.3)
    drive = lambda t, q, v: np.array([0.8 * math.cos(1.1 * t)])          # noqa: E731
    a = sp.integrate(S, [1.0], [0.0], 0.01, 300, force=drive)
    b = sp.integrate(S, [1.0], [0.0], 0.01, t_span=(0.0, 3.0), force=drive)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.work, b.work)

    def down(t, q, p):
        return q[0]
    down.terminal = True
    down.direction = -1
    c = sp.integrate(S, [1.0], [0.0], 0.01, 300, force=drive, events=down)
    assert c.status == 1 and len(c.t_events[0]) == 1
    k = len(c.t) - 1
    assert np.array_equal(c.q, a.q[:k + 1]) and np.array_equal(c.work, a.work[:k + 1])
    assert len(c.impulse) == k + 1
    te = c.t_events[0][0]
    assert c.t[-2] < te <= c.t[-1] and abs(c.q_events[0][0][0]) <= 1e-9
    # thinned: the kept rows of the per-step run, work and impulse included
    d = sp.integrate(S, [1.0], [0.0], 0.01, 300, force=drive, store_every=3)
    for key in ("q", "p", "work", "impulse"):
        assert np.array_equal(getattr(d, key), getattr(a, key)[::3]), key
    e = sp.integrate(S, [1.0], [0.0], 0.01, 300, force=drive, t_eval=[0.5, 1.0])
    assert np.allclose(e.q, a.q[[50, 100]], rtol=0, atol=1e-14)
    assert np.allclose(e.work, a.work[[50, 100]], rtol=1e-14, atol=1e-16)
    E = sp.integrate_many(S, [[1.0]], [[0.0]], 0.01, 300, t_eval=[0.5, 1.0], force=drive)
    assert np.array_equal(E.work[0], e.work) and np.array_equal(E.q[0], e.q)


def test_forced_ensemble_with_store_every_and_events():
    """integrate_many with a force and store_every/store=k picks the stored
    rows from the member's full run (work included); unforced members of the
    same ensemble keep the C loop's thinning; bitwise integrate's rows."""
    S = sp.systems.double_pendulum()
    Q0 = np.array([[0.1, 0.2], [0.5, -0.3]])
    F = [lambda t, q, v: -0.2 * v, None]
    e = sp.integrate_many(S, Q0, np.zeros((2, 2)), 0.01, 50, force=F, store_every=7)
    idx = np.r_[np.arange(0, 51, 7), 50]
    for k in range(2):
        tr = sp.integrate(S, Q0[k], [0, 0], 0.01, 50, force=F[k])
        assert np.array_equal(e.q[k], tr.q[idx]) and np.array_equal(e.work[k], tr.work[idx])
    assert np.all(e.work[1] == 0.0) and np.array_equal(e.t, 0.01 * idx)
