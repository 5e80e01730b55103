"""The convergence studies and reference solvers of :mod:`symplectic.analysis`
(which makes them public): :func:`convergence_study` (errors against a
reference over a list of steps, with fitted orders), classical RK4 on a
first-order system (:func:`rk4_ode`) and the reduced Lagrange top of the TOP
paper's Section 4.3 (:func:`reduced_lagrange_top`)."""
import dataclasses
import math
import time

import numpy as np

from ._measures import convergence_order, energy_error_norm, error_norm, local_orders
from ._model import _validate
from ._run._integrate import integrate
from ._run._trajectory import Trajectory

__all__ = ["ConvergenceTable", "convergence_study", "rk4_ode", "ReducedLagrangeTop",
           "reduced_lagrange_top"]


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
