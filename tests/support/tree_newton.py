"""The O(n) Newton path's residual, residual norm, direction and sign of det J
(``_core.newton_direction`` with ``linear_solver="tree"``) against the dense
Newton matrix of ``_core.newton_system`` (the assembled J, solved by NumPy):
what the roots alone cannot show (Newton reaches the same root with a wrong
matrix, only more slowly)."""
import numpy as np

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
