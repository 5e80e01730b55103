"""Central finite differences used when a System omits a first derivative.

Central differences with step h_k = eps^(1/3) max(1, |q_k|) have a relative
error of about 1e-10; the schemes keep their order down to that level but
cannot go below it, and every derivative costs 2n extra calls.  Supply the
analytic derivatives when you can (System.check_derivatives verifies them).
"""
import numpy as np

_CBRT_EPS = np.cbrt(np.finfo(float).eps)


def _steps(q):
    return _CBRT_EPS * np.maximum(1.0, np.abs(q))


def mass_grad(mass, n):
    """Return a callable q -> (n, n, n) array T[k, i, j] ~ dM_ij/dq_k."""

    def grad(q):
        q = np.array(q, dtype=float)
        out = np.empty((n, n, n))
        for k, hk in enumerate(_steps(q)):
            qp = q.copy()
            qm = q.copy()
            qp[k] += hk
            qm[k] -= hk
            out[k] = (np.asarray(mass(qp), dtype=float) - np.asarray(mass(qm), dtype=float)) / (2 * hk)
        return out

    grad.finite_differences = True
    return grad


def gradient(f, n):
    """Return a callable q -> (n,) array ~ grad f(q) for a scalar f."""

    def grad(q):
        q = np.array(q, dtype=float)
        out = np.empty(n)
        for k, hk in enumerate(_steps(q)):
            qp = q.copy()
            qm = q.copy()
            qp[k] += hk
            qm[k] -= hk
            out[k] = (float(f(qp)) - float(f(qm))) / (2 * hk)
        return out

    grad.finite_differences = True
    return grad


def jacobian(F, q):
    """Central-difference Jacobian J[:, k] = dF/dq_k of an array-valued F."""
    q = np.array(q, dtype=float)
    cols = []
    for k, hk in enumerate(_steps(q)):
        qp = q.copy()
        qm = q.copy()
        qp[k] += hk
        qm[k] -= hk
        cols.append((np.asarray(F(qp), dtype=float) - np.asarray(F(qm), dtype=float)) / (2 * hk))
    return np.stack(cols, axis=-1)
