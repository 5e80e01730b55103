"""Right-preconditioned GMRES (modified Gram-Schmidt Arnoldi, Givens), counting iterations to a relative
residual tol: |b - J x| <= tol |b| (true residual checked at the end)."""
import numpy as np


def gmres(Av, Minv, b, tol=1e-13, maxit=200):
    n = b.size
    beta = np.linalg.norm(b)
    if beta == 0:
        return np.zeros_like(b), 0
    V = np.zeros((maxit + 1, n)); Z = np.zeros((maxit, n))
    Hm = np.zeros((maxit + 1, maxit))
    cs = np.zeros(maxit); sn = np.zeros(maxit)
    g = np.zeros(maxit + 1); g[0] = beta
    V[0] = b / beta
    k = 0
    for k in range(maxit):
        Z[k] = Minv(V[k])
        w = Av(Z[k])
        for i in range(k + 1):
            Hm[i, k] = w @ V[i]
            w = w - Hm[i, k] * V[i]
        Hm[k + 1, k] = np.linalg.norm(w)
        if Hm[k + 1, k] > 0:
            V[k + 1] = w / Hm[k + 1, k]
        for i in range(k):
            t = cs[i] * Hm[i, k] + sn[i] * Hm[i + 1, k]
            Hm[i + 1, k] = -sn[i] * Hm[i, k] + cs[i] * Hm[i + 1, k]
            Hm[i, k] = t
        d = np.hypot(Hm[k, k], Hm[k + 1, k])
        cs[k], sn[k] = Hm[k, k] / d, Hm[k + 1, k] / d
        Hm[k, k] = d; Hm[k + 1, k] = 0.0
        g[k + 1] = -sn[k] * g[k]; g[k] = cs[k] * g[k]
        if abs(g[k + 1]) <= tol * beta:
            break
    kk = k + 1
    y = np.linalg.solve(np.triu(Hm[:kk, :kk]), g[:kk])
    x = Z[:kk].T @ y
    return x, kk
