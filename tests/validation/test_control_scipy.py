"""symplectic.control with SciPy's trust-constr (solver="trust-constr", or "scipy"): the
sparse exact Jacobian and the Hessian of the Lagrangian, bounds and path constraints by its
interior point method.

Expected values: the LQ oscillator's closed form (q'' = -q + u, (q, qdot): (0, 0) -> (1, 0)
in T = 2, min 1/2 int u^2, J* below; see test_control.py), the discrete optima of SLSQP
(and IPOPT when ipyopt imports) on the same transcription, the double integrator's minimum
time T* = 2 (bang-bang, exact on an even N), the bounded swing-up's optimum of
test_control.py and the Bryson-Denham problem's closed form (J* = 4 / (9 ELL), exact with
the junctions of the constrained arc on nodes: test_control_running.py)."""
import numpy as np
import pytest

import symplectic as sp
from support.control_checks import random_point
from symplectic import control
from symplectic._model._errors import ConvergenceError

pytest.importorskip("scipy.optimize")

from symplectic.control import _hessian, _ipopt

J_STAR = 0.5110329945154145
ELL = 1.0 / 9.0


def _lq(method="simpson", N=8, **kw):
    return control.Problem(sp.systems.linear([[1.0]], [[1.0]]), 2.0, N, method=method,
                           inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                           end={"q": [1.0], "qdot": [0.0]}, rtol=1e-15, **kw)


def _swing(N=16, **kw):
    return control.Problem(sp.systems.pendulum(m=1.0, omega=np.sqrt(9.81)), 3.0, N,
                           inputs=[1.0], start={"q": [0.0], "qdot": [0.0]},
                           end={"q": [np.pi], "qdot": [0.0]}, cost=control.effort(2.0), **kw)


def test_trust_constr_reproduces_the_lq_closed_form():
    """Simpson on 8 and 16 intervals: J agrees with J* to the scheme's error (order 4), and
    with SLSQP's (and IPOPT's) discrete optimum to rounding."""
    errs = []
    for N in (8, 16):
        sol = _lq(N=N).solve("trust-constr", tol=1e-12)
        assert sol.success and sol.solver == "trust-constr", sol.message
        assert sol.kkt_residual < 1e-12 and sol.own_scheme_miss() < 1e-12
        errs.append(abs(sol.cost - J_STAR))
        others = [_lq(N=N).solve("slsqp", tol=1e-12)]
        if N == 8 and _ipopt.available():
            others.append(_lq(N=N).solve("ipopt", tol=1e-12))
        for ref in others:
            assert abs(sol.cost - ref.cost) < 1e-9, (ref.solver, sol.cost - ref.cost)
            assert np.abs(sol.u - ref.u).max() < 1e-7
            assert np.abs(sol.costate - ref.costate).max() < 1e-7
    assert errs[0] < 3e-6 and errs[1] < errs[0] / 12, errs


@pytest.mark.parametrize("make, bound", [(lambda: _lq("lobatto4", 8), 1e-9),
                                         (lambda: _swing(16, rtol=1e-15), 1e-8)])
def test_trust_constr_multipliers_satisfy_the_first_order_conditions(make, bound):
    """Without the polish: SciPy's multipliers (its Lagrangian is J + v . c, ours) make the
    KKT residual small at trust-constr's own point, and the polish keeps the optimum."""
    raw = make().solve("trust-constr", tol=1e-12, polish=False)
    assert raw.success and raw.kkt_residual < bound, (raw.message, raw.kkt_residual)
    polished = make().solve("trust-constr", tol=1e-12)
    assert polished.kkt_residual < 1e-12
    assert abs(raw.cost - polished.cost) < 1e-9
    assert np.abs(raw.costate - polished.costate).max() < 1e3 * bound


def test_trust_constr_holds_input_bounds_and_a_free_duration():
    """The double integrator's minimum time, |u| <= 1 (free_duration: h an unknown, which
    the interior point keeps inside its bounds): T* = 2, full thrust then full brake."""
    pb = control.Problem(sp.systems.linear([[1.0]], [[0.0]]), 1.5, 8, inputs=[1.0],
                         start={"q": [0.0], "qdot": [0.0]}, end={"q": [1.0], "qdot": [0.0]},
                         cost=control.duration(), input_bounds=(-1.0, 1.0),
                         free_duration=(0.1, 10.0))
    sol = pb.solve("trust-constr")
    assert sol.success and abs(sol.duration - 2.0) < 1e-10 and sol.kkt_residual < 1e-10
    assert np.abs(sol.u).max() <= 1.0
    assert np.allclose(sol.u[:4, 1, 0], 1.0) and np.allclose(sol.u[4:, 1, 0], -1.0)


def test_trust_constr_trades_time_against_effort():
    """min 10 T + 1/2 int u^2, the pendulum from rest at 0 to rest at 1.2 rad, T free in
    [0.2, 10] (test_control_inputs.py): the optimum (T = 0.89176 on 8 intervals) SLSQP
    finds, not the lower bound of T (where the iterates stuck, infeasible, while SciPy kept
    them inside the bounds)."""
    def make():
        return control.Problem(sp.systems.pendulum(m=1.0, omega=np.sqrt(9.81)), 2.0, 8,
                               cost=10 * control.duration() + control.effort(),
                               free_duration=(0.2, 10.0), inputs=[1.0],
                               start={"q": [0.0], "qdot": [0.0]},
                               end={"q": [1.2], "qdot": [0.0]}, rtol=1e-14)
    sol = make().solve("trust-constr", tol=1e-12)
    ref = make().solve("slsqp", tol=1e-12)
    assert sol.success and sol.kkt_residual < 1e-10, (sol.message, sol.kkt_residual)
    assert abs(sol.duration - ref.duration) < 1e-9 and abs(sol.cost - ref.cost) < 1e-10
    assert abs(sol.duration - 0.89176) < 1e-5


def test_trust_constr_finds_the_bounded_swing_up_of_the_other_solvers():
    """The swing-up with |T| <= 5 (active): the optimum SLSQP and IPOPT find (test_control.py)."""
    sol = _swing(24, input_bounds=(-5.0, 5.0)).solve("trust-constr")
    assert sol.success, sol.message
    assert np.abs(sol.u).max() <= 5.0 + 1e-12 and np.abs(sol.u).max() > 5.0 - 1e-9
    assert sol.own_scheme_miss() < 1e-9 and sol.kkt_residual < 1e-10
    assert abs(sol.cost - 37.11767824821) < 1e-9


def test_trust_constr_holds_a_path_constraint():
    """Bryson-Denham, q <= 1/9 at every force point, Simpson on 6 intervals (the junctions
    t = 1/3, 2/3 on nodes: the closed form, J* = 4 / (9 ELL) = 4, to rounding); the
    constraint active on the arc."""
    pb = control.Problem(sp.systems.linear([[1.0]], [[0.0]]), 1.0, 6, inputs=[1.0],
                         start={"q": [0.0], "qdot": [1.0]}, end={"q": [0.0], "qdot": [-1.0]},
                         path=control.path(lambda t, q, v, u: q[:1],
                                           lambda t, q, v, u: ([[1.0]], [[0.0]], [[0.0]]),
                                           upper=ELL), rtol=1e-15)
    sol = pb.solve("trust-constr")
    assert sol.success and sol.kkt_residual < 1e-10, (sol.message, sol.kkt_residual)
    assert abs(sol.cost - 4.0 / (9 * ELL)) < 1e-10
    c = pb.constraints(pb.transcription.pack(sol.q, sol.p, sol.u, sol.duration))[pb.nlp.n_eq:].reshape(6, -1)
    tu = pb.point_times()
    on_arc = (tu > 3 * ELL + 1e-9) & (tu < 1 - 3 * ELL - 1e-9)
    assert c.max() <= ELL + 1e-12 and np.allclose(c[on_arc], ELL, rtol=0, atol=1e-10)


def test_trust_constr_with_quasi_newton_hessians():
    """hessian="limited-memory": SciPy's BFGS (the cost) and SR1 (the constraints)."""
    sol = _swing(16, rtol=1e-15).solve("trust-constr", hessian="limited-memory")
    exact = _swing(16, rtol=1e-15).solve("trust-constr")
    assert sol.success and sol.kkt_residual < 1e-10, sol.message
    assert abs(sol.cost - exact.cost) < 1e-9


def _failing(pb, which):
    """pb whose steps fail at the distinct points numbered ``which`` (0: the start) the
    solver asks for, as a step whose Newton iteration does not converge would."""
    real, seen = pb.transcription.steps, []

    def steps(z, points=None):
        if not any(np.array_equal(z, s) for s in seen):
            seen.append(z.copy())
        if len(seen) - 1 in which and np.array_equal(z, seen[-1]):
            raise ConvergenceError("control test: a step failed")
        return real(z, points)
    pb.transcription.steps = steps
    return pb


def test_trust_constr_steps_back_from_a_failed_step():
    """A step that fails at a trial point is a point SciPy's merit function refuses (its
    constraints far off): the trust region shrinks and the solve goes on to the optimum;
    at the start it raises, as with the other solvers."""
    sol = _failing(_lq(), {1, 2, 5}).solve("trust-constr", tol=1e-12)
    assert sol.success and sol.kkt_residual < 1e-12
    assert abs(sol.cost - _lq().solve("slsqp", tol=1e-12).cost) < 1e-12
    short = _failing(_lq(), {1, 2}).solve("trust-constr", max_iter=2)
    assert not short.success and "trial point(s) where a step failed" in short.message
    with pytest.raises(ConvergenceError):
        _failing(_lq(), {0}).solve("trust-constr")


def test_sparse_lagrangian_hessian_is_the_dense_one():
    """The mirrored lower triangle trust-constr is given equals the dense Hessian of the
    polish, with a free duration (the step's row) and a terminal cost (the end block)."""
    pb = control.Problem(sp.systems.double_pendulum(), 0.6, 3, method="simpson",
                         inputs=[[1.0], [0.5]], start={"q": [0.3, 0.1], "p": [0.0, 0.1]},
                         end={"q": [0.5, np.nan]}, free_duration=(0.1, 2.0),
                         cost=control.duration() + control.effort(2.0) + control.terminal(
                             lambda q, p: float(np.cos(q[1]) * p[0] ** 2),
                             lambda q, p: (np.array([0.0, -np.sin(q[1]) * p[0] ** 2]),
                                           np.array([2 * np.cos(q[1]) * p[0], 0.0]))),
                         rtol=1e-15)
    z, nu = random_point(pb, 3)
    H = _hessian.lagrangian_sparse(pb.nlp)(z, nu).toarray()
    dense = _hessian.lagrangian_dense(pb.nlp, z, 1.0, nu)
    assert np.array_equal(H, H.T)
    assert np.abs(H - dense).max() < 1e-12 * np.abs(dense).max()


def test_solver_names():
    """"scipy" is trust-constr, "slsqp" SciPy's SLSQP (and "auto" without ipyopt); the
    Solution names the solver that ran; an unknown name is refused with the list of the
    known ones."""
    assert _lq(N=4).solve("slsqp").solver == "slsqp"
    assert _lq(N=4).solve("scipy").solver == "trust-constr"
    with pytest.raises(ValueError, match="'auto', 'ipopt', 'trust-constr', 'slsqp' or 'scipy', "
                                         "got 'trust_constr'"):
        _lq(N=4).solve("trust_constr")
