"""Planar n-link chain of point masses, ABSOLUTE angles (the engine's pendulum_chain), O(n) per point.

x_k = sum_{i<=k} l_i (sin q_i, -cos q_i),  xdot_k = sum_{i<=k} l_i g_i e_i,  e_i = (cos q_i, sin q_i),
e'_i = de_i/dq_i = (-sin q_i, cos q_i);  pi_j = sum_{k>=j} m_k xdot_k  (composite momentum);
  (M g)_j   = l_j e_j . pi_j
  dT/dq_j   = l_j g_j e'_j . pi_j
  dV/dq_j   = grav mu_j l_j sin q_j,  mu_j = sum_{k>=j} m_k.
All arrays (r, n): vectorised over the quadrature points; the sums over n are cumsums (the chain's
root-to-leaf / leaf-to-root recursions).
"""
import numpy as np


class Chain:
    def __init__(self, n, m=1.0, l=1.0, grav=9.81):
        self.n = n
        self.m = np.full(n, float(m))
        self.l = np.full(n, float(l))
        self.grav = grav
        self.mu = np.cumsum(self.m[::-1])[::-1]

    # ---------------- O(n) residual pieces ----------------
    def point(self, Q, G):
        c, s = np.cos(Q), np.sin(Q)
        l, m = self.l, self.m
        xd = np.cumsum(l * G * c, axis=-1), np.cumsum(l * G * s, axis=-1)       # xdot_k
        pi = [np.cumsum((m * xd[k])[..., ::-1], axis=-1)[..., ::-1] for k in range(2)]
        P = l * (c * pi[0] + s * pi[1])
        dT = l * G * (-s * pi[0] + c * pi[1])
        dV = self.grav * self.mu * l * s
        self._lin = (c, s, pi)
        return P, dT - dV

    def point_jvp(self, Q, G, dQ, dG):
        """forward-mode derivative of point() (the exact Jacobian-vector product, O(n))."""
        c, s = np.cos(Q), np.sin(Q)
        l, m = self.l, self.m
        xd = np.cumsum(l * G * c, axis=-1), np.cumsum(l * G * s, axis=-1)
        pi = [np.cumsum((m * xd[k])[..., ::-1], axis=-1)[..., ::-1] for k in range(2)]
        dxd = (np.cumsum(l * (dG * c - G * dQ * s), axis=-1), np.cumsum(l * (dG * s + G * dQ * c), axis=-1))
        dpi = [np.cumsum((m * dxd[k])[..., ::-1], axis=-1)[..., ::-1] for k in range(2)]
        ep = -s * pi[0] + c * pi[1]          # e' . pi
        ee = c * pi[0] + s * pi[1]           # e . pi
        dP = l * (c * dpi[0] + s * dpi[1] + dQ * ep)
        ddT = l * (dG * ep - G * dQ * ee + G * (-s * dpi[0] + c * dpi[1]))
        ddV = self.grav * self.mu * l * c * dQ
        return dP, ddT - ddV

    # ---------------- dense formulas (the engine's, sym_sys_pendulums.c) ----------------
    def dense(self, q, g):
        n, l = self.n, self.l
        Cm = np.outer(l, l) * self.mu[np.maximum.outer(np.arange(n), np.arange(n))]
        dq = q[:, None] - q[None, :]
        Sd, Cd = np.sin(dq), np.cos(dq)
        M = Cm * Cd
        A = Cm * Sd * g[None, :]
        A[np.diag_indices(n)] = 0.0
        A[np.diag_indices(n)] = -A.sum(1)
        H = Cm * Cd * np.outer(g, g)
        H[np.diag_indices(n)] = 0.0
        H[np.diag_indices(n)] = -H.sum(1)
        dV = self.grav * self.mu * l * np.sin(q)
        K = np.diag(self.grav * self.mu * l * np.cos(q))
        return M, A, H, dV, K

    def point_dense(self, Q, G):
        P = np.empty_like(Q)
        f = np.empty_like(Q)
        for i in range(Q.shape[0]):
            M, A, H, dV, K = self.dense(Q[i], G[i])
            P[i] = M @ G[i]
            f[i] = 0.5 * A.T @ G[i] - dV
        return P, f

    # ---------------- local linear maps for the tree elimination (elim.py) ----------------
    def local_maps(self, Q, G):
        """per joint j, point i: y = dxdot (d_f = 2), z = dpi (d_b = 2), chain parent j-1.
        y_j = T y_p + u dq + v dg;  z_j = sum_children z_c + W y_j;
        dP = aP.z_j + bP.y_p + cP dq + eP dg;  df = af.z_j + bf.y_p + cf dq + ef dg."""
        r, n = Q.shape
        c, s = np.cos(Q), np.sin(Q)
        l, m = self.l, self.m
        xd = np.cumsum(l * G * c, axis=-1), np.cumsum(l * G * s, axis=-1)
        pi = [np.cumsum((m * xd[k])[..., ::-1], axis=-1)[..., ::-1] for k in range(2)]
        ep = -s * pi[0] + c * pi[1]
        ee = c * pi[0] + s * pi[1]
        L = {}
        L['T'] = np.broadcast_to(np.eye(2), (n, r, 2, 2)).copy()
        L['u'] = np.stack([l * G * -s, l * G * c], -1).transpose(1, 0, 2)      # (n, r, 2)
        L['v'] = np.stack([l * c, l * s], -1).transpose(1, 0, 2)
        L['W'] = (m[:, None, None, None] * np.eye(2)[None, None]) * np.ones((n, r, 1, 1))
        L['aP'] = np.stack([l * c, l * s], -1).transpose(1, 0, 2)
        L['bP'] = np.zeros((n, r, 2))
        L['cP'] = (l * ep).T
        L['eP'] = np.zeros((n, r))
        L['af'] = np.stack([l * G * -s, l * G * c], -1).transpose(1, 0, 2)
        L['bf'] = np.zeros((n, r, 2))
        L['cf'] = (-l * G * ee - self.grav * self.mu * l * c).T
        L['ef'] = (l * ep).T
        L['parent'] = np.arange(n) - 1
        L['T_identity'] = True
        return L
