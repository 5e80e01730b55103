"""Runs of rigid-body trees from URDF (issue 49): ``symplectic.multibody.from_urdf``'s built-in
C tree against the same Lagrangian through ``System.from_sympy``, and what the schemes promise
on it.

The same Lagrangian: tests/support/urdf_reference.py writes M(q) and V(q) of each test robot
(tests/data/urdf/) in SymPy, independently of symplectic.multibody (its M, V and dV/dq are
checked against it in test_tree_reference.py); ``from_sympy`` derives and compiles every
derivative from them.  A 1-second run from a moving start of each robot then equals that
system's run to 1e-10 (simpson, lobatto5), with the mimic joints as constraints too.  On arm6:
the fitted orders of the state and of the energy error against a fine lobatto5 run of the
SymPy system (2, 4, 6, 8 within 0.3).  With joint damping and a driving torque, energy - work
is conserved to the scheme's order (and the damping equals the Rayleigh function
1/2 sum c_i qdot_i^2 of the SymPy system); ``tangent=True`` equals central differences of the
run.  SymPy's derivation of the second derivatives takes ~15 s for fixed, ~30 s for branched
and ~3 min for arm7: their reference values are stored (tests/support/urdf_runs.py, which
writes them; a slow test reproduces fixed's live).
"""
import functools
from pathlib import Path

import numpy as np
import pytest

import symplectic as sp
from symplectic import forces

pytest.importorskip("sympy")

from support.differences import central_differences  # noqa: E402
from support.models import fitted_order  # noqa: E402
from support.urdf_reference import cached_reference, cached_system  # noqa: E402
from support.urdf_runs import (STORED, compute, moving_start, path,  # noqa: E402
                               reference_derivatives, reference_run, reference_values)

ROBOTS = ["planar_chain_5", "prismatic", "mimic", "arm6", "fixed", "branched", "arm7"]
RUN_TOL = 1e-10


def from_urdf(*args, **kw):
    from symplectic.multibody import from_urdf as make
    return make(*args, **kw)


def reference(name):
    return cached_reference(path(name))


def reference_system(name, mimic="independent"):
    """The reference's M and V through from_sympy (derived and compiled once per session)."""
    return cached_system(path(name), mimic)


def run_error(a, b):
    """(q error relative to the largest |q|, at least 1; p error relative to the largest |p|)."""
    return state_error(a.q, a.p, b.q, b.p)


def state_error(aq, ap, bq, bp):
    eq = np.max(np.abs(aq - bq)) / max(1.0, np.max(np.abs(bq)))
    ep = np.max(np.abs(ap - bp)) / np.max(np.abs(bp))
    return float(eq), float(ep)


# ====================================================================== against from_sympy
@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
@pytest.mark.parametrize("name", ROBOTS)
def test_one_second_equals_the_sympy_lagrangian(name, method):
    """The tree's run against the reference's (stored for fixed, branched, arm7)."""
    q0, p0, bq, bp = reference_run(name, method)
    a = sp.integrate(from_urdf(path(name)), q0, p0, 0.01, 100, method=method)
    assert np.max(np.abs(bq[-1] - q0)) > 0.1             # it moved
    eq, ep = state_error(a.q, a.p, bq, bp)
    assert max(eq, ep) < RUN_TOL, (eq, ep)


@pytest.mark.slow
def test_a_stored_reference_is_reproduced():
    """fixed's stored reference values against the same computed now (SymPy, ~15 s): the
    stored file is what tests/support/urdf_runs.py writes, and the engine still runs the
    SymPy system as it did then."""
    stored, live = reference_values("fixed"), compute("fixed")
    assert sorted(stored) == sorted(live)
    for k, v in live.items():
        assert np.allclose(stored[k], v, rtol=1e-12, atol=1e-12 * np.max(np.abs(v))), k
    assert set(STORED) == {"fixed", "branched", "arm7"}


@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
def test_mimic_constraints_run_like_the_sympy_constraints(method):
    """mimic="constraint": the gripper from a state on the manifold; the states and the
    multipliers equal those of the SymPy system with g = q_j - a q_k - b, and the mimic
    relations hold along the run."""
    S, R = from_urdf(path("mimic"), mimic="constraint"), reference_system("mimic", "constraint")
    q0, p0 = moving_start("mimic", "constraint")
    a = sp.integrate(S, q0, p0, 0.01, 100, method=method)
    b = sp.integrate(R, q0, p0, 0.01, 100, method=method)
    eq, ep = run_error(a, b)
    assert max(eq, ep) < RUN_TOL, (eq, ep)
    # the multipliers, solved at every node, carry more rounding than the states: moving p0 by
    # 1e-15 relative moves them by 1.2e-10 of their largest value with either system (lobatto5)
    lam = np.max(np.abs(a.multipliers - b.multipliers)) / np.max(np.abs(b.multipliers))
    assert lam < 1e-9, lam
    assert np.max(np.abs(a.q[:, 1] + 1.2 * a.q[:, 2] - 0.1)) < 1e-13
    assert np.max(np.abs(a.q[:, 4] + a.q[:, 3] - 0.02)) < 1e-13


@pytest.mark.parametrize("name", ROBOTS)
def test_derivatives_equal_the_sympy_system(name):
    """What the schemes' Newton matrices and the tangent use: A(q, g) = d(M g)/dq, the Hessian
    of 1/2 gᵀ M g and hess V, against SymPy's exact derivatives of the same M and V (stored
    for fixed, branched, arm7)."""
    S = from_urdf(path(name))
    worst = {}
    for q, g, ref in reference_derivatives(name):
        for what, a in (("mass_dir", S.mass_dir(q, g)), ("mass_hess_dir", S.mass_hess_dir(q, g)),
                        ("potential_hess", S.potential_hess(q))):
            err = np.max(np.abs(a - ref[what])) / np.max(np.abs(ref[what]))
            worst[what] = max(worst.get(what, 0.0), err)
    assert max(worst.values()) < 1e-12, worst


# ====================================================================== arm6: orders, energy
# T = 0.5 s from a bent pose (the light wrist of arm6 whips up to ~40 rad/s by then); the step
# counts are in each method's asymptotic range (coarser steps overshoot), and the smallest
# error stays 100 times above the fine reference's (lobatto5, 9600 steps, ~1e-13)
ORDERS = {"midpoint": (2, (100, 200, 400, 800)), "simpson": (4, (50, 100, 200, 400)),
          "lobatto4": (6, (80, 120, 160, 240)), "lobatto5": (8, (60, 80, 120, 160))}
T_ORDER, N_FINE = 0.5, 9600
Q_ARM6 = np.array([0.4, -1.3, 1.6, -0.9, 1.2, 0.3])
QD_ARM6 = np.array([0.5, -0.3, 0.4, -0.6, 0.7, -0.8])


@functools.lru_cache(maxsize=None)
def arm6_fine():
    R = reference_system("arm6")
    p0 = reference("arm6").mass(Q_ARM6) @ QD_ARM6
    fine = sp.integrate(R, Q_ARM6, p0, T_ORDER / N_FINE, N_FINE, method="lobatto5")
    return p0, np.hstack([fine.q, fine.p])


@pytest.mark.parametrize("method", sorted(ORDERS))
def test_arm6_orders_of_the_state_and_of_the_energy(method):
    """The largest error of (q, p) over the nodes, against a fine lobatto5 run of the SymPy
    system, and the largest relative energy error of the run (the tree's own energy, whose
    constant differs from the reference's by the root's mass): both O(h^order)."""
    order, Ns = ORDERS[method]
    p0, Y = arm6_fine()
    S = from_urdf(path("arm6"))
    E0 = S.energy(Q_ARM6, p0)
    hs, errs, eerrs = [], [], []
    for N in Ns:
        tr = sp.integrate(S, Q_ARM6, p0, T_ORDER / N, N, method=method)
        hs.append(T_ORDER / N)
        errs.append(np.max(np.abs(np.hstack([tr.q, tr.p]) - Y[::N_FINE // N])))
        eerrs.append(np.max(np.abs(tr.energy - E0)) / abs(E0))
    assert min(errs) > 1e-11 and min(eerrs) > 1e-13          # above the reference and rounding
    assert fitted_order(hs, errs) == pytest.approx(order, abs=0.3), errs
    assert fitted_order(hs, eerrs) == pytest.approx(order, abs=0.3), eerrs


# branched's equilibrium (the minimum of V; the waist angle is free), to 4 digits
Q_EQ_BRANCHED = np.array([0.0, -0.1045, 0.2669, 0.0947, -0.1426, 0.4948, -0.4426])


def test_energy_error_does_not_drift_over_1e4_steps():
    """10^4 steps of the branched robot swinging about its equilibrium (0.2 rad, the torso
    turning at 0.5 rad/s; a regular motion: the ratios below do not move when q0 moves by
    1e-9): the mean relative energy error over the last quarter of the run is that of the first
    quarter for the variational schemes (within 1.3 times; measured 1.00, 0.99, 0.94), while
    RK4's drifts (a linear drift makes the ratio 7; measured 7.5).  (From chaotic starts the
    error's size follows the states visited -- a whipping hand -- for every scheme alike.)"""
    S = from_urdf(path("branched"))
    q0 = Q_EQ_BRANCHED + 0.2 * np.sin(1.7 * np.arange(1, 8))
    p0 = S.mass(q0) @ np.array([0.5, 0, 0, 0, 0, 0, 0])
    E0 = S.energy(q0, p0)
    ratio = {}
    for method, h in (("simpson", 0.01), ("lobatto4", 0.02), ("midpoint", 0.005), ("rk4", 0.01)):
        N = int(round(100 / h))
        tr = sp.integrate(S, q0, p0, h, N, method=method)
        e = np.abs(tr.energy - E0) / abs(E0)
        ratio[method] = np.mean(e[-N // 4:]) / np.mean(e[:N // 4])
        if method == "simpson":
            assert np.max(e) < 1e-9
    assert max(abs(ratio[m] - 1) for m in ("simpson", "lobatto4", "midpoint")) < 0.3, ratio
    assert ratio["rk4"] > 4.0, ratio


# ====================================================================== forces
def drive(t):
    """A driving torque on every joint (N m): tau_i = A_i sin(w_i t + phi_i)."""
    i = np.arange(7)
    return (3.0 - 0.3 * i) * np.sin((1.5 + 0.4 * i) * t + 0.7 * i)


def test_damped_and_driven_arm7_energy_minus_work_is_conserved():
    """arm7 with its joint damping (<dynamics damping>, the system's own force) and a driving
    torque: energy - work, the work being the run's own quadrature of both forces, is
    conserved to the scheme's error, O(h^4) for simpson and O(h^6) for lobatto4 (fitted over
    h = 0.02, 0.01, 0.005), while the energy itself changes by far more."""
    S = from_urdf(path("arm7"), joint_damping=True)
    q0, p0 = moving_start("arm7", mass=S.mass)
    f = forces.from_callable(lambda t, q, qd: drive(t), depends_on="")
    for method, order in (("simpson", 4), ("lobatto4", 6)):
        hs, res = [], []
        for h in (0.02, 0.01, 0.005):
            tr = sp.integrate(S, q0, p0, h, int(round(1.0 / h)), method=method, force=f)
            bal = sp.analysis.energy_balance(tr)
            hs.append(h)
            res.append(bal.max_error)
        change = np.max(np.abs(tr.energy - tr.energy[0]))
        assert change > 1.0 and abs(tr.work[-1]) > 1.0
        assert res[-1] < 1e-5 * change, (method, res, change)
        assert fitted_order(hs, res) == pytest.approx(order, abs=0.3), (method, res)


def damped_chain_xml():
    """planar_chain_5 with viscous damping c = 0.1, 0.2, ..., 0.5 N m s/rad on its joints."""
    text = Path(path("planar_chain_5")).read_text()
    for i in range(5):
        tag = f'<joint name="joint{i + 1}" type="revolute">'
        assert tag in text
        text = text.replace(tag, tag + f'\n    <dynamics damping="{0.1 * (i + 1):.1f}"/>')
    return text


def damped_chain_reference():
    text = damped_chain_xml()
    return cached_reference(text), cached_system(text, joint_damping=True)


@pytest.mark.parametrize("method", ["simpson", "lobatto5"])
def test_joint_damping_is_the_rayleigh_function(method):
    """joint_damping=True is the force -c_i qdot_i: the damped, driven planar chain equals the
    SymPy system with the dissipation 1/2 sum c_i qdot_i^2 (states and work to 1e-10);
    joint_damping=False ignores the damping."""
    text = damped_chain_xml()
    ref, R = damped_chain_reference()
    assert list(ref.robot.damping()) == [0.1, 0.2, 0.3, 0.4, 0.5]
    S = from_urdf(text, joint_damping=True)
    q0, p0 = moving_start("planar_chain_5", mass=ref.mass)
    f = forces.from_callable(lambda t, q, qd: drive(t)[:5], depends_on="")
    a = sp.integrate(S, q0, p0, 0.01, 100, method=method, force=f)
    b = sp.integrate(R, q0, p0, 0.01, 100, method=method, force=f)
    eq, ep = run_error(a, b)
    assert max(eq, ep) < RUN_TOL, (eq, ep)
    assert np.max(np.abs(a.work - b.work)) < RUN_TOL * np.max(np.abs(b.work))
    undamped = sp.integrate(from_urdf(text), q0, p0, 0.01, 100, method=method, force=f)
    plain = sp.integrate(from_urdf(path("planar_chain_5")), q0, p0, 0.01, 100, method=method,
                         force=f)
    assert np.array_equal(undamped.q, plain.q)
    assert np.max(np.abs(undamped.q - a.q)) > 1e-3


# ====================================================================== the tangent
# (robot, method, steps of 0.01 s, eps): the differences' truncation error, ~eps^2 times the
# flow's third derivatives, is below 3e-9 on each (it is 2.6e-8 at eps = 1e-6 on arm6 after
# 0.2 s: its whipping wrist)
TANGENT_CASES = [("arm6", "simpson", 30, 1e-7, False), ("fixed", "lobatto5", 50, 1e-6, False),
                 ("prismatic", "lobatto4", 50, 1e-6, False), ("arm7", "simpson", 50, 1e-6, True)]


@pytest.mark.parametrize("name, method, n_steps, eps, damped", TANGENT_CASES)
def test_tangent_is_the_derivative_of_the_run(name, method, n_steps, eps, damped):
    """tangent=True equals central differences of the run (arm7: damped and driven, the
    damping's Jacobian entering the tangent)."""
    S = from_urdf(path(name), joint_damping=damped)
    q0, p0 = moving_start(name, mass=S.mass)
    kw = dict(method=method)
    if damped:
        kw["force"] = forces.from_callable(lambda t, q, qd: drive(t), depends_on="")
    tr = sp.integrate(S, q0, p0, 0.01, n_steps, tangent=True, store_every=n_steps, **kw)
    fd = central_differences(S, q0, p0, 0.01, n_steps, eps=eps, **kw)
    Phi = tr.tangent[-1]
    assert np.max(np.abs(fd)) > 5.0                   # the run moved the variations
    assert np.max(np.abs(Phi - fd)) / np.max(np.abs(fd)) < 1e-7
