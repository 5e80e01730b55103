"""The nonlinear program of a transcribed control problem: its bounds, its
objective, its constraints with their sparse exact Jacobian, the Hessian of
its Lagrangian and its first-order residual -- what a solver (IPOPT,
SciPy's) and the Newton polish (:mod:`._polish`) see.

Rows, in this order::

    Phi_h(q_k, p_k; B u_k) - (q_{k+1}, p_{k+1})      k = 0 .. N-1       N 2n   (= 0)
    the end conditions on q, qdot, p at t = 0 and T                     (= 0)
    F_ki - B(q_ki) u_ki (inputs B(q)), interval by interval, point by point   (= 0)
    the path constraints c(t_ki, q_ki, qdot_ki, u_ki), likewise    (between their bounds)

The Lagrangian is L = J + nu . c.  Each interval's rows depend on its own
columns only (:meth:`Transcription.columns`), so the Jacobian and the
Hessian are sparse: one block per interval (and the end conditions' rows,
the terminal cost's block)."""
import numpy as np

from . import _hessian
from ._terms import PointTerms


class NLP:
    """The program over a :class:`~._transcription.Transcription` ``tr``:
    ``cost`` (a bound cost, :meth:`Cost.bind`), ``paths`` (bound path
    constraints), ``start`` and ``end`` ({"q"/"qdot"/"p": (indices, values)}),
    ``lower`` and ``upper`` the variables' bounds (+-inf: none).

    ``curvature`` (None, or an exact :class:`~._curvature.Curvature`) is the
    dynamics' part of the Hessian that :meth:`hess_values` uses: None takes
    central differences of the exact gradients (:mod:`._hessian`)."""

    def __init__(self, tr, cost, paths, start, end, lower, upper):
        self.tr, self.cost, self.paths = tr, cost, list(paths)
        self.start, self.end = start, end
        self.lower, self.upper = lower, upper
        self.terms = PointTerms(tr, cost.running, self.paths, tr.inputs)
        self.curvature = None
        n, N, P = tr.n, tr.intervals, tr.P
        self.rows_per_point = self.terms.rows_per_point
        self.n_end = sum(len(i) for c in (start, end) for i, _ in c.values())
        self.n_eq = N * 2 * n + self.n_end + tr.n_f
        self.path_lower = np.tile(np.concatenate([pc.lo for pc in self.paths] or [[]]), N * P)
        self.path_upper = np.tile(np.concatenate([pc.hi for pc in self.paths] or [[]]), N * P)
        self.n_constraints = self.n_eq + len(self.path_lower)
        self.n_variables = tr.n_variables
        self.pinned = np.zeros(self.n_variables, dtype=bool)   # fixed by a q or p condition
        for node, conds in ((0, start), (N, end)):
            for key, (idx, _v) in conds.items():
                if key != "qdot":
                    self.pinned[node * 2 * n + (n if key == "p" else 0) + idx] = True
        self._zcache = {}
        self._pattern = None

    # ------------------------------------------------------------ the point terms, cached by z
    def _cached(self, key, z, compute):
        """compute(steps), kept by z under key (the constraints, their Jacobian
        and the gradient ask for the same z many times)."""
        hit = self._zcache.get(key)
        if hit is not None and np.array_equal(hit[0], z):
            return hit[1]
        out = compute(self.tr.steps(z))
        self._zcache[key] = (z.copy(), out)
        return out

    def running(self, z):
        """The running terms' value and gradient in z (zeros without them)."""
        if not self.terms.running:
            return 0.0, np.zeros_like(z)
        tr = self.tr

        def compute(st):
            g = np.zeros_like(z)
            _, U = tr.split(z)
            value, gb = self.terms.running_blocks(np.arange(tr.intervals), st.points, U,
                                                  tr.step_of(z))
            g[tr.blocks] += gb[:, :tr.block_width]         # no variable in two blocks
            if tr.free:
                g[-1] += gb[:, -1].sum()
            return value, g
        value, g = self._cached("running", z, compute)
        return value, g.copy()

    def path(self, z):
        """The path constraints' values (N P R,) and derivatives (N, P, R,
        columns) at z."""
        tr = self.tr

        def compute(st):
            _, U = tr.split(z)
            v, d = self.terms.path_blocks(np.arange(tr.intervals), st.points, U, tr.step_of(z))
            return v.ravel(), d
        return self._cached("path", z, compute)

    def input_rows(self, z):
        """The inputs' equations F - B(q) u (N P n,) and their derivatives
        (N, P, n, columns) at z."""
        tr = self.tr

        def compute(st):
            _, U = tr.split(z)
            v, d = self.terms.input_blocks(np.arange(tr.intervals), st.points, U,
                                           tr.forces_of(z))
            return v.ravel(), d
        return self._cached("inputs", z, compute)

    def nu_inputs(self, nu, k):
        """The multipliers of interval k's rows F_ki - B(q_ki) u_ki (None
        without inputs B(q))."""
        if not self.tr.inputs.state_dependent:
            return None
        Pn = self.tr.P * self.tr.n
        r0 = self.tr.intervals * 2 * self.tr.n + self.n_end + k * Pn
        return np.asarray(nu)[r0:r0 + Pn]

    def nu_path(self, nu, k):
        """The multipliers of interval k's path rows."""
        PR = self.tr.P * self.rows_per_point
        return np.asarray(nu)[self.n_eq + k * PR:self.n_eq + (k + 1) * PR]

    # ------------------------------------------------------------ cost
    def objective(self, z):
        """The discrete cost (:mod:`symplectic.control._costs`)."""
        tr = self.tr
        Y, U = tr.split(z)
        end = self.cost.end_value(Y[-1]) if self.cost.has_end else 0.0
        return float(self.cost.value(U, tr.step_of(z), tr.b) + end + self.running(z)[0])

    def objective_grad(self, z):
        """Its exact gradient."""
        tr = self.tr
        Y, U = tr.split(z)
        h = tr.step_of(z)
        g = np.zeros_like(z)
        g[tr.n_states:tr.n_states + tr.n_u] = np.ravel(self.cost.grad_u(U, h, tr.b))
        if self.cost.has_end:
            g[tr.n_states - Y.shape[1]:tr.n_states] = self.cost.end_grad(Y[-1])
        if tr.free:                     # d/dT = d/dh / N
            g[-1] = self.cost.grad_h(U, h, tr.b) / tr.intervals
        return g + self.running(z)[1]

    # ------------------------------------------------------------ constraints
    def end_rows(self, z):
        """The end conditions' residuals and Jacobian rows (dense)."""
        tr = self.tr
        n, N = tr.n, tr.intervals
        Y, _ = tr.split(z)
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
                    Minv = np.linalg.inv(tr.system.mass(q))
                    v = Minv @ p
                    vals.append(v[idx] - target)
                    J[:, col:col + n] = -(Minv @ tr.system.mass_dir(q, v))[idx]
                    J[:, col + n:col + 2 * n] = Minv[idx]
                rows.append(J)
        if not vals:
            return np.zeros(0), np.zeros((0, self.n_variables))
        return np.concatenate(vals), np.vstack(rows)

    def constraints(self, z):
        """Every row at z (the module's order)."""
        tr = self.tr
        ends = tr.steps(z).ends
        Y, _ = tr.split(z)
        parts = [(ends - Y[1:]).ravel(), self.end_rows(z)[0]]
        if tr.inputs.state_dependent:
            parts.append(self.input_rows(z)[0])
        if self.paths:
            parts.append(self.path(z)[0])
        return np.concatenate(parts)

    def constraint_bounds(self):
        """(lower, upper) of every row: 0 for the equations, the path
        constraints' bounds (+-inf: none)."""
        z = np.zeros(self.n_eq)
        return np.concatenate([z, self.path_lower]), np.concatenate([z, self.path_upper])

    def constraints_jac(self, z):
        """Their exact Jacobian, dense (rows x n_variables)."""
        tr = self.tr
        w = 2 * tr.n
        J = self.block_rows(tr.steps(z).jac)
        for k in range(tr.intervals):
            J[k * w:(k + 1) * w, (k + 1) * w:(k + 2) * w] -= np.eye(w)
        parts = [J, self.end_rows(z)[1]]
        if tr.inputs.state_dependent:
            parts.append(self.block_rows(self.input_rows(z)[1]))
        if self.paths:
            parts.append(self.block_rows(self.path(z)[1]))
        return np.vstack(parts)

    def block_rows(self, d):
        """Dense rows from each interval's rows over its own columns: d (N,
        ..., columns) -> (N * rows per interval, n_variables)."""
        N = self.tr.intervals
        per = int(np.prod(d.shape[1:-1]))
        out = np.zeros((N * per, self.n_variables))
        for k in range(N):
            out[np.ix_(k * per + np.arange(per), self.tr.columns(k))] = d[k].reshape(per, -1)
        return out

    def jac_structure(self):
        """(rows, cols) of the Jacobian's nonzeros: per interval its start's
        2n x 2n block and its inputs' (and the step's column), -I on the next
        node; each end condition's row over its node's 2n columns; each
        input and path row over its interval's columns."""
        tr = self.tr
        n, N = tr.n, tr.intervals
        w = 2 * n
        rows, cols = [], []
        for k in range(N):
            r = k * w + np.arange(w)
            cb = tr.columns(k)
            rows += [np.repeat(r, len(cb)), r]
            cols += [np.tile(cb, w), k * w + w + np.arange(w)]
        r0 = N * w
        for node, conds in ((0, self.start), (N, self.end)):
            for _key, (idx, _v) in conds.items():
                for _ in idx:
                    rows.append(np.full(w, r0))
                    cols.append(node * w + np.arange(w))
                    r0 += 1
        for per, on in ((tr.P * n, tr.inputs.state_dependent),
                        (tr.P * self.rows_per_point, bool(self.paths))):
            for k in range(N if on else 0):       # the inputs' rows, then the path's
                cb = tr.columns(k)
                rows.append(np.repeat(r0 + k * per + np.arange(per), len(cb)))
                cols.append(np.tile(cb, per))
            r0 += N * per if on else 0
        return np.concatenate(rows).astype(np.int64), np.concatenate(cols).astype(np.int64)

    def jac_values(self, z):
        """The Jacobian's values in the order of :meth:`jac_structure`."""
        tr = self.tr
        n, N = tr.n, tr.intervals
        w = 2 * n
        dy = tr.steps(z).jac
        parts = []
        for k in range(N):
            parts += [dy[k].ravel(), -np.ones(w)]
        ends = self.end_rows(z)[1]
        j = 0
        for node, conds in ((0, self.start), (N, self.end)):
            for _key, (idx, _v) in conds.items():
                for _ in idx:
                    parts.append(ends[j, node * w:(node + 1) * w])
                    j += 1
        if tr.inputs.state_dependent:
            parts.append(self.input_rows(z)[1].ravel())
        if self.paths:
            parts.append(self.path(z)[1].ravel())
        return np.concatenate(parts)

    def jac_t_dot(self, z, nu):
        """J_c(z)^T nu (n_variables,), from the sparse values."""
        jr, jc = self._jac_pattern()
        out = np.zeros(self.n_variables)
        np.add.at(out, jc, self.jac_values(z) * np.asarray(nu)[jr])
        return out

    def _jac_pattern(self):
        if self._pattern is None:
            self._pattern = self.jac_structure()
        return self._pattern

    # ------------------------------------------------------------ the Hessian
    def hess_structure(self):
        """(rows, cols) of the lower triangle of the Lagrangian's Hessian: the
        blocks of the intervals' variables (the cost's and the dynamics'),
        with a free duration the step's row and its diagonal entry, and the
        end state's block with a terminal cost."""
        tr = self.tr
        rows, cols = [], []
        last = self.n_variables - 1
        for k in range(tr.intervals):
            idx = tr.blocks[k]
            i, j = np.tril_indices(len(idx))
            rows.append(idx[i])
            cols.append(idx[j])
            if tr.free:
                rows.append(np.full(len(idx), last))
                cols.append(idx)
        if tr.free:
            rows.append(np.array([last]))
            cols.append(np.array([last]))
        if self.cost.has_end:
            w = 2 * tr.n
            i, j = np.tril_indices(w)
            rows.append(tr.n_states - w + i)
            cols.append(tr.n_states - w + j)
        return np.concatenate(rows).astype(np.int64), np.concatenate(cols).astype(np.int64)

    def hess_values(self, z, obj_factor, nu):
        """obj_factor Hess J + Hess (nu . c) in the order of :meth:`hess_structure`
        (the end conditions' curvature left out: it only steers the iterations)."""
        tr = self.tr
        w, nb = 2 * tr.n, tr.block_width
        Hb = _hessian.block_hessians(self, z, obj_factor, nu)
        i, j = np.tril_indices(nb)
        out = np.concatenate([Hb[:, i, j]] + ([Hb[:, -1, :nb]] if tr.free else []), axis=1)
        out = [out.ravel()]
        if tr.free:
            out.append(np.array([Hb[:, -1, -1].sum()]))
        if self.cost.has_end:
            i, j = np.tril_indices(w)
            out.append(obj_factor * self.cost.end_hess(z[tr.n_states - w:tr.n_states])[i, j])
        return np.concatenate(out)

    # ------------------------------------------------------------ first-order conditions
    def at_bound(self, z, rel):
        """(at the lower bound, at the upper bound): within rel relative."""
        scale = np.maximum(1.0, np.abs(z))
        return z - self.lower <= rel * scale, self.upper - z <= rel * scale

    def inside(self, z):
        """The variables not at a bound (within 1e-12 relative)."""
        at_lo, at_hi = self.at_bound(z, 1e-12)
        return ~(at_lo | at_hi)

    def kkt_residual(self, z, nu):
        """The first-order conditions' residual at (z, nu): the largest of |c|
        (the equations; a path row's violation) and, with r = grad J + J_c^T
        nu, |r_j| for a variable inside its bounds, max(0, -r_j) at its lower
        bound and max(0, r_j) at its upper one (the bound's multiplier r_j
        must not be negative there); none for a variable an end condition on
        q or p fixes (that condition's multiplier, which only its row sees,
        takes up r_j); and the path rows' multipliers' signs."""
        r = self.objective_grad(z) + self.jac_t_dot(z, nu)
        at_lo, at_hi = self.at_bound(z, 1e-12)
        res = np.where(at_lo, np.maximum(0.0, -r), np.where(at_hi, np.maximum(0.0, r),
                                                              np.abs(r)))
        res[self.pinned] = 0.0
        c = self.constraints(z)
        worst = max(float(np.max(res, initial=0.0)),
                    float(np.max(np.abs(c[:self.n_eq]), initial=0.0)))
        if self.paths:
            return max(worst, self.path_residual(c[self.n_eq:], np.asarray(nu)[self.n_eq:]))
        return worst

    def path_active(self, z, nu):
        """(active, at the upper bound) of each path row: within 1e-6
        relative of a bound, or its multiplier large against its distance to
        it with the bound's sign (nu >= 0 at an upper bound)."""
        if not self.paths:
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
        c = self.constraints(z)[self.n_eq:]
        nup = np.asarray(nu)[self.n_eq:] if len(nu) > self.n_eq else np.zeros(len(c))
        lo, hi = self.path_lower, self.path_upper
        with np.errstate(invalid="ignore"):
            dhi, dlo = hi - c, c - lo
            act_hi = np.isfinite(hi) & ((dhi <= 1e-6 * np.maximum(1.0, np.abs(hi))) |
                                        (nup > 0.1 * dhi))
            act_lo = np.isfinite(lo) & ((dlo <= 1e-6 * np.maximum(1.0, np.abs(lo))) |
                                        (-nup > 0.1 * dlo))
        return act_hi | act_lo, act_hi & (~act_lo | (dhi <= dlo))

    def path_residual(self, c, nup):
        """The path rows' part of the residual: their violation, and the
        sign of their multipliers (nu >= 0 at an upper bound, <= 0 at a
        lower one, 0 inside, within 1e-9 relative of a bound)."""
        lo, hi = self.path_lower, self.path_upper
        viol = np.maximum(0.0, np.maximum(c - hi, lo - c))
        with np.errstate(invalid="ignore"):
            at_hi = np.isfinite(hi) & (hi - c <= 1e-9 * np.maximum(1.0, np.abs(hi)))
            at_lo = np.isfinite(lo) & (c - lo <= 1e-9 * np.maximum(1.0, np.abs(lo)))
        sign = np.where(at_hi & at_lo, 0.0, np.where(
            at_hi, np.maximum(0.0, -nup), np.where(at_lo, np.maximum(0.0, nup), np.abs(nup))))
        return float(np.max(np.maximum(viol, sign), initial=0.0))

    def costate0(self, z, nu):
        """lambda_0: the discrete adjoint recursion lambda_k = D_k^T
        lambda_{k+1} + dJ/dy_k (+ the other rows of interval k) continued to
        k = 0, i.e. the Lagrangian's gradient in (q_0, p_0) without the start
        conditions' rows."""
        nu = np.array(nu, dtype=float)
        r0 = self.tr.intervals * 2 * self.tr.n
        nu[r0:r0 + sum(len(i) for i, _ in self.start.values())] = 0.0
        return (self.objective_grad(z) + self.jac_t_dot(z, nu))[:2 * self.tr.n]
