"""The transcription of a control problem by the scheme's own step: the grid
(N intervals of a fixed step h, or of h = T / N with the duration T free), the layout of
the unknowns z, and the intervals' steps with their exact derivatives.

The unknowns, in this order::

    y_k = (q_k, p_k)      the states at the nodes t_k = k h, k = 0 .. N   (N+1) 2n
    u_ki                  the inputs at the force points t_k + x_i h        N P m
    F_ki                  with inputs B(q): the generalized forces there    N P n
    T                     with a free duration: the duration (h = T / N)    1

The free duration is the unknown T itself (in seconds), not the step h = T / N:
its column is then of the size of the others' (d/dT = d/dh / N), which IPOPT's
iterations need (minimum-time problems: 43 against 97 iterations on the
crane with Simpson on 80 intervals, 72 against 105 on a cart-pole with
lobatto5 on 40; benchmarks/RESULTS.md section 24).  IPOPT iterates on log T
(symplectic.control._ipopt._LogDuration: a change of variables of the solver alone).

Interval k's variables (its *block*) are y_k, u_k and F_k; each step
(q_{k+1}, p_{k+1}) = Phi_h(q_k, p_k; B u_k or F_k) is the forced step of
``integrate`` itself, taken by the C core on one workspace kept across the
evaluations (its held force -- the per-point values of every interval --
pointed at the new values each time: ``Work.set_hold``, no new workspace and
no force parsed again), with its derivative in the block's variables (and in
h) from the implicit function theorem on the converged step, and with a
running cost, path rows or inputs B(q) the step's own states at its force
points and their derivatives (``sym_run.deriv.points``)."""
import collections

import numpy as np

from .. import forces
from .._model._errors import ConvergenceError
from .._run import _driver, _failures, _prepare

#: One evaluation of the intervals' steps: their ends (K, 2n); their derivative
#: [d/dy_k | d/du_k (or 0 | d/dF_k with inputs B(q)) | d/dh] (K, 2n, columns);
#: and when asked for the points' states (K, P, 2n) and their derivative in the
#: same columns (K, P, 2n, columns), else None.
Steps = collections.namedtuple("Steps", "ends jac points")


class Transcription:
    """The grid, the layout of z and the intervals' steps (module docstring).

    Parameters: the system, the run spec of one step (the method, Newton's
    options: :func:`symplectic._model._runspec.run_spec`), ``intervals`` N,
    the step ``h`` (fixed, or the
    first guess with ``free``), the inputs (:class:`~._inputs.InputMap`), and
    ``points``: whether the intervals' steps give the states at their force
    points (a running cost, path rows or inputs B(q) need them)."""

    def __init__(self, system, spec, intervals, h, inputs, *, free=False, points=False):
        self.system, self.spec, self.method = system, spec, spec.method
        self.intervals, self.h, self.inputs, self.free = intervals, h, inputs, free
        self.needs_points = points
        #: the steps of z (:meth:`steps`) also give the points' states, for the exact
        #: curvature's interior nodes (set by the problem when it uses it)
        self.keep_points = False
        self.x = np.array(spec.method.force_x)
        self.b = np.array(spec.method.force_b)
        n, N, P, m = system.n, intervals, len(self.x), inputs.m
        self.n, self.P, self.m = n, P, m
        self.n_states = (N + 1) * 2 * n
        self.n_u = N * P * m
        self.n_f = N * P * n if inputs.state_dependent else 0
        self.n_variables = self.n_states + self.n_u + self.n_f + (1 if free else 0)
        per = [np.r_[k * 2 * n:(k + 1) * 2 * n, self.n_states + k * P * m + np.arange(P * m)]
               for k in range(N)]
        if inputs.state_dependent:
            f0 = self.n_states + self.n_u
            per = [np.r_[idx, f0 + k * P * n + np.arange(P * n)] for k, idx in enumerate(per)]
        self.blocks = np.array(per)
        self.block_width = self.blocks.shape[1]
        self._kept = None
        self._cache = None

    # ------------------------------------------------------------ the layout
    def columns(self, k):
        """Interval k's columns: its block, then the duration T when it is free."""
        idx = self.blocks[k]
        return np.append(idx, self.n_variables - 1) if self.free else idx

    def split(self, z):
        """(Y, U): the nodes' states (N+1, 2n) and the inputs (N, P, m), views of z."""
        n, N = self.n, self.intervals
        Y = z[:self.n_states].reshape(N + 1, 2 * n)
        U = z[self.n_states:self.n_states + self.n_u].reshape(N, self.P, self.m)
        return Y, U

    def step_of(self, z):
        """The step at z: T / N with a free duration (T the last unknown), else h."""
        return float(z[-1]) / self.intervals if self.free else self.h

    def forces_of(self, z):
        """The generalized forces at the points (N, P, n): the unknowns F with
        inputs B(q), else B u."""
        if self.inputs.state_dependent:
            f0 = self.n_states + self.n_u
            return z[f0:f0 + self.n_f].reshape(self.intervals, self.P, self.n)
        return self.split(z)[1] @ self.inputs.matrix_constant.T

    def pack(self, q, p, U, T, F=None):
        """z from the nodes' states (N+1, n) each, the inputs (N, P, m) and T;
        with inputs B(q) the forces F (N, P, n), by default B(q_k) u_ki at each
        interval's start."""
        parts = [np.hstack([q, p]).ravel(), np.ravel(U)]
        if self.inputs.state_dependent:
            if F is None:
                F = np.array([[self.inputs.matrix(np.asarray(q[k], dtype=float)) @ U[k, i]
                               for i in range(self.P)] for k in range(self.intervals)])
            parts.append(np.ravel(F))
        z = np.concatenate(parts)
        return np.append(z, T) if self.free else z

    def point_times(self, h=None):
        """(N, P): the times of the inputs u_ki, t_k + x_i h."""
        return forces.point_times(self.method.name, self.h if h is None else h, self.intervals)

    # ------------------------------------------------------------ the steps
    def steps(self, z, points=None):
        """The :data:`Steps` of every interval from its own start at z (the
        points' states when ``points`` or when the terms need them); the
        last one is kept, by z."""
        want = self.needs_points or self.keep_points or bool(points)
        c = self._cache
        if c is not None and np.array_equal(c[0], z) and (c[1].points is not None or not want):
            return c[1]
        N = self.intervals
        out = self.shoot(np.arange(N), z[self.blocks], np.full(N, self.step_of(z)), want)
        self._cache = (z.copy(), out)
        return out

    def shoot(self, ks, V, hs, points=None):
        """The :data:`Steps` of the intervals ks (K,), each from its own block's
        values V (K, block width) with step hs (K,) at t_k = k h (the last
        column of the derivatives, with a free duration, in T = N h), in one call
        of the C core (``points``: the points' states too, default: when the
        terms need them).  A step the core cannot take raises ConvergenceError
        naming the interval."""
        n, P = self.n, self.P
        points = self.needs_points if points is None else points
        ks, hs = np.asarray(ks), np.asarray(hs, dtype=float)
        K = len(ks)
        F = self._held(V, K)
        jac = np.empty((K, 2 * n, (2 + P) * n))
        hj = np.empty((K, 2, 2 * n)) if self.free else None
        pts = np.empty((K, P, 2 * n, 1 + (2 + P) * n + (2 if self.free else 0))) \
            if points else None
        q1, p1, failed, fail = _driver.shoot(
            self._workspace(V), V[:, :n], V[:, n:2 * n], ks, hs, F,
            _driver.Outputs(jacobians=jac, h_jacobians=hj, points=pts))
        if fail is not None:
            k, h = int(ks[failed]), float(hs[failed])
            err = _failures.convergence_error(self.method, h, fail, system=self.system,
                                              state=(V[failed, :n], V[failed, n:2 * n]))
            raise ConvergenceError(f"control.Problem: the step of interval {k} (t = "
                                   f"{k * h:.6g}) failed at a point the solver tried: "
                                   f"{err}. More intervals, or a guess nearer the solution "
                                   f"(guess=), may help", step=k, t=k * h) from None
        parts = [jac[:, :, :2 * n]] + self.force_columns(jac[:, :, 2 * n:])
        if self.free:     # d/dT = (d/dh + k d/dt_k) / N: the node moves with h
            parts.append((hj[:, 0] + ks[:, None] * hj[:, 1])[:, :, None] / self.intervals)
        point = None
        if points:
            c = pts.reshape(K, P * 2 * n, -1)
            pparts = [c[:, :, 1:1 + 2 * n]] + self.force_columns(c[:, :, 1 + 2 * n:1 + (2 + P) * n])
            if self.free:
                pparts.append((c[:, :, -2] + ks[:, None] * c[:, :, -1])[:, :, None] /
                              self.intervals)
            point = (pts[:, :, :, 0].copy(),
                     np.concatenate(pparts, axis=-1).reshape(K, P, 2 * n, -1))
        return Steps(np.concatenate([q1, p1], axis=1), np.concatenate(parts, axis=-1), point)

    def _held(self, V, K):
        """The per-point forces (K, P, n) of blocks V: B u, or the unknowns F."""
        n, P, m = self.n, self.P, self.m
        if self.inputs.state_dependent:
            return np.ascontiguousarray(V[:, 2 * n + P * m:].reshape(K, P, n))
        U = V[:, 2 * n:2 * n + P * m].reshape(K, P, m)
        return np.ascontiguousarray(U @ self.inputs.matrix_constant.T)

    def _workspace(self, V):
        """The kept C workspace of the steps (made on first use): the method,
        Newton's options, the system's own force and a held part of P values
        a step (pointed at each call's values)."""
        if self._kept is None:
            # the runs' prologue, once (the problem checked its start; a trial state may lie
            # off a constraint manifold, and a coarse grid's stability is the solver's)
            n = self.n
            self._kept = _prepare.prepare(
                self.system, self.spec, V[0, :n], V[0, n:2 * n],
                force=forces.Force(hold=np.zeros((1, self.P, n))), warn="never",
                manifold=False, what="control.Problem").workspace()
        return self._kept

    def force_columns(self, dF):
        """The derivative in the per-point forces (..., P n) as the blocks of an
        interval's columns: [d/du] (F = B u), or [0 | d/dF] (inputs B(q))."""
        P, m = self.P, self.m
        lead = dF.shape[:-1]
        if not self.inputs.state_dependent:
            return [(dF.reshape(*lead, P, -1) @ self.inputs.matrix_constant).reshape(*lead, P * m)]
        return [np.zeros((*lead, P * m)), dF]
