"""General spatial tree (the engine's built-in "tree", flat parameters of sym_sys_tree.c), O(n) per point,
spatial vectors in world coordinates taken at the world origin (Featherstone 2008 ch. 2; the derivation of
sym_sys_tree.c's header):  V_j = V_p + S_j g_j;  h_j = sum_{i >= j} I_i V_i;
   (M g)_j = S_j . h_j,   dT/dq_j = -h_j . a_j,  a_j = S_j x V_p,   dV/dq_j = -S_j . G_j,
   G_j = sum_{i >= j} (mx_i x g_w, m_i g_w)  (the subtree's gravity wrench about O).
Complex-safe (complex-step forward mode for checks)."""
import numpy as np


def skew(a):
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]], dtype=a.dtype)


def crm(s):
    """motion cross product matrix: crm(s) m = s x m."""
    w, v = s[:3], s[3:]
    Z = np.zeros((6, 6), dtype=np.result_type(s, float))
    Z[:3, :3] = skew(w); Z[3:, :3] = skew(v); Z[3:, 3:] = skew(w)
    return Z


def crf(s):
    """force cross product: s x* f = crf(s) f = -crm(s)^T f."""
    return -crm(s).T


class Tree:
    def __init__(self, flat):
        flat = np.asarray(flat, float)
        self.gw = flat[:3]
        n = (len(flat) - 3) // 27
        self.n = n
        self.par, self.pris, self.k, self.R0, self.p0, self.m, self.c, self.Ic = [], [], [], [], [], [], [], []
        for j in range(n):
            b = 3 + 27 * j
            self.par.append(int(flat[b])); self.pris.append(int(flat[b + 1]))
            self.k.append(flat[b + 2:b + 5]); self.R0.append(flat[b + 5:b + 14].reshape(3, 3))
            self.p0.append(flat[b + 14:b + 17]); self.m.append(flat[b + 17]); self.c.append(flat[b + 18:b + 21])
            xx, xy, xz, yy, yz, zz = flat[b + 21:b + 27]
            self.Ic.append(np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
        self.par = np.array(self.par)
        self.children = [[] for _ in range(n)]
        for j in range(n):
            if self.par[j] >= 0:
                self.children[self.par[j]].append(j)

    def kin(self, q):
        """world axes S_j (n, 6) and body spatial inertias I_j (n, 6, 6) at O, gravity wrenches (n, 6)."""
        n = self.n
        dt = np.result_type(q, float)
        Rb = [None] * n; pb = [None] * n
        S = np.zeros((n, 6), dt); I = np.zeros((n, 6, 6), dt); Gb = np.zeros((n, 6), dt)
        for j in range(n):
            p = self.par[j]
            Rp = Rb[p] if p >= 0 else np.eye(3); pp = pb[p] if p >= 0 else np.zeros(3)
            Rj0 = Rp @ self.R0[j]; o = pp + Rp @ self.p0[j]
            kw = Rj0 @ self.k[j]
            if self.pris[j]:
                Rb[j] = Rj0.astype(dt); pb[j] = o + kw * q[j]
                S[j, 3:] = kw
            else:
                Kk = skew(self.k[j])
                Rb[j] = Rj0 @ (np.eye(3) + np.sin(q[j]) * Kk + (1 - np.cos(q[j])) * Kk @ Kk)
                pb[j] = o.astype(dt)
                S[j, :3] = kw; S[j, 3:] = np.cross(o, kw)
            m = self.m[j]; x = pb[j] + Rb[j] @ self.c[j]
            Ib = Rb[j] @ self.Ic[j] @ Rb[j].T - m * skew(x) @ skew(x)
            mx = m * x
            I[j, :3, :3] = Ib; I[j, :3, 3:] = skew(mx); I[j, 3:, :3] = -skew(mx); I[j, 3:, 3:] = m * np.eye(3)
            Gb[j, :3] = np.cross(mx, self.gw); Gb[j, 3:] = m * self.gw
        return S, I, Gb

    def point1(self, q, g, want_lin=False):
        n = self.n
        S, I, Gb = self.kin(q)
        dt = np.result_type(q, g, float)
        V = np.zeros((n, 6), dt); Vp = np.zeros((n, 6), dt)
        for j in range(n):
            p = self.par[j]
            Vp[j] = V[p] if p >= 0 else 0.0
            V[j] = Vp[j] + S[j] * g[j]
        hb = np.einsum('jab,jb->ja', I, V)
        h = hb.copy(); G = Gb.copy()
        for j in range(n - 1, -1, -1):
            p = self.par[j]
            if p >= 0:
                h[p] += h[j]; G[p] += G[j]
        a = np.array([crm(S[j]) @ Vp[j] for j in range(n)])
        P = np.einsum('ja,ja->j', S, h)
        f = -np.einsum('ja,ja->j', h, a) + np.einsum('ja,ja->j', S, G)
        if want_lin:
            return P, f, dict(S=S, I=I, V=V, Vp=Vp, h=h, hb=hb, G=G, a=a)
        return P, f

    def point(self, Q, Gv):
        out = [self.point1(Q[i], Gv[i]) for i in range(Q.shape[0])]
        return np.array([o[0] for o in out]), np.array([o[1] for o in out])

    def point_jvp_cs(self, Q, Gv, dQ, dG, eps=1e-30):
        """complex-step forward-mode derivative (exact to rounding)."""
        P, f = self.point(Q + 1j * eps * dQ, Gv + 1j * eps * dG)
        return P.imag / eps, f.imag / eps

    def local_maps(self, Q, Gv):
        """y = (dtheta, dV) (d_f = 12), z = (dh, dc) (d_b = 9), dc = linear part of sum_subtree I_i dtheta_i.
        y_j = T y_p + u dq + v dg,  T = [[1, 0], [-crm(S g), 1]], u = (S, 0), v = (0, S);
        w_j = W y_j = (crfmat(I V) + I crm(V)) dtheta + I dV  ;  (I dtheta)[3:6];
        dP = S.dh + dtheta_p . crf(S) h;
        df = -a.dh + (g_w x S_w).dc + dtheta_p . [-(crm(Vp) crm(S))^T h + crf(S) G] - dV_p . crm(S)^T h."""
        r, n = Q.shape
        E6 = np.eye(6)
        L = {k: [] for k in ('T', 'u', 'v', 'W', 'aP', 'bP', 'af', 'bf')}
        for i in range(r):
            _, _, d = self.point1(Q[i], Gv[i], want_lin=True)
            S, I, V, Vp, h, hb, G, a = (d[k] for k in ('S', 'I', 'V', 'Vp', 'h', 'hb', 'G', 'a'))
            T = np.zeros((n, 12, 12)); u = np.zeros((n, 12)); v = np.zeros((n, 12)); W = np.zeros((n, 9, 12))
            aP = np.zeros((n, 9)); bP = np.zeros((n, 12)); af = np.zeros((n, 9)); bf = np.zeros((n, 12))
            for j in range(n):
                T[j] = np.eye(12); T[j, 6:, :6] = -crm(S[j] * Gv[i, j])
                u[j, :6] = S[j]; v[j, 6:] = S[j]
                Cf = np.column_stack([crf(E6[k]) @ hb[j] for k in range(6)])
                W[j, :6, :6] = Cf + I[j] @ crm(V[j]); W[j, :6, 6:] = I[j]; W[j, 6:, :6] = I[j][3:6]
                aP[j, :6] = S[j]; bP[j, :6] = crf(S[j]) @ h[j]
                af[j, :6] = -a[j]; af[j, 6:] = np.cross(self.gw, S[j, :3])
                bf[j, :6] = -(crm(Vp[j]) @ crm(S[j])).T @ h[j] + crf(S[j]) @ G[j]
                bf[j, 6:] = -crm(S[j]).T @ h[j]
            for k, val in zip(('T', 'u', 'v', 'W', 'aP', 'bP', 'af', 'bf'), (T, u, v, W, aP, bP, af, bf)):
                L[k].append(val)
        L = {k: np.stack(v, 1) for k, v in L.items()}          # (n, r, ...)
        for k in ('cP', 'eP', 'cf', 'ef'):
            L[k] = np.zeros((n, r))
        L['parent'] = self.par
        L['T_identity'] = False
        return L


def random_tree(n, seed=0, branch=0.5):
    """random spatial tree in the flat layout (revolute joints, random axes/frames/inertias)."""
    rng = np.random.default_rng(seed)
    flat = [0.0, 0.0, -9.81]
    for j in range(n):
        par = -1 if j == 0 else (j - 1 if rng.random() > branch else int(rng.integers(0, j)))
        k = rng.normal(size=3); k /= np.linalg.norm(k)
        A = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        if np.linalg.det(A) < 0:
            A[:, 0] *= -1
        Ic = np.diag(rng.uniform(0.01, 0.1, 3))
        flat += [par, 0.0, *k, *A.ravel(), *(0.3 * rng.normal(size=3)), rng.uniform(0.5, 2),
                 *(0.1 * rng.normal(size=3)), Ic[0, 0], 0, 0, Ic[1, 1], 0, Ic[2, 2]]
    return np.array(flat)
