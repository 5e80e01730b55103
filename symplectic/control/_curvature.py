"""The dynamics' curvature, exact: the Hessian of nu_k . Phi_h(v_k) (and of
the rows F_ki - B(q_ki) u_ki of inputs B(q)) in each interval's variables v_k
= (q_k, p_k, u_k[, F_k][, h]), by the second-order adjoint of the Galerkin
step, for a system from SymPy whose third derivatives of L it generates.

The forced Galerkin step (csrc/sym_galerkin_forces.c): nodes Q_0 = q_k,
Q_1 .. Q_{s-1} = q_{k+1}; at the force points x_i (weights b_i) the states
q_i = sum_a B_ia Q_a and v_i = sum_a D_ia Q_a / h (B_ia = l_a(x_i), D_ia =
l_a'(x_i), l_a the Lagrange basis of the nodes c_a), the momentum and force
Xi_i = (M(q_i) v_i, L_q(q_i, v_i) + F_sys(q_i, v_i) + F_i); the step's
equations and its end momentum

    R_a = delta_a0 p_k + sum_i b_i [D_ia Xi^P_i + h B_ia Xi^f_i] = 0   (a = 0 .. s-2),
    p_{k+1} = p_k + h sum_i b_i Xi^f_i.

R(Y, x) = 0 defines Y = (Q_1 .. Q_{s-1}) from x = (Q_0, p_k, u_k, F_k, h).
Differentiating it twice (the implicit function theorem; Griewank & Walther,
Evaluating Derivatives, 2nd ed., Section 15.2 on second-order adjoints),

    Hess_x (nu . Phi) = Z^T [Hess_(Y,x) W] Z,   Z = [dY/dx; I],  dY/dx = -R_Y^-1 R_x,
    W = nu_q . Q_{s-1} + nu_p . p_{k+1} + mu . R  (+ lambda_i . (F_i - B(q_i) u_i)),
    R_Y^T mu = -d/dY (W - mu . R),

and W is, besides terms linear in the variables, sum_i b_i [omega^P_i .
Xi^P_i + h omega^f_i . Xi^f_i] with omega^P_i = sum_a lambda_a D_ia and
omega^f_i = sum_a lambda_a B_ia (lambda = (mu, nu_p)): its Hessian needs the
second derivatives of Xi along omega, the third derivatives of L (M'' and
V''') and the second of F_sys, which SymPy derives once per system.  The
first-order parts (dY/dx and the end's derivative) are those of the C core's
step to rounding (tests/validation/test_control_curvature.py).  Running costs
and path rows G(t_i, q_i, v_i, u_i) from SymPy add their gradient to the
adjoint's right-hand side and their Hessian through the points' (t, q, v, u)
(t_ki = (k + x_i) h)."""
import numpy as np


class Unsupported(Exception):
    """The problem's curvature has a part this exact Hessian does not cover
    (its message says which)."""


def _lagrange_tables(c, x):
    """B_ia = l_a(x_i) and D_ia = l_a'(x_i) of the Lagrange basis through the
    nodes c, at the points x."""
    c, x = np.asarray(c, dtype=float), np.asarray(x, dtype=float)
    s = len(c)
    B, D = np.empty((len(x), s)), np.empty((len(x), s))
    for a in range(s):
        others = np.delete(c, a)
        poly = np.poly(others) / np.prod(c[a] - others)
        B[:, a] = np.polyval(poly, x)
        D[:, a] = np.polyval(np.polyder(poly), x)
    return B, D


def _lambdify(args, exprs):
    """A NumPy function of ``args`` returning the expressions' values stacked
    on a last axis (constant entries broadcast to the arguments' shape)."""
    import sympy as sy
    f = sy.lambdify(args, list(exprs), "numpy", cse=True)

    def evaluate(*vals):
        shape = np.shape(vals[1][0])
        return np.stack([np.broadcast_to(np.asarray(e, dtype=float), shape)
                         for e in f(*vals)], axis=-1)
    return evaluate


class _PointModel:
    """Xi(q, v) = (M v, L_q + F_sys) with its Jacobian in w = (q, v), the
    Hessian in w of a . M v + c . (L_q + F_sys), and for inputs B(q) the
    gradient in q and Hessian in (q, u) of lam . B(q) u: NumPy functions from
    SymPy."""

    def __init__(self, system, with_inputs):
        import sympy as sy
        spec, values = system._spec, system.parameters
        q = list(spec["q"])
        n = len(q)
        v, a, c = (list(sy.symbols(f"{p}0:{n}", cls=sy.Dummy)) for p in ("v", "a", "c"))
        M = sy.Matrix(spec["M"]).xreplace(values)
        V = sy.sympify(spec["V"]).xreplace(values)
        F = [sy.S.Zero] * n
        fs = spec.get("forces")
        t = sy.Dummy("t") if fs is None else fs["time"]
        if fs is not None and any(e != 0 for e in fs["F"]):
            sub = dict(zip(fs["qdot"], v))
            F = [sy.sympify(e).xreplace(sub).xreplace(values) for e in fs["F"]]
        vv = sy.Matrix(v)
        P = list(M * vv)
        T = (vv.T * M * vv)[0] / 2
        f = [sy.diff(T, qj) - sy.diff(V, qj) + Fj for qj, Fj in zip(q, F)]
        w = [t] + q + v
        xi = P + f
        jac = [sy.diff(e, y) for e in xi for y in w]
        psi = sum(ai * e for ai, e in zip(a, P)) + sum(ci * e for ci, e in zip(c, f))
        dpsi = [sy.diff(psi, y) for y in w]
        iu = np.triu_indices(1 + 2 * n)
        self.n, self._iu = n, iu
        self._xi = _lambdify([t, q, v], xi + jac)
        self._hess = _lambdify([t, q, v, a, c], [sy.diff(dpsi[i], w[j]) for i, j in zip(*iu)])
        self._inputs = None
        if with_inputs:
            us = list(fs["inputs"])
            m = len(us)
            lam = list(sy.symbols(f"l0:{n}", cls=sy.Dummy))
            beta = (sy.Matrix(lam).T * sy.Matrix(fs["B"]).xreplace(values) * sy.Matrix(us))[0]
            qu = q + us
            ju = np.triu_indices(n + m)
            self._m, self._ju = m, ju
            self._inputs = _lambdify([q, us, lam], [sy.diff(beta, y) for y in q]
                                     + [sy.diff(beta, qu[i], qu[j]) for i, j in zip(*ju)])

    def xi(self, t, q, v):
        """Xi (..., 2n) and dXi/dw (..., 2n, 1 + 2n), w = (t, q, v), at the
        times t (...) and states q, v (..., n)."""
        n = self.n
        out = self._xi(t, np.moveaxis(q, -1, 0), np.moveaxis(v, -1, 0))
        return out[..., :2 * n], out[..., 2 * n:].reshape(*q.shape[:-1], 2 * n, 1 + 2 * n)

    def hess(self, t, q, v, a, c):
        """Hess_w (a . M v + c . (L_q + F_sys)), w = (t, q, v): (..., 1 + 2n, 1 + 2n)."""
        args = [t] + [np.moveaxis(x, -1, 0) for x in (q, v, a, c)]
        return _symmetric(self._hess(*args), self._iu, 1 + 2 * self.n)

    def inputs(self, q, u, lam):
        """d/dq (lam . B(q) u) (..., n) and its Hessian in (q, u) (..., n+m, n+m)."""
        n = self.n
        out = self._inputs(*[np.moveaxis(x, -1, 0) for x in (q, u, lam)])
        return out[..., :n], _symmetric(out[..., n:], self._ju, n + self._m)


def _symmetric(upper, iu, d):
    """The symmetric (..., d, d) matrices of their upper triangles (..., d(d+1)/2)."""
    H = np.zeros(upper.shape[:-1] + (d, d))
    H[..., iu[0], iu[1]] = upper
    H[..., iu[1], iu[0]] = upper
    return H


class Curvature:
    """The exact Hessian of a :class:`~symplectic.control.Problem`'s
    dynamics (and inputs B(q)) block by block; :meth:`for_problem` says
    whether the problem is covered."""

    @classmethod
    def for_problem(cls, pb):
        """The Curvature of ``pb``, or raises :class:`Unsupported` naming what
        it does not cover."""
        system = pb.system
        if getattr(system, "_spec", None) is None or getattr(system, "_model", None) is None:
            raise Unsupported("the system is not from SymPy (System.from_sympy), so its "
                              "third derivatives are not known")
        if system.n_constraints:
            raise Unsupported("the system has holonomic constraints")
        if not pb._m.symplectic:
            raise Unsupported(f"{pb.method} is not a Galerkin (variational) scheme")
        if not all(term.exact for _, term in pb._cost.running):
            raise Unsupported("a running cost given as a callable has no second derivatives "
                              "(give it as a SymPy expression)")
        if not all(pc.exact for pc in pb._paths):
            raise Unsupported("a path constraint given as a callable has no second derivatives "
                              "(give it as SymPy expressions)")
        own = system.input_matrix is not None and pb.inputs is system.input_matrix
        if pb._Bq is not None and not own:
            raise Unsupported("inputs B(q) given as a callable have no second derivatives")
        # derived once per system (SymPy's derivatives and lambdify take tenths of a second)
        models = system.__dict__.setdefault("_curvature_models", {})
        key = pb._Bq is not None
        if key not in models:
            models[key] = _PointModel(system, key)
        return cls(pb, models[key])

    def __init__(self, pb, model):
        self.model = model
        self.Bm, self.Dm = _lagrange_tables(pb._m.nodes, pb._x)
        s, n = self.Bm.shape[1], pb.system.n
        # the interior nodes from the force points' states (equal to them for Lobatto)
        self._interior = np.linalg.pinv(self.Bm[:, 1:s - 1]) if s > 2 else None
        # rows a = 0 .. s-2 (the step's equations) and s-1 (the end momentum)
        self.Cp = np.hstack([self.Dm[:, :s - 1], np.zeros((len(pb._x), 1))])
        self.Cf = np.hstack([self.Bm[:, :s - 1], np.ones((len(pb._x), 1))])
        self.s, self.n = s, n

    def nodes(self, q0, q1, qpts):
        """Q (K, s, n) of the intervals from their ends and force points' q."""
        Bm, s = self.Bm, self.s
        Q = np.empty((len(q0), s, self.n))
        Q[:, 0], Q[:, -1] = q0, q1
        if s > 2:
            rhs = qpts - Bm[None, :, :1] * q0[:, None] - Bm[None, :, -1:] * q1[:, None]
            Q[:, 1:-1] = np.einsum("ai,kin->kan", self._interior, rhs)
        return Q

    def hessians(self, pb, z, obj_factor, nu):
        """Hess (nu_k . Phi_h(v_k) [+ lambda_k . (F_k - B(q_k) u_k)] [+ the
        running cost times obj_factor and the path rows times their nu]) in
        each interval's variables v_k (N, d, d), d = len(pb._block(0)) [+ 1
        with a free duration]: the second-order adjoint of the module
        docstring."""
        e = self._expanded(pb, z, nu)
        n, s, N = self.n, self.s, pb.intervals
        Yi, X = e["Y"], e["X"]
        rows = e["rows"]
        RY, RX = rows[:, :(s - 1) * n][:, :, Yi], rows[:, :(s - 1) * n][:, :, X]
        Yx = -np.linalg.solve(RY, RX)
        nus = np.asarray(nu)[:N * 2 * n].reshape(N, 2 * n)
        # d/dY of W without mu . R: nu_q on Q_{s-1}, nu_p through p_{k+1}, the input rows
        gY = np.einsum("kxy,kx->ky", rows[:, (s - 1) * n:][:, :, Yi], nus[:, n:])
        gY[:, -n:] += nus[:, :n]
        if e["inputs"] is not None:
            gY -= np.einsum("ia,kin->kan", self.Bm, e["inputs"][0])[:, 1:].reshape(N, -1)
        terms = self._point_terms(pb, z, e, obj_factor, nu) if pb._points and \
            (pb._running or pb._paths) else None
        if terms is not None:
            gY += terms[0][:, Yi]
        mu = -np.linalg.solve(np.swapaxes(RY, 1, 2), gY[:, :, None])[:, :, 0]
        lam = np.concatenate([mu.reshape(N, s - 1, n), nus[:, None, n:]], axis=1)
        H = self._hessian_W(pb, e, np.einsum("ia,kan->kin", self.Cp, lam),
                            np.einsum("ia,kan->kin", self.Cf, lam))
        if terms is not None:
            H += terms[1]
        Z = np.zeros((N, H.shape[1], len(X)))
        Z[:, X, np.arange(len(X))] = 1.0
        Z[:, Yi] = Yx
        return np.swapaxes(Z, 1, 2) @ H @ Z

    def end_derivative(self, pb, z):
        """d(q_{k+1}, p_{k+1})/dv_k (N, 2n, d) from this module's equations (for
        the tests: the C core's step gives the same)."""
        e = self._expanded(pb, z)
        n, s = self.n, self.s
        Yi, X, rows = e["Y"], e["X"], e["rows"]
        Yx = -np.linalg.solve(rows[:, :(s - 1) * n][:, :, Yi], rows[:, :(s - 1) * n][:, :, X])
        dp = rows[:, (s - 1) * n:][:, :, X] + rows[:, (s - 1) * n:][:, :, Yi] @ Yx
        return np.concatenate([Yx[:, -n:], dp], axis=1)

    def _expanded(self, pb, z, nu=None):
        """The step's quantities at z in the expanded variables e = (Q_0 ..
        Q_{s-1}, p_k, u_k, [F_k], h) of every interval: the points' states
        and their derivative Jw in e, Xi and dXi/de, the rows (R, p_{k+1})'
        derivative in e (N, s n, ne), and the index arrays Y (Q_1..Q_{s-1})
        and X (the interval's variables, in the problem's order); with the
        multipliers nu and inputs B(q), the input rows' terms."""
        n, s, N = self.n, self.s, pb.intervals
        r, m, Bq, h = len(pb._x), pb.n_inputs, pb._Bq is not None, pb._h(z)
        Bm, Dm, b = self.Bm, self.Dm, pb._b
        ends, _ = pb._steps(z)
        Vb = z[pb._block_matrix()]
        pts = pb._cache[3] if pb._cache[3] is not None else \
            pb._shoot(np.arange(N), Vb, np.full(N, h), points=True)[2]
        Q = self.nodes(Vb[:, :n], ends[:, :n], pts[0][:, :, :n])
        U = Vb[:, 2 * n:2 * n + r * m].reshape(N, r, m)
        iU = (s + 1) * n
        iF = iU + r * m
        ih = iF + (r * n if Bq else 0)
        qi = np.einsum("ia,kan->kin", Bm, Q)
        vi = np.einsum("ia,kan->kin", Dm, Q) / h
        # w = (t, q, v) at the points, t_ki = (k + x_i) h, and its derivative in e
        tau = np.arange(N)[:, None] + pb._x[None, :]
        Jw = np.zeros((N, r, 1 + 2 * n, ih + 1))
        Jw[:, :, 0, ih] = tau
        eye = np.eye(n)
        for a in range(s):
            Jw[:, :, 1:1 + n, a * n:(a + 1) * n] = Bm[:, a, None, None] * eye
            Jw[:, :, 1 + n:, a * n:(a + 1) * n] = Dm[:, a, None, None] * eye / h
        Jw[:, :, 1 + n:, ih] = -vi / h
        Xi, J = self.model.xi(tau * h, qi, vi)
        dXi = J @ Jw
        if Bq:
            Xi[..., n:] += Vb[:, 2 * n + r * m:].reshape(N, r, n)
            for i in range(r):
                dXi[:, i, n:, iF + i * n:iF + (i + 1) * n] += eye
        else:
            Xi[..., n:] += U @ pb.inputs.T
            for i in range(r):
                dXi[:, i, n:, iU + i * m:iU + (i + 1) * m] += pb.inputs
        rows = (np.einsum("i,ia,kixe->kaxe", b, self.Cp, dXi[:, :, :n])
                + h * np.einsum("i,ia,kixe->kaxe", b, self.Cf, dXi[:, :, n:]))
        rows[..., ih] += np.einsum("i,ia,kix->kax", b, self.Cf, Xi[..., n:])
        rows[:, 0, :, s * n:(s + 1) * n] += eye
        rows[:, s - 1, :, s * n:(s + 1) * n] += eye
        X = np.r_[0:n, s * n:ih + (1 if pb.free else 0)]
        inputs = None
        if Bq and nu is not None:
            lam = np.array([pb._nu_inputs(nu, k) for k in range(N)]).reshape(N, r, n)
            inputs = self.model.inputs(qi, U, lam)
        return dict(Y=np.arange(n, s * n), X=X, rows=rows.reshape(N, s * n, ih + 1), q=qi,
                    v=vi, t=tau * h, J=J, Jw=Jw, dXi=dXi, h=h, iU=iU, ih=ih, inputs=inputs)

    def _hessian_W(self, pb, e, oP, of):
        """Hess_e W (N, ne, ne) for the point weights omega^P = oP, omega^f = of
        (N, r, n): the points' curvature through (q_i, v_i), v_i's own second
        derivatives in h, the explicit h of h omega^f . Xi^f, and the input
        rows' -lambda . B(q) u."""
        n, b, h = self.n, pb._b, e["h"]
        Jw, ih = e["Jw"], e["ih"]
        HJ = self.model.hess(e["t"], e["q"], e["v"], oP, h * of) @ Jw
        N = len(Jw)
        H = np.swapaxes((Jw * b[:, None, None]).reshape(N, -1, Jw.shape[-1]), 1, 2) @ \
            HJ.reshape(N, -1, Jw.shape[-1])
        # v_i = sum_a D_ia Q_a / h: d2v/dQ_a dh = -D_ia / h^2, d2v/dh^2 = 2 v_i / h^2
        gv = np.einsum("kiyx,kiy->kix", e["J"], np.concatenate([oP, h * of], axis=-1))[..., 1 + n:]
        t = np.einsum("i,ia,kin->kan", b, -self.Dm / h ** 2, gv).reshape(len(H), -1)
        H[:, :self.s * n, ih] += t
        H[:, ih, :self.s * n] += t
        H[:, ih, ih] += np.einsum("i,kin,kin->k", b, gv, 2 * e["v"] / h ** 2)
        # h omega^f . Xi^f: its derivative in e, in row and column h
        t = np.einsum("i,kin,kine->ke", b, of, e["dXi"][:, :, n:])
        H[:, ih, :] += t
        H[:, :, ih] += t
        if e["inputs"] is not None:
            r, m, s = len(b), pb.n_inputs, self.s
            Jb = np.zeros((r, n + m, H.shape[1]))
            for i in range(r):
                for a in range(s):
                    Jb[i, :n, a * n:(a + 1) * n] = self.Bm[i, a] * np.eye(n)
                Jb[i, n:, e["iU"] + i * m:e["iU"] + (i + 1) * m] = np.eye(m)
            H -= np.einsum("ixe,kixy,iyf->kef", Jb, e["inputs"][1], Jb, optimize=True)
        return H

    def _point_terms(self, pb, z, e, obj_factor, nu):
        """The running cost (times obj_factor) and the path rows (times their
        multipliers) G_ki(t_ki, q_ki, v_ki, u_ki) at the force points, t_ki =
        (k + x_i) h: their gradient in e (N, ne) and Hessian (N, ne, ne),
        through the points' (t, q, v, u) and, for the running cost h sum_i
        b_i l, its explicit h."""
        n, N, m = self.n, pb.intervals, pb.n_inputs
        r, b, h, ih = len(pb._x), pb._b, e["h"], e["ih"]
        Jw = e["Jw"]
        k = 1 + 2 * n + m
        Jt = np.zeros((N, r, k, Jw.shape[-1]))
        Jt[:, :, :1 + 2 * n] = Jw                           # (t, q, v)
        for i in range(r):
            Jt[:, i, 1 + 2 * n:, e["iU"] + i * m:e["iU"] + (i + 1) * m] = np.eye(m)
        args = (e["t"].ravel(), e["q"].reshape(-1, n), e["v"].reshape(-1, n),
                z[pb._block_matrix()][:, 2 * n:2 * n + r * m].reshape(-1, m))
        g, H, g_own = np.zeros((N, r, k)), np.zeros((N, r, k, k)), np.zeros((N, r, k))
        for c, term in pb._cost.running:
            gl, Hl = term.second(*args)
            w = (obj_factor * c * b)[None, :, None]            # of h sum_i b_i l
            g_own += w * gl.reshape(N, r, k)
            H += h * w[..., None] * Hl.reshape(N, r, k, k)
        g += h * g_own
        if pb._paths:
            nup = np.array([pb._nu_path(nu, j) for j in range(N)]).reshape(N, r, -1)
            at = 0
            for pc in pb._paths:
                gc, Hc = pc.second(*args)
                w = nup[:, :, at:at + pc.r]
                g += np.einsum("kic,kicx->kix", w, gc.reshape(N, r, pc.r, k))
                H += np.einsum("kic,kicxy->kixy", w, Hc.reshape(N, r, pc.r, k, k))
                at += pc.r
        out = np.swapaxes(Jt.reshape(N, r * k, -1), 1, 2) @ (H @ Jt).reshape(N, r * k, -1)
        grad = np.einsum("kix,kixe->ke", g, Jt)
        # v = sum_a D_ia Q_a / h (its second derivatives), and the running cost's explicit h
        gv = g[..., 1 + n:1 + 2 * n]
        t = np.einsum("i,ia,kin->kan", np.ones(r), -self.Dm / h ** 2, gv).reshape(N, -1)
        out[:, :self.s * n, ih] += t
        out[:, ih, :self.s * n] += t
        out[:, ih, ih] += np.einsum("kin,kin->k", gv, 2 * e["v"] / h ** 2)
        t = np.einsum("kix,kixe->ke", g_own, Jt)
        out[:, ih, :] += t
        out[:, :, ih] += t
        return grad, out
