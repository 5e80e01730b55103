"""Dense exact Newton matrix of the Lobatto step from dense M, A, H, K (the engine's formula,
csrc/core/sym_galerkin.c header):
  dR_a/dQ_b = sum_i b_i [ D_ia B_ib A_i + D_ia D_ib M_i / h + h B_ia B_ib (H_i - K_i) + B_ia D_ib A_i^T ]."""
import numpy as np
import lob


def dense_J(dense_at, q, X, h):
    """dense_at(q_i, g_i) -> M, A, H, K; returns J ((s-1) n x (s-1) n), rows a = 0..s-2, cols b = 1..s-1."""
    Qi, Gi = lob.points(q, X, h)
    n = q.size
    m = lob.M_
    J = np.zeros((m * n, m * n))
    for i in range(lob.R):
        M, A, H, K = dense_at(Qi[i], Gi[i])
        for a in range(m):
            for b in range(1, lob.S):
                Db, Bb = lob.D[i, b], lob.B[i, b]
                Da, Ba = lob.D[i, a], lob.B[i, a]
                blk = lob.W[i] * (Da * Bb * A + Da * Db * M / h + h * Ba * Bb * (H - K) + Ba * Db * A.T)
                J[a * n:(a + 1) * n, (b - 1) * n:b * n] += blk
    return J


def fd_J(resfun, X, eps=1e-7):
    """central differences of a residual X (m, n) -> R (m, n)."""
    x0 = X.ravel()
    J = np.zeros((x0.size, x0.size))
    for k in range(x0.size):
        e = np.zeros_like(x0); e[k] = eps
        J[:, k] = (resfun((x0 + e).reshape(X.shape)).ravel() - resfun((x0 - e).reshape(X.shape)).ravel()) / (2 * eps)
    return J
