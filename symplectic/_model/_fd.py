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


def _checked(f, q, name, shape, expected, shape_text):
    """f(q) as a float array of ``shape``, with an error that names the callback."""
    v = f(q)
    if v is None:
        raise TypeError(f"{name} returned None (a missing return statement?); expected "
                        f"{expected}")
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} returned {type(v).__name__} of dtype {a.dtype}; expected "
                        f"{expected}")
    if a.shape != shape:
        raise ValueError(f"{name} returned an array of shape {a.shape}, expected {shape_text}")
    return a.astype(float)


def _scalar(f, q, name):
    return float(_checked(f, q, name, (), "a real number", "a scalar (shape ())"))


def _matrix(f, q, n, name):
    return _checked(f, q, name, (n, n), f"an ({n}, {n}) array of real numbers", f"({n}, {n})")


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
            out[k] = (_matrix(mass, qp, n, "mass(q)") - _matrix(mass, qm, n, "mass(q)")) / (2 * hk)
        return out

    grad.finite_differences = True
    return grad


def gradient(f, n, name="potential(q)"):
    """Return a callable q -> (n,) array ~ grad f(q) for a scalar f."""

    def grad(q):
        q = np.array(q, dtype=float)
        out = np.empty(n)
        for k, hk in enumerate(_steps(q)):
            qp = q.copy()
            qm = q.copy()
            qp[k] += hk
            qm[k] -= hk
            out[k] = (_scalar(f, qp, name) - _scalar(f, qm, name)) / (2 * hk)
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


def with_hessians(func, n):
    """Wrap a vectorized func(Q) -> dict so that it also returns mass_hess and
    potential_hess, by central differences of mass_grad and potential_grad
    (all points perturbed at once) when func does not provide them."""

    def wrapped(Q):
        d = func(Q)
        if not isinstance(d, dict):
            return d                      # the core reports the type error
        if d.get("mass_hess") is not None and d.get("potential_hess") is not None:
            return d
        Q = np.asarray(Q, dtype=float)
        k = Q.shape[0]
        hs = _CBRT_EPS * np.maximum(1.0, np.abs(Q))          # (k, n)
        need_m = d.get("mass_hess") is None
        need_v = d.get("potential_hess") is None
        T2 = np.empty((k, n, n, n, n)) if need_m else None
        K = np.empty((k, n, n)) if need_v else None
        for c in range(n):
            Qp = Q.copy()
            Qm = Q.copy()
            Qp[:, c] += hs[:, c]
            Qm[:, c] -= hs[:, c]
            dp, dm = func(Qp), func(Qm)
            scale = 1.0 / (2 * hs[:, c])
            if need_m:
                diff = np.asarray(dp["mass_grad"], float) - np.asarray(dm["mass_grad"], float)
                T2[:, c] = diff * scale[:, None, None, None]
            if need_v:
                diff = np.asarray(dp["potential_grad"], float) - np.asarray(dm["potential_grad"], float)
                K[:, :, c] = diff * scale[:, None]
        d = dict(d)
        if need_m:
            d["mass_hess"] = 0.5 * (T2 + T2.transpose(0, 2, 1, 3, 4))
        if need_v:
            d["potential_hess"] = 0.5 * (K + K.transpose(0, 2, 1))
        return d

    return wrapped
