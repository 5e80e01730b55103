"""Checks of the O(n) Newton paths (``linear_solver="tree"``) against the dense
one: the residual, residual norm, direction and sign of det J
(``_core.newton_direction``) against the dense Newton matrix of
``_core.newton_system`` (the assembled J, solved by NumPy) -- what the roots
alone cannot show (Newton reaches the same root with a wrong matrix, only
more slowly) -- and one step from states along a run."""
import numpy as np

import symplectic as sp
from symplectic import _core


def check_direction(system, q, p, h, method, force=None, seed=0, tol=1e-11):
    """At random increments X (0.01 scale) and a random right-hand side b:
    R equal to the dense R to 1e-14 relative, the norm Newton reads equal to
    max |R| of the tree path's own R (bitwise), x = J^{-1} b equal to NumPy's
    solve with the dense J to tol relative (both are only as accurate as
    cond(J) eps), and the sign of det J equal to NumPy's."""
    rng = np.random.default_rng(seed)
    nu = None
    for k in range(1, 8):   # the unknowns: (s - 1) n for the method's s
        try:
            _core.newton_system(system, q, p, h, np.zeros(k * system.n), method, force=force)
        except ValueError:
            continue
        nu = k * system.n
        break
    X = 0.01 * rng.standard_normal(nu)
    b = rng.standard_normal(nu)
    R, J = _core.newton_system(system, q, p, h, X, method, force=force)
    Rt, rnorm, x, sign = _core.newton_direction(system, q, p, h, X, b, method, force=force,
                                                solver=_core.SOLVER_MODES["tree"])
    ref = np.linalg.solve(J, b)
    assert np.abs(Rt - R).max() <= 1e-14 * np.abs(R).max()
    assert rnorm == np.abs(Rt).max()
    assert np.abs(x - ref).max() <= tol * np.abs(ref).max()
    assert sign == int(np.sign(np.linalg.det(J)))


def check_norm_reads_every_joint(system, q, p, h, method, X=None):
    """The residual norm Newton reads is max |R| with the largest entry at
    each joint in turn (a large momentum p_k puts it at row 0, joint k):
    every lane and the remainder of a vectorised maximum are read."""
    nu = 2 * system.n if X is None else X.size
    X = np.zeros(nu) if X is None else X
    for k in range(system.n):
        pk = p.copy()
        pk[k] += 1e3
        R, rnorm, _, _ = _core.newton_direction(system, q, pk, h, X, np.ones(nu), method,
                                                solver=_core.SOLVER_MODES["tree"])
        assert int(np.argmax(np.abs(R))) == k and rnorm == np.abs(R).max(), k


def worst_step_difference(system, q0, p0, h, method, steps, every, ref=None,
                          newtons=("full", "step")):
    """From every ``every``-th state of a dense run of ``steps`` steps (``ref``,
    or one from (q0, p0)), one tree step against one dense step with each
    Newton mode of ``newtons``: the largest differences of q1 (relative to
    max(|q1|, 1)) and p1 (relative to |p1|)."""
    if ref is None:
        ref = sp.integrate(system, q0, p0, h, steps, method=method, linear_solver="dense")
    worst_q = worst_p = 0.0
    for k in range(0, steps + 1, every):
        for newton in newtons:
            a = sp.step(system, ref.q[k], ref.p[k], h, method=method, linear_solver="dense",
                        newton=newton)
            b = sp.step(system, ref.q[k], ref.p[k], h, method=method, linear_solver="tree",
                        newton=newton)
            worst_q = max(worst_q, np.abs(a[0] - b[0]).max() / max(np.abs(a[0]).max(), 1.0))
            worst_p = max(worst_p, np.abs(b[1] - a[1]).max() / max(np.abs(a[1]).max(), 1e-300))
    return worst_q, worst_p


def check_mode_reaches_dense(system, q0, p0, h, steps, every, method, newton):
    """A run on the tree path with the given Newton mode: it factorises at
    least once a step (three in ten steps for the chord mode), and from
    every ``every``-th state its next state is full Newton's with the dense
    LU to 1e-12 (relative)."""
    run = sp.integrate(system, q0, p0, h, steps, method=method, linear_solver="tree",
                       newton=newton)
    assert run.counts.factorizations >= steps * (0.3 if newton == "chord" else 0.99)
    for k in range(0, steps, every):
        a = sp.step(system, run.q[k], run.p[k], h, method=method, linear_solver="dense",
                    newton="full")
        for x, y in ((run.q[k + 1], a[0]), (run.p[k + 1], a[1])):
            assert np.abs(x - y).max() <= 1e-12 * np.abs(y).max(), k
