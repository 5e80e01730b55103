"""The Trajectory that :func:`symplectic.integrate` returns."""
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
    multipliers : ndarray (N, s, m) or None
        For a system with m holonomic constraints g(q) = 0: the Lagrange
        multipliers lambda_a of each step at its s nodes t_k + c_a h (c_a as
        for ``q_mid``, ends included: a = 0 at t_k, a = s - 1 at t_{k+1}).
        The constraint force at a node is -G(q)^T lambda (G = dg/dq), e.g. the
        rod tension lambda l of ``systems.pendulum_cartesian``.  Both
        neighbouring steps give a value at t_k (lambda_{s-1} of step k - 1
        and lambda_0 of step k): two approximations of lambda(t_k) of the
        scheme's order or lower (README, "Constraints").  None without
        constraints.
    energy : ndarray (N+1,)
        H(q_k, p_k) = 1/2 p^T M^-1 p + V (computed on first access).
    method, h, system
        What produced it.
    """

    def __init__(self, system, method, h, t, q, p, q_mid, newton_iterations, *,
                 multipliers=None):
        self.system = system
        self.method = method
        self.h = h
        self.t = t
        self.q = q
        self.p = p
        self.q_mid = q_mid
        self.newton_iterations = newton_iterations
        self.multipliers = multipliers
        self._energy = None
        self._qdot = None

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
