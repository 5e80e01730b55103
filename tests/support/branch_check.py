"""The root of a step continued from h -> 0, found here independently of the
core's Newton iteration and of its branch rule (tests and benchmarks).

The step equations R(X; eta) = 0 of an implicit scheme (the residual and its
Jacobian from ``_core.newton_system``, the core's own assembly of the
equations, which other tests check against formulas) have at small eta one
root near the Taylor step; following it in eta up to h by small continuation
steps, each solved by Newton from a predictor extrapolated in eta, gives the
root on the branch that tends to the exact flow.  Where the branch folds
back before h (det J changes sign between two continuation steps), no root
continues the motion and the continuation reports None.  A returned step is
genuine when its nodes equal that root's.
"""
import numpy as np

from symplectic import _core
from symplectic._model import _registry


def _newton(system, q, p, eta, X, method, max_iter=30):
    """Newton on R(X; eta) = 0 from X: (X, converged, sign of det J there)."""
    X = X.copy()
    for it in range(max_iter):
        R, J = _core.newton_system(system, q, p, eta, X, method)
        if not np.all(np.isfinite(R)) or not np.all(np.isfinite(J)):
            return X, False, 0
        try:
            dX = np.linalg.solve(J, -R)
        except np.linalg.LinAlgError:
            return X, False, 0
        X += dX
        if np.max(np.abs(dX)) <= 1e-13 * max(np.max(np.abs(X)), 1e-300):
            return X, True, np.linalg.slogdet(J)[0]
    return X, False, 0


def continued_root(system, q, p, h, method, eta0_frac=1 / 256, growth=1.25, max_stages=2000):
    """The increments X (s - 1, n) of the nodes of the step (q, p) -> h of
    ``method`` on the branch continued from eta -> 0, or None when the
    continuation cannot follow it (a fold)."""
    q, p = np.asarray(q, float), np.asarray(p, float)
    n = len(q)
    c = np.asarray(_registry.METHODS[method].nodes[1:])
    v = np.linalg.solve(system.mass(q), p)

    def taylor(eta):
        return (c[:, None] * eta * v[None, :]).ravel()

    eta = h * eta0_frac
    X, ok, sign = _newton(system, q, p, eta, taylor(eta), method)
    if not ok:
        return None
    stages = 0
    ratio = growth
    while abs(eta) < abs(h):
        stages += 1
        if stages > max_stages:
            return None
        new = eta * ratio
        if abs(new) > abs(h):
            new = h
        r = new / eta
        # X(eta) ~ alpha eta + beta eta^2 with alpha = c v: through the last root
        X_pred = r * r * X + (r - r * r) * taylor(eta)
        Xn, ok, s = _newton(system, q, p, new, X_pred, method, max_iter=12)
        scale = max(np.max(np.abs(Xn)), np.max(np.abs(X_pred)), 1e-300)
        if ok and np.max(np.abs(Xn - X_pred)) <= 0.05 * scale:
            if s != sign:                       # a fold between eta and new
                return None
            eta, X = new, Xn
            ratio = min(ratio * 1.2, growth)
        else:
            ratio = 1 + (ratio - 1) / 2
            if ratio - 1 < 1e-6:
                return None
    return X.reshape(-1, n)


def returned_increments(traj, k):
    """The increments of the nodes of step k of a trajectory (every step kept)."""
    n = traj.q.shape[1]
    nodes = [] if traj.q_mid is None else list(np.asarray(traj.q_mid[k]).reshape(-1, n))
    return np.array(nodes + [traj.q[k + 1]]) - traj.q[k]


def is_continued(traj, k, rtol=1e-6):
    """True when step k of the trajectory is the continued root (its nodes
    agree with it to rtol of the increments), False when not, None when the
    continuation fails."""
    X = continued_root(traj.system, traj.q[k], traj.p[k], traj.h, traj.method)
    if X is None:
        return None
    Xr = returned_increments(traj, k)
    return bool(np.max(np.abs(X - Xr)) <= rtol * max(np.max(np.abs(X)), 1e-300))
