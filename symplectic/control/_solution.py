"""The result of a solved control problem (symplectic.control.Solution) and
the solver's report."""
import dataclasses

import numpy as np

from .. import forces
from .._model import _validate
from .._run import _integrate
from ._ends import full_start


#: :meth:`Solution.reference_replay`: lobatto5 steps per interval of the problem, and
#: the fewest steps in all.
REFERENCE_STEPS = 16
REFERENCE_MIN_STEPS = 1000


@dataclasses.dataclass(frozen=True)
class Report:
    """What a solver said: its name, success, status code, message, iterations."""
    solver: str
    success: bool
    status: int
    message: str
    iterations: int


class Solution:
    """A solved :class:`Problem`: the states at the nodes, the inputs at the
    force points, the cost, the costates and the solver's report.

    Attributes
    ----------
    t : ndarray (N+1,)
        The nodes t_k = k h (s).
    q, p, qdot : ndarray (N+1, n)
        The states there (qdot = M(q)^-1 p).
    u : ndarray (N, P, m)
        The inputs at the force points, times :attr:`t_u` (N, P).
    forces : ndarray (N, P, n)
        The generalized forces of the inputs there, B u (B(q_ki) u_ki with
        inputs B(q)).
    cost : float
        The discrete cost at the solution.
    duration : float
        T = N h (s): the problem's, or with a free duration the optimum's.
    costate : ndarray (N+1, 2n)
        (lambda_q, lambda_p) at the nodes: the multipliers nu_k of the
        dynamics constraints Phi_h(y_k, u_k) - y_{k+1} = 0 in the
        Lagrangian J + sum_k nu_k . (...) (node k+1 for the step k -> k+1)
        and lambda_0 = D_0^T lambda_1 + dJ/d(q_0, p_0) (+ interval 0's
        other rows: the discrete adjoint recursion continued),
        which approximate Pontryagin's costates lambda(t_k) of
        H = l(u) + lambda . (qdot, pdot) at the scheme's order (for the
        effort cost the optimal input is u = -R^-1 B^T lambda_p).
    kkt_residual : float
        The first-order conditions' residual at the solution (see
        :meth:`Problem.kkt_residual`).
    solver, success, status, message, iterations, solve_time :
        The solver's report (``solver``: "ipopt", "trust-constr" or "slsqp",
        the one that ran; its own status codes; solve_time:
        wall seconds of the whole solve, the polish included).
    hessian : str
        The dynamics' curvature that IPOPT or trust-constr and the polish
        used: "exact" or "differences", or "limited-memory" (the solver's
        quasi-Newton, the polish's as "auto"; see :meth:`Problem.solve`).
        With SLSQP (its own quasi-Newton): the polish's.
    method, h :
        The scheme and its step (s).
    """

    def __init__(self, problem, z, report, elapsed, nu, kkt=None):
        self.problem = problem
        tr, nlp = problem.transcription, problem.nlp
        n, N = problem.system.n, problem.intervals
        z = np.asarray(z, dtype=float)
        Y, U = tr.split(z)
        self.h = h = tr.step_of(z)
        self.t = np.array([k * h for k in range(N + 1)])
        self.q, self.p = Y[:, :n].copy(), Y[:, n:].copy()
        self.qdot = problem.system.velocity(self.q, self.p)
        self.u = U.copy()
        self.t_u = tr.point_times(h)
        self.cost = nlp.objective(z)
        self.duration = N * h
        self.method = problem.method
        self.solver = report.solver
        self.success, self.status = report.success, report.status
        self.message, self.iterations = report.message, report.iterations
        self.solve_time = float(elapsed)
        self.hessian = None             # the curvature used: set by Problem.solve
        self.kkt_residual = nlp.kkt_residual(z, nu) if kkt is None else float(kkt)
        # L = J + sum_k nu_k . (Phi_k - y_{k+1}): lambda_{k+1} = nu_k, and the recursion
        # lambda_k = D_k^T lambda_{k+1} + dJ/dy_k continued to k = 0
        lam = np.empty((N + 1, 2 * n))
        lam[1:] = np.asarray(nu)[:N * 2 * n].reshape(N, 2 * n)
        lam[0] = nlp.costate0(z, nu)
        self.costate = lam
        self.forces = tr.forces_of(z).copy()

    def u_at(self, t):
        """The inputs at times ``t`` (scalar or array, 0 <= t <= T): in each
        step the polynomial through its values at the force points (degree
        P - 1; one value: constant; points that coincide, as RK4's two
        middle stages, averaged).  Returns (m,) or (len(t), m)."""
        t_arr = np.atleast_1d(np.asarray(t, dtype=float))
        if ((t_arr < -1e-12 * self.duration) | (t_arr > self.duration * (1 + 1e-12))).any():
            raise ValueError(f"u_at: times must lie in [0, {self.duration}]")
        xs, inv = np.unique(np.round(self.problem.transcription.x, 14), return_inverse=True)
        vals = np.zeros((self.problem.intervals, len(xs), self.problem.n_inputs))
        np.add.at(vals, (slice(None), inv), self.u)
        vals /= np.bincount(inv)[None, :, None]
        N = self.problem.intervals
        k = np.clip(np.floor(t_arr / self.h).astype(int), 0, N - 1)
        s = t_arr / self.h - k                                  # position in the step
        out = np.zeros((len(t_arr), self.problem.n_inputs))
        for i, xi in enumerate(xs):                              # Lagrange basis through xs
            li = np.ones_like(s)
            for j, xj in enumerate(xs):
                if j != i:
                    li *= (s - xj) / (xi - xj)
            out += li[:, None] * vals[k, i]
        return out[0] if np.ndim(t) == 0 else out

    def replay(self, method=None, h=None, *, n_steps=None, **options):
        """The inputs fed to ``integrate`` from the solution's start (the
        problem's, when it gives the whole start): with the
        problem's method and step, the values at the force points as they
        are (the trajectory equals the solution's states to Newton's
        tolerance); with another ``method``, ``h`` (T / h a whole number of
        steps) or ``n_steps`` (h = T / n_steps), :meth:`u_at` sampled at that
        method's force points.  Returns the :class:`symplectic.Trajectory`."""
        pb = self.problem
        method = pb.method if method is None else method
        if n_steps is not None:
            h = self.duration / _validate.integer("n_steps", n_steps, 1)
        h = self.h if h is None else _validate.positive("h", h)
        N = int(round(self.duration / h))
        if N < 1 or abs(N * h - self.duration) > 1e-9 * self.duration:
            raise ValueError(f"replay: the duration {self.duration} is not a whole number of "
                             f"steps h = {h}")
        inputs = pb.transcription.inputs
        if method == pb.method and N == pb.intervals:
            force = self.forces
        elif inputs.state_dependent:          # B(q) u_at(t) on the replay's own states
            force = inputs.force(self.u_at)
        else:
            tu = forces.point_times(method, self.duration / N, N)
            force = self.u_at(tu.ravel()).reshape(tu.shape + (pb.n_inputs,)) @ \
                inputs.matrix_constant.T
        opts = dict(pb.method_options) if method == pb.method else {}
        opts.update(options)
        # from the start as given when it is given whole (the solver's copy of it may differ
        # by rounding, which a constrained start's check would refuse at rest)
        q0, p0 = full_start(pb.system, pb.start) or (self.q[0], self.p[0])
        return _integrate.integrate(pb.system, q0, p0, self.duration / N, N,
                                    method=method, force=force, **opts)

    def reference_replay(self):
        """The returned inputs replayed open loop by an independent and more
        accurate run: :meth:`replay` by ``lobatto5`` (order 8) with
        :data:`REFERENCE_STEPS` steps per interval of the problem (at least
        :data:`REFERENCE_MIN_STEPS` in all), the inputs between the force
        points from :meth:`u_at` (on a B(q) their force B(q) u_at(t) on the
        replay's own states).  Its error is far below the transcription's at
        any N a solve uses (order 8 at a step 16 times finer), so that what
        it misses is the inputs' own: what they do to the system, not what
        the transcription thinks they do."""
        N = max(REFERENCE_STEPS * self.problem.intervals, REFERENCE_MIN_STEPS)
        return self.replay(method="lobatto5", n_steps=N)

    def miss(self, trajectory=None):
        """The largest violation of the end conditions by a trajectory's last
        state, in the units of each condition.  Default: the open-loop miss
        of the returned inputs, :meth:`reference_replay` (an independent run
        at a finer step: the accuracy of the solution as a control), which
        falls at the scheme's order as the intervals grow.  The
        transcription's own consistency -- the problem's scheme and step,
        to Newton's tolerance whatever N -- is :meth:`own_scheme_miss`."""
        tr = self.reference_replay() if trajectory is None else trajectory
        q, p = tr.q[-1], tr.p[-1]
        worst = 0.0
        for key, (idx, target) in self.problem.end.items():
            v = {"q": q, "p": p}.get(key)
            if v is None:
                v = self.problem.system.velocity(q, p)
            worst = max(worst, float(np.max(np.abs(v[idx] - target))))
        return worst

    def own_scheme_miss(self):
        """The miss of :meth:`replay` with the problem's own method and step:
        the values at the force points fed back to the scheme that was
        optimised over, so the end is met to Newton's tolerance at any N (a
        check of the transcription, not an accuracy: :meth:`miss` is that)."""
        return self.miss(self.replay())

    def __repr__(self):
        return (f"<control.Solution {self.method}, N = {self.problem.intervals}, cost = "
                f"{self.cost:.10g}, {'success' if self.success else 'FAILED'}: {self.message}>")
