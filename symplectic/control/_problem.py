"""The optimal control problem: its transcription by the scheme's own step
(multiple shooting over Phi_h with the inputs at the force points), its
exact derivatives (dense for SLSQP, sparse for IPOPT and trust-constr:
_ipopt.py, _scipy.py) and the Newton polish; the result is a
_solution.Solution."""
import time

import numpy as np

from .. import forces
from .._model import _validate
from .._model._errors import ConvergenceError
from .._run import _integrate
from . import _curvature, _ipopt, _scipy
from ._costs import Cost, effort
from ._inputs import StateInputs
from ._path import Path
from ._pointterms import PointTerms
from ._solution import Solution

_END_KEYS = ("q", "qdot", "p")


def _end(name, d, n):
    """{"q"/"qdot"/"p": (indices, values)} of one end's conditions (NaN: free)."""
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise TypeError(f"{name} must be a dict such as {{'q': [...], 'qdot': [...]}}, got "
                        f"{type(d).__name__}")
    bad = set(d) - set(_END_KEYS)
    if bad:
        raise ValueError(f"{name}: unknown keys {sorted(bad)}; conditions are on 'q', 'qdot' "
                         f"or 'p'")
    out = {}
    for key, v in d.items():
        a = np.array(v, dtype=float).reshape(-1) if v is not None else np.full(n, np.nan)
        if a.shape != (n,):
            raise ValueError(f"{name}[{key!r}] must have n = {n} values (NaN: free), got "
                             f"shape {np.shape(v)}")
        if np.isinf(a).any():
            raise ValueError(f"{name}[{key!r}] has an infinite value; NaN leaves a component "
                             f"free")
        idx = np.flatnonzero(~np.isnan(a))
        if idx.size:
            out[key] = (idx, a[idx])
    if "qdot" in out and "p" in out and np.intersect1d(out["qdot"][0], out["p"][0]).size:
        raise ValueError(f"{name}: component(s) "
                         f"{np.intersect1d(out['qdot'][0], out['p'][0]).tolist()} given in both "
                         f"'qdot' and 'p' (p = M(q) qdot): give each in one of them")
    return out


def _bounds_pair(name, b, size):
    """(lo, hi), each (size,) with +-inf for none, from None, a pair of scalars or arrays."""
    if b is None:
        return np.full(size, -np.inf), np.full(size, np.inf)
    try:
        lo, hi = b
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (lower, upper), got {b!r}") from None
    lo = np.broadcast_to(np.asarray(-np.inf if lo is None else lo, dtype=float), (size,))
    hi = np.broadcast_to(np.asarray(np.inf if hi is None else hi, dtype=float), (size,))
    if np.isnan(lo).any() or np.isnan(hi).any() or (lo > hi).any():
        raise ValueError(f"{name}: need lower <= upper (use +-inf for no bound), got {b!r}")
    return lo.copy(), hi.copy()


class Problem(PointTerms):
    """Steer ``system`` from ``start`` to ``end`` in ``duration`` seconds at least cost.

    Parameters
    ----------
    system : symplectic.System
        Any form (built-in, callables, compiled, SymPy), with its own force
        (dissipation) if it has one.  With holonomic constraints the scheme
        solves them as ``integrate`` does, the start must be given whole
        (on the constraint manifold); give the end
        conditions that the constraints leave free (a redundant one makes
        the problem degenerate).
    duration : float
        T (s): fixed, or with ``free_duration`` the first guess of it.
    intervals : int
        N: the steps of the transcription, h = T / N.
    method : str
        The scheme, ``symplectic.methods()``; the transcription has its
        order (midpoint 2, simpson 4, lobatto4 6, lobatto5 8, gauss2 4,
        gauss3 6).
    inputs : array_like (n, m) or callable, optional
        B: the generalized force of the inputs is B u (default: the
        system's own inputs, ``from_sympy(..., inputs=[u...])``, else the
        identity, every coordinate actuated).  A vector (n,) is one input.
        A callable ``B(q)`` returning (n, m): inputs that act through the
        configuration (the force values at the force points become unknowns
        too, tied to B(q_i) u_i on the step's own states there: the
        variational schemes).
    inputs_jac : callable, optional
        With a callable B: ``dB/dq(q)`` -> (n, m, n), [c, j, l] =
        dB_cj/dq_l (exact derivatives); else central differences of B.
    start, end : dict, optional
        Conditions at t = 0 and t = T on any components of ``"q"``,
        ``"qdot"`` or ``"p"`` (p = M(q) qdot, the Legendre transform, as
        ``integrate(qdot0=...)`` takes it): arrays (n,) whose NaN entries
        are free; a missing key or end is free; a component may be given in
        ``"qdot"`` or in ``"p"``, not both.
    cost : Cost, optional
        ``effort(R)`` (default ``effort()``: 1/2 int |u|^2 dt), ``duration()``
        (T: minimum time), ``terminal(phi, grad)`` (a cost of the end state),
        ``running(l, grad)`` (int l(t, q, qdot, u) dt, at the scheme's force
        points: the variational schemes) or a
        weighted sum (``duration() + 0.01 * effort()``).
    input_bounds : (lower, upper), optional
        Bounds on every input value (scalars or (m,) arrays; None or +-inf:
        none).
    state_bounds : (lower, upper), optional
        Bounds on q at every node ((n,) arrays or scalars).
    path : Path or list of Path, optional
        Path constraints ``control.path(c, jac, lower, upper)``: lower <=
        c(t, q, qdot, u) <= upper at every force point of every step, on
        the step's own states there (the variational schemes).
    free_duration : (T_min, T_max), optional
        Let the duration vary between these bounds (s, 0 < T_min <= T_max,
        T_max may be inf): h = T / N is then an unknown, whose derivative
        of every step comes from the core (``sym_run.h_jacobians``: the
        variational schemes, not rk4).
    **method_options
        Newton's options of the steps (``rtol``, ``max_iter``, ``newton``;
        ``branch_check`` is ``"off"`` unless given: the dynamics constraints
        are the step's equations, which any of their roots satisfies, and a
        trial input -- at one force point, say -- changes the energy as no
        smooth force does).

    Notes
    -----
    The unknowns are the states (q_k, p_k), k = 0..N, and the inputs
    u_ki at the method's force points t_k + x_i h (``u`` of shape
    (N, P, m)); the dynamics constraints are (q_{k+1}, p_{k+1}) =
    Phi_h(q_k, p_k; B u_k), the forced step of ``integrate`` itself.
    """

    #: The Hessian's differences take their perturbed steps in batches whose
    #: derivative arrays hold about this many bytes.
    _HESSIAN_BATCH_BYTES = 64e6

    def __init__(self, system, duration, intervals, *, method="simpson", inputs=None, start=None,
                 end=None, cost=None, input_bounds=None, state_bounds=None, free_duration=None,
                 path=None, inputs_jac=None, **method_options):
        self.system = _validate.system(system)
        n = self.system.n
        self.duration = _validate.positive("duration", duration)
        self.intervals = _validate.integer("intervals", intervals, 1)
        self.h = self.duration / self.intervals
        if _validate.method(method).implicit:
            # the constraints are the step's equations: any root of them is a discrete
            # trajectory, and the energy of a trial input is no sign of a wrong one
            method_options.setdefault("branch_check", "off")
        self._spec = _validate.run_spec(method, self.h, 1, 0.0, options=method_options)
        self._options = dict(method_options)     # integrate's keywords, for replay
        self._m = self._spec.method
        self.method = self._m.name
        self.free = free_duration is not None
        if self.free:
            if not self._m.symplectic:
                raise NotImplementedError(f"control.Problem: a free duration needs the step's "
                                          f"derivative in h, which {self.method} does not give; "
                                          f"use a variational scheme")
            T_lo, T_hi = _bounds_pair("free_duration", free_duration, 1)
            if not T_lo[0] > 0:
                raise ValueError(f"free_duration: the lower bound must be > 0, got "
                                 f"{free_duration!r}")
        self.start = _end("start", start, n)
        self.end = _end("end", end, n)
        self._bind_inputs(inputs, inputs_jac)
        if self.system.n_constraints:
            self._constrained_start()
        cost = effort() if cost is None else cost
        if not isinstance(cost, Cost):
            raise TypeError(f"cost must be control.effort(R), control.duration(), "
                            f"control.terminal(phi, grad), control.running(l, grad) or a "
                            f"weighted sum of them, got "
                            f"{type(cost).__name__}")
        self.cost = cost
        self._cost = cost.bind(self.n_inputs)
        self._running = bool(self._cost.running)
        self._paths = self._bind_paths(path)
        self._points = self._running or bool(self._paths) or self._Bq is not None
        if self._points and not self._m.symplectic:
            what = "a running cost" if self._running else "a path constraint" if self._paths \
                else "inputs B(q)"
            raise NotImplementedError(f"control.Problem: {what} needs the step's states "
                                      f"at its force points (sym_run.points), which "
                                      f"{self.method} does not give; use a variational scheme")
        if self._cost.timed and not self.free:
            raise ValueError("control.Problem: the cost duration() needs free_duration=(T_min, "
                             "T_max): with a fixed duration it is a constant")
        self._x = np.array(self._m.force_x)
        self._b = np.array(self._m.force_b)
        self.P = len(self._x)
        N, m = self.intervals, self.n_inputs
        self._ny = (N + 1) * 2 * n
        self._nu = N * self.P * m
        self._nf = N * self.P * n if self._Bq is not None else 0   # the forces F_ki
        self._R = sum(pc.r for pc in self._paths)          # path rows at each point
        self._nend = sum(len(i) for c in (self.start, self.end) for i, _ in c.values())
        self._neq = N * 2 * n + self._nend + self._nf
        self._path_lo = np.tile(np.concatenate([pc.lo for pc in self._paths] or [[]]), N * self.P)
        self._path_hi = np.tile(np.concatenate([pc.hi for pc in self._paths] or [[]]), N * self.P)
        self.n_variables = self._ny + self._nu + self._nf + (1 if self.free else 0)
        self._lo, self._hi = self._variable_bounds(input_bounds, state_bounds,
                                                   (T_lo, T_hi) if self.free else None)
        self._pinned = np.zeros(self.n_variables, dtype=bool)   # fixed by a q or p condition
        for node, conds in ((0, self.start), (N, self.end)):
            for key, (idx, _v) in conds.items():
                if key != "qdot":
                    self._pinned[node * 2 * n + (n if key == "p" else 0) + idx] = True
        self._cache = None
        self._zcache = {}       # the force-point terms' (PointTerms._cached)
        self._blocks = None
        self._curvature = None          # the exact Hessian in use (_use_hessian)
        self._exact = None              # built once: the Curvature, or why there is none

    def _use_hessian(self, hessian):
        """Sets the dynamics' curvature for ``hessian`` ("auto", "exact",
        "differences", "limited-memory": the polish's as "auto"); "exact"
        raises ValueError naming what the exact Hessian does not cover."""
        if hessian not in ("auto", "exact", "differences", "limited-memory"):
            raise ValueError(f"hessian must be 'auto', 'exact', 'differences' or "
                             f"'limited-memory', got {hessian!r}")
        self._curvature = None
        if hessian == "differences":
            return
        if self._exact is None:
            try:
                self._exact = _curvature.Curvature.for_problem(self)
            except _curvature.Unsupported as e:
                self._exact = str(e)
        if isinstance(self._exact, str):
            if hessian == "exact":
                raise ValueError(f"hessian='exact': {self._exact}; use hessian='differences'")
            return
        self._curvature = self._exact

    def _bind_inputs(self, inputs, inputs_jac):
        """self.inputs (B, or the callable B(q) with self._Bq) and n_inputs;
        None: the system's own inputs (from_sympy(..., inputs=[u...])), else
        the identity."""
        n = self.system.n
        self._Bq = None
        if inputs is None and getattr(self.system, "input_matrix", None) is not None:
            inputs, inputs_jac = self.system.input_matrix, self.system.input_matrix_jac
        if callable(inputs):
            self._Bq = StateInputs(inputs, inputs_jac, n, self._given("q", self.start,
                                                                      np.zeros(n)))
            self.inputs, self.n_inputs = inputs, self._Bq.m
            return
        if inputs_jac is not None:
            raise ValueError("inputs_jac goes with a callable inputs=B(q)")
        B = np.eye(n) if inputs is None else np.array(inputs, dtype=float)
        if B.ndim == 1:
            B = B[:, None]
        if B.ndim != 2 or B.shape[0] != n or B.shape[1] < 1 or not np.isfinite(B).all():
            raise ValueError(f"inputs must be a finite (n, m) = ({n}, m) matrix B (the "
                             f"force B u) or a callable B(q), got shape {np.shape(inputs)}")
        self.inputs = B
        self.n_inputs = B.shape[1]

    def _variable_bounds(self, input_bounds, state_bounds, T_bounds):
        """(lower, upper) of every unknown: q at the nodes, the inputs, (the
        forces F: none), h = T / N."""
        n, N, m = self.system.n, self.intervals, self.n_inputs
        ulo, uhi = _bounds_pair("input_bounds", input_bounds, m)
        qlo, qhi = _bounds_pair("state_bounds", state_bounds, n)
        lo = np.concatenate([np.tile(np.concatenate([qlo, np.full(n, -np.inf)]), N + 1),
                             np.tile(ulo, N * self.P), np.full(self._nf, -np.inf)])
        hi = np.concatenate([np.tile(np.concatenate([qhi, np.full(n, np.inf)]), N + 1),
                             np.tile(uhi, N * self.P), np.full(self._nf, np.inf)])
        if T_bounds is not None:
            lo = np.append(lo, T_bounds[0] / N)
            hi = np.append(hi, T_bounds[1] / N)
        return lo, hi

    def _bind_paths(self, path):
        """The path constraints, bound (sizes, bounds) and checked."""
        if path is None:
            return []
        items = [path] if isinstance(path, Path) else list(path)
        for pc in items:
            if not isinstance(pc, Path):
                raise TypeError(f"path must be a control.path(c, jac, lower, upper) or a list of "
                                f"them, got {type(pc).__name__}")
        n, m = self.system.n, self.n_inputs
        q = self._given("q", self.start, np.zeros(n))
        return [pc.bind(n, m, (0.0, q, np.zeros(n), np.zeros(m))) for pc in items]

    # ------------------------------------------------------------ the variables
    def _split(self, z):
        n, N = self.system.n, self.intervals
        Y = z[:self._ny].reshape(N + 1, 2 * n)
        U = z[self._ny:self._ny + self._nu].reshape(N, self.P, self.n_inputs)
        return Y, U

    def _h(self, z):
        """The step at z: the last unknown with a free duration."""
        return float(z[-1]) if self.free else self.h

    def point_times(self, h=None):
        """(N, P): the times of the inputs u_ki, t_k + x_i h."""
        return forces.point_times(self.method, self.h if h is None else h, self.intervals)

    # ------------------------------------------------------------ the steps
    def _shoot(self, ks, V, hs, points=None):
        """Phi_h of the intervals ks (K,), each from its own variables V (K,
        vars) -- y = (q_k, p_k), u_k[, F_k] (:meth:`_block`) -- with step
        hs (K,) at t_k = k h, in one call of the C core: the ends (K, 2n),
        their derivative in the variables [d/dy | d/du_k0 .. d/du_k,P-1 |
        d/dF_k (inputs B(q)) | d/dh] (K, 2n, columns; d/dh + k d/dt_k with a
        free duration, the node moving with h), and with a running cost, a
        path constraint or inputs B(q) the states (q_i, qdot_i) at the force
        points (K, P, 2n) and their derivative in the same columns (K, P, 2n,
        columns) (else None; ``points``: whether to give them, default
        self._points)."""
        n, P, m = self.system.n, self.P, self.n_inputs
        points = self._points if points is None else points
        ks, hs = np.asarray(ks), np.asarray(hs, dtype=float)
        K = len(ks)
        U = V[:, 2 * n:2 * n + P * m].reshape(K, P, m)
        F = V[:, 2 * n + P * m:].reshape(K, P, n) if self._Bq is not None else U @ self.inputs.T
        jac = np.empty((K, 2 * n, (2 + P) * n))
        hj = np.empty((K, 2, 2 * n)) if self.free else None
        pts = np.empty((K, P, 2 * n, 1 + (2 + P) * n + (2 if self.free else 0))) \
            if points else None
        # the held values at the points (shape (K, P, n): checked once, by the problem's
        # construction) plus the system's own force
        f = forces.Force(hold=np.ascontiguousarray(F, dtype=float)) + self.system.force
        q1, p1, failed, fail = _integrate.shoot(self.system, V[:, :n], V[:, n:2 * n], ks, hs,
                                                self._spec, f, jac, hj, pts)
        if fail is not None:
            k, h = int(ks[failed]), float(hs[failed])
            err = _integrate.convergence_error(self._m, h, fail, system=self.system,
                                               state=(V[failed, :n], V[failed, n:2 * n]))
            raise ConvergenceError(f"control.Problem: the step of interval {k} (t = "
                                   f"{k * h:.6g}) failed at a point the solver tried: "
                                   f"{err}. More intervals, or a guess nearer the solution "
                                   f"(guess=), may help", step=k, t=k * h) from None
        parts = [jac[:, :, :2 * n]] + self._force_columns(jac[:, :, 2 * n:])
        if self.free:
            parts.append((hj[:, 0] + ks[:, None] * hj[:, 1])[:, :, None])
        point = None
        if points:
            c = pts.reshape(K, P * 2 * n, -1)
            pparts = [c[:, :, 1:1 + 2 * n]] + self._force_columns(c[:, :, 1 + 2 * n:1 + (2 + P) * n])
            if self.free:
                pparts.append((c[:, :, -2] + ks[:, None] * c[:, :, -1])[:, :, None])
            point = (pts[:, :, :, 0].copy(), np.concatenate(pparts, axis=-1).reshape(K, P, 2 * n, -1))
        return np.concatenate([q1, p1], axis=1), np.concatenate(parts, axis=-1), point

    def _force_columns(self, dF):
        """The derivative in the per-point forces (..., P n) as the blocks of
        the interval's columns: [d/du] (F = B u), or [0 | d/dF] (inputs B(q))."""
        P, m = self.P, self.n_inputs
        lead = dF.shape[:-1]
        if self._Bq is None:
            return [(dF.reshape(*lead, P, -1) @ self.inputs).reshape(*lead, P * m)]
        return [np.zeros((*lead, P * m)), dF]

    def _steps(self, z):
        """Phi_h of every interval from its own start, and each step's derivative
        [d/d(q_k, p_k) | d/du_k0 .. d/du_k,P-1] (N, 2n, 2n + P m); cached by z."""
        if self._cache is not None and np.array_equal(self._cache[0], z):
            return self._cache[1], self._cache[2]
        N = self.intervals
        # the points' states also for the exact curvature (its interior nodes)
        ends, dy, points = self._shoot(np.arange(N), z[self._block_matrix()],
                                       np.full(N, self._h(z)),
                                       points=self._points or self._curvature is not None)
        self._cache = (z.copy(), ends, dy, points)
        return ends, dy

    def _block_cols(self, k):
        """The columns of interval k's variables, the step h last with a free duration."""
        idx = self._block(k)
        return np.append(idx, self.n_variables - 1) if self.free else idx

    def _block(self, k):
        """The variables of interval k, (q_k, p_k), u_k and with inputs B(q)
        the forces F_k, as indices into z (increasing; the step h, last, is
        not among them)."""
        return self._block_matrix()[k]

    def _block_matrix(self):
        """Every interval's :meth:`_block`, a row each (N, variables per
        interval; no index in two rows), computed once."""
        if self._blocks is None:
            self._blocks = np.array([self._block_indices(j) for j in range(self.intervals)])
        return self._blocks

    def _block_indices(self, k):
        """:meth:`_block`, computed."""
        w, Pm, Pn = 2 * self.system.n, self.P * self.n_inputs, self.P * self.system.n
        idx = np.r_[k * w:(k + 1) * w, self._ny + k * Pm + np.arange(Pm)]
        if self._Bq is None:
            return idx
        return np.r_[idx, self._ny + self._nu + k * Pn + np.arange(Pn)]

    def _block_hessians(self, z, obj_factor, nu):
        """The Hessian of obj_factor J + nu_k . Phi_h(y_k, u_k[, h]) (+ the
        interval's path and input rows) in each interval's variables v =
        (y_k, u_k[, F_k][, h]), (N, d, d): the cost's exact part and the
        rest exact (_curvature.Curvature, when self._curvature is set) or by
        central differences of its exact gradient (dPhi^T nu_k and the point
        terms'), the intervals' perturbed steps in one call of the C core
        per batch of _HESSIAN_BATCH_BYTES of derivatives (it only steers the
        iterations; the residuals are exact).  (The duration's
        own entries of the cost: the terms of interval k; summed over the
        intervals by the caller.)"""
        P, m, N = self.P, self.n_inputs, self.intervals
        w = 2 * self.system.n
        if self._curvature is not None:
            H = self._curvature.hessians(self, z, obj_factor, nu)
        else:
            H = self._difference_hessians(z, obj_factor, nu)
        h = self._h(z)
        H[:, w:w + P * m, w:w + P * m] += obj_factor * self._cost.hess_uu(h, self._b)
        if self.free:
            _, U0 = self._split(z)
            for k in range(N):
                uh = obj_factor * self._cost.hess_uh(U0[k], self._b)
                H[k, w:w + P * m, -1] += uh
                H[k, -1, w:w + P * m] += uh
        return H

    def _difference_hessians(self, z, obj_factor, nu):
        """:meth:`_block_hessians` but the cost's exact part, by central
        differences of the exact gradients (N, d, d)."""
        n, P, N = self.system.n, self.P, self.intervals
        V0 = z[self._block_matrix()]
        if self.free:
            V0 = np.hstack([V0, np.full((N, 1), self._h(z))])
        d = V0.shape[1]
        E = 6e-6 * np.maximum(1.0, np.abs(V0))
        if self.free:
            E[:, -1] = 1e-6 * V0[:, -1]
        # a bounded batch of perturbed steps at a time (their derivative arrays' bytes)
        per = 8 * 2 * d * 2 * n * (2 + P) * n * (1 + P * bool(self._points))
        size = max(1, int(self._HESSIAN_BATCH_BYTES // per))
        H = np.concatenate([self._hessian_chunk(np.arange(N)[c:c + size], V0[c:c + size],
                                                E[c:c + size], obj_factor, nu)
                            for c in range(0, N, size)])
        return 0.5 * (H + H.transpose(0, 2, 1))

    def _hessian_chunk(self, kk, V0, E, obj_factor, nu):
        """:meth:`_block_hessians`' differences for the intervals kk at their
        variables V0 (K, d) with steps E (K, d): the items V0[k] +- E[k, j]
        e_j, all in one call of the C core; returns (K, d, d), row j the
        gradient's derivative in v_j (not yet symmetric)."""
        w, P, m = 2 * self.system.n, self.P, self.n_inputs
        nb = len(self._block(0))
        K, d = V0.shape
        Vs = np.repeat(V0[:, None, None, :], d, axis=1).repeat(2, axis=2)
        jj = np.arange(d)
        Vs[:, jj, 0, jj] += E
        Vs[:, jj, 1, jj] -= E
        Vs = Vs.reshape(-1, d)
        ks = np.repeat(kk, 2 * d)
        hs = Vs[:, -1] if self.free else np.full(len(ks), self.h)
        _, jac, point = self._shoot(ks, Vs[:, :nb], hs)
        nus = np.asarray(nu)[:self.intervals * w].reshape(-1, w)
        G = np.einsum("brc,br->bc", jac, nus[ks])
        U = Vs[:, w:w + P * m].reshape(-1, P, m)
        if self._Bq is not None:
            Fk = Vs[:, w + P * m:nb].reshape(len(ks), P, -1)
            dI = self._input_blocks(ks, point, U, Fk)[1]
            nui = np.repeat([self._nu_inputs(nu, k) for k in kk], 2 * d, axis=0)
            G += np.einsum("bx,bxc->bc", nui, dI.reshape(len(ks), -1, dI.shape[-1]))
        if self._running:
            G += obj_factor * self._running_blocks(ks, point, U, hs)[1]
        if self._paths:
            dP = self._path_blocks(ks, point, U, hs)[1]
            nup = np.repeat([self._nu_path(nu, k) for k in kk], 2 * d, axis=0)
            G += np.einsum("bx,bxc->bc", nup, dP.reshape(len(ks), -1, dP.shape[-1]))
        G = G.reshape(K, d, 2, d)
        return (G[:, :, 0] - G[:, :, 1]) / (2 * E[:, :, None])

    def _lagrangian_hessian(self, z, obj_factor, nu):
        """The Hessian of obj_factor J + nu . c (dense; the end conditions'
        curvature left out)."""
        H = np.zeros((self.n_variables, self.n_variables))
        Hb = self._block_hessians(z, obj_factor, nu)
        for k in range(self.intervals):
            idx = self._block_cols(k)
            H[np.ix_(idx, idx)] += Hb[k]
        if self._cost.has_end:
            w = 2 * self.system.n
            end = slice(self._ny - w, self._ny)
            H[end, end] += obj_factor * self._cost.end_hess(z[end])
        return H

    # ------------------------------------------------------------ sparse forms (IPOPT)
    def jac_structure(self):
        """(rows, cols) of the constraint Jacobian's nonzeros: per interval its
        start's 2n x 2n block, -I on the next node, its inputs' block (and
        the step's column); each end condition's row over its node's 2n
        columns; each path row over its interval's columns."""
        n, N = self.system.n, self.intervals
        w = 2 * n
        rows, cols = [], []
        for k in range(N):
            r = k * w + np.arange(w)
            cb = self._block_cols(k)
            rows += [np.repeat(r, len(cb)), r]
            cols += [np.tile(cb, w), k * w + w + np.arange(w)]
        r0 = N * w
        for node, conds in ((0, self.start), (N, self.end)):
            for _key, (idx, _v) in conds.items():
                for _ in idx:
                    rows.append(np.full(w, r0))
                    cols.append(node * w + np.arange(w))
                    r0 += 1
        for per, on in ((self.P * n, self._Bq is not None), (self.P * self._R, bool(self._paths))):
            for k in range(N if on else 0):       # the inputs' rows, then the path's
                cb = self._block_cols(k)
                rows.append(np.repeat(r0 + k * per + np.arange(per), len(cb)))
                cols.append(np.tile(cb, per))
            r0 += N * per if on else 0
        return np.concatenate(rows).astype(np.int64), np.concatenate(cols).astype(np.int64)

    def jac_values(self, z):
        """The Jacobian's values in the order of :meth:`jac_structure`."""
        n, N = self.system.n, self.intervals
        w = 2 * n
        _, dy = self._steps(z)
        parts = []
        for k in range(N):
            parts += [dy[k].ravel(), -np.ones(w)]
        ends = self._end_rows(z)[1]
        j = 0
        for node, conds in ((0, self.start), (N, self.end)):
            for _key, (idx, _v) in conds.items():
                for _ in idx:
                    parts.append(ends[j, node * w:(node + 1) * w])
                    j += 1
        if self._Bq is not None:
            parts.append(self._input_all(z)[1].ravel())
        if self._paths:
            parts.append(self._path_all(z)[1].ravel())
        return np.concatenate(parts)

    def hess_structure(self):
        """(rows, cols) of the lower triangle of the Lagrangian's Hessian: the
        blocks of the intervals' variables (the cost's and the dynamics'),
        and with a free duration the step's row and its diagonal entry."""
        rows, cols = [], []
        last = self.n_variables - 1
        for k in range(self.intervals):
            idx = self._block(k)
            i, j = np.tril_indices(len(idx))
            rows.append(idx[i])
            cols.append(idx[j])
            if self.free:
                rows.append(np.full(len(idx), last))
                cols.append(idx)
        if self.free:
            rows.append(np.array([last]))
            cols.append(np.array([last]))
        if self._cost.has_end:                  # the end state's block (the terminal cost)
            w = 2 * self.system.n
            i, j = np.tril_indices(w)
            rows.append(self._ny - w + i)
            cols.append(self._ny - w + j)
        return np.concatenate(rows).astype(np.int64), np.concatenate(cols).astype(np.int64)

    def hess_values(self, z, obj_factor, nu):
        """obj_factor * Hess J + Hess (nu . c) in the order of :meth:`hess_structure`
        (the end conditions' curvature left out: it only steers the iterations)."""
        w = 2 * self.system.n
        nb = len(self._block(0))
        Hb = self._block_hessians(z, obj_factor, nu)
        i, j = np.tril_indices(nb)
        out = np.concatenate([Hb[:, i, j]] + ([Hb[:, -1, :nb]] if self.free else []), axis=1)
        out = [out.ravel()]
        if self.free:
            out.append(np.array([Hb[:, -1, -1].sum()]))
        if self._cost.has_end:
            i, j = np.tril_indices(w)
            out.append(obj_factor * self._cost.end_hess(z[self._ny - w:self._ny])[i, j])
        return np.concatenate(out)

    def kkt_residual(self, z, nu):
        """The first-order conditions' residual at (z, nu): the largest of |c|
        and, with r = grad J + J_c^T nu, |r_j| for a variable inside its
        bounds, max(0, -r_j) at its lower bound and max(0, r_j) at its upper
        one (the bound's multiplier r_j must not be negative there); none for
        a variable an end condition on q or p fixes (that condition's
        multiplier, which only its row sees, takes up r_j)."""
        r = self.objective_grad(z) + self.constraints_jac(z).T @ nu
        at_lo, at_hi = self._at_bound(z, 1e-12)
        res = np.where(at_lo, np.maximum(0.0, -r), np.where(at_hi, np.maximum(0.0, r),
                                                              np.abs(r)))
        res[self._pinned] = 0.0
        c = self.constraints(z)
        worst = max(float(np.max(res, initial=0.0)),
                    float(np.max(np.abs(c[:self._neq]), initial=0.0)))
        if self._paths:
            return max(worst, self._path_residual(c[self._neq:], np.asarray(nu)[self._neq:]))
        return worst

    def _at_bound(self, z, rel):
        """(at the lower bound, at the upper bound): within rel relative."""
        scale = np.maximum(1.0, np.abs(z))
        return z - self._lo <= rel * scale, self._hi - z <= rel * scale

    def _free(self, z):
        """The variables not at a bound (within 1e-12 relative)."""
        at_lo, at_hi = self._at_bound(z, 1e-12)
        return ~(at_lo | at_hi)

    def _polish(self, z, nu, tol, active=None, iters=8):
        """Newton's iteration on the first-order conditions from (z, nu),
        the variables at a bound held there: [H A^T; A 0] (dz, nu+) = (-g, -c),
        H the Lagrangian's Hessian (_lagrangian_hessian).  ``active`` (the
        solver's verdict: a bound multiplier that is not zero) puts those
        variables on their bound first.  The path rows active at the start
        (:meth:`_path_active`) are held at their bound as equalities, the
        others left out (their multipliers 0); a held row whose multiplier
        comes out with the bound's wrong sign is let go, and a row a step
        takes past its bound is held from then on (the step solved again).
        Returns the best (z, nu, residual) met."""
        nu = np.asarray(nu, dtype=float)
        if len(nu) < self._neq + len(self._path_lo):      # a solver without the path's
            nu = np.concatenate([nu, np.zeros(self._neq + len(self._path_lo) - len(nu))])
        first = (z, nu, self.kkt_residual(z, nu))
        act, at_hi = self._path_active(z, nu)
        rows = np.concatenate([np.arange(self._neq), self._neq + np.flatnonzero(act)])
        target = np.concatenate([np.zeros(self._neq),
                                 np.where(at_hi, self._path_hi, self._path_lo)])
        if active is not None and active.any():
            z = z.copy()
            lo_side = np.abs(z - self._lo) <= np.abs(self._hi - z)
            z[active] = np.where(lo_side, self._lo, self._hi)[active]
        try:
            best = (z, nu, self.kkt_residual(z, nu))
        except ConvergenceError:
            return first
        for _ in range(iters):
            z, nu, res = best
            if res <= tol:
                break
            free = self._free(z)
            try:
                H = self._lagrangian_hessian(z, 1.0, nu)[np.ix_(free, free)]
            except ConvergenceError:     # a step the differences could not take
                break
            A = self.constraints_jac(z)[np.ix_(rows, free)]
            nc = A.shape[0]
            K = np.block([[H, A.T], [A, np.zeros((nc, nc))]])
            rhs = -np.concatenate([self.objective_grad(z)[free],
                                   (self.constraints(z) - target)[rows]])
            try:
                sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
            except np.linalg.LinAlgError:
                break
            z1 = z.copy()
            z1[free] += sol[:free.sum()]
            z1 = np.clip(z1, self._lo, self._hi)
            nu1 = np.zeros_like(nu)
            nu1[rows] = sol[free.sum():]
            # the held path rows: one whose multiplier has the bound's wrong sign is let
            # go (the optimum leaves it, or it is degenerate), one that the step takes
            # past its bound is held (an active-set iteration), and the step solved again
            wrong = act & np.where(at_hi, nu1[self._neq:] < 0, nu1[self._neq:] > 0)
            if wrong.any():
                act &= ~wrong
            else:
                try:
                    r1 = self.kkt_residual(z1, nu1)
                    cp = self.constraints(z1)[self._neq:]
                except ConvergenceError:    # a step the integrator cannot take: keep the best
                    break
                past = ~act & ((cp > self._path_hi) | (cp < self._path_lo))
                if r1 < best[2]:
                    best = (z1, nu1, r1)
                elif not past.any():
                    break
                act |= past
                at_hi = np.where(past, cp > self._path_hi, at_hi)
                target[self._neq:] = np.where(at_hi, self._path_hi, self._path_lo)
            rows = np.concatenate([np.arange(self._neq), self._neq + np.flatnonzero(act)])
        return best if best[2] < first[2] else first

    # ------------------------------------------------------------ cost, constraints
    def objective(self, z):
        """The discrete cost (see :mod:`symplectic.control._costs`)."""
        Y, U = self._split(z)
        end = self._cost.end_value(Y[-1]) if self._cost.has_end else 0.0
        return float(self._cost.value(U, self._h(z), self._b) + end + self._running_all(z)[0])

    def objective_grad(self, z):
        Y, U = self._split(z)
        h = self._h(z)
        g = np.zeros_like(z)
        g[self._ny:self._ny + self._nu] = np.ravel(self._cost.grad_u(U, h, self._b))
        if self._cost.has_end:
            g[self._ny - Y.shape[1]:self._ny] = self._cost.end_grad(Y[-1])
        if self.free:
            g[-1] = self._cost.grad_h(U, h, self._b)
        return g + self._running_all(z)[1]

    def _end_rows(self, z):
        """The end conditions' residuals and Jacobian rows."""
        n, N = self.system.n, self.intervals
        Y, _ = self._split(z)
        vals, rows = [], []
        for node, conds in ((0, self.start), (N, self.end)):
            q, p = Y[node, :n], Y[node, n:]
            col = node * 2 * n
            for key, (idx, target) in conds.items():
                J = np.zeros((len(idx), self.n_variables))
                if key == "q":
                    vals.append(q[idx] - target)
                    J[np.arange(len(idx)), col + idx] = 1.0
                elif key == "p":
                    vals.append(p[idx] - target)
                    J[np.arange(len(idx)), col + n + idx] = 1.0
                else:                  # qdot = M(q)^-1 p: d qdot = M^-1 (dp - A(q, qdot) dq)
                    Minv = np.linalg.inv(self.system.mass(q))
                    v = Minv @ p
                    vals.append(v[idx] - target)
                    J[:, col:col + n] = -(Minv @ self.system.mass_dir(q, v))[idx]
                    J[:, col + n:col + 2 * n] = Minv[idx]
                rows.append(J)
        if not vals:
            return np.zeros(0), np.zeros((0, self.n_variables))
        return np.concatenate(vals), np.vstack(rows)

    def constraints(self, z):
        """The constraints: Phi_h(q_k, p_k; B u_k) - (q_{k+1}, p_{k+1}), k = 0..N-1
        (N 2n values), then the end conditions, with inputs B(q) F_ki -
        B(q_ki) u_ki (interval by interval, point by point; these = 0), then the path
        constraints c(t_ki, q_ki, qdot_ki, u_ki), interval by interval and
        point by point (between their bounds: :meth:`constraint_bounds`)."""
        ends, _ = self._steps(z)
        Y, _ = self._split(z)
        parts = [(ends - Y[1:]).ravel(), self._end_rows(z)[0]]
        if self._Bq is not None:
            parts.append(self._input_all(z)[0])
        if self._paths:
            parts.append(self._path_all(z)[0])
        return np.concatenate(parts)

    def constraints_jac(self, z):
        """Their exact Jacobian (dense, rows x n_variables)."""
        n, N = self.system.n, self.intervals
        _, dy = self._steps(z)
        w = 2 * n
        J = self._block_rows(dy)
        for k in range(N):
            J[k * w:(k + 1) * w, (k + 1) * w:(k + 2) * w] -= np.eye(w)
        parts = [J, self._end_rows(z)[1]]
        if self._Bq is not None:
            parts.append(self._block_rows(self._input_all(z)[1]))
        if self._paths:
            parts.append(self._block_rows(self._path_all(z)[1]))
        return np.vstack(parts)

    def _block_rows(self, d):
        """Dense rows from each interval's rows over its own columns: d (N,
        ..., columns) -> (N * rows per interval, n_variables)."""
        N = self.intervals
        per = int(np.prod(d.shape[1:-1]))
        out = np.zeros((N * per, self.n_variables))
        for k in range(N):
            out[np.ix_(k * per + np.arange(per), self._block_cols(k))] = d[k].reshape(per, -1)
        return out

    # ------------------------------------------------------------ the guess
    def _pack(self, q, p, U, T, F=None):
        """z from the nodes' states, the inputs and T; with inputs B(q) the
        forces F (N, P, n), by default B(q_k) u_ki at each interval's start."""
        parts = [np.hstack([q, p]).ravel(), np.ravel(U)]
        if self._Bq is not None:
            if F is None:
                F = np.array([[self._Bq.matrix(np.asarray(q[k], dtype=float)) @ U[k, i]
                               for i in range(self.P)] for k in range(self.intervals)])
            parts.append(np.ravel(F))
        z = np.concatenate(parts)
        return np.append(z, T / self.intervals) if self.free else z

    def _costate0(self, z, nu):
        """lambda_0: the discrete adjoint recursion lambda_k = D_k^T
        lambda_{k+1} + dJ/dy_k (+ the other rows of interval k) continued to
        k = 0, i.e. the Lagrangian's gradient in (q_0, p_0) without the
        start conditions' rows."""
        nu = np.array(nu, dtype=float)
        r0 = self.intervals * 2 * self.system.n
        nu[r0:r0 + sum(len(i) for i, _ in self.start.values())] = 0.0
        return (self.objective_grad(z) + self.constraints_jac(z).T @ nu)[:2 * self.system.n]

    def _guess(self, guess):
        n, N, P, m = self.system.n, self.intervals, self.P, self.n_inputs
        if isinstance(guess, Solution):
            T = guess.duration if self.free else self.duration
            t = np.linspace(0.0, T, N + 1)
            s = t * (guess.duration / T)              # the guess's time at the same fraction
            q = np.column_stack([np.interp(s, guess.t, guess.q[:, j]) for j in range(n)])
            p = np.column_stack([np.interp(s, guess.t, guess.p[:, j]) for j in range(n)])
            F = None
            if guess.u.shape == (N, P, m) and guess.method == self.method and \
                    abs(guess.duration - T) <= 1e-12 * T:
                U = guess.u.copy()
                F = guess.forces.copy() if self._Bq is not None else None
            else:
                tu = self.point_times(T / N).ravel() * (guess.duration / T)
                U = guess.u_at(np.clip(tu, 0.0, guess.duration)).reshape(N, P, m)
            return self._pack(q, p, U, T, F)
        T = self.duration
        t = np.linspace(0.0, T, N + 1)
        if guess is None:
            guess = {}
        if not isinstance(guess, dict) or set(guess) - {"q", "p", "u"}:
            raise TypeError("guess must be None, a control.Solution or a dict with keys 'q' "
                            "(N+1, n), 'p' (N+1, n), 'u' (N, P, m)")
        U = np.zeros((N, P, m))
        if guess.get("u") is not None:
            U = np.broadcast_to(np.asarray(guess["u"], dtype=float), (N, P, m)).copy()
        simulate = (guess.get("u") is not None or self.system.n_constraints > 0) and \
            self._Bq is None
        if guess.get("q") is None and simulate and self._full_start():
            # a simulated guess: the start state driven by the guessed inputs (the default
            # with constraints: a straight line in q would leave their manifold)
            q0, p0 = self._full_start()
            tr = _integrate.integrate(self.system, q0, p0, self.h, N, method=self.method,
                                      force=U @ self.inputs.T, **self._options)
            return self._pack(tr.q, tr.p, U, T)
        if guess.get("q") is not None:
            q = np.broadcast_to(np.asarray(guess["q"], dtype=float), (N + 1, n))
        else:           # the straight line between the given ends' positions
            qa = self._given("q", self.start, np.zeros(n))
            qb = self._given("q", self.end, qa)
            q = qa + np.outer(t / T, qb - qa)
        p = np.zeros((N + 1, n)) if guess.get("p") is None else \
            np.broadcast_to(np.asarray(guess["p"], dtype=float), (N + 1, n))
        return self._pack(q, p, U, T)

    def _constrained_start(self):
        """A system with holonomic constraints: the scheme solves them and
        the whole start is given, on the constraint manifold (every later
        node is on it by the step itself)."""
        if not self._m.constrained:
            raise ValueError(f"control.Problem: {self.method} does not solve systems with "
                             f"holonomic constraints; use a variational scheme")
        full = self._full_start()
        if full is None:
            raise NotImplementedError("control.Problem: a system with holonomic constraints needs "
                                      "the whole start (q and qdot or p): it is fixed on the "
                                      "constraint manifold")
        _validate.constrained_state(self.system, self._m, full[0], full[1], "start['q']",
                                    "start's momentum", True, self._spec.options)

    @staticmethod
    def _given(key, conds, default):
        out = np.array(default, dtype=float)
        if key in conds:
            idx, v = conds[key]
            out[idx] = v
        return out

    def _full_start(self):
        """(q0, p0) when the start fixes every component, else None."""
        n = self.system.n
        if "q" not in self.start or len(self.start["q"][0]) != n:
            return None
        q0 = self.start["q"][1]
        for key in ("p", "qdot"):
            if key in self.start and len(self.start[key][0]) == n:
                v = self.start[key][1]
                return q0, (v if key == "p" else self.system.momentum(q0, v))
        return None

    # ------------------------------------------------------------ solve
    def solve(self, solver="auto", *, tol=1e-10, guess=None, max_iter=500, polish=None,
              polish_tol=1e-12, hessian="auto", verbose=False):
        """Solve the transcribed problem; returns a :class:`Solution`.

        ``solver``: ``"ipopt"`` (IPOPT through ``ipyopt``, the extra
        ``symplectic[control]``: sparse exact Jacobian, bounds by its
        interior point method; ``tol`` its ``tol``), ``"trust-constr"`` or
        its alias ``"scipy"`` (SciPy's: the sparse exact Jacobian and the
        same Hessian, bounds and path constraints by its interior point
        method, else its SQP; ``tol`` its ``gtol``, the largest entry of
        the Lagrangian's gradient and of the constraints' violation),
        ``"slsqp"`` (SciPy's SLSQP: dense, a quasi-Newton Hessian, for up
        to a few hundred unknowns; ``tol`` its ``ftol``), or ``"auto"``:
        IPOPT when ``ipyopt`` imports, else SLSQP (on the tests' problems
        the more reliable of the two: trust-constr can stop short of a
        path-constrained optimum, SLSQP cannot step back from a failed
        trial step and fails on a holonomic swing-up that trust-constr
        solves).  ``Solution.solver`` names the one that ran.
        ``hessian`` (IPOPT, trust-constr; the polish's too): ``"exact"`` --
        the dynamics' curvature by the second-order adjoint of the step,
        with the third derivatives of L (and of the forces and holonomic
        constraints) that SymPy derives: for a system from SymPy, a
        variational scheme, inputs constant or the system's own B(q), and
        running costs and path constraints, if any, from SymPy (else a
        ValueError names what is not covered) --, ``"differences"`` --
        central differences of the exact gradients, block by block,
        accurate to about 1e-8 --, ``"auto"`` (the default: exact where
        covered, else differences) or
        ``"limited-memory"`` (IPOPT's quasi-Newton; SciPy's BFGS for the
        cost and SR1 for the constraints; the polish as ``"auto"``).  The
        cost's own Hessian is exact in each.  ``Solution.hessian`` names
        the one used.  ``guess``: None (the straight
        line between the end positions at rest, zero inputs), a
        :class:`Solution` (a warm start,
        resampled to this problem's nodes and points), or a dict with
        ``"q"``, ``"p"`` ((N+1, n)) and/or ``"u"`` ((N, P, m)); ``"u"``
        alone with a fully given start is simulated from it (with holonomic
        constraints the default guess is that simulation with no input).

        ``polish`` (default: on after a successful solve, up to 3000
        unknowns): Newton's iteration on the first-order conditions -- the
        exact gradient and constraint Jacobian, the constraints' curvature
        as for ``hessian`` (``"exact"`` or ``"differences"``) -- with the
        variables at a bound held there, until their residual
        (``Solution.kkt_residual``) is below ``polish_tol`` or stops
        falling (at most 8 iterations; dense).  SLSQP stops on the change of
        the cost, which leaves the inputs only about sqrt(tol) accurate,
        IPOPT on its scaled residuals and trust-constr also on its trust
        radius.
        """
        if solver == "auto":
            solver = "ipopt" if _ipopt.available() else "slsqp"
        solver = "trust-constr" if solver == "scipy" else solver
        if solver not in ("ipopt", "trust-constr", "slsqp"):
            raise ValueError(f"solver must be 'auto', 'ipopt', 'trust-constr', 'slsqp' or "
                             f"'scipy', got {solver!r}")
        self._use_hessian(hessian)
        z0 = np.clip(self._guess(guess), self._lo, self._hi)
        t_start = time.perf_counter()
        if solver == "ipopt":
            z, nu, active, report = _ipopt.solve(self, z0, tol=tol, max_iter=max_iter,
                                                 hessian=hessian, verbose=verbose)
        elif solver == "trust-constr":
            z, nu, active, report = _scipy.trust_constr(self, z0, tol, max_iter, hessian,
                                                        verbose=verbose)
        else:
            z, nu, report = _scipy.slsqp(self, z0, tol, max_iter)
            active = None
        kkt = None
        if polish or (polish is None and report.success and self.n_variables <= 3000):
            z, nu, kkt = self._polish(z, nu, polish_tol, active)
        elapsed = time.perf_counter() - t_start
        sol = Solution(self, z, report, elapsed, nu, kkt)
        sol.hessian = "limited-memory" if hessian == "limited-memory" else \
            "exact" if self._curvature is not None else "differences"
        return sol
