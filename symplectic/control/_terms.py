"""The terms of a control problem that live at the scheme's force points,
on the step's own states there (sym_run.deriv.points): running costs, path
constraints and the equations F = B(q) u of inputs through the
configuration, each with its derivative in an interval's variables (the
columns of :meth:`Transcription.columns`), interval by interval.  The NLP
(:mod:`._nlp`) sums them over the intervals; the exact Hessian
(:mod:`._curvature`) takes their second derivatives."""
import numpy as np


class PointTerms:
    """The force-point terms of a problem: the running cost's terms (weight,
    term) pairs, the bound path constraints and the inputs, over the
    transcription ``tr``."""

    def __init__(self, tr, running, paths, inputs):
        self.tr, self.running, self.paths, self.inputs = tr, list(running), list(paths), inputs
        self.rows_per_point = sum(pc.r for pc in self.paths)

    def args(self, ks, points, U, h):
        """The arguments of a term at the force points of the intervals ks
        with steps h (a number, or one per interval): tau = k + x_i (K P,),
        t = tau h, q_i, qdot_i (K P, n), u_i (K P, m), and h at each point
        (K P,).  (With a free duration the last column of a derivative is in
        T = N h: d/dT = d/dh / N.)"""
        n, m, P = self.tr.n, self.tr.m, self.tr.P
        vals = points[0]
        tau = (np.asarray(ks, dtype=float)[:, None] + self.tr.x[None, :]).ravel()
        hp = np.repeat(np.broadcast_to(np.asarray(h, dtype=float), (len(ks),)), P)
        return tau, tau * hp, vals[:, :, :n].reshape(-1, n), vals[:, :, n:].reshape(-1, n), \
            U.reshape(-1, m), hp

    def running_blocks(self, ks, points, U, h):
        """The running terms over the intervals ks: their value, and the
        gradient in each interval's columns (K, 2n + P m [+ 1]) from the
        states at the force points and their derivatives ``points`` ((K, P,
        2n), (K, P, 2n, columns)), the inputs U (K, P, m) and h (a number, or
        one per interval): J = h sum_k sum_i b_i l(t_ki, q_ki, qdot_ki, u_ki),
        t_ki = (k + x_i) h."""
        tr = self.tr
        n, P, m = tr.n, tr.P, tr.m
        K, D = len(ks), points[1]
        tau, t, Q, V, Uf, hp = self.args(ks, points, U, h)
        bw = np.tile(tr.b, K)
        hb = hp * bw
        value, grad = 0.0, np.zeros((K, D.shape[-1]))
        for c, term in self.running:
            l = term.values(t, Q, V, Uf)
            gq, gv, gu = term.grads(t, Q, V, Uf)
            value += c * float(hb @ l)
            gs = (c * hb[:, None] * np.hstack([gq, gv])).reshape(K, P, 2 * n)
            grad += np.einsum("kir,kirc->kc", gs, D)
            grad[:, 2 * n:2 * n + P * m] += (c * hb[:, None] * gu).reshape(K, P * m)
            if tr.free:      # d/dh of h b_i l(t_ki, ...) / N: the states' part is in D
                lt = term.dt(t, Q, V, Uf)
                grad[:, -1] += (c * bw * (l + hp * lt * tau)).reshape(K, P).sum(axis=1) / \
                    tr.intervals
        return value, grad

    def path_blocks(self, ks, points, U, h):
        """The path constraints at the force points of the intervals ks:
        values (K, P, R) and their derivative in each interval's columns
        (K, P, R, columns), from the points' states and derivatives as for
        :meth:`running_blocks`."""
        tr = self.tr
        n, P, m = tr.n, tr.P, tr.m
        K, D = len(ks), points[1]
        tau, t, Q, V, Uf, _ = self.args(ks, points, U, h)
        cv, cd = [], []
        for pc in self.paths:
            cv.append(pc.values(t, Q, V, Uf).reshape(K, P, pc.r))
            jq, jv, ju = pc.jacobians(t, Q, V, Uf)
            js = np.concatenate([jq, jv], axis=2).reshape(K, P, pc.r, 2 * n)
            d = np.einsum("kijr,kirc->kijc", js, D)
            ju = ju.reshape(K, P, pc.r, m)
            for i in range(P):
                d[:, i, :, 2 * n + i * m:2 * n + (i + 1) * m] += ju[:, i]
            if tr.free:      # t_ki = tau_ki h: the explicit time's part of d/dh, / N
                d[..., -1] += (pc.dt(t, Q, V, Uf) * tau[:, None]).reshape(K, P, pc.r) / \
                    tr.intervals
            cd.append(d)
        return np.concatenate(cv, axis=2), np.concatenate(cd, axis=2)

    def input_blocks(self, ks, points, U, F):
        """With inputs B(q): the equations F_ki - B(q_ki) u_ki at the force
        points of the intervals ks, values (K, P, n) and their derivative in
        each interval's columns (K, P, n, columns): through the points'
        states (d/dq_ki), directly in u_ki (-B) and in F_ki (I)."""
        tr = self.tr
        n, P, m = tr.n, tr.P, tr.m
        K = len(ks)
        vals, D = points
        g, gq, gu = self.inputs.rows(vals[:, :, :n].reshape(-1, n), U.reshape(-1, m),
                                     F.reshape(-1, n))
        d = np.einsum("kicl,kilx->kicx", gq.reshape(K, P, n, n), D[:, :, :n, :])
        gu = gu.reshape(K, P, n, m)
        f0 = 2 * n + P * m
        for i in range(P):
            d[:, i, :, 2 * n + i * m:2 * n + (i + 1) * m] += gu[:, i]
            d[:, i, :, f0 + i * n:f0 + (i + 1) * n] += np.eye(n)
        return g.reshape(K, P, n), d
