"""Validation tools: error measures, conserved quantities, convergence orders,
structure checks (symplecticity, reversibility), convergence studies, and the
reference solvers of the TOP paper's Section 4.3 (RK4 on the reduced top).

Conventions follow the papers (see ``docs/errata.md#conventions-that-reproduce-the-published-numbers``):

- errors are maxima over all nodes n = 0..N, both ends included;
- the state error of a vector is the Euclidean norm of the error vector at a
  node (AXIOMS Table 2), the nutation error is relative,
  max_n |theta_n - theta_ex(t_n)| / |theta_ex(t_n)| (TOP Tables 4, 5);
- the energy error is relative to |H0| (V may carry no constant, so H0 < 0
  is possible: the double pendulum);
- an order is the least-squares slope of log(error) against log(h).

Everything here works on any :class:`symplectic.System`; nothing needs SciPy.

>>> import math, symplectic as sp
>>> from symplectic import analysis
>>> sys = sp.systems.pendulum()
>>> T = sp.exact.pendulum_period()
>>> tab = analysis.convergence_study(sys, [math.pi / 2], [0.0], "simpson",
...                                  [T / 50, T / 100, T / 200], T,
...                                  lambda t: sp.exact.pendulum(t))
>>> round(tab.fitted["q"])
4
"""
import dataclasses
import math
import time

import numpy as np

from ._run import _driver, _integrate, _prepare, _stability
from ._model import _validate
from ._run._failures import convergence_error
from ._run._integrate import integrate, step
from ._run._trajectory import Trajectory

__all__ = ["energy_error", "energy_error_norm", "energy_balance", "EnergyBalance",
           "momentum_balance", "MomentumBalance", "cyclic_coordinates", "conserved_momenta",
           "Momenta", "error_norm", "local_orders", "convergence_order", "OrderFit",
           "tangent_map", "symplecticity_defect", "reversibility_error", "convergence_study",
           "stability_estimate",
           "ConvergenceTable", "rk4_ode", "ReducedLagrangeTop", "reduced_lagrange_top"]


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


@dataclasses.dataclass(repr=False)
class EnergyBalance:
    """The energy balance of a (forced) trajectory.

    t, energy, work : (N+1,), the times, H(q_n, p_n) and the work of the
    forces from t_0 to t_n (``Trajectory.work``);
    residual : (N+1,), (H_n - W_n) - H_0, zero for the exact flow;
    max_error : max_n |residual_n|;
    relative : max_error divided by the scale of the energy exchanged,
    max(|H_0|, max_n |H_n - H_0|, max_n |W_n|).
    """
    t: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    residual: np.ndarray

    @property
    def max_error(self):
        return float(np.max(np.abs(self.residual)))

    @property
    def relative(self):
        E = self.energy
        scale = max(abs(float(E[0])), float(np.max(np.abs(E - E[0]))),
                    float(np.max(np.abs(self.work))))
        return self.max_error / scale if scale > 0 else self.max_error

    def __repr__(self):
        return (f"EnergyBalance(nodes={len(self.t)}, max_error={self.max_error:.3e}, "
                f"relative={self.relative:.3e})")


def energy_balance(traj):
    """Energy minus work along a trajectory: the conserved quantity of a forced run.

    Along the exact flow of L with a non-conservative force F,
    dH/dt = F . qdot, so H(t) - W(t) = H(t_0) with W the work of F.
    ``Trajectory.work`` is the discrete work, summed with the scheme's own
    quadrature; ``residual = (H_n - W_n) - H_0`` is then of the size of the
    method's error, O(h^order), without drift.  Without a force this is the
    energy error (work = 0).  Returns an :class:`EnergyBalance`.
    """
    E = np.asarray(traj.energy, dtype=float)
    W = np.asarray(traj.work, dtype=float)
    return EnergyBalance(np.asarray(traj.t), E, W, (E - W) - E[0])


@dataclasses.dataclass(repr=False)
class MomentumBalance:
    """The momentum balance of cyclic coordinates along a (forced) trajectory.

    coords : the coordinates c; change : (N+1, len(coords)), p_c(t_n) - p_c(t_0);
    impulse : (N+1, len(coords)), the impulse of the forces from t_0 to t_n
    (``Trajectory.impulse``); residual = change - impulse; max_error : its
    largest magnitude (rounding for the variational schemes and RK4).
    """
    coords: tuple
    change: np.ndarray
    impulse: np.ndarray
    residual: np.ndarray

    @property
    def max_error(self):
        return float(np.max(np.abs(self.residual))) if self.residual.size else 0.0

    def __repr__(self):
        return f"MomentumBalance(coords={self.coords}, max_error={self.max_error:.3e})"


def momentum_balance(traj, coords=None):
    """p_c(t) - p_c(t_0) against the impulse of the forces, for cyclic coordinates c.

    For a coordinate on which neither M nor V depends, dp_c/dt = F_c, so
    p_c(t) - p_c(t_0) = integral of F_c.  The schemes compute p in
    difference form (p_{j+1} = p_j + h sum_i b_i (f_i + F_i), f_{i,c} = 0), so
    the discrete balance with ``Trajectory.impulse`` holds to rounding; a
    constant torque tau gives p_c(t_N) - p_c(t_0) = tau (t_N - t_0).
    ``coords`` defaults to :func:`cyclic_coordinates` at the first, middle and
    last nodes.  Returns a :class:`MomentumBalance`.
    """
    if coords is None:
        N = len(traj.t) - 1
        coords = cyclic_coordinates(traj.system, traj.q[[0, N // 2, N]])
    coords = tuple(int(k) for k in coords)
    P = np.asarray(traj.p)[:, list(coords)]
    change = P - P[0]
    impulse = np.asarray(traj.impulse)[:, list(coords)]
    return MomentumBalance(coords, change, impulse, change - impulse)


# ------------------------------------------------------------------ momenta
def cyclic_coordinates(system, q_samples, n_directions=3, seed=0):
    """Indices k of coordinates that do not enter the Lagrangian at the samples.

    q_k is reported cyclic when, at every sample q (rows of ``q_samples``),
    dV/dq_k = 0 and column k of A(q, g) = d(M(q) g)/dq vanishes for
    ``n_directions`` random vectors g (so dM/dq_k = 0), both exactly.  Then
    p_k = dL/dqdot_k is a constant of the motion.  For the Lagrange top this
    gives (0, 2): phi and psi.
    """
    system = _validate.system(system)
    Q = np.atleast_2d(np.asarray(q_samples, dtype=float))
    if Q.shape[1] != system.n:
        raise ValueError(f"q_samples must have {system.n} columns, got shape {Q.shape}")
    rng = np.random.default_rng(seed)
    cyclic = np.ones(system.n, dtype=bool)
    for q in Q:
        cyclic &= np.asarray(system.potential_grad(q)) == 0.0
        for _ in range(n_directions):
            A = np.asarray(system.mass_dir(q, rng.standard_normal(system.n)))
            cyclic &= np.all(A == 0.0, axis=0)
    return tuple(int(k) for k in np.flatnonzero(cyclic))


@dataclasses.dataclass(repr=False)
class Momenta:
    """Conserved momenta of cyclic coordinates along a trajectory.

    coords : tuple of int, the cyclic coordinates k;
    series : (N+1, len(coords)), p_k at every node;
    drift : (len(coords),), max_n |p_k,n - p_k,0| / |p_k,0| (absolute where p_k,0 = 0);
    bitwise : (len(coords),) bool, p_k,n == p_k,0 at every node.
    """
    coords: tuple
    series: np.ndarray
    drift: np.ndarray
    bitwise: np.ndarray

    @property
    def max_drift(self):
        return float(np.max(self.drift)) if len(self.drift) else 0.0

    def __repr__(self):
        return (f"Momenta(coords={self.coords}, nodes={len(self.series)}, "
                f"drift={self.drift.tolist()}, bitwise={self.bitwise.tolist()})")


def conserved_momenta(traj, coords=None):
    """Momenta of the cyclic coordinates: series, max drift, bitwise constancy.

    ``coords`` defaults to :func:`cyclic_coordinates` of the trajectory's
    system tested at its first, middle and last nodes.
    """
    if coords is None:
        N = len(traj.t) - 1
        coords = cyclic_coordinates(traj.system, traj.q[[0, N // 2, N]])
    coords = tuple(int(k) for k in coords)
    P = np.asarray(traj.p)[:, list(coords)]
    p0 = P[0]
    dev = np.max(np.abs(P - p0), axis=0) if len(P) else np.zeros(len(coords))
    scale = np.where(p0 != 0.0, np.abs(p0), 1.0)
    return Momenta(coords, P, dev / scale, np.all(P == p0, axis=0))


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


# ------------------------------------------------------------------ structure
def _J(n):
    Z, E = np.zeros((n, n)), np.eye(n)
    return np.block([[Z, E], [-E, Z]])


def stability_estimate(system, q, h, method="simpson", p=None):
    """The stability of step size ``h`` for ``method`` at the state (q, p).

    Returns ``(omega_max, omega_h, limit, h_max)``: the fastest linearised
    frequency at q (rad/s; the square root of the largest eigenvalue of
    M(q)^-1 hess V(q), on the constraint manifold for a constrained system,
    whose multipliers use p -- default at rest), omega_max |h|, the method's
    limit on the harmonic oscillator (``methods(details=True)[m]["stability"]``:
    Simpson 2 sqrt 2, the midpoint rule inf) and h_max = limit / omega_max.
    The step is linearly stable on that mode for omega_h < limit.  A local
    estimate: velocity-dependent stiffness is not included and a nonlinear
    motion may visit stiffer states.  ``integrate`` and ``integrate_many``
    warn with it (:class:`symplectic.StabilityWarning`) before the first
    step.  None when M(q) or hess V(q) cannot be evaluated there (or the
    method's limit is not determined).
    """
    system = _validate.system(system)
    m = _validate.method(method)
    q = _validate.state("q", q, system.n)
    h = _validate.step_size(h)
    if p is not None:
        p = _validate.state("p", p, system.n)
    return _stability.estimate(system, q, h, m, p)


def tangent_map(system, q, p, h, method="simpson", tangent="exact", delta=1e-6, *,
                force=None, force_jac=None, t=0.0):
    """Jacobian D = d(q1, p1)/d(q, p) of one step, (2n, 2n), (q, p) ordering.

    ``tangent="exact"``: the core's exact tangent map (implicit function
    theorem on the discrete Euler-Lagrange equations at the converged root;
    linearised stages for RK4); the one each step of
    ``integrate(..., tangent=True)`` applies.  ``tangent="fd"``: central
    finite differences of :func:`symplectic.step` with increments
    ``delta * max(1, |y_k|)``.  ``force``, ``force_jac`` and ``t`` (the
    step's time) as for :func:`symplectic.step`: the force's Jacobians
    dF/dq, dF/dqdot enter the exact map as they enter Newton's matrix.

    A constrained system (holonomic g(q) = 0): D is the derivative of the
    constrained step map on all of R^2n, so (q, p) need not be on the
    manifold {g = 0, G M^-1 p = 0} and neither do the finite differences'
    perturbed states (taken without :func:`symplectic.step`'s check of the
    state).  Every column of D lies in the manifold's tangent space at
    (q1, p1) (the step carries any variation onto it); on the tangent space
    at (q, p) D is the derivative along the manifold.
    """
    fkw = dict(force=force, force_jac=force_jac, t=t)
    if _validate.choice("tangent", tangent, ("exact", "fd")) == "exact":
        return _integrate.step_tangent(system, q, p, h, method, **fkw)[2]
    n = system.n
    one = _fd_step(system, q, p, h, method, fkw)
    y = np.concatenate([np.asarray(q, float).ravel(), np.asarray(p, float).ravel()])
    D = np.empty((2 * n, 2 * n))
    for k in range(2 * n):
        dk = delta * max(1.0, abs(y[k]))
        out = []
        for s in (1.0, -1.0):
            yy = y.copy()
            yy[k] += s * dk
            q1, p1 = one(yy[:n], yy[n:])
            out.append(np.concatenate([q1, p1]))
        D[:, k] = (out[0] - out[1]) / (2.0 * dk)
    return D


def _fd_step(system, q, p, h, method, fkw):
    """The step of tangent_map's finite differences at (q, p): :func:`step`,
    or for a constrained system the same step without the check that the
    state is on the manifold (a perturbed state is not)."""
    system = _validate.system(system)
    if not system.n_constraints:
        return lambda q, p: step(system, q, p, h, method, **fkw)
    spec = _validate.run_spec(method, h, 1, fkw["t"], one_step=True)
    # the prologue once, at the unperturbed state; the perturbed states then step as it
    # prepared (they are off the manifold on purpose: no start check for them)
    prep = _prepare.prepare(system, spec, q, p, names=("q", "p", "qdot"), force=fkw["force"],
                            force_jac=fkw["force_jac"], warn="never", what="tangent_map",
                            manifold=False)

    def one(q, p):
        q1, p1, failure = _driver.run_step(dataclasses.replace(
            prep, q0=_validate.state("q", q, system.n), p0=_validate.state("p", p, system.n)))
        if failure is not None:
            raise convergence_error(spec.method, spec.h, failure, system=system)
        return q1, p1
    return one


def symplecticity_defect(system, q, p, h, method="simpson", tangent="exact", delta=1e-6, **kw):
    """``||D^T J D - J||_F / ||D||_F^2`` for the one-step map D at (q, p).

    Zero (to rounding) for a symplectic method; of the size of the local
    error for a non-symplectic one (RK4).  The tangent map comes from
    :func:`tangent_map` (``"exact"`` or ``"fd"``; finite differences add
    about 1e-10 of truncation and cancellation error); ``kw`` (``force``,
    ``force_jac``, ``t``) as for :func:`tangent_map` -- a dissipative force
    makes any method's map non-symplectic.

    Unconstrained systems: a constrained step is symplectic on the manifold
    {g = 0, G M^-1 p = 0} only (V^T D^T J D V = V^T J V for a basis V of its
    tangent space at (q, p)); on R^2n its D has rank 2n - 2m and this
    measure is of order one (NotImplementedError).
    """
    if _validate.system(system).n_constraints:
        raise NotImplementedError(
            "symplecticity_defect: the system has holonomic constraints, whose step map is "
            "symplectic on the constraint manifold only (V^T D^T J D V = V^T J V for a basis V "
            "of its tangent space); D = tangent_map(...) is the exact map to restrict")
    D = tangent_map(system, q, p, h, method, tangent, delta, **kw)
    n = D.shape[0] // 2
    J = _J(n)
    return float(np.linalg.norm(D.T @ J @ D - J) / np.linalg.norm(D) ** 2)


def reversibility_error(system, q, p, h, method="simpson", n_steps=1, relative=True, **kw):
    """Integrate ``n_steps`` forward with h, then back with -h; distance to the start.

    Returns max_k |y_back,k - y0,k| / s_k over the 2n components of y = (q, p),
    where s_k is the largest |y_k| met on the forward trajectory (1 where that
    is 0), so that a small angle is not hidden behind a large one; with
    ``relative=False`` the plain max_k |y_back,k - y0,k|.  Symmetric methods
    (the variational ones) give values at the level of the Newton tolerance
    (``rtol=``, default 1e-13 per step) amplified by the dynamics; RK4 gives
    its local error.  Extra keywords go to :func:`symplectic.integrate`.
    """
    fwd = integrate(system, q, p, h, n_steps, method, **kw)
    back = integrate(system, fwd.q[-1], fwd.p[-1], -h, n_steps, method, t0=fwd.t[-1], **kw)
    d = np.abs(np.concatenate([back.q[-1] - fwd.q[0], back.p[-1] - fwd.p[0]]))
    if not relative:
        return float(np.max(d))
    s = np.max(np.abs(np.hstack([fwd.q, fwd.p])), axis=0)
    s[s == 0.0] = 1.0
    return float(np.max(d / s))


# ------------------------------------------------------------------ studies
@dataclasses.dataclass
class ConvergenceTable:
    """Errors of one method over step sizes (returned by :func:`convergence_study`).

    h, n_steps : arrays over the runs (the order given);
    errors : {name: array of errors};
    orders : {name: local orders against the previous row (nan in the first row)};
    fitted : {name: least-squares order, :func:`convergence_order` with ``plateau``};
    seconds : wall time of each run; newton : mean Newton iterations per step.
    """
    method: str
    T: float
    h: np.ndarray
    n_steps: np.ndarray
    errors: dict
    orders: dict
    fitted: dict
    seconds: np.ndarray
    newton: np.ndarray
    plateau: object = "auto"

    def as_dict(self):
        """Plain dict of lists (for JSON / CSV)."""
        out = dict(method=self.method, T=self.T, h=self.h.tolist(), n_steps=self.n_steps.tolist(),
                   seconds=self.seconds.tolist(), newton=self.newton.tolist())
        for k, v in self.errors.items():
            out[f"{k}_error"] = v.tolist()
            out[f"{k}_order"] = self.orders[k].tolist()
            out[f"{k}_fitted"] = self.fitted[k]
        return out

    def format(self):
        """Text table: one row per h, error and local order per quantity, fitted orders."""
        names = list(self.errors)
        head = f"{'h':>11} {'steps':>7}" + "".join(f" {n + ' error':>13} {'order':>6}" for n in names)
        lines = [f"{self.method}: convergence over T = {self.T:.10g}", head]
        for i in range(len(self.h)):
            row = f"{self.h[i]:>11.4e} {self.n_steps[i]:>7d}"
            for n in names:
                o = self.orders[n][i]
                row += f" {self.errors[n][i]:>13.4e} " + (f"{o:>6.2f}" if np.isfinite(o) else f"{'-':>6}")
            lines.append(row)
        fit = f"{'fitted':>11} {'':>7}"
        for n in names:
            f = self.fitted[n]
            fit += f" {'':>13} " + (f"{f:>6.2f}" if f is not None else f"{'-':>6}")
        lines.append(fit + f"   (least squares, plateau={self.plateau!r})")
        return "\n".join(lines)

    __str__ = format


def _reference_at(reference, traj):
    t = traj.t
    n = traj.q.shape[1]
    if reference is None:
        return None, None
    if isinstance(reference, Trajectory):
        hr, t0r = reference.h, reference.t[0]
        idx = np.rint((t - t0r) / hr).astype(np.int64)
        if (np.any(idx < 0) or np.any(idx >= len(reference.t))
                or np.max(np.abs(reference.t[idx] - t)) > 1e-9 * max(1.0, abs(t[-1]))):
            raise ValueError("the reference trajectory's nodes must include every node "
                             "(take h a multiple of the reference step, within its time span)")
        return reference.q[idx], reference.p[idx]
    if callable(reference):
        qr, pr = reference(t)
        qr = np.asarray(qr, dtype=float).reshape(len(t), n)
        pr = np.asarray(pr, dtype=float).reshape(len(t), n)
        return qr, pr
    raise TypeError("reference must be None, a callable t -> (q, p) or a Trajectory")


def _builtin_error(name):
    if name == "q":
        return lambda tr, qr, pr: error_norm(tr.q, qr)
    if name == "p":
        return lambda tr, qr, pr: error_norm(tr.p, pr)
    if name == "state":
        return lambda tr, qr, pr: error_norm(np.hstack([tr.q, tr.p]), np.hstack([qr, pr]))
    if name == "energy":
        return lambda tr, qr, pr: energy_error_norm(tr)
    raise ValueError(f"unknown error {name!r}: use 'q', 'p', 'state', 'energy' or a "
                     f"callable(traj, q_ref, p_ref) -> float")


def convergence_study(system, q0, p0, method, hs, T, reference=None,
                      errors=("q", "p", "energy"), plateau="auto", t0=0.0, **integrate_kw):
    """Run ``method`` over the step sizes ``hs`` on [t0, t0 + T] and tabulate errors.

    Each run uses n = round(T / h) steps (T / h must be an integer to 1e-9).

    Parameters
    ----------
    reference : callable or Trajectory or None
        ``reference(t) -> (q, p)`` with arrays (len(t), n) -- an exact solution
        (e.g. ``symplectic.exact.LagrangeTop``) or a dense solver output -- or a
        finer :class:`Trajectory` whose nodes include every run's nodes.  None
        allows only reference-free errors (``"energy"``).
    errors : sequence of names/callables, or {column name: name or callable}
        ``"q"``, ``"p"``, ``"state"``: max over nodes of the Euclidean norm of
        the error; ``"energy"``: max relative energy error
        (:func:`energy_error_norm`); a callable ``f(traj, q_ref, p_ref) -> float``
        for anything else (e.g. TOP's relative nutation error
        ``error_norm(traj.q[:, 1], q_ref[:, 1], "relative")``).
    plateau : None, float or "auto"
        See :func:`convergence_order` (used for the fitted orders).

    Returns
    -------
    ConvergenceTable
        ``print(table)`` renders it.
    """
    _validate.method(method)
    T = float(T)
    items = (errors.items() if isinstance(errors, dict)
             else ((getattr(e, "__name__", f"error{i}") if callable(e) else e, e)
                   for i, e in enumerate(errors)))
    funcs = {}
    for name, e in items:
        if callable(e):
            funcs[name] = e
        else:
            funcs[name] = _builtin_error(e)
            if reference is None and e != "energy":
                raise ValueError(f"error {e!r} needs a reference solution")
    hs = np.asarray(hs, dtype=float).ravel()
    errs = {k: [] for k in funcs}
    ns, secs, newton = [], [], []
    for h in hs:
        n = int(round(T / h))
        if n < 1 or abs(n * h - T) > 1e-9 * abs(T):
            raise ValueError(f"T / h must be a positive integer: T = {T!r}, h = {h!r}")
        tic = time.perf_counter()
        tr = integrate(system, q0, p0, float(h), n, method, t0=t0, **integrate_kw)
        secs.append(time.perf_counter() - tic)
        newton.append(float(np.mean(tr.newton_iterations)) if n else 0.0)
        qr, pr = _reference_at(reference, tr)
        for k, f in funcs.items():
            errs[k].append(float(f(tr, qr, pr)))
        ns.append(n)
    errors_out = {k: np.array(v) for k, v in errs.items()}
    orders, fitted = {}, {}
    for k, v in errors_out.items():
        lo = np.full(len(hs), np.nan)
        if len(hs) > 1:
            with np.errstate(divide="ignore", invalid="ignore"):
                lo[1:] = local_orders(hs, v)
        orders[k] = lo
        try:
            fitted[k] = convergence_order(hs, v, plateau)
        except ValueError:
            fitted[k] = None
    return ConvergenceTable(method, T, hs, np.array(ns), errors_out, orders, fitted,
                            np.array(secs), np.array(newton), plateau)


# ------------------------------------------------------------------ RK4, reduced top
def rk4_ode(f, y0, h, n_steps, t0=0.0):
    """Classical fixed-step RK4 for a first-order ODE y' = f(t, y) (NumPy).

    Returns ``(t, y)``: times (n_steps + 1,) and states (n_steps + 1, len(y0)).
    ``f`` has SciPy's signature, so the same right-hand side works with
    ``scipy.integrate.solve_ivp``.  The TOP paper's reference for Figures
    13/14 is this method on :func:`reduced_lagrange_top` with h = 1e-5.
    """
    y = np.array(y0, dtype=float).ravel()
    h = float(h)
    n_steps = int(n_steps)
    Y = np.empty((n_steps + 1, len(y)))
    Y[0] = y
    t = t0 + h * np.arange(n_steps + 1)
    for k in range(n_steps):
        tk = t[k]
        k1 = np.asarray(f(tk, y), dtype=float)
        k2 = np.asarray(f(tk + 0.5 * h, y + 0.5 * h * k1), dtype=float)
        k3 = np.asarray(f(tk + 0.5 * h, y + 0.5 * h * k2), dtype=float)
        k4 = np.asarray(f(tk + h, y + h * k3), dtype=float)
        y = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        Y[k + 1] = y
    return t, Y


@dataclasses.dataclass(frozen=True)
class ReducedLagrangeTop:
    """Reduced Lagrange top of the TOP paper, Section 4.3 (eqs. (18ad)-(18af)).

    The cyclic momenta p_phi, p_psi are eliminated and the nutation equation is
    written to first order in y = (phi, theta, xi), xi = thetadot:

        phidot = (p_phi - p_psi cos theta) / (I sin^2 theta),
        thetadot = xi,
        xidot = (A + phidot^2 cos theta - (p_psi / I) phidot) sin theta,

    with A = m g l / I.  Calling the object gives f(t, y) (SciPy signature).
    The defaults are Table 6: I = 1, A = 4 pi^2, p_phi = 2 pi sqrt(3),
    p_psi = 4 pi (with I3 = 2, theta0 = pi/6, psidot0 = 2 pi), where it reads
    (18aq): phidot = 2 pi (sqrt 3 - 2 cos theta) / sin^2 theta,
    xidot = (4 pi^2 + phidot^2 cos theta - 4 pi phidot) sin theta.
    """
    p_phi: float = 2 * math.pi * math.sqrt(3.0)
    p_psi: float = 4 * math.pi
    I: float = 1.0
    A: float = 4 * math.pi ** 2

    @classmethod
    def from_state(cls, q0, p0, m, I, I3, l, g=9.81):
        """The reduced top of a complete top's state and its initial y0 = (phi0, theta0, thetadot0).

        Returns ``(reduced, y0)``; ``I3`` only enters through p0.
        """
        q0 = np.asarray(q0, dtype=float).ravel()
        p0 = np.asarray(p0, dtype=float).ravel()
        red = cls(float(p0[0]), float(p0[2]), float(I), float(m) * float(g) * float(l) / float(I))
        return red, np.array([q0[0], q0[1], p0[1] / float(I)])

    def phi_dot(self, theta):
        s = np.sin(theta)
        return (self.p_phi - self.p_psi * np.cos(theta)) / (self.I * s * s)

    def __call__(self, t, y):
        phi, theta, xi = y
        s, c = math.sin(theta), math.cos(theta)
        phid = (self.p_phi - self.p_psi * c) / (self.I * s * s)
        return np.array([phid, xi, (self.A + phid * phid * c - self.p_psi / self.I * phid) * s])


def reduced_lagrange_top(p_phi=2 * math.pi * math.sqrt(3.0), p_psi=4 * math.pi, I=1.0,
                         A=4 * math.pi ** 2):
    """f(t, y) of the reduced Lagrange top (TOP Section 4.3), y = (phi, theta, xi).

    Defaults: Table 6 (initial state y0 = (0, pi/6, 0)).  See
    :class:`ReducedLagrangeTop`; integrate it with :func:`rk4_ode`.
    """
    return ReducedLagrangeTop(float(p_phi), float(p_psi), float(I), float(A))
