"""Exact structured elimination of the Galerkin Newton matrix over a tree (leaf-to-root), generic in
the interface sizes d_f (forward, per body per point) and d_b (backward), given the local linear maps.

Per joint j with parent p, per quadrature point i (Lobatto: B = I):
  dq_{j,i} = sum_b B_ib x_{j,b},  dg_{j,i} = sum_b D_ib x_{j,b} / h    (x_j: the joint's s-1 node unknowns)
  y_{j,i} = T_{j,i} y_{p,i} + u_{j,i} dq_{j,i} + v_{j,i} dg_{j,i}        (y_base = 0)
  z_{j,i} = sum_{c child of j} z_{c,i} + W_{j,i} y_{j,i}
  dP_{j,i} = aP.z_{j,i} + bP.y_{p,i} + cP dq + eP dg,   df likewise (af, bf, cf, ef)
  row a of joint j:  sum_i b_i [D_ia dP_{j,i} + h B_ia df_{j,i}] = rhs_{a,j}.
Stacked over the r points (F = r d_f, Bk = r d_b, m = s - 1):
  Y_j = T_j Y_p + U_j x_j,  Z_j = Psi_j Y_j + psi_j,  rows: Aa_j Z_j + Ab_j Y_p + N_j x_j = rhs_j.
Leaf to root: Psi_j = W_j + sum_c Phi_c;  Dj = Aa Psi U + N (m x m);  E = Aa Psi T + Ab;
  G = Dj^-1 E;  Phi_j = Psi T - (Psi U) G   (the subtree's Z as a function of the parent's Y).
Solve: psi_j = sum_c phi_c; gj = Dj^-1 (rhs - Aa psi); phi_j = (Psi U) gj + psi;
  root to leaf: x_j = gj - G Y_p, Y_j = T Y_p + U x_j.
"""
import numpy as np
import scipy.linalg as sla

import lob


def factor_flops(df, db, r=lob.R, m=lob.M_, T_identity=False, nchild=1):
    """flops per joint of the factorisation, structure of the blocks used (T, W block diagonal per point,
    U one d_f x m block per point): the kernels a C version would run."""
    F, Bk = r * df, r * db
    f = 0
    f += nchild * Bk * F + r * db * df            # Psi = W + sum Phi_c
    f += 2 * Bk * F * m                             # Psi U
    f += 0 if T_identity else 2 * Bk * df * F       # Psi T (block diagonal T)
    f += 2 * m * Bk * m                             # Aa (Psi U)
    f += 2 * m * Bk * F + m * F                     # Aa (Psi T) + Ab
    f += 2 * m ** 3 // 3 + 2 * m * m * F            # LU(Dj), G = Dj^-1 E
    f += 2 * Bk * m * F + Bk * F                    # Phi = Psi T - (Psi U) G
    return f


def solve_flops(df, db, r=lob.R, m=lob.M_, T_identity=False, nchild=1):
    F, Bk = r * df, r * db
    f = nchild * Bk + 2 * m * Bk + 2 * m * m + 2 * Bk * m + Bk    # psi, rhs - Aa psi, LU solve, phi
    f += 2 * m * F + (0 if T_identity else 2 * df * F) + 2 * F * m   # x = g - G Y_p, Y = T Y_p + U x
    return f


class TreeElim:
    def __init__(self, L, h):
        self.L, self.h = L, h
        n, r, df = L['u'].shape
        db = L['W'].shape[2]
        self.n, self.r, self.df, self.db = n, r, df, db
        m, F, Bk = lob.M_, r * df, r * db
        Bm, Dm = lob.B[:, 1:], lob.D[:, 1:]
        par = L['parent']
        self.children = [[] for _ in range(n)]
        for j in range(n):
            if par[j] >= 0:
                self.children[par[j]].append(j)
        self.fac = [None] * n
        Phi = [None] * n
        for j in range(n - 1, -1, -1):
            T = sla.block_diag(*L['T'][j])
            U = np.concatenate([L['u'][j, i][:, None] * Bm[i][None] + L['v'][j, i][:, None] * Dm[i][None] / h
                                for i in range(r)], 0)
            Wj = sla.block_diag(*L['W'][j])
            Aa = np.zeros((m, Bk))
            Ab = np.zeros((m, F))
            N = np.zeros((m, m))
            for i in range(r):
                for a in range(m):
                    ca, cb = lob.W[i] * lob.D[i, a], lob.W[i] * h * lob.B[i, a]
                    Aa[a, i * db:(i + 1) * db] = ca * L['aP'][j, i] + cb * L['af'][j, i]
                    Ab[a, i * df:(i + 1) * df] = ca * L['bP'][j, i] + cb * L['bf'][j, i]
                    N[a] += ca * (L['cP'][j, i] * Bm[i] + L['eP'][j, i] * Dm[i] / h) + \
                        cb * (L['cf'][j, i] * Bm[i] + L['ef'][j, i] * Dm[i] / h)
            Psi = Wj.copy()
            for c in self.children[j]:
                Psi += Phi[c]
            PU = Psi @ U
            PT = Psi @ T
            Dj = Aa @ PU + N
            E = Aa @ PT + Ab
            lu = np.linalg.inv(Dj)          # m x m (4 x 4): the prototype keeps the inverse (C: LU)
            G = lu @ E
            Phi[j] = PT - PU @ G
            self.fac[j] = (T, U, Aa, PU, lu, G)

    def solve(self, rhs):
        """rhs (m, n) -> x (m, n) with J x = rhs."""
        n = self.n
        phi = [None] * n
        gs = [None] * n
        for j in range(n - 1, -1, -1):
            T, U, Aa, PU, lu, G = self.fac[j]
            psi = np.zeros(self.r * self.db)
            for c in self.children[j]:
                psi += phi[c]
            gj = lu @ (rhs[:, j] - Aa @ psi)
            phi[j] = PU @ gj + psi
            gs[j] = gj
        x = np.zeros_like(rhs)
        Y = [None] * n
        for j in range(n):
            T, U, Aa, PU, lu, G = self.fac[j]
            p = self.L['parent'][j]
            Yp = Y[p] if p >= 0 else np.zeros(self.r * self.df)
            x[:, j] = gs[j] - G @ Yp
            Y[j] = T @ Yp + U @ x[:, j]
        return x
