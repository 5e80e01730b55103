"""Unstable step sizes named as such (issue 30, item 2).

Before the first step, integrate and integrate_many compare omega_max |h|
(omega_max: the fastest linearised mode at q0) with the method's stability
limit on the harmonic oscillator and warn; during the run the core stops an
energy growth that only an unstable step makes, with "unstable step size",
omega h and h_max in the message -- never a message blaming the user's
callback for values the integrator produced.  The limits in the registry
are checked here on the exact tangent map of the oscillator's step, and the
frequencies against eigenvalues computed here with SciPy.
"""
import contextlib
import math
import re
import warnings

import numpy as np
import pytest

import symplectic as sp
from symplectic._model import _registry
from symplectic._run import _stability

K_SPRING = 1e6                       # the stiff two-mass spring of the trial
OMEGA_SPRING = math.sqrt(2 * K_SPRING)
LIMITED = [m for m, d in sp.methods(details=True).items() if math.isfinite(d["stability"])]


def spectral_radius(method, omega_h):
    """max |eigenvalue| of the step's tangent map on q'' = -q at h = omega h."""
    S = sp.systems.linear([[1.0]], [[1.0]])
    D = sp.analysis.tangent_map(S, [0.3], [0.1], omega_h, method)
    return float(np.max(np.abs(np.linalg.eigvals(D))))


@pytest.mark.parametrize("method", LIMITED)
def test_each_limit_is_where_the_oscillators_step_turns_unstable(method):
    c = sp.methods(details=True)[method]["stability"]
    assert spectral_radius(method, 0.999 * c) <= 1 + 1e-10
    assert spectral_radius(method, 1.001 * c) > 1 + 1e-6
    for f in (0.25, 0.5, 0.9):                        # and stable below it
        assert spectral_radius(method, f * c) <= 1 + 1e-10


def test_known_limits():
    d = sp.methods(details=True)
    assert d["simpson"]["stability"] == pytest.approx(2 * math.sqrt(2), rel=1e-15)
    assert d["rk4"]["stability"] == pytest.approx(2 * math.sqrt(2), rel=1e-15)
    assert d["lobatto2"]["stability"] == 2.0
    for m in ("midpoint", "gauss2", "gauss3"):
        assert d[m]["stability"] == math.inf
        for omega_h in (1.0, 10.0, 100.0, 1e4):        # A-stable: no limit
            assert spectral_radius(m, omega_h) <= 1 + 1e-12, (m, omega_h)


@pytest.mark.parametrize("method", ["gauss2", "gauss3"])
def test_gauss_step_of_the_oscillator_is_the_diagonal_pade_approximant(method):
    """On q'' = -q the Gauss-Legendre scheme with s points is the s-stage Gauss collocation
    method: its one-step map has the eigenvalues R(+-i omega h), R the (s, s) Pade approximant
    of exp (Hairer, Lubich & Wanner, GNI II.1.3, IV.3), |R(iy)| = 1 for every y: the phase
    error is exp's to order 2s, the amplitude exact."""
    s = {"gauss2": 2, "gauss3": 3}[method]
    for y in (0.1, 1.0, 3.0, 50.0):
        z = 1j * y
        if s == 2:
            R = (1 + z / 2 + z * z / 12) / (1 - z / 2 + z * z / 12)
        else:
            R = (1 + z / 2 + z * z / 10 + z ** 3 / 120) / (1 - z / 2 + z * z / 10 - z ** 3 / 120)
        S = sp.systems.linear([[1.0]], [[1.0]])
        ev = np.linalg.eigvals(sp.analysis.tangent_map(S, [0.3], [0.1], y, method))
        assert np.min(np.abs(ev - R)) <= 1e-12 and np.min(np.abs(ev - np.conj(R))) <= 1e-12


# ---------------------------------------------------------------- the estimate
@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_omega_max_is_the_largest_generalized_eigenvalue(n):
    """(n = 1 and 2 are closed forms, larger n LAPACK: each against SciPy; K
    indefinite too -- a negative curvature is a divergence, not a frequency.)"""
    linalg = pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(7 + n)
    for shift in (0.0, -1.0):
        A, B = rng.normal(size=(n, n)), rng.normal(size=(n, n))
        M, K = A @ A.T + 3 * np.eye(n), B @ B.T + shift * np.eye(n)
        S = sp.systems.linear(M, K)
        w2 = linalg.eigh(K, M, eigvals_only=True).max()
        w = math.sqrt(max(w2, 0.0))
        est = sp.analysis.stability_estimate(S, np.zeros(n), 0.1, "lobatto4")
        assert est.omega_max == pytest.approx(w, rel=1e-12)
        assert est.omega_h == pytest.approx(0.1 * w, rel=1e-12)
        c = _registry.METHODS["lobatto4"].stability
        assert est.h_max == (math.inf if w == 0.0 else pytest.approx(c / w, rel=1e-12))
    # the papers' double pendulum at rest hanging: its frequencies written out
    L = 9.81 / (2 * math.pi) ** 2
    dp = sp.systems.double_pendulum(1.0, 1.0, L, L, 9.81)
    est = sp.analysis.stability_estimate(dp, [0.0, 0.0], 0.01)
    assert est.omega_max == pytest.approx(sp.linear.double_pendulum_frequencies()[1], rel=1e-12)


def test_a_constraint_force_makes_the_frequency():
    """The Cartesian pendulum has V = m g y (no curvature): its frequency
    sqrt(g/l) comes from the rod's tension, the multiplier's term."""
    S = sp.systems.pendulum_cartesian(m=2.0, l=0.5, g=9.81)
    est = sp.analysis.stability_estimate(S, [0.0, -0.5], 0.01, p=[0.0, 0.0])
    assert est.omega_max == pytest.approx(math.sqrt(9.81 / 0.5), rel=1e-12)
    # off the vertical, at rest: g cos(theta) / l
    th = 0.4
    est = sp.analysis.stability_estimate(S, [0.5 * math.sin(th), -0.5 * math.cos(th)], 0.01)
    assert est.omega_max == pytest.approx(math.sqrt(9.81 * math.cos(th) / 0.5), rel=1e-12)


# ---------------------------------------------------------------- the trial's stiff spring
def spring_callables():
    k = K_SPRING
    return sp.System(2, mass=lambda q: np.eye(2),
                     potential=lambda q: 0.5 * k * (q[1] - q[0] - 1.0) ** 2,
                     potential_grad=lambda q: np.array([-k * (q[1] - q[0] - 1.0),
                                                        k * (q[1] - q[0] - 1.0)]),
                     potential_hess=lambda q: k * np.array([[1.0, -1.0], [-1.0, 1.0]]))


def spring_sympy():
    sy = pytest.importorskip("sympy")
    x1, x2, v1, v2 = sy.symbols("x1 x2 v1 v2")
    return sp.System.from_sympy((v1 ** 2 + v2 ** 2) / 2 - K_SPRING / 2 * (x2 - x1 - 1) ** 2,
                                [x1, x2], [v1, v2])


@pytest.mark.parametrize("form", [spring_callables, spring_sympy])
@pytest.mark.parametrize("method", ["simpson", "lobatto4", "lobatto5", "lobatto6", "lobatto7",
                                    "lobatto2", "rk4"])
def test_the_stiff_spring_at_omega_h_14_warns_then_names_an_unstable_step(form, method):
    """Two masses joined by a spring of k = 1e6 at omega h = 14: Simpson used
    to grow x 1e40 every 20 steps for 138 steps and then blame the callback
    (potential_grad returned a non-finite value at q = [-2.8e302, ...])."""
    S = form()
    h = 14.0 / OMEGA_SPRING
    # rk4's run grows until the Python callables' arithmetic overflows (on purpose: the
    # error must name the step size, not the callback); NumPy's overflow warnings are that
    with np.errstate(over="ignore", invalid="ignore"), \
            pytest.warns(sp.StabilityWarning, match="omega_max h = 14 at q0") as rec:
        with pytest.raises(sp.ConvergenceError) as info:
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], h, 1000, method)
    c = sp.methods(details=True)[method]["stability"]
    assert f"h_max = {c / OMEGA_SPRING:g}" in str(rec[0].message)
    err = info.value
    assert err.reason.startswith("unstable step size"), err.reason
    if method != "rk4":                    # the core's balance check: within 20 steps
        assert err.step < 20 and "omega_max h = 14" in err.reason
        assert f"h_max = {c / OMEGA_SPRING:g}" in err.reason
    for word in ("potential_grad", "callback", "returned"):
        assert word not in str(err)
    # on every partial trajectory; where rk4's rows overflowed, nan with a warning saying so
    overflowed = method == "rk4" and form is spring_callables
    with pytest.warns(RuntimeWarning, match="overflowed, nan there") if overflowed else \
            contextlib.nullcontext(), np.errstate(over="ignore", invalid="ignore"):
        E = err.trajectory.energy
    assert len(E) == err.step + 1


@pytest.mark.parametrize("form", [spring_callables, spring_sympy])
@pytest.mark.parametrize("method,omega_h", [("midpoint", 14.0), ("gauss2", 14.0),
                                            ("gauss3", 14.0), ("gauss2", 141.0),
                                            ("gauss3", 141.0)])
def test_the_a_stable_rules_return_a_bounded_trajectory(form, method, omega_h):
    """No limit: bounded -- with the one warning that the spring's phase is not resolved
    (omega h >= 2 pi), never the stability limit's."""
    S = form()
    h = omega_h / OMEGA_SPRING
    with pytest.warns(sp.StabilityWarning) as rec:
        tr = sp.integrate(S, [0.0, 1.001], [0.0, 0.0], h, 1000, method)
    assert len(rec) == 1, [str(w.message) for w in rec]
    msg = str(rec[0].message)
    assert msg.startswith(f"{method} with |h| = {h:g} s does not resolve the fastest mode")
    assert f"omega_max h = {omega_h:.3g} at q0" in msg and "stability limit for" not in msg
    assert np.max(np.abs(tr.q[:, 1] - tr.q[:, 0] - 1.0)) <= 1.001e-3
    assert np.max(np.abs(tr.energy - tr.energy[0])) <= 1e-9 * tr.energy[0]


def test_no_warning_below_the_limit_for_every_method():
    """(Below the limit, and for the methods without one below 2 pi, where the warning that
    the fastest mode is not resolved starts.)"""
    S = spring_callables()
    for m, d in sp.methods(details=True).items():
        c = min(d["stability"], 2 * math.pi)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], 0.9 * c / OMEGA_SPRING, 30, m)
    ens_h = 1.1 * 2 * math.sqrt(2) / OMEGA_SPRING
    with pytest.warns(sp.StabilityWarning):                # integrate_many warns too
        sp.integrate_many(S, [[0.0, 1.001]], [[0.0, 0.0]], ens_h, 3, "simpson",
                          errors="mark")


def test_integrate_many_names_the_unstable_member():
    S = spring_callables()
    with pytest.warns(sp.StabilityWarning):
        with pytest.raises(sp.ConvergenceError, match=r"ensemble member 1.*unstable step size"):
            sp.integrate_many(S, [[0.0, 1.0], [0.0, 1.001]], np.zeros((2, 2)),
                              14.0 / OMEGA_SPRING, 100, "simpson")


# ---------------------------------------------------------------- the unresolved fast phase
UNLIMITED = [m for m, d in sp.methods(details=True).items() if d["stability"] == math.inf]


def pade_phase(method, omega_h):
    """The phase per step of the (s, s) Pade approximant of exp written out (s = 1: the
    midpoint rule), unwrapped along omega h from 0 (independent of _stability.phase, which
    sums over the roots)."""
    s = {"midpoint": 1, "gauss2": 2, "gauss3": 3}[method]
    y = np.linspace(0.0, omega_h, 20001)
    z = 1j * y
    num = {1: 1 + z / 2, 2: 1 + z / 2 + z * z / 12,
           3: 1 + z / 2 + z * z / 10 + z ** 3 / 120}[s]
    return float(np.unwrap(np.angle(num / np.conj(num)))[-1])


def eigen_phases(method, omega_h):
    """exp(+-i phase): the eigenvalues of the method's own step map on q'' = -q at h = omega h."""
    S = sp.systems.linear([[1.0]], [[1.0]])
    return np.linalg.eigvals(sp.analysis.tangent_map(S, [0.3], [0.1], omega_h, method))


def test_the_methods_without_a_limit():
    assert sorted(UNLIMITED) == ["gauss2", "gauss3", "midpoint"]


@pytest.mark.parametrize("method", UNLIMITED)
def test_the_phase_per_step_is_the_step_map_s(method):
    """_stability.phase is each method's own: exp(+-i phase) are the eigenvalues of its step
    map on the oscillator, and the phase is the one unwrapped along omega h (the Pade
    approximant's written out; the midpoint rule's is 2 atan(omega h / 2))."""
    m = _registry.METHODS[method]
    for y in (0.05, 0.3, 1.0, 3.0, math.pi, 2 * math.pi, 9.0, 14.0, 50.0, 141.0):
        th = _stability.phase(m, y)
        ev = eigen_phases(method, y)
        for sign in (1, -1):
            assert np.min(np.abs(ev - np.exp(sign * 1j * th))) <= 1e-10, (method, y)
        assert th == pytest.approx(pade_phase(method, y), rel=1e-9, abs=1e-12)
        assert 0.0 < th < y                                   # the numerical phase lags
        if method == "midpoint":
            assert th == pytest.approx(2 * math.atan(y / 2), rel=1e-14)
        assert _stability.phase(m, -y) == th                  # |h|


def test_the_threshold_s_numbers():
    """The shortfall of the phase at omega h = 2 pi that RESOLUTION's comment states (59.8 %,
    30.0 %, 11.1 %), from the step maps' eigenvalues exp(+-i a), 0 <= a <= pi: the phase is a
    for the midpoint rule (below pi for every omega h), 2 pi - a for the Gauss rules, which have
    turned past half a turn there (pade_phase); the finite limits below 2 pi but lobatto7's."""
    assert _stability.RESOLUTION == 2 * math.pi
    y = 2 * math.pi
    for method, short in (("midpoint", 0.598), ("gauss2", 0.300), ("gauss3", 0.111)):
        a = float(np.max(np.abs(np.angle(eigen_phases(method, y)))))
        th = a if method == "midpoint" else 2 * math.pi - a
        assert th == pytest.approx(pade_phase(method, y), rel=1e-9)
        assert 1 - th / y == pytest.approx(short, abs=5e-4), method
    # the finite limits below 2 pi but lobatto7's (9.27: from 2 pi to it the phase's warning)
    limits = {m: d["stability"] for m, d in sp.methods(details=True).items()
              if math.isfinite(d["stability"])}
    assert 2 * math.pi < limits.pop("lobatto7") < 3 * math.pi
    assert max(limits.values()) < 2 * math.pi


def test_lobatto7_between_2_pi_and_its_limit_warns_that_the_phase_is_not_resolved():
    """lobatto7's limit (9.27) is above 2 pi: a step at omega h = 8 is stable (the spring's
    extension bounded by its start's) and gets the unresolved phase's warning, not the limit's; at 9.5 the limit's."""
    S = spring_callables()
    h = 8.0 / OMEGA_SPRING
    with pytest.warns(sp.StabilityWarning) as rec:
        tr = sp.integrate(S, [0.0, 1.001], [0.0, 0.0], h, 300, "lobatto7")
    assert len(rec) == 1, [str(w.message) for w in rec]
    msg = str(rec[0].message)
    assert msg.startswith(f"lobatto7 with |h| = {h:g} s does not resolve the fastest mode")
    assert "below lobatto7's stability limit (9.27)" in msg and "omega_max h = 8 at q0" in msg
    assert np.max(np.abs(tr.q[:, 1] - tr.q[:, 0] - 1.0)) <= 1.001e-3     # bounded
    with pytest.warns(sp.StabilityWarning, match="at or beyond its stability limit"):
        with pytest.raises(sp.ConvergenceError):
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], 9.5 / OMEGA_SPRING, 300, "lobatto7")


@pytest.mark.parametrize("method", UNLIMITED)
def test_no_limit_warns_that_the_fast_phase_is_not_resolved(method):
    """Two masses and springs (omega_max from SciPy's generalized eigenvalues) at omega h = 50:
    the warning gives omega_max, omega_max h, the phase per step against the exact and the h
    that resolves the mode (two steps a period, the phase within 1 %: found here by SciPy's
    root finder on the written-out approximant)."""
    linalg = pytest.importorskip("scipy.linalg")
    optimize = pytest.importorskip("scipy.optimize")
    M, K = np.diag([1.0, 2.0]), np.array([[3e6, -1e6], [-1e6, 1e6]])
    w = math.sqrt(linalg.eigh(K, M, eigvals_only=True).max())
    S = sp.systems.linear(M, K)
    h = 50.0 / w
    with pytest.warns(sp.StabilityWarning) as rec:
        tr = sp.integrate(S, [1e-3, 0.0], [0.0, 0.0], h, 20, method)
    assert len(rec) == 1 and tr.status == 0
    msg = str(rec[0].message)
    th = pade_phase(method, 50.0)
    f = lambda y: 1 - pade_phase(method, y) / y - 0.01
    y_res = min(optimize.brentq(f, 0.05, 2 * math.pi), math.pi) if f(math.pi) > 0 else math.pi
    for words in (f"{method} with |h| = {h:g} s does not resolve the fastest mode",
                  f"omega_max h = 50 at q0 (omega_max = {w:g} rad/s",
                  f"{50 / (2 * math.pi):.3g} of its periods per step",
                  "has no stability limit, so the mode stays bounded",
                  f"the step turns it by {th:.3g} rad instead of 50",
                  f"a frequency of {th / h:.3g} rad/s instead of {w:g}",
                  f"h <= {y_res / w:.3g} s resolves it"):
        assert words in msg, (words, msg)
    # the midpoint rule: 2 atan(25) = 3.06 rad a step; its 1 % in phase at omega h = 0.350
    if method == "midpoint":
        assert "turns it by 3.06 rad" in msg and f"h <= {0.3496 / w:.3g} s" in msg


def test_the_resolution_warning_starts_at_2_pi_for_each_entry_point():
    S = spring_callables()
    below, at = 0.999 * 2 * math.pi / OMEGA_SPRING, 2 * math.pi / OMEGA_SPRING
    for m in UNLIMITED:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], below, 3, m)
        with pytest.warns(sp.StabilityWarning, match=f"^{m} with .* does not resolve"):
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], at, 3, m)
    with pytest.warns(sp.StabilityWarning, match="does not resolve the fastest mode"):
        sp.integrate_many(S, [[0.0, 1.001]], [[0.0, 0.0]], 10 * at, 3, "gauss2")
    with pytest.warns(sp.StabilityWarning, match="does not resolve the fastest mode"):
        sp.Integrator(S, 10 * at, [0.0, 1.001], [0.0, 0.0], method="midpoint")
    # a method with a limit keeps its own warning alone, however large omega h
    with pytest.warns(sp.StabilityWarning) as rec:
        with pytest.raises(sp.ConvergenceError):
            sp.integrate(S, [0.0, 1.001], [0.0, 0.0], 10 * at, 3, "lobatto5")
    assert len(rec) == 1 and "at or beyond its stability limit" in str(rec[0].message)


# ---------------------------------------------------------------- the unstable step's numbers
K_HARD = 1e4                              # V = q^2/2 + K_HARD q^4/4: stiffer as |q| grows


def hardening_spring():
    def V(q):
        with np.errstate(all="ignore"):
            return 0.5 * q[0] ** 2 + 0.25 * K_HARD * q[0] ** 4

    def dV(q):
        with np.errstate(all="ignore"):
            return np.array([q[0] + K_HARD * q[0] ** 3])

    def d2V(q):
        with np.errstate(all="ignore"):
            return np.array([[1.0 + 3.0 * K_HARD * q[0] ** 2]])

    return sp.System(1, np.eye(1), V, potential_grad=dV, potential_hess=d2V)


def named_frequencies(text):
    return [float(x) for x in re.findall(r"omega_max = ([0-9.e+-]+) rad/s", text)]


@pytest.mark.parametrize("method", ["rk4", "simpson", "lobatto2"])
def test_an_unstable_run_names_the_start_s_estimate(method):
    """The hardening spring from q0 = 1 (omega_max^2 = V'' = 1 + 3 K: 173 rad/s) at h = 0.05,
    past the limit: the error gives the warning's omega_max and h_max, at the run's start, and
    says that the failing step's state had grown from there -- rk4's used to give the blown-up
    state's omega_max = 1.7e30 rad/s and h_max = 1.7e-30 s."""
    w0, h = math.sqrt(1.0 + 3.0 * K_HARD), 0.05
    c = sp.methods(details=True)[method]["stability"]
    with pytest.warns(sp.StabilityWarning) as rec:
        with pytest.raises(sp.ConvergenceError) as info:
            sp.integrate(hardening_spring(), [1.0], [0.0], h, 3000, method)
    warned, reason = str(rec[0].message), info.value.reason
    assert reason.startswith("unstable step size"), reason
    for words in (f"omega_max h = {w0 * h:.3g}", f"(omega_max = {w0:g} rad/s",
                  f"h_max = {c / w0:g} s"):
        assert words in warned and words in reason, (words, reason)
    assert f"omega_max h = {w0 * h:.3g} at the run's start" in reason
    assert named_frequencies(reason) == [pytest.approx(w0, rel=1e-5)]
    if info.value.step > 0:
        assert "the state had grown far from the run's start (energy" in reason


def test_a_state_near_the_start_adds_its_own_estimate():
    """The five-link pendulum chain from q = 0.3 at rest, Simpson at h = 0.3 (omega h = 3.27 >
    2 sqrt 2 at the start): Newton fails some steps in, at a state whose energy is still the
    start's -- both estimates, the start's first; each omega_max from SciPy's generalized
    eigenvalues of the chain's M(q) and hess V(q) written out."""
    linalg = pytest.importorskip("scipy.linalg")
    n, g, h = 5, 9.81, 0.3

    def omega(q):
        i = np.arange(n)
        M = (n - np.maximum.outer(i, i)) * np.cos(np.subtract.outer(q, q))
        return math.sqrt(linalg.eigh(np.diag(g * (n - i) * np.cos(q)), M,
                                     eigvals_only=True).max())

    S = sp.systems.pendulum_chain(n)
    q0 = np.full(n, 0.3)
    with pytest.warns(sp.StabilityWarning):
        with pytest.raises(sp.ConvergenceError) as info:
            sp.integrate(S, q0, np.zeros(n), h, 3000, "simpson")
    err = info.value
    c = 2 * math.sqrt(2)
    w0, w1 = omega(q0), omega(err.trajectory.q[-1])
    t1 = err.trajectory.t[-1]
    assert err.reason.startswith(f"unstable step size: omega_max h = {w0 * h:.3g} at the run's "
                                 f"start (omega_max = {w0:g} rad/s"), err.reason
    assert f"h_max = {c / w0:g} s; at t = {t1:.6g} (the failing step's start): omega_max h = " \
           f"{w1 * h:.3g} (omega_max = {w1:g} rad/s, h_max = {c / w1:g} s)" in err.reason
    assert "grown" not in err.reason


def test_a_linear_system_s_error_repeats_the_warning_s_numbers():
    """rk4 past its limit on two masses and springs (omega_max from SciPy): the numbers of the
    warning and of the error agree; the state ran off (to ~1e300)."""
    linalg = pytest.importorskip("scipy.linalg")
    M, K = np.diag([1.0, 2.0]), np.array([[3e4, -1e4], [-1e4, 1e4]])
    w = math.sqrt(linalg.eigh(K, M, eigvals_only=True).max())
    h = 5.0 / w
    with pytest.warns(sp.StabilityWarning, match=f"omega_max = {w:g} rad/s"):
        with pytest.raises(sp.ConvergenceError) as info:
            sp.integrate(sp.systems.linear(M, K), [1.0, 0.0], [0.0, 0.0], h, 5000, "rk4")
    reason = info.value.reason
    assert reason.startswith(f"unstable step size: omega_max h = 5 at the run's start "
                             f"(omega_max = {w:g} rad/s"), reason
    assert f"h_max = {2 * math.sqrt(2) / w:g} s" in reason
    assert named_frequencies(reason) == [pytest.approx(w, rel=1e-5)]
