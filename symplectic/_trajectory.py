"""The Trajectory that :func:`symplectic.integrate` returns."""
import numpy as np

from . import _dense


class Trajectory:
    """A discrete trajectory returned by :func:`integrate`.

    Attributes
    ----------
    t : ndarray (N+1,)
        Times t_k = t0 + k h.
    q, p : ndarray (N+1, n)
        Coordinates and canonical momenta p = M(q) qdot at t_k.
    qdot : ndarray (N+1, n)
        Velocities M(q)^-1 p at t_k (computed on first access).
    q_mid : ndarray (N, n), (N, s - 2, n) or None
        The internal nodes of each step: for ``simpson``/``lobatto3`` (one
        internal node) an (N, n) array, Simpson's q_{k+1/2} (the interpolating
        parabola's value at t_k + h/2); for ``lobatto4``/``lobatto5`` an
        (N, s - 2, n) array (2 or 3 nodes at t_k + c_a h, with the c_a of
        ``methods(details=True)[method]["nodes"]``); None for ``midpoint``,
        ``lobatto2`` and ``rk4``, which have no internal nodes.
    newton_iterations : ndarray (N,) of int
        Newton iterations of each step (0 for rk4).
    energy : ndarray (N+1,)
        H(q_k, p_k) = 1/2 p^T M^-1 p + V (computed on first access).
    work : ndarray (N+1,)
        The work done by the non-conservative forces from t_0 to t_k, summed
        step by step with the scheme's own quadrature,
        W_{k+1} = W_k + h sum_i b_i F_i . qdot_i (RK4: its stages), so that
        ``energy - work`` is what a forced run conserves, to the order of the
        method (:func:`symplectic.analysis.energy_balance`); zeros without a
        force.
    impulse : ndarray (N+1, n)
        The generalized impulse of the forces from t_0 to t_k with the same
        quadrature, h sum_i b_i F_i per step: along a cyclic coordinate c,
        p_c(t_k) - p_c(t_0) = impulse[k, c] to rounding
        (:func:`symplectic.analysis.momentum_balance`); zeros without a force.
    force : symplectic.forces.Force or None
        The force of the run (the system's own included), None without one.
    method, h, system
        What produced it.
    """

    def __init__(self, system, method, h, t, q, p, q_mid, newton_iterations, *, work=None,
                 impulse=None, force=None):
        self.system = system
        self.method = method
        self.h = h
        self.t = t
        self.q = q
        self.p = p
        self.q_mid = q_mid
        self.newton_iterations = newton_iterations
        self._energy = None
        self._qdot = None
        self._work = work
        self._impulse = impulse
        self.force = force

    @property
    def work(self):
        if self._work is None:
            self._work = np.zeros(len(self.t))
        return self._work

    @property
    def impulse(self):
        if self._impulse is None:
            self._impulse = np.zeros(self.q.shape)
        return self._impulse

    @property
    def energy(self):
        if self._energy is None:
            self._energy = self.system.energy(self.q, self.p)
        return self._energy

    @property
    def qdot(self):
        """Velocities qdot = M(q)^-1 p at the nodes, (N+1, n) (computed on first access)."""
        if self._qdot is None:
            self._qdot = self.system.velocity(self.q, self.p)
        return self._qdot

    @property
    def n_steps(self):
        return len(self.t) - 1

    def dense(self, t, kind="lagrange"):
        """q at arbitrary times t within the integrated interval (dense output).

        Evaluates the scheme's own interpolating polynomial of each step
        (``kind="lagrange"``: degree s - 1 through the s nodes of the step,
        order s, e.g. the parabola through q_j, q_{j+1/2}, q_{j+1} for
        Simpson), or a Hermite variant that also matches the end velocities
        M(q)^-1 p (``kind="hermite"``, degree s + 1, order min(s + 1, 2s - 2)).
        The steps themselves are unchanged.  Returns an array (len(t), n), or
        (n,) for a scalar t.
        """
        return _dense.dense(self, t, kind)

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return (f"<Trajectory {self.method}, {self.n_steps} steps of h={self.h:g}, "
                f"t in [{self.t[0]:g}, {self.t[-1]:g}], n={self.q.shape[1]}>")
