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

import numpy as np

from ._choose import StepChoice, choose_step
from ._measures import (OrderFit, convergence_order, energy_error, energy_error_norm,
                        error_norm, local_orders)
from ._model import _validate
from ._structure import reversibility_error, stability_estimate, symplecticity_defect, tangent_map
from ._studies import (ConvergenceTable, ReducedLagrangeTop, convergence_study,
                       reduced_lagrange_top, rk4_ode)

__all__ = ["energy_error", "energy_error_norm", "energy_balance", "EnergyBalance",
           "momentum_balance", "MomentumBalance", "cyclic_coordinates", "conserved_momenta",
           "Momenta", "error_norm", "local_orders", "convergence_order", "OrderFit",
           "tangent_map", "symplecticity_defect", "reversibility_error", "convergence_study",
           "stability_estimate", "choose_step", "StepChoice",
           "ConvergenceTable", "rk4_ode", "ReducedLagrangeTop", "reduced_lagrange_top"]


# ------------------------------------------------------------------ energy
# (energy_error, energy_error_norm: symplectic._measures, with the error norms and orders;
# the structure checks: symplectic._structure; the studies and references: symplectic._studies)
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
