"""The terms of a control problem that live at the scheme's force points,
on the step's own states there (sym_run.points): running costs, path
constraints and the equations F = B(q) u of inputs through the
configuration, each with its derivative in the interval's variables; and
the path rows' bounds, active set and first-order residual.  A mixin of
symplectic.control._problem.Problem, whose attributes (the steps' cache,
the interval blocks, the sizes) it reads."""
import numpy as np


class PointTerms:
    """Problem's force-point terms (see the module's docstring)."""

    def _point_args(self, ks, points, U, h):
        """The arguments of a term at the force points of the intervals ks
        with steps h (a number, or one per interval): tau = k + x_i (K P,),
        t = tau h, q_i, qdot_i (K P, n), u_i (K P, m), and h at each point
        (K P,)."""
        n, m = self.system.n, self.n_inputs
        vals = points[0]
        tau = (np.asarray(ks, dtype=float)[:, None] + self._x[None, :]).ravel()
        hp = np.repeat(np.broadcast_to(np.asarray(h, dtype=float), (len(ks),)), self.P)
        return tau, tau * hp, vals[:, :, :n].reshape(-1, n), vals[:, :, n:].reshape(-1, n), \
            U.reshape(-1, m), hp

    def _running_blocks(self, ks, points, U, h):
        """The running terms over the intervals ks: their value, and the
        gradient in each interval's variables (len(ks), 2n + P m [+ 1]) from
        the states at the force points and their derivatives ``points``
        ((K, P, 2n), (K, P, 2n, columns)), the inputs U (K, P, m) and h (a
        number, or one per interval):
        J = h sum_k sum_i b_i l(t_ki, q_ki, qdot_ki, u_ki), t_ki = (k + x_i) h."""
        n, P, m = self.system.n, self.P, self.n_inputs
        K, D = len(ks), points[1]
        tau, t, Q, V, Uf, hp = self._point_args(ks, points, U, h)
        bw = np.tile(self._b, K)
        hb = hp * bw
        value, grad = 0.0, np.zeros((K, D.shape[-1]))
        for c, term in self._cost.running:
            l = term.values(t, Q, V, Uf)
            gq, gv, gu = term.grads(t, Q, V, Uf)
            value += c * float(hb @ l)
            gs = (c * hb[:, None] * np.hstack([gq, gv])).reshape(K, P, 2 * n)
            grad += np.einsum("kir,kirc->kc", gs, D)
            grad[:, 2 * n:2 * n + P * m] += (c * hb[:, None] * gu).reshape(K, P * m)
            if self.free:      # d/dh of h b_i l(t_ki, ...): the states' part is in D
                lt = term.dt(t, Q, V, Uf)
                grad[:, -1] += (c * bw * (l + hp * lt * tau)).reshape(K, P).sum(axis=1)
        return value, grad

    def _cached(self, key, z, compute):
        """compute(), kept by z under key (the terms ask for the same z many
        times: the constraints, their Jacobian and the gradient)."""
        hit = self._zcache.get(key)
        if hit is not None and np.array_equal(hit[0], z):
            return hit[1]
        self._steps(z)
        out = compute()
        self._zcache[key] = (z.copy(), out)
        return out

    def _running_all(self, z):
        """The running terms' value and gradient in z (zeros without them)."""
        if not self._running:
            return 0.0, np.zeros_like(z)

        def compute():
            g = np.zeros_like(z)
            _, U = self._split(z)
            value, gb = self._running_blocks(np.arange(self.intervals), self._cache[3], U,
                                             self._h(z))
            blocks = self._block_matrix()
            g[blocks] += gb[:, :blocks.shape[1]]         # no variable in two blocks
            if self.free:
                g[-1] += gb[:, -1].sum()
            return value, g
        value, g = self._cached("running", z, compute)
        return value, g.copy()

    def _path_blocks(self, ks, points, U, h):
        """The path constraints at the force points of the intervals ks:
        values (K, P, R) and their derivative in each interval's variables
        (K, P, R, 2n + P m [+ 1]), from the points' states and derivatives
        as for :meth:`_running_blocks`."""
        n, P, m = self.system.n, self.P, self.n_inputs
        K, D = len(ks), points[1]
        tau, t, Q, V, Uf, _ = self._point_args(ks, points, U, h)
        cv, cd = [], []
        for pc in self._paths:
            cv.append(pc.values(t, Q, V, Uf).reshape(K, P, pc.r))
            jq, jv, ju = pc.jacobians(t, Q, V, Uf)
            js = np.concatenate([jq, jv], axis=2).reshape(K, P, pc.r, 2 * n)
            d = np.einsum("kijr,kirc->kijc", js, D)
            ju = ju.reshape(K, P, pc.r, m)
            for i in range(P):
                d[:, i, :, 2 * n + i * m:2 * n + (i + 1) * m] += ju[:, i]
            if self.free:      # t_ki = tau_ki h: the explicit time's part of d/dh
                d[..., -1] += (pc.dt(t, Q, V, Uf) * tau[:, None]).reshape(K, P, pc.r)
            cd.append(d)
        return np.concatenate(cv, axis=2), np.concatenate(cd, axis=2)

    def _path_all(self, z):
        """The path constraints' values (N P R,) and derivatives (N, P, R,
        columns) at z (cached by z)."""
        def compute():
            _, U = self._split(z)
            v, d = self._path_blocks(np.arange(self.intervals), self._cache[3], U, self._h(z))
            return v.ravel(), d
        return self._cached("path", z, compute)

    def _input_blocks(self, ks, points, U, F):
        """With inputs B(q): the equations F_ki - B(q_ki) u_ki at the force
        points of the intervals ks, values (K, P, n) and their derivative in
        each interval's variables (K, P, n, columns): through the points'
        states (d/dq_ki), directly in u_ki (-B) and in F_ki (I)."""
        n, P, m = self.system.n, self.P, self.n_inputs
        K = len(ks)
        vals, D = points
        g, gq, gu = self._Bq.rows(vals[:, :, :n].reshape(-1, n), U.reshape(-1, m),
                                  F.reshape(-1, n))
        d = np.einsum("kicl,kilx->kicx", gq.reshape(K, P, n, n), D[:, :, :n, :])
        gu = gu.reshape(K, P, n, m)
        f0 = 2 * n + P * m
        for i in range(P):
            d[:, i, :, 2 * n + i * m:2 * n + (i + 1) * m] += gu[:, i]
            d[:, i, :, f0 + i * n:f0 + (i + 1) * n] += np.eye(n)
        return g.reshape(K, P, n), d

    def _input_all(self, z):
        """The inputs' equations (N P n,) and their derivatives (N, P, n,
        columns) at z (cached by z)."""
        def compute():
            _, U = self._split(z)
            v, d = self._input_blocks(np.arange(self.intervals), self._cache[3], U,
                                      self._forces_of(z))
            return v.ravel(), d
        return self._cached("inputs", z, compute)

    def _forces_of(self, z):
        """The per-point generalized forces (N, P, n): the unknowns F with
        inputs B(q), else B u."""
        if self._Bq is not None:
            return z[self._ny + self._nu:self._ny + self._nu + self._nf].reshape(
                self.intervals, self.P, self.system.n)
        return self._split(z)[1] @ self.inputs.T

    def _nu_inputs(self, nu, k):
        """The multipliers of interval k's rows F_ki - B(q_ki) u_ki."""
        Pn = self.P * self.system.n
        r0 = self.intervals * 2 * self.system.n + self._nend + k * Pn
        return np.asarray(nu)[r0:r0 + Pn] if self._Bq is not None else None

    def _nu_path(self, nu, k):
        """The multipliers of interval k's path rows."""
        PR = self.P * self._R
        return np.asarray(nu)[self._neq + k * PR:self._neq + (k + 1) * PR]

    def constraint_bounds(self):
        """(lower, upper) of every constraint row: 0 for the dynamics and the
        end conditions, the path constraints' bounds (+-inf: none)."""
        z = np.zeros(self._neq)
        return np.concatenate([z, self._path_lo]), np.concatenate([z, self._path_hi])

    def _path_active(self, z, nu):
        """(active, at the upper bound) of each path row: within 1e-6
        relative of a bound, or its multiplier large against its distance to
        it with the bound's sign (nu >= 0 at an upper bound)."""
        if not self._paths:
            return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
        c = self.constraints(z)[self._neq:]
        nup = np.asarray(nu)[self._neq:] if len(nu) > self._neq else np.zeros(len(c))
        lo, hi = self._path_lo, self._path_hi
        with np.errstate(invalid="ignore"):
            dhi, dlo = hi - c, c - lo
            act_hi = np.isfinite(hi) & ((dhi <= 1e-6 * np.maximum(1.0, np.abs(hi))) |
                                        (nup > 0.1 * dhi))
            act_lo = np.isfinite(lo) & ((dlo <= 1e-6 * np.maximum(1.0, np.abs(lo))) |
                                        (-nup > 0.1 * dlo))
        return act_hi | act_lo, act_hi & (~act_lo | (dhi <= dlo))

    def _path_residual(self, c, nup):
        """The path rows' part of the residual: their violation, and the
        sign of their multipliers (nu >= 0 at an upper bound, <= 0 at a
        lower one, 0 inside, within 1e-9 relative of a bound)."""
        lo, hi = self._path_lo, self._path_hi
        viol = np.maximum(0.0, np.maximum(c - hi, lo - c))
        with np.errstate(invalid="ignore"):
            at_hi = np.isfinite(hi) & (hi - c <= 1e-9 * np.maximum(1.0, np.abs(hi)))
            at_lo = np.isfinite(lo) & (c - lo <= 1e-9 * np.maximum(1.0, np.abs(lo)))
        sign = np.where(at_hi & at_lo, 0.0, np.where(
            at_hi, np.maximum(0.0, -nup), np.where(at_lo, np.maximum(0.0, nup), np.abs(nup))))
        return float(np.max(np.maximum(viol, sign), initial=0.0))
