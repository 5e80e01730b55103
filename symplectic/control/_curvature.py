"""The dynamics' curvature, exact: the Hessian of nu_k . Phi_h(v_k) (and of
the rows F_ki - B(q_ki) u_ki of inputs B(q)) in each interval's variables v_k
= (q_k, p_k, u_k[, F_k][, h]), by the second-order adjoint of the Galerkin
step, for a system from SymPy whose third derivatives of L it generates.

The forced Galerkin step (csrc/core/sym_galerkin_forces.c): nodes Q_0 = q_k,
Q_1 .. Q_{s-1} = q_{k+1}; at the force points x_i (weights b_i) the states
q_i = sum_a B_ia Q_a and v_i = sum_a D_ia Q_a / h (B_ia = l_a(x_i), D_ia =
l_a'(x_i), l_a the Lagrange basis of the nodes c_a), at t_i = (k + x_i) h the
momentum and force Xi_i = (M(q_i) v_i, L_q(q_i, v_i) + F_sys(t_i, q_i, v_i) +
F_i); the step's equations and its end momentum

    R_a = delta_a0 p_k + sum_i b_i [D_ia Xi^P_i + h B_ia Xi^f_i] = 0   (a = 0 .. s-2),
    p_{k+1} = p_k + h sum_i b_i Xi^f_i.

R(Y, x) = 0 defines Y = (Q_1 .. Q_{s-1}) from x = (Q_0, p_k, u_k, F_k, h).
Differentiating it twice (the implicit function theorem, twice: a
second-order adjoint; Griewank & Walther, Evaluating Derivatives, 2nd ed.,
SIAM 2008, on implicit and iterative differentiation),

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
(t_ki = (k + x_i) h).  With holonomic constraints the step has more unknowns
and equations (:class:`ConstrainedCurvature`) and the same adjoint."""
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
    """A NumPy function f(shape, *values of ``args``) returning the
    expressions' values stacked on a last axis, each broadcast to ``shape``
    (the points' shape: constant entries too)."""
    import sympy as sy
    f = sy.lambdify(args, list(exprs), "numpy", cse=True)

    def evaluate(shape, *vals):
        return np.stack([np.broadcast_to(np.asarray(e, dtype=float), shape)
                         for e in f(*vals)], axis=-1)
    return evaluate


class _PointModel:
    """Xi(t, q, v) = (M v, L_q + F_sys) with its Jacobian in w = (t, q, v),
    the Hessian in w of a . M v + c . (L_q + F_sys), and for inputs B(q) the
    gradient in q and Hessian in (q, u) of lam . B(q) u: NumPy functions from
    SymPy."""

    def __init__(self, system, with_inputs):
        import sympy as sy
        spec, values = system.expressions, system.parameters
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
        out = self._xi(q.shape[:-1], t, np.moveaxis(q, -1, 0), np.moveaxis(v, -1, 0))
        return out[..., :2 * n], out[..., 2 * n:].reshape(*q.shape[:-1], 2 * n, 1 + 2 * n)

    def hess(self, t, q, v, a, c):
        """Hess_w (a . M v + c . (L_q + F_sys)), w = (t, q, v): (..., 1 + 2n, 1 + 2n)."""
        args = [t] + [np.moveaxis(x, -1, 0) for x in (q, v, a, c)]
        return _symmetric(self._hess(q.shape[:-1], *args), self._iu, 1 + 2 * self.n)

    def inputs(self, q, u, lam):
        """d/dq (lam . B(q) u) (..., n) and its Hessian in (q, u) (..., n+m, n+m)."""
        n = self.n
        out = self._inputs(q.shape[:-1], *[np.moveaxis(x, -1, 0) for x in (q, u, lam)])
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
    def for_nlp(cls, nlp):
        """The Curvature of a problem's NLP, or raises :class:`Unsupported`
        naming what it does not cover."""
        tr = nlp.tr
        system = tr.system
        if getattr(system, "expressions", None) is None:
            raise Unsupported("the system is not from SymPy (System.from_sympy), so its "
                              "third derivatives are not known")
        if not tr.method.symplectic:
            raise Unsupported(f"{tr.method.name} is not a Galerkin (variational) scheme")
        if not all(term.exact for _, term in nlp.terms.running):
            raise Unsupported("a running cost given as a callable has no second derivatives "
                              "(give it as a SymPy expression)")
        if not all(pc.exact for pc in nlp.paths):
            raise Unsupported("a path constraint given as a callable has no second derivatives "
                              "(give it as SymPy expressions)")
        key = tr.inputs.state_dependent
        if key and not tr.inputs.own:
            raise Unsupported("inputs B(q) given as a callable have no second derivatives")
        # derived once per system (SymPy's derivatives and lambdify take tenths of a second)
        model = system.derived(("control.curvature", key), lambda s: _PointModel(s, key))
        if not system.n_constraints:
            return cls(tr, model)
        return ConstrainedCurvature(tr, model, system.derived("control.curvature.constraints",
                                                              _ConstraintModel))

    def __init__(self, tr, model):
        self.model = model
        self.Bm, self.Dm = _lagrange_tables(tr.method.nodes, tr.x)
        s, n = self.Bm.shape[1], tr.n
        # the interior nodes from the force points' states (equal to them for Lobatto)
        self._interior = np.linalg.pinv(self.Bm[:, 1:s - 1]) if s > 2 else None
        # rows a = 0 .. s-2 (the step's equations) and s-1 (the end momentum)
        self.Cp = np.hstack([self.Dm[:, :s - 1], np.zeros((len(tr.x), 1))])
        self.Cf = np.hstack([self.Bm[:, :s - 1], np.ones((len(tr.x), 1))])
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

    def hessians(self, nlp, z, obj_factor, nu):
        """Hess (nu_k . Phi_h(v_k) [+ lambda_k . (F_k - B(q_k) u_k)] [+ the
        running cost times obj_factor and the path rows times their nu]) in
        each interval's variables v_k (N, d, d), d = the block width [+ 1
        with a free duration]: the second-order adjoint of the module
        docstring."""
        e = self._equations(nlp, z, nu)
        n, s, N = self.n, self.s, nlp.tr.intervals
        Y, EY = e["Y"], e["E"][:, :, e["Y"]]
        nus = np.asarray(nu)[:N * 2 * n].reshape(N, 2 * n)
        # d/de of W without mu . E: nu_q on Q_{s-1}, nu_p through p_{k+1}, the input rows
        # and the force points' terms
        gE = np.einsum("kxe,kx->ke", e["P"], nus[:, n:])
        gE[:, (s - 1) * n:s * n] += nus[:, :n]
        if e["inputs"] is not None:
            gE[:, :s * n] -= np.einsum("ia,kin->kan", self.Bm, e["inputs"][0]).reshape(N, -1)
        terms = self._point_terms(nlp, z, e, obj_factor, nu) if \
            (nlp.terms.running or nlp.paths) else None
        if terms is not None:
            gE[:, :terms[0].shape[1]] += terms[0]
        mu = -np.linalg.solve(np.swapaxes(EY, 1, 2), gE[:, Y, None])[:, :, 0]
        H = self._hessian_of(nlp, e, mu, nus)
        if terms is not None:
            k = terms[1].shape[1]
            H[:, :k, :k] += terms[1]
        Z = self._reduction(e, nlp.tr)
        return np.swapaxes(Z, 1, 2) @ H @ Z

    def end_derivative(self, nlp, z):
        """d(q_{k+1}, p_{k+1})/dv_k (N, 2n, d) from this module's equations (for
        the tests: the C core's step gives the same)."""
        e = self._equations(nlp, z)
        n, s = self.n, self.s
        Z = self._reduction(e, nlp.tr)
        return np.concatenate([Z[:, (s - 1) * n:s * n], e["P"] @ Z], axis=1)

    @staticmethod
    def _reduction(e, tr):
        """Z = de/dx (N, ne, d): the interval's variables x themselves, and the
        unknowns' dY/dx = -E_Y^-1 E_x; with a free duration the last of x is
        T = N h (the problem's unknown), h = T / N linear in it: its column
        divided by N."""
        Y, X, E = e["Y"], e["X"], e["E"]
        Z = np.zeros((len(E), e["ne"], len(X)))
        Z[:, X, np.arange(len(X))] = 1.0
        Z[:, Y] = -np.linalg.solve(E[:, :, Y], E[:, :, X])
        if tr.free:
            Z[:, :, -1] /= tr.intervals
        return Z

    def _equations(self, nlp, z, nu=None):
        """:meth:`_expanded` with the step's equations E (N, (s-1) n, ne), the
        end momentum's row P (N, n, ne) and the unknowns Y (Q_1 .. Q_{s-1})."""
        e = self._expanded(nlp, z, nu)
        n, s = self.n, self.s
        e.update(E=e["rows"][:, :(s - 1) * n], P=e["rows"][:, (s - 1) * n:],
                 Y=np.arange(n, s * n), ne=e["rows"].shape[-1])
        return e

    def _hessian_of(self, nlp, e, mu, nus):
        """Hess_e W for the equations' multipliers mu (N, (s-1) n)."""
        N, n, s = len(mu), self.n, self.s
        lam = np.concatenate([mu.reshape(N, s - 1, n), nus[:, None, n:]], axis=1)
        return self._hessian_W(nlp, e, np.einsum("ia,kan->kin", self.Cp, lam),
                               np.einsum("ia,kan->kin", self.Cf, lam))

    def _expanded(self, nlp, z, nu=None):
        """The step's quantities at z in the expanded variables e = (Q_0 ..
        Q_{s-1}, p_k, u_k, [F_k], h) of every interval: the nodes Q, the
        points' (t, q, v) and their derivative Jw in e, Xi and dXi/de, the
        rows (R, p_{k+1})' derivative in e (N, s n, ne), the index array X of
        the interval's variables (in the problem's order), p_k and p_{k+1};
        with the multipliers nu and inputs B(q), the input rows' terms."""
        tr = nlp.tr
        n, s, N = self.n, self.s, tr.intervals
        r, m, Bq, h = len(tr.x), tr.m, tr.inputs.state_dependent, tr.step_of(z)
        Bm, Dm, b = self.Bm, self.Dm, tr.b
        st = tr.steps(z, points=True)
        ends, pts = st.ends, st.points
        Vb = z[tr.blocks]
        Q = self.nodes(Vb[:, :n], ends[:, :n], pts[0][:, :, :n])
        U = Vb[:, 2 * n:2 * n + r * m].reshape(N, r, m)
        iU = (s + 1) * n
        iF = iU + r * m
        ih = iF + (r * n if Bq else 0)
        qi = np.einsum("ia,kan->kin", Bm, Q)
        vi = np.einsum("ia,kan->kin", Dm, Q) / h
        # w = (t, q, v) at the points, t_ki = (k + x_i) h, and its derivative in e
        tau = np.arange(N)[:, None] + tr.x[None, :]
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
            B = tr.inputs.matrix_constant
            Xi[..., n:] += U @ B.T
            for i in range(r):
                dXi[:, i, n:, iU + i * m:iU + (i + 1) * m] += B
        rows = (np.einsum("i,ia,kixe->kaxe", b, self.Cp, dXi[:, :, :n])
                + h * np.einsum("i,ia,kixe->kaxe", b, self.Cf, dXi[:, :, n:]))
        rows[..., ih] += np.einsum("i,ia,kix->kax", b, self.Cf, Xi[..., n:])
        rows[:, 0, :, s * n:(s + 1) * n] += eye
        rows[:, s - 1, :, s * n:(s + 1) * n] += eye
        X = np.r_[0:n, s * n:ih + (1 if tr.free else 0)]
        inputs = None
        if Bq and nu is not None:
            lam = np.array([nlp.nu_inputs(nu, k) for k in range(N)]).reshape(N, r, n)
            inputs = self.model.inputs(qi, U, lam)
        return dict(X=X, rows=rows.reshape(N, s * n, ih + 1), Q=Q, Xi=Xi, q=qi, v=vi,
                    t=tau * h, J=J, Jw=Jw, dXi=dXi, h=h, iU=iU, ih=ih, inputs=inputs, p=Vb[:, n:2 * n],
                    p1=ends[:, n:])

    def _hessian_W(self, nlp, e, oP, of):
        """Hess_e W (N, ne, ne) for the point weights omega^P = oP, omega^f = of
        (N, r, n): the points' curvature through (q_i, v_i), v_i's own second
        derivatives in h, the explicit h of h omega^f . Xi^f, and the input
        rows' -lambda . B(q) u."""
        n, b, h = self.n, nlp.tr.b, e["h"]
        bw = b[None, :, None]
        gv = np.einsum("kiyx,kiy->kix", e["J"], np.concatenate([oP, h * of], axis=-1))[..., 1 + n:]
        # h omega^f . Xi^f: its explicit h (its derivative in e, in row and column h)
        H = self._through_points(
            e, e["Jw"], bw[..., None] * self.model.hess(e["t"], e["q"], e["v"], oP, h * of),
            bw * gv, np.einsum("i,kin,kine->ke", b, of, e["dXi"][:, :, n:]))
        if e["inputs"] is not None:
            r, m, s = len(b), nlp.tr.m, self.s
            Jb = np.zeros((r, n + m, H.shape[1]))
            for i in range(r):
                for a in range(s):
                    Jb[i, :n, a * n:(a + 1) * n] = self.Bm[i, a] * np.eye(n)
                Jb[i, n:, e["iU"] + i * m:e["iU"] + (i + 1) * m] = np.eye(m)
            H -= np.einsum("ixe,kixy,iyf->kef", Jb, e["inputs"][1], Jb, optimize=True)
        return H

    def _point_terms(self, nlp, z, e, obj_factor, nu):
        """The running cost (times obj_factor) and the path rows (times their
        multipliers) G_ki(t_ki, q_ki, v_ki, u_ki) at the force points, t_ki =
        (k + x_i) h: their gradient in e (N, ne) and Hessian (N, ne, ne),
        through the points' (t, q, v, u) and, for the running cost h sum_i
        b_i l, its explicit h."""
        tr = nlp.tr
        n, N, m = self.n, tr.intervals, tr.m
        r, b, h, Jw = len(tr.x), tr.b, e["h"], e["Jw"]
        k = 1 + 2 * n + m
        Jt = np.zeros((N, r, k, Jw.shape[-1]))
        Jt[:, :, :1 + 2 * n] = Jw                           # (t, q, v)
        for i in range(r):
            Jt[:, i, 1 + 2 * n:, e["iU"] + i * m:e["iU"] + (i + 1) * m] = np.eye(m)
        args = (e["t"].ravel(), e["q"].reshape(-1, n), e["v"].reshape(-1, n),
                z[tr.blocks][:, 2 * n:2 * n + r * m].reshape(-1, m))
        g, H, g_own = np.zeros((N, r, k)), np.zeros((N, r, k, k)), np.zeros((N, r, k))
        for c, term in nlp.terms.running:
            gl, Hl = term.second(*args)
            w = (obj_factor * c * b)[None, :, None]            # of h sum_i b_i l
            g_own += w * gl.reshape(N, r, k)
            H += h * w[..., None] * Hl.reshape(N, r, k, k)
        g += h * g_own
        if nlp.paths:
            nup = np.array([nlp.nu_path(nu, j) for j in range(N)]).reshape(N, r, -1)
            at = 0
            for pc in nlp.paths:
                gc, Hc = pc.second(*args)
                w = nup[:, :, at:at + pc.r]
                g += np.einsum("kic,kicx->kix", w, gc.reshape(N, r, pc.r, k))
                H += np.einsum("kic,kicxy->kixy", w, Hc.reshape(N, r, pc.r, k, k))
                at += pc.r
        # the running cost's explicit h: h sum_i b_i l
        out = self._through_points(e, Jt, H, g[..., 1 + n:1 + 2 * n],
                                   np.einsum("kix,kixe->ke", g_own, Jt))
        return np.einsum("kix,kixe->ke", g, Jt), out

    def _through_points(self, e, Jt, Hw, gv, explicit_h):
        """sum_i Jt_i^T Hw_i Jt_i (N, ne, ne) for point functions with the
        Hessians Hw (N, r, k, k) in the points' variables (t, q, v, ...) whose
        derivative in e is Jt (N, r, k, ne), plus the second derivatives of
        v_i = sum_a D_ia Q_a / h along their v-gradients gv (N, r, n) --
        d2v/dQ_a dh = -D_ia / h^2, d2v/dh^2 = 2 v_i / h^2 -- and a term linear
        in an explicit h: its derivative in e, explicit_h (N, ne), in row and
        column h."""
        N, ne, h, ih, sn = len(Jt), Jt.shape[-1], e["h"], e["ih"], self.s * self.n
        H = np.swapaxes(Jt.reshape(N, -1, ne), 1, 2) @ (Hw @ Jt).reshape(N, -1, ne)
        t = np.einsum("ia,kin->kan", -self.Dm / h ** 2, gv).reshape(N, -1)
        H[:, :sn, ih] += t
        H[:, ih, :sn] += t
        H[:, ih, ih] += np.einsum("kin,kin->k", gv, 2 * e["v"] / h ** 2)
        H[:, ih, :] += explicit_h
        H[:, :, ih] += explicit_h
        return H


class _ConstraintModel:
    """For holonomic constraints g(q) = 0 (m_c of them): g, and the Hessians
    of psi = sum_k Lam_k grad g_k(q) . alpha in (q, Lam, alpha) -- its blocks
    are S(q, Lam) = Hess(Lam . g) (q, alpha), dg/dq (Lam, alpha) and
    d(G alpha)/dq (Lam, q) -- and of phi = rho . M(q) w in (q, w, rho) --
    d(M w)/dq (rho, q), M (rho, w): NumPy functions from SymPy."""

    def __init__(self, system):
        import sympy as sy
        spec, values = system.expressions, system.parameters
        q = list(spec["q"])
        n = len(q)
        g = [sy.sympify(e).xreplace(values) for e in spec["constraints"]]
        mc = len(g)
        lam = list(sy.symbols(f"L0:{mc}", cls=sy.Dummy))
        al, w, rho = (list(sy.symbols(f"{p}0:{n}", cls=sy.Dummy)) for p in ("al", "w", "rho"))
        M = sy.Matrix(spec["M"]).xreplace(values)
        psi = sum(lk * sy.diff(gk, qj) * aj for lk, gk in zip(lam, g) for qj, aj in zip(q, al))
        phi = (sy.Matrix(rho).T * M * sy.Matrix(w))[0]
        self.n, self.m = n, mc
        self._g = _lambdify([q], g)
        self._iu_psi = np.triu_indices(2 * n + mc)
        self._iu_phi = np.triu_indices(3 * n)
        x = q + lam + al
        self._psi = _lambdify([q, lam, al], [sy.diff(psi, x[i], x[j])
                                             for i, j in zip(*self._iu_psi)])
        y = q + w + rho
        self._phi = _lambdify([q, w, rho], [sy.diff(phi, y[i], y[j])
                                            for i, j in zip(*self._iu_phi)])

    def g(self, q):
        """g (..., m_c) at q (..., n)."""
        return self._g(q.shape[:-1], np.moveaxis(q, -1, 0))

    def psi(self, q, lam, al):
        """Hess psi (..., 2n + m_c, 2n + m_c) in (q, Lam, alpha)."""
        args = [np.moveaxis(x, -1, 0) for x in (q, lam, al)]
        return _symmetric(self._psi(q.shape[:-1], *args), self._iu_psi, 2 * self.n + self.m)

    def phi(self, q, w, rho):
        """Hess phi (..., 3n, 3n) in (q, w, rho)."""
        args = [np.moveaxis(x, -1, 0) for x in (q, w, rho)]
        return _symmetric(self._phi(q.shape[:-1], *args), self._iu_phi, 3 * self.n)


class ConstrainedCurvature(Curvature):
    """The exact Hessian of the constrained Galerkin step (csrc/core/sym_constraints.c):
    besides the nodes Q_1 .. Q_{s-1}, the impulses Lam_0 .. Lam_{s-1} and w =
    M(q_{k+1})^-1 p_{k+1} are the step's unknowns, with the equations

        R_a - G(Q_a)^T Lam_a = 0   (a = 0 .. s-2),     g(Q_a) / h = 0   (a = 1 .. s-1),
        M(Q_{s-1}) w - p_{k+1} = 0,                     G(Q_{s-1}) w = 0  (the hidden constraint),
        p_{k+1} = p_k + h sum_i b_i Xi^f_i - sum_a G(Q_a)^T Lam_a;

    the adjoint of :class:`Curvature` over them (the impulses recovered from
    the equations at the C core's root, by least squares: G has full rank)."""

    def __init__(self, tr, model, cmodel):
        super().__init__(tr, model)
        self.cmodel = cmodel

    def _equations(self, nlp, z, nu=None):
        e = self._expanded(nlp, z, nu)
        n, s, mc, N, h = self.n, self.s, self.cmodel.m, nlp.tr.intervals, e["h"]
        rows, Q = e["rows"], e["Q"]
        ne0 = rows.shape[-1]
        iL, iw = ne0, ne0 + s * mc
        ne = iw + n
        # the rows' values (R_a without impulses; the end momentum without them, less p_{k+1})
        b = nlp.tr.b
        vals = (np.einsum("i,ia,kix->kax", b, self.Cp, e["Xi"][..., :n])
                + h * np.einsum("i,ia,kix->kax", b, self.Cf, e["Xi"][..., n:]))
        vals[:, 0] += e["p"]
        vals[:, -1] += e["p"] - e["p1"]
        cm = self.cmodel
        Hq = cm.psi(Q, np.zeros(Q.shape[:-1] + (mc,)), np.zeros_like(Q))
        G = Hq[..., n:n + mc, n + mc:]                       # (N, s, mc, n)
        lam = np.empty((N, s, mc))
        for a in range(s):
            rhs = vals[:, a] - (np.einsum("kacn,kac->kn", G[:, :a], lam[:, :a])
                                if a == s - 1 else 0.0)
            lam[:, a] = np.linalg.solve(G[:, a] @ np.swapaxes(G[:, a], 1, 2),
                                        np.einsum("kcn,kn->kc", G[:, a], rhs)[..., None])[..., 0]
        p1 = e["p1"]
        M = cm.phi(Q[:, -1], np.zeros((N, n)), np.zeros((N, n)))[:, 2 * n:, n:2 * n]
        w = np.linalg.solve(M, p1[:, :, None])[:, :, 0]
        H = cm.psi(Q, lam, np.broadcast_to(w[:, None], Q.shape))   # (N, s, 2n+mc, 2n+mc)
        S, Gqw = H[..., :n, n + mc:], H[..., n:n + mc, :n]
        Rp = np.zeros((N, s * n, ne))
        Rp[..., :ne0] = rows
        last = slice((s - 1) * n, s * n)
        for a in range(s):
            qa, la = slice(a * n, (a + 1) * n), slice(iL + a * mc, iL + (a + 1) * mc)
            for r in ([slice(a * n, (a + 1) * n)] if a < s - 1 else []) + [last]:
                Rp[:, r, qa] -= S[:, a]
                Rp[:, r, la] -= np.swapaxes(G[:, a], 1, 2)
        C = np.zeros((N, (s - 1) * mc, ne))
        g = cm.g(Q[:, 1:])
        for a in range(1, s):
            C[:, (a - 1) * mc:a * mc, a * n:(a + 1) * n] = G[:, a] / h
            C[:, (a - 1) * mc:a * mc, e["ih"]] = -g[:, a - 1] / h ** 2
        P = Rp[:, last]
        Kw = -P.copy()
        phi = cm.phi(Q[:, -1], w, np.zeros((N, n)))
        Kw[:, :, last] += phi[:, 2 * n:, :n]                 # d(M w)/dq
        Kw[:, :, iw:] += M
        K = np.zeros((N, mc, ne))
        K[:, :, last] = Gqw[:, -1]
        K[:, :, iw:] = G[:, -1]
        e.update(E=np.concatenate([Rp[:, :(s - 1) * n], C, Kw, K], axis=1), P=P,
                 Y=np.r_[n:s * n, iL:ne], ne=ne, ne0=ne0, lam=lam, w=w, G=G, g=g, iL=iL, iw=iw)
        return e

    def _hessian_of(self, nlp, e, mu, nus):
        """Hess_e W: the unconstrained part with the end momentum's weight
        nu_p - mu_Kw, and the impulses', the constraints', M w's and the
        hidden constraint's curvature."""
        n, s, mc, N, h = self.n, self.s, self.cmodel.m, len(mu), e["h"]
        nR, nC = (s - 1) * n, (s - 1) * mc
        muR, muC = mu[:, :nR].reshape(N, s - 1, n), mu[:, nR:nR + nC].reshape(N, s - 1, mc)
        muKw, muK = mu[:, nR + nC:nR + nC + n], mu[:, nR + nC + n:]
        plast = nus[:, n:] - muKw
        lam = np.concatenate([muR, plast[:, None]], axis=1)
        ne0, ne, iL, iw, ih = e["ne0"], e["ne"], e["iL"], e["iw"], e["ih"]
        H = np.zeros((N, ne, ne))
        H[:, :ne0, :ne0] = self._hessian_W(nlp, e, np.einsum("ia,kan->kin", self.Cp, lam),
                                           np.einsum("ia,kan->kin", self.Cf, lam))
        cm, Q = self.cmodel, e["Q"]
        # - sum_a alpha_a . G(Q_a)^T Lam_a, alpha_a = mu_R,a + (nu_p - mu_Kw) (a < s-1)
        alpha = lam.copy()
        alpha[:, :s - 1] += plast[:, None]
        Hp = cm.psi(Q, e["lam"], alpha)
        for a in range(s):
            qa = np.r_[a * n:(a + 1) * n]
            ql = np.r_[qa, iL + a * mc:iL + (a + 1) * mc]
            H[:, ql[:, None], ql] -= Hp[:, a, :n + mc, :n + mc]
        # mu_C,a . g(Q_a) / h
        Sc = cm.psi(Q[:, 1:], muC, np.zeros((N, s - 1, n)))[..., :n, n + mc:]
        for a in range(1, s):
            qa = slice(a * n, (a + 1) * n)
            H[:, qa, qa] += Sc[:, a - 1] / h
            t = -np.einsum("kcn,kc->kn", e["G"][:, a], muC[:, a - 1]) / h ** 2
            H[:, qa, ih] += t
            H[:, ih, qa] += t
            H[:, ih, ih] += 2 * np.einsum("kc,kc->k", muC[:, a - 1], e["g"][:, a - 1]) / h ** 3
        # mu_Kw . M(Q_{s-1}) w and mu_K . G(Q_{s-1}) w
        qw = np.r_[(s - 1) * n:s * n, iw:iw + n]
        H[:, qw[:, None], qw] += cm.phi(Q[:, -1], e["w"], muKw)[:, :2 * n, :2 * n]
        Hk = cm.psi(Q[:, -1], muK, e["w"])
        sel = np.r_[:n, n + mc:2 * n + mc]
        H[:, qw[:, None], qw] += Hk[:, sel[:, None], sel]
        return H
