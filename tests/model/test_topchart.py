"""The ZXZ top's pre-run check (symplectic/_model/_topchart.py): the nutation range
it computes from (q0, p0) against exact.LagrangeTop's turning points and
against the rigid-body reference (DOP853 at 1e-13, its extremes of theta
located as the roots of d(axis_z)/dt), and its decisions on the edge cases:
the sleeping branch p_phi = +-p_psi through a pole, a state at a turning
point, steady precession (a double root), a root exactly at u = 1 that the
motion does not reach, motions passing 12-20 mrad (run) and 9.8 mrad
(refused).  Expected values come from the exact solution, the reference or
textbook formulas written here.
"""
import math

import numpy as np
import pytest

import symplectic as sp
from support.rigid_body_ref import RigidBodyTop, euler_zxz, rotate
from support.models import TOP, TOP_Q0, TOP_QDOT0
from support.top import SLOW, near_vertical_momenta, slow_momenta, turning_point_roots
from symplectic._model import _topchart


def rates(params, q, p):
    """The Euler rates of canonical momenta, from the textbook formulas:
    thetadot = p_theta / I, phidot = (p_phi - p_psi cos) / (I sin^2),
    psidot = p_psi / I3 - phidot cos."""
    I, I3 = params["I"], params["I3"]
    s, c = math.sin(q[1]), math.cos(q[1])
    phid = (p[0] - p[2] * c) / (I * s * s)
    return np.array([phid, p[1] / I, p[2] / I3 - phid * c])


def reference_range(params, q0, p0, t_end):
    """(min, max) of theta over [0, t_end] of the rigid-body reference."""
    from scipy.integrate import solve_ivp
    rb = RigidBodyTop(**params)
    Q0, W0 = euler_zxz(q0, rates(params, q0, p0))

    def turning(t, y):                 # d(axis_z)/dt = (Q (Omega x e3) Q*)_z
        return rotate(y[:4], np.array([y[5], -y[4], 0.0]))[2]

    sol = solve_ivp(rb.rhs, (0.0, t_end), np.concatenate([Q0, W0]), method="DOP853",
                    rtol=1e-13, atol=1e-13, events=turning)
    assert sol.success
    Q = np.vstack([sol.y_events[0][:, :4], sol.y[:4, [0, -1]].T])
    a = rb.axis(Q)
    th = np.arctan2(np.hypot(a[:, 0], a[:, 1]), a[:, 2])
    return float(th.min()), float(th.max())


def passing(theta_min, params=SLOW, p_psi=SLOW["I3"] * 20.0, side=-1):
    """p at q0 = (0, pi/3, 0), thetadot0 = 0, whose nutation reaches theta_min
    (tests/test_quaternion_top.near_vertical_momenta, with the root nearest
    p_psi on the side asked for: the quadratic in b = p_phi / I whose roots
    make cos(theta_min) a turning point)."""
    roots, a = turning_point_roots(theta_min, params, p_psi)
    b = min((r for r in roots if np.sign(r - a) == side), key=lambda r: abs(r - a))
    return np.array([b * params["I"], 0.0, p_psi])


def exact_range(params, q0, p0):
    ex = sp.exact.LagrangeTop(q0, p0, **params)
    return math.acos(ex.u_range[1]), math.acos(ex.u_range[0])


def steady_precession(params, theta0, p_psi, which):
    """p of steady precession at theta0: m g l = phidot (p_psi - I phidot cos theta0)."""
    I, mgl = params["I"], params["m"] * params["g"] * params["l"]
    c = math.cos(theta0)
    r = np.roots([I * c, -p_psi, mgl]).real
    phid = sorted(r)[which]
    return np.array([I * math.sin(theta0) ** 2 * phid + p_psi * c, 0.0, p_psi])


CASES = {
    "table3": (TOP, TOP_Q0, lambda: sp.systems.lagrange_top(**TOP).momentum(TOP_Q0, TOP_QDOT0)),
    "2 mrad": (TOP, TOP_Q0, lambda: near_vertical_momenta(0.002)),
    "12 mrad above": (TOP, TOP_Q0, lambda: near_vertical_momenta(0.012, +1)),
    "slow 2 mrad": (SLOW, TOP_Q0, slow_momenta),
    "slow 15 mrad": (SLOW, TOP_Q0, lambda: passing(0.015)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_range_is_exact_lagrange_tops(case):
    params, q0, p = CASES[case]
    p0 = p()
    got = _topchart.theta_range(q0, p0, **params)
    want = exact_range(params, q0, p0)
    # measured <= 1.2e-10 (2 mrad on Table 3's top, where exact.LagrangeTop's
    # roots, from np.roots in u - u0 and Newton, are the less accurate: see below)
    assert got == pytest.approx(want, abs=1e-8, rel=0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_range_in_50_digits(case):
    """The turning points by bisection on f(u) in 50-digit arithmetic
    (mpmath), from the same float inputs: relative 1e-12 in theta (measured
    <= 3.2e-13; exact.LagrangeTop is 5.8e-8 off at Table 3's 2 mrad)."""
    mp = pytest.importorskip("mpmath").mp
    params, q0, p = CASES[case]
    p0 = p()
    with mp.workdps(50):
        I = mp.mpf(params["I"])
        mgl = mp.mpf(params["m"]) * mp.mpf(params["g"]) * mp.mpf(params["l"])
        u0, s0 = mp.cos(mp.mpf(q0[1])), mp.sin(mp.mpf(q0[1]))
        a, b, beta = mp.mpf(p0[2]) / I, mp.mpf(p0[0]) / I, 2 * mgl / I
        gam = (mp.mpf(p0[1]) / I) ** 2 + ((b - a * u0) / s0) ** 2

        def f(u):
            return (1 - u * u) * (gam + beta * (u0 - u)) - (b - a * u) ** 2

        ends = []
        for far in (1, -1):
            near, out = u0, mp.mpf(far)          # f(near) >= 0 >= f(out)
            for _ in range(200):
                mid = (near + out) / 2
                near, out = (mid, out) if f(mid) > 0 else (near, mid)
            ends.append(float(mp.acos(near)))
    got = _topchart.theta_range(q0, p0, **params)
    assert got == pytest.approx(tuple(ends), rel=1e-12, abs=0)


@pytest.mark.parametrize("case", ["slow 2 mrad", "slow 15 mrad"])
def test_range_is_the_rigid_body_references(case):
    """One nutation period and a half of the reference (DOP853, 1e-13):
    min and max theta within 1e-8 (measured ~1e-11)."""
    pytest.importorskip("scipy")
    params, q0, p = CASES[case]
    p0 = p()
    T = sp.exact.LagrangeTop(q0, p0, **params).period
    got = _topchart.theta_range(q0, p0, **params)
    ref = reference_range(params, q0, p0, 1.5 * T)
    assert got == pytest.approx(ref, abs=1e-8, rel=0)


def test_states_anywhere_in_the_nutation():
    """From the exact solution's state at several times of the slow 15 mrad
    motion (thetadot of either sign, one at each turning point with
    thetadot = 0 exactly), the range is the same."""
    params, q0, p0 = SLOW, TOP_Q0, passing(0.015)
    ex = sp.exact.LagrangeTop(q0, p0, **params)
    want = exact_range(params, q0, p0)
    ts = ex.t_turn + ex.period * np.array([0.0, 0.13, 0.37, 0.5, 0.71, 0.94])
    q, p = ex.state(ts)
    for k in range(len(ts)):
        pk = p[k].copy()
        if k in (0, 3):                    # exactly at the turning points
            pk[1] = 0.0
            q[k, 1] = want[1] if k == 0 else want[0]
        got = _topchart.theta_range(q[k], pk, **params)
        assert got == pytest.approx(want, abs=1e-9, rel=0), k
        assert _topchart.refusal(sp.systems.lagrange_top(**params).params, q[k], pk) is None


def test_sleeping_branch_through_the_vertical_is_refused():
    """p_phi = p_psi exactly: f(1) = 0 and f > 0 below it, the axis passes
    through theta = 0 (the reference's min theta < 1e-8); the range starts at
    0 and every entry point refuses, naming 0 mrad of the vertical."""
    pytest.importorskip("scipy")
    params = SLOW
    p_psi = SLOW["I3"] * 20.0
    p0 = np.array([p_psi, 2e-4, p_psi])
    lo, hi = _topchart.theta_range(TOP_Q0, p0, **params)
    assert lo == 0.0
    ref = reference_range(params, TOP_Q0, p0, 1.0)
    assert ref[0] < 1e-8 and hi == pytest.approx(ref[1], abs=1e-8)
    top = sp.systems.lagrange_top(**params)
    with pytest.raises(sp.ConvergenceError, match=r"within 0 mrad of the vertical.*< 0\.01"):
        sp.integrate(top, TOP_Q0, p0, 0.01, 10)


def test_through_theta_pi_is_refused():
    """p_phi = -p_psi: the axis passes through theta = pi (a top swinging
    down through the hanging position); 15 mrad from it is not refused."""
    params = SLOW
    q0 = np.array([0.0, 2 * math.pi / 3, 0.0])
    p_psi = SLOW["I3"] * 20.0
    p0 = np.array([-p_psi, 0.0, p_psi])
    lo, hi = _topchart.theta_range(q0, p0, **params)
    assert hi == math.pi and lo == pytest.approx(2 * math.pi / 3, abs=1e-12)
    top = sp.systems.lagrange_top(**params)
    with pytest.raises(sp.ConvergenceError, match=r"within 0 mrad of theta = pi"):
        sp.step(top, q0, p0, 0.01)
    # the mirror image of a 15 mrad motion near the vertical: (theta, p_phi) -> (pi - theta, -p_phi)
    # is the same motion with g -> -g
    flipped = dict(SLOW, g=-SLOW["g"])
    p15 = passing(0.015)
    qm, pm = np.array([0.0, math.pi - TOP_Q0[1], 0.0]), np.array([-p15[0], 0.0, p15[2]])
    lo, hi = _topchart.theta_range(qm, pm, **flipped)
    assert math.pi - hi == pytest.approx(0.015, rel=1e-6)
    sp.integrate(sp.systems.lagrange_top(**flipped), qm, pm, 0.001, 700)   # one period


def test_root_at_one_not_reached_is_not_refused():
    """p_phi = p_psi exactly but a slow spin (p^2 < 3 I m g l at theta0 = pi/3,
    thetadot0 = 0): u = 1 is the cubic's third root, which the motion does
    not reach; it falls from 60 degrees.  Not refused; range from exact."""
    params = TOP
    p = 0.02
    assert p * p < 3 * TOP["I"] * TOP["m"] * TOP["g"] * TOP["l"]
    p0 = np.array([p, 0.0, p])
    ex = sp.exact.LagrangeTop(TOP_Q0, p0, **params)
    assert max(ex.roots) == pytest.approx(1.0, abs=1e-12)
    got = _topchart.theta_range(TOP_Q0, p0, **params)
    assert got == pytest.approx(exact_range(params, TOP_Q0, p0), abs=1e-10, rel=0)
    assert got[0] == pytest.approx(math.pi / 3, abs=1e-12)
    sp.integrate(sp.systems.lagrange_top(**params), TOP_Q0, p0, 0.01, 100)


@pytest.mark.parametrize("theta0", [0.015, 0.3, 2.5])
@pytest.mark.parametrize("which", [0, 1])
def test_steady_precession_is_a_point(theta0, which):
    """A double root at u0 (steady precession, both precession rates): the
    range is theta0 itself (to 1e-7: a double root moves by sqrt(rounding)),
    not refused at 15 mrad, and the ZXZ run keeps theta there."""
    params = SLOW
    p0 = steady_precession(params, theta0, SLOW["I3"] * 400.0, which)
    q0 = np.array([0.0, theta0, 0.0])
    lo, hi = _topchart.theta_range(q0, p0, **params)
    assert lo == pytest.approx(theta0, abs=1e-7) and hi == pytest.approx(theta0, abs=1e-7)
    tr = sp.integrate(sp.systems.lagrange_top(**params), q0, p0, 1e-3, 200)
    assert np.max(np.abs(tr.q[:, 1] - theta0)) < 1e-5


@pytest.mark.parametrize("theta_min, refused", [(0.0098, True), (0.0102, False), (0.012, False),
                                                (0.015, False), (0.02, False)])
def test_threshold(theta_min, refused):
    """The slow top passing 9.8 mrad from the vertical is refused before the
    first step, 10.2 ... 20 mrad run (simpson, h = 0.001, one nutation
    period; at h = 0.01 the computed motion's own error takes those passing
    at 10.2-15 mrad inside the disc, where the pointwise check refuses)."""
    top = sp.systems.lagrange_top(**SLOW)
    p0 = passing(theta_min)
    assert _topchart.theta_range(TOP_Q0, p0, **SLOW)[0] == pytest.approx(theta_min, rel=1e-6)
    T = sp.exact.LagrangeTop(TOP_Q0, p0, **SLOW).period
    if refused:
        with pytest.raises(sp.ConvergenceError, match=r"within 9\.8 mrad of the vertical"):
            sp.integrate(top, TOP_Q0, p0, 0.001, int(T / 0.001))
    else:
        tr = sp.integrate(top, TOP_Q0, p0, 0.001, int(T / 0.001))
        assert np.all(np.isfinite(tr.q))


def test_mirror_state_and_the_threshold_constant():
    """theta0 -> -theta0 with p_theta -> -p_theta is the same motion; the
    threshold is the core's (0.01, SYM_TOP_MIN_SIN): the C evaluation refuses
    |sin theta| just below it and accepts just above."""
    p0 = passing(0.015)
    a = _topchart.theta_range(TOP_Q0, p0, **SLOW)
    b = _topchart.theta_range(-TOP_Q0, p0 * [1, -1, 1], **SLOW)
    assert a == pytest.approx(b, abs=1e-14)
    assert _topchart.MIN_SIN == 0.01
    top = sp.systems.lagrange_top(**SLOW)
    with pytest.raises(ValueError, match="coordinate singularity"):
        top.mass([0.0, math.asin(0.01 * (1 - 1e-12)), 0.0])
    top.mass([0.0, math.asin(0.01 * (1 + 1e-12)), 0.0])


def test_forced_or_damped_top_is_left_to_the_pointwise_check():
    """Under a force (force= or the top's own damping) E, p_phi and p_psi are
    not conserved, so the cubic does not describe the motion: the pre-run
    check stands aside and the C core's pointwise check alone can refuse."""
    from symplectic._model import _validate
    p0 = slow_momenta()
    top = sp.systems.lagrange_top(**SLOW)
    assert _validate.chart(top, TOP_Q0, p0) is not None          # refused unforced
    damped = sp.systems.lagrange_top(**SLOW, damping=1e-9)
    assert _validate.chart(damped, TOP_Q0, p0) is None
    assert _validate.chart(top, TOP_Q0, p0, force=object()) is None
    # and the run is then stopped by the pointwise check at the approach, not at t0
    with pytest.raises(sp.ConvergenceError, match="coordinate singularity") as err:
        sp.integrate(damped, TOP_Q0, p0, 0.01, 200)
    assert err.value.step > 0
