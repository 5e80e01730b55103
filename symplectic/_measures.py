"""The measures of the validation tools (:mod:`symplectic.analysis`, which
makes them public): the energy error of a trajectory, the error norms of the
papers, local and fitted convergence orders.  Conventions: the module
docstring of :mod:`symplectic.analysis`."""
import dataclasses
import math

import numpy as np

__all__ = ["energy_error", "energy_error_norm", "error_norm", "local_orders",
           "convergence_order", "OrderFit"]


# ------------------------------------------------------------------ energy
def energy_error(traj, H0=None, relative=True):
    """Energy error series of a trajectory, ``(H_n - H0) / |H0|`` (n = 0..N).

    ``H0`` defaults to the energy of the first node.  With ``relative=False``
    the absolute error ``H_n - H0`` is returned.  Relative errors need H0 != 0.
    """
    E = np.asarray(traj.energy, dtype=float)
    H0 = float(E[0]) if H0 is None else float(H0)
    d = E - H0
    if not relative:
        return d
    if H0 == 0.0:
        raise ValueError("H0 = 0: use relative=False (or shift the potential)")
    return d / abs(H0)


def energy_error_norm(traj, H0=None, relative=True):
    """``max_n |H_n - H0| / |H0|`` (TOP's ||e_H||_inf); see :func:`energy_error`."""
    return float(np.max(np.abs(energy_error(traj, H0, relative))))


# ------------------------------------------------------------------ error norms
def error_norm(x, x_ref, kind="euclidean"):
    """Error of a discrete solution against a reference, max over the nodes.

    ``x`` and ``x_ref`` are (N+1,) or (N+1, n) arrays (rows = nodes).

    - ``"euclidean"``: max_n ||x_n - x_ref,n||_2 (AXIOMS Table 2, TOP);
    - ``"max"``: max_n max_i |x_n,i - x_ref,n,i|;
    - ``"relative"``: max_n ||x_n - x_ref,n||_2 / ||x_ref,n||_2, for a scalar
      series max_n |x_n - x_ref,n| / |x_ref,n| (TOP's nutation error).
    """
    x = np.asarray(x, dtype=float)
    r = np.asarray(x_ref, dtype=float)
    if x.shape != r.shape:
        raise ValueError(f"shapes differ: {x.shape} and {r.shape}")
    if x.ndim == 1:
        x, r = x[:, None], r[:, None]
    e = x - r
    if kind == "euclidean":
        return float(np.max(np.linalg.norm(e, axis=1)))
    if kind == "max":
        return float(np.max(np.abs(e)))
    if kind == "relative":
        return float(np.max(np.linalg.norm(e, axis=1) / np.linalg.norm(r, axis=1)))
    raise ValueError(f"kind must be 'euclidean', 'max' or 'relative', got {kind!r}")


# ------------------------------------------------------------------ orders
def local_orders(h, err):
    """Slopes between successive points: log(e_i / e_(i+1)) / log(h_i / h_(i+1))."""
    h = np.asarray(h, dtype=float)
    e = np.asarray(err, dtype=float)
    return np.log(e[:-1] / e[1:]) / np.log(h[:-1] / h[1:])


@dataclasses.dataclass
class OrderFit:
    """Result of :func:`convergence_order` with ``full=True``.

    order: fitted slope; log_constant: intercept (log e ~ log C + order log h);
    used: bool mask over the input points (False = dropped as plateau).
    """
    order: float
    log_constant: float
    used: np.ndarray


def convergence_order(h, err, plateau="auto", full=False, fraction=0.75):
    """Least-squares slope of log(err) against log(h), without plateau points.

    Rounding makes errors stop decreasing below some level (the plateau);
    those points would flatten the fitted slope.  Which points are dropped:

    - ``plateau=None``: none; every point is fitted.
    - ``plateau=<float>``: every point with ``err <= plateau``.
    - ``plateau="auto"`` (default): sort by decreasing h and compute the local
      orders of successive pairs (:func:`local_orders`).  The reference order is
      the median of the local orders of the coarser half of the pairs
      (ceil((n-1)/2) pairs).  Scanning from the coarsest pair, the first pair
      whose local order is below ``fraction`` (default 3/4) of the reference
      marks the start of the plateau: its finer point and every finer point
      are dropped.  Nothing is dropped with fewer than 3 points or if the
      reference order is not positive.  The rule assumes the coarser half of
      the points lies above the plateau; otherwise pass a float.

    At least two points must remain (ValueError otherwise).  Returns the order
    (float), or an :class:`OrderFit` with ``full=True``.
    """
    h = np.asarray(h, dtype=float).ravel()
    e = np.asarray(err, dtype=float).ravel()
    if h.shape != e.shape or len(h) < 2:
        raise ValueError("h and err must be 1-D of the same length >= 2")
    if np.any(h <= 0) or np.any(e <= 0) or not np.all(np.isfinite(e)):
        raise ValueError("h and err must be positive and finite")
    order_idx = np.argsort(-h, kind="stable")
    hs, es = h[order_idx], e[order_idx]
    keep = np.ones(len(hs), dtype=bool)
    if plateau is None:
        pass
    elif isinstance(plateau, str):
        if plateau != "auto":
            raise ValueError(f"plateau must be 'auto', None or a float, got {plateau!r}")
        if len(hs) >= 3:
            rho = local_orders(hs, es)
            ref = float(np.median(rho[:math.ceil(len(rho) / 2)]))
            if ref > 0:
                bad = np.flatnonzero(rho < fraction * ref)
                if len(bad):
                    keep[bad[0] + 1:] = False
    else:
        keep = es > float(plateau)
    if keep.sum() < 2:
        raise ValueError(f"fewer than two points left after dropping the plateau "
                         f"(plateau={plateau!r})")
    slope, icpt = np.polyfit(np.log(hs[keep]), np.log(es[keep]), 1)
    if not full:
        return float(slope)
    used = np.empty(len(h), dtype=bool)
    used[order_idx] = keep
    return OrderFit(float(slope), float(icpt), used)
